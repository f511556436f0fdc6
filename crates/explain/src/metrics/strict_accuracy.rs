//! Strict accuracy (ours): does the explanation act on the target's own motif?

use induce_graph::Graph;

use crate::error::{ExplainError, Result};
use crate::explanation::Explanation;
use crate::metrics::{found, mean};

/// Mean, over found explanations, of the share of edits (additions and deletions alike) whose
/// two endpoints both lie in the target's own ground-truth motif instance
/// ([`Graph::motifs`]). A target outside every motif has share 0.
///
/// Found explanations without edits are skipped; `None` when no found explanation has an
/// edit. Errors: [`ExplainError::NoGroundTruth`] for a graph without motifs,
/// [`ExplainError::NodeOutOfRange`] for an id outside the graph.
///
/// ```
/// use induce_graph::{Features, Graph};
/// use induce_explain::{Edit, Explanation, metrics::strict_accuracy};
/// let g = Graph::empty(Features::constant(4, 1, 1.0), vec![0; 4]).unwrap()
///     .with_motifs(vec![Some(0), Some(0), Some(1), None]).unwrap();
/// let e = Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 0, found: true, original_label: 1, new_label: 0,
///     edits: vec![Edit::delete(0, 1), Edit::add(0, 2)] };
/// assert_eq!(strict_accuracy(&[e], &g).unwrap(), Some(0.5));
/// ```
pub fn strict_accuracy(explanations: &[Explanation], graph: &Graph) -> Result<Option<f64>> {
    let motifs = graph.motifs().ok_or(ExplainError::NoGroundTruth)?;
    let motif = |u: u32| {
        motifs
            .get(u as usize)
            .copied()
            .ok_or(ExplainError::NodeOutOfRange {
                node: u,
                num_nodes: motifs.len(),
                what: "the graph",
            })
    };
    let mut shares = Vec::new();
    for e in found(explanations).filter(|e| !e.edits.is_empty()) {
        let own = motif(e.target)?;
        let mut correct = 0usize;
        for edit in &e.edits {
            let (a, b) = (motif(edit.u)?, motif(edit.w)?);
            correct += usize::from(own.is_some() && a == own && b == own);
        }
        shares.push(correct as f64 / e.edits.len() as f64);
    }
    Ok(mean(shares.into_iter()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explanation::Edit;
    use crate::metrics::fixture;
    use induce_graph::Features;

    #[test]
    fn fixture_strict_accuracy() {
        // 10 (motif 0): del(10, 11) ✓, add(10, 3) ✗ (3 in motif 1) → 1/2
        // 20 (motif 2): del(20, 21) ✓ → 1
        // 40 (motif 3): del(5, 6) ✗ (off-motif), del(40, 41) ✓, del(41, 42) ✓ → 2/3
        let a = strict_accuracy(&fixture::explanations(), &fixture::graph())
            .unwrap()
            .unwrap();
        assert!((a - 13.0 / 18.0).abs() < 1e-12, "{a}");
    }

    #[test]
    fn off_motif_target_and_errors() {
        let g = fixture::graph();
        // target 5 is off-motif: even an edit between two off-motif nodes is wrong
        let e = Explanation::counterfactual(5, 1, 0, vec![Edit::delete(5, 6)]);
        assert_eq!(
            strict_accuracy(std::slice::from_ref(&e), &g).unwrap(),
            Some(0.0)
        );
        let far = Explanation {
            evaluations: None,
            certified: None,
            edits: vec![Edit::add(5, 43)],
            ..e.clone()
        };
        assert!(matches!(
            strict_accuracy(&[far], &g),
            Err(ExplainError::NodeOutOfRange {
                node: 43,
                num_nodes: 43,
                ..
            })
        ));
        let plain = Graph::empty(Features::constant(43, 1, 1.0), vec![0; 43]).unwrap();
        assert!(matches!(
            strict_accuracy(&[e], &plain),
            Err(ExplainError::NoGroundTruth)
        ));
    }
}
