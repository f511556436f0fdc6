//! Row operations shared by the host kernels (the GCN's, its gradients', the policy's) and the
//! spmm kernels: the bottom floor, importing nothing of this crate.

/// The attention-logit offset of an absent message
/// ([`GatConv::attend_masked`](crate::GatConv::attend_masked)): `exp` of it minus any finite
/// logit is exactly 0 in f32, and adding `-ABSENT` restores a present message's offset to
/// exactly 0.
pub const ABSENT: f32 = -1e30;

/// Log-softmax of a score vector: `s − (max s + ln Σ exp(s − max s))`, the host policy's and
/// the host gradients' form.
///
/// ```
/// let lp = induce_models::ops::log_softmax(&[0.0, 0.0]);
/// assert_eq!(lp, vec![-std::f32::consts::LN_2; 2]);
/// ```
pub fn log_softmax(s: &[f32]) -> Vec<f32> {
    let mx = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let lse = mx + s.iter().map(|v| (v - mx).exp()).sum::<f32>().ln();
    s.iter().map(|v| v - lse).collect()
}

/// Burn's `log_softmax` on one row, in place and in Burn's order of operations: `s = z − max z`,
/// then `s − ln Σ exp s`. It rounds differently from [`log_softmax`] (the shift is applied
/// before the log-sum-exp is subtracted), which is why the host GCN, whose rows must equal
/// Burn's bit for bit where the parity tests compare them, keeps this form.
///
/// ```
/// let mut row = [0.0f32, 0.0];
/// induce_models::ops::log_softmax_in_place(&mut row);
/// assert_eq!(row, [-std::f32::consts::LN_2; 2]);
/// ```
pub fn log_softmax_in_place(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0f32;
    for v in row.iter_mut() {
        *v -= max;
        sum += v.exp();
    }
    let lse = sum.ln();
    for v in row.iter_mut() {
        *v -= lse;
    }
}
