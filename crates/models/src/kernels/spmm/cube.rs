//! The CubeCL kernels (CUDA, Vulkan): one GPU lane per output entry reduces its row's segment, so
//! no two lanes write the same address and no atomics are needed.

use burn::backend::Cube;
use burn::backend::TensorMetadata;
use burn::backend::cubecl::dtype_to_storage_type;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use cubecl::prelude::*;
use cubecl::{CubeDim, calculate_cube_count_elemwise};

use super::{MessagePassing, Segments};

/// `out[r, j] = Σ_{k ∈ ptr[r]..ptr[r+1]} val[k] · x[col[k], j]`, one lane per `(r, j)`.
///
/// Every access goes through the tensors' strides: CubeCL may lay a row-major tensor out with
/// padded rows (a 3-wide row on a 4-element pitch), so `x[c * f + j]` would be wrong.
#[cube(launch)]
fn segment_matmul_kernel<F: Float, I: Numeric>(
    ptr: &Tensor<I>,
    col: &Tensor<I>,
    val: &Tensor<F>,
    x: &Tensor<F>,
    out: &mut Tensor<F>,
    #[define(F, I)] _dtypes: [ElemType; 2],
) {
    let f = out.shape(1);
    if ABSOLUTE_POS >= out.shape(0) * f {
        terminate!();
    }
    let r = ABSOLUTE_POS / f;
    let j = ABSOLUTE_POS % f;
    let start = usize::cast_from(ptr[r * ptr.stride(0)]);
    let end = usize::cast_from(ptr[(r + 1) * ptr.stride(0)]);
    let xj = j * x.stride(1);
    let mut acc = F::new(0.0);
    for k in start..end {
        let c = usize::cast_from(col[k * col.stride(0)]);
        acc += val[k * val.stride(0)] * x[c * x.stride(0) + xj];
    }
    let at = r * out.stride(0) + j * out.stride(1);
    out[at] = acc;
}

/// `out[k] = Σ_j a[row[k], j] · b[col[k], j]`, one lane per position.
#[cube(launch)]
fn segment_dot_kernel<F: Float, I: Numeric>(
    row: &Tensor<I>,
    col: &Tensor<I>,
    a: &Tensor<F>,
    b: &Tensor<F>,
    out: &mut Tensor<F>,
    #[define(F, I)] _dtypes: [ElemType; 2],
) {
    if ABSOLUTE_POS >= out.shape(0) {
        terminate!();
    }
    let f = a.shape(1);
    let r = usize::cast_from(row[ABSOLUTE_POS * row.stride(0)]);
    let c = usize::cast_from(col[ABSOLUTE_POS * col.stride(0)]);
    let (ra, cb) = (r * a.stride(0), c * b.stride(0));
    let mut acc = F::new(0.0);
    for j in 0..f {
        acc += a[ra + j * a.stride(1)] * b[cb + j * b.stride(1)];
    }
    let at = ABSOLUTE_POS * out.stride(0);
    out[at] = acc;
}

/// `out[r] = max_{k ∈ ptr[r]..ptr[r+1]} val[k]` (`-1e30` for an empty row), one lane per row.
#[cube(launch)]
fn segment_max_kernel<F: Float, I: Numeric>(
    ptr: &Tensor<I>,
    val: &Tensor<F>,
    out: &mut Tensor<F>,
    #[define(F, I)] _dtypes: [ElemType; 2],
) {
    if ABSOLUTE_POS >= out.shape(0) {
        terminate!();
    }
    let r = ABSOLUTE_POS;
    let start = usize::cast_from(ptr[r * ptr.stride(0)]);
    let end = usize::cast_from(ptr[(r + 1) * ptr.stride(0)]);
    let mut acc = F::new(-1e30);
    for k in start..end {
        acc = F::max(acc, val[k * val.stride(0)]);
    }
    let at = r * out.stride(0);
    out[at] = acc;
}

/// `out[r]`: the first position (from the row's start) of the largest `val[k] − lse_r`, with
/// `lse_r = max_r + ln Σ exp(val[k] − max_r)` summed in order, as the host's greedy choice; a
/// NaN passed over; `0` for an empty row. One lane per row, three passes over its segment.
// `x != x` is the NaN test in these kernels (the DSL's `is_nan` gives a per-lane type).
#[allow(clippy::eq_op)]
#[cube(launch)]
fn segment_greedy_kernel<F: Float, I: Numeric>(
    ptr: &Tensor<I>,
    val: &Tensor<F>,
    out: &mut Tensor<I>,
    #[define(F, I)] _dtypes: [ElemType; 2],
) {
    if ABSOLUTE_POS >= out.shape(0) {
        terminate!();
    }
    let r = ABSOLUTE_POS;
    let start = usize::cast_from(ptr[r * ptr.stride(0)]);
    let end = usize::cast_from(ptr[(r + 1) * ptr.stride(0)]);
    let mut mx = F::new(f32::NEG_INFINITY);
    for k in start..end {
        mx = F::max(mx, val[k * val.stride(0)]);
    }
    let mut sum = F::new(0.0);
    for k in start..end {
        sum += F::exp(val[k * val.stride(0)] - mx);
    }
    let lse = mx + F::ln(sum);
    let mut best = start;
    let mut best_val = F::new(0.0);
    if end > start {
        best_val = val[start * val.stride(0)] - lse;
    }
    for k in start + 1..end {
        let v = val[k * val.stride(0)] - lse;
        // `best_val != best_val`: a NaN (is_nan gives a per-lane type here)
        if v > best_val || best_val != best_val {
            best = k;
            best_val = v;
        }
    }
    let at = r * out.stride(0);
    out[at] = I::cast_from(best - start);
}

/// Whether lane `(bv, bi)` beats `(av, ai)` in [`segment_greedy_wide_kernel`]'s order: any
/// element beats none (`NONE`); a number beats a NaN; the larger number wins, the lower index
/// on a tie; of two NaNs the higher index (the host passes a NaN over, so an all-NaN row ends
/// on its last position).
#[allow(clippy::eq_op)]
#[cube]
fn greedy_beats<F: Float>(av: F, ai: u32, bv: F, bi: u32) -> bool {
    let mut beats = false.runtime();
    if bi != NONE {
        if ai == NONE {
            beats = true;
        } else {
            // `x != x`: a NaN (is_nan gives a per-lane type here)
            let a_nan = av != av;
            let b_nan = bv != bv;
            if a_nan && b_nan {
                beats = bi > ai;
            } else if a_nan {
                beats = true;
            } else if !b_nan {
                beats = bv > av || (bv == av && bi < ai);
            }
        }
    }
    beats
}

/// No element yet ([`greedy_beats`]).
const NONE: u32 = u32::MAX;

/// [`segment_greedy_kernel`]'s choice with one cube of `units` lanes (a power of two) per row,
/// for long rows (a batch of states with 10⁵ candidates each): the maximum, the sum of
/// `exp(val[k] − max)` and the first largest `val[k] − lse` are each reduced across the cube
/// in shared memory. The log-sum-exp is summed in a tree instead of in order, so it may round
/// another way than the host's, which matters only where two scores are that close.
#[cube(launch)]
fn segment_greedy_wide_kernel<F: Float, I: Numeric>(
    ptr: &Tensor<I>,
    val: &Tensor<F>,
    out: &mut Tensor<I>,
    #[comptime] units: usize,
    #[define(F, I)] _dtypes: [ElemType; 2],
) {
    let r = CUBE_POS_X as usize;
    let u = UNIT_POS_X as usize;
    let start = usize::cast_from(ptr[r * ptr.stride(0)]);
    let end = usize::cast_from(ptr[(r + 1) * ptr.stride(0)]);
    let sv = val.stride(0);
    let mut red = Shared::<[F]>::new_slice(units);
    let mut pos = Shared::<[u32]>::new_slice(units);
    // The maximum (a NaN passed over, as f32::max does on the host).
    let mut mx = F::new(f32::NEG_INFINITY);
    let mut k = start + u;
    while k < end {
        let v = val[k * sv];
        if v > mx {
            mx = v;
        }
        k += units;
    }
    red[u] = mx;
    sync_cube();
    let mut half = (units / 2).runtime();
    while half > 0 {
        if u < half && red[u + half] > red[u] {
            red[u] = red[u + half];
        }
        sync_cube();
        half /= 2;
    }
    let mx = red[0];
    sync_cube();
    // The sum of exponentials.
    let mut sum = F::new(0.0);
    let mut k = start + u;
    while k < end {
        sum += F::exp(val[k * sv] - mx);
        k += units;
    }
    red[u] = sum;
    sync_cube();
    let mut half = (units / 2).runtime();
    while half > 0 {
        if u < half {
            red[u] = red[u] + red[u + half];
        }
        sync_cube();
        half /= 2;
    }
    let lse = mx + F::ln(red[0]);
    sync_cube();
    // The first largest `val[k] − lse`, by [`greedy_beats`].
    let mut best = F::new(0.0);
    let mut at = NONE.runtime();
    let mut k = start + u;
    while k < end {
        let v = val[k * sv] - lse;
        let i = u32::cast_from(k - start);
        if greedy_beats::<F>(best, at, v, i) {
            best = v;
            at = i;
        }
        k += units;
    }
    red[u] = best;
    pos[u] = at;
    sync_cube();
    let mut half = (units / 2).runtime();
    while half > 0 {
        if u < half && greedy_beats::<F>(red[u], pos[u], red[u + half], pos[u + half]) {
            red[u] = red[u + half];
            pos[u] = pos[u + half];
        }
        sync_cube();
        half /= 2;
    }
    if u == 0 {
        let mut chosen = pos[0];
        if chosen == NONE {
            chosen = 0;
        }
        let at = r * out.stride(0);
        out[at] = I::cast_from(chosen);
    }
}

/// Rows at least this long on average take [`segment_greedy_wide_kernel`] (one cube per row);
/// shorter ones the one-lane-per-row kernel.
const WIDE_ROW: usize = 512;

/// Lanes per cube of [`segment_greedy_wide_kernel`]: the largest power of two within 256 and
/// the device's cube limit `max`.
fn wide_units(max: usize) -> usize {
    let mut units = 1;
    while units * 2 <= max.min(256) {
        units *= 2;
    }
    units
}

/// A launch with one lane per row of `ptr` (`[rows + 1]` offsets into `val`): the inputs made
/// contiguous, the `[rows]` output (of `val`'s type, or of `ptr`'s for an index per row), the
/// launch geometry and the kernels' `[F, I]` types.
struct PerRow {
    ptr: CubeTensor,
    val: CubeTensor,
    out: CubeTensor,
    cube_count: CubeCount,
    cube_dim: CubeDim,
    dtypes: [ElemType; 2],
}

impl PerRow {
    /// The launch, or (`Err`) the empty output when there is no row.
    // The `Err` is that output tensor itself, moved to the caller once, not a boxed error.
    #[allow(clippy::result_large_err)]
    fn new(ptr: CubeTensor, val: CubeTensor, index_out: bool) -> Result<Self, CubeTensor> {
        let (ptr, val) = (into_contiguous(ptr), into_contiguous(val));
        let rows = ptr.shape()[0] - 1;
        let dtype = match index_out {
            true => ptr.dtype,
            false => val.dtype,
        };
        let out = empty_device_dtype(val.client.clone(), val.device.clone(), [rows].into(), dtype);
        if rows == 0 {
            return Err(out);
        }
        let cube_dim = CubeDim::new(&val.client, rows);
        let cube_count = calculate_cube_count_elemwise(&val.client, rows, cube_dim);
        let dtypes = [
            dtype_to_storage_type(val.dtype),
            dtype_to_storage_type(ptr.dtype),
        ];
        Ok(Self {
            ptr,
            val,
            out,
            cube_count,
            cube_dim,
            dtypes,
        })
    }
}

/// Launches the one-lane-per-row kernel `$kernel(ptr, val, out)` over a [`PerRow::new`] result
/// and returns its output (returns the empty output at once when there is no row).
macro_rules! launch_per_row {
    ($kernel:ident, $per_row:expr) => {{
        let l = match $per_row {
            Ok(l) => l,
            Err(empty) => return empty,
        };
        let client = l.val.client.clone();
        $kernel::launch(
            &client,
            l.cube_count,
            l.cube_dim,
            l.ptr.into_tensor_arg(),
            l.val.into_tensor_arg(),
            l.out.clone().into_tensor_arg(),
            l.dtypes,
        );
        l.out
    }};
}

impl MessagePassing for Cube {
    fn segment_greedy(ptr: CubeTensor, val: CubeTensor) -> CubeTensor {
        let rows = ptr.shape()[0].saturating_sub(1);
        let len = val.shape()[0];
        // One cube per row where rows are long and few enough for one grid dimension.
        if rows == 0 || rows > u16::MAX as usize || len < WIDE_ROW * rows {
            return launch_per_row!(segment_greedy_kernel, PerRow::new(ptr, val, true));
        }
        let (ptr, val) = (into_contiguous(ptr), into_contiguous(val));
        let out = empty_device_dtype(
            val.client.clone(),
            val.device.clone(),
            [rows].into(),
            ptr.dtype,
        );
        let client = val.client.clone();
        let units = wide_units(client.properties().hardware.max_cube_dim.0 as usize);
        let dtypes = [
            dtype_to_storage_type(val.dtype),
            dtype_to_storage_type(ptr.dtype),
        ];
        segment_greedy_wide_kernel::launch(
            &client,
            CubeCount::Static(rows as u32, 1, 1),
            CubeDim::new_1d(units as u32),
            ptr.into_tensor_arg(),
            val.into_tensor_arg(),
            out.clone().into_tensor_arg(),
            units,
            dtypes,
        );
        out
    }

    fn segment_matmul(
        csr: Segments<Self>,
        val: CubeTensor,
        x: CubeTensor,
        _t: Segments<Self>,
        _t_perm: CubeTensor,
    ) -> CubeTensor {
        let Segments { ptr, col, .. } = csr;
        let (ptr, col, val, x) = (
            into_contiguous(ptr),
            into_contiguous(col),
            into_contiguous(val),
            into_contiguous(x),
        );
        let rows = ptr.shape()[0] - 1;
        let f = x.shape()[1];
        let out = empty_device_dtype(
            x.client.clone(),
            x.device.clone(),
            [rows, f].into(),
            x.dtype,
        );
        let units = rows * f;
        if units == 0 {
            return out;
        }
        let client = x.client.clone();
        let cube_dim = CubeDim::new(&client, units);
        let cube_count = calculate_cube_count_elemwise(&client, units, cube_dim);
        let dtypes = [
            dtype_to_storage_type(x.dtype),
            dtype_to_storage_type(ptr.dtype),
        ];
        segment_matmul_kernel::launch(
            &client,
            cube_count,
            cube_dim,
            ptr.into_tensor_arg(),
            col.into_tensor_arg(),
            val.into_tensor_arg(),
            x.into_tensor_arg(),
            out.clone().into_tensor_arg(),
            dtypes,
        );
        out
    }

    fn segment_max(_row: CubeTensor, ptr: CubeTensor, val: CubeTensor) -> CubeTensor {
        launch_per_row!(segment_max_kernel, PerRow::new(ptr, val, false))
    }

    fn segment_dot(
        row: CubeTensor,
        _ptr: CubeTensor,
        col: CubeTensor,
        a: CubeTensor,
        b: CubeTensor,
    ) -> CubeTensor {
        let (row, col, a, b) = (
            into_contiguous(row),
            into_contiguous(col),
            into_contiguous(a),
            into_contiguous(b),
        );
        let e = row.shape()[0];
        let out = empty_device_dtype(a.client.clone(), a.device.clone(), [e].into(), a.dtype);
        if e == 0 {
            return out;
        }
        let client = a.client.clone();
        let cube_dim = CubeDim::new(&client, e);
        let cube_count = calculate_cube_count_elemwise(&client, e, cube_dim);
        let dtypes = [
            dtype_to_storage_type(a.dtype),
            dtype_to_storage_type(row.dtype),
        ];
        segment_dot_kernel::launch(
            &client,
            cube_count,
            cube_dim,
            row.into_tensor_arg(),
            col.into_tensor_arg(),
            a.into_tensor_arg(),
            b.into_tensor_arg(),
            out.clone().into_tensor_arg(),
            dtypes,
        );
        out
    }
}
