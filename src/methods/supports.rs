//! What each method keeps of a run's restrictions ([`Supports`], declared by
//! [`Method::supports`]), and the check every job makes of its method list before any work
//! ([`check_methods`]): a restriction a method would ignore is refused, naming the method.

use induce_rl::EditMode;

use super::Method;
use crate::error::{Error, Result};

/// What a method keeps of a run's restrictions, as it declares it ([`Method::supports`]).
///
/// ```
/// use induce::Method;
/// use induce::rl::EditMode;
/// let s = Method::Transductive.supports();
/// assert!(s.allowed && s.locked && s.goal && s.keeps(EditMode::AddOnly));
/// let r = Method::Random.supports();
/// assert!(!r.allowed && !r.locked && r.keeps(EditMode::DeleteOnly) && !r.keeps(EditMode::AddOnly));
/// // The searches keep locks and a desired class over InduCE's whole action space.
/// let g = Method::Greedy.supports();
/// assert!(g.locked && g.goal && !g.keeps(EditMode::DeleteOnly));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Supports {
    /// It edits only the allowed pairs when given (the paper's `V_c`).
    pub allowed: bool,
    /// It never touches locked nodes and pairs.
    pub locked: bool,
    /// It reaches a desired class when asked (else any other class).
    pub goal: bool,
    /// The edit types it can be restricted to; empty: it searches its own, whole space.
    pub edits: &'static [EditMode],
    /// What it edits, in words (the refusals say it).
    pub edits_what: &'static str,
}

impl Supports {
    /// Whether it can be restricted to `mode`.
    pub fn keeps(&self, mode: EditMode) -> bool {
        self.edits.contains(&mode)
    }
}

/// Every edit type.
const ANY_EDIT: &[EditMode] = &[EditMode::Both, EditMode::AddOnly, EditMode::DeleteOnly];
/// Deletions (or no restriction).
const DELETIONS: &[EditMode] = &[EditMode::Both, EditMode::DeleteOnly];

impl Method {
    /// What this method keeps of a run's restrictions: InduCE's methods keep every one (their
    /// environment applies them), the searches keep locks and a desired class over InduCE's
    /// whole action space, and the other baselines choose among their own candidates.
    pub fn supports(self) -> Supports {
        let induce = Supports {
            allowed: true,
            locked: true,
            goal: true,
            edits: ANY_EDIT,
            edits_what: "InduCE's action space",
        };
        let baseline = |edits, edits_what| Supports {
            allowed: false,
            locked: false,
            goal: false,
            edits,
            edits_what,
        };
        match self {
            Method::InductiveDelOnly => Supports {
                edits: DELETIONS,
                edits_what: "deletions only",
                ..induce
            },
            Method::Greedy | Method::Exact => Supports {
                allowed: false,
                edits: &[],
                edits_what: "InduCE's whole action space (additions and deletions)",
                ..induce
            },
            Method::Random | Method::CfGnnExplainer | Method::Cf2 | Method::PgExplainer => {
                baseline(
                    DELETIONS,
                    "deletions of the neighbourhood's existing edges only",
                )
            }
            Method::CfGnnExplainerPlusPlus => baseline(
                &[EditMode::Both],
                "a mask over every node pair (additions and deletions together)",
            ),
            _ => induce,
        }
    }
}

/// What a job asks of every method.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Restrictions {
    /// The edit types (`None`: each method's own).
    pub edits: Option<EditMode>,
    /// Allowed pairs are given.
    pub allowed: bool,
    /// Nodes or pairs are locked.
    pub locked: bool,
    /// A desired class is given.
    pub goal: bool,
}

/// Refuses a method list with a method twice, or with a method that would ignore one of the
/// job's `restrictions` ([`Method::supports`]), naming the method and the restriction. Every job
/// checks it before loading anything.
pub(crate) fn check_methods(methods: &[Method], restrictions: Restrictions) -> Result<()> {
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
    for &m in methods {
        let s = m.supports();
        let refuse = |reason: String| {
            Err(Error::InvalidValue {
                what: "method",
                value: m.name().into(),
                reason,
            })
        };
        if restrictions.allowed && !s.allowed {
            return refuse(format!(
                "the allowed pairs (--allowed, the paper's V_c) restrict InduCE's edits; {m} \
                 edits {} and would ignore them: run it without --allowed",
                s.edits_what
            ));
        }
        if restrictions.locked && !s.locked {
            return refuse(format!(
                "locked nodes and edges (--lock-nodes, --lock-edges) restrict the edits of \
                 InduCE's methods and of the searches (greedy, exact); {m} edits {} and would \
                 ignore them: run it without them",
                s.edits_what
            ));
        }
        if restrictions.goal && !s.goal {
            return refuse(format!(
                "a desired class (--to-class) is kept by InduCE's methods and the searches \
                 (greedy, exact); {m} stops at any other class and would ignore it: run it \
                 without --to-class"
            ));
        }
        if let Some(mode) = restrictions.edits.filter(|&e| !s.keeps(e)) {
            let (what, flag) = match mode {
                EditMode::Both => ("a choice of edit types", "both"),
                EditMode::AddOnly => ("additions only", "add"),
                EditMode::DeleteOnly => ("deletions only", "del"),
            };
            return refuse(format!(
                "it edits {}, so it cannot be restricted to {what} (--edits {flag}): run it \
                 without --edits",
                s.edits_what
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_restriction_is_refused_where_a_method_would_ignore_it() {
        let check = |m: Method, r: Restrictions| check_methods(&[m], r).map_err(|e| e.to_string());
        let edits = |e| Restrictions {
            edits: Some(e),
            ..Restrictions::default()
        };
        for m in Method::ALL {
            assert!(check(m, Restrictions::default()).is_ok(), "{m}");
        }
        // InduCE's methods keep every restriction but the deletion-only one's additions.
        let all = Restrictions {
            allowed: true,
            locked: true,
            goal: true,
            ..edits(EditMode::AddOnly)
        };
        assert!(check(Method::Transductive, all).is_ok());
        let e = check(Method::InductiveDelOnly, edits(EditMode::AddOnly)).unwrap_err();
        assert!(
            e.contains("inductive-del-only") && e.contains("--edits add"),
            "{e}"
        );
        // The searches: locks and a desired class, no --edits, no allowed pairs.
        let kept = Restrictions {
            locked: true,
            goal: true,
            ..Restrictions::default()
        };
        assert!(check(Method::Exact, kept).is_ok());
        assert!(check(Method::Greedy, edits(EditMode::DeleteOnly)).is_err());
        // The deleting baselines keep deletions only; ++ keeps no restriction of its edits.
        assert!(check(Method::Cf2, edits(EditMode::DeleteOnly)).is_ok());
        let e = check(Method::Cf2, edits(EditMode::AddOnly)).unwrap_err();
        assert!(e.contains("cf2") && e.contains("deletions"), "{e}");
        let e = check(Method::CfGnnExplainerPlusPlus, edits(EditMode::AddOnly)).unwrap_err();
        assert!(e.contains("cf-gnnexplainer++"), "{e}");
        let goal = Restrictions {
            goal: true,
            ..Restrictions::default()
        };
        assert!(
            check(Method::Random, goal)
                .unwrap_err()
                .contains("--to-class")
        );
        let twice = check_methods(&[Method::Random, Method::Random], Restrictions::default());
        assert!(twice.unwrap_err().to_string().contains("listed twice"));
    }
}
