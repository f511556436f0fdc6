//! Tests of [`Judge`] and [`whole_graph_label`] against whole-graph passes.

use super::*;
use crate::error::ExplainError;
use crate::explanation::Edit;
use crate::pipeline::testutil::DegreeAtLeast;

/// Class 1 iff the SUM of the degrees of a node's neighbours is at least 5: the output
/// reads one hop of edges and the degrees of those neighbours (L = 1).
struct NeighbourDegrees;
impl BlackBox for NeighbourDegrees {
    fn input_dim(&self) -> usize {
        1
    }
    fn num_classes(&self) -> usize {
        2
    }
    fn message_passing_layers(&self) -> Option<u32> {
        Some(1)
    }
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> induce_models::Result<LogProbs> {
        let n = x.num_nodes();
        let g = EditGraph::from_edges(n, edges);
        let data = (0..n).flat_map(|u| {
            let s: usize = g.neighbors(u).iter().map(|&w| g.degree(w as usize)).sum();
            if s >= 5 { [-2.0, -0.2] } else { [-0.2, -2.0] }
        });
        LogProbs::new(n, 2, data.collect())
    }
}

/// The path 0 ─ 1 ─ 2 ─ 3 ─ 4 ─ 5 ─ 6.
fn path() -> Graph {
    let e: Vec<(u32, u32)> = (0..6).map(|i| (i, i + 1)).collect();
    Graph::from_edges(7, &e, Features::constant(7, 1, 1.0), vec![0; 7]).unwrap()
}

#[test]
fn exact_verdict_grows_with_an_addition_and_matches_the_whole_graph() {
    let g = path();
    let bb = NeighbourDegrees;
    // Target 0 on the 1-hop neighbourhood {0, 1}: the exact set starts as the 2-hop ball.
    let mut exact = Judge::new(&g, &bb, 0, &[0, 1], Verdict::Exact).unwrap();
    assert_eq!(exact.nodes(), &[0, 1, 2]);
    assert_eq!(exact.label(), 0); // deg(1) = 2
    // Add (0, 4): 0's neighbours are 1 (deg 2) and 4 (deg 3 now): sum 5 → class 1. The set
    // grows by 4's neighbours 3 and 5 (their edges give 4's degree).
    let edits = [Edit::add(0, 4)];
    exact.set_edits(&edits).unwrap();
    assert_eq!(exact.nodes(), &[0, 1, 2, 4, 3, 5]);
    assert_eq!(exact.label(), 1);
    assert_eq!(whole_graph_label(&g, &bb, 0, &edits).unwrap(), 1);
    // The frozen neighbourhood misses 4 entirely and cannot even express the edit.
    let mut frozen = Judge::new(&g, &bb, 0, &[0, 1], Verdict::Neighbourhood).unwrap();
    assert!(matches!(
        frozen.set_edits(&edits),
        Err(ExplainError::NodeOutOfRange { node: 4, .. })
    ));
    // On the 2-hop neighbourhood {0, 1, 2} it can, but misjudges: after adding (0, 2), node
    // 2 has degree 3 in the graph (sum 2 + 3 = 5, class 1) and 2 in the frozen set (class 0).
    let mut frozen = Judge::new(&g, &bb, 0, &[0, 1, 2], Verdict::Neighbourhood).unwrap();
    frozen.toggle(&[(0, 2)]).unwrap();
    assert_eq!(frozen.label(), 0);
    assert_eq!(
        whole_graph_label(&g, &bb, 0, &[Edit::add(0, 2)]).unwrap(),
        1
    );
    let mut exact = Judge::new(&g, &bb, 0, &[0, 1, 2], Verdict::Exact).unwrap();
    exact.toggle(&[(0, 2)]).unwrap();
    assert_eq!(exact.label(), 1);
}

#[test]
fn undoing_edits_returns_to_the_original_output_and_deletions_never_grow() {
    let g = path();
    let bb = NeighbourDegrees;
    let mut j = Judge::new(&g, &bb, 2, &[1, 2, 3], Verdict::Exact).unwrap();
    let start = j.log_probs().row(j.target_local()).to_vec();
    let n0 = j.nodes().len();
    j.set_edits(&[Edit::delete(2, 3), Edit::delete(0, 1)])
        .unwrap();
    assert_eq!(j.nodes().len(), n0);
    j.set_edits(&[Edit::add(2, 6)]).unwrap();
    assert!(j.nodes().contains(&6) && j.nodes().contains(&5));
    assert_eq!(
        j.label(),
        whole_graph_label(&g, &bb, 2, &[Edit::add(2, 6)]).unwrap()
    );
    j.set_edits(&[]).unwrap();
    assert_eq!(j.target_row(), &start[..]);
    // A deletion followed by the re-addition of the same pair is no edit at all.
    j.set_edits(&[Edit::delete(2, 3), Edit::add(2, 3)]).unwrap();
    assert_eq!(j.target_row(), &start[..]);
}

/// Deferred toggles: the caller's rows (here the black box's own, on the induced edited
/// subgraph of the grown node set) give the answer a plain toggle gives; after them, a plain
/// toggle rebuilds the evaluator and agrees again.
#[test]
fn deferred_toggles_take_the_callers_rows() {
    let g = path();
    let bb = NeighbourDegrees;
    let mut plain = Judge::new(&g, &bb, 0, &[0, 1], Verdict::Exact).unwrap();
    let mut deferred = plain.clone();
    assert!(deferred.takes_rows());
    for pair in [(0, 4), (1, 2), (0, 4)] {
        plain.toggle(&[pair]).unwrap();
        deferred.toggle_deferred(&[pair]).unwrap();
        assert_eq!(deferred.nodes(), plain.nodes(), "grown alike");
        // The model on the subgraph the node set induces, with the toggles applied.
        let nodes = deferred.nodes().to_vec();
        let local: HashMap<u32, u32> = nodes
            .iter()
            .enumerate()
            .map(|(i, &u)| (u, i as u32))
            .collect();
        let mut set: BTreeSet<(u32, u32)> = g.edges().into_iter().collect();
        for p in deferred.toggled() {
            if !set.remove(&p) {
                set.insert(p);
            }
        }
        let edges: Vec<(u32, u32)> = set
            .into_iter()
            .filter_map(|(a, b)| Some((*local.get(&a)?, *local.get(&b)?)))
            .collect();
        let rows = bb
            .log_probs(&Features::constant(nodes.len(), 1, 1.0), &edges)
            .unwrap();
        deferred.take_rows(rows).unwrap();
        assert_eq!(deferred.log_probs(), plain.log_probs());
        assert_eq!(deferred.label(), plain.label());
    }
    // Wrong shapes are refused and leave the answer as it was.
    let before = deferred.log_probs().clone();
    let bad = LogProbs::new(1, 2, vec![0.0, 0.0]).unwrap();
    assert!(matches!(
        deferred.take_rows(bad),
        Err(ExplainError::OutputShape { .. })
    ));
    assert_eq!(deferred.log_probs(), &before);
    // The evaluator catches up when asked again.
    plain.toggle(&[(2, 3)]).unwrap();
    deferred.toggle(&[(2, 3)]).unwrap();
    assert_eq!(deferred.log_probs(), plain.log_probs());
    // A frozen neighbourhood's verdicts cannot be deferred.
    let mut frozen = Judge::new(&g, &bb, 0, &[0, 1, 2], Verdict::Neighbourhood).unwrap();
    assert!(!frozen.takes_rows());
    assert!(matches!(
        frozen.toggle_deferred(&[(0, 2)]),
        Err(ExplainError::InvalidValue { .. })
    ));
}

/// A black box that fails while `fail` is set, else class 1 for a node with an edge.
struct Flaky {
    fail: std::sync::atomic::AtomicBool,
}
impl BlackBox for Flaky {
    fn input_dim(&self) -> usize {
        1
    }
    fn num_classes(&self) -> usize {
        2
    }
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> induce_models::Result<LogProbs> {
        if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(induce_models::ModelError::InvalidInput("flaky".into()));
        }
        let mut deg = vec![0; x.num_nodes()];
        for &(u, w) in edges {
            deg[u as usize] += 1;
            deg[w as usize] += 1;
        }
        let d = deg
            .iter()
            .flat_map(|&d| if d >= 1 { [-2.0, -0.2] } else { [-0.2, -2.0] });
        LogProbs::new(x.num_nodes(), 2, d.collect())
    }
}

/// A frozen judge on a sample with fewer edges than the induced ones rebuilds, after a
/// failed evaluation, on the sample's edges (not the graph's).
#[test]
fn a_frozen_judge_rebuilds_on_its_own_edges() {
    // The triangle 0 ─ 1 ─ 2 ─ 0 plus 2 ─ 3; the sample around 0 drops (1, 2).
    let g = Graph::from_edges(
        4,
        &[(0, 1), (0, 2), (1, 2), (2, 3)],
        Features::constant(4, 1, 1.0),
        vec![0; 4],
    )
    .unwrap();
    let sub = induce_graph::Subgraph {
        target: 0,
        target_local: 0,
        nodes: vec![0, 1, 2],
        hops: vec![0, 1, 1],
        edges: vec![(0, 1), (0, 2)],
    };
    let bb = Flaky { fail: false.into() };
    let mut judge = Judge::frozen(&g, &bb, &sub).unwrap();
    let want = {
        let mut fresh = Judge::frozen(&g, &bb, &sub).unwrap();
        fresh.toggle(&[(0, 1)]).unwrap();
        fresh.toggle(&[(0, 2)]).unwrap();
        fresh.log_probs().clone()
    };
    bb.fail.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(judge.toggle(&[(0, 1)]).is_err());
    bb.fail.store(false, std::sync::atomic::Ordering::SeqCst);
    judge.toggle(&[(0, 2)]).unwrap();
    // Nodes 1 and 2 have no edge left in the edited sample (class 0); with the graph's
    // (1, 2) brought back both would have one (class 1).
    assert_eq!(judge.log_probs(), &want);
}

#[test]
fn a_black_box_without_layers_is_judged_on_the_whole_graph() {
    let g = path();
    let bb = induce_models::testing::Undeclared(DegreeAtLeast(2));
    let j = Judge::new(&g, &bb, 3, &[3], Verdict::Exact).unwrap();
    assert_eq!(j.nodes().len(), 7);
    assert_eq!(j.nodes()[0], 3);
    assert_eq!(j.target_local(), 0);
    let j = Judge::new(&g, &bb, 3, &[3], Verdict::Neighbourhood).unwrap();
    assert_eq!(j.nodes(), &[3]);
}

#[test]
fn bad_input_is_a_typed_error() {
    let g = path();
    let bb = NeighbourDegrees;
    assert!(matches!(
        Judge::new(&g, &bb, 9, &[9], Verdict::Exact),
        Err(ExplainError::TargetOutOfRange { target: 9, .. })
    ));
    assert!(matches!(
        Judge::new(&g, &bb, 0, &[1], Verdict::Exact),
        Err(ExplainError::InvalidValue { .. })
    ));
    assert!(matches!(
        Judge::new(&g, &bb, 0, &[0, 0], Verdict::Exact),
        Err(ExplainError::InvalidValue { .. })
    ));
    let mut j = Judge::new(&g, &bb, 0, &[0, 1], Verdict::Exact).unwrap();
    assert!(matches!(
        j.toggle(&[(0, 70)]),
        Err(ExplainError::NodeOutOfRange { node: 70, .. })
    ));
    assert!(matches!(
        j.toggle(&[(2, 2)]),
        Err(ExplainError::InvalidValue { .. })
    ));
    assert!(matches!(
        whole_graph_label(&g, &bb, 0, &[Edit::add(0, 70)]),
        Err(ExplainError::NodeOutOfRange { node: 70, .. })
    ));
    // A refused edit list changes nothing: the next query starts from the same state.
    assert!(j.set_edits(&[Edit::add(0, 4), Edit::add(3, 3)]).is_err());
    assert_eq!(j.nodes(), &[0, 1, 2]);
    j.set_edits(&[Edit::add(0, 4)]).unwrap();
    assert_eq!(j.label(), 1);
    assert_eq!(j.nodes(), &[0, 1, 2, 4, 3, 5]);
}

/// [`NeighbourDegrees`] bound to one graph: every answer from a whole-graph pass on the
/// toggled graph (the slow truth the fast bindings must equal).
struct BoundDegrees;
struct WholePass<'g>(&'g Graph);
impl GraphBinding for WholePass<'_> {
    fn log_probs_at(&self, node: u32, toggled: &[(u32, u32)]) -> induce_models::Result<Vec<f32>> {
        let mut e: BTreeSet<(u32, u32)> = self.0.edges().into_iter().collect();
        for &(a, b) in toggled {
            let p = (a.min(b), a.max(b));
            if !e.remove(&p) {
                e.insert(p);
            }
        }
        let e: Vec<(u32, u32)> = e.into_iter().collect();
        let lp = NeighbourDegrees.log_probs(self.0.features(), &e)?;
        Ok(lp.row(node as usize).to_vec())
    }
}
impl BlackBox for BoundDegrees {
    fn input_dim(&self) -> usize {
        1
    }
    fn num_classes(&self) -> usize {
        2
    }
    fn message_passing_layers(&self) -> Option<u32> {
        Some(1)
    }
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> induce_models::Result<LogProbs> {
        NeighbourDegrees.log_probs(x, edges)
    }
    fn bind_graph<'s>(
        &'s self,
        graph: &'s Graph,
    ) -> induce_models::Result<Option<Box<dyn GraphBinding + 's>>> {
        Ok(Some(Box::new(WholePass(graph))))
    }
}

/// On a sample, the target's row is the whole edited graph's whether it comes from a binding
/// or from a second judge on the receptive field, the other rows are the sample's, and a
/// target-only judge agrees with both for edits anywhere.
#[test]
fn sampled_and_target_only_judges_take_the_target_from_the_whole_graph() {
    //  0 ─ 1 ─ 2 ─ 3 ─ 4 ─ 5 ─ 6, plus 1 ─ 5 and 2 ─ 6
    let mut e: Vec<(u32, u32)> = (0..6).map(|i| (i, i + 1)).collect();
    e.extend([(1, 5), (2, 6)]);
    let g = Graph::from_edges(7, &e, Features::constant(7, 1, 1.0), vec![0; 7]).unwrap();
    let bound = induce_models::BoundBlackBox::new(&BoundDegrees, &g).unwrap();
    assert!(bound.graph_binding(&g).is_some());
    let sub = induce_graph::k_hop(&g, 1, 1).unwrap(); // {0, 1, 2, 5}
    let mut fast = Judge::sampled(&g, &bound, &sub).unwrap();
    let mut slow = Judge::sampled(&g, &NeighbourDegrees, &sub).unwrap();
    let mut only = Judge::exact_target(&g, &bound, 1).unwrap();
    assert_eq!(only.nodes(), &[1]);
    let cases = [
        vec![],
        vec![Edit::delete(1, 2)],
        vec![Edit::delete(1, 2), Edit::add(0, 5)],
        vec![Edit::add(0, 2), Edit::delete(1, 5)],
        vec![Edit::add(0, 2)],
    ];
    for edits in &cases {
        fast.set_edits(edits).unwrap();
        slow.set_edits(edits).unwrap();
        only.set_edits(edits).unwrap();
        let want = whole_graph_label(&g, &NeighbourDegrees, 1, edits).unwrap();
        assert_eq!(whole_graph_label(&g, &bound, 1, edits).unwrap(), want);
        assert_eq!(
            (fast.label(), slow.label(), only.label()),
            (want, want, want)
        );
        assert_eq!(fast.log_probs(), slow.log_probs(), "{edits:?}");
        // Other rows: the black box on the edited sample alone.
        let mut now: Vec<(u32, u32)> = sub.edges.clone();
        for x in edits {
            let (a, b) = (
                sub.local_of(x.u).unwrap() as u32,
                sub.local_of(x.w).unwrap() as u32,
            );
            let p = (a.min(b), a.max(b));
            match now.iter().position(|&q| q == p) {
                Some(i) => {
                    now.remove(i);
                }
                None => now.push(p),
            }
        }
        let local = NeighbourDegrees.log_probs(&sub.features(&g), &now).unwrap();
        for v in (0..sub.num_nodes()).filter(|&v| v != sub.target_local) {
            assert_eq!(fast.log_probs().row(v), local.row(v), "{edits:?}, row {v}");
        }
    }
    // A target-only judge takes pairs anywhere; a sampled one only inside its sample.
    only.set_edits(&[Edit::add(1, 4)]).unwrap();
    assert_eq!(
        only.label(),
        whole_graph_label(&g, &NeighbourDegrees, 1, &[Edit::add(1, 4)]).unwrap()
    );
    assert!(matches!(
        fast.set_edits(&[Edit::add(1, 4)]),
        Err(ExplainError::NodeOutOfRange { node: 4, .. })
    ));
    assert!(matches!(
        only.toggle(&[(1, 70)]),
        Err(ExplainError::NodeOutOfRange { node: 70, .. })
    ));
}

/// Class 1 iff a node's feature plus its neighbours' is at least 3 (reads one hop).
struct FeatureSum;
impl BlackBox for FeatureSum {
    fn input_dim(&self) -> usize {
        1
    }
    fn num_classes(&self) -> usize {
        2
    }
    fn message_passing_layers(&self) -> Option<u32> {
        Some(1)
    }
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> induce_models::Result<LogProbs> {
        let n = x.num_nodes();
        let g = EditGraph::from_edges(n, edges);
        let data = (0..n).flat_map(|u| {
            let s: f32 = x.row(u)[0]
                + g.neighbors(u)
                    .iter()
                    .map(|&w| x.row(w as usize)[0])
                    .sum::<f32>();
            if s >= 3.0 { [-2.0, -0.2] } else { [-0.2, -2.0] }
        });
        LogProbs::new(n, 2, data.collect())
    }
}

/// Feature edits are applied before the whole-graph label is taken: one raises node 0's sum
/// to 3 (a flip), another on a node two hops away changes nothing, and an entry outside the
/// matrix is an error.
#[test]
fn feature_edits_reach_the_whole_graph_label() {
    use crate::explanation::FeatureEdit;
    let g = path(); // every feature 1: node 0 sums 2 (class 0)
    let bb = FeatureSum;
    let raise = |node| FeatureEdit {
        node,
        feature: 0,
        old: 1.0,
        new: 2.0,
    };
    assert_eq!(whole_graph_label(&g, &bb, 0, &[]).unwrap(), 0);
    assert_eq!(
        whole_graph_label_with_features(&g, &bb, 0, &[], &[raise(1)]).unwrap(),
        1
    );
    assert_eq!(
        whole_graph_label_with_features(&g, &bb, 0, &[], &[raise(2)]).unwrap(),
        0
    );
    // With an edge edit too: (0, 1) deleted leaves node 0 alone, 1 + 0 < 3 even raised.
    let del = [Edit::delete(0, 1)];
    assert_eq!(
        whole_graph_label_with_features(&g, &bb, 0, &del, &[raise(0)]).unwrap(),
        0
    );
    let outside = FeatureEdit {
        feature: 1,
        ..raise(0)
    };
    assert!(matches!(
        whole_graph_label_with_features(&g, &bb, 0, &[], &[outside]),
        Err(ExplainError::Graph(_))
    ));
}

/// Feature edits through every kind of judge (on the receptive field, sampled, the target
/// alone, frozen on the whole graph), a GCN bound to the graph and not: each target row equals
/// a whole-graph pass on the edited features and edges, edits are undone exactly, and bad
/// feature edits are typed errors that leave the judge as it was.
#[test]
fn feature_edits_give_the_whole_graph_row_in_every_judge() {
    use crate::explanation::FeatureEdit;
    use induce_models::device::default_device;
    use induce_models::{BoundBlackBox, GcnConfig, HostGcn};
    // A ring of 9 with chords 0–4 and 2–7; features vary per node.
    let mut e: Vec<(u32, u32)> = (0..9).map(|i| (i, (i + 1) % 9)).collect();
    e.extend([(0, 4), (2, 7)]);
    let x: Vec<f32> = (0..27).map(|i| ((i * 5) % 7) as f32 * 0.3 - 0.8).collect();
    let g = Graph::from_edges(9, &e, Features::new(9, 3, x).unwrap(), vec![0; 9]).unwrap();
    let gcn = HostGcn::from_gcn(
        &GcnConfig::new(3, 3)
            .with_init_seed(11)
            .init(&default_device().unwrap()),
    )
    .unwrap();
    let bound = BoundBlackBox::new(&gcn, &g).unwrap();
    let fe = |node, feature, new| FeatureEdit {
        node,
        feature,
        old: 0.0,
        new,
    };
    let cases: [(&[Edit], &[FeatureEdit]); 4] = [
        (&[], &[fe(1, 0, 2.5)]),
        (&[Edit::add(1, 5)], &[fe(1, 0, 2.5), fe(5, 2, -3.0)]),
        (&[Edit::delete(0, 1)], &[fe(0, 1, 4.0), fe(0, 1, -1.0)]),
        (&[], &[]),
    ];
    let whole = |edits: &[Edit], fes: &[FeatureEdit]| -> Vec<f32> {
        let entries: Vec<(u32, u32, f32)> =
            fes.iter().map(|e| (e.node, e.feature, e.new)).collect();
        let x = g.features().with_entries(&entries).unwrap();
        let mut edges: BTreeSet<(u32, u32)> = g.edges().into_iter().collect();
        for ed in edits {
            let p = (ed.u.min(ed.w), ed.u.max(ed.w));
            match ed.kind {
                crate::EditKind::Add => edges.insert(p),
                crate::EditKind::Delete => edges.remove(&p),
            };
        }
        let edges: Vec<(u32, u32)> = edges.into_iter().collect();
        gcn.log_probs(&x, &edges).unwrap().row(0).to_vec()
    };
    let all: Vec<u32> = (0..9).collect();
    let sub = induce_graph::k_hop(&g, 0, 1).unwrap();
    for bb in [&gcn as &dyn BlackBox, &bound] {
        let judges = [
            Judge::new(&g, bb, 0, &[0, 1], Verdict::Exact).unwrap(),
            Judge::sampled(&g, bb, &induce_graph::k_hop(&g, 0, 2).unwrap()).unwrap(),
            Judge::exact_target(&g, bb, 0).unwrap(),
            Judge::new(&g, bb, 0, &all, Verdict::Neighbourhood).unwrap(),
        ];
        for mut j in judges {
            let start = j.target_row().to_vec();
            for (edits, fes) in cases {
                j.set_state(edits, fes).unwrap();
                let want = whole(edits, fes);
                for (a, b) in j.target_row().iter().zip(&want) {
                    assert!((a - b).abs() < 1e-4, "{j:?}: {a} vs {b}");
                }
                assert!(!j.takes_rows() || fes.is_empty());
            }
            for (a, b) in j.target_row().iter().zip(&start) {
                assert!((a - b).abs() < 1e-5);
            }
            // Bad feature edits: nothing changes.
            for bad in [fe(9, 0, 1.0), fe(0, 3, 1.0), fe(0, 0, f32::NAN)] {
                assert!(j.set_features(&[bad]).is_err());
                assert!(j.feature_edits().is_empty());
            }
        }
        // A frozen judge refuses a row outside its neighbourhood.
        let mut frozen = Judge::frozen(&g, bb, &sub).unwrap();
        assert!(matches!(
            frozen.set_features(&[fe(5, 0, 1.0)]),
            Err(ExplainError::NodeOutOfRange { node: 5, .. })
        ));
        frozen.set_features(&[fe(1, 0, 1.0)]).unwrap();
    }
}

/// The minimality pass runs over edge and feature edits together: on the path with every
/// feature 1, node 0 reaches class 1 (a sum of 3) with both of its raised entries once the
/// added edge is undone, and neither entry alone is enough; the result is 1-minimal.
#[test]
fn the_minimality_pass_undoes_edge_and_feature_edits_alike() {
    use crate::explanation::{Explanation, FeatureEdit};
    use crate::goal::Goal;
    let g = path();
    let bb = FeatureSum;
    let raise = |node| FeatureEdit {
        node,
        feature: 0,
        old: 1.0,
        new: 1.5,
    };
    let e = Explanation {
        target: 0,
        found: true,
        original_label: 0,
        new_label: 1,
        edits: vec![Edit::add(0, 2)],
        feature_edits: vec![raise(0), raise(1)],
        evaluations: None,
        certified: None,
    };
    for verdict in [Verdict::Exact, Verdict::Neighbourhood] {
        let m = crate::minimise(&g, &bb, &e, 3, verdict, Goal::AnyOther).unwrap();
        assert!(m.edits.is_empty(), "{m:?}");
        assert_eq!(m.feature_edits, e.feature_edits);
        assert_eq!(m.new_label, 1);
        let minimal = crate::metrics::is_one_minimal(&g, &bb, &m, 3, verdict, Goal::AnyOther);
        assert_eq!(minimal.unwrap(), Some(true));
        let whole = crate::metrics::is_one_minimal(&g, &bb, &e, 3, verdict, Goal::AnyOther);
        assert_eq!(whole.unwrap(), Some(false));
    }
}
