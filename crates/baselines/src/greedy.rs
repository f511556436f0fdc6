//! `greedy`: the exhaustive one-step search in InduCE's action space, the reference a learned
//! policy is measured against.
//!
//! At each step every remaining action ([`ActionSpace`]) that can reach the target
//! ([`Reach`]) is tried on top of the edits made so far, each judged by the black box's exact
//! verdict ([`TargetOracle`]); a flip ends the search with the most confident flip, otherwise the
//! action that leaves the original class the smallest lead (margin) is kept, for up to `budget`
//! edits.
//!
//! With [`GreedyConfig::shortlist`] `= K` it is the *bounded* greedy search: each step judges
//! only the `K` actions a first-order estimate ranks first (one gradient of the black box per
//! step, `crate::shortlist`), for graphs where judging every action costs too much. It is then a
//! reference bounded by `K`, not the exhaustive one.

use induce_explain::{
    Edit, ExplainError, Explainer, Explanation, FeatureEdit, Goal, Locked, Protocol, Result,
    Verdict, minimise,
};
use induce_graph::Graph;
use induce_models::BlackBox;
use serde::{Deserialize, Serialize};

use crate::action_space::{
    ActionSpace, Additions, GraphPredictions, Reach, RowsTrial, TargetOracle, argmax,
};
use crate::features::{
    FeatureAction, FeatureNodes, FeatureValuesCache, as_rows, edited_rows, feature_settings,
    search_actions,
};
use crate::neighbourhood::GradModel;
use crate::neighbourhood::search_hops;
use crate::shortlist::{FirstOrder, shortlist};
use burn::tensor::Device;
use induce_models::Kernel;
use std::sync::OnceLock;

/// Settings of [`GreedyExplainer`].
///
/// ```
/// use induce_baselines::{Additions, GreedyConfig};
/// use induce_explain::Protocol;
/// let c = GreedyConfig::default();
/// assert_eq!((c.hops, c.budget), (4, 15));
/// assert!(c.validate(Protocol::exact(4)).is_ok());
/// assert!(GreedyConfig { budget: 0, ..c.clone() }.validate(Protocol::exact(4)).is_err());
/// // The frozen neighbourhood holds no node outside it.
/// let graph = GreedyConfig { additions: Additions::Graph, ..c };
/// assert!(graph.validate(Protocol::paper(4)).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GreedyConfig {
    /// Radius `h` of the neighbourhood the actions range over (InduCE's 4; widened to the black
    /// box's receptive field, `L + 1`, under exact verdicts).
    pub hops: u32,
    /// At most this many edits (InduCE's budget δ = 15).
    pub budget: usize,
    /// Where additions may go (default the neighbourhood, the paper's action space).
    pub additions: Additions,
    /// With [`Additions::Graph`]: how many nodes outside the neighbourhood are offered.
    pub graph_candidates: usize,
    /// Nodes and pairs no edit may touch (default none).
    #[serde(skip_serializing_if = "Locked::is_empty")]
    pub locked: Locked,
    /// What a counterfactual must reach (default any other class; `--to-class`): the margin
    /// lowered is [`Goal::margin`].
    #[serde(skip_serializing_if = "Goal::is_any_other")]
    pub goal: Goal,
    /// Judge only the `K` actions of each step that a first-order estimate of the margin they
    /// leave ranks first (`--shortlist K`; needs the black box's gradients,
    /// [`BlackBox::edge_weighted`]), and with [`GreedyConfig::features`] the `K` feature
    /// actions ranked first by the gradient with respect to the features. `None` (the
    /// default): every action, the exhaustive search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shortlist: Option<usize>,
    /// Search edge edits (default true; `--edits feat` searches the features only).
    #[serde(skip_serializing_if = "is_true")]
    pub edges: bool,
    /// Search feature edits too (`--edits …,feat`): an action sets one entry of the target's
    /// own feature row, or of any node of its receptive field ([`GreedyConfig::feature_nodes`]),
    /// to a new value: the flip of a 0/1 column's entry, or one of a continuous column's
    /// quantiles ([`FeatureValues`](crate::features::FeatureValues)). Needs a black box bound
    /// to the graph under exact verdicts ([`TargetOracle::judges_features`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub features: bool,
    /// Feature columns no feature edit may change (`--lock-features`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub locked_features: Vec<u32>,
    /// Whose features may be flipped (`--feature-nodes`; default the target's own row).
    #[serde(skip_serializing_if = "crate::features::is_target")]
    pub feature_nodes: FeatureNodes,
    /// Quantile levels of a continuous column's candidate values (`--feature-quantiles`;
    /// default [`DEFAULT_FEATURE_QUANTILES`](crate::features::DEFAULT_FEATURE_QUANTILES), at
    /// least 2; see [`FeatureValues`](crate::features::FeatureValues)). 0/1 columns flip.
    #[serde(
        default = "crate::features::default_quantiles",
        skip_serializing_if = "crate::features::is_default_quantiles"
    )]
    pub feature_quantiles: usize,
}

pub(crate) fn is_true(b: &bool) -> bool {
    *b
}

impl Default for GreedyConfig {
    fn default() -> Self {
        Self {
            hops: 4,
            budget: 15,
            additions: Additions::Ball,
            graph_candidates: 256,
            locked: Locked::default(),
            goal: Goal::AnyOther,
            shortlist: None,
            edges: true,
            features: false,
            locked_features: Vec::new(),
            feature_nodes: FeatureNodes::Target,
            feature_quantiles: crate::features::DEFAULT_FEATURE_QUANTILES,
        }
    }
}

impl GreedyConfig {
    /// Checks the settings under the run's `protocol`, naming the one at fault.
    pub fn validate(&self, protocol: Protocol) -> Result<()> {
        if self.budget == 0 {
            return Err(ExplainError::InvalidConfig(
                "greedy: budget = 0: at least one edit is needed".into(),
            ));
        }
        if !self.edges && !self.features {
            return Err(ExplainError::InvalidConfig(
                "greedy: neither edge nor feature edits to search".into(),
            ));
        }
        if self.feature_quantiles < 2 {
            return Err(ExplainError::InvalidConfig(format!(
                "greedy: feature_quantiles = {}: a continuous column needs at least 2 quantile \
                 levels (its minimum and maximum)",
                self.feature_quantiles
            )));
        }
        if self.shortlist == Some(0) {
            return Err(ExplainError::InvalidConfig(
                "greedy: shortlist = 0: at least one action must be judged per step".into(),
            ));
        }
        check_additions(self.additions, protocol.verdict, "greedy")
    }
}

/// The frozen neighbourhood holds no node outside it: additions to the whole graph need exact
/// verdicts.
pub(crate) fn check_additions(additions: Additions, verdict: Verdict, method: &str) -> Result<()> {
    match (additions, verdict) {
        (Additions::Graph, Verdict::Neighbourhood) => Err(ExplainError::InvalidConfig(format!(
            "{method}: additions = graph needs exact verdicts (the frozen neighbourhood holds no \
             node outside it)"
        ))),
        _ => Ok(()),
    }
}

/// The settings that shape a search's action space (the fields [`GreedyConfig`] and
/// [`ExactConfig`](crate::ExactConfig) share).
pub(crate) struct SpaceSettings<'a> {
    /// The configured radius (widened to the receptive field under exact verdicts).
    pub hops: u32,
    pub additions: Additions,
    pub graph_candidates: usize,
    /// What no action may touch.
    pub locked: &'a Locked,
    /// What a counterfactual must reach.
    pub goal: Goal,
}

/// The [`SpaceSettings`] of a configuration with the fields of the same names.
macro_rules! space_settings {
    ($c:expr) => {
        $crate::greedy::SpaceSettings {
            hops: $c.hops,
            additions: $c.additions,
            graph_candidates: $c.graph_candidates,
            locked: &$c.locked,
            goal: $c.goal,
        }
    };
}
pub(crate) use space_settings;

/// What greedy and exact hold besides their settings: the black box, the run's protocol and
/// the graph's predictions (computed once, for additions to the whole graph).
pub(crate) struct Searcher<'a> {
    pub black_box: &'a dyn BlackBox,
    pub protocol: Protocol,
    predictions: GraphPredictions,
    /// The candidate values of the features' columns (computed once per graph).
    pub values: FeatureValuesCache,
}

impl<'a> Searcher<'a> {
    pub(crate) fn new(black_box: &'a dyn BlackBox, protocol: Protocol) -> Self {
        Self {
            black_box,
            protocol,
            predictions: GraphPredictions::default(),
            values: FeatureValuesCache::default(),
        }
    }

    /// The radius searched for a configured `hops` ([`search_hops`]).
    pub(crate) fn search_hops(&self, hops: u32) -> u32 {
        search_hops(self.black_box, hops, self.protocol.verdict)
    }

    /// The target's [`SearchStart`] in the action space `s` describes.
    pub(crate) fn start<'g>(
        &self,
        graph: &'g Graph,
        target: u32,
        s: SpaceSettings<'_>,
    ) -> Result<SearchStart<'g>>
    where
        'a: 'g,
    {
        SearchStart::new(
            graph,
            self.black_box,
            target,
            &s,
            self.protocol.verdict,
            &self.predictions,
        )
    }
}

/// What greedy and exact start from: the target's action space under `additions` (the outside
/// candidates from the graph's predictions), its oracle, its original class and the black
/// box's depth.
pub(crate) struct SearchStart<'a> {
    /// The radius searched ([`search_hops`]).
    pub hops: u32,
    pub space: ActionSpace,
    pub oracle: TargetOracle<'a>,
    /// The original class (one evaluation).
    pub y: usize,
    pub layers: Option<u32>,
}

impl<'a> SearchStart<'a> {
    pub(crate) fn new(
        graph: &'a Graph,
        black_box: &'a dyn BlackBox,
        target: u32,
        s: &SpaceSettings<'_>,
        verdict: Verdict,
        predictions: &GraphPredictions,
    ) -> Result<Self> {
        let hops = search_hops(black_box, s.hops, verdict);
        let ball = ActionSpace::new(graph, target, hops, &[])?;
        let space = match s.additions {
            Additions::Ball => ball,
            Additions::Graph => {
                let p = predictions.of(graph, black_box)?;
                let label = p[target as usize].0;
                let outside =
                    ActionSpace::outside_candidates(&ball.sub, &p, label, s.graph_candidates);
                ActionSpace::new(graph, target, hops, &outside)?
            }
        }
        .without_locked(s.locked)?;
        let mut oracle = TargetOracle::new(graph, black_box, &space.sub, verdict)?;
        let y = argmax(&oracle.row(&[])?);
        if let Goal::Class(c) = s.goal {
            let classes = black_box.num_classes();
            if c >= classes {
                return Err(ExplainError::InvalidConfig(format!(
                    "to-class: class {c} is not a class of the black box ({classes} classes)"
                )));
            }
            if c == y {
                // Already the desired class: nothing to reach.
                return Err(ExplainError::NoCandidate { target });
            }
        }
        Ok(Self {
            hops,
            space,
            oracle,
            y,
            layers: black_box.message_passing_layers(),
        })
    }
}

/// The exhaustive one-step search (see the module docs). Deterministic: ties go to the first
/// action in [`ActionSpace`] order.
///
/// ```
/// use induce_baselines::{GreedyConfig, GreedyExplainer};
/// use induce_explain::{Edit, Explainer};
/// use induce_graph::{Features, Graph};
/// use induce_models::testing::DegreeAtLeast;
///
/// //  1 ─ 0 ─ 2      node 0 has degree 2 (class 0): one addition flips it
/// //      │
/// //      3 ─ 4
/// let g = Graph::from_edges(5, &[(0, 1), (0, 2), (0, 3), (3, 4)],
///     Features::constant(5, 1, 1.0), vec![0; 5]).unwrap();
/// let e = GreedyExplainer::new(&DegreeAtLeast(3), GreedyConfig::default(), induce_explain::Protocol::exact(4)).explain(&g, 3).unwrap();
/// assert!(e.found);
/// assert_eq!(e.edits, [Edit::add(3, 1)]);
/// ```
pub struct GreedyExplainer<'a> {
    search: Searcher<'a>,
    config: GreedyConfig,
    /// Where a shortlist's gradients run (Burn models; the GCN's run on the host).
    device: Device,
    /// The black box's differentiable form, made at the first shortlisted target.
    gradients: OnceLock<GradModel>,
}

impl<'a> GreedyExplainer<'a> {
    /// The search judged by `black_box` with the run's `protocol`: its verdicts, and a found
    /// counterfactual reduced to a 1-minimal one ([`minimise`]) when it says so.
    pub fn new(black_box: &'a dyn BlackBox, config: GreedyConfig, protocol: Protocol) -> Self {
        Self {
            search: Searcher::new(black_box, protocol),
            config,
            device: Device::default(),
            gradients: OnceLock::new(),
        }
    }

    /// The device a shortlist's gradients run on for models other than the paper's GCN (whose
    /// gradients run on the host): default, Burn's default device.
    pub fn with_device(mut self, device: &Device) -> Self {
        self.device = device.clone();
        self
    }

    /// The first-order estimator of `space`'s actions, when the search is shortlisted.
    fn first_order<'s>(
        &'s self,
        graph: &Graph,
        space: &ActionSpace,
    ) -> Result<Option<FirstOrder<'s>>> {
        if self.config.shortlist.is_none() {
            return Ok(None);
        }
        FirstOrder::new(graph, space, self.gradient_model()?).map(Some)
    }

    /// The black box's differentiable form for the shortlist's estimates (made once).
    fn gradient_model(&self) -> Result<&GradModel> {
        if self.gradients.get().is_none() {
            let bb = self.search.black_box;
            let model = GradModel::of(bb, "greedy --shortlist", Kernel::Host, &self.device)?;
            let _ = self.gradients.set(model);
        }
        Ok(self.gradients.get().expect("set above"))
    }
}

impl Explainer for GreedyExplainer<'_> {
    fn name(&self) -> &str {
        "greedy"
    }

    fn neighbourhood_hops(&self) -> Option<u32> {
        Some(self.search.search_hops(self.config.hops))
    }

    fn explain(&self, graph: &Graph, target: u32) -> Result<Explanation> {
        let (c, protocol) = (&self.config, self.search.protocol);
        c.validate(protocol)?;
        let SearchStart {
            hops,
            space,
            mut oracle,
            y,
            layers,
        } = self.search.start(graph, target, space_settings!(c))?;
        let feats = search_actions(
            graph,
            target,
            layers,
            feature_settings!(c),
            &self.search.values,
        )?;
        let first_order = match c.edges {
            true => self.first_order(graph, &space)?,
            false => None,
        };
        let mut used = vec![false; space.len()];
        let mut edits: Vec<Edit> = Vec::new();
        let mut applied: Vec<usize> = Vec::new();
        let mut trials: Vec<Vec<Edit>> = Vec::new();
        // The feature edits made so far, in order, and the feature rows they give.
        let mut flips: Vec<FeatureEdit> = Vec::new();
        let mut rows_now: Vec<(u32, Vec<f32>)> = Vec::new();
        let mut order: Vec<Action> = Vec::new();
        for _ in 0..c.budget {
            let reach = Reach::new(graph, target, layers, &edits);
            // (flipped, margin, action, label): a flip beats any non-flip, then the smallest
            // margin; ties to the first (edges in action-space order, then features).
            let mut best: Option<(bool, f32, Action, usize)> = None;
            let mut consider = |row: &[f32], action: Action| {
                let label = argmax(row);
                let m = c.goal.margin(row, y);
                let hit = c.goal.reached(y, label);
                let better = match best {
                    None => true,
                    Some((f, bm, _, _)) => (hit && !f) || (hit == f && m < bm),
                };
                if better {
                    best = Some((hit, m, action, label));
                }
            };
            if c.edges {
                let mut step: Vec<usize> = (0..space.len())
                    .filter(|&i| !used[i] && reach.relevant(&space.actions[i]))
                    .collect();
                if let (Some(f), Some(k)) = (&first_order, c.shortlist)
                    && step.len() > k
                {
                    let estimates = f.estimates(&applied, &step, c.goal, y)?;
                    step = shortlist(&step, &estimates, k);
                }
                trials.clear();
                trials.extend(step.iter().map(|&i| {
                    let mut t = Vec::with_capacity(edits.len() + 1);
                    t.extend_from_slice(&edits);
                    t.push(space.actions[i]);
                    t
                }));
                let rows = match flips.is_empty() {
                    true => {
                        let refs: Vec<&[Edit]> = trials.iter().map(Vec::as_slice).collect();
                        oracle.rows(&refs)?
                    }
                    false => {
                        let own = as_rows(&rows_now);
                        let with: Vec<RowsTrial<'_>> = trials
                            .iter()
                            .map(|t| (t.as_slice(), own.as_slice()))
                            .collect();
                        oracle.rows_with_rows(&with)?
                    }
                };
                for (&i, row) in step.iter().zip(rows) {
                    consider(&row, Action::Edge(i));
                }
            }
            // The feature actions' trials, judged in chunks (one call each for a black box that
            // batches graphs).
            let mut open: Vec<FeatureAction> = (feats.iter())
                .filter(|a| flips.iter().all(|e| (e.node, e.feature) != a.entry()))
                .copied()
                .collect();
            if let Some(k) = c.shortlist
                && open.len() > k
            {
                let radius = layers.map(|l| l + 1);
                let estimates = crate::shortlist::feature_estimates(
                    self.gradient_model()?,
                    graph,
                    target,
                    radius,
                    (&edits, &as_rows(&rows_now)),
                    &open,
                    c.goal,
                    y,
                )?;
                let all: Vec<usize> = (0..open.len()).collect();
                open = (shortlist(&all, &estimates, k).into_iter())
                    .map(|i| open[i])
                    .collect();
            }
            for chunk in open.chunks(FEATURE_TRIALS_PER_CALL) {
                let rows: Vec<Vec<(u32, Vec<f32>)>> = (chunk.iter())
                    .map(|a| {
                        let mut trial = flips.clone();
                        trial.push(a.edit(graph));
                        edited_rows(graph, &trial)
                    })
                    .collect();
                let refs: Vec<Vec<(u32, &[f32])>> = rows.iter().map(|r| as_rows(r)).collect();
                let with: Vec<RowsTrial<'_>> = refs
                    .iter()
                    .map(|r| (edits.as_slice(), r.as_slice()))
                    .collect();
                for (row, &a) in oracle.rows_with_rows(&with)?.iter().zip(chunk) {
                    consider(row, Action::Feature(a));
                }
            }
            let Some((flipped, _, action, label)) = best else {
                break;
            };
            order.push(action);
            match action {
                Action::Edge(i) => {
                    used[i] = true;
                    applied.push(i);
                    edits.push(space.actions[i]);
                }
                Action::Feature(a) => {
                    flips.push(a.edit(graph));
                    rows_now = edited_rows(graph, &flips);
                }
            }
            if flipped {
                let mut e = Explanation {
                    feature_edits: flips,
                    target,
                    found: true,
                    original_label: y,
                    new_label: label,
                    edits,
                    evaluations: None,
                    certified: None,
                };
                if !protocol.minimise {
                    return Ok(e);
                }
                if e.feature_edits.is_empty() {
                    return match e.size() > 1 {
                        true => {
                            let bb = self.search.black_box;
                            minimise(graph, bb, &e, hops, protocol.verdict, c.goal)
                        }
                        false => Ok(e),
                    };
                }
                reduce_mixed(&mut oracle, graph, &mut e, c.goal)?;
                return Ok(e);
            }
        }
        Ok(Explanation {
            feature_edits: Vec::new(),
            target,
            found: false,
            original_label: y,
            new_label: y,
            edits: Vec::new(),
            evaluations: None,
            certified: None,
        })
    }
}

/// Feature actions judged per call of [`TargetOracle::rows_with_rows`] (their rows held at
/// once).
const FEATURE_TRIALS_PER_CALL: usize = 256;

/// One action of the greedy search: an edge action (its index in the [`ActionSpace`]) or a
/// new value for one feature entry.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Action {
    Edge(usize),
    Feature(FeatureAction),
}

/// A found counterfactual with feature edits made 1-minimal: each edit (edge or feature) is
/// dropped in turn, last first, and left out when the rest still reaches the goal; repeated
/// until none can be dropped. Every trial is one evaluation of `oracle`.
fn reduce_mixed(
    oracle: &mut TargetOracle<'_>,
    graph: &Graph,
    e: &mut Explanation,
    goal: Goal,
) -> Result<()> {
    loop {
        let mut dropped = false;
        // Feature edits last in, first tried; then the edge edits, last first.
        for k in (0..e.feature_edits.len()).rev() {
            let mut rest = e.feature_edits.clone();
            rest.remove(k);
            let rows = edited_rows(graph, &rest);
            let row = oracle.row_with_rows(&e.edits, &as_rows(&rows))?;
            let label = argmax(&row);
            if goal.reached(e.original_label, label) && (!rest.is_empty() || !e.edits.is_empty()) {
                e.feature_edits = rest;
                e.new_label = label;
                dropped = true;
            }
        }
        for k in (0..e.edits.len()).rev() {
            let mut rest = e.edits.clone();
            rest.remove(k);
            let rows = edited_rows(graph, &e.feature_edits);
            let row = oracle.row_with_rows(&rest, &as_rows(&rows))?;
            let label = argmax(&row);
            if goal.reached(e.original_label, label) && (!rest.is_empty() || !rows.is_empty()) {
                e.edits = rest;
                e.new_label = label;
                dropped = true;
            }
        }
        if !dropped {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    /// The default protocol (the baselines search their own radius).
    const EXACT: induce_explain::Protocol = induce_explain::Protocol::exact(4);
    use super::*;
    use crate::action_space::fixtures::GradedDegree;
    use induce_explain::oracle::counted;
    use induce_graph::Features;

    /// A star: centre 0 with 6 leaves, and a path 6 ─ 7 ─ 8 hanging off leaf 6.
    fn star() -> Graph {
        let mut edges: Vec<(u32, u32)> = (1..7).map(|w| (0, w)).collect();
        edges.extend([(6, 7), (7, 8)]);
        Graph::from_edges(9, &edges, Features::constant(9, 1, 1.0), vec![0; 9]).unwrap()
    }

    /// Features only: every target with a single flip that changes its label (found by brute
    /// force on the whole graph) is explained with one flip; every explanation has no edge
    /// edit, records each entry's old value, and flips the model on the whole edited graph.
    #[test]
    fn feature_flips_of_the_target_row_are_searched_and_checked_on_the_whole_graph() {
        use induce_explain::verdict::{whole_graph_label, whole_graph_label_with_features};
        let (g, gcn) = crate::action_space::fixtures::binary_graph();
        let bound = induce_models::BoundBlackBox::new(&gcn, &g).unwrap();
        let config = GreedyConfig {
            edges: false,
            features: true,
            ..GreedyConfig::default()
        };
        let greedy = GreedyExplainer::new(&bound, config.clone(), EXACT);
        let (mut found, mut singles) = (0, 0);
        for t in 0..g.num_nodes() as u32 {
            let e = greedy.explain(&g, t).unwrap();
            let y = whole_graph_label(&g, &gcn, t, &[]).unwrap();
            let x = g.features().row(t as usize);
            let single = (0..x.len() as u32).any(|f| {
                let flip = FeatureEdit {
                    node: t,
                    feature: f,
                    old: x[f as usize],
                    new: 1.0 - x[f as usize],
                };
                whole_graph_label_with_features(&g, &gcn, t, &[], &[flip]).unwrap() != y
            });
            if single {
                singles += 1;
                assert!(e.found && e.features_changed() == 1, "target {t}: {e:?}");
            }
            if e.found {
                found += 1;
                assert!(e.edits.is_empty(), "{e:?}");
                for f in &e.feature_edits {
                    assert_eq!(
                        (f.node, f.old, f.new),
                        (t, x[f.feature as usize], 1.0 - f.old)
                    );
                }
                let now = whole_graph_label_with_features(&g, &gcn, t, &[], &e.feature_edits);
                assert_eq!(now.unwrap(), e.new_label);
                assert_ne!(e.new_label, y);
            }
        }
        assert!(
            singles > 0 && found >= singles,
            "singles {singles}, found {found}"
        );
        // Every column locked: nothing to flip; a column past the features is an error.
        let locked = GreedyConfig {
            locked_features: (0..8).collect(),
            ..config.clone()
        };
        let greedy = GreedyExplainer::new(&bound, locked, EXACT);
        assert!((0..10).all(|t| !greedy.explain(&g, t).unwrap().found));
        let outside = GreedyConfig {
            locked_features: vec![8],
            ..config
        };
        let refused = GreedyExplainer::new(&bound, outside, EXACT).explain(&g, 0);
        assert!(
            matches!(refused, Err(ExplainError::InvalidConfig(_))),
            "{refused:?}"
        );
    }

    /// `--shortlist K` bounds the feature actions judged per step too (the first-order estimate
    /// with respect to the features): far fewer evaluations, every counterfactual still valid on
    /// the whole edited graph.
    #[test]
    fn the_shortlist_bounds_feature_actions_too() {
        use induce_explain::oracle::counted;
        use induce_explain::verdict::whole_graph_label_with_features;
        let (g, gcn) = crate::action_space::fixtures::continuous_graph();
        let bound = induce_models::BoundBlackBox::new(&gcn, &g).unwrap();
        let config = |shortlist| GreedyConfig {
            edges: false,
            features: true,
            feature_quantiles: 9,
            shortlist,
            ..GreedyConfig::default()
        };
        let all = GreedyExplainer::new(&bound, config(None), EXACT);
        let two = GreedyExplainer::new(&bound, config(Some(2)), EXACT);
        let (mut n_all, mut n_two, mut found) = (0, 0, 0);
        for t in 0..g.num_nodes() as u32 {
            let (_, k) = counted(|| all.explain(&g, t).unwrap());
            let (b, k2) = counted(|| two.explain(&g, t).unwrap());
            (n_all, n_two) = (n_all + k, n_two + k2);
            found += usize::from(b.found);
            if b.found {
                let now = whole_graph_label_with_features(&g, &gcn, t, &[], &b.feature_edits);
                assert_eq!(now.unwrap(), b.new_label, "{b:?}");
            }
        }
        assert!(
            found > 0 && 4 * n_two < n_all,
            "{found}: {n_two} vs {n_all}"
        );
    }

    /// Continuous features, jointly with edges: every counterfactual sets each changed entry
    /// once, to one of its column's quantile levels, and flips the whole edited graph.
    #[test]
    fn continuous_feature_edits_take_quantile_levels_and_are_valid() {
        use crate::features::FeatureValues;
        use induce_explain::verdict::whole_graph_label_with_features;
        let (g, gcn) = crate::action_space::fixtures::continuous_graph();
        let bound = induce_models::BoundBlackBox::new(&gcn, &g).unwrap();
        let values = FeatureValues::of(g.features(), 3).unwrap();
        let config = GreedyConfig {
            features: true,
            feature_quantiles: 3,
            ..GreedyConfig::default()
        };
        let greedy = GreedyExplainer::new(&bound, config, EXACT);
        let mut with_features = 0;
        for t in 0..g.num_nodes() as u32 {
            let e = greedy.explain(&g, t).unwrap();
            if !e.found {
                continue;
            }
            let now = whole_graph_label_with_features(&g, &gcn, t, &e.edits, &e.feature_edits);
            assert_eq!(now.unwrap(), e.new_label, "{e:?}");
            with_features += usize::from(!e.feature_edits.is_empty());
            for (i, f) in e.feature_edits.iter().enumerate() {
                assert_eq!(f.old, g.features().row(t as usize)[f.feature as usize]);
                assert!(
                    values.candidates(f.feature, f.old).any(|v| v == f.new),
                    "{f:?}"
                );
                assert!(e.feature_edits[..i].iter().all(|o| o.feature != f.feature));
            }
        }
        assert!(with_features > 0);
    }

    /// Edges and features together: every counterfactual flips the whole edited graph, and is
    /// 1-minimal over both kinds of edits; a black box without a binding is refused.
    #[test]
    fn joint_edge_and_feature_search_is_valid_and_one_minimal() {
        use induce_explain::verdict::whole_graph_label_with_features;
        let (g, gcn) = crate::action_space::fixtures::binary_graph();
        let bound = induce_models::BoundBlackBox::new(&gcn, &g).unwrap();
        let config = GreedyConfig {
            features: true,
            ..GreedyConfig::default()
        };
        let greedy = GreedyExplainer::new(&bound, config.clone(), EXACT);
        let mut found = 0;
        for t in 0..g.num_nodes() as u32 {
            let e = greedy.explain(&g, t).unwrap();
            if !e.found {
                continue;
            }
            found += 1;
            let label = |edits: &[Edit], fe: &[FeatureEdit]| {
                whole_graph_label_with_features(&g, &gcn, t, edits, fe).unwrap()
            };
            assert_eq!(label(&e.edits, &e.feature_edits), e.new_label);
            for k in 0..e.edits.len() {
                let mut rest = e.edits.clone();
                rest.remove(k);
                if !(rest.is_empty() && e.feature_edits.is_empty()) {
                    assert_eq!(label(&rest, &e.feature_edits), e.original_label, "{e:?}");
                }
            }
            for k in 0..e.feature_edits.len() {
                let mut rest = e.feature_edits.clone();
                rest.remove(k);
                if !(rest.is_empty() && e.edits.is_empty()) {
                    assert_eq!(label(&e.edits, &rest), e.original_label, "{e:?}");
                }
            }
        }
        assert!(found > 0);
        // The plain GCN has no binding: its verdicts are whole passes over each trial's edited
        // receptive field, feature rows replaced. The same search finds the same
        // counterfactuals (the two forms of the model agree to float rounding).
        let plain = GreedyExplainer::new(&gcn, config.clone(), EXACT);
        let bound_x = GreedyExplainer::new(&bound, config.clone(), EXACT);
        for t in 0..g.num_nodes() as u32 {
            let (a, b) = (
                plain.explain(&g, t).unwrap(),
                bound_x.explain(&g, t).unwrap(),
            );
            assert_eq!(
                (a.found, a.size(), a.features_changed()),
                (b.found, b.size(), b.features_changed()),
                "{a:?} {b:?}"
            );
        }
        // The paper's frozen verdicts judge both kinds of edit on the frozen neighbourhood: the
        // model on the 4-hop ball with the edges toggled and the rows replaced.
        let frozen = Protocol {
            verdict: Verdict::Neighbourhood,
            ..EXACT
        };
        let on_ball = GreedyExplainer::new(&bound, config, frozen);
        let mut with_features = 0;
        for t in 0..g.num_nodes() as u32 {
            let e = on_ball.explain(&g, t).unwrap();
            if !e.found {
                continue;
            }
            with_features += usize::from(!e.feature_edits.is_empty());
            let sub = induce_graph::k_hop(&g, t, 4).unwrap();
            let entries: Vec<(u32, u32, f32)> = (e.feature_edits.iter())
                .map(|f| (sub.local_of(f.node).unwrap() as u32, f.feature, f.new))
                .collect();
            let x = sub.features(&g).with_entries(&entries).unwrap();
            let mut edges: std::collections::BTreeSet<(u32, u32)> =
                sub.edges.iter().copied().collect();
            for d in &e.edits {
                let (a, b) = (
                    sub.local_of(d.u).unwrap() as u32,
                    sub.local_of(d.w).unwrap() as u32,
                );
                if !edges.remove(&(a.min(b), a.max(b))) {
                    edges.insert((a.min(b), a.max(b)));
                }
            }
            let edges: Vec<(u32, u32)> = edges.into_iter().collect();
            let lp = gcn.log_probs(&x, &edges).unwrap();
            assert_eq!(lp.argmax(sub.target_local), e.new_label, "{e:?}");
        }
        assert!(with_features > 0);
    }

    #[test]
    fn deletes_until_the_degree_rule_flips_and_counts_every_evaluation() {
        // Class 1 needs degree ≥ 5: the centre (degree 6) flips after 2 deletions. The rule
        // reads a node's own edges, so only edits touching the centre are tried.
        let bb = GradedDegree(5);
        let x = GreedyExplainer::new(&bb, GreedyConfig::default(), EXACT);
        let (e, n) = counted(|| x.explain(&star(), 0).unwrap());
        assert!(e.found);
        assert_eq!((e.original_label, e.new_label), (1, 0));
        assert_eq!(e.edits, [Edit::delete(0, 1), Edit::delete(0, 2)]);
        // The original verdict, 8 candidates at step 1 (2 additions (0,7), (0,8) and 6
        // deletions of spokes), 7 at step 2; then the minimality pass's checks.
        assert!(n >= 1 + 8 + 7, "{n}");
        assert_eq!(x.explain(&star(), 0).unwrap(), e);
    }

    #[test]
    fn a_shortlist_judges_only_the_first_order_favourites() {
        use crate::neighbourhood::fixtures::{beacon_gcn, beacon_graph};
        use induce_models::GcnBlackBox;
        let d = induce_models::testing::test_device().unwrap();
        let bb = GcnBlackBox::new(beacon_gcn(&d), &d);
        // Node 0 sees the beacon (node 1) through (0, 1): deleting it is the one flip.
        let g = beacon_graph(&[(0, 1), (0, 2), (2, 3)]);
        let full = GreedyExplainer::new(&bb, GreedyConfig::default(), EXACT);
        let (want, all) = counted(|| full.explain(&g, 0).unwrap());
        assert_eq!(want.edits, [Edit::delete(0, 1)]);
        for k in [1, 2, 100] {
            let c = GreedyConfig {
                shortlist: Some(k),
                ..GreedyConfig::default()
            };
            let x = GreedyExplainer::new(&bb, c, EXACT).with_device(&d);
            let (e, n) = counted(|| x.explain(&g, 0).unwrap());
            assert_eq!(e, want, "shortlist {k}");
            // A shortlist longer than a step's actions changes nothing (no gradient is taken);
            // a shorter one takes one gradient (one evaluation) and judges k actions.
            match k {
                100 => assert_eq!(n, all),
                _ => assert!(n < all, "shortlist {k}: {n} evaluations, exhaustive {all}"),
            }
        }
    }

    #[test]
    fn a_shortlist_needs_gradients_and_room() {
        let bb = GradedDegree(5);
        let c = GreedyConfig {
            shortlist: Some(2),
            ..GreedyConfig::default()
        };
        match GreedyExplainer::new(&bb, c.clone(), EXACT).explain(&star(), 0) {
            Err(ExplainError::NotDifferentiable { method }) => {
                assert_eq!(method, "greedy --shortlist")
            }
            other => panic!("{other:?}"),
        }
        let zero = GreedyConfig {
            shortlist: Some(0),
            ..c
        };
        assert!(matches!(
            GreedyExplainer::new(&bb, zero, EXACT).explain(&star(), 0),
            Err(ExplainError::InvalidConfig(_))
        ));
    }

    /// Three classes by degree: 0 up to 1, 1 for 2 or 3, 2 from 4 (graded: the closer the
    /// degree to a class's range, the higher its log-probability).
    struct ThreeDegrees;

    impl BlackBox for ThreeDegrees {
        fn input_dim(&self) -> usize {
            1
        }
        fn num_classes(&self) -> usize {
            3
        }
        fn message_passing_layers(&self) -> Option<u32> {
            Some(0)
        }
        fn log_probs(
            &self,
            x: &Features,
            edges: &[(u32, u32)],
        ) -> induce_models::Result<induce_models::LogProbs> {
            let mut deg = vec![0f32; x.num_nodes()];
            for &(u, w) in edges {
                deg[u as usize] += 1.0;
                deg[w as usize] += 1.0;
            }
            let rows = deg.iter().flat_map(|&d| {
                let s = [
                    -(d - 0.5).abs(),
                    -(d - 2.5).abs(),
                    -(d - 5.0).max(-1.0).abs() - 0.2,
                ];
                let m = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let z = m + s.iter().map(|v| (v - m).exp()).sum::<f32>().ln();
                s.map(|v| v - z)
            });
            induce_models::LogProbs::new(x.num_nodes(), 3, rows.collect())
        }
    }

    #[test]
    fn a_desired_class_is_reached_or_not_found() {
        // The centre (degree 6, class 2): any other class after 3 deletions (degree 3, class
        // 1); class 0 only at degree 1, 5 deletions.
        let g = star();
        let bb = ThreeDegrees;
        let lp = bb.log_probs(g.features(), &g.edges()).unwrap();
        assert_eq!((lp.argmax(0), lp.argmax(1)), (2, 0));
        let any = GreedyExplainer::new(&bb, GreedyConfig::default(), EXACT)
            .explain(&g, 0)
            .unwrap();
        assert_eq!((any.found, any.new_label, any.size()), (true, 1, 3));
        let to0 = GreedyConfig {
            goal: Goal::Class(0),
            ..GreedyConfig::default()
        };
        let e = GreedyExplainer::new(&bb, to0.clone(), EXACT)
            .explain(&g, 0)
            .unwrap();
        assert_eq!((e.found, e.new_label, e.size()), (true, 0, 5), "{e:?}");
        assert!(
            e.edits
                .iter()
                .all(|x| x.kind == induce_explain::EditKind::Delete)
        );
        // A target already of the class has nothing to reach; a class the model lacks is an
        // error naming it.
        let leaf = GreedyExplainer::new(&bb, to0, EXACT).explain(&g, 1);
        assert!(matches!(leaf, Err(ExplainError::NoCandidate { target: 1 })));
        let bad = GreedyConfig {
            goal: Goal::Class(3),
            ..GreedyConfig::default()
        };
        let err = GreedyExplainer::new(&bb, bad, EXACT)
            .explain(&g, 0)
            .unwrap_err();
        assert!(err.to_string().contains("class 3"), "{err}");
        // exact: class 0 needs 5 edits, so none of size <= 3; any other class: minimum 3.
        let c = crate::ExactConfig {
            goal: Goal::Class(0),
            ..crate::ExactConfig::default()
        };
        let e = crate::ExactExplainer::new(&bb, c, EXACT)
            .explain(&g, 0)
            .unwrap();
        assert!(!e.found && e.edits.is_empty());
        assert_eq!(
            e.certified,
            Some(induce_explain::Certified::NoneUpTo { size: 3 })
        );
        let e = crate::ExactExplainer::new(&bb, crate::ExactConfig::default(), EXACT)
            .explain(&g, 0)
            .unwrap();
        assert_eq!(
            e.certified,
            Some(induce_explain::Certified::Minimum { size: 3 })
        );
        assert_eq!(e.new_label, 1);
    }

    #[test]
    fn locked_nodes_and_edges_are_never_edited() {
        // Leaves 1 and 2 locked, and the spoke (0, 3): the next spokes go instead.
        let bb = GradedDegree(5);
        let c = GreedyConfig {
            locked: Locked::new(vec![1, 2], vec![(3, 0)]),
            ..GreedyConfig::default()
        };
        let e = GreedyExplainer::new(&bb, c, EXACT)
            .explain(&star(), 0)
            .unwrap();
        assert!(e.found);
        assert_eq!(e.edits, [Edit::delete(0, 4), Edit::delete(0, 5)]);
        // The centre locked: nothing that reaches it is left, so nothing is found.
        let c = GreedyConfig {
            locked: Locked::new(vec![0], vec![]),
            ..GreedyConfig::default()
        };
        let e = GreedyExplainer::new(&bb, c, EXACT)
            .explain(&star(), 0)
            .unwrap();
        assert!(!e.found && e.edits.is_empty());
        // exact certifies its minimum within what is left: still 2, the same spokes.
        let c = crate::ExactConfig {
            locked: Locked::new(vec![1, 2], vec![(3, 0)]),
            ..crate::ExactConfig::default()
        };
        let e = crate::ExactExplainer::new(&bb, c, EXACT)
            .explain(&star(), 0)
            .unwrap();
        assert_eq!(e.edits, [Edit::delete(0, 4), Edit::delete(0, 5)]);
        assert_eq!(
            e.certified,
            Some(induce_explain::Certified::Minimum { size: 2 })
        );
    }

    #[test]
    fn a_batching_black_box_gets_each_step_in_one_call_and_the_same_answer() {
        let bb = induce_models::testing::Batching::new(GradedDegree(5));
        let x = GreedyExplainer::new(&bb, GreedyConfig::default(), EXACT);
        let (e, n) = counted(|| x.explain(&star(), 0).unwrap());
        let plain = GradedDegree(5);
        let (want, m) = counted(|| {
            GreedyExplainer::new(&plain, GreedyConfig::default(), EXACT)
                .explain(&star(), 0)
                .unwrap()
        });
        assert_eq!(e, want);
        // The original verdict and the two steps' 8 + 7 candidates in 3 calls; the
        // minimality pass judges through the judge, one graph at a time.
        assert_eq!(bb.calls(), (3, 16));
        assert_eq!(n, m, "the same evaluations, counted alike");
    }

    #[test]
    fn not_found_within_the_budget_lists_no_edit() {
        let bb = GradedDegree(5);
        let c = GreedyConfig {
            budget: 1,
            ..GreedyConfig::default()
        };
        let e = GreedyExplainer::new(&bb, c, EXACT)
            .explain(&star(), 0)
            .unwrap();
        assert!(!e.found && e.edits.is_empty());
        assert_eq!(e.new_label, e.original_label);
    }

    #[test]
    fn graph_additions_need_exact_verdicts() {
        let c = GreedyConfig {
            additions: Additions::Graph,
            ..GreedyConfig::default()
        };
        let paper = EXACT.with_paper_faithful(true);
        assert!(matches!(
            c.validate(paper),
            Err(ExplainError::InvalidConfig(_))
        ));
        assert!(c.validate(EXACT).is_ok());
    }
}
