//! `induce`: counterfactual explanations for graph neural networks (InduCE), on Burn.
//!
//! This facade re-exports the member crates:
//!
//! * [`graph`] (`induce-graph`): graph storage, k-hop neighbourhoods, the BA-Shapes /
//!   Tree-Cycles / Tree-Grid generators and dataset loaders.
//! * [`models`] (`induce-models`): the black-box GCN, the GAT policy, checkpoints and backend
//!   selection.
//! * [`rl`] (`induce-rl`): the edit environment, rewards, metrics and the explainer interface.
//!
//! Backends are cargo features (`flex` by default, `ndarray`, `cuda`) and are chosen at run time
//! with [`models::device`].

pub use induce_graph as graph;
pub use induce_models as models;
pub use induce_rl as rl;
