//! Inductive inference for many targets at once: every target's episode advances one step per
//! round of the loop, and the policy scores the current states of all unfinished episodes in
//! one call ([`Actor::log_probs_batch`]: one block-diagonal batch on the Burn kernel, so a GPU
//! pays its launch overhead once per step instead of once per target and step).
//!
//! ```text
//!  targets   a   b   c          step 1: score {a, b, c} together, step each on a host thread
//!  step 1    ●   ●   ●          step 2: c has flipped (or spent its budget): score {a, b}
//!  step 2    ●   ●   ✓          ...
//!  step 3    ✓   ●              then the sampled rounds of best-of-k, for the targets whose
//!  step 4        ✓              best counterfactual is still larger than one edit
//! ```
//!
//! The results equal [`crate::induce::explain_best_of_k`] target by target: each target keeps
//! its own random stream (seeded from the search seed and its id, as there), and a batch's
//! scores equal each episode's own (the block-diagonal rows do not mix).

use rand::SeedableRng;
use rand::rngs::StdRng;

use induce_models::black_box::batched::VerdictBatch;

use crate::env::Episode;
use crate::error::{Result, RlError};
use crate::explanation::Explanation;
use crate::kernel::{Actor, KernelPolicy, gumbel_perturbed, sample_at};
use crate::lookahead::Widening;
use crate::profile::{self, Count, Phase};

/// How [`best_of_k`] searches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchConfig {
    /// Episodes per target: the greedy one and `samples − 1` sampled ones (1: greedy only;
    /// 0 is an error).
    pub samples: usize,
    /// Seed of the sampled episodes (mixed with each target's id).
    pub seed: u64,
    /// Host threads that step the episodes (and, for the host kernel, score them).
    pub threads: usize,
    /// The greedy episode looks ahead over the policy's `lookahead` best proposals at each step,
    /// each judged by the black box ([`crate::lookahead`]); 0 or 1: the policy's argmax.
    pub lookahead: usize,
    /// How far that look-ahead reaches past the policy's `lookahead` best proposals.
    pub widen: Widening,
    /// The sampled episodes' temperature ([`InferenceConfig::temperature`](crate::InduceConfig):
    /// 1, the policy's own distribution).
    pub temperature: f32,
}

impl SearchConfig {
    /// Greedy inference (one episode per target) on `threads` host threads.
    pub fn greedy(threads: usize) -> Self {
        Self {
            samples: 1,
            seed: 0,
            threads,
            lookahead: 0,
            widen: Widening::Fixed,
            temperature: 1.0,
        }
    }
}

/// One target's search: its episode, the policy's cache for it, its random stream and the
/// best counterfactual so far.
struct Target<'g, C> {
    ep: Episode<'g>,
    cache: C,
    rng: StdRng,
    greedy: Option<Explanation>,
    best: Option<Explanation>,
    /// The look-ahead's verdicts, built on its first use.
    look: Option<crate::lookahead::Lookahead<'g>>,
}

/// The random stream of `target`'s sampled episodes under `seed`.
pub(crate) fn target_rng(seed: u64, target: u32) -> StdRng {
    StdRng::seed_from_u64(seed ^ u64::from(target).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Best-of-k inference for every episode (built, not yet stepped) with `actor`: the greedy
/// episode of every target, then `samples − 1` rounds of sampled episodes for the targets whose
/// best counterfactual is larger than one edit. `finish` post-processes each counterfactual
/// found before it is compared (the minimality pass, or `Ok`). The smallest counterfactual
/// wins (the greedy one on ties); a target without any returns its greedy episode's
/// explanation. Results are in the episodes' order.
///
/// Errors: [`RlError::InvalidConfig`] for `samples = 0`, and the first error of the policy,
/// an episode step or `finish`.
pub fn best_of_k<'g, A: Actor>(
    actor: &A,
    episodes: Vec<Episode<'g>>,
    search: &SearchConfig,
    finish: &(dyn Fn(Explanation) -> Result<Explanation> + Sync),
) -> Result<Vec<Explanation>> {
    best_of_k_with(actor, episodes, search, finish, None)
}

/// [`best_of_k`] with the black box's verdicts of every round taken in one batched call
/// (`verdicts`, e.g. the Burn GCN on a GPU: [`BlackBox::batched`](induce_models::BlackBox)):
/// each round's actions are applied first ([`Episode::step_deferred`]), then the model runs
/// once on all the edited graphs, then each episode completes its step. The same results as
/// [`best_of_k`] up to float rounding in the verdicts (the model's rows are computed on the
/// whole edited graph in another order). `None`, or an episode whose verdicts cannot be taken
/// by the caller ([`Episode::takes_verdicts`]): every step evaluates its own verdict.
pub fn best_of_k_with<'g, A: Actor>(
    actor: &A,
    episodes: Vec<Episode<'g>>,
    search: &SearchConfig,
    finish: &(dyn Fn(Explanation) -> Result<Explanation> + Sync),
    verdicts: Option<&VerdictBatch<'_>>,
) -> Result<Vec<Explanation>> {
    best_of_k_finishing(actor, episodes, search, &finish, verdicts)
}

/// What a search does with the counterfactuals it finds before comparing them: the minimality
/// pass, or nothing. Any `Fn(Explanation) -> Result<Explanation> + Sync` is one (applied to
/// each counterfactual on the search's host threads); an implementation may also take all of
/// a round's counterfactuals at once ([`Finish::finish_all`], e.g.
/// [`induce_explain::minimise_batched`] on a device).
///
/// ```
/// use induce_rl::batch::Finish;
/// use induce_rl::{Explanation, Result};
/// /// Keeps the first edit only.
/// struct First;
/// impl Finish for First {
///     fn finish(&self, mut e: Explanation) -> Result<Explanation> {
///         e.edits.truncate(1);
///         Ok(e)
///     }
/// }
/// let e = Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 0, found: true, original_label: 0, new_label: 1,
///     edits: vec![induce_rl::Edit::add(0, 1), induce_rl::Edit::add(0, 2)] };
/// assert_eq!(First.finish_all(vec![e], 2).unwrap()[0].edits.len(), 1);
/// ```
pub trait Finish: Sync {
    /// One counterfactual, finished.
    fn finish(&self, e: Explanation) -> Result<Explanation>;

    /// Every counterfactual of a round (in order; each found), finished, in the same order.
    /// By default [`Finish::finish`] on each, on `threads` host threads.
    fn finish_all(&self, es: Vec<Explanation>, threads: usize) -> Result<Vec<Explanation>> {
        finish_each(self, es, threads)
    }
}

/// [`Finish::finish`] on each counterfactual, on `threads` host threads (the default
/// [`Finish::finish_all`]).
pub fn finish_each<F: Finish + ?Sized>(
    finish: &F,
    es: Vec<Explanation>,
    threads: usize,
) -> Result<Vec<Explanation>> {
    let mut slots: Vec<Option<Explanation>> = es.into_iter().map(Some).collect();
    induce_explain::parallel::map_mut(&mut slots, threads, |e| {
        finish.finish(e.take().expect("each counterfactual is finished once"))
    })
}

impl<F: Fn(Explanation) -> Result<Explanation> + Sync> Finish for F {
    fn finish(&self, e: Explanation) -> Result<Explanation> {
        self(e)
    }
}

/// [`best_of_k_with`] with any [`Finish`]: each round's counterfactuals are finished together
/// ([`Finish::finish_all`]).
pub fn best_of_k_finishing<'g, A: Actor>(
    actor: &A,
    episodes: Vec<Episode<'g>>,
    search: &SearchConfig,
    finish: &dyn Finish,
    verdicts: Option<&VerdictBatch<'_>>,
) -> Result<Vec<Explanation>> {
    let verdicts = verdicts.filter(|_| episodes.iter().all(Episode::takes_verdicts));
    if search.samples == 0 {
        return Err(RlError::InvalidConfig(
            "best-of-k inference needs at least 1 sample (InduceConfig.inference_samples)".into(),
        ));
    }
    let threads = search.threads.max(1);
    let mut episodes = episodes;
    let caches = profile::time(Phase::Prepare, || {
        induce_explain::parallel::map_mut(&mut episodes, threads, |ep| {
            ep.reset();
            actor.prepare(ep)
        })
    })?;
    let mut targets: Vec<Target<'g, A::Cache>> = episodes
        .into_iter()
        .zip(caches)
        .map(|(ep, cache)| Target {
            rng: target_rng(search.seed, ep.target()),
            ep,
            cache,
            greedy: None,
            best: None,
            look: None,
        })
        .collect();
    let first = match search.lookahead {
        0 | 1 => Choice::Greedy,
        k => Choice::Lookahead(k, search.widen),
    };
    // Look-ahead verdicts are the episode's own judge's kind: batched verdicts do not apply.
    let first_verdicts = verdicts.filter(|_| first == Choice::Greedy);
    play(actor, &mut targets, threads, first, first_verdicts)?;
    {
        let all: Vec<&mut Target<'g, A::Cache>> = targets.iter_mut().collect();
        let found = finish_round(&all, finish, threads)?;
        for (t, e) in all.into_iter().zip(found) {
            if e.found {
                t.best = Some(e.clone());
            }
            t.greedy = Some(e);
        }
    }
    for _ in 1..search.samples {
        let mut open: Vec<&mut Target<'g, A::Cache>> = targets
            .iter_mut()
            .filter(|t| t.best.as_ref().is_none_or(|b| b.size() > 1))
            .collect();
        if open.is_empty() {
            break;
        }
        for t in open.iter_mut() {
            t.ep.reset();
        }
        let temp = search.temperature;
        let sampled = match first {
            Choice::Lookahead(k, widen) => Choice::SampledLookahead(k, widen, temp),
            _ => Choice::Sampled(temp),
        };
        let sampled_verdicts = verdicts.filter(|_| matches!(sampled, Choice::Sampled(_)));
        play_refs(actor, &mut open, threads, sampled, sampled_verdicts)?;
        let found = finish_round(&open, finish, threads)?;
        for (t, e) in open.into_iter().zip(found) {
            if e.found && t.best.as_ref().is_none_or(|b| e.size() < b.size()) {
                t.best = Some(e);
            }
        }
    }
    Ok(targets
        .into_iter()
        .map(|t| {
            t.best
                .or(t.greedy)
                .expect("every target played its greedy episode")
        })
        .collect())
}

/// The explanation of each target's episode, its counterfactuals finished together.
fn finish_round<C>(
    targets: &[&mut Target<'_, C>],
    finish: &dyn Finish,
    threads: usize,
) -> Result<Vec<Explanation>> {
    profile::time(Phase::Finish, || {
        let mut out: Vec<Explanation> = targets.iter().map(|t| t.ep.explanation()).collect();
        let at: Vec<usize> = (0..out.len()).filter(|&i| out[i].found).collect();
        let found: Vec<Explanation> = at.iter().map(|&i| out[i].clone()).collect();
        let done = finish.finish_all(found, threads)?;
        if done.len() != at.len() {
            return Err(RlError::InvalidConfig(format!(
                "the finishing step returned {} counterfactuals for {}",
                done.len(),
                at.len()
            )));
        }
        for (i, e) in at.into_iter().zip(done) {
            out[i] = e;
        }
        Ok(out)
    })
}

/// How [`play`] chooses each action.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Choice {
    /// The most probable candidate, the first on ties ([`Actor::greedy_batch`]).
    Greedy,
    /// Sampled from the policy at a temperature, with the target's own random stream.
    Sampled(f32),
    /// The best of the policy's `k` most probable candidates by the black box's verdicts
    /// ([`crate::lookahead`]).
    Lookahead(usize, Widening),
    /// The best of `k` candidates sampled from the policy at a temperature without
    /// replacement (the tempered log-probabilities perturbed by Gumbel noise from the target's
    /// own random stream, then the `k` highest) by the black box's verdicts.
    SampledLookahead(usize, Widening, f32),
}

/// Plays every target's episode to its end in lockstep, choosing each action by `choice`.
fn play<'g, A: Actor>(
    actor: &A,
    targets: &mut [Target<'g, A::Cache>],
    threads: usize,
    choice: Choice,
    verdicts: Option<&VerdictBatch<'_>>,
) -> Result<()> {
    let mut refs: Vec<&mut Target<'g, A::Cache>> = targets.iter_mut().collect();
    play_refs(actor, &mut refs, threads, choice, verdicts)
}

/// [`play`] over borrowed targets.
fn play_refs<'g, A: Actor>(
    actor: &A,
    targets: &mut [&mut Target<'g, A::Cache>],
    threads: usize,
    choice: Choice,
    verdicts: Option<&VerdictBatch<'_>>,
) -> Result<()> {
    let mut rounds = crate::kernel::Rounds::default();
    loop {
        let mut active: Vec<&mut Target<'g, A::Cache>> = targets
            .iter_mut()
            .filter(|t| !t.ep.is_done())
            .map(|t| &mut **t)
            .collect();
        if active.is_empty() {
            return Ok(());
        }
        let states: Vec<(&Episode<'g>, &A::Cache)> =
            active.iter().map(|t| (&t.ep, &t.cache)).collect();
        profile::add(Count::Rounds, 1);
        profile::add(Count::States, states.len());
        // Each state's action, or the log-probabilities to sample it from.
        let decided: Vec<std::result::Result<usize, Vec<f32>>> =
            profile::time(Phase::Policy, || -> Result<_> {
                Ok(match choice {
                    Choice::Greedy => actor
                        .greedy_round(&mut rounds, &states, threads)?
                        .into_iter()
                        .map(Ok)
                        .collect(),
                    Choice::Sampled(_) | Choice::Lookahead(..) | Choice::SampledLookahead(..) => {
                        actor
                            .log_probs_round(&mut rounds, &states, threads)?
                            .into_iter()
                            .map(Err)
                            .collect()
                    }
                })
            })?;
        drop(states);
        let mut moves: Vec<_> = active.drain(..).zip(decided).collect();
        let choose = |t: &mut Target<'g, A::Cache>,
                      decided: &std::result::Result<usize, Vec<f32>>|
         -> Result<usize> {
            Ok(match (decided, choice) {
                (Ok(a), _) => *a,
                (
                    Err(logp),
                    Choice::Lookahead(k, widen) | Choice::SampledLookahead(k, widen, _),
                ) => {
                    if t.look.is_none() {
                        let look = crate::lookahead::Lookahead::new(&t.ep)?.with_widening(widen);
                        t.look = Some(look);
                    }
                    let look = t.look.as_mut().expect("built above");
                    match choice {
                        Choice::SampledLookahead(.., temp) => {
                            let perturbed = gumbel_perturbed(logp, temp, &mut t.rng);
                            look.choose(&t.ep, &perturbed, k)?
                        }
                        _ => look.choose(&t.ep, logp, k)?,
                    }
                }
                (Err(logp), Choice::Sampled(temp)) => sample_at(logp, temp, &mut t.rng),
                (Err(logp), Choice::Greedy) => crate::kernel::argmax(logp),
            })
        };
        match verdicts {
            None => profile::time(Phase::Step, || {
                induce_explain::parallel::map_mut(&mut moves, threads, |(t, decided)| {
                    let a = choose(t, decided)?;
                    t.ep.step(a).map(|_| ())
                })
            })
            .map(drop)?,
            Some(batch) => {
                profile::time(Phase::Step, || {
                    induce_explain::parallel::map_mut(&mut moves, threads, |(t, decided)| {
                        let a = choose(t, decided)?;
                        t.ep.step_deferred(a)
                    })
                })?;
                let (toggles, rows): (Vec<_>, Vec<_>) = moves
                    .iter()
                    .map(|(t, _)| {
                        let (pairs, nodes) = t.ep.verdict_request();
                        (pairs, nodes.to_vec())
                    })
                    .unzip();
                let answers = profile::time(Phase::Verdict, || batch.log_probs(&toggles, &rows))?;
                let mut completed: Vec<_> = moves
                    .into_iter()
                    .map(|(t, _)| t)
                    .zip(answers.into_iter().map(Some))
                    .collect();
                profile::time(Phase::Step, || {
                    induce_explain::parallel::map_mut(&mut completed, threads, |(t, rows)| {
                        let rows = rows.take().expect("each answer is taken once");
                        t.ep.complete_step(rows).map(|_| ())
                    })
                })?;
            }
        }
        if let Some(line) = profile::progress_line() {
            eprintln!("{line}");
        }
    }
}

/// Best-of-k inference on either kernel (the loops above, over the policy's kernel).
impl KernelPolicy {
    /// Best-of-k inference for several episodes at once ([`crate::batch::best_of_k`]): the
    /// Burn kernel scores all of them in one block-diagonal batch per step.
    pub fn best_of_k(
        &self,
        episodes: Vec<Episode<'_>>,
        search: &SearchConfig,
        finish: &(dyn Fn(Explanation) -> Result<Explanation> + Sync),
    ) -> Result<Vec<Explanation>> {
        self.best_of_k_with(episodes, search, finish, None)
    }

    /// [`KernelPolicy::best_of_k`] with each round's black-box verdicts taken in one batched
    /// call ([`crate::batch::best_of_k_with`]).
    pub fn best_of_k_with(
        &self,
        episodes: Vec<Episode<'_>>,
        search: &SearchConfig,
        finish: &(dyn Fn(Explanation) -> Result<Explanation> + Sync),
        verdicts: Option<&induce_models::black_box::batched::VerdictBatch<'_>>,
    ) -> Result<Vec<Explanation>> {
        self.best_of_k_finishing(episodes, search, &finish, verdicts)
    }

    /// [`KernelPolicy::best_of_k_with`] with any [`Finish`], each round's
    /// counterfactuals finished together ([`crate::batch::best_of_k_finishing`]).
    pub fn best_of_k_finishing(
        &self,
        episodes: Vec<Episode<'_>>,
        search: &SearchConfig,
        finish: &dyn Finish,
        verdicts: Option<&induce_models::black_box::batched::VerdictBatch<'_>>,
    ) -> Result<Vec<Explanation>> {
        match self {
            Self::Host(p) => best_of_k_finishing(p, episodes, search, finish, verdicts),
            Self::Burn(p) => best_of_k_finishing(p, episodes, search, finish, verdicts),
        }
    }
}
