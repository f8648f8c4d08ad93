//! The README's first command: render the bundled example preset (`examples/crt`) at 640x480 and
//! compare it with the reference peer's image (librashader on Mesa lavapipe; see
//! `reference-images/examples/command.txt`).

use std::path::Path;
use std::process::Command;

use softgpu::golden::{compare_images, CompareOptions};

#[test]
fn bundled_example_preset_renders_like_librashader() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let png = out.path().join("crt.png");
    let status = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .current_dir(root)
        .args([
            "render",
            "--preset",
            "examples/crt/crt.slangp",
            "--input",
            "examples/crt/frame.png",
            "--size",
            "640x480",
            "--output",
        ])
        .arg(&png)
        .status()
        .unwrap();
    assert!(status.success());
    let actual = image::open(&png).unwrap().to_rgba8();
    let expected = image::open(root.join("reference-images/examples/crt.png"))
        .unwrap()
        .to_rgba8();
    let options = CompareOptions {
        tolerance: 2,
        ..CompareOptions::default()
    };
    let report = compare_images(&expected, &actual, &options).unwrap();
    assert!(report.matches(), "{}", report.summary());
}
