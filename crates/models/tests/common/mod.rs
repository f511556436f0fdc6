//! Shared by the integration tests that read the authors' reference export.

use std::path::PathBuf;

use induce_models::testing::reduced_test_sweeps;

/// Every `every`-th item when [`reduced_test_sweeps`] (CubeCL's CPU runtime, which compiles a
/// kernel for each new shape), else every item.
pub fn step_under_cube_cpu(every: usize) -> usize {
    if reduced_test_sweeps() { every } else { 1 }
}

/// `../shared/reference` beside the clone (or `$INDUCE_SHARED/reference`), or `None` with a
/// printed note when it is absent (the calling test then passes without checking).
pub fn reference_dir() -> Option<PathBuf> {
    induce_graph::shared::shared_path("reference", "syn1.npz")
}
