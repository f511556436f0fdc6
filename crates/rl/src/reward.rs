//! Rewards of the edit MDP.

use serde::{Deserialize, Serialize};

/// Smallest denominator magnitude the [`Reward::Paper`] reward divides by.
pub const PAPER_GUARD_EPS: f32 = 1e-6;

/// Reward returned instead of `±∞` when the [`Reward::Paper`] denominator is below
/// [`PAPER_GUARD_EPS`] in magnitude (with the denominator's sign).
pub const PAPER_GUARD_VALUE: f32 = 1e6;

fn paper_beta() -> f32 {
    0.5
}

fn shaped_beta() -> f32 {
    0.1
}

fn shaped_bonus() -> f32 {
    1.0
}

/// The reward of one edit, computed from the black box's log-probability of the original label
/// `y` of the target before (`log p_t(y)`) and after (`log p_{t+1}(y)`) the edit, whether the
/// label flipped, and the number of edits made so far (including this one).
///
/// Serialised with a `kind` tag: `{"kind": "paper", "beta": 0.5}`,
/// `{"kind": "shaped", "beta": 0.1, "bonus": 1.0}`; omitted fields take their defaults.
///
/// The default is [`Reward::shaped`] (β = 0.1, B = 1.0), chosen by measurement (fidelity first,
/// then size; `docs/RESULTS.md`, "Choice of the default reward", Tree-Cycles only): with the
/// paper's reward the inductive policy misses 1 of 70 targets and the deletion-only one 12,
/// against none with the shaped reward, and it learns to make more edits.
///
/// ```
/// use induce_rl::Reward;
/// let r = Reward::Shaped { beta: 0.1, bonus: 1.0 };
/// // confidence in y dropped from log 0.5 to log 0.25, no flip yet, 1 edit
/// let v = r.compute(0.5f32.ln(), 0.25f32.ln(), false, 1);
/// assert!((v - (2f32.ln() - 0.1)).abs() < 1e-6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reward {
    /// The paper's reward `R = 1 / (L + β·d)`, with `L = log p_{t+1}(y)` masked to 0 once the
    /// label has flipped and `d` the number of edits so far.
    ///
    /// The denominator crosses 0 when `log p(y) ≈ −β·d`; to keep the reward finite, a
    /// denominator with `|L + β·d| < 1e-6` ([`PAPER_GUARD_EPS`]) is replaced and the reward is
    /// `sign · 1e6` ([`PAPER_GUARD_VALUE`]), the sign of the denominator (`+` for an exact zero,
    /// either zero).
    Paper {
        /// Weight of the edit count, default 0.5.
        #[serde(default = "paper_beta")]
        beta: f32,
    },
    /// A potential-based shaping of the same intent:
    /// `r = [log p_t(y) − log p_{t+1}(y)] − β + B·1[flipped]`: reward the drop in the black
    /// box's confidence in the original label, charge `β` per edit, pay `B` on the flip.
    Shaped {
        /// Cost per edit, default 0.1.
        #[serde(default = "shaped_beta")]
        beta: f32,
        /// Terminal bonus on the flip, default 1.0.
        #[serde(default = "shaped_bonus")]
        bonus: f32,
    },
}

/// A reward name that is neither `shaped` nor `paper`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown reward {0:?}: expected shaped or paper")]
pub struct UnknownReward(pub String);

/// `shaped` ([`Reward::shaped`]) or `paper` ([`Reward::paper`]), each with its default β (and
/// bonus): the command line's `--reward`.
///
/// ```
/// use induce_rl::Reward;
/// assert_eq!("paper".parse::<Reward>().unwrap(), Reward::paper());
/// assert!("fast".parse::<Reward>().unwrap_err().to_string().contains("shaped or paper"));
/// ```
impl std::str::FromStr for Reward {
    type Err = UnknownReward;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "shaped" => Ok(Self::shaped()),
            "paper" => Ok(Self::paper()),
            other => Err(UnknownReward(other.to_string())),
        }
    }
}

impl Default for Reward {
    fn default() -> Self {
        Self::shaped()
    }
}

impl Reward {
    /// The paper's reward with its β = 0.5.
    pub fn paper() -> Self {
        Self::Paper { beta: paper_beta() }
    }

    /// The shaped reward with β = 0.1 and bonus 1.0.
    pub fn shaped() -> Self {
        Self::Shaped {
            beta: shaped_beta(),
            bonus: shaped_bonus(),
        }
    }

    /// The reward of an edit.
    ///
    /// * `log_p_before`: `log p_t(y)`, the target's log-probability of its original label before
    ///   the edit;
    /// * `log_p_after`: `log p_{t+1}(y)`, the same after the edit;
    /// * `flipped`: whether the prediction differs from `y` after the edit;
    /// * `edits`: number of edits made so far, this one included (`d(G, G^{t+1})`).
    ///
    /// ```
    /// use induce_rl::Reward;
    /// let r = Reward::paper();
    /// // L = log 0.25, d = 1: 1 / (log 0.25 + 0.5)
    /// let v = r.compute(0.0, 0.25f32.ln(), false, 1);
    /// assert!((v - 1.0 / (0.25f32.ln() + 0.5)).abs() < 1e-6);
    /// // flipped: L masked to 0, d = 2: 1 / (0 + 1)
    /// assert_eq!(r.compute(0.0, -3.0, true, 2), 1.0);
    /// ```
    ///
    /// Log-probabilities are clamped to at least [`MIN_LOG_PROB`] first, so a black box that
    /// returns `−∞` (probability exactly 0) yields a finite reward.
    pub fn compute(&self, log_p_before: f32, log_p_after: f32, flipped: bool, edits: usize) -> f32 {
        let log_p_before = log_p_before.max(MIN_LOG_PROB);
        let log_p_after = log_p_after.max(MIN_LOG_PROB);
        match *self {
            Reward::Paper { beta } => {
                let l = if flipped { 0.0 } else { log_p_after };
                let den = l + beta * edits as f32;
                if den.abs() < PAPER_GUARD_EPS {
                    if den >= 0.0 {
                        PAPER_GUARD_VALUE
                    } else {
                        -PAPER_GUARD_VALUE
                    }
                } else {
                    1.0 / den
                }
            }
            Reward::Shaped { beta, bonus } => {
                let b = if flipped { bonus } else { 0.0 };
                (log_p_before - log_p_after) - beta + b
            }
        }
    }
}

/// Floor applied to log-probabilities before computing a reward (`exp(−1e4)` is 0 in f32).
pub const MIN_LOG_PROB: f32 = -1e4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infinite_log_probabilities_give_finite_rewards() {
        let r = Reward::shaped().compute(-0.1, f32::NEG_INFINITY, true, 1);
        assert!(r.is_finite());
        assert!((r - (-0.1 + 1e4 - 0.1 + 1.0)).abs() < 1e-2);
        assert!(
            Reward::paper()
                .compute(-0.1, f32::NEG_INFINITY, false, 1)
                .is_finite()
        );
    }

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn paper_values() {
        let r = Reward::Paper { beta: 0.5 };
        // L = -2, d = 1: 1 / (-2 + 0.5) = -2/3
        assert!(close(r.compute(-1.0, -2.0, false, 1), -2.0 / 3.0));
        // L = -0.25, d = 3: 1 / (-0.25 + 1.5) = 0.8
        assert!(close(r.compute(-0.1, -0.25, false, 3), 0.8));
        // flipped: L masked to 0, d = 4: 1 / 2
        assert!(close(r.compute(-1.0, -5.0, true, 4), 0.5));
        // log_p_before is not used by the paper's reward
        assert_eq!(
            r.compute(-7.0, -2.0, false, 1),
            r.compute(0.0, -2.0, false, 1)
        );
    }

    #[test]
    fn paper_guard() {
        let r = Reward::Paper { beta: 0.5 };
        // exact zero: log p = -0.5, d = 1
        assert_eq!(r.compute(0.0, -0.5, false, 1), 1e6);
        // tiny positive and negative denominators
        assert_eq!(r.compute(0.0, -0.5 + 5e-7, false, 1), 1e6);
        assert_eq!(r.compute(0.0, -0.5 - 5e-7, false, 1), -1e6);
        // flipped with no edit (degenerate): 0 + 0 → +1e6
        assert_eq!(r.compute(0.0, -1.0, true, 0), 1e6);
        // just outside the guard: finite 1 / den
        let v = r.compute(0.0, -0.5 - 1e-3, false, 1);
        assert!(close(v, 1.0 / -1e-3) || (v - -1000.0).abs() < 0.1, "{v}");
        assert!(v.is_finite());
    }

    #[test]
    fn shaped_values() {
        let r = Reward::Shaped {
            beta: 0.1,
            bonus: 1.0,
        };
        // drop from log 0.5 to log 0.25 = log 2; no flip
        assert!(close(
            r.compute(0.5f32.ln(), 0.25f32.ln(), false, 1),
            2f32.ln() - 0.1
        ));
        // confidence rises: negative shaping term
        assert!(close(r.compute(-2.0, -1.0, false, 5), -1.1));
        // flip pays the bonus
        assert!(close(r.compute(-1.0, -3.0, true, 2), 2.0 - 0.1 + 1.0));
        // edits count does not enter the shaped reward
        assert_eq!(
            r.compute(-1.0, -1.5, false, 1),
            r.compute(-1.0, -1.5, false, 9)
        );
        assert!(close(
            Reward::Shaped {
                beta: 0.5,
                bonus: 2.0
            }
            .compute(0.0, 0.0, true, 1),
            1.5
        ));
    }

    #[test]
    fn defaults_and_serde() {
        assert_eq!(
            Reward::default(),
            Reward::Shaped {
                beta: 0.1,
                bonus: 1.0
            }
        );
        assert_eq!(Reward::paper(), Reward::Paper { beta: 0.5 });
        let j = serde_json::to_string(&Reward::paper()).unwrap();
        assert_eq!(j, r#"{"kind":"paper","beta":0.5}"#);
        let r: Reward = serde_json::from_str(r#"{"kind":"shaped","bonus":3.0}"#).unwrap();
        assert_eq!(
            r,
            Reward::Shaped {
                beta: 0.1,
                bonus: 3.0
            }
        );
        let r: Reward = serde_json::from_str(r#"{"kind":"paper"}"#).unwrap();
        assert_eq!(r, Reward::paper());
    }
}
