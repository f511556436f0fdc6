//! The InduCE reference export (`shared/reference/<ds>.npz`).

use std::path::Path;

use super::npz::Npz;
use crate::dataset::{Dataset, Split};
use crate::error::{GraphError, Result};

/// Loads a reference `.npz`: `edge_index` int `[2, E]` (both directions of each undirected
/// edge), `features` float `[N, d]`, `labels` int `[N]`, optional `train_idx` / `test_idx` (the
/// split, in file order) and `eval_idx` (→ [`Dataset::eval_targets`]). Other arrays are ignored.
/// The name is the file stem (`syn1`).
///
/// Without `train_idx` / `test_idx` (the partial syn4 / syn5 graphs) the split is left empty
/// and a note says so. A missing reverse direction, a self loop or a duplicate entry in
/// `edge_index` is normalised and noted. Malformed input is a
/// [`GraphError`](crate::GraphError) naming the file.
///
/// ```no_run
/// let ds = induce_graph::io::load_reference_npz("shared/reference/syn1.npz")?;
/// assert_eq!(ds.graph.num_nodes(), 700);
/// # Ok::<(), induce_graph::GraphError>(())
/// ```
pub fn load_reference_npz(path: impl AsRef<Path>) -> Result<Dataset> {
    let path = path.as_ref();
    let mut npz = Npz::open(path)?;
    let mut notes = Vec::new();

    let feats = npz.array("features")?;
    let (n, d) = feats.expect_2d("[N, d]")?;
    let features = super::features(path, "features", n, d, feats.floats()?)?;

    let labels = npz.array("labels")?;
    labels.expect_1d("[N]")?;
    let labels = super::labels(path, "labels", &labels.ints()?, n)?;

    let ei = npz.array("edge_index")?;
    let (rows, e) = ei.expect_2d("[2, E]")?;
    if rows != 2 {
        return Err(ei.shape_error("[2, E]"));
    }
    let ei = ei.ints()?;
    let (src, dst) = ei.split_at(e);
    let edges = super::undirected_edges(path, "edge_index", src, dst, n, &mut notes)?;

    let mut read_ids = |name: &str| -> Result<Option<Vec<u32>>> {
        if !npz.has(name) {
            return Ok(None);
        }
        let a = npz.array(name)?;
        a.expect_1d("[k]")?;
        super::node_ids(path, name, &a.ints()?, n).map(Some)
    };
    let train = read_ids("train_idx")?;
    let test = read_ids("test_idx")?;
    let eval_targets = read_ids("eval_idx")?;
    let split = match (train, test) {
        (Some(train), Some(test)) => Split {
            train,
            valid: Vec::new(),
            test,
        },
        (None, None) => {
            notes.push("no train_idx/test_idx in the file: split left empty".to_string());
            Split::default()
        }
        (train, test) => {
            let missing = if train.is_none() {
                "train_idx"
            } else {
                "test_idx"
            };
            notes.push(format!(
                "no {missing} in the file: that part of the split is empty"
            ));
            Split {
                train: train.unwrap_or_default(),
                valid: Vec::new(),
                test: test.unwrap_or_default(),
            }
        }
    };

    let name = super::stem_name(path);
    let motif = if npz.has("motif") {
        let a = npz.array("motif")?;
        a.expect_1d("[N]")?;
        let raw = a.ints()?;
        if raw.len() != n {
            return Err(GraphError::format(
                path,
                format!("motif: {} entries for {n} nodes", raw.len()),
            ));
        }
        let ids = raw
            .iter()
            .enumerate()
            .map(|(i, &m)| match m {
                -1 => Ok(None),
                m => u32::try_from(m).map(Some).map_err(|_| {
                    GraphError::format(path, format!("motif: node {i} has invalid id {m}"))
                }),
            })
            .collect::<Result<Vec<_>>>()?;
        Some(ids)
    } else {
        let m = reconstruct_motifs(&name, &labels);
        match &m {
            Ok(Some((_, how))) => notes.push(format!("motif ground truth reconstructed: {how}")),
            Ok(None) => {}
            Err(why) => notes.push(format!("no motif ground truth: {why}")),
        }
        m.ok().flatten().map(|(ids, _)| ids)
    };
    let mut graph = super::build_graph(path, &edges, features, labels)?;
    if let Some(m) = motif {
        graph = graph.with_motifs(m)?;
    }
    Ok(Dataset {
        name,
        graph,
        split,
        eval_targets,
        notes,
    })
}

/// Motif ids per node and a sentence saying how they were obtained.
type Reconstructed = (Vec<Option<u32>>, String);

/// The motif ground truth that the paper's synthetic graphs imply by construction (GNNExplainer's
/// generators append the motifs after the base graph, one instance after another): `syn1`
/// (BA-Shapes) houses of 5 from node 300, `syn4` (Tree-Cycles) cycles of 6 from node 511, `syn5`
/// (Tree-Grid) grids of 9 from node 511. Checked against the labels (base nodes label 0, motif
/// nodes non-zero); `Ok(None)` for other names, `Err` (why) when the labels disagree.
fn reconstruct_motifs(
    name: &str,
    labels: &[u32],
) -> std::result::Result<Option<Reconstructed>, String> {
    let (base, size, what) = match name {
        "syn1" => (300usize, 5usize, "BA-Shapes houses"),
        "syn4" => (511, 6, "Tree-Cycles cycles"),
        "syn5" => (511, 9, "Tree-Grid grids"),
        _ => return Ok(None),
    };
    let n = labels.len();
    if n < base || !(n - base).is_multiple_of(size) {
        return Err(format!(
            "{n} nodes do not fit {base} base nodes plus {what} of {size}"
        ));
    }
    if let Some(u) = (0..base).find(|&u| labels[u] != 0) {
        return Err(format!(
            "base node {u} has label {} (expected 0)",
            labels[u]
        ));
    }
    if let Some(u) = (base..n).find(|&u| labels[u] == 0) {
        return Err(format!("motif node {u} has label 0"));
    }
    let ids = (0..n)
        .map(|u| (u >= base).then(|| ((u - base) / size) as u32))
        .collect();
    let how = format!(
        "{} {what} of {size} nodes from node {base} (by construction; labels agree)",
        (n - base) / size
    );
    Ok(Some((ids, how)))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use super::*;
    use crate::GraphError;
    use crate::io::testutil::{inner, names_file, npy, npy_order, npy_raw, write_npz};

    /// A 4-node path 0-1-2-3 plus edge 0-2, both directions, with split and eval targets.
    fn members() -> Vec<(&'static str, Vec<u8>)> {
        let src = [0i64, 1, 1, 2, 2, 3, 0, 2];
        let dst = [1i64, 0, 2, 1, 3, 2, 2, 0];
        let ei: Vec<i64> = src.iter().chain(&dst).copied().collect();
        vec![
            ("edge_index", npy(&[2, 8], &ei)),
            (
                "features",
                npy(&[4, 2], &[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5, 0.5]),
            ),
            ("labels", npy(&[4], &[0i64, 1, 1, 2])),
            ("train_idx", npy(&[3], &[3i64, 0, 1])),
            ("test_idx", npy(&[1], &[2i64])),
            ("eval_idx", npy(&[1], &[2i64])),
            ("node_observed", npy(&[4], &[1u8, 1, 1, 1])),
        ]
    }

    fn with(replace: &[(&'static str, Vec<u8>)], remove: &[&str]) -> Vec<(&'static str, Vec<u8>)> {
        let mut m = members();
        m.retain(|(n, _)| !remove.contains(n));
        for (name, bytes) in replace {
            match m.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = bytes.clone(),
                None => m.push((name, bytes.clone())),
            }
        }
        m
    }

    fn write(dir: &Path, name: &str, members: &[(&str, Vec<u8>)]) -> PathBuf {
        let path = dir.join(name);
        write_npz(&path, members, false);
        path
    }

    fn load_err(members: &[(&str, Vec<u8>)]) -> (GraphError, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "bad.npz", members);
        let err = load_reference_npz(&path).unwrap_err();
        let msg = names_file(&err, &path);
        (err, msg)
    }

    #[test]
    fn loads_a_good_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "tiny.npz", &members());
        let ds = load_reference_npz(&path).unwrap();
        assert_eq!(ds.name, "tiny");
        assert_eq!(ds.graph.num_nodes(), 4);
        assert_eq!(ds.graph.edges(), vec![(0, 1), (0, 2), (1, 2), (2, 3)]);
        assert_eq!(ds.graph.features().row(3), &[0.5, 0.5]);
        assert_eq!(ds.graph.labels(), &[0, 1, 1, 2]);
        assert_eq!(
            ds.split,
            Split {
                train: vec![3, 0, 1],
                valid: vec![],
                test: vec![2]
            }
        );
        assert_eq!(ds.eval_targets, Some(vec![2]));
        assert!(ds.notes.is_empty(), "{:?}", ds.notes);
    }

    #[test]
    fn loads_deflated_fortran_and_narrow_dtypes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.npz");
        // features [[1, 2], [3, 4], [5, 6], [7, 8]] stored column-major.
        let f = npy_order(
            &[4, 2],
            &[1.0f64, 3.0, 5.0, 7.0, 2.0, 4.0, 6.0, 8.0],
            npyz::Order::Fortran,
        );
        let ei = npy(&[2, 2], &[0i32, 1, 1, 0]);
        let m = with(
            &[
                ("features", f),
                ("edge_index", ei),
                ("labels", npy(&[4], &[0u8, 1, 0, 1])),
            ],
            &[],
        );
        write_npz(&path, &m, true);
        let ds = load_reference_npz(&path).unwrap();
        assert_eq!(
            ds.graph.features().as_slice(),
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
        );
        assert_eq!(ds.graph.edges(), vec![(0, 1)]);
        assert_eq!(ds.graph.labels(), &[0, 1, 0, 1]);
    }

    #[test]
    fn no_split_leaves_it_empty_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "p.npz",
            &with(&[], &["train_idx", "test_idx", "eval_idx"]),
        );
        let ds = load_reference_npz(&path).unwrap();
        assert_eq!(ds.split, Split::default());
        assert_eq!(ds.eval_targets, None);
        assert_eq!(ds.notes.len(), 1);
        assert!(ds.notes[0].contains("split left empty"), "{:?}", ds.notes);
    }

    #[test]
    fn one_direction_and_self_loops_are_normalised_with_notes() {
        let ei = npy(&[2, 4], &[0i64, 1, 2, 2, 1, 2, 3, 2]);
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "o.npz", &with(&[("edge_index", ei)], &[]));
        let ds = load_reference_npz(&path).unwrap();
        assert_eq!(ds.graph.edges(), vec![(0, 1), (1, 2), (2, 3)]);
        assert_eq!(
            ds.notes,
            vec![
                "dropped 1 self loop".to_string(),
                "symmetrised: 3 directed pairs had no reverse".to_string(),
            ]
        );
    }

    #[test]
    fn missing_file_is_io() {
        let err = load_reference_npz("/nonexistent/nope.npz").unwrap_err();
        assert!(matches!(err, GraphError::Io { .. }), "{err:?}");
        assert!(err.to_string().contains("nope.npz"));
    }

    #[test]
    fn missing_array_is_named() {
        let (err, msg) = load_err(&with(&[], &["labels"]));
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(msg.contains("missing array `labels`"), "{msg}");
    }

    #[test]
    fn wrong_dtype_says_expected_and_found() {
        let (err, msg) = load_err(&with(
            &[("labels", npy(&[4], &[0.0f32, 1.0, 1.0, 2.0]))],
            &[],
        ));
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(
            msg.contains("`labels`") && msg.contains("expected an integer dtype"),
            "{msg}"
        );
        assert!(msg.contains("found '<f4'"), "{msg}");
        let (_, msg) = load_err(&with(&[("features", npy(&[4, 2], &[1i64; 8]))], &[]));
        assert!(
            msg.contains("expected a float dtype") && msg.contains("found '<i8'"),
            "{msg}"
        );
    }

    #[test]
    fn wrong_shape_is_reported() {
        let (err, msg) = load_err(&with(
            &[("edge_index", npy(&[3, 2], &[0i64, 1, 1, 0, 2, 2]))],
            &[],
        ));
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(
            msg.contains("`edge_index`") && msg.contains("expected shape [2, E]"),
            "{msg}"
        );
        assert!(msg.contains("[3, 2]"), "{msg}");
        let (_, msg) = load_err(&with(&[("labels", npy(&[2, 2], &[0i64; 4]))], &[]));
        assert!(msg.contains("`labels`") && msg.contains("[2, 2]"), "{msg}");
    }

    #[test]
    fn truncated_zip_is_a_format_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "t.npz", &members());
        let bytes = std::fs::read(&path).unwrap();
        for cut in [bytes.len() / 2, bytes.len() - 5, 3] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let err = load_reference_npz(&path).unwrap_err();
            assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
            names_file(&err, &path);
        }
    }

    #[test]
    fn corrupt_zip_data_fails_the_crc_check() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "c.npz", &members());
        let mut bytes = std::fs::read(&path).unwrap();
        // Flip a data byte of the first member (edge_index) after its npy header.
        let at = bytes.windows(6).position(|w| w == b"\x93NUMPY").unwrap() + 140;
        bytes[at] ^= 0x5a;
        std::fs::write(&path, &bytes).unwrap();
        let err = load_reference_npz(&path).unwrap_err();
        let msg = names_file(&err, &path);
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(msg.contains("corrupt zip member"), "{msg}");
    }

    #[test]
    fn corrupt_npy_members_are_format_errors() {
        let header = "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }";
        let cases = [
            (
                npy_raw(header, &[0u8; 20]),
                "truncated npy data: shape [4] of '<i8' needs 32 data bytes, found 20",
            ),
            (npy_raw(header, &[0u8; 40]), "corrupt npy data"),
            (b"garbage".to_vec(), "bad magic"),
            (
                npy_raw("{'descr': '<i8', 'shape': (4,) ", &[0u8; 32]),
                "malformed npy header",
            ),
            (
                npy_raw(
                    "{'descr': '|O', 'fortran_order': False, 'shape': (4,), }",
                    &[0u8; 32],
                ),
                "pickled",
            ),
        ];
        for (bytes, needle) in cases {
            let (err, msg) = load_err(&with(&[("labels", bytes)], &[]));
            assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
            assert!(
                msg.contains("`labels`") && msg.contains(needle),
                "{needle}: {msg}"
            );
        }
    }

    #[test]
    fn out_of_range_node_names_id_and_count() {
        let (err, msg) = load_err(&with(
            &[("edge_index", npy(&[2, 2], &[0i64, 9, 9, 0]))],
            &[],
        ));
        assert!(matches!(
            inner(&err),
            GraphError::NodeOutOfRange {
                node: 9,
                num_nodes: 4
            }
        ));
        assert!(
            msg.contains("edge_index") && msg.contains("node 9") && msg.contains("4 nodes"),
            "{msg}"
        );
        let (err, _) = load_err(&with(&[("eval_idx", npy(&[1], &[4i64]))], &[]));
        assert!(matches!(
            inner(&err),
            GraphError::NodeOutOfRange {
                node: 4,
                num_nodes: 4
            }
        ));
    }

    #[test]
    fn negative_ids_are_rejected() {
        let (err, msg) = load_err(&with(
            &[("edge_index", npy(&[2, 2], &[0i64, -3, -3, 0]))],
            &[],
        ));
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(msg.contains("negative node id -3"), "{msg}");
        let (_, msg) = load_err(&with(&[("train_idx", npy(&[1], &[-1i64]))], &[]));
        assert!(msg.contains("train_idx: negative node id -1"), "{msg}");
        let (_, msg) = load_err(&with(&[("labels", npy(&[4], &[0i64, -1, 0, 0]))], &[]));
        assert!(msg.contains("node 1 has invalid label -1"), "{msg}");
    }

    #[test]
    fn nan_features_are_rejected() {
        let f = npy(&[4, 2], &[1.0f32, 0.0, 0.0, f32::NAN, 1.0, 1.0, 0.5, 0.5]);
        let (err, msg) = load_err(&with(&[("features", f)], &[]));
        assert!(matches!(
            inner(&err),
            GraphError::NonFiniteFeature {
                node: 1,
                dim: 1,
                ..
            }
        ));
        assert!(msg.contains("features"), "{msg}");
    }

    #[test]
    fn label_count_must_match_nodes() {
        let (err, _) = load_err(&with(&[("labels", npy(&[3], &[0i64, 1, 1]))], &[]));
        assert!(matches!(
            inner(&err),
            GraphError::PerNodeLength {
                nodes: 4,
                got: 3,
                ..
            }
        ));
    }

    #[test]
    fn damaged_bytes_give_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.npz");
        // (a) Damage inside a `.npy` member, re-zipped so the CRC matches: every header byte
        // and a few data bytes, each set to a handful of values, and every truncation.
        let labels = npy(&[4], &[0i64, 1, 1, 2]);
        let header_end = labels.len() - 32;
        for at in (0..header_end).chain([header_end, header_end + 9, labels.len() - 1]) {
            for v in [b'(', b'9', 0xff] {
                let mut bad = labels.clone();
                bad[at] = v;
                write_npz(&path, &with(&[("labels", bad)], &[]), false);
                let _ = load_reference_npz(&path);
            }
        }
        for cut in 0..labels.len() {
            write_npz(
                &path,
                &with(&[("labels", labels[..cut].to_vec())], &[]),
                false,
            );
            assert!(load_reference_npz(&path).is_err(), "cut at {cut}");
        }
        // (b) Damage in the zip structure itself (stored and deflated archives).
        for deflate in [false, true] {
            write_npz(&path, &members(), deflate);
            let good = std::fs::read(&path).unwrap();
            for at in (0..good.len()).step_by(11) {
                let mut bad = good.clone();
                bad[at] ^= 0xa5;
                std::fs::write(&path, &bad).unwrap();
                let _ = load_reference_npz(&path);
            }
        }
    }

    #[test]
    fn real_reference_files() {
        let Some(shared) = crate::io::shared_dir() else {
            return;
        };
        // (name, nodes, undirected edges, train, test, eval targets)
        let expected = [
            ("syn1", 700, 2055, 560, 140, 76),
            ("syn4", 871, 623, 0, 0, 72),
            ("syn5", 1231, 1472, 0, 0, 129),
        ];
        for (name, nodes, edges, train, test, eval) in expected {
            let t = Instant::now();
            let ds = load_reference_npz(shared.join(format!("reference/{name}.npz"))).unwrap();
            println!("{name}: loaded in {:?}", t.elapsed());
            assert_eq!(ds.name, name);
            assert_eq!(ds.graph.num_nodes(), nodes, "{name}");
            assert_eq!(ds.graph.num_edges(), edges, "{name}");
            assert_eq!(ds.graph.features().dim(), 10, "{name}");
            assert_eq!(
                (ds.split.train.len(), ds.split.test.len()),
                (train, test),
                "{name}"
            );
            assert_eq!(ds.eval_targets.as_ref().map(Vec::len), Some(eval), "{name}");
            // The split note on the partial graphs, and the ground-truth note on all three.
            assert_eq!(
                ds.notes.len(),
                1 + usize::from(train == 0),
                "{name}: {:?}",
                ds.notes
            );
            assert!(
                ds.notes
                    .last()
                    .unwrap()
                    .starts_with("motif ground truth reconstructed")
            );
            let motifs = ds.graph.motifs().expect("ground truth");
            let (base, size) = match name {
                "syn1" => (300, 5),
                "syn4" => (511, 6),
                _ => (511, 9),
            };
            assert_eq!(motifs[base - 1], None);
            assert_eq!(motifs[base], Some(0));
            assert_eq!(motifs[base + size], Some(1));
            // Every motif edge joins nodes of one instance in the authors' graphs too.
            let inside = ds
                .graph
                .edges()
                .iter()
                .filter(|&&(u, w)| ds.graph.is_motif_edge(u, w))
                .count();
            assert!(inside > 0, "{name}");
        }
    }

    #[test]
    fn motif_reconstruction_checks_the_labels() {
        let mut labels = vec![0u32; 300];
        labels.extend([1, 1, 2, 2, 3].repeat(2));
        let (ids, how) = reconstruct_motifs("syn1", &labels).unwrap().unwrap();
        assert_eq!(
            (ids[299], ids[300], ids[305], ids[309]),
            (None, Some(0), Some(1), Some(1))
        );
        assert!(how.starts_with("2 BA-Shapes houses"), "{how}");
        assert_eq!(reconstruct_motifs("cora", &labels), Ok(None));
        labels[10] = 1;
        let e = reconstruct_motifs("syn1", &labels).unwrap_err();
        assert_eq!(e, "base node 10 has label 1 (expected 0)");
        labels.pop();
        assert!(
            reconstruct_motifs("syn1", &labels)
                .unwrap_err()
                .contains("do not fit")
        );
    }
}
