//! 1-minimality of a counterfactual: no single edit can be undone with the label still flipped.

use std::collections::HashSet;

use induce_graph::{Graph, k_hop};
use induce_models::BlackBox;

use crate::error::{ExplainError, Result};
use crate::explanation::{EditKind, Explanation};

/// Whether the counterfactual `e` is 1-minimal: undoing any one of its edits (on the target's
/// `hops`-hop neighbourhood, the others applied) gives the black box's original label back.
/// `None` when `e` is not a counterfactual (not found, or no edit).
///
/// Cost: one black-box call per edit.
///
/// ```
/// use induce_explain::metrics::is_one_minimal;
/// use induce_explain::{Edit, Explanation};
/// use induce_graph::{Features, Graph};
/// use induce_models::{BlackBox, LogProbs};
///
/// /// Class 1 iff degree ≥ 2.
/// struct DegreeRule;
/// impl BlackBox for DegreeRule {
///     fn input_dim(&self) -> usize { 1 }
///     fn num_classes(&self) -> usize { 2 }
///     fn log_probs(&self, x: &Features, edges: &[(u32, u32)])
///         -> induce_models::Result<LogProbs> {
///         let mut deg = vec![0; x.num_nodes()];
///         for &(u, w) in edges { deg[u as usize] += 1; deg[w as usize] += 1; }
///         let d = deg.iter().flat_map(|&d| if d >= 2 { [-2.0, -0.2] } else { [-0.2, -2.0] });
///         LogProbs::new(x.num_nodes(), 2, d.collect())
///     }
/// }
/// //  0 ─ 1 ─ 2 ─ 3: node 1 has degree 2 (class 1)
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
///     vec![0; 4]).unwrap();
/// let cf = |edits| Explanation { target: 1, found: true, original_label: 1, new_label: 0, edits };
/// // One deletion suffices: minimal. Two deletions: either alone already flips, not minimal.
/// assert_eq!(is_one_minimal(&g, &DegreeRule, &cf(vec![Edit::delete(0, 1)]), 3).unwrap(),
///     Some(true));
/// let two = cf(vec![Edit::delete(0, 1), Edit::delete(1, 2)]);
/// assert_eq!(is_one_minimal(&g, &DegreeRule, &two, 3).unwrap(), Some(false));
/// ```
pub fn is_one_minimal(
    graph: &Graph,
    black_box: &dyn BlackBox,
    e: &Explanation,
    hops: u32,
) -> Result<Option<bool>> {
    if !e.found || e.edits.is_empty() {
        return Ok(None);
    }
    let sub = k_hop(graph, e.target, hops)?;
    let local = |u: u32| -> Result<u32> {
        sub.local_of(u)
            .map(|l| l as u32)
            .ok_or(ExplainError::NodeOutOfRange {
                node: u,
                num_nodes: sub.num_nodes(),
                what: "the target's neighbourhood",
            })
    };
    let mut edits = Vec::with_capacity(e.edits.len());
    for x in &e.edits {
        let (a, b) = (local(x.u)?, local(x.w)?);
        edits.push(((a.min(b), a.max(b)), x.kind));
    }
    let x = sub.features(graph);
    let prepared = black_box.prepare(&x)?;
    let original: HashSet<(u32, u32)> = sub.edges.iter().copied().collect();
    for skip in 0..edits.len() {
        let mut set = original.clone();
        for (i, &(pair, kind)) in edits.iter().enumerate() {
            if i == skip {
                continue;
            }
            match kind {
                EditKind::Delete => set.remove(&pair),
                EditKind::Add => set.insert(pair),
            };
        }
        let mut list: Vec<(u32, u32)> = set.into_iter().collect();
        list.sort_unstable();
        let lp = match &prepared {
            Some(p) => p.log_probs(&list)?,
            None => black_box.log_probs(&x, &list)?,
        };
        if lp.argmax(sub.target_local) != e.original_label {
            return Ok(Some(false));
        }
    }
    Ok(Some(true))
}
