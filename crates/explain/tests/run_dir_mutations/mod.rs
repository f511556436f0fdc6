//! Seed runs and structure-aware mutations of run directories, shared by the run-directory
//! campaign here and the report campaign of `induce-viz` (which includes this file with
//! `#[path]`).

#![allow(dead_code)]

use std::path::Path;

use induce_explain::pipeline::{
    BlackBoxAccuracy, GraphSize, MethodRun, RunSummary, Shard, TargetRecord, write_run,
};
use induce_explain::{Edit, Explanation};
use rand::Rng;
use rand::rngs::StdRng;
use serde_json::{Value, json};

use crate::fuzz_support::{mutate_bytes, mutate_lines};
use crate::json_mutations::mutate_json;

/// Two methods' records on `targets`.
pub fn runs(targets: &[u32]) -> Vec<MethodRun> {
    ["inductive", "random"]
        .iter()
        .enumerate()
        .map(|(m, method)| MethodRun {
            method: method.to_string(),
            records: targets
                .iter()
                .map(|&t| {
                    let found = !(t + m as u32).is_multiple_of(3);
                    TargetRecord {
                        method: method.to_string(),
                        explanation: Explanation {
                            feature_edits: Vec::new(),
                            evaluations: None,
                            certified: None,
                            target: t,
                            found,
                            original_label: 1,
                            new_label: if found { 0 } else { 1 },
                            edits: (0..(t % 4))
                                .map(|k| {
                                    if k % 2 == 0 {
                                        Edit::delete(t, t + k + 1)
                                    } else {
                                        Edit::add(t, t + k + 7)
                                    }
                                })
                                .collect(),
                        },
                        neighbourhood_edges: 5 + t as usize,
                        accuracy: found.then_some(0.5),
                        strict_accuracy: None,
                        one_minimal: found.then_some(t % 2 == 0),
                        valid: found.then_some(t % 5 != 0),
                        verdict: Default::default(),
                    }
                })
                .collect(),
            train_seconds: 1.5,
            explain_seconds: 0.25,
            notes: vec!["a note".into()],
        })
        .collect()
}

pub fn write(dir: &Path, targets: &[u32], shard: Option<Shard>) {
    let r = runs(targets);
    let summary = RunSummary {
        dataset: "tree-cycles".into(),
        seed: 42,
        graph: GraphSize {
            nodes: 871,
            edges: 1950,
        },
        black_box: BlackBoxAccuracy {
            train_accuracy: Some(0.9),
            test_accuracy: None,
        },
        shard,
        runs: r.iter().map(MethodRun::row).collect(),
        notes: vec!["strict_accuracy: no ground truth".into()],
    };
    let config = json!({"method": "inductive", "seed": 42, "shard": shard, "hops": 4});
    write_run(dir, &config, &summary, &r).unwrap();
}

/// One mutation of the run at `dir`: one of its three files, structure-aware or raw.
pub fn mutate_run(rng: &mut StdRng, dir: &Path) -> String {
    let file = ["summary.json", "explanations.jsonl", "config.json"][rng.random_range(0..3)];
    let path = dir.join(file);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return format!("{file} already unreadable");
    };
    let parses = |t: &str| serde_json::from_str::<Value>(t).is_ok();
    let structured = if file == "explanations.jsonl" {
        text.lines().all(parses)
    } else {
        parses(&text)
    };
    let choice = if structured {
        rng.random_range(0..10)
    } else {
        9
    };
    let (out, desc): (Vec<u8>, String) = match (file, choice) {
        ("explanations.jsonl", 0..=3) => {
            let mut t = text;
            let d = mutate_lines(rng, &mut t);
            (t.into_bytes(), d)
        }
        ("explanations.jsonl", 4..=7) => {
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            if lines.is_empty() {
                return format!("{file} empty");
            }
            let i = rng.random_range(0..lines.len());
            let mut v: Value = serde_json::from_str(&lines[i]).unwrap();
            let d = mutate_json(rng, &mut v);
            lines[i] = serde_json::to_string(&v).unwrap();
            (
                lines.join("\n").into_bytes(),
                format!("line {}: {d}", i + 1),
            )
        }
        ("summary.json", 0..=1)
            if serde_json::from_str::<Value>(&text).is_ok_and(|v| v.is_object()) =>
        {
            let mut v: Value = serde_json::from_str(&text).unwrap();
            let s = [
                "0/0",
                "1/1000000000000",
                "1/18446744073709551615",
                "2/1",
                "a/b",
                "18446744073709551615/18446744073709551615",
                "1/3",
                "",
            ][rng.random_range(0..8)];
            v["shard"] = json!(s);
            (
                serde_json::to_vec_pretty(&v).unwrap(),
                format!("shard set to `{s}`"),
            )
        }
        (_, 0..=7) => {
            let mut v: Value = serde_json::from_str(&text).unwrap();
            let mut d = Vec::new();
            for _ in 0..rng.random_range(1..=2) {
                d.push(mutate_json(rng, &mut v));
            }
            (serde_json::to_vec_pretty(&v).unwrap(), d.join("; "))
        }
        _ => {
            let mut b = text.into_bytes();
            let d = mutate_bytes(rng, &mut b);
            (b, format!("bytes: {d}"))
        }
    };
    if rng.random_bool(0.03) {
        std::fs::remove_file(&path).unwrap();
        return format!("{file} removed");
    }
    std::fs::write(&path, out).unwrap();
    format!("{file}: {desc}")
}

pub fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}
