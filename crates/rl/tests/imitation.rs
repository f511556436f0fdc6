//! Imitation of the exact greedy search ([`Training::Imitation`]): the policy learns to agree
//! with the teacher, explains held-out nodes better than untrained, is reproducible, resumes
//! from a checkpoint to the uninterrupted policy (imitation and fine-tuning passes alike), and
//! trains on the Burn kernel as on the host's.

use induce_graph::Dataset;
use induce_graph::generators::SyntheticKind;
use induce_models::policy::host::HostPolicy;
use induce_models::testing::test_device;
use induce_models::{GcnBlackBox, GcnConfig, GcnTrainingConfig, train_gcn};
use induce_rl::metrics::fidelity;
use induce_rl::returns::Baseline;
use induce_rl::{
    EpochStats, ImitationConfig, InduceConfig, Kernel, KernelPolicy, TrainConfig, Training,
    explain_greedy, train_inductive, train_inductive_checkpointed,
};

mod common;
use common::targets;

/// Tree-Cycles with a trained GCN, and the paper's targets of its training and test splits.
fn setup() -> (Dataset, GcnBlackBox, Vec<u32>, Vec<u32>) {
    let dev = test_device().unwrap();
    let data = SyntheticKind::TreeCycles.generate(42).unwrap();
    let (gcn, _) = train_gcn(&data, &GcnTrainingConfig::new(GcnConfig::new(10, 2)), &dev).unwrap();
    let bb = GcnBlackBox::new(gcn, &dev);
    let train = targets(&data, &bb, &data.split.train, 4);
    let test = targets(&data, &bb, &data.split.test, 4);
    (data, bb, train, test)
}

fn imitation(episodes: usize, finetune: usize) -> InduceConfig {
    InduceConfig {
        train: TrainConfig {
            episodes,
            batch_size: 8,
            method: Training::Imitation,
            imitation: ImitationConfig {
                finetune,
                ..ImitationConfig::default()
            },
            ..TrainConfig::default()
        },
        ..InduceConfig::default()
    }
}

#[test]
fn imitation_learns_the_teachers_choices_and_beats_the_untrained_policy() {
    let dev = test_device().unwrap();
    let (data, bb, train, test) = setup();
    let train: Vec<u32> = train.into_iter().take(60).collect();
    let cfg = imitation(8, 0);
    let mut log: Vec<EpochStats> = Vec::new();
    let trained = train_inductive(&data.graph, &bb, &train, &cfg, &dev, |s| {
        log.push(s.clone())
    })
    .unwrap();
    for s in &log {
        println!(
            "pass {} flipped {:.2} edits {:.2} agreement {:?}",
            s.epoch, s.flipped, s.mean_edits, s.agreement
        );
    }
    assert_eq!(log.len(), 8);
    assert!(log.iter().all(|s| s.agreement.is_some()));
    let (first, last) = (log[0].agreement.unwrap(), log[7].agreement.unwrap());
    assert!(last > first, "agreement {first} -> {last}");
    let untrained = cfg.policy_config(10, 2).init(&dev);
    let run = |p: &induce_models::Policy| {
        let k = KernelPolicy::new(p, Kernel::Host, &dev);
        let e: Vec<_> = test
            .iter()
            .map(|&t| explain_greedy(&k, &data.graph, &bb, t, &cfg.env).unwrap())
            .collect();
        let sizes: Vec<usize> = e.iter().filter(|e| e.found).map(|e| e.size()).collect();
        let mean = sizes.iter().sum::<usize>() as f64 / sizes.len().max(1) as f64;
        (fidelity(&e).unwrap(), mean)
    };
    let ((f0, s0), (f1, s1)) = (run(&untrained), run(&trained));
    println!("untrained: fidelity {f0:.3} size {s0:.3}; imitation: fidelity {f1:.3} size {s1:.3}");
    assert!(
        f1 < f0 || (f1 == f0 && s1 < s0),
        "imitation ({f1}, {s1}) vs untrained ({f0}, {s0})"
    );

    // The same seed gives the same policy; another seed another.
    let params = |p: &induce_models::Policy| HostPolicy::from_policy(p).params;
    let again = train_inductive(&data.graph, &bb, &train, &cfg, &dev, |_| {}).unwrap();
    assert_eq!(params(&again), params(&trained));
}

/// Interrupted in an imitation pass or in a fine-tuning pass, training continues from its
/// checkpoint to exactly the uninterrupted policy.
#[test]
fn imitation_resumes_to_the_uninterrupted_policy() {
    resumes_to_the_uninterrupted_policy(imitation(3, 2));
}

/// The same with a curriculum over the first two passes and the greedy-rollout baseline in the
/// fine-tuning: both change the policy, and a resumed run still ends where an uninterrupted one
/// does (the curriculum's order is recomputed on resuming).
#[test]
fn curriculum_and_greedy_baseline_resume_to_the_uninterrupted_policy() {
    let mut cfg = imitation(3, 2);
    cfg.train.imitation.curriculum = 2;
    cfg.train.baseline = Baseline::Greedy;
    let dev = test_device().unwrap();
    let (data, bb, train, _) = setup();
    let train: Vec<u32> = train.into_iter().take(24).collect();
    let params = |c: &InduceConfig| {
        HostPolicy::from_policy(
            &train_inductive(&data.graph, &bb, &train, c, &dev, |_| {}).unwrap(),
        )
        .params
    };
    let plain = params(&imitation(3, 2));
    let mut curriculum = imitation(3, 2);
    curriculum.train.imitation.curriculum = 2;
    let mut greedy = imitation(3, 2);
    greedy.train.baseline = Baseline::Greedy;
    assert_ne!(
        params(&curriculum),
        plain,
        "the curriculum changes the passes"
    );
    assert_ne!(
        params(&greedy),
        plain,
        "the baseline changes the fine-tuning"
    );
    resumes_to_the_uninterrupted_policy(cfg);
}

fn resumes_to_the_uninterrupted_policy(cfg: InduceConfig) {
    let dev = test_device().unwrap();
    let (data, bb, train, _) = setup();
    let train: Vec<u32> = train.into_iter().take(24).collect();
    assert_eq!(cfg.training_passes(), 5);
    let params = |p: &induce_models::Policy| HostPolicy::from_policy(p).params;
    let mut passes = Vec::new();
    let whole = train_inductive(&data.graph, &bb, &train, &cfg, &dev, |s| {
        passes.push((s.epoch, s.agreement.is_some()))
    })
    .unwrap();
    assert_eq!(
        passes,
        vec![(0, true), (1, true), (2, true), (3, false), (4, false)],
        "three imitation passes, then two of REINFORCE"
    );
    for kill_after in [1, 3] {
        let dir = tempfile::tempdir().unwrap();
        let ck = dir.path().join("state.json");
        let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            train_inductive_checkpointed(&data.graph, &bb, &train, &cfg, &dev, &ck, |s| {
                assert!(s.epoch < kill_after, "killed");
            })
        }));
        assert!(killed.is_err() && ck.is_file());
        let mut epochs = Vec::new();
        let resumed =
            train_inductive_checkpointed(&data.graph, &bb, &train, &cfg, &dev, &ck, |s| {
                epochs.push(s.epoch)
            })
            .unwrap();
        assert_eq!(epochs, (kill_after + 1..5).collect::<Vec<_>>());
        assert_eq!(
            params(&resumed),
            params(&whole),
            "killed after pass {kill_after}"
        );
    }
}

/// The Burn kernel trains by imitation too, close to the host kernel's policy (the same
/// function; sums in another order).
#[test]
fn imitation_trains_on_the_burn_kernel_as_on_the_host() {
    let dev = test_device().unwrap();
    let (data, bb, train, _) = setup();
    let train: Vec<u32> = train.into_iter().take(8).collect();
    let host = imitation(1, 0);
    let burn = InduceConfig {
        kernel: Kernel::Burn,
        ..host.clone()
    };
    let params = |p: &induce_models::Policy| HostPolicy::from_policy(p).params;
    let a = params(&train_inductive(&data.graph, &bb, &train, &host, &dev, |_| {}).unwrap());
    let b = params(&train_inductive(&data.graph, &bb, &train, &burn, &dev, |_| {}).unwrap());
    let init = params(&host.policy_config(10, 2).init(&dev));
    assert_ne!(a, init, "one pass moves the parameters");
    let moved: f32 = a.iter().zip(&init).map(|(x, y)| (x - y).abs()).sum();
    let apart: f32 = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).sum();
    assert!(
        apart < 0.05 * moved,
        "host and Burn differ by {apart}, moved {moved}"
    );
}
