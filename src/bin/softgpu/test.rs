//! `softgpu test` and `softgpu test init`: their flags; the runs themselves are
//! `softgpu::golden::cli::test_main` and `init_main`.

use crate::args::{parse_size, DriverArg, MemoryBudgetArgs, ShaderCacheArgs};
use softgpu::golden::cli;
use softgpu::golden::corpus::Corpus;
use softgpu::golden::CompareOptions;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

/// The flags of `softgpu test`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct TestArgs {
    #[command(subcommand)]
    command: Option<TestCommand>,
    /// The suite file (TOML; its format is in docs/golden-tests.md); or give --presets
    #[arg(required_unless_present = "presets", conflicts_with = "presets")]
    suite: Option<PathBuf>,
    /// Run every .slangp and .cgp under DIR (recursively) as a case instead of a suite file;
    /// needs --input and --goldens
    #[arg(long, value_name = "DIR", requires_all = ["input", "goldens"], allow_hyphen_values = true)]
    presets: Option<PathBuf>,
    /// With --presets: the input frame of every case (PNG or JPEG, or a directory of PNG frames)
    #[arg(
        long,
        value_name = "IMG",
        requires = "presets",
        allow_hyphen_values = true
    )]
    input: Option<PathBuf>,
    /// With --presets: the goldens' directory; the golden of DIR/a/b.slangp is GOLDENS/a/b.png
    #[arg(
        long,
        value_name = "GOLDENS",
        requires = "presets",
        allow_hyphen_values = true
    )]
    goldens: Option<PathBuf>,
    #[command(flatten)]
    tuning: CorpusTuning,
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
    /// Directory of the HTML report (index.html, and the cases' pictures under cases/).
    #[arg(long, value_name = "DIR", default_value = cli::DEFAULT_REPORT_DIR, allow_hyphen_values = true)]
    report: PathBuf,
    /// Show the pictures of every case in the report, not only of failures.
    #[arg(long)]
    report_all: bool,
    /// Worker threads [default: one per core]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..), allow_hyphen_values = true)]
    jobs: Option<u16>,
    /// Whose rules every case renders with (docs/fidelity.md, "Driver profiles"): use the
    /// driver the goldens came from
    #[arg(
        long,
        value_enum,
        default_value = "softpipe",
        allow_hyphen_values = true
    )]
    driver: DriverArg,
    #[command(flatten)]
    cache: ShaderCacheArgs,
    #[command(flatten)]
    memory: MemoryBudgetArgs,
}

/// How the cases of a corpus render and compare (the keys of a TOML suite's `[defaults]`).
#[derive(clap::Args)]
struct CorpusTuning {
    /// With --presets: output (viewport) size of every case [default: the input's size]
    #[arg(
        long,
        value_name = "WxH",
        requires = "presets",
        allow_hyphen_values = true
    )]
    size: Option<String>,
    /// With --presets: frames to run before the output is compared
    #[arg(long, value_name = "N", default_value_t = 1, requires = "presets",
          value_parser = clap::value_parser!(u32).range(1..=softgpu::chain::MAX_FRAMES as i64))]
    frames: u32,
    /// With --presets: largest per-channel difference, in 1/255 steps, that counts as equal
    #[arg(long, value_name = "N", default_value_t = 0, requires = "presets")]
    tolerance: u8,
    /// With --presets: share of pixels, P or P% in 0..=100, that may exceed the tolerance
    #[arg(
        long,
        value_name = "P",
        requires = "presets",
        allow_hyphen_values = true
    )]
    max_pixels: Option<String>,
}

/// The subcommands of `softgpu test`.
#[derive(clap::Subcommand)]
enum TestCommand {
    /// Write a TOML suite with one case per preset under --presets, to edit and run as
    /// `softgpu test SUITE.toml`
    Init(InitArgs),
}

/// The flags of `softgpu test init`.
#[derive(clap::Args)]
struct InitArgs {
    /// Every .slangp and .cgp under DIR (recursively) becomes a case
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    presets: PathBuf,
    /// The input frame of every case (PNG or JPEG, or a directory of PNG frames)
    #[arg(long, value_name = "IMG", allow_hyphen_values = true)]
    input: PathBuf,
    /// The goldens' directory; the golden of DIR/a/b.slangp is GOLDENS/a/b.png
    #[arg(long, value_name = "GOLDENS", allow_hyphen_values = true)]
    goldens: PathBuf,
    #[command(flatten)]
    tuning: CorpusTuning,
    /// The suite file to write (.toml); its paths are relative to its directory [default:
    /// print it, with paths relative to the current directory]
    #[arg(short, long, value_name = "FILE", allow_hyphen_values = true)]
    output: Option<PathBuf>,
}

/// The corpus the flags describe.
fn corpus(
    presets: PathBuf,
    input: PathBuf,
    goldens: PathBuf,
    tuning: &CorpusTuning,
) -> anyhow::Result<Corpus> {
    Ok(Corpus {
        presets,
        input,
        goldens,
        size: tuning.size.as_deref().map(parse_size).transpose()?,
        frames: tuning.frames,
        options: CompareOptions {
            tolerance: tuning.tolerance,
            max_pixels_percent: match &tuning.max_pixels {
                Some(text) => cli::parse_percent(text)?,
                None => 0.0,
            },
        },
    })
}

/// Runs `softgpu test` or `softgpu test init`; the exit status is `golden::cli`'s (0 all
/// passed / written, 1 some failed, 2 could not run).
pub fn run(args: TestArgs) -> ExitCode {
    let fail = |e: anyhow::Error| {
        eprintln!("softgpu: error: {e:#}");
        ExitCode::from(cli::EXIT_ERROR)
    };
    if let Some(TestCommand::Init(init)) = args.command {
        let corpus = match corpus(init.presets, init.input, init.goldens, &init.tuning) {
            Ok(corpus) => corpus,
            Err(e) => return fail(e),
        };
        return ExitCode::from(cli::init_main(&cli::InitArgs {
            corpus,
            output: init.output,
        }));
    }
    let memory_budget = match args.memory.budget() {
        Ok(budget) => budget,
        Err(e) => return fail(e),
    };
    let corpus = match (args.presets, args.input, args.goldens) {
        (Some(presets), Some(input), Some(goldens)) => {
            match corpus(presets, input, goldens, &args.tuning) {
                Ok(corpus) => Some(corpus),
                Err(e) => return fail(e),
            }
        }
        _ => None,
    };
    ExitCode::from(cli::test_main(&cli::TestArgs {
        suite: args.suite.unwrap_or_default(),
        corpus,
        report_all: args.report_all,
        // A run of a whole corpus takes minutes: show each case as it finishes, on a terminal.
        progress: std::io::stderr().is_terminal(),
        bless: args.bless,
        filters: args.filter,
        shard: args.shard,
        report: Some(args.report),
        jobs: args.jobs.map(usize::from),
        shader_cache: args.cache.dir(),
        memory_budget: Some(memory_budget),
        driver: args.driver.driver(),
    }))
}
