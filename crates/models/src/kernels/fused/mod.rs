//! The policy's inference kernels, fused: one pass where the composition of Burn's operations
//! writes and reads intermediate tensors of every candidate or message.
//!
//! **The scoring MLP** ([`pair_mlp_scores`]). The policy scores a candidate edit `(u, w, flag)`
//! with a three-layer MLP on `[h_u, h_w, flag]`. Its first layer splits into per-node halves,
//! `W1 [h_u; h_w; flag] = P[u] + Q[w] + flag · w_f` with `P = H W1[:h]` and `Q = H W1[h:2h]`
//! computed once per node, so each candidate needs only two gathered rows and a few hundred
//! multiply-adds:
//!
//! ```text
//!   z1 = P[u] + Q[w] + flag · w_f + b1      a1 = LeakyReLU(z1)        [m]
//!   z2 = a1 W2 + b2                         a2 = LeakyReLU(z2)        [m2]
//!   s  = a2 · w3 + b3                                                 scalar
//! ```
//!
//! Composed of Burn's operations, the same MLP writes and reads `[C, 2h + 1]`, `[C, m]` and
//! `[C, m2]` tensors for `C` candidates (10⁷ per round for 300 Amazon-Photo episodes: gigabytes
//! per round on a GPU); the kernel keeps every intermediate in registers. Its sums run in index
//! order: `((P[u] + Q[w]) + flag · w_f) + b1` (as the host kernel's first layer,
//! `induce_models::policy::host`), then `Σ_j a1[j] W2[j, i]` from `j = 0` before `+ b2`, then
//! `Σ_i a2[i] w3[i]` from `i = 0` before `+ b3` (the host kernel sums the last two in blocks).
//!
//! **A GAT layer's attention** ([`gat_attention`]): each node's message logits, their softmax
//! and the weighted sum of the messages in one kernel over the destination-sorted messages,
//! instead of a `[E]` logit tensor, a segment maximum, exponentials, a segment sum, a division
//! and the aggregation (six launches and five `[E]` intermediates). The same sums in the same
//! order as that composition on a GPU (`GraphTensors::softmax` without scatters: segment
//! maximum, then sums in message order); CubeCL's CPU runtime composes the softmax with
//! scatters, whose sums may round another way.
//!
//! Both run on the CubeCL backends (CUDA, Vulkan, CubeCL's CPU runtime: one lane per candidate, one
//! lane per output entry). They are forward-only: under autodiff (training) and on backends without
//! a kernel (Flex, ndarray) the functions answer `None`; the callers ([`crate::Policy::score`],
//! [`crate::GatConv::attend_masked`]) ask [`available`] first (which also honours
//! [`crate::device::FUSED_ENV`] `=0`) and otherwise compose the same function of Burn's operations.

use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::{Backend, ExtensionType, backend_extension};
use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::error::Result;

#[cfg(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu"))]
mod cube;

/// A GAT layer's messages sorted by destination, as [`FusedInference::gat_attention`] reads
/// them: CSR offsets `ptr`, sources `col` and per-message logit offsets `absent` (read only when
/// the call says the messages are masked).
///
/// # Shapes
/// - ptr: `[n + 1]`; col, absent: `[E]`
#[derive(ExtensionType)]
pub struct Messages<B: Backend> {
    /// CSR offsets of the destinations.
    pub ptr: IntTensor<B>,
    /// The messages' sources.
    pub col: IntTensor<B>,
    /// Per-message logit offsets.
    pub absent: FloatTensor<B>,
}

/// The fused inference kernels a backend may provide (a Burn backend extension).
#[backend_extension(
    Flex: cfg(feature = "flex"),
    NdArray: cfg(feature = "ndarray"),
    Cube: cfg(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu")),
    Autodiff
)]
pub trait FusedInference: Backend {
    /// The scores of [`pair_mlp_scores`], or `None` where this backend has no kernel (the
    /// default; autodiff backends, whose callers need gradients).
    ///
    /// `params` holds, in this order: `w_f [m]`, `b1 [m]`, `W2 [m, m2]` (row-major), `b2 [m2]`,
    /// `w3 [m2]`, `b3`, the LeakyReLU slope.
    ///
    /// # Shapes
    /// - u, w, flag: `[C]`; p, q: `[N, m]`; params: `[2m + m·m2 + 2·m2 + 2]`; output: `[C]`
    fn pair_mlp_scores(
        u: IntTensor<Self>,
        w: IntTensor<Self>,
        flag: FloatTensor<Self>,
        p: FloatTensor<Self>,
        q: FloatTensor<Self>,
        params: FloatTensor<Self>,
        _m2: usize,
    ) -> Option<FloatTensor<Self>> {
        let _ = (u, w, flag, p, q, params);
        None
    }

    /// The output of [`gat_attention`], or `None` where this backend has no kernel (the
    /// default; autodiff backends).
    ///
    /// `messages`: sorted by destination ([`Messages`]); their `absent` offsets are read only
    /// when `masked`.
    ///
    /// # Shapes
    /// - messages: see [`Messages`]; a_src, a_dst: `[n, 1]`; h: `[n, F]`; bias: `[F]`;
    ///   slope (of the logits' LeakyReLU): `[1]`
    /// - output: `[n, F]`
    fn gat_attention(
        #[extension_type] messages: Messages<Self>,
        _masked: bool,
        a_src: FloatTensor<Self>,
        a_dst: FloatTensor<Self>,
        h: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        slope: FloatTensor<Self>,
    ) -> Option<FloatTensor<Self>> {
        let _ = (messages, a_src, a_dst, h, bias, slope);
        None
    }
}

#[cfg(feature = "ndarray")]
impl FusedInference for burn::backend::NdArray {}

// On Flex the composition stays: its float rounding is the one the CPU's parity with the
// authors' explanations was measured with (a kernel there moved one syn5 tie), and the CPU's
// fast path is the host kernels (`induce_models::policy::host`), which already score this way.
#[cfg(feature = "flex")]
impl FusedInference for burn::backend::Flex {}

impl<
    B: Backend + FusedInference,
    C: burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy,
> FusedInference for burn::backend::Autodiff<B, C>
{
}

/// Whether [`pair_mlp_scores`] and [`gat_attention`] run a kernel for tensors on `device`: a
/// plain (non-autodiff) device of a CubeCL backend, with [`crate::device::FUSED_ENV`] not `0`.
/// The callers check it before preparing the kernels' inputs.
pub fn available(device: &Device) -> bool {
    crate::device::fused_kernels() && !device.is_autodiff() && on_cube(device)
}

/// Whether `device` is one of the CubeCL backends' (CUDA, Vulkan, CubeCL's CPU runtime).
fn on_cube(device: &Device) -> bool {
    #[cfg(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu"))]
    {
        matches!(
            device.as_dispatch().clone().inner(),
            burn::backend::DispatchDevice::Cube(_)
        )
    }
    #[cfg(not(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu")))]
    {
        let _ = device;
        false
    }
}

/// The scoring MLP's parameters as [`FusedInference::pair_mlp_scores`] reads them, for an MLP with
/// hidden widths `m` and `m2`.
///
/// # Shapes
/// - w_f, b1: `[m]`; w2: `[m, m2]` (`[in, out]`, as Burn's `Linear` stores it); b2, w3: `[m2]`
#[derive(Debug, Clone)]
pub struct PairMlp {
    /// `[w_f, b1, W2, b2, w3, b3, slope]` flattened.
    params: Tensor<1>,
    m: usize,
    m2: usize,
}

impl PairMlp {
    /// Packs the parameters on their device (all tensors on one device).
    ///
    /// # Shapes
    /// - w_f, b1: `[m]`; w2: `[m, m2]`; b2, w3: `[m2]`; b3: `[1]`
    pub fn new(
        w_f: Tensor<1>,
        b1: Tensor<1>,
        w2: Tensor<2>,
        b2: Tensor<1>,
        w3: Tensor<1>,
        b3: Tensor<1>,
        slope: f32,
    ) -> Self {
        let [m, m2] = w2.dims();
        let device = w2.device();
        let slope = Tensor::<1>::from_data(TensorData::new(vec![slope], [1]), &device);
        let params = Tensor::cat(vec![w_f, b1, w2.reshape([m * m2]), b2, w3, b3, slope], 0);
        Self { params, m, m2 }
    }

    /// Width of the first hidden layer.
    pub fn m(&self) -> usize {
        self.m
    }
}

/// Each candidate's score under the MLP `mlp` from the per-node halves `p`, `q` of its first
/// layer (see the module's drawing), fused into one kernel; `None` where the backend has no
/// kernel, `p` is on an autodiff device or the shapes do not fit each other (compose the MLP
/// of Burn's operations there). It does not read [`crate::device::FUSED_ENV`]: callers ask
/// [`available`] first.
///
/// ```
/// use burn::tensor::{Int, Tensor, TensorData};
/// use induce_models::device::default_device;
/// use induce_models::kernels::fused::{PairMlp, pair_mlp_scores};
/// use induce_models::kernels::tensors::to_vec;
/// let dev = default_device().unwrap();
/// let v = |x: Vec<f32>| Tensor::<1>::from_data(TensorData::new(x.clone(), [x.len()]), &dev);
/// // m = m2 = 1: s = 2 · lrelu(1 · lrelu(P[u] + Q[w] + flag · 1 + 0) + 0) + 0.5, slope 0.5
/// let mlp = PairMlp::new(
///     v(vec![1.0]), v(vec![0.0]),
///     Tensor::<2>::from_data(TensorData::new(vec![1.0f32], [1, 1]), &dev),
///     v(vec![0.0]), v(vec![2.0]), v(vec![0.5]), 0.5,
/// );
/// let p = Tensor::<2>::from_data(TensorData::new(vec![1.0f32, -3.0], [2, 1]), &dev);
/// let q = Tensor::<2>::from_data(TensorData::new(vec![0.5f32, 0.0], [2, 1]), &dev);
/// let idx = |x: Vec<i64>| Tensor::<1, Int>::from_data(TensorData::new(x, [2]), &dev);
/// let s = pair_mlp_scores(&mlp, idx(vec![0, 1]), idx(vec![1, 0]), v(vec![1.0, 0.0]), p, q);
/// if let Some(s) = s {
///     // (0, 1, flag 1): (1 + 0 + 1) · 2 + 0.5 = 4.5
///     // (1, 0, flag 0): lrelu(-3 + 0.5) = -1.25, lrelu(-1.25) = -0.625, · 2 + 0.5 = -0.75
///     assert_eq!(to_vec(s.reshape([2, 1])), vec![4.5, -0.75]);
/// }
/// ```
///
/// # Shapes
/// - u, w, flag: `[C]`; p, q: `[N, m]`; output: `[C]`
pub fn pair_mlp_scores(
    mlp: &PairMlp,
    u: Tensor<1, Int>,
    w: Tensor<1, Int>,
    flag: Tensor<1>,
    p: Tensor<2>,
    q: Tensor<2>,
) -> Option<Tensor<1>> {
    use burn::backend::Dispatch;
    if p.is_autodiff() || q.is_autodiff() {
        return None;
    }
    let out = <Dispatch as FusedInference>::pair_mlp_scores(
        u.into_dispatch(),
        w.into_dispatch(),
        flag.into_dispatch(),
        p.into_dispatch(),
        q.into_dispatch(),
        mlp.params.clone().into_dispatch(),
        mlp.m2,
    )?;
    Some(Tensor::from_dispatch(out))
}

/// The inputs of [`gat_attention`] (see its `# Shapes`).
#[derive(Debug, Clone)]
pub struct GatAttention {
    /// CSR offsets of the messages sorted by destination: `[n + 1]`.
    pub ptr: Tensor<1, Int>,
    /// The messages' sources, in that order: `[E]`.
    pub col: Tensor<1, Int>,
    /// The source attention terms: `[n, 1]`.
    pub a_src: Tensor<2>,
    /// The destination attention terms: `[n, 1]`.
    pub a_dst: Tensor<2>,
    /// Per-message logit offsets (`ABSENT` for a deleted edge), if any: `[E]`.
    pub absent: Option<Tensor<1>>,
    /// The transformed node features: `[n, F]`.
    pub h: Tensor<2>,
    /// The layer's bias: `[F]`.
    pub bias: Tensor<1>,
    /// The logits' LeakyReLU slope.
    pub slope: f32,
}

/// A GAT layer's attention and aggregation in one kernel: for every node `v`, with its
/// messages `k` (sources `u_k`) sorted by destination,
///
/// ```text
///   e_k = LeakyReLU(a_src[u_k] + a_dst[v]) + absent_k        (slope `slope`)
///   α_k = exp(e_k − max e) / Σ exp(e − max e)                 over v's messages
///   out[v] = Σ_k α_k h[u_k] + bias
/// ```
///
/// (a node without messages gets `bias`). `None` where the backend has no kernel, an input is
/// on an autodiff device or the shapes do not fit each other. It does not read
/// [`crate::device::FUSED_ENV`]: callers ask [`available`] first.
///
/// # Shapes
/// - ptr: `[n + 1]`; col: `[E]`; a_src, a_dst: `[n, 1]`; absent: `[E]`; h: `[n, F]`;
///   bias: `[F]`; output: `[n, F]`
pub fn gat_attention(inputs: GatAttention) -> Option<Tensor<2>> {
    let GatAttention {
        ptr,
        col,
        a_src,
        a_dst,
        absent,
        h,
        bias,
        slope,
    } = inputs;
    use burn::backend::Dispatch;
    if h.is_autodiff() || !on_cube(&h.device()) {
        return None;
    }
    let slope = Tensor::<1>::from_data(TensorData::new(vec![slope], [1]), &h.device());
    let masked = absent.is_some();
    // Unmasked: any float tensor stands in (the kernel does not read it).
    let absent = absent.unwrap_or_else(|| bias.clone());
    let messages = Messages {
        ptr: ptr.into_dispatch(),
        col: col.into_dispatch(),
        absent: absent.into_dispatch(),
    };
    let out = <Dispatch as FusedInference>::gat_attention(
        messages,
        masked,
        a_src.into_dispatch(),
        a_dst.into_dispatch(),
        h.into_dispatch(),
        bias.into_dispatch(),
        slope.into_dispatch(),
    )?;
    Some(Tensor::from_dispatch(out))
}

/// The largest relative differences between the fused kernels and their compositions of
/// Burn's operations ([`self_check`]); `None` where the device has no kernel.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FusedCheck {
    /// [`pair_mlp_scores`] against the composed MLP.
    pub pair_mlp: Option<f32>,
    /// [`gat_attention`] against logits, segment softmax and scatter-add, masked and not.
    pub gat_attention: Option<f32>,
}

impl FusedCheck {
    /// Whether every difference is within `tol` (a missing kernel passes; a NaN fails).
    pub fn passes(&self, tol: f32) -> bool {
        [self.pair_mlp, self.gat_attention]
            .iter()
            .all(|e| e.is_none_or(|e| e <= tol))
    }
}

/// Checks this device's fused kernels against the compositions they replace, on seeded random
/// inputs (see [`FusedCheck`]). Used by the unit tests and by the GPU check
/// (`examples/gpu_check.rs`) on each device.
pub fn self_check(device: &Device, seed: u64) -> Result<FusedCheck> {
    Ok(FusedCheck {
        pair_mlp: pair_mlp_check(device, seed)?,
        gat_attention: gat_check(device, seed)?,
    })
}

/// Largest relative difference of two equally long vectors (NaN if either has one).
fn max_rel(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0f32, |e, d| {
            if d.is_nan() || e.is_nan() {
                f32::NAN
            } else {
                e.max(d)
            }
        })
}

/// [`gat_attention`] against its composition on random graphs (a node without messages, a node
/// whose messages are all absent, self loops), with and without absent messages.
fn gat_check(device: &Device, seed: u64) -> Result<Option<f32>> {
    use burn::tensor::activation::leaky_relu;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    let mut rng = StdRng::seed_from_u64(seed ^ 0x6A7);
    let mut worst = 0f32;
    for (n, e, f) in [(6usize, 14usize, 3usize), (2_000, 30_000, 16)] {
        // Messages sorted by destination; the last node receives none.
        let mut msgs: Vec<(u32, u32)> = (0..e)
            .map(|_| {
                (
                    rng.random_range(0..n as u32),
                    rng.random_range(0..n as u32 - 1),
                )
            })
            .collect();
        msgs.sort_by_key(|&(_, d)| d);
        let (src, dst): (Vec<u32>, Vec<u32>) = msgs.iter().copied().unzip();
        let mut ptr = vec![0u32; n + 1];
        for &d in &dst {
            ptr[d as usize + 1] += 1;
        }
        for i in 0..n {
            ptr[i + 1] += ptr[i];
        }
        let mut r =
            |len: usize| -> Vec<f32> { (0..len).map(|_| rng.random_range(-2.0f32..2.0)).collect() };
        // About a third of the messages absent, and every message of node 0.
        let absent: Vec<f32> = r(e)
            .iter()
            .zip(&dst)
            .map(|(&x, &d)| {
                if x < -0.7 || d == 0 {
                    crate::ops::ABSENT
                } else {
                    0.0
                }
            })
            .collect();
        let (h, a_s, a_d, bias) = (r(n * f), r(n), r(n), r(f));
        let g = crate::kernels::tensors::GraphTensors::forward_only(n, src, dst, ptr, device)?;
        let mat = |x: Vec<f32>, a: usize, b: usize| {
            Tensor::<2>::from_data(TensorData::new(x, [a, b]), device)
        };
        let (h, a_s, a_d) = (mat(h, n, f), mat(a_s, n, 1), mat(a_d, n, 1));
        let bias = Tensor::<1>::from_data(TensorData::new(bias, [f]), device);
        let absent = Tensor::<1>::from_data(TensorData::new(absent, [e]), device);
        for mask in [None, Some(absent)] {
            let Some(fused) = gat_attention(GatAttention {
                ptr: g.csr.offsets(),
                col: g.src.clone(),
                a_src: a_s.clone(),
                a_dst: a_d.clone(),
                absent: mask.clone(),
                h: h.clone(),
                bias: bias.clone(),
                slope: 0.2,
            }) else {
                return Ok(None);
            };
            let logits = leaky_relu(
                a_s.clone().select(0, g.src.clone()) + a_d.clone().select(0, g.dst.clone()),
                0.2,
            );
            let logits = match &mask {
                Some(m) => logits + m.clone().unsqueeze_dim(1),
                None => logits,
            };
            let alpha = crate::kernels::tensors::segment_softmax(logits, g.dst.clone(), n);
            let composed = crate::kernels::tensors::scatter_add_rows(
                h.clone().select(0, g.src.clone()) * alpha,
                g.dst.clone(),
                n,
            ) + bias.clone().unsqueeze_dim(0);
            let (a, b) = (
                crate::kernels::tensors::try_to_vec(fused, "fused attention")?,
                crate::kernels::tensors::try_to_vec(composed, "composed attention")?,
            );
            let err = max_rel(&a, &b);
            worst = if err.is_nan() {
                f32::NAN
            } else {
                worst.max(err)
            };
        }
    }
    Ok(Some(worst))
}

/// [`pair_mlp_scores`] against the same MLP composed of Burn's operations on seeded random
/// candidates (repeated and both-same endpoints, negative pre-activations on both sides of the
/// LeakyReLU); `None` where `device` has no kernel.
fn pair_mlp_check(device: &Device, seed: u64) -> Result<Option<f32>> {
    use burn::tensor::activation::leaky_relu;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    let mut rng = StdRng::seed_from_u64(seed);
    let mut worst: Option<f32> = Some(0.0);
    for (n, c, m, m2) in [(5usize, 17usize, 3usize, 2usize), (300, 40_000, 16, 16)] {
        let mut r =
            |len: usize| -> Vec<f32> { (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect() };
        let mat = |x: Vec<f32>, a: usize, b: usize| {
            Tensor::<2>::from_data(TensorData::new(x, [a, b]), device)
        };
        let vec1 = |x: Vec<f32>| {
            let len = x.len();
            Tensor::<1>::from_data(TensorData::new(x, [len]), device)
        };
        let (p, q) = (mat(r(n * m), n, m), mat(r(n * m), n, m));
        let (wf, b1, w2, b2, w3, b3) = (r(m), r(m), r(m * m2), r(m2), r(m2), r(1));
        let flag: Vec<f32> = r(c).into_iter().map(|x| (x > 0.0) as u8 as f32).collect();
        let mut rng2 = StdRng::seed_from_u64(seed ^ 0x5EED);
        let u: Vec<i64> = (0..c).map(|_| rng2.random_range(0..n as i64)).collect();
        let w: Vec<i64> = (0..c).map(|_| rng2.random_range(0..n as i64)).collect();
        let idx = |x: Vec<i64>| Tensor::<1, Int>::from_data(TensorData::new(x, [c]), device);
        let slope = 0.01;
        let mlp = PairMlp::new(
            vec1(wf.clone()),
            vec1(b1.clone()),
            mat(w2.clone(), m, m2),
            vec1(b2.clone()),
            vec1(w3.clone()),
            vec1(b3.clone()),
            slope,
        );
        let Some(fused) = pair_mlp_scores(
            &mlp,
            idx(u.clone()),
            idx(w.clone()),
            vec1(flag.clone()),
            p.clone(),
            q.clone(),
        ) else {
            worst = None;
            continue;
        };
        let (u, w) = (idx(u), idx(w));
        let z1 = p.select(0, u) + q.select(0, w) + mat(flag, c, 1) * mat(wf, 1, m) + mat(b1, 1, m);
        let z2 = leaky_relu(z1, slope as f64).matmul(mat(w2, m, m2)) + mat(b2, 1, m2);
        let s = leaky_relu(z2, slope as f64).matmul(mat(w3, m2, 1)) + mat(b3, 1, 1);
        let (a, b) = (
            crate::kernels::tensors::try_to_vec(fused.reshape([c, 1]), "fused scores")?,
            crate::kernels::tensors::try_to_vec(s, "composed scores")?,
        );
        let err = max_rel(&a, &b);
        worst = worst.map(|w| if err.is_nan() { f32::NAN } else { w.max(err) });
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test_device;

    /// The fused kernels give their compositions' numbers (where the device has them: the
    /// CubeCL runtimes).
    #[test]
    fn the_fused_kernels_compute_their_compositions() {
        let dev = test_device().unwrap();
        let check = self_check(&dev, 11).unwrap();
        let kind = crate::device::default_backend().unwrap();
        if !matches!(kind.name(), "flex" | "ndarray") {
            assert!(
                check.pair_mlp.is_some(),
                "{} has the MLP kernel",
                kind.name()
            );
            assert!(
                check.gat_attention.is_some(),
                "{} has the GAT kernel",
                kind.name()
            );
        }
        // The composed products run in TF32 on a GPU; the kernels in f32.
        assert!(
            check.passes(crate::testing::float_tolerance(1e-5)),
            "{check:?}"
        );
    }

    /// Exact numbers on a hand-sized MLP (m = 2, m2 = 1), both sides of the LeakyReLU, and an
    /// empty candidate list.
    #[test]
    fn scores_by_hand() {
        let dev = test_device().unwrap();
        let v = |x: Vec<f32>| Tensor::<1>::from_data(TensorData::new(x.clone(), [x.len()]), &dev);
        let mat = |x: Vec<f32>, a: usize, b: usize| {
            Tensor::<2>::from_data(TensorData::new(x, [a, b]), &dev)
        };
        // w_f = [1, -1], b1 = [0, 0.5], W2 = [[2], [1]], b2 = [-1], w3 = [4], b3 = [0.25]
        let mlp = PairMlp::new(
            v(vec![1.0, -1.0]),
            v(vec![0.0, 0.5]),
            mat(vec![2.0, 1.0], 2, 1),
            v(vec![-1.0]),
            v(vec![4.0]),
            v(vec![0.25]),
            0.5,
        );
        // P rows: [1, 2], [-2, 0]; Q rows: [0.5, -1], [0, 0]
        let p = mat(vec![1.0, 2.0, -2.0, 0.0], 2, 2);
        let q = mat(vec![0.5, -1.0, 0.0, 0.0], 2, 2);
        let idx = |x: Vec<i64>| {
            let len = x.len();
            Tensor::<1, Int>::from_data(TensorData::new(x, [len]), &dev)
        };
        let Some(s) = pair_mlp_scores(
            &mlp,
            idx(vec![0, 1]),
            idx(vec![0, 1]),
            v(vec![1.0, 0.0]),
            p.clone(),
            q.clone(),
        ) else {
            return; // no kernel on this backend
        };
        // (0, 0, flag 1): z1 = [1 + 0.5 + 1, 2 - 1 - 1 + 0.5] = [2.5, 0.5];
        //   z2 = 2·2.5 + 0.5 - 1 = 4.5; s = 4·4.5 + 0.25 = 18.25
        // (1, 1, flag 0): z1 = [-2, 0.5] → a1 = [-1, 0.5]; z2 = -2 + 0.5 - 1 = -2.5 → -1.25;
        //   s = -5 + 0.25 = -4.75
        assert_eq!(
            crate::kernels::tensors::to_vec(s.reshape([2, 1])),
            vec![18.25, -4.75]
        );
        let none = pair_mlp_scores(&mlp, idx(vec![]), idx(vec![]), v(vec![]), p, q).unwrap();
        assert_eq!(none.dims(), [0]);
    }
}
