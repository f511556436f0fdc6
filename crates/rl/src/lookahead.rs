//! Exact look-ahead over the policy's own proposals: at each step the `k` actions the policy
//! ranks highest are each judged by the black box (the target's exact verdict with the edit
//! made), and the one that flips the target most confidently, else the one that leaves the
//! original class the smallest lead, is taken. The policy still chooses what is considered (an
//! action outside its top `k` is never taken); the verdicts only rank its proposals. `k = 1` is
//! the greedy episode. [`Widening`] lets the look-ahead reach further down the policy's order
//! while its top `k` do not flip the target.
//!
//! ```text
//!   policy's top 3:  add (t, 7)   del (2, 5)   add (t, 9)
//!   margin after:      +0.40        −0.10        +0.05      → del (2, 5): it flips the target
//! ```

use induce_explain::{Edit, FeatureEdit, Judge, Verdict};
use induce_models::{LogProbs, StateBinding};
use serde::{Deserialize, Serialize};

use crate::env::{ActionKind, Episode};
use crate::error::{Result, RlError};

/// The black box's verdicts on one episode's candidate steps (see the module docs): a judge of
/// the episode's target alone, bound to the graph when the black box is (the paper's GCN on the
/// host kernel: the target's row from cached layers).
pub struct Lookahead<'g> {
    judge: Judge<'g>,
    trial: Vec<Edit>,
    features: Vec<FeatureEdit>,
    widening: Widening,
    /// The binding at the episode's current edits (the state's rows cached, so that each
    /// candidate is evaluated from them: [`induce_models::GraphBinding::state_at`]), with those
    /// edits; `None` until the first verdict, or where the binding has no such cache.
    state: Option<(Vec<Edit>, Box<dyn StateBinding + 'g>)>,
}

/// How far the look-ahead reaches past the policy's `k` best proposals (`--widen`;
/// [`InferenceConfig::widen`](crate::InferenceConfig::widen)).
///
/// ```text
///   proposals in the policy's order:  1 … k | k+1 … 2k | 2k+1 … 4k | …
///   Fixed:                            judged
///   WhileImproving:                   judged, then each next block while none flips the
///                                     target and the last block improved on the best
/// ```
///
/// ```
/// use induce_rl::Widening;
/// assert_eq!(Widening::default(), Widening::Fixed);
/// assert_eq!("while-improving".parse::<Widening>().unwrap(), Widening::WhileImproving);
/// assert_eq!(Widening::WhileImproving.to_string(), "while-improving");
/// assert!("wide".parse::<Widening>().is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Widening {
    /// The policy's `k` best proposals only.
    #[default]
    Fixed,
    /// While no judged proposal flips the target, the window doubles (the next proposals in
    /// the policy's order) as long as the last doubling found a better one (a smaller margin).
    /// The policy still orders what is judged: where its first proposals are the best, a step
    /// costs `2k` verdicts; where they are not, the window grows until the improvement stops.
    WhileImproving,
}

impl std::str::FromStr for Widening {
    type Err = RlError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "fixed" => Ok(Widening::Fixed),
            "while-improving" => Ok(Widening::WhileImproving),
            other => Err(RlError::InvalidValue {
                what: "widen",
                value: other.into(),
                reason: "expected fixed or while-improving".into(),
            }),
        }
    }
}

impl std::fmt::Display for Widening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Widening::Fixed => "fixed",
            Widening::WhileImproving => "while-improving",
        })
    }
}

impl<'g> Lookahead<'g> {
    /// The look-ahead of `ep`'s target, its verdicts taken where the episode's are (the model
    /// on the whole edited graph, or the frozen neighbourhood under the paper's protocol).
    pub fn new(ep: &Episode<'g>) -> Result<Self> {
        let j = ep.judge();
        let judge = match j.verdict() {
            Verdict::Exact => Judge::exact_target(j.graph(), j.black_box(), j.target())?,
            Verdict::Neighbourhood => Judge::frozen(j.graph(), j.black_box(), ep.subgraph())?,
        };
        Ok(Self {
            judge,
            trial: Vec::new(),
            features: Vec::new(),
            widening: Widening::Fixed,
            state: None,
        })
    }

    /// The same look-ahead, reaching past its `k` proposals as `widening` says.
    pub fn with_widening(mut self, widening: Widening) -> Self {
        self.widening = widening;
        self
    }

    /// The action to take in `ep`: among the `k` highest of the policy's `log_probs` over
    /// `ep`'s candidates (the first on ties), the one whose edit reaches the goal with the
    /// smallest margin ([`Goal::margin`](induce_explain::Goal::margin): of the original class,
    /// or to the desired one), else the smallest margin; the policy's argmax when `k ≤ 1`.
    ///
    /// # Shapes
    /// - log_probs: `[candidates]`
    pub fn choose(&mut self, ep: &Episode<'_>, log_probs: &[f32], k: usize) -> Result<usize> {
        let mut order: Vec<usize> = (0..log_probs.len()).collect();
        order.sort_by(|&a, &b| log_probs[b].total_cmp(&log_probs[a]).then(a.cmp(&b)));
        let window = k.max(1).min(order.len());
        if window <= 1 {
            return Ok(order[0]);
        }
        let mut best = None;
        self.judge_into(ep, &order[..window], &mut best)?;
        if self.widening != Widening::Fixed {
            self.widen(ep, &order, window, &mut best)?;
        }
        Ok(best.map(|b| b.index).unwrap_or(order[0]))
    }

    /// [`Widening::WhileImproving`]: judges the proposals after the first `window` of
    /// `order`, doubling the window each time, until one flips the target, the last doubling
    /// found none better, or every proposal is judged.
    fn widen(
        &mut self,
        ep: &Episode<'_>,
        order: &[usize],
        window: usize,
        best: &mut Option<Best>,
    ) -> Result<()> {
        let (mut lo, mut gained) = (window, true);
        while gained && lo < order.len() && !best.is_some_and(|b| b.flipped) {
            let before = best.map(|b| b.margin);
            let hi = (lo * 2).min(order.len());
            self.judge_into(ep, &order[lo..hi], best)?;
            gained = best.map(|b| b.margin) != before;
            lo = hi;
        }
        Ok(())
    }

    /// Judges `ep`'s candidates `these` and keeps the best in `best`: a flip first, then the
    /// smallest margin, the first on ties.
    fn judge_into(
        &mut self,
        ep: &Episode<'_>,
        these: &[usize],
        best: &mut Option<Best>,
    ) -> Result<()> {
        for &index in these {
            let (flipped, margin) = self.verdict(ep, index)?;
            let better = best.is_none_or(|b| {
                (flipped && !b.flipped) || (flipped == b.flipped && margin < b.margin)
            });
            if better {
                *best = Some(Best {
                    flipped,
                    margin,
                    index,
                });
            }
        }
        Ok(())
    }

    /// The black box's verdict on `ep`'s candidate `index` taken next: whether the target then
    /// reaches the episode's goal, and its margin ([`Goal::margin`](induce_explain::Goal::margin)
    /// of the target's row with the edit made; negative once the goal is reached).
    pub(crate) fn verdict(&mut self, ep: &Episode<'_>, index: usize) -> Result<(bool, f32)> {
        let y = ep.original_label();
        let sub = ep.subgraph();
        let (u, w, kind) = ep.candidates().get(index);
        let (gu, gw) = (sub.global_of(u as usize), sub.global_of(w as usize));
        if kind.edit_kind().is_some()
            && ep.feature_edits().is_empty()
            && let Some(row) = self.state_row(ep, (gu.min(gw), gu.max(gw)))?
        {
            let label = LogProbs::new(1, row.len(), row.clone())?.argmax(0);
            return Ok((ep.goal().reached(y, label), ep.goal().margin(&row, y)));
        }
        self.trial.clear();
        self.trial.extend_from_slice(ep.edits());
        self.features.clear();
        self.features.extend_from_slice(ep.feature_edits());
        match kind {
            ActionKind::Add => self.trial.push(Edit::add(gu, gw)),
            ActionKind::Delete => self.trial.push(Edit::delete(gu.min(gw), gu.max(gw))),
            ActionKind::Feature { feature, value } => self.features.push(FeatureEdit {
                node: gu,
                feature,
                old: ep.graph_features().row(gu as usize)[feature as usize],
                new: value,
            }),
        }
        self.judge.set_state(&self.trial, &self.features)?;
        let flipped = ep.goal().reached(y, self.judge.label());
        Ok((flipped, ep.goal().margin(self.judge.target_row(), y)))
    }

    /// Whether the last verdict came from the binding's cache of the state.
    #[cfg(test)]
    pub(crate) fn judges_from_state(&self) -> bool {
        self.state.is_some()
    }

    /// The target's row with `ep`'s edits and `pair` toggled, from the binding's cache of the
    /// episode's state (built again when the edits changed); `None` where the judge has no
    /// binding or the binding no such cache.
    fn state_row(&mut self, ep: &Episode<'_>, pair: (u32, u32)) -> Result<Option<Vec<f32>>> {
        let Some(binding) = self.judge.binding() else {
            return Ok(None);
        };
        if self
            .state
            .as_ref()
            .is_none_or(|(at, _)| at[..] != *ep.edits())
        {
            let toggled: Vec<(u32, u32)> = self.judge.toggles_of(ep.edits()).into_iter().collect();
            self.state = match binding
                .state_at(self.judge.target(), &toggled)
                .map_err(induce_explain::ExplainError::from)?
            {
                Some(s) => Some((ep.edits().to_vec(), s)),
                None => return Ok(None),
            };
        }
        let Some((_, state)) = self.state.as_mut() else {
            return Ok(None);
        };
        induce_explain::oracle::count(1);
        let row = state
            .log_probs_toggling(pair)
            .map_err(induce_explain::ExplainError::from)?;
        if row.iter().any(|x| x.is_nan()) {
            return Err(induce_explain::ExplainError::NanOutput {
                target: self.judge.target(),
                node: self.judge.target(),
            });
        }
        Ok(Some(row))
    }
}

/// The best judged proposal so far.
#[derive(Debug, Clone, Copy)]
struct Best {
    flipped: bool,
    margin: f32,
    index: usize,
}

/// Plays `ep` to its end with look-ahead over the `k` best proposals of `scorer` (the policy's
/// log-probabilities over the candidates: a bound policy, `crate::kernel::Scorer`).
pub(crate) fn play_lookahead(
    scorer: &dyn Fn(&Episode<'_>) -> Result<Vec<f32>>,
    ep: &mut Episode<'_>,
    k: usize,
    widening: Widening,
) -> Result<()> {
    let mut look = Lookahead::new(ep)?.with_widening(widening);
    while !ep.is_done() {
        let logp = scorer(ep)?;
        let a = look.choose(ep, &logp, k)?;
        ep.step(a)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::EnvConfig;
    use induce_graph::{Features, Graph};
    use induce_models::testing::GradedDegree;

    /// A policy stand-in that ranks delete (3,4) first (it cannot flip node 2), then add (2,0)
    /// (it strengthens class 1), then delete (1,2) (it flips), the rest last.
    fn scorer() -> impl Fn(&Episode<'_>) -> Result<Vec<f32>> {
        |ep: &Episode<'_>| {
            let c = ep.candidates();
            Ok((0..c.len())
                .map(|i| {
                    let (u, w, kind) = c.get(i);
                    let (u, w) = (
                        ep.subgraph().global_of(u as usize),
                        ep.subgraph().global_of(w as usize),
                    );
                    match (u.min(w), u.max(w), kind) {
                        (3, 4, ActionKind::Delete) => -0.1,
                        (0, 2, ActionKind::Add) => -0.2,
                        (1, 2, ActionKind::Delete) => -0.3,
                        _ => -1.0,
                    }
                })
                .collect())
        }
    }

    /// `0 ─ 1 ─ 2 ─ 3 ─ 4`, target 2 (degree 2: class 1 under `GradedDegree(2)`), one edit.
    fn path() -> (Graph, EnvConfig) {
        let g = Graph::from_edges(
            5,
            &[(0, 1), (1, 2), (2, 3), (3, 4)],
            Features::constant(5, 1, 1.0),
            vec![0; 5],
        )
        .unwrap();
        let env = EnvConfig {
            budget: 1,
            ..EnvConfig::default()
        };
        (g, env)
    }

    #[test]
    fn looks_ahead_over_the_policys_proposals_only() {
        let (g, env) = path();
        // The argmax takes the useless deletion and spends the budget.
        let mut ep = Episode::new(&g, &GradedDegree(2), 2, &env).unwrap();
        play_lookahead(&scorer(), &mut ep, 1, Widening::Fixed).unwrap();
        assert!(!ep.is_flipped());
        assert_eq!(ep.edits(), [Edit::delete(3, 4)]);
        // Two proposals: neither flips; the smaller margin is the deletion's (unchanged) one.
        let mut ep = Episode::new(&g, &GradedDegree(2), 2, &env).unwrap();
        play_lookahead(&scorer(), &mut ep, 2, Widening::Fixed).unwrap();
        assert_eq!(ep.edits(), [Edit::delete(3, 4)]);
        // Three: the third flips the target.
        let mut ep = Episode::new(&g, &GradedDegree(2), 2, &env).unwrap();
        play_lookahead(&scorer(), &mut ep, 3, Widening::Fixed).unwrap();
        assert!(ep.is_flipped());
        assert_eq!(ep.edits(), [Edit::delete(1, 2)]);
        for verdict in [Verdict::Exact, Verdict::Neighbourhood] {
            let env = EnvConfig {
                budget: 1,
                verdict,
                ..EnvConfig::default()
            };
            let mut ep = Episode::new(&g, &GradedDegree(2), 2, &env).unwrap();
            play_lookahead(&scorer(), &mut ep, 3, Widening::Fixed).unwrap();
            assert!(ep.is_flipped(), "{verdict:?}");
        }
    }

    #[test]
    fn widening_reaches_past_the_window_while_it_improves() {
        let (g, env) = path();
        // Two proposals, neither flips (the best leaves the margin as it was): the window
        // doubles to the next two, where delete (1,2) flips the target.
        let mut ep = Episode::new(&g, &GradedDegree(2), 2, &env).unwrap();
        play_lookahead(&scorer(), &mut ep, 2, Widening::WhileImproving).unwrap();
        assert!(ep.is_flipped());
        assert_eq!(ep.edits(), [Edit::delete(1, 2)]);
        // A look-ahead that widens needs a window to widen.
        let mut config = crate::InduceConfig::default();
        config.inference.lookahead = 1;
        config.inference.widen = Widening::WhileImproving;
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains("lookahead") && err.contains("widen"), "{err}");
    }
}
