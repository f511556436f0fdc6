//! The facade's typed error: any member crate's error, or a bad value given to the pipeline.

/// Everything that can go wrong in the pipeline, the experiments and the command line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// From `induce-graph` (loading, generating, k-hop extraction).
    #[error(transparent)]
    Graph(#[from] induce_graph::GraphError),
    /// From `induce-models` (black box, checkpoints, devices).
    #[error(transparent)]
    Model(#[from] induce_models::ModelError),
    /// From an explainer, a metric or the pipeline.
    #[error(transparent)]
    Explain(#[from] induce_explain::ExplainError),
    /// A value that cannot be used, named with the reason.
    #[error("invalid {what} `{value}`: {reason}")]
    InvalidValue {
        /// What the value is (`method`, `data`, ...).
        what: &'static str,
        /// The value as given.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file at fault.
        path: std::path::PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// Result alias of the facade.
pub type Result<T, E = Error> = std::result::Result<T, E>;
