//! Black-box GCN forward latency on 4-hop neighbourhoods of the generated benchmarks, Burn
//! (`gcn_forward`) and the host copy (`host_gcn_forward`) side by side.
//!
//! `cargo bench --bench black_box`. For each dataset the target is the first test node with a
//! non-zero label (a motif node, as the explainer's targets are); the subgraph size is printed.

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use induce::graph::generators::SyntheticKind;
use induce::graph::k_hop;
use induce::models::testing::test_device;
use induce::models::{BlackBox, GcnBlackBox, GcnConfig, HostGcn};

fn forward(c: &mut Criterion) {
    let dev = test_device().expect("a CPU backend is compiled in");
    for kind in [
        SyntheticKind::TreeCycles,
        SyntheticKind::BaShapes,
        SyntheticKind::TreeGrid,
    ] {
        let (data, target) = common::motif_target(kind);
        let g = &data.graph;
        let sub = k_hop(g, target, 4).expect("k-hop");
        let x = sub.features(g);
        let gcn = GcnConfig::new(10, g.num_classes()).init(&dev);
        let host = HostGcn::from_gcn(&gcn).expect("host copy");
        let bb = GcnBlackBox::new(gcn, &dev);
        let name = format!(
            "{}/4hop_{}nodes_{}edges",
            kind.name(),
            sub.num_nodes(),
            sub.num_edges()
        );
        c.bench_function(&format!("gcn_forward/{name}"), |b| {
            b.iter(|| bb.log_probs(&x, &sub.edges).expect("forward"))
        });
        c.bench_function(&format!("host_gcn_forward/{name}"), |b| {
            b.iter(|| host.log_probs(&x, &sub.edges).expect("forward"))
        });
    }
}

criterion_group!(benches, forward);
criterion_main!(benches);
