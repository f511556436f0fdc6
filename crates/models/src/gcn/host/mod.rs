//! A plain-Rust (host) copy of a trained [`Gcn`]: the same function as the Burn model, without
//! Burn's per-operation overhead, for the many small forward passes of an explanation.
//!
//! Internally every activation and weight is stored with its widths rounded up to a multiple of 4
//! and zero-filled, so that all kernels work on whole 4- or 8-float chunks (which the compiler
//! vectorises) and never need a scalar tail loop. The zero columns contribute exact zeros, so the
//! padding does not change any result.
//!
//! The pieces: [`HostGcn`] itself (here); the shared layer pieces (`dense`: padding, bias and
//! log-softmax; `layer`: one convolution), over [`crate::linalg`]'s matrix products and its
//! [`Adjacency`](crate::linalg::Adjacency) normalised as `Â`; the whole-graph pass (`forward`); the first layer's projection `X W₁`, computed
//! once per feature matrix ([`Projected`]); one node's receptive field on a large graph
//! ([`Neighbours`], [`FirstLayer`]); and the [`BlackBox`](crate::BlackBox) implementation
//! (prepared and [incremental] evaluation).
//!
//! Beside it: [`incremental::IncrementalHostGcn`], the host GCN following edge edits
//! (recomputing only the rows an edit reaches), and [`grad::EdgeWeightGcn`], the GCN with a
//! weight on every edge and its gradient with respect to those weights (the mask-based
//! explainers).

pub mod grad;
pub mod incremental;

mod black_box;
mod bound;
mod dense;
mod forward;
mod layer;
mod project;
mod receptive;
mod state;

pub(crate) use bound::BoundHostGcn;
pub use bound::GraphOverlay;
pub(crate) use dense::{log_softmax_in_place, pad_matrix, padded};
use layer::HostConv;
pub use project::Projected;
pub use receptive::{FirstLayer, Neighbours};
pub use state::TargetState;

use crate::error::Result;
use crate::gcn::Gcn;
use layer::{expect_dim, host_vec};
use project::ProjectionCache;

/// A trained [`Gcn`] copied into host memory (plain `Vec<f32>`): computes the same class
/// log-probabilities as [`GcnBlackBox`](crate::GcnBlackBox) (up to floating-point summation
/// order, ~1e-7 relative to the logits) in plain single-threaded Rust, without Burn's
/// per-operation overhead, for the many small forward passes of an explanation (a 368-node,
/// 1,558-edge BA-Shapes neighbourhood: ≈100 µs per call against ≈250 µs for the Burn model on
/// the flex backend).
///
/// The copy is taken once; later changes to the Burn model are not seen.
///
/// ```
/// use induce_graph::Features;
/// use induce_models::device::default_device;
/// use induce_models::{BlackBox, GcnBlackBox, GcnConfig, HostGcn};
///
/// let dev = default_device().unwrap();
/// let gcn = GcnConfig::new(3, 2).init(&dev);
/// let host = HostGcn::from_gcn(&gcn).unwrap();
/// //  0 ─ 1 ─ 2   3 (isolated)
/// let x = Features::new(4, 3, (0..12).map(|v| v as f32 / 10.0).collect()).unwrap();
/// let edges = [(0, 1), (1, 2)];
/// let fast = host.log_probs(&x, &edges).unwrap();
/// let burn = GcnBlackBox::new(gcn, &dev).log_probs(&x, &edges).unwrap();
/// for (a, b) in fast.as_slice().iter().zip(burn.as_slice()) {
///     assert!((a - b).abs() < 1e-5);
/// }
/// assert_eq!(fast.predictions(), burn.predictions());
/// ```
#[derive(Debug, Clone)]
pub struct HostGcn {
    pub(crate) convs: [HostConv; 3],
    /// Classifier weight, row-major `[k1 + k2 + k3, mc]` (padded convolution widths `ki`
    /// stacked, padded class count `mc`), zero outside the Burn weight's entries.
    pub(crate) lin_weight: Vec<f32>,
    /// Classifier bias `[mc]` (zeros if the Burn `Linear` has none).
    pub(crate) lin_bias: Vec<f32>,
    pub(crate) num_classes: usize,
    /// The last whole-matrix projection, shared by the neighbourhoods of one graph
    /// ([`BlackBox::prepare_rows`](crate::BlackBox::prepare_rows),
    /// [`BlackBox::incremental_rows`](crate::BlackBox::incremental_rows)).
    projections: ProjectionCache,
    /// The Burn model it was built from
    /// ([`BlackBox::differentiable`](crate::BlackBox::differentiable)).
    source: Gcn,
}

impl HostGcn {
    /// Copies every parameter of `model` to the host (any device, any float dtype; values are
    /// read as `f32`).
    ///
    /// Errors: [`ModelError::DimensionMismatch`] if the layer shapes do not chain (a convolution's
    /// input width differs from the previous one's output, a bias length from its weight, or the
    /// classifier's input from the summed convolution widths), [`ModelError::InvalidInput`] if a
    /// parameter cannot be read back as `f32`.
    ///
    /// [`ModelError::DimensionMismatch`]: crate::ModelError::DimensionMismatch
    /// [`ModelError::InvalidInput`]: crate::ModelError::InvalidInput
    pub fn from_gcn(model: &Gcn) -> Result<Self> {
        model.check_widths()?;
        let c1 = HostConv::from_burn(&model.gc1, "gc1", None)?;
        let c2 = HostConv::from_burn(&model.gc2, "gc2", Some(c1.d_out))?;
        let c3 = HostConv::from_burn(&model.gc3, "gc3", Some(c2.d_out))?;
        let [lin_in, num_classes] = model.lin.weight.dims();
        expect_dim(
            "lin.weight rows (concatenated convolution widths)".into(),
            c1.d_out + c2.d_out + c3.d_out,
            lin_in,
        )?;
        let mc = padded(num_classes);
        let lin_bias = match &model.lin.bias {
            Some(b) => {
                expect_dim("lin.bias length".into(), num_classes, b.dims()[0])?;
                pad_matrix(&host_vec(b.val(), "lin.bias")?, 1, num_classes, 1, mc)
            }
            None => vec![0.0; mc],
        };
        // Stack the row blocks of x1, x2, x3, each padded to its convolution's padded width.
        let w = host_vec(model.lin.weight.val(), "lin.weight")?;
        let mut lin_weight = Vec::with_capacity((c1.m + c2.m + c3.m) * mc);
        let mut row0 = 0;
        for c in [&c1, &c2, &c3] {
            let block = &w[row0 * num_classes..(row0 + c.d_out) * num_classes];
            lin_weight.extend(pad_matrix(block, c.d_out, num_classes, c.m, mc));
            row0 += c.d_out;
        }
        Ok(Self {
            convs: [c1, c2, c3],
            lin_weight,
            lin_bias,
            num_classes,
            projections: ProjectionCache::default(),
            source: model.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelError;
    use crate::gcn::GcnConfig;
    use crate::testing::test_device;
    use induce_graph::Features;
    use rand::Rng;
    use rand::rngs::StdRng;
    use std::collections::BTreeSet;

    /// A random tree on `n` nodes (each node after the first joined to an earlier one), node
    /// `hub` joined to every third node from `from` on, and `extra` random pairs: undirected,
    /// sorted, without duplicates or self loops; then `[n, d]` features uniform in
    /// `[shift, 1 + shift)`, drawn after the edges.
    pub(super) fn hub_tree(
        rng: &mut StdRng,
        (n, d): (u32, usize),
        (hub, from): (u32, u32),
        extra: usize,
        shift: f32,
    ) -> (Vec<(u32, u32)>, Features) {
        let mut edges: Vec<(u32, u32)> = (1..n).map(|v| (rng.random_range(0..v), v)).collect();
        edges.extend((from..n).step_by(3).map(|v| (hub, v)));
        edges.extend((0..extra).map(|_| (rng.random_range(0..n), rng.random_range(0..n))));
        edges
            .iter_mut()
            .for_each(|e| *e = (e.0.min(e.1), e.0.max(e.1)));
        edges.retain(|e| e.0 != e.1);
        edges.sort_unstable();
        edges.dedup();
        let values = (0..n as usize * d).map(|_| rng.random::<f32>() + shift);
        let x = Features::new(n as usize, d, values.collect()).unwrap();
        (edges, x)
    }

    /// A random simple graph on nodes `0..n_active` (`m` random tries; node `hub`, if any,
    /// joined to every other one); nodes from `n_active` on are isolated.
    pub(super) fn random_graph(
        rng: &mut StdRng,
        n_active: usize,
        m: usize,
        hub: Option<u32>,
    ) -> Vec<(u32, u32)> {
        let mut set = BTreeSet::new();
        if n_active >= 2 {
            for _ in 0..m {
                let u = rng.random_range(0..n_active as u32);
                let w = rng.random_range(0..n_active as u32);
                if u != w {
                    set.insert((u.min(w), u.max(w)));
                }
            }
        }
        if let Some(h) = hub {
            for u in 0..n_active as u32 {
                if u != h {
                    set.insert((u.min(h), u.max(h)));
                }
            }
        }
        let mut edges: Vec<(u32, u32)> = set.into_iter().collect();
        // Mixed orientations and an unsorted order, as an edited graph may give them.
        for (k, e) in edges.iter_mut().enumerate() {
            if k % 3 == 0 {
                *e = (e.1, e.0);
            }
        }
        let len = edges.len();
        if len > 1 {
            for k in 0..len {
                edges.swap(k, rng.random_range(0..len));
            }
        }
        edges
    }

    pub(super) fn random_features(rng: &mut StdRng, n: usize, d: usize) -> Features {
        Features::new(
            n,
            d,
            (0..n * d).map(|_| rng.random_range(-1.0..1.0)).collect(),
        )
        .unwrap()
    }

    #[test]
    fn mismatched_layers_are_rejected() {
        let dev = test_device().unwrap();
        let mut gcn = GcnConfig::new(4, 2).init(&dev);
        gcn.gc2 = GcnConfig::new(7, 2).init(&dev).gc1; // [7, 20] after a 20-wide gc1
        let e = HostGcn::from_gcn(&gcn).unwrap_err();
        assert!(
            matches!(
                e,
                ModelError::DimensionMismatch {
                    expected: 20,
                    got: 7,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("gc2.weight"), "{e}");
    }
}
