//! The edit MDP of InduCE (spec §2): one [`Episode`] per target node.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use burn::tensor::{Device, Tensor};
use induce_explain::{Goal, Judge, Locked, PendingJudge, Verdict};
use induce_graph::{EditGraph, Features, Graph, Subgraph, k_hop};
use induce_models::host::policy::{SparseRows, StateBlocks};
use induce_models::tensors::matrix;
use induce_models::{BlackBox, CandidateTensors, GraphTensors, LogProbs};
use serde::{Deserialize, Serialize};

use crate::error::{Result, RlError};
use crate::explanation::{Edit, EditKind, Explanation};
use crate::reward::Reward;

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
    /// *Reference switch:* how the per-node state is built (default [`StateLayout::Paper`]).
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fanout: Option<usize>,
    /// Refuse a target whose neighbourhood has more nodes than this
    /// ([`RlError::NeighbourhoodTooLarge`]) instead of working on it: a guard against
    /// exhausting memory. Default `None` (no cap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_nodes: Option<usize>,
    /// Where the flip, the reward and the stop are judged (default [`Verdict::Exact`]: the
    /// model's prediction on the whole edited graph; [`Verdict::Neighbourhood`]: the paper's
    /// frozen neighbourhood, `--paper-faithful` and [`EnvConfig::reference`]).
    #[serde(skip_serializing_if = "is_default")]
    pub verdict: Verdict,
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
        }
    }
}

impl EnvConfig {
    /// The reference-compatibility preset (spec §7): the environment of the authors' code, which
    /// with their shipped policy ([`induce_models::reference::load_reference_policy`]) and
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
            hops: 4,
            budget: 15,
            mode: EditMode::Both,
            allowed: None,
            locked: Locked::default(),
            goal: Goal::AnyOther,
            reward: Reward::default(),
            state: StateLayout::Reference,
            action_flag: ActionFlag::TargetNeighbour,
            min_candidates: 1,
            fanout: None,
            max_nodes: None,
            verdict: Verdict::Neighbourhood,
        }
    }
}

/// Width of the per-node state vector: `feature_dim` original features, the degree, the
/// entropy, and a one-hot of `num_classes` labels (the same width in both [`StateLayout`]s).
///
/// ```
/// assert_eq!(induce_rl::state_dim(10, 4), 16);
/// ```
pub fn state_dim(feature_dim: usize, num_classes: usize) -> usize {
    feature_dim + 2 + num_classes
}

/// The candidate actions of an episode in LOCAL (subgraph) ids, one entry per action in the
/// four parallel vectors.
///
/// Order: additions `(target, u)` by ascending local `u`, then deletions `(j, k)`, `j < k`, in
/// row-major order. The order is fixed at the start of an episode; a used action is removed and
/// the others keep their relative order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Candidates {
    /// First endpoints (the target for an addition; `j` for a deletion `(j, k)`).
    pub u: Vec<u32>,
    /// Second endpoints.
    pub w: Vec<u32>,
    /// Edit type of each action.
    pub kind: Vec<EditKind>,
    /// The action-type feature of each action fed to the policy, `true` = 1.0 (see
    /// [`ActionFlag`]).
    pub type_flag: Vec<bool>,
}

impl Candidates {
    /// Number of actions.
    pub fn len(&self) -> usize {
        self.u.len()
    }

    /// True when there is no action.
    pub fn is_empty(&self) -> bool {
        self.u.is_empty()
    }

    /// Action `i` as `(u, w, kind)`. Panics if `i` is out of range.
    pub fn get(&self, i: usize) -> (u32, u32, EditKind) {
        (self.u[i], self.w[i], self.kind[i])
    }

    /// The action-type feature of each action ([`Candidates::type_flag`] as 0.0 / 1.0: by
    /// default 1.0 for an addition, 0.0 for a deletion; see [`ActionFlag`]), the `flag`
    /// argument of [`CandidateTensors::new`].
    pub fn flag(&self) -> Vec<f32> {
        self.type_flag
            .iter()
            .map(|&f| f32::from(u8::from(f)))
            .collect()
    }

    /// Uploads the actions for the policy.
    ///
    /// # Shapes
    /// - output: `u`, `w`: `[C]`; `flag`: `[C, 1]`
    pub fn to_tensors(&self, device: &Device) -> CandidateTensors {
        CandidateTensors::new(&self.u, &self.w, &self.flag(), device)
    }

    fn push(&mut self, u: usize, w: usize, kind: EditKind, flag: bool) {
        self.u.push(u as u32);
        self.w.push(w as u32);
        self.kind.push(kind);
        self.type_flag.push(flag);
    }

    fn remove(&mut self, i: usize) -> (u32, u32, EditKind) {
        self.type_flag.remove(i);
        (self.u.remove(i), self.w.remove(i), self.kind.remove(i))
    }
}

/// The outcome of one [`Episode::step`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The reward of the edit (see [`Reward`]).
    pub reward: f32,
    /// True when the target's prediction now differs from its original label.
    pub flipped: bool,
    /// True when the episode is over (flip, budget reached, or no more than
    /// [`EnvConfig::min_candidates`] candidates left).
    pub done: bool,
}

/// A visited state of an [`Episode`] ([`Episode::snapshot`]): its changing columns, with the node
/// features shared with the episode.
#[derive(Debug, Clone)]
pub struct StateSnapshot {
    features: Arc<Features>,
    sparse: Option<Arc<SparseRows>>,
    small: Vec<f32>,
    layout: StateLayout,
    dim: usize,
}

impl StateSnapshot {
    /// A snapshot of a state given whole, row-major `[n, dim]` (as features: one block).
    pub fn whole(state: Features) -> Self {
        Self {
            dim: state.dim(),
            features: Arc::new(state),
            sparse: None,
            small: Vec::new(),
            layout: StateLayout::Paper,
        }
    }

    /// The state as two column blocks, as [`Episode::state_blocks`] gave it.
    pub fn blocks(&self) -> StateBlocks<'_> {
        blocks(
            &self.features,
            self.sparse.as_deref(),
            &self.small,
            self.layout,
            self.dim,
        )
    }
}

/// The state `[features ‖ small]` (paper) or `[small ‖ features]` (reference) as blocks.
fn blocks<'s>(
    features: &'s Features,
    sparse: Option<&'s SparseRows>,
    small: &'s [f32],
    layout: StateLayout,
    dim: usize,
) -> StateBlocks<'s> {
    let (f, d) = (features.as_slice(), features.dim());
    let (b, block) = match layout {
        StateLayout::Paper => (StateBlocks::new(f, d, small, dim - d), 0),
        StateLayout::Reference => (StateBlocks::new(small, dim - d, f, d), 1),
    };
    match sparse {
        Some(s) => b.with_sparse(block, s),
        None => b,
    }
}

/// The non-zero entries of features worth iterating instead of scanning: at least 32 wide and
/// at most half non-zero (Cora 1 %, Amazon-Photo 35 %; not the benchmarks' constant ones).
/// `features` are the rows `nodes` of the graph's `graph_features`: gathered from the graph's
/// own non-zero index ([`graph_sparse_rows`]) when it has one, the same entries either way.
fn sparse_features(
    features: &Features,
    graph_features: &Features,
    nodes: &[u32],
) -> Option<Arc<SparseRows>> {
    if features.dim() < 32 {
        return None;
    }
    let gathered = graph_sparse_rows(graph_features).and_then(|g| g.gather(nodes).ok());
    let s = gathered.unwrap_or_else(|| SparseRows::new(features.as_slice(), features.dim()));
    (s.density() <= 0.5).then(|| Arc::new(s))
}

/// The non-zero index of a graph's features, built once per graph (the last one asked for is
/// kept, keyed by [`Features::id`]) so that each episode copies its rows' entries instead of
/// scanning its rows (~20 ms for an Amazon-Photo neighbourhood); `None` for graphs over 2²⁸
/// values or with more than 60 % non-zero entries, whose neighbourhoods scan their own rows.
fn graph_sparse_rows(graph: &Features) -> Option<Arc<SparseRows>> {
    static CACHE: std::sync::Mutex<Option<(u64, Option<Arc<SparseRows>>)>> =
        std::sync::Mutex::new(None);
    let values = graph.num_nodes().saturating_mul(graph.dim());
    if values > 1 << 28 {
        return None;
    }
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((id, rows)) = cache.as_ref()
        && *id == graph.id()
    {
        return rows.clone();
    }
    let nnz = graph.as_slice().iter().filter(|&&v| v != 0.0).count();
    let rows = (nnz as f64 <= 0.6 * values as f64)
        .then(|| Arc::new(SparseRows::new(graph.as_slice(), graph.dim())));
    *cache = Some((graph.id(), rows.clone()));
    rows
}

/// What an episode keeps of its [`EnvConfig`] after its start.
#[derive(Debug, Clone, Copy)]
struct Settings {
    budget: usize,
    reward: Reward,
    goal: Goal,
    state: StateLayout,
    min_candidates: usize,
}

impl Settings {
    fn of(config: &EnvConfig) -> Self {
        Self {
            budget: config.budget,
            reward: config.reward,
            goal: config.goal,
            state: config.state,
            min_candidates: config.min_candidates,
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
    judge: Judge<'a>,
    initial_judge: Judge<'a>,
    sub: Subgraph,
    /// The neighbourhood's node features, shared with [`StateSnapshot`]s, gathered from
    /// `graph_features` on first use (a kernel that gathers its rows from a product over the
    /// whole graph never reads them: 22 MB per Amazon-Photo neighbourhood), and their non-zero
    /// entries when they are wide and sparse (bag-of-words features), found on first use (the
    /// host kernel's; ~20 ms for an Amazon-Photo neighbourhood that a GPU never reads).
    features: std::sync::OnceLock<Arc<Features>>,
    sparse: std::sync::OnceLock<Option<Arc<SparseRows>>>,
    /// The whole graph's node features (`features` are the rows of `sub.nodes`).
    graph_features: &'a Features,
    edit: EditGraph,
    budget: usize,
    reward: Reward,
    goal: Goal,
    original_label: usize,
    candidates: Candidates,
    /// The state columns other than the features, `[n, 2 + classes]`: `[degree ‖ entropy ‖
    /// one-hot]` ([`StateLayout::Paper`], after the features) or `[entropy ‖ degree ‖ one-hot]`
    /// ([`StateLayout::Reference`], before them).
    small: Vec<f32>,
    dim: usize,
    layout: StateLayout,
    min_candidates: usize,
    edits: Vec<Edit>,
    done: bool,
    initial_candidates: Candidates,
    /// `log p(y)` before a deferred step that awaits its verdict ([`Episode::step_deferred`]).
    pending: Option<f32>,
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

    /// [`Episode::new`] with the black box's first verdicts left to the caller: the
    /// neighbourhood, its candidates and the node set of its judge are found
    /// ([`PendingEpisode::request`]), nothing is evaluated; the caller evaluates the model on
    /// the subgraph of the unedited graph induced by that node set, for many episodes at once if
    /// it likes (e.g. `induce_models::batched_verdict::VerdictBatch` with no toggles), and hands
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
        let candidates = build_candidates(&sub, &edit, config);
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
        let dim = state_dim(d, num_classes);
        let sw = dim - d;
        let mut small = vec![0.0; n * sw];
        match config.state {
            StateLayout::Paper => {}
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
        let mut ep = Self {
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
        };
        ep.refresh_state();
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
        self.refresh_state();
    }

    /// Rewrites the dynamic state columns from the current edit graph and black-box output:
    /// degree, entropy and one-hot ([`StateLayout::Paper`], O(n · dim)) or the degree only
    /// ([`StateLayout::Reference`], O(n)).
    fn refresh_state(&mut self) {
        let sw = self.dim - self.graph_features.dim();
        let lp = self.judge.log_probs();
        match self.layout {
            StateLayout::Paper => {
                for (i, row) in self.small.chunks_exact_mut(sw).enumerate() {
                    row[0] = self.edit.degree(i) as f32;
                    row[1] = lp.entropy(i);
                    let onehot = &mut row[2..];
                    onehot.fill(0.0);
                    onehot[lp.argmax(i)] = 1.0;
                }
            }
            StateLayout::Reference => {
                for (i, row) in self.small.chunks_exact_mut(sw).enumerate() {
                    row[1] = self.edit.degree(i) as f32;
                }
            }
        }
    }

    /// Applies candidate `action` (an index into [`Episode::candidates`]), re-runs the black box
    /// on the edited neighbourhood, updates the state and the candidates, and returns the
    /// reward and whether the episode is over.
    ///
    /// Errors: [`RlError::EpisodeOver`] after the end, [`RlError::ActionOutOfRange`], and the
    /// black-box errors of [`Episode::new`].
    pub fn step(&mut self, action: usize) -> Result<Step> {
        let (before, edge) = self.begin_step(action)?;
        crate::profile::time(crate::profile::Phase::Verdict, || {
            self.judge.toggle(&[edge])
        })?;
        Ok(self.end_step(before))
    }

    /// [`Episode::step`] with the black box's verdict left to the caller: applies candidate
    /// `action` and records the edit; the caller evaluates the model on the edited graph
    /// ([`Episode::verdict_request`]), for many episodes at once if it likes (e.g.
    /// `induce_models::batched_verdict::VerdictBatch` on a GPU), and hands the rows to
    /// [`Episode::complete_step`].
    ///
    /// Errors: those of [`Episode::step`], and [`RlError::InvalidConfig`] when the episode's
    /// verdicts cannot be taken by the caller (not [`Verdict::Exact`] on the whole graph, e.g.
    /// a fan-out sample or frozen neighbourhood: [`Episode::takes_verdicts`]) or a step already
    /// awaits its verdict.
    pub fn step_deferred(&mut self, action: usize) -> Result<()> {
        if !self.takes_verdicts() {
            return Err(RlError::InvalidConfig(format!(
                "target {}: a deferred step needs exact verdicts on the judge's own node set",
                self.sub.target
            )));
        }
        let (before, edge) = self.begin_step(action)?;
        self.judge.toggle_deferred(&[edge])?;
        self.pending = Some(before);
        Ok(())
    }

    /// Whether the black box's verdicts can be taken by the caller ([`Episode::step_deferred`]).
    pub fn takes_verdicts(&self) -> bool {
        self.judge.takes_rows()
    }

    /// What a deferred step's verdict needs: the node pairs toggled relative to the original
    /// graph (`(min, max)`, original ids) and the nodes whose rows to return, in order.
    pub fn verdict_request(&self) -> (Vec<(u32, u32)>, &[u32]) {
        (self.judge.toggled().collect(), self.judge.nodes())
    }

    /// Completes a deferred step with the model's log-probabilities for
    /// [`Episode::verdict_request`]'s nodes on the edited graph: updates the state and returns
    /// the reward and whether the episode is over, as [`Episode::step`] does.
    ///
    /// Errors: [`RlError::InvalidConfig`] when no step awaits its verdict; the shape and NaN
    /// errors of the black box's output.
    ///
    /// # Shapes
    /// - rows: `[m, C]`, `m` = the request's nodes
    pub fn complete_step(&mut self, rows: LogProbs) -> Result<Step> {
        let Some(before) = self.pending.take() else {
            return Err(RlError::InvalidConfig(format!(
                "target {}: no deferred step awaits its verdict",
                self.sub.target
            )));
        };
        self.judge.take_rows(rows)?;
        Ok(self.end_step(before))
    }

    /// The first half of a step: checks, applies the action to the neighbourhood and the edit
    /// list; returns `log p(y)` before it and the edge in original ids.
    fn begin_step(&mut self, action: usize) -> Result<(f32, (u32, u32))> {
        if self.pending.is_some() {
            return Err(RlError::InvalidConfig(format!(
                "target {}: a deferred step awaits its verdict (Episode::complete_step)",
                self.sub.target
            )));
        }
        if self.done {
            return Err(RlError::EpisodeOver {
                target: self.sub.target,
            });
        }
        if action >= self.candidates.len() {
            return Err(RlError::ActionOutOfRange {
                action,
                num_candidates: self.candidates.len(),
            });
        }
        let before = self.log_p_away();
        let (u, w, kind) = self.candidates.remove(action);
        let exists = self.edit.toggle(u as usize, w as usize);
        debug_assert_eq!(
            exists,
            kind == EditKind::Add,
            "candidate type matches the edge"
        );
        self.edits.push(Edit {
            u: self.sub.global_of(u as usize),
            w: self.sub.global_of(w as usize),
            kind,
        });
        let edge = (
            self.sub.global_of(u as usize),
            self.sub.global_of(w as usize),
        );
        Ok((before, edge))
    }

    /// The second half of a step, once the verdict is in: state, reward, end.
    fn end_step(&mut self, before: f32) -> Step {
        self.refresh_state();
        let after = self.log_p_away();
        let flipped = self.is_flipped();
        let reward = self
            .reward
            .compute(before, after, flipped, self.edits.len());
        self.done = flipped
            || self.edits.len() >= self.budget
            || self.candidates.len() <= self.min_candidates;
        Step {
            reward,
            flipped,
            done: self.done,
        }
    }

    /// The per-node state, row-major `[n, dim]` (a copy), with `n` and `dim`.
    ///
    /// # Shapes
    /// - output: `(data of length n·dim, n, dim)`, `dim = state_dim(feature_dim, classes)`
    pub fn state(&self) -> (Vec<f32>, usize, usize) {
        (self.state_blocks().to_rows(), self.num_nodes(), self.dim)
    }

    /// The per-node state without copying, as two column blocks (the node features and the
    /// columns that change with the edits, in the layout's order).
    ///
    /// # Shapes
    /// - output: `[n, dim]` in two blocks
    pub fn state_blocks(&self) -> StateBlocks<'_> {
        blocks(
            self.features(),
            self.sparse_rows().as_deref(),
            &self.small,
            self.layout,
            self.dim,
        )
    }

    /// True when the first block of [`Episode::state_blocks`] never changes during the episode
    /// (the node features, [`StateLayout::Paper`]), so a policy's product over it can be kept
    /// for all steps
    /// ([`HostPolicy::first_block_product`](induce_models::host::policy::HostPolicy::first_block_product)).
    pub fn first_block_is_fixed(&self) -> bool {
        self.layout == StateLayout::Paper
    }

    /// The state's node-feature columns, which never change during the episode (in either
    /// layout), and the columns of the state they occupy.
    ///
    /// # Shapes
    /// - output: `[n, feature_dim]`
    pub fn feature_block(&self) -> (&Features, Range<usize>) {
        (self.features(), self.feature_columns())
    }

    /// The columns of the state the node features occupy ([`Episode::feature_block`]'s,
    /// without gathering the features).
    pub fn feature_columns(&self) -> Range<usize> {
        let d = self.graph_features.dim();
        match self.layout {
            StateLayout::Paper => 0..d,
            StateLayout::Reference => self.dim - d..self.dim,
        }
    }

    /// Whether the neighbourhood's node features were gathered (tests).
    #[cfg(test)]
    pub(crate) fn features_gathered(&self) -> bool {
        self.features.get().is_some()
    }

    /// The neighbourhood's node features, gathered on the first call.
    fn features(&self) -> &Arc<Features> {
        self.features
            .get_or_init(|| Arc::new(self.graph_features.gather(&self.sub.nodes)))
    }

    /// The whole graph's node features, of which [`Episode::feature_block`]'s are the rows of
    /// the neighbourhood's nodes ([`Subgraph::nodes`]): lets a kernel compute one product over
    /// the graph's features and gather each episode's rows from it.
    pub fn graph_features(&self) -> &'a Features {
        self.graph_features
    }

    /// The state's other columns (`2 + classes`: degree, entropy, one-hot), which change with
    /// the edits, row-major, and the columns of the state they occupy.
    ///
    /// # Shapes
    /// - output: `[n, dim − feature_dim]`
    pub fn dynamic_block(&self) -> (&[f32], Range<usize>) {
        let d = self.graph_features.dim();
        match self.layout {
            StateLayout::Paper => (&self.small, d..self.dim),
            StateLayout::Reference => (&self.small, 0..self.dim - d),
        }
    }

    /// A copy of the current state that shares the node features with the episode: what a
    /// rollout keeps of each visited state (`2 + classes` values per node instead of `dim`).
    pub fn snapshot(&self) -> StateSnapshot {
        StateSnapshot {
            features: Arc::clone(self.features()),
            sparse: self.sparse_rows().clone(),
            small: self.small.clone(),
            layout: self.layout,
            dim: self.dim,
        }
    }

    /// The non-zero entries of the node features when they are wide and sparse, found on the
    /// first call.
    fn sparse_rows(&self) -> &Option<Arc<SparseRows>> {
        self.sparse
            .get_or_init(|| sparse_features(self.features(), self.graph_features, &self.sub.nodes))
    }

    /// Width of a state row ([`state_dim`] of this episode's features and classes).
    pub fn state_width(&self) -> usize {
        self.dim
    }

    /// The state uploaded as a tensor.
    ///
    /// # Shapes
    /// - output: `[n, dim]`
    pub fn state_tensor(&self, device: &Device) -> Tensor<2> {
        matrix(&self.state().0, self.num_nodes(), self.dim, device)
    }

    /// The current (edited) neighbourhood uploaded for the policy's GAT layers.
    pub fn graph_tensors(&self, device: &Device) -> Result<GraphTensors> {
        Ok(GraphTensors::new(
            self.num_nodes(),
            &self.edit.edges(),
            device,
        )?)
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

    /// The edits made so far, in order, in ORIGINAL node ids.
    pub fn edits(&self) -> &[Edit] {
        &self.edits
    }

    /// Number of edits made so far.
    pub fn num_edits(&self) -> usize {
        self.edits.len()
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

/// The initial candidate list (see [`Candidates`] for the order).
fn build_candidates(sub: &Subgraph, edit: &EditGraph, config: &EnvConfig) -> Candidates {
    let allowed: Option<HashSet<(u32, u32)>> = config
        .allowed
        .as_ref()
        .map(|pairs| pairs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect());
    let ok = |a: usize, b: usize| {
        let (ga, gb) = (sub.global_of(a), sub.global_of(b));
        config.locked.permits(ga, gb)
            && allowed
                .as_ref()
                .is_none_or(|set| set.contains(&(ga.min(gb), ga.max(gb))))
    };
    let t = sub.target_local;
    let (add_flag, target_neighbour) = match config.action_flag {
        ActionFlag::IsAddition => (true, false),
        ActionFlag::TargetNeighbour => (false, true),
    };
    let mut c = Candidates::default();
    if config.mode != EditMode::DeleteOnly {
        for u in 0..sub.num_nodes() {
            if u != t && !edit.has_edge(t, u) && ok(t, u) {
                c.push(t, u, EditKind::Add, add_flag);
            }
        }
    }
    if config.mode != EditMode::AddOnly {
        for &(j, k) in &sub.edges {
            let (j, k) = (j as usize, k as usize);
            if ok(j, k) {
                let flag = target_neighbour && edit.has_edge(t, j);
                c.push(j, k, EditKind::Delete, flag);
            }
        }
    }
    c
}

/// The authors' entropy feature of one node (spec §7), in f32 like their PyTorch code:
/// `q = sigmoid(log p) = 1 / (1 + exp(−log p))` per class, then `−Σ_c q_c · log2(q_c)` summed in
/// class order. Not a distribution's entropy (the `q` do not sum to 1), and deliberately
/// unguarded: for `log p < ≈ −88.7`, `exp` overflows to +∞, `q` is exactly 0 and
/// `0 · log2(0) = 0 · (−∞)` is NaN, which the reference policy then propagates (see
/// [`StateLayout::Reference`]).
///
/// ```
/// use induce_rl::env::reference_entropy;
/// let h = reference_entropy(&[0.5f32.ln(), 0.5f32.ln()]);
/// let q = 1.0 / (1.0 + 2.0f32); // sigmoid(ln 0.5) = 1/3
/// assert!((h - 2.0 * -(q * q.log2())).abs() < 1e-6);
/// assert!(reference_entropy(&[0.0, -100.0]).is_nan());
/// ```
pub fn reference_entropy(log_probs: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for &lp in log_probs {
        let q = 1.0f32 / (1.0f32 + (-lp).exp());
        acc += q * q.log2();
    }
    -acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use induce_models::{Kernel, ModelError, Result as ModelResult};

    /// A three-class degree rule: the predicted class is `min(degree, 2)` with probability 0.5
    /// (0.25 for each other class); an isolated node is class 0 with certainty (log 0 = −∞ for
    /// the others, which exercises the `0 · log 0 = 0` entropy guard).
    struct DegreeRule {
        input_dim: usize,
        nan: bool,
    }

    const RULE: DegreeRule = DegreeRule {
        input_dim: 1,
        nan: false,
    };

    impl BlackBox for DegreeRule {
        fn input_dim(&self) -> usize {
            self.input_dim
        }
        fn num_classes(&self) -> usize {
            3
        }
        fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> ModelResult<LogProbs> {
            let mut deg = vec![0usize; x.num_nodes()];
            for &(u, w) in edges {
                deg[u as usize] += 1;
                deg[w as usize] += 1;
            }
            let (hi, lo) = (0.5f32.ln(), 0.25f32.ln());
            let mut data = Vec::new();
            for &d in &deg {
                let mut row = if d == 0 {
                    [f32::NEG_INFINITY; 3]
                } else {
                    [lo; 3]
                };
                row[d.min(2)] = if d == 0 { 0.0 } else { hi };
                if self.nan {
                    row[0] = f32::NAN;
                }
                data.extend(row);
            }
            LogProbs::new(x.num_nodes(), 3, data)
        }
    }

    /// Wraps a rule but returns one class too many.
    struct BadShape;
    impl BlackBox for BadShape {
        fn input_dim(&self) -> usize {
            1
        }
        fn num_classes(&self) -> usize {
            2
        }
        fn log_probs(&self, x: &Features, e: &[(u32, u32)]) -> ModelResult<LogProbs> {
            RULE.log_probs(x, e)
        }
    }

    /// Always fails.
    struct Failing;
    impl BlackBox for Failing {
        fn input_dim(&self) -> usize {
            1
        }
        fn num_classes(&self) -> usize {
            3
        }
        fn log_probs(&self, _: &Features, _: &[(u32, u32)]) -> ModelResult<LogProbs> {
            Err(ModelError::InvalidInput("boom".into()))
        }
    }

    /// ```text
    ///    0 ─ 1 ─ 2 ─ 4 ─ 6 ─ 7        5 (isolated)
    ///        │
    ///        3
    /// ```
    /// Feature of node `i` is `i` (one column), so state rows show which node they are.
    /// An episode's non-zero index of wide sparse features, gathered from its graph's, equals
    /// the one built from its own rows; dense features get none.
    #[test]
    fn sparse_rows_come_from_the_graphs_index() {
        let (n, d) = (8, 40);
        let x: Vec<f32> = (0..n * d)
            .map(|i| {
                if i % 7 == 0 {
                    (i % 5) as f32 - 2.0
                } else {
                    0.0
                }
            })
            .collect();
        let wide = DegreeRule {
            input_dim: d,
            nan: false,
        };
        let edges = [(0, 1), (1, 2), (1, 3), (2, 4), (4, 6), (6, 7)];
        let g = Graph::from_edges(n, &edges, Features::new(n, d, x).unwrap(), vec![0; n]).unwrap();
        let ep = Episode::new(&g, &wide, 2, &cfg()).unwrap();
        assert!(ep.num_nodes() < n);
        let own = SparseRows::new(ep.features().as_slice(), d);
        assert_eq!(ep.sparse_rows().as_deref(), Some(&own));
        let dense = Features::new(n, d, vec![1.5; n * d]).unwrap();
        let g = Graph::from_edges(n, &edges, dense, vec![0; n]).unwrap();
        let ep = Episode::new(&g, &wide, 2, &cfg()).unwrap();
        assert!(ep.sparse_rows().is_none());
    }

    fn graph() -> Graph {
        let f = Features::new(8, 1, (0..8).map(|i| i as f32).collect()).unwrap();
        Graph::from_edges(
            8,
            &[(0, 1), (1, 2), (1, 3), (2, 4), (4, 6), (6, 7)],
            f,
            vec![0; 8],
        )
        .unwrap()
    }

    fn cfg() -> EnvConfig {
        EnvConfig {
            hops: 2,
            ..EnvConfig::default()
        }
    }

    fn list(c: &Candidates) -> Vec<(u32, u32, EditKind)> {
        (0..c.len()).map(|i| c.get(i)).collect()
    }

    use EditKind::{Add as A, Delete as D};

    const H: f32 = 1.039_720_8; // 1.5 ln 2: entropy of (0.5, 0.25, 0.25)

    fn assert_row(ep: &Episode, i: usize, want: [f32; 6]) {
        let s = ep.state().0;
        let row = &s[i * 6..(i + 1) * 6];
        for (k, (&a, &b)) in row.iter().zip(&want).enumerate() {
            assert!((a - b).abs() < 1e-6, "row {i} col {k}: {row:?} vs {want:?}");
        }
    }

    #[test]
    fn neighbourhood_and_candidates() {
        let g = graph();
        let ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
        assert_eq!(ep.subgraph().nodes, vec![0, 1, 2, 3, 4, 6]);
        assert_eq!(ep.num_nodes(), 6);
        assert_eq!(ep.target(), 2);
        assert_eq!(ep.target_local(), 2);
        assert_eq!(
            list(ep.candidates()),
            vec![
                (2, 0, A),
                (2, 3, A),
                (2, 5, A),
                (0, 1, D),
                (1, 2, D),
                (1, 3, D),
                (2, 4, D),
                (4, 5, D)
            ]
        );
        assert_eq!(
            ep.candidates().flag(),
            vec![1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        );
        // degree 2 → class 2, p(y) = 0.5
        assert_eq!(ep.original_label(), 2);
        assert_eq!(ep.current_label(), 2);
        assert!((ep.log_prob_original() - 0.5f32.ln()).abs() < 1e-7);
        assert!(!ep.is_done() && !ep.is_flipped());
        assert_eq!(ep.budget(), 15);
        assert_eq!(ep.num_edits(), 0);
    }

    #[test]
    fn state_features_before_and_after_an_edit() {
        let g = graph();
        let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
        let (data, n, dim) = ep.state();
        assert_eq!((data.len(), n, dim), (36, 6, 6));
        assert_eq!(ep.state_width(), state_dim(1, 3));
        // [feature ‖ degree ‖ entropy ‖ one-hot(min(deg, 2))]
        assert_row(&ep, 0, [0.0, 1.0, H, 0.0, 1.0, 0.0]);
        assert_row(&ep, 1, [1.0, 3.0, H, 0.0, 0.0, 1.0]);
        assert_row(&ep, 2, [2.0, 2.0, H, 0.0, 0.0, 1.0]);
        assert_row(&ep, 3, [3.0, 1.0, H, 0.0, 1.0, 0.0]);
        assert_row(&ep, 4, [4.0, 2.0, H, 0.0, 0.0, 1.0]);
        // global 6 has degree 2 in the graph but 1 in the 2-hop neighbourhood: its state's
        // degree is the neighbourhood's, its prediction the model's (class 2, exact verdicts)
        assert_row(&ep, 5, [6.0, 1.0, H, 0.0, 0.0, 1.0]);
        // or the frozen neighbourhood's (class 1, the paper's protocol)
        let frozen = EnvConfig {
            verdict: Verdict::Neighbourhood,
            ..cfg()
        };
        let paper = Episode::new(&g, &RULE, 2, &frozen).unwrap();
        assert_row(&paper, 5, [6.0, 1.0, H, 0.0, 1.0, 0.0]);
        assert_eq!(paper.log_probs().num_nodes(), 6);
        assert_eq!(ep.log_probs().num_nodes(), 8); // no layers reported: the whole graph

        // delete (0, 1): node 0 becomes isolated (class 0 with certainty, entropy exactly 0)
        let s = ep.step(3).unwrap();
        assert!(!s.flipped && !s.done);
        assert_row(&ep, 0, [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        assert_row(&ep, 1, [1.0, 2.0, H, 0.0, 0.0, 1.0]);
        assert_row(&ep, 2, [2.0, 2.0, H, 0.0, 0.0, 1.0]);
        // add (2, 5): node 6 gets degree 2 → class 2; target degree 3 → still class 2
        ep.step(2).unwrap();
        assert_row(&ep, 2, [2.0, 3.0, H, 0.0, 0.0, 1.0]);
        assert_row(&ep, 5, [6.0, 2.0, H, 0.0, 0.0, 1.0]);
        assert!(ep.state().0.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn pairs_are_never_offered_again() {
        let g = graph();
        let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
        // add (2, 0): the new edge is not offered for deletion
        let s = ep.step(0).unwrap();
        assert!(!s.flipped && !s.done);
        assert!(ep.edit_graph().has_edge(2, 0));
        assert_eq!(
            list(ep.candidates()),
            vec![
                (2, 3, A),
                (2, 5, A),
                (0, 1, D),
                (1, 2, D),
                (1, 3, D),
                (2, 4, D),
                (4, 5, D)
            ]
        );
        // delete (2, 4) (now index 5): the pair is not offered for re-addition
        assert_eq!(ep.candidates().get(5), (2, 4, D));
        ep.step(5).unwrap();
        assert!(!ep.edit_graph().has_edge(2, 4));
        assert_eq!(
            list(ep.candidates()),
            vec![
                (2, 3, A),
                (2, 5, A),
                (0, 1, D),
                (1, 2, D),
                (1, 3, D),
                (4, 5, D)
            ]
        );
        assert_eq!(ep.edits(), &[Edit::add(2, 0), Edit::delete(2, 4)]);
    }

    #[test]
    fn edits_are_reported_in_original_ids() {
        let g = graph();
        let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
        ep.step(7).unwrap(); // delete local (4, 5) = global (4, 6)
        ep.step(2).unwrap(); // add local (2, 5) = global (2, 6)
        assert_eq!(ep.edits(), &[Edit::delete(4, 6), Edit::add(2, 6)]);
        let e = ep.explanation();
        assert_eq!(e.target, 2);
        assert!(!e.found);
        assert_eq!((e.original_label, e.new_label), (2, 2));
        assert_eq!(e.edits, vec![Edit::delete(4, 6), Edit::add(2, 6)]);
    }

    #[test]
    fn flip_ends_the_episode_with_rewards() {
        let g = graph();
        // delete (1, 2): target degree 1 → class 1, p(y = 2) = 0.25
        let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
        let s = ep.step(4).unwrap();
        assert!(s.flipped && s.done);
        assert!(
            (s.reward - (2f32.ln() - 0.1 + 1.0)).abs() < 1e-6,
            "{}",
            s.reward
        );
        assert!(ep.is_done() && ep.is_flipped());
        assert_eq!(ep.current_label(), 1);
        assert!((ep.log_prob_original() - 0.25f32.ln()).abs() < 1e-7);
        let e = ep.explanation();
        assert!(e.found);
        assert_eq!((e.original_label, e.new_label), (2, 1));
        assert_eq!(e.edits, vec![Edit::delete(1, 2)]);
        assert!(matches!(
            ep.step(0),
            Err(RlError::EpisodeOver { target: 2 })
        ));

        // the paper's reward: flipped → 1 / (0 + 0.5 · 1) = 2
        let c = EnvConfig {
            reward: Reward::paper(),
            ..cfg()
        };
        let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert_eq!(ep.step(4).unwrap().reward, 2.0);
        // not flipped: add (2, 0): 1 / (log 0.5 + 0.5) ...
        let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        let r = ep.step(0).unwrap().reward;
        assert!((r - 1.0 / (0.5f32.ln() + 0.5)).abs() < 1e-5, "{r}");
        // ... then add (2, 3): 1 / (log 0.5 + 1.0)
        let r = ep.step(0).unwrap().reward;
        assert!((r - 1.0 / (0.5f32.ln() + 1.0)).abs() < 1e-5, "{r}");
    }

    #[test]
    fn shaped_reward_without_flip() {
        let g = graph();
        let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
        // add (2, 0): p(y) stays 0.5 → reward = 0 − 0.1
        let s = ep.step(0).unwrap();
        assert!((s.reward + 0.1).abs() < 1e-7);
    }

    #[test]
    fn budget_ends_the_episode() {
        let g = graph();
        let c = EnvConfig { budget: 2, ..cfg() };
        let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert!(!ep.step(0).unwrap().done);
        let s = ep.step(0).unwrap();
        assert!(s.done && !s.flipped);
        assert_eq!(ep.edits(), &[Edit::add(2, 0), Edit::add(2, 3)]);
        assert!(!ep.explanation().found);
        assert!(matches!(ep.step(0), Err(RlError::EpisodeOver { .. })));
    }

    #[test]
    fn running_out_of_candidates_ends_the_episode() {
        let g = graph();
        let c = EnvConfig {
            allowed: Some(vec![(0, 2)]),
            ..cfg()
        };
        let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert_eq!(list(ep.candidates()), vec![(2, 0, A)]);
        let s = ep.step(0).unwrap();
        assert!(s.done && !s.flipped);
        assert!(ep.candidates().is_empty());
    }

    #[test]
    fn modes_and_allowed_set() {
        let g = graph();
        let c = EnvConfig {
            mode: EditMode::DeleteOnly,
            ..cfg()
        };
        let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert_eq!(
            list(ep.candidates()),
            vec![(0, 1, D), (1, 2, D), (1, 3, D), (2, 4, D), (4, 5, D)]
        );
        let c = EnvConfig {
            mode: EditMode::AddOnly,
            ..cfg()
        };
        let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert_eq!(list(ep.candidates()), vec![(2, 0, A), (2, 3, A), (2, 5, A)]);
        // V_c in original ids, either orientation; (7, 6) and (5, 2) lie outside the
        // neighbourhood and are ignored
        let vc = vec![(4, 2), (6, 4), (0, 2), (7, 6), (5, 2)];
        let c = EnvConfig {
            allowed: Some(vc.clone()),
            ..cfg()
        };
        let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert_eq!(list(ep.candidates()), vec![(2, 0, A), (2, 4, D), (4, 5, D)]);
        // V_c combined with a mode
        let c = EnvConfig {
            allowed: Some(vc),
            mode: EditMode::AddOnly,
            ..cfg()
        };
        let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert_eq!(list(ep.candidates()), vec![(2, 0, A)]);
        // Locked node 6 (local 5) and edge (2, 1), original ids: add (2, 6), del (4, 6) and
        // del (1, 2) are not offered.
        let c = EnvConfig {
            locked: Locked::new(vec![6], vec![(2, 1)]),
            ..cfg()
        };
        let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert_eq!(
            list(ep.candidates()),
            vec![(2, 0, A), (2, 3, A), (0, 1, D), (1, 3, D), (2, 4, D)]
        );
        // The target locked: only the deletions away from it are left; with deletions only
        // and every edge of the neighbourhood locked, nothing is (the typed error).
        let c = EnvConfig {
            locked: Locked::new(vec![2], vec![]),
            ..cfg()
        };
        let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert_eq!(list(ep.candidates()), vec![(0, 1, D), (1, 3, D), (4, 5, D)]);
        let c = EnvConfig {
            locked: Locked::new(vec![1, 2, 4], vec![]),
            ..cfg()
        };
        assert!(matches!(
            Episode::new(&g, &RULE, 2, &c),
            Err(RlError::NoCandidate { target: 2 })
        ));
    }

    #[test]
    fn neighbourhood_cap_and_fanout() {
        let g = graph();
        // Node 1's 2-hop neighbourhood is {0, 1, 2, 3, 4}.
        let capped = EnvConfig {
            max_nodes: Some(4),
            ..cfg()
        };
        match Episode::new(&g, &RULE, 1, &capped) {
            Err(e @ RlError::NeighbourhoodTooLarge { .. }) => {
                assert_eq!(
                    e.to_string(),
                    "target 1: its neighbourhood has 5 nodes, more than the cap of 4 \
                     (EnvConfig.max_nodes); explain it on a fan-out-capped neighbourhood \
                     (EnvConfig.fanout) or raise the cap"
                );
            }
            other => panic!("expected the cap, got {:?}", other.map(|_| ())),
        }
        // One neighbour per expanded node: at most 1 + 1 + 1 nodes, under the cap.
        let sampled = EnvConfig {
            fanout: Some(1),
            ..capped.clone()
        };
        let ep = Episode::new(&g, &RULE, 1, &sampled).unwrap();
        assert!(ep.num_nodes() <= 3, "{}", ep.num_nodes());
        let again = Episode::new(&g, &RULE, 1, &sampled).unwrap();
        assert_eq!(ep.edit_graph().edges(), again.edit_graph().edges());
        // Both settings survive a JSON round trip and stay out of it when unset.
        let json = serde_json::to_string(&sampled).unwrap();
        assert!(json.contains("\"fanout\":1") && json.contains("\"max_nodes\":4"));
        assert!(!serde_json::to_string(&cfg()).unwrap().contains("fanout"));
    }

    /// With a fan-out sample, every step's verdict is the model's on the whole edited graph,
    /// the same whether it comes from the GCN's binding to the graph or from a judge of the
    /// receptive field, and the search's rows are the sample's.
    #[test]
    fn a_sampled_episode_is_judged_on_the_whole_graph() {
        use induce_explain::whole_graph_label;
        use induce_graph::generators::SyntheticKind;
        use induce_models::device::default_device;
        use induce_models::{BoundBlackBox, GcnConfig, HostGcn};
        let g = SyntheticKind::BaShapes.generate(3).unwrap().graph;
        let dev = default_device().unwrap();
        let gcn = GcnConfig::new(g.features().dim(), 4)
            .with_init_seed(7)
            .init(&dev);
        let bb = HostGcn::from_gcn(&gcn).unwrap();
        let bound = BoundBlackBox::new(&bb, &g).unwrap();
        let c = EnvConfig {
            hops: 3,
            budget: 10,
            fanout: Some(2),
            ..EnvConfig::default()
        };
        // Nodes of the minority class (123 of 700 with these weights): some flip.
        let labels = bb
            .log_probs(g.features(), &g.edges())
            .unwrap()
            .predictions();
        let targets: Vec<u32> = (0..700)
            .filter(|&v| labels[v as usize] == 0)
            .step_by(15)
            .collect();
        let mut flips = 0;
        for &t in &targets {
            let mut fast = Episode::new(&g, &bound, t, &c).unwrap();
            let mut slow = Episode::new(&g, &bb, t, &c).unwrap();
            assert_eq!(fast.log_probs().num_nodes(), fast.num_nodes());
            for step in 0.. {
                let edits = fast.explanation().edits;
                let want = whole_graph_label(&g, &bb, t, &edits).unwrap();
                assert_eq!(fast.current_label(), want, "target {t}, {edits:?}");
                assert_eq!(slow.current_label(), want, "target {t}, {edits:?}");
                let (a, b) = (fast.log_probs(), slow.log_probs());
                for v in (0..fast.num_nodes()).filter(|&v| v != fast.target_local()) {
                    assert_eq!(a.row(v), b.row(v), "target {t}, row {v}");
                }
                for (x, y) in fast
                    .judge()
                    .target_row()
                    .iter()
                    .zip(slow.judge().target_row())
                {
                    assert!((x - y).abs() < 1e-5, "target {t}");
                }
                if fast.is_done() {
                    flips += usize::from(fast.is_flipped());
                    break;
                }
                let action = (3 * step + t as usize) % fast.candidates().len();
                fast.step(action).unwrap();
                slow.step(action).unwrap();
            }
        }
        assert!(flips > 0, "no episode flipped: the test checks nothing");
    }

    /// An episode whose first verdicts the caller gives (the model on the subgraph induced by
    /// its request) is the episode the black box starts, and plays on the same way; only exact
    /// verdicts on the exact neighbourhood can be pending, and a wrong block of rows is a
    /// typed error.
    #[test]
    fn a_pending_episode_completed_with_the_models_rows_is_the_episode() {
        let g = graph();
        let mut played = 0;
        for target in [2u32, 5, 7, 1] {
            match (
                Episode::new(&g, &RULE, target, &cfg()),
                Episode::pending(&g, &RULE, target, &cfg()),
            ) {
                (Ok(mut want), Ok(pending)) => {
                    assert_eq!(pending.target(), target);
                    let nodes = pending.request().to_vec();
                    let at: std::collections::HashMap<u32, u32> = nodes
                        .iter()
                        .enumerate()
                        .map(|(i, &u)| (u, i as u32))
                        .collect();
                    let edges: Vec<(u32, u32)> = g
                        .edges()
                        .iter()
                        .filter_map(|(a, b)| Some((*at.get(a)?, *at.get(b)?)))
                        .collect();
                    let rows = RULE
                        .log_probs(&g.features().gather(&nodes), &edges)
                        .unwrap();
                    let mut got = pending.complete(rows).unwrap();
                    assert_eq!(got.state(), want.state());
                    assert_eq!(list(got.candidates()), list(want.candidates()));
                    assert_eq!(got.original_label(), want.original_label());
                    assert_eq!(got.log_prob_original(), want.log_prob_original());
                    while !want.is_done() {
                        assert_eq!(got.step(0).unwrap(), want.step(0).unwrap());
                        assert_eq!(got.state(), want.state());
                        played += 1;
                    }
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("target {target}: {a:?} vs {b:?}"),
            }
        }
        assert!(played > 2);
        let frozen = EnvConfig {
            verdict: Verdict::Neighbourhood,
            ..cfg()
        };
        assert!(matches!(
            Episode::pending(&g, &RULE, 2, &frozen),
            Err(RlError::InvalidConfig(_))
        ));
        let pending = Episode::pending(&g, &RULE, 2, &cfg()).unwrap();
        let short = LogProbs::new(1, 3, vec![0.0, -1.0, -2.0]).unwrap();
        assert!(matches!(
            pending.complete(short),
            Err(RlError::OutputShape { .. })
        ));
    }

    /// A black box that declares no class.
    struct NoClasses;
    impl BlackBox for NoClasses {
        fn input_dim(&self) -> usize {
            1
        }
        fn num_classes(&self) -> usize {
            0
        }
        fn log_probs(&self, x: &Features, _: &[(u32, u32)]) -> ModelResult<LogProbs> {
            LogProbs::new(x.num_nodes(), 0, Vec::new())
        }
    }

    #[test]
    fn a_black_box_without_classes_is_a_typed_error() {
        let g = graph();
        let no_classes = |r: Result<()>| matches!(r, Err(RlError::Model(ModelError::InvalidInput(m))) if m.contains("0 classes"));
        assert!(no_classes(
            Episode::new(&g, &NoClasses, 2, &cfg()).map(|_| ())
        ));
        assert!(no_classes(
            induce_explain::whole_graph_label(&g, &NoClasses, 2, &[]).map(|_| ())
        ));
    }

    /// Training on no target, or on targets with nothing to edit, says which.
    #[test]
    fn training_without_a_usable_target_says_why() {
        let g = graph();
        let dev = induce_models::device::default_device().unwrap();
        let config = crate::InduceConfig {
            env: cfg(),
            ..crate::InduceConfig::default()
        };
        let train = |targets: &[u32]| match crate::train_inductive(
            &g,
            &RULE,
            targets,
            &config,
            &dev,
            |_| {},
        ) {
            Err(RlError::InvalidConfig(m)) => m,
            other => panic!("{targets:?}: {:?}", other.map(|_| ())),
        };
        assert!(train(&[]).contains("the list of training targets is empty"));
        // Node 5 is isolated: no candidate action.
        assert!(
            train(&[5, 5]).contains("no training target has a candidate action: none of the 2")
        );
    }

    /// A policy built for another state width (other features, or a black box with another
    /// number of classes) is refused by both kernels before it reads a state.
    #[test]
    fn a_policy_for_other_states_is_a_typed_error() {
        let g = graph();
        let dev = induce_models::device::default_device().unwrap();
        let width = state_dim(1, 3);
        assert_eq!(
            Episode::new(&g, &RULE, 2, &cfg()).unwrap().state_width(),
            width
        );
        for wrong in [width - 1, width + 4] {
            let policy = induce_models::PolicyConfig::new(wrong).init(&dev);
            for kernel in [Kernel::Host, Kernel::Burn] {
                let runner = crate::KernelPolicy::new(&policy, kernel, &dev);
                let got = crate::explain_greedy(&runner, &g, &RULE, 2, &cfg());
                match got {
                    Err(RlError::Model(ModelError::DimensionMismatch {
                        what,
                        expected,
                        got,
                    })) => {
                        assert_eq!((expected, got), (wrong, width), "{kernel:?}");
                        assert!(what.contains("target 2"), "{what}");
                    }
                    other => panic!("{kernel:?}, width {wrong}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn errors() {
        let g = graph();
        let c = EnvConfig { budget: 0, ..cfg() };
        assert!(matches!(
            Episode::new(&g, &RULE, 2, &c),
            Err(RlError::ZeroBudget)
        ));
        assert!(matches!(
            Episode::new(&g, &RULE, 8, &cfg()),
            Err(RlError::TargetOutOfRange {
                target: 8,
                num_nodes: 8
            })
        ));
        // isolated node, zero hops, nothing allowed, an add-only leaf whose only node is adjacent
        assert!(matches!(
            Episode::new(&g, &RULE, 5, &cfg()),
            Err(RlError::NoCandidate { target: 5 })
        ));
        let c = EnvConfig { hops: 0, ..cfg() };
        assert!(matches!(
            Episode::new(&g, &RULE, 2, &c),
            Err(RlError::NoCandidate { target: 2 })
        ));
        let c = EnvConfig {
            allowed: Some(vec![]),
            ..cfg()
        };
        assert!(matches!(
            Episode::new(&g, &RULE, 2, &c),
            Err(RlError::NoCandidate { .. })
        ));
        let c = EnvConfig {
            hops: 1,
            mode: EditMode::AddOnly,
            ..cfg()
        };
        assert!(matches!(
            Episode::new(&g, &RULE, 0, &c),
            Err(RlError::NoCandidate { target: 0 })
        ));
        let wide = DegreeRule {
            input_dim: 2,
            nan: false,
        };
        assert!(matches!(
            Episode::new(&g, &wide, 2, &cfg()),
            Err(RlError::FeatureDimension {
                expected: 2,
                got: 1
            })
        ));
        // target 4's 2-hop neighbourhood is global [1, 2, 4, 6, 7]: local row 0 is node 1
        let nan = DegreeRule {
            input_dim: 1,
            nan: true,
        };
        assert!(matches!(
            Episode::new(&g, &nan, 4, &cfg()),
            Err(RlError::NanOutput { target: 4, node: 1 })
        ));
        assert!(matches!(
            Episode::new(&g, &BadShape, 2, &cfg()),
            Err(RlError::OutputShape {
                expected_classes: 2,
                got_classes: 3,
                ..
            })
        ));
        assert!(matches!(
            Episode::new(&g, &Failing, 2, &cfg()),
            Err(RlError::Model(ModelError::InvalidInput(_)))
        ));
        let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
        assert!(matches!(
            ep.step(8),
            Err(RlError::ActionOutOfRange {
                action: 8,
                num_candidates: 8
            })
        ));
        // errors display their numbers
        let msg = RlError::TargetOutOfRange {
            target: 8,
            num_nodes: 8,
        }
        .to_string();
        assert!(msg.contains('8'), "{msg}");
    }

    #[test]
    fn reset_restores_the_start() {
        let g = graph();
        let fresh = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
        let mut ep = fresh.clone();
        ep.step(0).unwrap();
        ep.step(3).unwrap();
        ep.reset();
        assert_eq!(ep.state(), fresh.state());
        assert_eq!(ep.candidates(), fresh.candidates());
        assert_eq!(ep.edit_graph(), fresh.edit_graph());
        assert!(ep.edits().is_empty() && !ep.is_done());
        // and it plays again
        assert!(ep.step(4).unwrap().flipped);
    }

    /// The graph of [`graph`] with ground-truth labels `i % 3`.
    fn labelled() -> Graph {
        let f = Features::new(8, 1, (0..8).map(|i| i as f32).collect()).unwrap();
        let edges = [(0, 1), (1, 2), (1, 3), (2, 4), (4, 6), (6, 7)];
        Graph::from_edges(8, &edges, f, (0..8).map(|i| i % 3).collect()).unwrap()
    }

    fn reference_cfg() -> EnvConfig {
        EnvConfig {
            hops: 2,
            ..EnvConfig::reference()
        }
    }

    #[test]
    fn reference_state_is_static_except_the_degree() {
        let g = labelled();
        let mut ep = Episode::new(&g, &RULE, 2, &reference_cfg()).unwrap();
        // every node of the neighbourhood has degree ≥ 1: log p is a permutation of
        // (ln .5, ln .25, ln .25), so q = sigmoid(log p) = p / (1 + p) = (1/3, 1/5, 1/5)
        let (a, b) = (1.0f32 / 3.0, 0.2f32);
        let h = -(a * a.log2() + 2.0 * b * b.log2());
        assert!((reference_entropy(&[0.5f32.ln(), 0.25f32.ln(), 0.25f32.ln()]) - h).abs() < 1e-6);
        // [entropy ‖ degree ‖ one-hot(ground truth = global id % 3) ‖ feature]
        let start = [
            [h, 1.0, 1.0, 0.0, 0.0, 0.0],
            [h, 3.0, 0.0, 1.0, 0.0, 1.0],
            [h, 2.0, 0.0, 0.0, 1.0, 2.0],
            [h, 1.0, 1.0, 0.0, 0.0, 3.0],
            [h, 2.0, 0.0, 1.0, 0.0, 4.0],
            [h, 1.0, 1.0, 0.0, 0.0, 6.0],
        ];
        for (i, row) in start.iter().enumerate() {
            assert_row(&ep, i, *row);
        }
        // delete (0, 1): node 0 is isolated now (the paper layout would show entropy 0 and
        // class 0); here only the degrees change
        ep.step(3).unwrap();
        let mut after = start;
        after[0][1] = 0.0;
        after[1][1] = 2.0;
        for (i, row) in after.iter().enumerate() {
            assert_row(&ep, i, *row);
        }
        ep.reset();
        for (i, row) in start.iter().enumerate() {
            assert_row(&ep, i, *row);
        }
    }

    #[test]
    fn reference_flags_and_candidate_order() {
        let g = labelled();
        let ep = Episode::new(&g, &RULE, 2, &reference_cfg()).unwrap();
        // same order as the default; a deletion (j, k) carries A_orig[target][j]
        // (the target, local 2, is adjacent to 1 and 4), an addition 0
        assert_eq!(
            list(ep.candidates()),
            list(Episode::new(&g, &RULE, 2, &cfg()).unwrap().candidates())
        );
        assert_eq!(
            ep.candidates().flag(),
            vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0]
        );
        assert_eq!(
            ep.candidates()
                .to_tensors(&induce_models::device::default_device().unwrap())
                .len(),
            8
        );
    }

    #[test]
    fn reference_episode_ends_with_one_candidate_left() {
        let g = labelled();
        let c = EnvConfig {
            allowed: Some(vec![(0, 2), (1, 3)]),
            ..reference_cfg()
        };
        let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert_eq!(list(ep.candidates()), vec![(2, 0, A), (1, 3, D)]);
        assert!(!ep.is_done());
        let s = ep.step(1).unwrap();
        assert!(s.done && !s.flipped);
        assert_eq!(ep.candidates().len(), 1);
        ep.reset();
        assert!(!ep.is_done());
        // a single candidate: over before any edit
        let c = EnvConfig {
            allowed: Some(vec![(0, 2)]),
            ..reference_cfg()
        };
        let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
        assert!(ep.is_done());
        let e = ep.explanation();
        assert!(!e.found && e.edits.is_empty());
    }

    #[test]
    fn reference_state_rejects_labels_beyond_the_classes() {
        let f = Features::constant(3, 1, 1.0);
        let g = Graph::from_edges(3, &[(0, 1), (1, 2)], f, vec![0, 3, 0]).unwrap();
        assert!(matches!(
            Episode::new(&g, &RULE, 0, &reference_cfg()),
            Err(RlError::InvalidConfig(_))
        ));
    }

    #[test]
    fn reference_preset_serde() {
        let j = serde_json::to_string(&EnvConfig::reference()).unwrap();
        assert!(
            j.ends_with(concat!(
                r#""state":"reference","action_flag":"target_neighbour","min_candidates":1,"#,
                r#""verdict":"neighbourhood"}"#
            )),
            "{j}"
        );
        assert_eq!(
            serde_json::from_str::<EnvConfig>(&j).unwrap(),
            EnvConfig::reference()
        );
    }

    #[test]
    fn tensors_for_the_policy() {
        let dev = induce_models::device::default_device().unwrap();
        let g = graph();
        let ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
        assert_eq!(ep.state_tensor(&dev).dims(), [6, 6]);
        let gt = ep.graph_tensors(&dev).unwrap();
        assert_eq!(gt.num_nodes, 6);
        assert_eq!(gt.src.dims(), [2 * 5 + 6]);
        let ct = ep.candidates().to_tensors(&dev);
        assert_eq!(ct.len(), 8);
        assert_eq!(ct.flag.dims(), [8, 1]);
    }

    #[test]
    fn config_serde() {
        let c = EnvConfig {
            allowed: Some(vec![(1, 2)]),
            mode: EditMode::AddOnly,
            reward: Reward::paper(),
            ..EnvConfig::default()
        };
        let j = serde_json::to_string(&c).unwrap();
        assert_eq!(
            j,
            concat!(
                r#"{"hops":4,"budget":15,"mode":"add_only","allowed":[[1,2]],"#,
                r#""reward":{"kind":"paper","beta":0.5}}"#
            )
        );
        assert_eq!(serde_json::from_str::<EnvConfig>(&j).unwrap(), c);
        assert_eq!(
            serde_json::from_str::<EnvConfig>("{}").unwrap(),
            EnvConfig::default()
        );
    }
}
