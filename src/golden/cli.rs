//! The `softgpu compare` and `softgpu test` commands (the binary only parses flags).
//!
//! Exit status of both: 0 = images match / every case passed, 1 = images differ / some case
//! failed, 2 = the command could not run (unreadable or mismatched images, malformed suite, bad
//! flag), after one `softgpu: error: …` line on stderr.

use super::runner::{self, CaseStatus};
use super::suite::{parse_shard, Selection, Suite};
use super::{compare_files, diff_image, save_png, CompareOptions, GoldenError};
use std::path::PathBuf;

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
    /// The suite file.
    pub suite: PathBuf,
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

/// Runs `softgpu test`: loads the suite, selects, runs, writes the report.
pub fn test(args: &TestArgs) -> Result<TestRun, GoldenError> {
    if args.jobs == Some(0) {
        return Err(GoldenError::Options(
            "--jobs: expected at least 1 thread, found 0".into(),
        ));
    }
    let selection = Selection {
        filters: args.filters.clone(),
        shard: args.shard.as_deref().map(parse_shard).transpose()?,
    };
    let suite = Suite::load(&args.suite)?;
    let indices = suite.select(&selection);
    let results = runner::run_cases(
        &suite,
        &indices,
        args.bless,
        args.jobs,
        args.shader_cache.as_deref(),
        args.memory_budget,
    )?;
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
    };
    let dir = args
        .report
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_REPORT_DIR));
    run.report = super::report::write_report(&dir, &args.suite, &results, &run.summary())?;
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
