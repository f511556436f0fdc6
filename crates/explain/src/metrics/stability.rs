//! Stability of counterfactuals as GNNX-Bench measures it: the Jaccard similarity of the edit
//! sets two runs give for the same target (two seeds, or the graph before and after noise).

use std::collections::HashSet;

use induce_graph::{Graph, k_hop};
use induce_models::BlackBox;
use rand::Rng;

use crate::error::Result;
use crate::explanation::{EditKind, Explanation};

/// An edit with its endpoints ordered, so that `(u, w, add)` and `(w, u, add)` compare equal.
fn key(e: &crate::Edit) -> (u32, u32, EditKind) {
    (e.u.min(e.w), e.u.max(e.w), e.kind)
}

/// The Jaccard similarity `|A ∩ B| / |A ∪ B|` of the edit sets of two explanations of the same
/// target, counting only counterfactuals: `None` when neither is one (nothing to compare), `0`
/// when exactly one is (one run found a counterfactual, the other did not).
///
/// Edits compare as unordered pairs with their kind (an addition of `(u, w)` is not a deletion
/// of it).
///
/// ```
/// use induce_explain::metrics::jaccard;
/// use induce_explain::{Edit, Explanation};
/// let cf = |edits| Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 3, found: true, original_label: 1, new_label: 0, edits };
/// let a = cf(vec![Edit::delete(1, 3), Edit::add(3, 7)]);
/// let b = cf(vec![Edit::add(7, 3)]);
/// assert_eq!(jaccard(&a, &b), Some(0.5));
/// let none = Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     found: false, new_label: 1, edits: vec![], ..a.clone() };
/// assert_eq!(jaccard(&a, &none), Some(0.0));
/// assert_eq!(jaccard(&none, &none), None);
/// ```
pub fn jaccard(a: &Explanation, b: &Explanation) -> Option<f64> {
    match (a.found, b.found) {
        (false, false) => None,
        (true, false) | (false, true) => Some(0.0),
        (true, true) => {
            let sa: HashSet<_> = a.edits.iter().map(key).collect();
            let sb: HashSet<_> = b.edits.iter().map(key).collect();
            let union = sa.union(&sb).count();
            if union == 0 {
                return Some(1.0);
            }
            Some(sa.intersection(&sb).count() as f64 / union as f64)
        }
    }
}

/// The mean pairwise [`jaccard`] of several runs' explanations of the same target (e.g. one per
/// seed); `None` when no pair has a counterfactual.
///
/// ```
/// use induce_explain::metrics::mean_pairwise_jaccard;
/// use induce_explain::{Edit, Explanation};
/// let cf = |edits| Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 3, found: true, original_label: 1, new_label: 0, edits };
/// let runs = [cf(vec![Edit::delete(1, 3)]), cf(vec![Edit::delete(1, 3)]),
///     cf(vec![Edit::delete(2, 3)])];
/// // pairs: (0,1) = 1, (0,2) = 0, (1,2) = 0
/// assert_eq!(mean_pairwise_jaccard(&runs), Some(1.0 / 3.0));
/// ```
pub fn mean_pairwise_jaccard(runs: &[Explanation]) -> Option<f64> {
    let mut sum = 0.0;
    let mut n = 0usize;
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            if let Some(v) = jaccard(&runs[i], &runs[j]) {
                sum += v;
                n += 1;
            }
        }
    }
    (n > 0).then(|| sum / n as f64)
}

/// A graph with noise edges, and the pairs added.
pub type NoisyGraph = (Graph, Vec<(u32, u32)>);

/// Noise for the stability-under-noise test: `k` new edges between nodes of `target`'s
/// `hops`-hop neighbourhood, none of whose endpoints is the target or lies in the target's own
/// motif (when the graph has motif ground truth), none already an edge. Returns the graph with
/// the noise and the added pairs, or `None` when the neighbourhood has no such pair or when
/// every one of a few draws changed the black box's prediction for the target (the
/// counterfactual question would no longer be the same).
///
/// # Errors
/// An out-of-range `target`, or a black-box failure.
pub fn with_noise_edges(
    graph: &Graph,
    black_box: &dyn BlackBox,
    target: u32,
    hops: u32,
    k: usize,
    rng: &mut impl Rng,
) -> Result<Option<NoisyGraph>> {
    let sub = k_hop(graph, target, hops)?;
    let motif = graph
        .motifs()
        .and_then(|m| m[target as usize])
        .map(|id| (id, graph.motifs().expect("checked")));
    let pool: Vec<u32> = (0..sub.num_nodes())
        .map(|l| sub.global_of(l))
        .filter(|&u| u != target)
        .filter(|&u| motif.is_none_or(|(id, m)| m[u as usize] != Some(id)))
        .collect();
    if pool.len() < 2 {
        return Ok(None);
    }
    // The model's label on the whole graph, judged on the target's receptive field.
    let label = |g: &Graph| -> Result<usize> {
        Ok(
            crate::verdict::Judge::new(g, black_box, target, &[target], Default::default())?
                .label(),
        )
    };
    let original = label(graph)?;
    for _attempt in 0..8 {
        let mut noisy = graph.clone();
        let mut added = Vec::with_capacity(k);
        let mut tries = 0;
        while added.len() < k && tries < 64 * k {
            tries += 1;
            let a = pool[rng.random_range(0..pool.len())];
            let b = pool[rng.random_range(0..pool.len())];
            if a != b && noisy.add_edge(a, b)? {
                added.push((a.min(b), a.max(b)));
            }
        }
        if added.is_empty() {
            return Ok(None);
        }
        if label(&noisy)? == original {
            return Ok(Some((noisy, added)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Edit;
    use induce_graph::Features;
    use induce_models::LogProbs;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    /// Always class 1.
    struct Constant;
    impl BlackBox for Constant {
        fn input_dim(&self) -> usize {
            1
        }
        fn num_classes(&self) -> usize {
            2
        }
        fn log_probs(
            &self,
            x: &Features,
            _edges: &[(u32, u32)],
        ) -> induce_models::Result<LogProbs> {
            let d = (0..x.num_nodes()).flat_map(|_| [-2.0, -0.2]);
            LogProbs::new(x.num_nodes(), 2, d.collect())
        }
    }

    #[test]
    fn jaccard_compares_unordered_pairs_with_their_kind() {
        let cf = |edits| Explanation::counterfactual(0, 1, 0, edits);
        let a = cf(vec![Edit::delete(0, 1), Edit::delete(0, 2)]);
        let b = cf(vec![Edit::delete(2, 0), Edit::add(0, 1)]);
        // common: del(0,2); union: del(0,1), del(0,2), add(0,1)
        assert_eq!(jaccard(&a, &b), Some(1.0 / 3.0));
        assert_eq!(jaccard(&a, &a), Some(1.0));
    }

    #[test]
    fn noise_stays_in_the_neighbourhood_and_out_of_the_motif() {
        // Path 0-1-2-3-4-5 with motif {0, 1} (id 0): from target 0 with 3 hops the pool is
        // {2, 3}, so the only possible noise edge is (2, 3)... which exists: no noise.
        let edges = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)];
        let g = Graph::from_edges(
            6,
            &edges,
            Features::constant(6, 1, 1.0),
            vec![1, 1, 0, 0, 0, 0],
        )
        .unwrap()
        .with_motifs(vec![Some(0), Some(0), None, None, None, None])
        .unwrap();
        let mut rng = StdRng::seed_from_u64(1);
        assert!(
            with_noise_edges(&g, &Constant, 0, 3, 2, &mut rng)
                .unwrap()
                .is_none()
        );
        // With 4 hops the pool is {2, 3, 4}: noise is (2, 4), never touching 0 or 1.
        let (noisy, added) = with_noise_edges(&g, &Constant, 0, 4, 1, &mut rng)
            .unwrap()
            .unwrap();
        assert_eq!(added, vec![(2, 4)]);
        assert!(noisy.has_edge(2, 4));
        assert_eq!(noisy.num_edges(), g.num_edges() + 1);
    }
}
