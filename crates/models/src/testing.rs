//! Test support: the device the test suites run on ([`test_device`], chosen by
//! `INDUCE_BACKEND`) and toy black boxes for tests and doc examples, rules on a node's degree
//! whose answers can be worked out by hand.

use induce_graph::Features;

use burn::tensor::Device;

use crate::device::{BackendKind, device, float_tolerance_on};
use crate::{BlackBox, LogProbs, Result};

/// The backend the test suites run on: the one [`BACKEND_ENV`](crate::device::BACKEND_ENV)
/// names (how CI and the GPU check run the same tests on ndarray, CubeCL's CPU runtime or a
/// GPU), else the default one.
pub fn test_backend() -> Result<BackendKind> {
    BackendKind::from_env_or_default()
}

/// The plain device of [`test_backend`].
pub fn test_device() -> Result<Device> {
    device(test_backend()?)
}

/// [`float_tolerance_on`] the [`test_backend`] (the CPU's `cpu` when it cannot be read).
pub fn float_tolerance(cpu: f32) -> f32 {
    test_backend().map_or(cpu, |b| float_tolerance_on(b, cpu))
}

/// Whether tests should sweep fewer shapes: true when the test backend is CubeCL's CPU
/// runtime, which compiles (LLVM, aggressive optimisation) a kernel for every new operation and
/// shape it meets, so a test that sweeps many shapes spends minutes there compiling kernels its
/// other shapes already checked. CI runs every test on Flex with the whole sweep, and the GPU
/// check runs them whole on a GPU. For this crate's tests and integration tests.
#[doc(hidden)]
pub fn reduced_test_sweeps() -> bool {
    matches!(test_backend(), Ok(BackendKind::CubeCpu))
}

/// A test's sweep of shapes: all of `all`, or only the items at `few` when
/// [`reduced_test_sweeps`].
#[cfg(test)]
pub(crate) fn sweep<T: Clone>(all: &[T], few: &[usize]) -> Vec<T> {
    if reduced_test_sweeps() {
        few.iter().map(|&i| all[i].clone()).collect()
    } else {
        all.to_vec()
    }
}

/// Each node's degree in the undirected edge list `edges` over `num_nodes` nodes (each pair
/// listed once): what the toy rules read.
///
/// ```
/// //  0 ─ 1 ─ 2
/// assert_eq!(induce_models::testing::degrees(3, &[(0, 1), (1, 2)]), vec![1, 2, 1]);
/// ```
pub fn degrees(num_nodes: usize, edges: &[(u32, u32)]) -> Vec<usize> {
    let mut deg = vec![0usize; num_nodes];
    for &(u, w) in edges {
        deg[u as usize] += 1;
        deg[w as usize] += 1;
    }
    deg
}

/// The [`BlackBox`] of a two-class rule on a node's degree (`$ty(t)`, threshold `t`): each
/// node's log-probabilities are `$rows(t, degree)`; one feature, no neighbour read (`L = 0`).
macro_rules! degree_rule {
    ($ty:ident, $rows:expr) => {
        impl BlackBox for $ty {
            fn input_dim(&self) -> usize {
                1
            }

            fn num_classes(&self) -> usize {
                2
            }

            fn message_passing_layers(&self) -> Option<u32> {
                Some(0)
            }

            fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
                let rows: fn(usize, usize) -> [f32; 2] = $rows;
                let d = degrees(x.num_nodes(), edges)
                    .into_iter()
                    .flat_map(|d| rows(self.0, d));
                LogProbs::new(x.num_nodes(), 2, d.collect())
            }
        }
    };
}

/// Class 1 iff the node's degree is at least `t` (log-probabilities −0.2 for the predicted
/// class, −2.0 for the other); it reads a node's own edges only (`L = 0`). The toy of the doc
/// examples: which edits flip a node can be read off the drawing.
///
/// ```
/// use induce_graph::{Features, Graph};
/// use induce_models::BlackBox;
/// use induce_models::testing::DegreeAtLeast;
/// //  0 ─ 1 ─ 2     degrees 1, 2, 1
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], Features::constant(3, 1, 1.0), vec![0; 3])
///     .unwrap();
/// let lp = DegreeAtLeast(2).log_probs(g.features(), &g.edges()).unwrap();
/// assert_eq!((lp.argmax(0), lp.argmax(1)), (0, 1));
/// assert_eq!(lp.row(1), &[-2.0, -0.2]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DegreeAtLeast(pub usize);

degree_rule!(DegreeAtLeast, |t, d| match d >= t {
    true => [-2.0, -0.2],
    false => [-0.2, -2.0],
});

/// `B` with its [`message_passing_layers`](BlackBox::message_passing_layers) hidden (`None`):
/// a model whose receptive field is unknown, so that an exact verdict reads the whole graph.
#[derive(Debug, Clone, Copy)]
pub struct Undeclared<B>(pub B);

impl<B: BlackBox> BlackBox for Undeclared<B> {
    fn input_dim(&self) -> usize {
        self.0.input_dim()
    }

    fn num_classes(&self) -> usize {
        self.0.num_classes()
    }

    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
        self.0.log_probs(x, edges)
    }
}

/// Class 1 with probability `sigmoid(degree − t + ½)`: class 1 iff the node's degree is at
/// least `t`, with a margin that moves with every edit at the node (which it alone reads:
/// `L = 0`).
///
/// ```
/// use induce_graph::{Features, Graph};
/// use induce_models::BlackBox;
/// use induce_models::testing::GradedDegree;
/// //  0 ─ 1 ─ 2     degrees 1, 2, 1
/// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], Features::constant(3, 1, 1.0), vec![0; 3])
///     .unwrap();
/// let lp = GradedDegree(2).log_probs(g.features(), &g.edges()).unwrap();
/// assert_eq!((lp.argmax(0), lp.argmax(1)), (0, 1));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct GradedDegree(pub usize);

degree_rule!(GradedDegree, |t, d| {
    let z = d as f32 - t as f32 + 0.5;
    // log sigmoid(−z), log sigmoid(z)
    [-(1.0 + z.exp()).ln(), -(1.0 + (-z).exp()).ln()]
});

/// `B` as a model that [batches graphs](BlackBox::batches_graphs), counting the calls of
/// [`BlackBox::log_probs_many`] and the graphs they held: the searches' batched path, checked
/// against `B` itself.
///
/// ```
/// use induce_graph::Features;
/// use induce_models::BlackBox;
/// use induce_models::testing::{Batching, GradedDegree};
/// let b = Batching::new(GradedDegree(1));
/// let x = Features::constant(2, 1, 1.0);
/// let lps = b.log_probs_many(&[(&x, &[(0, 1)]), (&x, &[])]).unwrap();
/// assert_eq!((lps[0].argmax(0), lps[1].argmax(0)), (1, 0));
/// assert_eq!(b.calls(), (1, 2));
/// ```
#[derive(Debug, Default)]
pub struct Batching<B> {
    inner: B,
    calls: std::sync::atomic::AtomicUsize,
    graphs: std::sync::atomic::AtomicUsize,
}

impl<B> Batching<B> {
    /// `inner`, batching.
    pub fn new(inner: B) -> Self {
        Self {
            inner,
            calls: Default::default(),
            graphs: Default::default(),
        }
    }

    /// `(calls, graphs)` of [`BlackBox::log_probs_many`] so far.
    pub fn calls(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.calls.load(Relaxed), self.graphs.load(Relaxed))
    }
}

impl<B: BlackBox> BlackBox for Batching<B> {
    fn input_dim(&self) -> usize {
        self.inner.input_dim()
    }
    fn num_classes(&self) -> usize {
        self.inner.num_classes()
    }
    fn message_passing_layers(&self) -> Option<u32> {
        self.inner.message_passing_layers()
    }
    fn log_probs(&self, x: &Features, edges: &[(u32, u32)]) -> Result<LogProbs> {
        self.inner.log_probs(x, edges)
    }
    fn batches_graphs(&self) -> bool {
        true
    }
    fn log_probs_many(&self, graphs: &[(&Features, &[(u32, u32)])]) -> Result<Vec<LogProbs>> {
        use std::sync::atomic::Ordering::Relaxed;
        self.calls.fetch_add(1, Relaxed);
        self.graphs.fetch_add(graphs.len(), Relaxed);
        graphs
            .iter()
            .map(|&(x, e)| self.inner.log_probs(x, e))
            .collect()
    }
}
