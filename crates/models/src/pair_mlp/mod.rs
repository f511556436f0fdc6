//! The policy's scoring MLP over a candidate list as one fused kernel.
//!
//! The policy scores a candidate edit `(u, w, flag)` with a three-layer MLP on `[h_u, h_w,
//! flag]`. Its first layer splits into per-node halves, `W1 [h_u; h_w; flag] = P[u] + Q[w] +
//! flag · w_f` with `P = H W1[:h]` and `Q = H W1[h:2h]` computed once per node, so each candidate
//! needs only two gathered rows and a few hundred multiply-adds:
//!
//! ```text
//!   z1 = P[u] + Q[w] + flag · w_f + b1      a1 = LeakyReLU(z1)        [m]
//!   z2 = a1 W2 + b2                         a2 = LeakyReLU(z2)        [m2]
//!   s  = a2 · w3 + b3                                                 scalar
//! ```
//!
//! Composed of Burn's operations, the same MLP writes and reads `[C, 2h + 1]`, `[C, m]` and
//! `[C, m2]` tensors for `C` candidates (10⁷ per round for 300 Amazon-Photo episodes: gigabytes
//! per round on a GPU). The kernel keeps every intermediate in registers: one lane per candidate
//! on CubeCL (CUDA, Vulkan, CubeCL's CPU runtime). It is forward-only: under autodiff
//! (training) and on backends without a kernel (Flex, ndarray)
//! [`pair_mlp_scores`] answers `None` and the caller composes the MLP of Burn's operations
//! ([`crate::policy::Policy::score`] does).
//!
//! The order of the sums is the host kernel's (`induce_models::host`): `((P[u] + Q[w]) + flag ·
//! w_f) + b1`, then `Σ_j a1[j] W2[j, i]` from `j = 0` before `+ b2`, then `Σ_i a2[i] w3[i]` from
//! `i = 0` before `+ b3`.

use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::{Backend, backend_extension};
use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::error::Result;

#[cfg(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu"))]
mod cube;

/// The fused scoring MLP every backend may provide (a Burn backend extension).
#[backend_extension(
    Flex: cfg(feature = "flex"),
    NdArray: cfg(feature = "ndarray"),
    Cube: cfg(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu")),
    Autodiff
)]
pub trait PairScoring: Backend {
    /// The scores of [`pair_mlp_scores`], or `None` where this backend has no kernel (the
    /// default; autodiff backends, whose callers need gradients).
    ///
    /// `params` holds, in this order: `w_f [m]`, `b1 [m]`, `W2 [m, m2]` (row-major), `b2 [m2]`,
    /// `w3 [m2]`, `b3`, the LeakyReLU slope.
    ///
    /// # Shapes
    /// - u, w, flag: `[C]`; p, q: `[N, m]`; params: `[2m + m·m2 + 2·m2 + 2]`; output: `[C]`
    #[allow(clippy::too_many_arguments)]
    fn pair_mlp_scores(
        u: IntTensor<Self>,
        w: IntTensor<Self>,
        flag: FloatTensor<Self>,
        p: FloatTensor<Self>,
        q: FloatTensor<Self>,
        params: FloatTensor<Self>,
        m2: usize,
    ) -> Option<FloatTensor<Self>> {
        let _ = (u, w, flag, p, q, params, m2);
        None
    }
}

#[cfg(feature = "ndarray")]
impl PairScoring for burn::backend::NdArray {}

// On Flex the composition stays: its float rounding is the one the CPU's parity with the
// authors' explanations was measured with (a kernel there moved one syn5 tie), and the CPU's
// fast path is the host kernels (`induce_models::host`), which already score this way.
#[cfg(feature = "flex")]
impl PairScoring for burn::backend::Flex {}

impl<B: Backend + PairScoring, C: burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy>
    PairScoring for burn::backend::Autodiff<B, C>
{
}

/// The scoring MLP's parameters as [`PairScoring::pair_mlp_scores`] reads them, for an MLP with
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
/// kernel or `p` is tracked by autodiff (compose the MLP of Burn's operations there).
///
/// ```
/// use burn::tensor::{Int, Tensor, TensorData};
/// use induce_models::device::default_device;
/// use induce_models::pair_mlp::{PairMlp, pair_mlp_scores};
/// use induce_models::tensors::to_vec;
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
    let out = <Dispatch as PairScoring>::pair_mlp_scores(
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

/// The largest relative difference between [`pair_mlp_scores`] and the same MLP composed of
/// Burn's operations on seeded random candidates (repeated and both-same endpoints, negative
/// pre-activations on both sides of the LeakyReLU), or `None` where `device` has no kernel.
/// Used by the unit tests and by the GPU check (`examples/gpu_check.rs`) on each device.
pub fn self_check(device: &Device, seed: u64) -> Result<Option<f32>> {
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
            crate::tensors::try_to_vec(fused.reshape([c, 1]), "fused scores")?,
            crate::tensors::try_to_vec(s, "composed scores")?,
        );
        let err = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
            .fold(0f32, |e, d| if d.is_nan() { f32::NAN } else { e.max(d) });
        worst = worst.map(|w| if err.is_nan() { f32::NAN } else { w.max(err) });
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::default_device;

    /// The fused kernel gives the composed MLP's scores (where the device has one: the CubeCL
    /// runtimes).
    #[test]
    fn the_fused_scores_are_the_composed_mlps() {
        let dev = default_device().unwrap();
        let err = self_check(&dev, 11).unwrap();
        let kind = crate::device::default_backend().unwrap();
        if !matches!(kind.name(), "flex" | "ndarray") {
            assert!(err.is_some(), "{} has a kernel", kind.name());
        }
        if let Some(e) = err {
            // The composed products run in TF32 on a GPU; the kernel in f32.
            assert!(
                e <= crate::device::float_tolerance(1e-5),
                "largest relative difference {e}"
            );
        }
    }

    /// Exact numbers on a hand-sized MLP (m = 2, m2 = 1), both sides of the LeakyReLU, and an
    /// empty candidate list.
    #[test]
    fn scores_by_hand() {
        let dev = default_device().unwrap();
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
            crate::tensors::to_vec(s.reshape([2, 1])),
            vec![18.25, -4.75]
        );
        let none = pair_mlp_scores(&mlp, idx(vec![]), idx(vec![]), v(vec![]), p, q).unwrap();
        assert_eq!(none.dims(), [0]);
    }
}
