//! Typed errors of the models crate.

use std::path::PathBuf;

/// Everything that can go wrong building, running, saving or loading a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// Two sizes that must agree do not (a checkpoint vs a dataset, a feature matrix vs a model).
    #[error("{what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// Which quantity disagrees, and where.
        what: String,
        /// The size required.
        expected: usize,
        /// The size found.
        got: usize,
    },
    /// A graph or feature input is unusable (out-of-range edge endpoint, empty graph, NaN...).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A name that is no backend of this library.
    #[error("unknown backend `{name}`: the backends are {known}; compiled in: {available}")]
    UnknownBackend {
        /// The name as given.
        name: String,
        /// Every backend name this library knows.
        known: String,
        /// Comma-separated list of compiled-in backends.
        available: String,
    },
    /// A backend that is not compiled in.
    #[error("backend `{name}` is not available; compiled-in backends: {available}")]
    BackendUnavailable {
        /// The requested backend.
        name: String,
        /// Comma-separated list of compiled-in backends.
        available: String,
    },
    /// A compiled-in backend whose device cannot start on this machine (no GPU adapter, no
    /// driver).
    #[error("backend `{backend}` is compiled in but its device is not usable here: {reason}")]
    DeviceUnavailable {
        /// The backend.
        backend: &'static str,
        /// What failed and what it needs.
        reason: String,
    },
    /// A checkpoint or weight file could not be read or written, or does not fit the model.
    #[error("{}: {message}", path.display())]
    Checkpoint {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// An I/O error on a named file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The device failed while computing (e.g. an allocation beyond what the GPU driver
    /// grants, such as Vulkan's largest buffer).
    #[error("the device failed computing {what}: {reason}")]
    DeviceExecution {
        /// What was being computed.
        what: String,
        /// The backend's error.
        reason: String,
    },
    /// An error from the graph crate.
    #[error(transparent)]
    Graph(#[from] induce_graph::GraphError),
}

impl ModelError {
    /// Shorthand for a [`ModelError::Checkpoint`].
    pub fn checkpoint(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        ModelError::Checkpoint {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Result alias of the models crate.
pub type Result<T, E = ModelError> = std::result::Result<T, E>;
