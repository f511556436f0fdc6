//! The first-order shortlist of the bounded greedy search (`greedy --shortlist K`): where judging
//! every action at every step costs too much (Amazon-Photo's 4-hop neighbourhoods hold about
//! 126,000 actions), each step ranks the actions by a first-order estimate of the margin they
//! leave, and only the `K` most promising are judged exactly.
//!
//! The estimate: every pair an action toggles carries a weight (1 for an edge of the edited
//! graph, 0 for an absent pair), and toggling pair `k` changes the original class's margin `m`
//! by about `∂m/∂w_k · Δw_k` (`Δw = −1` for a deletion, `+1` for an addition), from one
//! gradient of the black box per step ([`BlackBox::edge_weighted`]). Nodes outside the
//! neighbourhood that additions may reach (`--additions graph`) join the graph with their
//! features and no edges of their own.
//!
//! ```text
//!   0 ─ 1 ─ 2        target 0, actions: add (0, 2), delete (0, 1), delete (1, 2)
//!                     pairs: (0,1) w=1, (1,2) w=1, (0,2) w=0
//! ```

use std::collections::HashMap;

use induce_explain::{EditKind, Goal, Result};
use induce_graph::Graph;
use induce_models::DegreeGradient;

use crate::action_space::ActionSpace;
use crate::neighbourhood::{GradModel, SoftNeighbourhood};

/// A target's actions bound to the black box's gradient (see the module docs).
pub(crate) struct FirstOrder<'m> {
    soft: SoftNeighbourhood<'m>,
    /// The pair each action toggles (an index into the bound pairs).
    pair_of: Vec<usize>,
    /// Each pair's weight on the unedited graph.
    base: Vec<f32>,
}

impl<'m> FirstOrder<'m> {
    /// Binds `space`'s neighbourhood of `graph` (and the outside nodes its additions reach) to
    /// `model`.
    pub(crate) fn new(graph: &Graph, space: &ActionSpace, model: &'m GradModel) -> Result<Self> {
        let sub = &space.sub;
        let mut nodes = sub.nodes.clone();
        let mut local: HashMap<u32, u32> = HashMap::new();
        let mut local_of = |v: u32, nodes: &mut Vec<u32>| -> u32 {
            match sub.local_of(v) {
                Some(l) => l as u32,
                None => *local.entry(v).or_insert_with(|| {
                    nodes.push(v);
                    nodes.len() as u32 - 1
                }),
            }
        };
        let mut pairs: Vec<(u32, u32)> = sub.edges.clone();
        let mut base = vec![1.0f32; pairs.len()];
        let mut index: HashMap<(u32, u32), usize> = (pairs.iter().copied())
            .enumerate()
            .map(|(k, (a, b))| ((a.min(b), a.max(b)), k))
            .collect();
        let mut pair_of = Vec::with_capacity(space.actions.len());
        for a in &space.actions {
            let (u, w) = (local_of(a.u, &mut nodes), local_of(a.w, &mut nodes));
            let key = (u.min(w), u.max(w));
            let k = *index.entry(key).or_insert_with(|| {
                pairs.push(key);
                base.push(match a.kind {
                    EditKind::Add => 0.0,
                    EditKind::Delete => 1.0,
                });
                pairs.len() - 1
            });
            pair_of.push(k);
        }
        let features = graph.features().gather(&nodes);
        Ok(Self {
            soft: model.bind(&features, &pairs, sub.target_local)?,
            pair_of,
            base,
        })
    }

    /// The margin each of `candidates` (indices of `space`'s actions) is estimated to leave
    /// when applied after `applied` (action indices), toward `goal` from the original class
    /// `y`: one gradient of the black box.
    ///
    /// # Shapes
    /// - applied: `[s]`; candidates: `[k]`; output: `[k]`
    pub(crate) fn estimates(
        &self,
        applied: &[usize],
        candidates: &[usize],
        goal: Goal,
        y: usize,
    ) -> Result<Vec<f32>> {
        let mut w = self.base.clone();
        for &a in applied {
            let k = self.pair_of[a];
            w[k] = 1.0 - w[k];
        }
        let mut margin = 0.0;
        let (_, g) = self
            .soft
            .log_probs_and_grad(&w, DegreeGradient::Through, |lp| {
                margin = goal.margin(lp, y);
                goal.margin_gradient(lp, y)
            })?;
        Ok(candidates
            .iter()
            .map(|&a| {
                let k = self.pair_of[a];
                margin + g[k] * (1.0 - 2.0 * w[k])
            })
            .collect())
    }
}

/// The `k` of `candidates` with the smallest `estimates` (ties to the earlier candidate), in
/// `candidates`' order; all of them when there are at most `k`.
///
/// ```text
///   candidates 4 7 9, estimates 0.5 −1.0 0.2, k = 2  →  7 9
/// ```
pub(crate) fn shortlist(candidates: &[usize], estimates: &[f32], k: usize) -> Vec<usize> {
    if candidates.len() <= k {
        return candidates.to_vec();
    }
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| estimates[a].total_cmp(&estimates[b]).then(a.cmp(&b)));
    order.truncate(k);
    order.sort_unstable();
    order.into_iter().map(|i| candidates[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortlist_keeps_the_smallest_estimates_in_candidate_order() {
        assert_eq!(shortlist(&[4, 7, 9], &[0.5, -1.0, 0.2], 2), vec![7, 9]);
        assert_eq!(shortlist(&[4, 7, 9], &[0.0, 0.0, 0.0], 2), vec![4, 7]);
        assert_eq!(shortlist(&[4, 7], &[3.0, 1.0], 5), vec![4, 7]);
        assert_eq!(shortlist(&[], &[], 3), Vec::<usize>::new());
    }
}
