//! InduCE on ba-shapes: `cargo run --release --example ba_shapes -- --help`.

mod common;

fn main() -> std::process::ExitCode {
    common::main_for(induce::graph::generators::SyntheticKind::BaShapes)
}
