//! Mutation fuzzing of the graph readers: the reference npz, the gnn-benchmark npz, the OGB
//! folder and `load` with format detection. Seeds: the real files in `../shared` when present,
//! and files written here from generated datasets. Every input must load or give a
//! `GraphError` naming the file; none may panic or hang. `INDUCE_FUZZ_ITERS` /
//! `INDUCE_FUZZ_SECONDS` set the budget (see `fuzz_support/mod.rs` and docs/RELIABILITY.md).

mod fuzz_support;
#[path = "fuzz_support/npz.rs"]
mod npz_mutations;

use std::io::Write;
use std::path::{Path, PathBuf};

use induce_graph::generators::SyntheticKind;
use induce_graph::io::{load, load_gnn_benchmark_npz, load_ogb_dir, load_reference_npz, save_npz};
use induce_graph::{Dataset, GraphError};
use rand::Rng;
use rand::rngs::StdRng;

use fuzz_support::{Campaign, mutate_bytes, mutate_lines, names};
use npz_mutations::{mutate_npz, npy, read_members, zip_archive};

type Members = Vec<(String, Vec<u8>)>;

fn shared() -> Option<PathBuf> {
    induce_graph::shared::shared_path("", "")
}

fn dataset() -> Dataset {
    SyntheticKind::TreeCycles.generate(7).unwrap()
}

/// An error must name the file (or folder) it is about.
fn vague(path: PathBuf) -> impl Fn(&GraphError) -> Option<String> {
    move |e| (!names(&e.to_string(), &path)).then(|| format!("does not name {}", path.display()))
}

/// Reference-layout seeds: `(file stem, members)`.
fn reference_seeds(tmp: &Path) -> Vec<(String, Members)> {
    let mut seeds = Vec::new();
    if let Some(s) = shared() {
        for name in ["syn1", "syn4", "syn5"] {
            if let Ok(b) = std::fs::read(s.join(format!("reference/{name}.npz"))) {
                seeds.push((name.to_string(), read_members(&b)));
            }
        }
    }
    let p = tmp.join("generated.npz");
    save_npz(&dataset(), &p).unwrap();
    seeds.push((
        "generated".into(),
        read_members(&std::fs::read(&p).unwrap()),
    ));
    seeds
}

fn i64s(v: impl IntoIterator<Item = i64>) -> Vec<u8> {
    v.into_iter().flat_map(i64::to_le_bytes).collect()
}

fn npy_1d_i64(v: &[i64]) -> Vec<u8> {
    npy(
        &format!(
            "{{'descr': '<i8', 'fortran_order': False, 'shape': ({},), }}",
            v.len()
        ),
        &i64s(v.iter().copied()),
    )
}

/// A gnn-benchmark archive written from a dataset: CSR adjacency; features as CSR (`dense`
/// false) or a dense `attr_matrix`; labels as an int vector or a one-hot CSR matrix.
fn gnn_benchmark_members(ds: &Dataset, dense: bool, onehot: bool) -> Members {
    let g = &ds.graph;
    let n = g.num_nodes();
    let mut adj: Vec<Vec<i64>> = vec![Vec::new(); n];
    for (u, w) in g.edges() {
        adj[u as usize].push(w as i64);
        adj[w as usize].push(u as i64);
    }
    let csr = |rows: &[Vec<i64>]| {
        let mut indptr = vec![0i64];
        let mut indices = Vec::new();
        for r in rows {
            indices.extend_from_slice(r);
            indptr.push(indices.len() as i64);
        }
        (indptr, indices)
    };
    let mut m: Members = Vec::new();
    let (indptr, indices) = csr(&adj);
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    m.push((
        "adj_data.npy".into(),
        npy(
            &format!(
                "{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}",
                indices.len()
            ),
            &f32s(&vec![1.0; indices.len()]),
        ),
    ));
    m.push(("adj_indices.npy".into(), npy_1d_i64(&indices)));
    m.push(("adj_indptr.npy".into(), npy_1d_i64(&indptr)));
    m.push(("adj_shape.npy".into(), npy_1d_i64(&[n as i64, n as i64])));
    let d = g.features().dim();
    if dense {
        m.push((
            "attr_matrix.npy".into(),
            npy(
                &format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({n}, {d}), }}"),
                &f32s(g.features().as_slice()),
            ),
        ));
    } else {
        let mut rows = Vec::new();
        let mut vals = Vec::new();
        for u in 0..n {
            let row = g.features().row(u);
            rows.push(
                (0..d)
                    .filter(|&j| row[j] != 0.0)
                    .map(|j| j as i64)
                    .collect(),
            );
            vals.extend(row.iter().copied().filter(|&x| x != 0.0));
        }
        let (p, i) = csr(&rows);
        m.push((
            "attr_data.npy".into(),
            npy(
                &format!(
                    "{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}",
                    vals.len()
                ),
                &f32s(&vals),
            ),
        ));
        m.push(("attr_indices.npy".into(), npy_1d_i64(&i)));
        m.push(("attr_indptr.npy".into(), npy_1d_i64(&p)));
        m.push(("attr_shape.npy".into(), npy_1d_i64(&[n as i64, d as i64])));
    }
    let labels: Vec<i64> = g.labels().iter().map(|&l| l as i64).collect();
    if onehot {
        let c = labels.iter().max().unwrap() + 1;
        let (p, i) = csr(&labels.iter().map(|&l| vec![l]).collect::<Vec<_>>());
        m.push((
            "labels_data.npy".into(),
            npy(
                &format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({n},), }}"),
                &f32s(&vec![1.0; n]),
            ),
        ));
        m.push(("labels_indices.npy".into(), npy_1d_i64(&i)));
        m.push(("labels_indptr.npy".into(), npy_1d_i64(&p)));
        m.push(("labels_shape.npy".into(), npy_1d_i64(&[n as i64, c])));
    } else {
        m.push(("labels.npy".into(), npy_1d_i64(&labels)));
    }
    m
}

fn gnn_benchmark_seeds() -> Vec<(String, Members)> {
    let mut seeds = Vec::new();
    if let Some(s) = shared() {
        // Cora only in the short campaign (CiteSeer and Amazon-Photo are larger: long one).
        let mut names = vec!["cora"];
        if std::env::var_os("INDUCE_FUZZ_SECONDS").is_some() {
            names.push("citeseer");
        }
        for name in names {
            if let Ok(b) = std::fs::read(s.join(format!("datasets/cora-citeseer-npz/{name}.npz"))) {
                seeds.push((name.to_string(), read_members(&b)));
            }
        }
    }
    let ds = dataset();
    for (dense, onehot) in [(false, false), (true, true), (false, true)] {
        seeds.push((
            format!(
                "bench-{}-{}",
                if dense { "dense" } else { "csr" },
                if onehot { "onehot" } else { "ints" }
            ),
            gnn_benchmark_members(&ds, dense, onehot),
        ));
    }
    seeds
}

fn npz_campaign(
    name: &str,
    iters: u64,
    seeds: Vec<(String, Members)>,
    reader: fn(&Path) -> Result<(), GraphError>,
) {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = Campaign::new(name, iters);
    while let Some((case, mut rng)) = c.next_case() {
        let (stem, members) = &seeds[rng.random_range(0..seeds.len())];
        let (bytes, desc) = mutate_npz(&mut rng, members);
        // The file keeps its seed's stem: `syn1` etc. select the motif reconstruction.
        let path = tmp.path().join(format!("{stem}.npz"));
        std::fs::write(&path, &bytes).unwrap();
        let p = path.clone();
        c.run(
            case,
            &format!("{stem}.npz: {desc}"),
            move || reader(&p),
            vague(path),
        );
    }
    c.finish();
}

#[test]
fn fuzz_reference_npz() {
    let tmp = tempfile::tempdir().unwrap();
    let seeds = reference_seeds(tmp.path());
    npz_campaign("reference_npz", 3000, seeds, |p| {
        load_reference_npz(p).map(drop)
    });
}

#[test]
fn fuzz_gnn_benchmark_npz() {
    npz_campaign("gnn_benchmark_npz", 1500, gnn_benchmark_seeds(), |p| {
        load_gnn_benchmark_npz(p).map(drop)
    });
}

/// The files of an OGB folder written from a dataset: `(relative path without .csv, text)`.
fn ogb_files(ds: &Dataset) -> Vec<(String, String)> {
    let g = &ds.graph;
    let feat: String = (0..g.num_nodes())
        .map(|u| {
            let row: Vec<String> = g.features().row(u).iter().map(|x| x.to_string()).collect();
            row.join(",") + "\n"
        })
        .collect();
    let labels: String = g.labels().iter().map(|l| format!("{l}\n")).collect();
    let edges: String = g
        .edges()
        .iter()
        .map(|(u, w)| format!("{u},{w}\n"))
        .collect();
    let ids = |v: &[u32]| v.iter().map(|u| format!("{u}\n")).collect::<String>();
    let n = ds.split.train.len();
    vec![
        ("raw/node-feat".into(), feat),
        ("raw/node-label".into(), labels),
        ("raw/edge".into(), edges),
        ("split/time/train".into(), ids(&ds.split.train[..n / 2])),
        ("split/time/valid".into(), ids(&ds.split.train[n / 2..])),
        ("split/time/test".into(), ids(&ds.split.test)),
    ]
}

fn gz(text: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(text).unwrap();
    enc.finish().unwrap()
}

/// Writes a mutated OGB folder at `dir` from `files` (gzipped or plain); returns the mutation.
fn write_mutated_ogb(rng: &mut StdRng, dir: &Path, files: &[(String, String)]) -> String {
    let _ = std::fs::remove_dir_all(dir);
    let gzipped = rng.random_bool(0.4);
    let target = rng.random_range(0..files.len());
    let mut desc = String::new();
    for (k, (rel, text)) in files.iter().enumerate() {
        let path = dir.join(format!("{rel}.csv{}", if gzipped { ".gz" } else { "" }));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        if k != target {
            let bytes = if gzipped {
                gz(text.as_bytes())
            } else {
                text.clone().into_bytes()
            };
            std::fs::write(&path, bytes).unwrap();
            continue;
        }
        let bytes = match rng.random_range(0..10) {
            0..=5 => {
                let mut t = text.clone();
                let mut d = Vec::new();
                for _ in 0..rng.random_range(1..=3) {
                    d.push(mutate_lines(rng, &mut t));
                }
                desc = format!("{rel}: {}", d.join("; "));
                if gzipped {
                    gz(t.as_bytes())
                } else {
                    t.into_bytes()
                }
            }
            6 | 7 => {
                let mut b = if gzipped {
                    gz(text.as_bytes())
                } else {
                    text.clone().into_bytes()
                };
                desc = format!("{rel} bytes: {}", mutate_bytes(rng, &mut b));
                b
            }
            8 => {
                desc = format!("{rel} missing");
                continue;
            }
            _ => {
                // Both a .csv.gz and a different plain .csv: the .gz wins.
                let mut t = text.clone();
                let d = mutate_lines(rng, &mut t);
                std::fs::write(dir.join(format!("{rel}.csv")), text).unwrap();
                desc = format!("{rel}.csv.gz beside the plain file: {d}");
                std::fs::write(dir.join(format!("{rel}.csv.gz")), gz(t.as_bytes())).unwrap();
                continue;
            }
        };
        std::fs::write(&path, bytes).unwrap();
    }
    format!(
        "{} folder, {desc}",
        if gzipped { "gzipped" } else { "plain" }
    )
}

#[test]
fn fuzz_ogb_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let files = ogb_files(&dataset());
    let mut c = Campaign::new("ogb_dir", 1000);
    while let Some((case, mut rng)) = c.next_case() {
        let dir = tmp.path().join("ogbn_fuzz");
        let desc = write_mutated_ogb(&mut rng, &dir, &files);
        let d = dir.clone();
        c.run(
            case,
            &desc,
            move || load_ogb_dir(&d, "time").map(drop),
            vague(dir),
        );
    }
    c.finish();
}

#[test]
fn fuzz_load_with_format_detection() {
    let tmp = tempfile::tempdir().unwrap();
    let mut npz_seeds = reference_seeds(tmp.path());
    npz_seeds.extend(gnn_benchmark_seeds());
    let files = ogb_files(&dataset());
    let mut c = Campaign::new("load_detect", 1500);
    while let Some((case, mut rng)) = c.next_case() {
        let (path, desc) = if rng.random_bool(0.25) {
            let dir = tmp.path().join("ogbn_detect");
            let d = write_mutated_ogb(&mut rng, &dir, &files);
            if rng.random_bool(0.1) {
                let _ = std::fs::remove_dir_all(dir.join("split"));
            }
            (dir, d)
        } else {
            let (stem, members) = &npz_seeds[rng.random_range(0..npz_seeds.len())];
            let (bytes, desc) = if rng.random_bool(0.1) {
                // An archive of one layout renamed to members of neither.
                let renamed: Members = members
                    .iter()
                    .map(|(n, b)| (format!("x_{n}"), b.clone()))
                    .collect();
                (zip_archive(&renamed, false), "members renamed".to_string())
            } else {
                mutate_npz(&mut rng, members)
            };
            let path = tmp.path().join(format!("{stem}.npz"));
            std::fs::write(&path, &bytes).unwrap();
            (path, format!("{stem}.npz: {desc}"))
        };
        let p = path.clone();
        c.run(case, &desc, move || load(&p, None).map(drop), vague(path));
    }
    c.finish();
}
