//! Saving and loading trained policies: the Burn record (burnpack) and [`PolicyMeta`] beside it.

use burn::tensor::Device;
use induce_models::Policy;
use serde::{Deserialize, Serialize};

use crate::config::InduceConfig;
use crate::env::state_dim;
use crate::error::{Result, RlError};

/// What is saved beside a policy checkpoint (`policy.json`): the InduCE config and the data
/// layout the policy was trained for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyMeta {
    /// Node feature dimension of the graph the policy was trained on.
    pub feature_dim: usize,
    /// Number of classes of the black box it was trained with.
    pub num_classes: usize,
    /// The training configuration.
    pub induce: InduceConfig,
}

/// Saves a trained policy (`path`, burnpack) with its [`PolicyMeta`] beside it (`path.json`),
/// both atomically.
pub fn save_policy(
    policy: &Policy,
    meta: &PolicyMeta,
    path: impl AsRef<std::path::Path>,
) -> Result<()> {
    let path = path.as_ref();
    Ok(induce_models::io::checkpoint::save_module(
        policy, meta, path,
    )?)
}

/// Loads a policy saved by [`save_policy`] to explain a graph with `feature_dim` features through
/// a black box with `num_classes` classes (new nodes or a new graph with the same layout). A
/// policy trained for another layout is a typed
/// [`induce_models::ModelError::DimensionMismatch`] naming both numbers.
pub fn load_policy(
    path: impl AsRef<std::path::Path>,
    feature_dim: usize,
    num_classes: usize,
    device: &Device,
) -> Result<(Policy, PolicyMeta)> {
    let path = path.as_ref();
    use induce_models::io::checkpoint::{check_dims, load_config, load_record};
    let meta: PolicyMeta = load_config(path)?;
    check_dims(
        path,
        "node feature dimension",
        meta.feature_dim,
        feature_dim,
    )?;
    check_dims(path, "number of classes", meta.num_classes, num_classes)?;
    // Checked before the network is sized from the config: a corrupt width must not become
    // an allocation. The first GAT layer, the other layers and the MLP's middle layer alone
    // hold at least this many parameters.
    let c = &meta.induce;
    if c.network.hidden == 0 || c.network.gat_layers == 0 || c.network.mlp_hidden == 0 {
        return Err(RlError::Model(induce_models::ModelError::checkpoint(
            induce_models::io::checkpoint::config_path(path),
            format!(
                "bad config: hidden {}, gat_layers {}, mlp_hidden {} (each must be at least 1)",
                c.network.hidden, c.network.gat_layers, c.network.mlp_hidden
            ),
        )));
    }
    let (h, m) = (c.network.hidden as u64, c.network.mlp_hidden as u64);
    let lower = (state_dim(feature_dim, num_classes) as u64)
        .checked_mul(h)
        .and_then(|first| {
            let rest = (c.network.gat_layers as u64 - 1).checked_mul(h.checked_mul(h)?)?;
            first.checked_add(rest)?.checked_add(m.checked_mul(m)?)
        });
    induce_models::io::checkpoint::check_record_holds(
        path,
        lower,
        &format!(
            "hidden {}, gat_layers {}, mlp_hidden {}",
            c.network.hidden, c.network.gat_layers, c.network.mlp_hidden
        ),
    )?;
    let pcfg = meta.induce.policy_config(feature_dim, num_classes);
    Ok((load_record(pcfg.init(device), path)?, meta))
}
