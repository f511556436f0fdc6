//! InduCE on tree-cycles: `cargo run --release --example tree_cycles -- --help`.

mod common;

fn main() -> std::process::ExitCode {
    common::main_for(induce::graph::generators::SyntheticKind::TreeCycles)
}
