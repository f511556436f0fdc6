//! The linear propagations (`SGConv`, `APPNP`, `TAGConv`, `ChebConv`) as hops: one
//! [`Conv::Hop`] per power of the propagation matrix, so that a `K`-hop module is `K` one-hop
//! layers and every path of the native four (the receptive field, the incremental rows of a
//! bound graph, the edge-weighted Burn form) serves it unchanged.
//!
//! Each module carries a *state* of equal-width blocks from hop to hop. A hop propagates block
//! 0 over the neighbours, adds some of the node's own blocks, and carries others along:
//!
//! ```text
//! new block 0 = scale · Σ_j Â_ij · block0_j  +  Σ_(b, c) c · block_b(i)  (+ bias, last hop)
//! new blocks 1.. = the node's own blocks `carry`
//! ```
//!
//! | module | state after the input's projection | one hop |
//! |---|---|---|
//! | `SGConv(K)` | `[x Wᵀ]` (lin before the powers, by linearity) | `Â h` (+ b at the last) |
//! | `APPNP(K, α)` | `[x, x]` | `[(1 − α) Â h + α x, x]` |
//! | `TAGConv(K)` | `[y_K, y_{K−1}, …, y_0]`, `y_k = x W_kᵀ` | Horner: `[Â acc + y_{k}, y_{k−1}, …]` |
//! | `ChebConv(K)` | `[y_{K−1}, 0, y_{K−2}, …, y_0]` | Clenshaw: `[2 L̂ b₁ − b₂ + y_k, b₁, …]` |
//!
//! The results equal PyG's up to float summation order (PyG sums the powers; Horner and
//! Clenshaw nest them).

use super::layers::{Conv, Dense, RowInputs, gcn_dinv};
use crate::linalg::axpy;

/// How a propagation module's input becomes one block of its state (its first hop).
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// The input itself.
    Input,
    /// The input through a linear map without bias.
    Linear(Dense),
    /// Zeros.
    Zero,
}

/// One hop of a linear propagation module (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Hop {
    /// The module's family (`sg`, `appnp`, `tag`, `cheb`).
    pub family: &'static str,
    /// Width of one block of the state.
    pub width: usize,
    /// The blocks made of the module's input: the first hop's; `None` for a later hop (its
    /// input is the state).
    pub init: Option<Vec<Block>>,
    /// Number of blocks the hop reads.
    pub blocks: usize,
    /// Normalise `Â` symmetrically by the degrees (with the self loop when there is one).
    pub normalize: bool,
    /// The self loop's weight in `Â` when normalising.
    pub self_loop: Option<f32>,
    /// The coefficient of the propagated block 0.
    pub scale: f32,
    /// The node's own blocks added to the new block 0: `(block, coefficient)`.
    pub own: Vec<(usize, f32)>,
    /// The node's own blocks carried as blocks 1.. of the output.
    pub carry: Vec<usize>,
    /// The module's bias, added to the new block 0 at its last hop.
    pub bias: Option<Vec<f32>>,
}

impl Hop {
    /// A later hop of a module: same propagation, its input is the state.
    fn then(&self, blocks: usize, own: Vec<(usize, f32)>, carry: Vec<usize>) -> Hop {
        Hop {
            init: None,
            blocks,
            own,
            carry,
            bias: None,
            ..self.clone()
        }
    }

    /// Input width.
    pub fn input_dim(&self) -> usize {
        match &self.init {
            None => self.blocks * self.width,
            Some(blocks) => blocks
                .iter()
                .find_map(|b| match b {
                    Block::Linear(d) => Some(d.din),
                    _ => None,
                })
                .unwrap_or(self.width),
        }
    }

    /// Output width: block 0 and the carried blocks.
    pub fn output_dim(&self) -> usize {
        (1 + self.carry.len()) * self.width
    }

    /// The state the hop reads, from its input: the input itself, or (the first hop) the blocks
    /// made of it, side by side.
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`; output: `[n, blocks · width]`
    pub fn project(&self, x: &[f32], n: usize) -> Vec<f32> {
        let Some(blocks) = &self.init else {
            return x.to_vec();
        };
        let w = self.width;
        let made: Vec<Option<Vec<f32>>> = blocks
            .iter()
            .map(|b| match b {
                Block::Linear(d) => Some(d.apply_no_bias(x, n)),
                Block::Input | Block::Zero => None,
            })
            .collect();
        let mut out = vec![0.0; n * blocks.len() * w];
        for (i, row) in out.chunks_exact_mut((blocks.len() * w).max(1)).enumerate() {
            for (k, b) in blocks.iter().enumerate() {
                let dst = &mut row[k * w..(k + 1) * w];
                match (b, &made[k]) {
                    (Block::Input, _) => dst.copy_from_slice(&x[i * w..(i + 1) * w]),
                    (Block::Linear(_), Some(y)) => dst.copy_from_slice(&y[i * w..(i + 1) * w]),
                    _ => {}
                }
            }
        }
        out
    }

    /// One node's output row (see the module docs).
    ///
    /// # Shapes
    /// - out: `[output_dim]`, zeroed by the caller
    pub(crate) fn row(&self, i: usize, inputs: &impl RowInputs, out: &mut [f32]) {
        let w = self.width;
        let (head, rest) = out.split_at_mut(w);
        let loop_w = if self.normalize { self.self_loop } else { None };
        let di = gcn_dinv(inputs, i, self.normalize, loop_w);
        for &j in inputs.neighbours(i) {
            let c = di * gcn_dinv(inputs, j as usize, self.normalize, loop_w);
            axpy(head, self.scale * c, &inputs.a(j as usize)[..w]);
        }
        let own = inputs.a(i);
        if let Some(lw) = loop_w {
            axpy(head, self.scale * lw * di * di, &own[..w]);
        }
        for &(b, c) in &self.own {
            axpy(head, c, &own[b * w..(b + 1) * w]);
        }
        if let Some(b) = &self.bias {
            axpy(head, 1.0, b);
        }
        for (k, &b) in self.carry.iter().enumerate() {
            rest[k * w..(k + 1) * w].copy_from_slice(&own[b * w..(b + 1) * w]);
        }
    }
}

/// `SGConv(K)`: `K` hops of `Â = D^{-1/2}(A + I)D^{-1/2}` (without the loop when
/// `add_self_loops` is off), `lin` applied first; `K = 0` is `lin` alone.
pub(super) fn sg(lin: Dense, k: usize, add_self_loops: bool) -> Vec<Conv> {
    if k == 0 {
        return vec![Conv::Linear(lin)];
    }
    let bias = lin.bias.clone();
    let first = Hop {
        family: "sg",
        width: lin.dout,
        init: Some(vec![Block::Linear(Dense { bias: None, ..lin })]),
        blocks: 1,
        normalize: true,
        self_loop: add_self_loops.then_some(1.0),
        scale: 1.0,
        own: vec![],
        carry: vec![],
        bias: None,
    };
    let later: Vec<Hop> = (1..k).map(|_| first.then(1, vec![], vec![])).collect();
    finish(later, first, bias)
}

/// `APPNP(K, α)`: `K` hops of `h ← (1 − α) Â h + α x`; `K = 0` is the identity.
pub(super) fn appnp(
    width: usize,
    k: usize,
    alpha: f32,
    self_loops: bool,
    normalize: bool,
) -> Vec<Conv> {
    let mut first = Hop {
        family: "appnp",
        width,
        init: Some(vec![Block::Input, Block::Input]),
        blocks: 2,
        normalize,
        self_loop: self_loops.then_some(1.0),
        scale: 1.0 - alpha,
        own: vec![(1, alpha)],
        carry: vec![1],
        bias: None,
    };
    if k == 0 {
        return vec![];
    }
    let mut later: Vec<Hop> = (1..k)
        .map(|_| first.then(2, vec![(1, alpha)], vec![1]))
        .collect();
    // The last hop drops the input it carried.
    match later.last_mut() {
        Some(last) => last.carry.clear(),
        None => first.carry.clear(),
    }
    finish(later, first, None)
}

/// `TAGConv`: `Σ_{k=0}^{K} lins[k](Âᵏ x) + bias` by Horner's rule, `Â = D^{-1/2} A D^{-1/2}`
/// (or `A`); `K = lins.len() − 1`, and `K = 0` is `lins[0]` with the bias.
pub(super) fn tag(mut lins: Vec<Dense>, bias: Option<Vec<f32>>, normalize: bool) -> Vec<Conv> {
    let k = lins.len() - 1;
    if k == 0 {
        let lin = lins.remove(0);
        return vec![Conv::Linear(Dense { bias, ..lin })];
    }
    let width = lins[0].dout;
    let first = Hop {
        family: "tag",
        width,
        init: Some(lins.into_iter().rev().map(Block::Linear).collect()),
        blocks: k + 1,
        normalize,
        self_loop: None,
        scale: 1.0,
        own: vec![(1, 1.0)],
        carry: (2..=k).collect(),
        bias: None,
    };
    let later: Vec<Hop> = (1..k)
        .map(|h| {
            let blocks = k + 1 - h;
            first.then(blocks, vec![(1, 1.0)], (2..blocks).collect())
        })
        .collect();
    finish(later, first, bias)
}

/// `ChebConv` (`sym`): `Σ_{k<K} lins[k](T_k(L̂) x) + bias` by Clenshaw's rule, with
/// `L̂ b = −s Ŝ b + (s − 1) b`, `s = 2/λ_max`, `Ŝ = D^{-1/2} A D^{-1/2}`; `K = 1` is `lins[0]`
/// with the bias.
pub(super) fn cheb(mut lins: Vec<Dense>, bias: Option<Vec<f32>>, lambda_max: f32) -> Vec<Conv> {
    let k = lins.len();
    if k == 1 {
        let lin = lins.remove(0);
        return vec![Conv::Linear(Dense { bias, ..lin })];
    }
    let width = lins[0].dout;
    let s = 2.0 / lambda_max;
    let d = s - 1.0;
    // State [b_{j+1}, b_{j+2}, y_j, …, y_0]; the first: b_K = y_{K−1}, b_{K+1} = 0.
    let mut init: Vec<Block> = Vec::with_capacity(k + 1);
    let mut ys = lins.into_iter().rev();
    init.extend(ys.next().map(Block::Linear));
    init.push(Block::Zero);
    init.extend(ys.map(Block::Linear));
    let own = |blocks: usize| -> Vec<(usize, f32)> {
        let mut v = vec![(2, 1.0), (1, -1.0)];
        if d != 0.0 {
            v.insert(0, (0, if blocks > 3 { 2.0 * d } else { d }));
        }
        v
    };
    // A middle hop (more than y_0 left) doubles the propagation: `2 L̂ b₁`.
    let hop = |blocks: usize| -> (f32, Vec<(usize, f32)>, Vec<usize>) {
        if blocks > 3 {
            let mut carry = vec![0];
            carry.extend(3..blocks);
            (-2.0 * s, own(blocks), carry)
        } else {
            (-s, own(blocks), vec![])
        }
    };
    let (scale, own0, carry0) = hop(k + 1);
    let first = Hop {
        family: "cheb",
        width,
        init: Some(init),
        blocks: k + 1,
        normalize: true,
        self_loop: None,
        scale,
        own: own0,
        carry: carry0,
        bias: None,
    };
    let later: Vec<Hop> = (1..k - 1)
        .map(|h| {
            let blocks = k + 1 - h;
            let (scale, own, carry) = hop(blocks);
            Hop {
                scale,
                ..first.then(blocks, own, carry)
            }
        })
        .collect();
    finish(later, first, bias)
}

/// The module's hops in order, the bias on the last.
fn finish(later: impl IntoIterator<Item = Hop>, first: Hop, bias: Option<Vec<f32>>) -> Vec<Conv> {
    let mut hops: Vec<Hop> = std::iter::once(first).chain(later).collect();
    if let Some(last) = hops.last_mut() {
        last.bias = bias;
    }
    hops.into_iter().map(Conv::Hop).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyg::layers::Adjacency;

    /// `y = x · w` for a 1 → 1 map.
    fn scalar(w: f32) -> Dense {
        Dense {
            din: 1,
            dout: 1,
            wt: vec![w],
            bias: None,
        }
    }

    fn run(convs: &[Conv], x: &[f32], adj: &Adjacency) -> Vec<f32> {
        convs.iter().fold(x.to_vec(), |h, c| c.forward(&h, adj))
    }

    /// The path 0 – 1 – 2, one feature.
    ///
    /// ```text
    ///   0 ─── 1 ─── 2        x = [1, 2, 4]
    /// ```
    fn path() -> (Adjacency, Vec<f32>) {
        (Adjacency::new(3, &[(0, 1), (1, 2)]), vec![1.0, 2.0, 4.0])
    }

    #[test]
    fn tag_by_horner_equals_the_sum_of_powers() {
        // Â = D^{-1/2} A D^{-1/2} on the path: Â_01 = Â_12 = 1/√2.
        let (adj, x) = path();
        let r = std::f32::consts::FRAC_1_SQRT_2;
        let a = |v: &[f32]| vec![r * v[1], r * (v[0] + v[2]), r * v[1]];
        let (ax, aax) = (a(&x), a(&a(&x)));
        let convs = tag(
            vec![scalar(1.0), scalar(2.0), scalar(3.0)],
            Some(vec![0.5]),
            true,
        );
        assert_eq!(convs.len(), 2, "K = 2: two hops");
        let out = run(&convs, &x, &adj);
        for i in 0..3 {
            let want = x[i] + 2.0 * ax[i] + 3.0 * aax[i] + 0.5;
            assert!(
                (out[i] - want).abs() < 1e-5,
                "node {i}: {} vs {want}",
                out[i]
            );
        }
    }

    #[test]
    fn cheb_by_clenshaw_equals_the_chebyshev_sum() {
        // λ = 2: L̂ = −Â; T0 = x, T1 = L̂x, T2 = 2L̂T1 − T0.
        let (adj, x) = path();
        let r = std::f32::consts::FRAC_1_SQRT_2;
        let l = |v: &[f32]| vec![-r * v[1], -r * (v[0] + v[2]), -r * v[1]];
        let t1 = l(&x);
        let t2: Vec<f32> = l(&t1).iter().zip(&x).map(|(a, b)| 2.0 * a - b).collect();
        let t3: Vec<f32> = l(&t2).iter().zip(&t1).map(|(a, b)| 2.0 * a - b).collect();
        let convs = cheb(
            vec![scalar(1.0), scalar(-2.0), scalar(3.0), scalar(0.5)],
            Some(vec![0.25]),
            2.0,
        );
        assert_eq!(convs.len(), 3, "K = 4: three hops");
        let out = run(&convs, &x, &adj);
        for i in 0..3 {
            let want = x[i] - 2.0 * t1[i] + 3.0 * t2[i] + 0.5 * t3[i] + 0.25;
            assert!(
                (out[i] - want).abs() < 1e-5,
                "node {i}: {} vs {want}",
                out[i]
            );
        }
        // Another λ: L̂ = (s − 1) I − s Â with s = 2/λ.
        let s = 2.0 / 1.5;
        let l = |v: &[f32]| -> Vec<f32> {
            let av = [r * v[1], r * (v[0] + v[2]), r * v[1]];
            (0..3).map(|i| (s - 1.0) * v[i] - s * av[i]).collect()
        };
        let t1 = l(&x);
        let t2: Vec<f32> = l(&t1).iter().zip(&x).map(|(a, b)| 2.0 * a - b).collect();
        let out = run(
            &cheb(vec![scalar(1.0), scalar(2.0), scalar(-1.0)], None, 1.5),
            &x,
            &adj,
        );
        for i in 0..3 {
            let want = x[i] + 2.0 * t1[i] - t2[i];
            assert!(
                (out[i] - want).abs() < 1e-5,
                "node {i}: {} vs {want}",
                out[i]
            );
        }
    }

    #[test]
    fn appnp_and_sg_propagate_with_self_loops() {
        // Â = D̃^{-1/2}(A + I)D̃^{-1/2}, degrees with the loop [2, 3, 2].
        let (adj, x) = path();
        let d = [
            2f32.sqrt().recip(),
            3f32.sqrt().recip(),
            2f32.sqrt().recip(),
        ];
        let a = |v: &[f32]| -> Vec<f32> {
            let nb: [&[usize]; 3] = [&[0, 1], &[0, 1, 2], &[1, 2]];
            (0..3)
                .map(|i| nb[i].iter().map(|&j| d[i] * d[j] * v[j]).sum())
                .collect()
        };
        let alpha = 0.1;
        let mut h = x.clone();
        for _ in 0..3 {
            h = a(&h)
                .iter()
                .zip(&x)
                .map(|(p, x0)| (1.0 - alpha) * p + alpha * x0)
                .collect();
        }
        let out = run(&appnp(1, 3, alpha, true, true), &x, &adj);
        for i in 0..3 {
            assert!(
                (out[i] - h[i]).abs() < 1e-5,
                "APPNP node {i}: {} vs {}",
                out[i],
                h[i]
            );
        }
        let sg2 = sg(
            Dense {
                bias: Some(vec![1.0]),
                ..scalar(2.0)
            },
            2,
            true,
        );
        let out = run(&sg2, &x, &adj);
        let want = a(&a(&x));
        for i in 0..3 {
            assert!((out[i] - (2.0 * want[i] + 1.0)).abs() < 1e-5, "SG node {i}");
        }
    }
}
