//! Tree-Cycles: a balanced binary tree with six-cycle motifs.
//!
//! ```text
//!        0 - 1      0 is joined to tree node k * floor(tree nodes / num_cycles)
//!       /     \
//!      5       2    every cycle node has label 1; tree nodes have label 0
//!       \     /
//!        4 - 3
//! ```
//!
//! The tree of height `h` has nodes `0..2^(h+1) - 1`, node `i` joined to `2i + 1` and `2i + 2`;
//! cycle `k` occupies the 6 nodes after the tree's and the previous cycles', in the order above.

use super::SyntheticKind;
use super::common::{CYCLE6, TreeWithMotifs};
use crate::dataset::Dataset;
use crate::error::Result;

/// Parameters of Tree-Cycles. [`Default`] gives the paper's values.
///
/// ```
/// use induce_graph::generators::TreeCyclesConfig;
/// let d = TreeCyclesConfig::default().generate().unwrap();
/// assert_eq!((d.graph.num_nodes(), d.graph.num_edges()), (871, 939));
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TreeCyclesConfig {
    /// Height of the balanced binary tree (default 8: 511 nodes, 510 edges). At most 30.
    pub tree_height: u32,
    /// Number of six-cycles (default 60); cycle `k` is joined to tree node
    /// `k × ⌊tree nodes / num_cycles⌋` (spacing 8 by default). At most the number of tree
    /// nodes.
    pub num_cycles: usize,
    /// Random extra edges as a fraction of the edges before adding them, rounded down
    /// (default 0.01: ⌊0.01 × 930⌋ = 9). In `[0, 1]`.
    pub random_edge_fraction: f64,
    /// Share of the nodes in the training split, rounded down; the rest is test (default 0.8).
    pub train_fraction: f64,
    /// Seed of the random extra edges; the split uses
    /// [`split_seed`](super::split_seed)`(seed)` (default 42).
    pub seed: u64,
}

impl Default for TreeCyclesConfig {
    fn default() -> Self {
        Self {
            tree_height: 8,
            num_cycles: 60,
            random_edge_fraction: 0.01,
            train_fraction: 0.8,
            seed: 42,
        }
    }
}

impl TreeCyclesConfig {
    /// Checks every parameter without generating anything.
    pub fn validate(&self) -> Result<()> {
        self.construction().check().map(|_| ())
    }

    /// Generates the dataset (named `tree-cycles`): the tree, the cycles, then the random extra
    /// edges drawn from `StdRng::seed_from_u64(seed)` (the only random part of the graph).
    pub fn generate(&self) -> Result<Dataset> {
        self.construction().generate()
    }

    /// The shared tree-with-motifs construction with these parameters.
    fn construction(&self) -> TreeWithMotifs<'static> {
        TreeWithMotifs {
            name: SyntheticKind::TreeCycles.name(),
            height: self.tree_height,
            motif: &CYCLE6,
            count: self.num_cycles,
            count_name: "num_cycles",
            random_edge_fraction: self.random_edge_fraction,
            train_fraction: self.train_fraction,
            seed: self.seed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{check_motifs, check_random_edges, label_counts, same};
    use super::*;
    use crate::error::GraphError;

    fn no_random() -> TreeCyclesConfig {
        TreeCyclesConfig {
            random_edge_fraction: 0.0,
            ..TreeCyclesConfig::default()
        }
    }

    #[test]
    fn default_counts() {
        let d = TreeCyclesConfig::default().generate().unwrap();
        assert_eq!(d.name, "tree-cycles");
        assert_eq!(d.graph.num_nodes(), 871);
        assert_eq!(d.graph.num_edges(), 939);
        assert_eq!(label_counts(&d), vec![511, 360]);
        assert_eq!((d.split.train.len(), d.split.test.len()), (696, 175));
    }

    #[test]
    fn tree_and_cycles_before_random_edges() {
        let d = no_random().generate().unwrap();
        let g = &d.graph;
        assert_eq!(g.num_edges(), 510 + 360 + 60);
        for i in 0..255u32 {
            assert!(
                g.has_edge(i, 2 * i + 1) && g.has_edge(i, 2 * i + 2),
                "tree node {i}"
            );
        }
        let tree_edges = g
            .edges()
            .into_iter()
            .filter(|&(u, w)| u < 511 && w < 511)
            .count();
        assert_eq!(tree_edges, 510);
        let anchors = check_motifs(&d, 511, 60, &CYCLE6);
        assert_eq!(anchors, (0..60).map(|k| k * 8).collect::<Vec<u32>>());
        // Every cycle node has its two cycle neighbours; node 0 also its anchor.
        for k in 0..60u32 {
            let first = 511 + 6 * k;
            assert_eq!(g.degree(first), 3);
            assert!((first + 1..first + 6).all(|u| g.degree(u) == 2));
        }
        check_random_edges(&d, &TreeCyclesConfig::default().generate().unwrap(), 9);
    }

    #[test]
    fn deterministic() {
        let a = TreeCyclesConfig::default().generate().unwrap();
        assert!(same(&a, &TreeCyclesConfig::default().generate().unwrap()));
        let c = TreeCyclesConfig {
            seed: 43,
            ..TreeCyclesConfig::default()
        }
        .generate()
        .unwrap();
        assert_ne!(a.graph.edges(), c.graph.edges());
        assert_ne!(a.split, c.split);
        // Without random edges the graph does not depend on the seed, only the split does.
        let x = no_random().generate().unwrap();
        let y = TreeCyclesConfig {
            seed: 43,
            ..no_random()
        }
        .generate()
        .unwrap();
        assert_eq!(x.graph.edges(), y.graph.edges());
        assert_ne!(x.split, y.split);
    }

    #[test]
    fn small_and_bad_configs() {
        // Height 2 (7 nodes), 7 cycles: spacing 1, one cycle on every tree node.
        let d = TreeCyclesConfig {
            tree_height: 2,
            num_cycles: 7,
            ..no_random()
        };
        let d = d.generate().unwrap();
        assert_eq!(
            check_motifs(&d, 7, 7, &CYCLE6),
            (0..7).collect::<Vec<u32>>()
        );
        let none = TreeCyclesConfig {
            num_cycles: 0,
            ..TreeCyclesConfig::default()
        };
        assert_eq!(none.generate().unwrap().graph.num_nodes(), 511);

        let bad = |c: TreeCyclesConfig, which: &str| match c.generate() {
            Err(GraphError::InvalidParameter { name, .. }) => assert_eq!(name, which),
            other => panic!("expected an error on {which}, got {other:?}"),
        };
        bad(
            TreeCyclesConfig {
                tree_height: 2,
                num_cycles: 8,
                ..no_random()
            },
            "num_cycles",
        );
        bad(
            TreeCyclesConfig {
                tree_height: 31,
                ..Default::default()
            },
            "tree_height",
        );
        bad(
            TreeCyclesConfig {
                tree_height: u32::MAX,
                ..Default::default()
            },
            "tree_height",
        );
        bad(
            TreeCyclesConfig {
                random_edge_fraction: 2.0,
                ..Default::default()
            },
            "random_edge_fraction",
        );
        bad(
            TreeCyclesConfig {
                train_fraction: -1.0,
                ..Default::default()
            },
            "train_fraction",
        );
        // A single tree node with no cycles has no free pair for a random edge... but also
        // no edges, so ⌊p × 0⌋ = 0 random edges are asked for.
        let one = TreeCyclesConfig {
            tree_height: 0,
            num_cycles: 0,
            random_edge_fraction: 1.0,
            ..Default::default()
        };
        assert_eq!(one.generate().unwrap().graph.num_nodes(), 1);
    }
}
