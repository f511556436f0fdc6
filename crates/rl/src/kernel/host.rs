//! The host kernel's side of the seam: [`HostPolicy`] as an [`Actor`], and [`HostLearner`]
//! (the policy, its Adam state and the threads its rollouts and gradients run on).
//!
//! A rollout keeps each step's forward pass (a [`Trace`]) when the neighbourhood is small and
//! reuses it for the backward pass; per-episode gradients are computed on all threads and
//! summed in episode order (the result does not depend on the number of threads).

use std::sync::Arc;

use burn::tensor::Device;
use induce_models::Policy;
use induce_models::policy::host::adam::HostAdam;
use induce_models::policy::host::{
    Adjacency, FirstBlockProduct, HostPolicy, PolicyInput, StateBlocks, Trace, listwise_score_grad,
    reinforce_score_grad,
};

use super::{Actor, Learner};
use crate::config::InduceConfig;
use crate::env::{Episode, StateSnapshot};
use crate::error::Result;

/// In a batch of several episodes (inductive training), a rollout keeps each step's forward
/// pass for the backward pass when the neighbourhood has fewer messages than this (the trace is
/// then small, and recomputing it would cost ~10 % of a BA-Shapes step); larger ones keep only
/// the state, and the backward pass recomputes it ([`HostPolicy::backward_recomputed`]): on
/// Amazon-Photo, 2.5 MB a step instead of 10 (a batch of 16 episodes: 1.7 GB instead of 5.2).
/// A lone episode (transductive) always keeps it. Both give the same gradient bit for bit.
const KEEP_TRACE_MESSAGES: usize = 50_000;

/// The policy's first-layer product over an episode's fixed features (`None` when the first
/// state block changes with the edits: the reference layout).
fn first_block(policy: &HostPolicy, ep: &Episode<'_>) -> Option<Arc<FirstBlockProduct>> {
    ep.first_block_is_fixed()
        .then(|| Arc::new(policy.first_block_product(&ep.state_blocks())))
}

impl Actor for HostPolicy {
    type Cache = Option<Arc<FirstBlockProduct>>;

    fn prepare(&self, ep: &Episode<'_>) -> Result<Self::Cache> {
        super::check_state_fits(self.input_dim(), ep)?;
        Ok(first_block(self, ep))
    }

    fn log_probs(&self, ep: &Episode<'_>, first: &Self::Cache) -> Result<Vec<f32>> {
        let g = Adjacency::with_self_loops(ep.num_nodes(), &ep.edit_graph().edges())?;
        let c = ep.candidates();
        let flag = c.flag();
        let input = PolicyInput::new(ep.state_blocks(), &g, &c.u, &c.w, &flag);
        let log_probs = self.log_probs_cached(&input.with_first(first.as_deref()));
        Ok(match c.estimate() {
            Some(_) => super::with_prior(ep, &log_probs),
            None => log_probs,
        })
    }
}

/// A visited state, what the policy computed on it, and what was done there: the inputs of the
/// backward pass.
pub struct HostStep {
    pub(super) state: StateSnapshot,
    /// The rollout's first-layer product over the fixed features (shared by its steps).
    pub(super) first: Option<Arc<FirstBlockProduct>>,
    pub(super) input: StepInput,
    pub(super) log_probs: Vec<f32>,
    /// The forward pass, kept on small neighbourhoods only (see [`KEEP_TRACE_MESSAGES`]).
    pub(super) trace: Option<Trace>,
    pub(super) action: usize,
    pub(super) reward: f32,
}

/// The graph and candidate actions of a visited state.
pub(super) struct StepInput {
    pub(super) graph: Adjacency,
    pub(super) cand_u: Vec<u32>,
    pub(super) cand_w: Vec<u32>,
    pub(super) flag: Vec<f32>,
}

impl StepInput {
    /// The policy's input at this step: the state `x` (and its first-block product, if any) on
    /// this graph with these candidates.
    fn policy_input<'a>(
        &'a self,
        x: StateBlocks<'a>,
        first: Option<&'a FirstBlockProduct>,
    ) -> PolicyInput<'a> {
        PolicyInput::new(x, &self.graph, &self.cand_u, &self.cand_w, &self.flag).with_first(first)
    }
}

/// The host kernel learning: the policy's parameters, Adam's moments and the threads.
#[derive(Debug, Clone)]
pub struct HostLearner {
    /// The policy being trained.
    pub policy: HostPolicy,
    /// Its optimiser state.
    pub adam: HostAdam,
    threads: usize,
}

impl HostLearner {
    /// Starts learning from `policy` with a fresh Adam state, on `threads` threads.
    pub fn new(policy: &Policy, threads: usize) -> Self {
        let policy = HostPolicy::from_policy(policy);
        Self {
            adam: HostAdam::new(policy.num_params()),
            policy,
            threads: threads.max(1),
        }
    }

    /// The gradient of a batch loss contributed by one episode: `dscores(step, i)` is the
    /// loss's gradient with respect to the candidates' scores at its `i`-th step.
    fn episode_grad(
        &self,
        steps: &[HostStep],
        dscores: impl Fn(&HostStep, usize) -> Vec<f32>,
    ) -> Vec<f32> {
        let policy = &self.policy;
        let mut grads = vec![0.0; policy.num_params()];
        for (i, s) in steps.iter().enumerate() {
            let ds = dscores(s, i);
            let input = s.input.policy_input(s.state.blocks(), s.first.as_deref());
            match &s.trace {
                Some(t) => policy.backward_blocks(t, &input, &ds, &mut grads),
                None => policy.backward_recomputed(&input, &ds, &mut grads),
            }
        }
        grads
    }

    /// The gradient of a batch loss, per-episode gradients computed on the learner's threads
    /// and summed in episode order; `dscores(step, at)` is the gradient with respect to the
    /// scores of the step at flat index `at` (episode then step order) with `scale` =
    /// `1 / episodes` applied.
    pub(super) fn grads_with(
        &self,
        episodes: &[Vec<HostStep>],
        dscores: impl Fn(&HostStep, usize, f32) -> Vec<f32> + Sync,
    ) -> Result<Vec<f32>> {
        let mut jobs = Vec::with_capacity(episodes.len());
        let mut at = 0;
        for e in episodes {
            jobs.push((e, at));
            at += e.len();
        }
        let scale = 1.0 / episodes.len() as f32;
        let per_episode = crate::parallel::map(&jobs, self.threads, |(steps, first)| {
            Ok(self.episode_grad(steps, |s, i| dscores(s, first + i, scale)))
        })?;
        let mut grads = vec![0.0; self.policy.num_params()];
        for g in per_episode {
            for (a, b) in grads.iter_mut().zip(g) {
                *a += b;
            }
        }
        Ok(grads)
    }

    /// The gradient of the REINFORCE batch loss (`returns` flattened in step order).
    pub(crate) fn batch_grads(
        &self,
        episodes: &[Vec<HostStep>],
        returns: &[f32],
        config: &InduceConfig,
    ) -> Result<Vec<f32>> {
        self.grads_with(episodes, |s, at, scale| {
            reinforce_score_grad(
                &s.log_probs,
                s.action,
                returns[at],
                config.train.entropy_coef,
                scale,
            )
        })
    }
}

impl Actor for HostLearner {
    type Cache = Option<Arc<FirstBlockProduct>>;

    fn prepare(&self, ep: &Episode<'_>) -> Result<Self::Cache> {
        self.policy.prepare(ep)
    }

    fn log_probs(&self, ep: &Episode<'_>, cache: &Self::Cache) -> Result<Vec<f32>> {
        self.policy.log_probs(ep, cache)
    }
}

impl Learner for HostLearner {
    type Step = HostStep;

    fn threads(&self) -> usize {
        self.threads
    }

    fn observe(
        &self,
        ep: &Episode<'_>,
        first: &Self::Cache,
        keep_trace: bool,
    ) -> Result<(Vec<f32>, HostStep)> {
        let graph = Adjacency::with_self_loops(ep.num_nodes(), &ep.edit_graph().edges())?;
        let c = ep.candidates();
        let input = StepInput {
            graph,
            cand_u: c.u.clone(),
            cand_w: c.w.clone(),
            flag: c.flag(),
        };
        let state = ep.snapshot();
        let policy_input = input.policy_input(state.blocks(), first.as_deref());
        let p = &self.policy;
        let (log_probs, trace) =
            if keep_trace || policy_input.graph.num_messages() < KEEP_TRACE_MESSAGES {
                let t = p.forward_cached(&policy_input);
                (t.log_probs().to_vec(), Some(t))
            } else {
                (p.log_probs_cached(&policy_input), None)
            };
        // The estimated layout's prior on the scores: the gradients, taken with respect to
        // the scores, read these log-probabilities.
        let log_probs = match c.estimate() {
            Some(_) => super::with_prior(ep, &log_probs),
            None => log_probs,
        };
        let step = HostStep {
            state,
            first: first.clone(),
            input,
            log_probs: log_probs.clone(),
            trace,
            action: 0,
            reward: 0.0,
        };
        Ok((log_probs, step))
    }

    fn complete(step: &mut HostStep, action: usize, reward: f32) {
        (step.action, step.reward) = (action, reward);
    }

    fn reward(step: &HostStep) -> f32 {
        step.reward
    }

    fn update(
        &mut self,
        episodes: &[Vec<HostStep>],
        returns: &[f32],
        config: &InduceConfig,
    ) -> Result<()> {
        let grads = self.batch_grads(episodes, returns, config)?;
        self.adam
            .step(&mut self.policy.params, &grads, config.train.lr);
        Ok(())
    }

    fn update_listwise(
        &mut self,
        episodes: &[Vec<HostStep>],
        weights: &[Vec<(usize, f32)>],
        entropy_coef: f32,
        lr: f64,
    ) -> Result<()> {
        let grads = self.grads_with(episodes, |s, at, scale| {
            listwise_score_grad(&s.log_probs, &weights[at], entropy_coef, scale)
        })?;
        self.adam.step(&mut self.policy.params, &grads, lr);
        Ok(())
    }

    fn to_policy(&self, device: &Device) -> Policy {
        self.policy.to_policy(device)
    }
}
