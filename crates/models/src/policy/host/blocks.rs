//! A policy state in two column blocks ([`StateBlocks`]), optionally with the non-zero entries of
//! a block ([`SparseRows`]), and the products of the first GAT layer's weight with such a state
//! ([`FirstBlockProduct`] and the block-wise matrix products of the forward and backward passes).

/// A per-node state `[n, width]` given as two column blocks, `row i = first[i] ‖ second[i]`:
/// a caller keeps the columns that never change during an episode (the node features, often
/// hundreds wide) in one shared block and copies only the few that change at every edit. The
/// kernel computes exactly what it computes on the concatenated rows (same operations, same
/// order).
///
/// ```
/// use induce_models::policy::host::StateBlocks;
/// let features = [1.0, 2.0, 3.0, 4.0]; // 2 nodes, 2 fixed columns
/// let degree = [1.0, 0.0];             // 2 nodes, 1 changing column
/// let x = StateBlocks::new(&features, 2, &degree, 1);
/// assert_eq!((x.num_nodes(), x.width()), (2, 3));
/// assert_eq!(x.to_rows(), vec![1.0, 2.0, 1.0, 3.0, 4.0, 0.0]);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct StateBlocks<'a> {
    first: &'a [f32],
    pub(super) first_width: usize,
    second: &'a [f32],
    second_width: usize,
    num_nodes: usize,
    /// The non-zero entries of each block, when the caller has them (wide sparse features).
    sparse: [Option<&'a SparseRows>; 2],
}

/// The non-zero entries of a row-major matrix, row by row (compressed sparse rows), for
/// [`StateBlocks::with_sparse`]: the kernel then visits only the non-zero entries of wide, sparse
/// node features (bag-of-words rows are mostly zeros), in the same order and with the same
/// arithmetic as the dense loop, which skips zeros.
///
/// ```
/// use induce_models::policy::host::SparseRows;
/// let s = SparseRows::new(&[0.0, 2.0, 0.0, 1.0, 0.0, 0.0], 3);
/// assert_eq!((s.num_rows(), s.nnz()), (2, 2));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SparseRows {
    offsets: Vec<usize>,
    cols: Vec<u32>,
    vals: Vec<f32>,
    width: usize,
}

impl SparseRows {
    /// The non-zero entries (`x != 0.0`, so NaN is kept and `-0.0` dropped, as the dense loop
    /// does) of `x`, `[n, width]` row-major.
    pub fn new(x: &[f32], width: usize) -> Self {
        let mut offsets = vec![0];
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        if width > 0 {
            for row in x.chunks_exact(width) {
                for (c, &v) in row.iter().enumerate() {
                    if v != 0.0 {
                        cols.push(c as u32);
                        vals.push(v);
                    }
                }
                offsets.push(cols.len());
            }
        }
        Self {
            offsets,
            cols,
            vals,
            width,
        }
    }

    /// The rows `rows` (in that order) of this matrix: equal to [`SparseRows::new`] of those
    /// rows of the dense matrix, at the cost of copying their non-zero entries (the
    /// neighbourhoods of one graph gather theirs from the graph's, built once).
    ///
    /// Errors: [`crate::ModelError::InvalidInput`] for a row out of range.
    ///
    /// ```
    /// use induce_models::policy::host::SparseRows;
    /// let x = [0.0, 2.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 3.0];
    /// let s = SparseRows::new(&x, 3);
    /// let rows = [2, 0];
    /// let dense = [0.0, 0.0, 3.0, 0.0, 2.0, 0.0];
    /// assert_eq!(s.gather(&rows).unwrap(), SparseRows::new(&dense, 3));
    /// ```
    pub fn gather(&self, rows: &[u32]) -> crate::Result<Self> {
        if let Some(&bad) = rows.iter().find(|&&r| r as usize >= self.num_rows()) {
            return Err(crate::ModelError::InvalidInput(format!(
                "row {bad} of a sparse matrix of {} rows",
                self.num_rows()
            )));
        }
        let nnz: usize = rows
            .iter()
            .map(|&r| self.offsets[r as usize + 1] - self.offsets[r as usize])
            .sum();
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        let (mut cols, mut vals) = (Vec::with_capacity(nnz), Vec::with_capacity(nnz));
        for &r in rows {
            let (c, v) = self.row(r as usize);
            cols.extend_from_slice(c);
            vals.extend_from_slice(v);
            offsets.push(cols.len());
        }
        Ok(Self {
            offsets,
            cols,
            vals,
            width: self.width,
        })
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of non-zero entries.
    pub fn nnz(&self) -> usize {
        self.cols.len()
    }

    /// Share of non-zero entries (1 for an empty matrix).
    pub fn density(&self) -> f64 {
        let total = self.num_rows() * self.width;
        if total == 0 {
            1.0
        } else {
            self.nnz() as f64 / total as f64
        }
    }

    fn row(&self, i: usize) -> (&[u32], &[f32]) {
        let r = self.offsets[i]..self.offsets[i + 1];
        (&self.cols[r.clone()], &self.vals[r])
    }
}

/// The first GAT layer's product over a state's first block
/// ([`HostPolicy::first_block_product`](super::HostPolicy::first_block_product)).
#[derive(Debug, Clone)]
pub struct FirstBlockProduct {
    pub(super) rows: Vec<f32>,
    pub(super) num_nodes: usize,
    pub(super) first_width: usize,
}

/// One row of one block of a [`StateBlocks`]: dense values or the non-zero entries.
#[derive(Clone, Copy)]
enum Part<'a> {
    Dense(&'a [f32]),
    Sparse(&'a [u32], &'a [f32]),
}

impl Part<'_> {
    /// Calls `f(column, value)` for every non-zero entry, in column order.
    #[inline(always)]
    fn for_each_nonzero(self, mut f: impl FnMut(usize, f32)) {
        match self {
            Part::Dense(row) => {
                for (c, &v) in row.iter().enumerate() {
                    if v != 0.0 {
                        f(c, v);
                    }
                }
            }
            Part::Sparse(cols, vals) => {
                for (&c, &v) in cols.iter().zip(vals) {
                    f(c as usize, v);
                }
            }
        }
    }
}

impl<'a> StateBlocks<'a> {
    /// Two blocks of `first_width` and `second_width` columns over the same nodes.
    ///
    /// Panics if the blocks' lengths do not describe the same number of rows.
    pub fn new(
        first: &'a [f32],
        first_width: usize,
        second: &'a [f32],
        second_width: usize,
    ) -> Self {
        let rows = |x: &[f32], w: usize| x.len().checked_div(w);
        let n = rows(first, first_width)
            .or(rows(second, second_width))
            .unwrap_or(0);
        assert!(
            first.len() == n * first_width && second.len() == n * second_width,
            "blocks of {} and {} values are not {n} rows of {first_width} and {second_width}",
            first.len(),
            second.len()
        );
        Self {
            first,
            first_width,
            second,
            second_width,
            num_nodes: n,
            sparse: [None, None],
        }
    }

    /// The same state with the non-zero entries of block `block` (0 or 1) given, which the
    /// kernel then iterates instead of scanning the dense rows (same results, bit for bit).
    ///
    /// Panics if `sparse` does not have the block's shape.
    pub fn with_sparse(mut self, block: usize, sparse: &'a SparseRows) -> Self {
        let width = [self.first_width, self.second_width][block];
        if width == 0 {
            return self; // nothing to iterate
        }
        assert!(
            sparse.width == width && sparse.num_rows() == self.num_nodes,
            "sparse block is not {} rows of {width}",
            self.num_nodes
        );
        self.sparse[block] = Some(sparse);
        self
    }

    /// A state given whole, row-major `[n, width]`.
    pub fn whole(x: &'a [f32], width: usize) -> Self {
        Self::new(x, width, &[], 0)
    }

    /// Number of rows (nodes).
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// Width of a row (both blocks).
    pub fn width(&self) -> usize {
        self.first_width + self.second_width
    }

    /// The concatenated rows, row-major `[n, width]` (a copy).
    pub fn to_rows(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.num_nodes * self.width());
        for i in 0..self.num_nodes {
            out.extend_from_slice(self.row_first(i));
            out.extend_from_slice(self.row_second(i));
        }
        out
    }

    /// The first block alone (a state of `first_width` columns).
    pub(super) fn first_only(&self) -> Self {
        StateBlocks {
            second_width: 0,
            second: &[],
            sparse: [self.sparse[0], None],
            ..*self
        }
    }

    fn row_first(&self, i: usize) -> &'a [f32] {
        &self.first[i * self.first_width..(i + 1) * self.first_width]
    }

    fn row_second(&self, i: usize) -> &'a [f32] {
        &self.second[i * self.second_width..(i + 1) * self.second_width]
    }

    /// Row `i`'s two parts, each with the index of its first column.
    fn parts(&self, i: usize) -> [(Part<'a>, usize); 2] {
        let part = |b: usize, dense: &'a [f32]| match self.sparse[b] {
            Some(s) => {
                let (c, v) = s.row(i);
                Part::Sparse(c, v)
            }
            None => Part::Dense(dense),
        };
        [
            (part(0, self.row_first(i)), 0),
            (part(1, self.row_second(i)), self.first_width),
        ]
    }
}

/// `out[r, :] += x[r, :] · W` for a row-major `W` of shape `[width, m]`:
/// [`matmul_acc`](crate::linalg::matmul_acc) on the concatenated rows, bit for bit (each row
/// accumulates over the first block's columns, then the second's, skipping zeros).
///
/// With `start` (the sums over the first block alone,
/// [`HostPolicy::first_block_product`](super::HostPolicy::first_block_product)), each row
/// continues from them over the second block only: the same operations in the same order as
/// without it.
pub(super) fn matmul_acc_blocks(
    x: &StateBlocks<'_>,
    w: &[f32],
    m: usize,
    out: &mut [f32],
    start: Option<&[f32]>,
) {
    let skip = usize::from(start.is_some());
    fn fixed<const M: usize>(
        x: &StateBlocks<'_>,
        w: &[f32],
        out: &mut [f32],
        start: Option<&[f32]>,
        skip: usize,
    ) {
        for (i, or) in out.chunks_exact_mut(M).enumerate().take(x.num_nodes) {
            let mut acc = [0.0f32; M];
            if let Some(s) = start {
                acc.copy_from_slice(&s[i * M..(i + 1) * M]);
            }
            for (part, at) in x.parts(i).into_iter().skip(skip) {
                part.for_each_nonzero(|c, xv| {
                    let wr = &w[(at + c) * M..(at + c + 1) * M];
                    for j in 0..M {
                        acc[j] += xv * wr[j];
                    }
                });
            }
            for j in 0..M {
                or[j] += acc[j];
            }
        }
    }
    match m {
        16 => fixed::<16>(x, w, out, start, skip),
        8 => fixed::<8>(x, w, out, start, skip),
        _ => {
            let mut acc = vec![0.0f32; m];
            for (i, or) in out.chunks_exact_mut(m).enumerate().take(x.num_nodes) {
                match start {
                    Some(s) => acc.copy_from_slice(&s[i * m..(i + 1) * m]),
                    None => acc.fill(0.0),
                }
                for (part, at) in x.parts(i).into_iter().skip(skip) {
                    part.for_each_nonzero(|c, xv| {
                        let wr = &w[(at + c) * m..(at + c + 1) * m];
                        for (s, &wv) in acc.iter_mut().zip(wr) {
                            *s += xv * wv;
                        }
                    });
                }
                for (o, &s) in or.iter_mut().zip(&acc) {
                    *o += s;
                }
            }
        }
    }
}

/// `dW[width, m] += xᵀ · d` for `x` in blocks and `d: [n, m]`:
/// [`matmul_tn_acc`](crate::linalg::matmul_tn_acc) on the concatenated rows, bit for bit, but
/// reading `x` row by row (once, skipping zeros) instead of column by column: on wide, sparse
/// node features the column-wise pass re-reads the whole state once per feature.
pub(super) fn matmul_tn_acc_blocks(x: &StateBlocks<'_>, d: &[f32], m: usize, dw: &mut [f32]) {
    // As `matmul_tn_acc`: every entry summed from zero over the rows, then added once.
    fn sum<const M: usize>(x: &StateBlocks<'_>, d: &[f32], acc: &mut [f32]) {
        for (i, dr) in d.chunks_exact(M).enumerate().take(x.num_nodes) {
            let dr: &[f32; M] = dr.try_into().expect("M wide");
            for (part, at) in x.parts(i) {
                part.for_each_nonzero(|c, xv| {
                    let ar = &mut acc[(at + c) * M..(at + c + 1) * M];
                    for j in 0..M {
                        ar[j] += xv * dr[j];
                    }
                });
            }
        }
    }
    let mut acc = vec![0.0f32; dw.len()];
    if m == 16 {
        sum::<16>(x, d, &mut acc);
    } else if m > 0 {
        for (i, dr) in d.chunks_exact(m).enumerate().take(x.num_nodes) {
            for (part, at) in x.parts(i) {
                part.for_each_nonzero(|c, xv| {
                    for (o, &dv) in acc[(at + c) * m..(at + c + 1) * m].iter_mut().zip(dr) {
                        *o += xv * dv;
                    }
                });
            }
        }
    }
    for (g, a) in dw.iter_mut().zip(acc) {
        *g += a;
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{EDGES, F, U, W, state};
    use super::super::{Adjacency, HostPolicy, PolicyInput, reinforce_score_grad};
    use super::*;
    use crate::PolicyConfig;
    use crate::linalg::matmul_tn_acc;
    use crate::testing::test_device;

    /// A state split into a fixed block and a changing block gives the whole state's
    /// log-probabilities and gradients bit for bit (hidden 16 and another width), and the
    /// row-wise first-layer gradient equals the column-wise one bit for bit.
    #[test]
    fn state_blocks_change_nothing() {
        let dev = test_device().unwrap();
        for hidden in [16, 5] {
            let dim = 7;
            let policy = PolicyConfig::new(dim)
                .with_hidden(hidden)
                .with_mlp_hidden(hidden + 1)
                .with_init_seed(11)
                .init(&dev);
            let host = HostPolicy::from_policy(&policy);
            // Sparse like bag-of-words features: a third of the entries are zero.
            let x: Vec<f32> = state(dim)
                .iter()
                .enumerate()
                .map(|(i, &v)| if i % 3 == 0 { 0.0 } else { v })
                .collect();
            let g = Adjacency::with_self_loops(6, &EDGES).unwrap();
            let whole = host.forward(&x, &g, &U, &W, &F);
            for split in [0, 2, 5, dim] {
                let (a, b): (Vec<f32>, Vec<f32>) = {
                    let mut a = Vec::new();
                    let mut b = Vec::new();
                    for r in x.chunks_exact(dim) {
                        a.extend_from_slice(&r[..split]);
                        b.extend_from_slice(&r[split..]);
                    }
                    (a, b)
                };
                let (sa, sb) = (SparseRows::new(&a, split), SparseRows::new(&b, dim - split));
                let plain = StateBlocks::new(&a, split, &b, dim - split);
                assert_eq!(plain.to_rows(), x);
                let sparse = [plain.with_sparse(0, &sa), plain.with_sparse(1, &sb)];
                let whole_input = PolicyInput::new(StateBlocks::whole(&x, dim), &g, &U, &W, &F);
                for xb in [plain, sparse[0], sparse[1]] {
                    let input = PolicyInput::new(xb, &g, &U, &W, &F);
                    let t = host.forward_cached(&input);
                    let at = format!("hidden {hidden}, split {split}");
                    assert_eq!(t.log_probs(), whole.log_probs(), "{at}");
                    let first = host.first_block_product(&xb);
                    let cached = input.with_first(Some(&first));
                    let tc = host.forward_cached(&cached);
                    assert_eq!(tc.log_probs(), whole.log_probs(), "cached: {at}");
                    assert_eq!(tc.embeddings(), whole.embeddings(), "cached: {at}");
                    for f in [Some(&first), None] {
                        let lp = host.log_probs_cached(&input.with_first(f));
                        assert_eq!(lp, whole.log_probs(), "inference: {at}");
                    }
                    let ds = reinforce_score_grad(t.log_probs(), 2, 0.3, 0.1, 1.0);
                    let mut g1 = vec![0.5; host.num_params()];
                    let mut g2 = g1.clone();
                    host.backward_blocks(&whole, &whole_input, &ds, &mut g1);
                    host.backward_blocks(&t, &input, &ds, &mut g2);
                    assert_eq!(g1, g2, "{at}");
                    let mut g3 = vec![0.5; host.num_params()];
                    host.backward_recomputed(&cached, &ds, &mut g3);
                    assert_eq!(g1, g3, "recomputed: {at}");
                }
            }
            // The first layer's weight gradient, row-wise vs column-wise.
            let d: Vec<f32> = (0..6 * hidden).map(|i| (i as f32 * 0.37).sin()).collect();
            let (mut col, mut row) = (vec![0.25; dim * hidden], vec![0.25; dim * hidden]);
            matmul_tn_acc(&x, &d, dim, hidden, &mut col);
            matmul_tn_acc_blocks(&StateBlocks::whole(&x, dim), &d, hidden, &mut row);
            assert_eq!(col, row, "hidden {hidden}");
        }
    }
}
