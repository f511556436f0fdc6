//! [`RunContext`]: how a job runs, the one options value of [`explain`](super::explain()) and
//! [`train`](super::train()).

use std::path::Path;

use burn::tensor::Device;
use induce_explain::pipeline::{NoProgress, Progress};
use induce_graph::Dataset;
use induce_models::BlackBox;

/// What a run directory already holds counts ([`RunContext::with_out_dir`]): continue an
/// interrupted run (`induce explain --resume`, `induce train --resume`), or start afresh,
/// discarding an old journal or checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Resume {
    /// Start afresh (the default): an old journal or training checkpoint is discarded.
    #[default]
    Restart,
    /// Continue from the journal (explain) or the last finished epoch (train); the result
    /// equals an uninterrupted run's.
    Continue,
}

impl From<bool> for Resume {
    /// `true` (a `--resume` flag) is [`Resume::Continue`].
    fn from(resume: bool) -> Self {
        match resume {
            true => Resume::Continue,
            false => Resume::Restart,
        }
    }
}

/// How an [`ExplainJob`](super::ExplainJob) or a [`TrainJob`](super::TrainJob) runs: on which
/// device, reporting to which progress display, telling the user what through which sink, into
/// which run directory, and on which data and black box when they are already in memory. Built
/// as Burn's configs are: [`RunContext::new`], then `with_*`.
///
/// ```
/// use induce::run::{ExplainJob, Resume, RunContext, explain};
/// use induce::{Method, TargetSpec, default_device};
/// # fn main() -> induce::Result<()> {
/// let device = default_device()?;
/// let data = induce::run::load_data("tree-cycles", None, 42)?;
/// let (d, c) = (data.graph.features().dim(), data.graph.num_classes());
/// let cfg = induce::models::GcnTrainingConfig::new(induce::models::GcnConfig::new(d, c));
/// let (gcn, _) = induce::models::train_gcn(&data, &cfg.with_epochs(100), &device)?;
/// let bb = induce::models::GcnBlackBox::new(gcn, &device);
/// let mut job = ExplainJob::new("tree-cycles", "", &[Method::RANDOM]);
/// job.targets = TargetSpec::List(vec![1, 2]);
/// let lines = std::cell::RefCell::new(Vec::new());
/// let notice = |l: &str| lines.borrow_mut().push(l.to_string());
/// let out = std::env::temp_dir().join("induce-context-doc");
/// let run = RunContext::new(&device)
///     .with_loaded(&data, &bb)
///     .with_notice(&notice)
///     .with_out_dir(&out, Resume::Restart);
/// let (summary, runs) = explain(&job, &run)?;
/// assert_eq!(runs[0].records.len(), 2);
/// assert!(out.join("summary.json").exists() && !lines.borrow().is_empty());
/// # let _ = summary; std::fs::remove_dir_all(out).ok();
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct RunContext<'a> {
    pub(super) device: &'a Device,
    pub(super) progress: &'a dyn Progress,
    pub(super) notice: &'a dyn Fn(&str),
    pub(super) out: Option<(&'a Path, Resume)>,
    pub(super) loaded: Option<(&'a Dataset, &'a dyn BlackBox)>,
}

impl std::fmt::Debug for RunContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunContext")
            .field("device", self.device)
            .field("out", &self.out)
            .field("loaded", &self.loaded.map(|(d, _)| &d.name))
            .finish_non_exhaustive()
    }
}

fn silent(_: &str) {}

impl<'a> RunContext<'a> {
    /// A run on `device` with no progress display, no notices, no run directory, and the
    /// job's own data and black box loaded from its files.
    pub fn new(device: &'a Device) -> Self {
        Self {
            device,
            progress: &NoProgress,
            notice: &silent,
            out: None,
            loaded: None,
        }
    }

    /// Reports progress to `progress` (`induce`'s terminal bars, or your own).
    pub fn with_progress(mut self, progress: &'a dyn Progress) -> Self {
        self.progress = progress;
        self
    }

    /// Tells `notice`, once everything is checked and before any work, what the run decided for
    /// the user: the hyper-parameter family ([`ExplainJob::family_line`]) and, for a broad
    /// target spec narrowed by the paper's filter, how many targets it chose by which rule
    /// ([`target_rule_line`]). `induce` prints these lines on stderr.
    ///
    /// [`ExplainJob::family_line`]: super::ExplainJob::family_line
    /// [`target_rule_line`]: super::target_rule_line
    pub fn with_notice(mut self, notice: &'a dyn Fn(&str)) -> Self {
        self.notice = notice;
        self
    }

    /// Writes the run into the directory `dir` and owns its lifecycle: everything is checked
    /// before the directory is written; progress is journaled beside it (explain) or
    /// checkpointed in it after every epoch (train, host kernel) so that a killed run
    /// continues with [`Resume::Continue`]; the files are written atomically.
    pub fn with_out_dir(mut self, dir: &'a Path, resume: Resume) -> Self {
        self.out = Some((dir, resume));
        self
    }

    /// Runs on `data` and `black_box` already in memory (the Python package's path): the
    /// job's `data`, `format`, `black_box` and `arch` are then not read; everything else is,
    /// exactly as `induce` runs it.
    pub fn with_loaded(mut self, data: &'a Dataset, black_box: &'a dyn BlackBox) -> Self {
        self.loaded = Some((data, black_box));
        self
    }

    /// The device.
    pub fn device(&self) -> &'a Device {
        self.device
    }
}
