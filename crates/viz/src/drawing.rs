//! One counterfactual drawn as SVG: the target's neighbourhood before and after the edits, side
//! by side.
//!
//! ```text
//!  ┌─ original ──────────┐  ┌─ counterfactual ────┐
//!  │   ●──●   ■──■       │  │   ●  ●   ■──■       │   ● node (colour = predicted class)
//!  │   │  ╲   │  │       │  │   │ ┆    │  │ ╲     │   ■ ground-truth motif node
//!  │  (T)──●  ■──■       │  │  (T)─●   ■──■──(T)  │  (T) target; ┆ deleted (red, dashed)
//!  └─────────────────────┘  └─────────────────────┘   ─ added (green)
//!  target 12: class 1 → 0, p 0.93 → 0.41
//! ```

use std::fmt::Write;

use crate::layout::stress_layout;
use crate::xml::{ADDED, DELETED, FEATURES, class_colour, escape};

/// A drawn node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeView {
    /// Original node id (shown as the label).
    pub id: u32,
    /// Predicted class on the original neighbourhood.
    pub before: usize,
    /// Predicted class after the edits.
    pub after: usize,
    /// The explained node.
    pub target: bool,
    /// Member of a ground-truth motif.
    pub motif: bool,
    /// Endpoint of an edit (always labelled).
    pub edited: bool,
    /// Feature entries the explanation changed on this node (its row is marked in the
    /// counterfactual panel with a dashed ring, and the node labelled).
    pub features_changed: usize,
}

/// What the explanation did to an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeState {
    /// Untouched.
    Kept,
    /// Deleted by the explanation.
    Deleted,
    /// Added by the explanation.
    Added,
}

impl EdgeState {
    /// The SVG class of the edge.
    pub fn class(self) -> &'static str {
        match self {
            EdgeState::Kept => "edge kept",
            EdgeState::Deleted => "edge deleted",
            EdgeState::Added => "edge added",
        }
    }
}

/// A drawn edge between two nodes (indices into [`Scene::nodes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeView {
    /// First endpoint (index into the nodes).
    pub u: usize,
    /// Second endpoint.
    pub w: usize,
    /// Kept, deleted or added.
    pub state: EdgeState,
}

/// Everything one drawing shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// Title line (method and target).
    pub title: String,
    /// Caption under the panels (the label change).
    pub caption: String,
    /// The nodes.
    pub nodes: Vec<NodeView>,
    /// The edges of the original neighbourhood (kept or deleted) and the added ones.
    pub edges: Vec<EdgeView>,
    /// Whether ground truth is known (the legend then shows the motif marker).
    pub has_motifs: bool,
    /// A line under the caption (e.g. "showing 300 of 2,104 nodes: those within 2 hops of an
    /// edit").
    pub note: Option<String>,
}

const PANEL: f64 = 440.0;
const PAD: f64 = 22.0;
const TOP: f64 = 44.0;

/// Draws `scene` as a standalone SVG document: two panels (original, counterfactual), a legend
/// and the caption. Node positions come from [`stress_layout`] of the original edges (seeded
/// with `seed`), so the same scene gives the same bytes.
///
/// Every node is one `<g class="node …">` per panel, every edge one `<line class="edge …">`
/// (`kept`, `deleted`: red and dashed, `added`: green); the original panel shows the edges to be
/// deleted in red and no added edge.
pub fn render_svg(scene: &Scene, seed: u64) -> String {
    let n = scene.nodes.len();
    let original: Vec<(u32, u32)> = scene
        .edges
        .iter()
        .filter(|e| e.state != EdgeState::Added)
        .map(|e| (e.u as u32, e.w as u32))
        .collect();
    let pos = fit(&stress_layout(n, &original, seed));
    let small = n <= 80;
    let radius = if small {
        7.0
    } else if n <= 200 {
        5.0
    } else {
        3.5
    };
    let width = 2.0 * PANEL + 3.0 * PAD;
    let legend_h = 64.0;
    let height = TOP + PANEL + legend_h + if scene.note.is_some() { 44.0 } else { 28.0 };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"Helvetica, Arial, sans-serif\">"
    );
    s.push_str(
        "<style>.edge{stroke-linecap:round}.kept{stroke:#9a9a9a;stroke-width:1.2}\
         .deleted{stroke:#d62728;stroke-width:2.4}.after .deleted{stroke-dasharray:5 4}\
         .added{stroke:#2ca02c;stroke-width:2.8}.node text{font-size:9px;fill:#222}\
         .panel-title{font-size:13px;font-weight:bold;fill:#333}</style>\n",
    );
    let _ = writeln!(
        s,
        "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{PAD}\" y=\"24\" \
         font-size=\"15\" font-weight=\"bold\">{}</text>",
        escape(&scene.title)
    );
    for (panel, x0, name) in [
        ("before", PAD, "original"),
        ("after", 2.0 * PAD + PANEL, "counterfactual"),
    ] {
        let _ = writeln!(
            s,
            "<g class=\"panel {panel}\" transform=\"translate({x0:.1},{TOP:.1})\">"
        );
        let _ = writeln!(
            s,
            "<rect width=\"{PANEL}\" height=\"{PANEL}\" fill=\"#fafafa\" stroke=\"#ddd\"/>\
             <text class=\"panel-title\" x=\"8\" y=\"16\">{name}</text>"
        );
        s.push_str("<g class=\"edges\">\n");
        for e in &scene.edges {
            if panel == "before" && e.state == EdgeState::Added {
                continue;
            }
            let (a, b) = (pos[e.u], pos[e.w]);
            let _ = writeln!(
                s,
                "<line class=\"{}\" x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
                e.state.class(),
                a.0,
                a.1,
                b.0,
                b.1
            );
        }
        s.push_str("</g>\n<g class=\"nodes\">\n");
        for (v, &(x, y)) in scene.nodes.iter().zip(&pos) {
            let class = if panel == "before" { v.before } else { v.after };
            let fill = class_colour(class);
            let r = if v.target { radius * 1.6 } else { radius };
            let (stroke, sw) = if v.target {
                ("#000", 2.5)
            } else {
                ("#fff", 1.0)
            };
            let mut cls = String::from("node");
            if v.target {
                cls.push_str(" target");
            }
            if v.motif {
                cls.push_str(" motif");
            }
            let _ = write!(
                s,
                "<g class=\"{cls}\" data-node=\"{}\" data-class=\"{class}\">",
                v.id
            );
            if v.motif {
                let _ = write!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"1.5\" \
                     fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{sw}\"/>",
                    x - r,
                    y - r,
                    2.0 * r,
                    2.0 * r
                );
            } else {
                let _ = write!(
                    s,
                    "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r:.1}\" fill=\"{fill}\" \
                     stroke=\"{stroke}\" stroke-width=\"{sw}\"/>"
                );
            }
            if panel == "after" && v.features_changed > 0 {
                let _ = write!(
                    s,
                    "<circle class=\"features-changed\" data-features=\"{}\" cx=\"{x:.1}\" \
                     cy=\"{y:.1}\" r=\"{:.1}\" fill=\"none\" stroke=\"{FEATURES}\" \
                     stroke-width=\"2\" stroke-dasharray=\"3 2\"/>",
                    v.features_changed,
                    r + 3.5
                );
            }
            if small || v.target || v.edited || v.features_changed > 0 {
                let _ = write!(
                    s,
                    "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                    x + r + 1.5,
                    y - r,
                    v.id
                );
            }
            s.push_str("</g>\n");
        }
        s.push_str("</g>\n</g>\n");
    }
    // Legend: the classes present, then the markers.
    let ly = TOP + PANEL + 22.0;
    let _ = writeln!(
        s,
        "<g class=\"legend\" font-size=\"11\" transform=\"translate({PAD},{ly:.1})\">"
    );
    let mut classes: Vec<usize> = scene
        .nodes
        .iter()
        .flat_map(|v| [v.before, v.after])
        .collect();
    classes.sort_unstable();
    classes.dedup();
    let mut x = 0.0;
    for c in classes {
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"0\" r=\"6\" fill=\"{}\"/><text x=\"{:.1}\" y=\"4\">class {c}</text>",
            x + 6.0,
            class_colour(c),
            x + 16.0
        );
        x += 70.0;
    }
    let _ = write!(
        s,
        "<circle cx=\"{:.1}\" cy=\"0\" r=\"8\" fill=\"none\" stroke=\"#000\" stroke-width=\"2.5\"/>\
         <text x=\"{:.1}\" y=\"4\">target</text>",
        x + 8.0,
        x + 20.0
    );
    x += 70.0;
    if scene.has_motifs {
        let _ = write!(
            s,
            "<rect x=\"{:.1}\" y=\"-6\" width=\"12\" height=\"12\" fill=\"#bbb\"/>\
             <text x=\"{:.1}\" y=\"4\">motif node</text>",
            x,
            x + 16.0
        );
        x += 90.0;
    }
    let _ = write!(
        s,
        "<line x1=\"{:.1}\" y1=\"0\" x2=\"{:.1}\" y2=\"0\" stroke=\"{DELETED}\" stroke-width=\"2.4\" \
         stroke-dasharray=\"5 4\"/><text x=\"{:.1}\" y=\"4\">deleted edge</text>",
        x,
        x + 24.0,
        x + 30.0
    );
    x += 110.0;
    let _ = write!(
        s,
        "<line x1=\"{:.1}\" y1=\"0\" x2=\"{:.1}\" y2=\"0\" stroke=\"{ADDED}\" stroke-width=\"2.8\"/>\
         <text x=\"{:.1}\" y=\"4\">added edge</text>",
        x,
        x + 24.0,
        x + 30.0
    );
    if scene.nodes.iter().any(|v| v.features_changed > 0) {
        x += 100.0;
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"0\" r=\"8\" fill=\"none\" stroke=\"{FEATURES}\" \
             stroke-width=\"2\" stroke-dasharray=\"3 2\"/><text x=\"{:.1}\" y=\"4\">features \
             changed</text>",
            x + 8.0,
            x + 20.0
        );
    }
    s.push_str("\n</g>\n");
    let cy = TOP + PANEL + 52.0;
    let _ = writeln!(
        s,
        "<text class=\"caption\" x=\"{PAD}\" y=\"{cy:.1}\" font-size=\"13\">{}</text>",
        escape(&scene.caption)
    );
    if let Some(note) = &scene.note {
        let _ = writeln!(
            s,
            "<text class=\"note\" x=\"{PAD}\" y=\"{:.1}\" font-size=\"11\" fill=\"#666\">{}</text>",
            cy + 18.0,
            escape(note)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Scales positions into a panel (keeping the aspect ratio), one decimal of precision.
fn fit(p: &[(f64, f64)]) -> Vec<(f64, f64)> {
    if p.is_empty() {
        return Vec::new();
    }
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in p {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let span = (x1 - x0).max(y1 - y0).max(1e-9);
    let inner = PANEL - 2.0 * PAD - 10.0;
    let k = inner / span;
    let (ox, oy) = (
        PAD + 5.0 + (inner - (x1 - x0) * k) / 2.0,
        PAD + 10.0 + (inner - (y1 - y0) * k) / 2.0,
    );
    p.iter()
        .map(|&(x, y)| {
            let q = |v: f64| (v * 10.0).round() / 10.0;
            (q(ox + (x - x0) * k), q(oy + (y - y0) * k))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4-cycle with a tail; the target loses (1, 2) and gains (0, 4).
    pub(crate) fn scene() -> Scene {
        let node = |id, before, after, target, motif| NodeView {
            id,
            before,
            after,
            target,
            motif,
            edited: false,
            features_changed: usize::from(id == 13),
        };
        Scene {
            title: "cf-gnnexplainer, target 10".into(),
            caption: "class 1 → 0, p 0.93 → 0.41".into(),
            nodes: vec![
                node(10, 1, 0, true, true),
                node(11, 1, 1, false, true),
                node(12, 1, 0, false, true),
                node(13, 1, 1, false, true),
                node(14, 0, 0, false, false),
            ],
            edges: vec![
                EdgeView {
                    u: 0,
                    w: 1,
                    state: EdgeState::Kept,
                },
                EdgeView {
                    u: 1,
                    w: 2,
                    state: EdgeState::Deleted,
                },
                EdgeView {
                    u: 2,
                    w: 3,
                    state: EdgeState::Kept,
                },
                EdgeView {
                    u: 3,
                    w: 0,
                    state: EdgeState::Kept,
                },
                EdgeView {
                    u: 3,
                    w: 4,
                    state: EdgeState::Kept,
                },
                EdgeView {
                    u: 0,
                    w: 4,
                    state: EdgeState::Added,
                },
            ],
            has_motifs: true,
            note: Some("a <note> & more".into()),
        }
    }

    #[test]
    fn svg_parses_and_has_one_element_per_node_and_edge() {
        let svg = render_svg(&scene(), 3);
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        let panels: Vec<_> = doc
            .descendants()
            .filter(|n| {
                n.attribute("class")
                    .is_some_and(|c| c.starts_with("panel "))
            })
            .collect();
        assert_eq!(panels.len(), 2);
        for (p, edges_drawn) in panels.iter().zip([5, 6]) {
            let of = |prefix: &str| {
                p.descendants()
                    .filter(|n| {
                        n.attribute("class")
                            .is_some_and(|c| c == prefix || c.starts_with(&format!("{prefix} ")))
                    })
                    .count()
            };
            assert_eq!(of("node"), 5);
            assert_eq!(of("edge"), edges_drawn);
        }
        let after = panels[1];
        let class_of = |cls: &str| {
            after
                .descendants()
                .filter(|n| n.attribute("class") == Some(cls))
                .count()
        };
        assert_eq!((class_of("edge deleted"), class_of("edge added")), (1, 1));
        // Node 13's features changed: ringed in the counterfactual panel only, and legended.
        assert_eq!(class_of("features-changed"), 1);
        assert!(
            panels[0]
                .descendants()
                .all(|n| n.attribute("class") != Some("features-changed"))
        );
        assert!(svg.contains(">features changed</text>"));
        assert!(svg.contains(".deleted{stroke:#d62728") && svg.contains(".added{stroke:#2ca02c"));
        assert!(svg.contains("class 1 → 0, p 0.93 → 0.41"));
        assert!(svg.contains("a &lt;note&gt; &amp; more"));
        // The target's colour changes between the panels (class 1 → class 0).
        assert!(
            svg.contains("data-node=\"10\" data-class=\"1\"")
                && svg.contains("data-node=\"10\" data-class=\"0\"")
        );
    }

    #[test]
    fn same_input_same_bytes() {
        assert_eq!(render_svg(&scene(), 3), render_svg(&scene(), 3));
    }
}
