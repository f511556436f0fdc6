//! Typed errors of the graph crate.

use std::path::PathBuf;

/// Everything that can go wrong while building, editing or loading a graph.
///
/// Loader errors always name the file (and, where it helps, the array or row) at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// A node id is not in `0..num_nodes`.
    #[error("node {node} is out of range: the graph has {num_nodes} nodes")]
    NodeOutOfRange {
        /// The offending node id.
        node: u64,
        /// Number of nodes in the graph.
        num_nodes: usize,
    },
    /// An edge from a node to itself was given where only simple graphs are allowed.
    #[error("self loop on node {node}: graphs are simple (no self loops)")]
    SelfLoop {
        /// The node.
        node: u32,
    },
    /// A feature matrix whose size does not match `nodes × dim`.
    #[error("feature matrix has {got} values, expected {nodes} nodes × {dim} dims = {}", nodes * dim)]
    FeatureShape {
        /// Number of nodes expected.
        nodes: usize,
        /// Feature dimension.
        dim: usize,
        /// Number of values actually given.
        got: usize,
    },
    /// A feature index at or past the feature dimension.
    #[error("feature {feature} of node {node}: the features have {dim} columns")]
    FeatureOutOfRange {
        /// Node id.
        node: usize,
        /// The feature index.
        feature: usize,
        /// The feature dimension.
        dim: usize,
    },
    /// A feature value is NaN or infinite.
    #[error("feature [{node}, {dim}] is not finite ({value})")]
    NonFiniteFeature {
        /// Node id.
        node: usize,
        /// Feature column.
        dim: usize,
        /// The value.
        value: f32,
    },
    /// The label vector does not have one entry per node.
    #[error("{what} has {got} entries, expected one per node ({nodes})")]
    PerNodeLength {
        /// Which per-node vector (labels, motif ids, ...).
        what: &'static str,
        /// Number of nodes.
        nodes: usize,
        /// Entries given.
        got: usize,
    },
    /// A hop count of zero or an otherwise invalid parameter.
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Its value, formatted.
        value: String,
        /// Why it is invalid.
        reason: &'static str,
    },
    /// A file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file is malformed: wrong dtype, wrong shape, truncated, missing array, bad row...
    #[error("{}: {message}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the array, column or row.
        message: String,
    },
    /// A file declares a size beyond what it can hold or what the reader accepts (a corrupt or
    /// hostile header: a zip member declaring gigabytes, a feature matrix of 10¹³ values...).
    /// Refused before anything of that size is allocated.
    #[error("{}: {what} declares {declared}, more than the limit of {limit} ({reason})", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What declares the size (the member, array or matrix, with its unit).
        what: String,
        /// The declared size.
        declared: u64,
        /// The largest size accepted here.
        limit: u64,
        /// Where the limit comes from.
        reason: String,
    },
    /// An error found in the content of a file (an out-of-range node id, a non-finite feature, a
    /// label vector of the wrong length, ...), wrapped with the file and the array, column or
    /// line where it was found.
    #[error("{}: {context}: {source}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// Where in the file: the array, column or line.
        context: String,
        /// The error itself.
        #[source]
        source: Box<GraphError>,
    },
}

impl GraphError {
    /// Shorthand for a [`GraphError::Format`].
    pub fn format(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        GraphError::Format {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Shorthand for a [`GraphError::InFile`].
    pub fn in_file(
        path: impl Into<PathBuf>,
        context: impl Into<String>,
        source: GraphError,
    ) -> Self {
        GraphError::InFile {
            path: path.into(),
            context: context.into(),
            source: Box::new(source),
        }
    }

    /// Shorthand for a [`GraphError::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        GraphError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result alias of the graph crate.
pub type Result<T, E = GraphError> = std::result::Result<T, E>;
