//! A batch of states that stays on the device across the rounds of one lockstep play
//! ([`Actor::greedy_round`](super::Actor::greedy_round)): packed and uploaded once, then each
//! round toggles the few messages and candidates its edits touched and uploads the changing
//! state columns only.
//!
//! Each episode's neighbourhood is laid out as the Burn kernel's block-diagonal batch lays it
//! out (messages sorted by destination, each node's sources ascending, its self loop last),
//! with one addition: every pair an addition candidate could add has its two messages reserved
//! in place, marked absent ([`ABSENT`] on its attention logit). An edit then flips the offsets
//! of two messages (a deletion marks them absent, an addition present) and marks its candidate
//! used. The GAT's sums over each destination are the repacked graph's (an absent message adds
//! exactly 0), to float rounding: the CSR kernels sum a destination's terms in groups, and an
//! absent message can shift the grouping (on the CPU most states' scores come out bit for bit,
//! tests: `the_resident_batch_scores_as_a_packed_one`). Used candidates score [`ABSENT`] and are
//! left out of each state's choice.
//!
//! ```text
//!   target t = 0, addition candidates (0, 2), (0, 3); edge 0 ─ 1, 1 ─ 2
//!   segment of 0:  1  [2]  [3]  0        [x]: reserved, absent until (0, x) is added
//!   segment of 2:  [0]  1  2
//! ```
//!
//! The batch is packed again (from the host) when a state cannot be matched to its slot (a new
//! episode, a reset, an edit it has no slot for) or when fewer than half of its episodes are
//! still playing, so the device never scores more than twice the live work. It is not used for
//! states with a non-finite entry (an absent message from such a node would still add
//! `0 · NaN`): those rounds take the repacked batch; nor for the estimated state layout, whose
//! action features change at every step.

use std::collections::HashMap;
use std::ops::Range;

use burn::tensor::{Device, Int, Tensor, TensorData};
use induce_explain::{Edit, EditKind};

use crate::env::ActionKind;
use induce_models::kernels::tensors::{GraphTensors, add_at, index_tensor_below};
use induce_models::policy::gat::ABSENT;
use induce_models::{CandidateTensors, Policy};

use super::burn_cache::BurnCache;
use crate::env::Episode;
use crate::error::Result;
use crate::profile::{self, Count, Phase};

/// One episode's place in a [`Resident`] batch.
#[derive(Debug)]
struct Slot {
    /// The episode's address while it plays (matched with its target as a check).
    key: usize,
    target: u32,
    /// First node, first candidate and number of candidates in the batch.
    node_off: usize,
    cand_off: usize,
    cand_len: usize,
    /// Leading addition candidates (sorted by their second endpoint), then deletions (sorted
    /// by pair); `sorted` is false when the list was not in that order (edits then repack).
    adds: usize,
    sorted: bool,
    /// Edits already applied on the device, and the last of them (a check that the episode
    /// went on from there rather than being reset and stepped again).
    applied: usize,
    last: Option<Edit>,
    /// Used candidates, positions within the slot, ascending.
    used: Vec<u32>,
}

/// A batch on the device with what it was built from (see the module docs).
#[derive(Debug)]
pub(crate) struct Resident {
    graph: GraphTensors,
    /// Per message: 0 (present) or [`ABSENT`].
    absent: Tensor<1>,
    cands: CandidateTensors,
    /// Per candidate: 0, or [`ABSENT`] once used.
    cand_absent: Tensor<1>,
    /// Candidate offsets of the slots, `[slots + 1]`.
    cand_ptr: Tensor<1, Int>,
    /// The episodes' feature products ([`BurnCache`]) side by side, `[nodes, hidden]`.
    product: Tensor<2>,
    cols: Range<usize>,
    /// How the changing state columns travel.
    encoding: Encoding,
    /// Host copies: message offsets per node and sources (batch ids), candidate endpoints
    /// (batch ids), the changing state columns as they travel (`[nodes, encoding.width()]`).
    ptr: Vec<u32>,
    src: Vec<u32>,
    cu: Vec<u32>,
    cw: Vec<u32>,
    small: Vec<f32>,
    slots: Vec<Slot>,
    by_key: HashMap<usize, usize>,
}

/// How the changing state columns travel to the device each round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    /// As they are: `width` values per node.
    Whole { width: usize },
    /// [`StateLayout::Paper`](crate::env::StateLayout)'s degree, entropy and one-hot of
    /// `classes` labels as the degree, the entropy and the hot label (3 values per node instead
    /// of `2 + classes`), the one-hot rebuilt on the device (exactly: 0 and 1).
    OneHot { classes: usize },
}

impl Encoding {
    /// The encoding of `ep`'s changing columns (`width` of them).
    fn of(ep: &Episode<'_>, width: usize) -> Self {
        let paper = ep.state_layout() == crate::env::StateLayout::Paper;
        match paper && width > 3 {
            true => Encoding::OneHot { classes: width - 2 },
            false => Encoding::Whole { width },
        }
    }

    /// Values per node as they travel.
    fn width(self) -> usize {
        match self {
            Encoding::Whole { width } => width,
            Encoding::OneHot { .. } => 3,
        }
    }

    /// Writes `block` (`[n, 2 + classes]` or `[n, width]`) into `out` (`[n, self.width()]`);
    /// false when a row is not degree, entropy and a one-hot (nothing then travels this way).
    fn encode(self, block: &[f32], out: &mut [f32]) -> bool {
        match self {
            Encoding::Whole { .. } => {
                out.copy_from_slice(block);
                true
            }
            Encoding::OneHot { classes } => {
                for (row, o) in block.chunks_exact(2 + classes).zip(out.chunks_exact_mut(3)) {
                    let mut hot = None;
                    for (c, &v) in row[2..].iter().enumerate() {
                        match (v, hot) {
                            (0.0, _) => {}
                            (1.0, None) => hot = Some(c),
                            _ => return false,
                        }
                    }
                    let Some(hot) = hot else { return false };
                    o.copy_from_slice(&[row[0], row[1], hot as f32]);
                }
                true
            }
        }
    }

    /// The columns on the device from what travelled (`[n, self.width()]`).
    ///
    /// # Shapes
    /// - sent: `[n, self.width()]`; output: `[n, 2 + classes]` or `[n, width]`
    fn decode(self, sent: Tensor<2>) -> Tensor<2> {
        match self {
            Encoding::Whole { .. } => sent,
            Encoding::OneHot { classes } => {
                let n = sent.dims()[0];
                let d = sent.device();
                let head = sent.clone().slice([0..n, 0..2]);
                let hot = sent.slice([0..n, 2..3]).expand([n, classes]);
                let labels = Tensor::<1, Int>::arange(0..classes as i64, &d)
                    .float()
                    .reshape([1, classes])
                    .expand([n, classes]);
                Tensor::cat(vec![head, hot.equal(labels).float()], 1)
            }
        }
    }
}

/// Per-state sizes for packing.
struct Sizes {
    nodes: usize,
    msgs: usize,
    cands: usize,
}

fn key(ep: &Episode<'_>) -> usize {
    std::ptr::from_ref(ep) as usize
}

impl Resident {
    /// Packs `states` (at least one) on `threads` host threads and uploads them; `None` when the
    /// states cannot be laid out this way (a non-finite state entry, an addition candidate not
    /// at the target, mixed state layouts, more than 2³² messages).
    pub(crate) fn pack(
        states: &[(&Episode<'_>, &BurnCache)],
        threads: usize,
        device: &Device,
    ) -> Result<Option<Self>> {
        let (_, cols) = states[0].0.dynamic_block();
        let encoding = Encoding::of(states[0].0, cols.len());
        let width = encoding.width();
        let mut sizes = Vec::with_capacity(states.len());
        let (mut nodes, mut msgs, mut cands) = (0usize, 0usize, 0usize);
        for (ep, _) in states {
            let c = ep.candidates();
            let adds = c.kind.iter().filter(|&&k| k == ActionKind::Add).count();
            sizes.push(Sizes { nodes, msgs, cands });
            nodes += ep.num_nodes();
            msgs += 2 * ep.edit_graph().num_edges() + ep.num_nodes() + 2 * adds;
            cands += c.len();
        }
        if u32::try_from(msgs.max(nodes).max(cands)).is_err() {
            return Ok(None);
        }
        let mut ptr = vec![0u32; nodes + 1];
        let mut src = vec![0u32; msgs];
        let mut dst = vec![0u32; msgs];
        let mut absent = vec![0f32; msgs];
        let mut cu = vec![0u32; cands];
        let mut cw = vec![0u32; cands];
        let mut flag = vec![0f32; cands];
        let mut small = vec![0f32; nodes * width];
        let mut parts = {
            let node_lens = states.iter().map(|(ep, _)| ep.num_nodes());
            let msg_lens: Vec<usize> = sizes
                .iter()
                .map(|s| s.msgs)
                .chain([msgs])
                .collect::<Vec<_>>()
                .windows(2)
                .map(|w| w[1] - w[0])
                .collect();
            let cand_lens: Vec<usize> =
                states.iter().map(|(ep, _)| ep.candidates().len()).collect();
            let mut p1 = super::burn_cache::split(&mut ptr[1..], node_lens.clone());
            let mut s1 = super::burn_cache::split(&mut src, msg_lens.iter().copied());
            let mut d1 = super::burn_cache::split(&mut dst, msg_lens.iter().copied());
            let mut a1 = super::burn_cache::split(&mut absent, msg_lens.iter().copied());
            let mut u1 = super::burn_cache::split(&mut cu, cand_lens.iter().copied());
            let mut w1 = super::burn_cache::split(&mut cw, cand_lens.iter().copied());
            let mut f1 = super::burn_cache::split(&mut flag, cand_lens.iter().copied());
            let mut m1 = super::burn_cache::split(&mut small, node_lens.map(|n| n * width));
            let mut out = Vec::with_capacity(states.len());
            for ((ep, _), s) in states.iter().zip(&sizes) {
                let mut next = || {
                    (
                        p1.pop_front().expect("one part per state"),
                        s1.pop_front().expect("one part per state"),
                        d1.pop_front().expect("one part per state"),
                        a1.pop_front().expect("one part per state"),
                    )
                };
                let msg = next();
                let cand = (
                    u1.pop_front().expect("one part per state"),
                    w1.pop_front().expect("one part per state"),
                    f1.pop_front().expect("one part per state"),
                );
                let block = m1.pop_front().expect("one part per state");
                out.push((*ep, s, msg, cand, block, None::<(usize, bool)>));
            }
            out
        };
        let ok = profile::time(Phase::Pack, || {
            induce_explain::parallel::map_mut(&mut parts, threads, |part| {
                let (ep, s, (ptr, src, dst, absent), (cu, cw, flag), block, info) = part;
                let (b, c) = ep.dynamic_block();
                // The estimated layout's action features change every step: they are not kept.
                if ep.state_layout() == crate::env::StateLayout::Estimated
                    || c != cols
                    || Encoding::of(ep, c.len()) != encoding
                    || b.iter().any(|v| !v.is_finite())
                    || !encoding.encode(b, block)
                {
                    return Ok(false);
                }
                let Some(found) = lay_out(ep, s, ptr, src, dst, absent) else {
                    return Ok(false);
                };
                let cand = ep.candidates();
                let off = s.nodes as u32;
                for (k, ((&u, &w), &f)) in
                    cand.u.iter().zip(&cand.w).zip(&cand.type_flag).enumerate()
                {
                    cu[k] = u + off;
                    cw[k] = w + off;
                    flag[k] = f32::from(u8::from(f));
                }
                *info = Some((found, sorted(cand, found)));
                Ok(true)
            })
        })?;
        if !ok.iter().all(|&b| b) {
            return Ok(None);
        }
        let slots: Vec<Slot> = parts
            .iter()
            .map(|(ep, s, _, _, _, info)| {
                let (adds, sorted) = info.expect("laid out above");
                Slot {
                    key: key(ep),
                    target: ep.target(),
                    node_off: s.nodes,
                    cand_off: s.cands,
                    cand_len: ep.candidates().len(),
                    adds,
                    sorted,
                    applied: ep.num_edits(),
                    last: ep.edits().last().copied(),
                    used: Vec::new(),
                }
            })
            .collect();
        drop(parts);
        let mut cand_ptr: Vec<u32> = slots.iter().map(|s| s.cand_off as u32).collect();
        cand_ptr.push(cands as u32);
        profile::add(
            Count::Uploaded,
            4 * msgs + 3 * cands + nodes * width + nodes,
        );
        let d = device;
        let resident = profile::time(Phase::Upload, || -> Result<Self> {
            let graph = GraphTensors::forward_only(nodes, src.clone(), dst, ptr.clone(), d)?;
            let caches: Vec<&BurnCache> = states.iter().map(|(_, c)| *c).collect();
            let product = BurnCache::stacked(&caches);
            Ok(Self {
                graph,
                absent: Tensor::from_data(TensorData::new(absent, [msgs]), d),
                cands: CandidateTensors::from_vecs(cu.clone(), cw.clone(), flag, d),
                cand_absent: Tensor::zeros([cands], d),
                cand_ptr: index_tensor_below(cand_ptr, cands + 1, d),
                product,
                cols: cols.clone(),
                encoding,
                ptr,
                src,
                cu,
                cw,
                small,
                by_key: slots.iter().enumerate().map(|(i, s)| (s.key, i)).collect(),
                slots,
            })
        })?;
        Ok(Some(resident))
    }

    /// Brings the batch up to the current states: the edits made since the last round toggle
    /// their messages and candidates on the device, the changing state columns are uploaded.
    /// `false` (nothing changed on the device) when a state has no slot, went back (a reset), made an edit the
    /// layout has no slot for or has a non-finite entry, or when fewer than half of the slots
    /// are still playing: the caller packs again.
    pub(crate) fn update(&mut self, states: &[(&Episode<'_>, &BurnCache)]) -> Result<bool> {
        if 2 * states.len() < self.slots.len() {
            return Ok(false);
        }
        // Plan every change first, so that a refusal leaves the batch as it was.
        let mut msg_pos: Vec<u32> = Vec::new();
        let mut msg_val: Vec<f32> = Vec::new();
        let mut cand_pos: Vec<(usize, u32)> = Vec::new();
        let mut slot_of = Vec::with_capacity(states.len());
        for (ep, _) in states {
            let Some(&i) = self.by_key.get(&key(ep)) else {
                return Ok(false);
            };
            let slot = &self.slots[i];
            let (block, cols) = ep.dynamic_block();
            if slot.target != ep.target()
                || ep.num_edits() < slot.applied
                || slot.applied.checked_sub(1).map(|i| ep.edits()[i]) != slot.last
                || cols != self.cols
                || block.len() != ep.num_nodes() * cols.len()
                || block.iter().any(|v| !v.is_finite())
            {
                return Ok(false);
            }
            let mut used = slot.used.clone();
            for e in &ep.edits()[slot.applied..] {
                let sub = ep.subgraph();
                let (Some(a), Some(b)) = (sub.local_of(e.u), sub.local_of(e.w)) else {
                    return Ok(false);
                };
                let off = slot.node_off as u32;
                let (a, b) = (a as u32 + off, b as u32 + off);
                let (Some(ab), Some(ba)) = (self.message(a, b), self.message(b, a)) else {
                    return Ok(false);
                };
                let Some(c) = self.candidate(slot, a, b, e.kind) else {
                    return Ok(false);
                };
                let at = used.partition_point(|&x| x < c);
                if used.get(at) == Some(&c) {
                    return Ok(false);
                }
                used.insert(at, c);
                let val = match e.kind {
                    EditKind::Delete => ABSENT,
                    EditKind::Add => -ABSENT,
                };
                msg_pos.extend([ab, ba]);
                msg_val.extend([val, val]);
                cand_pos.push((i, c));
            }
            if slot.cand_len - used.len() != ep.candidates().len() {
                return Ok(false);
            }
            slot_of.push((i, used));
        }
        let w = self.encoding.width();
        let mut rows: Vec<Vec<f32>> = Vec::with_capacity(states.len());
        for (ep, _) in states {
            let mut out = vec![0f32; ep.num_nodes() * w];
            if !self.encoding.encode(ep.dynamic_block().0, &mut out) {
                return Ok(false);
            }
            rows.push(out);
        }
        profile::time(Phase::Pack, || {
            for ((ep, (i, used)), out) in states.iter().map(|(e, _)| e).zip(slot_of).zip(rows) {
                let slot = &mut self.slots[i];
                let at = slot.node_off * w;
                self.small[at..at + out.len()].copy_from_slice(&out);
                slot.applied = ep.num_edits();
                slot.last = ep.edits().last().copied();
                slot.used = used;
            }
        });
        profile::add(
            Count::Uploaded,
            self.small.len() + 2 * msg_pos.len() + 2 * cand_pos.len(),
        );
        // Each message and candidate changes at most once per update (a pair is never offered
        // again), so the order of the scatter's additions does not matter.
        profile::time(Phase::Upload, || {
            self.absent = add_at(self.absent.clone(), msg_pos, msg_val);
            let pos: Vec<u32> = cand_pos
                .iter()
                .map(|&(i, c)| (self.slots[i].cand_off + c as usize) as u32)
                .collect();
            let n = pos.len();
            self.cand_absent = add_at(self.cand_absent.clone(), pos, vec![ABSENT; n]);
        });
        Ok(true)
    }

    /// Scores every candidate of the batch (used ones at [`ABSENT`]) with `policy`.
    ///
    /// # Shapes
    /// - output: `[Σ C_b]`
    pub(crate) fn scores(&self, policy: &Policy, block: usize) -> Result<Tensor<1>> {
        let d = self.product.device();
        let w = self.encoding.width();
        let rest = self.encoding.decode(Tensor::from_data(
            TensorData::new(self.small.clone(), [self.small.len() / w.max(1), w]),
            &d,
        ));
        let start = std::time::Instant::now();
        let emb = induce_models::timing::span("policy: GAT embedding (all layers)", &d, || {
            policy.embed_with_product_masked(
                self.product.clone(),
                rest,
                self.cols.clone(),
                &self.graph,
                Some(&self.absent),
            )
        })?;
        if profile::enabled() {
            // Only when profiling: wait for the GAT so its time shows apart from scoring.
            let _ = d.sync();
            profile::add_time(Phase::Embed, start.elapsed());
        }
        let s = induce_models::timing::span("policy: scoring MLP", &d, || {
            policy.score_blocks(emb, &self.cands, block)
        });
        // Used candidates score ABSENT whatever their score was (a NaN plus ABSENT stays NaN).
        let used = self.cand_absent.clone().lower_elem(ABSENT / 2.0);
        Ok((s + self.cand_absent.clone()).mask_fill(used, ABSENT))
    }

    /// The slot of each state (after [`Resident::update`] or [`Resident::pack`] accepted them).
    pub(crate) fn slots_of(&self, states: &[(&Episode<'_>, &BurnCache)]) -> Vec<usize> {
        states.iter().map(|(ep, _)| self.by_key[&key(ep)]).collect()
    }

    /// Nodes, messages and candidates in the batch.
    pub(crate) fn sizes(&self) -> (usize, usize, usize) {
        (self.ptr.len() - 1, self.src.len(), self.cu.len())
    }

    /// The candidate offsets of the slots, `[slots + 1]`.
    pub(crate) fn cand_ptr(&self) -> Tensor<1, Int> {
        self.cand_ptr.clone()
    }

    /// Slot `i`'s candidate range in the batch and its used positions.
    pub(crate) fn candidates_of(&self, i: usize) -> (Range<usize>, &[u32]) {
        let s = &self.slots[i];
        (s.cand_off..s.cand_off + s.cand_len, &s.used)
    }

    /// The position of message `from → to` (batch ids), if the layout has it.
    fn message(&self, from: u32, to: u32) -> Option<u32> {
        let seg = self.ptr[to as usize] as usize..self.ptr[to as usize + 1] as usize;
        let srcs = &self.src[seg.clone()];
        // The self loop closes the segment; the others are ascending.
        let body = &srcs[..srcs.len().saturating_sub(1)];
        body.binary_search(&from)
            .ok()
            .map(|k| (seg.start + k) as u32)
    }

    /// The position in `slot` of candidate `(a, b)` (batch ids) of kind `kind`.
    fn candidate(&self, slot: &Slot, a: u32, b: u32, kind: EditKind) -> Option<u32> {
        if !slot.sorted {
            return None;
        }
        let (lo, hi) = match kind {
            EditKind::Add => (slot.cand_off, slot.cand_off + slot.adds),
            EditKind::Delete => (slot.cand_off + slot.adds, slot.cand_off + slot.cand_len),
        };
        let (u, w) = (&self.cu[lo..hi], &self.cw[lo..hi]);
        let k = match kind {
            EditKind::Add => w.binary_search(&b).ok()?,
            EditKind::Delete => {
                // The first position whose pair is not below (a, b).
                let (mut lo, mut hi) = (0, u.len());
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    match (u[mid], w[mid]) < (a, b) {
                        true => lo = mid + 1,
                        false => hi = mid,
                    }
                }
                lo
            }
        };
        if k >= u.len() {
            return None;
        }
        (u[k] == a && w[k] == b).then_some((lo - slot.cand_off + k) as u32)
    }
}

/// Writes `ep`'s messages into its part of the batch: for every node its sources ascending
/// (the current neighbours, and absent the pairs an addition candidate would add), then its
/// self loop. Returns the number of leading addition candidates; `None` when an addition
/// candidate does not start at the target.
fn lay_out(
    ep: &Episode<'_>,
    s: &Sizes,
    ptr: &mut [u32],
    src: &mut [u32],
    dst: &mut [u32],
    absent: &mut [f32],
) -> Option<usize> {
    let n = ep.num_nodes();
    let t = ep.target_local() as u32;
    let cand = ep.candidates();
    let mut reserved_at_target: Vec<u32> = Vec::new();
    let mut reserved = vec![false; n];
    for ((&u, &w), &k) in cand.u.iter().zip(&cand.w).zip(&cand.kind) {
        if k == ActionKind::Add {
            if u != t || w == t {
                return None;
            }
            reserved_at_target.push(w);
            reserved[w as usize] = true;
        }
    }
    reserved_at_target.sort_unstable();
    let adds = reserved_at_target.len();
    let g = ep.edit_graph();
    let off = s.nodes as u32;
    let mut k = 0usize;
    let mut put = |k: &mut usize, from: u32, to: u32, gone: bool| {
        src[*k] = from + off;
        dst[*k] = to + off;
        absent[*k] = if gone { ABSENT } else { 0.0 };
        *k += 1;
    };
    for v in 0..n as u32 {
        let nb = g.neighbors(v as usize);
        if v == t {
            // Merge the neighbours with the reserved additions (disjoint: a candidate pair is
            // not an edge).
            let (mut i, mut j) = (0, 0);
            while i < nb.len() || j < reserved_at_target.len() {
                let take_nb = j == reserved_at_target.len()
                    || (i < nb.len() && nb[i] < reserved_at_target[j]);
                if take_nb {
                    put(&mut k, nb[i], v, false);
                    i += 1;
                } else {
                    put(&mut k, reserved_at_target[j], v, true);
                    j += 1;
                }
            }
        } else if reserved[v as usize] {
            let at = nb.partition_point(|&x| x < t);
            for &x in &nb[..at] {
                put(&mut k, x, v, false);
            }
            put(&mut k, t, v, true);
            for &x in &nb[at..] {
                put(&mut k, x, v, false);
            }
        } else {
            for &x in nb {
                put(&mut k, x, v, false);
            }
        }
        put(&mut k, v, v, false);
        ptr[v as usize] = (s.msgs + k) as u32;
    }
    // Every message written (the sizes were counted from the same graph and candidates).
    (k == src.len()).then_some(adds)
}

/// Whether `cand`'s `adds` leading entries are the additions, ascending by second endpoint,
/// and the rest deletions ascending by pair.
fn sorted(cand: &crate::env::Candidates, adds: usize) -> bool {
    let kinds = cand.kind[..adds].iter().all(|&k| k == ActionKind::Add)
        && cand.kind[adds..].iter().all(|&k| k == ActionKind::Delete);
    let add_sorted = cand.w[..adds].windows(2).all(|w| w[0] < w[1]);
    let (u, w) = (&cand.u[adds..], &cand.w[adds..]);
    let del_sorted = (1..u.len()).all(|i| (u[i - 1], w[i - 1]) < (u[i], w[i]));
    kinds && add_sorted && del_sorted
}

#[cfg(test)]
mod tests {
    use super::*;
    use induce_models::kernels::tensors::to_vec;
    use induce_models::testing::test_device;

    #[test]
    fn one_hot_columns_travel_as_three_values_and_come_back_exactly() {
        let dev = test_device().unwrap();
        let enc = Encoding::OneHot { classes: 3 };
        // Degree, entropy, one-hot of 3 labels, for two nodes.
        let block = [2.0, 0.5, 0.0, 1.0, 0.0, 7.0, 1e-7, 0.0, 0.0, 1.0];
        let mut sent = [0f32; 6];
        assert!(enc.encode(&block, &mut sent));
        assert_eq!(sent, [2.0, 0.5, 1.0, 7.0, 1e-7, 2.0]);
        let back = enc.decode(Tensor::from_data(
            TensorData::new(sent.to_vec(), [2, 3]),
            &dev,
        ));
        assert_eq!(back.dims(), [2, 5]);
        assert_eq!(to_vec(back), block);
        // Rows that are not a one-hot are refused.
        for bad in [
            [2.0, 0.5, 0.0, 0.0, 0.0],
            [2.0, 0.5, 1.0, 1.0, 0.0],
            [2.0, 0.5, 0.5, 0.0, 0.0],
        ] {
            assert!(!enc.encode(&bad, &mut [0.0; 3]), "{bad:?}");
        }
        // Whole columns travel as they are.
        let whole = Encoding::Whole { width: 5 };
        let mut out = [0f32; 10];
        assert!(whole.encode(&block, &mut out));
        assert_eq!(out, block);
        assert_eq!((whole.width(), enc.width()), (5, 3));
    }
}
