//! Whole-graph audits on Slurm job arrays: the scripts `induce slurm` writes.
//!
//! Every target is independent once the policy is trained, so an audit of every node splits
//! into the shards of `induce explain --shard I/N`, one per array task, joined by
//! `induce merge --from ROOT --count N` into the run an unsharded job writes. [`SlurmPlan`]
//! writes, under the run's root:
//!
//! * `explain.sbatch`: the array (`--array=1-N`); task `I` runs `induce explain ARGS --shard I/N
//!   --resume --out ROOT/shard-I` (so a rerun of one index, `sbatch --array=I explain.sbatch`,
//!   resumes that shard from its journal and leaves the others alone);
//! * `merge.sbatch`: `induce merge --from ROOT --count N --out ROOT/merged`, which names any
//!   missing or interrupted shard;
//! * `submit.sh`: submits the array, then the merge with `--dependency=afterok` on it;
//! * `logs/`: one log per task.
//!
//! The tasks train nothing: an inductive policy is trained once before (`induce train`) and
//! passed with `--policy`.
//!
//! ```
//! use induce::slurm::SlurmPlan;
//! let plan = SlurmPlan::new("/usr/bin/induce", "/scratch/audit", 8,
//!     ["--data", "graph.npz", "--black-box", "gcn.bpk", "--method", "transductive"]);
//! let script = plan.explain_script();
//! assert!(script.contains("#SBATCH --array=1-8"));
//! assert!(script.contains("--shard \"${SLURM_ARRAY_TASK_ID}/8\""));
//! assert!(plan.merge_script().contains("merge --from '/scratch/audit' --count 8"));
//! ```

use std::path::{Path, PathBuf};

use induce_models::io::checkpoint::atomic_write;

use crate::error::{Error, Result};

/// The array job of one audit (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmPlan {
    /// The `induce` binary the tasks run (an absolute path: the tasks run on other nodes).
    pub induce: PathBuf,
    /// The run's root: `shard-I/`, `merged/` and `logs/` go there.
    pub root: PathBuf,
    /// Array tasks (= shards).
    pub tasks: usize,
    /// `induce explain` arguments, without `--shard`, `--out`, `--resume` or `--threads`.
    pub explain_args: Vec<String>,
    /// CPUs per task (`--cpus-per-task`; the task explains on as many threads).
    pub cpus_per_task: usize,
    /// Memory per task (`--mem`, e.g. `4G`).
    pub mem: String,
    /// Time limit per task (`--time`, e.g. `02:00:00`).
    pub time: String,
    /// Partition (`--partition`), if any.
    pub partition: Option<String>,
    /// More `#SBATCH` options, one per entry (e.g. `--account=lab`).
    pub sbatch: Vec<String>,
    /// The tasks' working directory (`--chdir`): relative paths in `explain_args` resolve
    /// against it (`induce slurm` sets the directory it runs in).
    pub workdir: Option<PathBuf>,
}

/// Quotes `s` for a POSIX shell (single quotes; a single quote inside becomes `'\''`).
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl SlurmPlan {
    /// A plan of `tasks` array tasks with 1 CPU, 4 GB and 2 hours each (change the fields to
    /// size them, `docs/SCALE.md` says how).
    pub fn new<S: Into<String>>(
        induce: impl Into<PathBuf>,
        root: impl Into<PathBuf>,
        tasks: usize,
        explain_args: impl IntoIterator<Item = S>,
    ) -> Self {
        Self {
            induce: induce.into(),
            root: root.into(),
            tasks,
            explain_args: explain_args.into_iter().map(Into::into).collect(),
            cpus_per_task: 1,
            mem: "4G".into(),
            time: "02:00:00".into(),
            partition: None,
            sbatch: Vec::new(),
            workdir: None,
        }
    }

    /// Refuses a plan the array could not run: no task, no CPU, a relative path, or explain
    /// arguments that the script sets itself.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &'static str, value: String, reason: &str| {
            Err(Error::InvalidValue {
                what,
                value,
                reason: reason.into(),
            })
        };
        if self.tasks == 0 {
            return bad("array size", "0".into(), "an array has at least 1 task");
        }
        if self.cpus_per_task == 0 {
            return bad("cpus per task", "0".into(), "a task needs at least 1 CPU");
        }
        for (what, p) in [("induce binary", &self.induce), ("run root", &self.root)] {
            if !p.is_absolute() {
                return bad(
                    what,
                    p.display().to_string(),
                    "must be an absolute path: the array's tasks run elsewhere",
                );
            }
        }
        for a in &self.explain_args {
            let flag = a.split('=').next().unwrap_or(a);
            if ["--shard", "--out", "--resume", "--threads"].contains(&flag) {
                return bad(
                    "explain argument",
                    a.clone(),
                    "is set by the array script (one shard per task, its own directory, resumed \
                     on a rerun, the task's CPUs)",
                );
            }
        }
        Ok(())
    }

    fn header(&self, name: &str, log: &str, cpus: usize) -> String {
        let mut h = format!(
            "#!/bin/bash\n#SBATCH --job-name={name}\n#SBATCH --cpus-per-task={cpus}\n\
             #SBATCH --mem={}\n#SBATCH --time={}\n#SBATCH --output={}\n",
            self.mem,
            self.time,
            self.root.join("logs").join(log).display()
        );
        if let Some(p) = &self.partition {
            h.push_str(&format!("#SBATCH --partition={p}\n"));
        }
        if let Some(d) = &self.workdir {
            h.push_str(&format!("#SBATCH --chdir={}\n", d.display()));
        }
        for o in &self.sbatch {
            h.push_str(&format!("#SBATCH {o}\n"));
        }
        h
    }

    /// `explain.sbatch`: the array, one shard per task.
    pub fn explain_script(&self) -> String {
        let mut s = self.header("induce-explain", "explain-%A_%a.out", self.cpus_per_task);
        s = s.replacen(
            "#SBATCH --cpus-per-task",
            &format!("#SBATCH --array=1-{}\n#SBATCH --cpus-per-task", self.tasks),
            1,
        );
        let args: Vec<String> = self.explain_args.iter().map(|a| quote(a)).collect();
        s.push_str(&format!(
            "# Written by `induce slurm`: task I explains shard I/{n} of the targets into\n\
             # {root}/shard-I. Rerun one failed index with `sbatch --array=I explain.sbatch`:\n\
             # it resumes that shard from its journal.\n\
             set -euo pipefail\n\
             exec {induce} explain {args} \\\n  --shard \"${{SLURM_ARRAY_TASK_ID}}/{n}\" \
             --threads \"${{SLURM_CPUS_PER_TASK:-1}}\" --resume --no-progress \\\n  \
             --out {root_q}/\"shard-${{SLURM_ARRAY_TASK_ID}}\"\n",
            n = self.tasks,
            root = self.root.display(),
            root_q = quote(&self.root.display().to_string()),
            induce = quote(&self.induce.display().to_string()),
            args = args.join(" "),
        ));
        s
    }

    /// `merge.sbatch`: joins the shards into `ROOT/merged`.
    pub fn merge_script(&self) -> String {
        let mut s = self.header("induce-merge", "merge-%j.out", 1);
        let root = quote(&self.root.display().to_string());
        s.push_str(&format!(
            "set -euo pipefail\nexec {} merge --from {root} --count {} --out {root}/merged\n",
            quote(&self.induce.display().to_string()),
            self.tasks,
        ));
        s
    }

    /// `submit.sh`: the array, then the merge once every task has succeeded.
    pub fn submit_script(&self) -> String {
        let root = quote(&self.root.display().to_string());
        format!(
            "#!/bin/bash\n# Submits the audit: the explain array, then the merge after it.\n\
             set -euo pipefail\n\
             array=$(sbatch --parsable {root}/explain.sbatch)\n\
             merge=$(sbatch --parsable --dependency=afterok:\"${{array%%;*}}\" {root}/merge.sbatch)\n\
             echo \"explain array ${{array%%;*}} ({} tasks), merge ${{merge%%;*}} after it; logs \
             in {}/logs\"\n",
            self.tasks,
            self.root.display()
        )
    }

    /// Writes the three scripts (executable) and `logs/` under the root; returns their paths.
    pub fn write(&self) -> Result<Vec<PathBuf>> {
        self.validate()?;
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        let logs = self.root.join("logs");
        std::fs::create_dir_all(&logs).map_err(io(&logs))?;
        let mut out = Vec::new();
        for (name, text) in [
            ("explain.sbatch", self.explain_script()),
            ("merge.sbatch", self.merge_script()),
            ("submit.sh", self.submit_script()),
        ] {
            let path = self.root.join(name);
            atomic_write(&path, text.as_bytes())?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let perms = std::fs::Permissions::from_mode(0o755);
                std::fs::set_permissions(&path, perms).map_err(io(&path))?;
            }
            out.push(path);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_quote_arguments_and_refuse_what_they_set() {
        let plan = SlurmPlan::new(
            "/opt/induce",
            "/runs/it's",
            3,
            ["--data", "my graph.npz", "--method", "random"],
        );
        let e = plan.explain_script();
        assert!(
            e.contains("#SBATCH --array=1-3\n#SBATCH --cpus-per-task=1\n"),
            "{e}"
        );
        assert!(e.contains("'my graph.npz'"), "{e}");
        assert!(
            e.contains("--out '/runs/it'\\''s'/\"shard-${SLURM_ARRAY_TASK_ID}\""),
            "{e}"
        );
        assert!(plan.submit_script().contains("--dependency=afterok:"));
        let bad = SlurmPlan::new("/opt/induce", "/r", 3, ["--shard", "1/3"]);
        assert!(bad.validate().unwrap_err().to_string().contains("--shard"));
        let rel = SlurmPlan::new("induce", "/r", 3, ["--data", "x"]);
        assert!(rel.validate().unwrap_err().to_string().contains("absolute"));
        assert!(SlurmPlan::new("/i", "/r", 0, ["x"]).validate().is_err());
    }
}
