//! Graph storage, k-hop extraction, benchmark generators and dataset loaders for `induce`.
//!
//! * [`Graph`]: an undirected simple graph on petgraph with node [`Features`], labels and motif
//!   ground truth; [`Csr`] and edge-list export for the models.
//! * [`k_hop`] / [`Subgraph`]: the neighbourhood of a target with local ↔ global id maps.
//! * [`EditGraph`]: a fast mutable graph for editing a neighbourhood edge by edge.
//! * [`generators`]: BA-Shapes, Tree-Cycles and Tree-Grid (seeded, exact counts), and an
//!   ogbn-arxiv-sized synthetic graph for scale benchmarks.
//! * [`io`]: loaders for the reference npz layout, the gnn-benchmark npz layout and OGB folders.

/// The seed every configuration of induce uses unless told otherwise (generators, splits, model
/// initialisation, InduCE, the examples and the command line).
pub const DEFAULT_SEED: u64 = 42;

mod dataset;
mod edit;
mod error;
mod features;
pub mod generators;
mod graph;
pub mod io;
mod khop;
pub mod shared;

pub use dataset::{Dataset, Split};
pub use edit::EditGraph;
pub use error::{GraphError, Result};
pub use features::Features;
pub use graph::{Csr, Graph};
pub use khop::{Subgraph, k_hop, k_hop_edge_count, k_hop_edge_counts, k_hop_sampled};
