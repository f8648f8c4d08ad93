//! `softgpu test`: its flags; the suite run itself is `softgpu::golden::cli::test_main`.

use crate::args::{MemoryBudgetArgs, ShaderCacheArgs};
use softgpu::golden::cli;
use std::path::PathBuf;
use std::process::ExitCode;

/// The flags of `softgpu test`.
#[derive(clap::Args)]
pub struct TestArgs {
    /// The suite file (TOML; its format is in docs/golden-tests.md).
    suite: PathBuf,
    /// Write the expected images from the rendered ones instead of comparing.
    #[arg(long)]
    bless: bool,
    /// Run only cases whose name contains PATTERN (or matches it as a glob with * and ?);
    /// repeatable.
    #[arg(long, value_name = "PATTERN", allow_hyphen_values = true)]
    filter: Vec<String>,
    /// Run only shard K of N: the cases whose 0-based index in the suite is K-1 modulo N.
    #[arg(long, value_name = "K/N", allow_hyphen_values = true)]
    shard: Option<String>,
    /// Directory of the HTML report (index.html).
    #[arg(long, value_name = "DIR", default_value = cli::DEFAULT_REPORT_DIR, allow_hyphen_values = true)]
    report: PathBuf,
    /// Worker threads [default: one per core]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..), allow_hyphen_values = true)]
    jobs: Option<u16>,
    #[command(flatten)]
    cache: ShaderCacheArgs,
    #[command(flatten)]
    memory: MemoryBudgetArgs,
}

/// Runs `softgpu test`; the exit status is `golden::cli`'s (0 all passed, 1 some failed, 2 error).
pub fn run(args: TestArgs) -> ExitCode {
    let memory_budget = match args.memory.budget() {
        Ok(budget) => budget,
        Err(e) => {
            eprintln!("softgpu: error: {e:#}");
            return ExitCode::from(cli::EXIT_ERROR);
        }
    };
    ExitCode::from(cli::test_main(&cli::TestArgs {
        suite: args.suite,
        bless: args.bless,
        filters: args.filter,
        shard: args.shard,
        report: Some(args.report),
        jobs: args.jobs.map(usize::from),
        shader_cache: args.cache.dir(),
        memory_budget: Some(memory_budget),
    }))
}
