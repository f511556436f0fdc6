//! Saving and loading models: Burn records (burnpack) written atomically, with their config in a
//! JSON file beside them.
//!
//! A checkpoint `model.bpk` is accompanied by `model.json` (the model's `Config`). Loading reads
//! the config, builds the module and applies the record; a checkpoint whose dimensions do not match
//! the data it is used with is a [`ModelError::DimensionMismatch`] naming both numbers.

use std::io::Write;
use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::store::ModuleRecord;
use burn::tensor::{Bytes, Device};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{ModelError, Result};
use crate::gcn::{Gcn, GcnConfig};

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, flushed and
/// synced, then renamed over `path`. Either the old or the new content is visible, never a
/// partial file; the temporary file is removed on failure.
pub fn atomic_write(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    let path = path.as_ref();
    let io = |source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

/// The config file that sits beside a checkpoint: `model.bpk` → `model.json`.
pub fn config_path(checkpoint: &Path) -> PathBuf {
    checkpoint.with_extension("json")
}

/// Saves `module` as a burnpack record at `path` and `config` as JSON beside it, both atomically.
pub fn save_module<M: Module, C: Serialize>(
    module: &M,
    config: &C,
    path: impl AsRef<Path>,
) -> Result<()> {
    let path = path.as_ref();
    if path.extension().is_some_and(|e| e == "json") {
        return Err(ModelError::checkpoint(
            path,
            "a checkpoint may not end in .json: its config is written beside it as <name>.json",
        ));
    }
    let json = serde_json::to_vec_pretty(config)
        .map_err(|e| ModelError::checkpoint(config_path(path), e.to_string()))?;
    let bytes = module
        .clone()
        .into_record()
        .into_bytes()
        .map_err(|e| ModelError::checkpoint(path, format!("cannot serialise record: {e}")))?;
    atomic_write(config_path(path), &json)?;
    atomic_write(path, &bytes)
}

/// Reads the JSON config beside a checkpoint.
pub fn load_config<C: DeserializeOwned>(checkpoint: impl AsRef<Path>) -> Result<C> {
    let checkpoint = checkpoint.as_ref();
    // Name the checkpoint itself when it is missing, not the config beside it.
    if !checkpoint.is_file() {
        return Err(ModelError::Io {
            path: checkpoint.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such checkpoint file"),
        });
    }
    let p = config_path(checkpoint);
    let text = std::fs::read(&p).map_err(|source| ModelError::Io {
        path: p.clone(),
        source,
    })?;
    serde_json::from_slice(&text).map_err(|e| ModelError::checkpoint(p, format!("bad config: {e}")))
}

/// Applies the burnpack record at `path` to an initialised `module` of the same shape.
pub fn load_record<M: Module>(module: M, path: impl AsRef<Path>) -> Result<M> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| ModelError::Io {
        path: path.into(),
        source,
    })?;
    let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes))
        .map_err(|e| ModelError::checkpoint(path, format!("not a valid burnpack record: {e}")))?;
    module
        .try_load_record(record)
        .map_err(|e| ModelError::checkpoint(path, format!("record does not fit the model: {e}")))
}

/// Saves a GCN and its config (`path` and `path.json`).
pub fn save_gcn(model: &Gcn, config: &GcnConfig, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    save_module(model, config, path)
}

/// Loads a GCN saved by [`save_gcn`]. When `expect` is `Some((input_dim, num_classes))` (the
/// dataset's), a checkpoint with other dimensions is a [`ModelError::DimensionMismatch`].
pub fn load_gcn(
    path: impl AsRef<Path>,
    expect: Option<(usize, usize)>,
    device: &Device,
) -> Result<Gcn> {
    let path = path.as_ref();
    let config: GcnConfig = load_config(path)?;
    if let Some((d, c)) = expect {
        check_dims(path, "input feature dimension", config.input_dim, d)?;
        check_dims(path, "number of classes", config.num_classes, c)?;
    }
    check_gcn_size(path, &config)?;
    load_record(config.init(device), path)
}

/// Refuses a GCN config that is empty or declares more parameters than its record file can
/// hold (at least 2 bytes per value), before the model is allocated from it: a corrupt
/// `"hidden": 1e12` is an error naming the value, not an out-of-memory abort.
fn check_gcn_size(path: &Path, config: &GcnConfig) -> Result<()> {
    let (d, c, h) = (
        config.input_dim as u64,
        config.num_classes as u64,
        config.hidden as u64,
    );
    let cfg = config_path(path);
    if d == 0 || c == 0 || h == 0 {
        return Err(ModelError::checkpoint(
            cfg,
            format!("bad config: empty model (input_dim {d}, num_classes {c}, hidden {h})"),
        ));
    }
    check_record_holds(
        path,
        config.num_params(),
        &format!("input_dim {d}, num_classes {c}, hidden {h}"),
    )
}

/// Refuses a config whose model would have `params` parameters (`None`: the count overflows)
/// when the burnpack record at `path` is too small to hold them (at least 2 bytes per value):
/// call it with the count computed from the config before building the module, so a corrupt
/// config is a [`ModelError::Checkpoint`] naming the config file and `what` (its sizes), not
/// an allocation of the size it declares.
pub fn check_record_holds(path: &Path, params: Option<u64>, what: &str) -> Result<()> {
    let file_len = std::fs::metadata(path)
        .map_err(|source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    match params {
        Some(p) if p.saturating_mul(2) <= file_len => Ok(()),
        _ => Err(ModelError::checkpoint(
            config_path(path),
            format!(
                "bad config: {what} declare {} parameters, more than the {file_len}-byte \
                 record {} can hold",
                params.map_or_else(|| "too many".to_string(), |p| p.to_string()),
                path.display()
            ),
        )),
    }
}

/// Errors unless a checkpoint's `found` size equals the data's `expected` one. The message reads
/// "checkpoint PATH does not fit the data: WHAT (the data's vs the checkpoint's): expected
/// DATA, got CHECKPOINT".
pub fn check_dims(path: &Path, what: &str, found: usize, expected: usize) -> Result<()> {
    if found == expected {
        return Ok(());
    }
    Err(ModelError::DimensionMismatch {
        what: format!(
            "checkpoint {} does not fit the data: {what} (the data's vs the checkpoint's)",
            path.display()
        ),
        expected,
        got: found,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::test_device;

    #[test]
    fn a_json_checkpoint_path_is_refused_and_leaves_nothing_behind() {
        let dev = test_device().unwrap();
        let cfg = GcnConfig::new(3, 2);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("model.json");
        assert!(matches!(
            save_gcn(&cfg.init(&dev), &cfg, &p),
            Err(ModelError::Checkpoint { .. })
        ));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let ok = dir.path().join("model.bpk");
        save_gcn(&cfg.init(&dev), &cfg, &ok).unwrap();
        assert!(load_gcn(&ok, Some((3, 2)), &dev).is_ok());
    }
}
