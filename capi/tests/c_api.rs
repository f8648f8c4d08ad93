//! The C API as C programs use it: `tests/c/render.c` is compiled with the system C compiler
//! (`cc`, or `$CC`) against `include/softgpu.h` and the cdylib cargo built for this test, then
//! run on the bundled example preset; the images it writes must be byte-identical to what the
//! Rust API renders with the same input, frame numbers and parameters.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::driver::Driver;
use softgpu::texture::Texture;

const OUTPUT_SIZE: (u32, u32) = (400, 300);

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("capi/ lies in the repository")
}

/// The directory holding the cdylib: cargo builds the library's crate types next to the test
/// binaries (`target/<profile>/deps`) before it runs them.
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe.parent().expect("the test binary has a directory");
    let name = format!(
        "{}softgpu_capi{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    assert!(
        dir.join(&name).is_file(),
        "{name} is not in {}: build it with `cargo test -p softgpu-capi`",
        dir.display()
    );
    dir.to_path_buf()
}

/// Frame `frame_count` of a fresh chain, as tightly packed RGBA8 rows.
fn rust_render(
    preset: &Path,
    input: &Arc<Texture>,
    parameters: &[(&str, f32)],
    frame: u64,
) -> Vec<u8> {
    rust_render_for(preset, input, parameters, frame, Driver::Softpipe)
}

/// [`rust_render`] under `driver`'s rules.
fn rust_render_for(
    preset: &Path,
    input: &Arc<Texture>,
    parameters: &[(&str, f32)],
    frame: u64,
    driver: Driver,
) -> Vec<u8> {
    let options = ChainOptions {
        parameters: parameters
            .iter()
            .map(|&(n, v)| (n.to_string(), v))
            .collect(),
        ..ChainOptions::default().with_driver(driver)
    };
    let mut chain = FilterChain::load(preset, &options).expect("the example preset loads");
    chain
        .frame(input, OUTPUT_SIZE, frame, &FrameOptions::default())
        .expect("the example preset renders")
        .to_rgba8()
}

fn assert_same_pixels(what: &str, c: &[u8], rust: &[u8]) {
    assert_eq!(c.len(), rust.len(), "{what}: sizes differ");
    let differing = c
        .chunks_exact(4)
        .zip(rust.chunks_exact(4))
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(
        differing, 0,
        "{what}: {differing} pixels differ from the Rust API's"
    );
}

#[test]
fn c_program_renders_like_the_rust_api() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let capi = Path::new(env!("CARGO_MANIFEST_DIR"));
    let library = library_dir();
    let program = dir.join("render");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let compiled = Command::new(&compiler)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
        .arg(capi.join("include"))
        .arg(capi.join("tests/c/render.c"))
        .arg("-o")
        .arg(&program)
        .arg("-L")
        .arg(&library)
        .arg("-lsoftgpu_capi")
        .arg(format!("-Wl,-rpath,{}", library.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{compiler}` (set CC): {e}"));
    assert!(
        compiled.status.success(),
        "{compiler} failed to build tests/c/render.c:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );

    let root = repository();
    let preset = root.join("examples/crt/crt.slangp");
    let frame = Arc::new(Texture::load(&root.join("examples/crt/frame.png")).unwrap());
    let raw_input = dir.join("frame.rgba");
    std::fs::write(&raw_input, frame.to_rgba8()).unwrap();
    let default_out = dir.join("default.rgba");
    let param_out = dir.join("param.rgba");
    let llvmpipe_out = dir.join("llvmpipe.rgba");
    let run = Command::new(&program)
        // cargo's own search path for tests may name target/<profile> first, whose copy of
        // the library (from an earlier `cargo build`) can be older than the one built here.
        .env("LD_LIBRARY_PATH", &library)
        .arg(&preset)
        .arg(&raw_input)
        .args([frame.width().to_string(), frame.height().to_string()])
        .args([OUTPUT_SIZE.0.to_string(), OUTPUT_SIZE.1.to_string()])
        .arg(&default_out)
        .arg(&param_out)
        .arg(root.join("examples/crt/missing.slangp"))
        .arg(&llvmpipe_out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "the C program failed ({}):\n{stdout}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("checks passed"), "{stdout}");
    // The error messages it saw, for `--nocapture`.
    println!("{stdout}");

    assert_same_pixels(
        "frame 0",
        &std::fs::read(&default_out).unwrap(),
        &rust_render(&preset, &frame, &[], 0),
    );
    let with_parameter = rust_render(&preset, &frame, &[("HARD_SCAN", -4.0)], 1);
    assert_same_pixels(
        "frame 1 with HARD_SCAN = -4",
        &std::fs::read(&param_out).unwrap(),
        &with_parameter,
    );
    // The parameter reached the shader: the image is not frame 1 with the default.
    assert_ne!(with_parameter, rust_render(&preset, &frame, &[], 1));
    let llvmpipe = rust_render_for(&preset, &frame, &[], 0, Driver::Llvmpipe);
    assert_same_pixels(
        "frame 0 under llvmpipe's rules",
        &std::fs::read(&llvmpipe_out).unwrap(),
        &llvmpipe,
    );
    // The driver reached the chain: its pixels are not softpipe's.
    assert_ne!(llvmpipe, rust_render(&preset, &frame, &[], 0));
}
