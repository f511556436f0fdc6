//! Building a [`Judge`] ([`Judge::new`], [`Judge::pending`], [`Judge::sampled`], ...) and
//! reading its current answer.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use induce_graph::{EditGraph, Graph};
use induce_models::{BlackBox, LogProbs};

use super::checks::{check_inputs, evaluator};
use super::{Eval, ExactTarget, FrozenEdges, Judge, Verdict};
use crate::error::{ExplainError, Result};
use crate::field::{ball, induced_edges};

/// A [`Judge`] whose first answer the caller gives ([`Judge::pending`]).
///
/// ```
/// use induce_explain::Judge;
/// use induce_graph::{Features, Graph};
/// use induce_models::BlackBox;
/// use induce_models::testing::DegreeAtLeast;
///
/// //  0 ─ 1   2
/// let g = Graph::from_edges(3, &[(0, 1)], Features::constant(3, 1, 1.0), vec![0; 3]).unwrap();
/// let pending = Judge::pending(&g, &DegreeAtLeast(1), 0, &[0]).unwrap();
/// assert_eq!(pending.nodes(), &[0, 1]); // the target and its receptive field (1 hop)
/// // The caller evaluates the model on the subgraph induced by those nodes: 0 ─ 1.
/// let rows = DegreeAtLeast(1).log_probs(&Features::constant(2, 1, 1.0), &[(0, 1)]).unwrap();
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
    /// use induce_models::BlackBox;
    /// use induce_models::testing::DegreeAtLeast;
    ///
    /// //  0 ─ 1 ─ 2 ─ 3,  target 1, the search sees {0, 1, 2}
    /// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
    ///     vec![0; 4]).unwrap();
    /// let sub = k_hop(&g, 1, 1).unwrap();
    /// let mut judge = Judge::sampled(&g, &DegreeAtLeast(2), &sub).unwrap();
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
            feature_edits: Arc::default(),
            rows: Arc::default(),
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
            feature_edits: Arc::default(),
            rows: Arc::default(),
            eval: Eval::Deferred,
            log_probs: LogProbs::new(0, black_box.num_classes(), Vec::new())?,
            stale: true,
        };
        if !defer {
            let edges = judge.edit.edges();
            let (eval, log_probs) = evaluator(graph, black_box, &judge.nodes, &edges, &judge.rows)?;
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
}
