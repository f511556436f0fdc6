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
        let mut graph = Graph::from_edges(s.num_nodes(), &s.edges, s.features(g), s.labels(g))?;
        if let Some(m) = g.motifs() {
            graph = graph.with_motifs(s.nodes.iter().map(|&u| m[u as usize]).collect())?;
        }
        let mut notes = self.notes.clone();
        notes.push(format!(
            "{hops}-hop neighbourhood of node {center} of {}: {} of {} nodes, {} of {} edges; \
             seeded {:.0}/{:.0} split (seed {seed})",
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
}
