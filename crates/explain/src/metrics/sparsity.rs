//! Sparsity: how small the explanation is relative to the neighbourhood.

use induce_graph::{Graph, k_hop_edge_count, k_hop_edge_counts};

use crate::error::{ExplainError, Result};
use crate::explanation::Explanation;
use crate::metrics::{found, mean};

/// Mean, over found explanations, of `1 − edits / m_v`, where `m_v = edges_of(target)` is the
/// number of edges of the target's ORIGINAL ℓ-hop neighbourhood (use [`neighbourhood_edges`],
/// or index a precomputed slice: `|t| counts[t as usize]`).
///
/// Additions can make `edits > m_v`, giving a negative term (kept as is). Targets with
/// `m_v = 0` have no sparsity and are skipped; `None` when nothing is left.
///
/// ```
/// use induce_explain::{Edit, Explanation, metrics::sparsity};
/// let e = Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 3, found: true, original_label: 1, new_label: 0,
///     edits: vec![Edit::delete(3, 4)] };
/// assert_eq!(sparsity(&[e], |_| 4), Some(0.75));
/// ```
pub fn sparsity(explanations: &[Explanation], edges_of: impl Fn(u32) -> usize) -> Option<f64> {
    mean(found(explanations).filter_map(|e| {
        let m = edges_of(e.target);
        (m > 0).then(|| 1.0 - e.size() as f64 / m as f64)
    }))
}

/// Number of edges of the `hops`-hop neighbourhood of `target` in `graph` (the `m_v` of
/// [`sparsity`]).
///
/// ```
/// use induce_graph::{Features, Graph};
/// use induce_explain::metrics::neighbourhood_edges;
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
///     vec![0; 4]).unwrap();
/// assert_eq!(neighbourhood_edges(&g, 0, 2).unwrap(), 2);
/// ```
pub fn neighbourhood_edges(graph: &Graph, target: u32, hops: u32) -> Result<usize> {
    if target as usize >= graph.num_nodes() {
        return Err(ExplainError::TargetOutOfRange {
            target,
            num_nodes: graph.num_nodes(),
        });
    }
    Ok(k_hop_edge_count(graph, target, hops)?)
}

/// [`neighbourhood_edges`] of every target of `targets`, in their order, on up to `threads`
/// threads: batches of 64 targets share one breadth-first search
/// ([`k_hop_edge_counts`]), which an audit of every node of a large graph needs (its 3-hop
/// balls hold a third of the graph).
///
/// ```
/// use induce_graph::{Features, Graph};
/// use induce_explain::metrics::{neighbourhood_edges, neighbourhood_edges_many};
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], Features::constant(4, 1, 1.0),
///     vec![0; 4]).unwrap();
/// assert_eq!(neighbourhood_edges_many(&g, &[0, 3, 1], 2, 2).unwrap(), [2, 2, 3]);
/// assert_eq!(neighbourhood_edges(&g, 1, 2).unwrap(), 3);
/// ```
pub fn neighbourhood_edges_many(
    graph: &Graph,
    targets: &[u32],
    hops: u32,
    threads: usize,
) -> Result<Vec<usize>> {
    let n = graph.num_nodes();
    if let Some(&target) = targets.iter().find(|&&t| t as usize >= n) {
        return Err(ExplainError::TargetOutOfRange {
            target,
            num_nodes: n,
        });
    }
    let batches: Vec<&[u32]> = targets.chunks(64).collect();
    let counts = crate::parallel::map(&batches, threads, |batch| {
        Ok(k_hop_edge_counts(graph, batch, hops)?)
    })?;
    Ok(counts.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::fixture;
    use induce_graph::Features;

    #[test]
    fn fixture_sparsity() {
        // 10: 1 − 2/4 = 0.5; 20: 1 − 1/2 = 0.5; 40: 1 − 3/12 = 0.75 → 7/12
        let s = sparsity(&fixture::explanations(), fixture::edges_of).unwrap();
        assert!((s - 7.0 / 12.0).abs() < 1e-12, "{s}");
        // from a slice
        let counts: Vec<usize> = (0..43).map(fixture::edges_of).collect();
        let t = sparsity(&fixture::explanations(), |t| counts[t as usize]).unwrap();
        assert_eq!(s, t);
    }

    #[test]
    fn negative_zero_edge_and_empty() {
        let mut e = fixture::explanations();
        e.truncate(1); // 2 edits
        assert_eq!(sparsity(&e, |_| 1), Some(-1.0));
        assert_eq!(sparsity(&e, |_| 0), None);
        assert_eq!(sparsity(&[], |_| 3), None);
    }

    #[test]
    fn neighbourhood_edge_counts() {
        let g = Graph::from_edges(
            5,
            &[(0, 1), (1, 2), (2, 3), (3, 4), (1, 3)],
            Features::constant(5, 1, 1.0),
            vec![0; 5],
        )
        .unwrap();
        assert_eq!(neighbourhood_edges(&g, 0, 1).unwrap(), 1);
        // {0, 1, 2, 3}: (0,1) (1,2) (1,3) (2,3)
        assert_eq!(neighbourhood_edges(&g, 0, 2).unwrap(), 4);
        assert_eq!(neighbourhood_edges(&g, 0, 4).unwrap(), 5);
        assert!(matches!(
            neighbourhood_edges(&g, 5, 1),
            Err(ExplainError::TargetOutOfRange {
                target: 5,
                num_nodes: 5
            })
        ));
    }
}
