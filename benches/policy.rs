//! Policy network latency: forward (inference, plain device) and forward + backward (autodiff)
//! on a BA-Shapes 4-hop neighbourhood, for a few hundred and a few thousand candidate actions,
//! with Burn (`policy_*`) and with the fused host kernel (`host_policy_*`) side by side.
//!
//! `cargo bench --bench policy`.

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use induce::graph::generators::SyntheticKind;
use induce::graph::k_hop;
use induce::models::kernels::tensors::matrix;
use induce::models::policy::host::{
    Adjacency, HostPolicy, PolicyInput, StateBlocks, reinforce_score_grad,
};
use induce::models::testing::test_device;
use induce::models::{CandidateTensors, GraphTensors, PolicyConfig};

fn policy(c: &mut Criterion) {
    let dev = test_device().expect("a CPU backend is compiled in");
    let (data, target) = common::motif_target(SyntheticKind::BaShapes);
    let g = &data.graph;
    let sub = k_hop(g, target, 4).expect("k-hop");
    let n = sub.num_nodes();
    let dim = 10 + 2 + 4;
    let x: Vec<f32> = (0..n * dim).map(|i| (i % 7) as f32 * 0.1).collect();
    for (label, count) in [("300", 300usize), ("3000", 3000)] {
        let (mut u, mut w, mut f) = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..count {
            u.push(sub.target_local as u32);
            w.push((k % n) as u32);
            f.push((k % 2) as f32);
        }
        let name = format!("{n}nodes_{}edges_{label}cands", sub.num_edges());
        let p = PolicyConfig::new(dim).init(&dev);
        let gt = GraphTensors::new(n, &sub.edges, &dev).expect("graph");
        let ct = CandidateTensors::new(&u, &w, &f, &dev);
        c.bench_function(&format!("policy_forward/{name}"), |b| {
            b.iter(|| {
                let lp = p.log_probs(matrix(&x, n, dim, &dev), &gt, &ct);
                lp.into_data()
            })
        });
        let hp = HostPolicy::from_policy(&p);
        let hg = Adjacency::with_self_loops(n, &sub.edges).expect("graph");
        c.bench_function(&format!("host_policy_forward/{name}"), |b| {
            b.iter(|| hp.forward(&x, &hg, &u, &w, &f))
        });
        let mut grads = vec![0.0; hp.num_params()];
        let input = PolicyInput::new(StateBlocks::whole(&x, dim), &hg, &u, &w, &f);
        c.bench_function(&format!("host_policy_forward_backward/{name}"), |b| {
            b.iter(|| {
                let t = hp.forward(&x, &hg, &u, &w, &f);
                let ds = reinforce_score_grad(t.log_probs(), 0, 1.0, 0.1, 1.0);
                hp.backward_blocks(&t, &input, &ds, &mut grads);
            })
        });
        let ad = dev.clone().autodiff();
        let p = PolicyConfig::new(dim).init(&ad);
        let gt = GraphTensors::new(n, &sub.edges, &ad).expect("graph");
        let ct = CandidateTensors::new(&u, &w, &f, &ad);
        c.bench_function(&format!("policy_forward_backward/{name}"), |b| {
            b.iter(|| {
                let lp = p.log_probs(matrix(&x, n, dim, &ad), &gt, &ct);
                let loss = -(lp.clone().exp() * lp).sum();
                loss.backward()
            })
        });
    }
}

criterion_group!(benches, policy);
criterion_main!(benches);
