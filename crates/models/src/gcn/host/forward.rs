//! The host GCN on a whole graph: every node's class log-probabilities from the features (or
//! from their projection `X W₁`), optionally on a sampled subgraph.

use std::borrow::Cow;

use induce_graph::Features;

use super::dense::{bias_relu, log_softmax_in_place, pad_matrix, padded};
use super::{HostGcn, Projected};
use crate::black_box::{BlackBox, LogProbs, check_features};
use crate::error::Result;
use crate::linalg::{Adjacency, matmul_acc};

impl HostGcn {
    /// Class log-probabilities of every node: exactly [`Gcn::forward`](crate::Gcn::forward)'s
    /// function, `log_softmax([x1 ‖ x2 ‖ x3] W_lin + b_lin)` with `x1 = relu(Â X W1 + b1)`,
    /// `x2 = relu(Â x1 W2 + b2)`, `x3 = Â x2 W3 + b3` (no ReLU on `x3`) and
    /// `Â = D̃^{-1/2}(A + I)D̃^{-1/2}` built from `edges` as [`Messages::new`] does (each listed
    /// pair counts once per endpoint in the degree, self loops added).
    ///
    /// Cost: `O(n · (d·w1 + w1·w2 + w2·w3 + (w1+w2+w3)·C) + E · (w1 + w2 + w3))`, a handful of
    /// `O(n · width)` allocations per call and no `n × n` matrix.
    ///
    /// # Shapes
    /// - x: `[n, d]` (`d` = [`BlackBox::input_dim`])
    /// - edges: `E` undirected pairs, local ids `< n`, no self loops
    /// - output: `[n, C]` (log-softmax over classes)
    ///
    /// Errors: the same as [`GcnBlackBox`](crate::GcnBlackBox)'s: a
    /// [`ModelError::DimensionMismatch`](crate::ModelError::DimensionMismatch) for a wrong
    /// feature dimension and a [`ModelError::InvalidInput`](crate::ModelError::InvalidInput) for
    /// an out-of-range endpoint or a self loop.
    ///
    /// [`Messages::new`]: crate::kernels::tensors::Messages::new
    pub fn forward(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
        self.forward_adj(x, edges, None)
    }

    /// [`HostGcn::forward`] on a SAMPLED subgraph whose node `v` has `hidden[v]` neighbours in
    /// the whole graph that the subgraph leaves out (e.g. a hub of a fan-out-capped
    /// neighbourhood). The GCN normalisation uses the whole-graph degrees, and each node's sum
    /// over its listed neighbours is scaled by `(listed + hidden) / listed`: for a uniform sample
    /// of neighbours this is an unbiased estimate of the whole-graph aggregation (the
    /// GraphSAGE-style estimator), and exact when nothing is hidden or when the hidden
    /// neighbours carry the same values as the listed ones.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`; hidden: `[n]`
    /// - output: `[n, num_classes]`
    pub fn forward_sampled(
        &self,
        x: &Features,
        edges: &[(u32, u32)],
        hidden: &[u32],
    ) -> Result<LogProbs> {
        self.forward_adj(x, edges, Some(hidden))
    }

    fn forward_adj(
        &self,
        x: &Features,
        edges: &[(u32, u32)],
        hidden: Option<&[u32]>,
    ) -> Result<LogProbs> {
        check_features(x, self.input_dim())?;
        let n = x.num_nodes();
        let adj = Adjacency::gcn(n, edges, hidden)?;
        let c1 = &self.convs[0];
        let x0: Cow<'_, [f32]> = if c1.k == c1.d_in {
            Cow::Borrowed(x.as_slice())
        } else {
            Cow::Owned(pad_matrix(x.as_slice(), n, c1.d_in, n, c1.k))
        };
        let mut tmp = Vec::new();
        let x1 = c1.forward(&x0, &adj, &mut tmp, true);
        self.after_first_layer(x1, &adj, n)
    }

    /// Layers 2 and 3, the concatenation and the output layer, from the first layer's output.
    fn after_first_layer(&self, x1: Vec<f32>, adj: &Adjacency, n: usize) -> Result<LogProbs> {
        let [_, c2, c3] = &self.convs;
        let mut tmp = Vec::new();
        let x2 = c2.forward(&x1, adj, &mut tmp, true);
        let x3 = c3.forward(&x2, adj, &mut tmp, false);
        // [x1 ‖ x2 ‖ x3] W = x1 W[rows of x1] + x2 W[rows of x2] + x3 W[rows of x3]
        let (c, mc) = (self.num_classes, padded(self.num_classes));
        let mut z = vec![0.0f32; n * mc];
        let mut row0 = 0;
        for (h, conv) in [&x1, &x2, &x3].into_iter().zip(&self.convs) {
            let w = &self.lin_weight[row0 * mc..(row0 + conv.m) * mc];
            matmul_acc(h, w, conv.m, mc, &mut z);
            row0 += conv.m;
        }
        let mut out = Vec::with_capacity(n * c);
        for row in z.chunks_exact_mut(mc.max(1)).take(n) {
            let row = &mut row[..c];
            for (v, &b) in row.iter_mut().zip(&self.lin_bias) {
                *v += b;
            }
            log_softmax_in_place(row);
            out.extend_from_slice(row);
        }
        LogProbs::new(n, c, out)
    }

    /// [`HostGcn::forward`] from the projected features `X W₁` ([`HostGcn::project`]): equal
    /// bit for bit to `forward(x, edges)` when the first layer narrows (`d_out ≤ d_in`, where
    /// `forward` also multiplies before aggregating), and equal up to round-off otherwise.
    ///
    /// # Shapes
    /// - xw: `[n, hidden]` (from `x: [n, input_dim]`)
    /// - output: `[n, num_classes]`
    pub fn forward_projected(&self, xw: &Projected, edges: &[(u32, u32)]) -> Result<LogProbs> {
        let n = xw.num_nodes;
        let adj = Adjacency::gcn(n, edges, None)?;
        let c1 = &self.convs[0];
        let mut x1 = vec![0.0f32; n * c1.m];
        adj.aggregate(&xw.rows, c1.m, &mut x1);
        bias_relu(&mut x1, &c1.bias, c1.m, true);
        self.after_first_layer(x1, &adj, n)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{random_features, random_graph};
    use super::*;
    use crate::gcn::GcnConfig;
    use crate::testing::test_device;
    use crate::{GcnBlackBox, ModelError};
    use burn::tensor::Device;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    /// A star whose leaves all carry the same features: a subgraph keeping 3 of its 6 leaves,
    /// told that the centre has 3 hidden neighbours, gives the whole star's outputs exactly; with
    /// nothing hidden it is the plain forward.
    #[test]
    fn sampled_forward_restores_hidden_neighbours() {
        let dev = test_device().unwrap();
        let host = HostGcn::from_gcn(&GcnConfig::new(2, 3).with_init_seed(8).init(&dev)).unwrap();
        let feats = |n: usize| {
            let mut v = vec![0.3f32, -1.2];
            v.extend((1..n).flat_map(|_| [0.9f32, 0.4]));
            Features::new(n, 2, v).unwrap()
        };
        let star = |leaves: u32| (1..=leaves).map(|l| (0, l)).collect::<Vec<_>>();
        let full = host.forward(&feats(7), &star(6)).unwrap();
        let sampled = host
            .forward_sampled(&feats(4), &star(3), &[3, 0, 0, 0])
            .unwrap();
        for v in 0..4 {
            for (a, b) in sampled.row(v).iter().zip(full.row(v)) {
                assert!((a - b).abs() < 1e-5, "node {v}");
            }
        }
        let plain = host.forward(&feats(4), &star(3)).unwrap();
        let zero = host.forward_sampled(&feats(4), &star(3), &[0; 4]).unwrap();
        assert_eq!(plain.as_slice(), zero.as_slice());
        assert!(host.forward_sampled(&feats(4), &star(3), &[0; 3]).is_err());
    }

    fn assert_same(host: &HostGcn, burn: &GcnBlackBox, x: &Features, edges: &[(u32, u32)]) {
        let a = host.log_probs(x, edges).unwrap();
        let b = burn.log_probs(x, edges).unwrap();
        assert_eq!(
            (a.num_nodes(), a.num_classes()),
            (b.num_nodes(), b.num_classes())
        );
        let worst = a
            .as_slice()
            .iter()
            .zip(b.as_slice())
            .map(|(p, q)| (p - q).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst < crate::testing::float_tolerance(1e-5),
            "max |host − burn| = {worst} (n = {})",
            x.num_nodes()
        );
    }

    fn pair(gcn: crate::Gcn, dev: &Device) -> (HostGcn, GcnBlackBox) {
        let host = HostGcn::from_gcn(&gcn).unwrap();
        (host, GcnBlackBox::new(gcn, dev))
    }

    #[test]
    fn host_gcn_matches_burn_on_random_graphs() {
        let dev = test_device().unwrap();
        let mut rng = StdRng::seed_from_u64(7);
        // (d, C, hidden): layer 1 transformed first (d ≥ hidden) and aggregated first (d < hidden)
        let configs = [(10, 4, 20, 0), (3, 5, 32, 1), (50, 3, 8, 2), (1, 2, 9, 3)];
        // Under CubeCL's CPU runtime: one configuration of each order of layer 1, and the
        // corner cases (one node, one edge, a hub) plus a larger graph.
        let sizes = [
            (1, 1, 0, None),
            (2, 2, 1, None),
            (12, 9, 15, Some(4)),
            (40, 30, 60, None),
            (150, 120, 300, Some(0)),
            (400, 380, 1500, Some(17)),
        ];
        for (d, c, hidden, seed) in crate::testing::sweep(&configs, &[0, 2]) {
            let cfg = GcnConfig::new(d, c)
                .with_hidden(hidden)
                .with_init_seed(seed);
            let (host, burn) = pair(cfg.init(&dev), &dev);
            assert_eq!((host.input_dim(), host.num_classes()), (d, c));
            for (n, active, m, hub) in crate::testing::sweep(&sizes, &[0, 1, 2, 4]) {
                let edges = random_graph(&mut rng, active, m, hub);
                let x = random_features(&mut rng, n, d);
                assert_same(&host, &burn, &x, &edges);
            }
            // No edges at all.
            let x = random_features(&mut rng, 7, d);
            assert_same(&host, &burn, &x, &[]);
        }
    }

    #[test]
    fn host_gcn_matches_burn_with_uneven_widths_and_no_classifier_bias() {
        let dev = test_device().unwrap();
        let (d, c) = (6, 3);
        // widths 5 → 7 → 9; the classifier takes 21 = 3 · 7 inputs.
        let gc1 = GcnConfig::new(d, c).with_hidden(5).init(&dev).gc1;
        let gc2 = GcnConfig::new(5, c).with_hidden(7).init(&dev).gc1;
        let gc3 = GcnConfig::new(7, c).with_hidden(9).init(&dev).gc1;
        let mut lin = GcnConfig::new(d, c).with_hidden(7).init(&dev).lin;
        lin.bias = None;
        let gcn = crate::Gcn { gc1, gc2, gc3, lin };
        let (host, burn) = pair(gcn, &dev);
        let mut rng = StdRng::seed_from_u64(3);
        let edges = random_graph(&mut rng, 50, 120, Some(2));
        let x = random_features(&mut rng, 60, d);
        assert_same(&host, &burn, &x, &edges);
    }

    #[test]
    fn bad_inputs_give_the_black_box_errors() {
        let dev = test_device().unwrap();
        let (host, burn) = pair(GcnConfig::new(3, 2).init(&dev), &dev);
        let x = Features::constant(4, 3, 1.0);
        let err = |bb: &dyn BlackBox, x: &Features, e: &[(u32, u32)]| {
            bb.log_probs(x, e).unwrap_err().to_string()
        };
        // Wrong feature dimension.
        let x2 = Features::constant(4, 2, 1.0);
        let e = host.log_probs(&x2, &[(0, 1)]).unwrap_err();
        assert!(matches!(
            e,
            ModelError::DimensionMismatch {
                expected: 3,
                got: 2,
                ..
            }
        ));
        assert_eq!(e.to_string(), err(&burn, &x2, &[(0, 1)]));
        // Out-of-range endpoint and self loop.
        for bad in [&[(0, 1), (2, 4)][..], &[(5, 0)], &[(1, 2), (3, 3)]] {
            let e = host.log_probs(&x, bad).unwrap_err();
            assert!(matches!(e, ModelError::InvalidInput(_)), "{e}");
            assert_eq!(e.to_string(), err(&burn, &x, bad));
        }
        // An empty graph is fine.
        let empty = host.log_probs(&Features::constant(0, 3, 1.0), &[]).unwrap();
        assert_eq!((empty.num_nodes(), empty.num_classes()), (0, 2));
    }

    /// A NaN parameter reaches the output on the host kernel as on Burn's (its ReLU keeps NaN,
    /// as Burn's does), so explainers report it on either kernel.
    #[test]
    fn a_nan_parameter_shows_on_both_kernels() {
        let dev = test_device().unwrap();
        let mut gcn = GcnConfig::new(2, 3).with_init_seed(4).init(&dev);
        let mut b = gcn.gc2.bias.val().into_data().try_to_vec::<f32>().unwrap();
        b[1] = f32::NAN;
        gcn.gc2.bias = burn::module::Param::from_tensor(burn::tensor::Tensor::from_data(
            burn::tensor::TensorData::new(b.clone(), [b.len()]),
            &dev,
        ));
        let x = Features::new(3, 2, vec![0.5, -1.0, 1.5, 0.2, -0.3, 0.8]).unwrap();
        let edges = [(0, 1), (1, 2)];
        let host = HostGcn::from_gcn(&gcn)
            .unwrap()
            .forward(&x, &edges)
            .unwrap();
        let burn = GcnBlackBox::new(gcn, &dev).log_probs(&x, &edges).unwrap();
        let nan = |v: &[f32]| v.iter().map(|x| x.is_nan()).collect::<Vec<_>>();
        assert!(nan(host.as_slice()).iter().all(|&n| n));
        // The CPU backends' ReLU keeps NaN; a GPU's `max` may return the other operand.
        if !crate::device::is_gpu(&dev) {
            assert_eq!(nan(host.as_slice()), nan(burn.as_slice()));
        }
    }
}
