//! The black-box GCN's output and its gradient with respect to a weight on every edge, in plain
//! Rust: what the mask-based explainers (CF-GNNExplainer, CF²) need at every optimisation step,
//! without Burn's per-operation and autodiff overhead (a step on a small neighbourhood is a few
//! hundred tiny operations, so that overhead — and the autodiff graph's global lock, which keeps
//! threads from running in parallel — dominates). The same function and gradient as
//! [`Gcn::forward_weighted`] under Burn's autodiff, pinned by tests.
//!
//! Messages `k` run `s_k → t_k` with weight `ω_k` (an edge's weight for both of its directions,
//! 1 for the self loops); `d̃_i = Σ_{t_k = i} ω_k`, `a_k = ω_k d̃_{s_k}^{-1/2} d̃_{t_k}^{-1/2}`;
//! each layer is `Z = Σ_k a_k (H W)_{s_k} → t_k + b`, ReLU after the first two; the output is
//! `log_softmax([H1 ‖ H2 ‖ H3] W_lin + b_lin)`. The backward pass starts from the target's row
//! only.

use std::borrow::Cow;

use induce_graph::Features;

use crate::black_box::check_features;
use crate::error::{ModelError, Result};
use crate::gcn::Gcn;
use crate::kernels::tensors::{DegreeGradient, Messages};
use crate::linalg::{matmul_acc, matmul_acc_at, transpose};
use crate::ops::log_softmax;

/// A dense row-major layer `[rows, cols]` and its bias.
#[derive(Debug, Clone)]
struct Dense {
    rows: usize,
    cols: usize,
    w: Vec<f32>,
    /// `w` transposed, `[cols, rows]` (for the backward pass).
    wt: Vec<f32>,
    b: Vec<f32>,
}

fn read<const D: usize>(t: burn::tensor::Tensor<D>, name: &str) -> Result<Vec<f32>> {
    t.try_into_vec_as::<f32>()
        .map_err(|e| ModelError::InvalidInput(format!("cannot read parameter {name}: {e}")))
}

/// `h · w` for `n` rows (`[n, cols]`), or only the rows listed in `rows` (the others zero).
fn product(h: &[f32], n: usize, l: &Dense, rows: Option<&[u32]>) -> Vec<f32> {
    let mut out = vec![0.0f32; n * l.cols];
    match rows {
        None => matmul_acc(h, &l.w, l.rows, l.cols, &mut out),
        Some(r) => matmul_acc_at(h, &l.w, l.rows, l.cols, r, &mut out),
    }
    out
}

/// The black-box [`Gcn`] on the host, for gradients with respect to edge weights.
///
/// ```
/// use induce_graph::Features;
/// use induce_models::device::default_device;
/// use induce_models::{DegreeGradient, GcnConfig, gcn::host::grad::EdgeWeightGcn};
/// let gcn = GcnConfig::new(2, 3).init(&default_device().unwrap());
/// let host = EdgeWeightGcn::from_gcn(&gcn).unwrap();
/// //  0 ─ 1 ─ 2
/// let x = Features::new(3, 2, vec![1.0, 0.0, 0.5, 0.5, 0.0, 1.0]).unwrap();
/// let bound = host.bind(&x, &[(0, 1), (1, 2)], 0).unwrap();
/// // d log p(class 2 of node 0) / d (edge weights)
/// let through = DegreeGradient::Through;
/// let (logp, grad) = bound.log_probs_and_grad(&[1.0, 0.5], through, |_| vec![0.0, 0.0, 1.0]);
/// assert_eq!((logp.len(), grad.len()), (3, 2));
/// ```
#[derive(Debug, Clone)]
pub struct EdgeWeightGcn {
    layers: [Dense; 3],
    lin: Dense,
    num_classes: usize,
}

impl EdgeWeightGcn {
    /// Copies `model`'s parameters to the host.
    pub fn from_gcn(model: &Gcn) -> Result<Self> {
        let conv = |c: &crate::gcn::GraphConv, name: &str| -> Result<Dense> {
            let [rows, cols] = c.weight.dims();
            let w = read(c.weight.val(), name)?;
            Ok(Dense {
                rows,
                cols,
                wt: transpose(&w, rows, cols),
                w,
                b: read(c.bias.val(), name)?,
            })
        };
        let layers = [
            conv(&model.gc1, "gc1")?,
            conv(&model.gc2, "gc2")?,
            conv(&model.gc3, "gc3")?,
        ];
        let [rows, cols] = model.lin.weight.dims();
        let concat = layers.iter().map(|l| l.cols).sum::<usize>();
        if rows != concat || layers[1].rows != layers[0].cols || layers[2].rows != layers[1].cols {
            return Err(ModelError::DimensionMismatch {
                what: "GCN layer widths (lin.weight rows vs concatenated convolutions)".into(),
                expected: concat,
                got: rows,
            });
        }
        let w = read(model.lin.weight.val(), "lin.weight")?;
        let lin = Dense {
            rows,
            cols,
            wt: transpose(&w, rows, cols),
            w,
            b: match &model.lin.bias {
                Some(b) => read(b.val(), "lin.bias")?,
                None => vec![0.0; cols],
            },
        };
        Ok(Self {
            layers,
            lin,
            num_classes: cols,
        })
    }

    /// Number of classes.
    pub fn num_classes(&self) -> usize {
        self.num_classes
    }

    /// Binds the model to one neighbourhood: features `x`, candidate `pairs` (each a message in
    /// both directions, weighted at every call) and the `target` whose output is differentiated.
    /// Computes the first layer's `X W₁` once.
    pub fn bind(
        &self,
        x: &Features,
        pairs: &[(u32, u32)],
        target: usize,
    ) -> Result<BoundEdgeWeightGcn<'_>> {
        let xw = self.first_layer(x)?;
        self.bind_product(x.num_nodes(), Cow::Owned(xw), pairs, target)
    }

    /// The first layer's `X W₁` (`[n, hidden]`): bound once by [`Self::bind_first_layer`] for
    /// many bindings of the same nodes and features (the state of an episode at every step).
    ///
    /// Errors: features of another width than the model's.
    pub fn first_layer(&self, x: &Features) -> Result<Vec<f32>> {
        check_features(x, self.layers[0].rows)?;
        Ok(product(x.as_slice(), x.num_nodes(), &self.layers[0], None))
    }

    /// [`Self::bind`] with the first layer's product `xw` of [`Self::first_layer`] (for the
    /// same nodes' features) instead of the features.
    ///
    /// Errors: `xw` not `[n, hidden]` for some `n`, a pair or the target out of range.
    pub fn bind_first_layer<'a>(
        &'a self,
        xw: &'a [f32],
        pairs: &[(u32, u32)],
        target: usize,
    ) -> Result<BoundEdgeWeightGcn<'a>> {
        let h = self.layers[0].cols;
        if h == 0 || !xw.len().is_multiple_of(h) {
            return Err(ModelError::DimensionMismatch {
                what: "first-layer product (a multiple of the hidden width)".into(),
                expected: h,
                got: xw.len(),
            });
        }
        self.bind_product(xw.len() / h, Cow::Borrowed(xw), pairs, target)
    }

    fn bind_product<'a>(
        &'a self,
        n: usize,
        xw: Cow<'a, [f32]>,
        pairs: &[(u32, u32)],
        target: usize,
    ) -> Result<BoundEdgeWeightGcn<'a>> {
        if target >= n {
            return Err(ModelError::InvalidInput(format!(
                "target {target} outside the {n} nodes"
            )));
        }
        let m = Messages::new(n, pairs)?;
        // Hop distance from the target over every pair (capped at 3): the target's output reads
        // layer 3 at the target, layer 2 within 1 hop, layer 1 within 2 hops; nothing else is
        // computed. (Every pair counts, a weight-0 one too: its gradient reads both ends.)
        let mut adj = vec![Vec::new(); n];
        for &(u, w) in pairs {
            adj[u as usize].push(w as usize);
            adj[w as usize].push(u as usize);
        }
        let mut hop = vec![3u8; n];
        hop[target] = 0;
        let mut frontier = vec![target];
        for h in 1..3u8 {
            let mut next = Vec::new();
            for &u in &frontier {
                for &w in &adj[u] {
                    if hop[w] == 3 {
                        hop[w] = h;
                        next.push(w);
                    }
                }
            }
            frontier = next;
        }
        let into_target = (0..m.dst.len() as u32)
            .filter(|&k| m.dst[k as usize] as usize == target)
            .collect();
        Ok(BoundEdgeWeightGcn {
            gcn: self,
            n,
            target,
            src: m.src,
            dst: m.dst,
            within2: (0..n as u32).filter(|&i| hop[i as usize] <= 2).collect(),
            into_target,
            hop,
            xw,
        })
    }
}

/// An [`EdgeWeightGcn`] bound to one neighbourhood ([`EdgeWeightGcn::bind`]).
#[derive(Debug, Clone)]
pub struct BoundEdgeWeightGcn<'a> {
    gcn: &'a EdgeWeightGcn,
    n: usize,
    target: usize,
    /// Message list of [`Messages::new`]: pair `e` is messages `2e` (u→w) and `2e + 1` (w→u),
    /// then one self loop per node.
    src: Vec<u32>,
    dst: Vec<u32>,
    /// Hop distance of every node from the target, capped at 3.
    hop: Vec<u8>,
    /// The nodes within 2 hops of the target, ascending (the rows of `H₁ W₂` its output reads).
    within2: Vec<u32>,
    /// The messages into the target (indices into `src`/`dst`): the only ones of the third layer
    /// that its output reads.
    into_target: Vec<u32>,
    xw: Cow<'a, [f32]>,
}

/// Everything the backward pass needs from the forward pass.
struct Tape {
    omega: Vec<f32>,
    inv: Vec<f32>,
    a: Vec<f32>,
    /// `P₂ = H₁ W₂` (the first layer's `X W₁` is bound; the third layer is taken at the target
    /// only, without `H₂ W₃`).
    p2: Vec<f32>,
    /// Pre-activations `Z₁`, `Z₂` (`[n, cols]`) and the target's `Z₃` (`[cols]`).
    z: [Vec<f32>; 3],
    logits: Vec<f32>,
}

impl BoundEdgeWeightGcn<'_> {
    /// `Σ_k a_k p_{s_k} → t_k + b` for the destinations within `max_hop` of the target (other
    /// rows hold only the bias).
    fn aggregate(&self, a: &[f32], p: &[f32], cols: usize, bias: &[f32], max_hop: u8) -> Vec<f32> {
        let mut z = vec![0.0f32; self.n * cols];
        for (k, &ak) in a.iter().enumerate() {
            let (s, t) = (self.src[k] as usize, self.dst[k] as usize);
            if self.hop[t] > max_hop {
                continue;
            }
            let (ps, zt) = (
                &p[s * cols..(s + 1) * cols],
                &mut z[t * cols..(t + 1) * cols],
            );
            for (o, &v) in zt.iter_mut().zip(ps) {
                *o += ak * v;
            }
        }
        for row in z.chunks_exact_mut(cols) {
            for (o, &b) in row.iter_mut().zip(bias) {
                *o += b;
            }
        }
        z
    }

    fn forward(&self, weights: &[f32]) -> Result<Tape> {
        let pairs = self.num_pairs();
        if weights.len() != pairs {
            return Err(ModelError::DimensionMismatch {
                what: "edge weights (one per pair)".into(),
                expected: pairs,
                got: weights.len(),
            });
        }
        let mut omega: Vec<f32> = weights.iter().flat_map(|&w| [w, w]).collect();
        omega.resize(self.src.len(), 1.0);
        let mut deg = vec![0.0f32; self.n];
        for (k, &w) in omega.iter().enumerate() {
            deg[self.dst[k] as usize] += w;
        }
        let inv: Vec<f32> = deg.iter().map(|&d| d.powf(-0.5)).collect();
        let a: Vec<f32> = omega
            .iter()
            .enumerate()
            .map(|(k, &w)| w * inv[self.src[k] as usize] * inv[self.dst[k] as usize])
            .collect();
        let [l1, l2, l3] = &self.gcn.layers;
        let z1 = self.aggregate(&a, &self.xw, l1.cols, &l1.b, 2);
        let h1: Vec<f32> = z1.iter().map(|&v| crate::ops::relu(v)).collect();
        let p2 = product(&h1, self.n, l2, Some(&self.within2));
        let z2 = self.aggregate(&a, &p2, l2.cols, &l2.b, 1);
        // The third layer at the target only, aggregated before the product:
        // `z₃ = (Σ_{t_k = t} a_k relu(z₂)_{s_k}) W₃ + b₃` (one row instead of `H₂ W₃` on every
        // node that messages the target: with a candidate pair per node, all of them).
        let mut agg = vec![0.0f32; l3.rows];
        for &k in &self.into_target {
            let (ak, s) = (a[k as usize], self.src[k as usize] as usize);
            for (o, &v) in agg.iter_mut().zip(&z2[s * l2.cols..(s + 1) * l2.cols]) {
                *o += ak * crate::ops::relu(v);
            }
        }
        let mut z3 = l3.b.clone();
        matmul_acc(&agg, &l3.w, l3.rows, l3.cols, &mut z3);
        // Logits of the target only.
        let t = self.target;
        let lin = &self.gcn.lin;
        let mut logits = lin.b.clone();
        let mut row0 = 0;
        let h2t: Vec<f32> = (z2[t * l2.cols..(t + 1) * l2.cols].iter())
            .map(|&v| crate::ops::relu(v))
            .collect();
        for (h, l) in [
            (&h1[t * l1.cols..(t + 1) * l1.cols], l1),
            (&h2t[..], l2),
            (&z3[..], l3),
        ] {
            let w = &lin.w[row0 * lin.cols..(row0 + l.cols) * lin.cols];
            matmul_acc(h, w, l.cols, lin.cols, &mut logits);
            row0 += l.cols;
        }
        Ok(Tape {
            omega,
            inv,
            a,
            p2,
            z: [z1, z2, z3],
            logits,
        })
    }

    /// The number of weighted pairs (the length of a weight vector).
    pub fn num_pairs(&self) -> usize {
        (self.src.len() - self.n) / 2
    }

    /// The target's class log-probabilities with pair weights `weights`.
    ///
    /// # Shapes
    /// - weights: `[pairs]`
    /// - output: `[C]`
    pub fn log_probs(&self, weights: &[f32]) -> Result<Vec<f32>> {
        Ok(log_softmax(&self.forward(weights)?.logits))
    }

    /// The target's log-probabilities and the gradient of a loss `L(log p)` with respect to the
    /// pair weights, given `dloss(log p) = ∂L/∂ log p`. With [`DegreeGradient::Detached`] the
    /// degrees are treated as constants (see [`WeightedEdges::with_weights`]).
    ///
    /// # Shapes
    /// - weights: `[pairs]`
    /// - output: (`[C]`, `[pairs]`)
    ///
    /// Panics if `weights` does not have one entry per pair (use [`Self::log_probs`] to check).
    ///
    /// [`WeightedEdges::with_weights`]: crate::kernels::tensors::WeightedEdges::with_weights
    pub fn log_probs_and_grad(
        &self,
        weights: &[f32],
        degree_gradient: DegreeGradient,
        dloss: impl FnOnce(&[f32]) -> Vec<f32>,
    ) -> (Vec<f32>, Vec<f32>) {
        let tape = self.forward(weights).expect("one weight per pair");
        let logp = log_softmax(&tape.logits);
        let g_logp = dloss(&logp);
        // log_softmax backward: g_o = g − softmax · Σ g.
        let total: f32 = g_logp.iter().sum();
        let g_o: Vec<f32> = g_logp
            .iter()
            .zip(&logp)
            .map(|(g, lp)| g - lp.exp() * total)
            .collect();
        let [l1, l2, l3] = &self.gcn.layers;
        let lin = &self.gcn.lin;
        let (n, t) = (self.n, self.target);
        // Gradients of H1 and H2 (`[n, cols]`, only the target's row non-zero at first) and of
        // the target's Z3 (`[cols]`), from the output layer.
        let mut gh1 = vec![0.0f32; n * l1.cols];
        let mut gh2 = vec![0.0f32; n * l2.cols];
        let mut gz3 = vec![0.0f32; l3.cols];
        let mut row0 = 0;
        for (gh, l) in [
            &mut gh1[t * l1.cols..(t + 1) * l1.cols],
            &mut gh2[t * l2.cols..(t + 1) * l2.cols],
            &mut gz3[..],
        ]
        .into_iter()
        .zip([l1, l2, l3])
        {
            for (j, g) in gh.iter_mut().enumerate() {
                let wr = &lin.w[(row0 + j) * lin.cols..(row0 + j + 1) * lin.cols];
                *g = wr.iter().zip(&g_o).map(|(w, g)| w * g).sum();
            }
            row0 += l.cols;
        }
        let mut g_a = vec![0.0f32; tape.a.len()];
        // Third layer (no ReLU), target only: with u = W₃ g_z₃ᵀ, ∂/∂a_k = u · h₂[s_k] and
        // g_H₂[s_k] += a_k u over the messages into the target.
        let mut u = vec![0.0f32; l3.rows];
        matmul_acc(&gz3, &l3.wt, l3.cols, l3.rows, &mut u);
        let (c2, z2) = (l2.cols, &tape.z[1]);
        for &k in &self.into_target {
            let (k, s) = (k as usize, self.src[k as usize] as usize);
            let zs = &z2[s * c2..(s + 1) * c2];
            g_a[k] += u
                .iter()
                .zip(zs)
                .map(|(a, &z)| a * crate::ops::relu(z))
                .sum::<f32>();
            let ak = tape.a[k];
            if ak != 0.0 {
                for (o, &v) in gh2[s * c2..(s + 1) * c2].iter_mut().zip(&u) {
                    *o += ak * v;
                }
            }
        }
        for layer in [1, 0] {
            let (gh, z, cols) = match layer {
                1 => (&gh2, &tape.z[1], l2.cols),
                _ => (&gh1, &tape.z[0], l1.cols),
            };
            // g_Z = g_H ⊙ relu'(Z), and which of its rows are non-zero.
            let gz: Vec<f32> = (gh.iter().zip(z))
                .map(|(g, &z)| if z > 0.0 { *g } else { 0.0 })
                .collect();
            let live: Vec<bool> = gz
                .chunks_exact(cols)
                .map(|r| r.iter().any(|&v| v != 0.0))
                .collect();
            let p: &[f32] = if layer == 1 { &tape.p2 } else { &self.xw };
            let mut g_p = vec![0.0f32; if layer > 0 { n * cols } else { 0 }];
            let mut touched = vec![false; if layer > 0 { n } else { 0 }];
            for (k, ga) in g_a.iter_mut().enumerate() {
                let (s, d) = (self.src[k] as usize, self.dst[k] as usize);
                if !live[d] {
                    continue;
                }
                let gzt = &gz[d * cols..(d + 1) * cols];
                *ga += gzt
                    .iter()
                    .zip(&p[s * cols..(s + 1) * cols])
                    .map(|(a, b)| a * b)
                    .sum::<f32>();
                let ak = tape.a[k];
                if layer > 0 && ak != 0.0 {
                    touched[s] = true;
                    for (o, &v) in g_p[s * cols..(s + 1) * cols].iter_mut().zip(gzt) {
                        *o += ak * v;
                    }
                }
            }
            // g_H₁ += g_P₂ W₂ᵀ (through the stored transpose) on the rows where g_P₂ is
            // non-zero: the sources of weighted messages into rows where g_Z₂ is.
            if layer == 1 {
                let rows: Vec<u32> = (0..n as u32).filter(|&i| touched[i as usize]).collect();
                matmul_acc_at(&g_p, &l2.wt, l2.cols, l2.rows, &rows, &mut gh1);
            }
        }
        // a_k = ω_k inv_s inv_t.
        let mut g_omega = vec![0.0f32; tape.a.len()];
        let mut g_inv = vec![0.0f32; n];
        for (k, (go, &ga)) in g_omega.iter_mut().zip(&g_a).enumerate() {
            let (s, d) = (self.src[k] as usize, self.dst[k] as usize);
            *go = ga * tape.inv[s] * tape.inv[d];
            if degree_gradient == DegreeGradient::Through {
                g_inv[s] += ga * tape.omega[k] * tape.inv[d];
                g_inv[d] += ga * tape.omega[k] * tape.inv[s];
            }
        }
        if degree_gradient == DegreeGradient::Through {
            // inv = d̃^{-1/2} → ∂inv/∂d̃ = −½ inv³; d̃_t = Σ_{t_k = t} ω_k.
            for (go, &d) in g_omega.iter_mut().zip(&self.dst) {
                let d = d as usize;
                *go += g_inv[d] * -0.5 * tape.inv[d].powi(3);
            }
        }
        let pairs = weights.len();
        let grad = (0..pairs)
            .map(|e| g_omega[2 * e] + g_omega[2 * e + 1])
            .collect();
        (logp, grad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GcnConfig;
    use crate::kernels::tensors::{WeightedEdges, matrix, to_vec};
    use crate::testing::test_device;
    use burn::module::Module;
    use burn::tensor::{Tensor, TensorData};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Host gradients equal Burn's autodiff through `Gcn::forward_weighted`, for random graphs,
    /// weights (some 0), losses and both degree modes.
    #[test]
    fn gradients_match_burn_autodiff() {
        let d = test_device().unwrap();
        let ad = d.clone().autodiff();
        let mut rng = StdRng::seed_from_u64(3);
        // Under CubeCL's CPU runtime two trials: each input width, three class counts.
        for trial in crate::testing::sweep(&[0, 1, 2, 3, 4, 5], &[1, 4]) {
            let n = 6 + trial * 3;
            let (din, c) = (3 + trial % 2, 2 + trial % 3);
            let model = GcnConfig::new(din, c)
                .with_hidden(5 + trial)
                .with_init_seed(trial as u64)
                .init(&d);
            let mut pairs = Vec::new();
            for u in 0..n as u32 {
                for w in u + 1..n as u32 {
                    if rng.random_bool(0.35) {
                        pairs.push((u, w));
                    }
                }
            }
            let target = trial % n;
            // Every pair (target, v) a candidate, as the estimated state binds them, a third of
            // the weights exactly 0 (absent edges: their gradient reads both ends).
            for v in 0..n as u32 {
                let key = (v.min(target as u32), v.max(target as u32));
                if v != target as u32 && !pairs.contains(&key) {
                    pairs.push(key);
                }
            }
            let x: Vec<f32> = (0..n * din).map(|_| rng.random_range(-1.0..1.0)).collect();
            let weights: Vec<f32> = (pairs.iter())
                .map(|_| match rng.random_bool(0.3) {
                    true => 0.0,
                    false => rng.random_range(0.05..1.0),
                })
                .collect();
            let coef: Vec<f32> = (0..c).map(|_| rng.random_range(-1.0..1.0)).collect();
            let host = EdgeWeightGcn::from_gcn(&model).unwrap();
            let feats = Features::new(n, din, x.clone()).unwrap();
            let bound = host.bind(&feats, &pairs, target).unwrap();
            for degree_gradient in [DegreeGradient::Detached, DegreeGradient::Through] {
                let (lp, g) = bound.log_probs_and_grad(&weights, degree_gradient, |_| coef.clone());
                // Burn: L = Σ_c coef_c log p_c(target).
                let m = model.clone().to_device(&ad);
                let e = WeightedEdges::new(n, &pairs, &ad).unwrap();
                let w =
                    Tensor::<1>::from_data(TensorData::new(weights.clone(), [pairs.len()]), &ad)
                        .require_grad();
                let out =
                    m.forward_weighted(matrix(&x, n, din, &ad), &e, w.clone(), degree_gradient);
                let row = out.slice([target..target + 1, 0..c]);
                let want_lp = to_vec(row.clone());
                let k = Tensor::<2>::from_data(TensorData::new(coef.clone(), [1, c]), &ad);
                let grads = (row * k).sum().backward();
                let want = to_vec(w.grad(&grads).unwrap().unsqueeze_dim(1));
                for (a, b) in lp.iter().zip(&want_lp) {
                    let tol = crate::testing::float_tolerance(1e-5);
                    assert!((a - b).abs() < tol, "log p {lp:?} vs {want_lp:?}");
                }
                let scale = want.iter().fold(1e-3f32, |m, v| m.max(v.abs()));
                for (i, (a, b)) in g.iter().zip(&want).enumerate() {
                    assert!(
                        (a - b).abs() <= crate::testing::float_tolerance(1e-4) * scale,
                        "trial {trial} degrees {degree_gradient:?} pair {i}: {a} vs {b}"
                    );
                }
            }
        }
    }

    /// On a path the target's output depends on edges within 3 hops only: the restricted
    /// forward pass gives the full pass's output, and the farther edges get exactly zero.
    #[test]
    fn far_edges_get_no_gradient_and_the_output_is_unchanged() {
        let d = test_device().unwrap();
        let model = GcnConfig::new(2, 3).with_init_seed(11).init(&d);
        let host = EdgeWeightGcn::from_gcn(&model).unwrap();
        let pairs: Vec<(u32, u32)> = (0..7).map(|i| (i, i + 1)).collect();
        let x: Vec<f32> = (0..16).map(|i| (i as f32 * 0.37).sin()).collect();
        let feats = Features::new(8, 2, x.clone()).unwrap();
        let w = vec![0.8f32; 7];
        let (lp, g) = host.bind(&feats, &pairs, 0).unwrap().log_probs_and_grad(
            &w,
            DegreeGradient::Through,
            |_| vec![1.0, -1.0, 0.5],
        );
        // The full (Burn) weighted forward pass over all 8 nodes.
        let e = WeightedEdges::new(8, &pairs, &d).unwrap();
        let wt = Tensor::<1>::from_data(TensorData::new(w.clone(), [7]), &d);
        let full =
            to_vec(model.forward_weighted(matrix(&x, 8, 2, &d), &e, wt, DegreeGradient::Through));
        for (a, b) in lp.iter().zip(&full[..3]) {
            let tol = crate::testing::float_tolerance(1e-5);
            assert!((a - b).abs() < tol, "{lp:?} vs {:?}", &full[..3]);
        }
        // Edges (0,1), (1,2), (2,3) are within 3 hops of node 0; (3,4) feeds only the degree
        // of node 3 (which normalises a message into node 2): its gradient is non-zero too.
        assert!(g[..4].iter().all(|v| *v != 0.0), "{g:?}");
        assert!(g[4..].iter().all(|v| *v == 0.0), "{g:?}");
    }

    #[test]
    fn bad_inputs_are_errors() {
        let d = test_device().unwrap();
        let host = EdgeWeightGcn::from_gcn(&GcnConfig::new(2, 2).init(&d)).unwrap();
        let x = Features::constant(3, 2, 1.0);
        assert!(
            host.bind(&Features::constant(3, 4, 1.0), &[(0, 1)], 0)
                .is_err()
        );
        assert!(host.bind(&x, &[(0, 5)], 0).is_err());
        assert!(host.bind(&x, &[(0, 1)], 3).is_err());
        let b = host.bind(&x, &[(0, 1)], 0).unwrap();
        assert!(b.log_probs(&[1.0, 1.0]).is_err());
        assert_eq!(b.log_probs(&[1.0]).unwrap().len(), 2);
        // A first-layer product of another width, a target outside its rows.
        assert!(host.bind_first_layer(&[0.0; 7], &[(0, 1)], 0).is_err());
        let xw = host.first_layer(&x).unwrap();
        assert!(host.bind_first_layer(&xw, &[(0, 1)], 3).is_err());
    }

    /// Binding the first layer's product once gives exactly what binding the features does.
    #[test]
    fn the_bound_first_layer_is_the_features_product() {
        let d = test_device().unwrap();
        let host =
            EdgeWeightGcn::from_gcn(&GcnConfig::new(2, 3).with_init_seed(5).init(&d)).unwrap();
        //  0 ─ 1 ─ 2 ─ 3, candidate (0, 3)
        let pairs = [(0, 1), (1, 2), (2, 3), (0, 3)];
        let x = Features::new(4, 2, (0..8).map(|i| (i as f32 * 0.7).cos()).collect()).unwrap();
        let w = [1.0, 1.0, 0.5, 0.0];
        let coef = |_: &[f32]| vec![1.0, 0.0, -1.0];
        let through = DegreeGradient::Through;
        let want = host
            .bind(&x, &pairs, 0)
            .unwrap()
            .log_probs_and_grad(&w, through, coef);
        let xw = host.first_layer(&x).unwrap();
        let bound = host.bind_first_layer(&xw, &pairs, 0).unwrap();
        assert_eq!(bound.num_pairs(), 4);
        assert_eq!(bound.log_probs_and_grad(&w, through, coef), want);
    }
}
