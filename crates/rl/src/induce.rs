//! InduCE: REINFORCE training of the GAT policy (inductive and transductive) and inference
//! with a trained policy (greedy and best-of-k).
//!
//! Every loop here is written once, over the kernel seam ([`crate::kernel`]): a [`Learner`]
//! rolls episodes out and takes policy-gradient steps, an [`Actor`](crate::kernel::Actor)
//! scores actions; the host and Burn kernels each implement both. The gradient is that of
//! `J = −(1/B) Σ_episodes Σ_t [log Π(a_t | S_t) · Ĝ_t + η · H(Π(·|S_t))]`, with `Ĝ` the
//! discounted returns normalised over the batch.

use std::time::Instant;

use burn::module::Module;
use burn::tensor::Device;
use induce_graph::Graph;
use induce_models::{BlackBox, Kernel, Policy};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::batch::{Finish, SearchConfig};
use crate::env::{EnvConfig, Episode};
use crate::error::{Result, RlError};
use crate::explanation::{Explainer, Explanation};
use crate::kernel::burn::BurnLearner;
use crate::kernel::host::HostLearner;
use crate::kernel::{KernelPolicy, Learner, bind, play_greedy};
use crate::kernel::{rollout, rollout_batch};
use crate::train_store::TrainStore;

pub use crate::config::InduceConfig;
use crate::returns::batch_returns;
pub use crate::returns::{discounted_returns, normalise};

/// Progress of one training epoch (one pass over the training targets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpochStats {
    /// Epoch index, from 0.
    pub epoch: usize,
    /// Mean undiscounted episode return.
    pub mean_return: f32,
    /// Share of episodes that flipped the label.
    pub flipped: f32,
    /// Mean number of edits per episode.
    pub mean_edits: f32,
}

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
        match Episode::new(graph, black_box, t, env) {
            Ok(_) => usable.push(t),
            Err(RlError::NoCandidate { .. }) => {}
            Err(e) => return Err(e),
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
    train_epochs(&mut learner, pool, config, first, progress, |epochs, l| {
        store.save(epochs, &l.policy, &l.adam)
    })?;
    Ok(learner.to_policy(device))
}

/// Where the training episodes come from.
enum Pool<'e, 'a> {
    /// Episodes built by the caller, reset before each rollout.
    Prepared(&'e mut [Episode<'a>]),
    /// Episodes built for each batch from the targets and dropped after it.
    Lazy {
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        targets: Vec<u32>,
        env: &'e EnvConfig,
    },
}

impl<'a> Pool<'_, 'a> {
    fn len(&self) -> usize {
        match self {
            Pool::Prepared(e) => e.len(),
            Pool::Lazy { targets, .. } => targets.len(),
        }
    }

    /// A fresh episode of target `i` of a lazy pool.
    fn build(&self, i: usize) -> Result<Option<Episode<'a>>> {
        match self {
            Pool::Prepared(_) => Ok(None),
            Pool::Lazy {
                graph,
                black_box,
                targets,
                env,
            } => Episode::new(graph, *black_box, targets[i], env).map(Some),
        }
    }
}

/// Rejects a training configuration that [`InduceConfig::validate`] refuses, or without
/// episodes or with empty batches.
fn check_training(config: &InduceConfig) -> Result<()> {
    config.validate()?;
    if config.batch_size == 0 {
        return Err(RlError::InvalidConfig(
            "InduceConfig.batch_size must be at least 1, got 0".into(),
        ));
    }
    check_episodes(config)
}

/// Rejects a search without episodes.
fn check_episodes(config: &InduceConfig) -> Result<()> {
    if config.episodes == 0 {
        return Err(RlError::InvalidConfig(
            "InduceConfig.episodes must be at least 1, got 0".into(),
        ));
    }
    Ok(())
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
            train_epochs(&mut learner, pool, config, 0, progress, no_checkpoint)?;
            Ok(learner.to_policy(device))
        }
        Kernel::Burn => {
            let mut learner = BurnLearner::new(&init, device);
            train_epochs(&mut learner, pool, config, 0, progress, no_checkpoint)?;
            Ok(learner.to_policy(device))
        }
    }
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
    mut pool: Pool<'_, '_>,
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
    for epoch in first..config.episodes {
        order.shuffle(&mut rng);
        let (mut ret, mut flips, mut edits) = (0.0f32, 0usize, 0usize);
        for batch in order.chunks(config.batch_size) {
            let seeds: Vec<u64> = batch.iter().map(|_| rng.random()).collect();
            let mut fresh: Vec<Episode<'_>> = Vec::new();
            for &i in batch {
                fresh.extend(pool.build(i)?);
            }
            let mut jobs: Vec<(&mut Episode<'_>, u64)> = match &mut pool {
                Pool::Prepared(episodes) => {
                    let mut slots: Vec<Option<&mut Episode<'_>>> =
                        episodes.iter_mut().map(Some).collect();
                    batch
                        .iter()
                        .zip(&seeds)
                        .map(|(&i, &s)| (slots[i].take().expect("batch indices are distinct"), s))
                        .collect()
                }
                Pool::Lazy { .. } => fresh.iter_mut().zip(seeds.iter().copied()).collect(),
            };
            let mut rngs: Vec<StdRng> = jobs
                .iter()
                .map(|(_, s)| StdRng::seed_from_u64(*s))
                .collect();
            let mut rolls: Vec<(&mut Episode<'_>, &mut StdRng)> = jobs
                .iter_mut()
                .zip(rngs.iter_mut())
                .map(|((ep, _), rng)| (&mut **ep, rng))
                .collect();
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
            let returns = batch_returns(&batch_steps, L::reward, config)?;
            if !returns.is_empty() {
                learner.update(&batch_steps, &returns, config)?;
            }
        }
        after_epoch(epoch + 1, learner)?;
        progress(&EpochStats {
            epoch,
            mean_return: ret / k,
            flipped: flips as f32 / k,
            mean_edits: edits as f32 / k,
        });
    }
    Ok(())
}

/// Transductive InduCE for one target: a fresh policy trained on this node alone for up to
/// `config.episodes` sampled episodes (one update per episode); the smallest counterfactual found
/// is kept (after the minimality pass when `config.minimise`), stopping early at size 1. A
/// target with no counterfactual found returns the last episode's (unsuccessful) explanation.
pub fn explain_transductive(
    graph: &Graph,
    black_box: &dyn BlackBox,
    target: u32,
    config: &InduceConfig,
    device: &Device,
) -> Result<Explanation> {
    explain_transductive_from(graph, black_box, target, config, None, device)
}

/// [`explain_transductive`] starting from a trained policy instead of a fresh one (`init`; the
/// `inductive-fine-tuned` method): the trained policy's greedy episode comes first (so nothing
/// it finds is lost), then up to `config.episodes` sampled episodes fine-tune a copy of it on
/// this target alone, one update per episode, with `config`'s γ, learning rate and entropy
/// weight. The smallest counterfactual is kept, stopping early at size 1. `None` is
/// [`explain_transductive`].
pub fn explain_transductive_from(
    graph: &Graph,
    black_box: &dyn BlackBox,
    target: u32,
    config: &InduceConfig,
    init: Option<&Policy>,
    device: &Device,
) -> Result<Explanation> {
    config.validate()?;
    check_episodes(config)?;
    let mut ep = Episode::new(graph, black_box, target, &config.env)?;
    let seed = config.seed ^ (target as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let fresh;
    let start = match init {
        Some(p) => p,
        None => {
            fresh = config
                .policy_config(graph.features().dim(), black_box.num_classes())
                .with_init_seed(seed)
                .init(device);
            &fresh
        }
    };
    let mut search = Search {
        graph,
        black_box,
        config,
        best: None,
        last: None,
    };
    let rng = StdRng::seed_from_u64(seed);
    let greedy_first = init.is_some();
    match config.kernel {
        Kernel::Host => {
            let learner = HostLearner::new(start, 1);
            search.run(learner, &mut ep, rng, greedy_first)?;
        }
        Kernel::Burn => {
            let learner = BurnLearner::new(start, device);
            search.run(learner, &mut ep, rng, greedy_first)?;
        }
    }
    Ok(search.best.or(search.last).expect("at least one episode"))
}

/// The state of one transductive search: the smallest counterfactual so far and the last
/// episode's explanation.
struct Search<'a> {
    graph: &'a Graph,
    black_box: &'a dyn BlackBox,
    config: &'a InduceConfig,
    best: Option<Explanation>,
    last: Option<Explanation>,
}

impl Search<'_> {
    /// Keeps an episode's explanation (minimised when configured); true once the best is a
    /// single edit (the search stops).
    fn keep(&mut self, e: Explanation) -> Result<bool> {
        let c = self.config;
        let e = match c.minimise && e.found {
            true => {
                let env = &c.env;
                induce_explain::minimise(
                    self.graph,
                    self.black_box,
                    &e,
                    env.hops,
                    env.verdict,
                    env.goal,
                )?
            }
            false => e,
        };
        if e.found && self.best.as_ref().is_none_or(|b| e.size() < b.size()) {
            self.best = Some(e.clone());
        }
        self.last = Some(e);
        Ok(self.best.as_ref().is_some_and(|b| b.size() <= 1))
    }

    /// Plays the learner's greedy episode and keeps it; true when the search is over.
    fn greedy<L: Learner>(&mut self, learner: &L, ep: &mut Episode<'_>) -> Result<bool> {
        ep.reset();
        let scorer = bind(learner, ep)?;
        match self.config.lookahead {
            0 | 1 => play_greedy(&scorer, ep)?,
            k => crate::lookahead::play_lookahead(&scorer, ep, k)?,
        }
        self.keep(ep.explanation())
    }

    /// The search for any kernel: the greedy episode first when `greedy_first` (fine-tuning),
    /// then sampled episodes, one update after each, with the greedy episode every
    /// [`InduceConfig::greedy_every`]-th update.
    fn run<L: Learner>(
        &mut self,
        mut learner: L,
        ep: &mut Episode<'_>,
        mut rng: StdRng,
        greedy_first: bool,
    ) -> Result<()> {
        let config = self.config;
        let looks = config.lookahead > 1;
        if (greedy_first || looks) && self.greedy(&learner, ep)? {
            return Ok(());
        }
        for i in 0..config.episodes {
            let steps = rollout(&learner, ep, &mut rng, true)?;
            if self.keep(ep.explanation())? {
                break;
            }
            let batch = [steps];
            let returns = batch_returns(&batch, L::reward, config)?;
            if !returns.is_empty() {
                learner.update(&batch, &returns, config)?;
            }
            let last = looks && i + 1 == config.episodes;
            if (greedy_due(config, i) || last) && self.greedy(&learner, ep)? {
                break;
            }
        }
        Ok(())
    }
}

/// Whether the transductive search plays its policy's greedy episode after update `i` (from 0):
/// every [`InduceConfig::greedy_every`]-th update and the last one.
fn greedy_due(config: &InduceConfig, i: usize) -> bool {
    let every = config.greedy_every;
    every > 0 && ((i + 1).is_multiple_of(every) || i + 1 == config.episodes)
}

/// Explains `target` greedily with a trained policy (forward passes only): at each step the
/// highest-scoring action (first on ties) until the label flips, the budget is spent or no
/// action is left.
pub fn explain_greedy(
    policy: &KernelPolicy,
    graph: &Graph,
    black_box: &dyn BlackBox,
    target: u32,
    env: &EnvConfig,
) -> Result<Explanation> {
    let mut ep = Episode::new(graph, black_box, target, env)?;
    run_greedy(policy, &mut ep)?;
    Ok(ep.explanation())
}

/// Plays an episode to its end greedily (the loop of [`explain_greedy`], for episodes built
/// otherwise, e.g. [`Episode::with_subgraph`]).
pub fn run_greedy(policy: &KernelPolicy, ep: &mut Episode<'_>) -> Result<()> {
    let scorer = policy.bind(ep)?;
    play_greedy(&scorer, ep)
}

/// Best-of-k inductive inference: the greedy episode, then `samples − 1` episodes that sample
/// their actions from the trained policy (seeded from `seed` and the target id); the smallest
/// counterfactual wins (the greedy one on ties), stopping early at size 1. Still inductive:
/// forward passes only, no training per target. `samples = 1` is [`explain_greedy`].
/// [`crate::batch::best_of_k`] runs the same search for many targets at once.
///
/// A target with no counterfactual in any episode returns the greedy episode's explanation.
pub fn explain_best_of_k(
    policy: &KernelPolicy,
    graph: &Graph,
    black_box: &dyn BlackBox,
    target: u32,
    env: &EnvConfig,
    samples: usize,
    seed: u64,
) -> Result<Explanation> {
    let ep = Episode::new(graph, black_box, target, env)?;
    let search = SearchConfig {
        samples,
        seed,
        threads: 1,
        lookahead: 0,
    };
    let mut out = policy.best_of_k(vec![ep], &search, &Ok)?;
    Ok(out.remove(0))
}

/// InduCE with a trained policy as an [`Explainer`] (inductive inference).
pub struct InduceExplainer<'a> {
    policy: Policy,
    runner: KernelPolicy,
    black_box: &'a dyn BlackBox,
    env: EnvConfig,
    device: Device,
    name: String,
    /// Episodes per target (1: greedy only) and the sampling seed.
    samples: (usize, u64),
    /// Run the minimality pass on each counterfactual.
    minimise: bool,
    /// Targets explained together by [`Explainer::explain_batch`].
    batch: usize,
    /// Batched black-box verdicts in [`Explainer::explain_batch`] (`None`: on a GPU).
    batched_verdicts: Option<bool>,
    /// Compile the policy's kernels while the first batch's episodes are built (`None`: on a
    /// GPU with the Burn kernel, or as `INDUCE_WARM_UP` says).
    warm_up: Option<bool>,
    /// A warm-up has run (it runs once per explainer).
    warmed: std::sync::atomic::AtomicBool,
    /// Look-ahead over the policy's best proposals in the greedy episode (0: off).
    lookahead: usize,
}

impl<'a> InduceExplainer<'a> {
    /// Wraps a policy; `name` labels its results (e.g. `induce-inductive`). A bare explainer:
    /// the host kernel, greedy, no minimality pass, one target at a time (the `with_…`
    /// builders change them); [`InduceExplainer::from_config`] takes them from an
    /// [`InduceConfig`] as the command line does.
    pub fn new(
        name: impl Into<String>,
        policy: &Policy,
        black_box: &'a dyn BlackBox,
        env: EnvConfig,
        device: &Device,
    ) -> Self {
        Self {
            policy: policy.valid().to_device(device),
            runner: KernelPolicy::new(policy, Kernel::Host, device),
            black_box,
            env,
            device: device.clone(),
            name: name.into(),
            samples: (1, 0),
            minimise: false,
            batch: 1,
            batched_verdicts: None,
            warm_up: None,
            warmed: std::sync::atomic::AtomicBool::new(false),
            lookahead: 0,
        }
    }
}

impl<'a> InduceExplainer<'a> {
    /// [`InduceExplainer::new`] with `config`'s inference settings, as the command line's
    /// `inductive` method runs: its environment (hops, budget, edit types, verdicts), kernel,
    /// minimality pass ([`InduceConfig::minimise`], on by default) and batch of targets;
    /// greedy (add [`InduceExplainer::with_samples`] for best-of-k).
    ///
    /// ```no_run
    /// # fn demo(policy: &induce_models::Policy, bb: &dyn induce_models::BlackBox,
    /// #         graph: &induce_graph::Graph, device: &burn::tensor::Device) {
    /// use induce_rl::{Explainer, InduceConfig, InduceExplainer};
    /// let config = InduceConfig::default();
    /// let x = InduceExplainer::from_config("induce-inductive", policy, bb, &config, device);
    /// let e = x.explain(graph, 0).unwrap();
    /// # }
    /// ```
    pub fn from_config(
        name: impl Into<String>,
        policy: &Policy,
        black_box: &'a dyn BlackBox,
        config: &InduceConfig,
        device: &Device,
    ) -> Self {
        Self::new(name, policy, black_box, config.env.clone(), device)
            .with_kernel(config.kernel)
            .with_minimise(config.minimise)
            .with_batch(config.inference_batch)
            .with_lookahead(config.lookahead)
    }
}

impl InduceExplainer<'_> {
    /// Best-of-k inference ([`explain_best_of_k`]): `samples` episodes per target (the greedy
    /// one and `samples − 1` sampled ones, seeded from `seed` and the target id). `samples = 1`
    /// (the default) is greedy inference.
    pub fn with_samples(mut self, samples: usize, seed: u64) -> Self {
        self.samples = (samples, seed);
        self
    }

    /// Runs the minimality pass ([`induce_explain::minimise`]) on every counterfactual (with
    /// best-of-k, on each sample's before they are compared). Off by default.
    pub fn with_minimise(mut self, minimise: bool) -> Self {
        self.minimise = minimise;
        self
    }

    /// The greedy episode looks ahead over the policy's `k` most probable actions at each step,
    /// each judged by the black box ([`crate::lookahead`]; [`InduceConfig::lookahead`]). 0 (the
    /// default) or 1: the policy's argmax.
    pub fn with_lookahead(mut self, k: usize) -> Self {
        self.lookahead = k;
        self
    }

    /// Chooses the implementation of the policy's forward pass (same results).
    pub fn with_kernel(mut self, kernel: Kernel) -> Self {
        self.runner = KernelPolicy::new(&self.policy, kernel, &self.device);
        self
    }

    /// Explains `batch` targets at once ([`crate::batch::best_of_k`]; on the Burn kernel one
    /// block-diagonal forward pass per step for all of them, which is what a GPU needs). Same
    /// results; 1 (the default) explains each target on its own thread.
    pub fn with_batch(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// Whether [`Explainer::explain_batch`] takes each round's black-box verdicts for all the
    /// batch's episodes in one call on the black box's device ([`BlackBox::batched`]: the
    /// Burn GCN evaluates every edited graph at once; [`crate::batch::best_of_k_with`]) instead
    /// of one evaluation per episode and step. `None` (the default): on when the explainer's
    /// device is a GPU, or as the environment variable `INDUCE_BATCHED_VERDICTS` (`1` / `0`)
    /// says. A black box without a batched form, or an environment whose verdicts are not
    /// exact on the whole graph, keeps per-episode verdicts either way.
    pub fn with_batched_verdicts(mut self, on: Option<bool>) -> Self {
        self.batched_verdicts = on;
        self
    }

    /// Whether the first [`Explainer::explain_batch`] of more than one target plays one greedy
    /// round of its first target's episode on a thread of its own while the batch's episodes
    /// are built ([`KernelPolicy::warm_up`]), its result discarded: a GPU compiles each kernel
    /// on its first launch, and this moves the policy's first launches under the host's work of
    /// building the episodes. Once per explainer; same results. `None` (the default): on with
    /// the Burn kernel on a GPU, or as the environment variable `INDUCE_WARM_UP` (`1` / `0`)
    /// says. (On a backend that autotunes, such as `cube-cpu`, the tuning then happens while
    /// the host is busy and may choose another kernel, with other float rounding.)
    pub fn with_warm_up(mut self, on: Option<bool>) -> Self {
        self.warm_up = on;
        self
    }

    /// Whether the warm-up is on ([`InduceExplainer::with_warm_up`]).
    fn warm_up_on(&self) -> bool {
        if self.runner.kernel() != Kernel::Burn {
            return false;
        }
        self.warm_up.unwrap_or_else(|| {
            induce_models::device::env_switch("INDUCE_WARM_UP")
                .unwrap_or_else(|| induce_models::device::is_gpu(&self.device))
        })
    }

    /// [`InduceExplainer::build`] or [`InduceExplainer::build_batched`] (`bound`), with the
    /// warm-up beside it when it is on: errors of the warm-up are dropped (the batch meets and
    /// reports them itself).
    fn build_warm<'g>(
        &'g self,
        graph: &'g Graph,
        targets: &[u32],
        threads: usize,
        bound: Option<&induce_models::batched_verdict::VerdictBatch<'_>>,
    ) -> (Vec<Result<Episode<'g>>>, bool) {
        let build = || match bound {
            Some(batch) => match self.build_batched(graph, targets, threads, batch) {
                Some(built) => (built, true),
                // The batched call failed: per-episode verdicts, which report the error where
                // it matters.
                None => (self.build(graph, targets, threads), false),
            },
            None => (self.build(graph, targets, threads), false),
        };
        let warm = targets.len() > 1
            && self.warm_up_on()
            && !self.warmed.swap(true, std::sync::atomic::Ordering::Relaxed);
        match (targets.first(), warm) {
            (Some(&first), true) => std::thread::scope(|s| {
                let warm = s.spawn(move || {
                    Episode::new(graph, self.black_box, first, &self.env)
                        .and_then(|ep| self.runner.warm_up(&ep))
                });
                let built = build();
                let _ = warm.join();
                built
            }),
            _ => build(),
        }
    }

    /// The episodes of `targets` on `threads` host threads, each one's error in its slot.
    fn build<'g>(
        &'g self,
        graph: &'g Graph,
        targets: &[u32],
        threads: usize,
    ) -> Vec<Result<Episode<'g>>> {
        induce_explain::parallel::map(targets, threads, |&t| {
            Ok(Episode::new(graph, self.black_box, t, &self.env))
        })
        .expect("building an episode reports its error in its own slot")
    }

    /// The episodes of `targets` (each one's error in its slot), their black box's first
    /// verdicts taken in one batched call on the model's binding to the graph (`batch`): the
    /// neighbourhoods, candidates and judges' node sets on `threads` host threads
    /// ([`Episode::pending`]), then the model on every neighbourhood at once, then each episode
    /// completed. `None` when the batched call fails.
    fn build_batched<'g>(
        &'g self,
        graph: &'g Graph,
        targets: &[u32],
        threads: usize,
        batch: &induce_models::batched_verdict::VerdictBatch<'_>,
    ) -> Option<Vec<Result<Episode<'g>>>> {
        let pending = induce_explain::parallel::map(targets, threads, |&t| {
            Ok(Episode::pending(graph, self.black_box, t, &self.env))
        })
        .expect("a pending episode reports its error in its own slot");
        let requests: Vec<Vec<u32>> = pending
            .iter()
            .filter_map(|p| p.as_ref().ok().map(|p| p.request().to_vec()))
            .collect();
        let toggles = vec![Vec::new(); requests.len()];
        let rows = batch.log_probs(&toggles, &requests).ok()?;
        drop(requests);
        let mut rows = rows.into_iter();
        let mut jobs: Vec<(Option<Result<crate::env::PendingEpisode<'g>>>, Option<_>)> = pending
            .into_iter()
            .map(|p| {
                let r = p.as_ref().ok().and_then(|_| rows.next());
                (Some(p), r)
            })
            .collect();
        let built = induce_explain::parallel::map_mut(&mut jobs, threads, |(p, r)| {
            let p = p.take().expect("each episode is completed once");
            Ok(p.and_then(|p| {
                let r = r.take().expect("a row block for each pending episode");
                p.complete(r)
            }))
        })
        .expect("completing an episode reports its error in its own slot");
        Some(built)
    }

    /// Whether batched verdicts are on ([`InduceExplainer::with_batched_verdicts`]).
    fn batched_verdicts_on(&self) -> bool {
        self.batched_verdicts.unwrap_or_else(|| {
            induce_models::device::env_switch("INDUCE_BATCHED_VERDICTS")
                .unwrap_or_else(|| induce_models::device::is_gpu(&self.device))
        })
    }

    /// The minimality pass when it is on, else the identity.
    fn finish(&self, graph: &Graph, e: Explanation) -> Result<Explanation> {
        match self.minimise && e.found {
            true => {
                let env = &self.env;
                induce_explain::minimise(graph, self.black_box, &e, env.hops, env.verdict, env.goal)
            }
            false => Ok(e),
        }
    }

    /// The search configuration of this explainer on `threads` host threads.
    fn search(&self, threads: usize) -> SearchConfig {
        let (samples, seed) = self.samples;
        SearchConfig {
            samples,
            seed,
            threads,
            lookahead: self.lookahead,
        }
    }
}

impl Explainer for InduceExplainer<'_> {
    fn name(&self) -> &str {
        &self.name
    }

    fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation> {
        let ep = crate::profile::time(crate::profile::Phase::Build, || {
            Episode::new(graph, self.black_box, target, &self.env)
        })?;
        let finish = |e| self.finish(graph, e);
        let mut out = self.runner.best_of_k(vec![ep], &self.search(1), &finish)?;
        Ok(out.remove(0))
    }

    fn batch_size(&self) -> usize {
        self.batch
    }

    /// The policy's own radius (a loaded policy keeps the hops it was trained with): its
    /// records' sparsity and frozen-neighbourhood checks are taken there.
    fn neighbourhood_hops(&self) -> Option<u32> {
        Some(self.env.hops)
    }

    fn explain_batch(
        &self,
        graph: &Graph,
        targets: &[u32],
        threads: usize,
    ) -> Vec<Result<Explanation>> {
        // The black box bound to the whole graph for batched verdicts (an error here leaves the
        // per-episode verdicts, which report it where it matters), only where every episode
        // takes its verdicts from the model on its node set (exact verdicts on the exact
        // neighbourhood; otherwise the binding would go unused).
        let bound = match targets.len() > 1
            && self.batched_verdicts_on()
            && self.env.verdict == induce_explain::Verdict::Exact
            && self.env.fanout.is_none()
        {
            true => self
                .black_box
                .batched(graph.features(), &graph.edges())
                .ok()
                .flatten(),
            false => None,
        };
        let (built, bound) = crate::profile::time(crate::profile::Phase::Build, || {
            let (built, batched) = self.build_warm(graph, targets, threads, bound.as_ref());
            (built, bound.filter(|_| batched))
        });
        let (mut episodes, mut slots) = (Vec::new(), Vec::new());
        let mut out: Vec<Option<Result<Explanation>>> = Vec::with_capacity(targets.len());
        for (i, b) in built.into_iter().enumerate() {
            match b {
                Ok(ep) => {
                    episodes.push(ep);
                    slots.push(i);
                    out.push(None);
                }
                Err(e) => out.push(Some(Err(e))),
            }
        }
        let bound = bound.filter(|_| episodes.len() > 1);
        let finish = MinimalityPass {
            explainer: self,
            graph,
            verdicts: bound.as_ref(),
        };
        match self.runner.best_of_k_finishing(
            episodes,
            &self.search(threads),
            &finish,
            bound.as_ref(),
        ) {
            Ok(done) => {
                for (i, e) in slots.into_iter().zip(done) {
                    out[i] = Some(Ok(e));
                }
            }
            // Which target failed is not known: explain each alone, for its own error.
            Err(_) => {
                for i in slots {
                    out[i] = Some(self.explain(graph, targets[i]));
                }
            }
        }
        out.into_iter()
            .map(|r| r.expect("every target has its result"))
            .collect()
    }
}

/// An [`InduceExplainer`]'s minimality pass (when on) as a search's [`Finish`]: with the black
/// box bound for batched verdicts, a round's counterfactuals are minimised together
/// ([`induce_explain::minimise_batched`]: one device call per query round instead of one per
/// query); without, or if the batched pass fails, each on its own ([`induce_explain::minimise`],
/// which reports the error where it matters).
struct MinimalityPass<'x, 'a, 'g, 'm> {
    explainer: &'x InduceExplainer<'a>,
    graph: &'g Graph,
    verdicts: Option<&'x induce_models::batched_verdict::VerdictBatch<'m>>,
}

impl Finish for MinimalityPass<'_, '_, '_, '_> {
    fn finish(&self, e: Explanation) -> Result<Explanation> {
        self.explainer.finish(self.graph, e)
    }

    fn finish_all(&self, es: Vec<Explanation>, threads: usize) -> Result<Vec<Explanation>> {
        let many = es.iter().filter(|e| e.edits.len() > 1).count() > 1;
        if let (true, true, Some(batch)) = (self.explainer.minimise, many, self.verdicts)
            && self.explainer.env.verdict == induce_explain::Verdict::Exact
            && let Ok(done) =
                induce_explain::minimise_batched(self.graph, &es, batch, self.explainer.env.goal)
        {
            return Ok(done);
        }
        crate::batch::finish_each(self, es, threads)
    }
}

/// Transductive InduCE as an [`Explainer`]: [`explain_transductive`] for every target (a fresh
/// policy per target, seeded from the config and the target id, so results do not depend on the
/// order or the number of threads).
pub struct TransductiveExplainer<'a> {
    black_box: &'a dyn BlackBox,
    config: InduceConfig,
    device: Device,
    name: String,
    init: Option<Policy>,
}

impl<'a> TransductiveExplainer<'a> {
    /// `name` labels its results (e.g. `transductive`); `config.episodes` is the per-target cap.
    pub fn new(
        name: impl Into<String>,
        black_box: &'a dyn BlackBox,
        config: InduceConfig,
        device: &Device,
    ) -> Self {
        Self {
            black_box,
            config,
            device: device.clone(),
            name: name.into(),
            init: None,
        }
    }

    /// Starts every target from this trained policy instead of a fresh one
    /// ([`explain_transductive_from`]: per-target fine-tuning of an inductive policy).
    pub fn with_init(mut self, policy: Policy) -> Self {
        self.init = Some(policy);
        self
    }
}

impl Explainer for TransductiveExplainer<'_> {
    fn name(&self) -> &str {
        &self.name
    }

    fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation> {
        explain_transductive_from(
            graph,
            self.black_box,
            target,
            &self.config,
            self.init.as_ref(),
            &self.device,
        )
    }
}

/// Wall-clock helper for reports.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field() {
        let ok = InduceConfig::default();
        assert!(ok.validate().is_ok());
        for (c, field) in [
            (
                InduceConfig {
                    lr: 0.0,
                    ..ok.clone()
                },
                "lr",
            ),
            (
                InduceConfig {
                    lr: f64::NAN,
                    ..ok.clone()
                },
                "lr",
            ),
            (
                InduceConfig {
                    gamma: 1.5,
                    ..ok.clone()
                },
                "gamma",
            ),
            (
                InduceConfig {
                    hidden: 0,
                    ..ok.clone()
                },
                "hidden",
            ),
            (
                InduceConfig {
                    return_std_floor: 0.0,
                    ..ok.clone()
                },
                "return_std_floor",
            ),
            (
                InduceConfig {
                    inference_samples: 0,
                    ..ok.clone()
                },
                "inference_samples",
            ),
        ] {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(&format!("InduceConfig.{field} ")), "{e}");
        }
        let zero = InduceConfig {
            batch_size: 0,
            ..ok
        };
        assert!(
            check_training(&zero)
                .unwrap_err()
                .to_string()
                .contains("batch_size")
        );
    }
}
