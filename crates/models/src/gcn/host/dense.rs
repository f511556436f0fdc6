//! The dense pieces of the host GCN, shared by the whole-graph pass, the receptive-field pass and
//! the incremental one: zero padding to whole SIMD lanes, the register-tiled `out += a · w`, the
//! bias (and ReLU) of a layer and the log-softmax of a row.

/// Widths are padded to a multiple of this (one SSE register of `f32`).
pub(super) const LANES: usize = 4;
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

pub(crate) use crate::ops::log_softmax_in_place;

/// Adds the bias (and applies ReLU) to every `m`-wide row.
pub(super) fn bias_relu(h: &mut [f32], bias: &[f32], m: usize, relu: bool) {
    for row in h.chunks_exact_mut(m.max(1)) {
        for (o, &b) in row.iter_mut().zip(bias) {
            *o += b;
            if relu {
                *o = crate::ops::relu(*o);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

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
