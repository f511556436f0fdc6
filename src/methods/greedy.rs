//! `greedy`: the one-step search in InduCE's action space: every action (or the `shortlist`
//! a first-order estimate ranks first) judged at every step by an exact verdict, the one that
//! most lowers the original class's margin kept. The reference for what a search finds.

use induce_baselines::GreedyExplainer;
use induce_explain::Goal;

use super::baselines::note;
use super::{Describe, Kind, MethodDecl, Needs, Schedule, Supports};

/// `greedy`'s declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "greedy",
    aliases: &[],
    summary: "the one-step search in InduCE's action space, every action judged exactly at \
              each step (--shortlist K: the K a first-order estimate ranks first)",
    kind: Kind::Search,
    default_run: false,
    supports: Supports::SEARCH,
    needs: Needs::NONE,
    seeded: false,
    adds_edges: true,
    edit_mode: None,
    schedule: Schedule::None,
    settings: &[
        "budget",
        "shortlist",
        "additions",
        "feature_nodes",
        "feature_quantiles",
    ],
    build: |b| {
        b.baselines.greedy.validate(b.protocol)?;
        Ok(Box::new(
            GreedyExplainer::new(b.black_box, b.baselines.greedy.clone(), b.protocol)
                .with_device(b.device),
        ))
    },
    describe,
};

fn describe(d: &Describe<'_>) -> Option<String> {
    let g = &d.baselines.greedy;
    let line = format!(
        "{} over the {}-hop neighbourhood's actions (additions: {}), up to {} edits, the edit \
         that most lowers {} kept at each step{}",
        match g.shortlist {
            None => "exhaustive one-step search".to_string(),
            Some(k) => format!(
                "bounded one-step search (each step judges the {k} actions a first-order \
                 estimate ranks first)"
            ),
        },
        g.hops,
        g.additions,
        g.budget,
        match g.goal {
            Goal::AnyOther => "the original class's margin".into(),
            Goal::Class(c) => format!("the margin to class {c}"),
        },
        match d.protocol.minimise {
            true => "; minimality pass",
            false => "",
        }
    );
    Some(note(line, g.hops, d))
}
