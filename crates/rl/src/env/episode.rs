//! The [`Episode`] (spec §2) and its start: the neighbourhood, the checks, the first verdicts
//! (or a [`PendingEpisode`] waiting for them), the reset, and what an episode reports.

use std::sync::Arc;

use induce_explain::features::{FeatureScope, FeatureValuesCache, feature_actions};
use induce_explain::{Goal, Judge, PendingJudge, Verdict};
use induce_graph::{EditGraph, Features, Graph, Subgraph, k_hop};
use induce_models::policy::host::SparseRows;
use induce_models::{BlackBox, LogProbs};

use super::candidates::build_candidates;
use super::estimate::Estimator;
use super::{Candidates, EnvConfig, StateLayout, reference_entropy};
use crate::error::{Result, RlError};
use crate::explanation::{Edit, Explanation, FeatureEdit};
use crate::reward::Reward;

/// What an episode keeps of its [`EnvConfig`] after its start.
#[derive(Debug, Clone, Copy)]
struct Settings {
    budget: usize,
    reward: Reward,
    goal: Goal,
    state: StateLayout,
    min_candidates: usize,
    prior_weight: f32,
}

impl Settings {
    fn of(config: &EnvConfig) -> Self {
        Self {
            budget: config.budget,
            reward: config.reward,
            goal: config.goal,
            state: config.state,
            min_candidates: config.min_candidates,
            prior_weight: config.prior_weight,
        }
    }
}

/// What an episode starts from besides its judge: the graph, the black box, the neighbourhood,
/// its edit graph and candidates, the settings.
struct Start<'a> {
    graph: &'a Graph,
    black_box: &'a dyn BlackBox,
    sub: Subgraph,
    edit: EditGraph,
    candidates: Candidates,
    settings: Settings,
}

/// An [`Episode`] waiting for its black box's first verdicts ([`Episode::pending`]).
pub struct PendingEpisode<'a> {
    start: Start<'a>,
    judge: PendingJudge<'a>,
}

impl std::fmt::Debug for PendingEpisode<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingEpisode")
            .field("target", &self.start.sub.target)
            .field("nodes", &self.start.sub.num_nodes())
            .field("request", &self.judge.nodes().len())
            .finish_non_exhaustive()
    }
}

impl<'a> PendingEpisode<'a> {
    /// The nodes whose rows the first verdicts need, in original ids and in order: the model
    /// on the unedited graph's subgraph induced by them (the neighbourhood, then the rest of
    /// the target's receptive field).
    pub fn request(&self) -> &[u32] {
        self.judge.nodes()
    }

    /// The target (original id).
    pub fn target(&self) -> u32 {
        self.start.sub.target
    }

    /// The episode at its start, with `rows` as the model's log-probabilities for
    /// [`PendingEpisode::request`]'s nodes: the same episode as [`Episode::new`] whose black
    /// box gave those rows.
    ///
    /// Errors: the shape and NaN errors of a black-box output ([`RlError::OutputShape`],
    /// [`RlError::NanOutput`]) and [`RlError::InvalidConfig`] as in [`Episode::new`].
    ///
    /// # Shapes
    /// - rows: `[m, C]`, `m` = the request's nodes
    pub fn complete(self, rows: LogProbs) -> Result<Episode<'a>> {
        let judge = self.judge.complete(rows)?;
        Episode::assemble(self.start, judge)
    }
}

/// One explanation episode for a target node: the MDP of spec §2.
///
/// On creation the `h`-hop neighbourhood of the target is extracted (fixed for the episode: the
/// policy's state and candidates live on it), the black box is run through a [`Judge`] (on the
/// neighbourhood and, with [`Verdict::Exact`], the rest of the target's receptive field, which
/// grows with every added edge, so that the target's label is the model's on the whole edited
/// graph), the target's predicted label `y` is recorded and the candidate actions are built:
/// * deletions of every edge of the neighbourhood, and
/// * additions `(target, u)` for every node `u ≠ target` of the neighbourhood not adjacent to it,
///
/// restricted by [`EnvConfig::mode`], [`EnvConfig::allowed`] and [`EnvConfig::locked`]. A pair edited once is never
/// offered again, so after an edit the candidate list only loses the used action (a deleted
/// edge is not offered for re-addition, an added edge not for deletion).
///
/// The per-node state is `[original features ‖ degree in the current subgraph ‖ entropy (nats)
/// of the black box's distribution ‖ one-hot of the predicted label]`, recomputed after every
/// edit from the [`Judge`]'s output for the neighbourhood's nodes (or, with
/// [`StateLayout::Reference`], the authors' static layout). The episode ends when the label flips, when `budget` edits
/// were made, or when no candidate is left (no more than [`EnvConfig::min_candidates`]).
///
/// ```text
///  target 2, hops 2 (local ids in brackets; 7 is 3 hops away, 5 is isolated):
///
///    0[0] ─ 1[1] ─ 2[2] ─ 4[4] ─ 6[5] ─ 7        5
///            │
///           3[3]
///
///  candidates: add (2,0) (2,3) (2,5), then delete (0,1) (1,2) (1,3) (2,4) (4,5)
/// ```
///
/// The episode borrows the black box; it is cheap to [`Episode::reset`] for another episode on
/// the same target.
#[derive(Clone)]
pub struct Episode<'a> {
    /// The black box's verdicts: its output on the neighbourhood (the state reads those rows)
    /// and, with [`Verdict::Exact`], on the rest of the target's receptive field in the edited
    /// graph. With the state at the start of the episode, for [`Episode::reset`].
    pub(super) judge: Judge<'a>,
    initial_judge: Judge<'a>,
    pub(super) sub: Subgraph,
    /// The neighbourhood's node features, shared with [`StateSnapshot`]s, gathered from
    /// `graph_features` on first use (a kernel that gathers its rows from a product over the
    /// whole graph never reads them: 22 MB per Amazon-Photo neighbourhood), and their non-zero
    /// entries when they are wide and sparse (bag-of-words features), found on first use (the
    /// host kernel's; ~20 ms for an Amazon-Photo neighbourhood that a GPU never reads).
    ///
    /// [`StateSnapshot`]: super::StateSnapshot
    pub(super) features: std::sync::OnceLock<Arc<Features>>,
    pub(super) sparse: std::sync::OnceLock<Option<Arc<SparseRows>>>,
    /// The whole graph's node features (`features` are the rows of `sub.nodes`).
    pub(super) graph_features: &'a Features,
    pub(super) edit: EditGraph,
    pub(super) budget: usize,
    pub(super) reward: Reward,
    goal: Goal,
    original_label: usize,
    pub(super) candidates: Candidates,
    /// The state columns other than the features, `[n, 2 + classes]`: `[degree ‖ entropy ‖
    /// one-hot]` ([`StateLayout::Paper`], after the features) or `[entropy ‖ degree ‖ one-hot]`
    /// ([`StateLayout::Reference`], before them).
    pub(super) small: Vec<f32>,
    pub(super) dim: usize,
    pub(super) layout: StateLayout,
    /// The black box's gradient on the neighbourhood ([`StateLayout::Estimated`] only).
    pub(super) estimator: Option<Arc<Estimator>>,
    /// The changing columns at the start, for [`Episode::reset`].
    initial_small: Vec<f32>,
    pub(super) min_candidates: usize,
    pub(super) edits: Vec<Edit>,
    pub(super) done: bool,
    initial_candidates: Candidates,
    /// `log p(y)` before a deferred step that awaits its verdict ([`Episode::step_deferred`]).
    pub(super) pending: Option<f32>,
    /// Feature actions are offered ([`EnvConfig::features`]).
    pub(super) offers_features: bool,
}

impl std::fmt::Debug for Episode<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Episode")
            .field("target", &self.sub.target)
            .field("num_nodes", &self.sub.num_nodes())
            .field("original_label", &self.original_label)
            .field("current_label", &self.current_label())
            .field("candidates", &self.candidates.len())
            .field("edits", &self.edits)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<'a> Episode<'a> {
    /// Starts an episode for `target` (original id) of `graph`.
    ///
    /// With [`EnvConfig::min_candidates`] ≥ the number of candidates, the episode is over at
    /// once (no edit is made).
    ///
    /// Errors: [`RlError::ZeroBudget`], [`RlError::TargetOutOfRange`],
    /// [`RlError::FeatureDimension`] (graph features vs the black box's input),
    /// [`RlError::NoCandidate`] (empty neighbourhood or nothing allowed),
    /// [`RlError::InvalidConfig`] (with [`StateLayout::Reference`]: a ground-truth label not
    /// below the black box's number of classes),
    /// [`RlError::OutputShape`] / [`RlError::NanOutput`] for a bad black-box output, and any
    /// error of the black box itself.
    pub fn new(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        target: u32,
        config: &EnvConfig,
    ) -> Result<Self> {
        let sub = Self::neighbourhood(graph, target, config)?;
        Self::with_subgraph(graph, black_box, sub, config)
    }

    /// Whether an episode of `target` would offer an action: [`Episode::new`] without its
    /// first verdicts (the neighbourhood and the candidates only), unless the goal is a
    /// desired class, which needs the target's label. `Ok(false)` where [`Episode::new`] is
    /// [`RlError::NoCandidate`]; its other errors, except those of the black box's first
    /// evaluation, which [`Episode::new`] reports.
    ///
    /// ```
    /// use induce_graph::{Features, Graph};
    /// use induce_models::testing::DegreeAtLeast;
    /// use induce_rl::{EnvConfig, Episode};
    ///
    /// //  0 ─ 1   2
    /// let g = Graph::from_edges(3, &[(0, 1)], Features::constant(3, 1, 1.0), vec![0; 3])
    ///     .unwrap();
    /// let env = EnvConfig::default();
    /// assert!(Episode::offers_action(&g, &DegreeAtLeast(1), 0, &env).unwrap());
    /// assert!(!Episode::offers_action(&g, &DegreeAtLeast(1), 2, &env).unwrap()); // isolated
    /// assert!(Episode::offers_action(&g, &DegreeAtLeast(1), 3, &env).is_err());
    /// ```
    pub fn offers_action(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        target: u32,
        config: &EnvConfig,
    ) -> Result<bool> {
        let built = match config.goal {
            Goal::Class(_) => Self::new(graph, black_box, target, config).map(drop),
            _ => Self::neighbourhood(graph, target, config)
                .and_then(|sub| Self::start(graph, black_box, sub, config))
                .map(drop),
        };
        match built {
            Ok(()) => Ok(true),
            Err(RlError::NoCandidate { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// [`Episode::new`] with the black box's first verdicts left to the caller: the
    /// neighbourhood, its candidates and the node set of its judge are found
    /// ([`PendingEpisode::request`]), nothing is evaluated; the caller evaluates the model on
    /// the subgraph of the unedited graph induced by that node set, for many episodes at once if
    /// it likes (e.g. `induce_models::black_box::batched::VerdictBatch` with no toggles), and hands
    /// the rows to [`PendingEpisode::complete`]. For exact verdicts on the exact neighbourhood
    /// only ([`Verdict::Exact`], no `fanout`): others are an [`RlError::InvalidConfig`].
    ///
    /// Same errors as [`Episode::new`] (the black box's at [`PendingEpisode::complete`]).
    pub fn pending(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        target: u32,
        config: &EnvConfig,
    ) -> Result<PendingEpisode<'a>> {
        if config.verdict != Verdict::Exact || config.fanout.is_some() {
            return Err(RlError::InvalidConfig(format!(
                "target {target}: an episode's first verdicts can be left to the caller only \
                 with exact verdicts on the exact neighbourhood"
            )));
        }
        let sub = Self::neighbourhood(graph, target, config)?;
        let start = Self::start(graph, black_box, sub, config)?;
        let judge = Judge::pending(graph, black_box, target, &start.sub.nodes)?;
        Ok(PendingEpisode { start, judge })
    }

    /// The neighbourhood `config` asks for around `target`, checked.
    fn neighbourhood(graph: &Graph, target: u32, config: &EnvConfig) -> Result<Subgraph> {
        if config.budget == 0 {
            return Err(RlError::ZeroBudget);
        }
        if target as usize >= graph.num_nodes() {
            return Err(RlError::TargetOutOfRange {
                target,
                num_nodes: graph.num_nodes(),
            });
        }
        let sub = match config.fanout {
            Some(f) => {
                let seed = 0x0F4A_0075_EED5 ^ u64::from(target).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                induce_graph::k_hop_sampled(graph, target, config.hops, f, seed)?
            }
            None => k_hop(graph, target, config.hops)?,
        };
        if let Some(max) = config.max_nodes
            && sub.num_nodes() > max
        {
            return Err(RlError::NeighbourhoodTooLarge {
                target,
                nodes: sub.num_nodes(),
                max,
            });
        }
        Ok(sub)
    }

    /// The checks of a start on `sub`, its edit graph and its candidates.
    fn start(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        sub: Subgraph,
        config: &EnvConfig,
    ) -> Result<Start<'a>> {
        if config.budget == 0 {
            return Err(RlError::ZeroBudget);
        }
        let d = graph.features().dim();
        if d != black_box.input_dim() {
            return Err(RlError::FeatureDimension {
                expected: black_box.input_dim(),
                got: d,
            });
        }
        induce_explain::verdict::check_classes(black_box)?;
        let edit = sub.to_edit_graph();
        let features = feature_candidates(graph, black_box, &sub, config)?;
        let candidates = build_candidates(&sub, &edit, config, &features);
        if candidates.is_empty() {
            return Err(RlError::NoCandidate { target: sub.target });
        }
        Ok(Start {
            graph,
            black_box,
            sub,
            edit,
            candidates,
            settings: Settings::of(config),
        })
    }

    /// Starts an episode on a given neighbourhood of its target (`sub.target`) instead of the
    /// exact `config.hops`-hop one, e.g. a fan-out-capped sample around hubs
    /// (`induce_graph::k_hop_sampled`); `config.hops` is not used. Same errors as
    /// [`Episode::new`].
    pub fn with_subgraph(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        sub: Subgraph,
        config: &EnvConfig,
    ) -> Result<Self> {
        let start = Self::start(graph, black_box, sub, config)?;
        let sub = &start.sub;
        let judge = match config.verdict {
            // A fan-out sample is the search's view only; the target's verdict is the model's
            // on the whole edited graph ([`Judge::sampled`]).
            Verdict::Exact if config.fanout.is_some() => Judge::sampled(graph, black_box, sub)?,
            Verdict::Exact => Judge::new(graph, black_box, sub.target, &sub.nodes, Verdict::Exact)?,
            Verdict::Neighbourhood => Judge::frozen(graph, black_box, sub)?,
        };
        Self::assemble(start, judge)
    }

    /// The episode at its start, from its judge's first verdicts.
    fn assemble(start: Start<'a>, judge: Judge<'a>) -> Result<Self> {
        let Start {
            graph,
            black_box,
            sub,
            edit,
            candidates,
            settings: config,
        } = start;
        let d = graph.features().dim();
        let num_classes = black_box.num_classes();
        let log_probs = judge.log_probs();
        let original_label = log_probs.argmax(sub.target_local);
        if let Goal::Class(c) = config.goal {
            if c >= num_classes {
                return Err(RlError::InvalidConfig(format!(
                    "EnvConfig.goal: class {c} is not a class of the black box ({num_classes} \
                     classes)"
                )));
            }
            if c == original_label {
                // Already the desired class: there is nothing to reach.
                return Err(RlError::NoCandidate { target: sub.target });
            }
        }
        let n = sub.num_nodes();
        let dim = config.state.width(d, num_classes);
        let sw = dim - d;
        let mut small = vec![0.0; n * sw];
        match config.state {
            StateLayout::Paper => {}
            StateLayout::Targeted | StateLayout::Estimated => {
                // The hop distance column (fixed); the class column (and the estimated one) are
                // refreshed each step.
                let at = sw - config.state.targeted_from_end().unwrap_or(2);
                let radius = sub.hops.iter().copied().max().unwrap_or(0).max(1) as f32;
                for (row, &h) in small.chunks_exact_mut(sw).zip(&sub.hops) {
                    row[at] = h as f32 / radius;
                }
            }
            StateLayout::Reference => {
                let labels = sub.labels(graph);
                if let Some(pos) = labels.iter().position(|&l| l as usize >= num_classes) {
                    return Err(RlError::InvalidConfig(format!(
                        "reference state: node {} has label {} but the black box has {} classes",
                        sub.global_of(pos),
                        labels[pos],
                        num_classes
                    )));
                }
                for (i, row) in small.chunks_exact_mut(sw).enumerate() {
                    row[0] = reference_entropy(log_probs.row(i));
                    row[2 + labels[i] as usize] = 1.0;
                }
            }
        }
        let done = candidates.len() <= config.min_candidates;
        let offers_features = (candidates.kind.iter()).any(|k| k.edit_kind().is_none());
        let estimator = match config.state {
            StateLayout::Estimated => Some(Arc::new(
                Estimator::new(graph, black_box, &sub)?.with_weight(config.prior_weight),
            )),
            _ => None,
        };
        let mut ep = Self {
            estimator,
            initial_small: Vec::new(),
            initial_judge: judge.clone(),
            judge,
            sub,
            sparse: std::sync::OnceLock::new(),
            features: std::sync::OnceLock::new(),
            graph_features: graph.features(),
            edit,
            budget: config.budget,
            reward: config.reward,
            goal: config.goal,
            original_label,
            initial_candidates: candidates.clone(),
            pending: None,
            candidates,
            small,
            dim,
            layout: config.state,
            min_candidates: config.min_candidates,
            edits: Vec::new(),
            done,
            offers_features,
        };
        ep.refresh_state()?;
        ep.initial_small.clone_from(&ep.small);
        // With the estimated layout's estimates, which the first refresh wrote.
        ep.initial_candidates.clone_from(&ep.candidates);
        Ok(ep)
    }

    /// Restores the episode to its start (no edit, the original neighbourhood and candidates)
    /// without re-extracting the neighbourhood or re-running the black box.
    pub fn reset(&mut self) {
        self.edit = self.sub.to_edit_graph();
        self.judge.clone_from(&self.initial_judge);
        self.candidates = self.initial_candidates.clone();
        self.edits.clear();
        self.pending = None;
        self.done = self.candidates.len() <= self.min_candidates;
        self.small.clone_from(&self.initial_small);
    }

    /// The current candidate actions (local ids).
    pub fn candidates(&self) -> &Candidates {
        &self.candidates
    }

    /// True once the episode is over.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// True when the target's current prediction reaches the goal ([`EnvConfig::goal`]): it
    /// differs from its original label, or is the desired class.
    pub fn is_flipped(&self) -> bool {
        self.goal.reached(self.original_label, self.current_label())
    }

    /// The edge edits made so far, in order, in ORIGINAL node ids.
    pub fn edits(&self) -> &[Edit] {
        &self.edits
    }

    /// The feature edits made so far, in order ([`EnvConfig::features`]).
    pub fn feature_edits(&self) -> &[FeatureEdit] {
        self.judge.feature_edits()
    }

    /// Number of edits made so far, edge and feature edits together (what the budget counts).
    pub fn num_edits(&self) -> usize {
        self.edits.len() + self.judge.feature_edits().len()
    }

    /// The edit budget `δ`.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Number of nodes of the neighbourhood.
    pub fn num_nodes(&self) -> usize {
        self.sub.num_nodes()
    }

    /// The target (original id).
    pub fn target(&self) -> u32 {
        self.sub.target
    }

    /// The target's local id.
    pub fn target_local(&self) -> usize {
        self.sub.target_local
    }

    /// The original neighbourhood (local ↔ original ids, original edges).
    pub fn subgraph(&self) -> &Subgraph {
        &self.sub
    }

    /// The current (edited) neighbourhood in local ids.
    pub fn edit_graph(&self) -> &EditGraph {
        &self.edit
    }

    /// The black box's current log-probabilities on the edited graph: the rows of the
    /// neighbourhood's `n` nodes first (local ids), then, with [`Verdict::Exact`], those of the
    /// rest of the target's receptive field ([`Judge::nodes`]).
    ///
    /// # Shapes
    /// - output: `[m, C]`, `m ≥ n`
    pub fn log_probs(&self) -> &LogProbs {
        self.judge.log_probs()
    }

    /// The black box's verdicts on this episode's edits.
    pub fn judge(&self) -> &Judge<'a> {
        &self.judge
    }

    /// The target's predicted label before any edit (`y`).
    pub fn original_label(&self) -> usize {
        self.original_label
    }

    /// The target's current predicted label.
    pub fn current_label(&self) -> usize {
        self.judge.label()
    }

    /// The target's current log-probability mass away from the goal, which the reward drives
    /// down ([`Goal::log_p_away`]): `log p(y)` under the paper's goal.
    pub fn log_p_away(&self) -> f32 {
        self.goal
            .log_p_away(self.judge.target_row(), self.original_label)
    }

    /// What a counterfactual must reach ([`EnvConfig::goal`]).
    pub fn goal(&self) -> Goal {
        self.goal
    }

    /// `log p(y)`: the target's current log-probability of its original label.
    pub fn log_prob_original(&self) -> f32 {
        self.judge.target_row()[self.original_label]
    }

    /// The episode as an explanation (found = the label flipped).
    pub fn explanation(&self) -> Explanation {
        Explanation {
            feature_edits: self.feature_edits().to_vec(),
            evaluations: None,
            certified: None,
            target: self.sub.target,
            found: self.is_flipped(),
            original_label: self.original_label,
            new_label: self.current_label(),
            edits: self.edits.clone(),
        }
    }
}

/// The values of the feature actions' columns, computed once per graph.
static FEATURE_VALUES: FeatureValuesCache = FeatureValuesCache::new();

/// The feature actions of an episode on `sub` ([`EnvConfig::features`]), as (local node,
/// column, value): none without them.
///
/// Errors: feature actions without [`StateLayout::Estimated`], or on the receptive field of a
/// black box that does not report its layers; a locked column outside the features.
fn feature_candidates(
    graph: &Graph,
    black_box: &dyn BlackBox,
    sub: &Subgraph,
    config: &EnvConfig,
) -> Result<Vec<(u32, u32, f32)>> {
    let Some(f) = &config.features else {
        return Ok(Vec::new());
    };
    if config.state != StateLayout::Estimated {
        return Err(RlError::InvalidConfig(
            "feature actions need the estimated state (--state estimated): every entry of a \
             row shares its node's embedding, and only the black box's gradient with respect \
             to the features tells the entries apart"
                .into(),
        ));
    }
    let values = FEATURE_VALUES.of(graph.features(), f.quantiles)?;
    let scope = FeatureScope {
        nodes: f.nodes,
        locked: &f.locked,
        values: &values,
    };
    let layers = black_box.message_passing_layers();
    let actions = feature_actions(graph, sub.target, layers, scope)?;
    Ok(actions
        .into_iter()
        .filter(|a| config.locked.permits(a.node, a.node))
        .filter_map(|a| Some((sub.local_of(a.node)? as u32, a.feature, a.value)))
        .collect())
}
