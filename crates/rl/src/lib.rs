//! InduCE: counterfactual explanations for graph neural networks by reinforcement learning
//! over graph edits.
//!
//! A counterfactual explanation of a node classifier's prediction for a target node `v` is a
//! small set of edge edits (deletions and additions) that changes the prediction. This crate
//! holds the pieces every explainer shares and the edit MDP of InduCE (spec §2):
//!
//! * [`Episode`] / [`EnvConfig`]: the MDP for one target on its `h`-hop neighbourhood: per-node
//!   state, candidate actions ([`Candidates`]), [`Episode::step`], done rules;
//! * [`Reward`]: the paper's reward (guarded) and a shaped alternative;
//! * [`InduceExplainer`], [`train_inductive`], [`explain_transductive`], ...: the method,
//!   written once over the [`kernel`] seam (host and Burn implementations of the policy);
//! * [`Explanation`], [`Edit`], [`EditKind`], the [`Explainer`] trait and the [`metrics`] are
//!   re-exported from `induce-explain`, where every method shares them;
//! * [`EnvConfig::reference`]: the authors' environment (spec §7), which the parity check of
//!   the `induce` crate (`induce::harness::parity`) runs against their shipped explanations;
//! * [`RlError`]: typed errors.
//!
//! The explainer only calls the classifier through [`induce_models::BlackBox`]
//! (model-agnostic).
//!
//! ```
//! use induce_graph::{Features, Graph};
//! use induce_models::BlackBox;
//! use induce_models::testing::DegreeAtLeast;
//! use induce_rl::{EnvConfig, Episode};
//!
//! //  0 ─ 1 ─ 2 : node 1 has degree 2 (class 1); deleting (0, 1) flips it
//! let g = Graph::from_edges(3, &[(0, 1), (1, 2)], Features::constant(3, 1, 1.0), vec![0; 3])
//!     .unwrap();
//! let mut ep = Episode::new(&g, &DegreeAtLeast(2), 1, &EnvConfig::default()).unwrap();
//! assert_eq!(ep.original_label(), 1);
//! assert_eq!(ep.candidates().len(), 2); // delete (0, 1), delete (1, 2)
//! let step = ep.step(0).unwrap();
//! assert!(step.flipped && step.done);
//! assert_eq!(ep.explanation().edits, vec![induce_rl::Edit::delete(0, 1)]);
//! ```

pub mod batch;
pub mod config;
pub mod divergence;
pub mod env;
pub mod imitation;
pub mod induce;
pub mod kernel;
pub mod lookahead;
pub mod policy_io;
pub mod profile;
pub mod returns;
pub mod reward;
mod train_store;

mod error {
    pub use induce_explain::{ExplainError as RlError, Result};
}

pub use induce_explain::{explanation, metrics, parallel};

pub use config::{
    InferenceConfig, NetworkConfig, RECOMMENDED_PASSES, RECOMMENDED_PRIOR_WEIGHT,
    RECOMMENDED_TARGETS, RECOMMENDED_WIDTH, TrainConfig,
};
pub use env::{
    ActionFlag, ActionKind, Candidates, EditMode, EnvConfig, Episode, FeatureActions,
    PendingEpisode, StateLayout, StateSnapshot, Step, state_dim,
};
pub use error::Result;
/// The error type of every explainer (`induce_explain::ExplainError`), under its historical
/// name in this crate.
pub use error::RlError;
pub use explanation::{Edit, EditKind, Explainer, Explanation};
pub use imitation::{ImitationConfig, Training};
pub use induce::{
    EpochStats, InduceConfig, InduceExplainer, TransductiveExplainer, explain_best_of_k,
    explain_greedy, explain_transductive, explain_transductive_from, run_greedy, timed,
    train_inductive, train_inductive_checkpointed, train_on_episodes,
};
pub use induce_models::Kernel;
pub use kernel::KernelPolicy;
pub use lookahead::Widening;
pub use policy_io::{PolicyMeta, load_policy, save_policy};
pub use reward::{Reward, UnknownReward};
