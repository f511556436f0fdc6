//! Uploading graphs to a device and the sparse kernels shared by the GCN and GAT layers.

use burn::tensor::{Device, IndexingUpdateOp, Int, Tensor, TensorData};

use crate::error::{ModelError, Result};
use crate::kernels::spmm::{Csr, CsrIndex};

pub use crate::ops::{index_tensor, index_tensor_below, indices, scatter_add_rows, to_vec};

/// A graph on a device as a directed message list: both directions of every undirected edge plus
/// one self loop per node, with the GCN normalisation of each message.
///
/// For undirected edges `E` and `n` nodes there are `E' = 2E + n` messages. Message `k` flows from
/// `src[k]` to `dst[k]` with weight `gcn_norm[k] = 1 / sqrt(d̃(src) d̃(dst))`, where `d̃` is the
/// degree plus one (the self loop): the entries of `Â = D̃^{-1/2} (A + I) D̃^{-1/2}`.
///
/// ```text
///  0 ─ 1     edges [(0, 1)], n = 3  →  src [0, 1, 0, 1, 2]
///            2 isolated                  dst [1, 0, 0, 1, 2]
/// ```
#[derive(Debug, Clone)]
pub struct GraphTensors {
    /// Number of nodes `n`.
    pub num_nodes: usize,
    /// Message sources, shape `[E']`.
    pub src: Tensor<1, Int>,
    /// Message destinations, shape `[E']`.
    pub dst: Tensor<1, Int>,
    /// GCN weights of the messages, shape `[E', 1]`.
    pub gcn_norm: Tensor<2>,
    /// The same messages sorted by destination, for atomic-free aggregation
    /// ([`GraphTensors::propagate`]).
    pub csr: Csr,
    /// How [`GraphTensors::propagate`] and [`GraphTensors::aggregate`] sum messages.
    pub aggregation: Aggregation,
    /// True when the messages live on a GPU: [`GraphTensors::softmax`] then runs without
    /// scatters (CubeCL runs a scatter into one column on one thread).
    pub sorted_on_gpu: bool,
}

/// How a layer sums its incoming messages. Both give the same numbers up to float summation
/// order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Aggregation {
    /// CSR segment reduction ([`Csr::matmul`]): one thread per destination row on the CPU, one
    /// lane per output entry on a GPU, no atomics. The default.
    #[default]
    Segment,
    /// Gather + scale + `select_assign(…, Add)`: the composition of Burn's own operations (a
    /// scatter-add: atomics on the GPU, one thread on Flex). Kept as the reference and for
    /// side-by-side benchmarks.
    ScatterAdd,
}

/// The host-side message list behind [`GraphTensors`] (useful for tests and plain-Rust kernels).
#[derive(Debug, Clone, PartialEq)]
pub struct Messages {
    /// Message sources.
    pub src: Vec<u32>,
    /// Message destinations.
    pub dst: Vec<u32>,
    /// GCN normalisation per message.
    pub norm: Vec<f32>,
}

/// Each node's degree plus one (its self loop) in the undirected edge list `edges` over `n`
/// nodes (each pair once, either orientation). Rejects out-of-range endpoints and self loops:
/// the validation of every message list built here and on the host.
///
/// ```text
///   0 ─ 1 ─ 2      degrees with self loops: 2, 3, 2
/// ```
pub(crate) fn degrees_with_self_loops(n: usize, edges: &[(u32, u32)]) -> Result<Vec<u32>> {
    let mut deg = vec![1u32; n];
    for &(u, w) in edges {
        for x in [u, w] {
            if x as usize >= n {
                return Err(ModelError::InvalidInput(format!(
                    "edge ({u}, {w}) has endpoint {x} outside the graph's {n} nodes"
                )));
            }
        }
        if u == w {
            return Err(ModelError::InvalidInput(format!(
                "self loop ({u}, {u}) in edge list"
            )));
        }
        deg[u as usize] += 1;
        deg[w as usize] += 1;
    }
    Ok(deg)
}

impl Messages {
    /// Builds the message list of an undirected graph given as `(u, w)` pairs (each pair once,
    /// either orientation). Rejects out-of-range endpoints and self loops.
    pub fn new(num_nodes: usize, edges: &[(u32, u32)]) -> Result<Self> {
        let deg = degrees_with_self_loops(num_nodes, edges)?;
        let m = 2 * edges.len() + num_nodes;
        let (mut src, mut dst, mut norm) = (
            Vec::with_capacity(m),
            Vec::with_capacity(m),
            Vec::with_capacity(m),
        );
        let inv: Vec<f32> = deg.iter().map(|&d| 1.0 / (d as f32).sqrt()).collect();
        for &(u, w) in edges {
            let nw = inv[u as usize] * inv[w as usize];
            src.extend([u, w]);
            dst.extend([w, u]);
            norm.extend([nw, nw]);
        }
        for u in 0..num_nodes as u32 {
            src.push(u);
            dst.push(u);
            norm.push(inv[u as usize] * inv[u as usize]);
        }
        Ok(Self { src, dst, norm })
    }

    /// The same messages stably sorted by destination (equal destinations keep their order),
    /// with the segment offsets `ptr` (`num_nodes + 1` entries: destination `v`'s messages are
    /// positions `ptr[v]..ptr[v + 1]`).
    ///
    /// ```
    /// use induce_models::kernels::tensors::Messages;
    /// //  0 ─ 1 : messages 0→1, 1→0, then the self loops 0→0, 1→1
    /// let (m, ptr) = Messages::new(2, &[(0, 1)]).unwrap().by_destination(2);
    /// assert_eq!((m.src, m.dst, ptr), (vec![1, 0, 0, 1], vec![0, 0, 1, 1], vec![0, 2, 4]));
    /// ```
    pub fn by_destination(&self, num_nodes: usize) -> (Messages, Vec<u32>) {
        let order = CsrIndex::by_destination(num_nodes, &self.src, &self.dst);
        let norm = order.perm.iter().map(|&k| self.norm[k as usize]).collect();
        let m = Messages {
            src: order.col,
            dst: order.row,
            norm,
        };
        (m, order.ptr)
    }
}

impl GraphTensors {
    /// Uploads an undirected graph (see [`Messages::new`]) to `device`.
    pub fn new(num_nodes: usize, edges: &[(u32, u32)], device: &Device) -> Result<Self> {
        let m = Messages::new(num_nodes, edges)?;
        Ok(Self::from_messages(num_nodes, &m, device))
    }

    /// Uploads a prepared message list, reordered by destination (so that [`Self::csr`] needs
    /// no permutation; the order of messages is otherwise immaterial).
    pub fn from_messages(num_nodes: usize, m: &Messages, device: &Device) -> Self {
        let (m, _) = m.by_destination(num_nodes);
        let csr = Csr::new(num_nodes, num_nodes, &m.src, &m.dst, device)
            .expect("a checked message list stays in range");
        Self::upload(num_nodes, m, csr, device)
    }

    /// Uploads the messages of an undirected graph with self loops (as [`Messages::new`] lists
    /// them) already sorted by destination ([`Messages::by_destination`]: `dst` and `src`,
    /// `ptr` the offsets) for forward passes, moving the arrays to the device without host
    /// copies ([`Csr::forward_only`]: no transpose is built or uploaded; a gradient through the
    /// aggregation takes the scatter-add composition). The GCN weights are not uploaded: they
    /// are computed on the device from the in-degrees (`ptr`), which in such a list are the
    /// degrees [`Messages::new`] normalises by. The same numbers as
    /// [`GraphTensors::from_messages`] up to float rounding of the weights.
    ///
    /// Errors when the list is not sorted by destination or leaves the node range.
    pub fn forward_only(
        num_nodes: usize,
        src: Vec<u32>,
        dst: Vec<u32>,
        ptr: Vec<u32>,
        device: &Device,
    ) -> Result<Self> {
        let csr = Csr::forward_only(num_nodes, num_nodes, dst, ptr, src, device)?;
        let (src, dst) = (csr.sources(), csr.destinations());
        let e = src.dims()[0];
        let ptr = csr.offsets();
        let deg = (ptr.clone().slice(1..num_nodes + 1) - ptr.slice(0..num_nodes)).float();
        let inv = deg.clamp_min(1.0).sqrt().recip();
        let gcn_norm =
            (inv.clone().select(0, src.clone()) * inv.select(0, dst.clone())).reshape([e, 1]);
        Ok(Self {
            sorted_on_gpu: crate::device::is_gpu(device),
            num_nodes,
            src,
            dst,
            gcn_norm,
            csr,
            aggregation: Aggregation::default(),
        })
    }

    /// Uploads the weights of messages sorted by destination beside their CSR index (whose
    /// arrays are the messages' sources and destinations: shared, not uploaded twice).
    fn upload(num_nodes: usize, m: Messages, csr: Csr, device: &Device) -> Self {
        let e = m.src.len();
        Self {
            sorted_on_gpu: crate::device::is_gpu(device),
            num_nodes,
            src: csr.sources(),
            dst: csr.destinations(),
            gcn_norm: Tensor::from_data(TensorData::new(m.norm, [e, 1]), device),
            csr,
            aggregation: Aggregation::default(),
        }
    }

    /// The same graph, summing messages the given way.
    pub fn with_aggregation(mut self, aggregation: Aggregation) -> Self {
        self.aggregation = aggregation;
        self
    }

    /// `Â X`: every node's sum of its incoming messages weighted by [`Self::gcn_norm`], as a
    /// CSR segment reduction ([`Csr::matmul`]; no scatter atomics, differentiable in the norms
    /// and in `x`).
    ///
    /// # Shapes
    /// - x: `[n, F]`; output: `[n, F]`
    pub fn propagate(&self, x: Tensor<2>) -> Tensor<2> {
        self.aggregate(self.gcn_norm.clone(), x)
    }

    /// Softmax of per-message scores over the messages into each node ([`segment_softmax`]).
    /// On a GPU, with messages sorted by destination, the same function without scatters: the
    /// per-node maximum by the CSR max kernel ([`Csr::segment_max`], one lane per node; exact,
    /// so the same maxima), the sums by the CSR kernel ([`Csr::matmul_sorted`] with a column of
    /// ones).
    ///
    /// # Shapes
    /// - scores: `[E', 1]`; output: `[E', 1]`
    pub fn softmax(&self, scores: Tensor<2>) -> Tensor<2> {
        if !self.sorted_on_gpu {
            return segment_softmax(scores, self.dst.clone(), self.num_nodes);
        }
        let e = scores.dims()[0];
        if e == 0 {
            return scores;
        }
        let device = scores.device();
        let flat = scores.clone().detach().reshape([e]);
        let seg_max = self.csr.segment_max(flat).select(0, self.dst.clone());
        let ex = (scores - seg_max.unsqueeze_dim(1)).exp();
        let ones = Tensor::<2>::ones([self.num_nodes, 1], &device);
        let denom = self.csr.matmul_sorted(ex.clone().reshape([e]), ones);
        ex / denom.select(0, self.dst.clone())
    }

    /// `Σ_k values[k] x[src k]` into each destination, for per-message values in this list's
    /// order (attention coefficients).
    ///
    /// # Shapes
    /// - values: `[E', 1]`; x: `[n, F]`; output: `[n, F]`
    pub fn aggregate(&self, values: Tensor<2>, x: Tensor<2>) -> Tensor<2> {
        match self.aggregation {
            Aggregation::Segment => self.csr.matmul(values, x),
            Aggregation::ScatterAdd => scatter_add_rows(
                x.select(0, self.src.clone()) * values,
                self.dst.clone(),
                self.num_nodes,
            ),
        }
    }
}

/// Whether the gradient with respect to the edge weights of a weighted graph flows through the
/// weighted degrees of its normalisation ([`WeightedEdges::with_weights`],
/// [`Gcn::forward_weighted`](crate::Gcn::forward_weighted),
/// [`EdgeWeighted::forward_weighted`](crate::EdgeWeighted::forward_weighted)). The output is the
/// same either way; only the gradient differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DegreeGradient {
    /// The degrees `d̃ = 1 + Σ w` are functions of the weights like the rest: the exact gradient.
    Through,
    /// The degrees are treated as constants (detached), as CF-GNNExplainer's released code does:
    /// the gradient reaches a weight through its messages only.
    Detached,
}

/// An undirected edge list on a device whose edges carry weights chosen at each forward pass
/// (a soft edge mask), for [`Gcn::forward_weighted`](crate::Gcn::forward_weighted).
///
/// Holds the message list of [`GraphTensors`] without its normalisation: message `k < 2m` is
/// one direction of edge `k mod m`; the last `n` messages are the self loops (weight 1).
///
/// ```
/// use burn::tensor::{Tensor, TensorData};
/// use induce_models::kernels::tensors::{WeightedEdges, to_vec};
/// use induce_models::device::default_device;
/// use induce_models::DegreeGradient;
/// let dev = default_device().unwrap();
/// //  0 ─ 1 ─ 2 with weights 1 and 0: the same normalisation as the single edge 0 ─ 1
/// let e = WeightedEdges::new(3, &[(0, 1), (1, 2)], &dev).unwrap();
/// let w = Tensor::from_data(TensorData::new(vec![1.0f32, 0.0], [2]), &dev);
/// let norm = to_vec(e.with_weights(w, DegreeGradient::Through).gcn_norm);
/// let want = [0.5, 0.0, 0.5, 0.0, 0.5, 0.5, 1.0];
/// assert!(norm.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6), "{norm:?}");
/// ```
#[derive(Debug, Clone)]
pub struct WeightedEdges {
    num_nodes: usize,
    num_edges: usize,
    src: Tensor<1, Int>,
    dst: Tensor<1, Int>,
    csr: Csr,
}

impl WeightedEdges {
    /// Uploads undirected `edges` (each pair once, no self loops, endpoints `< num_nodes`).
    pub fn new(num_nodes: usize, edges: &[(u32, u32)], device: &Device) -> Result<Self> {
        let m = Messages::new(num_nodes, edges)?;
        // Messages::new lists (u→w, w→u) per edge; regroup as all u→w, then all w→u, then loops.
        let k = edges.len();
        let (mut src, mut dst) = (
            Vec::with_capacity(m.src.len()),
            Vec::with_capacity(m.src.len()),
        );
        for dir in 0..2 {
            for e in 0..k {
                src.push(m.src[2 * e + dir]);
                dst.push(m.dst[2 * e + dir]);
            }
        }
        src.extend_from_slice(&m.src[2 * k..]);
        dst.extend_from_slice(&m.dst[2 * k..]);
        Ok(Self {
            num_nodes,
            num_edges: k,
            csr: Csr::new(num_nodes, num_nodes, &src, &dst, device)?,
            src: indices(&src, device),
            dst: indices(&dst, device),
        })
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// Number of undirected edges (the length of a weight vector).
    pub fn num_edges(&self) -> usize {
        self.num_edges
    }

    /// The raw message list: sources, destinations and weights `[w, w, loop_weight…]` (each edge
    /// in both directions, then one self loop per node), for layers that weight messages in
    /// their own way (the PyG layers: a loop weight of 0 removes the loops exactly).
    ///
    /// # Shapes
    /// - weights: `[m]`; output: (`[2m + n]`, `[2m + n]`, `[2m + n, 1]`)
    pub fn messages(
        &self,
        weights: Tensor<1>,
        loop_weight: f32,
    ) -> (Tensor<1, Int>, Tensor<1, Int>, Tensor<2>) {
        let device = weights.device();
        let loops = Tensor::<1>::full([self.num_nodes], loop_weight, &device);
        let full = Tensor::cat(vec![weights.clone(), weights, loops], 0).unsqueeze_dim::<2>(1);
        (self.src.clone(), self.dst.clone(), full)
    }

    /// `Σ_k values[k] x[src k]` into each destination for per-message values in the order of
    /// [`WeightedEdges::messages`], through the CSR segment kernel ([`Csr::matmul`]).
    ///
    /// # Shapes
    /// - values: `[2m + n, 1]`; x: `[n, F]`; output: `[n, F]`
    pub fn aggregate(&self, values: Tensor<2>, x: Tensor<2>) -> Tensor<2> {
        self.csr.matmul(values, x)
    }

    /// The message list with the GCN normalisation of the weighted graph: message weights
    /// `[w, w, 1…]`, weighted degrees `d̃ = 1 + Σ w`, norm `w_k / sqrt(d̃(src) d̃(dst))`.
    /// Differentiable in `weights`; with [`DegreeGradient::Detached`] the degrees are treated as
    /// constants, as CF-GNNExplainer's released code does.
    ///
    /// # Shapes
    /// - weights: `[m]`
    pub fn with_weights(
        &self,
        weights: Tensor<1>,
        degree_gradient: DegreeGradient,
    ) -> GraphTensors {
        let device = weights.device();
        let n = self.num_nodes;
        let full = Tensor::cat(
            vec![weights.clone(), weights, Tensor::ones([n], &device)],
            0,
        );
        let full = full.unsqueeze_dim::<2>(1);
        let deg = match degree_gradient {
            DegreeGradient::Through => full.clone(),
            DegreeGradient::Detached => full.clone().detach(),
        };
        let deg = scatter_add_rows(deg, self.dst.clone(), n);
        let inv = deg.powf_scalar(-0.5);
        let norm = full * inv.clone().select(0, self.src.clone()) * inv.select(0, self.dst.clone());
        GraphTensors {
            num_nodes: n,
            src: self.src.clone(),
            dst: self.dst.clone(),
            gcn_norm: norm,
            csr: self.csr.clone(),
            aggregation: Aggregation::default(),
            // These messages are not sorted by destination.
            sorted_on_gpu: false,
        }
    }
}

/// The dense product `x · w`: the backend's matrix product, or, while
/// [`exact_matmul`](crate::device::exact_matmul) is on, element-wise products summed over the
/// shared dimension (exact `f32` on every device, where CubeCL's matrix product runs in TF32
/// on GPUs with tensor cores; in row blocks of at most 2²² products, so slow for large inputs:
/// meant for checks on small graphs). Differentiable either way.
///
/// # Shapes
/// - x: `[n, k]`; w: `[k, m]`; output: `[n, m]`
///
/// ```
/// use induce_models::device::{default_device, set_exact_matmul};
/// use induce_models::kernels::tensors::{dense, matrix, to_vec};
/// let dev = default_device().unwrap();
/// let x = matrix(&[1.0, 2.0, 3.0, 4.0], 2, 2, &dev);
/// let w = matrix(&[1.0, 0.5, -1.0, 2.0], 2, 2, &dev);
/// set_exact_matmul(true);
/// assert_eq!(to_vec(dense(x.clone(), w.clone())), vec![-1.0, 4.5, -1.0, 9.5]);
/// set_exact_matmul(false);
/// assert_eq!(to_vec(dense(x, w)), vec![-1.0, 4.5, -1.0, 9.5]);
/// ```
pub fn dense(x: Tensor<2>, w: Tensor<2>) -> Tensor<2> {
    match crate::device::exact_matmul() {
        true => dense_exact(x, w),
        false => x.matmul(w),
    }
}

/// `x · w` as element-wise products summed over the shared dimension, in row blocks of at most
/// 2²² products (one row per block where a row alone has more): [`dense`] in exact mode,
/// whatever the mode.
///
/// # Shapes
/// - x: `[n, k]`; w: `[k, m]`; output: `[n, m]`
pub(crate) fn dense_exact(x: Tensor<2>, w: Tensor<2>) -> Tensor<2> {
    let [n, k] = x.dims();
    let m = w.dims()[1];
    if n == 0 || k == 0 || m == 0 {
        return Tensor::zeros([n, m], &x.device());
    }
    let rows = ((1usize << 22) / (k * m).max(1)).max(1);
    let w = w.unsqueeze_dim::<3>(0);
    let block = |x: Tensor<2>| -> Tensor<2> {
        let r = x.dims()[0];
        (x.unsqueeze_dim::<3>(2) * w.clone())
            .sum_dim(1)
            .reshape([r, m])
    };
    match n <= rows {
        true => block(x),
        false => Tensor::cat(
            (0..n)
                .step_by(rows)
                .map(|a| block(x.clone().slice([a..(a + rows).min(n), 0..k])))
                .collect(),
            0,
        ),
    }
}

/// A linear layer's forward pass through [`dense`]: `x · W + b`.
///
/// # Shapes
/// - x: `[n, d_input]`; output: `[n, d_output]`
pub fn linear(layer: &burn::nn::Linear, x: Tensor<2>) -> Tensor<2> {
    let y = dense(x, layer.weight.val());
    match &layer.bias {
        Some(b) => y + b.val().unsqueeze_dim(0),
        None => y,
    }
}

/// Uploads a row-major `[rows, cols]` matrix.
pub fn matrix(data: &[f32], rows: usize, cols: usize, device: &Device) -> Tensor<2> {
    Tensor::from_data(TensorData::new(data.to_vec(), [rows, cols]), device)
}

/// `t[at[k]] += values[k]` on a vector, by the backend's parallel scatter (atomic additions on a
/// GPU; `select_assign` would run one GPU thread over every index of a vector). The order of the
/// additions is unspecified: use it where every order gives the same sums (small integers, or
/// one addition per position).
///
/// ```
/// use induce_models::{device::default_device, kernels::tensors::{add_at, to_vec}};
/// use burn::tensor::Tensor;
/// let dev = default_device().unwrap();
/// let t = add_at(Tensor::<1>::zeros([4], &dev), vec![1, 3, 1], vec![1.0, -1.0, 1.0]);
/// assert_eq!(to_vec(t.reshape([1, 4])), vec![0.0, 2.0, 0.0, -1.0]);
/// ```
///
/// # Shapes
/// - t: `[n]`; at, values: `[k]`; output: `[n]`
pub fn add_at(t: Tensor<1>, at: Vec<u32>, values: Vec<f32>) -> Tensor<1> {
    if at.is_empty() {
        return t;
    }
    let (n, k, dev) = (t.dims()[0], values.len(), t.device());
    let index = index_tensor_below(at, n, &dev);
    t.scatter(
        0,
        index,
        Tensor::from_data(TensorData::new(values, [k]), &dev),
        IndexingUpdateOp::Add,
    )
}

/// Softmax of edge scores over the incoming messages of each destination node.
///
/// The per-node maximum is subtracted for stability; it is detached (a constant shift does not
/// change the softmax, so no gradient is lost).
///
/// # Shapes
/// - scores: `[E, 1]`
/// - dst: `[E]`
/// - output: `[E, 1]`, summing to 1 over the messages of each destination
pub fn segment_softmax(scores: Tensor<2>, dst: Tensor<1, Int>, n: usize) -> Tensor<2> {
    let device = scores.device();
    let seg_max = Tensor::<2>::full([n, 1], -1e30, &device).select_assign(
        0,
        dst.clone(),
        scores.clone().detach(),
        IndexingUpdateOp::Max,
    );
    let ex = (scores - seg_max.select(0, dst.clone())).exp();
    let denom = scatter_add_rows(ex.clone(), dst.clone(), n);
    ex / denom.select(0, dst)
}

/// Log-softmax of scores within segments (e.g. the candidate actions of each of a batch of
/// states): `out[k] = s[k] − log Σ_{j: seg[j] = seg[k]} exp(s[j])`.
///
/// # Shapes
/// - scores: `[C, 1]`
/// - seg: `[C]`, values in `0..num_segments`
/// - output: `[C, 1]`
pub fn segment_log_softmax(
    scores: Tensor<2>,
    seg: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<2> {
    let device = scores.device();
    let seg_max = Tensor::<2>::full([num_segments, 1], -1e30, &device).select_assign(
        0,
        seg.clone(),
        scores.clone().detach(),
        IndexingUpdateOp::Max,
    );
    let shifted = scores - seg_max.select(0, seg.clone());
    let denom = scatter_add_rows(shifted.clone().exp(), seg.clone(), num_segments);
    shifted - denom.log().select(0, seg)
}

/// [`to_vec`] that reports a failure of the device (the computation behind `t`, or the read)
/// as [`ModelError::DeviceExecution`] naming `what`, instead of panicking.
pub fn try_to_vec(t: Tensor<2>, what: &str) -> Result<Vec<f32>> {
    let failed = |reason: String| ModelError::DeviceExecution {
        what: what.to_owned(),
        reason,
    };
    t.try_into_data()
        .map_err(|e| failed(e.to_string()))?
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| failed(format!("{e:?}")))
}

/// The indices of an integer tensor, read back from its device; a device failure (e.g. an
/// out-of-memory or a kernel the driver rejected) is a [`ModelError::DeviceExecution`] naming
/// `what`, not a panic.
///
/// ```
/// use induce_models::device::default_device;
/// use induce_models::kernels::tensors::{index_tensor, try_indices};
/// let dev = default_device().unwrap();
/// assert_eq!(try_indices(index_tensor(vec![3, 1], &dev), "ids").unwrap(), vec![3, 1]);
/// ```
pub fn try_indices(t: Tensor<1, Int>, what: &str) -> Result<Vec<i64>> {
    let data = t.try_into_data().map_err(|e| ModelError::DeviceExecution {
        what: what.to_owned(),
        reason: e.to_string(),
    })?;
    Ok(data.iter::<i64>().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact product equals the matrix product on small integers (exact in any order), in
    /// one block and in many, and carries the same gradients.
    #[test]
    fn the_exact_product_is_the_matrix_product() {
        let dev = crate::testing::test_device().unwrap();
        // 5 x 3 times 3 x 2, every product and sum an exact small integer.
        let x: Vec<f32> = (0..15).map(|i| (i % 7) as f32 - 3.0).collect();
        let w: Vec<f32> = vec![1.0, -2.0, 0.0, 3.0, 2.0, 1.0];
        let want = to_vec(matrix(&x, 5, 3, &dev).matmul(matrix(&w, 3, 2, &dev)));
        assert_eq!(want[..4], [-5.0, -1.0, 4.0, 5.0]);
        assert_eq!(
            to_vec(dense_exact(matrix(&x, 5, 3, &dev), matrix(&w, 3, 2, &dev))),
            want
        );
        // 2^22 / (k m) rows per block: 300,000 x 7 times 7 x 2 makes 2 blocks.
        let (n, k) = (300_000usize, 7usize);
        let big: Vec<f32> = (0..n * k).map(|i| (i % 5) as f32).collect();
        let w2: Vec<f32> = vec![
            1.0, 0.0, 2.0, -1.0, 0.0, 1.0, 3.0, 1.0, -2.0, 0.0, 1.0, 1.0, 0.0, 2.0,
        ];
        let a = to_vec(matrix(&big, n, k, &dev).matmul(matrix(&w2, k, 2, &dev)));
        let b = to_vec(dense_exact(
            matrix(&big, n, k, &dev),
            matrix(&w2, k, 2, &dev),
        ));
        assert_eq!(a, b);
        // Empty sides give zeros of the product's shape.
        let none = dense_exact(Tensor::zeros([0, 3], &dev), matrix(&w, 3, 2, &dev));
        assert_eq!(none.dims(), [0, 2]);
        let inner = dense_exact(Tensor::zeros([2, 0], &dev), Tensor::zeros([0, 2], &dev));
        assert_eq!(to_vec(inner), vec![0.0; 4]);
        let ad = dev.clone().autodiff();
        let grads = |exact: bool| {
            let xt = matrix(&x, 5, 3, &ad).require_grad();
            let wt = matrix(&w, 3, 2, &ad).require_grad();
            let y = match exact {
                true => dense_exact(xt.clone(), wt.clone()),
                false => xt.clone().matmul(wt.clone()),
            };
            let g = (y.clone() * y).sum().backward();
            (to_vec(xt.grad(&g).unwrap()), to_vec(wt.grad(&g).unwrap()))
        };
        assert_eq!(grads(true), grads(false));
    }

    /// A forward-only upload (GCN weights computed on the device from the offsets) gives the
    /// messages, weights and propagation of the full upload; `index_tensor` equals `indices`.
    #[test]
    fn forward_only_upload_matches_the_full_one() {
        let dev = crate::testing::test_device().unwrap();
        //  0 ─ 1 ─ 2 ─ 3,  1 ─ 3,  4 isolated
        let edges = [(0, 1), (1, 2), (2, 3), (1, 3)];
        let full = GraphTensors::new(5, &edges, &dev).unwrap();
        let (m, ptr) = Messages::new(5, &edges).unwrap().by_destination(5);
        let fwd = GraphTensors::forward_only(5, m.src.clone(), m.dst.clone(), ptr, &dev).unwrap();
        assert_eq!(fwd.src.to_data(), full.src.to_data());
        assert_eq!(fwd.dst.to_data(), full.dst.to_data());
        let (a, b) = (to_vec(fwd.gcn_norm.clone()), to_vec(full.gcn_norm.clone()));
        assert_eq!(a.len(), m.norm.len());
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-6, "{a:?} vs {b:?}");
        }
        let x = matrix(&[1.0, -2.0, 3.0, 0.5, 4.0], 5, 1, &dev);
        let (pa, pb) = (to_vec(fwd.propagate(x.clone())), to_vec(full.propagate(x)));
        for (x, y) in pa.iter().zip(&pb) {
            assert!((x - y).abs() < 1e-5, "{pa:?} vs {pb:?}");
        }
        let ids = vec![0, 4, 2, 4];
        let up = index_tensor(ids.clone(), &dev).into_data();
        assert_eq!(up, indices(&ids, &dev).into_data());
    }

    /// The scatter-free softmax (the GPU form) equals [`segment_softmax`], its per-node maxima
    /// exactly, on a graph with a hub, a path and an isolated node (self loops only).
    #[test]
    fn gpu_softmax_equals_the_scatter_form() {
        let dev = crate::testing::test_device().unwrap();
        //  hub 0 ─ 1..6,  6 ─ 7 ─ 8,  9 isolated
        let mut edges: Vec<(u32, u32)> = (1..7).map(|v| (0, v)).collect();
        edges.extend([(6, 7), (7, 8)]);
        let mut g = GraphTensors::new(10, &edges, &dev).unwrap();
        let e = g.src.dims()[0];
        let scores: Vec<f32> = (0..e).map(|k| ((k * 37 % 11) as f32 - 5.0) * 0.7).collect();
        let s = Tensor::<2>::from_data(TensorData::new(scores.clone(), [e, 1]), &dev);
        let want = to_vec(segment_softmax(s.clone(), g.dst.clone(), 10));
        // A GPU device takes the scatter-free form by itself, the CPU keeps the scatter form.
        assert_eq!(g.sorted_on_gpu, crate::device::is_gpu(&dev));
        g.sorted_on_gpu = true;
        let got = to_vec(g.softmax(s.clone()));
        for (a, b) in got.iter().zip(&want) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
        // The maxima themselves, exactly, against a host loop.
        let dst: Vec<u32> = g
            .dst
            .clone()
            .into_data()
            .convert::<u32>()
            .try_to_vec::<u32>()
            .unwrap();
        let m = to_vec(g.csr.segment_max(s.reshape([e])).unsqueeze_dim(0));
        for v in 0..10u32 {
            let host = (0..e)
                .filter(|&j| dst[j] == v)
                .map(|j| scores[j])
                .fold(-1e30f32, f32::max);
            assert_eq!(m[v as usize], host, "node {v}");
        }
    }

    #[test]
    fn message_list_and_norms() {
        // path 0 - 1 - 2: degrees with self loop 2, 3, 2
        let m = Messages::new(3, &[(0, 1), (2, 1)]).unwrap();
        assert_eq!(m.src, vec![0, 1, 2, 1, 0, 1, 2]);
        assert_eq!(m.dst, vec![1, 0, 1, 2, 0, 1, 2]);
        let n01 = 1.0 / (6.0f32).sqrt();
        assert!((m.norm[0] - n01).abs() < 1e-7);
        assert!((m.norm[4] - 0.5).abs() < 1e-7);
        assert!((m.norm[5] - 1.0 / 3.0).abs() < 1e-7);
        assert!(Messages::new(2, &[(0, 2)]).is_err());
        assert!(Messages::new(2, &[(1, 1)]).is_err());
    }

    #[test]
    fn unit_weights_give_the_plain_normalisation() {
        let d = crate::testing::test_device().unwrap();
        let edges = [(0, 1), (2, 1), (1, 3)];
        let plain = Messages::new(4, &edges).unwrap();
        let e = WeightedEdges::new(4, &edges, &d).unwrap();
        assert_eq!((e.num_nodes(), e.num_edges()), (4, 3));
        let g = e.with_weights(Tensor::ones([3], &d), DegreeGradient::Through);
        let norm = to_vec(g.gcn_norm);
        let src = to_vec(g.src.float().unsqueeze_dim(1));
        let dst = to_vec(g.dst.float().unsqueeze_dim(1));
        // Same messages as the plain list, regrouped: (u→w for every edge, w→u, loops).
        let order = [0, 2, 4, 1, 3, 5, 6, 7, 8, 9];
        for (k, &j) in order.iter().enumerate() {
            assert_eq!((src[k] as u32, dst[k] as u32), (plain.src[j], plain.dst[j]));
            assert!((norm[k] - plain.norm[j]).abs() < 1e-6, "{k}");
        }
    }

    #[test]
    fn segment_log_softmax_normalises_each_segment() {
        let d = crate::testing::test_device().unwrap();
        let s = matrix(&[1.0, 2.0, 3.0, -1.0, 1000.0], 5, 1, &d);
        let seg = indices(&[0, 0, 1, 1, 2], &d);
        let out = to_vec(segment_log_softmax(s, seg, 3));
        let l = |a: f64, b: f64| (a - (a.exp() + b.exp()).ln()) as f32;
        let want = [l(1.0, 2.0), l(2.0, 1.0), l(3.0, -1.0), l(-1.0, 3.0), 0.0];
        for (o, w) in out.iter().zip(want) {
            assert!((o - w).abs() < 1e-6, "{out:?}");
        }
    }
}
