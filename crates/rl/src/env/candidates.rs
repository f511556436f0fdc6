//! The candidate actions of an [`Episode`](super::Episode): [`Candidates`] and the initial list.

use std::collections::HashSet;

use burn::tensor::Device;
use induce_graph::{EditGraph, Subgraph};
use induce_models::CandidateTensors;

use super::{ActionFlag, EditMode, EnvConfig};
use crate::explanation::EditKind;

/// What one candidate action does ([`Candidates::kind`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ActionKind {
    /// Adds the pair `(u, w)`.
    Add,
    /// Deletes the edge `(u, w)`.
    Delete,
    /// Sets entry `feature` of node `u`'s row (`w = u`) to `value`
    /// ([`EnvConfig::features`](super::EnvConfig::features)).
    Feature {
        /// The column.
        feature: u32,
        /// The new value.
        value: f32,
    },
}

impl ActionKind {
    /// The edge edit it makes (`None` for a feature action).
    pub fn edit_kind(self) -> Option<EditKind> {
        match self {
            ActionKind::Add => Some(EditKind::Add),
            ActionKind::Delete => Some(EditKind::Delete),
            ActionKind::Feature { .. } => None,
        }
    }
}

/// The candidate actions of an episode in LOCAL (subgraph) ids, one entry per action in the
/// parallel vectors.
///
/// Order: additions `(target, u)` by ascending local `u`, then deletions `(j, k)`, `j < k`, in
/// row-major order, then feature actions `(v, v)` by node, column and value. The order is fixed
/// at the start of an episode; a used action is removed (with a feature action, every other
/// action on its entry) and the others keep their relative order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates {
    /// First endpoints (the target for an addition; `j` for a deletion `(j, k)`; the node of a
    /// feature action).
    pub u: Vec<u32>,
    /// Second endpoints (the node again for a feature action).
    pub w: Vec<u32>,
    /// What each action does.
    pub kind: Vec<ActionKind>,
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
    pub fn get(&self, i: usize) -> (u32, u32, ActionKind) {
        (self.u[i], self.w[i], self.kind[i])
    }

    /// The action-type feature of each action ([`Candidates::type_flag`] as 0.0 / 1.0: by
    /// default 1.0 for an addition, 0.0 for a deletion; see [`ActionFlag`]), the `flag`
    /// argument of [`CandidateTensors::new`]. With
    /// [`StateLayout::Estimated`](super::StateLayout::Estimated) each also carries the black
    /// box's first-order estimate `e ∈ [−4, 4]` of the action (how much it lowers the margin,
    /// over the margin): `type + e / 10`, the two types apart (`[−0.4, 0.4]` and
    /// `[0.6, 1.4]`). A feature action's type is 2 (`[1.6, 2.4]`).
    pub fn flag(&self) -> Vec<f32> {
        let ty = |i: usize| match self.kind[i] {
            ActionKind::Feature { .. } => 2.0,
            _ => f32::from(u8::from(self.type_flag[i])),
        };
        match self.estimate.is_empty() {
            true => (0..self.len()).map(ty).collect(),
            false => (0..self.len())
                .map(|i| ty(i) + self.estimate[i] / 10.0)
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

    fn push(&mut self, u: usize, w: usize, kind: ActionKind, flag: bool) {
        self.u.push(u as u32);
        self.w.push(w as u32);
        self.kind.push(kind);
        self.type_flag.push(flag);
    }

    pub(super) fn remove(&mut self, i: usize) -> (u32, u32, ActionKind) {
        self.type_flag.remove(i);
        if i < self.estimate.len() {
            self.estimate.remove(i);
        }
        (self.u.remove(i), self.w.remove(i), self.kind.remove(i))
    }

    /// Removes every feature action on entry `feature` of node `v` (local id).
    pub(super) fn remove_entry(&mut self, v: u32, feature: u32) {
        for i in (0..self.len()).rev() {
            if self.u[i] == v
                && matches!(self.kind[i], ActionKind::Feature { feature: f, .. } if f == feature)
            {
                self.remove(i);
            }
        }
    }
}

/// The initial candidate list (see [`Candidates`] for the order), with the feature actions
/// `features` (local node, column, value) last.
pub(super) fn build_candidates(
    sub: &Subgraph,
    edit: &EditGraph,
    config: &EnvConfig,
    features: &[(u32, u32, f32)],
) -> Candidates {
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
    let edges = config.features.as_ref().is_none_or(|f| !f.only);
    if edges && config.mode != EditMode::DeleteOnly {
        for u in 0..sub.num_nodes() {
            if u != t && !edit.has_edge(t, u) && ok(t, u) {
                c.push(t, u, ActionKind::Add, add_flag);
            }
        }
    }
    if edges && config.mode != EditMode::AddOnly {
        for &(j, k) in &sub.edges {
            let (j, k) = (j as usize, k as usize);
            if ok(j, k) {
                let flag = target_neighbour && edit.has_edge(t, j);
                c.push(j, k, ActionKind::Delete, flag);
            }
        }
    }
    for &(v, feature, value) in features {
        let v = v as usize;
        c.push(v, v, ActionKind::Feature { feature, value }, false);
    }
    c
}
