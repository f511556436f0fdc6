//! The checks every verdict shares ([`check_inputs`], [`check_classes`]), the black box's
//! evaluator for a node set, and the independent whole-graph label ([`whole_graph_label`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use induce_graph::{Features, Graph};
use induce_models::{BlackBox, LogProbs, PreparedBlackBox};

use super::{EditedRows, Eval};
use crate::error::{ExplainError, Result};
use crate::explanation::{Edit, EditKind, FeatureEdit};
use crate::field::is_edge;

/// What every verdict on `target` needs: the target inside the graph and features of the black
/// box's dimension.
///
/// Errors: [`ExplainError::TargetOutOfRange`], [`ExplainError::FeatureDimension`].
pub fn check_inputs(graph: &Graph, black_box: &dyn BlackBox, target: u32) -> Result<()> {
    let n = graph.num_nodes();
    if target as usize >= n {
        return Err(ExplainError::TargetOutOfRange {
            target,
            num_nodes: n,
        });
    }
    let d = graph.features().dim();
    if d != black_box.input_dim() {
        return Err(ExplainError::FeatureDimension {
            expected: black_box.input_dim(),
            got: d,
        });
    }
    Ok(())
}

/// The best evaluator the black box offers for the node set `nodes` of `graph`, and its output
/// on `edges` (local ids).
pub(super) fn evaluator<'a>(
    graph: &Graph,
    black_box: &'a dyn BlackBox,
    nodes: &[u32],
    edges: &[(u32, u32)],
    rows: &EditedRows,
) -> Result<(Eval<'a>, LogProbs)> {
    crate::oracle::count(1);
    // With edited feature rows the black box is bound to the node set's own (edited) rows,
    // gathered, with local ids standing for the nodes.
    let gathered;
    let (x, ids): (&Features, std::borrow::Cow<'_, [u32]>) = match rows.is_empty() {
        true => (graph.features(), nodes.into()),
        false => {
            gathered = edited_gather(graph.features(), nodes, rows)?;
            (
                &gathered,
                (0..nodes.len() as u32).collect::<Vec<_>>().into(),
            )
        }
    };
    if let Some(inc) = black_box.incremental_rows(x, &ids, edges)? {
        let lp = inc.log_probs()?;
        return Ok((Eval::Incremental(inc), lp));
    }
    if let Some(p) = black_box.prepare_rows(x, &ids)? {
        let p: Arc<dyn PreparedBlackBox + 'a> = Arc::from(p);
        let lp = p.log_probs(edges)?;
        return Ok((Eval::Prepared(p), lp));
    }
    let x = Arc::new(x.gather(&ids));
    let lp = black_box.log_probs(&x, edges)?;
    Ok((Eval::Plain(x), lp))
}

/// The rows of `nodes` (in order) of `features`, with the edited ones of `rows` in their place.
fn edited_gather(features: &Features, nodes: &[u32], rows: &EditedRows) -> Result<Features> {
    let d = features.dim();
    let mut data = Vec::with_capacity(nodes.len() * d);
    for &v in nodes {
        match rows.get(&v) {
            Some(r) => data.extend_from_slice(r),
            None => data.extend_from_slice(features.row(v as usize)),
        }
    }
    Ok(Features::new(nodes.len(), d, data)?)
}

/// A black box that declares no class cannot classify anything: a typed error instead of an
/// empty row's argmax (every verdict calls it).
pub fn check_classes(black_box: &dyn BlackBox) -> Result<()> {
    match black_box.num_classes() {
        0 => Err(ExplainError::Model(
            induce_models::ModelError::InvalidInput(
                "the black box declares 0 classes: a classifier needs at least one".into(),
            ),
        )),
        _ => Ok(()),
    }
}

/// The black box's label for `target` on the WHOLE graph with `edits` applied, checked
/// independently of [`Judge`]: the edits are applied to a copy of the edge list and the black
/// box runs once on the whole graph (no neighbourhood, no incremental evaluation). A black box
/// bound to `graph` ([`BlackBox::graph_binding`]) answers on the target's receptive field in
/// the edited graph instead ([`GraphBinding::log_probs_checked`]: the same function, every
/// layer recomputed there from the whole graph's first layer or from scratch, never from a
/// search's incremental updates).
///
/// The edits are applied in order as set operations on the edge set: adding an edge that is
/// present, or deleting one that is absent, changes nothing, and a self-loop edit is skipped
/// (graphs are simple). It answers "what does the model predict after these edits", not
/// "are these edits a well-formed explanation" (every explainer here emits each pair once,
/// additions of absent and deletions of present edges).
///
/// Errors: [`ExplainError::NodeOutOfRange`] for an edit outside the graph, a black box with no
/// class, the black box's errors.
///
/// [`Judge`]: super::Judge
/// [`GraphBinding::log_probs_checked`]: induce_models::GraphBinding::log_probs_checked
pub fn whole_graph_label(
    graph: &Graph,
    black_box: &dyn BlackBox,
    target: u32,
    edits: &[Edit],
) -> Result<usize> {
    whole_graph_label_with_features(graph, black_box, target, edits, &[])
}

/// [`whole_graph_label`] with feature edits applied too (entries of the feature matrix set to
/// their `new` values; later edits of an entry win): through the graph binding's
/// [`GraphBinding::log_probs_at_rows`] where it answers, else one whole-graph pass on the
/// edited features.
///
/// Errors: as [`whole_graph_label`], and a feature edit outside the feature matrix or not
/// finite ([`ExplainError::Graph`]).
///
/// [`GraphBinding::log_probs_at_rows`]: induce_models::GraphBinding::log_probs_at_rows
pub fn whole_graph_label_with_features(
    graph: &Graph,
    black_box: &dyn BlackBox,
    target: u32,
    edits: &[Edit],
    feature_edits: &[FeatureEdit],
) -> Result<usize> {
    let n = graph.num_nodes();
    if target as usize >= n {
        return Err(ExplainError::TargetOutOfRange {
            target,
            num_nodes: n,
        });
    }
    if let Some(&x) = edits
        .iter()
        .flat_map(|e| [e.u, e.w])
        .collect::<Vec<_>>()
        .iter()
        .find(|&&x| x as usize >= n)
    {
        return Err(ExplainError::NodeOutOfRange {
            node: x,
            num_nodes: n,
            what: "the graph",
        });
    }
    check_classes(black_box)?;
    let features: Option<Features> = match feature_edits {
        [] => None,
        fe => {
            let entries: Vec<(u32, u32, f32)> =
                fe.iter().map(|e| (e.node, e.feature, e.new)).collect();
            Some(graph.features().with_entries(&entries)?)
        }
    };
    if let Some(binding) = black_box.graph_binding(graph) {
        // The pairs whose presence the edits change, in edit order (the last edit of a pair
        // decides it).
        let mut present: Vec<((u32, u32), bool)> = Vec::new();
        for e in edits.iter().filter(|e| e.u != e.w) {
            let p = (e.u.min(e.w), e.u.max(e.w));
            present.retain(|(q, _)| *q != p);
            present.push((p, e.kind == EditKind::Add));
        }
        let toggled: Vec<(u32, u32)> = present
            .into_iter()
            .filter(|&(p, now)| now != is_edge(graph, p))
            .map(|(p, _)| p)
            .collect();
        let row = match &features {
            None => Some(binding.log_probs_checked(target, &toggled)?),
            Some(x) => {
                let mut nodes: Vec<u32> = feature_edits.iter().map(|e| e.node).collect();
                nodes.sort_unstable();
                nodes.dedup();
                let rows: Vec<(u32, &[f32])> =
                    nodes.iter().map(|&v| (v, x.row(v as usize))).collect();
                binding.log_probs_at_rows(target, &toggled, &rows)?
            }
        };
        if let Some(row) = row {
            let (c, got) = (black_box.num_classes(), row.len());
            let lp = LogProbs::new(1, c, row).map_err(|_| ExplainError::OutputShape {
                expected_nodes: 1,
                expected_classes: c,
                got_nodes: 1,
                got_classes: got,
            })?;
            return Ok(lp.argmax(0));
        }
    }
    let mut edges: BTreeSet<(u32, u32)> = graph.edges().into_iter().collect();
    for e in edits {
        let p = (e.u.min(e.w), e.u.max(e.w));
        match e.kind {
            EditKind::Add => edges.insert(p),
            EditKind::Delete => edges.remove(&p),
        };
    }
    let edges: Vec<(u32, u32)> = edges.into_iter().filter(|p| p.0 != p.1).collect();
    let lp = black_box.log_probs(features.as_ref().unwrap_or(graph.features()), &edges)?;
    if lp.num_nodes() != n {
        return Err(ExplainError::OutputShape {
            expected_nodes: n,
            expected_classes: black_box.num_classes(),
            got_nodes: lp.num_nodes(),
            got_classes: lp.num_classes(),
        });
    }
    Ok(lp.argmax(target as usize))
}
