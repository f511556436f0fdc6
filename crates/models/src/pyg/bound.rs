//! [`PygNet`] bound to one whole graph ([`BlackBox::bind_graph`](crate::BlackBox::bind_graph)):
//! every layer's input projection ([`Conv::project`]) on every node computed once; then one
//! node's prediction with a few pairs toggled recomputes only the rows that the toggles reach
//! inside its receptive field, each with [`Conv::row`], the arithmetic of the whole pass.
//!
//! ```text
//!   layer L:      t                       the target's row, always computed
//!   layer L−1:   N[t]                     rows recomputed only where the toggles reach:
//!   …            N[N[t]]                  an endpoint, a row reading a recomputed row, and
//!   layer 1:     …                        (GCN, normalised) a row reading an endpoint's degree
//! ```

use std::collections::HashMap;

use induce_graph::Graph;

use super::PygNet;
use super::layers::{Adjacency, Projection, RowInputs, RowScratch};
use crate::black_box::{BlackBox, GraphBinding, check_features};
use crate::error::{ModelError, Result};
use crate::gcn::host::{GraphOverlay, Neighbours};

/// A [`PygNet`] bound to one graph (see the module docs).
pub(crate) struct BoundPyg<'a> {
    net: &'a PygNet,
    graph: &'a Graph,
    /// Layer `l`'s projection of its input, on every node of the graph (`l = 0`: the
    /// features').
    inputs: Vec<Projection>,
}

impl<'a> BoundPyg<'a> {
    /// Binds `net` to `graph`: one whole pass, keeping each layer's input projection.
    ///
    /// Errors: [`ModelError::InvalidInput`] when the features do not fit the model.
    pub(crate) fn new(net: &'a PygNet, graph: &'a Graph) -> Result<Self> {
        check_features(graph.features(), net.input_dim())?;
        let n = graph.num_nodes();
        let adj = Adjacency::new(n, &graph.edges());
        let mut inputs = vec![(*net.projection_of(graph.features())).clone()];
        let last = net.layers.len() - 1;
        for (l, conv) in net.layers.iter().enumerate().take(last) {
            let mut h = conv.forward_projected(&inputs[l], &adj);
            net.activate(l, &mut h);
            inputs.push(net.layers[l + 1].project(&h, n));
        }
        Ok(Self { net, graph, inputs })
    }

    /// `node`'s log-probabilities with `toggled` applied: every row of its receptive field
    /// recomputed (`fresh`), or only those the toggles reach.
    fn evaluate(
        &self,
        node: u32,
        toggled: &[(u32, u32)],
        rows: &[(u32, &[f32])],
        fresh: bool,
    ) -> Result<Vec<f32>> {
        let n = self.graph.num_nodes();
        if node as usize >= n {
            return Err(ModelError::InvalidInput(format!(
                "node {node} is outside the graph's {n} nodes"
            )));
        }
        let d = self.net.input_dim();
        if let Some((v, r)) = rows.iter().find(|(v, r)| *v as usize >= n || r.len() != d) {
            return Err(ModelError::InvalidInput(format!(
                "a feature row of {} values for node {v} (the model takes {d}; {n} nodes)",
                r.len()
            )));
        }
        let overlay = GraphOverlay::new(self.graph, toggled)?;
        let mut endpoints: Vec<u32> = overlay.changed();
        endpoints.sort_unstable();
        endpoints.dedup();
        let mut touched = HashMap::new();
        for &v in &endpoints {
            let mut nb = Vec::new();
            overlay.neighbours(v, &mut nb);
            nb.sort_unstable();
            touched.insert(v, nb);
        }
        let layers = &self.net.layers;
        let depth = layers.len();
        // reach[l]: how far from the target (hops in the edited graph) the rows of layer l's
        // output (1-based) that its row reads lie: the hop layers above l.
        let mut reach = vec![0u32; depth + 1];
        for l in (1..depth).rev() {
            reach[l] = reach[l + 1] + u32::from(layers[l].hops() > 0);
        }
        // Scratch marks reused across evaluations on this thread (no clearing: generations).
        let Scratch {
            mut dist,
            prev: prev_marks,
            mut spare,
            mut flag,
        } = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        // The target's ball in the edited graph, breadth first: `order` by distance.
        dist.reset(n);
        dist.set(node, 0);
        let mut order = vec![node];
        let mut head = 0;
        while head < order.len() {
            let v = order[head];
            head += 1;
            let dv = dist.get(v).unwrap_or(0);
            if dv >= reach[1] {
                continue;
            }
            for &w in self.neighbours(&touched, v) {
                if dist.get(w).is_none() {
                    dist.set(w, dv + 1);
                    order.push(w);
                }
            }
        }
        let within = |i: u32, l: usize| dist.get(i).is_some_and(|d| d <= reach[l]);
        let mut rc = RowScratch::default();
        // The first layer reads the new rows' projections in place of the bound ones.
        let mut prev = RowMap::new(prev_marks, n);
        for &(v, r) in rows {
            prev.insert(v, layers[0].project(r, 1).into_rows());
        }
        let mut out = Vec::new();
        for l in 1..=depth {
            let conv = &layers[l - 1];
            let degrees = conv.reads_degrees();
            let hops = conv.hops() > 0;
            // The rows to recompute: every row the target reads (`fresh`), else those whose
            // inputs changed: a row recomputed below, and (a layer reading neighbours) an
            // endpoint, a row with a recomputed neighbour or, reading degrees, an endpoint's
            // neighbour. Ascending.
            let mut todo: Vec<u32> = match (fresh, l == depth) {
                (_, true) => vec![node],
                (true, false) => order.iter().copied().filter(|&i| within(i, l)).collect(),
                (false, false) => {
                    flag.reset(n);
                    let mut c = Vec::new();
                    let mut offer = |i: u32| {
                        if flag.get(i).is_none() && within(i, l) {
                            flag.set(i, 1);
                            c.push(i);
                        }
                    };
                    for &i in prev.keys() {
                        offer(i);
                    }
                    if hops {
                        for &e in &endpoints {
                            offer(e);
                            if degrees {
                                self.neighbours(&touched, e).iter().for_each(|&w| offer(w));
                            }
                        }
                        for &j in prev.keys() {
                            self.neighbours(&touched, j).iter().for_each(|&w| offer(w));
                        }
                    }
                    c
                }
            };
            todo.sort_unstable();
            let mut next = RowMap::new(spare, n);
            {
                let inputs = Overlaid {
                    base: &self.inputs[l - 1],
                    over: &prev,
                    touched: &touched,
                    graph: self.graph,
                };
                let mut row = vec![0.0; conv.output_dim()];
                for &i in &todo {
                    conv.row(i as usize, &inputs, &mut rc, &mut row);
                    self.net.activate(l - 1, &mut row);
                    match l < depth {
                        true => next.insert(i, layers[l].project(&row, 1).into_rows()),
                        false => out = row.clone(),
                    }
                }
            }
            spare = std::mem::replace(&mut prev, next).marks;
        }
        SCRATCH.with(|s| {
            *s.borrow_mut() = Scratch {
                dist,
                prev: prev.marks,
                spare,
                flag,
            }
        });
        let logits = match &self.net.head {
            Some(d) => d.apply(&out, 1),
            None => out,
        };
        Ok(crate::ops::log_softmax(&logits))
    }

    /// The neighbours of `i` in the edited graph, ascending.
    fn neighbours<'s>(&'s self, touched: &'s HashMap<u32, Vec<u32>>, i: u32) -> &'s [u32] {
        match touched.get(&i) {
            Some(nb) => nb,
            None => self.graph.sorted_neighbors(i),
        }
    }
}

/// Marks on node ids with a value each, cleared in O(1) by moving to a new generation.
#[derive(Default)]
struct Marks {
    stamp: Vec<u32>,
    value: Vec<u32>,
    generation: u32,
}

impl Marks {
    /// Clears every mark, for ids below `n`.
    fn reset(&mut self, n: usize) {
        if self.stamp.len() < n {
            self.stamp.resize(n, 0);
            self.value.resize(n, 0);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.fill(0);
            self.generation = 1;
        }
    }

    fn get(&self, i: u32) -> Option<u32> {
        (self.stamp[i as usize] == self.generation).then(|| self.value[i as usize])
    }

    fn set(&mut self, i: u32, v: u32) {
        self.stamp[i as usize] = self.generation;
        self.value[i as usize] = v;
    }
}

/// One evaluation's scratch: distances from the target, the two layers' row maps' marks, and
/// a set of offered rows. Kept per thread between evaluations.
#[derive(Default)]
struct Scratch {
    dist: Marks,
    prev: Marks,
    spare: Marks,
    flag: Marks,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// A layer's recomputed rows (their projections for the next layer), by node id.
struct RowMap {
    marks: Marks,
    keys: Vec<u32>,
    rows: Vec<(Vec<f32>, Option<Vec<f32>>)>,
}

impl RowMap {
    fn new(mut marks: Marks, n: usize) -> Self {
        marks.reset(n);
        Self {
            marks,
            keys: Vec::new(),
            rows: Vec::new(),
        }
    }

    fn insert(&mut self, i: u32, row: (Vec<f32>, Option<Vec<f32>>)) {
        match self.marks.get(i) {
            Some(k) => self.rows[k as usize] = row,
            None => {
                self.marks.set(i, self.rows.len() as u32);
                self.keys.push(i);
                self.rows.push(row);
            }
        }
    }

    fn get(&self, i: u32) -> Option<&(Vec<f32>, Option<Vec<f32>>)> {
        self.marks.get(i).map(|k| &self.rows[k as usize])
    }

    fn keys(&self) -> &[u32] {
        &self.keys
    }
}

/// One layer's inputs on the edited graph: the bound projection, with the rows recomputed at
/// the layer below in place of theirs, and the toggled nodes' neighbour lists.
struct Overlaid<'r> {
    base: &'r Projection,
    over: &'r RowMap,
    touched: &'r HashMap<u32, Vec<u32>>,
    graph: &'r Graph,
}

impl RowInputs for Overlaid<'_> {
    fn a(&self, j: usize) -> &[f32] {
        match self.over.get(j as u32) {
            Some((a, _)) => a,
            None => self.base.row_a(j),
        }
    }

    fn b(&self, j: usize) -> Option<&[f32]> {
        match self.over.get(j as u32) {
            Some((_, b)) => b.as_deref(),
            None => self.base.row_b(j),
        }
    }

    fn neighbours(&self, j: usize) -> &[u32] {
        match self.touched.get(&(j as u32)) {
            Some(nb) => nb,
            None => self.graph.sorted_neighbors(j as u32),
        }
    }
}

impl GraphBinding for BoundPyg<'_> {
    /// Every row of the receptive field recomputed from the features' projection.
    fn log_probs_at(&self, node: u32, toggled: &[(u32, u32)]) -> Result<Vec<f32>> {
        self.evaluate(node, toggled, &[], true)
    }

    /// Only the rows the toggles reach recomputed; the others read from the binding.
    fn log_probs_at_edited(&self, node: u32, toggled: &[(u32, u32)]) -> Result<Vec<f32>> {
        self.evaluate(node, toggled, &[], false)
    }

    /// The new rows' first-layer projections, then only the rows they and the toggles reach.
    fn log_probs_at_rows(
        &self,
        node: u32,
        toggled: &[(u32, u32)],
        rows: &[(u32, &[f32])],
    ) -> Result<Option<Vec<f32>>> {
        self.evaluate(node, toggled, rows, false).map(Some)
    }
}
