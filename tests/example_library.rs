//! The runnable examples of `examples/` (the library guide's code, docs/library.md) run here
//! and their results are checked, so that they cannot silently rot: each example file is
//! compiled into this test as a module and its functions are called as its `main` calls them.

use std::path::Path;
use std::sync::Arc;

use softgpu::golden::{compare_images, CompareOptions, GoldenOutcome};
use softgpu::texture::Texture;

#[allow(dead_code)]
#[path = "../examples/render_preset.rs"]
mod render_preset;

#[allow(dead_code)]
#[path = "../examples/frame_by_frame.rs"]
mod frame_by_frame;

#[allow(dead_code)]
#[path = "../examples/parameters.rs"]
mod parameters;

#[allow(dead_code)]
#[path = "../examples/golden.rs"]
mod golden;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn render_preset_draws_the_bundled_preset_like_librashader() {
    let crt = root().join("examples/crt");
    let image =
        render_preset::render_preset(&crt.join("crt.slangp"), &crt.join("frame.png"), (640, 480))
            .unwrap();
    let reference = image::open(root().join("reference-images/examples/crt.png"))
        .unwrap()
        .to_rgba8();
    let options = CompareOptions {
        tolerance: 2,
        ..CompareOptions::default()
    };
    let report = compare_images(&reference, &image, &options).unwrap();
    assert!(report.matches(), "{}", report.summary());
}

#[test]
fn frame_by_frame_carries_feedback_into_a_fading_trail() {
    let preset = root().join("examples/trails/trails.slangp");
    let last = frame_by_frame::render_frames(&preset, 6).unwrap();
    let pixels = last.to_rgba8();
    let red = |x: u32, y: u32| pixels[((y * frame_by_frame::SIZE + x) * 4) as usize];
    // Frame 5 draws the square at x = 40; each earlier position holds the previous frame's
    // value halved (DECAY = 0.5), stored in 8 bits at every step. Without feedback they would
    // be black.
    let along_the_trail: Vec<u8> = (0..6)
        .map(|i| red(i * frame_by_frame::SQUARE + 3, 3))
        .collect();
    assert_eq!(along_the_trail, [8, 16, 32, 64, 128, 255]);
    assert_eq!(
        red(3, frame_by_frame::SQUARE + 3),
        0,
        "below the square stays black"
    );
}

#[test]
fn parameters_lists_defaults_and_an_override_changes_the_image() {
    let crt = root().join("examples/crt");
    let preset = crt.join("crt.slangp");
    let list = parameters::parameters(&preset).unwrap();
    let names: Vec<&str> = list.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "BLOOM",
            "HARD_PIX",
            "HARD_SCAN",
            "MASK_DARK",
            "MASK_LIGHT",
            "WARP_X",
            "WARP_Y"
        ]
    );
    assert!(list.contains(&("HARD_SCAN".to_string(), -8.0)));
    let input = Arc::new(Texture::load(&crt.join("frame.png")).unwrap());
    let default = parameters::render_with(&preset, &input, &[]).unwrap();
    let softer = parameters::render_with(&preset, &input, &[("HARD_SCAN".into(), -4.0)]).unwrap();
    assert_ne!(default.to_rgba8(), softer.to_rgba8());
}

#[test]
fn golden_example_matches_the_committed_reference() {
    let (report, outcome) = golden::check_bundled_preset(root()).unwrap();
    assert!(report.matches(), "{}", report.summary());
    assert!(matches!(outcome, GoldenOutcome::Matched(_)), "{outcome:?}");
}
