//! The dense pieces of the host GCN, shared by the whole-graph pass, the receptive-field pass and
//! the incremental one: zero padding to whole SIMD lanes, the bias (and ReLU) of a layer and the
//! log-softmax of a row. The matrix products are [`crate::linalg`]'s.

use crate::linalg::LANES;

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
