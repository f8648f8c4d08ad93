//! Golden-image testing with the library: renders the bundled preset and compares it with a
//! committed reference image under a tolerance, as a test in your own crate would. Exits 1 when
//! the images differ:
//!
//! ```sh
//! cargo run --release --example golden
//! ```

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::golden::{
    compare_images, load_image, texture_to_image, CompareOptions, CompareReport, Golden,
    GoldenOutcome,
};
use softgpu::texture::Texture;

fn main() -> Result<(), Box<dyn Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (report, outcome) = check_bundled_preset(root)?;
    println!("compare_images: {}", report.summary());
    match outcome {
        GoldenOutcome::Matched(_) => println!("golden examples/crt: matches"),
        GoldenOutcome::Blessed { path, .. } => println!("wrote {}", path.display()),
        GoldenOutcome::Failed { reason, .. } => {
            eprintln!("golden examples/crt: {reason}");
            std::process::exit(1);
        }
    }
    Ok(())
}

/// Renders the bundled preset and checks it against `reference-images/examples/crt.png`
/// (librashader's render on Mesa lavapipe) both ways the golden API offers.
pub fn check_bundled_preset(root: &Path) -> Result<(CompareReport, GoldenOutcome), Box<dyn Error>> {
    let mut chain = FilterChain::load(
        &root.join("examples/crt/crt.slangp"),
        &ChainOptions::default(),
    )?;
    let input = Arc::new(Texture::load(&root.join("examples/crt/frame.png"))?);
    let rendered = chain.frame(&input, (640, 480), 0, &FrameOptions::default())?;

    // 1. Two images compared directly: every channel within 2/255, no pixel allowed over.
    let reference = load_image(&root.join("reference-images/examples/crt.png"))?;
    let options = CompareOptions {
        tolerance: 2,
        max_pixels_percent: 0.0,
    };
    let report = compare_images(&reference.image, &texture_to_image(&rendered), &options)?;

    // 2. The snapshot-test form: `Golden` reads `DIR/NAME.png`, compares, and on a mismatch
    //    writes `NAME.actual.png` and `NAME.diff.png` beside it (`SOFTGPU_BLESS=1` writes the
    //    golden instead). `assert_golden("NAME", &image)` is the one-line form that panics.
    let outcome = Golden::new("examples/crt")
        .dir(root.join("reference-images"))
        .tolerance(2)
        .bless(false)
        .check(&rendered)?;
    Ok((report, outcome))
}
