//! A trained InduCE policy explains held-out nodes better than the same network untrained.

use induce_graph::generators::SyntheticKind;
use induce_models::ModelError;
use induce_models::testing::test_device;
use induce_models::{GcnBlackBox, GcnConfig, GcnTrainingConfig, train_gcn};
use induce_rl::metrics::{fidelity, size};
use induce_rl::{
    InduceConfig, Kernel, KernelPolicy, PolicyMeta, RlError, explain_best_of_k, explain_greedy,
    explain_transductive_from, load_policy, save_policy, train_inductive,
    train_inductive_checkpointed,
};

mod common;
use common::targets;

#[test]
fn training_beats_the_untrained_policy_on_held_out_nodes() {
    let dev = test_device().unwrap();
    let burn = |p: &induce_models::Policy| KernelPolicy::new(p, Kernel::Burn, &dev);
    let data = SyntheticKind::TreeCycles.generate(42).unwrap();
    let (gcn, _) = train_gcn(&data, &GcnTrainingConfig::new(GcnConfig::new(10, 2)), &dev).unwrap();
    let bb = GcnBlackBox::new(gcn, &dev);
    let mut cfg = InduceConfig::default();
    cfg.train.episodes = 40;
    let train = targets(&data, &bb, &data.split.train, cfg.env.hops);
    let test = targets(&data, &bb, &data.split.test, cfg.env.hops);
    assert!(
        train.len() > 100 && test.len() > 30,
        "{} / {}",
        train.len(),
        test.len()
    );

    let untrained = cfg.policy_config(10, 2).init(&dev);
    let mut log = Vec::new();
    let trained = train_inductive(&data.graph, &bb, &train, &cfg, &dev, |s| {
        log.push(s.clone())
    })
    .unwrap();
    let run = |p: &induce_models::Policy| {
        let e: Vec<_> = test
            .iter()
            .map(|&t| explain_greedy(&burn(p), &data.graph, &bb, t, &cfg.env).unwrap())
            .collect();
        (
            fidelity(&e).unwrap(),
            size(&e).map(|s| s.mean).unwrap_or(f64::INFINITY),
        )
    };
    let (f0, s0) = run(&untrained);
    let (f1, s1) = run(&trained);
    for s in &log {
        println!(
            "epoch {:>3} return {:>7.3} flipped {:.2} edits {:.2}",
            s.epoch, s.mean_return, s.flipped, s.mean_edits
        );
    }
    println!("untrained: fidelity {f0:.3} size {s0:.2}; trained: fidelity {f1:.3} size {s1:.2}");
    assert!(
        f1 < f0 || (f1 == f0 && s1 < s0),
        "trained ({f1}, {s1}) vs untrained ({f0}, {s0})"
    );

    // Saved and reloaded, the policy explains exactly as before; other layouts are refused.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.bpk");
    let meta = PolicyMeta {
        feature_dim: 10,
        num_classes: 2,
        induce: cfg.clone(),
    };
    save_policy(&trained, &meta, &path).unwrap();
    let (loaded, m) = load_policy(&path, 10, 2, &dev).unwrap();
    assert_eq!(m, meta);
    for &t in test.iter().take(10) {
        let a = explain_greedy(&burn(&trained), &data.graph, &bb, t, &cfg.env).unwrap();
        let b = explain_greedy(&burn(&loaded), &data.graph, &bb, t, &cfg.env).unwrap();
        assert_eq!(a, b);
    }
    match load_policy(&path, 745, 2, &dev) {
        Err(RlError::Model(ModelError::DimensionMismatch {
            expected: 745,
            got: 10,
            ..
        })) => {}
        other => panic!("expected a dimension mismatch, got {other:?}"),
    }
    assert!(load_policy(dir.path().join("missing.bpk"), 10, 2, &dev).is_err());
    // A corrupt width in policy.json is refused before anything is sized from it.
    let json_path = dir.path().join("policy.json");
    let good = std::fs::read_to_string(&json_path).unwrap();
    for (field, value) in [
        ("hidden", "1000000000"),
        ("gat_layers", "4000000000"),
        ("hidden", "0"),
    ] {
        let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
        v["induce"][field] = serde_json::Value::Number(value.parse::<u64>().unwrap().into());
        std::fs::write(&json_path, serde_json::to_vec(&v).unwrap()).unwrap();
        let e = load_policy(&path, 10, 2, &dev).unwrap_err().to_string();
        assert!(
            e.contains("policy.json") && e.contains("bad config"),
            "{field} {value}: {e}"
        );
    }
    std::fs::write(&json_path, good).unwrap();

    // Best-of-k inference: one sample is the greedy episode; more samples never give a larger
    // counterfactual or lose one, on either kernel, and the same seed gives the same result.
    let host = KernelPolicy::new(&untrained, Kernel::Host, &dev);
    let untrained_burn = burn(&untrained);
    let (mut greedy_total, mut best_total) = (0, 0);
    for &t in test.iter().take(12) {
        let g = explain_greedy(&host, &data.graph, &bb, t, &cfg.env).unwrap();
        let one = explain_best_of_k(&host, &data.graph, &bb, t, &cfg.env, 1, 7).unwrap();
        assert_eq!(one, g);
        let k = explain_best_of_k(&host, &data.graph, &bb, t, &cfg.env, 8, 7).unwrap();
        assert_eq!(
            k,
            explain_best_of_k(&host, &data.graph, &bb, t, &cfg.env, 8, 7).unwrap()
        );
        assert!(k.found || !g.found, "target {t}");
        if g.found {
            assert!(
                k.size() <= g.size(),
                "target {t}: {} > {}",
                k.size(),
                g.size()
            );
            greedy_total += g.size();
            best_total += k.size();
        }
        let gb = explain_greedy(&untrained_burn, &data.graph, &bb, t, &cfg.env).unwrap();
        let kb = explain_best_of_k(&untrained_burn, &data.graph, &bb, t, &cfg.env, 8, 7).unwrap();
        assert!(kb.found || !gb.found, "target {t}");
        if gb.found {
            assert!(kb.size() <= gb.size(), "target {t}");
        }
    }
    println!("untrained policy, 12 targets: greedy edits {greedy_total}, best of 8 {best_total}");

    // Fine-tuning a policy per target (`inductive-fine-tuned`) starts from its greedy episode:
    // it never loses a counterfactual nor gives a larger one, on either kernel, and is
    // deterministic. The untrained network is the start (it misses most targets, so the
    // fine-tuning episodes run).
    let mut tune = cfg.clone();
    (tune.train.episodes, tune.train.gamma) = (10, 0.6);
    let mut improved = 0;
    for &t in test.iter().take(8) {
        let g = explain_greedy(&untrained_burn, &data.graph, &bb, t, &cfg.env).unwrap();
        let from = |kernel| {
            let c = InduceConfig {
                kernel,
                ..tune.clone()
            };
            explain_transductive_from(&data.graph, &bb, t, &c, Some(&untrained), &dev).unwrap()
        };
        let f = from(Kernel::Host);
        assert_eq!(f, from(Kernel::Host), "target {t}");
        let fb = from(Kernel::Burn);
        for e in [&f, &fb] {
            assert!(e.found || !g.found, "target {t}");
            if g.found {
                assert!(e.size() <= g.size(), "target {t}");
            }
        }
        improved += usize::from(f.found && (!g.found || f.size() < g.size()));
    }
    println!("fine-tuning improved {improved} of 8 untrained greedy explanations");

    // The policy's greedy episode during the transductive search (`greedy_every`) never makes
    // the result worse: the sampled episodes and updates are the same with it, on either kernel.
    let mut helped = 0;
    for &t in test.iter().take(8) {
        let run = |kernel, greedy_every| {
            let mut c = InduceConfig {
                kernel,
                ..tune.clone()
            };
            c.train.greedy_every = greedy_every;
            induce_rl::explain_transductive(&data.graph, &bb, t, &c, &dev).unwrap()
        };
        for kernel in [Kernel::Host, Kernel::Burn] {
            let (plain, with) = (run(kernel, 0), run(kernel, 3));
            assert!(with.found || !plain.found, "target {t}");
            if plain.found {
                assert!(with.size() <= plain.size(), "target {t}");
            }
            helped += usize::from(with.found && (!plain.found || with.size() < plain.size()));
        }
    }
    println!("the greedy episodes improved {helped} of 16 transductive explanations");
    assert!(matches!(
        explain_best_of_k(&host, &data.graph, &bb, test[0], &cfg.env, 0, 7),
        Err(RlError::InvalidConfig(_))
    ));

    // Zero episodes is a typed error, not a panic or a silently untrained policy.
    let mut zero = cfg.clone();
    zero.train.episodes = 0;
    assert!(matches!(
        train_inductive(&data.graph, &bb, &train, &zero, &dev, |_| {}),
        Err(RlError::InvalidConfig(_))
    ));
    assert!(matches!(
        induce_rl::explain_transductive(&data.graph, &bb, test[0], &zero, &dev),
        Err(RlError::InvalidConfig(_))
    ));
}

/// Training interrupted after any epoch and continued from its checkpoint returns exactly the
/// policy of an uninterrupted run; a checkpoint of another run is refused.
#[test]
fn checkpointed_training_resumes_to_the_uninterrupted_policy() {
    use induce_models::policy::host::HostPolicy;
    let dev = test_device().unwrap();
    let data = SyntheticKind::TreeCycles.generate(42).unwrap();
    let (gcn, _) = train_gcn(&data, &GcnTrainingConfig::new(GcnConfig::new(10, 2)), &dev).unwrap();
    let bb = GcnBlackBox::new(gcn, &dev);
    let mut cfg = InduceConfig::default();
    (cfg.train.episodes, cfg.train.batch_size) = (5, 8);
    let train: Vec<u32> = targets(&data, &bb, &data.split.train, cfg.env.hops)
        .into_iter()
        .take(40)
        .collect();
    assert!(train.len() >= 20, "{}", train.len());
    let params = |p: &induce_models::Policy| HostPolicy::from_policy(p).params;
    let whole = train_inductive(&data.graph, &bb, &train, &cfg, &dev, |_| {}).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("state.json");
    // "Killed" after epoch 2 (a panic in the progress callback, after the checkpoint).
    let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        train_inductive_checkpointed(&data.graph, &bb, &train, &cfg, &dev, &ck, |s| {
            assert!(s.epoch < 2, "killed");
        })
    }));
    assert!(killed.is_err());
    assert!(ck.is_file());
    let mut epochs = Vec::new();
    let resumed = train_inductive_checkpointed(&data.graph, &bb, &train, &cfg, &dev, &ck, |s| {
        epochs.push(s.epoch)
    })
    .unwrap();
    assert_eq!(
        epochs,
        vec![3, 4],
        "continues after the last finished epoch"
    );
    assert_eq!(params(&resumed), params(&whole));

    // Another configuration or target list cannot continue this checkpoint.
    let mut other = cfg.clone();
    other.train.lr = 1e-3;
    let e = train_inductive_checkpointed(&data.graph, &bb, &train, &other, &dev, &ck, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("another configuration"), "{e}");
    let e = train_inductive_checkpointed(&data.graph, &bb, &train[1..], &cfg, &dev, &ck, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("state.json"), "{e}");
    std::fs::write(&ck, b"{\"epochs\": 1").unwrap();
    let e = train_inductive_checkpointed(&data.graph, &bb, &train, &cfg, &dev, &ck, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a training checkpoint"), "{e}");
}
