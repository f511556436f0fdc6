//! InduCE at ogbn-arxiv scale (the `bench --scale` run): a seeded graph of ogbn-arxiv's size, a
//! GCN trained on all of it, a policy trained inductively, and inductive explanation of random
//! nodes with `h = 3`.
//!
//! **Hubs.** With heavy-tailed degrees almost every 3-hop neighbourhood reaches a hub: on the
//! default graph the median one has ≈ 50,000 nodes and ≈ 365,000 edges. Running the policy and
//! the black box on all of it at every edit costs ~10² ms per step. Two measures keep the cost
//! bounded, each checked:
//!
//! 1. **Fan-out-capped search neighbourhood.** The policy searches on
//!    [`induce_graph::k_hop_sampled`]: every node expands at most `fanout` of its neighbours
//!    (a fixed seeded sample per node, GraphSAGE-style), and the neighbourhood is the induced
//!    subgraph on the kept nodes, so at most `1 + f + f² + f³` nodes whatever the hubs. The black
//!    box guides the search on this neighbourhood.
//! 2. **Exact verification on the whole graph.** Every explanation is then checked against the
//!    black box's prediction on the *full* graph, with its edits applied as an overlay, by
//!    the GCN's binding to the graph ([`GraphBinding::log_probs_at`]), which recomputes only
//!    the target's receptive field (the layer-1 rows of its 2-hop ball). A counterfactual counts as valid only if this exact
//!    prediction changes.
//!
//! The report gives both counts, the sizes of the exact and sampled neighbourhoods, the time per
//! node of each phase, and peak memory. A few targets are also explained on their exact 3-hop
//! neighbourhood (no cap) to show what the cap saves.

use std::time::Instant;

use burn::tensor::Device;
use induce_graph::generators::ArxivLikeConfig;
use induce_graph::{Features, Graph, Subgraph, k_hop, k_hop_sampled};
use induce_models::gcn::train::split_accuracy;
use induce_models::io::checkpoint::{load_gcn, save_gcn};
use induce_models::{
    BlackBox, GcnConfig, GcnTrainingConfig, GraphBinding, HostGcn, LogProbs, Result as ModelResult,
    train_gcn,
};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::harness::bench::{BenchRow, measure};
use induce_models::Kernel;
use induce_rl::env::Episode;
use induce_rl::explanation::Explanation;
use induce_rl::induce::{InduceConfig, explain_greedy, run_greedy, train_on_episodes};
use induce_rl::kernel::{KernelPolicy, argmax};
use induce_rl::{Result, RlError};

/// Configuration of the scale run. Every field has a default (the `bench --scale` run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScaleConfig {
    /// The graph (default: ogbn-arxiv's sizes).
    pub graph: ArxivLikeConfig,
    /// Width of the black-box GCN's layers.
    pub gcn_hidden: usize,
    /// Full-batch training epochs of the black box.
    pub gcn_epochs: usize,
    /// Adam learning rate of the black box (the paper uses 0.01).
    pub gcn_lr: f64,
    /// Load the black box from this checkpoint if it exists; otherwise train it and save it
    /// there (with its config beside it).
    pub gcn_checkpoint: Option<std::path::PathBuf>,
    /// Neighbourhood radius `h`.
    pub hops: u32,
    /// Neighbours expanded per node in the search neighbourhood.
    pub fanout: usize,
    /// Policy training targets per class (random training-split nodes with an edge).
    pub train_per_class: usize,
    /// Nodes to explain (random test-split nodes with an edge).
    pub explain_targets: usize,
    /// Of those, how many are also explained on their exact (uncapped) neighbourhood.
    pub exact_targets: usize,
    /// Evaluate the black box on a search neighbourhood with whole-graph degrees and rescaled
    /// neighbour sums ([`HostGcn::forward_sampled`]) instead of as a standalone graph.
    pub degree_correction: bool,
    /// Take the target's prediction (flip, reward) from the exact whole-graph evaluation at every
    /// step instead of from the sampled neighbourhood.
    pub exact_target: bool,
    /// InduCE (environment, policy, training epochs over the training targets).
    pub induce: InduceConfig,
    /// Seed of the target choice and of the neighbour samples.
    pub seed: u64,
}

impl Default for ScaleConfig {
    fn default() -> Self {
        let mut induce = InduceConfig::default();
        induce.train.episodes = 20;
        induce.env.hops = 3;
        // The search judges edits with `SampledBlackBox`, whose target row is already the
        // model's on the whole edited graph (`HostGcn::log_probs_at_edited`), and every
        // explanation is re-checked on the whole graph: no second, whole-ball verdict.
        induce.env.verdict = induce_explain::Verdict::Neighbourhood;
        Self {
            graph: ArxivLikeConfig::default(),
            gcn_hidden: 20,
            gcn_epochs: 100,
            gcn_lr: 0.01,
            gcn_checkpoint: None,
            hops: 3,
            fanout: 10,
            train_per_class: 5,
            explain_targets: 100,
            exact_targets: 3,
            degree_correction: true,
            exact_target: true,
            induce,
            seed: 42,
        }
    }
}

/// Summary statistics of a list of sizes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeStats {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub median: usize,
    /// Maximum.
    pub max: usize,
}

impl SizeStats {
    fn of(mut v: Vec<usize>) -> Self {
        if v.is_empty() {
            return Self::default();
        }
        v.sort_unstable();
        Self {
            mean: v.iter().sum::<usize>() as f64 / v.len() as f64,
            median: v[v.len() / 2],
            max: v[v.len() - 1],
        }
    }
}

/// What the scale run measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScaleReport {
    /// Nodes of the graph.
    pub nodes: usize,
    /// Edges of the graph.
    pub edges: usize,
    /// Largest degree.
    pub max_degree: usize,
    /// Black-box accuracy on the training split (`None` when it is empty).
    pub gcn_train_accuracy: Option<f64>,
    /// Black-box accuracy on the test split (`None` when it is empty).
    pub gcn_test_accuracy: Option<f64>,
    /// Policy training targets.
    pub policy_train_targets: usize,
    /// Nodes of the exact `h`-hop neighbourhoods of the explained targets.
    pub exact_nodes: SizeStats,
    /// Edges of the exact `h`-hop neighbourhoods.
    pub exact_edges: SizeStats,
    /// Nodes of the fan-out-capped search neighbourhoods.
    pub sampled_nodes: SizeStats,
    /// Edges of the search neighbourhoods.
    pub sampled_edges: SizeStats,
    /// Targets explained.
    pub targets: usize,
    /// Targets whose label flipped on the search neighbourhood.
    pub found: usize,
    /// Of those, the counterfactuals that also flip the black box's prediction on the full
    /// graph (exact check).
    pub valid: usize,
    /// Targets whose prediction on the search neighbourhood equals the full-graph one.
    pub agree: usize,
    /// Mean number of edits of the found counterfactuals.
    pub mean_size: f64,
    /// Single-thread time per target of the search (sampling, episode, policy, black box), ms.
    pub search_ms_per_target: f64,
    /// Single-thread time per target of the exact verification, ms.
    pub verify_ms_per_target: f64,
    /// Single-thread time per target of an explanation on the exact neighbourhood (the first
    /// `exact_targets` targets), ms.
    pub exact_search_ms_per_target: Option<f64>,
}

/// The black box's verdict on the target, exact: the target's row on the whole graph with the
/// episode's current edits toggled, from the binding's cached first layer
/// ([`GraphBinding::log_probs_at_edited`]).
struct ExactTarget<'a> {
    binding: &'a dyn GraphBinding,
    target_local: usize,
    /// Original edges of the neighbourhood (local ids, `u < w`, sorted).
    original: Vec<(u32, u32)>,
    global: Vec<u32>,
}

impl ExactTarget<'_> {
    /// The target's whole-graph log-probabilities with the edits that turn the neighbourhood's
    /// original edges into `edges`.
    fn row(&self, edges: &[(u32, u32)]) -> ModelResult<Vec<f32>> {
        let mut now: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        now.sort_unstable();
        let mut toggled = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < now.len() || j < self.original.len() {
            match (now.get(i), self.original.get(j)) {
                (Some(x), Some(y)) if x == y => {
                    i += 1;
                    j += 1;
                }
                (Some(x), y) if y.is_none_or(|y| x < y) => {
                    toggled.push(*x);
                    i += 1;
                }
                (_, Some(y)) => {
                    toggled.push(*y);
                    j += 1;
                }
                _ => break,
            }
        }
        let g = |v: u32| self.global[v as usize];
        let toggled: Vec<(u32, u32)> = toggled.into_iter().map(|(u, w)| (g(u), g(w))).collect();
        self.binding
            .log_probs_at_edited(g(self.target_local as u32), &toggled)
    }
}

/// The black box as the search sees it on a sampled neighbourhood: with degree correction,
/// [`HostGcn::forward_sampled`] told how many whole-graph neighbours of each node the sample
/// leaves out, else the plain forward on the subgraph; with an [`ExactTarget`], the target's own
/// row is the exact whole-graph prediction (so a flip is always a real counterfactual).
struct SampledBlackBox<'a> {
    gcn: &'a HostGcn,
    hidden: Option<Vec<u32>>,
    exact: Option<ExactTarget<'a>>,
}

impl<'a> SampledBlackBox<'a> {
    fn new(
        gcn: &'a HostGcn,
        g: &Graph,
        sub: &Subgraph,
        config: &ScaleConfig,
        exact: Option<&'a dyn GraphBinding>,
    ) -> Self {
        let hidden = config.degree_correction.then(|| {
            let mut listed = vec![0usize; sub.num_nodes()];
            for &(u, w) in &sub.edges {
                listed[u as usize] += 1;
                listed[w as usize] += 1;
            }
            (0..sub.num_nodes())
                .map(|v| (g.degree(sub.global_of(v)) - listed[v]) as u32)
                .collect()
        });
        let exact = exact.filter(|_| config.exact_target).map(|binding| {
            let mut original: Vec<(u32, u32)> = sub
                .edges
                .iter()
                .map(|&(a, b)| (a.min(b), a.max(b)))
                .collect();
            original.sort_unstable();
            ExactTarget {
                binding,
                target_local: sub.target_local,
                original,
                global: (0..sub.num_nodes()).map(|v| sub.global_of(v)).collect(),
            }
        });
        Self { gcn, hidden, exact }
    }
}

impl BlackBox for SampledBlackBox<'_> {
    fn input_dim(&self) -> usize {
        self.gcn.input_dim()
    }

    fn num_classes(&self) -> usize {
        self.gcn.num_classes()
    }

    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> ModelResult<LogProbs> {
        let lp = match &self.hidden {
            Some(h) => self.gcn.forward_sampled(x, edges, h)?,
            None => self.gcn.forward(x, edges)?,
        };
        let Some(exact) = &self.exact else {
            return Ok(lp);
        };
        let c = lp.num_classes();
        let mut v = lp.as_slice().to_vec();
        let t = exact.target_local;
        v[t * c..(t + 1) * c].copy_from_slice(&exact.row(edges)?);
        LogProbs::new(lp.num_nodes(), c, v)
    }
}

/// The pairs an explanation toggles (its edits; each changes one pair of the graph).
fn toggled_by(e: &Explanation) -> Vec<(u32, u32)> {
    e.edits.iter().map(|x| (x.u, x.w)).collect()
}

/// `count` random nodes of `pool` with at least one edge, seeded.
fn pick(g: &Graph, pool: &[u32], count: usize, rng: &mut StdRng) -> Vec<u32> {
    let mut p: Vec<u32> = pool.iter().copied().filter(|&u| g.degree(u) > 0).collect();
    p.shuffle(rng);
    p.truncate(count);
    p
}

/// Runs the scale experiment; returns the report and one [`BenchRow`] per phase (with peak
/// memory). `log` receives progress lines.
pub fn run(
    config: &ScaleConfig,
    device: &Device,
    mut log: impl FnMut(&str),
) -> Result<(ScaleReport, Vec<BenchRow>)> {
    let mut rows = Vec::new();
    let mut data = None;
    rows.push(measure("scale: generate arxiv-like graph", || {
        let start = Instant::now();
        let d = config.graph.generate()?;
        let secs = start.elapsed().as_secs_f64();
        let detail = format!(
            "{} nodes, {} edges",
            d.graph.num_nodes(),
            d.graph.num_edges()
        );
        data = Some(d);
        Ok((secs, 1, detail))
    })?);
    let data = data.expect("generated");
    let g = &data.graph;
    log(&rows[0].detail);
    let mut report = ScaleReport {
        nodes: g.num_nodes(),
        edges: g.num_edges(),
        max_degree: (0..g.num_nodes() as u32)
            .map(|u| g.degree(u))
            .max()
            .unwrap_or(0),
        ..ScaleReport::default()
    };

    // The black box, trained full-batch on the whole graph (sparse messages, no n×n matrix).
    let (d, c) = (g.features().dim(), g.num_classes());
    let gcfg = GcnConfig::new(d, c)
        .with_hidden(config.gcn_hidden)
        .with_init_seed(config.seed);
    let tcfg = GcnTrainingConfig::new(gcfg)
        .with_epochs(config.gcn_epochs)
        .with_lr(config.gcn_lr);
    let mut model = None;
    rows.push(measure(
        match &config.gcn_checkpoint {
            Some(p) if p.exists() => format!("scale: load GCN {}", p.display()),
            _ => format!("scale: train GCN, {} epochs, full graph", config.gcn_epochs),
        },
        || {
            let start = Instant::now();
            let (m, accuracy) = match &config.gcn_checkpoint {
                Some(path) if path.exists() => {
                    let m = load_gcn(path, Some((d, c)), device)?;
                    let accuracy = split_accuracy(&HostGcn::from_gcn(&m)?, &data)?;
                    (m, accuracy)
                }
                other => {
                    let (m, r) = train_gcn(&data, &tcfg, device)?;
                    if let Some(path) = other {
                        save_gcn(&m, &tcfg.model, path)?;
                    }
                    (m, (r.train_accuracy, r.test_accuracy))
                }
            };
            let secs = start.elapsed().as_secs_f64();
            (report.gcn_train_accuracy, report.gcn_test_accuracy) = accuracy;
            model = Some(m);
            Ok((
                secs,
                config.gcn_epochs,
                format!(
                    "accuracy train {:.1}% test {:.1}%",
                    100.0 * accuracy.0.unwrap_or(f64::NAN),
                    100.0 * accuracy.1.unwrap_or(f64::NAN)
                ),
            ))
        },
    )?);
    log(&rows[1].detail);
    let bb = HostGcn::from_gcn(&model.expect("trained"))?;

    // Whole-graph structures for exact evaluation of single nodes, once.
    let binding = bb
        .bind_graph(g)?
        .ok_or_else(|| RlError::InvalidConfig("the host GCN did not bind to the graph".into()))?;
    let exact = Some(binding.as_ref());

    // The policy, trained inductively on capped neighbourhoods of a few nodes per class.
    let mut rng = StdRng::seed_from_u64(config.seed);
    let mut train_targets = Vec::new();
    for class in 0..c as u32 {
        let pool: Vec<u32> = data
            .split
            .train
            .iter()
            .copied()
            .filter(|&u| g.labels()[u as usize] == class)
            .collect();
        train_targets.extend(pick(g, &pool, config.train_per_class, &mut rng));
    }
    report.policy_train_targets = train_targets.len();
    // The sampled search is judged by `SampledBlackBox` (the target's row exact on the whole
    // graph); a second, whole-ball verdict would evaluate the whole graph at every step.
    let mut env_frozen = config.induce.env.clone();
    env_frozen.verdict = induce_explain::Verdict::Neighbourhood;
    let env = &env_frozen;
    let mut policy = None;
    rows.push(measure(
        format!(
            "scale: train policy, {} epochs, fanout {}",
            config.induce.train.episodes, config.fanout
        ),
        || {
            let start = Instant::now();
            let mut subs = Vec::new();
            for &t in &train_targets {
                subs.push(k_hop_sampled(
                    g,
                    t,
                    config.hops,
                    config.fanout,
                    config.seed,
                )?);
            }
            let views: Vec<SampledBlackBox<'_>> = subs
                .iter()
                .map(|s| SampledBlackBox::new(&bb, g, s, config, exact))
                .collect();
            let mut episodes = Vec::new();
            for (sub, view) in subs.into_iter().zip(&views) {
                match Episode::with_subgraph(g, view, sub, env) {
                    Ok(ep) => episodes.push(ep),
                    Err(RlError::NoCandidate { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            let mut last = String::new();
            let p = train_on_episodes(&mut episodes, (d, c), &config.induce, device, |s| {
                last = format!(
                    "last epoch: flipped {:.0}%, {:.2} edits/episode",
                    100.0 * s.flipped,
                    s.mean_edits
                );
            })?;
            policy = Some(p);
            Ok((start.elapsed().as_secs_f64(), episodes.len(), last))
        },
    )?);
    log(&rows[2].detail);
    let host = KernelPolicy::new(&policy.expect("trained"), Kernel::Host, device);

    // Inductive explanation of random test nodes.
    let targets = pick(g, &data.split.test, config.explain_targets, &mut rng);
    report.targets = targets.len();

    struct One {
        expl: Explanation,
        sampled: (usize, usize),
        search: f64,
        verify: f64,
        original_exact: usize,
        valid: bool,
    }
    let mut outcomes = Vec::new();
    rows.push(measure(
        format!(
            "scale: explain {} nodes, h = {}, fanout {}, exact check",
            targets.len(),
            config.hops,
            config.fanout
        ),
        || {
            let start = Instant::now();
            outcomes =
                induce_rl::parallel::map(&targets, induce_rl::parallel::default_threads(), |&t| {
                    let t0 = Instant::now();
                    let sub = k_hop_sampled(g, t, config.hops, config.fanout, config.seed)?;
                    let sampled = (sub.num_nodes(), sub.num_edges());
                    let view = SampledBlackBox::new(&bb, g, &sub, config, exact);
                    let mut ep = Episode::with_subgraph(g, &view, sub, env)?;
                    run_greedy(&host, &mut ep)?;
                    let expl = ep.explanation();
                    let search = t0.elapsed().as_secs_f64();
                    let t1 = Instant::now();
                    let before = binding.log_probs_at(t, &[])?;
                    let after = binding.log_probs_at(t, &toggled_by(&expl))?;
                    let original_exact = argmax(&before);
                    let valid = expl.found && argmax(&after) != original_exact;
                    Ok(One {
                        expl,
                        sampled,
                        search,
                        verify: t1.elapsed().as_secs_f64(),
                        original_exact,
                        valid,
                    })
                })?;
            let secs = start.elapsed().as_secs_f64();
            let found = outcomes.iter().filter(|o| o.expl.found).count();
            let valid = outcomes.iter().filter(|o| o.valid).count();
            Ok((
                secs,
                targets.len(),
                format!("found {found}, valid on the full graph {valid}"),
            ))
        },
    )?);
    log(&rows[3].detail);
    let k = outcomes.len().max(1) as f64;
    report.found = outcomes.iter().filter(|o| o.expl.found).count();
    report.valid = outcomes.iter().filter(|o| o.valid).count();
    report.agree = outcomes
        .iter()
        .filter(|o| o.expl.original_label == o.original_exact)
        .count();
    let sizes: Vec<usize> = outcomes
        .iter()
        .filter(|o| o.expl.found)
        .map(|o| o.expl.size())
        .collect();
    report.mean_size = sizes.iter().sum::<usize>() as f64 / sizes.len().max(1) as f64;
    report.search_ms_per_target = 1e3 * outcomes.iter().map(|o| o.search).sum::<f64>() / k;
    report.verify_ms_per_target = 1e3 * outcomes.iter().map(|o| o.verify).sum::<f64>() / k;
    report.sampled_nodes = SizeStats::of(outcomes.iter().map(|o| o.sampled.0).collect());
    report.sampled_edges = SizeStats::of(outcomes.iter().map(|o| o.sampled.1).collect());

    // What the cap avoids: exact neighbourhood sizes, and a few exact explanations.
    let mut exact = (Vec::new(), Vec::new());
    for &t in &targets {
        let s = k_hop(g, t, config.hops)?;
        exact.0.push(s.num_nodes());
        exact.1.push(s.num_edges());
    }
    report.exact_nodes = SizeStats::of(exact.0);
    report.exact_edges = SizeStats::of(exact.1);
    let few = &targets[..config.exact_targets.min(targets.len())];
    if !few.is_empty() {
        let mut exact_env = env.clone();
        exact_env.hops = config.hops;
        rows.push(measure(
            format!(
                "scale: explain {} nodes on exact {}-hop neighbourhoods",
                few.len(),
                config.hops
            ),
            || {
                let start = Instant::now();
                let mut found = 0;
                for &t in few {
                    let e = explain_greedy(&host, g, &bb, t, &exact_env)?;
                    found += usize::from(e.found);
                }
                Ok((
                    start.elapsed().as_secs_f64(),
                    few.len(),
                    format!("found {found}/{}, one thread", few.len()),
                ))
            },
        )?);
        report.exact_search_ms_per_target = rows.last().map(|r| 1e3 * r.seconds_per_target);
    }
    Ok((report, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_stats() {
        let s = SizeStats::of(vec![5, 1, 3, 100]);
        assert_eq!((s.mean, s.median, s.max), (27.25, 5, 100));
        assert_eq!(SizeStats::of(Vec::new()), SizeStats::default());
    }
}
