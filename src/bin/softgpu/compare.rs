//! `softgpu compare`: its flags; the comparison itself is `softgpu::golden::cli::compare_main`.

use softgpu::golden::cli;
use std::path::PathBuf;
use std::process::ExitCode;

/// The flags of `softgpu compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// The reference image (the diff is drawn over it).
    first: PathBuf,
    /// The image to check.
    second: PathBuf,
    /// Largest per-channel difference (in 1/255 steps) that counts as equal.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_hyphen_values = true
    )]
    tolerance: u8,
    /// Share of pixels allowed over the tolerance, in percent (`0.5` or `0.5%`) [default: 0]
    #[arg(long, value_name = "P%", allow_hyphen_values = true)]
    max_pixels: Option<String>,
    /// Write a heat map of the differences over a dimmed copy of the first image.
    #[arg(long, value_name = "DIFF.png", allow_hyphen_values = true)]
    diff: Option<PathBuf>,
}

/// Runs `softgpu compare`; the exit status is `golden::cli`'s (0 match, 1 different, 2 error).
pub fn run(args: CompareArgs) -> ExitCode {
    ExitCode::from(cli::compare_main(&cli::CompareArgs {
        first: args.first,
        second: args.second,
        tolerance: args.tolerance,
        max_pixels: args.max_pixels,
        diff: args.diff,
    }))
}
