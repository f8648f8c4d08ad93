//! `softgpu draw`'s use of the on-disk shader cache (`draw::compile_stage_cached`): a slang or
//! WGSL stage read from its entry equals the one compiled from source (program and uniform
//! blocks), a changed source, a corrupt or foreign entry and an unwritable directory each fall
//! back to compiling, TGSI is never cached, and `softgpu draw` draws the same bytes from a cold
//! and a warm cache (uniforms set by name included) and stores its kernels there.

use softgpu::draw::{compile_stage, compile_stage_cached};
use softgpu::ir::Processor;
use softgpu::shader::StageCacheUse;
use std::path::{Path, PathBuf};
use std::process::Command;

mod cache_support;
mod files_support;
use cache_support::entry_corruptions;
use files_support::files_with_extension;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn push_constants(name: &str) -> PathBuf {
    root()
        .join("reference-images/frontends/push_constants")
        .join(name)
}

/// Compiles `path`'s `stage` through the cache in `dir`, checks the result equals the uncached
/// compile, and returns what the cache did.
fn cached(path: &Path, stage: Processor, dir: &Path) -> StageCacheUse {
    let (compiled, used) = compile_stage_cached(path, stage, None, Some(dir))
        .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    let reference = compile_stage(path, stage, None).expect("uncached compile");
    assert_eq!(compiled.program, reference.program, "{}", path.display());
    assert_eq!(compiled.blocks, reference.blocks, "{}", path.display());
    used
}

#[test]
fn cached_stages_equal_compiled_ones() {
    use Processor::{Fragment, Vertex};
    let shaders = [
        (push_constants("shader.slang"), &[Vertex, Fragment][..]),
        (
            root().join("tests/data/slang/layout.slang"),
            &[Vertex, Fragment],
        ),
        (root().join("tests/data/wgsl/vertex.wgsl"), &[Vertex]),
        (root().join("tests/data/wgsl/basic.wgsl"), &[Fragment]),
    ];
    for (shader, stages) in &shaders {
        let dir = tempfile::tempdir().expect("temporary directory");
        for &stage in *stages {
            assert_eq!(cached(shader, stage, dir.path()), StageCacheUse::Miss);
            assert_eq!(cached(shader, stage, dir.path()), StageCacheUse::Hit);
        }
        let entries = files_with_extension(dir.path(), "json").len();
        assert_eq!(entries, stages.len(), "one entry per stage");
        let (_, uncached) = compile_stage_cached(shader, stages[0], None, None).unwrap();
        assert_eq!(uncached, StageCacheUse::Uncached);
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let tgsi = root().join("benches/shaders/tex_mul/fs.tgsi");
    assert_eq!(
        cached(&tgsi, Processor::Fragment, dir.path()),
        StageCacheUse::Uncached
    );
    assert!(files_with_extension(dir.path(), "json").is_empty());
}

#[test]
fn a_changed_source_is_compiled_again() {
    let work = tempfile::tempdir().expect("temporary directory");
    let cache = tempfile::tempdir().expect("temporary directory");
    let shader = work.path().join("tint.wgsl");
    let write = |tint: &str| {
        let text = format!(
            "@vertex fn vs(@location(0) p: vec4f) -> @builtin(position) vec4f {{ return p; }}\n\
             @fragment fn fs() -> @location(0) vec4f {{ return vec4f({tint}, 0.5, 0.25, 1.0); }}\n"
        );
        std::fs::write(&shader, text).expect("write");
    };
    write("1.0");
    assert_eq!(
        cached(&shader, Processor::Fragment, cache.path()),
        StageCacheUse::Miss
    );
    write("0.75");
    assert_eq!(
        cached(&shader, Processor::Fragment, cache.path()),
        StageCacheUse::Miss
    );
    assert_eq!(files_with_extension(cache.path(), "json").len(), 2);
    write("1.0");
    assert_eq!(
        cached(&shader, Processor::Fragment, cache.path()),
        StageCacheUse::Hit
    );
}

#[test]
fn unusable_entries_are_compiled_again_and_replaced() {
    let shader = push_constants("shader.slang");
    let cache = tempfile::tempdir().expect("temporary directory");
    assert_eq!(
        cached(&shader, Processor::Vertex, cache.path()),
        StageCacheUse::Miss
    );
    let vertex_entry = files_with_extension(cache.path(), "json").remove(0);
    let original = std::fs::read_to_string(&vertex_entry).expect("entry");
    let mut corruptions = entry_corruptions(&original, "VERT", "FRAG");
    corruptions.extend([
        (
            "another stage",
            original.replacen("\"stage\":\"VERT\"", "\"stage\":\"FRAG\"", 1),
        ),
        (
            "another source",
            original.replacen("\"source\":\"", "\"source\":\" ", 1),
        ),
    ]);
    for (what, text) in corruptions {
        assert_ne!(text, original, "{what}: the corruption changes the entry");
        std::fs::write(&vertex_entry, &text).expect("write");
        assert_eq!(
            cached(&shader, Processor::Vertex, cache.path()),
            StageCacheUse::Rejected,
            "{what}"
        );
        assert_eq!(
            std::fs::read_to_string(&vertex_entry).expect("entry"),
            original,
            "{what}: the entry is replaced"
        );
        assert_eq!(
            cached(&shader, Processor::Vertex, cache.path()),
            StageCacheUse::Hit,
            "{what}"
        );
    }
}

#[test]
fn an_unwritable_cache_only_loses_the_entries() {
    let work = tempfile::tempdir().expect("temporary directory");
    let blocked = work.path().join("not-a-directory");
    std::fs::write(&blocked, "a file where the cache directory should be").expect("write");
    let shader = push_constants("shader.slang");
    for _ in 0..2 {
        let used = cached(&shader, Processor::Fragment, &blocked);
        assert_ne!(used, StageCacheUse::Hit);
    }
    let left = std::fs::read_to_string(&blocked).expect("the file is still there");
    assert_eq!(left, "a file where the cache directory should be");
}

fn softgpu_draw(out: &Path, cache_env: &Path, extra: &[&str]) {
    let shader = push_constants("shader.slang");
    let output = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .arg("draw")
        .arg("--vs")
        .arg(&shader)
        .arg("--fs")
        .arg(&shader)
        .arg("--vertices")
        .arg(push_constants("vertices.txt"))
        .arg("--texture")
        .arg(format!("1={}", push_constants("tex0.png").display()))
        .args(["--size", "32x32", "--uniform", "params.Tint=0.9,0.3,0.1,1"])
        .args(["--uniform", "params.Bands=5", "--uniform", "Mix=0.6"])
        .arg("--out")
        .arg(out)
        .args(extra)
        .env("SOFTGPU_CACHE_DIR", cache_env)
        .output()
        .expect("run softgpu");
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn draw_uses_the_cache_unless_told_not_to() {
    let work = tempfile::tempdir().expect("temporary directory");
    let env_dir = work.path().join("env");
    let flag_dir = work.path().join("flag");
    let flag = flag_dir.to_str().expect("utf-8 path");
    let out = work.path().join("out.png");
    softgpu_draw(&out, &env_dir, &["--no-shader-cache"]);
    assert!(!env_dir.exists(), "--no-shader-cache wrote entries");
    let uncached = std::fs::read(&out).expect("png");
    for run in ["stores", "reads"] {
        softgpu_draw(&out, &env_dir, &["--shader-cache", flag]);
        assert!(std::fs::read(&out).expect("png") == uncached, "{run}");
        assert_eq!(files_with_extension(&flag_dir, "json").len(), 2, "{run}");
        assert!(
            !files_with_extension(&flag_dir, "kernel").is_empty(),
            "{run}"
        );
    }
    softgpu_draw(&out, &env_dir, &[]);
    assert!(std::fs::read(&out).expect("png") == uncached);
    assert_eq!(
        files_with_extension(&env_dir, "json").len(),
        2,
        "SOFTGPU_CACHE_DIR was not used"
    );
}
