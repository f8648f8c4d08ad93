//! The `softgpu compare`, `softgpu test` and `softgpu test init` commands (the binary only
//! parses flags).
//!
//! Exit status of both: 0 = images match / every case passed, 1 = images differ / some case
//! failed, 2 = the command could not run (unreadable or mismatched images, malformed suite, bad
//! flag), after one `softgpu: error: …` line on stderr.

use super::corpus::Corpus;
use super::runner::{self, CaseStatus, RunOptions};
use super::suite::{parse_shard, Selection, Suite};
use super::{compare_files, diff_image, save_png, CompareOptions, GoldenError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Exit status: the images match, or every case passed.
pub const EXIT_OK: u8 = 0;
/// Exit status: the images differ, or some case failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit status: the command could not run (bad input or flag).
pub const EXIT_ERROR: u8 = 2;

/// Default directory of the HTML report of `softgpu test`.
pub const DEFAULT_REPORT_DIR: &str = "softgpu-report";

/// Parses a `--max-pixels` value: a percentage `P` or `P%` in 0..=100.
pub fn parse_percent(text: &str) -> Result<f64, GoldenError> {
    let number = text.trim().strip_suffix('%').unwrap_or(text.trim());
    number
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && (0.0..=100.0).contains(p))
        .ok_or_else(|| {
            GoldenError::Options(format!(
                "--max-pixels: expected a percentage 0..=100 such as 0.5 or 0.5%, found `{text}`"
            ))
        })
}

/// Flags of `softgpu compare`.
#[derive(Clone, Debug)]
pub struct CompareArgs {
    /// First image (the reference; the diff is drawn over it).
    pub first: PathBuf,
    /// Second image.
    pub second: PathBuf,
    /// Per-channel tolerance in 1/255 steps.
    pub tolerance: u8,
    /// `--max-pixels` as given (`P` or `P%`).
    pub max_pixels: Option<String>,
    /// Where to write the diff heat map.
    pub diff: Option<PathBuf>,
}

/// Runs `softgpu compare`: returns the text to print and whether the images match.
pub fn compare(args: &CompareArgs) -> Result<(String, bool), GoldenError> {
    let options = CompareOptions {
        tolerance: args.tolerance,
        max_pixels_percent: match &args.max_pixels {
            Some(text) => parse_percent(text)?,
            None => 0.0,
        },
    };
    if let Some(path) = &args.diff {
        // Its directory is made when the diff is written.
        crate::output::check_output_name(path, "--diff", &["png"])
            .map_err(|e| GoldenError::Options(e.to_string()))?;
    }
    let (report, a, b) = compare_files(&args.first, &args.second, &options)?;
    let mut text = format!("{report}\n");
    if let Some(path) = &args.diff {
        save_png(&diff_image(&a, &b, &options)?, path)?;
        text.push_str(&format!("diff image: {}\n", path.display()));
    }
    let matches = report.matches();
    text.push_str(if matches {
        "result: match\n"
    } else {
        "result: DIFFERENT\n"
    });
    Ok((text, matches))
}

/// `softgpu compare` from parsed flags to exit status.
pub fn compare_main(args: &CompareArgs) -> u8 {
    match compare(args) {
        Ok((text, matches)) => {
            print!("{text}");
            if matches {
                EXIT_OK
            } else {
                EXIT_FAILED
            }
        }
        Err(e) => {
            eprintln!("softgpu: error: {e}");
            EXIT_ERROR
        }
    }
}

/// Flags of `softgpu test`.
#[derive(Clone, Debug, Default)]
pub struct TestArgs {
    /// The suite file (ignored when `corpus` is given).
    pub suite: PathBuf,
    /// `--presets`: run every preset of a corpus instead of a suite file.
    pub corpus: Option<Corpus>,
    /// `--report-all`: the report shows the pictures of passed cases too.
    pub report_all: bool,
    /// Print each case's line to stderr as it finishes (the binary does on a terminal).
    pub progress: bool,
    /// Write the expected images instead of comparing.
    pub bless: bool,
    /// `--filter` patterns (any may match).
    pub filters: Vec<String>,
    /// `--shard K/N` as given.
    pub shard: Option<String>,
    /// Report directory (default [`DEFAULT_REPORT_DIR`]).
    pub report: Option<PathBuf>,
    /// Worker threads (default: rayon's, one per core).
    pub jobs: Option<usize>,
    /// The on-disk cache of compiled shaders for preset cases (`None`: compile every shader).
    pub shader_cache: Option<PathBuf>,
    /// The memory budget of each case in bytes (`None`: [`crate::budget::default_budget`]).
    pub memory_budget: Option<u64>,
    /// The driver whose rules the cases render with (`--driver`).
    pub driver: crate::driver::Driver,
}

/// What a test run produced: the printed lines, counts and where the report went.
#[derive(Clone, Debug)]
pub struct TestRun {
    /// One status line per case that ran, in suite order.
    pub lines: Vec<String>,
    /// Passed (or blessed) cases.
    pub passed: usize,
    /// Failed cases.
    pub failed: usize,
    /// Cases not selected by `--filter` / `--shard`.
    pub skipped: usize,
    /// The HTML report.
    pub report: PathBuf,
    /// Wall time of the whole run.
    pub elapsed: Duration,
}

impl TestRun {
    /// `N passed, N failed` (`, N skipped` when some cases were not selected).
    pub fn summary(&self) -> String {
        let mut line = format!("{} passed, {} failed", self.passed, self.failed);
        if self.skipped > 0 {
            line.push_str(&format!(", {} skipped", self.skipped));
        }
        line
    }
}

/// Runs `softgpu test`: loads the suite (or finds the corpus), selects, runs, writes the
/// report.
pub fn test(args: &TestArgs) -> Result<TestRun, GoldenError> {
    let started = Instant::now();
    if args.jobs == Some(0) {
        return Err(GoldenError::Options(
            "--jobs: expected at least 1 thread, found 0".into(),
        ));
    }
    let selection = Selection {
        filters: args.filters.clone(),
        shard: args.shard.as_deref().map(parse_shard).transpose()?,
    };
    let suite = match &args.corpus {
        Some(corpus) => corpus.suite()?,
        None => Suite::load(&args.suite)?,
    };
    let indices = suite.select(&selection);
    let dir = args
        .report
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_REPORT_DIR));
    let options = RunOptions {
        bless: args.bless,
        jobs: args.jobs,
        shader_cache: args.shader_cache.clone(),
        memory_budget: args.memory_budget,
        report_images: Some(dir.clone()),
        report_all: args.report_all,
        progress: args.progress,
        driver: args.driver,
    };
    let results = runner::run_cases(&suite, &indices, &options)?;
    let failed = results
        .iter()
        .filter(|r| r.status == CaseStatus::Failed)
        .count();
    let mut run = TestRun {
        lines: results.iter().map(runner::status_line).collect(),
        passed: results.len() - failed,
        failed,
        skipped: suite.cases.len() - indices.len(),
        report: PathBuf::new(),
        elapsed: Duration::ZERO,
    };
    run.elapsed = started.elapsed();
    let summary = format!("{} in {:.1} s", run.summary(), run.elapsed.as_secs_f64());
    run.report = super::report::write_report(&dir, &suite.path, &results, &summary)?;
    Ok(run)
}

/// `softgpu test` from parsed flags to exit status; the summary line is printed last.
pub fn test_main(args: &TestArgs) -> u8 {
    match test(args) {
        Ok(run) => {
            for line in &run.lines {
                println!("{line}");
            }
            println!("report: {}", run.report.display());
            println!("time: {:.1} s", run.elapsed.as_secs_f64());
            println!("{}", run.summary());
            if run.failed == 0 {
                EXIT_OK
            } else {
                EXIT_FAILED
            }
        }
        Err(e) => {
            eprintln!("softgpu: error: {e}");
            EXIT_ERROR
        }
    }
}

/// Flags of `softgpu test init`.
#[derive(Clone, Debug)]
pub struct InitArgs {
    /// The corpus the suite runs.
    pub corpus: Corpus,
    /// The suite file to write; `None` prints it, with paths relative to the current directory.
    pub output: Option<PathBuf>,
}

/// Runs `softgpu test init`: the TOML suite of the corpus, written to `--output` (returns where)
/// or returned as text for stdout.
pub fn init(args: &InitArgs) -> Result<(String, Option<PathBuf>), GoldenError> {
    let Some(output) = &args.output else {
        return Ok((args.corpus.suite_toml(Path::new("."))?, None));
    };
    crate::output::check_output_name(output, "--output", &["toml"])
        .map_err(|e| GoldenError::Options(e.to_string()))?;
    let dir = output.parent().unwrap_or(Path::new(""));
    let text = args.corpus.suite_toml(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    })?;
    if !dir.as_os_str().is_empty() {
        std::fs::create_dir_all(dir).map_err(|e| GoldenError::Image {
            path: dir.to_path_buf(),
            message: format!("cannot create directory: {e}"),
        })?;
    }
    crate::output::write_atomic(output, "the suite", text.as_bytes()).map_err(|e| {
        GoldenError::Image {
            path: output.clone(),
            message: e.message,
        }
    })?;
    Ok((text, Some(output.clone())))
}

/// `softgpu test init` from parsed flags to exit status: 0 written, 2 could not.
pub fn init_main(args: &InitArgs) -> u8 {
    match init(args) {
        Ok((text, None)) => {
            print!("{text}");
            EXIT_OK
        }
        Ok((text, Some(path))) => {
            let cases = text.matches("\n[[case]]\n").count();
            println!("wrote {} ({cases} cases)", path.display());
            EXIT_OK
        }
        Err(e) => {
            eprintln!("softgpu: error: {e}");
            EXIT_ERROR
        }
    }
}
