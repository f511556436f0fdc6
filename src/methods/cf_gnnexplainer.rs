//! `cf-gnnexplainer` (a mask over the neighbourhood's existing edges: deletions) and
//! `cf-gnnexplainer++` (a mask over every node pair: additions too).

use induce_baselines::{Candidates, CfGnnConfig, CfGnnExplainer};

use super::baselines::{NEEDS_GRADIENTS, note, optimiser};
use super::{Describe, Kind, MethodDecl, Schedule, Supports};

/// `cf-gnnexplainer`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "cf-gnnexplainer",
    aliases: &["cf-gnn", "cfgnnexplainer", "cf-gnn-explainer"],
    summary: "CF-GNNExplainer: a gradient-trained mask over the neighbourhood's edges, deletions \
              only (--iterations steps)",
    kind: Kind::Baseline,
    default_run: true,
    supports: Supports::DELETING_BASELINE,
    needs: NEEDS_GRADIENTS,
    // The mask starts at 1 and the optimisation draws nothing at random.
    seeded: false,
    adds_edges: false,
    edit_mode: None,
    schedule: Schedule::None,
    settings: &["iterations"],
    build: |b| {
        let config = CfGnnConfig {
            candidates: Candidates::ExistingEdges,
            ..b.baselines.cf_gnnexplainer.clone()
        };
        Ok(Box::new(CfGnnExplainer::new(
            b.black_box,
            config,
            b.protocol,
            b.device,
        )?))
    },
    describe: |d| describe(d, "the existing edges (deletions)"),
};

/// `cf-gnnexplainer++`'s declaration.
pub(super) const PLUS_PLUS: MethodDecl = MethodDecl {
    name: "cf-gnnexplainer++",
    aliases: &["cf-gnn++", "cfgnnexplainer++", "cf-gnn-explainer++"],
    summary: "CF-GNNExplainer with additions: a mask over every node pair of the neighbourhood \
              (--iterations steps)",
    supports: Supports::PAIR_MASK_BASELINE,
    adds_edges: true,
    build: |b| {
        Ok(Box::new(CfGnnExplainer::new(
            b.black_box,
            b.baselines.cf_gnnexplainer.clone().plus_plus(),
            b.protocol,
            b.device,
        )?))
    },
    describe: |d| describe(d, "every node pair (n(n-1)/2; non-edges start absent)"),
    ..DECL
};

fn describe(d: &Describe<'_>, candidates: &str) -> Option<String> {
    let cf = &d.baselines.cf_gnnexplainer;
    let line = format!(
        "{} steps of {}, beta {}, {}-hop neighbourhood, mask over {candidates}; the smallest \
         counterfactual found",
        cf.iterations,
        optimiser(&cf.optimiser),
        cf.beta,
        cf.hops
    );
    Some(note(line, cf.hops, d))
}
