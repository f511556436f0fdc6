//! Measurement harnesses around the method (not the method itself): the performance table
//! ([`bench`](mod@bench)), the ogbn-arxiv-scale run ([`scale`]) and the parity check against the authors'
//! shipped explanations ([`parity`]). The examples `bench` and `reference_parity` are thin
//! wrappers around them.

pub mod bench;
pub mod parity;
pub mod scale;

pub use parity::{DatasetParity, ParityError, ParityReport};
