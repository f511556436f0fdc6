//! Editing a [`Judge`]: toggled pairs, whole edit lists and rows evaluated by the caller, with
//! the node set grown and the black box re-evaluated as needed.

use std::collections::{BTreeSet, HashMap, HashSet};

use induce_graph::EditGraph;
use induce_models::LogProbs;

use super::checks::{check_classes, evaluator};
use super::{Eval, ExactTarget, Judge, Verdict};
use crate::error::{ExplainError, Result};
use crate::explanation::{Edit, EditKind};
use crate::field::{ball, induced_edges, is_edge};

impl<'a> Judge<'a> {
    /// Toggles each pair (original ids: an edge is removed, a non-edge added) and re-evaluates.
    ///
    /// Errors: [`ExplainError::NodeOutOfRange`] for an id outside the graph or, with
    /// [`Verdict::Neighbourhood`], outside the neighbourhood; [`ExplainError::InvalidValue`]
    /// for a self loop; the black box's errors.
    pub fn toggle(&mut self, pairs: &[(u32, u32)]) -> Result<()> {
        // Every pair is checked before anything changes: an error leaves the judge as it was.
        self.check_pairs(pairs)?;
        let changed = self.apply(pairs);
        if let Some(ExactTarget::Ball(inner)) = &mut self.exact
            && let Err(e) = inner.toggle(pairs)
        {
            // The inner judge holds the same edits and rebuilds itself on its next answer.
            self.stale = true;
            return Err(e);
        }
        if self.stale || matches!(self.eval, Eval::Deferred) {
            // Grown, or a failed evaluation left the evaluator behind the edited graph (or it
            // was never built).
            return self.rebuild();
        }
        if !changed.is_empty() {
            let edges = self.edit.edges();
            if !matches!(self.eval, Eval::TargetOnly | Eval::Deferred) {
                crate::oracle::count(1);
            }
            let lp = match &mut self.eval {
                Eval::Incremental(inc) => inc.update(&edges, &changed),
                Eval::Prepared(p) => p.log_probs(&edges),
                Eval::Plain(x) => self.black_box.log_probs(x, &edges),
                Eval::TargetOnly | Eval::Deferred => Ok(self.log_probs.clone()),
            };
            match lp {
                Ok(lp) => self.log_probs = lp,
                Err(e) => {
                    self.stale = true;
                    return Err(e.into());
                }
            }
        } else if self.exact.is_none() {
            return Ok(());
        }
        if let Err(e) = self.splice_target() {
            self.stale = true;
            return Err(e);
        }
        self.checked()
    }

    /// Records the toggles of `pairs` (checked) in the edited graph and grows the node set
    /// where an added edge widens the target's receptive field; returns the local ids of the
    /// endpoints inside the node set (whose rows the evaluator must update).
    fn apply(&mut self, pairs: &[(u32, u32)]) -> Vec<u32> {
        let mut grow = false;
        let mut changed = Vec::with_capacity(2 * pairs.len());
        for &(a, b) in pairs {
            let p = (a.min(b), a.max(b));
            let (la, lb) = (self.local.get(&a).copied(), self.local.get(&b).copied());
            if !self.delta.remove(&p) {
                self.delta.insert(p);
            }
            let added = self.delta.contains(&p) && !self.is_edge(p);
            grow |= added && self.radius.is_some();
            // A stale judge rebuilds its edited graph from `delta` (its node set may have grown
            // past the edited graph's).
            if let (Some(la), Some(lb), false) = (la, lb, self.stale) {
                self.edit.toggle(la as usize, lb as usize);
                changed.extend([la, lb]);
            }
        }
        if grow {
            let need = ball(
                self.graph,
                self.target,
                self.radius.unwrap_or(0),
                &self.delta,
            );
            let before = self.nodes.len();
            for u in need {
                if let std::collections::hash_map::Entry::Vacant(e) = self.local.entry(u) {
                    e.insert(self.nodes.len() as u32);
                    self.nodes.push(u);
                }
            }
            if self.nodes.len() > before {
                self.stale = true;
            }
        }
        changed
    }

    /// Whether this judge's answer is the model's output for its node set on the whole edited
    /// graph, so that the caller may evaluate it ([`Judge::toggle_deferred`]): exact verdicts
    /// on the judge's own node set (not [`Judge::frozen`], [`Judge::sampled`] or
    /// [`Judge::exact_target`]).
    pub fn takes_rows(&self) -> bool {
        self.verdict == Verdict::Exact
            && self.exact.is_none()
            && self.base.is_none()
            && !self.closed
    }

    /// Toggles each pair like [`Judge::toggle`] but leaves the evaluation to the caller, who
    /// then hands the model's rows for [`Judge::nodes`] (grown as needed) on the graph with
    /// [`Judge::toggled`] applied to [`Judge::take_rows`] — e.g. one batched pass on a device
    /// for many episodes' judges. The judge's own evaluator falls behind and is rebuilt if it
    /// is asked again ([`Judge::toggle`]).
    ///
    /// Errors: those of [`Judge::toggle`] for bad pairs, and [`ExplainError::InvalidValue`]
    /// when the judge does not take rows ([`Judge::takes_rows`]).
    pub fn toggle_deferred(&mut self, pairs: &[(u32, u32)]) -> Result<()> {
        if !self.takes_rows() {
            return Err(ExplainError::InvalidValue {
                what: "deferred verdict",
                value: format!("{:?}", self.verdict),
                reason: "only exact verdicts on the judge's own node set can be evaluated by the \
                         caller"
                    .into(),
            });
        }
        self.check_pairs(pairs)?;
        self.apply(pairs);
        self.stale = true;
        Ok(())
    }

    /// The pairs toggled relative to the original graph, `(min, max)` in original ids.
    pub fn toggled(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.delta.iter().copied()
    }

    /// Takes `rows` as the model's log-probabilities for [`Judge::nodes`] (in that order) on the
    /// edited graph, after [`Judge::toggle_deferred`].
    ///
    /// Errors: [`ExplainError::OutputShape`] for a wrong number of rows or classes,
    /// [`ExplainError::NanOutput`] for a NaN.
    pub fn take_rows(&mut self, rows: LogProbs) -> Result<()> {
        crate::oracle::count(1);
        let old = std::mem::replace(&mut self.log_probs, rows);
        let checked = self.checked();
        if checked.is_err() {
            self.log_probs = old;
        }
        checked
    }

    /// Writes the target's exact row ([`ExactTarget`]) over its row of the node set's output.
    pub(super) fn splice_target(&mut self) -> Result<()> {
        let row = match &self.exact {
            None => return Ok(()),
            Some(ExactTarget::Bound(b)) => {
                crate::oracle::count(1);
                let toggled: Vec<(u32, u32)> = self.delta.iter().copied().collect();
                b.log_probs_at_edited(self.target, &toggled)?
            }
            Some(ExactTarget::Ball(inner)) => inner.target_row().to_vec(),
        };
        let c = self.black_box.num_classes();
        if row.len() != c || self.log_probs.num_classes() != c {
            return Err(ExplainError::OutputShape {
                expected_nodes: self.nodes.len(),
                expected_classes: c,
                got_nodes: self.log_probs.num_nodes(),
                got_classes: row.len(),
            });
        }
        let mut data =
            std::mem::replace(&mut self.log_probs, LogProbs::new(0, c, Vec::new())?).into_vec();
        data[self.target_local * c..(self.target_local + 1) * c].copy_from_slice(&row);
        self.log_probs = LogProbs::new(self.nodes.len(), c, data)?;
        Ok(())
    }

    /// The errors [`Judge::toggle`] reports for `pairs`, found before any change.
    fn check_pairs(&self, pairs: &[(u32, u32)]) -> Result<()> {
        let n = self.graph.num_nodes();
        for &(a, b) in pairs {
            if let Some(&x) = [a, b].iter().find(|&&x| x as usize >= n) {
                return Err(ExplainError::NodeOutOfRange {
                    node: x,
                    num_nodes: n,
                    what: "the graph",
                });
            }
            if a == b {
                return Err(ExplainError::InvalidValue {
                    what: "edit",
                    value: format!("({a}, {b})"),
                    reason: "a self loop is not an edge".into(),
                });
            }
            let (la, lb) = (self.local.get(&a).copied(), self.local.get(&b).copied());
            if self.closed
                && let Some(&x) = [(a, la), (b, lb)]
                    .iter()
                    .find_map(|(x, l)| l.is_none().then_some(x))
            {
                return Err(ExplainError::NodeOutOfRange {
                    node: x,
                    num_nodes: self.nodes.len(),
                    what: "the target's neighbourhood",
                });
            }
        }
        Ok(())
    }

    /// Moves to the graph with exactly the edits `edits` applied, in order, to the original
    /// graph (a deletion removes its pair, an addition inserts it), and re-evaluates only what
    /// differs from the current edits. Same errors as [`Judge::toggle`].
    pub fn set_edits(&mut self, edits: &[Edit]) -> Result<()> {
        let mut present: HashMap<(u32, u32), bool> = HashMap::with_capacity(edits.len());
        for e in edits {
            present.insert((e.u.min(e.w), e.u.max(e.w)), e.kind == EditKind::Add);
        }
        let mut want = BTreeSet::new();
        for (&p, &now) in &present {
            if p.0 != p.1 && (p.1 as usize) < self.graph.num_nodes() {
                if now != self.is_edge(p) {
                    want.insert(p);
                }
            } else {
                want.insert(p); // a self loop or out of range: `toggle` reports it
            }
        }
        let toggles: Vec<(u32, u32)> = self.delta.symmetric_difference(&want).copied().collect();
        self.toggle(&toggles)
    }

    /// The target's label with exactly `edits` applied ([`Judge::set_edits`]).
    pub fn label_with(&mut self, edits: &[Edit]) -> Result<usize> {
        self.set_edits(edits)?;
        Ok(self.label())
    }

    /// Whether `p` is an edge of the unedited graph (or of the frozen neighbourhood).
    fn is_edge(&self, p: (u32, u32)) -> bool {
        match &self.base {
            Some(b) => b.contains(&p),
            None => is_edge(self.graph, p),
        }
    }

    /// Re-binds the black box to the (grown) node set and evaluates it whole.
    fn rebuild(&mut self) -> Result<()> {
        if let Eval::TargetOnly = self.eval {
            self.splice_target()?;
            self.stale = false;
            return self.checked();
        }
        // The frozen neighbourhood's own edges (a fan-out sample may hold fewer than the
        // induced ones), else the graph's.
        let mut edges = match &self.base {
            Some(base) => base
                .iter()
                .filter_map(|&(a, b)| {
                    let (la, lb) = (*self.local.get(&a)?, *self.local.get(&b)?);
                    Some((la.min(lb), la.max(lb)))
                })
                .collect(),
            None => induced_edges(self.graph, &self.nodes, &self.local),
        };
        let mut set: HashSet<(u32, u32)> = edges.iter().copied().collect();
        for &(a, b) in &self.delta {
            if let (Some(&la), Some(&lb)) = (self.local.get(&a), self.local.get(&b)) {
                let l = (la.min(lb), la.max(lb));
                if !set.remove(&l) {
                    set.insert(l);
                }
            }
        }
        edges.clear();
        edges.extend(set);
        self.edit = EditGraph::from_edges(self.nodes.len(), &edges);
        self.stale = true;
        let (eval, lp) = evaluator(self.graph, self.black_box, &self.nodes, &self.edit.edges())?;
        self.eval = eval;
        self.log_probs = lp;
        if let Some(ExactTarget::Ball(inner)) = &mut self.exact
            && inner.stale
        {
            inner.rebuild()?;
        }
        self.splice_target()?;
        self.stale = false;
        self.checked()
    }

    /// Checks the current output's shape and values.
    pub(super) fn checked(&self) -> Result<()> {
        let lp = &self.log_probs;
        let (n, c) = (self.nodes.len(), self.black_box.num_classes());
        check_classes(self.black_box)?;
        if lp.num_nodes() != n || lp.num_classes() != c {
            return Err(ExplainError::OutputShape {
                expected_nodes: n,
                expected_classes: c,
                got_nodes: lp.num_nodes(),
                got_classes: lp.num_classes(),
            });
        }
        if let Some(i) = lp.as_slice().iter().position(|x| x.is_nan()) {
            return Err(ExplainError::NanOutput {
                target: self.target,
                node: self.nodes[i / c],
            });
        }
        Ok(())
    }
}
