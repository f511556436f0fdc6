//! `inductive`: InduCE's inductive policy, trained once on training targets; one greedy
//! episode of forward passes per target (the paper's inference).

use super::induce::{INFERENCE, NEEDS_POLICY, describe_plain, trained};
use super::{Kind, MethodDecl, Schedule, Supports};

/// `inductive`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "inductive",
    aliases: &[],
    summary: "InduCE inductive: the trained policy's greedy episode per target, forward passes \
              only (--policy)",
    kind: Kind::Induce,
    default_run: true,
    supports: Supports::INDUCE,
    needs: NEEDS_POLICY,
    seeded: true,
    adds_edges: true,
    edit_mode: None,
    schedule: Schedule::Inference,
    settings: INFERENCE,
    build: |b| trained(b, 1),
    describe: describe_plain,
};
