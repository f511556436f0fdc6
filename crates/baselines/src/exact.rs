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

use induce_explain::{
    Certified, Edit, EditKind, ExplainError, Explainer, Explanation, FeatureEdit, Result,
};
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
    /// Search edge edits (default true; `--edits feat` searches the features only).
    #[serde(skip_serializing_if = "crate::greedy::is_true")]
    pub edges: bool,
    /// Search feature edits too (`--edits …,feat`), as greedy's: flips of the target's 0/1
    /// feature entries; the minimum is then certified in total edits (edges and features).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub features: bool,
    /// Feature columns no feature edit may change (`--lock-features`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub locked_features: Vec<u32>,
    /// Whose features may be flipped (`--feature-nodes`; default the target's own row).
    #[serde(skip_serializing_if = "crate::features::is_target")]
    pub feature_nodes: crate::FeatureNodes,
    /// Quantile levels of a continuous column's candidate values (`--feature-quantiles`), as
    /// greedy's.
    #[serde(
        default = "crate::features::default_quantiles",
        skip_serializing_if = "crate::features::is_default_quantiles"
    )]
    pub feature_quantiles: usize,
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
            edges: true,
            features: false,
            locked_features: Vec::new(),
            feature_nodes: crate::FeatureNodes::Target,
            feature_quantiles: crate::features::DEFAULT_FEATURE_QUANTILES,
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
        if !self.edges && !self.features {
            return Err(ExplainError::InvalidConfig(
                "exact: neither edge nor feature edits to search".into(),
            ));
        }
        if self.feature_quantiles < 2 {
            return Err(ExplainError::InvalidConfig(format!(
                "exact: feature_quantiles = {}: a continuous column needs at least 2 quantile \
                 levels (its minimum and maximum)",
                self.feature_quantiles
            )));
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
        // The actions: the edge actions (indices below `ne`), then the feature flips.
        let actions: &[Edit] = if c.edges { &space.actions } else { &[] };
        let ne = actions.len();
        let feats = crate::features::search_actions(
            graph,
            target,
            layers,
            crate::features::feature_settings!(c),
            &self.search.values,
        )?;
        let total = ne + feats.len();
        // A set's edge edits and feature edits.
        let split = |set: &[usize]| -> (Vec<Edit>, Vec<FeatureEdit>) {
            let edits = set
                .iter()
                .filter(|&&i| i < ne)
                .map(|&i| actions[i])
                .collect();
            let flips = (set.iter().filter(|&&i| i >= ne))
                .map(|&i| feats[i - ne].edit(graph))
                .collect();
            (edits, flips)
        };
        let done = |set: &[usize], label: usize, certified: Certified, calls: u64| {
            let (edits, feature_edits) = match c.goal.reached(y, label) {
                true => split(set),
                false => (Vec::new(), Vec::new()),
            };
            Explanation {
                feature_edits,
                target,
                found: c.goal.reached(y, label),
                original_label: y,
                new_label: label,
                edits,
                evaluations: Some(calls),
                certified: Some(certified),
            }
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

        // A set's verdict: its edge edits, and the target's row with its flips.
        let judge = |oracle: &mut crate::action_space::TargetOracle<'_>, set: &[usize]| {
            let (edits, flips) = split(set);
            if flips.is_empty() {
                return oracle.row(&edits);
            }
            let rows = crate::features::edited_rows(graph, &flips);
            oracle.row_with_rows(&edits, &crate::features::as_rows(&rows))
        };
        // Size 1: every action that reaches the target alone (a flip of a feature within the
        // receptive field always does).
        let mut single = vec![f32::INFINITY; total];
        let mut best: Option<(f32, usize, usize)> = None;
        let ones: Vec<usize> = (0..total).filter(|&i| i >= ne || reachable[i]).collect();
        let room = c.max_evaluations.saturating_sub(oracle.calls());
        let asked = ones.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let edge_ones: Vec<usize> = ones[..asked].iter().copied().filter(|&i| i < ne).collect();
        let trials: Vec<[Edit; 1]> = edge_ones.iter().map(|&i| [actions[i]]).collect();
        let refs: Vec<&[Edit]> = trials.iter().map(|t| t.as_slice()).collect();
        let mut rows = oracle.rows(&refs)?;
        // The single feature edits, many per call for a black box that batches graphs.
        let singles: Vec<Vec<(u32, Vec<f32>)>> = (ones[..asked].iter())
            .filter(|&&i| i >= ne)
            .map(|&i| crate::features::edited_rows(graph, &[feats[i - ne].edit(graph)]))
            .collect();
        let refs: Vec<Vec<(u32, &[f32])>> = singles
            .iter()
            .map(|r| crate::features::as_rows(r))
            .collect();
        let with: Vec<crate::action_space::RowsTrial<'_>> =
            refs.iter().map(|r| (&[][..], r.as_slice())).collect();
        rows.extend(oracle.rows_with_rows(&with)?);
        if asked < ones.len() {
            let g = Certified::GaveUp {
                evaluations: oracle.calls(),
                none_up_to: 0,
            };
            return Ok(done(&[], y, g, oracle.calls()));
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
            return Ok(done(&[i], label, cert, oracle.calls()));
        }
        // Larger sizes over every action (an unreachable deletion may be reached through an
        // addition of the set), the most promising first.
        let mut order: Vec<usize> = (0..total).collect();
        order.sort_by(|&a, &b| single[a].total_cmp(&single[b]).then(a.cmp(&b)));
        for size in 2..=c.max_size.min(total) {
            let mut pick: Vec<usize> = (0..size).collect();
            let stop = loop {
                let set: Vec<usize> = pick.iter().map(|&p| order[p]).collect();
                let prunable = set.iter().any(|&i| {
                    i < ne
                        && actions[i].kind == EditKind::Delete
                        && !reachable[i]
                        && !set
                            .iter()
                            .any(|&a| a < ne && unlocks[a].binary_search(&i).is_ok())
                });
                let repeats = crate::features::repeats_an_entry(
                    set.iter().filter(|&&i| i >= ne).map(|&i| &feats[i - ne]),
                );
                if !prunable && !repeats {
                    if oracle.calls() >= c.max_evaluations {
                        break Some(Stop::Budget);
                    }
                    let label = argmax(&judge(&mut oracle, &set)?);
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
                    let cert = Certified::Minimum { size };
                    return Ok(done(&set, label, cert, oracle.calls()));
                }
                Some(Stop::Budget) => {
                    let g = Certified::GaveUp {
                        evaluations: oracle.calls(),
                        none_up_to: size - 1,
                    };
                    return Ok(done(&[], y, g, oracle.calls()));
                }
                None => {}
            }
        }
        let size = c.max_size.min(total);
        Ok(done(&[], y, Certified::NoneUpTo { size }, oracle.calls()))
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

    /// Feature edits: the minimum over the target's flips alone, and over edges and flips
    /// together, is certified against brute force (no single edit flips when the minimum is
    /// larger), never larger than greedy's, and flips the model on the whole edited graph.
    #[test]
    fn feature_minimums_are_certified_alone_and_with_edges() {
        use induce_explain::verdict::whole_graph_label_with_features;
        let (g, gcn) = crate::action_space::fixtures::binary_graph();
        let bound = induce_models::BoundBlackBox::new(&gcn, &g).unwrap();
        for (edges, features) in [(false, true), (true, true)] {
            let config = ExactConfig {
                max_size: 2,
                edges,
                features,
                ..ExactConfig::default()
            };
            let greedy = crate::GreedyExplainer::new(
                &bound,
                crate::GreedyConfig {
                    edges,
                    features,
                    ..crate::GreedyConfig::default()
                },
                EXACT,
            );
            let exact = ExactExplainer::new(&bound, config, EXACT);
            let mut certified = 0;
            for t in 0..g.num_nodes() as u32 {
                let e = exact.explain(&g, t).unwrap();
                let label = |edits: &[Edit], fe: &[FeatureEdit]| {
                    whole_graph_label_with_features(&g, &gcn, t, edits, fe).unwrap()
                };
                let total = e.size() + e.features_changed();
                if let Some(Certified::Minimum { size }) = e.certified {
                    certified += 1;
                    assert!(e.found && total == size, "{e:?}");
                    assert_eq!(label(&e.edits, &e.feature_edits), e.new_label);
                    assert!(edges || e.edits.is_empty(), "{e:?}");
                    let g_e = greedy.explain(&g, t).unwrap();
                    assert!(g_e.found && total <= g_e.size() + g_e.features_changed());
                    if size == 2 {
                        // No single flip of the target's row flips the model.
                        let x = g.features().row(t as usize);
                        for f in 0..x.len() as u32 {
                            let flip = FeatureEdit {
                                node: t,
                                feature: f,
                                old: x[f as usize],
                                new: 1.0 - x[f as usize],
                            };
                            assert_eq!(label(&[], &[flip]), e.original_label, "{e:?}");
                        }
                    }
                }
            }
            assert!(certified > 0, "edges {edges}, features {features}");
        }
    }

    /// Continuous features: every certified minimum sets each changed entry once, to one of
    /// its column's quantile levels; it flips the whole edited graph; a minimum of 2 means no
    /// single candidate value of the target's row flips (brute force); and more levels never
    /// give a larger minimum (K = 5's levels hold K = 2's, the column's extremes).
    #[test]
    fn continuous_feature_minimums_use_quantile_levels_and_are_certified() {
        use crate::features::{ColumnValues, FeatureValues};
        use induce_explain::verdict::whole_graph_label_with_features;
        let (g, gcn) = crate::action_space::fixtures::continuous_graph();
        let bound = induce_models::BoundBlackBox::new(&gcn, &g).unwrap();
        let values = FeatureValues::of(g.features(), 5).unwrap();
        assert_eq!(values.column(0), &ColumnValues::Binary);
        assert!(matches!(values.column(1), ColumnValues::Levels(v) if v.len() == 5));
        let config = |k| ExactConfig {
            max_size: 2,
            edges: false,
            features: true,
            feature_quantiles: k,
            ..ExactConfig::default()
        };
        let five = ExactExplainer::new(&bound, config(5), EXACT);
        let two = ExactExplainer::new(&bound, config(2), EXACT);
        let (mut pairs, mut certified) = (0, 0);
        for t in 0..g.num_nodes() as u32 {
            let e = five.explain(&g, t).unwrap();
            let label =
                |fe: &[FeatureEdit]| whole_graph_label_with_features(&g, &gcn, t, &[], fe).unwrap();
            let Some(Certified::Minimum { size }) = e.certified else {
                continue;
            };
            certified += 1;
            assert_eq!(label(&e.feature_edits), e.new_label, "{e:?}");
            assert_eq!(e.features_changed(), size);
            for (i, f) in e.feature_edits.iter().enumerate() {
                assert!(
                    values.candidates(f.feature, f.old).any(|v| v == f.new),
                    "{f:?}"
                );
                assert!(e.feature_edits[..i].iter().all(|o| o.feature != f.feature));
            }
            if size == 2 {
                pairs += 1;
                let x = g.features().row(t as usize);
                for f in 0..x.len() as u32 {
                    for new in values.candidates(f, x[f as usize]) {
                        let old = x[f as usize];
                        let one = FeatureEdit {
                            node: t,
                            feature: f,
                            old,
                            new,
                        };
                        assert_eq!(label(&[one]), e.original_label, "{e:?}");
                    }
                }
            }
            let e2 = two.explain(&g, t).unwrap();
            if let Some(Certified::Minimum { size: s2 }) = e2.certified {
                assert!(size <= s2, "{e:?} {e2:?}");
            }
        }
        assert!(certified > 0 && pairs > 0, "{certified} {pairs}");
        let bad = ExactExplainer::new(&bound, config(1), EXACT).explain(&g, 0);
        assert!(matches!(bad, Err(ExplainError::InvalidConfig(m)) if m.contains("quantile")));
    }

    /// On the receptive field's features: every minimum is at most the target-only one (a
    /// larger action space), flips the whole edited graph, and some use a neighbour's features.
    #[test]
    fn field_feature_minimums_are_never_larger_than_the_targets_own() {
        use induce_explain::verdict::whole_graph_label_with_features;
        let (g, gcn) = crate::action_space::fixtures::binary_graph();
        let bound = induce_models::BoundBlackBox::new(&gcn, &g).unwrap();
        let config = |nodes| ExactConfig {
            max_size: 2,
            edges: false,
            features: true,
            feature_nodes: nodes,
            ..ExactConfig::default()
        };
        let own = ExactExplainer::new(&bound, config(crate::FeatureNodes::Target), EXACT);
        let field = ExactExplainer::new(&bound, config(crate::FeatureNodes::Field), EXACT);
        let (mut smaller_or_equal, mut elsewhere) = (0, 0);
        for t in 0..g.num_nodes() as u32 {
            let (a, b) = (own.explain(&g, t).unwrap(), field.explain(&g, t).unwrap());
            if let Some(Certified::Minimum { size }) = a.certified {
                assert!(b.found && b.features_changed() <= size, "{a:?} {b:?}");
                smaller_or_equal += 1;
            }
            if b.found {
                let now = whole_graph_label_with_features(&g, &gcn, t, &[], &b.feature_edits);
                assert_eq!(now.unwrap(), b.new_label);
                elsewhere += usize::from(b.feature_edits.iter().any(|f| f.node != t));
            }
        }
        assert!(
            smaller_or_equal > 0 && elsewhere > 0,
            "{smaller_or_equal} {elsewhere}"
        );
    }

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
