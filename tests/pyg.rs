//! PyG black boxes from the command line: `induce explain --black-box model.safetensors --arch
//! arch.json` on the committed PyG fixtures (`tests/fixtures/pyg`, written by
//! `scripts/pyg-fixtures.py`), every family with transductive InduCE and CF-GNNExplainer; each
//! found counterfactual is re-checked here by a whole-graph pass of the PyG model on the edited
//! graph; bad model files and architectures are one clear error line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use induce::models::BlackBox;
use induce::models::pyg::PygNet;

fn fixture(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pyg")
        .join(case)
}

fn induce(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_induce"))
        .args(args)
        .arg("--no-progress")
        .output()
        .expect("the induce binary runs")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_pyg_family_is_explained_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    for case in [
        "gcn", "sage", "gin", "gat", "sg", "appnp", "tag", "cheb", "graph", "gatv2",
    ] {
        let dir = fixture(case);
        let (data, model, arch) = (
            dir.join("graph.npz"),
            dir.join("model.safetensors"),
            dir.join("arch.json"),
        );
        let out = tmp.path().join(case);
        let o = induce(&[
            "explain",
            "--data",
            s(&data),
            "--black-box",
            s(&model),
            "--arch",
            s(&arch),
            "--method",
            "transductive,cf-gnnexplainer",
            "--targets",
            "all",
            "--all-nodes",
            "--out",
            s(&out),
        ]);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(stdout.contains("cf-gnnexplainer"), "{stdout}");
        let cfg = std::fs::read_to_string(out.join("config.json")).unwrap();
        assert!(cfg.contains("arch.json"), "{cfg}");

        // Re-check every found counterfactual with a whole-graph pass of the PyG model.
        let net = PygNet::load(&model, &arch).unwrap();
        let g = induce::graph::io::load_reference_npz(&data).unwrap().graph;
        let before = net.log_probs(g.features(), &g.edges()).unwrap();
        let mut found = [0usize; 2];
        for line in std::fs::read_to_string(out.join("explanations.jsonl"))
            .unwrap()
            .lines()
        {
            let r: serde_json::Value = serde_json::from_str(line).unwrap();
            if r["found"] != true {
                continue;
            }
            found[usize::from(r["method"] == "cf-gnnexplainer")] += 1;
            assert_eq!(r["valid"], true, "{case}: {line}");
            let mut edges: BTreeSet<(u32, u32)> = g.edges().into_iter().collect();
            for e in r["edits"].as_array().unwrap() {
                let (u, w) = (e[0].as_u64().unwrap() as u32, e[1].as_u64().unwrap() as u32);
                let p = (u.min(w), u.max(w));
                match e[2].as_str().unwrap() {
                    "add" => assert!(edges.insert(p), "{line}"),
                    _ => assert!(edges.remove(&p), "{line}"),
                }
            }
            let edited: Vec<(u32, u32)> = edges.into_iter().collect();
            let after = net.log_probs(g.features(), &edited).unwrap();
            let t = r["target"].as_u64().unwrap() as usize;
            assert_eq!(r["original_label"].as_u64(), Some(before.argmax(t) as u64));
            assert_eq!(
                r["new_label"].as_u64(),
                Some(after.argmax(t) as u64),
                "{line}"
            );
            assert_ne!(after.argmax(t), before.argmax(t), "{case}: no flip: {line}");
        }
        // Transductive InduCE finds some on every fixture; CF-GNNExplainer (deletions only) on
        // the first four families' (APPNP's teleport keeps its fixture's predictions).
        assert!(found[0] > 0, "{case}: found {found:?}");
        assert!(found[1] > 0 || case == "appnp", "{case}: found {found:?}");
    }
}

#[test]
fn bad_pyg_models_are_one_clear_line() {
    let tmp = tempfile::tempdir().unwrap();
    let gcn = fixture("gcn");
    let (data, model) = (gcn.join("graph.npz"), gcn.join("model.safetensors"));
    let one_layer = tmp.path().join("one.json");
    std::fs::write(
        &one_layer,
        r#"{"layers": [{"type": "gcn"}], "head": "lin"}"#,
    )
    .unwrap();
    let typo = tmp.path().join("typo.json");
    std::fs::write(
        &typo,
        r#"{"layers": [{"type": "gcn", "normalise": false}]}"#,
    )
    .unwrap();
    let sage_arch = fixture("sage").join("arch.json");
    let gcn_arch = gcn.join("arch.json");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--black-box", s(&model)],
            "describe the model with --arch",
        ),
        (
            vec!["--black-box", s(&model), "--arch", s(&sage_arch)],
            "layer `convs.0` holds the tensors of a GCNConv, but the architecture says \"type\": \
             \"sage\" (SAGEConv): a layer-type mismatch; write \"type\": \"gcn\"",
        ),
        (
            vec!["--black-box", s(&model), "--arch", s(&one_layer)],
            "tensor `convs.1.bias` is not part of the architecture",
        ),
        (
            vec!["--black-box", s(&model), "--arch", s(&typo)],
            "unknown field `normalise`",
        ),
        (
            vec!["--black-box", s(&gcn_arch), "--arch", s(&gcn_arch)],
            "--arch describes a PyG state_dict saved as .safetensors",
        ),
    ];
    for (extra, want) in cases {
        let out = tmp.path().join("run");
        let mut args = vec!["explain", "--data", s(&data), "--method", "transductive"];
        args.extend(extra);
        args.extend(["--out", s(&out)]);
        let o = induce(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!out.exists());
    }
    // A model whose input width is not the data's.
    let o = induce(&[
        "explain",
        "--data",
        "tree-cycles",
        "--black-box",
        s(&model),
        "--arch",
        s(&gcn_arch),
        "--method",
        "transductive",
        "--out",
        s(&tmp.path().join("run")),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("node feature dimension (the data's vs the checkpoint's): expected 10, got 6"),
        "{err}"
    );
}
