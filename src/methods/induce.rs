//! What InduCE's methods share: their notes' common parts ([`note`]), the settings they read
//! ([`INFERENCE`]) and their builders ([`trained`], [`per_target`]). Each
//! method declares itself in its own file (`inductive.rs`, `best_of_k.rs`, …).

use induce_explain::Explainer;
use induce_rl::{InduceConfig, InduceExplainer, TransductiveExplainer, Widening};

use super::{Build, Describe, Needs};
use crate::error::Result;

/// The settings of the methods that explain with the trained policy's forward passes:
/// the policy, the edit budget, the greedy episodes' look-ahead and the targets explained
/// together.
pub(super) const INFERENCE: &[&str] = &["policy", "budget", "lookahead", "widen", "batch_targets"];

/// What a method that explains with the trained policy needs.
pub(super) const NEEDS_POLICY: Needs = Needs {
    policy: true,
    gradients: false,
    training_targets: false,
};

/// `line` then the minimality pass and the look-ahead of `config`: the end of every InduCE
/// method's note.
pub(super) fn note(line: Option<String>, config: &InduceConfig) -> String {
    let min = match config.minimise {
        true => "minimality pass: each counterfactual reduced to a 1-minimal one",
        false => "paper-faithful: no minimality pass",
    };
    let line = match line {
        Some(l) => format!("{l}; {min}"),
        None => min.to_string(),
    };
    match (config.inference.lookahead, config.inference.widen) {
        (0 | 1, _) => line,
        (k, Widening::Fixed) => format!(
            "{line}; look-ahead: each greedy step takes the best of the policy's {k} most \
             probable actions by the black box's verdicts"
        ),
        (k, w) => format!(
            "{line}; look-ahead: each greedy step takes the best of the policy's {k} most \
             probable actions by the black box's verdicts, widened down the policy's order \
             (doubling) while none flips and the best still improves ({w})"
        ),
    }
}

/// The note of a method with nothing to add to [`note`].
pub(super) fn describe_plain(d: &Describe<'_>) -> Option<String> {
    d.induce.map(|c| note(None, c))
}

/// The note of [`TrainConfig::greedy_every`](induce_rl::TrainConfig::greedy_every) when it is on.
pub(super) fn greedy_every(config: &InduceConfig) -> Option<String> {
    match config.train.greedy_every {
        0 => None,
        1 => Some("greedy episode after every update".into()),
        n => Some(format!(
            "greedy episode after every {n}th update and the last"
        )),
    }
}

/// The trained policy's episodes: `samples` per target (1: its greedy episode; more: the best
/// of the greedy one and `samples − 1` sampled with the configuration's seed).
pub(super) fn trained<'a>(b: &Build<'_, 'a>, samples: usize) -> Result<Box<dyn Explainer + 'a>> {
    let p = b.policy()?;
    let c = b.induce;
    // Refused once, before any target (feature actions without the estimated state, say).
    c.validate()?;
    Ok(Box::new(
        InduceExplainer::from_config(b.method.name(), p, b.black_box, c, b.device)
            .with_samples(samples, c.seed),
    ))
}

/// A policy trained on each target (`init`: starting from a trained one's parameters).
pub(super) fn per_target<'a>(
    b: &Build<'_, 'a>,
    init: Option<&induce_models::Policy>,
) -> Result<Box<dyn Explainer + 'a>> {
    b.induce.validate()?;
    let e = TransductiveExplainer::new(b.method.name(), b.black_box, b.induce.clone(), b.device);
    Ok(match init {
        Some(p) => Box::new(e.with_init(p.clone())),
        None => Box::new(e),
    })
}
