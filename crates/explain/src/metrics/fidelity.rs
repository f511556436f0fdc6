//! Fidelity: how often no counterfactual was found.

use crate::explanation::Explanation;

/// Share of targets with no counterfactual (`found == false`), in `[0, 1]`; lower is better.
/// `None` for an empty input.
///
/// ```
/// use induce_explain::{Explanation, metrics::fidelity};
/// let e = |found| Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 0, found, original_label: 1, new_label: 0,
///     edits: vec![] };
/// assert_eq!(fidelity(&[e(true), e(false), e(true), e(true)]), Some(0.25));
/// assert_eq!(fidelity(&[]), None);
/// ```
pub fn fidelity(explanations: &[Explanation]) -> Option<f64> {
    let missed = explanations.iter().filter(|e| !e.found).count();
    (!explanations.is_empty()).then(|| missed as f64 / explanations.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::fixture;

    #[test]
    fn fixture_and_extremes() {
        let mut e = fixture::explanations();
        assert_eq!(fidelity(&e), Some(0.25));
        e.retain(|x| x.found);
        assert_eq!(fidelity(&e), Some(0.0));
        for x in &mut e {
            x.found = false;
        }
        assert_eq!(fidelity(&e), Some(1.0));
    }
}
