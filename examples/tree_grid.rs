//! InduCE on tree-grid: `cargo run --release --example tree_grid -- --help`.

mod common;

fn main() -> std::process::ExitCode {
    common::main_for(induce::graph::generators::SyntheticKind::TreeGrid)
}
