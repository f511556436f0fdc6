//! Memory bombs: inputs that declare enormous sizes in a few bytes. Each must be refused with a
//! typed error naming the file and the size, before anything of that size is allocated (the
//! sizes here are terabytes: allocating them would abort the test process).

mod fuzz_support;
#[path = "fuzz_support/npz.rs"]
mod npz_mutations;

use std::path::Path;

use induce_graph::GraphError;
use induce_graph::io::{load, load_gnn_benchmark_npz, load_ogb_dir, load_reference_npz};

use npz_mutations::{npy, raw_zip, zip_archive};

fn header(descr: &str, shape: &str) -> String {
    format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}")
}

fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A valid 3-node reference archive's members, `replace`d.
fn reference_members(replace: &[(&str, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    let mut m = vec![
        (
            "edge_index.npy".to_string(),
            npy(&header("<i8", "(2, 2)"), &i64s(&[0, 1, 1, 0])),
        ),
        (
            "features.npy".to_string(),
            npy(&header("<f4", "(3, 1)"), &[0u8; 12]),
        ),
        (
            "labels.npy".to_string(),
            npy(&header("<i8", "(3,)"), &i64s(&[0, 1, 0])),
        ),
    ];
    for (name, bytes) in replace {
        let name = format!("{name}.npy");
        match m.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = bytes.clone(),
            None => m.push((name, bytes.clone())),
        }
    }
    m
}

fn assert_names(err: &GraphError, path: &Path, needles: &[&str]) {
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    for n in needles {
        assert!(msg.contains(n), "`{n}` not in: {msg}");
    }
}

#[test]
fn memory_bomb_npy_header_declares_1e12_elements() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bomb.npz");
    // 10^12 int64 labels (8 TB) declared by a 60-byte header over 24 bytes of data; also as a
    // 2-d float matrix (10^6 x 10^6) and in a deflated archive.
    for (name, bytes) in [
        (
            "labels",
            npy(&header("<i8", "(1000000000000,)"), &[0u8; 24]),
        ),
        (
            "features",
            npy(&header("<f4", "(1000000, 1000000)"), &[0u8; 12]),
        ),
        (
            "edge_index",
            npy(&header("<i8", "(2, 500000000000)"), &[0u8; 32]),
        ),
    ] {
        for deflate in [false, true] {
            let archive = zip_archive(&reference_members(&[(name, bytes.clone())]), deflate);
            std::fs::write(&path, archive).unwrap();
            let err = load_reference_npz(&path).unwrap_err();
            assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
            assert_names(
                &err,
                &path,
                &[&format!("`{name}`"), "truncated npy data", "needs"],
            );
            assert!(load(&path, None).is_err());
        }
    }
}

#[test]
fn memory_bomb_zip_member_declares_huge_size() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bomb.npz");
    let members = reference_members(&[]);
    // A stored member declaring 4 GiB − 1 (and 2 GiB) uncompressed bytes in its headers.
    for declared in [u32::MAX - 1, 1 << 31] {
        std::fs::write(&path, raw_zip(&members, &[(2, declared)])).unwrap();
        let err = load_reference_npz(&path).unwrap_err();
        match &err {
            GraphError::TooLarge {
                declared: d, limit, ..
            } => {
                assert_eq!(*d, declared as u64);
                assert!(*limit < 1000, "limit {limit}");
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
        assert_names(&err, &path, &["labels.npy", &declared.to_string()]);
    }
    // A deflated member whose declared size is beyond what its compressed bytes can expand to:
    // patch the uncompressed size (local header and central directory) of a deflated archive.
    let mut bytes = zip_archive(&members, true);
    for sig in [&b"PK\x03\x04"[..], &b"PK\x01\x02"[..]] {
        let field = if sig[2] == 3 { 22 } else { 24 };
        let mut at = 0;
        while let Some(p) = bytes[at..].windows(4).position(|w| w == sig) {
            let pos = at + p + field;
            bytes[pos..pos + 4].copy_from_slice(&0xF000_0000u32.to_le_bytes());
            at += p + 4;
        }
    }
    std::fs::write(&path, &bytes).unwrap();
    let err = load_reference_npz(&path).unwrap_err();
    assert!(
        matches!(
            err,
            GraphError::TooLarge {
                declared: 0xF000_0000,
                ..
            }
        ),
        "{err:?}"
    );
    assert_names(&err, &path, &["Deflated"]);
}

#[test]
fn memory_bomb_sparse_features_declare_a_huge_dense_matrix() {
    // A gnn-benchmark archive whose CSR feature matrix declares 3 x 10^13 columns: densifying
    // it would allocate 360 TB.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bomb.npz");
    let one = |name: &str, v: &[i64]| {
        (
            format!("{name}.npy"),
            npy(&header("<i8", &format!("({},)", v.len())), &i64s(v)),
        )
    };
    let members = vec![
        one("adj_indices", &[1, 0]),
        one("adj_indptr", &[0, 1, 2, 2]),
        one("adj_shape", &[3, 3]),
        (
            "attr_data.npy".to_string(),
            npy(&header("<f4", "(1,)"), &1f32.to_le_bytes()),
        ),
        one("attr_indices", &[29_999_999_999_999]),
        one("attr_indptr", &[0, 1, 1, 1]),
        one("attr_shape", &[3, 30_000_000_000_000]),
        one("labels", &[0, 1, 0]),
    ];
    std::fs::write(&path, zip_archive(&members, false)).unwrap();
    let err = load_gnn_benchmark_npz(&path).unwrap_err();
    assert!(
        matches!(
            err,
            GraphError::TooLarge {
                declared: 90_000_000_000_000,
                ..
            }
        ),
        "{err:?}"
    );
    assert_names(&err, &path, &["attr_shape", "90000000000000"]);
}

#[test]
fn memory_bomb_csr_declares_1e12_rows() {
    // adj_shape [10^12, 10^12] with a 3-entry indptr: refused by the indptr length check.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bomb.npz");
    let one = |name: &str, v: &[i64]| {
        (
            format!("{name}.npy"),
            npy(&header("<i8", &format!("({},)", v.len())), &i64s(v)),
        )
    };
    let members = vec![
        one("adj_indices", &[1, 0]),
        one("adj_indptr", &[0, 1, 2]),
        one("adj_shape", &[1_000_000_000_000, 1_000_000_000_000]),
        one("labels", &[0, 1]),
    ];
    std::fs::write(&path, zip_archive(&members, false)).unwrap();
    let err = load_gnn_benchmark_npz(&path).unwrap_err();
    assert_names(&err, &path, &["adj_indptr", "1000000000001"]);
}

#[test]
fn memory_bomb_ogb_node_id_4e9() {
    // An edge to node 4·10^9 in a 3-node folder (plain and gzipped): refused on its line, no
    // per-node array of 4·10^9 entries is ever sized from it.
    for gz in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ogbn_bomb");
        let files = [
            ("raw/node-feat", "0.5\n1.0\n2.0\n"),
            ("raw/node-label", "0\n1\n0\n"),
            ("raw/edge", "0,1\n1,4000000000\n"),
            ("split/time/train", "0\n"),
            ("split/time/valid", "1\n"),
            ("split/time/test", "2\n"),
        ];
        for (rel, text) in files {
            let p = dir.join(format!("{rel}.csv{}", if gz { ".gz" } else { "" }));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            let bytes = if gz {
                use std::io::Write;
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(text.as_bytes()).unwrap();
                e.finish().unwrap()
            } else {
                text.as_bytes().to_vec()
            };
            std::fs::write(p, bytes).unwrap();
        }
        let err = load_ogb_dir(&dir, "time").unwrap_err();
        let edge = dir.join(format!("raw/edge.csv{}", if gz { ".gz" } else { "" }));
        assert_names(&err, &edge, &["line 2", "4000000000", "3 nodes"]);
        match err {
            GraphError::InFile { source, .. } => assert!(matches!(
                *source,
                GraphError::NodeOutOfRange {
                    node: 4_000_000_000,
                    num_nodes: 3
                }
            )),
            other => panic!("expected InFile(NodeOutOfRange), got {other:?}"),
        }
        // The same id in a split file.
        std::fs::write(dir.join("raw/edge.csv"), "0,1\n").unwrap();
        let _ = std::fs::remove_file(dir.join("raw/edge.csv.gz"));
        let _ = std::fs::remove_file(dir.join("split/time/test.csv.gz"));
        std::fs::write(dir.join("split/time/test.csv"), "4000000000\n").unwrap();
        let err = load_ogb_dir(&dir, "time").unwrap_err();
        assert_names(&err, &dir.join("split/time/test.csv"), &["4000000000"]);
    }
}
