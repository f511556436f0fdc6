//! The size distribution of a method's counterfactuals as a stacked bar chart (SVG): for each
//! size, how many counterfactuals have it, split into their additions and deletions, as the
//! InduCE paper's figures show it.

use std::fmt::Write;

use induce_explain::{EditKind, Explanation};

use crate::xml::{ADDED, DELETED, escape};

/// Counterfactual sizes beyond this share one "more" bar.
pub const MAX_BAR: usize = 20;

/// One bar: the counterfactuals of one size, split by edit type (their additions and deletions
/// divided by the size, so the two parts add up to the count).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    /// Explanation size (edits); [`MAX_BAR`] + 1 stands for "more".
    pub size: usize,
    /// Counterfactuals of this size.
    pub count: usize,
    /// The part of `count` made of additions.
    pub additions: f64,
}

/// The bars of the found explanations (sizes 1..=max, empty sizes included).
///
/// ```
/// use induce_explain::{Edit, Explanation};
/// use induce_viz::histogram::bars;
/// let e = |edits| Explanation { evaluations: None, certified: None, feature_edits: vec![],
///     target: 0, found: true, original_label: 1, new_label: 0, edits };
/// let b = bars(&[e(vec![Edit::add(0, 1)]), e(vec![Edit::add(0, 1), Edit::delete(1, 2)])]);
/// assert_eq!((b[0].count, b[0].additions), (1, 1.0));
/// assert_eq!((b[1].count, b[1].additions), (1, 0.5));
/// ```
pub fn bars(explanations: &[Explanation]) -> Vec<Bar> {
    let found: Vec<&Explanation> = explanations
        .iter()
        .filter(|e| e.found && e.size() > 0)
        .collect();
    let max = found
        .iter()
        .map(|e| e.size())
        .max()
        .unwrap_or(0)
        .min(MAX_BAR + 1);
    let mut out: Vec<Bar> = (1..=max)
        .map(|size| Bar {
            size,
            count: 0,
            additions: 0.0,
        })
        .collect();
    for e in found {
        let b = &mut out[e.size().min(MAX_BAR + 1) - 1];
        b.count += 1;
        let adds = e.edits.iter().filter(|x| x.kind == EditKind::Add).count();
        b.additions += adds as f64 / e.size() as f64;
    }
    out
}

/// The bar chart of `explanations` titled `title`, `width × height` pixels.
pub fn histogram_svg(title: &str, explanations: &[Explanation], width: f64, height: f64) -> String {
    let b = bars(explanations);
    let (left, right, top, bottom) = (36.0, 10.0, 28.0, 34.0);
    let (w, h) = (width - left - right, height - top - bottom);
    let ymax = b.iter().map(|x| x.count).max().unwrap_or(0).max(1) as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"histogram\" width=\"{width:.0}\" \
         height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"Helvetica, \
         Arial, sans-serif\" font-size=\"10\"><rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
         <text x=\"{left}\" y=\"16\" font-size=\"12\" font-weight=\"bold\">{}</text>",
        escape(title)
    );
    if b.is_empty() {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#666\">no counterfactual found</text></svg>",
            left + 10.0,
            top + h / 2.0
        );
        return s;
    }
    // Axes and y ticks.
    let _ = write!(
        s,
        "<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{:.1}\" stroke=\"#444\"/>\
         <line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#444\"/>",
        top + h,
        top + h,
        left + w,
        top + h
    );
    let step = nice_step(ymax);
    let mut t = 0.0;
    while t <= ymax + 1e-9 {
        let y = top + h - t / ymax * h;
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{t}</text>\
             <line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{left}\" y2=\"{y:.1}\" stroke=\"#444\"/>",
            left - 4.0,
            y + 3.0,
            left - 2.0
        );
        t += step;
    }
    let bw = w / b.len() as f64;
    for bar in &b {
        let x = left + (bar.size - 1) as f64 * bw;
        let hd = (bar.count as f64 - bar.additions) / ymax * h;
        let ha = bar.additions / ymax * h;
        let base = top + h;
        let _ = write!(
            s,
            "<g class=\"bar\" data-size=\"{}\" data-count=\"{}\"><rect class=\"additions\" \
             x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{ha:.1}\" fill=\"{ADDED}\"/>\
             <rect class=\"deletions\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{hd:.1}\" \
             fill=\"{DELETED}\"/></g>",
            bar.size,
            bar.count,
            x + 1.0,
            base - ha,
            (bw - 2.0).max(1.0),
            x + 1.0,
            base - ha - hd,
            (bw - 2.0).max(1.0)
        );
        let label = if bar.size > MAX_BAR {
            format!(">{MAX_BAR}")
        } else {
            bar.size.to_string()
        };
        if b.len() <= 12 || bar.size % 2 == 1 || bar.size > MAX_BAR {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
                x + bw / 2.0,
                top + h + 13.0
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">counterfactual size (edits)</text>\
         <rect x=\"{:.1}\" y=\"6\" width=\"9\" height=\"9\" fill=\"{ADDED}\"/><text x=\"{:.1}\" \
         y=\"14\">add</text><rect x=\"{:.1}\" y=\"6\" width=\"9\" height=\"9\" fill=\"{DELETED}\"/>\
         <text x=\"{:.1}\" y=\"14\">del</text></svg>",
        left + w / 2.0,
        height - 6.0,
        width - 92.0,
        width - 80.0,
        width - 50.0,
        width - 38.0
    );
    s
}

/// A round tick step giving at most about 5 ticks up to `max`.
fn nice_step(max: f64) -> f64 {
    let raw = (max / 5.0).max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * mag)
}

#[cfg(test)]
mod tests {
    use super::*;
    use induce_explain::Edit;

    #[test]
    fn bars_stack_and_chart_parses() {
        let e = |found, edits| Explanation {
            feature_edits: Vec::new(),
            evaluations: None,
            certified: None,
            target: 0,
            found,
            original_label: 1,
            new_label: if found { 0 } else { 1 },
            edits,
        };
        let ex = vec![
            e(true, vec![Edit::delete(0, 1)]),
            e(
                true,
                vec![Edit::delete(0, 1), Edit::delete(1, 2), Edit::add(0, 3)],
            ),
            e(false, vec![Edit::delete(0, 1)]),
            e(true, vec![Edit::add(0, 5); 30]),
        ];
        let b = bars(&ex);
        assert_eq!(b.len(), MAX_BAR + 1);
        assert_eq!((b[0].count, b[0].additions), (1, 0.0));
        assert_eq!(b[2].count, 1);
        assert!((b[2].additions - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!((b[MAX_BAR].count, b[MAX_BAR].additions), (1, 1.0));
        let svg = histogram_svg("cf2 <x>", &ex, 320.0, 200.0);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let n = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("bar"))
            .count();
        assert_eq!(n, MAX_BAR + 1);
        let empty = histogram_svg("none", &[], 320.0, 200.0);
        assert!(roxmltree::Document::parse(&empty).is_ok() && empty.contains("no counterfactual"));
        assert_eq!(nice_step(23.0), 5.0);
        assert_eq!(nice_step(3.0), 1.0);
    }
}
