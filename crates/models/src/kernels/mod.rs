//! The tensor plumbing every Burn network of the crate stands on.
//!
//! * [`tensors`]: a graph uploaded to a device ([`GraphTensors`](tensors::GraphTensors),
//!   [`WeightedEdges`](tensors::WeightedEdges)) and the dense and sparse operations the layers
//!   share;
//! * [`spmm`]: message passing as a CSR segment reduction, a Burn backend extension (Flex and
//!   CubeCL kernels, a hand-written autodiff backward);
//! * [`fused`]: the policy's fused inference kernels (CubeCL), a Burn backend extension.
//!
//! Not to be confused with [`Kernel`](crate::Kernel), the choice between a network's Burn
//! module and its hand-written host copy.

// burn-ndarray is deprecated upstream (Burn 0.22 favours Flex); the card keeps it as a backend,
// named in these two modules' backend extensions. Flex-only builds (CI's clippy) still see every
// other deprecation here.
#[cfg_attr(feature = "ndarray", allow(deprecated))]
pub mod fused;
#[cfg_attr(feature = "ndarray", allow(deprecated))]
pub mod spmm;
pub mod tensors;
