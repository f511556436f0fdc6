//! The journal of a run in progress: what has been explained so far, so that a run killed at any
//! moment (`kill -9`, power loss) can be resumed and end with the same explanations as an
//! uninterrupted run.
//!
//! The journal is a hidden directory beside the run's target directory,
//! `.<name>.journal/`, holding `config.json` (the job, to refuse resuming a different one) and
//! one `<method>.jsonl` per method with one line per finished chunk of targets:
//! `{"seconds": 1.25, "explanations": [...]}`. Lines are appended and synced to disk; a line
//! cut short by a kill is discarded when the journal is reopened. Readers of run directories
//! never look at it; it is removed once the run is written.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ExplainError, Result};
use crate::explanation::Explanation;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExplainError + '_ {
    move |source| ExplainError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One line of a method's journal: a chunk of targets explained in `seconds`.
#[derive(Debug, Serialize, Deserialize)]
struct Chunk {
    seconds: f64,
    explanations: Vec<Explanation>,
}

/// The journal of one run (see the module docs).
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
}

impl Journal {
    /// The journal directory of the run that will end up in `target`.
    pub fn path_for(target: impl AsRef<Path>) -> PathBuf {
        let (parent, name) = super::run_dir::parent_and_name(target.as_ref());
        parent.join(format!(".{name}.journal"))
    }

    /// Opens the journal of the run that will end up in `target`, for the job described by
    /// `config`.
    ///
    /// * `resume == false`: any earlier journal there is discarded and a fresh one started.
    /// * `resume == true`: an earlier journal of the same job is continued (its finished chunks
    ///   are kept); one of a different job is an error naming both; none at all starts fresh.
    pub fn open(target: impl AsRef<Path>, config: &Value, resume: bool) -> Result<Self> {
        let dir = Self::path_for(target);
        let config_path = dir.join("config.json");
        if dir.exists() && !resume {
            std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
        }
        if dir.exists() {
            let bytes = std::fs::read(&config_path).ok();
            let old: Option<Value> = bytes.and_then(|b| serde_json::from_slice(&b).ok());
            match old {
                Some(old) if &old == config => return Ok(Self { dir }),
                Some(_) => {
                    return Err(ExplainError::InvalidValue {
                        what: "resume",
                        value: dir.display().to_string(),
                        reason: "the interrupted run there was started with another \
                                 configuration (data, methods, targets, seed or settings); \
                                 start over without resuming"
                            .into(),
                    });
                }
                // Killed before its config was complete: nothing of it can have been explained.
                None => std::fs::remove_dir_all(&dir).map_err(io(&dir))?,
            }
        }
        let staging = dir.with_extension("journal-new");
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
        }
        std::fs::create_dir_all(&staging).map_err(io(&staging))?;
        let cfg = staging.join("config.json");
        let bytes = serde_json::to_vec_pretty(config).map_err(|e| ExplainError::BadRunFile {
            path: cfg.clone(),
            line: None,
            message: e.to_string(),
        })?;
        let mut f = File::create(&cfg).map_err(io(&cfg))?;
        f.write_all(&bytes).map_err(io(&cfg))?;
        f.sync_all().map_err(io(&cfg))?;
        std::fs::rename(&staging, &dir).map_err(io(&dir))?;
        Ok(Self { dir })
    }

    /// The journal directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The journal of `method`: its finished explanations (in target order) and their time.
    pub fn method(&self, method: &str) -> Result<MethodJournal> {
        let safe: String = method
            .chars()
            .map(|c| match c.is_ascii_alphanumeric() || "-_+.".contains(c) {
                true => c,
                false => '_',
            })
            .collect();
        let path = self.dir.join(format!("{safe}.jsonl"));
        let mut done = Vec::new();
        let mut seconds = 0.0;
        if path.exists() {
            let bytes = std::fs::read(&path).map_err(io(&path))?;
            // Keep every complete, valid line; cut the file after the last one (a kill can
            // leave a torn last line).
            let mut valid_end = 0;
            for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
                if line.last() != Some(&b'\n') {
                    break;
                }
                match serde_json::from_slice::<Chunk>(line) {
                    Ok(c) => {
                        seconds += c.seconds;
                        done.extend(c.explanations);
                        valid_end += line.len();
                    }
                    // A last line that does not parse: torn by a kill between two writes.
                    Err(_) if valid_end + line.len() == bytes.len() => break,
                    Err(e) => {
                        return Err(ExplainError::BadRunFile {
                            path,
                            line: Some(i + 1),
                            message: format!("corrupt journal line: {e}"),
                        });
                    }
                }
            }
            if valid_end < bytes.len() {
                let f = OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(io(&path))?;
                f.set_len(valid_end as u64).map_err(io(&path))?;
                f.sync_all().map_err(io(&path))?;
            }
        }
        Ok(MethodJournal {
            path,
            done,
            seconds,
        })
    }

    /// Removes the journal if nothing has been explained into it yet (a run that failed
    /// before explaining anything leaves nothing behind); keeps it otherwise, for `--resume`.
    pub fn discard_if_empty(self) -> Result<()> {
        let entries = std::fs::read_dir(&self.dir).map_err(io(&self.dir))?;
        for e in entries {
            let e = e.map_err(io(&self.dir))?;
            let is_chunks = e.path().extension().is_some_and(|x| x == "jsonl");
            if is_chunks && e.metadata().map_err(io(&e.path()))?.len() > 0 {
                return Ok(());
            }
        }
        self.remove()
    }

    /// Removes the journal (the run has been written).
    pub fn remove(self) -> Result<()> {
        std::fs::remove_dir_all(&self.dir).map_err(io(&self.dir))
    }
}

/// One method's part of a [`Journal`].
#[derive(Debug)]
pub struct MethodJournal {
    path: PathBuf,
    done: Vec<Explanation>,
    seconds: f64,
}

impl MethodJournal {
    /// The explanations finished before, in target order.
    pub fn done(&self) -> &[Explanation] {
        &self.done
    }

    /// The time those took.
    pub fn seconds(&self) -> f64 {
        self.seconds
    }

    /// Appends a finished chunk and syncs it to disk.
    pub fn append(&mut self, explanations: &[Explanation], seconds: f64) -> Result<()> {
        let chunk = Chunk {
            seconds,
            explanations: explanations.to_vec(),
        };
        let mut line = serde_json::to_vec(&chunk).map_err(|e| ExplainError::BadRunFile {
            path: self.path.clone(),
            line: None,
            message: e.to_string(),
        })?;
        line.push(b'\n');
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(io(&self.path))?;
        f.write_all(&line).map_err(io(&self.path))?;
        f.sync_data().map_err(io(&self.path))?;
        self.seconds += seconds;
        self.done.extend(chunk.explanations);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Edit;

    fn e(t: u32) -> Explanation {
        Explanation::counterfactual(t, 1, 0, vec![Edit::delete(t, t + 1)])
    }

    #[test]
    fn chunks_survive_reopening_and_a_torn_line_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("run");
        let cfg = serde_json::json!({"seed": 1});
        let j = Journal::open(&target, &cfg, false).unwrap();
        assert_eq!(j.path(), dir.path().join(".run.journal"));
        let mut m = j.method("cf-gnnexplainer++").unwrap();
        m.append(&[e(1), e(2)], 0.5).unwrap();
        m.append(&[e(3)], 0.25).unwrap();
        // A kill in the middle of the next append leaves half a line.
        let path = j.path().join("cf-gnnexplainer++.jsonl");
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"seconds": 0.1, "explanations": [{"tar"#)
            .unwrap();
        drop(f);

        let j = Journal::open(&target, &cfg, true).unwrap();
        let mut m = j.method("cf-gnnexplainer++").unwrap();
        assert_eq!(m.done(), &[e(1), e(2), e(3)]);
        assert_eq!(m.seconds(), 0.75);
        m.append(&[e(4)], 1.0).unwrap();
        let m = j.method("cf-gnnexplainer++").unwrap();
        assert_eq!(m.done().len(), 4);
        assert!(j.method("random").unwrap().done().is_empty());

        // Another job's journal is refused; without --resume it is started over.
        let other = serde_json::json!({"seed": 2});
        let err = Journal::open(&target, &other, true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("another configuration"), "{err}");
        let j = Journal::open(&target, &other, false).unwrap();
        assert!(j.method("cf-gnnexplainer++").unwrap().done().is_empty());
        j.remove().unwrap();
        assert!(!dir.path().join(".run.journal").exists());

        // A journal with chunks survives a failure; an empty one does not.
        let j = Journal::open(&target, &cfg, false).unwrap();
        j.method("x").unwrap().append(&[e(1)], 0.1).unwrap();
        j.discard_if_empty().unwrap();
        assert!(dir.path().join(".run.journal").exists());
        let j = Journal::open(&target, &cfg, false).unwrap();
        j.discard_if_empty().unwrap();
        assert!(!dir.path().join(".run.journal").exists());
    }

    #[test]
    fn a_corrupt_line_before_the_end_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("run");
        let cfg = serde_json::json!({});
        let j = Journal::open(&target, &cfg, false).unwrap();
        let mut m = j.method("random").unwrap();
        m.append(&[e(1)], 0.5).unwrap();
        let path = j.path().join("random.jsonl");
        let good = std::fs::read(&path).unwrap();
        let mut bad = b"{not json}\n".to_vec();
        bad.extend(good);
        std::fs::write(&path, bad).unwrap();
        let err = j.method("random").unwrap_err().to_string();
        assert!(err.contains("random.jsonl line 1"), "{err}");
    }
}
