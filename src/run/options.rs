//! The settings a user gives a run by name: `induce explain` / `induce train` flags and the
//! Python package's keyword arguments, converted to a job in one place.

use std::path::PathBuf;

use induce_explain::Protocol;
use induce_rl::Kernel;
use serde::{Deserialize, Serialize};

use super::{ExplainJob, TargetFilter, TrainJob};
use crate::TargetSpec;
use crate::methods::{BaselineConfig, Preset, Restrictions, Variant};

/// The library's names of the settings a user gives by name (in error messages, e.g.
/// `InduceConfig.env.hops`) and the [`RunOptions`] field each one is (`hops`): front ends turn
/// the first into their own spelling of the second ([`name_settings`]).
pub const SETTING_NAMES: [(&str, &str); 25] = [
    ("InduceConfig.lr", "lr"),
    ("InduceConfig.env.budget", "budget"),
    ("InduceConfig.inference_batch", "batch_targets"),
    ("InduceConfig.episodes", "episodes"),
    ("InduceConfig.inference_samples", "samples"),
    ("InduceConfig.temperature", "temperature"),
    ("InduceConfig.kernel", "kernel"),
    ("InduceConfig.env.hops", "hops"),
    ("InduceConfig.imitation.curriculum", "curriculum"),
    ("InduceConfig.baseline", "baseline"),
    ("BaselineConfig.random.iterations", "iterations"),
    ("BaselineConfig.cf_gnnexplainer.iterations", "iterations"),
    ("BaselineConfig.cf_gnnfeatures.iterations", "iterations"),
    ("BaselineConfig.cf2.iterations", "iterations"),
    ("BaselineConfig.pgexplainer.epochs", "iterations"),
    ("EnvConfig.max_nodes", "max_neighbourhood"),
    ("EnvConfig.fanout", "fanout"),
    ("BaselineConfig.exact.max_size", "max_size"),
    ("BaselineConfig.exact.max_evaluations", "max_evaluations"),
    ("BaselineConfig.greedy.budget", "budget"),
    ("BaselineConfig.greedy.shortlist", "shortlist"),
    (
        "BaselineConfig.greedy.feature_quantiles",
        "feature_quantiles",
    ),
    (
        "BaselineConfig.exact.feature_quantiles",
        "feature_quantiles",
    ),
    ("ExplainJob.policy", "policy"),
    ("TargetFilter::AllNodes", "all_nodes"),
];

/// `line` with every library setting name of [`SETTING_NAMES`] replaced by `spell(option)`
/// (the command line: `--hops`; the Python package: `hops`).
///
/// ```
/// use induce::run::name_settings;
/// let line = "invalid setting `InduceConfig.env.hops = 0`";
/// assert_eq!(name_settings(line, |o| format!("--{}", o.replace('_', "-"))),
///     "invalid setting `--hops = 0`");
/// ```
///
/// A [`RunOptions`] field named as `RunOptions.field` is spelt `spell("field")`:
///
/// ```
/// use induce::run::name_settings;
/// assert_eq!(name_settings("`RunOptions.max_size`.", |o| format!("--{}", o.replace('_', "-"))),
///     "`--max-size`.");
/// ```
pub fn name_settings(line: &str, spell: impl Fn(&str) -> String) -> String {
    let mut out = line.to_string();
    for (field, option) in SETTING_NAMES {
        out = out.replace(field, &spell(option));
    }
    const PREFIX: &str = "RunOptions.";
    let mut spelt = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(i) = rest.find(PREFIX) {
        spelt.push_str(&rest[..i]);
        let after = &rest[i + PREFIX.len()..];
        let end =
            (after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))).unwrap_or(after.len());
        spelt.push_str(&spell(&after[..end]));
        rest = &after[end..];
    }
    spelt.push_str(rest);
    spelt
}

impl RunOptions {
    /// The names of the options set here: the fields that are not `None` (or `false`), in
    /// alphabetical order.
    ///
    /// ```
    /// use induce::run::RunOptions;
    /// let o = RunOptions { shortlist: Some(8), paper_faithful: true, ..RunOptions::default() };
    /// assert_eq!(o.chosen(), ["paper_faithful", "shortlist"]);
    /// ```
    pub fn chosen(&self) -> Vec<String> {
        let value = serde_json::to_value(self).expect("RunOptions serialises to JSON");
        let fields = value
            .as_object()
            .expect("RunOptions serialises to an object");
        (fields.iter())
            .filter(|(_, v)| !v.is_null() && **v != serde_json::Value::Bool(false))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Every option's name (the Python package's keyword arguments), in field order.
    ///
    /// ```
    /// let names = induce::run::RunOptions::names();
    /// assert_eq!((names[0].as_str(), names.last().unwrap().as_str()), ("seed", "to_class"));
    /// ```
    pub fn names() -> Vec<String> {
        let defaults = RunOptions::default();
        let text = serde_json::to_string(&defaults).expect("RunOptions serialises");
        let value = serde_json::to_value(&defaults).expect("RunOptions serialises");
        let mut names: Vec<String> =
            (value.as_object().expect("an object").keys().cloned()).collect();
        // A `Value`'s map is sorted by key; the text keeps the fields' order. Every default is
        // `null` or `false`, so a quoted key followed by `:` occurs once, at its field.
        names.sort_by_key(|k| text.find(&format!("\"{k}\":")));
        names
    }
}

/// The refusal threshold of a neighbourhood's node count when none is given (`--max-neighbourhood`).
pub const DEFAULT_MAX_NEIGHBOURHOOD: usize = 100_000;

/// Episodes per target of `inductive-best-of-k` when none is given (`--samples`).
pub const DEFAULT_SAMPLES: usize = 16;

/// A run's settings as a user names them; `None` / `false` is the default of the job (the
/// paper's, per hyper-parameter family). Serialised with these field names (the Python
/// package's keyword arguments); unknown names are refused.
///
/// ```
/// use induce::run::RunOptions;
/// use induce::{Method, TargetSpec};
/// let o: RunOptions = serde_json::from_str(r#"{"seed": 7, "hops": 3, "iterations": 100}"#).unwrap();
/// let job = o.explain_job("cora", "model.safetensors", None, None, &[Method::TRANSDUCTIVE],
///     TargetSpec::List(vec![1, 2]));
/// assert_eq!((job.seed, job.induce.seed, job.induce.env.hops), (7, 7, 3));
/// assert!(serde_json::from_str::<RunOptions>(r#"{"hop": 3}"#).is_err());
/// // Python's `lookahead=8, widen=True`:
/// let o: RunOptions = serde_json::from_str(r#"{"lookahead": 8, "widen": true}"#).unwrap();
/// let job = o.explain_job("cora", "model.safetensors", None, None, &[Method::TRANSDUCTIVE],
///     TargetSpec::List(vec![1, 2]));
/// assert_eq!(job.induce.inference.lookahead, 8);
/// assert_eq!(job.induce.inference.widen, induce::rl::Widening::WhileImproving);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOptions {
    /// Seed of the run (`--seed`; default [`induce_graph::DEFAULT_SEED`]).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Hyper-parameter family (`--family`; default: guessed from the data's name).
    #[serde(default)]
    pub family: Option<Preset>,
    /// Training episodes / the transductive per-target cap (`--episodes`).
    #[serde(default)]
    pub episodes: Option<usize>,
    /// The policy's Adam learning rate (`--lr`).
    #[serde(default)]
    pub lr: Option<f64>,
    /// Edit types (`--edits`: a comma list of add, del, feat).
    #[serde(default)]
    pub edits: Option<crate::methods::EditSet>,
    /// Kernel of the policy and the black box (`--kernel`; default host).
    #[serde(default)]
    pub kernel: Option<Kernel>,
    /// Neighbourhood radius in hops (`--hops`).
    #[serde(default)]
    pub hops: Option<u32>,
    /// InduCE's edit budget δ per explanation (`--budget`; default the paper's 15, or a loaded
    /// policy's own budget). Given, it applies to every InduCE method, a trained policy's too.
    #[serde(default)]
    pub budget: Option<usize>,
    /// Fan-out cap of neighbourhoods (`--fanout`).
    #[serde(default)]
    pub fanout: Option<usize>,
    /// Refuse neighbourhoods larger than this (`--max-neighbourhood`; default
    /// [`DEFAULT_MAX_NEIGHBOURHOOD`]).
    #[serde(default)]
    pub max_neighbourhood: Option<usize>,
    /// The baselines' budget (`--iterations`).
    #[serde(default)]
    pub iterations: Option<usize>,
    /// Episodes per target of `inductive-best-of-k` (`--samples`; default [`DEFAULT_SAMPLES`]).
    #[serde(default)]
    pub samples: Option<usize>,
    /// Greedy episode every N updates of a per-target policy (`--greedy-every`; default 0).
    #[serde(default)]
    pub greedy_every: Option<usize>,
    /// The reward InduCE trains with (`--reward`; default [`induce_rl::Reward::shaped`], chosen
    /// by measurement; [`induce_rl::Reward::paper`] is the paper's). Training only: `induce
    /// train` and `transductive` (a loaded policy, fine-tuned too, keeps its own). In JSON the
    /// tagged form, `{"kind": "paper"}`.
    #[serde(default)]
    pub reward: Option<induce_rl::Reward>,
    /// The policy's per-node state (`--state`; default: the recommended recipe's for `induce
    /// train`, [`StateLayout::Estimated`](induce_rl::StateLayout), or `Targeted` for a black
    /// box without gradients; the paper's, `Paper`, with `--training reinforce` and for
    /// `transductive`; `--paper-faithful` the authors'). Training only: `induce train` and
    /// `transductive` (a loaded policy keeps its own).
    #[serde(default)]
    pub state: Option<induce_rl::StateLayout>,
    /// How `induce train` trains its policy (`--training`; see
    /// [`induce_rl::Training`]). Training only. `--paper-faithful` without it: the paper's
    /// REINFORCE.
    #[serde(default)]
    pub training: Option<induce_rl::Training>,
    /// Train on a random sample of this many of the targets, seeded by the run's seed
    /// (`induce train --sample`; default: all of them with REINFORCE, at most
    /// [`induce_rl::RECOMMENDED_TARGETS`] with the recommended recipe). Training only.
    #[serde(default)]
    pub sample: Option<usize>,
    /// Imitation: the candidates the search judges at a training state (`--max-judged`; default
    /// 128). Training only, with imitation.
    #[serde(default)]
    pub max_judged: Option<usize>,
    /// The paper's protocol (`--paper-faithful`): its verdicts and no minimality pass; the
    /// reward stays [`RunOptions::reward`]'s.
    #[serde(default)]
    pub paper_faithful: bool,
    /// Every node of a broad target spec, not only the paper's targets (`--all-nodes`).
    #[serde(default)]
    pub all_nodes: bool,
    /// Worker threads (`--threads`; 0 or none: all cores).
    #[serde(default)]
    pub threads: Option<usize>,
    /// Targets explained together by inductive inference (`--batch-targets`; default 1).
    #[serde(default)]
    pub batch_targets: Option<usize>,
    /// Kernel of the black box when it differs from the policy's (`--black-box-kernel`).
    #[serde(default)]
    pub black_box_kernel: Option<Kernel>,
    /// The largest size `exact` searches (`--max-size`; default 3).
    #[serde(default)]
    pub max_size: Option<usize>,
    /// `exact` gives up on a target after this many evaluations (`--max-evaluations`; default
    /// 1,000,000).
    #[serde(default)]
    pub max_evaluations: Option<u64>,
    /// `greedy` judges only the K actions of each step that a first-order estimate ranks first
    /// (`--shortlist`; default every action, the exhaustive search).
    #[serde(default)]
    pub shortlist: Option<usize>,
    /// Where `greedy` and `exact` may add edges (`--additions`; default the neighbourhood, the
    /// paper's action space).
    #[serde(default)]
    pub additions: Option<induce_baselines::Additions>,
    /// Whose features `greedy` and `exact` may flip with `--edits …,feat` (`--feature-nodes`;
    /// default the target's own row).
    #[serde(default)]
    pub feature_nodes: Option<induce_baselines::FeatureNodes>,
    /// Quantile levels of a continuous feature column's candidate values for `greedy` and
    /// `exact` with `--edits …,feat` (`--feature-quantiles`; default 3: the column's minimum,
    /// median and maximum; 0/1 columns flip, see
    /// [`FeatureValues`](induce_baselines::features::FeatureValues)).
    #[serde(default)]
    pub feature_quantiles: Option<usize>,
    /// InduCE's greedy episodes look ahead over the policy's K best proposals, each judged by
    /// the black box (`--lookahead`; default 0: the policy's argmax, as the paper).
    #[serde(default)]
    pub lookahead: Option<usize>,
    /// That look-ahead widens down the policy's order while none of its proposals flips the
    /// target and the best still improves (`--widen`; `true`:
    /// [`Widening::WhileImproving`](induce_rl::Widening); default `false`: the K proposals only).
    #[serde(default)]
    pub widen: Option<bool>,
    /// Temperature of `inductive-best-of-k`'s sampled episodes (`--temperature`; default 1:
    /// the policy's own distribution, [`InferenceConfig::temperature`](induce_rl::InduceConfig)).
    #[serde(default)]
    pub temperature: Option<f32>,
    /// Nodes no edit may touch (`--lock-nodes`): InduCE's methods and the searches.
    #[serde(default)]
    pub lock_nodes: Option<Vec<u32>>,
    /// Node pairs no edit may delete or add (`--lock-edges`): InduCE's methods and the
    /// searches.
    #[serde(default)]
    pub lock_edges: Option<Vec<(u32, u32)>>,
    /// Feature columns no feature edit may change (`--lock-features`; protected attributes,
    /// say): with `--edits …,feat`.
    #[serde(default)]
    pub lock_features: Option<Vec<u32>>,
    /// The class every counterfactual must reach (`--to-class`; default any other class):
    /// InduCE's methods and the searches.
    #[serde(default)]
    pub to_class: Option<usize>,
}

impl RunOptions {
    fn seed(&self) -> u64 {
        self.seed.unwrap_or(induce_graph::DEFAULT_SEED)
    }

    fn filter(&self) -> TargetFilter {
        match self.all_nodes {
            true => TargetFilter::AllNodes,
            false => TargetFilter::Paper,
        }
    }

    fn apply_induce(&self, induce: &mut induce_rl::InduceConfig) {
        induce.seed = self.seed();
        induce.kernel = self.kernel.unwrap_or_default();
        induce.env.fanout = self.fanout;
        if let Some(h) = self.hops {
            induce.env.hops = h;
        }
        induce.env.max_nodes = Some(self.max_neighbourhood.unwrap_or(DEFAULT_MAX_NEIGHBOURHOOD));
        self.apply_training(induce);
        induce.env.goal = induce_explain::Goal::to_class(self.to_class);
    }

    /// The training settings given here: episodes, learning rate, reward, state, edit budget.
    fn apply_training(&self, induce: &mut induce_rl::InduceConfig) {
        if let Some(b) = self.budget {
            induce.env.budget = b;
        }
        if let Some(m) = self.episodes {
            induce.train.episodes = m;
        }
        if let Some(lr) = self.lr {
            induce.train.lr = lr;
        }
        if let Some(r) = self.reward {
            induce.env.reward = r;
        }
        if let Some(s) = self.state {
            induce.env.state = s;
        }
    }

    /// Sets the options given here that methods read (those a method declares,
    /// [`MethodDecl::settings`](crate::methods::MethodDecl)) on InduCE's configuration
    /// `induce`, the baselines' and searches' `baselines` and the run's edit `budget`; an
    /// option not given leaves its setting as it is. The one mapping of those options, for a
    /// run ([`RunOptions::explain_job`]) and for a method's variant ([`RunOptions::of_variant`]).
    pub fn apply_method_options(
        &self,
        induce: &mut induce_rl::InduceConfig,
        baselines: &mut BaselineConfig,
        budget: &mut Option<usize>,
    ) {
        self.apply_training(induce);
        if self.budget.is_some() {
            *budget = self.budget;
        }
        if let Some(k) = self.samples {
            induce.inference.samples = k;
        }
        if let Some(n) = self.greedy_every {
            induce.train.greedy_every = n;
        }
        if let Some(n) = self.batch_targets {
            induce.inference.batch = n;
        }
        if let Some(k) = self.lookahead {
            induce.inference.lookahead = k;
        }
        match self.widen {
            Some(true) => induce.inference.widen = induce_rl::Widening::WhileImproving,
            Some(false) => induce.inference.widen = induce_rl::Widening::Fixed,
            None => {}
        }
        if let Some(t) = self.temperature {
            induce.inference.temperature = t;
        }
        if let Some(k) = self.iterations {
            *baselines = baselines.clone().with_iterations(k);
        }
        if let Some(k) = self.max_size {
            baselines.exact.max_size = k;
        }
        if let Some(n) = self.max_evaluations {
            baselines.exact.max_evaluations = n;
        }
        if let Some(k) = self.shortlist {
            baselines.greedy.shortlist = Some(k);
        }
        if let Some(a) = self.additions {
            *baselines = baselines.clone().with_additions(a);
        }
        if let Some(n) = self.feature_nodes {
            (
                baselines.greedy.feature_nodes,
                baselines.exact.feature_nodes,
                baselines.cf_gnnfeatures.feature_nodes,
            ) = (n, n, n);
        }
        if let Some(k) = self.feature_quantiles {
            (
                baselines.greedy.feature_quantiles,
                baselines.exact.feature_quantiles,
            ) = (k, k);
        }
    }

    /// The options `variant` sets ([`Variant::options`]), typed and checked as a run's are.
    ///
    /// ```
    /// use induce::run::RunOptions;
    /// let v = "greedy:shortlist=64".parse().unwrap();
    /// assert_eq!(RunOptions::of_variant(&v).unwrap().shortlist, Some(64));
    /// let bad = "greedy:shortlist=many".parse().unwrap();
    /// assert!(RunOptions::of_variant(&bad).unwrap_err().to_string().contains("greedy:shortlist"));
    /// ```
    pub fn of_variant(variant: &Variant) -> crate::Result<RunOptions> {
        let fields: serde_json::Map<String, serde_json::Value> =
            variant.options().iter().cloned().collect();
        serde_json::from_value(serde_json::Value::Object(fields)).map_err(|e| {
            crate::Error::InvalidValue {
                what: "method variant",
                value: variant.label(),
                reason: e.to_string(),
            }
        })
    }

    /// The explain job these settings give for `data` (its name chooses the family unless
    /// [`RunOptions::family`] does), the black box at `black_box` (a PyG model with `arch`), an
    /// optional trained `policy`, `methods` and `targets`. Validated when run.
    pub fn explain_job(
        &self,
        data: &str,
        black_box: impl Into<PathBuf>,
        arch: Option<PathBuf>,
        policy: Option<PathBuf>,
        methods: &[impl Clone + Into<Variant>],
        targets: TargetSpec,
    ) -> ExplainJob {
        let seed = self.seed();
        let mut job = ExplainJob::new(data, black_box, methods).with_family(self.family);
        job.arch = arch;
        job.policy = policy;
        job.targets = targets;
        job.filter = self.filter();
        job.restrictions = Restrictions {
            edits: self.edits,
            allowed: None,
            locked: induce_explain::Locked::new(
                self.lock_nodes.clone().unwrap_or_default(),
                self.lock_edges.clone().unwrap_or_default(),
            ),
            goal: induce_explain::Goal::to_class(self.to_class),
            budget: self.budget,
            locked_features: self.lock_features.clone().unwrap_or_default(),
        };
        job.seed = seed;
        job.induce.seed = seed;
        job.baselines = job.baselines.clone().with_seed(seed);
        job.threads = self.threads.unwrap_or(0);
        // The run's defaults of the inference settings, then every option methods read.
        job.induce.inference.samples = DEFAULT_SAMPLES;
        (job.induce.train.greedy_every, job.induce.inference.batch) = (0, 1);
        self.apply_method_options(
            &mut job.induce,
            &mut job.baselines,
            &mut job.restrictions.budget,
        );
        job.black_box_kernel = self.black_box_kernel;
        // The worker threads are not part of the job (results do not depend on them).
        job.chosen = (self.chosen().into_iter())
            .filter(|o| o != "threads")
            .collect();
        let b = &mut job.baselines;
        if let Some(h) = self.hops {
            (b.greedy.hops, b.exact.hops) = (h, h);
        }
        self.apply_induce(&mut job.induce);
        job.protocol =
            Protocol::exact(job.induce.env.hops).with_paper_faithful(self.paper_faithful);
        job
    }

    /// The train job these settings give (see [`RunOptions::explain_job`]); the edit types
    /// are the trained policy's own. Without [`RunOptions::paper_faithful`] or
    /// [`RunOptions::training`] = REINFORCE it starts from the recommended recipe
    /// ([`InduceConfig::recommended`](induce_rl::InduceConfig::recommended): imitation of the
    /// greedy search, the estimated state where the black box has gradients, else the targeted
    /// one); with [`RunOptions::paper_faithful`] it trains as the paper does: REINFORCE, the
    /// paper's state, and the episodes' verdicts on the frozen neighbourhood.
    ///
    /// With `feat` in [`RunOptions::edits`] the policy learns feature actions too
    /// ([`induce_rl::FeatureActions`], `feat` alone: only them), which need the estimated state.
    ///
    /// The training-only options ([`crate::methods::TRAINING_SETTINGS`]) apply here, and an
    /// explain job refuses them:
    ///
    /// ```
    /// use induce::run::RunOptions;
    /// use induce::{Method, TargetSpec};
    /// let o = RunOptions { seed: Some(7), sample: Some(1800), max_judged: Some(512),
    ///     ..RunOptions::default() };
    /// let job = o.train_job("cora", "bb.bpk", None, TargetSpec::Train).unwrap();
    /// let sample = job.sample.unwrap();
    /// assert_eq!((sample.size, sample.seed), (1800, 7));
    /// assert_eq!(job.induce.train.imitation.max_judged, 512);
    /// // max_judged sets imitation: REINFORCE refuses it.
    /// let paper = RunOptions { paper_faithful: true, ..o.clone() };
    /// let e = paper.train_job("cora", "bb.bpk", None, TargetSpec::Train).unwrap_err();
    /// assert!(e.to_string().contains("RunOptions.max_judged"), "{e}");
    /// // Explaining trains no policy.
    /// let e = o.explain_job("cora", "bb.bpk", None, None, &[Method::GREEDY], TargetSpec::Test)
    ///     .validate().unwrap_err();
    /// assert!(e.to_string().contains("RunOptions.max_judged"), "{e}");
    /// ```
    pub fn train_job(
        &self,
        data: &str,
        black_box: impl Into<PathBuf>,
        arch: Option<PathBuf>,
        targets: TargetSpec,
    ) -> crate::Result<TrainJob> {
        let feat = self.edits.is_some_and(|e| e.feat);
        let feature_flag = [
            ("--lock-features", self.lock_features.is_some()),
            ("--feature-nodes", self.feature_nodes.is_some()),
            ("--feature-quantiles", self.feature_quantiles.is_some()),
        ]
        .into_iter()
        .find(|&(_, given)| given && !feat);
        if let Some((flag, _)) = feature_flag {
            return Err(crate::Error::InvalidValue {
                what: "setting",
                value: flag.into(),
                reason: "it says how the policy edits features, and it learns none: add feat to \
                         --edits (--edits add,del,feat)"
                    .into(),
            });
        }
        let mut job = TrainJob::new(data, black_box).with_family(self.family);
        job.arch = arch;
        job.targets = targets;
        job.filter = self.filter();
        if self.paper_faithful {
            job.induce = job.induce.clone().paper_faithful();
        }
        let paper = self.paper_faithful || self.training == Some(induce_rl::Training::Reinforce);
        if !paper {
            // The recommended recipe (InduceConfig::recommended); the options below override it.
            job.induce = job.induce.clone().recommended();
            job.state_auto = self.state.is_none();
        }
        self.apply_induce(&mut job.induce);
        if let Some(t) = self.training {
            job.induce.train.method = t;
        }
        if let Some(size) = self.sample {
            job.sample = Some(crate::run::Sample {
                size,
                seed: self.seed(),
            });
        }
        if let Some(n) = self.max_judged {
            if job.induce.train.method != induce_rl::Training::Imitation {
                return Err(crate::Error::InvalidValue {
                    what: "setting",
                    value: "RunOptions.max_judged".into(),
                    reason: "it sets how imitation trains, and this training is REINFORCE: \
                             train with imitation (RunOptions.training)"
                        .into(),
                });
            }
            job.induce.train.imitation.max_judged = n;
        }
        if let Some(mode) = self.edits.and_then(|e| e.edges()) {
            job.induce.env.mode = mode;
        }
        if let Some(e) = self.edits.filter(|e| e.feat) {
            // Feature actions, with the searches' settings of them.
            job.induce.env.features = Some(induce_rl::FeatureActions {
                nodes: self.feature_nodes.unwrap_or_default(),
                locked: self.lock_features.clone().unwrap_or_default(),
                quantiles: (self.feature_quantiles)
                    .unwrap_or(induce_baselines::features::DEFAULT_FEATURE_QUANTILES),
                only: e.edges().is_none(),
            });
        }
        Ok(job)
    }
}
