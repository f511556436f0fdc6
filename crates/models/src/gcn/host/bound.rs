//! [`HostGcn`] bound to one whole graph ([`BlackBox::bind_graph`](crate::BlackBox::bind_graph)): `X W₁` and the first layer of
//! every node computed once, then one node's prediction with a few pairs toggled read from its
//! receptive field ([`GraphOverlay`]).

use std::sync::Arc;

use induce_graph::Graph;

use super::{FirstLayer, HostGcn, Neighbours, Projected, TargetState};
use crate::black_box::{GraphBinding, StateBinding};
use crate::error::{ModelError, Result};

/// A graph with a few node pairs toggled, read without copying it: the edges of `graph`, minus
/// the toggled pairs that are edges, plus the toggled pairs that are not.
///
/// ```
/// use induce_graph::{Features, Graph};
/// use induce_models::gcn::host::{GraphOverlay, Neighbours};
/// //  0 ─ 1 ─ 2      toggle (1, 2) and (0, 2):   0 ─ 1   0 ─ 2
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], Features::constant(3, 1, 1.0), vec![0; 3])
///     .unwrap();
/// let o = GraphOverlay::new(&g, &[(1, 2), (0, 2)]).unwrap();
/// let mut nb = Vec::new();
/// o.neighbours(0, &mut nb);
/// assert_eq!(nb, [1, 2]);
/// assert_eq!((o.degree(1), o.degree(2)), (1, 1));
/// assert!(GraphOverlay::new(&g, &[(0, 3)]).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct GraphOverlay<'g> {
    graph: &'g Graph,
    /// `(u, w, added)`: each toggled pair once.
    edits: Vec<(u32, u32, bool)>,
    /// The unedited graph's `1 / sqrt(deg + 1)` per node, where the overlay has the table.
    norms: Option<&'g [f32]>,
}

impl<'g> GraphOverlay<'g> {
    /// `graph` with each pair of `toggled` toggled (a pair listed twice is toggled back).
    ///
    /// Errors: [`ModelError::InvalidInput`] for an id outside the graph or a self loop.
    pub fn new(graph: &'g Graph, toggled: &[(u32, u32)]) -> Result<Self> {
        let n = graph.num_nodes();
        let mut edits: Vec<(u32, u32, bool)> = Vec::with_capacity(toggled.len());
        for &(a, b) in toggled {
            if let Some(x) = [a, b].into_iter().find(|&x| x as usize >= n) {
                return Err(ModelError::InvalidInput(format!(
                    "pair ({a}, {b}) has node {x} outside the graph's {n} nodes"
                )));
            }
            if a == b {
                return Err(ModelError::InvalidInput(format!(
                    "pair ({a}, {a}) is a self loop, not an edge"
                )));
            }
            let (u, w) = (a.min(b), a.max(b));
            match edits.iter().position(|e| (e.0, e.1) == (u, w)) {
                Some(i) => {
                    edits.swap_remove(i);
                }
                None => {
                    let added = graph.sorted_neighbors(u).binary_search(&w).is_err();
                    edits.push((u, w, added));
                }
            }
        }
        Ok(Self {
            graph,
            edits,
            norms: None,
        })
    }

    /// The overlay reading the normalisation of every node no toggle touches from `norms`, the
    /// unedited graph's `1 / sqrt(deg(v) + 1)` (the same values, without a degree lookup and a
    /// square root per aggregated edge).
    ///
    /// Errors: [`ModelError::InvalidInput`] when `norms` has not one entry per node.
    pub(crate) fn with_norms(mut self, norms: &'g [f32]) -> Result<Self> {
        if norms.len() != self.graph.num_nodes() {
            return Err(ModelError::InvalidInput(format!(
                "{} normalisations for a graph of {} nodes",
                norms.len(),
                self.graph.num_nodes()
            )));
        }
        self.norms = Some(norms);
        Ok(self)
    }

    /// The unedited graph.
    pub fn graph(&self) -> &'g Graph {
        self.graph
    }

    /// The endpoints of every toggled pair.
    pub fn changed(&self) -> Vec<u32> {
        self.edits.iter().flat_map(|e| [e.0, e.1]).collect()
    }

    fn other(v: u32, e: &(u32, u32, bool)) -> Option<u32> {
        if e.0 == v {
            Some(e.1)
        } else if e.1 == v {
            Some(e.0)
        } else {
            None
        }
    }
}

impl Neighbours for GraphOverlay<'_> {
    fn num_nodes(&self) -> usize {
        self.graph.num_nodes()
    }

    fn neighbours(&self, v: u32, out: &mut Vec<u32>) {
        let row = self.graph.sorted_neighbors(v);
        if !self.edits.iter().any(|e| e.0 == v || e.1 == v) {
            out.extend_from_slice(row);
            return;
        }
        let deleted = |w: &u32| {
            self.edits
                .iter()
                .any(|e| !e.2 && Self::other(v, e) == Some(*w))
        };
        out.extend(row.iter().filter(|w| !deleted(w)));
        out.extend(
            self.edits
                .iter()
                .filter(|e| e.2)
                .filter_map(|e| Self::other(v, e)),
        );
    }

    fn inv_sqrt_degree(&self, v: u32) -> f32 {
        match self.norms {
            Some(norms) if !self.edits.iter().any(|e| e.0 == v || e.1 == v) => norms[v as usize],
            _ => 1.0 / ((self.degree(v) + 1) as f32).sqrt(),
        }
    }

    fn degree(&self, v: u32) -> usize {
        let mut d = self.graph.sorted_neighbors(v).len();
        for e in &self.edits {
            if Self::other(v, e).is_some() {
                if e.2 {
                    d += 1;
                } else {
                    d -= 1;
                }
            }
        }
        d
    }
}

/// A [`HostGcn`] bound to one graph: its projection `X W₁` and first layer on every node,
/// computed once (`O(E · hidden)`), then any node's prediction after a few toggles from its
/// receptive field ([`HostGcn::log_probs_at`] / [`HostGcn::log_probs_at_edited`]).
pub(crate) struct BoundHostGcn<'a> {
    gcn: &'a HostGcn,
    graph: &'a Graph,
    /// `X W₁`, shared with the GCN's projection cache.
    xw: Arc<Projected>,
    base: FirstLayer,
}

impl<'a> BoundHostGcn<'a> {
    pub(crate) fn new(gcn: &'a HostGcn, graph: &'a Graph) -> Result<Self> {
        let xw = gcn.cached_projection(graph.features())?;
        let base = gcn.first_layer(&xw, &GraphOverlay::new(graph, &[])?)?;
        Ok(Self {
            gcn,
            graph,
            xw,
            base,
        })
    }
}

impl GraphBinding for BoundHostGcn<'_> {
    fn log_probs_at(&self, node: u32, toggled: &[(u32, u32)]) -> Result<Vec<f32>> {
        let g = GraphOverlay::new(self.graph, toggled)?.with_norms(self.base.norms())?;
        self.gcn.log_probs_at(&self.xw, &g, node)
    }

    fn log_probs_at_edited(&self, node: u32, toggled: &[(u32, u32)]) -> Result<Vec<f32>> {
        let g = GraphOverlay::new(self.graph, toggled)?.with_norms(self.base.norms())?;
        self.gcn
            .log_probs_at_delta(&self.xw, &self.base, &g, &g.changed(), node)
    }

    fn log_probs_checked(&self, node: u32, toggled: &[(u32, u32)]) -> Result<Vec<f32>> {
        let g = GraphOverlay::new(self.graph, toggled)?.with_norms(self.base.norms())?;
        self.gcn
            .log_probs_at_edited(&self.xw, &self.base, &g, &g.changed(), node)
    }

    /// The new rows' `x W₁` (one row each), then the edited first-layer rows they reach.
    fn log_probs_at_rows(
        &self,
        node: u32,
        toggled: &[(u32, u32)],
        rows: &[(u32, &[f32])],
    ) -> Result<Option<Vec<f32>>> {
        let d = self.graph.features().dim();
        if let Some((v, r)) = rows.iter().find(|(_, r)| r.len() != d) {
            return Err(ModelError::InvalidInput(format!(
                "a feature row of {} values for node {v}; the features have {d}",
                r.len()
            )));
        }
        let g = GraphOverlay::new(self.graph, toggled)?.with_norms(self.base.norms())?;
        let projected: Vec<(u32, Vec<f32>)> = rows
            .iter()
            .map(|&(v, r)| (v, self.gcn.project_row(r)))
            .collect();
        self.gcn
            .log_probs_at_edited_rows(&self.xw, &self.base, &g, &g.changed(), &projected, node)
            .map(Some)
    }

    fn state_at(
        &self,
        node: u32,
        toggled: &[(u32, u32)],
    ) -> Result<Option<Box<dyn StateBinding + '_>>> {
        let state = TargetState::new(self.gcn, &self.xw, &self.base, self.graph, node, toggled)?;
        Ok(Some(Box::new(state)))
    }
}

impl StateBinding for TargetState<'_> {
    fn log_probs_toggling(&mut self, pair: (u32, u32)) -> Result<Vec<f32>> {
        TargetState::log_probs_toggling(self, pair)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GcnConfig;
    use crate::testing::test_device;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    /// On a random graph with a hub, every node's bound prediction after additions and
    /// deletions (through the hub, and far away) equals the whole-graph pass on the edited
    /// graph, both from scratch and from the cached first layer.
    #[test]
    fn bound_predictions_equal_the_whole_graph_after_toggles() {
        let dev = test_device().unwrap();
        let mut rng = StdRng::seed_from_u64(5);
        let (n, d) = (60u32, 12);
        let (edges, x) = super::super::tests::hub_tree(&mut rng, (n, d), (3, 10), 0, 0.0);
        let g = Graph::from_edges(n as usize, &edges, x.clone(), vec![0; n as usize]).unwrap();
        let gcn = HostGcn::from_gcn(&GcnConfig::new(d, 3).with_init_seed(9).init(&dev)).unwrap();
        let bound = BoundHostGcn::new(&gcn, &g).unwrap();
        // The edge list with each toggled pair removed if present, added if not.
        let toggle = |edges: &[(u32, u32)], toggled: &[(u32, u32)]| {
            let mut now = edges.to_vec();
            for &(a, b) in toggled {
                match now.iter().position(|&e| e == (a.min(b), a.max(b))) {
                    Some(i) => {
                        now.remove(i);
                    }
                    None => now.push((a.min(b), a.max(b))),
                }
            }
            now
        };
        let deleted = edges[7];
        for toggled in [
            vec![],
            vec![(3, 40), (0, 59)],
            vec![deleted, (3, 12), (20, 21)],
        ] {
            let now = toggle(&edges, &toggled);
            let all = gcn.forward(&x, &now).unwrap();
            for v in 0..n {
                for got in [
                    bound.log_probs_at(v, &toggled).unwrap(),
                    bound.log_probs_at_edited(v, &toggled).unwrap(),
                    bound.log_probs_checked(v, &toggled).unwrap(),
                ] {
                    for (a, b) in got.iter().zip(all.row(v as usize)) {
                        assert!((a - b).abs() < 1e-5, "node {v}, {toggled:?}");
                    }
                }
            }
        }
        // Feature edits: rows of the hub (3) and of a leaf replaced.
        let entries = [(3, 0, 2.0), (3, 5, 0.0), (59, 11, 1.0)];
        let x2 = x.with_entries(&entries).unwrap();
        let rows: Vec<(u32, &[f32])> = [3u32, 59]
            .iter()
            .map(|&v| (v, x2.row(v as usize)))
            .collect();
        for toggled in [vec![], vec![(3, 40), (0, 59)]] {
            let now = toggle(&edges, &toggled);
            let all = gcn.forward(&x2, &now).unwrap();
            for v in 0..n {
                let got = bound
                    .log_probs_at_rows(v, &toggled, &rows)
                    .unwrap()
                    .unwrap();
                for (a, b) in got.iter().zip(all.row(v as usize)) {
                    assert!((a - b).abs() < 1e-5, "node {v}, {toggled:?}, rows changed");
                }
            }
        }
        assert!(bound.log_probs_at_rows(0, &[], &[(3, &[0.0])]).is_err());
        assert!(bound.log_probs_at(n, &[]).is_err());
        assert!(bound.log_probs_at_edited(0, &[(4, 4)]).is_err());
        assert!(bound.log_probs_at_edited(0, &[(4, n)]).is_err());
        assert!(bound.log_probs_checked(0, &[(4, n)]).is_err());
    }
}
