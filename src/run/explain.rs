//! `induce explain` as a library job: [`ExplainJob`] (everything that defines a run, saved as
//! its `config.json`) and [`explain()`] (explain it, in memory or into a run directory with its
//! whole lifecycle: journal, resume, atomic write).

use std::path::{Path, PathBuf};

use induce_explain::Protocol;
use induce_explain::pipeline::{Journal, MethodRun, RunSummary, RunWriter, Shard, TargetSpec};
use induce_graph::io::DataFormat;
use induce_rl::{InduceConfig, Kernel};
use serde::{Deserialize, Serialize};

use super::RunContext;
use super::memory::{MemoryJob, explain_memory_core};
use super::{
    Sample, TargetFilter, data_stem, default_family, default_true, family_line, format_serde,
    load_data,
};
use crate::error::{Error, Result};
use crate::methods::{
    BaselineConfig, Family, Method, Preset, Restrictions, Variant, load_black_box_with_arch,
};
use crate::methods::{MethodSettings, Policies};
use burn::tensor::Device;

/// Everything that defines an `induce explain` run; saved as its `config.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainJob {
    /// The data (file, folder or built-in name).
    pub data: String,
    /// Its format (`None`: detected).
    #[serde(with = "format_serde")]
    pub format: Option<DataFormat>,
    /// The black box: the authors' `.safetensors`, a `.bpk` checkpoint or a run directory; with
    /// [`ExplainJob::arch`], a PyG model's `state_dict` in `.safetensors`.
    pub black_box: PathBuf,
    /// The architecture file of a PyG black box ([`crate::models::pyg::PygArch`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<PathBuf>,
    /// A trained policy (`.bpk` or the directory `induce train` wrote), for the inductive
    /// methods.
    pub policy: Option<PathBuf>,
    /// The methods, in order: each a method, or a variant with settings of its own
    /// (`greedy:shortlist=64`), a row of its own.
    pub methods: Vec<Variant>,
    /// Which nodes to explain.
    pub targets: TargetSpec,
    /// Keep only the paper's targets (non-zero label, predicted correctly) of a broad spec
    /// (`train`, `test`, `all`).
    #[serde(rename = "paper_filter")]
    pub filter: TargetFilter,
    /// Explain only a seeded random sample of the targets (before sharding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<Sample>,
    /// Explain only this shard of the targets.
    pub shard: Option<Shard>,
    /// What the run restricts its methods to (`--edits`, `--allowed`, `--lock-nodes`,
    /// `--lock-edges`, `--to-class`, `--budget`); its fields sit at the top level of
    /// `config.json`.
    #[serde(flatten)]
    pub restrictions: Restrictions,
    /// Seed of the run (generated data, policy initialisation, sampling).
    pub seed: u64,
    /// The hyper-parameter family whose settings `induce` and `baselines` start from
    /// ([`ExplainJob::with_family`]).
    #[serde(default = "default_family")]
    pub family: Preset,
    /// Whether `family` was guessed from the data's name (`--family auto`) rather than chosen.
    #[serde(default = "default_true")]
    pub family_guessed: bool,
    /// The run's protocol, given to every method (`--paper-faithful`: the paper's verdicts
    /// and no minimality pass; `--hops`: its radius). Recorded in `config.json`, where `induce`
    /// shows the verdicts and minimality pass it gives InduCE.
    pub protocol: Protocol,
    /// InduCE settings of the transductive and untrained methods (the trained ones take theirs
    /// from the checkpoint, apart from the inference settings of
    /// [`crate::methods::method_config`], `edits`, `allowed` and `budget`).
    pub induce: InduceConfig,
    /// The kernel of the black box's verdicts, when it differs from the policy's
    /// (`induce.kernel`): e.g. the policy on the GPU (`burn`, with batched targets) and the
    /// black box's incremental host kernel (`host`). `None`: the policy's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black_box_kernel: Option<Kernel>,
    /// The baselines' settings (their authors', per dataset family).
    #[serde(default)]
    pub baselines: BaselineConfig,
    /// The run options the user chose ([`RunOptions`](super::RunOptions) field names, set by
    /// [`RunOptions::explain_job`](super::RunOptions::explain_job)); every other setting is a
    /// default. Recorded in `config.json`; [`ExplainJob::validate`] refuses one that no method
    /// of the job reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chosen: Vec<String>,
    /// Worker threads (0: all cores). Results do not depend on it, so it is not saved in
    /// `config.json` (shards run with different thread counts merge).
    #[serde(skip)]
    pub threads: usize,
}

impl ExplainJob {
    /// A job with the paper's settings for the dataset family guessed from `data`'s name (see
    /// [`Preset::for_dataset`]; [`ExplainJob::with_family`] chooses another): transductive
    /// γ 0.6 and the family's episode cap, the paper's target filter, all cores.
    pub fn new(
        data: impl Into<String>,
        black_box: impl Into<PathBuf>,
        methods: &[impl Clone + Into<Variant>],
    ) -> Self {
        let data = data.into();
        let stem = data_stem(&data);
        let seed = induce_graph::DEFAULT_SEED;
        let family = Family::choose(None, &stem);
        let induce = family.preset.transductive(seed);
        Self {
            protocol: Protocol::exact(induce.env.hops),
            induce,
            black_box_kernel: None,
            baselines: BaselineConfig::for_family(family.preset, &stem, seed),
            family: family.preset,
            family_guessed: family.guessed,
            data,
            format: None,
            black_box: black_box.into(),
            arch: None,
            policy: None,
            methods: methods.iter().cloned().map(Into::into).collect(),
            targets: TargetSpec::Test,
            filter: TargetFilter::Paper,
            sample: None,
            shard: None,
            restrictions: Restrictions::default(),
            seed,
            chosen: Vec::new(),
            threads: 0,
        }
    }

    /// The same job in `family` (`None`: guessed from the data's name, as [`ExplainJob::new`]
    /// does): `induce` and `baselines` are reset to that family's settings with the job's seed,
    /// so call it before changing them.
    ///
    /// ```
    /// use induce::run::ExplainJob;
    /// use induce::{Method, Preset};
    /// let job = ExplainJob::new("runs/my-graph.npz", "gcn.safetensors", &[Method::TRANSDUCTIVE]);
    /// assert_eq!((job.family, job.family_guessed, job.induce.train.episodes), (Preset::Real, true, 80));
    /// let job = job.with_family(Some(Preset::Trees));
    /// assert_eq!((job.family, job.family_guessed, job.induce.train.episodes), (Preset::Trees, false, 500));
    /// ```
    pub fn with_family(mut self, family: Option<Preset>) -> Self {
        let stem = data_stem(&self.data);
        let f = Family::choose(family, &stem);
        self.family = f.preset;
        self.family_guessed = f.guessed;
        self.induce = f.preset.transductive(self.seed);
        self.protocol = Protocol::exact(self.induce.env.hops);
        self.baselines = BaselineConfig::for_family(f.preset, &stem, self.seed);
        self
    }

    /// The same job with the paths of its data, black box, architecture and policy made
    /// absolute (against the current directory) where they name something that exists: what a
    /// run directory's `config.json` records, so that `induce render` and `induce report`
    /// reopen the run from any directory. A built-in dataset name stays as it is.
    ///
    /// ```
    /// use induce::run::ExplainJob;
    /// use induce::Method;
    /// let job = ExplainJob::new("tree-cycles", "Cargo.toml", &[Method::TRANSDUCTIVE]);
    /// let abs = job.with_absolute_paths();
    /// assert_eq!(abs.data, "tree-cycles");
    /// assert!(abs.black_box.is_absolute() && abs.black_box.ends_with("Cargo.toml"));
    /// ```
    pub fn with_absolute_paths(&self) -> Self {
        let mut induce = self.induce.clone();
        // What the run gives InduCE (crate::methods::method_config), so that `induce` in
        // `config.json` says it.
        (induce.env.verdict, induce.minimise) = (self.protocol.verdict, self.protocol.minimise);
        Self {
            induce,
            // A path that is not valid UTF-8 stays as typed (a lossy spelling names no file).
            data: absolute(Path::new(&self.data))
                .to_str()
                .map_or_else(|| self.data.clone(), str::to_string),
            black_box: absolute(&self.black_box),
            arch: self.arch.as_deref().map(absolute),
            policy: self.policy.as_deref().map(absolute),
            ..self.clone()
        }
    }

    /// How the job's family was chosen, in one line ([`Family::describe`]).
    pub fn family_line(&self) -> String {
        family_line(&self.data, self.family, self.family_guessed)
    }

    /// Checks every setting before anything is loaded, naming the field at fault: the InduCE
    /// settings ([`InduceConfig::validate`], at least one episode), the baselines'
    /// ([`BaselineConfig::validate`]) and a non-empty method list. [`explain()`] calls it; a
    /// library user gets the error the command line prints.
    ///
    /// ```
    /// use induce::run::ExplainJob;
    /// use induce::Method;
    /// let mut job = ExplainJob::new("tree-cycles", "gcn.bpk", &[Method::TRANSDUCTIVE]);
    /// assert!(job.validate().is_ok());
    /// job.induce.train.lr = 0.0;
    /// assert!(job.validate().unwrap_err().to_string().contains("InduceConfig.lr"));
    ///
    /// // A restriction a method would ignore is refused, naming the method.
    /// use induce::rl::EditMode;
    /// let job = |methods: &[Method], edits: Option<EditMode>, allowed| {
    ///     let mut j = ExplainJob::new("tree-cycles", "gcn.bpk", methods);
    ///     (j.restrictions.edits, j.restrictions.allowed) = (edits.map(Into::into), allowed);
    ///     j.validate().map_err(|e| e.to_string())
    /// };
    /// let pairs = Some(vec![(0, 1)]);
    /// assert!(job(&[Method::TRANSDUCTIVE], Some(EditMode::AddOnly), pairs.clone()).is_ok());
    /// assert!(job(&[Method::RANDOM], None, pairs).unwrap_err().contains("random"));
    /// assert!(job(&[Method::RANDOM], Some(EditMode::DeleteOnly), None).is_ok());
    /// assert!(job(&[Method::CF2], Some(EditMode::AddOnly), None).unwrap_err().contains("cf2"));
    /// let del_only = job(&[Method::INDUCTIVE_DEL_ONLY], Some(EditMode::AddOnly), None);
    /// assert!(del_only.unwrap_err().contains("inductive-del-only"));
    /// let plus = job(&[Method::CF_GNNEXPLAINER_PLUS_PLUS], Some(EditMode::DeleteOnly), None);
    /// assert!(plus.unwrap_err().contains("cf-gnnexplainer++"));
    ///
    /// // Locked nodes and edges: InduCE's methods and the searches keep them, the rest refuse.
    /// let locked = |m: Method| {
    ///     let mut j = ExplainJob::new("tree-cycles", "gcn.bpk", &[m]);
    ///     j.restrictions.locked = induce::explain::Locked::new(vec![3], vec![(0, 1)]);
    ///     j.validate().map_err(|e| e.to_string())
    /// };
    /// assert!(locked(Method::TRANSDUCTIVE).is_ok() && locked(Method::EXACT).is_ok());
    /// assert!(locked(Method::CF_GNNEXPLAINER).unwrap_err().contains("locked nodes"));
    ///
    /// // Whose features a search flips means nothing without feature edits.
    /// let mut j = ExplainJob::new("tree-cycles", "gcn.bpk", &[Method::GREEDY]);
    /// j.baselines.greedy.feature_nodes = induce::baselines::FeatureNodes::Field;
    /// assert!(j.validate().unwrap_err().to_string().contains("--feature-nodes"));
    /// j.baselines.greedy.feature_nodes = induce::baselines::FeatureNodes::Target;
    /// j.baselines.greedy.feature_quantiles = 5;
    /// assert!(j.validate().unwrap_err().to_string().contains("--feature-quantiles 5"));
    /// j.restrictions.edits = Some("add,del,feat".parse().unwrap());
    /// assert!(j.validate().is_ok());
    /// ```
    pub fn validate(&self) -> Result<()> {
        if self.methods.is_empty() {
            return Err(Error::InvalidValue {
                what: "method list",
                value: String::new(),
                reason: "give at least one method".into(),
            });
        }
        crate::methods::check_distinct(&self.methods)?;
        let methods: Vec<Method> = self.methods.iter().map(Variant::method).collect();
        crate::methods::check_methods(&methods, &self.restrictions)?;
        let mut chosen = self.chosen.clone();
        if self.policy.is_some() && !chosen.iter().any(|c| c == "policy") {
            chosen.push("policy".into());
        }
        crate::methods::check_settings(&methods, &chosen)?;
        let b = &self.baselines;
        let field = [
            b.greedy.feature_nodes,
            b.exact.feature_nodes,
            b.cf_gnnfeatures.feature_nodes,
        ]
        .contains(&induce_baselines::FeatureNodes::Field);
        let quantiles = [b.greedy.feature_quantiles, b.exact.feature_quantiles]
            .into_iter()
            .find(|&k| k != induce_baselines::features::DEFAULT_FEATURE_QUANTILES);
        let feature_setting = match (field, quantiles) {
            (true, _) => Some("--feature-nodes field".to_string()),
            (false, Some(k)) => Some(format!("--feature-quantiles {k}")),
            (false, None) => None,
        };
        if let Some(value) = feature_setting
            && !self.restrictions.edits.is_some_and(|e| e.feat)
        {
            return Err(Error::InvalidValue {
                what: "setting",
                value,
                reason: "it says how a search edits features, and this run searches none: \
                         add feat to --edits (--edits add,del,feat)"
                    .into(),
            });
        }
        for v in self.methods.iter().filter(|v| !v.is_plain()) {
            super::RunOptions::of_variant(v)?;
        }
        self.induce.validate()?;
        if self.induce.train.episodes == 0 {
            return Err(induce_explain::ExplainError::InvalidConfig(
                "InduceConfig.episodes must be at least 1, got 0".into(),
            )
            .into());
        }
        self.baselines.validate()
    }
}

/// Runs an explain job, the one entry point of `induce explain` and of every program that
/// explains as it does: loads the data, the black box and (for the inductive methods) the
/// policy, unless [`RunContext::with_loaded`] hands data and a model already in memory;
/// checks everything before explaining anything; then explains the targets with every method.
/// Returns the summary and the per-method records.
///
/// With [`RunContext::with_out_dir`] it owns the run directory's whole lifecycle: everything is
/// checked (settings, data, black box, policies, targets) before the directory exists;
/// progress is journaled beside it (`.NAME.journal`) so that a killed run continues with
/// [`Resume::Continue`] (the result equals an uninterrupted run's; with [`Resume::Restart`] an
/// old journal is discarded); the directory (`config.json` = the job, `summary.json`,
/// `explanations.jsonl`) is written all at once, replacing an existing run.
///
/// [`Resume::Continue`]: super::Resume::Continue
/// [`Resume::Restart`]: super::Resume::Restart
pub fn explain(job: &ExplainJob, run: &RunContext<'_>) -> Result<(RunSummary, Vec<MethodRun>)> {
    job.validate()?;
    let Some((out, resume)) = run.out else {
        return explain_journaled(job, run, None);
    };
    let job = &job.with_absolute_paths();
    let writer = RunWriter::create(out)?;
    let config = serde_json::to_value(job).map_err(|e| Error::InvalidValue {
        what: "explain job",
        value: job.data.clone(),
        reason: e.to_string(),
    })?;
    let journal = Journal::open(out, &config, resume == super::Resume::Continue)?;
    let (summary, runs) = match explain_journaled(job, run, Some(&journal)) {
        Ok(r) => r,
        Err(e) => {
            journal.discard_if_empty()?;
            return Err(e);
        }
    };
    writer.finish(&config, &summary, &runs)?;
    journal.remove()?;
    Ok((summary, runs))
}

/// [`explain`] recording its progress in `journal`, if any, and skipping what an interrupted
/// run of the same job already explained.
fn explain_journaled(
    job: &ExplainJob,
    run: &RunContext<'_>,
    journal: Option<&Journal>,
) -> Result<(RunSummary, Vec<MethodRun>)> {
    let loaded;
    let (data, bb) = match run.loaded {
        Some(pair) => pair,
        None => {
            let data = load_data(&job.data, job.format, job.seed)?;
            let bb = load_black_box_with_arch(
                &job.black_box,
                job.arch.as_deref(),
                &data,
                job.black_box_kernel.unwrap_or(job.induce.kernel),
                run.device,
            )?;
            loaded = (data, bb);
            (&loaded.0, loaded.1.black_box.as_ref())
        }
    };
    let settings = MethodSettings {
        protocol: job.protocol,
        baselines: job.baselines.clone(),
        restrictions: job.restrictions.clone(),
        ..MethodSettings::for_family(job.family, job.seed)
    }
    .with_induce(job.induce.clone());
    let policies = match &job.policy {
        Some(path) => Policies::Load(path),
        None => Policies::Absent,
    };
    let memory = MemoryJob {
        methods: job.methods.clone(),
        settings,
        policies,
        targets: job.targets.clone(),
        filter: job.filter,
        sample: job.sample,
        shard: job.shard,
        seed: job.seed,
        threads: job.threads,
        ..MemoryJob::new(data, bb, &[] as &[Variant])
    };
    let family = job.family_line();
    explain_memory_core(
        &memory,
        run.device,
        run.progress,
        journal,
        Some(&family),
        run.notice,
    )
}

/// `p` against the current directory when it is relative and exists; as given otherwise (a
/// path the run reports missing keeps the spelling the user typed).
fn absolute(p: &Path) -> PathBuf {
    match p.is_relative() && p.exists() {
        true => std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()),
        false => p.to_path_buf(),
    }
}

/// What an in-memory run records as its `config.json`: the layout `induce explain` gives its
/// [`ExplainJob`], with the black box `null` (a run directory cannot hold a model in memory;
/// `induce::render::open_run_with` draws it) and `family` the one guessed from the data's name.
/// `induce` holds the transductive settings, as a file job's does; when the inductive settings
/// differ from them, an `inductive` entry holds those too.
fn memory_config(job: &MemoryJob<'_>) -> Result<serde_json::Value> {
    let s = &job.settings;
    let mut j = ExplainJob::new(job.data.name.clone(), PathBuf::new(), &job.methods);
    j.policy = match job.policies {
        Policies::Load(p) => Some(p.to_path_buf()),
        _ => None,
    };
    j.targets = job.targets.clone();
    j.filter = job.filter;
    (j.sample, j.shard, j.seed) = (job.sample, job.shard, job.seed);
    j.restrictions = s.restrictions.clone();
    j.protocol = s.protocol;
    j.baselines = s.baselines.clone();
    let inductive = ExplainJob {
        induce: s.induce.clone(),
        ..j.clone()
    }
    .with_absolute_paths()
    .induce;
    j.induce = s.transductive.clone();
    let j = j.with_absolute_paths();
    let bad = |e: serde_json::Error| Error::InvalidValue {
        what: "explain job",
        value: job.data.name.clone(),
        reason: e.to_string(),
    };
    let mut v = serde_json::to_value(&j).map_err(bad)?;
    v["black_box"] = serde_json::Value::Null;
    if inductive != j.induce {
        v["inductive"] = serde_json::to_value(&inductive).map_err(bad)?;
    }
    Ok(v)
}

/// Explains `job`'s targets with each of its methods; with `out`, writes the run directory
/// there as `induce explain` does (all at once: `config.json`, `summary.json`,
/// `explanations.jsonl`, a copy of the data as `data.npz` so `induce report` finds it, and
/// `report.html` drawn with the in-memory black box). Returns the summary and the per-method
/// records.
pub fn explain_in_memory(
    job: &MemoryJob<'_>,
    out: Option<&Path>,
    device: &Device,
) -> Result<(RunSummary, Vec<MethodRun>)> {
    let writer = out.map(RunWriter::create).transpose()?;
    let (summary, runs) = explain_memory_core(job, device, job.progress, None, None, &|_| {})?;
    if let (Some(w), Some(out)) = (writer, out) {
        let config = memory_config(job)?;
        induce_graph::io::save_npz(job.data, w.path().join("data.npz"))?;
        w.finish(&config, &summary, &runs)?;
        let hops = job.settings.protocol.radius;
        crate::render::write_run_report(out, job.data, job.black_box, hops)?;
    }
    Ok((summary, runs))
}
