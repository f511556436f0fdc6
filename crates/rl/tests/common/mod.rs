//! What the rl crate's integration tests share.

use induce_graph::{Dataset, k_hop};
use induce_models::BlackBox;

/// Nodes of `nodes` with a non-zero label that the black box predicts correctly on their
/// h-hop neighbourhood (the paper's target set).
pub fn targets(data: &Dataset, bb: &dyn BlackBox, nodes: &[u32], hops: u32) -> Vec<u32> {
    let g = &data.graph;
    nodes
        .iter()
        .copied()
        .filter(|&u| g.labels()[u as usize] != 0)
        .filter(|&u| {
            let s = k_hop(g, u, hops).unwrap();
            let lp = bb.log_probs(&s.features(g), &s.edges).unwrap();
            lp.argmax(s.target_local) == g.labels()[u as usize] as usize
        })
        .collect()
}
