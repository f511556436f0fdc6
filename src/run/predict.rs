//! Every node's prediction under a black box (`induce predict`): its label and class
//! probabilities on the whole graph, from one forward pass.

use std::io::Write;

use induce_graph::Dataset;
use induce_models::{BlackBox, LogProbs};

use crate::error::{Error, Result};

/// The black box's class log-probabilities of every node of `data`'s graph (one whole-graph
/// pass), checked for NaN.
///
/// Errors: the model's own ([`induce_models::ModelError`]), and [`Error::InvalidValue`] naming
/// the first node whose output is NaN.
///
/// # Shapes
/// - output: `[num_nodes, num_classes]`
///
/// ```
/// use induce::models::testing::GradedDegree;
/// use induce::graph::{Dataset, Features, Graph, Split};
/// //  0 ─ 1 ─ 2
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], Features::constant(3, 1, 1.0), vec![0; 3])
///     .unwrap();
/// let data = Dataset::new("path", g, Split::default()).unwrap();
/// let lp = induce::run::predict(&data, &GradedDegree(2)).unwrap();
/// assert_eq!((lp.argmax(0), lp.argmax(1), lp.argmax(2)), (0, 1, 0));
/// ```
pub fn predict(data: &Dataset, black_box: &dyn BlackBox) -> Result<LogProbs> {
    let g = &data.graph;
    let lp = black_box.log_probs(g.features(), &g.edges())?;
    if let Some(i) = lp.as_slice().iter().position(|v| v.is_nan()) {
        return Err(Error::InvalidValue {
            what: "black box output",
            value: format!("node {}", i / lp.num_classes().max(1)),
            reason: "the model returned NaN for it on the whole graph".into(),
        });
    }
    Ok(lp)
}

/// Writes `lp` as CSV: a header `node,label,p0,…,p{C-1}`, then one row per node with its
/// predicted class (the first on ties) and its class probabilities (6 significant digits).
///
/// ```
/// use induce::models::LogProbs;
/// let lp = LogProbs::new(1, 2, vec![0.25f32.ln(), 0.75f32.ln()]).unwrap();
/// let mut out = Vec::new();
/// induce::run::write_predictions_csv(&lp, &mut out).unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(), "node,label,p0,p1\n0,1,0.25,0.75\n");
/// ```
pub fn write_predictions_csv(lp: &LogProbs, mut out: impl Write) -> std::io::Result<()> {
    let c = lp.num_classes();
    let mut line = String::from("node,label");
    for k in 0..c {
        line.push_str(&format!(",p{k}"));
    }
    writeln!(out, "{line}")?;
    for i in 0..lp.num_nodes() {
        line.clear();
        line.push_str(&format!("{i},{}", lp.argmax(i)));
        for &v in lp.row(i) {
            line.push_str(&format!(",{}", Sig6(f64::from(v).exp())));
        }
        writeln!(out, "{line}")?;
    }
    out.flush()
}

/// A probability with 6 significant digits and no trailing zeros.
struct Sig6(f64);

impl std::fmt::Display for Sig6 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.0;
        if v == 0.0 || !v.is_finite() {
            return write!(f, "{v}");
        }
        let digits = (5 - v.abs().log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.digits$}");
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            &s
        };
        write!(f, "{s}")
    }
}
