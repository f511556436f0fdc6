//! Verdicts: the black box's prediction for a target on an edited graph, taken where the model
//! really looks ([`Judge`]).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use induce_graph::{EditGraph, Features, Graph};
use induce_models::{BlackBox, GraphBinding, IncrementalBlackBox, LogProbs, PreparedBlackBox};
use serde::{Deserialize, Serialize};

use crate::error::{ExplainError, Result};
use crate::explanation::{Edit, EditKind};
use crate::field::{ball, induced_edges, is_edge};

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
/// use induce_models::{BlackBox, LogProbs};
///
/// /// Class 1 iff degree ≥ 2; reads a node's own edges only (L = 0).
/// struct DegreeRule;
/// impl BlackBox for DegreeRule {
///     fn input_dim(&self) -> usize { 1 }
///     fn num_classes(&self) -> usize { 2 }
///     fn message_passing_layers(&self) -> Option<u32> { Some(0) }
///     fn log_probs(&self, x: &Features, edges: &[(u32, u32)])
///         -> induce_models::Result<LogProbs> {
///         let mut deg = vec![0; x.num_nodes()];
///         for &(u, w) in edges { deg[u as usize] += 1; deg[w as usize] += 1; }
///         let d = deg.iter().flat_map(|&d| if d >= 2 { [-2.0, -0.2] } else { [-0.2, -2.0] });
///         LogProbs::new(x.num_nodes(), 2, d.collect())
///     }
/// }
/// //  0 ─ 1   2 ─ 3
/// let g = Graph::from_edges(4, &[(0, 1), (2, 3)], Features::constant(4, 1, 1.0), vec![0; 4])
///     .unwrap();
/// let mut judge = Judge::new(&g, &DegreeRule, 0, &[0], Verdict::Exact).unwrap();
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
            .finish_non_exhaustive()
    }
}

/// A [`Judge`] whose first answer the caller gives ([`Judge::pending`]).
///
/// ```
/// use induce_explain::Judge;
/// use induce_graph::{Features, Graph};
/// use induce_models::{BlackBox, LogProbs};
///
/// /// Class 1 iff degree ≥ 1; reads a node's own edges only (L = 0).
/// struct Degree;
/// impl BlackBox for Degree {
///     fn input_dim(&self) -> usize { 1 }
///     fn num_classes(&self) -> usize { 2 }
///     fn message_passing_layers(&self) -> Option<u32> { Some(0) }
///     fn log_probs(&self, x: &Features, edges: &[(u32, u32)])
///         -> induce_models::Result<LogProbs> {
///         let mut deg = vec![0; x.num_nodes()];
///         for &(u, w) in edges { deg[u as usize] += 1; deg[w as usize] += 1; }
///         let d = deg.iter().flat_map(|&d| if d >= 1 { [-2.0, -0.2] } else { [-0.2, -2.0] });
///         LogProbs::new(x.num_nodes(), 2, d.collect())
///     }
/// }
/// //  0 ─ 1   2
/// let g = Graph::from_edges(3, &[(0, 1)], Features::constant(3, 1, 1.0), vec![0; 3]).unwrap();
/// let pending = Judge::pending(&g, &Degree, 0, &[0]).unwrap();
/// assert_eq!(pending.nodes(), &[0, 1]); // the target and its receptive field (1 hop)
/// // The caller evaluates the model on the subgraph induced by those nodes: 0 ─ 1.
/// let rows = Degree.log_probs(&Features::constant(2, 1, 1.0), &[(0, 1)]).unwrap();
/// let judge = pending.complete(rows).unwrap();
/// assert_eq!(judge.label(), 1);
/// ```
pub struct PendingJudge<'a>(Judge<'a>);

impl<'a> PendingJudge<'a> {
    /// The node set the first answer is asked for, in original ids (the neighbourhood first).
    pub fn nodes(&self) -> &[u32] {
        &self.0.nodes
    }

    /// The target (original id).
    pub fn target(&self) -> u32 {
        self.0.target
    }

    /// The judge, with `rows` as the model's log-probabilities for [`PendingJudge::nodes`] (in
    /// that order) on the unedited graph's subgraph induced by them.
    ///
    /// Errors: [`ExplainError::OutputShape`] for a wrong number of rows or classes,
    /// [`ExplainError::NanOutput`] for a NaN.
    pub fn complete(self, rows: LogProbs) -> Result<Judge<'a>> {
        crate::oracle::count(1);
        let mut judge = self.0;
        judge.log_probs = rows;
        judge.checked()?;
        Ok(judge)
    }
}

impl std::fmt::Debug for PendingJudge<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PendingJudge").field(&self.0).finish()
    }
}

impl<'a> Judge<'a> {
    /// The judge of `target` on the unedited `graph`. `neighbourhood` (original ids, the target
    /// among them, no duplicates) are the first nodes of the evaluated set, in this order: the
    /// explainer's own neighbourhood, whose rows it reads (the policy's state). With
    /// [`Verdict::Neighbourhood`] they are the whole set.
    ///
    /// Errors: [`ExplainError::TargetOutOfRange`], [`ExplainError::NodeOutOfRange`] /
    /// [`ExplainError::InvalidValue`] for a bad neighbourhood, [`ExplainError::FeatureDimension`],
    /// [`ExplainError::OutputShape`] / [`ExplainError::NanOutput`] for a bad black-box output,
    /// and the black box's own errors.
    pub fn new(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        target: u32,
        neighbourhood: &[u32],
        verdict: Verdict,
    ) -> Result<Self> {
        Self::build(
            graph,
            black_box,
            target,
            neighbourhood,
            None,
            verdict,
            false,
        )
    }

    /// [`Judge::new`] with [`Verdict::Exact`] and its first answer left to the caller: the node
    /// set is found (the neighbourhood, then the rest of the target's receptive field), nothing
    /// is evaluated; the caller evaluates the model on the subgraph of the unedited graph induced
    /// by [`PendingJudge::nodes`] (for many judges at once, e.g. one batched pass on a device)
    /// and hands the rows to [`PendingJudge::complete`]. The judge builds its own evaluator on
    /// its first own answer ([`Judge::toggle`]). Same errors as [`Judge::new`], the black box's
    /// at [`PendingJudge::complete`].
    pub fn pending(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        target: u32,
        neighbourhood: &[u32],
    ) -> Result<PendingJudge<'a>> {
        let judge = Self::build(
            graph,
            black_box,
            target,
            neighbourhood,
            None,
            Verdict::Exact,
            true,
        )?;
        Ok(PendingJudge(judge))
    }

    /// A [`Verdict::Neighbourhood`] judge on a given neighbourhood `sub` of `graph` with ITS
    /// edges standing for the graph's (e.g. a fan-out-capped sample, whose edges are a subset
    /// of the induced ones): the black box sees exactly `sub`, edited. Same errors as
    /// [`Judge::new`].
    pub fn frozen(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        sub: &induce_graph::Subgraph,
    ) -> Result<Self> {
        Self::on_subgraph(graph, black_box, sub)
    }

    /// A [`Verdict::Exact`] judge for a search on a fan-out-capped neighbourhood `sub` (e.g.
    /// `induce_graph::k_hop_sampled`) of a graph too large to evaluate around every target:
    /// the rows of [`Judge::log_probs`] are the black box on the edited `sub` alone, as the
    /// search sees it (its state), except the TARGET's row, which is the model's prediction on
    /// the whole edited graph, so that a flip is a real counterfactual. The target's row comes
    /// from the black box's binding to `graph` when it has one ([`BlackBox::graph_binding`],
    /// e.g. through [`BoundBlackBox`](induce_models::BoundBlackBox): its receptive field
    /// only, from layers cached once per graph), else from a second judge on the target's
    /// receptive field ([`Judge::new`]). Toggled pairs must lie in `sub`. Same errors as
    /// [`Judge::new`].
    ///
    /// ```
    /// use induce_explain::{Edit, Judge};
    /// use induce_graph::{Features, Graph, k_hop};
    /// use induce_models::{BlackBox, LogProbs};
    ///
    /// /// Class 1 iff degree ≥ 2; reads a node's own edges only (L = 0).
    /// struct DegreeRule;
    /// impl BlackBox for DegreeRule {
    ///     fn input_dim(&self) -> usize { 1 }
    ///     fn num_classes(&self) -> usize { 2 }
    ///     fn message_passing_layers(&self) -> Option<u32> { Some(0) }
    ///     fn log_probs(&self, x: &Features, edges: &[(u32, u32)])
    ///         -> induce_models::Result<LogProbs> {
    ///         let mut deg = vec![0; x.num_nodes()];
    ///         for &(u, w) in edges { deg[u as usize] += 1; deg[w as usize] += 1; }
    ///         let d = deg.iter().flat_map(|&d| if d >= 2 { [-2.0, -0.2] } else { [-0.2, -2.0] });
    ///         LogProbs::new(x.num_nodes(), 2, d.collect())
    ///     }
    /// }
    /// //  0 ─ 1 ─ 2 ─ 3,  target 1, the search sees {0, 1, 2}
    /// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
    ///     vec![0; 4]).unwrap();
    /// let sub = k_hop(&g, 1, 1).unwrap();
    /// let mut judge = Judge::sampled(&g, &DegreeRule, &sub).unwrap();
    /// assert_eq!(judge.label(), 1);                      // degree 2 in the graph
    /// assert_eq!(judge.log_probs().argmax(2), 0);        // node 2 as the search sees it
    /// judge.set_edits(&[Edit::delete(1, 2)]).unwrap();
    /// assert_eq!(judge.label(), 0);                      // a real counterfactual
    /// assert!(judge.set_edits(&[Edit::add(1, 3)]).is_err()); // 3 is outside the sample
    /// ```
    pub fn sampled(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        sub: &induce_graph::Subgraph,
    ) -> Result<Self> {
        let exact = match black_box.graph_binding(graph) {
            Some(b) => ExactTarget::Bound(b),
            None => ExactTarget::Ball(Box::new(Self::new(
                graph,
                black_box,
                sub.target,
                &[sub.target],
                Verdict::Exact,
            )?)),
        };
        let mut judge = Self::on_subgraph(graph, black_box, sub)?;
        judge.verdict = Verdict::Exact;
        judge.exact = Some(exact);
        judge.splice_target()?;
        judge.checked()?;
        Ok(judge)
    }

    /// A judge of `target` alone with [`Verdict::Exact`]: [`Judge::log_probs`] has the one row
    /// of the target, its prediction on the whole edited graph; pairs anywhere in the graph
    /// may be toggled. Through the black box's binding to `graph` when it has one
    /// ([`BlackBox::graph_binding`]), else as [`Judge::new`] with the neighbourhood
    /// `[target]` (which then also evaluates the rest of the receptive field). Same errors as
    /// [`Judge::new`].
    pub fn exact_target(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        target: u32,
    ) -> Result<Self> {
        let Some(binding) = black_box.graph_binding(graph) else {
            return Self::new(graph, black_box, target, &[target], Verdict::Exact);
        };
        check_inputs(graph, black_box, target)?;
        let judge = Self {
            graph,
            black_box,
            target,
            verdict: Verdict::Exact,
            radius: None,
            closed: false,
            exact: Some(ExactTarget::Bound(binding)),
            nodes: vec![target],
            local: HashMap::from([(target, 0)]),
            target_local: 0,
            edit: EditGraph::from_edges(1, &[]),
            delta: BTreeSet::new(),
            base: None,
            eval: Eval::TargetOnly,
            log_probs: LogProbs::new(
                1,
                black_box.num_classes(),
                vec![0.0; black_box.num_classes()],
            )?,
            stale: false,
        };
        let mut judge = judge;
        judge.splice_target()?;
        judge.checked()?;
        Ok(judge)
    }

    /// The judge on `sub` with its edges, closed ([`Judge::frozen`]).
    fn on_subgraph(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        sub: &induce_graph::Subgraph,
    ) -> Result<Self> {
        let edges = sub
            .edges
            .iter()
            .map(|&(a, b)| {
                let (a, b) = (sub.global_of(a as usize), sub.global_of(b as usize));
                (a.min(b), a.max(b))
            })
            .collect();
        let base = Some((sub.edges.as_slice(), edges));
        Self::build(
            graph,
            black_box,
            sub.target,
            &sub.nodes,
            base,
            Verdict::Neighbourhood,
            false,
        )
    }

    fn build(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        target: u32,
        neighbourhood: &[u32],
        base: Option<FrozenEdges<'_>>,
        verdict: Verdict,
        defer: bool,
    ) -> Result<Self> {
        let n = graph.num_nodes();
        check_inputs(graph, black_box, target)?;
        let mut local = HashMap::with_capacity(neighbourhood.len());
        for (i, &u) in neighbourhood.iter().enumerate() {
            if u as usize >= n {
                return Err(ExplainError::NodeOutOfRange {
                    node: u,
                    num_nodes: n,
                    what: "the graph",
                });
            }
            if local.insert(u, i as u32).is_some() {
                return Err(ExplainError::InvalidValue {
                    what: "neighbourhood",
                    value: format!("node {u}"),
                    reason: "listed twice".into(),
                });
            }
        }
        let Some(&target_local) = local.get(&target) else {
            return Err(ExplainError::InvalidValue {
                what: "neighbourhood",
                value: format!("target {target}"),
                reason: "the neighbourhood must hold its target".into(),
            });
        };
        let radius = match verdict {
            Verdict::Exact => black_box.message_passing_layers().map(|l| l + 1),
            Verdict::Neighbourhood => None,
        };
        let mut nodes = neighbourhood.to_vec();
        if verdict == Verdict::Exact {
            let extra: Vec<u32> = match radius {
                Some(r) => ball(graph, target, r, &BTreeSet::new()),
                None => (0..n as u32).collect(),
            };
            for u in extra {
                if let std::collections::hash_map::Entry::Vacant(e) = local.entry(u) {
                    e.insert(nodes.len() as u32);
                    nodes.push(u);
                }
            }
        }
        let (edit, base) = match base {
            Some((local_edges, global)) => (
                EditGraph::from_edges(nodes.len(), local_edges),
                Some(Arc::new(global)),
            ),
            None => (
                EditGraph::from_edges(nodes.len(), &induced_edges(graph, &nodes, &local)),
                None,
            ),
        };
        let mut judge = Self {
            graph,
            black_box,
            target,
            verdict,
            radius,
            closed: verdict == Verdict::Neighbourhood,
            exact: None,
            nodes,
            local,
            target_local: target_local as usize,
            edit,
            delta: BTreeSet::new(),
            base,
            eval: Eval::Deferred,
            log_probs: LogProbs::new(0, black_box.num_classes(), Vec::new())?,
            stale: true,
        };
        if !defer {
            let (eval, log_probs) = evaluator(graph, black_box, &judge.nodes, &judge.edit.edges())?;
            (judge.eval, judge.log_probs, judge.stale) = (eval, log_probs, false);
            judge.checked()?;
        }
        Ok(judge)
    }

    /// The target (original id).
    pub fn target(&self) -> u32 {
        self.target
    }

    /// The graph the judge's edits apply to.
    pub fn graph(&self) -> &'a Graph {
        self.graph
    }

    /// The black box whose verdicts the judge takes.
    pub fn black_box(&self) -> &'a dyn BlackBox {
        self.black_box
    }

    /// Where the verdict is taken.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The evaluated nodes (original ids): the neighbourhood given to [`Judge::new`], then the
    /// rest of the receptive field as it grew.
    pub fn nodes(&self) -> &[u32] {
        &self.nodes
    }

    /// The target's position in [`Judge::nodes`].
    pub fn target_local(&self) -> usize {
        self.target_local
    }

    /// The black box's current log-probabilities, one row per node of [`Judge::nodes`].
    ///
    /// # Shapes
    /// - output: `[nodes().len(), num_classes]`
    pub fn log_probs(&self) -> &LogProbs {
        &self.log_probs
    }

    /// The target's current log-probabilities.
    ///
    /// # Shapes
    /// - output: `[num_classes]`
    pub fn target_row(&self) -> &[f32] {
        self.log_probs.row(self.target_local)
    }

    /// The target's current predicted label.
    pub fn label(&self) -> usize {
        self.log_probs.argmax(self.target_local)
    }

    /// Toggles each pair (original ids: an edge is removed, a non-edge added) and re-evaluates.
    ///
    /// Errors: [`ExplainError::NodeOutOfRange`] for an id outside the graph or, with
    /// [`Verdict::Neighbourhood`], outside the neighbourhood; [`ExplainError::InvalidValue`]
    /// for a self loop; the black box's errors.
    pub fn toggle(&mut self, pairs: &[(u32, u32)]) -> Result<()> {
        // Every pair is checked before anything changes: an error leaves the judge as it was.
        self.check_pairs(pairs)?;
        let changed = self.apply(pairs);
        if let Some(ExactTarget::Ball(inner)) = &mut self.exact
            && let Err(e) = inner.toggle(pairs)
        {
            // The inner judge holds the same edits and rebuilds itself on its next answer.
            self.stale = true;
            return Err(e);
        }
        if self.stale || matches!(self.eval, Eval::Deferred) {
            // Grown, or a failed evaluation left the evaluator behind the edited graph (or it
            // was never built).
            return self.rebuild();
        }
        if !changed.is_empty() {
            let edges = self.edit.edges();
            if !matches!(self.eval, Eval::TargetOnly | Eval::Deferred) {
                crate::oracle::count(1);
            }
            let lp = match &mut self.eval {
                Eval::Incremental(inc) => inc.update(&edges, &changed),
                Eval::Prepared(p) => p.log_probs(&edges),
                Eval::Plain(x) => self.black_box.log_probs(x, &edges),
                Eval::TargetOnly | Eval::Deferred => Ok(self.log_probs.clone()),
            };
            match lp {
                Ok(lp) => self.log_probs = lp,
                Err(e) => {
                    self.stale = true;
                    return Err(e.into());
                }
            }
        } else if self.exact.is_none() {
            return Ok(());
        }
        if let Err(e) = self.splice_target() {
            self.stale = true;
            return Err(e);
        }
        self.checked()
    }

    /// Records the toggles of `pairs` (checked) in the edited graph and grows the node set
    /// where an added edge widens the target's receptive field; returns the local ids of the
    /// endpoints inside the node set (whose rows the evaluator must update).
    fn apply(&mut self, pairs: &[(u32, u32)]) -> Vec<u32> {
        let mut grow = false;
        let mut changed = Vec::with_capacity(2 * pairs.len());
        for &(a, b) in pairs {
            let p = (a.min(b), a.max(b));
            let (la, lb) = (self.local.get(&a).copied(), self.local.get(&b).copied());
            if !self.delta.remove(&p) {
                self.delta.insert(p);
            }
            let added = self.delta.contains(&p) && !self.is_edge(p);
            grow |= added && self.radius.is_some();
            // A stale judge rebuilds its edited graph from `delta` (its node set may have grown
            // past the edited graph's).
            if let (Some(la), Some(lb), false) = (la, lb, self.stale) {
                self.edit.toggle(la as usize, lb as usize);
                changed.extend([la, lb]);
            }
        }
        if grow {
            let need = ball(
                self.graph,
                self.target,
                self.radius.unwrap_or(0),
                &self.delta,
            );
            let before = self.nodes.len();
            for u in need {
                if let std::collections::hash_map::Entry::Vacant(e) = self.local.entry(u) {
                    e.insert(self.nodes.len() as u32);
                    self.nodes.push(u);
                }
            }
            if self.nodes.len() > before {
                self.stale = true;
            }
        }
        changed
    }

    /// Whether this judge's answer is the model's output for its node set on the whole edited
    /// graph, so that the caller may evaluate it ([`Judge::toggle_deferred`]): exact verdicts
    /// on the judge's own node set (not [`Judge::frozen`], [`Judge::sampled`] or
    /// [`Judge::exact_target`]).
    pub fn takes_rows(&self) -> bool {
        self.verdict == Verdict::Exact
            && self.exact.is_none()
            && self.base.is_none()
            && !self.closed
    }

    /// Toggles each pair like [`Judge::toggle`] but leaves the evaluation to the caller, who
    /// then hands the model's rows for [`Judge::nodes`] (grown as needed) on the graph with
    /// [`Judge::toggled`] applied to [`Judge::take_rows`] — e.g. one batched pass on a device
    /// for many episodes' judges. The judge's own evaluator falls behind and is rebuilt if it
    /// is asked again ([`Judge::toggle`]).
    ///
    /// Errors: those of [`Judge::toggle`] for bad pairs, and [`ExplainError::InvalidValue`]
    /// when the judge does not take rows ([`Judge::takes_rows`]).
    pub fn toggle_deferred(&mut self, pairs: &[(u32, u32)]) -> Result<()> {
        if !self.takes_rows() {
            return Err(ExplainError::InvalidValue {
                what: "deferred verdict",
                value: format!("{:?}", self.verdict),
                reason: "only exact verdicts on the judge's own node set can be evaluated by the \
                         caller"
                    .into(),
            });
        }
        self.check_pairs(pairs)?;
        self.apply(pairs);
        self.stale = true;
        Ok(())
    }

    /// The pairs toggled relative to the original graph, `(min, max)` in original ids.
    pub fn toggled(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.delta.iter().copied()
    }

    /// Takes `rows` as the model's log-probabilities for [`Judge::nodes`] (in that order) on the
    /// edited graph, after [`Judge::toggle_deferred`].
    ///
    /// Errors: [`ExplainError::OutputShape`] for a wrong number of rows or classes,
    /// [`ExplainError::NanOutput`] for a NaN.
    pub fn take_rows(&mut self, rows: LogProbs) -> Result<()> {
        crate::oracle::count(1);
        let old = std::mem::replace(&mut self.log_probs, rows);
        let checked = self.checked();
        if checked.is_err() {
            self.log_probs = old;
        }
        checked
    }

    /// Writes the target's exact row ([`ExactTarget`]) over its row of the node set's output.
    fn splice_target(&mut self) -> Result<()> {
        let row = match &self.exact {
            None => return Ok(()),
            Some(ExactTarget::Bound(b)) => {
                crate::oracle::count(1);
                let toggled: Vec<(u32, u32)> = self.delta.iter().copied().collect();
                b.log_probs_at_edited(self.target, &toggled)?
            }
            Some(ExactTarget::Ball(inner)) => inner.target_row().to_vec(),
        };
        let c = self.black_box.num_classes();
        if row.len() != c || self.log_probs.num_classes() != c {
            return Err(ExplainError::OutputShape {
                expected_nodes: self.nodes.len(),
                expected_classes: c,
                got_nodes: self.log_probs.num_nodes(),
                got_classes: row.len(),
            });
        }
        let mut data =
            std::mem::replace(&mut self.log_probs, LogProbs::new(0, c, Vec::new())?).into_vec();
        data[self.target_local * c..(self.target_local + 1) * c].copy_from_slice(&row);
        self.log_probs = LogProbs::new(self.nodes.len(), c, data)?;
        Ok(())
    }

    /// The errors [`Judge::toggle`] reports for `pairs`, found before any change.
    fn check_pairs(&self, pairs: &[(u32, u32)]) -> Result<()> {
        let n = self.graph.num_nodes();
        for &(a, b) in pairs {
            if let Some(&x) = [a, b].iter().find(|&&x| x as usize >= n) {
                return Err(ExplainError::NodeOutOfRange {
                    node: x,
                    num_nodes: n,
                    what: "the graph",
                });
            }
            if a == b {
                return Err(ExplainError::InvalidValue {
                    what: "edit",
                    value: format!("({a}, {b})"),
                    reason: "a self loop is not an edge".into(),
                });
            }
            let (la, lb) = (self.local.get(&a).copied(), self.local.get(&b).copied());
            if self.closed
                && let Some(&x) = [(a, la), (b, lb)]
                    .iter()
                    .find_map(|(x, l)| l.is_none().then_some(x))
            {
                return Err(ExplainError::NodeOutOfRange {
                    node: x,
                    num_nodes: self.nodes.len(),
                    what: "the target's neighbourhood",
                });
            }
        }
        Ok(())
    }

    /// Moves to the graph with exactly the edits `edits` applied, in order, to the original
    /// graph (a deletion removes its pair, an addition inserts it), and re-evaluates only what
    /// differs from the current edits. Same errors as [`Judge::toggle`].
    pub fn set_edits(&mut self, edits: &[Edit]) -> Result<()> {
        let mut present: HashMap<(u32, u32), bool> = HashMap::with_capacity(edits.len());
        for e in edits {
            present.insert((e.u.min(e.w), e.u.max(e.w)), e.kind == EditKind::Add);
        }
        let mut want = BTreeSet::new();
        for (&p, &now) in &present {
            if p.0 != p.1 && (p.1 as usize) < self.graph.num_nodes() {
                if now != self.is_edge(p) {
                    want.insert(p);
                }
            } else {
                want.insert(p); // a self loop or out of range: `toggle` reports it
            }
        }
        let toggles: Vec<(u32, u32)> = self.delta.symmetric_difference(&want).copied().collect();
        self.toggle(&toggles)
    }

    /// The target's label with exactly `edits` applied ([`Judge::set_edits`]).
    pub fn label_with(&mut self, edits: &[Edit]) -> Result<usize> {
        self.set_edits(edits)?;
        Ok(self.label())
    }

    /// Whether `p` is an edge of the unedited graph (or of the frozen neighbourhood).
    fn is_edge(&self, p: (u32, u32)) -> bool {
        match &self.base {
            Some(b) => b.contains(&p),
            None => is_edge(self.graph, p),
        }
    }

    /// Re-binds the black box to the (grown) node set and evaluates it whole.
    fn rebuild(&mut self) -> Result<()> {
        if let Eval::TargetOnly = self.eval {
            self.splice_target()?;
            self.stale = false;
            return self.checked();
        }
        // The frozen neighbourhood's own edges (a fan-out sample may hold fewer than the
        // induced ones), else the graph's.
        let mut edges = match &self.base {
            Some(base) => base
                .iter()
                .filter_map(|&(a, b)| {
                    let (la, lb) = (*self.local.get(&a)?, *self.local.get(&b)?);
                    Some((la.min(lb), la.max(lb)))
                })
                .collect(),
            None => induced_edges(self.graph, &self.nodes, &self.local),
        };
        let mut set: HashSet<(u32, u32)> = edges.iter().copied().collect();
        for &(a, b) in &self.delta {
            if let (Some(&la), Some(&lb)) = (self.local.get(&a), self.local.get(&b)) {
                let l = (la.min(lb), la.max(lb));
                if !set.remove(&l) {
                    set.insert(l);
                }
            }
        }
        edges.clear();
        edges.extend(set);
        self.edit = EditGraph::from_edges(self.nodes.len(), &edges);
        self.stale = true;
        let (eval, lp) = evaluator(self.graph, self.black_box, &self.nodes, &self.edit.edges())?;
        self.eval = eval;
        self.log_probs = lp;
        if let Some(ExactTarget::Ball(inner)) = &mut self.exact
            && inner.stale
        {
            inner.rebuild()?;
        }
        self.splice_target()?;
        self.stale = false;
        self.checked()
    }

    /// Checks the current output's shape and values.
    fn checked(&self) -> Result<()> {
        let lp = &self.log_probs;
        let (n, c) = (self.nodes.len(), self.black_box.num_classes());
        check_classes(self.black_box)?;
        if lp.num_nodes() != n || lp.num_classes() != c {
            return Err(ExplainError::OutputShape {
                expected_nodes: n,
                expected_classes: c,
                got_nodes: lp.num_nodes(),
                got_classes: lp.num_classes(),
            });
        }
        if let Some(i) = lp.as_slice().iter().position(|x| x.is_nan()) {
            return Err(ExplainError::NanOutput {
                target: self.target,
                node: self.nodes[i / c],
            });
        }
        Ok(())
    }
}

/// What every verdict on `target` needs: the target inside the graph and features of the black
/// box's dimension.
///
/// Errors: [`ExplainError::TargetOutOfRange`], [`ExplainError::FeatureDimension`].
pub fn check_inputs(graph: &Graph, black_box: &dyn BlackBox, target: u32) -> Result<()> {
    let n = graph.num_nodes();
    if target as usize >= n {
        return Err(ExplainError::TargetOutOfRange {
            target,
            num_nodes: n,
        });
    }
    let d = graph.features().dim();
    if d != black_box.input_dim() {
        return Err(ExplainError::FeatureDimension {
            expected: black_box.input_dim(),
            got: d,
        });
    }
    Ok(())
}

/// The best evaluator the black box offers for the node set `nodes` of `graph`, and its output
/// on `edges` (local ids).
fn evaluator<'a>(
    graph: &Graph,
    black_box: &'a dyn BlackBox,
    nodes: &[u32],
    edges: &[(u32, u32)],
) -> Result<(Eval<'a>, LogProbs)> {
    crate::oracle::count(1);
    if let Some(inc) = black_box.incremental_rows(graph.features(), nodes, edges)? {
        let lp = inc.log_probs()?;
        return Ok((Eval::Incremental(inc), lp));
    }
    if let Some(p) = black_box.prepare_rows(graph.features(), nodes)? {
        let p: Arc<dyn PreparedBlackBox + 'a> = Arc::from(p);
        let lp = p.log_probs(edges)?;
        return Ok((Eval::Prepared(p), lp));
    }
    let x = Arc::new(graph.features().gather(nodes));
    let lp = black_box.log_probs(&x, edges)?;
    Ok((Eval::Plain(x), lp))
}

/// A black box that declares no class cannot classify anything: a typed error instead of an
/// empty row's argmax (every verdict calls it).
pub fn check_classes(black_box: &dyn BlackBox) -> Result<()> {
    match black_box.num_classes() {
        0 => Err(ExplainError::Model(
            induce_models::ModelError::InvalidInput(
                "the black box declares 0 classes: a classifier needs at least one".into(),
            ),
        )),
        _ => Ok(()),
    }
}

/// The black box's label for `target` on the WHOLE graph with `edits` applied, checked
/// independently of [`Judge`]: the edits are applied to a copy of the edge list and the black
/// box runs once on the whole graph (no neighbourhood, no incremental evaluation). A black box
/// bound to `graph` ([`BlackBox::graph_binding`]) answers from scratch on the target's receptive
/// field in the edited graph instead ([`GraphBinding::log_probs_at`]: the same function, no
/// cached layer, no whole-graph pass).
///
/// The edits are applied in order as set operations on the edge set: adding an edge that is
/// present, or deleting one that is absent, changes nothing, and a self-loop edit is skipped
/// (graphs are simple). It answers "what does the model predict after these edits", not
/// "are these edits a well-formed explanation" (every explainer here emits each pair once,
/// additions of absent and deletions of present edges).
///
/// Errors: [`ExplainError::NodeOutOfRange`] for an edit outside the graph, a black box with no
/// class, the black box's errors.
pub fn whole_graph_label(
    graph: &Graph,
    black_box: &dyn BlackBox,
    target: u32,
    edits: &[Edit],
) -> Result<usize> {
    let n = graph.num_nodes();
    if target as usize >= n {
        return Err(ExplainError::TargetOutOfRange {
            target,
            num_nodes: n,
        });
    }
    if let Some(&x) = edits
        .iter()
        .flat_map(|e| [e.u, e.w])
        .collect::<Vec<_>>()
        .iter()
        .find(|&&x| x as usize >= n)
    {
        return Err(ExplainError::NodeOutOfRange {
            node: x,
            num_nodes: n,
            what: "the graph",
        });
    }
    check_classes(black_box)?;
    if let Some(binding) = black_box.graph_binding(graph) {
        // The pairs whose presence the edits change, in edit order (the last edit of a pair
        // decides it).
        let mut present: Vec<((u32, u32), bool)> = Vec::new();
        for e in edits.iter().filter(|e| e.u != e.w) {
            let p = (e.u.min(e.w), e.u.max(e.w));
            present.retain(|(q, _)| *q != p);
            present.push((p, e.kind == EditKind::Add));
        }
        let toggled: Vec<(u32, u32)> = present
            .into_iter()
            .filter(|&(p, now)| now != is_edge(graph, p))
            .map(|(p, _)| p)
            .collect();
        let row = binding.log_probs_at(target, &toggled)?;
        let (c, got) = (black_box.num_classes(), row.len());
        let lp = LogProbs::new(1, c, row).map_err(|_| ExplainError::OutputShape {
            expected_nodes: 1,
            expected_classes: c,
            got_nodes: 1,
            got_classes: got,
        })?;
        return Ok(lp.argmax(0));
    }
    let mut edges: BTreeSet<(u32, u32)> = graph.edges().into_iter().collect();
    for e in edits {
        let p = (e.u.min(e.w), e.u.max(e.w));
        match e.kind {
            EditKind::Add => edges.insert(p),
            EditKind::Delete => edges.remove(&p),
        };
    }
    let edges: Vec<(u32, u32)> = edges.into_iter().filter(|p| p.0 != p.1).collect();
    let lp = black_box.log_probs(graph.features(), &edges)?;
    if lp.num_nodes() != n {
        return Err(ExplainError::OutputShape {
            expected_nodes: n,
            expected_classes: black_box.num_classes(),
            got_nodes: lp.num_nodes(),
            got_classes: lp.num_classes(),
        });
    }
    Ok(lp.argmax(target as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::testutil::DegreeAtLeast;

    /// Class 1 iff the SUM of the degrees of a node's neighbours is at least 5: the output
    /// reads one hop of edges and the degrees of those neighbours (L = 1).
    struct NeighbourDegrees;
    impl BlackBox for NeighbourDegrees {
        fn input_dim(&self) -> usize {
            1
        }
        fn num_classes(&self) -> usize {
            2
        }
        fn message_passing_layers(&self) -> Option<u32> {
            Some(1)
        }
        fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> induce_models::Result<LogProbs> {
            let n = x.num_nodes();
            let g = EditGraph::from_edges(n, edges);
            let data = (0..n).flat_map(|u| {
                let s: usize = g.neighbors(u).iter().map(|&w| g.degree(w as usize)).sum();
                if s >= 5 { [-2.0, -0.2] } else { [-0.2, -2.0] }
            });
            LogProbs::new(n, 2, data.collect())
        }
    }

    /// The path 0 ─ 1 ─ 2 ─ 3 ─ 4 ─ 5 ─ 6.
    fn path() -> Graph {
        let e: Vec<(u32, u32)> = (0..6).map(|i| (i, i + 1)).collect();
        Graph::from_edges(7, &e, Features::constant(7, 1, 1.0), vec![0; 7]).unwrap()
    }

    #[test]
    fn exact_verdict_grows_with_an_addition_and_matches_the_whole_graph() {
        let g = path();
        let bb = NeighbourDegrees;
        // Target 0 on the 1-hop neighbourhood {0, 1}: the exact set starts as the 2-hop ball.
        let mut exact = Judge::new(&g, &bb, 0, &[0, 1], Verdict::Exact).unwrap();
        assert_eq!(exact.nodes(), &[0, 1, 2]);
        assert_eq!(exact.label(), 0); // deg(1) = 2
        // Add (0, 4): 0's neighbours are 1 (deg 2) and 4 (deg 3 now): sum 5 → class 1. The set
        // grows by 4's neighbours 3 and 5 (their edges give 4's degree).
        let edits = [Edit::add(0, 4)];
        exact.set_edits(&edits).unwrap();
        assert_eq!(exact.nodes(), &[0, 1, 2, 4, 3, 5]);
        assert_eq!(exact.label(), 1);
        assert_eq!(whole_graph_label(&g, &bb, 0, &edits).unwrap(), 1);
        // The frozen neighbourhood misses 4 entirely and cannot even express the edit.
        let mut frozen = Judge::new(&g, &bb, 0, &[0, 1], Verdict::Neighbourhood).unwrap();
        assert!(matches!(
            frozen.set_edits(&edits),
            Err(ExplainError::NodeOutOfRange { node: 4, .. })
        ));
        // On the 2-hop neighbourhood {0, 1, 2} it can, but misjudges: after adding (0, 2), node
        // 2 has degree 3 in the graph (sum 2 + 3 = 5, class 1) and 2 in the frozen set (class 0).
        let mut frozen = Judge::new(&g, &bb, 0, &[0, 1, 2], Verdict::Neighbourhood).unwrap();
        frozen.toggle(&[(0, 2)]).unwrap();
        assert_eq!(frozen.label(), 0);
        assert_eq!(
            whole_graph_label(&g, &bb, 0, &[Edit::add(0, 2)]).unwrap(),
            1
        );
        let mut exact = Judge::new(&g, &bb, 0, &[0, 1, 2], Verdict::Exact).unwrap();
        exact.toggle(&[(0, 2)]).unwrap();
        assert_eq!(exact.label(), 1);
    }

    #[test]
    fn undoing_edits_returns_to_the_original_output_and_deletions_never_grow() {
        let g = path();
        let bb = NeighbourDegrees;
        let mut j = Judge::new(&g, &bb, 2, &[1, 2, 3], Verdict::Exact).unwrap();
        let start = j.log_probs().row(j.target_local()).to_vec();
        let n0 = j.nodes().len();
        j.set_edits(&[Edit::delete(2, 3), Edit::delete(0, 1)])
            .unwrap();
        assert_eq!(j.nodes().len(), n0);
        j.set_edits(&[Edit::add(2, 6)]).unwrap();
        assert!(j.nodes().contains(&6) && j.nodes().contains(&5));
        assert_eq!(
            j.label(),
            whole_graph_label(&g, &bb, 2, &[Edit::add(2, 6)]).unwrap()
        );
        j.set_edits(&[]).unwrap();
        assert_eq!(j.target_row(), &start[..]);
        // A deletion followed by the re-addition of the same pair is no edit at all.
        j.set_edits(&[Edit::delete(2, 3), Edit::add(2, 3)]).unwrap();
        assert_eq!(j.target_row(), &start[..]);
    }

    /// Deferred toggles: the caller's rows (here the black box's own, on the induced edited
    /// subgraph of the grown node set) give the answer a plain toggle gives; after them, a plain
    /// toggle rebuilds the evaluator and agrees again.
    #[test]
    fn deferred_toggles_take_the_callers_rows() {
        let g = path();
        let bb = NeighbourDegrees;
        let mut plain = Judge::new(&g, &bb, 0, &[0, 1], Verdict::Exact).unwrap();
        let mut deferred = plain.clone();
        assert!(deferred.takes_rows());
        for pair in [(0, 4), (1, 2), (0, 4)] {
            plain.toggle(&[pair]).unwrap();
            deferred.toggle_deferred(&[pair]).unwrap();
            assert_eq!(deferred.nodes(), plain.nodes(), "grown alike");
            // The model on the subgraph the node set induces, with the toggles applied.
            let nodes = deferred.nodes().to_vec();
            let local: HashMap<u32, u32> = nodes
                .iter()
                .enumerate()
                .map(|(i, &u)| (u, i as u32))
                .collect();
            let mut set: BTreeSet<(u32, u32)> = g.edges().into_iter().collect();
            for p in deferred.toggled() {
                if !set.remove(&p) {
                    set.insert(p);
                }
            }
            let edges: Vec<(u32, u32)> = set
                .into_iter()
                .filter_map(|(a, b)| Some((*local.get(&a)?, *local.get(&b)?)))
                .collect();
            let rows = bb
                .log_probs(&Features::constant(nodes.len(), 1, 1.0), &edges)
                .unwrap();
            deferred.take_rows(rows).unwrap();
            assert_eq!(deferred.log_probs(), plain.log_probs());
            assert_eq!(deferred.label(), plain.label());
        }
        // Wrong shapes are refused and leave the answer as it was.
        let before = deferred.log_probs().clone();
        let bad = LogProbs::new(1, 2, vec![0.0, 0.0]).unwrap();
        assert!(matches!(
            deferred.take_rows(bad),
            Err(ExplainError::OutputShape { .. })
        ));
        assert_eq!(deferred.log_probs(), &before);
        // The evaluator catches up when asked again.
        plain.toggle(&[(2, 3)]).unwrap();
        deferred.toggle(&[(2, 3)]).unwrap();
        assert_eq!(deferred.log_probs(), plain.log_probs());
        // A frozen neighbourhood's verdicts cannot be deferred.
        let mut frozen = Judge::new(&g, &bb, 0, &[0, 1, 2], Verdict::Neighbourhood).unwrap();
        assert!(!frozen.takes_rows());
        assert!(matches!(
            frozen.toggle_deferred(&[(0, 2)]),
            Err(ExplainError::InvalidValue { .. })
        ));
    }

    /// A black box that fails while `fail` is set, else class 1 for a node with an edge.
    struct Flaky {
        fail: std::sync::atomic::AtomicBool,
    }
    impl BlackBox for Flaky {
        fn input_dim(&self) -> usize {
            1
        }
        fn num_classes(&self) -> usize {
            2
        }
        fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> induce_models::Result<LogProbs> {
            if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(induce_models::ModelError::InvalidInput("flaky".into()));
            }
            let mut deg = vec![0; x.num_nodes()];
            for &(u, w) in edges {
                deg[u as usize] += 1;
                deg[w as usize] += 1;
            }
            let d = deg
                .iter()
                .flat_map(|&d| if d >= 1 { [-2.0, -0.2] } else { [-0.2, -2.0] });
            LogProbs::new(x.num_nodes(), 2, d.collect())
        }
    }

    /// A frozen judge on a sample with fewer edges than the induced ones rebuilds, after a
    /// failed evaluation, on the sample's edges (not the graph's).
    #[test]
    fn a_frozen_judge_rebuilds_on_its_own_edges() {
        // The triangle 0 ─ 1 ─ 2 ─ 0 plus 2 ─ 3; the sample around 0 drops (1, 2).
        let g = Graph::from_edges(
            4,
            &[(0, 1), (0, 2), (1, 2), (2, 3)],
            Features::constant(4, 1, 1.0),
            vec![0; 4],
        )
        .unwrap();
        let sub = induce_graph::Subgraph {
            target: 0,
            target_local: 0,
            nodes: vec![0, 1, 2],
            hops: vec![0, 1, 1],
            edges: vec![(0, 1), (0, 2)],
        };
        let bb = Flaky { fail: false.into() };
        let mut judge = Judge::frozen(&g, &bb, &sub).unwrap();
        let want = {
            let mut fresh = Judge::frozen(&g, &bb, &sub).unwrap();
            fresh.toggle(&[(0, 1)]).unwrap();
            fresh.toggle(&[(0, 2)]).unwrap();
            fresh.log_probs().clone()
        };
        bb.fail.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(judge.toggle(&[(0, 1)]).is_err());
        bb.fail.store(false, std::sync::atomic::Ordering::SeqCst);
        judge.toggle(&[(0, 2)]).unwrap();
        // Nodes 1 and 2 have no edge left in the edited sample (class 0); with the graph's
        // (1, 2) brought back both would have one (class 1).
        assert_eq!(judge.log_probs(), &want);
    }

    #[test]
    fn a_black_box_without_layers_is_judged_on_the_whole_graph() {
        let g = path();
        let j = Judge::new(&g, &DegreeAtLeast(2), 3, &[3], Verdict::Exact).unwrap();
        assert_eq!(j.nodes().len(), 7);
        assert_eq!(j.nodes()[0], 3);
        assert_eq!(j.target_local(), 0);
        let j = Judge::new(&g, &DegreeAtLeast(2), 3, &[3], Verdict::Neighbourhood).unwrap();
        assert_eq!(j.nodes(), &[3]);
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        let g = path();
        let bb = NeighbourDegrees;
        assert!(matches!(
            Judge::new(&g, &bb, 9, &[9], Verdict::Exact),
            Err(ExplainError::TargetOutOfRange { target: 9, .. })
        ));
        assert!(matches!(
            Judge::new(&g, &bb, 0, &[1], Verdict::Exact),
            Err(ExplainError::InvalidValue { .. })
        ));
        assert!(matches!(
            Judge::new(&g, &bb, 0, &[0, 0], Verdict::Exact),
            Err(ExplainError::InvalidValue { .. })
        ));
        let mut j = Judge::new(&g, &bb, 0, &[0, 1], Verdict::Exact).unwrap();
        assert!(matches!(
            j.toggle(&[(0, 70)]),
            Err(ExplainError::NodeOutOfRange { node: 70, .. })
        ));
        assert!(matches!(
            j.toggle(&[(2, 2)]),
            Err(ExplainError::InvalidValue { .. })
        ));
        assert!(matches!(
            whole_graph_label(&g, &bb, 0, &[Edit::add(0, 70)]),
            Err(ExplainError::NodeOutOfRange { node: 70, .. })
        ));
        // A refused edit list changes nothing: the next query starts from the same state.
        assert!(j.set_edits(&[Edit::add(0, 4), Edit::add(3, 3)]).is_err());
        assert_eq!(j.nodes(), &[0, 1, 2]);
        j.set_edits(&[Edit::add(0, 4)]).unwrap();
        assert_eq!(j.label(), 1);
        assert_eq!(j.nodes(), &[0, 1, 2, 4, 3, 5]);
    }

    /// [`NeighbourDegrees`] bound to one graph: every answer from a whole-graph pass on the
    /// toggled graph (the slow truth the fast bindings must equal).
    struct BoundDegrees;
    struct WholePass<'g>(&'g Graph);
    impl GraphBinding for WholePass<'_> {
        fn log_probs_at(
            &self,
            node: u32,
            toggled: &[(u32, u32)],
        ) -> induce_models::Result<Vec<f32>> {
            let mut e: BTreeSet<(u32, u32)> = self.0.edges().into_iter().collect();
            for &(a, b) in toggled {
                let p = (a.min(b), a.max(b));
                if !e.remove(&p) {
                    e.insert(p);
                }
            }
            let e: Vec<(u32, u32)> = e.into_iter().collect();
            let lp = NeighbourDegrees.log_probs(self.0.features(), &e)?;
            Ok(lp.row(node as usize).to_vec())
        }
    }
    impl BlackBox for BoundDegrees {
        fn input_dim(&self) -> usize {
            1
        }
        fn num_classes(&self) -> usize {
            2
        }
        fn message_passing_layers(&self) -> Option<u32> {
            Some(1)
        }
        fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> induce_models::Result<LogProbs> {
            NeighbourDegrees.log_probs(x, edges)
        }
        fn bind_graph<'s>(
            &'s self,
            graph: &'s Graph,
        ) -> induce_models::Result<Option<Box<dyn GraphBinding + 's>>> {
            Ok(Some(Box::new(WholePass(graph))))
        }
    }

    /// On a sample, the target's row is the whole edited graph's whether it comes from a binding
    /// or from a second judge on the receptive field, the other rows are the sample's, and a
    /// target-only judge agrees with both for edits anywhere.
    #[test]
    fn sampled_and_target_only_judges_take_the_target_from_the_whole_graph() {
        //  0 ─ 1 ─ 2 ─ 3 ─ 4 ─ 5 ─ 6, plus 1 ─ 5 and 2 ─ 6
        let mut e: Vec<(u32, u32)> = (0..6).map(|i| (i, i + 1)).collect();
        e.extend([(1, 5), (2, 6)]);
        let g = Graph::from_edges(7, &e, Features::constant(7, 1, 1.0), vec![0; 7]).unwrap();
        let bound = induce_models::BoundBlackBox::new(&BoundDegrees, &g).unwrap();
        assert!(bound.graph_binding(&g).is_some());
        let sub = induce_graph::k_hop(&g, 1, 1).unwrap(); // {0, 1, 2, 5}
        let mut fast = Judge::sampled(&g, &bound, &sub).unwrap();
        let mut slow = Judge::sampled(&g, &NeighbourDegrees, &sub).unwrap();
        let mut only = Judge::exact_target(&g, &bound, 1).unwrap();
        assert_eq!(only.nodes(), &[1]);
        let cases = [
            vec![],
            vec![Edit::delete(1, 2)],
            vec![Edit::delete(1, 2), Edit::add(0, 5)],
            vec![Edit::add(0, 2), Edit::delete(1, 5)],
            vec![Edit::add(0, 2)],
        ];
        for edits in &cases {
            fast.set_edits(edits).unwrap();
            slow.set_edits(edits).unwrap();
            only.set_edits(edits).unwrap();
            let want = whole_graph_label(&g, &NeighbourDegrees, 1, edits).unwrap();
            assert_eq!(whole_graph_label(&g, &bound, 1, edits).unwrap(), want);
            assert_eq!(
                (fast.label(), slow.label(), only.label()),
                (want, want, want)
            );
            assert_eq!(fast.log_probs(), slow.log_probs(), "{edits:?}");
            // Other rows: the black box on the edited sample alone.
            let mut now: Vec<(u32, u32)> = sub.edges.clone();
            for x in edits {
                let (a, b) = (
                    sub.local_of(x.u).unwrap() as u32,
                    sub.local_of(x.w).unwrap() as u32,
                );
                let p = (a.min(b), a.max(b));
                match now.iter().position(|&q| q == p) {
                    Some(i) => {
                        now.remove(i);
                    }
                    None => now.push(p),
                }
            }
            let local = NeighbourDegrees.log_probs(&sub.features(&g), &now).unwrap();
            for v in (0..sub.num_nodes()).filter(|&v| v != sub.target_local) {
                assert_eq!(fast.log_probs().row(v), local.row(v), "{edits:?}, row {v}");
            }
        }
        // A target-only judge takes pairs anywhere; a sampled one only inside its sample.
        only.set_edits(&[Edit::add(1, 4)]).unwrap();
        assert_eq!(
            only.label(),
            whole_graph_label(&g, &NeighbourDegrees, 1, &[Edit::add(1, 4)]).unwrap()
        );
        assert!(matches!(
            fast.set_edits(&[Edit::add(1, 4)]),
            Err(ExplainError::NodeOutOfRange { node: 4, .. })
        ));
        assert!(matches!(
            only.toggle(&[(1, 70)]),
            Err(ExplainError::NodeOutOfRange { node: 70, .. })
        ));
    }
}
