//! Counterfactual baselines for GNN node classification, each an
//! [`Explainer`](induce_explain::Explainer) evaluated by the same pipeline and metrics as InduCE
//! (the comparisons of the InduCE paper's Tables 1–3 and 5):
//!
//! | method | file | edits | paper |
//! |---|---|---|---|
//! | `random` | [`random`] | deletions | Random of CF-GNNExplainer |
//! | `cf-gnnexplainer` | [`cf_gnnexplainer`] | deletions | Lucic et al., AISTATS 2022 |
//! | `cf-gnnexplainer++` | [`cf_gnnexplainer`] | both | InduCE paper, §4.4 |
//! | `cf-gnnfeatures` | [`cf_gnnfeatures`] | feature entries (zeroed) | the feature counterpart of CF-GNNExplainer (COMBINEX's baseline) |
//! | `cf2` | [`cf2`] | deletions | Tan et al., WWW 2022 (α = 0) |
//! | `pgexplainer` | [`pgexplainer`] | deletions (top-k) | Luo et al., NeurIPS 2020 |
//! | `greedy` | [`greedy`] | both | exhaustive one-step search in InduCE's action space (or a first-order shortlist of it) |
//! | `exact` | [`exact`] | both | the certified minimum in InduCE's action space |
//!
//! GEM (Lin et al., ICML 2021) is not implemented: its distillation of a ground-truth
//! explanation graph per node is a separate training pipeline.
//!
//! The gradient-based methods (all but `random`) need the black box's gradients with respect to
//! a weight on every edge: a black box whose
//! [`BlackBox::edge_weighted`](induce_models::BlackBox::edge_weighted) gives them (the paper's
//! GCN, the PyG GCNConv / SAGEConv / GINConv / GATConv models); any other is refused with
//! [`ExplainError::NotDifferentiable`](induce_explain::ExplainError::NotDifferentiable) naming
//! the method. They differentiate on a sparse edge list of the target's neighbourhood (never an
//! `n × n` matrix).

pub mod action_space;
pub mod cf2;
pub mod cf_gnnexplainer;
pub mod cf_gnnfeatures;
pub mod exact;
pub mod features;
pub mod greedy;
pub mod neighbourhood;
pub mod pgexplainer;
pub mod random;
pub mod sgd;
mod shortlist;

pub use action_space::Additions;
pub use cf_gnnexplainer::{CfGnnConfig, CfGnnExplainer};
pub use cf_gnnfeatures::{CfGnnFeaturesConfig, CfGnnFeaturesExplainer};
pub use cf2::{Cf2Config, Cf2Explainer};
pub use exact::{ExactConfig, ExactExplainer};
pub use features::FeatureNodes;
pub use greedy::{GreedyConfig, GreedyExplainer};
pub use neighbourhood::{Candidates, GradModel, MaskProblem, SoftNeighbourhood};
pub use pgexplainer::{PgConfig, PgExplainer, PgMlp, PgMlpConfig};
pub use random::{RandomConfig, RandomExplainer};
pub use sgd::{Optimiser, OptimiserState};
