//! Lists a preset's shader parameters (`#pragma parameter`) with their values, then renders it
//! with one of them changed:
//!
//! ```sh
//! cargo run --release --example parameters -- HARD_SCAN=-4 scanlines.png
//! ```

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::texture::Texture;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let setting = args.next().unwrap_or_else(|| "HARD_SCAN=-4".to_string());
    let output = args.next().unwrap_or_else(|| "scanlines.png".to_string());
    let (name, value) = setting
        .split_once('=')
        .ok_or("expected NAME=VALUE, e.g. HARD_SCAN=-4")?;
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/crt");
    let preset = examples.join("crt.slangp");

    for (name, value) in parameters(&preset)? {
        println!("{name} = {value}");
    }
    let input = Arc::new(Texture::load(&examples.join("frame.png"))?);
    let image = render_with(&preset, &input, &[(name.to_string(), value.parse()?)])?;
    image.save_png(Path::new(&output))?;
    println!("wrote {output} with {setting}");
    Ok(())
}

/// Every parameter of `preset` with the value a chain uses: the shader's default, or the
/// preset's own value for it. Sorted by name.
pub fn parameters(preset: &Path) -> Result<Vec<(String, f32)>, Box<dyn Error>> {
    let chain = FilterChain::load(preset, &ChainOptions::default())?;
    let mut list: Vec<(String, f32)> = chain
        .parameters()
        .iter()
        .map(|(name, value)| (name.clone(), *value))
        .collect();
    list.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(list)
}

/// Frame 0 of `preset` at 640x480 with `overrides` applied. Parameters are fixed when the
/// chain is built (softgpu folds them into the compiled passes): to change one, build the
/// chain again (fast with `ChainOptions::shader_cache`).
pub fn render_with(
    preset: &Path,
    input: &Arc<Texture>,
    overrides: &[(String, f32)],
) -> Result<Texture, Box<dyn Error>> {
    let options = ChainOptions {
        parameters: overrides.to_vec(),
        ..ChainOptions::default()
    };
    let mut chain = FilterChain::load(preset, &options)?;
    Ok(chain.frame(input, (640, 480), 0, &FrameOptions::default())?)
}
