//! The picture check shared by the driver golden tests (`golden_mesa.rs`, `golden_frontends.rs`):
//! per-channel comparison with a tolerance and a pixel budget, an amplified diff picture next to
//! the actual one, and a message that lists the first differing pixels.

// Each test crate uses the part it needs.
#![allow(dead_code)]

use image::{Rgba, RgbaImage};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// `softgpu draw` of a `mesa_run.py` output directory (`vs.tgsi`, `fs.tgsi`, `vertices.txt`,
/// `consts.txt`, `tex0.png`) at `width`x`height` with OpenGL conventions, run in that directory;
/// callers add their own flags and `--out`.
pub fn mesa_dir_draw(dir: &Path, width: u32, height: u32) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_softgpu"));
    command.current_dir(dir).args([
        "draw",
        "--vs",
        "vs.tgsi",
        "--fs",
        "fs.tgsi",
        "--vertices",
        "vertices.txt",
        "--consts",
        "consts.txt",
        "--texture",
        "0=tex0.png",
        "--size",
        &format!("{width}x{height}"),
        "--convention",
        "gl",
    ]);
    command
}

/// Loads a PNG as RGBA8; errors name the file.
pub fn load_png(path: &Path) -> Result<RgbaImage, String> {
    image::open(path)
        .map(|i| i.to_rgba8())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Compares the picture softgpu wrote at `actual_path` with `expected` (read from
/// `expected_path`). Channels may differ by `tolerance`; at most `budget` pixels may differ by
/// more (`None`: none, and the message does not mention a budget). On failure `diff.png` is
/// written into `artifacts` and the message names every file and `command`.
pub fn compare_pictures(
    expected_path: &Path,
    expected: &RgbaImage,
    actual_path: &Path,
    artifacts: &Path,
    command: &str,
    tolerance: u8,
    budget: Option<usize>,
) -> Result<(), String> {
    let (width, height) = expected.dimensions();
    let actual = load_png(actual_path)?;
    if actual.dimensions() != expected.dimensions() {
        return Err(format!(
            "softgpu wrote a {}x{} picture, the reference is {width}x{height}\nactual: {}",
            actual.width(),
            actual.height(),
            actual_path.display()
        ));
    }

    let mut diff = RgbaImage::new(width, height);
    let mut max_diff = 0u8;
    let mut bad = Vec::new();
    for (x, y, e) in expected.enumerate_pixels() {
        let a = actual.get_pixel(x, y);
        let d: [u8; 4] = std::array::from_fn(|c| e[c].abs_diff(a[c]));
        let worst = d.iter().copied().max().unwrap_or(0);
        max_diff = max_diff.max(worst);
        if worst > tolerance {
            bad.push((x, y, *e, *a));
        }
        // Amplified difference; pixels beyond the tolerance are opaque, the rest faint.
        let alpha = if worst > tolerance { 255 } else { 64 };
        diff.put_pixel(
            x,
            y,
            Rgba([
                d[0].saturating_mul(16),
                d[1].saturating_mul(16),
                d[2].saturating_mul(16).max(d[3].saturating_mul(16)),
                alpha,
            ]),
        );
    }
    if bad.len() <= budget.unwrap_or(0) {
        return Ok(());
    }
    let diff_path = artifacts.join("diff.png");
    diff.save(&diff_path)
        .map_err(|e| format!("{}: {e}", diff_path.display()))?;
    let budget = budget.map_or(String::new(), |b| format!(" (budget {b})"));
    let mut message = format!(
        "{} pixel(s) differ by more than {tolerance}/255{budget}, max difference {max_diff}/255\n\
         expected: {}\nactual:   {}\ndiff:     {} (|difference| x16; blue also shows alpha)\ncommand:  {command}\n",
        bad.len(),
        expected_path.display(),
        actual_path.display(),
        diff_path.display()
    );
    for (x, y, e, a) in bad.iter().take(8) {
        let _ = writeln!(
            message,
            "  pixel ({x}, {y}) [row 0 = top]: expected {:?}, got {:?}",
            e.0, a.0
        );
    }
    Err(message)
}
