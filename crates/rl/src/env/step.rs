//! The transition of an [`Episode`]: [`Episode::step`], and the deferred step whose black-box
//! verdict the caller takes ([`Episode::step_deferred`], [`Episode::complete_step`]).

use induce_models::LogProbs;

use super::{ActionKind, Episode};
use crate::error::{Result, RlError};
use crate::explanation::{Edit, EditKind, FeatureEdit};

/// What a step hands the judge: a toggled pair (original ids) or a feature edit.
enum Made {
    Edge((u32, u32)),
    Feature(FeatureEdit),
}

/// The outcome of one [`Episode::step`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The reward of the edit (see [`Reward`]).
    ///
    /// [`Reward`]: crate::reward::Reward
    pub reward: f32,
    /// True when the target's prediction now differs from its original label.
    pub flipped: bool,
    /// True when the episode is over (flip, budget reached, or no more than
    /// [`EnvConfig::min_candidates`] candidates left).
    ///
    /// [`EnvConfig::min_candidates`]: super::EnvConfig::min_candidates
    pub done: bool,
}

impl Episode<'_> {
    /// Applies candidate `action` (an index into [`Episode::candidates`]), re-runs the black box
    /// on the edited neighbourhood, updates the state and the candidates, and returns the
    /// reward and whether the episode is over.
    ///
    /// Errors: [`RlError::EpisodeOver`] after the end, [`RlError::ActionOutOfRange`], and the
    /// black-box errors of [`Episode::new`].
    pub fn step(&mut self, action: usize) -> Result<Step> {
        let (before, made) = self.begin_step(action)?;
        crate::profile::time(crate::profile::Phase::Verdict, || match made {
            Made::Edge(edge) => self.judge.toggle(&[edge]),
            Made::Feature(e) => {
                let mut all = self.judge.feature_edits().to_vec();
                all.push(e);
                self.judge.set_features(&all)
            }
        })?;
        self.end_step(before)
    }

    /// [`Episode::step`] with the black box's verdict left to the caller: applies candidate
    /// `action` and records the edit; the caller evaluates the model on the edited graph
    /// ([`Episode::verdict_request`]), for many episodes at once if it likes (e.g.
    /// `induce_models::black_box::batched::VerdictBatch` on a GPU), and hands the rows to
    /// [`Episode::complete_step`].
    ///
    /// Errors: those of [`Episode::step`], and [`RlError::InvalidConfig`] when the episode's
    /// verdicts cannot be taken by the caller (not [`Verdict::Exact`] on the whole graph, e.g.
    /// a fan-out sample or frozen neighbourhood: [`Episode::takes_verdicts`]) or a step already
    /// awaits its verdict.
    ///
    /// [`Verdict::Exact`]: induce_explain::Verdict::Exact
    pub fn step_deferred(&mut self, action: usize) -> Result<()> {
        if !self.takes_verdicts() {
            return Err(RlError::InvalidConfig(format!(
                "target {}: a deferred step needs exact verdicts on the judge's own node set",
                self.sub.target
            )));
        }
        // (An episode offering feature actions does not take verdicts, above.)
        if (self.candidates.kind.get(action)).is_some_and(|k| k.edit_kind().is_none()) {
            return Err(RlError::InvalidConfig(format!(
                "target {}: a feature action's verdict is the episode's own (Episode::step)",
                self.sub.target
            )));
        }
        let (before, made) = self.begin_step(action)?;
        let Made::Edge(edge) = made else {
            unreachable!("feature actions are refused above");
        };
        self.judge.toggle_deferred(&[edge])?;
        self.pending = Some(before);
        Ok(())
    }

    /// Whether the black box's verdicts can be taken by the caller ([`Episode::step_deferred`]):
    /// not where feature actions are offered ([`EnvConfig::features`]).
    ///
    /// [`EnvConfig::features`]: super::EnvConfig::features
    pub fn takes_verdicts(&self) -> bool {
        self.judge.takes_rows() && !self.offers_features
    }

    /// What a deferred step's verdict needs: the node pairs toggled relative to the original
    /// graph (`(min, max)`, original ids) and the nodes whose rows to return, in order.
    pub fn verdict_request(&self) -> (Vec<(u32, u32)>, &[u32]) {
        (self.judge.toggled().collect(), self.judge.nodes())
    }

    /// Completes a deferred step with the model's log-probabilities for
    /// [`Episode::verdict_request`]'s nodes on the edited graph: updates the state and returns
    /// the reward and whether the episode is over, as [`Episode::step`] does.
    ///
    /// Errors: [`RlError::InvalidConfig`] when no step awaits its verdict; the shape and NaN
    /// errors of the black box's output.
    ///
    /// # Shapes
    /// - rows: `[m, C]`, `m` = the request's nodes
    pub fn complete_step(&mut self, rows: LogProbs) -> Result<Step> {
        let Some(before) = self.pending.take() else {
            return Err(RlError::InvalidConfig(format!(
                "target {}: no deferred step awaits its verdict",
                self.sub.target
            )));
        };
        self.judge.take_rows(rows)?;
        self.end_step(before)
    }

    /// The first half of a step: checks, applies the action to the neighbourhood and the edit
    /// list; returns `log p(y)` before it and what the judge must apply.
    fn begin_step(&mut self, action: usize) -> Result<(f32, Made)> {
        if self.pending.is_some() {
            return Err(RlError::InvalidConfig(format!(
                "target {}: a deferred step awaits its verdict (Episode::complete_step)",
                self.sub.target
            )));
        }
        if self.done {
            return Err(RlError::EpisodeOver {
                target: self.sub.target,
            });
        }
        if action >= self.candidates.len() {
            return Err(RlError::ActionOutOfRange {
                action,
                num_candidates: self.candidates.len(),
            });
        }
        let before = self.log_p_away();
        let (u, w, kind) = self.candidates.remove(action);
        let Some(kind) = kind.edit_kind() else {
            let ActionKind::Feature { feature, value } = kind else {
                unreachable!("an action without an edge edit is a feature action");
            };
            self.candidates.remove_entry(u, feature);
            let node = self.sub.global_of(u as usize);
            let old = self.graph_features.row(node as usize)[feature as usize];
            let e = FeatureEdit {
                node,
                feature,
                old,
                new: value,
            };
            return Ok((before, Made::Feature(e)));
        };
        let exists = self.edit.toggle(u as usize, w as usize);
        debug_assert_eq!(
            exists,
            kind == EditKind::Add,
            "candidate type matches the edge"
        );
        self.edits.push(Edit {
            u: self.sub.global_of(u as usize),
            w: self.sub.global_of(w as usize),
            kind,
        });
        let edge = (
            self.sub.global_of(u as usize),
            self.sub.global_of(w as usize),
        );
        Ok((before, Made::Edge(edge)))
    }

    /// The second half of a step, once the verdict is in: state, reward, end.
    fn end_step(&mut self, before: f32) -> Result<Step> {
        self.refresh_state()?;
        let after = self.log_p_away();
        let flipped = self.is_flipped();
        let reward = self
            .reward
            .compute(before, after, flipped, self.num_edits());
        self.done = flipped
            || self.num_edits() >= self.budget
            || self.candidates.len() <= self.min_candidates;
        Ok(Step {
            reward,
            flipped,
            done: self.done,
        })
    }
}
