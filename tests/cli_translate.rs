//! `softgpu compile --emit wgsl|glsl|spirv`: Cg (and slang) shaders translated by naga's
//! backends. The WGSL output must parse and validate again, the SPIR-V must load, the GLSL must
//! be a GLSL 4.50 shader with the entry point's body.

use std::path::Path;
use std::process::{Command, Output};

fn softgpu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "softgpu failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn cg_translates_to_wgsl_that_naga_accepts_again() {
    for stage in ["vertex", "fragment"] {
        let wgsl = stdout(&softgpu(&[
            "compile",
            "tests/data/cg/stock.cg",
            "--stage",
            stage,
            "--emit",
            "wgsl",
        ]));
        assert!(wgsl.contains("@group(0) @binding(0)"), "{wgsl}");
        softgpu::frontend::wgsl::parse(&wgsl, "translated.wgsl")
            .unwrap_or_else(|e| panic!("{stage}: {e}\n{wgsl}"));
    }
}

#[test]
fn cg_translates_to_glsl_and_spirv() {
    let glsl = stdout(&softgpu(&[
        "compile",
        "tests/data/cg/stock.cg",
        "--emit",
        "glsl",
    ]));
    assert!(glsl.starts_with("#version 450"), "{glsl}");
    assert!(glsl.contains("void main()"), "{glsl}");

    let dir = tempfile::tempdir().unwrap();
    let spv = dir.path().join("stock.spv");
    let text = stdout(&softgpu(&[
        "compile",
        "tests/data/cg/stock.cg",
        "--emit",
        "spirv",
        "-o",
        spv.to_str().unwrap(),
    ]));
    assert!(text.is_empty(), "with -o nothing is printed: {text}");
    let bytes = std::fs::read(&spv).unwrap();
    assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes(), "SPIR-V magic");
    let module = naga::front::spv::parse_u8_slice(&bytes, &Default::default()).unwrap();
    assert_eq!(module.entry_points.len(), 1);
    let disassembly = stdout(&softgpu(&[
        "compile",
        "tests/data/cg/stock.cg",
        "--emit",
        "spirv",
    ]));
    assert!(
        disassembly.contains("OpEntryPoint Fragment"),
        "{disassembly}"
    );
}

#[test]
fn slang_translates_too_and_tgsi_is_refused() {
    let shader = Path::new("tests/chain/shaders/stock.slang");
    let wgsl = stdout(&softgpu(&[
        "compile",
        shader.to_str().unwrap(),
        "--emit",
        "wgsl",
    ]));
    softgpu::frontend::wgsl::parse(&wgsl, "translated.wgsl").unwrap();
    let o = softgpu(&["compile", "examples/plasma/fs.tgsi", "--emit", "wgsl"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("TGSI programs have no naga module"));
}
