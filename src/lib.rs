//! `induce`: counterfactual explanations for graph neural networks (InduCE), on Burn.
//!
//! Given a trained node classifier (the black box) and a target node, find the fewest edge
//! additions and deletions that flip the node's predicted label. This facade re-exports the
//! member crates and holds what ties them together:
//!
//! * [`graph`] (`induce-graph`): graph storage, k-hop neighbourhoods, the BA-Shapes /
//!   Tree-Cycles / Tree-Grid generators and the loaders ([`graph::io::load`] reads every
//!   supported format).
//! * [`models`] (`induce-models`): the black-box GCN, the GAT policy, checkpoints and backend
//!   selection ([`models::device`]).
//! * [`explain`] (`induce-explain`): the [`Explainer`] interface, the paper's metrics and the
//!   evaluation [`pipeline`] that runs any explainer on any data.
//! * [`rl`] (`induce-rl`): InduCE itself (environment, rewards, REINFORCE).
//! * [`methods`]: the methods by name, the paper's presets per dataset family, loading black
//!   boxes (ours or the authors' SafeTensors) and policies; [`run`]: the jobs behind the
//!   `induce` command line; [`experiment`]: the paper's whole experiment on one dataset.
//!
//! # Explain your own graph and model
//!
//! From files to a metrics table: load a graph (any supported format, or a built-in
//! benchmark), a black box (the authors' SafeTensors GCN or a checkpoint of ours), choose
//! targets, explain them with a method, summarise.
//!
//! ```
//! use induce::{Method, TargetSpec, default_device, pipeline};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let bb_path = dir.path().join("gcn.bpk");
//! let device = default_device()?;
//! // A graph: a file (reference npz, gnn-benchmark npz, OGB folder) or a built-in benchmark.
//! let data = induce::run::load_data("tree-cycles", None, induce::DEFAULT_SEED)?;
//! # { // (the doctest trains a small black box; yours comes from a file)
//! #   use induce::models::{GcnConfig, GcnTrainingConfig, train_gcn, io::checkpoint::save_gcn};
//! #   let c = GcnConfig::new(data.graph.features().dim(), data.graph.num_classes());
//! #   let (m, _) = train_gcn(&data, &GcnTrainingConfig::new(c.clone()), &device)?;
//! #   save_gcn(&m, &c, &bb_path)?;
//! # }
//! // A black box: `syn1_gcn.safetensors` from the authors, or a `.bpk` of ours.
//! let bb = induce::methods::load_black_box(&bb_path, &data, induce::rl::Kernel::Host, &device)?;
//! // Transductive InduCE on a seeded sample of five of the paper's test targets, with a short
//! // per-target budget of episodes; the neighbourhoods' hops are the settings' (given once).
//! let mut job = induce::run::MemoryJob::new(&data, bb.black_box.as_ref(), &[Method::TRANSDUCTIVE]);
//! job.targets = TargetSpec::Test;
//! job.sample = Some(induce::run::Sample { size: 5, seed: 1 });
//! job.settings.transductive.train.episodes = 20;
//! // Explain on all cores, summarise, print the paper's table (`Some(dir)` also writes the
//! // run directory `induce explain` writes).
//! let (summary, _records) = induce::run::explain_in_memory(&job, None, &device)?;
//! println!("{}", pipeline::format_table(&[&summary]));
//! assert_eq!(summary.runs[0].metrics.targets, 5);
//! # Ok(()) }
//! ```
//!
//! Backends are cargo features (`flex` by default, `ndarray`, `vulkan`, `cuda`, `cube-cpu`) and
//! are chosen at run time with [`models::device`]; nothing is generic over a backend type.

pub use induce_baselines as baselines;
pub use induce_explain as explain;
pub use induce_graph as graph;
pub use induce_models as models;
pub use induce_rl as rl;
pub use induce_viz as viz;

#[cfg(feature = "cli")]
pub mod cli;
pub mod error;
pub mod experiment;
pub mod harness;
pub mod methods;
pub mod quality;
pub mod render;
pub mod run;
pub mod slurm;

pub use burn::tensor::Device;
pub use error::{Error, Result};
pub use induce_explain::pipeline;
pub use induce_explain::pipeline::{
    EvalContext, ExplainOptions, NoProgress, Progress, RunSummary, Shard, TargetSpec,
    explain_targets, select_targets,
};
pub use induce_explain::{Edit, EditKind, Explainer, Explanation};
pub use induce_graph::{DEFAULT_SEED, Dataset, Graph};
pub use induce_models::device::{BackendKind, default_device, device};
pub use induce_models::{BlackBox, LogProbs};
pub use methods::{Method, Preset};
pub use rl::timed;

/// The README's Rust example, compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The embedding guide's Rust example (`docs/EMBEDDING.md`), compiled and run as a doctest.
#[doc = include_str!("../docs/EMBEDDING.md")]
#[cfg(doctest)]
pub struct EmbeddingDoctests;
