//! The backward pass of [`MessagePassing::segment_matmul`] under Burn's autodiff:
//! `∂x = Aᵀ g` (the same kernel on the transposed CSR, no atomics) and
//! `∂val[k] = g[row k] · x[col k]` ([`MessagePassing::segment_dot`]).

use burn::backend::Backend;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::tensor::{FloatTensor, IntTensor};

use super::{MessagePassing, Segments};

#[derive(Debug)]
struct SegmentMatmulBackward;

/// The forward CSR, its transpose and the transpose's permutation, plus the checkpointed inputs.
type State<B> = (
    (Segments<B>, Segments<B>, IntTensor<B>),
    Option<NodeId>,
    Option<NodeId>,
);

impl<B: Backend + MessagePassing> Backward<B, 2> for SegmentMatmulBackward {
    type State = State<B>;

    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, ck: &mut Checkpointer) {
        let [p_val, p_x] = ops.parents;
        let grad = grads.consume::<B>(&ops.node);
        let ((csr, t, t_perm), val_id, x_id) = ops.state;
        if let (Some(node), Some(val_id)) = (p_x, val_id) {
            let val: FloatTensor<B> = ck.retrieve_node_output(val_id);
            let val_t = B::float_select(val, 0, t_perm.clone());
            // The transpose's own transpose is the forward CSR; a second-order pass is not
            // supported, so the last argument (never read by the kernels) is a placeholder.
            let gx = B::segment_matmul(t, val_t, grad.clone(), csr.clone(), t_perm);
            grads.register::<B>(node.id, gx);
        }
        if let (Some(node), Some(x_id)) = (p_val, x_id) {
            let x: FloatTensor<B> = ck.retrieve_node_output(x_id);
            let Segments { row, ptr, col } = csr;
            grads.register::<B>(node.id, B::segment_dot(row, ptr, col, grad, x));
        }
    }
}

/// [`MessagePassing::segment_max`] has no gradient: its values are detached by
/// [`super::Csr::segment_max`]; were a tracked tensor passed anyway, it receives none.
#[derive(Debug)]
struct NoGradient;

impl<B: Backend> Backward<B, 1> for NoGradient {
    type State = ();

    fn backward(self, _: Ops<(), 1>, _: &mut Gradients, _: &mut Checkpointer) {}
}

impl<B: Backend + MessagePassing, C: CheckpointStrategy> MessagePassing for Autodiff<B, C> {
    fn segment_greedy(ptr: IntTensor<Self>, val: FloatTensor<Self>) -> IntTensor<Self> {
        B::segment_greedy(ptr, val.into_primitive())
    }

    fn segment_max(
        row: IntTensor<Self>,
        ptr: IntTensor<Self>,
        val: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let node = val.node();
        let out = B::segment_max(row, ptr, val.into_primitive());
        NoGradient
            .prepare::<C>([node])
            .compute_bound()
            .stateless(out)
    }

    fn segment_matmul(
        csr: Segments<Self>,
        val: FloatTensor<Self>,
        x: FloatTensor<Self>,
        t: Segments<Self>,
        t_perm: IntTensor<Self>,
    ) -> FloatTensor<Self> {
        // Index tensors are not tracked: the same primitives on `B`.
        let csr = Segments::<B> {
            row: csr.row,
            ptr: csr.ptr,
            col: csr.col,
        };
        let t = Segments::<B> {
            row: t.row,
            ptr: t.ptr,
            col: t.col,
        };
        let (val_tracked, x_tracked) = (val.is_tracked(), x.is_tracked());
        match SegmentMatmulBackward
            .prepare::<C>([val.node(), x.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let val_id = x_tracked.then(|| prep.checkpoint(&val));
                let x_id = val_tracked.then(|| prep.checkpoint(&x));
                let out = B::segment_matmul(
                    csr.clone(),
                    val.into_primitive(),
                    x.into_primitive(),
                    t.clone(),
                    t_perm.clone(),
                );
                let state = ((csr, t, t_perm), val_id, x_id);
                prep.finish(state, out)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::segment_matmul(
                csr,
                val.into_primitive(),
                x.into_primitive(),
                t,
                t_perm,
            )),
        }
    }
}
