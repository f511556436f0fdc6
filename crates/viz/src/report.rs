//! One self-contained HTML page for one or more runs: configuration, the paper-style metrics
//! table (runs side by side), time per method, size histograms, a gallery of drawings (smallest,
//! median and largest counterfactual of each method) with their edit lists, and every target's
//! explanation behind a filter. No network, no external script, style or font: everything is
//! inline.

use std::fmt::Write;

use induce_explain::pipeline::{MethodRun, RunData, TargetRecord};
use induce_explain::{EditKind, Explanation};

use crate::histogram::histogram_svg;
use crate::xml::escape;

/// One drawing of the gallery.
#[derive(Debug, Clone, PartialEq)]
pub struct GalleryItem {
    /// The method whose explanation is drawn.
    pub method: String,
    /// Which pick it is (`smallest`, `median`, `largest`).
    pub pick: String,
    /// The explained target.
    pub target: u32,
    /// The SVG drawing.
    pub svg: String,
}

/// A run as the report shows it.
#[derive(Debug, Clone)]
pub struct ReportRun<'a> {
    /// The run's name (its directory).
    pub name: String,
    /// The run's files.
    pub data: &'a RunData,
    /// Drawings of chosen explanations.
    pub gallery: Vec<GalleryItem>,
    /// Anything the reader should know about this report of the run (e.g. why there are no
    /// drawings).
    pub notes: Vec<String>,
}

/// The explanations a gallery shows for one method: the smallest, the median and the largest
/// counterfactual (by size, then target id), without repeats. A found record that the
/// whole-graph check refutes (`valid: Some(false)`) is no counterfactual and is not shown.
///
/// ```
/// use induce_explain::{Edit, Explanation};
/// use induce_explain::pipeline::{MethodRun, TargetRecord};
/// use induce_viz::report::gallery_picks;
/// let rec = |t, n| TargetRecord { method: "m".into(), neighbourhood_edges: 9, accuracy: None,
///     strict_accuracy: None, one_minimal: None, valid: Some(true), verdict: Default::default(),
///     explanation: Explanation { evaluations: None, certified: None, feature_edits: vec![], target: t, found: true,
///     original_label: 1, new_label: 0, edits: vec![Edit::delete(0, 1); n] } };
/// let run = MethodRun { method: "m".into(), records: vec![rec(5, 3), rec(2, 1), rec(9, 2)],
///     train_seconds: 0.0, explain_seconds: 0.0, notes: vec![] };
/// let picks: Vec<(&str, u32)> = gallery_picks(&run).iter()
///     .map(|(p, r)| (*p, r.explanation.target)).collect();
/// assert_eq!(picks, vec![("smallest", 2), ("median", 9), ("largest", 5)]);
/// let mut refuted = rec(4, 1);
/// refuted.valid = Some(false); // reported found, refuted by the whole-graph check
/// let run = MethodRun { records: vec![refuted], ..run };
/// assert!(gallery_picks(&run).is_empty());
/// ```
pub fn gallery_picks(run: &MethodRun) -> Vec<(&'static str, &TargetRecord)> {
    let mut found: Vec<&TargetRecord> = run
        .records
        .iter()
        .filter(|r| r.explanation.found && r.valid != Some(false))
        .collect();
    found.sort_by_key(|r| (r.explanation.size(), r.explanation.target));
    let mut out: Vec<(&'static str, &TargetRecord)> = Vec::new();
    if found.is_empty() {
        return out;
    }
    for (pick, i) in [
        ("smallest", 0),
        ("median", found.len() / 2),
        ("largest", found.len() - 1),
    ] {
        if !out.iter().any(|(_, r)| std::ptr::eq(*r, found[i])) {
            out.push((pick, found[i]));
        }
    }
    out
}

/// The edits of an explanation as text: `+(u, w)` for additions, `−(u, w)` for deletions, then
/// its feature edits ([`feature_list`]).
pub fn edit_list(e: &Explanation) -> String {
    let mut parts = Vec::new();
    if !e.edits.is_empty() {
        parts.push(
            e.edits
                .iter()
                .map(|x| match x.kind {
                    EditKind::Add => format!("+({}, {})", x.u, x.w),
                    EditKind::Delete => format!("−({}, {})", x.u, x.w),
                })
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    if !e.feature_edits.is_empty() {
        parts.push(format!("features {}", feature_list(e, usize::MAX)));
    }
    match parts.is_empty() {
        true => "no edit".into(),
        false => parts.join("; "),
    }
}

/// The feature edits of an explanation as text, the first `max`: `node[feature] old→new`
/// (`… and N more`).
///
/// ```
/// use induce_explain::{Explanation, FeatureEdit};
/// use induce_viz::report::feature_list;
/// let f = |feature| FeatureEdit { node: 7, feature, old: 0.0, new: 1.0 };
/// let e = Explanation { feature_edits: vec![f(12), f(40), f(3)],
///     ..Explanation::counterfactual(7, 1, 0, vec![]) };
/// assert_eq!(feature_list(&e, 2), "7[12] 0→1, 7[40] 0→1 … and 1 more");
/// ```
pub fn feature_list(e: &Explanation, max: usize) -> String {
    let shown: Vec<String> = (e.feature_edits.iter().take(max))
        .map(|f| format!("{}[{}] {}→{}", f.node, f.feature, f.old, f.new))
        .collect();
    let more = e.feature_edits.len().saturating_sub(max);
    match more {
        0 => shown.join(", "),
        m => format!("{} … and {m} more", shown.join(", ")),
    }
}

/// [`edit_list`] cut after `max` edits (`… and N more`).
pub fn short_edit_list(e: &Explanation, max: usize) -> String {
    if e.edits.len() <= max {
        return edit_list(e);
    }
    let head = Explanation {
        evaluations: None,
        certified: None,
        edits: e.edits[..max].to_vec(),
        ..e.clone()
    };
    format!("{} … and {} more", edit_list(&head), e.edits.len() - max)
}

fn pct(v: Option<f64>) -> String {
    v.map_or("–".into(), |x| format!("{:.2}", 100.0 * x))
}

const STYLE: &str = "body{font-family:Helvetica,Arial,sans-serif;margin:24px auto;max-width:1180px;\
color:#222;line-height:1.4}h1{font-size:24px}h2{font-size:19px;margin-top:34px;border-bottom:1px \
solid #ddd}h3{font-size:15px}table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;\
border-bottom:1px solid #eee;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}\
.grid{display:flex;flex-wrap:wrap;gap:12px}.card{border:1px solid #ddd;padding:8px;background:#fff}\
.card svg{max-width:100%;height:auto}.edits{font-family:monospace;font-size:12px;max-width:900px;\
word-break:break-word}pre{background:#f7f7f7;padding:8px;font-size:12px;overflow:auto;max-height:\
360px}.note{color:#666;font-size:13px}input{font-size:13px;padding:3px;margin:6px 0}\
.timebar{fill:#4e79a7}.gallery .card{width:calc(50% - 24px)}";

const FILTER_JS: &str = "function filterRows(input){var q=input.value.trim().toLowerCase();\
var t=document.getElementById(input.dataset.table);for(var i=0;i<t.rows.length;i++){var r=t.rows[i];\
if(r.parentNode.tagName==='THEAD')continue;r.style.display=(q===''||r.textContent.toLowerCase()\
.indexOf(q)>=0)?'':'none';}}";

/// The whole report page.
pub fn report_html(runs: &[ReportRun<'_>]) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(
        h,
        "<title>induce report</title><style>{STYLE}</style><script>{FILTER_JS}</script></head>\
         <body>\n<h1>induce report</h1>\n"
    );
    // The metrics table, every run side by side; the accuracies only where a graph has motif
    // ground truth (a background class), as in the text table.
    let acc = runs
        .iter()
        .flat_map(|r| &r.data.summary.runs)
        .any(|row| row.metrics.accuracy.is_some() || row.metrics.strict_accuracy.is_some());
    let acc_th = if acc {
        "<th>acc %</th><th>strict %</th>"
    } else {
        ""
    };
    h.push_str(&format!(
        "<h2>Metrics</h2>\n<p class=\"note\">Fidelity: share of targets without a \
         valid counterfactual (lower is better; for paper-faithful rows, marked \
         <em>frozen</em>, over those found on the frozen neighbourhood). Valid: share of the \
         reported counterfactuals that flip the model on the whole graph (a whole-graph forward \
         pass). Size: mean ± std of edits over the valid counterfactuals (over the found ones \
         for paper-faithful rows), as are the columns after it. Accuracy (graphs with motif ground truth only): the paper's \
         protocol; strict: both endpoints in the target's own motif. 1-min: share of counterfactuals from which no single edit can be undone with \
         the label still flipped. Times in seconds.</p>\n<table><thead><tr><th class=\"l\">run</th>\
         <th class=\"l\">dataset</th><th class=\"l\">method</th><th>targets</th><th>fid %</th>\
         <th>valid %</th><th>size</th>{acc_th}<th>sparsity</th><th>add/del</th>\
         <th>1-min %</th><th>train s</th><th>explain s</th></tr></thead><tbody>\n",
    ));
    for (i, r) in runs.iter().enumerate() {
        for row in &r.data.summary.runs {
            let m = &row.metrics;
            let size = match (m.size_mean, m.size_std) {
                (Some(a), Some(b)) => format!("{a:.2} ± {b:.2}"),
                _ => "–".into(),
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{size}</td>{}<td>{}</td>\
                 <td>{}/{}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td></tr>",
                i + 1,
                escape(&r.data.summary.dataset),
                escape(&row.method),
                match m.verdict {
                    induce_explain::Verdict::Neighbourhood => " <em>frozen</em>",
                    induce_explain::Verdict::Exact => "",
                },
                m.targets,
                pct(m.fidelity),
                match m.valid {
                    Some(v) if m.found > 0 => format!("{:.2}", 100.0 * v as f64 / m.found as f64),
                    _ => "–".into(),
                },
                if acc {
                    format!(
                        "<td>{}</td><td>{}</td>",
                        pct(m.accuracy),
                        pct(m.strict_accuracy)
                    )
                } else {
                    String::new()
                },
                m.sparsity.map_or("–".into(), |s| format!("{s:.3}")),
                m.additions,
                m.deletions,
                pct(m.one_minimal),
                row.train_seconds,
                row.explain_seconds
            );
        }
    }
    h.push_str("</tbody></table>\n");
    for (i, r) in runs.iter().enumerate() {
        let s = &r.data.summary;
        let _ = writeln!(
            h,
            "<h2>Run {}: {} <span class=\"note\">({})</span></h2>",
            i + 1,
            escape(&s.dataset),
            escape(&r.name)
        );
        let _ = writeln!(
            h,
            "<p>{} nodes, {} edges; seed {}; black box accuracy train {} %, test {} %.</p>",
            s.graph.nodes,
            s.graph.edges,
            s.seed,
            pct(s.black_box.train_accuracy),
            pct(s.black_box.test_accuracy)
        );
        let notes: Vec<String> = s
            .notes
            .iter()
            .cloned()
            .chain(s.runs.iter().flat_map(|row| {
                row.notes
                    .iter()
                    .map(move |n| format!("{}: {n}", row.method))
            }))
            .chain(r.notes.iter().cloned())
            .collect();
        if !notes.is_empty() {
            h.push_str("<ul class=\"note\">");
            for n in notes {
                let _ = write!(h, "<li>{}</li>", escape(&n));
            }
            h.push_str("</ul>\n");
        }
        let config = serde_json::to_string_pretty(&r.data.config).unwrap_or_default();
        let _ = writeln!(
            h,
            "<details><summary>configuration (config.json)</summary><pre>{}</pre></details>",
            escape(&config)
        );
        // Time per method.
        h.push_str("<h3>Time per method</h3>\n");
        h.push_str(&time_chart(&r.data.summary.runs));
        // Size histograms.
        h.push_str("<h3>Counterfactual sizes</h3>\n<div class=\"grid\">\n");
        for m in &r.data.runs {
            let ex: Vec<Explanation> = m.records.iter().map(|x| x.explanation.clone()).collect();
            let _ = writeln!(
                h,
                "<div class=\"card\">{}</div>",
                histogram_svg(&m.method, &ex, 360.0, 210.0)
            );
        }
        h.push_str("</div>\n");
        // Gallery.
        if !r.gallery.is_empty() {
            h.push_str(
                "<h3>Gallery: smallest, median and largest counterfactual per method</h3>\n\
                 <div class=\"grid gallery\">\n",
            );
            for g in &r.gallery {
                let rec = r
                    .data
                    .runs
                    .iter()
                    .find(|m| m.method == g.method)
                    .and_then(|m| m.records.iter().find(|x| x.explanation.target == g.target));
                let edits = rec
                    .map(|x| short_edit_list(&x.explanation, 40))
                    .unwrap_or_default();
                let _ = writeln!(
                    h,
                    "<div class=\"card\" id=\"run{}-{}-{}\"><b>{}</b>, {} (target {})<br>{}\
                     <div class=\"edits\">edits: {}</div></div>",
                    i + 1,
                    escape(&g.method),
                    g.target,
                    escape(&g.method),
                    escape(&g.pick),
                    g.target,
                    g.svg,
                    escape(&edits)
                );
            }
            h.push_str("</div>\n");
        }
        // Every target.
        for m in &r.data.runs {
            let id = format!(
                "t{}-{}",
                i + 1,
                m.method.replace(|c: char| !c.is_alphanumeric(), "_")
            );
            let _ = writeln!(
                h,
                "<details><summary>all {} targets of {}</summary><input placeholder=\"filter \
                 (target id, edit, found)\" data-table=\"{id}\" oninput=\"filterRows(this)\">\
                 <table id=\"{id}\"><thead><tr><th>target</th><th class=\"l\">found</th>\
                 <th>label</th><th>size</th><th class=\"l\">edits</th></tr></thead><tbody>",
                m.records.len(),
                escape(&m.method)
            );
            for rec in &m.records {
                let e = &rec.explanation;
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td class=\"l\">{}</td><td>{} → {}</td><td>{}</td>\
                     <td class=\"l edits\">{}</td></tr>",
                    e.target,
                    match (e.found, rec.valid) {
                        (true, Some(false)) => "found, not valid on the whole graph",
                        (true, _) => "found",
                        (false, _) => "not found",
                    },
                    e.original_label,
                    e.new_label,
                    e.size(),
                    escape(&edit_list(e))
                );
            }
            h.push_str("</tbody></table></details>\n");
        }
    }
    h.push_str("</body></html>\n");
    h
}

/// Horizontal bars of training + explanation time per method.
fn time_chart(rows: &[induce_explain::pipeline::RunRow]) -> String {
    let total: Vec<f64> = rows
        .iter()
        .map(|r| r.train_seconds + r.explain_seconds)
        .collect();
    let max = total.iter().copied().fold(1e-9, f64::max);
    let (width, row_h) = (720.0, 20.0);
    let height = row_h * rows.len() as f64 + 8.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"times\" width=\"{width:.0}\" \
         height=\"{height:.0}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">"
    );
    for (k, (r, t)) in rows.iter().zip(&total).enumerate() {
        let y = 4.0 + k as f64 * row_h;
        let w = t / max * 440.0;
        let _ = write!(
            s,
            "<text x=\"150\" y=\"{:.1}\" text-anchor=\"end\">{}</text><rect class=\"timebar\" \
             x=\"158\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\"/><text x=\"{:.1}\" \
             y=\"{:.1}\">{t:.2} s (train {:.2})</text>",
            y + 13.0,
            escape(&r.method),
            row_h - 5.0,
            164.0 + w,
            y + 13.0,
            r.train_seconds
        );
    }
    s.push_str("</svg>\n");
    s
}
