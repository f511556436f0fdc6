//! Neural networks of `induce`, in Burn: the black-box [`Gcn`] the explainer explains and the
//! GAT [`Policy`] network it learns with.
//!
//! * [`BlackBox`]: the model-agnostic view of any classifier (implement it for your own model).
//! * [`Gcn`] / [`GcnConfig`]: the paper's black box; [`train_gcn`] trains it,
//!   [`io::checkpoint`] saves and loads it, [`io::reference`] imports the authors' weights.
//! * [`Policy`] / [`PolicyConfig`]: InduCE's policy network.
//! * [`device`]: the one place a backend is chosen.
//!
//! # Layout
//!
//! Each network lives in one folder with all its forms; the folders beside them hold what the
//! networks share.
//!
//! | Folder | What lives there |
//! |--------|------------------|
//! | [`gcn`] | the paper's GCN: Burn module, black box, host copy, training |
//! | [`policy`] | the policy: Burn module, GAT layer, host copy with backward pass and Adam |
//! | [`pyg`] | bring your own model: PyTorch Geometric classifiers read from a `state_dict` |
//! | [`black_box`] | what an explainer sees: [`BlackBox`], [`LogProbs`], [`EdgeWeighted`]; the batched verdicts of the GCN ([`black_box::batched`]) |
//! | [`kernels`] | Burn plumbing: [`GraphTensors`], CSR message passing, fused CubeCL kernels |
//! | [`io`] | weights in and out of files: checkpoints, the authors' safetensors |
//! | (top) | [`device`], [`Kernel`], [`ops`], [`init`], [`timing`], [`testing`], [`ModelError`] |
//!
//! # Two implementations of every network
//!
//! Each network exists as a Burn module (the reference, on any Burn device) and as a host
//! kernel: a hand-written CPU (plain Rust, single-threaded per call) copy for the many small
//! passes of an explanation and of policy training ([`Kernel`] picks one).
//!
//! Why the host kernels exist: the graphs an explainer works on are small (a neighbourhood of
//! tens to a few thousand nodes, 16- to 128-wide layers), so Burn's per-operation cost
//! (allocation, dispatch, autodiff bookkeeping, and the autodiff graph's lock, which keeps
//! threads from running in parallel) dominates the arithmetic. Each kernel computes the same
//! function as its Burn model in fused loops over flat `Vec<f32>` parameters.
//!
//! Burn stays the reference: each kernel is built from (and, for the policy, converts back to)
//! the Burn model's parameters exactly, and tests pin its outputs, gradients and optimiser steps
//! to Burn's forward pass, autodiff and Adam.
//!
//! * [`HostGcn`]: the black-box GCN, on whole graphs, prepared (features projected once) and on
//!   one node's receptive field.
//! * [`IncrementalHostGcn`](gcn::host::incremental::IncrementalHostGcn): the host GCN following
//!   edge edits, recomputing only the rows an edit reaches.
//! * [`EdgeWeightGcn`](gcn::host::grad::EdgeWeightGcn): the GCN with a weight on every edge and
//!   its gradient with respect to those weights (the mask-based explainers).
//! * [`HostPolicy`](policy::host::HostPolicy): the GAT policy, forward and backward;
//!   [`HostAdam`](policy::host::adam::HostAdam) is the Adam step that trains it.

pub mod black_box;
pub mod device;
mod error;
pub mod gcn;
pub mod init;
pub mod io;
mod kernel_choice;
pub mod kernels;
pub mod linalg;
pub mod ops;
pub mod policy;
pub mod pyg;
pub mod testing;
pub mod timing;

pub use black_box::{
    BlackBox, BoundBlackBox, EdgeWeighted, GraphBinding, IncrementalBlackBox, LayersSource,
    LogProbs, PreparedBlackBox, RowGraph, StateBinding,
};
pub use error::{ModelError, Result};
pub use gcn::host::HostGcn;
pub use gcn::train::{GcnTrainingConfig, TrainReport, train_gcn};
pub use gcn::{GCN_LAYERS, Gcn, GcnBlackBox, GcnConfig, GraphConv, gcn_black_box};
pub use kernel_choice::{Kernel, UnknownKernel};
pub use kernels::tensors::{Aggregation, DegreeGradient, GraphTensors, WeightedEdges};
pub use policy::gat::GatConv;
pub use policy::{CandidateTensors, Policy, PolicyConfig};

pub use burn;
