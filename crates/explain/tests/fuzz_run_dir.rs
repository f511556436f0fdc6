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
mod run_dir_mutations;

use std::path::{Path, PathBuf};

use induce_explain::ExplainError;
use induce_explain::pipeline::{Shard, format_table, merge_runs, read_run};
use rand::Rng;
use serde_json::{Value, json};

use fuzz_support::{Campaign, names};
use run_dir_mutations::{copy_dir, mutate_run, write};

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
    let mut c = Campaign::new("run_dir", 1000);
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
