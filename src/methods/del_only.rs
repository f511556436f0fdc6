//! `inductive-del-only`: InduCE inductive restricted to deletions (its policy trained with
//! `induce train --edits del`).

use induce_rl::EditMode;

use super::induce::{INFERENCE, NEEDS_POLICY, describe_plain, trained};
use super::{Kind, MethodDecl, Schedule, Supports};

/// `inductive-del-only`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "inductive-del-only",
    aliases: &[],
    summary: "InduCE inductive restricted to deletions (--policy: its policy-del-only.bpk, from \
              `induce train --edits del`)",
    kind: Kind::Induce,
    default_run: true,
    supports: Supports::INDUCE_DELETIONS,
    needs: NEEDS_POLICY,
    seeded: true,
    adds_edges: false,
    edit_mode: Some(EditMode::DeleteOnly),
    schedule: Schedule::Inference,
    settings: INFERENCE,
    build: |b| trained(b, 1),
    describe: describe_plain,
};
