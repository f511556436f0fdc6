//! The differentiable form of a black box: what the gradient-based baselines (CF-GNNExplainer,
//! CF², PGExplainer) optimise a soft edge mask through.

use burn::tensor::{Device, Tensor};

use crate::gcn::Gcn;
use crate::kernels::tensors::{DegreeGradient, WeightedEdges};

/// A black box's log-probabilities as Burn tensors, differentiable with respect to a weight in
/// `[0, 1]` on every edge: weight 1 everywhere is the model on the graph, weight 0 removes the
/// edge exactly (so a thresholded mask is judged by the model itself), and in between the model
/// sees a partially present edge. Each model says how an edge weight enters it (the paper's GCN:
/// [`Gcn::forward_weighted`]; PyG models: [`PygNet`](crate::pyg::PygNet)'s implementation).
///
/// Obtained from [`BlackBox::edge_weighted`](crate::BlackBox::edge_weighted).
pub trait EdgeWeighted: Send + Sync + std::fmt::Debug {
    /// Feature dimension the model expects.
    fn input_dim(&self) -> usize;

    /// Class log-probabilities with weight `weights[k]` on the `k`-th edge of `edges`; with
    /// [`DegreeGradient::Detached`], normalisations by (weighted) degrees are treated as
    /// constants.
    ///
    /// # Shapes
    /// - x: `[n, d]`; weights: `[m]` (one per edge of `edges`); output: `[n, C]`
    fn forward_weighted(
        &self,
        x: Tensor<2>,
        edges: &WeightedEdges,
        weights: Tensor<1>,
        degree_gradient: DegreeGradient,
    ) -> Tensor<2>;

    /// Node embeddings on the unweighted graph (PGExplainer's edge features are built from
    /// them): the GCN's three convolutions concatenated, a PyG model's last layer.
    ///
    /// # Shapes
    /// - x: `[n, d]`; output: `[n, e]`
    fn embeddings(&self, x: Tensor<2>, edges: &WeightedEdges) -> Tensor<2>;

    /// A copy for `device` (its parameters detached from any gradient).
    fn to_device_boxed(&self, device: &Device) -> Box<dyn EdgeWeighted>;

    /// The paper's GCN, when that is what this is (the host kernels differentiate it).
    fn as_gcn(&self) -> Option<&Gcn> {
        None
    }
}
