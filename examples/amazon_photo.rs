//! InduCE on Amazon-Photo with the paper's protocol (3-hop neighbourhood of a seeded random node,
//! seeded 80/20 split, GCN hidden width 128): `cargo run --release --example amazon_photo -- --data PATH`.

mod common;

fn main() -> std::process::ExitCode {
    common::main_for_file(
        "amazon-photo",
        "../shared/datasets/amazon-photo/amazon_electronics_photo.npz",
        common::Protocol::Neighbourhood { hops: 3 },
        128,
    )
}
