//! Feature actions (`--edits …,feat`): new values for feature entries, on the target's own row
//! or on every node of its receptive field ([`FeatureNodes`]): a flip of a 0/1 column's entry,
//! or one of a continuous column's quantiles ([`FeatureValues`], the rule); and the feature rows
//! a set of edits gives. The searches (`induce-baselines`) and InduCE's environment
//! (`induce-rl`) draw their feature actions from here.
//!
//! ```text
//!   target t, L = 2:   field = the nodes within 2 hops of t in the unedited graph
//!   x_v = [0 1 0 0 1]  → actions (v, 0), (v, 2), (v, 3) set a 0 to 1; (v, 1), (v, 4) a 1 to 0
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use induce_graph::{Features, Graph, k_hop};
use serde::{Deserialize, Serialize};

use crate::{ExplainError, FeatureEdit, Result};

/// Whose features a search may flip (`--feature-nodes`).
///
/// Serialised as `"target"` / `"field"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeatureNodes {
    /// The target's own row (the default).
    #[default]
    Target,
    /// Every node within the black box's `L` message-passing hops of the target in the unedited
    /// graph (a feature there reaches the target's output): `field × features` actions.
    Field,
}

impl std::str::FromStr for FeatureNodes {
    type Err = ExplainError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "target" => Ok(FeatureNodes::Target),
            "field" => Ok(FeatureNodes::Field),
            other => Err(ExplainError::InvalidValue {
                what: "feature-nodes",
                value: other.into(),
                reason: "expected target or field".into(),
            }),
        }
    }
}

impl std::fmt::Display for FeatureNodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FeatureNodes::Target => "target",
            FeatureNodes::Field => "field",
        })
    }
}

/// Quantile levels of a continuous column's candidate values by default
/// (`--feature-quantiles`): 3, the column's minimum, median and maximum.
///
/// Measured (`docs/RESULTS.md`, "Continuous features"): on a GCN over 128 continuous features,
/// greedy and exact find the same counterfactuals with 2, 3, 5 and 9 levels (every chosen value
/// is the column's minimum or maximum), at evaluations in proportion to the levels. The median
/// stays for models whose output is not monotone in a feature.
pub const DEFAULT_FEATURE_QUANTILES: usize = 3;

/// One feature action of a search: set entry `(node, feature)` to `value`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeatureAction {
    /// The node whose row changes.
    pub node: u32,
    /// The column.
    pub feature: u32,
    /// The new value.
    pub value: f32,
}

impl FeatureAction {
    /// The entry it changes, `(node, feature)`.
    pub fn entry(&self) -> (u32, u32) {
        (self.node, self.feature)
    }

    /// The edit it makes on `graph`'s features (recording the entry's old value).
    pub fn edit(&self, graph: &Graph) -> FeatureEdit {
        FeatureEdit {
            node: self.node,
            feature: self.feature,
            old: graph.features().row(self.node as usize)[self.feature as usize],
            new: self.value,
        }
    }
}

/// The values one column's entries may be set to (see [`FeatureValues`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnValues {
    /// Every entry of the column over the graph is 0 or 1: an entry flips (`x → 1 − x`).
    Binary,
    /// Any other column: its quantiles over the graph, deduplicated, ascending; an entry may
    /// take any of them but its own value.
    Levels(Vec<f32>),
}

/// The candidate values of every column of a graph's features: the rule by which the searches
/// edit features.
///
/// - A column whose entries over the whole graph are all 0 or 1 (a bag of words) is *binary*:
///   the one action on an entry flips it.
/// - Any other column is *continuous*: its candidates are the column's values at `K` evenly
///   spaced quantile levels `k / (K − 1)`, `k = 0..K` (nearest rank, so each is a value some
///   node really has), deduplicated. `K = 3` (the default) gives the minimum, the median and
///   the maximum; `K = 5` adds the quartiles. An entry may take any candidate but its own
///   value, so a continuous entry has at most `K` actions. A sparse column collapses to few
///   levels (mostly 0, then its upper quantiles).
///
/// ```text
///   column j over 5 nodes: [0.1, 0.9, 0.4, 0.4, 2.0]  (not 0/1: continuous)
///   K = 3 → levels 0, ½, 1 → sorted [0.1, 0.4, 0.4, 0.9, 2.0] at ranks 0, 2, 4 → {0.1, 0.4, 2.0}
///   entry 0.4 → actions to 0.1 and to 2.0
/// ```
///
/// ```
/// use induce_explain::features::{ColumnValues, FeatureValues};
/// use induce_graph::Features;
/// let x = Features::new(5, 2, vec![0.1, 1.0, 0.9, 0.0, 0.4, 1.0, 0.4, 0.0, 2.0, 1.0]).unwrap();
/// let v = FeatureValues::of(&x, 3).unwrap();
/// assert_eq!(v.column(0), &ColumnValues::Levels(vec![0.1, 0.4, 2.0]));
/// assert_eq!(v.column(1), &ColumnValues::Binary);
/// assert_eq!(v.candidates(0, 0.4).collect::<Vec<_>>(), [0.1, 2.0]);
/// assert_eq!(v.candidates(1, 1.0).collect::<Vec<_>>(), [0.0]);
/// assert!(FeatureValues::of(&x, 1).is_err()); // one level cannot span a column
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureValues {
    columns: Vec<ColumnValues>,
}

impl FeatureValues {
    /// The candidates of `features`' columns with `levels` quantile levels (`K ≥ 2`).
    ///
    /// Cost: one sort per continuous column, `O(n log n · d)`; a binary column is one scan.
    pub fn of(features: &Features, levels: usize) -> Result<Self> {
        if levels < 2 {
            return Err(ExplainError::InvalidValue {
                what: "feature-quantiles",
                value: levels.to_string(),
                reason: "at least 2 quantile levels (the minimum and the maximum) are needed"
                    .into(),
            });
        }
        let (n, d) = (features.num_nodes(), features.dim());
        let x = features.as_slice();
        let mut column = Vec::with_capacity(n);
        let columns = (0..d)
            .map(|j| {
                column.clear();
                column.extend((0..n).map(|i| x[i * d + j]));
                if column.iter().all(|&v| v == 0.0 || v == 1.0) {
                    return ColumnValues::Binary;
                }
                column.sort_unstable_by(f32::total_cmp);
                let mut values: Vec<f32> = (0..levels)
                    .map(|k| column[(k * (n - 1) + (levels - 1) / 2) / (levels - 1)])
                    .collect();
                values.dedup();
                ColumnValues::Levels(values)
            })
            .collect();
        Ok(Self { columns })
    }

    /// Column `feature`'s candidates.
    pub fn column(&self, feature: u32) -> &ColumnValues {
        &self.columns[feature as usize]
    }

    /// The values an entry of column `feature` now holding `current` may be set to: its flip
    /// (a binary column), or every level but `current` (a continuous one).
    pub fn candidates(&self, feature: u32, current: f32) -> impl Iterator<Item = f32> + '_ {
        let (flip, levels): (Option<f32>, &[f32]) = match self.column(feature) {
            ColumnValues::Binary => (Some(1.0 - current), &[]),
            ColumnValues::Levels(v) => (None, v),
        };
        flip.into_iter()
            .chain(levels.iter().copied().filter(move |&v| v != current))
    }
}

/// [`FeatureValues`] kept for the last features they were asked of (keyed by
/// [`Features::id`] and the level count): a search computes them once per graph, not once per
/// target.
#[derive(Debug, Default)]
pub struct FeatureValuesCache {
    cached: Mutex<Option<(u64, usize, Arc<FeatureValues>)>>,
}

impl FeatureValuesCache {
    /// An empty cache (usable in a `static`).
    pub const fn new() -> Self {
        Self {
            cached: Mutex::new(None),
        }
    }

    /// The candidates of `features` with `levels` quantile levels, computed once per
    /// features and level count.
    pub fn of(&self, features: &Features, levels: usize) -> Result<Arc<FeatureValues>> {
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((id, k, v)) = cached.as_ref()
            && (*id, *k) == (features.id(), levels)
        {
            return Ok(v.clone());
        }
        let v = Arc::new(FeatureValues::of(features, levels)?);
        *cached = Some((features.id(), levels, v.clone()));
        Ok(v)
    }
}

/// What a search's feature actions are made of ([`feature_actions`]): whose rows
/// ([`FeatureNodes`]), the columns that may not change, and each column's candidate values.
#[derive(Debug, Clone, Copy)]
pub struct FeatureScope<'a> {
    /// Whose rows may change.
    pub nodes: FeatureNodes,
    /// Columns no action may change.
    pub locked: &'a [u32],
    /// The candidate values of every column.
    pub values: &'a FeatureValues,
}

/// The feature actions of a search of `target`: for every row [`FeatureNodes`] names and every
/// column not `locked`, one action per candidate value ([`FeatureValues::candidates`]); nodes
/// ascending, then columns, then values.
///
/// Errors: a locked column outside the features; [`FeatureNodes::Field`] with a black box whose
/// receptive field is unknown (`layers` `None`).
///
/// ```
/// use induce_explain::features::{FeatureAction, FeatureNodes, FeatureScope, FeatureValues};
/// use induce_explain::features::feature_actions;
/// use induce_graph::{Features, Graph};
/// //  0 ─ 1 ─ 2      column 0 is binary, column 1 continuous (values 0, 0.5, 1)
/// let x = Features::new(3, 2, vec![0.0, 1.0, 0.0, 0.5, 1.0, 0.0]).unwrap();
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], x, vec![0; 3]).unwrap();
/// let values = FeatureValues::of(g.features(), 3).unwrap();
/// let scope = |nodes, locked| FeatureScope { nodes, locked, values: &values };
/// let own = feature_actions(&g, 0, Some(1), scope(FeatureNodes::Target, &[])).unwrap();
/// let at = |node, feature, value| FeatureAction { node, feature, value };
/// assert_eq!(own, [at(0, 0, 1.0), at(0, 1, 0.0), at(0, 1, 0.5)]);
/// let field = feature_actions(&g, 0, Some(1), scope(FeatureNodes::Field, &[1])).unwrap();
/// assert_eq!(field, [at(0, 0, 1.0), at(1, 0, 1.0)]); // column 1 locked; node 2 is 2 hops away
/// assert!(feature_actions(&g, 0, Some(1), scope(FeatureNodes::Target, &[2])).is_err());
/// ```
pub fn feature_actions(
    graph: &Graph,
    target: u32,
    layers: Option<u32>,
    scope: FeatureScope<'_>,
) -> Result<Vec<FeatureAction>> {
    check_locked(graph, scope.locked)?;
    let d = graph.features().dim() as u32;
    let mut out = Vec::new();
    for node in feature_rows(graph, target, layers, scope.nodes)? {
        let x = graph.features().row(node as usize);
        for feature in (0..d).filter(|f| !scope.locked.contains(f)) {
            let current = x[feature as usize];
            out.extend(
                (scope.values.candidates(feature, current)).map(|value| FeatureAction {
                    node,
                    feature,
                    value,
                }),
            );
        }
    }
    Ok(out)
}

/// The nodes whose rows a search of `target` may edit ([`FeatureNodes`]), ascending: the
/// target, or every node within the black box's `layers` hops of it in `graph`.
///
/// Errors: [`FeatureNodes::Field`] with `layers` `None` (a receptive field unknown).
pub fn feature_rows(
    graph: &Graph,
    target: u32,
    layers: Option<u32>,
    nodes: FeatureNodes,
) -> Result<Vec<u32>> {
    match nodes {
        FeatureNodes::Target => Ok(vec![target]),
        FeatureNodes::Field => {
            let Some(l) = layers else {
                return Err(ExplainError::InvalidConfig(
                    "feature edits on the receptive field (feature_nodes = field) need a black \
                     box whose message-passing layers are known"
                        .into(),
                ));
            };
            let mut ball = k_hop(graph, target, l)?.nodes;
            ball.sort_unstable();
            Ok(ball)
        }
    }
}

/// Errors unless every `locked` column is a column of `graph`'s features.
pub fn check_locked(graph: &Graph, locked: &[u32]) -> Result<()> {
    let d = graph.features().dim();
    match locked.iter().find(|&&f| f as usize >= d) {
        Some(f) => Err(ExplainError::InvalidConfig(format!(
            "locked feature {f} is not a column of the features ({d} columns)"
        ))),
        None => Ok(()),
    }
}

/// The feature rows `flips` give: each node they touch with its row of `graph`'s features,
/// every flip applied, nodes ascending.
pub fn edited_rows(graph: &Graph, flips: &[FeatureEdit]) -> Vec<(u32, Vec<f32>)> {
    let mut rows: BTreeMap<u32, Vec<f32>> = BTreeMap::new();
    for e in flips {
        rows.entry(e.node)
            .or_insert_with(|| graph.features().row(e.node as usize).to_vec())
            [e.feature as usize] = e.new;
    }
    rows.into_iter().collect()
}

/// Borrowed views of [`edited_rows`]' rows, as the black boxes' `…_rows` evaluations take them.
pub fn as_rows(rows: &[(u32, Vec<f32>)]) -> Vec<(u32, &[f32])> {
    rows.iter().map(|(v, r)| (*v, r.as_slice())).collect()
}
