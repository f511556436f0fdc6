//! [`Protocol`]: how a run judges and checks counterfactuals, one value for every method.

use serde::{Deserialize, Serialize};

use crate::Verdict;

/// How a run judges and checks every method's counterfactuals: where the black box's
/// verdicts are taken, whether a found counterfactual is reduced to a 1-minimal one, and the
/// run's radius. A run holds one; it goes to each method when the method is built (a baseline's
/// constructor, InduCE's configuration) and to the evaluation pipeline
/// ([`EvalContext`](crate::pipeline::EvalContext)), which checks validity and 1-minimality
/// with the same verdicts. A method keeps its own search radius (InduCE's `env.hops`, a
/// baseline's `hops`); the run's radius is where targets are chosen and where each record's
/// sparsity and 1-minimality are measured unless the method edits within a wider one.
///
/// ```
/// use induce_explain::{Protocol, Verdict};
/// let p = Protocol::exact(4);
/// assert_eq!((p.verdict, p.minimise, p.radius), (Verdict::Exact, true, 4));
/// // The paper's: verdicts on the frozen neighbourhood, no minimality pass.
/// let paper = Protocol::paper(4);
/// assert_eq!((paper.verdict, paper.minimise), (Verdict::Neighbourhood, false));
/// assert_eq!(Protocol::exact(4).with_paper_faithful(true), paper);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Protocol {
    /// Where every verdict of the black box is taken (default [`Verdict::Exact`]: the model on
    /// the whole edited graph).
    pub verdict: Verdict,
    /// Whether a found counterfactual is reduced to a 1-minimal one ([`crate::minimise`]),
    /// with the same verdicts (default on; the paper's protocol has no such pass).
    pub minimise: bool,
    /// The run's radius in hops: the neighbourhood its targets are chosen in, and where each
    /// record's sparsity and 1-minimality are measured (a method editing within a wider one,
    /// [`Explainer::neighbourhood_hops`](crate::Explainer::neighbourhood_hops), is measured
    /// on its own).
    pub radius: u32,
}

impl Protocol {
    /// Exact verdicts with the minimality pass, at `radius` hops (the default protocol).
    pub const fn exact(radius: u32) -> Self {
        Self {
            verdict: Verdict::Exact,
            minimise: true,
            radius,
        }
    }

    /// The paper's protocol at `radius` hops: verdicts on the frozen neighbourhood
    /// ([`Verdict::Neighbourhood`]) and no minimality pass.
    pub const fn paper(radius: u32) -> Self {
        Self {
            verdict: Verdict::Neighbourhood,
            minimise: false,
            radius,
        }
    }

    /// [`Protocol::paper`] when `paper` is true, else [`Protocol::exact`], at this radius.
    pub const fn with_paper_faithful(self, paper: bool) -> Self {
        match paper {
            true => Self::paper(self.radius),
            false => Self::exact(self.radius),
        }
    }

    /// The same protocol at `radius` hops.
    pub const fn with_radius(mut self, radius: u32) -> Self {
        self.radius = radius;
        self
    }

    /// Whether this is the paper's protocol (frozen-neighbourhood verdicts).
    pub fn is_paper(&self) -> bool {
        self.verdict == Verdict::Neighbourhood
    }
}
