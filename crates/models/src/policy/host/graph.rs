//! [`HostGraph`]: the policy's graph as incoming-message lists.

use crate::error::Result;
use crate::kernels::tensors::degrees_with_self_loops;

/// A graph as incoming-message lists for the GAT layers: for each destination node `i`, the
/// sources `j` of its messages (its neighbours and itself, the self loop).
///
/// ```text
///  0 ─ 1     incoming(0) = [1, 0], incoming(1) = [0, 1], incoming(2) = [2]
///  2
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HostGraph {
    pub(super) num_nodes: usize,
    offsets: Vec<usize>,
    pub(super) src: Vec<u32>,
}

impl HostGraph {
    /// Builds the message lists of an undirected graph given as `(u, w)` pairs (each pair once).
    /// Rejects out-of-range endpoints and self loops.
    pub fn new(num_nodes: usize, edges: &[(u32, u32)]) -> Result<Self> {
        let deg = degrees_with_self_loops(num_nodes, edges)?;
        let mut offsets = Vec::with_capacity(num_nodes + 1);
        offsets.push(0);
        for &d in &deg {
            offsets.push(offsets.last().copied().unwrap_or(0) + d as usize);
        }
        let mut fill: Vec<usize> = offsets[..num_nodes].to_vec();
        let mut src = vec![0u32; offsets[num_nodes]];
        for &(u, w) in edges {
            src[fill[w as usize]] = u;
            fill[w as usize] += 1;
            src[fill[u as usize]] = w;
            fill[u as usize] += 1;
        }
        for (i, f) in fill.iter().enumerate() {
            src[*f] = i as u32;
        }
        Ok(Self {
            num_nodes,
            offsets,
            src,
        })
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// Number of messages (`2E + n`).
    pub fn num_messages(&self) -> usize {
        self.src.len()
    }

    pub(super) fn incoming(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i]..self.offsets[i + 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_lists_and_errors() {
        let g = HostGraph::new(3, &[(0, 1)]).unwrap();
        assert_eq!(g.src, vec![1, 0, 0, 1, 2]);
        assert_eq!(g.offsets, vec![0, 2, 4, 5]);
        assert_eq!(g.num_messages(), 5);
        assert!(HostGraph::new(2, &[(0, 2)]).is_err());
        assert!(HostGraph::new(2, &[(1, 1)]).is_err());
    }
}
