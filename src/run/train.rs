//! `induce train` as a library job: [`TrainJob`] (everything that defines a training run,
//! saved in its `train.json`, `train-del-only.json` for deletions only), [`train()`] (train in memory, or into the output
//! directory's whole lifecycle: checkpoint, resume, the policy under its one file name).

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use induce_explain::pipeline::{Progress, TargetSpec};
use induce_graph::io::DataFormat;
use induce_models::io::checkpoint::atomic_write;
use induce_models::{BlackBox, BoundBlackBox};
use induce_rl::{
    EpochStats, InduceConfig, Kernel, PolicyMeta, StateLayout, save_policy, timed, train_inductive,
};
use serde::{Deserialize, Serialize};

use super::{
    Resume, RunContext, Sample, TargetFilter, data_stem, default_family, default_true, family_line,
    format_serde, load_data, resolve_targets_described, training_targets,
};
use crate::error::{Error, Result};
use crate::methods::policy_file_name;
use crate::methods::{Family, Preset, load_black_box_with_arch};

/// Everything that defines an `induce train` run; saved beside the policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainJob {
    /// The data (file, folder or built-in name).
    pub data: String,
    /// Its format (`None`: detected).
    #[serde(with = "format_serde")]
    pub format: Option<DataFormat>,
    /// The black box (see [`load_black_box_with_arch`]).
    pub black_box: PathBuf,
    /// The architecture file of a PyG black box ([`crate::models::pyg::PygArch`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<PathBuf>,
    /// Training targets (default: the training split, filtered as the paper does).
    pub targets: TargetSpec,
    /// Keep only the paper's targets of a broad spec.
    #[serde(rename = "paper_filter")]
    pub filter: TargetFilter,
    /// Train only on a seeded random sample of the targets. `None` with imitation (the
    /// recommended recipe): a sample of [`induce_rl::RECOMMENDED_TARGETS`] seeded by the run's
    /// seed ([`TrainJob::training_sample`]); with REINFORCE, all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<Sample>,
    /// The hyper-parameter family whose settings `induce` starts from
    /// ([`TrainJob::with_family`]).
    #[serde(default = "default_family")]
    pub family: Preset,
    /// Whether `family` was guessed from the data's name (`--family auto`) rather than chosen.
    #[serde(default = "default_true")]
    pub family_guessed: bool,
    /// InduCE settings (γ, episodes, seed, environment).
    pub induce: InduceConfig,
    /// The state was not chosen: with [`StateLayout::Estimated`] and a black box without
    /// gradients, training uses [`StateLayout::Targeted`] instead (and says so). The saved
    /// `train.json` holds the state used.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub state_auto: bool,
}

impl TrainJob {
    /// The sample of the targets this job trains on: [`TrainJob::sample`], or with imitation
    /// (the recommended recipe) and none given, [`induce_rl::RECOMMENDED_TARGETS`] of them drawn
    /// with the run's seed (all of them where there are fewer).
    ///
    /// ```
    /// use induce::run::TrainJob;
    /// let mut job = TrainJob::new("ba-shapes", "bb.bpk");
    /// assert_eq!(job.training_sample(), None); // the paper's REINFORCE: every target
    /// job.induce = job.induce.clone().recommended();
    /// assert_eq!(job.training_sample().map(|s| s.size), Some(900));
    /// ```
    pub fn training_sample(&self) -> Option<Sample> {
        self.sample.or_else(|| {
            (self.induce.train.method == induce_rl::Training::Imitation).then_some(Sample {
                size: induce_rl::RECOMMENDED_TARGETS,
                seed: self.induce.seed,
            })
        })
    }

    /// The paper's inductive settings for the family guessed from `data`'s name.
    pub fn new(data: impl Into<String>, black_box: impl Into<PathBuf>) -> Self {
        let data = data.into();
        let family = Family::choose(None, &data_stem(&data));
        Self {
            induce: family.preset.inductive(induce_graph::DEFAULT_SEED),
            family: family.preset,
            family_guessed: family.guessed,
            data,
            format: None,
            black_box: black_box.into(),
            arch: None,
            targets: TargetSpec::Train,
            filter: TargetFilter::Paper,
            sample: None,
            state_auto: false,
        }
    }

    /// The same job in `family` (`None`: guessed from the data's name): `induce` is reset to
    /// that family's inductive settings with the job's seed, so call it before changing them.
    pub fn with_family(mut self, family: Option<Preset>) -> Self {
        let f = Family::choose(family, &data_stem(&self.data));
        self.family = f.preset;
        self.family_guessed = f.guessed;
        self.induce = f.preset.inductive(self.induce.seed);
        self
    }

    /// How the job's family was chosen, in one line ([`Family::describe`]).
    pub fn family_line(&self) -> String {
        family_line(&self.data, self.family, self.family_guessed)
    }

    /// Checks the InduCE settings ([`InduceConfig::validate`], at least one episode and a
    /// non-empty batch) before anything is loaded, naming the field at fault.
    pub fn validate(&self) -> Result<()> {
        self.induce.validate()?;
        for (field, v) in [
            ("episodes", self.induce.train.episodes),
            ("batch_size", self.induce.train.batch_size),
        ] {
            if v == 0 {
                return Err(induce_explain::ExplainError::InvalidConfig(format!(
                    "InduceConfig.{field} must be at least 1, got 0"
                ))
                .into());
            }
        }
        Ok(())
    }
}

/// What [`train()`] measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainOutcome {
    /// Number of training targets.
    pub targets: usize,
    /// Statistics of the last epoch.
    pub last_epoch: Option<EpochStats>,
    /// Training time.
    pub seconds: f64,
}

/// A trained policy and what training measured: [`train`]'s result.
#[derive(Debug)]
pub struct Trained {
    /// The policy network.
    pub policy: induce_models::Policy,
    /// The metadata saved beside it ([`induce_rl::save_policy`]).
    pub meta: PolicyMeta,
    /// What training measured.
    pub outcome: TrainOutcome,
    /// The policy file, when [`RunContext::with_out_dir`] wrote one.
    pub file: Option<PathBuf>,
}

/// Trains an inductive policy (InduCE, REINFORCE) on the job's targets: the one entry point of
/// `induce train` and of every program that trains as it does. Loads the data and the black
/// box unless [`RunContext::with_loaded`] hands them in memory, checks everything, tells the
/// run's notice sink the family and the target rule, then trains.
///
/// With [`RunContext::with_out_dir`] it owns the directory's whole lifecycle: the policy is
/// saved as [`policy_file_name`] of its edit mode (`policy.bpk`, or `policy-del-only.bpk` for
/// deletions only) with its `.json`, and `train.json` ([`train_report_name`]) records the job
/// and what training measured. With the host kernel the state after each epoch is kept in
/// `out/.train-checkpoint.json` ([`TRAIN_CHECKPOINT`]): started again with
/// [`Resume::Continue`], training continues from the last finished epoch and gives exactly an
/// uninterrupted run's policy; with [`Resume::Restart`] an old checkpoint is discarded. A
/// failure before the first epoch leaves no empty directory behind.
pub fn train(job: &TrainJob, run: &RunContext<'_>) -> Result<Trained> {
    job.validate()?;
    // The sample the job trains on, recorded as such in `train.json`.
    let job = &TrainJob {
        sample: job.training_sample(),
        ..job.clone()
    };
    let Some((out, resume)) = run.out else {
        return train_checkpointed(job, run, None);
    };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    let checkpoint = out.join(TRAIN_CHECKPOINT);
    if resume == Resume::Restart && checkpoint.exists() {
        std::fs::remove_file(&checkpoint).map_err(io(&checkpoint))?;
    }
    let resumable = job.induce.kernel == Kernel::Host;
    if resumable {
        std::fs::create_dir_all(out).map_err(io(out))?;
    } else if resume == Resume::Continue {
        return Err(Error::InvalidValue {
            what: "resume",
            value: format!("InduceConfig.kernel = {}", job.induce.kernel),
            reason: "resumable training needs the host kernel".into(),
        });
    }
    let checkpointed = resumable.then_some(&*checkpoint);
    let mut trained = match train_checkpointed(job, run, checkpointed) {
        Ok(t) => t,
        Err(e) => {
            if !checkpoint.exists() {
                // Only removes a directory this run created and left empty.
                let _ = std::fs::remove_dir(out);
            }
            return Err(e);
        }
    };
    let file = write_policy_dir(job, out, &trained.policy, &trained.meta, &trained.outcome)?;
    if checkpoint.exists() {
        std::fs::remove_file(&checkpoint).map_err(io(&checkpoint))?;
    }
    trained.file = Some(file);
    Ok(trained)
}

/// [`train`] checkpointing after every epoch into `checkpoint`, if any, and continuing from it
/// when it exists (see [`induce_rl::train_inductive_checkpointed`]).
fn train_checkpointed(
    job: &TrainJob,
    run: &RunContext<'_>,
    checkpoint: Option<&Path>,
) -> Result<Trained> {
    let loaded;
    let (data, black_box) = match run.loaded {
        Some(pair) => pair,
        None => {
            let data = load_data(&job.data, job.format, job.induce.seed)?;
            let bb = load_black_box_with_arch(
                &job.black_box,
                job.arch.as_deref(),
                &data,
                job.induce.kernel,
                run.device,
            )?;
            loaded = (data, bb);
            (&loaded.0, loaded.1.black_box.as_ref())
        }
    };
    let bound = BoundBlackBox::new(black_box, &data.graph)?;
    let bb: &dyn BlackBox = &bound;
    let hops = job.induce.env.hops;
    let no_split = job.targets == TargetSpec::Train && data.split.train.is_empty();
    let (targets, rule) = match no_split {
        // The authors' syn4/syn5 files carry only an evaluation set: train on the paper's
        // targets among the other nodes (what PGExplainer trains on, `training_targets`).
        true => {
            let eval = data.eval_targets.clone().unwrap_or_default();
            let pool = TargetSpec::List(training_targets(data, bb, hops, &eval)?);
            let (t, _) = resolve_targets_described(
                &pool,
                TargetFilter::AllNodes,
                job.training_sample(),
                None,
                data,
                bb,
                hops,
            )?;
            let line = format!(
                "targets: {} nodes: {} has no training split, so the paper's targets among the \
                 nodes outside its evaluation set ({} nodes)",
                t.len(),
                data.name,
                eval.len()
            );
            (t, Some(line))
        }
        false => {
            let sample = job.training_sample();
            resolve_targets_described(&job.targets, job.filter, sample, None, data, bb, hops)?
        }
    };
    (run.notice)(&job.family_line());
    if let Some(line) = &rule {
        (run.notice)(line);
    }
    // A receptive field counted or declared from outside the model is measured first.
    let (bound, reach_note) = super::memory::checked_reach(bound, data, &targets, job.induce.seed)?;
    let bb: &dyn BlackBox = &bound;
    if let Some(line) = &reach_note {
        (run.notice)(line);
    }
    let mut induce = job.induce.clone();
    if job.state_auto && induce.env.state == StateLayout::Estimated && bb.edge_weighted().is_none()
    {
        induce.env.state = StateLayout::Targeted;
        (run.notice)(
            "state: targeted (the estimated state needs a black box with gradients; this one has \
             none)",
        );
    }
    let (policy, last, seconds) = train_reporting_with(
        (&data.graph, bb, &targets),
        &induce,
        run.device,
        run.progress,
        "train policy",
        checkpoint,
    )?;
    let meta = PolicyMeta {
        feature_dim: data.graph.features().dim(),
        num_classes: bb.num_classes(),
        induce,
    };
    Ok(Trained {
        policy,
        meta,
        outcome: TrainOutcome {
            targets: targets.len(),
            last_epoch: last,
            seconds,
        },
        file: None,
    })
}

/// [`train_inductive`] reporting each epoch to `progress` (as task `task`); returns the policy,
/// the last epoch's statistics and the training time.
pub(crate) fn train_reporting(
    graph: &induce_graph::Graph,
    black_box: &dyn BlackBox,
    targets: &[u32],
    config: &InduceConfig,
    device: &Device,
    progress: &dyn Progress,
    task: &str,
) -> Result<(induce_models::Policy, Option<EpochStats>, f64)> {
    train_reporting_with(
        (graph, black_box, targets),
        config,
        device,
        progress,
        task,
        None,
    )
}

fn train_reporting_with(
    (graph, black_box, targets): (&induce_graph::Graph, &dyn BlackBox, &[u32]),
    config: &InduceConfig,
    device: &Device,
    progress: &dyn Progress,
    task: &str,
    checkpoint: Option<&Path>,
) -> Result<(induce_models::Policy, Option<EpochStats>, f64)> {
    progress.begin(task, config.training_passes());
    let mut last = None;
    let report = |s: &EpochStats| {
        let agreement = match s.agreement {
            Some(a) => format!(" agrees with the teacher {:.0}%", 100.0 * a),
            None => String::new(),
        };
        progress.message(&format!(
            "return {:.3} flipped {:.0}% edits {:.2}{agreement}",
            s.mean_return,
            100.0 * s.flipped,
            s.mean_edits
        ));
        progress.advance(1);
        last = Some(s.clone());
    };
    let (policy, seconds) = timed(|| match checkpoint {
        Some(path) => induce_rl::train_inductive_checkpointed(
            graph, black_box, targets, config, device, path, report,
        ),
        None => train_inductive(graph, black_box, targets, config, device, report),
    });
    progress.end();
    Ok((policy?, last, seconds))
}

/// Where [`train()`] keeps the training state after each epoch (removed at the end).
pub const TRAIN_CHECKPOINT: &str = ".train-checkpoint.json";

/// Writes a trained policy into the directory `out` as `induce train --out` does: the policy
/// (`policy.bpk`, or `policy-del-only.bpk` for a deletion-only job, with its `.json`) and
/// `train.json` (`train-del-only.json`; the job and its outcome), each atomically, so that
/// both policies and their reports can share a directory. Returns the policy's path.
pub fn write_policy_dir(
    job: &TrainJob,
    out: &Path,
    policy: &induce_models::Policy,
    meta: &PolicyMeta,
    outcome: &TrainOutcome,
) -> Result<PathBuf> {
    std::fs::create_dir_all(out).map_err(|source| Error::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let file = out.join(policy_file_name(job.induce.env.mode));
    save_policy(policy, meta, &file)?;
    // The job as trained: its InduCE settings are the policy's (the state a black box without
    // gradients falls back to).
    let job = TrainJob {
        induce: meta.induce.clone(),
        ..job.clone()
    };
    let report = serde_json::json!({"job": job, "outcome": outcome});
    let bytes = serde_json::to_vec_pretty(&report).map_err(|e| Error::InvalidValue {
        what: "train job",
        value: job.data.clone(),
        reason: e.to_string(),
    })?;
    atomic_write(out.join(train_report_name(job.induce.env.mode)), &bytes)?;
    Ok(file)
}

/// The name of the report `induce train` writes beside a policy trained with `mode`:
/// `train-del-only.json` for deletions only, `train.json` otherwise.
pub fn train_report_name(mode: induce_rl::EditMode) -> &'static str {
    match mode {
        induce_rl::EditMode::DeleteOnly => "train-del-only.json",
        _ => "train.json",
    }
}
