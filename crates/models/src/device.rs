//! Backend selection: the one place where a [`Device`] is chosen.
//!
//! Burn 0.22 carries the backend inside the [`Device`] value, so every model in this crate is
//! backend-agnostic; choosing a backend is choosing a device. Backends are cargo features of the
//! `induce` facade (and of this crate): `flex` (default, pure-Rust CPU), `ndarray` (deprecated in
//! Burn 0.22, kept for users who ask for it) and `cuda` (needs network access to build; never built
//! in CI).
//!
//! ```
//! use induce_models::device::{BackendKind, default_device, device};
//! let kinds = BackendKind::compiled();
//! assert!(!kinds.is_empty());
//! let dev = device(kinds[0]).unwrap();
//! let _ = default_device().unwrap();
//! assert!("tpu".parse::<BackendKind>().is_err());
//! # let _ = dev;
//! ```

use std::fmt;
use std::str::FromStr;

use burn::tensor::Device;

use crate::error::{ModelError, Result};

/// Environment variable that overrides the default backend (`flex`, `ndarray` or `cuda`).
pub const BACKEND_ENV: &str = "INDUCE_BACKEND";

/// A Burn backend this crate can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// Burn's pure-Rust CPU backend (feature `flex`, the default).
    Flex,
    /// The deprecated ndarray CPU backend (feature `ndarray`).
    NdArray,
    /// NVIDIA GPUs through CubeCL (feature `cuda`), device 0.
    Cuda,
}

impl BackendKind {
    /// Every backend, compiled in or not.
    pub const ALL: [BackendKind; 3] = [BackendKind::Flex, BackendKind::NdArray, BackendKind::Cuda];

    /// Lower-case name, as accepted by [`FromStr`] and [`BACKEND_ENV`].
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Flex => "flex",
            BackendKind::NdArray => "ndarray",
            BackendKind::Cuda => "cuda",
        }
    }

    /// True when the backend's cargo feature was enabled at build time.
    pub fn is_compiled(self) -> bool {
        match self {
            BackendKind::Flex => cfg!(feature = "flex"),
            BackendKind::NdArray => cfg!(feature = "ndarray"),
            BackendKind::Cuda => cfg!(feature = "cuda"),
        }
    }

    /// The compiled-in backends, in order of preference (CPU first: on these models' sizes the
    /// CPU beats per-kernel launch costs, see `docs/architecture.md`).
    pub fn compiled() -> Vec<BackendKind> {
        Self::ALL.into_iter().filter(|k| k.is_compiled()).collect()
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendKind {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "flex" => Ok(BackendKind::Flex),
            "ndarray" => Ok(BackendKind::NdArray),
            "cuda" => Ok(BackendKind::Cuda),
            _ => Err(unavailable(s)),
        }
    }
}

fn unavailable(name: &str) -> ModelError {
    let list: Vec<&str> = BackendKind::compiled()
        .into_iter()
        .map(BackendKind::name)
        .collect();
    ModelError::BackendUnavailable {
        name: name.to_string(),
        available: if list.is_empty() {
            "none".into()
        } else {
            list.join(", ")
        },
    }
}

/// The plain (no autodiff) device of a backend, or an error naming the compiled-in ones.
#[allow(unreachable_code, deprecated)]
pub fn device(kind: BackendKind) -> Result<Device> {
    if !kind.is_compiled() {
        return Err(unavailable(kind.name()));
    }
    match kind {
        BackendKind::Flex => {
            #[cfg(feature = "flex")]
            return Ok(Device::flex());
        }
        BackendKind::NdArray => {
            #[cfg(feature = "ndarray")]
            return Ok(Device::ndarray());
        }
        BackendKind::Cuda => {
            #[cfg(feature = "cuda")]
            return Ok(Device::cuda(0));
        }
    }
    Err(unavailable(kind.name()))
}

/// The backend named by [`BACKEND_ENV`], else the first compiled-in one.
pub fn default_backend() -> Result<BackendKind> {
    match std::env::var(BACKEND_ENV) {
        Ok(name) if !name.trim().is_empty() => {
            let kind: BackendKind = name.parse()?;
            if kind.is_compiled() {
                Ok(kind)
            } else {
                Err(unavailable(&name))
            }
        }
        _ => BackendKind::compiled()
            .into_iter()
            .next()
            .ok_or_else(|| unavailable("default")),
    }
}

/// The plain device of [`default_backend`].
pub fn default_device() -> Result<Device> {
    device(default_backend()?)
}
