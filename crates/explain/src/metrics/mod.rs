//! Evaluation metrics of counterfactual explanations (spec §5), one file per metric.
//!
//! Every metric takes the explanations of a set of targets, `&[Explanation]`, plus whatever it
//! needs from the graph or the black box. Shares are in `[0, 1]` (multiply by 100 for the
//! paper's percentages). Metrics averaged over the targets with a counterfactual
//! (`found == true`) return `None` when there is none; the edits of explanations that were not
//! found are never counted.
//!
//! * [`fidelity`]: share of targets with no counterfactual (lower is better);
//! * [`size`]: mean and population std of the number of edits;
//! * [`accuracy`]: the paper's protocol (additions always correct; a deletion correct iff the
//!   black box predicts a non-zero label for both endpoints on the full graph);
//! * [`strict_accuracy`]: an edit correct iff both endpoints lie in the target's own motif;
//! * [`sparsity`]: mean of `1 − edits / edges of the target's original neighbourhood`;
//! * [`composition`]: total additions and deletions;
//! * [`size_histogram`]: number of explanations of each size;
//! * [`is_one_minimal`]: whether no single edit of a counterfactual can be undone with the label
//!   still flipped (needs the black box; the pipeline records it per target);
//! * [`jaccard`], [`mean_pairwise_jaccard`], [`with_noise_edges`]: stability of the edit sets
//!   across seeds and under noise edges (GNNX-Bench's measure).
//!
//! [`summarize`] gathers them in a serialisable [`Summary`].

mod accuracy;
mod composition;
mod fidelity;
mod minimality;
mod size;
mod size_histogram;
mod sparsity;
mod stability;
mod strict_accuracy;

use std::collections::BTreeMap;

use induce_graph::Graph;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::explanation::Explanation;
use crate::verdict::Verdict;

pub use accuracy::accuracy;
pub use composition::{Composition, composition};
pub use fidelity::fidelity;
pub use minimality::is_one_minimal;
pub use size::{SizeStats, size};
pub use size_histogram::size_histogram;
pub use sparsity::{neighbourhood_edges, neighbourhood_edges_many, sparsity};
pub use stability::{NoisyGraph, jaccard, mean_pairwise_jaccard, with_noise_edges};
pub use strict_accuracy::strict_accuracy;

/// The explanations with a counterfactual.
pub(crate) fn found(explanations: &[Explanation]) -> impl Iterator<Item = &Explanation> {
    explanations.iter().filter(|e| e.found)
}

/// Mean of an iterator of values; `None` when it is empty.
pub(crate) fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    (count > 0).then(|| sum / count as f64)
}

/// All metrics of one evaluation run.
///
/// ```
/// use induce_graph::{Features, Graph};
/// use induce_explain::{Edit, Explanation, metrics::summarize};
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], Features::constant(3, 1, 1.0), vec![1, 1, 0])
///     .unwrap();
/// let e = vec![
///     Explanation { evaluations: None, certified: None, feature_edits: vec![],
///         target: 0, found: true, original_label: 1, new_label: 0,
///         edits: vec![Edit::delete(0, 1)] },
///     Explanation { evaluations: None, certified: None, feature_edits: vec![],
///         target: 1, found: false, original_label: 1, new_label: 1, edits: vec![] },
/// ];
/// let s = summarize(&e, &g, &[1, 1, 0], |_| 2).unwrap();
/// assert_eq!((s.targets, s.found), (2, 1));
/// assert_eq!(s.fidelity, Some(0.5));
/// assert_eq!(s.sparsity, Some(0.5));
/// // no motif ground truth, so no background class: neither accuracy means anything
/// assert_eq!((s.accuracy, s.strict_accuracy), (None, None));
/// // nodes 0 and 1 in motif 0, node 2 the background: both accuracies count
/// let g = g.with_motifs(vec![Some(0), Some(0), None]).unwrap();
/// let s = summarize(&e, &g, &[1, 1, 0], |_| 2).unwrap();
/// assert_eq!((s.accuracy, s.strict_accuracy), (Some(1.0), Some(1.0)));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of targets explained.
    pub targets: usize,
    /// Number of targets for which the method reports a counterfactual.
    pub found: usize,
    /// Number of those that flip the black box's prediction on the WHOLE graph, checked by a
    /// whole-graph forward pass ([`whole_graph_label`](crate::whole_graph_label)); `None` when
    /// not checked (no black box, or a file written before the check existed).
    #[serde(default)]
    pub valid: Option<usize>,
    /// Where the method's verdicts were taken ([`Verdict::Neighbourhood`] for the paper's
    /// frozen-neighbourhood protocol, `--paper-faithful`, and for files written before verdicts
    /// were recorded).
    #[serde(default = "Verdict::legacy")]
    pub verdict: Verdict,
    /// Share of targets without a counterfactual; lower is better. Counts only the VALID
    /// counterfactuals when they were checked and the verdicts are [`Verdict::Exact`]; with
    /// [`Verdict::Neighbourhood`] (or unchecked) it is the paper's [`fidelity`] over `found`, and
    /// `valid_fidelity` gives the whole-graph one beside it.
    pub fidelity: Option<f64>,
    /// Share of targets without a valid counterfactual (`1 − valid / targets`; `None` when not
    /// checked).
    #[serde(default)]
    pub valid_fidelity: Option<f64>,
    /// Mean size over found targets ([`size`]); from a run's records, under exact verdicts, over
    /// the valid ones ([`summarize_records`](crate::pipeline::summarize_records)), as are the
    /// other metrics of found counterfactuals below.
    pub size_mean: Option<f64>,
    /// Population standard deviation of the size over found targets ([`size`]).
    pub size_std: Option<f64>,
    /// [`accuracy`] (paper protocol); `None` when the graph has no motif ground truth (no
    /// background class: the real graphs), where it means nothing.
    pub accuracy: Option<f64>,
    /// [`strict_accuracy`]; `None` also when the graph has no motif ground truth.
    pub strict_accuracy: Option<f64>,
    /// [`sparsity`].
    pub sparsity: Option<f64>,
    /// Total additions over found targets ([`composition`]).
    pub additions: usize,
    /// Total deletions over found targets ([`composition`]).
    pub deletions: usize,
    /// Number of found explanations of each size ([`size_histogram`]); a JSON object with the
    /// sizes as keys (`{"1": 40, "2": 3}`), readable also when the summary is flattened into a
    /// larger object.
    #[serde(with = "histogram_keys")]
    pub size_histogram: BTreeMap<usize, usize>,
    /// Share of the counterfactuals checked for [`is_one_minimal`] that are 1-minimal (`None`
    /// when none was checked: no black box, or nothing found).
    #[serde(default)]
    pub one_minimal: Option<f64>,
    /// Mean black-box evaluations per target ([`Explanation::evaluations`]: the method's
    /// oracle-call cost), over every target; `None` when some target's were not counted.
    #[serde(default)]
    pub evaluations_mean: Option<f64>,
    /// Mean number of feature entries changed over the found counterfactuals
    /// ([`Explanation::features_changed`]; the edge edits are `size_mean`, never summed with
    /// these); `None` when no counterfactual changed a feature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features_changed: Option<f64>,
}

/// The mean number of feature entries the found explanations change, `None` when none changes
/// one (an edge-only run).
///
/// ```
/// use induce_explain::{Explanation, FeatureEdit};
/// use induce_explain::metrics::features_changed_mean;
/// let flip = FeatureEdit { node: 0, feature: 3, old: 0.0, new: 1.0 };
/// let e = |fe: Vec<FeatureEdit>| Explanation { feature_edits: fe,
///     ..Explanation::counterfactual(0, 1, 0, vec![]) };
/// assert_eq!(features_changed_mean(&[e(vec![flip, flip]), e(vec![])]), Some(1.0));
/// assert_eq!(features_changed_mean(&[e(vec![])]), None);
/// ```
pub fn features_changed_mean(explanations: &[Explanation]) -> Option<f64> {
    let found: Vec<&Explanation> = explanations.iter().filter(|e| e.found).collect();
    if !found.iter().any(|e| e.features_changed() > 0) {
        return None;
    }
    Some(
        found
            .iter()
            .map(|e| e.features_changed() as f64)
            .sum::<f64>()
            / found.len() as f64,
    )
}

/// The mean of the explanations' evaluation counts, `None` unless every one was counted.
///
/// ```
/// use induce_explain::Explanation;
/// use induce_explain::metrics::evaluations_mean;
/// let e = |n| Explanation { evaluations: n, certified: None, feature_edits: vec![], target: 0, found: false,
///     original_label: 0, new_label: 0, edits: vec![] };
/// assert_eq!(evaluations_mean(&[e(Some(2)), e(Some(5))]), Some(3.5));
/// assert_eq!(evaluations_mean(&[e(Some(2)), e(None)]), None);
/// ```
pub fn evaluations_mean(explanations: &[Explanation]) -> Option<f64> {
    let counts: Option<Vec<u64>> = explanations.iter().map(|e| e.evaluations).collect();
    counts
        .filter(|c| !c.is_empty())
        .map(|c| c.iter().map(|&n| n as f64).sum::<f64>() / c.len() as f64)
}

/// Computes every metric.
///
/// * `graph`: the original graph (for the motif ground truth of [`strict_accuracy`]; a graph
///   without ground truth has no background class and gives `accuracy` and `strict_accuracy`
///   `None`);
/// * `full_graph_pred`: the black box's predicted label of every node on the full original
///   graph (for [`accuracy`]);
/// * `edges_of`: the number of edges of a target's original neighbourhood (for [`sparsity`];
///   see [`neighbourhood_edges`]).
pub fn summarize(
    explanations: &[Explanation],
    graph: &Graph,
    full_graph_pred: &[usize],
    edges_of: impl Fn(u32) -> usize,
) -> Result<Summary> {
    let sz = size(explanations);
    let comp = composition(explanations);
    // Both accuracies need a background class: the motif graphs (BA-Shapes, Tree-Cycles,
    // Tree-Grid), whose class 0 holds the non-motif nodes. Elsewhere they mean nothing.
    let (acc, strict) = match graph.motifs() {
        Some(_) => (
            accuracy(explanations, full_graph_pred)?,
            strict_accuracy(explanations, graph)?,
        ),
        None => (None, None),
    };
    Ok(Summary {
        targets: explanations.len(),
        found: found(explanations).count(),
        valid: None,
        verdict: Verdict::default(),
        fidelity: fidelity(explanations),
        valid_fidelity: None,
        size_mean: sz.map(|s| s.mean),
        size_std: sz.map(|s| s.std),
        accuracy: acc,
        strict_accuracy: strict,
        sparsity: sparsity(explanations, edges_of),
        additions: comp.additions,
        deletions: comp.deletions,
        size_histogram: size_histogram(explanations),
        one_minimal: None,
        evaluations_mean: evaluations_mean(explanations),
        features_changed: features_changed_mean(explanations),
    })
}

/// JSON object keys are strings: write the sizes as strings and parse them back (serde's
/// flattening does not convert string keys to integers by itself).
mod histogram_keys {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(h: &BTreeMap<usize, usize>, s: S) -> Result<S::Ok, S::Error> {
        let m: BTreeMap<String, usize> = h.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        m.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<usize, usize>, D::Error> {
        let m: BTreeMap<String, usize> = BTreeMap::deserialize(d)?;
        m.into_iter()
            .map(|(k, v)| {
                k.parse::<usize>()
                    .map(|k| (k, v))
                    .map_err(|_| serde::de::Error::custom(format!("size `{k}` is not a number")))
            })
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    //! Four hand-made explanations shared by the metric tests.
    use induce_graph::{Features, Graph};

    use crate::explanation::{Edit, Explanation};

    fn ex(target: u32, found: bool, edits: Vec<Edit>) -> Explanation {
        let new_label = if found { 0 } else { 1 };
        Explanation {
            feature_edits: Vec::new(),
            evaluations: None,
            certified: None,
            target,
            found,
            original_label: 1,
            new_label,
            edits,
        }
    }

    /// * 10: found, `[del(10, 11), add(10, 3)]`
    /// * 20: found, `[del(20, 21)]`
    /// * 30: NOT found, `[add(30, 1), add(30, 2), add(30, 4)]` (never counted)
    /// * 40: found, `[del(5, 6), del(40, 41), del(41, 42)]`
    pub fn explanations() -> Vec<Explanation> {
        vec![
            ex(10, true, vec![Edit::delete(10, 11), Edit::add(10, 3)]),
            ex(20, true, vec![Edit::delete(20, 21)]),
            ex(
                30,
                false,
                vec![Edit::add(30, 1), Edit::add(30, 2), Edit::add(30, 4)],
            ),
            ex(
                40,
                true,
                vec![
                    Edit::delete(5, 6),
                    Edit::delete(40, 41),
                    Edit::delete(41, 42),
                ],
            ),
        ]
    }

    /// Full-graph predictions of 43 nodes: non-zero for 10, 11, 20, 40, 41 (and 1, 2, 4, 30);
    /// zero for 5, 6, 21, 42 and the rest.
    pub fn predictions() -> Vec<usize> {
        let mut p = vec![0; 43];
        for u in [1, 2, 4, 10, 11, 20, 30, 40, 41] {
            p[u] = 1;
        }
        p
    }

    /// 43 isolated nodes with motif instances: {3}: 1, {10, 11}: 0, {20, 21}: 2,
    /// {30}: 4, {40, 41, 42}: 3; 5 and 6 off-motif.
    pub fn graph() -> Graph {
        let mut m = vec![None; 43];
        for (u, id) in [
            (3, 1),
            (10, 0),
            (11, 0),
            (20, 2),
            (21, 2),
            (30, 4),
            (40, 3),
            (41, 3),
            (42, 3),
        ] {
            m[u] = Some(id);
        }
        Graph::empty(Features::constant(43, 1, 1.0), vec![0; 43])
            .unwrap()
            .with_motifs(m)
            .unwrap()
    }

    /// Neighbourhood edge counts: 10 → 4, 20 → 2, 30 → 5, 40 → 12.
    pub fn edges_of(t: u32) -> usize {
        match t {
            10 => 4,
            20 => 2,
            30 => 5,
            40 => 12,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_the_fixture() {
        let e = fixture::explanations();
        let s = summarize(
            &e,
            &fixture::graph(),
            &fixture::predictions(),
            fixture::edges_of,
        )
        .unwrap();
        assert_eq!((s.targets, s.found), (4, 3));
        assert_eq!(s.fidelity, Some(0.25));
        assert_eq!(s.size_mean, Some(2.0));
        assert!((s.size_std.unwrap() - (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert!((s.accuracy.unwrap() - 4.0 / 9.0).abs() < 1e-12);
        assert!((s.strict_accuracy.unwrap() - 13.0 / 18.0).abs() < 1e-12);
        assert!((s.sparsity.unwrap() - 7.0 / 12.0).abs() < 1e-12);
        assert_eq!((s.additions, s.deletions), (1, 5));
        assert_eq!(s.size_histogram, BTreeMap::from([(1, 1), (2, 1), (3, 1)]));
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Summary>(&j).unwrap(), s);
    }

    #[test]
    fn summary_of_nothing() {
        let g = fixture::graph();
        let s = summarize(&[], &g, &[], |_| 0).unwrap();
        assert_eq!((s.targets, s.found), (0, 0));
        assert_eq!(s.fidelity, None);
        assert_eq!(
            (s.size_mean, s.accuracy, s.strict_accuracy, s.sparsity),
            (None, None, None, None)
        );
        assert!(s.size_histogram.is_empty());
    }
}
