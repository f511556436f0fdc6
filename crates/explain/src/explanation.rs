//! The interface every explainer implements (InduCE, and the baselines) and the explanation it
//! returns.

use induce_graph::Graph;
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// The type of an edge edit.
///
/// Serialised as `"add"` / `"del"`.
///
/// ```
/// use induce_explain::EditKind;
/// assert_eq!(serde_json::to_string(&EditKind::Delete).unwrap(), "\"del\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EditKind {
    /// The edge `(u, w)` was added.
    #[serde(rename = "add")]
    Add,
    /// The edge `(u, w)` was deleted.
    #[serde(rename = "del")]
    Delete,
}

/// One edge edit `(u, w)` in ORIGINAL (whole-graph) node ids.
///
/// For an InduCE addition `u` is the target; for a deletion `u < w`. Serialised as the
/// triple `[u, w, "add" | "del"]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "(u32, u32, EditKind)", into = "(u32, u32, EditKind)")]
pub struct Edit {
    /// First endpoint (original id).
    pub u: u32,
    /// Second endpoint (original id).
    pub w: u32,
    /// Addition or deletion.
    pub kind: EditKind,
}

impl From<(u32, u32, EditKind)> for Edit {
    fn from((u, w, kind): (u32, u32, EditKind)) -> Self {
        Self { u, w, kind }
    }
}

impl From<Edit> for (u32, u32, EditKind) {
    fn from(e: Edit) -> Self {
        (e.u, e.w, e.kind)
    }
}

/// `add (u, w)` or `del (u, w)`.
///
/// ```
/// use induce_explain::Edit;
/// assert_eq!(Edit::delete(2, 3).to_string(), "del (2, 3)");
/// ```
impl std::fmt::Display for Edit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            EditKind::Add => "add",
            EditKind::Delete => "del",
        };
        write!(f, "{kind} ({}, {})", self.u, self.w)
    }
}

impl Edit {
    /// An addition of `(u, w)`.
    pub fn add(u: u32, w: u32) -> Self {
        Self {
            u,
            w,
            kind: EditKind::Add,
        }
    }

    /// A deletion of `(u, w)`.
    pub fn delete(u: u32, w: u32) -> Self {
        Self {
            u,
            w,
            kind: EditKind::Delete,
        }
    }
}

/// One feature edit: entry `feature` of node `node`'s feature row changed from `old` to `new`
/// (original node ids). Serialised as `[node, feature, old, new]`.
///
/// ```
/// use induce_explain::FeatureEdit;
/// let e = FeatureEdit { node: 7, feature: 12, old: 0.0, new: 1.0 };
/// assert_eq!(serde_json::to_string(&e).unwrap(), "[7,12,0.0,1.0]");
/// assert_eq!(e.to_string(), "feat (7, 12): 0 -> 1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "(u32, u32, f32, f32)", into = "(u32, u32, f32, f32)")]
pub struct FeatureEdit {
    /// The node whose row changes (original id).
    pub node: u32,
    /// The feature's index.
    pub feature: u32,
    /// Its value before.
    pub old: f32,
    /// Its value after.
    pub new: f32,
}

impl Eq for FeatureEdit {}

impl From<(u32, u32, f32, f32)> for FeatureEdit {
    fn from((node, feature, old, new): (u32, u32, f32, f32)) -> Self {
        Self {
            node,
            feature,
            old,
            new,
        }
    }
}

impl From<FeatureEdit> for (u32, u32, f32, f32) {
    fn from(e: FeatureEdit) -> Self {
        (e.node, e.feature, e.old, e.new)
    }
}

impl std::fmt::Display for FeatureEdit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "feat ({}, {}): {} -> {}",
            self.node, self.feature, self.old, self.new
        )
    }
}

/// The outcome of explaining one target node.
///
/// When `found` is true, applying `edits` to the graph changes the black box's prediction for
/// `target` from `original_label` to `new_label`: the edits are a counterfactual explanation.
/// When `found` is false, `edits` may list what the method tried (it is not a counterfactual)
/// and `new_label == original_label`; the metrics ignore the edits of such explanations, and a
/// run's records (`explanations.jsonl`) list none.
///
/// ```
/// use induce_explain::{Edit, Explanation};
/// let e = Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 7, found: true, original_label: 1, new_label: 0,
///     edits: vec![Edit::delete(3, 7)] };
/// let json = serde_json::to_string(&e).unwrap();
/// assert_eq!(json, concat!(r#"{"target":7,"found":true,"original_label":1,"new_label":0,"#,
///     r#""edits":[[3,7,"del"]]}"#));
/// assert_eq!(serde_json::from_str::<Explanation>(&json).unwrap(), e);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Explanation {
    /// The explained node (original id).
    pub target: u32,
    /// True when a counterfactual was found (the prediction flipped).
    pub found: bool,
    /// The black box's prediction for the target before any edit.
    pub original_label: usize,
    /// The prediction after the edits (equal to `original_label` when not found).
    pub new_label: usize,
    /// The edits, in the order they were made, in original node ids.
    pub edits: Vec<Edit>,
    /// The feature edits (`--edits feat`), in the order they were made; reported apart from
    /// the edge edits, never summed with them. Empty (and absent from the record) for an
    /// edge-only explanation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub feature_edits: Vec<FeatureEdit>,
    /// Black-box evaluations the method spent on this target (its oracle-call cost: every
    /// verdict, incremental or whole, and every forward pass of a gradient step counts one),
    /// not counting the pipeline's own checks of the result. `None` when not counted (files
    /// written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluations: Option<u64>,
    /// What an exhaustive search proved about the minimum size of a counterfactual of this
    /// target in its action space (`exact`); `None` for the other methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certified: Option<Certified>,
}

/// What an exhaustive search (`exact`) proved about a target's smallest counterfactual in its
/// action space.
///
/// ```
/// use induce_explain::Certified;
/// let c = Certified::Minimum { size: 2 };
/// assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"minimum":{"size":2}}"#);
/// assert_eq!(c.to_string(), "minimum = 2");
/// assert_eq!(Certified::NoneUpTo { size: 3 }.to_string(), "none of size <= 3");
/// let g = Certified::GaveUp { evaluations: 1000, none_up_to: 1 };
/// assert_eq!(g.to_string(), "gave up after 1000 evaluations (none of size <= 1)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Certified {
    /// The explanation's size is the minimum: every smaller edit set was tried and none flips.
    Minimum {
        /// The minimum size.
        size: usize,
    },
    /// Every edit set of at most `size` edits was tried and none flips.
    NoneUpTo {
        /// The largest size searched completely.
        size: usize,
    },
    /// The evaluation budget ran out before the search ended.
    GaveUp {
        /// Evaluations spent.
        evaluations: u64,
        /// The largest size searched completely (0: not even the single edits).
        none_up_to: usize,
    },
}

impl std::fmt::Display for Certified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Certified::Minimum { size } => write!(f, "minimum = {size}"),
            Certified::NoneUpTo { size } => write!(f, "none of size <= {size}"),
            Certified::GaveUp {
                evaluations,
                none_up_to,
            } => write!(
                f,
                "gave up after {evaluations} evaluations (none of size <= {none_up_to})"
            ),
        }
    }
}

impl Explanation {
    /// The explanation of `target` whose `edits` move its label from `original_label` to
    /// `new_label`: found when the two differ (a run with a desired class sets `found` by
    /// [`Goal::reached`](crate::Goal::reached)); no evaluation count or certificate.
    ///
    /// ```
    /// use induce_explain::{Edit, Explanation};
    /// let e = Explanation::counterfactual(3, 1, 0, vec![Edit::delete(3, 4)]);
    /// assert!(e.found && e.size() == 1 && e.evaluations.is_none());
    /// assert!(!Explanation::counterfactual(3, 1, 1, vec![]).found);
    /// ```
    pub fn counterfactual(
        target: u32,
        original_label: usize,
        new_label: usize,
        edits: Vec<Edit>,
    ) -> Self {
        Self {
            evaluations: None,
            certified: None,
            target,
            found: new_label != original_label,
            original_label,
            new_label,
            edits,
            feature_edits: Vec::new(),
        }
    }

    /// Number of edge edits (the feature edits are counted apart:
    /// [`Explanation::features_changed`]).
    pub fn size(&self) -> usize {
        self.edits.len()
    }

    /// Number of feature entries changed.
    pub fn features_changed(&self) -> usize {
        self.feature_edits.len()
    }
}

/// A counterfactual explainer: InduCE (inductive or transductive), CF-GNNExplainer, random
/// edits, ... Each explains one target at a time against its own black box.
///
/// `explain` takes `&self` and explainers are `Send + Sync`, so the pipeline
/// ([`crate::pipeline::explain_targets`]) explains independent targets on all cores. An
/// explainer whose result depends on randomness derives its seed from its configuration and the
/// target id, never from call order, so results do not depend on the number of threads.
///
/// ```
/// use induce_explain::{Edit, Explainer, Explanation, Result};
/// use induce_graph::{Features, Graph};
///
/// /// Deletes the edge to the target's lowest neighbour and claims a flip (a toy: no black box).
/// struct FirstEdge;
/// impl Explainer for FirstEdge {
///     fn name(&self) -> &str { "first-edge" }
///     fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation> {
///         let w = graph.neighbors(target).min().expect("an edge");
///         let edits = vec![Edit::delete(target.min(w), target.max(w))];
///         Ok(Explanation::counterfactual(target, 1, 0, edits))
///     }
/// }
/// //  0 ─ 1 ─ 2
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], Features::constant(3, 1, 1.0), vec![0; 3])
///     .unwrap();
/// assert_eq!(FirstEdge.explain(&g, 1).unwrap().edits, vec![Edit::delete(0, 1)]);
/// ```
pub trait Explainer: Send + Sync {
    /// Short method name used in reports (`"inductive"`, `"random"`, ...).
    fn name(&self) -> &str;

    /// Explains `target` (original id) of `graph`.
    fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation>;

    /// How many targets [`Explainer::explain_batch`] is best given at once: 1 (the default)
    /// for explainers that gain nothing from batching, so the pipeline hands each target to
    /// its own thread instead.
    fn batch_size(&self) -> usize {
        1
    }

    /// The radius, in hops, of the neighbourhood this explainer edits within when it is not
    /// the evaluation context's ([`crate::pipeline::EvalContext::radius`]): a baseline searches
    /// its own, widened to the black box's receptive field. The pipeline takes each record's
    /// sparsity and 1-minimality on it. `None` (the default): the context's radius.
    fn neighbourhood_hops(&self) -> Option<u32> {
        None
    }

    /// Explains several targets, results in their order, each equal to [`Explainer::explain`]
    /// of its target. The default explains them one after the other; an explainer that batches
    /// (InduCE on the Burn kernel: one block-diagonal forward pass per step for all targets)
    /// overrides it and uses up to `threads` host threads.
    fn explain_batch(
        &self,
        graph: &Graph,
        targets: &[u32],
        threads: usize,
    ) -> Vec<Result<Explanation>> {
        let _ = threads;
        targets.iter().map(|&t| self.explain(graph, t)).collect()
    }
}
