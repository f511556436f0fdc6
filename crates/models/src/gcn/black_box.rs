//! The paper's GCN seen through the crate's traits: the Burn module on a device as a
//! [`BlackBox`] ([`GcnBlackBox`]), the choice of kernel ([`gcn_black_box`]) and the module as an
//! [`EdgeWeighted`] model (the soft-mask baselines' view).

use burn::module::Module;
use burn::tensor::{Device, Tensor};
use induce_graph::Features;

use super::{GCN_LAYERS, Gcn};
use crate::black_box::batched::VerdictBatch;
use crate::black_box::{BlackBox, EdgeWeighted, LogProbs, check_features};
use crate::error::Result;
use crate::kernels::tensors::{DegreeGradient, GraphTensors, WeightedEdges, matrix, to_vec};

/// A Burn [`Gcn`] on a device, as a [`BlackBox`]. Runs without autodiff.
#[derive(Debug, Clone)]
pub struct GcnBlackBox {
    model: Gcn,
    device: Device,
}

impl GcnBlackBox {
    /// Wraps a trained model; it is moved to `device` in inference mode.
    pub fn new(model: Gcn, device: &Device) -> Self {
        Self {
            model: model.valid().to_device(device),
            device: device.clone(),
        }
    }

    /// The wrapped model.
    pub fn model(&self) -> &Gcn {
        &self.model
    }

    /// The device it runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }
}

impl BlackBox for GcnBlackBox {
    fn input_dim(&self) -> usize {
        self.model.input_dim()
    }

    fn differentiable(&self) -> Option<&Gcn> {
        Some(&self.model)
    }

    fn num_classes(&self) -> usize {
        self.model.num_classes()
    }

    fn message_passing_layers(&self) -> Option<u32> {
        Some(GCN_LAYERS)
    }

    fn batched(&self, x: &Features, edges: &[(u32, u32)]) -> Result<Option<VerdictBatch<'_>>> {
        check_features(x, self.input_dim())?;
        self.model.check_widths()?;
        // A GCN whose layers differ in width takes per-episode verdicts instead.
        if !VerdictBatch::supports(&self.model) {
            return Ok(None);
        }
        VerdictBatch::new(&self.model, x, edges, &self.device).map(Some)
    }

    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
        check_features(x, self.input_dim())?;
        self.model.check_widths()?;
        let n = x.num_nodes();
        let g = GraphTensors::new(n, edges, &self.device)?;
        let xt = matrix(x.as_slice(), n, x.dim(), &self.device);
        let out = to_vec(self.model.forward(xt, &g));
        LogProbs::new(n, self.num_classes(), out)
    }
}

/// The paper's GCN as the black box a [`Kernel`](crate::Kernel) evaluates: its host copy
/// ([`HostGcn`](crate::HostGcn): prepared and incremental evaluation on the CPU) for
/// [`Kernel::Host`](crate::Kernel::Host), the Burn module on `device` for
/// [`Kernel::Burn`](crate::Kernel::Burn). The same function either way (pinned by tests).
pub fn gcn_black_box(
    gcn: &Gcn,
    kernel: crate::Kernel,
    device: &Device,
) -> Result<Box<dyn BlackBox>> {
    Ok(match kernel {
        crate::Kernel::Host => Box::new(crate::HostGcn::from_gcn(gcn)?),
        crate::Kernel::Burn => Box::new(GcnBlackBox::new(gcn.clone(), device)),
    })
}

impl EdgeWeighted for Gcn {
    fn input_dim(&self) -> usize {
        Gcn::input_dim(self)
    }

    fn forward_weighted(
        &self,
        x: Tensor<2>,
        edges: &WeightedEdges,
        weights: Tensor<1>,
        degree_gradient: DegreeGradient,
    ) -> Tensor<2> {
        Gcn::forward_weighted(self, x, edges, weights, degree_gradient)
    }

    fn embeddings(&self, x: Tensor<2>, edges: &WeightedEdges) -> Tensor<2> {
        let ones = Tensor::ones([edges.num_edges()], &x.device());
        Gcn::embeddings(self, x, &edges.with_weights(ones, DegreeGradient::Detached))
    }

    fn to_device_boxed(&self, device: &Device) -> Box<dyn EdgeWeighted> {
        Box::new(self.clone().to_device(device).no_grad())
    }

    fn as_gcn(&self) -> Option<&Gcn> {
        Some(self)
    }
}
