//! `load_gnn_benchmark_npz` on arbitrary bytes.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = common::scratch().join("bench.npz");
    std::fs::write(&path, data).unwrap();
    let _ = induce_graph::io::load_gnn_benchmark_npz(&path);
});
