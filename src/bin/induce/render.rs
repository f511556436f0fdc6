//! `induce render`: one explanation of a run as SVG.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use induce::methods::Variant;
use induce::models::io::checkpoint::atomic_write;

use crate::pick_device;

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The run directory.
    pub dir: PathBuf,
    /// The explained node.
    #[arg(long)]
    pub target: u32,
    /// The method (or variant, `greedy:shortlist=64`) whose explanation to draw [default: the
    /// first that explained the target].
    #[arg(long)]
    pub method: Option<Variant>,
    /// Output file [default: DIR/render-METHOD-TARGET.svg].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The black box, when the run's config.json names none (a run explained in memory with a
    /// model saved elsewhere) or another one should draw it: as for `induce explain`.
    #[arg(long)]
    pub black_box: Option<PathBuf>,
    /// The architecture of a PyG --black-box (JSON; docs/FORMATS.md).
    #[arg(long, requires = "black_box")]
    pub arch: Option<PathBuf>,
}

/// Runs `induce render`.
pub fn run(a: RenderArgs) -> Result<()> {
    let dev = pick_device(None)?;
    let run = match &a.black_box {
        Some(bb) => induce::render::open_run_with_file(&a.dir, bb, a.arch.as_deref(), &dev)?,
        None => induce::render::open_run(&a.dir, &dev)?,
    };
    let method = a.method.as_ref().map(Variant::label);
    let svg = induce::render::render_target(&run, method.as_deref(), a.target)?;
    let name = induce::render::find_record(&run.run, method.as_deref(), a.target)?
        .method
        .clone();
    let out = a.out.unwrap_or_else(|| {
        a.dir.join(format!(
            "render-{}-{}.svg",
            name.replace('+', "p"),
            a.target
        ))
    });
    atomic_write(&out, svg.as_bytes())?;
    println!("{name}, target {} -> {}", a.target, out.display());
    Ok(())
}
