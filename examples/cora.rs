//! InduCE on Cora (gnn-benchmark npz; seeded 80/20 split): `cargo run --release --example cora -- --data PATH`.

mod common;

fn main() -> std::process::ExitCode {
    common::main_for_file(
        "cora",
        "../shared/datasets/cora-citeseer-npz/cora.npz",
        common::Protocol::Whole,
        20,
    )
}
