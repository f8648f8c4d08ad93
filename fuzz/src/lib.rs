//! What the fuzz targets share: input size bounds, a private scratch folder per process, and
//! the multi-file input format that lets one fuzzer input carry a main file and the files it
//! includes or references.
//!
//! A multi-file input is text; a line `@@file PATH` starts another file at `PATH`, relative to
//! the main file's folder (components of `[A-Za-z0-9._-]` or `..`, at most [`MAX_PATH_DEPTH`]
//! of them, never above the scratch folder; at most [`MAX_FILES`] files), and the text before
//! the first such line is the main file. The main file lies two folders below the scratch
//! folder, so `../shaders/x.slang` and `inc/common.inc` both work. Every file is written into the
//! scratch folder, which is emptied before each input, so a target never writes outside it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The largest input a text target (shader, preset, suite) reads: big enough for every seed,
/// small enough that one execution stays fast.
pub const MAX_TEXT_INPUT: usize = 64 << 10;
/// The largest input the image target reads.
pub const MAX_IMAGE_INPUT: usize = 256 << 10;
/// The largest input the JIT-against-interpreter target reads.
pub const MAX_PROGRAM_INPUT: usize = 4 << 10;
/// Stack size of the thread the front-end targets run on (see [`on_small_stack`]).
pub const TARGET_STACK_BYTES: usize = 1 << 20;
/// The most files one multi-file input may carry (the main file included).
pub const MAX_FILES: usize = 8;

/// The most components a path of a multi-file input may have.
pub const MAX_PATH_DEPTH: usize = 4;
/// Where the main file of a multi-file input lies, below the scratch folder.
const MAIN_DIR: [&str; 2] = ["main", "pass"];

/// The line prefix that starts another file of a multi-file input.
pub const FILE_MARKER: &str = "@@file ";

/// Prefix of the scratch folders' names, followed by the process id.
const SCRATCH_PREFIX: &str = "softgpu-fuzz-";

/// The text of `data` when it is UTF-8 of at most `limit` bytes.
pub fn text_input(data: &[u8], limit: usize) -> Option<&str> {
    if data.len() > limit {
        return None;
    }
    std::str::from_utf8(data).ok()
}

/// This process's scratch folder (under the system temporary folder), created on first use.
/// Folders that earlier fuzzing processes left behind (their process is gone) are removed then.
pub fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        remove_stale_scratch(&tmp);
        let dir = tmp.join(format!("{SCRATCH_PREFIX}{}", std::process::id()));
        fs::create_dir_all(&dir).expect("the temporary folder is writable");
        dir
    })
}

/// Removes scratch folders whose process no longer runs (libFuzzer ends a process with
/// `exit`, so a folder is never removed by the process that made it).
fn remove_stale_scratch(tmp: &Path) {
    let Ok(entries) = fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(SCRATCH_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Empties the scratch folder and returns it.
pub fn fresh_scratch() -> &'static Path {
    let dir = scratch_dir();
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                let _ = fs::remove_dir_all(&path);
            } else {
                let _ = fs::remove_file(&path);
            }
        }
    }
    dir
}

/// The path below the scratch folder of `name`, relative to the main file's folder, if `name`
/// is usable (see the module documentation).
fn scratch_path(name: &str) -> Option<PathBuf> {
    let mut parts: Vec<&str> = MAIN_DIR.to_vec();
    let components: Vec<&str> = name.split('/').collect();
    // The last component names the file.
    if components.len() > MAX_PATH_DEPTH || components.last() == Some(&"..") {
        return None;
    }
    for component in components {
        match component {
            ".." => {
                parts.pop()?;
            }
            "" | "." => return None,
            c if c.len() <= 64
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) =>
            {
                parts.push(c)
            }
            _ => return None,
        }
    }
    Some(parts.iter().collect())
}

/// Splits a multi-file input into (path below the scratch folder, text) pairs, the main file
/// first (named `main_name`). Markers with an unusable path are kept as text of the file they
/// appear in.
pub fn split_files<'a>(text: &'a str, main_name: &str) -> Vec<(PathBuf, &'a str)> {
    let mut files: Vec<(PathBuf, &str)> = Vec::new();
    let mut path = scratch_path(main_name).expect("a usable main file name");
    let mut start = 0;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let line_start = pos;
        pos += line.len();
        let Some(next) = line
            .trim_end()
            .strip_prefix(FILE_MARKER)
            .and_then(scratch_path)
        else {
            continue;
        };
        if files.len() + 1 >= MAX_FILES {
            continue;
        }
        files.push((path, &text[start..line_start]));
        path = next;
        start = pos;
    }
    files.push((path, &text[start..]));
    files
}

/// Writes a multi-file input into a freshly emptied scratch folder; returns the main file's
/// path and text. A file whose path is taken by a folder is left out.
pub fn write_files<'a>(text: &'a str, main_name: &str) -> (PathBuf, &'a str) {
    let dir = fresh_scratch();
    let files = split_files(text, main_name);
    for (path, body) in &files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            let _ = fs::create_dir_all(parent);
        }
        let _ = fs::write(&path, body);
    }
    (dir.join(&files[0].0), files[0].1)
}

/// Runs `work` on a thread with a [`TARGET_STACK_BYTES`] stack and returns its result; a panic
/// in it is raised again here. Inputs are bounded to tens of KiB, so recursion whose depth the
/// input decides would overflow the 8 MiB main thread only with inputs far larger than that:
/// on a small stack the same unbounded recursion shows as a stack overflow with a small input.
pub fn on_small_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .stack_size(TARGET_STACK_BYTES)
            .spawn_scoped(scope, work)
            .expect("a thread can be started");
        handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
