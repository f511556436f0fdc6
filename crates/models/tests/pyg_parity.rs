//! PyG parity: every committed fixture (`tests/fixtures/pyg/<case>`, written by
//! `scripts/pyg-fixtures.py` with torch and PyG) loads, and our log-probabilities equal PyG's
//! to 1e-5 on the graph and on the graph with a few edges toggled.

use std::collections::BTreeSet;
use std::path::PathBuf;

use induce_graph::io::load_reference_npz;
use induce_models::io::reference::safetensors_tensors;
use induce_models::pyg::PygNet;
use induce_models::{BlackBox, DegreeGradient};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/pyg")
}

const CASES: [&str; 12] = [
    "gcn",
    "gcn_plain",
    "sage",
    "sage_sum",
    "gin",
    "gat",
    "sg",
    "appnp",
    "tag",
    "cheb",
    "graph",
    "gatv2",
];

fn expected(case: &str) -> (Vec<f32>, Vec<f32>, Vec<(u32, u32)>) {
    let t = safetensors_tensors(fixtures().join(case).join("expected.safetensors")).unwrap();
    let get = |n: &str| t.iter().find(|x| x.name == n).unwrap();
    let toggled = get("toggled").i64_values().unwrap();
    (
        get("log_probs").f32_values().unwrap(),
        get("log_probs_edited").f32_values().unwrap(),
        toggled
            .chunks(2)
            .map(|p| (p[0] as u32, p[1] as u32))
            .collect(),
    )
}

fn assert_close(ours: &[f32], pyg: &[f32], what: &str) {
    assert_eq!(ours.len(), pyg.len(), "{what}");
    let worst = ours
        .iter()
        .zip(pyg)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(worst <= 1e-5, "{what}: max |ours − PyG| = {worst:e}");
}

#[test]
fn every_family_matches_pyg_to_1e_5() {
    for case in CASES {
        let dir = fixtures().join(case);
        let net = PygNet::load(dir.join("model.safetensors"), dir.join("arch.json"))
            .unwrap_or_else(|e| panic!("{case}: {e}"));
        let data = load_reference_npz(dir.join("graph.npz")).unwrap();
        let g = &data.graph;
        let (lp, lp_edited, toggled) = expected(case);
        let ours = net.log_probs(g.features(), &g.edges()).unwrap();
        assert_close(ours.as_slice(), &lp, case);
        let pyg_pred: Vec<usize> = lp
            .chunks(net.num_classes())
            .map(|r| (0..r.len()).fold(0, |b, k| if r[k] > r[b] { k } else { b }))
            .collect();
        assert_eq!(ours.predictions(), pyg_pred, "{case}");
        let mut edges: BTreeSet<(u32, u32)> = g.edges().into_iter().collect();
        for (u, w) in toggled {
            let p = (u.min(w), u.max(w));
            if !edges.remove(&p) {
                edges.insert(p);
            }
        }
        let edited: Vec<(u32, u32)> = edges.into_iter().collect();
        let ours = net.log_probs(g.features(), &edited).unwrap();
        assert_close(ours.as_slice(), &lp_edited, &format!("{case} edited"));
        // The hops: SGConv K=2 then 1, TAGConv K=2 then 1, ChebConv K=3 then 2 (K − 1 each);
        // APPNP K=2 after two Linears (none); two one-hop layers otherwise.
        let hops = match case {
            "sg" | "tag" | "cheb" => 3,
            _ => 2,
        };
        assert_eq!(net.message_passing_layers(), Some(hops), "{case}");
    }
}

/// The Burn form with a weight per pair: weights 1/0 over the union of the graph's edges and the
/// toggled pairs reproduce PyG on the edited graph; the gradient with respect to the weights is
/// finite and reaches the pairs near node 0.
#[test]
fn the_edge_weighted_burn_form_matches_pyg_and_has_gradients() {
    use burn::tensor::{Tensor, TensorData};
    use induce_models::kernels::tensors::{WeightedEdges, matrix, to_vec};
    use induce_models::testing::test_device;

    let device = test_device().unwrap().autodiff();
    for case in CASES {
        let dir = fixtures().join(case);
        let net = PygNet::load(dir.join("model.safetensors"), dir.join("arch.json")).unwrap();
        let ew = net.edge_weighted().expect("PyG nets are differentiable");
        let data = load_reference_npz(dir.join("graph.npz")).unwrap();
        let g = &data.graph;
        let (lp, lp_edited, toggled) = expected(case);
        let present: BTreeSet<(u32, u32)> = g.edges().into_iter().collect();
        let mut pairs = present.clone();
        pairs.extend(toggled.iter().map(|&(u, w)| (u.min(w), u.max(w))));
        let pairs: Vec<(u32, u32)> = pairs.into_iter().collect();
        let toggled: BTreeSet<(u32, u32)> =
            toggled.iter().map(|&(u, w)| (u.min(w), u.max(w))).collect();
        let n = g.num_nodes();
        let x = matrix(g.features().as_slice(), n, g.features().dim(), &device);
        let edges = WeightedEdges::new(n, &pairs, &device).unwrap();
        let weights = |f: &dyn Fn(&(u32, u32)) -> bool| {
            let v: Vec<f32> = pairs.iter().map(|p| if f(p) { 1.0 } else { 0.0 }).collect();
            Tensor::<1>::from_data(TensorData::new(v, [pairs.len()]), &device)
        };
        for degree_gradient in [DegreeGradient::Detached, DegreeGradient::Through] {
            let w = weights(&|p| present.contains(p));
            let out = ew.forward_weighted(x.clone(), &edges, w, degree_gradient);
            assert_close(&to_vec(out), &lp, &format!("{case} burn"));
        }
        let w = weights(&|p| present.contains(p) != toggled.contains(p)).require_grad();
        let out = ew.forward_weighted(x.clone(), &edges, w.clone(), DegreeGradient::Through);
        assert_close(
            &to_vec(out.clone()),
            &lp_edited,
            &format!("{case} burn edited"),
        );
        let grads = out.slice([0..1, 0..1]).sum().backward();
        let grad = to_vec(w.grad(&grads).unwrap().unsqueeze_dim(1));
        assert!(grad.iter().all(|v| v.is_finite()), "{case}: {grad:?}");
        assert!(
            grad.iter().any(|&v| v != 0.0),
            "{case}: no gradient reaches node 0"
        );
        let emb = to_vec(ew.embeddings(
            x.clone(),
            &WeightedEdges::new(n, &g.edges(), &device).unwrap(),
        ));
        let host = net.embeddings(g.features(), &g.edges()).unwrap();
        assert_close(&emb, &host, &format!("{case} embeddings"));
    }
}

/// The prepared paths (`prepare`, and `prepare_rows` gathering from the projection of the whole
/// feature matrix) give what `log_probs` gives on the gathered rows.
#[test]
fn prepared_evaluation_equals_the_plain_forward() {
    for case in CASES {
        let dir = fixtures().join(case);
        let net = PygNet::load(dir.join("model.safetensors"), dir.join("arch.json")).unwrap();
        let g = load_reference_npz(dir.join("graph.npz")).unwrap().graph;
        let rows = [3u32, 0, 7, 9, 1];
        let sub = g.features().gather(&rows);
        let edges = [(0, 1), (1, 2), (2, 3), (0, 4)];
        let plain = net.log_probs(&sub, &edges).unwrap();
        let prepared = net
            .prepare(&sub)
            .unwrap()
            .unwrap()
            .log_probs(&edges)
            .unwrap();
        assert_close(prepared.as_slice(), plain.as_slice(), case);
        for _ in 0..2 {
            // The second call gathers from the cached projection.
            let p = net.prepare_rows(g.features(), &rows).unwrap().unwrap();
            assert_close(
                p.log_probs(&edges).unwrap().as_slice(),
                plain.as_slice(),
                case,
            );
        }
        assert!(net.prepare_rows(g.features(), &[99]).is_err());
        let bad = net.prepare_rows(g.features(), &rows).unwrap().unwrap();
        assert!(bad.log_probs(&[(0, 5)]).is_err());
    }
}

/// Bound to the graph ([`BlackBox::bind_graph`]), every family answers one node's prediction
/// after a few toggles bit for bit as a whole pass on the edited graph does: incrementally
/// (`log_probs_at_edited`, only the rows the toggles reach) and from scratch (`log_probs_at`).
#[test]
fn the_bound_families_answer_as_a_whole_pass_on_the_edited_graph() {
    use induce_models::BoundBlackBox;
    for case in CASES {
        let dir = fixtures().join(case);
        let net = PygNet::load(dir.join("model.safetensors"), dir.join("arch.json")).unwrap();
        let data = load_reference_npz(dir.join("graph.npz")).unwrap();
        let g = &data.graph;
        let bound = BoundBlackBox::new(&net, g).unwrap();
        let binding = bound.graph_binding(g).expect("a PyG model binds");
        let n = g.num_nodes() as u32;
        let (_, _, fixture_toggles) = expected(case);
        let trials: Vec<Vec<(u32, u32)>> = vec![
            vec![],
            fixture_toggles,
            vec![g.edges()[0]],
            vec![(0, n - 1), (1, n / 2)],
            vec![g.edges()[1], (2, n - 2), g.edges()[1]],
        ];
        for toggled in &trials {
            let mut edges: BTreeSet<(u32, u32)> = g.edges().into_iter().collect();
            for &(u, w) in toggled {
                let p = (u.min(w), u.max(w));
                if !edges.remove(&p) {
                    edges.insert(p);
                }
            }
            let edited: Vec<(u32, u32)> = edges.into_iter().collect();
            let whole = net.log_probs(g.features(), &edited).unwrap();
            // Feature edits: node 2's first entry flipped, the isolated node's last one set.
            let d = g.features().dim() as u32;
            let entries = [(2, 0, 1.0 - g.features().row(2)[0]), (n - 1, d - 1, 0.5)];
            let x_edited = g.features().with_entries(&entries).unwrap();
            let whole_x = net.log_probs(&x_edited, &edited).unwrap();
            let rows: Vec<(u32, &[f32])> = [2, n - 1]
                .iter()
                .map(|&v| (v, x_edited.row(v as usize)))
                .collect();
            for node in (0..n).step_by(3) {
                let want = whole.row(node as usize);
                let fast = binding.log_probs_at_edited(node, toggled).unwrap();
                let scratch = binding.log_probs_at(node, toggled).unwrap();
                assert_eq!(fast, want, "{case}: node {node}, toggled {toggled:?}");
                assert_eq!(scratch, want, "{case}: node {node}, toggled {toggled:?}");
                let with_rows = binding.log_probs_at_rows(node, toggled, &rows).unwrap();
                assert_eq!(
                    with_rows.as_deref(),
                    Some(whole_x.row(node as usize)),
                    "{case}: node {node}, toggled {toggled:?}, feature rows changed"
                );
            }
        }
        assert!(binding.log_probs_at(n, &[]).is_err(), "{case}");
        let short = [0.0f32; 1];
        assert!(
            binding.log_probs_at_rows(0, &[], &[(1, &short)]).is_err(),
            "{case}"
        );
        assert!(binding.log_probs_at_edited(0, &[(0, n)]).is_err(), "{case}");
    }
}
