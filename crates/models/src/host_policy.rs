//! A fused CPU kernel of the [`Policy`]: the same network (GAT layers, optional node BatchNorm,
//! LeakyReLU, NaN guard, scoring MLP, log-softmax) as plain Rust loops over a flat parameter
//! vector, with a hand-written backward pass and an Adam step identical to Burn's.
//!
//! Why: a policy state is small (tens to a few thousand nodes, 16-wide embeddings), so Burn's
//! per-operation cost (allocation, dispatch, autodiff bookkeeping) dominates the arithmetic.
//! The kernel fuses each GAT layer's gather / attention / softmax / scatter into one pass over an
//! incoming-message CSR, and scores candidates with the first MLP layer split per endpoint:
//! `W1 · [X_u ‖ X_w ‖ f] = (X W1ᵤ)[u] + (X W1_w)[w] + f · w_f`, so the `2·hidden`-wide product is
//! computed once per node instead of once per candidate.
//!
//! The Burn [`Policy`] stays the reference: tests pin the kernel's log-probabilities and
//! gradients to Burn's forward and autodiff, and [`HostPolicy::from_policy`] /
//! [`HostPolicy::to_policy`] convert parameters both ways exactly.
//!
//! ```
//! use induce_models::host_policy::{HostGraph, HostPolicy};
//! use induce_models::{PolicyConfig, device::default_device};
//! let dev = default_device().unwrap();
//! let policy = HostPolicy::from_policy(&PolicyConfig::new(2).init(&dev));
//! //  0 ─ 1 ─ 2 : candidates delete (0, 1), add (0, 2)
//! let g = HostGraph::new(3, &[(0, 1), (1, 2)]).unwrap();
//! let trace = policy.forward(&[1.0; 6], &g, &[0, 0], &[1, 2], &[0.0, 1.0]);
//! let p: f32 = trace.log_probs().iter().map(|l| l.exp()).sum();
//! assert!((p - 1.0).abs() < 1e-5);
//! ```

use burn::module::Param;
use burn::nn::Linear;
use burn::tensor::{Device, Tensor, TensorData};

use crate::error::{ModelError, Result};
use crate::gat::GatConv;
use crate::policy::{NodeBatchNorm, Policy};

const BN_EPS: f32 = 1e-5;

/// A graph as incoming-message lists for the GAT layers: for each destination node `i`, the
/// sources `j` of its messages (its neighbours and itself, the self loop).
///
/// ```text
///  0 ─ 1     incoming(0) = [1, 0], incoming(1) = [0, 1], incoming(2) = [2]
///  2
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HostGraph {
    num_nodes: usize,
    offsets: Vec<usize>,
    src: Vec<u32>,
}

impl HostGraph {
    /// Builds the message lists of an undirected graph given as `(u, w)` pairs (each pair once).
    /// Rejects out-of-range endpoints and self loops.
    pub fn new(num_nodes: usize, edges: &[(u32, u32)]) -> Result<Self> {
        let mut deg = vec![1usize; num_nodes];
        for &(u, w) in edges {
            if u as usize >= num_nodes || w as usize >= num_nodes {
                return Err(ModelError::InvalidInput(format!(
                    "edge ({u}, {w}) has an endpoint outside the graph's {num_nodes} nodes"
                )));
            }
            if u == w {
                return Err(ModelError::InvalidInput(format!(
                    "self loop ({u}, {u}) in edge list"
                )));
            }
            deg[u as usize] += 1;
            deg[w as usize] += 1;
        }
        let mut offsets = Vec::with_capacity(num_nodes + 1);
        offsets.push(0);
        for d in &deg {
            offsets.push(offsets.last().copied().unwrap_or(0) + d);
        }
        let mut fill: Vec<usize> = offsets[..num_nodes].to_vec();
        let mut src = vec![0u32; offsets[num_nodes]];
        for &(u, w) in edges {
            src[fill[w as usize]] = u;
            fill[w as usize] += 1;
            src[fill[u as usize]] = w;
            fill[u as usize] += 1;
        }
        for (i, f) in fill.iter().enumerate() {
            src[*f] = i as u32;
        }
        Ok(Self {
            num_nodes,
            offsets,
            src,
        })
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// Number of messages (`2E + n`).
    pub fn num_messages(&self) -> usize {
        self.src.len()
    }

    fn incoming(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i]..self.offsets[i + 1]
    }
}

/// A per-node state `[n, width]` given as two column blocks, `row i = first[i] ‖ second[i]`:
/// a caller keeps the columns that never change during an episode (the node features, often
/// hundreds wide) in one shared block and copies only the few that change at every edit. The
/// kernel computes exactly what it computes on the concatenated rows (same operations, same
/// order).
///
/// ```
/// use induce_models::host_policy::StateBlocks;
/// let features = [1.0, 2.0, 3.0, 4.0]; // 2 nodes, 2 fixed columns
/// let degree = [1.0, 0.0];             // 2 nodes, 1 changing column
/// let x = StateBlocks::new(&features, 2, &degree, 1);
/// assert_eq!((x.num_nodes(), x.width()), (2, 3));
/// assert_eq!(x.to_rows(), vec![1.0, 2.0, 1.0, 3.0, 4.0, 0.0]);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct StateBlocks<'a> {
    first: &'a [f32],
    first_width: usize,
    second: &'a [f32],
    second_width: usize,
    num_nodes: usize,
    /// The non-zero entries of each block, when the caller has them (wide sparse features).
    sparse: [Option<&'a SparseRows>; 2],
}

/// The non-zero entries of a row-major matrix, row by row (compressed sparse rows), for
/// [`StateBlocks::with_sparse`]: the kernel then visits only the non-zero entries of wide, sparse
/// node features (bag-of-words rows are mostly zeros), in the same order and with the same
/// arithmetic as the dense loop, which skips zeros.
///
/// ```
/// use induce_models::host_policy::SparseRows;
/// let s = SparseRows::new(&[0.0, 2.0, 0.0, 1.0, 0.0, 0.0], 3);
/// assert_eq!((s.num_rows(), s.nnz()), (2, 2));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SparseRows {
    offsets: Vec<usize>,
    cols: Vec<u32>,
    vals: Vec<f32>,
    width: usize,
}

impl SparseRows {
    /// The non-zero entries (`x != 0.0`, so NaN is kept and `-0.0` dropped, as the dense loop
    /// does) of `x`, `[n, width]` row-major.
    pub fn new(x: &[f32], width: usize) -> Self {
        let mut offsets = vec![0];
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        if width > 0 {
            for row in x.chunks_exact(width) {
                for (c, &v) in row.iter().enumerate() {
                    if v != 0.0 {
                        cols.push(c as u32);
                        vals.push(v);
                    }
                }
                offsets.push(cols.len());
            }
        }
        Self {
            offsets,
            cols,
            vals,
            width,
        }
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of non-zero entries.
    pub fn nnz(&self) -> usize {
        self.cols.len()
    }

    /// Share of non-zero entries (1 for an empty matrix).
    pub fn density(&self) -> f64 {
        let total = self.num_rows() * self.width;
        if total == 0 {
            1.0
        } else {
            self.nnz() as f64 / total as f64
        }
    }

    fn row(&self, i: usize) -> (&[u32], &[f32]) {
        let r = self.offsets[i]..self.offsets[i + 1];
        (&self.cols[r.clone()], &self.vals[r])
    }
}

/// The first GAT layer's product over a state's first block ([`HostPolicy::first_block_product`]).
#[derive(Debug, Clone)]
pub struct FirstBlockProduct {
    rows: Vec<f32>,
    num_nodes: usize,
    first_width: usize,
}

/// One row of one block of a [`StateBlocks`]: dense values or the non-zero entries.
#[derive(Clone, Copy)]
enum Part<'a> {
    Dense(&'a [f32]),
    Sparse(&'a [u32], &'a [f32]),
}

impl Part<'_> {
    /// Calls `f(column, value)` for every non-zero entry, in column order.
    #[inline(always)]
    fn for_each_nonzero(self, mut f: impl FnMut(usize, f32)) {
        match self {
            Part::Dense(row) => {
                for (c, &v) in row.iter().enumerate() {
                    if v != 0.0 {
                        f(c, v);
                    }
                }
            }
            Part::Sparse(cols, vals) => {
                for (&c, &v) in cols.iter().zip(vals) {
                    f(c as usize, v);
                }
            }
        }
    }
}

impl<'a> StateBlocks<'a> {
    /// Two blocks of `first_width` and `second_width` columns over the same nodes.
    ///
    /// Panics if the blocks' lengths do not describe the same number of rows.
    pub fn new(
        first: &'a [f32],
        first_width: usize,
        second: &'a [f32],
        second_width: usize,
    ) -> Self {
        let rows = |x: &[f32], w: usize| x.len().checked_div(w);
        let n = rows(first, first_width)
            .or(rows(second, second_width))
            .unwrap_or(0);
        assert!(
            first.len() == n * first_width && second.len() == n * second_width,
            "blocks of {} and {} values are not {n} rows of {first_width} and {second_width}",
            first.len(),
            second.len()
        );
        Self {
            first,
            first_width,
            second,
            second_width,
            num_nodes: n,
            sparse: [None, None],
        }
    }

    /// The same state with the non-zero entries of block `block` (0 or 1) given, which the
    /// kernel then iterates instead of scanning the dense rows (same results, bit for bit).
    ///
    /// Panics if `sparse` does not have the block's shape.
    pub fn with_sparse(mut self, block: usize, sparse: &'a SparseRows) -> Self {
        let width = [self.first_width, self.second_width][block];
        if width == 0 {
            return self; // nothing to iterate
        }
        assert!(
            sparse.width == width && sparse.num_rows() == self.num_nodes,
            "sparse block is not {} rows of {width}",
            self.num_nodes
        );
        self.sparse[block] = Some(sparse);
        self
    }

    /// A state given whole, row-major `[n, width]`.
    pub fn whole(x: &'a [f32], width: usize) -> Self {
        Self::new(x, width, &[], 0)
    }

    /// Number of rows (nodes).
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// Width of a row (both blocks).
    pub fn width(&self) -> usize {
        self.first_width + self.second_width
    }

    /// The concatenated rows, row-major `[n, width]` (a copy).
    pub fn to_rows(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.num_nodes * self.width());
        for i in 0..self.num_nodes {
            out.extend_from_slice(self.row_first(i));
            out.extend_from_slice(self.row_second(i));
        }
        out
    }

    fn row_first(&self, i: usize) -> &'a [f32] {
        &self.first[i * self.first_width..(i + 1) * self.first_width]
    }

    fn row_second(&self, i: usize) -> &'a [f32] {
        &self.second[i * self.second_width..(i + 1) * self.second_width]
    }

    /// Row `i`'s two parts, each with the index of its first column.
    fn parts(&self, i: usize) -> [(Part<'a>, usize); 2] {
        let part = |b: usize, dense: &'a [f32]| match self.sparse[b] {
            Some(s) => {
                let (c, v) = s.row(i);
                Part::Sparse(c, v)
            }
            None => Part::Dense(dense),
        };
        [
            (part(0, self.row_first(i)), 0),
            (part(1, self.row_second(i)), self.first_width),
        ]
    }
}

/// `out[r, :] += x[r, :] · W` for a row-major `W` of shape `[width, m]`: [`matmul_acc`] on the
/// concatenated rows, bit for bit (each row accumulates over the first block's columns, then the
/// second's, skipping zeros).
///
/// With `start` (the sums over the first block alone, [`HostPolicy::first_block_product`]),
/// each row continues from them over the second block only: the same operations in the same
/// order as without it.
fn matmul_acc_blocks(
    x: &StateBlocks<'_>,
    w: &[f32],
    m: usize,
    out: &mut [f32],
    start: Option<&[f32]>,
) {
    let skip = usize::from(start.is_some());
    fn fixed<const M: usize>(
        x: &StateBlocks<'_>,
        w: &[f32],
        out: &mut [f32],
        start: Option<&[f32]>,
        skip: usize,
    ) {
        for (i, or) in out.chunks_exact_mut(M).enumerate().take(x.num_nodes) {
            let mut acc = [0.0f32; M];
            if let Some(s) = start {
                acc.copy_from_slice(&s[i * M..(i + 1) * M]);
            }
            for (part, at) in x.parts(i).into_iter().skip(skip) {
                part.for_each_nonzero(|c, xv| {
                    let wr = &w[(at + c) * M..(at + c + 1) * M];
                    for j in 0..M {
                        acc[j] += xv * wr[j];
                    }
                });
            }
            for j in 0..M {
                or[j] += acc[j];
            }
        }
    }
    match m {
        16 => fixed::<16>(x, w, out, start, skip),
        8 => fixed::<8>(x, w, out, start, skip),
        _ => {
            for (i, or) in out.chunks_exact_mut(m).enumerate().take(x.num_nodes) {
                if let Some(s) = start {
                    for (o, &v) in or.iter_mut().zip(&s[i * m..(i + 1) * m]) {
                        *o += v;
                    }
                }
                for (part, at) in x.parts(i).into_iter().skip(skip) {
                    part.for_each_nonzero(|c, xv| {
                        let wr = &w[(at + c) * m..(at + c + 1) * m];
                        for (o, &wv) in or.iter_mut().zip(wr) {
                            *o += xv * wv;
                        }
                    });
                }
            }
        }
    }
}

/// `dW[width, m] += xᵀ · d` for `x` in blocks and `d: [n, m]`: [`matmul_tn_acc`] on the
/// concatenated rows, bit for bit, but reading `x` row by row (once, skipping zeros) instead of
/// column by column: on wide, sparse node features the column-wise pass re-reads the whole state
/// once per feature.
fn matmul_tn_acc_blocks(x: &StateBlocks<'_>, d: &[f32], m: usize, dw: &mut [f32]) {
    if m == 16 {
        // As `matmul_tn_acc_fixed`: every entry summed from zero over the rows, then added once.
        let mut acc = vec![0.0f32; dw.len()];
        for (i, dr) in d.chunks_exact(16).enumerate().take(x.num_nodes) {
            let dr: &[f32; 16] = dr.try_into().expect("16 wide");
            for (part, at) in x.parts(i) {
                part.for_each_nonzero(|c, xv| {
                    let ar = &mut acc[(at + c) * 16..(at + c + 1) * 16];
                    for j in 0..16 {
                        ar[j] += xv * dr[j];
                    }
                });
            }
        }
        for (g, a) in dw.iter_mut().zip(acc) {
            *g += a;
        }
        return;
    }
    for (i, dr) in d.chunks_exact(m).enumerate().take(x.num_nodes) {
        for (part, at) in x.parts(i) {
            part.for_each_nonzero(|c, xv| {
                for (o, &dv) in dw[(at + c) * m..(at + c + 1) * m].iter_mut().zip(dr) {
                    *o += xv * dv;
                }
            });
        }
    }
}

/// Where one GAT layer's parameters sit in the flat vector.
#[derive(Debug, Clone, Copy)]
struct GatSlots {
    input: usize,
    out: usize,
    w: usize,
    a_src: usize,
    a_dst: usize,
    bias: usize,
    bn: Option<(usize, usize)>,
}

/// Where one linear layer's parameters sit in the flat vector.
#[derive(Debug, Clone, Copy)]
struct LinSlots {
    input: usize,
    out: usize,
    w: usize,
    b: usize,
}

/// The [`Policy`] as a flat parameter vector with a fused forward and backward pass.
///
/// Only the architecture of [`Policy`] is supported: any number of GAT layers, an MLP of three
/// linear layers (`2·hidden + 1 → m → m → 1`) with biases.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// All parameters, layer by layer (see [`HostPolicy::num_params`]).
    pub params: Vec<f32>,
    gat: Vec<GatSlots>,
    mlp: [LinSlots; 3],
    attention_slope: f32,
    activation_slope: f32,
    nan_to_num: bool,
}

/// Everything the backward pass needs from one forward pass, and its result.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    layers: Vec<LayerTrace>,
    emb: Vec<f32>,
    nan_mask: Vec<bool>,
    log_probs: Vec<f32>,
}

#[derive(Debug, Clone, Default)]
struct LayerTrace {
    /// Layer input `[n, in]` (empty for the first layer: the caller's state).
    input: Vec<f32>,
    /// `h = x W`, `[n, out]`.
    h: Vec<f32>,
    a_src: Vec<f32>,
    a_dst: Vec<f32>,
    /// Attention of each message (CSR order).
    alpha: Vec<f32>,
    /// Pre-activation after the optional BatchNorm, `[n, out]`.
    y: Vec<f32>,
    /// BatchNorm: normalised `x̂` and `1 / sqrt(var + eps)` per feature.
    xhat: Vec<f32>,
    inv_std: Vec<f32>,
}

impl Trace {
    /// `log Π(a | S)` of every candidate, `[C]`.
    pub fn log_probs(&self) -> &[f32] {
        &self.log_probs
    }

    /// Node embeddings after the last GAT layer, row-major `[n, hidden]`.
    pub fn embeddings(&self) -> &[f32] {
        &self.emb
    }
}

fn lrelu(x: f32, slope: f32) -> f32 {
    if x >= 0.0 { x } else { slope * x }
}

fn lrelu_grad(x: f32, slope: f32) -> f32 {
    if x >= 0.0 { 1.0 } else { slope }
}

/// Dot product with eight independent partial sums (vectorises; the summation order differs
/// from a sequential loop by rounding only).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// `out[r, :] += x[r, :] · W` for a row-major `W` of shape `[k, m]`.
fn matmul_acc(x: &[f32], w: &[f32], k: usize, m: usize, out: &mut [f32]) {
    match m {
        16 => matmul_acc_fixed::<16>(x, w, k, out),
        8 => matmul_acc_fixed::<8>(x, w, k, out),
        _ => {
            for (xr, or) in x.chunks_exact(k).zip(out.chunks_exact_mut(m)) {
                for (&xv, wr) in xr.iter().zip(w.chunks_exact(m)) {
                    if xv != 0.0 {
                        for (o, &wv) in or.iter_mut().zip(wr) {
                            *o += xv * wv;
                        }
                    }
                }
            }
        }
    }
}

/// [`matmul_acc`] for a width known at compile time: each output row is accumulated in
/// registers over the whole of `k`, then added once.
fn matmul_acc_fixed<const M: usize>(x: &[f32], w: &[f32], k: usize, out: &mut [f32]) {
    for (xr, or) in x.chunks_exact(k).zip(out.chunks_exact_mut(M)) {
        let mut acc = [0.0f32; M];
        for (&xv, wr) in xr.iter().zip(w.chunks_exact(M)) {
            if xv != 0.0 {
                for j in 0..M {
                    acc[j] += xv * wr[j];
                }
            }
        }
        for j in 0..M {
            or[j] += acc[j];
        }
    }
}

/// `out += Σ_m weight[m] · h[src[m], :]` (rows of width `M`), accumulated in registers.
fn weighted_sum_fixed<const M: usize>(weight: &[f32], src: &[u32], h: &[f32], out: &mut [f32]) {
    let mut acc = [0.0f32; M];
    for (&a, &j) in weight.iter().zip(src) {
        let hj = &h[j as usize * M..(j as usize + 1) * M];
        for l in 0..M {
            acc[l] += hj[l] * a;
        }
    }
    for l in 0..M {
        out[l] += acc[l];
    }
}

/// The scoring MLP of a [`HostPolicy`] bound to one state's embeddings: its parameters as slices
/// and the per-node halves of its first layer, `P = X W1[:h]` and `Q = X W1[h:2h]` (`[n, m]`).
struct MlpPass<'p> {
    m: usize,
    m2: usize,
    slope: f32,
    wf: &'p [f32],
    b1: &'p [f32],
    w2: &'p [f32],
    b2: &'p [f32],
    w3: &'p [f32],
    b3: f32,
    pu: Vec<f32>,
    qw: Vec<f32>,
}

impl MlpPass<'_> {
    /// The first hidden layer of the candidates `start..start + rows`: `z1 = P[u] + Q[w] +
    /// flag·w_f + b1` and `a1 = LeakyReLU(z1)` (`[rows, m]` each).
    fn layer1(
        &self,
        start: usize,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
        z1: &mut [f32],
        a1: &mut [f32],
    ) {
        let m = self.m;
        for (r, (zr, ar)) in z1
            .chunks_exact_mut(m)
            .zip(a1.chunks_exact_mut(m))
            .enumerate()
        {
            let k = start + r;
            let (a, b) = (u[k] as usize * m, w[k] as usize * m);
            for j in 0..m {
                zr[j] = self.pu[a + j] + self.qw[b + j] + flag[k] * self.wf[j] + self.b1[j];
                ar[j] = lrelu(zr[j], self.slope);
            }
        }
    }

    /// The second hidden layer's pre-activation `z2 = a1 W2 + b2` (`[rows, m2]`).
    fn layer2(&self, a1: &[f32], z2: &mut [f32]) {
        z2.fill(0.0);
        matmul_acc(a1, self.w2, self.m, self.m2, z2);
        for row in z2.chunks_exact_mut(self.m2) {
            for (z, &b) in row.iter_mut().zip(self.b2) {
                *z += b;
            }
        }
    }
}

/// Candidates per block of the scoring MLP's passes ([`HostPolicy::mlp_scores`],
/// [`HostPolicy::mlp_backward`]): their hidden layers live in `CHUNK × m` buffers.
const CHUNK: usize = 256;

/// `acc[k, m] += xᵀ · d` (`x: [n, k]`, `d: [n, m]`) summed as [`matmul_tn_acc_fixed`] sums it
/// (each entry over the rows in order, skipping zeros of `x`) but into a separate accumulator
/// that later blocks of rows continue: blocks in order give the same sums as one call over all
/// the rows, once `acc` is added to the gradient.
fn matmul_tn_acc_rows(x: &[f32], d: &[f32], k: usize, m: usize, acc: &mut [f32]) {
    if m == 16 {
        return matmul_tn_acc_rows_fixed::<16>(x, d, k, acc);
    }
    for (kk, ar) in acc.chunks_exact_mut(m).enumerate().take(k) {
        for (xr, dr) in x.chunks_exact(k).zip(d.chunks_exact(m)) {
            let xv = xr[kk];
            if xv != 0.0 {
                for (o, &dv) in ar.iter_mut().zip(dr) {
                    *o += xv * dv;
                }
            }
        }
    }
}

/// [`matmul_tn_acc_rows`] for a width known at compile time: each row of `acc` is carried in
/// registers over the block's rows.
fn matmul_tn_acc_rows_fixed<const M: usize>(x: &[f32], d: &[f32], k: usize, acc: &mut [f32]) {
    for (kk, ar) in acc.chunks_exact_mut(M).enumerate().take(k) {
        let mut a = [0.0f32; M];
        a.copy_from_slice(ar);
        for (xr, dr) in x.chunks_exact(k).zip(d.chunks_exact(M)) {
            let xv = xr[kk];
            if xv != 0.0 {
                for j in 0..M {
                    a[j] += xv * dr[j];
                }
            }
        }
        ar.copy_from_slice(&a);
    }
}

/// `dW[k, m] += xᵀ · d` for `x: [n, k]`, `d: [n, m]`.
fn matmul_tn_acc(x: &[f32], d: &[f32], k: usize, m: usize, dw: &mut [f32]) {
    if m == 16 {
        return matmul_tn_acc_fixed::<16>(x, d, k, dw);
    }
    for (xr, dr) in x.chunks_exact(k).zip(d.chunks_exact(m)) {
        for (&xv, dwr) in xr.iter().zip(dw.chunks_exact_mut(m)) {
            if xv != 0.0 {
                for (o, &dv) in dwr.iter_mut().zip(dr) {
                    *o += xv * dv;
                }
            }
        }
    }
}

/// [`matmul_tn_acc`] for a width known at compile time: one row of `dW` at a time, accumulated
/// in registers over all `n` rows.
fn matmul_tn_acc_fixed<const M: usize>(x: &[f32], d: &[f32], k: usize, dw: &mut [f32]) {
    for (kk, dwr) in dw.chunks_exact_mut(M).enumerate().take(k) {
        let mut acc = [0.0f32; M];
        for (xr, dr) in x.chunks_exact(k).zip(d.chunks_exact(M)) {
            let xv = xr[kk];
            if xv != 0.0 {
                for j in 0..M {
                    acc[j] += xv * dr[j];
                }
            }
        }
        for j in 0..M {
            dwr[j] += acc[j];
        }
    }
}

/// `dx[r, :] += d[r, :] · Wᵀ` for `W: [k, m]`, `d: [n, m]`, `dx: [n, k]` (through an explicit
/// transpose so that the inner loop runs over `dx`'s row and vectorises).
fn matmul_nt_acc(d: &[f32], w: &[f32], k: usize, m: usize, dx: &mut [f32]) {
    let mut wt = vec![0.0; k * m];
    for (r, row) in w.chunks_exact(m).enumerate() {
        for (c, &v) in row.iter().enumerate() {
            wt[c * k + r] = v;
        }
    }
    matmul_acc(d, &wt, m, k, dx);
}

fn read<const D: usize>(p: &Param<Tensor<D>>) -> Vec<f32> {
    p.val()
        .into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .expect("float parameter converts to f32")
}

impl HostPolicy {
    /// Copies a Burn [`Policy`]'s parameters (exactly) into a host kernel.
    pub fn from_policy(policy: &Policy) -> Self {
        assert_eq!(policy.mlp.len(), 3, "the policy MLP has three layers");
        let mut params = Vec::new();
        let mut push = |v: Vec<f32>| {
            let at = params.len();
            params.extend(v);
            at
        };
        // Burn's visiting order: every GAT layer, then every BatchNorm, then the MLP.
        let mut gat = Vec::with_capacity(policy.gat.len());
        for layer in &policy.gat {
            let [input, out] = layer.lin.weight.dims();
            let w = push(read(&layer.lin.weight));
            let a_src = push(read(&layer.att_src));
            let a_dst = push(read(&layer.att_dst));
            let bias = push(read(&layer.bias));
            gat.push(GatSlots {
                input,
                out,
                w,
                a_src,
                a_dst,
                bias,
                bn: None,
            });
        }
        for (slots, bn) in gat.iter_mut().zip(&policy.norm) {
            slots.bn = Some((push(read(&bn.weight)), push(read(&bn.bias))));
        }
        let mut lin = |l: &Linear| {
            let [input, out] = l.weight.dims();
            let w = push(read(&l.weight));
            let b = push(read(
                l.bias.as_ref().expect("policy MLP layers have a bias"),
            ));
            LinSlots { input, out, w, b }
        };
        let mlp = [
            lin(&policy.mlp[0]),
            lin(&policy.mlp[1]),
            lin(&policy.mlp[2]),
        ];
        Self {
            params,
            gat,
            mlp,
            attention_slope: policy.gat.first().map_or(0.2, |l| l.attention_slope as f32),
            activation_slope: policy.activation_slope as f32,
            nan_to_num: policy.nan_to_num,
        }
    }

    /// The parameters as a Burn [`Policy`] on `device` (exact copy).
    pub fn to_policy(&self, device: &Device) -> Policy {
        let p2 = |at: usize, r: usize, c: usize| {
            Param::from_tensor(Tensor::<2>::from_data(
                TensorData::new(self.params[at..at + r * c].to_vec(), [r, c]),
                device,
            ))
        };
        let p1 = |at: usize, n: usize| {
            Param::from_tensor(Tensor::<1>::from_data(
                TensorData::new(self.params[at..at + n].to_vec(), [n]),
                device,
            ))
        };
        let gat = self
            .gat
            .iter()
            .map(|s| GatConv {
                lin: Linear {
                    weight: p2(s.w, s.input, s.out),
                    bias: None,
                },
                att_src: p2(s.a_src, s.out, 1),
                att_dst: p2(s.a_dst, s.out, 1),
                bias: p1(s.bias, s.out),
                attention_slope: f64::from(self.attention_slope),
            })
            .collect();
        let norm = self
            .gat
            .iter()
            .filter_map(|s| {
                s.bn.map(|(g, b)| NodeBatchNorm {
                    weight: p1(g, s.out),
                    bias: p1(b, s.out),
                })
            })
            .collect();
        let mlp = self
            .mlp
            .iter()
            .map(|s| Linear {
                weight: p2(s.w, s.input, s.out),
                bias: Some(p1(s.b, s.out)),
            })
            .collect();
        Policy {
            gat,
            norm,
            mlp,
            activation_slope: f64::from(self.activation_slope),
            nan_to_num: self.nan_to_num,
        }
    }

    /// Number of scalar parameters.
    pub fn num_params(&self) -> usize {
        self.params.len()
    }

    /// Width of the state vector the policy expects.
    pub fn input_dim(&self) -> usize {
        self.gat.first().map_or(0, |s| s.input)
    }

    fn hidden(&self) -> usize {
        self.gat.last().map_or(0, |s| s.out)
    }

    /// Forward pass: `log Π(a | S)` of every candidate `a = (u[k], w[k], flag[k])`, with the
    /// intermediate values the backward pass needs.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`, row-major (the per-node state)
    /// - u, w, flag: `[C]`
    /// - output: a [`Trace`] whose [`Trace::log_probs`] is `[C]`
    ///
    /// Panics if `x` or the candidate lists do not match the graph and each other.
    pub fn forward(&self, x: &[f32], g: &HostGraph, u: &[u32], w: &[u32], flag: &[f32]) -> Trace {
        assert_eq!(
            x.len(),
            g.num_nodes * self.input_dim(),
            "state is [n, input_dim]"
        );
        self.forward_blocks(&StateBlocks::whole(x, self.input_dim()), g, u, w, flag)
    }

    /// [`HostPolicy::forward`] on a state given in two column blocks (the same result, bit for
    /// bit): see [`StateBlocks`].
    ///
    /// # Shapes
    /// - x: `[n, input_dim]` in two blocks
    /// - u, w, flag: `[C]`
    ///
    /// Panics if `x` or the candidate lists do not match the graph and each other.
    pub fn forward_blocks(
        &self,
        x: &StateBlocks<'_>,
        g: &HostGraph,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
    ) -> Trace {
        self.forward_cached(x, None, g, u, w, flag)
    }

    /// The first GAT layer's product `x W` over the state's FIRST block alone (`[n, out]`):
    /// while the policy's parameters and that block stay the same (an episode's node features,
    /// [`StateLayout::Paper`](../../induce_rl/enum.StateLayout.html)), every step's forward pass
    /// can start from it ([`HostPolicy::forward_cached`]) instead of re-reading the features.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]` in two blocks; output rows `[n, hidden]`
    pub fn first_block_product(&self, x: &StateBlocks<'_>) -> FirstBlockProduct {
        let s = self.gat[0];
        assert_eq!(x.width(), self.input_dim(), "state is [n, input_dim]");
        let only_first = StateBlocks {
            second_width: 0,
            second: &[],
            sparse: [x.sparse[0], None],
            ..*x
        };
        let mut rows = vec![0.0; x.num_nodes() * s.out];
        matmul_acc_blocks(
            &only_first,
            &self.params[s.w..s.w + x.first_width * s.out],
            s.out,
            &mut rows,
            None,
        );
        FirstBlockProduct {
            rows,
            num_nodes: x.num_nodes(),
            first_width: x.first_width,
        }
    }

    /// [`HostPolicy::forward_blocks`] starting from the first block's product
    /// ([`HostPolicy::first_block_product`] of the same parameters and first block), bit for bit
    /// the same result; `None` computes it.
    ///
    /// Panics if `first` does not match `x`'s shape.
    pub fn forward_cached(
        &self,
        x: &StateBlocks<'_>,
        first: Option<&FirstBlockProduct>,
        g: &HostGraph,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
    ) -> Trace {
        self.check_inputs(x, first, g, u, w, flag);
        let (layers, emb, nan_mask) = self.embed(x, first, g);
        let scores = self.mlp_scores(&emb, g.num_nodes, u, w, flag);
        Trace {
            layers,
            emb,
            nan_mask,
            log_probs: log_softmax(&scores),
        }
    }

    /// `log Π(a | S)` of every candidate: [`HostPolicy::forward_cached`]'s
    /// [`Trace::log_probs`] bit for bit, for inference and for rollouts whose backward pass
    /// recomputes the trace ([`HostPolicy::backward_recomputed`]): the GAT layers' intermediate
    /// values are dropped as soon as the embeddings are computed.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]` in two blocks
    /// - u, w, flag: `[C]`
    /// - output: `[C]`
    ///
    /// Panics as [`HostPolicy::forward_cached`] does.
    pub fn log_probs_cached(
        &self,
        x: &StateBlocks<'_>,
        first: Option<&FirstBlockProduct>,
        g: &HostGraph,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
    ) -> Vec<f32> {
        self.check_inputs(x, first, g, u, w, flag);
        let (_, emb, _) = self.embed(x, first, g);
        log_softmax(&self.mlp_scores(&emb, g.num_nodes, u, w, flag))
    }

    fn check_inputs(
        &self,
        x: &StateBlocks<'_>,
        first: Option<&FirstBlockProduct>,
        g: &HostGraph,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
    ) {
        if let Some(f) = first {
            assert!(
                f.num_nodes == x.num_nodes() && f.first_width == x.first_width,
                "first-block product of another state shape"
            );
        }
        assert!(
            x.num_nodes() == g.num_nodes && x.width() == self.input_dim(),
            "state is [n, input_dim]"
        );
        assert!(
            u.len() == w.len() && w.len() == flag.len(),
            "candidate lists differ"
        );
    }

    /// The GAT stack: each layer's trace, the node embeddings `[n, hidden]` (NaNs replaced when
    /// the policy does so) and where the NaNs were.
    fn embed(
        &self,
        x: &StateBlocks<'_>,
        first: Option<&FirstBlockProduct>,
        g: &HostGraph,
    ) -> (Vec<LayerTrace>, Vec<f32>, Vec<bool>) {
        let n = g.num_nodes;
        let p = &self.params;
        let mut layers = Vec::with_capacity(self.gat.len());
        let mut cur: Vec<f32> = Vec::new();
        for (li, s) in self.gat.iter().enumerate() {
            let (o, k) = (s.out, s.input);
            let mut h = vec![0.0; n * o];
            if li == 0 {
                matmul_acc_blocks(
                    x,
                    &p[s.w..s.w + k * o],
                    o,
                    &mut h,
                    first.map(|f| &f.rows[..]),
                );
            } else {
                matmul_acc(&cur, &p[s.w..s.w + k * o], k, o, &mut h);
            }
            let att_s = &p[s.a_src..s.a_src + o];
            let att_d = &p[s.a_dst..s.a_dst + o];
            let a_src: Vec<f32> = h.chunks_exact(o).map(|r| dot(r, att_s)).collect();
            let a_dst: Vec<f32> = h.chunks_exact(o).map(|r| dot(r, att_d)).collect();
            let mut alpha = vec![0.0; g.num_messages()];
            let mut y = vec![0.0; n * o];
            let bias = &p[s.bias..s.bias + o];
            for i in 0..n {
                let range = g.incoming(i);
                let mut mx = f32::NEG_INFINITY;
                for m in range.clone() {
                    let e = lrelu(a_dst[i] + a_src[g.src[m] as usize], self.attention_slope);
                    alpha[m] = e;
                    mx = mx.max(e);
                }
                let mut z = 0.0;
                for a in &mut alpha[range.clone()] {
                    *a = (*a - mx).exp();
                    z += *a;
                }
                // Same summation order as Burn's scatter-add: messages from zero, then the bias.
                let yi = &mut y[i * o..(i + 1) * o];
                for a in &mut alpha[range.clone()] {
                    *a /= z;
                }
                if o == 16 {
                    weighted_sum_fixed::<16>(&alpha[range.clone()], &g.src[range], &h, yi);
                } else {
                    for m in range {
                        let hj = &h[g.src[m] as usize * o..(g.src[m] as usize + 1) * o];
                        for (acc, &v) in yi.iter_mut().zip(hj) {
                            *acc += v * alpha[m];
                        }
                    }
                }
                for (acc, &b) in yi.iter_mut().zip(bias) {
                    *acc += b;
                }
            }
            let (mut xhat, mut inv_std) = (Vec::new(), Vec::new());
            if let Some((gamma, beta)) = s.bn {
                (xhat, inv_std) = batch_norm(&mut y, n, o, &p[gamma..gamma + o], &p[beta..]);
            }
            let next: Vec<f32> = y.iter().map(|&v| lrelu(v, self.activation_slope)).collect();
            layers.push(LayerTrace {
                input: if li == 0 {
                    Vec::new()
                } else {
                    std::mem::take(&mut cur)
                },
                h,
                a_src,
                a_dst,
                alpha,
                y,
                xhat,
                inv_std,
            });
            cur = next;
        }
        let mut emb = cur;
        let mut nan_mask = Vec::new();
        if self.nan_to_num {
            nan_mask = emb.iter().map(|v| v.is_nan()).collect();
            for v in emb.iter_mut().filter(|v| v.is_nan()) {
                *v = 1e-14;
            }
        }
        (layers, emb, nan_mask)
    }

    /// The scoring MLP's scores `[C]`, [`CHUNK`] candidates at a time: `z1 = P[u] + Q[w] + flag·w_f +
    /// b1` (with `P = X W1[:h]`, `Q = X W1[h:2h]` computed once per node), `z2 = a1 W2 + b2`,
    /// `s = a2 · w3 + b3`, `aᵢ = LeakyReLU(zᵢ)`; the hidden layers are never stored (the
    /// backward pass recomputes them, [`HostPolicy::mlp_backward`]).
    fn mlp_scores(&self, emb: &[f32], n: usize, u: &[u32], w: &[u32], flag: &[f32]) -> Vec<f32> {
        let mlp = self.mlp_pass(emb, n);
        let (m, m2) = (mlp.m, mlp.m2);
        let c = u.len();
        let mut scores = Vec::with_capacity(c);
        let (mut z1, mut a1) = (vec![0.0; CHUNK * m], vec![0.0; CHUNK * m]);
        let mut z2 = vec![0.0; CHUNK * m2];
        for start in (0..c).step_by(CHUNK) {
            let rows = CHUNK.min(c - start);
            let (z1, a1, z2) = (
                &mut z1[..rows * m],
                &mut a1[..rows * m],
                &mut z2[..rows * m2],
            );
            mlp.layer1(start, u, w, flag, z1, a1);
            mlp.layer2(a1, z2);
            for row in z2.chunks_exact_mut(m2) {
                for z in row.iter_mut() {
                    *z = lrelu(*z, mlp.slope);
                }
                scores.push(dot(row, mlp.w3) + mlp.b3);
            }
        }
        scores
    }

    /// The scoring MLP's parameters and the per-node halves of its first layer for `emb`.
    fn mlp_pass<'p>(&'p self, emb: &[f32], n: usize) -> MlpPass<'p> {
        let p = &self.params;
        let h = self.hidden();
        let [l1, l2, l3] = self.mlp;
        let (m, m2) = (l1.out, l2.out);
        let w1 = &p[l1.w..l1.w + l1.input * m];
        let (mut pu, mut qw) = (vec![0.0; n * m], vec![0.0; n * m]);
        matmul_acc(emb, &w1[..h * m], h, m, &mut pu);
        matmul_acc(emb, &w1[h * m..2 * h * m], h, m, &mut qw);
        MlpPass {
            m,
            m2,
            slope: self.activation_slope,
            wf: &w1[2 * h * m..],
            b1: &p[l1.b..l1.b + m],
            w2: &p[l2.w..l2.w + m * m2],
            b2: &p[l2.b..l2.b + m2],
            w3: &p[l3.w..l3.w + m2],
            b3: p[l3.b],
            pu,
            qw,
        }
    }

    /// The scoring MLP's backward pass given `dscores = ∂L/∂s`: adds the gradients of its
    /// parameters to `grads` and returns `(∂L/∂P, ∂L/∂Q)` (`[n, m]` each, the per-node
    /// projections of [`HostPolicy::mlp_scores`]). [`CHUNK`] candidates at a time, recomputing
    /// their hidden layers, with the same sums in the same order as a pass over materialised
    /// `[C, m]` layers (a test pins it bit for bit), in `O(n·m)` memory instead of `O(C·m)`.
    #[allow(clippy::too_many_arguments)]
    fn mlp_backward(
        &self,
        emb: &[f32],
        n: usize,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
        dscores: &[f32],
        grads: &mut [f32],
    ) -> (Vec<f32>, Vec<f32>) {
        let h = self.hidden();
        let [l1, l2, l3] = self.mlp;
        let mlp = self.mlp_pass(emb, n);
        let (m, m2, slope, w2, w3) = (mlp.m, mlp.m2, mlp.slope, mlp.w2, mlp.w3);
        // W2ᵀ, for dz1 = dz2 W2ᵀ (as `matmul_nt_acc` builds it).
        let mut w2t = vec![0.0; m * m2];
        for (r, row) in w2.chunks_exact(m2).enumerate() {
            for (c, &v) in row.iter().enumerate() {
                w2t[c * m + r] = v;
            }
        }
        // ∂L/∂W2 = a1ᵀ dz2 as `matmul_tn_acc` sums it: over all candidates in a separate
        // accumulator for a width of 16, straight into `grads` otherwise.
        let fixed = m2 == 16;
        let mut dw2 = vec![0.0; if fixed { m * m2 } else { 0 }];
        let (mut z1, mut a1, mut dz1) = (
            vec![0.0; CHUNK * m],
            vec![0.0; CHUNK * m],
            vec![0.0; CHUNK * m],
        );
        let (mut z2, mut dz2) = (vec![0.0; CHUNK * m2], vec![0.0; CHUNK * m2]);
        let (mut dpu, mut dqw) = (vec![0.0; n * m], vec![0.0; n * m]);
        let gwf = l1.w + 2 * h * m;
        let c = u.len();
        for start in (0..c).step_by(CHUNK) {
            let rows = CHUNK.min(c - start);
            let (z1, a1, dz1) = (
                &mut z1[..rows * m],
                &mut a1[..rows * m],
                &mut dz1[..rows * m],
            );
            let (z2, dz2) = (&mut z2[..rows * m2], &mut dz2[..rows * m2]);
            mlp.layer1(start, u, w, flag, z1, a1);
            mlp.layer2(a1, z2);
            // Layer 3: s = a2 · w3 + b3.
            for (r, (zr, dr)) in z2
                .chunks_exact(m2)
                .zip(dz2.chunks_exact_mut(m2))
                .enumerate()
            {
                let ds = dscores[start + r];
                grads[l3.b] += ds;
                for j in 0..m2 {
                    grads[l3.w + j] += lrelu(zr[j], slope) * ds;
                    dr[j] = ds * w3[j] * lrelu_grad(zr[j], slope);
                }
            }
            // Layer 2: z2 = a1 W2 + b2.
            match fixed {
                true => matmul_tn_acc_rows(a1, dz2, m, m2, &mut dw2),
                false => matmul_tn_acc(a1, dz2, m, m2, &mut grads[l2.w..l2.w + m * m2]),
            }
            for row in dz2.chunks_exact(m2) {
                for (gb, &d) in grads[l2.b..l2.b + m2].iter_mut().zip(row) {
                    *gb += d;
                }
            }
            dz1.fill(0.0);
            matmul_acc(dz2, &w2t, m2, m, dz1);
            // Layer 1, split per endpoint.
            for (r, (dr, zr)) in dz1.chunks_exact_mut(m).zip(z1.chunks_exact(m)).enumerate() {
                let k = start + r;
                let (a, b) = (u[k] as usize * m, w[k] as usize * m);
                for j in 0..m {
                    dr[j] *= lrelu_grad(zr[j], slope);
                    dpu[a + j] += dr[j];
                    dqw[b + j] += dr[j];
                    grads[gwf + j] += flag[k] * dr[j];
                    grads[l1.b + j] += dr[j];
                }
            }
        }
        if fixed {
            for (g, &v) in grads[l2.w..l2.w + m * m2].iter_mut().zip(&dw2) {
                *g += v;
            }
        }
        (dpu, dqw)
    }

    /// [`HostPolicy::backward_blocks`] without a stored trace: the GAT stack's forward pass is
    /// recomputed from the state (`first` as given to [`HostPolicy::log_probs_cached`]), so a
    /// rollout needs to keep only its states, graphs and candidates (on Amazon-Photo, about
    /// 2.5 MB a step instead of 20). The same gradient bit for bit.
    ///
    /// # Shapes
    /// - x, u, w, flag: as given to [`HostPolicy::log_probs_cached`]
    /// - dscores: `[C]`
    /// - grads: `[num_params]`
    #[allow(clippy::too_many_arguments)]
    pub fn backward_recomputed(
        &self,
        x: &StateBlocks<'_>,
        first: Option<&FirstBlockProduct>,
        g: &HostGraph,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
        dscores: &[f32],
        grads: &mut [f32],
    ) {
        self.check_inputs(x, first, g, u, w, flag);
        let (layers, emb, nan_mask) = self.embed(x, first, g);
        let trace = Trace {
            layers,
            emb,
            nan_mask,
            log_probs: Vec::new(),
        };
        self.backward_blocks(&trace, x, g, u, w, flag, dscores, grads);
    }

    /// Backward pass: adds `∂L/∂θ` to `grads` given `dscores[k] = ∂L/∂s_k`, the gradient of a
    /// loss with respect to the candidates' unnormalised scores (see [`reinforce_score_grad`]).
    ///
    /// # Shapes
    /// - x, u, w, flag: as given to [`HostPolicy::forward`] (which produced `trace`)
    /// - dscores: `[C]`
    /// - grads: `[num_params]`
    #[allow(clippy::too_many_arguments)]
    pub fn backward(
        &self,
        trace: &Trace,
        x: &[f32],
        g: &HostGraph,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
        dscores: &[f32],
        grads: &mut [f32],
    ) {
        let x = StateBlocks::whole(x, self.input_dim());
        self.backward_blocks(trace, &x, g, u, w, flag, dscores, grads);
    }

    /// [`HostPolicy::backward`] for a forward pass made with [`HostPolicy::forward_blocks`]
    /// (the same gradients, bit for bit).
    ///
    /// # Shapes
    /// - as [`HostPolicy::backward`]
    #[allow(clippy::too_many_arguments)]
    pub fn backward_blocks(
        &self,
        trace: &Trace,
        x: &StateBlocks<'_>,
        g: &HostGraph,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
        dscores: &[f32],
        grads: &mut [f32],
    ) {
        assert_eq!(grads.len(), self.params.len(), "one gradient per parameter");
        assert_eq!(dscores.len(), u.len(), "one score gradient per candidate");
        let n = g.num_nodes;
        let p = &self.params;
        let slope = self.activation_slope;
        let h = self.hidden();
        let l1 = self.mlp[0];
        let m = l1.out;
        let (dpu, dqw) = self.mlp_backward(&trace.emb, n, u, w, flag, dscores, grads);
        let emb = &trace.emb;
        matmul_tn_acc(emb, &dpu, h, m, &mut grads[l1.w..l1.w + h * m]);
        matmul_tn_acc(emb, &dqw, h, m, &mut grads[l1.w + h * m..l1.w + 2 * h * m]);
        let mut dcur = vec![0.0; n * h];
        matmul_nt_acc(&dpu, &p[l1.w..l1.w + h * m], h, m, &mut dcur);
        matmul_nt_acc(&dqw, &p[l1.w + h * m..l1.w + 2 * h * m], h, m, &mut dcur);
        for (d, &nan) in dcur.iter_mut().zip(&trace.nan_mask) {
            if nan {
                *d = 0.0;
            }
        }
        // GAT layers, last to first.
        for (li, s) in self.gat.iter().enumerate().rev() {
            let lt = &trace.layers[li];
            let (o, k) = (s.out, s.input);
            let mut dy: Vec<f32> = dcur
                .iter()
                .zip(&lt.y)
                .map(|(&d, &y)| d * lrelu_grad(y, slope))
                .collect();
            if let Some((gamma, beta)) = s.bn {
                batch_norm_backward(&mut dy, n, o, lt, &p[gamma..gamma + o], grads, gamma, beta);
            }
            for row in dy.chunks_exact(o) {
                for (gb, &d) in grads[s.bias..s.bias + o].iter_mut().zip(row) {
                    *gb += d;
                }
            }
            let mut dh = vec![0.0; n * o];
            let mut dalpha: Vec<f32> = Vec::new();
            let (mut da_src, mut da_dst) = (vec![0.0; n], vec![0.0; n]);
            for i in 0..n {
                let range = g.incoming(i);
                let dyi = &dy[i * o..(i + 1) * o];
                let mut dalpha_dot = 0.0;
                dalpha.clear();
                for mi in range.clone() {
                    let j = g.src[mi] as usize;
                    let hj = &lt.h[j * o..(j + 1) * o];
                    let da = dot(dyi, hj);
                    dalpha.push(da);
                    dalpha_dot += lt.alpha[mi] * da;
                    let a = lt.alpha[mi];
                    for (t, &d) in dh[j * o..(j + 1) * o].iter_mut().zip(dyi) {
                        *t += a * d;
                    }
                }
                for (mi, &da) in range.zip(&dalpha) {
                    let j = g.src[mi] as usize;
                    let de = lt.alpha[mi] * (da - dalpha_dot);
                    let dpre = de * lrelu_grad(lt.a_dst[i] + lt.a_src[j], self.attention_slope);
                    da_dst[i] += dpre;
                    da_src[j] += dpre;
                }
            }
            let att_s = &p[s.a_src..s.a_src + o];
            let att_d = &p[s.a_dst..s.a_dst + o];
            for i in 0..n {
                let hi = &lt.h[i * o..(i + 1) * o];
                for f in 0..o {
                    grads[s.a_src + f] += da_src[i] * hi[f];
                    grads[s.a_dst + f] += da_dst[i] * hi[f];
                    dh[i * o + f] += da_src[i] * att_s[f] + da_dst[i] * att_d[f];
                }
            }
            if li == 0 {
                matmul_tn_acc_blocks(x, &dh, o, &mut grads[s.w..s.w + k * o]);
            } else {
                matmul_tn_acc(&lt.input, &dh, k, o, &mut grads[s.w..s.w + k * o]);
            }
            if li > 0 {
                dcur = vec![0.0; n * k];
                matmul_nt_acc(&dh, &p[s.w..s.w + k * o], k, o, &mut dcur);
            }
        }
    }
}

/// In-place BatchNorm over nodes (batch statistics, biased variance); returns `x̂` and the
/// per-feature `1 / sqrt(var + eps)`.
fn batch_norm(
    y: &mut [f32],
    n: usize,
    o: usize,
    gamma: &[f32],
    beta: &[f32],
) -> (Vec<f32>, Vec<f32>) {
    let mut mean = vec![0.0f32; o];
    for row in y.chunks_exact(o) {
        for (m, &v) in mean.iter_mut().zip(row) {
            *m += v;
        }
    }
    mean.iter_mut().for_each(|m| *m /= n as f32);
    let mut var = vec![0.0f32; o];
    for row in y.chunks_exact(o) {
        for f in 0..o {
            let c = row[f] - mean[f];
            var[f] += c * c;
        }
    }
    let inv_std: Vec<f32> = var
        .iter()
        .map(|v| 1.0 / (v / n as f32 + BN_EPS).sqrt())
        .collect();
    let mut xhat = vec![0.0; n * o];
    for (row, xr) in y.chunks_exact_mut(o).zip(xhat.chunks_exact_mut(o)) {
        for f in 0..o {
            xr[f] = (row[f] - mean[f]) * inv_std[f];
            row[f] = xr[f] * gamma[f] + beta[f];
        }
    }
    (xhat, inv_std)
}

/// Backward of [`batch_norm`]: turns `dy` (w.r.t. the output) into the gradient w.r.t. its input
/// and accumulates the gradients of `γ` and `β`.
#[allow(clippy::too_many_arguments)]
fn batch_norm_backward(
    dy: &mut [f32],
    n: usize,
    o: usize,
    lt: &LayerTrace,
    gamma: &[f32],
    grads: &mut [f32],
    g_at: usize,
    b_at: usize,
) {
    let (mut sum_d, mut sum_dx) = (vec![0.0f32; o], vec![0.0f32; o]);
    for (row, xr) in dy.chunks_exact(o).zip(lt.xhat.chunks_exact(o)) {
        for f in 0..o {
            grads[g_at + f] += row[f] * xr[f];
            grads[b_at + f] += row[f];
            let dxhat = row[f] * gamma[f];
            sum_d[f] += dxhat;
            sum_dx[f] += dxhat * xr[f];
        }
    }
    let nf = n as f32;
    for (row, xr) in dy.chunks_exact_mut(o).zip(lt.xhat.chunks_exact(o)) {
        for f in 0..o {
            let dxhat = row[f] * gamma[f];
            row[f] = lt.inv_std[f] / nf * (nf * dxhat - sum_d[f] - xr[f] * sum_dx[f]);
        }
    }
}

/// Log-softmax of a score vector (max-shifted).
fn log_softmax(s: &[f32]) -> Vec<f32> {
    let mx = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let lse = mx + s.iter().map(|v| (v - mx).exp()).sum::<f32>().ln();
    s.iter().map(|v| v - lse).collect()
}

/// `∂L/∂s` for one state of the REINFORCE loss `L = −scale · (log Π(a) · Ĝ + η · H(Π))`, where
/// `Π = softmax(s)` and `H` is its entropy:
/// `∂L/∂s_k = −scale · (Ĝ (δ_ak − p_k) − η p_k (log p_k + H))`.
///
/// # Shapes
/// - log_probs: `[C]`
/// - output: `[C]`
pub fn reinforce_score_grad(
    log_probs: &[f32],
    action: usize,
    advantage: f32,
    entropy_coef: f32,
    scale: f32,
) -> Vec<f32> {
    let entropy: f32 = -log_probs.iter().map(|&l| l.exp() * l).sum::<f32>();
    log_probs
        .iter()
        .enumerate()
        .map(|(k, &l)| {
            let p = l.exp();
            let onehot = if k == action { 1.0 } else { 0.0 };
            -scale * (advantage * (onehot - p) - entropy_coef * p * (l + entropy))
        })
        .collect()
}

/// Adam on a flat parameter vector, step for step identical to `burn::optim::AdamConfig::new()`
/// (β₁ 0.9, β₂ 0.999, ε 1e-5, no weight decay): `θ −= lr · m̂ / (√v̂ + ε)` with Burn's placement
/// of the bias corrections. Serialisable, so that training can be checkpointed and resumed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostAdam {
    m: Vec<f32>,
    v: Vec<f32>,
    t: i32,
    beta_1: f32,
    beta_2: f32,
    epsilon: f32,
}

impl HostAdam {
    /// Zero moments for `num_params` parameters.
    pub fn new(num_params: usize) -> Self {
        Self {
            m: vec![0.0; num_params],
            v: vec![0.0; num_params],
            t: 0,
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-5,
        }
    }

    /// One update of `params` with `grads` at learning rate `lr`.
    pub fn step(&mut self, params: &mut [f32], grads: &[f32], lr: f64) {
        assert!(params.len() == self.m.len() && grads.len() == self.m.len());
        self.t += 1;
        let bc2 = (1.0 - self.beta_2.powi(self.t)).sqrt();
        let factor = bc2 / (1.0 - self.beta_1.powi(self.t));
        let eps = self.epsilon * bc2;
        let lr = lr as f32;
        for i in 0..params.len() {
            let g = grads[i];
            self.m[i] = self.m[i] * self.beta_1 + g * (1.0 - self.beta_1);
            self.v[i] = self.v[i] * self.beta_2 + g * g * (1.0 - self.beta_2);
            params[i] -= lr * (self.m[i] * factor / (self.v[i].sqrt() + eps));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyConfig;
    use crate::device::default_device;
    use crate::policy::CandidateTensors;
    use crate::tensors::{GraphTensors, matrix, to_vec};
    use burn::module::Module;
    use burn::module::ModuleVisitor;
    use burn::optim::{AdamConfig, GradientsParams};

    /// Flattens parameters (or their gradients) in module visiting order.
    struct Flat<'a> {
        out: Vec<f32>,
        grads: Option<&'a GradientsParams>,
    }
    impl ModuleVisitor for Flat<'_> {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            let t = match self.grads {
                None => p.val(),
                Some(g) => g.get::<D>(p.id).expect("every parameter has a gradient"),
            };
            self.out.extend(
                t.into_data()
                    .convert::<f32>()
                    .try_into_vec::<f32>()
                    .unwrap(),
            );
        }
    }
    fn flat(p: &Policy, grads: Option<&GradientsParams>) -> Vec<f32> {
        let mut v = Flat {
            out: Vec::new(),
            grads,
        };
        p.visit(&mut v);
        v.out
    }

    /// The scoring MLP over materialised `[C, m]` layers (the implementation the fused passes
    /// replaced): pre-activations of the two hidden layers and the scores.
    fn mlp_forward_reference(
        host: &HostPolicy,
        emb: &[f32],
        n: usize,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
    ) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let p = &host.params;
        let h = host.hidden();
        let [l1, l2, l3] = host.mlp;
        let m = l1.out;
        let w1 = &p[l1.w..l1.w + l1.input * m];
        let (mut pu, mut qw) = (vec![0.0; n * m], vec![0.0; n * m]);
        matmul_acc(emb, &w1[..h * m], h, m, &mut pu);
        matmul_acc(emb, &w1[h * m..2 * h * m], h, m, &mut qw);
        let wf = &w1[2 * h * m..];
        let b1 = &p[l1.b..l1.b + m];
        let c = u.len();
        let mut z1 = vec![0.0; c * m];
        for (k, row) in z1.chunks_exact_mut(m).enumerate() {
            let (a, b) = (u[k] as usize * m, w[k] as usize * m);
            for j in 0..m {
                row[j] = pu[a + j] + qw[b + j] + flag[k] * wf[j] + b1[j];
            }
        }
        let slope = host.activation_slope;
        let a1: Vec<f32> = z1.iter().map(|&v| lrelu(v, slope)).collect();
        let m2 = l2.out;
        let mut z2 = vec![0.0; c * m2];
        matmul_acc(&a1, &p[l2.w..l2.w + m * m2], m, m2, &mut z2);
        let b2 = &p[l2.b..l2.b + m2];
        for row in z2.chunks_exact_mut(m2) {
            for (z, &b) in row.iter_mut().zip(b2) {
                *z += b;
            }
        }
        let a2: Vec<f32> = z2.iter().map(|&v| lrelu(v, slope)).collect();
        let w3 = &p[l3.w..l3.w + m2];
        let b3 = p[l3.b];
        let scores = a2.chunks_exact(m2).map(|r| dot(r, w3) + b3).collect();
        (z1, z2, scores)
    }

    /// The scoring MLP's backward pass over materialised layers (the replaced implementation).
    #[allow(clippy::too_many_arguments)]
    fn mlp_backward_reference(
        host: &HostPolicy,
        emb: &[f32],
        n: usize,
        u: &[u32],
        w: &[u32],
        flag: &[f32],
        dscores: &[f32],
        grads: &mut [f32],
    ) -> (Vec<f32>, Vec<f32>) {
        let (z1, z2, _) = mlp_forward_reference(host, emb, n, u, w, flag);
        let p = &host.params;
        let slope = host.activation_slope;
        let h = host.hidden();
        let [l1, l2, l3] = host.mlp;
        let (m, m2) = (l1.out, l2.out);
        let c = u.len();
        // Layer 3: s = a2 · w3 + b3.
        let w3 = &p[l3.w..l3.w + m2];
        let mut dz2 = vec![0.0; c * m2];
        for (k, (row, zr)) in dz2
            .chunks_exact_mut(m2)
            .zip(z2.chunks_exact(m2))
            .enumerate()
        {
            let ds = dscores[k];
            grads[l3.b] += ds;
            for j in 0..m2 {
                grads[l3.w + j] += lrelu(zr[j], slope) * ds;
                row[j] = ds * w3[j] * lrelu_grad(zr[j], slope);
            }
        }
        // Layer 2: z2 = a1 · W2 + b2.
        let a1: Vec<f32> = z1.iter().map(|&v| lrelu(v, slope)).collect();
        matmul_tn_acc(&a1, &dz2, m, m2, &mut grads[l2.w..l2.w + m * m2]);
        for row in dz2.chunks_exact(m2) {
            for (gb, &d) in grads[l2.b..l2.b + m2].iter_mut().zip(row) {
                *gb += d;
            }
        }
        let mut dz1 = vec![0.0; c * m];
        matmul_nt_acc(&dz2, &p[l2.w..l2.w + m * m2], m, m2, &mut dz1);
        for (d, &z) in dz1.iter_mut().zip(&z1) {
            *d *= lrelu_grad(z, slope);
        }
        // Layer 1, split per endpoint.
        let (mut dpu, mut dqw) = (vec![0.0; n * m], vec![0.0; n * m]);
        let wf = l1.w + 2 * h * m;
        for (k, row) in dz1.chunks_exact(m).enumerate() {
            let (a, b) = (u[k] as usize * m, w[k] as usize * m);
            for j in 0..m {
                dpu[a + j] += row[j];
                dqw[b + j] += row[j];
                grads[wf + j] += flag[k] * row[j];
                grads[l1.b + j] += row[j];
            }
        }
        (dpu, dqw)
    }

    /// The fused scoring passes compute what the materialised ones did, bit for bit: scores,
    /// parameter gradients and the gradients flowing back into the embeddings.
    #[test]
    fn fused_mlp_equals_materialised_layers_bit_for_bit() {
        let dev = default_device().unwrap();
        for (hidden, mlp) in [(16, 16), (5, 16), (16, 8), (6, 7)] {
            let policy = PolicyConfig::new(4)
                .with_hidden(hidden)
                .with_mlp_hidden(mlp)
                .with_init_seed(hidden as u64 + mlp as u64)
                .init(&dev);
            let host = HostPolicy::from_policy(&policy);
            let n = 9;
            let emb: Vec<f32> = (0..n * hidden)
                .map(|i| {
                    if i % 7 == 0 {
                        0.0
                    } else {
                        (i as f32 * 0.713).sin() * 2.0
                    }
                })
                .collect();
            let c = 40;
            let u: Vec<u32> = (0..c).map(|k| (k * 5 % n) as u32).collect();
            let w: Vec<u32> = (0..c).map(|k| ((k * 3 + 1) % n) as u32).collect();
            let flag: Vec<f32> = (0..c).map(|k| (k % 2) as f32).collect();
            let ds: Vec<f32> = (0..c).map(|k| (k as f32 * 0.37).cos()).collect();
            let (_, _, want) = mlp_forward_reference(&host, &emb, n, &u, &w, &flag);
            assert_eq!(host.mlp_scores(&emb, n, &u, &w, &flag), want);
            let mut g_ref = vec![0.125; host.num_params()];
            let mut g_new = g_ref.clone();
            let r = mlp_backward_reference(&host, &emb, n, &u, &w, &flag, &ds, &mut g_ref);
            let f = host.mlp_backward(&emb, n, &u, &w, &flag, &ds, &mut g_new);
            assert_eq!(f, r, "hidden {hidden}, mlp {mlp}");
            assert_eq!(g_new, g_ref, "hidden {hidden}, mlp {mlp}");
        }
    }

    //  0 ─ 1 ─ 2 ─ 3    4 isolated
    //   ╲     ╱
    //     ─5─
    const EDGES: [(u32, u32); 5] = [(0, 1), (1, 2), (2, 3), (0, 5), (5, 2)];
    const U: [u32; 6] = [0, 0, 0, 1, 2, 4];
    const W: [u32; 6] = [2, 3, 4, 2, 3, 5];
    const F: [f32; 6] = [1.0, 1.0, 1.0, 0.0, 0.0, 1.0];

    fn state(dim: usize) -> Vec<f32> {
        (0..6 * dim)
            .map(|i| ((i * 7 % 11) as f32) * 0.25 - 1.0)
            .collect()
    }

    /// A state split into a fixed block and a changing block gives the whole state's
    /// log-probabilities and gradients bit for bit (hidden 16 and another width), and the
    /// row-wise first-layer gradient equals the column-wise one bit for bit.
    #[test]
    fn state_blocks_change_nothing() {
        let dev = default_device().unwrap();
        for hidden in [16, 5] {
            let dim = 7;
            let policy = PolicyConfig::new(dim)
                .with_hidden(hidden)
                .with_mlp_hidden(hidden + 1)
                .with_init_seed(11)
                .init(&dev);
            let host = HostPolicy::from_policy(&policy);
            // Sparse like bag-of-words features: a third of the entries are zero.
            let x: Vec<f32> = state(dim)
                .iter()
                .enumerate()
                .map(|(i, &v)| if i % 3 == 0 { 0.0 } else { v })
                .collect();
            let g = HostGraph::new(6, &EDGES).unwrap();
            let whole = host.forward(&x, &g, &U, &W, &F);
            for split in [0, 2, 5, dim] {
                let (a, b): (Vec<f32>, Vec<f32>) = {
                    let mut a = Vec::new();
                    let mut b = Vec::new();
                    for r in x.chunks_exact(dim) {
                        a.extend_from_slice(&r[..split]);
                        b.extend_from_slice(&r[split..]);
                    }
                    (a, b)
                };
                let (sa, sb) = (SparseRows::new(&a, split), SparseRows::new(&b, dim - split));
                let plain = StateBlocks::new(&a, split, &b, dim - split);
                assert_eq!(plain.to_rows(), x);
                let sparse = [plain.with_sparse(0, &sa), plain.with_sparse(1, &sb)];
                for xb in [plain, sparse[0], sparse[1]] {
                    let t = host.forward_blocks(&xb, &g, &U, &W, &F);
                    let at = format!("hidden {hidden}, split {split}");
                    assert_eq!(t.log_probs(), whole.log_probs(), "{at}");
                    let first = host.first_block_product(&xb);
                    let tc = host.forward_cached(&xb, Some(&first), &g, &U, &W, &F);
                    assert_eq!(tc.log_probs(), whole.log_probs(), "cached: {at}");
                    assert_eq!(tc.embeddings(), whole.embeddings(), "cached: {at}");
                    for f in [Some(&first), None] {
                        let lp = host.log_probs_cached(&xb, f, &g, &U, &W, &F);
                        assert_eq!(lp, whole.log_probs(), "inference: {at}");
                    }
                    let ds = reinforce_score_grad(t.log_probs(), 2, 0.3, 0.1, 1.0);
                    let mut g1 = vec![0.5; host.num_params()];
                    let mut g2 = g1.clone();
                    host.backward(&whole, &x, &g, &U, &W, &F, &ds, &mut g1);
                    host.backward_blocks(&t, &xb, &g, &U, &W, &F, &ds, &mut g2);
                    assert_eq!(g1, g2, "{at}");
                    let mut g3 = vec![0.5; host.num_params()];
                    host.backward_recomputed(&xb, Some(&first), &g, &U, &W, &F, &ds, &mut g3);
                    assert_eq!(g1, g3, "recomputed: {at}");
                }
            }
            // The first layer's weight gradient, row-wise vs column-wise.
            let d: Vec<f32> = (0..6 * hidden).map(|i| (i as f32 * 0.37).sin()).collect();
            let (mut col, mut row) = (vec![0.25; dim * hidden], vec![0.25; dim * hidden]);
            matmul_tn_acc(&x, &d, dim, hidden, &mut col);
            matmul_tn_acc_blocks(&StateBlocks::whole(&x, dim), &d, hidden, &mut row);
            assert_eq!(col, row, "hidden {hidden}");
        }
    }

    /// The kernel's log-probabilities and gradients equal Burn's forward and autodiff, with and
    /// without BatchNorm, and the parameter round trip is exact.
    #[test]
    fn kernel_matches_burn_forward_and_autodiff() {
        for batch_norm in [false, true] {
            let dev = default_device().unwrap().autodiff();
            let dim = 5;
            let cfg = PolicyConfig::new(dim)
                .with_batch_norm(batch_norm)
                .with_init_seed(3);
            let policy = cfg.init(&dev);
            let host = HostPolicy::from_policy(&policy);
            assert_eq!(flat(&host.to_policy(&dev), None), flat(&policy, None));
            assert_eq!(host.params.len(), flat(&policy, None).len());

            let x = state(dim);
            let g = HostGraph::new(6, &EDGES).unwrap();
            let trace = host.forward(&x, &g, &U, &W, &F);
            let gt = GraphTensors::new(6, &EDGES, &dev).unwrap();
            let c = CandidateTensors::new(&U, &W, &F, &dev);
            let logp = policy.log_probs(matrix(&x, 6, dim, &dev), &gt, &c);
            let want = to_vec(logp.clone().unsqueeze_dim(0));
            for (a, b) in trace.log_probs().iter().zip(&want) {
                assert!((a - b).abs() < 1e-5, "{:?} vs {want:?}", trace.log_probs());
            }

            // Loss of one REINFORCE state: action 4, advantage −0.7, entropy 0.1, scale 0.5.
            let (action, adv, eta, scale) = (4usize, -0.7f32, 0.1f32, 0.5f32);
            let entropy = -(logp.clone().exp() * logp.clone()).sum();
            let chosen = logp
                .select(0, crate::tensors::indices(&[action as u32], &dev))
                .sum();
            let loss = -(chosen * adv + entropy * eta) * scale;
            let grads = GradientsParams::from_grads(loss.backward(), &policy);
            let want = flat(&policy, Some(&grads));
            let ds = reinforce_score_grad(trace.log_probs(), action, adv, eta, scale);
            let mut got = vec![0.0; host.num_params()];
            host.backward(&trace, &x, &g, &U, &W, &F, &ds, &mut got);
            let max = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            assert!(max > 1e-3, "gradients are not trivially zero");
            for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (a - b).abs() < 1e-5 + 1e-4 * b.abs(),
                    "batch_norm {batch_norm}: parameter {i}: kernel {a} vs burn {b}"
                );
            }

            // Two Adam steps agree with Burn's optimiser.
            let mut adam = HostAdam::new(host.num_params());
            let mut burn_adam = AdamConfig::new().init();
            let mut params = host.params.clone();
            let mut bp = policy;
            for _ in 0..2 {
                adam.step(&mut params, &got, 0.01);
                let gp = {
                    let mut gp = GradientsParams::new();
                    let tmp = HostPolicy {
                        params: got.clone(),
                        ..host.clone()
                    }
                    .to_policy(&dev);
                    register_like(&bp, &tmp, &mut gp);
                    gp
                };
                bp = burn_adam.step(0.01, bp, gp);
            }
            for (a, b) in params.iter().zip(flat(&bp, None)) {
                assert!((a - b).abs() < 1e-6, "adam: {a} vs {b}");
            }
        }
    }

    /// Registers the values of `src`'s parameters as gradients of `dst`'s (same structure).
    fn register_like(dst: &Policy, src: &Policy, gp: &mut GradientsParams) {
        struct Ids(Vec<burn::module::ParamId>);
        impl ModuleVisitor for Ids {
            fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
                self.0.push(p.id);
            }
        }
        struct Reg<'a> {
            ids: std::vec::IntoIter<burn::module::ParamId>,
            gp: &'a mut GradientsParams,
        }
        impl ModuleVisitor for Reg<'_> {
            fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
                let id = self.ids.next().unwrap();
                self.gp.register::<D>(id, p.val().inner());
            }
        }
        let mut ids = Ids(Vec::new());
        dst.visit(&mut ids);
        src.visit(&mut Reg {
            ids: ids.0.into_iter(),
            gp,
        });
    }

    #[test]
    fn nan_embeddings_are_replaced_and_get_no_gradient() {
        let dev = default_device().unwrap();
        let policy = PolicyConfig::reference(4).with_init_seed(1).init(&dev);
        let host = HostPolicy::from_policy(&policy);
        let mut x = state(4);
        x[0] = f32::NAN; // node 0 is NaN; the NaN spreads to its neighbourhood
        let g = HostGraph::new(6, &EDGES).unwrap();
        let trace = host.forward(&x, &g, &U, &W, &F);
        let gt = GraphTensors::new(6, &EDGES, &dev).unwrap();
        let c = CandidateTensors::new(&U, &W, &F, &dev);
        let want = to_vec(
            policy
                .log_probs(matrix(&x, 6, 4, &dev), &gt, &c)
                .unsqueeze_dim(0),
        );
        for (a, b) in trace.log_probs().iter().zip(&want) {
            assert!(a.is_nan() == b.is_nan() && (a.is_nan() || (a - b).abs() < 1e-5));
        }
        assert!(trace.embeddings().iter().all(|v| !v.is_nan()));
        let lp = host.log_probs_cached(&StateBlocks::whole(&x, 4), None, &g, &U, &W, &F);
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&lp),
            bits(trace.log_probs()),
            "inference path, NaNs included"
        );
    }

    #[test]
    fn graph_lists_and_errors() {
        let g = HostGraph::new(3, &[(0, 1)]).unwrap();
        assert_eq!(g.src, vec![1, 0, 0, 1, 2]);
        assert_eq!(g.offsets, vec![0, 2, 4, 5]);
        assert_eq!(g.num_messages(), 5);
        assert!(HostGraph::new(2, &[(0, 2)]).is_err());
        assert!(HostGraph::new(2, &[(1, 1)]).is_err());
    }

    #[test]
    fn score_gradient_by_hand() {
        // Two actions, p = (0.25, 0.75), chosen 0, advantage 2, no entropy, scale 1:
        // ∂L/∂s = −2 (1 − 0.25, −0.75) = (−1.5, 1.5).
        let lp = [0.25f32.ln(), 0.75f32.ln()];
        let d = reinforce_score_grad(&lp, 0, 2.0, 0.0, 1.0);
        assert!((d[0] + 1.5).abs() < 1e-6 && (d[1] - 1.5).abs() < 1e-6);
    }
}
