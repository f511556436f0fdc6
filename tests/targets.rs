//! Target selection through the facade: `--sample N` draws a seeded, uniform sample of the
//! paper's targets without running the black box on every candidate node.

use induce::models::io::checkpoint::save_gcn;
use induce::models::testing::test_device;
use induce::models::{GcnConfig, GcnTrainingConfig, train_gcn};
use induce::run::{Sample, TargetFilter, load_data, resolve_targets, resolve_targets_sampled};
use induce::{Shard, TargetSpec};

#[test]
fn a_sample_is_a_seeded_ordered_subset_of_the_papers_targets() {
    let dev = test_device().unwrap();
    let data = load_data("tree-cycles", None, 7).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gcn.bpk");
    let c = GcnConfig::new(data.graph.features().dim(), data.graph.num_classes());
    let (m, _) = train_gcn(&data, &GcnTrainingConfig::new(c.clone()), &dev).unwrap();
    save_gcn(&m, &c, &path).unwrap();
    let loaded = induce::methods::load_black_box(&path, &data, Default::default(), &dev).unwrap();
    let bb = loaded.black_box.as_ref();
    let all = resolve_targets(&TargetSpec::Test, TargetFilter::Paper, None, &data, bb, 4).unwrap();
    assert!(all.len() > 20, "{} targets", all.len());
    let draw = |size, seed, shard| {
        resolve_targets_sampled(
            &TargetSpec::Test,
            TargetFilter::Paper,
            Some(Sample { size, seed }),
            shard,
            &data,
            bb,
            4,
        )
    };
    let a = draw(10, 1, None).unwrap();
    assert_eq!(a.len(), 10);
    // The paper's targets only, in the spec's (the split's) order.
    let pos: Vec<usize> = a
        .iter()
        .map(|t| all.iter().position(|x| x == t).expect("a paper target"))
        .collect();
    assert!(
        pos.windows(2).all(|w| w[0] < w[1]),
        "in order, distinct: {a:?}"
    );
    assert_eq!(a, draw(10, 1, None).unwrap(), "same seed, same sample");
    assert_ne!(
        a,
        draw(10, 2, None).unwrap(),
        "another seed, another sample"
    );
    // Sharding applies to the sample.
    let halves = [
        draw(10, 1, Some("1/2".parse::<Shard>().unwrap())).unwrap(),
        draw(10, 1, Some("2/2".parse::<Shard>().unwrap())).unwrap(),
    ];
    assert_eq!(halves.concat(), a);
    // A sample larger than the set is the whole set.
    assert_eq!(draw(all.len() + 5, 3, None).unwrap(), all);
    // Size 0 is refused with a clear message.
    let e = draw(0, 1, None).unwrap_err().to_string();
    assert!(e.contains("sample size"), "{e}");
}
