//! Inductive REINFORCE training over many targets: [`train_inductive`] (and its resumable and
//! prepared-episode forms), the epoch loop for any kernel, and the training configuration checks.

use burn::tensor::Device;
use induce_graph::Graph;
use induce_models::{BlackBox, Kernel, Policy};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

pub use super::epochs::EpochStats;
use super::epochs::Pool;
use super::{InduceConfig, check_episodes};
use crate::env::{EnvConfig, Episode};
use crate::error::{Result, RlError};
use crate::imitation::Training;
use crate::kernel::burn::BurnLearner;
use crate::kernel::host::HostLearner;
use crate::kernel::{Learner, rollout_batch, rollout_batch_picking};
use crate::returns::batch_returns;
use crate::returns::{Baseline, greedy_advantages};
use crate::train_store::TrainStore;

/// Trains a policy inductively on `targets` (typically training-split nodes with a non-zero
/// label that the black box predicts correctly). `progress` is called after every epoch.
///
/// Targets whose neighbourhood offers no action are skipped. Deterministic for a given config on
/// the CPU backends.
pub fn train_inductive(
    graph: &Graph,
    black_box: &dyn BlackBox,
    targets: &[u32],
    config: &InduceConfig,
    device: &Device,
    progress: impl FnMut(&EpochStats),
) -> Result<Policy> {
    check_training(config)?;
    // Episodes are built per batch and dropped after it (memory O(batch), not O(targets): a
    // target's episode holds its neighbourhood's feature and state matrices, gigabytes over a
    // real graph's training split). A fresh episode equals a reset one, so the result is the
    // same as with prepared episodes.
    let usable = usable_targets(graph, black_box, targets, &config.env)?;
    let dims = (graph.features().dim(), black_box.num_classes());
    let pool = Pool::Lazy {
        graph,
        black_box,
        targets: usable,
        env: &config.env,
    };
    train_pool(pool, dims, config, device, progress)
}

/// The targets whose neighbourhood offers an action (the others are skipped by training).
fn usable_targets(
    graph: &Graph,
    black_box: &dyn BlackBox,
    targets: &[u32],
    env: &EnvConfig,
) -> Result<Vec<u32>> {
    if targets.is_empty() {
        return Err(RlError::InvalidConfig(
            "no training target: the list of training targets is empty".into(),
        ));
    }
    let mut usable = Vec::with_capacity(targets.len());
    for &t in targets {
        // The neighbourhood and its candidates only: the episodes themselves are built per
        // batch (an Amazon-Photo episode's first verdicts and estimates cost 0.2 s).
        if Episode::offers_action(graph, black_box, t, env)? {
            usable.push(t);
        }
    }
    if usable.is_empty() {
        return Err(RlError::InvalidConfig(format!(
            "no training target has a candidate action: none of the {} given (an isolated \
             node, or the edit types, allowed pairs, locked nodes or desired class leave \
             nothing to edit)",
            targets.len()
        )));
    }
    Ok(usable)
}

/// [`train_inductive`] that survives being killed: after every epoch its state (the policy's
/// parameters, Adam's moments and the epoch) is written atomically to `checkpoint`; started
/// again with the same `checkpoint`, graph, targets and config, it continues after the last
/// finished epoch and returns exactly the policy an uninterrupted run returns (the random
/// draws of the finished epochs are replayed, the rollouts use per-episode seeds). A checkpoint
/// of another configuration or target list is a typed error naming the file. The caller
/// removes the checkpoint once the trained policy is saved.
///
/// Needs the host kernel (the checkpoint holds the host kernel's Adam state): with
/// [`Kernel::Burn`] it is an error.
pub fn train_inductive_checkpointed(
    graph: &Graph,
    black_box: &dyn BlackBox,
    targets: &[u32],
    config: &InduceConfig,
    device: &Device,
    checkpoint: &std::path::Path,
    progress: impl FnMut(&EpochStats),
) -> Result<Policy> {
    if config.kernel != Kernel::Host {
        return Err(RlError::InvalidConfig(format!(
            "resumable training needs InduceConfig.kernel = host, got {}",
            config.kernel
        )));
    }
    check_training(config)?;
    let usable = usable_targets(graph, black_box, targets, &config.env)?;
    let dims = (graph.features().dim(), black_box.num_classes());
    let store = TrainStore {
        path: checkpoint,
        config,
        targets: usable.clone(),
    };
    let pool = Pool::Lazy {
        graph,
        black_box,
        targets: usable,
        env: &config.env,
    };
    let mut learner = HostLearner::new(
        &config.policy_config(dims.0, dims.1).init(device),
        crate::parallel::default_threads(),
    );
    let first = match store.load(learner.policy.num_params())? {
        Some(saved) => {
            learner.policy.params = saved.params;
            learner.adam = saved.adam;
            saved.epochs
        }
        None => 0,
    };
    train_passes(&mut learner, pool, config, first, progress, |epochs, l| {
        store.save(epochs, &l.policy, &l.adam)
    })?;
    Ok(learner.to_policy(device))
}

/// Rejects a training configuration that [`InduceConfig::validate`] refuses, or without
/// episodes or with empty batches.
fn check_training(config: &InduceConfig) -> Result<()> {
    config.validate()?;
    if config.train.batch_size == 0 {
        return Err(RlError::InvalidConfig(
            "InduceConfig.batch_size must be at least 1, got 0".into(),
        ));
    }
    check_episodes(config)
}

/// [`train_inductive`] on prepared episodes (e.g. on fan-out-capped neighbourhoods built with
/// [`Episode::with_subgraph`]); `dims` is `(feature_dim, num_classes)`.
pub fn train_on_episodes(
    episodes: &mut [Episode<'_>],
    dims: (usize, usize),
    config: &InduceConfig,
    device: &Device,
    progress: impl FnMut(&EpochStats),
) -> Result<Policy> {
    train_pool(Pool::Prepared(episodes), dims, config, device, progress)
}

/// Trains a fresh policy on `pool` with `config.kernel`.
fn train_pool(
    pool: Pool<'_, '_>,
    dims: (usize, usize),
    config: &InduceConfig,
    device: &Device,
    progress: impl FnMut(&EpochStats),
) -> Result<Policy> {
    check_training(config)?;
    let init = config.policy_config(dims.0, dims.1).init(device);
    match config.kernel {
        Kernel::Host => {
            let threads = crate::parallel::default_threads();
            let mut learner = HostLearner::new(&init, threads);
            train_passes(&mut learner, pool, config, 0, progress, no_checkpoint)?;
            Ok(learner.to_policy(device))
        }
        Kernel::Burn => {
            let mut learner = BurnLearner::new(&init, device);
            train_passes(&mut learner, pool, config, 0, progress, no_checkpoint)?;
            Ok(learner.to_policy(device))
        }
    }
}

/// Every training pass of `config` from pass `first` on: [`train_epochs`] (REINFORCE) or,
/// with [`Training::Imitation`], the imitation passes ([`super::imitate::imitate_epochs`])
/// and then the REINFORCE fine-tuning passes. `after_epoch` and `progress` count the passes
/// of both phases in one sequence.
fn train_passes<L: Learner>(
    learner: &mut L,
    mut pool: Pool<'_, '_>,
    config: &InduceConfig,
    first: usize,
    mut progress: impl FnMut(&EpochStats),
    mut after_epoch: impl FnMut(usize, &L) -> Result<()>,
) -> Result<()> {
    if config.train.method == Training::Reinforce {
        return train_epochs(learner, &mut pool, config, first, progress, after_epoch);
    }
    let n = config.train.episodes;
    if first < n {
        super::imitate::imitate_epochs(
            learner,
            &mut pool,
            config,
            first,
            &mut progress,
            &mut after_epoch,
        )?;
    }
    if config.train.imitation.finetune == 0 {
        return Ok(());
    }
    let mut finetune = config.clone();
    finetune.train.episodes = config.train.imitation.finetune;
    finetune.train.method = Training::Reinforce;
    train_epochs(
        learner,
        &mut pool,
        &finetune,
        first.saturating_sub(n),
        |s| {
            progress(&EpochStats {
                epoch: s.epoch + n,
                ..s.clone()
            })
        },
        |e, l| after_epoch(e + n, l),
    )
}

/// [`train_epochs`]' `after_epoch` of a run that keeps no checkpoint.
fn no_checkpoint<L>(_: usize, _: &L) -> Result<()> {
    Ok(())
}

/// The inductive training loop, for any kernel: epochs `first..config.episodes` over `pool`
/// in batches of `config.batch_size`, one policy-gradient step per batch. The order of the
/// targets is shuffled every epoch and each episode samples with its own seed (drawn in batch
/// order), so the rollouts of a batch run on any number of threads with the same result, and a
/// run resumed at epoch `first` replays the finished epochs' draws without their rollouts.
/// `after_epoch(epochs finished, learner)` runs after each epoch, before `progress`.
fn train_epochs<L: Learner>(
    learner: &mut L,
    pool: &mut Pool<'_, '_>,
    config: &InduceConfig,
    first: usize,
    mut progress: impl FnMut(&EpochStats),
    mut after_epoch: impl FnMut(usize, &L) -> Result<()>,
) -> Result<()> {
    if pool.len() == 0 {
        return Err(RlError::InvalidConfig(
            "no training target has a candidate action".into(),
        ));
    }
    let mut rng = StdRng::seed_from_u64(config.seed);
    let mut order: Vec<usize> = (0..pool.len()).collect();
    let k = pool.len() as f32;
    // Replay the finished epochs' draws: the shuffle and one seed per episode.
    for _ in 0..first {
        order.shuffle(&mut rng);
        for _ in 0..order.len() {
            let _: u64 = rng.random();
        }
    }
    for epoch in first..config.train.episodes {
        order.shuffle(&mut rng);
        let (mut ret, mut flips, mut edits) = (0.0f32, 0usize, 0usize);
        for batch in order.chunks(config.train.batch_size) {
            let seeds: Vec<u64> = batch.iter().map(|_| rng.random()).collect();
            let mut fresh: Vec<Episode<'_>> = Vec::new();
            let mut jobs = pool.batch(batch, &seeds, &mut fresh)?;
            let mut rngs: Vec<StdRng> = jobs
                .iter()
                .map(|(_, s)| StdRng::seed_from_u64(*s))
                .collect();
            let mut rolls: Vec<(&mut Episode<'_>, &mut StdRng)> = jobs
                .iter_mut()
                .zip(rngs.iter_mut())
                .map(|((ep, _), rng)| (&mut **ep, rng))
                .collect();
            // The greedy baseline's episodes first, with the parameters the samples use.
            let greedy = match config.train.baseline {
                Baseline::Batch => None,
                Baseline::Greedy => Some(
                    rollout_batch_picking(&*learner, &mut rolls, false, true)?
                        .iter()
                        .map(|steps| steps.iter().map(L::reward).sum::<f32>())
                        .collect::<Vec<f32>>(),
                ),
            };
            let rolled = rollout_batch(&*learner, &mut rolls, false)?;
            let flipped: Vec<bool> = rolls.iter().map(|(ep, _)| ep.is_flipped()).collect();
            drop(rolls);
            let mut batch_steps = Vec::with_capacity(rolled.len());
            for (steps, flipped) in rolled.into_iter().zip(flipped) {
                ret += steps.iter().map(L::reward).sum::<f32>();
                flips += usize::from(flipped);
                edits += steps.len();
                batch_steps.push(steps);
            }
            let returns = match &greedy {
                None => batch_returns(&batch_steps, L::reward, config)?,
                Some(greedy) => {
                    let rewards: Vec<Vec<f32>> = (batch_steps.iter())
                        .map(|steps| steps.iter().map(L::reward).collect())
                        .collect();
                    greedy_advantages(&rewards, greedy, config.train.return_std_floor)?
                }
            };
            if !returns.is_empty() {
                learner.update(&batch_steps, &returns, config)?;
            }
        }
        after_epoch(epoch + 1, learner)?;
        progress(&EpochStats::of(epoch, k, (ret, flips, edits), None));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field() {
        let ok = InduceConfig::default();
        assert!(ok.validate().is_ok());
        let with = |f: fn(&mut InduceConfig)| {
            let mut c = ok.clone();
            f(&mut c);
            c
        };
        for (c, field) in [
            (with(|c| c.train.lr = 0.0), "lr"),
            (with(|c| c.train.lr = f64::NAN), "lr"),
            (with(|c| c.train.gamma = 1.5), "gamma"),
            (
                InduceConfig {
                    network: crate::NetworkConfig {
                        hidden: 0,
                        ..ok.network
                    },
                    ..ok.clone()
                },
                "hidden",
            ),
            (with(|c| c.train.return_std_floor = 0.0), "return_std_floor"),
            (
                InduceConfig {
                    inference: crate::InferenceConfig {
                        samples: 0,
                        ..ok.inference.clone()
                    },
                    ..ok.clone()
                },
                "inference_samples",
            ),
        ] {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(&format!("InduceConfig.{field} ")), "{e}");
        }
        let zero = with(|c| c.train.batch_size = 0);
        assert!(
            check_training(&zero)
                .unwrap_err()
                .to_string()
                .contains("batch_size")
        );
    }
}
