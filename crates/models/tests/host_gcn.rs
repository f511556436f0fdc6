//! `HostGcn` against the Burn `GcnBlackBox` with the authors' black-box weights (syn1, syn4,
//! syn5) on the 4-hop neighbourhoods of eval targets and on the whole syn1 graph.
//!
//! Needs `../shared/reference` (or `INDUCE_SHARED`); without it the tests say so and pass.

mod common;

use common::reference_dir;

use induce_graph::io::load_reference_npz;
use induce_graph::{Features, k_hop};
use induce_models::io::reference::load_reference_gcn;
use induce_models::testing::test_device;
use induce_models::{BlackBox, GcnBlackBox, HostGcn};

/// Largest `|host − burn| / max(1, |burn|)` over all entries; the predictions must agree.
fn compare(host: &HostGcn, burn: &GcnBlackBox, x: &Features, edges: &[(u32, u32)]) -> f32 {
    let a = host.log_probs(x, edges).unwrap();
    let b = burn.log_probs(x, edges).unwrap();
    assert_eq!(a.predictions(), b.predictions());
    a.as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(p, q)| (p - q).abs() / q.abs().max(1.0))
        .fold(0.0, f32::max)
}

#[test]
fn host_gcn_equals_the_burn_black_box_on_reference_neighbourhoods() {
    let Some(dir) = reference_dir() else { return };
    let dev = test_device().unwrap();
    for ds in ["syn1", "syn4", "syn5"] {
        let data = load_reference_npz(dir.join(format!("{ds}.npz"))).unwrap();
        let gcn = load_reference_gcn(dir.join(format!("{ds}_gcn.safetensors")), &dev).unwrap();
        let host = HostGcn::from_gcn(&gcn).unwrap();
        let burn = GcnBlackBox::new(gcn, &dev);
        let g = &data.graph;
        let targets = data.eval_targets.clone().unwrap();
        let mut worst = 0.0f32;
        // Every 5th target; every 15th under CubeCL's CPU runtime.
        for &t in targets.iter().step_by(5 * common::step_under_cube_cpu(3)) {
            let sub = k_hop(g, t, 4).unwrap();
            worst = worst.max(compare(&host, &burn, &sub.features(g), &sub.edges));
            // One edit, as the explainer makes: drop the target's first edge.
            let mut edges = sub.edges.clone();
            let t_local = sub.target_local as u32;
            if let Some(k) = edges
                .iter()
                .position(|&(u, w)| u == t_local || w == t_local)
            {
                edges.remove(k);
                worst = worst.max(compare(&host, &burn, &sub.features(g), &edges));
            }
        }
        eprintln!("{ds}: largest relative difference {worst:e}");
        assert!(worst < 1e-5, "{ds}: relative difference {worst}");
    }
}

#[test]
fn host_gcn_reproduces_the_syn1_golden_logits() {
    let Some(dir) = reference_dir() else { return };
    let dev = test_device().unwrap();
    let data = load_reference_npz(dir.join("syn1.npz")).unwrap();
    let gcn = load_reference_gcn(dir.join("syn1_gcn.safetensors"), &dev).unwrap();
    let host = HostGcn::from_gcn(&gcn).unwrap();
    let burn = GcnBlackBox::new(gcn, &dev);
    let g = &data.graph;
    let worst = compare(&host, &burn, g.features(), &g.edges());
    eprintln!("syn1 full graph: largest relative difference {worst:e}");
    assert!(worst < 1e-5, "relative difference {worst}");
    // The numpy reference values of `reference_weights.rs`.
    let lp = host.log_probs(g.features(), &g.edges()).unwrap();
    for (row, want) in [
        (0, [-5.960_463_3e-7, -14.428_164, -64.847_534, -37.580_89]),
        (300, [-2.644_856_2, -0.144_654_94, -5.168_348, -2.847_836_2]),
        (699, [-2.241_972, -2.737_207_6, -2.814_269_8, -0.262_596_85]),
    ] {
        for (got, want) in lp.row(row).iter().zip(want) {
            assert!(
                (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                "row {row}: {:?}",
                lp.row(row)
            );
        }
    }
    let sub = k_hop(g, 563, 4).unwrap();
    let lp = host.log_probs(&sub.features(g), &sub.edges).unwrap();
    let want = [-5.993_079, -1.984_021_3, -0.497_750_37, -1.377_960_3];
    for (got, want) in lp.row(sub.target_local).iter().zip(want) {
        assert!((got - want).abs() < 1e-5, "{:?}", lp.row(sub.target_local));
    }
}
