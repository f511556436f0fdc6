//! `transductive`: InduCE transductive, a policy trained on each target (the paper's second
//! mode).

use super::induce::{greedy_every, note, per_target};
use super::{Describe, Kind, MethodDecl, Needs, Schedule, Supports};

/// `transductive`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "transductive",
    aliases: &[],
    summary: "InduCE transductive: a policy trained on each target (--episodes, --lr)",
    kind: Kind::Induce,
    default_run: true,
    supports: Supports::INDUCE,
    needs: Needs::NONE,
    seeded: true,
    adds_edges: true,
    edit_mode: None,
    schedule: Schedule::PerTarget,
    settings: &[
        "budget",
        "lookahead",
        "widen",
        "episodes",
        "lr",
        "greedy_every",
        "reward",
        "state",
    ],
    build: |b| per_target(b, None),
    describe,
};

/// ```
/// use induce::methods::{BaselineConfig, Describe, Method};
/// use induce::explain::Protocol;
/// let c = induce::rl::InduceConfig::default().paper_faithful();
/// let d = Describe { induce: Some(&c), baselines: &BaselineConfig::default(),
///     protocol: Protocol::paper(4), train_targets: 0, searched_hops: None };
/// assert_eq!(Method::TRANSDUCTIVE.describe(&d).unwrap(), "paper-faithful: no minimality pass");
/// ```
fn describe(d: &Describe<'_>) -> Option<String> {
    let c = d.induce?;
    Some(note(
        greedy_every(c).map(|g| format!("the per-target policy's {g}")),
        c,
    ))
}
