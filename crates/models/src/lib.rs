//! placeholder
pub use burn;
