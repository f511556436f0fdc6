//! The estimated column of [`StateLayout::Estimated`](super::StateLayout::Estimated): for every
//! node `v` of the neighbourhood, the black box's first-order estimate of how much toggling the
//! pair `(target, v)` (adding it, or deleting it when it is an edge) lowers the target's margin
//! to its goal, from one gradient of the black box per state (as `greedy --shortlist` ranks
//! actions).
//!
//! ```text
//!   0 ─ 1 ─ 2     target 0: pairs (0,1) w=1, (1,2) w=1 (edges) and (0,2) w=0 (an addition)
//!                 column: node 0 → 0; node 1 → estimate of deleting (0,1); node 2 → of adding
//!                 (0,2); each ∂m/∂w · Δw over the current margin m, clamped to [−4, 4]
//! ```

use std::collections::HashMap;

use induce_explain::Goal;
use induce_explain::gradient::{FirstLayer, GradModel};
use induce_graph::{EditGraph, Features, Graph, Subgraph};
use induce_models::{BlackBox, DegreeGradient, Kernel};

use super::ActionKind;
use crate::error::{Result, RlError};

/// The column's bound: an estimated change of more than 4 times the current margin reads as 4.
const CLAMP: f32 = 4.0;

/// One neighbourhood bound to the black box's gradient (see the module docs).
pub(crate) struct Estimator {
    model: GradModel,
    features: Features,
    /// `features` through the black box's first layer, once per neighbourhood (edge edits do
    /// not change it).
    first: FirstLayer,
    pairs: Vec<(u32, u32)>,
    index: HashMap<(u32, u32), usize>,
    /// The pair `(target, v)` of each local node `v` (`None` for the target).
    toggle_of: Vec<Option<usize>>,
    target: usize,
    /// The weight of the per-candidate estimates ([`EnvConfig::prior_weight`](super::EnvConfig)).
    weight: f32,
    /// The black box's message-passing layers `L`: the gradient with respect to the features
    /// is taken on the target's `L + 1`-hop ball of the edited neighbourhood (what its output
    /// reads); `None`: on the whole neighbourhood.
    layers: Option<u32>,
}

impl std::fmt::Debug for Estimator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Estimator")
            .field("pairs", &self.pairs.len())
            .field("kernel", &self.model.kernel())
            .finish()
    }
}

impl Estimator {
    /// Binds `sub`'s neighbourhood of `graph` to `black_box`'s gradient: every edge of the
    /// neighbourhood and every pair `(target, v)` carry a weight. A black box without
    /// gradients is [`RlError::NotDifferentiable`].
    pub(crate) fn new(graph: &Graph, black_box: &dyn BlackBox, sub: &Subgraph) -> Result<Self> {
        let net = black_box
            .edge_weighted()
            .ok_or_else(|| RlError::NotDifferentiable {
                method: "the estimated state (StateLayout::Estimated)".into(),
            })?;
        let device = induce_models::device::default_device()?;
        let model = GradModel::new(net, Kernel::Host, &device)?;
        let t = sub.target_local;
        let mut pairs: Vec<(u32, u32)> = sub.edges.clone();
        let mut index: HashMap<(u32, u32), usize> = (pairs.iter().copied())
            .enumerate()
            .map(|(k, (a, b))| ((a.min(b), a.max(b)), k))
            .collect();
        let toggle_of = (0..sub.num_nodes())
            .map(|v| {
                (v != t).then(|| {
                    let key = ((v.min(t)) as u32, (v.max(t)) as u32);
                    *index.entry(key).or_insert_with(|| {
                        pairs.push(key);
                        pairs.len() - 1
                    })
                })
            })
            .collect();
        let features = sub.features(graph);
        Ok(Self {
            first: model.first_layer(&features)?,
            model,
            features,
            pairs,
            index,
            toggle_of,
            target: t,
            weight: 1.0,
            layers: black_box.message_passing_layers(),
        })
    }

    /// The estimator with the per-candidate estimates scaled by `weight`.
    pub(crate) fn with_weight(mut self, weight: f32) -> Self {
        self.weight = weight;
        self
    }

    /// The column on the edit graph `edit` (local ids) with the neighbourhood's features `x`
    /// (`None`: the original ones): node `v`'s entry is the estimated drop of the margin toward
    /// `goal` (from the original class `y`) when `(target, v)` is toggled, over the current
    /// margin (at least 0.05), clamped to `[−4, 4]`; 0 for the target. And the same estimate
    /// for each of `candidates` (local pairs; every addition is a pair `(target, v)`, every
    /// deletion an edge of the neighbourhood; a feature action's from the gradient with
    /// respect to the features, `∂m/∂x[v, f] · (value − x[v, f])`, taken only when there is
    /// one).
    ///
    /// # Shapes
    /// - candidates: `[C]`; output: (`[n]`, `[C]`)
    pub(crate) fn estimates(
        &self,
        edit: &EditGraph,
        x: Option<&Features>,
        candidates: &[(u32, u32, ActionKind)],
        goal: Goal,
        y: usize,
    ) -> Result<(Vec<f32>, Vec<f32>)> {
        let mut w: Vec<f32> = (self.pairs.iter())
            .map(|&(a, b)| f32::from(u8::from(edit.has_edge(a as usize, b as usize))))
            .collect();
        let soft = match x {
            Some(x) => self.model.bind(x, &self.pairs, self.target)?,
            None => {
                (self.model).bind_with(&self.features, &self.first, &self.pairs, self.target)?
            }
        };
        let x = x.unwrap_or(&self.features);
        let mut margin = 0.0;
        let (_, g) = soft.log_probs_and_grad(&w, DegreeGradient::Through, |lp| {
            margin = goal.margin(lp, y);
            goal.margin_gradient(lp, y)
        })?;
        let scale = margin.max(0.05);
        w.iter_mut().for_each(|v| *v = 1.0 - 2.0 * *v); // Δw of a toggle
        let of = |k: usize| (-(g[k] * w[k]) / scale).clamp(-CLAMP, CLAMP);
        let column = (self.toggle_of.iter()).map(|k| k.map_or(0.0, of)).collect();
        let features = candidates
            .iter()
            .any(|(_, _, k)| matches!(k, ActionKind::Feature { .. }));
        let (ball, gx) = match features {
            true => self.feature_gradient(edit, x, goal, y)?,
            false => (Vec::new(), Vec::new()),
        };
        let d = x.dim();
        let per_candidate = candidates
            .iter()
            .map(|&(a, b, kind)| {
                let e = match kind {
                    // A node outside the ball does not reach the target's output.
                    ActionKind::Feature { feature, value } => match ball[a as usize] {
                        u32::MAX => 0.0,
                        at => {
                            let g = gx[at as usize * d + feature as usize];
                            let old = x.row(a as usize)[feature as usize];
                            (-(g * (value - old)) / scale).clamp(-CLAMP, CLAMP)
                        }
                    },
                    _ => (self.index.get(&(a.min(b), a.max(b))).copied()).map_or(0.0, of),
                };
                self.weight * e
            })
            .collect();
        Ok((column, per_candidate))
    }

    /// The gradient of the margin toward `goal` with respect to the features `x` of the nodes
    /// within `L + 1` hops of the target in `edit` (every node with unknown `L`): each local
    /// node's position in the ball (`u32::MAX` outside it) and the gradient, `[ball · d]`.
    fn feature_gradient(
        &self,
        edit: &EditGraph,
        x: &Features,
        goal: Goal,
        y: usize,
    ) -> Result<(Vec<u32>, Vec<f32>)> {
        let n = edit.num_nodes();
        let mut at = vec![u32::MAX; n];
        let mut nodes = vec![self.target as u32];
        at[self.target] = 0;
        let hops = self.layers.map_or(usize::MAX, |l| l as usize + 1);
        let mut frontier = 0;
        for _ in 0..hops {
            let end = nodes.len();
            if frontier == end {
                break;
            }
            for i in frontier..end {
                for &w in edit.neighbors(nodes[i] as usize) {
                    if at[w as usize] == u32::MAX {
                        at[w as usize] = nodes.len() as u32;
                        nodes.push(w);
                    }
                }
            }
            frontier = end;
        }
        let edges: Vec<(u32, u32)> = (edit.edges().into_iter())
            .filter_map(|(a, b)| {
                let (a, b) = (at[a as usize], at[b as usize]);
                (a != u32::MAX && b != u32::MAX).then_some((a.min(b), a.max(b)))
            })
            .collect();
        let xb = x.gather(&nodes);
        let soft = self.model.bind_features(&xb, &edges, 0)?;
        let (_, gx) = soft.log_probs_and_grad(xb.as_slice(), |lp| goal.margin_gradient(lp, y))?;
        Ok((at, gx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{EnvConfig, Episode, StateLayout};
    use induce_graph::k_hop;
    use induce_models::testing::{DegreeAtLeast, test_device};
    use induce_models::{GcnBlackBox, GcnConfig};

    /// `0 ─ 1 ─ 2 ─ 3 ─ 4` and `2 ─ 5`, varied features, a GCN with seeded random weights.
    fn setup() -> (Graph, GcnBlackBox) {
        let dev = test_device().unwrap();
        let x: Vec<f32> = (0..18).map(|i| ((i * 7) % 5) as f32 * 0.4 - 0.6).collect();
        let g = Graph::from_edges(
            6,
            &[(0, 1), (1, 2), (2, 3), (3, 4), (2, 5)],
            Features::new(6, 3, x).unwrap(),
            vec![0; 6],
        )
        .unwrap();
        let gcn = GcnConfig::new(3, 3).with_init_seed(5).init(&dev);
        (g, GcnBlackBox::new(gcn, &dev))
    }

    /// Each entry is the margin's derivative along its toggle over the current margin: a
    /// central finite difference of the black box's soft-weighted output agrees.
    #[test]
    fn the_column_is_the_first_order_estimate_of_each_toggle() {
        let (g, bb) = setup();
        let sub = k_hop(&g, 2, 4).unwrap();
        let est = Estimator::new(&g, &bb, &sub).unwrap();
        let y = bb
            .log_probs(&sub.features(&g), &sub.edges)
            .unwrap()
            .argmax(sub.target_local);
        let edit = sub.to_edit_graph();
        let (col, _) = est.estimates(&edit, None, &[], Goal::AnyOther, y).unwrap();
        assert_eq!(col.len(), 6);
        assert_eq!(col[sub.target_local], 0.0);
        let soft = est
            .model
            .bind(&est.features, &est.pairs, est.target)
            .unwrap();
        let base: Vec<f32> = (est.pairs.iter())
            .map(|&(a, b)| f32::from(u8::from(edit.has_edge(a as usize, b as usize))))
            .collect();
        let margin = |w: &[f32]| {
            let (lp, _) = soft
                .log_probs_and_grad(w, DegreeGradient::Through, |lp| vec![0.0; lp.len()])
                .unwrap();
            Goal::AnyOther.margin(&lp, y)
        };
        let m = margin(&base);
        let eps = 1e-2f32;
        for (v, toggle) in est.toggle_of.iter().enumerate() {
            let Some(k) = *toggle else { continue };
            let dir = 1.0 - 2.0 * base[k];
            let (mut hi, mut lo) = (base.clone(), base.clone());
            hi[k] += eps * dir;
            lo[k] -= eps * dir;
            let slope = (margin(&hi) - margin(&lo)) / (2.0 * eps);
            let want = (-slope / m.max(0.05)).clamp(-CLAMP, CLAMP);
            assert!(
                (col[v] - want).abs() < 2e-2 * (1.0 + want.abs()),
                "{v}: {} vs {want}",
                col[v]
            );
        }
        assert!(col.iter().any(|c| c.abs() > 1e-3), "{col:?}");
        // A prior weight scales the candidates' estimates, not the node column.
        let t = sub.target_local as u32;
        let pairs: Vec<(u32, u32, ActionKind)> = (0..6)
            .filter(|&v| v != t)
            .map(|v| (t, v, ActionKind::Add))
            .collect();
        let (_, one) = est
            .estimates(&edit, None, &pairs, Goal::AnyOther, y)
            .unwrap();
        let heavy = Estimator::new(&g, &bb, &sub).unwrap().with_weight(3.0);
        let (col3, three) = (heavy.estimates(&edit, None, &pairs, Goal::AnyOther, y)).unwrap();
        assert_eq!(col3, col);
        assert!(one.iter().any(|e| e.abs() > 1e-3), "{one:?}");
        for (a, b) in one.iter().zip(&three) {
            assert!((3.0 * a - b).abs() < 1e-6, "{a} {b}");
        }
    }

    /// The layout puts the column last, refreshes it after an edit and restores it on a reset;
    /// a black box without gradients is a typed error.
    #[test]
    fn the_estimated_layout_refreshes_the_column_and_needs_gradients() {
        let (g, bb) = setup();
        let c = EnvConfig {
            state: StateLayout::Estimated,
            ..EnvConfig::default()
        };
        let mut ep = Episode::new(&g, &bb, 2, &c).unwrap();
        let w = ep.state_width();
        assert_eq!(w, StateLayout::Estimated.width(3, 3));
        let last =
            |ep: &Episode| -> Vec<f32> { ep.state().0.chunks_exact(w).map(|r| r[w - 1]).collect() };
        let start = last(&ep);
        let sub = k_hop(&g, 2, 4).unwrap();
        let cands = ep.candidates().clone();
        let pairs: Vec<_> = (0..cands.len()).map(|i| cands.get(i)).collect();
        let (want, per) = Estimator::new(&g, &bb, &sub)
            .unwrap()
            .estimates(
                &sub.to_edit_graph(),
                None,
                &pairs,
                Goal::AnyOther,
                ep.original_label(),
            )
            .unwrap();
        assert_eq!(start, want);
        // Each action's feature carries its estimate over 10 beside its type; the estimates
        // are the candidates' prior.
        assert_eq!(cands.estimate(), Some(&per[..]));
        for (i, f) in cands.flag().iter().enumerate() {
            let ty = f32::from(u8::from(cands.type_flag[i]));
            assert!((f - (ty + per[i] / 10.0)).abs() < 1e-6, "{i}: {f}");
        }
        // An addition's estimate is its node's column entry.
        let t = ep.target_local();
        for i in (0..cands.len()).filter(|&i| cands.u[i] as usize == t || cands.w[i] as usize == t)
        {
            let v = (cands.u[i] + cands.w[i]) as usize - t;
            assert_eq!(per[i], want[v]);
        }
        ep.step(0).unwrap();
        if !ep.is_done() {
            assert_ne!(last(&ep), start);
        }
        ep.reset();
        assert_eq!(last(&ep), start);
        // The reset restores the candidates' estimates too (the policy's prior).
        assert_eq!(ep.candidates().estimate(), Some(&per[..]));
        let path = Graph::from_edges(
            3,
            &[(0, 1), (1, 2)],
            Features::constant(3, 1, 1.0),
            vec![0; 3],
        )
        .unwrap();
        let e = Episode::new(&path, &DegreeAtLeast(2), 1, &c).unwrap_err();
        assert!(matches!(e, RlError::NotDifferentiable { .. }), "{e}");
    }
}
