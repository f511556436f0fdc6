//! The checks every explain job makes of its method list before any work, shared by the file
//! jobs ([`super::explain`]) and the in-memory ones ([`super::memory`]).

use induce_rl::EditMode;

use crate::error::{Error, Result};
use crate::methods::Method;

/// Refuses a method list with a method twice, or with a method that would ignore the job's
/// edit restrictions (`edits`; `allowed`: whether allowed pairs are given; `locked`: whether
/// nodes or pairs are locked, and `to_class`: whether a desired class is given, both of which
/// InduCE's methods and the searches keep): the baselines
/// edit their own candidates (deletions of existing edges; every pair for
/// `cf-gnnexplainer++`), so neither the allowed pairs nor additions only can be imposed on them,
/// and `inductive-del-only` deletes only. A restriction a method already keeps (deletions only
/// for a deleting baseline) is accepted. Every job checks it ([`ExplainJob::validate`](super::ExplainJob::validate) before
/// loading anything, and the explain loop of in-memory jobs).
pub(crate) fn check_methods(
    methods: &[Method],
    edits: Option<EditMode>,
    allowed: bool,
    locked: bool,
    to_class: bool,
) -> Result<()> {
    for (i, m) in methods.iter().enumerate() {
        if methods[..i].contains(m) {
            return Err(Error::InvalidValue {
                what: "method list",
                value: (methods.iter())
                    .map(|m| m.name())
                    .collect::<Vec<_>>()
                    .join(","),
                reason: format!("{m} is listed twice"),
            });
        }
    }
    let refuse = |m: Method, reason: &str| {
        Err(Error::InvalidValue {
            what: "method",
            value: m.name().into(),
            reason: reason.into(),
        })
    };
    for &m in methods {
        if allowed && m.is_baseline() {
            return refuse(
                m,
                "the allowed pairs (--allowed, the paper's V_c) restrict InduCE's edits; the \
                 baselines choose among their own candidates and would ignore them: run the \
                 baselines without --allowed",
            );
        }
        if locked && m.is_baseline() && !Method::SEARCHES.contains(&m) {
            return refuse(
                m,
                "locked nodes and edges (--lock-nodes, --lock-edges) restrict the edits of \
                 InduCE's methods and of the searches (greedy, exact); this baseline chooses \
                 among its own candidates and would ignore them: run it without them",
            );
        }
        if to_class && m.is_baseline() && !Method::SEARCHES.contains(&m) {
            return refuse(
                m,
                "a desired class (--to-class) is kept by InduCE's methods and the searches \
                 (greedy, exact); this baseline stops at any other class and would ignore it: \
                 run it without --to-class",
            );
        }
        let deletes_only = !m.adds_edges();
        match edits {
            Some(_) if Method::SEARCHES.contains(&m) => {
                return refuse(
                    m,
                    "it searches InduCE's whole action space (additions and deletions) and takes \
                     no --edits: run it without --edits",
                );
            }
            Some(EditMode::AddOnly) if deletes_only => {
                return refuse(
                    m,
                    "it only deletes edges, so additions only (--edits add) cannot apply: run \
                     it without --edits add",
                );
            }
            Some(EditMode::DeleteOnly) if m == Method::CfGnnExplainerPlusPlus => {
                return refuse(
                    m,
                    "its mask covers every node pair (it adds edges too) and cannot be \
                     restricted to deletions (--edits del): use cf-gnnexplainer, the \
                     deletion-only original",
                );
            }
            _ => {}
        }
    }
    Ok(())
}
