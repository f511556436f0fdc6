//! One entry point for every supported input: [`DataFormat`], [`detect_format`], [`load`], and
//! [`save_npz`] (the reference layout, which [`load`] reads back).

use std::fmt;
use std::io::Write as _;
use std::path::Path;
use std::str::FromStr;

use zip::CompressionMethod;
use zip::write::{SimpleFileOptions, ZipWriter};

use super::npz::Npz;
use crate::dataset::Dataset;
use crate::error::{GraphError, Result};

/// The file formats [`load`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataFormat {
    /// The InduCE reference `.npz` layout (`edge_index`, `features`, `labels`, ...), also
    /// written by [`save_npz`].
    Reference,
    /// The gnn-benchmark `.npz` layout (Cora, CiteSeer, Amazon-Photo: `adj_data`, ...).
    GnnBenchmark,
    /// An OGB node-property-prediction folder (`raw/`, `split/<name>/`).
    Ogb,
}

impl DataFormat {
    /// The name [`FromStr`] accepts.
    pub fn name(self) -> &'static str {
        match self {
            Self::Reference => "reference",
            Self::GnnBenchmark => "gnn-benchmark",
            Self::Ogb => "ogb",
        }
    }
}

impl fmt::Display for DataFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DataFormat {
    type Err = GraphError;

    /// `reference`, `gnn-benchmark` or `ogb`.
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "reference" | "reference-npz" => Ok(Self::Reference),
            "gnn-benchmark" | "gnn_benchmark" => Ok(Self::GnnBenchmark),
            "ogb" => Ok(Self::Ogb),
            _ => Err(GraphError::InvalidParameter {
                name: "format",
                value: s.to_string(),
                reason: "expected reference, gnn-benchmark or ogb",
            }),
        }
    }
}

/// Tells the format of `path` from its content: a folder with `raw/` is an OGB folder; an
/// `.npz` with an `edge_index` member is the reference layout, one with `adj_data` or
/// `adj_indices` the gnn-benchmark layout.
pub fn detect_format(path: impl AsRef<Path>) -> Result<DataFormat> {
    let path = path.as_ref();
    if path.is_dir() {
        if path.join("raw").is_dir() {
            return Ok(DataFormat::Ogb);
        }
        return Err(GraphError::format(
            path,
            "a folder without raw/: not an OGB node-property folder",
        ));
    }
    let npz = Npz::open(path)?;
    if npz.has("edge_index") {
        Ok(DataFormat::Reference)
    } else if npz.has("adj_data") || npz.has("adj_indices") {
        Ok(DataFormat::GnnBenchmark)
    } else {
        Err(GraphError::format(
            path,
            "an npz archive with neither edge_index (reference layout) nor adj_data \
             (gnn-benchmark layout)",
        ))
    }
}

/// Loads `path` in `format` (detected with [`detect_format`] when `None`). An OGB folder's split
/// is its only `split/<name>/` subfolder (an error lists them when there are several).
///
/// ```no_run
/// let cora = induce_graph::io::load("shared/datasets/cora-citeseer-npz/cora.npz", None)?;
/// # Ok::<(), induce_graph::GraphError>(())
/// ```
pub fn load(path: impl AsRef<Path>, format: Option<DataFormat>) -> Result<Dataset> {
    let path = path.as_ref();
    if !path.exists() {
        return Err(GraphError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
        ));
    }
    let format = match format {
        Some(f) => f,
        None => detect_format(path)?,
    };
    match format {
        DataFormat::Reference => super::load_reference_npz(path),
        DataFormat::GnnBenchmark => super::load_gnn_benchmark_npz(path),
        DataFormat::Ogb if !path.is_dir() => Err(GraphError::format(
            path,
            "the OGB format is a folder (raw/, split/<name>/), and this is a file",
        )),
        DataFormat::Ogb => {
            let split = path.join("split");
            let mut names: Vec<String> = std::fs::read_dir(&split)
                .map_err(|e| GraphError::io(&split, e))?
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            match names.as_slice() {
                [one] => super::load_ogb_dir(path, one),
                _ => Err(GraphError::format(
                    &split,
                    format!(
                        "expected exactly one split folder, found [{}]",
                        names.join(", ")
                    ),
                )),
            }
        }
    }
}

/// One `.npy` member: header (format 1.0) and little-endian data.
fn npy(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let shape = match shape {
        [n] => format!("({n},)"),
        s => format!(
            "({})",
            s.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn ints(v: impl IntoIterator<Item = i64>) -> Vec<u8> {
    v.into_iter().flat_map(i64::to_le_bytes).collect()
}

/// Writes `data` as a reference-layout `.npz` (uncompressed, numpy-readable): `edge_index`
/// `[2, 2E]` (both directions), `features` `[N, d]` float32, `labels` `[N]`, `train_idx` /
/// `test_idx`, `eval_idx` when the dataset has one, and `motif` `[N]` (instance id, −1 outside
/// every motif) when it has ground truth. Written to a temporary file and renamed, so a reader
/// never sees half a file. [`load`] reads it back to an equal dataset.
pub fn save_npz(data: &Dataset, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let g = &data.graph;
    let n = g.num_nodes();
    let edges = g.edges();
    let src = edges.iter().flat_map(|&(u, w)| [u as i64, w as i64]);
    let dst = edges.iter().flat_map(|&(u, w)| [w as i64, u as i64]);
    let mut members: Vec<(&str, Vec<u8>)> = vec![
        (
            "edge_index",
            npy("<i8", &[2, 2 * edges.len()], &ints(src.chain(dst))),
        ),
        (
            "features",
            npy(
                "<f4",
                &[n, g.features().dim()],
                &g.features()
                    .as_slice()
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect::<Vec<u8>>(),
            ),
        ),
        (
            "labels",
            npy("<i8", &[n], &ints(g.labels().iter().map(|&l| l as i64))),
        ),
    ];
    let ids = |v: &[u32]| npy("<i8", &[v.len()], &ints(v.iter().map(|&u| u as i64)));
    members.push(("train_idx", ids(&data.split.train)));
    members.push(("test_idx", ids(&data.split.test)));
    if let Some(e) = &data.eval_targets {
        members.push(("eval_idx", ids(e)));
    }
    if let Some(m) = g.motifs() {
        let v = m.iter().map(|x| x.map_or(-1, |i| i as i64));
        members.push(("motif", npy("<i8", &[n], &ints(v))));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let file = std::fs::File::create(&tmp)?;
        let mut zip = ZipWriter::new(std::io::BufWriter::new(file));
        let opts = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .large_file(false);
        for (name, bytes) in &members {
            zip.start_file(format!("{name}.npy"), opts)
                .map_err(std::io::Error::other)?;
            zip.write_all(bytes)?;
        }
        let mut w = zip.finish().map_err(std::io::Error::other)?;
        w.flush()?;
        w.get_ref().sync_all()?;
        Ok(())
    };
    if let Err(e) = write().and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(GraphError::io(path, e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::SyntheticKind;

    #[test]
    fn generated_data_round_trips_through_npz() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = SyntheticKind::TreeCycles.generate(3).unwrap();
        d.eval_targets = Some(vec![600, 512]);
        let p = dir.path().join("tc.npz");
        save_npz(&d, &p).unwrap();
        assert_eq!(detect_format(&p).unwrap(), DataFormat::Reference);
        let back = load(&p, None).unwrap();
        assert_eq!(back.name, "tc");
        assert_eq!(back.graph.edges(), d.graph.edges());
        assert_eq!(back.graph.labels(), d.graph.labels());
        assert_eq!(back.graph.features(), d.graph.features());
        assert_eq!(back.graph.motifs(), d.graph.motifs());
        assert_eq!(back.split, d.split);
        assert_eq!(back.eval_targets, d.eval_targets);
        assert!(back.notes.is_empty(), "{:?}", back.notes);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left");
    }

    #[test]
    fn detection_names_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let e = load(dir.path().join("nope.npz"), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope.npz") && e.contains("no such file"), "{e}");
        let e = detect_format(dir.path()).unwrap_err().to_string();
        assert!(e.contains("without raw/"), "{e}");
        let f = dir.path().join("x.npz");
        std::fs::write(&f, b"not a zip").unwrap();
        let e = detect_format(&f).unwrap_err().to_string();
        assert!(
            e.contains("x.npz") && e.contains("not a readable npz"),
            "{e}"
        );
        assert!("csv".parse::<DataFormat>().is_err());
        assert_eq!("ogb".parse::<DataFormat>().unwrap(), DataFormat::Ogb);
        // An npz file read as an OGB folder: said so, not "x.npz/split: Not a directory".
        let e = load(&f, Some(DataFormat::Ogb)).unwrap_err().to_string();
        assert!(
            e.contains("x.npz") && e.contains("OGB format is a folder"),
            "{e}"
        );
    }
}
