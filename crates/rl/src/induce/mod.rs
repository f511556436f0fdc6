//! InduCE: REINFORCE training of the GAT policy (inductive and transductive) and inference
//! with a trained policy (greedy and best-of-k).
//!
//! Every loop here is written once, over the kernel seam ([`crate::kernel`]): a [`Learner`]
//! rolls episodes out and takes policy-gradient steps, an [`Actor`](crate::kernel::Actor)
//! scores actions; the host and Burn kernels each implement both. The gradient is that of
//! `J = −(1/B) Σ_episodes Σ_t [log Π(a_t | S_t) · Ĝ_t + η · H(Π(·|S_t))]`, with `Ĝ` the
//! discounted returns normalised over the batch.
//!
//! Training is in `train` ([`train_inductive`] and its variants), the per-target searches in
//! `search` ([`explain_transductive`], [`explain_greedy`], [`explain_best_of_k`]), the
//! [`Explainer`](crate::Explainer)s in `explainer` ([`InduceExplainer`],
//! [`TransductiveExplainer`]).
//!
//! [`Learner`]: crate::kernel::Learner

use std::time::Instant;

use crate::error::{Result, RlError};

mod epochs;
mod explainer;
mod imitate;
mod search;
mod train;

pub use crate::config::InduceConfig;
pub use crate::returns::{discounted_returns, normalise};
pub use explainer::{InduceExplainer, TransductiveExplainer};
pub use search::{
    explain_best_of_k, explain_greedy, explain_transductive, explain_transductive_from, run_greedy,
};
pub use train::{EpochStats, train_inductive, train_inductive_checkpointed, train_on_episodes};

/// Rejects a search without episodes.
fn check_episodes(config: &InduceConfig) -> Result<()> {
    if config.train.episodes == 0 {
        return Err(RlError::InvalidConfig(
            "InduceConfig.episodes must be at least 1, got 0".into(),
        ));
    }
    Ok(())
}

/// Wall-clock helper for reports.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed().as_secs_f64())
}
