//! The PyG layers in Burn, differentiable with respect to a weight on every edge (the form the
//! gradient-based baselines optimise). The parameters are uploaded to the device of the input at
//! each call (they are constants: only the edge weights carry gradients).
//!
//! How an edge weight `w ∈ [0, 1]` enters each family (each is PyG's layer at `w ∈ {0, 1}`):
//!
//! | layer | weighted message passing |
//! |---|---|
//! | `GCNConv` | PyG's own `edge_weight`: `Â = D̃^{-1/2}(W ⊙ A + I)D̃^{-1/2}`, `D̃ = 1 + Σ w` |
//! | `SAGEConv` mean | `Σ_j w_ij x_j / max(1, Σ_j w_ij)` (sum: `Σ_j w_ij x_j`) |
//! | `GINConv` | `(1 + ε) x_i + Σ_j w_ij x_j` |
//! | `GATConv`, `GATv2Conv` | attention `α_ij ∝ w_ij exp(e_ij)` over the neighbours and the node itself |
//! | `GraphConv` | SAGE's sum (it is resolved as one) |
//! | a hop (`SGConv`, `APPNP`, `TAGConv`, `ChebConv`) | GCN's normalisation of the weighted graph (`Â` of its module) |
//!
//! With [`DegreeGradient::Detached`], the degree-like denominators (GCN's `D̃`, SAGE's `Σ w`)
//! are constants, as CF-GNNExplainer treats the GCN's.

use burn::tensor::activation::{leaky_relu, log_softmax, relu, sigmoid, tanh};
use burn::tensor::{Device, IndexingUpdateOp, Int, Tensor};

use super::PygNet;
use super::arch::{Activation, Aggregation};
use super::layers::{Block, Conv, Dense, Hop, MlpStep};
use crate::black_box::EdgeWeighted;
use crate::kernels::tensors::{DegreeGradient, WeightedEdges, dense, matrix, scatter_add_rows};

/// Uploads a vector as a `[1, len]` row.
fn row(v: &[f32], device: &Device) -> Tensor<2> {
    matrix(v, 1, v.len(), device)
}

impl Dense {
    /// `x Wᵀ + b` in Burn.
    ///
    /// # Shapes
    /// - x: `[n, in]`; output: `[n, out]`
    fn burn(&self, x: Tensor<2>) -> Tensor<2> {
        let device = x.device();
        let y = dense(x, matrix(&self.wt, self.din, self.dout, &device));
        match &self.bias {
            Some(b) => y + row(b, &device),
            None => y,
        }
    }
}

impl Activation {
    /// The activation on a tensor.
    fn burn(self, x: Tensor<2>) -> Tensor<2> {
        match self {
            Activation::Relu => relu(x),
            Activation::Elu => {
                let neg = x.clone().clamp_max(0.0).exp().sub_scalar(1.0);
                x.clamp_min(0.0) + neg
            }
            Activation::LeakyRelu => leaky_relu(x, 0.01),
            Activation::Tanh => tanh(x),
            Activation::Sigmoid => sigmoid(x),
            Activation::Identity => x,
        }
    }
}

/// `x + b` (each row) where the layer has a bias.
fn plus_bias(x: Tensor<2>, bias: &Option<Vec<f32>>) -> Tensor<2> {
    match bias {
        Some(b) => {
            let device = x.device();
            x + row(b, &device)
        }
        None => x,
    }
}

/// `Σ_{k: dst[k] = i} values[k]`, or its constant version.
fn degree(w: Tensor<2>, dst: Tensor<1, Int>, n: usize, gradient: DegreeGradient) -> Tensor<2> {
    let w = match gradient {
        DegreeGradient::Through => w,
        DegreeGradient::Detached => w.detach(),
    };
    scatter_add_rows(w, dst, n)
}

/// The messages of a GCN-style propagation on weighted edges: sources, destinations and the
/// coefficient of each, `w_k d̃(src)^{-1/2} d̃(dst)^{-1/2}` when normalising (`d̃ = loop + Σ w`,
/// 0 where it is 0), else `w_k` (no loops).
///
/// # Shapes
/// - weights: `[m]`; output: (`[2m + n]`, `[2m + n]`, `[2m + n, 1]`)
fn gcn_messages(
    edges: &WeightedEdges,
    weights: Tensor<1>,
    normalize: bool,
    self_loop: Option<f32>,
    degree_gradient: DegreeGradient,
) -> (Tensor<1, Int>, Tensor<1, Int>, Tensor<2>) {
    let loop_w = if normalize {
        self_loop.unwrap_or(0.0)
    } else {
        0.0
    };
    let (src, dst, w) = edges.messages(weights, loop_w);
    if !normalize {
        return (src, dst, w);
    }
    let deg = degree(w.clone(), dst.clone(), edges.num_nodes(), degree_gradient);
    // deg^{-1/2}, 0 where the degree is 0 (an isolated node without self loop).
    let present = deg.clone().greater_elem(0.0).float();
    let inv = deg.clamp_min(1e-30).powf_scalar(-0.5) * present;
    let coef = w * inv.clone().select(0, src.clone()) * inv.select(0, dst.clone());
    (src, dst, coef)
}

/// Attention on weighted messages: per head, the softmax of `e` over each destination's
/// messages weighted by `w` (`α_ij ∝ w_ij exp(e_ij)`), then `Σ_j α_ij xs_j`, heads
/// concatenated or averaged.
///
/// # Shapes
/// - e: `[2m + n, H]`; w: `[2m + n, 1]`; xs: `[n, H·C]`; output: `[n, H·C]` or `[n, C]`
fn attend(
    e: Tensor<2>,
    w: Tensor<2>,
    xs: Tensor<2>,
    (src, dst): (Tensor<1, Int>, Tensor<1, Int>),
    n: usize,
    (hh, c): (usize, usize),
    concat: bool,
) -> Tensor<2> {
    let device = e.device();
    let k = src.dims()[0];
    let seg_max = Tensor::<2>::full([n, hh], -1e30, &device).select_assign(
        0,
        dst.clone(),
        e.clone().detach(),
        IndexingUpdateOp::Max,
    );
    let ex = (e - seg_max.select(0, dst.clone())).exp() * w;
    let denom = scatter_add_rows(ex.clone(), dst.clone(), n).clamp_min(1e-30);
    let alpha = ex / denom.select(0, dst.clone());
    let msgs = alpha.unsqueeze_dim::<3>(2) * xs.select(0, src).reshape([k, hh, c]);
    let agg = scatter_add_rows(msgs.reshape([k, hh * c]), dst, n);
    if concat {
        agg
    } else {
        agg.reshape([n, hh, c]).mean_dim(1).reshape([n, c])
    }
}

impl Hop {
    /// The hop on weighted edges: `Â` is GCN's normalisation of the weighted graph.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`; weights: `[m]`; output: `[n, output_dim]`
    fn burn(
        &self,
        x: Tensor<2>,
        edges: &WeightedEdges,
        weights: Tensor<1>,
        degree_gradient: DegreeGradient,
    ) -> Tensor<2> {
        let n = edges.num_nodes();
        let device = x.device();
        let w = self.width;
        let state = match &self.init {
            None => x,
            Some(blocks) => Tensor::cat(
                blocks
                    .iter()
                    .map(|b| match b {
                        Block::Input => x.clone(),
                        Block::Linear(d) => dense(x.clone(), matrix(&d.wt, d.din, d.dout, &device)),
                        Block::Zero => Tensor::zeros([n, w], &device),
                    })
                    .collect(),
                1,
            ),
        };
        let block = |b: usize| state.clone().slice([0..n, b * w..(b + 1) * w]);
        let (_, _, coef) = gcn_messages(
            edges,
            weights,
            self.normalize,
            self.self_loop,
            degree_gradient,
        );
        let mut head = edges.aggregate(coef, block(0)).mul_scalar(self.scale);
        for &(b, c) in &self.own {
            head = head + block(b).mul_scalar(c);
        }
        head = plus_bias(head, &self.bias);
        if self.carry.is_empty() {
            return head;
        }
        let mut parts = vec![head];
        parts.extend(self.carry.iter().map(|&b| block(b)));
        Tensor::cat(parts, 1)
    }
}

impl Conv {
    /// The layer with weighted messages.
    ///
    /// # Shapes
    /// - x: `[n, in]`; weights: `[m]`; output: `[n, out]`
    fn burn(
        &self,
        x: Tensor<2>,
        edges: &WeightedEdges,
        weights: Tensor<1>,
        degree_gradient: DegreeGradient,
    ) -> Tensor<2> {
        let n = edges.num_nodes();
        let device = x.device();
        match self {
            Conv::Gcn {
                lin,
                bias,
                normalize,
                self_loop,
            } => {
                let h = lin.burn(x);
                let (_, _, coef) =
                    gcn_messages(edges, weights, *normalize, *self_loop, degree_gradient);
                let out = edges.aggregate(coef, h);
                plus_bias(out, bias)
            }
            Conv::Sage {
                project,
                lin_l,
                lin_r,
                aggr,
                normalize,
            } => {
                let source = match project {
                    Some(p) => relu(p.burn(x.clone())),
                    None => x.clone(),
                };
                // lin_l before the (linear) aggregation: messages `out` wide, not `in` wide.
                let source = dense(source, matrix(&lin_l.wt, lin_l.din, lin_l.dout, &device));
                let (_, dst, w) = edges.messages(weights, 0.0);
                let mut agg = edges.aggregate(w.clone(), source);
                if *aggr == Aggregation::Mean {
                    agg = agg / degree(w, dst, n, degree_gradient).clamp_min(1.0);
                }
                let mut out = match &lin_l.bias {
                    Some(b) => agg + row(b, &device),
                    None => agg,
                };
                if let Some(r) = lin_r {
                    out = out + r.burn(x);
                }
                if *normalize {
                    let norm = out
                        .clone()
                        .powf_scalar(2.0)
                        .sum_dim(1)
                        .sqrt()
                        .clamp_min(1e-12);
                    out = out / norm;
                }
                out
            }
            Conv::Gin { eps, mlp } => {
                // A leading Linear goes before the (linear) sum: messages `out` wide.
                let (x, rest) = match mlp.first() {
                    Some(MlpStep::Linear(d)) => {
                        (dense(x, matrix(&d.wt, d.din, d.dout, &device)), &mlp[1..])
                    }
                    _ => (x, &mlp[..]),
                };
                let (_, _, w) = edges.messages(weights, 0.0);
                let mut z = x.clone().mul_scalar(1.0 + eps) + edges.aggregate(w, x);
                if let Some(MlpStep::Linear(Dense { bias: Some(b), .. })) = mlp.first() {
                    z = z + row(b, &device);
                }
                for step in rest {
                    z = match step {
                        MlpStep::Linear(d) => d.burn(z),
                        MlpStep::Affine { scale, shift } => {
                            z * row(scale, &device) + row(shift, &device)
                        }
                        MlpStep::Act(a) => a.burn(z),
                    };
                }
                z
            }
            Conv::Gat {
                lin_src,
                lin_dst,
                att_src,
                att_dst,
                heads,
                out,
                concat,
                negative_slope,
                self_loops,
                bias,
            } => {
                let (hh, c) = (*heads, *out);
                let xs = lin_src.burn(x.clone());
                let xd = match lin_dst {
                    Some(l) => l.burn(x),
                    None => xs.clone(),
                };
                // Per-head scores: (x' ⊙ att) summed over each head's C columns → [n, H].
                let per_head = |v: Tensor<2>, att: &[f32]| -> Tensor<2> {
                    (v * row(att, &device))
                        .reshape([n, hh, c])
                        .sum_dim(2)
                        .reshape([n, hh])
                };
                let (a_s, a_d) = (per_head(xs.clone(), att_src), per_head(xd, att_dst));
                let loop_w = if *self_loops { 1.0 } else { 0.0 };
                let (src, dst, w) = edges.messages(weights, loop_w);
                let e = leaky_relu(
                    a_s.select(0, src.clone()) + a_d.select(0, dst.clone()),
                    *negative_slope as f64,
                );
                let agg = attend(e, w, xs, (src, dst), n, (hh, c), *concat);
                plus_bias(agg, bias)
            }
            Conv::Gatv2 {
                lin_l,
                lin_r,
                att,
                heads,
                out,
                concat,
                negative_slope,
                self_loops,
                bias,
            } => {
                let (hh, c) = (*heads, *out);
                let xl = lin_l.burn(x.clone());
                let xr = match lin_r {
                    Some(l) => l.burn(x),
                    None => xl.clone(),
                };
                let loop_w = if *self_loops { 1.0 } else { 0.0 };
                let (src, dst, w) = edges.messages(weights, loop_w);
                let k = src.dims()[0];
                let z = leaky_relu(
                    xl.clone().select(0, src.clone()) + xr.select(0, dst.clone()),
                    *negative_slope as f64,
                );
                let e = (z * row(att, &device))
                    .reshape([k, hh, c])
                    .sum_dim(2)
                    .reshape([k, hh]);
                let agg = attend(e, w, xl, (src, dst), n, (hh, c), *concat);
                plus_bias(agg, bias)
            }
            Conv::Hop(h) => h.burn(x, edges, weights, degree_gradient),
            Conv::Linear(d) => d.burn(x),
        }
    }
}

impl PygNet {
    /// Every layer with its activation, on weighted edges.
    fn burn_embeddings(
        &self,
        x: Tensor<2>,
        edges: &WeightedEdges,
        weights: Tensor<1>,
        degree_gradient: DegreeGradient,
    ) -> Tensor<2> {
        let mut h = x;
        for (i, conv) in self.layers.iter().enumerate() {
            h = conv.burn(h, edges, weights.clone(), degree_gradient);
            h = self.acts[i].burn(h);
        }
        h
    }
}

impl EdgeWeighted for PygNet {
    fn input_dim(&self) -> usize {
        crate::BlackBox::input_dim(self)
    }

    fn forward_weighted(
        &self,
        x: Tensor<2>,
        edges: &WeightedEdges,
        weights: Tensor<1>,
        degree_gradient: DegreeGradient,
    ) -> Tensor<2> {
        let h = self.burn_embeddings(x, edges, weights, degree_gradient);
        let out = match &self.head {
            Some(d) => d.burn(h),
            None => h,
        };
        log_softmax(out, 1)
    }

    fn embeddings(&self, x: Tensor<2>, edges: &WeightedEdges) -> Tensor<2> {
        let ones = Tensor::ones([edges.num_edges()], &x.device());
        self.burn_embeddings(x, edges, ones, DegreeGradient::Detached)
    }

    fn to_device_boxed(&self, _device: &Device) -> Box<dyn EdgeWeighted> {
        Box::new(self.clone())
    }
}
