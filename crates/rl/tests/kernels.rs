//! The same jobs through both implementations of the kernel seam (host and Burn) give the same
//! explanations: greedy and best-of-k inference, the transductive search and inductive
//! training (each written once, over `Actor` / `Learner`).

use induce_graph::generators::SyntheticKind;
use induce_models::testing::test_device;
use induce_models::{GcnConfig, GcnTrainingConfig, gcn_black_box, train_gcn};
use induce_rl::{
    InduceConfig, Kernel, KernelPolicy, StateLayout, explain_best_of_k, explain_greedy,
    explain_transductive, train_inductive,
};

#[test]
fn host_and_burn_kernels_explain_alike() {
    let dev = test_device().unwrap();
    let data = SyntheticKind::TreeCycles.generate(42).unwrap();
    let tcfg = GcnTrainingConfig::new(GcnConfig::new(10, 2)).with_epochs(300);
    let (gcn, _) = train_gcn(&data, &tcfg, &dev).unwrap();
    let mut cfg = InduceConfig::default();
    cfg.train.episodes = 6;
    let test: Vec<u32> = data
        .split
        .test
        .iter()
        .copied()
        .filter(|&u| data.graph.labels()[u as usize] != 0)
        .take(12)
        .collect();
    let train: Vec<u32> = data
        .split
        .train
        .iter()
        .copied()
        .filter(|&u| data.graph.labels()[u as usize] != 0)
        .take(16)
        .collect();
    let mut same = [0usize; 3];
    let mut policies = Vec::new();
    for kernel in Kernel::ALL {
        let bb = gcn_black_box(&gcn, kernel, &dev).unwrap();
        let c = InduceConfig {
            kernel,
            ..cfg.clone()
        };
        let p = train_inductive(&data.graph, bb.as_ref(), &train, &c, &dev, |_| {}).unwrap();
        policies.push(induce_models::policy::host::HostPolicy::from_policy(&p).params);
    }
    // Inductive training: the same per-episode samples, the gradient pinned to 1e-5.
    let (h, b) = (&policies[0], &policies[1]);
    assert_eq!(h.len(), b.len());
    let worst = h
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    assert!(worst < 1e-4, "host and Burn training differ by {worst}");

    let untrained = cfg.policy_config(10, 2).init(&dev);
    let run = |kernel: Kernel| {
        let bb = gcn_black_box(&gcn, kernel, &dev).unwrap();
        let p = KernelPolicy::new(&untrained, kernel, &dev);
        let mut c = InduceConfig {
            kernel,
            ..cfg.clone()
        };
        c.train.gamma = 0.6;
        test.iter()
            .map(|&t| {
                let g = explain_greedy(&p, &data.graph, bb.as_ref(), t, &c.env).unwrap();
                let k = explain_best_of_k(&p, &data.graph, bb.as_ref(), t, &c.env, 4, 7).unwrap();
                let tr = explain_transductive(&data.graph, bb.as_ref(), t, &c, &dev).unwrap();
                [g, k, tr]
            })
            .collect::<Vec<_>>()
    };
    let (host, burn) = (run(Kernel::Host), run(Kernel::Burn));
    for (h, b) in host.iter().zip(&burn) {
        for i in 0..3 {
            same[i] += usize::from(h[i] == b[i]);
        }
    }
    println!(
        "identical of {}: greedy {}, best-of-4 {}, transductive {}; training max |Δθ| {worst:e}",
        test.len(),
        same[0],
        same[1],
        same[2]
    );
    // The kernels sum in another order: a near-tie between two actions may break differently
    // (docs/PARITY.md); on these targets none does.
    assert_eq!(same, [test.len(); 3]);

    // The targeted state (two more columns, one refreshed each step) through both kernels.
    let mut targeted = cfg.clone();
    targeted.env.state = StateLayout::Targeted;
    let untrained = targeted.policy_config(10, 2).init(&dev);
    let run = |kernel: Kernel| {
        let bb = gcn_black_box(&gcn, kernel, &dev).unwrap();
        let p = KernelPolicy::new(&untrained, kernel, &dev);
        let env = &targeted.env;
        test.iter()
            .map(|&t| {
                let g = explain_greedy(&p, &data.graph, bb.as_ref(), t, env).unwrap();
                let k = explain_best_of_k(&p, &data.graph, bb.as_ref(), t, env, 4, 7).unwrap();
                [g, k]
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(Kernel::Host), run(Kernel::Burn));

    // The estimated state (one more column, the black box's gradient, refreshed each step)
    // through both kernels.
    let mut estimated = cfg.clone();
    estimated.env.state = StateLayout::Estimated;
    let untrained = estimated.policy_config(10, 2).init(&dev);
    let run = |kernel: Kernel| {
        let bb = gcn_black_box(&gcn, kernel, &dev).unwrap();
        let p = KernelPolicy::new(&untrained, kernel, &dev);
        let env = &estimated.env;
        test.iter()
            .map(|&t| explain_greedy(&p, &data.graph, bb.as_ref(), t, env).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(run(Kernel::Host), run(Kernel::Burn));
}
