//! `exact`: the certified minimum: every edit set of InduCE's action space tried by size up to
//! `max_size`. The reference for size.

use induce_baselines::ExactExplainer;

use super::baselines::note;
use super::{Describe, Kind, MethodDecl, Needs, Schedule, Supports};

/// `exact`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "exact",
    aliases: &[],
    summary: "the certified minimum: every edit set tried by size up to --max-size",
    kind: Kind::Search,
    default_run: false,
    supports: Supports::SEARCH,
    needs: Needs::NONE,
    seeded: false,
    adds_edges: true,
    edit_mode: None,
    schedule: Schedule::None,
    settings: &[
        "max_size",
        "max_evaluations",
        "additions",
        "feature_nodes",
        "feature_quantiles",
    ],
    build: |b| {
        b.baselines.exact.validate(b.protocol)?;
        Ok(Box::new(ExactExplainer::new(
            b.black_box,
            b.baselines.exact.clone(),
            b.protocol,
        )))
    },
    describe,
};

fn describe(d: &Describe<'_>) -> Option<String> {
    let x = &d.baselines.exact;
    let line = format!(
        "every edit set of the {}-hop neighbourhood's actions (additions: {}) by size up to {}, \
         at most {} evaluations per target: the certified minimum",
        x.hops, x.additions, x.max_size, x.max_evaluations
    );
    Some(note(line, x.hops, d))
}
