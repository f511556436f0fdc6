//! InduCE's hyperparameters ([`InduceConfig`]): what training, the kernels and inference read.
//! Kept apart from the loops of [`crate::induce`], so that the kernels below them import it
//! without importing the loops.

use induce_models::{Kernel, PolicyConfig};
use serde::{Deserialize, Serialize};

use crate::env::EnvConfig;
use crate::error::{Result, RlError};
use crate::imitation::{ImitationConfig, Training};
use crate::lookahead::Widening;
use crate::returns::Baseline;

/// The policy network's shape: what a checkpoint fixes (part of [`InduceConfig`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetworkConfig {
    /// Width of the GAT layers.
    pub hidden: usize,
    /// Number of GAT layers K.
    pub gat_layers: usize,
    /// Width of the scoring MLP's two hidden layers.
    pub mlp_hidden: usize,
}

impl Default for NetworkConfig {
    /// The paper's: 3 GAT layers of width 16, a scoring MLP of width 16.
    fn default() -> Self {
        Self {
            hidden: 16,
            gat_layers: 3,
            mlp_hidden: 16,
        }
    }
}

/// How a trained policy explains: what a run gives a loaded policy, whatever it was trained
/// with (part of [`InduceConfig`]; the JSON keeps the names `inference_samples` and
/// `inference_batch`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InferenceConfig {
    /// Episodes per target of best-of-k inductive inference (`inductive-best-of-k`): the
    /// greedy one and `samples − 1` sampled from the trained policy.
    #[serde(rename = "inference_samples")]
    pub samples: usize,
    /// Inductive inference (`inductive`, `inductive-best-of-k`, `untrained`): targets explained
    /// together, in lockstep ([`crate::batch`]). On the Burn kernel each step scores all of
    /// their states in one block-diagonal forward pass (what a GPU needs: hundreds); 1, the
    /// default, explains each target on its own thread. With the host kernel the results do
    /// not depend on it; on the Burn kernel a batch sums in another order, so a near-tie
    /// between two actions can break the other way.
    #[serde(rename = "inference_batch")]
    pub batch: usize,
    /// Exact look-ahead over the policy's own proposals ([`crate::lookahead`]): every greedy
    /// episode (inductive inference, and the transductive search's greedy episodes) takes, at
    /// each step, the best of the policy's `lookahead` most probable actions by the black box's
    /// verdicts; with it the transductive search also plays its policy's greedy episode first
    /// and after its last update. Forward passes only (`lookahead` verdicts per step). 0 or 1:
    /// the policy's argmax, as the paper.
    pub lookahead: usize,
    /// How far the look-ahead reaches past the policy's `lookahead` best proposals
    /// ([`Widening`]; needs `lookahead ≥ 2`). [`Widening::Fixed`], the default: the top
    /// `lookahead` only.
    pub widen: Widening,
    /// Temperature of best-of-k's sampled episodes (`inductive-best-of-k`): each samples from
    /// the policy's distribution tempered to `∝ p^(1/T)`. 1, the default, is the policy's own
    /// distribution (the paper's); above 1 the samples spread over more of the candidates.
    /// With [`InferenceConfig::lookahead`] `K ≥ 2` each sampled step judges `K` candidates drawn
    /// at this temperature without replacement and takes the best, as the greedy episode does
    /// with the policy's `K` most probable. Inference only.
    pub temperature: f32,
}

impl Default for InferenceConfig {
    /// The paper's inference: the argmax, no look-ahead; 16 episodes for best-of-k.
    fn default() -> Self {
        Self {
            samples: 16,
            batch: 1,
            lookahead: 0,
            widen: Widening::Fixed,
            temperature: 1.0,
        }
    }
}

/// How the policy is trained, inductively or per target (part of [`InduceConfig`]; the JSON
/// keeps its fields at the top, `method` as `training`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrainConfig {
    /// Discount γ (paper: 0.4 inductive, 0.6 transductive).
    pub gamma: f32,
    /// Entropy bonus η.
    pub entropy_coef: f32,
    /// Adam learning rate.
    pub lr: f64,
    /// Training episodes M: passes over the training targets (inductive) or episodes per target
    /// (transductive).
    pub episodes: usize,
    /// Target nodes per policy update (inductive).
    pub batch_size: usize,
    /// Floor `c` of the standard deviation when normalising returns.
    pub return_std_floor: f32,
    /// What REINFORCE's updates (the paper's training, and the fine-tuning after imitation)
    /// subtract from a sampled episode's return: the batch's normalisation, the paper's
    /// ([`Baseline::Batch`], the default), or the policy's own greedy episode on the same target
    /// ([`Baseline::Greedy`], not in the paper). Inductive training only.
    pub baseline: Baseline,
    /// Transductive (and fine-tuned) search: also play the per-target policy's GREEDY episode
    /// after every `greedy_every`-th update and after the last one, and keep its counterfactual
    /// when it is smaller. The sampled episodes are the same with or without it (it uses no
    /// randomness and changes no parameter), so the result is never worse. Not in the paper:
    /// 0, the default, never does. On large neighbourhoods (Amazon-Photo: ~100,000 candidate
    /// edits) the sampled episodes stay nearly uniform long after the policy's argmax has found
    /// the edits that flip the target.
    pub greedy_every: usize,
    /// How [`crate::train_inductive`] trains the policy: the paper's REINFORCE (the default) or
    /// imitation of the exact greedy search ([`Training::Imitation`], not in the paper).
    #[serde(rename = "training")]
    pub method: Training,
    /// Settings of [`Training::Imitation`] (read only with it).
    pub imitation: ImitationConfig,
}

impl Default for TrainConfig {
    /// The paper's inductive training on BA-Shapes: REINFORCE, γ 0.4, η 0.1, Adam 3·10⁻⁴, 80
    /// episodes, 16 targets per update.
    fn default() -> Self {
        Self {
            gamma: 0.4,
            entropy_coef: 0.1,
            lr: 3e-4,
            episodes: 80,
            batch_size: 16,
            return_std_floor: 1e-3,
            baseline: Baseline::Batch,
            greedy_every: 0,
            method: Training::Reinforce,
            imitation: ImitationConfig::default(),
        }
    }
}

/// Hyperparameters of InduCE. Defaults are the paper's (§3.1, spec §2) for inductive training on
/// BA-Shapes (80 episodes; use 500 for Tree-Cycles and Tree-Grid).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InduceConfig {
    /// The edit environment (hops, budget δ, mode, V_c, reward).
    pub env: EnvConfig,
    /// The network's shape (what a checkpoint fixes); flattened in the JSON.
    #[serde(flatten)]
    pub network: NetworkConfig,
    /// How a trained policy explains (what a run gives a loaded policy); flattened in the
    /// JSON.
    #[serde(flatten)]
    pub inference: InferenceConfig,
    /// How the policy is trained (inductively, or per target); flattened in the JSON.
    #[serde(flatten)]
    pub train: TrainConfig,
    /// Seed of the initialisation and of action sampling.
    pub seed: u64,
    /// Which implementation of the policy trains and explains (same function, see
    /// [`Kernel`]).
    pub kernel: Kernel,
    /// Run the minimality pass ([`induce_explain::minimise`]) on every counterfactual found:
    /// each edit the flip does not need is undone, so every reported counterfactual is
    /// 1-minimal. The transductive search minimises each episode's counterfactual before
    /// comparing it with the best so far (so it stops as soon as one reduces to a single edit).
    /// Not in the paper: [`InduceConfig::paper_faithful`] turns it off.
    pub minimise: bool,
}

/// Imitation passes of [`InduceConfig::recommended`].
pub const RECOMMENDED_PASSES: usize = 20;

/// Training targets the recommended recipe samples when given more and told no `--sample`
/// (`induce train`, `induce.train_policy`): on Cora and CiteSeer 900 found more than 150, as many
/// as 450 with smaller counterfactuals, and within one to three targets of 1,800 in half its
/// training time (docs/RESULTS.md).
pub const RECOMMENDED_TARGETS: usize = 900;

/// Width of the policy's layers in [`InduceConfig::recommended`] (the paper's: 16).
pub const RECOMMENDED_WIDTH: usize = 32;

/// The estimated state's prior weight in [`InduceConfig::recommended`]
/// ([`EnvConfig::prior_weight`]): the network corrects a prior ten times the first-order
/// estimate, where a weight of 1 let it override the prior (`docs/RESULTS.md`, "The trained
/// policy at the paper's cost").
pub const RECOMMENDED_PRIOR_WEIGHT: f32 = 10.0;

impl Default for InduceConfig {
    fn default() -> Self {
        Self {
            env: EnvConfig::default(),
            network: NetworkConfig::default(),
            inference: InferenceConfig::default(),
            train: TrainConfig::default(),
            seed: 42,
            kernel: Kernel::Host,
            minimise: true,
        }
    }
}

impl InduceConfig {
    /// The same settings as the paper describes the method: REINFORCE training, no minimality
    /// pass, and the
    /// Verdicts on the frozen neighbourhood ([`Verdict::Neighbourhood`](induce_explain::Verdict)),
    /// as the paper and the authors' code take them.
    pub fn paper_faithful(self) -> Self {
        Self {
            minimise: false,
            train: TrainConfig {
                method: Training::Reinforce,
                ..self.train
            },
            env: EnvConfig {
                verdict: induce_explain::Verdict::Neighbourhood,
                ..self.env
            },
            ..self
        }
    }

    /// Checks every setting a run reads, naming the field at fault: a library user gets the
    /// error the command line prints. Training and the transductive search also need
    /// `episodes ≥ 1` and `batch_size ≥ 1` (checked where they run).
    ///
    /// ```
    /// use induce_rl::InduceConfig;
    /// assert!(InduceConfig::default().validate().is_ok());
    /// let mut zero = InduceConfig::default();
    /// zero.train.lr = 0.0;
    /// let e = zero.validate().unwrap_err();
    /// assert!(e.to_string().contains("InduceConfig.lr"), "{e}");
    /// let mut cold = InduceConfig::default();
    /// cold.inference.temperature = 0.0;
    /// assert!(cold.validate().unwrap_err().to_string().contains("InduceConfig.temperature"));
    /// // A greedy-rollout baseline with no REINFORCE pass to use it.
    /// let mut idle = InduceConfig::default().recommended();
    /// idle.train.baseline = induce_rl::returns::Baseline::Greedy;
    /// assert!(idle.validate().unwrap_err().to_string().contains("InduceConfig.baseline"));
    /// idle.train.imitation.finetune = 5;
    /// assert!(idle.validate().is_ok());
    /// ```
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, rule: &str, value: String| {
            Err(RlError::InvalidConfig(format!(
                "InduceConfig.{field} must be {rule}, got {value}"
            )))
        };
        if !(self.train.lr.is_finite() && self.train.lr > 0.0) {
            return bad("lr", "a positive finite number", self.train.lr.to_string());
        }
        if !(0.0..=1.0).contains(&self.train.gamma) {
            return bad("gamma", "in [0, 1]", self.train.gamma.to_string());
        }
        if !self.train.entropy_coef.is_finite() {
            return bad(
                "entropy_coef",
                "finite",
                self.train.entropy_coef.to_string(),
            );
        }
        let w = self.env.prior_weight;
        if !(w.is_finite() && w > 0.0) {
            return bad(
                "env.prior_weight",
                "a positive finite number",
                w.to_string(),
            );
        }
        if !(self.train.return_std_floor.is_finite() && self.train.return_std_floor > 0.0) {
            let v = self.train.return_std_floor.to_string();
            return bad("return_std_floor", "a positive finite number", v);
        }
        if !(self.inference.temperature.is_finite() && self.inference.temperature > 0.0) {
            let v = self.inference.temperature.to_string();
            return bad("temperature", "a positive finite number", v);
        }
        if self.inference.widen != Widening::Fixed && self.inference.lookahead < 2 {
            let v = self.inference.lookahead.to_string();
            return bad(
                "lookahead",
                "at least 2 when the look-ahead widens (widen)",
                v,
            );
        }
        if self.train.method == Training::Imitation {
            self.train.imitation.validate()?;
            let im = &self.train.imitation;
            if im.curriculum > self.train.episodes {
                return bad(
                    "imitation.curriculum",
                    &format!("at most the passes (episodes = {})", self.train.episodes),
                    im.curriculum.to_string(),
                );
            }
            if im.finetune == 0 && self.train.baseline != Baseline::Batch {
                return bad(
                    "baseline",
                    "batch where no REINFORCE pass runs (imitation without finetune passes)",
                    self.train.baseline.to_string(),
                );
            }
        }
        if let Some(f) = &self.env.features {
            if self.env.state != crate::StateLayout::Estimated {
                return bad(
                    "env.features",
                    "used with env.state = estimated (the gradient with respect to the features \
                     tells a row's entries apart; --state estimated)",
                    format!("env.state = {:?}", self.env.state),
                );
            }
            if f.quantiles < 2 {
                return bad(
                    "env.features.quantiles",
                    "at least 2",
                    f.quantiles.to_string(),
                );
            }
        }
        for (field, v) in [
            ("hidden", self.network.hidden),
            ("gat_layers", self.network.gat_layers),
            ("mlp_hidden", self.network.mlp_hidden),
            ("inference_samples", self.inference.samples),
            ("inference_batch", self.inference.batch),
            ("env.budget", self.env.budget),
            ("env.hops", self.env.hops as usize),
        ] {
            if v == 0 {
                return bad(field, "at least 1", v.to_string());
            }
        }
        Ok(())
    }

    /// The training recipe `induce train` and `induce.train_policy` use unless told otherwise
    /// (not in the paper; chosen by measurement, `docs/RESULTS.md`, "How close to the limit"):
    /// [`Training::Imitation`] of the exact greedy search for [`RECOMMENDED_PASSES`] passes, on
    /// the [`StateLayout::Estimated`](crate::StateLayout::Estimated) state (a black box without
    /// gradients needs [`StateLayout::Targeted`](crate::StateLayout::Targeted) instead), with
    /// GAT layers and a scoring MLP [`RECOMMENDED_WIDTH`] wide, the estimate weighted
    /// [`RECOMMENDED_PRIOR_WEIGHT`]. Everything else is kept.
    ///
    /// ```
    /// use induce_rl::{InduceConfig, StateLayout, Training};
    /// let c = InduceConfig::default().recommended();
    /// assert_eq!((c.train.method, c.env.state), (Training::Imitation, StateLayout::Estimated));
    /// assert_eq!(c.train.gamma, InduceConfig::default().train.gamma);
    /// assert_eq!(c.env.prior_weight, induce_rl::RECOMMENDED_PRIOR_WEIGHT);
    /// ```
    pub fn recommended(self) -> Self {
        Self {
            train: TrainConfig {
                method: Training::Imitation,
                episodes: RECOMMENDED_PASSES,
                ..self.train
            },
            network: NetworkConfig {
                hidden: RECOMMENDED_WIDTH,
                mlp_hidden: RECOMMENDED_WIDTH,
                ..self.network
            },
            env: EnvConfig {
                state: crate::StateLayout::Estimated,
                prior_weight: RECOMMENDED_PRIOR_WEIGHT,
                ..self.env
            },
            ..self
        }
    }

    /// Passes over the training targets that [`crate::train_inductive`] makes: `episodes`, and
    /// with [`Training::Imitation`] its REINFORCE fine-tuning passes after them.
    ///
    /// ```
    /// use induce_rl::{InduceConfig, TrainConfig};
    /// use induce_rl::imitation::{ImitationConfig, Training};
    /// let c = InduceConfig {
    ///     train: TrainConfig {
    ///         episodes: 20,
    ///         method: Training::Imitation,
    ///         imitation: ImitationConfig { finetune: 5, ..ImitationConfig::default() },
    ///         ..TrainConfig::default()
    ///     },
    ///     ..InduceConfig::default()
    /// };
    /// assert_eq!(c.training_passes(), 25);
    /// ```
    pub fn training_passes(&self) -> usize {
        match self.train.method {
            Training::Reinforce => self.train.episodes,
            Training::Imitation => self.train.episodes + self.train.imitation.finetune,
        }
    }

    /// The policy network for a graph with `feature_dim` features and `num_classes` classes.
    pub fn policy_config(&self, feature_dim: usize, num_classes: usize) -> PolicyConfig {
        PolicyConfig::new(self.env.state.width(feature_dim, num_classes))
            .with_hidden(self.network.hidden)
            .with_gat_layers(self.network.gat_layers)
            .with_mlp_hidden(self.network.mlp_hidden)
            .with_init_seed(self.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_stays_flat_as_checkpoints_saved_it() {
        let v = serde_json::to_value(InduceConfig::default()).unwrap();
        for key in [
            "hidden",
            "gat_layers",
            "inference_samples",
            "inference_batch",
            "lookahead",
            "gamma",
            "episodes",
            "training",
            "imitation",
        ] {
            assert!(v.get(key).is_some(), "{key} missing from {v}");
        }
        for part in ["network", "inference", "train"] {
            assert!(v.get(part).is_none(), "{part} nested in {v}");
        }
        let old: InduceConfig =
            serde_json::from_str(r#"{"hidden": 8, "inference_samples": 4, "gamma": 0.5}"#).unwrap();
        assert_eq!((old.network.hidden, old.inference.samples), (8, 4));
        assert_eq!((old.train.gamma, old.network.gat_layers), (0.5, 3));
    }
}
