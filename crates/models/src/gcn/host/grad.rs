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
        check_features(x, self.layers[0].rows)?;
        let n = x.num_nodes();
        if target >= n {
            return Err(ModelError::InvalidInput(format!(
                "target {target} outside the {n} nodes"
            )));
        }
        let m = Messages::new(n, pairs)?;
        // Hop distance from the target over every pair (capped at 3): the target's output reads
        // layer 3 at the target, layer 2 within 1 hop, layer 1 within 2 hops; nothing else is
        // computed.
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
        Ok(BoundEdgeWeightGcn {
            gcn: self,
            n,
            target,
            src: m.src,
            dst: m.dst,
            within: [1, 2].map(|h| (0..n as u32).filter(|&i| hop[i as usize] <= h).collect()),
            hop,
            xw: product(x.as_slice(), n, &self.layers[0], None),
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
    /// The nodes within 1 and within 2 hops of the target, ascending.
    within: [Vec<u32>; 2],
    xw: Vec<f32>,
}

/// Everything the backward pass needs from the forward pass.
struct Tape {
    omega: Vec<f32>,
    inv: Vec<f32>,
    a: Vec<f32>,
    /// `P_l = H_{l-1} W_l` of each layer.
    p: [Vec<f32>; 3],
    /// Pre-activations `Z_l`.
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
        let pairs = (self.src.len() - self.n) / 2;
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
        let p2 = product(&h1, self.n, l2, Some(&self.within[1]));
        let z2 = self.aggregate(&a, &p2, l2.cols, &l2.b, 1);
        let h2: Vec<f32> = z2.iter().map(|&v| crate::ops::relu(v)).collect();
        let p3 = product(&h2, self.n, l3, Some(&self.within[0]));
        let z3 = self.aggregate(&a, &p3, l3.cols, &l3.b, 0);
        // Logits of the target only.
        let t = self.target;
        let lin = &self.gcn.lin;
        let mut logits = lin.b.clone();
        let mut row0 = 0;
        for (h, l) in [(&h1, l1), (&h2, l2), (&z3, l3)] {
            let w = &lin.w[row0 * lin.cols..(row0 + l.cols) * lin.cols];
            matmul_acc(
                &h[t * l.cols..(t + 1) * l.cols],
                w,
                l.cols,
                lin.cols,
                &mut logits,
            );
            row0 += l.cols;
        }
        Ok(Tape {
            omega,
            inv,
            a,
            p: [self.xw.clone(), p2, p3],
            z: [z1, z2, z3],
            logits,
        })
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
        // Gradients of H1, H2, H3 (only the target's row is non-zero at first).
        let mut g_h = [
            vec![0.0f32; n * l1.cols],
            vec![0.0f32; n * l2.cols],
            vec![0.0f32; n * l3.cols],
        ];
        let mut row0 = 0;
        for (gh, l) in g_h.iter_mut().zip([l1, l2, l3]) {
            for j in 0..l.cols {
                let wr = &lin.w[(row0 + j) * lin.cols..(row0 + j + 1) * lin.cols];
                gh[t * l.cols + j] = wr.iter().zip(&g_o).map(|(w, g)| w * g).sum();
            }
            row0 += l.cols;
        }
        let mut g_a = vec![0.0f32; tape.a.len()];
        let [gh1, gh2, gh3] = &mut g_h;
        for layer in (0..3).rev() {
            let l = &self.gcn.layers[layer];
            let cols = l.cols;
            // g_Z = g_H ⊙ relu'(Z) (no ReLU after the third layer).
            let gz: Vec<f32> = match layer {
                2 => gh3.clone(),
                1 => gh2
                    .iter()
                    .zip(&tape.z[1])
                    .map(|(g, &z)| if z > 0.0 { *g } else { 0.0 })
                    .collect(),
                _ => gh1
                    .iter()
                    .zip(&tape.z[0])
                    .map(|(g, &z)| if z > 0.0 { *g } else { 0.0 })
                    .collect(),
            };
            let p = &tape.p[layer];
            let mut g_p = vec![0.0f32; if layer > 0 { n * cols } else { 0 }];
            for (k, ga) in g_a.iter_mut().enumerate() {
                let (s, d) = (self.src[k] as usize, self.dst[k] as usize);
                let gzt = &gz[d * cols..(d + 1) * cols];
                if gzt.iter().all(|&v| v == 0.0) {
                    continue;
                }
                *ga += gzt
                    .iter()
                    .zip(&p[s * cols..(s + 1) * cols])
                    .map(|(a, b)| a * b)
                    .sum::<f32>();
                if layer > 0 {
                    let ak = tape.a[k];
                    for (o, &v) in g_p[s * cols..(s + 1) * cols].iter_mut().zip(gzt) {
                        *o += ak * v;
                    }
                }
            }
            // g_H += g_P · Wᵀ (through the stored transpose) on the rows where g_P can be
            // non-zero: the sources of messages into rows where g_Z is (layer 3: the target's
            // neighbours, within 1 hop; layer 2: within 2 hops).
            match layer {
                2 => matmul_acc_at(&g_p, &l3.wt, l3.cols, l3.rows, &self.within[0], gh2),
                1 => matmul_acc_at(&g_p, &l2.wt, l2.cols, l2.rows, &self.within[1], gh1),
                _ => {}
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
    /// weights, losses and both degree modes.
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
            let x: Vec<f32> = (0..n * din).map(|_| rng.random_range(-1.0..1.0)).collect();
            let weights: Vec<f32> = pairs.iter().map(|_| rng.random_range(0.05..1.0)).collect();
            let coef: Vec<f32> = (0..c).map(|_| rng.random_range(-1.0..1.0)).collect();
            let target = trial % n;
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
    }
}
