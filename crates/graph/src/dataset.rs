//! A graph together with its split and provenance.

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use crate::error::{GraphError, Result};
use crate::graph::Graph;

/// Node-id splits of a dataset. Ids are global; each list keeps the order it was given in.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Split {
    /// Training nodes.
    pub train: Vec<u32>,
    /// Validation nodes (empty for the synthetic benchmarks).
    pub valid: Vec<u32>,
    /// Test nodes.
    pub test: Vec<u32>,
}

impl Split {
    /// A seeded random split: `train_fraction` of the nodes (rounded down) go to train, the rest
    /// to test. The same seed always gives the same split.
    ///
    /// ```
    /// use induce_graph::Split;
    /// let s = Split::random(10, 0.8, 42).unwrap();
    /// assert_eq!((s.train.len(), s.test.len()), (8, 2));
    /// assert_eq!(s, Split::random(10, 0.8, 42).unwrap());
    /// ```
    pub fn random(num_nodes: usize, train_fraction: f64, seed: u64) -> Result<Self> {
        if !(0.0..=1.0).contains(&train_fraction) {
            return Err(GraphError::InvalidParameter {
                name: "train_fraction",
                value: train_fraction.to_string(),
                reason: "must lie in [0, 1]",
            });
        }
        let mut ids: Vec<u32> = (0..num_nodes as u32).collect();
        ids.shuffle(&mut StdRng::seed_from_u64(seed));
        let k = (num_nodes as f64 * train_fraction).floor() as usize;
        let test = ids.split_off(k);
        Ok(Self {
            train: ids,
            valid: Vec::new(),
            test,
        })
    }

    /// Checks that every id is a node of a graph with `num_nodes` nodes.
    pub fn validate(&self, num_nodes: usize) -> Result<()> {
        for &u in self.train.iter().chain(&self.valid).chain(&self.test) {
            if u as usize >= num_nodes {
                return Err(GraphError::NodeOutOfRange {
                    node: u as u64,
                    num_nodes,
                });
            }
        }
        Ok(())
    }
}

/// A named graph with its split, optional fixed evaluation targets, and notes on anything a
/// loader normalised (symmetrised edges, dropped self loops, ...).
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Short name (`ba-shapes`, `syn1`, `cora`, ...).
    pub name: String,
    /// The graph.
    pub graph: Graph,
    /// Train / validation / test nodes.
    pub split: Split,
    /// Fixed evaluation targets shipped with the data (the reference `eval_idx`), if any.
    pub eval_targets: Option<Vec<u32>>,
    /// What a loader changed on the way in, one line each; empty when the input was clean.
    pub notes: Vec<String>,
}

impl Dataset {
    /// Your own graph as a dataset named `name`, with `split` (checked: every id a node of
    /// `graph`), no fixed evaluation targets and no notes. [`Split::random`] draws a seeded
    /// split when the data has none.
    ///
    /// ```
    /// use induce_graph::{Dataset, Features, Graph, Split};
    /// //  0 ─ 1 ─ 2 ─ 3
    /// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)],
    ///     Features::constant(4, 1, 1.0), vec![0, 1, 1, 0]).unwrap();
    /// let d = Dataset::new("path", g.clone(), Split::random(4, 0.5, 7).unwrap()).unwrap();
    /// assert_eq!((d.split.train.len(), d.split.test.len()), (2, 2));
    /// let bad = Split { train: vec![9], ..Split::default() };
    /// assert!(Dataset::new("path", g, bad).is_err());
    /// ```
    pub fn new(name: impl Into<String>, graph: Graph, split: Split) -> Result<Self> {
        split.validate(graph.num_nodes())?;
        Ok(Self {
            name: name.into(),
            graph,
            split,
            eval_targets: None,
            notes: Vec::new(),
        })
    }

    /// The `hops`-hop neighbourhood of `center` as a dataset of its own (the paper's Amazon-Photo
    /// protocol: one seeded random central node, its 3-hop neighbourhood as the graph, a seeded
    /// 80/20 split). Nodes are renumbered `0..n` in increasing original id; features, labels and
    /// motif ground truth follow; the split is [`Split::random`] with `train_fraction` and
    /// `seed`. A note records the centre and the size.
    ///
    /// ```
    /// use induce_graph::{Dataset, Features, Graph, Split};
    /// //  0 ─ 1 ─ 2 ─ 3 ─ 4 : the 1-hop neighbourhood of 3 is {2, 3, 4} → local 0, 1, 2
    /// let g = Graph::from_edges(5, &[(0, 1), (1, 2), (2, 3), (3, 4)],
    ///     Features::constant(5, 1, 1.0), vec![0, 1, 2, 3, 4]).unwrap();
    /// let d = Dataset { name: "path".into(), graph: g, split: Split::default(),
    ///     eval_targets: None, notes: vec![] };
    /// let sub = d.neighbourhood(3, 1, 0.8, 42).unwrap();
    /// assert_eq!(sub.graph.labels(), &[2, 3, 4]);
    /// assert_eq!(sub.graph.edges(), vec![(0, 1), (1, 2)]);
    /// assert_eq!(sub.split.train.len() + sub.split.test.len(), 3);
    /// ```
    pub fn neighbourhood(
        &self,
        center: u32,
        hops: u32,
        train_fraction: f64,
        seed: u64,
    ) -> Result<Dataset> {
        let g = &self.graph;
        let s = crate::khop::k_hop(g, center, hops)?;
        let what = format!("{hops}-hop neighbourhood of node {center}");
        self.induced(&s.nodes, &s.edges, &what, train_fraction, seed)
    }

    /// [`Dataset::neighbourhood`] of a centre drawn uniformly with `seed` (the paper's
    /// Amazon-Photo protocol: "one seeded random central node"); returns the dataset and the
    /// centre.
    pub fn random_neighbourhood(
        &self,
        hops: u32,
        train_fraction: f64,
        seed: u64,
    ) -> Result<(Dataset, u32)> {
        use rand::Rng;
        let n = self.graph.num_nodes();
        if n == 0 {
            return Err(GraphError::InvalidParameter {
                name: "dataset",
                value: self.name.clone(),
                reason: "has no node to centre a neighbourhood on",
            });
        }
        let center = StdRng::seed_from_u64(seed).random_range(0..n as u32);
        Ok((
            self.neighbourhood(center, hops, train_fraction, seed)?,
            center,
        ))
    }

    /// The largest connected component as a dataset of its own (ties: the one with the lowest
    /// node id), renumbered `0..n` in increasing original id, with a seeded split like
    /// [`Dataset::neighbourhood`] and a note. The usual preprocessing of the gnn-benchmark
    /// graphs (Shchur et al.): Amazon-Photo's is 7,487 of 7,650 nodes.
    pub fn largest_component(&self, train_fraction: f64, seed: u64) -> Result<Dataset> {
        let g = &self.graph;
        let n = g.num_nodes();
        let mut comp = vec![u32::MAX; n];
        let (mut best, mut best_size, mut next) = (0u32, 0usize, 0u32);
        let mut stack = Vec::new();
        for s in 0..n {
            if comp[s] != u32::MAX {
                continue;
            }
            let (id, mut size) = (next, 0usize);
            next += 1;
            comp[s] = id;
            stack.push(s as u32);
            while let Some(u) = stack.pop() {
                size += 1;
                for w in g.neighbors(u) {
                    if comp[w as usize] == u32::MAX {
                        comp[w as usize] = id;
                        stack.push(w);
                    }
                }
            }
            if size > best_size {
                (best, best_size) = (id, size);
            }
        }
        let nodes: Vec<u32> = (0..n as u32)
            .filter(|&u| comp[u as usize] == best)
            .collect();
        let mut local = vec![u32::MAX; n];
        for (i, &u) in nodes.iter().enumerate() {
            local[u as usize] = i as u32;
        }
        let edges: Vec<(u32, u32)> = g
            .edges()
            .into_iter()
            .filter(|&(u, _)| comp[u as usize] == best)
            .map(|(u, w)| (local[u as usize], local[w as usize]))
            .collect();
        self.induced(
            &nodes,
            &edges,
            "largest connected component",
            train_fraction,
            seed,
        )
    }

    /// The dataset on `nodes` (original ids, increasing) with `edges` in local ids: features,
    /// labels and motif ground truth follow, a seeded split, and a note naming `what`.
    fn induced(
        &self,
        nodes: &[u32],
        edges: &[(u32, u32)],
        what: &str,
        train_fraction: f64,
        seed: u64,
    ) -> Result<Dataset> {
        let g = &self.graph;
        let features = g.features().gather(nodes);
        let labels = nodes.iter().map(|&u| g.labels()[u as usize]).collect();
        let mut graph = Graph::from_edges(nodes.len(), edges, features, labels)?;
        if let Some(m) = g.motifs() {
            graph = graph.with_motifs(nodes.iter().map(|&u| m[u as usize]).collect())?;
        }
        let mut notes = self.notes.clone();
        notes.push(format!(
            "{what} of {}: {} of {} nodes, {} of {} edges; seeded {:.0}/{:.0} split (seed {seed})",
            self.name,
            graph.num_nodes(),
            g.num_nodes(),
            graph.num_edges(),
            g.num_edges(),
            100.0 * train_fraction,
            100.0 * (1.0 - train_fraction)
        ));
        Ok(Dataset {
            name: self.name.clone(),
            split: Split::random(graph.num_nodes(), train_fraction, seed)?,
            graph,
            eval_targets: None,
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::Features;

    #[test]
    fn largest_component_keeps_the_biggest_piece_renumbered() {
        //  0 ─ 1     2 ─ 3 ─ 4     5
        let g = Graph::from_edges(
            6,
            &[(0, 1), (2, 3), (3, 4)],
            Features::constant(6, 1, 1.0),
            vec![0, 1, 2, 3, 4, 5],
        )
        .unwrap();
        let d = Dataset {
            name: "toy".into(),
            graph: g,
            split: Split::default(),
            eval_targets: None,
            notes: vec![],
        };
        let c = d.largest_component(0.8, 1).unwrap();
        assert_eq!(c.graph.labels(), &[2, 3, 4]);
        assert_eq!(c.graph.edges(), vec![(0, 1), (1, 2)]);
        assert!(c.notes[0].starts_with("largest connected component of toy: 3 of 6 nodes"));
    }
}
