//! The candidate actions of an [`Episode`](super::Episode): [`Candidates`] and the initial list.

use std::collections::HashSet;

use burn::tensor::Device;
use induce_graph::{EditGraph, Subgraph};
use induce_models::CandidateTensors;

use super::{ActionFlag, EditMode, EnvConfig};
use crate::explanation::EditKind;

/// The candidate actions of an episode in LOCAL (subgraph) ids, one entry per action in the
/// four parallel vectors.
///
/// Order: additions `(target, u)` by ascending local `u`, then deletions `(j, k)`, `j < k`, in
/// row-major order. The order is fixed at the start of an episode; a used action is removed and
/// the others keep their relative order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates {
    /// First endpoints (the target for an addition; `j` for a deletion `(j, k)`).
    pub u: Vec<u32>,
    /// Second endpoints.
    pub w: Vec<u32>,
    /// Edit type of each action.
    pub kind: Vec<EditKind>,
    /// The action-type feature of each action fed to the policy, `true` = 1.0 (see
    /// [`ActionFlag`]).
    pub type_flag: Vec<bool>,
    /// [`StateLayout::Estimated`](super::StateLayout::Estimated): each action's first-order
    /// estimate, in `[−4, 4]` (empty in other layouts; see [`Candidates::flag`]).
    pub(super) estimate: Vec<f32>,
}

impl Candidates {
    /// Number of actions.
    pub fn len(&self) -> usize {
        self.u.len()
    }

    /// True when there is no action.
    pub fn is_empty(&self) -> bool {
        self.u.is_empty()
    }

    /// Action `i` as `(u, w, kind)`. Panics if `i` is out of range.
    pub fn get(&self, i: usize) -> (u32, u32, EditKind) {
        (self.u[i], self.w[i], self.kind[i])
    }

    /// The action-type feature of each action ([`Candidates::type_flag`] as 0.0 / 1.0: by
    /// default 1.0 for an addition, 0.0 for a deletion; see [`ActionFlag`]), the `flag`
    /// argument of [`CandidateTensors::new`]. With
    /// [`StateLayout::Estimated`](super::StateLayout::Estimated) each also carries the black
    /// box's first-order estimate `e ∈ [−4, 4]` of the action (how much it lowers the margin,
    /// over the margin): `type + e / 10`, the two types apart (`[−0.4, 0.4]` and
    /// `[0.6, 1.4]`).
    pub fn flag(&self) -> Vec<f32> {
        let ty = |f: bool| f32::from(u8::from(f));
        match self.estimate.is_empty() {
            true => self.type_flag.iter().map(|&f| ty(f)).collect(),
            false => (self.type_flag.iter().zip(&self.estimate))
                .map(|(&f, &e)| ty(f) + e / 10.0)
                .collect(),
        }
    }

    /// [`StateLayout::Estimated`](super::StateLayout::Estimated): each action's first-order
    /// estimate `e ∈ [−4, 4]` (`None` in the other layouts), the prior the policy's scores
    /// start from (see [`crate::kernel::PRIOR_WEIGHT`]).
    ///
    /// # Shapes
    /// - output: `[C]`
    pub fn estimate(&self) -> Option<&[f32]> {
        (!self.estimate.is_empty()).then_some(&self.estimate[..])
    }

    /// Uploads the actions for the policy.
    ///
    /// # Shapes
    /// - output: `u`, `w`: `[C]`; `flag`: `[C, 1]`
    pub fn to_tensors(&self, device: &Device) -> CandidateTensors {
        CandidateTensors::new(&self.u, &self.w, &self.flag(), device)
    }

    fn push(&mut self, u: usize, w: usize, kind: EditKind, flag: bool) {
        self.u.push(u as u32);
        self.w.push(w as u32);
        self.kind.push(kind);
        self.type_flag.push(flag);
    }

    pub(super) fn remove(&mut self, i: usize) -> (u32, u32, EditKind) {
        self.type_flag.remove(i);
        if i < self.estimate.len() {
            self.estimate.remove(i);
        }
        (self.u.remove(i), self.w.remove(i), self.kind.remove(i))
    }
}

/// The initial candidate list (see [`Candidates`] for the order).
pub(super) fn build_candidates(sub: &Subgraph, edit: &EditGraph, config: &EnvConfig) -> Candidates {
    let allowed: Option<HashSet<(u32, u32)>> = config
        .allowed
        .as_ref()
        .map(|pairs| pairs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect());
    let ok = |a: usize, b: usize| {
        let (ga, gb) = (sub.global_of(a), sub.global_of(b));
        config.locked.permits(ga, gb)
            && allowed
                .as_ref()
                .is_none_or(|set| set.contains(&(ga.min(gb), ga.max(gb))))
    };
    let t = sub.target_local;
    let (add_flag, target_neighbour) = match config.action_flag {
        ActionFlag::IsAddition => (true, false),
        ActionFlag::TargetNeighbour => (false, true),
    };
    let mut c = Candidates::default();
    if config.mode != EditMode::DeleteOnly {
        for u in 0..sub.num_nodes() {
            if u != t && !edit.has_edge(t, u) && ok(t, u) {
                c.push(t, u, EditKind::Add, add_flag);
            }
        }
    }
    if config.mode != EditMode::AddOnly {
        for &(j, k) in &sub.edges {
            let (j, k) = (j as usize, k as usize);
            if ok(j, k) {
                let flag = target_neighbour && edit.has_edge(t, j);
                c.push(j, k, EditKind::Delete, flag);
            }
        }
    }
    c
}
