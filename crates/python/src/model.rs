//! The black box of a call: a file (as the command line loads it), a PyG stack converted in
//! memory from a live `torch.nn.Module`, or a Python callable called back.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use induce::methods::{LoadedBlackBox, load_black_box_with_arch};
use induce::models::pyg::{PygArch, PygNet};
use induce::models::{BlackBox, LayersSource, LogProbs, ModelError, PreparedBlackBox};
use induce::{Dataset, Device, graph::Features};
use pyo3::prelude::*;

use crate::errors::{Failure, Kind};
use pyo3::types::PyBytes;

/// A model handed to `explain`, `train_policy` or `predict` (built by `model_file`,
/// `model_pyg` or `model_callback`).
#[pyclass(frozen, module = "induce._native")]
pub struct Model(pub(crate) Spec);

#[derive(Clone)]
pub(crate) enum Spec {
    File {
        path: PathBuf,
        arch: Option<PathBuf>,
    },
    Pyg {
        net: Arc<PygNet>,
        name: String,
    },
    Callback {
        f: Arc<Py<PyAny>>,
        layers: Option<u32>,
        /// `layers` was given by the user (`layers=`), not counted.
        declared: bool,
        /// The callable holds the graph's features and takes row ids (`Callback.rows`).
        rows: bool,
        name: String,
    },
}

impl Spec {
    /// What the run's config records as its black box.
    pub(crate) fn source(&self) -> (PathBuf, Option<PathBuf>) {
        match self {
            Spec::File { path, arch } => (path.clone(), arch.clone()),
            Spec::Pyg { name, .. } | Spec::Callback { name, .. } => (PathBuf::from(name), None),
        }
    }

    /// The black box, checked against the data as the command line checks a file's.
    pub(crate) fn load(
        &self,
        data: &Dataset,
        kernel: induce::rl::Kernel,
        device: &Device,
    ) -> Result<Box<dyn BlackBox>, Failure> {
        let msg =
            |e: &(dyn std::error::Error + 'static)| Failure::new(Kind::Model, crate::message(e));
        match self {
            Spec::File { path, arch } => {
                let LoadedBlackBox { black_box, .. } =
                    load_black_box_with_arch(path, arch.as_deref(), data, kernel, device)
                        .map_err(|e| Failure::of(&e))?;
                Ok(black_box)
            }
            Spec::Pyg { net, name } => {
                let (d, c) = (data.graph.features().dim(), data.graph.num_classes());
                check(name, "node feature dimension", net.input_dim(), d, true)?;
                check(name, "number of classes", net.num_classes(), c, false)?;
                Ok(Box::new(PygNet::clone(net)))
            }
            Spec::Callback {
                f,
                layers,
                declared,
                rows,
                name,
            } => {
                let input_dim = data.graph.features().dim();
                let probe = Callback {
                    f: Arc::clone(f),
                    input_dim,
                    num_classes: 0,
                    layers: *layers,
                    source: match declared {
                        true => LayersSource::Declared,
                        false => LayersSource::Counted,
                    },
                    rows_of: rows.then(|| data.graph.features().id()),
                };
                let lp = probe
                    .call(data.graph.features(), &data.graph.edges())
                    .map_err(|e| msg(&e))?;
                let c = lp.len() / data.graph.num_nodes().max(1);
                check(
                    name,
                    "number of classes",
                    c,
                    data.graph.num_classes(),
                    false,
                )?;
                Ok(Box::new(Callback {
                    num_classes: c,
                    ..probe
                }))
            }
        }
    }
}

/// `found` against the data's `expected`: equal, or (for classes) at least as many.
fn check(
    name: &str,
    what: &str,
    found: usize,
    expected: usize,
    exact: bool,
) -> Result<(), Failure> {
    if found == expected || (!exact && found > expected) {
        Ok(())
    } else {
        Err(Failure::new(
            Kind::Model,
            format!(
                "model {name} does not fit the data: {what} (the data's vs the model's): \
                 expected {expected}, got {found}"
            ),
        ))
    }
}

/// A Python callable as the black box: `f(x_bytes, n, d, edge_bytes, e) -> logits_bytes`
/// (`induce._torch.Callback`), called with the GIL held for each graph the explainers ask about.
struct Callback {
    f: Arc<Py<PyAny>>,
    input_dim: usize,
    num_classes: usize,
    layers: Option<u32>,
    /// Counted by the Python side or declared by the user: checked on the graph by every run.
    source: LayersSource,
    /// The [`Features::id`] of the graph features the callable holds itself (`Spec::Callback`'s
    /// `rows`): graphs made of their rows are sent as row ids, not copies.
    rows_of: Option<u64>,
}

impl Callback {
    /// The rows of one call on a disjoint union, split back into its graphs of `sizes` nodes.
    fn split(
        &self,
        all: &[f32],
        sizes: impl Iterator<Item = usize>,
    ) -> induce::models::Result<Vec<LogProbs>> {
        let c = self.num_classes;
        let mut at = 0;
        sizes
            .map(|n| {
                let lp = LogProbs::new(n, c, all[at..at + n * c].to_vec());
                at += n * c;
                lp
            })
            .collect()
    }

    /// Row-wise log-softmax of what the callable returns for this graph (`n × classes`).
    fn call(&self, x: &Features, edges: &[(u32, u32)]) -> induce::models::Result<Vec<f32>> {
        self.call_raw(x.num_nodes(), Input::Values(x.as_slice()), edges)
    }

    /// [`Callback::call`] on `n` nodes given as feature values (`n × input_dim`) or as rows of
    /// the features the callable holds.
    fn call_raw(
        &self,
        n: usize,
        input: Input<'_>,
        edges: &[(u32, u32)],
    ) -> induce::models::Result<Vec<f32>> {
        let d = self.input_dim;
        let eb: Vec<u8> = edges
            .iter()
            .map(|&(u, _)| i64::from(u))
            .chain(edges.iter().map(|&(_, v)| i64::from(v)))
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let out: Vec<u8> = Python::attach(|py| {
            let eb = PyBytes::new(py, &eb);
            let r = match input {
                Input::Values(x) => {
                    let xb: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
                    let xb = PyBytes::new(py, &xb);
                    self.f.call1(py, (xb, n, d, eb, edges.len()))?
                }
                Input::Rows(rows) => {
                    let ib: Vec<u8> = rows
                        .iter()
                        .flat_map(|&v| i64::from(v).to_le_bytes())
                        .collect();
                    let ib = PyBytes::new(py, &ib);
                    self.f.call1(py, (py.None(), n, d, eb, edges.len(), ib))?
                }
            };
            r.extract::<Vec<u8>>(py)
        })
        .map_err(|e| ModelError::InvalidInput(format!("the model raised {e}")))?;
        if n == 0 || !out.len().is_multiple_of(4 * n) {
            return Err(ModelError::InvalidInput(format!(
                "the model returned {} bytes for {n} nodes: expected [num_nodes, num_classes] \
                 float32",
                out.len()
            )));
        }
        let mut v: Vec<f32> = out
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let c = v.len() / n;
        if self.num_classes != 0 && c != self.num_classes {
            return Err(ModelError::InvalidInput(format!(
                "the model returned {c} classes per node, earlier {}",
                self.num_classes
            )));
        }
        if let Some(i) = v.iter().position(|x| x.is_nan()) {
            return Err(ModelError::InvalidInput(format!(
                "the model returned NaN for node {} (output element {i})",
                i / c
            )));
        }
        for row in v.chunks_exact_mut(c) {
            induce::models::ops::log_softmax_in_place(row);
        }
        Ok(v)
    }
}

impl BlackBox for Callback {
    fn input_dim(&self) -> usize {
        self.input_dim
    }
    fn num_classes(&self) -> usize {
        self.num_classes
    }
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> induce::models::Result<LogProbs> {
        induce::models::black_box::check_features(x, self.input_dim)?;
        let v = self.call(x, edges)?;
        LogProbs::new(x.num_nodes(), self.num_classes, v)
    }
    fn message_passing_layers(&self) -> Option<u32> {
        self.layers
    }
    fn layers_source(&self) -> LayersSource {
        self.source
    }
    /// A message-passing model (its layers known) predicts each component of a disjoint union
    /// as it predicts that graph alone, so many graphs go in one call.
    fn batches_graphs(&self) -> bool {
        self.layers.is_some()
    }
    /// One call on the disjoint union of `graphs` (node ids offset), its rows split back.
    fn log_probs_many(
        &self,
        graphs: &[(&Features, &[(u32, u32)])],
    ) -> induce::models::Result<Vec<LogProbs>> {
        if !self.batches_graphs() || graphs.len() <= 1 {
            return graphs.iter().map(|&(x, e)| self.log_probs(x, e)).collect();
        }
        let mut xs = Vec::new();
        let mut edges = Vec::new();
        let mut n = 0u32;
        for &(x, e) in graphs {
            induce::models::black_box::check_features(x, self.input_dim)?;
            xs.extend_from_slice(x.as_slice());
            edges.extend(e.iter().map(|&(u, w)| (u + n, w + n)));
            n += x.num_nodes() as u32;
        }
        let all = self.call_raw(n as usize, Input::Values(&xs), &edges)?;
        self.split(&all, graphs.iter().map(|(x, _)| x.num_nodes()))
    }
    /// Graphs made of rows of the features the callable holds go as row ids: one call on
    /// their disjoint union, the features gathered on the Python side.
    fn log_probs_many_rows(
        &self,
        source: &Features,
        graphs: &[induce::models::RowGraph<'_>],
    ) -> induce::models::Result<Vec<LogProbs>> {
        if self.rows_of != Some(source.id()) || !self.batches_graphs() {
            let xs = (graphs.iter())
                .map(|(rows, _)| gathered(source, rows))
                .collect::<induce::models::Result<Vec<_>>>()?;
            let refs: Vec<_> = xs.iter().zip(graphs).map(|(x, g)| (x, g.1)).collect();
            return self.log_probs_many(&refs);
        }
        let mut ids = Vec::new();
        let mut edges = Vec::new();
        for &(rows, e) in graphs {
            check_rows(source, rows)?;
            let at = ids.len() as u32;
            edges.extend(e.iter().map(|&(u, w)| (u + at, w + at)));
            ids.extend_from_slice(rows);
        }
        let all = self.call_raw(ids.len(), Input::Rows(&ids), &edges)?;
        self.split(&all, graphs.iter().map(|(rows, _)| rows.len()))
    }
    /// A node set of rows of the features the callable holds is bound as their ids: each
    /// evaluation sends ids and edges.
    fn prepare_rows(
        &self,
        source: &Features,
        rows: &[u32],
    ) -> induce::models::Result<Option<Box<dyn PreparedBlackBox + '_>>> {
        check_rows(source, rows)?;
        Ok((self.rows_of == Some(source.id())).then(|| {
            Box::new(PreparedRows {
                callback: self,
                rows: rows.to_vec(),
            }) as Box<dyn PreparedBlackBox + '_>
        }))
    }
}

/// What a call hands the callable: feature values, or row ids of the features it holds.
#[derive(Clone, Copy)]
enum Input<'a> {
    Values(&'a [f32]),
    Rows(&'a [u32]),
}

/// A node set bound as row ids ([`Callback::prepare_rows`]).
struct PreparedRows<'a> {
    callback: &'a Callback,
    rows: Vec<u32>,
}

impl PreparedBlackBox for PreparedRows<'_> {
    fn log_probs(&self, edges: &[(u32, u32)]) -> induce::models::Result<LogProbs> {
        let n = self.rows.len();
        let v = (self.callback).call_raw(n, Input::Rows(&self.rows), edges)?;
        LogProbs::new(n, self.callback.num_classes, v)
    }
}

/// An error naming the first of `rows` outside `source`.
fn check_rows(source: &Features, rows: &[u32]) -> induce::models::Result<()> {
    match rows.iter().find(|&&r| r as usize >= source.num_nodes()) {
        Some(r) => Err(ModelError::InvalidInput(format!(
            "row {r} requested from a feature matrix of {} rows",
            source.num_nodes()
        ))),
        None => Ok(()),
    }
}

/// `source`'s rows `rows`, checked.
fn gathered(source: &Features, rows: &[u32]) -> induce::models::Result<Features> {
    check_rows(source, rows)?;
    Ok(source.gather(rows))
}

/// A model file: the paper's GCN (`.safetensors`, `.bpk`, a run directory) or a PyG
/// `state_dict` with its `arch` file, loaded as the command line loads it.
#[pyfunction]
#[pyo3(signature = (path, arch=None))]
pub fn model_file(path: PathBuf, arch: Option<PathBuf>) -> Model {
    Model(Spec::File { path, arch })
}

/// A PyG layer stack from its architecture (the JSON of `arch.json`) and its `state_dict` as
/// SafeTensors bytes, converted in memory; `name` stands for it in messages and configs.
#[pyfunction]
pub fn model_pyg(arch: &str, weights: &Bound<'_, PyBytes>, name: String) -> PyResult<Model> {
    let source = Path::new(&name);
    let arch: PygArch = serde_json::from_str(arch).map_err(|e| {
        crate::errors::ModelError::new_err(format!("model {name}: architecture: {e}"))
    })?;
    let net = PygNet::from_safetensors_bytes(source, weights.as_bytes(), &arch)
        .map_err(|e| crate::errors::ModelError::new_err(crate::message(&e)))?;
    Ok(Model(Spec::Pyg {
        net: Arc::new(net),
        name,
    }))
}

/// A Python callable as the black box (`induce._torch.Callback`); `layers`: the hops its
/// outputs reach, when verdicts may be taken on the receptive field (`None`: every verdict
/// evaluates the whole graph); `declared`: given by the user rather than counted (every run
/// checks it on the graph: a counted value is widened where the outputs reach further, a
/// declared one is an error); `rows`: the callable holds the graph's features itself and is
/// called with `x = None` and the row ids as a sixth argument for graphs made of their rows.
#[pyfunction]
#[pyo3(signature = (f, layers, name, declared=false, rows=false))]
pub fn model_callback(
    f: Py<PyAny>,
    layers: Option<u32>,
    name: String,
    declared: bool,
    rows: bool,
) -> Model {
    Model(Spec::Callback {
        f: Arc::new(f),
        layers,
        declared,
        rows,
        name,
    })
}
