//! Mutation fuzzing of the weight readers: SafeTensors import of the authors' GCN and policy
//! (`load_reference_gcn`, `load_reference_policy`, `safetensors_shapes`) and our burnpack
//! checkpoints with their JSON config (`load_gcn`, `load_config`). Seeds: the authors' files in
//! `../shared/reference` when present, and files written here. Every input must load or give a
//! `ModelError`; none may panic or hang. Budget: `INDUCE_FUZZ_ITERS` / `INDUCE_FUZZ_SECONDS`
//! (docs/RELIABILITY.md).

#[path = "../../graph/tests/fuzz_support/mod.rs"]
mod fuzz_support;
#[path = "../../graph/tests/fuzz_support/json.rs"]
mod json_mutations;

use std::path::{Path, PathBuf};

use induce_models::io::checkpoint::{load_config, load_gcn, save_gcn};
use induce_models::io::reference::{load_reference_gcn, load_reference_policy, safetensors_shapes};
use induce_models::testing::test_device;
use induce_models::{GcnConfig, ModelError};
use rand::Rng;
use rand::rngs::StdRng;
use serde_json::{Value, json};

use fuzz_support::{Campaign, INTERESTING_FLOATS, mutate_bytes, names};
use json_mutations::mutate_json;

fn shared_reference() -> Option<PathBuf> {
    induce_graph::shared::shared_path("reference", "")
}

/// An error must name the file it is about (a dimension mismatch names the checkpoint in its
/// `what`).
fn vague(path: PathBuf) -> impl Fn(&ModelError) -> Option<String> {
    move |e| (!names(&e.to_string(), &path)).then(|| format!("does not name {}", path.display()))
}

/// A SafeTensors file of f32 tensors `(name, shape)` with values `0.01 · k`.
fn safetensors(tensors: &[(String, Vec<usize>)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, shape) in tensors {
        let start = data.len();
        for k in 0..shape.iter().product::<usize>() {
            data.extend_from_slice(&(k as f32 * 0.01).to_le_bytes());
        }
        header.insert(
            name.clone(),
            json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    join_safetensors(&Value::Object(header), &data)
}

fn join_safetensors(header: &Value, data: &[u8]) -> Vec<u8> {
    let h = serde_json::to_vec(header).unwrap();
    let mut b = (h.len() as u64).to_le_bytes().to_vec();
    b.extend(h);
    b.extend_from_slice(data);
    b
}

fn gcn_tensors(d: usize, h: usize, c: usize) -> Vec<(String, Vec<usize>)> {
    vec![
        ("gc1.weight".into(), vec![d, h]),
        ("gc1.bias".into(), vec![h]),
        ("gc2.weight".into(), vec![h, h]),
        ("gc2.bias".into(), vec![h]),
        ("gc3.weight".into(), vec![h, h]),
        ("gc3.bias".into(), vec![h]),
        ("lin.weight".into(), vec![c, 3 * h]),
        ("lin.bias".into(), vec![c]),
    ]
}

fn policy_tensors(d: usize, h: usize, layers: usize, m: usize) -> Vec<(String, Vec<usize>)> {
    let mut t = Vec::new();
    for i in 0..layers {
        let (g, bn) = (2 * i, 2 * i + 1);
        let d_in = if i == 0 { d } else { h };
        t.push((format!("gcn.{g}.lin_src.weight"), vec![h, d_in]));
        t.push((format!("gcn.{g}.lin_dst.weight"), vec![h, d_in]));
        t.push((format!("gcn.{g}.att_src"), vec![1, 1, h]));
        t.push((format!("gcn.{g}.att_dst"), vec![1, 1, h]));
        t.push((format!("gcn.{g}.bias"), vec![h]));
        t.push((format!("gcn.{bn}.weight"), vec![h]));
        t.push((format!("gcn.{bn}.bias"), vec![h]));
        t.push((format!("gcn.{bn}.running_mean"), vec![h]));
    }
    for (k, shape) in [[m, 2 * h + 1], [m, m], [1, m]].iter().enumerate() {
        t.push((
            format!("confidence_model.layers.{k}.weight"),
            shape.to_vec(),
        ));
        t.push((format!("confidence_model.layers.{k}.bias"), vec![shape[0]]));
    }
    t
}

/// Splits a SafeTensors file into its header JSON and data, when it is well formed enough.
fn split(bytes: &[u8]) -> Option<(Value, Vec<u8>)> {
    let len = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?) as usize;
    let header = serde_json::from_slice(bytes.get(8..8usize.checked_add(len)?)?).ok()?;
    Some((header, bytes[8 + len..].to_vec()))
}

/// One structure-aware mutation of a SafeTensors file: a tensor's shape, dtype or data
/// offsets made hostile, the header JSON mutated, NaN/inf in the data, the header length
/// field changed, or raw bytes damaged.
fn mutate_safetensors(rng: &mut StdRng, bytes: &mut Vec<u8>) -> String {
    let Some((mut header, mut data)) = split(bytes) else {
        return mutate_bytes(rng, bytes);
    };
    let names: Vec<String> = header
        .as_object()
        .map(|o| o.keys().filter(|k| *k != "__metadata__").cloned().collect())
        .unwrap_or_default();
    if names.is_empty() {
        return mutate_bytes(rng, bytes);
    }
    let name = names[rng.random_range(0..names.len())].clone();
    // Entries already turned into non-objects by an earlier mutation get JSON mutations only.
    let op = if header[&name].is_object() {
        rng.random_range(0..9)
    } else {
        3
    };
    let desc = match op {
        0 => {
            let shapes = [
                json!([1_000_000, 1_000_000]),
                json!([1_000_000_000_000u64]),
                json!([]),
                json!([0]),
                json!([0, 20]),
                json!([3, 4, 5, 6]),
                json!([-1]),
                json!([u64::MAX, 2]),
                json!([20, 20]),
                json!([1, 1, 1000000]),
            ];
            let s = shapes[rng.random_range(0..shapes.len())].clone();
            header[&name]["shape"] = s.clone();
            format!("{name}: shape set to {s}")
        }
        1 => {
            let dt = [
                "F64", "F16", "BF16", "I64", "I32", "U8", "BOOL", "F8_E4M3", "XYZ", "",
            ][rng.random_range(0..10)];
            header[&name]["dtype"] = json!(dt);
            format!("{name}: dtype set to {dt}")
        }
        2 => {
            let len = data.len() as u64;
            let offs = [
                json!([0, len + 1]),
                json!([len, 0]),
                json!([0, u64::MAX]),
                json!([u64::MAX - 3, u64::MAX]),
                json!([0, 0]),
                json!([4, 8]),
                json!([0]),
                json!([-4, 4]),
            ];
            let o = offs[rng.random_range(0..offs.len())].clone();
            header[&name]["data_offsets"] = o.clone();
            format!("{name}: data_offsets set to {o}")
        }
        3 | 4 => format!("header: {}", mutate_json(rng, &mut header)),
        5 => {
            // A second entry under another name with the same data.
            let e = header[&name].clone();
            let other = names[rng.random_range(0..names.len())].clone();
            header[&other] = e;
            format!("{other} given {name}'s entry")
        }
        6 if data.len() >= 4 => {
            let f = INTERESTING_FLOATS[rng.random_range(0..INTERESTING_FLOATS.len())] as f32;
            let i = rng.random_range(0..data.len() / 4) * 4;
            data[i..i + 4].copy_from_slice(&f.to_le_bytes());
            format!("data value at byte {i} set to {f}")
        }
        7 => {
            let mut b = join_safetensors(&header, &data);
            let v = [0u64, 1, 7, u64::MAX, 1 << 40, b.len() as u64][rng.random_range(0..6)];
            b[..8].copy_from_slice(&v.to_le_bytes());
            *bytes = b;
            return format!("header length set to {v}");
        }
        _ => {
            let mut b = join_safetensors(&header, &data);
            let d = mutate_bytes(rng, &mut b);
            *bytes = b;
            return format!("bytes: {d}");
        }
    };
    *bytes = join_safetensors(&header, &data);
    desc
}

fn safetensors_campaign(
    name: &str,
    iters: u64,
    seeds: Vec<(String, Vec<u8>)>,
    reader: fn(&Path) -> Result<(), ModelError>,
) {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = Campaign::new(name, iters);
    while let Some((case, mut rng)) = c.next_case() {
        let (seed, bytes) = &seeds[rng.random_range(0..seeds.len())];
        let mut b = bytes.clone();
        let mut d = Vec::new();
        for _ in 0..rng.random_range(1..=2) {
            d.push(mutate_safetensors(&mut rng, &mut b));
        }
        let path = tmp.path().join(format!("{seed}.safetensors"));
        std::fs::write(&path, &b).unwrap();
        let p = path.clone();
        c.run(
            case,
            &format!("{seed}: {}", d.join("; ")),
            move || reader(&p),
            vague(path),
        );
    }
    c.finish();
}

fn seeds(kind: &str, generated: Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
    let mut s = generated;
    if let Some(dir) = shared_reference() {
        for ds in ["syn1", "syn4", "syn5"] {
            if let Ok(b) = std::fs::read(dir.join(format!("{ds}_{kind}.safetensors"))) {
                s.push((format!("{ds}_{kind}"), b));
            }
        }
    }
    s
}

#[test]
fn fuzz_reference_gcn_safetensors() {
    let seeds = seeds(
        "gcn",
        vec![
            ("gen_gcn".into(), safetensors(&gcn_tensors(10, 20, 4))),
            ("gen_small_gcn".into(), safetensors(&gcn_tensors(3, 2, 2))),
        ],
    );
    safetensors_campaign("reference_gcn_safetensors", 3000, seeds, |p| {
        let dev = test_device()?;
        safetensors_shapes(p)?;
        load_reference_gcn(p, &dev).map(drop)
    });
}

#[test]
fn fuzz_reference_policy_safetensors() {
    let seeds = seeds(
        "policy",
        vec![
            (
                "gen_policy".into(),
                safetensors(&policy_tensors(10, 16, 3, 64)),
            ),
            (
                "gen_small_policy".into(),
                safetensors(&policy_tensors(3, 2, 2, 4)),
            ),
        ],
    );
    safetensors_campaign("reference_policy_safetensors", 3000, seeds, |p| {
        let dev = test_device()?;
        load_reference_policy(p, &dev).map(drop)
    });
}

#[test]
fn fuzz_gcn_checkpoint_and_config() {
    let tmp = tempfile::tempdir().unwrap();
    let dev = test_device().unwrap();
    let seed_dir = tmp.path().join("seed");
    let mut seeds = Vec::new();
    for (d, c, h) in [(10usize, 4usize, 20usize), (3, 2, 5)] {
        let cfg = GcnConfig::new(d, c).with_hidden(h);
        let p = seed_dir.join(format!("gcn_{d}_{c}.bpk"));
        save_gcn(&cfg.init(&dev), &cfg, &p).unwrap();
        let bpk = std::fs::read(&p).unwrap();
        let cfg: Value =
            serde_json::from_slice(&std::fs::read(p.with_extension("json")).unwrap()).unwrap();
        seeds.push(((d, c), bpk, cfg));
    }
    let mut c = Campaign::new("gcn_checkpoint", 2000);
    while let Some((case, mut rng)) = c.next_case() {
        let ((d, k), bpk, cfg) = &seeds[rng.random_range(0..seeds.len())];
        let (mut bpk, mut cfg) = (bpk.clone(), cfg.clone());
        let mut desc = Vec::new();
        let mut cfg_text = None;
        match rng.random_range(0..10) {
            0..=3 => {
                for _ in 0..rng.random_range(1..=3) {
                    desc.push(format!("record: {}", mutate_bytes(&mut rng, &mut bpk)));
                }
            }
            4..=7 => {
                for _ in 0..rng.random_range(1..=2) {
                    desc.push(format!("config: {}", mutate_json(&mut rng, &mut cfg)));
                }
            }
            8 => {
                let mut t = serde_json::to_vec(&cfg).unwrap();
                desc.push(format!("config bytes: {}", mutate_bytes(&mut rng, &mut t)));
                cfg_text = Some(t);
            }
            _ => {
                // A config whose dimensions disagree with the record (or are huge).
                let key = ["input_dim", "num_classes", "hidden"][rng.random_range(0..3)];
                let v = [0u64, 1, 21, 1_000_000, 1 << 40, u64::MAX][rng.random_range(0..6)];
                cfg[key] = json!(v);
                desc.push(format!("config: {key} = {v}"));
            }
        }
        let path = tmp.path().join("case/model.bpk");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &bpk).unwrap();
        let text = cfg_text.unwrap_or_else(|| serde_json::to_vec(&cfg).unwrap());
        std::fs::write(path.with_extension("json"), text).unwrap();
        let expect = rng.random_bool(0.5).then_some((*d, *k));
        let p = path.clone();
        let dir = tmp.path().join("case");
        c.run(
            case,
            &format!("gcn_{d}_{k}: {} (expect {expect:?})", desc.join("; ")),
            move || {
                let dev = test_device()?;
                let _ = load_config::<GcnConfig>(&p)?;
                load_gcn(&p, expect, &dev).map(drop)
            },
            // The config or the record, both in `case/`.
            vague(dir),
        );
    }
    c.finish();
}
