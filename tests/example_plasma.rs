//! The README's example: softgpu's `draw` of the bundled plasma shader equals softpipe's picture
//! (640x480, so many 64x64 tiles; within 1/255 per channel, and in fact byte for byte).

use std::path::Path;
use std::process::Command;

#[test]
fn plasma_matches_softpipe() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/plasma");
    let out = tempfile::tempdir().unwrap();
    let actual_path = out.path().join("plasma.png");
    let status = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .arg("draw")
        .args(["--vs".as_ref(), dir.join("vs.tgsi").as_os_str()])
        .args(["--fs".as_ref(), dir.join("fs.tgsi").as_os_str()])
        .args(["--vertices".as_ref(), dir.join("vertices.txt").as_os_str()])
        .args(["--consts".as_ref(), dir.join("consts.txt").as_os_str()])
        .arg("--texture")
        .arg(format!("0={}", dir.join("tex0.png").display()))
        .args(["--size", "640x480", "--out"])
        .arg(&actual_path)
        .status()
        .unwrap();
    assert!(status.success());
    let actual = image::open(&actual_path).unwrap().to_rgba8();
    let expected = image::open(dir.join("softpipe.png")).unwrap().to_rgba8();
    assert_eq!(actual.dimensions(), expected.dimensions());
    let mut worst = 0u8;
    let mut differing = 0usize;
    for (a, e) in actual.pixels().zip(expected.pixels()) {
        let diff =
            a.0.iter()
                .zip(e.0)
                .map(|(x, y)| x.abs_diff(y))
                .max()
                .unwrap();
        worst = worst.max(diff);
        differing += usize::from(diff > 0);
    }
    assert!(
        worst <= 1,
        "max channel difference {worst}, {differing} pixels differ"
    );
}
