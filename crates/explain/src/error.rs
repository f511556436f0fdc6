//! Typed errors of the explainers, metrics and pipeline.

/// Everything that can go wrong explaining a target (any method: setting up or stepping an
/// episode, an optimisation), computing a metric, or reading and writing a run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExplainError {
    /// The target node id is not a node of the graph.
    #[error("target node {target} is out of range: the graph has {num_nodes} nodes")]
    TargetOutOfRange {
        /// The requested target.
        target: u32,
        /// Number of nodes in the graph.
        num_nodes: usize,
    },
    /// A node id inside an explanation (an edit endpoint) or a per-node input is out of range.
    #[error("node {node} is out of range: {what} covers {num_nodes} nodes")]
    NodeOutOfRange {
        /// The offending node id.
        node: u32,
        /// Number of nodes covered.
        num_nodes: usize,
        /// What the id was looked up in (the graph, the prediction vector, ...).
        what: &'static str,
    },
    /// A black box's declared number of message-passing layers
    /// ([`LayersSource::Declared`](induce_models::LayersSource::Declared), the user's `layers=`)
    /// is too small: on some node of the graph its output on the claimed receptive field
    /// differs from its output on the whole graph ([`crate::reach`]).
    #[error(
        "the model was declared to have {declared} message-passing layers, but node {node}'s \
         output on its {radius}-hop receptive field differs from its output on the whole graph \
         (by {difference:.3e} in a log-probability); measured on the graph: {measured}. Declare \
         the measured value, or leave `layers` out to have it measured"
    )]
    ReachExceedsDeclared {
        /// The declared layers.
        declared: u32,
        /// A node whose output differs.
        node: u32,
        /// The radius of the field it was compared on (`declared + 1`).
        radius: u32,
        /// The largest difference of a log-probability.
        difference: f32,
        /// What the check measured ([`crate::reach::Reach`]'s words).
        measured: String,
    },
    /// Under exact verdicts a method reported a counterfactual that the whole-graph check
    /// rejects: the verdict on the receptive field and the whole-graph pass disagree, which
    /// the receptive-field check ([`crate::reach`]) exists to rule out. A bug, never a result.
    #[error(
        "{method} reported a counterfactual for target {target} that does not flip the model \
         on the whole edited graph: the verdict on its receptive field ({layers}) and the \
         whole-graph pass disagree. Please report it, with the model; `layers=0` (every \
         verdict on the whole graph) avoids it"
    )]
    FoundNotValid {
        /// The method.
        method: String,
        /// The target node.
        target: u32,
        /// The black box's layers, in words.
        layers: String,
    },
    /// The target has no candidate action: its neighbourhood is empty (isolated node, `hops = 0`)
    /// or the edit mode and the allowed set `V_c` leave nothing to edit.
    #[error("no candidate action for target {target}: empty neighbourhood or nothing allowed")]
    NoCandidate {
        /// The target node (original id).
        target: u32,
    },
    /// The target's neighbourhood has more nodes than the configured cap (a guard against
    /// exhausting memory on hubs of large graphs).
    #[error(
        "target {target}: its neighbourhood has {nodes} nodes, more than the cap of {max} \
         (EnvConfig.max_nodes); explain it on a fan-out-capped neighbourhood (EnvConfig.fanout) or \
         raise the cap"
    )]
    NeighbourhoodTooLarge {
        /// The target node (original id).
        target: u32,
        /// Nodes of its neighbourhood.
        nodes: usize,
        /// The cap.
        max: usize,
    },
    /// A gradient-based method was given a black box that provides no gradients
    /// ([`BlackBox::edge_weighted`](induce_models::BlackBox::edge_weighted) is `None`).
    #[error(
        "{method} needs the black box's gradients with respect to edge weights, and this black \
         box provides none (BlackBox::edge_weighted is None): use a method that needs only \
         predictions (InduCE, random, the exhaustive greedy, exact), or implement \
         BlackBox::edge_weighted (return your model's differentiable form, an \
         induce_models::EdgeWeighted)"
    )]
    NotDifferentiable {
        /// The method that needs gradients.
        method: String,
    },
    /// The edit budget `δ` is zero: no edit could ever be made.
    #[error("the edit budget is 0: an episode needs at least one edit")]
    ZeroBudget,
    /// The caller cancelled the run ([`Progress::cancelled`](crate::pipeline::Progress::cancelled)).
    #[error("cancelled")]
    Cancelled,
    /// The graph's node features do not have the width the black box expects.
    #[error("feature dimension mismatch: the black box expects {expected}, the graph has {got}")]
    FeatureDimension {
        /// Width the black box expects.
        expected: usize,
        /// Width of the graph's features.
        got: usize,
    },
    /// The black box returned log-probabilities of the wrong shape.
    #[error(
        "black box output has shape [{got_nodes}, {got_classes}], expected \
         [{expected_nodes}, {expected_classes}]"
    )]
    OutputShape {
        /// Nodes in the evaluated (sub)graph.
        expected_nodes: usize,
        /// Classes the black box declares.
        expected_classes: usize,
        /// Rows returned.
        got_nodes: usize,
        /// Columns returned.
        got_classes: usize,
    },
    /// The black box returned NaN log-probabilities while explaining `target`.
    #[error("black box returned NaN for node {node} while explaining target {target}")]
    NanOutput {
        /// The target of the episode (original id).
        target: u32,
        /// The first node (original id) whose output contains a NaN.
        node: u32,
    },
    /// `step` was called with an index outside the candidate list.
    #[error("action {action} is out of range: there are {num_candidates} candidates")]
    ActionOutOfRange {
        /// The requested action index.
        action: usize,
        /// Number of candidates.
        num_candidates: usize,
    },
    /// `step` was called after the episode ended.
    #[error("the episode for target {target} is over")]
    EpisodeOver {
        /// The target node (original id).
        target: u32,
    },
    /// A configuration value is unusable (named in the message).
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// A metric needs motif ground truth the graph does not have.
    #[error("the graph has no motif ground truth")]
    NoGroundTruth,
    /// A target list is empty (the split, the file or the shard selects no node).
    #[error("no target to explain: {0}")]
    NoTargets(String),
    /// A command-line style value could not be understood (target spec, shard, method, ...).
    #[error("invalid {what} `{value}`: {reason}")]
    InvalidValue {
        /// What the value is (`shard`, `target list`, ...).
        what: &'static str,
        /// The value as given.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// Reading or writing a file or directory failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory at fault.
        path: std::path::PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A run file (summary, explanations, config) is malformed.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(" line {l}")).unwrap_or_default())]
    BadRunFile {
        /// The file at fault.
        path: std::path::PathBuf,
        /// The 1-based line, for line-oriented files.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// Runs that cannot be merged or compared (different data, black box, method config or
    /// shard layout), named in the message.
    #[error("cannot merge runs: {0}")]
    Merge(String),
    /// An error from the graph crate.
    #[error(transparent)]
    Graph(#[from] induce_graph::GraphError),
    /// An error from the models crate (black box, tensors).
    #[error(transparent)]
    Model(#[from] induce_models::ModelError),
}

/// Result alias of the reinforcement-learning crate.
pub type Result<T, E = ExplainError> = std::result::Result<T, E>;
