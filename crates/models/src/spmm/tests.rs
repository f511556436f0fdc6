use burn::tensor::{Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::device::default_device;
use crate::tensors::{indices, scatter_add_rows, to_vec};

/// A seeded random message list (duplicates, empty rows and unsorted order included).
fn random_messages(rows: usize, cols: usize, e: usize, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let src = (0..e).map(|_| rng.random_range(0..cols as u32)).collect();
    // rows/4.. stay empty
    let dst = (0..e)
        .map(|_| rng.random_range(0..(rows as u32 * 3 / 4).max(1)))
        .collect();
    (src, dst)
}

fn random(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

fn close(a: &[f32], b: &[f32], tol: f32) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol * (1.0 + y.abs()),
            "entry {i}: {x} vs {y}"
        );
    }
}

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
    let dev = default_device().unwrap();
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

/// The kernel against the scatter-add composition, small (one thread) and large (threads).
#[test]
fn matches_the_scatter_add_composition() {
    let dev = default_device().unwrap();
    for (rows, cols, e, f) in [(7, 5, 20, 3), (3000, 2500, 40_000, 16)] {
        let (src, dst) = random_messages(rows, cols, e, 3);
        let csr = Csr::new(rows, cols, &src, &dst, &dev).unwrap();
        let w = Tensor::<1>::from_data(TensorData::new(random(e, 4), [e]), &dev);
        let x = Tensor::<2>::from_data(TensorData::new(random(cols * f, 5), [cols, f]), &dev);
        let got = to_vec(csr.matmul(w.clone(), x.clone()));
        let msg = x.select(0, indices(&src, &dev)) * w.unsqueeze_dim::<2>(1);
        let want = to_vec(scatter_add_rows(msg, indices(&dst, &dev), rows));
        close(&got, &want, 1e-5);
    }
}

/// Gradients with respect to the features and the weights equal those of the composition.
#[test]
fn gradients_match_the_scatter_add_composition() {
    let dev = default_device().unwrap().autodiff();
    for (rows, cols, e, f) in [(6, 4, 15, 3), (2000, 1800, 30_000, 8)] {
        let (src, dst) = random_messages(rows, cols, e, 11);
        let csr = Csr::new(rows, cols, &src, &dst, &dev).unwrap();
        let r = Tensor::<2>::from_data(TensorData::new(random(rows * f, 12), [rows, f]), &dev);
        let grads = |custom: bool| {
            let w =
                Tensor::<1>::from_data(TensorData::new(random(e, 13), [e]), &dev).require_grad();
            let x = Tensor::<2>::from_data(TensorData::new(random(cols * f, 14), [cols, f]), &dev)
                .require_grad();
            let out = match custom {
                true => csr.matmul(w.clone(), x.clone()),
                false => {
                    let msg =
                        x.clone().select(0, indices(&src, &dev)) * w.clone().unsqueeze_dim::<2>(1);
                    scatter_add_rows(msg, indices(&dst, &dev), rows)
                }
            };
            let g = (out * r.clone()).sum().backward();
            let gw = w
                .grad(&g)
                .unwrap()
                .into_data()
                .convert::<f32>()
                .try_into_vec::<f32>()
                .unwrap();
            (gw, to_vec(x.grad(&g).unwrap()))
        };
        let (gw, gx) = grads(true);
        let (ww, wx) = grads(false);
        close(&gw, &ww, 1e-4);
        close(&gx, &wx, 1e-4);
    }
}
