//! REINFORCE's returns: discounted per episode, normalised over a batch (the paper's
//! [`Baseline::Batch`]), or each episode's return against the policy's own greedy episode on
//! the same target ([`Baseline::Greedy`], Kool et al., ICLR 2019).

use serde::{Deserialize, Serialize};

use crate::config::InduceConfig;
use crate::error::{Result, RlError};

/// What REINFORCE's updates subtract from a sampled episode's return
/// ([`TrainConfig::baseline`](crate::TrainConfig::baseline)).
///
/// ```
/// use induce_rl::returns::Baseline;
/// assert_eq!("greedy".parse::<Baseline>().unwrap(), Baseline::Greedy);
/// assert_eq!(Baseline::Batch.to_string(), "batch");
/// assert!("critic".parse::<Baseline>().is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Baseline {
    /// The paper's: each step's discounted return `G_t` ([`discounted_returns`]), normalised
    /// over the batch's steps ([`normalise`]).
    #[default]
    Batch,
    /// A greedy-rollout baseline (Kool, van Hoof, Welling, ICLR 2019): the policy also plays
    /// its argmax episode on each target of the batch (with the parameters before the update),
    /// and every step of a sampled episode is weighted by the sampled episode's undiscounted
    /// return minus the greedy episode's, scaled by the batch's spread ([`greedy_advantages`]).
    /// A sample that does better than the policy's own inference is reinforced, one that does
    /// worse is discouraged. One greedy rollout (its verdicts) more per training episode.
    Greedy,
}

impl std::fmt::Display for Baseline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Baseline::Batch => "batch",
            Baseline::Greedy => "greedy",
        })
    }
}

impl std::str::FromStr for Baseline {
    type Err = RlError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "batch" => Ok(Baseline::Batch),
            "greedy" => Ok(Baseline::Greedy),
            other => Err(RlError::InvalidValue {
                what: "baseline",
                value: other.into(),
                reason: "expected batch or greedy".into(),
            }),
        }
    }
}

/// The weights of [`Baseline::Greedy`]: every step of sampled episode `i` gets
/// `(R_i − R̂_i) / max(s, floor)`, with `R_i = Σ_t r_{i,t}` its undiscounted return, `R̂_i` the
/// greedy episode's on the same target and `s` the population standard deviation of the
/// differences over the batch (not centred: a batch where every sample beats the greedy
/// episode reinforces all of them). Flattened in episode then step order.
///
/// ```
/// use induce_rl::returns::greedy_advantages;
/// // Two episodes of 2 and 1 steps, returns 3 and −1; the greedy ones returned 1 and −1.
/// let a = greedy_advantages(&[vec![1.0, 2.0], vec![-1.0]], &[1.0, -1.0], 1e-3).unwrap();
/// // Differences 2 and 0; their spread is 1.
/// assert_eq!(a, vec![2.0, 2.0, 0.0]);
/// ```
///
/// # Shapes
/// - rewards: `[B][T_i]`; greedy: `[B]`; output: `[Σ_i T_i]`
pub fn greedy_advantages(rewards: &[Vec<f32>], greedy: &[f32], floor: f32) -> Result<Vec<f32>> {
    if rewards.len() != greedy.len() {
        return Err(RlError::InvalidConfig(format!(
            "greedy baseline: {} sampled episodes against {} greedy returns",
            rewards.len(),
            greedy.len()
        )));
    }
    let diffs: Vec<f32> = rewards
        .iter()
        .zip(greedy)
        .map(|(r, g)| r.iter().sum::<f32>() - g)
        .collect();
    if let Some(d) = diffs.iter().find(|d| !d.is_finite()) {
        return Err(RlError::InvalidConfig(format!(
            "non-finite return difference {d}: check the reward and the black box's outputs"
        )));
    }
    let n = diffs.len().max(1) as f32;
    let mean = diffs.iter().sum::<f32>() / n;
    let sd = (diffs.iter().map(|d| (d - mean) * (d - mean)).sum::<f32>() / n)
        .sqrt()
        .max(floor);
    Ok(rewards
        .iter()
        .zip(&diffs)
        .flat_map(|(r, d)| std::iter::repeat_n(d / sd, r.len()))
        .collect())
}

/// Discounted returns `G_t = Σ_i γ^i R_{t+i}` of one episode.
pub fn discounted_returns(rewards: &[f32], gamma: f32) -> Vec<f32> {
    let mut out = vec![0.0; rewards.len()];
    let mut acc = 0.0;
    for t in (0..rewards.len()).rev() {
        acc = rewards[t] + gamma * acc;
        out[t] = acc;
    }
    out
}

/// `(G − mean) / max(std, floor)` over all steps of a batch (population std).
pub fn normalise(returns: &mut [f32], floor: f32) {
    if returns.is_empty() {
        return;
    }
    let n = returns.len() as f32;
    let mean = returns.iter().sum::<f32>() / n;
    let var = returns.iter().map(|g| (g - mean) * (g - mean)).sum::<f32>() / n;
    let sd = var.sqrt().max(floor);
    for g in returns {
        *g = (*g - mean) / sd;
    }
}

/// The discounted returns of a batch of episodes (`reward` of each step), normalised over the
/// batch, flattened in step order. Non-finite returns are a typed error.
pub(crate) fn batch_returns<S>(
    episodes: &[Vec<S>],
    reward: impl Fn(&S) -> f32,
    config: &InduceConfig,
) -> Result<Vec<f32>> {
    let mut returns: Vec<f32> = episodes
        .iter()
        .flat_map(|e| {
            let r: Vec<f32> = e.iter().map(&reward).collect();
            discounted_returns(&r, config.train.gamma)
        })
        .collect();
    if let Some(g) = returns.iter().find(|g| !g.is_finite()) {
        return Err(RlError::InvalidConfig(format!(
            "non-finite return {g}: check the reward and the black box's outputs"
        )));
    }
    normalise(&mut returns, config.train.return_std_floor);
    Ok(returns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_are_discounted_and_normalised() {
        let g = discounted_returns(&[1.0, 0.0, 2.0], 0.5);
        assert_eq!(g, vec![1.5, 1.0, 2.0]);
        let mut v = vec![1.0, 3.0];
        normalise(&mut v, 1e-3);
        assert_eq!(v, vec![-1.0, 1.0]);
        let mut c = vec![2.0, 2.0];
        normalise(&mut c, 1e-3);
        assert_eq!(c, vec![0.0, 0.0]);
    }

    #[test]
    fn greedy_advantages_compare_each_episode_with_its_greedy_one() {
        // Differences 1 and −1 (spread 1): the better sample is reinforced, the worse one not.
        let a = greedy_advantages(&[vec![0.5, 0.5], vec![0.0]], &[0.0, 1.0], 1e-3).unwrap();
        assert_eq!(a, vec![1.0, 1.0, -1.0]);
        // Equal returns everywhere: no push at all (the floor keeps the division finite).
        let z = greedy_advantages(&[vec![1.0], vec![2.0]], &[1.0, 2.0], 1e-3).unwrap();
        assert_eq!(z, vec![0.0, 0.0]);
        assert!(greedy_advantages(&[vec![1.0]], &[], 1e-3).is_err());
        assert!(greedy_advantages(&[vec![f32::NAN]], &[0.0], 1e-3).is_err());
    }
}
