//! The paper's black-box GCN (from CF-GNNExplainer's `GCNSynthetic`), in all its forms.
//!
//! * here: the Burn module ([`Gcn`], [`GcnConfig`], [`GraphConv`]), the reference every other
//!   form is pinned to by tests;
//! * `black_box.rs`: the module as a [`BlackBox`](crate::BlackBox) ([`GcnBlackBox`]) and as an
//!   [`EdgeWeighted`](crate::EdgeWeighted) model, and [`gcn_black_box`], the choice of kernel;
//! * [`crate::black_box::batched`]: many edited copies of one graph at once on a device (batched
//!   verdicts, the fast path of [`BlackBox::batched`](crate::BlackBox::batched));
//! * [`host`]: the hand-written CPU copy ([`HostGcn`](host::HostGcn)), its incremental
//!   evaluation and its gradient with respect to edge weights;
//! * [`train`]: full-batch training, as in the paper.
//!
//! Saving and loading it: [`crate::io::checkpoint`]; the authors' weights:
//! [`crate::io::reference`].

mod black_box;
pub mod host;
pub mod train;

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::activation::{log_softmax, relu};
use burn::tensor::{Device, Tensor};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::init::{uniform1, uniform2};
use crate::kernels::tensors::{DegreeGradient, GraphTensors, WeightedEdges, dense, linear};

pub use black_box::{GcnBlackBox, gcn_black_box};

/// One graph convolution `H' = Â (H W) + b` with `W` stored `[in, out]` (the reference layout).
#[derive(Module, Debug)]
pub struct GraphConv {
    /// Weight, shape `[in, out]`.
    pub weight: Param<Tensor<2>>,
    /// Bias, shape `[out]`.
    pub bias: Param<Tensor<1>>,
}

impl GraphConv {
    /// Sparse forward: `Â (X W) + b`, the aggregation a CSR segment reduction
    /// ([`GraphTensors::propagate`]).
    ///
    /// # Shapes
    /// - x: `[n, in]`
    /// - output: `[n, out]`
    pub fn forward(&self, x: Tensor<2>, g: &GraphTensors) -> Tensor<2> {
        let h = dense(x, self.weight.val());
        g.propagate(h) + self.bias.val().unsqueeze_dim(0)
    }

    /// The same convolution given `Â X` instead of `X`: `(Â X) W + b = Â (X W) + b`. For
    /// constant input features `Â X` is computed once ([`GraphTensors::propagate`]) and every
    /// later pass skips this layer's sparse product and its backward.
    ///
    /// # Shapes
    /// - ax: `[n, in]`
    /// - output: `[n, out]`
    pub fn forward_propagated(&self, ax: Tensor<2>) -> Tensor<2> {
        dense(ax, self.weight.val()) + self.bias.val().unsqueeze_dim(0)
    }
}

/// Configuration of the [`Gcn`] black box. Defaults are the paper's (CF-GNNExplainer's) model.
#[derive(Config, Debug)]
pub struct GcnConfig {
    /// Node feature dimension `d`.
    pub input_dim: usize,
    /// Number of classes `C`.
    pub num_classes: usize,
    /// Width of each of the three graph convolutions.
    #[config(default = 20)]
    pub hidden: usize,
    /// Seed of the (host-side) parameter initialisation (`induce_graph::DEFAULT_SEED`).
    #[config(default = 42)]
    pub init_seed: u64,
}

/// Number of graph convolutions of a [`Gcn`]: its output at a node depends on the 3-hop
/// neighbourhood and, through the normalisation, on the degrees of those nodes
/// ([`BlackBox::message_passing_layers`](crate::BlackBox::message_passing_layers)).
pub const GCN_LAYERS: u32 = 3;

/// Three graph convolutions `d → 20 → 20 → 20` (ReLU after the first two), the three outputs
/// concatenated (`60`) → `Linear(60 → C)` → `log_softmax`.
///
/// `Â = D̃^{-1/2}(A + I)D̃^{-1/2}` is recomputed for whatever graph is passed, through an edge
/// list: no `n × n` matrix is ever built.
///
/// ```
/// use induce_models::{GcnConfig, GraphTensors, device::default_device};
/// use burn::tensor::Tensor;
/// let dev = default_device().unwrap();
/// let gcn = GcnConfig::new(10, 4).init(&dev);
/// //  0 ─ 1 ─ 2
/// let g = GraphTensors::new(3, &[(0, 1), (1, 2)], &dev).unwrap();
/// let out = gcn.forward(Tensor::ones([3, 10], &dev), &g);
/// assert_eq!(out.dims(), [3, 4]);
/// ```
#[derive(Module, Debug)]
pub struct Gcn {
    /// First convolution, `[d, hidden]`.
    pub gc1: GraphConv,
    /// Second convolution, `[hidden, hidden]`.
    pub gc2: GraphConv,
    /// Third convolution, `[hidden, hidden]`.
    pub gc3: GraphConv,
    /// Classifier over the concatenated layer outputs, `[3 hidden, C]`.
    pub lin: Linear,
}

impl GcnConfig {
    /// The number of parameters of the GCN this config builds, `d·h + h + 2(h·h + h) + 3h·c +
    /// c` (`None` when it overflows `u64`): check it before [`GcnConfig::init`] allocates them.
    ///
    /// ```
    /// // The paper's syn1 GCN: 10 features, hidden 20, 4 classes.
    /// let c = induce_models::GcnConfig::new(10, 4).with_hidden(20);
    /// assert_eq!(c.num_params(), Some(200 + 20 + 2 * 420 + 240 + 4));
    /// ```
    pub fn num_params(&self) -> Option<u64> {
        let (d, c, h) = (
            self.input_dim as u64,
            self.num_classes as u64,
            self.hidden as u64,
        );
        let hh = h.checked_mul(h)?.checked_add(h)?;
        d.checked_mul(h)?
            .checked_add(h)?
            .checked_add(hh.checked_mul(2)?)?
            .checked_add(h.checked_mul(3)?.checked_mul(c)?)?
            .checked_add(c)
    }

    /// Initialises the weights like the reference (`U(±1/sqrt(out))` for the convolutions,
    /// PyTorch's `nn.Linear` default for the classifier), from a host RNG seeded with
    /// [`GcnConfig::init_seed`].
    pub fn init(&self, device: &Device) -> Gcn {
        let mut rng = StdRng::seed_from_u64(self.init_seed);
        let h = self.hidden;
        let conv = |rng: &mut StdRng, i: usize, o: usize| {
            let b = 1.0 / (o as f32).sqrt();
            GraphConv {
                weight: uniform2(rng, i, o, b, device),
                bias: uniform1(rng, o, b, device),
            }
        };
        let gc1 = conv(&mut rng, self.input_dim, h);
        let gc2 = conv(&mut rng, h, h);
        let gc3 = conv(&mut rng, h, h);
        let b = 1.0 / ((3 * h) as f32).sqrt();
        let lin = Linear {
            weight: uniform2(&mut rng, 3 * h, self.num_classes, b, device),
            bias: Some(uniform1(&mut rng, self.num_classes, b, device)),
        };
        Gcn { gc1, gc2, gc3, lin }
    }
}

impl Gcn {
    /// Class log-probabilities of every node.
    ///
    /// # Shapes
    /// - x: `[n, d]`
    /// - output: `[n, C]` (log-softmax over classes)
    pub fn forward(&self, x: Tensor<2>, g: &GraphTensors) -> Tensor<2> {
        self.classify(self.embeddings(x, g))
    }

    /// The node embeddings the classifier reads: the three convolutions' outputs concatenated
    /// (what PGExplainer builds its edge features from).
    ///
    /// # Shapes
    /// - x: `[n, d]`
    /// - output: `[n, 3 hidden]`
    pub fn embeddings(&self, x: Tensor<2>, g: &GraphTensors) -> Tensor<2> {
        self.embeddings_after(relu(self.gc1.forward(x, g)), g)
    }

    /// Class log-probabilities given `Â X` (the input features propagated once, see
    /// [`GraphConv::forward_propagated`]): the same numbers as [`Gcn::forward`] up to float
    /// rounding, one sparse product less per pass. Full-batch training uses it.
    ///
    /// # Shapes
    /// - ax: `[n, d]`
    /// - output: `[n, C]`
    pub fn forward_propagated(&self, ax: Tensor<2>, g: &GraphTensors) -> Tensor<2> {
        let x1 = relu(self.gc1.forward_propagated(ax));
        self.classify(self.embeddings_after(x1, g))
    }

    /// Layers 2 and 3 from layer 1's activations; the three outputs concatenated.
    fn embeddings_after(&self, x1: Tensor<2>, g: &GraphTensors) -> Tensor<2> {
        let x2 = relu(self.gc2.forward(x1.clone(), g));
        let x3 = self.gc3.forward(x2.clone(), g);
        Tensor::cat(vec![x1, x2, x3], 1)
    }

    /// Class log-probabilities from [`Gcn::embeddings`].
    ///
    /// # Shapes
    /// - embeddings: `[n, 3 hidden]`
    /// - output: `[n, C]`
    pub fn classify(&self, embeddings: Tensor<2>) -> Tensor<2> {
        log_softmax(linear(&self.lin, embeddings), 1)
    }

    /// Class log-probabilities with a weight in `[0, 1]` on every undirected edge, applied in
    /// every layer: `Ã = W ⊙ A + I`, normalised with the weighted degrees
    /// (`D̃^{-1/2} Ã D̃^{-1/2}`), gradients flowing through the weights and, with
    /// [`DegreeGradient::Through`], through the degrees of the normalisation.
    /// Weight 1 everywhere is [`Gcn::forward`]; weight 0 removes the edge exactly. This is the
    /// differentiable relaxation that mask-based explainers (CF-GNNExplainer, CF², PGExplainer)
    /// optimise.
    ///
    /// # Shapes
    /// - x: `[n, d]`
    /// - weights: `[m]`, one per edge of `edges`
    /// - output: `[n, C]`
    pub fn forward_weighted(
        &self,
        x: Tensor<2>,
        edges: &WeightedEdges,
        weights: Tensor<1>,
        degree_gradient: DegreeGradient,
    ) -> Tensor<2> {
        self.forward(x, &edges.with_weights(weights, degree_gradient))
    }

    /// Feature dimension the model expects.
    pub fn input_dim(&self) -> usize {
        self.gc1.weight.dims()[0]
    }

    /// Number of classes the model predicts.
    pub fn num_classes(&self) -> usize {
        self.lin.weight.dims()[1]
    }

    /// Width of the convolutions.
    pub fn hidden(&self) -> usize {
        self.gc1.weight.dims()[1]
    }

    /// Refuses a GCN with no hidden unit or no class (built by hand: [`crate::train_gcn`] and
    /// the checkpoint loaders refuse them): a typed error on every kernel, not a panic inside
    /// the tensor library.
    pub fn check_widths(&self) -> crate::Result<()> {
        let (hidden, classes) = (self.hidden(), self.num_classes());
        if hidden == 0 || classes == 0 {
            return Err(crate::ModelError::InvalidInput(format!(
                "a GCN with hidden width {hidden} and {classes} classes cannot classify (each \
                 must be at least 1)"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::tensors::{matrix, to_vec};
    use crate::testing::test_device;
    use burn::tensor::TensorData;

    fn set2(p: &mut Param<Tensor<2>>, v: &[f32], r: usize, c: usize, d: &Device) {
        *p = Param::from_tensor(Tensor::from_data(TensorData::new(v.to_vec(), [r, c]), d));
    }
    fn set1(p: &mut Param<Tensor<1>>, v: &[f32], d: &Device) {
        *p = Param::from_tensor(Tensor::from_data(TensorData::new(v.to_vec(), [v.len()]), d));
    }

    /// Dense f64 reference: Â (H W) + b with Â = D^-1/2 (A + I) D^-1/2, written independently of
    /// the sparse kernels.
    fn dense_conv(a: &[[f64; 3]; 3], h: &[Vec<f64>], w: &[Vec<f64>], b: &[f64]) -> Vec<Vec<f64>> {
        let n = 3;
        let mut at = *a;
        for (i, row) in at.iter_mut().enumerate() {
            row[i] += 1.0;
        }
        let deg: Vec<f64> = (0..n).map(|j| (0..n).map(|i| at[i][j]).sum()).collect();
        let hw: Vec<Vec<f64>> = h
            .iter()
            .map(|r| {
                (0..w[0].len())
                    .map(|o| r.iter().zip(w).map(|(x, wr)| x * wr[o]).sum())
                    .collect()
            })
            .collect();
        (0..n)
            .map(|i| {
                (0..b.len())
                    .map(|o| {
                        b[o] + (0..n)
                            .map(|j| at[i][j] / (deg[i] * deg[j]).sqrt() * hw[j][o])
                            .sum::<f64>()
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn graph_conv_matches_dense_reference() {
        let d = test_device().unwrap();
        // 0 ─ 1 ─ 2
        let a = [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]];
        let w = [0.1f32, -0.2, 0.3, 0.4, -0.5, 0.6];
        let b = [0.05f32, -0.05];
        let mut conv = GcnConfig::new(3, 2).with_hidden(2).init(&d).gc1;
        set2(&mut conv.weight, &w, 3, 2, &d);
        set1(&mut conv.bias, &b, &d);
        let g = GraphTensors::new(3, &[(0, 1), (1, 2)], &d).unwrap();
        let x3 = [1.0f32, 2.0, -1.0, 0.5, 3.0, -2.0, 0.0, 1.0, 1.0];
        let out = to_vec(conv.forward(matrix(&x3, 3, 3, &d), &g));
        let h: Vec<Vec<f64>> = x3
            .chunks(3)
            .map(|r| r.iter().map(|&v| v as f64).collect())
            .collect();
        let wm: Vec<Vec<f64>> = w
            .chunks(2)
            .map(|r| r.iter().map(|&v| v as f64).collect())
            .collect();
        let bv: Vec<f64> = b.iter().map(|&v| v as f64).collect();
        let want = dense_conv(&a, &h, &wm, &bv);
        for i in 0..3 {
            for o in 0..2 {
                let tol = crate::testing::float_tolerance(1e-6) as f64;
                assert!(
                    (out[i * 2 + o] as f64 - want[i][o]).abs() < tol,
                    "[{i},{o}]: {} vs {}",
                    out[i * 2 + o],
                    want[i][o]
                );
            }
        }
        // Hand check of one entry: node 0 has d̃ = 2, node 1 d̃ = 3.
        // (HW)_0 = [1*.1+2*.3-1*-.5, 1*-.2+2*.4-1*.6] = [1.2, 0.0]; (HW)_1 = [.05+.9+1.0, -.1+1.2-1.2]
        let hw0 = [1.2f64, 0.0];
        let hw1 = [1.95f64, -0.1];
        let e00 = 0.05 + hw0[0] / 2.0 + hw1[0] / (6.0f64).sqrt();
        assert!((out[0] as f64 - e00).abs() < crate::testing::float_tolerance(1e-6) as f64);
    }

    #[test]
    fn zero_weight_removes_an_edge_and_gradients_reach_the_weights() {
        let d = test_device().unwrap();
        let m = GcnConfig::new(2, 3).with_init_seed(5).init(&d);
        let x = [0.3f32, -1.0, 0.5, 0.2, 1.5, 0.0, -0.4, 0.9, 0.1, 0.1];
        // 0 ─ 1 ─ 2 ─ 3, 1 ─ 4; drop (2, 3) by weight 0.
        let edges = [(0, 1), (1, 2), (2, 3), (1, 4)];
        let without = [(0, 1), (1, 2), (1, 4)];
        let g = GraphTensors::new(5, &without, &d).unwrap();
        let want = to_vec(m.forward(matrix(&x, 5, 2, &d), &g));
        let e = WeightedEdges::new(5, &edges, &d).unwrap();
        let w = Tensor::from_data(TensorData::new(vec![1.0f32, 1.0, 0.0, 1.0], [4]), &d);
        let got = to_vec(m.forward_weighted(matrix(&x, 5, 2, &d), &e, w, DegreeGradient::Through));
        for (a, b) in got.iter().zip(&want) {
            assert!(
                (a - b).abs() < crate::testing::float_tolerance(1e-5),
                "{got:?} vs {want:?}"
            );
        }
        // d log p(node 0, class 0) / d w: every edge within 3 hops of node 0 gets a gradient.
        let ad = d.clone().autodiff();
        let m = m.to_device(&ad);
        let e = WeightedEdges::new(5, &edges, &ad).unwrap();
        let mut by_mode = Vec::new();
        for degree_gradient in [DegreeGradient::Through, DegreeGradient::Detached] {
            let w =
                Tensor::<1>::from_data(TensorData::new(vec![0.7f32; 4], [4]), &ad).require_grad();
            let out = m.forward_weighted(matrix(&x, 5, 2, &ad), &e, w.clone(), degree_gradient);
            let grads = out.slice([0..1, 0..1]).sum().backward();
            let gw = to_vec(w.grad(&grads).unwrap().unsqueeze_dim(1));
            assert!(gw.iter().all(|g| g.abs() > 1e-7 && g.is_finite()), "{gw:?}");
            by_mode.push(gw);
        }
        // Detaching the degrees changes the gradient (not the value).
        assert_ne!(by_mode[0], by_mode[1]);
    }

    #[test]
    fn forward_is_log_softmax_and_dims_are_reported() {
        let d = test_device().unwrap();
        let m = GcnConfig::new(4, 3).init(&d);
        assert_eq!((m.input_dim(), m.num_classes(), m.hidden()), (4, 3, 20));
        let g = GraphTensors::new(5, &[(0, 1), (1, 2), (3, 4)], &d).unwrap();
        let out = to_vec(m.forward(Tensor::ones([5, 4], &d), &g));
        for r in out.chunks(3) {
            let s: f32 = r.iter().map(|v| v.exp()).sum();
            assert!((s - 1.0).abs() < 1e-5);
        }
        // Same seed, same weights.
        let m2 = GcnConfig::new(4, 3).init(&d);
        assert_eq!(to_vec(m.lin.weight.val()), to_vec(m2.lin.weight.val()));
    }

    /// A GCN built by hand with no hidden unit or no class initialises (an empty fan-in's
    /// bound is 0, as in PyTorch) and is a typed error when asked to classify.
    #[test]
    fn an_empty_gcn_is_an_error_not_a_panic() {
        let d = test_device().unwrap();
        let x = induce_graph::Features::new(2, 3, vec![1.0; 6]).unwrap();
        for (hidden, classes) in [(0, 2), (4, 0), (0, 0)] {
            let m = GcnConfig::new(3, classes).with_hidden(hidden).init(&d);
            let host = crate::HostGcn::from_gcn(&m).map(|_| ());
            let bb = crate::GcnBlackBox::new(m, &d);
            let r = crate::BlackBox::log_probs(&bb, &x, &[(0, 1)]).map(|_| ());
            for r in [r, host] {
                assert!(
                    matches!(&r, Err(crate::ModelError::InvalidInput(m)) if m.contains("cannot classify")),
                    "hidden {hidden}, classes {classes}: {r:?}"
                );
            }
        }
        // The bias behind an empty fan-in is zero, the others are drawn as before.
        let m = GcnConfig::new(3, 2).with_hidden(0).init(&d);
        let b = m
            .lin
            .bias
            .as_ref()
            .unwrap()
            .val()
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        assert_eq!(b, vec![0.0, 0.0]);
    }
}
