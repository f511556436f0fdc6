//! What each method keeps of a run's restrictions ([`Supports`], declared by
//! [`Method::supports`]), and the check every job makes of its method list before any work
//! ([`check_methods`]): a restriction a method would ignore is refused, naming the method.

use induce_explain::{Goal, Locked};
use induce_rl::EditMode;
use serde::{Deserialize, Serialize};

use super::Method;
use crate::error::{Error, Result};

/// What a method keeps of a run's restrictions, as its declaration says
/// ([`MethodDecl::supports`](super::MethodDecl)).
///
/// ```
/// use induce::Method;
/// use induce::rl::EditMode;
/// let s = Method::TRANSDUCTIVE.supports();
/// assert!(s.allowed && s.locked && s.goal && s.keeps(EditMode::AddOnly));
/// let r = Method::RANDOM.supports();
/// assert!(!r.allowed && !r.locked && r.keeps(EditMode::DeleteOnly) && !r.keeps(EditMode::AddOnly));
/// // The searches keep locks and a desired class over InduCE's whole action space.
/// let g = Method::GREEDY.supports();
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
    /// It searches feature edits when asked (`--edits …,feat`).
    pub features: bool,
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

impl Supports {
    /// InduCE's: its environment applies every restriction, and offers feature actions when
    /// asked (with the estimated state).
    pub const INDUCE: Supports = Supports {
        allowed: true,
        locked: true,
        goal: true,
        edits: ANY_EDIT,
        edits_what: "InduCE's action space",
        features: true,
    };

    /// InduCE's, restricted to deletions (no feature actions).
    pub const INDUCE_DELETIONS: Supports = Supports {
        edits: DELETIONS,
        edits_what: "deletions only",
        features: false,
        ..Supports::INDUCE
    };

    /// The searches': locks and a desired class over InduCE's whole action space, and feature
    /// edits beside (or instead of) its edge actions.
    pub const SEARCH: Supports = Supports {
        allowed: false,
        edits: &[EditMode::Both],
        edits_what: "InduCE's whole action space (additions and deletions)",
        features: true,
        ..Supports::INDUCE
    };

    /// A baseline that deletes the neighbourhood's existing edges: no restriction but
    /// deletions.
    pub const DELETING_BASELINE: Supports = Supports {
        allowed: false,
        locked: false,
        goal: false,
        edits: DELETIONS,
        edits_what: "deletions of the neighbourhood's existing edges only",
        features: false,
    };

    /// A baseline with a mask over feature entries (CF-GNNFeatures): it edits features only,
    /// whatever `--edits` says of edges (so it refuses any edge edit type), and keeps the
    /// locked feature columns.
    pub const FEATURE_MASK_BASELINE: Supports = Supports {
        edits: &[],
        edits_what: "feature entries only (a mask zeroing nonzero entries)",
        features: true,
        ..Supports::DELETING_BASELINE
    };

    /// A baseline with a mask over every node pair: no restriction.
    pub const PAIR_MASK_BASELINE: Supports = Supports {
        edits: &[EditMode::Both],
        edits_what: "a mask over every node pair (additions and deletions together)",
        ..Supports::DELETING_BASELINE
    };
}

/// The edit types of `--edits`: a comma list of `add`, `del` and `feat` (`both` is `add,del`).
/// `feat` asks for feature edits (greedy: flips of the target's 0/1 feature entries); without
/// `add` or `del` no edge is edited.
///
/// ```
/// use induce::methods::EditSet;
/// use induce::rl::EditMode;
/// let all: EditSet = "add,del,feat".parse().unwrap();
/// assert_eq!((all.edges(), all.feat), (Some(EditMode::Both), true));
/// assert_eq!(all, "both,feat".parse().unwrap());
/// assert_eq!(all.to_string(), "add,del,feat");
/// let feat: EditSet = "feat".parse().unwrap();
/// assert_eq!(feat.edges(), None);
/// assert_eq!("del".parse::<EditSet>().unwrap().edges(), Some(EditMode::DeleteOnly));
/// assert!("add,nodes".parse::<EditSet>().unwrap_err().contains("nodes"));
/// // Old configs wrote the edge modes' names.
/// assert_eq!(serde_json::from_str::<EditSet>("\"delete_only\"").unwrap().to_string(), "del");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EditSet {
    /// Edge additions.
    pub add: bool,
    /// Edge deletions.
    pub del: bool,
    /// Feature edits.
    pub feat: bool,
}

impl EditSet {
    /// The edge edits, as InduCE's edit mode (`None`: no edge edit).
    pub fn edges(&self) -> Option<EditMode> {
        match (self.add, self.del) {
            (true, true) => Some(EditMode::Both),
            (true, false) => Some(EditMode::AddOnly),
            (false, true) => Some(EditMode::DeleteOnly),
            (false, false) => None,
        }
    }
}

impl From<EditMode> for EditSet {
    fn from(m: EditMode) -> Self {
        Self {
            add: m != EditMode::DeleteOnly,
            del: m != EditMode::AddOnly,
            feat: false,
        }
    }
}

impl std::str::FromStr for EditSet {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let mut e = EditSet {
            add: false,
            del: false,
            feat: false,
        };
        for word in s.split(',').map(str::trim) {
            match word {
                "add" | "add_only" => e.add = true,
                "del" | "delete_only" => e.del = true,
                "both" => (e.add, e.del) = (true, true),
                "feat" => e.feat = true,
                other => {
                    return Err(format!(
                        "edit type `{other}` in `{s}`: expected a comma list of add, del, feat \
                         (both = add,del)"
                    ));
                }
            }
        }
        Ok(e)
    }
}

impl std::fmt::Display for EditSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let words: Vec<&str> = [(self.add, "add"), (self.del, "del"), (self.feat, "feat")]
            .into_iter()
            .filter_map(|(on, w)| on.then_some(w))
            .collect();
        f.write_str(&words.join(","))
    }
}

impl TryFrom<String> for EditSet {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<Self, String> {
        s.parse()
    }
}

impl From<EditSet> for String {
    fn from(e: EditSet) -> String {
        e.to_string()
    }
}

/// What a run restricts its methods to, held in one place ([`ExplainJob`](crate::run::ExplainJob)
/// and [`MethodSettings`](super::MethodSettings) each hold one) and given to each method as it
/// is built, as the run's [`Protocol`](induce_explain::Protocol) is: InduCE's environment
/// ([`super::method_config`]) and the searches' settings take theirs from it, and a method that
/// would ignore one is refused before any work.
///
/// ```
/// use induce::methods::Restrictions;
/// let r = Restrictions { budget: Some(5), ..Restrictions::default() };
/// assert!(r.goal.is_any_other() && r.locked.is_empty() && r.allowed.is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Restrictions {
    /// Edit types the methods are restricted to (`--edits`; `None`: each method's own).
    pub edits: Option<EditSet>,
    /// Node pairs InduCE's edits are restricted to (the paper's `V_c`, `--allowed`; `None`:
    /// every pair).
    pub allowed: Option<Vec<(u32, u32)>>,
    /// Nodes and pairs no edit may touch (`--lock-nodes`, `--lock-edges`): InduCE's methods and
    /// the searches.
    #[serde(default, skip_serializing_if = "Locked::is_empty")]
    pub locked: Locked,
    /// What a counterfactual must reach (`--to-class`; default any other class): InduCE's
    /// methods and the searches.
    #[serde(default, skip_serializing_if = "Goal::is_any_other")]
    pub goal: Goal,
    /// The edit budget δ of InduCE's methods (a loaded policy's too) and of greedy
    /// (`--budget`; `None`: each configuration's own, a loaded policy's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<usize>,
    /// Feature columns no feature edit may change (`--lock-features`), with `--edits …,feat`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locked_features: Vec<u32>,
}

/// Refuses a method list with a method that would ignore one of the job's `restrictions` ([`Method::supports`]), naming the method and the restriction. Every job
/// checks it before loading anything.
pub(crate) fn check_methods(methods: &[Method], restrictions: &Restrictions) -> Result<()> {
    if !restrictions.locked_features.is_empty() && !restrictions.edits.is_some_and(|e| e.feat) {
        return Err(Error::InvalidValue {
            what: "setting",
            value: "--lock-features".into(),
            reason: "it restricts feature edits, and this run searches none: add feat to \
                     --edits (--edits add,del,feat)"
                .into(),
        });
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
        if restrictions.allowed.is_some() && !s.allowed {
            return refuse(format!(
                "the allowed pairs (--allowed, the paper's V_c) restrict InduCE's edits; {m} \
                 edits {} and would ignore them: run it without --allowed",
                s.edits_what
            ));
        }
        if !restrictions.locked.is_empty() && !s.locked {
            return refuse(format!(
                "locked nodes and edges (--lock-nodes, --lock-edges) restrict the edits of \
                 InduCE's methods and of the searches (greedy, exact); {m} edits {} and would \
                 ignore them: run it without them",
                s.edits_what
            ));
        }
        if !restrictions.goal.is_any_other() && !s.goal {
            return refuse(format!(
                "a desired class (--to-class) is kept by InduCE's methods and the searches \
                 (greedy, exact); {m} stops at any other class and would ignore it: run it \
                 without --to-class"
            ));
        }
        if restrictions.edits.is_some_and(|e| e.feat) && !s.features {
            return refuse(format!(
                "it edits {} and no features, so it cannot search feature edits (--edits \
                 …,feat; greedy and exact do): run it without feat in --edits",
                s.edits_what
            ));
        }
        if let Some(mode) = restrictions
            .edits
            .and_then(|e| e.edges())
            .filter(|&e| !s.keeps(e))
        {
            let (what, flag) = match mode {
                EditMode::Both => ("a choice of edit types", "both"),
                EditMode::AddOnly => ("additions only", "add"),
                EditMode::DeleteOnly => ("deletions only", "del"),
            };
            if s.edits.is_empty() {
                return refuse(format!(
                    "it edits {} and no edges, so it cannot search edge edits (--edits {}): \
                     run it with --edits feat, or without --edits",
                    s.edits_what,
                    restrictions.edits.map_or(String::new(), |e| e.to_string())
                ));
            }
            return refuse(format!(
                "it edits {}, so it cannot be restricted to {what} (--edits {flag}): run it \
                 without --edits",
                s.edits_what
            ));
        }
    }
    Ok(())
}

/// The [`RunOptions`](crate::run::RunOptions) that only training reads: [`check_settings`]
/// refuses them rather than ignoring them silently.
pub const TRAINING_SETTINGS: [&str; 3] = ["training", "sample", "max_judged"];

/// Refuses a run option that no method of `methods` reads, naming it and the methods that do,
/// and an option only training reads ([`TRAINING_SETTINGS`]).
/// `chosen` are the [`RunOptions`](crate::run::RunOptions) fields the user set (and `policy`);
/// an option no method declares ([`MethodDecl::settings`](super::MethodDecl)) is the run's
/// own (data, targets, protocol, restrictions, scale) and always applies.
///
/// ```
/// use induce::Method;
/// use induce::run::{ExplainJob, RunOptions};
/// let o = RunOptions { shortlist: Some(8), ..RunOptions::default() };
/// let job = |m: Method| o.explain_job("tree-cycles", "gcn.bpk", None, None, &[m],
///     induce::TargetSpec::Test).validate().map_err(|e| e.to_string());
/// assert!(job(Method::GREEDY).is_ok());
/// let e = job(Method::CF_GNNEXPLAINER).unwrap_err();
/// assert!(e.contains("RunOptions.shortlist") && e.contains("read by greedy"), "{e}");
/// ```
pub fn check_settings(methods: &[Method], chosen: &[String]) -> Result<()> {
    if let Some(option) = (chosen.iter()).find(|c| TRAINING_SETTINGS.contains(&c.as_str())) {
        return Err(Error::InvalidValue {
            what: "setting",
            value: format!("RunOptions.{option}"),
            reason: "it says how a policy is trained, and explaining trains none: give it to \
                     the training (induce train, induce.train_policy) and the policy here"
                .into(),
        });
    }
    for option in chosen {
        let readers: Vec<&str> = (super::ALL.iter())
            .filter(|d| d.settings.contains(&option.as_str()))
            .map(|d| d.name)
            .collect();
        if readers.is_empty() || methods.iter().any(|m| m.reads(option)) {
            continue;
        }
        return Err(Error::InvalidValue {
            what: "setting",
            value: format!("RunOptions.{option}"),
            reason: format!(
                "no method of this run ({}) reads it; it is read by {}",
                methods
                    .iter()
                    .map(|m| m.name())
                    .collect::<Vec<_>>()
                    .join(", "),
                readers.join(", ")
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_restriction_is_refused_where_a_method_would_ignore_it() {
        let check = |m: Method, r: Restrictions| check_methods(&[m], &r).map_err(|e| e.to_string());
        let edits = |e| Restrictions {
            edits: Some(EditSet::from(e)),
            ..Restrictions::default()
        };
        for m in Method::all() {
            assert!(check(m, Restrictions::default()).is_ok(), "{m}");
        }
        // InduCE's methods keep every restriction but the deletion-only one's additions.
        let locked = Locked::new(vec![3], vec![]);
        let all = Restrictions {
            allowed: Some(vec![(0, 1)]),
            locked: locked.clone(),
            goal: Goal::Class(1),
            ..edits(EditMode::AddOnly)
        };
        assert!(check(Method::TRANSDUCTIVE, all).is_ok());
        let e = check(Method::INDUCTIVE_DEL_ONLY, edits(EditMode::AddOnly)).unwrap_err();
        assert!(
            e.contains("inductive-del-only") && e.contains("--edits add"),
            "{e}"
        );
        // The searches: locks and a desired class, no --edits, no allowed pairs.
        let kept = Restrictions {
            locked,
            goal: Goal::Class(1),
            ..Restrictions::default()
        };
        assert!(check(Method::EXACT, kept).is_ok());
        assert!(check(Method::GREEDY, edits(EditMode::DeleteOnly)).is_err());
        // Feature edits: the searches and InduCE's policy edit them (beside edges or alone); the
        // deletion-only policy and the edge baselines do not.
        let feat = |s: &str| Restrictions {
            edits: Some(s.parse().unwrap()),
            ..Restrictions::default()
        };
        assert!(check(Method::GREEDY, feat("add,del,feat")).is_ok());
        assert!(check(Method::GREEDY, feat("feat")).is_ok());
        assert!(check(Method::GREEDY, feat("both")).is_ok());
        assert!(check(Method::EXACT, feat("feat")).is_ok());
        let e = check(Method::RANDOM, feat("feat")).unwrap_err();
        assert!(e.contains("random") && e.contains("feat"), "{e}");
        assert!(check(Method::TRANSDUCTIVE, feat("add,del,feat")).is_ok());
        assert!(check(Method::INDUCTIVE, feat("feat")).is_ok());
        let e = check(Method::INDUCTIVE_DEL_ONLY, feat("del,feat")).unwrap_err();
        assert!(
            e.contains("inductive-del-only") && e.contains("feat"),
            "{e}"
        );
        // CF-GNNFeatures edits features only: with feat alone or no --edits, never edges.
        assert!(check(Method::CF_GNNFEATURES, feat("feat")).is_ok());
        assert!(check(Method::CF_GNNFEATURES, Restrictions::default()).is_ok());
        let e = check(Method::CF_GNNFEATURES, feat("add,del,feat")).unwrap_err();
        assert!(e.contains("no edges") && e.contains("--edits feat"), "{e}");
        assert!(check(Method::CF_GNNFEATURES, feat("del")).is_err());
        // Locked feature columns restrict feature edits: refused without them.
        let locked_features = |edits: Option<&str>| Restrictions {
            edits: edits.map(|s| s.parse().unwrap()),
            locked_features: vec![3],
            ..Restrictions::default()
        };
        assert!(check(Method::GREEDY, locked_features(Some("feat"))).is_ok());
        assert!(check(Method::CF_GNNFEATURES, locked_features(Some("feat"))).is_ok());
        let e = check(Method::GREEDY, locked_features(None)).unwrap_err();
        assert!(e.contains("--lock-features"), "{e}");
        // The deleting baselines keep deletions only; ++ keeps no restriction of its edits.
        assert!(check(Method::CF2, edits(EditMode::DeleteOnly)).is_ok());
        let e = check(Method::CF2, edits(EditMode::AddOnly)).unwrap_err();
        assert!(e.contains("cf2") && e.contains("deletions"), "{e}");
        let e = check(Method::CF_GNNEXPLAINER_PLUS_PLUS, edits(EditMode::AddOnly)).unwrap_err();
        assert!(e.contains("cf-gnnexplainer++"), "{e}");
        let goal = Restrictions {
            goal: Goal::Class(1),
            ..Restrictions::default()
        };
        assert!(
            check(Method::RANDOM, goal)
                .unwrap_err()
                .contains("--to-class")
        );
    }
}
