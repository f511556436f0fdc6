//! `induce explain`: explain target nodes with one or more methods into a run directory.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use induce::cli::Bars;
use induce::explain::Locked;
use induce::explain::pipeline::format_table;
use induce::methods::Variant;
use induce::run::{ExplainJob, RunContext, RunOptions, Sample, explain, load_data, read_pairs};
use induce::{Shard, TargetSpec};

use crate::args::{DataArgs, FamilyArg, InduceArgs, ModelArgs};
use crate::pick_device;

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Methods, comma-separated or repeated (`--help` lists them; the library's declarations
    /// write that list).
    #[arg(long, value_delimiter = ',', required = true, help_heading = "Run")]
    pub method: Vec<Variant>,
    /// Output directory (written all at once; an existing run there is replaced). While the
    /// run is going, its progress is journaled in the hidden `.NAME.journal` beside it.
    #[arg(long, help_heading = "Run")]
    pub out: PathBuf,
    /// Continue an interrupted run of the same job into the same --out (killed, crashed,
    /// out of time): the targets it had explained are kept, the rest explained; the result equals
    /// an uninterrupted run's. Without it, an interrupted run's journal is discarded.
    #[arg(long, help_heading = "Run")]
    pub resume: bool,
    #[command(flatten, next_help_heading = "Data")]
    pub data: DataArgs,
    #[command(flatten, next_help_heading = "Model")]
    pub model: ModelArgs,
    /// A trained policy (.bpk or the directory `induce train` wrote), for inductive,
    /// inductive-best-of-k, inductive-fine-tuned and inductive-del-only (its
    /// policy-del-only.bpk, from `induce train --edits del`).
    #[arg(long, help_heading = "Model")]
    pub policy: Option<PathBuf>,
    /// Budget of every baseline: random masks (random), optimisation steps (cf-gnnexplainer,
    /// cf2) or training epochs (pgexplainer) [default: each method's authors', per dataset
    /// family: 500 masks; 500 steps; 2000 steps on BA-Shapes, 500 on the trees; 10-30 epochs].
    #[arg(long, help_heading = "Baselines")]
    pub iterations: Option<usize>,
    /// Targets: test (the split's test nodes), train, eval (the file's evaluation set, e.g. a
    /// reference npz's eval_idx), all, a list 12,40,77, or @file (one id a line). test, train
    /// and all keep only the paper's targets unless --all-nodes: the nodes the black box
    /// predicts correctly on their 4-hop neighbourhood and, when the data has motif ground
    /// truth (a `motif` array, a generated benchmark, the authors' syn1/syn4/syn5), a non-zero
    /// label; without ground truth label 0 counts too. How many targets were chosen, and by
    /// which rule, is printed on stderr (docs/FORMATS.md).
    #[arg(
        long,
        default_value = "test",
        allow_hyphen_values = true,
        help_heading = "Targets"
    )]
    pub targets: TargetSpec,
    #[command(flatten, next_help_heading = "Protocol and restrictions")]
    pub family: FamilyArg,
    /// Explain a random sample of N of the targets (seeded by --seed; uniform among the
    /// paper's targets, drawn before sharding) [default: all of them]
    #[arg(long, value_name = "N", help_heading = "Targets")]
    pub sample: Option<usize>,
    /// Explain only shard I of N (1-based, contiguous): `induce merge` joins the shards. `auto`:
    /// the shard of this Slurm array task (SLURM_ARRAY_TASK_ID, _COUNT, _MIN) or Kubernetes
    /// Indexed Job (JOB_COMPLETION_INDEX with INDUCE_SHARD_COUNT).
    #[arg(long, help_heading = "Scale")]
    pub shard: Option<ShardArg>,
    /// Restrict edits to these node pairs (the paper's V_c): one pair `u w` a line. InduCE's
    /// methods only: a baseline in --method is refused with it.
    #[arg(long, help_heading = "Protocol and restrictions")]
    pub allowed: Option<PathBuf>,
    /// Nodes no edit may touch, as an endpoint of a deletion or an addition (comma-separated
    /// ids). InduCE's methods and the searches (greedy, exact); another baseline is refused with
    /// it.
    #[arg(
        long,
        value_name = "IDS",
        value_delimiter = ',',
        help_heading = "Protocol and restrictions"
    )]
    pub lock_nodes: Vec<u32>,
    /// Node pairs no edit may delete or add: a file of pairs `u w` a line, as --allowed.
    /// InduCE's methods and the searches.
    #[arg(long, value_name = "FILE", help_heading = "Protocol and restrictions")]
    pub lock_edges: Option<PathBuf>,

    /// The largest counterfactual size searched (every edit set up to it is tried).
    #[arg(long, value_name = "K", help_heading = "Searches")]
    pub max_size: Option<usize>,
    /// Give up on a target after N black-box evaluations (its record says so).
    #[arg(long, value_name = "N", help_heading = "Searches")]
    pub max_evaluations: Option<u64>,
    /// Judge only the K actions of each step that a first-order estimate of the margin they
    /// leave ranks first (one gradient of the black box per step; a bounded reference for
    /// graphs where judging every action costs too much; with --edits …,feat also the K
    /// feature actions so ranked) [default: every action].
    #[arg(long, value_name = "K", help_heading = "Searches")]
    pub shortlist: Option<usize>,
    /// Where additions (target, v) may go: ball (the target's neighbourhood, the paper's action
    /// space) or graph (also the nodes elsewhere that the black box predicts most confidently as
    /// another class).
    #[arg(long, value_name = "ball|graph", help_heading = "Searches")]
    pub additions: Option<induce::baselines::Additions>,
    /// InduCE's greedy episodes (inductive's, inductive-best-of-k's first, the transductive
    /// search's) look ahead: at each step the policy's K most probable actions are each judged
    /// by the black box and the best taken (a flip first, else the smallest margin of the
    /// original class); the transductive search then also plays its greedy episode first and
    /// after its last update. Forward passes only. 0: the policy's argmax, as the paper.
    #[arg(long, value_name = "K", help_heading = "InduCE")]
    pub lookahead: Option<usize>,
    /// With --lookahead: while none of the policy's K proposals flips the target, judge its next
    /// ones too (the window doubles, in the policy's order) as long as the last doubling found a
    /// better one.
    #[arg(long, requires = "lookahead", help_heading = "InduCE")]
    pub widen: bool,
    /// Temperature T of the sampled episodes: each samples from the policy's
    /// distribution tempered to p^(1/T) (1: the policy's own, the paper's; above 1 the samples
    /// spread). With --lookahead K each sampled step judges K candidates drawn without
    /// replacement and takes the best.
    #[arg(long, value_name = "T", help_heading = "InduCE")]
    pub temperature: Option<f32>,
    /// Episodes per target: the greedy one and K-1 sampled from the trained policy.
    #[arg(long, value_name = "K", help_heading = "InduCE")]
    pub samples: Option<usize>,
    /// Also play the per-target policy's greedy episode after every N-th update and after the
    /// last, keeping its counterfactual when smaller (not in the paper; never worse: the sampled
    /// episodes stay the same). 0: never.
    #[arg(long, value_name = "N", help_heading = "InduCE")]
    pub greedy_every: Option<usize>,
    /// Explain N targets together, in lockstep (with
    /// `--kernel burn`, one block-diagonal forward pass of the policy per step for all of them:
    /// use hundreds on a GPU). With the host kernel the results do not depend on it; with
    /// `--kernel burn` a batch sums in another order, so a near-tie between two actions can
    /// break the other way (every counterfactual is still checked on the whole graph).
    #[arg(long, value_name = "N", help_heading = "Scale")]
    pub batch_targets: Option<usize>,
    /// Kernel of the black box's verdicts when it should differ from --kernel's: e.g.
    /// `--kernel burn --black-box-kernel host --batch-targets 300` runs the policy on the GPU
    /// and the black box's incremental CPU kernel on all cores. With `burn` on a GPU and
    /// --batch-targets above 1, the paper's GCN takes each step's verdicts for the whole batch
    /// in one pass (INDUCE_BATCHED_VERDICTS=1 or 0 forces it on or off) [default: --kernel's].
    #[arg(long, value_name = "KERNEL", help_heading = "Scale")]
    pub black_box_kernel: Option<induce::rl::Kernel>,
    /// Explain as the paper describes InduCE: no minimality pass (by default every InduCE
    /// counterfactual is reduced to a 1-minimal one; the baselines never are), and every
    /// method's verdicts taken on the target's frozen neighbourhood, as the authors' code does
    /// (by default a counterfactual must flip the model on the whole edited graph; the frozen
    /// neighbourhood misses what an added edge brings into the model's receptive field, so some
    /// of its counterfactuals do not flip the model: the `valid %` column counts those that do).
    #[arg(long, help_heading = "Protocol and restrictions")]
    pub paper_faithful: bool,
    #[command(flatten)]
    pub induce: InduceArgs,
    /// Worker threads, 0 for all cores [default: all cores]; results do not depend on it.
    #[arg(long, help_heading = "Scale")]
    pub threads: Option<usize>,
}

/// `--shard`: `I/N`, or `auto` (from the job array's environment).
#[derive(Debug, Clone, Copy)]
pub enum ShardArg {
    /// A given shard.
    Fixed(Shard),
    /// The shard of this array task ([`Shard::from_env`]).
    Auto,
}

impl std::str::FromStr for ShardArg {
    type Err = induce::explain::ExplainError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "auto" => Ok(ShardArg::Auto),
            other => other.parse().map(ShardArg::Fixed),
        }
    }
}

impl ExplainArgs {
    /// The library job these arguments describe (validated by the library).
    fn to_job(&self) -> Result<ExplainJob> {
        let seed = self.data.seed;
        let options = RunOptions {
            seed: Some(seed),
            family: self.family.family.0,
            iterations: self.iterations,
            threads: self.threads,
            samples: self.samples,
            greedy_every: self.greedy_every,
            batch_targets: self.batch_targets,
            black_box_kernel: self.black_box_kernel,
            paper_faithful: self.paper_faithful,
            max_size: self.max_size,
            max_evaluations: self.max_evaluations,
            shortlist: self.shortlist,
            additions: self.additions,
            lookahead: self.lookahead,
            widen: self.widen.then_some(true),
            temperature: self.temperature,
            lock_nodes: (!self.lock_nodes.is_empty()).then(|| self.lock_nodes.clone()),
            ..self.induce.options()
        };
        let mut job = options.explain_job(
            &self.data.data,
            self.model.black_box.clone(),
            self.model.arch.clone(),
            self.policy.clone(),
            &self.method,
            self.targets.clone(),
        );
        job.format = self.data.format.format;
        job.sample = self.sample.map(|size| Sample { size, seed });
        job.shard = match self.shard {
            None => None,
            Some(ShardArg::Fixed(s)) => Some(s),
            Some(ShardArg::Auto) => Some(Shard::from_process_env()?),
        };
        if self.allowed.is_some() || self.lock_edges.is_some() {
            // Node count for the range check: loading the data twice is cheap next to
            // explaining.
            let n = load_data(&job.data, job.format, job.seed)?
                .graph
                .num_nodes();
            if let Some(path) = &self.allowed {
                job.restrictions.allowed = Some(read_pairs(path, n)?);
            }
            if let Some(path) = &self.lock_edges {
                let edges = read_pairs(path, n)?;
                let nodes = job.restrictions.locked.nodes.clone();
                job.restrictions.locked = Locked::new(nodes, edges);
            }
        }
        Ok(job)
    }
}

/// Runs `induce explain`.
pub fn run(a: ExplainArgs) -> Result<()> {
    let dev = pick_device(a.data.backend)?;
    let job = a.to_job()?;
    let bars = Bars::new(!a.data.no_progress);
    let notice = |line: &str| eprintln!("{line}");
    let run = RunContext::new(&dev)
        .with_progress(&bars)
        .with_notice(&notice)
        .with_out_dir(&a.out, a.resume.into());
    let (summary, _) = explain(&job, &run)?;
    print!("{}", format_table(&[&summary]));
    println!("results in {}", a.out.display());
    if let Some(kib) = crate::peak_resident_kib() {
        // For sizing a cluster task's memory (`induce slurm --mem`): the task logs keep it.
        eprintln!("peak resident memory: {} MiB", kib.div_ceil(1024));
    }
    Ok(())
}

/// `induce explain`'s command with what the library declares written into its help: the
/// methods (`--method`), which methods read each method's setting, and the library's defaults
/// of the flags that leave them to it.
pub fn with_library_help(cmd: clap::Command) -> clap::Command {
    let mut cmd = cmd.mut_arg("method", |a| {
        a.help("Methods, comma-separated or repeated (--help lists them)")
            .long_help(induce::methods::method_help())
    });
    let mut declared: Vec<&str> = Vec::new();
    for d in induce::methods::ALL {
        for s in d.settings {
            if !declared.contains(s) {
                declared.push(s);
            }
        }
    }
    for option in declared {
        let readers: Vec<&str> = (induce::methods::ALL.iter())
            .filter(|d| d.settings.contains(&option))
            .map(|d| d.name)
            .collect();
        cmd = append_help(cmd, option, &format!("[read by: {}]", readers.join(", ")));
    }
    for (option, default) in library_defaults() {
        cmd = append_help(cmd, option, &format!("[default: {default}]"));
    }
    cmd
}

/// The defaults the library gives the flags that have no default of their own: read from it,
/// so that the help cannot disagree with it.
fn library_defaults() -> Vec<(&'static str, String)> {
    let exact = induce::baselines::ExactConfig::default();
    let induce = induce::rl::InduceConfig::default();
    vec![
        ("samples", induce::run::DEFAULT_SAMPLES.to_string()),
        ("max_size", exact.max_size.to_string()),
        ("max_evaluations", exact.max_evaluations.to_string()),
        (
            "additions",
            induce::baselines::GreedyConfig::default()
                .additions
                .to_string(),
        ),
        (
            "feature_nodes",
            induce::baselines::FeatureNodes::default().to_string(),
        ),
        (
            "feature_quantiles",
            induce::baselines::features::DEFAULT_FEATURE_QUANTILES.to_string(),
        ),
        ("greedy_every", induce.train.greedy_every.to_string()),
        ("batch_targets", induce.inference.batch.to_string()),
        ("lookahead", induce.inference.lookahead.to_string()),
        ("kernel", induce::rl::Kernel::default().to_string()),
        (
            "max_neighbourhood",
            induce::run::DEFAULT_MAX_NEIGHBOURHOOD.to_string(),
        ),
    ]
}

/// `cmd` with `suffix` appended to the help of the flag of `option` (a `RunOptions` field,
/// which is the argument's id). Panics when no flag has that id: the test below runs it.
fn append_help(cmd: clap::Command, option: &str, suffix: &str) -> clap::Command {
    let id = option.to_string();
    cmd.mut_arg(id, |a| {
        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        let long = a.get_long_help().map(|h| format!("{h} {suffix}"));
        let a = a.help(format!("{help} {suffix}"));
        match long {
            Some(l) => a.long_help(l),
            None => a,
        }
    })
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        explain: ExplainArgs,
    }

    fn help() -> String {
        with_library_help(Cli::command())
            .render_long_help()
            .to_string()
    }

    #[test]
    fn the_help_is_written_from_the_library() {
        let help = help();
        // Every method, with its summary; every declared setting has its flag (with_library_help
        // panics otherwise), which names the methods that read it.
        for d in induce::methods::ALL {
            assert!(
                help.contains(&format!("{}: {}", d.name, &d.summary[..20])),
                "{}",
                d.name
            );
        }
        assert!(help.contains("[read by: greedy]"), "{help}");
        assert!(help.contains("[read by: exact]"), "{help}");
        let exact = induce::baselines::ExactConfig::default();
        assert!(
            help.contains(&format!("[default: {}]", exact.max_size)),
            "{help}"
        );
        for heading in [
            "Data:",
            "Model:",
            "Targets:",
            "Protocol and restrictions:",
            "InduCE:",
        ] {
            assert!(help.contains(heading), "{heading}");
        }
        for heading in ["Searches:", "Baselines:", "Scale:"] {
            assert!(help.contains(heading), "{heading}");
        }
    }

    #[test]
    fn a_flag_no_method_reads_is_refused_and_defaults_are_not_chosen() {
        let args = |line: &str| {
            let cmd = with_library_help(Cli::command());
            let m = cmd
                .try_get_matches_from(line.split_whitespace())
                .map_err(|e| e.to_string())?;
            let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&m).unwrap();
            let job = cli.explain.to_job().map_err(|e| e.to_string())?;
            job.validate()
                .map(|()| job.chosen.clone())
                .map_err(|e| crate::flags_for_fields(&e.to_string()))
        };
        let base = "x --data tree-cycles --black-box gcn.bpk --out o";
        let e = args(&format!(
            "{base} --method cf-gnnexplainer --lookahead 64 --shortlist 8 --max-size 2"
        ))
        .unwrap_err();
        assert!(
            e.contains("--lookahead") && e.contains("read by inductive"),
            "{e}"
        );
        let e = args(&format!("{base} --method cf-gnnexplainer --shortlist 8")).unwrap_err();
        assert!(
            e.contains("`--shortlist`") && e.ends_with("read by greedy"),
            "{e}"
        );
        let e = args(&format!("{base} --method greedy --policy p.bpk")).unwrap_err();
        assert!(e.contains("--policy"), "{e}");
        // Read by one method of the list: kept. Only what was given is recorded as chosen.
        let chosen = args(&format!(
            "{base} --method greedy,cf2 --shortlist 8 --iterations 5"
        ));
        assert_eq!(
            chosen.unwrap(),
            ["iterations", "seed", "shortlist"].map(String::from)
        );
    }
}
