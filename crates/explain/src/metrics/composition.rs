//! Composition: additions versus deletions.

use serde::{Deserialize, Serialize};

use crate::explanation::{EditKind, Explanation};
use crate::metrics::found;

/// Total numbers of additions and deletions over the found explanations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Composition {
    /// Edges added.
    pub additions: usize,
    /// Edges deleted.
    pub deletions: usize,
}

/// Counts the additions and deletions of the explanations with a counterfactual.
///
/// ```
/// use induce_explain::{Edit, Explanation, metrics::composition};
/// let e = Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 0, found: true, original_label: 1, new_label: 0,
///     edits: vec![Edit::add(0, 4), Edit::delete(1, 2), Edit::delete(0, 1)] };
/// let c = composition(&[e]);
/// assert_eq!((c.additions, c.deletions), (1, 2));
/// ```
pub fn composition(explanations: &[Explanation]) -> Composition {
    let mut c = Composition::default();
    for edit in found(explanations).flat_map(|e| &e.edits) {
        match edit.kind {
            EditKind::Add => c.additions += 1,
            EditKind::Delete => c.deletions += 1,
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::fixture;

    #[test]
    fn fixture_composition() {
        // found: {del, add}, {del}, {del, del, del}; the unfound three additions are ignored
        assert_eq!(
            composition(&fixture::explanations()),
            Composition {
                additions: 1,
                deletions: 5
            }
        );
        assert_eq!(composition(&[]), Composition::default());
    }
}
