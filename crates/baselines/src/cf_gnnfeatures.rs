//! CF-GNNFeatures: CF-GNNExplainer's recipe on the node features instead of the edges, the
//! feature-perturbation peer used on Cora and CiteSeer (Giorgi, Silvestri, Tolomei: the
//! COMBINEX paper's baseline; the feature counterpart of Lucic et al.'s CF-GNNExplainer).
//!
//! A real-valued vector `P̂` holds one entry per nonzero feature entry of the rows it may edit
//! (the target's own row, or with [`FeatureNodes::Field`] every node within the black box's
//! layers of it). The features are multiplied by a mask:
//! - soft, `x ⊙ σ(P̂)`, for the gradient (Burn's autodiff with respect to the features, chained
//!   through the mask: `∂L/∂P̂ = ∂L/∂x' · x · σ'(P̂)`);
//! - binary, `x ⊙ 1[σ(P̂) ≥ ½]`, judged exactly by the black box on the whole graph
//!   (incrementally, through its graph binding): a flip is a counterfactual, whose edits set the
//!   masked entries to 0. The one with the fewest entries changed is kept.
//!
//! The loss, the optimiser and every other choice are CF-GNNExplainer's
//! ([`CfGnnExplainer`](crate::CfGnnExplainer)'s module docs): the loss is
//! `1[f = y] · log p(y | σ(P̂)) + β · dist`, the distance measured on the binary mask (no
//! gradient), `P̂` starting at 1 (the unedited features), gradients clipped to norm 2, SGD with
//! Nesterov momentum.
//!
//! As CF-GNNExplainer only deletes edges, the mask only removes: a 0 entry never changes, so a
//! word can be dropped but never added (the searches' `--edits feat` flip both ways).
//!
//! ```text
//!   x_t = [0 1 0 1 1]   P̂ over entries 1, 3, 4;  mask [·, 1, ·, 0, 1]  →  x'_t = [0 1 0 0 1]
//!                                                 edit: (t, 3) 1 → 0
//! ```

use burn::tensor::Device;
use induce_explain::gradient::GradModel;
use induce_explain::{Explainer, Explanation, FeatureEdit, Protocol, Result};
use induce_graph::{Graph, k_hop};
use induce_models::{BlackBox, Kernel};
use serde::{Deserialize, Serialize};

use crate::action_space::{TargetOracle, argmax};
use crate::features::{FeatureNodes, as_rows, edited_rows};
use crate::neighbourhood::{check_iterations, search_hops, sigmoid};
use crate::sgd::{Optimiser, OptimiserState, clip_norm};

/// Settings of [`CfGnnFeaturesExplainer`]: CF-GNNExplainer's defaults (SGD lr 0.01, Nesterov
/// momentum 0.9, β 0.5, 500 iterations).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CfGnnFeaturesConfig {
    /// Optimisation steps per target.
    pub iterations: usize,
    /// Weight β of the distance term (reported loss only: it has no gradient).
    pub beta: f32,
    /// The optimiser of `P̂`.
    pub optimiser: Optimiser,
    /// Gradient-norm clipping.
    pub clip: Option<f32>,
    /// Initial value of `P̂` (σ(1) ≈ 0.73: the unedited features).
    pub init: f32,
    /// Hops of the neighbourhood the gradient is taken on (widened to the black box's
    /// receptive field, `L + 1`, under exact verdicts).
    pub hops: u32,
    /// Whose rows the mask covers (`--feature-nodes`; default the target's own).
    #[serde(default, skip_serializing_if = "crate::features::is_target")]
    pub feature_nodes: FeatureNodes,
    /// Feature columns the mask may not change (`--lock-features`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locked_features: Vec<u32>,
}

impl Default for CfGnnFeaturesConfig {
    /// CF-GNNExplainer's defaults ([`CfGnnConfig::default`](crate::CfGnnConfig)), on the
    /// target's own row.
    fn default() -> Self {
        let cf = crate::CfGnnConfig::default();
        Self {
            iterations: cf.iterations,
            beta: cf.beta,
            optimiser: cf.optimiser,
            clip: cf.clip,
            init: cf.init,
            hops: cf.hops,
            feature_nodes: FeatureNodes::Target,
            locked_features: Vec::new(),
        }
    }
}

/// CF-GNNFeatures (see the [module docs](self)).
///
/// Needs a black box with gradients ([`BlackBox::edge_weighted`]) whose graph binding judges
/// feature edits (the paper's GCN, a native PyG family) under exact verdicts.
pub struct CfGnnFeaturesExplainer<'a> {
    black_box: &'a dyn BlackBox,
    model: GradModel,
    protocol: Protocol,
    config: CfGnnFeaturesConfig,
}

impl<'a> CfGnnFeaturesExplainer<'a> {
    /// The explainer named `cf-gnnfeatures`. Errors if the black box provides no gradients
    /// ([`ExplainError::NotDifferentiable`](induce_explain::ExplainError::NotDifferentiable)).
    pub fn new(
        black_box: &'a dyn BlackBox,
        config: CfGnnFeaturesConfig,
        protocol: Protocol,
        device: &Device,
    ) -> Result<Self> {
        Ok(Self {
            black_box,
            model: GradModel::of(black_box, "cf-gnnfeatures", Kernel::Burn, device)?,
            protocol,
            config,
        })
    }
}

impl Explainer for CfGnnFeaturesExplainer<'_> {
    fn name(&self) -> &str {
        "cf-gnnfeatures"
    }

    fn neighbourhood_hops(&self) -> Option<u32> {
        Some(search_hops(
            self.black_box,
            self.config.hops,
            self.protocol.verdict,
        ))
    }

    fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation> {
        let c = &self.config;
        check_iterations("cf-gnnfeatures", c.iterations, "optimisation step")?;
        let hops = search_hops(self.black_box, c.hops, self.protocol.verdict);
        let sub = k_hop(graph, target, hops)?;
        let mut oracle = TargetOracle::new(graph, self.black_box, &sub, self.protocol.verdict)?;
        let y = argmax(&oracle.row_with_rows(&[], &[])?);
        crate::features::check_locked(graph, &c.locked_features)?;
        // The mask's entries: (node, local row, column) of every nonzero, unlocked entry of
        // the rows it covers.
        let layers = self.black_box.message_passing_layers();
        let d = graph.features().dim();
        let mut entries: Vec<(u32, usize, u32)> = Vec::new();
        for v in crate::features::feature_rows(graph, target, layers, c.feature_nodes)? {
            let Some(l) = sub.local_of(v) else { continue };
            let x = graph.features().row(v as usize);
            entries.extend(
                (0..d as u32)
                    .filter(|&f| x[f as usize] != 0.0 && !c.locked_features.contains(&f))
                    .map(|f| (v, l, f)),
            );
        }
        let not_found = Explanation {
            target,
            found: false,
            original_label: y,
            new_label: y,
            edits: Vec::new(),
            feature_edits: Vec::new(),
            evaluations: None,
            certified: None,
        };
        if entries.is_empty() {
            return Ok(not_found);
        }
        let x0 = sub.features(graph);
        let soft = self
            .model
            .bind_features(&x0, &sub.edges, sub.target_local)?;
        let edits_of = |keep: &[bool]| -> Vec<FeatureEdit> {
            (entries.iter().zip(keep))
                .filter(|(_, k)| !**k)
                .map(|(&(v, _, f), _)| FeatureEdit {
                    node: v,
                    feature: f,
                    old: graph.features().row(v as usize)[f as usize],
                    new: 0.0,
                })
                .collect()
        };
        let mut params = vec![c.init; entries.len()];
        let mut opt = OptimiserState::new(c.optimiser.clone(), params.len());
        let mut keep = vec![true; params.len()];
        let mut cached: Option<(Vec<bool>, usize)> = None;
        let mut best: Option<(Vec<FeatureEdit>, usize)> = None;
        let mut x = x0.as_slice().to_vec();
        for _ in 0..c.iterations {
            for (k, &v) in keep.iter_mut().zip(&params) {
                *k = v >= 0.0; // σ(v) ≥ ½
            }
            let label = match &cached {
                Some((m, l)) if *m == keep => *l,
                _ => {
                    let fe = edits_of(&keep);
                    let rows = edited_rows(graph, &fe);
                    let l = argmax(&oracle.row_with_rows(&[], &as_rows(&rows))?);
                    cached = Some((keep.clone(), l));
                    l
                }
            };
            if label != y {
                let fe = edits_of(&keep);
                if best.as_ref().is_none_or(|(b, _)| fe.len() < b.len()) {
                    best = Some((fe, label));
                }
                if opt.is_at_rest() {
                    break; // zero gradient from here on: nothing can change
                }
                let zero = vec![0.0; params.len()];
                opt.step(&mut params, &zero);
                continue;
            }
            // x' = x ⊙ σ(P̂) on the mask's entries; L = log p(y | x').
            let sig: Vec<f32> = params.iter().map(|&v| sigmoid(v)).collect();
            for (&(_, l, f), s) in entries.iter().zip(&sig) {
                let i = l * d + f as usize;
                x[i] = x0.as_slice()[i] * s;
            }
            let (_, gx) = soft.log_probs_and_grad(&x, |lp| {
                let mut e = vec![0.0; lp.len()];
                e[y] = 1.0;
                e
            })?;
            let mut g: Vec<f32> = (entries.iter().zip(&sig))
                .map(|(&(_, l, f), s)| {
                    let i = l * d + f as usize;
                    gx[i] * x0.as_slice()[i] * s * (1.0 - s)
                })
                .collect();
            if let Some(m) = c.clip {
                clip_norm(&mut g, m);
            }
            opt.step(&mut params, &g);
        }
        Ok(match best {
            Some((feature_edits, label)) => Explanation {
                found: true,
                new_label: label,
                feature_edits,
                ..not_found
            },
            None => not_found,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use induce_explain::verdict::whole_graph_label_with_features;
    use induce_models::testing::test_device;

    const EXACT: Protocol = Protocol::exact(4);

    /// On a random graph with 0/1 features: every counterfactual zeroes 1-entries of the
    /// target's row (or of its receptive field's rows) and flips the model on the whole edited
    /// graph; runs are deterministic; some target is explained. (The untrained GCN's gradients
    /// are about 1e-3: Adam, which steps by the gradient's sign, moves its mask where the
    /// default SGD would need thousands of steps.)
    #[test]
    fn masks_zero_entries_and_every_counterfactual_flips_the_whole_graph() {
        let (g, gcn) = crate::action_space::fixtures::binary_graph();
        let bound = induce_models::BoundBlackBox::new(&gcn, &g).unwrap();
        let d = test_device().unwrap();
        for nodes in [FeatureNodes::Target, FeatureNodes::Field] {
            let config = CfGnnFeaturesConfig {
                feature_nodes: nodes,
                iterations: 100,
                optimiser: Optimiser::Adam { lr: 0.1 },
                ..CfGnnFeaturesConfig::default()
            };
            let x = CfGnnFeaturesExplainer::new(&bound, config, EXACT, &d).unwrap();
            assert_eq!(x.name(), "cf-gnnfeatures");
            let mut found = 0;
            for t in 0..g.num_nodes() as u32 {
                let e = x.explain(&g, t).unwrap();
                if !e.found {
                    continue;
                }
                found += 1;
                assert!(e.edits.is_empty() && !e.feature_edits.is_empty(), "{e:?}");
                for f in &e.feature_edits {
                    assert_eq!((f.old, f.new), (1.0, 0.0), "{f:?}");
                    assert!(nodes == FeatureNodes::Field || f.node == t, "{f:?}");
                }
                let now = whole_graph_label_with_features(&g, &gcn, t, &[], &e.feature_edits);
                assert_eq!(now.unwrap(), e.new_label, "{e:?}");
                assert_ne!(e.new_label, e.original_label);
                assert_eq!(x.explain(&g, t).unwrap(), e, "deterministic");
            }
            assert!(found > 0, "{nodes}");
        }
    }

    /// The mask's gradient is the features' gradient chained through it: a finite difference
    /// of the target's log-probability agrees with it.
    #[test]
    fn the_feature_gradient_matches_a_finite_difference() {
        let (g, gcn) = crate::action_space::fixtures::continuous_graph();
        let d = test_device().unwrap();
        let model = GradModel::of(&gcn, "test", Kernel::Burn, &d).unwrap();
        let sub = k_hop(&g, 3, 4).unwrap();
        let x0 = sub.features(&g);
        let soft = model
            .bind_features(&x0, &sub.edges, sub.target_local)
            .unwrap();
        let y = 1;
        let e_y = |lp: &[f32]| {
            let mut e = vec![0.0; lp.len()];
            e[y] = 1.0;
            e
        };
        let (_, grad) = soft.log_probs_and_grad(x0.as_slice(), e_y).unwrap();
        let dim = g.features().dim();
        let i = sub.target_local * dim + 2;
        let h = 1e-2;
        let at = |delta: f32| {
            let mut x = x0.as_slice().to_vec();
            x[i] += delta;
            soft.log_probs_and_grad(&x, e_y).unwrap().0[y]
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        assert!(
            (fd - grad[i]).abs() < 1e-2 * (1.0 + fd.abs()),
            "{fd} {}",
            grad[i]
        );
        assert!(soft.log_probs_and_grad(&[0.0], e_y).is_err());
    }

    /// Refusals: a black box without gradients, zero iterations.
    #[test]
    fn what_it_cannot_do_is_a_typed_error() {
        use crate::neighbourhood::fixtures::DegreeAtLeast;
        use induce_explain::ExplainError;
        let d = test_device().unwrap();
        let r = CfGnnFeaturesExplainer::new(&DegreeAtLeast(2), Default::default(), EXACT, &d);
        assert!(matches!(r, Err(ExplainError::NotDifferentiable { .. })));
        let (g, gcn) = crate::action_space::fixtures::binary_graph();
        let bound = induce_models::BoundBlackBox::new(&gcn, &g).unwrap();
        let zero = CfGnnFeaturesConfig {
            iterations: 0,
            ..Default::default()
        };
        let x = CfGnnFeaturesExplainer::new(&bound, zero, EXACT, &d).unwrap();
        assert!(x.explain(&g, 0).is_err());
    }
}
