//! `pgexplainer`: PGExplainer trained on the training targets as it is built; its top-k
//! edges deleted.

use induce_baselines::PgExplainer;

use super::baselines::note;
use super::{Describe, Kind, MethodDecl, Needs, Schedule, Supports};

/// `pgexplainer`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "pgexplainer",
    aliases: &["pg-explainer"],
    summary: "PGExplainer trained on the training split's targets, its top-k edges deleted \
              (--iterations epochs)",
    kind: Kind::Baseline,
    default_run: true,
    supports: Supports::DELETING_BASELINE,
    needs: Needs {
        policy: false,
        gradients: true,
        training_targets: true,
    },
    seeded: true,
    adds_edges: false,
    edit_mode: None,
    schedule: Schedule::None,
    settings: &["iterations"],
    build: |b| {
        Ok(Box::new(PgExplainer::train(
            &b.data.graph,
            b.black_box,
            b.train_targets,
            b.baselines.pgexplainer.clone(),
            b.protocol,
            b.device,
        )?))
    },
    describe,
};

fn describe(d: &Describe<'_>) -> Option<String> {
    let pg = &d.baselines.pgexplainer;
    let line = format!(
        "trained on {} nodes for {} epochs (Adam lr {}, size {}, entropy {}, temperature {} -> \
         {}); deletes the top-{} edges of the {}-hop neighbourhood",
        d.train_targets,
        pg.epochs,
        pg.lr,
        pg.size_coefficient,
        pg.entropy_coefficient,
        pg.temperature_start,
        pg.temperature_end,
        pg.k,
        pg.hops
    );
    Some(note(line, pg.hops, d))
}
