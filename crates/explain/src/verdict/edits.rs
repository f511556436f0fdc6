//! Editing a [`Judge`]: toggled pairs, whole edit lists and rows evaluated by the caller, with
//! the node set grown and the black box re-evaluated as needed.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use induce_graph::EditGraph;
use induce_models::LogProbs;

use super::checks::{check_classes, evaluator};
use super::{EditedRows, Eval, ExactTarget, Judge, Verdict};
use crate::error::{ExplainError, Result};
use crate::explanation::{Edit, EditKind, FeatureEdit};
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
    /// [`Judge::exact_target`]), on the graph's own features (no [`Judge::set_features`]).
    pub fn takes_rows(&self) -> bool {
        self.verdict == Verdict::Exact
            && self.exact.is_none()
            && self.base.is_none()
            && !self.closed
            && self.rows.is_empty()
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
                match self.rows.is_empty() {
                    true => b.log_probs_at_edited(self.target, &toggled)?,
                    false => self.bound_row_with_features(*b, &toggled)?,
                }
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

    /// The target's row from the black box's binding with the edited feature rows; where the
    /// binding cannot take them, from a judge of the target's receptive field.
    fn bound_row_with_features(
        &self,
        binding: &dyn induce_models::GraphBinding,
        toggled: &[(u32, u32)],
    ) -> Result<Vec<f32>> {
        let rows: Vec<(u32, &[f32])> = self.rows.iter().map(|(&v, r)| (v, &r[..])).collect();
        if let Some(row) = binding.log_probs_at_rows(self.target, toggled, &rows)? {
            return Ok(row);
        }
        let mut ball = Judge::new(
            self.graph,
            self.black_box,
            self.target,
            &[self.target],
            Verdict::Exact,
        )?;
        ball.stage_features(Arc::clone(&self.feature_edits), Arc::clone(&self.rows));
        ball.toggle(toggled)?;
        Ok(ball.target_row().to_vec())
    }

    /// Moves to the node features with exactly `edits` applied, in order, to the graph's (the
    /// last edit of an entry decides its value; an edit's `old` is not read), keeping the edge
    /// edits, and re-evaluates: a whole evaluation of the node set, on its edited rows, when
    /// the rows change. A feature edit reaches the target only through its receptive field,
    /// which the node set holds, so the verdict stays the model's on the whole edited graph.
    ///
    /// Errors: [`ExplainError::NodeOutOfRange`] for a node outside the graph or, with
    /// [`Verdict::Neighbourhood`], outside the neighbourhood; [`ExplainError::InvalidValue`]
    /// for a feature outside the row or a value that is not finite; the black box's errors.
    /// An error leaves the judge as it was.
    ///
    /// ```
    /// use induce_explain::{FeatureEdit, Judge, Verdict};
    /// use induce_graph::{Features, Graph};
    /// use induce_models::testing::DegreeAtLeast;
    ///
    /// //  0 ─ 1   2
    /// let g = Graph::from_edges(3, &[(0, 1)], Features::constant(3, 1, 1.0), vec![0; 3])
    ///     .unwrap();
    /// let mut judge = Judge::new(&g, &DegreeAtLeast(1), 0, &[0], Verdict::Exact).unwrap();
    /// let before = judge.target_row().to_vec();
    /// judge.set_features(&[FeatureEdit { node: 0, feature: 0, old: 1.0, new: 0.0 }]).unwrap();
    /// assert_eq!(judge.feature_edits().len(), 1);
    /// assert!(judge.set_features(&[FeatureEdit { node: 0, feature: 1, old: 0.0, new: 1.0 }])
    ///     .is_err()); // one column only
    /// judge.set_features(&[]).unwrap();
    /// assert_eq!(judge.target_row(), &before[..]);
    /// ```
    pub fn set_features(&mut self, edits: &[FeatureEdit]) -> Result<()> {
        let Some(rows) = self.rows_of(edits)? else {
            return Ok(());
        };
        self.stage_features(Arc::new(edits.to_vec()), Arc::new(rows));
        self.rebuild()
    }

    /// [`Judge::set_edits`] and [`Judge::set_features`] together, with one evaluation: the
    /// graph with exactly `edits` and `feature_edits` applied. Their errors.
    pub fn set_state(&mut self, edits: &[Edit], feature_edits: &[FeatureEdit]) -> Result<()> {
        if let Some(rows) = self.rows_of(feature_edits)? {
            self.stage_features(Arc::new(feature_edits.to_vec()), Arc::new(rows));
        }
        self.set_edits(edits)
    }

    /// The feature edits applied ([`Judge::set_features`]), in order.
    pub fn feature_edits(&self) -> &[FeatureEdit] {
        &self.feature_edits
    }

    /// The rows `edits` give, checked; `None` when they are this judge's (nothing to do).
    fn rows_of(&self, edits: &[FeatureEdit]) -> Result<Option<EditedRows>> {
        if edits == &self.feature_edits[..] {
            return Ok(None);
        }
        let (n, x) = (self.graph.num_nodes(), self.graph.features());
        let mut rows = EditedRows::new();
        for e in edits {
            if e.node as usize >= n {
                return Err(ExplainError::NodeOutOfRange {
                    node: e.node,
                    num_nodes: n,
                    what: "the graph",
                });
            }
            if self.closed && !self.local.contains_key(&e.node) {
                return Err(ExplainError::NodeOutOfRange {
                    node: e.node,
                    num_nodes: self.nodes.len(),
                    what: "the target's neighbourhood",
                });
            }
            if e.feature as usize >= x.dim() || !e.new.is_finite() {
                return Err(ExplainError::InvalidValue {
                    what: "feature edit",
                    value: format!("node {}, feature {} to {}", e.node, e.feature, e.new),
                    reason: format!(
                        "a feature edit sets one of the {} columns to a finite value",
                        x.dim()
                    ),
                });
            }
            let row = rows
                .entry(e.node)
                .or_insert_with(|| x.row(e.node as usize).to_vec());
            row[e.feature as usize] = e.new;
        }
        // An edit back to the graph's own value leaves no edited row.
        rows.retain(|&v, r| r[..] != *x.row(v as usize));
        if rows == *self.rows {
            return Ok(None);
        }
        Ok(Some(rows))
    }

    /// Takes `edits` and their `rows` as this judge's (and its inner judge's), to be evaluated
    /// on the next answer.
    fn stage_features(&mut self, edits: Arc<Vec<FeatureEdit>>, rows: Arc<EditedRows>) {
        if let Some(ExactTarget::Ball(inner)) = &mut self.exact {
            inner.stage_features(Arc::clone(&edits), Arc::clone(&rows));
        }
        (self.feature_edits, self.rows) = (edits, rows);
        self.stale = true;
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
        let want = self.toggles_of(edits);
        let toggles: Vec<(u32, u32)> = self.delta.symmetric_difference(&want).copied().collect();
        self.toggle(&toggles)
    }

    /// The pairs `edits` toggle, applied in order to the original graph (or the frozen
    /// neighbourhood): those whose presence differs from it, each once, sorted, with a self
    /// loop or a node outside the graph kept (for [`Judge::toggle`] to report).
    ///
    /// ```
    /// use induce_explain::{Edit, Judge, Verdict};
    /// use induce_graph::{Features, Graph};
    /// use induce_models::testing::DegreeAtLeast;
    ///
    /// //  0 ─ 1   2
    /// let g = Graph::from_edges(3, &[(0, 1)], Features::constant(3, 1, 1.0), vec![0; 3])
    ///     .unwrap();
    /// let judge = Judge::new(&g, &DegreeAtLeast(1), 0, &[0], Verdict::Exact).unwrap();
    /// let edits = [Edit::add(2, 0), Edit::delete(0, 1), Edit::add(0, 1)];
    /// assert_eq!(judge.toggles_of(&edits).into_iter().collect::<Vec<_>>(), [(0, 2)]);
    /// ```
    pub fn toggles_of(&self, edits: &[Edit]) -> BTreeSet<(u32, u32)> {
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
        want
    }

    /// The black box's binding to the graph through which this judge takes the target's
    /// verdict ([`Judge::exact_target`] and [`Judge::sampled`] of a black box bound to the
    /// graph), if any.
    pub fn binding(&self) -> Option<&'a dyn induce_models::GraphBinding> {
        match &self.exact {
            Some(ExactTarget::Bound(b)) => Some(*b),
            _ => None,
        }
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
        let edges = self.edit.edges();
        let (eval, lp) = evaluator(self.graph, self.black_box, &self.nodes, &edges, &self.rows)?;
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
