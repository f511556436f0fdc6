//! The paper's GCN on many edited copies of one graph at once: the black-box verdicts of a
//! batch of explanation episodes in one launch sequence on a device, instead of one host
//! evaluation per episode and step.
//!
//! Episode `b` evaluates the model on the subgraph induced by its node set `S_b` (an
//! explanation's judge evaluates the target's receptive field, or the whole graph), with a few
//! node pairs toggled. With `m_b` the indicator of `S_b`, `d_b` the degrees in that edited
//! subgraph (self loop included) and `s_b = m_b / sqrt(d_b)`, one convolution's aggregation is
//!
//! ```text
//!   s_b ⊙ (A + I)(s_b ⊙ H)  +  s_b ⊙ Δ_b (s_b ⊙ H)
//!     = l_b ⊙ Â (l_b ⊙ H)  +  (the toggled pairs),        l_b = s_b ⊙ sqrt(d)
//! ```
//!
//! where `Â = D^{-1/2}(A + I)D^{-1/2}` is the whole unedited graph's (uploaded once; `d` its
//! degrees) and `Δ_b` holds `+1` for an added pair and `−1` for a deleted one inside `S_b`.
//! All episodes' activations live in one `[n, B, hidden]` tensor, so each layer is one sparse
//! product over the graph's messages with `B · hidden` columns ([`GraphTensors::propagate`]),
//! one dense product and a small correction over the toggled pairs; the degrees `(A + I) m_b`
//! are one more sparse product, with `B` columns; the first layer's `X W₁` is computed once for
//! all batches. Only the rows asked for are classified and downloaded.
//!
//! Memory: about `6 · n · B · hidden` floats on the device; episodes are evaluated in passes
//! that keep one activation within 1 GiB by default ([`VerdictBatch::with_max_batch`]: 280
//! episodes for Amazon-Photo's 7,487 nodes at hidden 128).

use std::collections::{BTreeSet, HashSet};
use std::sync::Mutex;

use burn::tensor::activation::{log_softmax, relu};
use burn::tensor::{Device, IndexingUpdateOp, Int, Tensor, TensorData};
use induce_graph::Features;

use super::log_probs::LogProbs;
use crate::error::{ModelError, Result};
use crate::gcn::Gcn;
use crate::kernels::tensors::{
    GraphTensors, add_at, dense, index_tensor_below, matrix, try_to_vec,
};
use crate::timing::span;

/// One graph and its features bound to a [`Gcn`] for batched evaluation of edited copies
/// ([`VerdictBatch::log_probs`]).
///
/// ```
/// use induce_graph::Features;
/// use induce_models::black_box::batched::VerdictBatch;
/// use induce_models::kernels::tensors::{matrix, to_vec};
/// use induce_models::{GcnConfig, GraphTensors, device::default_device};
/// let dev = default_device().unwrap();
/// let gcn = GcnConfig::new(2, 3).init(&dev);
/// //  0 ─ 1 ─ 2 ─ 3
/// let x = Features::new(4, 2, vec![1., 0., 0., 1., 1., 1., 0., 0.]).unwrap();
/// let batch = VerdictBatch::new(&gcn, &x, &[(0, 1), (1, 2), (2, 3)], &dev).unwrap();
/// // Episode 0 deletes (1, 2) and reads node 1 on the whole graph; episode 1 adds (0, 3) and
/// // reads node 3 on the subgraph induced by {0, 2, 3}.
/// let all = vec![0, 1, 2, 3];
/// let out = batch.log_probs(&[vec![(1, 2)], vec![(0, 3)]], &[all, vec![3, 0, 2]]).unwrap();
/// // The same numbers as the model on the edited graph: node 1's row.
/// let g = GraphTensors::new(4, &[(0, 1), (2, 3)], &dev).unwrap();
/// let direct = to_vec(gcn.forward(matrix(x.as_slice(), 4, 2, &dev), &g));
/// assert!((0..3).all(|c| (out[0].row(1)[c] - direct[3 + c]).abs() < 1e-5));
/// assert_eq!(out[1].num_nodes(), 3);
/// ```
pub struct VerdictBatch<'m> {
    gcn: &'m Gcn,
    n: usize,
    graph: GraphTensors,
    /// The graph's pairs, `(min, max)`.
    edges: HashSet<(u32, u32)>,
    /// `X W₁`, `[n, hidden]`.
    xw: Tensor<2>,
    /// `sqrt(degree + 1)`, `[n, 1]`.
    root: Tensor<2>,
    /// Each pass's node sets of its last call, reused while they stay the same.
    sets: Mutex<Vec<Option<NodeSets>>>,
    device: Device,
    /// Episodes per pass.
    max_batch: usize,
    /// Rows read out per block (the three layers' `[rows, hidden]` gathered rows within
    /// `MAX_ACTIVATION` floats).
    readout_rows: usize,
}

/// Floats in one `[n, B, hidden]` activation of the default pass size (1 GiB).
const MAX_ACTIVATION: usize = 1 << 28;

impl<'m> VerdictBatch<'m> {
    /// Binds `gcn` to the graph with features `x` and undirected `edges` (each pair once, no
    /// self loops): uploads the graph and computes `X W₁`.
    ///
    /// Errors: [`ModelError::DimensionMismatch`] when `x`'s width is not the model's input,
    /// [`ModelError::InvalidInput`] for an out-of-range endpoint, a self loop or a repeated
    /// pair.
    ///
    /// # Shapes
    /// - x: `[n, d]`
    pub fn new(gcn: &'m Gcn, x: &Features, edges: &[(u32, u32)], device: &Device) -> Result<Self> {
        if x.dim() != gcn.input_dim() {
            return Err(ModelError::DimensionMismatch {
                what: "feature width of the graph for the GCN's batched verdicts".into(),
                expected: gcn.input_dim(),
                got: x.dim(),
            });
        }
        if let Some((what, got, expected)) = Self::uneven_layer(gcn) {
            return Err(ModelError::InvalidInput(format!(
                "batched verdicts need the GCN's three layers at one width ({}): its {what} has \
                 weights {got:?}, expected {expected:?}",
                gcn.hidden()
            )));
        }
        let n = x.num_nodes();
        let graph = GraphTensors::new(n, edges, device)?;
        let mut set = HashSet::with_capacity(edges.len());
        let mut degree = vec![1u32; n];
        for &(u, w) in edges {
            if !set.insert((u.min(w), u.max(w))) {
                return Err(ModelError::InvalidInput(format!(
                    "edge ({u}, {w}) is listed twice"
                )));
            }
            degree[u as usize] += 1;
            degree[w as usize] += 1;
        }
        let xw = dense(
            matrix(x.as_slice(), n, x.dim(), device),
            gcn.gc1.weight.val(),
        );
        let root = Tensor::<2>::from_data(
            TensorData::new(degree.iter().map(|&d| (d as f32).sqrt()).collect(), [n, 1]),
            device,
        );
        Ok(Self {
            gcn,
            n,
            graph,
            edges: set,
            xw,
            root,
            sets: Mutex::new(Vec::new()),
            device: device.clone(),
            max_batch: (MAX_ACTIVATION / (n * gcn.hidden()).max(1)).clamp(1, Self::index_cap(n)),
            readout_rows: (MAX_ACTIVATION / (3 * gcn.hidden()).max(1)).max(1),
        })
    }

    /// Whether `gcn` can be bound ([`VerdictBatch::new`]): the `[n, B, hidden]` layout holds
    /// every layer at one width, which a [`Gcn`] built by [`crate::GcnConfig`] has (one built
    /// by hand may not).
    pub fn supports(gcn: &Gcn) -> bool {
        Self::uneven_layer(gcn).is_none()
    }

    /// The first layer of `gcn` not at its first convolution's width: its name, its weights'
    /// shape and the shape the layout needs.
    fn uneven_layer(gcn: &Gcn) -> Option<(&'static str, [usize; 2], [usize; 2])> {
        let h = gcn.hidden();
        [
            ("second convolution", gcn.gc2.weight.dims(), [h, h]),
            ("third convolution", gcn.gc3.weight.dims(), [h, h]),
            (
                "classifier",
                gcn.lin.weight.dims(),
                [3 * h, gcn.num_classes()],
            ),
        ]
        .into_iter()
        .find(|(_, got, expected)| got != expected)
    }

    /// Number of nodes of the bound graph.
    pub fn num_nodes(&self) -> usize {
        self.n
    }

    /// Class log-probabilities of `rows[b]`'s nodes on the subgraph they induce, with
    /// `toggles[b]`'s pairs toggled (a pair of the graph is deleted, any other pair added; a
    /// pair listed twice is toggled back; a pair with an endpoint outside the node set changes
    /// nothing), for every episode `b` at once: the same numbers as [`Gcn::forward`] on each
    /// edited induced subgraph, up to float rounding. Pass every node for the whole graph.
    ///
    /// Errors: [`ModelError::DimensionMismatch`] when `rows` and `toggles` differ in length,
    /// [`ModelError::InvalidInput`] naming the episode and the node of an out-of-range
    /// endpoint or row, or a self loop.
    ///
    /// # Shapes
    /// - toggles: `[B][k_b]`, rows: `[B][m_b]`
    /// - output: `[B]` of `[m_b, C]`
    pub fn log_probs(
        &self,
        toggles: &[Vec<(u32, u32)>],
        rows: &[Vec<u32>],
    ) -> Result<Vec<LogProbs>> {
        if rows.len() != toggles.len() {
            return Err(ModelError::DimensionMismatch {
                what: "row lists of the batched verdicts (one per episode)".into(),
                expected: toggles.len(),
                got: rows.len(),
            });
        }
        let requests: Vec<VerdictRequest<'_>> = toggles
            .iter()
            .zip(rows)
            .map(|(t, r)| VerdictRequest::on(t, r))
            .collect();
        self.evaluate(&requests)
    }

    /// The rows each request reads ([`VerdictRequest::read`]) of the model on its node set
    /// with its pairs toggled, for every request at once: [`VerdictBatch::log_probs`] with the
    /// node set and the rows read apart, e.g. the whole graph evaluated and one row read (a
    /// target's verdict on the whole edited graph), which downloads one row instead of `n`.
    ///
    /// Errors: those of [`VerdictBatch::log_probs`], and [`ModelError::InvalidInput`] naming
    /// the request and the node of a row read outside its node set.
    ///
    /// ```
    /// use induce_graph::Features;
    /// use induce_models::black_box::batched::{VerdictBatch, VerdictRequest};
    /// use induce_models::{GcnConfig, device::default_device};
    /// let dev = default_device().unwrap();
    /// let gcn = GcnConfig::new(1, 2).init(&dev);
    /// //  0 ─ 1 ─ 2
    /// let x = Features::new(3, 1, vec![1., 2., 3.]).unwrap();
    /// let batch = VerdictBatch::new(&gcn, &x, &[(0, 1), (1, 2)], &dev).unwrap();
    /// // Node 0's row on the whole graph with (1, 2) deleted, and with (0, 2) added.
    /// let out = batch.evaluate(&[
    ///     VerdictRequest::whole(&[(1, 2)], &[0]),
    ///     VerdictRequest::whole(&[(0, 2)], &[0]),
    /// ]).unwrap();
    /// assert_eq!((out[0].num_nodes(), out[1].num_nodes()), (1, 1));
    /// ```
    ///
    /// # Shapes
    /// - output: `[B]` of `[read_b, C]`
    pub fn evaluate(&self, requests: &[VerdictRequest<'_>]) -> Result<Vec<LogProbs>> {
        let mut out = Vec::with_capacity(requests.len());
        for (k, chunk) in requests.chunks(self.max_batch).enumerate() {
            out.extend(self.chunk(chunk, k * self.max_batch)?);
        }
        // The node sets of passes this call did not use are dropped (host and device memory).
        let passes = requests.len().div_ceil(self.max_batch.max(1));
        self.sets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .truncate(passes);
        Ok(out)
    }

    /// Episodes evaluated in one pass at most ([`VerdictBatch::with_max_batch`]).
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    /// Evaluates at most `max_batch` episodes per pass (at least 1); the default keeps each
    /// `[n, B, hidden]` activation within 2²⁸ floats (1 GiB): 280 episodes for Amazon-Photo at
    /// hidden 128, 12 for the ogbn-arxiv-sized graph. The results do not depend on it.
    pub fn with_max_batch(mut self, max_batch: usize) -> Self {
        self.max_batch = max_batch.clamp(1, Self::index_cap(self.n));
        self.sets = Mutex::new(Vec::new());
        self
    }

    /// The most episodes whose `n · B` row indices fit in `u32`.
    fn index_cap(n: usize) -> usize {
        (u32::MAX as usize / n.max(1)).max(1)
    }

    /// [`VerdictBatch::evaluate`] for one pass; `first` numbers the episodes in errors.
    fn chunk(&self, requests: &[VerdictRequest<'_>], first: usize) -> Result<Vec<LogProbs>> {
        let batch = requests.len();
        if batch == 0 {
            return Ok(Vec::new());
        }
        let pass = first / self.max_batch.max(1);
        let sets = self.node_sets(requests, first, pass)?;
        check_reads(requests, &sets.mask, self.n, first)?;
        let toggled = self.toggled_pairs(requests, &sets.mask, first)?;
        let (l, corrections) = self.scales(&sets.m, toggled, batch);
        self.keep_node_sets(pass, sets);
        let (x1, x2, x3) = self.layers(&l, corrections.as_ref(), batch);
        // The rows asked for, episode by episode.
        let wanted: Vec<u32> = requests
            .iter()
            .enumerate()
            .flat_map(|(b, r)| r.read.iter().map(move |&u| u * batch as u32 + b as u32))
            .collect();
        if wanted.is_empty() {
            return Ok(requests
                .iter()
                .map(|_| empty(self.gcn.num_classes()))
                .collect());
        }
        let out = self.read_out([x1, x2, x3], &wanted, batch)?;
        let c = self.gcn.num_classes();
        let mut rest = out.as_slice();
        requests
            .iter()
            .map(|r| {
                let (head, tail) = rest.split_at(r.read.len() * c);
                rest = tail;
                LogProbs::new(r.read.len(), c, head.to_vec())
            })
            .collect()
    }

    /// Each episode's node set (`[n, B]`, episode-minor), kept from this pass's last call
    /// when it had as many episodes (an episode's set changes only when an addition grows
    /// it): only the changed sets are rewritten and their changes uploaded.
    fn node_sets(
        &self,
        requests: &[VerdictRequest<'_>],
        first: usize,
        pass: usize,
    ) -> Result<NodeSets> {
        let kept = {
            let mut cache = self.sets.lock().unwrap_or_else(|e| e.into_inner());
            cache.get_mut(pass).and_then(Option::take)
        };
        match kept.filter(|k| k.lists.len() == requests.len()) {
            // The same episodes: only the sets that changed are rewritten, and their
            // indicator's changes added on the device.
            Some(k) => k.update(requests, self.n, first, &self.device),
            None => NodeSets::new(requests, self.n, first, &self.device),
        }
    }

    /// Keeps this pass's node sets for its next call ([`VerdictBatch::node_sets`]).
    fn keep_node_sets(&self, pass: usize, sets: NodeSets) {
        let mut cache = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() <= pass {
            cache.resize_with(pass + 1, || None);
        }
        cache[pass] = Some(sets);
    }

    /// The pairs each episode toggles inside its node set (`mask`, `[n, B]`), each once (a
    /// pair listed twice is toggled back), with the sign of the change: `−1` for a pair of the
    /// graph (deleted), `+1` for any other (added).
    fn toggled_pairs(
        &self,
        requests: &[VerdictRequest<'_>],
        mask: &[f32],
        first: usize,
    ) -> Result<ToggledPairs> {
        let (n, batch) = (self.n, requests.len());
        let mut delta: Vec<(u32, f32)> = Vec::new();
        let mut pairs: Vec<(usize, usize, usize, f32)> = Vec::new();
        for (b, r) in requests.iter().enumerate() {
            let mut net = BTreeSet::new();
            for &(u, w) in r.toggles {
                let (u, w) = (
                    node_in_range(n, first + b, u, "toggled")?,
                    node_in_range(n, first + b, w, "toggled")?,
                );
                if u == w {
                    return Err(ModelError::InvalidInput(format!(
                        "episode {}: self loop ({u}, {u}) toggled",
                        first + b
                    )));
                }
                let p = (u.min(w), u.max(w));
                if !net.remove(&p) {
                    net.insert(p);
                }
            }
            for &(u, w) in &net {
                if mask[u * batch + b] == 0.0 || mask[w * batch + b] == 0.0 {
                    continue;
                }
                let sign = match self.edges.contains(&(u as u32, w as u32)) {
                    true => -1.0,
                    false => 1.0,
                };
                pairs.push((b, u, w, sign));
                delta.extend([
                    ((u * batch + b) as u32, sign),
                    ((w * batch + b) as u32, sign),
                ]);
            }
        }
        Ok(ToggledPairs { delta, pairs })
    }

    /// Each episode's scale `l_b = s_b ⊙ sqrt(d)` (`[n, B, 1]`) from its node sets' indicator
    /// `m` (`[n, B]`) and the degrees of its edited subgraph, and the toggled pairs'
    /// corrections (`None` when no episode toggles a pair inside its node set).
    fn scales(
        &self,
        m: &Tensor<2>,
        toggled: ToggledPairs,
        batch: usize,
    ) -> (Tensor<3>, Option<PairCorrections>) {
        let (n, dev) = (self.n, &self.device);
        let ToggledPairs { delta, pairs } = toggled;
        span("verdicts: node sets, degrees, toggled pairs", dev, || {
            let (m, root) = (m.clone(), self.root.clone());
            // The degrees inside each node set, `(A + I) m_b` (exact small integers, rounded
            // back from the normalised product), edited (±1 at the endpoints of each toggled
            // pair, added on the device); `s_b = m_b / sqrt(d_b)`, `l_b = s_b ⊙ sqrt(d)`.
            let induced = (self.graph.propagate(m.clone() * root.clone()) * root.clone()).round();
            let edited = match delta.is_empty() {
                true => induced,
                false => {
                    let (at, sign): (Vec<u32>, Vec<f32>) = delta.into_iter().unzip();
                    add_at(induced.reshape([n * batch]), at, sign).reshape([n, batch])
                }
            };
            let s = m * edited.clamp_min(1.0).sqrt().recip();
            let l = (s.clone() * root).reshape([n, batch, 1]);
            // The corrections: out[u, b] += σ s_b(u) s_b(w) H[w, b] and the mirror.
            let corrections = match pairs.is_empty() {
                true => None,
                false => {
                    let (mut from, mut into, mut at_u, mut at_w, mut sign) =
                        (vec![], vec![], vec![], vec![], vec![]);
                    for &(b, u, w, sg) in &pairs {
                        for (a, z) in [(u, w), (w, u)] {
                            from.push((z * batch + b) as u32);
                            into.push((a * batch + b) as u32);
                            at_u.push((a * batch + b) as u32);
                            at_w.push((z * batch + b) as u32);
                            sign.push(sg);
                        }
                    }
                    let k = sign.len();
                    let flat = s.clone().reshape([n * batch, 1]);
                    let coef = flat
                        .clone()
                        .select(0, index_tensor_below(at_u, n * batch, dev))
                        * flat.select(0, index_tensor_below(at_w, n * batch, dev))
                        * Tensor::<2>::from_data(TensorData::new(sign, [k, 1]), dev);
                    Some(PairCorrections {
                        from: index_tensor_below(from, n * batch, dev),
                        into: index_tensor_below(into, n * batch, dev),
                        coef,
                    })
                }
            };
            (l, corrections)
        })
    }

    /// The three convolutions for every episode at once: their outputs `x1`, `x2`, `x3`, each
    /// `[n, B, hidden]`.
    fn layers(
        &self,
        l: &Tensor<3>,
        corrections: Option<&PairCorrections>,
        batch: usize,
    ) -> (Tensor<3>, Tensor<3>, Tensor<3>) {
        let (n, dev) = (self.n, &self.device);
        let h = self.gcn.hidden();
        // One convolution's aggregation for every episode: `[n, B, h]` in and out.
        let propagate = |y: Tensor<3>| -> Tensor<3> {
            let out = span(
                "verdicts: sparse products (batch x hidden columns)",
                dev,
                || {
                    let scaled = (y.clone() * l.clone()).reshape([n, batch * h]);
                    self.graph.propagate(scaled).reshape([n, batch, h]) * l.clone()
                },
            );
            match corrections {
                Some(PairCorrections { from, into, coef }) => {
                    span("verdicts: toggled pairs", dev, || {
                        let flat = y.reshape([n * batch, h]);
                        let msgs = flat.select(0, from.clone()) * coef.clone();
                        // Added into the aggregation in place (it is this closure's own
                        // tensor): no `[n · B, h]` of zeros to scatter into and add.
                        out.reshape([n * batch, h])
                            .select_assign(0, into.clone(), msgs, IndexingUpdateOp::Add)
                            .reshape([n, batch, h])
                    })
                }
                None => out,
            }
        };
        let bias = |c: &crate::gcn::GraphConv| c.bias.val().reshape([1, 1, h]);
        let dense = |x: Tensor<3>, c: &crate::gcn::GraphConv| -> Tensor<3> {
            span("verdicts: dense products", dev, || {
                dense(x.reshape([n * batch, h]), c.weight.val()).reshape([n, batch, h])
            })
        };
        let xw = self.xw.clone().unsqueeze_dim::<3>(1).expand([n, batch, h]);
        let x1 = relu(propagate(xw) + bias(&self.gcn.gc1));
        let x2 = relu(propagate(dense(x1.clone(), &self.gcn.gc2)) + bias(&self.gcn.gc2));
        let x3 = propagate(dense(x2.clone(), &self.gcn.gc3)) + bias(&self.gcn.gc3);
        (x1, x2, x3)
    }

    /// The log-probabilities of the `wanted` rows (`u · B + b`) of the three layers' outputs
    /// `[x1, x2, x3]`, downloaded row-major.
    fn read_out(&self, layers: [Tensor<3>; 3], wanted: &[u32], batch: usize) -> Result<Vec<f32>> {
        let (n, dev) = (self.n, &self.device);
        let h = self.gcn.hidden();
        // In blocks whose three gathered `[rows, hidden]` layers stay within MAX_ACTIVATION
        // floats (a GPU driver grants buffers of a bounded size: Vulkan's refused 3.2 GB on an
        // H200).
        let block = self.readout_rows;
        let [x1, x2, x3] = layers.map(|x| x.reshape([n * batch, h]));
        // The classifier on `[x1, x2, x3]` as the sum of its three blocks' products: no
        // `[rows, 3 hidden]` concatenation is written and read again.
        let lin = &self.gcn.lin;
        let w = lin.weight.val();
        let c = self.gcn.num_classes();
        let part = |i: usize| w.clone().slice([i * h..(i + 1) * h, 0..c]);
        let classify = |a: Tensor<2>, b: Tensor<2>, z: Tensor<2>| {
            let y = dense(a, part(0)) + dense(b, part(1)) + dense(z, part(2));
            match &lin.bias {
                Some(bias) => y + bias.val().unsqueeze_dim(0),
                None => y,
            }
        };
        span(
            "verdicts: read-out (rows, classifier, download)",
            dev,
            || {
                let mut out = Vec::with_capacity(wanted.len() * c);
                // Most rows read (the episodes' own node sets): the classifier on every row,
                // then only the `[rows, classes]` logits picked; few rows (a target's verdict):
                // the rows picked first.
                let all = (wanted.len() * 2 >= n * batch)
                    .then(|| log_softmax(classify(x1.clone(), x2.clone(), x3.clone()), 1));
                for rows in wanted.chunks(block) {
                    let index = index_tensor_below(rows.to_vec(), n * batch, dev);
                    let pick = |x: &Tensor<2>| x.clone().select(0, index.clone());
                    let logp = match &all {
                        Some(all) => pick(all),
                        None => log_softmax(classify(pick(&x1), pick(&x2), pick(&x3)), 1),
                    };
                    out.extend(try_to_vec(logp, "batched verdicts")?);
                }
                Ok::<_, ModelError>(out)
            },
        )
    }
}

/// `u` as an index below `n`, or an error naming the episode and what the node is.
fn node_in_range(n: usize, episode: usize, u: u32, what: &str) -> Result<usize> {
    match (u as usize) < n {
        true => Ok(u as usize),
        false => Err(ModelError::InvalidInput(format!(
            "episode {episode}: {what} node {u} is outside the graph's {n} nodes"
        ))),
    }
}

/// Refuses a row read outside its episode's node set (`mask`, `[n, B]`).
fn check_reads(
    requests: &[VerdictRequest<'_>],
    mask: &[f32],
    n: usize,
    first: usize,
) -> Result<()> {
    let batch = requests.len();
    for (b, r) in requests.iter().enumerate() {
        for &u in r.read {
            if mask[node_in_range(n, first + b, u, "row")? * batch + b] == 0.0 {
                return Err(ModelError::InvalidInput(format!(
                    "episode {}: row node {u} is read but outside its node set",
                    first + b
                )));
            }
        }
    }
    Ok(())
}

/// The pairs a pass's episodes toggle inside their node sets
/// ([`VerdictBatch::toggled_pairs`]).
struct ToggledPairs {
    /// The degree changes: `(u · B + b, ±1)` at both endpoints of each pair.
    delta: Vec<(u32, f32)>,
    /// `(episode, u, w, sign)` of each pair.
    pairs: Vec<(usize, usize, usize, f32)>,
}

/// The toggled pairs' messages added to every aggregation
/// ([`VerdictBatch::scales`]): `out[into] += coef · y[from]`, over the `[n · B]` rows.
struct PairCorrections {
    from: Tensor<1, Int>,
    into: Tensor<1, Int>,
    coef: Tensor<2>,
}

/// The node sets of one pass: the requests' lists and their `[n, B]` indicator on the host and
/// on the device.
struct NodeSets {
    lists: Vec<Option<Vec<u32>>>,
    mask: Vec<f32>,
    m: Tensor<2>,
}

impl NodeSets {
    /// The node sets of `requests` (episodes numbered from `first` in errors), uploaded.
    fn new(requests: &[VerdictRequest<'_>], n: usize, first: usize, dev: &Device) -> Result<Self> {
        let batch = requests.len();
        let mut mask = vec![0f32; n * batch];
        for (b, r) in requests.iter().enumerate() {
            match r.nodes {
                Some(list) => {
                    for &u in list {
                        mask[node_in_range(n, first + b, u, "row")? * batch + b] = 1.0;
                    }
                }
                None => (0..n).for_each(|u| mask[u * batch + b] = 1.0),
            }
        }
        Ok(NodeSets {
            lists: requests
                .iter()
                .map(|r| r.nodes.map(<[u32]>::to_vec))
                .collect(),
            m: Tensor::<2>::from_data(TensorData::new(mask.clone(), [n, batch]), dev),
            mask,
        })
    }

    /// Moves to the node sets of `requests` (as many as these): only the sets that changed
    /// are rewritten, and the indicator's changes added on the device (or, when many changed,
    /// the whole indicator uploaded).
    fn update(
        mut self,
        requests: &[VerdictRequest<'_>],
        n: usize,
        first: usize,
        dev: &Device,
    ) -> Result<Self> {
        let batch = requests.len();
        let mut change: Vec<(u32, f32)> = Vec::new();
        let NodeSets { lists, mask, .. } = &mut self;
        for (b, r) in requests.iter().enumerate() {
            if lists[b].as_deref() == r.nodes {
                continue;
            }
            // The new set marked (2: entering, 3: staying), the old set's leavers
            // cleared, the marks settled: one change per node that enters or leaves.
            let at = |u: usize| u * batch + b;
            let mut new_nodes: Vec<usize> = Vec::new();
            match r.nodes {
                Some(list) => {
                    for &u in list {
                        new_nodes.push(node_in_range(n, first + b, u, "row")?);
                    }
                }
                None => new_nodes.extend(0..n),
            }
            for &u in &new_nodes {
                let i = at(u);
                mask[i] = match mask[i] {
                    0.0 => {
                        change.push((i as u32, 1.0));
                        2.0
                    }
                    1.0 => 3.0,
                    v => v, // listed twice
                };
            }
            let mut leave = |u: usize| {
                let i = at(u);
                if mask[i] == 1.0 {
                    mask[i] = 0.0;
                    change.push((i as u32, -1.0));
                }
            };
            match &lists[b] {
                Some(old) => old.iter().for_each(|&u| leave(u as usize)),
                None => (0..n).for_each(leave),
            }
            for &u in &new_nodes {
                mask[at(u)] = 1.0;
            }
            lists[b] = r.nodes.map(<[u32]>::to_vec);
        }
        // Many changes (the episodes moved between slots, or whole-graph sets swapped
        // for listed ones): the whole indicator is uploaded instead.
        match change.len() > n * batch / 8 {
            true => self.m = Tensor::from_data(TensorData::new(self.mask.clone(), [n, batch]), dev),
            false => {
                let (at, value): (Vec<u32>, Vec<f32>) = change.into_iter().unzip();
                self.m = add_at(self.m.reshape([n * batch]), at, value).reshape([n, batch]);
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
impl NodeSets {
    /// Whether `requests` evaluate exactly these node sets, in this order.
    fn matches(&self, requests: &[VerdictRequest<'_>]) -> bool {
        self.lists.len() == requests.len()
            && self
                .lists
                .iter()
                .zip(requests)
                .all(|(a, r)| a.as_deref() == r.nodes)
    }
}

/// One episode's evaluation in [`VerdictBatch::evaluate`].
#[derive(Debug, Clone, Copy)]
pub struct VerdictRequest<'r> {
    /// Node pairs toggled relative to the graph (a pair of the graph is deleted, any other
    /// added; a pair listed twice is toggled back; a pair with an endpoint outside the node
    /// set changes nothing).
    pub toggles: &'r [(u32, u32)],
    /// The nodes whose induced subgraph the model runs on; `None`: the whole graph.
    pub nodes: Option<&'r [u32]>,
    /// The nodes whose rows are returned, in this order (inside the node set).
    pub read: &'r [u32],
}

impl<'r> VerdictRequest<'r> {
    /// The model on the subgraph induced by `nodes`, every row of it read (in that order).
    pub fn on(toggles: &'r [(u32, u32)], nodes: &'r [u32]) -> Self {
        Self {
            toggles,
            nodes: Some(nodes),
            read: nodes,
        }
    }

    /// The model on the whole graph, `read`'s rows read.
    pub fn whole(toggles: &'r [(u32, u32)], read: &'r [u32]) -> Self {
        Self {
            toggles,
            nodes: None,
            read,
        }
    }
}

fn empty(c: usize) -> LogProbs {
    LogProbs::new(0, c, Vec::new()).expect("an empty buffer fits 0 rows")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GcnConfig;
    use crate::kernels::tensors::to_vec;
    use crate::testing::{float_tolerance, test_device};

    /// Six nodes, two triangles joined by one edge.
    ///
    /// ```text
    ///   0 ─ 1       3 ─ 4
    ///    \ /  ─────  \ /
    ///     2           5        (2, 3) joins them
    /// ```
    fn graph() -> (Features, Vec<(u32, u32)>) {
        let x = Features::new(6, 3, (0..18).map(|i| ((i * 5) % 7) as f32 / 7.0).collect()).unwrap();
        (
            x,
            vec![(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (3, 5), (4, 5)],
        )
    }

    /// `edges` with `toggles` applied.
    fn edited(edges: &[(u32, u32)], toggles: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut set: BTreeSet<(u32, u32)> =
            edges.iter().map(|&(u, w)| (u.min(w), u.max(w))).collect();
        for &(u, w) in toggles {
            let p = (u.min(w), u.max(w));
            if !set.remove(&p) {
                set.insert(p);
            }
        }
        set.into_iter().collect()
    }

    #[test]
    fn every_episode_matches_the_model_on_its_edited_graph() {
        let dev = test_device().unwrap();
        let gcn = GcnConfig::new(3, 3).with_hidden(5).init(&dev);
        let (x, edges) = graph();
        let batch = VerdictBatch::new(&gcn, &x, &edges, &dev).unwrap();
        let toggles = vec![
            vec![],
            vec![(2, 3)],                 // the bridge deleted
            vec![(0, 5), (1, 0)],         // one added, one deleted (given reversed)
            vec![(4, 1), (1, 4), (0, 4)], // (1, 4) added and removed again; (0, 4) added
            vec![(0, 1), (0, 2), (1, 2)], // node 0 isolated... and 1, 2
        ];
        let all: Vec<u32> = (0..6).collect();
        // Whole graph, or induced subgraphs: {5, 0, 3} sees the added (0, 5) but not the
        // deleted (0, 1); {0, 3, 2, 1} loses the bridge's far side.
        let rows = vec![
            all.clone(),
            all.clone(),
            vec![5, 0, 3],
            all.clone(),
            vec![0, 3, 2, 1],
        ];
        let got = batch.log_probs(&toggles, &rows).unwrap();
        let tol = float_tolerance(1e-5);
        for (b, (t, r)) in toggles.iter().zip(&rows).enumerate() {
            // The model on the subgraph induced by the rows, edited, in the rows' order.
            let local = |u: u32| r.iter().position(|&v| v == u).map(|i| i as u32);
            let e: Vec<(u32, u32)> = edited(&edges, t)
                .into_iter()
                .filter_map(|(u, w)| Some((local(u)?, local(w)?)))
                .collect();
            let k = r.len();
            let sub: Vec<f32> = r
                .iter()
                .flat_map(|&u| x.as_slice()[u as usize * 3..u as usize * 3 + 3].to_vec())
                .collect();
            let g = GraphTensors::new(k, &e, &dev).unwrap();
            let want = to_vec(gcn.forward(matrix(&sub, k, 3, &dev), &g));
            assert_eq!(got[b].num_nodes(), k);
            for (i, &u) in r.iter().enumerate() {
                for c in 0..3 {
                    let (a, w) = (got[b].row(i)[c], want[i * 3 + c]);
                    assert!(
                        (a - w).abs() <= tol,
                        "episode {b} node {u} class {c}: {a} vs {w}"
                    );
                }
            }
        }
        // Passes of at most two episodes give the same numbers.
        let chunked = VerdictBatch::new(&gcn, &x, &edges, &dev)
            .unwrap()
            .with_max_batch(2);
        assert_eq!(chunked.max_batch(), 2);
        assert_eq!(chunked.log_probs(&toggles, &rows).unwrap(), got);
        // So does a read-out in blocks of 4 rows (blocks straddle the episodes).
        let mut blocks = VerdictBatch::new(&gcn, &x, &edges, &dev).unwrap();
        blocks.readout_rows = 4;
        assert_eq!(blocks.log_probs(&toggles, &rows).unwrap(), got);
        // Episodes do not see each other's edits: the unedited one equals the plain model.
        assert_ne!(
            got[0].row(2),
            got[1].row(2),
            "deleting the bridge changes node 2"
        );
    }

    #[test]
    fn a_request_reads_its_rows_of_its_node_set() {
        let dev = test_device().unwrap();
        let gcn = GcnConfig::new(3, 3).with_hidden(5).init(&dev);
        let (x, edges) = graph();
        let batch = VerdictBatch::new(&gcn, &x, &edges, &dev).unwrap();
        let all: Vec<u32> = (0..6).collect();
        let toggles = [vec![(2, 3)], vec![(0, 5), (1, 0)]];
        let whole = batch
            .log_probs(&toggles, &[all.clone(), all.clone()])
            .unwrap();
        let sub = [5u32, 0, 3];
        let on_sub = batch.log_probs(&toggles[1..], &[sub.to_vec()]).unwrap();
        let got = batch
            .evaluate(&[
                VerdictRequest::whole(&toggles[0], &[4, 1]),
                VerdictRequest {
                    toggles: &toggles[1],
                    nodes: Some(&sub),
                    read: &[3],
                },
                VerdictRequest::whole(&[], &[]),
            ])
            .unwrap();
        assert_eq!(got.len(), 3);
        // The same numbers as the rows of the whole read-out (one pass, the same sums).
        assert_eq!(got[0].row(0), whole[0].row(4));
        assert_eq!(got[0].row(1), whole[0].row(1));
        assert_eq!(got[1].num_nodes(), 1);
        assert_eq!(got[1].row(0), on_sub[0].row(2));
        assert_eq!(got[2].num_nodes(), 0);
        // A row read outside the node set is an error naming the request and the node.
        let e = batch
            .evaluate(&[
                VerdictRequest::whole(&[], &[0]),
                VerdictRequest {
                    toggles: &[],
                    nodes: Some(&sub),
                    read: &[1],
                },
            ])
            .unwrap_err()
            .to_string();
        assert!(e.contains("episode 1") && e.contains("node 1"), "{e}");
    }

    #[test]
    fn node_sets_kept_between_calls_give_the_numbers_of_a_fresh_binding() {
        let dev = test_device().unwrap();
        let gcn = GcnConfig::new(3, 3).with_hidden(5).init(&dev);
        let (x, edges) = graph();
        let kept = VerdictBatch::new(&gcn, &x, &edges, &dev)
            .unwrap()
            .with_max_batch(2);
        let all: Vec<u32> = (0..6).collect();
        let sets = vec![all.clone(), vec![5, 0, 3], vec![0, 3, 2, 1]];
        let other = vec![vec![1, 2, 3], all.clone(), all.clone()];
        let t1 = vec![vec![(2, 3)], vec![(0, 5)], vec![]];
        let t2 = vec![vec![], vec![(0, 3), (0, 5)], vec![(1, 3)]];
        for (toggles, rows) in [(&t1, &sets), (&t2, &sets), (&t1, &other), (&t2, &sets)] {
            let got = kept.log_probs(toggles, rows).unwrap();
            let fresh = VerdictBatch::new(&gcn, &x, &edges, &dev)
                .unwrap()
                .with_max_batch(2)
                .log_probs(toggles, rows)
                .unwrap();
            assert_eq!(got, fresh);
            // Both passes keep their sets for the next call.
            let cache = kept.sets.lock().unwrap();
            let requests: Vec<VerdictRequest<'_>> = toggles
                .iter()
                .zip(rows.iter())
                .map(|(t, r)| VerdictRequest::on(t, r))
                .collect();
            assert!(cache[0].as_ref().unwrap().matches(&requests[..2]));
            assert!(cache[1].as_ref().unwrap().matches(&requests[2..]));
        }
        // Whole-graph sets and listed ones swap places; a failed call in between (a node out
        // of range, found after a set was rewritten) leaves nothing wrong behind.
        let fresh = |reqs: &[VerdictRequest<'_>]| {
            VerdictBatch::new(&gcn, &x, &edges, &dev)
                .unwrap()
                .with_max_batch(2)
                .evaluate(reqs)
                .unwrap()
        };
        let (a, b) = ([0u32, 1, 2, 3], [2u32, 3, 4]);
        let calls: Vec<Vec<VerdictRequest<'_>>> = vec![
            vec![
                VerdictRequest::whole(&t1[0], &[0, 5]),
                VerdictRequest::on(&t1[1], &a),
            ],
            vec![
                VerdictRequest::on(&t2[1], &b),
                VerdictRequest::whole(&t2[2], &[4]),
            ],
            vec![
                VerdictRequest::whole(&[], &[3]),
                VerdictRequest::on(&t1[0], &b),
            ],
            // One node enters (a change added on the device, not a whole upload).
            vec![
                VerdictRequest::whole(&[], &[3]),
                VerdictRequest::on(&t1[0], &[2, 3, 4, 5]),
            ],
            vec![
                VerdictRequest::whole(&[], &[3]),
                VerdictRequest::on(&t2[1], &[2, 3, 5]),
            ],
        ];
        for (i, reqs) in calls.iter().enumerate() {
            assert_eq!(kept.evaluate(reqs).unwrap(), fresh(reqs), "call {i}");
        }
        for (i, reqs) in calls.iter().enumerate().rev() {
            let bad = [
                VerdictRequest::on(&[], &a),
                VerdictRequest::on(&[], &[1, 9]),
            ];
            assert!(kept.evaluate(&bad).is_err());
            assert_eq!(kept.evaluate(reqs).unwrap(), fresh(reqs), "call {i} again");
        }
        // A call with fewer passes drops the passes it does not use.
        kept.evaluate(&calls[0][..1]).unwrap();
        assert_eq!(kept.sets.lock().unwrap().len(), 1);
    }

    #[test]
    fn bad_input_is_a_typed_error_naming_what() {
        let dev = test_device().unwrap();
        let gcn = GcnConfig::new(3, 2).init(&dev);
        let (x, edges) = graph();
        let wide = Features::new(6, 4, vec![0.0; 24]).unwrap();
        assert!(matches!(
            VerdictBatch::new(&gcn, &wide, &edges, &dev),
            Err(ModelError::DimensionMismatch {
                expected: 3,
                got: 4,
                ..
            })
        ));
        // A GCN whose layers differ in width is refused, naming the layer.
        let mut uneven = GcnConfig::new(3, 2).init(&dev);
        let h = uneven.hidden();
        uneven.gc3.weight = burn::module::Param::from_tensor(Tensor::<2>::zeros([h, h + 1], &dev));
        let e = VerdictBatch::new(&uneven, &x, &edges, &dev)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("third convolution") && e.contains("one width"),
            "{e}"
        );
        assert!(!VerdictBatch::supports(&uneven) && VerdictBatch::supports(&gcn));
        let twice = [(0, 1), (1, 0)];
        let e = VerdictBatch::new(&gcn, &x, &twice, &dev)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("(1, 0)"), "{e}");
        let batch = VerdictBatch::new(&gcn, &x, &edges, &dev).unwrap();
        let e = batch
            .log_probs(&[vec![], vec![(0, 9)]], &[vec![0], vec![0]])
            .unwrap_err();
        assert!(
            e.to_string().contains("episode 1") && e.to_string().contains("node 9"),
            "{e}"
        );
        // Numbered across passes.
        let one = VerdictBatch::new(&gcn, &x, &edges, &dev)
            .unwrap()
            .with_max_batch(1);
        let e = one
            .log_probs(&[vec![], vec![(0, 9)]], &[vec![0], vec![0]])
            .unwrap_err();
        assert!(e.to_string().contains("episode 1"), "{e}");
        let e = batch.log_probs(&[vec![(2, 2)]], &[vec![0]]).unwrap_err();
        assert!(e.to_string().contains("self loop"), "{e}");
        let e = batch.log_probs(&[vec![]], &[vec![6]]).unwrap_err();
        assert!(e.to_string().contains("row node 6"), "{e}");
        assert!(batch.log_probs(&[vec![]], &[]).is_err());
        assert!(batch.log_probs(&[], &[]).unwrap().is_empty());
        let none = batch.log_probs(&[vec![(0, 3)]], &[vec![]]).unwrap();
        assert_eq!(none[0].num_nodes(), 0);
    }
}
