//! `softgpu test`: the flags; the command itself is `softgpu::golden::cli::test_main`.

use crate::args::ShaderCacheArgs;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct TestCmd {
    /// The suite file (TOML, see the README).
    pub suite: PathBuf,
    /// Write the expected images from the rendered ones instead of comparing.
    #[arg(long)]
    pub bless: bool,
    /// Run only cases whose name contains PATTERN (or matches it as a glob with * and ?);
    /// repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub filter: Vec<String>,
    /// Run only shard K of N: the cases whose 0-based index in the suite is K-1 modulo N.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Directory of the HTML report (index.html).
    #[arg(long, value_name = "DIR", default_value = softgpu::golden::cli::DEFAULT_REPORT_DIR)]
    pub report: PathBuf,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    #[command(flatten)]
    pub cache: ShaderCacheArgs,
}
