//! [`HostAdam`]: Burn's Adam optimiser on a flat parameter vector, for the host policy kernel
//! ([`HostPolicy::params`](super::HostPolicy::params)).

/// Adam on a flat parameter vector, step for step identical to `burn::optim::AdamConfig::new()`
/// (β₁ 0.9, β₂ 0.999, ε 1e-5, no weight decay): `θ −= lr · m̂ / (√v̂ + ε)` with Burn's placement
/// of the bias corrections. Serialisable, so that training can be checkpointed and resumed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostAdam {
    m: Vec<f32>,
    v: Vec<f32>,
    t: i32,
    beta_1: f32,
    beta_2: f32,
    epsilon: f32,
}

impl HostAdam {
    /// Zero moments for `num_params` parameters.
    pub fn new(num_params: usize) -> Self {
        Self {
            m: vec![0.0; num_params],
            v: vec![0.0; num_params],
            t: 0,
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-5,
        }
    }

    /// One update of `params` with `grads` at learning rate `lr`.
    pub fn step(&mut self, params: &mut [f32], grads: &[f32], lr: f64) {
        assert!(params.len() == self.m.len() && grads.len() == self.m.len());
        self.t += 1;
        let bc2 = (1.0 - self.beta_2.powi(self.t)).sqrt();
        let factor = bc2 / (1.0 - self.beta_1.powi(self.t));
        let eps = self.epsilon * bc2;
        let lr = lr as f32;
        for i in 0..params.len() {
            let g = grads[i];
            self.m[i] = self.m[i] * self.beta_1 + g * (1.0 - self.beta_1);
            self.v[i] = self.v[i] * self.beta_2 + g * g * (1.0 - self.beta_2);
            params[i] -= lr * (self.m[i] * factor / (self.v[i].sqrt() + eps));
        }
    }
}
