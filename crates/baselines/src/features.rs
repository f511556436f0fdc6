//! Feature actions of the searches (`--edits …,feat`): flips of 0/1 feature entries, on the
//! target's own row or on every node of its receptive field ([`FeatureNodes`]), and the feature
//! rows a set of flips gives (what [`TargetOracle::row_with_rows`] judges).
//!
//! ```text
//!   target t, L = 2:   field = the nodes within 2 hops of t in the unedited graph
//!   x_v = [0 1 0 0 1]  → actions (v, 0), (v, 2), (v, 3) set a 0 to 1; (v, 1), (v, 4) a 1 to 0
//! ```
//!
//! [`TargetOracle::row_with_rows`]: crate::action_space::TargetOracle::row_with_rows

use std::collections::BTreeMap;

use induce_explain::{ExplainError, FeatureEdit, Result};
use induce_graph::{Graph, k_hop};
use serde::{Deserialize, Serialize};

use crate::action_space::TargetOracle;

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

/// Whether `n` is the default, [`FeatureNodes::Target`] (configurations leave it out of their
/// JSON then).
pub(crate) fn is_target(n: &FeatureNodes) -> bool {
    *n == FeatureNodes::Target
}

/// The feature actions `(node, column)` of a search of `target`: with `features`, every 0/1
/// entry of the rows [`FeatureNodes`] names whose column is not `locked`, nodes ascending, then
/// columns. Empty without `features`.
///
/// Errors: a locked column outside the features; [`FeatureNodes::Field`] with a black box whose
/// receptive field is unknown (`layers` `None`).
///
/// ```
/// use induce_baselines::features::{FeatureNodes, feature_actions};
/// use induce_graph::{Features, Graph};
/// //  0 ─ 1 ─ 2
/// let x = Features::new(3, 2, vec![0.0, 1.0, 0.5, 1.0, 1.0, 0.0]).unwrap();
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], x, vec![0; 3]).unwrap();
/// let own = feature_actions(&g, 0, Some(1), true, FeatureNodes::Target, &[]).unwrap();
/// assert_eq!(own, [(0, 0), (0, 1)]);
/// let field = feature_actions(&g, 0, Some(1), true, FeatureNodes::Field, &[0]).unwrap();
/// assert_eq!(field, [(0, 1), (1, 1)]); // node 1's 0.5 is not a 0/1 entry; column 0 locked
/// assert!(feature_actions(&g, 0, Some(1), true, FeatureNodes::Target, &[2]).is_err());
/// ```
pub fn feature_actions(
    graph: &Graph,
    target: u32,
    layers: Option<u32>,
    features: bool,
    nodes: FeatureNodes,
    locked: &[u32],
) -> Result<Vec<(u32, u32)>> {
    let d = graph.features().dim();
    if let Some(&f) = locked.iter().find(|&&f| f as usize >= d) {
        return Err(ExplainError::InvalidConfig(format!(
            "locked feature {f} is not a column of the features ({d} columns)"
        )));
    }
    if !features {
        return Ok(Vec::new());
    }
    let rows: Vec<u32> = match nodes {
        FeatureNodes::Target => vec![target],
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
            ball
        }
    };
    let mut out = Vec::new();
    for v in rows {
        let x = graph.features().row(v as usize);
        out.extend(
            (0..d as u32)
                .filter(|&f| matches!(x[f as usize], 0.0 | 1.0) && !locked.contains(&f))
                .map(|f| (v, f)),
        );
    }
    Ok(out)
}

/// [`feature_actions`] of a search whose verdicts `oracle` gives, refused (with the oracle's
/// typed error) when `features` is asked of an oracle that cannot judge a feature edit.
pub(crate) fn search_actions(
    graph: &Graph,
    target: u32,
    layers: Option<u32>,
    (features, nodes, locked): (bool, FeatureNodes, &[u32]),
    oracle: &mut TargetOracle<'_>,
) -> Result<Vec<(u32, u32)>> {
    let actions = feature_actions(graph, target, layers, features, nodes, locked)?;
    if features && !oracle.judges_features() {
        oracle.row_with_rows(&[], &[(target, graph.features().row(target as usize))])?;
    }
    Ok(actions)
}

/// The flip of entry `(node, feature)` of `graph`'s features (`old` → `1 − old`).
pub fn flip(graph: &Graph, (node, feature): (u32, u32)) -> FeatureEdit {
    let old = graph.features().row(node as usize)[feature as usize];
    FeatureEdit {
        node,
        feature,
        old,
        new: 1.0 - old,
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

/// Borrowed views of [`edited_rows`]' rows, as [`TargetOracle::row_with_rows`] takes them.
///
/// [`TargetOracle::row_with_rows`]: crate::action_space::TargetOracle::row_with_rows
pub fn as_rows(rows: &[(u32, Vec<f32>)]) -> Vec<(u32, &[f32])> {
    rows.iter().map(|(v, r)| (*v, r.as_slice())).collect()
}
