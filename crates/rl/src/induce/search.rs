//! Per-target searches with a policy: transductive InduCE (a policy trained on one target,
//! optionally from a trained one) and inductive inference (greedy and best-of-k).

use burn::tensor::Device;
use induce_graph::Graph;
use induce_models::{BlackBox, Kernel, Policy};
use rand::SeedableRng;
use rand::rngs::StdRng;

use super::{InduceConfig, check_episodes};
use crate::batch::SearchConfig;
use crate::env::{EnvConfig, Episode};
use crate::error::Result;
use crate::explanation::Explanation;
use crate::kernel::burn::BurnLearner;
use crate::kernel::host::HostLearner;
use crate::kernel::{KernelPolicy, Learner, bind, play_greedy, rollout};
use crate::lookahead::Widening;
use crate::returns::batch_returns;

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
        match self.config.inference.lookahead {
            0 | 1 => play_greedy(&scorer, ep)?,
            k => crate::lookahead::play_lookahead(&scorer, ep, k, self.config.inference.widen)?,
        }
        self.keep(ep.explanation())
    }

    /// The search for any kernel: the greedy episode first when `greedy_first` (fine-tuning),
    /// then sampled episodes, one update after each, with the greedy episode every
    /// [`TrainConfig::greedy_every`](crate::TrainConfig::greedy_every)-th update.
    fn run<L: Learner>(
        &mut self,
        mut learner: L,
        ep: &mut Episode<'_>,
        mut rng: StdRng,
        greedy_first: bool,
    ) -> Result<()> {
        let config = self.config;
        let looks = config.inference.lookahead > 1;
        if (greedy_first || looks) && self.greedy(&learner, ep)? {
            return Ok(());
        }
        for i in 0..config.train.episodes {
            let steps = rollout(&learner, ep, &mut rng, true)?;
            if self.keep(ep.explanation())? {
                break;
            }
            let batch = [steps];
            let returns = batch_returns(&batch, L::reward, config)?;
            if !returns.is_empty() {
                learner.update(&batch, &returns, config)?;
            }
            let last = looks && i + 1 == config.train.episodes;
            if (greedy_due(config, i) || last) && self.greedy(&learner, ep)? {
                break;
            }
        }
        Ok(())
    }
}

/// Whether the transductive search plays its policy's greedy episode after update `i` (from 0):
/// every [`TrainConfig::greedy_every`](crate::TrainConfig::greedy_every)-th update and the last one.
fn greedy_due(config: &InduceConfig, i: usize) -> bool {
    let every = config.train.greedy_every;
    every > 0 && ((i + 1).is_multiple_of(every) || i + 1 == config.train.episodes)
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
        widen: Widening::Fixed,
        temperature: 1.0,
    };
    let mut out = policy.best_of_k(vec![ep], &search, &Ok)?;
    Ok(out.remove(0))
}
