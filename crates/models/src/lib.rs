//! Neural networks of `induce`, in Burn: the black-box [`Gcn`] the explainer explains and the
//! GAT [`policy`] network it learns with.
//!
//! * [`BlackBox`]: the model-agnostic view of any classifier (implement it for your own model).
//! * [`Gcn`] / [`GcnConfig`]: the paper's black box; [`train`] trains it, [`checkpoint`] saves and
//!   loads it, [`mod@reference`] imports the authors' weights.
//! * [`device`]: the one place a backend is chosen.
//! * [`host`]: hand-written CPU kernels of the GCN and the policy (Burn stays the reference).

pub mod batched_verdict;
pub mod black_box;
pub mod checkpoint;
pub mod device;
pub mod differentiable;
mod error;
// burn-ndarray is deprecated upstream (Burn 0.22 favours Flex); the card keeps it as a backend,
// named in these two modules' backend extensions. Flex-only builds (CI's clippy) still see every
// other deprecation here.
#[cfg_attr(feature = "ndarray", allow(deprecated))]
pub mod fused;
pub mod gat;
pub mod gcn;
pub mod host;
pub mod init;
pub mod kernel;
mod log_probs;
pub mod ops;
pub mod policy;
pub mod pyg;
pub mod reference;
#[cfg_attr(feature = "ndarray", allow(deprecated))]
pub mod spmm;
pub mod tensors;
pub mod testing;
pub mod timing;
pub mod train;

pub use black_box::{
    BlackBox, BoundBlackBox, GcnBlackBox, GraphBinding, IncrementalBlackBox, LogProbs,
    PreparedBlackBox, gcn_black_box,
};
pub use differentiable::EdgeWeighted;
pub use error::{ModelError, Result};
pub use gat::GatConv;
pub use gcn::{GCN_LAYERS, Gcn, GcnConfig, GraphConv};
pub use host::gcn::HostGcn;
pub use kernel::{Kernel, UnknownKernel};
pub use policy::{CandidateTensors, Policy, PolicyConfig};
pub use tensors::{Aggregation, GraphTensors, WeightedEdges};
pub use train::{GcnTrainingConfig, TrainReport, train_gcn};

pub use burn;
