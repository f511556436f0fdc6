//! Bring your own model: PyTorch Geometric node classifiers (`GCNConv`, `SAGEConv`, `GINConv`,
//! `GATConv`, `GATv2Conv`, `GraphConv` layers, the propagations `SGConv`, `APPNP`, `TAGConv`,
//! `ChebConv` as one-hop steps (`hop.rs`), `Linear` layers) as black boxes, loaded from a
//! `state_dict` saved as SafeTensors plus an architecture file ([`PygArch`]).
//!
//! ```text
//! # in Python, after training:
//! safetensors.torch.save_file(model.state_dict(), "model.safetensors")
//! # arch.json: {"layers": [{"type": "sage"}, {"type": "sage"}], "activation": "relu"}
//! ```
//!
//! [`PygNet::load`] checks every tensor against the architecture (a missing key, a wrong shape
//! or a key the architecture does not use is an error naming the key), and the result is a
//! [`BlackBox`] on the CPU ([`PygNet::log_probs`]) with a differentiable Burn form
//! ([`EdgeWeighted::forward_weighted`](crate::EdgeWeighted::forward_weighted)) for the
//! gradient-based baselines. The committed fixtures `tests/fixtures/pyg/*` (written by
//! `scripts/pyg-fixtures.py` with PyG) pin both to PyG's outputs. Bound to a graph
//! ([`BlackBox::bind_graph`]) it answers one node after a few toggled pairs by recomputing
//! only the rows the toggles reach (`bound.rs`), bit for bit a whole pass on the edited graph.

mod arch;
mod burn_net;
mod hints;

mod bound;
mod hop;
mod layers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use induce_graph::Features;

pub use arch::{Activation, Aggregation, LayerArch, MlpOp, PygArch};
pub use layers::{Adjacency, Block, Conv, Dense, Hop, MlpStep, Projection};

use std::sync::{Arc, Mutex, PoisonError};

use crate::black_box::{BlackBox, LogProbs, PreparedBlackBox, check_features, check_rows};
use crate::error::{ModelError, Result};
use crate::io::reference::{RawTensor, parse_safetensors, safetensors_tensors};

/// A PyG node classifier: message-passing layers, an activation between them, an optional linear
/// head, `log_softmax` on the output.
///
/// ```no_run
/// use induce_models::BlackBox;
/// use induce_models::pyg::PygNet;
///
/// let net = PygNet::load("model.safetensors", "arch.json").unwrap();
/// println!("{} → {} classes, {} layers", net.input_dim(), net.num_classes(), net.layers().len());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PygNet {
    /// The one-hop layers (a `K`-hop module gives `K`, see `hop.rs`).
    layers: Vec<Conv>,
    /// The activation after each of `layers` (identity inside a module).
    acts: Vec<Activation>,
    /// The modules' families, in order (`describe`).
    families: Vec<&'static str>,
    head: Option<Dense>,
    cache: ProjectionCache,
}

/// The first layer's projection ([`Conv::project`]) of the most recent whole feature matrix,
/// keyed by [`Features::id`]: every neighbourhood of a graph gathers its rows from it
/// ([`BlackBox::prepare_rows`]). A clone starts empty; equality ignores it.
#[derive(Debug, Default)]
struct ProjectionCache(Mutex<Option<(u64, Arc<Projection>)>>);

impl Clone for ProjectionCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for ProjectionCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// A [`PygNet`] bound to one node set's first-layer projection ([`BlackBox::prepare`]).
struct Prepared<'a> {
    net: &'a PygNet,
    projection: Projection,
}

impl PreparedBlackBox for Prepared<'_> {
    fn log_probs(&self, edges: &[(u32, u32)]) -> Result<LogProbs> {
        let n = self.projection.num_nodes();
        check_edges(n, edges)?;
        self.net.log_probs_projected(&self.projection, edges)
    }
}

/// The tensors of a file, by name, with the names used so far (to refuse unused ones).
struct Tensors {
    path: PathBuf,
    map: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
    used: std::collections::BTreeSet<String>,
}

impl Tensors {
    fn err(&self, msg: String) -> ModelError {
        ModelError::checkpoint(&self.path, msg)
    }

    fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    fn get(&mut self, key: &str) -> Result<(Vec<usize>, Vec<f32>)> {
        match self.map.get(key) {
            Some(t) => {
                self.used.insert(key.to_string());
                Ok(t.clone())
            }
            None => {
                // The tensors under the longest prefix of `key` that has any.
                let mut prefix = key;
                let near: Vec<&str> = loop {
                    prefix = match prefix.rsplit_once('.') {
                        Some((p, _)) => p,
                        None => break Vec::new(),
                    };
                    let under: Vec<&str> = self
                        .map
                        .keys()
                        .filter(|k| k.starts_with(&format!("{prefix}.")))
                        .map(String::as_str)
                        .collect();
                    if !under.is_empty() {
                        break under;
                    }
                };
                Err(self.err(format!(
                    "missing tensor `{key}` (the architecture needs it); {}",
                    if near.is_empty() {
                        format!(
                            "the file has {}",
                            self.map.keys().cloned().collect::<Vec<_>>().join(", ")
                        )
                    } else {
                        format!("tensors under `{prefix}`: {}", near.join(", "))
                    }
                )))
            }
        }
    }

    fn opt(&mut self, key: &str) -> Result<Option<(Vec<usize>, Vec<f32>)>> {
        if self.has(key) {
            self.get(key).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A `[out, in]` weight and its optional `[out]` bias.
    fn linear(&mut self, prefix: &str, bias: bool) -> Result<Dense> {
        let wkey = format!("{prefix}.weight");
        let (shape, w) = self.get(&wkey)?;
        let [dout, din] = shape[..] else {
            return Err(self.err(format!(
                "tensor `{wkey}` has shape {shape:?}: a Linear weight is [out, in]"
            )));
        };
        let b = if bias {
            self.vector(&format!("{prefix}.bias"), dout)?
        } else {
            None
        };
        Ok(Dense::from_torch(&w, dout, din, b))
    }

    /// An optional vector of length `len`.
    fn vector(&mut self, key: &str, len: usize) -> Result<Option<Vec<f32>>> {
        match self.opt(key)? {
            None => Ok(None),
            Some((shape, v)) if v.len() == len && shape.len() == 1 => Ok(Some(v)),
            Some((shape, _)) => Err(self.err(format!(
                "tensor `{key}` has shape {shape:?}, expected [{len}]"
            ))),
        }
    }
}

impl PygNet {
    /// Loads a model from its `state_dict` in SafeTensors (`weights`) and its architecture file.
    ///
    /// Errors ([`ModelError::Checkpoint`] naming the file and the key): a missing tensor, a
    /// tensor of the wrong shape or dtype (save float32), a tensor the architecture does not use
    /// (e.g. `GATConv`'s `lin_edge` for edge features, which these black boxes do not take), a
    /// non-finite value, or consecutive layers whose widths do not chain.
    pub fn load(weights: impl AsRef<Path>, arch: impl AsRef<Path>) -> Result<Self> {
        let arch_path = arch.as_ref();
        let arch = PygArch::load(arch_path)?;
        Self::from_arch(weights, &arch)
    }

    /// [`PygNet::load`] with the architecture already parsed.
    pub fn from_arch(weights: impl AsRef<Path>, arch: &PygArch) -> Result<Self> {
        let path = weights.as_ref();
        Self::from_tensors(path, safetensors_tensors(path)?, arch)
    }

    /// [`PygNet::from_arch`] with the `state_dict`'s SafeTensors bytes in memory (a live model
    /// converted without files, as the Python package does); `source` names them in errors.
    pub fn from_safetensors_bytes(source: &Path, bytes: &[u8], arch: &PygArch) -> Result<Self> {
        Self::from_tensors(source, parse_safetensors(source, bytes)?, arch)
    }

    fn from_tensors(path: &Path, tensors: Vec<RawTensor>, arch: &PygArch) -> Result<Self> {
        if arch.layers.is_empty() {
            return Err(ModelError::checkpoint(
                path,
                "the architecture has no layer (`layers` is empty)",
            ));
        }
        let mut map = BTreeMap::new();
        for t in tensors {
            if t.name.ends_with("num_batches_tracked") {
                continue;
            }
            let Some(v) = t.f32_values() else {
                return Err(ModelError::checkpoint(
                    path,
                    format!(
                        "tensor `{}` is {}: save the model in float32 (`model.float()`)",
                        t.name, t.dtype
                    ),
                ));
            };
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                return Err(ModelError::checkpoint(
                    path,
                    format!("tensor `{}` element {i} is not finite ({})", t.name, v[i]),
                ));
            }
            map.insert(t.name, (t.shape, v));
        }
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        if let Some(hint) = hints::layout_hint(&keys, arch) {
            return Err(ModelError::checkpoint(path, hint));
        }
        let mut ts = Tensors {
            path: path.into(),
            map,
            used: Default::default(),
        };
        if let Some(a) = &arch.activations
            && a.len() != arch.layers.len()
        {
            return Err(ts.err(format!(
                "the architecture's `activations` lists {} activations for {} layers (one \
                 after each layer)",
                a.len(),
                arch.layers.len()
            )));
        }
        let mut layers: Vec<Conv> = Vec::with_capacity(arch.layers.len());
        let mut acts = Vec::with_capacity(arch.layers.len());
        let mut width = None;
        for (i, spec) in arch.layers.iter().enumerate() {
            let key = arch.layer_key(i);
            let convs = resolve(&mut ts, spec, &key, width)?;
            let Some(first) = convs.first() else {
                continue;
            };
            if let Some(prev) = width
                && prev != first.input_dim()
            {
                return Err(ts.err(format!(
                    "layer `{key}` takes {} features but the layer before it gives {prev}",
                    first.input_dim()
                )));
            }
            width = convs.last().map(Conv::output_dim);
            acts.extend(std::iter::repeat_n(Activation::Identity, convs.len() - 1));
            acts.push(arch.activation_after(i));
            layers.extend(convs);
        }
        if layers.is_empty() {
            return Err(ts.err(
                "the architecture's layers compute nothing (an `appnp` with `k` 0 alone)".into(),
            ));
        }
        let head = match &arch.head {
            Some(h) => {
                let d = ts.linear(h, true)?;
                let last = layers.last().map_or(0, Conv::output_dim);
                if d.din != last {
                    return Err(ts.err(format!(
                        "head `{h}` takes {} features but the last layer gives {last}",
                        d.din
                    )));
                }
                Some(d)
            }
            None => None,
        };
        if let Some(k) = ts.map.keys().find(|k| !ts.used.contains(*k)) {
            return Err(ts.err(format!(
                "tensor `{k}` is not part of the architecture (layers {}, head {}): a layer \
                 option this loader does not support, or a key prefix other than `{}`",
                (0..arch.layers.len())
                    .map(|i| format!("`{}`", arch.layer_key(i)))
                    .collect::<Vec<_>>()
                    .join(", "),
                arch.head.as_deref().unwrap_or("none"),
                arch.prefix
            )));
        }
        Ok(Self {
            layers,
            acts,
            families: arch.layers.iter().map(LayerArch::family).collect(),
            head,
            cache: ProjectionCache::default(),
        })
    }

    /// The message-passing layers.
    pub fn layers(&self) -> &[Conv] {
        &self.layers
    }

    /// The linear head, if any.
    pub fn head(&self) -> Option<&Dense> {
        self.head.as_ref()
    }

    /// The activation after one-hop layer `i` of [`PygNet::layers`] (identity inside a
    /// module and after a last layer without one).
    pub fn activation_after(&self, i: usize) -> Activation {
        self.acts[i]
    }

    /// The families of the modules, e.g. `sage+sage` or `linear+linear+appnp`.
    pub fn describe(&self) -> String {
        self.families.join("+")
    }

    /// The representation the head (or, without one, `log_softmax`) reads: every layer and its
    /// activation.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`; output: `[n, width of the last layer]`
    pub fn embeddings(&self, x: &Features, edges: &[(u32, u32)]) -> Result<Vec<f32>> {
        check_graph(self.input_dim(), x, edges)?;
        let p = self.layers[0].project(x.as_slice(), x.num_nodes());
        Ok(self.embeddings_projected(&p, edges))
    }

    /// [`PygNet::embeddings`] from the first layer's projection of the features.
    fn embeddings_projected(&self, p: &Projection, edges: &[(u32, u32)]) -> Vec<f32> {
        let adj = Adjacency::new(p.num_nodes(), edges);
        let mut h = self.layers[0].forward_projected(p, &adj);
        for (i, conv) in self.layers.iter().enumerate() {
            if i > 0 {
                h = conv.forward(&h, &adj);
            }
            self.activate(i, &mut h);
        }
        h
    }

    /// The activation after layer `i`, in place.
    fn activate(&self, i: usize, h: &mut [f32]) {
        let a = self.acts[i];
        if a != Activation::Identity {
            h.iter_mut().for_each(|v| *v = a.apply(*v));
        }
    }

    /// Class log-probabilities from the first layer's projection of the features.
    fn log_probs_projected(&self, p: &Projection, edges: &[(u32, u32)]) -> Result<LogProbs> {
        let n = p.num_nodes();
        let h = self.embeddings_projected(p, edges);
        let mut out = match &self.head {
            Some(d) => d.apply(&h, n),
            None => h,
        };
        let c = self.num_classes();
        for row in out.chunks_exact_mut(c.max(1)) {
            let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let lse = m + row.iter().map(|v| (v - m).exp()).sum::<f32>().ln();
            row.iter_mut().for_each(|v| *v -= lse);
        }
        LogProbs::new(n, c, out)
    }

    /// The first layer's projection of the whole of `source`, cached by its id.
    fn projection_of(&self, source: &Features) -> Arc<Projection> {
        let mut slot = self.cache.0.lock().unwrap_or_else(PoisonError::into_inner);
        match &*slot {
            Some((id, p)) if *id == source.id() => Arc::clone(p),
            _ => {
                let p = Arc::new(self.layers[0].project(source.as_slice(), source.num_nodes()));
                *slot = Some((source.id(), Arc::clone(&p)));
                p
            }
        }
    }
}

/// One module from its tensors: one layer, or a propagation's hops (`hop.rs`). `width` is the
/// output width of the module before it, if any.
fn resolve(
    ts: &mut Tensors,
    spec: &LayerArch,
    key: &str,
    width: Option<usize>,
) -> Result<Vec<Conv>> {
    Ok(vec![match spec {
        LayerArch::Gcn {
            add_self_loops,
            normalize,
            improved: _,
            ..
        } => {
            let lin = ts.linear(&format!("{key}.lin"), false)?;
            let bias = ts.vector(&format!("{key}.bias"), lin.dout)?;
            Conv::Gcn {
                bias,
                normalize: *normalize,
                self_loop: add_self_loops.then_some(1.0),
                lin,
            }
        }
        LayerArch::Sage {
            aggr, normalize, ..
        } => {
            let project = if ts.has(&format!("{key}.lin.weight")) {
                Some(ts.linear(&format!("{key}.lin"), true)?)
            } else {
                None
            };
            let lin_l = ts.linear(&format!("{key}.lin_l"), true)?;
            let lin_r = if ts.has(&format!("{key}.lin_r.weight")) {
                Some(ts.linear(&format!("{key}.lin_r"), false)?)
            } else {
                None
            };
            if let Some(r) = &lin_r
                && r.dout != lin_l.dout
            {
                return Err(ts.err(format!(
                    "`{key}.lin_r.weight` gives {} outputs, `{key}.lin_l.weight` {}",
                    r.dout, lin_l.dout
                )));
            }
            Conv::Sage {
                project,
                lin_l,
                lin_r,
                aggr: *aggr,
                normalize: *normalize,
            }
        }
        LayerArch::Gin {
            eps, mlp, bn_eps, ..
        } => {
            let eps_key = format!("{key}.eps");
            let eps = match ts.opt(&eps_key)? {
                Some((_, v)) if v.len() == 1 => v[0],
                Some((shape, _)) => {
                    return Err(ts.err(format!(
                        "tensor `{eps_key}` has shape {shape:?}, expected [1]"
                    )));
                }
                None => eps.unwrap_or(0.0),
            };
            let ops = match mlp {
                Some(ops) => ops.clone(),
                None => infer_mlp(ts, key)?,
            };
            let mut steps = Vec::with_capacity(ops.len());
            for (k, op) in ops.iter().enumerate() {
                let p = format!("{key}.nn.{k}");
                steps.push(match op {
                    MlpOp::Linear => MlpStep::Linear(ts.linear(&p, true)?),
                    MlpOp::BatchNorm => {
                        let (shape, w) = ts.get(&format!("{p}.weight"))?;
                        let len = w.len();
                        if shape.len() != 1 {
                            return Err(ts.err(format!(
                                "tensor `{p}.weight` has shape {shape:?}: a BatchNorm1d weight is [features]"
                            )));
                        }
                        let b = ts.vector(&format!("{p}.bias"), len)?.unwrap_or(vec![0.0; len]);
                        let mean = ts.vector(&format!("{p}.running_mean"), len)?;
                        let var = ts.vector(&format!("{p}.running_var"), len)?;
                        let (Some(mean), Some(var)) = (mean, var) else {
                            return Err(ts.err(format!(
                                "`{p}` is a BatchNorm1d without running statistics \
                                 (`track_running_stats=False`): its eval output depends on the \
                                 batch and is not supported"
                            )));
                        };
                        let scale: Vec<f32> = w
                            .iter()
                            .zip(&var)
                            .map(|(w, v)| w / (v + bn_eps).sqrt())
                            .collect();
                        let shift = b
                            .iter()
                            .zip(&mean)
                            .zip(&scale)
                            .map(|((b, m), s)| b - m * s)
                            .collect();
                        MlpStep::Affine { scale, shift }
                    }
                    MlpOp::Act(a) => {
                        if let Some(k) = ts.map.keys().find(|k| k.starts_with(&format!("{p}.")))
                        {
                            return Err(ts.err(format!(
                                "module {k} has parameters but the architecture's `mlp` says \
                                 module {p} is an activation"
                            )));
                        }
                        MlpStep::Act(*a)
                    }
                });
            }
            let conv = Conv::Gin { eps, mlp: steps };
            check_mlp_chain(ts, key, &conv)?;
            conv
        }
        LayerArch::Gat {
            concat,
            negative_slope,
            add_self_loops,
            ..
        } => {
            let (lin_src, lin_dst) = if ts.has(&format!("{key}.lin.weight")) {
                (ts.linear(&format!("{key}.lin"), false)?, None)
            } else {
                let s = ts.linear(&format!("{key}.lin_src"), false)?;
                let d = ts.linear(&format!("{key}.lin_dst"), false)?;
                let d = (d != s).then_some(d);
                (s, d)
            };
            let (shape, att_src) = ts.get(&format!("{key}.att_src"))?;
            let [1, heads, out] = shape[..] else {
                return Err(ts.err(format!(
                    "tensor `{key}.att_src` has shape {shape:?}, expected [1, heads, out]"
                )));
            };
            let (dshape, att_dst) = ts.get(&format!("{key}.att_dst"))?;
            if dshape != shape {
                return Err(ts.err(format!(
                    "tensor `{key}.att_dst` has shape {dshape:?}, `{key}.att_src` {shape:?}"
                )));
            }
            if lin_src.dout != heads * out {
                return Err(ts.err(format!(
                    "`{key}` lin gives {} outputs, att_src has {heads} heads × {out}",
                    lin_src.dout
                )));
            }
            let bias = head_bias(ts, key, heads, out, *concat)?;
            Conv::Gat {
                lin_src,
                lin_dst,
                att_src,
                att_dst,
                heads,
                out,
                concat: *concat,
                negative_slope: *negative_slope,
                self_loops: *add_self_loops,
                bias,
            }
        }
        LayerArch::Gatv2 {
            concat,
            negative_slope,
            add_self_loops,
            ..
        } => {
            let lin_l = ts.linear(&format!("{key}.lin_l"), true)?;
            // `share_weights=True` saves `lin_r` as the same tensors as `lin_l`.
            let lin_r = match ts.has(&format!("{key}.lin_r.weight")) {
                true => Some(ts.linear(&format!("{key}.lin_r"), true)?),
                false => None,
            };
            let lin_r = lin_r.filter(|r| *r != lin_l);
            let (shape, att) = ts.get(&format!("{key}.att"))?;
            let [1, heads, out] = shape[..] else {
                return Err(ts.err(format!(
                    "tensor `{key}.att` has shape {shape:?}, expected [1, heads, out]"
                )));
            };
            if lin_l.dout != heads * out || lin_r.as_ref().is_some_and(|r| r.dout != lin_l.dout) {
                return Err(ts.err(format!(
                    "`{key}` lin_l gives {} outputs, att has {heads} heads × {out}",
                    lin_l.dout
                )));
            }
            let bias = head_bias(ts, key, heads, out, *concat)?;
            Conv::Gatv2 {
                lin_l,
                lin_r,
                att,
                heads,
                out,
                concat: *concat,
                negative_slope: *negative_slope,
                self_loops: *add_self_loops,
                bias,
            }
        }
        LayerArch::Graph { aggr, .. } => {
            // `lin_rel(Σ_j x_j) + lin_root(x_i)`: SAGE's form, with its aggregation.
            let lin_l = ts.linear(&format!("{key}.lin_rel"), true)?;
            let lin_r = ts.linear(&format!("{key}.lin_root"), false)?;
            if lin_r.dout != lin_l.dout || lin_r.din != lin_l.din {
                return Err(ts.err(format!(
                    "`{key}.lin_root.weight` is {}×{}, `{key}.lin_rel.weight` {}×{}",
                    lin_r.dout, lin_r.din, lin_l.dout, lin_l.din
                )));
            }
            Conv::Sage {
                project: None,
                lin_l,
                lin_r: Some(lin_r),
                aggr: *aggr,
                normalize: false,
            }
        }
        LayerArch::Linear { .. } => Conv::Linear(ts.linear(key, true)?),
        LayerArch::Sg {
            k, add_self_loops, ..
        } => {
            return Ok(hop::sg(
                ts.linear(&format!("{key}.lin"), true)?,
                *k,
                *add_self_loops,
            ));
        }
        LayerArch::Appnp {
            k,
            alpha,
            add_self_loops,
            normalize,
            ..
        } => {
            let Some(width) = width else {
                return Err(ts.err(format!(
                    "`{key}` (appnp) is the first layer: APPNP has no weights to tell its width; \
                     put the layers that feed it (a `linear`) before it"
                )));
            };
            if *k == 0 {
                return Ok(vec![]);
            }
            return Ok(hop::appnp(width, *k, *alpha, *add_self_loops, *normalize));
        }
        LayerArch::Tag { k, normalize, .. } => {
            let lins = lins(ts, key)?;
            if let Some(k) = k
                && *k + 1 != lins.len()
            {
                return Err(ts.err(format!(
                    "`{key}` has {} `lins` (K = {}), the architecture says k = {k}",
                    lins.len(),
                    lins.len() - 1
                )));
            }
            let bias = ts.vector(&format!("{key}.bias"), lins[0].dout)?;
            return Ok(hop::tag(lins, bias, *normalize));
        }
        LayerArch::Cheb { lambda_max, .. } => {
            if !(lambda_max.is_finite() && *lambda_max > 0.0) {
                return Err(ts.err(format!(
                    "`{key}` (cheb): lambda_max {lambda_max} must be positive"
                )));
            }
            let lins = lins(ts, key)?;
            let bias = ts.vector(&format!("{key}.bias"), lins[0].dout)?;
            return Ok(hop::cheb(lins, bias, *lambda_max));
        }
    }])
}

/// `{key}.lins.0`, `{key}.lins.1`, … (`TAGConv`, `ChebConv`), without biases, of one shape.
fn lins(ts: &mut Tensors, key: &str) -> Result<Vec<Dense>> {
    let mut out: Vec<Dense> = Vec::new();
    while ts.has(&format!("{key}.lins.{}.weight", out.len())) {
        let d = ts.linear(&format!("{key}.lins.{}", out.len()), false)?;
        if let Some(f) = out.first()
            && (f.din, f.dout) != (d.din, d.dout)
        {
            return Err(ts.err(format!(
                "`{key}.lins.{}.weight` is {}×{}, `{key}.lins.0.weight` {}×{}",
                out.len(),
                d.dout,
                d.din,
                f.dout,
                f.din
            )));
        }
        out.push(d);
    }
    if out.is_empty() {
        return Err(ts.err(format!("missing tensor `{key}.lins.0.weight`")));
    }
    Ok(out)
}

/// An attention layer's bias: `heads × out` wide when concatenating, `out` when averaging.
fn head_bias(
    ts: &mut Tensors,
    key: &str,
    heads: usize,
    out: usize,
    concat: bool,
) -> Result<Option<Vec<f32>>> {
    let width = if concat { heads * out } else { out };
    match ts.opt(&format!("{key}.bias"))? {
        None => Ok(None),
        Some((_, b)) if b.len() == width => Ok(Some(b)),
        Some((_, b)) => Err(ts.err(format!(
            "tensor `{key}.bias` has {} values; {heads} heads × {out} with concat {concat} \
             give {width} (set \"concat\" in the architecture)",
            b.len()
        ))),
    }
}

/// GIN's `Sequential` read from the keys `{key}.nn.{k}.…`: a 2-d weight is a `Linear`, a 1-d
/// weight with running statistics a `BatchNorm1d`, an index without parameters between them a
/// ReLU.
fn infer_mlp(ts: &Tensors, key: &str) -> Result<Vec<MlpOp>> {
    let prefix = format!("{key}.nn.");
    let mut modules: BTreeMap<usize, MlpOp> = BTreeMap::new();
    for (name, (shape, _)) in ts.map.range(prefix.clone()..) {
        let Some(rest) = name.strip_prefix(&prefix) else {
            break;
        };
        let Some((idx, field)) = rest.split_once('.') else {
            continue;
        };
        let Ok(k) = idx.parse::<usize>() else {
            return Err(ts.err(format!(
                "tensor `{name}`: GIN's `nn` must be a torch.nn.Sequential (keys `{prefix}0.weight`, \
                 …); PyG's `MLP` class (`{prefix}lins.0.weight`) is not supported"
            )));
        };
        if field == "weight" {
            modules.insert(
                k,
                if shape.len() == 2 {
                    MlpOp::Linear
                } else {
                    MlpOp::BatchNorm
                },
            );
        }
    }
    let Some(&last) = modules.keys().last() else {
        return Err(ts.err(format!(
            "missing tensor `{prefix}0.weight`: GIN layer `{key}` has no MLP"
        )));
    };
    Ok((0..=last)
        .map(|k| {
            modules
                .get(&k)
                .copied()
                .unwrap_or(MlpOp::Act(Activation::Relu))
        })
        .collect())
}

/// Checks that the widths of GIN's MLP chain.
fn check_mlp_chain(ts: &Tensors, key: &str, conv: &Conv) -> Result<()> {
    let Conv::Gin { mlp, .. } = conv else {
        return Ok(());
    };
    let mut width: Option<usize> = None;
    for (k, s) in mlp.iter().enumerate() {
        let (din, dout) = match s {
            MlpStep::Linear(d) => (d.din, d.dout),
            MlpStep::Affine { scale, .. } => (scale.len(), scale.len()),
            MlpStep::Act(_) => continue,
        };
        if let Some(w) = width
            && w != din
        {
            return Err(ts.err(format!(
                "`{key}.nn.{k}` takes {din} features but the module before it gives {w}"
            )));
        }
        width = Some(dout);
    }
    Ok(())
}

/// Checks features and edges against the model.
fn check_graph(dim: usize, x: &Features, edges: &[(u32, u32)]) -> Result<()> {
    check_features(x, dim)?;
    check_edges(x.num_nodes(), edges)
}

/// Checks edges against a node count.
fn check_edges(n: usize, edges: &[(u32, u32)]) -> Result<()> {
    if let Some(&(u, w)) = edges
        .iter()
        .find(|&&(u, w)| u as usize >= n || w as usize >= n || u == w)
    {
        return Err(ModelError::InvalidInput(format!(
            "edge ({u}, {w}) on a graph of {n} nodes (ids must be < {n}, no self loops)"
        )));
    }
    Ok(())
}

impl BlackBox for PygNet {
    fn input_dim(&self) -> usize {
        self.layers[0].input_dim()
    }

    fn num_classes(&self) -> usize {
        match &self.head {
            Some(h) => h.dout,
            None => self.layers[self.layers.len() - 1].output_dim(),
        }
    }

    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
        check_graph(self.input_dim(), x, edges)?;
        let p = self.layers[0].project(x.as_slice(), x.num_nodes());
        self.log_probs_projected(&p, edges)
    }

    /// Binds the first layer's projection of `x` (the part of every layer family that depends
    /// on the features only, [`Conv::project`]).
    fn prepare(&self, x: &Features) -> Result<Option<Box<dyn PreparedBlackBox + '_>>> {
        check_features(x, self.input_dim())?;
        Ok(Some(Box::new(Prepared {
            net: self,
            projection: self.layers[0].project(x.as_slice(), x.num_nodes()),
        })))
    }

    /// The projection of the whole of `source` is computed once (cached by its id) and each
    /// node set gathers its rows: a neighbourhood never multiplies its features again.
    fn prepare_rows(
        &self,
        source: &Features,
        rows: &[u32],
    ) -> Result<Option<Box<dyn PreparedBlackBox + '_>>> {
        check_features(source, self.input_dim())?;
        check_rows(source, rows)?;
        Ok(Some(Box::new(Prepared {
            net: self,
            projection: self.projection_of(source).gather(rows),
        })))
    }

    /// A bound PyG model: every layer's input projection once; then one node after a few
    /// toggles recomputes only the rows of its receptive field that the toggles reach.
    fn bind_graph<'s>(
        &'s self,
        graph: &'s induce_graph::Graph,
    ) -> Result<Option<Box<dyn crate::black_box::GraphBinding + 's>>> {
        Ok(Some(Box::new(bound::BoundPyg::new(self, graph)?)))
    }

    /// Each layer reads the neighbours' features (GCN-style: and their degrees), so the output
    /// at a node is determined by its `L`-hop neighbourhood and the degrees there, `L` the
    /// layers' hops (a `K`-hop propagation counts `K`, a `Linear` none).
    fn message_passing_layers(&self) -> Option<u32> {
        Some(self.layers.iter().map(Conv::hops).sum())
    }

    /// Itself: the Burn form of the same layers with a weight on every edge (the module docs of
    /// `burn_net` say how each family takes it).
    fn edge_weighted(&self) -> Option<&dyn crate::EdgeWeighted> {
        Some(self)
    }
}
