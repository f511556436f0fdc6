//! The receptive field of a target in an edited graph: the nodes within a radius of it and the
//! edges between them, with a set of toggled pairs applied ([`edited_field`]). A message-passing
//! model of `L` layers predicts the target on this field (radius `L + 1`) exactly as on the whole
//! edited graph, which is how the verdicts of [`Judge`](crate::Judge) and the batched searches
//! stay exact.

use std::collections::{BTreeSet, HashMap, HashSet};

use induce_graph::Graph;

/// The target's `radius`-hop field in `graph` with the pairs `toggled` flipped (a pair that is
/// an edge is deleted, any other added; a pair listed twice flips back): its nodes, `target`
/// first then in breadth-first order, and its edges as local pairs `(min, max)`. Deletions do
/// not shrink the node set (a superset of the field gives the same verdict).
///
/// ```
/// use induce_explain::field::edited_field;
/// use induce_graph::{Features, Graph};
/// //  0 ─ 1 ─ 2 ─ 3
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
///     vec![0; 4]).unwrap();
/// let (nodes, edges) = edited_field(&g, 0, 1, &[(0, 3), (0, 1)]);
/// assert_eq!(nodes, vec![0, 1, 3]); // 3 joins through the added (0, 3); 1 stays
/// assert_eq!(edges, vec![(0, 2)]);  // (0, 1) deleted, (0, 3) added
/// ```
pub fn edited_field(
    graph: &Graph,
    target: u32,
    radius: u32,
    toggled: &[(u32, u32)],
) -> (Vec<u32>, Vec<(u32, u32)>) {
    let mut delta = BTreeSet::new();
    for &(a, b) in toggled {
        let p = (a.min(b), a.max(b));
        if !delta.insert(p) {
            delta.remove(&p);
        }
    }
    let nodes = ball(graph, target, radius, &delta);
    let local: HashMap<u32, u32> = nodes
        .iter()
        .enumerate()
        .map(|(i, &u)| (u, i as u32))
        .collect();
    let mut edges: Vec<(u32, u32)> = induced_edges(graph, &nodes, &local)
        .into_iter()
        .filter(|&(a, b)| {
            let (u, w) = (nodes[a as usize], nodes[b as usize]);
            !delta.contains(&(u.min(w), u.max(w)))
        })
        .collect();
    for &(u, w) in &delta {
        if let (Some(&a), Some(&b)) = (local.get(&u), local.get(&w))
            && !is_edge(graph, (u, w))
        {
            edges.push((a.min(b), a.max(b)));
        }
    }
    (nodes, edges)
}

/// Whether `p` is an edge of the original graph.
pub(crate) fn is_edge(graph: &Graph, p: (u32, u32)) -> bool {
    graph.sorted_neighbors(p.0).binary_search(&p.1).is_ok()
}

/// The edges of `graph` between the nodes of `nodes` (`local` maps them to positions), as local
/// pairs `(min, max)`.
pub(crate) fn induced_edges(
    graph: &Graph,
    nodes: &[u32],
    local: &HashMap<u32, u32>,
) -> Vec<(u32, u32)> {
    let mut edges = Vec::new();
    for (lu, &u) in nodes.iter().enumerate() {
        for &w in graph.sorted_neighbors(u) {
            if let Some(&lw) = local.get(&w)
                && lw as usize > lu
            {
                edges.push((lu as u32, lw));
            }
        }
    }
    edges
}

/// The nodes within `radius` hops of `target` in the graph with the pairs of `delta` that are
/// not edges added (deletions are ignored: the ball is a superset of the edited graph's).
pub(crate) fn ball(
    graph: &Graph,
    target: u32,
    radius: u32,
    delta: &BTreeSet<(u32, u32)>,
) -> Vec<u32> {
    let mut extra: HashMap<u32, Vec<u32>> = HashMap::new();
    for &(a, b) in delta {
        if !is_edge(graph, (a, b)) {
            extra.entry(a).or_default().push(b);
            extra.entry(b).or_default().push(a);
        }
    }
    let mut seen: HashSet<u32> = HashSet::from([target]);
    let mut order = vec![target];
    let mut lo = 0;
    for _ in 0..radius {
        let hi = order.len();
        for i in lo..hi {
            let u = order[i];
            let more = extra.get(&u).map(Vec::as_slice).unwrap_or(&[]);
            for &w in graph.sorted_neighbors(u).iter().chain(more) {
                if seen.insert(w) {
                    order.push(w);
                }
            }
        }
        if order.len() == hi {
            break;
        }
        lo = hi;
    }
    order
}
