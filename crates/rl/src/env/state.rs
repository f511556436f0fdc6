//! The per-node state of an [`Episode`]: its two column blocks, [`StateSnapshot`]s of visited
//! states, the sparse index of wide node features, and the authors' entropy feature.

use std::ops::Range;
use std::sync::Arc;

use burn::tensor::{Device, Tensor};
use induce_graph::Features;
use induce_models::GraphTensors;
use induce_models::kernels::tensors::matrix;
use induce_models::policy::host::{SparseRows, StateBlocks};

use super::{Episode, StateLayout};
use crate::error::Result;

/// A visited state of an [`Episode`] ([`Episode::snapshot`]): its changing columns, with the node
/// features shared with the episode.
#[derive(Debug, Clone)]
pub struct StateSnapshot {
    features: Arc<Features>,
    sparse: Option<Arc<SparseRows>>,
    small: Vec<f32>,
    layout: StateLayout,
    dim: usize,
}

impl StateSnapshot {
    /// A snapshot of a state given whole, row-major `[n, dim]` (as features: one block).
    pub fn whole(state: Features) -> Self {
        Self {
            dim: state.dim(),
            features: Arc::new(state),
            sparse: None,
            small: Vec::new(),
            layout: StateLayout::Paper,
        }
    }

    /// The state as two column blocks, as [`Episode::state_blocks`] gave it.
    pub fn blocks(&self) -> StateBlocks<'_> {
        blocks(
            &self.features,
            self.sparse.as_deref(),
            &self.small,
            self.layout,
            self.dim,
        )
    }
}

/// The state `[features ‖ small]` (paper) or `[small ‖ features]` (reference) as blocks.
fn blocks<'s>(
    features: &'s Features,
    sparse: Option<&'s SparseRows>,
    small: &'s [f32],
    layout: StateLayout,
    dim: usize,
) -> StateBlocks<'s> {
    let (f, d) = (features.as_slice(), features.dim());
    let (b, block) = match layout.features_first() {
        true => (StateBlocks::new(f, d, small, dim - d), 0),
        false => (StateBlocks::new(small, dim - d, f, d), 1),
    };
    match sparse {
        Some(s) => b.with_sparse(block, s),
        None => b,
    }
}

/// The non-zero entries of features worth iterating instead of scanning: at least 32 wide and
/// at most half non-zero (Cora 1 %, Amazon-Photo 35 %; not the benchmarks' constant ones).
/// `features` are the rows `nodes` of the graph's `graph_features`: gathered from the graph's
/// own non-zero index ([`graph_sparse_rows`]) when it has one, the same entries either way.
fn sparse_features(
    features: &Features,
    graph_features: &Features,
    nodes: &[u32],
) -> Option<Arc<SparseRows>> {
    if features.dim() < 32 {
        return None;
    }
    let gathered = graph_sparse_rows(graph_features).and_then(|g| g.gather(nodes).ok());
    let s = gathered.unwrap_or_else(|| SparseRows::new(features.as_slice(), features.dim()));
    (s.density() <= 0.5).then(|| Arc::new(s))
}

/// The non-zero index of a graph's features, built once per graph (the last one asked for is
/// kept, keyed by [`Features::id`]) so that each episode copies its rows' entries instead of
/// scanning its rows (~20 ms for an Amazon-Photo neighbourhood); `None` for graphs over 2²⁸
/// values or with more than 60 % non-zero entries, whose neighbourhoods scan their own rows.
fn graph_sparse_rows(graph: &Features) -> Option<Arc<SparseRows>> {
    static CACHE: std::sync::Mutex<Option<(u64, Option<Arc<SparseRows>>)>> =
        std::sync::Mutex::new(None);
    let values = graph.num_nodes().saturating_mul(graph.dim());
    if values > 1 << 28 {
        return None;
    }
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((id, rows)) = cache.as_ref()
        && *id == graph.id()
    {
        return rows.clone();
    }
    let nnz = graph.as_slice().iter().filter(|&&v| v != 0.0).count();
    let rows = (nnz as f64 <= 0.6 * values as f64)
        .then(|| Arc::new(SparseRows::new(graph.as_slice(), graph.dim())));
    *cache = Some((graph.id(), rows.clone()));
    rows
}

impl<'a> Episode<'a> {
    /// The neighbourhood's features with the episode's feature edits applied (local rows);
    /// `None` before any.
    pub(super) fn edited_features(&self) -> Result<Option<Features>> {
        let edits = self.judge.feature_edits();
        if edits.is_empty() {
            return Ok(None);
        }
        let entries: Vec<(u32, u32, f32)> = edits
            .iter()
            .filter_map(|e| Some((self.sub.local_of(e.node)? as u32, e.feature, e.new)))
            .collect();
        let x = self.graph_features.gather(&self.sub.nodes);
        Ok(Some(x.with_entries(&entries)?))
    }

    /// Rewrites the dynamic state columns from the current edit graph and black-box output:
    /// degree, entropy and one-hot ([`StateLayout::Paper`], O(n · dim)) or the degree only
    /// ([`StateLayout::Reference`], O(n)).
    pub(super) fn refresh_state(&mut self) -> Result<()> {
        let sw = self.dim - self.graph_features.dim();
        let estimated = match &self.estimator {
            Some(e) => {
                let c = &self.candidates;
                let actions: Vec<_> = (0..c.len()).map(|i| c.get(i)).collect();
                let x = self.edited_features()?;
                let (column, per) = e.estimates(
                    &self.edit,
                    x.as_ref(),
                    &actions,
                    self.goal(),
                    self.original_label(),
                )?;
                self.candidates.estimate = per;
                Some(column)
            }
            None => None,
        };
        let lp = self.judge.log_probs();
        match self.layout {
            StateLayout::Paper | StateLayout::Targeted | StateLayout::Estimated => {
                // The targeted layout's two columns: the distance (fixed) and the probability
                // of a class that ends the episode; the estimated layout's third after them.
                let from_end = self.layout.targeted_from_end();
                let classes_end = sw - from_end.unwrap_or(0);
                let (goal, original) = (self.goal(), self.original_label());
                for (i, row) in self.small.chunks_exact_mut(sw).enumerate() {
                    row[0] = self.edit.degree(i) as f32;
                    row[1] = lp.entropy(i);
                    let onehot = &mut row[2..classes_end];
                    onehot.fill(0.0);
                    onehot[lp.argmax(i)] = 1.0;
                    if from_end.is_some() {
                        row[classes_end + 1] = lp
                            .row(i)
                            .iter()
                            .enumerate()
                            .filter(|&(c, _)| goal.reached(original, c))
                            .map(|(_, l)| l.exp())
                            .sum();
                    }
                    if let Some(column) = &estimated {
                        row[classes_end + 2] = column[i];
                    }
                }
            }
            StateLayout::Reference => {
                for (i, row) in self.small.chunks_exact_mut(sw).enumerate() {
                    row[1] = self.edit.degree(i) as f32;
                }
            }
        }
        Ok(())
    }

    /// The per-node state, row-major `[n, dim]` (a copy), with `n` and `dim`.
    ///
    /// # Shapes
    /// - output: `(data of length n·dim, n, dim)`, `dim = state_dim(feature_dim, classes)`
    pub fn state(&self) -> (Vec<f32>, usize, usize) {
        (self.state_blocks().to_rows(), self.num_nodes(), self.dim)
    }

    /// The per-node state without copying, as two column blocks (the node features and the
    /// columns that change with the edits, in the layout's order).
    ///
    /// # Shapes
    /// - output: `[n, dim]` in two blocks
    pub fn state_blocks(&self) -> StateBlocks<'_> {
        blocks(
            self.features(),
            self.sparse_rows().as_deref(),
            &self.small,
            self.layout,
            self.dim,
        )
    }

    /// True when the first block of [`Episode::state_blocks`] never changes during the episode
    /// (the node features, [`StateLayout::Paper`]), so a policy's product over it can be kept
    /// for all steps
    /// ([`HostPolicy::first_block_product`](induce_models::policy::host::HostPolicy::first_block_product)).
    pub fn first_block_is_fixed(&self) -> bool {
        self.layout.features_first()
    }

    /// How this episode's state is built ([`EnvConfig::state`](super::EnvConfig::state)).
    pub fn state_layout(&self) -> StateLayout {
        self.layout
    }

    /// The state's node-feature columns, which never change during the episode (in either
    /// layout), and the columns of the state they occupy.
    ///
    /// # Shapes
    /// - output: `[n, feature_dim]`
    pub fn feature_block(&self) -> (&Features, Range<usize>) {
        (self.features(), self.feature_columns())
    }

    /// The columns of the state the node features occupy ([`Episode::feature_block`]'s,
    /// without gathering the features).
    pub fn feature_columns(&self) -> Range<usize> {
        let d = self.graph_features.dim();
        match self.layout.features_first() {
            true => 0..d,
            false => self.dim - d..self.dim,
        }
    }

    /// Whether the neighbourhood's node features were gathered (tests).
    #[cfg(test)]
    pub(crate) fn features_gathered(&self) -> bool {
        self.features.get().is_some()
    }

    /// The neighbourhood's node features, gathered on the first call.
    pub(super) fn features(&self) -> &Arc<Features> {
        self.features
            .get_or_init(|| Arc::new(self.graph_features.gather(&self.sub.nodes)))
    }

    /// The whole graph's node features, of which [`Episode::feature_block`]'s are the rows of
    /// the neighbourhood's nodes ([`Subgraph::nodes`]): lets a kernel compute one product over
    /// the graph's features and gather each episode's rows from it.
    ///
    /// [`Subgraph::nodes`]: induce_graph::Subgraph::nodes
    pub fn graph_features(&self) -> &'a Features {
        self.graph_features
    }

    /// The state's other columns (`2 + classes`: degree, entropy, one-hot), which change with
    /// the edits, row-major, and the columns of the state they occupy.
    ///
    /// # Shapes
    /// - output: `[n, dim − feature_dim]`
    pub fn dynamic_block(&self) -> (&[f32], Range<usize>) {
        let d = self.graph_features.dim();
        match self.layout.features_first() {
            true => (&self.small, d..self.dim),
            false => (&self.small, 0..self.dim - d),
        }
    }

    /// A copy of the current state that shares the node features with the episode: what a
    /// rollout keeps of each visited state (`2 + classes` values per node instead of `dim`).
    pub fn snapshot(&self) -> StateSnapshot {
        StateSnapshot {
            features: Arc::clone(self.features()),
            sparse: self.sparse_rows().clone(),
            small: self.small.clone(),
            layout: self.layout,
            dim: self.dim,
        }
    }

    /// The non-zero entries of the node features when they are wide and sparse, found on the
    /// first call.
    pub(super) fn sparse_rows(&self) -> &Option<Arc<SparseRows>> {
        self.sparse
            .get_or_init(|| sparse_features(self.features(), self.graph_features, &self.sub.nodes))
    }

    /// Width of a state row ([`state_dim`] of this episode's features and classes).
    ///
    /// [`state_dim`]: super::state_dim
    pub fn state_width(&self) -> usize {
        self.dim
    }

    /// The state uploaded as a tensor.
    ///
    /// # Shapes
    /// - output: `[n, dim]`
    pub fn state_tensor(&self, device: &Device) -> Tensor<2> {
        matrix(&self.state().0, self.num_nodes(), self.dim, device)
    }

    /// The current (edited) neighbourhood uploaded for the policy's GAT layers.
    pub fn graph_tensors(&self, device: &Device) -> Result<GraphTensors> {
        Ok(GraphTensors::new(
            self.num_nodes(),
            &self.edit.edges(),
            device,
        )?)
    }
}

/// The authors' entropy feature of one node (spec §7), in f32 like their PyTorch code:
/// `q = sigmoid(log p) = 1 / (1 + exp(−log p))` per class, then `−Σ_c q_c · log2(q_c)` summed in
/// class order. Not a distribution's entropy (the `q` do not sum to 1), and deliberately
/// unguarded: for `log p < ≈ −88.7`, `exp` overflows to +∞, `q` is exactly 0 and
/// `0 · log2(0) = 0 · (−∞)` is NaN, which the reference policy then propagates (see
/// [`StateLayout::Reference`]).
///
/// ```
/// use induce_rl::env::reference_entropy;
/// let h = reference_entropy(&[0.5f32.ln(), 0.5f32.ln()]);
/// let q = 1.0 / (1.0 + 2.0f32); // sigmoid(ln 0.5) = 1/3
/// assert!((h - 2.0 * -(q * q.log2())).abs() < 1e-6);
/// assert!(reference_entropy(&[0.0, -100.0]).is_nan());
/// ```
pub fn reference_entropy(log_probs: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for &lp in log_probs {
        let q = 1.0f32 / (1.0f32 + (-lp).exp());
        acc += q * q.log2();
    }
    -acc
}
