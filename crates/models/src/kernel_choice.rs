//! Which implementation of a network runs: the one choice every InduCE loop and every
//! gradient-based baseline is parametrised by.
//!
//! Every network of this crate exists as a Burn module (the reference, on any Burn device) and
//! as a hand-written CPU kernel (`host_*`: the same function with fused loops, pinned to Burn by
//! tests). The loops above them (rollouts, training, search, soft-mask optimisation) are written
//! once over a trait with one implementation per kernel; this enum picks the implementation.

use serde::{Deserialize, Serialize};

/// The implementation of the networks' forward and backward passes. Both compute the same
/// function (tests pin the host kernels to Burn's forward, autodiff and Adam); they differ in
/// speed and in where they run.
///
/// Serialised as `"host"` / `"burn"`; parsed from the same strings.
///
/// ```
/// use induce_models::Kernel;
/// assert_eq!("burn".parse::<Kernel>().unwrap(), Kernel::Burn);
/// assert_eq!(Kernel::default(), Kernel::Host);
/// assert_eq!(Kernel::Host.to_string(), "host");
/// assert!("gpu".parse::<Kernel>().unwrap_err().to_string().contains("host, burn"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kernel {
    /// The fused CPU kernels: no per-operation overhead; episodes and targets run on all cores.
    /// The default: on CPU an order of magnitude faster than Burn on neighbourhood-sized graphs.
    #[default]
    Host,
    /// Burn tensors on the given device (autodiff for gradients): the path for GPU devices.
    Burn,
}

impl Kernel {
    /// Every kernel, in a stable order.
    pub const ALL: [Kernel; 2] = [Kernel::Host, Kernel::Burn];

    /// The kernel's name as serialised (`host`, `burn`).
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Host => "host",
            Kernel::Burn => "burn",
        }
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A kernel name that is not one of [`Kernel::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown kernel {0:?}: expected one of host, burn")]
pub struct UnknownKernel(pub String);

impl std::str::FromStr for Kernel {
    type Err = UnknownKernel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kernel::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownKernel(s.to_string()))
    }
}
