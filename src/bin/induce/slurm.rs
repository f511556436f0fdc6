//! `induce slurm`: write the Slurm array scripts of a whole-graph audit.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Parser};
use induce::slurm::SlurmPlan;

use crate::explain::ExplainArgs;

#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// Array tasks: the targets are split into this many shards, one per task.
    #[arg(long)]
    pub tasks: usize,
    /// CPUs per task (each task explains its shard on as many threads).
    #[arg(long, default_value_t = 1)]
    pub cpus_per_task: usize,
    /// Memory per task (Slurm's --mem, e.g. 4G; docs/SCALE.md sizes it).
    #[arg(long, default_value = "4G")]
    pub mem: String,
    /// Time limit per task (Slurm's --time).
    #[arg(long, default_value = "02:00:00")]
    pub time: String,
    /// Slurm partition.
    #[arg(long)]
    pub partition: Option<String>,
    /// More #SBATCH options, e.g. --sbatch=--account=lab (repeatable).
    #[arg(long, allow_hyphen_values = true)]
    pub sbatch: Vec<String>,
    /// The run's root: the scripts, logs/, shard-I/ and merged/ go there.
    #[arg(long)]
    pub out: PathBuf,
    /// The `induce explain` arguments of the audit (without --shard, --out, --resume and
    /// --threads, which the script sets), after `--`.
    #[arg(last = true, required = true)]
    pub explain: Vec<String>,
}

/// `induce explain`'s arguments alone, to check them before any task runs.
#[derive(Debug, Parser)]
struct Check {
    #[command(flatten)]
    explain: ExplainArgs,
}

/// Runs `induce slurm`.
pub fn run(a: SlurmArgs) -> Result<()> {
    let root =
        std::path::absolute(&a.out).with_context(|| format!("resolving {}", a.out.display()))?;
    let induce = std::env::current_exe().context("locating the induce binary")?;
    let plan = SlurmPlan {
        cpus_per_task: a.cpus_per_task,
        mem: a.mem,
        time: a.time,
        partition: a.partition,
        sbatch: a.sbatch,
        workdir: Some(std::env::current_dir().context("reading the working directory")?),
        ..SlurmPlan::new(induce, &root, a.tasks, a.explain.clone())
    };
    plan.validate()?;
    // The explain arguments must parse as the tasks will see them (a typo fails here, not on
    // the cluster).
    let probe = ["induce-explain".to_string()]
        .into_iter()
        .chain(a.explain.iter().cloned())
        .chain([
            "--out".to_string(),
            root.join("shard-1").display().to_string(),
        ]);
    Check::try_parse_from(probe).map_err(|e| {
        let first = e.to_string();
        let first = first.lines().next().unwrap_or_default();
        anyhow::anyhow!(
            "the explain arguments: {}",
            first.trim_start_matches("error: ")
        )
    })?;
    let files = plan.write()?;
    for f in &files {
        println!("wrote {}", f.display());
    }
    println!(
        "submit with: {} (or: sbatch {}; after it, sbatch {})",
        root.join("submit.sh").display(),
        root.join("explain.sbatch").display(),
        root.join("merge.sbatch").display()
    );
    Ok(())
}
