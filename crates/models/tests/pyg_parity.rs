//! PyG parity: every committed fixture (`tests/fixtures/pyg/<case>`, written by
//! `scripts/pyg-fixtures.py` with torch and PyG) loads, and our log-probabilities equal PyG's
//! to 1e-5 on the graph and on the graph with a few edges toggled.

use std::collections::BTreeSet;
use std::path::PathBuf;

use induce_graph::io::load_reference_npz;
use induce_models::BlackBox;
use induce_models::pyg::PygNet;
use induce_models::reference::safetensors_tensors;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/pyg")
}

const CASES: [&str; 6] = ["gcn", "gcn_plain", "sage", "sage_sum", "gin", "gat"];

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
        // The fixture's labels are PyG's predictions.
        assert_eq!(
            ours.predictions(),
            g.labels().iter().map(|&l| l as usize).collect::<Vec<_>>()
        );
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
        assert_eq!(net.message_passing_layers(), Some(2));
    }
}
