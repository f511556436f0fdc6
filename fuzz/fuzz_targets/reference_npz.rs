//! `load_reference_npz` and `load` (format detection) on arbitrary bytes as `syn1.npz`.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = common::scratch().join("syn1.npz");
    std::fs::write(&path, data).unwrap();
    let _ = induce_graph::io::load_reference_npz(&path);
    let _ = induce_graph::io::load(&path, None);
});
