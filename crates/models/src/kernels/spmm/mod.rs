//! Message passing as a CSR segment reduction, without scatter atomics.
//!
//! A graph layer's aggregation `out[v] = Σ_{k: dst[k] = v} w[k] · x[src[k]]` is a sparse-dense
//! product `A X` with `A[v, u] = w`. Written as `select` + `select_assign(…, Add)` it is a
//! scatter-add: atomics on the GPU (compare-and-swap loops on Vulkan), one thread on Flex. Here the
//! messages are sorted by destination once ([`Csr`]), so every output row is one contiguous
//! segment that a single thread (CPU) or a single GPU lane per feature reduces on its own, and the
//! backward pass runs the same kernel on the transpose (messages sorted by source).
//!
//! ```text
//!   messages (src → dst, w)         CSR by destination         transpose (by source)
//!   0 → 1  0.5                      row 0: [2 → 0  0.25]       row 0: [0 → 1  0.5]
//!   2 → 0  0.25                     row 1: [0 → 1  0.5,        row 1: []
//!   2 → 1  1.0                              2 → 1  1.0]        row 2: [2 → 0, 2 → 1]
//! ```
//!
//! The operation is a Burn backend extension ([`MessagePassing`]): a multithreaded kernel on
//! Flex, CubeCL kernels on the GPU backends (`cuda`, `vulkan`), the plain tensor-op composition
//! elsewhere (ndarray), and a hand-written backward for autodiff (gradients for the features and
//! for the message weights).

use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::{Backend, ExtensionType, TensorMetadata, backend_extension};
use burn::tensor::IndexingUpdateOp;
use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::error::{ModelError, Result};

mod autodiff;
#[cfg(feature = "flex")]
mod cpu;
#[cfg(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu"))]
mod cube;

/// The index tensors of a CSR on a backend: `ptr[r]..ptr[r + 1]` are row `r`'s positions,
/// `row[k]` the row holding position `k`, `col[k]` its column (see [`MessagePassing`]).
///
/// # Shapes
/// - row, col: `[E]`; ptr: `[R + 1]`
#[derive(ExtensionType)]
pub struct Segments<B: Backend> {
    /// The row of each position.
    pub row: IntTensor<B>,
    /// Each row's first position, then the number of positions.
    pub ptr: IntTensor<B>,
    /// The column of each position.
    pub col: IntTensor<B>,
}

impl<B: Backend> std::fmt::Debug for Segments<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segments")
            .field("row", &self.row)
            .field("ptr", &self.ptr)
            .field("col", &self.col)
            .finish()
    }
}

impl<B: Backend> Clone for Segments<B> {
    fn clone(&self) -> Self {
        Self {
            row: self.row.clone(),
            ptr: self.ptr.clone(),
            col: self.col.clone(),
        }
    }
}

/// The message-passing kernels every backend provides (a Burn backend extension).
///
/// All index tensors are 1-D; `ptr` has one more entry than the output has rows and is
/// non-decreasing; `row[k]` is the row whose segment holds position `k` (so `row` and `ptr`
/// describe the same partition); `col[k] < x.rows`.
#[backend_extension(
    Flex: cfg(feature = "flex"),
    NdArray: cfg(feature = "ndarray"),
    Cube: cfg(any(feature = "cuda", feature = "vulkan", feature = "cube-cpu")),
    Autodiff
)]
pub trait MessagePassing: Backend {
    /// Segment-reduced product: `out[r] = Σ_{k ∈ ptr[r]..ptr[r+1]} val[k] · x[col[k]]` over the
    /// CSR `csr`.
    ///
    /// `t` describes the transpose (the same positions sorted by `col`) and `t_perm[j]` is the
    /// position in this CSR of the transpose's position `j`; only the autodiff backend reads
    /// them (for the gradient of `x`).
    ///
    /// # Shapes
    /// - csr: `[E]`, `[R + 1]`, `[E]`; val, t_perm: `[E]`; t: `[E]`, `[x.rows + 1]`, `[E]`
    /// - x: `[N, F]`; output: `[R, F]`
    fn segment_matmul(
        #[extension_type] csr: Segments<Self>,
        val: FloatTensor<Self>,
        x: FloatTensor<Self>,
        #[extension_type] t: Segments<Self>,
        t_perm: IntTensor<Self>,
    ) -> FloatTensor<Self> {
        let _ = (t, t_perm);
        reference_matmul::<Self>(csr.row, csr.ptr, csr.col, val, x)
    }

    /// Per-position dot products `out[k] = Σ_f a[row[k], f] · b[col[k], f]` (the gradient of
    /// [`MessagePassing::segment_matmul`] with respect to its weights).
    ///
    /// # Shapes
    /// - row, col: `[E]`; ptr: `[R + 1]`; a: `[R, F]`; b: `[N, F]`; output: `[E]`
    fn segment_dot(
        row: IntTensor<Self>,
        ptr: IntTensor<Self>,
        col: IntTensor<Self>,
        a: FloatTensor<Self>,
        b: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let _ = ptr;
        reference_dot::<Self>(row, col, a, b)
    }

    /// Per-row maxima of values given in sorted order: `out[r] = max_{k ∈ ptr[r]..ptr[r+1]}
    /// val[k]`, and `-1e30` for an empty row. Not differentiable: for the stabilising shift of a
    /// softmax, which is detached (a constant shift does not change the softmax).
    ///
    /// # Shapes
    /// - row, val: `[E]`; ptr: `[R + 1]`; output: `[R]`
    fn segment_max(
        row: IntTensor<Self>,
        ptr: IntTensor<Self>,
        val: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        reference_max::<Self>(row, ptr, val)
    }

    /// Each row's greedy choice, counted from the row's start: the first position of the
    /// largest value of the row's log-softmax, `argmax_k (val[k] − lse_r)` with `lse_r =
    /// max_r + ln Σ exp(val[k] − max_r)` summed in order, exactly as the host's greedy choice
    /// takes it (values closer to the maximum than the subtraction's rounding tie, and the first
    /// wins; a NaN is passed over); `0` for an empty row. Not differentiable. For greedy choices
    /// over many segments at once: one index per segment comes back from the device instead of
    /// every value. A GPU's `exp` and `ln` may round `lse_r` another way than the host's, and
    /// for long rows (one cube per row) its sum is taken in a tree, not in order.
    ///
    /// # Shapes
    /// - ptr: `[R + 1]`; val: `[E]`; output: `[R]` (the integer type of `ptr`)
    fn segment_greedy(ptr: IntTensor<Self>, val: FloatTensor<Self>) -> IntTensor<Self> {
        reference_greedy::<Self>(ptr, val)
    }
}

/// `segment_greedy` on the host: reads both tensors back, loops, uploads the result (for the
/// CPU backends, where reading back is a copy; the GPU backends have a kernel).
pub(crate) fn reference_greedy<B: Backend>(ptr: IntTensor<B>, val: FloatTensor<B>) -> IntTensor<B> {
    let device = ptr.device();
    let dtype = ptr.dtype();
    let read = |data: Option<std::result::Result<TensorData, _>>, what: &str| {
        data.unwrap_or_else(|| panic!("segment_greedy: {what} cannot be read synchronously"))
            .unwrap_or_else(|e| panic!("segment_greedy: reading {what} failed: {e:?}"))
    };
    let ptr_data = read(burn::tensor::try_read_sync(B::int_into_data(ptr)), "ptr");
    let val_data = read(
        burn::tensor::try_read_sync(B::float_into_data(val)),
        "values",
    );
    let ptr_v: Vec<i64> = ptr_data.iter::<i64>().collect();
    let val_v: Vec<f32> = val_data.iter::<f32>().collect();
    let out: Vec<i64> = ptr_v
        .windows(2)
        .map(|w| {
            let (start, end) = (w[0] as usize, w[1] as usize);
            match val_v.get(start..end) {
                Some(seg) if !seg.is_empty() => greedy(seg) as i64,
                _ => 0,
            }
        })
        .collect();
    let rows = out.len();
    B::int_from_data(TensorData::new(out, [rows]).convert_dtype(dtype), &device)
}

/// The host's greedy choice over one non-empty row of scores: the first position of the largest
/// log-softmax value (a NaN passed over: the next value replaces it).
pub(crate) fn greedy(scores: &[f32]) -> usize {
    let v = crate::ops::log_softmax(scores);
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] || v[best].is_nan() {
            best = i;
        }
    }
    best
}

/// `segment_max` composed of Burn's own operations (a scatter with `Max`).
pub(crate) fn reference_max<B: Backend>(
    row: IntTensor<B>,
    ptr: IntTensor<B>,
    val: FloatTensor<B>,
) -> FloatTensor<B> {
    let rows = ptr.shape()[0] - 1;
    let device = val.device();
    let init = B::float_add_scalar(
        B::float_zeros([rows].into(), &device, val.dtype().into()),
        (-1e30f32).into(),
    );
    B::float_select_assign(init, 0, row, val, IndexingUpdateOp::Max)
}

#[cfg(feature = "ndarray")]
impl MessagePassing for burn::backend::NdArray {}

/// `segment_matmul` composed of Burn's own operations (gather, scale, scatter-add): the reference
/// the kernels are tested against and the implementation on backends without a kernel.
pub(crate) fn reference_matmul<B: Backend>(
    row: IntTensor<B>,
    ptr: IntTensor<B>,
    col: IntTensor<B>,
    val: FloatTensor<B>,
    x: FloatTensor<B>,
) -> FloatTensor<B> {
    let rows = ptr.shape()[0] - 1;
    let f = x.shape()[1];
    let e = val.shape()[0];
    let device = x.device();
    let msg = B::float_mul(
        B::float_select(x, 0, col),
        B::float_reshape(val, [e, 1].into()),
    );
    let zeros = B::float_zeros([rows, f].into(), &device, msg.dtype().into());
    B::float_select_assign(zeros, 0, row, msg, IndexingUpdateOp::Add)
}

/// `segment_dot` composed of Burn's own operations.
pub(crate) fn reference_dot<B: Backend>(
    row: IntTensor<B>,
    col: IntTensor<B>,
    a: FloatTensor<B>,
    b: FloatTensor<B>,
) -> FloatTensor<B> {
    let e = row.shape()[0];
    let prod = B::float_mul(B::float_select(a, 0, row), B::float_select(b, 0, col));
    B::float_reshape(B::float_sum_dim(prod, 1), [e].into())
}

/// A message list sorted by destination (CSR), with its transpose, on a device.
///
/// Built once per graph from `(src, dst)` pairs in any order; [`Csr::matmul`] then aggregates
/// per-message values given in that original order.
///
/// ```
/// use burn::tensor::{Tensor, TensorData};
/// use induce_models::device::default_device;
/// use induce_models::kernels::spmm::Csr;
/// use induce_models::kernels::tensors::to_vec;
/// let dev = default_device().unwrap();
/// // 0 → 1 (0.5), 2 → 0 (0.25), 2 → 1 (1.0), as in the module's drawing
/// let csr = Csr::new(3, 3, &[0, 2, 2], &[1, 0, 1], &dev).unwrap();
/// let w = Tensor::<1>::from_data(TensorData::new(vec![0.5f32, 0.25, 1.0], [3]), &dev);
/// let x = Tensor::<2>::from_data(TensorData::new(vec![1.0f32, 10.0, 100.0], [3, 1]), &dev);
/// assert_eq!(to_vec(csr.matmul(w, x)), vec![25.0, 100.5, 0.0]);
/// ```
#[derive(Debug, Clone)]
pub struct Csr {
    rows: usize,
    cols: usize,
    row: Tensor<1, Int>,
    ptr: Tensor<1, Int>,
    col: Tensor<1, Int>,
    /// Original message index of each CSR position; `None`: the identity (messages given
    /// sorted by destination).
    perm: Option<Tensor<1, Int>>,
    /// The transpose, for the backward pass; `None` for a forward-only index
    /// ([`Csr::forward_only`]).
    transpose: Option<Transpose>,
}

/// The transpose of a [`Csr`] on its device: the same positions sorted by source.
#[derive(Debug, Clone)]
struct Transpose {
    row: Tensor<1, Int>,
    ptr: Tensor<1, Int>,
    col: Tensor<1, Int>,
    /// CSR position of each transposed position.
    perm: Tensor<1, Int>,
}

/// The host-side index arrays of a [`Csr`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CsrIndex {
    /// Destination of each sorted position.
    pub row: Vec<u32>,
    /// Segment offsets, `rows + 1` entries.
    pub ptr: Vec<u32>,
    /// Source of each sorted position.
    pub col: Vec<u32>,
    /// Original index of each sorted position.
    pub perm: Vec<u32>,
}

impl CsrIndex {
    /// Sorts messages `(src[k], dst[k])` by destination (stable: equal destinations keep their
    /// order), a counting sort in `O(E + rows)`.
    pub fn by_destination(rows: usize, src: &[u32], dst: &[u32]) -> Self {
        let mut ptr = vec![0u32; rows + 1];
        for &d in dst {
            ptr[d as usize + 1] += 1;
        }
        for r in 0..rows {
            ptr[r + 1] += ptr[r];
        }
        let mut next = ptr.clone();
        let e = dst.len();
        let (mut row, mut col, mut perm) = (vec![0u32; e], vec![0u32; e], vec![0u32; e]);
        for k in 0..e {
            let d = dst[k] as usize;
            let p = next[d] as usize;
            next[d] += 1;
            row[p] = dst[k];
            col[p] = src[k];
            perm[p] = k as u32;
        }
        Self {
            row,
            ptr,
            col,
            perm,
        }
    }
}

impl Csr {
    /// Sorts the messages `src[k] → dst[k]` (`src < cols`, `dst < rows`) by destination and
    /// uploads the index and its transpose to `device`.
    pub fn new(
        rows: usize,
        cols: usize,
        src: &[u32],
        dst: &[u32],
        device: &Device,
    ) -> Result<Self> {
        if src.len() != dst.len() {
            return Err(ModelError::InvalidInput(format!(
                "{} message sources but {} destinations",
                src.len(),
                dst.len()
            )));
        }
        if u32::try_from(src.len()).is_err() {
            return Err(ModelError::InvalidInput(format!(
                "{} messages exceed the 2^32 a CSR index holds",
                src.len()
            )));
        }
        for (k, (&s, &d)) in src.iter().zip(dst).enumerate() {
            if s as usize >= cols || d as usize >= rows {
                return Err(ModelError::InvalidInput(format!(
                    "message {k} ({s} → {d}) leaves the {cols} × {rows} node range"
                )));
            }
        }
        let fwd = CsrIndex::by_destination(rows, src, dst);
        // The transpose: the sorted positions, re-sorted by their source.
        let t = CsrIndex::by_destination(cols, &fwd.row, &fwd.col);
        let sorted = fwd.perm.iter().enumerate().all(|(i, &p)| i as u32 == p);
        let up = |v: &[u32]| crate::ops::indices(v, device);
        Ok(Self {
            rows,
            cols,
            row: up(&fwd.row),
            ptr: up(&fwd.ptr),
            col: up(&fwd.col),
            perm: (!sorted).then(|| up(&fwd.perm)),
            transpose: Some(Transpose {
                row: up(&t.row),
                ptr: up(&t.ptr),
                col: up(&t.col),
                perm: up(&t.perm),
            }),
        })
    }

    /// An index of messages already sorted by destination (`row` non-decreasing, `ptr` its
    /// segment offsets, `col` the sources), for forward passes: no transpose is built or
    /// uploaded (a third of [`Csr::new`]'s uploads). Where a gradient is asked of a product
    /// with it, [`Csr::matmul_sorted`] falls back to the gather + scatter-add composition.
    ///
    /// Errors when the arrays disagree in length, `ptr` is not `rows + 1` offsets of `row`, or
    /// an index leaves the `cols × rows` range.
    ///
    /// ```
    /// use burn::tensor::{Tensor, TensorData};
    /// use induce_models::device::default_device;
    /// use induce_models::kernels::spmm::Csr;
    /// use induce_models::kernels::tensors::to_vec;
    /// let dev = default_device().unwrap();
    /// // 2 → 0 (0.25), 0 → 1 (0.5), 2 → 1 (1.0): sorted by destination
    /// let csr = Csr::forward_only(3, 3, vec![0, 1, 1], vec![0, 1, 3, 3], vec![2, 0, 2], &dev);
    /// let csr = csr.unwrap();
    /// let w = Tensor::<1>::from_data(TensorData::new(vec![0.25f32, 0.5, 1.0], [3]), &dev);
    /// let x = Tensor::<2>::from_data(TensorData::new(vec![1.0f32, 10.0, 100.0], [3, 1]), &dev);
    /// assert_eq!(to_vec(csr.matmul_sorted(w, x)), vec![25.0, 100.5, 0.0]);
    /// ```
    pub fn forward_only(
        rows: usize,
        cols: usize,
        row: Vec<u32>,
        ptr: Vec<u32>,
        col: Vec<u32>,
        device: &Device,
    ) -> Result<Self> {
        let bad = |why: String| Err(ModelError::InvalidInput(why));
        if row.len() != col.len() || u32::try_from(row.len()).is_err() {
            return bad(format!(
                "{} message destinations and {} sources (at most 2^32)",
                row.len(),
                col.len()
            ));
        }
        if ptr.len() != rows + 1 || ptr.first() != Some(&0) || ptr[rows] as usize != row.len() {
            return bad(format!(
                "{} segment offsets for {rows} rows of {} messages",
                ptr.len(),
                row.len()
            ));
        }
        if let Some(r) = (0..rows).find(|&r| ptr[r] > ptr[r + 1]) {
            return bad(format!(
                "segment offsets decrease at row {r} ({} > {})",
                ptr[r],
                ptr[r + 1]
            ));
        }
        // Offsets non-decreasing from 0 to E: every segment lies inside the messages. The
        // per-message checks run on all cores (batches of many targets hold ~10^8 messages).
        let bad_row = par_find(rows, |r| {
            let seg = ptr[r] as usize..ptr[r + 1] as usize;
            row[seg.clone()]
                .iter()
                .any(|&d| d as usize != r)
                .then(|| format!("the messages of row {r} are not its segment {seg:?}"))
        });
        if let Some(why) = bad_row {
            return bad(why);
        }
        let bad_col = par_find(col.len(), |k| {
            (col[k] as usize >= cols)
                .then(|| format!("message {k} comes from {}, outside {cols} columns", col[k]))
        });
        if let Some(why) = bad_col {
            return bad(why);
        }
        let up = |v: Vec<u32>, bound: usize| crate::ops::index_tensor_below(v, bound, device);
        let e = row.len();
        Ok(Self {
            rows,
            cols,
            row: up(row, rows),
            ptr: up(ptr, e + 1),
            col: up(col, cols),
            perm: None,
            transpose: None,
        })
    }

    /// The segment offsets, `[rows + 1]`: row `r`'s messages are sorted positions
    /// `ptr[r]..ptr[r + 1]`.
    pub fn offsets(&self) -> Tensor<1, Int> {
        self.ptr.clone()
    }

    /// The source of each sorted position, `[E]`.
    pub fn sources(&self) -> Tensor<1, Int> {
        self.col.clone()
    }

    /// The destination of each sorted position, `[E]`.
    pub fn destinations(&self) -> Tensor<1, Int> {
        self.row.clone()
    }

    /// Whether the messages were given sorted by destination: position `k` of this index is
    /// message `k` of the caller's list (per-message values need no reordering).
    pub fn in_message_order(&self) -> bool {
        self.perm.is_none()
    }

    /// Output rows (destinations).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Input rows (sources).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.row.dims()[0]
    }

    /// Whether there are no messages.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reorders per-message values from the original message order into CSR order (do it once
    /// for constant weights, then call [`Csr::matmul_sorted`]).
    ///
    /// # Shapes
    /// - values: `[E]` or `[E, 1]`; output: `[E]`
    pub fn sort_values<const D: usize>(&self, values: Tensor<D>) -> Tensor<1> {
        let e = self.len();
        let v: Tensor<1> = values.reshape([e]);
        match &self.perm {
            None => v,
            Some(perm) => v.select(0, perm.clone()),
        }
    }

    /// `out[v] = Σ_{k: dst[k] = v} values[k] · x[src[k]]`, values in the original message order;
    /// differentiable in `values` and `x`.
    ///
    /// # Shapes
    /// - values: `[E]` or `[E, 1]`; x: `[cols, F]`; output: `[rows, F]`
    pub fn matmul<const D: usize>(&self, values: Tensor<D>, x: Tensor<2>) -> Tensor<2> {
        self.matmul_sorted(self.sort_values(values), x)
    }

    /// [`Csr::matmul`] with values already in CSR order ([`Csr::sort_values`]).
    ///
    /// # Shapes
    /// - values: `[E]`; x: `[cols, F]`; output: `[rows, F]`
    pub fn matmul_sorted(&self, values: Tensor<1>, x: Tensor<2>) -> Tensor<2> {
        debug_assert_eq!(
            x.dims()[0],
            self.cols,
            "x rows must equal the CSR's columns"
        );
        if self.is_empty() {
            return Tensor::zeros([self.rows, x.dims()[1]], &x.device());
        }
        let t = match &self.transpose {
            Some(t) => t.clone(),
            // Forward only: the kernel does not read the transpose, so the forward arrays stand
            // in for it; a gradient needs it, so those products take the composition.
            None if values.is_require_grad() || x.is_require_grad() => {
                let e = self.len();
                return crate::ops::scatter_add_rows(
                    x.select(0, self.col.clone()) * values.reshape([e, 1]),
                    self.row.clone(),
                    self.rows,
                );
            }
            None => Transpose {
                row: self.row.clone(),
                ptr: self.ptr.clone(),
                col: self.col.clone(),
                perm: self.row.clone(),
            },
        };
        use burn::backend::Dispatch;
        let csr = Segments {
            row: self.row.clone().into_dispatch(),
            ptr: self.ptr.clone().into_dispatch(),
            col: self.col.clone().into_dispatch(),
        };
        let transpose = Segments {
            row: t.row.into_dispatch(),
            ptr: t.ptr.into_dispatch(),
            col: t.col.into_dispatch(),
        };
        let out = <Dispatch as MessagePassing>::segment_matmul(
            csr,
            values.into_dispatch(),
            x.into_dispatch(),
            transpose,
            t.perm.into_dispatch(),
        );
        Tensor::from_dispatch(out)
    }

    /// Each row's maximum of `values` given in sorted order ([`MessagePassing::segment_max`]:
    /// one GPU lane per row on CubeCL, where a scatter with `Max` into one column would run on
    /// one thread); `-1e30` for an empty row. Not differentiable (detach what it shifts).
    ///
    /// # Shapes
    /// - values: `[E]`; output: `[rows]`
    pub fn segment_max(&self, values: Tensor<1>) -> Tensor<1> {
        if self.is_empty() {
            return Tensor::full([self.rows], -1e30, &values.device());
        }
        use burn::backend::Dispatch;
        let out = <Dispatch as MessagePassing>::segment_max(
            self.row.clone().into_dispatch(),
            self.ptr.clone().into_dispatch(),
            values.detach().into_dispatch(),
        );
        Tensor::from_dispatch(out)
    }

    /// The same index on another device.
    pub fn to_device(&self, device: &Device) -> Self {
        let m = |t: &Tensor<1, Int>| t.clone().to_device(device);
        Self {
            rows: self.rows,
            cols: self.cols,
            row: m(&self.row),
            ptr: m(&self.ptr),
            col: m(&self.col),
            perm: self.perm.as_ref().map(m),
            transpose: self.transpose.as_ref().map(|t| Transpose {
                row: m(&t.row),
                ptr: m(&t.ptr),
                col: m(&t.col),
                perm: m(&t.perm),
            }),
        }
    }
}

/// Each segment's greedy choice, counted from the segment's start
/// ([`MessagePassing::segment_greedy`]: on CubeCL one lane per segment, or one cube of up to
/// 256 lanes per segment where segments average 512 values or more; a host loop on the CPU
/// backends): the first position of the largest log-softmax value, as the host's greedy
/// choice (`argmax(log_softmax(segment))`) takes it; `0` for an empty segment. `ptr` holds the
/// segments' offsets into `values` (non-decreasing, from 0 to `values`' length; not checked).
///
/// ```text
///   values  3 9 9 | 1 | 5 2        ptr [0, 3, 4, 6]   →   [1, 0, 0]
/// ```
///
/// # Shapes
/// - ptr: `[R + 1]`; values: `[E]`; output: `[R]`
pub fn segment_greedy(ptr: Tensor<1, Int>, values: Tensor<1>) -> Tensor<1, Int> {
    use burn::backend::Dispatch;
    let out = <Dispatch as MessagePassing>::segment_greedy(
        ptr.into_dispatch(),
        values.detach().into_dispatch(),
    );
    Tensor::from_dispatch(out)
}

/// The largest disagreement [`self_check`] found for one problem size.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KernelCheck {
    /// `rows × cols, messages, features`.
    pub size: String,
    /// Max relative error of the product against the scatter-add composition.
    pub value: f32,
    /// Max relative error of the gradient with respect to the message weights.
    pub grad_weights: f32,
    /// Max relative error of the gradient with respect to the features.
    pub grad_features: f32,
    /// Max relative error of the per-row maxima ([`Csr::segment_max`]) against a scatter with
    /// `Max` (0 when exact, as it should be).
    pub max: f32,
    /// Rows whose [`segment_greedy`] differs from the host's greedy choice, on the same values
    /// rounded to quarters (so that many rows hold ties): 0 when right.
    pub greedy: f32,
}

impl KernelCheck {
    /// Whether every error is below `tol` (and not NaN).
    pub fn passes(&self, tol: f32) -> bool {
        [
            self.value,
            self.grad_weights,
            self.grad_features,
            self.max,
            self.greedy,
        ]
        .iter()
        .all(|e| *e <= tol)
    }
}

/// Checks this device's message-passing kernels (forward and both gradients, the per-row
/// maxima and first maximum positions) against Burn's own gather + scatter-add (scatter-max) composition on seeded random graphs (duplicate messages, empty rows,
/// unsorted input; one small size and one that runs multithreaded on the CPU). Used by the unit
/// tests on the default backend and by the GPU check (`examples/gpu_check.rs`) on each device.
///
/// `device` is a plain device; the gradients run on its autodiff version.
pub fn self_check(device: &Device, seed: u64) -> Result<Vec<KernelCheck>> {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    let ad = device.clone().autodiff();
    let mut out = Vec::new();
    // The third size: few rows of thousands of messages each (a GPU's greedy choice then takes
    // one cube per row).
    for (rows, cols, e, f) in [(7, 5, 20, 3), (3000, 2500, 40_000, 16), (8, 300, 30_000, 2)] {
        let mut rng = StdRng::seed_from_u64(seed);
        let src: Vec<u32> = (0..e).map(|_| rng.random_range(0..cols as u32)).collect();
        // the last quarter of the rows receives nothing
        let dst: Vec<u32> = (0..e)
            .map(|_| rng.random_range(0..(rows as u32 * 3 / 4).max(1)))
            .collect();
        let mut random =
            |len: usize| -> Vec<f32> { (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect() };
        let (w, x, r) = (random(e), random(cols * f), random(rows * f));
        let csr = Csr::new(rows, cols, &src, &dst, &ad)?;
        let (s_idx, d_idx) = (
            crate::ops::indices(&src, &ad),
            crate::ops::indices(&dst, &ad),
        );
        let run = |segment: bool| {
            let wt = Tensor::<1>::from_data(TensorData::new(w.clone(), [e]), &ad).require_grad();
            let xt =
                Tensor::<2>::from_data(TensorData::new(x.clone(), [cols, f]), &ad).require_grad();
            let rt = Tensor::<2>::from_data(TensorData::new(r.clone(), [rows, f]), &ad);
            let y = match segment {
                true => csr.matmul(wt.clone(), xt.clone()),
                false => crate::ops::scatter_add_rows(
                    xt.clone().select(0, s_idx.clone()) * wt.clone().unsqueeze_dim::<2>(1),
                    d_idx.clone(),
                    rows,
                ),
            };
            let value = crate::ops::to_vec(y.clone());
            let g = (y * rt).sum().backward();
            let gw = wt
                .grad(&g)
                .map(|t| crate::ops::to_vec(t.unsqueeze_dim::<2>(1)));
            let gx = xt.grad(&g).map(crate::ops::to_vec);
            (value, gw.unwrap_or_default(), gx.unwrap_or_default())
        };
        let (a, b) = (run(true), run(false));
        let wt = Tensor::<1>::from_data(TensorData::new(w.clone(), [e]), &ad);
        let sorted = match &csr.perm {
            Some(perm) => wt.clone().select(0, perm.clone()),
            None => wt.clone(),
        };
        let sorted_copy = sorted.clone();
        let max_got = crate::ops::to_vec(csr.segment_max(sorted).unsqueeze_dim(0));
        let max_want = crate::ops::to_vec(
            Tensor::<1>::full([rows], -1e30, &ad)
                .select_assign(0, d_idx.clone(), wt, IndexingUpdateOp::Max)
                .unsqueeze_dim(0),
        );
        // First maxima, on values with many ties.
        let quarters: Vec<f32> = crate::ops::to_vec(sorted_copy.unsqueeze_dim(0))
            .iter()
            .map(|v| (v * 4.0).round() / 4.0)
            .collect();
        let offsets: Vec<i64> = csr.ptr.clone().into_data().iter::<i64>().collect();
        let arg_got: Vec<i64> = segment_greedy(
            csr.ptr.clone(),
            Tensor::<1>::from_data(TensorData::new(quarters.clone(), [e]), &ad),
        )
        .into_data()
        .iter::<i64>()
        .collect();
        let arg_want = offsets.windows(2).map(|w| match w[0] < w[1] {
            true => greedy(&quarters[w[0] as usize..w[1] as usize]) as i64,
            false => 0,
        });
        let greedy_err = arg_want
            .zip(arg_got.iter().chain(std::iter::repeat(&-1)))
            .filter(|(want, got)| want != *got)
            .count() as f32
            + (arg_got.len() as f32 - rows as f32).abs();
        let err = |p: &[f32], q: &[f32]| -> f32 {
            if p.len() != q.len() {
                return f32::INFINITY;
            }
            p.iter()
                .zip(q)
                .map(|(u, v)| (u - v).abs() / (1.0 + v.abs()))
                .fold(0.0, |m, d| if d.is_nan() { f32::NAN } else { m.max(d) })
        };
        out.push(KernelCheck {
            size: format!("{rows} x {cols}, {e} messages, {f} features"),
            value: err(&a.0, &b.0),
            grad_weights: err(&a.1, &b.1),
            grad_features: err(&a.2, &b.2),
            max: err(&max_got, &max_want),
            greedy: greedy_err,
        });
    }
    Ok(out)
}

/// The first (lowest-index) `Some` of `f` over `0..len`, evaluated on all cores in
/// contiguous chunks (serially for short ranges).
fn par_find(len: usize, f: impl Fn(usize) -> Option<String> + Sync) -> Option<String> {
    const SERIAL: usize = 1 << 16;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if len <= SERIAL || threads == 1 {
        return (0..len).find_map(f);
    }
    let chunk = len.div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..len)
            .step_by(chunk)
            .map(|start| s.spawn(move || (start..(start + chunk).min(len)).find_map(f)))
            .collect();
        handles
            .into_iter()
            .find_map(|h| h.join().expect("a validation thread does not panic"))
    })
}

#[cfg(test)]
mod tests;
