//! What the search methods (`greedy`, `exact`) share: InduCE's action space of a target, the
//! black box's exact verdict on any set of its actions ([`TargetOracle`]), and which actions can
//! change the target's prediction at all ([`Reach`]).
//!
//! The action space is the paper's: every deletion of an edge of the target's `h`-hop
//! neighbourhood and every addition `(target, v)` for a node `v` of it that is not already a
//! neighbour; with [`Additions::Graph`] also additions to nodes outside the neighbourhood, chosen
//! from the black box's predictions.
//!
//! ```text
//!   target 0, h = 2:   0 ─ 1 ─ 2 ─ 3       additions (0,2); deletions (0,1) (1,2)
//!                                          (3 lies 3 hops away: outside the neighbourhood)
//! ```

use std::collections::HashSet;
use std::sync::Mutex;

use induce_explain::{Edit, EditKind, ExplainError, Judge, Locked, Result, Verdict, oracle};
use induce_graph::{Features, Graph, Subgraph, k_hop};
use induce_models::{BlackBox, GraphBinding, StateBinding};
use serde::{Deserialize, Serialize};

/// Where a search's additions `(target, v)` may go.
///
/// Serialised as `"ball"` / `"graph"`.
///
/// ```
/// use induce_baselines::action_space::Additions;
/// assert_eq!(Additions::default(), Additions::Ball);
/// assert_eq!("graph".parse::<Additions>().unwrap(), Additions::Graph);
/// assert!("everywhere".parse::<Additions>().is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Additions {
    /// To the nodes of the target's neighbourhood (the paper's action space; the default).
    #[default]
    Ball,
    /// Also to nodes anywhere in the graph: the `graph_candidates` nodes outside the
    /// neighbourhood that the black box predicts most confidently as a class other than the
    /// target's (on the unedited graph), taken in turn from each other class. A target in a
    /// tiny component can then be explained.
    Graph,
}

impl std::str::FromStr for Additions {
    type Err = ExplainError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "ball" => Ok(Additions::Ball),
            "graph" => Ok(Additions::Graph),
            other => Err(ExplainError::InvalidValue {
                what: "additions",
                value: other.into(),
                reason: "expected ball or graph".into(),
            }),
        }
    }
}

impl std::fmt::Display for Additions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Additions::Ball => "ball",
            Additions::Graph => "graph",
        })
    }
}

/// Every node's predicted class and its log-probability on one unedited graph: what
/// [`Additions::Graph`] picks its candidates from. Computed once per graph and kept.
#[derive(Debug, Default)]
pub struct GraphPredictions {
    cached: Mutex<Option<CachedPredictions>>,
}

/// The graph's size (nodes, edges) the predictions were taken on, and the predictions.
type CachedPredictions = (usize, usize, std::sync::Arc<Vec<(usize, f32)>>);

impl GraphPredictions {
    /// `graph`'s predictions by `black_box` (one whole-graph pass the first time; recomputed
    /// when asked about a graph of another size).
    pub fn of(
        &self,
        graph: &Graph,
        black_box: &dyn BlackBox,
    ) -> Result<std::sync::Arc<Vec<(usize, f32)>>> {
        let key = (graph.num_nodes(), graph.num_edges());
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((n, m, p)) = cached.as_ref()
            && (*n, *m) == key
        {
            return Ok(p.clone());
        }
        let lp = black_box.log_probs(graph.features(), &graph.edges())?;
        let p: Vec<(usize, f32)> = (0..graph.num_nodes())
            .map(|v| {
                let c = lp.argmax(v);
                (c, lp.row(v)[c])
            })
            .collect();
        let p = std::sync::Arc::new(p);
        *cached = Some((key.0, key.1, p.clone()));
        Ok(p)
    }
}

/// A target's candidate edits: additions `(target, v)` by ascending `v` (the neighbourhood's,
/// then with [`Additions::Graph`] the chosen outside nodes), then the neighbourhood's edges as
/// deletions `(u, w)`, `u < w`, ascending, in original ids.
#[derive(Debug, Clone)]
pub struct ActionSpace {
    /// The target (original id).
    pub target: u32,
    /// The `h`-hop neighbourhood the actions range over.
    pub sub: Subgraph,
    /// The actions, in the order above.
    pub actions: Vec<Edit>,
}

impl ActionSpace {
    /// The action space of `target` over its `hops`-hop neighbourhood, with additions also to
    /// `outside` (nodes beyond the neighbourhood, e.g. [`ActionSpace::outside_candidates`]).
    ///
    /// Errors: [`ExplainError::TargetOutOfRange`]; [`ExplainError::NoCandidate`] when there is
    /// nothing to edit (an isolated node with no addition allowed).
    ///
    /// ```
    /// use induce_baselines::action_space::ActionSpace;
    /// use induce_explain::Edit;
    /// use induce_graph::{Features, Graph};
    /// //  0 ─ 1 ─ 2 ─ 3
    /// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
    ///     vec![0; 4]).unwrap();
    /// let s = ActionSpace::new(&g, 0, 2, &[]).unwrap();
    /// assert_eq!(s.actions, [Edit::add(0, 2), Edit::delete(0, 1), Edit::delete(1, 2)]);
    /// let wide = ActionSpace::new(&g, 0, 2, &[3]).unwrap();
    /// assert_eq!(wide.actions[1], Edit::add(0, 3));
    /// ```
    pub fn new(graph: &Graph, target: u32, hops: u32, outside: &[u32]) -> Result<Self> {
        if target as usize >= graph.num_nodes() {
            return Err(ExplainError::TargetOutOfRange {
                target,
                num_nodes: graph.num_nodes(),
            });
        }
        let sub = k_hop(graph, target, hops)?;
        let mut actions = Vec::new();
        let mut add_to: Vec<u32> = sub
            .nodes
            .iter()
            .copied()
            .filter(|&v| v != target && !graph.has_edge(target, v))
            .collect();
        let inside = add_to.len();
        add_to.extend(
            outside
                .iter()
                .copied()
                .filter(|&v| v != target && sub.local_of(v).is_none()),
        );
        add_to[inside..].sort_unstable();
        add_to.dedup();
        actions.extend(add_to.into_iter().map(|v| Edit::add(target, v)));
        for &(a, b) in &sub.edges {
            let (u, w) = (sub.global_of(a as usize), sub.global_of(b as usize));
            actions.push(Edit::delete(u.min(w), u.max(w)));
        }
        if actions.is_empty() {
            return Err(ExplainError::NoCandidate { target });
        }
        Ok(Self {
            target,
            sub,
            actions,
        })
    }

    /// The space without the actions `locked` forbids (an endpoint or the pair locked).
    ///
    /// Errors: [`ExplainError::NoCandidate`] when nothing is left.
    ///
    /// ```
    /// use induce_baselines::action_space::ActionSpace;
    /// use induce_explain::{Edit, Locked};
    /// use induce_graph::{Features, Graph};
    /// //  0 ─ 1 ─ 2 ─ 3
    /// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
    ///     vec![0; 4]).unwrap();
    /// let s = ActionSpace::new(&g, 0, 2, &[]).unwrap();
    /// let s = s.without_locked(&Locked::new(vec![2], vec![])).unwrap();
    /// assert_eq!(s.actions, [Edit::delete(0, 1)]);
    /// ```
    pub fn without_locked(mut self, locked: &Locked) -> Result<Self> {
        if locked.is_empty() {
            return Ok(self);
        }
        self.actions.retain(|e| locked.permits(e.u, e.w));
        if self.actions.is_empty() {
            return Err(ExplainError::NoCandidate {
                target: self.target,
            });
        }
        Ok(self)
    }

    /// The nodes outside `sub` that [`Additions::Graph`] offers for additions: up to `count`
    /// nodes whose predicted class (`predictions`, [`GraphPredictions::of`]) is not `label`, the
    /// most confident first, taken in turn from each other class (so every class is
    /// represented), ascending ids on ties.
    ///
    /// ```
    /// use induce_baselines::action_space::ActionSpace;
    /// use induce_graph::{Features, Graph, k_hop};
    /// //  0 ─ 1   2   3   4   (2, 3, 4 isolated)
    /// let g = Graph::from_edges(5, &[(0, 1)], Features::constant(5, 1, 1.0), vec![0; 5])
    ///     .unwrap();
    /// let sub = k_hop(&g, 0, 2).unwrap();
    /// let pred = [(0, -0.1), (0, -0.1), (1, -0.5), (1, -0.2), (2, -0.9)];
    /// assert_eq!(ActionSpace::outside_candidates(&sub, &pred, 0, 2), [3, 4]);
    /// assert_eq!(ActionSpace::outside_candidates(&sub, &pred, 0, 9), [2, 3, 4]);
    /// ```
    pub fn outside_candidates(
        sub: &Subgraph,
        predictions: &[(usize, f32)],
        label: usize,
        count: usize,
    ) -> Vec<u32> {
        let classes = predictions.iter().map(|p| p.0 + 1).max().unwrap_or(0);
        let mut by_class: Vec<Vec<(f32, u32)>> = vec![Vec::new(); classes];
        for (v, &(c, lp)) in predictions.iter().enumerate() {
            if c != label && sub.local_of(v as u32).is_none() {
                by_class[c].push((lp, v as u32));
            }
        }
        for list in &mut by_class {
            list.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        }
        let mut out = Vec::with_capacity(count);
        let mut rank = 0;
        while out.len() < count && by_class.iter().any(|l| l.len() > rank) {
            for list in &by_class {
                if let Some(&(_, v)) = list.get(rank)
                    && out.len() < count
                {
                    out.push(v);
                }
            }
            rank += 1;
        }
        out.sort_unstable();
        out
    }

    /// Number of actions.
    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// True when there is no action (never for a built space).
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }
}

/// Which nodes lie within `L` hops of the target (`L` the black box's message-passing layers)
/// once some additions `(target, v)` are made: an edit with both endpoints farther away cannot
/// change the target's prediction. A GCN's output at the target reads the edges incident to
/// nodes within `L − 1` hops and the degrees of nodes within `L` hops, so an edge matters only
/// with an endpoint within `L` hops. Deletions are ignored (they only lengthen paths), which
/// keeps the test conservative: an edit called irrelevant never changes the prediction.
///
/// ```text
///   L = 1, target 0:   0 ─ 1 ─ 2 ─ 3     (2,3) is irrelevant: both endpoints 2+ hops away;
///                                        after adding (0,2) it is relevant
/// ```
///
/// ```
/// use induce_baselines::action_space::Reach;
/// use induce_explain::Edit;
/// use induce_graph::{Features, Graph};
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
///     vec![0; 4]).unwrap();
/// let r = Reach::new(&g, 0, Some(1), &[]);
/// assert!(r.relevant(&Edit::delete(1, 2)) && !r.relevant(&Edit::delete(2, 3)));
/// let r = Reach::new(&g, 0, Some(1), &[Edit::add(0, 2)]);
/// assert!(r.relevant(&Edit::delete(2, 3)));
/// assert!(Reach::new(&g, 0, None, &[]).relevant(&Edit::delete(2, 3))); // L unknown
/// ```
#[derive(Debug, Clone)]
pub struct Reach {
    near: Option<HashSet<u32>>,
}

impl Reach {
    /// The nodes within `layers` hops of `target` in `graph` with the additions among `edits`
    /// made; every edit is relevant when `layers` is `None` (a black box that does not say).
    pub fn new(graph: &Graph, target: u32, layers: Option<u32>, edits: &[Edit]) -> Self {
        let Some(l) = layers else {
            return Self { near: None };
        };
        let mut extra: Vec<(u32, u32)> = Vec::new();
        for e in edits.iter().filter(|e| e.kind == EditKind::Add) {
            extra.push((e.u, e.w));
            extra.push((e.w, e.u));
        }
        let mut near = HashSet::from([target]);
        let mut frontier = vec![target];
        for _ in 0..l {
            let mut next = Vec::new();
            for &u in &frontier {
                let more = extra.iter().filter(|p| p.0 == u).map(|p| p.1);
                for w in graph.sorted_neighbors(u).iter().copied().chain(more) {
                    if near.insert(w) {
                        next.push(w);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        Self { near: Some(near) }
    }

    /// Whether `edit` can change the target's prediction (see [`Reach`]).
    pub fn relevant(&self, edit: &Edit) -> bool {
        match &self.near {
            None => true,
            Some(near) => near.contains(&edit.u) || near.contains(&edit.w),
        }
    }
}

/// How a [`TargetOracle`] reads the target's prediction.
enum Source<'a> {
    /// The black box's binding to the graph: the target's row from cached layers, recomputing
    /// only what the edits reach (the paper's GCN on the host kernel).
    Bound(&'a dyn GraphBinding),
    /// A [`Judge`]: incremental where the black box is, else a whole evaluation of the target's
    /// receptive field (or of the frozen neighbourhood under [`Verdict::Neighbourhood`]).
    Judge(Box<Judge<'a>>),
    /// A black box that [batches graphs](BlackBox::batches_graphs): each edited receptive
    /// field (`radius` = layers + 1) built here, many handed over in one call.
    Batched {
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        radius: u32,
    },
}

/// A graph handed to the black box: its nodes (original ids), their features, its edges (local
/// ids), and the target's position in it.
pub(crate) struct EditedInput {
    pub nodes: Vec<u32>,
    pub x: Features,
    pub edges: Vec<(u32, u32)>,
    pub at: usize,
}

/// The input that judges `target` with `edits` and the feature `rows` applied: its edited
/// receptive field (`radius` hops in the edited graph, the target first) with those rows
/// replaced, or with `radius` `None` the whole edited graph; the target's position in it.
pub(crate) fn edited_input(
    graph: &Graph,
    target: u32,
    radius: Option<u32>,
    edits: &[Edit],
    rows: &[(u32, &[f32])],
) -> Result<EditedInput> {
    let pairs: Vec<(u32, u32)> = edits.iter().map(|e| (e.u, e.w)).collect();
    let d = graph.features().dim();
    check_rows(graph, rows)?;
    let (nodes, edges, at) = match radius {
        Some(r) => {
            let (nodes, edges) = induce_explain::field::edited_field(graph, target, r, &pairs);
            (nodes, edges, 0)
        }
        None => {
            let mut edges: std::collections::BTreeSet<(u32, u32)> =
                graph.edges().into_iter().collect();
            for &(a, b) in pairs.iter().filter(|(a, b)| a != b) {
                let p = (a.min(b), a.max(b));
                if !edges.remove(&p) {
                    edges.insert(p);
                }
            }
            let nodes: Vec<u32> = (0..graph.num_nodes() as u32).collect();
            (nodes, edges.into_iter().collect(), target as usize)
        }
    };
    let mut x = graph.features().gather(&nodes).as_slice().to_vec();
    for &(v, r) in rows {
        if let Some(i) = nodes.iter().position(|&u| u == v) {
            x[i * d..(i + 1) * d].copy_from_slice(r);
        }
    }
    Ok(EditedInput {
        x: Features::new(nodes.len(), d, x)?,
        nodes,
        edges,
        at,
    })
}

/// Errors unless every row of `rows` is a node of `graph` with one value per feature.
fn check_rows(graph: &Graph, rows: &[(u32, &[f32])]) -> Result<()> {
    let d = graph.features().dim();
    match rows
        .iter()
        .find(|(v, r)| *v as usize >= graph.num_nodes() || r.len() != d)
    {
        Some(&(v, r)) => Err(ExplainError::InvalidValue {
            what: "feature row",
            value: format!("node {v}, {} values", r.len()),
            reason: format!("the graph has {} nodes of {d} features", graph.num_nodes()),
        }),
        None => Ok(()),
    }
}

/// [`edited_input`] under the paper's frozen verdicts: the neighbourhood `sub` with `edits`
/// toggled among its nodes and the feature `rows` of its nodes replaced.
///
/// Errors: an edit endpoint outside the neighbourhood ([`ExplainError::NodeOutOfRange`]).
fn frozen_input(
    graph: &Graph,
    sub: &Subgraph,
    edits: &[Edit],
    rows: &[(u32, &[f32])],
) -> Result<EditedInput> {
    let local = |v: u32| {
        sub.local_of(v)
            .map(|l| l as u32)
            .ok_or(ExplainError::NodeOutOfRange {
                node: v,
                num_nodes: sub.num_nodes(),
                what: "the frozen neighbourhood",
            })
    };
    let mut edges: std::collections::BTreeSet<(u32, u32)> = sub.edges.iter().copied().collect();
    for e in edits.iter().filter(|e| e.u != e.w) {
        let (a, b) = (local(e.u)?, local(e.w)?);
        let p = (a.min(b), a.max(b));
        if !edges.remove(&p) {
            edges.insert(p);
        }
    }
    let d = graph.features().dim();
    check_rows(graph, rows)?;
    let mut x = sub.features(graph).as_slice().to_vec();
    for &(v, r) in rows {
        if let Some(i) = sub.local_of(v) {
            x[i * d..(i + 1) * d].copy_from_slice(r);
        }
    }
    Ok(EditedInput {
        x: Features::new(sub.num_nodes(), d, x)?,
        nodes: sub.nodes.clone(),
        edges: edges.into_iter().collect(),
        at: sub.target_local,
    })
}

/// At most this many feature values go into one batched call (64 MiB of `f32`): the candidate
/// fields of a step are split into calls of this size.
const BATCH_VALUES: usize = 1 << 24;

/// The black box's prediction for one target with any set of edits applied: the model on the
/// whole edited graph ([`Verdict::Exact`]) or on the frozen neighbourhood
/// ([`Verdict::Neighbourhood`], the paper's protocol). Each answer is one black-box evaluation
/// ([`induce_explain::oracle`]).
///
/// ```
/// use induce_baselines::action_space::TargetOracle;
/// use induce_explain::{Edit, Verdict};
/// use induce_graph::{Features, Graph, k_hop};
/// use induce_models::testing::DegreeAtLeast;
///
/// //  0 ─ 1 ─ 2
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], Features::constant(3, 1, 1.0), vec![0; 3])
///     .unwrap();
/// let sub = k_hop(&g, 1, 1).unwrap();
/// let mut o = TargetOracle::new(&g, &DegreeAtLeast(2), &sub, Verdict::Exact).unwrap();
/// assert_eq!(o.label(&[]).unwrap(), 1);
/// assert_eq!(o.label(&[Edit::delete(0, 1)]).unwrap(), 0);
/// assert_eq!(o.calls(), 2);
/// ```
pub struct TargetOracle<'a> {
    target: u32,
    source: Source<'a>,
    calls: u64,
    graph: &'a Graph,
    black_box: &'a dyn BlackBox,
    /// The frozen neighbourhood of [`Verdict::Neighbourhood`] (`None` under exact verdicts):
    /// what a feature edit is judged on there.
    frozen: Option<Subgraph>,
}

/// One trial of [`TargetOracle::rows_with_rows`]: edge edits, and feature rows that replace the
/// graph's rows of their nodes.
pub type RowsTrial<'t> = (&'t [Edit], &'t [(u32, &'t [f32])]);

impl<'a> TargetOracle<'a> {
    /// The oracle of `sub.target` (`sub` its neighbourhood: the node set of the frozen
    /// verdicts). Same errors as [`Judge::new`].
    pub fn new(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        sub: &Subgraph,
        verdict: Verdict,
    ) -> Result<Self> {
        let target = sub.target;
        let source = match (verdict, black_box.graph_binding(graph)) {
            (Verdict::Exact, Some(b)) => {
                if graph.features().dim() != black_box.input_dim() {
                    return Err(ExplainError::FeatureDimension {
                        expected: black_box.input_dim(),
                        got: graph.features().dim(),
                    });
                }
                Source::Bound(b)
            }
            (Verdict::Exact, None)
                if black_box.batches_graphs() && black_box.message_passing_layers().is_some() =>
            {
                induce_explain::verdict::check_inputs(graph, black_box, target)?;
                induce_explain::verdict::check_classes(black_box)?;
                Source::Batched {
                    graph,
                    black_box,
                    radius: black_box.message_passing_layers().unwrap_or(0) + 1,
                }
            }
            (Verdict::Exact, None) => Source::Judge(Box::new(Judge::new(
                graph,
                black_box,
                target,
                &[target],
                Verdict::Exact,
            )?)),
            (Verdict::Neighbourhood, _) => {
                Source::Judge(Box::new(Judge::frozen(graph, black_box, sub)?))
            }
        };
        Ok(Self {
            target,
            source,
            calls: 0,
            graph,
            black_box,
            frozen: (verdict == Verdict::Neighbourhood).then(|| sub.clone()),
        })
    }

    /// The target's class log-probabilities with exactly `edits` applied to the unedited graph
    /// (each a toggle: additions of absent pairs, deletions of present ones).
    ///
    /// # Shapes
    /// - output: `[num_classes]`
    pub fn row(&mut self, edits: &[Edit]) -> Result<Vec<f32>> {
        if let Source::Batched { .. } = self.source {
            return Ok(self.rows(&[edits])?.remove(0));
        }
        self.calls += 1;
        let row = match &mut self.source {
            Source::Bound(b) => {
                oracle::count(1);
                let pairs: Vec<(u32, u32)> = edits.iter().map(|e| (e.u, e.w)).collect();
                b.log_probs_at_edited(self.target, &pairs)?
            }
            Source::Judge(j) => {
                j.set_edits(edits)?;
                j.target_row().to_vec()
            }
            Source::Batched { .. } => unreachable!("answered above"),
        };
        self.checked(row)
    }

    /// [`TargetOracle::row`] for each edit set of `trials`, in order: one call of the black box
    /// for many of them where it [batches graphs](BlackBox::batches_graphs), else one each.
    ///
    /// # Shapes
    /// - output: `[trials.len()][num_classes]`
    pub fn rows(&mut self, trials: &[&[Edit]]) -> Result<Vec<Vec<f32>>> {
        if let Source::Bound(b) = self.source {
            return self.bound_rows(b, trials);
        }
        let Source::Batched {
            graph,
            black_box,
            radius,
        } = self.source
        else {
            return trials.iter().map(|t| self.row(t)).collect();
        };
        let dim = graph.features().dim().max(1);
        let mut out = Vec::with_capacity(trials.len());
        let mut fields = Vec::new();
        let mut values = 0;
        for (i, edits) in trials.iter().enumerate() {
            let pairs: Vec<(u32, u32)> = edits.iter().map(|e| (e.u, e.w)).collect();
            let (nodes, edges) =
                induce_explain::field::edited_field(graph, self.target, radius, &pairs);
            values += nodes.len() * dim;
            fields.push((nodes, edges));
            if values >= BATCH_VALUES || i + 1 == trials.len() {
                let refs: Vec<_> = (fields.iter())
                    .map(|(x, e)| (x.as_slice(), e.as_slice()))
                    .collect();
                oracle::count(refs.len() as u64);
                self.calls += refs.len() as u64;
                let answers = black_box.log_probs_many_rows(graph.features(), &refs)?;
                if answers.len() != refs.len() {
                    return Err(ExplainError::InvalidValue {
                        what: "black box",
                        value: format!("{} answers", answers.len()),
                        reason: format!("log_probs_many was given {} graphs", refs.len()),
                    });
                }
                for lp in answers {
                    out.push(self.checked(lp.row(0).to_vec())?);
                }
                fields.clear();
                values = 0;
            }
        }
        Ok(out)
    }

    /// [`TargetOracle::rows`] through the graph binding: trials that extend the same edits by
    /// one (a search's candidates at one state) from the binding's cache of that state
    /// ([`GraphBinding::state_at`]) where it has one, else one [`TargetOracle::row`] each.
    fn bound_rows(&mut self, b: &dyn GraphBinding, trials: &[&[Edit]]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(trials.len());
        let mut state: Option<(&[Edit], Box<dyn StateBinding + '_>)> = None;
        for &t in trials {
            let Some((last, prefix)) = t.split_last() else {
                out.push(self.row(t)?);
                continue;
            };
            if state.as_ref().is_none_or(|(at, _)| *at != prefix) {
                let pairs: Vec<(u32, u32)> = prefix.iter().map(|e| (e.u, e.w)).collect();
                state = b.state_at(self.target, &pairs)?.map(|s| (prefix, s));
            }
            match &mut state {
                Some((_, s)) => {
                    self.calls += 1;
                    oracle::count(1);
                    let row = s.log_probs_toggling((last.u, last.w))?;
                    out.push(self.checked(row)?);
                }
                None => out.push(self.row(t)?),
            }
        }
        Ok(out)
    }

    /// Whether the oracle judges feature edits ([`TargetOracle::row_with_rows`]): always, for
    /// every black box and both verdicts.
    pub fn judges_features(&self) -> bool {
        true
    }

    /// [`TargetOracle::row`] with the nodes of `rows` given these feature rows too (feature
    /// edits): through the graph binding ([`GraphBinding::log_probs_at_rows`]) where the black
    /// box has one that answers, else as [`TargetOracle::rows_with_rows`].
    ///
    /// Errors: [`ExplainError::InvalidConfig`] where the oracle cannot judge feature edits
    /// ([`TargetOracle::judges_features`]), the black box's errors.
    ///
    /// # Shapes
    /// - rows: `[feature dim]` each; output: `[num_classes]`
    pub fn row_with_rows(&mut self, edits: &[Edit], rows: &[(u32, &[f32])]) -> Result<Vec<f32>> {
        if rows.is_empty() {
            return self.row(edits);
        }
        if let Source::Bound(b) = &self.source {
            let pairs: Vec<(u32, u32)> = edits.iter().map(|e| (e.u, e.w)).collect();
            if let Some(row) = b.log_probs_at_rows(self.target, &pairs, rows)? {
                self.calls += 1;
                oracle::count(1);
                return self.checked(row);
            }
        }
        Ok(self.rows_with_rows(&[(edits, rows)])?.remove(0))
    }

    /// [`TargetOracle::row_with_rows`] for each trial, in order. A black box bound to the graph
    /// answers each incrementally; any other is handed each trial's edited receptive field
    /// (`L + 1` hops in the edited graph, its feature rows replaced; the whole edited graph
    /// where `L` is unknown), many per call where it [batches graphs](BlackBox::batches_graphs):
    /// a Python callback sees the edited features as it sees edited edges.
    ///
    /// Errors: as [`TargetOracle::row_with_rows`].
    ///
    /// # Shapes
    /// - output: `[trials.len()][num_classes]`
    pub fn rows_with_rows(&mut self, trials: &[RowsTrial<'_>]) -> Result<Vec<Vec<f32>>> {
        if let Source::Bound(b) = &self.source {
            let mut out = Vec::with_capacity(trials.len());
            let mut fallback = false;
            for &(edits, rows) in trials {
                let pairs: Vec<(u32, u32)> = edits.iter().map(|e| (e.u, e.w)).collect();
                match b.log_probs_at_rows(self.target, &pairs, rows)? {
                    Some(row) => out.push(row),
                    None => {
                        fallback = true;
                        break;
                    }
                }
            }
            if !fallback {
                self.calls += out.len() as u64;
                oracle::count(out.len() as u64);
                return out.into_iter().map(|r| self.checked(r)).collect();
            }
        }
        let (graph, black_box) = (self.graph, self.black_box);
        let radius = black_box.message_passing_layers().map(|l| l + 1);
        let dim = graph.features().dim().max(1);
        let mut out = Vec::with_capacity(trials.len());
        let mut inputs: Vec<EditedInput> = Vec::new();
        let mut values = 0;
        for (i, &(edits, rows)) in trials.iter().enumerate() {
            let input = match &self.frozen {
                None => edited_input(graph, self.target, radius, edits, rows)?,
                Some(sub) => frozen_input(graph, sub, edits, rows)?,
            };
            values += input.x.num_nodes() * dim;
            inputs.push(input);
            if values >= BATCH_VALUES || i + 1 == trials.len() {
                let refs: Vec<_> = (inputs.iter())
                    .map(|i| (&i.x, i.edges.as_slice()))
                    .collect();
                oracle::count(refs.len() as u64);
                self.calls += refs.len() as u64;
                let answers = black_box.log_probs_many(&refs)?;
                if answers.len() != refs.len() {
                    return Err(ExplainError::InvalidValue {
                        what: "black box",
                        value: format!("{} answers", answers.len()),
                        reason: format!("log_probs_many was given {} graphs", refs.len()),
                    });
                }
                for (lp, i) in answers.iter().zip(&inputs) {
                    out.push(self.checked(lp.row(i.at).to_vec())?);
                }
                inputs.clear();
                values = 0;
            }
        }
        Ok(out)
    }

    fn checked(&self, row: Vec<f32>) -> Result<Vec<f32>> {
        if row.iter().any(|x| x.is_nan()) {
            return Err(ExplainError::NanOutput {
                target: self.target,
                node: self.target,
            });
        }
        Ok(row)
    }

    /// The target's predicted class with `edits` applied ([`TargetOracle::row`]'s argmax, the
    /// first on ties).
    pub fn label(&mut self, edits: &[Edit]) -> Result<usize> {
        Ok(argmax(&self.row(edits)?))
    }

    /// Answers given so far.
    pub fn calls(&self) -> u64 {
        self.calls
    }
}

/// The index of the largest value, the first on ties (as
/// [`LogProbs::argmax`](induce_models::LogProbs::argmax)).
pub fn argmax(row: &[f32]) -> usize {
    let mut best = 0;
    for (k, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = k;
        }
    }
    best
}

/// How far class `label` leads: `row[label] − max_{c ≠ label} row[c]` (negative once another
/// class leads; `+∞` with a single class).
///
/// ```
/// use induce_baselines::action_space::margin;
/// assert_eq!(margin(&[-0.5, -1.5, -2.0], 0), 1.0);
/// assert_eq!(margin(&[-0.5, -1.5, -2.0], 2), -1.5);
/// ```
pub fn margin(row: &[f32], label: usize) -> f32 {
    let other = row
        .iter()
        .enumerate()
        .filter(|&(c, _)| c != label)
        .map(|(_, &v)| v)
        .fold(f32::NEG_INFINITY, f32::max);
    row[label] - other
}

#[cfg(test)]
pub(crate) mod fixtures {
    pub(crate) use induce_models::testing::GradedDegree;

    /// A random graph with 0/1 features and a GCN bound to it (its bound form judges feature
    /// edits).
    pub(crate) fn binary_graph() -> (induce_graph::Graph, induce_models::HostGcn) {
        use induce_models::{GcnConfig, HostGcn, testing::test_device};
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(11);
        let (n, d) = (30u32, 8usize);
        let mut edges: Vec<(u32, u32)> = (1..n).map(|v| (rng.random_range(0..v), v)).collect();
        edges.extend((0..10).map(|_| {
            let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
            (a.min(b), a.max(b))
        }));
        edges.retain(|e| e.0 != e.1);
        edges.sort_unstable();
        edges.dedup();
        let x: Vec<f32> = (0..n as usize * d)
            .map(|_| if rng.random::<f32>() < 0.3 { 1.0 } else { 0.0 })
            .collect();
        let x = induce_graph::Features::new(n as usize, d, x).unwrap();
        let g =
            induce_graph::Graph::from_edges(n as usize, &edges, x, vec![0; n as usize]).unwrap();
        let dev = test_device().unwrap();
        let gcn = HostGcn::from_gcn(&GcnConfig::new(d, 3).with_init_seed(4).init(&dev)).unwrap();
        (g, gcn)
    }

    /// [`binary_graph`] with continuous features: 8 columns of spread values (column 0 stays
    /// 0/1, so both kinds of column are searched).
    pub(crate) fn continuous_graph() -> (induce_graph::Graph, induce_models::HostGcn) {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        let (g, gcn) = binary_graph();
        let mut rng = StdRng::seed_from_u64(12);
        let d = g.features().dim();
        let x: Vec<f32> = (g.features().as_slice().iter().enumerate())
            .map(|(i, &v)| match i % d {
                0 => v,
                j => (rng.random::<f32>() * 4.0 - 2.0) * j as f32 / 4.0,
            })
            .collect();
        let x = induce_graph::Features::new(g.num_nodes(), d, x).unwrap();
        (g.with_features(x).unwrap(), gcn)
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::GradedDegree;
    use super::*;
    use induce_graph::Features;

    #[test]
    fn oracle_rows_follow_the_edits_and_count_calls() {
        //  0 ─ 1 ─ 2 ─ 3
        let g = Graph::from_edges(
            4,
            &[(0, 1), (1, 2), (2, 3)],
            Features::constant(4, 1, 1.0),
            vec![0; 4],
        )
        .unwrap();
        let sub = k_hop(&g, 1, 2).unwrap();
        for verdict in [Verdict::Exact, Verdict::Neighbourhood] {
            let mut o = TargetOracle::new(&g, &GradedDegree(2), &sub, verdict).unwrap();
            let ((), n) = oracle::counted(|| {
                assert_eq!(o.label(&[]).unwrap(), 1); // degree 2
                let row = o.row(&[Edit::delete(0, 1)]).unwrap(); // degree 1: z = −½
                assert!((margin(&row, 1) + 0.5).abs() < 1e-6, "{row:?}");
                assert_eq!(o.label(&[Edit::add(1, 3)]).unwrap(), 1);
            });
            assert_eq!(o.calls(), 3);
            // The judge answers the unedited graph from the evaluation it was built with.
            assert_eq!(n, 2, "{verdict:?}");
        }
    }

    #[test]
    fn reach_follows_additions_and_outside_candidates_take_turns() {
        //  0 ─ 1 ─ 2 ─ 3 ─ 4
        let g = Graph::from_edges(
            5,
            &[(0, 1), (1, 2), (2, 3), (3, 4)],
            Features::constant(5, 1, 1.0),
            vec![0; 5],
        )
        .unwrap();
        let r = Reach::new(&g, 0, Some(2), &[]);
        assert!(r.relevant(&Edit::delete(2, 3)));
        assert!(!r.relevant(&Edit::delete(3, 4)));
        assert!(Reach::new(&g, 0, Some(2), &[Edit::add(0, 3)]).relevant(&Edit::delete(3, 4)));
        // Deletions never shrink the reach (conservative).
        assert!(Reach::new(&g, 0, Some(2), &[Edit::delete(0, 1)]).relevant(&Edit::delete(2, 3)));
        let s = ActionSpace::new(&g, 0, 1, &[4, 3, 1]).unwrap();
        assert_eq!(
            s.actions,
            [Edit::add(0, 3), Edit::add(0, 4), Edit::delete(0, 1)]
        );
        let lonely = Graph::empty(Features::constant(1, 1, 1.0), vec![0]).unwrap();
        assert!(matches!(
            ActionSpace::new(&lonely, 0, 4, &[]),
            Err(ExplainError::NoCandidate { target: 0 })
        ));
        assert!(matches!(
            ActionSpace::new(&lonely, 3, 4, &[]),
            Err(ExplainError::TargetOutOfRange { .. })
        ));
    }
}
