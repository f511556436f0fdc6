//! Imitation of the exact greedy search (not in the paper): how the policy learns to rank the
//! edits the black box's verdicts rank ([`Training::Imitation`], [`ImitationConfig`]).
//!
//! At every state a training episode visits, the teacher judges the candidate actions exactly
//! (the target's verdict with the edit made, as `greedy` does) and turns their margins into a
//! distribution over the candidates ([`teacher_weights`]); the policy is trained on the
//! cross-entropy against it ([`Learner::update_listwise`](crate::kernel::Learner)), a listwise
//! loss that uses the teacher's whole ranking, not only its choice. The states come from
//! DAgger: each step of a training episode takes the teacher's choice with probability
//! [`ImitationConfig::teacher_share`] (decaying to 0 over the passes), else the policy's own
//! argmax, so the policy learns on the states its own inference reaches.
//!
//! ```text
//!   state S_t ── policy ──▶ log Π(· | S_t)          argmax ─┐
//!      │                                                    ├─▶ action (DAgger mix)
//!      └── teacher: margin after each candidate edit ─▶ q ──┤
//!                                                           └─▶ loss −Σ_a q_a log Π(a | S_t)
//! ```

use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::index::sample as sample_indices;
use serde::{Deserialize, Serialize};

use crate::error::{Result, RlError};

/// How an inductive policy is trained ([`TrainConfig::method`](crate::TrainConfig::method)).
///
/// ```
/// use induce_rl::imitation::Training;
/// assert_eq!("imitation".parse::<Training>().unwrap(), Training::Imitation);
/// assert_eq!(Training::Reinforce.to_string(), "reinforce");
/// assert!("dagger".parse::<Training>().is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Training {
    /// The paper's REINFORCE with its reward and normalised returns.
    #[default]
    Reinforce,
    /// Imitation of the exact greedy search on the states the policy reaches (DAgger), with a
    /// listwise loss over the teacher's ranking, then [`ImitationConfig::finetune`] passes of
    /// REINFORCE. Not in the paper.
    Imitation,
}

impl std::str::FromStr for Training {
    type Err = RlError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "reinforce" => Ok(Training::Reinforce),
            "imitation" => Ok(Training::Imitation),
            other => Err(RlError::InvalidValue {
                what: "training",
                value: other.into(),
                reason: "expected reinforce or imitation".into(),
            }),
        }
    }
}

impl std::fmt::Display for Training {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Training::Reinforce => "reinforce",
            Training::Imitation => "imitation",
        })
    }
}

/// Settings of [`Training::Imitation`]. The passes over the training targets are
/// [`TrainConfig::episodes`](crate::TrainConfig::episodes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ImitationConfig {
    /// Temperature τ of the teacher's distribution ([`teacher_weights`]), in units of the
    /// state's margin spread: 0 puts all the weight on the teacher's choice (plain behaviour
    /// cloning of the greedy search).
    pub temperature: f32,
    /// DAgger: the probability that a step of a training episode takes the teacher's choice
    /// rather than the policy's argmax, in the first pass; it decays linearly to 0 in the last.
    /// 1 in every pass would be behaviour cloning on the teacher's own trajectories only.
    pub teacher_share: f32,
    /// Candidates judged at a state: all of them up to this many; on a larger neighbourhood
    /// the policy's most probable half of this and as many drawn uniformly from the rest.
    /// 128 by default: fewer verdicts per state train faster, and the time saved buys more
    /// training targets, which the policy gains more from (docs/RESULTS.md).
    pub max_judged: usize,
    /// Adam's learning rate for the imitation passes.
    pub lr: f64,
    /// Passes of the paper's REINFORCE after imitation (at
    /// [`TrainConfig::lr`](crate::TrainConfig::lr)); 0: none.
    pub finetune: usize,
    /// A curriculum over the first `curriculum` passes: pass `e < curriculum` trains on the
    /// easiest `(e + 1) / (curriculum + 1)` of the targets only, easiest meaning the smallest
    /// margin of the black box's prediction on the unedited graph (the targets a short
    /// counterfactual is likeliest to flip; [`curriculum_share`]); later passes on all. 0, the
    /// default: every pass on all of them.
    pub curriculum: usize,
}

impl Default for ImitationConfig {
    fn default() -> Self {
        Self {
            temperature: 0.1,
            teacher_share: 0.5,
            max_judged: 128,
            lr: 1e-3,
            finetune: 0,
            curriculum: 0,
        }
    }
}

impl ImitationConfig {
    /// Checks each setting, naming the field at fault.
    ///
    /// ```
    /// use induce_rl::imitation::ImitationConfig;
    /// assert!(ImitationConfig::default().validate().is_ok());
    /// let bad = ImitationConfig { teacher_share: 1.5, ..ImitationConfig::default() };
    /// assert!(bad.validate().unwrap_err().to_string().contains("imitation.teacher_share"));
    /// ```
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, rule: &str, value: String| {
            Err(RlError::InvalidConfig(format!(
                "InduceConfig.imitation.{field} must be {rule}, got {value}"
            )))
        };
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return bad(
                "temperature",
                "finite and ≥ 0",
                self.temperature.to_string(),
            );
        }
        if !(0.0..=1.0).contains(&self.teacher_share) {
            return bad("teacher_share", "in [0, 1]", self.teacher_share.to_string());
        }
        if self.max_judged < 2 {
            return bad("max_judged", "at least 2", self.max_judged.to_string());
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return bad("lr", "a positive finite number", self.lr.to_string());
        }
        Ok(())
    }

    /// The teacher's share of the actions in pass `epoch` of `epochs` (linear decay to 0).
    pub fn share_at(&self, epoch: usize, epochs: usize) -> f32 {
        if epochs <= 1 {
            return self.teacher_share;
        }
        self.teacher_share * (1.0 - epoch as f32 / (epochs - 1) as f32)
    }
}

/// How many of `n` targets, ordered easiest first, imitation pass `epoch` trains on under a
/// curriculum of `curriculum` passes ([`ImitationConfig::curriculum`]): `⌈n (e + 1) / (c + 1)⌉`
/// while `e < c`, then all `n`.
///
/// ```
/// use induce_rl::imitation::curriculum_share;
/// assert_eq!((0..4).map(|e| curriculum_share(10, e, 3)).collect::<Vec<_>>(), [3, 5, 8, 10]);
/// assert_eq!(curriculum_share(10, 0, 0), 10);
/// ```
pub fn curriculum_share(n: usize, epoch: usize, curriculum: usize) -> usize {
    if epoch >= curriculum {
        return n;
    }
    (n * (epoch + 1)).div_ceil(curriculum + 1)
}

/// The teacher's verdict on one candidate: whether taking it reaches the goal, and the margin
/// it leaves ([`Goal::margin`](induce_explain::Goal::margin)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    /// The candidate's index in the episode's candidates.
    pub index: usize,
    /// Taking it reaches the goal.
    pub flipped: bool,
    /// The margin the target is left with.
    pub margin: f32,
}

/// The teacher's choice among `judged` (a flip first, then the smallest margin, the first on
/// ties: the exact greedy search's rule) and its distribution over them: `q_a ∝ exp(−z_a / τ)`
/// with `z_a = (m_a − m_min) / (m_med − m_min)`, the margin above the best in units of the
/// spread between the best and the median judged candidate (so `τ` does not depend on the
/// black box's scale), every flip ranked as `z = 0`. Weights below `10⁻⁴` of the largest are
/// dropped. At `τ = 0` all the weight is on the choice.
///
/// ```
/// use induce_rl::imitation::{Judged, teacher_weights};
/// let j = |index, flipped, margin| Judged { index, flipped, margin };
/// // Margins 1.0 (no effect), 0.5 and 0.9; the median is 0.9, the spread 0.4.
/// let (best, q) = teacher_weights(&[j(4, false, 1.0), j(7, false, 0.5), j(9, false, 0.9)], 0.5);
/// assert_eq!(best, 7);
/// assert_eq!(q[0].0, 7);
/// assert!((q.iter().map(|w| w.1).sum::<f32>() - 1.0).abs() < 1e-6);
/// assert!(q[0].1 > 0.8);
/// // τ = 0: behaviour cloning.
/// assert_eq!(teacher_weights(&[j(4, false, 1.0), j(7, true, -0.2)], 0.0).1, vec![(7, 1.0)]);
/// ```
///
/// # Shapes
/// - judged: `[J]` (at least one); output weights: `[≤ J]`, best first
pub fn teacher_weights(judged: &[Judged], temperature: f32) -> (usize, Vec<(usize, f32)>) {
    let better = |a: &Judged, b: &Judged| {
        (a.flipped && !b.flipped) || (a.flipped == b.flipped && a.margin < b.margin)
    };
    let mut best = judged[0];
    for j in &judged[1..] {
        if better(j, &best) {
            best = *j;
        }
    }
    if temperature <= 0.0 || judged.len() == 1 {
        return (best.index, vec![(best.index, 1.0)]);
    }
    let floor = judged
        .iter()
        .map(|j| j.margin)
        .fold(f32::INFINITY, f32::min);
    let rank = |j: &Judged| if j.flipped { floor } else { j.margin };
    let mut margins: Vec<f32> = judged.iter().map(rank).collect();
    let m_min = floor;
    let mid = margins.len() / 2;
    margins.select_nth_unstable_by(mid, f32::total_cmp);
    let spread = (margins[mid] - m_min).max(1e-6);
    let mut w: Vec<(usize, f32)> = judged
        .iter()
        .map(|j| (j.index, (-(rank(j) - m_min) / spread / temperature).exp()))
        .filter(|&(_, v)| v >= 1e-4)
        .collect();
    let total: f32 = w.iter().map(|&(_, v)| v).sum();
    for e in &mut w {
        e.1 /= total;
    }
    // The choice first, then by weight (a stable order: the lists are reproducible).
    w.sort_by(|a, b| {
        (b.0 == best.index)
            .cmp(&(a.0 == best.index))
            .then(b.1.total_cmp(&a.1))
            .then(a.0.cmp(&b.0))
    });
    (best.index, w)
}

/// The candidates the teacher judges at a state with the policy's `log_probs`: all of them up
/// to `max_judged`; else the policy's `max_judged / 2` most probable (the first on ties) and as
/// many more drawn uniformly from the rest with `rng`. Sorted by index.
///
/// # Shapes
/// - log_probs: `[C]`; output: `[min(C, max_judged)]`
pub fn judged_set(log_probs: &[f32], max_judged: usize, rng: &mut StdRng) -> Vec<usize> {
    let c = log_probs.len();
    if c <= max_judged {
        return (0..c).collect();
    }
    let top = max_judged / 2;
    let mut order: Vec<usize> = (0..c).collect();
    order.sort_by(|&a, &b| log_probs[b].total_cmp(&log_probs[a]).then(a.cmp(&b)));
    let (head, rest) = order.split_at(top);
    let mut out: Vec<usize> = head.to_vec();
    let draw = (max_judged - top).min(rest.len());
    out.extend(
        sample_indices(rng, rest.len(), draw)
            .into_iter()
            .map(|i| rest[i]),
    );
    out.sort_unstable();
    out
}

/// Whether a step of a DAgger rollout takes the teacher's choice (probability `share`).
pub(crate) fn teacher_turn(share: f32, rng: &mut StdRng) -> bool {
    share > 0.0 && rng.random::<f32>() < share
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn j(index: usize, flipped: bool, margin: f32) -> Judged {
        Judged {
            index,
            flipped,
            margin,
        }
    }

    #[test]
    fn teacher_weights_follow_the_margins_exactly() {
        // Margins 2, 1, 2, 2: min 1, median (index 2 of the sorted [1, 2, 2, 2]) 2, spread 1.
        // z = 1, 0, 1, 1; at τ = 1: weights e^-1, 1, e^-1, e^-1 over 1 + 3/e.
        let (best, q) = teacher_weights(
            &[
                j(0, false, 2.0),
                j(1, false, 1.0),
                j(2, false, 2.0),
                j(3, false, 2.0),
            ],
            1.0,
        );
        assert_eq!(best, 1);
        let total = 1.0 + 3.0 * (-1.0f32).exp();
        assert_eq!(q[0].0, 1);
        assert!((q[0].1 - 1.0 / total).abs() < 1e-6, "{q:?}");
        let others: Vec<usize> = q[1..].iter().map(|w| w.0).collect();
        assert_eq!(others, [0, 2, 3]);
        assert!(
            q[1..]
                .iter()
                .all(|w| (w.1 - (-1.0f32).exp() / total).abs() < 1e-6)
        );
        // A flip is the choice even when another candidate's margin is lower, and every flip
        // ranks as the choice.
        let (best, q) =
            teacher_weights(&[j(0, false, 0.5), j(1, true, -0.1), j(2, true, -0.3)], 0.1);
        assert_eq!(best, 2);
        assert_eq!(q[0].0, 2);
        assert!((q[0].1 - q[1].1).abs() < 1e-6 && q[1].0 == 1, "{q:?}");
        // A cold teacher drops the far candidates.
        let (_, q) = teacher_weights(
            &[j(0, false, 1.0), j(1, false, 0.0), j(2, false, 1.0)],
            0.05,
        );
        assert_eq!(q, vec![(1, 1.0)]);
    }

    #[test]
    fn judged_set_keeps_the_policys_top_and_samples_the_rest() {
        let logp: Vec<f32> = (0..10).map(|i| -(i as f32)).collect();
        let mut rng = StdRng::seed_from_u64(3);
        assert_eq!(judged_set(&logp, 16, &mut rng), (0..10).collect::<Vec<_>>());
        let s = judged_set(&logp, 4, &mut rng);
        assert_eq!(s.len(), 4);
        assert!(s.contains(&0) && s.contains(&1), "{s:?}");
        let again = judged_set(&logp, 4, &mut StdRng::seed_from_u64(3));
        let first = judged_set(&logp, 4, &mut StdRng::seed_from_u64(3));
        assert_eq!(again, first);
    }

    #[test]
    fn the_teachers_share_decays_to_zero() {
        let c = ImitationConfig {
            teacher_share: 0.6,
            ..ImitationConfig::default()
        };
        assert_eq!(c.share_at(0, 4), 0.6);
        assert!((c.share_at(2, 4) - 0.2).abs() < 1e-6);
        assert_eq!(c.share_at(3, 4), 0.0);
        assert_eq!(c.share_at(0, 1), 0.6);
        for bad in [
            ImitationConfig {
                temperature: -1.0,
                ..ImitationConfig::default()
            },
            ImitationConfig {
                max_judged: 1,
                ..ImitationConfig::default()
            },
            ImitationConfig {
                lr: 0.0,
                ..ImitationConfig::default()
            },
        ] {
            assert!(bad.validate().is_err());
        }
    }
}
