//! Black-box training reaches the paper's accuracy on our generated benchmarks, and checkpoints
//! round-trip. (Runs on the backend chosen by `INDUCE_BACKEND`, flex by default.)

use induce_graph::generators::SyntheticKind;
use induce_models::gcn::train::split_accuracy;
use induce_models::io::checkpoint::{load_gcn, save_gcn};
use induce_models::testing::test_device;
use induce_models::{BlackBox, GcnBlackBox, GcnConfig, GcnTrainingConfig, ModelError, train_gcn};

fn train(
    kind: SyntheticKind,
) -> (
    induce_graph::Dataset,
    induce_models::Gcn,
    induce_models::TrainReport,
) {
    let data = kind.generate(42).unwrap();
    let dev = test_device().unwrap();
    let cfg = GcnTrainingConfig::new(GcnConfig::new(10, data.graph.num_classes()));
    let (model, report) = train_gcn(&data, &cfg, &dev).unwrap();
    println!(
        "{}: train {:.2}% test {:.2}% loss {:.4} in {:.2}s",
        kind.name(),
        100.0 * report.train_accuracy.unwrap(),
        100.0 * report.test_accuracy.unwrap(),
        report.final_loss,
        report.seconds
    );
    (data, model, report)
}

#[test]
fn ba_shapes_reaches_95_percent() {
    let (_, _, r) = train(SyntheticKind::BaShapes);
    assert!(
        r.test_accuracy.unwrap() >= 0.95,
        "test accuracy {:?}",
        r.test_accuracy
    );
}

#[test]
fn tree_cycles_reaches_88_percent() {
    let (_, _, r) = train(SyntheticKind::TreeCycles);
    assert!(
        r.test_accuracy.unwrap() >= 0.88,
        "test accuracy {:?}",
        r.test_accuracy
    );
}

#[test]
fn tree_grid_reaches_85_percent_and_checkpoint_round_trips() {
    let (data, model, r) = train(SyntheticKind::TreeGrid);
    assert!(
        r.test_accuracy.unwrap() >= 0.85,
        "test accuracy {:?}",
        r.test_accuracy
    );

    let dev = test_device().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gcn.bpk");
    let cfg = GcnConfig::new(10, 2);
    save_gcn(&model, &cfg, &path).unwrap();
    assert!(path.with_extension("json").exists());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temporary files left behind: {names:?}");
    let loaded = load_gcn(&path, Some((10, 2)), &dev).unwrap();
    let a = GcnBlackBox::new(model, &dev);
    let b = GcnBlackBox::new(loaded, &dev);
    let g = &data.graph;
    assert_eq!(
        a.log_probs(g.features(), &g.edges()).unwrap(),
        b.log_probs(g.features(), &g.edges()).unwrap(),
        "loaded model must be bit-identical"
    );
    assert_eq!(
        split_accuracy(&b, &data).unwrap(),
        (r.train_accuracy, r.test_accuracy)
    );

    // A checkpoint used with a dataset of other dimensions is a typed error naming both numbers.
    match load_gcn(&path, Some((745, 2)), &dev) {
        Err(ModelError::DimensionMismatch {
            expected,
            got,
            what,
        }) => {
            assert_eq!((expected, got), (745, 10));
            assert!(what.contains("gcn.bpk"), "{what}");
        }
        other => panic!("expected a dimension mismatch, got {other:?}"),
    }
    assert!(matches!(
        load_gcn(&path, Some((10, 8)), &dev),
        Err(ModelError::DimensionMismatch { .. })
    ));
    // Truncated record: a typed error, no panic.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    assert!(matches!(
        load_gcn(&path, None, &dev),
        Err(ModelError::Checkpoint { .. })
    ));
    // Missing file.
    assert!(load_gcn(dir.path().join("nope.bpk"), None, &dev).is_err());
}

#[test]
fn training_is_reproducible() {
    let data = SyntheticKind::TreeCycles.generate(1).unwrap();
    let dev = test_device().unwrap();
    let cfg = GcnTrainingConfig::new(GcnConfig::new(10, 2)).with_epochs(30);
    let (m1, r1) = train_gcn(&data, &cfg, &dev).unwrap();
    let (m2, r2) = train_gcn(&data, &cfg, &dev).unwrap();
    let g = &data.graph;
    let (a, b) = (GcnBlackBox::new(m1, &dev), GcnBlackBox::new(m2, &dev));
    assert_eq!(
        a.log_probs(g.features(), &g.edges()).unwrap(),
        b.log_probs(g.features(), &g.edges()).unwrap()
    );
    assert_eq!(r1.final_loss, r2.final_loss);
    // The epoch clock: the first epoch and the mean of the 29 others add up to the whole.
    let steady = r1.steady_epoch_seconds.expect("30 epochs have later ones");
    assert!(r1.first_epoch_seconds > 0.0 && steady > 0.0);
    let whole = r1.epoch_seconds * 30.0;
    let parts = r1.first_epoch_seconds + 29.0 * steady;
    assert!(
        (parts - whole).abs() <= whole * 1e-9 + 1e-9,
        "{parts} s of epochs in {whole} s"
    );
    let one = GcnTrainingConfig::new(GcnConfig::new(10, 2)).with_epochs(1);
    let (_, r) = train_gcn(&data, &one, &dev).unwrap();
    assert_eq!(r.steady_epoch_seconds, None);
    assert!(r.first_epoch_seconds > 0.0 && r.first_epoch_seconds <= r.epoch_seconds);
}

#[test]
fn bad_inputs_are_typed_errors() {
    let dev = test_device().unwrap();
    let data = SyntheticKind::TreeCycles.generate(3).unwrap();
    // Feature dimension mismatch.
    let cfg = GcnTrainingConfig::new(GcnConfig::new(7, 2)).with_epochs(1);
    assert!(matches!(
        train_gcn(&data, &cfg, &dev),
        Err(ModelError::DimensionMismatch {
            expected: 7,
            got: 10,
            ..
        })
    ));
    // Too few classes for the labels.
    let cfg = GcnTrainingConfig::new(GcnConfig::new(10, 1)).with_epochs(1);
    assert!(matches!(
        train_gcn(&data, &cfg, &dev),
        Err(ModelError::InvalidInput(_))
    ));
    // Out-of-range edge for the black box.
    let bb = GcnBlackBox::new(GcnConfig::new(10, 2).init(&dev), &dev);
    let x = induce_graph::Features::constant(3, 10, 1.0);
    assert!(matches!(
        bb.log_probs(&x, &[(0, 5)]),
        Err(ModelError::InvalidInput(_))
    ));
}
