//! The black box: the only view an explainer has of the classifier it explains.
//!
//! [`BlackBox`] and the traits of its optional fast paths ([`PreparedBlackBox`],
//! [`IncrementalBlackBox`], [`GraphBinding`]); [`LogProbs`], what it answers; [`EdgeWeighted`],
//! its differentiable form for the soft-mask baselines. The models implement them in their own
//! folders ([`crate::gcn`], [`crate::pyg`]).

pub mod batched;
mod differentiable;
mod log_probs;

use induce_graph::{Features, Graph};

use crate::error::{ModelError, Result};
use crate::gcn::Gcn;

pub use differentiable::EdgeWeighted;
pub use log_probs::LogProbs;

/// A trained node classifier seen from outside: given a graph (usually a k-hop neighbourhood,
/// possibly edited), it returns class log-probabilities for every node.
///
/// Any model can be explained by implementing this trait; nothing else of the model is used
/// (the explainer is model-agnostic).
///
/// **Edge order.** The explainers hand `edges` in an order of their own (a neighbourhood's
/// local ids, an edited list with additions at the end). A model whose floating-point sums
/// follow the order of `edges` (message passing summed in list order, as most do) may then
/// answer with values that differ in the last bits between two orders of the same graph. A
/// prediction that sits on a near-tie can differ with it, and so can which of two equally good
/// edits a search picks (the library's own GCN kernels sum in list order too); every reported
/// counterfactual is still checked on the whole graph. A model that sums in a fixed order (say,
/// by sorted neighbour) answers the same for every order.
///
/// ```
/// use induce_graph::Features;
/// use induce_models::{BlackBox, LogProbs, Result};
///
/// /// Predicts class 1 for nodes with at least two neighbours.
/// struct DegreeRule;
/// impl BlackBox for DegreeRule {
///     fn input_dim(&self) -> usize { 1 }
///     fn num_classes(&self) -> usize { 2 }
///     fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
///         let mut deg = vec![0; x.num_nodes()];
///         for &(u, w) in edges { deg[u as usize] += 1; deg[w as usize] += 1; }
///         let data = deg.iter().flat_map(|&d| if d >= 2 { [-5.0, 0.0] } else { [0.0, -5.0] });
///         LogProbs::new(x.num_nodes(), 2, data.collect())
///     }
/// }
/// let lp = DegreeRule.log_probs(&Features::constant(3, 1, 1.0), &[(0, 1), (1, 2)]).unwrap();
/// assert_eq!(lp.predictions(), vec![0, 1, 0]);
/// ```
pub trait BlackBox: Send + Sync {
    /// Feature dimension the model expects.
    fn input_dim(&self) -> usize;

    /// Number of classes.
    fn num_classes(&self) -> usize;

    /// Class log-probabilities of every node of the graph with features `x` (`n × d`) and
    /// undirected `edges` (each pair once, local ids `< n`, no self loops): a graph's
    /// [`Graph::edges`], not its two-direction `edge_index` (a pair listed twice counts twice
    /// in the GCN's degrees and messages; it is not detected).
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs>;

    /// The number `L` of message-passing layers, when the model is a message-passing network:
    /// a node's output then depends only on the features and edges within `L` hops of it and
    /// on the degrees of those nodes (degree normalisation), so it is exactly its output on the
    /// subgraph induced by its `L + 1`-hop neighbourhood. Explainers use it to judge an edited
    /// graph on that receptive field instead of the whole graph (`induce_explain::Judge`).
    ///
    /// `None` (the default) promises nothing: every verdict evaluates the whole graph, which is
    /// exact for any model but costs a whole-graph pass per edit. Report `Some(L)` only when the
    /// statement above holds (a model with a global readout, virtual nodes or positional
    /// encodings of the whole graph must keep `None`).
    fn message_passing_layers(&self) -> Option<u32> {
        None
    }

    /// How [`BlackBox::message_passing_layers`] is known: [`LayersSource::Derived`] (the
    /// default) from the model's own structure, trusted as exact (the library's GCN and PyG
    /// stacks, whose parity tests check it); [`LayersSource::Counted`] or
    /// [`LayersSource::Declared`] when it was guessed or stated from outside (a Python
    /// callback's count of its modules, or the user's `layers=`). A run checks the last two on
    /// the graph before it explains (`induce_explain::reach`): a counted value that the model's
    /// outputs exceed is widened, a declared one is an error.
    fn layers_source(&self) -> LayersSource {
        LayersSource::Derived
    }

    /// Whether [`BlackBox::log_probs_many`] is cheaper than one [`BlackBox::log_probs`] per
    /// graph: a model with a fixed cost per call (one called back in Python, whose every call
    /// crosses the language boundary). The searches (`greedy`, `exact`) then hand it each
    /// step's candidate graphs together. `false` (the default): they evaluate one at a time,
    /// incrementally where the model allows.
    fn batches_graphs(&self) -> bool {
        false
    }

    /// Class log-probabilities of several graphs, each as [`BlackBox::log_probs`] computes
    /// them: what a model that [batches graphs](BlackBox::batches_graphs) evaluates in one call
    /// (for example as one disjoint union). The default calls `log_probs` once per graph.
    ///
    /// # Shapes
    /// - graphs: `[(x: [n_i, input_dim], edges)]`; output: `[LogProbs [n_i, num_classes]]`
    fn log_probs_many(&self, graphs: &[(&Features, &[(u32, u32)])]) -> Result<Vec<LogProbs>> {
        graphs.iter().map(|&(x, e)| self.log_probs(x, e)).collect()
    }

    /// [`BlackBox::log_probs_many`] for graphs whose features are rows of `source` (each graph
    /// its row ids and its edges in local ids): what the searches hand over, so that a model
    /// holding `source` itself (a Python callback given the graph's features) receives ids
    /// instead of copies of the rows. The default gathers the rows and calls
    /// `log_probs_many`.
    ///
    /// Errors: [`ModelError::InvalidInput`] naming a row outside `source`.
    ///
    /// # Shapes
    /// - source: `[N, input_dim]`; graphs: `[(rows: [n_i], edges)]`; output: `[n_i, classes]`
    fn log_probs_many_rows(
        &self,
        source: &Features,
        graphs: &[RowGraph<'_>],
    ) -> Result<Vec<LogProbs>> {
        let xs = (graphs.iter())
            .map(|(rows, _)| gather_rows(source, rows))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<_> = xs.iter().zip(graphs).map(|(x, g)| (x, g.1)).collect();
        self.log_probs_many(&refs)
    }

    /// The model in the form the gradient-based baselines (CF-GNNExplainer(++), CF²,
    /// PGExplainer) differentiate: a Burn [`Gcn`] whose output is differentiable with respect
    /// to a weight on every edge ([`Gcn::forward_weighted`]); the host kernel's gradient is
    /// derived from it. It must be the same function as [`BlackBox::log_probs`].
    ///
    /// `None` (the default): the model provides no gradients, and those baselines refuse it
    /// with a typed error naming the method; InduCE and the random baseline need only
    /// [`BlackBox::log_probs`]. [`GcnBlackBox`](crate::GcnBlackBox) and
    /// [`HostGcn`](crate::HostGcn) return their GCN.
    fn differentiable(&self) -> Option<&Gcn> {
        None
    }

    /// The model's differentiable form for the gradient-based baselines, for any architecture:
    /// log-probabilities as Burn tensors with a weight on every edge ([`EdgeWeighted`]). The
    /// default is [`BlackBox::differentiable`]'s GCN; models that are not the paper's GCN (the
    /// PyG layers of [`crate::pyg`]) return themselves. `None`: no gradients (see
    /// [`BlackBox::differentiable`]).
    fn edge_weighted(&self) -> Option<&dyn EdgeWeighted> {
        self.differentiable().map(|g| g as &dyn EdgeWeighted)
    }

    /// Binds the model to one node set's features for many evaluations with different edges
    /// (an explanation episode edits edges, never features), doing once the work that depends
    /// on the features only (the GCN's first `X W`). The prepared model must return exactly
    /// what [`BlackBox::log_probs`] returns for the same features and edges. `None` (the
    /// default): nothing to prepare, callers use `log_probs`.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`
    fn prepare(&self, x: &Features) -> Result<Option<Box<dyn PreparedBlackBox + '_>>> {
        let _ = x;
        Ok(None)
    }

    /// Binds the model to a whole graph (features `x`, undirected `edges`) for batched verdicts
    /// on its device: many edited copies of the graph evaluated at once
    /// ([`VerdictBatch`](crate::black_box::batched::VerdictBatch)), for explaining many targets in
    /// lockstep on a GPU. It must compute exactly what [`BlackBox::log_probs`] computes. `None`
    /// (the default): verdicts are taken per episode. The Burn
    /// [`GcnBlackBox`](crate::GcnBlackBox) returns its binding; the host kernel does not (its
    /// incremental evaluation per episode is the faster one on a CPU).
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`
    fn batched(
        &self,
        x: &Features,
        edges: &[(u32, u32)],
    ) -> Result<Option<crate::black_box::batched::VerdictBatch<'_>>> {
        let _ = (x, edges);
        Ok(None)
    }

    /// An evaluator of one node set's features that keeps its intermediate results, so that
    /// after a few edge edits ([`IncrementalBlackBox::update`]) it recomputes only what they
    /// reach. It must return exactly what [`BlackBox::prepare`]d evaluation (or, without it,
    /// [`BlackBox::log_probs`]) returns for the same edges. `None` (the default): callers
    /// evaluate whole graphs.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`
    fn incremental<'s>(
        &'s self,
        x: &Features,
        edges: &[(u32, u32)],
    ) -> Result<Option<Box<dyn IncrementalBlackBox<'s> + 's>>> {
        let _ = (x, edges);
        Ok(None)
    }

    /// [`BlackBox::prepare`] for the node set made of the rows `rows` of `source` (in this
    /// order), e.g. one neighbourhood of a graph whose features are `source`. A model may reuse
    /// work done once for the whole of `source` across many neighbourhoods (the host GCN
    /// projects `source` once, keyed by [`Features::id`], and gathers the rows): the result
    /// must be what `prepare` returns for the gathered rows. The default gathers them and calls
    /// [`BlackBox::prepare`].
    ///
    /// Errors: [`ModelError::InvalidInput`] naming a row outside `source`.
    ///
    /// # Shapes
    /// - source: `[N, input_dim]`; rows: `[n]` (ids `< N`)
    fn prepare_rows(
        &self,
        source: &Features,
        rows: &[u32],
    ) -> Result<Option<Box<dyn PreparedBlackBox + '_>>> {
        self.prepare(&gather_rows(source, rows)?)
    }

    /// [`BlackBox::incremental`] for the node set made of the rows `rows` of `source` (see
    /// [`BlackBox::prepare_rows`]). The default gathers the rows and calls
    /// [`BlackBox::incremental`].
    ///
    /// Errors: [`ModelError::InvalidInput`] naming a row outside `source`.
    ///
    /// # Shapes
    /// - source: `[N, input_dim]`; rows: `[n]` (ids `< N`); edges in local ids `< n`
    fn incremental_rows<'s>(
        &'s self,
        source: &Features,
        rows: &[u32],
        edges: &[(u32, u32)],
    ) -> Result<Option<Box<dyn IncrementalBlackBox<'s> + 's>>> {
        self.incremental(&gather_rows(source, rows)?, edges)
    }

    /// Binds the model to one whole graph, doing once what every target of an audit shares
    /// (the host GCN: `X W₁`, the first layer on every node), so that the prediction of one
    /// node on the whole graph with a few edges toggled costs its receptive field, not a
    /// whole-graph pass ([`GraphBinding`]). `None` (the default): no such evaluation; callers
    /// evaluate receptive fields ([`BlackBox::message_passing_layers`]) or whole graphs.
    ///
    /// Callers bind once per graph and share the binding through [`BoundBlackBox`]; explainers
    /// find it with [`BlackBox::graph_binding`].
    fn bind_graph<'s>(&'s self, graph: &'s Graph) -> Result<Option<Box<dyn GraphBinding + 's>>> {
        let _ = graph;
        Ok(None)
    }

    /// The binding of this black box to `graph` made earlier ([`BoundBlackBox`]), if any. The
    /// default has none.
    fn graph_binding(&self, graph: &Graph) -> Option<&dyn GraphBinding> {
        let _ = graph;
        None
    }
}

/// A graph made of rows of a feature matrix: the row ids (its nodes, in order) and its edges in
/// local ids ([`BlackBox::log_probs_many_rows`]).
pub type RowGraph<'a> = (&'a [u32], &'a [(u32, u32)]);

/// How a black box's [`BlackBox::message_passing_layers`] is known ([`BlackBox::layers_source`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LayersSource {
    /// From the model's own structure: exact by construction, not re-checked.
    #[default]
    Derived,
    /// Counted from outside the model (a callback's message-passing modules and their hops):
    /// checked on the graph, and widened where the outputs reach further.
    Counted,
    /// Stated by the user: checked on the graph, and an error where the outputs reach further.
    Declared,
}

/// A black box bound to one whole graph ([`BlackBox::bind_graph`]): the model's prediction for
/// one node of the graph with a few node pairs toggled (an edge removed, a non-edge added),
/// without a whole-graph pass.
///
/// Pairs are in the graph's ids; each pair is toggled once relative to the unedited graph.
pub trait GraphBinding: Send + Sync {
    /// `node`'s class log-probabilities on the whole graph with `toggled` applied, computed
    /// from scratch on its receptive field (independent of any cached layer).
    ///
    /// Errors: [`ModelError::InvalidInput`] for an id outside the graph or a self loop.
    ///
    /// # Shapes
    /// - output: `[num_classes]`
    fn log_probs_at(&self, node: u32, toggled: &[(u32, u32)]) -> Result<Vec<f32>>;

    /// The same values as [`GraphBinding::log_probs_at`] (up to float summation order), from the
    /// layers cached at binding time, updating only what the toggles reach (the verdict of
    /// each step of a search). The default calls `log_probs_at`.
    ///
    /// # Shapes
    /// - output: `[num_classes]`
    fn log_probs_at_edited(&self, node: u32, toggled: &[(u32, u32)]) -> Result<Vec<f32>> {
        self.log_probs_at(node, toggled)
    }

    /// The check of an explanation: the same values as [`GraphBinding::log_probs_at`], with the
    /// node's receptive field in the edited graph recomputed layer by layer, from the whole
    /// graph's first layer where the binding caches it (a whole-graph pass at binding time,
    /// every row the toggles reach recomputed), never from a search's incremental updates
    /// ([`GraphBinding::log_probs_at_edited`], [`GraphBinding::state_at`]). The default calls
    /// `log_probs_at`.
    ///
    /// # Shapes
    /// - output: `[num_classes]`
    fn log_probs_checked(&self, node: u32, toggled: &[(u32, u32)]) -> Result<Vec<f32>> {
        self.log_probs_at(node, toggled)
    }

    /// [`GraphBinding::log_probs_at_edited`] with the nodes of `rows` given these feature rows
    /// (feature edits): `Ok(Some(..))` from the layers cached at binding time, recomputing only
    /// what the toggles and the new rows reach; `Ok(None)` where the binding cannot (the
    /// default), and the caller evaluates the edited features otherwise.
    ///
    /// Errors: [`ModelError::InvalidInput`] for an id outside the graph or a row of the wrong
    /// width.
    ///
    /// # Shapes
    /// - rows: `[input_dim]` each; output: `[num_classes]`
    fn log_probs_at_rows(
        &self,
        node: u32,
        toggled: &[(u32, u32)],
        rows: &[(u32, &[f32])],
    ) -> Result<Option<Vec<f32>>> {
        let _ = (node, toggled, rows);
        Ok(None)
    }

    /// `node` at the edited state `toggled`, prepared to evaluate each single further toggle
    /// from the state's cached rows ([`StateBinding`]): the verdicts a search takes on every
    /// candidate of one state. `Ok(None)` where the binding cannot (the default); the caller
    /// then evaluates each candidate with [`GraphBinding::log_probs_at_edited`].
    ///
    /// Errors: [`ModelError::InvalidInput`] for an id outside the graph or a self loop.
    fn state_at(
        &self,
        node: u32,
        toggled: &[(u32, u32)],
    ) -> Result<Option<Box<dyn StateBinding + '_>>> {
        let _ = (node, toggled);
        Ok(None)
    }
}

/// One node at one edited state of a bound graph ([`GraphBinding::state_at`]).
pub trait StateBinding: Send {
    /// The node's class log-probabilities with the state's toggles and `pair` toggled (back,
    /// if the state toggles it): [`GraphBinding::log_probs_at_edited`] with `pair` appended to
    /// the state's toggles, up to float summation order.
    ///
    /// Errors: [`ModelError::InvalidInput`] for an id outside the graph or a self loop.
    ///
    /// # Shapes
    /// - output: `[num_classes]`
    fn log_probs_toggling(&mut self, pair: (u32, u32)) -> Result<Vec<f32>>;
}

/// A black box together with its binding to one graph ([`BlackBox::bind_graph`], made once):
/// everything else is the wrapped black box's, and [`BlackBox::graph_binding`] returns the
/// binding for that graph (the same `Graph` value) only.
///
/// ```
/// use induce_graph::{Features, Graph};
/// use induce_models::device::default_device;
/// use induce_models::{BlackBox, BoundBlackBox, GcnConfig, HostGcn};
///
/// let gcn = HostGcn::from_gcn(&GcnConfig::new(2, 2).init(&default_device().unwrap())).unwrap();
/// //  0 ─ 1 ─ 2 ─ 3
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 2, 1.0),
///     vec![0; 4]).unwrap();
/// let bound = BoundBlackBox::new(&gcn, &g).unwrap();
/// let binding = bound.graph_binding(&g).expect("the host GCN binds");
/// // Node 0 with the edge (0, 3) added, against a whole-graph pass on the edited graph.
/// let one = binding.log_probs_at_edited(0, &[(0, 3)]).unwrap();
/// let all = gcn.log_probs(g.features(), &[(0, 1), (1, 2), (2, 3), (0, 3)]).unwrap();
/// for (a, b) in one.iter().zip(all.row(0)) {
///     assert!((a - b).abs() < 1e-5);
/// }
/// ```
pub struct BoundBlackBox<'a> {
    inner: &'a dyn BlackBox,
    graph: &'a Graph,
    binding: Option<Box<dyn GraphBinding + 'a>>,
    /// The layers measured on the graph in place of the inner black box's
    /// ([`BoundBlackBox::with_layers`]).
    layers: Option<Option<u32>>,
}

impl std::fmt::Debug for BoundBlackBox<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundBlackBox")
            .field("nodes", &self.graph.num_nodes())
            .field("bound", &self.binding.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> BoundBlackBox<'a> {
    /// Binds `inner` to `graph` ([`BlackBox::bind_graph`]); a black box that does not bind is
    /// wrapped unchanged.
    ///
    /// Errors: the black box's, e.g. a feature dimension that does not match the model.
    pub fn new(inner: &'a dyn BlackBox, graph: &'a Graph) -> Result<Self> {
        Ok(Self {
            inner,
            graph,
            binding: inner.bind_graph(graph)?,
            layers: None,
        })
    }

    /// Whether the wrapped black box bound to the graph.
    pub fn is_bound(&self) -> bool {
        self.binding.is_some()
    }

    /// The black box with `layers` as its [`BlackBox::message_passing_layers`] in place of the
    /// inner one's (`None`: every verdict on the whole graph): what a run measured on the graph
    /// (`induce_explain::reach`) when the model's outputs reach further than it claimed. The
    /// graph binding is dropped (it follows the inner model's layers), and graphs are batched
    /// as disjoint unions only while the layers are known (a model that reads the whole graph
    /// would see the other graphs of a union).
    pub fn with_layers(mut self, layers: Option<u32>) -> Self {
        if layers != self.inner.message_passing_layers() {
            self.layers = Some(layers);
            self.binding = None;
        }
        self
    }
}

impl BlackBox for BoundBlackBox<'_> {
    fn input_dim(&self) -> usize {
        self.inner.input_dim()
    }
    fn num_classes(&self) -> usize {
        self.inner.num_classes()
    }
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
        self.inner.log_probs(x, edges)
    }
    fn message_passing_layers(&self) -> Option<u32> {
        self.layers
            .unwrap_or_else(|| self.inner.message_passing_layers())
    }
    fn layers_source(&self) -> LayersSource {
        self.inner.layers_source()
    }
    fn batches_graphs(&self) -> bool {
        self.inner.batches_graphs() && self.layers != Some(None)
    }
    fn log_probs_many(&self, graphs: &[(&Features, &[(u32, u32)])]) -> Result<Vec<LogProbs>> {
        match self.layers {
            Some(None) => graphs.iter().map(|&(x, e)| self.log_probs(x, e)).collect(),
            _ => self.inner.log_probs_many(graphs),
        }
    }
    fn log_probs_many_rows(
        &self,
        source: &Features,
        graphs: &[RowGraph<'_>],
    ) -> Result<Vec<LogProbs>> {
        match self.layers {
            Some(None) => (graphs.iter())
                .map(|&(rows, e)| self.log_probs(&gather_rows(source, rows)?, e))
                .collect(),
            _ => self.inner.log_probs_many_rows(source, graphs),
        }
    }
    fn differentiable(&self) -> Option<&Gcn> {
        self.inner.differentiable()
    }
    fn edge_weighted(&self) -> Option<&dyn EdgeWeighted> {
        self.inner.edge_weighted()
    }
    fn prepare(&self, x: &Features) -> Result<Option<Box<dyn PreparedBlackBox + '_>>> {
        self.inner.prepare(x)
    }
    fn batched(
        &self,
        x: &Features,
        edges: &[(u32, u32)],
    ) -> Result<Option<crate::black_box::batched::VerdictBatch<'_>>> {
        match self.layers {
            // Its verdicts follow the inner model's layers.
            Some(_) => Ok(None),
            None => self.inner.batched(x, edges),
        }
    }
    fn incremental<'s>(
        &'s self,
        x: &Features,
        edges: &[(u32, u32)],
    ) -> Result<Option<Box<dyn IncrementalBlackBox<'s> + 's>>> {
        self.inner.incremental(x, edges)
    }
    fn prepare_rows(
        &self,
        source: &Features,
        rows: &[u32],
    ) -> Result<Option<Box<dyn PreparedBlackBox + '_>>> {
        self.inner.prepare_rows(source, rows)
    }
    fn incremental_rows<'s>(
        &'s self,
        source: &Features,
        rows: &[u32],
        edges: &[(u32, u32)],
    ) -> Result<Option<Box<dyn IncrementalBlackBox<'s> + 's>>> {
        self.inner.incremental_rows(source, rows, edges)
    }
    fn bind_graph<'s>(&'s self, graph: &'s Graph) -> Result<Option<Box<dyn GraphBinding + 's>>> {
        match self.layers {
            Some(_) => Ok(None),
            None => self.inner.bind_graph(graph),
        }
    }
    fn graph_binding(&self, graph: &Graph) -> Option<&dyn GraphBinding> {
        match &self.binding {
            Some(b) if std::ptr::eq(graph, self.graph) => Some(b.as_ref()),
            _ if self.layers.is_some() => None,
            _ => self.inner.graph_binding(graph),
        }
    }
}

/// Checks that every id of `rows` is a row of `source`.
pub(crate) fn check_rows(source: &Features, rows: &[u32]) -> Result<()> {
    match rows.iter().find(|&&r| r as usize >= source.num_nodes()) {
        Some(r) => Err(ModelError::InvalidInput(format!(
            "row {r} requested from a feature matrix of {} rows",
            source.num_nodes()
        ))),
        None => Ok(()),
    }
}

/// `source`'s rows `rows`, checked ([`check_rows`]).
pub(crate) fn gather_rows(source: &Features, rows: &[u32]) -> Result<Features> {
    check_rows(source, rows)?;
    Ok(source.gather(rows))
}

/// A black box evaluated on one graph that follows its edge edits ([`BlackBox::incremental`]).
pub trait IncrementalBlackBox<'a>: Send + Sync {
    /// Class log-probabilities of every node on the current graph.
    ///
    /// # Shapes
    /// - output: `[n, num_classes]`
    fn log_probs(&self) -> Result<LogProbs>;

    /// Moves to the graph with these `edges`, which differs from the current one only in pairs
    /// whose endpoints are all in `changed`, and returns its log-probabilities.
    ///
    /// # Shapes
    /// - output: `[n, num_classes]`
    fn update(&mut self, edges: &[(u32, u32)], changed: &[u32]) -> Result<LogProbs>;

    /// A copy of the current state (to return to it later).
    fn boxed_clone(&self) -> Box<dyn IncrementalBlackBox<'a> + 'a>;
}

/// A black box bound to the features of one node set ([`BlackBox::prepare`]).
pub trait PreparedBlackBox: Send + Sync {
    /// Class log-probabilities of every node with the bound features and these `edges`.
    ///
    /// # Shapes
    /// - output: `[n, num_classes]` for the `n` bound nodes
    fn log_probs(&self, edges: &[(u32, u32)]) -> Result<LogProbs>;
}

/// Checks a feature matrix against a model's input dimension.
pub fn check_features(x: &Features, input_dim: usize) -> Result<()> {
    if x.dim() != input_dim {
        return Err(ModelError::DimensionMismatch {
            what: "node feature dimension (model input)".into(),
            expected: input_dim,
            got: x.dim(),
        });
    }
    Ok(())
}
