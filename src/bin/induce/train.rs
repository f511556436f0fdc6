//! `induce train`: train an inductive InduCE policy into a directory.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use induce::TargetSpec;
use induce::cli::Bars;
use induce::run::{RunContext, RunOptions, TrainJob, train};

use crate::args::{DataArgs, FamilyArg, InduceArgs, ModelArgs};
use crate::pick_device;

#[derive(Debug, Args)]
pub struct TrainArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Training targets: train, test, eval, all, a list 12,40,77 or @file. train, test and all
    /// keep only the paper's targets unless --all-nodes (the rule as for `explain --targets`;
    /// how many it kept, and why, is printed on stderr).
    #[arg(long, default_value = "train", allow_hyphen_values = true)]
    pub targets: TargetSpec,
    #[command(flatten)]
    pub family: FamilyArg,
    /// Train on a random sample of N of the targets (seeded by --seed) [default: all of them with
    /// --training reinforce; at most 900 with the recommended recipe]
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    #[command(flatten)]
    pub induce: InduceArgs,
    /// Train as the paper does: REINFORCE on the paper's state and width, every episode's
    /// verdicts (reward, flip, stop) taken on the target's frozen neighbourhood, as the authors'
    /// code takes them [default: the recommended recipe (--training), verdicts on the whole
    /// edited graph, as explanations are judged]. The policy can then be used with or without
    /// `explain --paper-faithful`.
    #[arg(long)]
    pub paper_faithful: bool,
    /// How the policy learns: imitation (the recommended recipe, not in the paper: imitation of
    /// the exact greedy search on the states the policy reaches, DAgger with a listwise loss
    /// over the search's ranking, on the estimated state (--state; the targeted one for a black
    /// box without gradients) with prior weight 10 (--prior-weight), width 32 (--hidden), 20
    /// passes (--episodes)) or reinforce (the
    /// paper's REINFORCE, state, width and episodes) [default: imitation].
    #[arg(long, value_name = "reinforce|imitation")]
    pub training: Option<induce::rl::Training>,
    #[command(flatten)]
    pub imitation: ImitationArgs,
    /// The estimated state's prior weight: the first-order estimate enters the actions' prior
    /// and feature as w · e; a larger w leaves the network a smaller correction [default: 10
    /// with the recommended recipe, 1 otherwise].
    #[arg(long, value_name = "W")]
    pub prior_weight: Option<f32>,
    /// Training targets per policy update (an Adam step of REINFORCE or of imitation)
    /// [default: 16].
    #[arg(long, value_name = "N")]
    pub batch_size: Option<usize>,
    /// What REINFORCE subtracts from a sampled episode's return: batch (the paper's: returns
    /// normalised over the batch) or greedy (the policy's own argmax episode on the same
    /// target, Kool et al. 2019; one more rollout per episode). REINFORCE's training and
    /// --finetune's passes only [default: batch].
    #[arg(long, value_name = "batch|greedy")]
    pub baseline: Option<induce::rl::returns::Baseline>,
    /// Width of the policy's GAT layers and of its scoring MLP's hidden layers [default: 32
    /// with the recommended recipe; 16, the paper's, with --training reinforce and
    /// --paper-faithful].
    #[arg(long, value_name = "N")]
    pub hidden: Option<usize>,
    /// Output directory: policy.bpk, its .json and train.json (with --edits del:
    /// policy-del-only.bpk, its .json and train-del-only.json; both can share one directory).
    /// While training, the state after each epoch is kept in
    /// OUT/.train-checkpoint.json (removed at the end).
    #[arg(long)]
    pub out: PathBuf,
    /// Continue an interrupted training of the same job into the same --out from its last
    /// finished epoch (host kernel); the policy equals an uninterrupted run's. Without it, an
    /// interrupted run's checkpoint is discarded.
    #[arg(long)]
    pub resume: bool,
}

/// The settings of `--training imitation` (refused with `--training reinforce`).
#[derive(Debug, Args)]
pub struct ImitationArgs {
    /// Imitation: temperature of the teacher's distribution over the candidates, in units of
    /// the state's margin spread; 0 trains on the search's choice alone [default: 0.1].
    #[arg(long, value_name = "T")]
    pub teacher_temperature: Option<f32>,
    /// Imitation (DAgger): the probability that a training step takes the search's choice
    /// rather than the policy's, in the first pass, decaying to 0 in the last; 1 trains on
    /// the search's own trajectories only [default: 0.5].
    #[arg(long, value_name = "P")]
    pub teacher_share: Option<f32>,
    /// Imitation: candidates the search judges at a training state (the policy's most
    /// probable half and as many drawn at random where there are more) [default: 128].
    #[arg(long, value_name = "N")]
    pub max_judged: Option<usize>,
    /// Imitation: passes of the paper's REINFORCE after the imitation passes [default: 0].
    #[arg(long, value_name = "N")]
    pub finetune: Option<usize>,
    /// Imitation: Adam learning rate of the listwise updates [default: 1e-3] (--lr is
    /// REINFORCE's, the fine-tuning's too).
    #[arg(long, value_name = "LR")]
    pub imitation_lr: Option<f64>,
    /// Imitation: a curriculum over the first N passes; pass e < N trains on the easiest
    /// (e+1)/(N+1) of the targets only (the smallest margins of the black box's prediction)
    /// [default: 0, every pass on all].
    #[arg(long, value_name = "N")]
    pub curriculum: Option<usize>,
}

impl ImitationArgs {
    /// The imitation settings these flags change, or a typed refusal when they are given
    /// without imitation.
    fn apply(&self, job: &mut TrainJob) -> Result<()> {
        let given = [
            ("--teacher-temperature", self.teacher_temperature.is_some()),
            ("--teacher-share", self.teacher_share.is_some()),
            ("--finetune", self.finetune.is_some()),
            ("--imitation-lr", self.imitation_lr.is_some()),
            ("--curriculum", self.curriculum.is_some()),
        ];
        if job.induce.train.method != induce::rl::Training::Imitation
            && let Some((flag, _)) = given.iter().find(|(_, g)| *g)
        {
            anyhow::bail!("{flag} needs --training imitation");
        }
        let im = &mut job.induce.train.imitation;
        if let Some(t) = self.teacher_temperature {
            im.temperature = t;
        }
        if let Some(p) = self.teacher_share {
            im.teacher_share = p;
        }
        if let Some(lr) = self.imitation_lr {
            im.lr = lr;
        }
        if let Some(n) = self.finetune {
            im.finetune = n;
        }
        if let Some(n) = self.curriculum {
            im.curriculum = n;
        }
        Ok(())
    }
}

impl TrainArgs {
    /// The library job these arguments describe (validated by the library).
    fn to_job(&self) -> Result<TrainJob> {
        let options = RunOptions {
            seed: Some(self.data.seed),
            family: self.family.family.0,
            paper_faithful: self.paper_faithful,
            training: self.training,
            sample: self.sample,
            max_judged: self.imitation.max_judged,
            ..self.induce.options()
        };
        let mut job = options.train_job(
            &self.data.data,
            self.model.black_box.clone(),
            self.model.arch.clone(),
            self.targets.clone(),
        )?;
        job.format = self.data.format.format;
        if let Some(h) = self.hidden {
            (job.induce.network.hidden, job.induce.network.mlp_hidden) = (h, h);
        }
        if let Some(b) = self.batch_size {
            job.induce.train.batch_size = b;
        }
        if let Some(w) = self.prior_weight {
            job.induce.env.prior_weight = w;
        }
        self.imitation.apply(&mut job)?;
        if let Some(b) = self.baseline {
            job.induce.train.baseline = b;
        }
        Ok(job)
    }
}

/// Runs `induce train`.
pub fn run(a: TrainArgs) -> Result<()> {
    let dev = pick_device(a.data.backend)?;
    let job = a.to_job()?;
    let bars = Bars::new(!a.data.no_progress);
    let notice = |line: &str| eprintln!("{line}");
    let run = RunContext::new(&dev)
        .with_progress(&bars)
        .with_notice(&notice)
        .with_out_dir(&a.out, a.resume.into());
    let trained = train(&job, &run)?;
    let (outcome, file) = (trained.outcome, trained.file.unwrap_or_default());
    println!(
        "trained on {} targets, {} {} in {:.1} s -> {}",
        outcome.targets,
        job.induce.training_passes(),
        match job.induce.train.method {
            induce::rl::Training::Reinforce => "episodes",
            induce::rl::Training::Imitation => "passes",
        },
        outcome.seconds,
        file.display()
    );
    Ok(())
}
