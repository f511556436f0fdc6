//! Tree-Grid: a balanced binary tree with 3x3 grid motifs.
//!
//! ```text
//!      0 - 1 - 2    0 is joined to tree node k * floor(tree nodes / num_grids)
//!      |   |   |
//!      3 - 4 - 5    every grid node has label 1; tree nodes have label 0
//!      |   |   |
//!      6 - 7 - 8
//! ```
//!
//! The tree of height `h` has nodes `0..2^(h+1) - 1`, node `i` joined to `2i + 1` and `2i + 2`;
//! grid `k` occupies the 9 nodes after the tree's and the previous grids', row-major as above.

use super::SyntheticKind;
use super::common::{GRID3, TreeWithMotifs};
use crate::dataset::Dataset;
use crate::error::Result;

/// Parameters of Tree-Grid. [`Default`] gives the paper's values.
///
/// ```
/// use induce_graph::generators::TreeGridConfig;
/// let d = TreeGridConfig::default().generate().unwrap();
/// assert_eq!((d.graph.num_nodes(), d.graph.num_edges()), (1231, 1705));
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TreeGridConfig {
    /// Height of the balanced binary tree (default 8: 511 nodes, 510 edges). At most 30.
    pub tree_height: u32,
    /// Number of 3x3 grids (default 80); grid `k` is joined to tree node
    /// `k × ⌊tree nodes / num_grids⌋` (spacing 6 by default). At most the number of tree
    /// nodes.
    pub num_grids: usize,
    /// Random extra edges as a fraction of the edges before adding them, rounded down
    /// (default 0.1: ⌊0.1 × 1,550⌋ = 155). In `[0, 1]`.
    pub random_edge_fraction: f64,
    /// Share of the nodes in the training split, rounded down; the rest is test (default 0.8).
    pub train_fraction: f64,
    /// Seed of the random extra edges; the split uses
    /// [`split_seed`](super::split_seed)`(seed)` (default 42).
    pub seed: u64,
}

impl Default for TreeGridConfig {
    fn default() -> Self {
        Self {
            tree_height: 8,
            num_grids: 80,
            random_edge_fraction: 0.1,
            train_fraction: 0.8,
            seed: 42,
        }
    }
}

impl TreeGridConfig {
    /// Checks every parameter without generating anything.
    pub fn validate(&self) -> Result<()> {
        self.construction().check().map(|_| ())
    }

    /// Generates the dataset (named `tree-grid`): the tree, the grids, then the random extra
    /// edges drawn from `StdRng::seed_from_u64(seed)` (the only random part of the graph).
    pub fn generate(&self) -> Result<Dataset> {
        self.construction().generate()
    }

    /// The shared tree-with-motifs construction with these parameters.
    fn construction(&self) -> TreeWithMotifs<'static> {
        TreeWithMotifs {
            name: SyntheticKind::TreeGrid.name(),
            height: self.tree_height,
            motif: &GRID3,
            count: self.num_grids,
            count_name: "num_grids",
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

    fn no_random() -> TreeGridConfig {
        TreeGridConfig {
            random_edge_fraction: 0.0,
            ..TreeGridConfig::default()
        }
    }

    #[test]
    fn default_counts() {
        let d = TreeGridConfig::default().generate().unwrap();
        assert_eq!(d.name, "tree-grid");
        assert_eq!(d.graph.num_nodes(), 1231);
        assert_eq!(d.graph.num_edges(), 1705);
        assert_eq!(label_counts(&d), vec![511, 720]);
        assert_eq!((d.split.train.len(), d.split.test.len()), (984, 247));
    }

    #[test]
    fn tree_and_grids_before_random_edges() {
        let d = no_random().generate().unwrap();
        let g = &d.graph;
        assert_eq!(g.num_edges(), 510 + 960 + 80);
        for i in 0..255u32 {
            assert!(
                g.has_edge(i, 2 * i + 1) && g.has_edge(i, 2 * i + 2),
                "tree node {i}"
            );
        }
        for leaf in 255..511u32 {
            assert_eq!(
                g.neighbors(leaf).filter(|&w| w < 511).count(),
                1,
                "leaf {leaf}"
            );
        }
        let anchors = check_motifs(&d, 511, 80, &GRID3);
        assert_eq!(anchors, (0..80).map(|k| k * 6).collect::<Vec<u32>>());
        // Grid degrees: corners 2 (corner 0 has 3 with its anchor), edges 3, centre 4.
        for k in 0..80u32 {
            let first = 511 + 9 * k;
            let deg: Vec<usize> = (first..first + 9).map(|u| g.degree(u)).collect();
            assert_eq!(deg, vec![3, 3, 2, 3, 4, 3, 2, 3, 2]);
        }
        check_random_edges(&d, &TreeGridConfig::default().generate().unwrap(), 155);
    }

    #[test]
    fn deterministic() {
        let a = TreeGridConfig::default().generate().unwrap();
        assert!(same(&a, &TreeGridConfig::default().generate().unwrap()));
        let c = TreeGridConfig {
            seed: 7,
            ..TreeGridConfig::default()
        }
        .generate()
        .unwrap();
        assert_ne!(a.graph.edges(), c.graph.edges());
        assert_ne!(a.split, c.split);
        assert_eq!(a.graph.motifs(), c.graph.motifs());
    }

    #[test]
    fn bad_configs() {
        let bad = |c: TreeGridConfig, which: &str| match c.generate() {
            Err(GraphError::InvalidParameter { name, .. }) => assert_eq!(name, which),
            other => panic!("expected an error on {which}, got {other:?}"),
        };
        bad(
            TreeGridConfig {
                num_grids: 512,
                ..Default::default()
            },
            "num_grids",
        );
        bad(
            TreeGridConfig {
                tree_height: 40,
                ..Default::default()
            },
            "tree_height",
        );
        bad(
            TreeGridConfig {
                random_edge_fraction: 1.01,
                ..Default::default()
            },
            "random_edge_fraction",
        );
        bad(
            TreeGridConfig {
                train_fraction: f64::NAN,
                ..Default::default()
            },
            "train_fraction",
        );
        // 3-node path, no grids: ⌊1.0 × 2⌋ = 2 random edges, but only one free pair.
        let full = TreeGridConfig {
            tree_height: 1,
            num_grids: 0,
            random_edge_fraction: 1.0,
            ..Default::default()
        };
        bad(full, "random_edge_fraction");
        assert!(
            TreeGridConfig {
                num_grids: 511,
                ..Default::default()
            }
            .generate()
            .is_ok()
        );
    }
}
