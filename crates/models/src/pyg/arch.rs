//! The architecture file of a PyG model (`arch.json`): what a `state_dict` does not say.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Result};

/// The architecture of a PyTorch Geometric node classifier whose `state_dict` was saved as
/// SafeTensors: a stack of message-passing layers (`{prefix}.0`, `{prefix}.1`, … in the file),
/// an activation between them, and an optional `torch.nn.Linear` head. The model's output is
/// read as logits or log-probabilities (a final `log_softmax` changes neither the ranking nor the
/// log-probabilities: it is applied once more here).
///
/// Everything the tensors' names and shapes tell (widths, heads, GIN's MLP when it is a plain
/// `Linear`/`ReLU` sequence, a trained `eps`, SAGE's root weight and projection) is inferred; the
/// file gives the rest, with PyG's defaults.
///
/// ```
/// use induce_models::pyg::{LayerArch, PygArch};
///
/// let arch: PygArch = serde_json::from_str(r#"{
///     "layers": [{"type": "sage"}, {"type": "sage", "aggr": "sum"}],
///     "activation": "relu"
/// }"#).unwrap();
/// assert_eq!(arch.layers.len(), 2);
/// assert!(matches!(arch.layers[0], LayerArch::Sage { .. }));
/// assert_eq!(arch.layer_key(1), "convs.1");
/// // Unknown fields are refused: a typo must not silently fall back to a default.
/// assert!(serde_json::from_str::<PygArch>(r#"{"layers": [{"type": "gcn", "normalise": false}]}"#)
///     .is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PygArch {
    /// The message-passing layers, input first.
    pub layers: Vec<LayerArch>,
    /// The activation after each layer but the last (and after the last when
    /// [`PygArch::act_last`]). Default `relu`.
    #[serde(default)]
    pub activation: Activation,
    /// Whether the activation also follows the last layer. Default: when there is a head.
    #[serde(default)]
    pub act_last: Option<bool>,
    /// The activation after each layer, one per entry of [`PygArch::layers`] (`"identity"` for
    /// none), when they differ (an MLP's last `linear` feeding a propagation, as `APPNP`
    /// models do). It overrides `activation` and `act_last`.
    #[serde(default)]
    pub activations: Option<Vec<Activation>>,
    /// The key prefix of a `torch.nn.Linear` head after the last layer (`"lin"` for
    /// `self.lin = Linear(...)`); none by default.
    #[serde(default)]
    pub head: Option<String>,
    /// The key prefix of the layer list: layer `i` is `{prefix}.{i}` unless it names its own
    /// [`key`](LayerArch). Default `convs` (a `torch.nn.ModuleList` named `convs`, as PyG's
    /// `BasicGNN` models and most examples name it).
    #[serde(default = "default_prefix")]
    pub prefix: String,
}

fn default_prefix() -> String {
    "convs".into()
}

fn yes() -> bool {
    true
}

fn default_slope() -> f32 {
    0.2
}

fn default_bn_eps() -> f32 {
    1e-5
}

fn default_two() -> f32 {
    2.0
}

/// One message-passing layer, tagged by `"type"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum LayerArch {
    /// `GCNConv`: `lin.weight [out, in]`, `bias [out]`.
    Gcn {
        /// The layer's key prefix, if not `{prefix}.{i}`.
        #[serde(default)]
        key: Option<String>,
        /// `add_self_loops` (default true; PyG adds them only when normalising).
        #[serde(default = "yes")]
        add_self_loops: bool,
        /// `normalize`: symmetric `D^{-1/2} (A + I) D^{-1/2}` (default true).
        #[serde(default = "yes")]
        normalize: bool,
        /// `improved` (default false). Accepted for completeness, without effect: PyG (2.8,
        /// `gcn_norm` → `add_remaining_self_loops`) gives self loops weight 1 whenever the
        /// layer is called without edge weights, whatever `improved` says, and a black box is
        /// called without them (the fixture `gcn_plain` pins this).
        #[serde(default)]
        improved: bool,
    },
    /// `SAGEConv`: `lin_l.weight [out, in]`, `lin_l.bias`, `lin_r.weight` (root weight, when
    /// present), `lin.weight`/`lin.bias` (the `project` option, when present).
    Sage {
        /// The layer's key prefix, if not `{prefix}.{i}`.
        #[serde(default)]
        key: Option<String>,
        /// The neighbour aggregation (default `mean`).
        #[serde(default)]
        aggr: Aggregation,
        /// `normalize`: L2-normalise each output row (default false).
        #[serde(default)]
        normalize: bool,
    },
    /// `GINConv`: `((1 + ε) x_i + Σ_j x_j)` through its MLP `nn` (a `torch.nn.Sequential`,
    /// keys `nn.{k}.…`).
    Gin {
        /// The layer's key prefix, if not `{prefix}.{i}`.
        #[serde(default)]
        key: Option<String>,
        /// `eps` when it is not in the file (with `train_eps=True` it is, and the file's value
        /// is used). Default 0.
        #[serde(default)]
        eps: Option<f32>,
        /// The `Sequential`'s modules in order. Default: inferred from the keys, a module
        /// without parameters read as `relu`, nothing after the last `Linear` (a trailing
        /// activation is invisible in a `state_dict`: name it here).
        #[serde(default)]
        mlp: Option<Vec<MlpOp>>,
        /// `BatchNorm1d`'s `eps` (default 1e-5).
        #[serde(default = "default_bn_eps")]
        bn_eps: f32,
    },
    /// `GATConv`: `lin.weight [H·C, in]` (or `lin_src`/`lin_dst`), `att_src`/`att_dst`
    /// `[1, H, C]`, `bias`.
    Gat {
        /// The layer's key prefix, if not `{prefix}.{i}`.
        #[serde(default)]
        key: Option<String>,
        /// `concat`: heads concatenated (default) or averaged. Checked against the bias's width.
        #[serde(default = "yes")]
        concat: bool,
        /// `negative_slope` of the attention's LeakyReLU (default 0.2).
        #[serde(default = "default_slope")]
        negative_slope: f32,
        /// `add_self_loops` (default true).
        #[serde(default = "yes")]
        add_self_loops: bool,
    },
    /// `GATv2Conv`: `lin_l`/`lin_r` `[H·C, in]` with biases (one `lin_l` with
    /// `share_weights`), `att` `[1, H, C]`, `bias`.
    Gatv2 {
        /// The layer's key prefix, if not `{prefix}.{i}`.
        #[serde(default)]
        key: Option<String>,
        /// `concat`: heads concatenated (default) or averaged. Checked against the bias's width.
        #[serde(default = "yes")]
        concat: bool,
        /// `negative_slope` of the attention's LeakyReLU (default 0.2).
        #[serde(default = "default_slope")]
        negative_slope: f32,
        /// `add_self_loops` (default true).
        #[serde(default = "yes")]
        add_self_loops: bool,
    },
    /// `GraphConv`: `lin_rel(Σ_j x_j) + lin_root(x_i)` (`lin_rel.weight`, `lin_rel.bias`,
    /// `lin_root.weight`).
    Graph {
        /// The layer's key prefix, if not `{prefix}.{i}`.
        #[serde(default)]
        key: Option<String>,
        /// The neighbour aggregation (default `sum`, PyG's `add`).
        #[serde(default = "sum")]
        aggr: Aggregation,
    },
    /// `SGConv`: `K` propagations by `D^{-1/2}(A + I)D^{-1/2}`, then `lin` (`lin.weight`,
    /// `lin.bias`). `K` hops.
    Sg {
        /// The layer's key prefix, if not `{prefix}.{i}`.
        #[serde(default)]
        key: Option<String>,
        /// `K` (PyG's default 1).
        #[serde(default = "one")]
        k: usize,
        /// `add_self_loops` (default true).
        #[serde(default = "yes")]
        add_self_loops: bool,
    },
    /// `APPNP`: `K` steps of `h ← (1 − α) Â h + α x` (no parameters). `K` hops.
    Appnp {
        /// The layer's key prefix, if not `{prefix}.{i}` (it holds no tensor).
        #[serde(default)]
        key: Option<String>,
        /// `K`.
        k: usize,
        /// `alpha`, the teleport probability.
        alpha: f32,
        /// `add_self_loops` (default true).
        #[serde(default = "yes")]
        add_self_loops: bool,
        /// `normalize` (default true; without it `Â` is `A`, and no self loops are added).
        #[serde(default = "yes")]
        normalize: bool,
    },
    /// `TAGConv`: `Σ_{k=0}^{K} lins[k](Âᵏ x) + bias`, `Â = D^{-1/2} A D^{-1/2}` (no self
    /// loops). `K` hops.
    Tag {
        /// The layer's key prefix, if not `{prefix}.{i}`.
        #[serde(default)]
        key: Option<String>,
        /// `K`, checked against the number of `lins` (inferred from them by default).
        #[serde(default)]
        k: Option<usize>,
        /// `normalize` (default true; without it `Â` is `A`).
        #[serde(default = "yes")]
        normalize: bool,
    },
    /// `ChebConv` with `normalization="sym"`: `Σ_{k<K} lins[k](T_k(L̂) x) + bias`, the
    /// Chebyshev polynomials of `L̂ = 2L/λ_max − I`, `L = I − D^{-1/2} A D^{-1/2}`. `K − 1` hops.
    Cheb {
        /// The layer's key prefix, if not `{prefix}.{i}`.
        #[serde(default)]
        key: Option<String>,
        /// `λ_max` (default 2, which PyG's `ChebConv` computes for `sym` when none is given).
        #[serde(default = "default_two")]
        lambda_max: f32,
    },
    /// A `torch.nn.Linear` between layers (an MLP before a propagation): `weight`, `bias`. No
    /// hop.
    Linear {
        /// The layer's key prefix, if not `{prefix}.{i}`.
        #[serde(default)]
        key: Option<String>,
    },
}

fn sum() -> Aggregation {
    Aggregation::Sum
}

fn one() -> usize {
    1
}

impl LayerArch {
    /// The family's name (`gcn`, `sage`, `gin`, `gat`, `gatv2`, `graph`, `sg`, `appnp`, `tag`,
    /// `cheb`, `linear`).
    pub fn family(&self) -> &'static str {
        match self {
            LayerArch::Gcn { .. } => "gcn",
            LayerArch::Sage { .. } => "sage",
            LayerArch::Gin { .. } => "gin",
            LayerArch::Gat { .. } => "gat",
            LayerArch::Gatv2 { .. } => "gatv2",
            LayerArch::Graph { .. } => "graph",
            LayerArch::Sg { .. } => "sg",
            LayerArch::Appnp { .. } => "appnp",
            LayerArch::Tag { .. } => "tag",
            LayerArch::Cheb { .. } => "cheb",
            LayerArch::Linear { .. } => "linear",
        }
    }

    fn key(&self) -> Option<&str> {
        match self {
            LayerArch::Gcn { key, .. }
            | LayerArch::Sage { key, .. }
            | LayerArch::Gin { key, .. }
            | LayerArch::Gat { key, .. }
            | LayerArch::Gatv2 { key, .. }
            | LayerArch::Graph { key, .. }
            | LayerArch::Sg { key, .. }
            | LayerArch::Appnp { key, .. }
            | LayerArch::Tag { key, .. }
            | LayerArch::Cheb { key, .. }
            | LayerArch::Linear { key, .. } => key.as_deref(),
        }
    }
}

/// A neighbour aggregation (`SAGEConv`, `GraphConv`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// Mean over the neighbours (0 without any).
    #[default]
    Mean,
    /// Sum over the neighbours.
    Sum,
}

/// A module of GIN's `Sequential` MLP.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MlpOp {
    /// `torch.nn.Linear` (`weight [out, in]`, `bias`).
    Linear,
    /// `torch.nn.BatchNorm1d` in eval mode (`weight`, `bias`, `running_mean`, `running_var`).
    BatchNorm,
    /// An activation module (no parameters).
    #[serde(untagged)]
    Act(Activation),
}

/// An element-wise activation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activation {
    /// `max(0, x)`.
    #[default]
    Relu,
    /// `x` for `x > 0`, `exp(x) − 1` otherwise (α = 1).
    Elu,
    /// `x` for `x > 0`, `0.01 x` otherwise.
    LeakyRelu,
    /// `tanh(x)`.
    Tanh,
    /// `1 / (1 + exp(−x))`.
    Sigmoid,
    /// No activation.
    Identity,
}

impl Activation {
    /// The activation of one value.
    pub fn apply(self, x: f32) -> f32 {
        match self {
            Activation::Relu => crate::ops::relu(x),
            Activation::Elu => {
                if x > 0.0 {
                    x
                } else {
                    x.exp_m1()
                }
            }
            Activation::LeakyRelu => {
                if x > 0.0 {
                    x
                } else {
                    0.01 * x
                }
            }
            Activation::Tanh => x.tanh(),
            Activation::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Activation::Identity => x,
        }
    }
}

impl PygArch {
    /// Reads an architecture file.
    ///
    /// Errors: [`ModelError::Io`] for an unreadable file, [`ModelError::Checkpoint`] naming the
    /// file, line and field for malformed JSON, an unknown field or an empty layer list.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: path.into(),
            source,
        })?;
        let arch: PygArch = serde_json::from_str(&text).map_err(|e| {
            ModelError::checkpoint(path, format!("not a PyG architecture file: {e}"))
        })?;
        if arch.layers.is_empty() {
            return Err(ModelError::checkpoint(
                path,
                "the architecture has no layer (`layers` is empty)",
            ));
        }
        Ok(arch)
    }

    /// The key prefix of layer `i`.
    pub fn layer_key(&self, i: usize) -> String {
        match self.layers.get(i).and_then(LayerArch::key) {
            Some(k) => k.to_string(),
            None => format!("{}.{i}", self.prefix),
        }
    }

    /// Whether the activation follows the last layer.
    pub fn activation_after_last(&self) -> bool {
        self.act_last.unwrap_or(self.head.is_some())
    }

    /// The activation after layer `i` ([`Activation::Identity`] for none): the entry of
    /// [`PygArch::activations`] when given, else [`PygArch::activation`] after every layer but
    /// the last, and after the last when [`PygArch::activation_after_last`].
    pub fn activation_after(&self, i: usize) -> Activation {
        if let Some(a) = self.activations.as_ref().and_then(|v| v.get(i)) {
            return *a;
        }
        if i + 1 < self.layers.len() || self.activation_after_last() {
            self.activation
        } else {
            Activation::Identity
        }
    }
}
