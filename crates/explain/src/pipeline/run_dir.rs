//! A run directory: `config.json`, `summary.json`, `explanations.jsonl` (and whatever else the
//! caller stages, e.g. checkpoints), written all at once or not at all.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{ExplainError, Result};
use crate::pipeline::{MethodRun, RunRow, RunSummary, TargetRecord};
use crate::verdict::Verdict;

/// The three files every run directory holds.
pub const RUN_FILES: [&str; 3] = ["config.json", "summary.json", "explanations.jsonl"];

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExplainError + '_ {
    move |source| ExplainError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A run directory being written. Files go to a hidden staging directory beside the target
/// (`.<name>.partial-<pid>`); [`RunWriter::finish`] writes the three run files and moves the
/// whole directory into place. Dropped unfinished (an error, a panic), the staging directory is
/// removed: no half-written run is ever left at the target path.
///
/// An existing target directory is replaced only if it is itself a run (it holds a
/// `summary.json` or `config.json`) or is empty; anything else is refused, so a mistyped `--out`
/// never deletes a user's files.
#[derive(Debug)]
pub struct RunWriter {
    target: PathBuf,
    staging: PathBuf,
    finished: bool,
}

impl RunWriter {
    /// Starts a run that will end up in `dir`.
    pub fn create(dir: impl AsRef<Path>) -> Result<Self> {
        let target = dir.as_ref().to_path_buf();
        check_replaceable(&target)?;
        let (parent, name) = parent_and_name(&target);
        std::fs::create_dir_all(&parent).map_err(|e| {
            // The commonest cause: a file where the path needs a directory.
            match parent.ancestors().find(|a| a.is_file()) {
                Some(file) => ExplainError::Io {
                    path: file.to_path_buf(),
                    source: std::io::Error::new(
                        e.kind(),
                        format!(
                            "a file, in the way of the output directory {}",
                            target.display()
                        ),
                    ),
                },
                None => io(&parent)(e),
            }
        })?;
        remove_stale_staging(&parent, &name);
        let staging = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
        }
        std::fs::create_dir(&staging).map_err(io(&staging))?;
        Ok(Self {
            target,
            staging,
            finished: false,
        })
    }

    /// The staging directory: write extra files (checkpoints) here.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// The directory the run will end up in.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Writes `config.json`, `summary.json` and `explanations.jsonl` and moves the run into
    /// place.
    pub fn finish(
        mut self,
        config: &Value,
        summary: &RunSummary,
        runs: &[MethodRun],
    ) -> Result<()> {
        let records: Vec<&TargetRecord> = runs.iter().flat_map(|r| &r.records).collect();
        self.write_files(config, summary, &records)?;
        check_replaceable(&self.target)?;
        if self.target.exists() {
            let mut old = self.staging.clone().into_os_string();
            old.push(".old");
            let old = PathBuf::from(old);
            std::fs::rename(&self.target, &old).map_err(io(&self.target))?;
            std::fs::rename(&self.staging, &self.target).map_err(io(&self.target))?;
            std::fs::remove_dir_all(&old).map_err(io(&old))?;
        } else {
            std::fs::rename(&self.staging, &self.target).map_err(io(&self.target))?;
        }
        self.finished = true;
        Ok(())
    }

    fn write_files(
        &self,
        config: &Value,
        summary: &RunSummary,
        records: &[&TargetRecord],
    ) -> Result<()> {
        let json = |v: &dyn erased::Ser, name: &str| -> Result<()> {
            let path = self.staging.join(name);
            let bytes = v.to_vec().map_err(|e| ExplainError::BadRunFile {
                path: path.clone(),
                line: None,
                message: e.to_string(),
            })?;
            std::fs::write(&path, bytes).map_err(io(&path))
        };
        json(config, "config.json")?;
        json(summary, "summary.json")?;
        let mut jsonl = Vec::new();
        for r in records {
            serde_json::to_writer(&mut jsonl, r).expect("records serialise");
            jsonl.push(b'\n');
        }
        let path = self.staging.join("explanations.jsonl");
        std::fs::write(&path, jsonl).map_err(io(&path))
    }
}

impl Drop for RunWriter {
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

mod erased {
    /// Pretty JSON of any serialisable value, behind a trait object.
    pub trait Ser {
        fn to_vec(&self) -> serde_json::Result<Vec<u8>>;
    }
    impl<T: serde::Serialize> Ser for T {
        fn to_vec(&self) -> serde_json::Result<Vec<u8>> {
            let mut v = serde_json::to_vec_pretty(self)?;
            v.push(b'\n');
            Ok(v)
        }
    }
}

/// The directory a run directory `target` sits in (`.` for a bare name) and its file name
/// (`run` for none): where its hidden siblings (staging, journal) go.
pub(crate) fn parent_and_name(target: &Path) -> (PathBuf, String) {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    (parent, name)
}

/// Removes the staging directories `.<name>.partial-<pid>` that writers killed before they
/// finished left beside the target (on Linux: those whose process is gone; elsewhere none).
fn remove_stale_staging(parent: &Path, name: &str) {
    let prefix = format!(".{name}.partial-");
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = file.strip_prefix(&prefix) else {
            continue;
        };
        let pid = pid.strip_suffix(".old").unwrap_or(pid);
        let gone = pid.parse::<u32>().is_ok_and(|p| {
            Path::new("/proc/self").exists() && !Path::new(&format!("/proc/{p}")).exists()
        });
        if gone {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn check_replaceable(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    if !dir.is_dir() {
        return Err(ExplainError::InvalidValue {
            what: "output directory",
            value: dir.display().to_string(),
            reason: "it exists and is not a directory".into(),
        });
    }
    let is_run = RUN_FILES[..2].iter().any(|f| dir.join(f).exists());
    let empty = std::fs::read_dir(dir).map_err(io(dir))?.next().is_none();
    if is_run || empty {
        return Ok(());
    }
    Err(ExplainError::InvalidValue {
        what: "output directory",
        value: dir.display().to_string(),
        reason: "it exists, is not empty and holds no run (no summary.json or config.json); \
                 choose a new directory"
            .into(),
    })
}

/// Writes a whole run into `dir` (see [`RunWriter`]; use it directly to stage checkpoints
/// beside the results).
pub fn write_run(
    dir: impl AsRef<Path>,
    config: &Value,
    summary: &RunSummary,
    runs: &[MethodRun],
) -> Result<()> {
    RunWriter::create(dir)?.finish(config, summary, runs)
}

/// A run read back from its directory.
#[derive(Debug, Clone, PartialEq)]
pub struct RunData {
    /// Where it was read from.
    pub dir: PathBuf,
    /// `config.json`.
    pub config: Value,
    /// `summary.json`.
    pub summary: RunSummary,
    /// `explanations.jsonl`, grouped per method in the order of `summary.runs`.
    pub runs: Vec<MethodRun>,
}

/// Reads a run directory written by [`write_run`]. Every fault names the file (and line).
pub fn read_run(dir: impl AsRef<Path>) -> Result<RunData> {
    let dir = dir.as_ref();
    if !dir.is_dir() {
        return Err(ExplainError::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not a run directory (no such directory)",
            ),
        });
    }
    let read = |name: &str| -> Result<(PathBuf, String)> {
        let p = dir.join(name);
        let text = std::fs::read_to_string(&p).map_err(|e| match e.kind() {
            // A directory without the run's files: say what it is not.
            std::io::ErrorKind::NotFound => ExplainError::Io {
                path: dir.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("not a run directory (no {name})"),
                ),
            },
            _ => io(&p)(e),
        })?;
        Ok((p, text))
    };
    let bad =
        |path: &Path, line: Option<usize>, e: &dyn std::fmt::Display| ExplainError::BadRunFile {
            path: path.to_path_buf(),
            line,
            message: e.to_string(),
        };
    let (p, text) = read("config.json")?;
    let config: Value = serde_json::from_str(&text).map_err(|e| bad(&p, None, &e))?;
    let (p, text) = read("summary.json")?;
    let summary: RunSummary = serde_json::from_str(&text).map_err(|e| bad(&p, None, &e))?;
    let (p, text) = read("explanations.jsonl")?;
    let mut runs: Vec<MethodRun> = summary
        .runs
        .iter()
        .map(|r| MethodRun {
            method: r.method.clone(),
            records: Vec::new(),
            train_seconds: r.train_seconds,
            explain_seconds: r.explain_seconds,
            notes: r.notes.clone(),
        })
        .collect();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let r: TargetRecord = serde_json::from_str(line).map_err(|e| bad(&p, Some(i + 1), &e))?;
        let Some(run) = runs.iter_mut().find(|m| m.method == r.method) else {
            return Err(bad(
                &p,
                Some(i + 1),
                &format!("method `{}` has no row in summary.json", r.method),
            ));
        };
        run.records.push(r);
    }
    for (run, row) in runs.iter().zip(&summary.runs) {
        if run.records.len() != row.metrics.targets {
            return Err(bad(
                &p,
                None,
                &format!(
                    "summary.json says method `{}` explained {} targets, explanations.jsonl has \
                     {} lines for it (truncated or mixed run?)",
                    row.method,
                    row.metrics.targets,
                    run.records.len()
                ),
            ));
        }
    }
    Ok(RunData {
        dir: dir.to_path_buf(),
        config,
        summary,
        runs,
    })
}

fn without_shard(config: &Value) -> Value {
    let mut c = config.clone();
    if let Some(o) = c.as_object_mut()
        && o.contains_key("shard")
    {
        o.insert("shard".into(), Value::Null);
    }
    c
}

/// The directory shard `index` of an array run writes under `root`: `root/shard-INDEX` (the
/// layout of the scripts `induce slurm` writes).
pub fn shard_dir(root: &Path, index: usize) -> PathBuf {
    root.join(format!("shard-{index}"))
}

/// [`merge_runs`] of the `count` shards of an array run under `root` ([`shard_dir`]). A shard
/// whose directory is missing or is not a finished run is refused BY NAME: its index, its
/// directory, and whether an interrupted task left its journal there (then a rerun of that one
/// array index resumes it). Merging again gives the same run (idempotent).
pub fn merge_shard_root(root: &Path, count: usize) -> Result<RunData> {
    if count == 0 {
        return Err(ExplainError::Merge("a run has at least 1 shard".into()));
    }
    let mut problems = Vec::new();
    for i in 1..=count {
        let dir = shard_dir(root, i);
        if read_run(&dir).is_ok() {
            continue;
        }
        let journal = super::Journal::path_for(&dir);
        let why = match (dir.exists(), journal.exists()) {
            (_, true) => format!(
                "interrupted (its journal {} is there: rerun index {i}, it resumes)",
                journal.display()
            ),
            (false, false) => {
                "missing (its task failed before writing anything, or has not run)".to_string()
            }
            (true, false) => "not a finished run (no summary.json, explanations.jsonl and \
                              config.json)"
                .to_string(),
        };
        problems.push(format!("shard {i}/{count} at {}: {why}", dir.display()));
    }
    if !problems.is_empty() {
        let n = problems.len();
        problems.truncate(10);
        if n > 10 {
            problems.push(format!("… {n} shards in all"));
        }
        return Err(ExplainError::Merge(problems.join("; ")));
    }
    let dirs: Vec<PathBuf> = (1..=count).map(|i| shard_dir(root, i)).collect();
    merge_runs(&dirs)
}

/// Merges the shards `1/N ..= N/N` of one run (given in any order) into the whole run: records
/// concatenated in shard order per method, metrics recomputed from the records (so they equal
/// those of an unsharded run), explain times summed over shards, train time the largest.
///
/// Refused with [`ExplainError::Merge`]: a directory that is not a shard, shards of different
/// counts, a missing or repeated shard, or shards whose configuration (apart from the shard),
/// dataset, seed or methods differ.
pub fn merge_runs(dirs: &[impl AsRef<Path>]) -> Result<RunData> {
    let mut parts: Vec<RunData> = dirs.iter().map(read_run).collect::<Result<_>>()?;
    if parts.is_empty() {
        return Err(ExplainError::Merge("no run directory given".into()));
    }
    let shard_of = |r: &RunData| {
        r.summary.shard.ok_or_else(|| {
            ExplainError::Merge(format!(
                "{} is not a shard (its summary.json has no `shard`)",
                r.dir.display()
            ))
        })
    };
    let count = shard_of(&parts[0])?.count;
    for p in &parts {
        let s = shard_of(p)?;
        if s.count != count {
            return Err(ExplainError::Merge(format!(
                "{} is shard {s}, {} is shard {} (different shard counts)",
                p.dir.display(),
                parts[0].dir.display(),
                shard_of(&parts[0])?
            )));
        }
    }
    parts.sort_by_key(|p| p.summary.shard.map(|s| s.index));
    let have: Vec<usize> = parts
        .iter()
        .map(|p| p.summary.shard.map_or(0, |s| s.index))
        .collect();
    // Compared without materialising 1..=count: a summary.json may declare any count.
    if have.len() != count || have.iter().enumerate().any(|(k, &i)| i != k + 1) {
        let mut distinct = have.clone();
        distinct.dedup();
        let n_missing = count.saturating_sub(distinct.len());
        let mut missing: Vec<String> = (1..=count)
            .filter(|i| distinct.binary_search(i).is_err())
            .take(10)
            .map(|i| format!("{i}/{count}"))
            .collect();
        if n_missing > missing.len() {
            missing.push(format!("… {n_missing} in all"));
        }
        let mut repeated: Vec<String> = have
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| format!("{}/{count}", w[0]))
            .collect();
        repeated.dedup();
        return Err(ExplainError::Merge(format!(
            "shards missing: [{}]; repeated: [{}]",
            missing.join(", "),
            repeated.join(", ")
        )));
    }
    let first = &parts[0];
    let config = without_shard(&first.config);
    let methods: Vec<&str> = first.runs.iter().map(|r| r.method.as_str()).collect();
    for p in &parts[1..] {
        let differ = |what: &str| {
            ExplainError::Merge(format!(
                "{} and {} differ in {what}",
                first.dir.display(),
                p.dir.display()
            ))
        };
        if without_shard(&p.config) != config {
            let key = match (config.as_object(), p.config.as_object()) {
                (Some(a), Some(b)) => a
                    .iter()
                    .find(|(k, v)| b.get(*k) != Some(v))
                    .map(|(k, _)| k.clone())
                    .unwrap_or_else(|| "the set of keys".into()),
                _ => "their configuration".into(),
            };
            return Err(differ(&format!("config.json (`{key}`)")));
        }
        let s = (&p.summary, &first.summary);
        if s.0.dataset != s.1.dataset || s.0.seed != s.1.seed || s.0.graph != s.1.graph {
            return Err(differ("dataset, seed or graph"));
        }
        if p.runs
            .iter()
            .map(|r| r.method.as_str())
            .ne(methods.iter().copied())
        {
            return Err(differ("methods"));
        }
    }
    let mut runs: Vec<MethodRun> = Vec::new();
    for (m, method) in methods.iter().enumerate() {
        let mut run = MethodRun {
            method: method.to_string(),
            records: Vec::new(),
            train_seconds: 0.0,
            explain_seconds: 0.0,
            notes: first.runs[m].notes.clone(),
        };
        for p in &parts {
            let r = &p.runs[m];
            run.records.extend(r.records.iter().cloned());
            run.train_seconds = run.train_seconds.max(r.train_seconds);
            run.explain_seconds += r.explain_seconds;
        }
        runs.push(run);
    }
    let mut summary = first.summary.clone();
    summary.shard = None;
    summary.runs = runs.iter().map(MethodRun::row).collect();
    Ok(RunData {
        dir: PathBuf::new(),
        config,
        summary,
        runs,
    })
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{:.2}", 100.0 * x))
        .unwrap_or_else(|| "-".into())
}

/// The results of one or several runs as a table like the paper's (fidelity and accuracies in
/// %; `-` where a metric is undefined, with the reason in the notes below the table).
pub fn format_table(runs: &[&RunSummary]) -> String {
    let mut out = String::new();
    let mut notes: Vec<String> = Vec::new();
    for s in runs {
        let shard = s.shard.map(|s| format!(", shard {s}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "{} (seed {}{shard}): {} nodes, {} edges; black box train {} % test {} %",
            s.dataset,
            s.seed,
            s.graph.nodes,
            s.graph.edges,
            pct(s.black_box.train_accuracy),
            pct(s.black_box.test_accuracy)
        );
        for n in &s.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    let many = runs.len() > 1;
    // The accuracies need a background class (the motif graphs): hidden where no row has them.
    let acc = runs
        .iter()
        .flat_map(|s| &s.runs)
        .any(|r| r.metrics.accuracy.is_some() || r.metrics.strict_accuracy.is_some());
    // Features changed: shown where a row searched feature edits (`--edits …,feat`).
    let feat = runs
        .iter()
        .flat_map(|s| &s.runs)
        .any(|r| r.metrics.features_changed.is_some());
    let _ = writeln!(
        out,
        "{}{:<26} {:>7} {:>8} {:>8} {:>13} {}{}{:>8} {:>9} {:>8} {:>8} {:>9}",
        if many { "run  " } else { "" },
        "method",
        "targets",
        "fid %",
        "valid %",
        "size",
        if feat {
            format!("{:>6} ", "feat")
        } else {
            String::new()
        },
        if acc {
            format!("{:>8} {:>8} ", "acc %", "strict %")
        } else {
            String::new()
        },
        "sparsity",
        "add/del",
        "1-min %",
        "train s",
        "explain s"
    );
    let mut legend = false;
    for (i, s) in runs.iter().enumerate() {
        for row in &s.runs {
            out.push_str(&format_row(many.then_some(i + 1), row, acc, feat));
            legend |= row.metrics.accuracy.is_some();
            let m = &row.metrics;
            if m.verdict == Verdict::Neighbourhood {
                let n = format!(
                    "{}: verdicts on the frozen neighbourhood (paper protocol): fid % counts the \
                     {} counterfactuals found there; {} flip the model on the whole graph \
                     (whole-graph fidelity {} %)",
                    row.method,
                    m.found,
                    m.valid.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                    pct(m.valid_fidelity)
                );
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
            for n in &row.notes {
                let n = format!("{}: {n}", row.method);
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
    }
    if legend {
        notes.push(
            "acc % (the paper's accuracy): share of an explanation's edits that are additions \
             or deletions between two nodes the model predicts as non-zero classes: class 0 is \
             taken as the background (non-motif) class, as in BA-Shapes / Tree-Cycles / \
             Tree-Grid (shown only for graphs with motif ground truth)"
                .into(),
        );
    }
    for n in notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// `valid / found` in %: the share of the reported counterfactuals that flip the model on the
/// whole graph (`-` when unchecked or nothing found).
fn valid_pct(m: &crate::metrics::Summary) -> String {
    match m.valid {
        Some(v) if m.found > 0 => format!("{:.2}", 100.0 * v as f64 / m.found as f64),
        _ => "-".into(),
    }
}

/// One row of [`format_table`]; `acc`: with the accuracy columns; `feat`: with the mean number
/// of features changed.
fn format_row(run: Option<usize>, row: &RunRow, acc: bool, feat: bool) -> String {
    let r = &row.metrics;
    let size = match (r.size_mean, r.size_std) {
        (Some(m), Some(sd)) => format!("{m:.2} ± {sd:.2}"),
        _ => "-".into(),
    };
    format!(
        "{}{:<26} {:>7} {:>8} {:>8} {:>13} {}{}{:>8} {:>9} {:>8} {:>8.1} {:>9.2}\n",
        run.map(|i| format!("{i:<5}")).unwrap_or_default(),
        row.method,
        r.targets,
        pct(r.fidelity),
        valid_pct(r),
        size,
        match (feat, r.features_changed) {
            (false, _) => String::new(),
            (true, Some(f)) => format!("{f:>6.2} "),
            (true, None) => format!("{:>6} ", "-"),
        },
        if acc {
            format!("{:>8} {:>8} ", pct(r.accuracy), pct(r.strict_accuracy))
        } else {
            String::new()
        },
        r.sparsity
            .map(|v| format!("{v:.3}"))
            .unwrap_or_else(|| "-".into()),
        format!("{}/{}", r.additions, r.deletions),
        pct(r.one_minimal),
        row.train_seconds,
        row.explain_seconds
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::testutil::{DEGREE_RULE, Prune, graph};
    use crate::pipeline::{
        BlackBoxAccuracy, EvalContext, ExplainOptions, GraphSize, Shard, explain_targets,
    };

    fn summary(runs: &[MethodRun], shard: Option<Shard>) -> RunSummary {
        RunSummary {
            dataset: "toy".into(),
            seed: 42,
            graph: GraphSize { nodes: 8, edges: 6 },
            black_box: BlackBoxAccuracy::default(),
            shard,
            runs: runs.iter().map(MethodRun::row).collect(),
            notes: vec!["strict_accuracy: example note".into()],
        }
    }

    fn run_on(targets: &[u32], shard: Option<Shard>, dir: &Path) {
        let g = graph();
        let ctx = EvalContext::new(&g, &DEGREE_RULE, crate::Protocol::exact(2)).unwrap();
        let t = shard.map_or(targets.to_vec(), |s| s.select(targets));
        let a = explain_targets(&Prune, &ctx, &t, &ExplainOptions::default()).unwrap();
        let mut b = a.clone();
        b.method = "prune-again".into();
        for r in &mut b.records {
            r.method = b.method.clone();
        }
        let config = serde_json::json!({"method": "prune", "shard": shard});
        let runs = [a, b];
        write_run(dir, &config, &summary(&runs, shard), &runs).unwrap();
    }

    #[test]
    fn write_read_round_trip_and_merge_equals_unsharded() {
        let tmp = tempfile::tempdir().unwrap();
        let targets = [0, 4, 5, 7, 1, 2, 3];
        let whole = tmp.path().join("whole");
        run_on(&targets, None, &whole);
        let back = read_run(&whole).unwrap();
        assert_eq!(back.runs.len(), 2);
        assert_eq!(back.runs[0].records.len(), 7);
        assert_eq!(back.summary.runs[0], back.runs[0].row());
        let mut dirs = Vec::new();
        for i in [3, 1, 2] {
            let d = tmp.path().join(format!("s{i}"));
            run_on(&targets, Some(Shard { index: i, count: 3 }), &d);
            dirs.push(d);
        }
        let merged = merge_runs(&dirs).unwrap();
        assert_eq!(
            merged.config,
            serde_json::json!({"method": "prune", "shard": null})
        );
        assert_eq!(merged.runs.len(), 2);
        for (m, w) in merged.runs.iter().zip(&back.runs) {
            assert_eq!(m.records, w.records);
        }
        for (m, w) in merged.summary.runs.iter().zip(&back.summary.runs) {
            assert_eq!(m.metrics, w.metrics);
        }
        // a missing shard is named
        let e = merge_runs(&dirs[..2]).unwrap_err().to_string();
        assert!(e.contains("shards missing: [2/3]"), "{e}");
        let e = merge_runs(&[&whole]).unwrap_err().to_string();
        assert!(e.contains("is not a shard"), "{e}");
        // the table names both methods and the note
        let t = format_table(&[&back.summary, &merged.summary]);
        assert!(
            t.contains("prune-again") && t.contains("note: strict_accuracy"),
            "{t}"
        );
    }

    #[test]
    fn refuses_to_replace_a_foreign_directory_and_leaves_nothing_on_error() {
        let tmp = tempfile::tempdir().unwrap();
        let foreign = tmp.path().join("mine");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("thesis.tex"), "x").unwrap();
        let e = RunWriter::create(&foreign).unwrap_err().to_string();
        assert!(e.contains("holds no run"), "{e}");
        assert!(foreign.join("thesis.tex").exists());
        // A file where the output path needs a directory is named as such.
        let e = RunWriter::create(foreign.join("thesis.tex").join("run")).unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("thesis.tex: a file, in the way of the output directory"),
            "{e}"
        );
        {
            let w = RunWriter::create(tmp.path().join("new")).unwrap();
            std::fs::write(w.path().join("black_box.bpk"), "x").unwrap();
            // dropped without finish: an error happened
        }
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "only `mine` is left: {left:?}");
    }

    #[test]
    fn truncated_or_corrupt_files_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("r");
        run_on(&[0, 4, 5], None, &d);
        let p = d.join("explanations.jsonl");
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        std::fs::write(&p, lines[..lines.len() - 1].join("\n")).unwrap();
        let e = read_run(&d).unwrap_err().to_string();
        assert!(e.contains("truncated or mixed run"), "{e}");
        std::fs::write(&p, format!("{}\n{{\"method\":", lines[0])).unwrap();
        let e = read_run(&d).unwrap_err().to_string();
        assert!(e.contains("explanations.jsonl line 2: "), "{e}");
        let e = read_run(tmp.path().join("nope")).unwrap_err().to_string();
        assert!(e.contains("nope: not a run directory"), "{e}");
        let other = tmp.path().join("other");
        std::fs::create_dir(&other).unwrap();
        let e = read_run(&other).unwrap_err().to_string();
        assert!(
            e.ends_with("other: not a run directory (no config.json)"),
            "{e}"
        );
    }
}
