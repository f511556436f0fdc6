//! [`BaselineConfig`] (every baseline's settings) and [`baseline`], which builds one.

use burn::tensor::Device;
use induce_baselines::{
    Candidates, Cf2Config, Cf2Explainer, CfGnnConfig, CfGnnExplainer, ExactConfig, ExactExplainer,
    GreedyConfig, GreedyExplainer, Optimiser, PgConfig, PgExplainer, RandomConfig, RandomExplainer,
};
use induce_explain::{Explainer, Protocol, Verdict};
use induce_graph::Dataset;
use induce_models::BlackBox;
use serde::{Deserialize, Serialize};

use super::{Method, Preset};
use crate::error::{Error, Result};

/// The settings of every baseline, as a run records them in its `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineConfig {
    /// Random masks.
    pub random: RandomConfig,
    /// CF-GNNExplainer and (with every pair as candidate) CF-GNNExplainer++.
    pub cf_gnnexplainer: CfGnnConfig,
    /// CF².
    pub cf2: Cf2Config,
    /// PGExplainer.
    pub pgexplainer: PgConfig,
    /// The exhaustive one-step search.
    #[serde(default)]
    pub greedy: GreedyConfig,
    /// The certified minimum.
    #[serde(default)]
    pub exact: ExactConfig,
}

impl Default for BaselineConfig {
    fn default() -> Self {
        Self::for_dataset("", induce_graph::DEFAULT_SEED)
    }
}

impl BaselineConfig {
    /// Each method's authors' settings for the dataset family of `name` (BA-Shapes' for real
    /// graphs and unknown names: no author published others), seeded with `seed`.
    ///
    /// ```
    /// use induce::methods::BaselineConfig;
    /// use induce::baselines::Optimiser;
    /// let c = BaselineConfig::for_dataset("syn4", 7);
    /// assert_eq!(c.cf_gnnexplainer.optimiser,
    ///     Optimiser::Sgd { lr: 0.1, momentum: 0.0, nesterov: false });
    /// assert_eq!((c.cf2.iterations, c.pgexplainer.epochs, c.random.seed), (500, 20, 7));
    /// ```
    pub fn for_dataset(name: &str, seed: u64) -> Self {
        Self::for_family(Preset::for_dataset(name), name, seed)
    }

    /// Each method's authors' settings for `family`, seeded with `seed`. Within the trees,
    /// PGExplainer's authors tuned Tree-Cycles and Tree-Grid apart: `name` picks Tree-Grid's
    /// settings when it is `tree-grid` or `syn5` (or contains `grid`), Tree-Cycles' otherwise.
    ///
    /// ```
    /// use induce::methods::{BaselineConfig, Preset};
    /// assert_eq!(BaselineConfig::for_family(Preset::Trees, "syn4", 7),
    ///     BaselineConfig::for_dataset("syn4", 7));
    /// let mine = BaselineConfig::for_family(Preset::Trees, "my-grid", 7);
    /// assert_eq!(mine, BaselineConfig::for_dataset("tree-grid", 7));
    /// ```
    pub fn for_family(family: Preset, name: &str, seed: u64) -> Self {
        let name = name.to_ascii_lowercase().replace('_', "-");
        let trees = family == Preset::Trees;
        let pgexplainer = match trees {
            true if name == "syn5" || name.contains("grid") => PgConfig::tree_grid(),
            true => PgConfig::tree_cycles(),
            false => PgConfig::default(),
        };
        let (cf_gnnexplainer, cf2) = match trees {
            true => (CfGnnConfig::trees(), Cf2Config::trees()),
            false => (CfGnnConfig::default(), Cf2Config::default()),
        };
        Self {
            random: RandomConfig {
                seed,
                ..RandomConfig::default()
            },
            cf_gnnexplainer,
            cf2: Cf2Config { seed, ..cf2 },
            pgexplainer: PgConfig {
                seed,
                ..pgexplainer
            },
            greedy: GreedyConfig::default(),
            exact: ExactConfig::default(),
        }
    }

    /// The same settings with every seeded method seeded with `seed`.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.random.seed = seed;
        self.cf2.seed = seed;
        self.pgexplainer.seed = seed;
        self
    }

    /// Sets the budget of every method: random masks (Random), optimisation steps
    /// (CF-GNNExplainer, CF²) or training epochs (PGExplainer).
    pub fn with_iterations(mut self, iterations: usize) -> Self {
        self.random.iterations = iterations;
        self.cf_gnnexplainer.iterations = iterations;
        self.cf2.iterations = iterations;
        self.pgexplainer.epochs = iterations;
        self
    }

    /// Where the searches (`greedy`, `exact`) may add edges (`--additions`).
    pub fn with_additions(mut self, additions: induce_baselines::Additions) -> Self {
        self.greedy.additions = additions;
        self.exact.additions = additions;
        self
    }

    /// One line saying what a baseline `method` ran with under the run's `protocol` (a run's
    /// notes carry it); `train_targets` is the number of nodes PGExplainer trained on, `searched_hops` the
    /// radius its explainer actually searches ([`Explainer::neighbourhood_hops`]: under exact
    /// verdicts the configured hops widened to the black box's receptive field, `L + 1` for `L`
    /// message-passing layers), named when it is wider than the configured one.
    ///
    /// [`Explainer::neighbourhood_hops`]: induce_explain::Explainer::neighbourhood_hops
    pub fn describe(
        &self,
        method: Method,
        protocol: Protocol,
        train_targets: usize,
        searched_hops: Option<u32>,
    ) -> Option<String> {
        let opt = |o: &Optimiser| match *o {
            Optimiser::Sgd {
                lr,
                momentum,
                nesterov,
            } => match (momentum, nesterov) {
                (0.0, _) => format!("SGD lr {lr}"),
                (m, true) => format!("SGD lr {lr}, Nesterov momentum {m}"),
                (m, false) => format!("SGD lr {lr}, momentum {m}"),
            },
            Optimiser::Adam { lr } => format!("Adam lr {lr}"),
        };
        let cf = &self.cf_gnnexplainer;
        let c2 = &self.cf2;
        let pg = &self.pgexplainer;
        Some(match method {
            Method::Random => format!(
                "{} random masks per target over the {}-hop neighbourhood's edges, each \
                 kept with probability {}; the smallest that flips",
                self.random.iterations, self.random.hops, self.random.keep_probability
            ),
            Method::CfGnnExplainer | Method::CfGnnExplainerPlusPlus => {
                let cands = match method {
                    Method::CfGnnExplainer => "the existing edges (deletions)".to_string(),
                    _ => "every node pair (n(n-1)/2; non-edges start absent)".to_string(),
                };
                format!(
                    "{} steps of {}, beta {}, {}-hop neighbourhood, mask over {cands}; \
                     the smallest counterfactual found",
                    cf.iterations,
                    opt(&cf.optimiser),
                    cf.beta,
                    cf.hops
                )
            }
            Method::Cf2 => format!(
                "alpha {}, lambda {}, gamma {}, {} steps of Adam lr {}, threshold {}, \
                 {}-hop neighbourhood",
                c2.alpha, c2.lambda, c2.gamma, c2.iterations, c2.lr, c2.threshold, c2.hops
            ),
            Method::Greedy => {
                let g = &self.greedy;
                format!(
                    "{} over the {}-hop neighbourhood's actions \
                     (additions: {}), up to {} edits, the edit that most lowers {} kept at \
                     each step{}",
                    match g.shortlist {
                        None => "exhaustive one-step search".to_string(),
                        Some(k) => format!(
                            "bounded one-step search (each step judges the {k} actions a \
                             first-order estimate ranks first)"
                        ),
                    },
                    g.hops,
                    g.additions,
                    g.budget,
                    match g.goal {
                        induce_explain::Goal::AnyOther => "the original class's margin".into(),
                        induce_explain::Goal::Class(c) => format!("the margin to class {c}"),
                    },
                    match protocol.minimise {
                        true => "; minimality pass",
                        false => "",
                    }
                )
            }
            Method::Exact => {
                let x = &self.exact;
                format!(
                    "every edit set of the {}-hop neighbourhood's actions (additions: {}) by \
                     size up to {}, at most {} evaluations per target: the certified minimum",
                    x.hops, x.additions, x.max_size, x.max_evaluations
                )
            }
            Method::PgExplainer => format!(
                "trained on {train_targets} nodes for {} epochs (Adam lr {}, size \
                 {}, entropy {}, temperature {} -> {}); deletes the top-{} edges of the {}-hop \
                 neighbourhood",
                pg.epochs,
                pg.lr,
                pg.size_coefficient,
                pg.entropy_coefficient,
                pg.temperature_start,
                pg.temperature_end,
                pg.k,
                pg.hops
            ),
            _ => return None,
        })
        .map(|line| {
            let hops = match method {
                Method::Random => self.random.hops,
                Method::Cf2 => c2.hops,
                Method::PgExplainer => pg.hops,
                Method::Greedy => self.greedy.hops,
                Method::Exact => self.exact.hops,
                _ => cf.hops,
            };
            match protocol.verdict {
                Verdict::Neighbourhood => {
                    format!("{line}; verdicts on the frozen neighbourhood (paper protocol)")
                }
                Verdict::Exact => match searched_hops {
                    Some(h) if h > hops => format!(
                        "{line} (widened to the black box's receptive field, L + 1 = {h} hops, \
                         so that its original label is the model's on the graph)"
                    ),
                    _ => line,
                },
            }
        })
    }

    /// Checks every budget, naming the field at fault (each must be at least 1; a run with
    /// `--iterations 0` is refused before anything is loaded).
    ///
    /// ```
    /// use induce::methods::BaselineConfig;
    /// assert!(BaselineConfig::default().validate().is_ok());
    /// let e = BaselineConfig::default().with_iterations(0).validate().unwrap_err();
    /// assert!(e.to_string().contains("BaselineConfig.random.iterations"), "{e}");
    /// ```
    pub fn validate(&self) -> Result<()> {
        for (field, v) in [
            ("random.iterations", self.random.iterations),
            (
                "cf_gnnexplainer.iterations",
                self.cf_gnnexplainer.iterations,
            ),
            ("cf2.iterations", self.cf2.iterations),
            ("pgexplainer.epochs", self.pgexplainer.epochs),
            ("pgexplainer.k", self.pgexplainer.k),
            ("greedy.budget", self.greedy.budget),
            ("greedy.shortlist", self.greedy.shortlist.unwrap_or(1)),
            ("exact.max_size", self.exact.max_size),
            (
                "exact.max_evaluations",
                self.exact.max_evaluations.min(1) as usize,
            ),
        ] {
            if v == 0 {
                return Err(Error::InvalidValue {
                    what: "setting",
                    value: format!("BaselineConfig.{field} = 0"),
                    reason: "must be at least 1".into(),
                });
            }
        }
        Ok(())
    }

    /// Budgets cut for a smoke run (at most `iterations` optimisation steps or random masks,
    /// 2 PGExplainer epochs).
    pub fn quick(mut self, iterations: usize) -> Self {
        self.random.iterations = self.random.iterations.min(iterations);
        self.cf_gnnexplainer.iterations = self.cf_gnnexplainer.iterations.min(iterations);
        self.cf2.iterations = self.cf2.iterations.min(iterations);
        self.pgexplainer.epochs = self.pgexplainer.epochs.min(2);
        self
    }
}

/// Builds the explainer of a baseline `method` against `bb` (its differentiable form,
/// [`BlackBox::differentiable`], gives the gradient-based methods their gradients, and a model
/// without one is refused by them; its predictions judge every flip). PGExplainer is trained
/// here, on `train_targets`. Every baseline takes the run's `protocol` (its verdicts; `greedy`
/// its minimality pass too).
pub fn baseline<'a>(
    method: Method,
    data: &Dataset,
    bb: &'a dyn BlackBox,
    config: &BaselineConfig,
    protocol: Protocol,
    train_targets: &[u32],
    device: &Device,
) -> Result<Box<dyn Explainer + 'a>> {
    Ok(match method {
        Method::Random => Box::new(RandomExplainer::new(bb, config.random.clone(), protocol)),
        Method::CfGnnExplainer => Box::new(CfGnnExplainer::new(
            bb,
            CfGnnConfig {
                candidates: Candidates::ExistingEdges,
                ..config.cf_gnnexplainer.clone()
            },
            protocol,
            device,
        )?),
        Method::CfGnnExplainerPlusPlus => Box::new(CfGnnExplainer::new(
            bb,
            config.cf_gnnexplainer.clone().plus_plus(),
            protocol,
            device,
        )?),
        Method::Cf2 => Box::new(Cf2Explainer::new(bb, config.cf2.clone(), protocol, device)?),
        Method::PgExplainer => Box::new(PgExplainer::train(
            &data.graph,
            bb,
            train_targets,
            config.pgexplainer.clone(),
            protocol,
            device,
        )?),
        Method::Greedy => {
            config.greedy.validate(protocol)?;
            Box::new(GreedyExplainer::new(bb, config.greedy.clone(), protocol).with_device(device))
        }
        Method::Exact => {
            config.exact.validate(protocol)?;
            Box::new(ExactExplainer::new(bb, config.exact.clone(), protocol))
        }
        other => {
            return Err(Error::InvalidValue {
                what: "method",
                value: other.name().into(),
                reason: "is an InduCE method, not a baseline: use methods::explainer".into(),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shortlist_is_named_in_the_note_and_zero_is_refused_by_its_flag() {
        let mut b = BaselineConfig::default();
        let exact = Protocol::exact(4);
        let note = |b: &BaselineConfig| b.describe(Method::Greedy, exact, 0, None).unwrap();
        assert!(
            note(&b).starts_with("exhaustive one-step search"),
            "{}",
            note(&b)
        );
        b.greedy.shortlist = Some(64);
        assert!(note(&b).contains("judges the 64 actions"), "{}", note(&b));
        b.greedy.shortlist = Some(0);
        let e = b.validate().unwrap_err().to_string();
        let flag = crate::run::name_settings(&e, |o| format!("--{o}"));
        assert!(flag.contains("--shortlist = 0"), "{flag}");
    }

    #[test]
    fn baseline_notes_name_the_radius_searched() {
        let b = BaselineConfig::default();
        let exact = Protocol::exact(4);
        let pg = |searched| {
            b.describe(Method::PgExplainer, exact, 10, searched)
                .unwrap()
        };
        // 3 configured hops, searched on 4 (a 3-layer GCN) or on 3 (a 2-layer PyG model).
        let widened = "top-6 edges of the 3-hop neighbourhood (widened to the black box's \
                       receptive field, L + 1 = 4 hops";
        assert!(pg(Some(4)).contains(widened), "{}", pg(Some(4)));
        assert!(!pg(Some(3)).contains("widened"), "{}", pg(Some(3)));
        assert!(!pg(None).contains("widened"));
        let line = b
            .describe(Method::Cf2, Protocol::paper(4), 0, Some(4))
            .unwrap();
        assert!(
            line.ends_with("verdicts on the frozen neighbourhood (paper protocol)"),
            "{line}"
        );
        assert_eq!(b.describe(Method::Transductive, exact, 0, Some(4)), None);
    }
}
