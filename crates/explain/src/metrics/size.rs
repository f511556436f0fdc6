//! Size: the number of edits of a counterfactual.

use serde::{Deserialize, Serialize};

use crate::explanation::Explanation;
use crate::metrics::{found, mean};

/// Mean and population standard deviation of a size distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SizeStats {
    /// Mean number of edits.
    pub mean: f64,
    /// Population standard deviation (divide by the count, not count − 1).
    pub std: f64,
}

/// Mean ± population std of the number of edits over the targets with a counterfactual;
/// `None` when there is none.
///
/// ```
/// use induce_explain::{Edit, Explanation, metrics::size};
/// let e = |k: u32| Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 0, found: true, original_label: 1, new_label: 0,
///     edits: (0..k).map(|i| Edit::delete(0, i + 1)).collect() };
/// let s = size(&[e(1), e(3)]).unwrap();
/// assert_eq!((s.mean, s.std), (2.0, 1.0));
/// ```
pub fn size(explanations: &[Explanation]) -> Option<SizeStats> {
    let m = mean(found(explanations).map(|e| e.size() as f64))?;
    let var = mean(found(explanations).map(|e| (e.size() as f64 - m).powi(2)))?;
    Some(SizeStats {
        mean: m,
        std: var.sqrt(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::fixture;

    #[test]
    fn fixture_sizes() {
        // found sizes 2, 1, 3 (the unfound one with 3 edits is ignored)
        let s = size(&fixture::explanations()).unwrap();
        assert_eq!(s.mean, 2.0);
        assert!((s.std - (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        let mut one = fixture::explanations();
        one.truncate(1);
        assert_eq!(
            size(&one),
            Some(SizeStats {
                mean: 2.0,
                std: 0.0
            })
        );
        one[0].found = false;
        assert_eq!(size(&one), None);
    }
}
