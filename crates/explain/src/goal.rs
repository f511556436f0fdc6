//! What counts as a counterfactual: the target's prediction leaves its original class (the
//! paper's), or reaches one desired class (`--to-class C`).

use serde::{Deserialize, Serialize};

/// The class a counterfactual must move the target's prediction to.
///
/// Serialised as `"any_other"` or `{"class": C}`.
///
/// ```
/// use induce_explain::Goal;
/// let row = [-0.2f32, -2.0, -3.0]; // log-probabilities: class 0 predicted
/// assert!(!Goal::AnyOther.reached(0, 0) && Goal::AnyOther.reached(0, 2));
/// assert!(!Goal::Class(1).reached(0, 2) && Goal::Class(1).reached(0, 1));
/// // How far the target is from the goal (positive: not there yet).
/// assert!((Goal::AnyOther.margin(&row, 0) - 1.8).abs() < 1e-6);
/// assert!((Goal::Class(2).margin(&row, 0) - 2.8).abs() < 1e-6);
/// assert_eq!(serde_json::to_string(&Goal::Class(2)).unwrap(), r#"{"class":2}"#);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Goal {
    /// Any class but the original one (the paper's counterfactual).
    #[default]
    AnyOther,
    /// This class (`--to-class C`). A target already predicted as `C` has no counterfactual.
    Class(usize),
}

impl Goal {
    /// The goal of `--to-class`: `None` is [`Goal::AnyOther`].
    pub fn to_class(class: Option<usize>) -> Self {
        class.map_or(Goal::AnyOther, Goal::Class)
    }

    /// True for the paper's goal ([`Goal::AnyOther`]).
    pub fn is_any_other(&self) -> bool {
        *self == Goal::AnyOther
    }

    /// Whether a prediction `label` of a target originally predicted `original` reaches the
    /// goal.
    pub fn reached(self, original: usize, label: usize) -> bool {
        match self {
            Goal::AnyOther => label != original,
            Goal::Class(c) => label == c && c != original,
        }
    }

    /// How far the log-probability row `row` is from the goal: the original class's lead over
    /// the best other class ([`Goal::AnyOther`]), or the best other class's lead over `C`
    /// ([`Goal::Class`]). Positive while the goal is not reached; the searches lower it.
    ///
    /// # Shapes
    /// - row: `[num_classes]`
    pub fn margin(self, row: &[f32], original: usize) -> f32 {
        let (mine, skip) = match self {
            Goal::AnyOther => (row[original], original),
            Goal::Class(c) => (-row[c], c),
        };
        let other = (row.iter().enumerate())
            .filter(|&(k, _)| k != skip)
            .map(|(_, &v)| v)
            .fold(f32::NEG_INFINITY, f32::max);
        match self {
            Goal::AnyOther => mine - other,
            Goal::Class(_) => other + mine,
        }
    }

    /// `∂ margin / ∂ row` of [`Goal::margin`] (a subgradient: the strongest rival class takes
    /// the `∓1`, the first on ties): what a first-order estimate of an edit's effect on the
    /// margin multiplies with the gradient of the log-probabilities.
    ///
    /// # Shapes
    /// - row: `[num_classes]` (log-probabilities); output: `[num_classes]`
    ///
    /// ```
    /// use induce_explain::Goal;
    /// let row = [-0.2f32, -2.0, -1.0];
    /// assert_eq!(Goal::AnyOther.margin_gradient(&row, 0), vec![1.0, 0.0, -1.0]);
    /// assert_eq!(Goal::Class(1).margin_gradient(&row, 0), vec![1.0, -1.0, 0.0]);
    /// ```
    pub fn margin_gradient(self, row: &[f32], original: usize) -> Vec<f32> {
        let (mine, skip, sign) = match self {
            Goal::AnyOther => (original, original, 1.0),
            Goal::Class(c) => (c, c, -1.0),
        };
        let mut g = vec![0.0; row.len()];
        let rival = (row.iter().enumerate()).filter(|&(k, _)| k != skip).fold(
            None,
            |b: Option<(usize, f32)>, (k, &v)| match b {
                Some((_, bv)) if bv >= v => b,
                _ => Some((k, v)),
            },
        );
        g[mine] = sign;
        if let Some((k, _)) = rival {
            g[k] = -sign;
        }
        g
    }

    /// The log-probability mass still away from the goal, which InduCE's reward drives down:
    /// `log p(original)` ([`Goal::AnyOther`], the paper's), or `log (1 − p(C))`
    /// ([`Goal::Class`]).
    ///
    /// # Shapes
    /// - row: `[num_classes]` (log-probabilities)
    pub fn log_p_away(self, row: &[f32], original: usize) -> f32 {
        match self {
            Goal::AnyOther => row[original],
            Goal::Class(c) => {
                let m = (row.iter().enumerate())
                    .filter(|&(k, _)| k != c)
                    .map(|(_, &v)| v)
                    .fold(f32::NEG_INFINITY, f32::max);
                if m == f32::NEG_INFINITY {
                    return m;
                }
                let s: f32 = (row.iter().enumerate())
                    .filter(|&(k, _)| k != c)
                    .map(|(_, &v)| (v - m).exp())
                    .sum();
                m + s.ln()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_p_away_is_the_mass_off_the_goal() {
        let row: Vec<f32> = [0.5f32, 0.3, 0.2].iter().map(|p| p.ln()).collect();
        assert!((Goal::AnyOther.log_p_away(&row, 0) - 0.5f32.ln()).abs() < 1e-6);
        assert!((Goal::Class(2).log_p_away(&row, 0) - 0.8f32.ln()).abs() < 1e-6);
        assert!((Goal::Class(1).log_p_away(&row, 0) - 0.7f32.ln()).abs() < 1e-6);
        // Reaching the original class is no counterfactual.
        assert!(!Goal::Class(0).reached(0, 0));
        assert_eq!(Goal::to_class(None), Goal::AnyOther);
        let back: Goal = serde_json::from_str(r#""any_other""#).unwrap();
        assert!(back.is_any_other());
    }
}
