//! Stress-majorization layout (Gansner, Koren, North: "Graph Drawing by Stress Majorization",
//! 2004): node positions whose Euclidean distances approximate the graph's shortest-path
//! distances, so a cycle is drawn as a ring, a grid as a grid and a tree as a tree.
//!
//! Why not a crate: the maintained Rust layout crates we looked at are force simulations
//! (`forceatlas2`, `force_graph`) tuned for large networks or animation; on the 5–300-node
//! neighbourhoods drawn here a distance-preserving layout reads better, and SMACOF is a few
//! dozen lines, deterministic from its seeded start, and dependency-free.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// All-pairs hop distances by breadth-first search; unreachable pairs get `max + 1`.
fn hop_distances(n: usize, edges: &[(u32, u32)]) -> Vec<f64> {
    let mut adj = vec![Vec::new(); n];
    for &(u, w) in edges {
        adj[u as usize].push(w as usize);
        adj[w as usize].push(u as usize);
    }
    let mut d = vec![f64::INFINITY; n * n];
    let mut queue = std::collections::VecDeque::new();
    for s in 0..n {
        d[s * n + s] = 0.0;
        queue.push_back(s);
        while let Some(u) = queue.pop_front() {
            for &w in &adj[u] {
                if d[s * n + w].is_infinite() {
                    d[s * n + w] = d[s * n + u] + 1.0;
                    queue.push_back(w);
                }
            }
        }
    }
    let max = d
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max);
    d.iter_mut()
        .filter(|v| v.is_infinite())
        .for_each(|v| *v = max + 1.0);
    d
}

/// Positions (in graph-distance units) of `n` nodes joined by undirected `edges` (indices
/// `< n`), from a start drawn with `seed`: the same input gives the same output, bit for bit.
///
/// Cost `O(n² · iterations)` (80 iterations; about 0.1 s for 300 nodes).
///
/// ```
/// use induce_viz::layout::stress_layout;
/// // a path 0 ─ 1 ─ 2: the ends are about twice as far apart as neighbours
/// let p = stress_layout(3, &[(0, 1), (1, 2)], 7);
/// let d = |a: usize, b: usize| ((p[a].0 - p[b].0).powi(2) + (p[a].1 - p[b].1).powi(2)).sqrt();
/// assert!((d(0, 2) / d(0, 1) - 2.0).abs() < 0.05);
/// assert_eq!(p, stress_layout(3, &[(0, 1), (1, 2)], 7));
/// ```
pub fn stress_layout(n: usize, edges: &[(u32, u32)], seed: u64) -> Vec<(f64, f64)> {
    if n == 0 {
        return Vec::new();
    }
    let d = hop_distances(n, edges);
    let mut rng = StdRng::seed_from_u64(seed);
    let scale = (n as f64).sqrt();
    let mut p: Vec<(f64, f64)> = (0..n)
        .map(|_| {
            (
                rng.random_range(-scale..scale),
                rng.random_range(-scale..scale),
            )
        })
        .collect();
    for _ in 0..80 {
        for i in 0..n {
            let (mut sx, mut sy, mut sw) = (0.0, 0.0, 0.0);
            for j in 0..n {
                if i == j {
                    continue;
                }
                let dij = d[i * n + j];
                let w = 1.0 / (dij * dij);
                let (dx, dy) = (p[i].0 - p[j].0, p[i].1 - p[j].1);
                let dist = (dx * dx + dy * dy).sqrt().max(1e-9);
                sx += w * (p[j].0 + dij * dx / dist);
                sy += w * (p[j].1 + dij * dy / dist);
                sw += w;
            }
            if sw > 0.0 {
                p[i] = (sx / sw, sy / sw);
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_six_cycle_is_drawn_as_a_ring() {
        let edges: Vec<(u32, u32)> = (0..6).map(|i| (i, (i + 1) % 6)).collect();
        let p = stress_layout(6, &edges, 1);
        let cx = p.iter().map(|q| q.0).sum::<f64>() / 6.0;
        let cy = p.iter().map(|q| q.1).sum::<f64>() / 6.0;
        let r: Vec<f64> = p
            .iter()
            .map(|q| ((q.0 - cx).powi(2) + (q.1 - cy).powi(2)).sqrt())
            .collect();
        let mean = r.iter().sum::<f64>() / 6.0;
        assert!(r.iter().all(|x| (x - mean).abs() < 0.1 * mean), "{r:?}");
    }

    #[test]
    fn disconnected_nodes_and_empty_graphs() {
        assert!(stress_layout(0, &[], 1).is_empty());
        let p = stress_layout(3, &[(0, 1)], 2);
        assert!(p.iter().all(|q| q.0.is_finite() && q.1.is_finite()));
    }
}
