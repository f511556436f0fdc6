//! BA-Shapes: a Barabási–Albert graph with house motifs.
//!
//! ```text
//!        4          roof          (label 3)
//!       / \
//!      0 - 1        upper corners (label 1); 0 is joined to a random base node
//!      |   |
//!      3 - 2        lower corners (label 2)
//! ```
//!
//! Base nodes `0..base_nodes` have label 0; house `k` occupies nodes
//! `base_nodes + 5k .. base_nodes + 5k + 5` in the local order above.

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::SyntheticKind;
use super::common::{Builder, HOUSE, check_total_nodes, check_unit_interval};
use crate::dataset::Dataset;
use crate::error::{GraphError, Result};

/// Parameters of BA-Shapes. [`Default`] gives the paper's values.
///
/// ```
/// use induce_graph::generators::BaShapesConfig;
/// let d = BaShapesConfig { num_houses: 10, ..BaShapesConfig::default() }.generate().unwrap();
/// assert_eq!(d.graph.num_nodes(), 300 + 10 * 5);
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BaShapesConfig {
    /// Nodes of the Barabási–Albert base graph (default 300). At least `edges_per_node + 1`.
    pub base_nodes: usize,
    /// Edges each new Barabási–Albert node attaches, `m` (default 5). At least 1. The base then
    /// has `m × (base_nodes − m)` edges (1,475 by default).
    pub edges_per_node: usize,
    /// Number of houses (default 80), each joined to an independently, uniformly drawn base
    /// node.
    pub num_houses: usize,
    /// Random extra edges as a fraction of the edges before adding them, rounded down
    /// (default 0.01: ⌊0.01 × 2,035⌋ = 20). In `[0, 1]`.
    pub random_edge_fraction: f64,
    /// Share of the nodes in the training split, rounded down; the rest is test (default 0.8).
    pub train_fraction: f64,
    /// Seed of the graph's random draws; the split uses
    /// [`split_seed`](super::split_seed)`(seed)` (default 42).
    pub seed: u64,
}

impl Default for BaShapesConfig {
    fn default() -> Self {
        Self {
            base_nodes: 300,
            edges_per_node: 5,
            num_houses: 80,
            random_edge_fraction: 0.01,
            train_fraction: 0.8,
            seed: 42,
        }
    }
}

impl BaShapesConfig {
    /// Checks every parameter without generating anything.
    pub fn validate(&self) -> Result<()> {
        let m = self.edges_per_node;
        if m == 0 {
            return Err(GraphError::InvalidParameter {
                name: "edges_per_node",
                value: m.to_string(),
                reason: "must be at least 1",
            });
        }
        if self.base_nodes <= m {
            return Err(GraphError::InvalidParameter {
                name: "base_nodes",
                value: self.base_nodes.to_string(),
                reason: "must exceed edges_per_node: the initial star alone has m + 1 nodes",
            });
        }
        if m.checked_mul(self.base_nodes - m)
            .is_none_or(|e| e >= u32::MAX as usize / 2)
        {
            return Err(GraphError::InvalidParameter {
                name: "edges_per_node",
                value: m.to_string(),
                reason: "the base would have more edges than 32-bit edge ids allow",
            });
        }
        check_total_nodes("num_houses", self.base_nodes, self.num_houses, HOUSE.size())?;
        check_unit_interval("random_edge_fraction", self.random_edge_fraction)?;
        check_unit_interval("train_fraction", self.train_fraction)
    }

    /// Generates the dataset (named `ba-shapes`): the Barabási–Albert base, then the houses
    /// (each joined to a uniformly random base node), then the random extra edges, all drawn
    /// from `StdRng::seed_from_u64(seed)` in that order.
    pub fn generate(&self) -> Result<Dataset> {
        self.validate()?;
        let mut rng = StdRng::seed_from_u64(self.seed);
        let mut b = Builder::new(self.base_nodes);
        barabasi_albert(&mut b, self.edges_per_node, &mut rng);
        for _ in 0..self.num_houses {
            let anchor = rng.random_range(0..self.base_nodes as u32);
            b.attach(&HOUSE, anchor);
        }
        b.add_random_edges(self.random_edge_fraction, &mut rng)?;
        b.finish(
            SyntheticKind::BaShapes.name(),
            self.train_fraction,
            self.seed,
        )
    }
}

/// Adds Barabási–Albert edges on all nodes of `b` (networkx's `barabasi_albert_graph`): a star
/// with centre 0 and leaves `1..=m`, then each node `s = m + 1, m + 2, ...` is joined to `m`
/// distinct earlier nodes, each drawn with probability proportional to its degree (draws that
/// repeat a chosen target are redone). Gives `m × (n − m)` edges. Needs `1 ≤ m < n`.
fn barabasi_albert(b: &mut Builder, m: usize, rng: &mut StdRng) {
    let n = b.num_nodes();
    debug_assert!(m >= 1 && m < n);
    // Every node appears once per incident edge, so a uniform pick is degree-proportional.
    let mut repeated: Vec<u32> = Vec::with_capacity(2 * m * (n - m));
    for leaf in 1..=m as u32 {
        b.add_edge(0, leaf);
        repeated.extend([0, leaf]);
    }
    let mut targets: Vec<u32> = Vec::with_capacity(m);
    for source in (m + 1) as u32..n as u32 {
        targets.clear();
        while targets.len() < m {
            let t = repeated[rng.random_range(0..repeated.len())];
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
        for &t in &targets {
            b.add_edge(source, t);
        }
        repeated.extend_from_slice(&targets);
        repeated.extend(std::iter::repeat_n(source, m));
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{check_motifs, check_random_edges, label_counts, same};
    use super::*;

    fn no_random() -> BaShapesConfig {
        BaShapesConfig {
            random_edge_fraction: 0.0,
            ..BaShapesConfig::default()
        }
    }

    #[test]
    fn default_counts() {
        let d = BaShapesConfig::default().generate().unwrap();
        assert_eq!(d.name, "ba-shapes");
        assert_eq!(d.graph.num_nodes(), 700);
        assert_eq!(d.graph.num_edges(), 2055);
        assert_eq!(label_counts(&d), vec![300, 160, 160, 80]);
        assert_eq!((d.split.train.len(), d.split.test.len()), (560, 140));
        let all: std::collections::BTreeSet<u32> =
            d.split.train.iter().chain(&d.split.test).copied().collect();
        assert_eq!(all.len(), 700);
    }

    #[test]
    fn houses_before_random_edges() {
        let d = no_random().generate().unwrap();
        assert_eq!(d.graph.num_edges(), 1475 + 480 + 80);
        let anchors = check_motifs(&d, 300, 80, &HOUSE);
        assert!(anchors.iter().all(|&a| a < 300));
        // Independent uniform anchors: with 80 draws from 300 nodes, several distinct ones.
        let distinct: std::collections::BTreeSet<u32> = anchors.iter().copied().collect();
        assert!(distinct.len() > 40);
        // The roof is adjacent to exactly the two upper corners of its house.
        for k in 0..80u32 {
            let roof = 300 + 5 * k + 4;
            assert_eq!(d.graph.degree(roof), 2);
            assert!(d.graph.has_edge(roof, 300 + 5 * k) && d.graph.has_edge(roof, 300 + 5 * k + 1));
        }
        let with = BaShapesConfig::default().generate().unwrap();
        check_random_edges(&d, &with, 20);
    }

    #[test]
    fn barabasi_albert_base() {
        let d = BaShapesConfig {
            num_houses: 0,
            ..no_random()
        }
        .generate()
        .unwrap();
        let g = &d.graph;
        assert_eq!(g.num_nodes(), 300);
        assert_eq!(g.num_edges(), 1475);
        assert_eq!(g.num_classes(), 1);
        let degree_sum: usize = (0..300).map(|u| g.degree(u)).sum();
        assert_eq!(degree_sum, 2 * 1475);
        // The star, then every later node has at least m = 5 neighbours, 5 of them earlier.
        assert!((1..=5).all(|leaf| g.has_edge(0, leaf)));
        for u in 6..300u32 {
            assert_eq!(g.neighbors(u).filter(|&w| w < u).count(), 5, "node {u}");
        }
        assert!((1..300).all(|u| g.degree(u) >= 1));
        // Preferential attachment: the hubs are far above the minimum degree.
        assert!((0..300).map(|u| g.degree(u)).max().unwrap() > 20);
        // The smallest base is the star alone.
        let star = BaShapesConfig {
            base_nodes: 3,
            edges_per_node: 2,
            num_houses: 0,
            ..no_random()
        };
        assert_eq!(star.generate().unwrap().graph.edges(), vec![(0, 1), (0, 2)]);
        let m1 = BaShapesConfig {
            base_nodes: 50,
            edges_per_node: 1,
            num_houses: 0,
            ..no_random()
        };
        assert_eq!(m1.generate().unwrap().graph.num_edges(), 49); // a tree
    }

    #[test]
    fn deterministic() {
        let a = BaShapesConfig::default().generate().unwrap();
        let b = BaShapesConfig::default().generate().unwrap();
        assert!(same(&a, &b));
        let c = BaShapesConfig {
            seed: 43,
            ..BaShapesConfig::default()
        }
        .generate()
        .unwrap();
        assert!(!same(&a, &c));
        assert_ne!(a.graph.edges(), c.graph.edges());
        assert_ne!(a.split, c.split);
        assert_eq!(a.graph.labels(), c.graph.labels());
    }

    #[test]
    fn bad_configs() {
        let bad = |c: BaShapesConfig, which: &str| match c.generate() {
            Err(GraphError::InvalidParameter { name, .. }) => assert_eq!(name, which),
            other => panic!("expected an error on {which}, got {other:?}"),
        };
        bad(
            BaShapesConfig {
                edges_per_node: 0,
                ..Default::default()
            },
            "edges_per_node",
        );
        bad(
            BaShapesConfig {
                base_nodes: 5,
                ..Default::default()
            },
            "base_nodes",
        );
        bad(
            BaShapesConfig {
                base_nodes: 0,
                ..Default::default()
            },
            "base_nodes",
        );
        bad(
            BaShapesConfig {
                num_houses: usize::MAX / 2,
                ..Default::default()
            },
            "num_houses",
        );
        bad(
            BaShapesConfig {
                random_edge_fraction: -0.5,
                ..Default::default()
            },
            "random_edge_fraction",
        );
        bad(
            BaShapesConfig {
                random_edge_fraction: f64::NAN,
                ..Default::default()
            },
            "random_edge_fraction",
        );
        bad(
            BaShapesConfig {
                train_fraction: 1.5,
                ..Default::default()
            },
            "train_fraction",
        );
        let huge = BaShapesConfig {
            base_nodes: 1 << 33,
            edges_per_node: 1 << 20,
            ..Default::default()
        };
        bad(huge, "edges_per_node");
        assert!(BaShapesConfig::default().validate().is_ok());
    }
}
