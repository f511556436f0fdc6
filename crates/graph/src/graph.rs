//! The undirected simple graph with node features, labels and motif ground truth.

use std::sync::OnceLock;

use petgraph::graph::{NodeIndex, UnGraph};

use crate::error::{GraphError, Result};
use crate::features::Features;

/// Compressed sparse row adjacency (both directions of every undirected edge).
///
/// `indices[indptr[u]..indptr[u + 1]]` are the neighbours of `u`, sorted ascending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Csr {
    /// Row offsets, length `n + 1`.
    pub indptr: Vec<usize>,
    /// Column indices (neighbour ids), length `2 × edges`.
    pub indices: Vec<u32>,
}

impl Csr {
    /// Number of rows (nodes).
    pub fn num_nodes(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Neighbours of `u`, sorted ascending.
    pub fn neighbors(&self, u: usize) -> &[u32] {
        &self.indices[self.indptr[u]..self.indptr[u + 1]]
    }
}

/// An undirected simple graph (no self loops, no parallel edges) stored in petgraph, with a
/// dense feature matrix, one integer label per node and optional motif ground truth.
///
/// The motif ground truth gives, for each node, the id of the motif instance it belongs to (if
/// any). A *motif edge* is an edge whose endpoints lie in the same instance.
///
/// ```text
///   0 ─ 1        Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], ..)
///       │
///   3 ─ 2
/// ```
///
/// ```
/// use induce_graph::{Features, Graph};
/// let mut g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
///     vec![0, 0, 1, 1]).unwrap();
/// assert!(g.has_edge(2, 1));
/// assert_eq!(g.degree(1), 2);
/// assert!(g.toggle_edge(0, 3).unwrap()); // added
/// assert_eq!(g.num_edges(), 4);
/// assert!(g.add_edge(1, 1).is_err());    // self loops are rejected
/// ```
#[derive(Debug, Clone)]
pub struct Graph {
    topo: UnGraph<(), (), u32>,
    features: Features,
    labels: Vec<u32>,
    motif: Option<Vec<Option<u32>>>,
    /// The CSR of `topo`, built on first use by [`Graph::csr`] (k-hop extraction walks it:
    /// contiguous sorted lists instead of petgraph's linked edge lists); reset by every
    /// topology change.
    csr: OnceLock<Csr>,
}

impl Graph {
    /// Builds a graph from undirected edges. Each pair may be given in one or both directions
    /// and more than once; duplicates are merged. Self loops and out-of-range ids are errors.
    pub fn from_edges(
        num_nodes: usize,
        edges: &[(u32, u32)],
        features: Features,
        labels: Vec<u32>,
    ) -> Result<Self> {
        let mut g = Self::empty(features, labels)?;
        if g.num_nodes() != num_nodes {
            return Err(GraphError::PerNodeLength {
                what: "feature rows",
                nodes: num_nodes,
                got: g.num_nodes(),
            });
        }
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(edges.len());
        for &(u, v) in edges {
            g.check_node(u)?;
            g.check_node(v)?;
            if u == v {
                return Err(GraphError::SelfLoop { node: u });
            }
            pairs.push((u.min(v), u.max(v)));
        }
        pairs.sort_unstable();
        pairs.dedup();
        g.topo.reserve_edges(pairs.len());
        for (u, v) in pairs {
            g.topo
                .add_edge(NodeIndex::new(u as usize), NodeIndex::new(v as usize), ());
        }
        Ok(g)
    }

    /// A graph with the nodes of `features` and no edges.
    pub fn empty(features: Features, labels: Vec<u32>) -> Result<Self> {
        let n = features.num_nodes();
        if labels.len() != n {
            return Err(GraphError::PerNodeLength {
                what: "labels",
                nodes: n,
                got: labels.len(),
            });
        }
        if n > u32::MAX as usize {
            return Err(GraphError::InvalidParameter {
                name: "num_nodes",
                value: n.to_string(),
                reason: "node ids are 32-bit",
            });
        }
        let mut topo = UnGraph::with_capacity(n, 0);
        for _ in 0..n {
            topo.add_node(());
        }
        Ok(Self {
            topo,
            features,
            labels,
            motif: None,
            csr: OnceLock::new(),
        })
    }

    /// Attaches motif ground truth: the motif-instance id of each node (`None` off-motif).
    pub fn with_motifs(mut self, motif: Vec<Option<u32>>) -> Result<Self> {
        if motif.len() != self.num_nodes() {
            return Err(GraphError::PerNodeLength {
                what: "motif ids",
                nodes: self.num_nodes(),
                got: motif.len(),
            });
        }
        self.motif = Some(motif);
        Ok(self)
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.topo.node_count()
    }

    /// Number of undirected edges.
    pub fn num_edges(&self) -> usize {
        self.topo.edge_count()
    }

    /// The node features.
    pub fn features(&self) -> &Features {
        &self.features
    }

    /// The same graph with other node features (a feature counterfactual's, say), of one row
    /// per node.
    ///
    /// ```
    /// use induce_graph::{Features, Graph};
    /// let g = Graph::from_edges(2, &[(0, 1)], Features::constant(2, 3, 0.0), vec![0; 2]).unwrap();
    /// let h = g.with_features(Features::constant(2, 1, 1.0)).unwrap();
    /// assert_eq!((h.num_edges(), h.features().dim()), (1, 1));
    /// assert!(g.with_features(Features::constant(3, 1, 1.0)).is_err());
    /// ```
    pub fn with_features(&self, features: Features) -> Result<Graph> {
        if features.num_nodes() != self.num_nodes() {
            return Err(GraphError::FeatureShape {
                nodes: self.num_nodes(),
                dim: features.dim(),
                got: features.as_slice().len(),
            });
        }
        Ok(Graph {
            topo: self.topo.clone(),
            features,
            labels: self.labels.clone(),
            motif: self.motif.clone(),
            csr: self.csr.clone(),
        })
    }

    /// Node labels (ground truth classes), one per node.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// Number of classes: `max(label) + 1` (0 for an empty graph).
    pub fn num_classes(&self) -> usize {
        self.labels
            .iter()
            .map(|&l| l as usize + 1)
            .max()
            .unwrap_or(0)
    }

    /// Motif-instance id per node, when the graph has ground truth.
    pub fn motifs(&self) -> Option<&[Option<u32>]> {
        self.motif.as_deref()
    }

    /// True when `(u, w)` is an edge inside one motif instance.
    pub fn is_motif_edge(&self, u: u32, w: u32) -> bool {
        match &self.motif {
            Some(m) => match (m.get(u as usize), m.get(w as usize)) {
                (Some(Some(a)), Some(Some(b))) => a == b && self.has_edge(u, w),
                _ => false,
            },
            None => false,
        }
    }

    /// Returns an error unless `u < num_nodes`.
    pub fn check_node(&self, u: u32) -> Result<()> {
        if (u as usize) < self.num_nodes() {
            Ok(())
        } else {
            Err(GraphError::NodeOutOfRange {
                node: u as u64,
                num_nodes: self.num_nodes(),
            })
        }
    }

    /// Neighbours of `u` (unordered; none for a node id outside the graph: check ids from
    /// outside with [`Graph::check_node`]).
    pub fn neighbors(&self, u: u32) -> impl Iterator<Item = u32> + '_ {
        self.topo
            .neighbors(NodeIndex::new(u as usize))
            .map(|x| x.index() as u32)
    }

    /// Neighbours of `u`, ascending, from the cached CSR adjacency (built on the first call after
    /// a change of the edges). Panics if `u` is out of range.
    ///
    /// ```
    /// use induce_graph::{Features, Graph};
    /// let g = Graph::from_edges(3, &[(2, 1), (1, 0)], Features::constant(3, 1, 1.0), vec![0; 3])
    ///     .unwrap();
    /// assert_eq!(g.sorted_neighbors(1), &[0, 2]);
    /// ```
    pub fn sorted_neighbors(&self, u: u32) -> &[u32] {
        self.csr().neighbors(u as usize)
    }

    /// Degree of `u` (0 for a node id outside the graph).
    pub fn degree(&self, u: u32) -> usize {
        self.neighbors(u).count()
    }

    fn find(&self, u: u32, w: u32) -> Option<petgraph::graph::EdgeIndex<u32>> {
        let n = self.num_nodes();
        if u as usize >= n || w as usize >= n || u == w {
            return None;
        }
        self.topo
            .find_edge(NodeIndex::new(u as usize), NodeIndex::new(w as usize))
    }

    /// True when the undirected edge `{u, w}` exists (false for out-of-range ids).
    pub fn has_edge(&self, u: u32, w: u32) -> bool {
        self.find(u, w).is_some()
    }

    /// Adds `{u, w}`; returns `false` if it already existed. Self loops and out-of-range ids are
    /// errors.
    pub fn add_edge(&mut self, u: u32, w: u32) -> Result<bool> {
        self.check_node(u)?;
        self.check_node(w)?;
        if u == w {
            return Err(GraphError::SelfLoop { node: u });
        }
        if self.has_edge(u, w) {
            return Ok(false);
        }
        self.topo
            .add_edge(NodeIndex::new(u as usize), NodeIndex::new(w as usize), ());
        self.csr.take();
        Ok(true)
    }

    /// Removes `{u, w}`; returns `false` if it did not exist.
    pub fn remove_edge(&mut self, u: u32, w: u32) -> bool {
        match self.find(u, w) {
            Some(e) => {
                self.topo.remove_edge(e);
                self.csr.take();
                true
            }
            None => false,
        }
    }

    /// Adds `{u, w}` if absent, removes it if present. Returns `true` when the edge now exists.
    pub fn toggle_edge(&mut self, u: u32, w: u32) -> Result<bool> {
        if self.remove_edge(u, w) {
            Ok(false)
        } else {
            self.add_edge(u, w)
        }
    }

    /// Every undirected edge once, as `(u, w)` with `u < w`, sorted.
    pub fn edges(&self) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = self
            .topo
            .edge_indices()
            .filter_map(|e| self.topo.edge_endpoints(e))
            .map(|(a, b)| {
                let (a, b) = (a.index() as u32, b.index() as u32);
                (a.min(b), a.max(b))
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// CSR adjacency with both directions of every edge and sorted neighbour lists.
    pub fn to_csr(&self) -> Csr {
        let n = self.num_nodes();
        let mut deg = vec![0usize; n + 1];
        let endpoints = || {
            self.topo
                .edge_indices()
                .filter_map(|e| self.topo.edge_endpoints(e))
                .map(|(a, b)| (a.index() as u32, b.index() as u32))
        };
        for (u, w) in endpoints() {
            deg[u as usize + 1] += 1;
            deg[w as usize + 1] += 1;
        }
        for i in 0..n {
            deg[i + 1] += deg[i];
        }
        let indptr = deg;
        let mut fill = indptr.clone();
        let mut indices = vec![0u32; indptr[n]];
        for (u, w) in endpoints() {
            indices[fill[u as usize]] = w;
            fill[u as usize] += 1;
            indices[fill[w as usize]] = u;
            fill[w as usize] += 1;
        }
        for u in 0..n {
            indices[indptr[u]..indptr[u + 1]].sort_unstable();
        }
        Csr { indptr, indices }
    }

    /// The [`Csr`] of the current topology, built on the first call (as [`Graph::to_csr`]) and
    /// kept until the next edge change. Concurrent first calls build it once.
    pub(crate) fn csr(&self) -> &Csr {
        self.csr.get_or_init(|| self.to_csr())
    }

    /// Directed edge list `(src, dst)` with both directions of every edge, sorted by source then
    /// target (PyG `edge_index` order).
    pub fn edge_index(&self) -> (Vec<u32>, Vec<u32>) {
        let csr = self.to_csr();
        let mut src = Vec::with_capacity(csr.indices.len());
        for u in 0..self.num_nodes() {
            src.extend(std::iter::repeat_n(
                u as u32,
                csr.indptr[u + 1] - csr.indptr[u],
            ));
        }
        (src, csr.indices)
    }

    /// The underlying petgraph graph, for petgraph's algorithms.
    pub fn petgraph(&self) -> &UnGraph<(), (), u32> {
        &self.topo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path4() -> Graph {
        Graph::from_edges(
            4,
            &[(0, 1), (2, 1), (1, 0), (2, 3)],
            Features::constant(4, 2, 1.0),
            vec![0, 1, 1, 0],
        )
        .unwrap()
    }

    #[test]
    fn duplicates_merge_and_csr_is_sorted() {
        let g = path4();
        assert_eq!(g.num_edges(), 3);
        assert_eq!(g.edges(), vec![(0, 1), (1, 2), (2, 3)]);
        let csr = g.to_csr();
        assert_eq!(csr.indptr, vec![0, 1, 3, 5, 6]);
        assert_eq!(csr.indices, vec![1, 0, 2, 1, 3, 2]);
        assert_eq!(
            g.edge_index(),
            (vec![0, 1, 1, 2, 2, 3], vec![1, 0, 2, 1, 3, 2])
        );
    }

    #[test]
    fn toggling_and_errors() {
        let mut g = path4();
        assert!(!g.toggle_edge(1, 2).unwrap());
        assert!(!g.has_edge(2, 1));
        assert!(g.toggle_edge(3, 0).unwrap());
        assert!(g.has_edge(0, 3));
        assert_eq!(g.num_edges(), 3);
        assert!(matches!(
            g.add_edge(0, 9),
            Err(GraphError::NodeOutOfRange { node: 9, .. })
        ));
        assert!(matches!(
            g.add_edge(2, 2),
            Err(GraphError::SelfLoop { node: 2 })
        ));
        assert!(!g.remove_edge(7, 8));
        assert!(!g.add_edge(0, 3).unwrap());
    }

    #[test]
    fn cached_csr_follows_edge_changes() {
        let mut g = path4();
        assert_eq!(g.csr(), &g.to_csr());
        assert_eq!(g.csr().neighbors(0), &[1]);
        assert!(g.toggle_edge(0, 3).unwrap());
        assert_eq!(g.csr().neighbors(0), &[1, 3]);
        assert!(g.remove_edge(1, 0));
        assert_eq!(g.csr().neighbors(0), &[3]);
        assert!(!g.add_edge(0, 3).unwrap());
        assert_eq!(g.csr(), &g.to_csr());
        let c = g.clone();
        assert_eq!(c.csr(), g.csr());
    }

    #[test]
    fn construction_errors() {
        let f = Features::constant(3, 1, 1.0);
        assert!(matches!(
            Graph::from_edges(3, &[(0, 0)], f.clone(), vec![0; 3]),
            Err(GraphError::SelfLoop { node: 0 })
        ));
        assert!(matches!(
            Graph::from_edges(3, &[(0, 3)], f.clone(), vec![0; 3]),
            Err(GraphError::NodeOutOfRange {
                node: 3,
                num_nodes: 3
            })
        ));
        assert!(matches!(
            Graph::from_edges(3, &[], f, vec![0; 2]),
            Err(GraphError::PerNodeLength { what: "labels", .. })
        ));
    }

    #[test]
    fn motif_edges() {
        let g = path4()
            .with_motifs(vec![None, Some(0), Some(0), Some(1)])
            .unwrap();
        assert!(g.is_motif_edge(1, 2));
        assert!(!g.is_motif_edge(2, 3));
        assert!(!g.is_motif_edge(0, 1));
    }
}
