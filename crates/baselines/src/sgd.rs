//! The optimisers the mask-based baselines use, on host parameter vectors: SGD with (Nesterov)
//! momentum and Adam, with PyTorch's update rules (what the methods' authors ran).

use serde::{Deserialize, Serialize};

/// An optimiser and its settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Optimiser {
    /// `v ← μ v + g` (`v = g` at the first step); the step is `lr · (g + μ v)` with Nesterov
    /// momentum, `lr · v` otherwise.
    Sgd {
        /// Learning rate.
        lr: f32,
        /// Momentum μ (0: plain SGD).
        momentum: f32,
        /// Nesterov momentum.
        nesterov: bool,
    },
    /// Adam with β = (0.9, 0.999), ε = 1e-8 and bias correction.
    Adam {
        /// Learning rate.
        lr: f32,
    },
}

/// The running state of an [`Optimiser`] over one parameter vector.
#[derive(Debug, Clone)]
pub struct OptimiserState {
    kind: Optimiser,
    m: Vec<f32>,
    v: Vec<f32>,
    t: i32,
}

impl OptimiserState {
    /// A fresh state for `len` parameters.
    pub fn new(kind: Optimiser, len: usize) -> Self {
        Self {
            kind,
            m: vec![0.0; len],
            v: vec![0.0; len],
            t: 0,
        }
    }

    /// True when a zero gradient would leave the parameters unchanged forever (no momentum
    /// left): an optimisation whose gradient stays zero can stop.
    pub fn is_at_rest(&self) -> bool {
        match self.kind {
            Optimiser::Sgd { .. } => self.m.iter().all(|&x| x == 0.0),
            Optimiser::Adam { .. } => false,
        }
    }

    /// Applies one step with gradient `g` to `params`.
    pub fn step(&mut self, params: &mut [f32], g: &[f32]) {
        self.t += 1;
        match self.kind {
            Optimiser::Sgd {
                lr,
                momentum,
                nesterov,
            } => {
                for ((p, &gi), buf) in params.iter_mut().zip(g).zip(self.m.iter_mut()) {
                    let d = if momentum == 0.0 {
                        gi
                    } else {
                        *buf = if self.t == 1 {
                            gi
                        } else {
                            momentum * *buf + gi
                        };
                        if nesterov { gi + momentum * *buf } else { *buf }
                    };
                    *p -= lr * d;
                }
            }
            Optimiser::Adam { lr } => {
                let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
                let c1 = 1.0 - b1.powi(self.t);
                let c2 = 1.0 - b2.powi(self.t);
                for (((p, &gi), m), v) in params
                    .iter_mut()
                    .zip(g)
                    .zip(self.m.iter_mut())
                    .zip(self.v.iter_mut())
                {
                    *m = b1 * *m + (1.0 - b1) * gi;
                    *v = b2 * *v + (1.0 - b2) * gi * gi;
                    *p -= lr * (*m / c1) / ((*v / c2).sqrt() + eps);
                }
            }
        }
    }
}

/// Scales `g` so that its Euclidean norm is at most `max_norm` (PyTorch's `clip_grad_norm_`,
/// with its `1e-6` guard).
pub fn clip_norm(g: &mut [f32], max_norm: f32) {
    let norm = g.iter().map(|x| x * x).sum::<f32>().sqrt();
    let scale = max_norm / (norm + 1e-6);
    if scale < 1.0 {
        g.iter_mut().for_each(|x| *x *= scale);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgd_momentum_and_nesterov_follow_pytorch() {
        // Two steps, g = 1 then 2, lr 0.1, μ 0.9.
        let mut p = [0.0f32];
        let mut s = OptimiserState::new(
            Optimiser::Sgd {
                lr: 0.1,
                momentum: 0.9,
                nesterov: false,
            },
            1,
        );
        s.step(&mut p, &[1.0]); // v = 1, p = -0.1
        s.step(&mut p, &[2.0]); // v = 2.9, p = -0.39
        assert!((p[0] + 0.39).abs() < 1e-6, "{p:?}");
        let mut q = [0.0f32];
        let mut s = OptimiserState::new(
            Optimiser::Sgd {
                lr: 0.1,
                momentum: 0.9,
                nesterov: true,
            },
            1,
        );
        s.step(&mut q, &[1.0]); // v = 1, d = 1.9
        s.step(&mut q, &[2.0]); // v = 2.9, d = 4.61
        assert!((q[0] + 0.651).abs() < 1e-6, "{q:?}");
        assert!(!s.is_at_rest());
        let plain = OptimiserState::new(
            Optimiser::Sgd {
                lr: 0.1,
                momentum: 0.0,
                nesterov: false,
            },
            1,
        );
        assert!(plain.is_at_rest());
    }

    #[test]
    fn adam_first_step_is_lr_times_sign() {
        let mut p = [1.0f32, 1.0];
        let mut s = OptimiserState::new(Optimiser::Adam { lr: 0.01 }, 2);
        s.step(&mut p, &[3.0, -0.5]);
        assert!(
            (p[0] - 0.99).abs() < 1e-6 && (p[1] - 1.01).abs() < 1e-6,
            "{p:?}"
        );
    }

    #[test]
    fn clipping_bounds_the_norm() {
        let mut g = [3.0f32, 4.0];
        clip_norm(&mut g, 2.0);
        assert!((g[0] - 1.2).abs() < 1e-5 && (g[1] - 1.6).abs() < 1e-5);
        let mut h = [0.3f32, 0.4];
        clip_norm(&mut h, 2.0);
        assert_eq!(h, [0.3, 0.4]);
    }
}
