//! One node's prediction at a fixed edited state of a bound graph, then with one more pair
//! toggled, from the state's cached rows ([`TargetState`]): the verdicts a search takes on every
//! candidate of one state.
//!
//! A toggle of `(a, b)` changes the degrees of `a` and `b` only. So a first-layer row changes
//! only at `a`, `b` (recomputed) and at their neighbours, where it moves by the change of one
//! normalisation coefficient times a projected row (`O(hidden)` from the state's pre-activation);
//! a second-layer aggregate at a node whose degree is unchanged moves by the terms of the rows
//! that changed. Only the second layer's product (one per changed row) and the target's third
//! layer are computed again.
//!
//! ```text
//!   state: the graph with its edits      candidate: toggle (t, v)
//!     layer 1: rows of t and v recomputed; rows of N(t) and N(v) moved by one term each
//!     layer 2: aggregates of N(t) moved by the changed rows they read; t's recomputed
//!     layer 3: the target's row
//! ```

use std::collections::HashMap;

use super::dense::bias_relu;
use super::{FirstLayer, GraphOverlay, HostGcn, Neighbours, Projected};
use crate::error::{ModelError, Result};
use crate::linalg::matmul_acc;

/// `1 / sqrt(deg(v) + 1)` in `graph`.
fn inv_sqrt(graph: &dyn Neighbours, v: u32) -> f32 {
    graph.inv_sqrt_degree(v)
}

/// `out += c · row`.
fn axpy(out: &mut [f32], c: f32, row: &[f32]) {
    for (o, &r) in out.iter_mut().zip(row) {
        *o += c * r;
    }
}

/// `v`'s neighbours in `graph`, sorted.
fn sorted_neighbours(graph: &dyn Neighbours, v: u32) -> Vec<u32> {
    let mut nb = Vec::new();
    graph.neighbours(v, &mut nb);
    nb.sort_unstable();
    nb
}

/// A [`HostGcn`] bound to a graph ([`FirstLayer`] of the unedited graph) at one edited state,
/// evaluating one node after each single further toggle ([`TargetState::log_probs_toggling`]).
/// Equal to [`HostGcn::log_probs_at_edited`] on the state with the pair toggled, up to float
/// summation order (a test pins it).
///
/// ```
/// use induce_graph::{Features, Graph};
/// use induce_models::device::default_device;
/// use induce_models::gcn::host::{GraphOverlay, TargetState};
/// use induce_models::{GcnConfig, HostGcn};
///
/// //  0 ─ 1 ─ 2 ─ 3      state: (1, 3) added; candidates: (0, 2) added, (2, 3) deleted
/// let x = Features::new(4, 2, vec![0.1, 0.9, 0.4, 0.2, 0.7, 0.3, 0.5, 0.5]).unwrap();
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], x, vec![0; 4]).unwrap();
/// let gcn = HostGcn::from_gcn(&GcnConfig::new(2, 3).init(&default_device().unwrap())).unwrap();
/// let xw = gcn.project(g.features()).unwrap();
/// let base = gcn.first_layer(&xw, &GraphOverlay::new(&g, &[]).unwrap()).unwrap();
/// let mut state = TargetState::new(&gcn, &xw, &base, &g, 0, &[(1, 3)]).unwrap();
/// for pair in [(0, 2), (2, 3)] {
///     let g2 = GraphOverlay::new(&g, &[(1, 3), pair]).unwrap();
///     let want = gcn.log_probs_at_edited(&xw, &base, &g2, &g2.changed(), 0).unwrap();
///     let got = state.log_probs_toggling(pair).unwrap();
///     assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-5));
/// }
/// ```
pub struct TargetState<'g> {
    gcn: &'g HostGcn,
    xw: &'g Projected,
    base: &'g FirstLayer,
    /// The graph with the state's toggles.
    graph: GraphOverlay<'g>,
    /// The state's toggled pairs.
    toggled: Vec<(u32, u32)>,
    node: u32,
    /// Nodes whose first-layer row differs from `base`'s (the state's endpoints and their
    /// neighbours), sorted.
    affected: Vec<u32>,
    /// First-layer pre-activations (bias added) of affected nodes, computed on first use.
    pre: HashMap<u32, Vec<f32>>,
    /// `node`, then its neighbours in the state.
    rows1: Vec<u32>,
    /// Position of each node of `rows1`.
    pos1: HashMap<u32, usize>,
    /// The second layer's aggregates `Â H₁` at `rows1`, `[rows1, k2]`.
    a2: Vec<f32>,
    /// The second layer's output at `rows1`, `[rows1, m2]`.
    h2: Vec<f32>,
}

impl<'g> TargetState<'g> {
    /// `gcn` at `node` of `graph` with `toggled` applied, `xw` and `base` its projection and
    /// first layer on the unedited graph ([`HostGcn::first_layer`]).
    ///
    /// Errors: [`ModelError::InvalidInput`] for a node or pair outside the graph, a self loop,
    /// or layers cached for another graph.
    pub fn new(
        gcn: &'g HostGcn,
        xw: &'g Projected,
        base: &'g FirstLayer,
        graph: &'g induce_graph::Graph,
        node: u32,
        toggled: &[(u32, u32)],
    ) -> Result<Self> {
        let n = graph.num_nodes();
        if base.num_nodes != n || xw.num_nodes != n || node as usize >= n {
            return Err(ModelError::InvalidInput(format!(
                "node {node} of a graph with {n} nodes and cached layers for {} nodes",
                base.num_nodes
            )));
        }
        let overlay = GraphOverlay::new(graph, toggled)?.with_norms(base.norms())?;
        let mut affected = overlay.changed();
        for a in affected.clone() {
            overlay.neighbours(a, &mut affected);
        }
        affected.sort_unstable();
        affected.dedup();
        let mut rows1 = vec![node];
        overlay.neighbours(node, &mut rows1);
        let pos1 = rows1.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        let mut state = Self {
            gcn,
            xw,
            base,
            graph: overlay,
            toggled: toggled.to_vec(),
            node,
            affected,
            pre: HashMap::new(),
            rows1,
            pos1,
            a2: Vec::new(),
            h2: Vec::new(),
        };
        let (k2, m2) = (gcn.convs[1].k, gcn.convs[1].m);
        let mut a2 = vec![0.0f32; state.rows1.len() * k2];
        let mut h1 = vec![0.0f32; gcn.convs[0].m];
        let mut nb = Vec::new();
        for (i, &u) in state.rows1.clone().iter().enumerate() {
            nb.clear();
            state.graph.neighbours(u, &mut nb);
            nb.push(u);
            let su = inv_sqrt(&state.graph, u);
            for &x in &nb {
                state.h1_state(x, &mut h1);
                axpy(
                    &mut a2[i * k2..(i + 1) * k2],
                    su * inv_sqrt(&state.graph, x),
                    &h1,
                );
            }
        }
        let mut h2 = vec![0.0f32; state.rows1.len() * m2];
        matmul_acc(&a2, &gcn.convs[1].weight, k2, m2, &mut h2);
        bias_relu(&mut h2, &gcn.convs[1].bias, m2, true);
        (state.a2, state.h2) = (a2, h2);
        Ok(state)
    }

    /// The node this state evaluates.
    pub fn node(&self) -> u32 {
        self.node
    }

    /// The first-layer pre-activation (bias added) of `v` in the state, into `out`.
    fn pre_state(&mut self, v: u32, out: &mut [f32]) {
        if self.affected.binary_search(&v).is_err() {
            out.copy_from_slice(self.base.pre_row(v));
            return;
        }
        if let Some(p) = self.pre.get(&v) {
            out.copy_from_slice(p);
            return;
        }
        let p = first_pre(self.gcn, self.xw, &self.graph, v);
        out.copy_from_slice(&p);
        self.pre.insert(v, p);
    }

    /// The first-layer row of `v` in the state, into `out`.
    fn h1_state(&mut self, v: u32, out: &mut [f32]) {
        if self.affected.binary_search(&v).is_err() {
            out.copy_from_slice(self.base.h1_row(v));
            return;
        }
        self.pre_state(v, out);
        out.iter_mut().for_each(|o| *o = crate::ops::relu(*o));
    }

    /// The node's class log-probabilities with the state's toggles and `pair` toggled (back, if
    /// the state toggles it already).
    ///
    /// Errors: [`ModelError::InvalidInput`] for a pair outside the graph or a self loop.
    ///
    /// # Shapes
    /// - output: `[num_classes]`
    pub fn log_probs_toggling(&mut self, pair: (u32, u32)) -> Result<Vec<f32>> {
        let mut all = self.toggled.clone();
        all.push(pair);
        let graph = self.graph.graph();
        let cand = GraphOverlay::new(graph, &all)?.with_norms(self.base.norms())?;
        let (a, b) = pair;
        let [c1, c2, c3] = &self.gcn.convs;
        let (m1, k2, m2) = (c1.m, c2.k, c2.m);
        // Neighbours of the endpoints other than each other (the same in the state and the
        // candidate), and the change of each endpoint's coefficient.
        let nb_a = sorted_neighbours(&self.graph, a);
        let nb_b = sorted_neighbours(&self.graph, b);
        let moved = [
            (a, inv_sqrt(&cand, a) - inv_sqrt(&self.graph, a)),
            (b, inv_sqrt(&cand, b) - inv_sqrt(&self.graph, b)),
        ];
        let touches = |x: u32| {
            x == a || x == b || nb_a.binary_search(&x).is_ok() || nb_b.binary_search(&x).is_ok()
        };
        // The candidate's first-layer rows that differ from the state's, on first use.
        let mut fresh: HashMap<u32, Vec<f32>> = HashMap::new();
        let mut h1_cand = |this: &mut Self, x: u32, out: &mut [f32]| {
            if let Some(r) = fresh.get(&x) {
                out.copy_from_slice(r);
                return;
            }
            if !touches(x) {
                this.h1_state(x, out);
                return;
            }
            if x == a || x == b {
                out.copy_from_slice(&first_pre(this.gcn, this.xw, &cand, x));
            } else {
                this.pre_state(x, out);
                let sx = inv_sqrt(&this.graph, x);
                for (e, ds, nb) in [(a, moved[0].1, &nb_a), (b, moved[1].1, &nb_b)] {
                    if nb.binary_search(&x).is_ok() {
                        axpy(out, sx * ds, this.xw.row(e));
                    }
                }
            }
            out.iter_mut().for_each(|o| *o = crate::ops::relu(*o));
            fresh.insert(x, out.to_vec());
        };
        let mut rows1 = vec![self.node];
        cand.neighbours(self.node, &mut rows1);
        let mut a2 = vec![0.0f32; rows1.len() * k2];
        let mut h2 = vec![0.0f32; rows1.len() * m2];
        // Rows of `rows1` whose aggregate changed (their products are computed below).
        let mut redo: Vec<usize> = Vec::new();
        let (mut h1, mut old) = (vec![0.0f32; m1], vec![0.0f32; m1]);
        let mut nb = Vec::new();
        for (i, &u) in rows1.iter().enumerate() {
            let out = &mut a2[i * k2..(i + 1) * k2];
            nb.clear();
            cand.neighbours(u, &mut nb);
            nb.push(u);
            match self.pos1.get(&u).copied() {
                Some(p) if u != a && u != b => {
                    // Same neighbours and degree as in the state: the state's aggregate moved
                    // by the terms of the rows that changed.
                    let su = inv_sqrt(&cand, u);
                    let mut changed = false;
                    out.copy_from_slice(&self.a2[p * k2..(p + 1) * k2]);
                    for &x in nb.iter().filter(|&&x| touches(x)) {
                        changed = true;
                        h1_cand(self, x, &mut h1);
                        self.h1_state(x, &mut old);
                        axpy(out, su * inv_sqrt(&cand, x), &h1);
                        axpy(out, -su * inv_sqrt(&self.graph, x), &old);
                    }
                    if changed {
                        redo.push(i);
                    } else {
                        h2[i * m2..(i + 1) * m2].copy_from_slice(&self.h2[p * m2..(p + 1) * m2]);
                    }
                }
                _ => {
                    let su = inv_sqrt(&cand, u);
                    for &x in &nb {
                        h1_cand(self, x, &mut h1);
                        axpy(out, su * inv_sqrt(&cand, x), &h1);
                    }
                    redo.push(i);
                }
            }
        }
        let mut row = vec![0.0f32; m2];
        for &i in &redo {
            row.fill(0.0);
            matmul_acc(&a2[i * k2..(i + 1) * k2], &c2.weight, k2, m2, &mut row);
            bias_relu(&mut row, &c2.bias, m2, true);
            h2[i * m2..(i + 1) * m2].copy_from_slice(&row);
        }
        let mut a3 = vec![0.0f32; c3.k];
        let st = inv_sqrt(&cand, self.node);
        for (i, &u) in rows1.iter().enumerate() {
            axpy(&mut a3, st * inv_sqrt(&cand, u), &h2[i * m2..(i + 1) * m2]);
        }
        let mut h3 = vec![0.0f32; c3.m];
        matmul_acc(&a3, &c3.weight, c3.k, c3.m, &mut h3);
        bias_relu(&mut h3, &c3.bias, c3.m, false);
        let t = self.node;
        h1_cand(self, t, &mut h1);
        Ok(self.gcn.output_row(&h1, &h2[..m2], &h3))
    }
}

/// The first-layer pre-activation (bias added) of `v` in `graph`: `Σ â_vw (X W₁)_w + b₁`.
fn first_pre(gcn: &HostGcn, xw: &Projected, graph: &dyn Neighbours, v: u32) -> Vec<f32> {
    let c1 = &gcn.convs[0];
    let mut nb = Vec::new();
    graph.neighbours(v, &mut nb);
    let sv = inv_sqrt(graph, v);
    let mut out = vec![0.0f32; c1.m];
    for &w in nb.iter().chain(std::iter::once(&v)) {
        let norm = if w == v {
            sv * sv
        } else {
            sv * inv_sqrt(graph, w)
        };
        axpy(&mut out, norm, xw.row(w));
    }
    for (o, &b) in out.iter_mut().zip(&c1.bias) {
        *o += b;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GcnConfig;
    use crate::testing::test_device;
    use induce_graph::Graph;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    /// On a random graph with a hub, at states with edits at the target, at the hub and far
    /// away, every single further toggle (additions and deletions at the target, at its
    /// neighbours and far away, one of the state's own pairs) gives the prediction of the
    /// receptive-field pass on the state with the pair toggled.
    #[test]
    fn one_more_toggle_equals_the_receptive_field() {
        let dev = test_device().unwrap();
        let mut rng = StdRng::seed_from_u64(11);
        let (n, d) = (70u32, 9);
        let (edges, x) = super::super::tests::hub_tree(&mut rng, (n, d), (2, 8), 40, -0.3);
        let g = Graph::from_edges(n as usize, &edges, x, vec![0; n as usize]).unwrap();
        let gcn = HostGcn::from_gcn(&GcnConfig::new(d, 4).with_init_seed(3).init(&dev)).unwrap();
        let xw = gcn.project(g.features()).unwrap();
        let base = gcn
            .first_layer(&xw, &GraphOverlay::new(&g, &[]).unwrap())
            .unwrap();
        let mut checked = 0;
        for node in [0u32, 2, 5, 33] {
            let near = g.sorted_neighbors(node).to_vec();
            for state in [
                vec![],
                vec![(node, (node + 20) % n)],
                vec![(node.min(near[0]), node.max(near[0])), (2, 61), (40, 41)],
            ] {
                let mut ts = TargetState::new(&gcn, &xw, &base, &g, node, &state).unwrap();
                let far = edges[edges.len() / 2];
                let mut pairs: Vec<(u32, u32)> =
                    (0..n).filter(|&v| v != node).map(|v| (node, v)).collect();
                pairs.extend(edges.iter().copied().filter(|e| near.contains(&e.0)));
                pairs.extend([far, (2, 3), (near[0], 60)]);
                pairs.extend(state.iter().copied());
                for pair in pairs {
                    if pair.0 == pair.1 {
                        continue;
                    }
                    let mut all = state.clone();
                    all.push(pair);
                    let g2 = GraphOverlay::new(&g, &all).unwrap();
                    let want = gcn
                        .log_probs_at_edited(&xw, &base, &g2, &g2.changed(), node)
                        .unwrap();
                    let got = ts.log_probs_toggling(pair).unwrap();
                    // The search's verdict from the unedited graph's layers, by deltas.
                    let delta = gcn
                        .log_probs_at_delta(&xw, &base, &g2, &g2.changed(), node)
                        .unwrap();
                    for (a, b) in got.iter().zip(&want).chain(delta.iter().zip(&want)) {
                        assert!(
                            (a - b).abs() < 1e-5,
                            "node {node}, state {state:?}, {pair:?}"
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 500);
        let mut ts = TargetState::new(&gcn, &xw, &base, &g, 0, &[]).unwrap();
        assert!(ts.log_probs_toggling((3, 3)).is_err());
        assert!(ts.log_probs_toggling((3, n)).is_err());
        assert!(TargetState::new(&gcn, &xw, &base, &g, n, &[]).is_err());
    }
}
