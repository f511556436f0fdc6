//! [`Adjacency`]: an undirected graph in compressed rows, the one host adjacency of the GCN host
//! kernels, the PyG layers and the policy kernel, with the GCN's normalisation `Â` and its
//! product with a row-major matrix.

use super::LANES;
use crate::error::{ModelError, Result};
use crate::kernels::tensors::degrees_with_self_loops;

/// An undirected graph in compressed rows: row `i` lists the sources of node `i`'s incoming
/// messages (its neighbours, each edge once in each direction).
///
/// The constructors fix what a row holds and in which order:
///
/// | constructor | rows | used by |
/// |---|---|---|
/// | [`Adjacency::new`] | neighbours, ascending | the PyG layers |
/// | [`Adjacency::with_self_loops`] | neighbours in edge-list order, then the node itself | the policy's GAT layers |
/// | `Adjacency::gcn` | neighbours in edge-list order, with the weights of `Â = D̃^{-1/2}(A + I)D̃^{-1/2}` (self loop held apart) | the host GCN |
///
/// "Edge-list order" is the order Burn's scatter-add meets the messages: for each edge `(u, w)`
/// in turn, `u` joins row `w`, then `w` joins row `u`.
///
/// ```text
///  0 ─ 1     new:              row(0) = [1],    row(1) = [0],    row(2) = []
///  2         with_self_loops:  row(0) = [1, 0], row(1) = [0, 1], row(2) = [2]
/// ```
///
/// ```
/// use induce_models::linalg::Adjacency;
/// let g = Adjacency::with_self_loops(3, &[(0, 1)]).unwrap();
/// assert_eq!((g.neighbours(0), g.neighbours(2)), (&[1, 0][..], &[2][..]));
/// assert_eq!((g.num_nodes(), g.num_messages()), (3, 5));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Adjacency {
    /// Row `i` is `src[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<usize>,
    /// Message sources.
    src: Vec<u32>,
    /// [`Adjacency::gcn`]'s message weights (one per entry of `src`); empty otherwise.
    weight: Vec<f32>,
    /// [`Adjacency::gcn`]'s self-loop weight `1/d̃` of each node; empty otherwise.
    self_weight: Vec<f32>,
}

impl Adjacency {
    /// The rows of `edges` in edge-list order (a counting sort: `O(n + E)`), each followed by
    /// the node itself when `self_loops`. With `norm = (inv, scale)`, each message of edge
    /// `(u, w)` into row `to` is weighted `inv[u] · inv[w]` (times `scale[to]` when `scale` is
    /// not empty), in the same pass. Endpoints are not checked (one `≥ n` panics).
    fn lists(
        n: usize,
        edges: &[(u32, u32)],
        self_loops: bool,
        norm: Option<(&[f32], &[f32])>,
    ) -> Self {
        let mut offsets = vec![0usize; n + 1];
        for &(u, w) in edges {
            offsets[u as usize + 1] += 1;
            offsets[w as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i] + usize::from(self_loops);
        }
        let mut fill = offsets[..n].to_vec();
        let mut src = vec![0u32; offsets[n]];
        let mut weight = vec![0.0f32; if norm.is_some() { offsets[n] } else { 0 }];
        for &(u, w) in edges {
            let s = norm.map(|(inv, _)| inv[u as usize] * inv[w as usize]);
            for (from, to) in [(u, w), (w, u)] {
                let slot = &mut fill[to as usize];
                src[*slot] = from;
                if let (Some(s), Some((_, scale))) = (s, norm) {
                    weight[*slot] = match scale.get(to as usize) {
                        Some(&k) => s * k,
                        None => s,
                    };
                }
                *slot += 1;
            }
        }
        if self_loops {
            for (i, &f) in fill.iter().enumerate() {
                src[f] = i as u32;
            }
        }
        Self {
            offsets,
            src,
            weight,
            self_weight: Vec::new(),
        }
    }

    /// Adjacency lists, each ascending, no self loops: from undirected pairs (each once, ids
    /// `< n`, checked by the caller).
    pub fn new(n: usize, edges: &[(u32, u32)]) -> Self {
        let mut adj = Self::lists(n, edges, false, None);
        for i in 0..n {
            adj.src[adj.offsets[i]..adj.offsets[i + 1]].sort_unstable();
        }
        adj
    }

    /// Incoming-message lists: each row its neighbours in edge-list order, then the node itself
    /// (the self loop). Rejects out-of-range endpoints and self loops in `edges`.
    pub fn with_self_loops(n: usize, edges: &[(u32, u32)]) -> Result<Self> {
        degrees_with_self_loops(n, edges)?;
        Ok(Self::lists(n, edges, true, None))
    }

    /// The GCN's `Â = D̃^{-1/2}(A + I)D̃^{-1/2}`: each row its neighbours in edge-list order with
    /// weight `1/sqrt(d̃(src) d̃(dst))`, the self loop's weight `1/d̃` held apart; computed with
    /// the arithmetic of [`Messages::new`](crate::kernels::tensors::Messages::new), whose errors
    /// it gives for bad `edges`.
    ///
    /// With `hidden`, for a subgraph whose node `v` has `hidden[v]` more neighbours in the whole
    /// graph: degrees count them, and each row's neighbour messages are scaled by
    /// `(listed + hidden) / listed` (the listed neighbours stand in for the hidden ones).
    pub(crate) fn gcn(n: usize, edges: &[(u32, u32)], hidden: Option<&[u32]>) -> Result<Self> {
        let mut deg = degrees_with_self_loops(n, edges)?;
        let mut scale = Vec::new();
        if let Some(h) = hidden {
            if h.len() != n {
                return Err(ModelError::InvalidInput(format!(
                    "{} hidden-neighbour counts for {n} nodes",
                    h.len()
                )));
            }
            scale = deg
                .iter()
                .zip(h)
                .map(|(&l, &x)| {
                    if l > 1 {
                        (l - 1 + x) as f32 / (l - 1) as f32
                    } else {
                        1.0
                    }
                })
                .collect();
            for (d, &x) in deg.iter_mut().zip(h) {
                *d += x;
            }
        }
        let inv: Vec<f32> = deg.iter().map(|&d| 1.0 / (d as f32).sqrt()).collect();
        let mut adj = Self::lists(n, edges, false, Some((&inv, &scale)));
        adj.self_weight = inv.iter().map(|&i| i * i).collect();
        Ok(adj)
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of messages (the entries of all rows: `2E`, plus `n` with self loops).
    pub fn num_messages(&self) -> usize {
        self.src.len()
    }

    /// Row `i`: the sources of node `i`'s messages (its neighbours; with
    /// [`Adjacency::with_self_loops`], `i` itself last).
    pub fn neighbours(&self, i: usize) -> &[u32] {
        &self.src[self.incoming(i)]
    }

    /// The positions of row `i`'s messages in [`Adjacency::sources`] (to index per-message
    /// arrays).
    pub fn incoming(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i]..self.offsets[i + 1]
    }

    /// Every row's sources, row after row (`[num_messages]`).
    pub fn sources(&self) -> &[u32] {
        &self.src
    }

    /// [`Adjacency::aggregate`] for the listed rows only: `out[i] = (Â h)[rows[i]]`, with the
    /// same per-row arithmetic. Only for [`Adjacency::gcn`].
    ///
    /// # Shapes
    /// - h: `[n, f]`, `f` a multiple of [`LANES`]; out: `[rows.len(), f]`
    pub(crate) fn aggregate_rows(&self, h: &[f32], f: usize, rows: &[u32], out: &mut [f32]) {
        if f == 0 {
            return;
        }
        for (&v, o) in rows.iter().zip(out.chunks_exact_mut(f)) {
            self.aggregate_row(v as usize, h, f, o);
        }
    }

    /// `out = Â h` (`out` is overwritten). Each output row is summed from zero over its
    /// messages `h[src] · weight` in row order, then its self loop, as Burn's scatter-add does.
    /// Only for [`Adjacency::gcn`].
    ///
    /// # Shapes
    /// - h, out: `[n, f]`, `f` a multiple of [`LANES`]
    pub(crate) fn aggregate(&self, h: &[f32], f: usize, out: &mut [f32]) {
        if f == 0 {
            return;
        }
        for (i, o) in out.chunks_exact_mut(f).enumerate() {
            self.aggregate_row(i, h, f, o);
        }
    }

    /// Row `i` of `Â h` into `o` (`f` wide, overwritten).
    #[inline(always)]
    fn aggregate_row(&self, i: usize, h: &[f32], f: usize, o: &mut [f32]) {
        debug_assert!(
            self.self_weight.len() == self.num_nodes(),
            "aggregate needs Adjacency::gcn's weights"
        );
        let full = f - f % (2 * LANES);
        let range = self.incoming(i);
        let row = Row {
            src: &self.src[range.clone()],
            weight: &self.weight[range],
            node: i,
            self_weight: self.self_weight[i],
        };
        for j in (0..full).step_by(2 * LANES) {
            row.gather::<{ 2 * LANES }>(h, f, j, o);
        }
        if full < f {
            row.gather::<LANES>(h, f, full, o);
        }
    }
}

/// One row of a normalised [`Adjacency`].
struct Row<'a> {
    src: &'a [u32],
    weight: &'a [f32],
    node: usize,
    self_weight: f32,
}

impl Row<'_> {
    /// `o[j..j + C] = Σ_messages h[src][j..j + C] · weight + h[node][j..j + C] · self_weight`.
    #[inline(always)]
    fn gather<const C: usize>(&self, h: &[f32], f: usize, j: usize, o: &mut [f32]) {
        let mut acc = [0.0f32; C];
        let mut add = |u: usize, s: f32| {
            let x: &[f32; C] = h[u * f + j..u * f + j + C].try_into().expect("C columns");
            for c in 0..C {
                acc[c] += x[c] * s;
            }
        };
        for (&u, &s) in self.src.iter().zip(self.weight) {
            add(u as usize, s);
        }
        add(self.node, self.self_weight);
        o[j..j + C].copy_from_slice(&acc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `0 ─ 1 ─ 2` and a lone node 3, edges listed `(1, 2), (0, 1)`.
    const EDGES: [(u32, u32); 2] = [(1, 2), (0, 1)];

    #[test]
    fn rows_of_each_constructor() {
        let a = Adjacency::new(4, &EDGES);
        assert_eq!(a.neighbours(1), &[0, 2]);
        assert_eq!((a.num_nodes(), a.num_messages()), (4, 4));
        let s = Adjacency::with_self_loops(4, &EDGES).unwrap();
        // Edge-list order: (1, 2) puts 1 in row 2 and 2 in row 1, then (0, 1) puts 0 in row 1.
        assert_eq!(s.sources(), &[1, 0, 2, 0, 1, 1, 2, 3]);
        assert_eq!(s.incoming(1), 2..5);
        assert_eq!(s.neighbours(3), &[3]);
        let g = Adjacency::gcn(4, &EDGES, None).unwrap();
        assert_eq!(g.sources(), &[1, 2, 0, 1]);
        // d̃ = [2, 3, 2, 1]: weight 1/sqrt(d̃(src) d̃(dst)), self loops 1/d̃.
        let inv = [2f32, 3.0, 2.0, 1.0].map(|d| 1.0 / d.sqrt());
        assert_eq!(
            g.weight,
            vec![
                inv[1] * inv[0],
                inv[2] * inv[1],
                inv[0] * inv[1],
                inv[1] * inv[2]
            ]
        );
        assert_eq!(g.self_weight, inv.map(|i| i * i).to_vec());
        for bad in [&[(0u32, 4u32)][..], &[(2, 2)]] {
            assert!(Adjacency::with_self_loops(4, bad).is_err());
            assert!(Adjacency::gcn(4, bad, None).is_err());
        }
        assert!(Adjacency::gcn(4, &EDGES, Some(&[0, 0])).is_err());
    }

    #[test]
    fn gcn_aggregate_small() {
        // A path 0 ─ 1 (d̃ = 2 each): Â = [[½ ½] [½ ½]]; h 4 wide.
        let g = Adjacency::gcn(2, &[(0, 1)], None).unwrap();
        let h = [2.0, 4.0, 6.0, 8.0, 0.0, 2.0, 4.0, 6.0];
        let s = (1.0 / 2f32.sqrt()) * (1.0 / 2f32.sqrt());
        // Each row: its neighbour's message first, then its self loop.
        let want: Vec<f32> = (0..8)
            .map(|c| 0.0 + h[(c + 4) % 8] * s + h[c] * s)
            .collect();
        let mut out = [9.0; 8];
        g.aggregate(&h, 4, &mut out);
        assert_eq!(out.to_vec(), want);
        assert!((out[0] - 1.0).abs() < 1e-6 && (out[7] - 7.0).abs() < 1e-6);
        let mut one = [0.0; 4];
        g.aggregate_rows(&h, 4, &[1], &mut one);
        assert_eq!(one.to_vec(), want[4..]);
        // One hidden neighbour of node 0: d̃(0) = 3, its message scaled by (1 + 1) / 1.
        let g = Adjacency::gcn(2, &[(0, 1)], Some(&[1, 0])).unwrap();
        let s = 1.0 / 3f32.sqrt() * (1.0 / 2f32.sqrt());
        assert_eq!(g.weight, vec![s * 2.0, s]);
    }
}
