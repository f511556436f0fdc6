//! The minimality pass: undo every edit of a counterfactual that the flip does not need, until
//! the counterfactual is 1-minimal. Works on any explainer's output ([`Minimised`] wraps one).

use induce_graph::{Graph, k_hop};
use induce_models::BlackBox;
use induce_models::black_box::batched::{VerdictBatch, VerdictRequest};

use crate::error::Result;
use crate::explanation::{EditKind, Explainer, Explanation};
use crate::goal::Goal;
use crate::verdict::{Judge, Verdict};

/// A counterfactual's edits with the black box ready to judge any subset of them (the rest
/// undone) where `verdict` says: the model's receptive field in the edited graph
/// ([`Verdict::Exact`]) or the target's frozen `hops`-hop neighbourhood
/// ([`Verdict::Neighbourhood`]). Shared by [`minimise`] and
/// [`is_one_minimal`](crate::metrics::is_one_minimal).
///
/// The [`Judge`] keeps the edits of the last query; the next query changes only the pairs it
/// switches, and an incremental black box recomputes only what they reach (each query of the
/// minimality pass switches one or two edits).
pub(crate) struct EditProbe<'a> {
    judge: Judge<'a>,
    explanation: Explanation,
}

impl<'a> EditProbe<'a> {
    /// The probe of `e` (computed on `graph`; with [`Verdict::Neighbourhood`], on its
    /// `hops`-hop neighbourhood).
    pub(crate) fn new(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        e: &Explanation,
        hops: u32,
        verdict: Verdict,
    ) -> Result<Self> {
        let judge = match verdict {
            Verdict::Exact => Judge::exact_target(graph, black_box, e.target)?,
            Verdict::Neighbourhood => {
                let start = k_hop(graph, e.target, hops)?.nodes;
                Judge::new(graph, black_box, e.target, &start, verdict)?
            }
        };
        Ok(Self {
            judge,
            explanation: e.clone(),
        })
    }

    /// Number of edits: the edge edits, then the feature edits.
    pub(crate) fn len(&self) -> usize {
        self.explanation.edits.len() + self.explanation.feature_edits.len()
    }

    /// The black box's label for the target with only the edits where `keep[i]` applied
    /// (`keep` runs over the edge edits, then the feature edits).
    pub(crate) fn label(&mut self, keep: &[bool]) -> Result<usize> {
        let e = &self.explanation;
        let (edges, features) = keep.split_at(e.edits.len().min(keep.len()));
        let (edges, features) = (kept(&e.edits, edges), kept(&e.feature_edits, features));
        self.judge.set_state(&edges, &features)?;
        Ok(self.judge.label())
    }
}

/// The items of `all` where `keep` is true.
fn kept<T: Copy>(all: &[T], keep: &[bool]) -> Vec<T> {
    (all.iter().zip(keep))
        .filter(|(_, k)| **k)
        .map(|(x, _)| *x)
        .collect()
}

/// Removes from the counterfactual `e` every edit the flip does not need: passes over the edits
/// in order (the edge edits, then the feature edits), undoing each one whose removal keeps the black box's label different from
/// `e.original_label`, judged where `verdict` says (see [`Verdict`]), until a pass undoes nothing. The result is 1-minimal
/// ([`is_one_minimal`](crate::metrics::is_one_minimal) holds), keeps the order of the remaining
/// edits, and `new_label` is the label with them. An explanation that is not a counterfactual is
/// returned unchanged.
///
/// Cost: at most `size²` black-box calls on the target's receptive field (usually `size` to
/// `2·size`), each incremental when the black box is.
///
/// ```
/// use induce_explain::{Edit, Explanation, Goal, Verdict, minimise};
/// use induce_graph::{Features, Graph};
/// use induce_models::testing::DegreeAtLeast;
///
/// //  0 ─ 1 ─ 2 ─ 3: node 1 has degree 2 (class 1); deleting either of its edges flips it.
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
///     vec![0; 4]).unwrap();
/// let two = Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 1, found: true, original_label: 1, new_label: 0,
///     edits: vec![Edit::delete(0, 1), Edit::delete(1, 2)] };
/// let one = minimise(&g, &DegreeAtLeast(2), &two, 3, Verdict::Exact, Goal::AnyOther).unwrap();
/// assert_eq!(one.edits, vec![Edit::delete(1, 2)]);
/// assert_eq!(one.new_label, 0);
/// ```
pub fn minimise(
    graph: &Graph,
    black_box: &dyn BlackBox,
    e: &Explanation,
    hops: u32,
    verdict: Verdict,
    goal: Goal,
) -> Result<Explanation> {
    let mut search = MinimalitySearch::new(e, goal);
    if search.is_done() {
        return Ok(search.result());
    }
    let mut probe = EditProbe::new(graph, black_box, e, hops, verdict)?;
    while let Some(keep) = search.query() {
        let label = probe.label(keep)?;
        search.answer(label);
    }
    Ok(search.result())
}

/// [`minimise`] for many counterfactuals at once with [`Verdict::Exact`], every query of a
/// round evaluated in one call of `verdicts` (the black box bound to `graph` for batched
/// evaluation, [`BlackBox::batched`]: e.g. the Burn GCN on a GPU, where the sequential pass
/// pays one device call per query). Each counterfactual's pass asks the same queries in the
/// same order as [`minimise`]'s, and each verdict is the target's row of the model on the whole
/// edited graph, so the results equal [`minimise`]'s up to float rounding in the verdicts.
/// Results are in `es`' order; an explanation that is not a counterfactual, or has one edit,
/// is returned unchanged. Edge edits only: a counterfactual with feature edits is an error
/// (minimise it with [`minimise`]).
///
/// `verdicts` must be the black box's own binding to `graph` (a verdict from another model would
/// minimise against that model). Errors: [`ExplainError::InvalidValue`](crate::ExplainError)
/// for a binding to a graph of another size; the batched call's, e.g.
/// [`induce_models::ModelError::InvalidInput`] for an edit with an endpoint outside the graph.
///
/// ```
/// use induce_explain::{Edit, Explanation, Goal, Verdict, minimise, minimise_batched};
/// use induce_graph::{Features, Graph};
/// use induce_models::{BlackBox, GcnBlackBox, GcnConfig, device::default_device};
/// let dev = default_device().unwrap();
/// //  0 ─ 1 ─ 2 ─ 3
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)],
///     Features::new(4, 1, vec![1., 2., 3., 4.]).unwrap(), vec![0; 4]).unwrap();
/// let bb = GcnBlackBox::new(GcnConfig::new(1, 2).init(&dev), &dev);
/// let label = bb.log_probs(g.features(), &g.edges()).unwrap().predictions()[1];
/// // Whatever the untrained model says, both passes agree on every explanation.
/// let es: Vec<Explanation> = [Edit::delete(0, 1), Edit::delete(1, 2), Edit::add(1, 3)]
///     .iter()
///     .map(|&e| Explanation { evaluations: None, certified: None, feature_edits: vec![],
///         target: 1, found: true, original_label: label,
///         new_label: 1 - label, edits: vec![e, Edit::add(0, 2)] })
///     .collect();
/// let batch = bb.batched(g.features(), &g.edges()).unwrap().unwrap();
/// let together = minimise_batched(&g, &es, &batch, Goal::AnyOther).unwrap();
/// for (e, t) in es.iter().zip(&together) {
///     assert_eq!(&minimise(&g, &bb, e, 3, Verdict::Exact, Goal::AnyOther).unwrap(), t);
/// }
/// ```
pub fn minimise_batched(
    graph: &Graph,
    es: &[Explanation],
    verdicts: &VerdictBatch<'_>,
    goal: Goal,
) -> Result<Vec<Explanation>> {
    if verdicts.num_nodes() != graph.num_nodes() {
        return Err(crate::ExplainError::InvalidValue {
            what: "batched verdicts",
            value: format!("a binding to {} nodes", verdicts.num_nodes()),
            reason: format!(
                "the graph has {} nodes: the binding must be the black box's to this graph",
                graph.num_nodes()
            ),
        });
    }
    if let Some(e) = es.iter().find(|e| !e.feature_edits.is_empty()) {
        return Err(crate::ExplainError::InvalidValue {
            what: "batched minimality pass",
            value: format!("target {}", e.target),
            reason: "batched verdicts judge edge edits only: minimise a counterfactual with \
                     feature edits with `minimise`"
                .into(),
        });
    }
    let mut searches: Vec<MinimalitySearch> =
        es.iter().map(|e| MinimalitySearch::new(e, goal)).collect();
    loop {
        let mut asking = Vec::new();
        let mut toggles = Vec::new();
        for (i, s) in searches.iter_mut().enumerate() {
            if s.query().is_some() {
                toggles.push(s.toggles(graph));
                asking.push(i);
            }
        }
        if asking.is_empty() {
            break;
        }
        let reads: Vec<[u32; 1]> = asking.iter().map(|&i| [es[i].target]).collect();
        let requests: Vec<VerdictRequest<'_>> = toggles
            .iter()
            .zip(&reads)
            .map(|(t, r)| VerdictRequest::whole(t, r))
            .collect();
        let rows = verdicts.evaluate(&requests)?;
        for (&i, row) in asking.iter().zip(&rows) {
            if row.num_nodes() != 1 || row.row(0).iter().any(|x| x.is_nan()) {
                return Err(crate::ExplainError::NanOutput {
                    target: es[i].target,
                    node: es[i].target,
                });
            }
            searches[i].answer(row.argmax(0));
        }
    }
    Ok(searches.into_iter().map(MinimalitySearch::result).collect())
}

/// [`minimise`]'s search without the black box: the caller evaluates each query
/// ([`MinimalitySearch::query`]: which edits to keep) and hands back the target's label with
/// them ([`MinimalitySearch::answer`]), so that the queries of many counterfactuals can be
/// evaluated together ([`minimise_batched`]).
///
/// Passes over the edits in order, undoing each one whose removal keeps the label different
/// from the original one, until a pass undoes nothing; never undoes the last edit.
#[derive(Debug, Clone)]
struct MinimalitySearch {
    e: Explanation,
    keep: Vec<bool>,
    /// The edit the pending query leaves out, or the next one to try.
    at: usize,
    /// Whether the current pass undid an edit.
    changed: bool,
    label: usize,
    /// What the kept edits must still reach.
    goal: Goal,
    /// A query awaits its answer.
    asked: bool,
    done: bool,
}

impl MinimalitySearch {
    fn new(e: &Explanation, goal: Goal) -> Self {
        Self {
            goal,
            keep: vec![true; e.edits.len() + e.feature_edits.len()],
            at: 0,
            changed: false,
            label: e.new_label,
            asked: false,
            done: !e.found || e.edits.len() + e.feature_edits.len() < 2,
            e: e.clone(),
        }
    }

    fn is_done(&self) -> bool {
        self.done
    }

    /// The edits to keep in the next query (the current ones less one), or `None` when the
    /// search is over. Asking again before an answer repeats the query.
    fn query(&mut self) -> Option<&[bool]> {
        if self.done {
            return None;
        }
        if !self.asked {
            loop {
                if self.at == self.keep.len() {
                    if !self.changed {
                        self.done = true;
                        return None;
                    }
                    (self.at, self.changed) = (0, false);
                }
                let kept = self.keep.iter().filter(|k| **k).count();
                if self.keep[self.at] && kept > 1 {
                    break;
                }
                self.at += 1;
            }
            self.keep[self.at] = false;
            self.asked = true;
        }
        Some(&self.keep)
    }

    /// The target's label for the pending query's edits.
    fn answer(&mut self, label: usize) {
        debug_assert!(self.asked, "an answer follows a query");
        if self.goal.reached(self.e.original_label, label) {
            self.label = label;
            self.changed = true;
        } else {
            self.keep[self.at] = true;
        }
        self.asked = false;
        self.at += 1;
    }

    /// The pairs toggled relative to `graph` by the pending query's edits (`(min, max)`): a
    /// pair's last edit says whether it is present, and it is toggled when that differs from
    /// the graph (a self loop or an out-of-range pair is passed on for the evaluator to
    /// report).
    fn toggles(&self, graph: &Graph) -> Vec<(u32, u32)> {
        let mut present: std::collections::BTreeMap<(u32, u32), bool> = Default::default();
        for (x, _) in self.e.edits.iter().zip(&self.keep).filter(|(_, k)| **k) {
            present.insert((x.u.min(x.w), x.u.max(x.w)), x.kind == EditKind::Add);
        }
        let n = graph.num_nodes();
        present
            .into_iter()
            .filter(|&((u, w), now)| u == w || w as usize >= n || now != graph.has_edge(u, w))
            .map(|(p, _)| p)
            .collect()
    }

    /// The counterfactual with the undone edits removed (the original when not one).
    fn result(self) -> Explanation {
        let (edges, features) = self.keep.split_at(self.e.edits.len());
        Explanation {
            evaluations: None,
            certified: None,
            edits: kept(&self.e.edits, edges),
            feature_edits: kept(&self.e.feature_edits, features),
            new_label: self.label,
            ..self.e
        }
    }
}

/// An explainer followed by the minimality pass ([`minimise`]) on each of its counterfactuals;
/// it keeps the inner explainer's name.
pub struct Minimised<'a, E> {
    inner: E,
    black_box: &'a dyn BlackBox,
    hops: u32,
    verdict: Verdict,
    goal: Goal,
}

impl<'a, E: Explainer> Minimised<'a, E> {
    /// Wraps `inner`; `hops` is the neighbourhood its edits live in (the explainer's own), used
    /// with [`Verdict::Neighbourhood`].
    pub fn new(inner: E, black_box: &'a dyn BlackBox, hops: u32, verdict: Verdict) -> Self {
        Self {
            inner,
            black_box,
            hops,
            verdict,
            goal: Goal::AnyOther,
        }
    }

    /// The same pass keeping `goal` (default [`Goal::AnyOther`]).
    pub fn with_goal(mut self, goal: Goal) -> Self {
        self.goal = goal;
        self
    }
}

impl<E: Explainer> Explainer for Minimised<'_, E> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation> {
        let e = self.inner.explain(graph, target)?;
        minimise(
            graph,
            self.black_box,
            &e,
            self.hops,
            self.verdict,
            self.goal,
        )
    }

    fn neighbourhood_hops(&self) -> Option<u32> {
        self.inner.neighbourhood_hops()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Edit;
    use crate::metrics::is_one_minimal;
    use crate::pipeline::testutil::DegreeAtLeast;
    use induce_graph::Features;

    /// A star around 0 with leaves 1..=4, plus the path 4 ─ 5.
    fn star() -> Graph {
        let edges = [(0, 1), (0, 2), (0, 3), (0, 4), (4, 5)];
        Graph::from_edges(6, &edges, Features::constant(6, 1, 1.0), vec![0; 6]).unwrap()
    }

    #[test]
    fn drops_exactly_the_superfluous_edits_and_is_one_minimal() {
        // Node 0 has degree 4, class 1 under "degree ≥ 3": deleting two of its edges flips it.
        // The explanation also deleted (4, 5), which does not touch 0, and a third edge of 0.
        let g = star();
        let bb = DegreeAtLeast(3);
        let e = Explanation::counterfactual(
            0,
            1,
            0,
            vec![
                Edit::delete(4, 5),
                Edit::delete(0, 1),
                Edit::delete(0, 2),
                Edit::delete(0, 3),
            ],
        );
        assert_eq!(
            is_one_minimal(&g, &bb, &e, 2, Verdict::Exact, Goal::AnyOther).unwrap(),
            Some(false)
        );
        let m = minimise(&g, &bb, &e, 2, Verdict::Exact, Goal::AnyOther).unwrap();
        // (4,5) goes first, then (0,1): (0,2) and (0,3) are both needed after that.
        assert_eq!(m.edits, vec![Edit::delete(0, 2), Edit::delete(0, 3)]);
        assert_eq!((m.found, m.original_label, m.new_label), (true, 1, 0));
        assert_eq!(
            is_one_minimal(&g, &bb, &m, 2, Verdict::Exact, Goal::AnyOther).unwrap(),
            Some(true)
        );
    }

    #[test]
    fn the_batched_pass_asks_and_decides_as_the_sequential_one() {
        use induce_models::{GcnBlackBox, GcnConfig, testing::test_device};
        use rand::{Rng, SeedableRng, rngs::StdRng};
        let dev = test_device().unwrap();
        // Twelve nodes on a ring with chords, features that vary.
        let n = 12u32;
        let mut edges: Vec<(u32, u32)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
        edges.extend([(0, 6), (2, 9), (3, 7)]);
        let x = Features::new(
            n as usize,
            3,
            (0..3 * n)
                .map(|i| ((i * 7) % 11) as f32 / 5.0 - 1.0)
                .collect(),
        )
        .unwrap();
        let g = Graph::from_edges(n as usize, &edges, x, vec![0; n as usize]).unwrap();
        let bb = GcnBlackBox::new(GcnConfig::new(3, 2).with_hidden(8).init(&dev), &dev);
        let base = bb
            .log_probs(g.features(), &g.edges())
            .unwrap()
            .predictions();
        let mut rng = StdRng::seed_from_u64(3);
        let mut es = Vec::new();
        for k in 0..60 {
            let target = rng.random_range(0..n);
            let mut edits = Vec::new();
            while edits.len() < 2 + k % 4 {
                let (u, w) = (target, rng.random_range(0..n));
                let dup = edits
                    .iter()
                    .any(|e: &Edit| (e.u.min(e.w), e.u.max(e.w)) == (u.min(w), u.max(w)));
                if u == w || dup {
                    continue;
                }
                edits.push(match g.has_edge(u, w) {
                    true => Edit::delete(u, w),
                    false => Edit::add(u, w),
                });
            }
            // The model's own label as the original one, or the other class (every query then
            // "keeps the flip" and the pass removes all but one edit).
            let original = match k % 3 {
                0 => 1 - base[target as usize],
                _ => base[target as usize],
            };
            es.push(Explanation {
                feature_edits: Vec::new(),
                evaluations: None,
                certified: None,
                target,
                found: true,
                original_label: original,
                new_label: 1 - original,
                edits,
            });
        }
        // The same edit twice in one list (a pair toggled back) and a one-edit explanation.
        let mut twice = es[1].clone();
        twice.edits.push(twice.edits[0]);
        es.push(twice);
        es.push(Explanation {
            evaluations: None,
            certified: None,
            edits: vec![es[0].edits[0]],
            ..es[0].clone()
        });
        let batch = bb.batched(g.features(), &g.edges()).unwrap().unwrap();
        let together = minimise_batched(&g, &es, &batch, Goal::AnyOther).unwrap();
        let (mut shrunk, mut kept) = (0, 0);
        for (e, t) in es.iter().zip(&together) {
            let alone = minimise(&g, &bb, e, 2, Verdict::Exact, Goal::AnyOther).unwrap();
            assert_eq!(&alone, t, "{e:?}");
            shrunk += usize::from(t.edits.len() < e.edits.len());
            kept += usize::from(t.edits.len() > 1);
        }
        // Both outcomes occur, so the test tells the passes apart.
        assert!(shrunk > 5 && kept > 5, "shrunk {shrunk}, kept {kept}");
        // An edit outside the graph is the batched call's typed error.
        let bad = Explanation {
            evaluations: None,
            certified: None,
            edits: vec![Edit::delete(0, 1), Edit::add(0, 99)],
            ..es[0].clone()
        };
        let err = minimise_batched(&g, &[bad], &batch, Goal::AnyOther)
            .unwrap_err()
            .to_string();
        assert!(err.contains("99"), "{err}");
        // A binding to another graph is refused.
        let small =
            Graph::from_edges(3, &[(0, 1)], Features::constant(3, 3, 1.0), vec![0; 3]).unwrap();
        let other = bb
            .batched(small.features(), &small.edges())
            .unwrap()
            .unwrap();
        let err = minimise_batched(&g, &es, &other, Goal::AnyOther)
            .unwrap_err()
            .to_string();
        assert!(err.contains("3 nodes") && err.contains("12 nodes"), "{err}");
    }

    #[test]
    fn leaves_minimal_and_unfound_explanations_alone() {
        let g = star();
        let bb = DegreeAtLeast(4);
        let one = Explanation::counterfactual(0, 1, 0, vec![Edit::delete(0, 1)]);
        assert_eq!(
            minimise(&g, &bb, &one, 2, Verdict::Exact, Goal::AnyOther).unwrap(),
            one
        );
        let none = Explanation {
            evaluations: None,
            certified: None,
            found: false,
            new_label: 1,
            edits: vec![Edit::delete(0, 1), Edit::delete(0, 2)],
            ..one.clone()
        };
        assert_eq!(
            minimise(&g, &bb, &none, 2, Verdict::Exact, Goal::AnyOther).unwrap(),
            none
        );
    }

    #[test]
    fn an_addition_and_a_deletion_that_cancel_are_both_dropped_only_if_unneeded() {
        // Degree ≥ 4: node 0 (degree 4) flips when it loses one edge. The explanation adds
        // (0, 5) and deletes two edges: the addition must go, then one deletion suffices.
        let g = star();
        let bb = DegreeAtLeast(4);
        let e = Explanation::counterfactual(
            0,
            1,
            0,
            vec![Edit::add(0, 5), Edit::delete(0, 1), Edit::delete(0, 2)],
        );
        let m = minimise(&g, &bb, &e, 2, Verdict::Exact, Goal::AnyOther).unwrap();
        assert_eq!(m.edits, vec![Edit::delete(0, 2)]);
        assert_eq!(
            is_one_minimal(&g, &bb, &m, 2, Verdict::Exact, Goal::AnyOther).unwrap(),
            Some(true)
        );
    }
}
