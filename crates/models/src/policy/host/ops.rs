//! The dense building blocks of the policy kernel: LeakyReLU, dot products, the attention's
//! weighted sums and the log-softmax. The matrix products of the forward and backward passes
//! (`x W`, `xᵀ d`, `d Wᵀ`) are [`crate::linalg`]'s.

pub(super) fn lrelu(x: f32, slope: f32) -> f32 {
    if x >= 0.0 { x } else { slope * x }
}

pub(super) fn lrelu_grad(x: f32, slope: f32) -> f32 {
    if x >= 0.0 { 1.0 } else { slope }
}

/// Dot product with eight independent partial sums (vectorises; the summation order differs
/// from a sequential loop by rounding only).
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
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

/// `out += Σ_m weight[m] · h[src[m], :]` (rows of width `M`), accumulated in registers.
pub(super) fn weighted_sum_fixed<const M: usize>(
    weight: &[f32],
    src: &[u32],
    h: &[f32],
    out: &mut [f32],
) {
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

pub use crate::ops::log_softmax;
