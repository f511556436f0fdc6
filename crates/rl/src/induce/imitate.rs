//! The imitation passes of [`Training::Imitation`](crate::imitation::Training): DAgger
//! rollouts labelled by the exact greedy teacher, one listwise update per batch (see
//! [`crate::imitation`]).

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::InduceConfig;
use super::epochs::{EpochStats, Pool};
use crate::env::Episode;
use crate::error::Result;
use crate::imitation::{Judged, curriculum_share, judged_set, teacher_turn, teacher_weights};
use crate::kernel::{Learner, argmax};
use crate::lookahead::Lookahead;

/// One DAgger rollout: its recorded steps, each step's teacher weights, and what it measured.
struct Rollout<S> {
    steps: Vec<S>,
    weights: Vec<Vec<(usize, f32)>>,
    agreed: usize,
    flipped: bool,
    reward: f32,
}

/// The random stream of imitation pass `epoch`: seeded from the run's seed and the pass alone,
/// so a run resumed at any pass draws what an uninterrupted one draws.
fn epoch_rng(seed: u64, epoch: usize) -> StdRng {
    StdRng::seed_from_u64(seed ^ 0x1a17_a710_0000_0000 ^ (epoch as u64).wrapping_mul(0x9e37_79b9))
}

/// Plays `ep` from its start: at each state the learner observes it, the teacher judges the
/// candidates ([`judged_set`]) and weighs them ([`teacher_weights`]), and the step takes the
/// teacher's choice with probability `share`, else the policy's argmax.
fn rollout<L: Learner>(
    learner: &L,
    ep: &mut Episode<'_>,
    rng: &mut StdRng,
    config: &InduceConfig,
    share: f32,
) -> Result<Rollout<L::Step>> {
    ep.reset();
    let cache = learner.prepare(ep)?;
    let mut teacher = Lookahead::new(ep)?;
    let mut out = Rollout {
        steps: Vec::new(),
        weights: Vec::new(),
        agreed: 0,
        flipped: false,
        reward: 0.0,
    };
    while !ep.is_done() {
        let (log_probs, mut step) = learner.observe(ep, &cache, false)?;
        let judged = judged_set(&log_probs, config.train.imitation.max_judged, rng)
            .into_iter()
            .map(|index| {
                let (flipped, margin) = teacher.verdict(ep, index)?;
                Ok(Judged {
                    index,
                    flipped,
                    margin,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let (best, weights) = teacher_weights(&judged, config.train.imitation.temperature);
        let mine = argmax(&log_probs);
        out.agreed += usize::from(as_good(&judged, mine, best));
        let action = if teacher_turn(share, rng) { best } else { mine };
        let reward = ep.step(action)?.reward;
        L::complete(&mut step, action, reward);
        out.reward += reward;
        out.steps.push(step);
        out.weights.push(weights);
    }
    out.flipped = ep.is_flipped();
    Ok(out)
}

/// Whether the policy's choice `mine` is as good as the teacher's `best` among `judged`: it
/// reaches the goal when `best` does, else it leaves no larger margin.
fn as_good(judged: &[Judged], mine: usize, best: usize) -> bool {
    let find = |i: usize| judged.iter().find(|j| j.index == i);
    match (find(mine), find(best)) {
        (Some(m), Some(b)) => (b.flipped && m.flipped) || (!b.flipped && m.margin <= b.margin),
        _ => mine == best,
    }
}

/// Imitation passes `first..config.episodes` over `pool` in batches of `config.batch_size`,
/// one listwise step ([`Learner::update_listwise`]) per batch at the imitation's learning rate.
/// The targets are shuffled every pass and each episode draws from its own seed, so the result
/// does not depend on the number of threads. `after_epoch(passes finished, learner)` runs
/// after each pass, before `progress`.
pub(super) fn imitate_epochs<L: Learner>(
    learner: &mut L,
    pool: &mut Pool<'_, '_>,
    config: &InduceConfig,
    first: usize,
    progress: &mut impl FnMut(&EpochStats),
    after_epoch: &mut impl FnMut(usize, &L) -> Result<()>,
) -> Result<()> {
    let curriculum = config.train.imitation.curriculum;
    // The targets easiest first (by their unedited margin; ties by pool order), when a
    // curriculum needs them.
    let easiest: Vec<usize> = if first < curriculum.min(config.train.episodes) {
        let margins = pool.margins(learner.threads())?;
        let mut by: Vec<usize> = (0..pool.len()).collect();
        by.sort_by(|&a, &b| margins[a].total_cmp(&margins[b]).then(a.cmp(&b)));
        by
    } else {
        (0..pool.len()).collect()
    };
    for epoch in first..config.train.episodes {
        let mut rng = epoch_rng(config.seed, epoch);
        let share = config
            .train
            .imitation
            .share_at(epoch, config.train.episodes);
        let mut order: Vec<usize> = if epoch < curriculum {
            easiest[..curriculum_share(pool.len(), epoch, curriculum)].to_vec()
        } else {
            (0..pool.len()).collect()
        };
        order.shuffle(&mut rng);
        let k = order.len() as f32;
        let (mut ret, mut flips, mut edits, mut agreed) = (0.0f32, 0usize, 0usize, 0usize);
        for batch in order.chunks(config.train.batch_size) {
            let seeds: Vec<u64> = batch.iter().map(|_| rng.random()).collect();
            let mut fresh: Vec<Episode<'_>> = Vec::new();
            let mut jobs = pool.batch(batch, &seeds, &mut fresh)?;
            let learner_ref = &*learner;
            let rolled = crate::parallel::map_mut(&mut jobs, learner.threads(), |(ep, seed)| {
                let mut rng = StdRng::seed_from_u64(*seed);
                rollout(learner_ref, ep, &mut rng, config, share)
            })?;
            drop(jobs);
            let (mut steps, mut weights) = (Vec::new(), Vec::new());
            for r in rolled {
                ret += r.reward;
                flips += usize::from(r.flipped);
                edits += r.steps.len();
                agreed += r.agreed;
                weights.extend(r.weights);
                steps.push(r.steps);
            }
            if !weights.is_empty() {
                learner.update_listwise(&steps, &weights, 0.0, config.train.imitation.lr)?;
            }
        }
        after_epoch(epoch + 1, learner)?;
        let agreement = Some(agreed as f32 / edits.max(1) as f32);
        progress(&EpochStats::of(epoch, k, (ret, flips, edits), agreement));
    }
    Ok(())
}
