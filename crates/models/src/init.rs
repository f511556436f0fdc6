//! Seeded parameter initialisation from a host RNG (reproducible regardless of test threads).

use burn::module::Param;
use burn::tensor::{Device, Tensor, TensorData};
use rand::Rng;
use rand::rngs::StdRng;

/// `bound` as drawn from: a non-finite bound (`1/sqrt(0)` of an empty fan-in) is 0, as in
/// PyTorch's `nn.Linear` initialisation.
fn finite(bound: f32) -> f32 {
    if bound.is_finite() { bound } else { 0.0 }
}

/// `U(-bound, bound)` matrix parameter of shape `[rows, cols]` (zeros for a non-finite bound).
pub fn uniform2(
    rng: &mut StdRng,
    rows: usize,
    cols: usize,
    bound: f32,
    d: &Device,
) -> Param<Tensor<2>> {
    let bound = finite(bound);
    let v: Vec<f32> = (0..rows * cols)
        .map(|_| rng.random_range(-bound..=bound))
        .collect();
    Param::from_tensor(Tensor::from_data(TensorData::new(v, [rows, cols]), d))
}

/// `U(-bound, bound)` vector parameter of length `n` (zeros for a non-finite bound).
pub(crate) fn uniform1(rng: &mut StdRng, n: usize, bound: f32, d: &Device) -> Param<Tensor<1>> {
    let bound = finite(bound);
    let v: Vec<f32> = (0..n).map(|_| rng.random_range(-bound..=bound)).collect();
    Param::from_tensor(Tensor::from_data(TensorData::new(v, [n]), d))
}

/// Vector parameter filled with `value`.
pub(crate) fn constant1(n: usize, value: f32, d: &Device) -> Param<Tensor<1>> {
    Param::from_tensor(Tensor::from_data(TensorData::new(vec![value; n], [n]), d))
}

/// Glorot/Xavier uniform bound for a `[fan_in, fan_out]` weight.
pub(crate) fn glorot(fan_in: usize, fan_out: usize) -> f32 {
    (6.0 / (fan_in + fan_out) as f32).sqrt()
}
