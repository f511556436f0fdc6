//! [`Adjacency`]: the GCN's normalised adjacency `Â` in compressed rows, and its product with a
//! row-major matrix, row by row in the order Burn sums.

use super::dense::LANES;
use crate::error::{ModelError, Result};
use crate::kernels::tensors::degrees_with_self_loops;

/// `Â = D̃^{-1/2}(A + I)D̃^{-1/2}` in compressed rows: the incoming messages of each node
/// (source, weight `1/sqrt(d̃(src) d̃(dst))`) in edge-list order, plus its self-loop weight.
///
/// The weights are computed with the arithmetic of
/// [`Messages::new`](crate::kernels::tensors::Messages::new), and each row lists its messages in
/// the order Burn's scatter-add meets them (edges in list order, the self loop last).
#[derive(Debug)]
pub(crate) struct Adjacency {
    /// Row `i`'s messages are `start[i]..start[i + 1]`.
    start: Vec<usize>,
    /// Message sources.
    src: Vec<u32>,
    /// Message weights.
    weight: Vec<f32>,
    /// Self-loop weight `1/d̃` of each node.
    self_weight: Vec<f32>,
}

impl Adjacency {
    /// Validates `edges` with the errors of
    /// [`Messages::new`](crate::kernels::tensors::Messages::new) and builds the rows (a counting
    /// sort: `O(n + E)`). With `hidden`, for a subgraph whose node `v` has `hidden[v]` more
    /// neighbours in the whole graph: degrees count them, and each row's neighbour messages are
    /// scaled by `(listed + hidden) / listed` (the listed neighbours stand in for the hidden ones).
    pub(crate) fn build(n: usize, edges: &[(u32, u32)], hidden: Option<&[u32]>) -> Result<Self> {
        let mut deg = degrees_with_self_loops(n, edges)?;
        let listed = deg.clone();
        let mut scale = Vec::new();
        if let Some(h) = hidden {
            if h.len() != n {
                return Err(ModelError::InvalidInput(format!(
                    "{} hidden-neighbour counts for {n} nodes",
                    h.len()
                )));
            }
            scale = listed
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
        let mut start = Vec::with_capacity(n + 1);
        let mut total = 0usize;
        start.push(0);
        for &d in &listed {
            total += d as usize - 1;
            start.push(total);
        }
        let mut next = start[..n].to_vec();
        let (mut src, mut weight) = (vec![0u32; total], vec![0.0f32; total]);
        for &(u, w) in edges {
            let s = inv[u as usize] * inv[w as usize];
            for (from, to) in [(u, w), (w, u)] {
                let slot = &mut next[to as usize];
                src[*slot] = from;
                weight[*slot] = match scale.get(to as usize) {
                    Some(&k) => s * k,
                    None => s,
                };
                *slot += 1;
            }
        }
        let self_weight = inv.iter().map(|&i| i * i).collect();
        Ok(Self {
            start,
            src,
            weight,
            self_weight,
        })
    }

    pub(super) fn num_nodes(&self) -> usize {
        self.self_weight.len()
    }

    /// The neighbours of `v` (its messages' sources, self loop excluded).
    pub(crate) fn neighbours(&self, v: usize) -> &[u32] {
        &self.src[self.start[v]..self.start[v + 1]]
    }

    /// [`Adjacency::aggregate`] for the listed rows only: `out[i] = (Â h)[rows[i]]`, with the
    /// same per-row arithmetic.
    ///
    /// # Shapes
    /// - h: `[n, f]`; out: `[rows.len(), f]`
    pub(crate) fn aggregate_rows(&self, h: &[f32], f: usize, rows: &[u32], out: &mut [f32]) {
        if f == 0 {
            return;
        }
        for (&v, o) in rows.iter().zip(out.chunks_exact_mut(f)) {
            self.aggregate_row(v as usize, h, f, o);
        }
    }

    /// Row `i` of `Â h` into `o` (`f` wide, overwritten).
    #[inline(always)]
    fn aggregate_row(&self, i: usize, h: &[f32], f: usize, o: &mut [f32]) {
        let full = f - f % (2 * LANES);
        let (lo, hi) = (self.start[i], self.start[i + 1]);
        let row = Row {
            src: &self.src[lo..hi],
            weight: &self.weight[lo..hi],
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

    /// `out = Â h` (`out` is overwritten). Each output row is summed from zero over its
    /// messages `h[src] · weight` in row order, then its self loop, as Burn's scatter-add does.
    ///
    /// # Shapes
    /// - h, out: `[n, f]`, `f` a multiple of [`LANES`]
    pub(super) fn aggregate(&self, h: &[f32], f: usize, out: &mut [f32]) {
        if f == 0 {
            return;
        }
        for (i, o) in out.chunks_exact_mut(f).enumerate() {
            self.aggregate_row(i, h, f, o);
        }
    }
}

/// One row of [`Adjacency`].
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
