//! `inductive-fine-tuned`: the trained inductive policy's greedy episode, then the
//! transductive schedule (episodes, γ) starting from its parameters instead of a fresh network
//! (not in the paper).

use super::induce::{NEEDS_POLICY, greedy_every, note, per_target};
use super::{Describe, Kind, MethodDecl, Schedule, Supports};

/// `inductive-fine-tuned`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "inductive-fine-tuned",
    aliases: &["fine-tuned", "inductive-finetuned"],
    summary: "the trained policy fine-tuned on each target with the transductive schedule \
              (--policy, --episodes)",
    kind: Kind::Induce,
    default_run: false,
    supports: Supports::INDUCE,
    needs: NEEDS_POLICY,
    seeded: true,
    adds_edges: true,
    edit_mode: None,
    schedule: Schedule::FineTune,
    settings: &[
        "policy",
        "budget",
        "lookahead",
        "widen",
        "episodes",
        "lr",
        "greedy_every",
    ],
    build: |b| per_target(b, Some(b.policy()?)),
    describe,
};

fn describe(d: &Describe<'_>) -> Option<String> {
    let c = d.induce?;
    let line = format!(
        "the trained policy's greedy episode, then up to {} episodes fine-tuning it on each \
         target (γ {}){}",
        c.train.episodes,
        c.train.gamma,
        greedy_every(c)
            .map(|g| format!(", its {g}"))
            .unwrap_or_default()
    );
    Some(note(Some(line), c))
}
