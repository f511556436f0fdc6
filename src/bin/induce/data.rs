//! `induce data`: inspect, cut and generate datasets.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;
use induce::graph::generators::{ArxivLikeConfig, SyntheticKind};
use induce::graph::io::{DataFormat, save_npz};
use induce::methods::{Family, Preset};
use induce::run::load_data;

use crate::args::{DataArgs, FamilyArg, FormatArg};

#[derive(Debug, Subcommand)]
pub enum DataCommand {
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
pub enum GenKind {
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

/// Runs a `data` subcommand.
pub fn run(command: DataCommand) -> Result<()> {
    match command {
        DataCommand::Inspect { path, data, family } => inspect(&path, data.format, family.family.0),
        DataCommand::Generate { kind, seed, out } => {
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
        DataCommand::Subgraph {
            data,
            hops,
            center,
            largest_component,
            out,
        } => {
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
