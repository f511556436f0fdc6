//! `exact`: the certified minimum. Every edit set of InduCE's action space is tried by size,
//! 1, 2, … up to `max_size`, each judged by the black box's exact verdict; the first size at
//! which one flips the target is the minimum, and every record says what was proved
//! ([`Certified`]).
//!
//! The search stays exact with two prunings, neither of which can skip a counterfactual:
//! - **Symmetry:** each set is tried once (combinations, not orders).
//! - **Receptive field:** a set that holds a deletion that cannot reach the target once the
//!   set's additions are made ([`Reach`]) gives the same prediction as the set without it,
//!   which the smaller size already tried; it is skipped unevaluated.
//!
//! Within a size, sets are tried in the order of their actions' single-edit margins (the most
//! promising first), so a counterfactual, when there is one, is usually met early.

use induce_explain::{Certified, Edit, EditKind, ExplainError, Explainer, Explanation, Result};
use induce_explain::{Goal, Locked, Protocol};
use induce_graph::Graph;
use induce_models::BlackBox;
use serde::{Deserialize, Serialize};

use crate::action_space::{Additions, Reach, argmax};
use crate::greedy::{SearchStart, Searcher, check_additions, space_settings};

/// Settings of [`ExactExplainer`].
///
/// ```
/// use induce_baselines::ExactConfig;
/// let c = ExactConfig::default();
/// assert_eq!((c.hops, c.max_size, c.max_evaluations), (4, 3, 1_000_000));
/// # let p = induce_explain::Protocol::exact(4);
/// assert!(ExactConfig { max_size: 0, ..c.clone() }.validate(p).is_err());
/// assert!(ExactConfig { max_evaluations: 0, ..c }.validate(p).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExactConfig {
    /// Radius `h` of the neighbourhood the actions range over (InduCE's 4; widened to the black
    /// box's receptive field, `L + 1`, under exact verdicts).
    pub hops: u32,
    /// The largest size searched (`--max-size`).
    pub max_size: usize,
    /// Give up on a target after this many evaluations (`--max-evaluations`).
    pub max_evaluations: u64,
    /// Where additions may go (default the neighbourhood, the paper's action space).
    pub additions: Additions,
    /// With [`Additions::Graph`]: how many nodes outside the neighbourhood are offered.
    pub graph_candidates: usize,
    /// Nodes and pairs no edit may touch (default none): the minimum is certified within the
    /// action space that is left.
    #[serde(skip_serializing_if = "Locked::is_empty")]
    pub locked: Locked,
    /// What a counterfactual must reach (default any other class; `--to-class`).
    #[serde(skip_serializing_if = "Goal::is_any_other")]
    pub goal: Goal,
}

impl Default for ExactConfig {
    fn default() -> Self {
        Self {
            hops: 4,
            max_size: 3,
            max_evaluations: 1_000_000,
            additions: Additions::Ball,
            graph_candidates: 256,
            locked: Locked::default(),
            goal: Goal::AnyOther,
        }
    }
}

impl ExactConfig {
    /// Checks the settings under the run's `protocol`, naming the one at fault.
    pub fn validate(&self, protocol: Protocol) -> Result<()> {
        if self.max_size == 0 {
            return Err(ExplainError::InvalidConfig(
                "exact: max_size = 0: at least the single edits must be searched".into(),
            ));
        }
        if self.max_evaluations == 0 {
            return Err(ExplainError::InvalidConfig(
                "exact: max_evaluations = 0: nothing could be evaluated".into(),
            ));
        }
        check_additions(self.additions, protocol.verdict, "exact")
    }
}

/// The certified-minimum search (see the module docs).
///
/// ```
/// use induce_baselines::{ExactConfig, ExactExplainer};
/// use induce_explain::{Certified, Explainer};
/// use induce_graph::{Features, Graph};
/// use induce_models::testing::DegreeAtLeast;
///
/// //  a star: 0 ─ 1..5; node 0 (degree 5) needs 3 deletions to fall below 3
/// let edges: Vec<(u32, u32)> = (1..6).map(|w| (0, w)).collect();
/// let g = Graph::from_edges(6, &edges, Features::constant(6, 1, 1.0), vec![0; 6]).unwrap();
/// let x = ExactExplainer::new(&DegreeAtLeast(3), ExactConfig::default(), induce_explain::Protocol::exact(4));
/// let e = x.explain(&g, 0).unwrap();
/// assert!(e.found && e.size() == 3);
/// assert_eq!(e.certified, Some(Certified::Minimum { size: 3 }));
/// let two = ExactExplainer::new(&DegreeAtLeast(3), ExactConfig { max_size: 2, ..ExactConfig::default() }, induce_explain::Protocol::exact(4));
/// assert_eq!(two.explain(&g, 0).unwrap().certified, Some(Certified::NoneUpTo { size: 2 }));
/// ```
pub struct ExactExplainer<'a> {
    search: Searcher<'a>,
    config: ExactConfig,
}

impl<'a> ExactExplainer<'a> {
    /// The search judged by `black_box` with the run's `protocol`'s verdicts (a minimum needs
    /// no minimality pass).
    pub fn new(black_box: &'a dyn BlackBox, config: ExactConfig, protocol: Protocol) -> Self {
        Self {
            search: Searcher::new(black_box, protocol),
            config,
        }
    }
}

/// Why a size's enumeration stopped.
enum Stop {
    /// A counterfactual: the actions (indices) and the new label.
    Found(Vec<usize>, usize),
    /// The evaluation budget ran out.
    Budget,
}

impl Explainer for ExactExplainer<'_> {
    fn name(&self) -> &str {
        "exact"
    }

    fn neighbourhood_hops(&self) -> Option<u32> {
        Some(self.search.search_hops(self.config.hops))
    }

    fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation> {
        let c = &self.config;
        c.validate(self.search.protocol)?;
        let SearchStart {
            space,
            mut oracle,
            y,
            layers,
            ..
        } = self.search.start(graph, target, space_settings!(c))?;
        let actions = &space.actions;
        let done = |edits: Vec<Edit>, label: usize, certified: Certified, calls: u64| Explanation {
            feature_edits: Vec::new(),
            target,
            found: c.goal.reached(y, label),
            original_label: y,
            new_label: label,
            edits: if c.goal.reached(y, label) {
                edits
            } else {
                Vec::new()
            },
            evaluations: Some(calls),
            certified: Some(certified),
        };
        // Which deletions each addition brings within reach (beyond those already reached).
        let base = Reach::new(graph, target, layers, &[]);
        let deletions: Vec<usize> = (0..actions.len())
            .filter(|&i| actions[i].kind == EditKind::Delete)
            .collect();
        let unlocks: Vec<Vec<usize>> = actions
            .iter()
            .map(|a| match a.kind {
                EditKind::Delete => Vec::new(),
                EditKind::Add => {
                    let r = Reach::new(graph, target, layers, &[*a]);
                    deletions
                        .iter()
                        .copied()
                        .filter(|&d| !base.relevant(&actions[d]) && r.relevant(&actions[d]))
                        .collect()
                }
            })
            .collect();
        let reachable: Vec<bool> = actions.iter().map(|a| base.relevant(a)).collect();

        // Size 1: every action that reaches the target alone.
        let mut single = vec![f32::INFINITY; actions.len()];
        let mut best: Option<(f32, usize, usize)> = None;
        let ones: Vec<usize> = (0..actions.len()).filter(|&i| reachable[i]).collect();
        let room = c.max_evaluations.saturating_sub(oracle.calls());
        let asked = ones.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let trials: Vec<[Edit; 1]> = ones[..asked].iter().map(|&i| [actions[i]]).collect();
        let refs: Vec<&[Edit]> = trials.iter().map(|t| t.as_slice()).collect();
        let rows = oracle.rows(&refs)?;
        if asked < ones.len() {
            let g = Certified::GaveUp {
                evaluations: oracle.calls(),
                none_up_to: 0,
            };
            return Ok(done(Vec::new(), y, g, oracle.calls()));
        }
        for (&i, row) in ones.iter().zip(rows) {
            let (label, m) = (argmax(&row), c.goal.margin(&row, y));
            single[i] = m;
            if c.goal.reached(y, label) && best.is_none_or(|b| m < b.0) {
                best = Some((m, i, label));
            }
        }
        if let Some((_, i, label)) = best {
            let cert = Certified::Minimum { size: 1 };
            return Ok(done(vec![actions[i]], label, cert, oracle.calls()));
        }
        // Larger sizes over every action (an unreachable deletion may be reached through an
        // addition of the set), the most promising first.
        let mut order: Vec<usize> = (0..actions.len()).collect();
        order.sort_by(|&a, &b| single[a].total_cmp(&single[b]).then(a.cmp(&b)));
        for size in 2..=c.max_size.min(actions.len()) {
            let mut pick: Vec<usize> = (0..size).collect();
            let mut edits: Vec<Edit> = Vec::with_capacity(size);
            let stop = loop {
                let set: Vec<usize> = pick.iter().map(|&p| order[p]).collect();
                let prunable = set.iter().any(|&i| {
                    actions[i].kind == EditKind::Delete
                        && !reachable[i]
                        && !set.iter().any(|&a| unlocks[a].binary_search(&i).is_ok())
                });
                if !prunable {
                    if oracle.calls() >= c.max_evaluations {
                        break Some(Stop::Budget);
                    }
                    edits.clear();
                    edits.extend(set.iter().map(|&i| actions[i]));
                    let label = argmax(&oracle.row(&edits)?);
                    if c.goal.reached(y, label) {
                        let mut set = set;
                        set.sort_unstable();
                        break Some(Stop::Found(set, label));
                    }
                }
                if !next_combination(&mut pick, order.len()) {
                    break None;
                }
            };
            match stop {
                Some(Stop::Found(set, label)) => {
                    let edits = set.iter().map(|&i| actions[i]).collect();
                    let cert = Certified::Minimum { size };
                    return Ok(done(edits, label, cert, oracle.calls()));
                }
                Some(Stop::Budget) => {
                    let g = Certified::GaveUp {
                        evaluations: oracle.calls(),
                        none_up_to: size - 1,
                    };
                    return Ok(done(Vec::new(), y, g, oracle.calls()));
                }
                None => {}
            }
        }
        let size = c.max_size.min(actions.len());
        Ok(done(
            Vec::new(),
            y,
            Certified::NoneUpTo { size },
            oracle.calls(),
        ))
    }
}

/// Advances `pick` (strictly increasing indices below `n`) to the next combination in
/// lexicographic order; false after the last.
fn next_combination(pick: &mut [usize], n: usize) -> bool {
    let k = pick.len();
    let mut i = k;
    while i > 0 {
        i -= 1;
        if pick[i] < n - k + i {
            pick[i] += 1;
            for j in i + 1..k {
                pick[j] = pick[j - 1] + 1;
            }
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    /// The default protocol (the baselines search their own radius).
    const EXACT: induce_explain::Protocol = induce_explain::Protocol::exact(4);
    use super::*;
    use crate::action_space::fixtures::GradedDegree;
    use induce_explain::oracle::counted;
    use induce_graph::Features;

    #[test]
    fn combinations_are_enumerated_once_each() {
        let mut pick = vec![0, 1];
        let mut all = vec![pick.clone()];
        while next_combination(&mut pick, 4) {
            all.push(pick.clone());
        }
        assert_eq!(all.len(), 6);
        assert_eq!(all.last().unwrap(), &[2, 3]);
    }

    /// A star 0 ─ 1..6 with a tail 6 ─ 7 ─ 8 ─ 9.
    fn star() -> Graph {
        let mut edges: Vec<(u32, u32)> = (1..7).map(|w| (0, w)).collect();
        edges.extend([(6, 7), (7, 8), (8, 9)]);
        Graph::from_edges(10, &edges, Features::constant(10, 1, 1.0), vec![0; 10]).unwrap()
    }

    #[test]
    fn the_minimum_is_certified_and_matches_brute_force() {
        // Class 1 needs degree ≥ 5: the centre (6) needs 2 deletions.
        let bb = GradedDegree(5);
        let x = ExactExplainer::new(&bb, ExactConfig::default(), EXACT);
        let (e, n) = counted(|| x.explain(&star(), 0).unwrap());
        assert!(e.found);
        assert_eq!(e.size(), 2);
        assert_eq!(e.certified, Some(Certified::Minimum { size: 2 }));
        assert!(
            e.edits
                .iter()
                .all(|d| d.kind == EditKind::Delete && d.u == 0)
        );
        // L = 0: the single edits that reach the centre are the 3 additions (to 7, 8, 9, all
        // within 4 hops) and the 6 spokes; the first pair tried is two spokes (the lowest
        // single margins) and flips: the original verdict, 9 singles and 1 pair.
        assert_eq!(e.evaluations, Some(1 + 9 + 1));
        assert_eq!(n, 1 + 9 + 1);
        // A batching model: the 9 singles in one call, the same certificate and evaluations.
        let batching = induce_models::testing::Batching::new(GradedDegree(5));
        let b = ExactExplainer::new(&batching, ExactConfig::default(), EXACT);
        assert_eq!(b.explain(&star(), 0).unwrap(), e);
        assert_eq!(batching.calls(), (3, 11));
        let tight = ExactConfig {
            max_evaluations: 5,
            ..ExactConfig::default()
        };
        let plain = ExactExplainer::new(&bb, tight.clone(), EXACT).explain(&star(), 0);
        assert_eq!(
            ExactExplainer::new(&batching, tight, EXACT)
                .explain(&star(), 0)
                .unwrap(),
            plain.unwrap()
        );
    }

    #[test]
    fn budget_and_size_limits_are_reported() {
        // Degree ≥ 2 for a leaf (degree 1) means one addition: minimum 1.
        let bb = GradedDegree(2);
        let leaf = ExactExplainer::new(&bb, ExactConfig::default(), EXACT)
            .explain(&star(), 1)
            .unwrap();
        assert_eq!(leaf.certified, Some(Certified::Minimum { size: 1 }));
        assert_eq!(leaf.edits[0].kind, EditKind::Add);
        // The centre with degree ≥ 0 can never flip.
        let never = GradedDegree(0);
        let x = ExactExplainer::new(
            &never,
            ExactConfig {
                max_size: 2,
                ..ExactConfig::default()
            },
            EXACT,
        );
        let e = x.explain(&star(), 0).unwrap();
        assert!(!e.found && e.edits.is_empty());
        assert_eq!(e.certified, Some(Certified::NoneUpTo { size: 2 }));
        let tight = ExactExplainer::new(
            &never,
            ExactConfig {
                max_evaluations: 5,
                ..ExactConfig::default()
            },
            EXACT,
        );
        let e = tight.explain(&star(), 0).unwrap();
        assert_eq!(
            e.certified,
            Some(Certified::GaveUp {
                evaluations: 5,
                none_up_to: 0
            })
        );
    }
}
