//! One environment step (apply an edit, re-run the black box, refresh state and candidates) on
//! 4-hop neighbourhoods of the generated benchmarks.
//!
//! `cargo bench --bench env_step`. Each iteration resets the episode and takes its first
//! candidate action.

use criterion::{Criterion, criterion_group, criterion_main};
use induce::graph::generators::SyntheticKind;
use induce::models::device::default_device;
use induce::models::{GcnBlackBox, GcnConfig};
use induce::rl::{EnvConfig, Episode};

fn env_step(c: &mut Criterion) {
    let dev = default_device().expect("a CPU backend is compiled in");
    for kind in [
        SyntheticKind::TreeCycles,
        SyntheticKind::BaShapes,
        SyntheticKind::TreeGrid,
    ] {
        let data = kind.generate(42).expect("generator");
        let g = &data.graph;
        let target = *data
            .split
            .test
            .iter()
            .find(|&&u| g.labels()[u as usize] != 0)
            .expect("motif node");
        let bb = GcnBlackBox::new(GcnConfig::new(10, g.num_classes()).init(&dev), &dev);
        let mut ep = Episode::new(g, &bb, target, &EnvConfig::default()).expect("episode");
        let name = format!(
            "env_step/{}/{}nodes_{}cands",
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

criterion_group!(benches, env_step);
criterion_main!(benches);
