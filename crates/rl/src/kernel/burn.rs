//! The Burn side of the seam: [`BurnActor`] (a policy on a plain device: forward passes) and
//! [`BurnLearner`] (the policy on the device's autodiff version and Burn's Adam).
//!
//! Rollouts run without autodiff and record every visited state; an update replays all states
//! of a batch as one block-diagonal graph on the autodiff device: one forward, one `backward()`
//! and one Adam step per batch.

use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, Tensor, TensorData};
use induce_models::host::policy::{HostPolicy, log_softmax};
use induce_models::tensors::{GraphTensors, Messages, indices, matrix, scatter_add_rows};
use induce_models::tensors::{segment_log_softmax, to_vec};
use induce_models::{CandidateTensors, Policy};

use super::{Actor, Learner};
use crate::env::Episode;
use crate::error::Result;
use crate::induce::InduceConfig;

/// Candidates scored per block of the MLP in a batch ([`Policy::score_blocks`]): bounds its
/// intermediate tensors (17 MB for the first layer's input) however many targets are batched.
const SCORE_BLOCK: usize = 1 << 17;

/// A policy on a plain (non-autodiff) device: the Burn kernel's forward pass.
#[derive(Debug, Clone)]
pub struct BurnActor {
    policy: Policy,
    device: Device,
}

impl BurnActor {
    /// `policy` (without its autodiff graph) on `device`.
    pub fn new(policy: &Policy, device: &Device) -> Self {
        Self {
            policy: policy.valid().to_device(device),
            device: device.clone(),
        }
    }
}

/// What the states of one episode share on the Burn kernel: the first GAT layer's product
/// over the node features ([`Policy::block_product`]), computed once per episode on the device.
#[derive(Debug, Clone)]
pub struct BurnCache {
    /// `F · W₁[feature columns]`, `[n, hidden]`.
    product: Tensor<2>,
}

impl BurnActor {
    /// The policy's product over `ep`'s node features, on the device.
    fn feature_product(&self, ep: &Episode<'_>) -> Result<BurnCache> {
        let (features, cols) = ep.feature_block();
        let f = matrix(
            features.as_slice(),
            features.num_nodes(),
            features.dim(),
            &self.device,
        );
        Ok(BurnCache {
            product: self.policy.block_product(f, cols)?,
        })
    }

    /// `log Π(· | S)` at the current states of `states`, all scored in one block-diagonal
    /// batch: the episodes' neighbourhoods side by side (node ids offset), their candidate
    /// lists concatenated, one forward pass, one download; each state's log-softmax on the
    /// host. A batch of one is [`Actor::log_probs`].
    ///
    /// # Shapes
    /// - output: `[B][C_b]`
    fn packed_log_probs(
        &self,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Vec<Vec<f32>>> {
        let Some((first, _)) = states.first() else {
            return Ok(Vec::new());
        };
        let (_, cols) = first.dynamic_block();
        // Block-diagonal: each state's nodes (and messages) follow the previous state's. The
        // offsets are known up front (messages: both directions of every edge, and self
        // loops), so every block is built already shifted, in parallel, and only copied here.
        let mut node_off = Vec::with_capacity(states.len());
        let mut msg_off = Vec::with_capacity(states.len());
        let (mut nodes, mut msgs) = (0usize, 0usize);
        for (ep, _) in states {
            node_off.push(nodes as u32);
            msg_off.push(msgs as u32);
            nodes += ep.num_nodes();
            msgs += 2 * ep.edit_graph().num_edges() + ep.num_nodes();
        }
        if u32::try_from(msgs.max(nodes)).is_err() {
            return Err(crate::error::RlError::InvalidConfig(format!(
                "a batch of {msgs} messages exceeds 32-bit indices: explain fewer targets at once"
            )));
        }
        let items: Vec<(&Episode<'_>, u32, u32)> = states
            .iter()
            .zip(node_off.iter().zip(&msg_off))
            .map(|((ep, _), (&off, &base))| (*ep, off, base))
            .collect();
        let parts = induce_explain::parallel::map(&items, threads, |&(ep, off, base)| {
            let (small, c) = ep.dynamic_block();
            if c != cols {
                return Err(crate::error::RlError::InvalidConfig(format!(
                    "a batch mixes state layouts (columns {c:?} and {cols:?})"
                )));
            }
            let n = ep.num_nodes();
            let (mut m, ptr) = Messages::new(n, &ep.edit_graph().edges())?.by_destination(n);
            m.src
                .iter_mut()
                .chain(m.dst.iter_mut())
                .for_each(|v| *v += off);
            let ptr: Vec<u32> = ptr[1..].iter().map(|v| v + base).collect();
            let c = ep.candidates();
            let cu: Vec<u32> = c.u.iter().map(|v| v + off).collect();
            let cw: Vec<u32> = c.w.iter().map(|v| v + off).collect();
            Ok((small, m, ptr, (cu, cw, c.flag())))
        })?;
        let (mut small, mut src, mut dst, mut norm) = (
            Vec::with_capacity(nodes * cols.len()),
            Vec::with_capacity(msgs),
            Vec::with_capacity(msgs),
            Vec::with_capacity(msgs),
        );
        let (mut cu, mut cw, mut flag, mut counts) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut ptr = Vec::with_capacity(nodes + 1);
        ptr.push(0u32);
        for (s, m, p, (u, w, f)) in parts {
            small.extend_from_slice(s);
            ptr.extend_from_slice(&p);
            src.extend_from_slice(&m.src);
            dst.extend_from_slice(&m.dst);
            norm.extend_from_slice(&m.norm);
            counts.push(u.len());
            cu.extend_from_slice(&u);
            cw.extend_from_slice(&w);
            flag.extend_from_slice(&f);
        }
        let off = nodes as u32;
        let n = off as usize;
        let d = &self.device;
        let g = GraphTensors::forward_only(n, Messages { src, dst, norm }, &ptr, d)?;
        let product = match states {
            [(_, cache)] => cache.product.clone(),
            _ => Tensor::cat(states.iter().map(|(_, c)| c.product.clone()).collect(), 0),
        };
        let rest = matrix(&small, n, cols.len(), d);
        let emb = self.policy.embed_with_product(product, rest, cols, &g)?;
        let c = CandidateTensors::new(&cu, &cw, &flag, d);
        let scores = to_vec(
            self.policy
                .score_blocks(emb, &c, SCORE_BLOCK)
                .unsqueeze_dim(0),
        );
        let mut blocks = Vec::with_capacity(states.len());
        let mut rest = scores.as_slice();
        for &k in &counts {
            let (head, tail) = rest.split_at(k);
            blocks.push(head);
            rest = tail;
        }
        induce_explain::parallel::map(&blocks, threads, |b| Ok(log_softmax(b)))
    }
}

impl Actor for BurnActor {
    type Cache = BurnCache;

    fn prepare(&self, ep: &Episode<'_>) -> Result<BurnCache> {
        self.feature_product(ep)
    }

    fn log_probs(&self, ep: &Episode<'_>, cache: &BurnCache) -> Result<Vec<f32>> {
        let mut out = self.packed_log_probs(&[(ep, cache)], 1)?;
        Ok(out.remove(0))
    }

    /// One block-diagonal batch for all states, except for a policy with node BatchNorm (its
    /// statistics are per state): those are scored one by one.
    fn log_probs_batch(
        &self,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Vec<Vec<f32>>> {
        match self.policy.norm.is_empty() {
            true => self.packed_log_probs(states, threads),
            false => states
                .iter()
                .map(|&(ep, cache)| self.log_probs(ep, cache))
                .collect(),
        }
    }
}

/// One visited state of a rolled-out episode.
pub struct StepRecord {
    pub(super) state: Vec<f32>,
    pub(super) num_nodes: usize,
    pub(super) edges: Vec<(u32, u32)>,
    pub(super) cand_u: Vec<u32>,
    pub(super) cand_w: Vec<u32>,
    pub(super) flag: Vec<f32>,
    pub(super) action: usize,
    pub(super) reward: f32,
}

/// The record of `ep`'s current state (its action and reward are filled in later).
fn record(ep: &Episode<'_>) -> StepRecord {
    let (state, num_nodes, _) = ep.state();
    let c = ep.candidates();
    StepRecord {
        state,
        num_nodes,
        edges: ep.edit_graph().edges(),
        cand_u: c.u.clone(),
        cand_w: c.w.clone(),
        flag: c.flag(),
        action: 0,
        reward: 0.0,
    }
}

/// The Burn kernel learning: the policy on the autodiff device, its plain copy for rollouts and
/// Burn's Adam.
pub struct BurnLearner {
    /// `None` only while an update moves it through the optimiser.
    trained: Option<Policy>,
    actor: BurnActor,
    optim: ModuleOptimizer,
    autodiff: Device,
}

impl BurnLearner {
    /// Starts learning from `policy` (copied exactly) on `device`'s autodiff version.
    pub fn new(policy: &Policy, device: &Device) -> Self {
        let autodiff = device.clone().autodiff();
        let trained = HostPolicy::from_policy(policy).to_policy(&autodiff);
        Self {
            actor: BurnActor {
                policy: trained.valid(),
                device: device.clone(),
            },
            trained: Some(trained),
            optim: AdamConfig::new().init(),
            autodiff,
        }
    }

    pub(super) fn trained(&self) -> &Policy {
        self.trained
            .as_ref()
            .expect("the policy is back after every update")
    }

    /// The batch loss on the autodiff device.
    ///
    /// # Shapes
    /// - returns: `[steps]`, flattened in episode then step order
    /// - output: `[1]`
    pub(super) fn batch_loss(
        &self,
        episodes: &[Vec<StepRecord>],
        returns: &[f32],
        config: &InduceConfig,
    ) -> Result<Tensor<1>> {
        let policy = self.trained();
        let ad = &self.autodiff;
        let steps: Vec<&StepRecord> = episodes.iter().flatten().collect();
        let dim = policy.input_dim();
        // Block-diagonal batch of every visited state.
        let (mut x, mut src, mut dst, mut norm) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut cu, mut cw, mut flag, mut seg, mut chosen) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut node_off, mut cand_off) = (0u32, 0u32);
        for (s, rec) in steps.iter().enumerate() {
            x.extend_from_slice(&rec.state);
            let m = Messages::new(rec.num_nodes, &rec.edges)?;
            src.extend(m.src.iter().map(|v| v + node_off));
            dst.extend(m.dst.iter().map(|v| v + node_off));
            norm.extend(m.norm);
            cu.extend(rec.cand_u.iter().map(|v| v + node_off));
            cw.extend(rec.cand_w.iter().map(|v| v + node_off));
            flag.extend_from_slice(&rec.flag);
            seg.extend(std::iter::repeat_n(s as u32, rec.cand_u.len()));
            chosen.push(cand_off + rec.action as u32);
            node_off += rec.num_nodes as u32;
            cand_off += rec.cand_u.len() as u32;
        }
        let n = node_off as usize;
        let g = GraphTensors::from_messages(n, &Messages { src, dst, norm }, ad);
        let xs = matrix(&x, n, dim, ad);
        let c = CandidateTensors::new(&cu, &cw, &flag, ad);
        let num_steps = steps.len();
        let seg_t = indices(&seg, ad);
        let scores = policy.score(policy.embed(xs, &g), &c);
        let c_total = scores.dims()[0];
        let logp = segment_log_softmax(scores.reshape([c_total, 1]), seg_t.clone(), num_steps);
        let entropy = -scatter_add_rows(logp.clone().exp() * logp.clone(), seg_t, num_steps);
        let chosen_logp = logp.select(0, indices(&chosen, ad));
        let adv = Tensor::<2>::from_data(TensorData::new(returns.to_vec(), [num_steps, 1]), ad);
        let objective = chosen_logp * adv + entropy * config.entropy_coef;
        Ok(-objective.sum() / episodes.len() as f32)
    }
}

impl Actor for BurnLearner {
    type Cache = BurnCache;

    fn prepare(&self, ep: &Episode<'_>) -> Result<BurnCache> {
        self.actor.prepare(ep)
    }

    fn log_probs(&self, ep: &Episode<'_>, cache: &BurnCache) -> Result<Vec<f32>> {
        self.actor.log_probs(ep, cache)
    }

    fn log_probs_batch(
        &self,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Vec<Vec<f32>>> {
        self.actor.log_probs_batch(states, threads)
    }
}

impl Learner for BurnLearner {
    type Step = StepRecord;

    /// The host threads that build each step's batch and step the episodes (a batch's
    /// rollouts advance in lockstep, scored in one block-diagonal forward pass per step).
    fn threads(&self) -> usize {
        induce_explain::parallel::default_threads()
    }

    fn observe(
        &self,
        ep: &Episode<'_>,
        cache: &BurnCache,
        _: bool,
    ) -> Result<(Vec<f32>, StepRecord)> {
        Ok((self.actor.log_probs(ep, cache)?, record(ep)))
    }

    fn observe_batch(
        &self,
        states: &[(&Episode<'_>, &BurnCache)],
        _: bool,
    ) -> Result<Vec<(Vec<f32>, StepRecord)>> {
        let log_probs = self.actor.log_probs_batch(states, self.threads())?;
        Ok(states
            .iter()
            .zip(log_probs)
            .map(|((ep, _), logp)| (logp, record(ep)))
            .collect())
    }

    fn complete(step: &mut StepRecord, action: usize, reward: f32) {
        (step.action, step.reward) = (action, reward);
    }

    fn reward(step: &StepRecord) -> f32 {
        step.reward
    }

    fn update(
        &mut self,
        episodes: &[Vec<StepRecord>],
        returns: &[f32],
        config: &InduceConfig,
    ) -> Result<()> {
        let loss = self.batch_loss(episodes, returns, config)?;
        let policy = self
            .trained
            .take()
            .expect("the policy is back after every update");
        let grads = GradientsParams::from_grads(loss.backward(), &policy);
        let policy = self.optim.step(config.lr, policy, grads);
        self.actor.policy = policy.valid();
        self.trained = Some(policy);
        Ok(())
    }

    fn to_policy(&self, _: &Device) -> Policy {
        self.trained().valid()
    }
}
