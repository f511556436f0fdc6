//! `cf-gnnfeatures`: CF-GNNExplainer's recipe on the node features (a gradient-trained mask
//! zeroing nonzero feature entries of the target's row, or of its receptive field's rows with
//! `--feature-nodes field`), the feature-perturbation peer of COMBINEX's comparisons.

use induce_baselines::CfGnnFeaturesExplainer;

use super::baselines::{NEEDS_GRADIENTS, note, optimiser};
use super::{Describe, Kind, MethodDecl, Schedule, Supports};

/// `cf-gnnfeatures`' declaration.
pub(super) const DECL: MethodDecl = MethodDecl {
    name: "cf-gnnfeatures",
    aliases: &["cf-gnn-features", "cfgnnfeatures"],
    summary: "CF-GNNFeatures: a gradient-trained mask over the target's feature entries \
              (--feature-nodes field: its receptive field's), zeroing them (--iterations \
              steps; edits features only)",
    kind: Kind::Baseline,
    default_run: false,
    supports: Supports::FEATURE_MASK_BASELINE,
    needs: NEEDS_GRADIENTS,
    // The mask starts at 1 and the optimisation draws nothing at random.
    seeded: false,
    adds_edges: false,
    edit_mode: None,
    schedule: Schedule::None,
    settings: &["iterations", "feature_nodes"],
    build: |b| {
        Ok(Box::new(CfGnnFeaturesExplainer::new(
            b.black_box,
            b.baselines.cf_gnnfeatures.clone(),
            b.protocol,
            b.device,
        )?))
    },
    describe,
};

fn describe(d: &Describe<'_>) -> Option<String> {
    let c = &d.baselines.cf_gnnfeatures;
    let line = format!(
        "{} steps of {}, beta {}, a mask over the nonzero feature entries of {} (zeroing \
         them); the smallest counterfactual found",
        c.iterations,
        optimiser(&c.optimiser),
        c.beta,
        match c.feature_nodes {
            induce_baselines::FeatureNodes::Target => "the target's row",
            induce_baselines::FeatureNodes::Field => "its receptive field's rows",
        },
    );
    Some(note(line, c.hops, d))
}
