//! [`Method`]: an explanation method, a handle on its declaration ([`MethodDecl`]). Each method
//! declares itself once, in its own file beside its code (`src/methods/<method>.rs`): its name,
//! what it supports, the settings it reads, how it is built and how it describes itself. The one
//! list of methods is [`ALL`](super::ALL); everything else (the command line's `--method` and its
//! help, the Python package's `METHODS`, the checks of a run's settings) iterates over it.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use burn::tensor::Device;
use induce_explain::{Explainer, Protocol};
use induce_graph::Dataset;
use induce_models::{BlackBox, Policy};
use induce_rl::{EditMode, InduceConfig};
use serde::{Deserialize, Serialize};

use super::{BaselineConfig, Supports};
use crate::error::{Error, Result};

/// What kind of method it is: how a run prepares it and where the docs list it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One of InduCE's: a policy network proposes the edits ([`InduceConfig`] configures it).
    Induce,
    /// A method InduCE is compared with ([`BaselineConfig`] configures it).
    Baseline,
    /// A search reference: exact verdicts over InduCE's action space, run only when asked
    /// (thousands of evaluations per target; [`BaselineConfig`] configures it).
    Search,
}

/// How an InduCE method takes its [`InduceConfig`] from a run ([`super::method_config`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// Inference: a trained policy's settings (or the run's, for a network built here), with the
    /// run's inference settings.
    Inference,
    /// A policy trained per target: the run's transductive schedule, whole.
    PerTarget,
    /// A trained policy fine-tuned per target: its settings with the run's transductive
    /// schedule (episodes, γ, learning rate, greedy episodes).
    FineTune,
    /// Not an InduCE method.
    None,
}

/// What a method needs of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Needs {
    /// A trained inductive policy (`--policy`).
    pub policy: bool,
    /// The black box's gradients with respect to edge weights
    /// ([`BlackBox::edge_weighted`](induce_models::BlackBox::edge_weighted)).
    pub gradients: bool,
    /// The training targets, trained on as it is built (PGExplainer).
    pub training_targets: bool,
}

impl Needs {
    /// Nothing beyond the black box's predictions.
    pub const NONE: Needs = Needs {
        policy: false,
        gradients: false,
        training_targets: false,
    };
}

/// What a method's builder is given ([`MethodDecl::build`]).
pub struct Build<'s, 'a> {
    /// The method being built.
    pub method: Method,
    /// The data.
    pub data: &'s Dataset,
    /// The black box every verdict comes from.
    pub black_box: &'a dyn BlackBox,
    /// The trained policy, for the methods that need one.
    pub policy: Option<&'s Policy>,
    /// The InduCE configuration the method runs with ([`super::method_config`]; the run's for a
    /// baseline, which ignores it).
    pub induce: &'s InduceConfig,
    /// The baselines' and searches' settings (the run's restrictions applied).
    pub baselines: &'s BaselineConfig,
    /// The run's protocol: its verdicts and minimality pass.
    pub protocol: Protocol,
    /// The nodes a method trained as it is built trains on.
    pub train_targets: &'s [u32],
    /// The device.
    pub device: &'s Device,
}

impl Build<'_, '_> {
    /// The trained policy, or an error naming the method that needs it.
    pub fn policy(&self) -> Result<&Policy> {
        self.policy.ok_or_else(|| Error::InvalidValue {
            what: "method",
            value: self.method.name().into(),
            reason: "needs a trained policy (ExplainJob.policy: a policy file or the directory \
                     `induce train` wrote)"
                .into(),
        })
    }
}

/// What a method's note is written from ([`MethodDecl::describe`]).
pub struct Describe<'s> {
    /// The InduCE configuration it runs with (`None` for a baseline).
    pub induce: Option<&'s InduceConfig>,
    /// The baselines' and searches' settings.
    pub baselines: &'s BaselineConfig,
    /// The run's protocol.
    pub protocol: Protocol,
    /// The number of nodes a method trained as it is built trained on.
    pub train_targets: usize,
    /// The radius its explainer searches ([`Explainer::neighbourhood_hops`]).
    pub searched_hops: Option<u32>,
}

/// A method's builder: its explainer against `build.black_box`.
pub type BuildFn = for<'s, 'a> fn(&Build<'s, 'a>) -> Result<Box<dyn Explainer + 'a>>;

/// A method's note: one line saying what it ran with (a run's notes carry it).
pub type DescribeFn = fn(&Describe<'_>) -> Option<String>;

/// Everything the facade knows about one method, declared once beside its code.
///
/// ```
/// use induce::methods::{ALL, Kind, Method};
/// let greedy = Method::GREEDY.decl();
/// assert_eq!((greedy.name, greedy.kind), ("greedy", Kind::Search));
/// assert!(greedy.settings.contains(&"shortlist"));
/// assert!(ALL.iter().any(|d| d.name == "greedy"));
/// ```
#[derive(Debug)]
pub struct MethodDecl {
    /// The name `--method`, `summary.json` and Python's `METHODS` use.
    pub name: &'static str,
    /// Other spellings `--method` accepts.
    pub aliases: &'static [&'static str],
    /// What it does, in one line (the command line's `--method` help lists it).
    pub summary: &'static str,
    /// What kind of method it is.
    pub kind: Kind,
    /// Whether an experiment runs it when no method list is given.
    pub default_run: bool,
    /// What it keeps of a run's restrictions.
    pub supports: Supports,
    /// What it needs of a run.
    pub needs: Needs,
    /// Whether its results depend on the seed.
    pub seeded: bool,
    /// Whether it can add edges.
    pub adds_edges: bool,
    /// The edit mode it imposes on InduCE's environment, if any.
    pub edit_mode: Option<EditMode>,
    /// How an InduCE method takes its configuration ([`Schedule::None`] for the others).
    pub schedule: Schedule,
    /// The run options ([`RunOptions`](crate::run::RunOptions) fields) it reads beyond every
    /// method's (data, model, targets, protocol and restrictions): a run that sets one that no
    /// method of its list reads is refused, naming the methods that read it.
    pub settings: &'static [&'static str],
    /// Builds its explainer.
    pub build: BuildFn,
    /// Its note.
    pub describe: DescribeFn,
}

impl fmt::Debug for Build<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Build")
            .field("method", &self.method)
            .finish_non_exhaustive()
    }
}

/// An explanation method, named as the command line's `--method` and the rows of
/// `summary.json` spell it: a handle on its [`MethodDecl`].
///
/// ```
/// use induce::Method;
/// let m: Method = "greedy".parse().unwrap();
/// assert_eq!(m, Method::GREEDY);
/// assert!(!m.needs_policy() && m.adds_edges());
/// assert_eq!("CF-GNN".parse::<Method>().unwrap(), Method::CF_GNNEXPLAINER);
/// ```
#[derive(Clone, Copy)]
pub struct Method(&'static MethodDecl);

impl Method {
    /// InduCE inductive: one policy trained on training targets, greedy forward passes per
    /// target.
    pub const INDUCTIVE: Method = Method(&super::inductive::DECL);
    /// InduCE inductive with best-of-k inference.
    pub const INDUCTIVE_BEST_OF_K: Method = Method(&super::best_of_k::DECL);
    /// InduCE transductive: a policy trained per target.
    pub const TRANSDUCTIVE: Method = Method(&super::transductive::DECL);
    /// The trained inductive policy fine-tuned per target.
    pub const INDUCTIVE_FINE_TUNED: Method = Method(&super::fine_tuned::DECL);
    /// InduCE inductive restricted to deletions.
    pub const INDUCTIVE_DEL_ONLY: Method = Method(&super::del_only::DECL);
    /// The inductive network, untrained.
    pub const UNTRAINED: Method = Method(&super::untrained::DECL);
    /// Random deletion masks.
    pub const RANDOM: Method = Method(&super::random::DECL);
    /// CF-GNNExplainer, deletions only.
    pub const CF_GNNEXPLAINER: Method = Method(&super::cf_gnnexplainer::DECL);
    /// CF-GNNExplainer with additions.
    pub const CF_GNNEXPLAINER_PLUS_PLUS: Method = Method(&super::cf_gnnexplainer::PLUS_PLUS);
    /// CF-GNNFeatures: a feature mask.
    pub const CF_GNNFEATURES: Method = Method(&super::cf_gnnfeatures::DECL);
    /// CF² in its counterfactual setting.
    pub const CF2: Method = Method(&super::cf2::DECL);
    /// PGExplainer, its top-k edges deleted.
    pub const PGEXPLAINER: Method = Method(&super::pgexplainer::DECL);
    /// The exhaustive (or bounded) one-step search.
    pub const GREEDY: Method = Method(&super::greedy::DECL);
    /// The certified minimum.
    pub const EXACT: Method = Method(&super::exact::DECL);

    /// The method declared by `decl`.
    pub const fn new(decl: &'static MethodDecl) -> Self {
        Method(decl)
    }

    /// Every method, in the order of [`ALL`](super::ALL).
    pub fn all() -> Vec<Method> {
        super::ALL.iter().map(|&d| Method(d)).collect()
    }

    /// The methods of `kind`, in [`ALL`](super::ALL)'s order.
    pub fn of_kind(kind: Kind) -> Vec<Method> {
        (Method::all().into_iter())
            .filter(|m| m.0.kind == kind)
            .collect()
    }

    /// The methods an experiment runs when none are given: InduCE's and the baselines, not the
    /// searches nor `inductive-fine-tuned`.
    pub fn defaults() -> Vec<Method> {
        (Method::all().into_iter())
            .filter(|m| m.0.default_run)
            .collect()
    }

    /// Its declaration.
    pub fn decl(self) -> &'static MethodDecl {
        self.0
    }

    /// The method's name.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// What kind of method it is.
    pub fn kind(self) -> Kind {
        self.0.kind
    }

    /// True for the baselines and the searches (configured by [`BaselineConfig`]).
    pub fn is_baseline(self) -> bool {
        self.0.kind != Kind::Induce
    }

    /// True for the methods that can add edges.
    pub fn adds_edges(self) -> bool {
        self.0.adds_edges
    }

    /// False for the methods whose results do not depend on the seed.
    pub fn depends_on_seed(self) -> bool {
        self.0.seeded
    }

    /// True for the methods that optimise through the black box's gradients with respect to
    /// edge weights ([`BlackBox::edge_weighted`](induce_models::BlackBox::edge_weighted)).
    pub fn needs_gradients(self) -> bool {
        self.0.needs.gradients
    }

    /// True for the methods trained on the training targets as they are built.
    pub fn needs_training_targets(self) -> bool {
        self.0.needs.training_targets
    }

    /// True for the methods that explain with a trained inductive policy (`--policy`).
    pub fn needs_policy(self) -> bool {
        self.0.needs.policy
    }

    /// The edit mode the method imposes, if any.
    pub fn edit_mode(self) -> Option<EditMode> {
        self.0.edit_mode
    }

    /// What this method keeps of a run's restrictions.
    pub fn supports(self) -> Supports {
        self.0.supports
    }

    /// Whether it reads the run option `option` (a [`RunOptions`](crate::run::RunOptions)
    /// field name).
    pub fn reads(self, option: &str) -> bool {
        self.0.settings.contains(&option)
    }

    /// Builds its explainer.
    pub fn build<'a>(self, build: &Build<'_, 'a>) -> Result<Box<dyn Explainer + 'a>> {
        (self.0.build)(build)
    }

    /// Its note.
    pub fn describe(self, describe: &Describe<'_>) -> Option<String> {
        (self.0.describe)(describe)
    }
}

/// The methods with their summaries, one per line, grouped by kind: the command line's
/// `--method` help.
///
/// ```
/// let help = induce::methods::method_help();
/// assert!(help.contains("greedy: the one-step search"), "{help}");
/// ```
pub fn method_help() -> String {
    let mut out = String::from(
        "Methods, comma-separated or repeated. A variant runs a method with options of its \
         own, a row of its own: greedy:shortlist=64, inductive:lookahead=8:widen=true (each \
         option one its method reads).",
    );
    for (kind, heading) in [
        (Kind::Induce, "InduCE's"),
        (Kind::Baseline, "the baselines"),
        (Kind::Search, "the search references"),
    ] {
        out.push_str(&format!("\n{heading}:"));
        for d in super::ALL.iter().filter(|d| d.kind == kind) {
            out.push_str(&format!("\n  {}: {}", d.name, d.summary));
        }
    }
    out
}

impl PartialEq for Method {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for Method {}

impl Hash for Method {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

impl fmt::Debug for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Method({})", self.0.name)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = Error;

    /// A method name or one of its aliases; `induce-` prefixes (`induce-inductive`) are
    /// accepted.
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim().to_ascii_lowercase();
        let bare = s.strip_prefix("induce-").unwrap_or(&s);
        (super::ALL.iter())
            .find(|d| d.name == bare || d.aliases.contains(&bare))
            .map(|&d| Method(d))
            .ok_or_else(|| Error::InvalidValue {
                what: "method",
                value: s.to_string(),
                reason: format!(
                    "expected one of {}",
                    super::ALL
                        .iter()
                        .map(|d| d.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
    }
}

impl Serialize for Method {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Method {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for m in Method::all() {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
            assert_eq!(format!("induce-{m}").parse::<Method>().unwrap(), m);
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<Method>(&json).unwrap(), m);
        }
        assert_eq!(
            "untrained-policy".parse::<Method>().unwrap(),
            Method::UNTRAINED
        );
        assert_eq!("CF-GNN".parse::<Method>().unwrap(), Method::CF_GNNEXPLAINER);
        let e = "gem".parse::<Method>().unwrap_err().to_string();
        assert!(
            e.starts_with(
                "invalid method `gem`: expected one of inductive, inductive-best-of-k, \
                 transductive, inductive-fine-tuned, inductive-del-only, untrained, random, \
                 cf-gnnexplainer, cf-gnnexplainer++, cf-gnnfeatures, cf2, pgexplainer, greedy, exact"
            ),
            "{e}"
        );
        assert!(
            Method::of_kind(Kind::Baseline)
                .iter()
                .all(|m| m.is_baseline())
        );
        assert!(
            Method::of_kind(Kind::Induce)
                .iter()
                .all(|m| !m.is_baseline())
        );
    }

    #[test]
    fn every_name_and_alias_names_one_method() {
        let mut seen = std::collections::HashSet::new();
        for d in super::super::ALL {
            for n in std::iter::once(&d.name).chain(d.aliases) {
                assert!(seen.insert(*n), "{n} names two methods");
            }
            assert!(!d.summary.is_empty(), "{} has no summary", d.name);
            // An InduCE method has a schedule, and only an InduCE method.
            assert_eq!(
                d.kind == Kind::Induce,
                d.schedule != Schedule::None,
                "{}",
                d.name
            );
        }
    }

    #[test]
    fn every_declared_setting_is_a_run_option() {
        let options = crate::run::RunOptions::names();
        for d in super::super::ALL {
            for s in d.settings {
                assert!(
                    *s == "policy" || options.iter().any(|o| o == s),
                    "{}: `{s}` is not a RunOptions field",
                    d.name
                );
            }
            // A method that needs a policy reads `policy`, and no other does.
            assert_eq!(d.needs.policy, d.settings.contains(&"policy"), "{}", d.name);
        }
    }
}
