//! Shared by the benches: the generated benchmark and the node they measure.

use induce::graph::Dataset;
use induce::graph::generators::SyntheticKind;

/// The benchmark generated with seed 42 and its first test node with a non-zero label (a motif
/// node, as the explainer's targets are).
pub fn motif_target(kind: SyntheticKind) -> (Dataset, u32) {
    let data = kind.generate(42).expect("generator");
    let target = *data
        .split
        .test
        .iter()
        .find(|&&u| data.graph.labels()[u as usize] != 0)
        .expect("motif node");
    (data, target)
}
