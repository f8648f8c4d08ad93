//! Shared by the tests that run the `softgpu` binary on hostile inputs: a scratch directory with
//! the stock pass-through shader and a small input frame, the binary run with the memory budget
//! of the environment removed, and the checks every refused run must pass.

// Each test crate uses part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch directory holding `stock.slang` (the stock pass-through shader) and `in.png` (a
/// 64x48 frame).
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        let s = Scratch {
            dir: tempfile::tempdir().unwrap(),
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chain");
        std::fs::copy(root.join("shaders/stock.slang"), s.path("stock.slang")).unwrap();
        std::fs::copy(root.join("inputs/scene64x48.png"), s.path("in.png")).unwrap();
        s
    }

    /// The scratch directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn arg(&self, name: &str) -> String {
        self.path(name).to_string_lossy().into_owned()
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// The `softgpu` binary, with `SOFTGPU_MEMORY_BUDGET` removed so the machine's default applies.
pub fn softgpu_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_softgpu"));
    command.env_remove("SOFTGPU_MEMORY_BUDGET");
    command
}

/// Runs `softgpu` with `args` (see [`softgpu_command`]).
pub fn softgpu<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    softgpu_command().args(args).output().unwrap()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A failed run (exit `code`), without a panic, whose stderr contains every needle.
pub fn assert_failure(output: &Output, code: i32, needles: &[&str]) {
    let text = stderr(output);
    assert_eq!(
        output.status.code(),
        Some(code),
        "exit code; stderr: {text}"
    );
    assert!(!text.contains("panicked"), "panic: {text}");
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` missing from: {text}");
    }
}

/// A failed run with one `softgpu: error:` line (exit `code`) that contains every needle.
pub fn assert_error(output: &Output, code: i32, needles: &[&str]) {
    assert_failure(output, code, needles);
    let text = stderr(output);
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("softgpu: error"))
            .count(),
        1,
        "one error line expected: {text}"
    );
}
