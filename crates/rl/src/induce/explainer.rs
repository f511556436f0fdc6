//! InduCE as an [`Explainer`]: [`InduceExplainer`] (inference with a trained policy, its
//! batched episode building and minimality pass) and [`TransductiveExplainer`].

use burn::module::Module;
use burn::tensor::Device;
use induce_graph::Graph;
use induce_models::{BlackBox, Kernel, Policy};

use super::{InduceConfig, explain_transductive_from};
use crate::batch::{Finish, SearchConfig};
use crate::env::{EnvConfig, Episode};
use crate::error::Result;
use crate::explanation::{Explainer, Explanation};
use crate::kernel::KernelPolicy;
use crate::lookahead::Widening;

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
    /// Look-ahead over the policy's best proposals in the greedy episode (0: off), and how
    /// far it widens.
    lookahead: (usize, Widening),
    /// The sampled episodes' temperature (1: the policy's distribution).
    temperature: f32,
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
            lookahead: (0, Widening::Fixed),
            temperature: 1.0,
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
            .with_batch(config.inference.batch)
            .with_lookahead(config.inference.lookahead)
            .with_widening(config.inference.widen)
            .with_temperature(config.inference.temperature)
    }
}

impl InduceExplainer<'_> {
    /// Best-of-k inference ([`explain_best_of_k`]): `samples` episodes per target (the greedy
    /// one and `samples − 1` sampled ones, seeded from `seed` and the target id). `samples = 1`
    /// (the default) is greedy inference.
    ///
    /// [`explain_best_of_k`]: super::explain_best_of_k
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
    /// each judged by the black box ([`crate::lookahead`]; [`InferenceConfig::lookahead`](crate::InferenceConfig::lookahead)). 0 (the
    /// default) or 1: the policy's argmax.
    pub fn with_lookahead(mut self, k: usize) -> Self {
        self.lookahead.0 = k;
        self
    }

    /// How far that look-ahead reaches past the policy's `k` proposals ([`Widening`];
    /// [`InferenceConfig::widen`](crate::InferenceConfig::widen)). [`Widening::Fixed`], the default: the top `k` only.
    pub fn with_widening(mut self, widening: Widening) -> Self {
        self.lookahead.1 = widening;
        self
    }

    /// The temperature of best-of-k's sampled episodes ([`InferenceConfig::temperature`](crate::InferenceConfig::temperature); 1, the
    /// default: the policy's own distribution).
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = temperature;
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
            induce_models::device::tuning()
                .warm_up
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
        bound: Option<&induce_models::black_box::batched::VerdictBatch<'_>>,
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
        batch: &induce_models::black_box::batched::VerdictBatch<'_>,
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
            induce_models::device::tuning()
                .batched_verdicts
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
            lookahead: self.lookahead.0,
            widen: self.lookahead.1,
            temperature: self.temperature,
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
    verdicts: Option<&'x induce_models::black_box::batched::VerdictBatch<'m>>,
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
///
/// [`explain_transductive`]: super::explain_transductive
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
