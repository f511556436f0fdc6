//! InduCE on CiteSeer (gnn-benchmark npz; seeded 80/20 split): `cargo run --release --example citeseer -- --data PATH`.

mod common;

fn main() -> std::process::ExitCode {
    common::main_for_file(
        "citeseer",
        "../shared/datasets/cora-citeseer-npz/citeseer.npz",
        common::Protocol::Whole,
        20,
    )
}
