//! Training the black-box GCN (full batch, as in the paper).

use std::time::Instant;

use burn::config::Config;
use burn::grad_clipping::GradientClippingConfig;
use burn::module::Module;
use burn::optim::decay::WeightDecayConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::Device;
use induce_graph::{Dataset, Graph};

use crate::black_box::{BlackBox, check_features};
use crate::error::{ModelError, Result};
use crate::gcn::{Gcn, GcnBlackBox, GcnConfig};
use crate::kernels::tensors::{Aggregation, GraphTensors, matrix};

/// Hyperparameters of black-box training; defaults are the paper's.
#[derive(Config, Debug)]
pub struct GcnTrainingConfig {
    /// The model to train.
    pub model: GcnConfig,
    /// Full-batch epochs.
    #[config(default = 1000)]
    pub epochs: usize,
    /// Adam learning rate.
    #[config(default = 0.001)]
    pub lr: f64,
    /// Adam L2 weight decay (added to the gradient, like PyTorch's `Adam(weight_decay=…)`).
    #[config(default = 0.001)]
    pub weight_decay: f32,
    /// Gradient-norm clip. Burn clips each parameter tensor's norm (PyTorch's
    /// `clip_grad_norm_` clips the global norm); at these sizes both rarely bind.
    #[config(default = 2.0)]
    pub clip_norm: f32,
    /// How the convolutions sum messages (not a paper setting: both give the same model up to
    /// float rounding; [`Aggregation::ScatterAdd`] is kept for side-by-side benchmarks).
    #[config(default = "Aggregation::Segment")]
    pub aggregation: Aggregation,
}

/// What training measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TrainReport {
    /// Accuracy on the training split, in `[0, 1]` (`None` for an empty split).
    pub train_accuracy: Option<f64>,
    /// Accuracy on the test split, in `[0, 1]` (`None` for an empty split).
    pub test_accuracy: Option<f64>,
    /// Training loss (mean NLL) after the last epoch.
    pub final_loss: f32,
    /// Epochs run.
    pub epochs: usize,
    /// Wall-clock training time.
    pub seconds: f64,
    /// Mean wall-clock time of one full-batch epoch (forward, backward, Adam step), without the
    /// setup and the final accuracy evaluation.
    #[serde(default)]
    pub epoch_seconds: f64,
    /// Wall-clock time of the first epoch, with the one-time propagation of the features
    /// (`Â X`) before it (on the GPU backends it also holds the kernels' compilation and
    /// autotuning).
    #[serde(default)]
    pub first_epoch_seconds: f64,
    /// Mean wall-clock time of the epochs after the first (`None` for a single epoch): the
    /// steady-state cost of an epoch.
    #[serde(default)]
    pub steady_epoch_seconds: Option<f64>,
}

/// The most parameters [`train_gcn`] builds a GCN with: 2^28, 1 GiB of f32 weights (4 GiB
/// with their gradients and Adam's two moments). A hidden width that asks for more is an
/// error naming it, not an allocation failure.
pub const MAX_TRAINED_PARAMS: u64 = 1 << 28;

/// Refuses a GCN config that is empty or larger than [`MAX_TRAINED_PARAMS`], naming its sizes.
fn check_config(dataset: &Dataset, config: &GcnConfig) -> Result<()> {
    let (d, h, c) = (config.input_dim, config.hidden, config.num_classes);
    if d == 0 {
        return Err(ModelError::InvalidInput(format!(
            "{} has no node features (dimension 0): the GCN needs at least one (give every \
             node a constant feature 1 if the graph has none)",
            dataset.name
        )));
    }
    if h == 0 {
        return Err(ModelError::InvalidInput(
            "the GCN's hidden width must be at least 1, got 0".into(),
        ));
    }
    if c == 0 {
        return Err(ModelError::InvalidInput(format!(
            "{} has no classes: the GCN needs at least one",
            dataset.name
        )));
    }
    let params = config.num_params();
    if params.is_none_or(|p| p > MAX_TRAINED_PARAMS) {
        let params = params.map_or("more than 2^64".into(), |p| p.to_string());
        return Err(ModelError::InvalidInput(format!(
            "hidden width {h} with {d} features and {c} classes gives a GCN of {params} \
             parameters, more than {MAX_TRAINED_PARAMS} (2^28): use a smaller hidden width"
        )));
    }
    Ok(())
}

impl GcnTrainingConfig {
    /// Checks the optimiser's settings, naming the one at fault: at least one epoch, a finite
    /// positive learning rate, a positive clipping norm, a finite non-negative weight decay
    /// ([`train_gcn`] calls it; a NaN rate would train a NaN model).
    ///
    /// ```
    /// use induce_models::{GcnConfig, GcnTrainingConfig};
    /// let c = GcnTrainingConfig::new(GcnConfig::new(10, 2));
    /// assert!(c.validate().is_ok());
    /// assert!(c.clone().with_lr(f64::NAN).validate().is_err());
    /// assert!(c.with_epochs(0).validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str, value: String, must: &str| {
            Err(ModelError::InvalidInput(format!(
                "GcnTrainingConfig.{what} = {value}: must be {must}"
            )))
        };
        if self.epochs == 0 {
            return bad("epochs", "0".into(), "at least 1");
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return bad("lr", self.lr.to_string(), "finite and positive");
        }
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0) {
            return bad(
                "weight_decay",
                self.weight_decay.to_string(),
                "finite and non-negative",
            );
        }
        if self.clip_norm.is_nan() || self.clip_norm <= 0.0 {
            return bad(
                "clip_norm",
                self.clip_norm.to_string(),
                "positive (infinite: no clipping)",
            );
        }
        Ok(())
    }
}

/// Checks that a dataset can be fed to a GCN with `config`'s dimensions.
fn check_dataset(dataset: &Dataset, config: &GcnConfig) -> Result<()> {
    check_config(dataset, config)?;
    check_features(dataset.graph.features(), config.input_dim)?;
    if let Some((i, &l)) = dataset
        .graph
        .labels()
        .iter()
        .enumerate()
        .find(|(_, l)| **l as usize >= config.num_classes)
    {
        return Err(ModelError::InvalidInput(format!(
            "node {i} of {} has label {l}, but the model has {} classes",
            dataset.name, config.num_classes
        )));
    }
    if dataset.split.train.is_empty() {
        return Err(ModelError::InvalidInput(format!(
            "{} has no training nodes",
            dataset.name
        )));
    }
    dataset.split.validate(dataset.graph.num_nodes())?;
    Ok(())
}

/// Trains a GCN on `dataset`'s training split, full batch, and reports train/test accuracy on the
/// whole graph. Deterministic for a given config on the CPU backends.
///
/// `device` is a plain device; training runs on its autodiff version and the returned model is in
/// inference mode on `device`.
pub fn train_gcn(
    dataset: &Dataset,
    config: &GcnTrainingConfig,
    device: &Device,
) -> Result<(Gcn, TrainReport)> {
    config.validate()?;
    check_dataset(dataset, &config.model)?;
    let start = Instant::now();
    let ad = device.clone().autodiff();
    let g = &dataset.graph;
    let n = g.num_nodes();
    let gt = GraphTensors::new(n, &g.edges(), &ad)?.with_aggregation(config.aggregation);
    let x = matrix(g.features().as_slice(), n, g.features().dim(), &ad);
    let picks = label_picks(dataset, config.model.num_classes);
    let picks = matrix(&picks, n, config.model.num_classes, &ad);
    let per_node = 1.0 / dataset.split.train.len() as f64;

    let mut model = config.model.init(&ad);
    let mut optim = AdamConfig::new()
        .with_weight_decay(Some(WeightDecayConfig::new(config.weight_decay)))
        .with_grad_clipping(Some(GradientClippingConfig::Norm(config.clip_norm)))
        .init();
    let mut final_loss = f32::NAN;
    let epochs_start = Instant::now();
    // The features are constant: propagate them once (Â X), so that the first convolution is a
    // dense product in every epoch.
    let ax = gt.propagate(x);
    let mut first_epoch = None;
    for epoch in 0..config.epochs {
        let logp = model.forward_propagated(ax.clone(), &gt);
        let loss = -(logp * picks.clone()).sum().mul_scalar(per_node);
        if epoch + 1 == config.epochs {
            final_loss = loss.clone().into_scalar::<f32>();
        }
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(config.lr, model, grads);
        if epoch == 0 {
            // Wait for the device (lazy GPU backends) before reading the clock.
            let _ = model.gc1.bias.val().into_data();
            first_epoch = Some(Instant::now());
        }
    }
    let _ = model.gc1.bias.val().into_data();
    let end = Instant::now();
    let epoch_seconds = (end - epochs_start).as_secs_f64() / config.epochs.max(1) as f64;
    let first_epoch_seconds = first_epoch.map_or(0.0, |t| (t - epochs_start).as_secs_f64());
    let steady_epoch_seconds = match first_epoch {
        Some(t) if config.epochs > 1 => Some((end - t).as_secs_f64() / (config.epochs - 1) as f64),
        _ => None,
    };
    let model = model.valid().to_device(device);
    let bb = GcnBlackBox::new(model.clone(), device);
    let (train_accuracy, test_accuracy) = split_accuracy(&bb, dataset)?;
    let report = TrainReport {
        train_accuracy,
        test_accuracy,
        final_loss,
        epochs: config.epochs,
        seconds: start.elapsed().as_secs_f64(),
        epoch_seconds,
        first_epoch_seconds,
        steady_epoch_seconds,
    };
    Ok((model, report))
}

/// The negative log-likelihood's picks, `[n, classes]` row-major: 1 at each training node's
/// label (a node listed twice counts twice), 0 elsewhere; the mean loss is then
/// `-(log_probs * picks).sum() / train.len()`.
///
/// Element-wise, so its backward pass is element-wise too, with the same gradients as
/// `log_probs.select(0, train).gather(1, y).mean()`, whose backward scatters into the `[n,
/// classes]` gradient: CubeCL's `select_assign` runs one GPU thread per column, each looping over
/// every training node (on the ogbn-arxiv-sized graph, 40 threads × 135,000 dependent
/// read-modify-writes per epoch).
///
/// ```text
/// train = [2, 0], labels = [1, 0, 2], 3 classes  ->  picks = [0 1 0]   node 0, label 1
///                                                            [0 0 0]   node 1, not trained
///                                                            [0 0 1]   node 2, label 2
/// ```
fn label_picks(dataset: &Dataset, classes: usize) -> Vec<f32> {
    let mut picks = vec![0f32; dataset.graph.num_nodes() * classes];
    for &u in &dataset.split.train {
        picks[u as usize * classes + dataset.graph.labels()[u as usize] as usize] += 1.0;
    }
    picks
}

/// Share of `nodes` whose predicted class (on the whole graph) equals their label; `None` for an
/// empty node list (there is no accuracy to report, rather than a misleading 0 %).
///
/// ```
/// use induce_graph::{Features, Graph};
/// let g = Graph::empty(Features::constant(3, 1, 1.0), vec![0, 1, 1]).unwrap();
/// assert_eq!(induce_models::gcn::train::accuracy(&[0, 1, 0], &g, &[0, 1, 2]), Some(2.0 / 3.0));
/// assert_eq!(induce_models::gcn::train::accuracy(&[0, 1, 0], &g, &[]), None);
/// ```
pub fn accuracy(pred: &[usize], graph: &Graph, nodes: &[u32]) -> Option<f64> {
    if nodes.is_empty() {
        return None;
    }
    let ok = nodes
        .iter()
        .filter(|&&u| pred[u as usize] == graph.labels()[u as usize] as usize);
    Some(ok.count() as f64 / nodes.len() as f64)
}

/// Train and test accuracy of any black box on a dataset, predicting on the whole graph (`None`
/// for an empty split).
pub fn split_accuracy(bb: &dyn BlackBox, dataset: &Dataset) -> Result<(Option<f64>, Option<f64>)> {
    let g = &dataset.graph;
    let pred = bb.log_probs(g.features(), &g.edges())?.predictions();
    Ok(split_accuracy_of(&pred, dataset))
}

/// [`split_accuracy`] from predictions already made on the whole graph (one class per node).
///
/// ```
/// use induce_graph::{Dataset, Features, Graph, Split};
/// use induce_models::gcn::train::split_accuracy_of;
/// let g = Graph::empty(Features::constant(3, 1, 1.0), vec![0, 1, 1]).unwrap();
/// let split = Split { train: vec![0, 1], valid: vec![], test: vec![2] };
/// let data = Dataset { name: "tiny".into(), graph: g, split, eval_targets: None,
///     notes: vec![] };
/// assert_eq!(split_accuracy_of(&[0, 0, 1], &data), (Some(0.5), Some(1.0)));
/// ```
pub fn split_accuracy_of(pred: &[usize], dataset: &Dataset) -> (Option<f64>, Option<f64>) {
    let g = &dataset.graph;
    (
        accuracy(pred, g, &dataset.split.train),
        accuracy(pred, g, &dataset.split.test),
    )
}

#[cfg(test)]
mod tests {
    use burn::tensor::{Int, Tensor, TensorData};
    use induce_graph::{Dataset, Features, Graph, Split};

    use super::label_picks;
    use crate::kernels::tensors::{indices, matrix, to_vec};
    use crate::testing::test_device;

    #[test]
    fn the_picked_loss_has_the_select_gather_gradient() {
        // 4 nodes, 3 classes; nodes 2 and 0 are trained (labels 2 and 1).
        let g = Graph::empty(Features::constant(4, 1, 1.0), vec![1, 0, 2, 0]).unwrap();
        let data = Dataset {
            name: "tiny".into(),
            graph: g,
            split: Split {
                train: vec![2, 0],
                valid: vec![],
                test: vec![1, 3],
            },
            eval_targets: None,
            notes: vec![],
        };
        let picks = label_picks(&data, 3);
        assert_eq!(
            picks,
            [0., 1., 0., 0., 0., 0., 0., 0., 1., 0., 0., 0.].map(|v| v as f32)
        );
        let ad = test_device().unwrap().autodiff();
        let logp: Vec<f32> = (0..12).map(|i| -0.1 - 0.37 * i as f32).collect();
        let grad_of = |picked: bool| {
            let x = matrix(&logp, 4, 3, &ad).require_grad();
            let loss = if picked {
                -(x.clone() * matrix(&picks, 4, 3, &ad))
                    .sum()
                    .mul_scalar(0.5)
            } else {
                let y = Tensor::<2, Int>::from_data(TensorData::new(vec![2i64, 1], [2, 1]), &ad);
                -x.clone()
                    .select(0, indices(&data.split.train, &ad))
                    .gather(1, y)
                    .mean()
            };
            let value = to_vec(loss.clone().reshape([1, 1]))[0];
            let grads = loss.backward();
            (value, to_vec(x.grad(&grads).unwrap()))
        };
        let (picked, gathered) = (grad_of(true), grad_of(false));
        // -(logp[0][1] + logp[2][2]) / 2 = (0.47 + 3.06) / 2
        assert!((picked.0 - 1.765).abs() < 1e-6, "{}", picked.0);
        assert!((picked.0 - gathered.0).abs() < 1e-6);
        assert_eq!(picked.1, gathered.1);
        assert_eq!(picked.1[1], -0.5);
        assert_eq!(picked.1[8], -0.5);
    }

    #[test]
    fn an_empty_or_oversized_gcn_is_refused_before_it_is_built() {
        let data = |dim| Dataset {
            name: "tiny".into(),
            graph: Graph::empty(Features::constant(3, dim, 1.0), vec![0, 1, 0]).unwrap(),
            split: Split {
                train: vec![0, 1],
                valid: vec![],
                test: vec![2],
            },
            eval_targets: None,
            notes: vec![],
        };
        let dev = test_device().unwrap();
        let train = |dim, hidden| {
            let model = crate::GcnConfig::new(dim, 2).with_hidden(hidden);
            let cfg = crate::GcnTrainingConfig::new(model).with_epochs(1);
            super::train_gcn(&data(dim), &cfg, &dev)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        assert!(train(2, 0).contains("hidden width must be at least 1, got 0"));
        assert!(train(0, 4).contains("tiny has no node features (dimension 0)"));
        // 2·10^8 + 10^8 + 2(10^16 + 10^8) + 6·10^8 + 2 parameters: refused, not allocated.
        let big = train(2, 100_000_000);
        assert!(
            big.contains("hidden width 100000000") && big.contains("2^28"),
            "{big}"
        );
        assert!(
            super::train_gcn(
                &data(2),
                &crate::GcnTrainingConfig::new(crate::GcnConfig::new(2, 2).with_hidden(4))
                    .with_epochs(1),
                &dev
            )
            .is_ok()
        );
    }
}
