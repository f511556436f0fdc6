//! Pictures of runs: one explanation drawn as SVG (`induce render`) and a self-contained HTML
//! report of one or more run directories (`induce report`), on top of `induce-viz`.
//!
//! A run directory records where its data and black box came from (`config.json`), so both
//! commands load them again to predict the labels before and after each counterfactual. A run
//! made on a dataset held only in memory (the Amazon-Photo neighbourhood of its example) keeps a
//! copy as `data.npz` beside its results, which is read first.

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use induce_explain::pipeline::{RunData, TargetRecord, read_run};
use induce_explain::{EditKind, Explanation};
use induce_graph::io::DataFormat;
use induce_graph::{Dataset, k_hop};
use induce_models::BlackBox;
use induce_models::io::checkpoint::atomic_write;
use induce_rl::Kernel;
use induce_viz::{EdgeState, EdgeView, GalleryItem, NodeView, ReportRun, Scene};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::methods::load_black_box_with_arch;
use crate::run::load_data;

/// Neighbourhoods larger than this are drawn in part (the nodes nearest the edits).
pub const MAX_DRAWN_NODES: usize = 250;

/// A run directory with its graph and black box loaded again.
pub struct OpenedRun<'m> {
    /// The run's files.
    pub run: RunData,
    /// Its data.
    pub data: Dataset,
    /// Its black box: loaded from a file, or the model given to [`open_run_with`].
    pub black_box: RunModel<'m>,
    /// Hops of the explained neighbourhoods.
    pub hops: u32,
}

/// The black box of an [`OpenedRun`]: loaded from a file (owned), or borrowed from the caller
/// (a model held in memory, as [`crate::run::MemoryJob`] borrows it). Dereferences to
/// `dyn BlackBox`.
pub enum RunModel<'m> {
    /// Loaded from the file the run names (or the one given).
    Loaded(Box<dyn BlackBox>),
    /// The caller's model.
    Given(&'m dyn BlackBox),
}

impl<'m> std::ops::Deref for RunModel<'m> {
    type Target = dyn BlackBox + 'm;

    fn deref(&self) -> &Self::Target {
        match self {
            RunModel::Loaded(b) => b.as_ref(),
            RunModel::Given(b) => *b,
        }
    }
}

impl std::fmt::Debug for OpenedRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedRun")
            .field("dir", &self.run.dir)
            .field("hops", &self.hops)
            .finish_non_exhaustive()
    }
}

fn config_str<'a>(c: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| c.get(*k).and_then(Value::as_str))
}

/// Reads a run directory and loads its data and black box as `config.json` names them (an
/// `induce explain` run or a dataset example's). A run made with a black box held in memory
/// ([`crate::run::explain_in_memory`], e.g. your own model) names no model file: open it with
/// [`open_run_with`] and the model.
pub fn open_run(dir: impl AsRef<Path>, device: &Device) -> Result<OpenedRun<'static>> {
    open_run_with(dir, None, device)
}

/// [`open_run`] with the run's black box given (`Some`: your own model, borrowed as
/// [`MemoryJob`](crate::run::MemoryJob) borrows it; a run directory cannot hold it) instead of
/// loaded from the file `config.json` names.
pub fn open_run_with<'m>(
    dir: impl AsRef<Path>,
    black_box: Option<&'m dyn BlackBox>,
    device: &Device,
) -> Result<OpenedRun<'m>> {
    let source = match black_box {
        Some(bb) => Source::Model(bb),
        None => Source::Config,
    };
    open_run_from(dir.as_ref(), source, device)
}

/// [`open_run`] with the run's black box loaded from `path` (with `arch`, a PyG model's
/// architecture) instead of the file `config.json` names: a run made in memory with a model
/// that is also saved as a file (`induce render --black-box`).
pub fn open_run_with_file(
    dir: impl AsRef<Path>,
    path: impl AsRef<Path>,
    arch: Option<&Path>,
    device: &Device,
) -> Result<OpenedRun<'static>> {
    let source = Source::File(path.as_ref().to_path_buf(), arch.map(Path::to_path_buf));
    open_run_from(dir.as_ref(), source, device)
}

/// Where an opened run's black box comes from.
enum Source<'m> {
    /// The file `config.json` names (or the run's `black_box.bpk`).
    Config,
    /// A model given in memory.
    Model(&'m dyn BlackBox),
    /// A file (and a PyG architecture).
    File(PathBuf, Option<PathBuf>),
}

fn open_run_from<'m>(dir: &Path, source: Source<'m>, device: &Device) -> Result<OpenedRun<'m>> {
    let run = read_run(dir)?;
    let c = &run.config;
    let bad = |reason: String| Error::InvalidValue {
        what: "run directory",
        value: dir.display().to_string(),
        reason,
    };
    let seed = c
        .get("seed")
        .and_then(Value::as_u64)
        .unwrap_or(induce_graph::DEFAULT_SEED);
    let copy = dir.join("data.npz");
    let data = if copy.is_file() {
        load_data(&copy.display().to_string(), None, seed)?
    } else {
        let spec = config_str(c, &["data", "dataset"])
            .ok_or_else(|| bad("config.json names no data (`data` or `dataset`)".into()))?;
        let format = config_str(c, &["format"])
            .map(|f| f.parse::<DataFormat>())
            .transpose()?;
        load_data(spec, format, seed)?
    };
    let black_box = match source {
        Source::Model(bb) => RunModel::Given(bb),
        Source::File(path, arch) => RunModel::Loaded(
            load_black_box_with_arch(&path, arch.as_deref(), &data, Kernel::Host, device)?
                .black_box,
        ),
        // An experiment that trained its black box (config.json: black_box null) saved it
        // beside its results.
        Source::Config
            if c.get("black_box").is_some_and(Value::is_null)
                && !dir.join("black_box.bpk").is_file() =>
        {
            return Err(bad(
                "it was explained with a black box held in memory (config.json: black_box null), \
                 which a run directory cannot hold: give the model's file (`induce render \
                 --black-box FILE`, induce::render::open_run_with_file) or the model itself \
                 (induce::render::open_run_with)"
                    .into(),
            ));
        }
        Source::Config => {
            let bb_path = match config_str(c, &["black_box"]) {
                Some(p) => PathBuf::from(p),
                None => dir.join("black_box.bpk"),
            };
            let arch = config_str(c, &["arch"]).map(PathBuf::from);
            RunModel::Loaded(
                load_black_box_with_arch(&bb_path, arch.as_deref(), &data, Kernel::Host, device)?
                    .black_box,
            )
        }
    };
    let hops = ["induce", "inductive"]
        .iter()
        .find_map(|k| c.get(*k)?.get("env")?.get("hops")?.as_u64())
        .unwrap_or(4) as u32;
    Ok(OpenedRun {
        run,
        data,
        black_box,
        hops,
    })
}

/// The record of `target` in a run: of the row `method` when given (a method's name or a
/// variant's label, `greedy:shortlist=64`), else of the first method that explained it.
pub fn find_record<'r>(
    run: &'r RunData,
    method: Option<&str>,
    target: u32,
) -> Result<&'r TargetRecord> {
    run.runs
        .iter()
        .filter(|m| method.is_none_or(|want| m.method == want))
        .find_map(|m| m.records.iter().find(|r| r.explanation.target == target))
        .ok_or_else(|| Error::InvalidValue {
            what: "target",
            value: target.to_string(),
            reason: match method {
                Some(m) => format!("method {m} of this run did not explain it"),
                None => "this run did not explain it".into(),
            },
        })
}

/// The scene of one explanation: `target`'s `hops`-hop neighbourhood, widened hop by hop until
/// it holds every edit (a baseline searches its own radius, often wider than the run's InduCE
/// `hops`), its part nearest the edits when larger than [`MAX_DRAWN_NODES`]; the black box's
/// labels before and after the edits, motif membership when known.
pub fn scene(
    data: &Dataset,
    black_box: &dyn BlackBox,
    hops: u32,
    method: &str,
    e: &Explanation,
) -> Result<Scene> {
    let g = &data.graph;
    let mut hops = hops;
    let mut sub = k_hop(g, e.target, hops)?;
    let outside = |sub: &induce_graph::Subgraph| {
        (e.edits.iter()).any(|x| sub.local_of(x.u).is_none() || sub.local_of(x.w).is_none())
    };
    while outside(&sub) {
        let wider = k_hop(g, e.target, hops + 1)?;
        if wider.num_nodes() == sub.num_nodes() {
            break; // nothing more is reachable: the endpoint is named below
        }
        (hops, sub) = (hops + 1, wider);
    }
    let n = sub.num_nodes();
    let local = |u: u32| -> Result<u32> {
        sub.local_of(u)
            .map(|l| l as u32)
            .ok_or_else(|| Error::InvalidValue {
                what: "explanation",
                value: format!("target {}", e.target),
                reason: format!("edit endpoint {u} lies outside the {hops}-hop neighbourhood"),
            })
    };
    let mut deleted = std::collections::HashSet::new();
    let mut added = Vec::new();
    for x in &e.edits {
        let (a, b) = (local(x.u)?, local(x.w)?);
        let key = (a.min(b), a.max(b));
        match x.kind {
            EditKind::Delete => {
                deleted.insert(key);
            }
            EditKind::Add => added.push(key),
        }
    }
    // Labels before and after: the model's on the whole (edited) graph, judged on the
    // receptive field of the target (the neighbourhood's rows come first).
    let mut judge = induce_explain::Judge::new(
        g,
        black_box,
        e.target,
        &sub.nodes,
        induce_explain::Verdict::Exact,
    )?;
    let before = judge.log_probs().clone();
    let after = match e.feature_edits.as_slice() {
        [] => {
            judge.set_edits(&e.edits)?;
            judge.log_probs().clone()
        }
        fe => {
            // A feature counterfactual: the same judgement on the graph with its features.
            let entries: Vec<(u32, u32, f32)> =
                fe.iter().map(|x| (x.node, x.feature, x.new)).collect();
            let edited = g.with_features(g.features().with_entries(&entries)?)?;
            let mut j = induce_explain::Judge::new(
                &edited,
                black_box,
                e.target,
                &sub.nodes,
                induce_explain::Verdict::Exact,
            )?;
            j.set_edits(&e.edits)?;
            j.log_probs().clone()
        }
    };
    // The drawn nodes: everything, or the nearest to the target and the edits.
    let mut drawn: Vec<usize> = (0..n).collect();
    let mut note = None;
    if n > MAX_DRAWN_NODES {
        let mut adj = vec![Vec::new(); n];
        for &(u, w) in &sub.edges {
            adj[u as usize].push(w as usize);
            adj[w as usize].push(u as usize);
        }
        let mut dist = vec![usize::MAX; n];
        let mut queue = std::collections::VecDeque::new();
        let featured = (e.feature_edits.iter()).filter_map(|f| sub.local_of(f.node));
        let seeds = std::iter::once(sub.target_local as u32)
            .chain(deleted.iter().chain(&added).flat_map(|&(a, b)| [a, b]))
            .chain(featured.map(|l| l as u32));
        for s in seeds {
            if dist[s as usize] != 0 {
                dist[s as usize] = 0;
                queue.push_back(s as usize);
            }
        }
        let mut order = Vec::new();
        while let Some(u) = queue.pop_front() {
            if dist[u] > 2 || order.len() >= MAX_DRAWN_NODES {
                break;
            }
            order.push(u);
            for &w in &adj[u] {
                if dist[w] == usize::MAX {
                    dist[w] = dist[u] + 1;
                    queue.push_back(w);
                }
            }
        }
        order.sort_unstable();
        note = Some(format!(
            "showing {} of the neighbourhood's {n} nodes: the target, the edited nodes and their \
             nearest neighbours (within 2 hops)",
            order.len()
        ));
        drawn = order;
    }
    let index: std::collections::HashMap<usize, usize> =
        drawn.iter().enumerate().map(|(i, &u)| (u, i)).collect();
    let motifs = g.motifs();
    let nodes = drawn
        .iter()
        .map(|&u| NodeView {
            id: sub.global_of(u),
            before: before.argmax(u),
            after: after.argmax(u),
            target: u == sub.target_local,
            motif: motifs.is_some_and(|m| m[sub.global_of(u) as usize].is_some()),
            edited: deleted
                .iter()
                .chain(&added)
                .any(|&(a, b)| a as usize == u || b as usize == u),
            features_changed: (e.feature_edits.iter())
                .filter(|f| f.node == sub.global_of(u))
                .count(),
        })
        .collect();
    let mut edges = Vec::new();
    for &(u, w) in &sub.edges {
        if let (Some(&a), Some(&b)) = (index.get(&(u as usize)), index.get(&(w as usize))) {
            let state = match deleted.contains(&(u, w)) {
                true => EdgeState::Deleted,
                false => EdgeState::Kept,
            };
            edges.push(EdgeView { u: a, w: b, state });
        }
    }
    for &(u, w) in &added {
        if let (Some(&a), Some(&b)) = (index.get(&(u as usize)), index.get(&(w as usize))) {
            edges.push(EdgeView {
                u: a,
                w: b,
                state: EdgeState::Added,
            });
        }
    }
    let t = sub.target_local;
    let (y0, y1) = (before.argmax(t), after.argmax(t));
    let p = |lp: &induce_models::LogProbs, k: usize| lp.row(t)[k].exp();
    let caption = if e.found {
        format!(
            "target {}: class {y0} → {y1}, p(class {y0}) {:.2} → {:.2}; {} edit(s){}",
            e.target,
            p(&before, y0),
            p(&after, y0),
            e.size(),
            match e.features_changed() {
                0 => String::new(),
                k => format!(
                    "; {k} feature(s): {}",
                    induce_viz::report::feature_list(e, 8)
                ),
            }
        )
    } else {
        format!(
            "target {}: no counterfactual found (class {y0} kept, p {:.2} → {:.2})",
            e.target,
            p(&before, y0),
            p(&after, y0)
        )
    };
    Ok(Scene {
        title: format!("{method} on {}: target {}", data.name, e.target),
        caption,
        nodes,
        edges,
        has_motifs: motifs.is_some(),
        note,
    })
}

/// The SVG drawing of `target`'s explanation in an opened run (see [`scene`]).
pub fn render_target(run: &OpenedRun<'_>, method: Option<&str>, target: u32) -> Result<String> {
    let rec = find_record(&run.run, method, target)?;
    let s = scene(
        &run.data,
        &*run.black_box,
        run.hops,
        &rec.method,
        &rec.explanation,
    )?;
    Ok(induce_viz::render_svg(&s, target as u64))
}

/// The gallery of a run: every method's smallest, median and largest counterfactual drawn.
pub fn gallery(
    run: &RunData,
    data: &Dataset,
    black_box: &dyn BlackBox,
    hops: u32,
) -> Result<Vec<GalleryItem>> {
    let mut out = Vec::new();
    for m in &run.runs {
        for (pick, rec) in induce_viz::gallery_picks(m) {
            let s = scene(data, black_box, hops, &m.method, &rec.explanation)?;
            out.push(GalleryItem {
                method: m.method.clone(),
                pick: pick.into(),
                target: rec.explanation.target,
                svg: induce_viz::render_svg(&s, rec.explanation.target as u64),
            });
        }
    }
    Ok(out)
}

/// Writes `out` (atomically): the HTML report of the run directories `dirs`. A run whose data
/// or black box cannot be loaded again is reported without drawings, with a note saying why.
pub fn write_report(dirs: &[PathBuf], out: impl AsRef<Path>, device: &Device) -> Result<()> {
    let mut loaded = Vec::new();
    for d in dirs {
        let run = read_run(d)?;
        let (gallery_items, notes) = match open_run(d, device) {
            Ok(o) => (gallery(&run, &o.data, &*o.black_box, o.hops)?, Vec::new()),
            Err(e) => (
                Vec::new(),
                vec![format!(
                    "no drawings: the run's data or black box could not be loaded ({e})"
                )],
            ),
        };
        loaded.push((d.display().to_string(), run, gallery_items, notes));
    }
    let runs: Vec<ReportRun<'_>> = loaded
        .iter()
        .map(|(name, run, g, notes)| ReportRun {
            name: name.clone(),
            data: run,
            gallery: g.clone(),
            notes: notes.clone(),
        })
        .collect();
    let html = induce_viz::report_html(&runs);
    atomic_write(out.as_ref(), html.as_bytes())?;
    Ok(())
}

/// [`write_report`] for a run just written from data and a black box in memory (the dataset
/// examples), into `dir/report.html`.
pub fn write_run_report(
    dir: impl AsRef<Path>,
    data: &Dataset,
    black_box: &dyn BlackBox,
    hops: u32,
) -> Result<()> {
    let dir = dir.as_ref();
    let run = read_run(dir)?;
    let g = gallery(&run, data, black_box, hops)?;
    let html = induce_viz::report_html(&[ReportRun {
        name: dir.display().to_string(),
        data: &run,
        gallery: g,
        notes: Vec::new(),
    }]);
    atomic_write(dir.join("report.html"), html.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use induce_explain::Edit;
    use induce_graph::{Features, Graph, Split};
    use induce_models::{GcnBlackBox, GcnConfig};

    use super::*;

    #[test]
    fn a_scene_widens_to_hold_every_edit() {
        // 0 ─ 1 ─ 2 ─ 3 ─ 4: a baseline's deletion of (3, 4), three hops from target 0, drawn
        // for a run whose InduCE radius is 1.
        let edges = [(0, 1), (1, 2), (2, 3), (3, 4)];
        let graph = Graph::from_edges(5, &edges, Features::constant(5, 1, 1.0), vec![0; 5]);
        let data = Dataset {
            name: "path".into(),
            graph: graph.unwrap(),
            split: Split {
                train: vec![],
                valid: vec![],
                test: vec![],
            },
            eval_targets: None,
            notes: vec![],
        };
        let dev = induce_models::testing::test_device().unwrap();
        let bb = GcnBlackBox::new(GcnConfig::new(1, 2).init(&dev), &dev);
        let mut e = Explanation::counterfactual(0, 0, 1, vec![Edit::delete(3, 4)]);
        assert_eq!(scene(&data, &bb, 1, "random", &e).unwrap().nodes.len(), 5);
        // Only the radius the edits need: (1, 2) is drawn within 2 hops.
        e.edits = vec![Edit::delete(1, 2)];
        assert_eq!(scene(&data, &bb, 1, "random", &e).unwrap().nodes.len(), 3);
    }
}
