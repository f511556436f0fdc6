//! The explanation methods by name, the paper's settings per dataset family, and the loading of
//! black boxes and policies from files: what the command line and the examples share.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use burn::tensor::Device;
use induce_explain::Explainer;
use induce_graph::Dataset;
use induce_models::checkpoint::{check_dims, load_gcn};
use induce_models::reference::load_reference_gcn;
use induce_models::{BlackBox, Gcn, GcnBlackBox, HostGcn, Policy};
use induce_rl::{
    EditMode, InduceConfig, InduceExplainer, PolicyKernel, PolicyMeta, TransductiveExplainer,
    load_policy,
};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// An explanation method, named as the command line's `--method` and the rows of
/// `summary.json` spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Method {
    /// InduCE inductive: one policy trained on training targets, greedy forward passes per
    /// target (`inductive`).
    Inductive,
    /// InduCE transductive: a policy trained per target (`transductive`).
    Transductive,
    /// InduCE inductive restricted to deletions (`inductive-del-only`).
    InductiveDelOnly,
    /// The same network as `inductive`, untrained: the ablation of training (`untrained`).
    Untrained,
}

impl Method {
    /// Every method, in the order the experiments run them.
    pub const ALL: [Method; 4] = [
        Method::Inductive,
        Method::Transductive,
        Method::InductiveDelOnly,
        Method::Untrained,
    ];

    /// The method's name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Inductive => "inductive",
            Method::Transductive => "transductive",
            Method::InductiveDelOnly => "inductive-del-only",
            Method::Untrained => "untrained",
        }
    }

    /// True for the methods that explain with a trained inductive policy (`--policy`).
    pub fn needs_policy(self) -> bool {
        matches!(self, Method::Inductive | Method::InductiveDelOnly)
    }

    /// The edit mode the method imposes, if any.
    pub fn edit_mode(self) -> Option<EditMode> {
        match self {
            Method::InductiveDelOnly => Some(EditMode::DeleteOnly),
            _ => None,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = Error;

    /// A method name; `induce-` prefixes (`induce-inductive`) are accepted.
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim().to_ascii_lowercase();
        let bare = s.strip_prefix("induce-").unwrap_or(&s);
        let bare = if bare == "untrained-policy" {
            "untrained"
        } else {
            bare
        };
        Method::ALL
            .into_iter()
            .find(|m| m.name() == bare)
            .ok_or_else(|| Error::InvalidValue {
                what: "method",
                value: s.to_string(),
                reason: format!(
                    "expected one of {}",
                    Method::ALL.map(Method::name).join(", ")
                ),
            })
    }
}

impl From<Method> for String {
    fn from(m: Method) -> Self {
        m.name().to_string()
    }
}

impl TryFrom<String> for Method {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

/// The paper's InduCE settings for a family of datasets (its §4 and appendix), without needing a
/// generator: M = 80 training episodes on BA-Shapes and the real graphs, 500 on the trees;
/// γ = 0.4 inductive, 0.6 transductive; 4 hops, budget 15.
///
/// ```
/// use induce::methods::Preset;
/// assert_eq!(Preset::for_dataset("syn4"), Preset::Trees);
/// assert_eq!(Preset::Trees.transductive(42).episodes, 500);
/// assert_eq!(Preset::BaShapes.transductive(42).gamma, 0.6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// BA-Shapes (generated or the reference `syn1`).
    BaShapes,
    /// Tree-Cycles and Tree-Grid (generated or `syn4`, `syn5`).
    Trees,
    /// Real graphs (Amazon-Photo, Cora, CiteSeer, OGB) and anything else.
    Real,
}

impl Preset {
    /// The family a dataset name belongs to (`ba-shapes`, `syn1` → BA-Shapes; `tree-cycles`,
    /// `tree-grid`, `syn4`, `syn5` → trees; anything else → real).
    pub fn for_dataset(name: &str) -> Self {
        match name.to_ascii_lowercase().replace('_', "-").as_str() {
            "ba-shapes" | "syn1" => Preset::BaShapes,
            "tree-cycles" | "tree-grid" | "syn4" | "syn5" => Preset::Trees,
            _ => Preset::Real,
        }
    }

    /// Training episodes M of the family.
    pub fn episodes(self) -> usize {
        match self {
            Preset::Trees => 500,
            Preset::BaShapes | Preset::Real => 80,
        }
    }

    /// Inductive InduCE (γ 0.4) with this family's episodes.
    pub fn inductive(self, seed: u64) -> InduceConfig {
        InduceConfig {
            episodes: self.episodes(),
            seed,
            ..InduceConfig::default()
        }
    }

    /// Transductive InduCE (γ 0.6) with this family's per-target episode cap.
    pub fn transductive(self, seed: u64) -> InduceConfig {
        InduceConfig {
            gamma: 0.6,
            ..self.inductive(seed)
        }
    }
}

/// A black box loaded from a file, in both kernels' forms.
pub struct LoadedBlackBox {
    /// The Burn model.
    pub model: Gcn,
    /// What the explainers call: the host copy ([`HostGcn`]) for the host kernel, the Burn
    /// model on the device otherwise.
    pub black_box: Box<dyn BlackBox>,
}

impl fmt::Debug for LoadedBlackBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedBlackBox").finish_non_exhaustive()
    }
}

/// Wraps a GCN as the black box the `kernel` uses (same function, pinned by tests).
pub fn black_box_for(model: Gcn, kernel: PolicyKernel, device: &Device) -> Result<LoadedBlackBox> {
    let black_box: Box<dyn BlackBox> = match kernel {
        PolicyKernel::Host => Box::new(HostGcn::from_gcn(&model)?),
        PolicyKernel::Burn => Box::new(GcnBlackBox::new(model.clone(), device)),
    };
    Ok(LoadedBlackBox { model, black_box })
}

/// Loads the black-box GCN for `data` from `path`: the authors' SafeTensors weights
/// (`*.safetensors`, e.g. `shared/reference/syn1_gcn.safetensors`) or a checkpoint of ours
/// (`*.bpk` with its `.json`, or a run directory holding `black_box.bpk`). A model whose input
/// width or class count differs from the data is a typed error naming both numbers.
pub fn load_black_box(
    path: impl AsRef<Path>,
    data: &Dataset,
    kernel: PolicyKernel,
    device: &Device,
) -> Result<LoadedBlackBox> {
    let path = path.as_ref();
    let path = if path.is_dir() {
        path.join("black_box.bpk")
    } else {
        path.to_path_buf()
    };
    let (d, c) = (data.graph.features().dim(), data.graph.num_classes());
    let model = if path.extension().is_some_and(|e| e == "safetensors") {
        let m = load_reference_gcn(&path, device)?;
        check_dims(&path, "node feature dimension", m.input_dim(), d)?;
        check_dims(&path, "number of classes", m.num_classes(), c)?;
        m
    } else if path.extension().is_some_and(|e| e == "bpk") || !path.exists() {
        load_gcn(&path, Some((d, c)), device)?
    } else {
        return Err(Error::InvalidValue {
            what: "black box",
            value: path.display().to_string(),
            reason: "not a model file: expected the authors' .safetensors GCN, a .bpk \
                     checkpoint of ours (with its .json beside it) or a run directory"
                .into(),
        });
    };
    black_box_for(model, kernel, device)
}

/// The checkpoint file of a policy given as a file or as a run directory (`DIR/policy.bpk`, or
/// `DIR/policy-del-only.bpk` for the deletion-only method).
pub fn policy_path(path: impl AsRef<Path>, method: Method) -> PathBuf {
    let path = path.as_ref();
    if path.is_dir() {
        let name = match method {
            Method::InductiveDelOnly => "policy-del-only.bpk",
            _ => "policy.bpk",
        };
        path.join(name)
    } else {
        path.to_path_buf()
    }
}

/// Loads a trained policy for `data` through `black_box` (see [`load_policy`]).
pub fn load_trained_policy(
    path: impl AsRef<Path>,
    method: Method,
    data: &Dataset,
    black_box: &dyn BlackBox,
    device: &Device,
) -> Result<(Policy, PolicyMeta)> {
    let path = policy_path(path, method);
    let d = data.graph.features().dim();
    Ok(load_policy(&path, d, black_box.num_classes(), device)?)
}

/// Builds the explainer of `method`.
///
/// * `inductive`, `inductive-del-only`: `policy` must hold the trained network (its
///   configuration, from the checkpoint, gives the environment unless `config` is given);
/// * `transductive`: trains per target with `config`;
/// * `untrained`: a fresh network initialised from `config`'s seed.
///
/// `config` is the InduCE configuration (environment, kernel, episodes, seed) of the run.
pub fn explainer<'a>(
    method: Method,
    data: &Dataset,
    black_box: &'a dyn BlackBox,
    policy: Option<&Policy>,
    config: &InduceConfig,
    device: &Device,
) -> Result<Box<dyn Explainer + 'a>> {
    let mut config = config.clone();
    if let Some(mode) = method.edit_mode() {
        config.env.mode = mode;
    }
    let d = data.graph.features().dim();
    Ok(match method {
        Method::Transductive => Box::new(TransductiveExplainer::new(
            method.name(),
            black_box,
            config,
            device,
        )),
        Method::Untrained => {
            let p = config
                .policy_config(d, black_box.num_classes())
                .init(device);
            Box::new(
                InduceExplainer::new(method.name(), &p, black_box, config.env.clone(), device)
                    .with_kernel(config.kernel),
            )
        }
        Method::Inductive | Method::InductiveDelOnly => {
            let p = policy.ok_or_else(|| Error::InvalidValue {
                what: "method",
                value: method.name().into(),
                reason: "needs a trained policy (--policy FILE or run directory; `induce train` \
                         makes one)"
                    .into(),
            })?;
            Box::new(
                InduceExplainer::new(method.name(), p, black_box, config.env.clone(), device)
                    .with_kernel(config.kernel),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_round_trip() {
        for m in Method::ALL {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
            assert_eq!(format!("induce-{m}").parse::<Method>().unwrap(), m);
        }
        assert_eq!(
            "untrained-policy".parse::<Method>().unwrap(),
            Method::Untrained
        );
        let e = "cf-gnn".parse::<Method>().unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid method `cf-gnn`: expected one of inductive, transductive, \
             inductive-del-only, untrained"
        );
    }

    #[test]
    fn presets_follow_the_paper() {
        for (name, p, m) in [
            ("ba-shapes", Preset::BaShapes, 80),
            ("syn1", Preset::BaShapes, 80),
            ("tree-grid", Preset::Trees, 500),
            ("syn5", Preset::Trees, 500),
            ("cora", Preset::Real, 80),
        ] {
            assert_eq!(Preset::for_dataset(name), p);
            assert_eq!(p.inductive(7).episodes, m);
            assert_eq!((p.inductive(7).gamma, p.transductive(7).gamma), (0.4, 0.6));
            assert_eq!(p.transductive(7).seed, 7);
        }
    }
}
