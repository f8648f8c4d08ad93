//! Golden-image regression testing: compare images, assert renders against committed goldens,
//! and run suites of draw and preset cases, written as TOML or found as a corpus of presets
//! (`softgpu compare`, `softgpu test`, [`assert_golden`]).
//!
//! Everything compares RGBA8 pixels channel by channel. Two images *match* when at most
//! `max_pixels_percent` of their pixels have a channel that differs by more than `tolerance`
//! (in 1/255 steps); see [`CompareOptions`] and [`CompareReport`].

mod assert;
pub mod cli;
mod compare;
pub mod corpus;
pub mod report;
pub mod runner;
pub mod suite;

pub use assert::{assert_golden, Golden, GoldenOutcome, BLESS_ENV, DIR_ENV};
pub use compare::{
    compare_images, diff_image, heat_colour, CompareOptions, CompareReport, WITHIN_TOLERANCE_COLOUR,
};

use crate::texture::Texture;
use image::{ColorType, DynamicImage, RgbaImage};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a comparison, a golden check or a suite could not be carried out (as opposed to images
/// that simply differ, which is a [`CompareReport`] that does not match).
#[derive(Debug, Error)]
pub enum GoldenError {
    /// The images have different sizes.
    #[error("size mismatch: the first image is {}x{}, the second is {}x{}", first.0, first.1, second.0, second.1)]
    SizeMismatch {
        /// Width and height of the first image.
        first: (u32, u32),
        /// Width and height of the second image.
        second: (u32, u32),
    },
    /// The image files have different pixel formats.
    #[error("format mismatch: {} is {first}, {} is {second} (convert one so both have the same channels)", first_path.display(), second_path.display())]
    FormatMismatch {
        /// The first file.
        first_path: PathBuf,
        /// Its format.
        first: String,
        /// The second file.
        second_path: PathBuf,
        /// Its format.
        second: String,
    },
    /// An image file could not be read, decoded or written.
    #[error("{}: {message}", path.display())]
    Image {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Two image files of different sizes.
    #[error("size mismatch: {} is {}x{}, {} is {}x{}", first_path.display(), first.0, first.1, second_path.display(), second.0, second.1)]
    FileSizeMismatch {
        /// The first file.
        first_path: PathBuf,
        /// Its width and height.
        first: (u32, u32),
        /// The second file.
        second_path: PathBuf,
        /// Its width and height.
        second: (u32, u32),
    },
    /// Invalid comparison options or golden name.
    #[error("{0}")]
    Options(String),
    /// A malformed suite file; the message starts with `FILE:LINE:`.
    #[error("{0}")]
    Suite(String),
}

/// Images the golden API accepts: converted to RGBA8 for comparison and storage.
pub trait ToRgbaImage {
    /// This image as RGBA8, row 0 at the top.
    fn to_rgba_image(&self) -> RgbaImage;
}

impl ToRgbaImage for RgbaImage {
    fn to_rgba_image(&self) -> RgbaImage {
        self.clone()
    }
}

impl ToRgbaImage for DynamicImage {
    fn to_rgba_image(&self) -> RgbaImage {
        self.to_rgba8()
    }
}

impl ToRgbaImage for Texture {
    /// Level 0, converted as [`Texture::save_png`] does.
    fn to_rgba_image(&self) -> RgbaImage {
        texture_to_image(self)
    }
}

/// Level 0 of a texture as an RGBA8 image (converted as [`Texture::save_png`] does).
pub fn texture_to_image(texture: &Texture) -> RgbaImage {
    RgbaImage::from_raw(texture.width(), texture.height(), texture.to_rgba8())
        .expect("Texture::to_rgba8 returns width*height*4 bytes")
}

/// An image file decoded to RGBA8, with the pixel format it was stored in.
#[derive(Clone, Debug)]
pub struct LoadedImage {
    /// The pixels.
    pub image: RgbaImage,
    /// The file's pixel format.
    pub color: ColorType,
}

/// Loads a PNG or JPEG. Only 8-bit-per-channel formats are accepted (grey, grey+alpha, RGB,
/// RGBA), so no precision is lost in the RGBA8 comparison.
pub fn load_image(path: &Path) -> Result<LoadedImage, GoldenError> {
    let error = |message: String| GoldenError::Image {
        path: path.to_path_buf(),
        message,
    };
    // Read through `input` (a FIFO or device is refused by name, the decoder's limits are set);
    // the header without a side limit, so that the size error below can say what the size is.
    let reader = |max_side| {
        crate::input::image_reader(path, "image", max_side).map_err(|e| error(e.message))
    };
    let (w, h) = reader(u32::MAX)?
        .into_dimensions()
        .map_err(|e| error(format!("cannot decode image: {e}")))?;
    if w == 0 || h == 0 || w > Texture::MAX_DIMENSION || h > Texture::MAX_DIMENSION {
        return Err(error(format!(
            "image size {w}x{h} is invalid: each side must be 1..={}",
            Texture::MAX_DIMENSION
        )));
    }
    let decoded = reader(Texture::MAX_DIMENSION)?
        .decode()
        .map_err(|e| error(format!("cannot decode image: {e}")))?;
    let color = decoded.color();
    match color {
        ColorType::L8 | ColorType::La8 | ColorType::Rgb8 | ColorType::Rgba8 => {}
        other => {
            return Err(error(format!(
                "expected an 8-bit-per-channel image (L8, LA8, RGB8 or RGBA8), found {}",
                color_name(other)
            )))
        }
    }
    Ok(LoadedImage {
        image: decoded.into_rgba8(),
        color,
    })
}

/// A short name of a pixel format (`RGBA8`, `RGB8`, …).
pub fn color_name(color: ColorType) -> String {
    match color {
        ColorType::L8 => "L8 (grey)".into(),
        ColorType::La8 => "LA8 (grey+alpha)".into(),
        ColorType::Rgb8 => "RGB8".into(),
        ColorType::Rgba8 => "RGBA8".into(),
        ColorType::L16 => "L16".into(),
        ColorType::La16 => "LA16".into(),
        ColorType::Rgb16 => "RGB16".into(),
        ColorType::Rgba16 => "RGBA16".into(),
        ColorType::Rgb32F => "RGB32F".into(),
        ColorType::Rgba32F => "RGBA32F".into(),
        other => format!("{other:?}"),
    }
}

/// Loads two image files and compares them; size and pixel-format mismatches are errors.
pub fn compare_files(
    first: &Path,
    second: &Path,
    options: &CompareOptions,
) -> Result<(CompareReport, RgbaImage, RgbaImage), GoldenError> {
    options.validate()?;
    let a = load_image(first)?;
    let b = load_image(second)?;
    if a.color != b.color {
        return Err(GoldenError::FormatMismatch {
            first_path: first.to_path_buf(),
            first: color_name(a.color),
            second_path: second.to_path_buf(),
            second: color_name(b.color),
        });
    }
    if a.image.dimensions() != b.image.dimensions() {
        return Err(GoldenError::FileSizeMismatch {
            first_path: first.to_path_buf(),
            first: a.image.dimensions(),
            second_path: second.to_path_buf(),
            second: b.image.dimensions(),
        });
    }
    let report = compare_images(&a.image, &b.image, options)?;
    Ok((report, a.image, b.image))
}

/// Encodes an image as PNG bytes (deterministic: same pixels, same bytes).
pub fn encode_png(image: &RgbaImage) -> Vec<u8> {
    let mut bytes = Vec::new();
    image
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .expect("encoding a valid RGBA8 image to memory cannot fail");
    bytes
}

/// Writes an image as PNG, atomically (a failed write leaves an existing file as it was),
/// creating missing parent directories.
pub fn save_png(image: &RgbaImage, path: &Path) -> Result<(), GoldenError> {
    let error = |message: String| GoldenError::Image {
        path: path.to_path_buf(),
        message,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| error(format!("cannot create directory: {e}")))?;
    }
    crate::output::write_atomic(path, "PNG", &encode_png(image)).map_err(|e| error(e.message))
}
