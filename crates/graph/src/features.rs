//! Dense node-feature matrices.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{GraphError, Result};

/// Source of [`Features::id`]: every constructed matrix takes the next value.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// A dense `n × d` matrix of `f32` node features, row-major.
///
/// ```
/// use induce_graph::Features;
/// let f = Features::new(2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
/// assert_eq!(f.row(1), &[4.0, 5.0, 6.0]);
/// assert!(Features::new(2, 3, vec![0.0; 5]).is_err());
/// ```
///
/// A matrix never changes after construction, and each constructed one carries an identity
/// ([`Features::id`]) that its clones share: a model can cache work that depends only on the
/// feature values (e.g. the product of the features with a first-layer weight) under it.
#[derive(Debug, Clone)]
pub struct Features {
    n: usize,
    d: usize,
    data: Vec<f32>,
    id: u64,
}

/// Equal shapes and values (the identities may differ).
impl PartialEq for Features {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n && self.d == other.d && self.data == other.data
    }
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
        Ok(Self {
            n,
            d,
            data,
            id: next_id(),
        })
    }

    /// `n × d` matrix filled with `value` (the synthetic benchmarks use constant ones).
    ///
    /// # Panics
    /// If `value` is NaN or infinite: features are finite ([`Features::new`] refuses such data
    /// with a typed error; use it for values that come from outside the program).
    pub fn constant(n: usize, d: usize, value: f32) -> Self {
        assert!(
            value.is_finite(),
            "Features::constant({n}, {d}, {value}): features must be finite"
        );
        Self {
            n,
            d,
            data: vec![value; n * d],
            id: next_id(),
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
            id: next_id(),
        }
    }

    /// A copy with the entries `(node, feature, value)` set (later entries win): a new matrix,
    /// with its own identity. Errors name the first entry outside the matrix or not finite.
    ///
    /// ```
    /// use induce_graph::Features;
    /// let f = Features::constant(2, 3, 0.0);
    /// let g = f.with_entries(&[(1, 2, 1.0)]).unwrap();
    /// assert_eq!(g.row(1), &[0.0, 0.0, 1.0]);
    /// assert_ne!(g.id(), f.id());
    /// assert!(f.with_entries(&[(2, 0, 1.0)]).is_err());
    /// assert!(f.with_entries(&[(0, 3, 1.0)]).is_err());
    /// assert!(f.with_entries(&[(0, 0, f32::NAN)]).is_err());
    /// ```
    pub fn with_entries(&self, entries: &[(u32, u32, f32)]) -> Result<Features> {
        let mut data = self.data.clone();
        for &(node, feature, value) in entries {
            if node as usize >= self.n {
                return Err(GraphError::NodeOutOfRange {
                    node: u64::from(node),
                    num_nodes: self.n,
                });
            }
            if feature as usize >= self.d {
                return Err(GraphError::FeatureOutOfRange {
                    node: node as usize,
                    feature: feature as usize,
                    dim: self.d,
                });
            }
            if !value.is_finite() {
                return Err(GraphError::NonFiniteFeature {
                    node: node as usize,
                    dim: feature as usize,
                    value,
                });
            }
            data[node as usize * self.d + feature as usize] = value;
        }
        Ok(Features {
            n: self.n,
            d: self.d,
            data,
            id: next_id(),
        })
    }

    /// This matrix's identity: unique to it and its clones for the life of the process (a
    /// matrix never changes after construction, so equal ids mean equal values). A key for
    /// caches of work that depends only on the features.
    ///
    /// ```
    /// use induce_graph::Features;
    /// let a = Features::constant(2, 3, 1.0);
    /// let b = Features::constant(2, 3, 1.0);
    /// assert_eq!(a.clone().id(), a.id());
    /// assert_ne!(a.id(), b.id());
    /// assert_eq!(a, b); // same values
    /// ```
    pub fn id(&self) -> u64 {
        self.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_are_finite() {
        assert!(matches!(
            Features::new(1, 2, vec![1.0, f32::NAN]),
            Err(GraphError::NonFiniteFeature {
                node: 0,
                dim: 1,
                ..
            })
        ));
        assert_eq!(Features::constant(2, 1, 0.5).as_slice(), &[0.5, 0.5]);
    }

    #[test]
    #[should_panic(expected = "features must be finite")]
    fn a_non_finite_constant_panics_as_documented() {
        let _ = Features::constant(2, 1, f32::INFINITY);
    }
}
