//! The Random baseline of CF-GNNExplainer (Lucic et al., AISTATS 2022), as the InduCE paper runs
//! it: random deletion masks over the target's neighbourhood.

use induce_explain::{ExplainError, Explainer, Explanation, Protocol, Result};
use induce_graph::{DEFAULT_SEED, Graph};
use induce_models::BlackBox;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::neighbourhood::{MaskScope, Smallest, check_iterations, target_seed};

/// Settings of [`RandomExplainer`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RandomConfig {
    /// Number of random masks tried per target (the budget; CF-GNNExplainer's K = 500).
    pub iterations: usize,
    /// Probability that a mask keeps an edge (½: a uniformly random subgraph mask).
    pub keep_probability: f64,
    /// Hops of the neighbourhood the masks range over (the run's h; 4 in the paper).
    pub hops: u32,
    /// Seed; each target mixes in its id.
    pub seed: u64,
}

impl Default for RandomConfig {
    fn default() -> Self {
        Self {
            iterations: 500,
            keep_probability: 0.5,
            hops: 4,
            seed: DEFAULT_SEED,
        }
    }
}

/// Random: draws `iterations` masks over the existing edges of the target's neighbourhood (each
/// edge kept with probability `keep_probability`), asks the black box about each and keeps the
/// smallest mask that flips the label (the first on ties). Not found if none does.
///
/// ```
/// use induce_baselines::{RandomConfig, RandomExplainer};
/// use induce_explain::Explainer;
/// use induce_graph::{Features, Graph};
/// use induce_models::testing::DegreeAtLeast;
///
/// //  0 ─ 1 ─ 2: node 1 loses class 1 when either edge goes
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], Features::constant(3, 1, 1.0), vec![0; 3])
///     .unwrap();
/// let e = RandomExplainer::new(&DegreeAtLeast(2), RandomConfig::default(), induce_explain::Protocol::exact(4)).explain(&g, 1).unwrap();
/// assert!(e.found);
/// assert_eq!((e.size(), e.new_label), (1, 0));
/// ```
pub struct RandomExplainer<'a> {
    scope: MaskScope<'a>,
    config: RandomConfig,
}

impl<'a> RandomExplainer<'a> {
    /// Random masks judged by `black_box` with the run's `protocol` (its verdicts).
    pub fn new(black_box: &'a dyn BlackBox, config: RandomConfig, protocol: Protocol) -> Self {
        Self {
            scope: MaskScope::new(black_box, config.hops, protocol.verdict),
            config,
        }
    }
}

impl Explainer for RandomExplainer<'_> {
    fn name(&self) -> &str {
        "random"
    }

    fn neighbourhood_hops(&self) -> Option<u32> {
        Some(self.scope.search_hops())
    }

    fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation> {
        let c = &self.config;
        check_iterations("random", c.iterations, "random mask")?;
        if !(0.0..=1.0).contains(&c.keep_probability) {
            return Err(ExplainError::InvalidConfig(format!(
                "keep_probability must lie in [0, 1], got {}",
                c.keep_probability
            )));
        }
        let p = self.scope.existing_edges(graph, target)?;
        let mut rng = StdRng::seed_from_u64(target_seed(c.seed, target));
        let mut best = Smallest::default();
        let mut keep = vec![true; p.pairs.len()];
        for _ in 0..c.iterations {
            for k in keep.iter_mut() {
                *k = rng.random_bool(c.keep_probability);
            }
            let size = p.distance(&keep);
            if size == 0 || !best.would_keep(size) {
                continue;
            }
            best.offer(&p, &keep, size, p.label(&keep)?);
        }
        Ok(best.explanation(&p))
    }
}

#[cfg(test)]
mod tests {
    /// The default protocol (the baselines search their own radius).
    const EXACT: induce_explain::Protocol = induce_explain::Protocol::exact(4);
    use super::*;
    use crate::neighbourhood::fixtures::DegreeAtLeast;
    use induce_graph::Features;

    /// A star: centre 0 with 6 leaves.
    fn star() -> Graph {
        let edges: Vec<(u32, u32)> = (1..7).map(|w| (0, w)).collect();
        Graph::from_edges(7, &edges, Features::constant(7, 1, 1.0), vec![0; 7]).unwrap()
    }

    #[test]
    fn keeps_the_smallest_flip_and_is_seeded() {
        // Class 1 needs degree ≥ 6: deleting any one spoke flips the centre; 500 draws find one.
        let bb = DegreeAtLeast(6);
        let x = RandomExplainer::new(&bb, RandomConfig::default(), EXACT);
        let e = x.explain(&star(), 0).unwrap();
        assert!(e.found);
        assert_eq!((e.original_label, e.new_label, e.size()), (1, 0, 1));
        assert_eq!(x.explain(&star(), 0).unwrap(), e);
        // Another seed may pick another spoke, never a larger set.
        let other = RandomExplainer::new(
            &bb,
            RandomConfig {
                seed: 9,
                ..RandomConfig::default()
            },
            EXACT,
        );
        assert_eq!(other.explain(&star(), 0).unwrap().size(), 1);
    }

    #[test]
    fn nothing_flips_means_not_found_and_bad_settings_are_errors() {
        // Class 1 iff degree ≥ 0: always class 1, nothing can flip it.
        let bb = DegreeAtLeast(0);
        let e = RandomExplainer::new(&bb, RandomConfig::default(), EXACT)
            .explain(&star(), 0)
            .unwrap();
        assert!(!e.found && e.edits.is_empty());
        let zero = RandomConfig {
            iterations: 0,
            ..RandomConfig::default()
        };
        assert!(matches!(
            RandomExplainer::new(&bb, zero, EXACT).explain(&star(), 0),
            Err(ExplainError::InvalidConfig(_))
        ));
        let p = RandomConfig {
            keep_probability: 1.5,
            ..RandomConfig::default()
        };
        assert!(matches!(
            RandomExplainer::new(&bb, p, EXACT).explain(&star(), 0),
            Err(ExplainError::InvalidConfig(_))
        ));
    }
}
