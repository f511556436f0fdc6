//! What every mask-based baseline starts from: the target's h-hop neighbourhood, a candidate set
//! of node pairs with their present/absent state, the black box's verdict on any 0/1 choice of
//! those pairs, and the gradient of its output with respect to a soft mask over them.

use std::sync::Mutex;

use induce_explain::{Edit, ExplainError, Explanation, Judge, Result, Verdict};
use induce_graph::{Features, Graph, Subgraph, k_hop};
use induce_models::{BlackBox, LogProbs};
use serde::{Deserialize, Serialize};

pub(crate) use induce_explain::gradient::differentiable;
pub use induce_explain::gradient::{GradModel, SoftNeighbourhood};

/// Which node pairs of the neighbourhood a mask ranges over.
///
/// ```text
///   0 ─ 1        ExistingEdges: (0,1) (1,2)          (deletions only: the published methods)
///       │        AllPairs:      (0,1) (0,2) (1,2)    (additions too: the "++" variants;
///       2                                             n(n−1)/2 pairs for n nodes)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Candidates {
    /// The existing edges of the neighbourhood: a mask can only delete.
    ExistingEdges,
    /// Every pair of neighbourhood nodes: the mask is the new adjacency, so it can delete and
    /// add.
    AllPairs,
}

/// The target's neighbourhood as a set of candidate pairs, each present (an edge now) or absent.
///
/// Local ids are [`Subgraph`] positions; explanations are mapped back to original ids.
pub struct MaskProblem<'a> {
    /// The h-hop neighbourhood.
    pub sub: Subgraph,
    /// The neighbourhood's features (local order).
    pub features: Features,
    /// Candidate pairs `(u, w)`, `u < w`, local ids, row-major order.
    pub pairs: Vec<(u32, u32)>,
    /// Whether each candidate pair is an edge of the neighbourhood.
    pub present: Vec<bool>,
    /// The black box's label for the target on the unedited graph (with
    /// [`Verdict::Neighbourhood`]: on the unedited neighbourhood).
    pub original_label: usize,
    /// The verdicts on a choice of pairs (interior mutability: [`MaskProblem::label`] takes
    /// `&self`).
    judge: Mutex<Judge<'a>>,
}

impl std::fmt::Debug for MaskProblem<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaskProblem")
            .field("target", &self.sub.target)
            .field("nodes", &self.sub.num_nodes())
            .field("pairs", &self.pairs.len())
            .finish_non_exhaustive()
    }
}

/// The radius a baseline configured with `hops` searches: with [`Verdict::Exact`] at least the
/// black box's receptive field (`L + 1` hops for `L` message-passing layers), so that the
/// gradients too see the model's prediction on the graph; `hops` otherwise.
///
/// ```
/// # use induce_baselines::neighbourhood::search_hops;
/// # use induce_explain::Verdict;
/// # use induce_models::{GcnBlackBox, GcnConfig};
/// # let dev = induce_models::device::default_device().unwrap();
/// let gcn = GcnBlackBox::new(GcnConfig::new(1, 2).init(&dev), &dev); // 3 layers
/// assert_eq!(search_hops(&gcn, 2, Verdict::Exact), 4);
/// assert_eq!(search_hops(&gcn, 2, Verdict::Neighbourhood), 2);
/// assert_eq!(search_hops(&gcn, 5, Verdict::Exact), 5);
/// ```
pub fn search_hops(black_box: &dyn BlackBox, hops: u32, verdict: Verdict) -> u32 {
    match (verdict, black_box.message_passing_layers()) {
        (Verdict::Exact, Some(l)) => hops.max(l + 1),
        _ => hops,
    }
}

/// What a mask baseline asks its questions with: the black box, the radius it was configured
/// with and the run's verdicts. Each mask baseline holds one and builds every target's
/// [`MaskProblem`] from it.
#[derive(Clone, Copy)]
pub(crate) struct MaskScope<'a> {
    pub(crate) black_box: &'a dyn BlackBox,
    hops: u32,
    verdict: Verdict,
}

impl<'a> MaskScope<'a> {
    /// The scope of a baseline configured with `hops` under the run's `verdict`.
    pub(crate) fn new(black_box: &'a dyn BlackBox, hops: u32, verdict: Verdict) -> Self {
        Self {
            black_box,
            hops,
            verdict,
        }
    }

    /// The radius searched ([`search_hops`]): the baselines' `Explainer::neighbourhood_hops`.
    pub(crate) fn search_hops(&self) -> u32 {
        search_hops(self.black_box, self.hops, self.verdict)
    }

    /// [`MaskProblem::new`] for `target` of `graph`.
    pub(crate) fn problem(
        &self,
        graph: &'a Graph,
        target: u32,
        candidates: Candidates,
        max_pairs: usize,
    ) -> Result<MaskProblem<'a>> {
        MaskProblem::new(
            graph,
            self.black_box,
            target,
            self.hops,
            candidates,
            max_pairs,
            self.verdict,
        )
    }

    /// [`MaskProblem::existing_edges`] for `target` of `graph`.
    pub(crate) fn existing_edges(&self, graph: &'a Graph, target: u32) -> Result<MaskProblem<'a>> {
        self.problem(graph, target, Candidates::ExistingEdges, usize::MAX)
    }
}

/// Refuses `iterations = 0` for `method`, whose every iteration is one `step`.
pub(crate) fn check_iterations(method: &str, iterations: usize, step: &str) -> Result<()> {
    match iterations {
        0 => Err(ExplainError::InvalidConfig(format!(
            "{method}: iterations = 0: at least one {step} is needed"
        ))),
        _ => Ok(()),
    }
}

/// The smallest flipping mask seen so far in a search over masks (ties keep the first).
#[derive(Debug, Default)]
pub(crate) struct Smallest(Option<(usize, Vec<bool>, usize)>);

impl Smallest {
    /// Whether a flip of `size` edits would be kept (smaller than the best so far).
    pub(crate) fn would_keep(&self, size: usize) -> bool {
        self.0.as_ref().is_none_or(|b| size < b.0)
    }

    /// Offers the mask `keep` of `size` edits that gives the target `label`; kept when it
    /// flips the target and is smaller than the best so far.
    pub(crate) fn offer(&mut self, p: &MaskProblem<'_>, keep: &[bool], size: usize, label: usize) {
        if label != p.original_label && self.would_keep(size) {
            self.0 = Some((size, keep.to_vec(), label));
        }
    }

    /// The explanation of the smallest flip, or [`MaskProblem::not_found`].
    pub(crate) fn explanation(self, p: &MaskProblem<'_>) -> Explanation {
        match self.0 {
            Some((_, keep, label)) => p.explanation(&keep, label),
            None => p.not_found(),
        }
    }
}

impl<'a> MaskProblem<'a> {
    /// Extracts `target`'s `hops`-hop neighbourhood of `graph` and its candidate pairs. The
    /// black box's verdict on a choice of pairs is taken where `verdict` says: with
    /// [`Verdict::Exact`] (the model on the whole edited graph) a neighbourhood smaller than the
    /// black box's receptive field (`L + 1` hops for `L` message-passing layers) is widened to
    /// it, so that the gradients too see the model's prediction.
    ///
    /// Errors: the target is out of range; [`ExplainError::NoCandidate`] when there is nothing
    /// to edit (no edge for [`Candidates::ExistingEdges`], a single node for
    /// [`Candidates::AllPairs`]); [`ExplainError::InvalidConfig`] when all pairs would exceed
    /// `max_pairs`.
    pub fn new(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        target: u32,
        hops: u32,
        candidates: Candidates,
        max_pairs: usize,
        verdict: Verdict,
    ) -> Result<Self> {
        if target as usize >= graph.num_nodes() {
            return Err(ExplainError::TargetOutOfRange {
                target,
                num_nodes: graph.num_nodes(),
            });
        }
        if graph.features().dim() != black_box.input_dim() {
            return Err(ExplainError::FeatureDimension {
                expected: black_box.input_dim(),
                got: graph.features().dim(),
            });
        }
        let hops = search_hops(black_box, hops, verdict);
        let sub = k_hop(graph, target, hops)?;
        let n = sub.num_nodes();
        let (pairs, present) = match candidates {
            Candidates::ExistingEdges => (sub.edges.clone(), vec![true; sub.num_edges()]),
            Candidates::AllPairs => {
                let total = n * n.saturating_sub(1) / 2;
                if total > max_pairs {
                    return Err(ExplainError::InvalidConfig(format!(
                        "target {target}: its {hops}-hop neighbourhood has {n} nodes, \
                         {total} candidate pairs, more than max_pairs = {max_pairs}"
                    )));
                }
                let mut pairs = Vec::with_capacity(total);
                let mut present = Vec::with_capacity(total);
                let mut k = 0;
                for u in 0..n as u32 {
                    for w in u + 1..n as u32 {
                        pairs.push((u, w));
                        let is_edge = sub.edges.get(k) == Some(&(u, w));
                        k += is_edge as usize;
                        present.push(is_edge);
                    }
                }
                (pairs, present)
            }
        };
        if pairs.is_empty() {
            return Err(ExplainError::NoCandidate { target });
        }
        let features = sub.features(graph);
        let judge = match verdict {
            Verdict::Exact => Judge::new(graph, black_box, target, &sub.nodes, verdict)?,
            Verdict::Neighbourhood => Judge::frozen(graph, black_box, &sub)?,
        };
        let original_label = judge.label();
        Ok(Self {
            sub,
            features,
            pairs,
            present,
            original_label,
            judge: Mutex::new(judge),
        })
    }

    /// [`MaskProblem::new`] over the existing edges only (the deletion-only methods).
    pub fn existing_edges(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        target: u32,
        hops: u32,
        verdict: Verdict,
    ) -> Result<Self> {
        Self::new(
            graph,
            black_box,
            target,
            hops,
            Candidates::ExistingEdges,
            usize::MAX,
            verdict,
        )
    }

    /// Local id of the target.
    pub fn target_local(&self) -> usize {
        self.sub.target_local
    }

    /// The black box's log-probabilities when exactly the pairs chosen by `keep` are edges of
    /// the neighbourhood (and the rest of the graph is unedited): one row per node of the
    /// judged set, the neighbourhood's `n` nodes first ([`Judge::nodes`]).
    ///
    /// # Shapes
    /// - keep: `[pairs]`
    /// - output: `[m, C]`, `m ≥ n`
    pub fn log_probs(&self, keep: &[bool]) -> Result<LogProbs> {
        let mut judge = self.judge.lock().unwrap_or_else(|e| e.into_inner());
        judge.set_edits(&self.edits(keep))?;
        Ok(judge.log_probs().clone())
    }

    /// The black box's label for the target when exactly the pairs chosen by `keep` are edges.
    pub fn label(&self, keep: &[bool]) -> Result<usize> {
        let mut judge = self.judge.lock().unwrap_or_else(|e| e.into_inner());
        judge.label_with(&self.edits(keep))
    }

    /// The edits that turn the neighbourhood into `keep`, in original ids (pair order).
    fn edits(&self, keep: &[bool]) -> Vec<Edit> {
        let t = self.sub.target;
        self.pairs
            .iter()
            .zip(keep.iter().zip(&self.present))
            .filter(|(_, (k, p))| k != p)
            .map(|(&(u, w), (&k, _))| {
                let (gu, gw) = (
                    self.sub.global_of(u as usize),
                    self.sub.global_of(w as usize),
                );
                match k {
                    false => Edit::delete(gu, gw),
                    true if gw == t => Edit::add(gw, gu),
                    true => Edit::add(gu, gw),
                }
            })
            .collect()
    }

    /// Number of pairs whose state `keep` changes.
    pub fn distance(&self, keep: &[bool]) -> usize {
        keep.iter()
            .zip(&self.present)
            .filter(|(a, b)| a != b)
            .count()
    }

    /// The explanation that turns the neighbourhood into `keep` (edits in original ids, in pair
    /// order; deletions as `(u, w)` with `u < w`, additions with the target first when it is an
    /// endpoint).
    pub fn explanation(&self, keep: &[bool], new_label: usize) -> Explanation {
        Explanation::counterfactual(
            self.sub.target,
            self.original_label,
            new_label,
            self.edits(keep),
        )
    }

    /// The explanation that turns the neighbourhood into `keep`, judged by the black box
    /// (found when the target's label flips).
    pub fn judged(&self, keep: &[bool]) -> Result<Explanation> {
        Ok(self.explanation(keep, self.label(keep)?))
    }

    /// The explanation of a target for which nothing was found.
    pub fn not_found(&self) -> Explanation {
        let y = self.original_label;
        Explanation::counterfactual(self.sub.target, y, y, Vec::new())
    }

    /// The neighbourhood bound to `model`, for gradients with respect to a soft mask over the
    /// candidate pairs.
    pub fn differentiable<'m>(&self, model: &'m GradModel) -> Result<SoftNeighbourhood<'m>> {
        model.bind(&self.features, &self.pairs, self.target_local())
    }
}

/// The logistic function.
pub(crate) fn sigmoid(v: f32) -> f32 {
    1.0 / (1.0 + (-v).exp())
}

/// A per-target seed: the configured seed mixed with the target id, so results depend neither on
/// the order targets are explained in nor on the number of threads.
pub(crate) fn target_seed(seed: u64, target: u32) -> u64 {
    seed ^ (target as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[cfg(test)]
mod tests {
    use super::fixtures::DegreeAtLeast;
    use super::*;
    use induce_graph::Features;

    #[test]
    fn pairs_states_and_explanations() {
        //  0 ─ 1 ─ 2   3 ─ 4 (other component)
        let g = Graph::from_edges(
            5,
            &[(0, 1), (1, 2), (3, 4)],
            Features::constant(5, 1, 1.0),
            vec![0; 5],
        )
        .unwrap();
        let p = MaskProblem::new(
            &g,
            &DegreeAtLeast(2),
            1,
            2,
            Candidates::AllPairs,
            100,
            Verdict::Exact,
        )
        .unwrap();
        assert_eq!(p.pairs, vec![(0, 1), (0, 2), (1, 2)]);
        assert_eq!(p.present, vec![true, false, true]);
        assert_eq!(p.original_label, 1);
        // Delete (1, 2), add (0, 2): node 1 has degree 1 → class 0.
        let keep = [true, true, false];
        assert_eq!(p.label(&keep).unwrap(), 0);
        assert_eq!(p.distance(&keep), 2);
        let e = p.explanation(&keep, 0);
        assert!(e.found);
        assert_eq!(e.edits, vec![Edit::add(0, 2), Edit::delete(1, 2)]);
        let q = MaskProblem::new(
            &g,
            &DegreeAtLeast(2),
            1,
            2,
            Candidates::ExistingEdges,
            0,
            Verdict::Exact,
        )
        .unwrap();
        assert_eq!(q.pairs, vec![(0, 1), (1, 2)]);
        assert!(matches!(
            MaskProblem::new(
                &g,
                &DegreeAtLeast(2),
                1,
                2,
                Candidates::AllPairs,
                2,
                Verdict::Exact
            ),
            Err(ExplainError::InvalidConfig(_))
        ));
        let lonely = Graph::empty(Features::constant(2, 1, 1.0), vec![0; 2]).unwrap();
        assert!(matches!(
            MaskProblem::new(
                &lonely,
                &DegreeAtLeast(2),
                0,
                2,
                Candidates::ExistingEdges,
                9,
                Verdict::Exact
            ),
            Err(ExplainError::NoCandidate { target: 0 })
        ));
        assert!(matches!(
            MaskProblem::new(
                &g,
                &DegreeAtLeast(2),
                9,
                2,
                Candidates::ExistingEdges,
                9,
                Verdict::Exact
            ),
            Err(ExplainError::TargetOutOfRange { target: 9, .. })
        ));
    }
}

/// Tiny hand-made models shared by the baselines' unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use burn::module::Param;
    use burn::tensor::{Device, Tensor, TensorData};
    use induce_graph::{Features, Graph};
    use induce_models::{Gcn, GcnConfig};

    /// A black box of class 1 iff the node's degree is at least `.0`.
    pub(crate) use induce_models::testing::DegreeAtLeast;

    fn p2(v: &[f32], r: usize, c: usize, d: &Device) -> Param<Tensor<2>> {
        Param::from_tensor(Tensor::from_data(TensorData::new(v.to_vec(), [r, c]), d))
    }
    fn p1(v: &[f32], d: &Device) -> Param<Tensor<1>> {
        Param::from_tensor(Tensor::from_data(TensorData::new(v.to_vec(), [v.len()]), d))
    }

    /// A one-feature GCN (hidden width 1) that predicts class 1 iff the first convolution's
    /// output `relu(Â x)` exceeds 0.3: a node is class 1 when a neighbour carrying feature 1
    /// is close enough.
    pub(crate) fn beacon_gcn(d: &Device) -> Gcn {
        let mut m = GcnConfig::new(1, 2).with_hidden(1).init(d);
        m.gc1.weight = p2(&[1.0], 1, 1, d);
        m.gc1.bias = p1(&[0.0], d);
        for c in [&mut m.gc2, &mut m.gc3] {
            c.weight = p2(&[0.0], 1, 1, d);
            c.bias = p1(&[0.0], d);
        }
        m.lin.weight = p2(&[0.0, 10.0, 0.0, 0.0, 0.0, 0.0], 3, 2, d);
        m.lin.bias = Some(p1(&[0.0, -3.0], d));
        m
    }

    /// `edges` over 4 nodes; node 1 is the beacon (feature 1), the others carry 0.
    ///
    /// ```text
    ///   beacon 1     with [(0, 1), (0, 2), (2, 3)]: node 0 sees the beacon → class 1;
    ///          │     deleting (0, 1) is its only one-edit counterfactual.
    ///     3 ─ 2 ─ 0
    /// ```
    pub(crate) fn beacon_graph(edges: &[(u32, u32)]) -> Graph {
        let x = Features::new(4, 1, vec![0.0, 1.0, 0.0, 0.0]).unwrap();
        Graph::from_edges(4, edges, x, vec![1, 0, 0, 0]).unwrap()
    }
}
