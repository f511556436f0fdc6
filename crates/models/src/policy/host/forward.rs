//! The policy's forward pass: the GAT stack (attention, optional BatchNorm, LeakyReLU, NaN guard)
//! and the scoring MLP, candidates a chunk at a time, ending in the log-softmax over candidates.

use super::blocks::matmul_acc_blocks;
use super::ops::{dot, log_softmax, lrelu, weighted_sum_fixed};
use super::{
    Adjacency, FirstBlockProduct, HostPolicy, LayerTrace, PolicyInput, StateBlocks, Trace,
};
use crate::linalg::matmul_acc;

const BN_EPS: f32 = 1e-5;

/// The scoring MLP of a [`HostPolicy`] bound to one state's embeddings: its parameters as slices
/// and the per-node halves of its first layer, `P = X W1[:h]` and `Q = X W1[h:2h]` (`[n, m]`).
pub(super) struct MlpPass<'p> {
    pub(super) m: usize,
    pub(super) m2: usize,
    pub(super) slope: f32,
    wf: &'p [f32],
    b1: &'p [f32],
    pub(super) w2: &'p [f32],
    b2: &'p [f32],
    pub(super) w3: &'p [f32],
    pub(super) b3: f32,
    pu: Vec<f32>,
    qw: Vec<f32>,
}

impl MlpPass<'_> {
    /// The first hidden layer of the candidates `start..start + rows`: `z1 = P[u] + Q[w] +
    /// flag·w_f + b1` and `a1 = LeakyReLU(z1)` (`[rows, m]` each).
    pub(super) fn layer1(
        &self,
        start: usize,
        input: &PolicyInput<'_>,
        z1: &mut [f32],
        a1: &mut [f32],
    ) {
        let (u, w, flag) = (input.cand_u, input.cand_w, input.flag);
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
    pub(super) fn layer2(&self, a1: &[f32], z2: &mut [f32]) {
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
pub(super) const CHUNK: usize = 256;

impl HostPolicy {
    /// Forward pass: `log Π(a | S)` of every candidate `a = (u[k], w[k], flag[k])`, with the
    /// intermediate values the backward pass needs: [`HostPolicy::forward_cached`] on a state
    /// given whole (its backward pass is [`HostPolicy::backward_blocks`] on
    /// `PolicyInput::new(StateBlocks::whole(x, input_dim), g, u, w, flag)`).
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`, row-major (the per-node state)
    /// - u, w, flag: `[C]`
    /// - output: a [`Trace`] whose [`Trace::log_probs`] is `[C]`
    ///
    /// Panics if `x` or the candidate lists do not match the graph and each other.
    pub fn forward(&self, x: &[f32], g: &Adjacency, u: &[u32], w: &[u32], flag: &[f32]) -> Trace {
        assert_eq!(
            x.len(),
            g.num_nodes() * self.input_dim(),
            "state is [n, input_dim]"
        );
        let x = StateBlocks::whole(x, self.input_dim());
        self.forward_cached(&PolicyInput::new(x, g, u, w, flag))
    }

    /// The first GAT layer's product `x W` over the state's FIRST block alone (`[n, out]`):
    /// while the policy's parameters and that block stay the same (an episode's node features,
    /// [`StateLayout::Paper`](../../../induce_rl/enum.StateLayout.html)), every step's forward pass
    /// can start from it ([`HostPolicy::forward_cached`]) instead of re-reading the features.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]` in two blocks; output rows `[n, hidden]`
    pub fn first_block_product(&self, x: &StateBlocks<'_>) -> FirstBlockProduct {
        let s = self.gat[0];
        assert_eq!(x.width(), self.input_dim(), "state is [n, input_dim]");
        let only_first = x.first_only();
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

    /// Forward pass on a state given in two column blocks (see [`StateBlocks`]), starting from
    /// the first block's product when `input.first` has it ([`HostPolicy::first_block_product`]
    /// of the same parameters and first block): bit for bit the same result as
    /// [`HostPolicy::forward`] on the concatenated rows, with or without it.
    ///
    /// # Shapes
    /// - input: see [`PolicyInput`]
    /// - output: a [`Trace`] whose [`Trace::log_probs`] is `[C]`
    ///
    /// Panics if the state, `first` or the candidate lists do not match the graph and each other.
    pub fn forward_cached(&self, input: &PolicyInput<'_>) -> Trace {
        self.check_inputs(input);
        let (layers, emb, nan_mask) = self.embed(&input.x, input.first, input.graph);
        let scores = self.mlp_scores(&emb, input);
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
    /// - input: see [`PolicyInput`]
    /// - output: `[C]`
    ///
    /// Panics as [`HostPolicy::forward_cached`] does.
    pub fn log_probs_cached(&self, input: &PolicyInput<'_>) -> Vec<f32> {
        self.check_inputs(input);
        let (_, emb, _) = self.embed(&input.x, input.first, input.graph);
        log_softmax(&self.mlp_scores(&emb, input))
    }

    /// The GAT stack: each layer's trace, the node embeddings `[n, hidden]` (NaNs replaced when
    /// the policy does so) and where the NaNs were.
    pub(super) fn embed(
        &self,
        x: &StateBlocks<'_>,
        first: Option<&FirstBlockProduct>,
        g: &Adjacency,
    ) -> (Vec<LayerTrace>, Vec<f32>, Vec<bool>) {
        let n = g.num_nodes();
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
                    let e = lrelu(
                        a_dst[i] + a_src[g.sources()[m] as usize],
                        self.attention_slope,
                    );
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
                    weighted_sum_fixed::<16>(&alpha[range.clone()], &g.sources()[range], &h, yi);
                } else {
                    for m in range {
                        let hj = &h[g.sources()[m] as usize * o..(g.sources()[m] as usize + 1) * o];
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

    /// The scoring MLP's scores `[C]`, [`CHUNK`] candidates at a time:
    /// `z1 = P[u] + Q[w] + flag·w_f + b1` (with `P = X W1[:h]`, `Q = X W1[h:2h]` computed once per
    /// node), `z2 = a1 W2 + b2`, `s = a2 · w3 + b3`, `aᵢ = LeakyReLU(zᵢ)`; the hidden layers are
    /// never stored (the backward pass recomputes them, [`HostPolicy::mlp_backward`]).
    ///
    /// # Shapes
    /// - emb: `[n, hidden]` (the embeddings of `input`'s nodes); output: `[C]`
    pub(super) fn mlp_scores(&self, emb: &[f32], input: &PolicyInput<'_>) -> Vec<f32> {
        let mlp = self.mlp_pass(emb, input.graph.num_nodes());
        let (m, m2) = (mlp.m, mlp.m2);
        let c = input.cand_u.len();
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
            mlp.layer1(start, input, z1, a1);
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
    pub(super) fn mlp_pass<'p>(&'p self, emb: &[f32], n: usize) -> MlpPass<'p> {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{EDGES, F, U, W, state};
    use super::*;
    use crate::PolicyConfig;
    use crate::kernels::tensors::{GraphTensors, matrix, to_vec};
    use crate::policy::CandidateTensors;
    use crate::testing::test_device;

    #[test]
    fn nan_embeddings_are_replaced_and_get_no_gradient() {
        let dev = test_device().unwrap();
        let policy = PolicyConfig::reference(4).with_init_seed(1).init(&dev);
        let host = HostPolicy::from_policy(&policy);
        let mut x = state(4);
        x[0] = f32::NAN; // node 0 is NaN; the NaN spreads to its neighbourhood
        let g = Adjacency::with_self_loops(6, &EDGES).unwrap();
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
        let lp =
            host.log_probs_cached(&PolicyInput::new(StateBlocks::whole(&x, 4), &g, &U, &W, &F));
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&lp),
            bits(trace.log_probs()),
            "inference path, NaNs included"
        );
    }
}
