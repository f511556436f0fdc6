//! The Burn side of the seam: [`BurnActor`] (a policy on a plain device: forward passes) and
//! [`BurnLearner`] (the policy on the device's autodiff version and Burn's Adam).
//!
//! Rollouts run without autodiff and record every visited state; an update replays all states
//! of a batch as one block-diagonal graph on the autodiff device: one forward, one `backward()`
//! and one Adam step per batch.

use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, Tensor, TensorData};
use induce_models::kernels::tensors::index_tensor_below;
use induce_models::kernels::tensors::{GraphTensors, Messages, indices, matrix, scatter_add_rows};
use induce_models::kernels::tensors::{segment_log_softmax, try_indices, try_to_vec};
use induce_models::policy::host::{HostPolicy, log_softmax};
use induce_models::{CandidateTensors, Policy};

pub use super::burn_cache::BurnCache;
use super::burn_cache::{CacheProduct, split};
use super::resident::Resident;
use super::{Actor, Learner, Rounds};
use crate::config::InduceConfig;
use crate::env::Episode;
use crate::error::Result;
use crate::profile::{self, Count, Phase};

/// Candidates scored per block of the MLP in a batch ([`Policy::score_blocks`]) on the CPU:
/// bounds its intermediate tensors (17 MB for the first layer's input) however many targets
/// are batched.
const SCORE_BLOCK: usize = 1 << 17;

/// The same on a GPU: blocks 32 times larger (about 0.5 GB for the first layer's input), so a
/// batch of hundreds of neighbourhoods (~10^7 candidates) takes a few blocks, not hundreds of
/// launch sequences.
const SCORE_BLOCK_GPU: usize = 1 << 22;

/// Largest graph (nodes × feature columns) whose whole feature product
/// [`BurnOptions::graph_product`] computes on the device: 2²⁸ values, a 1 GiB upload; larger
/// graphs take each episode's own rows.
const GRAPH_PRODUCT_MAX: usize = 1 << 28;

/// How the Burn kernel lays its work out on the device. [`BurnOptions::for_device`] turns both
/// on for a GPU, where each saves transfers, and off on the CPU; results do not depend on the
/// batch either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BurnOptions {
    /// The first GAT layer's product over the node features is computed once over the whole
    /// graph's nodes (cached until the graph or the policy changes) and each episode gathers
    /// its rows from it, instead of one upload and product per episode: the neighbourhoods of
    /// a batch overlap (Amazon-Photo's 3-hop ones hold two thirds of the graph each). Graphs
    /// over 2²⁸ feature values take the per-episode product.
    pub graph_product: bool,
    /// Greedy choices are taken on the device ([`induce_models::kernels::spmm::segment_greedy`]:
    /// one index per state comes back instead of every candidate's score), by the host's rule (the
    /// first largest log-probability; a GPU's `exp` and `ln` may round a state's log-sum-exp
    /// another way, which matters only where two scores are that close).
    pub greedy_on_device: bool,
    /// The batch of a lockstep play stays on the device between its rounds
    /// ([`Actor::greedy_round`]; `kernel/resident.rs`): packed and uploaded once, then
    /// each round toggles the messages and candidates its edits touched and uploads the
    /// changing state columns only, instead of the whole batch.
    pub resident: bool,
}

impl BurnOptions {
    /// All on for a GPU device, all off otherwise. The process's
    /// [`Tuning::gpu_layout`](induce_models::device::Tuning::gpu_layout) (`INDUCE_GPU_LAYOUT=
    /// per-episode` in a binary) turns them off on a GPU too (to measure what they save), `gpu`
    /// on on the CPU (to run a GPU's code path on a machine without one);
    /// [`Tuning::resident`](induce_models::device::Tuning::resident) (`INDUCE_RESIDENT=0|1`)
    /// sets [`BurnOptions::resident`] alone.
    pub fn for_device(device: &Device) -> Self {
        let tuning = induce_models::device::tuning();
        let gpu = tuning
            .gpu_layout
            .unwrap_or_else(|| induce_models::device::is_gpu(device));
        let resident = tuning.resident.unwrap_or(gpu);
        Self {
            graph_product: gpu,
            greedy_on_device: gpu,
            resident,
        }
    }
}

/// The whole graph's features on the device and their product ([`BurnOptions::graph_product`]),
/// with what they were computed from. The features stay when the policy changes (a training
/// update): only the product is recomputed, on the device.
#[derive(Debug)]
struct GraphProduct {
    /// [`induce_graph::Features::id`] of the graph's features.
    features: u64,
    /// The features, `[N, d]`.
    uploaded: Tensor<2>,
    /// `F · W₁[cols]`, `[N, hidden]`, for the current policy (`None` after an update), with
    /// its [`next_generation`] number.
    product: Option<(std::ops::Range<usize>, Tensor<2>, u64)>,
}

/// A number no other graph-wide product had (each product computed gets one, so that caches
/// gathering rows from the same one can be gathered together).
fn next_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A policy on a plain (non-autodiff) device: the Burn kernel's forward pass.
#[derive(Debug, Clone)]
pub struct BurnActor {
    policy: Policy,
    device: Device,
    options: BurnOptions,
    /// Shared by the clones of one actor (same policy); emptied when the policy changes.
    graph_product: std::sync::Arc<std::sync::Mutex<Option<GraphProduct>>>,
}

impl BurnActor {
    /// `policy` (without its autodiff graph) on `device`, laid out as suits the device
    /// ([`BurnOptions::for_device`]).
    pub fn new(policy: &Policy, device: &Device) -> Self {
        Self::with_options(policy, device, BurnOptions::for_device(device))
    }

    /// [`BurnActor::new`] with the layout given.
    pub fn with_options(policy: &Policy, device: &Device, options: BurnOptions) -> Self {
        Self {
            policy: policy.valid().to_device(device),
            device: device.clone(),
            options,
            graph_product: Default::default(),
        }
    }

    /// Replaces the policy (its weights changed) and drops what was computed from the old one.
    fn set_policy(&mut self, policy: Policy) {
        self.policy = policy;
        let mut slot = self
            .graph_product
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(p) = slot.as_mut() {
            p.product = None;
        }
    }

    /// The product of the whole graph's features `g` with `W₁[cols]`, from the cache when it
    /// holds this graph's (the features are uploaded once per graph, the product once per
    /// policy); `None` for a graph over [`GRAPH_PRODUCT_MAX`] values.
    fn graph_product(
        &self,
        g: &induce_graph::Features,
        cols: std::ops::Range<usize>,
    ) -> Result<Option<(Tensor<2>, u64)>> {
        if g.num_nodes().saturating_mul(g.dim()) > GRAPH_PRODUCT_MAX {
            return Ok(None);
        }
        let mut slot = self
            .graph_product
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.as_ref().is_none_or(|p| p.features != g.id()) {
            *slot = Some(GraphProduct {
                features: g.id(),
                uploaded: matrix(g.as_slice(), g.num_nodes(), g.dim(), &self.device),
                product: None,
            });
        }
        let p = slot.as_mut().expect("filled above");
        if let Some((c, product, generation)) = &p.product
            && *c == cols
        {
            return Ok(Some((product.clone(), *generation)));
        }
        let product = self
            .policy
            .block_product(p.uploaded.clone(), cols.clone())?;
        let generation = next_generation();
        p.product = Some((cols, product.clone(), generation));
        Ok(Some((product, generation)))
    }
}

impl BurnActor {
    /// The policy's product over `ep`'s node features, on the device.
    fn feature_product(&self, ep: &Episode<'_>) -> Result<BurnCache> {
        let cols = ep.feature_columns();
        if self.options.graph_product
            && let Some((whole, generation)) =
                self.graph_product(ep.graph_features(), cols.clone())?
        {
            return Ok(BurnCache {
                product: CacheProduct::Rows {
                    whole,
                    generation,
                    rows: ep.subgraph().nodes.as_slice().into(),
                    bound: ep.graph_features().num_nodes(),
                },
            });
        }
        let (features, _) = ep.feature_block();
        let f = matrix(
            features.as_slice(),
            features.num_nodes(),
            features.dim(),
            &self.device,
        );
        Ok(BurnCache {
            product: CacheProduct::Own(self.policy.block_product(f, cols)?),
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
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let (scores, counts) = self.packed_scores(states, threads)?;
        let scores = profile::time(Phase::Device, || {
            induce_models::timing::span("policy: download of the scores", &self.device, || {
                try_to_vec(scores.unsqueeze_dim(0), "the policy's scores")
            })
        })?;
        let mut blocks = Vec::with_capacity(states.len());
        let mut rest = scores.as_slice();
        for &k in &counts {
            let (head, tail) = rest.split_at(k);
            blocks.push(head);
            rest = tail;
        }
        let jobs: Vec<(&Episode<'_>, &[f32])> =
            states.iter().map(|(ep, _)| *ep).zip(blocks).collect();
        profile::time(Phase::Softmax, || {
            induce_explain::parallel::map(&jobs, threads, |(ep, b)| Ok(super::with_prior(ep, b)))
        })
    }

    /// The greedy action of every state of `states` ([`BurnOptions::greedy_on_device`]): the
    /// batch is scored as in [`BurnActor::packed_log_probs`], and each state's greedy choice
    /// (the first largest log-probability) is found on the device; one index per state is
    /// downloaded.
    ///
    /// # Shapes
    /// - output: `[B]`
    fn packed_greedy(
        &self,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Vec<usize>> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let (scores, counts) = self.packed_scores(states, threads)?;
        let mut ptr = Vec::with_capacity(counts.len() + 1);
        ptr.push(0u32);
        for &k in &counts {
            ptr.push(ptr[ptr.len() - 1] + k as u32);
        }
        let bound = scores.dims()[0] + 1;
        let d = &self.device;
        let chosen = profile::time(Phase::Device, || {
            induce_models::timing::span(
                "policy: greedy choices (on the device) + download",
                d,
                || {
                    let ptr = index_tensor_below(ptr, bound, d);
                    let chosen = induce_models::kernels::spmm::segment_greedy(ptr, scores);
                    try_indices(chosen, "the policy's greedy choices")
                },
            )
        })?;
        let chosen: Vec<usize> = chosen.into_iter().map(|a| a as usize).collect();
        match chosen.iter().zip(&counts).all(|(&a, &k)| a < k) {
            true => Ok(chosen),
            false => Err(crate::error::RlError::InvalidConfig(
                "the device's greedy choice fell outside its state's candidates".into(),
            )),
        }
    }

    /// Scores every candidate of `states`, packed as one block-diagonal batch: the scores stay
    /// on the device, concatenated in the states' order, with each state's number of candidates.
    ///
    /// # Shapes
    /// - output: `[Σ C_b]`, `[B]`
    fn packed_scores(
        &self,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<(Tensor<1>, Vec<usize>)> {
        let p = profile::time(Phase::Pack, || Packed::new(states, threads))?;
        profile::add(Count::Packs, 1);
        profile::add(
            Count::Uploaded,
            2 * p.src.len() + p.ptr.len() + p.small.len() + 3 * p.cu.len(),
        );
        profile::add(Count::Nodes, p.nodes);
        profile::add(Count::Messages, p.src.len());
        profile::add(Count::Candidates, p.cu.len());
        let d = &self.device;
        let cols = p.cols.clone();
        let (g, rest, c) = profile::time(Phase::Upload, || -> Result<_> {
            Ok((
                GraphTensors::forward_only(p.nodes, p.src, p.dst, p.ptr, d)?,
                Tensor::from_data(TensorData::new(p.small, [p.nodes, p.cols.len()]), d),
                CandidateTensors::from_vecs(p.cu, p.cw, p.flag, d),
            ))
        })?;
        let scores = profile::time(Phase::Device, || -> Result<Tensor<1>> {
            let start = std::time::Instant::now();
            let caches: Vec<&BurnCache> = states.iter().map(|(_, c)| *c).collect();
            let product = BurnCache::stacked(&caches);
            let emb = induce_models::timing::span("policy: GAT embedding (all layers)", d, || {
                self.policy.embed_with_product(product, rest, cols, &g)
            })?;
            if profile::enabled() {
                // Only when profiling: wait for the GAT so its time shows apart from scoring.
                let _ = d.sync();
                profile::add_time(Phase::Embed, start.elapsed());
            }
            Ok(induce_models::timing::span(
                "policy: scoring MLP",
                d,
                || self.policy.score_blocks(emb, &c, self.score_block()),
            ))
        })?;
        Ok((scores, p.counts))
    }
}

impl BurnActor {
    /// The batch of `states` kept on the device in `rounds` ([`BurnOptions::resident`]),
    /// brought up to date or packed anew; `None` where it does not apply (the option off, a
    /// policy with node BatchNorm, states it cannot lay out: those rounds take
    /// [`BurnActor::packed_scores`]).
    fn resident<'r>(
        &self,
        rounds: &'r mut Rounds,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Option<&'r Resident>> {
        if !self.options.resident || !self.policy.norm.is_empty() || rounds.off || states.is_empty()
        {
            return Ok(None);
        }
        let d = &self.device;
        let current = match rounds
            .kept
            .as_mut()
            .and_then(|k| k.downcast_mut::<Resident>())
        {
            Some(r) => r.update(states)?,
            None => false,
        };
        if !current {
            rounds.kept = None;
            match Resident::pack(states, threads, d)? {
                Some(r) => {
                    rounds.packs += 1;
                    profile::add(Count::Packs, 1);
                    rounds.kept = Some(Box::new(r));
                }
                None => {
                    rounds.off = true;
                    return Ok(None);
                }
            }
        }
        let r = rounds
            .kept
            .as_ref()
            .and_then(|k| k.downcast_ref::<Resident>())
            .expect("kept above");
        let (nodes, msgs, cands) = r.sizes();
        profile::add(Count::Nodes, nodes);
        profile::add(Count::Messages, msgs);
        profile::add(Count::Candidates, cands);
        Ok(Some(r))
    }

    /// Candidates scored per MLP block on this device.
    fn score_block(&self) -> usize {
        match induce_models::device::is_gpu(&self.device) {
            true => SCORE_BLOCK_GPU,
            false => SCORE_BLOCK,
        }
    }
}

/// A batch of states laid out block-diagonally on the host, ready to upload: each state's
/// nodes (and messages) follow the previous state's.
struct Packed {
    /// Nodes in all.
    nodes: usize,
    /// The state columns that change during an episode, `[nodes, cols.len()]` row-major.
    small: Vec<f32>,
    cols: std::ops::Range<usize>,
    /// Messages (both directions of every edge, self loops), sorted by destination: their
    /// sources and destinations.
    src: Vec<u32>,
    dst: Vec<u32>,
    /// CSR offsets of `messages`, `[nodes + 1]`.
    ptr: Vec<u32>,
    /// Candidate endpoints and flags, concatenated; `counts[b]` candidates per state.
    cu: Vec<u32>,
    cw: Vec<u32>,
    flag: Vec<f32>,
    counts: Vec<usize>,
}

impl Packed {
    /// Packs `states` (at least one) on `threads` host threads. Every state's offsets (nodes,
    /// messages: both directions of every edge and the self loops, candidates) are known up
    /// front, so each state writes its block, already shifted, straight into its own part of
    /// the batch's buffers, in parallel.
    fn new(states: &[(&Episode<'_>, &BurnCache)], threads: usize) -> Result<Self> {
        let (_, cols) = states[0].0.dynamic_block();
        let width = cols.len();
        let (mut nodes, mut msgs, mut cands) = (0usize, 0usize, 0usize);
        let mut sizes = Vec::with_capacity(states.len());
        for (ep, _) in states {
            let (n, m, c) = (
                ep.num_nodes(),
                2 * ep.edit_graph().num_edges() + ep.num_nodes(),
                ep.candidates().len(),
            );
            sizes.push((nodes as u32, msgs as u32, n, m, c));
            (nodes, msgs, cands) = (nodes + n, msgs + m, cands + c);
        }
        if u32::try_from(msgs.max(nodes)).is_err() {
            return Err(crate::error::RlError::InvalidConfig(format!(
                "a batch of {msgs} messages exceeds 32-bit indices: explain fewer targets at once"
            )));
        }
        let mut p = Packed {
            nodes,
            small: vec![0.0; nodes * width],
            cols: cols.clone(),
            src: vec![0; msgs],
            dst: vec![0; msgs],
            ptr: vec![0; nodes + 1],
            cu: vec![0; cands],
            cw: vec![0; cands],
            flag: vec![0.0; cands],
            counts: sizes.iter().map(|s| s.4).collect(),
        };
        let mut small = split(&mut p.small, sizes.iter().map(|s| s.2 * width));
        let mut src = split(&mut p.src, sizes.iter().map(|s| s.3));
        let mut dst = split(&mut p.dst, sizes.iter().map(|s| s.3));
        let mut ptr = split(&mut p.ptr[1..], sizes.iter().map(|s| s.2));
        let mut cu = split(&mut p.cu, sizes.iter().map(|s| s.4));
        let mut cw = split(&mut p.cw, sizes.iter().map(|s| s.4));
        let mut flag = split(&mut p.flag, sizes.iter().map(|s| s.4));
        let mut jobs: Vec<_> = states
            .iter()
            .zip(&sizes)
            .map(|((ep, _), &(off, base, ..))| {
                let out = (
                    small.pop_front().expect("one part per state"),
                    src.pop_front().expect("one part per state"),
                    dst.pop_front().expect("one part per state"),
                    ptr.pop_front().expect("one part per state"),
                    (
                        cu.pop_front().expect("one part per state"),
                        cw.pop_front().expect("one part per state"),
                        flag.pop_front().expect("one part per state"),
                    ),
                );
                (*ep, off, base, out)
            })
            .collect();
        induce_explain::parallel::map_mut(&mut jobs, threads, |(ep, off, base, out)| {
            let (off, base) = (*off, *base);
            let (small, src, dst, ptr, (cu, cw, flag)) = out;
            let (block, c) = ep.dynamic_block();
            if c != cols {
                return Err(crate::error::RlError::InvalidConfig(format!(
                    "a batch mixes state layouts (columns {c:?} and {cols:?})"
                )));
            }
            small.copy_from_slice(block);
            let n = ep.num_nodes();
            let (m, offsets) = Messages::new(n, &ep.edit_graph().edges())?.by_destination(n);
            shifted(src, &m.src, off);
            shifted(dst, &m.dst, off);
            shifted(ptr, &offsets[1..], base);
            let c = ep.candidates();
            shifted(cu, &c.u, off);
            shifted(cw, &c.w, off);
            flag.copy_from_slice(&c.flag());
            Ok(())
        })?;
        Ok(p)
    }
}

/// `out[i] = from[i] + by`.
fn shifted(out: &mut [u32], from: &[u32], by: u32) {
    out.iter_mut().zip(from).for_each(|(o, &v)| *o = v + by);
}

impl Actor for BurnActor {
    type Cache = BurnCache;

    fn prepare(&self, ep: &Episode<'_>) -> Result<BurnCache> {
        super::check_state_fits(self.policy.input_dim(), ep)?;
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

    /// On the device with [`BurnOptions::greedy_on_device`] (one index per state comes back),
    /// else from [`Actor::log_probs_batch`].
    fn greedy_batch(
        &self,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Vec<usize>> {
        match self.options.greedy_on_device
            && self.policy.norm.is_empty()
            && !super::any_prior(states)
        {
            true => self.packed_greedy(states, threads),
            false => super::greedy_from_log_probs(self, states, threads),
        }
    }

    /// On the batch kept on the device ([`BurnOptions::resident`]): its candidates scored, each
    /// state's greedy choice found on the device among its unused ones; else
    /// [`Actor::greedy_batch`].
    fn greedy_round(
        &self,
        rounds: &mut Rounds,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Vec<usize>> {
        if !self.options.greedy_on_device || super::any_prior(states) {
            return super::greedy_from_log_probs_round(self, rounds, states, threads);
        }
        let Some(r) = self.resident(rounds, states, threads)? else {
            return self.greedy_batch(states, threads);
        };
        let d = &self.device;
        let chosen = profile::time(Phase::Device, || -> Result<_> {
            let scores = r.scores(&self.policy, self.score_block())?;
            let chosen = induce_models::timing::span(
                "policy: greedy choices (on the device) + download",
                d,
                || induce_models::kernels::spmm::segment_greedy(r.cand_ptr(), scores),
            );
            Ok(try_indices(chosen, "the policy's greedy choices")?)
        })?;
        states
            .iter()
            .zip(r.slots_of(states))
            .map(|((ep, _), i)| {
                let (range, used) = r.candidates_of(i);
                let pick = u32::try_from(chosen[i])
                    .ok()
                    .filter(|&c| (c as usize) < range.len());
                pick.filter(|c| used.binary_search(c).is_err())
                    .map(|c| c as usize - used.partition_point(|&x| x < c))
                    .filter(|&c| c < ep.candidates().len())
            })
            .collect::<Option<Vec<usize>>>()
            .map_or_else(
                // A choice that lands on a used candidate (a NaN score makes the log-sum-exp
                // NaN, and the host's rule then takes the last position): this round from the
                // scores of the current candidates.
                || super::greedy_from_log_probs_round(self, rounds, states, threads),
                Ok,
            )
    }

    /// On the batch kept on the device ([`BurnOptions::resident`]): its candidates scored and
    /// downloaded, each state's log-softmax over its unused ones on the host; else
    /// [`Actor::log_probs_batch`].
    fn log_probs_round(
        &self,
        rounds: &mut Rounds,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Vec<Vec<f32>>> {
        let Some(r) = self.resident(rounds, states, threads)? else {
            return self.log_probs_batch(states, threads);
        };
        let d = &self.device;
        let scores = profile::time(Phase::Device, || -> Result<_> {
            let scores = r.scores(&self.policy, self.score_block())?;
            Ok(induce_models::timing::span(
                "policy: download of the scores",
                d,
                || try_to_vec(scores.unsqueeze_dim(0), "the policy's scores"),
            )?)
        })?;
        let parts: Vec<(std::ops::Range<usize>, &[u32])> = r
            .slots_of(states)
            .into_iter()
            .map(|i| r.candidates_of(i))
            .collect();
        profile::time(Phase::Softmax, || {
            induce_explain::parallel::map(&parts, threads, |(range, used)| {
                let mut kept = Vec::with_capacity(range.len() - used.len());
                let mut skip = used.iter().peekable();
                for (k, &v) in scores[range.clone()].iter().enumerate() {
                    if skip.peek().is_some_and(|&&u| u as usize == k) {
                        skip.next();
                        continue;
                    }
                    kept.push(v);
                }
                Ok(log_softmax(&kept))
            })
        })
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
    /// The estimated layout's prior on each candidate's score (empty without it).
    pub(super) prior: Vec<f32>,
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
        prior: (c.estimate().unwrap_or_default().iter())
            .map(|e| super::PRIOR_WEIGHT * e)
            .collect(),
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
            actor: BurnActor::with_options(&trained, device, BurnOptions::for_device(device)),
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

    /// The log-probabilities and entropies of every visited state of `episodes`, packed into
    /// one block-diagonal batch on the autodiff device, and each state's first candidate's row.
    ///
    /// # Shapes
    /// - output: log-probabilities `[candidates of all steps, 1]`, entropies `[steps, 1]`,
    ///   offsets `[steps]`
    fn batch_log_probs(
        &self,
        episodes: &[Vec<StepRecord>],
    ) -> Result<(Tensor<2>, Tensor<2>, Vec<u32>)> {
        let policy = self.trained();
        let ad = &self.autodiff;
        let steps: Vec<&StepRecord> = episodes.iter().flatten().collect();
        let dim = policy.input_dim();
        let (mut x, mut src, mut dst, mut norm) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut cu, mut cw, mut flag, mut seg, mut offsets) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut prior: Vec<f32> = Vec::new();
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
            match rec.prior.is_empty() {
                true => prior.extend(std::iter::repeat_n(0.0, rec.cand_u.len())),
                false => prior.extend_from_slice(&rec.prior),
            }
            offsets.push(cand_off);
            node_off += rec.num_nodes as u32;
            cand_off += rec.cand_u.len() as u32;
        }
        let n = node_off as usize;
        let g = GraphTensors::from_messages(n, &Messages { src, dst, norm }, ad);
        let xs = matrix(&x, n, dim, ad);
        let c = CandidateTensors::new(&cu, &cw, &flag, ad);
        let num_steps = steps.len();
        let seg_t = indices(&seg, ad);
        let mut scores = policy.score(policy.embed(xs, &g), &c);
        let c_total = scores.dims()[0];
        if prior.iter().any(|&p| p != 0.0) {
            scores = scores + Tensor::<1>::from_data(TensorData::new(prior, [c_total]), ad);
        }
        let logp = segment_log_softmax(scores.reshape([c_total, 1]), seg_t.clone(), num_steps);
        let entropy = -scatter_add_rows(logp.clone().exp() * logp.clone(), seg_t, num_steps);
        Ok((logp, entropy, offsets))
    }

    /// The REINFORCE batch loss on the autodiff device.
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
        let ad = &self.autodiff;
        let (logp, entropy, offsets) = self.batch_log_probs(episodes)?;
        let chosen: Vec<u32> = episodes
            .iter()
            .flatten()
            .zip(&offsets)
            .map(|(rec, off)| off + rec.action as u32)
            .collect();
        let chosen_logp = logp.select(0, indices(&chosen, ad));
        let adv = Tensor::<2>::from_data(TensorData::new(returns.to_vec(), [offsets.len(), 1]), ad);
        let objective = chosen_logp * adv + entropy * config.train.entropy_coef;
        Ok(-objective.sum() / episodes.len() as f32)
    }

    /// The listwise batch loss of [`Learner::update_listwise`] on the autodiff device.
    ///
    /// # Shapes
    /// - weights: `[steps][(candidate, weight)]`, flattened in episode then step order
    /// - output: `[1]`
    pub(super) fn listwise_loss(
        &self,
        episodes: &[Vec<StepRecord>],
        weights: &[Vec<(usize, f32)>],
        entropy_coef: f32,
    ) -> Result<Tensor<1>> {
        let ad = &self.autodiff;
        let (logp, entropy, offsets) = self.batch_log_probs(episodes)?;
        let (mut rows, mut w) = (Vec::new(), Vec::new());
        for (list, off) in weights.iter().zip(&offsets) {
            for &(a, wa) in list {
                rows.push(off + a as u32);
                w.push(wa);
            }
        }
        let mut objective = entropy.sum() * entropy_coef;
        if !rows.is_empty() {
            let n = rows.len();
            let picked = logp.select(0, indices(&rows, ad));
            let w = Tensor::<2>::from_data(TensorData::new(w, [n, 1]), ad);
            objective = objective + (picked * w).sum();
        }
        Ok(-objective / episodes.len() as f32)
    }

    /// One Adam step on `loss`.
    fn step(&mut self, loss: Tensor<1>, lr: f64) {
        let policy = self
            .trained
            .take()
            .expect("the policy is back after every update");
        let grads = GradientsParams::from_grads(loss.backward(), &policy);
        let policy = self.optim.step(lr, policy, grads);
        self.actor.set_policy(policy.valid());
        self.trained = Some(policy);
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

    fn greedy_batch(
        &self,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Vec<usize>> {
        self.actor.greedy_batch(states, threads)
    }

    fn greedy_round(
        &self,
        rounds: &mut Rounds,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Vec<usize>> {
        self.actor.greedy_round(rounds, states, threads)
    }

    fn log_probs_round(
        &self,
        rounds: &mut Rounds,
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
    ) -> Result<Vec<Vec<f32>>> {
        self.actor.log_probs_round(rounds, states, threads)
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
        self.step(loss, config.train.lr);
        Ok(())
    }

    fn update_listwise(
        &mut self,
        episodes: &[Vec<StepRecord>],
        weights: &[Vec<(usize, f32)>],
        entropy_coef: f32,
        lr: f64,
    ) -> Result<()> {
        let loss = self.listwise_loss(episodes, weights, entropy_coef)?;
        self.step(loss, lr);
        Ok(())
    }

    fn to_policy(&self, _: &Device) -> Policy {
        self.trained().valid()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{EnvConfig, Episode};
    use induce_graph::{Features, Graph};
    use induce_models::kernels::tensors::to_vec;
    use induce_models::testing::test_device;
    use induce_models::{GcnConfig, Kernel, PolicyConfig, gcn_black_box};

    /// The episodes still playing, each with its cache.
    fn playing<'a, 'g>(
        eps: &'a [Episode<'g>],
        caches: &'a [BurnCache],
    ) -> Vec<(&'a Episode<'g>, &'a BurnCache)> {
        eps.iter()
            .zip(caches)
            .filter(|(e, _)| !e.is_done())
            .collect()
    }

    /// The whole graph's product, gathered for an episode, is the episode's own product, and
    /// follows a change of policy (a training update) instead of serving the old one.
    #[test]
    fn graph_product_is_each_episodes_own_and_follows_the_policy() {
        let dev = test_device().unwrap();
        //   0 - 1 - 2 - 4 - 6 - 7
        //       |
        //       3 - 5
        let f = Features::new(8, 3, (0..24).map(|i| (i % 5) as f32 * 0.5).collect()).unwrap();
        let edges = [(0, 1), (1, 2), (1, 3), (2, 4), (4, 6), (6, 7), (3, 5)];
        let g = Graph::from_edges(8, &edges, f, vec![0, 1, 0, 1, 0, 1, 0, 1]).unwrap();
        let gcn = GcnConfig::new(3, 2).init(&dev);
        let bb = gcn_black_box(&gcn, Kernel::Burn, &dev).unwrap();
        let env = EnvConfig {
            hops: 2,
            ..EnvConfig::default()
        };
        let ep = Episode::new(&g, bb.as_ref(), 2, &env).unwrap();
        assert!(
            ep.num_nodes() < g.num_nodes(),
            "the neighbourhood is not the whole graph"
        );
        let policy = |seed| {
            PolicyConfig::new(ep.state_width())
                .with_init_seed(seed)
                .init(&dev)
        };
        let (p1, p2) = (policy(1), policy(2));
        let opts = |on| BurnOptions {
            graph_product: on,
            greedy_on_device: false,
            resident: false,
        };
        let product = |c: BurnCache| to_vec(c.product());
        let close = |a: &[f32], b: &[f32]| {
            a.len() == b.len() && a.iter().zip(b).all(|(u, v)| (u - v).abs() < 1e-5)
        };
        let mut whole = BurnActor::with_options(&p1, &dev, opts(true));
        // Gathering rows from the whole graph's product never reads the episode's features.
        let fresh = Episode::new(&g, bb.as_ref(), 2, &env).unwrap();
        let gathered = product(whole.prepare(&fresh).unwrap());
        assert!(!fresh.features_gathered());
        let want1 = product(
            BurnActor::with_options(&p1, &dev, opts(false))
                .prepare(&ep)
                .unwrap(),
        );
        assert!(close(&product(whole.prepare(&ep).unwrap()), &want1));
        assert!(close(&gathered, &want1) && ep.features_gathered());
        whole.set_policy(p2.valid());
        let want2 = product(
            BurnActor::with_options(&p2, &dev, opts(false))
                .prepare(&ep)
                .unwrap(),
        );
        assert!(!close(&want1, &want2));
        assert!(close(&product(whole.prepare(&ep).unwrap()), &want2));
    }

    /// BA-Shapes (seed 3) and an untrained GCN as a host black box: the resident-batch tests'
    /// graph and model.
    fn ba_shapes_untrained() -> (
        Device,
        induce_graph::Dataset,
        Box<dyn induce_models::BlackBox>,
    ) {
        let dev = test_device().unwrap();
        let data = induce_graph::generators::SyntheticKind::BaShapes
            .generate(3)
            .unwrap();
        let classes = 1 + *data.graph.labels().iter().max().unwrap() as usize;
        let gcn = GcnConfig::new(data.graph.features().dim(), classes).init(&dev);
        let bb = gcn_black_box(&gcn, Kernel::Host, &dev).unwrap();
        (dev, data, bb)
    }

    /// The GPU layout with the resident batch on or off.
    fn resident_opts(resident: bool) -> BurnOptions {
        BurnOptions {
            graph_product: true,
            greedy_on_device: resident,
            resident,
        }
    }

    /// The batch kept on the device between rounds scores every state as a batch packed anew
    /// does (to float rounding; mostly bit for bit), through additions and deletions, with
    /// episodes finishing on the way; it is packed once, updated, packed again when most
    /// episodes are done, and its greedy choices are the packed batch's up to near-ties.
    #[test]
    fn the_resident_batch_scores_as_a_packed_one() {
        use crate::env::ActionKind;
        let (dev, data, bb) = ba_shapes_untrained();
        let g = &data.graph;
        let env = |budget| EnvConfig {
            hops: 2,
            budget,
            ..EnvConfig::default()
        };
        let targets = [300u32, 310, 320, 401, 512, 633, 0, 7];
        let mut eps: Vec<Episode<'_>> = targets
            .iter()
            .enumerate()
            .map(|(i, &t)| Episode::new(g, bb.as_ref(), t, &env(2 + i)).unwrap())
            .collect();
        let policy = PolicyConfig::new(eps[0].state_width())
            .with_init_seed(3)
            .init(&dev);
        let plain = BurnActor::with_options(&policy, &dev, resident_opts(false));
        let kept = BurnActor::with_options(&policy, &dev, resident_opts(true));
        let caches: Vec<BurnCache> = eps.iter().map(|e| kept.prepare(e).unwrap()).collect();
        let mut rounds = Rounds::default();
        let (mut adds, mut deletions, mut round) = (0, 0, 0);
        let (mut exact, mut same, mut scored) = (0, 0, 0);
        // Packed at the start, and again whenever fewer than half of the packed are playing.
        let (mut packed, mut packs) = (eps.len(), 1);
        loop {
            let states = playing(&eps, &caches);
            if states.is_empty() {
                break;
            }
            if 2 * states.len() < packed {
                (packed, packs) = (states.len(), packs + 1);
            }
            let want = plain.log_probs_batch(&states, 2).unwrap();
            let got = kept.log_probs_round(&mut rounds, &states, 2).unwrap();
            for (b, (x, y)) in got.iter().zip(&want).enumerate() {
                assert_eq!(x.len(), y.len(), "round {round} state {b}");
                let worst = x
                    .iter()
                    .zip(y)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0f32, f32::max);
                assert!(
                    worst < 1e-5,
                    "round {round} state {b}: differs by up to {worst}"
                );
                exact += usize::from(x == y);
            }
            // Greedy: the packed batch's choice, or one within rounding of its best.
            let chosen = kept.greedy_round(&mut rounds, &states, 2).unwrap();
            for ((a, b), logp) in chosen
                .iter()
                .zip(plain.greedy_batch(&states, 2).unwrap())
                .zip(&want)
            {
                same += usize::from(a == &b);
                assert!(logp[*a] >= logp[b] - 1e-5, "round {round}: {a} vs {b}");
            }
            scored += chosen.len();
            drop(states);
            for (i, ep) in eps.iter_mut().filter(|e| !e.is_done()).enumerate() {
                // Alternate additions and deletions (additions come first in the list).
                let c = ep.candidates();
                let adds_left = c.kind.iter().filter(|&&k| k == ActionKind::Add).count();
                let a = match (round + i) % 2 {
                    0 if adds_left > 0 => (3 * i + round) % adds_left,
                    _ => adds_left + (5 * i + round) % (c.len() - adds_left).max(1),
                };
                let a = a.min(c.len() - 1);
                match c.kind[a] {
                    ActionKind::Add => adds += 1,
                    ActionKind::Delete => deletions += 1,
                    ActionKind::Feature { .. } => unreachable!("no feature action offered"),
                }
                ep.step(a).unwrap();
            }
            round += 1;
        }
        assert!(
            adds > 3 && deletions > 3,
            "{adds} additions, {deletions} deletions"
        );
        assert!(round >= 8, "{round} rounds");
        assert!(packs < round / 2, "{packs} packs in {round} rounds");
        assert_eq!(rounds.packs(), packs, "{rounds:?}");
        // Most states' scores are bit-identical (rounding differs only where an absent message
        // shifts how the CPU kernel groups a long segment's terms), nearly all greedy choices.
        assert!(
            2 * exact > scored && 10 * same >= 9 * scored,
            "{exact}, {same} of {scored}"
        );
    }

    /// With every score NaN (a broken policy), the batch kept on the device chooses as the
    /// packed one does, round after round: the host's rule takes the last candidate, and once
    /// that one is used, the device's choice lands on it and the round falls back to the
    /// current candidates' scores.
    #[test]
    fn the_resident_batch_chooses_as_a_packed_one_on_nan_scores() {
        let (dev, data, bb) = ba_shapes_untrained();
        let g = &data.graph;
        let env = EnvConfig {
            hops: 2,
            budget: 4,
            ..EnvConfig::default()
        };
        let mut eps: Vec<Episode<'_>> = [300u32, 401, 512]
            .iter()
            .map(|&t| Episode::new(g, bb.as_ref(), t, &env).unwrap())
            .collect();
        let mut policy = PolicyConfig::new(eps[0].state_width()).init(&dev);
        let last = policy.mlp.last_mut().unwrap();
        let o = last.weight.dims()[1];
        last.bias = Some(burn::module::Param::from_tensor(Tensor::full(
            [o],
            f32::NAN,
            &dev,
        )));
        let plain = BurnActor::with_options(&policy, &dev, resident_opts(false));
        let kept = BurnActor::with_options(&policy, &dev, resident_opts(true));
        let caches: Vec<BurnCache> = eps.iter().map(|e| kept.prepare(e).unwrap()).collect();
        let mut rounds = Rounds::default();
        let mut steps = 0;
        loop {
            let states = playing(&eps, &caches);
            if states.is_empty() {
                break;
            }
            let want = plain.greedy_batch(&states, 2).unwrap();
            let got = kept.greedy_round(&mut rounds, &states, 2).unwrap();
            assert_eq!(got, want);
            drop(states);
            for (ep, a) in eps.iter_mut().filter(|e| !e.is_done()).zip(want) {
                assert_eq!(
                    a,
                    ep.candidates().len() - 1,
                    "the host's rule on NaN: the last"
                );
                ep.step(a).unwrap();
                steps += 1;
            }
        }
        assert!(steps >= 6, "{steps} steps");
        assert_eq!(rounds.packs(), 1, "{rounds:?}");
    }
}
