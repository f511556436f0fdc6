//! The experiment pipeline in quick mode writes the documented files with the documented keys.

use induce_graph::generators::SyntheticKind;
use induce_models::device::default_device;
use induce_rl::experiment::{ExperimentConfig, format_table, run};

#[test]
fn quick_tree_cycles_run_writes_summary_explanations_and_config() {
    let dev = default_device().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = ExperimentConfig::paper(SyntheticKind::TreeCycles, 7).quick();
    cfg.progress = false;
    let s = run(&cfg, dir.path(), &dev).unwrap();
    let methods: Vec<&str> = s.runs.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(
        methods,
        [
            "induce-inductive",
            "induce-transductive",
            "induce-inductive-del-only",
            "untrained-policy"
        ]
    );
    assert!(format_table(&s).contains("induce-transductive"));

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    for key in ["dataset", "seed", "graph", "black_box", "runs"] {
        assert!(json.get(key).is_some(), "summary.json lacks {key}");
    }
    assert_eq!(json["graph"]["nodes"], 871);
    let row = &json["runs"][0];
    for key in [
        "method",
        "targets",
        "found",
        "fidelity",
        "size_mean",
        "size_std",
        "accuracy",
        "strict_accuracy",
        "sparsity",
        "additions",
        "deletions",
        "train_seconds",
        "explain_seconds",
    ] {
        assert!(row.get(key).is_some(), "run row lacks {key}");
    }
    let lines = std::fs::read_to_string(dir.path().join("explanations.jsonl")).unwrap();
    let n = s.runs.iter().map(|r| r.metrics.targets).sum::<usize>();
    assert_eq!(lines.lines().count(), n);
    let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    for key in [
        "method",
        "target",
        "found",
        "original_label",
        "new_label",
        "edits",
    ] {
        assert!(first.get(key).is_some(), "explanation line lacks {key}");
    }
    let config: ExperimentConfig =
        serde_json::from_slice(&std::fs::read(dir.path().join("config.json")).unwrap()).unwrap();
    assert_eq!(config, cfg);
    // Reproducible: the same config gives the same explanations.
    let dir2 = tempfile::tempdir().unwrap();
    run(&cfg, dir2.path(), &dev).unwrap();
    assert_eq!(
        lines,
        std::fs::read_to_string(dir2.path().join("explanations.jsonl")).unwrap()
    );

    // A stale file of an earlier run in the output directory is removed by the next run.
    std::fs::write(dir2.path().join("policy-del-only.json"), b"stale").unwrap();
    let mut c2 = cfg.clone();
    c2.max_targets = Some(2);
    run(&c2, dir2.path(), &dev).unwrap();
    let text = std::fs::read_to_string(dir2.path().join("policy-del-only.json")).unwrap();
    assert_ne!(text, "stale");
}
