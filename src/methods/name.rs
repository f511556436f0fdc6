//! [`Method`]: the explanation methods by the names `--method` and `summary.json` use.

use std::fmt;
use std::str::FromStr;

use induce_rl::EditMode;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// An explanation method, named as the command line's `--method` and the rows of
/// `summary.json` spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Method {
    /// InduCE inductive: one policy trained on training targets, greedy forward passes per
    /// target (`inductive`).
    Inductive,
    /// InduCE inductive with best-of-k inference: the greedy episode and
    /// `inference_samples − 1` episodes sampled from the same trained policy, the smallest
    /// counterfactual kept; forward passes only (`inductive-best-of-k`).
    InductiveBestOfK,
    /// InduCE transductive: a policy trained per target (`transductive`).
    Transductive,
    /// The trained inductive policy fine-tuned per target: its greedy episode, then the
    /// transductive schedule (episodes, γ) starting from its parameters instead of a fresh
    /// network (`inductive-fine-tuned`; not in the paper).
    InductiveFineTuned,
    /// InduCE inductive restricted to deletions (`inductive-del-only`).
    InductiveDelOnly,
    /// The same network as `inductive`, untrained: the ablation of training (`untrained`).
    Untrained,
    /// Random deletion masks, the smallest that flips kept (`random`).
    Random,
    /// CF-GNNExplainer, deletions only (`cf-gnnexplainer`).
    CfGnnExplainer,
    /// CF-GNNExplainer with additions: a mask over every pair (`cf-gnnexplainer++`).
    CfGnnExplainerPlusPlus,
    /// CF² in its counterfactual setting, α = 0 (`cf2`).
    Cf2,
    /// PGExplainer trained on the training targets; its top-k edges deleted (`pgexplainer`).
    PgExplainer,
    /// The exhaustive one-step search in InduCE's action space: every action tried at every
    /// step by an exact verdict, the one that most lowers the original class's margin kept
    /// (`greedy`; the reference for what a search finds).
    Greedy,
    /// The certified minimum: every edit set of InduCE's action space tried by size up to
    /// `--max-size` (`exact`; the reference for size).
    Exact,
}

impl Method {
    /// The InduCE methods, in the order the experiments run them.
    pub const INDUCE: [Method; 5] = [
        Method::Inductive,
        Method::InductiveBestOfK,
        Method::Transductive,
        Method::InductiveDelOnly,
        Method::Untrained,
    ];

    /// The baselines (crate `induce-baselines`), in the order the experiments run them.
    pub const BASELINES: [Method; 5] = [
        Method::Random,
        Method::CfGnnExplainer,
        Method::CfGnnExplainerPlusPlus,
        Method::Cf2,
        Method::PgExplainer,
    ];

    /// The search references (crate `induce-baselines`): exact verdicts over InduCE's action
    /// space, run only when asked (they cost thousands of evaluations per target).
    pub const SEARCHES: [Method; 2] = [Method::Greedy, Method::Exact];

    /// The methods an experiment runs by default: [`Method::INDUCE`], then the baselines.
    pub const DEFAULT: [Method; 10] = [
        Method::Inductive,
        Method::InductiveBestOfK,
        Method::Transductive,
        Method::InductiveDelOnly,
        Method::Untrained,
        Method::Random,
        Method::CfGnnExplainer,
        Method::CfGnnExplainerPlusPlus,
        Method::Cf2,
        Method::PgExplainer,
    ];

    /// Every method: InduCE's (with `inductive-fine-tuned`, which experiments run only when
    /// asked), then the baselines.
    pub const ALL: [Method; 13] = [
        Method::Inductive,
        Method::InductiveBestOfK,
        Method::Transductive,
        Method::InductiveFineTuned,
        Method::InductiveDelOnly,
        Method::Untrained,
        Method::Random,
        Method::CfGnnExplainer,
        Method::CfGnnExplainerPlusPlus,
        Method::Cf2,
        Method::PgExplainer,
        Method::Greedy,
        Method::Exact,
    ];

    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Inductive => "inductive",
            Method::InductiveBestOfK => "inductive-best-of-k",
            Method::Transductive => "transductive",
            Method::InductiveFineTuned => "inductive-fine-tuned",
            Method::InductiveDelOnly => "inductive-del-only",
            Method::Untrained => "untrained",
            Method::Random => "random",
            Method::CfGnnExplainer => "cf-gnnexplainer",
            Method::CfGnnExplainerPlusPlus => "cf-gnnexplainer++",
            Method::Cf2 => "cf2",
            Method::PgExplainer => "pgexplainer",
            Method::Greedy => "greedy",
            Method::Exact => "exact",
        }
    }

    /// True for the baselines and the searches (built by [`baseline`](super::baseline), not [`explainer`](super::explainer)).
    pub fn is_baseline(self) -> bool {
        Method::BASELINES.contains(&self) || Method::SEARCHES.contains(&self)
    }

    /// True for the methods that can add edges: InduCE's (but `inductive-del-only`),
    /// `cf-gnnexplainer++`, `greedy` and `exact`.
    pub fn adds_edges(self) -> bool {
        match self.is_baseline() {
            true => matches!(
                self,
                Method::CfGnnExplainerPlusPlus | Method::Greedy | Method::Exact
            ),
            false => self.edit_mode() != Some(EditMode::DeleteOnly),
        }
    }

    /// False for the methods whose results do not depend on the seed (CF-GNNExplainer and ++:
    /// their mask starts at 1 and their optimisation draws nothing at random).
    pub fn depends_on_seed(self) -> bool {
        !matches!(
            self,
            Method::CfGnnExplainer
                | Method::CfGnnExplainerPlusPlus
                | Method::Greedy
                | Method::Exact
        )
    }

    /// True for the methods that optimise through the black box's gradients with respect to
    /// edge weights ([`BlackBox::edge_weighted`](induce_models::BlackBox::edge_weighted)):
    /// `cf-gnnexplainer`, `cf-gnnexplainer++`, `cf2`, `pgexplainer`. The others need only
    /// predictions.
    pub fn needs_gradients(self) -> bool {
        matches!(
            self,
            Method::CfGnnExplainer
                | Method::CfGnnExplainerPlusPlus
                | Method::Cf2
                | Method::PgExplainer
        )
    }

    /// True for the methods trained on the training targets before explaining (the inductive
    /// policy is trained separately; PGExplainer trains as it is built).
    pub fn needs_training_targets(self) -> bool {
        self == Method::PgExplainer
    }

    /// True for the methods that explain with a trained inductive policy (`--policy`).
    pub fn needs_policy(self) -> bool {
        matches!(
            self,
            Method::Inductive
                | Method::InductiveBestOfK
                | Method::InductiveDelOnly
                | Method::InductiveFineTuned
        )
    }

    /// The edit mode the method imposes, if any.
    pub fn edit_mode(self) -> Option<EditMode> {
        match self {
            Method::InductiveDelOnly => Some(EditMode::DeleteOnly),
            _ => None,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = Error;

    /// A method name; `induce-` prefixes (`induce-inductive`) are accepted.
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim().to_ascii_lowercase();
        let bare = s.strip_prefix("induce-").unwrap_or(&s);
        let bare = match bare {
            "untrained-policy" => "untrained",
            "best-of-k" | "inductive-bok" => "inductive-best-of-k",
            "fine-tuned" | "inductive-finetuned" => "inductive-fine-tuned",
            "cf-gnn" | "cfgnnexplainer" | "cf-gnn-explainer" => "cf-gnnexplainer",
            "cf-gnn++" | "cfgnnexplainer++" | "cf-gnn-explainer++" => "cf-gnnexplainer++",
            "cf²" | "cff" => "cf2",
            "pg-explainer" => "pgexplainer",
            other => other,
        };
        Method::ALL
            .into_iter()
            .find(|m| m.name() == bare)
            .ok_or_else(|| Error::InvalidValue {
                what: "method",
                value: s.to_string(),
                reason: format!(
                    "expected one of {}",
                    Method::ALL.map(Method::name).join(", ")
                ),
            })
    }
}

impl From<Method> for String {
    fn from(m: Method) -> Self {
        m.name().to_string()
    }
}

impl TryFrom<String> for Method {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for m in Method::ALL {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
            assert_eq!(format!("induce-{m}").parse::<Method>().unwrap(), m);
        }
        assert_eq!(
            "untrained-policy".parse::<Method>().unwrap(),
            Method::Untrained
        );
        assert_eq!("CF-GNN".parse::<Method>().unwrap(), Method::CfGnnExplainer);
        let e = "gem".parse::<Method>().unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid method `gem`: expected one of inductive, inductive-best-of-k, \
             transductive, inductive-fine-tuned, inductive-del-only, untrained, random, cf-gnnexplainer, cf-gnnexplainer++, cf2, \
             pgexplainer, greedy, exact"
        );
        assert!(Method::BASELINES.iter().all(|m| m.is_baseline()));
        assert!(Method::INDUCE.iter().all(|m| !m.is_baseline()));
    }
}
