//! What a run produces: one [`TargetRecord`] per explained target, one [`RunRow`] per method,
//! one [`RunSummary`] per run.

use serde::{Deserialize, Serialize};

use crate::explanation::Explanation;
use crate::metrics::{Summary, composition, fidelity, found, mean, size, size_histogram};
use crate::pipeline::Shard;
use crate::verdict::Verdict;

/// One line of `explanations.jsonl`: a method's explanation of one target, with what the metrics
/// need to be recomputed from the file alone.
///
/// ```
/// use induce_explain::{Edit, Explanation};
/// use induce_explain::pipeline::TargetRecord;
/// let r = TargetRecord {
///     method: "inductive".into(),
///     explanation: Explanation { evaluations: None, certified: None, feature_edits: vec![],
///         target: 7, found: true, original_label: 1, new_label: 0,
///         edits: vec![Edit::delete(3, 7)] },
///     neighbourhood_edges: 12, accuracy: Some(1.0), strict_accuracy: None, one_minimal: None,
///     valid: Some(true), verdict: Default::default() };
/// assert_eq!(serde_json::to_string(&r).unwrap(), concat!(
///     r#"{"method":"inductive","target":7,"found":true,"original_label":1,"new_label":0,"#,
///     r#""edits":[[3,7,"del"]],"neighbourhood_edges":12,"accuracy":1.0,"strict_accuracy":null,"#,
///     r#""valid":true,"verdict":"exact"}"#));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetRecord {
    /// The method's name (as the command line spells it).
    pub method: String,
    /// The explanation (its fields are flattened into the line).
    #[serde(flatten)]
    pub explanation: Explanation,
    /// Edges of the target's original h-hop neighbourhood (the `m_v` of sparsity).
    pub neighbourhood_edges: usize,
    /// The paper's accuracy share of this explanation (`None` when not found or without edits).
    pub accuracy: Option<f64>,
    /// Strict accuracy share (`None` when not found, without edits, or without ground truth).
    pub strict_accuracy: Option<f64>,
    /// Whether the counterfactual is 1-minimal ([`is_one_minimal`]; `None` when not found, not
    /// checked, or from a file written before this field existed).
    ///
    /// [`is_one_minimal`]: crate::metrics::is_one_minimal
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_minimal: Option<bool>,
    /// Whether the counterfactual flips the black box's prediction on the WHOLE graph, checked
    /// by a whole-graph forward pass independent of the explainer's own evaluation
    /// ([`whole_graph_label`](crate::whole_graph_label)); `None` when not found or not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid: Option<bool>,
    /// Where the explainer took its verdicts. A line without it was written before verdicts
    /// were recorded, when every verdict was taken on the frozen neighbourhood
    /// ([`Verdict::legacy`]).
    #[serde(default = "Verdict::legacy")]
    pub verdict: Verdict,
}

/// The metrics of one method from its records alone; equal to
/// [`summarize`](crate::metrics::summarize) on the same explanations and graph, plus the share
/// of 1-minimal counterfactuals where the records carry it, whenever every found record is
/// valid.
///
/// Under [`Verdict::Exact`] a record that its method reports found but that the whole-graph
/// check refutes (`valid: Some(false)`: a near-tie that a GPU's rounding judged otherwise, say)
/// is no counterfactual: it counts in `found` only, and in none of the metrics of the found
/// counterfactuals (size, accuracy, sparsity, composition, 1-minimality, the histogram). Under
/// [`Verdict::Neighbourhood`] (the paper's protocol) those metrics keep the paper's definition,
/// over every found record, as `fidelity` does.
///
/// ```
/// use induce_explain::{Edit, Explanation, Verdict};
/// use induce_explain::pipeline::{TargetRecord, summarize_records};
/// let record = |target, edits: Vec<Edit>, valid| TargetRecord {
///     method: "inductive".into(),
///     explanation: Explanation { evaluations: None, certified: None, feature_edits: vec![],
///         target, found: true, original_label: 1, new_label: 0, edits },
///     neighbourhood_edges: 4, accuracy: None, strict_accuracy: None, one_minimal: None,
///     valid: Some(valid), verdict: Verdict::Exact };
/// let records = [record(0, vec![Edit::delete(0, 1)], true),
///                record(2, vec![Edit::delete(2, 3), Edit::add(2, 4)], false)];
/// let s = summarize_records(&records);
/// assert_eq!((s.found, s.valid, s.fidelity), (2, Some(1), Some(0.5)));
/// assert_eq!((s.size_mean, s.additions, s.deletions), (Some(1.0), 0, 1)); // the valid one only
/// ```
pub fn summarize_records(records: &[TargetRecord]) -> Summary {
    let expl: Vec<Explanation> = records.iter().map(|r| r.explanation.clone()).collect();
    let found_records = || records.iter().filter(|r| r.explanation.found);
    let checked = found_records().all(|r| r.valid.is_some());
    let valid = checked.then(|| found_records().filter(|r| r.valid == Some(true)).count());
    let verdict = match records.iter().any(|r| r.verdict == Verdict::Neighbourhood) {
        true => Verdict::Neighbourhood,
        false => Verdict::Exact,
    };
    // The counterfactuals that the metrics of found ones describe (see above).
    let counted_records = || {
        found_records().filter(move |r| verdict == Verdict::Neighbourhood || r.valid != Some(false))
    };
    let counted: Vec<Explanation> = counted_records().map(|r| r.explanation.clone()).collect();
    let sz = size(&counted);
    let comp = composition(&counted);
    let valid_fidelity = valid
        .filter(|_| !records.is_empty())
        .map(|v| 1.0 - v as f64 / records.len() as f64);
    Summary {
        targets: expl.len(),
        found: found(&expl).count(),
        valid,
        verdict,
        fidelity: match (verdict, valid_fidelity) {
            (Verdict::Exact, Some(f)) => Some(f),
            _ => fidelity(&expl),
        },
        valid_fidelity,
        size_mean: sz.map(|s| s.mean),
        size_std: sz.map(|s| s.std),
        accuracy: mean(counted_records().filter_map(|r| r.accuracy)),
        strict_accuracy: mean(counted_records().filter_map(|r| r.strict_accuracy)),
        sparsity: mean(counted_records().filter_map(|r| {
            let m = r.neighbourhood_edges;
            (m > 0).then(|| 1.0 - r.explanation.size() as f64 / m as f64)
        })),
        additions: comp.additions,
        deletions: comp.deletions,
        one_minimal: mean(
            counted_records().filter_map(|r| r.one_minimal.map(|m| if m { 1.0 } else { 0.0 })),
        ),
        size_histogram: size_histogram(&counted),
        evaluations_mean: crate::metrics::evaluations_mean(&expl),
        features_changed: crate::metrics::features_changed_mean(&counted),
    }
}

/// One method's explanations of a target set, with its times.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodRun {
    /// The method's name.
    pub method: String,
    /// One record per target, in target order.
    pub records: Vec<TargetRecord>,
    /// Time spent training the method (0 for methods without a training phase).
    pub train_seconds: f64,
    /// Wall-clock time to explain all targets.
    pub explain_seconds: f64,
    /// Anything a reader of the results should know about this method's run.
    pub notes: Vec<String>,
}

impl MethodRun {
    /// The method's row of the results table.
    pub fn row(&self) -> RunRow {
        RunRow {
            method: self.method.clone(),
            metrics: summarize_records(&self.records),
            train_seconds: self.train_seconds,
            explain_seconds: self.explain_seconds,
            notes: self.notes.clone(),
        }
    }

    /// Only the explanations, in target order.
    pub fn explanations(&self) -> Vec<Explanation> {
        self.records.iter().map(|r| r.explanation.clone()).collect()
    }
}

/// One row of the results table: a method, its metrics (fractions in `[0, 1]`) and its times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    /// The method's name (`inductive`, `transductive`, ...).
    pub method: String,
    /// The metrics (flattened into the row's JSON object).
    #[serde(flatten)]
    pub metrics: Summary,
    /// Training time of the method.
    pub train_seconds: f64,
    /// Time to explain all targets.
    pub explain_seconds: f64,
    /// Notes on this method's run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Graph size in `summary.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphSize {
    /// Nodes.
    pub nodes: usize,
    /// Undirected edges.
    pub edges: usize,
}

/// Black-box accuracy in `summary.json`: `None` for an empty split (there is nothing to
/// measure), never a misleading 0 %.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct BlackBoxAccuracy {
    /// Train accuracy, in `[0, 1]`.
    pub train_accuracy: Option<f64>,
    /// Test accuracy, in `[0, 1]`.
    pub test_accuracy: Option<f64>,
}

/// The content of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Dataset name.
    pub dataset: String,
    /// The run's seed.
    pub seed: u64,
    /// Graph size.
    pub graph: GraphSize,
    /// Black-box accuracy on the dataset's split.
    pub black_box: BlackBoxAccuracy,
    /// The shard of the targets this run explained (absent for a whole run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// One row per method.
    pub runs: Vec<RunRow>,
    /// Notes on the data and the metrics (normalisations, a metric that could not be computed
    /// and why).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}
