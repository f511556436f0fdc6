//! The Flex kernels: each output row is one contiguous segment, reduced by one thread; rows are
//! split between threads by message count, so no two threads write the same row.

use burn::backend::flex::FlexTensor;
use burn::backend::{DType, Flex, TensorMetadata};
use burn::tensor::TensorData;

use super::{MessagePassing, Segments, reference_dot, reference_matmul};

/// Below this many multiply-adds a call stays on the calling thread (spawning costs ~20 µs).
const PARALLEL_WORK: usize = 1 << 17;

/// Index arrays as the kernels read them (Flex keeps whatever integer type the data had).
enum Ints<'a> {
    I64(&'a [i64]),
    I32(&'a [i32]),
}

impl Ints<'_> {
    #[inline(always)]
    fn at(&self, i: usize) -> usize {
        match self {
            Ints::I64(v) => v[i] as usize,
            Ints::I32(v) => v[i] as usize,
        }
    }
}

fn contiguous(t: FlexTensor) -> FlexTensor {
    let ok = t.layout().is_contiguous() && t.layout().start_offset() == 0;
    if ok { t } else { t.to_contiguous() }
}

/// A row-major view of a 2-D `f32` tensor whose rows may be strided (the column slices that
/// `cat`'s backward hands over): `(storage, offset of row 0, row stride)`. `None` for other
/// layouts (those are made contiguous first).
fn rows(t: &FlexTensor) -> Option<(&[f32], usize, usize)> {
    if t.dtype() != DType::F32 || t.shape().num_dims() != 2 {
        return None;
    }
    let l = t.layout();
    let (rows, cols) = (t.shape()[0], t.shape()[1]);
    let st = l.strides();
    let (s0, s1) = (st[0], st[1]);
    let unit = s1 == 1 || cols <= 1;
    if !unit || s0 < cols as isize || (rows > 1 && s0 <= 0) {
        return None;
    }
    Some((t.storage::<f32>(), l.start_offset(), s0.max(1) as usize))
}

/// [`rows`] of `t`, copying it to a contiguous tensor first where its layout needs it.
fn row_major(t: FlexTensor) -> FlexTensor {
    match rows(&t) {
        Some(_) => t,
        None => t.to_contiguous(),
    }
}

fn ints(t: &FlexTensor) -> Option<Ints<'_>> {
    match t.dtype() {
        DType::I64 => t.as_slice::<i64>().map(Ints::I64),
        DType::I32 => t.as_slice::<i32>().map(Ints::I32),
        _ => None,
    }
}

fn threads_for(work: usize) -> usize {
    if work < PARALLEL_WORK {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(64)
}

/// Splits rows `0..rows` into `parts` ranges of about equal message count (by `ptr`).
fn split_rows(ptr: &Ints<'_>, rows: usize, parts: usize) -> Vec<usize> {
    let total = ptr.at(rows);
    let mut bounds = vec![0];
    let mut r = 0;
    for p in 1..parts {
        let goal = total * p / parts;
        while r < rows && ptr.at(r) < goal {
            r += 1;
        }
        bounds.push(r.max(*bounds.last().expect("non-empty")));
    }
    bounds.push(rows);
    bounds
}

fn spmm_rows(
    ptr: &Ints<'_>,
    col: &Ints<'_>,
    val: &[f32],
    (x, x_off, x_stride): (&[f32], usize, usize),
    f: usize,
    first_row: usize,
    out: &mut [f32],
) {
    // Sum into a private row, then store it: `out` is never read, so its fresh (zero-mapped)
    // pages take one plain write fault each instead of a copy-on-write fault whose TLB flush
    // interrupts every other thread (measured: a third of the epoch on the arxiv-sized graph).
    let mut acc = vec![0f32; f];
    let row_of = |k: usize| {
        let start = x_off + col.at(k) * x_stride;
        &x[start..start + f]
    };
    for (i, o) in out.chunks_exact_mut(f).enumerate() {
        let r = first_row + i;
        acc.fill(0.0);
        let (start, end) = (ptr.at(r), ptr.at(r + 1));
        let mut k = start;
        // Four messages per sweep: four source rows in flight at once, and a quarter of the
        // accumulator traffic.
        while k + 4 <= end {
            let (w0, w1, w2, w3) = (val[k], val[k + 1], val[k + 2], val[k + 3]);
            let (x0, x1, x2, x3) = (row_of(k), row_of(k + 1), row_of(k + 2), row_of(k + 3));
            for j in 0..f {
                acc[j] += w0 * x0[j] + w1 * x1[j] + w2 * x2[j] + w3 * x3[j];
            }
            k += 4;
        }
        for (k, &w) in val.iter().enumerate().take(end).skip(k) {
            for (a, b) in acc.iter_mut().zip(row_of(k)) {
                *a += w * b;
            }
        }
        o.copy_from_slice(&acc);
    }
}

impl MessagePassing for Flex {
    fn segment_matmul(
        csr: Segments<Self>,
        val: FlexTensor,
        x: FlexTensor,
        _t: Segments<Self>,
        _t_perm: FlexTensor,
    ) -> FlexTensor {
        let Segments { row, ptr, col } = csr;
        let (ptr, col, val, x) = (
            contiguous(ptr),
            contiguous(col),
            contiguous(val),
            row_major(x),
        );
        let n_rows = ptr.shape()[0] - 1;
        let f = x.shape()[1];
        let (Some(p), Some(c), Some(v), Some(xs)) =
            (ints(&ptr), ints(&col), val.as_slice::<f32>(), rows(&x))
        else {
            return reference_matmul::<Flex>(row, ptr, col, val, x);
        };
        let mut out = vec![0f32; n_rows * f];
        let threads = threads_for(v.len() * f);
        if threads == 1 || f == 0 {
            spmm_rows(&p, &c, v, xs, f, 0, &mut out);
        } else {
            let bounds = split_rows(&p, n_rows, threads);
            std::thread::scope(|s| {
                let mut rest = out.as_mut_slice();
                for w in bounds.windows(2) {
                    let (mine, tail) = rest.split_at_mut((w[1] - w[0]) * f);
                    rest = tail;
                    let (p, c) = (&p, &c);
                    s.spawn(move || spmm_rows(p, c, v, xs, f, w[0], mine));
                }
            });
        }
        FlexTensor::from_data(TensorData::new(out, [n_rows, f]))
    }

    fn segment_dot(
        row: FlexTensor,
        ptr: FlexTensor,
        col: FlexTensor,
        a: FlexTensor,
        b: FlexTensor,
    ) -> FlexTensor {
        let (ptr, col, a, b) = (contiguous(ptr), contiguous(col), row_major(a), row_major(b));
        let n_rows = ptr.shape()[0] - 1;
        let f = a.shape()[1];
        let (Some(p), Some(c), Some((xa, a_off, a_st)), Some((xb, b_off, b_st))) =
            (ints(&ptr), ints(&col), rows(&a), rows(&b))
        else {
            return reference_dot::<Flex>(row, col, a, b);
        };
        let e = p.at(n_rows);
        let mut out = vec![0f32; e];
        let dot_rows = |first: usize, last: usize, out: &mut [f32]| {
            let base = p.at(first);
            for r in first..last {
                let ar = &xa[a_off + r * a_st..a_off + r * a_st + f];
                for k in p.at(r)..p.at(r + 1) {
                    let cb = b_off + c.at(k) * b_st;
                    let br = &xb[cb..cb + f];
                    out[k - base] = ar.iter().zip(br).map(|(x, y)| x * y).sum();
                }
            }
        };
        let threads = threads_for(e * f);
        if threads == 1 {
            dot_rows(0, n_rows, &mut out);
        } else {
            let bounds = split_rows(&p, n_rows, threads);
            std::thread::scope(|s| {
                let mut rest = out.as_mut_slice();
                for w in bounds.windows(2) {
                    let n = p.at(w[1]) - p.at(w[0]);
                    let (mine, tail) = rest.split_at_mut(n);
                    rest = tail;
                    let dot_rows = &dot_rows;
                    s.spawn(move || dot_rows(w[0], w[1], mine));
                }
            });
        }
        FlexTensor::from_data(TensorData::new(out, [e]))
    }
}
