//! The explanation methods by name, the paper's settings per dataset family, and the loading of
//! black boxes and policies from files: what the command line and the examples share.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use burn::tensor::Device;
use induce_baselines::{
    Candidates, Cf2Config, Cf2Explainer, CfGnnConfig, CfGnnExplainer, ExactConfig, ExactExplainer,
    GreedyConfig, GreedyExplainer, Optimiser, PgConfig, PgExplainer, RandomConfig, RandomExplainer,
};
use induce_explain::{Explainer, Verdict};
use induce_graph::Dataset;
use induce_models::checkpoint::{check_dims, load_gcn};
use induce_models::pyg::PygNet;
use induce_models::reference::load_reference_gcn;
use induce_models::{BlackBox, Gcn, Policy};
use induce_rl::{
    EditMode, InduceConfig, InduceExplainer, Kernel, PolicyMeta, TransductiveExplainer, load_policy,
};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// An explanation method, named as the command line's `--method` and the rows of
/// `summary.json` spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Method {
    /// InduCE inductive: one policy trained on training targets, greedy forward passes per
    /// target (`inductive`).
    Inductive,
    /// InduCE inductive with best-of-k inference: the greedy episode and
    /// `inference_samples − 1` episodes sampled from the same trained policy, the smallest
    /// counterfactual kept; forward passes only (`inductive-best-of-k`).
    InductiveBestOfK,
    /// InduCE transductive: a policy trained per target (`transductive`).
    Transductive,
    /// The trained inductive policy fine-tuned per target: its greedy episode, then the
    /// transductive schedule (episodes, γ) starting from its parameters instead of a fresh
    /// network (`inductive-fine-tuned`; not in the paper).
    InductiveFineTuned,
    /// InduCE inductive restricted to deletions (`inductive-del-only`).
    InductiveDelOnly,
    /// The same network as `inductive`, untrained: the ablation of training (`untrained`).
    Untrained,
    /// Random deletion masks, the smallest that flips kept (`random`).
    Random,
    /// CF-GNNExplainer, deletions only (`cf-gnnexplainer`).
    CfGnnExplainer,
    /// CF-GNNExplainer with additions: a mask over every pair (`cf-gnnexplainer++`).
    CfGnnExplainerPlusPlus,
    /// CF² in its counterfactual setting, α = 0 (`cf2`).
    Cf2,
    /// PGExplainer trained on the training targets; its top-k edges deleted (`pgexplainer`).
    PgExplainer,
    /// The exhaustive one-step search in InduCE's action space: every action tried at every
    /// step by an exact verdict, the one that most lowers the original class's margin kept
    /// (`greedy`; the reference for what a search finds).
    Greedy,
    /// The certified minimum: every edit set of InduCE's action space tried by size up to
    /// `--max-size` (`exact`; the reference for size).
    Exact,
}

impl Method {
    /// The InduCE methods, in the order the experiments run them.
    pub const INDUCE: [Method; 5] = [
        Method::Inductive,
        Method::InductiveBestOfK,
        Method::Transductive,
        Method::InductiveDelOnly,
        Method::Untrained,
    ];

    /// The baselines (crate `induce-baselines`), in the order the experiments run them.
    pub const BASELINES: [Method; 5] = [
        Method::Random,
        Method::CfGnnExplainer,
        Method::CfGnnExplainerPlusPlus,
        Method::Cf2,
        Method::PgExplainer,
    ];

    /// The search references (crate `induce-baselines`): exact verdicts over InduCE's action
    /// space, run only when asked (they cost thousands of evaluations per target).
    pub const SEARCHES: [Method; 2] = [Method::Greedy, Method::Exact];

    /// The methods an experiment runs by default: [`Method::INDUCE`], then the baselines.
    pub const DEFAULT: [Method; 10] = [
        Method::Inductive,
        Method::InductiveBestOfK,
        Method::Transductive,
        Method::InductiveDelOnly,
        Method::Untrained,
        Method::Random,
        Method::CfGnnExplainer,
        Method::CfGnnExplainerPlusPlus,
        Method::Cf2,
        Method::PgExplainer,
    ];

    /// Every method: InduCE's (with `inductive-fine-tuned`, which experiments run only when
    /// asked), then the baselines.
    pub const ALL: [Method; 13] = [
        Method::Inductive,
        Method::InductiveBestOfK,
        Method::Transductive,
        Method::InductiveFineTuned,
        Method::InductiveDelOnly,
        Method::Untrained,
        Method::Random,
        Method::CfGnnExplainer,
        Method::CfGnnExplainerPlusPlus,
        Method::Cf2,
        Method::PgExplainer,
        Method::Greedy,
        Method::Exact,
    ];

    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Inductive => "inductive",
            Method::InductiveBestOfK => "inductive-best-of-k",
            Method::Transductive => "transductive",
            Method::InductiveFineTuned => "inductive-fine-tuned",
            Method::InductiveDelOnly => "inductive-del-only",
            Method::Untrained => "untrained",
            Method::Random => "random",
            Method::CfGnnExplainer => "cf-gnnexplainer",
            Method::CfGnnExplainerPlusPlus => "cf-gnnexplainer++",
            Method::Cf2 => "cf2",
            Method::PgExplainer => "pgexplainer",
            Method::Greedy => "greedy",
            Method::Exact => "exact",
        }
    }

    /// True for the baselines and the searches (built by [`baseline`], not [`explainer`]).
    pub fn is_baseline(self) -> bool {
        Method::BASELINES.contains(&self) || Method::SEARCHES.contains(&self)
    }

    /// True for the methods that can add edges: InduCE's (but `inductive-del-only`),
    /// `cf-gnnexplainer++`, `greedy` and `exact`.
    pub fn adds_edges(self) -> bool {
        match self.is_baseline() {
            true => matches!(
                self,
                Method::CfGnnExplainerPlusPlus | Method::Greedy | Method::Exact
            ),
            false => self.edit_mode() != Some(EditMode::DeleteOnly),
        }
    }

    /// False for the methods whose results do not depend on the seed (CF-GNNExplainer and ++:
    /// their mask starts at 1 and their optimisation draws nothing at random).
    pub fn depends_on_seed(self) -> bool {
        !matches!(
            self,
            Method::CfGnnExplainer
                | Method::CfGnnExplainerPlusPlus
                | Method::Greedy
                | Method::Exact
        )
    }

    /// True for the methods that optimise through the black box's gradients with respect to
    /// edge weights ([`BlackBox::edge_weighted`]):
    /// `cf-gnnexplainer`, `cf-gnnexplainer++`, `cf2`, `pgexplainer`. The others need only
    /// predictions.
    pub fn needs_gradients(self) -> bool {
        matches!(
            self,
            Method::CfGnnExplainer
                | Method::CfGnnExplainerPlusPlus
                | Method::Cf2
                | Method::PgExplainer
        )
    }

    /// True for the methods trained on the training targets before explaining (the inductive
    /// policy is trained separately; PGExplainer trains as it is built).
    pub fn needs_training_targets(self) -> bool {
        self == Method::PgExplainer
    }

    /// True for the methods that explain with a trained inductive policy (`--policy`).
    pub fn needs_policy(self) -> bool {
        matches!(
            self,
            Method::Inductive
                | Method::InductiveBestOfK
                | Method::InductiveDelOnly
                | Method::InductiveFineTuned
        )
    }

    /// The edit mode the method imposes, if any.
    pub fn edit_mode(self) -> Option<EditMode> {
        match self {
            Method::InductiveDelOnly => Some(EditMode::DeleteOnly),
            _ => None,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = Error;

    /// A method name; `induce-` prefixes (`induce-inductive`) are accepted.
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim().to_ascii_lowercase();
        let bare = s.strip_prefix("induce-").unwrap_or(&s);
        let bare = match bare {
            "untrained-policy" => "untrained",
            "best-of-k" | "inductive-bok" => "inductive-best-of-k",
            "fine-tuned" | "inductive-finetuned" => "inductive-fine-tuned",
            "cf-gnn" | "cfgnnexplainer" | "cf-gnn-explainer" => "cf-gnnexplainer",
            "cf-gnn++" | "cfgnnexplainer++" | "cf-gnn-explainer++" => "cf-gnnexplainer++",
            "cf²" | "cff" => "cf2",
            "pg-explainer" => "pgexplainer",
            other => other,
        };
        Method::ALL
            .into_iter()
            .find(|m| m.name() == bare)
            .ok_or_else(|| Error::InvalidValue {
                what: "method",
                value: s.to_string(),
                reason: format!(
                    "expected one of {}",
                    Method::ALL.map(Method::name).join(", ")
                ),
            })
    }
}

impl From<Method> for String {
    fn from(m: Method) -> Self {
        m.name().to_string()
    }
}

impl TryFrom<String> for Method {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

/// The paper's InduCE settings for a family of datasets (its §4 and appendix), without needing a
/// generator: M = 80 training episodes on BA-Shapes and the real graphs, 500 on the trees;
/// γ = 0.4 inductive, 0.6 transductive; 4 hops, budget 15.
///
/// ```
/// use induce::methods::Preset;
/// assert_eq!(Preset::for_dataset("syn4"), Preset::Trees);
/// assert_eq!(Preset::Trees.transductive(42).episodes, 500);
/// assert_eq!(Preset::BaShapes.transductive(42).gamma, 0.6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// BA-Shapes (generated or the reference `syn1`).
    BaShapes,
    /// Tree-Cycles and Tree-Grid (generated or `syn4`, `syn5`).
    Trees,
    /// Real graphs (Amazon-Photo, Cora, CiteSeer, OGB) and anything else.
    Real,
}

impl Preset {
    /// Every family, in the order `--family` lists them.
    pub const ALL: [Preset; 3] = [Preset::BaShapes, Preset::Trees, Preset::Real];

    /// The family a dataset name belongs to (`ba-shapes`, `syn1` → BA-Shapes; `tree-cycles`,
    /// `tree-grid`, `syn4`, `syn5` → trees; anything else → real). This is only a guess from
    /// the name: `--family` ([`Family::choose`]) overrides it.
    pub fn for_dataset(name: &str) -> Self {
        match name.to_ascii_lowercase().replace('_', "-").as_str() {
            "ba-shapes" | "syn1" => Preset::BaShapes,
            "tree-cycles" | "tree-grid" | "syn4" | "syn5" => Preset::Trees,
            _ => Preset::Real,
        }
    }

    /// The name `--family`, `config.json` and [`FromStr`] use: `ba-shapes`, `trees`, `real`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::BaShapes => "ba-shapes",
            Preset::Trees => "trees",
            Preset::Real => "real",
        }
    }

    /// Training episodes M of the family.
    pub fn episodes(self) -> usize {
        match self {
            Preset::Trees => 500,
            Preset::BaShapes | Preset::Real => 80,
        }
    }

    /// Inductive InduCE (γ 0.4) with this family's episodes.
    pub fn inductive(self, seed: u64) -> InduceConfig {
        InduceConfig {
            episodes: self.episodes(),
            seed,
            ..InduceConfig::default()
        }
    }

    /// Transductive InduCE (γ 0.6) with this family's per-target episode cap.
    pub fn transductive(self, seed: u64) -> InduceConfig {
        InduceConfig {
            gamma: 0.6,
            ..self.inductive(seed)
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = Error;

    /// `ba-shapes`, `trees` or `real` (case and `_` / `-` ignored).
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase().replace('_', "-");
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == t)
            .ok_or_else(|| Error::InvalidValue {
                what: "family",
                value: s.to_string(),
                reason: "expected auto, ba-shapes, trees or real".into(),
            })
    }
}

/// The hyper-parameter family of a run ([`Preset`]) and whether it was guessed from the data's
/// name (`--family auto`, the default) or chosen (`--family NAME`). A run's `config.json`
/// records both (`family`, `family_guessed`).
///
/// ```
/// use induce::methods::{Family, Preset};
/// let guessed = Family::choose(None, "syn4");
/// assert_eq!((guessed.preset, guessed.guessed), (Preset::Trees, true));
/// let chosen = Family::choose(Some(Preset::BaShapes), "my-graph");
/// assert_eq!((chosen.preset, chosen.guessed), (Preset::BaShapes, false));
/// assert_eq!("trees".parse::<Preset>().unwrap(), Preset::Trees);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Family {
    /// The family whose settings the run uses.
    pub preset: Preset,
    /// True when it was guessed from the data's name, false when `--family` chose it.
    pub guessed: bool,
}

impl Family {
    /// `choice` when given (`--family NAME`), else the guess from the dataset `name`
    /// ([`Preset::for_dataset`]).
    pub fn choose(choice: Option<Preset>, name: &str) -> Self {
        match choice {
            Some(preset) => Self {
                preset,
                guessed: false,
            },
            None => Self {
                preset: Preset::for_dataset(name),
                guessed: true,
            },
        }
    }

    /// One line saying which family a run on the dataset `name` uses, how it was chosen and,
    /// for a guess, why: e.g. `trees, guessed from the name `syn4`, a Tree-Cycles / Tree-Grid
    /// benchmark (--family ba-shapes|trees|real overrides)`.
    ///
    /// ```
    /// use induce::methods::Family;
    /// let f = Family::choose(None, "graph");
    /// assert_eq!(f.describe("graph"), "real, guessed from the name `graph`, which names no \
    ///     synthetic benchmark (ba-shapes, syn1, tree-cycles, tree-grid, syn4, syn5) \
    ///     (--family ba-shapes|trees|real overrides)");
    /// ```
    pub fn describe(&self, name: &str) -> String {
        let why = match self.preset {
            Preset::BaShapes => "a BA-Shapes benchmark",
            Preset::Trees => "a Tree-Cycles / Tree-Grid benchmark",
            Preset::Real => {
                "which names no synthetic benchmark (ba-shapes, syn1, tree-cycles, tree-grid, \
                 syn4, syn5)"
            }
        };
        match self.guessed {
            true => format!(
                "{}, guessed from the name `{name}`, {why} (--family ba-shapes|trees|real \
                 overrides)",
                self.preset
            ),
            false => format!("{}, chosen with --family", self.preset),
        }
    }
}

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

    /// Where `method` takes its verdicts (the default for a method that is not a baseline).
    pub fn verdict(&self, method: Method) -> Verdict {
        match method {
            Method::Random => self.random.verdict,
            Method::CfGnnExplainer | Method::CfGnnExplainerPlusPlus => self.cf_gnnexplainer.verdict,
            Method::Cf2 => self.cf2.verdict,
            Method::PgExplainer => self.pgexplainer.verdict,
            Method::Greedy => self.greedy.verdict,
            Method::Exact => self.exact.verdict,
            _ => Verdict::default(),
        }
    }

    /// Every baseline takes its verdicts where `verdict` says (`--paper-faithful`:
    /// [`Verdict::Neighbourhood`], the frozen neighbourhood of the authors' code).
    pub fn with_verdict(mut self, verdict: Verdict) -> Self {
        self.random.verdict = verdict;
        self.cf_gnnexplainer.verdict = verdict;
        self.cf2.verdict = verdict;
        self.pgexplainer.verdict = verdict;
        self.greedy.verdict = verdict;
        self.exact.verdict = verdict;
        // The paper's protocol has no minimality pass.
        self.greedy.minimise = verdict == Verdict::Exact;
        self
    }

    /// Where the searches (`greedy`, `exact`) may add edges (`--additions`).
    pub fn with_additions(mut self, additions: induce_baselines::Additions) -> Self {
        self.greedy.additions = additions;
        self.exact.additions = additions;
        self
    }

    /// One line saying what a baseline `method` ran with (a run's notes carry it);
    /// `train_targets` is the number of nodes PGExplainer trained on, `searched_hops` the
    /// radius its explainer actually searches ([`Explainer::neighbourhood_hops`]: under exact
    /// verdicts the configured hops widened to the black box's receptive field, `L + 1` for `L`
    /// message-passing layers), named when it is wider than the configured one.
    ///
    /// [`Explainer::neighbourhood_hops`]: induce_explain::Explainer::neighbourhood_hops
    pub fn describe(
        &self,
        method: Method,
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
                    "exhaustive one-step search over the {}-hop neighbourhood's actions \
                     (additions: {}), up to {} edits, the edit that most lowers {} kept at \
                     each step{}",
                    g.hops,
                    g.additions,
                    g.budget,
                    match g.goal {
                        induce_explain::Goal::AnyOther => "the original class's margin".into(),
                        induce_explain::Goal::Class(c) => format!("the margin to class {c}"),
                    },
                    match g.minimise {
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
            match self.verdict(method) {
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
/// here, on `train_targets`.
pub fn baseline<'a>(
    method: Method,
    data: &Dataset,
    bb: &'a dyn BlackBox,
    config: &BaselineConfig,
    train_targets: &[u32],
    device: &Device,
) -> Result<Box<dyn Explainer + 'a>> {
    Ok(match method {
        Method::Random => Box::new(RandomExplainer::new(bb, config.random.clone())),
        Method::CfGnnExplainer => Box::new(CfGnnExplainer::new(
            bb,
            CfGnnConfig {
                candidates: Candidates::ExistingEdges,
                ..config.cf_gnnexplainer.clone()
            },
            device,
        )?),
        Method::CfGnnExplainerPlusPlus => Box::new(CfGnnExplainer::new(
            bb,
            config.cf_gnnexplainer.clone().plus_plus(),
            device,
        )?),
        Method::Cf2 => Box::new(Cf2Explainer::new(bb, config.cf2.clone(), device)?),
        Method::PgExplainer => Box::new(PgExplainer::train(
            &data.graph,
            bb,
            train_targets,
            config.pgexplainer.clone(),
            device,
        )?),
        Method::Greedy => {
            config.greedy.validate()?;
            Box::new(GreedyExplainer::new(bb, config.greedy.clone()))
        }
        Method::Exact => {
            config.exact.validate()?;
            Box::new(ExactExplainer::new(bb, config.exact.clone()))
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

/// A black box loaded from a file, in both kernels' forms.
pub struct LoadedBlackBox {
    /// The Burn model, for the paper's GCN (`None` for a PyG model: it is its own
    /// differentiable form, [`BlackBox::edge_weighted`]).
    pub model: Option<Gcn>,
    /// What the explainers call: the host copy ([`HostGcn`](induce_models::host::gcn::HostGcn)) for the host kernel, the Burn
    /// model on the device otherwise.
    pub black_box: Box<dyn BlackBox>,
}

impl fmt::Debug for LoadedBlackBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedBlackBox").finish_non_exhaustive()
    }
}

/// Wraps a GCN as the black box the `kernel` uses (same function, pinned by tests).
pub fn black_box_for(model: Gcn, kernel: Kernel, device: &Device) -> Result<LoadedBlackBox> {
    let black_box = induce_models::gcn_black_box(&model, kernel, device)?;
    Ok(LoadedBlackBox {
        model: Some(model),
        black_box,
    })
}

/// Loads the black-box GCN for `data` from `path`: the authors' SafeTensors weights
/// (`*.safetensors`, e.g. `shared/reference/syn1_gcn.safetensors`) or a checkpoint of ours
/// (`*.bpk` with its `.json`, or a run directory holding `black_box.bpk`). A model whose input
/// width differs from the data's, or that has fewer classes than the data's labels use, is a
/// typed error naming both numbers.
pub fn load_black_box(
    path: impl AsRef<Path>,
    data: &Dataset,
    kernel: Kernel,
    device: &Device,
) -> Result<LoadedBlackBox> {
    load_black_box_with_arch(path, None, data, kernel, device)
}

/// [`load_black_box`], or, with an architecture file `arch`, a PyTorch Geometric model: its
/// `state_dict` saved as SafeTensors at `path` and read through `arch`
/// ([`induce_models::pyg::PygNet`]; `GCNConv`, `SAGEConv`, `GINConv`, `GATConv` stacks). The
/// PyG model runs on the host (whatever `kernel` says); the gradient-based baselines
/// differentiate its Burn form on `device`. Dimension checks as for [`load_black_box`].
pub fn load_black_box_with_arch(
    path: impl AsRef<Path>,
    arch: Option<&Path>,
    data: &Dataset,
    kernel: Kernel,
    device: &Device,
) -> Result<LoadedBlackBox> {
    let path = path.as_ref();
    let (d, c) = (data.graph.features().dim(), data.graph.num_classes());
    if let Some(arch) = arch {
        if path.extension().is_none_or(|e| e != "safetensors") {
            return Err(Error::InvalidValue {
                what: "black box",
                value: path.display().to_string(),
                reason: "--arch describes a PyG state_dict saved as .safetensors \
                         (safetensors.torch.save_file(model.state_dict(), ...))"
                    .into(),
            });
        }
        let net = PygNet::load(path, arch)?;
        check_dims(path, "node feature dimension", net.input_dim(), d)?;
        // The data's labels must be classes of the model; a model may predict classes the
        // labels never use (a subgraph, unlabelled data given all-zero labels).
        if net.num_classes() < c {
            check_dims(path, "number of classes", net.num_classes(), c)?;
        }
        return Ok(LoadedBlackBox {
            model: None,
            black_box: Box::new(net),
        });
    }
    let path = if path.is_dir() {
        path.join("black_box.bpk")
    } else {
        path.to_path_buf()
    };
    let model = if path.extension().is_some_and(|e| e == "safetensors") {
        if let Some(key) = pyg_key(&path) {
            return Err(Error::InvalidValue {
                what: "black box",
                value: path.display().to_string(),
                reason: format!(
                    "holds `{key}`, a PyTorch Geometric layer's tensor, not the paper's GCN: \
                     describe the model with --arch arch.json (docs/FORMATS.md)"
                ),
            });
        }
        let m = load_reference_gcn(&path, device)?;
        check_dims(&path, "node feature dimension", m.input_dim(), d)?;
        if m.num_classes() < c {
            check_dims(&path, "number of classes", m.num_classes(), c)?;
        }
        m
    } else if path.extension().is_some_and(|e| e == "bpk") || !path.exists() {
        // Checked as the SafeTensors GCN above: the input width exactly, the classes at least.
        let m = load_gcn(&path, None, device)?;
        check_dims(&path, "input feature dimension", m.input_dim(), d)?;
        if m.num_classes() < c {
            check_dims(&path, "number of classes", m.num_classes(), c)?;
        }
        m
    } else {
        return Err(Error::InvalidValue {
            what: "black box",
            value: path.display().to_string(),
            reason: "not a model file: expected the authors' .safetensors GCN, a .bpk \
                     checkpoint of ours (with its .json beside it) or a run directory"
                .into(),
        });
    };
    black_box_for(model, kernel, device)
}

/// A key of a SafeTensors file that only a PyG layer has (`lin_l.weight`, `att_src`, `nn.0.weight`,
/// `lin.weight` without the paper's `gc1.weight`), if any: such a file needs `--arch`.
fn pyg_key(path: &Path) -> Option<String> {
    let shapes = induce_models::reference::safetensors_shapes(path).ok()?;
    // The paper's GCN, also under a prefix (`model.gc1.weight`: the loader names the prefix).
    if shapes
        .iter()
        .any(|(k, _)| k == "gc1.weight" || k.ends_with(".gc1.weight"))
    {
        return None;
    }
    shapes.into_iter().map(|(k, _)| k).find(|k| {
        [".lin_l.weight", ".att_src", ".nn.0.weight", ".lin.weight"]
            .iter()
            .any(|s| k.ends_with(s))
    })
}

/// The policy file of a policy trained for `mode`: `policy-del-only.bpk` for deletions only,
/// `policy.bpk` otherwise (with its `.json` beside it).
///
/// ```
/// use induce::methods::policy_file_name;
/// use induce::rl::EditMode;
/// assert_eq!(policy_file_name(EditMode::DeleteOnly), "policy-del-only.bpk");
/// assert_eq!(policy_file_name(EditMode::Both), "policy.bpk");
/// ```
pub fn policy_file_name(mode: EditMode) -> &'static str {
    match mode {
        EditMode::DeleteOnly => "policy-del-only.bpk",
        _ => "policy.bpk",
    }
}

/// The checkpoint file of a policy given as a file or as a run directory (`DIR/policy.bpk`, or
/// `DIR/policy-del-only.bpk` for the deletion-only method).
pub fn policy_path(path: impl AsRef<Path>, method: Method) -> PathBuf {
    let path = path.as_ref();
    if path.is_dir() {
        let mode = method.edit_mode().unwrap_or_default();
        path.join(policy_file_name(mode))
    } else {
        path.to_path_buf()
    }
}

/// Loads a trained policy for `data` through `black_box` (see [`load_policy`]).
pub fn load_trained_policy(
    path: impl AsRef<Path>,
    method: Method,
    data: &Dataset,
    black_box: &dyn BlackBox,
    device: &Device,
) -> Result<(Policy, PolicyMeta)> {
    let path = policy_path(path, method);
    let d = data.graph.features().dim();
    Ok(load_policy(&path, d, black_box.num_classes(), device)?)
}

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
             policy); {min}",
            config.inference_samples,
            config.inference_samples.saturating_sub(1)
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
    .map(|line| match config.lookahead {
        0 | 1 => line,
        k => format!(
            "{line}; look-ahead: each greedy step takes the best of the policy's {k} most \
             probable actions by the black box's verdicts"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_notes_name_the_radius_searched() {
        let b = BaselineConfig::default();
        let pg = |searched| b.describe(Method::PgExplainer, 10, searched).unwrap();
        // 3 configured hops, searched on 4 (a 3-layer GCN) or on 3 (a 2-layer PyG model).
        let widened = "top-6 edges of the 3-hop neighbourhood (widened to the black box's \
                       receptive field, L + 1 = 4 hops";
        assert!(pg(Some(4)).contains(widened), "{}", pg(Some(4)));
        assert!(!pg(Some(3)).contains("widened"), "{}", pg(Some(3)));
        assert!(!pg(None).contains("widened"));
        let frozen = b.clone().with_verdict(Verdict::Neighbourhood);
        let line = frozen.describe(Method::Cf2, 0, Some(4)).unwrap();
        assert!(
            line.ends_with("verdicts on the frozen neighbourhood (paper protocol)"),
            "{line}"
        );
        assert_eq!(b.describe(Method::Transductive, 0, Some(4)), None);
    }

    #[test]
    fn method_names_round_trip() {
        for m in Method::ALL {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
            assert_eq!(format!("induce-{m}").parse::<Method>().unwrap(), m);
        }
        assert_eq!(
            "untrained-policy".parse::<Method>().unwrap(),
            Method::Untrained
        );
        assert_eq!("CF-GNN".parse::<Method>().unwrap(), Method::CfGnnExplainer);
        let e = "gem".parse::<Method>().unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid method `gem`: expected one of inductive, inductive-best-of-k, \
             transductive, inductive-fine-tuned, inductive-del-only, untrained, random, cf-gnnexplainer, cf-gnnexplainer++, cf2, \
             pgexplainer, greedy, exact"
        );
        assert!(Method::BASELINES.iter().all(|m| m.is_baseline()));
        assert!(Method::INDUCE.iter().all(|m| !m.is_baseline()));
    }

    #[test]
    fn presets_follow_the_paper() {
        for (name, p, m) in [
            ("ba-shapes", Preset::BaShapes, 80),
            ("syn1", Preset::BaShapes, 80),
            ("tree-grid", Preset::Trees, 500),
            ("syn5", Preset::Trees, 500),
            ("cora", Preset::Real, 80),
        ] {
            assert_eq!(Preset::for_dataset(name), p);
            assert_eq!(p.inductive(7).episodes, m);
            assert_eq!((p.inductive(7).gamma, p.transductive(7).gamma), (0.4, 0.6));
            assert_eq!(p.transductive(7).seed, 7);
        }
        for p in Preset::ALL {
            assert_eq!(p.name().parse::<Preset>().unwrap(), p);
            // The serialised name (config.json) is the name `--family` takes.
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
        assert_eq!("BA_Shapes".parse::<Preset>().unwrap(), Preset::BaShapes);
        let e = "grids".parse::<Preset>().unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid family `grids`: expected auto, ba-shapes, trees or real"
        );
        // The family decides the baselines' settings; the name only tells the two trees apart.
        let real = BaselineConfig::for_family(Preset::Real, "syn4", 1);
        assert_eq!(real, BaselineConfig::for_dataset("cora", 1));
        assert_eq!(
            BaselineConfig::for_family(Preset::Trees, "tree-cycles", 1),
            BaselineConfig::for_dataset("tree-cycles", 1)
        );
        let f = Family::choose(None, "ba_grid");
        assert_eq!((f.preset, f.guessed), (Preset::Real, true));
        assert!(
            f.describe("ba_grid")
                .contains("guessed from the name `ba_grid`")
        );
        let f = Family::choose(Some(Preset::BaShapes), "ba_grid");
        assert_eq!(f.describe("ba_grid"), "ba-shapes, chosen with --family");
    }
}
