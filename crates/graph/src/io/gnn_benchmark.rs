//! The Shchur et al. gnn-benchmark `.npz` layout (Cora, CiteSeer, Amazon-Photo, ...).

use std::path::Path;

use super::npz::Npz;
use crate::dataset::{Dataset, Split};
use crate::error::{GraphError, Result};

/// Largest densified CSR feature matrix (values): 2²⁹ f32 = 2 GiB, above every gnn-benchmark
/// file (Coauthor-Physics, the largest, densifies to 2.9·10⁸ values). A sparse matrix declares
/// its shape in a few bytes (one flipped bit of Cora's `attr_shape` asked for 5.4 GB); this
/// bounds what densifying it allocates.
const MAX_DENSE_FEATURES: u64 = 1 << 29;

/// A CSR matrix read from `<prefix>_indices`, `<prefix>_indptr` and `<prefix>_shape`, checked.
struct CsrArrays {
    rows: usize,
    cols: usize,
    indptr: Vec<usize>,
    indices: Vec<i64>,
}

/// Reads and checks the CSR structure `<prefix>_{indices,indptr,shape}`: shape `[rows, cols]`,
/// `indptr` of length `rows + 1` starting at 0, non-decreasing and ending at `nnz`. Column ids
/// are left to the caller, which knows whether they are node ids.
fn read_csr(npz: &mut Npz, prefix: &str) -> Result<CsrArrays> {
    let path = npz.path().to_path_buf();
    let err = |name: &str, msg: String| GraphError::format(&path, format!("array `{name}`: {msg}"));

    let shape_name = format!("{prefix}_shape");
    let shape = npz.array(&shape_name)?;
    if shape.expect_1d("[2]")? != 2 {
        return Err(shape.shape_error("[2]"));
    }
    let shape = shape.ints()?;
    let dim =
        |v: i64| usize::try_from(v).map_err(|_| err(&shape_name, format!("invalid dimension {v}")));
    let (rows, cols) = (dim(shape[0])?, dim(shape[1])?);

    let indptr_name = format!("{prefix}_indptr");
    let a = npz.array(&indptr_name)?;
    let want = rows.saturating_add(1);
    if a.expect_1d("[rows + 1]")? != want {
        return Err(a.shape_error(&format!("[{want}] (rows + 1 for shape [{rows}, {cols}])")));
    }
    let raw = a.ints()?;
    let indices_name = format!("{prefix}_indices");
    let a = npz.array(&indices_name)?;
    let nnz = a.expect_1d("[nnz]")?;
    let indices = a.ints()?;

    if raw[0] != 0 {
        return Err(err(
            &indptr_name,
            format!("must start at 0, starts at {}", raw[0]),
        ));
    }
    let mut indptr = Vec::with_capacity(raw.len());
    for (i, w) in raw.windows(2).enumerate() {
        if w[1] < w[0] {
            return Err(err(
                &indptr_name,
                format!(
                    "not monotone: entry {} is {} but entry {i} is {}",
                    i + 1,
                    w[1],
                    w[0]
                ),
            ));
        }
    }
    for &p in &raw {
        // Monotone from 0, so non-negative.
        indptr.push(p as usize);
    }
    if indptr[rows] != nnz {
        return Err(err(
            &indptr_name,
            format!(
                "ends at {} but `{indices_name}` has {nnz} entries",
                indptr[rows]
            ),
        ));
    }
    Ok(CsrArrays {
        rows,
        cols,
        indptr,
        indices,
    })
}

impl CsrArrays {
    /// The row of every stored entry.
    fn row_ids(&self) -> Vec<i64> {
        let mut out = Vec::with_capacity(self.indices.len());
        for r in 0..self.rows {
            out.extend(std::iter::repeat_n(
                r as i64,
                self.indptr[r + 1] - self.indptr[r],
            ));
        }
        out
    }

    /// Checks that every column id lies in `0..cols`.
    fn check_columns(&self, path: &Path, name: &str) -> Result<()> {
        for (k, &c) in self.indices.iter().enumerate() {
            if c < 0 || c as u64 >= self.cols as u64 {
                return Err(GraphError::format(
                    path,
                    format!(
                        "array `{name}`: entry {k} is column {c}, out of range for {} columns",
                        self.cols
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Loads a gnn-benchmark `.npz` (the layout of `shchur/gnn-benchmark`, also read by PyG's
/// `Amazon` / `CitationFull`):
///
/// * adjacency: CSR `adj_indices`, `adj_indptr`, `adj_shape` (`[n, n]`); every stored entry is
///   an edge (`adj_data` values are not read, as in PyG). The stored matrix may be directed:
///   it is symmetrised and self loops are dropped, each with a note giving the count.
/// * features: CSR `attr_data` / `attr_indices` / `attr_indptr` / `attr_shape`, or a dense
///   `attr_matrix`; densified into an `n × d` matrix (duplicate CSR entries are summed).
/// * labels: `labels` (any integer dtype), or a CSR one-hot matrix `labels_data` /
///   `labels_indices` / `labels_indptr` / `labels_shape` with exactly one entry per row.
///
/// Other arrays (`node_names`, `class_names`, ... often pickled) are never read. The files
/// carry no split: the split is left empty with a note (make one with [`Split::random`]). The
/// name is the file stem.
///
/// ```no_run
/// use induce_graph::io::load_gnn_benchmark_npz;
/// let ds = load_gnn_benchmark_npz("shared/datasets/cora-citeseer-npz/cora.npz")?;
/// assert_eq!((ds.graph.num_nodes(), ds.graph.num_edges()), (2708, 5278));
/// # Ok::<(), induce_graph::GraphError>(())
/// ```
pub fn load_gnn_benchmark_npz(path: impl AsRef<Path>) -> Result<Dataset> {
    let path = path.as_ref();
    let mut npz = Npz::open(path)?;
    let mut notes = Vec::new();

    let adj = read_csr(&mut npz, "adj")?;
    if adj.rows != adj.cols {
        return Err(GraphError::format(
            path,
            format!(
                "array `adj_shape`: adjacency must be square, is [{}, {}]",
                adj.rows, adj.cols
            ),
        ));
    }
    let n = adj.rows;
    let src = adj.row_ids();
    let edges = super::undirected_edges(path, "adj_indices", &src, &adj.indices, n, &mut notes)?;
    drop((src, adj));

    if !npz.has("attr_data") && !npz.has("attr_matrix") {
        return Err(GraphError::format(
            path,
            "missing array `attr_data` (CSR features) or `attr_matrix` (dense features)",
        ));
    }
    if !npz.has("labels") && !npz.has("labels_indptr") {
        return Err(GraphError::format(
            path,
            "missing array `labels` (or a one-hot CSR `labels_indptr` / `labels_indices`)",
        ));
    }
    let features = if npz.has("attr_data") {
        let attr = read_csr(&mut npz, "attr")?;
        attr.check_columns(path, "attr_indices")?;
        let data = npz.array("attr_data")?;
        if data.expect_1d("[nnz]")? != attr.indices.len() {
            return Err(data.shape_error(&format!(
                "[{}] (one value per `attr_indices` entry)",
                attr.indices.len()
            )));
        }
        let data = data.floats()?;
        if attr.rows != n {
            return Err(GraphError::format(
                path,
                format!(
                    "array `attr_shape`: {} feature rows for {n} nodes",
                    attr.rows
                ),
            ));
        }
        let d = attr.cols;
        let size = (n as u64).saturating_mul(d as u64);
        if size > MAX_DENSE_FEATURES {
            return Err(GraphError::TooLarge {
                path: path.to_path_buf(),
                what: format!("array `attr_shape` [{n}, {d}] (dense feature values)"),
                declared: size,
                limit: MAX_DENSE_FEATURES,
                reason: "the cap on a densified feature matrix, 2 GiB of f32".into(),
            });
        }
        let size = size as usize;
        let mut dense = Vec::new();
        dense.try_reserve_exact(size).map_err(|_| {
            GraphError::format(
                path,
                format!("array `attr_shape`: [{n}, {d}] is too large to densify"),
            )
        })?;
        dense.resize(size, 0f32);
        for r in 0..n {
            for k in attr.indptr[r]..attr.indptr[r + 1] {
                dense[r * d + attr.indices[k] as usize] += data[k];
            }
        }
        super::features(path, "attr_data", n, d, dense)?
    } else {
        let m = npz.array("attr_matrix")?;
        let (rows, d) = m.expect_2d("[n, d]")?;
        if rows != n {
            return Err(m.shape_error(&format!("[{n}, d] (one row per node)")));
        }
        super::features(path, "attr_matrix", n, d, m.floats()?)?
    };

    let labels = if npz.has("labels") {
        let l = npz.array("labels")?;
        l.expect_1d("[n]")?;
        super::labels(path, "labels", &l.ints()?, n)?
    } else {
        let l = read_csr(&mut npz, "labels")?;
        l.check_columns(path, "labels_indices")?;
        if l.rows != n {
            return Err(GraphError::in_file(
                path,
                "labels_shape",
                GraphError::PerNodeLength {
                    what: "labels",
                    nodes: n,
                    got: l.rows,
                },
            ));
        }
        let mut out = Vec::with_capacity(n);
        for r in 0..n {
            let (a, b) = (l.indptr[r], l.indptr[r + 1]);
            if b - a != 1 {
                return Err(GraphError::format(
                    path,
                    format!(
                        "array `labels_indptr`: node {r} has {} labels, expected one",
                        b - a
                    ),
                ));
            }
            // `check_columns` bounds the column by `labels_shape`, which fits in usize.
            out.push(u32::try_from(l.indices[a]).map_err(|_| {
                GraphError::format(
                    path,
                    format!("labels_indices: label {} too large", l.indices[a]),
                )
            })?);
        }
        out
    };

    notes.push("the file has no split: split left empty (make a seeded random split)".to_string());
    Ok(Dataset {
        name: super::stem_name(path),
        graph: super::build_graph(path, &edges, features, labels)?,
        split: Split::default(),
        eval_targets: None,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use super::*;
    use crate::io::testutil::{inner, names_file, npy, npy_raw, write_npz};

    /// 4 nodes; stored adjacency 0→1, 1→0, 1→2, 2→2 (self loop), 3→1, 3→1 (duplicate).
    /// Features (CSR) rows: [1,0,0], [0,2,0], [0,0,0], [0,0,3]. Labels int8.
    fn members() -> Vec<(&'static str, Vec<u8>)> {
        vec![
            ("adj_data", npy(&[6], &[1.0f32; 6])),
            ("adj_indices", npy(&[6], &[1i32, 0, 2, 2, 1, 1])),
            ("adj_indptr", npy(&[5], &[0i32, 1, 3, 4, 6])),
            ("adj_shape", npy(&[2], &[4i64, 4])),
            ("attr_data", npy(&[3], &[1.0f32, 2.0, 3.0])),
            ("attr_indices", npy(&[3], &[0i32, 1, 2])),
            ("attr_indptr", npy(&[5], &[0i32, 1, 2, 2, 3])),
            ("attr_shape", npy(&[2], &[4i64, 3])),
            ("labels", npy(&[4], &[0i8, 1, 2, 1])),
            // A pickled object array: must never be read.
            (
                "node_names",
                npy_raw(
                    "{'descr': '|O', 'fortran_order': False, 'shape': (4,), }",
                    b"\x80\x04junk",
                ),
            ),
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

    fn write(dir: &Path, members: &[(&str, Vec<u8>)]) -> PathBuf {
        let path = dir.join("bench.npz");
        write_npz(&path, members, false);
        path
    }

    fn load_err(members: &[(&str, Vec<u8>)]) -> (GraphError, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), members);
        let err = load_gnn_benchmark_npz(&path).unwrap_err();
        let msg = names_file(&err, &path);
        (err, msg)
    }

    fn load(members: &[(&str, Vec<u8>)]) -> Dataset {
        let dir = tempfile::tempdir().unwrap();
        load_gnn_benchmark_npz(write(dir.path(), members)).unwrap()
    }

    #[test]
    fn csr_layout_is_normalised_with_notes() {
        let ds = load(&members());
        assert_eq!(ds.name, "bench");
        assert_eq!(ds.graph.edges(), vec![(0, 1), (1, 2), (1, 3)]);
        assert_eq!(
            ds.graph.features().as_slice(),
            &[1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0]
        );
        assert_eq!(ds.graph.labels(), &[0, 1, 2, 1]);
        assert_eq!(ds.split, Split::default());
        assert_eq!(
            ds.notes,
            vec![
                "dropped 1 self loop".to_string(),
                "merged 1 duplicate directed entry".to_string(),
                "symmetrised: 2 directed pairs had no reverse".to_string(),
                "the file has no split: split left empty (make a seeded random split)".to_string(),
            ]
        );
    }

    #[test]
    fn dense_features_and_one_hot_labels() {
        let m = with(
            &[
                (
                    "attr_matrix",
                    npy(&[4, 2], &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),
                ),
                ("labels_data", npy(&[4], &[1.0f32; 4])),
                ("labels_indices", npy(&[4], &[2i64, 0, 1, 2])),
                ("labels_indptr", npy(&[5], &[0i64, 1, 2, 3, 4])),
                ("labels_shape", npy(&[2], &[4i64, 3])),
            ],
            &[
                "attr_data",
                "attr_indices",
                "attr_indptr",
                "attr_shape",
                "labels",
            ],
        );
        let ds = load(&m);
        assert_eq!(ds.graph.features().row(2), &[5.0, 6.0]);
        assert_eq!(ds.graph.labels(), &[2, 0, 1, 2]);
        assert_eq!(ds.graph.num_classes(), 3);
        let m2 = with(&[("labels", npy(&[4], &[3i32, 0, 0, 1]))], &[]);
        assert_eq!(load(&m2).graph.labels(), &[3, 0, 0, 1]);
    }

    #[test]
    fn one_hot_rows_need_exactly_one_label() {
        let m = with(
            &[
                ("labels_indices", npy(&[4], &[2i64, 0, 1, 2])),
                ("labels_indptr", npy(&[5], &[0i64, 2, 2, 3, 4])),
                ("labels_shape", npy(&[2], &[4i64, 3])),
            ],
            &["labels"],
        );
        let (err, msg) = load_err(&m);
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(msg.contains("node 0 has 2 labels"), "{msg}");
    }

    #[test]
    fn missing_arrays_are_named() {
        let (err, msg) = load_err(&with(&[], &["adj_indptr"]));
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(msg.contains("missing array `adj_indptr`"), "{msg}");
        let (_, msg) = load_err(&with(
            &[],
            &["attr_data", "attr_indices", "attr_indptr", "attr_shape"],
        ));
        assert!(msg.contains("missing array `attr_data`"), "{msg}");
        let (_, msg) = load_err(&with(&[], &["attr_shape"]));
        assert!(msg.contains("missing array `attr_shape`"), "{msg}");
        let (_, msg) = load_err(&with(&[], &["labels"]));
        assert!(msg.contains("missing array `labels`"), "{msg}");
    }

    #[test]
    fn wrong_dtype_says_expected_and_found() {
        let (err, msg) = load_err(&with(&[("adj_indices", npy(&[6], &[1.0f64; 6]))], &[]));
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(
            msg.contains("`adj_indices`: expected an integer dtype") && msg.contains("'<f8'"),
            "{msg}"
        );
        let (_, msg) = load_err(&with(&[("attr_data", npy(&[3], &[1i32; 3]))], &[]));
        assert!(
            msg.contains("`attr_data`: expected a float dtype") && msg.contains("'<i4'"),
            "{msg}"
        );
    }

    #[test]
    fn wrong_shapes_are_reported() {
        let (err, msg) = load_err(&with(&[("adj_shape", npy(&[2], &[4i64, 5]))], &[]));
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(msg.contains("must be square"), "{msg}");
        let (_, msg) = load_err(&with(&[("adj_shape", npy(&[3], &[4i64, 4, 4]))], &[]));
        assert!(msg.contains("`adj_shape`: expected shape [2]"), "{msg}");
        let (_, msg) = load_err(&with(&[("adj_indptr", npy(&[4], &[0i32, 1, 3, 4]))], &[]));
        assert!(msg.contains("`adj_indptr`: expected shape [5]"), "{msg}");
        let (_, msg) = load_err(&with(
            &[
                ("attr_shape", npy(&[2], &[3i64, 3])),
                ("attr_indptr", npy(&[4], &[0i32, 1, 2, 3])),
            ],
            &[],
        ));
        assert!(msg.contains("3 feature rows for 4 nodes"), "{msg}");
        let (_, msg) = load_err(&with(&[("attr_data", npy(&[2], &[1.0f32; 2]))], &[]));
        assert!(msg.contains("`attr_data`: expected shape [3]"), "{msg}");
    }

    #[test]
    fn indptr_must_be_monotone_and_consistent() {
        let (err, msg) = load_err(&with(
            &[("adj_indptr", npy(&[5], &[0i32, 3, 1, 4, 6]))],
            &[],
        ));
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(
            msg.contains("`adj_indptr`: not monotone: entry 2 is 1 but entry 1 is 3"),
            "{msg}"
        );
        let (_, msg) = load_err(&with(
            &[("adj_indptr", npy(&[5], &[0i32, 1, 3, 4, 5]))],
            &[],
        ));
        assert!(
            msg.contains("ends at 5 but `adj_indices` has 6 entries"),
            "{msg}"
        );
        let (_, msg) = load_err(&with(
            &[("adj_indptr", npy(&[5], &[1i32, 1, 3, 4, 6]))],
            &[],
        ));
        assert!(msg.contains("must start at 0"), "{msg}");
        let (_, msg) = load_err(&with(
            &[("adj_indptr", npy(&[5], &[-1i32, 1, 3, 4, 6]))],
            &[],
        ));
        assert!(msg.contains("must start at 0"), "{msg}");
    }

    #[test]
    fn out_of_range_and_negative_ids() {
        let (err, msg) = load_err(&with(
            &[("adj_indices", npy(&[6], &[1i32, 0, 7, 2, 1, 1]))],
            &[],
        ));
        assert!(matches!(
            inner(&err),
            GraphError::NodeOutOfRange {
                node: 7,
                num_nodes: 4
            }
        ));
        assert!(
            msg.contains("adj_indices") && msg.contains("node 7") && msg.contains("4 nodes"),
            "{msg}"
        );
        let (err, msg) = load_err(&with(
            &[("adj_indices", npy(&[6], &[1i32, 0, -2, 2, 1, 1]))],
            &[],
        ));
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(msg.contains("negative node id -2"), "{msg}");
        let (_, msg) = load_err(&with(&[("attr_indices", npy(&[3], &[0i32, 3, 2]))], &[]));
        assert!(
            msg.contains("`attr_indices`: entry 1 is column 3, out of range for 3 columns"),
            "{msg}"
        );
        let (_, msg) = load_err(&with(&[("labels", npy(&[4], &[0i8, -1, 2, 1]))], &[]));
        assert!(msg.contains("node 1 has invalid label -1"), "{msg}");
    }

    #[test]
    fn nan_features_are_rejected() {
        let (err, msg) = load_err(&with(
            &[("attr_data", npy(&[3], &[1.0f32, f32::NAN, 3.0]))],
            &[],
        ));
        assert!(matches!(
            inner(&err),
            GraphError::NonFiniteFeature {
                node: 1,
                dim: 1,
                ..
            }
        ));
        assert!(msg.contains("attr_data"), "{msg}");
    }

    #[test]
    fn label_count_must_match_nodes() {
        let (err, msg) = load_err(&with(&[("labels", npy(&[5], &[0i8; 5]))], &[]));
        assert!(matches!(
            inner(&err),
            GraphError::PerNodeLength {
                nodes: 4,
                got: 5,
                ..
            }
        ));
        assert!(msg.contains("labels has 5 entries"), "{msg}");
    }

    #[test]
    fn pickled_labels_and_corrupt_members_are_errors() {
        let pickled = npy_raw(
            "{'descr': '|O', 'fortran_order': False, 'shape': (4,), }",
            b"\x80\x04",
        );
        let (err, msg) = load_err(&with(&[("labels", pickled)], &[]));
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(
            msg.contains("`labels`: object (pickled) arrays are not supported"),
            "{msg}"
        );
        let short = npy_raw(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (6,), }",
            &[0; 12],
        );
        let (_, msg) = load_err(&with(&[("adj_indices", short)], &[]));
        assert!(msg.contains("`adj_indices`: truncated npy data"), "{msg}");
    }

    /// (file, nodes, undirected edges, features, classes)
    fn check_real(rel: &str, expected: (usize, usize, usize, usize)) {
        let Some(shared) = crate::io::shared_dir() else {
            return;
        };
        let t = Instant::now();
        let ds = load_gnn_benchmark_npz(shared.join(rel)).unwrap();
        println!("{rel}: loaded in {:?}; notes {:?}", t.elapsed(), ds.notes);
        let g = &ds.graph;
        assert_eq!(
            (
                g.num_nodes(),
                g.num_edges(),
                g.features().dim(),
                g.num_classes()
            ),
            expected
        );
        assert!(ds.split.train.is_empty());
        assert!(
            g.features()
                .as_slice()
                .iter()
                .all(|&x| x == 0.0 || x == 1.0)
        );
    }

    #[test]
    fn real_amazon_photo() {
        check_real(
            "datasets/amazon-photo/amazon_electronics_photo.npz",
            (7650, 119_081, 745, 8),
        );
    }

    #[test]
    fn real_cora() {
        check_real("datasets/cora-citeseer-npz/cora.npz", (2708, 5278, 1433, 7));
    }

    #[test]
    fn real_citeseer() {
        check_real(
            "datasets/cora-citeseer-npz/citeseer.npz",
            (3312, 4536, 3703, 6),
        );
    }
}
