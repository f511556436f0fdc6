//! A program that embeds the crates with its own model: a black box of its own explained in
//! memory into a run directory, the gradient baselines refusing it by name, and the run drawn
//! with the model.

use induce::graph::{Features, Graph};
use induce::models::{BlackBox, LogProbs};
use induce::run::{MemoryJob, explain_in_memory};
use induce::{Dataset, Method, TargetSpec, default_device};

/// Class 1 iff the node's degree is at least 3: a model with no gradients.
struct DegreeRule;

/// [`DegreeRule`] counting its calls.
struct Counted(std::sync::atomic::AtomicUsize);

impl BlackBox for Counted {
    fn input_dim(&self) -> usize {
        1
    }
    fn num_classes(&self) -> usize {
        2
    }
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> induce::models::Result<LogProbs> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        DegreeRule.log_probs(x, edges)
    }
}

impl BlackBox for DegreeRule {
    fn input_dim(&self) -> usize {
        1
    }
    fn num_classes(&self) -> usize {
        2
    }
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> induce::models::Result<LogProbs> {
        let mut deg = vec![0usize; x.num_nodes()];
        for &(u, w) in edges {
            deg[u as usize] += 1;
            deg[w as usize] += 1;
        }
        let data = deg
            .iter()
            .flat_map(|&d| if d >= 3 { [-2.0, -0.2] } else { [-0.2, -2.0] });
        LogProbs::new(x.num_nodes(), 2, data.collect())
    }
}

#[test]
fn your_own_black_box_in_memory() {
    let device = default_device().unwrap();
    // A wheel: hub 0 joined to 1..=6, and a rim 1-2-...-6-1.
    let mut edges: Vec<(u32, u32)> = (1..=6).map(|u| (0, u)).collect();
    edges.extend((1..=6).map(|u| (u, u % 6 + 1)));
    let graph = Graph::from_edges(7, &edges, Features::constant(7, 1, 1.0), vec![1; 7]).unwrap();
    let data = Dataset {
        name: "wheel".into(),
        graph,
        split: induce::graph::Split {
            test: (0..7).collect(),
            ..Default::default()
        },
        eval_targets: None,
        notes: Vec::new(),
    };
    let bb = DegreeRule;

    let mut job = MemoryJob::new(&data, &bb, &[Method::RANDOM, Method::TRANSDUCTIVE]);
    job.targets = TargetSpec::List(vec![0, 1, 2]);
    job.settings.transductive.train.episodes = 5;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let (summary, runs) = explain_in_memory(&job, Some(&out), &device).unwrap();
    assert_eq!(summary.runs.len(), 2);
    assert!(runs.iter().all(|r| r.records.len() == 3));
    for f in [
        "summary.json",
        "explanations.jsonl",
        "config.json",
        "data.npz",
        "report.html",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("config.json")).unwrap()).unwrap();
    assert!(config["black_box"].is_null());
    // The layout `induce explain` gives its job: the same keys, the run's protocol among them.
    let file_job = induce::run::ExplainJob::new("x", "y", &[Method::RANDOM]);
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let mut want = keys(&serde_json::to_value(&file_job).unwrap());
    // `induce` holds the transductive settings; the inductive ones, changed apart, beside it.
    want.push("inductive".into());
    want.sort();
    assert_eq!(keys(&config), want);
    assert_eq!(config["protocol"]["verdict"], "exact");
    assert_eq!(config["induce"]["episodes"], 5);
    assert_ne!(config["inductive"]["episodes"], 5);

    // The gradient baselines refuse a model without gradients, by name.
    let mut grad = MemoryJob::new(&data, &bb, &[Method::CF_GNNEXPLAINER]);
    grad.targets = TargetSpec::List(vec![0]);
    let e = explain_in_memory(&grad, None, &device)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cf-gnnexplainer needs the black box's gradients"),
        "{e}"
    );
    assert!(e.contains("implement BlackBox::edge_weighted"), "{e}");
    // ... before any method runs: the transductive search listed first makes no call.
    let counted = Counted(Default::default());
    let mut both = MemoryJob::new(&data, &counted, &[Method::TRANSDUCTIVE, Method::CF2]);
    both.targets = TargetSpec::List(vec![0, 1, 2]);
    let e = explain_in_memory(&both, None, &device)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cf2 needs the black box's gradients"), "{e}");
    assert_eq!(counted.0.load(std::sync::atomic::Ordering::Relaxed), 0);

    // The run is drawn with the model; without it, the error says how.
    let e = induce::render::open_run(&out, &device)
        .unwrap_err()
        .to_string();
    assert!(e.contains("open_run_with"), "{e}");
    let run = induce::render::open_run_with(&out, Some(&DegreeRule), &device).unwrap();
    let svg = induce::render::render_target(&run, Some("random"), 0).unwrap();
    assert!(svg.starts_with("<svg"));
}
