//! The experiment pipeline in quick mode writes the documented files with the documented keys.

use induce::NoProgress;
use induce::experiment::{ExperimentConfig, run};
use induce::models::testing::test_device;
use induce::pipeline::format_table;

#[test]
fn quick_tree_cycles_run_writes_summary_explanations_and_config() {
    let dev = test_device().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = ExperimentConfig::paper("tree-cycles", 7).quick();
    let out = dir.path().join("run");
    let s = run(&cfg, None, &out, &dev, &NoProgress).unwrap();
    let methods: Vec<&str> = s.runs.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(
        methods,
        [
            "inductive",
            "inductive-best-of-k",
            "transductive",
            "inductive-del-only",
            "untrained",
            "random",
            "cf-gnnexplainer",
            "cf-gnnexplainer++",
            "cf2",
            "pgexplainer"
        ]
    );
    // Each baseline's row says what it ran with.
    let pg = s.runs.iter().find(|r| r.method == "pgexplainer").unwrap();
    assert!(
        pg.notes.iter().any(|n| n.contains("trained on")),
        "{:?}",
        pg.notes
    );
    // ... and on which radius: its 3 hops widened to the 3-layer GCN's receptive field.
    assert!(
        pg.notes.iter().any(|n| n.contains("L + 1 = 4 hops")),
        "{:?}",
        pg.notes
    );
    assert!(format_table(&[&s]).contains("transductive"));
    // InduCE's rows say whether the minimality pass ran (it does by default: every
    // counterfactual is 1-minimal) and how many episodes best-of-k samples.
    for r in s.runs.iter().take(5) {
        assert!(
            r.notes.iter().any(|n| n.contains("minimality pass")),
            "{:?}",
            r.notes
        );
        if r.metrics.found > 0 {
            assert_eq!(r.metrics.one_minimal, Some(1.0), "{}", r.method);
        }
    }
    let bok = s
        .runs
        .iter()
        .find(|r| r.method == "inductive-best-of-k")
        .unwrap();
    assert!(bok.notes.iter().any(|n| n.contains("best of 16 episodes")));

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
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
    let lines = std::fs::read_to_string(out.join("explanations.jsonl")).unwrap();
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
        serde_json::from_slice(&std::fs::read(out.join("config.json")).unwrap()).unwrap();
    assert_eq!(config, cfg);
    // The run can be drawn: its config names no black box (trained here, black_box null) and
    // the one saved beside the results is loaded.
    assert!(config.black_box.is_none());
    let opened = induce::render::open_run(&out, &dev).unwrap();
    let t = first["target"].as_u64().unwrap() as u32;
    let svg = induce::render::render_target(&opened, None, t).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
    // Reproducible: the same config gives the same explanations.
    let out2 = dir.path().join("run2");
    run(&cfg, None, &out2, &dev, &NoProgress).unwrap();
    assert_eq!(
        lines,
        std::fs::read_to_string(out2.join("explanations.jsonl")).unwrap()
    );

    // A rerun replaces the whole directory: no file of an earlier run is left beside it.
    std::fs::write(out2.join("stale.txt"), b"stale").unwrap();
    let mut c2 = cfg.clone();
    c2.max_targets = Some(2);
    c2.methods = vec![induce::Method::TRANSDUCTIVE];
    run(&c2, None, &out2, &dev, &NoProgress).unwrap();
    assert!(!out2.join("stale.txt").exists());
    assert!(!out2.join("policy.bpk").exists());
}
