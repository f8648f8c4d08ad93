//! The `softgpu` command line.

mod args;
mod compare;
mod compile;
mod draw;
mod render;
mod test;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use softgpu::golden;
use std::path::PathBuf;
use std::process::ExitCode;

/// softgpu: a software GPU that runs real GPU shaders on the CPU.
#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Draw triangles with a TGSI vertex and fragment shader into an RGBA8 PNG.
    Draw(draw::DrawArgs),
    /// Parse and validate a TGSI program and print it back in Mesa's text format.
    Compile(compile::CompileArgs),
    /// Render a RetroArch preset (.slangp) on an input frame (or a directory of frames) to a PNG.
    Render(render::RenderArgs),
    /// Compare two images; exit 0 = match, 1 = different, 2 = error.
    Compare(compare::CompareCmd),
    /// Run a golden-image suite (TOML); exit 0 = all passed, 1 = some failed, 2 = error.
    Test(test::TestCmd),
}

fn read(path: &PathBuf, what: &str) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("{}: cannot read {what}", path.display()))
}

/// Stack size of the rendering threads (see `main`).
const WORKER_STACK_BYTES: usize = 256 << 20;

fn main() -> ExitCode {
    // A code-generator panic is caught by `draw::build_shader` (the interpreter runs the program
    // instead); keep it off stderr. Every other panic is reported as usual.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !softgpu::draw::jit_compiling() {
            default_hook(info);
        }
    }));
    // The kernels of very large shaders (Mega Bezel passes: 30,000+ instructions) keep
    // megabytes of spill slots in their stack frame; worker stacks are reserved address space,
    // touched only as deep as a kernel goes.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(WORKER_STACK_BYTES)
        .build_global();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Draw(args) => draw::run_draw(args),
        Command::Compile(args) => compile::run_compile(args),
        Command::Render(args) => render::run_render(args),
        Command::Compare(args) => {
            return ExitCode::from(golden::cli::compare_main(&golden::cli::CompareArgs {
                first: args.first,
                second: args.second,
                tolerance: args.tolerance,
                max_pixels: args.max_pixels,
                diff: args.diff,
            }))
        }
        Command::Test(args) => {
            return ExitCode::from(golden::cli::test_main(&golden::cli::TestArgs {
                suite: args.suite,
                bless: args.bless,
                filters: args.filter,
                shard: args.shard,
                report: Some(args.report),
                jobs: args.jobs.map(usize::from),
                shader_cache: args.cache.dir(),
            }))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("softgpu: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
