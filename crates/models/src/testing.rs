//! Toy black boxes for tests and doc examples: rules on a node's degree whose answers can be
//! worked out by hand.

use induce_graph::Features;

use crate::{BlackBox, LogProbs, Result};

/// Class 1 with probability `sigmoid(degree − t + ½)`: class 1 iff the node's degree is at
/// least `t`, with a margin that moves with every edit at the node (which it alone reads:
/// `L = 0`).
///
/// ```
/// use induce_graph::{Features, Graph};
/// use induce_models::BlackBox;
/// use induce_models::testing::GradedDegree;
/// //  0 ─ 1 ─ 2     degrees 1, 2, 1
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], Features::constant(3, 1, 1.0), vec![0; 3])
///     .unwrap();
/// let lp = GradedDegree(2).log_probs(g.features(), &g.edges()).unwrap();
/// assert_eq!((lp.argmax(0), lp.argmax(1)), (0, 1));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct GradedDegree(pub usize);

impl BlackBox for GradedDegree {
    fn input_dim(&self) -> usize {
        1
    }

    fn num_classes(&self) -> usize {
        2
    }

    fn message_passing_layers(&self) -> Option<u32> {
        Some(0)
    }

    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
        let mut deg = vec![0usize; x.num_nodes()];
        for &(u, w) in edges {
            deg[u as usize] += 1;
            deg[w as usize] += 1;
        }
        let d = deg.iter().flat_map(|&d| {
            let z = d as f32 - self.0 as f32 + 0.5;
            // log sigmoid(−z), log sigmoid(z)
            [-(1.0 + z.exp()).ln(), -(1.0 + (-z).exp()).ln()]
        });
        LogProbs::new(x.num_nodes(), 2, d.collect())
    }
}
