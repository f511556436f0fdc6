//! The host GCN at one node of a large graph, on its receptive field only, read through
//! [`Neighbours`] (edits as an overlay), and incrementally after a few edits ([`FirstLayer`]).

use super::dense::{bias_relu, log_softmax_in_place, padded};
use super::{HostGcn, Projected};
use crate::error::{ModelError, Result};
use crate::linalg::matmul_acc;

/// The first layer of a GCN on an unedited graph (see [`HostGcn::first_layer`]).
#[derive(Debug, Clone)]
pub struct FirstLayer {
    /// `ReLU(pre)`, `[n, hidden]`.
    h1: Vec<f32>,
    /// `Â X W₁ + b₁`, `[n, hidden]`.
    pre: Vec<f32>,
    /// `Â ReLU(pre)`: the second layer's aggregate of every node, `[n, hidden]`.
    a2: Vec<f32>,
    /// `1 / sqrt(deg(v) + 1)` of every node of the unedited graph, `[n]`.
    norms: Vec<f32>,
    pub(super) num_nodes: usize,
}

impl FirstLayer {
    /// Node `v`'s output row.
    pub(super) fn h1_row(&self, v: u32) -> &[f32] {
        let m = self.h1.len() / self.num_nodes.max(1);
        &self.h1[v as usize * m..(v as usize + 1) * m]
    }

    /// The unedited graph's normalisations `1 / sqrt(deg(v) + 1)`, `[n]` (for
    /// [`GraphOverlay::with_norms`](super::GraphOverlay::with_norms)).
    pub(super) fn norms(&self) -> &[f32] {
        &self.norms
    }

    /// Node `v`'s second-layer aggregate row (`Â H₁`, before the layer's weight).
    fn a2_row(&self, v: u32) -> &[f32] {
        let m = self.a2.len() / self.num_nodes.max(1);
        &self.a2[v as usize * m..(v as usize + 1) * m]
    }

    /// Node `v`'s pre-activation row (bias added).
    pub(super) fn pre_row(&self, v: u32) -> &[f32] {
        let m = self.pre.len() / self.num_nodes.max(1);
        &self.pre[v as usize * m..(v as usize + 1) * m]
    }
}

/// Read access to a (possibly edited) undirected graph for [`HostGcn::log_probs_at`]: lets the
/// caller evaluate one node of a huge graph with edits applied as an overlay, without copying
/// the graph or gathering its features.
pub trait Neighbours {
    /// Number of nodes.
    fn num_nodes(&self) -> usize;
    /// Appends the neighbours of `v` (each once, no self loop) to `out`.
    fn neighbours(&self, v: u32, out: &mut Vec<u32>);
    /// The degree of `v` (the length of its neighbour list).
    fn degree(&self, v: u32) -> usize;
    /// The GCN's normalisation of `v`, `1 / sqrt(deg(v) + 1)` (with its self loop); a graph
    /// may read it from a table instead of computing it for every edge it aggregates.
    fn inv_sqrt_degree(&self, v: u32) -> f32 {
        1.0 / ((self.degree(v) + 1) as f32).sqrt()
    }
}

/// `out[i] = Σ_{w ∈ N(v) ∪ {v}} â_vw · input(w)` for the rows `v = rows[i]`, where `input(w)` is
/// `width` floats (`None` for a node outside the rows computed).
fn aggregate_rows<'r>(
    graph: &dyn Neighbours,
    rows: &[u32],
    width: usize,
    input: &dyn Fn(u32) -> Option<&'r [f32]>,
) -> Result<Vec<f32>> {
    let inv_sqrt = |v: u32| graph.inv_sqrt_degree(v);
    let mut out = vec![0.0f32; rows.len() * width];
    let mut nb = Vec::new();
    for (&v, o) in rows.iter().zip(out.chunks_exact_mut(width.max(1))) {
        nb.clear();
        graph.neighbours(v, &mut nb);
        let iv = inv_sqrt(v);
        for &w in nb.iter().chain(std::iter::once(&v)) {
            let norm = if w == v { iv * iv } else { iv * inv_sqrt(w) };
            let row = input(w).ok_or_else(|| {
                ModelError::InvalidInput(format!("node {w} outside the receptive field"))
            })?;
            for (a, &r) in o.iter_mut().zip(&row[..width]) {
                *a += norm * r;
            }
        }
    }
    Ok(out)
}

impl HostGcn {
    /// The first layer's output `ReLU(Â X W₁ + b₁)` of every node of an unedited graph: with it,
    /// [`HostGcn::log_probs_at_edited`] evaluates a node after a few edits by recomputing only
    /// the first-layer rows the edits touch.
    ///
    /// # Shapes
    /// - xw: `[n, hidden]`; output: `[n, hidden]`
    pub fn first_layer(&self, xw: &Projected, graph: &dyn Neighbours) -> Result<FirstLayer> {
        let n = graph.num_nodes();
        if xw.num_nodes != n || xw.width != self.convs[0].m {
            return Err(ModelError::InvalidInput(format!(
                "projected features for {} nodes, graph of {n}",
                xw.num_nodes
            )));
        }
        let all: Vec<u32> = (0..n as u32).collect();
        let c1 = &self.convs[0];
        let mut pre = aggregate_rows(graph, &all, c1.m, &|v| Some(xw.row(v)))?;
        bias_relu(&mut pre, &c1.bias, c1.m, false);
        let h1: Vec<f32> = pre.iter().map(|&v| crate::ops::relu(v)).collect();
        let norms = (0..n as u32).map(|v| graph.inv_sqrt_degree(v)).collect();
        let a2 = aggregate_rows(graph, &all, c1.m, &|v| {
            Some(&h1[v as usize * c1.m..(v as usize + 1) * c1.m])
        })?;
        Ok(FirstLayer {
            h1,
            pre,
            a2,
            norms,
            num_nodes: n,
        })
    }

    /// The log-probabilities of one node of an EDITED graph, incrementally: `base` is
    /// [`HostGcn::first_layer`] of the unedited graph, `graph` the edited one and `changed` the
    /// endpoints of every edited pair. A first-layer row changes only if its node is an endpoint
    /// or adjacent to one (its neighbour set or a neighbour's degree changed); those rows are
    /// recomputed, the rest read from `base`, then layers 2 and 3 are computed on the node's
    /// 1-hop neighbourhood. Equal to [`HostGcn::log_probs_at`] on the edited graph (a test pins
    /// it), at a fraction of the cost on graphs with hubs.
    ///
    /// # Shapes
    /// - output: `[num_classes]`
    pub fn log_probs_at_edited(
        &self,
        xw: &Projected,
        base: &FirstLayer,
        graph: &dyn Neighbours,
        changed: &[u32],
        node: u32,
    ) -> Result<Vec<f32>> {
        self.log_probs_at_edited_rows(xw, base, graph, changed, &[], node)
    }

    /// [`HostGcn::log_probs_at_edited`] with the projected feature rows `xw_rows` (node, its
    /// row of `X W₁` after a feature edit) in place of `xw`'s: those nodes' first-layer rows and
    /// their neighbours' are recomputed too.
    ///
    /// # Shapes
    /// - xw_rows: `[hidden]` each; output: `[num_classes]`
    pub fn log_probs_at_edited_rows(
        &self,
        xw: &Projected,
        base: &FirstLayer,
        graph: &dyn Neighbours,
        changed: &[u32],
        xw_rows: &[(u32, Vec<f32>)],
        node: u32,
    ) -> Result<Vec<f32>> {
        let n = graph.num_nodes();
        if base.num_nodes != n || xw.num_nodes != n || node as usize >= n {
            return Err(ModelError::InvalidInput(format!(
                "node {node} of a graph with {n} nodes and cached layers for {} nodes",
                base.num_nodes
            )));
        }
        let [c1, c2, c3] = &self.convs;
        let mut nb = Vec::new();
        if let Some((v, r)) = xw_rows
            .iter()
            .find(|(v, r)| *v as usize >= n || r.len() != xw.width)
        {
            return Err(ModelError::InvalidInput(format!(
                "a projected row of {} values for node {v} (width {}, {n} nodes)",
                r.len(),
                xw.width
            )));
        }
        let mut affected: Vec<u32> = changed.to_vec();
        affected.extend(xw_rows.iter().map(|(v, _)| *v));
        for a in affected.clone() {
            graph.neighbours(a, &mut affected);
        }
        affected.sort_unstable();
        affected.dedup();
        // Layer 2 on the node and its neighbours, layer 3 on the node; layer-1 rows on those and
        // their neighbours, recomputed where an edit touches them.
        graph.neighbours(node, &mut nb);
        let mut rows1 = vec![node];
        rows1.extend(nb.iter().copied().filter(|&w| w != node));
        let mut needed: Vec<u32> = rows1.clone();
        let mut nb2 = Vec::new();
        for &v in &rows1 {
            graph.neighbours(v, &mut nb2);
        }
        needed.extend(nb2);
        needed.sort_unstable();
        needed.dedup();
        let stale: Vec<u32> = needed
            .iter()
            .copied()
            .filter(|v| affected.binary_search(v).is_ok())
            .collect();
        let xw_row = |v: u32| -> Option<&[f32]> {
            match xw_rows.iter().rev().find(|(w, _)| *w == v) {
                Some((_, r)) => Some(r),
                None => Some(xw.row(v)),
            }
        };
        let mut fresh = aggregate_rows(graph, &stale, c1.m, &xw_row)?;
        bias_relu(&mut fresh, &c1.bias, c1.m, true);
        let h1_row = |v: u32| -> &[f32] {
            match stale.binary_search(&v) {
                Ok(i) => &fresh[i * c1.m..(i + 1) * c1.m],
                Err(_) => &base.h1[v as usize * c1.m..(v as usize + 1) * c1.m],
            }
        };
        // Layer 2 reads the rows in place (every neighbour of `rows1` is in `needed`).
        let a2 = aggregate_rows(graph, &rows1, c1.m, &|v| Some(h1_row(v)))?;
        let mut h2 = vec![0.0f32; rows1.len() * c2.m];
        matmul_acc(&a2, &c2.weight, c2.k, c2.m, &mut h2);
        bias_relu(&mut h2, &c2.bias, c2.m, true);
        let mut sorted1: Vec<(u32, usize)> =
            rows1.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        sorted1.sort_unstable();
        let at2 = |v: u32| {
            let i = sorted1.binary_search_by_key(&v, |&(w, _)| w).ok()?;
            let p = sorted1[i].1;
            Some(&h2[p * c2.m..(p + 1) * c2.m])
        };
        let a3 = aggregate_rows(graph, &[node], c2.m, &at2)?;
        let mut h3 = vec![0.0f32; c3.m];
        matmul_acc(&a3, &c3.weight, c3.k, c3.m, &mut h3);
        bias_relu(&mut h3, &c3.bias, c3.m, false);
        Ok(self.output_row(h1_row(node), &h2[..c2.m], &h3))
    }

    /// [`HostGcn::log_probs_at_edited`] by deltas on the unedited graph's cached layers (the
    /// verdict of each step of a search): the first-layer rows of the toggles' endpoints are
    /// recomputed; every other row the toggles reach (a neighbour of an endpoint) moves by the
    /// change of the endpoint's coefficient times its projected row; the second layer's
    /// aggregate at each node of the edited 1-hop neighbourhood is the cached one moved by the
    /// rows that moved (recomputed at an endpoint); layer 3 on the node. The cost is the
    /// endpoints' degrees times the width, plus one pass over the neighbour lists of the
    /// node's neighbours (no second-layer aggregation over a hub's thousands of rows). Equal
    /// to [`HostGcn::log_probs_at`] on the edited graph up to float rounding (a test pins it).
    ///
    /// `base` must be [`HostGcn::first_layer`] of the unedited graph, `graph` the edited one and
    /// `changed` the endpoints of every toggled pair.
    ///
    /// # Shapes
    /// - xw: `[graph.num_nodes(), hidden]`; output: `[num_classes]`
    pub fn log_probs_at_delta(
        &self,
        xw: &Projected,
        base: &FirstLayer,
        graph: &dyn Neighbours,
        changed: &[u32],
        node: u32,
    ) -> Result<Vec<f32>> {
        let n = graph.num_nodes();
        let [c1, c2, c3] = &self.convs;
        let m1 = c1.m;
        if base.num_nodes != n
            || xw.num_nodes != n
            || node as usize >= n
            || base.a2.len() != n * m1
            || base.norms.len() != n
        {
            return Err(ModelError::InvalidInput(format!(
                "node {node} of a graph with {n} nodes and cached layers for {} nodes",
                base.num_nodes
            )));
        }
        if let Some(&v) = changed.iter().find(|&&v| v as usize >= n) {
            return Err(ModelError::InvalidInput(format!(
                "changed node {v} outside the graph's {n} nodes"
            )));
        }
        let mut ends = changed.to_vec();
        ends.sort_unstable();
        ends.dedup();
        let is_end = |v: u32| ends.binary_search(&v).is_ok();
        let mut affected = ends.clone();
        for &a in &ends {
            graph.neighbours(a, &mut affected);
        }
        affected.sort_unstable();
        affected.dedup();
        // New first-layer pre-activations (bias added) of the affected rows.
        let mut pre = vec![0.0f32; affected.len() * m1];
        let mut full = aggregate_rows(graph, &ends, m1, &|v| Some(xw.row(v)))?;
        bias_relu(&mut full, &c1.bias, m1, false);
        for (i, &v) in affected.iter().enumerate() {
            let row = &mut pre[i * m1..(i + 1) * m1];
            match ends.binary_search(&v) {
                Ok(k) => row.copy_from_slice(&full[k * m1..(k + 1) * m1]),
                Err(_) => row.copy_from_slice(base.pre_row(v)),
            }
        }
        let mut nb = Vec::new();
        for &a in &ends {
            let moved = graph.inv_sqrt_degree(a) - base.norms[a as usize];
            nb.clear();
            graph.neighbours(a, &mut nb);
            for &v in nb.iter().filter(|&&v| !is_end(v)) {
                // Not an endpoint: the edge (v, a) is in both graphs, v's own coefficient and
                // neighbour set are unchanged.
                let i = affected
                    .binary_search(&v)
                    .expect("a neighbour of an endpoint");
                let c = base.norms[v as usize] * moved;
                for (o, &r) in pre[i * m1..(i + 1) * m1].iter_mut().zip(xw.row(a)) {
                    *o += c * r;
                }
            }
        }
        let h1: Vec<f32> = pre.iter().map(|&v| crate::ops::relu(v)).collect();
        let h1_row = |v: u32| -> &[f32] {
            match affected.binary_search(&v) {
                Ok(i) => &h1[i * m1..(i + 1) * m1],
                Err(_) => base.h1_row(v),
            }
        };
        // Layer 2 on the node and its (edited) neighbours.
        let mut rows1 = vec![node];
        graph.neighbours(node, &mut rows1);
        let mut a2 = vec![0.0f32; rows1.len() * m1];
        for (&u, out) in rows1.iter().zip(a2.chunks_exact_mut(m1.max(1))) {
            nb.clear();
            graph.neighbours(u, &mut nb);
            nb.push(u);
            if is_end(u) {
                let su = graph.inv_sqrt_degree(u);
                for &w in &nb {
                    let norm = if w == u {
                        su * su
                    } else {
                        su * graph.inv_sqrt_degree(w)
                    };
                    for (o, &r) in out.iter_mut().zip(h1_row(w)) {
                        *o += norm * r;
                    }
                }
            } else {
                out.copy_from_slice(base.a2_row(u));
                let su = base.norms[u as usize];
                for &w in &nb {
                    let Ok(i) = affected.binary_search(&w) else {
                        continue;
                    };
                    let (now, was) = (su * graph.inv_sqrt_degree(w), su * base.norms[w as usize]);
                    let new = &h1[i * m1..(i + 1) * m1];
                    for ((o, &r), &q) in out.iter_mut().zip(new).zip(base.h1_row(w)) {
                        *o += now * r - was * q;
                    }
                }
            }
        }
        let mut h2 = vec![0.0f32; rows1.len() * c2.m];
        matmul_acc(&a2, &c2.weight, c2.k, c2.m, &mut h2);
        bias_relu(&mut h2, &c2.bias, c2.m, true);
        // Layer 3 on the node: its neighbours' rows, then its own.
        let st = graph.inv_sqrt_degree(node);
        let mut a3 = vec![0.0f32; c2.m];
        for (i, &u) in rows1.iter().enumerate().skip(1).chain([(0, &node)]) {
            let norm = if i == 0 {
                st * st
            } else {
                st * graph.inv_sqrt_degree(u)
            };
            for (o, &r) in a3.iter_mut().zip(&h2[i * c2.m..(i + 1) * c2.m]) {
                *o += norm * r;
            }
        }
        let mut h3 = vec![0.0f32; c3.m];
        matmul_acc(&a3, &c3.weight, c3.k, c3.m, &mut h3);
        bias_relu(&mut h3, &c3.bias, c3.m, false);
        Ok(self.output_row(h1_row(node), &h2[..c2.m], &h3))
    }

    /// `log_softmax([h1 ‖ h2 ‖ h3] W + b)` of one node.
    pub(super) fn output_row(&self, h1: &[f32], h2: &[f32], h3: &[f32]) -> Vec<f32> {
        let mc = padded(self.num_classes);
        let mut z = vec![0.0f32; mc];
        let mut row0 = 0;
        for (h, conv) in [h1, h2, h3].into_iter().zip(&self.convs) {
            let w = &self.lin_weight[row0 * mc..(row0 + conv.m) * mc];
            matmul_acc(h, w, conv.m, mc, &mut z);
            row0 += conv.m;
        }
        let row = &mut z[..self.num_classes];
        for (v, &b) in row.iter_mut().zip(&self.lin_bias) {
            *v += b;
        }
        log_softmax_in_place(row);
        row.to_vec()
    }

    /// The log-probabilities of one node, computed on its receptive field only: a 3-layer GCN's
    /// output at `node` depends on layer-1 outputs within 2 hops, layer-2 outputs within 1 hop
    /// and the layer-3 output at `node`, and through the normalisation on the degrees of the
    /// nodes within 3 hops. Each layer is computed on exactly those rows, from the projected
    /// features ([`HostGcn::project`]), so the cost is the number of edges incident to the
    /// 2-hop neighbourhood times the hidden width, independent of the rest of the graph. Equal
    /// to `forward(..).row(node)` up to rounding (a test pins it).
    ///
    /// This is what makes explanations checkable on graphs with hubs: after an edit only this
    /// receptive field is recomputed, and the graph is read through [`Neighbours`] (edits as an
    /// overlay).
    ///
    /// # Shapes
    /// - xw: `[graph.num_nodes(), hidden]` (from [`HostGcn::project`])
    /// - output: `[num_classes]`
    pub fn log_probs_at(
        &self,
        xw: &Projected,
        graph: &dyn Neighbours,
        node: u32,
    ) -> Result<Vec<f32>> {
        let n = graph.num_nodes();
        if xw.num_nodes != n || node as usize >= n || xw.width != self.convs[0].m {
            return Err(ModelError::InvalidInput(format!(
                "node {node} of a graph with {n} nodes and projected features for {} nodes",
                xw.num_nodes
            )));
        }
        // Rows needing layer 1 (≤ 2 hops), layer 2 (≤ 1 hop), layer 3 (the node), in BFS order:
        // `order[..n1]` are within 1 hop, `order` within 2.
        // Position of each reached node in `order` (a dense array: hashing costs more here).
        let mut pos = vec![u32::MAX; n];
        pos[node as usize] = 0;
        let mut order = vec![node];
        let mut nb = Vec::new();
        let mut n1 = 1;
        for depth in 0..2 {
            let (lo, hi) = (if depth == 0 { 0 } else { 1 }, order.len());
            for i in lo..hi {
                nb.clear();
                graph.neighbours(order[i], &mut nb);
                for &w in &nb {
                    if pos[w as usize] == u32::MAX {
                        pos[w as usize] = order.len() as u32;
                        order.push(w);
                    }
                }
            }
            if depth == 0 {
                n1 = order.len();
            }
        }
        let [c1, c2, c3] = &self.convs;
        let at = |v: u32| {
            Some(pos[v as usize])
                .filter(|&p| p != u32::MAX)
                .map(|p| p as usize)
        };
        let mut h1 = aggregate_rows(graph, &order, c1.m, &|v| Some(xw.row(v)))?;
        bias_relu(&mut h1, &c1.bias, c1.m, true);
        let a2 = aggregate_rows(graph, &order[..n1], c1.m, &|v| {
            at(v).map(|p| &h1[p * c1.m..(p + 1) * c1.m])
        })?;
        let mut h2 = vec![0.0f32; n1 * c2.m];
        matmul_acc(&a2, &c2.weight, c2.k, c2.m, &mut h2);
        bias_relu(&mut h2, &c2.bias, c2.m, true);
        let a3 = aggregate_rows(graph, &[node], c2.m, &|v| {
            at(v).map(|p| &h2[p * c2.m..(p + 1) * c2.m])
        })?;
        let mut h3 = vec![0.0f32; c3.m];
        matmul_acc(&a3, &c3.weight, c3.k, c3.m, &mut h3);
        bias_relu(&mut h3, &c3.bias, c3.m, false);
        Ok(self.output_row(&h1[..c1.m], &h2[..c2.m], &h3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GcnConfig;
    use crate::testing::test_device;
    use induce_graph::Features;

    struct Lists(Vec<Vec<u32>>);
    impl Neighbours for Lists {
        fn num_nodes(&self) -> usize {
            self.0.len()
        }
        fn neighbours(&self, v: u32, out: &mut Vec<u32>) {
            out.extend(&self.0[v as usize]);
        }
        fn degree(&self, v: u32) -> usize {
            self.0[v as usize].len()
        }
    }

    /// The receptive-field evaluation equals the full forward at every node of a graph with a
    /// hub, long paths (nodes beyond 3 hops) and an isolated node.
    #[test]
    fn one_node_equals_the_full_forward() {
        let dev = test_device().unwrap();
        let gcn = GcnConfig::new(6, 3).with_init_seed(4).init(&dev);
        let host = HostGcn::from_gcn(&gcn).unwrap();
        let n = 40u32;
        let mut edges = Vec::new();
        for v in 1..n - 1 {
            edges.push((v - 1, v)); // a path through every node but the last
        }
        for v in (3..30).step_by(3) {
            edges.push((5, v)); // node 5 is a hub
        }
        edges.retain(|&(a, b)| a != b);
        edges.sort();
        edges.dedup();
        let x = Features::new(
            n as usize,
            6,
            (0..n * 6)
                .map(|i| ((i * 37 % 17) as f32) * 0.2 - 1.0)
                .collect(),
        )
        .unwrap();
        let full = host.forward(&x, &edges).unwrap();
        let mut lists = vec![Vec::new(); n as usize];
        for &(a, b) in &edges {
            lists[a as usize].push(b);
            lists[b as usize].push(a);
        }
        let g = Lists(lists);
        let xw = host.project(&x).unwrap();
        for v in 0..n {
            let one = host.log_probs_at(&xw, &g, v).unwrap();
            for (a, b) in one.iter().zip(full.row(v as usize)) {
                assert!(
                    (a - b).abs() < 1e-5,
                    "node {v}: {one:?} vs {:?}",
                    full.row(v as usize)
                );
            }
        }
        assert!(host.log_probs_at(&xw, &g, n).is_err());
    }

    /// The incremental evaluation after edits equals the receptive-field evaluation on the
    /// edited graph, at every node, for deletions and additions touching the hub.
    #[test]
    fn incremental_equals_receptive_after_edits() {
        let dev = test_device().unwrap();
        let host = HostGcn::from_gcn(&GcnConfig::new(3, 2).with_init_seed(2).init(&dev)).unwrap();
        let n = 30u32;
        let mut edges: Vec<(u32, u32)> = (1..n).map(|v| (v - 1, v)).collect();
        edges.extend((4..n).step_by(4).map(|v| (2, v)));
        let x = Features::new(
            n as usize,
            3,
            (0..n * 3)
                .map(|i| ((i * 13 % 7) as f32) * 0.3 - 0.8)
                .collect(),
        )
        .unwrap();
        let lists = |e: &[(u32, u32)]| {
            let mut l = vec![Vec::new(); n as usize];
            for &(a, b) in e {
                l[a as usize].push(b);
                l[b as usize].push(a);
            }
            Lists(l)
        };
        let xw = host.project(&x).unwrap();
        let base = host.first_layer(&xw, &lists(&edges)).unwrap();
        let mut edited = edges.clone();
        edited.retain(|&e| e != (2, 8) && e != (10, 11));
        edited.push((0, 25));
        let g = lists(&edited);
        let changed = [2, 8, 10, 11, 0, 25];
        for v in 0..n {
            let want = host.log_probs_at(&xw, &g, v).unwrap();
            let got = host
                .log_probs_at_edited(&xw, &base, &g, &changed, v)
                .unwrap();
            let delta = host
                .log_probs_at_delta(&xw, &base, &g, &changed, v)
                .unwrap();
            for (a, b) in got.iter().zip(&want).chain(delta.iter().zip(&want)) {
                assert!(
                    (a - b).abs() < 1e-5,
                    "node {v}: {got:?} {delta:?} vs {want:?}"
                );
            }
        }
        assert!(host.log_probs_at_delta(&xw, &base, &g, &[n], 0).is_err());
        assert!(host.log_probs_at_delta(&xw, &base, &g, &[], n).is_err());
    }
}
