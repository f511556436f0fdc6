//! The layers of a PyG model resolved from its tensors, and their CPU forward passes.
//!
//! Every pass follows PyG's definition in eval mode (no dropout) on an undirected graph given as
//! adjacency lists; message sums run over neighbours in ascending id order, so results match
//! PyG's to float rounding (not bit for bit: PyG sums in edge order).

use super::arch::{Activation, Aggregation};
pub use super::hop::{Block, Hop};
pub use crate::linalg::Adjacency;
use crate::linalg::{axpy, matmul_acc, transpose};

/// A `torch.nn.Linear`: `y = x Wᵀ + b`, with `W` stored transposed (`[in, out]`) here.
#[derive(Debug, Clone, PartialEq)]
pub struct Dense {
    /// Input width.
    pub din: usize,
    /// Output width.
    pub dout: usize,
    /// `Wᵀ`, row-major `[in, out]`.
    pub wt: Vec<f32>,
    /// Bias `[out]`, if any.
    pub bias: Option<Vec<f32>>,
}

impl Dense {
    /// From a PyTorch weight `[out, in]` (row-major) and an optional bias.
    pub fn from_torch(weight: &[f32], dout: usize, din: usize, bias: Option<Vec<f32>>) -> Self {
        Self {
            din,
            dout,
            wt: transpose(weight, dout, din),
            bias,
        }
    }

    /// `x Wᵀ` (without the bias) for `n` rows.
    ///
    /// # Shapes
    /// - x: `[n, in]`; output: `[n, out]`
    pub fn apply_no_bias(&self, x: &[f32], n: usize) -> Vec<f32> {
        let mut out = vec![0.0; n * self.dout];
        matmul_acc(x, &self.wt, self.din, self.dout, &mut out);
        out
    }

    /// `x Wᵀ + b` for `n` rows.
    ///
    /// # Shapes
    /// - x: `[n, in]`; output: `[n, out]`
    pub fn apply(&self, x: &[f32], n: usize) -> Vec<f32> {
        let mut out = self.apply_no_bias(x, n);
        if let Some(b) = &self.bias {
            for row in out.chunks_exact_mut(self.dout.max(1)) {
                for (o, &v) in row.iter_mut().zip(b) {
                    *o += v;
                }
            }
        }
        out
    }
}

/// A module of GIN's MLP, resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum MlpStep {
    /// A linear layer.
    Linear(Dense),
    /// An eval-mode `BatchNorm1d` folded into `x · scale + shift`.
    Affine {
        /// `weight / sqrt(running_var + eps)`.
        scale: Vec<f32>,
        /// `bias − running_mean · scale`.
        shift: Vec<f32>,
    },
    /// An activation.
    Act(Activation),
}

/// One message-passing layer, resolved from the tensors.
#[derive(Debug, Clone, PartialEq)]
pub enum Conv {
    /// `GCNConv`.
    Gcn {
        /// `lin` (no bias).
        lin: Dense,
        /// The layer's bias.
        bias: Option<Vec<f32>>,
        /// Whether to normalise symmetrically.
        normalize: bool,
        /// The self-loop weight when normalising with self loops (1: see `LayerArch::Gcn`'s
        /// `improved`).
        self_loop: Option<f32>,
    },
    /// `SAGEConv`.
    Sage {
        /// `lin` of the `project` option: neighbours' features go through `relu(lin(x))` first.
        project: Option<Dense>,
        /// `lin_l` on the aggregated neighbours (with bias).
        lin_l: Dense,
        /// `lin_r` on the node itself (root weight), if any.
        lin_r: Option<Dense>,
        /// The aggregation.
        aggr: Aggregation,
        /// L2-normalise the output rows.
        normalize: bool,
    },
    /// `GINConv`.
    Gin {
        /// `ε`.
        eps: f32,
        /// The MLP.
        mlp: Vec<MlpStep>,
    },
    /// `GATConv`.
    Gat {
        /// `lin` (or `lin_src`): `[in] → [heads · out]`, no bias.
        lin_src: Dense,
        /// `lin_dst` when it differs from `lin_src`.
        lin_dst: Option<Dense>,
        /// `att_src`, `[heads · out]`.
        att_src: Vec<f32>,
        /// `att_dst`, `[heads · out]`.
        att_dst: Vec<f32>,
        /// Number of heads.
        heads: usize,
        /// Output width per head.
        out: usize,
        /// Concatenate the heads (else average them).
        concat: bool,
        /// The attention LeakyReLU's slope.
        negative_slope: f32,
        /// Attend to the node itself too.
        self_loops: bool,
        /// The layer's bias.
        bias: Option<Vec<f32>>,
    },
    /// `GATv2Conv`: attention `a · LeakyReLU(W_l x_j + W_r x_i)`.
    Gatv2 {
        /// `lin_l` (with its bias): `[in] → [heads · out]`, the messages.
        lin_l: Dense,
        /// `lin_r` (with its bias) on the receiving node; `None` with `share_weights`.
        lin_r: Option<Dense>,
        /// `att`, `[heads · out]`.
        att: Vec<f32>,
        /// Number of heads.
        heads: usize,
        /// Output width per head.
        out: usize,
        /// Concatenate the heads (else average them).
        concat: bool,
        /// The attention LeakyReLU's slope.
        negative_slope: f32,
        /// Attend to the node itself too.
        self_loops: bool,
        /// The layer's bias.
        bias: Option<Vec<f32>>,
    },
    /// One hop of a linear propagation (`SGConv`, `APPNP`, `TAGConv`, `ChebConv`; `hop.rs`).
    Hop(Hop),
    /// A `torch.nn.Linear` between layers: no hop.
    Linear(Dense),
}

/// `D^{-1/2}` at node `j` for a GCN-style normalisation: `1/√(deg + loop)`, 0 for a node of
/// degree 0 without loop; 1 without normalisation.
pub(crate) fn gcn_dinv(
    inputs: &impl RowInputs,
    j: usize,
    normalize: bool,
    loop_w: Option<f32>,
) -> f32 {
    if !normalize {
        return 1.0;
    }
    let d = inputs.neighbours(j).len() as f32 + loop_w.unwrap_or(0.0);
    if d > 0.0 { 1.0 / d.sqrt() } else { 0.0 }
}

impl Conv {
    /// The hops of the graph the layer reads: 0 for a [`Conv::Linear`], 1 otherwise.
    pub fn hops(&self) -> u32 {
        match self {
            Conv::Linear(_) => 0,
            _ => 1,
        }
    }

    /// Whether a row reads its neighbours' degrees (a normalised GCN-style propagation), so
    /// that an edit at a neighbour changes it.
    pub(crate) fn reads_degrees(&self) -> bool {
        match self {
            Conv::Gcn { normalize, .. } => *normalize,
            Conv::Hop(h) => h.normalize,
            _ => false,
        }
    }

    /// The family's name, as [`LayerArch::family`](super::LayerArch::family) spells it (a
    /// hop: its module's).
    pub fn family(&self) -> &'static str {
        match self {
            Conv::Gcn { .. } => "gcn",
            Conv::Sage { .. } => "sage",
            Conv::Gin { .. } => "gin",
            Conv::Gat { .. } => "gat",
            Conv::Gatv2 { .. } => "gatv2",
            Conv::Hop(h) => h.family,
            Conv::Linear(_) => "linear",
        }
    }

    /// Input width.
    pub fn input_dim(&self) -> usize {
        match self {
            Conv::Gcn { lin, .. } => lin.din,
            Conv::Sage {
                project,
                lin_r,
                lin_l,
                ..
            } => project
                .as_ref()
                .map(|p| p.din)
                .or(lin_r.as_ref().map(|r| r.din))
                .unwrap_or(lin_l.din),
            Conv::Gin { mlp, .. } => mlp
                .iter()
                .find_map(|s| match s {
                    MlpStep::Linear(d) => Some(d.din),
                    MlpStep::Affine { scale, .. } => Some(scale.len()),
                    MlpStep::Act(_) => None,
                })
                .unwrap_or(0),
            Conv::Gat { lin_src, .. } => lin_src.din,
            Conv::Gatv2 { lin_l, .. } => lin_l.din,
            Conv::Hop(h) => h.input_dim(),
            Conv::Linear(d) => d.din,
        }
    }

    /// Output width.
    pub fn output_dim(&self) -> usize {
        match self {
            Conv::Gcn { lin, .. } => lin.dout,
            Conv::Sage { lin_l, .. } => lin_l.dout,
            Conv::Gin { mlp, .. } => mlp
                .iter()
                .rev()
                .find_map(|s| match s {
                    MlpStep::Linear(d) => Some(d.dout),
                    MlpStep::Affine { scale, .. } => Some(scale.len()),
                    MlpStep::Act(_) => None,
                })
                .unwrap_or(0),
            Conv::Gat {
                heads, out, concat, ..
            }
            | Conv::Gatv2 {
                heads, out, concat, ..
            } => {
                if *concat {
                    heads * out
                } else {
                    *out
                }
            }
            Conv::Hop(h) => h.output_dim(),
            Conv::Linear(d) => d.dout,
        }
    }

    /// What the layer needs of each node's own features, computed node by node (so once per
    /// feature matrix, before any edge is seen): the linear map every family applies to a
    /// node's features before or (by linearity) after aggregating them.
    ///
    /// | layer | `a` | `b` |
    /// |---|---|---|
    /// | `GCNConv` | `x Wᵀ` | – |
    /// | `SAGEConv` | `x W_lᵀ` (with `project`: `relu(lin x) W_lᵀ`) | `x W_rᵀ` (root weight) |
    /// | `GINConv` | `x W₀ᵀ` when the MLP starts with a `Linear` (its bias added after the sum), else `x` | – |
    /// | `GATConv` | `x W_srcᵀ` | `x W_dstᵀ` when it differs |
    /// | `GATv2Conv` | `x W_lᵀ + b_l` | `x W_rᵀ + b_r` unless shared |
    /// | a hop | its state ([`Hop::project`]) | – |
    /// | `Linear` | `x Wᵀ` | – |
    ///
    /// Aggregating `a` (a few columns) instead of `x` (often thousands) is what makes a
    /// neighbourhood's evaluation cheap; the result equals PyG's up to float summation order.
    ///
    /// # Shapes
    /// - x: `[n, in]`
    pub fn project(&self, x: &[f32], n: usize) -> Projection {
        let (a, b) = match self {
            Conv::Gcn { lin, .. } => (lin.apply_no_bias(x, n), None),
            Conv::Sage {
                project,
                lin_l,
                lin_r,
                ..
            } => {
                let a = match project {
                    Some(p) => {
                        let h: Vec<f32> = p.apply(x, n).into_iter().map(crate::ops::relu).collect();
                        lin_l.apply_no_bias(&h, n)
                    }
                    None => lin_l.apply_no_bias(x, n),
                };
                (a, lin_r.as_ref().map(|r| r.apply(x, n)))
            }
            Conv::Gin { mlp, .. } => match mlp.first() {
                Some(MlpStep::Linear(d)) => (d.apply_no_bias(x, n), None),
                _ => (x.to_vec(), None),
            },
            Conv::Gat {
                lin_src, lin_dst, ..
            } => (
                lin_src.apply_no_bias(x, n),
                lin_dst.as_ref().map(|l| l.apply_no_bias(x, n)),
            ),
            Conv::Gatv2 { lin_l, lin_r, .. } => {
                (lin_l.apply(x, n), lin_r.as_ref().map(|l| l.apply(x, n)))
            }
            Conv::Hop(h) => (h.project(x, n), None),
            Conv::Linear(d) => (d.apply_no_bias(x, n), None),
        };
        Projection { a, b, n }
    }

    /// The layer on features `x` (`[n, in]`) over `adj`: [`Conv::project`], then
    /// [`Conv::forward_projected`].
    ///
    /// # Shapes
    /// - x: `[n, in]`; output: `[n, out]`
    pub fn forward(&self, x: &[f32], adj: &Adjacency) -> Vec<f32> {
        self.forward_projected(&self.project(x, adj.num_nodes()), adj)
    }

    /// The layer from its [`Conv::project`]ion of the nodes' features: `Conv::row` for every
    /// node.
    ///
    /// # Shapes
    /// - p: `n` rows; output: `[n, out]`
    pub fn forward_projected(&self, p: &Projection, adj: &Adjacency) -> Vec<f32> {
        let n = adj.num_nodes();
        debug_assert_eq!(p.n, n);
        let width = self.output_dim();
        let mut out = vec![0.0; n * width];
        let inputs = Whole { p, adj };
        let mut scratch = RowScratch::default();
        for (i, row) in out.chunks_exact_mut(width.max(1)).enumerate().take(n) {
            self.row(i, &inputs, &mut scratch, row);
        }
        out
    }

    /// One node's output row, read from what [`RowInputs`] gives of the nodes around it: the
    /// same arithmetic, in the same order, as the row in [`Conv::forward_projected`] (so a row
    /// recomputed after an edit equals a whole pass's on the edited graph bit for bit).
    ///
    /// # Shapes
    /// - out: `[out]` (overwritten)
    pub(crate) fn row(
        &self,
        i: usize,
        inputs: &impl RowInputs,
        scratch: &mut RowScratch,
        out: &mut [f32],
    ) {
        out.iter_mut().for_each(|v| *v = 0.0);
        match self {
            Conv::Gcn {
                lin,
                bias,
                normalize,
                self_loop,
            } => {
                let f = lin.dout;
                let loop_w = if *normalize { *self_loop } else { None };
                let dinv = |j: usize| gcn_dinv(inputs, j, *normalize, loop_w);
                let di = dinv(i);
                for &j in inputs.neighbours(i) {
                    let c = di * dinv(j as usize);
                    axpy(out, c, &inputs.a(j as usize)[..f]);
                }
                if let Some(w) = loop_w {
                    axpy(out, w * di * di, &inputs.a(i)[..f]);
                }
                if let Some(b) = bias {
                    axpy(out, 1.0, b);
                }
            }
            Conv::Sage {
                lin_l,
                aggr,
                normalize,
                ..
            } => {
                let f = lin_l.dout;
                let nb = inputs.neighbours(i);
                for &j in nb {
                    axpy(out, 1.0, &inputs.a(j as usize)[..f]);
                }
                if *aggr == Aggregation::Mean && !nb.is_empty() {
                    let k = nb.len() as f32;
                    out.iter_mut().for_each(|v| *v /= k);
                }
                if let Some(b) = &lin_l.bias {
                    axpy(out, 1.0, b);
                }
                if let Some(r) = inputs.b(i) {
                    axpy(out, 1.0, &r[..f]);
                }
                if *normalize {
                    let norm = out.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
                    out.iter_mut().for_each(|v| *v /= norm);
                }
            }
            Conv::Gin { eps, mlp } => {
                let own = inputs.a(i);
                let mut z = vec![0.0; own.len()];
                axpy(&mut z, 1.0 + eps, own);
                for &j in inputs.neighbours(i) {
                    axpy(&mut z, 1.0, inputs.a(j as usize));
                }
                let z = match mlp.first() {
                    Some(MlpStep::Linear(d)) => {
                        if let Some(b) = &d.bias {
                            axpy(&mut z, 1.0, b);
                        }
                        mlp_forward(&mlp[1..], z, 1)
                    }
                    _ => mlp_forward(mlp, z, 1),
                };
                out.copy_from_slice(&z);
            }
            Conv::Gat {
                att_src,
                att_dst,
                heads,
                out: c,
                concat,
                negative_slope,
                self_loops,
                bias,
                ..
            } => {
                let (hh, c) = (*heads, *c);
                let score = |v: &[f32], att: &[f32], h: usize| -> f32 {
                    (0..c).map(|q| v[h * c + q] * att[h * c + q]).sum()
                };
                let xd = inputs.b(i).unwrap_or(inputs.a(i));
                let RowScratch { srcs, e } = scratch;
                srcs.clear();
                srcs.extend_from_slice(inputs.neighbours(i));
                if *self_loops {
                    srcs.push(i as u32);
                }
                for h in 0..hh {
                    let a_d = score(xd, att_dst, h);
                    e.clear();
                    e.extend(srcs.iter().map(|&j| {
                        let v = score(inputs.a(j as usize), att_src, h) + a_d;
                        if v > 0.0 { v } else { v * negative_slope }
                    }));
                    let m = e.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    e.iter_mut().for_each(|v| *v = (*v - m).exp());
                    let s: f32 = e.iter().sum();
                    let dst = if *concat {
                        &mut out[h * c..(h + 1) * c]
                    } else {
                        &mut out[..]
                    };
                    let k = if *concat { 1.0 } else { 1.0 / hh as f32 };
                    for (&j, &ev) in srcs.iter().zip(e.iter()) {
                        axpy(dst, k * ev / s, &inputs.a(j as usize)[h * c..][..c]);
                    }
                }
                if let Some(b) = bias {
                    axpy(out, 1.0, b);
                }
            }
            Conv::Gatv2 {
                att,
                heads,
                out: c,
                concat,
                negative_slope,
                self_loops,
                bias,
                ..
            } => {
                let (hh, c) = (*heads, *c);
                let xr = inputs.b(i).unwrap_or(inputs.a(i));
                let RowScratch { srcs, e } = scratch;
                srcs.clear();
                srcs.extend_from_slice(inputs.neighbours(i));
                if *self_loops {
                    srcs.push(i as u32);
                }
                for h in 0..hh {
                    let r = h * c..(h + 1) * c;
                    e.clear();
                    e.extend(srcs.iter().map(|&j| {
                        let xl = &inputs.a(j as usize)[r.clone()];
                        xl.iter()
                            .zip(&xr[r.clone()])
                            .zip(&att[r.clone()])
                            .map(|((l, rr), a)| {
                                let v = l + rr;
                                a * if v > 0.0 { v } else { v * negative_slope }
                            })
                            .sum::<f32>()
                    }));
                    softmax_in_place(e);
                    let dst = if *concat {
                        &mut out[r.clone()]
                    } else {
                        &mut out[..]
                    };
                    let k = if *concat { 1.0 } else { 1.0 / hh as f32 };
                    for (&j, &a) in srcs.iter().zip(e.iter()) {
                        axpy(dst, k * a, &inputs.a(j as usize)[r.clone()]);
                    }
                }
                if let Some(b) = bias {
                    axpy(out, 1.0, b);
                }
            }
            Conv::Hop(h) => h.row(i, inputs, out),
            Conv::Linear(d) => {
                out.copy_from_slice(&inputs.a(i)[..d.dout]);
                if let Some(b) = &d.bias {
                    axpy(out, 1.0, b);
                }
            }
        }
    }
}

/// `e ← softmax(e)`, the maximum subtracted first.
fn softmax_in_place(e: &mut [f32]) {
    let m = e.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    e.iter_mut().for_each(|v| *v = (*v - m).exp());
    let s: f32 = e.iter().sum();
    e.iter_mut().for_each(|v| *v /= s);
}

/// What one output row of a layer reads ([`Conv::row`]): the projected rows of the nodes
/// around it and their neighbour lists (ascending), in whichever graph the row is taken on.
pub(crate) trait RowInputs {
    /// Node `j`'s projected row `a` ([`Conv::project`]).
    fn a(&self, j: usize) -> &[f32];
    /// Node `j`'s projected row `b`, if the layer has one.
    fn b(&self, j: usize) -> Option<&[f32]>;
    /// The neighbours of `j`, ascending.
    fn neighbours(&self, j: usize) -> &[u32];
}

/// A whole graph's inputs: one projection and its adjacency.
struct Whole<'p> {
    p: &'p Projection,
    adj: &'p Adjacency,
}

impl RowInputs for Whole<'_> {
    fn a(&self, j: usize) -> &[f32] {
        self.p.row_a(j)
    }
    fn b(&self, j: usize) -> Option<&[f32]> {
        self.p.row_b(j)
    }
    fn neighbours(&self, j: usize) -> &[u32] {
        self.adj.neighbours(j)
    }
}

/// Buffers [`Conv::row`] reuses between rows.
#[derive(Debug, Default)]
pub(crate) struct RowScratch {
    srcs: Vec<u32>,
    e: Vec<f32>,
}

/// A layer's per-node projection of features ([`Conv::project`]): `a` (and `b`) row-major, one
/// row per node.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    a: Vec<f32>,
    b: Option<Vec<f32>>,
    n: usize,
}

impl Projection {
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.n
    }

    /// Node `j`'s row of `a`.
    pub(crate) fn row_a(&self, j: usize) -> &[f32] {
        let w = self.a.len() / self.n.max(1);
        &self.a[j * w..(j + 1) * w]
    }

    /// Node `j`'s row of `b`, if any.
    pub(crate) fn row_b(&self, j: usize) -> Option<&[f32]> {
        let w = self.b.as_ref()?.len() / self.n.max(1);
        self.b.as_deref().map(|b| &b[j * w..(j + 1) * w])
    }

    /// The rows `a` and `b` as vectors (one node's projection, to keep beside another
    /// projection's rows).
    pub(crate) fn into_rows(self) -> (Vec<f32>, Option<Vec<f32>>) {
        (self.a, self.b)
    }

    /// The rows `rows` (in this order).
    pub fn gather(&self, rows: &[u32]) -> Projection {
        let take = |v: &[f32]| -> Vec<f32> {
            let w = v.len() / self.n.max(1);
            rows.iter()
                .flat_map(|&r| v[r as usize * w..(r as usize + 1) * w].iter().copied())
                .collect()
        };
        Projection {
            a: take(&self.a),
            b: self.b.as_deref().map(take),
            n: rows.len(),
        }
    }
}

/// GIN's MLP on `n` rows.
pub(super) fn mlp_forward(mlp: &[MlpStep], mut z: Vec<f32>, n: usize) -> Vec<f32> {
    for step in mlp {
        z = match step {
            MlpStep::Linear(d) => d.apply(&z, n),
            MlpStep::Affine { scale, shift } => {
                for row in z.chunks_exact_mut(scale.len().max(1)) {
                    for ((v, s), t) in row.iter_mut().zip(scale).zip(shift) {
                        *v = *v * s + t;
                    }
                }
                z
            }
            MlpStep::Act(a) => z.into_iter().map(|v| a.apply(v)).collect(),
        };
    }
    z
}
