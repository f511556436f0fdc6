//! The quality study (`induce::quality`) in a small configuration on the authors' Tree-Cycles:
//! every method's row, both InduCE variants, the stability columns, the files.

use std::path::PathBuf;

use induce::NoProgress;
use induce::models::testing::test_device;
use induce::quality::{QualityConfig, run_quality, write_quality};

fn reference_dir() -> Option<PathBuf> {
    induce::graph::shared::shared_path("reference", "syn4.npz")
}

#[test]
fn quick_quality_study_on_syn4_has_every_row_and_minimal_default_rows() {
    let Some(dir) = reference_dir() else { return };
    let dev = test_device().unwrap();
    let mut cfg = QualityConfig::full(&dir);
    cfg.graphs = vec!["syn4".into()];
    cfg.seeds = vec![1, 2];
    cfg.max_targets = Some(8);
    cfg.max_episodes = Some(5);
    cfg.max_iterations = Some(20);
    let report = run_quality(&cfg, &dev, &NoProgress).unwrap();
    // 5 InduCE methods × 2 variants + 5 baselines.
    assert_eq!(report.rows.len(), 15);
    for r in &report.rows {
        assert_eq!((r.graph.as_str(), r.targets), ("syn4", 8));
        let seeds = match r.method.as_str() {
            "cf-gnnexplainer" | "cf-gnnexplainer++" => 1,
            _ => 2,
        };
        assert_eq!(r.seeds, seeds, "{}", r.method);
        if r.variant == "default" && r.found_mean > 0.0 {
            assert_eq!(
                r.minimal_fraction,
                Some(1.0),
                "{} is not 1-minimal",
                r.method
            );
        }
        if r.found_mean > 0.0 && r.variant != "authors" {
            assert!(
                r.jaccard_noise.is_some(),
                "{}: no noise comparison",
                r.method
            );
        }
    }
    let tr = |v: &str| {
        report
            .rows
            .iter()
            .find(|r| r.method == "transductive" && r.variant == v)
            .unwrap()
    };
    assert!(tr("default").size_mean <= tr("paper-faithful").size_mean);
    let out = tempfile::tempdir().unwrap();
    write_quality(&report, out.path()).unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("quality.json")).unwrap()).unwrap();
    let row = &json["rows"][0];
    for key in [
        "graph",
        "method",
        "seeds",
        "found_mean",
        "fidelity_mean",
        "size_mean",
        "size_std_over_seeds",
        "strict_accuracy_mean",
        "minimal_fraction",
        "jaccard_seeds",
        "jaccard_noise",
        "explain_seconds",
    ] {
        assert!(row.get(key).is_some(), "quality.json rows lack {key}");
    }
    assert!(out.path().join("quality.md").is_file());
}
