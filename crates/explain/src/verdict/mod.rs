//! Verdicts: the black box's prediction for a target on an edited graph, taken where the model
//! really looks ([`Judge`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use induce_graph::{EditGraph, Features, Graph};
use induce_models::{BlackBox, GraphBinding, IncrementalBlackBox, LogProbs, PreparedBlackBox};
use serde::{Deserialize, Serialize};

mod checks;
mod edits;
mod judge;
#[cfg(test)]
mod tests;

use crate::explanation::FeatureEdit;

pub use checks::{check_classes, check_inputs, whole_graph_label, whole_graph_label_with_features};
pub use judge::PendingJudge;

/// Where the black box's verdict on an edited graph is taken.
///
/// Serialised as `"exact"` / `"neighbourhood"`.
///
/// ```
/// use induce_explain::Verdict;
/// assert_eq!(Verdict::default(), Verdict::Exact);
/// assert_eq!(serde_json::to_string(&Verdict::Neighbourhood).unwrap(), "\"neighbourhood\"");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The model's prediction on the whole edited graph (the default). Computed on the
    /// target's receptive field in the EDITED graph: the nodes within `L + 1` hops of it, `L`
    /// the black box's [`message_passing_layers`](BlackBox::message_passing_layers), a set that
    /// grows with every added edge; the whole graph when the black box reports no `L`.
    #[default]
    Exact,
    /// The paper's protocol (and the authors' code): the black box runs on the target's frozen
    /// `h`-hop neighbourhood of the ORIGINAL graph, edited. An edge added to a node near the
    /// boundary brings that node's own neighbours into the model's receptive field, and they are
    /// missing from the frozen set: such a verdict can differ from the model's on the graph. For
    /// parity with the authors' explanations only.
    Neighbourhood,
}

impl Verdict {
    /// What a run file written before verdicts were recorded used: the frozen neighbourhood
    /// (the only protocol then). The default of a missing `verdict` field in run files.
    pub fn legacy() -> Self {
        Verdict::Neighbourhood
    }
}

/// A frozen neighbourhood's edges: in local ids (for the black box) and in original ids (to
/// tell additions from deletions).
type FrozenEdges<'e> = (&'e [(u32, u32)], HashSet<(u32, u32)>);

/// Feature rows edited relative to the graph's: node (original id) → its whole edited row
/// ([`Judge::set_features`]).
type EditedRows = BTreeMap<u32, Vec<f32>>;

/// How a [`Judge`] runs the black box on its node set.
enum Eval<'a> {
    /// Follows the edited graph by edits ([`BlackBox::incremental_rows`]).
    Incremental(Box<dyn IncrementalBlackBox<'a> + 'a>),
    /// Bound to the node set's features ([`BlackBox::prepare_rows`]).
    Prepared(Arc<dyn PreparedBlackBox + 'a>),
    /// Whole evaluations on the gathered features.
    Plain(Arc<Features>),
    /// No node set: the target alone, from its [`ExactTarget`] ([`Judge::exact_target`]).
    TargetOnly,
    /// Not built yet: the first rows came from the caller ([`PendingJudge`]); built on the
    /// judge's first own evaluation.
    Deferred,
}

/// Where a [`Judge`] whose node set does not hold the target's receptive field takes the
/// target's own row from: the model's prediction on the whole edited graph.
#[derive(Clone)]
enum ExactTarget<'a> {
    /// The black box's binding to the graph ([`BlackBox::graph_binding`]).
    Bound(&'a dyn GraphBinding),
    /// A judge of the target on its receptive field ([`Judge::new`] with [`Verdict::Exact`]).
    Ball(Box<Judge<'a>>),
}

impl Clone for Eval<'_> {
    fn clone(&self) -> Self {
        match self {
            Eval::Incremental(inc) => Eval::Incremental(inc.boxed_clone()),
            Eval::Prepared(p) => Eval::Prepared(Arc::clone(p)),
            Eval::Plain(x) => Eval::Plain(Arc::clone(x)),
            Eval::TargetOnly => Eval::TargetOnly,
            Eval::Deferred => Eval::Deferred,
        }
    }
}

/// The black box's verdict for one target on an edited graph: its log-probabilities on a node
/// set that holds the target's neighbourhood (first, in the given order) and, with
/// [`Verdict::Exact`], its whole receptive field in the edited graph, so that the target's row
/// is the model's prediction on the whole edited graph.
///
/// Edits are node pairs in ORIGINAL (graph) ids, toggled ([`Judge::toggle`]) or given as a
/// whole edit list ([`Judge::set_edits`]). An added edge `(u, w)` puts the nodes within `L`
/// hops of `w` into the target's `L + 1`-hop ball: the set grows to hold them (one whole
/// evaluation of the grown set), otherwise only what the edit reaches is recomputed when the
/// black box is incremental. Deletions never grow it (a superset of the receptive field gives
/// the same verdict).
///
/// ```text
///  a 3-layer GCN (L = 3), target 0, neighbourhood = 2 hops {0, 1, 2}:
///
///    0 ─ 1 ─ 2 ─ 3 ─ 4 ─ 5 ─ 6        add (0, 2): 2 is now 1 hop away, so 3, 4 and 5
///                                     enter the set (5 only for its edge to 4: 4's degree)
/// ```
///
/// ```
/// use induce_explain::{Edit, Judge, Verdict};
/// use induce_graph::{Features, Graph};
/// use induce_models::testing::DegreeAtLeast;
///
/// //  0 ─ 1   2 ─ 3
/// let g = Graph::from_edges(4, &[(0, 1), (2, 3)], Features::constant(4, 1, 1.0), vec![0; 4])
///     .unwrap();
/// let mut judge = Judge::new(&g, &DegreeAtLeast(2), 0, &[0], Verdict::Exact).unwrap();
/// assert_eq!(judge.label(), 0);
/// judge.set_edits(&[Edit::add(0, 3)]).unwrap(); // node 0 now has degree 2
/// assert_eq!(judge.label(), 1);
/// assert_eq!(judge.nodes(), &[0, 1, 3]);       // the 1-hop ball of 0 in the edited graph
/// ```
#[derive(Clone)]
pub struct Judge<'a> {
    graph: &'a Graph,
    black_box: &'a dyn BlackBox,
    target: u32,
    verdict: Verdict,
    /// `L + 1` with [`Verdict::Exact`] when the black box reports `L`; `None` otherwise.
    radius: Option<u32>,
    /// The node set is fixed: toggled pairs must lie inside it ([`Verdict::Neighbourhood`],
    /// [`Judge::frozen`], [`Judge::sampled`]).
    closed: bool,
    /// The target's row comes from here, not from the node set's evaluation
    /// ([`Judge::sampled`], [`Judge::exact_target`]).
    exact: Option<ExactTarget<'a>>,
    /// The evaluated node set in original ids; local id = position.
    nodes: Vec<u32>,
    local: HashMap<u32, u32>,
    target_local: usize,
    /// The edited graph on `nodes`, local ids.
    edit: EditGraph,
    /// The pairs toggled relative to the original graph, `(min, max)` in original ids.
    delta: BTreeSet<(u32, u32)>,
    /// The edges of a given neighbourhood ([`Judge::frozen`]) in original ids, standing for the
    /// graph's; `None`: the graph's.
    base: Option<Arc<HashSet<(u32, u32)>>>,
    /// The feature edits applied ([`Judge::set_features`]), in order, and the rows they give.
    feature_edits: Arc<Vec<FeatureEdit>>,
    rows: Arc<EditedRows>,
    eval: Eval<'a>,
    log_probs: LogProbs,
    /// The evaluator must be rebuilt before the next answer (the set grew, or an evaluation
    /// failed half-way).
    stale: bool,
}

impl std::fmt::Debug for Judge<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("target", &self.target)
            .field("verdict", &self.verdict)
            .field("radius", &self.radius)
            .field("closed", &self.closed)
            .field("exact_target", &self.exact.is_some())
            .field("nodes", &self.nodes.len())
            .field("delta", &self.delta)
            .field("feature_edits", &self.feature_edits)
            .finish_non_exhaustive()
    }
}
