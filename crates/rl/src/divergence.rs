//! Where a greedy explainer parts from a given path, and by how much: the tool that shows whether
//! two explanations of one target differ because of a float near-tie (another backend's
//! summation order, TF32 products on a GPU) or because of a real difference.
//!
//! [`first_divergence`] replays `path` (another run's edits, in order) in a fresh episode and,
//! at every step, asks the scorer for its greedy choice. The first step where that choice is not
//! the path's edit is a [`Divergence::Choice`], with the scorer's margin between the two
//! candidates (and a reference scorer's, at the same state, in the other direction). When every
//! choice agrees but the black box's verdict does not (the episode ends before the path does, or
//! the path ends and the episode goes on), it is a [`Divergence::Verdict`] with the target's
//! margin between its two most likely classes.
//!
//! ```text
//!   path      e₀ ── e₁ ── e₂ ── e₃          replayed: e₀, e₁ are the scorer's greedy choices
//!   scorer    e₀ ── e₁ ── e₂′               step 2: the scorer prefers e₂′ over e₂ by
//!                          ↑                 `margin` = log π(e₂′) − log π(e₂) ≥ 0
//!                      divergence            a tie within rounding when the margin is a few ulps
//! ```

use serde::Serialize;

use crate::env::Episode;
use crate::error::Result;
use crate::explanation::Edit;
use crate::kernel::{KernelPolicy, Scorer, argmax};

/// The first place where a greedy replay leaves a path ([`first_divergence`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Divergence {
    /// The scorer's greedy choices and the black box's verdicts follow the path to its end.
    None,
    /// At `step` the scorer's greedy choice is `chosen`, not the path's `expected`.
    Choice {
        /// Index (from 0) of the step.
        step: usize,
        /// The path's edit at `step`.
        expected: Edit,
        /// The scorer's greedy choice at `step`.
        chosen: Edit,
        /// The scorer's log-probability of `chosen`.
        chosen_log_prob: f32,
        /// The scorer's log-probability of `expected`.
        expected_log_prob: f32,
        /// `chosen_log_prob − expected_log_prob` (≥ 0; 0 for an exact tie that the path's
        /// run broke the other way).
        margin: f32,
        /// The reference scorer's `log π(expected) − log π(chosen)` at the same state (≥ 0
        /// when the reference also prefers the path's edit), if one was given.
        reference_margin: Option<f32>,
    },
    /// The scorer followed the path, but the episode's end differs from the path's: it ended
    /// at `step` (the label flipped, the budget or the candidates ran out) while the path goes
    /// on, or the path ends at `step` and the episode does not (or ends with another outcome).
    Verdict {
        /// Edits made when the outcomes part.
        step: usize,
        /// Whether the episode had ended at `step`.
        episode_done: bool,
        /// Whether the target's label had flipped at `step`.
        flipped: bool,
        /// Whether the outcomes part over the target's label (the episode flipped where the
        /// path goes on, or the path flipped where the episode did not), rather than over the
        /// budget or the candidates running out (another configuration).
        label_differs: bool,
        /// The target's log-probability margin between its two most likely classes at `step`
        /// (small: the verdict is a near-tie of the black box).
        class_margin: f32,
    },
    /// The path's edit at `step` is not a candidate of the episode (another neighbourhood or
    /// environment configuration): the path cannot be replayed.
    NotPlayable {
        /// Index (from 0) of the step.
        step: usize,
        /// The path's edit.
        edit: Edit,
    },
}

impl Divergence {
    /// True when the paths part at a choice whose margin is at most `tolerance` times the
    /// larger magnitude of the two log-probabilities (at least 1): a tie within float rounding
    /// for a small `tolerance` (e.g. `1e-4` for another summation order in f32, `2e-3` for TF32
    /// products), or at a verdict whose class margin is at most `tolerance`.
    ///
    /// ```
    /// use induce_rl::divergence::Divergence;
    /// use induce_rl::Edit;
    /// let d = Divergence::Choice {
    ///     step: 0, expected: Edit::add(1, 2), chosen: Edit::add(1, 3),
    ///     chosen_log_prob: -2.0, expected_log_prob: -2.00001, margin: 1e-5,
    ///     reference_margin: Some(2e-6),
    /// };
    /// assert!(d.is_tie(1e-4));
    /// assert!(!d.is_tie(1e-6));
    /// assert!(!Divergence::None.is_tie(1.0));
    /// ```
    pub fn is_tie(&self, tolerance: f32) -> bool {
        match *self {
            Self::Choice {
                chosen_log_prob,
                expected_log_prob,
                margin,
                ..
            } => {
                let scale = chosen_log_prob.abs().max(expected_log_prob.abs()).max(1.0);
                margin <= tolerance * scale
            }
            Self::Verdict {
                label_differs,
                class_margin,
                ..
            } => label_differs && class_margin <= tolerance,
            Self::None | Self::NotPlayable { .. } => false,
        }
    }
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::None => write!(f, "the replay follows the path"),
            Self::Choice {
                step,
                expected,
                chosen,
                chosen_log_prob,
                expected_log_prob,
                margin,
                reference_margin,
            } => {
                write!(
                    f,
                    "step {step}: chose {chosen} (log π {chosen_log_prob:.7}) over {expected} \
                     ({expected_log_prob:.7}), margin {margin:.3e}"
                )?;
                if let Some(r) = reference_margin {
                    write!(
                        f,
                        "; the reference scorer's log π({expected}) − log π({chosen}) = {r:.3e}"
                    )?;
                }
                Ok(())
            }
            Self::Verdict {
                step,
                episode_done,
                flipped,
                class_margin,
                ..
            } => write!(
                f,
                "after {step} edits the episode {} (flipped: {flipped}); class margin \
                 {class_margin:.3e}",
                if *episode_done {
                    "has ended"
                } else {
                    "goes on"
                }
            ),
            Self::NotPlayable { step, edit } => {
                write!(f, "step {step}: {edit} is not a candidate")
            }
        }
    }
}

/// Replays `path` (edits in original ids, in order, ending the run that produced them; `found`:
/// whether that run flipped the label) in `ep` from its start with `policy`'s greedy choices,
/// and returns the first [`Divergence`]. `reference`, if given, scores the divergent state too
/// (e.g. the host kernel beside a GPU's Burn kernel) for [`Divergence::Choice`]'s
/// `reference_margin`.
///
/// The episode is reset first and left at the divergent state.
///
/// Errors: those of the scorers and of [`Episode::step`].
pub fn first_divergence(
    policy: &KernelPolicy,
    reference: Option<&KernelPolicy>,
    ep: &mut Episode<'_>,
    path: &[Edit],
    found: bool,
) -> Result<Divergence> {
    ep.reset();
    let scorer = policy.bind(ep)?;
    let reference = reference.map(|r| r.bind(ep)).transpose()?;
    for (step, &expected) in path.iter().enumerate() {
        if ep.is_done() {
            // The path goes on: the label flipped early, or the episode ran out of budget or
            // candidates.
            let label_differs = ep.is_flipped();
            return Ok(verdict(ep, step, label_differs));
        }
        let Some(want) = candidate_index(ep, expected) else {
            return Ok(Divergence::NotPlayable {
                step,
                edit: expected,
            });
        };
        let logp = scorer(ep)?;
        let got = argmax(&logp);
        if got != want {
            return choice(ep, step, expected, &logp, got, want, reference.as_ref());
        }
        ep.step(want)?;
    }
    if !ep.is_done() || ep.is_flipped() != found {
        return Ok(verdict(ep, path.len(), ep.is_flipped() != found));
    }
    Ok(Divergence::None)
}

/// The index of `edit` among the episode's candidates (either orientation, same kind).
fn candidate_index(ep: &Episode<'_>, edit: Edit) -> Option<usize> {
    let sub = ep.subgraph();
    let c = ep.candidates();
    (0..c.len()).find(|&i| {
        let (u, w, kind) = c.get(i);
        let (u, w) = (sub.global_of(u as usize), sub.global_of(w as usize));
        kind.edit_kind() == Some(edit.kind)
            && ((u, w) == (edit.u, edit.w) || (w, u) == (edit.u, edit.w))
    })
}

/// The candidate at `i` as an edit in original ids (an error for a feature action: the
/// authors' explanations edit edges only).
fn edit_at(ep: &Episode<'_>, i: usize) -> Result<Edit> {
    let (u, w, kind) = ep.candidates().get(i);
    let sub = ep.subgraph();
    let Some(kind) = kind.edit_kind() else {
        return Err(crate::error::RlError::InvalidConfig(format!(
            "target {}: the divergence from a reference is over edge edits only",
            ep.target()
        )));
    };
    Ok(Edit {
        u: sub.global_of(u as usize),
        w: sub.global_of(w as usize),
        kind,
    })
}

fn choice(
    ep: &Episode<'_>,
    step: usize,
    expected: Edit,
    logp: &[f32],
    got: usize,
    want: usize,
    reference: Option<&Scorer<'_>>,
) -> Result<Divergence> {
    let reference_margin = match reference {
        Some(r) => {
            let l = r(ep)?;
            Some(l[want] - l[got])
        }
        None => None,
    };
    Ok(Divergence::Choice {
        step,
        expected,
        chosen: edit_at(ep, got)?,
        chosen_log_prob: logp[got],
        expected_log_prob: logp[want],
        margin: logp[got] - logp[want],
        reference_margin,
    })
}

fn verdict(ep: &Episode<'_>, step: usize, label_differs: bool) -> Divergence {
    let row = ep.judge().target_row();
    let mut sorted: Vec<f32> = row.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let class_margin = match sorted.as_slice() {
        [a, b, ..] => a - b,
        _ => f32::INFINITY,
    };
    Divergence::Verdict {
        step,
        episode_done: ep.is_done(),
        flipped: ep.is_flipped(),
        label_differs,
        class_margin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{EnvConfig, state_dim};
    use crate::induce::explain_greedy;
    use induce_graph::{Features, Graph};
    use induce_models::testing::test_device;
    use induce_models::{BlackBox, Kernel, LogProbs, PolicyConfig, Result as ModelResult};

    /// Two classes by degree: class 1 with probability 0.75 at degree 5, class 0 otherwise (so any
    /// edit at the hub below flips it).
    struct Busy;

    impl BlackBox for Busy {
        fn input_dim(&self) -> usize {
            2
        }
        fn num_classes(&self) -> usize {
            2
        }
        fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> ModelResult<LogProbs> {
            let deg = induce_models::testing::degrees(x.num_nodes(), edges);
            let (hi, lo) = (0.75f32.ln(), 0.25f32.ln());
            let data = deg
                .iter()
                .flat_map(|&d| if d == 5 { [lo, hi] } else { [hi, lo] })
                .collect();
            LogProbs::new(x.num_nodes(), 2, data)
        }
    }

    /// A hub (node 0, degree 5) in a small graph with varied features.
    ///
    /// ```text
    ///   5 ─ 1   2 ─ 6
    ///        \ /
    ///    7 ─ 0 ─ 3
    ///        |
    ///        4 ─ 8
    /// ```
    fn graph() -> Graph {
        let n = 9;
        let x = (0..n)
            .flat_map(|i| [i as f32 / 3.0, (i % 4) as f32])
            .collect();
        let edges = [
            (0, 1),
            (0, 2),
            (0, 3),
            (0, 4),
            (0, 7),
            (1, 5),
            (2, 6),
            (4, 8),
        ];
        Graph::from_edges(n, &edges, Features::new(n, 2, x).unwrap(), vec![0; n]).unwrap()
    }

    fn policy(seed: u64, kernel: Kernel) -> KernelPolicy {
        let dev = test_device().unwrap();
        let p = PolicyConfig::new(state_dim(2, 2))
            .with_init_seed(seed)
            .init(&dev);
        KernelPolicy::new(&p, kernel, &dev)
    }

    #[test]
    fn a_greedy_run_replays_without_divergence() {
        let g = graph();
        let env = EnvConfig::default();
        for kernel in Kernel::ALL {
            let p = policy(1, kernel);
            let e = explain_greedy(&p, &g, &Busy, 0, &env).unwrap();
            assert!(e.found && !e.edits.is_empty(), "{e:?}");
            let mut ep = Episode::new(&g, &Busy, 0, &env).unwrap();
            let d = first_divergence(&p, None, &mut ep, &e.edits, e.found).unwrap();
            assert_eq!(d, Divergence::None, "{kernel:?}");
            // The path cut short: the label has not flipped where it ends.
            let cut = &e.edits[..e.edits.len() - 1];
            let d = first_divergence(&p, None, &mut ep, cut, true).unwrap();
            match d {
                Divergence::Verdict {
                    step,
                    episode_done,
                    flipped,
                    label_differs,
                    class_margin,
                } => {
                    assert_eq!((step, episode_done, flipped), (cut.len(), false, false));
                    assert!(label_differs, "the path flipped here, the episode did not");
                    assert!((class_margin - (0.75f32.ln() - 0.25f32.ln())).abs() < 1e-6);
                }
                other => panic!("{other:?}"),
            }
            // One edit too many: the episode ends (flipped) before the path does.
            let mut long = e.edits.clone();
            long.push(long[0]);
            let d = first_divergence(&p, None, &mut ep, &long, true).unwrap();
            assert!(
                matches!(d, Divergence::Verdict { step, episode_done: true, flipped: true, .. }
                    if step == e.edits.len()),
                "{d:?}"
            );
        }
    }

    #[test]
    fn another_policy_s_path_diverges_at_its_first_other_choice() {
        let g = graph();
        let env = EnvConfig::default();
        let a = policy(1, Kernel::Host);
        let ea = explain_greedy(&a, &g, &Busy, 0, &env).unwrap();
        let mut compared = 0;
        for seed in 2..40 {
            let b = policy(seed, Kernel::Host);
            let eb = explain_greedy(&b, &g, &Busy, 0, &env).unwrap();
            let mut ep = Episode::new(&g, &Busy, 0, &env).unwrap();
            let d = first_divergence(&a, Some(&b), &mut ep, &eb.edits, eb.found).unwrap();
            let Some(s) = ea.edits.iter().zip(&eb.edits).position(|(x, y)| x != y) else {
                continue;
            };
            match d {
                Divergence::Choice {
                    step,
                    expected,
                    chosen,
                    chosen_log_prob,
                    expected_log_prob,
                    margin,
                    reference_margin,
                } => {
                    assert_eq!((step, expected, chosen), (s, eb.edits[s], ea.edits[s]));
                    assert_eq!(margin, chosen_log_prob - expected_log_prob);
                    assert!(margin >= 0.0);
                    // b chose its own edit greedily at that state.
                    assert!(reference_margin.unwrap() >= 0.0);
                    assert_eq!(ep.num_edits(), s, "left at the divergent state");
                    assert!(d.is_tie(f32::INFINITY));
                    assert_eq!(d.is_tie(0.0), margin == 0.0);
                    assert!(d.to_string().contains(&format!("step {s}")), "{d}");
                }
                other => panic!("seed {seed}: {other:?}"),
            }
            compared += 1;
        }
        assert!(compared >= 5, "only {compared} policies chose another path");
    }

    #[test]
    fn an_edit_that_is_no_candidate_is_not_playable() {
        let g = graph();
        let env = EnvConfig::default();
        let p = policy(1, Kernel::Host);
        let mut ep = Episode::new(&g, &Busy, 0, &env).unwrap();
        let bogus = Edit::delete(5, 6);
        let d = first_divergence(&p, None, &mut ep, &[bogus], true).unwrap();
        assert_eq!(
            d,
            Divergence::NotPlayable {
                step: 0,
                edit: bogus
            }
        );
        assert!(!d.is_tie(1.0));
    }
}
