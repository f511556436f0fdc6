//! The policy's backward pass: the gradient of a loss with respect to every parameter, given the
//! loss's gradient with respect to the candidates' scores ([`reinforce_score_grad`] for the
//! REINFORCE loss), through the scoring MLP (recomputed a chunk at a time) and the GAT stack, last
//! layer first.

use super::blocks::matmul_tn_acc_blocks;
use super::forward::CHUNK;
use super::ops::{dot, lrelu, lrelu_grad};
use super::{HostPolicy, LayerTrace, PolicyInput, Trace};
use crate::linalg::{matmul_acc, matmul_nt_acc, matmul_tn_acc, matmul_tn_acc_rows};

impl HostPolicy {
    /// The scoring MLP's backward pass given `dscores = ∂L/∂s`: adds the gradients of its
    /// parameters to `grads` and returns `(∂L/∂P, ∂L/∂Q)` (`[n, m]` each, the per-node
    /// projections of [`HostPolicy::mlp_scores`]). [`CHUNK`] candidates at a time, recomputing
    /// their hidden layers, with the same sums in the same order as a pass over materialised
    /// `[C, m]` layers (a test pins it bit for bit), in `O(n·m)` memory instead of `O(C·m)`.
    ///
    /// # Shapes
    /// - emb: `[n, hidden]` (the embeddings of `input`'s nodes); dscores: `[C]`
    /// - grads: `[num_params]`
    fn mlp_backward(
        &self,
        emb: &[f32],
        input: &PolicyInput<'_>,
        dscores: &[f32],
        grads: &mut [f32],
    ) -> (Vec<f32>, Vec<f32>) {
        let (n, u, w, flag) = (
            input.graph.num_nodes(),
            input.cand_u,
            input.cand_w,
            input.flag,
        );
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
            mlp.layer1(start, input, z1, a1);
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
    /// recomputed from the state (starting from `input.first` as
    /// [`HostPolicy::log_probs_cached`] does), so a rollout needs to keep only its states, graphs
    /// and candidates (on Amazon-Photo, about 2.5 MB a step instead of 20). The same gradient bit
    /// for bit.
    ///
    /// # Shapes
    /// - input: as given to [`HostPolicy::log_probs_cached`]
    /// - dscores: `[C]`
    /// - grads: `[num_params]`
    pub fn backward_recomputed(&self, input: &PolicyInput<'_>, dscores: &[f32], grads: &mut [f32]) {
        self.check_inputs(input);
        let (layers, emb, nan_mask) = self.embed(&input.x, input.first, input.graph);
        let trace = Trace {
            layers,
            emb,
            nan_mask,
            log_probs: Vec::new(),
        };
        self.backward_blocks(&trace, input, dscores, grads);
    }

    /// Backward pass: adds `∂L/∂θ` to `grads` given `dscores[k] = ∂L/∂s_k`, the gradient of a
    /// loss with respect to the candidates' unnormalised scores (see [`reinforce_score_grad`]),
    /// for the forward pass that produced `trace` ([`HostPolicy::forward`] or
    /// [`HostPolicy::forward_cached`]; a state given whole or in blocks, with or without its
    /// first-block product: the same gradients, bit for bit).
    ///
    /// # Shapes
    /// - input: as given to the forward pass (`input.first` is not read)
    /// - dscores: `[C]`
    /// - grads: `[num_params]`
    pub fn backward_blocks(
        &self,
        trace: &Trace,
        input: &PolicyInput<'_>,
        dscores: &[f32],
        grads: &mut [f32],
    ) {
        let (x, g) = (&input.x, input.graph);
        assert_eq!(grads.len(), self.params.len(), "one gradient per parameter");
        assert_eq!(
            dscores.len(),
            input.cand_u.len(),
            "one score gradient per candidate"
        );
        let n = g.num_nodes();
        let p = &self.params;
        let slope = self.activation_slope;
        let h = self.hidden();
        let l1 = self.mlp[0];
        let m = l1.out;
        let (dpu, dqw) = self.mlp_backward(&trace.emb, input, dscores, grads);
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
                batch_norm_backward(&mut dy, n, lt, &p[gamma..gamma + o], grads, (gamma, beta));
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
                    let j = g.sources()[mi] as usize;
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
                    let j = g.sources()[mi] as usize;
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

/// Backward of [`batch_norm`](super::forward::batch_norm): turns `dy` (w.r.t. the output) into
/// the gradient w.r.t. its input and accumulates the gradients of `γ` and `β`, whose parameters
/// sit at `g_at` and `b_at` of the flat vector.
///
/// # Shapes
/// - dy: `[n, o]`; gamma: `[o]`; grads: `[num_params]`
fn batch_norm_backward(
    dy: &mut [f32],
    n: usize,
    lt: &LayerTrace,
    gamma: &[f32],
    grads: &mut [f32],
    (g_at, b_at): (usize, usize),
) {
    let o = gamma.len();
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

/// `∂L/∂s` for one state of the listwise loss `L = −scale · (Σ_a w_a log Π(a) + η · H(Π))`
/// (`Π = softmax(s)`): the cross-entropy against a teacher's distribution over the candidates
/// when the weights `w` sum to 1 (imitation), REINFORCE's loss when one weight is the return:
/// `∂L/∂s_k = −scale · (w_k − p_k Σ_a w_a − η p_k (log p_k + H))`. Unlisted candidates weigh 0;
/// a candidate listed twice counts twice.
///
/// # Shapes
/// - log_probs: `[C]`; weights: `[(candidate, weight)]`, candidates `< C`
/// - output: `[C]`
///
/// ```
/// use induce_models::policy::host::listwise_score_grad;
/// // Two candidates at p = (0.5, 0.5), the teacher all on the first: (−0.5, +0.5).
/// let lp = [0.5f32.ln(), 0.5f32.ln()];
/// let d = listwise_score_grad(&lp, &[(0, 1.0)], 0.0, 1.0);
/// assert!((d[0] + 0.5).abs() < 1e-6 && (d[1] - 0.5).abs() < 1e-6);
/// ```
pub fn listwise_score_grad(
    log_probs: &[f32],
    weights: &[(usize, f32)],
    entropy_coef: f32,
    scale: f32,
) -> Vec<f32> {
    let entropy: f32 = -log_probs.iter().map(|&l| l.exp() * l).sum::<f32>();
    let total: f32 = weights.iter().map(|&(_, w)| w).sum();
    let mut d: Vec<f32> = log_probs
        .iter()
        .map(|&l| {
            let p = l.exp();
            -scale * (-p * total - entropy_coef * p * (l + entropy))
        })
        .collect();
    for &(a, w) in weights {
        d[a] -= scale * w;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyConfig;
    use crate::policy::host::{Adjacency, StateBlocks};
    use crate::testing::test_device;

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
    fn mlp_backward_reference(
        host: &HostPolicy,
        emb: &[f32],
        input: &PolicyInput<'_>,
        dscores: &[f32],
        grads: &mut [f32],
    ) -> (Vec<f32>, Vec<f32>) {
        let (n, u, w, flag) = (
            input.graph.num_nodes(),
            input.cand_u,
            input.cand_w,
            input.flag,
        );
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
    fn listwise_with_one_weight_is_reinforce() {
        let lp: Vec<f32> = [0.5f32, 0.3, 0.2].iter().map(|p| p.ln()).collect();
        let a = reinforce_score_grad(&lp, 1, 1.7, 0.1, 0.5);
        let b = listwise_score_grad(&lp, &[(1, 1.7)], 0.1, 0.5);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-6, "{a:?} {b:?}");
        }
        // The cross-entropy against q = (0.2, 0.8, 0) without entropy: p − q, scaled.
        let d = listwise_score_grad(&lp, &[(0, 0.2), (1, 0.8)], 0.0, 1.0);
        for (x, y) in d.iter().zip([0.3f32, -0.5, 0.2]) {
            assert!((x - y).abs() < 1e-6, "{d:?}");
        }
    }

    #[test]
    fn fused_mlp_equals_materialised_layers_bit_for_bit() {
        let dev = test_device().unwrap();
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
            // The MLP reads the candidates and the number of nodes only.
            let (g, x) = (
                Adjacency::with_self_loops(n, &[]).unwrap(),
                vec![0.0; n * 4],
            );
            let input = PolicyInput::new(StateBlocks::whole(&x, 4), &g, &u, &w, &flag);
            let (_, _, want) = mlp_forward_reference(&host, &emb, n, &u, &w, &flag);
            assert_eq!(host.mlp_scores(&emb, &input), want);
            let mut g_ref = vec![0.125; host.num_params()];
            let mut g_new = g_ref.clone();
            let r = mlp_backward_reference(&host, &emb, &input, &ds, &mut g_ref);
            let f = host.mlp_backward(&emb, &input, &ds, &mut g_new);
            assert_eq!(f, r, "hidden {hidden}, mlp {mlp}");
            assert_eq!(g_new, g_ref, "hidden {hidden}, mlp {mlp}");
        }
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
