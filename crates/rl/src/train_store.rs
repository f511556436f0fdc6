//! The checkpoint of an inductive training run that survives being killed
//! ([`crate::induce::train_inductive_checkpointed`]): the host kernel's parameters, Adam's
//! moments and the number of finished epochs, written atomically after every epoch.

use induce_models::policy::host::HostPolicy;
use induce_models::policy::host::adam::HostAdam;
use serde::{Deserialize, Serialize};

use crate::config::InduceConfig;
use crate::error::{Result, RlError};

/// What a training checkpoint holds.
#[derive(Serialize, Deserialize)]
pub(crate) struct TrainState {
    config: InduceConfig,
    targets: Vec<u32>,
    /// Epochs finished.
    pub(crate) epochs: usize,
    pub(crate) params: Vec<f32>,
    pub(crate) adam: HostAdam,
}

/// Where and for what a training run checkpoints itself.
pub(crate) struct TrainStore<'a> {
    pub(crate) path: &'a std::path::Path,
    pub(crate) config: &'a InduceConfig,
    pub(crate) targets: Vec<u32>,
}

impl TrainStore<'_> {
    fn bad(&self, message: String) -> RlError {
        RlError::Model(induce_models::ModelError::checkpoint(self.path, message))
    }

    /// The saved state, if any (of this very run, else an error).
    pub(crate) fn load(&self, num_params: usize) -> Result<Option<TrainState>> {
        let bytes = match std::fs::read(self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(RlError::Model(induce_models::ModelError::Io {
                    path: self.path.to_path_buf(),
                    source: e,
                }));
            }
        };
        let s: TrainState = serde_json::from_slice(&bytes)
            .map_err(|e| self.bad(format!("not a training checkpoint: {e}")))?;
        let mut mine = self.config.clone();
        let mut theirs = s.config.clone();
        // Inference-only settings do not change training.
        (
            mine.minimise,
            mine.inference.samples,
            mine.inference.temperature,
        ) = (false, 0, 1.0);
        (
            theirs.minimise,
            theirs.inference.samples,
            theirs.inference.temperature,
        ) = (false, 0, 1.0);
        if mine != theirs || s.targets != self.targets {
            return Err(self.bad(
                "it belongs to a training run with another configuration or other targets; \
                 remove it to start over"
                    .into(),
            ));
        }
        if s.params.len() != num_params || s.epochs > self.config.training_passes() {
            return Err(self.bad(format!(
                "{} parameters after {} epochs, expected {num_params} and at most {}",
                s.params.len(),
                s.epochs,
                self.config.training_passes()
            )));
        }
        Ok(Some(s))
    }

    pub(crate) fn save(&self, epochs: usize, policy: &HostPolicy, adam: &HostAdam) -> Result<()> {
        let s = TrainState {
            config: self.config.clone(),
            targets: self.targets.clone(),
            epochs,
            params: policy.params.clone(),
            adam: adam.clone(),
        };
        let bytes = serde_json::to_vec(&s).map_err(|e| self.bad(e.to_string()))?;
        Ok(induce_models::io::checkpoint::atomic_write(
            self.path, &bytes,
        )?)
    }
}
