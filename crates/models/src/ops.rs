//! The bottom floor, importing nothing of this crate: row operations shared by the host kernels
//! (the GCN's, its gradients', the policy's, the PyG models') and the spmm kernels, and the
//! uploads, downloads and scatters of Burn tensors that every layer above uses.

use burn::tensor::Device;
use burn::tensor::{IndexingUpdateOp, Int, Tensor, TensorData};

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

/// ReLU that keeps NaN, as Burn's does: a NaN weight or feature shows in the output (and is
/// reported) as on the Burn kernel, instead of being clamped away by `f32::max`. Written as
/// `x < 0 → 0` (-0.0 stays -0.0, equal to 0.0), which is one `maxps(0, x)` per lane on x86.
#[inline]
pub(crate) fn relu(x: f32) -> f32 {
    if x < 0.0 { 0.0 } else { x }
}

/// Uploads a vector of indices.
pub fn indices(data: &[u32], device: &Device) -> Tensor<1, Int> {
    // One cast, from u32 to the backend's integer type, on upload.
    Tensor::from_data(TensorData::new(data.to_vec(), [data.len()]), device)
}

/// Uploads an owned index array without copying it on the host: when every index fits an
/// `i32` (the integer type of Burn's backends here), the vector is reinterpreted in place and
/// handed over as is; otherwise it is cast like [`indices`]. The same tensor as
/// `indices(&data, device)`.
///
/// ```
/// use induce_models::device::default_device;
/// use induce_models::kernels::tensors::{index_tensor, indices};
/// let dev = default_device().unwrap();
/// let a = index_tensor(vec![3, 0, 7], &dev);
/// assert_eq!(a.to_data(), indices(&[3, 0, 7], &dev).to_data());
/// ```
pub fn index_tensor(data: Vec<u32>, device: &Device) -> Tensor<1, Int> {
    let bound = data.iter().max().map_or(0, |&m| m as usize + 1);
    index_tensor_below(data, bound, device)
}

/// [`index_tensor`] for indices the caller knows are all below `bound` (no scan for the
/// largest).
pub fn index_tensor_below(data: Vec<u32>, bound: usize, device: &Device) -> Tensor<1, Int> {
    let len = data.len();
    if bound > i32::MAX as usize {
        return Tensor::from_data(TensorData::new(data, [len]), device);
    }
    // Same size and alignment, every value below 2^31: the same numbers as i32, no copy.
    let signed: Vec<i32> = bytemuck::allocation::cast_vec(data);
    Tensor::from_data(TensorData::new(signed, [len]), device)
}

/// Sums rows of `values` into `n` output rows: `out[index[k]] += values[k]`.
///
/// # Shapes
/// - values: `[E, F]`
/// - index: `[E]`
/// - output: `[n, F]`
pub fn scatter_add_rows(values: Tensor<2>, index: Tensor<1, Int>, n: usize) -> Tensor<2> {
    let f = values.dims()[1];
    Tensor::<2>::zeros([n, f], &values.device()).select_assign(
        0,
        index,
        values,
        IndexingUpdateOp::Add,
    )
}

/// Reads a float tensor back to the host as a flat row-major vector.
pub fn to_vec(t: Tensor<2>) -> Vec<f32> {
    t.into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .expect("float tensor converts to f32")
}
