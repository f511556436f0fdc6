//! Mutation fuzzing of the run-directory readers: `read_run` (what `induce eval` and `report`
//! read) and `merge_runs` (`induce merge`) on runs whose `summary.json`, `explanations.jsonl`
//! or `config.json` were damaged: JSON fields deleted or of the wrong type, hostile numbers and
//! shard strings, lines deleted, duplicated or swapped, bytes damaged. Every input must read or
//! give an `ExplainError`; none may panic or hang. Budget: `INDUCE_FUZZ_ITERS` /
//! `INDUCE_FUZZ_SECONDS` (docs/RELIABILITY.md).

#[path = "../../graph/tests/fuzz_support/mod.rs"]
mod fuzz_support;
#[path = "../../graph/tests/fuzz_support/json.rs"]
mod json_mutations;

use std::path::{Path, PathBuf};

use induce_explain::pipeline::{
    BlackBoxAccuracy, GraphSize, MethodRun, RunSummary, Shard, TargetRecord, format_table,
    merge_runs, read_run, write_run,
};
use induce_explain::{Edit, ExplainError, Explanation};
use rand::Rng;
use rand::rngs::StdRng;
use serde_json::{Value, json};

use fuzz_support::{Campaign, mutate_bytes, mutate_lines, names};
use json_mutations::mutate_json;

/// Two methods' records on `targets`.
fn runs(targets: &[u32]) -> Vec<MethodRun> {
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
                    }
                })
                .collect(),
            train_seconds: 1.5,
            explain_seconds: 0.25,
            notes: vec!["a note".into()],
        })
        .collect()
}

fn write(dir: &Path, targets: &[u32], shard: Option<Shard>) {
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
fn mutate_run(rng: &mut StdRng, dir: &Path) -> String {
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
        ("summary.json", 0..=1) => {
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

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// What `induce eval` / `report` do with a run they read: rows recomputed from the records and
/// the results table.
fn use_run(dir: &Path) -> Result<(), ExplainError> {
    let r = read_run(dir)?;
    for m in &r.runs {
        let _ = m.row();
        let _ = m.explanations();
    }
    let _ = format_table(&[&r.summary]);
    Ok(())
}

#[test]
fn fuzz_run_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let targets: Vec<u32> = (0..30).map(|k| k * 7 % 800).collect();
    let seeds = tmp.path().join("seeds");
    write(&seeds.join("run_whole"), &targets, None);
    for i in 1..=3 {
        write(
            &seeds.join(format!("run_shard{i}")),
            &Shard { index: i, count: 3 }.select(&targets),
            Some(Shard { index: i, count: 3 }),
        );
    }
    let mut c = Campaign::new("run_dir", 1500);
    while let Some((case, mut rng)) = c.next_case() {
        let work = tmp.path().join("work");
        let names_: Vec<String> = (1..=3).map(|i| format!("run_shard{i}")).collect();
        for n in names_.iter().chain(["run_whole".to_string()].iter()) {
            copy_dir(&seeds.join(n), &work.join(n));
        }
        let victim =
            ["run_whole", "run_shard1", "run_shard2", "run_shard3"][rng.random_range(0..4)];
        let dir = work.join(victim);
        let mut d = Vec::new();
        for _ in 0..rng.random_range(1..=2) {
            d.push(mutate_run(&mut rng, &dir));
        }
        let desc = format!("{victim}: {}", d.join("; "));
        let shards: Vec<PathBuf> = if victim == "run_whole" {
            vec![dir.clone()]
        } else {
            names_.iter().map(|n| work.join(n)).collect()
        };
        let p = dir.clone();
        c.run(case, &format!("read_run {desc}"), move || use_run(&p), {
            let dir = dir.clone();
            move |e: &ExplainError| {
                (!names(&e.to_string(), &dir)).then(|| format!("does not name {}", dir.display()))
            }
        });
        c.run(
            case,
            &format!("merge_runs {desc}"),
            move || {
                let m = merge_runs(&shards)?;
                let _ = format_table(&[&m.summary]);
                Ok::<_, ExplainError>(())
            },
            |_| None,
        );
    }
    c.finish();
}

/// A shard `1/18446744073709551615` in `summary.json`: merging must name the missing shards
/// without listing (or allocating) all 2^64 of them.
#[test]
fn memory_bomb_merge_with_shard_count_2_pow_64() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run_bomb");
    write(&dir, &[1, 2, 3], Some(Shard { index: 1, count: 2 }));
    let p = dir.join("summary.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    v["shard"] = json!(format!("1/{}", usize::MAX));
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    let e = merge_runs(&[&dir]).unwrap_err();
    assert!(matches!(e, ExplainError::Merge(_)), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("2/{}", usize::MAX))
            && msg.contains(&format!("{} in all", usize::MAX - 1)),
        "{msg}"
    );
}
