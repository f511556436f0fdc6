//! The CubeCL kernel (CUDA, Vulkan, CubeCL's CPU runtime): one lane per candidate, its first
//! hidden layer in a local array of the layer's (compile-time) width.

use burn::backend::Cube;
use burn::backend::TensorMetadata;
use burn::backend::cubecl::dtype_to_storage_type;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use cubecl::prelude::*;
use cubecl::{CubeDim, calculate_cube_count_elemwise};

use super::{FusedInference, Messages};

/// `x` for `x ≥ 0`, `slope · x` otherwise (a NaN stays a NaN).
#[cube]
fn lrelu<F: Float>(x: F, slope: F) -> F {
    let mut y = x;
    if x < F::new(0.0) {
        y = x * slope;
    }
    y
}

/// `out[k]`: the scoring MLP of candidate `k` (see the module of [`FusedInference`]); `params` is
/// `[w_f (m), b1 (m), W2 (m × m2), b2 (m2), w3 (m2), b3, slope]`. Every access goes through the
/// tensors' strides.
#[cube(launch)]
fn pair_mlp_kernel<F: Float, I: Numeric>(
    u: &Tensor<I>,
    w: &Tensor<I>,
    flag: &Tensor<F>,
    p: &Tensor<F>,
    q: &Tensor<F>,
    params: &Tensor<F>,
    out: &mut Tensor<F>,
    #[comptime] m: usize,
    #[comptime] m2: usize,
    #[define(F, I)] _dtypes: [ElemType; 2],
) {
    if ABSOLUTE_POS >= out.shape(0) {
        terminate!();
    }
    let k = ABSOLUTE_POS;
    let sp = params.stride(0);
    let slope = params[(2 * m + m * m2 + 2 * m2 + 1) * sp];
    let pu = usize::cast_from(u[k * u.stride(0)]) * p.stride(0);
    let qw = usize::cast_from(w[k * w.stride(0)]) * q.stride(0);
    let f = flag[k * flag.stride(0)];
    let mut a1 = Array::<F>::new(m);
    for j in 0..m {
        let z = p[pu + j * p.stride(1)]
            + q[qw + j * q.stride(1)]
            + f * params[j * sp]
            + params[(m + j) * sp];
        a1[j] = lrelu::<F>(z, slope);
    }
    let mut s = F::new(0.0);
    for i in 0..m2 {
        let mut z = F::new(0.0);
        for j in 0..m {
            z += a1[j] * params[(2 * m + j * m2 + i) * sp];
        }
        let a2 = lrelu::<F>(z + params[(2 * m + m * m2 + i) * sp], slope);
        s += a2 * params[(2 * m + m * m2 + m2 + i) * sp];
    }
    let at = k * out.stride(0);
    out[at] = s + params[(2 * m + m * m2 + 2 * m2) * sp];
}

/// `out[v, j]`: the GAT attention of destination `v` over its messages `ptr[v]..ptr[v + 1]`
/// (sources `col`), feature `j`, in three passes over the segment (maximum, sum of
/// exponentials, weighted sum) with the sums in message order, as the composition's
/// `segment_max`, `segment_matmul` (sum of exponentials) and `segment_matmul` (aggregation)
/// take them. `absent` is read only when `masked`.
#[cube(launch)]
fn gat_attention_kernel<F: Float, I: Numeric>(
    ptr: &Tensor<I>,
    col: &Tensor<I>,
    a_src: &Tensor<F>,
    a_dst: &Tensor<F>,
    absent: &Tensor<F>,
    h: &Tensor<F>,
    bias: &Tensor<F>,
    slope: &Tensor<F>,
    out: &mut Tensor<F>,
    #[comptime] masked: bool,
    #[define(F, I)] _dtypes: [ElemType; 2],
) {
    let f = out.shape(1);
    if ABSOLUTE_POS >= out.shape(0) * f {
        terminate!();
    }
    let v = ABSOLUTE_POS / f;
    let j = ABSOLUTE_POS % f;
    let start = usize::cast_from(ptr[v * ptr.stride(0)]);
    let end = usize::cast_from(ptr[(v + 1) * ptr.stride(0)]);
    let ad = a_dst[v * a_dst.stride(0)];
    let sl = slope[0];
    // The segment maximum starts where the composition's does (`segment_max`: -1e30).
    let mut mx = F::new(-1e30);
    for k in start..end {
        let u = usize::cast_from(col[k * col.stride(0)]);
        let mut e = lrelu::<F>(a_src[u * a_src.stride(0)] + ad, sl);
        if masked {
            e += absent[k * absent.stride(0)];
        }
        mx = F::max(mx, e);
    }
    let mut sum = F::new(0.0);
    for k in start..end {
        let u = usize::cast_from(col[k * col.stride(0)]);
        let mut e = lrelu::<F>(a_src[u * a_src.stride(0)] + ad, sl);
        if masked {
            e += absent[k * absent.stride(0)];
        }
        sum += F::exp(e - mx);
    }
    let hj = j * h.stride(1);
    let mut acc = F::new(0.0);
    for k in start..end {
        let u = usize::cast_from(col[k * col.stride(0)]);
        let mut e = lrelu::<F>(a_src[u * a_src.stride(0)] + ad, sl);
        if masked {
            e += absent[k * absent.stride(0)];
        }
        acc += (F::exp(e - mx) / sum) * h[u * h.stride(0) + hj];
    }
    let at = v * out.stride(0) + j * out.stride(1);
    out[at] = acc + bias[j * bias.stride(0)];
}

impl FusedInference for Cube {
    fn gat_attention(
        messages: Messages<Self>,
        masked: bool,
        a_src: CubeTensor,
        a_dst: CubeTensor,
        h: CubeTensor,
        bias: CubeTensor,
        slope: CubeTensor,
    ) -> Option<CubeTensor> {
        let Messages { ptr, col, absent } = messages;
        let (n, f) = (h.shape()[0], h.shape()[1]);
        let e = col.shape()[0];
        // Inputs that do not fit each other: left to the composition to report.
        let fits = ptr.shape()[0] == n + 1
            && a_src.shape()[0] == n
            && a_dst.shape()[0] == n
            && a_src.shape()[1] == 1
            && a_dst.shape()[1] == 1
            && bias.shape()[0] == f
            && (!masked || absent.shape()[0] == e);
        if !fits {
            return None;
        }
        let (ptr, col, a_src, a_dst, absent, h, bias, slope) = (
            into_contiguous(ptr),
            into_contiguous(col),
            into_contiguous(a_src),
            into_contiguous(a_dst),
            into_contiguous(absent),
            into_contiguous(h),
            into_contiguous(bias),
            into_contiguous(slope),
        );
        let out = empty_device_dtype(h.client.clone(), h.device.clone(), [n, f].into(), h.dtype);
        let units = n * f;
        if units == 0 {
            return Some(out);
        }
        let client = h.client.clone();
        let cube_dim = CubeDim::new(&client, units);
        let cube_count = calculate_cube_count_elemwise(&client, units, cube_dim);
        let dtypes = [
            dtype_to_storage_type(h.dtype),
            dtype_to_storage_type(ptr.dtype),
        ];
        gat_attention_kernel::launch(
            &client,
            cube_count,
            cube_dim,
            ptr.into_tensor_arg(),
            col.into_tensor_arg(),
            a_src.into_tensor_arg(),
            a_dst.into_tensor_arg(),
            absent.into_tensor_arg(),
            h.into_tensor_arg(),
            bias.into_tensor_arg(),
            slope.into_tensor_arg(),
            out.clone().into_tensor_arg(),
            masked,
            dtypes,
        );
        Some(out)
    }

    fn pair_mlp_scores(
        u: CubeTensor,
        w: CubeTensor,
        flag: CubeTensor,
        p: CubeTensor,
        q: CubeTensor,
        params: CubeTensor,
        m2: usize,
    ) -> Option<CubeTensor> {
        let (m, c) = (p.shape()[1], flag.shape()[0]);
        // Inputs that do not fit each other: left to the composition to report.
        let fits = params.shape()[0] == 2 * m + m * m2 + 2 * m2 + 2
            && q.shape()[1] == m
            && q.shape()[0] == p.shape()[0]
            && u.shape()[0] == c
            && w.shape()[0] == c;
        if !fits {
            return None;
        }
        let (u, w, flag, p, q, params) = (
            into_contiguous(u),
            into_contiguous(w),
            into_contiguous(flag),
            into_contiguous(p),
            into_contiguous(q),
            into_contiguous(params),
        );
        let out = empty_device_dtype(p.client.clone(), p.device.clone(), [c].into(), p.dtype);
        if c == 0 {
            return Some(out);
        }
        let client = p.client.clone();
        let cube_dim = CubeDim::new(&client, c);
        let cube_count = calculate_cube_count_elemwise(&client, c, cube_dim);
        let dtypes = [
            dtype_to_storage_type(p.dtype),
            dtype_to_storage_type(u.dtype),
        ];
        pair_mlp_kernel::launch(
            &client,
            cube_count,
            cube_dim,
            u.into_tensor_arg(),
            w.into_tensor_arg(),
            flag.into_tensor_arg(),
            p.into_tensor_arg(),
            q.into_tensor_arg(),
            params.into_tensor_arg(),
            out.clone().into_tensor_arg(),
            m,
            m2,
            dtypes,
        );
        Some(out)
    }
}
