//! Parts shared by the generators: the motif templates, the graph under construction, attaching
//! motif instances, the balanced binary tree, random extra edges, parameter checks and the final
//! assembly into a [`Dataset`].

use std::collections::HashSet;

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::{FEATURE_DIM, split_seed};
use crate::dataset::{Dataset, Split};
use crate::error::{GraphError, Result};
use crate::features::Features;
use crate::graph::Graph;

/// A motif template: labels and edges in local ids `0..size`. Local node 0 is the one joined to
/// the base graph.
#[derive(Debug)]
pub(crate) struct Motif {
    /// Label of each local node (its length is the motif size).
    pub labels: &'static [u32],
    /// Undirected edges in local ids.
    pub edges: &'static [(u32, u32)],
}

impl Motif {
    /// Number of nodes of one instance.
    pub fn size(&self) -> usize {
        self.labels.len()
    }
}

/// The house: square 0-1-2-3 with roof 4 over the upper corners 0 and 1.
pub(crate) const HOUSE: Motif = Motif {
    labels: &[1, 1, 2, 2, 3],
    edges: &[(0, 1), (1, 2), (2, 3), (3, 0), (4, 0), (4, 1)],
};

/// The six-cycle 0-1-2-3-4-5-0.
pub(crate) const CYCLE6: Motif = Motif {
    labels: &[1; 6],
    edges: &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)],
};

/// The 3x3 grid, row-major (node `3r + c` at row `r`, column `c`).
pub(crate) const GRID3: Motif = Motif {
    labels: &[1; 9],
    edges: &[
        (0, 1),
        (1, 2),
        (3, 4),
        (4, 5),
        (6, 7),
        (7, 8),
        (0, 3),
        (3, 6),
        (1, 4),
        (4, 7),
        (2, 5),
        (5, 8),
    ],
};

/// A graph under construction: labels, motif ids and an edge list with an adjacency set.
#[derive(Debug)]
pub(crate) struct Builder {
    labels: Vec<u32>,
    motif: Vec<Option<u32>>,
    edges: Vec<(u32, u32)>,
    adjacency: HashSet<(u32, u32)>,
    instances: u32,
}

impl Builder {
    /// `base_nodes` base nodes (label 0, no motif) and no edges. The caller has checked with
    /// [`check_total_nodes`] that all node ids fit in `u32`.
    pub fn new(base_nodes: usize) -> Self {
        Self {
            labels: vec![0; base_nodes],
            motif: vec![None; base_nodes],
            edges: Vec::new(),
            adjacency: HashSet::new(),
            instances: 0,
        }
    }

    /// Number of nodes so far.
    pub fn num_nodes(&self) -> usize {
        self.labels.len()
    }

    /// Number of undirected edges so far.
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// True when `{u, w}` is an edge.
    #[cfg(test)]
    pub fn has_edge(&self, u: u32, w: u32) -> bool {
        self.adjacency.contains(&(u.min(w), u.max(w)))
    }

    /// Adds `{u, w}` (distinct, in range); returns `false` if it already existed.
    pub fn add_edge(&mut self, u: u32, w: u32) -> bool {
        debug_assert!(u != w && (u.max(w) as usize) < self.num_nodes());
        let key = (u.min(w), u.max(w));
        if self.adjacency.insert(key) {
            self.edges.push(key);
            true
        } else {
            false
        }
    }

    /// Appends a new instance of `motif` (nodes numbered after all existing nodes), adds its
    /// edges, and joins its local node 0 to `anchor` by one (non-motif) edge. Returns the
    /// global id of the instance's local node 0.
    pub fn attach(&mut self, motif: &Motif, anchor: u32) -> u32 {
        debug_assert!((anchor as usize) < self.num_nodes());
        let first = self.num_nodes() as u32;
        let id = self.instances;
        self.instances += 1;
        self.labels.extend_from_slice(motif.labels);
        self.motif
            .extend(std::iter::repeat_n(Some(id), motif.size()));
        for &(a, b) in motif.edges {
            self.add_edge(first + a, first + b);
        }
        self.add_edge(first, anchor);
        first
    }

    /// Adds `⌊fraction × edges⌋` edges (edges counted before this call), each between a
    /// uniformly random pair of distinct, non-adjacent nodes (rejection sampling, as in
    /// GNNExplainer's `perturb`). Returns the number added.
    ///
    /// Errors when there are fewer non-adjacent pairs than edges to add.
    pub fn add_random_edges(&mut self, fraction: f64, rng: &mut StdRng) -> Result<usize> {
        check_unit_interval("random_edge_fraction", fraction)?;
        let count = (fraction * self.num_edges() as f64).floor() as usize;
        if count == 0 {
            return Ok(0);
        }
        let n = self.num_nodes() as u64;
        let free = (n * n.saturating_sub(1) / 2).saturating_sub(self.num_edges() as u64);
        if count as u64 > free {
            return Err(GraphError::InvalidParameter {
                name: "random_edge_fraction",
                value: fraction.to_string(),
                reason: "asks for more random edges than there are non-adjacent node pairs",
            });
        }
        let n = n as u32;
        let mut added = 0;
        while added < count {
            let u = rng.random_range(0..n);
            let w = rng.random_range(0..n);
            if u != w && self.add_edge(u, w) {
                added += 1;
            }
        }
        Ok(added)
    }

    /// Builds the [`Dataset`]: constant-one features of [`FEATURE_DIM`] dims, the labels, the
    /// motif ground truth, and the split `Split::random(n, train_fraction, split_seed(seed))`.
    pub fn finish(self, name: &str, train_fraction: f64, seed: u64) -> Result<Dataset> {
        let n = self.num_nodes();
        if self.edges.len() >= u32::MAX as usize {
            return Err(GraphError::InvalidParameter {
                name: "random_edge_fraction",
                value: self.edges.len().to_string(),
                reason: "the graph would have more edges than 32-bit edge ids allow",
            });
        }
        let features = Features::constant(n, FEATURE_DIM, 1.0);
        let graph =
            Graph::from_edges(n, &self.edges, features, self.labels)?.with_motifs(self.motif)?;
        let split = Split::random(n, train_fraction, split_seed(seed))?;
        Ok(Dataset {
            name: name.to_owned(),
            graph,
            split,
            eval_targets: None,
            notes: Vec::new(),
        })
    }
}

/// Errors unless `value` is a finite number in `[0, 1]`.
pub(crate) fn check_unit_interval(name: &'static str, value: f64) -> Result<()> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(GraphError::InvalidParameter {
            name,
            value: value.to_string(),
            reason: "must lie in [0, 1]",
        })
    }
}

/// Errors unless `base + count × size` nodes exist and fit in 32-bit node ids.
pub(crate) fn check_total_nodes(
    name: &'static str,
    base: usize,
    count: usize,
    size: usize,
) -> Result<usize> {
    count
        .checked_mul(size)
        .and_then(|m| m.checked_add(base))
        .filter(|&n| n <= u32::MAX as usize)
        .ok_or(GraphError::InvalidParameter {
            name,
            value: count.to_string(),
            reason: "the graph would have more nodes than 32-bit node ids allow",
        })
}

/// Largest supported tree height: a height-`h` binary tree has `2^(h+1) - 1` nodes, which must
/// fit in 32-bit node ids.
const MAX_TREE_HEIGHT: u32 = 30;

/// Number of nodes of the balanced binary tree of height `height`, checking the height.
pub(crate) fn tree_nodes(height: u32) -> Result<usize> {
    if height > MAX_TREE_HEIGHT {
        return Err(GraphError::InvalidParameter {
            name: "tree_height",
            value: height.to_string(),
            reason: "at most 30 (node ids are 32-bit)",
        });
    }
    Ok((1usize << (height + 1)) - 1)
}

/// The shared Tree-Cycles / Tree-Grid construction: balanced binary tree of height `height`
/// (node `i` joined to `2i + 1` and `2i + 2`), then `count` instances of `motif`, instance `k`
/// joined to tree node `k × ⌊n_tree / count⌋`, then random extra edges drawn from
/// `StdRng::seed_from_u64(seed)`.
pub(crate) struct TreeWithMotifs<'a> {
    /// Dataset name.
    pub(crate) name: &'a str,
    /// Height of the balanced binary tree.
    pub(crate) height: u32,
    /// The motif attached to the tree.
    pub(crate) motif: &'a Motif,
    /// Number of motif instances.
    pub(crate) count: usize,
    /// Name of the count parameter in errors.
    pub(crate) count_name: &'static str,
    /// Random extra edges as a fraction of the edges before adding them.
    pub(crate) random_edge_fraction: f64,
    /// Share of the nodes in the training split.
    pub(crate) train_fraction: f64,
    /// Seed of the random extra edges (and, through `split_seed`, of the split).
    pub(crate) seed: u64,
}

impl TreeWithMotifs<'_> {
    /// Checks the parameters; returns the number of tree nodes.
    pub(crate) fn check(&self) -> Result<usize> {
        let n_tree = tree_nodes(self.height)?;
        if self.count > n_tree {
            return Err(GraphError::InvalidParameter {
                name: self.count_name,
                value: self.count.to_string(),
                reason: "more motifs than tree nodes: the attach spacing ⌊tree nodes / count⌋ is 0",
            });
        }
        check_total_nodes(self.count_name, n_tree, self.count, self.motif.size())?;
        check_unit_interval("random_edge_fraction", self.random_edge_fraction)?;
        check_unit_interval("train_fraction", self.train_fraction)?;
        Ok(n_tree)
    }

    /// Builds the dataset (after [`TreeWithMotifs::check`]).
    pub(crate) fn generate(&self) -> Result<Dataset> {
        let n_tree = self.check()?;
        let mut b = Builder::new(n_tree);
        for child in 1..n_tree as u32 {
            b.add_edge((child - 1) / 2, child);
        }
        if let Some(spacing) = n_tree.checked_div(self.count) {
            for k in 0..self.count {
                // k ≤ count - 1 and spacing ≤ n_tree / count, so k × spacing < n_tree.
                b.attach(self.motif, (k * spacing) as u32);
            }
        }
        let mut rng = StdRng::seed_from_u64(self.seed);
        b.add_random_edges(self.random_edge_fraction, &mut rng)?;
        b.finish(self.name, self.train_fraction, self.seed)
    }
}

/// Checks shared by the generators' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use std::collections::{BTreeSet, HashMap};

    use super::Motif;
    use crate::dataset::Dataset;

    /// Checks the motif layout of a dataset generated **without** random edges: `count`
    /// instances of `motif`, numbered after `base` base nodes instance by instance; labels and
    /// edges inside each instance equal the template; every edge between motif nodes lies
    /// inside one instance; `count × |motif edges|` motif edges; each instance joined to the
    /// base by exactly one edge, from its local node 0. Returns the anchor of each instance.
    pub fn check_motifs(d: &Dataset, base: usize, count: usize, motif: &Motif) -> Vec<u32> {
        let g = &d.graph;
        let size = motif.size();
        assert_eq!(g.num_nodes(), base + count * size);
        let ids = g
            .motifs()
            .expect("generated graphs carry motif ground truth");
        for (u, id) in ids.iter().enumerate() {
            let expected = u.checked_sub(base).map(|i| (i / size) as u32);
            assert_eq!(*id, expected, "motif id of node {u}");
            let label = u.checked_sub(base).map_or(0, |i| motif.labels[i % size]);
            assert_eq!(g.labels()[u], label, "label of node {u}");
        }
        let mut inside: HashMap<u32, BTreeSet<(u32, u32)>> = HashMap::new();
        let mut joins: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
        let mut motif_edges = 0;
        for (u, w) in g.edges() {
            match (ids[u as usize], ids[w as usize]) {
                (Some(a), Some(b)) => {
                    assert_eq!(a, b, "edge ({u}, {w}) joins two motif instances");
                    assert!(g.is_motif_edge(u, w));
                    motif_edges += 1;
                    let first = (base + a as usize * size) as u32;
                    inside.entry(a).or_default().insert((u - first, w - first));
                }
                (None, Some(a)) => joins.entry(a).or_default().push((w, u)),
                (Some(a), None) => joins.entry(a).or_default().push((u, w)),
                (None, None) => assert!(!g.is_motif_edge(u, w)),
            }
        }
        assert_eq!(motif_edges, count * motif.edges.len());
        let template: BTreeSet<(u32, u32)> = motif
            .edges
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .collect();
        let mut anchors = Vec::with_capacity(count);
        for k in 0..count as u32 {
            assert_eq!(inside[&k], template, "edges of instance {k}");
            let first = (base + k as usize * size) as u32;
            let j = &joins[&k];
            assert_eq!(
                j.len(),
                1,
                "instance {k} must be joined to the base by one edge"
            );
            assert_eq!(
                j[0].0, first,
                "instance {k} is joined through its local node 0"
            );
            assert!(!g.is_motif_edge(j[0].0, j[0].1));
            anchors.push(j[0].1);
        }
        anchors
    }

    /// Number of nodes per label, indexed by label.
    pub fn label_counts(d: &Dataset) -> Vec<usize> {
        let mut counts = vec![0; d.graph.num_classes()];
        for &l in d.graph.labels() {
            counts[l as usize] += 1;
        }
        counts
    }

    /// True when two datasets have identical graphs, features, labels, motifs and splits.
    pub fn same(a: &Dataset, b: &Dataset) -> bool {
        a.name == b.name
            && a.graph.edges() == b.graph.edges()
            && a.graph.labels() == b.graph.labels()
            && a.graph.motifs() == b.graph.motifs()
            && a.graph.features() == b.graph.features()
            && a.split == b.split
    }

    /// Checks that `with` is `without` plus `extra` edges, each between distinct nodes that
    /// were not adjacent before.
    pub fn check_random_edges(without: &Dataset, with: &Dataset, extra: usize) {
        let before: BTreeSet<(u32, u32)> = without.graph.edges().into_iter().collect();
        let after: BTreeSet<(u32, u32)> = with.graph.edges().into_iter().collect();
        assert!(before.is_subset(&after));
        assert_eq!(after.len() - before.len(), extra);
        assert!(after.iter().all(|&(u, w)| u < w));
        assert_eq!(without.graph.labels(), with.graph.labels());
        assert_eq!(without.graph.motifs(), with.graph.motifs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_simple_graphs() {
        for (m, edges) in [(&HOUSE, 6), (&CYCLE6, 6), (&GRID3, 12)] {
            assert_eq!(m.edges.len(), edges);
            let set: HashSet<(u32, u32)> =
                m.edges.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
            assert_eq!(set.len(), edges, "no duplicate edges");
            assert!(
                m.edges
                    .iter()
                    .all(|&(a, b)| a != b && (a.max(b) as usize) < m.size())
            );
        }
        // House: the roof is adjacent to exactly the two upper corners.
        let roof: Vec<u32> = HOUSE
            .edges
            .iter()
            .filter(|e| e.0 == 4 || e.1 == 4)
            .map(|e| e.0 + e.1 - 4)
            .collect();
        assert_eq!(roof, vec![0, 1]);
        assert_eq!(
            (HOUSE.labels[0], HOUSE.labels[1], HOUSE.labels[4]),
            (1, 1, 3)
        );
    }

    #[test]
    fn random_edges_respect_capacity() {
        let mut rng = StdRng::seed_from_u64(0);
        // Triangle: no free pair left.
        let mut b = Builder::new(3);
        b.add_edge(0, 1);
        b.add_edge(1, 2);
        b.add_edge(0, 2);
        assert!(matches!(
            b.add_random_edges(1.0, &mut rng),
            Err(GraphError::InvalidParameter {
                name: "random_edge_fraction",
                ..
            })
        ));
        // Path on 3 nodes: exactly one free pair, so ⌊0.5 × 2⌋ = 1 edge fills it.
        let mut b = Builder::new(3);
        b.add_edge(0, 1);
        b.add_edge(1, 2);
        assert_eq!(b.add_random_edges(0.5, &mut rng).unwrap(), 1);
        assert!(b.has_edge(0, 2));
        assert!(b.add_random_edges(f64::NAN, &mut rng).is_err());
        assert!(b.add_random_edges(-0.1, &mut rng).is_err());
    }

    #[test]
    fn parameter_checks() {
        assert!(check_unit_interval("x", 0.0).is_ok());
        assert!(check_unit_interval("x", 1.0).is_ok());
        assert!(check_unit_interval("x", 1.5).is_err());
        assert!(check_unit_interval("x", f64::INFINITY).is_err());
        assert_eq!(check_total_nodes("c", 10, 3, 5).unwrap(), 25);
        assert!(check_total_nodes("c", 10, usize::MAX, 5).is_err());
        assert!(check_total_nodes("c", u32::MAX as usize, 1, 1).is_err());
        assert_eq!(tree_nodes(0).unwrap(), 1);
        assert_eq!(tree_nodes(8).unwrap(), 511);
        assert!(matches!(
            tree_nodes(31),
            Err(GraphError::InvalidParameter {
                name: "tree_height",
                ..
            })
        ));
    }
}
