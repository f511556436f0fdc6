//! `induce`: counterfactual explanations for graph neural networks from the command line.
//!
//! `induce --help` lists the subcommands; `induce SUBCOMMAND --help` their options. One file per
//! subcommand: each parses its arguments, turns them into a library job in one conversion and
//! prints the result; validation and the run directories' lifecycle live in the library.

mod args;
mod data;
mod eval;
mod explain;
mod merge;
mod predict;
mod render;
mod report;
mod slurm;
mod train;
mod train_black_box;

use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use induce::cli::error_line;
use induce::models::device::{BackendKind, device};

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
    Data(data::DataCommand),
    /// Train the paper's black-box GCN on a dataset and report its accuracy.
    TrainBlackBox(train_black_box::TrainBlackBoxArgs),
    /// Train an inductive InduCE policy.
    Train(Box<train::TrainArgs>),
    /// Explain target nodes with one or more methods and write a run directory.
    Explain(Box<explain::ExplainArgs>),
    /// Write every node's predicted class and class probabilities under a black box (CSV).
    Predict(predict::PredictArgs),
    /// Merge the shard directories of one run (`explain --shard I/N`) into one run.
    Merge(merge::MergeArgs),
    /// Write the Slurm job-array scripts of a whole-graph audit: one shard of the targets per
    /// array task, then a dependent merge (docs/SCALE.md).
    Slurm(slurm::SlurmArgs),
    /// Print the paper-style table of one or several runs side by side.
    Eval(eval::EvalArgs),
    /// Draw one explanation of a run as SVG: the target's neighbourhood before and after the
    /// edits (deleted edges red and dashed, added edges green, node colour = predicted class).
    Render(render::RenderArgs),
    /// Write one self-contained HTML report of one or more runs: metrics side by side, times,
    /// size histograms, a gallery of drawings, every target's edits.
    Report(report::ReportArgs),
}

fn main() -> ExitCode {
    quiet_on_broken_pipe();
    // INDUCE_PROFILE, INDUCE_FUSED, INDUCE_GPU_LAYOUT, ... (docs/GPU.md, docs/PERFORMANCE.md).
    induce::models::device::install_env_settings();
    // `induce explain`'s help is completed from the library's method declarations.
    let matches = Cli::command()
        .mut_subcommand("explain", explain::with_library_help)
        .get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match cli.command {
        Command::Data(c) => data::run(c),
        Command::TrainBlackBox(a) => train_black_box::run(a),
        Command::Train(a) => train::run(*a),
        Command::Explain(a) => explain::run(*a),
        Command::Merge(a) => merge::run(a),
        Command::Predict(a) => predict::run(a),
        Command::Slurm(a) => slurm::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Render(a) => render::run(a),
        Command::Report(a) => report::run(a),
    };
    if let Some(report) = induce::rl::profile::report() {
        eprint!("{report}");
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", flags_for_fields(&error_line(&e)));
            ExitCode::FAILURE
        }
    }
}

/// `induce ... | head` closes the pipe early; printing then fails (Rust's `println!` panics on
/// it), and a command-line tool exits quietly instead, with success, as `cat` and ripgrep do in
/// a pipeline.
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = (payload.downcast_ref::<String>().map(String::as_str))
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// The library names the settings at fault (`InduceConfig.lr`); its command-line user knows
/// them as flags: each known field becomes its flag.
fn flags_for_fields(line: &str) -> String {
    induce::run::name_settings(line, |option| match option {
        "fanout" => "--fanout K".to_string(),
        o => format!("--{}", o.replace('_', "-")),
    })
    .replace("without resuming", "without --resume")
}

/// The device of `backend` (default: `$INDUCE_BACKEND`, else flex).
fn pick_device(backend: Option<BackendKind>) -> Result<induce::Device> {
    let kind = match backend {
        Some(k) => k,
        None => BackendKind::from_env_or_default()?,
    };
    Ok(device(kind)?)
}

/// The process's peak resident memory in KiB (`VmHWM` of `/proc/self/status`); `None` where the
/// system does not report it.
fn peak_resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
