//! The host kernels: hand-written CPU (plain Rust, single-threaded per call) copies of the
//! crate's Burn networks, for the many small passes of an explanation and of policy training.
//!
//! Why they exist: the graphs an explainer works on are small (a neighbourhood of tens to a few
//! thousand nodes, 16- to 128-wide layers), so Burn's per-operation cost (allocation, dispatch,
//! autodiff bookkeeping, and the autodiff graph's lock, which keeps threads from running in
//! parallel) dominates the arithmetic. Each kernel computes the same function as its Burn model
//! in fused loops over flat `Vec<f32>` parameters.
//!
//! Burn stays the reference: each kernel is built from (and, for the policy, converts back to)
//! the Burn model's parameters exactly, and tests pin its outputs, gradients and optimiser steps
//! to Burn's forward pass, autodiff and Adam.
//!
//! * [`gcn::HostGcn`]: the black-box GCN ([`Gcn`](crate::Gcn)), on whole graphs, prepared
//!   (features projected once) and on one node's receptive field.
//! * [`incremental::IncrementalHostGcn`]: the host GCN following edge edits, recomputing only
//!   the rows an edit reaches.
//! * [`grad::EdgeWeightGcn`]: the GCN with a weight on every edge and its gradient with respect
//!   to those weights (the mask-based explainers).
//! * [`policy::HostPolicy`]: the GAT policy ([`Policy`](crate::Policy)), forward and backward;
//!   [`adam::HostAdam`] is the Adam step that trains it.

pub mod adam;
pub mod gcn;

/// ReLU that keeps NaN, as Burn's does: a NaN weight or feature shows in the output (and is
/// reported) as on the Burn kernel, instead of being clamped away by `f32::max`. Written as
/// `x < 0 → 0` (-0.0 stays -0.0, equal to 0.0), which is one `maxps(0, x)` per lane on x86.
#[inline]
pub(crate) fn relu(x: f32) -> f32 {
    if x < 0.0 { 0.0 } else { x }
}

pub mod grad;
pub mod incremental;
pub mod policy;
