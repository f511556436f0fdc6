//! InduCE on an OGB node-property folder (ogbn-arxiv as unpacked by the `ogb` package; its own split): `cargo run --release --example ogbn_arxiv -- --data PATH`.

mod common;

fn main() -> std::process::ExitCode {
    common::main_for_file(
        "ogbn-arxiv",
        "data/ogbn_arxiv",
        common::Protocol::Whole,
        128,
    )
}
