//! `assert_golden` and the [`Golden`] builder: snapshot tests for rendered images.

use super::{
    compare_images, diff_image, load_image, save_png, CompareOptions, CompareReport, GoldenError,
    ToRgbaImage,
};
use std::path::{Component, Path, PathBuf};

/// Environment variable that makes golden checks write (bless) their goldens instead of
/// comparing: set to anything but empty, `0` or `false`.
pub const BLESS_ENV: &str = "SOFTGPU_BLESS";

/// Environment variable naming the golden directory when [`Golden::dir`] is not given.
pub const DIR_ENV: &str = "SOFTGPU_GOLDEN_DIR";

/// What a golden check found (failures are reported by [`Golden::assert`] as a panic).
#[derive(Clone, Debug, PartialEq)]
pub enum GoldenOutcome {
    /// The image matches the golden.
    Matched(CompareReport),
    /// Blessing: the golden was written (`written` is false when it already held these pixels).
    Blessed {
        /// The golden file.
        path: PathBuf,
        /// Whether the file was created or changed.
        written: bool,
    },
    /// The image does not match (or the golden is missing); artifacts were written.
    Failed {
        /// Why, in one line.
        reason: String,
        /// The comparison, when both images could be compared.
        report: Option<CompareReport>,
        /// The golden file.
        golden: PathBuf,
        /// Where the actual image was written.
        actual: PathBuf,
        /// Where the diff heat map was written (when the sizes agree).
        diff: Option<PathBuf>,
    },
}

/// A golden check with its options. Goldens are `DIR/NAME.png`; a failing check writes
/// `DIR/NAME.actual.png` and `DIR/NAME.diff.png` (the repository's `.gitignore` ignores both
/// patterns). `DIR` is, in order: [`Golden::dir`], `$SOFTGPU_GOLDEN_DIR`, or
/// `$CARGO_MANIFEST_DIR/reference-images` — `cargo test` sets `CARGO_MANIFEST_DIR` in the
/// environment of the test process to the package being tested, which is how a library finds the
/// caller's crate. Relative directories are taken from the current directory.
#[derive(Clone, Debug)]
pub struct Golden {
    name: String,
    options: CompareOptions,
    dir: Option<PathBuf>,
    bless: Option<bool>,
}

/// Compares `image` with the golden `reference-images/NAME.png` exactly (see [`Golden`]), or
/// writes it when `SOFTGPU_BLESS=1`. Panics with the report and the artifact paths on failure.
pub fn assert_golden<I: ToRgbaImage + ?Sized>(name: &str, image: &I) {
    Golden::new(name).assert(image);
}

fn bless_from_env() -> bool {
    match std::env::var(BLESS_ENV) {
        Ok(value) => !matches!(value.trim(), "" | "0" | "false" | "no"),
        Err(_) => false,
    }
}

/// Checks a golden name: relative path components only, no `..`.
fn check_name(name: &str) -> Result<&str, GoldenError> {
    let name = name.strip_suffix(".png").unwrap_or(name);
    let path = Path::new(name);
    let valid = !name.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)));
    if !valid {
        return Err(GoldenError::Options(format!(
            "invalid golden name `{name}`: expected a relative path such as `draw/triangle` (no `..`, no leading `/`)"
        )));
    }
    Ok(name)
}

impl Golden {
    /// A check of golden `name` (a relative path without extension, e.g. `draw/triangle`), exact
    /// by default.
    pub fn new(name: &str) -> Golden {
        Golden {
            name: name.to_string(),
            options: CompareOptions::default(),
            dir: None,
            bless: None,
        }
    }

    /// Largest per-channel difference (1/255 steps) that counts as equal.
    pub fn tolerance(mut self, tolerance: u8) -> Golden {
        self.options.tolerance = tolerance;
        self
    }

    /// Share of pixels (percent) allowed over the tolerance.
    pub fn max_pixels_percent(mut self, percent: f64) -> Golden {
        self.options.max_pixels_percent = percent;
        self
    }

    /// The directory holding the goldens (instead of the environment's).
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Golden {
        self.dir = Some(dir.into());
        self
    }

    /// Bless (write the golden) or compare, regardless of `SOFTGPU_BLESS`.
    pub fn bless(mut self, bless: bool) -> Golden {
        self.bless = Some(bless);
        self
    }

    /// The golden directory this check uses.
    pub fn resolved_dir(&self) -> Result<PathBuf, GoldenError> {
        if let Some(dir) = &self.dir {
            return Ok(dir.clone());
        }
        if let Some(dir) = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()) {
            return Ok(PathBuf::from(dir));
        }
        if let Some(manifest) = std::env::var_os("CARGO_MANIFEST_DIR").filter(|d| !d.is_empty()) {
            return Ok(PathBuf::from(manifest).join("reference-images"));
        }
        Err(GoldenError::Options(format!(
            "cannot locate the golden directory: call Golden::dir(..), set {DIR_ENV}, or run under cargo (which sets CARGO_MANIFEST_DIR)"
        )))
    }

    /// The golden, actual and diff paths: `DIR/NAME.png`, `DIR/NAME.actual.png`,
    /// `DIR/NAME.diff.png`.
    pub fn paths(&self) -> Result<(PathBuf, PathBuf, PathBuf), GoldenError> {
        let name = check_name(&self.name)?;
        let base = self.resolved_dir()?.join(name);
        let with = |suffix: &str| {
            let mut os = base.clone().into_os_string();
            os.push(suffix);
            PathBuf::from(os)
        };
        Ok((with(".png"), with(".actual.png"), with(".diff.png")))
    }

    /// Runs the check without panicking: blesses, or compares and writes the artifacts of a
    /// failure. `Err` means the check itself could not run (bad name, unreadable golden,
    /// unwritable directory).
    pub fn check<I: ToRgbaImage + ?Sized>(&self, image: &I) -> Result<GoldenOutcome, GoldenError> {
        self.options.validate()?;
        let (golden, actual_path, diff_path) = self.paths()?;
        let actual = image.to_rgba_image();
        let bless = self.bless.unwrap_or_else(bless_from_env);
        // Artifacts of an earlier failure would be misleading once this run has its own result.
        for stale in [&actual_path, &diff_path] {
            match std::fs::remove_file(stale) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(GoldenError::Image {
                        path: stale.clone(),
                        message: format!("cannot remove stale artifact: {e}"),
                    })
                }
            }
        }
        if bless {
            let unchanged = golden.exists()
                && load_image(&golden)
                    .map(|g| g.image == actual)
                    .unwrap_or(false);
            if !unchanged {
                save_png(&actual, &golden)?;
            }
            return Ok(GoldenOutcome::Blessed {
                path: golden,
                written: !unchanged,
            });
        }
        if !golden.exists() {
            save_png(&actual, &actual_path)?;
            return Ok(GoldenOutcome::Failed {
                reason: format!(
                    "golden {} does not exist (run with {BLESS_ENV}=1 to create it)",
                    golden.display()
                ),
                report: None,
                golden,
                actual: actual_path,
                diff: None,
            });
        }
        let expected = load_image(&golden)?.image;
        match compare_images(&expected, &actual, &self.options) {
            Ok(report) if report.matches() => Ok(GoldenOutcome::Matched(report)),
            Ok(report) => {
                save_png(&actual, &actual_path)?;
                save_png(&diff_image(&expected, &actual, &self.options)?, &diff_path)?;
                Ok(GoldenOutcome::Failed {
                    reason: format!("image differs from golden {}", golden.display()),
                    report: Some(report),
                    golden,
                    actual: actual_path,
                    diff: Some(diff_path),
                })
            }
            Err(GoldenError::SizeMismatch { first, second }) => {
                save_png(&actual, &actual_path)?;
                Ok(GoldenOutcome::Failed {
                    reason: format!(
                        "size mismatch: golden {} is {}x{}, the image is {}x{}",
                        golden.display(),
                        first.0,
                        first.1,
                        second.0,
                        second.1
                    ),
                    report: None,
                    golden,
                    actual: actual_path,
                    diff: None,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Runs [`Golden::check`] and panics when the image does not match or the check cannot
    /// run; the message has the comparison report and the paths of the actual and diff images.
    pub fn assert<I: ToRgbaImage + ?Sized>(&self, image: &I) -> GoldenOutcome {
        match self.check(image) {
            Ok(GoldenOutcome::Failed {
                reason,
                report,
                actual,
                diff,
                ..
            }) => {
                let mut message = format!("golden `{}` failed: {reason}\n", self.name);
                if let Some(report) = report {
                    message.push_str(&format!("{report}\n"));
                }
                message.push_str(&format!("  actual: {}\n", actual.display()));
                if let Some(diff) = diff {
                    message.push_str(&format!("  diff:   {}\n", diff.display()));
                }
                message.push_str(&format!(
                    "  (if the change is intended, rerun with {BLESS_ENV}=1 to update the golden)"
                ));
                panic!("{message}");
            }
            Ok(outcome) => outcome,
            Err(e) => panic!("golden `{}`: {e}", self.name),
        }
    }
}
