//! `induce`: counterfactual explanations for graph neural networks from the command line.
//!
//! `induce --help` lists the subcommands; `induce SUBCOMMAND --help` their options.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use induce::cli::{Bars, error_line};
use induce::explain::Verdict;
use induce::explain::pipeline::{Journal, RunWriter, format_table, merge_runs, read_run};
use induce::graph::generators::{ArxivLikeConfig, SyntheticKind};
use induce::graph::io::{DataFormat, save_npz};
use induce::methods::{Family, Method, Preset};
use induce::models::checkpoint::{atomic_write, save_gcn};
use induce::models::device::{BackendKind, default_backend, device};
use induce::models::{GcnConfig, GcnTrainingConfig, train_gcn};
use induce::rl::{EditMode, Kernel, save_policy};
use induce::run::{
    ExplainJob, Sample, TrainJob, explain_job_noticed, load_data, read_pairs, train_job_noticed,
};
use induce::{Shard, TargetSpec};

/// Counterfactual explanations for graph neural networks (InduCE): the fewest edge edits that
/// flip a node classifier's prediction.
#[derive(Debug, Parser)]
#[command(name = "induce", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Inspect or generate datasets.
    #[command(subcommand)]
    Data(DataCommand),
    /// Train the paper's black-box GCN on a dataset and report its accuracy.
    TrainBlackBox(TrainBlackBoxArgs),
    /// Train an inductive InduCE policy.
    Train(TrainArgs),
    /// Explain target nodes with one or more methods and write a run directory.
    Explain(ExplainArgs),
    /// Merge the shard directories of one run (`explain --shard I/N`) into one run.
    Merge(MergeArgs),
    /// Print the paper-style table of one or several runs side by side.
    Eval(EvalArgs),
    /// Draw one explanation of a run as SVG: the target's neighbourhood before and after the
    /// edits (deleted edges red and dashed, added edges green, node colour = predicted class).
    Render(RenderArgs),
    /// Write one self-contained HTML report of one or more runs: metrics side by side, times,
    /// size histograms, a gallery of drawings, every target's edits.
    Report(ReportArgs),
}

#[derive(Debug, Args)]
struct RenderArgs {
    /// The run directory.
    dir: PathBuf,
    /// The explained node.
    #[arg(long)]
    target: u32,
    /// The method whose explanation to draw [default: the first that explained the target].
    #[arg(long)]
    method: Option<Method>,
    /// Output file [default: DIR/render-METHOD-TARGET.svg].
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// Run directories.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Output file [default: DIR/report.html for one run, report.html for several].
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum DataCommand {
    /// Print a dataset's size, classes, split, ground truth and loader notes.
    Inspect {
        /// A reference npz, gnn-benchmark npz, OGB folder, or a built-in name.
        path: String,
        #[command(flatten)]
        data: FormatArg,
        #[command(flatten)]
        family: FamilyArg,
    },
    /// Cut the h-hop neighbourhood of one node out of a graph as a dataset of its own (the paper's
    /// Amazon-Photo protocol: a seeded random centre, 3 hops, a seeded 80/20 split), written as a
    /// reference-layout npz.
    Subgraph {
        #[command(flatten)]
        data: DataArgs,
        /// Radius of the neighbourhood.
        #[arg(long, default_value_t = 3)]
        hops: u32,
        /// The centre node [default: drawn with --seed].
        #[arg(long)]
        center: Option<u32>,
        /// Keep the largest connected component instead of a neighbourhood (the usual
        /// preprocessing of the gnn-benchmark graphs; ignores --hops and --center).
        #[arg(long)]
        largest_component: bool,
        /// Output file (`.npz`).
        #[arg(long)]
        out: PathBuf,
    },
    /// Generate a benchmark and write it as a reference-layout npz (`--data` reads it back).
    Generate {
        /// ba-shapes, tree-cycles, tree-grid, or arxiv-like (a synthetic graph of the size of
        /// ogbn-arxiv: 169,343 nodes, 1,166,243 edges, 128 features; an 87 MB file).
        #[arg(long)]
        kind: GenKind,
        /// Seed of the generator and the 80/20 split.
        #[arg(long, default_value_t = induce::DEFAULT_SEED)]
        seed: u64,
        /// Output file (`.npz`).
        #[arg(long)]
        out: PathBuf,
    },
}

/// What `data generate` makes.
#[derive(Debug, Clone, Copy)]
enum GenKind {
    Benchmark(SyntheticKind),
    ArxivLike,
}

impl std::str::FromStr for GenKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "arxiv-like" | "arxiv_like" => Ok(GenKind::ArxivLike),
            other => other
                .parse::<SyntheticKind>()
                .map(GenKind::Benchmark)
                .map_err(|e| format!("{e} (or arxiv-like)")),
        }
    }
}

#[derive(Debug, Clone, Args)]
struct FormatArg {
    /// Data format: reference, gnn-benchmark or ogb [default: detected from the file].
    #[arg(long)]
    format: Option<DataFormat>,
}

#[derive(Debug, Clone, Args)]
struct FamilyArg {
    /// Hyper-parameter family: ba-shapes, trees, real, or auto (guessed from the data's name:
    /// syn1 and ba-shapes → ba-shapes; syn4, syn5, tree-cycles, tree-grid → trees; any other
    /// name → real). It sets InduCE's episodes (500 on trees, 80 otherwise) and the baselines'
    /// authors' settings; the choice is printed on stderr and saved in the run's config.
    #[arg(long, default_value = "auto", value_name = "FAMILY")]
    family: FamilyChoice,
}

/// `--family`: a [`Preset`] by name, or `auto` (`None`: guessed from the data's name).
#[derive(Debug, Clone, Copy)]
struct FamilyChoice(Option<Preset>);

impl std::str::FromStr for FamilyChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "auto" => Ok(Self(None)),
            other => other
                .parse::<Preset>()
                .map(|p| Self(Some(p)))
                .map_err(|e| e.to_string()),
        }
    }
}

#[derive(Debug, Clone, Args)]
struct DataArgs {
    /// The data: a reference npz (e.g. shared/reference/syn1.npz), a gnn-benchmark npz (Cora,
    /// CiteSeer, Amazon-Photo), an OGB folder, or a built-in benchmark name (ba-shapes,
    /// tree-cycles, tree-grid; generated with --seed).
    #[arg(long)]
    data: String,
    #[command(flatten)]
    format: FormatArg,
    /// Seed of everything random (generated data, initialisation, sampling).
    #[arg(long, default_value_t = induce::DEFAULT_SEED)]
    seed: u64,
    /// Backend: flex, ndarray or cuda [default: $INDUCE_BACKEND, else flex].
    #[arg(long)]
    backend: Option<BackendKind>,
    /// No progress bars.
    #[arg(long)]
    no_progress: bool,
}

#[derive(Debug, Args)]
struct TrainBlackBoxArgs {
    #[command(flatten)]
    data: DataArgs,
    /// Hidden width of the three graph convolutions (paper: 20; 128 on Amazon-Photo).
    #[arg(long, default_value_t = 20)]
    hidden: usize,
    /// Training epochs (paper: 1000).
    #[arg(long, default_value_t = 1000)]
    epochs: usize,
    /// Output directory: black_box.bpk, black_box.json and report.json.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Debug, Clone, Args)]
struct InduceArgs {
    /// Training episodes M [default: the paper's for the --family, 80 on BA-Shapes and real
    /// graphs, 500 on the trees; for `transductive` the per-target cap].
    #[arg(long)]
    episodes: Option<usize>,
    /// Adam learning rate of the policy [default: the paper's 3e-4]; for `transductive` and
    /// `inductive-fine-tuned` the per-target rate.
    #[arg(long)]
    lr: Option<f64>,
    /// Edit types: add, del or both [default: both; inductive-del-only: del].
    #[arg(long)]
    edits: Option<Edits>,
    /// Kernel of the policy and the black box: host (fused CPU kernels, default) or burn (Burn
    /// tensors on the backend).
    #[arg(long, default_value = "host")]
    kernel: Kernel,
    /// Explain (or train on) every node of a broad target spec, not only the paper's targets
    /// (predicted correctly; with a non-zero label on graphs with motif ground truth).
    #[arg(long)]
    all_nodes: bool,
    /// Work on fan-out-capped neighbourhoods: every expanded node visits at most K of its
    /// neighbours (seeded per target) [default: the exact h-hop neighbourhood]. For hubs of
    /// large graphs.
    #[arg(long)]
    fanout: Option<usize>,
    /// Refuse (with an error naming the target) any target whose neighbourhood has more nodes
    /// than this, instead of risking the machine's memory; --fanout brings hubs under it.
    #[arg(long, default_value_t = 100_000)]
    max_neighbourhood: usize,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Edits {
    Add,
    Del,
    Both,
}

impl From<Edits> for EditMode {
    fn from(e: Edits) -> Self {
        match e {
            Edits::Add => EditMode::AddOnly,
            Edits::Del => EditMode::DeleteOnly,
            Edits::Both => EditMode::Both,
        }
    }
}

#[derive(Debug, Args)]
struct TrainArgs {
    #[command(flatten)]
    data: DataArgs,
    /// The black box: the authors' .safetensors GCN, a .bpk checkpoint or a run directory.
    #[arg(long)]
    black_box: PathBuf,
    /// Training targets: train, test, eval, all, a list 12,40,77 or @file. train, test and all
    /// keep only the paper's targets unless --all-nodes (the rule as for `explain --targets`;
    /// how many it kept, and why, is printed on stderr).
    #[arg(long, default_value = "train")]
    targets: TargetSpec,
    #[command(flatten)]
    family: FamilyArg,
    /// Train on a random sample of N of the targets (seeded by --seed) [default: all of them]
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
    #[command(flatten)]
    induce: InduceArgs,
    /// Output directory: policy.bpk (policy-del-only.bpk with --edits del), its .json and
    /// train.json. While training, the state after each epoch is kept in
    /// OUT/.train-checkpoint.json (removed at the end).
    #[arg(long)]
    out: PathBuf,
    /// Continue an interrupted training of the same job into the same --out from its last
    /// finished epoch (host kernel); the policy equals an uninterrupted run's. Without it, an
    /// interrupted run's checkpoint is discarded.
    #[arg(long)]
    resume: bool,
}

#[derive(Debug, Args)]
struct ExplainArgs {
    #[command(flatten)]
    data: DataArgs,
    /// The black box: the authors' .safetensors GCN, a .bpk checkpoint or a run directory.
    #[arg(long)]
    black_box: PathBuf,
    /// A trained policy (.bpk or the directory `induce train` wrote), for inductive and
    /// inductive-del-only.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Methods, comma-separated or repeated: InduCE's inductive, inductive-best-of-k,
    /// transductive, inductive-fine-tuned (the --policy fine-tuned per target with the
    /// transductive schedule), inductive-del-only, untrained; the baselines random,
    /// cf-gnnexplainer, cf-gnnexplainer++, cf2, pgexplainer (trained on the training split's
    /// targets).
    #[arg(long, value_delimiter = ',', required = true)]
    method: Vec<Method>,
    /// Budget of every baseline: random masks (random), optimisation steps (cf-gnnexplainer,
    /// cf2) or training epochs (pgexplainer) [default: each method's authors', per dataset
    /// family: 500 masks; 500 steps; 2000 steps on BA-Shapes, 500 on the trees; 10-30 epochs].
    #[arg(long)]
    iterations: Option<usize>,
    /// Targets: test (the split's test nodes), train, eval (the file's evaluation set, e.g. a
    /// reference npz's eval_idx), all, a list 12,40,77, or @file (one id a line). test, train
    /// and all keep only the paper's targets unless --all-nodes: the nodes the black box
    /// predicts correctly on their 4-hop neighbourhood and, when the data has motif ground
    /// truth (a `motif` array, a generated benchmark, the authors' syn1/syn4/syn5), a non-zero
    /// label; without ground truth label 0 counts too. How many targets were chosen, and by
    /// which rule, is printed on stderr (docs/FORMATS.md).
    #[arg(long, default_value = "test")]
    targets: TargetSpec,
    #[command(flatten)]
    family: FamilyArg,
    /// Explain a random sample of N of the targets (seeded by --seed; uniform among the
    /// paper's targets, drawn before sharding) [default: all of them]
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
    /// Explain only shard I of N (1-based, contiguous): `induce merge` joins the shards.
    #[arg(long)]
    shard: Option<Shard>,
    /// Restrict edits to these node pairs (the paper's V_c): one pair `u w` a line.
    #[arg(long)]
    allowed: Option<PathBuf>,
    /// Episodes per target of inductive-best-of-k: the greedy one and K-1 sampled from the
    /// trained policy.
    #[arg(long, default_value_t = 16)]
    samples: usize,
    /// transductive and inductive-fine-tuned: also play the per-target policy's greedy episode
    /// after every N-th update and after the last, keeping its counterfactual when smaller (not
    /// in the paper; never worse: the sampled episodes stay the same). 0: never.
    #[arg(long, value_name = "N", default_value_t = 0)]
    greedy_every: usize,
    /// Explain as the paper describes InduCE: no minimality pass (by default every InduCE
    /// counterfactual is reduced to a 1-minimal one; the baselines never are), and every
    /// method's verdicts taken on the target's frozen neighbourhood, as the authors' code does
    /// (by default a counterfactual must flip the model on the whole edited graph; the frozen
    /// neighbourhood misses what an added edge brings into the model's receptive field, so some
    /// of its counterfactuals do not flip the model: the `valid %` column counts those that do).
    #[arg(long)]
    paper_faithful: bool,
    #[command(flatten)]
    induce: InduceArgs,
    /// Worker threads [default: all cores]; results do not depend on it.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Output directory (written all at once; an existing run there is replaced). While the
    /// run is going, its progress is journaled in the hidden `.NAME.journal` beside it.
    #[arg(long)]
    out: PathBuf,
    /// Continue an interrupted run of the same job into the same --out (killed, crashed,
    /// out of time): the targets it had explained are kept, the rest explained; the result equals
    /// an uninterrupted run's. Without it, an interrupted run's journal is discarded.
    #[arg(long)]
    resume: bool,
}

#[derive(Debug, Args)]
struct MergeArgs {
    /// The shard directories, in any order.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Output directory of the merged run.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Debug, Args)]
struct EvalArgs {
    /// Run directories.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", error_line(&e));
            ExitCode::FAILURE
        }
    }
}

fn pick_device(backend: Option<BackendKind>) -> Result<induce::Device> {
    let kind = match backend {
        Some(k) => k,
        None => default_backend()?,
    };
    Ok(device(kind)?)
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.2} %", 100.0 * v))
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Data(DataCommand::Inspect { path, data, family }) => {
            inspect(&path, data.format, family.family.0)
        }
        Command::Data(DataCommand::Generate { kind, seed, out }) => {
            let (d, name) = match kind {
                GenKind::Benchmark(k) => (k.generate(seed)?, k.name()),
                GenKind::ArxivLike => {
                    let cfg = ArxivLikeConfig {
                        seed,
                        ..ArxivLikeConfig::default()
                    };
                    (cfg.generate()?, "arxiv-like")
                }
            };
            save_npz(&d, &out)?;
            println!(
                "{}: {} nodes, {} edges, seed {seed} -> {}",
                name,
                d.graph.num_nodes(),
                d.graph.num_edges(),
                out.display()
            );
            Ok(())
        }
        Command::Data(DataCommand::Subgraph {
            data,
            hops,
            center,
            largest_component,
            out,
        }) => {
            let d = load_data(&data.data, data.format.format, data.seed)?;
            let (sub, what) = if largest_component {
                let sub = d.largest_component(0.8, data.seed)?;
                (sub, "largest connected component".to_string())
            } else {
                let (sub, center) = match center {
                    Some(c) => {
                        d.graph.check_node(c)?;
                        (d.neighbourhood(c, hops, 0.8, data.seed)?, c)
                    }
                    None => d.random_neighbourhood(hops, 0.8, data.seed)?,
                };
                (sub, format!("{hops}-hop neighbourhood of node {center}"))
            };
            save_npz(&sub, &out)?;
            println!(
                "{what}: {} of {} nodes, {} of {} edges -> {}",
                sub.graph.num_nodes(),
                d.graph.num_nodes(),
                sub.graph.num_edges(),
                d.graph.num_edges(),
                out.display()
            );
            Ok(())
        }
        Command::Render(a) => {
            let dev = pick_device(None)?;
            let run = induce::render::open_run(&a.dir, &dev)?;
            let method = a.method.map(|m| m.name().to_string());
            let svg = induce::render::render_target(&run, method.as_deref(), a.target)?;
            let name = induce::render::find_record(&run.run, method.as_deref(), a.target)?
                .method
                .clone();
            let out = a.out.unwrap_or_else(|| {
                a.dir.join(format!(
                    "render-{}-{}.svg",
                    name.replace('+', "p"),
                    a.target
                ))
            });
            atomic_write(&out, svg.as_bytes())?;
            println!("{name}, target {} -> {}", a.target, out.display());
            Ok(())
        }
        Command::Report(a) => {
            let dev = pick_device(None)?;
            let out = a.out.unwrap_or_else(|| match a.dirs.as_slice() {
                [one] => one.join("report.html"),
                _ => PathBuf::from("report.html"),
            });
            induce::render::write_report(&a.dirs, &out, &dev)?;
            println!("{} run(s) -> {}", a.dirs.len(), out.display());
            Ok(())
        }
        Command::TrainBlackBox(a) => train_black_box(a),
        Command::Train(a) => train(a),
        Command::Explain(a) => explain(a),
        Command::Merge(a) => {
            let merged = merge_runs(&a.dirs)?;
            let w = RunWriter::create(&a.out)?;
            w.finish(&merged.config, &merged.summary, &merged.runs)?;
            print!("{}", format_table(&[&merged.summary]));
            println!("merged {} shards into {}", a.dirs.len(), a.out.display());
            Ok(())
        }
        Command::Eval(a) => {
            let runs = a.dirs.iter().map(read_run).collect::<Result<Vec<_>, _>>()?;
            for (i, r) in runs.iter().enumerate() {
                if runs.len() > 1 {
                    println!("run {}: {}", i + 1, r.dir.display());
                }
            }
            let s: Vec<_> = runs.iter().map(|r| &r.summary).collect();
            print!("{}", format_table(&s));
            Ok(())
        }
    }
}

fn inspect(path: &str, format: Option<DataFormat>, family: Option<Preset>) -> Result<()> {
    let d = load_data(path, format, induce::DEFAULT_SEED)?;
    let g = &d.graph;
    println!("dataset      {}", d.name);
    println!("nodes        {}", g.num_nodes());
    println!("edges        {} (undirected)", g.num_edges());
    let n = g.num_nodes() as u32;
    if let Some(hub) = (0..n).max_by_key(|&u| (g.degree(u), std::cmp::Reverse(u))) {
        let isolated = (0..n).filter(|&u| g.degree(u) == 0).count();
        println!(
            "degree       mean {:.2}, max {} (node {hub}), {isolated} isolated",
            2.0 * g.num_edges() as f64 / f64::from(n.max(1)),
            g.degree(hub)
        );
    }
    println!("features     {}", g.features().dim());
    let mut counts = vec![0usize; g.num_classes()];
    for &l in g.labels() {
        counts[l as usize] += 1;
    }
    let counts: Vec<String> = counts
        .iter()
        .enumerate()
        .map(|(c, n)| format!("{c}: {n}"))
        .collect();
    println!("classes      {} ({})", g.num_classes(), counts.join(", "));
    println!(
        "split        train {}, valid {}, test {}",
        d.split.train.len(),
        d.split.valid.len(),
        d.split.test.len()
    );
    println!(
        "eval set     {}",
        d.eval_targets
            .as_ref()
            .map_or("none".into(), |e| format!("{} nodes", e.len()))
    );
    let motifs = g.motifs().map(|m| {
        let mut ids: Vec<u32> = m.iter().flatten().copied().collect();
        ids.sort_unstable();
        ids.dedup();
        (m.iter().filter(|x| x.is_some()).count(), ids.len())
    });
    println!(
        "ground truth {}",
        motifs.map_or("none (strict accuracy undefined)".into(), |(n, k)| format!(
            "{k} motif instances over {n} nodes"
        ))
    );
    let family = Family::choose(family, &d.name);
    println!("family       {}", family.describe(&d.name));
    if family.guessed && family.preset == Preset::Real && g.motifs().is_some() {
        println!(
            "note         the data has motif ground truth but its name is not a known benchmark: \
             if it is a synthetic motif graph, --family ba-shapes or trees may fit better"
        );
    }
    for n in &d.notes {
        println!("note         {n}");
    }
    Ok(())
}

fn train_black_box(a: TrainBlackBoxArgs) -> Result<()> {
    let dev = pick_device(a.data.backend)?;
    let data = load_data(&a.data.data, a.data.format.format, a.data.seed)?;
    anyhow::ensure!(
        !data.split.train.is_empty(),
        "{} has no training split: the black box cannot be trained on it",
        a.data.data
    );
    anyhow::ensure!(a.epochs > 0, "--epochs must be at least 1");
    let g = &data.graph;
    let gcfg = GcnConfig::new(g.features().dim(), g.num_classes())
        .with_hidden(a.hidden)
        .with_init_seed(a.data.seed);
    let tcfg = GcnTrainingConfig::new(gcfg.clone()).with_epochs(a.epochs);
    let (model, report) = train_gcn(&data, &tcfg, &dev)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    save_gcn(&model, &gcfg, a.out.join("black_box.bpk"))?;
    let json = serde_json::json!({
        "dataset": data.name, "data": a.data.data, "seed": a.data.seed,
        "nodes": g.num_nodes(), "edges": g.num_edges(),
        "hidden": a.hidden, "epochs": a.epochs,
        "train_accuracy": report.train_accuracy, "test_accuracy": report.test_accuracy,
        "final_loss": report.final_loss, "seconds": report.seconds,
    });
    atomic_write(
        a.out.join("report.json"),
        &serde_json::to_vec_pretty(&json)?,
    )?;
    println!(
        "{}: train accuracy {}, test accuracy {} ({} epochs, {:.1} s) -> {}",
        data.name,
        pct(report.train_accuracy),
        pct(report.test_accuracy),
        a.epochs,
        report.seconds,
        a.out.join("black_box.bpk").display()
    );
    Ok(())
}

fn train(a: TrainArgs) -> Result<()> {
    let dev = pick_device(a.data.backend)?;
    let mut job =
        TrainJob::new(a.data.data.clone(), a.black_box.clone()).with_family(a.family.family.0);
    job.format = a.data.format.format;
    job.targets = a.targets.clone();
    job.paper_filter = !a.induce.all_nodes;
    job.sample = a.sample.map(|size| Sample {
        size,
        seed: a.data.seed,
    });
    job.induce.seed = a.data.seed;
    job.induce.kernel = a.induce.kernel;
    job.induce.env.fanout = a.induce.fanout;
    job.induce.env.max_nodes = Some(a.induce.max_neighbourhood);
    if let Some(m) = a.induce.episodes {
        anyhow::ensure!(m > 0, "--episodes must be at least 1");
        job.induce.episodes = m;
    }
    if let Some(lr) = a.induce.lr {
        anyhow::ensure!(
            lr.is_finite() && lr > 0.0,
            "--lr must be a positive number, got {lr}"
        );
        job.induce.lr = lr;
    }
    let del_only = matches!(a.induce.edits, Some(Edits::Del));
    if let Some(e) = a.induce.edits {
        job.induce.env.mode = e.into();
    }
    let bars = Bars::new(!a.data.no_progress);
    let checkpoint = a.out.join(".train-checkpoint.json");
    if !a.resume && checkpoint.exists() {
        std::fs::remove_file(&checkpoint)
            .with_context(|| format!("removing {}", checkpoint.display()))?;
    }
    let resumable = job.induce.kernel == Kernel::Host;
    if resumable {
        std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    } else {
        anyhow::ensure!(!a.resume, "--resume needs the host kernel (--kernel host)");
    }
    let notice = |line: &str| eprintln!("{line}");
    let checkpointed = resumable.then_some(&*checkpoint);
    let trained = train_job_noticed(&job, &dev, &bars, checkpointed, &notice);
    let (policy, meta, outcome) = match trained {
        Ok(t) => t,
        Err(e) => {
            // A failure before the first epoch leaves no empty output directory behind.
            if !checkpoint.exists() {
                let _ = std::fs::remove_dir(&a.out);
            }
            return Err(e.into());
        }
    };
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let name = if del_only {
        "policy-del-only.bpk"
    } else {
        "policy.bpk"
    };
    save_policy(&policy, &meta, a.out.join(name))?;
    let report = serde_json::json!({"job": job, "outcome": outcome});
    atomic_write(
        a.out.join("train.json"),
        &serde_json::to_vec_pretty(&report)?,
    )?;
    if checkpoint.exists() {
        std::fs::remove_file(&checkpoint)
            .with_context(|| format!("removing {}", checkpoint.display()))?;
    }
    println!(
        "trained on {} targets, {} episodes in {:.1} s -> {}",
        outcome.targets,
        job.induce.episodes,
        outcome.seconds,
        a.out.join(name).display()
    );
    Ok(())
}

fn explain(a: ExplainArgs) -> Result<()> {
    let dev = pick_device(a.data.backend)?;
    let mut job = ExplainJob::new(a.data.data.clone(), a.black_box.clone(), &a.method)
        .with_family(a.family.family.0);
    job.format = a.data.format.format;
    job.policy = a.policy.clone();
    job.targets = a.targets.clone();
    job.paper_filter = !a.induce.all_nodes;
    job.sample = a.sample.map(|size| Sample {
        size,
        seed: a.data.seed,
    });
    job.shard = a.shard;
    job.edits = a.induce.edits.map(Into::into);
    job.seed = a.data.seed;
    job.induce.seed = a.data.seed;
    job.baselines = job.baselines.clone().with_seed(a.data.seed);
    if let Some(k) = a.iterations {
        anyhow::ensure!(k > 0, "--iterations must be at least 1");
        job.baselines = job.baselines.clone().with_iterations(k);
    }
    job.induce.kernel = a.induce.kernel;
    job.induce.env.fanout = a.induce.fanout;
    job.induce.env.max_nodes = Some(a.induce.max_neighbourhood);
    job.threads = a.threads;
    anyhow::ensure!(a.samples > 0, "--samples must be at least 1");
    job.induce.inference_samples = a.samples;
    job.induce.greedy_every = a.greedy_every;
    if a.paper_faithful {
        job.induce = job.induce.clone().paper_faithful();
        job.baselines = job.baselines.clone().with_verdict(Verdict::Neighbourhood);
    }
    if let Some(m) = a.induce.episodes {
        anyhow::ensure!(m > 0, "--episodes must be at least 1");
        job.induce.episodes = m;
    }
    if let Some(lr) = a.induce.lr {
        anyhow::ensure!(
            lr.is_finite() && lr > 0.0,
            "--lr must be a positive number, got {lr}"
        );
        job.induce.lr = lr;
    }
    if let Some(path) = &a.allowed {
        // Node count for the range check: loading the data twice is cheap next to explaining.
        let n = load_data(&job.data, job.format, job.seed)?
            .graph
            .num_nodes();
        job.allowed = Some(read_pairs(path, n)?);
    }
    // Everything is checked (data, black box, policy, targets) before the directory exists.
    let writer = RunWriter::create(&a.out)?;
    let bars = Bars::new(!a.data.no_progress);
    let config = serde_json::to_value(&job)?;
    let journal = Journal::open(&a.out, &config, a.resume)?;
    let notice = |line: &str| eprintln!("{line}");
    let (summary, runs) = match explain_job_noticed(&job, &dev, &bars, Some(&journal), &notice) {
        Ok(r) => r,
        Err(e) => {
            journal.discard_if_empty()?;
            return Err(e.into());
        }
    };
    writer.finish(&config, &summary, &runs)?;
    journal.remove()?;
    print!("{}", format_table(&[&summary]));
    println!("results in {}", a.out.display());
    Ok(())
}
