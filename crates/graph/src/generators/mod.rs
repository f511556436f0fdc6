//! The synthetic node-classification benchmarks of GNNExplainer, as used by InduCE: BA-Shapes,
//! Tree-Cycles and Tree-Grid.
//!
//! Each benchmark is a base graph (a Barabási–Albert graph or a balanced binary tree) with motif
//! instances attached, each instance joined to the base by exactly one edge (from the motif's
//! local node 0), followed by `⌊p × edges⌋` random extra edges between uniformly random distinct
//! non-adjacent node pairs. Node features are a constant vector of ones
//! ([`FEATURE_DIM`] dims), so all signal is structural. Base nodes are numbered first, then the
//! motif nodes instance by instance in the local order drawn below; the graph carries the motif
//! ground truth ([`Graph::motifs`](crate::Graph::motifs): instance id per motif node, `None` for
//! base nodes). The joining edge is not a motif edge.
//!
//! **House** (BA-Shapes; labels: upper corners 1, lower corners 2, roof 3; 6 edges):
//!
//! ```text
//!        4          roof         (label 3)
//!       / \
//!      0 - 1        upper corners (label 1); 0 is joined to a random base node
//!      |   |
//!      3 - 2        lower corners (label 2)
//! ```
//!
//! **Six-cycle** (Tree-Cycles; label 1; 6 edges):
//!
//! ```text
//!        0 - 1      0 is joined to tree node k * floor(511 / 60)
//!       /     \
//!      5       2
//!       \     /
//!        4 - 3
//! ```
//!
//! **3x3 grid** (Tree-Grid; label 1; 12 edges):
//!
//! ```text
//!      0 - 1 - 2    0 is joined to tree node k * floor(511 / 80)
//!      |   |   |
//!      3 - 4 - 5
//!      |   |   |
//!      6 - 7 - 8
//! ```
//!
//! With the default (paper) parameters:
//!
//! | benchmark   | nodes | edges before random | random | edges | labels (counts)          |
//! |-------------|------:|--------------------:|-------:|------:|--------------------------|
//! | BA-Shapes   |   700 | 1,475 + 480 + 80    |     20 | 2,055 | 300 / 160 / 160 / 80     |
//! | Tree-Cycles |   871 | 510 + 360 + 60      |      9 |   939 | 511 / 360                |
//! | Tree-Grid   | 1,231 | 510 + 960 + 80      |    155 | 1,705 | 511 / 720                |
//!
//! **Seeding.** A generator draws everything (Barabási–Albert targets, house anchors, random
//! edges, in that order) from one `StdRng::seed_from_u64(seed)`; the random edges come last, so
//! changing only the random-edge fraction keeps the rest of the graph. The 80/20 split is
//! `Split::random(n, train_fraction, split_seed(seed))`, see [`split_seed`]. The same config
//! always gives the identical graph, split and ground truth.
//!
//! ```
//! use induce_graph::generators::{SyntheticKind, TreeGridConfig};
//! let d = SyntheticKind::BaShapes.generate(42).unwrap();
//! assert_eq!(d.name, "ba-shapes");
//! assert_eq!((d.graph.num_nodes(), d.graph.num_edges()), (700, 2055));
//! assert_eq!((d.split.train.len(), d.split.test.len()), (560, 140));
//!
//! let grid = TreeGridConfig { random_edge_fraction: 0.0, ..TreeGridConfig::default() };
//! assert_eq!(grid.generate().unwrap().graph.num_edges(), 1550);
//! assert_eq!("tree-cycles".parse::<SyntheticKind>().unwrap(), SyntheticKind::TreeCycles);
//! ```
//!
//! **Scale benchmarks.** [`ArxivLikeConfig`] generates a different kind of graph, not one of the
//! paper's benchmarks (so not a [`SyntheticKind`]): a seeded synthetic graph of the size of
//! ogbn-arxiv (169,343 nodes, 1,166,243 edges, 128 features, 40 classes) with heavy-tailed
//! degrees, homophilous edges and class-informative features.

mod arxiv_like;
mod ba_shapes;
mod common;
mod tree_cycles;
mod tree_grid;

use std::fmt;
use std::str::FromStr;

pub use arxiv_like::ArxivLikeConfig;
pub use ba_shapes::BaShapesConfig;
pub use tree_cycles::TreeCyclesConfig;
pub use tree_grid::TreeGridConfig;

use crate::dataset::Dataset;
use crate::error::{GraphError, Result};

/// Dimension of the constant-one node features of every synthetic benchmark.
pub const FEATURE_DIM: usize = 10;

/// The seed of a generated dataset's train/test split, derived from the generator seed:
/// `seed XOR 0x9E37_79B9_7F4A_7C15` (the 64-bit golden-ratio constant), so that the split's
/// shuffle stream differs from the stream that built the graph.
///
/// ```
/// use induce_graph::{Split, generators::{split_seed, SyntheticKind}};
/// let d = SyntheticKind::TreeCycles.generate(7).unwrap();
/// assert_eq!(d.split, Split::random(871, 0.8, split_seed(7)).unwrap());
/// ```
pub fn split_seed(seed: u64) -> u64 {
    seed ^ 0x9E37_79B9_7F4A_7C15
}

/// One of the three synthetic benchmarks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum SyntheticKind {
    /// Barabási–Albert base with 80 houses ([`BaShapesConfig`]).
    BaShapes,
    /// Binary tree with 60 six-cycles ([`TreeCyclesConfig`]).
    TreeCycles,
    /// Binary tree with 80 3x3 grids ([`TreeGridConfig`]).
    TreeGrid,
}

impl SyntheticKind {
    /// All kinds, in the order BA-Shapes, Tree-Cycles, Tree-Grid.
    pub const ALL: [SyntheticKind; 3] = [
        SyntheticKind::BaShapes,
        SyntheticKind::TreeCycles,
        SyntheticKind::TreeGrid,
    ];

    /// The dataset name: `ba-shapes`, `tree-cycles` or `tree-grid`.
    pub fn name(self) -> &'static str {
        match self {
            SyntheticKind::BaShapes => "ba-shapes",
            SyntheticKind::TreeCycles => "tree-cycles",
            SyntheticKind::TreeGrid => "tree-grid",
        }
    }

    /// Generates the benchmark with the paper's default parameters and the given seed.
    pub fn generate(self, seed: u64) -> Result<Dataset> {
        match self {
            SyntheticKind::BaShapes => BaShapesConfig {
                seed,
                ..Default::default()
            }
            .generate(),
            SyntheticKind::TreeCycles => TreeCyclesConfig {
                seed,
                ..Default::default()
            }
            .generate(),
            SyntheticKind::TreeGrid => TreeGridConfig {
                seed,
                ..Default::default()
            }
            .generate(),
        }
    }
}

impl fmt::Display for SyntheticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SyntheticKind {
    type Err = GraphError;

    /// Parses a kind name; case-insensitive, `_` accepted for `-` (`BA_Shapes` works).
    fn from_str(s: &str) -> Result<Self> {
        let norm = s.trim().to_ascii_lowercase().replace('_', "-");
        SyntheticKind::ALL
            .into_iter()
            .find(|k| k.name() == norm)
            .ok_or_else(|| GraphError::InvalidParameter {
                name: "synthetic dataset",
                value: s.to_owned(),
                reason: "expected ba-shapes, tree-cycles or tree-grid",
            })
    }
}

#[cfg(test)]
mod tests {
    use super::common::testing::same;
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in SyntheticKind::ALL {
            assert_eq!(k.name().parse::<SyntheticKind>().unwrap(), k);
            assert_eq!(k.to_string(), k.name());
        }
        assert_eq!(
            "Tree_Grid".parse::<SyntheticKind>().unwrap(),
            SyntheticKind::TreeGrid
        );
        assert_eq!(
            " BA-SHAPES ".parse::<SyntheticKind>().unwrap(),
            SyntheticKind::BaShapes
        );
        assert!(matches!(
            "syn1".parse::<SyntheticKind>(),
            Err(GraphError::InvalidParameter {
                name: "synthetic dataset",
                ..
            })
        ));
    }

    #[test]
    fn kinds_generate_the_paper_benchmarks() {
        let expect = [(700, 2055, 4), (871, 939, 2), (1231, 1705, 2)];
        for (k, (nodes, edges, classes)) in SyntheticKind::ALL.into_iter().zip(expect) {
            let d = k.generate(42).unwrap();
            assert_eq!(d.name, k.name());
            assert_eq!(d.graph.num_nodes(), nodes, "{k}");
            assert_eq!(d.graph.num_edges(), edges, "{k}");
            assert_eq!(d.graph.num_classes(), classes, "{k}");
            assert_eq!(d.graph.features().dim(), FEATURE_DIM);
            assert!(d.graph.features().as_slice().iter().all(|&x| x == 1.0));
            assert!(d.eval_targets.is_none() && d.notes.is_empty());
            assert!(d.split.valid.is_empty());
            d.split.validate(nodes).unwrap();
        }
        // The default seed is 42.
        let a = SyntheticKind::TreeGrid.generate(42).unwrap();
        assert!(same(&a, &TreeGridConfig::default().generate().unwrap()));
    }

    #[test]
    fn split_seed_differs_from_seed() {
        assert_ne!(split_seed(42), 42);
        assert_ne!(split_seed(0), split_seed(1));
    }
}
