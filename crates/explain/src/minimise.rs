//! The minimality pass: undo every edit of a counterfactual that the flip does not need, until
//! the counterfactual is 1-minimal. Works on any explainer's output ([`Minimised`] wraps one).

use induce_graph::{Graph, k_hop};
use induce_models::BlackBox;

use crate::error::Result;
use crate::explanation::{Explainer, Explanation};
use crate::verdict::{Judge, Verdict};

/// A counterfactual's edits with the black box ready to judge any subset of them (the rest
/// undone) where `verdict` says: the model's receptive field in the edited graph
/// ([`Verdict::Exact`]) or the target's frozen `hops`-hop neighbourhood
/// ([`Verdict::Neighbourhood`]). Shared by [`minimise`] and
/// [`is_one_minimal`](crate::metrics::is_one_minimal).
///
/// The [`Judge`] keeps the edits of the last query; the next query changes only the pairs it
/// switches, and an incremental black box recomputes only what they reach (each query of the
/// minimality pass switches one or two edits).
pub(crate) struct EditProbe<'a> {
    judge: Judge<'a>,
    explanation: Explanation,
}

impl<'a> EditProbe<'a> {
    /// The probe of `e` (computed on `graph`; with [`Verdict::Neighbourhood`], on its
    /// `hops`-hop neighbourhood).
    pub(crate) fn new(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        e: &Explanation,
        hops: u32,
        verdict: Verdict,
    ) -> Result<Self> {
        let judge = match verdict {
            Verdict::Exact => Judge::exact_target(graph, black_box, e.target)?,
            Verdict::Neighbourhood => {
                let start = k_hop(graph, e.target, hops)?.nodes;
                Judge::new(graph, black_box, e.target, &start, verdict)?
            }
        };
        Ok(Self {
            judge,
            explanation: e.clone(),
        })
    }

    /// Number of edits.
    pub(crate) fn len(&self) -> usize {
        self.explanation.edits.len()
    }

    /// The black box's label for the target with only the edits where `keep[i]` applied.
    pub(crate) fn label(&mut self, keep: &[bool]) -> Result<usize> {
        let kept: Vec<_> = self
            .explanation
            .edits
            .iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(x, _)| *x)
            .collect();
        self.judge.label_with(&kept)
    }
}

/// Removes from the counterfactual `e` every edit the flip does not need: passes over the edits
/// in order, undoing each one whose removal keeps the black box's label different from
/// `e.original_label`, judged where `verdict` says (see [`Verdict`]), until a pass undoes nothing. The result is 1-minimal
/// ([`is_one_minimal`](crate::metrics::is_one_minimal) holds), keeps the order of the remaining
/// edits, and `new_label` is the label with them. An explanation that is not a counterfactual is
/// returned unchanged.
///
/// Cost: at most `size²` black-box calls on the target's receptive field (usually `size` to
/// `2·size`), each incremental when the black box is.
///
/// ```
/// use induce_explain::{Edit, Explanation, Verdict, minimise};
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
/// //  0 ─ 1 ─ 2 ─ 3: node 1 has degree 2 (class 1); deleting either of its edges flips it.
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
///     vec![0; 4]).unwrap();
/// let two = Explanation { target: 1, found: true, original_label: 1, new_label: 0,
///     edits: vec![Edit::delete(0, 1), Edit::delete(1, 2)] };
/// let one = minimise(&g, &DegreeRule, &two, 3, Verdict::Exact).unwrap();
/// assert_eq!(one.edits, vec![Edit::delete(1, 2)]);
/// assert_eq!(one.new_label, 0);
/// ```
pub fn minimise(
    graph: &Graph,
    black_box: &dyn BlackBox,
    e: &Explanation,
    hops: u32,
    verdict: Verdict,
) -> Result<Explanation> {
    if !e.found || e.edits.len() < 2 {
        return Ok(e.clone());
    }
    let mut probe = EditProbe::new(graph, black_box, e, hops, verdict)?;
    let mut keep = vec![true; probe.len()];
    let mut label = e.new_label;
    loop {
        let mut changed = false;
        for i in 0..keep.len() {
            if !keep[i] || keep.iter().filter(|k| **k).count() == 1 {
                continue;
            }
            keep[i] = false;
            let l = probe.label(&keep)?;
            if l != e.original_label {
                label = l;
                changed = true;
            } else {
                keep[i] = true;
            }
        }
        if !changed {
            break;
        }
    }
    Ok(Explanation {
        edits: e
            .edits
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(x, _)| *x)
            .collect(),
        new_label: label,
        ..e.clone()
    })
}

/// An explainer followed by the minimality pass ([`minimise`]) on each of its counterfactuals;
/// it keeps the inner explainer's name.
pub struct Minimised<'a, E> {
    inner: E,
    black_box: &'a dyn BlackBox,
    hops: u32,
    verdict: Verdict,
}

impl<'a, E: Explainer> Minimised<'a, E> {
    /// Wraps `inner`; `hops` is the neighbourhood its edits live in (the explainer's own), used
    /// with [`Verdict::Neighbourhood`].
    pub fn new(inner: E, black_box: &'a dyn BlackBox, hops: u32, verdict: Verdict) -> Self {
        Self {
            inner,
            black_box,
            hops,
            verdict,
        }
    }
}

impl<E: Explainer> Explainer for Minimised<'_, E> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation> {
        let e = self.inner.explain(graph, target)?;
        minimise(graph, self.black_box, &e, self.hops, self.verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Edit;
    use crate::metrics::is_one_minimal;
    use crate::pipeline::testutil::DegreeAtLeast;
    use induce_graph::Features;

    /// A star around 0 with leaves 1..=4, plus the path 4 ─ 5.
    fn star() -> Graph {
        let edges = [(0, 1), (0, 2), (0, 3), (0, 4), (4, 5)];
        Graph::from_edges(6, &edges, Features::constant(6, 1, 1.0), vec![0; 6]).unwrap()
    }

    #[test]
    fn drops_exactly_the_superfluous_edits_and_is_one_minimal() {
        // Node 0 has degree 4, class 1 under "degree ≥ 3": deleting two of its edges flips it.
        // The explanation also deleted (4, 5), which does not touch 0, and a third edge of 0.
        let g = star();
        let bb = DegreeAtLeast(3);
        let e = Explanation {
            target: 0,
            found: true,
            original_label: 1,
            new_label: 0,
            edits: vec![
                Edit::delete(4, 5),
                Edit::delete(0, 1),
                Edit::delete(0, 2),
                Edit::delete(0, 3),
            ],
        };
        assert_eq!(
            is_one_minimal(&g, &bb, &e, 2, Verdict::Exact).unwrap(),
            Some(false)
        );
        let m = minimise(&g, &bb, &e, 2, Verdict::Exact).unwrap();
        // (4,5) goes first, then (0,1): (0,2) and (0,3) are both needed after that.
        assert_eq!(m.edits, vec![Edit::delete(0, 2), Edit::delete(0, 3)]);
        assert_eq!((m.found, m.original_label, m.new_label), (true, 1, 0));
        assert_eq!(
            is_one_minimal(&g, &bb, &m, 2, Verdict::Exact).unwrap(),
            Some(true)
        );
    }

    #[test]
    fn leaves_minimal_and_unfound_explanations_alone() {
        let g = star();
        let bb = DegreeAtLeast(4);
        let one = Explanation {
            target: 0,
            found: true,
            original_label: 1,
            new_label: 0,
            edits: vec![Edit::delete(0, 1)],
        };
        assert_eq!(minimise(&g, &bb, &one, 2, Verdict::Exact).unwrap(), one);
        let none = Explanation {
            found: false,
            new_label: 1,
            edits: vec![Edit::delete(0, 1), Edit::delete(0, 2)],
            ..one.clone()
        };
        assert_eq!(minimise(&g, &bb, &none, 2, Verdict::Exact).unwrap(), none);
    }

    #[test]
    fn an_addition_and_a_deletion_that_cancel_are_both_dropped_only_if_unneeded() {
        // Degree ≥ 4: node 0 (degree 4) flips when it loses one edge. The explanation adds
        // (0, 5) and deletes two edges: the addition must go, then one deletion suffices.
        let g = star();
        let bb = DegreeAtLeast(4);
        let e = Explanation {
            target: 0,
            found: true,
            original_label: 1,
            new_label: 0,
            edits: vec![Edit::add(0, 5), Edit::delete(0, 1), Edit::delete(0, 2)],
        };
        let m = minimise(&g, &bb, &e, 2, Verdict::Exact).unwrap();
        assert_eq!(m.edits, vec![Edit::delete(0, 2)]);
        assert_eq!(
            is_one_minimal(&g, &bb, &m, 2, Verdict::Exact).unwrap(),
            Some(true)
        );
    }
}
