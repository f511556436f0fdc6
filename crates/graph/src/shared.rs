//! Where the tests find the project's shared data (`../shared` beside the clone: the authors'
//! graphs and weights, the real datasets), and what they do without it.

use std::path::{Path, PathBuf};

/// The environment variable that names the shared folder (default: `../shared` beside the
/// workspace).
pub const SHARED_VAR: &str = "INDUCE_SHARED";

/// The environment variable that makes a missing shared folder an error: CI sets it, so that no
/// test there passes by skipping.
pub const REQUIRE_VAR: &str = "INDUCE_REQUIRE_SHARED";

/// `$INDUCE_SHARED/<rel>` (default `../shared/<rel>` beside the workspace) when
/// `<rel>/<probe>` exists (`probe` empty: the folder itself). Otherwise a line saying the test
/// is skipped and `None`, or, when `INDUCE_REQUIRE_SHARED` is set, a panic naming the path:
/// a fresh clone without the data skips, CI fails.
///
/// ```
/// // No such file anywhere: skipped (unless INDUCE_REQUIRE_SHARED is set).
/// if std::env::var_os(induce_graph::shared::REQUIRE_VAR).is_none() {
///     assert!(induce_graph::shared::shared_path("reference", "no-such-file").is_none());
/// }
/// ```
pub fn shared_path(rel: &str, probe: &str) -> Option<PathBuf> {
    let base = std::env::var_os(SHARED_VAR)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let dir = base.join(rel);
    let found = match probe {
        "" => dir.is_dir(),
        p => dir.join(p).exists(),
    };
    if found {
        return Some(dir);
    }
    let what = dir.join(probe);
    if std::env::var_os(REQUIRE_VAR).is_some() {
        panic!(
            "{} not found, and {REQUIRE_VAR} is set: this test needs the shared data \
             (set {SHARED_VAR})",
            what.display()
        );
    }
    eprintln!("skipped: {} not found (set {SHARED_VAR})", what.display());
    None
}
