//! The scale pipeline end to end on a small heavy-tailed graph: every counterfactual found with
//! the exact target verdict must also pass the independent whole-graph re-check.

use induce::harness::scale::{ScaleConfig, run};
use induce_graph::generators::ArxivLikeConfig;
use induce_models::testing::test_device;

#[test]
fn sampled_search_with_exact_verdict_gives_valid_counterfactuals() {
    let dev = test_device().unwrap();
    let mut config = ScaleConfig {
        graph: ArxivLikeConfig {
            num_nodes: 3000,
            num_edges: 15_000,
            feature_dim: 16,
            num_classes: 4,
            ..ArxivLikeConfig::default()
        },
        gcn_epochs: 30,
        fanout: 5,
        train_per_class: 3,
        explain_targets: 20,
        exact_targets: 1,
        ..ScaleConfig::default()
    };
    config.induce.train.episodes = 3;
    let (report, rows) = run(&config, &dev, |_| {}).unwrap();
    assert_eq!(report.targets, 20);
    assert_eq!(
        report.agree, 20,
        "the exact verdict defines the original label"
    );
    assert_eq!(report.found, report.valid, "{report:?}");
    assert!(report.found > 0, "{report:?}");
    // A fan-out of 5 over 3 hops keeps at most 1 + 5 + 25 + 125 nodes.
    assert!(report.sampled_nodes.max <= 156, "{report:?}");
    assert!(report.exact_nodes.median >= report.sampled_nodes.median);
    assert_eq!(rows.len(), 5);

    // Without the exact verdict, the re-check is what decides validity.
    config.exact_target = false;
    config.exact_targets = 0;
    let (report, _) = run(&config, &dev, |_| {}).unwrap();
    assert!(report.valid <= report.found, "{report:?}");
}
