//! One way to run a set of methods: from a [`Method`] and the run's inputs to a ready
//! [`Explainer`] with its settings, training time and notes. `induce explain`
//! ([`crate::run`]), the dataset experiments ([`crate::experiment`]) and the quality study
//! ([`crate::quality`]) all go through [`MethodSet::prepare`]; [`method_config`] is the one place
//! a run's settings are merged over a trained policy's, and [`policy_file_name`] the one name of
//! each policy file.
//!
//! ```
//! use induce::methods::{MethodSet, MethodSettings, Policies};
//! use induce::{Method, Preset, TargetSpec, default_device};
//! # fn main() -> induce::Result<()> {
//! let device = default_device()?;
//! let data = induce::run::load_data("tree-cycles", None, 42)?;
//! let (d, c) = (data.graph.features().dim(), data.graph.num_classes());
//! let cfg = induce::models::GcnTrainingConfig::new(induce::models::GcnConfig::new(d, c))
//!     .with_epochs(50);
//! let (gcn, _) = induce::models::train_gcn(&data, &cfg, &device)?;
//! let bb = induce::models::gcn_black_box(&gcn, induce::rl::Kernel::Host, &device)?;
//! let settings = MethodSettings::for_family(Preset::Trees, 42);
//! let mut set = MethodSet::new(&data, bb.as_ref(), settings, Policies::Absent, &device);
//! let random = set.prepare(Method::RANDOM)?;
//! assert_eq!(random.explainer.name(), "random");
//! assert!(set.prepare(Method::INDUCTIVE).is_err()); // no policy to load or train
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use induce_explain::pipeline::{
    EvalContext, ExplainOptions, Journal, MethodRun, NoProgress, Progress,
    explain_targets_journaled,
};
use induce_explain::{Explainer, Protocol, Verdict};
use induce_graph::{Dataset, k_hop};
use induce_models::{BlackBox, Policy};
use induce_rl::{EditMode, InduceConfig, PolicyMeta, save_policy};

use super::{
    BaselineConfig, Build, Describe, Method, Preset, Restrictions, Schedule, load_trained_policy,
};
use crate::error::{Error, Result};

/// The settings a run gives its methods.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodSettings {
    /// The run's protocol, one value for every method: its verdicts and minimality pass go to
    /// each method as it is built (over the InduCE configurations' own `env.verdict` and
    /// `minimise`, a loaded policy's too), and its radius is where targets are chosen and
    /// records measured.
    pub protocol: Protocol,
    /// InduCE's inductive settings: training (when policies are trained here) and inference
    /// (kernel, best-of-k samples, look-ahead, seed, fan-out). Its `env.hops` is InduCE's own
    /// radius (the neighbourhoods a policy trained here edits).
    pub induce: InduceConfig,
    /// The per-target schedule of `transductive` and `inductive-fine-tuned` (episodes, γ,
    /// learning rate, greedy episodes) and the rest of `transductive`'s settings.
    pub transductive: InduceConfig,
    /// The baselines' settings.
    pub baselines: BaselineConfig,
    /// What the run restricts its methods to (edit types, allowed pairs, locks, a desired
    /// class, the edit budget): InduCE's methods take each over a loaded policy's own
    /// ([`method_config`]), the searches the locks, the class and greedy the budget; jobs refuse
    /// a method that would ignore one.
    pub restrictions: Restrictions,
}

impl MethodSettings {
    /// The paper's settings for `family` (its episodes, γ 0.4 inductive and 0.6 transductive,
    /// the baselines' authors' settings), seeded with `seed`.
    pub fn for_family(family: Preset, seed: u64) -> Self {
        Self::for_dataset(family, "", seed)
    }

    /// [`MethodSettings::for_family`] where the dataset's `name` refines the baselines' settings
    /// ([`BaselineConfig::for_family`]: PGExplainer's Tree-Grid settings).
    pub fn for_dataset(family: Preset, name: &str, seed: u64) -> Self {
        let induce = family.inductive(seed);
        Self::new(
            Protocol::exact(induce.env.hops),
            induce,
            family.transductive(seed),
            BaselineConfig::for_family(family, name, seed),
        )
    }

    /// The run's `protocol` with these methods' settings, unrestricted: no edit-type, pair or
    /// lock restriction, any other class, each configuration's own budget.
    pub fn new(
        protocol: Protocol,
        induce: InduceConfig,
        transductive: InduceConfig,
        baselines: BaselineConfig,
    ) -> Self {
        Self {
            protocol,
            induce,
            transductive,
            baselines,
            restrictions: Restrictions::default(),
        }
    }

    /// The same settings for every InduCE method with `config` (`induce explain`: one
    /// configuration for the transductive schedule and the inference settings).
    pub fn with_induce(mut self, config: InduceConfig) -> Self {
        self.transductive = config.clone();
        self.induce = config;
        self
    }
}

pub use crate::methods::policy_file_name;

/// The InduCE configuration `method` runs with: the one place a run's settings are merged.
///
/// * `trained`: the settings a loaded policy was trained with (its checkpoint's), or `None` when
///   the policy is trained by the run itself (with `settings.induce`).
/// * A loaded policy keeps its training settings (network, environment, reward) and takes the
///   run's inference settings: kernel, best-of-k samples, look-ahead, seed, fan-out and
///   neighbourhood cap.
/// * Every method takes the run's protocol (`settings.protocol`): its verdicts and minimality
///   pass.
/// * `transductive` runs `settings.transductive`; `inductive-fine-tuned` fine-tunes with its
///   schedule (episodes, γ, learning rate, greedy episodes).
/// * `settings.restrictions`' edits, allowed pairs and locks restrict every InduCE method, its budget sets
///   every InduCE method's edit budget; `inductive-del-only` always deletes only.
pub fn method_config(
    method: Method,
    trained: Option<&InduceConfig>,
    settings: &MethodSettings,
) -> InduceConfig {
    let run = &settings.induce;
    let schedule = method.decl().schedule;
    let mut c = match (schedule, trained) {
        (Schedule::PerTarget, _) => settings.transductive.clone(),
        (_, Some(t)) => {
            let mut c = t.clone();
            c.kernel = run.kernel;
            c.inference = run.inference.clone();
            c.seed = run.seed;
            c.env.fanout = run.env.fanout;
            c.env.max_nodes = run.env.max_nodes;
            c
        }
        (_, None) => run.clone(),
    };
    if schedule == Schedule::FineTune {
        let s = &settings.transductive;
        c.train.episodes = s.train.episodes;
        c.train.gamma = s.train.gamma;
        c.train.lr = s.train.lr;
        c.train.greedy_every = s.train.greedy_every;
    }
    let r = &settings.restrictions;
    if let Some(mode) = r.edits.and_then(|e| e.edges()) {
        c.env.mode = mode;
    }
    if let Some(e) = r.edits {
        // Feature actions as asked (a loaded policy's own without --edits).
        let greedy = &settings.baselines.greedy;
        c.env.features = e.feat.then(|| induce_rl::FeatureActions {
            nodes: greedy.feature_nodes,
            locked: r.locked_features.clone(),
            quantiles: greedy.feature_quantiles,
            only: e.edges().is_none(),
        });
    }
    if r.allowed.is_some() {
        c.env.allowed = r.allowed.clone();
    }
    if !r.locked.is_empty() {
        c.env.locked = r.locked.clone();
    }
    c.env.goal = r.goal;
    if let Some(b) = r.budget {
        c.env.budget = b;
    }
    if let Some(mode) = method.edit_mode() {
        c.env.mode = mode;
    }
    c.env.verdict = settings.protocol.verdict;
    c.minimise = settings.protocol.minimise;
    c
}

/// Where the methods that need a trained policy get it.
#[derive(Clone, Copy)]
pub enum Policies<'p> {
    /// Loaded from a policy file or the directory `induce train` wrote
    /// ([`crate::methods::policy_path`]).
    Load(&'p Path),
    /// Trained here with [`MethodSettings::induce`] on `targets` (a deletion-only policy on
    /// those with an edge to delete), once per edit mode and verdicts, and saved into
    /// `save_dir` as [`policy_file_name`] when given.
    Train {
        /// The training targets.
        targets: &'p [u32],
        /// Where to save each trained policy.
        save_dir: Option<&'p Path>,
    },
    /// None: the methods that need one are an error.
    Absent,
}

/// A method ready to run: its explainer and what its results record beside it.
pub struct PreparedMethod<'a> {
    /// The method.
    pub method: Method,
    /// The name of its rows: the method's, or its variant's label (`greedy:shortlist=64`).
    pub label: String,
    /// Its explainer.
    pub explainer: Box<dyn Explainer + 'a>,
    /// The InduCE configuration it runs with (`None` for a baseline).
    pub induce: Option<InduceConfig>,
    /// Training time: the policy's (trained here, or read from a loaded policy's
    /// `train.json` or `train-del-only.json`), or the baseline's construction (PGExplainer trains then).
    pub train_seconds: f64,
    /// What the run's notes say about it.
    pub notes: Vec<String>,
}

impl PreparedMethod<'_> {
    /// Explains `targets` (judged in `ctx`, built with the run's protocol), recording progress
    /// in `journal` when given, and returns the run with its training time and notes.
    pub fn explain(
        &self,
        ctx: &EvalContext<'_>,
        targets: &[u32],
        opts: &ExplainOptions<'_>,
        journal: Option<&Journal>,
    ) -> Result<MethodRun> {
        let mut j = journal.map(|j| j.method(&self.label)).transpose()?;
        let mut run =
            explain_targets_journaled(self.explainer.as_ref(), ctx, targets, opts, j.as_mut())?;
        run.train_seconds = self.train_seconds;
        run.notes.extend(self.notes.iter().cloned());
        Ok(run)
    }
}

/// A variant's explainer: its method's, named with the variant's label, so that its records,
/// its row and its journal carry the label.
struct Labelled<'a> {
    label: String,
    inner: Box<dyn Explainer + 'a>,
}

impl Explainer for Labelled<'_> {
    fn name(&self) -> &str {
        &self.label
    }

    fn explain(
        &self,
        graph: &induce_graph::Graph,
        target: u32,
    ) -> induce_explain::Result<induce_explain::Explanation> {
        self.inner.explain(graph, target)
    }

    fn batch_size(&self) -> usize {
        self.inner.batch_size()
    }

    fn neighbourhood_hops(&self) -> Option<u32> {
        self.inner.neighbourhood_hops()
    }

    fn explain_batch(
        &self,
        graph: &induce_graph::Graph,
        targets: &[u32],
        threads: usize,
    ) -> Vec<induce_explain::Result<induce_explain::Explanation>> {
        self.inner.explain_batch(graph, targets, threads)
    }
}

/// A policy the set loaded or trained, shared by the methods that use it.
struct Cached {
    /// The file it came from, or the edit mode and verdicts it was trained for.
    key: (Option<PathBuf>, EditMode, Verdict),
    policy: Policy,
    trained: InduceConfig,
    seconds: Option<f64>,
}

/// The methods of one run over one dataset and black box (see the [module docs](crate::methods)).
pub struct MethodSet<'a> {
    data: &'a Dataset,
    black_box: &'a dyn BlackBox,
    settings: MethodSettings,
    policies: Policies<'a>,
    baseline_targets: Vec<u32>,
    device: Device,
    progress: &'a dyn Progress,
    cache: Vec<Cached>,
}

impl<'a> MethodSet<'a> {
    /// The methods on `data` through `black_box` (any [`BlackBox`]; the gradient-based
    /// baselines need [`BlackBox::differentiable`]), with `settings` and `policies`.
    pub fn new(
        data: &'a Dataset,
        black_box: &'a dyn BlackBox,
        settings: MethodSettings,
        policies: Policies<'a>,
        device: &Device,
    ) -> Self {
        Self {
            data,
            black_box,
            settings,
            policies,
            baseline_targets: Vec::new(),
            device: device.clone(),
            progress: &NoProgress,
            cache: Vec::new(),
        }
    }

    /// The nodes PGExplainer trains on (see [`crate::run::training_targets`]).
    pub fn with_baseline_targets(mut self, targets: Vec<u32>) -> Self {
        self.baseline_targets = targets;
        self
    }

    /// [`MethodSet::with_baseline_targets`] on a set in use (targets known after the policies
    /// were loaded).
    pub fn set_baseline_targets(&mut self, targets: Vec<u32>) {
        self.baseline_targets = targets;
    }

    /// Reports policy training to `progress`.
    pub fn with_progress(mut self, progress: &'a dyn Progress) -> Self {
        self.progress = progress;
        self
    }

    /// The run's settings.
    pub fn settings(&self) -> &MethodSettings {
        &self.settings
    }

    /// Builds `variant`: its method with the run's settings, or with `settings` (the variant's
    /// own, [`RunOptions::apply_method_options`](crate::run::RunOptions::apply_method_options)
    /// over the run's) when given; its rows are labelled with the variant's label.
    pub fn prepare_variant(
        &mut self,
        variant: &super::Variant,
        settings: Option<&MethodSettings>,
    ) -> Result<PreparedMethod<'a>> {
        let mut prepared = match settings {
            None => self.prepare(variant.method())?,
            Some(s) => {
                let run = std::mem::replace(&mut self.settings, s.clone());
                let prepared = self.prepare(variant.method());
                self.settings = run;
                prepared?
            }
        };
        if !variant.is_plain() {
            let label = variant.label();
            prepared.explainer = Box::new(Labelled {
                label: label.clone(),
                inner: prepared.explainer,
            });
            prepared.label = label;
        }
        Ok(prepared)
    }

    /// Builds `method`: a baseline with its settings (PGExplainer trained here), an InduCE method
    /// with [`method_config`] and its policy (loaded or trained once per edit mode and verdicts,
    /// then shared).
    pub fn prepare(&mut self, method: Method) -> Result<PreparedMethod<'a>> {
        if method.is_baseline() {
            // The searches keep the run's locked nodes and pairs (the others are refused).
            let mut b = self.settings.baselines.clone();
            let r = &self.settings.restrictions;
            b.greedy.locked = r.locked.clone();
            if let Some(e) = r.edits {
                (b.greedy.edges, b.greedy.features) = (e.edges().is_some(), e.feat);
                (b.exact.edges, b.exact.features) = (e.edges().is_some(), e.feat);
            }
            b.greedy.locked_features = r.locked_features.clone();
            b.exact.locked_features = r.locked_features.clone();
            b.cf_gnnfeatures.locked_features = r.locked_features.clone();
            b.exact.locked = r.locked.clone();
            (b.greedy.goal, b.exact.goal) = (r.goal, r.goal);
            if let Some(k) = r.budget {
                b.greedy.budget = k;
            }
            let b = &b;
            if method.needs_training_targets() {
                self.progress.message(&format!(
                    "training {method} on {} targets",
                    self.baseline_targets.len()
                ));
            }
            let (e, secs) = induce_rl::timed(|| {
                method.build(&Build {
                    method,
                    data: self.data,
                    black_box: self.black_box,
                    policy: None,
                    induce: &self.settings.induce,
                    baselines: b,
                    protocol: self.settings.protocol,
                    train_targets: &self.baseline_targets,
                    device: &self.device,
                })
            });
            let explainer = e?;
            let notes = (method.describe(&Describe {
                induce: None,
                baselines: b,
                protocol: self.settings.protocol,
                train_targets: self.baseline_targets.len(),
                searched_hops: explainer.neighbourhood_hops(),
            }))
            .into_iter()
            .collect();
            return Ok(PreparedMethod {
                method,
                label: method.name().to_string(),
                explainer,
                induce: None,
                train_seconds: secs,
                notes,
            });
        }
        let (policy, config, seconds, loaded) = match method.needs_policy() {
            true => {
                let (p, config, secs, loaded) = self.policy(method)?;
                (Some(p), config, secs, loaded)
            }
            false => (
                None,
                method_config(method, None, &self.settings),
                None,
                false,
            ),
        };
        let e = method.build(&Build {
            method,
            data: self.data,
            black_box: self.black_box,
            policy: policy.as_ref(),
            induce: &config,
            baselines: &self.settings.baselines,
            protocol: self.settings.protocol,
            train_targets: &self.baseline_targets,
            device: &self.device,
        })?;
        let mut notes: Vec<String> = (method.describe(&Describe {
            induce: Some(&config),
            baselines: &self.settings.baselines,
            protocol: self.settings.protocol,
            train_targets: self.baseline_targets.len(),
            searched_hops: e.neighbourhood_hops(),
        }))
        .into_iter()
        .collect();
        if loaded {
            let report = crate::run::train_report_name(config.env.mode);
            notes.push(match seconds {
                Some(_) => format!("train s: the loaded policy's training time, from its {report}"),
                None => format!(
                    "train s: the policy was loaded without a {report} beside it; its \
                     training time is unknown (0 shown)"
                ),
            });
            let run = self.settings.protocol.radius;
            if config.env.hops != run {
                notes.push(format!(
                    "the loaded policy explains on the {}-hop neighbourhoods it was trained on \
                     (the run's radius: {run}); its sparsity is counted there",
                    config.env.hops
                ));
            }
        }
        Ok(PreparedMethod {
            method,
            label: method.name().to_string(),
            explainer: e,
            induce: Some(config),
            train_seconds: seconds.unwrap_or(0.0),
            notes,
        })
    }

    /// The policy `method` explains with and its configuration: loaded (checked against the
    /// run's hops) or trained, once per file or per edit mode and verdicts. The last element is
    /// true for a loaded policy.
    fn policy(&mut self, method: Method) -> Result<(Policy, InduceConfig, Option<f64>, bool)> {
        let bb = self.black_box;
        match self.policies {
            Policies::Absent => Err(Error::InvalidValue {
                what: "method",
                value: method.name().into(),
                reason: "needs a trained policy (ExplainJob.policy: a policy file or the \
                         directory `induce train` wrote)"
                    .into(),
            }),
            Policies::Load(path) => {
                let file = crate::methods::policy_path(path, method);
                let key = (Some(file.clone()), EditMode::Both, Verdict::Exact);
                let cached = match self.cache.iter().position(|c| c.key == key) {
                    Some(i) => i,
                    None => {
                        let (p, meta) =
                            load_trained_policy(path, method, self.data, bb, &self.device)?;
                        let seconds = policy_train_seconds(path, method);
                        self.cache.push(Cached {
                            key,
                            policy: p,
                            trained: meta.induce,
                            seconds,
                        });
                        self.cache.len() - 1
                    }
                };
                // A loaded policy works on the neighbourhoods it was trained on (its own hops,
                // as `--hops` says), whatever the run's radius; its records are measured there.
                let c = &self.cache[cached];
                let config = method_config(method, Some(&c.trained), &self.settings);
                Ok((c.policy.clone(), config, c.seconds, true))
            }
            Policies::Train { targets, save_dir } => {
                let config = method_config(method, None, &self.settings);
                // One policy per edit mode (and verdicts), whatever the method's per-target
                // schedule: `inductive`, `inductive-best-of-k` and `inductive-fine-tuned` share it.
                let mut training = method_config(Method::INDUCTIVE, None, &self.settings);
                training.env.mode = config.env.mode;
                training.env.features.clone_from(&config.env.features);
                let key = (None, training.env.mode, training.env.verdict);
                if let Some(c) = self.cache.iter().find(|c| c.key == key) {
                    return Ok((c.policy.clone(), config, c.seconds, false));
                }
                let data = self.data;
                let hops = training.env.hops;
                let targets: Vec<u32> = match training.env.mode {
                    // Deletion-only training needs targets with at least one edge to delete.
                    EditMode::DeleteOnly => targets
                        .iter()
                        .copied()
                        .filter(|&t| k_hop(&data.graph, t, hops).is_ok_and(|s| s.num_edges() > 0))
                        .collect(),
                    _ => targets.to_vec(),
                };
                let task = format!("train {method}");
                let (p, _, secs) = crate::run::train_reporting(
                    &data.graph,
                    bb,
                    &targets,
                    &training,
                    &self.device,
                    self.progress,
                    &task,
                )?;
                if let Some(dir) = save_dir {
                    let meta = PolicyMeta {
                        feature_dim: data.graph.features().dim(),
                        num_classes: bb.num_classes(),
                        induce: training.clone(),
                    };
                    save_policy(&p, &meta, dir.join(policy_file_name(training.env.mode)))?;
                }
                self.cache.push(Cached {
                    key,
                    policy: p.clone(),
                    trained: training,
                    seconds: Some(secs),
                });
                Ok((p, config, Some(secs), false))
            }
        }
    }
}

/// The training time `induce train` recorded in the report beside the policy `method`
/// ([`crate::run::train_report_name`]; `train.json` for a deletion-only policy before that)
/// loads from `path` (a policy file or the directory `induce train` wrote), when that file
/// describes the same policy (deletion-only or not); `None` otherwise.
fn policy_train_seconds(path: &Path, method: Method) -> Option<f64> {
    let file = crate::methods::policy_path(path, method);
    let dir = file.parent()?;
    // `train-del-only.json` beside a deletion-only policy; `train.json` (checked below) before.
    let json = (method == Method::INDUCTIVE_DEL_ONLY)
        .then(|| std::fs::read(dir.join("train-del-only.json")).ok())
        .flatten()
        .or_else(|| std::fs::read(dir.join("train.json")).ok())?;
    let v: serde_json::Value = serde_json::from_slice(&json).ok()?;
    let del_only = v["job"]["induce"]["env"]["mode"] == "delete_only";
    (del_only == (method == Method::INDUCTIVE_DEL_ONLY))
        .then(|| v["outcome"]["seconds"].as_f64())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_policies_keep_their_training_time_in_one_directory() {
        let dir = tempfile::tempdir().unwrap();
        let report = |mode: &str, secs: f64| {
            serde_json::to_vec(&serde_json::json!({
                "job": {"induce": {"env": {"mode": mode}}}, "outcome": {"seconds": secs}
            }))
            .unwrap()
        };
        std::fs::write(dir.path().join("train.json"), report("both", 1.5)).unwrap();
        let del = || policy_train_seconds(dir.path(), Method::INDUCTIVE_DEL_ONLY);
        // Before the deletion-only report existed, train.json described the other policy.
        assert_eq!(del(), None);
        let name = crate::run::train_report_name(induce_rl::EditMode::DeleteOnly);
        std::fs::write(dir.path().join(name), report("delete_only", 0.25)).unwrap();
        assert_eq!(
            policy_train_seconds(dir.path(), Method::INDUCTIVE),
            Some(1.5)
        );
        assert_eq!(del(), Some(0.25));
    }

    #[test]
    fn one_merge_of_a_run_over_a_policy() {
        let mut settings = MethodSettings::for_family(Preset::Trees, 7);
        settings.induce.kernel = induce_rl::Kernel::Burn;
        // Ignored: the run's protocol gives every method its verdicts and minimality pass.
        settings.induce.minimise = true;
        settings.protocol = Protocol::paper(4);
        settings.induce.inference.samples = 5;
        settings.induce.inference.lookahead = 4;
        settings.induce.inference.widen = induce_rl::Widening::WhileImproving;
        settings.transductive.train.episodes = 9;
        settings.transductive.train.lr = 0.5;
        settings.transductive.train.greedy_every = 3;
        // A checkpoint trained elsewhere: other seed, hops kept, another γ and width.
        let mut trained = InduceConfig {
            seed: 1,
            ..InduceConfig::default()
        };
        trained.train.gamma = 0.3;
        trained.network.hidden = 8;
        trained.env.budget = 5;
        let c = method_config(Method::INDUCTIVE_BEST_OF_K, Some(&trained), &settings);
        // Training settings from the checkpoint, inference settings from the run.
        assert_eq!((c.train.gamma, c.network.hidden, c.seed), (0.3, 8, 7));
        assert_eq!(
            (
                c.kernel,
                c.minimise,
                c.inference.samples,
                c.inference.lookahead
            ),
            (induce_rl::Kernel::Burn, false, 5, 4)
        );
        assert_eq!(c.inference.widen, induce_rl::Widening::WhileImproving);
        assert_eq!(c.train.episodes, trained.train.episodes);
        for m in [Method::INDUCTIVE, Method::TRANSDUCTIVE, Method::UNTRAINED] {
            for t in [Some(&trained), None] {
                let c = method_config(m, t, &settings);
                assert_eq!((c.env.verdict, c.minimise), (Verdict::Neighbourhood, false));
            }
        }
        // The policy's own edit budget unless the run gives one (`--budget`).
        assert_eq!(c.env.budget, 5);
        let mut run_budget = settings.clone();
        run_budget.restrictions.budget = Some(3);
        for m in [Method::INDUCTIVE, Method::TRANSDUCTIVE, Method::UNTRAINED] {
            assert_eq!(method_config(m, Some(&trained), &run_budget).env.budget, 3);
        }
        // Fine-tuning follows the run's schedule; deletion-only always deletes only.
        let f = method_config(Method::INDUCTIVE_FINE_TUNED, Some(&trained), &settings);
        assert_eq!(
            (f.train.episodes, f.train.lr, f.train.greedy_every),
            (9, 0.5, 3)
        );
        assert_eq!(f.train.gamma, settings.transductive.train.gamma);
        let d = method_config(Method::INDUCTIVE_DEL_ONLY, Some(&trained), &settings);
        assert_eq!(d.env.mode, EditMode::DeleteOnly);
        // `transductive` runs the schedule; `--edits` and `--allowed` restrict every InduCE method.
        settings.restrictions.edits = Some(EditMode::AddOnly.into());
        settings.restrictions.allowed = Some(vec![(0, 1)]);
        let t = method_config(Method::TRANSDUCTIVE, None, &settings);
        assert_eq!((t.train.episodes, t.env.mode), (9, EditMode::AddOnly));
        assert_eq!(t.env.allowed, Some(vec![(0, 1)]));
        let d = method_config(Method::INDUCTIVE_DEL_ONLY, None, &settings);
        assert_eq!(d.env.mode, EditMode::DeleteOnly);
        assert_eq!(policy_file_name(d.env.mode), "policy-del-only.bpk");
    }
}
