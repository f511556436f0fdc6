//! 1-minimality of a counterfactual: no single edit can be undone with the label still flipped.

use induce_graph::Graph;
use induce_models::BlackBox;

use crate::error::Result;
use crate::explanation::Explanation;
use crate::goal::Goal;
use crate::minimise::EditProbe;
use crate::verdict::Verdict;

/// Whether the counterfactual `e` is 1-minimal: undoing any one of its edits (the others applied)
/// gives the black box's original label back, judged where `verdict` says (the model on the
/// whole edited graph, or the target's frozen `hops`-hop neighbourhood: [`Verdict`]).
/// `None` when `e` is not a counterfactual (not found, or no edit).
///
/// Cost: one black-box call per edit.
///
/// ```
/// use induce_explain::metrics::is_one_minimal;
/// use induce_explain::{Edit, Explanation, Goal, Verdict};
/// use induce_graph::{Features, Graph};
/// use induce_models::testing::DegreeAtLeast;
///
/// //  0 ─ 1 ─ 2 ─ 3: node 1 has degree 2 (class 1)
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
///     vec![0; 4]).unwrap();
/// let cf = |edits| Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 1, found: true, original_label: 1, new_label: 0, edits };
/// // One deletion suffices: minimal. Two deletions: either alone already flips, not minimal.
/// assert_eq!(is_one_minimal(&g, &DegreeAtLeast(2), &cf(vec![Edit::delete(0, 1)]), 3,
///     Verdict::Exact, Goal::AnyOther).unwrap(),
///     Some(true));
/// let two = cf(vec![Edit::delete(0, 1), Edit::delete(1, 2)]);
/// assert_eq!(is_one_minimal(&g, &DegreeAtLeast(2), &two, 3, Verdict::Exact, Goal::AnyOther).unwrap(),
///     Some(false));
/// ```
pub fn is_one_minimal(
    graph: &Graph,
    black_box: &dyn BlackBox,
    e: &Explanation,
    hops: u32,
    verdict: Verdict,
    goal: Goal,
) -> Result<Option<bool>> {
    if !e.found || e.edits.is_empty() && e.feature_edits.is_empty() {
        return Ok(None);
    }
    let mut probe = EditProbe::new(graph, black_box, e, hops, verdict)?;
    let mut keep = vec![true; probe.len()];
    for skip in 0..keep.len() {
        keep[skip] = false;
        if goal.reached(e.original_label, probe.label(&keep)?) {
            return Ok(Some(false));
        }
        keep[skip] = true;
    }
    Ok(Some(true))
}
