//! One environment step (apply an edit, re-run the black box, refresh state and candidates) on
//! 4-hop neighbourhoods of the generated benchmarks, with the Burn black box (`env_step`) and its
//! host copy (`host_env_step`) side by side.
//!
//! `cargo bench --bench env_step`. Each iteration resets the episode and takes its first
//! candidate action.

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use induce::graph::generators::SyntheticKind;
use induce::models::testing::test_device;
use induce::models::{BlackBox, GcnBlackBox, GcnConfig, HostGcn};
use induce::rl::{EnvConfig, Episode};

fn env_step(c: &mut Criterion) {
    let dev = test_device().expect("a CPU backend is compiled in");
    for kind in [
        SyntheticKind::TreeCycles,
        SyntheticKind::BaShapes,
        SyntheticKind::TreeGrid,
    ] {
        let (data, target) = common::motif_target(kind);
        let g = &data.graph;
        let gcn = GcnConfig::new(10, g.num_classes()).init(&dev);
        let host = HostGcn::from_gcn(&gcn).expect("host copy");
        let burn = GcnBlackBox::new(gcn, &dev);
        let boxes: [(&str, &dyn BlackBox); 2] = [("env_step", &burn), ("host_env_step", &host)];
        for (label, bb) in boxes {
            let mut ep = Episode::new(g, bb, target, &EnvConfig::default()).expect("episode");
            let name = format!(
                "{label}/{}/{}nodes_{}cands",
                kind.name(),
                ep.num_nodes(),
                ep.candidates().len()
            );
            c.bench_function(&name, |b| {
                b.iter(|| {
                    ep.reset();
                    ep.step(0).expect("step")
                })
            });
        }
    }
}

criterion_group!(benches, env_step);
criterion_main!(benches);
