//! A fused CPU kernel of the [`Policy`]: the same network (GAT layers, optional node BatchNorm,
//! LeakyReLU, NaN guard, scoring MLP, log-softmax) as plain Rust loops over a flat parameter
//! vector, with a hand-written backward pass; [`HostAdam`](adam::HostAdam) is the Adam
//! step identical to Burn's that trains it.
//!
//! Why: a policy state is small (tens to a few thousand nodes, 16-wide embeddings), so Burn's
//! per-operation cost (allocation, dispatch, autodiff bookkeeping) dominates the arithmetic.
//! The kernel fuses each GAT layer's gather / attention / softmax / scatter into one pass over an
//! incoming-message CSR, and scores candidates with the first MLP layer split per endpoint:
//! `W1 · [X_u ‖ X_w ‖ f] = (X W1ᵤ)[u] + (X W1_w)[w] + f · w_f`, so the `2·hidden`-wide product is
//! computed once per node instead of once per candidate.
//!
//! The Burn [`Policy`] stays the reference: tests pin the kernel's log-probabilities and
//! gradients to Burn's forward and autodiff, and [`HostPolicy::from_policy`] /
//! [`HostPolicy::to_policy`] convert parameters both ways exactly.
//!
//! The pieces: this module holds the parameter layout ([`HostPolicy`]) and the forward pass's
//! record ([`Trace`]); a pass reads a [`PolicyInput`] (a state in [`StateBlocks`], its
//! [`Adjacency`] and the candidate actions); `forward` and `backward` hold the two passes,
//! `ops` the dense products they share, and [`reinforce_score_grad`] turns a REINFORCE loss into
//! the backward pass's input.
//!
//! ```
//! use induce_models::policy::host::{Adjacency, HostPolicy};
//! use induce_models::{PolicyConfig, device::default_device};
//! let dev = default_device().unwrap();
//! let policy = HostPolicy::from_policy(&PolicyConfig::new(2).init(&dev));
//! //  0 ─ 1 ─ 2 : candidates delete (0, 1), add (0, 2)
//! let g = Adjacency::with_self_loops(3, &[(0, 1), (1, 2)]).unwrap();
//! let trace = policy.forward(&[1.0; 6], &g, &[0, 0], &[1, 2], &[0.0, 1.0]);
//! let p: f32 = trace.log_probs().iter().map(|l| l.exp()).sum();
//! assert!((p - 1.0).abs() < 1e-5);
//! ```

pub mod adam;

mod backward;
mod blocks;
mod forward;
mod input;
mod ops;

pub use crate::linalg::Adjacency;
pub use backward::{listwise_score_grad, reinforce_score_grad};
pub use blocks::{FirstBlockProduct, SparseRows, StateBlocks};
pub use input::PolicyInput;
pub use ops::log_softmax;

use burn::module::Param;
use burn::nn::Linear;
use burn::tensor::{Device, Tensor, TensorData};

use crate::policy::gat::GatConv;
use crate::policy::{NodeBatchNorm, Policy};

/// Where one GAT layer's parameters sit in the flat vector.
#[derive(Debug, Clone, Copy)]
struct GatSlots {
    input: usize,
    out: usize,
    w: usize,
    a_src: usize,
    a_dst: usize,
    bias: usize,
    bn: Option<(usize, usize)>,
}

/// Where one linear layer's parameters sit in the flat vector.
#[derive(Debug, Clone, Copy)]
struct LinSlots {
    input: usize,
    out: usize,
    w: usize,
    b: usize,
}

/// The [`Policy`] as a flat parameter vector with a fused forward and backward pass.
///
/// Only the architecture of [`Policy`] is supported: any number of GAT layers, an MLP of three
/// linear layers (`2·hidden + 1 → m → m → 1`) with biases.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// All parameters, layer by layer (see [`HostPolicy::num_params`]).
    pub params: Vec<f32>,
    gat: Vec<GatSlots>,
    mlp: [LinSlots; 3],
    attention_slope: f32,
    activation_slope: f32,
    nan_to_num: bool,
}

/// Everything the backward pass needs from one forward pass, and its result.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    layers: Vec<LayerTrace>,
    emb: Vec<f32>,
    nan_mask: Vec<bool>,
    log_probs: Vec<f32>,
}

#[derive(Debug, Clone, Default)]
struct LayerTrace {
    /// Layer input `[n, in]` (empty for the first layer: the caller's state).
    input: Vec<f32>,
    /// `h = x W`, `[n, out]`.
    h: Vec<f32>,
    a_src: Vec<f32>,
    a_dst: Vec<f32>,
    /// Attention of each message (CSR order).
    alpha: Vec<f32>,
    /// Pre-activation after the optional BatchNorm, `[n, out]`.
    y: Vec<f32>,
    /// BatchNorm: normalised `x̂` and `1 / sqrt(var + eps)` per feature.
    xhat: Vec<f32>,
    inv_std: Vec<f32>,
}

impl Trace {
    /// `log Π(a | S)` of every candidate, `[C]`.
    pub fn log_probs(&self) -> &[f32] {
        &self.log_probs
    }

    /// Node embeddings after the last GAT layer, row-major `[n, hidden]`.
    pub fn embeddings(&self) -> &[f32] {
        &self.emb
    }
}

fn read<const D: usize>(p: &Param<Tensor<D>>) -> Vec<f32> {
    p.val()
        .into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .expect("float parameter converts to f32")
}

impl HostPolicy {
    /// Copies a Burn [`Policy`]'s parameters (exactly) into a host kernel.
    pub fn from_policy(policy: &Policy) -> Self {
        assert_eq!(policy.mlp.len(), 3, "the policy MLP has three layers");
        let mut params = Vec::new();
        let mut push = |v: Vec<f32>| {
            let at = params.len();
            params.extend(v);
            at
        };
        // Burn's visiting order: every GAT layer, then every BatchNorm, then the MLP.
        let mut gat = Vec::with_capacity(policy.gat.len());
        for layer in &policy.gat {
            let [input, out] = layer.lin.weight.dims();
            let w = push(read(&layer.lin.weight));
            let a_src = push(read(&layer.att_src));
            let a_dst = push(read(&layer.att_dst));
            let bias = push(read(&layer.bias));
            gat.push(GatSlots {
                input,
                out,
                w,
                a_src,
                a_dst,
                bias,
                bn: None,
            });
        }
        for (slots, bn) in gat.iter_mut().zip(&policy.norm) {
            slots.bn = Some((push(read(&bn.weight)), push(read(&bn.bias))));
        }
        let mut lin = |l: &Linear| {
            let [input, out] = l.weight.dims();
            let w = push(read(&l.weight));
            let b = push(read(
                l.bias.as_ref().expect("policy MLP layers have a bias"),
            ));
            LinSlots { input, out, w, b }
        };
        let mlp = [
            lin(&policy.mlp[0]),
            lin(&policy.mlp[1]),
            lin(&policy.mlp[2]),
        ];
        Self {
            params,
            gat,
            mlp,
            attention_slope: policy.gat.first().map_or(0.2, |l| l.attention_slope as f32),
            activation_slope: policy.activation_slope as f32,
            nan_to_num: policy.nan_to_num,
        }
    }

    /// The parameters as a Burn [`Policy`] on `device` (exact copy).
    pub fn to_policy(&self, device: &Device) -> Policy {
        let p2 = |at: usize, r: usize, c: usize| {
            Param::from_tensor(Tensor::<2>::from_data(
                TensorData::new(self.params[at..at + r * c].to_vec(), [r, c]),
                device,
            ))
        };
        let p1 = |at: usize, n: usize| {
            Param::from_tensor(Tensor::<1>::from_data(
                TensorData::new(self.params[at..at + n].to_vec(), [n]),
                device,
            ))
        };
        let gat = self
            .gat
            .iter()
            .map(|s| GatConv {
                lin: Linear {
                    weight: p2(s.w, s.input, s.out),
                    bias: None,
                },
                att_src: p2(s.a_src, s.out, 1),
                att_dst: p2(s.a_dst, s.out, 1),
                bias: p1(s.bias, s.out),
                attention_slope: f64::from(self.attention_slope),
            })
            .collect();
        let norm = self
            .gat
            .iter()
            .filter_map(|s| {
                s.bn.map(|(g, b)| NodeBatchNorm {
                    weight: p1(g, s.out),
                    bias: p1(b, s.out),
                })
            })
            .collect();
        let mlp = self
            .mlp
            .iter()
            .map(|s| Linear {
                weight: p2(s.w, s.input, s.out),
                bias: Some(p1(s.b, s.out)),
            })
            .collect();
        Policy {
            gat,
            norm,
            mlp,
            activation_slope: f64::from(self.activation_slope),
            nan_to_num: self.nan_to_num,
        }
    }

    /// Number of scalar parameters.
    pub fn num_params(&self) -> usize {
        self.params.len()
    }

    /// Width of the state vector the policy expects.
    pub fn input_dim(&self) -> usize {
        self.gat.first().map_or(0, |s| s.input)
    }

    fn hidden(&self) -> usize {
        self.gat.last().map_or(0, |s| s.out)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::PolicyConfig;
    use crate::kernels::tensors::{GraphTensors, matrix, to_vec};
    use crate::policy::CandidateTensors;
    use crate::policy::host::adam::HostAdam;
    use crate::testing::test_device;
    use burn::module::Module;
    use burn::module::ModuleVisitor;
    use burn::optim::{AdamConfig, GradientsParams};

    /// Flattens parameters (or their gradients) in module visiting order.
    struct Flat<'a> {
        out: Vec<f32>,
        grads: Option<&'a GradientsParams>,
    }
    impl ModuleVisitor for Flat<'_> {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            let t = match self.grads {
                None => p.val(),
                Some(g) => g.get::<D>(p.id).expect("every parameter has a gradient"),
            };
            self.out.extend(
                t.into_data()
                    .convert::<f32>()
                    .try_into_vec::<f32>()
                    .unwrap(),
            );
        }
    }
    fn flat(p: &Policy, grads: Option<&GradientsParams>) -> Vec<f32> {
        let mut v = Flat {
            out: Vec::new(),
            grads,
        };
        p.visit(&mut v);
        v.out
    }

    //  0 ─ 1 ─ 2 ─ 3    4 isolated
    //   ╲     ╱
    //     ─5─
    pub(super) const EDGES: [(u32, u32); 5] = [(0, 1), (1, 2), (2, 3), (0, 5), (5, 2)];
    pub(super) const U: [u32; 6] = [0, 0, 0, 1, 2, 4];
    pub(super) const W: [u32; 6] = [2, 3, 4, 2, 3, 5];
    pub(super) const F: [f32; 6] = [1.0, 1.0, 1.0, 0.0, 0.0, 1.0];

    pub(super) fn state(dim: usize) -> Vec<f32> {
        (0..6 * dim)
            .map(|i| ((i * 7 % 11) as f32) * 0.25 - 1.0)
            .collect()
    }

    /// The kernel's log-probabilities and gradients equal Burn's forward and autodiff, with and
    /// without BatchNorm, and the parameter round trip is exact.
    #[test]
    fn kernel_matches_burn_forward_and_autodiff() {
        for batch_norm in [false, true] {
            let dev = test_device().unwrap().autodiff();
            let dim = 5;
            let cfg = PolicyConfig::new(dim)
                .with_batch_norm(batch_norm)
                .with_init_seed(3);
            let policy = cfg.init(&dev);
            let host = HostPolicy::from_policy(&policy);
            assert_eq!(flat(&host.to_policy(&dev), None), flat(&policy, None));
            assert_eq!(host.params.len(), flat(&policy, None).len());

            let x = state(dim);
            let g = Adjacency::with_self_loops(6, &EDGES).unwrap();
            let trace = host.forward(&x, &g, &U, &W, &F);
            let gt = GraphTensors::new(6, &EDGES, &dev).unwrap();
            let c = CandidateTensors::new(&U, &W, &F, &dev);
            let logp = policy.log_probs(matrix(&x, 6, dim, &dev), &gt, &c);
            let want = to_vec(logp.clone().unsqueeze_dim(0));
            for (a, b) in trace.log_probs().iter().zip(&want) {
                let tol = crate::testing::float_tolerance(1e-5);
                assert!((a - b).abs() < tol, "{:?} vs {want:?}", trace.log_probs());
            }

            // Loss of one REINFORCE state: action 4, advantage −0.7, entropy 0.1, scale 0.5.
            let (action, adv, eta, scale) = (4usize, -0.7f32, 0.1f32, 0.5f32);
            let entropy = -(logp.clone().exp() * logp.clone()).sum();
            let chosen = logp
                .select(0, crate::kernels::tensors::indices(&[action as u32], &dev))
                .sum();
            let loss = -(chosen * adv + entropy * eta) * scale;
            let grads = GradientsParams::from_grads(loss.backward(), &policy);
            let want = flat(&policy, Some(&grads));
            let ds = reinforce_score_grad(trace.log_probs(), action, adv, eta, scale);
            let mut got = vec![0.0; host.num_params()];
            let input = PolicyInput::new(StateBlocks::whole(&x, dim), &g, &U, &W, &F);
            host.backward_blocks(&trace, &input, &ds, &mut got);
            let max = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            assert!(max > 1e-3, "gradients are not trivially zero");
            for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (a - b).abs()
                        < crate::testing::float_tolerance(1e-5)
                            + crate::testing::float_tolerance(1e-4) * b.abs(),
                    "batch_norm {batch_norm}: parameter {i}: kernel {a} vs burn {b}"
                );
            }

            // Two Adam steps agree with Burn's optimiser.
            let mut adam = HostAdam::new(host.num_params());
            let mut burn_adam = AdamConfig::new().init();
            let mut params = host.params.clone();
            let mut bp = policy;
            for _ in 0..2 {
                adam.step(&mut params, &got, 0.01);
                let gp = {
                    let mut gp = GradientsParams::new();
                    let tmp = HostPolicy {
                        params: got.clone(),
                        ..host.clone()
                    }
                    .to_policy(&dev);
                    register_like(&bp, &tmp, &mut gp);
                    gp
                };
                bp = burn_adam.step(0.01, bp, gp);
            }
            for (a, b) in params.iter().zip(flat(&bp, None)) {
                assert!((a - b).abs() < 1e-6, "adam: {a} vs {b}");
            }
        }
    }

    /// Registers the values of `src`'s parameters as gradients of `dst`'s (same structure).
    fn register_like(dst: &Policy, src: &Policy, gp: &mut GradientsParams) {
        struct Ids(Vec<burn::module::ParamId>);
        impl ModuleVisitor for Ids {
            fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
                self.0.push(p.id);
            }
        }
        struct Reg<'a> {
            ids: std::vec::IntoIter<burn::module::ParamId>,
            gp: &'a mut GradientsParams,
        }
        impl ModuleVisitor for Reg<'_> {
            fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
                let id = self.ids.next().unwrap();
                self.gp.register::<D>(id, p.val().inner());
            }
        }
        let mut ids = Ids(Vec::new());
        dst.visit(&mut ids);
        src.visit(&mut Reg {
            ids: ids.0.into_iter(),
            gp,
        });
    }
}
