//! A small mutable graph for editing neighbourhoods edge by edge.

/// A mutable undirected simple graph over local ids `0..n` with sorted adjacency lists.
///
/// Built for the explainer's hot loop: `has_edge` is a binary search, a toggle an insertion or
/// removal in two short sorted vectors, and exporting the edge list for a model is linear.
///
/// ```text
///  0 ─ 1      toggle(1, 2)     0 ─ 1
///  │              ──▶          │   │
///  2                           2 ──┘
/// ```
///
/// ```
/// use induce_graph::EditGraph;
/// let mut g = EditGraph::from_edges(3, &[(0, 1), (0, 2)]);
/// assert!(g.toggle(1, 2));      // added
/// assert_eq!(g.degree(2), 2);
/// assert!(!g.toggle(0, 1));     // removed
/// assert_eq!(g.edges(), vec![(0, 2), (1, 2)]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditGraph {
    adj: Vec<Vec<u32>>,
    num_edges: usize,
}

impl EditGraph {
    /// [`EditGraph::from_edges`] for ids that may be out of range (edges built by hand rather
    /// than taken from a [`crate::Subgraph`]): an id `>= n` is a
    /// [`GraphError::NodeOutOfRange`](crate::GraphError::NodeOutOfRange) naming it.
    ///
    /// ```
    /// use induce_graph::{EditGraph, GraphError};
    /// assert_eq!(EditGraph::try_from_edges(3, &[(0, 2)]).unwrap().num_edges(), 1);
    /// assert!(matches!(
    ///     EditGraph::try_from_edges(3, &[(0, 3)]),
    ///     Err(GraphError::NodeOutOfRange { node: 3, num_nodes: 3 })
    /// ));
    /// ```
    pub fn try_from_edges(n: usize, edges: &[(u32, u32)]) -> Result<Self, crate::GraphError> {
        if let Some(&node) = edges
            .iter()
            .flat_map(|(u, w)| [u, w])
            .find(|&&u| u as usize >= n)
        {
            return Err(crate::GraphError::NodeOutOfRange {
                node: u64::from(node),
                num_nodes: n,
            });
        }
        Ok(Self::from_edges(n, edges))
    }

    /// Builds from undirected edges in local ids (duplicates and self loops are ignored).
    /// Panics if an id is `>= n` (local ids come from a [`crate::Subgraph`]; for other edges,
    /// [`EditGraph::try_from_edges`]).
    pub fn from_edges(n: usize, edges: &[(u32, u32)]) -> Self {
        let mut adj = vec![Vec::new(); n];
        for &(u, w) in edges {
            if u != w {
                adj[u as usize].push(w);
                adj[w as usize].push(u);
            }
        }
        let mut num_edges = 0;
        for a in &mut adj {
            a.sort_unstable();
            a.dedup();
            num_edges += a.len();
        }
        Self {
            adj,
            num_edges: num_edges / 2,
        }
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.adj.len()
    }

    /// Number of undirected edges.
    pub fn num_edges(&self) -> usize {
        self.num_edges
    }

    /// Sorted neighbours of `u`.
    pub fn neighbors(&self, u: usize) -> &[u32] {
        &self.adj[u]
    }

    /// Degree of `u`.
    pub fn degree(&self, u: usize) -> usize {
        self.adj[u].len()
    }

    /// True when `{u, w}` is an edge.
    pub fn has_edge(&self, u: usize, w: usize) -> bool {
        self.adj[u].binary_search(&(w as u32)).is_ok()
    }

    /// Inserts `{u, w}` if absent, removes it if present; returns `true` if it now exists.
    /// Panics on a self loop or an id `>= n` (local ids come from a [`crate::Subgraph`]).
    pub fn toggle(&mut self, u: usize, w: usize) -> bool {
        assert_ne!(u, w, "self loops are not edges");
        match self.adj[u].binary_search(&(w as u32)) {
            Ok(i) => {
                self.adj[u].remove(i);
                let j = self.adj[w]
                    .binary_search(&(u as u32))
                    .expect("symmetric adjacency");
                self.adj[w].remove(j);
                self.num_edges -= 1;
                false
            }
            Err(i) => {
                self.adj[u].insert(i, w as u32);
                let j = self.adj[w].binary_search(&(u as u32)).unwrap_err();
                self.adj[w].insert(j, u as u32);
                self.num_edges += 1;
                true
            }
        }
    }

    /// Every undirected edge once as `(u, w)`, `u < w`, in row-major order.
    pub fn edges(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::with_capacity(self.num_edges);
        for (u, a) in self.adj.iter().enumerate() {
            out.extend(
                a.iter()
                    .filter(|&&w| w as usize > u)
                    .map(|&w| (u as u32, w)),
            );
        }
        out
    }

    /// Directed edge list with both directions, sorted by source then target.
    pub fn edge_index(&self) -> (Vec<u32>, Vec<u32>) {
        let mut src = Vec::with_capacity(2 * self.num_edges);
        let mut dst = Vec::with_capacity(2 * self.num_edges);
        for (u, a) in self.adj.iter().enumerate() {
            src.extend(std::iter::repeat_n(u as u32, a.len()));
            dst.extend_from_slice(a);
        }
        (src, dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toggles_keep_symmetry_and_count() {
        let mut g = EditGraph::from_edges(4, &[(0, 1), (1, 0), (2, 2), (1, 3)]);
        assert_eq!(g.num_edges(), 2);
        assert!(g.toggle(3, 0));
        assert!(g.has_edge(0, 3) && g.has_edge(3, 0));
        assert_eq!(g.num_edges(), 3);
        assert!(!g.toggle(1, 0));
        assert_eq!(g.num_edges(), 2);
        assert_eq!(g.edges(), vec![(0, 3), (1, 3)]);
        assert_eq!(g.edge_index(), (vec![0, 1, 3, 3], vec![3, 3, 0, 1]));
        assert_eq!(g.neighbors(3), &[0, 1]);
    }
}
