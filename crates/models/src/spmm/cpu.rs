//! The Flex kernels: each output row is one contiguous segment, reduced by one thread; rows are
//! split between threads by message count, so no two threads write the same row.

use burn::backend::flex::FlexTensor;
use burn::backend::{DType, Flex, TensorMetadata};
use burn::tensor::TensorData;

use super::{MessagePassing, reference_dot, reference_matmul};

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

fn matmul_rows(
    ptr: &Ints<'_>,
    col: &Ints<'_>,
    val: &[f32],
    x: &[f32],
    f: usize,
    first_row: usize,
    out: &mut [f32],
) {
    for (i, o) in out.chunks_exact_mut(f).enumerate() {
        let r = first_row + i;
        for k in ptr.at(r)..ptr.at(r + 1) {
            let w = val[k];
            let c = col.at(k);
            let xr = &x[c * f..c * f + f];
            for (a, b) in o.iter_mut().zip(xr) {
                *a += w * b;
            }
        }
    }
}

impl MessagePassing for Flex {
    fn segment_matmul(
        row: FlexTensor,
        ptr: FlexTensor,
        col: FlexTensor,
        val: FlexTensor,
        x: FlexTensor,
        _t_row: FlexTensor,
        _t_ptr: FlexTensor,
        _t_col: FlexTensor,
        _t_perm: FlexTensor,
    ) -> FlexTensor {
        let (ptr, col, val, x) = (
            contiguous(ptr),
            contiguous(col),
            contiguous(val),
            contiguous(x),
        );
        let rows = ptr.shape()[0] - 1;
        let f = x.shape()[1];
        let (Some(p), Some(c), Some(v), Some(xs)) = (
            ints(&ptr),
            ints(&col),
            val.as_slice::<f32>(),
            x.as_slice::<f32>(),
        ) else {
            return reference_matmul::<Flex>(row, ptr, col, val, x);
        };
        let mut out = vec![0f32; rows * f];
        let threads = threads_for(v.len() * f);
        if threads == 1 || f == 0 {
            matmul_rows(&p, &c, v, xs, f, 0, &mut out);
        } else {
            let bounds = split_rows(&p, rows, threads);
            std::thread::scope(|s| {
                let mut rest = out.as_mut_slice();
                for w in bounds.windows(2) {
                    let (mine, tail) = rest.split_at_mut((w[1] - w[0]) * f);
                    rest = tail;
                    let (p, c) = (&p, &c);
                    s.spawn(move || matmul_rows(p, c, v, xs, f, w[0], mine));
                }
            });
        }
        FlexTensor::from_data(TensorData::new(out, [rows, f]))
    }

    fn segment_dot(
        row: FlexTensor,
        ptr: FlexTensor,
        col: FlexTensor,
        a: FlexTensor,
        b: FlexTensor,
    ) -> FlexTensor {
        let (ptr, col, a, b) = (
            contiguous(ptr),
            contiguous(col),
            contiguous(a),
            contiguous(b),
        );
        let rows = ptr.shape()[0] - 1;
        let f = a.shape()[1];
        let (Some(p), Some(c), Some(xa), Some(xb)) = (
            ints(&ptr),
            ints(&col),
            a.as_slice::<f32>(),
            b.as_slice::<f32>(),
        ) else {
            return reference_dot::<Flex>(row, col, a, b);
        };
        let e = p.at(rows);
        let mut out = vec![0f32; e];
        let dot_rows = |first: usize, last: usize, out: &mut [f32]| {
            let base = p.at(first);
            for r in first..last {
                let ar = &xa[r * f..r * f + f];
                for k in p.at(r)..p.at(r + 1) {
                    let cc = c.at(k);
                    let br = &xb[cc * f..cc * f + f];
                    out[k - base] = ar.iter().zip(br).map(|(x, y)| x * y).sum();
                }
            }
        };
        let threads = threads_for(e * f);
        if threads == 1 {
            dot_rows(0, rows, &mut out);
        } else {
            let bounds = split_rows(&p, rows, threads);
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
