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

use std::collections::{BTreeSet, HashMap, HashSet};

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
        let endpoints: HashSet<u32> = overlay.changed().into_iter().collect();
        let mut touched = HashMap::new();
        for &v in &endpoints {
            let mut nb = Vec::new();
            overlay.neighbours(v, &mut nb);
            nb.sort_unstable();
            touched.insert(v, nb);
        }
        let layers = &self.net.layers;
        let depth = layers.len();
        // need[l]: the rows of layer l's output (1-based) the target's row reads.
        let mut need: Vec<Vec<u32>> = vec![Vec::new(); depth + 1];
        need[depth] = vec![node];
        for l in (1..depth).rev() {
            let mut ball: BTreeSet<u32> = need[l + 1].iter().copied().collect();
            if layers[l].hops() > 0 {
                for &i in &need[l + 1] {
                    ball.extend(self.neighbours(&touched, i));
                }
            }
            need[l] = ball.into_iter().collect();
        }
        let mut scratch = RowScratch::default();
        // The first layer reads the new rows' projections in place of the bound ones.
        let mut prev: HashMap<u32, (Vec<f32>, Option<Vec<f32>>)> = rows
            .iter()
            .map(|&(v, r)| (v, layers[0].project(r, 1).into_rows()))
            .collect();
        let mut out = Vec::new();
        for l in 1..=depth {
            let conv = &layers[l - 1];
            let inputs = Overlaid {
                base: &self.inputs[l - 1],
                over: &prev,
                touched: &touched,
                graph: self.graph,
            };
            let degrees = conv.reads_degrees();
            let hops = conv.hops() > 0;
            let mut next = HashMap::new();
            let mut row = vec![0.0; conv.output_dim()];
            for &i in &need[l] {
                let reads = |j: &u32| prev.contains_key(j) || (degrees && endpoints.contains(j));
                let recompute = fresh
                    || l == depth
                    || prev.contains_key(&i)
                    || hops
                        && (endpoints.contains(&i)
                            || inputs.neighbours(i as usize).iter().any(reads));
                if !recompute {
                    continue;
                }
                conv.row(i as usize, &inputs, &mut scratch, &mut row);
                self.net.activate(l - 1, &mut row);
                match l < depth {
                    true => {
                        let p = layers[l].project(&row, 1).into_rows();
                        next.insert(i, p);
                    }
                    false => out = row.clone(),
                }
            }
            prev = next;
        }
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

/// One layer's inputs on the edited graph: the bound projection, with the rows recomputed at
/// the layer below in place of theirs, and the toggled nodes' neighbour lists.
struct Overlaid<'r> {
    base: &'r Projection,
    over: &'r HashMap<u32, (Vec<f32>, Option<Vec<f32>>)>,
    touched: &'r HashMap<u32, Vec<u32>>,
    graph: &'r Graph,
}

impl RowInputs for Overlaid<'_> {
    fn a(&self, j: usize) -> &[f32] {
        match self.over.get(&(j as u32)) {
            Some((a, _)) => a,
            None => self.base.row_a(j),
        }
    }

    fn b(&self, j: usize) -> Option<&[f32]> {
        match self.over.get(&(j as u32)) {
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
