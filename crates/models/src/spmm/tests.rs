use super::*;
use crate::device::default_device;
use crate::tensors::to_vec;
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

/// Values and both gradients equal those of the scatter-add composition, small (one thread)
/// and large (threads on the CPU).
#[test]
fn matches_the_scatter_add_composition_with_gradients() {
    let dev = default_device().unwrap();
    let checks = self_check(&dev, 3).unwrap();
    assert_eq!(checks.len(), 2);
    for c in checks {
        assert!(c.passes(1e-4), "{c:?}");
    }
}
