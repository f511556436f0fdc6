//! Dense node-feature matrices.

use crate::error::{GraphError, Result};

/// A dense `n × d` matrix of `f32` node features, row-major.
///
/// ```
/// use induce_graph::Features;
/// let f = Features::new(2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
/// assert_eq!(f.row(1), &[4.0, 5.0, 6.0]);
/// assert!(Features::new(2, 3, vec![0.0; 5]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    n: usize,
    d: usize,
    data: Vec<f32>,
}

impl Features {
    /// Wraps a row-major buffer of `n * d` values. Rejects a wrong length and NaN or infinite
    /// values (naming the first offending entry).
    pub fn new(n: usize, d: usize, data: Vec<f32>) -> Result<Self> {
        if data.len() != n * d {
            return Err(GraphError::FeatureShape {
                nodes: n,
                dim: d,
                got: data.len(),
            });
        }
        if let Some(i) = data.iter().position(|x| !x.is_finite()) {
            return Err(GraphError::NonFiniteFeature {
                node: i / d,
                dim: i % d,
                value: data[i],
            });
        }
        Ok(Self { n, d, data })
    }

    /// `n × d` matrix filled with `value` (the synthetic benchmarks use constant ones).
    pub fn constant(n: usize, d: usize, value: f32) -> Self {
        Self {
            n,
            d,
            data: vec![value; n * d],
        }
    }

    /// Number of rows (nodes).
    pub fn num_nodes(&self) -> usize {
        self.n
    }

    /// Number of columns (feature dimension).
    pub fn dim(&self) -> usize {
        self.d
    }

    /// Feature row of node `i`. Panics if `i` is out of range (callers validate node ids).
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.d..(i + 1) * self.d]
    }

    /// The whole row-major buffer.
    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    /// Rows `ids` gathered into a new matrix, in the given order.
    pub fn gather(&self, ids: &[u32]) -> Features {
        let mut data = Vec::with_capacity(ids.len() * self.d);
        for &i in ids {
            data.extend_from_slice(self.row(i as usize));
        }
        Features {
            n: ids.len(),
            d: self.d,
            data,
        }
    }
}
