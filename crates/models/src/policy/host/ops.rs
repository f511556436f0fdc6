//! The dense building blocks of the policy kernel: LeakyReLU, dot products, the matrix products
//! of the forward and backward passes (`x W`, `xᵀ d`, `d Wᵀ`, with fixed-width versions that keep
//! a row in registers) and the log-softmax.

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

/// `out[r, :] += x[r, :] · W` for a row-major `W` of shape `[k, m]`.
pub(super) fn matmul_acc(x: &[f32], w: &[f32], k: usize, m: usize, out: &mut [f32]) {
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

/// `acc[k, m] += xᵀ · d` (`x: [n, k]`, `d: [n, m]`) summed as [`matmul_tn_acc_fixed`] sums it
/// (each entry over the rows in order, skipping zeros of `x`) but into a separate accumulator
/// that later blocks of rows continue: blocks in order give the same sums as one call over all
/// the rows, once `acc` is added to the gradient.
pub(super) fn matmul_tn_acc_rows(x: &[f32], d: &[f32], k: usize, m: usize, acc: &mut [f32]) {
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
pub(super) fn matmul_tn_acc(x: &[f32], d: &[f32], k: usize, m: usize, dw: &mut [f32]) {
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
pub(super) fn matmul_nt_acc(d: &[f32], w: &[f32], k: usize, m: usize, dx: &mut [f32]) {
    let mut wt = vec![0.0; k * m];
    for (r, row) in w.chunks_exact(m).enumerate() {
        for (c, &v) in row.iter().enumerate() {
            wt[c * k + r] = v;
        }
    }
    matmul_acc(d, &wt, m, k, dx);
}

pub use crate::ops::log_softmax;
