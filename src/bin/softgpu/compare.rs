//! `softgpu compare`: the flags; the command itself is `softgpu::golden::cli::compare_main`.

use std::path::PathBuf;

#[derive(clap::Args)]
pub struct CompareCmd {
    /// The reference image (the diff is drawn over it).
    pub first: PathBuf,
    /// The image to check.
    pub second: PathBuf,
    /// Largest per-channel difference (in 1/255 steps) that counts as equal.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub tolerance: u8,
    /// Share of pixels allowed over the tolerance, in percent (`0.5` or `0.5%`).
    #[arg(long, value_name = "P%")]
    pub max_pixels: Option<String>,
    /// Write a heat map of the differences over a dimmed copy of the first image.
    #[arg(long, value_name = "DIFF.png")]
    pub diff: Option<PathBuf>,
}
