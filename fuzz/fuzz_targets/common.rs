//! Shared by the fuzz targets: one scratch folder per process, where each input is written to
//! the file the reader then opens (every reader takes a path).

use std::path::PathBuf;
use std::sync::OnceLock;

/// This process's scratch folder (removed by the OS's temp cleaning; inputs overwrite it).
pub fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("induce-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}
