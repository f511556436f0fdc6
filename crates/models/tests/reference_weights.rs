//! Golden tests: the authors' black-box weights on the paper's BA-Shapes graph (`syn1`).
//!
//! Needs `../shared/reference` (or `INDUCE_SHARED`); without it the tests say so and pass.
//! Expected logits were computed independently with the numpy forward of
//! `shared/reference/verify.py` (`gcn_forward`) on the dense adjacency.

mod common;

use common::reference_dir;

use induce_graph::io::load_reference_npz;
use induce_graph::k_hop;
use induce_models::gcn::train::split_accuracy;
use induce_models::io::reference::load_reference_gcn;
use induce_models::testing::test_device;
use induce_models::{BlackBox, GcnBlackBox};

/// Equal up to f32 rounding: 1e-5 relative to the magnitude (log-probabilities reach −65 here,
/// where one unit in the last place is 4e-6 and the summation order of the messages matters).
fn close(got: &[f32], want: &[f32]) {
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() < 1e-5 * (1.0 + w.abs()),
            "got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn syn1_accuracy_and_logits_match_the_reference() {
    let Some(dir) = reference_dir() else { return };
    let dev = test_device().unwrap();
    let data = load_reference_npz(dir.join("syn1.npz")).unwrap();
    let gcn = load_reference_gcn(dir.join("syn1_gcn.safetensors"), &dev).unwrap();
    assert_eq!(
        (gcn.input_dim(), gcn.num_classes(), gcn.hidden()),
        (10, 4, 20)
    );
    let bb = GcnBlackBox::new(gcn, &dev);
    let (train, test) = split_accuracy(&bb, &data).unwrap();
    // 541/560 and 138/140: the paper's 96.61 % / 98.57 %.
    assert_eq!((train.unwrap() * 560.0).round() as usize, 541);
    assert_eq!((test.unwrap() * 140.0).round() as usize, 138);

    let g = &data.graph;
    let lp = bb.log_probs(g.features(), &g.edges()).unwrap();
    close(
        lp.row(0),
        &[-5.960_463_3e-7, -14.428_164, -64.847_534, -37.580_89],
    );
    close(
        lp.row(300),
        &[-2.644_856_2, -0.144_654_94, -5.168_348, -2.847_836_2],
    );
    close(
        lp.row(304),
        &[-3.725_548_7, -2.888_320_4, -1.474_230_8, -0.369_216_56],
    );
    close(
        lp.row(699),
        &[-2.241_972, -2.737_207_6, -2.814_269_8, -0.262_596_85],
    );

    // The black box on the 4-hop subgraph of eval target 563 (107 nodes, 330 edges).
    let sub = k_hop(g, 563, 4).unwrap();
    assert_eq!((sub.num_nodes(), sub.num_edges()), (107, 330));
    let lp = bb.log_probs(&sub.features(g), &sub.edges).unwrap();
    close(
        lp.row(sub.target_local),
        &[-5.993_079, -1.984_021_3, -0.497_750_37, -1.377_960_3],
    );
}

#[test]
fn every_eval_target_is_predicted_correctly_on_its_subgraph() {
    let Some(dir) = reference_dir() else { return };
    let dev = test_device().unwrap();
    for (ds, n_eval) in [("syn1", 76), ("syn4", 72), ("syn5", 129)] {
        let data = load_reference_npz(dir.join(format!("{ds}.npz"))).unwrap();
        let gcn = load_reference_gcn(dir.join(format!("{ds}_gcn.safetensors")), &dev).unwrap();
        let bb = GcnBlackBox::new(gcn, &dev);
        let targets = data.eval_targets.clone().unwrap();
        assert_eq!(targets.len(), n_eval);
        let g = &data.graph;
        // Every target; every 4th under CubeCL's CPU runtime (kernel compilation per shape).
        for &t in targets.iter().step_by(common::step_under_cube_cpu(4)) {
            let sub = k_hop(g, t, 4).unwrap();
            let lp = bb.log_probs(&sub.features(g), &sub.edges).unwrap();
            assert_eq!(
                lp.argmax(sub.target_local),
                g.labels()[t as usize] as usize,
                "{ds} {t}"
            );
        }
    }
}

#[test]
fn malformed_weight_files_are_typed_errors() {
    let dev = test_device().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.safetensors");
    std::fs::write(&p, b"\x05\x00").unwrap();
    let e = load_reference_gcn(&p, &dev).unwrap_err().to_string();
    assert!(e.contains("bad.safetensors"), "{e}");
    std::fs::write(&p, [&200u64.to_le_bytes()[..], b"{}"].concat()).unwrap();
    assert!(
        load_reference_gcn(&p, &dev)
            .unwrap_err()
            .to_string()
            .contains("truncated")
    );
    let header = br#"{"gc1.weight":{"dtype":"F32","shape":[10,20],"data_offsets":[0,800]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend(vec![0u8; 800]);
    std::fs::write(&p, &bytes).unwrap();
    assert!(
        load_reference_gcn(&p, &dev)
            .unwrap_err()
            .to_string()
            .contains("lin.weight")
    );
    assert!(load_reference_gcn(dir.path().join("missing.safetensors"), &dev).is_err());
}
