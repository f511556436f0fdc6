//! [`HostConv`]: one graph convolution of the host GCN, read from Burn's [`GraphConv`].

use burn::tensor::Tensor;

use super::dense::{pad_matrix, padded};
use crate::error::{ModelError, Result};
use crate::gcn::GraphConv;
use crate::linalg::{Adjacency, matmul_acc};

/// One graph convolution `H' = Â (H W) + b` on the host.
#[derive(Debug, Clone)]
pub(crate) struct HostConv {
    /// True input width.
    pub(crate) d_in: usize,
    /// True output width.
    pub(crate) d_out: usize,
    /// Padded input width.
    pub(crate) k: usize,
    /// Padded output width.
    pub(crate) m: usize,
    /// Weight, row-major `[k, m]`, zero outside `[d_in, d_out]`.
    pub(crate) weight: Vec<f32>,
    /// Bias `[m]`, zero after `d_out`.
    pub(crate) bias: Vec<f32>,
}

/// Reads a parameter back to the host as a flat row-major `f32` vector.
pub(super) fn host_vec<const D: usize>(t: Tensor<D>, name: &str) -> Result<Vec<f32>> {
    t.try_into_vec_as::<f32>()
        .map_err(|e| ModelError::InvalidInput(format!("cannot read parameter {name}: {e}")))
}

/// `Ok` if `got` is the `expected` size of `what`, else [`ModelError::DimensionMismatch`].
pub(super) fn expect_dim(what: String, expected: usize, got: usize) -> Result<()> {
    if expected != got {
        return Err(ModelError::DimensionMismatch {
            what,
            expected,
            got,
        });
    }
    Ok(())
}

impl HostConv {
    /// Copies Burn's convolution `conv` (named `name` in errors), checking its input width
    /// against the previous layer's output width `d_in` when there is one.
    pub(super) fn from_burn(conv: &GraphConv, name: &str, d_in: Option<usize>) -> Result<Self> {
        let [rows, cols] = conv.weight.dims();
        if let Some(d) = d_in {
            expect_dim(
                format!("{name}.weight rows (previous layer width)"),
                d,
                rows,
            )?;
        }
        expect_dim(format!("{name}.bias length"), cols, conv.bias.dims()[0])?;
        let (k, m) = (padded(rows), padded(cols));
        let weight = host_vec(conv.weight.val(), &format!("{name}.weight"))?;
        let bias = host_vec(conv.bias.val(), &format!("{name}.bias"))?;
        Ok(Self {
            d_in: rows,
            d_out: cols,
            k,
            m,
            weight: pad_matrix(&weight, rows, cols, k, m),
            bias: pad_matrix(&bias, 1, cols, 1, m),
        })
    }

    /// `Â (h W) + b`, optionally ReLU'd; `tmp` is scratch space. `W` is applied on the narrower
    /// side: before the aggregation if `d_out ≤ d_in` (as Burn does), after it otherwise
    /// (`(Â h) W`, equal up to rounding).
    ///
    /// # Shapes
    /// - h: `[n, k]` (padded)
    /// - output: `[n, m]` (padded, zero columns after `d_out`)
    pub(super) fn forward(
        &self,
        h: &[f32],
        adj: &Adjacency,
        tmp: &mut Vec<f32>,
        relu: bool,
    ) -> Vec<f32> {
        let n = adj.num_nodes();
        let mut out = vec![0.0f32; n * self.m];
        tmp.clear();
        if self.d_out <= self.d_in {
            tmp.resize(n * self.m, 0.0);
            matmul_acc(h, &self.weight, self.k, self.m, tmp);
            adj.aggregate(tmp, self.m, &mut out);
        } else {
            tmp.resize(n * self.k, 0.0);
            adj.aggregate(h, self.k, tmp);
            matmul_acc(tmp, &self.weight, self.k, self.m, &mut out);
        }
        for row in out.chunks_exact_mut(self.m.max(1)) {
            for (o, &b) in row.iter_mut().zip(&self.bias) {
                *o += b;
                if relu {
                    *o = crate::ops::relu(*o);
                }
            }
        }
        out
    }

    /// Whether the layer multiplies before aggregating (`Â (h W)`: it narrows, `d_out ≤ d_in`)
    /// rather than after (`(Â h) W`).
    pub(crate) fn multiplies_first(&self) -> bool {
        self.d_out <= self.d_in
    }
}
