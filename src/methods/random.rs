//! `random`: random deletion masks over the neighbourhood's edges, the smallest that flips
//! kept.

use induce_baselines::RandomExplainer;

use super::baselines::note;
use super::{Describe, Kind, MethodDecl, Needs, Schedule, Supports};

/// `random`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "random",
    aliases: &[],
    summary: "random deletion masks, the smallest that flips kept (--iterations masks)",
    kind: Kind::Baseline,
    default_run: true,
    supports: Supports::DELETING_BASELINE,
    needs: Needs::NONE,
    seeded: true,
    adds_edges: false,
    edit_mode: None,
    schedule: Schedule::None,
    settings: &["iterations"],
    build: |b| {
        Ok(Box::new(RandomExplainer::new(
            b.black_box,
            b.baselines.random.clone(),
            b.protocol,
        )))
    },
    describe,
};

fn describe(d: &Describe<'_>) -> Option<String> {
    let r = &d.baselines.random;
    let line = format!(
        "{} random masks per target over the {}-hop neighbourhood's edges, each kept with \
         probability {}; the smallest that flips",
        r.iterations, r.hops, r.keep_probability
    );
    Some(note(line, r.hops, d))
}
