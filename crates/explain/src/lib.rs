//! The part of induce that every counterfactual explainer shares: the [`Explainer`] interface
//! and its [`Explanation`], the paper's [`metrics`], and the evaluation [`pipeline`] that runs
//! any explainer on any [`Dataset`](induce_graph::Dataset) and black box and writes the results.
//!
//! Methods live in their own crates (`induce-rl` for InduCE); this crate knows none of them, so
//! the dependency graph stays one-way: `induce-graph` ← `induce-models` ← `induce-explain` ←
//! methods ← the `induce` facade and command line.
//!
//! # From an explainer to a metrics table
//!
//! ```
//! use induce_explain::pipeline::{EvalContext, ExplainOptions, explain_targets};
//! use induce_explain::{Edit, Explainer, Explanation, Protocol, Result};
//! use induce_graph::{Features, Graph};
//! use induce_models::testing::DegreeAtLeast;
//!
//! /// Deletes the target's first edge.
//! struct FirstEdge;
//! impl Explainer for FirstEdge {
//!     fn name(&self) -> &str { "first-edge" }
//!     fn explain(&self, g: &Graph, t: u32) -> Result<Explanation> {
//!         let w = g.neighbors(t).next().unwrap();
//!         Ok(Explanation { evaluations: None, certified: None, feature_edits: vec![],
//!             target: t, found: true, original_label: 1, new_label: 0,
//!             edits: vec![Edit::delete(t.min(w), t.max(w))] })
//!     }
//! }
//!
//! //  0 ─ 1 ─ 2 ─ 3
//! let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
//!     vec![0, 1, 1, 0]).unwrap();
//! let ctx = EvalContext::new(&g, &DegreeAtLeast(2), Protocol::exact(2)).unwrap();
//! let run = explain_targets(&FirstEdge, &ctx, &[1, 2], &ExplainOptions::default()).unwrap();
//! let row = run.row();
//! assert_eq!((row.metrics.targets, row.metrics.found), (2, 2));
//! assert_eq!(row.metrics.size_mean, Some(1.0));
//! ```

mod error;
pub mod explanation;
pub mod features;
pub mod field;
mod goal;
pub mod gradient;
mod locked;
pub mod metrics;
mod minimise;
pub mod oracle;
pub mod parallel;
pub mod pipeline;
mod protocol;
pub mod reach;
pub mod verdict;

pub use error::{ExplainError, Result};
pub use explanation::{Certified, Edit, EditKind, Explainer, Explanation, FeatureEdit};
pub use goal::Goal;
pub use locked::Locked;
pub use minimise::{Minimised, minimise, minimise_batched};
pub use protocol::Protocol;
pub use verdict::{Judge, PendingJudge, Verdict, whole_graph_label};
