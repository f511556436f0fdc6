use super::*;
use crate::ops::to_vec;
use crate::testing::test_device;
use burn::tensor::{Tensor, TensorData};

#[test]
fn counting_sort_is_stable_and_builds_offsets() {
    let idx = CsrIndex::by_destination(3, &[0, 2, 2, 1], &[1, 0, 1, 1]);
    assert_eq!(idx.ptr, vec![0, 1, 4, 4]);
    assert_eq!(idx.row, vec![0, 1, 1, 1]);
    assert_eq!(idx.col, vec![2, 0, 2, 1]);
    assert_eq!(idx.perm, vec![1, 0, 2, 3]);
}

#[test]
fn exact_numbers_on_a_tiny_graph() {
    let dev = test_device().unwrap();
    // 0 → 1 (0.5), 2 → 0 (0.25), 2 → 1 (1.0); two features
    let csr = Csr::new(3, 3, &[0, 2, 2], &[1, 0, 1], &dev).unwrap();
    let w = Tensor::<1>::from_data(TensorData::new(vec![0.5f32, 0.25, 1.0], [3]), &dev);
    let x = Tensor::<2>::from_data(
        TensorData::new(vec![1.0f32, 2., 10., 20., 100., 200.], [3, 2]),
        &dev,
    );
    assert_eq!(
        to_vec(csr.matmul(w, x)),
        vec![25.0, 50.0, 100.5, 201.0, 0.0, 0.0]
    );
    assert!(Csr::new(2, 2, &[0, 2], &[1, 0], &dev).is_err());
    assert!(Csr::new(2, 2, &[0], &[1, 0], &dev).is_err());
    let empty = Csr::new(2, 3, &[], &[], &dev).unwrap();
    let x = Tensor::<2>::ones([3, 4], &dev);
    assert_eq!(
        to_vec(empty.matmul(Tensor::<1>::zeros([0], &dev), x)),
        vec![0.0; 8]
    );
}

/// Values and both gradients equal those of the scatter-add composition, small (one thread),
/// large (threads on the CPU) and with few long rows (one cube per row for greedy choices on a
/// GPU).
#[test]
fn matches_the_scatter_add_composition_with_gradients() {
    let dev = test_device().unwrap();
    let checks = self_check(&dev, 3).unwrap();
    assert_eq!(checks.len(), 3);
    for c in checks {
        assert!(c.passes(1e-4), "{c:?}");
    }
}

/// A forward-only index gives the numbers of the full one, rejects unsorted or inconsistent
/// arrays, and where a gradient is asked of it, gives the full index's gradients (through the
/// composition).
#[test]
fn forward_only_index_matches_the_full_one() {
    let dev = test_device().unwrap();
    let (src, dst) = ([0u32, 2, 2, 1, 3, 0], [1u32, 0, 1, 1, 3, 3]);
    let idx = CsrIndex::by_destination(4, &src, &dst);
    let (row, ptr, col) = (idx.row.clone(), idx.ptr.clone(), idx.col.clone());
    let fwd = Csr::forward_only(4, 4, row, ptr, col, &dev).unwrap();
    let full = Csr::new(4, 4, &idx.col, &idx.row, &dev).unwrap();
    let vals: Vec<f32> = (0..6).map(|k| 0.5 + k as f32 * 0.25).collect();
    let xs: Vec<f32> = (0..12).map(|k| (k as f32 - 5.0) * 0.3).collect();
    let plain = |csr: &Csr| {
        let w = Tensor::<1>::from_data(TensorData::new(vals.clone(), [6]), &dev);
        let x = Tensor::<2>::from_data(TensorData::new(xs.clone(), [4, 3]), &dev);
        to_vec(csr.matmul_sorted(w, x))
    };
    assert_eq!(plain(&fwd), plain(&full));
    let run = |csr: &Csr, d: &burn::tensor::Device| {
        let w = Tensor::<1>::from_data(TensorData::new(vals.clone(), [6]), d).require_grad();
        let x = Tensor::<2>::from_data(TensorData::new(xs.clone(), [4, 3]), d).require_grad();
        let out = csr.to_device(d).matmul_sorted(w.clone(), x.clone());
        let value = to_vec(out.clone());
        let grads = (out.clone() * out).sum().backward();
        let gw = w.grad(&grads).map(|g| to_vec(g.unsqueeze_dim(0)));
        let gx = x.grad(&grads).map(to_vec);
        (value, gw, gx)
    };
    let ad = dev.clone().autodiff();
    let (a, b) = (run(&fwd, &ad), run(&full, &ad));
    assert!(a.1.is_some() && a.2.is_some());
    for (u, v) in [(a.1.unwrap(), b.1.unwrap()), (a.2.unwrap(), b.2.unwrap())] {
        for (p, q) in u.iter().zip(&v) {
            assert!((p - q).abs() < 1e-5, "{p} vs {q}");
        }
    }
    // The forward-only index takes the scatter-add composition under autodiff: the same sums,
    // but a GPU's (and CubeCL's CPU runtime's) scatter adds in no fixed order.
    for (p, q) in a.0.iter().zip(&b.0) {
        assert!((p - q).abs() < 1e-5, "{p} vs {q}");
    }
    // Unsorted rows, offsets of the wrong length or total, a source out of range, an offset
    // past the end in the middle (non-monotonic): errors, not panics.
    let fails = |cols: usize, row: &[u32], ptr: &[u32], col: &[u32]| {
        Csr::forward_only(4, cols, row.to_vec(), ptr.to_vec(), col.to_vec(), &dev).is_err()
    };
    assert!(fails(4, &[1, 0, 1, 1, 3, 3], &idx.ptr, &idx.col));
    assert!(fails(4, &idx.row, &idx.ptr[..4], &idx.col));
    assert!(fails(4, &idx.row, &[0, 1, 4, 4, 5], &idx.col));
    assert!(fails(2, &idx.row, &idx.ptr, &idx.col));
    assert!(fails(4, &idx.row, &[0, 9, 1, 2, 6], &idx.col));
    assert!(!fails(4, &idx.row, &idx.ptr, &idx.col));
}

/// Per-row maxima, exactly, with an empty row (`-1e30`).
#[test]
fn segment_max_per_row() {
    let dev = test_device().unwrap();
    // rows 0: positions 0..2, 1: empty, 2: position 2, 3: positions 3..6
    let csr = Csr::forward_only(
        4,
        4,
        vec![0, 0, 2, 3, 3, 3],
        vec![0, 2, 2, 3, 6],
        vec![0; 6],
        &dev,
    )
    .unwrap();
    let vals = Tensor::<1>::from_data(
        TensorData::new(vec![-3.0f32, 2.5, -7.0, 1.0, 4.0, -2.0], [6]),
        &dev,
    );
    let got = to_vec(csr.segment_max(vals).unsqueeze_dim(0));
    assert_eq!(got, vec![2.5, -1e30, -7.0, 4.0]);
}

/// Greedy choices per segment, counted from each segment's start: the largest value, ties to the
/// first, a NaN passed over, an empty segment 0 — the host's greedy choice on each (the largest
/// log-softmax value), on the plain and the autodiff device; and where two scores are closer
/// than the log-softmax's rounding, they tie as on the host.
#[test]
fn segment_greedy_takes_the_hosts_choice_in_each_segment() {
    let dev = test_device().unwrap();
    // The last segment: a score one ulp above 999 others equal to 1; after the subtraction of
    // the log-sum-exp (≈ 7.9) they are all equal, so the host takes the first.
    let mut values = vec![3.0f32, 9., 9., 1., 5., 2., f32::NAN, -1., -4., -1.];
    values.extend([1.0, 1.0 + f32::EPSILON]);
    values.extend([1.0; 998]);
    let ptr: Vec<u32> = vec![0, 3, 4, 6, 6, 8, 10, 1010];
    let last = crate::ops::log_softmax(&values[10..]);
    assert_eq!(
        last[0], last[1],
        "the test's near-tie collapses on the host"
    );
    for d in [dev.clone(), dev.clone().autodiff()] {
        let got: Vec<i64> = segment_greedy(
            crate::ops::indices(&ptr, &d),
            Tensor::<1>::from_data(TensorData::new(values.clone(), [values.len()]), &d),
        )
        .into_data()
        .iter::<i64>()
        .collect();
        assert_eq!(got, vec![1, 0, 0, 0, 1, 1, 0]);
        let host: Vec<i64> = ptr
            .windows(2)
            .map(|w| match w[0] < w[1] {
                true => greedy(&values[w[0] as usize..w[1] as usize]) as i64,
                false => 0,
            })
            .collect();
        assert_eq!(got, host);
    }
}

/// Long segments (a batch of states with thousands of candidates each; on CubeCL one cube per
/// segment reduces them): the host's greedy choice in each, on values rounded to quarters (many
/// ties: the first wins), with a NaN inside one segment (the host's log-sum-exp is then NaN and it
/// ends on the last position), an empty segment and a single best value at the very end.
#[test]
fn segment_greedy_on_long_segments_takes_the_hosts_choice() {
    use rand::{Rng, SeedableRng};
    let dev = test_device().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let lens = [3000usize, 0, 5000, 1, 4097, 2500];
    let mut values: Vec<f32> = Vec::new();
    let mut ptr = vec![0u32];
    for (s, &len) in lens.iter().enumerate() {
        let seg: Vec<f32> = (0..len)
            .map(|k| match (s, k) {
                (2, 1234) => f32::NAN,
                (4, k) if k == len - 1 => 9.0,
                _ => (rng.random_range(-2.0f32..2.0) * 4.0).round() / 4.0,
            })
            .collect();
        values.extend(seg);
        ptr.push(values.len() as u32);
    }
    let got: Vec<i64> = segment_greedy(
        crate::ops::indices(&ptr, &dev),
        Tensor::<1>::from_data(TensorData::new(values.clone(), [values.len()]), &dev),
    )
    .into_data()
    .iter::<i64>()
    .collect();
    let want: Vec<i64> = ptr
        .windows(2)
        .map(|w| match w[0] < w[1] {
            true => greedy(&values[w[0] as usize..w[1] as usize]) as i64,
            false => 0,
        })
        .collect();
    assert_eq!(
        want[2], 4999,
        "a NaN makes every log-probability NaN: the last"
    );
    assert_eq!(want[4], 4096);
    assert_eq!(got, want);
}
