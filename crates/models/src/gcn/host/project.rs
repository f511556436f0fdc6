//! The first layer's feature transform `X W₁` ([`Projected`]), computed once per feature matrix
//! and shared by every neighbourhood of a graph.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use induce_graph::Features;

use super::HostGcn;
use super::dense::pad_matrix;
use crate::black_box::{BlackBox, check_features};
use crate::error::Result;
use crate::linalg::matmul_acc;

/// The most recent `X W₁` of a [`HostGcn`], keyed by [`Features::id`]: every neighbourhood of
/// the same graph gathers its rows from it instead of multiplying its own features again (on
/// Amazon-Photo, 5,567 × 745 × 128 multiply-adds per episode). A clone starts empty.
#[derive(Debug, Default)]
pub(super) struct ProjectionCache(Mutex<Option<(u64, Arc<Projected>)>>);

impl Clone for ProjectionCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// The first layer's feature transform `X W₁` of every node of a graph (see
/// [`HostGcn::project`]): the part of the GCN an edit cannot change, computed once per graph.
#[derive(Debug, Clone)]
pub struct Projected {
    pub(super) rows: Vec<f32>,
    pub(super) width: usize,
    pub(super) num_nodes: usize,
}

impl Projected {
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// Node `v`'s row.
    pub(super) fn row(&self, v: u32) -> &[f32] {
        &self.rows[v as usize * self.width..(v as usize + 1) * self.width]
    }
}

impl HostGcn {
    /// `x W₁` of one feature row (its row of [`HostGcn::project`], bit for bit).
    ///
    /// # Shapes
    /// - x: `[input_dim]`; output: `[hidden]`
    pub(super) fn project_row(&self, x: &[f32]) -> Vec<f32> {
        let c1 = &self.convs[0];
        let mut padded = x.to_vec();
        padded.resize(c1.k, 0.0);
        let mut out = vec![0.0f32; c1.m];
        matmul_acc(&padded, &c1.weight, c1.k, c1.m, &mut out);
        out
    }
}

impl HostGcn {
    /// `X W₁` for every node: node features never change during an explanation, so on a large
    /// graph this is computed once and shared by all targets and edits
    /// ([`HostGcn::log_probs_at`]).
    ///
    /// # Shapes
    /// - x: `[n, input_dim]`
    pub fn project(&self, x: &Features) -> Result<Projected> {
        check_features(x, self.input_dim())?;
        let n = x.num_nodes();
        let c1 = &self.convs[0];
        let x0: Cow<'_, [f32]> = if c1.k == c1.d_in {
            Cow::Borrowed(x.as_slice())
        } else {
            Cow::Owned(pad_matrix(x.as_slice(), n, c1.d_in, n, c1.k))
        };
        let mut rows = vec![0.0f32; n * c1.m];
        matmul_acc(&x0, &c1.weight, c1.k, c1.m, &mut rows);
        Ok(Projected {
            rows,
            width: c1.m,
            num_nodes: n,
        })
    }

    /// [`HostGcn::project`] of `source`, from the cache when `source` (by [`Features::id`]) was
    /// the last matrix projected; computed (and cached) otherwise. Callers on other threads
    /// wait for one computation instead of repeating it.
    pub(super) fn cached_projection(&self, source: &Features) -> Result<Arc<Projected>> {
        let mut slot = self
            .projections
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((id, p)) = slot.as_ref()
            && *id == source.id()
        {
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(self.project(source)?);
        *slot = Some((source.id(), Arc::clone(&p)));
        Ok(p)
    }

    /// The rows `rows` of `source`'s projection `X W₁` (cached per matrix), bit for bit what
    /// [`HostGcn::project`] computes on the gathered rows: each row of the product depends on
    /// its feature row only.
    ///
    /// # Shapes
    /// - source: `[N, input_dim]`; rows: `[n]`; output: `[n, hidden]`
    pub fn project_rows(&self, source: &Features, rows: &[u32]) -> Result<Projected> {
        check_features(source, self.input_dim())?;
        crate::black_box::check_rows(source, rows)?;
        let all = self.cached_projection(source)?;
        let m = all.width;
        let mut out = Vec::with_capacity(rows.len() * m);
        for &r in rows {
            out.extend_from_slice(&all.rows[r as usize * m..(r as usize + 1) * m]);
        }
        Ok(Projected {
            rows: out,
            width: m,
            num_nodes: rows.len(),
        })
    }
}
