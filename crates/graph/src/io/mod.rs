//! Dataset loaders. Each returns a [`Dataset`] whose graph is undirected and
//! simple; anything a loader had to normalise is recorded in `Dataset::notes` with counts.
//!
//! * [`load_reference_npz`] — the InduCE reference export (`shared/reference/<ds>.npz`): a numpy
//!   `.npz` with `edge_index` int `[2, E]` (both directions of each edge), `features` float
//!   `[N, d]`, `labels` int `[N]`, optional `train_idx` / `test_idx` (the split) and `eval_idx`
//!   (the fixed evaluation targets).
//! * [`load_gnn_benchmark_npz`] — the Shchur et al. gnn-benchmark `.npz` layout (Cora, CiteSeer,
//!   Amazon-Photo, ...): a CSR adjacency `adj_data / adj_indices / adj_indptr / adj_shape`
//!   (directed as stored; symmetrised here), features as a CSR `attr_*` matrix or a dense
//!   `attr_matrix`, and `labels` as an int vector or a CSR one-hot `labels_*` matrix. No split.
//! * [`load_ogb_dir`] — an OGB node-property-prediction folder: `raw/edge.csv[.gz]` (directed
//!   `src,dst` rows), `raw/node-feat.csv[.gz]` (one row of floats per node),
//!   `raw/node-label.csv[.gz]` (one int per line) and `split/<name>/{train,valid,test}.csv[.gz]`.
//!
//! `.npz` files are zip archives of `.npy` members, read with `zip` and `npyz`; members are
//! only read by name, so pickled object arrays (`node_names`, `class_names`, ...) are never
//! touched. Integer arrays may use any integer dtype and float arrays float32 or float64; 2-d
//! arrays may be in C or Fortran order. Every malformed input gives a [`GraphError`] naming the
//! file and the fault (array, row or line), never a panic.

mod format;
mod gnn_benchmark;
mod npz;
mod ogb;
mod reference_npz;

use std::path::Path;

pub use format::{DataFormat, detect_format, load, save_npz};
pub use gnn_benchmark::load_gnn_benchmark_npz;
pub use ogb::load_ogb_dir;
pub use reference_npz::load_reference_npz;

use crate::dataset::Dataset;
use crate::error::{GraphError, Result};
use crate::features::Features;
use crate::graph::Graph;

/// A dataset from arrays held in memory (the Python package's `x`, `edge_index`, `y`), checked
/// and normalised as [`load_reference_npz`] does its members: `features` row-major `[n, d]`
/// (finite), `edge_index` as its two rows `src`, `dst` (`[E]` each, ids in `0..n`; one direction,
/// both directions, duplicates and self loops are all accepted and normalised, with notes),
/// `labels` `[n]` (none: every node labelled 0). Errors name `source` (e.g. `arrays`) and the
/// array at fault. No split: explain explicit targets, or set `split`.
///
/// ```
/// use induce_graph::io::from_arrays;
/// // 0 ─ 1 ─ 2, given in both directions.
/// let d = from_arrays("arrays", 3, 1, vec![1.0; 3], &[0, 1, 1, 2], &[1, 0, 2, 1], None).unwrap();
/// assert_eq!(d.graph.edges(), vec![(0, 1), (1, 2)]);
/// let e = from_arrays("arrays", 3, 1, vec![1.0; 3], &[0], &[3], None).unwrap_err();
/// assert!(e.to_string().contains("edge_index"), "{e}");
/// ```
pub fn from_arrays(
    source: &str,
    n: usize,
    d: usize,
    features: Vec<f32>,
    src: &[i64],
    dst: &[i64],
    labels: Option<&[i64]>,
) -> Result<Dataset> {
    let path = Path::new(source);
    let features = self::features(path, "x", n, d, features)?;
    let labels = match labels {
        Some(raw) => self::labels(path, "y", raw, n)?,
        None => vec![0; n],
    };
    if src.len() != dst.len() {
        return Err(GraphError::format(
            path,
            format!(
                "edge_index: rows of {} and {} entries",
                src.len(),
                dst.len()
            ),
        ));
    }
    let mut notes = Vec::new();
    let edges = undirected_edges(path, "edge_index", src, dst, n, &mut notes)?;
    let graph = build_graph(path, &edges, features, labels)?;
    Ok(Dataset {
        name: source.to_string(),
        graph,
        split: crate::Split::default(),
        eval_targets: None,
        notes,
    })
}

/// The dataset name a file or folder gives: its file stem (`cora.npz` → `cora`).
pub(crate) fn stem_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Checks one node id read from `what` in `path`: negative ids are a [`GraphError::Format`],
/// ids `>= num_nodes` a [`GraphError::InFile`] around [`GraphError::NodeOutOfRange`].
pub(crate) fn node_id(path: &Path, what: &str, id: i64, num_nodes: usize) -> Result<u32> {
    if id < 0 {
        return Err(GraphError::format(
            path,
            format!("{what}: negative node id {id}"),
        ));
    }
    match u32::try_from(id) {
        Ok(u) if (u as usize) < num_nodes => Ok(u),
        _ => Err(GraphError::in_file(
            path,
            what,
            GraphError::NodeOutOfRange {
                node: id as u64,
                num_nodes,
            },
        )),
    }
}

/// Checks a list of node ids (a split or target list).
pub(crate) fn node_ids(path: &Path, what: &str, ids: &[i64], num_nodes: usize) -> Result<Vec<u32>> {
    ids.iter()
        .map(|&id| node_id(path, what, id, num_nodes))
        .collect()
}

/// Class labels: one non-negative int per node.
pub(crate) fn labels(path: &Path, what: &str, raw: &[i64], num_nodes: usize) -> Result<Vec<u32>> {
    if raw.len() != num_nodes {
        return Err(GraphError::in_file(
            path,
            what,
            GraphError::PerNodeLength {
                what: "labels",
                nodes: num_nodes,
                got: raw.len(),
            },
        ));
    }
    raw.iter()
        .enumerate()
        .map(|(i, &l)| {
            u32::try_from(l).map_err(|_| {
                GraphError::format(path, format!("{what}: node {i} has invalid label {l}"))
            })
        })
        .collect()
}

/// Wraps [`Features::new`], naming the file on error.
pub(crate) fn features(
    path: &Path,
    what: &str,
    n: usize,
    d: usize,
    data: Vec<f32>,
) -> Result<Features> {
    Features::new(n, d, data).map_err(|e| GraphError::in_file(path, what, e))
}

/// Turns a list of directed `(src, dst)` entries into undirected simple edges: checks ids,
/// drops self loops, merges duplicates and adds missing reverse directions, recording each
/// change (with its count) in `notes`.
pub(crate) fn undirected_edges(
    path: &Path,
    what: &str,
    src: &[i64],
    dst: &[i64],
    num_nodes: usize,
    notes: &mut Vec<String>,
) -> Result<Vec<(u32, u32)>> {
    let mut directed = Vec::with_capacity(src.len());
    let mut self_loops = 0usize;
    for (&s, &t) in src.iter().zip(dst) {
        let (u, v) = (
            node_id(path, what, s, num_nodes)?,
            node_id(path, what, t, num_nodes)?,
        );
        if u == v {
            self_loops += 1;
        } else {
            directed.push((u, v));
        }
    }
    let entries = directed.len();
    directed.sort_unstable();
    directed.dedup();
    let duplicates = entries - directed.len();
    let unpaired = directed
        .iter()
        .filter(|&&(u, v)| directed.binary_search(&(v, u)).is_err())
        .count();
    let mut edges: Vec<(u32, u32)> = directed
        .into_iter()
        .map(|(u, v)| (u.min(v), u.max(v)))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    if self_loops > 0 {
        notes.push(format!(
            "dropped {self_loops} self loop{}",
            plural(self_loops)
        ));
    }
    if duplicates > 0 {
        notes.push(format!(
            "merged {duplicates} duplicate directed entr{}",
            if duplicates == 1 { "y" } else { "ies" }
        ));
    }
    if unpaired > 0 {
        notes.push(format!(
            "symmetrised: {unpaired} directed pair{} had no reverse",
            plural(unpaired)
        ));
    }
    Ok(edges)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Builds the graph from checked parts, naming the file if the graph still rejects them.
pub(crate) fn build_graph(
    path: &Path,
    edges: &[(u32, u32)],
    features: Features,
    labels: Vec<u32>,
) -> Result<Graph> {
    let n = features.num_nodes();
    Graph::from_edges(n, edges, features, labels).map_err(|e| GraphError::in_file(path, "graph", e))
}

/// Where the shared data lives for tests: `$INDUCE_SHARED`, else `../shared` beside the repo.
/// Prints a skip line and returns `None` when it is absent.
#[cfg(test)]
pub(crate) fn shared_dir() -> Option<std::path::PathBuf> {
    crate::shared::shared_path("", "")
}

/// Helpers for tests that write their own `.npz` files.
#[cfg(test)]
pub(crate) mod testutil {
    use std::io::Write;
    use std::path::Path;

    use npyz::WriterBuilder;

    use crate::error::GraphError;

    /// An `.npy` member in C order.
    pub(crate) fn npy<T: npyz::AutoSerialize + Clone>(shape: &[u64], data: &[T]) -> Vec<u8> {
        npy_order(shape, data, npyz::Order::C)
    }

    /// An `.npy` member in the given order (`data` is in that order).
    pub(crate) fn npy_order<T: npyz::AutoSerialize + Clone>(
        shape: &[u64],
        data: &[T],
        order: npyz::Order,
    ) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(shape)
            .order(order)
            .writer(&mut buf)
            .begin_nd()
            .unwrap();
        w.extend(data.iter().cloned()).unwrap();
        w.finish().unwrap();
        buf
    }

    /// A raw `.npy` member with a hand-written header dict.
    pub(crate) fn npy_raw(header: &str, data: &[u8]) -> Vec<u8> {
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(header.len() as u16).to_le_bytes());
        b.extend_from_slice(header.as_bytes());
        b.extend_from_slice(data);
        b
    }

    /// Writes an `.npz` with `members` (`name` → `.npy` bytes), stored or deflated.
    pub(crate) fn write_npz(path: &Path, members: &[(&str, Vec<u8>)], deflate: bool) {
        let file = std::fs::File::create(path).unwrap();
        let mut z = zip::ZipWriter::new(file);
        let method = if deflate {
            zip::CompressionMethod::Deflated
        } else {
            zip::CompressionMethod::Stored
        };
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        for (name, bytes) in members {
            z.start_file(format!("{name}.npy"), opts).unwrap();
            z.write_all(bytes).unwrap();
        }
        z.finish().unwrap();
    }

    /// Asserts that `err` names `path` in its message and returns the message.
    pub(crate) fn names_file(err: &GraphError, path: &Path) -> String {
        let msg = err.to_string();
        assert!(
            msg.contains(&path.display().to_string()),
            "message does not name file: {msg}"
        );
        msg
    }

    /// The error inside a [`GraphError::InFile`] (panics on any other variant).
    pub(crate) fn inner(err: &GraphError) -> &GraphError {
        match err {
            GraphError::InFile { source, .. } => source,
            other => panic!("expected GraphError::InFile, got {other:?}"),
        }
    }
}
