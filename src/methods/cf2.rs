//! `cf2`: CF² in its counterfactual setting (α = 0), deletions of the neighbourhood's edges.

use induce_baselines::Cf2Explainer;

use super::baselines::{NEEDS_GRADIENTS, note};
use super::{Describe, Kind, MethodDecl, Schedule, Supports};

/// `cf2`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "cf2",
    aliases: &["cf²", "cff"],
    summary: "CF² in its counterfactual setting (α = 0), deletions only (--iterations steps)",
    kind: Kind::Baseline,
    default_run: true,
    supports: Supports::DELETING_BASELINE,
    needs: NEEDS_GRADIENTS,
    seeded: true,
    adds_edges: false,
    edit_mode: None,
    schedule: Schedule::None,
    settings: &["iterations"],
    build: |b| {
        Ok(Box::new(Cf2Explainer::new(
            b.black_box,
            b.baselines.cf2.clone(),
            b.protocol,
            b.device,
        )?))
    },
    describe,
};

fn describe(d: &Describe<'_>) -> Option<String> {
    let c = &d.baselines.cf2;
    let line = format!(
        "alpha {}, lambda {}, gamma {}, {} steps of Adam lr {}, threshold {}, {}-hop \
         neighbourhood",
        c.alpha, c.lambda, c.gamma, c.iterations, c.lr, c.threshold, c.hops
    );
    Some(note(line, c.hops, d))
}
