//! The evaluation pipeline: the same public functions for any explainer, any
//! [`Dataset`](induce_graph::Dataset) and any [`BlackBox`].
//!
//! 1. Choose targets: [`TargetSpec`] (`test`, `eval`, a list, `@file`, ...) resolved against a
//!    dataset, optionally narrowed to the paper's targets with [`select_targets`] and to one
//!    [`Shard`] of a run spread over several machines.
//! 2. Build an [`EvalContext`]: the graph, the black box's full-graph predictions (the paper's
//!    accuracy needs them) and the hop count of the neighbourhoods (sparsity needs their sizes).
//! 3. [`explain_targets`] runs any [`Explainer`] on every target in parallel, timed, turning
//!    "no candidate action" into "not found" and reporting progress only if asked to
//!    ([`Progress`]).
//! 4. [`MethodRun::row`] summarises one method ([`RunRow`]); a [`RunSummary`] gathers the rows of
//!    a run; [`write_run`] writes `summary.json`, `explanations.jsonl` and `config.json`
//!    atomically; [`read_run`], [`merge_runs`] and [`format_table`] read them back, merge shards
//!    and print the paper's table.
//!
//! Every line of `explanations.jsonl` is a [`TargetRecord`]: the explanation plus the per-target
//! ingredients of the metrics, so that metrics can be recomputed (and shards merged) from the
//! files alone, without the graph or the black box.

mod journal;
mod records;
mod run_dir;
mod targets;

use std::time::Instant;

use induce_graph::Graph;
use induce_models::BlackBox;

use crate::Protocol;
use crate::error::{ExplainError, Result};
use crate::explanation::{Explainer, Explanation};
use crate::goal::Goal;
use crate::metrics::{
    accuracy, is_one_minimal, neighbourhood_edges, neighbourhood_edges_many, strict_accuracy,
};
use crate::verdict::{Verdict, whole_graph_label_with_features};

pub use journal::{Journal, MethodJournal};
pub use records::{
    BlackBoxAccuracy, GraphSize, MethodRun, RunRow, RunSummary, TargetRecord, summarize_records,
};
pub use run_dir::{
    RUN_FILES, RunData, RunWriter, format_table, merge_runs, merge_shard_root, read_run, shard_dir,
    write_run,
};
pub use targets::{Shard, TargetSpec, select_targets};

/// Receives progress reports from long pipeline steps. Every method has an empty default, so a
/// library user passes [`NoProgress`] (the default of [`ExplainOptions`]) or implements only
/// what they need; the `induce` binaries draw terminal progress bars with it.
pub trait Progress: Sync {
    /// A task of `total` units starts (`task` names it, e.g. `explain inductive`).
    fn begin(&self, task: &str, total: usize) {
        let _ = (task, total);
    }
    /// `n` more units are done.
    fn advance(&self, n: usize) {
        let _ = n;
    }
    /// A status line for the running task (e.g. training statistics).
    fn message(&self, message: &str) {
        let _ = message;
    }
    /// The task ended.
    fn end(&self) {}
    /// Whether the caller wants the run to stop: explaining then ends with
    /// [`ExplainError::Cancelled`] before the next target (targets already started finish).
    /// The default never cancels.
    fn cancelled(&self) -> bool {
        false
    }
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// How [`explain_targets`] runs.
#[derive(Clone, Copy)]
pub struct ExplainOptions<'a> {
    /// Worker threads (default: the machine's available parallelism). Results do not depend on
    /// it for deterministic explainers.
    pub threads: usize,
    /// Where progress goes (default: nowhere).
    pub progress: &'a dyn Progress,
}

impl Default for ExplainOptions<'_> {
    fn default() -> Self {
        Self {
            threads: crate::parallel::default_threads(),
            progress: &NoProgress,
        }
    }
}

impl std::fmt::Debug for ExplainOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExplainOptions")
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

/// The black box's predicted class for every node of `graph`, evaluated on the whole graph (the
/// reference of the paper's accuracy metric).
///
/// # Shapes
/// `graph`: `n` nodes with `d = black_box.input_dim()` features → `n` class ids.
pub fn full_graph_predictions(black_box: &dyn BlackBox, graph: &Graph) -> Result<Vec<usize>> {
    Ok(black_box
        .log_probs(graph.features(), &graph.edges())?
        .predictions())
}

/// What the metrics of one graph need besides the explanations: the graph (motif ground truth,
/// neighbourhood sizes), the black box's full-graph predictions and the hop count `h` of the
/// neighbourhoods the explainers edit.
#[derive(Clone)]
pub struct EvalContext<'a> {
    graph: &'a Graph,
    predictions: Vec<usize>,
    protocol: Protocol,
    black_box: Option<&'a dyn BlackBox>,
    goal: Goal,
}

impl std::fmt::Debug for EvalContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalContext")
            .field("nodes", &self.graph.num_nodes())
            .field("protocol", &self.protocol)
            .field("checks", &self.black_box.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> EvalContext<'a> {
    /// Runs `black_box` once on the whole graph to get its predictions, and keeps it to check
    /// that every counterfactual flips it on the whole graph
    /// ([`whole_graph_label`](crate::verdict::whole_graph_label), the records' `valid`) and is
    /// 1-minimal ([`is_one_minimal`]), under the run's [`Protocol`]: its verdicts, and its radius
    /// for the records' sparsity.
    pub fn new(graph: &'a Graph, black_box: &'a dyn BlackBox, protocol: Protocol) -> Result<Self> {
        let predictions = full_graph_predictions(black_box, graph)?;
        let mut c = Self::with_predictions(graph, predictions, protocol)?;
        c.black_box = Some(black_box);
        Ok(c)
    }

    /// Uses predictions computed elsewhere (one class id per node).
    pub fn with_predictions(
        graph: &'a Graph,
        predictions: Vec<usize>,
        protocol: Protocol,
    ) -> Result<Self> {
        if predictions.len() != graph.num_nodes() {
            return Err(ExplainError::InvalidValue {
                what: "full-graph predictions",
                value: format!("{} entries", predictions.len()),
                reason: format!("the graph has {} nodes", graph.num_nodes()),
            });
        }
        Ok(Self {
            graph,
            predictions,
            protocol,
            black_box: None,
            goal: Goal::AnyOther,
        })
    }

    /// What a counterfactual must reach (default [`Goal::AnyOther`]; `--to-class`): the
    /// validity and 1-minimality checks follow it.
    pub fn with_goal(mut self, goal: Goal) -> Self {
        self.goal = goal;
        self
    }

    /// What a counterfactual must reach.
    pub fn goal(&self) -> Goal {
        self.goal
    }

    /// The run's protocol: the verdicts the explainers take (the 1-minimality check follows
    /// them and the records say so) and the run's radius.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The graph.
    pub fn graph(&self) -> &'a Graph {
        self.graph
    }

    /// The full-graph predictions.
    pub fn predictions(&self) -> &[usize] {
        &self.predictions
    }

    /// The run's radius ([`Protocol::radius`]).
    pub fn radius(&self) -> u32 {
        self.protocol.radius
    }

    /// True when the graph carries motif ground truth (strict accuracy is defined).
    pub fn has_ground_truth(&self) -> bool {
        self.graph.motifs().is_some()
    }

    /// The explanation of a target that offers no candidate action: not found, label = the
    /// black box's full-graph prediction.
    pub fn not_found(&self, target: u32) -> Result<Explanation> {
        let label =
            *self
                .predictions
                .get(target as usize)
                .ok_or(ExplainError::TargetOutOfRange {
                    target,
                    num_nodes: self.graph.num_nodes(),
                })?;
        Ok(Explanation {
            feature_edits: Vec::new(),
            evaluations: None,
            certified: None,
            target,
            found: false,
            original_label: label,
            new_label: label,
            edits: Vec::new(),
        })
    }

    /// Whether a found counterfactual flips the model on the whole graph: its label there
    /// differs from the model's prediction on the unedited graph, and is the goal's class
    /// under [`Goal::Class`] (`None` when not found).
    fn is_valid(&self, black_box: &dyn BlackBox, e: &Explanation) -> Result<Option<bool>> {
        if !e.found {
            return Ok(None);
        }
        let original =
            *self
                .predictions
                .get(e.target as usize)
                .ok_or(ExplainError::TargetOutOfRange {
                    target: e.target,
                    num_nodes: self.graph.num_nodes(),
                })?;
        let now = whole_graph_label_with_features(
            self.graph,
            black_box,
            e.target,
            &e.edits,
            &e.feature_edits,
        )?;
        Ok(Some(self.goal.reached(original, now)))
    }

    /// One line of `explanations.jsonl`: the explanation and its per-target metric ingredients
    /// (a not-found explanation without the edits its method tried).
    pub fn record(&self, method: &str, explanation: Explanation) -> Result<TargetRecord> {
        self.record_within(method, explanation, self.protocol.radius)
    }

    /// [`EvalContext::record`] of an explanation searched within the `hops`-hop neighbourhood
    /// (its sparsity's edge count and its 1-minimality are taken there; see
    /// [`Explainer::neighbourhood_hops`]).
    pub fn record_within(
        &self,
        method: &str,
        explanation: Explanation,
        hops: u32,
    ) -> Result<TargetRecord> {
        let edges = neighbourhood_edges(self.graph, explanation.target, hops)?;
        self.record_counted(method, explanation, hops, edges)
    }

    /// [`EvalContext::record_within`] given the target's `hops`-hop edge count (sparsity's
    /// `m_v`, from [`neighbourhood_edges_many`] for many targets at once).
    fn record_counted(
        &self,
        method: &str,
        explanation: Explanation,
        hops: u32,
        neighbourhood_edges: usize,
    ) -> Result<TargetRecord> {
        let mut explanation = explanation;
        if !explanation.found {
            // What a method tried without a flip is no explanation: a record lists none.
            explanation.edits.clear();
            explanation.feature_edits.clear();
        }
        let one = std::slice::from_ref(&explanation);
        // Both accuracies need a background class: graphs with motif ground truth only.
        let (accuracy, strict_accuracy) = match self.has_ground_truth() {
            true => (
                accuracy(one, &self.predictions)?,
                strict_accuracy(one, self.graph)?,
            ),
            false => (None, None),
        };
        let (one_minimal, valid) = match self.black_box {
            // 1-minimality over the edge and the feature edits together.
            Some(bb) => (
                is_one_minimal(
                    self.graph,
                    bb,
                    &explanation,
                    hops,
                    self.protocol.verdict,
                    self.goal,
                )?,
                self.is_valid(bb, &explanation)?,
            ),
            None => (None, None),
        };
        // Under exact verdicts `found` means a counterfactual: the whole-graph check can only
        // confirm it (see ExplainError::FoundNotValid).
        if self.protocol.verdict == Verdict::Exact
            && valid == Some(false)
            && let Some(bb) = self.black_box
        {
            return Err(ExplainError::FoundNotValid {
                method: method.to_string(),
                target: explanation.target,
                layers: crate::reach::Reach::of(bb.message_passing_layers()).to_string(),
            });
        }
        Ok(TargetRecord {
            method: method.to_string(),
            one_minimal,
            valid,
            verdict: self.protocol.verdict,
            neighbourhood_edges,
            explanation,
            accuracy,
            strict_accuracy,
        })
    }
}

/// Explains every target with `explainer` on `opts.threads` threads and returns the records in
/// target order, with the wall-clock time of the whole loop.
///
/// A target whose neighbourhood offers no allowed action ([`ExplainError::NoCandidate`]) counts
/// as "not found" instead of aborting the run; any other error aborts it.
pub fn explain_targets(
    explainer: &dyn Explainer,
    ctx: &EvalContext<'_>,
    targets: &[u32],
    opts: &ExplainOptions<'_>,
) -> Result<MethodRun> {
    explain_targets_journaled(explainer, ctx, targets, opts, None)
}

/// [`explain_targets`] that records its progress in `journal` (see [`Journal`]): targets the
/// journal already holds are not explained again, and the others are explained in chunks of a
/// few per thread, each chunk synced to the journal as it finishes. The records and metrics equal
/// an uninterrupted run's (the explainers are deterministic per target); `explain_seconds` sums
/// the time of every session.
///
/// # Errors
/// Those of [`explain_targets`]; a journal whose explanations are not a prefix of `targets`
/// (another target list) is an error naming the journal.
pub fn explain_targets_journaled(
    explainer: &dyn Explainer,
    ctx: &EvalContext<'_>,
    targets: &[u32],
    opts: &ExplainOptions<'_>,
    journal: Option<&mut MethodJournal>,
) -> Result<MethodRun> {
    let name = explainer.name().to_string();
    for &t in targets {
        if t as usize >= ctx.graph.num_nodes() {
            return Err(ExplainError::TargetOutOfRange {
                target: t,
                num_nodes: ctx.graph.num_nodes(),
            });
        }
    }
    let (mut explanations, mut explain_seconds) = match journal.as_deref() {
        Some(j) => (j.done().to_vec(), j.seconds()),
        None => (Vec::new(), 0.0),
    };
    let resumed = explanations.len();
    if resumed > targets.len()
        || explanations
            .iter()
            .zip(targets)
            .any(|(e, &t)| e.target != t)
    {
        return Err(ExplainError::InvalidValue {
            what: "journal",
            value: name,
            reason: "its explanations are not those of this run's targets".into(),
        });
    }
    opts.progress
        .begin(&format!("explain {name}"), targets.len());
    if resumed > 0 {
        opts.progress.advance(resumed);
    }
    let explain_one = |&t: &u32| {
        if opts.progress.cancelled() {
            return Err(ExplainError::Cancelled);
        }
        let (e, spent) = crate::oracle::counted(|| explainer.explain(ctx.graph, t));
        let e = match e {
            Err(ExplainError::NoCandidate { target }) => ctx.not_found(target),
            other => other,
        }
        .map(|mut e| {
            // A method that counts its own evaluations keeps its count.
            e.evaluations.get_or_insert(spent);
            e
        });
        opts.progress.advance(1);
        e
    };
    // A batching explainer takes `batch` targets per call and uses the threads itself.
    let batch = explainer.batch_size().max(1);
    let explain_part = |part: &[u32]| -> Result<Vec<Explanation>> {
        if batch == 1 {
            return crate::parallel::map(part, opts.threads, explain_one);
        }
        let mut out = Vec::with_capacity(part.len());
        for chunk in part.chunks(batch) {
            if opts.progress.cancelled() {
                return Err(ExplainError::Cancelled);
            }
            let (results, spent) =
                crate::oracle::counted(|| explainer.explain_batch(ctx.graph, chunk, opts.threads));
            for e in results {
                let mut e = match e {
                    Err(ExplainError::NoCandidate { target }) => ctx.not_found(target)?,
                    other => other?,
                };
                // A batch's evaluations are shared by its targets: attributed only to a batch
                // of one, unless the method counted each target's itself.
                if chunk.len() == 1 {
                    e.evaluations.get_or_insert(spent);
                }
                out.push(e);
            }
            opts.progress.advance(chunk.len());
        }
        Ok(out)
    };
    let rest = &targets[resumed..];
    match journal {
        None => {
            let start = Instant::now();
            explanations = explain_part(rest)?;
            explain_seconds = start.elapsed().as_secs_f64();
        }
        Some(j) => {
            let chunk = (4 * opts.threads.max(1)).max(batch);
            for part in rest.chunks(chunk) {
                let start = Instant::now();
                let done = explain_part(part)?;
                let secs = start.elapsed().as_secs_f64();
                j.append(&done, secs)?;
                explain_seconds += secs;
                explanations.extend(done);
            }
        }
    }
    opts.progress.end();
    // The metric ingredients (1-minimality calls the black box once per edit) are not timed.
    let hops = explainer
        .neighbourhood_hops()
        .unwrap_or(ctx.protocol.radius);
    let targets: Vec<u32> = explanations.iter().map(|e| e.target).collect();
    let edges = neighbourhood_edges_many(ctx.graph, &targets, hops, opts.threads)?;
    let counted: Vec<(&Explanation, usize)> = explanations.iter().zip(edges).collect();
    let records = crate::parallel::map(&counted, opts.threads, |&(e, m)| {
        ctx.record_counted(&name, e.clone(), hops, m)
    });
    Ok(MethodRun {
        method: name,
        records: records?,
        train_seconds: 0.0,
        explain_seconds,
        notes: Vec::new(),
    })
}

#[cfg(test)]
pub(crate) mod testutil {
    use induce_graph::{Features, Graph};

    use crate::error::{ExplainError, Result};
    use crate::explanation::{Edit, Explainer, Explanation};

    /// Class 1 iff degree ≥ the threshold.
    pub use induce_models::testing::DegreeAtLeast;

    /// Class 1 iff degree ≥ 2.
    pub const DEGREE_RULE: DegreeAtLeast = DegreeAtLeast(2);

    /// Deletes the target's edges one by one (lowest neighbour first) until its degree is 1;
    /// targets of degree ≤ 1 have no candidate.
    pub struct Prune;

    impl Explainer for Prune {
        fn name(&self) -> &str {
            "prune"
        }
        fn explain(&self, g: &Graph, t: u32) -> Result<Explanation> {
            let mut nb: Vec<u32> = g.neighbors(t).collect();
            nb.sort_unstable();
            if nb.len() <= 1 {
                return Err(ExplainError::NoCandidate { target: t });
            }
            let edits = nb[..nb.len() - 1]
                .iter()
                .map(|&w| Edit::delete(t.min(w), t.max(w)))
                .collect();
            Ok(Explanation::counterfactual(t, 1, 0, edits))
        }
    }

    /// A star with centre 0 and leaves 1..=4, plus a path 4 ─ 5 ─ 6 and an isolated node 7;
    /// motifs: {0, 1, 2} is instance 0.
    ///
    /// ```text
    ///   1   2
    ///    \ /
    ///     0 ─ 3        7
    ///     |
    ///     4 ─ 5 ─ 6
    /// ```
    pub fn graph() -> Graph {
        let edges = [(0, 1), (0, 2), (0, 3), (0, 4), (4, 5), (5, 6)];
        let mut m = vec![None; 8];
        for u in [0, 1, 2] {
            m[u] = Some(0);
        }
        Graph::from_edges(8, &edges, Features::constant(8, 1, 1.0), vec![1; 8])
            .unwrap()
            .with_motifs(m)
            .unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::{DEGREE_RULE, Prune, graph};
    use super::*;
    use crate::explanation::Edit;
    use crate::metrics::summarize;

    #[test]
    fn explain_targets_records_and_summary_match_summarize() {
        let g = graph();
        let ctx = EvalContext::new(&g, &DEGREE_RULE, Protocol::exact(2)).unwrap();
        assert_eq!(ctx.predictions(), &[1, 0, 0, 0, 1, 1, 0, 0]);
        let targets = [0, 4, 5, 7, 1];
        for threads in [1, 2] {
            let opts = ExplainOptions {
                threads,
                ..Default::default()
            };
            let run = explain_targets(&Prune, &ctx, &targets, &opts).unwrap();
            let got: Vec<u32> = run.records.iter().map(|r| r.explanation.target).collect();
            assert_eq!(got, targets);
            // 0: 3 deletions; 4 and 5: 1 deletion; 7 and 1: no candidate → not found.
            let sizes: Vec<usize> = run.records.iter().map(|r| r.explanation.size()).collect();
            assert_eq!(sizes, [3, 1, 1, 0, 0]);
            assert!(!run.records[3].explanation.found);
            assert_eq!(run.records[3].explanation.original_label, 0);
            assert_eq!(run.records[0].neighbourhood_edges, 5);
            // target 0 deletes (0, 1), (0, 2), (0, 3): 2 of 3 inside its motif.
            assert_eq!(run.records[0].strict_accuracy, Some(2.0 / 3.0));
            // deletion (0, 1): node 1 is predicted 0 → wrong; paper accuracy 0 for target 0.
            assert_eq!(run.records[0].accuracy, Some(0.0));
            assert_eq!(run.records[1].accuracy, Some(1.0));
            let expl: Vec<Explanation> =
                run.records.iter().map(|r| r.explanation.clone()).collect();
            let direct = summarize(&expl, &g, ctx.predictions(), |t| {
                neighbourhood_edges(&g, t, 2).unwrap()
            })
            .unwrap();
            // Pruning stops at degree 1: putting back any one deleted edge restores degree 2,
            // so every counterfactual is 1-minimal (checked with the black box per record).
            assert_eq!(run.records[0].one_minimal, Some(true));
            assert_eq!(run.records[3].one_minimal, None);
            let mut metrics = run.row().metrics;
            assert_eq!(metrics.one_minimal, Some(1.0));
            // Every counterfactual flips the model on the whole graph (checked per record).
            assert_eq!(run.records[0].valid, Some(true));
            assert_eq!(run.records[3].valid, None);
            assert_eq!(
                (metrics.valid, metrics.valid_fidelity),
                (Some(3), Some(0.4))
            );
            assert_eq!(metrics.fidelity, direct.fidelity);
            metrics.one_minimal = None;
            metrics.valid = None;
            metrics.valid_fidelity = None;
            assert_eq!(metrics, direct);
        }
    }

    #[test]
    fn under_exact_verdicts_a_found_record_the_whole_graph_rejects_is_an_error_naming_it() {
        // Adding (4, 6) raises node 4 to degree 3, which DEGREE_RULE predicts as it did (class 1
        // from degree 2): a method that calls it a counterfactual is wrong, and the record
        // refuses it.
        let g = graph();
        let wrong = Explanation {
            feature_edits: Vec::new(),
            evaluations: None,
            certified: None,
            target: 4,
            found: true,
            original_label: 1,
            new_label: 0,
            edits: vec![Edit::add(4, 6)],
        };
        let exact = EvalContext::new(&g, &DEGREE_RULE, Protocol::exact(2)).unwrap();
        let e = exact.record("liar", wrong.clone()).unwrap_err();
        assert!(
            matches!(&e, ExplainError::FoundNotValid { method, target: 4, .. } if method == "liar"),
            "{e}"
        );
        assert!(e.to_string().contains("target 4"), "{e}");
        // The paper's frozen-neighbourhood verdicts keep their meaning: recorded, not valid.
        let paper = EvalContext::new(&g, &DEGREE_RULE, Protocol::paper(2)).unwrap();
        assert_eq!(paper.record("liar", wrong).unwrap().valid, Some(false));
    }

    #[test]
    fn an_explainer_with_its_own_radius_is_measured_on_it() {
        // Prune searching 3 hops in a context of 1: target 4's 1-hop neighbourhood has 2 edges
        // (0 ─ 4, 4 ─ 5), its 3-hop one all 6; the sparsity's count follows the explainer.
        struct Wide;
        impl Explainer for Wide {
            fn name(&self) -> &str {
                "wide"
            }
            fn explain(&self, g: &Graph, t: u32) -> Result<Explanation> {
                Prune.explain(g, t)
            }
            fn neighbourhood_hops(&self) -> Option<u32> {
                Some(3)
            }
        }
        let g = graph();
        let ctx = EvalContext::new(&g, &DEGREE_RULE, Protocol::exact(1)).unwrap();
        let opts = ExplainOptions::default();
        let edges = |e: &dyn Explainer| {
            let run = explain_targets(e, &ctx, &[4], &opts).unwrap();
            run.records[0].neighbourhood_edges
        };
        assert_eq!((edges(&Prune), edges(&Wide)), (2, 6));
        let minimised =
            crate::minimise::Minimised::new(Wide, &DEGREE_RULE, 1, crate::Verdict::Exact);
        assert_eq!(edges(&minimised), 6);
    }

    #[test]
    fn a_not_found_record_lists_no_edit_and_a_motifless_graph_no_accuracy() {
        /// Tries one deletion and reports no flip.
        struct Tries;
        impl Explainer for Tries {
            fn name(&self) -> &str {
                "tries"
            }
            fn explain(&self, _: &Graph, t: u32) -> Result<Explanation> {
                Ok(Explanation {
                    feature_edits: Vec::new(),
                    evaluations: None,
                    certified: None,
                    target: t,
                    found: false,
                    original_label: 1,
                    new_label: 1,
                    edits: vec![Edit::delete(0, 1)],
                })
            }
        }
        let g = graph();
        let ctx = EvalContext::new(&g, &DEGREE_RULE, Protocol::exact(2)).unwrap();
        let run = explain_targets(&Tries, &ctx, &[0], &ExplainOptions::default()).unwrap();
        assert!(run.records[0].explanation.edits.is_empty());
        // Without motif ground truth (no background class) neither accuracy is taken.
        let bare =
            Graph::from_edges(8, &g.edges(), g.features().clone(), g.labels().to_vec()).unwrap();
        let ctx = EvalContext::new(&bare, &DEGREE_RULE, Protocol::exact(2)).unwrap();
        let run = explain_targets(&Prune, &ctx, &[0], &ExplainOptions::default()).unwrap();
        let r = &run.records[0];
        assert!(r.explanation.found);
        assert_eq!((r.accuracy, r.strict_accuracy), (None, None));
        let table = |run: &MethodRun| {
            format_table(&[&RunSummary {
                dataset: "toy".into(),
                seed: 42,
                graph: GraphSize { nodes: 8, edges: 6 },
                black_box: BlackBoxAccuracy::default(),
                shard: None,
                runs: vec![run.row()],
                notes: Vec::new(),
            }])
        };
        let t = table(&run);
        assert!(!t.contains("acc %") && t.contains("sparsity"), "{t}");
        let ctx = EvalContext::new(&g, &DEGREE_RULE, Protocol::exact(2)).unwrap();
        let run = explain_targets(&Prune, &ctx, &[0], &ExplainOptions::default()).unwrap();
        assert!(table(&run).contains("acc %"));
    }

    #[test]
    fn out_of_range_target_is_an_error() {
        let g = graph();
        let ctx = EvalContext::new(&g, &DEGREE_RULE, Protocol::exact(2)).unwrap();
        let err = explain_targets(&Prune, &ctx, &[3, 8], &ExplainOptions::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "target node 8 is out of range: the graph has 8 nodes"
        );
    }

    #[test]
    fn progress_is_reported() {
        use std::sync::Mutex;
        #[derive(Default)]
        struct Log(Mutex<Vec<String>>);
        impl Progress for Log {
            fn begin(&self, task: &str, total: usize) {
                self.0.lock().unwrap().push(format!("{task} {total}"));
            }
            fn advance(&self, n: usize) {
                self.0.lock().unwrap().push(format!("+{n}"));
            }
            fn end(&self) {
                self.0.lock().unwrap().push("end".into());
            }
        }
        let g = graph();
        let ctx = EvalContext::new(&g, &DEGREE_RULE, Protocol::exact(2)).unwrap();
        let log = Log::default();
        let opts = ExplainOptions {
            threads: 1,
            progress: &log,
        };
        explain_targets(&Prune, &ctx, &[0, 4], &opts).unwrap();
        assert_eq!(
            *log.0.lock().unwrap(),
            ["explain prune 2", "+1", "+1", "end"]
        );
    }

    #[test]
    fn a_cancelled_run_stops_before_the_next_target() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        /// Cancels once one target is done.
        #[derive(Default)]
        struct AfterOne(AtomicUsize);
        impl Progress for AfterOne {
            fn advance(&self, n: usize) {
                self.0.fetch_add(n, Ordering::SeqCst);
            }
            fn cancelled(&self) -> bool {
                self.0.load(Ordering::SeqCst) >= 1
            }
        }
        let g = graph();
        let ctx = EvalContext::new(&g, &DEGREE_RULE, Protocol::exact(2)).unwrap();
        let stop = AfterOne::default();
        let opts = ExplainOptions {
            threads: 1,
            progress: &stop,
        };
        let err = explain_targets(&Prune, &ctx, &[0, 4, 5], &opts).unwrap_err();
        assert!(matches!(err, ExplainError::Cancelled), "{err}");
        assert_eq!(stop.0.load(Ordering::SeqCst), 1);
    }
}
