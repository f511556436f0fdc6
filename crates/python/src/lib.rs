//! `induce._native`: the Rust side of the `induce` Python package. The Python API
//! (`induce.Explainer`, `induce.train_policy`) lives in `python/induce/__init__.py`, which checks
//! and converts arrays and calls these functions with plain bytes, lists and JSON.
//!
//! Every call builds the same job `induce explain` / `induce train` builds from its flags
//! ([`RunOptions`]) and runs it on the arrays through the same library path
//! ([`induce::run::explain`], [`induce::run::train`], on data and a model in memory), so its results equal the command line's on the
//! same graph, model and seed. The GIL is released while Rust works; Ctrl-C raises
//! `KeyboardInterrupt` at once (an explain run stops before its next target; a training run
//! cannot be stopped mid-way and finishes in the background, its result discarded).

mod errors;
mod model;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use induce::Method;
use induce::methods::Variant;
use induce::pipeline::{Progress, TargetSpec};
use induce::run::{RunContext, RunOptions, Trained, write_policy_dir};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use errors::{Failure, GraphError, Kind, OptionError};
use model::{Model, Spec, model_callback, model_file, model_pyg};

/// A library error as the command line would print it, with the library's field names turned
/// into the package's keyword arguments.
fn message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let c_text = c.to_string();
        if !out.contains(&c_text) {
            out = format!("{out}: {c_text}");
        }
        cause = c.source();
    }
    let spell = |option: &str| match option {
        // A switch reads as the keyword set to True.
        "all_nodes" => "all_nodes=True".to_string(),
        o => o.to_string(),
    };
    keywords(&induce::run::name_settings(&out, spell))
}

/// A message's command-line flags as the package's keyword arguments: `--arch arch.json` reads
/// `arch=arch.json`, `--all-nodes` reads `all_nodes=True`.
fn keywords(line: &str) -> String {
    const SWITCHES: [&str; 4] = ["all-nodes", "paper-faithful", "resume", "no-progress"];
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find("--") {
        let (before, after) = rest.split_at(i);
        out.push_str(before);
        let name_len = after[2..]
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(after.len() - 2);
        let name = &after[2..2 + name_len];
        if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.push_str("--");
            rest = &after[2..];
            continue;
        }
        out.push_str(&name.replace('-', "_"));
        let tail = &after[2 + name_len..];
        if SWITCHES.contains(&name) {
            out.push_str("=True");
            rest = tail;
        } else {
            out.push('=');
            rest = tail
                .strip_prefix(' ')
                .filter(|t| t.starts_with(|c: char| c.is_alphanumeric() || "./~<'\"".contains(c)))
                .unwrap_or(tail);
        }
    }
    out.push_str(rest);
    out
}

fn value_error(e: impl std::error::Error + 'static) -> PyErr {
    OptionError::new_err(message(&e))
}

/// Little-endian `f32`s from bytes, `what` naming the array in errors.
fn f32s(bytes: &[u8], len: usize, what: &str) -> PyResult<Vec<f32>> {
    if bytes.len() != 4 * len {
        return Err(GraphError::new_err(format!(
            "{what}: {} bytes for {len} float32 values",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Little-endian `i64`s from bytes.
fn i64s(bytes: &[u8], what: &str) -> PyResult<Vec<i64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(GraphError::new_err(format!(
            "{what}: {} bytes is not a whole number of int64 values",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

/// Progress that only carries a cancellation flag.
struct Cancel(Arc<AtomicBool>);

impl Progress for Cancel {
    fn cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Runs `work` on a thread with the GIL released, checking for Ctrl-C every 50 ms. On an
/// interrupt the flag is raised (an explain run stops before its next target) and
/// `KeyboardInterrupt` is returned at once.
fn run_interruptible<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce(Arc<AtomicBool>) -> Result<T, Failure> + Send + 'static,
) -> PyResult<T> {
    type Slot<T> = (Mutex<Option<Result<T, Failure>>>, Condvar);
    let flag = Arc::new(AtomicBool::new(false));
    let slot: Arc<Slot<T>> = Arc::new((Mutex::new(None), Condvar::new()));
    let (worker_flag, worker_slot) = (flag.clone(), slot.clone());
    let handle = std::thread::Builder::new()
        .name("induce".into())
        .spawn(move || {
            let result = work(worker_flag);
            let (lock, ready) = &*worker_slot;
            *lock.lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
            ready.notify_all();
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
    loop {
        let got = py.detach(|| {
            let (lock, ready) = &*slot;
            let guard = lock.lock().unwrap_or_else(|p| p.into_inner());
            let (mut guard, _) = ready
                .wait_timeout_while(guard, Duration::from_millis(50), |r| r.is_none())
                .unwrap_or_else(|p| p.into_inner());
            guard.take()
        });
        if let Some(result) = got {
            return result.map_err(Failure::into_err);
        }
        if handle.is_finished() {
            // It may have stored its result just after the wait above.
            let late = slot.0.lock().unwrap_or_else(|p| p.into_inner()).take();
            return match late {
                Some(result) => result.map_err(Failure::into_err),
                None => Err(PyRuntimeError::new_err("the induce worker thread panicked")),
            };
        }
        if let Err(e) = py.check_signals() {
            flag.store(true, Ordering::Relaxed);
            return Err(if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                e
            } else {
                PyKeyboardInterrupt::new_err("interrupted")
            });
        }
    }
}

/// A graph handed over from Python: its arrays, read and checked once while the GIL is held
/// ([`graph`]), then given to every call.
#[pyclass(frozen, module = "induce._native")]
struct Graph {
    n: usize,
    d: usize,
    x: Vec<f32>,
    src: Vec<i64>,
    dst: Vec<i64>,
    y: Option<Vec<i64>>,
    /// Each node's motif instance (`-1`: none): the ground truth of the accuracies.
    motif: Option<Vec<i64>>,
}

/// `n` little-endian `i64`s of the per-node array `what`, if given.
fn per_node(b: Option<&Bound<'_, PyBytes>>, n: usize, what: &str) -> PyResult<Option<Vec<i64>>> {
    let Some(b) = b else { return Ok(None) };
    let v = i64s(b.as_bytes(), what)?;
    if v.len() != n {
        return Err(GraphError::new_err(format!(
            "{what}: {} values for {n} nodes",
            v.len()
        )));
    }
    Ok(Some(v))
}

/// The graph of the arrays: `x` (`n × d` little-endian float32), `edge_index` (`[2, E]`
/// little-endian int64), optional labels `y` and motif ids `motif` (`[n]` int64, `-1` for a
/// node in no motif).
#[pyfunction]
#[pyo3(signature = (x, n, d, edge_index, y=None, motif=None))]
fn graph(
    x: &Bound<'_, PyBytes>,
    n: usize,
    d: usize,
    edge_index: &Bound<'_, PyBytes>,
    y: Option<&Bound<'_, PyBytes>>,
    motif: Option<&Bound<'_, PyBytes>>,
) -> PyResult<Graph> {
    let x = f32s(x.as_bytes(), n * d, "x")?;
    let ei = i64s(edge_index.as_bytes(), "edge_index")?;
    let (src, dst) = ei.split_at(ei.len() / 2);
    Ok(Graph {
        n,
        d,
        x,
        src: src.to_vec(),
        dst: dst.to_vec(),
        y: per_node(y, n, "y")?,
        motif: per_node(motif, n, "motif")?,
    })
}

impl Graph {
    /// The dataset, the default device and the black box `model` checked against the data, as
    /// the command line loads them.
    fn load(
        &self,
        model: &Spec,
        kernel: induce::rl::Kernel,
    ) -> Result<(induce::Dataset, induce::Device, Box<dyn induce::BlackBox>), Failure> {
        let data = self.dataset()?;
        let other = |e: &(dyn std::error::Error + 'static)| Failure::new(Kind::Other, message(e));
        let kind = induce::BackendKind::from_env_or_default().map_err(|e| other(&e))?;
        let device = induce::device(kind).map_err(|e| other(&e))?;
        let black_box = model.load(&data, kernel, &device)?;
        Ok((data, device, black_box))
    }

    fn dataset(&self) -> Result<induce::Dataset, Failure> {
        let mut data = induce::graph::io::from_arrays(
            "arrays",
            self.n,
            self.d,
            self.x.clone(),
            &self.src,
            &self.dst,
            self.y.as_deref(),
        )
        .map_err(|e| Failure::new(Kind::Graph, message(&e)))?;
        if let Some(m) = &self.motif {
            let ids = m
                .iter()
                .enumerate()
                .map(|(i, &v)| match v {
                    -1 => Ok(None),
                    v => u32::try_from(v).map(Some).map_err(|_| {
                        let m = format!("motif: node {i} has the invalid id {v} (-1: none)");
                        Failure::new(Kind::Graph, m)
                    }),
                })
                .collect::<Result<Vec<_>, Failure>>()?;
            data.graph = (data.graph.with_motifs(ids))
                .map_err(|e| Failure::new(Kind::Graph, message(&e)))?;
        }
        Ok(data)
    }
}

fn options(json: &str) -> PyResult<RunOptions> {
    serde_json::from_str(json).map_err(|e| OptionError::new_err(format!("invalid option: {e}")))
}

/// Checks the JSON of [`RunOptions`] (an unknown option or a value of the wrong type is an
/// `OptionError` naming it and the valid ones): what `Explainer` does at construction. With
/// `methods`, an option that none of them reads is an `OptionError` too, naming the methods
/// that read it (`policy`: a policy was given).
#[pyfunction]
#[pyo3(signature = (options, methods=None, policy=false))]
fn check_options(options: &str, methods: Option<Vec<String>>, policy: bool) -> PyResult<()> {
    let o = self::options(options)?;
    let Some(names) = methods else {
        return Ok(());
    };
    let methods = (names.iter())
        .map(|m| m.parse::<Variant>().map(|v| v.method()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(value_error)?;
    let mut chosen = o.chosen();
    if policy {
        chosen.push("policy".into());
    }
    induce::methods::check_settings(&methods, &chosen).map_err(value_error)
}

fn targets(index: Vec<i64>) -> PyResult<TargetSpec> {
    let ids = index
        .into_iter()
        .map(|i| {
            u32::try_from(i).map_err(|_| {
                GraphError::new_err(format!("index: node id {i} is not a node of the graph"))
            })
        })
        .collect::<PyResult<Vec<u32>>>()?;
    if ids.is_empty() {
        return Err(OptionError::new_err("index: no target node given"));
    }
    Ok(TargetSpec::List(ids))
}

/// Explains `index` with `methods` on the graph given by the arrays and the black box at
/// `model` (a PyG model with `arch`); `options` is the JSON of [`RunOptions`]. Returns the run
/// as JSON: `{"summary": …, "runs": [{"method", "records", "train_seconds",
/// "explain_seconds", "notes"}]}` (records as in `explanations.jsonl`).
#[pyfunction]
#[pyo3(signature = (graph, model, policy, methods, index, options))]
fn explain(
    py: Python<'_>,
    graph: Py<Graph>,
    model: &Model,
    policy: Option<PathBuf>,
    methods: Vec<String>,
    index: Vec<i64>,
    options: &str,
) -> PyResult<String> {
    let opts = self::options(options)?;
    let methods = methods
        .iter()
        .map(|m| m.parse::<Variant>().map_err(value_error))
        .collect::<PyResult<Vec<Variant>>>()?;
    let (path, arch) = model.0.source();
    let job = opts.explain_job("arrays", path, arch, policy, &methods, targets(index)?);
    let spec = model.0.clone();
    run_interruptible(py, move |flag| {
        let (data, device, black_box) = graph
            .get()
            .load(&spec, job.black_box_kernel.unwrap_or(job.induce.kernel))?;
        let progress = Cancel(flag);
        let run = RunContext::new(&device)
            .with_loaded(&data, black_box.as_ref())
            .with_progress(&progress);
        let (summary, runs) = induce::run::explain(&job, &run).map_err(|e| Failure::of(&e))?;
        let runs: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "method": r.method,
                    "records": r.records,
                    "train_seconds": r.train_seconds,
                    "explain_seconds": r.explain_seconds,
                    "notes": r.notes,
                })
            })
            .collect();
        Ok(serde_json::json!({"summary": summary, "runs": runs}).to_string())
    })
}

/// Trains an inductive policy on `index` and writes it to the directory `out` as
/// `induce train --out` does ([`write_policy_dir`]); returns the policy's path and the training
/// outcome as JSON.
#[pyfunction]
#[pyo3(signature = (graph, model, index, out, options))]
fn train_policy(
    py: Python<'_>,
    graph: Py<Graph>,
    model: &Model,
    index: Vec<i64>,
    out: PathBuf,
    options: &str,
) -> PyResult<String> {
    let opts = self::options(options)?;
    let (path, arch) = model.0.source();
    let job = opts
        .train_job("arrays", path, arch, targets(index)?)
        .map_err(value_error)?;
    let spec = model.0.clone();
    run_interruptible(py, move |_flag| {
        let (data, device, black_box) = graph.get().load(&spec, job.induce.kernel)?;
        let run = RunContext::new(&device).with_loaded(&data, black_box.as_ref());
        let Trained {
            policy,
            meta,
            outcome,
            ..
        } = induce::run::train(&job, &run).map_err(|e| Failure::of(&e))?;
        let path =
            write_policy_dir(&job, &out, &policy, &meta, &outcome).map_err(|e| Failure::of(&e))?;
        Ok(serde_json::json!({
            "policy": path,
            "targets": outcome.targets,
            "seconds": outcome.seconds,
        })
        .to_string())
    })
}

/// The class log-probabilities of every node of the graph under `model` (the whole graph, one
/// forward pass): `(bytes, classes)`, the bytes `[n, classes]` little-endian float32, as
/// `induce predict` writes them.
#[pyfunction]
#[pyo3(signature = (graph, model, options))]
fn predict<'py>(
    py: Python<'py>,
    graph: Py<Graph>,
    model: &Model,
    options: &str,
) -> PyResult<(Bound<'py, PyBytes>, usize)> {
    let opts = self::options(options)?;
    let (path, arch) = model.0.source();
    let job = opts.explain_job(
        "arrays",
        path,
        arch,
        None,
        &[] as &[Method],
        TargetSpec::All,
    );
    let spec = model.0.clone();
    let (values, classes) = run_interruptible(py, move |_flag| {
        let (data, _device, black_box) = graph
            .get()
            .load(&spec, job.black_box_kernel.unwrap_or(job.induce.kernel))?;
        let lp = induce::run::predict(&data, black_box.as_ref()).map_err(|e| Failure::of(&e))?;
        Ok((lp.as_slice().to_vec(), lp.num_classes()))
    })?;
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Ok((PyBytes::new(py, &bytes), classes))
}

/// The names of [`RunOptions`]' fields (the package's keyword options), in field order.
fn option_names() -> Vec<String> {
    RunOptions::names()
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The environment switches `induce` honours (INDUCE_PROFILE, INDUCE_FUSED, ...), read once
    // at import as the command line reads them at start.
    induce::models::device::install_env_settings();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let methods: Vec<&str> = Method::all().iter().map(|m| m.name()).collect();
    m.add("METHODS", pyo3::types::PyTuple::new(m.py(), methods)?)?;
    m.add(
        "OPTIONS",
        pyo3::types::PyTuple::new(m.py(), option_names())?,
    )?;
    errors::register(m)?;
    m.add_class::<Model>()?;
    m.add_class::<Graph>()?;
    m.add_function(wrap_pyfunction!(graph, m)?)?;
    m.add_function(wrap_pyfunction!(check_options, m)?)?;
    m.add_function(wrap_pyfunction!(model_file, m)?)?;
    m.add_function(wrap_pyfunction!(model_pyg, m)?)?;
    m.add_function(wrap_pyfunction!(model_callback, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(predict, m)?)?;
    m.add_function(wrap_pyfunction!(train_policy, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{keywords, option_names};

    #[test]
    fn flags_read_as_keywords() {
        assert_eq!(
            keywords("describe the model with --arch arch.json (docs/FORMATS.md)"),
            "describe the model with arch=arch.json (docs/FORMATS.md)"
        );
        assert_eq!(
            keywords("use --all-nodes or --targets"),
            "use all_nodes=True or targets="
        );
        assert_eq!(keywords("a -- b, --7"), "a -- b, --7");
    }

    #[test]
    fn options_are_the_fields_in_order() {
        let names = option_names();
        assert_eq!(names.first().map(String::as_str), Some("seed"));
        assert_eq!(names.last().map(String::as_str), Some("to_class"));
        assert!(names.iter().any(|n| n == "max_neighbourhood"));
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }
}
