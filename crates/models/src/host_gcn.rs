//! A plain-Rust (host) copy of a trained [`Gcn`]: the same function as the Burn model, without
//! Burn's per-operation overhead, for the many small forward passes of an explanation.
//!
//! Internally every activation and weight is stored with its widths rounded up to a multiple of 4
//! and zero-filled, so that all kernels work on whole 4- or 8-float chunks (which the compiler
//! vectorises) and never need a scalar tail loop. The zero columns contribute exact zeros, so the
//! padding does not change any result.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use burn::tensor::Tensor;
use induce_graph::Features;

use crate::black_box::{BlackBox, LogProbs, check_features};
use crate::error::{ModelError, Result};
use crate::gcn::{Gcn, GraphConv};

/// Widths are padded to a multiple of this (one SSE register of `f32`).
const LANES: usize = 4;
/// Rows per register tile of [`matmul_acc`].
const MR: usize = 4;

/// `w` rounded up to a multiple of [`LANES`].
pub(crate) fn padded(w: usize) -> usize {
    w.div_ceil(LANES) * LANES
}

/// Copies a row-major `[rows, cols]` matrix into a zero-filled `[rows_to, cols_to]` one.
pub(crate) fn pad_matrix(
    v: &[f32],
    rows: usize,
    cols: usize,
    rows_to: usize,
    cols_to: usize,
) -> Vec<f32> {
    let mut out = vec![0.0; rows_to * cols_to];
    if cols > 0 {
        for (src, dst) in v.chunks_exact(cols).zip(out.chunks_exact_mut(cols_to)) {
            dst[..cols].copy_from_slice(src);
        }
    }
    debug_assert!(v.len() == rows * cols && rows <= rows_to && cols <= cols_to);
    out
}

/// One graph convolution `H' = Â (H W) + b` on the host.
#[derive(Debug, Clone)]
pub(crate) struct HostConv {
    /// True input width.
    pub(crate) d_in: usize,
    /// True output width.
    pub(crate) d_out: usize,
    /// Padded input width.
    pub(crate) k: usize,
    /// Padded output width.
    pub(crate) m: usize,
    /// Weight, row-major `[k, m]`, zero outside `[d_in, d_out]`.
    pub(crate) weight: Vec<f32>,
    /// Bias `[m]`, zero after `d_out`.
    pub(crate) bias: Vec<f32>,
}

/// A trained [`Gcn`] copied into host memory (plain `Vec<f32>`): computes the same class
/// log-probabilities as [`GcnBlackBox`](crate::GcnBlackBox) (up to floating-point summation
/// order, ~1e-7 relative to the logits) in plain single-threaded Rust, without Burn's
/// per-operation overhead, for the many small forward passes of an explanation (a 368-node,
/// 1,558-edge BA-Shapes neighbourhood: ≈100 µs per call against ≈250 µs for the Burn model on
/// the flex backend).
///
/// The copy is taken once; later changes to the Burn model are not seen.
///
/// ```
/// use induce_graph::Features;
/// use induce_models::device::default_device;
/// use induce_models::{BlackBox, GcnBlackBox, GcnConfig, HostGcn};
///
/// let dev = default_device().unwrap();
/// let gcn = GcnConfig::new(3, 2).init(&dev);
/// let host = HostGcn::from_gcn(&gcn).unwrap();
/// //  0 ─ 1 ─ 2   3 (isolated)
/// let x = Features::new(4, 3, (0..12).map(|v| v as f32 / 10.0).collect()).unwrap();
/// let edges = [(0, 1), (1, 2)];
/// let fast = host.log_probs(&x, &edges).unwrap();
/// let burn = GcnBlackBox::new(gcn, &dev).log_probs(&x, &edges).unwrap();
/// for (a, b) in fast.as_slice().iter().zip(burn.as_slice()) {
///     assert!((a - b).abs() < 1e-5);
/// }
/// assert_eq!(fast.predictions(), burn.predictions());
/// ```
#[derive(Debug, Clone)]
pub struct HostGcn {
    pub(crate) convs: [HostConv; 3],
    /// Classifier weight, row-major `[k1 + k2 + k3, mc]` (padded convolution widths `ki`
    /// stacked, padded class count `mc`), zero outside the Burn weight's entries.
    pub(crate) lin_weight: Vec<f32>,
    /// Classifier bias `[mc]` (zeros if the Burn `Linear` has none).
    pub(crate) lin_bias: Vec<f32>,
    pub(crate) num_classes: usize,
    /// The last whole-matrix projection, shared by the neighbourhoods of one graph
    /// ([`BlackBox::prepare_rows`], [`BlackBox::incremental_rows`]).
    projections: ProjectionCache,
    /// The Burn model it was built from ([`BlackBox::differentiable`]).
    source: Gcn,
}

/// The most recent `X W₁` of a [`HostGcn`], keyed by [`Features::id`]: every neighbourhood of
/// the same graph gathers its rows from it instead of multiplying its own features again (on
/// Amazon-Photo, 5,567 × 745 × 128 multiply-adds per episode). A clone starts empty.
#[derive(Debug, Default)]
struct ProjectionCache(Mutex<Option<(u64, Arc<Projected>)>>);

impl Clone for ProjectionCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// Reads a parameter back to the host as a flat row-major `f32` vector.
fn host_vec<const D: usize>(t: Tensor<D>, name: &str) -> Result<Vec<f32>> {
    t.try_into_vec_as::<f32>()
        .map_err(|e| ModelError::InvalidInput(format!("cannot read parameter {name}: {e}")))
}

fn expect_dim(what: String, expected: usize, got: usize) -> Result<()> {
    if expected != got {
        return Err(ModelError::DimensionMismatch {
            what,
            expected,
            got,
        });
    }
    Ok(())
}

impl HostConv {
    fn from_burn(conv: &GraphConv, name: &str, d_in: Option<usize>) -> Result<Self> {
        let [rows, cols] = conv.weight.dims();
        if let Some(d) = d_in {
            expect_dim(
                format!("{name}.weight rows (previous layer width)"),
                d,
                rows,
            )?;
        }
        expect_dim(format!("{name}.bias length"), cols, conv.bias.dims()[0])?;
        let (k, m) = (padded(rows), padded(cols));
        let weight = host_vec(conv.weight.val(), &format!("{name}.weight"))?;
        let bias = host_vec(conv.bias.val(), &format!("{name}.bias"))?;
        Ok(Self {
            d_in: rows,
            d_out: cols,
            k,
            m,
            weight: pad_matrix(&weight, rows, cols, k, m),
            bias: pad_matrix(&bias, 1, cols, 1, m),
        })
    }

    /// `Â (h W) + b`, optionally ReLU'd; `tmp` is scratch space. `W` is applied on the narrower
    /// side: before the aggregation if `d_out ≤ d_in` (as Burn does), after it otherwise
    /// (`(Â h) W`, equal up to rounding).
    ///
    /// # Shapes
    /// - h: `[n, k]` (padded)
    /// - output: `[n, m]` (padded, zero columns after `d_out`)
    fn forward(&self, h: &[f32], adj: &Adjacency, tmp: &mut Vec<f32>, relu: bool) -> Vec<f32> {
        let n = adj.num_nodes();
        let mut out = vec![0.0f32; n * self.m];
        tmp.clear();
        if self.d_out <= self.d_in {
            tmp.resize(n * self.m, 0.0);
            matmul_acc(h, self.k, &self.weight, self.m, tmp);
            adj.aggregate(tmp, self.m, &mut out);
        } else {
            tmp.resize(n * self.k, 0.0);
            adj.aggregate(h, self.k, tmp);
            matmul_acc(tmp, self.k, &self.weight, self.m, &mut out);
        }
        for row in out.chunks_exact_mut(self.m.max(1)) {
            for (o, &b) in row.iter_mut().zip(&self.bias) {
                *o += b;
                if relu {
                    *o = o.max(0.0);
                }
            }
        }
        out
    }
}

impl HostGcn {
    /// Copies every parameter of `model` to the host (any device, any float dtype; values are
    /// read as `f32`).
    ///
    /// Errors: [`ModelError::DimensionMismatch`] if the layer shapes do not chain (a convolution's
    /// input width differs from the previous one's output, a bias length from its weight, or the
    /// classifier's input from the summed convolution widths), [`ModelError::InvalidInput`] if a
    /// parameter cannot be read back as `f32`.
    pub fn from_gcn(model: &Gcn) -> Result<Self> {
        let c1 = HostConv::from_burn(&model.gc1, "gc1", None)?;
        let c2 = HostConv::from_burn(&model.gc2, "gc2", Some(c1.d_out))?;
        let c3 = HostConv::from_burn(&model.gc3, "gc3", Some(c2.d_out))?;
        let [lin_in, num_classes] = model.lin.weight.dims();
        expect_dim(
            "lin.weight rows (concatenated convolution widths)".into(),
            c1.d_out + c2.d_out + c3.d_out,
            lin_in,
        )?;
        let mc = padded(num_classes);
        let lin_bias = match &model.lin.bias {
            Some(b) => {
                expect_dim("lin.bias length".into(), num_classes, b.dims()[0])?;
                pad_matrix(&host_vec(b.val(), "lin.bias")?, 1, num_classes, 1, mc)
            }
            None => vec![0.0; mc],
        };
        // Stack the row blocks of x1, x2, x3, each padded to its convolution's padded width.
        let w = host_vec(model.lin.weight.val(), "lin.weight")?;
        let mut lin_weight = Vec::with_capacity((c1.m + c2.m + c3.m) * mc);
        let mut row0 = 0;
        for c in [&c1, &c2, &c3] {
            let block = &w[row0 * num_classes..(row0 + c.d_out) * num_classes];
            lin_weight.extend(pad_matrix(block, c.d_out, num_classes, c.m, mc));
            row0 += c.d_out;
        }
        Ok(Self {
            convs: [c1, c2, c3],
            lin_weight,
            lin_bias,
            num_classes,
            projections: ProjectionCache::default(),
            source: model.clone(),
        })
    }

    /// Class log-probabilities of every node: exactly [`Gcn::forward`]'s function,
    /// `log_softmax([x1 ‖ x2 ‖ x3] W_lin + b_lin)` with `x1 = relu(Â X W1 + b1)`,
    /// `x2 = relu(Â x1 W2 + b2)`, `x3 = Â x2 W3 + b3` (no ReLU on `x3`) and
    /// `Â = D̃^{-1/2}(A + I)D̃^{-1/2}` built from `edges` as [`Messages::new`] does (each listed
    /// pair counts once per endpoint in the degree, self loops added).
    ///
    /// Cost: `O(n · (d·w1 + w1·w2 + w2·w3 + (w1+w2+w3)·C) + E · (w1 + w2 + w3))`, a handful of
    /// `O(n · width)` allocations per call and no `n × n` matrix.
    ///
    /// # Shapes
    /// - x: `[n, d]` (`d` = [`BlackBox::input_dim`])
    /// - edges: `E` undirected pairs, local ids `< n`, no self loops
    /// - output: `[n, C]` (log-softmax over classes)
    ///
    /// Errors: the same as [`GcnBlackBox`](crate::GcnBlackBox)'s: a
    /// [`ModelError::DimensionMismatch`] for a wrong feature dimension and a
    /// [`ModelError::InvalidInput`] for an out-of-range endpoint or a self loop.
    ///
    /// [`Messages::new`]: crate::tensors::Messages::new
    pub fn forward(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
        self.forward_adj(x, edges, None)
    }

    /// [`HostGcn::forward`] on a SAMPLED subgraph whose node `v` has `hidden[v]` neighbours in
    /// the whole graph that the subgraph leaves out (e.g. a hub of a fan-out-capped
    /// neighbourhood). The GCN normalisation uses the whole-graph degrees, and each node's sum
    /// over its listed neighbours is scaled by `(listed + hidden) / listed`: for a uniform sample
    /// of neighbours this is an unbiased estimate of the whole-graph aggregation (the
    /// GraphSAGE-style estimator), and exact when nothing is hidden or when the hidden
    /// neighbours carry the same values as the listed ones.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`; hidden: `[n]`
    /// - output: `[n, num_classes]`
    pub fn forward_sampled(
        &self,
        x: &Features,
        edges: &[(u32, u32)],
        hidden: &[u32],
    ) -> Result<LogProbs> {
        self.forward_adj(x, edges, Some(hidden))
    }

    fn forward_adj(
        &self,
        x: &Features,
        edges: &[(u32, u32)],
        hidden: Option<&[u32]>,
    ) -> Result<LogProbs> {
        check_features(x, self.input_dim())?;
        let n = x.num_nodes();
        let adj = Adjacency::build(n, edges, hidden)?;
        let c1 = &self.convs[0];
        let x0: Cow<'_, [f32]> = if c1.k == c1.d_in {
            Cow::Borrowed(x.as_slice())
        } else {
            Cow::Owned(pad_matrix(x.as_slice(), n, c1.d_in, n, c1.k))
        };
        let mut tmp = Vec::new();
        let x1 = c1.forward(&x0, &adj, &mut tmp, true);
        self.after_first_layer(x1, &adj, n)
    }

    /// Layers 2 and 3, the concatenation and the output layer, from the first layer's output.
    fn after_first_layer(&self, x1: Vec<f32>, adj: &Adjacency, n: usize) -> Result<LogProbs> {
        let [_, c2, c3] = &self.convs;
        let mut tmp = Vec::new();
        let x2 = c2.forward(&x1, adj, &mut tmp, true);
        let x3 = c3.forward(&x2, adj, &mut tmp, false);
        // [x1 ‖ x2 ‖ x3] W = x1 W[rows of x1] + x2 W[rows of x2] + x3 W[rows of x3]
        let (c, mc) = (self.num_classes, padded(self.num_classes));
        let mut z = vec![0.0f32; n * mc];
        let mut row0 = 0;
        for (h, conv) in [&x1, &x2, &x3].into_iter().zip(&self.convs) {
            let w = &self.lin_weight[row0 * mc..(row0 + conv.m) * mc];
            matmul_acc(h, conv.m, w, mc, &mut z);
            row0 += conv.m;
        }
        let mut out = Vec::with_capacity(n * c);
        for row in z.chunks_exact_mut(mc.max(1)).take(n) {
            let row = &mut row[..c];
            for (v, &b) in row.iter_mut().zip(&self.lin_bias) {
                *v += b;
            }
            log_softmax_in_place(row);
            out.extend_from_slice(row);
        }
        LogProbs::new(n, c, out)
    }

    /// [`HostGcn::forward`] from the projected features `X W₁` ([`HostGcn::project`]): equal
    /// bit for bit to `forward(x, edges)` when the first layer narrows (`d_out ≤ d_in`, where
    /// `forward` also multiplies before aggregating), and equal up to round-off otherwise.
    ///
    /// # Shapes
    /// - xw: `[n, hidden]` (from `x: [n, input_dim]`)
    /// - output: `[n, num_classes]`
    pub fn forward_projected(&self, xw: &Projected, edges: &[(u32, u32)]) -> Result<LogProbs> {
        let n = xw.num_nodes;
        let adj = Adjacency::build(n, edges, None)?;
        let c1 = &self.convs[0];
        let mut x1 = vec![0.0f32; n * c1.m];
        adj.aggregate(&xw.rows, c1.m, &mut x1);
        bias_relu(&mut x1, &c1.bias, c1.m, true);
        self.after_first_layer(x1, &adj, n)
    }
}

/// A [`HostGcn`] bound to one node set's projected features ([`BlackBox::prepare`]).
struct PreparedHostGcn<'a> {
    gcn: &'a HostGcn,
    xw: Projected,
}

impl crate::black_box::PreparedBlackBox for PreparedHostGcn<'_> {
    fn log_probs(&self, edges: &[(u32, u32)]) -> Result<LogProbs> {
        self.gcn.forward_projected(&self.xw, edges)
    }
}

/// `out[i] = Σ_{w ∈ N(v) ∪ {v}} â_vw · input(w)` for the rows `v = rows[i]`, where `input(w)` is
/// row `pos(w)` of `input` (`width` floats).
fn aggregate_rows(
    graph: &dyn Neighbours,
    rows: &[u32],
    input: &[f32],
    width: usize,
    pos: &dyn Fn(u32) -> Option<usize>,
) -> Result<Vec<f32>> {
    let inv_sqrt = |v: u32| 1.0 / ((graph.degree(v) + 1) as f32).sqrt();
    let mut out = vec![0.0f32; rows.len() * width];
    let mut nb = Vec::new();
    for (&v, o) in rows.iter().zip(out.chunks_exact_mut(width.max(1))) {
        nb.clear();
        graph.neighbours(v, &mut nb);
        let iv = inv_sqrt(v);
        for &w in nb.iter().chain(std::iter::once(&v)) {
            let norm = if w == v { iv * iv } else { iv * inv_sqrt(w) };
            let at = pos(w).ok_or_else(|| {
                ModelError::InvalidInput(format!("node {w} outside the receptive field"))
            })?;
            for (a, &r) in o.iter_mut().zip(&input[at * width..(at + 1) * width]) {
                *a += norm * r;
            }
        }
    }
    Ok(out)
}

/// Adds the bias (and applies ReLU) to every `m`-wide row.
fn bias_relu(h: &mut [f32], bias: &[f32], m: usize, relu: bool) {
    for row in h.chunks_exact_mut(m.max(1)) {
        for (o, &b) in row.iter_mut().zip(bias) {
            *o += b;
            if relu {
                *o = o.max(0.0);
            }
        }
    }
}

/// The first layer's feature transform `X W₁` of every node of a graph (see
/// [`HostGcn::project`]): the part of the GCN an edit cannot change, computed once per graph.
#[derive(Debug, Clone)]
pub struct Projected {
    rows: Vec<f32>,
    width: usize,
    num_nodes: usize,
}

impl Projected {
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }
}

/// The first layer of a GCN on an unedited graph (see [`HostGcn::first_layer`]).
#[derive(Debug, Clone)]
pub struct FirstLayer {
    h1: Vec<f32>,
    num_nodes: usize,
}

/// Read access to a (possibly edited) undirected graph for [`HostGcn::log_probs_at`]: lets the
/// caller evaluate one node of a huge graph with edits applied as an overlay, without copying
/// the graph or gathering its features.
pub trait Neighbours {
    /// Number of nodes.
    fn num_nodes(&self) -> usize;
    /// Appends the neighbours of `v` (each once, no self loop) to `out`.
    fn neighbours(&self, v: u32, out: &mut Vec<u32>);
    /// The degree of `v` (the length of its neighbour list).
    fn degree(&self, v: u32) -> usize;
}

impl HostGcn {
    /// `X W₁` for every node: node features never change during an explanation, so on a large
    /// graph this is computed once and shared by all targets and edits
    /// ([`HostGcn::log_probs_at`]).
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`
    pub fn project(&self, x: &Features) -> Result<Projected> {
        check_features(x, self.input_dim())?;
        let n = x.num_nodes();
        let c1 = &self.convs[0];
        let x0: Cow<'_, [f32]> = if c1.k == c1.d_in {
            Cow::Borrowed(x.as_slice())
        } else {
            Cow::Owned(pad_matrix(x.as_slice(), n, c1.d_in, n, c1.k))
        };
        let mut rows = vec![0.0f32; n * c1.m];
        matmul_acc(&x0, c1.k, &c1.weight, c1.m, &mut rows);
        Ok(Projected {
            rows,
            width: c1.m,
            num_nodes: n,
        })
    }

    /// [`HostGcn::project`] of `source`, from the cache when `source` (by [`Features::id`]) was
    /// the last matrix projected; computed (and cached) otherwise. Callers on other threads
    /// wait for one computation instead of repeating it.
    fn cached_projection(&self, source: &Features) -> Result<Arc<Projected>> {
        let mut slot = self
            .projections
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((id, p)) = slot.as_ref()
            && *id == source.id()
        {
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(self.project(source)?);
        *slot = Some((source.id(), Arc::clone(&p)));
        Ok(p)
    }

    /// The rows `rows` of `source`'s projection `X W₁` (cached per matrix), bit for bit what
    /// [`HostGcn::project`] computes on the gathered rows: each row of the product depends on
    /// its feature row only.
    ///
    /// # Shapes
    /// - source: `[N, input_dim]`; rows: `[n]`; output: `[n, hidden]`
    pub fn project_rows(&self, source: &Features, rows: &[u32]) -> Result<Projected> {
        check_features(source, self.input_dim())?;
        crate::black_box::check_rows(source, rows)?;
        let all = self.cached_projection(source)?;
        let m = all.width;
        let mut out = Vec::with_capacity(rows.len() * m);
        for &r in rows {
            out.extend_from_slice(&all.rows[r as usize * m..(r as usize + 1) * m]);
        }
        Ok(Projected {
            rows: out,
            width: m,
            num_nodes: rows.len(),
        })
    }

    /// The first layer's output `ReLU(Â X W₁ + b₁)` of every node of an unedited graph: with it,
    /// [`HostGcn::log_probs_at_edited`] evaluates a node after a few edits by recomputing only
    /// the first-layer rows the edits touch.
    ///
    /// # Shapes
    /// - xw: `[n, hidden]`; output: `[n, hidden]`
    pub fn first_layer(&self, xw: &Projected, graph: &dyn Neighbours) -> Result<FirstLayer> {
        let n = graph.num_nodes();
        if xw.num_nodes != n || xw.width != self.convs[0].m {
            return Err(ModelError::InvalidInput(format!(
                "projected features for {} nodes, graph of {n}",
                xw.num_nodes
            )));
        }
        let all: Vec<u32> = (0..n as u32).collect();
        let c1 = &self.convs[0];
        let mut h1 = aggregate_rows(graph, &all, &xw.rows, c1.m, &|v| Some(v as usize))?;
        bias_relu(&mut h1, &c1.bias, c1.m, true);
        Ok(FirstLayer { h1, num_nodes: n })
    }

    /// The log-probabilities of one node of an EDITED graph, incrementally: `base` is
    /// [`HostGcn::first_layer`] of the unedited graph, `graph` the edited one and `changed` the
    /// endpoints of every edited pair. A first-layer row changes only if its node is an endpoint
    /// or adjacent to one (its neighbour set or a neighbour's degree changed); those rows are
    /// recomputed, the rest read from `base`, then layers 2 and 3 are computed on the node's
    /// 1-hop neighbourhood. Equal to [`HostGcn::log_probs_at`] on the edited graph (a test pins
    /// it), at a fraction of the cost on graphs with hubs.
    ///
    /// # Shapes
    /// - output: `[num_classes]`
    pub fn log_probs_at_edited(
        &self,
        xw: &Projected,
        base: &FirstLayer,
        graph: &dyn Neighbours,
        changed: &[u32],
        node: u32,
    ) -> Result<Vec<f32>> {
        let n = graph.num_nodes();
        if base.num_nodes != n || xw.num_nodes != n || node as usize >= n {
            return Err(ModelError::InvalidInput(format!(
                "node {node} of a graph with {n} nodes and cached layers for {} nodes",
                base.num_nodes
            )));
        }
        let [c1, c2, c3] = &self.convs;
        let mut nb = Vec::new();
        let mut affected: Vec<u32> = changed.to_vec();
        for &a in changed {
            graph.neighbours(a, &mut affected);
        }
        affected.sort_unstable();
        affected.dedup();
        // Layer 2 on the node and its neighbours, layer 3 on the node; layer-1 rows on those and
        // their neighbours, recomputed where an edit touches them.
        graph.neighbours(node, &mut nb);
        let mut rows1 = vec![node];
        rows1.extend(nb.iter().copied().filter(|&w| w != node));
        let mut needed: Vec<u32> = rows1.clone();
        let mut nb2 = Vec::new();
        for &v in &rows1 {
            graph.neighbours(v, &mut nb2);
        }
        needed.extend(nb2);
        needed.sort_unstable();
        needed.dedup();
        let stale: Vec<u32> = needed
            .iter()
            .copied()
            .filter(|v| affected.binary_search(v).is_ok())
            .collect();
        let mut fresh = aggregate_rows(graph, &stale, &xw.rows, c1.m, &|v| Some(v as usize))?;
        bias_relu(&mut fresh, &c1.bias, c1.m, true);
        let h1_row = |v: u32| -> &[f32] {
            match stale.binary_search(&v) {
                Ok(i) => &fresh[i * c1.m..(i + 1) * c1.m],
                Err(_) => &base.h1[v as usize * c1.m..(v as usize + 1) * c1.m],
            }
        };
        let mut h1 = Vec::with_capacity(needed.len() * c1.m);
        for &v in &needed {
            h1.extend_from_slice(h1_row(v));
        }
        let at1 = |v: u32| needed.binary_search(&v).ok();
        let a2 = aggregate_rows(graph, &rows1, &h1, c1.m, &at1)?;
        let mut h2 = vec![0.0f32; rows1.len() * c2.m];
        matmul_acc(&a2, c2.k, &c2.weight, c2.m, &mut h2);
        bias_relu(&mut h2, &c2.bias, c2.m, true);
        let mut sorted1: Vec<(u32, usize)> =
            rows1.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        sorted1.sort_unstable();
        let at2 = |v: u32| {
            sorted1
                .binary_search_by_key(&v, |&(w, _)| w)
                .ok()
                .map(|i| sorted1[i].1)
        };
        let a3 = aggregate_rows(graph, &[node], &h2, c2.m, &at2)?;
        let mut h3 = vec![0.0f32; c3.m];
        matmul_acc(&a3, c3.k, &c3.weight, c3.m, &mut h3);
        bias_relu(&mut h3, &c3.bias, c3.m, false);
        Ok(self.output_row(h1_row(node), &h2[..c2.m], &h3))
    }

    /// `log_softmax([h1 ‖ h2 ‖ h3] W + b)` of one node.
    fn output_row(&self, h1: &[f32], h2: &[f32], h3: &[f32]) -> Vec<f32> {
        let mc = padded(self.num_classes);
        let mut z = vec![0.0f32; mc];
        let mut row0 = 0;
        for (h, conv) in [h1, h2, h3].into_iter().zip(&self.convs) {
            let w = &self.lin_weight[row0 * mc..(row0 + conv.m) * mc];
            matmul_acc(h, conv.m, w, mc, &mut z);
            row0 += conv.m;
        }
        let row = &mut z[..self.num_classes];
        for (v, &b) in row.iter_mut().zip(&self.lin_bias) {
            *v += b;
        }
        log_softmax_in_place(row);
        row.to_vec()
    }

    /// The log-probabilities of one node, computed on its receptive field only: a 3-layer GCN's
    /// output at `node` depends on layer-1 outputs within 2 hops, layer-2 outputs within 1 hop
    /// and the layer-3 output at `node`, and through the normalisation on the degrees of the
    /// nodes within 3 hops. Each layer is computed on exactly those rows, from the projected
    /// features ([`HostGcn::project`]), so the cost is the number of edges incident to the
    /// 2-hop neighbourhood times the hidden width, independent of the rest of the graph. Equal
    /// to `forward(..).row(node)` up to rounding (a test pins it).
    ///
    /// This is what makes explanations checkable on graphs with hubs: after an edit only this
    /// receptive field is recomputed, and the graph is read through [`Neighbours`] (edits as an
    /// overlay).
    ///
    /// # Shapes
    /// - xw: `[graph.num_nodes(), hidden]` (from [`HostGcn::project`])
    /// - output: `[num_classes]`
    pub fn log_probs_at(
        &self,
        xw: &Projected,
        graph: &dyn Neighbours,
        node: u32,
    ) -> Result<Vec<f32>> {
        let n = graph.num_nodes();
        if xw.num_nodes != n || node as usize >= n || xw.width != self.convs[0].m {
            return Err(ModelError::InvalidInput(format!(
                "node {node} of a graph with {n} nodes and projected features for {} nodes",
                xw.num_nodes
            )));
        }
        // Rows needing layer 1 (≤ 2 hops), layer 2 (≤ 1 hop), layer 3 (the node), in BFS order:
        // `order[..n1]` are within 1 hop, `order` within 2.
        // Position of each reached node in `order` (a dense array: hashing costs more here).
        let mut pos = vec![u32::MAX; n];
        pos[node as usize] = 0;
        let mut order = vec![node];
        let mut nb = Vec::new();
        let mut n1 = 1;
        for depth in 0..2 {
            let (lo, hi) = (if depth == 0 { 0 } else { 1 }, order.len());
            for i in lo..hi {
                nb.clear();
                graph.neighbours(order[i], &mut nb);
                for &w in &nb {
                    if pos[w as usize] == u32::MAX {
                        pos[w as usize] = order.len() as u32;
                        order.push(w);
                    }
                }
            }
            if depth == 0 {
                n1 = order.len();
            }
        }
        let [c1, c2, c3] = &self.convs;
        let at = |v: u32| {
            Some(pos[v as usize])
                .filter(|&p| p != u32::MAX)
                .map(|p| p as usize)
        };
        let mut h1 = aggregate_rows(graph, &order, &xw.rows, c1.m, &|v| Some(v as usize))?;
        bias_relu(&mut h1, &c1.bias, c1.m, true);
        let a2 = aggregate_rows(graph, &order[..n1], &h1, c1.m, &at)?;
        let mut h2 = vec![0.0f32; n1 * c2.m];
        matmul_acc(&a2, c2.k, &c2.weight, c2.m, &mut h2);
        bias_relu(&mut h2, &c2.bias, c2.m, true);
        let a3 = aggregate_rows(graph, &[node], &h2, c2.m, &at)?;
        let mut h3 = vec![0.0f32; c3.m];
        matmul_acc(&a3, c3.k, &c3.weight, c3.m, &mut h3);
        bias_relu(&mut h3, &c3.bias, c3.m, false);
        Ok(self.output_row(&h1[..c1.m], &h2[..c2.m], &h3))
    }
}

impl BlackBox for HostGcn {
    fn input_dim(&self) -> usize {
        self.convs[0].d_in
    }

    fn differentiable(&self) -> Option<&Gcn> {
        Some(&self.source)
    }

    fn message_passing_layers(&self) -> Option<u32> {
        Some(crate::gcn::GCN_LAYERS)
    }

    fn num_classes(&self) -> usize {
        self.num_classes
    }

    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
        self.forward(x, edges)
    }

    /// Projects the features once (`X W₁`) when the first layer narrows (`d_out ≤ d_in`: wide
    /// features such as Cora's 1,433), so each evaluation only aggregates; the results are
    /// bit-identical to [`HostGcn::forward`]. Narrow inputs (the synthetic benchmarks' 10
    /// features) gain nothing and are not prepared.
    fn prepare(
        &self,
        x: &Features,
    ) -> Result<Option<Box<dyn crate::black_box::PreparedBlackBox + '_>>> {
        if !self.convs[0].multiplies_first() {
            return Ok(None);
        }
        Ok(Some(Box::new(PreparedHostGcn {
            gcn: self,
            xw: self.project(x)?,
        })))
    }

    /// [`IncrementalHostGcn`](crate::incremental::IncrementalHostGcn): after an edit, only the
    /// rows it reaches are recomputed, bit-identical to a full evaluation.
    fn incremental<'s>(
        &'s self,
        x: &Features,
        edges: &[(u32, u32)],
    ) -> Result<Option<Box<dyn crate::black_box::IncrementalBlackBox<'s> + 's>>> {
        Ok(Some(Box::new(crate::incremental::IncrementalHostGcn::new(
            self, x, edges,
        )?)))
    }

    /// [`BlackBox::prepare`] of the gathered rows; when the first layer narrows, its product
    /// is gathered from `source`'s (computed once per matrix, [`HostGcn::project_rows`]).
    fn prepare_rows(
        &self,
        source: &Features,
        rows: &[u32],
    ) -> Result<Option<Box<dyn crate::black_box::PreparedBlackBox + '_>>> {
        if !self.convs[0].multiplies_first() {
            return self.prepare(&crate::black_box::gather_rows(source, rows)?);
        }
        Ok(Some(Box::new(PreparedHostGcn {
            gcn: self,
            xw: self.project_rows(source, rows)?,
        })))
    }

    /// [`BlackBox::incremental`] of the gathered rows; when the first layer narrows, its
    /// product is gathered from `source`'s (computed once per matrix,
    /// [`HostGcn::project_rows`]). Bit-identical to `incremental` on the gathered rows.
    fn incremental_rows<'s>(
        &'s self,
        source: &Features,
        rows: &[u32],
        edges: &[(u32, u32)],
    ) -> Result<Option<Box<dyn crate::black_box::IncrementalBlackBox<'s> + 's>>> {
        if !self.convs[0].multiplies_first() {
            return self.incremental(&crate::black_box::gather_rows(source, rows)?, edges);
        }
        let xw = self.project_rows(source, rows)?;
        Ok(Some(Box::new(
            crate::incremental::IncrementalHostGcn::from_first_product(self, xw.rows, edges)?,
        )))
    }
}

/// `Â = D̃^{-1/2}(A + I)D̃^{-1/2}` in compressed rows: the incoming messages of each node
/// (source, weight `1/sqrt(d̃(src) d̃(dst))`) in edge-list order, plus its self-loop weight.
///
/// The weights are computed with the arithmetic of [`crate::tensors::Messages::new`], and each
/// row lists its messages in the order Burn's scatter-add meets them (edges in list order, the
/// self loop last).
#[derive(Debug)]
pub(crate) struct Adjacency {
    /// Row `i`'s messages are `start[i]..start[i + 1]`.
    start: Vec<usize>,
    /// Message sources.
    src: Vec<u32>,
    /// Message weights.
    weight: Vec<f32>,
    /// Self-loop weight `1/d̃` of each node.
    self_weight: Vec<f32>,
}

impl Adjacency {
    /// Validates `edges` with the errors of [`crate::tensors::Messages::new`] and builds the
    /// rows (a counting sort: `O(n + E)`). With `hidden`, for a subgraph whose node `v` has `hidden[v]` more neighbours in the
    /// whole graph: degrees count them, and each row's neighbour messages are scaled by
    /// `(listed + hidden) / listed` (the listed neighbours stand in for the hidden ones).
    pub(crate) fn build(n: usize, edges: &[(u32, u32)], hidden: Option<&[u32]>) -> Result<Self> {
        let mut deg = vec![1u32; n];
        for &(u, w) in edges {
            for x in [u, w] {
                if x as usize >= n {
                    return Err(ModelError::InvalidInput(format!(
                        "edge ({u}, {w}) has endpoint {x} outside the graph's {n} nodes"
                    )));
                }
            }
            if u == w {
                return Err(ModelError::InvalidInput(format!(
                    "self loop ({u}, {u}) in edge list"
                )));
            }
            deg[u as usize] += 1;
            deg[w as usize] += 1;
        }
        let listed = deg.clone();
        let mut scale = Vec::new();
        if let Some(h) = hidden {
            if h.len() != n {
                return Err(ModelError::InvalidInput(format!(
                    "{} hidden-neighbour counts for {n} nodes",
                    h.len()
                )));
            }
            scale = listed
                .iter()
                .zip(h)
                .map(|(&l, &x)| {
                    if l > 1 {
                        (l - 1 + x) as f32 / (l - 1) as f32
                    } else {
                        1.0
                    }
                })
                .collect();
            for (d, &x) in deg.iter_mut().zip(h) {
                *d += x;
            }
        }
        let inv: Vec<f32> = deg.iter().map(|&d| 1.0 / (d as f32).sqrt()).collect();
        let mut start = Vec::with_capacity(n + 1);
        let mut total = 0usize;
        start.push(0);
        for &d in &listed {
            total += d as usize - 1;
            start.push(total);
        }
        let mut next = start[..n].to_vec();
        let (mut src, mut weight) = (vec![0u32; total], vec![0.0f32; total]);
        for &(u, w) in edges {
            let s = inv[u as usize] * inv[w as usize];
            for (from, to) in [(u, w), (w, u)] {
                let slot = &mut next[to as usize];
                src[*slot] = from;
                weight[*slot] = match scale.get(to as usize) {
                    Some(&k) => s * k,
                    None => s,
                };
                *slot += 1;
            }
        }
        let self_weight = inv.iter().map(|&i| i * i).collect();
        Ok(Self {
            start,
            src,
            weight,
            self_weight,
        })
    }

    fn num_nodes(&self) -> usize {
        self.self_weight.len()
    }

    /// The neighbours of `v` (its messages' sources, self loop excluded).
    pub(crate) fn neighbours(&self, v: usize) -> &[u32] {
        &self.src[self.start[v]..self.start[v + 1]]
    }

    /// [`Adjacency::aggregate`] for the listed rows only: `out[i] = (Â h)[rows[i]]`, with the
    /// same per-row arithmetic.
    ///
    /// # Shapes
    /// - h: `[n, f]`; out: `[rows.len(), f]`
    pub(crate) fn aggregate_rows(&self, h: &[f32], f: usize, rows: &[u32], out: &mut [f32]) {
        if f == 0 {
            return;
        }
        for (&v, o) in rows.iter().zip(out.chunks_exact_mut(f)) {
            self.aggregate_row(v as usize, h, f, o);
        }
    }

    /// Row `i` of `Â h` into `o` (`f` wide, overwritten).
    #[inline(always)]
    fn aggregate_row(&self, i: usize, h: &[f32], f: usize, o: &mut [f32]) {
        let full = f - f % (2 * LANES);
        let (lo, hi) = (self.start[i], self.start[i + 1]);
        let row = Row {
            src: &self.src[lo..hi],
            weight: &self.weight[lo..hi],
            node: i,
            self_weight: self.self_weight[i],
        };
        for j in (0..full).step_by(2 * LANES) {
            row.gather::<{ 2 * LANES }>(h, f, j, o);
        }
        if full < f {
            row.gather::<LANES>(h, f, full, o);
        }
    }

    /// `out = Â h` (`out` is overwritten). Each output row is summed from zero over its
    /// messages `h[src] · weight` in row order, then its self loop, as Burn's scatter-add does.
    ///
    /// # Shapes
    /// - h, out: `[n, f]`, `f` a multiple of [`LANES`]
    fn aggregate(&self, h: &[f32], f: usize, out: &mut [f32]) {
        if f == 0 {
            return;
        }
        for (i, o) in out.chunks_exact_mut(f).enumerate() {
            self.aggregate_row(i, h, f, o);
        }
    }
}

/// One row of [`Adjacency`].
struct Row<'a> {
    src: &'a [u32],
    weight: &'a [f32],
    node: usize,
    self_weight: f32,
}

impl Row<'_> {
    /// `o[j..j + C] = Σ_messages h[src][j..j + C] · weight + h[node][j..j + C] · self_weight`.
    #[inline(always)]
    fn gather<const C: usize>(&self, h: &[f32], f: usize, j: usize, o: &mut [f32]) {
        let mut acc = [0.0f32; C];
        let mut add = |u: usize, s: f32| {
            let x: &[f32; C] = h[u * f + j..u * f + j + C].try_into().expect("C columns");
            for c in 0..C {
                acc[c] += x[c] * s;
            }
        };
        for (&u, &s) in self.src.iter().zip(self.weight) {
            add(u as usize, s);
        }
        add(self.node, self.self_weight);
        o[j..j + C].copy_from_slice(&acc);
    }
}

/// `out += a · w`, all row-major and contiguous: `a` `[n, k]`, `w` `[k, m]`, `out` `[n, m]`,
/// `m` a multiple of [`LANES`].
///
/// Register-tiled: `MR` rows of `a` are packed column by column, then each `MR × C` block of
/// `out` (`C` = 8 columns, or 4 for the last block when `m ≡ 4 mod 8`) is accumulated in a local
/// array over the whole of `k` (in order `p = 0..k`) and added to `out`; the compiler keeps the
/// block in vector registers.
pub(crate) fn matmul_acc(a: &[f32], k: usize, w: &[f32], m: usize, out: &mut [f32]) {
    debug_assert!(
        m.is_multiple_of(LANES) && w.len() == k * m && a.len() / k.max(1) == out.len() / m.max(1)
    );
    if k == 0 || m == 0 {
        return;
    }
    let mut packed = vec![[0.0f32; MR]; k];
    let mut a_blocks = a.chunks_exact(MR * k);
    let mut o_blocks = out.chunks_exact_mut(MR * m);
    for (ab, ob) in (&mut a_blocks).zip(&mut o_blocks) {
        for (p, col) in packed.iter_mut().enumerate() {
            for (r, v) in col.iter_mut().enumerate() {
                *v = ab[r * k + p];
            }
        }
        tile_rows::<MR>(&packed, w, m, ob);
    }
    let rest = a_blocks.remainder().chunks_exact(k);
    for (ar, or) in rest.zip(o_blocks.into_remainder().chunks_exact_mut(m)) {
        tile_rows::<1>(ar.as_chunks::<1>().0, w, m, or);
    }
}

/// `out += a · w` for `R` rows, `a` packed by columns (`a[p][r]`), `out` `[R, m]`.
#[inline(always)]
fn tile_rows<const R: usize>(a: &[[f32; R]], w: &[f32], m: usize, out: &mut [f32]) {
    let full = m - m % (2 * LANES);
    for j in (0..full).step_by(2 * LANES) {
        tile::<R, { 2 * LANES }>(a, w, m, j, out);
    }
    if full < m {
        tile::<R, LANES>(a, w, m, full, out);
    }
}

/// `out[.., j..j + C] += a · w[.., j..j + C]` for `R` rows (`a` packed by columns).
#[inline(always)]
fn tile<const R: usize, const C: usize>(
    a: &[[f32; R]],
    w: &[f32],
    m: usize,
    j: usize,
    out: &mut [f32],
) {
    let mut acc = [[0.0f32; C]; R];
    for (w_row, a_col) in w.chunks_exact(m).zip(a) {
        let wr: &[f32; C] = w_row[j..j + C].try_into().expect("C columns");
        for (acc_r, &av) in acc.iter_mut().zip(a_col) {
            for (o, &wc) in acc_r.iter_mut().zip(wr) {
                *o += av * wc;
            }
        }
    }
    for (r, acc_r) in acc.iter().enumerate() {
        for (o, &v) in out[r * m + j..r * m + j + C].iter_mut().zip(acc_r) {
            *o += v;
        }
    }
}

/// Burn's `log_softmax` on one row: `s = z − max z`, `s − ln Σ exp s`.
pub(crate) fn log_softmax_in_place(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0f32;
    for v in row.iter_mut() {
        *v -= max;
        sum += v.exp();
    }
    let lse = sum.ln();
    for v in row.iter_mut() {
        *v -= lse;
    }
}

#[cfg(test)]
mod receptive_tests {
    use super::*;
    use crate::GcnConfig;
    use crate::device::default_device;

    struct Lists(Vec<Vec<u32>>);
    impl Neighbours for Lists {
        fn num_nodes(&self) -> usize {
            self.0.len()
        }
        fn neighbours(&self, v: u32, out: &mut Vec<u32>) {
            out.extend(&self.0[v as usize]);
        }
        fn degree(&self, v: u32) -> usize {
            self.0[v as usize].len()
        }
    }

    /// The receptive-field evaluation equals the full forward at every node of a graph with a
    /// hub, long paths (nodes beyond 3 hops) and an isolated node.
    #[test]
    fn one_node_equals_the_full_forward() {
        let dev = default_device().unwrap();
        let gcn = GcnConfig::new(6, 3).with_init_seed(4).init(&dev);
        let host = HostGcn::from_gcn(&gcn).unwrap();
        let n = 40u32;
        let mut edges = Vec::new();
        for v in 1..n - 1 {
            edges.push((v - 1, v)); // a path through every node but the last
        }
        for v in (3..30).step_by(3) {
            edges.push((5, v)); // node 5 is a hub
        }
        edges.retain(|&(a, b)| a != b);
        edges.sort();
        edges.dedup();
        let x = Features::new(
            n as usize,
            6,
            (0..n * 6)
                .map(|i| ((i * 37 % 17) as f32) * 0.2 - 1.0)
                .collect(),
        )
        .unwrap();
        let full = host.forward(&x, &edges).unwrap();
        let mut lists = vec![Vec::new(); n as usize];
        for &(a, b) in &edges {
            lists[a as usize].push(b);
            lists[b as usize].push(a);
        }
        let g = Lists(lists);
        let xw = host.project(&x).unwrap();
        for v in 0..n {
            let one = host.log_probs_at(&xw, &g, v).unwrap();
            for (a, b) in one.iter().zip(full.row(v as usize)) {
                assert!(
                    (a - b).abs() < 1e-5,
                    "node {v}: {one:?} vs {:?}",
                    full.row(v as usize)
                );
            }
        }
        assert!(host.log_probs_at(&xw, &g, n).is_err());
    }

    /// The incremental evaluation after edits equals the receptive-field evaluation on the
    /// edited graph, at every node, for deletions and additions touching the hub.
    #[test]
    fn incremental_equals_receptive_after_edits() {
        let dev = default_device().unwrap();
        let host = HostGcn::from_gcn(&GcnConfig::new(3, 2).with_init_seed(2).init(&dev)).unwrap();
        let n = 30u32;
        let mut edges: Vec<(u32, u32)> = (1..n).map(|v| (v - 1, v)).collect();
        edges.extend((4..n).step_by(4).map(|v| (2, v)));
        let x = Features::new(
            n as usize,
            3,
            (0..n * 3)
                .map(|i| ((i * 13 % 7) as f32) * 0.3 - 0.8)
                .collect(),
        )
        .unwrap();
        let lists = |e: &[(u32, u32)]| {
            let mut l = vec![Vec::new(); n as usize];
            for &(a, b) in e {
                l[a as usize].push(b);
                l[b as usize].push(a);
            }
            Lists(l)
        };
        let xw = host.project(&x).unwrap();
        let base = host.first_layer(&xw, &lists(&edges)).unwrap();
        let mut edited = edges.clone();
        edited.retain(|&e| e != (2, 8) && e != (10, 11));
        edited.push((0, 25));
        let g = lists(&edited);
        let changed = [2, 8, 10, 11, 0, 25];
        for v in 0..n {
            let want = host.log_probs_at(&xw, &g, v).unwrap();
            let got = host
                .log_probs_at_edited(&xw, &base, &g, &changed, v)
                .unwrap();
            for (a, b) in got.iter().zip(&want) {
                assert!((a - b).abs() < 1e-5, "node {v}: {got:?} vs {want:?}");
            }
        }
    }

    /// A star whose leaves all carry the same features: a subgraph keeping 3 of its 6 leaves,
    /// told that the centre has 3 hidden neighbours, gives the whole star's outputs exactly; with
    /// nothing hidden it is the plain forward.
    #[test]
    fn sampled_forward_restores_hidden_neighbours() {
        let dev = default_device().unwrap();
        let host = HostGcn::from_gcn(&GcnConfig::new(2, 3).with_init_seed(8).init(&dev)).unwrap();
        let feats = |n: usize| {
            let mut v = vec![0.3f32, -1.2];
            v.extend((1..n).flat_map(|_| [0.9f32, 0.4]));
            Features::new(n, 2, v).unwrap()
        };
        let star = |leaves: u32| (1..=leaves).map(|l| (0, l)).collect::<Vec<_>>();
        let full = host.forward(&feats(7), &star(6)).unwrap();
        let sampled = host
            .forward_sampled(&feats(4), &star(3), &[3, 0, 0, 0])
            .unwrap();
        for v in 0..4 {
            for (a, b) in sampled.row(v).iter().zip(full.row(v)) {
                assert!((a - b).abs() < 1e-5, "node {v}");
            }
        }
        let plain = host.forward(&feats(4), &star(3)).unwrap();
        let zero = host.forward_sampled(&feats(4), &star(3), &[0; 4]).unwrap();
        assert_eq!(plain.as_slice(), zero.as_slice());
        assert!(host.forward_sampled(&feats(4), &star(3), &[0; 3]).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GcnBlackBox;
    use crate::device::default_device;
    use crate::gcn::GcnConfig;
    use burn::tensor::Device;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeSet;

    #[test]
    fn prepared_forward_is_bit_identical_and_only_for_narrowing_layers() {
        let dev = default_device().unwrap();
        let mut rng = StdRng::seed_from_u64(11);
        // Wide features (d = 40 > hidden 20): prepared.
        let (n, d) = (30, 40);
        let x = Features::new(n, d, (0..n * d).map(|_| rng.random::<f32>()).collect()).unwrap();
        let gcn = HostGcn::from_gcn(&GcnConfig::new(d, 3).init(&dev)).unwrap();
        let prepared = gcn
            .prepare(&x)
            .unwrap()
            .expect("a narrowing first layer is prepared");
        for trial in 0..5 {
            let edges = random_graph(&mut rng, n - trial, 40 + 10 * trial, None);
            let a = gcn.forward(&x, &edges).unwrap();
            let b = prepared.log_probs(&edges).unwrap();
            assert_eq!(a.as_slice(), b.as_slice(), "trial {trial}");
        }
        // A bad edge list is the same typed error either way.
        assert!(prepared.log_probs(&[(0, n as u32)]).is_err());
        // Narrow features (d = 10 < 20): nothing to gain, not prepared.
        let narrow = HostGcn::from_gcn(&GcnConfig::new(10, 2).init(&dev)).unwrap();
        assert!(
            narrow
                .prepare(&Features::constant(4, 10, 1.0))
                .unwrap()
                .is_none()
        );
        // A feature matrix of the wrong width is refused at preparation.
        assert!(gcn.prepare(&Features::constant(4, 10, 1.0)).is_err());
    }

    /// A random simple graph on nodes `0..n_active` (`m` random tries; node `hub`, if any,
    /// joined to every other one); nodes from `n_active` on are isolated.
    fn random_graph(
        rng: &mut StdRng,
        n_active: usize,
        m: usize,
        hub: Option<u32>,
    ) -> Vec<(u32, u32)> {
        let mut set = BTreeSet::new();
        if n_active >= 2 {
            for _ in 0..m {
                let u = rng.random_range(0..n_active as u32);
                let w = rng.random_range(0..n_active as u32);
                if u != w {
                    set.insert((u.min(w), u.max(w)));
                }
            }
        }
        if let Some(h) = hub {
            for u in 0..n_active as u32 {
                if u != h {
                    set.insert((u.min(h), u.max(h)));
                }
            }
        }
        let mut edges: Vec<(u32, u32)> = set.into_iter().collect();
        // Mixed orientations and an unsorted order, as an edited graph may give them.
        for (k, e) in edges.iter_mut().enumerate() {
            if k % 3 == 0 {
                *e = (e.1, e.0);
            }
        }
        let len = edges.len();
        if len > 1 {
            for k in 0..len {
                edges.swap(k, rng.random_range(0..len));
            }
        }
        edges
    }

    fn random_features(rng: &mut StdRng, n: usize, d: usize) -> Features {
        Features::new(
            n,
            d,
            (0..n * d).map(|_| rng.random_range(-1.0..1.0)).collect(),
        )
        .unwrap()
    }

    fn assert_same(host: &HostGcn, burn: &GcnBlackBox, x: &Features, edges: &[(u32, u32)]) {
        let a = host.log_probs(x, edges).unwrap();
        let b = burn.log_probs(x, edges).unwrap();
        assert_eq!(
            (a.num_nodes(), a.num_classes()),
            (b.num_nodes(), b.num_classes())
        );
        let worst = a
            .as_slice()
            .iter()
            .zip(b.as_slice())
            .map(|(p, q)| (p - q).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst < 1e-5,
            "max |host − burn| = {worst} (n = {})",
            x.num_nodes()
        );
    }

    fn pair(gcn: crate::Gcn, dev: &Device) -> (HostGcn, GcnBlackBox) {
        let host = HostGcn::from_gcn(&gcn).unwrap();
        (host, GcnBlackBox::new(gcn, dev))
    }

    #[test]
    fn host_gcn_matches_burn_on_random_graphs() {
        let dev = default_device().unwrap();
        let mut rng = StdRng::seed_from_u64(7);
        // (d, C, hidden): layer 1 transformed first (d ≥ hidden) and aggregated first (d < hidden)
        for (d, c, hidden, seed) in [(10, 4, 20, 0), (3, 5, 32, 1), (50, 3, 8, 2), (1, 2, 9, 3)] {
            let cfg = GcnConfig::new(d, c)
                .with_hidden(hidden)
                .with_init_seed(seed);
            let (host, burn) = pair(cfg.init(&dev), &dev);
            assert_eq!((host.input_dim(), host.num_classes()), (d, c));
            for (n, active, m, hub) in [
                (1, 1, 0, None),
                (2, 2, 1, None),
                (12, 9, 15, Some(4)),
                (40, 30, 60, None),
                (150, 120, 300, Some(0)),
                (400, 380, 1500, Some(17)),
            ] {
                let edges = random_graph(&mut rng, active, m, hub);
                let x = random_features(&mut rng, n, d);
                assert_same(&host, &burn, &x, &edges);
            }
            // No edges at all.
            let x = random_features(&mut rng, 7, d);
            assert_same(&host, &burn, &x, &[]);
        }
    }

    #[test]
    fn host_gcn_matches_burn_with_uneven_widths_and_no_classifier_bias() {
        let dev = default_device().unwrap();
        let (d, c) = (6, 3);
        // widths 5 → 7 → 9; the classifier takes 21 = 3 · 7 inputs.
        let gc1 = GcnConfig::new(d, c).with_hidden(5).init(&dev).gc1;
        let gc2 = GcnConfig::new(5, c).with_hidden(7).init(&dev).gc1;
        let gc3 = GcnConfig::new(7, c).with_hidden(9).init(&dev).gc1;
        let mut lin = GcnConfig::new(d, c).with_hidden(7).init(&dev).lin;
        lin.bias = None;
        let gcn = crate::Gcn { gc1, gc2, gc3, lin };
        let (host, burn) = pair(gcn, &dev);
        let mut rng = StdRng::seed_from_u64(3);
        let edges = random_graph(&mut rng, 50, 120, Some(2));
        let x = random_features(&mut rng, 60, d);
        assert_same(&host, &burn, &x, &edges);
    }

    #[test]
    fn mismatched_layers_are_rejected() {
        let dev = default_device().unwrap();
        let mut gcn = GcnConfig::new(4, 2).init(&dev);
        gcn.gc2 = GcnConfig::new(7, 2).init(&dev).gc1; // [7, 20] after a 20-wide gc1
        let e = HostGcn::from_gcn(&gcn).unwrap_err();
        assert!(
            matches!(
                e,
                ModelError::DimensionMismatch {
                    expected: 20,
                    got: 7,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("gc2.weight"), "{e}");
    }

    #[test]
    fn bad_inputs_give_the_black_box_errors() {
        let dev = default_device().unwrap();
        let (host, burn) = pair(GcnConfig::new(3, 2).init(&dev), &dev);
        let x = Features::constant(4, 3, 1.0);
        let err = |bb: &dyn BlackBox, x: &Features, e: &[(u32, u32)]| {
            bb.log_probs(x, e).unwrap_err().to_string()
        };
        // Wrong feature dimension.
        let x2 = Features::constant(4, 2, 1.0);
        let e = host.log_probs(&x2, &[(0, 1)]).unwrap_err();
        assert!(matches!(
            e,
            ModelError::DimensionMismatch {
                expected: 3,
                got: 2,
                ..
            }
        ));
        assert_eq!(e.to_string(), err(&burn, &x2, &[(0, 1)]));
        // Out-of-range endpoint and self loop.
        for bad in [&[(0, 1), (2, 4)][..], &[(5, 0)], &[(1, 2), (3, 3)]] {
            let e = host.log_probs(&x, bad).unwrap_err();
            assert!(matches!(e, ModelError::InvalidInput(_)), "{e}");
            assert_eq!(e.to_string(), err(&burn, &x, bad));
        }
        // An empty graph is fine.
        let empty = host.log_probs(&Features::constant(0, 3, 1.0), &[]).unwrap();
        assert_eq!((empty.num_nodes(), empty.num_classes()), (0, 2));
    }

    #[test]
    fn matmul_kernel_matches_naive_product() {
        let mut rng = StdRng::seed_from_u64(11);
        for (n, k, m) in [
            (0, 3, 8),
            (1, 1, 4),
            (5, 3, 8),
            (9, 7, 20),
            (13, 0, 16),
            (6, 4, 72),
            (7, 30, 12),
        ] {
            let a: Vec<f32> = (0..n * k).map(|_| rng.random_range(-1.0..1.0)).collect();
            let w: Vec<f32> = (0..k * m).map(|_| rng.random_range(-1.0..1.0)).collect();
            let mut out = vec![0.5f32; n * m];
            matmul_acc(&a, k, &w, m, &mut out);
            for i in 0..n {
                for j in 0..m {
                    let want: f64 = 0.5
                        + (0..k)
                            .map(|p| a[i * k + p] as f64 * w[p * m + j] as f64)
                            .sum::<f64>();
                    assert!((out[i * m + j] as f64 - want).abs() < 1e-5, "{n}×{k}×{m}");
                }
            }
        }
    }
}
