//! Image comparison: per-channel metrics, the pass/fail rule and the diff heat map.

use super::GoldenError;
use image::{Rgba, RgbaImage};

/// How close two images must be to match.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompareOptions {
    /// Largest per-channel difference (in 1/255 steps) that still counts as equal.
    pub tolerance: u8,
    /// Share of pixels, in percent (0..=100), that may exceed `tolerance`.
    pub max_pixels_percent: f64,
}

impl Default for CompareOptions {
    /// Exact comparison: no tolerance, no pixels allowed over it.
    fn default() -> Self {
        CompareOptions {
            tolerance: 0,
            max_pixels_percent: 0.0,
        }
    }
}

impl CompareOptions {
    /// Checks that `max_pixels_percent` is a finite percentage.
    pub fn validate(&self) -> Result<(), GoldenError> {
        if !(self.max_pixels_percent.is_finite()
            && (0.0..=100.0).contains(&self.max_pixels_percent))
        {
            return Err(GoldenError::Options(format!(
                "max pixels must be a percentage in 0..=100, found {}",
                self.max_pixels_percent
            )));
        }
        Ok(())
    }

    /// How many pixels of `total` may exceed the tolerance: `floor(total × percent / 100)`.
    pub fn allowed_pixels(&self, total: u64) -> u64 {
        // The small epsilon keeps shares such as 0.1% of 1000 pixels from rounding down to 99.
        (total as f64 * self.max_pixels_percent / 100.0 + 1e-9).floor() as u64
    }
}

/// The result of comparing two images of the same size.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareReport {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Largest difference of any channel of any pixel (0..=255).
    pub max_channel_diff: u8,
    /// Pixels with at least one channel differing by more than the tolerance.
    pub pixels_over: u64,
    /// `width × height`.
    pub total_pixels: u64,
    /// Pixels allowed over the tolerance ([`CompareOptions::allowed_pixels`]).
    pub allowed_pixels: u64,
    /// Peak signal-to-noise ratio over all RGBA channels in dB (`f64::INFINITY` when identical).
    pub psnr_db: f64,
    /// Mean absolute difference over all RGBA channels, in 1/255 steps.
    pub mean_abs_diff: f64,
    /// The options the images were compared with.
    pub options: CompareOptions,
}

impl CompareReport {
    /// Whether the images match: at most `allowed_pixels` pixels over the tolerance.
    pub fn matches(&self) -> bool {
        self.pixels_over <= self.allowed_pixels
    }

    /// Share of pixels over the tolerance, in percent.
    pub fn percent_over(&self) -> f64 {
        if self.total_pixels == 0 {
            0.0
        } else {
            self.pixels_over as f64 * 100.0 / self.total_pixels as f64
        }
    }

    /// PSNR as text: `inf` for identical images, else two decimals.
    pub fn psnr_text(&self) -> String {
        if self.psnr_db.is_infinite() {
            "inf".to_string()
        } else {
            format!("{:.2}", self.psnr_db)
        }
    }

    /// One line: max diff, pixels over tolerance, PSNR and mean difference.
    pub fn summary(&self) -> String {
        format!(
            "max diff {}/255, {} px ({:.3}%) over tolerance {} (allowed {}), PSNR {} dB, mean diff {:.4}/255",
            self.max_channel_diff,
            self.pixels_over,
            self.percent_over(),
            self.options.tolerance,
            self.allowed_pixels,
            self.psnr_text(),
            self.mean_abs_diff
        )
    }
}

impl std::fmt::Display for CompareReport {
    /// The multi-line form `softgpu compare` prints.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "size: {}x{}", self.width, self.height)?;
        writeln!(f, "max channel difference: {}/255", self.max_channel_diff)?;
        writeln!(
            f,
            "pixels over tolerance {}: {} of {} ({:.3}%), allowed {} ({}%)",
            self.options.tolerance,
            self.pixels_over,
            self.total_pixels,
            self.percent_over(),
            self.allowed_pixels,
            self.options.max_pixels_percent
        )?;
        writeln!(f, "PSNR: {} dB", self.psnr_text())?;
        write!(f, "mean absolute difference: {:.4}/255", self.mean_abs_diff)
    }
}

fn check_sizes(a: &RgbaImage, b: &RgbaImage) -> Result<(), GoldenError> {
    if a.dimensions() != b.dimensions() {
        return Err(GoldenError::SizeMismatch {
            first: a.dimensions(),
            second: b.dimensions(),
        });
    }
    Ok(())
}

fn pixel_max_diff(p: &Rgba<u8>, q: &Rgba<u8>) -> u8 {
    p.0.iter()
        .zip(q.0.iter())
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

/// Compares two RGBA8 images channel by channel. Images of different sizes are an error.
pub fn compare_images(
    a: &RgbaImage,
    b: &RgbaImage,
    options: &CompareOptions,
) -> Result<CompareReport, GoldenError> {
    options.validate()?;
    check_sizes(a, b)?;
    let mut max_channel_diff = 0u8;
    let mut pixels_over = 0u64;
    let mut sum_abs = 0u64;
    let mut sum_sq = 0u64;
    for (p, q) in a.pixels().zip(b.pixels()) {
        let mut pixel_max = 0u8;
        for (x, y) in p.0.iter().zip(q.0.iter()) {
            let d = x.abs_diff(*y);
            pixel_max = pixel_max.max(d);
            sum_abs += u64::from(d);
            sum_sq += u64::from(d) * u64::from(d);
        }
        max_channel_diff = max_channel_diff.max(pixel_max);
        if pixel_max > options.tolerance {
            pixels_over += 1;
        }
    }
    let total_pixels = u64::from(a.width()) * u64::from(a.height());
    let samples = (total_pixels * 4).max(1) as f64;
    let mse = sum_sq as f64 / samples;
    let psnr_db = if sum_sq == 0 {
        f64::INFINITY
    } else {
        10.0 * (255.0f64 * 255.0 / mse).log10()
    };
    Ok(CompareReport {
        width: a.width(),
        height: a.height(),
        max_channel_diff,
        pixels_over,
        total_pixels,
        allowed_pixels: options.allowed_pixels(total_pixels),
        psnr_db,
        mean_abs_diff: sum_abs as f64 / samples,
        options: *options,
    })
}

/// The colour [`diff_image`] gives a pixel whose largest channel difference `d` exceeds the
/// tolerance: red for the smallest differences through yellow (d ≈ 128) to white (d = 255), so
/// even a 2/255 difference stands out against the dimmed background.
pub fn heat_colour(d: u8) -> Rgba<u8> {
    let d = u32::from(d);
    if d <= 128 {
        Rgba([255, (d * 255 / 128) as u8, 0, 255])
    } else {
        Rgba([255, 255, ((d - 128) * 255 / 127) as u8, 255])
    }
}

/// Colour of pixels that differ but stay within the tolerance.
pub const WITHIN_TOLERANCE_COLOUR: Rgba<u8> = Rgba([40, 90, 255, 255]);

/// A heat map of where two images differ, drawn over a dimmed greyscale copy of `a`:
/// - identical pixels: `a`'s luma divided by 4 (grey, 0..=63), opaque;
/// - pixels that differ by at most `options.tolerance`: [`WITHIN_TOLERANCE_COLOUR`] (blue);
/// - pixels over the tolerance: [`heat_colour`] of their largest channel difference.
pub fn diff_image(
    a: &RgbaImage,
    b: &RgbaImage,
    options: &CompareOptions,
) -> Result<RgbaImage, GoldenError> {
    check_sizes(a, b)?;
    let mut out = RgbaImage::new(a.width(), a.height());
    for ((p, q), o) in a.pixels().zip(b.pixels()).zip(out.pixels_mut()) {
        let d = pixel_max_diff(p, q);
        *o = if d == 0 {
            let [r, g, b, _] = p.0.map(u32::from);
            // Rec. 601 luma in integers, so the picture is the same on every machine.
            let luma = ((299 * r + 587 * g + 114 * b) / 1000) as u8;
            let dim = luma / 4;
            Rgba([dim, dim, dim, 255])
        } else if d <= options.tolerance {
            WITHIN_TOLERANCE_COLOUR
        } else {
            heat_colour(d)
        };
    }
    Ok(out)
}
