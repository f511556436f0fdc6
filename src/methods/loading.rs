//! Loading black boxes (the paper's GCN, checkpoints, PyG models) and trained policies from files.

use std::fmt;
use std::path::{Path, PathBuf};

use burn::tensor::Device;
use induce_graph::Dataset;
use induce_models::io::checkpoint::{check_dims, load_gcn};
use induce_models::io::reference::load_reference_gcn;
use induce_models::pyg::PygNet;
use induce_models::{BlackBox, Gcn, Policy};
use induce_rl::{EditMode, Kernel, PolicyMeta, load_policy};

use super::Method;
use crate::error::{Error, Result};

/// A black box loaded from a file, in both kernels' forms.
pub struct LoadedBlackBox {
    /// The Burn model, for the paper's GCN (`None` for a PyG model: it is its own
    /// differentiable form, [`BlackBox::edge_weighted`]).
    pub model: Option<Gcn>,
    /// What the explainers call: the host copy ([`HostGcn`](induce_models::gcn::host::HostGcn)) for the host kernel, the Burn
    /// model on the device otherwise.
    pub black_box: Box<dyn BlackBox>,
}

impl fmt::Debug for LoadedBlackBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedBlackBox").finish_non_exhaustive()
    }
}

/// Wraps a GCN as the black box the `kernel` uses (same function, pinned by tests).
pub fn black_box_for(model: Gcn, kernel: Kernel, device: &Device) -> Result<LoadedBlackBox> {
    let black_box = induce_models::gcn_black_box(&model, kernel, device)?;
    Ok(LoadedBlackBox {
        model: Some(model),
        black_box,
    })
}

/// Loads the black-box GCN for `data` from `path`: the authors' SafeTensors weights
/// (`*.safetensors`, e.g. `shared/reference/syn1_gcn.safetensors`) or a checkpoint of ours
/// (`*.bpk` with its `.json`, or a run directory holding `black_box.bpk`). A model whose input
/// width differs from the data's, or that has fewer classes than the data's labels use, is a
/// typed error naming both numbers.
pub fn load_black_box(
    path: impl AsRef<Path>,
    data: &Dataset,
    kernel: Kernel,
    device: &Device,
) -> Result<LoadedBlackBox> {
    load_black_box_with_arch(path, None, data, kernel, device)
}

/// [`load_black_box`], or, with an architecture file `arch`, a PyTorch Geometric model: its
/// `state_dict` saved as SafeTensors at `path` and read through `arch`
/// ([`induce_models::pyg::PygNet`]; the ten PyG families of docs/FORMATS.md). The
/// PyG model runs on the host (whatever `kernel` says); the gradient-based baselines
/// differentiate its Burn form on `device`. Dimension checks as for [`load_black_box`].
pub fn load_black_box_with_arch(
    path: impl AsRef<Path>,
    arch: Option<&Path>,
    data: &Dataset,
    kernel: Kernel,
    device: &Device,
) -> Result<LoadedBlackBox> {
    let path = path.as_ref();
    let (d, c) = (data.graph.features().dim(), data.graph.num_classes());
    if let Some(arch) = arch {
        if path.extension().is_none_or(|e| e != "safetensors") {
            return Err(Error::InvalidValue {
                what: "black box",
                value: path.display().to_string(),
                reason: "--arch describes a PyG state_dict saved as .safetensors \
                         (safetensors.torch.save_file(model.state_dict(), ...))"
                    .into(),
            });
        }
        let net = PygNet::load(path, arch)?;
        check_dims(path, "node feature dimension", net.input_dim(), d)?;
        // The data's labels must be classes of the model; a model may predict classes the
        // labels never use (a subgraph, unlabelled data given all-zero labels).
        if net.num_classes() < c {
            check_dims(path, "number of classes", net.num_classes(), c)?;
        }
        return Ok(LoadedBlackBox {
            model: None,
            black_box: Box::new(net),
        });
    }
    let path = if path.is_dir() {
        path.join("black_box.bpk")
    } else {
        path.to_path_buf()
    };
    let model = if path.extension().is_some_and(|e| e == "safetensors") {
        if let Some(key) = pyg_key(&path) {
            return Err(Error::InvalidValue {
                what: "black box",
                value: path.display().to_string(),
                reason: format!(
                    "holds `{key}`, a PyTorch Geometric layer's tensor, not the paper's GCN: \
                     describe the model with --arch arch.json (docs/FORMATS.md)"
                ),
            });
        }
        let m = load_reference_gcn(&path, device)?;
        check_dims(&path, "node feature dimension", m.input_dim(), d)?;
        if m.num_classes() < c {
            check_dims(&path, "number of classes", m.num_classes(), c)?;
        }
        m
    } else if path.extension().is_some_and(|e| e == "bpk") || !path.exists() {
        // Checked as the SafeTensors GCN above: the input width exactly, the classes at least.
        let m = load_gcn(&path, None, device)?;
        check_dims(&path, "input feature dimension", m.input_dim(), d)?;
        if m.num_classes() < c {
            check_dims(&path, "number of classes", m.num_classes(), c)?;
        }
        m
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

/// A key of a SafeTensors file that only a PyG layer has (`lin_l.weight`, `att_src`, `nn.0.weight`,
/// `lin.weight` without the paper's `gc1.weight`), if any: such a file needs `--arch`.
fn pyg_key(path: &Path) -> Option<String> {
    let shapes = induce_models::io::reference::safetensors_shapes(path).ok()?;
    // The paper's GCN, also under a prefix (`model.gc1.weight`: the loader names the prefix).
    if shapes
        .iter()
        .any(|(k, _)| k == "gc1.weight" || k.ends_with(".gc1.weight"))
    {
        return None;
    }
    shapes.into_iter().map(|(k, _)| k).find(|k| {
        [".lin_l.weight", ".att_src", ".nn.0.weight", ".lin.weight"]
            .iter()
            .any(|s| k.ends_with(s))
    })
}

/// The policy file of a policy trained for `mode`: `policy-del-only.bpk` for deletions only,
/// `policy.bpk` otherwise (with its `.json` beside it).
///
/// ```
/// use induce::methods::policy_file_name;
/// use induce::rl::EditMode;
/// assert_eq!(policy_file_name(EditMode::DeleteOnly), "policy-del-only.bpk");
/// assert_eq!(policy_file_name(EditMode::Both), "policy.bpk");
/// ```
pub fn policy_file_name(mode: EditMode) -> &'static str {
    match mode {
        EditMode::DeleteOnly => "policy-del-only.bpk",
        _ => "policy.bpk",
    }
}

/// The checkpoint file of a policy given as a file or as a run directory (`DIR/policy.bpk`, or
/// `DIR/policy-del-only.bpk` for the deletion-only method).
pub fn policy_path(path: impl AsRef<Path>, method: Method) -> PathBuf {
    let path = path.as_ref();
    if path.is_dir() {
        let mode = method.edit_mode().unwrap_or_default();
        path.join(policy_file_name(mode))
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
