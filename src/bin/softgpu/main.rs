//! The `softgpu` command line: the clap [`Cli`], dispatch to one module per subcommand (`draw`,
//! `compile`, `render`, `compare`, `test`; flags several of them share are in `args`), error
//! printing and exit codes.
//!
//! Exit status: `draw`, `compile` and `render` exit 0 on success and 1 after one
//! `softgpu: error: …` line on stderr; `compare` and `test` exit 0 (images match / every case
//! passed), 1 (images differ / some case failed) or 2 (could not run), as `softgpu::golden::cli`
//! defines; a malformed command line exits 2 with clap's usage message.

mod args;
mod compare;
mod compile;
mod draw;
mod render;
mod test;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::Path;
use std::process::ExitCode;

/// `softgpu`'s command line (its about text is the package description in Cargo.toml).
#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands, each run by its module's `run`.
#[derive(Subcommand)]
enum Command {
    /// Draw triangles with a vertex and a fragment shader (TGSI, WGSL, RetroArch .slang or the
    /// Slang language) into an RGBA8 PNG.
    Draw(Box<draw::DrawArgs>),
    /// Compile a shader (TGSI, WGSL, RetroArch .slang, Slang or Cg) and print its TGSI program, naga module,
    /// reflection or a translation by naga.
    Compile(compile::CompileArgs),
    /// Render a RetroArch preset (.slangp or .cgp) on an input frame, a directory of frames or a
    /// video stream to a PNG, numbered PNGs or a video stream.
    Render(Box<render::RenderArgs>),
    /// Compare two images; exit 0 = match, 1 = different, 2 = error.
    Compare(compare::CompareArgs),
    /// Run a golden-image suite (TOML, or every preset under --presets against its golden);
    /// exit 0 = all passed, 1 = some failed, 2 = error.
    Test(Box<test::TestArgs>),
}

/// Reads a text file named on the command line through `softgpu::input` (a regular file of at
/// most `limit` bytes); the error names the file and `what` it is.
fn read(path: &Path, what: &str, limit: u64) -> Result<String> {
    Ok(softgpu::input::read_text(path, what, limit)?)
}

/// Stack size of the rendering threads (see `main`).
const WORKER_STACK_BYTES: usize = 256 << 20;

fn main() -> ExitCode {
    // `softgpu __slang-compile` is the child process that runs the Slang compiler for its parent.
    if let Some(code) = softgpu::frontend::slang_lang::serve_child_if_requested() {
        return ExitCode::from(code as u8);
    }
    // A code-generator panic is caught by `draw::build_shader` (the interpreter runs the program
    // instead), a panic of naga's SPIR-V reader on Slang's output by the Slang frontend (an
    // error naming the file); keep them off stderr. Every other panic is reported as usual.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !softgpu::shader::jit_compiling() && !softgpu::frontend::slang_lang::reading_spirv() {
            default_hook(info);
        }
    }));
    // The kernels of very large shaders (Mega Bezel passes: 30,000+ instructions) keep
    // megabytes of spill slots in their stack frame; worker stacks are reserved address space,
    // touched only as deep as a kernel goes.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(WORKER_STACK_BYTES)
        .build_global();
    let result = match Cli::parse().command {
        Command::Draw(args) => draw::run(*args),
        Command::Compile(args) => compile::run(args),
        Command::Render(args) => render::run(*args),
        Command::Compare(args) => return compare::run(args),
        Command::Test(args) => return test::run(*args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("softgpu: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
