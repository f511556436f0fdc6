//! A black box's gradient with respect to a weight on every node pair of a neighbourhood
//! ([`GradModel`], [`SoftNeighbourhood`]): what the mask baselines optimise, the bounded greedy
//! search ranks its actions by, and InduCE's estimated state column (`induce_rl`'s
//! `StateLayout::Estimated`) reads.

use burn::tensor::{Device, Int, Tensor, TensorData};
use induce_graph::Features;
use induce_models::gcn::host::grad::{BoundEdgeWeightGcn, EdgeWeightGcn};
use induce_models::kernels::tensors::matrix;
use induce_models::{BlackBox, DegreeGradient, EdgeWeighted, Kernel, WeightedEdges};

use crate::{ExplainError, Result};

/// A black box's differentiable form ([`BlackBox::edge_weighted`]) prepared for one gradient
/// kernel: the paper's GCN runs on the host kernel or Burn as configured; any other model (the
/// PyG layers) always runs on Burn's autodiff (the host kernels differentiate the GCN only).
#[derive(Debug)]
pub struct GradModel {
    net: Box<dyn EdgeWeighted>,
    host: Option<EdgeWeightGcn>,
    kernel: Kernel,
    device: Device,
}

impl GradModel {
    /// The differentiable form of `black_box` ([`BlackBox::edge_weighted`]) for `method`'s
    /// gradients on `kernel` (Burn runs on `device`'s autodiff version). A black box without
    /// gradients is [`ExplainError::NotDifferentiable`] naming `method`.
    pub fn of(
        black_box: &dyn BlackBox,
        method: &str,
        kernel: Kernel,
        device: &Device,
    ) -> Result<Self> {
        let net = differentiable(black_box, method)?;
        Self::new(net, kernel, device)
    }

    /// Copies `net` (the GCN to the host too) for gradients on `kernel`; Burn runs on `device`'s
    /// autodiff version.
    pub fn new(net: &dyn EdgeWeighted, kernel: Kernel, device: &Device) -> Result<Self> {
        Ok(Self {
            net: net.to_device_boxed(device),
            host: net.as_gcn().map(EdgeWeightGcn::from_gcn).transpose()?,
            kernel,
            device: device.clone(),
        })
    }

    /// The differentiable model.
    pub fn net(&self) -> &dyn EdgeWeighted {
        self.net.as_ref()
    }

    /// The graph of `features`' nodes whose pairs `pairs` (local ids) carry a weight each, bound
    /// to the model for the gradient of `target`'s output with respect to those weights.
    ///
    /// Errors: features of another width than the model's, a pair or the target out of range.
    pub fn bind(
        &self,
        features: &Features,
        pairs: &[(u32, u32)],
        target: usize,
    ) -> Result<SoftNeighbourhood<'_>> {
        if self.net.input_dim() != features.dim() {
            return Err(ExplainError::FeatureDimension {
                expected: self.net.input_dim(),
                got: features.dim(),
            });
        }
        if target >= features.num_nodes() {
            return Err(ExplainError::InvalidValue {
                what: "target",
                value: target.to_string(),
                reason: format!("outside the {} nodes bound", features.num_nodes()),
            });
        }
        Ok(SoftNeighbourhood(match (&self.host, self.kernel) {
            (Some(host), Kernel::Host) => Soft::Host(host.bind(features, pairs, target)?),
            _ => {
                let ad = self.device.clone().autodiff();
                let n = features.num_nodes();
                Soft::Burn(Box::new(BurnSoft {
                    model: self.net.to_device_boxed(&ad),
                    x: matrix(features.as_slice(), n, features.dim(), &ad),
                    edges: WeightedEdges::new(n, pairs, &ad)?,
                    target: Tensor::from_data(TensorData::new(vec![target as i64], [1]), &ad),
                    device: ad,
                }))
            }
        }))
    }

    /// `features` through the model's first layer, once, for many bindings of the same nodes
    /// ([`Self::bind_with`]): what the host kernel binds (`X W₁`); nothing on Burn's.
    ///
    /// Errors: features of another width than the model's.
    pub fn first_layer(&self, features: &Features) -> Result<FirstLayer> {
        if self.net.input_dim() != features.dim() {
            return Err(ExplainError::FeatureDimension {
                expected: self.net.input_dim(),
                got: features.dim(),
            });
        }
        Ok(FirstLayer {
            nodes: features.num_nodes(),
            product: match (&self.host, self.kernel) {
                (Some(host), Kernel::Host) => Some(host.first_layer(features)?),
                _ => None,
            },
        })
    }

    /// [`Self::bind`] with the features' [`FirstLayer`] computed once: the same result, without
    /// multiplying the features into the first layer again. `first` must come from `features`.
    ///
    /// Errors: as [`Self::bind`]; a `first` of another node count than `features`.
    pub fn bind_with<'m>(
        &'m self,
        features: &Features,
        first: &'m FirstLayer,
        pairs: &[(u32, u32)],
        target: usize,
    ) -> Result<SoftNeighbourhood<'m>> {
        if first.nodes != features.num_nodes() {
            return Err(ExplainError::InvalidValue {
                what: "first-layer product",
                value: format!("{} nodes", first.nodes),
                reason: format!("the features have {}", features.num_nodes()),
            });
        }
        match (&self.host, self.kernel, &first.product) {
            (Some(host), Kernel::Host, Some(xw)) => Ok(SoftNeighbourhood(Soft::Host(
                host.bind_first_layer(xw, pairs, target)?,
            ))),
            _ => self.bind(features, pairs, target),
        }
    }

    /// The graph of `features`' nodes with its `edges` (local ids, each once), bound to the
    /// model for the gradient of `target`'s output with respect to the feature entries (what a
    /// feature mask, CF-GNNFeatures, optimises). Always Burn's autodiff on the model's device.
    ///
    /// Errors: features of another width than the model's, an edge or the target out of range.
    pub fn bind_features(
        &self,
        features: &Features,
        edges: &[(u32, u32)],
        target: usize,
    ) -> Result<SoftFeatures> {
        if self.net.input_dim() != features.dim() {
            return Err(ExplainError::FeatureDimension {
                expected: self.net.input_dim(),
                got: features.dim(),
            });
        }
        let n = features.num_nodes();
        if target >= n {
            return Err(ExplainError::InvalidValue {
                what: "target",
                value: target.to_string(),
                reason: format!("outside the {n} nodes bound"),
            });
        }
        let ad = self.device.clone().autodiff();
        let ones = vec![1.0f32; edges.len()];
        Ok(SoftFeatures {
            model: self.net.to_device_boxed(&ad),
            shape: (n, features.dim()),
            weights: Tensor::from_data(TensorData::new(ones, [edges.len()]), &ad),
            edges: WeightedEdges::new(n, edges, &ad)?,
            target: Tensor::from_data(TensorData::new(vec![target as i64], [1]), &ad),
            device: ad,
        })
    }

    /// The kernel the gradients run on: the configured one for the GCN, Burn for other models.
    pub fn kernel(&self) -> Kernel {
        match self.host {
            Some(_) => self.kernel,
            None => Kernel::Burn,
        }
    }
}

/// A neighbourhood's features through the model's first layer ([`GradModel::first_layer`]).
#[derive(Debug, Clone)]
pub struct FirstLayer {
    nodes: usize,
    /// `X W₁` on the host kernel; `None` where the binding multiplies the features itself.
    product: Option<Vec<f32>>,
}

enum Soft<'m> {
    Host(BoundEdgeWeightGcn<'m>),
    Burn(Box<BurnSoft>),
}

struct BurnSoft {
    model: Box<dyn EdgeWeighted>,
    x: Tensor<2>,
    edges: WeightedEdges,
    target: Tensor<1, Int>,
    device: Device,
}

/// A neighbourhood bound to the black box for soft masks: the target's log-probabilities with a
/// weight on every candidate pair, and their gradient (see [`Kernel`]).
pub struct SoftNeighbourhood<'m>(Soft<'m>);

impl std::fmt::Debug for SoftNeighbourhood<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Soft::Host(_) => "SoftNeighbourhood(host)",
            Soft::Burn(_) => "SoftNeighbourhood(burn)",
        })
    }
}

impl SoftNeighbourhood<'_> {
    /// The target's class log-probabilities with pair weights `weights` and the gradient of a
    /// loss `L(log p)` with respect to the weights, given `dloss(log p) = ∂L/∂ log p`. Degrees
    /// are detached with [`DegreeGradient::Detached`] (see [`WeightedEdges::with_weights`]).
    ///
    /// # Shapes
    /// - weights: `[pairs]`, in `[0, 1]`
    /// - output: (`[C]`, `[pairs]`)
    pub fn log_probs_and_grad(
        &self,
        weights: &[f32],
        degree_gradient: DegreeGradient,
        dloss: impl FnOnce(&[f32]) -> Vec<f32>,
    ) -> Result<(Vec<f32>, Vec<f32>)> {
        crate::oracle::count(1);
        let (lp, g) = match &self.0 {
            Soft::Host(b) => {
                if weights.len() != b.num_pairs() {
                    return Err(ExplainError::InvalidValue {
                        what: "pair weights",
                        value: weights.len().to_string(),
                        reason: format!("{} pairs are bound", b.num_pairs()),
                    });
                }
                b.log_probs_and_grad(weights, degree_gradient, dloss)
            }
            Soft::Burn(b) => {
                let BurnSoft {
                    model,
                    x,
                    edges,
                    target,
                    device,
                } = b.as_ref();
                let w = Tensor::<1>::from_data(
                    TensorData::new(weights.to_vec(), [weights.len()]),
                    device,
                )
                .require_grad();
                let row = model
                    .forward_weighted(x.clone(), edges, w.clone(), degree_gradient)
                    .select(0, target.clone());
                let lp = induce_models::kernels::tensors::to_vec(row.clone());
                let coef = dloss(&lp);
                let c = coef.len();
                let k = Tensor::<2>::from_data(TensorData::new(coef, [1, c]), device);
                // An output that does not depend on the weights (no pair reaches the target, or
                // a model that ignores them) has a zero gradient, and no autodiff graph.
                let loss = (row * k).sum();
                let g = match loss.is_tracked() {
                    true => w.grad(&loss.backward()).map(host),
                    false => None,
                };
                (lp, g.unwrap_or_else(|| vec![0.0; weights.len()]))
            }
        };
        if lp.iter().chain(&g).any(|v| !v.is_finite()) {
            return Err(ExplainError::InvalidConfig(
                "the black box's output or gradient on the soft mask is not finite".into(),
            ));
        }
        Ok((lp, g))
    }
}

/// A neighbourhood bound to the black box for gradients with respect to its feature entries
/// ([`GradModel::bind_features`]).
pub struct SoftFeatures {
    model: Box<dyn EdgeWeighted>,
    shape: (usize, usize),
    edges: WeightedEdges,
    weights: Tensor<1>,
    target: Tensor<1, Int>,
    device: Device,
}

impl std::fmt::Debug for SoftFeatures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SoftFeatures({} × {})", self.shape.0, self.shape.1)
    }
}

impl SoftFeatures {
    /// The target's class log-probabilities with feature matrix `x` (row-major, the bound
    /// nodes' rows) and the gradient of a loss `L(log p)` with respect to every entry of `x`,
    /// given `dloss(log p) = ∂L/∂ log p`.
    ///
    /// # Shapes
    /// - x: `[n · d]`
    /// - output: (`[C]`, `[n · d]`)
    pub fn log_probs_and_grad(
        &self,
        x: &[f32],
        dloss: impl FnOnce(&[f32]) -> Vec<f32>,
    ) -> Result<(Vec<f32>, Vec<f32>)> {
        let (n, d) = self.shape;
        if x.len() != n * d {
            return Err(ExplainError::InvalidValue {
                what: "features",
                value: format!("{} values", x.len()),
                reason: format!("the bound graph has {n} nodes of {d} features"),
            });
        }
        crate::oracle::count(1);
        let xt = matrix(x, n, d, &self.device).require_grad();
        let row = self
            .model
            .forward_weighted(
                xt.clone(),
                &self.edges,
                self.weights.clone(),
                DegreeGradient::Detached,
            )
            .select(0, self.target.clone());
        let lp = induce_models::kernels::tensors::to_vec(row.clone());
        let coef = dloss(&lp);
        let c = coef.len();
        let k = Tensor::<2>::from_data(TensorData::new(coef, [1, c]), &self.device);
        let loss = (row * k).sum();
        let g = match loss.is_tracked() {
            true => xt.grad(&loss.backward()),
            false => None,
        };
        let g = g.map_or_else(|| vec![0.0; n * d], induce_models::kernels::tensors::to_vec);
        if lp.iter().chain(&g).any(|v| !v.is_finite()) {
            return Err(ExplainError::InvalidConfig(
                "the black box's output or gradient on the soft features is not finite".into(),
            ));
        }
        Ok((lp, g))
    }
}

/// The differentiable form of `black_box`, or [`ExplainError::NotDifferentiable`] naming
/// `method`.
pub fn differentiable<'b>(
    black_box: &'b dyn BlackBox,
    method: &str,
) -> Result<&'b dyn EdgeWeighted> {
    black_box
        .edge_weighted()
        .ok_or_else(|| ExplainError::NotDifferentiable {
            method: method.to_string(),
        })
}

/// Reads a 1-D float tensor back to the host.
pub fn host(t: Tensor<1>) -> Vec<f32> {
    induce_models::kernels::tensors::to_vec(t.unsqueeze_dim(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use induce_models::device::default_device;
    use induce_models::{GcnBlackBox, GcnConfig};

    /// A target no pair reaches (an isolated node): on Burn's autodiff its output has no graph
    /// to differentiate, and the gradients are zero, not a panic.
    #[test]
    fn an_output_the_inputs_do_not_reach_has_zero_gradients() {
        let dev = default_device().unwrap();
        let bb = GcnBlackBox::new(GcnConfig::new(2, 3).with_init_seed(1).init(&dev), &dev);
        let net = bb.edge_weighted().unwrap();
        let model = GradModel::new(net, Kernel::Burn, &dev).unwrap();
        let x = Features::new(1, 2, vec![0.5, -1.0]).unwrap();
        let soft = model.bind(&x, &[], 0).unwrap();
        let (lp, g) = soft
            .log_probs_and_grad(&[], DegreeGradient::Through, |lp| vec![1.0; lp.len()])
            .unwrap();
        assert_eq!((lp.len(), g.len()), (3, 0));
        let soft = model.bind_features(&x, &[], 0).unwrap();
        let (_, gx) = soft
            .log_probs_and_grad(x.as_slice(), |lp| vec![1.0; lp.len()])
            .unwrap();
        assert_eq!(gx.len(), 2);
    }
}
