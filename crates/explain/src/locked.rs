//! Locked nodes and edges: parts of the graph no edit may touch (a user's constraint, beside the
//! allowed pairs of InduCE's `V_c`). An edit `(u, w)` is forbidden when `u` or `w` is a locked
//! node or when `{u, w}` is a locked edge (or a locked non-edge: a pair that may not be added).

use serde::{Deserialize, Serialize};

/// The nodes and node pairs no edit may touch, in original ids (pairs unordered).
///
/// ```text
///   0 ─ 1 ─ 2      nodes [2], edges [(0, 1)]:
///       │          del (0, 1), del (1, 2), add (0, 2) are forbidden;
///       3          del (1, 3), add (0, 3) are not
/// ```
///
/// ```
/// use induce_explain::Locked;
/// let l = Locked::new(vec![2], vec![(1, 0)]);
/// assert!(!l.permits(0, 1) && !l.permits(1, 0) && !l.permits(1, 2) && !l.permits(0, 2));
/// assert!(l.permits(1, 3) && l.permits(0, 3));
/// assert!(Locked::default().is_empty() && Locked::default().permits(0, 1));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Raw")]
pub struct Locked {
    /// Nodes no edit may have as an endpoint (sorted, no duplicates).
    pub nodes: Vec<u32>,
    /// Pairs `(min, max)` no edit may delete or add (sorted, no duplicates).
    pub edges: Vec<(u32, u32)>,
}

/// A [`Locked`] as written by hand (any order): normalised when read.
#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    nodes: Vec<u32>,
    #[serde(default)]
    edges: Vec<(u32, u32)>,
}

impl From<Raw> for Locked {
    fn from(r: Raw) -> Self {
        Self::new(r.nodes, r.edges)
    }
}

impl Locked {
    /// The constraint of `nodes` and `edges` (in any order, pairs either way round).
    pub fn new(mut nodes: Vec<u32>, edges: Vec<(u32, u32)>) -> Self {
        nodes.sort_unstable();
        nodes.dedup();
        let mut edges: Vec<(u32, u32)> = edges
            .into_iter()
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        edges.sort_unstable();
        edges.dedup();
        Self { nodes, edges }
    }

    /// True when nothing is locked.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty() && self.edges.is_empty()
    }

    /// Whether an edit of the pair `(u, w)` is allowed: neither endpoint locked, nor the pair.
    pub fn permits(&self, u: u32, w: u32) -> bool {
        self.nodes.binary_search(&u).is_err()
            && self.nodes.binary_search(&w).is_err()
            && self.edges.binary_search(&(u.min(w), u.max(w))).is_err()
    }

    /// The first node id at or beyond `num_nodes`, if any (for a range check naming it).
    pub fn out_of_range(&self, num_nodes: usize) -> Option<u32> {
        let n = u32::try_from(num_nodes).unwrap_or(u32::MAX);
        (self.nodes.iter().copied())
            .chain(self.edges.iter().map(|&(_, b)| b))
            .find(|&v| v >= n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_normalises_and_range_check_names_the_node() {
        let l = Locked::new(vec![3, 1, 3], vec![(5, 2), (2, 5)]);
        assert_eq!(l.nodes, [1, 3]);
        assert_eq!(l.edges, [(2, 5)]);
        assert_eq!(l.out_of_range(6), None);
        assert_eq!(l.out_of_range(5), Some(5));
        assert_eq!(l.out_of_range(3), Some(3));
        let json = serde_json::to_string(&l).unwrap();
        assert_eq!(json, r#"{"nodes":[1,3],"edges":[[2,5]]}"#);
        assert_eq!(serde_json::from_str::<Locked>(&json).unwrap(), l);
        let by_hand: Locked = serde_json::from_str(r#"{"nodes":[3,1],"edges":[[5,2]]}"#).unwrap();
        assert_eq!(by_hand, l);
    }
}
