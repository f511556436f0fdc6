//! The host linear algebra of this crate: one family of dense matrix products and one sparse
//! adjacency (`Adjacency`), shared by the host GCN (whole-graph, receptive-field and
//! incremental passes, and the edge-weight gradients), the PyG layers and the policy kernel.
//!
//! # Conventions
//!
//! Every matrix is a row-major `&[f32]`; the product functions take the left operand first, then
//! the right one, then the inner width `k`, then the output width `m`, then the output:
//!
//! | function | computes | shapes |
//! |---|---|---|
//! | `matmul_acc` | `out += a · w` | `a [n, k]`, `w [k, m]`, `out [n, m]` |
//! | `matmul_acc_at` | `out[v] += a[v] · w` for listed rows `v` | as `matmul_acc` |
//! | `matmul_tn_acc` | `dw += aᵀ · d` | `a [n, k]`, `d [n, m]`, `dw [k, m]` |
//! | `matmul_tn_acc_rows` | `acc += aᵀ · d`, continued in place | as `matmul_tn_acc` |
//! | `matmul_nt_acc` | `dx += d · wᵀ` | `d [n, m]`, `w [k, m]`, `dx [n, k]` |
//!
//! # Summation order
//!
//! Each output entry of `matmul_acc` and `matmul_tn_acc` is summed from zero over the inner
//! index in ascending order, then added to the output once; the register-held widths (8 and 16
//! columns, and the register tiles of multiples of `LANES`) and the general loop give the same
//! bits. Zero entries of the left operand are skipped, which changes no bit while the right
//! operand is finite. Call sites whose tests compare two paths bit for bit (the GCN's incremental
//! pass against its whole-graph pass, the policy's block-wise state against a whole one) rely on
//! this.

mod adjacency;

pub use adjacency::Adjacency;

/// Widths a register tile works on (one SSE register of `f32`); the host GCN pads its widths to
/// a multiple of this.
pub(crate) const LANES: usize = 4;
/// Rows per register tile of [`matmul_acc`]'s tiled path.
const MR: usize = 4;

/// `out += a · w`: `out[i, j] += Σ_p a[i, p] w[p, j]`, each sum taken from zero over `p = 0..k`
/// in order, then added once.
///
/// Widths 16 and 8 keep an output row in registers; other multiples of [`LANES`] are
/// register-tiled (`MR` rows × 8 or 4 columns); any other width goes through one scratch row.
///
/// # Shapes
/// - a: `[n, k]` (rows beyond `out`'s, and `out`'s beyond `a`'s, are left out)
/// - w: `[k, m]`
/// - out: `[n, m]`
pub(crate) fn matmul_acc(a: &[f32], w: &[f32], k: usize, m: usize, out: &mut [f32]) {
    if k == 0 || m == 0 {
        return;
    }
    debug_assert!(w.len() >= k * m && a.len() / k >= out.len() / m);
    let rows = (out.len() / m).min(a.len() / k);
    let (a, out) = (&a[..rows * k], &mut out[..rows * m]);
    match m {
        16 => matmul_acc_fixed::<16>(a, w, k, out),
        8 => matmul_acc_fixed::<8>(a, w, k, out),
        _ if m.is_multiple_of(LANES) => matmul_acc_tiled(a, w, k, m, out),
        _ => {
            // A scratch row on the stack for the narrow widths (a classifier's few classes).
            let (mut stack, mut heap) = ([0.0f32; 32], Vec::new());
            let acc = if m <= stack.len() {
                &mut stack[..m]
            } else {
                heap.resize(m, 0.0f32);
                &mut heap[..]
            };
            for (ar, or) in a.chunks_exact(k).zip(out.chunks_exact_mut(m)) {
                acc.fill(0.0);
                for (&av, wr) in ar.iter().zip(w.chunks_exact(m)) {
                    if av != 0.0 {
                        for (s, &wv) in acc.iter_mut().zip(wr) {
                            *s += av * wv;
                        }
                    }
                }
                for (o, &s) in or.iter_mut().zip(&*acc) {
                    *o += s;
                }
            }
        }
    }
}

/// [`matmul_acc`] for a width known at compile time: each output row is accumulated in
/// registers over the whole of `k`, then added once.
fn matmul_acc_fixed<const M: usize>(a: &[f32], w: &[f32], k: usize, out: &mut [f32]) {
    for (ar, or) in a.chunks_exact(k).zip(out.chunks_exact_mut(M)) {
        let mut acc = [0.0f32; M];
        for (&av, wr) in ar.iter().zip(w.chunks_exact(M)) {
            if av != 0.0 {
                for j in 0..M {
                    acc[j] += av * wr[j];
                }
            }
        }
        for j in 0..M {
            or[j] += acc[j];
        }
    }
}

/// [`matmul_acc`] for `m` a multiple of [`LANES`], register-tiled: `MR` rows of `a` are packed
/// column by column, then each `MR × C` block of `out` (`C` = 8 columns, or 4 for the last block
/// when `m ≡ 4 mod 8`) is accumulated in a local array over the whole of `k` (in order
/// `p = 0..k`) and added to `out`; the compiler keeps the block in vector registers.
fn matmul_acc_tiled(a: &[f32], w: &[f32], k: usize, m: usize, out: &mut [f32]) {
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

/// `out[v] += a[v] · w` for the rows `v` in `rows` (each once), with [`matmul_acc`]'s per-row
/// arithmetic; the other rows of `out` are left as they are. The listed rows are gathered first,
/// so that the register tiles see whole blocks of rows.
///
/// # Shapes
/// - a: `[n, k]`; w: `[k, m]`; out: `[n, m]`; rows: `[r]`, each `< n`
pub(crate) fn matmul_acc_at(
    a: &[f32],
    w: &[f32],
    k: usize,
    m: usize,
    rows: &[u32],
    out: &mut [f32],
) {
    if k == 0 || m == 0 {
        return;
    }
    let mut g = Vec::with_capacity(rows.len() * k);
    for &v in rows {
        g.extend_from_slice(&a[v as usize * k..(v as usize + 1) * k]);
    }
    let mut prod = vec![0.0f32; rows.len() * m];
    matmul_acc(&g, w, k, m, &mut prod);
    for (&v, r) in rows.iter().zip(prod.chunks_exact(m)) {
        for (o, &p) in out[v as usize * m..(v as usize + 1) * m].iter_mut().zip(r) {
            *o += p;
        }
    }
}

/// `dw += aᵀ · d`: `dw[p, j] += Σ_i a[i, p] d[i, j]`, each sum taken from zero over the rows
/// `i` in order, then added once.
///
/// # Shapes
/// - a: `[n, k]`; d: `[n, m]`; dw: `[k, m]`
pub(crate) fn matmul_tn_acc(a: &[f32], d: &[f32], k: usize, m: usize, dw: &mut [f32]) {
    if k == 0 || m == 0 {
        return;
    }
    if m == 16 {
        return matmul_tn_acc_fixed::<16>(a, d, k, dw);
    }
    let mut acc = vec![0.0f32; k * m];
    matmul_tn_acc_rows(a, d, k, m, &mut acc);
    for (g, s) in dw.iter_mut().zip(acc) {
        *g += s;
    }
}

/// [`matmul_tn_acc`] for a width known at compile time: one row of `dw` at a time, accumulated
/// in registers over all `n` rows.
fn matmul_tn_acc_fixed<const M: usize>(a: &[f32], d: &[f32], k: usize, dw: &mut [f32]) {
    for (kk, dwr) in dw.chunks_exact_mut(M).enumerate().take(k) {
        let mut acc = [0.0f32; M];
        for (ar, dr) in a.chunks_exact(k).zip(d.chunks_exact(M)) {
            let av = ar[kk];
            if av != 0.0 {
                for j in 0..M {
                    acc[j] += av * dr[j];
                }
            }
        }
        for j in 0..M {
            dwr[j] += acc[j];
        }
    }
}

/// `acc += aᵀ · d` continued in place: each entry of `acc` goes on summing over the rows of
/// this block in order (skipping zeros of `a`), so that blocks of rows taken in order, from a
/// zero `acc` that is then added to the gradient, give [`matmul_tn_acc`] over all the rows bit
/// for bit.
///
/// # Shapes
/// - a: `[n, k]`; d: `[n, m]`; acc: `[k, m]`
pub(crate) fn matmul_tn_acc_rows(a: &[f32], d: &[f32], k: usize, m: usize, acc: &mut [f32]) {
    if k == 0 || m == 0 {
        return;
    }
    if m == 16 {
        return matmul_tn_acc_rows_fixed::<16>(a, d, k, acc);
    }
    for (ar, dr) in a.chunks_exact(k).zip(d.chunks_exact(m)) {
        for (&av, accr) in ar.iter().zip(acc.chunks_exact_mut(m)) {
            if av != 0.0 {
                for (o, &dv) in accr.iter_mut().zip(dr) {
                    *o += av * dv;
                }
            }
        }
    }
}

/// [`matmul_tn_acc_rows`] for a width known at compile time: each row of `acc` is carried in
/// registers over the block's rows.
fn matmul_tn_acc_rows_fixed<const M: usize>(a: &[f32], d: &[f32], k: usize, acc: &mut [f32]) {
    for (kk, ar) in acc.chunks_exact_mut(M).enumerate().take(k) {
        let mut s = [0.0f32; M];
        s.copy_from_slice(ar);
        for (xr, dr) in a.chunks_exact(k).zip(d.chunks_exact(M)) {
            let av = xr[kk];
            if av != 0.0 {
                for j in 0..M {
                    s[j] += av * dr[j];
                }
            }
        }
        ar.copy_from_slice(&s);
    }
}

/// `dx += d · wᵀ`, through an explicit transpose of `w` and [`matmul_acc`] (so that the inner
/// loop runs over `dx`'s row and vectorises). A caller that applies the same `w` many times
/// keeps [`transpose`]`(w)` and calls [`matmul_acc`] on it: the same arithmetic.
///
/// # Shapes
/// - d: `[n, m]`; w: `[k, m]`; dx: `[n, k]`
pub(crate) fn matmul_nt_acc(d: &[f32], w: &[f32], k: usize, m: usize, dx: &mut [f32]) {
    matmul_acc(d, &transpose(w, k, m), m, k, dx);
}

/// The transpose of a row-major `[rows, cols]` matrix (`[cols, rows]`).
///
/// # Shapes
/// - w: `[rows, cols]`; output: `[cols, rows]`
pub(crate) fn transpose(w: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0; rows * cols];
    for (r, row) in w.chunks_exact(cols.max(1)).enumerate().take(rows) {
        for (c, &v) in row.iter().enumerate() {
            t[c * rows + r] = v;
        }
    }
    t
}

/// `y += a · x`.
///
/// # Shapes
/// - y, x: `[f]`
pub(crate) fn axpy(y: &mut [f32], a: f32, x: &[f32]) {
    for (o, &v) in y.iter_mut().zip(x) {
        *o += a * v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// `a [2, 3]`, `w [3, 2]`.
    const A: [f32; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    const W: [f32; 6] = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];

    #[test]
    fn matmul_acc_small_product() {
        // [[1 2 3] [4 5 6]] · [[7 8] [9 10] [11 12]] = [[58 64] [139 154]], added to 1.
        let mut out = [1.0; 4];
        matmul_acc(&A, &W, 3, 2, &mut out);
        assert_eq!(out, [59.0, 65.0, 140.0, 155.0]);
        // Empty inner width: nothing is added.
        matmul_acc(&[], &[], 0, 2, &mut out);
        assert_eq!(out, [59.0, 65.0, 140.0, 155.0]);
    }

    #[test]
    fn matmul_acc_at_adds_to_the_listed_rows_only() {
        // a [3, 3]: rows 0 and 2 are A's rows.
        let a = [1.0, 2.0, 3.0, 7.0, 7.0, 7.0, 4.0, 5.0, 6.0];
        let mut out = [-1.0; 6];
        matmul_acc_at(&a, &W, 3, 2, &[2, 0], &mut out);
        assert_eq!(out, [57.0, 63.0, -1.0, -1.0, 138.0, 153.0]);
    }

    #[test]
    fn matmul_tn_acc_small_product() {
        // aᵀ [3, 2] · d [2, 2] with d = [[1 0] [0 2]]: [[1 8] [2 10] [3 12]], added to 0.5.
        let d = [1.0, 0.0, 0.0, 2.0];
        let mut dw = [0.5; 6];
        matmul_tn_acc(&A, &d, 3, 2, &mut dw);
        assert_eq!(dw, [1.5, 8.5, 2.5, 10.5, 3.5, 12.5]);
        let mut acc = [0.0; 6];
        matmul_tn_acc_rows(&A[..3], &d[..2], 3, 2, &mut acc);
        matmul_tn_acc_rows(&A[3..], &d[2..], 3, 2, &mut acc);
        assert_eq!(acc, [1.0, 8.0, 2.0, 10.0, 3.0, 12.0]);
    }

    #[test]
    fn matmul_nt_acc_and_transpose_small_product() {
        // d [2, 2] · wᵀ with w [3, 2] = W: [[7 9 11] [16 20 24]] for d = [[1 0] [0 2]].
        assert_eq!(transpose(&W, 3, 2), vec![7.0, 9.0, 11.0, 8.0, 10.0, 12.0]);
        let d = [1.0, 0.0, 0.0, 2.0];
        let mut dx = [0.0; 6];
        matmul_nt_acc(&d, &W, 3, 2, &mut dx);
        assert_eq!(dx, [7.0, 9.0, 11.0, 16.0, 20.0, 24.0]);
    }

    #[test]
    fn axpy_small() {
        let mut y = [1.0, 2.0];
        axpy(&mut y, 2.0, &[3.0, -1.0]);
        assert_eq!(y, [7.0, 0.0]);
    }

    /// `base + a · w` (`[n, k]` by `[k, m]`), each entry of the product summed from zero over
    /// `p` in order, then added.
    fn naive_acc(base: &[f32], a: &[f32], w: &[f32], n: usize, k: usize, m: usize) -> Vec<f32> {
        (0..n * m)
            .map(|e| base[e] + (0..k).fold(0.0f32, |s, p| s + a[e / m * k + p] * w[p * m + e % m]))
            .collect()
    }

    /// Every path (8 and 16 wide, tiled multiples of 4, other widths; with and without zeros in
    /// `a`) sums each entry from zero in order and adds it once: bit for bit the reference loop.
    #[test]
    fn every_path_sums_in_the_documented_order() {
        let mut rng = StdRng::seed_from_u64(11);
        for (n, k, m) in [
            (0, 3, 8),
            (1, 1, 4),
            (5, 3, 8),
            (9, 7, 20),
            (13, 0, 16),
            (6, 4, 72),
            (7, 30, 12),
            (6, 5, 16),
            (5, 6, 7),
            (3, 9, 1),
        ] {
            let a: Vec<f32> = (0..n * k)
                .map(|i| {
                    if i % 3 == 0 {
                        0.0
                    } else {
                        rng.random_range(-1.0..1.0)
                    }
                })
                .collect();
            let w: Vec<f32> = (0..k * m).map(|_| rng.random_range(-1.0..1.0)).collect();
            let base: Vec<f32> = (0..n * m).map(|_| rng.random_range(-1.0..1.0)).collect();
            let mut out = base.clone();
            matmul_acc(&a, &w, k, m, &mut out);
            assert_eq!(out, naive_acc(&base, &a, &w, n, k, m), "{n}×{k}×{m}");
            // aᵀ · d with d = `base` ([n, m]) into a [k, m] gradient.
            let g0: Vec<f32> = (0..k * m).map(|_| rng.random_range(-1.0..1.0)).collect();
            let mut g = g0.clone();
            matmul_tn_acc(&a, &base, k, m, &mut g);
            let at = transpose(&a, n, k);
            assert_eq!(g, naive_acc(&g0, &at, &base, k, n, m), "tn {n}×{k}×{m}");
        }
    }
}
