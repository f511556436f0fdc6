//! A single-head graph attention layer (GAT, Veličković et al.) on an edge list.

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::Tensor;
use burn::tensor::activation::leaky_relu;

use crate::kernels::tensors::{GraphTensors, dense, linear};

pub use crate::ops::ABSENT;

/// One attention head: `h = W x`, `e_ij = LeakyReLU_0.2(a_dst·h_i + a_src·h_j)` over the
/// neighbours `j` of `i` plus `i` itself, `α_ij = softmax_j(e_ij)`, `out_i = Σ_j α_ij h_j + b`.
///
/// Messages flow from `src = j` to `dst = i` (the layout of [`GraphTensors`], self loops
/// included), so the softmax is taken per destination node.
///
/// ```text
///   0 ─ 1       node 1 attends to {0, 1, 2}; nodes 0 and 2 to {0, 1} and {1, 2}
///       │
///       2
/// ```
#[derive(Module, Debug)]
pub struct GatConv {
    /// Shared linear map `W`, weight `[in, out]`, no bias.
    pub lin: Linear,
    /// Attention vector applied to the source (neighbour) `h_j`, shape `[out, 1]`.
    pub att_src: Param<Tensor<2>>,
    /// Attention vector applied to the destination `h_i`, shape `[out, 1]`.
    pub att_dst: Param<Tensor<2>>,
    /// Output bias, shape `[out]`.
    pub bias: Param<Tensor<1>>,
    /// Negative slope of the attention LeakyReLU (0.2 in GAT and PyG).
    pub attention_slope: f64,
}

impl GatConv {
    /// # Shapes
    /// - x: `[n, in]`
    /// - output: `[n, out]`
    pub fn forward(&self, x: Tensor<2>, g: &GraphTensors) -> Tensor<2> {
        self.forward_masked(x, g, None)
    }

    /// [`GatConv::forward`] with some messages absent (see [`GatConv::attend_masked`]).
    ///
    /// # Shapes
    /// - x: `[n, in]`; absent: `[E']`
    /// - output: `[n, out]`
    pub fn forward_masked(
        &self,
        x: Tensor<2>,
        g: &GraphTensors,
        absent: Option<&Tensor<1>>,
    ) -> Tensor<2> {
        let dev = x.device();
        let h = crate::timing::span("gat: linear map", &dev, || linear(&self.lin, x));
        self.attend_masked(h, g, absent)
    }

    /// The layer after its linear map: attention and aggregation of `h = W x` (for callers
    /// that computed `W x` in parts, e.g. [`Policy::embed_with_product`](crate::Policy::embed_with_product)).
    ///
    /// # Shapes
    /// - h: `[n, out]`
    /// - output: `[n, out]`
    pub fn attend(&self, h: Tensor<2>, g: &GraphTensors) -> Tensor<2> {
        self.attend_masked(h, g, None)
    }

    /// [`GatConv::attend`] with some messages absent: `absent[k]` is added to message `k`'s
    /// attention logit, `0.0` for a message that takes part and [`ABSENT`] for one that does
    /// not (its coefficient underflows to exactly 0, so sums over its destination are those of
    /// the graph without it, as long as the features are finite: exactly where the terms are
    /// added one by one, to float rounding where a kernel groups them). A batch whose
    /// edges change by a few per step can then stay on the device and toggle messages instead of
    /// being uploaded again.
    ///
    /// ```text
    ///   messages into 1:  0→1  2→1  1→1       absent [0, ABSENT, 0]:  1 attends to {0, 1}
    /// ```
    ///
    /// # Shapes
    /// - h: `[n, out]`; absent: `[E']` in `g`'s message order
    /// - output: `[n, out]`
    pub fn attend_masked(
        &self,
        h: Tensor<2>,
        g: &GraphTensors,
        absent: Option<&Tensor<1>>,
    ) -> Tensor<2> {
        use crate::timing::span;
        let dev = h.device();
        let (a_s, a_d) = span(
            "gat: attention terms (two [n, out] x [out, 1] products)",
            &dev,
            || {
                (
                    dense(h.clone(), self.att_src.val()),
                    dense(h.clone(), self.att_dst.val()),
                )
            },
        );
        // Outside autodiff on the CubeCL backends: logits, softmax and aggregation in one
        // kernel over the destination-sorted messages (`crate::kernels::fused::gat_attention`).
        if g.aggregation == crate::kernels::tensors::Aggregation::Segment
            && g.csr.in_message_order()
            && crate::kernels::fused::available(&dev)
        {
            let fused = span("gat: attention (fused kernel)", &dev, || {
                crate::kernels::fused::gat_attention(crate::kernels::fused::GatAttention {
                    ptr: g.csr.offsets(),
                    col: g.src.clone(),
                    a_src: a_s.clone(),
                    a_dst: a_d.clone(),
                    absent: absent.cloned(),
                    h: h.clone(),
                    bias: self.bias.val(),
                    slope: self.attention_slope as f32,
                })
            });
            if let Some(out) = fused {
                return out;
            }
        }
        let e = span("gat: per-message logits (gathers, LeakyReLU)", &dev, || {
            let e = leaky_relu(
                a_s.select(0, g.src.clone()) + a_d.select(0, g.dst.clone()),
                self.attention_slope,
            );
            match absent {
                Some(bias) => e + bias.clone().unsqueeze_dim(1),
                None => e,
            }
        });
        let alpha = span("gat: softmax over each node's messages", &dev, || {
            g.softmax(e)
        });
        span("gat: aggregation (CSR kernel) + bias", &dev, || {
            g.aggregate(alpha, h) + self.bias.val().unsqueeze_dim(0)
        })
    }

    /// Output width.
    pub fn out_dim(&self) -> usize {
        self.lin.weight.dims()[1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::tensors::{matrix, to_vec};
    use crate::testing::test_device;
    use burn::tensor::{Device, TensorData};

    fn p2(v: &[f32], r: usize, c: usize, d: &Device) -> Param<Tensor<2>> {
        Param::from_tensor(Tensor::from_data(TensorData::new(v.to_vec(), [r, c]), d))
    }

    /// Golden test against a dense f64 implementation written from the GAT equations (not from
    /// the edge-list code): path 0 ─ 1 ─ 2, 2 input and 2 output features.
    #[test]
    fn gat_layer_matches_dense_equations() {
        let d = test_device().unwrap();
        let w = [0.5f32, -1.0, 1.5, 0.25]; // [in=2, out=2]
        let a_src = [0.3f32, -0.7];
        let a_dst = [-0.2f32, 0.9];
        let b = [0.1f32, -0.1];
        let layer = GatConv {
            lin: Linear {
                weight: p2(&w, 2, 2, &d),
                bias: None,
            },
            att_src: p2(&a_src, 2, 1, &d),
            att_dst: p2(&a_dst, 2, 1, &d),
            bias: Param::from_tensor(Tensor::from_data(TensorData::new(b.to_vec(), [2]), &d)),
            attention_slope: 0.2,
        };
        let x = [1.0f32, 2.0, -1.0, 0.5, 0.0, -3.0];
        let g = GraphTensors::new(3, &[(0, 1), (1, 2)], &d).unwrap();
        let out = to_vec(layer.forward(matrix(&x, 3, 2, &d), &g));

        let nb: [&[usize]; 3] = [&[0, 1], &[0, 1, 2], &[1, 2]];
        let h: Vec<[f64; 2]> = x
            .chunks(2)
            .map(|r| {
                let (x0, x1) = (r[0] as f64, r[1] as f64);
                [
                    x0 * w[0] as f64 + x1 * w[2] as f64,
                    x0 * w[1] as f64 + x1 * w[3] as f64,
                ]
            })
            .collect();
        let dot = |v: [f64; 2], a: &[f32]| v[0] * a[0] as f64 + v[1] * a[1] as f64;
        let lrelu = |z: f64| if z > 0.0 { z } else { 0.2 * z };
        for i in 0..3 {
            let e: Vec<f64> = nb[i]
                .iter()
                .map(|&j| lrelu(dot(h[i], &a_dst) + dot(h[j], &a_src)))
                .collect();
            let z: f64 = e.iter().map(|v| v.exp()).sum();
            for o in 0..2 {
                let want: f64 = b[o] as f64
                    + nb[i]
                        .iter()
                        .zip(&e)
                        .map(|(&j, ej)| ej.exp() / z * h[j][o])
                        .sum::<f64>();
                assert!(
                    (out[i * 2 + o] as f64 - want).abs()
                        < crate::testing::float_tolerance(1e-6) as f64,
                    "node {i} feature {o}: {} vs {want}",
                    out[i * 2 + o]
                );
            }
        }
        // One value by hand: node 0, h_0 = [3.5, -0.5], h_1 = [0.25, 1.125];
        // e_00 = lrelu(-0.2*3.5 + 0.9*-0.5 + 0.3*3.5 - 0.7*-0.5) = lrelu(0.25) = 0.25
        // e_01 = lrelu(-1.15 + 0.3*0.25 - 0.7*1.125) = lrelu(-1.8625) = -0.3725
        let a00 = 0.25f64.exp() / (0.25f64.exp() + (-0.3725f64).exp());
        let want = 0.1 + a00 * 3.5 + (1.0 - a00) * 0.25;
        assert!((out[0] as f64 - want).abs() < crate::testing::float_tolerance(1e-6) as f64);
    }

    /// A message marked absent gives exactly the graph without it (CPU: each destination's
    /// messages summed in order; a GPU to float rounding), and toggling it back by adding
    /// `-ABSENT` restores the full graph's output exactly.
    #[test]
    fn absent_messages_equal_the_graph_without_them() {
        let d = test_device().unwrap();
        let layer = GatConv {
            lin: Linear {
                weight: p2(&[0.5, -1.0, 1.5, 0.25], 2, 2, &d),
                bias: None,
            },
            att_src: p2(&[0.3, -0.7], 2, 1, &d),
            att_dst: p2(&[-0.2, 0.9], 2, 1, &d),
            bias: Param::from_tensor(Tensor::from_data(
                TensorData::new(vec![0.1f32, -0.1], [2]),
                &d,
            )),
            attention_slope: 0.2,
        };
        //  0 ─ 1 ─ 2 ─ 3, 1 ─ 3: without (1, 3) its two messages are absent
        let full = [(0, 1), (1, 2), (2, 3), (1, 3)];
        let g = GraphTensors::new(4, &full, &d).unwrap();
        let without = GraphTensors::new(4, &full[..3], &d).unwrap();
        let (src, dst) = (
            g.src.to_data().iter::<i64>().collect::<Vec<_>>(),
            g.dst.to_data().iter::<i64>().collect::<Vec<_>>(),
        );
        let absent: Vec<f32> = src
            .iter()
            .zip(&dst)
            .map(|(&s, &t)| match (s.min(t), s.max(t)) {
                (1, 3) => ABSENT,
                _ => 0.0,
            })
            .collect();
        assert_eq!(absent.iter().filter(|&&a| a == ABSENT).count(), 2);
        let n = absent.len();
        let bias = Tensor::<1>::from_data(TensorData::new(absent, [n]), &d);
        let x = matrix(&[1.0, 2.0, -1.0, 0.5, 0.0, -3.0, 2.5, 1.5], 4, 2, &d);
        let masked = to_vec(layer.forward_masked(x.clone(), &g, Some(&bias)));
        assert_eq!(masked, to_vec(layer.forward(x.clone(), &without)));
        let at: Vec<u32> = (0..n)
            .filter(|&k| (src[k].min(dst[k]), src[k].max(dst[k])) == (1, 3))
            .map(|k| k as u32)
            .collect();
        let restored = bias.select_assign(
            0,
            crate::kernels::tensors::index_tensor(at, &d),
            Tensor::full([2], -ABSENT, &d),
            burn::tensor::IndexingUpdateOp::Add,
        );
        assert_eq!(
            to_vec(layer.forward_masked(x.clone(), &g, Some(&restored))),
            to_vec(layer.forward(x, &g))
        );
    }
}
