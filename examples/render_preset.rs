//! Renders a RetroArch preset on one picture into an RGBA8 image buffer, then saves it:
//!
//! ```sh
//! cargo run --release --example render_preset -- crt.png
//! ```

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use image::RgbaImage;
use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::texture::Texture;

fn main() -> Result<(), Box<dyn Error>> {
    let output = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "crt.png".to_string());
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/crt");
    let image = render_preset(
        &examples.join("crt.slangp"),
        &examples.join("frame.png"),
        (640, 480),
    )?;
    image.save(&output)?;
    println!("wrote {output} ({}x{})", image.width(), image.height());
    Ok(())
}

/// Renders frame 0 of `preset` on the picture `input` into an image of `size` (the viewport).
pub fn render_preset(
    preset: &Path,
    input: &Path,
    size: (u32, u32),
) -> Result<RgbaImage, Box<dyn Error>> {
    // Parses the preset and compiles every pass. `ChainOptions` chooses the executor, an
    // on-disk shader cache (`shader_cache: Some(dir)` makes the next load fast), budgets, …
    let mut chain = FilterChain::load(preset, &ChainOptions::default())?;
    // Any RGBA8 buffer can be the input: `Texture::from_rgba8(width, height, bytes)`.
    let input = Arc::new(Texture::load(input)?);
    let output = chain.frame(&input, size, 0, &FrameOptions::default())?;
    // The output is R8G8B8A8_UNORM, row 0 at the top: its bytes are the image buffer.
    let pixels: Vec<u8> = output.to_rgba8();
    Ok(RgbaImage::from_raw(output.width(), output.height(), pixels)
        .expect("width * height * 4 bytes"))
}
