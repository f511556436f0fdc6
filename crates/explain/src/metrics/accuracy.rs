//! Accuracy, the paper's protocol.

use crate::error::{ExplainError, Result};
use crate::explanation::{EditKind, Explanation};
use crate::metrics::{found, mean};

/// Mean, over found explanations, of the share of correct edits, where an addition is always
/// correct and a deletion `(u, w)` is correct iff the black box's prediction on the full
/// original graph is non-zero for both `u` and `w` (`full_graph_pred[u] != 0 &&
/// full_graph_pred[w] != 0`).
///
/// Found explanations without edits have no share and are skipped; `None` when no found
/// explanation has an edit. An endpoint outside `full_graph_pred` is
/// [`ExplainError::NodeOutOfRange`].
///
/// ```
/// use induce_explain::{Edit, Explanation, metrics::accuracy};
/// let e = Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 0, found: true, original_label: 1, new_label: 0,
///     edits: vec![Edit::delete(0, 1), Edit::delete(0, 2), Edit::add(0, 2)] };
/// // node 2 is predicted class 0: the deletion (0, 2) is wrong, the addition is right
/// assert_eq!(accuracy(&[e], &[1, 3, 0]).unwrap(), Some(2.0 / 3.0));
/// ```
pub fn accuracy(explanations: &[Explanation], full_graph_pred: &[usize]) -> Result<Option<f64>> {
    let n = full_graph_pred.len();
    let pred = |u: u32| {
        full_graph_pred
            .get(u as usize)
            .copied()
            .ok_or(ExplainError::NodeOutOfRange {
                node: u,
                num_nodes: n,
                what: "the full-graph predictions",
            })
    };
    let mut shares = Vec::new();
    for e in found(explanations).filter(|e| !e.edits.is_empty()) {
        let mut correct = 0usize;
        for edit in &e.edits {
            let ok = match edit.kind {
                EditKind::Add => true,
                EditKind::Delete => {
                    let (a, b) = (pred(edit.u)?, pred(edit.w)?);
                    a != 0 && b != 0
                }
            };
            correct += usize::from(ok);
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

    #[test]
    fn fixture_accuracy() {
        // 10: del(10, 11) ✓, add ✓ → 1; 20: del(20, 21) ✗ (21 is class 0) → 0;
        // 40: del(5, 6) ✗, del(40, 41) ✓, del(41, 42) ✗ → 1/3; mean 4/9
        let a = accuracy(&fixture::explanations(), &fixture::predictions())
            .unwrap()
            .unwrap();
        assert!((a - 4.0 / 9.0).abs() < 1e-12, "{a}");
    }

    #[test]
    fn skips_and_errors() {
        let mut e = fixture::explanations();
        for x in &mut e {
            x.edits.clear();
        }
        assert_eq!(accuracy(&e, &fixture::predictions()).unwrap(), None);
        let bad = Explanation::counterfactual(0, 1, 0, vec![Edit::delete(0, 50)]);
        assert!(matches!(
            accuracy(std::slice::from_ref(&bad), &fixture::predictions()),
            Err(ExplainError::NodeOutOfRange {
                node: 50,
                num_nodes: 43,
                ..
            })
        ));
        // additions never look at predictions
        let add = Explanation {
            evaluations: None,
            certified: None,
            edits: vec![Edit::add(0, 50)],
            ..bad
        };
        assert_eq!(accuracy(&[add], &[]).unwrap(), Some(1.0));
    }
}
