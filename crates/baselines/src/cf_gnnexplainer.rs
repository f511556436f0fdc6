//! CF-GNNExplainer (Lucic, ter Hoeve, Tolomei, de Rijke, Silvestri: "CF-GNNExplainer:
//! Counterfactual Explanations for Graph Neural Networks", AISTATS 2022), and its "++" variant
//! with edge additions from the InduCE paper.
//!
//! A real-valued perturbation vector `P̂` (one entry per candidate pair of the target's
//! neighbourhood) is learned by gradient descent. The black box is evaluated twice per
//! iteration:
//! - on the soft graph, pair weights `σ(P̂)` in every layer ([`Gcn::forward_weighted`](induce_models::Gcn::forward_weighted); the
//!   degree normalisation is that of the weighted graph; by default it is detached from the
//!   gradient, as in the authors' released code — the paper does not say; set
//!   [`CfGnnConfig::degree_gradient`] to differentiate through it too);
//! - on the binary graph `P = 1[σ(P̂) ≥ ½]`, which decides whether the label flipped; every flip
//!   is a counterfactual, and the one with the fewest changed pairs is kept.
//!
//! Loss `L = 1[f(v | P) = y] · log p(y | σ(P̂)) + β · dist(P)`: the prediction term pushes the
//! original class down only while the label has not flipped; the distance (pairs changed by the
//! binary `P`) is measured on the thresholded mask and therefore has no gradient, exactly as in
//! the paper's Algorithm 1 and the authors' code: β weighs the reported loss only. So, after a
//! flip, the gradient is zero: with plain SGD the mask can never move again and the search stops
//! early (the same result as running out the iterations); with momentum it coasts on.
//!
//! Other choices, each the paper's and the authors' code's unless said: `P̂` starts at 1 on every
//! present pair (σ(1) ≈ 0.73: the unedited graph); the mask is symmetric (one entry per
//! undirected pair); gradients are clipped to norm 2; the neighbourhood has 4 hops (the GCN's 3
//! layers + 1). The counterfactual reported is the smallest found over all iterations (the
//! paper's "best"); the authors' evaluation script reads the first one found instead.

use burn::tensor::Device;
use induce_explain::{Explainer, Explanation, Protocol, Result};
use induce_graph::Graph;
use induce_models::{BlackBox, DegreeGradient, Kernel};
use serde::{Deserialize, Serialize};

use crate::neighbourhood::{Candidates, GradModel, MaskScope, Smallest, check_iterations, sigmoid};
use crate::sgd::{Optimiser, OptimiserState, clip_norm};

/// Settings of [`CfGnnExplainer`]. Defaults are the authors' README run on BA-Shapes
/// (SGD lr 0.01, Nesterov momentum 0.9, β 0.5, 500 iterations); [`CfGnnConfig::trees`] is their
/// Tree-Cycles / Tree-Grid run (lr 0.1, no momentum).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CfGnnConfig {
    /// Optimisation steps K per target.
    pub iterations: usize,
    /// Weight β of the distance term (reported loss only: it has no gradient, see the module
    /// docs).
    pub beta: f32,
    /// The optimiser of `P̂`.
    pub optimiser: Optimiser,
    /// Gradient-norm clipping (2.0, as the authors clip).
    pub clip: Option<f32>,
    /// Initial value of `P̂` on present pairs (σ(1) ≈ 0.73: the original graph); absent pairs
    /// of the "++" variant start at the negative of it.
    pub init: f32,
    /// Deletions only (the published method) or every pair (CF-GNNExplainer++).
    pub candidates: Candidates,
    /// Hops of the neighbourhood (the run's h).
    pub hops: u32,
    /// Refuse ("++") neighbourhoods with more candidate pairs than this.
    pub max_pairs: usize,
    /// Differentiate through the degree normalisation too (false: detached, as the authors'
    /// code).
    pub degree_gradient: bool,
    /// Where gradients are computed (same results; the host kernel is much faster).
    #[serde(default)]
    pub kernel: Kernel,
}

impl Default for CfGnnConfig {
    fn default() -> Self {
        Self {
            iterations: 500,
            beta: 0.5,
            optimiser: Optimiser::Sgd {
                lr: 0.01,
                momentum: 0.9,
                nesterov: true,
            },
            clip: Some(2.0),
            init: 1.0,
            candidates: Candidates::ExistingEdges,
            hops: 4,
            max_pairs: 2_000_000,
            degree_gradient: false,
            kernel: Kernel::Host,
        }
    }
}

impl CfGnnConfig {
    /// The authors' Tree-Cycles / Tree-Grid settings: SGD lr 0.1 without momentum.
    pub fn trees() -> Self {
        Self {
            optimiser: Optimiser::Sgd {
                lr: 0.1,
                momentum: 0.0,
                nesterov: false,
            },
            ..Self::default()
        }
    }

    /// The same settings with additions: the "++" variant.
    pub fn plus_plus(self) -> Self {
        Self {
            candidates: Candidates::AllPairs,
            ..self
        }
    }
}

/// CF-GNNExplainer and CF-GNNExplainer++ (see the [module docs](self)).
///
/// Needs a black box with gradients with respect to edge weights
/// ([`BlackBox::differentiable`]); its predictions decide the flip and the reported labels.
pub struct CfGnnExplainer<'a> {
    name: String,
    model: GradModel,
    scope: MaskScope<'a>,
    config: CfGnnConfig,
}

impl<'a> CfGnnExplainer<'a> {
    /// The explainer named `cf-gnnexplainer` (or `cf-gnnexplainer++` with all pairs). Errors if
    /// the black box provides no gradients
    /// ([`ExplainError::NotDifferentiable`](induce_explain::ExplainError::NotDifferentiable)) or its parameters cannot be read. Its verdicts
    /// are the run's `protocol`'s.
    pub fn new(
        black_box: &'a dyn BlackBox,
        config: CfGnnConfig,
        protocol: Protocol,
        device: &Device,
    ) -> Result<Self> {
        let name = match config.candidates {
            Candidates::ExistingEdges => "cf-gnnexplainer",
            Candidates::AllPairs => "cf-gnnexplainer++",
        };
        Ok(Self {
            name: name.into(),
            model: GradModel::of(black_box, name, config.kernel, device)?,
            scope: MaskScope::new(black_box, config.hops, protocol.verdict),
            config,
        })
    }
}

impl Explainer for CfGnnExplainer<'_> {
    fn name(&self) -> &str {
        &self.name
    }

    fn neighbourhood_hops(&self) -> Option<u32> {
        Some(self.scope.search_hops())
    }

    fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation> {
        let c = &self.config;
        check_iterations("cf-gnnexplainer", c.iterations, "optimisation step")?;
        let p = self
            .scope
            .problem(graph, target, c.candidates, c.max_pairs)?;
        let soft = p.differentiable(&self.model)?;
        let y = p.original_label;
        let mut params: Vec<f32> = p
            .present
            .iter()
            .map(|&e| if e { c.init } else { -c.init })
            .collect();
        let mut opt = OptimiserState::new(c.optimiser.clone(), params.len());
        let mut keep = vec![false; params.len()];
        let mut cached: Option<(Vec<bool>, usize)> = None;
        let mut best = Smallest::default();
        for _ in 0..c.iterations {
            for (k, &v) in keep.iter_mut().zip(&params) {
                *k = v >= 0.0; // σ(v) ≥ ½
            }
            let label = match &cached {
                Some((m, l)) if *m == keep => *l,
                _ => {
                    let l = p.label(&keep)?;
                    cached = Some((keep.clone(), l));
                    l
                }
            };
            if label != y {
                best.offer(&p, &keep, p.distance(&keep), label);
                if opt.is_at_rest() {
                    break; // zero gradient from here on: nothing can change
                }
                let zero = vec![0.0; params.len()];
                opt.step(&mut params, &zero);
                continue;
            }
            // L = log p(y | σ(P̂)): ∂L/∂ log p = e_y; chain rule through σ.
            let sig: Vec<f32> = params.iter().map(|&v| sigmoid(v)).collect();
            let degrees = match c.degree_gradient {
                true => DegreeGradient::Through,
                false => DegreeGradient::Detached,
            };
            let (_, mut g) = soft.log_probs_and_grad(&sig, degrees, |lp| {
                let mut e = vec![0.0; lp.len()];
                e[y] = 1.0;
                e
            })?;
            for (gi, s) in g.iter_mut().zip(&sig) {
                *gi *= s * (1.0 - s);
            }
            if let Some(m) = c.clip {
                clip_norm(&mut g, m);
            }
            opt.step(&mut params, &g);
        }
        Ok(best.explanation(&p))
    }
}

#[cfg(test)]
mod tests {
    /// The default protocol (the baselines search their own radius).
    const EXACT: induce_explain::Protocol = induce_explain::Protocol::exact(4);
    use super::*;
    use crate::neighbourhood::fixtures::{beacon_gcn, beacon_graph};
    use induce_explain::{Edit, ExplainError};
    use induce_models::GcnBlackBox;
    use induce_models::testing::test_device;

    #[test]
    fn deletes_the_one_edge_the_label_depends_on() {
        let d = test_device().unwrap();
        let m = beacon_gcn(&d);
        let bb = GcnBlackBox::new(m.clone(), &d);
        let g = beacon_graph(&[(0, 1), (0, 2), (2, 3)]);
        for cfg in [CfGnnConfig::default(), CfGnnConfig::trees()] {
            let x = CfGnnExplainer::new(&bb, cfg, EXACT, &d).unwrap();
            assert_eq!(x.name(), "cf-gnnexplainer");
            let e = x.explain(&g, 0).unwrap();
            assert!(e.found, "{e:?}");
            assert_eq!((e.original_label, e.new_label), (1, 0));
            assert_eq!(e.edits, vec![Edit::delete(0, 1)]);
            assert_eq!(x.explain(&g, 0).unwrap(), e, "deterministic");
        }
    }

    #[test]
    fn host_and_burn_kernels_agree() {
        let d = test_device().unwrap();
        let m = beacon_gcn(&d);
        let bb = GcnBlackBox::new(m.clone(), &d);
        let g = beacon_graph(&[(0, 1), (0, 2), (2, 3), (1, 3)]);
        for base in [CfGnnConfig::default(), CfGnnConfig::trees().plus_plus()] {
            let run = |kernel| {
                let cfg = CfGnnConfig {
                    kernel,
                    ..base.clone()
                };
                CfGnnExplainer::new(&bb, cfg, EXACT, &d)
                    .unwrap()
                    .explain(&g, 0)
                    .unwrap()
            };
            assert_eq!(run(Kernel::Host), run(Kernel::Burn));
        }
        for base in [crate::Cf2Config::default(), crate::Cf2Config::trees()] {
            let run = |kernel| {
                let cfg = crate::Cf2Config {
                    kernel,
                    iterations: 200,
                    ..base.clone()
                };
                crate::Cf2Explainer::new(&bb, cfg, EXACT, &d)
                    .unwrap()
                    .explain(&g, 0)
                    .unwrap()
            };
            assert_eq!(run(Kernel::Host), run(Kernel::Burn));
        }
    }

    #[test]
    fn plus_plus_adds_the_missing_edge() {
        let d = test_device().unwrap();
        let m = beacon_gcn(&d);
        let bb = GcnBlackBox::new(m.clone(), &d);
        // 0 ─ 2 ─ 1: the beacon is two hops away, node 0 is class 0; only an addition helps.
        let g = beacon_graph(&[(0, 2), (1, 2)]);
        let plain = CfGnnExplainer::new(&bb, CfGnnConfig::trees(), EXACT, &d).unwrap();
        assert!(!plain.explain(&g, 0).unwrap().found);
        let pp = CfGnnExplainer::new(&bb, CfGnnConfig::trees().plus_plus(), EXACT, &d).unwrap();
        assert_eq!(pp.name(), "cf-gnnexplainer++");
        let e = pp.explain(&g, 0).unwrap();
        assert!(e.found, "{e:?}");
        assert_eq!((e.original_label, e.new_label), (0, 1));
        assert!(e.edits.contains(&Edit::add(0, 1)), "{e:?}");
    }

    #[test]
    fn bad_settings_are_typed_errors() {
        let d = test_device().unwrap();
        let m = beacon_gcn(&d);
        let bb = GcnBlackBox::new(m.clone(), &d);
        let g = beacon_graph(&[(0, 1)]);
        let zero = CfGnnConfig {
            iterations: 0,
            ..CfGnnConfig::default()
        };
        assert!(matches!(
            CfGnnExplainer::new(&bb, zero, EXACT, &d)
                .unwrap()
                .explain(&g, 0),
            Err(ExplainError::InvalidConfig(_))
        ));
        let x = CfGnnExplainer::new(&bb, CfGnnConfig::default(), EXACT, &d).unwrap();
        assert!(matches!(
            x.explain(&g, 3),
            Err(ExplainError::NoCandidate { target: 3 })
        ));
        assert!(matches!(
            x.explain(&g, 7),
            Err(ExplainError::TargetOutOfRange { target: 7, .. })
        ));
    }

    /// A black box without gradients is refused by every gradient-based baseline, by name,
    /// instead of being explained through some other model's gradients.
    #[test]
    fn a_black_box_without_gradients_is_refused() {
        use crate::neighbourhood::fixtures::DegreeAtLeast;
        let d = test_device().unwrap();
        let bb = DegreeAtLeast(2);
        let g = beacon_graph(&[(0, 1)]);
        let names = |r: Result<()>| match r {
            Err(ExplainError::NotDifferentiable { method }) => method,
            other => panic!("expected NotDifferentiable, got {other:?}"),
        };
        let plus = CfGnnConfig::default().plus_plus();
        assert_eq!(
            names(CfGnnExplainer::new(&bb, CfGnnConfig::default(), EXACT, &d).map(|_| ())),
            "cf-gnnexplainer"
        );
        assert_eq!(
            names(CfGnnExplainer::new(&bb, plus, EXACT, &d).map(|_| ())),
            "cf-gnnexplainer++"
        );
        let cf2 = crate::Cf2Explainer::new(&bb, crate::Cf2Config::default(), EXACT, &d);
        assert_eq!(names(cf2.map(|_| ())), "cf2");
        let pg = crate::PgExplainer::train(&g, &bb, &[0], crate::PgConfig::default(), EXACT, &d);
        let e = pg.map(|_| ()).unwrap_err();
        assert!(
            e.to_string()
                .contains("pgexplainer needs the black box's gradients"),
            "{e}"
        );
    }
}
