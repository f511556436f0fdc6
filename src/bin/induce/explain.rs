//! `induce explain`: explain target nodes with one or more methods into a run directory.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use induce::cli::Bars;
use induce::explain::Locked;
use induce::explain::pipeline::format_table;
use induce::methods::Method;
use induce::run::{ExplainJob, RunContext, RunOptions, Sample, explain, load_data, read_pairs};
use induce::{Shard, TargetSpec};

use crate::args::{DataArgs, FamilyArg, InduceArgs, ModelArgs};
use crate::pick_device;

#[derive(Debug, Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// A trained policy (.bpk or the directory `induce train` wrote), for inductive,
    /// inductive-best-of-k, inductive-fine-tuned and inductive-del-only (its
    /// policy-del-only.bpk, from `induce train --edits del`).
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// Methods, comma-separated or repeated: InduCE's inductive, inductive-best-of-k,
    /// transductive, inductive-fine-tuned (the --policy fine-tuned per target with the
    /// transductive schedule), inductive-del-only, untrained; the baselines random,
    /// cf-gnnexplainer, cf-gnnexplainer++, cf2, pgexplainer (trained on the training split's
    /// targets); the search references greedy (exhaustive one-step search in InduCE's action
    /// space) and exact (the certified minimum, up to --max-size).
    #[arg(long, value_delimiter = ',', required = true)]
    pub method: Vec<Method>,
    /// Budget of every baseline: random masks (random), optimisation steps (cf-gnnexplainer,
    /// cf2) or training epochs (pgexplainer) [default: each method's authors', per dataset
    /// family: 500 masks; 500 steps; 2000 steps on BA-Shapes, 500 on the trees; 10-30 epochs].
    #[arg(long)]
    pub iterations: Option<usize>,
    /// Targets: test (the split's test nodes), train, eval (the file's evaluation set, e.g. a
    /// reference npz's eval_idx), all, a list 12,40,77, or @file (one id a line). test, train
    /// and all keep only the paper's targets unless --all-nodes: the nodes the black box
    /// predicts correctly on their 4-hop neighbourhood and, when the data has motif ground
    /// truth (a `motif` array, a generated benchmark, the authors' syn1/syn4/syn5), a non-zero
    /// label; without ground truth label 0 counts too. How many targets were chosen, and by
    /// which rule, is printed on stderr (docs/FORMATS.md).
    #[arg(long, default_value = "test", allow_hyphen_values = true)]
    pub targets: TargetSpec,
    #[command(flatten)]
    pub family: FamilyArg,
    /// Explain a random sample of N of the targets (seeded by --seed; uniform among the
    /// paper's targets, drawn before sharding) [default: all of them]
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    /// Explain only shard I of N (1-based, contiguous): `induce merge` joins the shards. `auto`:
    /// the shard of this Slurm array task (SLURM_ARRAY_TASK_ID, _COUNT, _MIN) or Kubernetes
    /// Indexed Job (JOB_COMPLETION_INDEX with INDUCE_SHARD_COUNT).
    #[arg(long)]
    pub shard: Option<ShardArg>,
    /// Restrict edits to these node pairs (the paper's V_c): one pair `u w` a line. InduCE's
    /// methods only: a baseline in --method is refused with it.
    #[arg(long)]
    pub allowed: Option<PathBuf>,
    /// Nodes no edit may touch, as an endpoint of a deletion or an addition (comma-separated
    /// ids). InduCE's methods and the searches (greedy, exact); another baseline is refused with
    /// it.
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub lock_nodes: Vec<u32>,
    /// Node pairs no edit may delete or add: a file of pairs `u w` a line, as --allowed.
    /// InduCE's methods and the searches.
    #[arg(long, value_name = "FILE")]
    pub lock_edges: Option<PathBuf>,

    /// exact: the largest counterfactual size searched (every edit set up to it is tried).
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub max_size: usize,
    /// exact: give up on a target after N black-box evaluations (its record says so).
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub max_evaluations: u64,
    /// greedy: judge only the K actions of each step that a first-order estimate of the margin
    /// they leave ranks first (one gradient of the black box per step; a bounded reference for
    /// graphs where judging every action costs too much). Default: every action.
    #[arg(long, value_name = "K")]
    pub shortlist: Option<usize>,
    /// greedy and exact: where additions (target, v) may go: ball (the target's neighbourhood,
    /// the paper's action space) or graph (also the nodes elsewhere that the black box predicts
    /// most confidently as another class).
    #[arg(long, value_name = "ball|graph", default_value = "ball")]
    pub additions: induce::baselines::Additions,
    /// InduCE's greedy episodes (inductive, inductive-best-of-k's first, the transductive
    /// search's) look ahead: at each step the policy's K most probable actions are each judged
    /// by the black box and the best taken (a flip first, else the smallest margin of the
    /// original class); the transductive search then also plays its greedy episode first and
    /// after its last update. Forward passes only. 0: the policy's argmax, as the paper.
    #[arg(long, value_name = "K")]
    pub lookahead: Option<usize>,
    /// With --lookahead: while none of the policy's K proposals flips the target, judge its next
    /// ones too (the window doubles, in the policy's order) as long as the last doubling found a
    /// better one.
    #[arg(long, requires = "lookahead")]
    pub widen: bool,
    /// Temperature T of inductive-best-of-k's sampled episodes: each samples from the policy's
    /// distribution tempered to p^(1/T) (1: the policy's own, the paper's; above 1 the samples
    /// spread). With --lookahead K each sampled step judges K candidates drawn without
    /// replacement and takes the best.
    #[arg(long, value_name = "T")]
    pub temperature: Option<f32>,
    /// Episodes per target of inductive-best-of-k: the greedy one and K-1 sampled from the
    /// trained policy.
    #[arg(long, default_value_t = 16)]
    pub samples: usize,
    /// transductive and inductive-fine-tuned: also play the per-target policy's greedy episode
    /// after every N-th update and after the last, keeping its counterfactual when smaller (not
    /// in the paper; never worse: the sampled episodes stay the same). 0: never.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub greedy_every: usize,
    /// inductive, inductive-best-of-k, untrained: explain N targets together, in lockstep (with
    /// `--kernel burn`, one block-diagonal forward pass of the policy per step for all of them:
    /// use hundreds on a GPU). With the host kernel the results do not depend on it; with
    /// `--kernel burn` a batch sums in another order, so a near-tie between two actions can
    /// break the other way (every counterfactual is still checked on the whole graph).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub batch_targets: usize,
    /// Kernel of the black box's verdicts when it should differ from --kernel's: e.g.
    /// `--kernel burn --black-box-kernel host --batch-targets 300` runs the policy on the GPU
    /// and the black box's incremental CPU kernel on all cores. With `burn` on a GPU and
    /// --batch-targets above 1, the paper's GCN takes each step's verdicts for the whole batch
    /// in one pass (INDUCE_BATCHED_VERDICTS=1 or 0 forces it on or off) [default: --kernel's].
    #[arg(long, value_name = "KERNEL")]
    pub black_box_kernel: Option<induce::rl::Kernel>,
    /// Explain as the paper describes InduCE: no minimality pass (by default every InduCE
    /// counterfactual is reduced to a 1-minimal one; the baselines never are), and every
    /// method's verdicts taken on the target's frozen neighbourhood, as the authors' code does
    /// (by default a counterfactual must flip the model on the whole edited graph; the frozen
    /// neighbourhood misses what an added edge brings into the model's receptive field, so some
    /// of its counterfactuals do not flip the model: the `valid %` column counts those that do).
    #[arg(long)]
    pub paper_faithful: bool,
    #[command(flatten)]
    pub induce: InduceArgs,
    /// Worker threads, 0 for all cores [default: all cores]; results do not depend on it.
    #[arg(long, default_value_t = 0, hide_default_value = true)]
    pub threads: usize,
    /// Output directory (written all at once; an existing run there is replaced). While the
    /// run is going, its progress is journaled in the hidden `.NAME.journal` beside it.
    #[arg(long)]
    pub out: PathBuf,
    /// Continue an interrupted run of the same job into the same --out (killed, crashed,
    /// out of time): the targets it had explained are kept, the rest explained; the result equals
    /// an uninterrupted run's. Without it, an interrupted run's journal is discarded.
    #[arg(long)]
    pub resume: bool,
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
            threads: Some(self.threads),
            samples: Some(self.samples),
            greedy_every: Some(self.greedy_every),
            batch_targets: Some(self.batch_targets),
            black_box_kernel: self.black_box_kernel,
            paper_faithful: self.paper_faithful,
            max_size: Some(self.max_size),
            max_evaluations: Some(self.max_evaluations),
            shortlist: self.shortlist,
            additions: Some(self.additions),
            lookahead: self.lookahead,
            widen: Some(self.widen),
            temperature: self.temperature,
            lock_nodes: Some(self.lock_nodes.clone()),
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
                job.allowed = Some(read_pairs(path, n)?);
            }
            if let Some(path) = &self.lock_edges {
                let edges = read_pairs(path, n)?;
                job.locked = Locked::new(job.locked.nodes.clone(), edges);
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
