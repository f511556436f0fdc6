//! Weights in and out of files.
//!
//! * [`checkpoint`]: the crate's own checkpoints (Burn records written atomically, their config
//!   in JSON beside them), for any module; the GCN's save and load;
//! * [`mod@reference`]: the authors' weights (safetensors) for the GCN and the policy, and the
//!   safetensors reader the [PyG models](crate::pyg) use.

pub mod checkpoint;
pub mod reference;
