//! `untrained`: the inductive network, untrained (initialised from the run's seed): the
//! ablation of training.

use induce_rl::InduceExplainer;

use super::induce::describe_plain;
use super::{Kind, MethodDecl, Needs, Schedule, Supports};

/// `untrained`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "untrained",
    aliases: &["untrained-policy"],
    summary: "the inductive network untrained: the ablation of training",
    kind: Kind::Induce,
    default_run: true,
    supports: Supports::INDUCE,
    needs: Needs::NONE,
    seeded: true,
    adds_edges: true,
    edit_mode: None,
    schedule: Schedule::Inference,
    settings: &["budget", "lookahead", "widen", "batch_targets", "state"],
    build: |b| {
        b.induce.validate()?;
        let d = b.data.graph.features().dim();
        let p = (b.induce)
            .policy_config(d, b.black_box.num_classes())
            .init(b.device);
        Ok(Box::new(InduceExplainer::from_config(
            b.method.name(),
            &p,
            b.black_box,
            b.induce,
            b.device,
        )))
    },
    describe: describe_plain,
};
