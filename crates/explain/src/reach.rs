//! How far a black box's output for a node reaches, measured on the graph it explains.
//!
//! Exact verdicts ([`Verdict::Exact`](crate::Verdict::Exact)) evaluate a target on its
//! receptive field, the `L + 1`-hop ball of `L` = [`BlackBox::message_passing_layers`]. That is
//! exact only when `L` is right. For a model that counts its layers itself (the library's GCN,
//! the converted PyG stacks: [`LayersSource::Derived`]) it is right by construction. A count
//! from outside (a Python callback's modules, the user's `layers=`) can be too small: a layer
//! that propagates `K` hops, a global readout. [`check_reach`] compares, on a sample of nodes,
//! each node's output on its claimed field with its output on the whole graph; where they
//! differ it widens the radius one hop at a time, and falls back to the whole graph when a
//! widened ball stops growing (the model reads beyond the node's component: a global readout)
//! or passes [`MAX_LAYERS`].
//!
//! ```text
//!   0 ─ 1 ─ 2 ─ 3 ─ 4      a model that claims 1 layer (field: the 2-hop ball of 0 = {0,1,2})
//!                          but propagates 3 hops: 0's output on {0,1,2} ≠ on the whole path,
//!                          on {0,1,2,3} (2 layers) too; on {0,…,4} (3 layers) they agree
//! ```

use induce_graph::{Graph, k_hop};
use induce_models::{BlackBox, LayersSource, LogProbs};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;

use crate::error::{ExplainError, Result};

/// The largest difference of a log-probability, relative to `1 + |whole-graph value|`, that
/// still counts as the same output (float summation order differs between a ball and the
/// whole graph).
pub const TOLERANCE: f32 = 1e-4;

/// Widening stops here: a model whose outputs still reach further is judged on the whole graph.
pub const MAX_LAYERS: u32 = 8;

/// Random nodes of the graph checked besides the targets.
pub const CHECKED_RANDOM: usize = 32;

/// How far a model's outputs reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// `L` message-passing layers: a node's output is its output on its `L + 1`-hop ball.
    Layers(u32),
    /// The whole graph: every verdict evaluates it.
    WholeGraph,
}

impl Reach {
    /// As [`BlackBox::message_passing_layers`] states it.
    pub fn layers(self) -> Option<u32> {
        match self {
            Reach::Layers(l) => Some(l),
            Reach::WholeGraph => None,
        }
    }

    /// From [`BlackBox::message_passing_layers`].
    pub fn of(layers: Option<u32>) -> Self {
        layers.map_or(Reach::WholeGraph, Reach::Layers)
    }
}

impl std::fmt::Display for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reach::Layers(l) => write!(
                f,
                "{l} message-passing hops (verdicts on {}-hop fields)",
                l + 1
            ),
            Reach::WholeGraph => f.write_str("the whole graph (every verdict evaluates it)"),
        }
    }
}

/// What [`check_reach`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct ReachCheck {
    /// The layers the black box claimed.
    pub claimed: Option<u32>,
    /// How it knows them.
    pub source: LayersSource,
    /// How far its outputs reach on the checked nodes.
    pub reach: Reach,
    /// Nodes compared with the whole graph (0: nothing to check).
    pub nodes: usize,
}

impl ReachCheck {
    /// Whether the measured reach differs from the claim (the run then judges on the measured
    /// one).
    pub fn widened(&self) -> bool {
        self.reach.layers() != self.claimed
    }

    /// The run's note, when the reach was widened.
    pub fn note(&self) -> Option<String> {
        let claimed = self.claimed.map_or("none".into(), |l| l.to_string());
        self.widened().then(|| {
            format!(
                "receptive field: the model claims {claimed} message-passing layers, but on \
                 {} nodes of the graph its outputs reach {}: verdicts follow the measurement",
                self.nodes, self.reach
            )
        })
    }
}

/// The nodes [`check_reach`] compares for a run: every one of its targets (one evaluation of
/// each target's field, against the tens a target's explanation costs) and [`CHECKED_RANDOM`]
/// nodes drawn with `seed`, without repeats.
pub fn reach_sample(graph: &Graph, targets: &[u32], seed: u64) -> Vec<u32> {
    let mut nodes: Vec<u32> = targets.to_vec();
    let all: Vec<u32> = (0..graph.num_nodes() as u32).collect();
    let mut rng = StdRng::seed_from_u64(seed ^ 0x2eac_4000);
    nodes.extend(all.choose_multiple(&mut rng, CHECKED_RANDOM));
    let mut seen = std::collections::HashSet::new();
    nodes.retain(|v| seen.insert(*v));
    nodes
}

/// Measures how far `black_box`'s outputs reach on `nodes` of `graph` (see the module docs).
/// A model whose layers are [`LayersSource::Derived`], or that claims none, is not evaluated.
///
/// Errors: [`ExplainError::ReachExceedsDeclared`] when the layers were
/// [`LayersSource::Declared`] and the outputs reach further; the black box's errors; a node out
/// of range.
pub fn check_reach(graph: &Graph, black_box: &dyn BlackBox, nodes: &[u32]) -> Result<ReachCheck> {
    let claimed = black_box.message_passing_layers();
    let source = black_box.layers_source();
    let mut check = ReachCheck {
        claimed,
        source,
        reach: Reach::of(claimed),
        nodes: 0,
    };
    let Some(first) = claimed.filter(|_| source != LayersSource::Derived) else {
        return Ok(check);
    };
    if nodes.is_empty() {
        return Ok(check);
    }
    let whole = black_box.log_probs(graph.features(), &graph.edges())?;
    check.nodes = nodes.len();
    let mut layers = first;
    let mut first_miss = None;
    let mut missed = Vec::new();
    // A ball that no longer grows holds the node's whole component.
    let complete = |v: u32, layers: u32| -> Result<bool> {
        Ok(k_hop(graph, v, layers + 1)?.num_nodes() == k_hop(graph, v, layers + 2)?.num_nodes())
    };
    check.reach = loop {
        let Some(miss) = first_mismatch(graph, black_box, nodes, &whole, layers)? else {
            // Widened until a missed node's ball holds its whole component: that agreement
            // cannot tell a wide model from one that reads the whole graph (an edit that
            // disconnects the component would), so the whole graph it is.
            let mut whole_component = false;
            for &v in &missed {
                whole_component |= complete(v, layers)?;
            }
            break match whole_component {
                true => Reach::WholeGraph,
                false => Reach::Layers(layers),
            };
        };
        first_miss.get_or_insert(miss);
        missed.push(miss.0);
        // A model that still answers otherwise than on the whole component reads beyond it.
        if complete(miss.0, layers)? || layers >= MAX_LAYERS {
            break Reach::WholeGraph;
        }
        layers += 1;
    };
    if let (LayersSource::Declared, Some((node, difference))) = (source, first_miss) {
        return Err(ExplainError::ReachExceedsDeclared {
            declared: first,
            node,
            radius: first + 1,
            difference,
            measured: check.reach.to_string(),
        });
    }
    Ok(check)
}

/// The first of `nodes` whose output on its `layers + 1`-hop ball differs from `whole`'s row,
/// with the largest difference.
fn first_mismatch(
    graph: &Graph,
    black_box: &dyn BlackBox,
    nodes: &[u32],
    whole: &LogProbs,
    layers: u32,
) -> Result<Option<(u32, f32)>> {
    for &v in nodes {
        let sub = k_hop(graph, v, layers + 1)?;
        let lp = black_box.log_probs(&sub.features(graph), &sub.edges)?;
        let (ball, all) = (lp.row(sub.target_local), whole.row(v as usize));
        let worst = (ball.iter().zip(all))
            .map(|(a, b)| (a - b).abs() / (1.0 + b.abs()))
            .fold(0.0f32, f32::max);
        if worst > TOLERANCE || worst.is_nan() {
            return Ok(Some((v, worst)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use induce_graph::Features;
    use induce_models::Result as ModelResult;

    /// A model that propagates a scalar feature `hops` hops as a GCN does (the `K` of SGConv),
    /// optionally
    /// adding the mean over the whole graph (a global readout), and claims `claimed` layers.
    struct Propagate {
        hops: u32,
        readout: bool,
        claimed: Option<u32>,
        source: LayersSource,
    }

    impl BlackBox for Propagate {
        fn input_dim(&self) -> usize {
            1
        }
        fn num_classes(&self) -> usize {
            2
        }
        fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> ModelResult<LogProbs> {
            let n = x.num_nodes();
            let mut deg = vec![1.0f32; n];
            for &(u, w) in edges {
                deg[u as usize] += 1.0;
                deg[w as usize] += 1.0;
            }
            let mut h: Vec<f32> = x.as_slice().to_vec();
            for _ in 0..self.hops {
                // GCN's propagation: self loops, symmetric degree normalisation.
                let mut next: Vec<f32> = (0..n).map(|u| h[u] / deg[u]).collect();
                for &(u, w) in edges {
                    let (u, w) = (u as usize, w as usize);
                    let c = 1.0 / (deg[u] * deg[w]).sqrt();
                    next[u] += c * h[w];
                    next[w] += c * h[u];
                }
                h = next;
            }
            let mean = x.as_slice().iter().sum::<f32>() / n.max(1) as f32;
            let data = h.iter().flat_map(|&s| {
                let s = 0.01 * s + if self.readout { mean } else { 0.0 };
                [-(1.0 + (-s).exp()).ln(), -(1.0 + s.exp()).ln()]
            });
            LogProbs::new(n, 2, data.collect())
        }
        fn message_passing_layers(&self) -> Option<u32> {
            self.claimed
        }
        fn layers_source(&self) -> LayersSource {
            self.source
        }
    }

    /// A path of 12 nodes and, apart, a path of 4, with varied features.
    fn path() -> Graph {
        let mut edges: Vec<(u32, u32)> = (0..11).map(|i| (i, i + 1)).collect();
        edges.extend([(12, 13), (13, 14), (14, 15)]);
        let x = (0..16).map(|i| (i * 5 % 7) as f32 + 1.0).collect();
        Graph::from_edges(16, &edges, Features::new(16, 1, x).unwrap(), vec![0; 16]).unwrap()
    }

    fn model(hops: u32, readout: bool, claimed: u32, source: LayersSource) -> Propagate {
        Propagate {
            hops,
            readout,
            claimed: Some(claimed),
            source,
        }
    }

    #[test]
    fn a_counted_radius_that_is_too_small_is_widened_to_the_hops_the_model_propagates() {
        let g = path();
        let nodes = [0, 5, 11];
        let m = model(3, false, 1, LayersSource::Counted);
        let c = check_reach(&g, &m, &nodes).unwrap();
        assert_eq!(
            (c.claimed, c.reach, c.nodes),
            (Some(1), Reach::Layers(3), 3)
        );
        assert!(c.widened());
        assert!(
            c.note()
                .unwrap()
                .contains("claims 1 message-passing layers")
        );
        // The right count is kept as it is.
        let c = check_reach(&g, &model(3, false, 3, LayersSource::Counted), &nodes).unwrap();
        assert_eq!(
            (c.reach, c.widened(), c.note()),
            (Reach::Layers(3), false, None)
        );
    }

    #[test]
    fn a_global_readout_is_judged_on_the_whole_graph() {
        let g = path();
        // The ball of node 3 stops growing at its component's 12 nodes; the readout also
        // reads the other component.
        let c = check_reach(&g, &model(1, true, 1, LayersSource::Counted), &[3]).unwrap();
        assert_eq!(c.reach, Reach::WholeGraph);
        assert_eq!(c.reach.layers(), None);
        // On one component the widened ball ends up holding all of it and agrees: still the
        // whole graph (deleting an edge could split it).
        let edges: Vec<(u32, u32)> = (0..5).map(|i| (i, i + 1)).collect();
        let x = (0..6).map(|i| i as f32 + 1.0).collect();
        let small = Graph::from_edges(6, &edges, Features::new(6, 1, x).unwrap(), vec![0; 6]);
        let m = model(1, true, 1, LayersSource::Counted);
        let c = check_reach(&small.unwrap(), &m, &[0]).unwrap();
        assert_eq!(c.reach, Reach::WholeGraph);
    }

    #[test]
    fn a_declared_radius_that_is_too_small_is_an_error_naming_the_measured_one() {
        let g = path();
        let e = check_reach(&g, &model(2, false, 1, LayersSource::Declared), &[4]).unwrap_err();
        let ExplainError::ReachExceedsDeclared {
            declared,
            node,
            radius,
            ..
        } = &e
        else {
            panic!("{e}")
        };
        assert_eq!((*declared, *node, *radius), (1, 4, 2));
        assert!(e.to_string().contains("2 message-passing hops"), "{e}");
    }

    #[test]
    fn derived_layers_and_whole_graph_models_are_not_evaluated() {
        let g = path();
        // Wrong on purpose: a derived count is trusted, so nothing is measured.
        let c = check_reach(&g, &model(3, false, 1, LayersSource::Derived), &[0]).unwrap();
        assert_eq!((c.reach, c.nodes), (Reach::Layers(1), 0));
        let whole = Propagate {
            claimed: None,
            ..model(3, true, 0, LayersSource::Counted)
        };
        let c = check_reach(&g, &whole, &[0]).unwrap();
        assert_eq!((c.reach, c.nodes), (Reach::WholeGraph, 0));
    }

    #[test]
    fn the_sample_holds_the_first_targets_and_seeded_random_nodes_once() {
        let g = path();
        let s = reach_sample(&g, &[3, 3, 7], 1);
        assert_eq!(&s[..2], &[3, 7]);
        assert_eq!(s.len(), 16); // every node once: the graph has fewer than 32
        assert_eq!(s, reach_sample(&g, &[3, 3, 7], 1));
    }
}
