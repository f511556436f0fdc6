//! REINFORCE's returns: discounted per episode, normalised over a batch.

use crate::config::InduceConfig;
use crate::error::{Result, RlError};

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
}
