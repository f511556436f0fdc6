//! `inductive-best-of-k`: the trained inductive policy's greedy episode and
//! `inference_samples − 1` episodes sampled from it, the smallest counterfactual kept; forward
//! passes only.

use super::induce::{NEEDS_POLICY, note, trained};
use super::{Describe, Kind, MethodDecl, Schedule, Supports};

/// `inductive-best-of-k`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "inductive-best-of-k",
    aliases: &["best-of-k", "inductive-bok"],
    summary: "the trained policy's greedy episode and --samples − 1 sampled ones per target, the \
              smallest counterfactual kept (--policy)",
    kind: Kind::Induce,
    default_run: true,
    supports: Supports::INDUCE,
    needs: NEEDS_POLICY,
    seeded: true,
    adds_edges: true,
    edit_mode: None,
    schedule: Schedule::Inference,
    settings: &[
        "policy",
        "budget",
        "lookahead",
        "widen",
        "batch_targets",
        "samples",
        "temperature",
    ],
    build: |b| trained(b, b.induce.inference.samples),
    describe,
};

/// ```
/// use induce::methods::{BaselineConfig, Describe, Method};
/// use induce::explain::Protocol;
/// let c = induce::rl::InduceConfig::default();
/// let d = Describe { induce: Some(&c), baselines: &BaselineConfig::default(),
///     protocol: Protocol::exact(4), train_targets: 0, searched_hops: None };
/// assert_eq!(Method::INDUCTIVE_BEST_OF_K.describe(&d).unwrap(),
///     "best of 16 episodes per target (the greedy one and 15 sampled from the trained policy); \
///      minimality pass: each counterfactual reduced to a 1-minimal one");
/// ```
fn describe(d: &Describe<'_>) -> Option<String> {
    let c = d.induce?;
    let line = format!(
        "best of {} episodes per target (the greedy one and {} sampled from the trained \
         policy{}{})",
        c.inference.samples,
        c.inference.samples.saturating_sub(1),
        match c.inference.temperature {
            1.0 => String::new(),
            t => format!(" at temperature {t}"),
        },
        match c.inference.lookahead {
            0 | 1 => String::new(),
            k => format!(
                ", each of their steps the best of {k} actions drawn without replacement, by \
                 the black box's verdicts"
            ),
        }
    );
    Some(note(Some(line), c))
}
