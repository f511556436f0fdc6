//! [`LogProbs`]: what a black box answers, per node and class.

use crate::error::{ModelError, Result};

/// Per-node class log-probabilities, `[n, C]` row-major, as returned by a
/// [`BlackBox`](crate::BlackBox).
#[derive(Debug, Clone, PartialEq)]
pub struct LogProbs {
    n: usize,
    c: usize,
    data: Vec<f32>,
}

impl LogProbs {
    /// Wraps a row-major `[n, c]` buffer; errors if the length is not `n × c`.
    pub fn new(n: usize, c: usize, data: Vec<f32>) -> Result<Self> {
        if data.len() != n * c {
            return Err(ModelError::DimensionMismatch {
                what: format!("log-probability buffer for {n} nodes × {c} classes"),
                expected: n * c,
                got: data.len(),
            });
        }
        Ok(Self { n, c, data })
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.n
    }

    /// Number of classes.
    pub fn num_classes(&self) -> usize {
        self.c
    }

    /// Log-probabilities of node `i`.
    ///
    /// # Panics
    /// If `i` is not below [`LogProbs::num_nodes`] (like slice indexing).
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.c..(i + 1) * self.c]
    }

    /// The predicted class of node `i`: argmax, first index on ties (NaN never wins).
    ///
    /// # Panics
    /// If `i` is not below [`LogProbs::num_nodes`].
    pub fn argmax(&self, i: usize) -> usize {
        let mut best = 0;
        let r = self.row(i);
        for (k, &v) in r.iter().enumerate() {
            if v > r[best] || r[best].is_nan() {
                best = k;
            }
        }
        best
    }

    /// Predicted classes of all nodes.
    pub fn predictions(&self) -> Vec<usize> {
        (0..self.n).map(|i| self.argmax(i)).collect()
    }

    /// Shannon entropy (nats) of node `i`'s predicted distribution, `−Σ p log p` with
    /// `0 · log 0 = 0`.
    pub fn entropy(&self, i: usize) -> f32 {
        -self
            .row(i)
            .iter()
            .map(|&lp| {
                if lp == f32::NEG_INFINITY {
                    0.0
                } else {
                    lp.exp() * lp
                }
            })
            .sum::<f32>()
    }

    /// The flat row-major buffer.
    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    /// The flat row-major buffer, moved out.
    pub fn into_vec(self) -> Vec<f32> {
        self.data
    }
}
