//! Golden tests of the WGSL and RetroArch slang frontends against real drivers.
//!
//! `reference-images/wgsl/NAME/` holds a WGSL shader that Mesa's lavapipe (Vulkan) rendered
//! through wgpu (`tools/make_wgsl_refs.py`); `reference-images/vulkan_glsl/NAME/` a slang shader that
//! Mesa softpipe rendered after glslang → SPIR-V → spirv-cross GLSL 330
//! (`tools/make_vulkan_glsl_refs.py`). Each directory's `command.txt` records the matching
//! `softgpu draw` line (`softgpu: …`), which the test runs on the committed inputs; every channel
//! of the result may differ from `out.png` by at most 1/255.

mod golden_support;

use golden_support::load_png;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Largest per-channel difference (in 1/255 steps) that counts as equal.
const TOLERANCE: u8 = 1;

fn refs_root(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("reference-images")
        .join(kind)
}

/// The recorded `softgpu draw` arguments (after `softgpu`), from the `softgpu:` line.
fn draw_args(dir: &Path) -> Result<Vec<String>, String> {
    let path = dir.join("command.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("softgpu:"))
        .ok_or_else(|| format!("{}: no `softgpu: softgpu draw …` line", path.display()))?;
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if words.len() < 2 || words[0] != "softgpu" || words[1] != "draw" {
        return Err(format!(
            "{}: expected `softgpu: softgpu draw …`, found {line:?}",
            path.display()
        ));
    }
    if words.iter().filter(|w| *w == "OUT.png").count() != 1 {
        return Err(format!(
            "{}: expected one `--out OUT.png` in {line:?}",
            path.display()
        ));
    }
    Ok(words[1..].to_vec())
}

/// Where failing runs leave their pictures (kept after the test ends, for inspection).
fn artifact_dir(kind: &str, name: &str) -> PathBuf {
    std::env::temp_dir()
        .join("softgpu-golden-frontends")
        .join(kind)
        .join(name)
}

fn check(kind: &str, name: &str) {
    if let Err(message) = run_check(kind, name) {
        panic!("{kind} golden reference `{name}` failed:\n{message}");
    }
}

fn run_check(kind: &str, name: &str) -> Result<(), String> {
    let dir = refs_root(kind).join(name);
    let expected = load_png(&dir.join("out.png"))?;
    let artifacts = artifact_dir(kind, name);
    std::fs::create_dir_all(&artifacts).map_err(|e| format!("{}: {e}", artifacts.display()))?;
    let actual_path = artifacts.join("actual.png");
    let _ = std::fs::remove_file(&actual_path);

    let mut command = Command::new(env!("CARGO_BIN_EXE_softgpu"));
    command.current_dir(&dir);
    for arg in draw_args(&dir)? {
        if arg == "OUT.png" {
            command.arg(&actual_path);
        } else {
            command.arg(arg);
        }
    }
    let shown = format!("{command:?}");
    let output = command
        .output()
        .map_err(|e| format!("could not start softgpu: {e}\n{shown}"))?;
    if !output.status.success() {
        return Err(format!(
            "softgpu exited with {}\ncommand: {shown}\nstderr:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    golden_support::compare_pictures(
        &dir.join("out.png"),
        &expected,
        &actual_path,
        &artifacts,
        &shown,
        TOLERANCE,
        None,
    )
}

/// The reference directories of `kind`, sorted.
fn directories(kind: &str) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(refs_root(kind))
        .unwrap_or_else(|e| panic!("reference-images/{kind}: {e}"))
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort_unstable();
    found
}

/// Every listed directory exists with all its files, and every directory is listed.
fn check_inventory(kind: &str, shader: &str, driver_key: &str, listed: &[&str]) {
    let mut listed = listed.to_vec();
    listed.sort_unstable();
    assert_eq!(
        directories(kind),
        listed,
        "reference-images/{kind} directories vs. the list in tests/golden_frontends.rs"
    );
    for name in &listed {
        let dir = refs_root(kind).join(name);
        for file in [
            shader,
            "vertices.txt",
            "consts.txt",
            "tex0.png",
            "out.png",
            "command.txt",
        ] {
            assert!(dir.join(file).is_file(), "{kind}/{name}: missing {file}");
        }
        let command = std::fs::read_to_string(dir.join("command.txt")).unwrap();
        assert!(
            command.lines().any(|l| l.starts_with(driver_key)),
            "{kind}/{name}: command.txt does not name the driver (`{driver_key}` line)"
        );
        let args = draw_args(&dir).unwrap_or_else(|e| panic!("{e}"));
        for flag in ["--vs", "--fs"] {
            let i = args.iter().position(|a| a == flag);
            assert_eq!(
                i.and_then(|i| args.get(i + 1)).map(String::as_str),
                Some(shader),
                "{kind}/{name}: the draw line must run {flag} {shader}"
            );
        }
    }
}

macro_rules! golden {
    ($kind:literal, $shader:literal, $driver:literal, $inventory:ident,
     [$($(#[$attr:meta])* $name:ident),* $(,)?]) => {
        $(
            #[test]
            $(#[$attr])*
            fn $name() {
                check($kind, stringify!($name));
            }
        )*

        #[test]
        fn $inventory() {
            check_inventory($kind, $shader, $driver, &[$(stringify!($name)),*]);
        }
    };
}

mod wgsl {
    use super::*;

    golden!(
        "wgsl",
        "shader.wgsl",
        "adapter:",
        every_wgsl_reference_is_tested_and_complete,
        [
            arith,
            branches,
            derivatives,
            discard,
            // WebGPU's framebuffer y points down (position.y counts rows from the top, dpdy runs
            // downward) while its NDC y points up: only `--convention webgpu` gets both right.
            frag_position_dpdy,
            int_ops,
            loop_break,
            tex_linear,
            tex_load,
            tex_nearest,
        ]
    );
}

mod vulkan_glsl {
    use super::*;

    golden!(
        "vulkan_glsl",
        "shader.slang",
        "driver:",
        every_slang_reference_is_tested_and_complete,
        [
            color_grade,
            crt_curve,
            pixel_grid,
            scanlines,
            sharpen,
            stock
        ]
    );
}
