//! The edit MDP of InduCE (spec §2): one [`Episode`] per target node.
//!
//! This module holds the episode's configuration ([`EnvConfig`], [`EditMode`], [`StateLayout`],
//! [`ActionFlag`], [`state_dim`]); its submodules the candidate actions ([`Candidates`]), the
//! per-node state ([`StateSnapshot`], [`reference_entropy`]), the episode itself ([`Episode`],
//! [`PendingEpisode`]) and its transition ([`Step`], [`Episode::step`]).

use induce_explain::features::{DEFAULT_FEATURE_QUANTILES, FeatureNodes};
use induce_explain::{Goal, Locked, Verdict};
use serde::{Deserialize, Serialize};

use crate::reward::Reward;

mod candidates;
mod episode;
mod estimate;
mod state;
mod step;
#[cfg(test)]
mod tests;

pub use candidates::{ActionKind, Candidates};

pub use episode::{Episode, PendingEpisode};
pub use state::{StateSnapshot, reference_entropy};
pub use step::Step;

/// Which edit types an episode may use.
///
/// Serialised as `"both"`, `"delete_only"`, `"add_only"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditMode {
    /// Deletions and additions (InduCE).
    #[default]
    Both,
    /// Deletions only (InduCE−−, the `V_c ⊆ E` special case).
    DeleteOnly,
    /// Additions only (the `V_c ∩ E = ∅` special case).
    AddOnly,
}

/// How the per-node state of an [`Episode`] is built. Chosen once per episode.
///
/// Serialised as `"paper"` / `"reference"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateLayout {
    /// Spec §2 (our default): `[original features ‖ degree in the current subgraph ‖ entropy
    /// (nats, `0 · log 0 = 0`) of the black box's current distribution ‖ one-hot of the
    /// current predicted label]`, recomputed after every edit.
    #[default]
    Paper,
    /// The authors' code (spec §7, parity): `[entropy ‖ degree in the current subgraph ‖
    /// one-hot of the GROUND-TRUTH label ‖ original features]`, where the entropy is the base-2
    /// entropy `−Σ_c q_c log2 q_c` of `q = sigmoid(log p)`, computed in f32 once on the
    /// original neighbourhood and never updated. A NaN is kept on purpose: `sigmoid` underflows
    /// to exactly 0 below `log p ≈ −88.7`, and `0 · log2 0` is NaN, as in PyTorch. Only the
    /// degree column changes after an edit.
    Reference,
    /// [`StateLayout::Paper`]'s columns and two more that place each node relative to the
    /// target (not in the paper; `--state targeted`): `[… ‖ hop distance from the target in
    /// the original neighbourhood, divided by its radius (the target 0, the ball's rim 1) ‖ the
    /// black box's current probability that the node is of a class that would end the episode
    /// for the target (`1 − p(y)` for the target's original class `y`; `p(c)` with
    /// `--to-class c`)]`, the second recomputed after every edit. Without them the policy
    /// cannot tell an edge at the target from one at the rim, nor an addition to a node of
    /// another class from one to a node of the target's own.
    Targeted,
    /// [`StateLayout::Targeted`]'s columns and one more (not in the paper; `--state
    /// estimated`): the black box's first-order estimate of how much toggling the pair
    /// `(target, v)` (adding it, or deleting it when it is an edge) lowers the target's margin,
    /// over the current margin and clamped to `[−4, 4]` (0 for the target), from one gradient
    /// of the black box per state, recomputed after every edit: what `greedy --shortlist`
    /// ranks actions by. Needs a black box with gradients
    /// ([`BlackBox::edge_weighted`](induce_models::BlackBox::edge_weighted)).
    Estimated,
}

impl StateLayout {
    /// Width of the per-node state vector for a graph with `feature_dim` features and a
    /// black box with `num_classes` classes: [`state_dim`] for the paper's and the authors'
    /// layouts, two more for [`StateLayout::Targeted`], three for [`StateLayout::Estimated`].
    ///
    /// ```
    /// use induce_rl::StateLayout;
    /// assert_eq!(StateLayout::Paper.width(10, 4), 16);
    /// assert_eq!(StateLayout::Targeted.width(10, 4), 18);
    /// assert_eq!(StateLayout::Estimated.width(10, 4), 19);
    /// ```
    pub fn width(self, feature_dim: usize, num_classes: usize) -> usize {
        let extra = match self {
            StateLayout::Paper | StateLayout::Reference => 0,
            StateLayout::Targeted => 2,
            StateLayout::Estimated => 3,
        };
        state_dim(feature_dim, num_classes) + extra
    }

    /// True when the node features come first and never change (the paper's, the targeted
    /// and the estimated layouts).
    pub fn features_first(self) -> bool {
        matches!(
            self,
            StateLayout::Paper | StateLayout::Targeted | StateLayout::Estimated
        )
    }

    /// The targeted layout's columns (hop distance, probability of a class that ends the
    /// episode) start this many columns before the end of the changing block (`None`: not in
    /// this layout).
    pub(crate) fn targeted_from_end(self) -> Option<usize> {
        match self {
            StateLayout::Targeted => Some(2),
            StateLayout::Estimated => Some(3),
            StateLayout::Paper | StateLayout::Reference => None,
        }
    }
}

/// The scalar action-type feature `flag` each candidate carries into the policy's MLP.
///
/// Serialised as `"is_addition"` / `"target_neighbour"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionFlag {
    /// Spec §2 (our default): 1 for an addition, 0 for a deletion.
    #[default]
    IsAddition,
    /// The authors' code (spec §7): 0 for an addition; for a deletion `(j, k)`, 1 when `j` is
    /// adjacent to the target in the ORIGINAL neighbourhood, else 0.
    TargetNeighbour,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// Configuration of an [`Episode`].
///
/// Every field has a default, so a partial JSON object deserialises:
///
/// ```
/// use induce_rl::{EditMode, EnvConfig};
/// let c: EnvConfig = serde_json::from_str(r#"{"mode": "delete_only"}"#).unwrap();
/// assert_eq!((c.hops, c.budget, c.mode), (4, 15, EditMode::DeleteOnly));
/// ```
///
/// The last three fields are the *reference* switches (spec §7); [`EnvConfig::reference`] sets
/// them all. They are omitted from the JSON while at their defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvConfig {
    /// Radius `h` of the neighbourhood the episode works on (default 4).
    pub hops: u32,
    /// Edit budget `δ`: the episode ends after this many edits (default 15; 0 is an error).
    pub budget: usize,
    /// Which edit types are offered (default both).
    pub mode: EditMode,
    /// The optional allowed set `V_c`: unordered node pairs in ORIGINAL ids. When given, only
    /// candidates whose pair is in the set are offered (pairs outside the neighbourhood are
    /// ignored). `None` allows every pair.
    pub allowed: Option<Vec<(u32, u32)>>,
    /// Nodes and pairs no edit may touch (in ORIGINAL ids; `--lock-nodes`, `--lock-edges`):
    /// candidates with a locked endpoint or pair are not offered. Default: nothing locked.
    #[serde(default, skip_serializing_if = "Locked::is_empty")]
    pub locked: Locked,
    /// What ends an episode with a counterfactual (`--to-class`): the target leaving its
    /// original class (default, the paper's) or reaching one class. The reward follows it:
    /// [`Goal::log_p_away`] takes the place of `log p(y)`.
    #[serde(default, skip_serializing_if = "Goal::is_any_other")]
    pub goal: Goal,
    /// The reward of an edit.
    pub reward: Reward,
    /// How the per-node state is built (default [`StateLayout::Paper`]; the authors' layout,
    /// [`StateLayout::Reference`], is a reference switch; [`StateLayout::Targeted`] adds two
    /// columns, `--state targeted`, [`StateLayout::Estimated`] three, `--state estimated`).
    #[serde(skip_serializing_if = "is_default")]
    pub state: StateLayout,
    /// *Reference switch:* the action-type feature (default [`ActionFlag::IsAddition`]).
    #[serde(skip_serializing_if = "is_default")]
    pub action_flag: ActionFlag,
    /// *Reference switch:* the episode ends once no more than this many candidates are left
    /// (default 0: when none is left; the authors' loop runs while more than one is left, 1).
    #[serde(skip_serializing_if = "is_default")]
    pub min_candidates: usize,
    /// Work on a fan-out-capped neighbourhood (`induce_graph::k_hop_sampled`: every expanded
    /// node visits at most this many of its neighbours, drawn with a seed fixed per target)
    /// instead of the exact `hops`-hop one: for hubs of large graphs. With
    /// [`Verdict::Exact`] the state's rows are the black box on the edited sample and the
    /// target's verdict the model's on the whole edited graph ([`Judge::sampled`]; fast when
    /// the black box is bound to the graph, `induce_models::BoundBlackBox`). Default `None`
    /// (exact).
    ///
    /// [`Judge::sampled`]: induce_explain::Judge::sampled
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fanout: Option<usize>,
    /// Refuse a target whose neighbourhood has more nodes than this
    /// ([`RlError::NeighbourhoodTooLarge`]) instead of working on it: a guard against
    /// exhausting memory. Default `None` (no cap).
    ///
    /// [`RlError::NeighbourhoodTooLarge`]: crate::RlError::NeighbourhoodTooLarge
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_nodes: Option<usize>,
    /// Where the flip, the reward and the stop are judged (default [`Verdict::Exact`]: the
    /// model's prediction on the whole edited graph; [`Verdict::Neighbourhood`]: the paper's
    /// frozen neighbourhood, `--paper-faithful` and [`EnvConfig::reference`]).
    #[serde(skip_serializing_if = "is_default")]
    pub verdict: Verdict,
    /// [`StateLayout::Estimated`]: the weight of the first-order estimate in the actions'
    /// prior and feature (`estimate = w · e`; default 1). A larger weight leaves the network
    /// a smaller correction of the estimate's ranking.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub prior_weight: f32,
    /// Feature actions beside (or instead of) the edge actions (`--edits …,feat`; not in the
    /// paper). Default `None`: edge actions only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<FeatureActions>,
}

/// The feature actions of an episode ([`EnvConfig::features`]): for every row
/// [`FeatureNodes`] names that lies in the episode's neighbourhood and is not a locked node, and
/// every column not `locked`, one action per candidate value
/// ([`FeatureValues`](induce_explain::features::FeatureValues), the rule the searches use: a
/// 0/1 column's entry flips, a continuous one takes its column's quantiles). Each entry changes
/// at most once per episode: taking one of its actions removes the others.
///
/// They need [`StateLayout::Estimated`]: one action per entry of a row shares its node's
/// embedding with every other entry of that row, and only the black box's first-order estimate
/// of each (its gradient with respect to the features) tells them apart. The state's feature
/// columns stay the original features; the black box's columns follow the edits.
///
/// ```
/// use induce_rl::env::FeatureActions;
/// let f: FeatureActions = serde_json::from_str(r#"{"only": true}"#).unwrap();
/// assert_eq!((f.quantiles, f.only, f.locked.len()), (3, true, 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureActions {
    /// Whose rows may change (default the target's own).
    #[serde(default)]
    pub nodes: FeatureNodes,
    /// Columns no action may change (`--lock-features`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locked: Vec<u32>,
    /// Quantile levels of a continuous column's candidate values (`--feature-quantiles`;
    /// default 3).
    #[serde(default = "default_quantiles")]
    pub quantiles: usize,
    /// No edge action: feature actions only (`--edits feat`).
    #[serde(default)]
    pub only: bool,
}

impl Default for FeatureActions {
    fn default() -> Self {
        Self {
            nodes: FeatureNodes::Target,
            locked: Vec::new(),
            quantiles: DEFAULT_FEATURE_QUANTILES,
            only: false,
        }
    }
}

fn default_quantiles() -> usize {
    DEFAULT_FEATURE_QUANTILES
}

fn one() -> f32 {
    1.0
}

fn is_one(v: &f32) -> bool {
    *v == 1.0
}

impl Default for EnvConfig {
    fn default() -> Self {
        Self {
            hops: 4,
            budget: 15,
            mode: EditMode::Both,
            allowed: None,
            locked: Locked::default(),
            goal: Goal::AnyOther,
            reward: Reward::default(),
            state: StateLayout::Paper,
            action_flag: ActionFlag::IsAddition,
            min_candidates: 0,
            fanout: None,
            max_nodes: None,
            verdict: Verdict::Exact,
            prior_weight: 1.0,
            features: None,
        }
    }
}

impl EnvConfig {
    /// The reference-compatibility preset (spec §7): the environment of the authors' code, which
    /// with their shipped policy ([`induce_models::io::reference::load_reference_policy`]) and
    /// greedy inference reproduces their explanations (see `docs/PARITY.md`).
    ///
    /// 4 hops, budget 15, additions and deletions, [`StateLayout::Reference`],
    /// [`ActionFlag::TargetNeighbour`], the episode ends when one candidate is left
    /// (`min_candidates = 1`) and verdicts are taken on the frozen neighbourhood
    /// ([`Verdict::Neighbourhood`]). The reward is the default one (inference does not use it).
    ///
    /// ```
    /// use induce_rl::{ActionFlag, EnvConfig, StateLayout};
    /// let c = EnvConfig::reference();
    /// assert_eq!((c.hops, c.budget, c.min_candidates), (4, 15, 1));
    /// assert_eq!((c.state, c.action_flag), (StateLayout::Reference, ActionFlag::TargetNeighbour));
    /// ```
    pub fn reference() -> Self {
        Self {
            state: StateLayout::Reference,
            action_flag: ActionFlag::TargetNeighbour,
            min_candidates: 1,
            verdict: Verdict::Neighbourhood,
            ..Self::default()
        }
    }
}

/// Width of the per-node state vector: `feature_dim` original features, the degree, the
/// entropy, and a one-hot of `num_classes` labels (the same width in the paper's and the
/// authors' [`StateLayout`]s; [`StateLayout::width`] for any).
///
/// ```
/// assert_eq!(induce_rl::state_dim(10, 4), 16);
/// ```
pub fn state_dim(feature_dim: usize, num_classes: usize) -> usize {
    feature_dim + 2 + num_classes
}
