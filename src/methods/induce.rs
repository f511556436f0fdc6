//! The InduCE methods: [`explainer`] builds one, [`describe_induce`] says how it explains.

use burn::tensor::Device;
use induce_explain::Explainer;
use induce_graph::Dataset;
use induce_models::{BlackBox, Policy};
use induce_rl::{InduceConfig, InduceExplainer, TransductiveExplainer, Widening};

use super::Method;
use crate::error::{Error, Result};

/// One line saying how an InduCE `method` explains with `config` (a run's notes carry it):
/// best-of-k sampling and the minimality pass. `None` for the baselines.
///
/// ```
/// use induce::methods::{Method, describe_induce};
/// use induce::rl::InduceConfig;
/// let c = InduceConfig::default();
/// assert_eq!(describe_induce(Method::InductiveBestOfK, &c).unwrap(),
///     "best of 16 episodes per target (the greedy one and 15 sampled from the trained policy); \
///      minimality pass: each counterfactual reduced to a 1-minimal one");
/// assert_eq!(describe_induce(Method::Transductive, &c.paper_faithful()).unwrap(),
///     "paper-faithful: no minimality pass");
/// ```
pub fn describe_induce(method: Method, config: &InduceConfig) -> Option<String> {
    if method.is_baseline() {
        return None;
    }
    let min = match config.minimise {
        true => "minimality pass: each counterfactual reduced to a 1-minimal one",
        false => "paper-faithful: no minimality pass",
    };
    Some(match method {
        Method::InductiveBestOfK => format!(
            "best of {} episodes per target (the greedy one and {} sampled from the trained \
             policy{}{}); {min}",
            config.inference_samples,
            config.inference_samples.saturating_sub(1),
            match config.temperature {
                1.0 => String::new(),
                t => format!(" at temperature {t}"),
            },
            match config.lookahead {
                0 | 1 => String::new(),
                k => format!(
                    ", each of their steps the best of {k} actions drawn without replacement, \
                     by the black box's verdicts"
                ),
            }
        ),
        Method::InductiveFineTuned => format!(
            "the trained policy's greedy episode, then up to {} episodes fine-tuning it on each \
             target (γ {}){}; {min}",
            config.episodes,
            config.gamma,
            greedy_every(config)
                .map(|g| format!(", its {g}"))
                .unwrap_or_default()
        ),
        Method::Transductive => match greedy_every(config) {
            Some(g) => format!("the per-target policy's {g}; {min}"),
            None => min.to_string(),
        },
        _ => min.to_string(),
    })
    .map(|line| match (config.lookahead, config.widen) {
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
    })
}

/// The note of [`InduceConfig::greedy_every`] when it is on.
fn greedy_every(config: &InduceConfig) -> Option<String> {
    match config.greedy_every {
        0 => None,
        1 => Some("greedy episode after every update".into()),
        n => Some(format!(
            "greedy episode after every {n}th update and the last"
        )),
    }
}

fn needs_policy(method: Method) -> Error {
    Error::InvalidValue {
        what: "method",
        value: method.name().into(),
        reason: "needs a trained policy (ExplainJob.policy: a policy file or the directory \
                 `induce train` wrote)"
            .into(),
    }
}

/// Builds the explainer of `method`.
///
/// * `inductive`, `inductive-del-only`: `policy` must hold the trained network (its
///   configuration, from the checkpoint, gives the environment unless `config` is given);
/// * `transductive`: trains per target with `config`;
/// * `untrained`: a fresh network initialised from `config`'s seed;
/// * `inductive-best-of-k`: the trained policy with `config.inference_samples` episodes per
///   target (sampled with `config.seed`).
/// * `inductive-fine-tuned`: the trained policy's greedy episode, then `config.episodes`
///   transductive episodes fine-tuning a copy of it (γ and learning rate from `config`).
///
/// `config` is the InduCE configuration (environment, kernel, episodes, seed, minimality pass)
/// of the run.
pub fn explainer<'a>(
    method: Method,
    data: &Dataset,
    black_box: &'a dyn BlackBox,
    policy: Option<&Policy>,
    config: &InduceConfig,
    device: &Device,
) -> Result<Box<dyn Explainer + 'a>> {
    let mut config = config.clone();
    if let Some(mode) = method.edit_mode() {
        config.env.mode = mode;
    }
    let d = data.graph.features().dim();
    Ok(match method {
        m if m.is_baseline() => {
            return Err(Error::InvalidValue {
                what: "method",
                value: m.name().into(),
                reason: "is a baseline: build it with methods::baseline (it needs the GCN)".into(),
            });
        }
        Method::Transductive => Box::new(TransductiveExplainer::new(
            method.name(),
            black_box,
            config,
            device,
        )),
        Method::InductiveFineTuned => {
            let p = policy.ok_or_else(|| needs_policy(method))?;
            Box::new(
                TransductiveExplainer::new(method.name(), black_box, config, device)
                    .with_init(p.clone()),
            )
        }
        Method::Untrained => {
            let p = config
                .policy_config(d, black_box.num_classes())
                .init(device);
            Box::new(InduceExplainer::from_config(
                method.name(),
                &p,
                black_box,
                &config,
                device,
            ))
        }
        _ => {
            let p = policy.ok_or_else(|| needs_policy(method))?;
            let samples = match method {
                Method::InductiveBestOfK => config.inference_samples,
                _ => 1,
            };
            Box::new(
                InduceExplainer::from_config(method.name(), p, black_box, &config, device)
                    .with_samples(samples, config.seed),
            )
        }
    })
}
