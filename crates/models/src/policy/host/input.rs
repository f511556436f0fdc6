//! [`PolicyInput`]: what one forward or backward pass of the policy reads.

use super::{Adjacency, FirstBlockProduct, HostPolicy, StateBlocks};

/// One state the policy is evaluated on: the per-node state, its graph and its candidate actions,
/// candidate `k` being the edit of the pair `(cand_u[k], cand_w[k])` with action flag `flag[k]`.
/// The input of [`HostPolicy::forward_cached`], [`HostPolicy::log_probs_cached`],
/// [`HostPolicy::backward_blocks`] and [`HostPolicy::backward_recomputed`].
///
/// # Shapes
/// - x: `[n, input_dim]`, in two column blocks
/// - first: the first block's product `[n, hidden]` ([`HostPolicy::first_block_product`] of the
///   same parameters and first block), or `None` to compute it
/// - graph: `n` nodes
/// - cand_u, cand_w, flag: `[C]`
///
/// ```
/// use induce_models::policy::host::{Adjacency, HostPolicy, PolicyInput, StateBlocks};
/// use induce_models::{PolicyConfig, device::default_device};
/// let dev = default_device().unwrap();
/// let policy = HostPolicy::from_policy(&PolicyConfig::new(2).init(&dev));
/// //  0 ─ 1 ─ 2 : candidates delete (0, 1), add (0, 2)
/// let g = Adjacency::with_self_loops(3, &[(0, 1), (1, 2)]).unwrap();
/// let (features, degree) = ([1.0; 3], [1.0, 2.0, 1.0]); // one column each
/// let x = StateBlocks::new(&features, 1, &degree, 1);
/// let first = policy.first_block_product(&x);
/// let input = PolicyInput::new(x, &g, &[0, 0], &[1, 2], &[0.0, 1.0]).with_first(Some(&first));
/// let trace = policy.forward_cached(&input);
/// assert_eq!(policy.log_probs_cached(&input), trace.log_probs());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PolicyInput<'a> {
    /// The per-node state, `[n, input_dim]`.
    pub x: StateBlocks<'a>,
    /// The first GAT layer's product over `x`'s first block, when the caller has it.
    pub first: Option<&'a FirstBlockProduct>,
    /// The graph the GAT layers pass messages on.
    pub graph: &'a Adjacency,
    /// First endpoint of each candidate, `[C]`.
    pub cand_u: &'a [u32],
    /// Second endpoint of each candidate, `[C]`.
    pub cand_w: &'a [u32],
    /// Action flag of each candidate, `[C]`.
    pub flag: &'a [f32],
}

impl<'a> PolicyInput<'a> {
    /// The state `x` on `graph` with candidates `(cand_u[k], cand_w[k], flag[k])`, without a
    /// first-block product.
    pub fn new(
        x: StateBlocks<'a>,
        graph: &'a Adjacency,
        cand_u: &'a [u32],
        cand_w: &'a [u32],
        flag: &'a [f32],
    ) -> Self {
        Self {
            x,
            first: None,
            graph,
            cand_u,
            cand_w,
            flag,
        }
    }

    /// The same input with the first-block product `first` (`None`: computed by each pass).
    pub fn with_first(self, first: Option<&'a FirstBlockProduct>) -> Self {
        Self { first, ..self }
    }
}

impl HostPolicy {
    /// Panics unless `input`'s state, first-block product, graph and candidate lists fit this
    /// policy and each other.
    pub(super) fn check_inputs(&self, input: &PolicyInput<'_>) {
        let PolicyInput {
            x,
            first,
            graph: g,
            cand_u: u,
            cand_w: w,
            flag,
        } = input;
        if let Some(f) = first {
            assert!(
                f.num_nodes == x.num_nodes() && f.first_width == x.first_width,
                "first-block product of another state shape"
            );
        }
        assert!(
            x.num_nodes() == g.num_nodes() && x.width() == self.input_dim(),
            "state is [n, input_dim]"
        );
        assert!(
            u.len() == w.len() && w.len() == flag.len(),
            "candidate lists differ"
        );
    }
}
