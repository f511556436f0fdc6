//! The Flex kernel: candidates split into contiguous blocks, one thread each; every candidate's
//! hidden layers live in two small buffers.

use burn::backend::flex::FlexTensor;
use burn::backend::{DType, Flex, TensorMetadata};
use burn::tensor::TensorData;

use super::PairScoring;
use crate::spmm::cpu::{Ints, contiguous, ints, threads_for};

/// The parameters and per-node halves as the loop reads them.
struct Mlp<'a> {
    p: &'a [f32],
    q: &'a [f32],
    m: usize,
    m2: usize,
    wf: &'a [f32],
    b1: &'a [f32],
    w2: &'a [f32],
    b2: &'a [f32],
    w3: &'a [f32],
    b3: f32,
    slope: f32,
}

fn f32s(t: &FlexTensor) -> Option<&[f32]> {
    match t.dtype() {
        DType::F32 => t.as_slice::<f32>(),
        _ => None,
    }
}

#[inline(always)]
fn lrelu(x: f32, slope: f32) -> f32 {
    if x >= 0.0 { x } else { slope * x }
}

impl Mlp<'_> {
    /// Scores of candidates `first..first + out.len()`.
    fn scores(&self, u: &Ints<'_>, w: &Ints<'_>, flag: &[f32], first: usize, out: &mut [f32]) {
        let (m, m2) = (self.m, self.m2);
        let (mut a1, mut z2) = (vec![0f32; m], vec![0f32; m2]);
        for (i, o) in out.iter_mut().enumerate() {
            let k = first + i;
            let (pu, qw) = (&self.p[u.at(k) * m..][..m], &self.q[w.at(k) * m..][..m]);
            let f = flag[k];
            for j in 0..m {
                a1[j] = lrelu(pu[j] + qw[j] + f * self.wf[j] + self.b1[j], self.slope);
            }
            z2.fill(0.0);
            for (j, &a) in a1.iter().enumerate() {
                for (z, &wv) in z2.iter_mut().zip(&self.w2[j * m2..(j + 1) * m2]) {
                    *z += a * wv;
                }
            }
            let mut s = 0f32;
            for ((&z, &b), &w3) in z2.iter().zip(self.b2).zip(self.w3) {
                s += lrelu(z + b, self.slope) * w3;
            }
            *o = s + self.b3;
        }
    }
}

impl PairScoring for Flex {
    fn pair_mlp_scores(
        u: FlexTensor,
        w: FlexTensor,
        flag: FlexTensor,
        p: FlexTensor,
        q: FlexTensor,
        params: FlexTensor,
        m2: usize,
    ) -> Option<FlexTensor> {
        let (u, w, flag, p, q, params) = (
            contiguous(u),
            contiguous(w),
            contiguous(flag),
            contiguous(p),
            contiguous(q),
            contiguous(params),
        );
        let (Some(ui), Some(wi), Some(fl), Some(ps), Some(qs), Some(pr)) = (
            ints(&u),
            ints(&w),
            f32s(&flag),
            f32s(&p),
            f32s(&q),
            f32s(&params),
        ) else {
            return None;
        };
        let m = p.shape()[1];
        let (c, n) = (fl.len(), p.shape()[0]);
        if pr.len() != 2 * m + m * m2 + 2 * m2 + 2 || q.shape()[1] != m || ui.len() != c {
            return None;
        }
        // An endpoint outside the node rows: left to the composition's `select` to refuse.
        if (0..c).any(|k| ui.at(k) >= n || wi.at(k) >= q.shape()[0]) {
            return None;
        }
        let (wf, rest) = pr.split_at(m);
        let (b1, rest) = rest.split_at(m);
        let (w2, rest) = rest.split_at(m * m2);
        let (b2, rest) = rest.split_at(m2);
        let (w3, rest) = rest.split_at(m2);
        let mlp = Mlp {
            p: ps,
            q: qs,
            m,
            m2,
            wf,
            b1,
            w2,
            b2,
            w3,
            b3: rest[0],
            slope: rest[1],
        };
        let mut out = vec![0f32; c];
        let threads = threads_for(c * m * (m2 + 2));
        match threads {
            1 => mlp.scores(&ui, &wi, fl, 0, &mut out),
            _ => {
                let per = c.div_ceil(threads);
                std::thread::scope(|s| {
                    for (t, part) in out.chunks_mut(per).enumerate() {
                        let (mlp, ui, wi) = (&mlp, &ui, &wi);
                        s.spawn(move || mlp.scores(ui, wi, fl, t * per, part));
                    }
                });
            }
        }
        Some(FlexTensor::from_data(TensorData::new(out, [c])))
    }
}
