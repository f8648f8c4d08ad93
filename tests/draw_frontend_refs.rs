//! Golden tests of `softgpu draw` on slang shaders that need more than `CONST[0]`: push-constant
//! blocks set with `--uniform`, std140 `mat2`/`mat3x2` in a UBO. Each
//! `reference-images/frontends/NAME/` was rendered by Mesa softpipe
//! (`reference-images/frontends/make_refs.py`: glslang → SPIR-V → spirv-cross GLSL 330); its
//! `command.txt` holds the matching `softgpu draw` line, run here on the committed inputs. Every
//! channel may differ from `out.png` by at most 1/255.

mod golden_support;

use golden_support::load_png;
use std::path::{Path, PathBuf};
use std::process::Command;

const TOLERANCE: u8 = 1;

/// Every reference directory, each with its test below.
const REFERENCES: &[&str] = &["push_constants", "std140_mat2"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("reference-images/frontends")
}

fn draw_args(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("command.txt")).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("softgpu:"))
        .unwrap_or_else(|| panic!("{}: no `softgpu:` line", dir.display()));
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    assert_eq!(&words[..2], ["softgpu", "draw"], "{line}");
    words[1..].to_vec()
}

fn check(name: &str) {
    let dir = root().join(name);
    let expected = load_png(&dir.join("out.png")).unwrap_or_else(|e| panic!("{e}"));
    let artifacts = std::env::temp_dir()
        .join("softgpu-draw-frontend-refs")
        .join(name);
    std::fs::create_dir_all(&artifacts).unwrap();
    let actual = artifacts.join("actual.png");
    let _ = std::fs::remove_file(&actual);
    let mut command = Command::new(env!("CARGO_BIN_EXE_softgpu"));
    command.current_dir(&dir);
    for arg in draw_args(&dir) {
        if arg == "OUT.png" {
            command.arg(&actual);
        } else {
            command.arg(arg);
        }
    }
    let shown = format!("{command:?}");
    let output = command.output().expect("softgpu runs");
    assert!(
        output.status.success(),
        "{shown}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    if let Err(e) = golden_support::compare_pictures(
        &dir.join("out.png"),
        &expected,
        &actual,
        &artifacts,
        &shown,
        TOLERANCE,
        None,
    ) {
        panic!("{name}: {e}");
    }
}

#[test]
fn push_constants() {
    check("push_constants");
}

#[test]
fn std140_mat2() {
    check("std140_mat2");
}

#[test]
fn every_reference_is_listed_and_complete() {
    let mut found: Vec<String> = std::fs::read_dir(root())
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    assert_eq!(found, REFERENCES);
    for name in REFERENCES {
        let dir = root().join(name);
        for file in [
            "shader.slang",
            "stage.vert",
            "stage.frag",
            "vertices.txt",
            "consts.txt",
            "tex0.png",
            "out.png",
            "command.txt",
        ] {
            assert!(dir.join(file).is_file(), "{name}: missing {file}");
        }
        let command = std::fs::read_to_string(dir.join("command.txt")).unwrap();
        assert!(command.contains("driver: softpipe"), "{name}: {command}");
    }
}
