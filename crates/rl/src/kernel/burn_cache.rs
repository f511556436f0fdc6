//! What the Burn kernel keeps per episode ([`BurnCache`]), shared by its actor
//! ([`super::burn`]) and the resident batch ([`super::resident`]), and the slice splitter both
//! pack batches with.

use burn::tensor::Tensor;
use induce_models::kernels::tensors::index_tensor_below;

/// What the states of one episode share on the Burn kernel: the first GAT layer's product
/// over the node features ([`Policy::block_product`](induce_models::Policy::block_product)): computed once per episode on the device,
/// or the episode's rows of the whole graph's ([`BurnOptions::graph_product`](super::burn::BurnOptions::graph_product)), gathered when a
/// batch is packed (one gather for all the episodes of a batch).
#[derive(Debug, Clone)]
pub struct BurnCache {
    pub(super) product: CacheProduct,
}

/// Where a [`BurnCache`]'s product lives.
#[derive(Debug, Clone)]
pub(super) enum CacheProduct {
    /// The episode's own product, `[n, hidden]`.
    Own(Tensor<2>),
    /// Rows `rows` (the neighbourhood's nodes) of the whole graph's product `whole`
    /// (`[bound, hidden]`, number `generation`).
    Rows {
        whole: Tensor<2>,
        generation: u64,
        rows: std::sync::Arc<[u32]>,
        bound: usize,
    },
}

impl BurnCache {
    /// `F · W₁[feature columns]` of the episode, `[n, hidden]`.
    pub(super) fn product(&self) -> Tensor<2> {
        match &self.product {
            CacheProduct::Own(t) => t.clone(),
            CacheProduct::Rows {
                whole, rows, bound, ..
            } => {
                let d = whole.device();
                whole
                    .clone()
                    .select(0, index_tensor_below(rows.to_vec(), *bound, &d))
            }
        }
    }

    /// The products of `caches` side by side, `[Σ n, hidden]`: one gather where all hold rows
    /// of the same graph-wide product, else each one's, concatenated.
    pub(super) fn stacked(caches: &[&BurnCache]) -> Tensor<2> {
        let shared = match caches.first().map(|c| &c.product) {
            Some(CacheProduct::Rows {
                whole,
                generation,
                bound,
                ..
            }) => caches
                .iter()
                .all(|c| {
                    matches!(&c.product, CacheProduct::Rows { generation: g, .. } if g == generation)
                })
                .then_some((whole, *bound)),
            _ => None,
        };
        match (caches, shared) {
            ([one], _) => one.product(),
            (_, Some((whole, bound))) => {
                let mut rows = Vec::new();
                for c in caches {
                    if let CacheProduct::Rows { rows: r, .. } = &c.product {
                        rows.extend_from_slice(r);
                    }
                }
                let d = whole.device();
                whole.clone().select(0, index_tensor_below(rows, bound, &d))
            }
            _ => Tensor::cat(caches.iter().map(|c| c.product()).collect(), 0),
        }
    }
}

/// `s` cut into consecutive parts of the given lengths (which sum to at most its length).
pub(super) fn split<T>(
    mut s: &mut [T],
    lens: impl Iterator<Item = usize>,
) -> std::collections::VecDeque<&mut [T]> {
    let mut parts = std::collections::VecDeque::new();
    for len in lens {
        let (head, tail) = std::mem::take(&mut s).split_at_mut(len);
        parts.push_back(head);
        s = tail;
    }
    parts
}
