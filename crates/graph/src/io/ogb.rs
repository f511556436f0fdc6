//! OGB node-property-prediction folders (`ogbn-*`), read from their raw CSV files.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use crate::dataset::{Dataset, Split};
use crate::error::{GraphError, Result};

/// Finds `<dir>/<rel>.csv.gz`, else `<dir>/<rel>.csv`.
fn locate(dir: &Path, rel: &str) -> Result<PathBuf> {
    let gz = dir.join(format!("{rel}.csv.gz"));
    if gz.is_file() {
        return Ok(gz);
    }
    let plain = dir.join(format!("{rel}.csv"));
    if plain.is_file() {
        return Ok(plain);
    }
    Err(GraphError::format(
        dir,
        format!("missing file {rel}.csv.gz (or {rel}.csv)"),
    ))
}

fn is_gz(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// Opens a CSV file, decompressing `.gz` files.
fn open(path: &Path) -> Result<Box<dyn Read>> {
    let file = BufReader::new(File::open(path).map_err(|e| GraphError::io(path, e))?);
    Ok(if is_gz(path) {
        Box::new(BufReader::new(MultiGzDecoder::new(file)))
    } else {
        Box::new(file)
    })
}

/// Maps a read error: damaged compressed or non-UTF-8 data is a [`GraphError::Format`], other
/// failures are [`GraphError::Io`].
fn read_error(path: &Path, e: std::io::Error) -> GraphError {
    use std::io::ErrorKind::{InvalidData, InvalidInput, UnexpectedEof};
    match e.kind() {
        InvalidData | InvalidInput | UnexpectedEof if is_gz(path) => {
            GraphError::format(path, format!("corrupt or truncated gzip data: {e}"))
        }
        InvalidData => GraphError::format(path, format!("unreadable text: {e}")),
        _ => GraphError::io(path, e),
    }
}

/// Calls `row(line, fields)` for every non-empty record of a header-less CSV file.
fn for_each_record(
    path: &Path,
    mut row: impl FnMut(u64, &csv::ByteRecord) -> Result<()>,
) -> Result<()> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(open(path)?);
    let mut record = csv::ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {
                let line = record.position().map_or(0, |p| p.line());
                row(line, &record)?;
            }
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                return Err(match e.into_kind() {
                    csv::ErrorKind::Io(e) => read_error(path, e),
                    other => GraphError::format(path, format!("line {line}: bad CSV: {other:?}")),
                });
            }
        }
    }
}

fn field_str<'a>(path: &Path, line: u64, field: &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(field)
        .map(str::trim)
        .map_err(|_| GraphError::format(path, format!("line {line}: field is not UTF-8 text")))
}

fn parse_int(path: &Path, line: u64, field: &[u8]) -> Result<i64> {
    let s = field_str(path, line, field)?;
    s.parse()
        .map_err(|_| GraphError::format(path, format!("line {line}: `{s}` is not an integer")))
}

/// Checks a node id read on `line`.
fn node_on_line(path: &Path, line: u64, id: i64, num_nodes: usize) -> Result<u32> {
    if (0..num_nodes as i64).contains(&id) {
        Ok(id as u32)
    } else {
        super::node_id(path, &format!("line {line}"), id, num_nodes)
    }
}

/// `raw/node-feat`: one row of `d` floats per node.
fn read_features(path: &Path) -> Result<crate::Features> {
    let mut data = Vec::new();
    let (mut n, mut d) = (0usize, None::<usize>);
    for_each_record(path, |line, rec| {
        let want = *d.get_or_insert(rec.len());
        if rec.len() != want {
            return Err(GraphError::format(
                path,
                format!(
                    "line {line} (node {n}): {} values, expected {want}",
                    rec.len()
                ),
            ));
        }
        for f in rec {
            let s = field_str(path, line, f)?;
            let x: f32 = s.parse().map_err(|_| {
                GraphError::format(
                    path,
                    format!("line {line} (node {n}): `{s}` is not a number"),
                )
            })?;
            data.push(x);
        }
        n += 1;
        Ok(())
    })?;
    super::features(path, "node features", n, d.unwrap_or(0), data)
}

/// `raw/node-label`: one integer per line; blank and NaN labels are errors naming the line.
fn read_labels(path: &Path, num_nodes: usize) -> Result<Vec<u32>> {
    let mut raw = Vec::with_capacity(num_nodes);
    for (i, text) in BufReader::new(open(path)?).lines().enumerate() {
        let (line, node) = (i + 1, i);
        let text = text.map_err(|e| read_error(path, e))?;
        let s = text.trim();
        let bad = |why: &str| GraphError::format(path, format!("line {line} (node {node}): {why}"));
        if s.is_empty() {
            return Err(bad("empty label"));
        }
        if s.contains(',') {
            return Err(bad("expected one label per line"));
        }
        let label = match s.parse::<i64>() {
            Ok(v) => v,
            Err(_) => match s.parse::<f64>() {
                Ok(x) if x.is_nan() => return Err(bad("label is NaN")),
                Ok(x) if x.fract() == 0.0 && x.abs() < 2f64.powi(53) => x as i64,
                _ => return Err(bad(&format!("label `{s}` is not an integer"))),
            },
        };
        raw.push(label);
    }
    super::labels(path, "labels", &raw, num_nodes)
}

/// `raw/edge`: directed `src,dst` rows.
fn read_edges(path: &Path, num_nodes: usize) -> Result<(Vec<i64>, Vec<i64>)> {
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    for_each_record(path, |line, rec| {
        if rec.len() != 2 {
            return Err(GraphError::format(
                path,
                format!("line {line}: {} fields, expected 2 (src,dst)", rec.len()),
            ));
        }
        let s = parse_int(path, line, &rec[0])?;
        let t = parse_int(path, line, &rec[1])?;
        node_on_line(path, line, s, num_nodes)?;
        node_on_line(path, line, t, num_nodes)?;
        src.push(s);
        dst.push(t);
        Ok(())
    })?;
    Ok((src, dst))
}

/// A split file: one node id per line.
fn read_ids(path: &Path, num_nodes: usize) -> Result<Vec<u32>> {
    let mut ids = Vec::new();
    for_each_record(path, |line, rec| {
        if rec.len() != 1 {
            return Err(GraphError::format(
                path,
                format!("line {line}: {} fields, expected one node id", rec.len()),
            ));
        }
        ids.push(node_on_line(
            path,
            line,
            parse_int(path, line, &rec[0])?,
            num_nodes,
        )?);
        Ok(())
    })?;
    Ok(ids)
}

/// Loads an OGB node-property-prediction folder (as unpacked by the `ogb` package):
///
/// * `raw/node-feat.csv[.gz]`: comma-separated floats, one row per node; the number of rows is
///   the number of nodes, all rows have the same width.
/// * `raw/node-label.csv[.gz]`: one integer label per line (integral floats such as `3.0` are
///   accepted); an empty or NaN label is an error naming the line.
/// * `raw/edge.csv[.gz]`: `src,dst` rows, directed; symmetrised (with a note giving the count of
///   pairs that had no reverse), self loops dropped with a note.
/// * `split/<split_name>/{train,valid,test}.csv[.gz]`: one node id per line.
///
/// The gzipped file is used when present, else the plain `.csv`. The name is the folder name.
/// Malformed input is a [`GraphError`] naming the file and line.
///
/// ```no_run
/// let ds = induce_graph::io::load_ogb_dir("data/ogbn_arxiv", "time")?;
/// println!("{} nodes, {} train", ds.graph.num_nodes(), ds.split.train.len());
/// # Ok::<(), induce_graph::GraphError>(())
/// ```
pub fn load_ogb_dir(dir: impl AsRef<Path>, split_name: &str) -> Result<Dataset> {
    let dir = dir.as_ref();
    let features = read_features(&locate(dir, "raw/node-feat")?)?;
    let n = features.num_nodes();
    let labels = read_labels(&locate(dir, "raw/node-label")?, n)?;
    let edge_path = locate(dir, "raw/edge")?;
    let (src, dst) = read_edges(&edge_path, n)?;
    let mut notes = Vec::new();
    let edges = super::undirected_edges(&edge_path, "edges", &src, &dst, n, &mut notes)?;
    drop((src, dst));

    let split_dir = format!("split/{split_name}");
    let split = Split {
        train: read_ids(&locate(dir, &format!("{split_dir}/train"))?, n)?,
        valid: read_ids(&locate(dir, &format!("{split_dir}/valid"))?, n)?,
        test: read_ids(&locate(dir, &format!("{split_dir}/test"))?, n)?,
    };
    Ok(Dataset {
        name: dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        graph: super::build_graph(&edge_path, &edges, features, labels)?,
        split,
        eval_targets: None,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::io::testutil::{inner, names_file};

    /// Files of a 4-node OGB folder: path 0→1→2→3 plus 3→0, with a split "time".
    fn files() -> Vec<(&'static str, String)> {
        vec![
            ("raw/edge", "0,1\n1,2\n2,3\n3,0\n".into()),
            ("raw/node-feat", "0.5,1.0\n-1.5,2e-3\n0,0\n1,1\n".into()),
            ("raw/node-label", "0\n1\n2.0\n1\n".into()),
            ("split/time/train", "0\n1\n".into()),
            ("split/time/valid", "2\n".into()),
            ("split/time/test", "3\n".into()),
        ]
    }

    fn write_dir(root: &Path, files: &[(&str, String)], gz: bool) {
        for (rel, text) in files {
            let path = root.join(format!("{rel}.csv{}", if gz { ".gz" } else { "" }));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let file = File::create(&path).unwrap();
            if gz {
                let mut enc = flate2::write::GzEncoder::new(file, flate2::Compression::default());
                enc.write_all(text.as_bytes()).unwrap();
                enc.finish().unwrap();
            } else {
                let mut file = file;
                file.write_all(text.as_bytes()).unwrap();
            }
        }
    }

    fn with(rel: &'static str, text: &str) -> Vec<(&'static str, String)> {
        let mut f = files();
        f.iter_mut().find(|(r, _)| *r == rel).unwrap().1 = text.to_string();
        f
    }

    /// Loads a plain-CSV folder with `files` and returns the error and the file it must name.
    fn load_err(files: &[(&str, String)], culprit: &str) -> (GraphError, String) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ogbn_tiny");
        write_dir(&dir, files, false);
        let err = load_ogb_dir(&dir, "time").unwrap_err();
        let msg = names_file(&err, &dir.join(format!("{culprit}.csv")));
        (err, msg)
    }

    fn check_tiny(ds: &Dataset) {
        assert_eq!(ds.name, "ogbn_tiny");
        assert_eq!(ds.graph.num_nodes(), 4);
        assert_eq!(ds.graph.edges(), vec![(0, 1), (0, 3), (1, 2), (2, 3)]);
        assert_eq!(ds.graph.features().row(1), &[-1.5, 0.002]);
        assert_eq!(ds.graph.labels(), &[0, 1, 2, 1]);
        assert_eq!(
            ds.split,
            Split {
                train: vec![0, 1],
                valid: vec![2],
                test: vec![3]
            }
        );
        assert_eq!(
            ds.notes,
            vec!["symmetrised: 4 directed pairs had no reverse".to_string()]
        );
    }

    #[test]
    fn loads_plain_and_gz_folders() {
        for gz in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("ogbn_tiny");
            write_dir(&dir, &files(), gz);
            check_tiny(&load_ogb_dir(&dir, "time").unwrap());
        }
    }

    #[test]
    fn prefers_gz_over_plain() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ogbn_tiny");
        write_dir(&dir, &files(), true);
        // Broken plain copies next to the good gz files must not be read.
        write_dir(
            &dir,
            &[
                ("raw/edge", "x,y\n".into()),
                ("raw/node-label", "\n".into()),
            ],
            false,
        );
        check_tiny(&load_ogb_dir(&dir, "time").unwrap());
    }

    #[test]
    fn missing_files_are_named() {
        let mut f = files();
        f.retain(|(r, _)| *r != "raw/edge");
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ogbn_tiny");
        write_dir(&dir, &f, false);
        let err = load_ogb_dir(&dir, "time").unwrap_err();
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        let msg = names_file(&err, &dir);
        assert!(
            msg.contains("missing file raw/edge.csv.gz (or raw/edge.csv)"),
            "{msg}"
        );
        let err = load_ogb_dir(&dir, "nosuchsplit").unwrap_err();
        assert!(err.to_string().contains("raw/edge"), "{err}");
        write_dir(&dir, &files(), false);
        let err = load_ogb_dir(&dir, "nosuchsplit").unwrap_err();
        assert!(
            err.to_string().contains("split/nosuchsplit/train.csv"),
            "{err}"
        );
    }

    #[test]
    fn bad_rows_name_the_line() {
        let (err, msg) = load_err(&with("raw/edge", "0,1\n1,x\n"), "raw/edge");
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(msg.contains("line 2: `x` is not an integer"), "{msg}");
        let (_, msg) = load_err(&with("raw/edge", "0,1\n1,2,3\n"), "raw/edge");
        assert!(msg.contains("line 2: 3 fields, expected 2"), "{msg}");
        let (_, msg) = load_err(
            &with("raw/node-feat", "1,2\n3\n0,0\n1,1\n"),
            "raw/node-feat",
        );
        assert!(
            msg.contains("line 2 (node 1): 1 values, expected 2"),
            "{msg}"
        );
        let (_, msg) = load_err(
            &with("raw/node-feat", "1,2\n3,abc\n0,0\n1,1\n"),
            "raw/node-feat",
        );
        assert!(
            msg.contains("line 2 (node 1): `abc` is not a number"),
            "{msg}"
        );
        let (_, msg) = load_err(&with("split/time/valid", "2,3\n"), "split/time/valid");
        assert!(
            msg.contains("line 1: 2 fields, expected one node id"),
            "{msg}"
        );
    }

    #[test]
    fn out_of_range_and_negative_ids() {
        let (err, msg) = load_err(&with("raw/edge", "0,1\n1,4\n"), "raw/edge");
        assert!(matches!(
            inner(&err),
            GraphError::NodeOutOfRange {
                node: 4,
                num_nodes: 4
            }
        ));
        assert!(
            msg.contains("line 2") && msg.contains("node 4") && msg.contains("4 nodes"),
            "{msg}"
        );
        let (err, msg) = load_err(&with("raw/edge", "0,1\n-1,2\n"), "raw/edge");
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(msg.contains("line 2: negative node id -1"), "{msg}");
        let (err, _) = load_err(&with("split/time/test", "3\n9\n"), "split/time/test");
        assert!(matches!(
            inner(&err),
            GraphError::NodeOutOfRange {
                node: 9,
                num_nodes: 4
            }
        ));
    }

    #[test]
    fn nan_and_empty_labels_name_the_row() {
        let (err, msg) = load_err(&with("raw/node-label", "0\nnan\n1\n1\n"), "raw/node-label");
        assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
        assert!(msg.contains("line 2 (node 1): label is NaN"), "{msg}");
        let (_, msg) = load_err(&with("raw/node-label", "0\n1\n\n1\n"), "raw/node-label");
        assert!(msg.contains("line 3 (node 2): empty label"), "{msg}");
        let (_, msg) = load_err(&with("raw/node-label", "0\n1\n2.5\n1\n"), "raw/node-label");
        assert!(
            msg.contains("line 3 (node 2): label `2.5` is not an integer"),
            "{msg}"
        );
        let (_, msg) = load_err(&with("raw/node-label", "0\n-1\n2\n1\n"), "raw/node-label");
        assert!(msg.contains("node 1 has invalid label -1"), "{msg}");
    }

    #[test]
    fn nan_features_are_rejected() {
        let (err, msg) = load_err(
            &with("raw/node-feat", "1,2\n3,4\n0,NaN\n1,1\n"),
            "raw/node-feat",
        );
        assert!(matches!(
            inner(&err),
            GraphError::NonFiniteFeature {
                node: 2,
                dim: 1,
                ..
            }
        ));
        assert!(msg.contains("node features"), "{msg}");
    }

    #[test]
    fn label_count_must_match_nodes() {
        let (err, msg) = load_err(&with("raw/node-label", "0\n1\n2\n"), "raw/node-label");
        assert!(matches!(
            inner(&err),
            GraphError::PerNodeLength {
                nodes: 4,
                got: 3,
                ..
            }
        ));
        assert!(msg.contains("labels has 3 entries"), "{msg}");
    }

    #[test]
    fn corrupt_gzip_is_a_format_error() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ogbn_tiny");
        write_dir(&dir, &files(), true);
        let edge = dir.join("raw/edge.csv.gz");
        let bytes = std::fs::read(&edge).unwrap();
        for broken in [
            bytes[..bytes.len() - 6].to_vec(),
            b"not gzip at all".to_vec(),
        ] {
            std::fs::write(&edge, &broken).unwrap();
            let err = load_ogb_dir(&dir, "time").unwrap_err();
            assert!(matches!(err, GraphError::Format { .. }), "{err:?}");
            let msg = names_file(&err, &edge);
            assert!(msg.contains("gzip"), "{msg}");
        }
    }
}
