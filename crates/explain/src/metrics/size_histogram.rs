//! The distribution of counterfactual sizes.

use std::collections::BTreeMap;

use crate::explanation::Explanation;
use crate::metrics::found;

/// Number of found explanations of each size (`size → count`, ascending sizes).
///
/// ```
/// use induce_explain::{Edit, Explanation, metrics::size_histogram};
/// let e = |k: u32| Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 0, found: true, original_label: 1, new_label: 0,
///     edits: (0..k).map(|i| Edit::add(0, i + 1)).collect() };
/// let h = size_histogram(&[e(1), e(2), e(1)]);
/// assert_eq!(h.into_iter().collect::<Vec<_>>(), vec![(1, 2), (2, 1)]);
/// ```
pub fn size_histogram(explanations: &[Explanation]) -> BTreeMap<usize, usize> {
    let mut h = BTreeMap::new();
    for e in found(explanations) {
        *h.entry(e.size()).or_insert(0) += 1;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::fixture;

    #[test]
    fn fixture_histogram() {
        let mut e = fixture::explanations();
        assert_eq!(size_histogram(&e), BTreeMap::from([(1, 1), (2, 1), (3, 1)]));
        e.push(e[1].clone());
        assert_eq!(size_histogram(&e), BTreeMap::from([(1, 2), (2, 1), (3, 1)]));
    }
}
