//! The searches' feature settings (`--edits …,feat`); the feature actions themselves, their
//! candidate values and rows live in [`induce_explain::features`] (re-exported here), which
//! InduCE's environment shares.

pub use induce_explain::features::{
    ColumnValues, DEFAULT_FEATURE_QUANTILES, FeatureAction, FeatureNodes, FeatureScope,
    FeatureValues, FeatureValuesCache, as_rows, check_locked, edited_rows, feature_actions,
    feature_rows,
};

use induce_explain::Result;
use induce_graph::Graph;

/// Whether `n` is the default, [`FeatureNodes::Target`] (configurations leave it out of their
/// JSON then).
pub(crate) fn is_target(n: &FeatureNodes) -> bool {
    *n == FeatureNodes::Target
}

pub(crate) fn default_quantiles() -> usize {
    DEFAULT_FEATURE_QUANTILES
}

pub(crate) fn is_default_quantiles(k: &usize) -> bool {
    *k == DEFAULT_FEATURE_QUANTILES
}

/// A search's feature settings (the fields of [`GreedyConfig`](crate::GreedyConfig) and
/// [`ExactConfig`](crate::ExactConfig) of the same names).
pub(crate) struct FeatureSettings<'a> {
    pub features: bool,
    pub nodes: FeatureNodes,
    pub locked: &'a [u32],
    pub quantiles: usize,
}

/// The [`FeatureSettings`] of a configuration with the fields of the same names.
macro_rules! feature_settings {
    ($c:expr) => {
        $crate::features::FeatureSettings {
            features: $c.features,
            nodes: $c.feature_nodes,
            locked: &$c.locked_features,
            quantiles: $c.feature_quantiles,
        }
    };
}
pub(crate) use feature_settings;

/// [`feature_actions`] of a search (none without `features`); the candidate values come from
/// `cache`.
pub(crate) fn search_actions(
    graph: &Graph,
    target: u32,
    layers: Option<u32>,
    s: FeatureSettings<'_>,
    cache: &FeatureValuesCache,
) -> Result<Vec<FeatureAction>> {
    check_locked(graph, s.locked)?;
    if !s.features {
        return Ok(Vec::new());
    }
    let values = cache.of(graph.features(), s.quantiles)?;
    let scope = FeatureScope {
        nodes: s.nodes,
        locked: s.locked,
        values: &values,
    };
    feature_actions(graph, target, layers, scope)
}

/// Whether `actions` change some entry twice (a set no search judges: each entry takes one
/// new value).
pub(crate) fn repeats_an_entry<'a>(mut actions: impl Iterator<Item = &'a FeatureAction>) -> bool {
    let mut seen = Vec::new();
    actions.any(|a| {
        let twice = seen.contains(&a.entry());
        seen.push(a.entry());
        twice
    })
}
