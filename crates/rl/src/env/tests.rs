//! Unit tests of the edit MDP.

use super::*;
use crate::error::{Result, RlError};
use crate::explanation::Edit;
use induce_graph::{Features, Graph};
use induce_models::policy::host::SparseRows;
use induce_models::{BlackBox, LogProbs};
use induce_models::{Kernel, ModelError, Result as ModelResult};

/// A three-class degree rule: the predicted class is `min(degree, 2)` with probability 0.5
/// (0.25 for each other class); an isolated node is class 0 with certainty (log 0 = −∞ for
/// the others, which exercises the `0 · log 0 = 0` entropy guard).
struct DegreeRule {
    input_dim: usize,
    nan: bool,
}

const RULE: DegreeRule = DegreeRule {
    input_dim: 1,
    nan: false,
};

impl BlackBox for DegreeRule {
    fn input_dim(&self) -> usize {
        self.input_dim
    }
    fn num_classes(&self) -> usize {
        3
    }
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> ModelResult<LogProbs> {
        let deg = induce_models::testing::degrees(x.num_nodes(), edges);
        let (hi, lo) = (0.5f32.ln(), 0.25f32.ln());
        let mut data = Vec::new();
        for &d in &deg {
            let mut row = if d == 0 {
                [f32::NEG_INFINITY; 3]
            } else {
                [lo; 3]
            };
            row[d.min(2)] = if d == 0 { 0.0 } else { hi };
            if self.nan {
                row[0] = f32::NAN;
            }
            data.extend(row);
        }
        LogProbs::new(x.num_nodes(), 3, data)
    }
}

/// Wraps a rule but returns one class too many.
struct BadShape;
impl BlackBox for BadShape {
    fn input_dim(&self) -> usize {
        1
    }
    fn num_classes(&self) -> usize {
        2
    }
    fn log_probs(&self, x: &Features, e: &[(u32, u32)]) -> ModelResult<LogProbs> {
        RULE.log_probs(x, e)
    }
}

/// Always fails.
struct Failing;
impl BlackBox for Failing {
    fn input_dim(&self) -> usize {
        1
    }
    fn num_classes(&self) -> usize {
        3
    }
    fn log_probs(&self, _: &Features, _: &[(u32, u32)]) -> ModelResult<LogProbs> {
        Err(ModelError::InvalidInput("boom".into()))
    }
}

/// ```text
///    0 ─ 1 ─ 2 ─ 4 ─ 6 ─ 7        5 (isolated)
///        │
///        3
/// ```
/// Feature of node `i` is `i` (one column), so state rows show which node they are.
/// An episode's non-zero index of wide sparse features, gathered from its graph's, equals
/// the one built from its own rows; dense features get none.
#[test]
fn sparse_rows_come_from_the_graphs_index() {
    let (n, d) = (8, 40);
    let x: Vec<f32> = (0..n * d)
        .map(|i| {
            if i % 7 == 0 {
                (i % 5) as f32 - 2.0
            } else {
                0.0
            }
        })
        .collect();
    let wide = DegreeRule {
        input_dim: d,
        nan: false,
    };
    let edges = [(0, 1), (1, 2), (1, 3), (2, 4), (4, 6), (6, 7)];
    let g = Graph::from_edges(n, &edges, Features::new(n, d, x).unwrap(), vec![0; n]).unwrap();
    let ep = Episode::new(&g, &wide, 2, &cfg()).unwrap();
    assert!(ep.num_nodes() < n);
    let own = SparseRows::new(ep.features().as_slice(), d);
    assert_eq!(ep.sparse_rows().as_deref(), Some(&own));
    let dense = Features::new(n, d, vec![1.5; n * d]).unwrap();
    let g = Graph::from_edges(n, &edges, dense, vec![0; n]).unwrap();
    let ep = Episode::new(&g, &wide, 2, &cfg()).unwrap();
    assert!(ep.sparse_rows().is_none());
}

fn graph() -> Graph {
    let f = Features::new(8, 1, (0..8).map(|i| i as f32).collect()).unwrap();
    Graph::from_edges(
        8,
        &[(0, 1), (1, 2), (1, 3), (2, 4), (4, 6), (6, 7)],
        f,
        vec![0; 8],
    )
    .unwrap()
}

fn cfg() -> EnvConfig {
    EnvConfig {
        hops: 2,
        ..EnvConfig::default()
    }
}

fn list(c: &Candidates) -> Vec<(u32, u32, ActionKind)> {
    (0..c.len()).map(|i| c.get(i)).collect()
}

use ActionKind::{Add as A, Delete as D};

const H: f32 = 1.039_720_8; // 1.5 ln 2: entropy of (0.5, 0.25, 0.25)

fn assert_row(ep: &Episode, i: usize, want: [f32; 6]) {
    let s = ep.state().0;
    let row = &s[i * 6..(i + 1) * 6];
    for (k, (&a, &b)) in row.iter().zip(&want).enumerate() {
        assert!((a - b).abs() < 1e-6, "row {i} col {k}: {row:?} vs {want:?}");
    }
}

#[test]
fn neighbourhood_and_candidates() {
    let g = graph();
    let ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
    assert_eq!(ep.subgraph().nodes, vec![0, 1, 2, 3, 4, 6]);
    assert_eq!(ep.num_nodes(), 6);
    assert_eq!(ep.target(), 2);
    assert_eq!(ep.target_local(), 2);
    assert_eq!(
        list(ep.candidates()),
        vec![
            (2, 0, A),
            (2, 3, A),
            (2, 5, A),
            (0, 1, D),
            (1, 2, D),
            (1, 3, D),
            (2, 4, D),
            (4, 5, D)
        ]
    );
    assert_eq!(
        ep.candidates().flag(),
        vec![1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    // degree 2 → class 2, p(y) = 0.5
    assert_eq!(ep.original_label(), 2);
    assert_eq!(ep.current_label(), 2);
    assert!((ep.log_prob_original() - 0.5f32.ln()).abs() < 1e-7);
    assert!(!ep.is_done() && !ep.is_flipped());
    assert_eq!(ep.budget(), 15);
    assert_eq!(ep.num_edits(), 0);
}

#[test]
fn state_features_before_and_after_an_edit() {
    let g = graph();
    let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
    let (data, n, dim) = ep.state();
    assert_eq!((data.len(), n, dim), (36, 6, 6));
    assert_eq!(ep.state_width(), state_dim(1, 3));
    // [feature ‖ degree ‖ entropy ‖ one-hot(min(deg, 2))]
    assert_row(&ep, 0, [0.0, 1.0, H, 0.0, 1.0, 0.0]);
    assert_row(&ep, 1, [1.0, 3.0, H, 0.0, 0.0, 1.0]);
    assert_row(&ep, 2, [2.0, 2.0, H, 0.0, 0.0, 1.0]);
    assert_row(&ep, 3, [3.0, 1.0, H, 0.0, 1.0, 0.0]);
    assert_row(&ep, 4, [4.0, 2.0, H, 0.0, 0.0, 1.0]);
    // global 6 has degree 2 in the graph but 1 in the 2-hop neighbourhood: its state's
    // degree is the neighbourhood's, its prediction the model's (class 2, exact verdicts)
    assert_row(&ep, 5, [6.0, 1.0, H, 0.0, 0.0, 1.0]);
    // or the frozen neighbourhood's (class 1, the paper's protocol)
    let frozen = EnvConfig {
        verdict: Verdict::Neighbourhood,
        ..cfg()
    };
    let paper = Episode::new(&g, &RULE, 2, &frozen).unwrap();
    assert_row(&paper, 5, [6.0, 1.0, H, 0.0, 1.0, 0.0]);
    assert_eq!(paper.log_probs().num_nodes(), 6);
    assert_eq!(ep.log_probs().num_nodes(), 8); // no layers reported: the whole graph

    // delete (0, 1): node 0 becomes isolated (class 0 with certainty, entropy exactly 0)
    let s = ep.step(3).unwrap();
    assert!(!s.flipped && !s.done);
    assert_row(&ep, 0, [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
    assert_row(&ep, 1, [1.0, 2.0, H, 0.0, 0.0, 1.0]);
    assert_row(&ep, 2, [2.0, 2.0, H, 0.0, 0.0, 1.0]);
    // add (2, 5): node 6 gets degree 2 → class 2; target degree 3 → still class 2
    ep.step(2).unwrap();
    assert_row(&ep, 2, [2.0, 3.0, H, 0.0, 0.0, 1.0]);
    assert_row(&ep, 5, [6.0, 2.0, H, 0.0, 0.0, 1.0]);
    assert!(ep.state().0.iter().all(|x| x.is_finite()));
}

/// The targeted layout: the paper's row, then the hop distance over the radius (fixed) and
/// the black box's probability that the node is of a class that would end the episode
/// (refreshed).
#[test]
fn targeted_state_places_nodes_relative_to_the_target() {
    let g = graph();
    let c = EnvConfig {
        state: StateLayout::Targeted,
        ..cfg()
    };
    let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert_eq!(ep.state_width(), StateLayout::Targeted.width(1, 3));
    assert_eq!(ep.dynamic_block().1, 1..8);
    assert!(ep.first_block_is_fixed());
    let row = |ep: &Episode, i: usize| ep.state().0[i * 8..(i + 1) * 8].to_vec();
    // nodes [0, 1, 2, 3, 4, 6]; target 2 (class 2); distances 2, 1, 0, 2, 1, 2 over radius 2;
    // 1 − p(class 2): 0.5 where class 2 is predicted (p 0.5), 0.75 where class 1 is (p 0.25)
    let want: [[f32; 8]; 6] = [
        [0.0, 1.0, H, 0.0, 1.0, 0.0, 1.0, 0.75],
        [1.0, 3.0, H, 0.0, 0.0, 1.0, 0.5, 0.5],
        [2.0, 2.0, H, 0.0, 0.0, 1.0, 0.0, 0.5],
        [3.0, 1.0, H, 0.0, 1.0, 0.0, 1.0, 0.75],
        [4.0, 2.0, H, 0.0, 0.0, 1.0, 0.5, 0.5],
        [6.0, 1.0, H, 0.0, 0.0, 1.0, 1.0, 0.5],
    ];
    for (i, w) in want.iter().enumerate() {
        let got = row(&ep, i);
        assert!(
            got.iter().zip(w).all(|(a, b)| (a - b).abs() < 1e-6),
            "{i}: {got:?}"
        );
    }
    // delete (0, 1): node 1 keeps class 2 (degree 2), node 0 is isolated (class 0 for sure)
    ep.step(3).unwrap();
    assert_eq!(row(&ep, 0)[6..], [1.0, 1.0]);
    assert_eq!(
        (row(&ep, 1)[1], &row(&ep, 1)[3..]),
        (2.0, &[0.0, 0.0, 1.0, 0.5, 0.5][..])
    );
    // a reset keeps the distances and restores the rest
    ep.reset();
    assert_eq!(row(&ep, 0)[6..], [1.0, 0.75]);
    // the policy for it is two columns wider than the paper's
    let induce = crate::InduceConfig {
        env: c,
        ..Default::default()
    };
    assert_eq!(induce.policy_config(1, 3).input_dim, state_dim(1, 3) + 2);
}

#[test]
fn pairs_are_never_offered_again() {
    let g = graph();
    let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
    // add (2, 0): the new edge is not offered for deletion
    let s = ep.step(0).unwrap();
    assert!(!s.flipped && !s.done);
    assert!(ep.edit_graph().has_edge(2, 0));
    assert_eq!(
        list(ep.candidates()),
        vec![
            (2, 3, A),
            (2, 5, A),
            (0, 1, D),
            (1, 2, D),
            (1, 3, D),
            (2, 4, D),
            (4, 5, D)
        ]
    );
    // delete (2, 4) (now index 5): the pair is not offered for re-addition
    assert_eq!(ep.candidates().get(5), (2, 4, D));
    ep.step(5).unwrap();
    assert!(!ep.edit_graph().has_edge(2, 4));
    assert_eq!(
        list(ep.candidates()),
        vec![
            (2, 3, A),
            (2, 5, A),
            (0, 1, D),
            (1, 2, D),
            (1, 3, D),
            (4, 5, D)
        ]
    );
    assert_eq!(ep.edits(), &[Edit::add(2, 0), Edit::delete(2, 4)]);
}

#[test]
fn edits_are_reported_in_original_ids() {
    let g = graph();
    let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
    ep.step(7).unwrap(); // delete local (4, 5) = global (4, 6)
    ep.step(2).unwrap(); // add local (2, 5) = global (2, 6)
    assert_eq!(ep.edits(), &[Edit::delete(4, 6), Edit::add(2, 6)]);
    let e = ep.explanation();
    assert_eq!(e.target, 2);
    assert!(!e.found);
    assert_eq!((e.original_label, e.new_label), (2, 2));
    assert_eq!(e.edits, vec![Edit::delete(4, 6), Edit::add(2, 6)]);
}

#[test]
fn flip_ends_the_episode_with_rewards() {
    let g = graph();
    // delete (1, 2): target degree 1 → class 1, p(y = 2) = 0.25
    let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
    let s = ep.step(4).unwrap();
    assert!(s.flipped && s.done);
    assert!(
        (s.reward - (2f32.ln() - 0.1 + 1.0)).abs() < 1e-6,
        "{}",
        s.reward
    );
    assert!(ep.is_done() && ep.is_flipped());
    assert_eq!(ep.current_label(), 1);
    assert!((ep.log_prob_original() - 0.25f32.ln()).abs() < 1e-7);
    let e = ep.explanation();
    assert!(e.found);
    assert_eq!((e.original_label, e.new_label), (2, 1));
    assert_eq!(e.edits, vec![Edit::delete(1, 2)]);
    assert!(matches!(
        ep.step(0),
        Err(RlError::EpisodeOver { target: 2 })
    ));

    // the paper's reward: flipped → 1 / (0 + 0.5 · 1) = 2
    let c = EnvConfig {
        reward: Reward::paper(),
        ..cfg()
    };
    let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert_eq!(ep.step(4).unwrap().reward, 2.0);
    // not flipped: add (2, 0): 1 / (log 0.5 + 0.5) ...
    let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    let r = ep.step(0).unwrap().reward;
    assert!((r - 1.0 / (0.5f32.ln() + 0.5)).abs() < 1e-5, "{r}");
    // ... then add (2, 3): 1 / (log 0.5 + 1.0)
    let r = ep.step(0).unwrap().reward;
    assert!((r - 1.0 / (0.5f32.ln() + 1.0)).abs() < 1e-5, "{r}");
}

#[test]
fn shaped_reward_without_flip() {
    let g = graph();
    let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
    // add (2, 0): p(y) stays 0.5 → reward = 0 − 0.1
    let s = ep.step(0).unwrap();
    assert!((s.reward + 0.1).abs() < 1e-7);
}

#[test]
fn budget_ends_the_episode() {
    let g = graph();
    let c = EnvConfig { budget: 2, ..cfg() };
    let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert!(!ep.step(0).unwrap().done);
    let s = ep.step(0).unwrap();
    assert!(s.done && !s.flipped);
    assert_eq!(ep.edits(), &[Edit::add(2, 0), Edit::add(2, 3)]);
    assert!(!ep.explanation().found);
    assert!(matches!(ep.step(0), Err(RlError::EpisodeOver { .. })));
}

#[test]
fn running_out_of_candidates_ends_the_episode() {
    let g = graph();
    let c = EnvConfig {
        allowed: Some(vec![(0, 2)]),
        ..cfg()
    };
    let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert_eq!(list(ep.candidates()), vec![(2, 0, A)]);
    let s = ep.step(0).unwrap();
    assert!(s.done && !s.flipped);
    assert!(ep.candidates().is_empty());
}

#[test]
fn modes_and_allowed_set() {
    let g = graph();
    let c = EnvConfig {
        mode: EditMode::DeleteOnly,
        ..cfg()
    };
    let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert_eq!(
        list(ep.candidates()),
        vec![(0, 1, D), (1, 2, D), (1, 3, D), (2, 4, D), (4, 5, D)]
    );
    let c = EnvConfig {
        mode: EditMode::AddOnly,
        ..cfg()
    };
    let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert_eq!(list(ep.candidates()), vec![(2, 0, A), (2, 3, A), (2, 5, A)]);
    // V_c in original ids, either orientation; (7, 6) and (5, 2) lie outside the
    // neighbourhood and are ignored
    let vc = vec![(4, 2), (6, 4), (0, 2), (7, 6), (5, 2)];
    let c = EnvConfig {
        allowed: Some(vc.clone()),
        ..cfg()
    };
    let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert_eq!(list(ep.candidates()), vec![(2, 0, A), (2, 4, D), (4, 5, D)]);
    // V_c combined with a mode
    let c = EnvConfig {
        allowed: Some(vc),
        mode: EditMode::AddOnly,
        ..cfg()
    };
    let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert_eq!(list(ep.candidates()), vec![(2, 0, A)]);
    // Locked node 6 (local 5) and edge (2, 1), original ids: add (2, 6), del (4, 6) and
    // del (1, 2) are not offered.
    let c = EnvConfig {
        locked: Locked::new(vec![6], vec![(2, 1)]),
        ..cfg()
    };
    let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert_eq!(
        list(ep.candidates()),
        vec![(2, 0, A), (2, 3, A), (0, 1, D), (1, 3, D), (2, 4, D)]
    );
    // The target locked: only the deletions away from it are left; with deletions only
    // and every edge of the neighbourhood locked, nothing is (the typed error).
    let c = EnvConfig {
        locked: Locked::new(vec![2], vec![]),
        ..cfg()
    };
    let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert_eq!(list(ep.candidates()), vec![(0, 1, D), (1, 3, D), (4, 5, D)]);
    let c = EnvConfig {
        locked: Locked::new(vec![1, 2, 4], vec![]),
        ..cfg()
    };
    assert!(matches!(
        Episode::new(&g, &RULE, 2, &c),
        Err(RlError::NoCandidate { target: 2 })
    ));
}

#[test]
fn neighbourhood_cap_and_fanout() {
    let g = graph();
    // Node 1's 2-hop neighbourhood is {0, 1, 2, 3, 4}.
    let capped = EnvConfig {
        max_nodes: Some(4),
        ..cfg()
    };
    match Episode::new(&g, &RULE, 1, &capped) {
        Err(e @ RlError::NeighbourhoodTooLarge { .. }) => {
            assert_eq!(
                e.to_string(),
                "target 1: its neighbourhood has 5 nodes, more than the cap of 4 \
                 (EnvConfig.max_nodes); explain it on a fan-out-capped neighbourhood \
                 (EnvConfig.fanout) or raise the cap"
            );
        }
        other => panic!("expected the cap, got {:?}", other.map(|_| ())),
    }
    // One neighbour per expanded node: at most 1 + 1 + 1 nodes, under the cap.
    let sampled = EnvConfig {
        fanout: Some(1),
        ..capped.clone()
    };
    let ep = Episode::new(&g, &RULE, 1, &sampled).unwrap();
    assert!(ep.num_nodes() <= 3, "{}", ep.num_nodes());
    let again = Episode::new(&g, &RULE, 1, &sampled).unwrap();
    assert_eq!(ep.edit_graph().edges(), again.edit_graph().edges());
    // Both settings survive a JSON round trip and stay out of it when unset.
    let json = serde_json::to_string(&sampled).unwrap();
    assert!(json.contains("\"fanout\":1") && json.contains("\"max_nodes\":4"));
    assert!(!serde_json::to_string(&cfg()).unwrap().contains("fanout"));
}

/// With a fan-out sample, every step's verdict is the model's on the whole edited graph,
/// the same whether it comes from the GCN's binding to the graph or from a judge of the
/// receptive field, and the search's rows are the sample's.
#[test]
fn a_sampled_episode_is_judged_on_the_whole_graph() {
    use induce_explain::whole_graph_label;
    use induce_graph::generators::SyntheticKind;
    use induce_models::testing::test_device;
    use induce_models::{BoundBlackBox, GcnConfig, HostGcn};
    let g = SyntheticKind::BaShapes.generate(3).unwrap().graph;
    let dev = test_device().unwrap();
    let gcn = GcnConfig::new(g.features().dim(), 4)
        .with_init_seed(7)
        .init(&dev);
    let bb = HostGcn::from_gcn(&gcn).unwrap();
    let bound = BoundBlackBox::new(&bb, &g).unwrap();
    let c = EnvConfig {
        hops: 3,
        budget: 10,
        fanout: Some(2),
        ..EnvConfig::default()
    };
    // Nodes of the minority class (123 of 700 with these weights): some flip.
    let labels = bb
        .log_probs(g.features(), &g.edges())
        .unwrap()
        .predictions();
    let targets: Vec<u32> = (0..700)
        .filter(|&v| labels[v as usize] == 0)
        .step_by(15)
        .collect();
    let mut flips = 0;
    for &t in &targets {
        let mut fast = Episode::new(&g, &bound, t, &c).unwrap();
        let mut slow = Episode::new(&g, &bb, t, &c).unwrap();
        assert_eq!(fast.log_probs().num_nodes(), fast.num_nodes());
        for step in 0.. {
            let edits = fast.explanation().edits;
            let want = whole_graph_label(&g, &bb, t, &edits).unwrap();
            assert_eq!(fast.current_label(), want, "target {t}, {edits:?}");
            assert_eq!(slow.current_label(), want, "target {t}, {edits:?}");
            let (a, b) = (fast.log_probs(), slow.log_probs());
            for v in (0..fast.num_nodes()).filter(|&v| v != fast.target_local()) {
                assert_eq!(a.row(v), b.row(v), "target {t}, row {v}");
            }
            for (x, y) in fast
                .judge()
                .target_row()
                .iter()
                .zip(slow.judge().target_row())
            {
                assert!((x - y).abs() < 1e-5, "target {t}");
            }
            if fast.is_done() {
                flips += usize::from(fast.is_flipped());
                break;
            }
            let action = (3 * step + t as usize) % fast.candidates().len();
            fast.step(action).unwrap();
            slow.step(action).unwrap();
        }
    }
    assert!(flips > 0, "no episode flipped: the test checks nothing");
}

/// An episode whose first verdicts the caller gives (the model on the subgraph induced by
/// its request) is the episode the black box starts, and plays on the same way; only exact
/// verdicts on the exact neighbourhood can be pending, and a wrong block of rows is a
/// typed error.
#[test]
fn a_pending_episode_completed_with_the_models_rows_is_the_episode() {
    let g = graph();
    let mut played = 0;
    for target in [2u32, 5, 7, 1] {
        match (
            Episode::new(&g, &RULE, target, &cfg()),
            Episode::pending(&g, &RULE, target, &cfg()),
        ) {
            (Ok(mut want), Ok(pending)) => {
                assert_eq!(pending.target(), target);
                let nodes = pending.request().to_vec();
                let at: std::collections::HashMap<u32, u32> = nodes
                    .iter()
                    .enumerate()
                    .map(|(i, &u)| (u, i as u32))
                    .collect();
                let edges: Vec<(u32, u32)> = g
                    .edges()
                    .iter()
                    .filter_map(|(a, b)| Some((*at.get(a)?, *at.get(b)?)))
                    .collect();
                let rows = RULE
                    .log_probs(&g.features().gather(&nodes), &edges)
                    .unwrap();
                let mut got = pending.complete(rows).unwrap();
                assert_eq!(got.state(), want.state());
                assert_eq!(list(got.candidates()), list(want.candidates()));
                assert_eq!(got.original_label(), want.original_label());
                assert_eq!(got.log_prob_original(), want.log_prob_original());
                while !want.is_done() {
                    assert_eq!(got.step(0).unwrap(), want.step(0).unwrap());
                    assert_eq!(got.state(), want.state());
                    played += 1;
                }
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("target {target}: {a:?} vs {b:?}"),
        }
    }
    assert!(played > 2);
    let frozen = EnvConfig {
        verdict: Verdict::Neighbourhood,
        ..cfg()
    };
    assert!(matches!(
        Episode::pending(&g, &RULE, 2, &frozen),
        Err(RlError::InvalidConfig(_))
    ));
    let pending = Episode::pending(&g, &RULE, 2, &cfg()).unwrap();
    let short = LogProbs::new(1, 3, vec![0.0, -1.0, -2.0]).unwrap();
    assert!(matches!(
        pending.complete(short),
        Err(RlError::OutputShape { .. })
    ));
}

/// A black box that declares no class.
struct NoClasses;
impl BlackBox for NoClasses {
    fn input_dim(&self) -> usize {
        1
    }
    fn num_classes(&self) -> usize {
        0
    }
    fn log_probs(&self, x: &Features, _: &[(u32, u32)]) -> ModelResult<LogProbs> {
        LogProbs::new(x.num_nodes(), 0, Vec::new())
    }
}

#[test]
fn a_black_box_without_classes_is_a_typed_error() {
    let g = graph();
    let no_classes = |r: Result<()>| matches!(r, Err(RlError::Model(ModelError::InvalidInput(m))) if m.contains("0 classes"));
    assert!(no_classes(
        Episode::new(&g, &NoClasses, 2, &cfg()).map(|_| ())
    ));
    assert!(no_classes(
        induce_explain::whole_graph_label(&g, &NoClasses, 2, &[]).map(|_| ())
    ));
}

/// Training on no target, or on targets with nothing to edit, says which.
#[test]
fn training_without_a_usable_target_says_why() {
    let g = graph();
    let dev = induce_models::testing::test_device().unwrap();
    let config = crate::InduceConfig {
        env: cfg(),
        ..crate::InduceConfig::default()
    };
    let train =
        |targets: &[u32]| match crate::train_inductive(&g, &RULE, targets, &config, &dev, |_| {}) {
            Err(RlError::InvalidConfig(m)) => m,
            other => panic!("{targets:?}: {:?}", other.map(|_| ())),
        };
    assert!(train(&[]).contains("the list of training targets is empty"));
    // Node 5 is isolated: no candidate action.
    assert!(train(&[5, 5]).contains("no training target has a candidate action: none of the 2"));
}

/// A policy built for another state width (other features, or a black box with another
/// number of classes) is refused by both kernels before it reads a state.
#[test]
fn a_policy_for_other_states_is_a_typed_error() {
    let g = graph();
    let dev = induce_models::testing::test_device().unwrap();
    let width = state_dim(1, 3);
    assert_eq!(
        Episode::new(&g, &RULE, 2, &cfg()).unwrap().state_width(),
        width
    );
    for wrong in [width - 1, width + 4] {
        let policy = induce_models::PolicyConfig::new(wrong).init(&dev);
        for kernel in [Kernel::Host, Kernel::Burn] {
            let runner = crate::KernelPolicy::new(&policy, kernel, &dev);
            let got = crate::explain_greedy(&runner, &g, &RULE, 2, &cfg());
            match got {
                Err(RlError::Model(ModelError::DimensionMismatch {
                    what,
                    expected,
                    got,
                })) => {
                    assert_eq!((expected, got), (wrong, width), "{kernel:?}");
                    assert!(what.contains("target 2"), "{what}");
                }
                other => panic!("{kernel:?}, width {wrong}: {other:?}"),
            }
        }
    }
}

#[test]
fn errors() {
    let g = graph();
    let c = EnvConfig { budget: 0, ..cfg() };
    assert!(matches!(
        Episode::new(&g, &RULE, 2, &c),
        Err(RlError::ZeroBudget)
    ));
    assert!(matches!(
        Episode::new(&g, &RULE, 8, &cfg()),
        Err(RlError::TargetOutOfRange {
            target: 8,
            num_nodes: 8
        })
    ));
    // isolated node, zero hops, nothing allowed, an add-only leaf whose only node is adjacent
    assert!(matches!(
        Episode::new(&g, &RULE, 5, &cfg()),
        Err(RlError::NoCandidate { target: 5 })
    ));
    let c = EnvConfig { hops: 0, ..cfg() };
    assert!(matches!(
        Episode::new(&g, &RULE, 2, &c),
        Err(RlError::NoCandidate { target: 2 })
    ));
    let c = EnvConfig {
        allowed: Some(vec![]),
        ..cfg()
    };
    assert!(matches!(
        Episode::new(&g, &RULE, 2, &c),
        Err(RlError::NoCandidate { .. })
    ));
    let c = EnvConfig {
        hops: 1,
        mode: EditMode::AddOnly,
        ..cfg()
    };
    assert!(matches!(
        Episode::new(&g, &RULE, 0, &c),
        Err(RlError::NoCandidate { target: 0 })
    ));
    let wide = DegreeRule {
        input_dim: 2,
        nan: false,
    };
    assert!(matches!(
        Episode::new(&g, &wide, 2, &cfg()),
        Err(RlError::FeatureDimension {
            expected: 2,
            got: 1
        })
    ));
    // target 4's 2-hop neighbourhood is global [1, 2, 4, 6, 7]: local row 0 is node 1
    let nan = DegreeRule {
        input_dim: 1,
        nan: true,
    };
    assert!(matches!(
        Episode::new(&g, &nan, 4, &cfg()),
        Err(RlError::NanOutput { target: 4, node: 1 })
    ));
    assert!(matches!(
        Episode::new(&g, &BadShape, 2, &cfg()),
        Err(RlError::OutputShape {
            expected_classes: 2,
            got_classes: 3,
            ..
        })
    ));
    assert!(matches!(
        Episode::new(&g, &Failing, 2, &cfg()),
        Err(RlError::Model(ModelError::InvalidInput(_)))
    ));
    let mut ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
    assert!(matches!(
        ep.step(8),
        Err(RlError::ActionOutOfRange {
            action: 8,
            num_candidates: 8
        })
    ));
    // errors display their numbers
    let msg = RlError::TargetOutOfRange {
        target: 8,
        num_nodes: 8,
    }
    .to_string();
    assert!(msg.contains('8'), "{msg}");
}

#[test]
fn reset_restores_the_start() {
    let g = graph();
    let fresh = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
    let mut ep = fresh.clone();
    ep.step(0).unwrap();
    ep.step(3).unwrap();
    ep.reset();
    assert_eq!(ep.state(), fresh.state());
    assert_eq!(ep.candidates(), fresh.candidates());
    assert_eq!(ep.edit_graph(), fresh.edit_graph());
    assert!(ep.edits().is_empty() && !ep.is_done());
    // and it plays again
    assert!(ep.step(4).unwrap().flipped);
}

/// The graph of [`graph`] with ground-truth labels `i % 3`.
fn labelled() -> Graph {
    let f = Features::new(8, 1, (0..8).map(|i| i as f32).collect()).unwrap();
    let edges = [(0, 1), (1, 2), (1, 3), (2, 4), (4, 6), (6, 7)];
    Graph::from_edges(8, &edges, f, (0..8).map(|i| i % 3).collect()).unwrap()
}

fn reference_cfg() -> EnvConfig {
    EnvConfig {
        hops: 2,
        ..EnvConfig::reference()
    }
}

#[test]
fn reference_state_is_static_except_the_degree() {
    let g = labelled();
    let mut ep = Episode::new(&g, &RULE, 2, &reference_cfg()).unwrap();
    // every node of the neighbourhood has degree ≥ 1: log p is a permutation of
    // (ln .5, ln .25, ln .25), so q = sigmoid(log p) = p / (1 + p) = (1/3, 1/5, 1/5)
    let (a, b) = (1.0f32 / 3.0, 0.2f32);
    let h = -(a * a.log2() + 2.0 * b * b.log2());
    assert!((reference_entropy(&[0.5f32.ln(), 0.25f32.ln(), 0.25f32.ln()]) - h).abs() < 1e-6);
    // [entropy ‖ degree ‖ one-hot(ground truth = global id % 3) ‖ feature]
    let start = [
        [h, 1.0, 1.0, 0.0, 0.0, 0.0],
        [h, 3.0, 0.0, 1.0, 0.0, 1.0],
        [h, 2.0, 0.0, 0.0, 1.0, 2.0],
        [h, 1.0, 1.0, 0.0, 0.0, 3.0],
        [h, 2.0, 0.0, 1.0, 0.0, 4.0],
        [h, 1.0, 1.0, 0.0, 0.0, 6.0],
    ];
    for (i, row) in start.iter().enumerate() {
        assert_row(&ep, i, *row);
    }
    // delete (0, 1): node 0 is isolated now (the paper layout would show entropy 0 and
    // class 0); here only the degrees change
    ep.step(3).unwrap();
    let mut after = start;
    after[0][1] = 0.0;
    after[1][1] = 2.0;
    for (i, row) in after.iter().enumerate() {
        assert_row(&ep, i, *row);
    }
    ep.reset();
    for (i, row) in start.iter().enumerate() {
        assert_row(&ep, i, *row);
    }
}

#[test]
fn reference_flags_and_candidate_order() {
    let g = labelled();
    let ep = Episode::new(&g, &RULE, 2, &reference_cfg()).unwrap();
    // same order as the default; a deletion (j, k) carries A_orig[target][j]
    // (the target, local 2, is adjacent to 1 and 4), an addition 0
    assert_eq!(
        list(ep.candidates()),
        list(Episode::new(&g, &RULE, 2, &cfg()).unwrap().candidates())
    );
    assert_eq!(
        ep.candidates().flag(),
        vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    );
    assert_eq!(
        ep.candidates()
            .to_tensors(&induce_models::testing::test_device().unwrap())
            .len(),
        8
    );
}

#[test]
fn reference_episode_ends_with_one_candidate_left() {
    let g = labelled();
    let c = EnvConfig {
        allowed: Some(vec![(0, 2), (1, 3)]),
        ..reference_cfg()
    };
    let mut ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert_eq!(list(ep.candidates()), vec![(2, 0, A), (1, 3, D)]);
    assert!(!ep.is_done());
    let s = ep.step(1).unwrap();
    assert!(s.done && !s.flipped);
    assert_eq!(ep.candidates().len(), 1);
    ep.reset();
    assert!(!ep.is_done());
    // a single candidate: over before any edit
    let c = EnvConfig {
        allowed: Some(vec![(0, 2)]),
        ..reference_cfg()
    };
    let ep = Episode::new(&g, &RULE, 2, &c).unwrap();
    assert!(ep.is_done());
    let e = ep.explanation();
    assert!(!e.found && e.edits.is_empty());
}

#[test]
fn reference_state_rejects_labels_beyond_the_classes() {
    let f = Features::constant(3, 1, 1.0);
    let g = Graph::from_edges(3, &[(0, 1), (1, 2)], f, vec![0, 3, 0]).unwrap();
    assert!(matches!(
        Episode::new(&g, &RULE, 0, &reference_cfg()),
        Err(RlError::InvalidConfig(_))
    ));
}

#[test]
fn reference_preset_serde() {
    let j = serde_json::to_string(&EnvConfig::reference()).unwrap();
    assert!(
        j.ends_with(concat!(
            r#""state":"reference","action_flag":"target_neighbour","min_candidates":1,"#,
            r#""verdict":"neighbourhood"}"#
        )),
        "{j}"
    );
    assert_eq!(
        serde_json::from_str::<EnvConfig>(&j).unwrap(),
        EnvConfig::reference()
    );
}

#[test]
fn tensors_for_the_policy() {
    let dev = induce_models::testing::test_device().unwrap();
    let g = graph();
    let ep = Episode::new(&g, &RULE, 2, &cfg()).unwrap();
    assert_eq!(ep.state_tensor(&dev).dims(), [6, 6]);
    let gt = ep.graph_tensors(&dev).unwrap();
    assert_eq!(gt.num_nodes, 6);
    assert_eq!(gt.src.dims(), [2 * 5 + 6]);
    let ct = ep.candidates().to_tensors(&dev);
    assert_eq!(ct.len(), 8);
    assert_eq!(ct.flag.dims(), [8, 1]);
}

#[test]
fn config_serde() {
    let c = EnvConfig {
        allowed: Some(vec![(1, 2)]),
        mode: EditMode::AddOnly,
        reward: Reward::paper(),
        ..EnvConfig::default()
    };
    let j = serde_json::to_string(&c).unwrap();
    assert_eq!(
        j,
        concat!(
            r#"{"hops":4,"budget":15,"mode":"add_only","allowed":[[1,2]],"#,
            r#""reward":{"kind":"paper","beta":0.5}}"#
        )
    );
    assert_eq!(serde_json::from_str::<EnvConfig>(&j).unwrap(), c);
    assert_eq!(
        serde_json::from_str::<EnvConfig>("{}").unwrap(),
        EnvConfig::default()
    );
}

/// Feature actions ([`EnvConfig::features`]): the target's entries follow the edge actions
/// (a 0/1 column flips, a continuous one takes its other quantiles), each carries the black
/// box's first-order estimate (a central difference of the margin agrees), a step edits the
/// features the judge sees (the whole-graph row agrees) and removes the entry's other actions,
/// the look-ahead's verdict of a feature action is the whole graph's, and a reset undoes it.
/// Without the estimated state they are refused; `only` drops the edge actions.
#[test]
fn feature_actions_are_estimated_judged_on_the_whole_graph_and_undone() {
    use crate::lookahead::Lookahead;
    use induce_explain::Goal;
    use induce_models::testing::test_device;
    use induce_models::{GcnBlackBox, GcnConfig};
    // 0 ─ 1 ─ 2 ─ 3 ─ 4 and 2 ─ 5; columns 0–2 are 0/1, column 3 continuous.
    let x: Vec<f32> = (0..6)
        .flat_map(|i| {
            [
                (i % 2) as f32,
                ((i / 2) % 2) as f32,
                (i == 3) as u8 as f32,
                0.3 * i as f32 - 0.5,
            ]
        })
        .collect();
    let g = Graph::from_edges(
        6,
        &[(0, 1), (1, 2), (2, 3), (3, 4), (2, 5)],
        Features::new(6, 4, x).unwrap(),
        vec![0; 6],
    )
    .unwrap();
    let dev = test_device().unwrap();
    let bb = GcnBlackBox::new(GcnConfig::new(4, 3).with_init_seed(9).init(&dev), &dev);
    let c = EnvConfig {
        state: StateLayout::Estimated,
        features: Some(FeatureActions::default()),
        ..EnvConfig::default()
    };
    let t = 2u32;
    let mut ep = Episode::new(&g, &bb, t, &c).unwrap();
    let cands = ep.candidates().clone();
    let feats: Vec<usize> = (0..cands.len())
        .filter(|&i| cands.kind[i].edit_kind().is_none())
        .collect();
    // Three flips and the continuous column's three levels (−0.5, 0.4 and 1.0; the target
    // holds 0.1); all after the edge actions.
    assert_eq!(feats.len(), 6);
    assert_eq!(feats[0], cands.len() - 6);
    for &i in &feats {
        assert_eq!(
            (cands.u[i], cands.w[i]),
            (ep.target_local() as u32, ep.target_local() as u32)
        );
        assert!(
            (1.6..=2.4).contains(&cands.flag()[i]),
            "{}",
            cands.flag()[i]
        );
    }
    // The estimate is the first-order change of the margin over the margin.
    let y = ep.original_label();
    let margin = |x: &Features| {
        let lp = bb.log_probs(x, &g.edges()).unwrap();
        Goal::AnyOther.margin(lp.row(t as usize), y)
    };
    let m = margin(g.features());
    for &i in &feats {
        let ActionKind::Feature { feature, value } = cands.kind[i] else {
            unreachable!()
        };
        let old = g.features().row(t as usize)[feature as usize];
        let eps = 1e-2;
        let at = |v: f32| g.features().with_entries(&[(t, feature, v)]).unwrap();
        let slope = (margin(&at(old + eps)) - margin(&at(old - eps))) / (2.0 * eps);
        let want = (-slope * (value - old) / m.max(0.05)).clamp(-4.0, 4.0);
        let got = cands.estimate().unwrap()[i];
        assert!(
            (got - want).abs() < 2e-2 * (1.0 + want.abs()),
            "{i}: {got} vs {want}"
        );
    }
    // The look-ahead's verdict on the continuous column's first action.
    let pick = feats[3];
    let ActionKind::Feature { feature, value } = cands.kind[pick] else {
        unreachable!()
    };
    let edited = g.features().with_entries(&[(t, feature, value)]).unwrap();
    let (_, look) = Lookahead::new(&ep).unwrap().verdict(&ep, pick).unwrap();
    assert!(
        (look - margin(&edited)).abs() < 1e-4,
        "{look} vs {}",
        margin(&edited)
    );
    // The step: the judge sees the edited features; the entry's other level is gone.
    ep.step(pick).unwrap();
    assert_eq!(ep.num_edits(), 1);
    assert!(ep.edits().is_empty());
    let fe = ep.explanation().feature_edits;
    assert_eq!(
        (fe.len(), fe[0].node, fe[0].feature, fe[0].new),
        (1, t, feature, value)
    );
    let want = bb.log_probs(&edited, &g.edges()).unwrap();
    for (a, b) in ep.judge().target_row().iter().zip(want.row(t as usize)) {
        assert!((a - b).abs() < 1e-4);
    }
    assert_eq!(ep.candidates().len(), cands.len() - 3);
    assert!(!ep.takes_verdicts());
    ep.reset();
    assert!(ep.feature_edits().is_empty());
    assert_eq!(ep.candidates(), &cands);
    // Only features; refused without the estimated state.
    let only = EnvConfig {
        features: Some(FeatureActions {
            only: true,
            ..FeatureActions::default()
        }),
        ..c.clone()
    };
    assert_eq!(
        Episode::new(&g, &bb, t, &only).unwrap().candidates().len(),
        6
    );
    let paper = EnvConfig {
        state: StateLayout::Paper,
        ..c
    };
    let e = Episode::new(&g, &bb, t, &paper).unwrap_err();
    assert!(matches!(e, RlError::InvalidConfig(_)), "{e}");
}

/// With `--feature-nodes field` every row of the receptive field offers feature actions, and
/// their estimates (taken on the target's `L + 1`-hop ball, smaller here than the episode's
/// neighbourhood) match central differences of the margin on the whole graph.
#[test]
fn field_feature_estimates_are_the_whole_graphs_first_order_changes() {
    use induce_explain::Goal;
    use induce_explain::features::FeatureNodes;
    use induce_models::testing::test_device;
    use induce_models::{GcnBlackBox, GcnConfig};
    // A path of 10 nodes, two continuous columns.
    let x: Vec<f32> = (0..20).map(|i| ((i * 7) % 11) as f32 * 0.2 - 1.0).collect();
    let edges: Vec<(u32, u32)> = (0..9).map(|i| (i, i + 1)).collect();
    let g = Graph::from_edges(10, &edges, Features::new(10, 2, x).unwrap(), vec![0; 10]).unwrap();
    let dev = test_device().unwrap();
    let bb = GcnBlackBox::new(GcnConfig::new(2, 3).with_init_seed(4).init(&dev), &dev);
    let c = EnvConfig {
        hops: 8,
        state: StateLayout::Estimated,
        features: Some(FeatureActions {
            nodes: FeatureNodes::Field,
            only: true,
            ..FeatureActions::default()
        }),
        ..EnvConfig::default()
    };
    let t = 1u32;
    let ep = Episode::new(&g, &bb, t, &c).unwrap();
    let cands = ep.candidates();
    // The field: nodes 0–4 (3 layers from node 1).
    let rows: std::collections::BTreeSet<u32> = (0..cands.len())
        .map(|i| ep.subgraph().global_of(cands.u[i] as usize))
        .collect();
    assert_eq!(rows.into_iter().collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    let y = ep.original_label();
    let margin = |x: &Features| {
        let lp = bb.log_probs(x, &g.edges()).unwrap();
        Goal::AnyOther.margin(lp.row(t as usize), y)
    };
    let m = margin(g.features());
    for i in 0..cands.len() {
        let ActionKind::Feature { feature, value } = cands.kind[i] else {
            unreachable!()
        };
        let v = ep.subgraph().global_of(cands.u[i] as usize);
        let old = g.features().row(v as usize)[feature as usize];
        let at = |x: f32| g.features().with_entries(&[(v, feature, x)]).unwrap();
        let eps = 1e-2;
        let slope = (margin(&at(old + eps)) - margin(&at(old - eps))) / (2.0 * eps);
        let want = (-slope * (value - old) / m.max(0.05)).clamp(-4.0, 4.0);
        let got = cands.estimate().unwrap()[i];
        assert!(
            (got - want).abs() < 2e-2 * (1.0 + want.abs()),
            "{v}/{feature}: {got} vs {want}"
        );
    }
}

/// A deferred step after the last candidate is used is a typed error (the episode is over),
/// not a panic.
#[test]
fn a_deferred_step_without_candidates_is_an_error() {
    use induce_models::testing::DegreeAtLeast;
    //  0 ─ 1: node 1 has degree 1 (class 1); deleting (0, 1) flips it and leaves no candidate.
    let g = Graph::from_edges(2, &[(0, 1)], Features::constant(2, 1, 1.0), vec![0; 2]).unwrap();
    let mut ep = Episode::new(&g, &DegreeAtLeast(1), 1, &EnvConfig::default()).unwrap();
    assert!(ep.takes_verdicts());
    assert!(ep.step(0).unwrap().done);
    assert!(ep.candidates().is_empty());
    let e = ep.step_deferred(0).unwrap_err();
    assert!(matches!(e, RlError::EpisodeOver { .. }), "{e}");
}

/// With a black box bound to the graph, the look-ahead judges each candidate from the binding's
/// cache of the episode's state ([`induce_models::GraphBinding::state_at`]): at the start and
/// after two edits, every judged candidate's verdict and margin are the whole graph's.
#[test]
fn the_lookaheads_verdicts_from_the_states_rows_are_the_whole_graphs() {
    use crate::lookahead::Lookahead;
    use induce_explain::Goal;
    use induce_graph::generators::SyntheticKind;
    use induce_models::testing::test_device;
    use induce_models::{BoundBlackBox, GcnConfig, HostGcn};
    let g = SyntheticKind::BaShapes.generate(5).unwrap().graph;
    let dev = test_device().unwrap();
    let gcn = GcnConfig::new(g.features().dim(), 4)
        .with_init_seed(3)
        .init(&dev);
    let bb = HostGcn::from_gcn(&gcn).unwrap();
    let bound = BoundBlackBox::new(&bb, &g).unwrap();
    let env = EnvConfig {
        hops: 3,
        budget: 5,
        ..EnvConfig::default()
    };
    let toggled = |pairs: &[(u32, u32)]| {
        let mut now: std::collections::BTreeSet<(u32, u32)> = g.edges().into_iter().collect();
        for &(a, b) in pairs {
            let p = (a.min(b), a.max(b));
            if !now.remove(&p) {
                now.insert(p);
            }
        }
        now.into_iter().collect::<Vec<_>>()
    };
    let mut judged = 0;
    for t in [301u32, 402, 650] {
        let mut ep = Episode::new(&g, &bound, t, &env).unwrap();
        let y = ep.original_label();
        let mut look = Lookahead::new(&ep).unwrap();
        for round in 0..3 {
            let n = ep.candidates().len();
            let state: Vec<(u32, u32)> = ep.edits().iter().map(|e| (e.u, e.w)).collect();
            for i in (0..n).step_by((n / 40).max(1)) {
                let (u, w, _) = ep.candidates().get(i);
                let sub = ep.subgraph();
                let pair = (sub.global_of(u as usize), sub.global_of(w as usize));
                let mut all = state.clone();
                all.push(pair);
                let lp = bb.log_probs(g.features(), &toggled(&all)).unwrap();
                let want = Goal::AnyOther.margin(lp.row(t as usize), y);
                let (flipped, margin) = look.verdict(&ep, i).unwrap();
                assert!((margin - want).abs() < 1e-4, "{t}, round {round}, {pair:?}");
                assert_eq!(flipped, lp.argmax(t as usize) != y);
                assert!(look.judges_from_state());
                judged += 1;
            }
            if ep.is_done() {
                break;
            }
            // A deletion at the target first, then whatever comes first.
            let del = (0..n).find(|&i| {
                let (u, w, k) = ep.candidates().get(i);
                k == ActionKind::Delete
                    && (ep.subgraph().global_of(u as usize) == t
                        || ep.subgraph().global_of(w as usize) == t)
            });
            ep.step(del.unwrap_or(0)).unwrap();
            if ep.is_done() {
                break;
            }
        }
    }
    assert!(judged > 100, "{judged}");
}
