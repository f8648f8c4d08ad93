//! The on-disk shader cache (`shader::ShaderCache`): a chain built from cached shaders renders
//! the same bytes as one compiled from source, for every preset of `tests/chain/` and the Cg
//! test preset; a changed include, a corrupt or foreign entry and an unwritable directory each
//! fall back to compiling, and `softgpu render` uses the cache (shaders and kernels, read back
//! by a later process with the same bytes) unless told not to.

use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::shader::ShaderCacheStats;
use softgpu::texture::Texture;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

mod cache_support;
mod files_support;
use cache_support::entry_corruptions;
use files_support::files_with_extension;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn input() -> Arc<Texture> {
    Arc::new(Texture::load(&root().join("tests/chain/inputs/scene64x48.png")).expect("input"))
}

/// The last of two frames at 64x48 and what the cache did while the chain was built.
fn render(preset: &Path, cache: Option<&Path>) -> (Vec<u8>, ShaderCacheStats) {
    let options = ChainOptions {
        shader_cache: cache.map(Path::to_path_buf),
        ..Default::default()
    };
    let mut chain =
        FilterChain::load(preset, &options).unwrap_or_else(|e| panic!("{}: {e}", preset.display()));
    let input = input();
    let mut last = None;
    for frame in 0..2 {
        last = Some(
            chain
                .frame(&input, (64, 48), frame, &FrameOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", preset.display())),
        );
    }
    let pixels = last.expect("two frames").level_data(0).to_vec();
    (pixels, chain.shader_cache_stats())
}

/// The shader entries (`.json`) in the cache directory `dir`, sorted.
fn entries(dir: &Path) -> Vec<PathBuf> {
    files_with_extension(dir, "json")
}

/// Overwrites every file of `files` with `text` (a corruption of `original`, which it must
/// change), then renders `preset` from `cache`.
fn render_from_overwritten(
    preset: &Path,
    cache: &Path,
    files: &[PathBuf],
    (what, text): (&str, &str),
    original: &str,
) -> (Vec<u8>, ShaderCacheStats) {
    assert_ne!(text, original, "{what}: the corruption changes the entry");
    for file in files {
        std::fs::write(file, text).expect("write");
    }
    render(preset, Some(cache))
}

/// The presets of `tests/chain/` and a one-pass Cg preset written into `work`.
fn presets(work: &Path) -> Vec<PathBuf> {
    let chain = root().join("tests/chain");
    let mut list: Vec<PathBuf> = ["", "specialize"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(chain.join(dir)).expect("tests/chain"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "slangp"))
        .collect();
    list.sort();
    let cg = work.join("stock.cgp");
    let shader = root().join("tests/data/cg/stock.cg");
    let lut = root().join("tests/data/cg/refs/crt/lut.png");
    let text = format!(
        "shaders = 1\nshader0 = {}\ntextures = lut\nlut = {}\n",
        shader.display(),
        lut.display()
    );
    std::fs::write(&cg, text).expect("write");
    list.push(cg);
    list
}

#[test]
fn cached_shaders_render_the_same_bytes_as_compiled_ones() {
    let work = tempfile::tempdir().expect("temporary directory");
    for preset in presets(work.path()) {
        let dir = tempfile::tempdir().expect("temporary directory");
        let (uncached, none) = render(&preset, None);
        assert_eq!(none, ShaderCacheStats::default());
        let (first, cold) = render(&preset, Some(dir.path()));
        let shaders = entries(dir.path()).len();
        assert!(shaders > 0, "{}: nothing stored", preset.display());
        assert_eq!(
            (cold.hits, cold.misses, cold.rejected, cold.stored),
            (0, shaders, 0, shaders),
            "{}",
            preset.display()
        );
        // Passes with equal inputs share one entry (the later ones may find it stored).
        let specializations = files_with_extension(dir.path(), "specialized").len();
        let passes = cold.specializations_hit + cold.specializations_missed;
        assert!(
            specializations > 0 && specializations <= cold.specializations_missed,
            "{}: {specializations} specializations stored, {cold:?}",
            preset.display()
        );
        let (second, warm) = render(&preset, Some(dir.path()));
        assert_eq!(
            warm,
            ShaderCacheStats {
                hits: shaders,
                specializations_hit: passes,
                ..Default::default()
            },
            "{}",
            preset.display()
        );
        assert!(first == uncached, "{}: cold cache", preset.display());
        assert!(second == uncached, "{}: warm cache", preset.display());
    }
}

/// A copy of `tests/chain/shaders/params.slang` behind an include whose constant changes.
fn write_included_shader(dir: &Path, scale: &str) -> PathBuf {
    let shader = std::fs::read_to_string(root().join("tests/chain/shaders/params.slang"))
        .expect("params.slang");
    let patched = shader.replacen(
        "#pragma stage vertex",
        "#include \"scale.inc\"\n#pragma stage vertex",
        1,
    );
    assert_ne!(patched, shader, "params.slang has a fragment stage");
    let patched = patched.replacen("FragColor = ", "FragColor = SCALE * ", 1);
    std::fs::write(dir.join("scale.inc"), format!("#define SCALE {scale}\n")).expect("write");
    std::fs::write(dir.join("included.slang"), patched).expect("write");
    let preset = dir.join("included.slangp");
    std::fs::write(&preset, "shaders = 1\nshader0 = included.slang\n").expect("write");
    preset
}

#[test]
fn a_changed_include_is_compiled_again() {
    let work = tempfile::tempdir().expect("temporary directory");
    let cache = tempfile::tempdir().expect("temporary directory");
    let preset = write_included_shader(work.path(), "1.0");
    let (bright, cold) = render(&preset, Some(cache.path()));
    assert_eq!((cold.misses, cold.stored), (1, 1));
    write_included_shader(work.path(), "0.5");
    let (dim, changed) = render(&preset, Some(cache.path()));
    assert_eq!((changed.hits, changed.misses, changed.rejected), (0, 1, 0));
    assert!(dim != bright, "the include's new constant must show");
    assert_eq!(dim, render(&preset, None).0);
    assert_eq!(entries(cache.path()).len(), 2);
}

#[test]
fn unusable_entries_are_compiled_again_and_replaced() {
    let preset = root().join("tests/chain/params.slangp");
    let cache = tempfile::tempdir().expect("temporary directory");
    let (expected, cold) = render(&preset, Some(cache.path()));
    let files = entries(cache.path());
    assert_eq!(files.len(), cold.stored);
    let original = std::fs::read_to_string(&files[0]).expect("entry");
    let corruptions = entry_corruptions(&original, "VERT", "FRAG");
    for (what, text) in corruptions {
        let (pixels, stats) =
            render_from_overwritten(&preset, cache.path(), &files, (what, &text), &original);
        assert_eq!(
            stats,
            ShaderCacheStats {
                hits: 0,
                misses: files.len(),
                rejected: files.len(),
                stored: files.len(),
                // The programs compile to the same text: their specializations still hit.
                specializations_hit: cold.specializations_hit + cold.specializations_missed,
                specializations_missed: 0,
            },
            "{what}"
        );
        assert!(pixels == expected, "{what}");
        assert_eq!(
            render(&preset, Some(cache.path())).1.hits,
            files.len(),
            "{what}"
        );
    }
}

/// A specialization entry that is damaged, another build's or another pass's is a miss: the
/// pass is specialized again (the same bytes), and the entry replaced.
#[test]
fn unusable_specializations_are_made_again_and_replaced() {
    let preset = root().join("tests/chain/params.slangp");
    let cache = tempfile::tempdir().expect("temporary directory");
    let (expected, cold) = render(&preset, Some(cache.path()));
    let files = files_with_extension(cache.path(), "specialized");
    assert!(!files.is_empty() && cold.specializations_missed == files.len());
    let original = std::fs::read_to_string(&files[0]).expect("entry");
    let mut corruptions = entry_corruptions(&original, "FRAG", "VERT");
    corruptions.push((
        "another pass's inputs",
        original.replacen("\"key\":\"", "\"key\":\"x", 1),
    ));
    assert_eq!(corruptions.len(), 7);
    for (what, text) in corruptions {
        let (pixels, stats) =
            render_from_overwritten(&preset, cache.path(), &files, (what, &text), &original);
        assert_eq!(
            (stats.specializations_hit, stats.specializations_missed),
            (0, files.len()),
            "{what}"
        );
        assert!(pixels == expected, "{what}");
        let again = render(&preset, Some(cache.path())).1;
        assert_eq!(again.specializations_hit, files.len(), "{what}");
    }
}

#[test]
fn an_unwritable_cache_only_loses_the_entries() {
    let work = tempfile::tempdir().expect("temporary directory");
    let blocked = work.path().join("not-a-directory");
    std::fs::write(&blocked, "a file where the cache directory should be").expect("write");
    let preset = root().join("tests/chain/params.slangp");
    let (pixels, stats) = render(&preset, Some(&blocked));
    assert_eq!((stats.hits, stats.stored), (0, 0));
    assert!(stats.misses > 0);
    assert!(pixels == render(&preset, None).0);
}

fn softgpu_render(preset: &Path, out: &Path, cache_env: &Path, extra: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .arg("render")
        .arg("--preset")
        .arg(preset)
        .arg("--input")
        .arg(root().join("tests/chain/inputs/scene64x48.png"))
        .arg("--output")
        .arg(out)
        .args(extra)
        .env("SOFTGPU_CACHE_DIR", cache_env)
        .output()
        .expect("run softgpu");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn kernels(dir: &Path) -> usize {
    files_with_extension(dir, "kernel").len()
}

#[test]
fn render_uses_the_cache_unless_told_not_to() {
    let work = tempfile::tempdir().expect("temporary directory");
    let env_dir = work.path().join("env");
    let flag_dir = work.path().join("flag");
    let flag = flag_dir.to_str().expect("utf-8 path");
    // Transcendentals, mipmaps (the general texture paths), texel fetches and feedback: kernels
    // read by a later process must find every table and function through their address table.
    for name in ["params", "pow_edge", "mipmap", "texel_fetch", "feedback"] {
        let preset = root().join(format!("tests/chain/{name}.slangp"));
        let out = work.path().join(format!("{name}.png"));
        softgpu_render(&preset, &out, &env_dir, &["--no-shader-cache"]);
        assert!(
            entries(&env_dir).is_empty(),
            "--no-shader-cache wrote entries"
        );
        let uncached = std::fs::read(&out).expect("png");
        for run in ["stores", "reads"] {
            softgpu_render(&preset, &out, &env_dir, &["--shader-cache", flag]);
            assert!(
                std::fs::read(&out).expect("png") == uncached,
                "{name}: {run}"
            );
        }
        assert!(kernels(&flag_dir) > 0, "{name}: no kernel stored");
    }
    let preset = root().join("tests/chain/params.slangp");
    softgpu_render(&preset, &work.path().join("env.png"), &env_dir, &[]);
    assert!(
        !entries(&env_dir).is_empty(),
        "SOFTGPU_CACHE_DIR was not used"
    );
    assert!(kernels(&env_dir) > 0, "SOFTGPU_CACHE_DIR got no kernels");
    let both = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(["render", "--no-shader-cache", "--shader-cache", flag])
        .output()
        .expect("run softgpu");
    assert!(!both.status.success());
    assert!(String::from_utf8_lossy(&both.stderr).contains("--shader-cache"));
}
