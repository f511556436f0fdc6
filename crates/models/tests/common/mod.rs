//! Shared by the integration tests that read the authors' reference export.

use std::path::PathBuf;

use induce_models::device::{BackendKind, default_backend};

/// Every `every`-th item when the default backend is CubeCL's CPU runtime, which compiles a
/// kernel (LLVM) for each new operation and shape it meets, else every item: the sweeps over
/// many neighbourhoods spend minutes there compiling kernels that their other shapes already
/// checked. CI runs every item on Flex, and the GPU check on a GPU.
pub fn step_under_cube_cpu(every: usize) -> usize {
    if matches!(default_backend(), Ok(BackendKind::CubeCpu)) {
        every
    } else {
        1
    }
}

/// `../shared/reference` beside the clone (or `$INDUCE_SHARED/reference`), or `None` with a
/// printed note when it is absent (the calling test then passes without checking).
pub fn reference_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("INDUCE_SHARED") {
        Some(s) => PathBuf::from(s),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
    .join("reference");
    if dir.join("syn1.npz").exists() {
        Some(dir)
    } else {
        eprintln!("skipped: {} not found (set INDUCE_SHARED)", dir.display());
        None
    }
}
