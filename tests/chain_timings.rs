//! Where a chain's time goes: `FilterChain::pass_timings` counts every drawn pass with its
//! target size and fragment program, and `softgpu render --timings` prints it, a line per pass.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::texture::Texture;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn pass_timings_count_frames_sizes_and_instructions() {
    let preset = root().join("tests/chain/scales.slangp");
    let mut chain = FilterChain::load(&preset, &ChainOptions::default()).unwrap();
    let input = Arc::new(Texture::load(&root().join("tests/chain/inputs/scene64x48.png")).unwrap());
    let before = chain.pass_timings().to_vec();
    assert_eq!(before.len(), 6);
    assert!(before
        .iter()
        .all(|p| p.frames == 0 && p.draw == Duration::ZERO && p.prepare == Duration::ZERO));
    for frame in 0..3 {
        chain
            .frame(&input, (80, 60), frame, &FrameOptions::default())
            .unwrap();
    }
    let timings = chain.pass_timings();
    // The sizes the preset's comments derive (the last pass draws the viewport).
    let sizes = [(128, 96), (100, 72), (40, 30), (19, 23), (1, 3), (80, 60)];
    for (k, (p, size)) in timings.iter().zip(sizes).enumerate() {
        // A still input: the first frame draws every pass, the others may reuse them.
        assert_eq!(p.frames + p.reused, 3, "{}", p.label);
        assert!(p.frames >= 1, "{}", p.label);
        assert_eq!(p.size, size, "{}", p.label);
        assert!(p.label.starts_with(&format!("pass {k} (")), "{}", p.label);
        assert!(p.draw > Duration::ZERO, "{}", p.label);
        assert!(p.fragment_instructions > 0, "{}", p.label);
    }
    // `stock.slang` is a texture read and a move; `size_report.slang` computes far more.
    assert!(timings[5].fragment_instructions > 10 * timings[0].fragment_instructions);
}

/// `softgpu render` of `scales.slangp` on the 64x48 input, without the shader cache, with
/// `extra` flags, into `output`.
fn render_scales(extra: &[&str], output: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .current_dir(root())
        .args([
            "render",
            "--preset",
            "tests/chain/scales.slangp",
            "--input",
            "tests/chain/inputs/scene64x48.png",
            "--no-shader-cache",
        ])
        .args(extra)
        .arg("--output")
        .arg(output)
        .output()
        .unwrap()
}

#[test]
fn render_timings_prints_a_line_per_pass() {
    let out = tempfile::tempdir().unwrap();
    let run = render_scales(
        &["--size", "80x60", "--frames", "2", "--timings"],
        &out.path().join("scales.png"),
    );
    assert!(run.status.success());
    let report = String::from_utf8(run.stderr).unwrap();
    let lines: Vec<&str> = report.lines().collect();
    assert!(lines[0].starts_with("load "), "{report}");
    assert!(
        lines[1].contains("draw ms/f") && lines[1].ends_with("pass"),
        "{report}"
    );
    assert_eq!(lines.len(), 2 + 6, "{report}");
    for (k, line) in lines[2..].iter().enumerate() {
        assert!(line.contains(&format!("pass {k} (")), "{report}");
    }
    assert!(lines[4].contains(" 40x30 "), "{report}");
    // Without the flag nothing is printed.
    let quiet = render_scales(&[], &out.path().join("quiet.png"));
    assert!(quiet.status.success());
    assert!(quiet.stderr.is_empty(), "{:?}", quiet.stderr);
}
