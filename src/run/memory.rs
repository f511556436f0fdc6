//! Explaining data and a black box held in memory ([`MemoryJob`],
//! [`explain_in_memory`](super::explain_in_memory)): the
//! library counterpart of `induce explain` for a program that embeds the crates with its own
//! graph and model. `induce explain` itself loads its files and runs the same core.

use burn::tensor::Device;
use induce_explain::pipeline::{
    EvalContext, ExplainOptions, Journal, MethodRun, NoProgress, Progress, RunSummary, Shard,
    TargetSpec,
};
use induce_graph::Dataset;
use induce_models::{BlackBox, BoundBlackBox};

use super::{
    Sample, TargetFilter, resolve_targets_described, summary_for, threads, training_targets,
};
use crate::error::{Error, Result};
use crate::methods::{Family, Method, Variant};
use crate::methods::{MethodSet, MethodSettings, Policies};

/// An explain job on a dataset and a black box held in memory (any [`BlackBox`]: the paper's
/// GCN or your own model). [`MemoryJob::new`] gives the paper's settings for the family
/// guessed from the data's name; change the public fields as needed. The run's protocol
/// (verdicts, minimality pass, radius) is `settings.protocol`, given once to every method.
///
/// ```
/// use induce::run::{MemoryJob, explain_in_memory};
/// use induce::{Method, TargetSpec, default_device};
/// # fn main() -> induce::Result<()> {
/// let device = default_device()?;
/// let data = induce::run::load_data("tree-cycles", None, 42)?;
/// let (d, c) = (data.graph.features().dim(), data.graph.num_classes());
/// let cfg = induce::models::GcnTrainingConfig::new(induce::models::GcnConfig::new(d, c));
/// let (gcn, _) = induce::models::train_gcn(&data, &cfg.with_epochs(200), &device)?;
/// let bb = induce::models::GcnBlackBox::new(gcn, &device); // or your own BlackBox
/// let mut job = MemoryJob::new(&data, &bb, &[Method::RANDOM]);
/// job.targets = TargetSpec::List(vec![1, 2, 3]);
/// let out = std::env::temp_dir().join("induce-memory-doc");
/// let (summary, runs) = explain_in_memory(&job, Some(&out), &device)?;
/// assert_eq!(runs[0].records.len(), 3);
/// assert!(out.join("summary.json").exists() && out.join("data.npz").exists());
/// # let _ = summary; std::fs::remove_dir_all(out).ok();
/// # Ok(()) }
/// ```
pub struct MemoryJob<'a> {
    /// The data.
    pub data: &'a Dataset,
    /// The black box.
    pub black_box: &'a dyn BlackBox,
    /// The methods, in order: each a method, or a variant with settings of its own
    /// (`greedy:shortlist=64`), a row of its own.
    pub methods: Vec<Variant>,
    /// The methods' settings.
    pub settings: MethodSettings,
    /// Where the inductive methods get their policy.
    pub policies: Policies<'a>,
    /// Which nodes to explain.
    pub targets: TargetSpec,
    /// Which nodes of a broad spec to keep.
    pub filter: TargetFilter,
    /// Explain only a seeded random sample of the targets (before sharding).
    pub sample: Option<Sample>,
    /// Explain only this shard of the targets.
    pub shard: Option<Shard>,
    /// Seed of the run.
    pub seed: u64,
    /// Worker threads (0: all cores); results do not depend on it.
    pub threads: usize,
    /// Reports progress.
    pub progress: &'a dyn Progress,
}

impl<'a> MemoryJob<'a> {
    /// The paper's settings for the family guessed from `data.name` (transductive γ 0.6, the
    /// family's episodes, the baselines' authors' settings), its test targets (the paper's
    /// filter), no policy (the inductive methods need [`Policies::Load`] or
    /// [`Policies::Train`]), all cores, seed [`induce_graph::DEFAULT_SEED`].
    pub fn new(
        data: &'a Dataset,
        black_box: &'a dyn BlackBox,
        methods: &[impl Clone + Into<Variant>],
    ) -> Self {
        let seed = induce_graph::DEFAULT_SEED;
        let family = Family::choose(None, &data.name).preset;
        let settings = MethodSettings::for_dataset(family, &data.name, seed);
        Self {
            data,
            black_box,
            methods: methods.iter().cloned().map(Into::into).collect(),
            settings: settings.clone().with_induce(settings.transductive),
            policies: Policies::Absent,
            targets: TargetSpec::Test,
            filter: TargetFilter::Paper,
            sample: None,
            shard: None,
            seed,
            threads: 0,
            progress: &NoProgress,
        }
    }
}

/// The explain loop every job runs (`induce explain` and
/// [`explain_in_memory`](super::explain_in_memory)): policies
/// loaded before anything is explained (a bad checkpoint fails fast), targets resolved, then
/// each method prepared and run; `header` and the target rule go to `notice` first.
pub(crate) fn explain_memory_core(
    job: &MemoryJob<'_>,
    device: &Device,
    progress: &dyn Progress,
    journal: Option<&Journal>,
    header: Option<&str>,
    notice: &dyn Fn(&str),
) -> Result<(RunSummary, Vec<MethodRun>)> {
    let s = &job.settings;
    crate::methods::check_distinct(&job.methods)?;
    let methods: Vec<Method> = job.methods.iter().map(Variant::method).collect();
    crate::methods::check_methods(&methods, &s.restrictions)?;
    // Each variant's settings, checked before anything is loaded.
    let settings = (job.methods.iter())
        .map(|v| variant_settings(s, v))
        .collect::<Result<Vec<_>>>()?;
    if let induce_explain::Goal::Class(c) = s.restrictions.goal
        && c >= job.black_box.num_classes()
    {
        return Err(Error::InvalidValue {
            what: "to-class",
            value: c.to_string(),
            reason: format!(
                "the black box has {} classes (0 to {})",
                job.black_box.num_classes(),
                job.black_box.num_classes().saturating_sub(1)
            ),
        });
    }
    let data = job.data;
    if let Some(v) = job
        .settings
        .restrictions
        .locked
        .out_of_range(data.graph.num_nodes())
    {
        return Err(Error::InvalidValue {
            what: "locked node",
            value: v.to_string(),
            reason: format!(
                "out of range: the graph has {} nodes",
                data.graph.num_nodes()
            ),
        });
    }
    // Bound once per job: what every target shares (the host GCN's first layer on the whole
    // graph) is computed here, not per target.
    let bound = BoundBlackBox::new(job.black_box, &data.graph)?;
    // A method the black box cannot serve is refused before any method runs.
    if let Some(m) =
        (methods.iter()).find(|m| m.needs_gradients() && bound.edge_weighted().is_none())
    {
        return Err(induce_explain::ExplainError::NotDifferentiable {
            method: m.name().into(),
        }
        .into());
    }
    let hops = job.settings.protocol.radius;
    let (targets, rule) = resolve_targets_described(
        &job.targets,
        job.filter,
        job.sample,
        job.shard,
        data,
        &bound,
        hops,
    )?;
    // A receptive field counted or declared from outside the model is measured first.
    let (bound, reach_note) = checked_reach(bound, data, &targets, job.seed)?;
    let bb: &dyn BlackBox = &bound;
    let mut set = MethodSet::new(data, bb, job.settings.clone(), job.policies, device)
        .with_progress(progress);
    let mut prepared = Vec::new();
    for (v, settings) in job.methods.iter().zip(&settings) {
        let early = v.method().needs_policy();
        prepared.push(
            early
                .then(|| set.prepare_variant(v, settings.as_ref()))
                .transpose()?,
        );
    }
    if methods.iter().any(|m| m.needs_training_targets()) {
        set.set_baseline_targets(training_targets(data, bb, hops, &targets)?);
    }
    if let Some(h) = header {
        notice(h);
    }
    if let Some(line) = &rule {
        notice(line);
    }
    if let Some(line) = &reach_note {
        notice(line);
    }
    let ctx = EvalContext::new(&data.graph, bb, job.settings.protocol)?
        .with_goal(job.settings.restrictions.goal);
    let opts = ExplainOptions {
        threads: threads(job.threads),
        progress,
    };
    let mut runs = Vec::new();
    for ((v, settings), p) in job.methods.iter().zip(&settings).zip(prepared) {
        let p = match p {
            Some(p) => p,
            None => set.prepare_variant(v, settings.as_ref())?,
        };
        runs.push(p.explain(&ctx, &targets, &opts, journal)?);
    }
    let mut summary = summary_for(data, ctx.predictions(), job.seed, job.shard, &runs)?;
    summary.notes.extend(rule);
    summary.notes.extend(reach_note);
    Ok((summary, runs))
}

/// The settings of a variant with options of its own: the run's `settings` with them set
/// ([`RunOptions::apply_method_options`](super::RunOptions::apply_method_options), on InduCE's
/// inductive and transductive configurations alike) and checked; `None` for a plain method.
fn variant_settings(settings: &MethodSettings, v: &Variant) -> Result<Option<MethodSettings>> {
    if v.is_plain() {
        return Ok(None);
    }
    let options = super::RunOptions::of_variant(v)?;
    let mut s = settings.clone();
    let mut baselines = s.baselines.clone();
    options.apply_method_options(&mut s.induce, &mut s.baselines, &mut s.restrictions.budget);
    options.apply_method_options(
        &mut s.transductive,
        &mut baselines,
        &mut s.restrictions.budget,
    );
    s.induce.validate()?;
    s.transductive.validate()?;
    s.baselines.validate()?;
    Ok(Some(s))
}

/// `bound` with the receptive field measured on `data`'s graph
/// ([`induce_explain::reach::check_reach`] on the first `targets` and seeded random nodes) in
/// place of a counted one, and the note saying so when it was widened. Derived layers (the
/// library's models) are not evaluated; a declared count that is too small is an error.
pub(crate) fn checked_reach<'a>(
    bound: BoundBlackBox<'a>,
    data: &Dataset,
    targets: &[u32],
    seed: u64,
) -> Result<(BoundBlackBox<'a>, Option<String>)> {
    use induce_explain::reach::{check_reach, reach_sample};
    let check = check_reach(
        &data.graph,
        &bound,
        &reach_sample(&data.graph, targets, seed),
    )?;
    let note = check.note();
    Ok((bound.with_layers(check.reach.layers()), note))
}
