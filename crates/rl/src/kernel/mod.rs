//! The seam between InduCE's loops and the policy network's implementations.
//!
//! Rollouts, inductive training, the transductive search, greedy and best-of-k inference are
//! written once, in [`crate::induce`], over two traits:
//!
//! * [`Actor`]: `log Π(· | S)` at an episode's current state (forward passes only);
//! * [`Learner`]: an actor that also records what its gradient needs while rolling out, and
//!   takes one policy-gradient step from a batch of episodes.
//!
//! Each has one implementation per [`Kernel`]: [`host`] (the fused CPU kernel of
//! [`induce_models::policy::host`]) and [`burn`] (Burn tensors on any device, autodiff for the
//! gradient). [`KernelPolicy`] is a trained policy on a chosen kernel, for inference.
//!
//! ```text
//!  induce.rs: train_inductive · explain_transductive · best_of_k · greedy
//!                 │ generic over L: Learner / A: Actor
//!        ┌────────┴────────┐
//!   host::HostLearner   burn::BurnLearner       (one match on Kernel picks one)
//!   (HostPolicy, Adam)  (Burn Policy, autodiff, Adam)
//! ```

pub mod burn;
mod burn_cache;
pub mod host;
mod resident;

use ::burn::tensor::Device;
use induce_models::{Kernel, Policy};
use rand::Rng;
use rand::rngs::StdRng;

use crate::config::InduceConfig;
use crate::env::Episode;
use crate::error::Result;

/// The policy's forward pass on one kernel.
pub trait Actor: Sync {
    /// What every state of one episode shares (the host kernel: the first layer's product over
    /// the episode's fixed features), computed once per rollout by [`Actor::prepare`].
    type Cache: Send + Sync;

    /// The cache of `ep` (after a reset; the features it reads do not change with edits).
    ///
    /// Errors when the episode's state does not fit the policy.
    fn prepare(&self, ep: &Episode<'_>) -> Result<Self::Cache>;

    /// `log Π(· | S)` at the episode's current state.
    ///
    /// # Shapes
    /// - output: `[C]` (one entry per candidate action, in [`Episode::candidates`] order)
    fn log_probs(&self, ep: &Episode<'_>, cache: &Self::Cache) -> Result<Vec<f32>>;

    /// [`Actor::log_probs`] at the current states of several episodes, in their order. The
    /// default scores them one by one on up to `threads` threads; the Burn kernel packs them
    /// into one block-diagonal batch (one launch sequence for all of them). Each result equals
    /// [`Actor::log_probs`] of its episode.
    ///
    /// # Shapes
    /// - output: `[B][C_b]`
    fn log_probs_batch(
        &self,
        states: &[(&Episode<'_>, &Self::Cache)],
        threads: usize,
    ) -> Result<Vec<Vec<f32>>> {
        induce_explain::parallel::map(states, threads, |(ep, cache)| self.log_probs(ep, cache))
    }

    /// The greedy action ([`argmax`] of [`Actor::log_probs`]: the most probable candidate, the
    /// first on ties) at the current states of several episodes, in their order. The default
    /// takes it from [`Actor::log_probs_batch`]; the Burn kernel on a GPU finds it on the
    /// device and downloads one index per state.
    ///
    /// # Shapes
    /// - output: `[B]`
    fn greedy_batch(
        &self,
        states: &[(&Episode<'_>, &Self::Cache)],
        threads: usize,
    ) -> Result<Vec<usize>> {
        greedy_from_log_probs(self, states, threads)
    }

    /// [`Actor::greedy_batch`] in a round of a lockstep play: `rounds` is the same for every
    /// round of one play, in which each state is either new or the same episode (the same
    /// [`Episode`] value, not moved) as in an earlier round with more edits made since. An actor
    /// may keep its batch there between rounds (the Burn kernel on its device:
    /// [`burn::BurnOptions::resident`]). The default is [`Actor::greedy_batch`]. The same
    /// choices either way.
    ///
    /// # Shapes
    /// - output: `[B]`
    fn greedy_round(
        &self,
        rounds: &mut Rounds,
        states: &[(&Episode<'_>, &Self::Cache)],
        threads: usize,
    ) -> Result<Vec<usize>> {
        let _ = rounds;
        self.greedy_batch(states, threads)
    }

    /// [`Actor::log_probs_batch`] in a round of a lockstep play (see [`Actor::greedy_round`]).
    /// The default is [`Actor::log_probs_batch`].
    ///
    /// # Shapes
    /// - output: `[B][C_b]`
    fn log_probs_round(
        &self,
        rounds: &mut Rounds,
        states: &[(&Episode<'_>, &Self::Cache)],
        threads: usize,
    ) -> Result<Vec<Vec<f32>>> {
        let _ = rounds;
        self.log_probs_batch(states, threads)
    }
}

/// Checks that `ep`'s state rows are as wide as the policy's input (`input_dim`): a policy
/// built or trained for other node features or another black box (a different number of
/// classes) is a typed [`induce_models::ModelError::DimensionMismatch`], never a panic or a
/// silently misread state. Every [`Actor::prepare`] calls it.
pub fn check_state_fits(input_dim: usize, ep: &Episode<'_>) -> Result<()> {
    let got = ep.state_width();
    if got == input_dim {
        return Ok(());
    }
    let features = ep.graph_features().dim();
    Err(induce_models::ModelError::DimensionMismatch {
        what: format!(
            "state width of target {} ({} node features + 2 + {} classes of the black box) \
             against the policy's input width (a policy must be used with the features and \
             black box it was built for)",
            ep.target(),
            features,
            got - features - 2,
        ),
        expected: input_dim,
        got,
    }
    .into())
}

/// What an [`Actor`] keeps between the rounds of one lockstep play ([`Actor::greedy_round`],
/// [`Actor::log_probs_round`]): the Burn kernel's batch on the device. Start every play with a
/// new one ([`Rounds::default`]).
#[derive(Default)]
pub struct Rounds {
    kept: Option<Box<dyn std::any::Any + Send>>,
    /// The kept batch does not apply to this play's states (asked once, then not again).
    off: bool,
    /// Batches packed whole in this play.
    packs: usize,
}

impl Rounds {
    /// How many times the actor packed and uploaded its whole batch in this play (0 for an
    /// actor that keeps nothing).
    pub fn packs(&self) -> usize {
        self.packs
    }
}

impl std::fmt::Debug for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds")
            .field("kept", &self.kept.is_some())
            .field("off", &self.off)
            .field("packs", &self.packs)
            .finish()
    }
}

/// [`Actor::greedy_round`] from [`Actor::log_probs_round`] (the first largest).
pub(crate) fn greedy_from_log_probs_round<A: Actor + ?Sized>(
    actor: &A,
    rounds: &mut Rounds,
    states: &[(&Episode<'_>, &A::Cache)],
    threads: usize,
) -> Result<Vec<usize>> {
    Ok(actor
        .log_probs_round(rounds, states, threads)?
        .iter()
        .map(|logp| argmax(logp))
        .collect())
}

/// [`Actor::greedy_batch`] from the log-probabilities (its default).
pub(crate) fn greedy_from_log_probs<A: Actor + ?Sized>(
    actor: &A,
    states: &[(&Episode<'_>, &A::Cache)],
    threads: usize,
) -> Result<Vec<usize>> {
    Ok(actor
        .log_probs_batch(states, threads)?
        .iter()
        .map(|logp| argmax(logp))
        .collect())
}

/// An [`Actor`] that learns: it records each visited state of a rollout for its gradient and
/// takes one REINFORCE step from a batch of rolled-out episodes (the loss of
/// [`crate::induce`]'s module docs).
pub trait Learner: Actor {
    /// One visited state, kept for the gradient.
    type Step: Send;

    /// Threads the rollouts of a batch run on (results do not depend on it).
    fn threads(&self) -> usize;

    /// `log Π(· | S)` at the current state and the record the gradient needs of it (its action
    /// and reward are filled in by [`Learner::complete`]). `keep_trace`: keep the forward pass
    /// for the backward pass (else it is recomputed; same gradient).
    fn observe(
        &self,
        ep: &Episode<'_>,
        cache: &Self::Cache,
        keep_trace: bool,
    ) -> Result<(Vec<f32>, Self::Step)>;

    /// [`Learner::observe`] at the current states of several episodes, in their order. The
    /// default observes them one by one on [`Learner::threads`] threads; the Burn kernel
    /// scores them in one block-diagonal batch.
    fn observe_batch(
        &self,
        states: &[(&Episode<'_>, &Self::Cache)],
        keep_trace: bool,
    ) -> Result<Vec<(Vec<f32>, Self::Step)>> {
        induce_explain::parallel::map(states, self.threads(), |(ep, cache)| {
            self.observe(ep, cache, keep_trace)
        })
    }

    /// Fills in the action taken and the reward received at a recorded step.
    fn complete(step: &mut Self::Step, action: usize, reward: f32);

    /// The reward received at a recorded step.
    fn reward(step: &Self::Step) -> f32;

    /// One policy-gradient step from a batch of episodes, given each step's normalised return
    /// (`returns`, flattened in step order); `scale` is `1 / episodes`.
    fn update(
        &mut self,
        episodes: &[Vec<Self::Step>],
        returns: &[f32],
        config: &InduceConfig,
    ) -> Result<()>;

    /// One step of the listwise loss `J = −(1/B) Σ_episodes Σ_t [Σ_a w_{t,a} log Π(a | S_t) +
    /// η · H(Π(·|S_t))]` with Adam at learning rate `lr`: with each step's weights a teacher's
    /// distribution over its candidates, the cross-entropy of imitation
    /// ([`crate::imitation`]). `weights` holds one list of `(candidate, weight)` per step,
    /// flattened in episode then step order.
    fn update_listwise(
        &mut self,
        episodes: &[Vec<Self::Step>],
        weights: &[Vec<(usize, f32)>],
        entropy_coef: f32,
        lr: f64,
    ) -> Result<()>;

    /// The learned policy as a Burn module on `device`.
    fn to_policy(&self, device: &Device) -> Policy;
}

/// A trained policy on one kernel, for inference ([`crate::induce::explain_greedy`],
/// [`crate::induce::explain_best_of_k`], [`crate::InduceExplainer`]).
#[derive(Debug, Clone)]
pub enum KernelPolicy {
    /// The host kernel's copy of the parameters.
    Host(induce_models::policy::host::HostPolicy),
    /// The Burn module on its device.
    Burn(burn::BurnActor),
}

impl KernelPolicy {
    /// `policy` on `kernel` (Burn runs on `device`).
    pub fn new(policy: &Policy, kernel: Kernel, device: &Device) -> Self {
        match kernel {
            Kernel::Host => {
                Self::Host(induce_models::policy::host::HostPolicy::from_policy(policy))
            }
            Kernel::Burn => Self::Burn(burn::BurnActor::new(policy, device)),
        }
    }

    /// The kernel it runs on.
    pub fn kernel(&self) -> Kernel {
        match self {
            Self::Host(_) => Kernel::Host,
            Self::Burn(_) => Kernel::Burn,
        }
    }

    /// `log Π(· | S)` for the states of one episode: what the states share is computed here,
    /// once.
    pub fn bind<'s>(&'s self, ep: &Episode<'_>) -> Result<Scorer<'s>> {
        match self {
            Self::Host(p) => bind(p, ep),
            Self::Burn(p) => bind(p, ep),
        }
    }

    /// Plays one greedy round of `ep` (a lockstep play of one, as [`crate::batch`] plays a
    /// batch) and drops the choice: on the Burn kernel this launches, and so compiles, the
    /// policy's kernels of an explanation round before a batch needs them, and with the GPU
    /// layout ([`burn::BurnOptions::graph_product`]) computes the cached graph-wide feature
    /// product the batch then shares; nothing else is kept, so the batch's results are the
    /// same with or without it. Nothing on the host kernel, or for an episode already over.
    ///
    /// Errors: the policy's.
    pub fn warm_up(&self, ep: &Episode<'_>) -> Result<()> {
        match self {
            Self::Host(_) => Ok(()),
            Self::Burn(_) if ep.is_done() => Ok(()),
            Self::Burn(p) => {
                let cache = p.prepare(ep)?;
                let mut rounds = Rounds::default();
                p.greedy_round(&mut rounds, &[(ep, &cache)], 1).map(drop)
            }
        }
    }
}

/// `log Π(· | S)` of an episode's current state, bound to one episode by
/// [`KernelPolicy::bind`] (or [`bind`]).
pub type Scorer<'s> = Box<dyn Fn(&Episode<'_>) -> Result<Vec<f32>> + Sync + 's>;

/// Binds any actor to an episode.
pub fn bind<'s, A: Actor>(actor: &'s A, ep: &Episode<'_>) -> Result<Scorer<'s>> {
    let cache = actor.prepare(ep)?;
    Ok(Box::new(move |ep: &Episode<'_>| {
        actor.log_probs(ep, &cache)
    }))
}

/// Weight of the black box's first-order estimates in the policy's scores under
/// [`StateLayout::Estimated`](crate::StateLayout::Estimated): each candidate's score is the
/// network's plus `PRIOR_WEIGHT · e` ([`Candidates::estimate`](crate::Candidates::estimate)),
/// so an untrained policy's argmax is the estimate's (`greedy --shortlist 1`'s choice) and
/// training learns the correction on top. Not in the paper.
pub const PRIOR_WEIGHT: f32 = 1.0;

/// `log_softmax(scores + PRIOR_WEIGHT · e)` of `ep`'s candidates, from their scores or their
/// log-probabilities (the same, softmax being shift-invariant): the policy's distribution with
/// the estimated layout's prior ([`PRIOR_WEIGHT`]); `log_softmax(scores)` without it.
///
/// # Shapes
/// - scores: `[C]`; output: `[C]`
pub(crate) fn with_prior(ep: &Episode<'_>, scores: &[f32]) -> Vec<f32> {
    match ep.candidates().estimate() {
        Some(e) if e.len() == scores.len() => {
            let z: Vec<f32> = (scores.iter().zip(e))
                .map(|(s, e)| s + PRIOR_WEIGHT * e)
                .collect();
            induce_models::policy::host::log_softmax(&z)
        }
        _ => induce_models::policy::host::log_softmax(scores),
    }
}

/// True when some of `states` score with the estimated layout's prior (the device-side greedy
/// paths, which do not add it, are then not taken).
pub(crate) fn any_prior<C>(states: &[(&Episode<'_>, &C)]) -> bool {
    states
        .iter()
        .any(|(ep, _)| ep.candidates().estimate().is_some())
}

/// Samples an index from log-probabilities with the host RNG.
pub(crate) fn sample(logp: &[f32], rng: &mut StdRng) -> usize {
    let r: f32 = rng.random();
    let mut acc = 0.0;
    for (i, lp) in logp.iter().enumerate() {
        acc += lp.exp();
        if r < acc {
            return i;
        }
    }
    logp.iter().rposition(|v| v.is_finite()).unwrap_or(0)
}

/// An index sampled from the log-probabilities `logp` at `temperature` (the distribution
/// `∝ p^(1/T)`): at 1, [`sample`]'s inverse-CDF draw; otherwise the argmax of the Gumbel-perturbed
/// scores ([`gumbel_perturbed`]), which draws from the same tempered distribution.
pub(crate) fn sample_at(logp: &[f32], temperature: f32, rng: &mut StdRng) -> usize {
    if temperature == 1.0 {
        return sample(logp, rng);
    }
    argmax(&gumbel_perturbed(logp, temperature, rng))
}

/// `logp / temperature` with Gumbel noise added from the host RNG: its `k` highest entries are
/// `k` indices sampled without replacement from the distribution `∝ p^(1/T)` (the Gumbel-top-k
/// trick). An impossible candidate (`-inf`) stays impossible.
///
/// # Shapes
/// - logp: `[candidates]`; returns `[candidates]`
pub(crate) fn gumbel_perturbed(logp: &[f32], temperature: f32, rng: &mut StdRng) -> Vec<f32> {
    logp.iter()
        .map(|&lp| {
            let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
            lp / temperature - (-u.ln()).ln() as f32
        })
        .collect()
}

/// Greedy choice: argmax, first index on ties (NaN never wins).
pub fn argmax(v: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] || v[best].is_nan() {
            best = i;
        }
    }
    best
}

/// Rolls one episode out with `learner`, sampling with `rng`; returns the recorded steps.
pub(crate) fn rollout<L: Learner>(
    learner: &L,
    ep: &mut Episode<'_>,
    rng: &mut StdRng,
    keep_trace: bool,
) -> Result<Vec<L::Step>> {
    let mut out = rollout_batch(learner, &mut [(ep, rng)], keep_trace)?;
    Ok(out.remove(0))
}

/// One episode of a batched rollout.
struct Roll<'j, 'g, C, S> {
    ep: &'j mut Episode<'g>,
    rng: &'j mut StdRng,
    cache: C,
    steps: Vec<S>,
}

/// Rolls several episodes out in lockstep, each sampling with its own random stream: at every
/// step the learner observes all unfinished episodes at once ([`Learner::observe_batch`]), then
/// each takes its action (on [`Learner::threads`] threads). Each episode's steps equal those of
/// rolling it out alone. Returns the recorded steps per episode, in order.
pub(crate) fn rollout_batch<L: Learner>(
    learner: &L,
    jobs: &mut [(&mut Episode<'_>, &mut StdRng)],
    keep_trace: bool,
) -> Result<Vec<Vec<L::Step>>> {
    rollout_batch_picking(learner, jobs, keep_trace, false)
}

/// [`rollout_batch`], each step taking the policy's argmax (the first on ties; the streams are
/// not drawn from) when `argmax`, else a sample.
pub(crate) fn rollout_batch_picking<L: Learner>(
    learner: &L,
    jobs: &mut [(&mut Episode<'_>, &mut StdRng)],
    keep_trace: bool,
    argmax_pick: bool,
) -> Result<Vec<Vec<L::Step>>> {
    let threads = learner.threads();
    // The policy is fixed during the rollout: what each episode's states share is computed once.
    let mut rolls = induce_explain::parallel::map_mut(jobs, threads, |(ep, _)| {
        ep.reset();
        learner.prepare(ep)
    })?
    .into_iter()
    .zip(jobs.iter_mut())
    .map(|(cache, (ep, rng))| Roll {
        ep,
        rng,
        cache,
        steps: Vec::new(),
    })
    .collect::<Vec<_>>();
    loop {
        let mut active: Vec<&mut Roll<'_, '_, L::Cache, L::Step>> =
            rolls.iter_mut().filter(|r| !r.ep.is_done()).collect();
        if active.is_empty() {
            break;
        }
        let states: Vec<(&Episode<'_>, &L::Cache)> =
            active.iter().map(|r| (&*r.ep, &r.cache)).collect();
        let observed = learner.observe_batch(&states, keep_trace)?;
        drop(states);
        let mut moves: Vec<_> = active
            .drain(..)
            .zip(observed)
            .map(|(r, (log_probs, step))| (r, log_probs, Some(step)))
            .collect();
        induce_explain::parallel::map_mut(&mut moves, threads, |(r, log_probs, step)| {
            let action = if argmax_pick {
                argmax(log_probs)
            } else {
                sample(log_probs, r.rng)
            };
            let reward = r.ep.step(action)?.reward;
            let mut step = step.take().expect("each observed step is taken once");
            L::complete(&mut step, action, reward);
            r.steps.push(step);
            Ok(())
        })?;
    }
    Ok(rolls.into_iter().map(|r| r.steps).collect())
}

/// Plays an episode to its end greedily (the highest-scoring action, first on ties).
pub(crate) fn play_greedy(scorer: &Scorer<'_>, ep: &mut Episode<'_>) -> Result<()> {
    while !ep.is_done() {
        let a = argmax(&scorer(ep)?);
        ep.step(a)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::burn::{BurnLearner, StepRecord};
    use super::host::{HostLearner, HostStep, StepInput};
    use super::*;
    use crate::env::StateSnapshot;
    use crate::returns::batch_returns;
    use ::burn::module::{Module, ModuleVisitor, Param};
    use ::burn::optim::GradientsParams;
    use ::burn::tensor::Tensor;
    use induce_models::PolicyConfig;
    use induce_models::kernels::tensors::to_vec;
    use induce_models::policy::host::Adjacency;
    use rand::SeedableRng;

    #[test]
    fn greedy_argmax_takes_the_first_of_ties() {
        assert_eq!(argmax(&[0.1, 0.5, 0.5]), 1);
        assert_eq!(argmax(&[f32::NAN, 0.2]), 1);
    }

    #[test]
    fn sampling_follows_the_distribution() {
        let mut rng = StdRng::seed_from_u64(1);
        let logp = [0.25f32.ln(), 0.75f32.ln()];
        let ones = (0..4000).filter(|_| sample(&logp, &mut rng) == 1).count();
        assert!((2800..3200).contains(&ones), "{ones}");
    }

    /// Every parameter's gradient of a Burn loss, in the module's visiting order.
    fn burn_grads(burn: &BurnLearner, loss: Tensor<1>) -> Vec<f32> {
        struct Grads<'a>(&'a GradientsParams, Vec<f32>);
        impl ModuleVisitor for Grads<'_> {
            fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
                let g = self.0.get::<D>(p.id).expect("gradient");
                self.1.extend(to_vec(g.reshape([1, -1])));
            }
        }
        let gp = GradientsParams::from_grads(loss.backward(), burn.trained());
        let mut want = Grads(&gp, Vec::new());
        burn.trained().visit(&mut want);
        want.1
    }

    /// Two small episodes (`0 ─ 1 ─ 2 ─ 3`, then edited; candidates over local ids) as the
    /// Burn kernel records them.
    fn recorded_episodes() -> Vec<Vec<StepRecord>> {
        let rec = |edges: Vec<(u32, u32)>, action: usize, reward: f32, shift: f32| StepRecord {
            state: (0..12).map(|i| (i % 5) as f32 * 0.3 - shift).collect(),
            num_nodes: 4,
            edges,
            cand_u: vec![0, 0, 1, 2],
            cand_w: vec![2, 3, 2, 3],
            flag: vec![1.0, 1.0, 0.0, 0.0],
            prior: Vec::new(),
            action,
            reward,
        };
        let path = vec![(0, 1), (1, 2), (2, 3)];
        // One state with the estimated layout's prior on its scores.
        let with_prior = StepRecord {
            prior: vec![0.5, -1.0, 2.0, 0.0],
            ..rec(vec![(0, 1), (2, 3)], 1, 1.5, 0.4)
        };
        vec![
            vec![rec(path.clone(), 2, -0.2, 0.1), with_prior],
            vec![rec(path, 0, 0.7, -0.3)],
        ]
    }

    /// The same episodes as the host kernel records them (a trace kept on every other one).
    fn host_steps(host: &HostLearner, episodes: &[Vec<StepRecord>]) -> Vec<Vec<HostStep>> {
        episodes
            .iter()
            .map(|e| {
                e.iter()
                    .map(|r| {
                        let graph = Adjacency::with_self_loops(r.num_nodes, &r.edges).unwrap();
                        let trace = host
                            .policy
                            .forward(&r.state, &graph, &r.cand_u, &r.cand_w, &r.flag);
                        let width = r.state.len() / r.num_nodes;
                        let x = induce_graph::Features::new(r.num_nodes, width, r.state.clone());
                        HostStep {
                            first: None,
                            state: StateSnapshot::whole(x.unwrap()),
                            input: StepInput {
                                graph,
                                cand_u: r.cand_u.clone(),
                                cand_w: r.cand_w.clone(),
                                flag: r.flag.clone(),
                            },
                            log_probs: match r.prior.is_empty() {
                                true => trace.log_probs().to_vec(),
                                false => {
                                    let z: Vec<f32> = (trace.log_probs().iter().zip(&r.prior))
                                        .map(|(l, p)| l + p)
                                        .collect();
                                    induce_models::policy::host::log_softmax(&z)
                                }
                            },
                            trace: (r.num_nodes % 2 == 0).then_some(trace),
                            action: r.action,
                            reward: r.reward,
                        }
                    })
                    .collect()
            })
            .collect()
    }

    fn assert_close(got: &[f32], want: &[f32]) {
        assert_eq!(got.len(), want.len());
        assert!(want.iter().any(|g| g.abs() > 1e-3));
        for (i, (a, b)) in got.iter().zip(want).enumerate() {
            assert!(
                (a - b).abs() < 1e-5 + 1e-4 * b.abs(),
                "param {i}: {a} vs {b}"
            );
        }
    }

    /// The host learner's batch gradient (parallel per-episode backward passes reusing the
    /// rollouts' forward passes) equals Burn's autodiff of the block-diagonal replay.
    #[test]
    fn host_batch_gradient_equals_burn_autodiff() {
        let dev = induce_models::testing::test_device().unwrap();
        let config = InduceConfig::default();
        let policy = PolicyConfig::new(3).with_init_seed(9).init(&dev);
        let episodes = recorded_episodes();
        let returns = batch_returns(&episodes, |s| s.reward, &config).unwrap();
        let burn = BurnLearner::new(&policy, &dev);
        let want = burn_grads(
            &burn,
            burn.batch_loss(&episodes, &returns, &config).unwrap(),
        );
        for threads in [1, 2] {
            let host = HostLearner::new(&policy, threads);
            let got = host
                .batch_grads(&host_steps(&host, &episodes), &returns, &config)
                .unwrap();
            assert_close(&got, &want);
        }
    }

    /// The listwise (imitation) loss: the host kernel's gradient equals Burn's autodiff, and
    /// one weight per step equal to the return is REINFORCE's gradient.
    #[test]
    fn host_listwise_gradient_equals_burn_autodiff_and_reinforce() {
        let dev = induce_models::testing::test_device().unwrap();
        let config = InduceConfig::default();
        let policy = PolicyConfig::new(3).with_init_seed(9).init(&dev);
        let episodes = recorded_episodes();
        // A teacher's distribution per step (two candidates listed, one with weight 0).
        let weights = vec![
            vec![(1, 0.7), (3, 0.3)],
            vec![(0, 1.0), (2, 0.0)],
            vec![(2, 0.25), (1, 0.75)],
        ];
        let burn = BurnLearner::new(&policy, &dev);
        let want = burn_grads(
            &burn,
            burn.listwise_loss(&episodes, &weights, 0.05).unwrap(),
        );
        let host = HostLearner::new(&policy, 2);
        let steps = host_steps(&host, &episodes);
        let got = host
            .grads_with(&steps, |s, at, scale| {
                induce_models::policy::host::listwise_score_grad(
                    &s.log_probs,
                    &weights[at],
                    0.05,
                    scale,
                )
            })
            .unwrap();
        assert_close(&got, &want);
        // REINFORCE as a listwise loss: the chosen action weighted by its return.
        let returns = batch_returns(&episodes, |s| s.reward, &config).unwrap();
        let chosen: Vec<Vec<(usize, f32)>> = episodes
            .iter()
            .flatten()
            .zip(&returns)
            .map(|(r, &g)| vec![(r.action, g)])
            .collect();
        let as_list = burn_grads(
            &burn,
            burn.listwise_loss(&episodes, &chosen, config.train.entropy_coef)
                .unwrap(),
        );
        let reinforce = host.batch_grads(&steps, &returns, &config).unwrap();
        assert_close(&as_list, &reinforce);
    }

    #[test]
    fn tempered_sampling_is_seeded_keeps_impossible_candidates_out_and_spreads() {
        use rand::SeedableRng;
        let logp = [0.9f32.ln(), 0.1f32.ln(), f32::NEG_INFINITY];
        let draws = |t: f32, seed: u64| {
            let mut rng = StdRng::seed_from_u64(seed);
            (0..2000)
                .map(|_| sample_at(&logp, t, &mut rng))
                .collect::<Vec<_>>()
        };
        // At temperature 1 the draw is `sample`'s, stream for stream.
        let mut a = StdRng::seed_from_u64(3);
        let mut b = StdRng::seed_from_u64(3);
        assert!((0..50).all(|_| sample_at(&logp, 1.0, &mut a) == sample(&logp, &mut b)));
        // Seeded, never the impossible one; a higher temperature spreads the draws: the second
        // candidate's share is 0.1 at T = 1 and 0.25 at T = 2 (∝ p^(1/2): 0.316 / 1.265).
        assert_eq!(draws(2.0, 7), draws(2.0, 7));
        let share = |t: f32| draws(t, 7).iter().filter(|&&i| i == 1).count() as f64 / 2000.0;
        assert!(draws(2.0, 7).iter().all(|&i| i < 2));
        assert!((share(1.0) - 0.1).abs() < 0.03, "{}", share(1.0));
        assert!((share(2.0) - 0.25).abs() < 0.04, "{}", share(2.0));
        // Without replacement: the perturbed scores' order is a permutation of the candidates,
        // the impossible one last.
        let mut rng = StdRng::seed_from_u64(1);
        let g = gumbel_perturbed(&logp, 4.0, &mut rng);
        assert!(g[0].is_finite() && g[1].is_finite() && g[2] == f32::NEG_INFINITY);
    }
}
