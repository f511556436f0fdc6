//! [`BaselineConfig`] (the settings of every baseline and search) and what their notes share.
//! Each baseline declares itself in its own file (`random.rs`, `cf_gnnexplainer.rs`, …).

use induce_baselines::{
    Cf2Config, CfGnnConfig, CfGnnFeaturesConfig, ExactConfig, GreedyConfig, Optimiser, PgConfig,
    RandomConfig,
};
use induce_explain::Verdict;
use serde::{Deserialize, Serialize};

use super::{Describe, Needs, Preset};
use crate::error::{Error, Result};

/// The settings of every baseline, as a run records them in its `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineConfig {
    /// Random masks.
    pub random: RandomConfig,
    /// CF-GNNExplainer and (with every pair as candidate) CF-GNNExplainer++.
    pub cf_gnnexplainer: CfGnnConfig,
    /// CF-GNNFeatures (a feature mask).
    #[serde(default)]
    pub cf_gnnfeatures: CfGnnFeaturesConfig,
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
            cf_gnnfeatures: CfGnnFeaturesConfig::default(),
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
        self.cf_gnnfeatures.iterations = iterations;
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
            ("cf_gnnfeatures.iterations", self.cf_gnnfeatures.iterations),
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
        self.cf_gnnfeatures.iterations = self.cf_gnnfeatures.iterations.min(iterations);
        self.cf2.iterations = self.cf2.iterations.min(iterations);
        self.pgexplainer.epochs = self.pgexplainer.epochs.min(2);
        self
    }
}

/// `line`, the note of a baseline that searched `hops` hops, under the run's protocol: the
/// paper's verdicts named, and a radius widened to the black box's receptive field
/// ([`Explainer::neighbourhood_hops`](induce_explain::Explainer::neighbourhood_hops): under
/// exact verdicts the configured hops widened to `L + 1` for `L` message-passing layers).
pub(super) fn note(line: String, hops: u32, d: &Describe<'_>) -> String {
    match d.protocol.verdict {
        Verdict::Neighbourhood => {
            format!("{line}; verdicts on the frozen neighbourhood (paper protocol)")
        }
        Verdict::Exact => match d.searched_hops {
            Some(h) if h > hops => format!(
                "{line} (widened to the black box's receptive field, L + 1 = {h} hops, so that \
                 its original label is the model's on the graph)"
            ),
            _ => line,
        },
    }
}

/// The name of an optimiser's settings in a note.
pub(super) fn optimiser(o: &induce_baselines::Optimiser) -> String {
    match *o {
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
    }
}

/// What a baseline needs: the black box's gradients.
pub(super) const NEEDS_GRADIENTS: Needs = Needs {
    policy: false,
    gradients: true,
    training_targets: false,
};

#[cfg(test)]
mod tests {
    use induce_explain::Protocol;

    use super::*;
    use crate::methods::Method;

    fn describe(
        m: Method,
        b: &BaselineConfig,
        p: Protocol,
        train: usize,
        searched: Option<u32>,
    ) -> Option<String> {
        m.describe(&Describe {
            induce: None,
            baselines: b,
            protocol: p,
            train_targets: train,
            searched_hops: searched,
        })
    }

    #[test]
    fn a_shortlist_is_named_in_the_note_and_zero_is_refused_by_its_flag() {
        let mut b = BaselineConfig::default();
        let exact = Protocol::exact(4);
        let note = |b: &BaselineConfig| describe(Method::GREEDY, b, exact, 0, None).unwrap();
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
        let pg = |searched| describe(Method::PGEXPLAINER, &b, exact, 10, searched).unwrap();
        // 3 configured hops, searched on 4 (a 3-layer GCN) or on 3 (a 2-layer PyG model).
        let widened = "top-6 edges of the 3-hop neighbourhood (widened to the black box's \
                       receptive field, L + 1 = 4 hops";
        assert!(pg(Some(4)).contains(widened), "{}", pg(Some(4)));
        assert!(!pg(Some(3)).contains("widened"), "{}", pg(Some(3)));
        assert!(!pg(None).contains("widened"));
        let line = describe(Method::CF2, &b, Protocol::paper(4), 0, Some(4)).unwrap();
        assert!(
            line.ends_with("verdicts on the frozen neighbourhood (paper protocol)"),
            "{line}"
        );
        assert_eq!(describe(Method::TRANSDUCTIVE, &b, exact, 0, Some(4)), None);
    }
}
