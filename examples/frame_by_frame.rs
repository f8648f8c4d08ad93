//! Feeds a moving picture through a preset frame by frame: one `FilterChain` renders every
//! frame and carries history and feedback from one to the next. The preset
//! (`examples/trails`) mixes each frame with its own previous output, so the moving square
//! leaves a fading trail:
//!
//! ```sh
//! cargo run --release --example frame_by_frame -- trails.png
//! ```

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::texture::Texture;

/// The side of the frames, in pixels.
pub const SIZE: u32 = 64;
/// The side of the square, which moves one side to the right per frame.
pub const SQUARE: u32 = 8;

fn main() -> Result<(), Box<dyn Error>> {
    let output = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "trails.png".to_string());
    let preset = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/trails/trails.slangp");
    let last = render_frames(&preset, 6)?;
    last.save_png(Path::new(&output))?;
    println!("wrote the last of 6 frames to {output}");
    Ok(())
}

/// Frame `index` of the input: black, with a white square at `x = index * SQUARE`.
pub fn moving_square(index: u32) -> Texture {
    let mut pixels = vec![0u8; (SIZE * SIZE * 4) as usize];
    for (i, pixel) in pixels.chunks_exact_mut(4).enumerate() {
        let (x, y) = (i as u32 % SIZE, i as u32 / SIZE);
        let inside = (index * SQUARE..(index + 1) * SQUARE).contains(&x) && y < SQUARE;
        let level = if inside { 255 } else { 0 };
        pixel.copy_from_slice(&[level, level, level, 255]);
    }
    Texture::from_rgba8(SIZE, SIZE, pixels).expect("SIZE * SIZE * 4 bytes")
}

/// Renders frames `0..count` of the moving square through `preset` and returns the last.
pub fn render_frames(preset: &Path, count: u32) -> Result<Texture, Box<dyn Error>> {
    let mut chain = FilterChain::load(preset, &ChainOptions::default())?;
    let mut last = None;
    for index in 0..count {
        let input = Arc::new(moving_square(index));
        // The frame number feeds `FrameCount`; the chain keeps this input for
        // `OriginalHistory1` and every pass output for `PassFeedbackN` of the next frame.
        let options = FrameOptions::default();
        last = Some(chain.frame(&input, (SIZE, SIZE), index as u64, &options)?);
    }
    Ok(last.expect("count > 0"))
}
