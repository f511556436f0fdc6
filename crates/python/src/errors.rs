//! The package's exceptions: `induce.InduceError` (a `ValueError`) and the kinds a caller
//! handles, each a subclass of it. A library error becomes the one its kind names, with the
//! command line's message.

use induce::explain::ExplainError;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    _native,
    InduceError,
    PyValueError,
    "Anything induce refuses or cannot do: a ValueError, with the command line's message."
);
create_exception!(
    _native,
    NotDifferentiableError,
    InduceError,
    "The method needs the model's gradients, and the model gives none (a callback)."
);
create_exception!(
    _native,
    NotFoundError,
    InduceError,
    "A file or folder the call names does not exist."
);
create_exception!(
    _native,
    GraphError,
    InduceError,
    "The graph's arrays or files are malformed (shapes, ids, NaN features, ...)."
);
create_exception!(
    _native,
    OptionError,
    InduceError,
    "An option (a keyword argument) is unknown or has a value that cannot be used."
);
create_exception!(
    _native,
    ModelError,
    InduceError,
    "The model does not fit the data, its file is malformed, or it failed when called."
);

/// Which exception a failure raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Other,
    NotDifferentiable,
    NotFound,
    Graph,
    Option,
    Model,
}

/// A failure of a call: its kind and the message the user reads.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) kind: Kind,
    pub(crate) message: String,
}

impl Failure {
    /// `message` as `kind`.
    pub(crate) fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// A library error, its kind read off its variant.
    pub(crate) fn of(e: &induce::Error) -> Self {
        Self::new(kind_of(e), crate::message(e))
    }

    /// The Python exception.
    pub(crate) fn into_err(self) -> PyErr {
        let m = self.message;
        match self.kind {
            Kind::Other => InduceError::new_err(m),
            Kind::NotDifferentiable => NotDifferentiableError::new_err(m),
            Kind::NotFound => NotFoundError::new_err(m),
            Kind::Graph => GraphError::new_err(m),
            Kind::Option => OptionError::new_err(m),
            Kind::Model => ModelError::new_err(m),
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        f.into_err()
    }
}

/// Whether an I/O error anywhere in `e`'s chain says a file does not exist.
fn missing(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::NotFound
        {
            return true;
        }
        cur = c.source();
    }
    false
}

/// The kind of a library error.
pub(crate) fn kind_of(e: &induce::Error) -> Kind {
    if missing(e) {
        return Kind::NotFound;
    }
    match e {
        induce::Error::Graph(_) => Kind::Graph,
        induce::Error::Model(_) => Kind::Model,
        induce::Error::InvalidValue { what, .. }
            if ["black box", "model", "arch"]
                .iter()
                .any(|w| what.contains(w)) =>
        {
            Kind::Model
        }
        induce::Error::InvalidValue { .. } => Kind::Option,
        induce::Error::Explain(x) => match x {
            ExplainError::NotDifferentiable { .. } => Kind::NotDifferentiable,
            ExplainError::Model(_) | ExplainError::ReachExceedsDeclared { .. } => Kind::Model,
            ExplainError::FeatureDimension { .. } => Kind::Model,
            ExplainError::InvalidConfig(_)
            | ExplainError::InvalidValue { .. }
            | ExplainError::ZeroBudget => Kind::Option,
            ExplainError::TargetOutOfRange { .. } | ExplainError::NodeOutOfRange { .. } => {
                Kind::Graph
            }
            _ => Kind::Other,
        },
        _ => Kind::Other,
    }
}

/// Adds the exceptions to the native module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InduceError", py.get_type::<InduceError>())?;
    m.add(
        "NotDifferentiableError",
        py.get_type::<NotDifferentiableError>(),
    )?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    m.add("GraphError", py.get_type::<GraphError>())?;
    m.add("OptionError", py.get_type::<OptionError>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    Ok(())
}
