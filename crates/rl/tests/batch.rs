//! Explaining many targets at once (`induce_rl::batch`, `Explainer::explain_batch`) gives the
//! explanations of explaining each alone, on both kernels, greedy and best-of-k, with and
//! without the minimality pass, and for a policy with node BatchNorm (scored state by state).

use induce_graph::generators::SyntheticKind;
use induce_models::device::default_device;
use induce_models::{GcnConfig, GcnTrainingConfig, PolicyConfig, gcn_black_box, train_gcn};
use induce_rl::{EnvConfig, Explainer, InduceConfig, InduceExplainer, Kernel, RlError};

#[test]
fn batched_targets_explain_as_each_alone() {
    let dev = default_device().unwrap();
    let data = SyntheticKind::TreeCycles.generate(42).unwrap();
    let tcfg = GcnTrainingConfig::new(GcnConfig::new(10, 2)).with_epochs(300);
    let (gcn, _) = train_gcn(&data, &tcfg, &dev).unwrap();
    let cfg = InduceConfig::default();
    let mut targets: Vec<u32> = data
        .split
        .test
        .iter()
        .copied()
        .filter(|&u| data.graph.labels()[u as usize] != 0)
        .take(10)
        .collect();
    // Class-0 nodes too (many are explained with other edits), and one out of range.
    targets.extend(data.split.test.iter().copied().take(4));
    let bad = data.graph.num_nodes() as u32 + 3;
    targets.insert(5, bad);
    let policies = [
        cfg.policy_config(10, 2).init(&dev),
        PolicyConfig::new(cfg.policy_config(10, 2).input_dim)
            .with_batch_norm(true)
            .with_init_seed(3)
            .init(&dev),
    ];
    let mut found = 0;
    for kernel in Kernel::ALL {
        let bb = gcn_black_box(&gcn, kernel, &dev).unwrap();
        for (p, policy) in policies.iter().enumerate() {
            for (samples, minimise) in [(1, false), (4, true)] {
                let x = |batch| {
                    InduceExplainer::new("i", policy, bb.as_ref(), EnvConfig::default(), &dev)
                        .with_kernel(kernel)
                        .with_samples(samples, 11)
                        .with_minimise(minimise)
                        .with_batch(batch)
                };
                let alone: Vec<_> = targets
                    .iter()
                    .map(|&t| x(1).explain(&data.graph, t))
                    .collect();
                for (batch, threads) in [(6, 2), (32, 1)] {
                    let x = x(batch);
                    assert_eq!(x.batch_size(), batch);
                    let mut together = Vec::new();
                    for chunk in targets.chunks(batch) {
                        together.extend(x.explain_batch(&data.graph, chunk, threads));
                    }
                    assert_eq!(together.len(), targets.len());
                    for ((t, a), b) in targets.iter().zip(&alone).zip(&together) {
                        match (a, b) {
                            (Ok(a), Ok(b)) => {
                                assert_eq!(
                                    a, b,
                                    "{kernel:?} policy {p} samples {samples} batch {batch}: \
                                     target {t}"
                                );
                                found += usize::from(a.found);
                            }
                            (Err(RlError::TargetOutOfRange { target, .. }), Err(_)) => {
                                assert_eq!((*target, *t), (bad, bad));
                            }
                            other => panic!("target {t}: {other:?}"),
                        }
                    }
                }
            }
        }
    }
    // The comparison is not vacuous: counterfactuals were found.
    assert!(found > 0);
}

/// The GPU layout of the Burn kernel (`BurnOptions`: one feature product over the whole graph,
/// greedy choices on the device), forced on the CPU: the explanations of the per-episode layout,
/// batched or alone, greedy and best-of-4.
#[test]
fn the_gpu_layout_explains_as_the_per_episode_one() {
    use induce_rl::Episode;
    use induce_rl::batch::{SearchConfig, best_of_k};
    use induce_rl::kernel::burn::{BurnActor, BurnOptions};
    let dev = default_device().unwrap();
    let data = SyntheticKind::TreeCycles.generate(42).unwrap();
    let tcfg = GcnTrainingConfig::new(GcnConfig::new(10, 2)).with_epochs(300);
    let (gcn, _) = train_gcn(&data, &tcfg, &dev).unwrap();
    let bb = gcn_black_box(&gcn, Kernel::Burn, &dev).unwrap();
    let cfg = InduceConfig::default();
    let policy = cfg.policy_config(10, 2).init(&dev);
    let targets: Vec<u32> = data
        .split
        .test
        .iter()
        .copied()
        .filter(|&u| data.graph.labels()[u as usize] != 0)
        .take(8)
        .chain(data.split.test.iter().copied().take(4))
        .collect();
    let env = EnvConfig::default();
    let episodes = || -> Vec<Episode<'_>> {
        targets
            .iter()
            .map(|&t| Episode::new(&data.graph, bb.as_ref(), t, &env).unwrap())
            .collect()
    };
    let per_episode = BurnActor::with_options(
        &policy,
        &dev,
        BurnOptions {
            graph_product: false,
            greedy_on_device: false,
        },
    );
    let gpu_layout = BurnActor::with_options(
        &policy,
        &dev,
        BurnOptions {
            graph_product: true,
            greedy_on_device: true,
        },
    );
    let finish = |e: induce_rl::Explanation| -> induce_rl::Result<_> { Ok(e) };
    let mut found = 0;
    for samples in [1, 4] {
        let search = SearchConfig {
            samples,
            seed: 5,
            threads: 2,
        };
        let want = best_of_k(&per_episode, episodes(), &search, &finish).unwrap();
        let together = best_of_k(&gpu_layout, episodes(), &search, &finish).unwrap();
        assert_eq!(want, together, "samples {samples}: batched");
        for (i, ep) in episodes().into_iter().enumerate() {
            let alone = best_of_k(&gpu_layout, vec![ep], &search, &finish).unwrap();
            assert_eq!(
                alone[0], want[i],
                "samples {samples}: target {}",
                targets[i]
            );
        }
        found += want.iter().filter(|e| e.found).count();
    }
    assert!(found > 0);
}
