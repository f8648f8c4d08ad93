//! `softgpu draw` and `softgpu compile` from the outside: orientation conventions, and one clear
//! error (file, line, what was expected) with a non-zero exit for every kind of bad input.

use std::path::{Path, PathBuf};
mod cli_support;

use cli_support::{softgpu, stderr};
use std::process::Output;

const VS: &str = "VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: END
";

/// Writes the interpolated GENERIC[0] as the colour.
const FS: &str = "FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
";

/// Red at the top (NDC y = +1) for GL, i.e. red where y = +1 in clip space.
const QUAD: &str = "\
-1 -1 0 1  0 0 1 1
 1 -1 0 1  0 0 1 1
-1  1 0 1  1 0 0 1
-1  1 0 1  1 0 0 1
 1 -1 0 1  0 0 1 1
 1  1 0 1  1 0 0 1
";

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let scratch = Scratch {
            dir: tempfile::tempdir().unwrap(),
        };
        scratch.write("vs.tgsi", VS);
        scratch.write("fs.tgsi", FS);
        scratch.write("v.txt", QUAD);
        scratch.write("c.txt", "1 0.5 0.25 1\n");
        scratch
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn draw(&self, extra: &[&str]) -> Output {
        let p = |n: &str| self.path(n).to_string_lossy().into_owned();
        let mut args = vec![
            "draw".to_string(),
            "--vs".into(),
            p("vs.tgsi"),
            "--fs".into(),
            p("fs.tgsi"),
            "--vertices".into(),
            p("v.txt"),
            "--consts".into(),
            p("c.txt"),
            "--out".into(),
            p("out.png"),
        ];
        if !extra.contains(&"--size") {
            args.extend(["--size".to_string(), "8x8".to_string()]);
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        softgpu(&args)
    }
}

/// A refused run: exit 1, one `softgpu: error` line with every needle, no panic.
fn assert_error(output: &Output, needles: &[&str]) {
    cli_support::assert_error(output, 1, needles);
}

fn pixel(path: &Path, x: u32, y: u32) -> [u8; 4] {
    image::open(path).unwrap().to_rgba8().get_pixel(x, y).0
}

#[test]
fn gl_puts_clip_y_up_at_the_top_row_and_vulkan_at_the_bottom() {
    let s = Scratch::new();
    let out = s.draw(&["--convention", "gl"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let top = pixel(&s.path("out.png"), 4, 0);
    let bottom = pixel(&s.path("out.png"), 4, 7);
    assert!(top[0] > 200 && top[2] < 40, "gl top should be red: {top:?}");
    assert!(
        bottom[2] > 200 && bottom[0] < 40,
        "gl bottom should be blue: {bottom:?}"
    );

    let out = s.draw(&["--convention", "vulkan"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let top = pixel(&s.path("out.png"), 4, 0);
    let bottom = pixel(&s.path("out.png"), 4, 7);
    assert!(
        top[2] > 200 && top[0] < 40,
        "vulkan top should be blue: {top:?}"
    );
    assert!(
        bottom[0] > 200 && bottom[2] < 40,
        "vulkan bottom should be red: {bottom:?}"
    );
}

#[test]
fn output_is_deterministic_across_runs() {
    let s = Scratch::new();
    assert!(s.draw(&[]).status.success());
    let first = std::fs::read(s.path("out.png")).unwrap();
    assert!(s.draw(&[]).status.success());
    assert_eq!(first, std::fs::read(s.path("out.png")).unwrap());
}

#[test]
fn png_compression_levels_give_the_same_pixels() {
    let s = Scratch::new();
    let mut images = Vec::new();
    for level in ["fast", "balanced", "high"] {
        let out = s.draw(&["--png-compression", level]);
        assert!(out.status.success(), "{level}: {}", stderr(&out));
        images.push(image::open(s.path("out.png")).unwrap().to_rgba8());
    }
    assert!(images[0] == images[1] && images[1] == images[2]);
}

#[test]
fn malformed_vertex_value_names_file_and_line() {
    let s = Scratch::new();
    s.write("v.txt", "-1 -1 0 1\n1 -1 0 1\n-1 1 zero 1\n");
    assert_error(&s.draw(&[]), &["v.txt:3", "expected a number", "zero"]);
}

#[test]
fn vertex_count_not_a_multiple_of_three_is_an_error() {
    let s = Scratch::new();
    s.write("v.txt", "-1 -1 0 1\n1 -1 0 1\n");
    assert_error(&s.draw(&[]), &["v.txt", "multiple of 3"]);
}

#[test]
fn ragged_vertex_lines_are_an_error() {
    let s = Scratch::new();
    s.write("v.txt", "-1 -1 0 1 0 0\n1 -1 0 1\n-1 1 0 1 0 0\n");
    assert_error(&s.draw(&[]), &["v.txt:2", "expected 6 values"]);
}

#[test]
fn too_few_vertex_registers_for_the_shader_is_an_error() {
    let s = Scratch::new();
    s.write("v.txt", "-1 -1 0 1\n1 -1 0 1\n-1 1 0 1\n");
    assert_error(&s.draw(&[]), &["IN[0..2]", "provides 1"]);
}

#[test]
fn malformed_constant_line_names_file_and_line() {
    let s = Scratch::new();
    s.write("c.txt", "1 2 3 4\n# comment\n1 2 3\n");
    assert_error(&s.draw(&[]), &["c.txt:3", "expected 4 values"]);
}

#[test]
fn malformed_shader_names_file_and_line() {
    let s = Scratch::new();
    s.write(
        "fs.tgsi",
        "FRAG\nDCL OUT[0], COLOR\n  0: MOV OUT[0], BOGUS[0]\n  1: END\n",
    );
    assert_error(&s.draw(&[]), &["fs.tgsi", "line 3"]);
}

#[test]
fn invalid_shader_reports_validation_error_with_line() {
    let s = Scratch::new();
    s.write(
        "fs.tgsi",
        "FRAG\nDCL OUT[0], COLOR\n  0: MOV OUT[0], TEMP[3]\n  1: END\n",
    );
    assert_error(&s.draw(&[]), &["fs.tgsi", "TEMP[3]", "not declared"]);
}

#[test]
fn wrong_stage_is_an_error() {
    let s = Scratch::new();
    let (fs, vertices, out) = (s.path("fs.tgsi"), s.path("v.txt"), s.path("o.png"));
    let args = [
        "draw".as_ref(),
        "--vs".as_ref(),
        fs.as_os_str(),
        "--fs".as_ref(),
        fs.as_os_str(),
        "--vertices".as_ref(),
        vertices.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ];
    assert_error(&softgpu(&args), &["expected a VERT program, found FRAG"]);
}

#[test]
fn missing_texture_binding_is_an_error() {
    let s = Scratch::new();
    s.write(
        "fs.tgsi",
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\nDCL SVIEW[0], 2D, FLOAT\n  0: TEX OUT[0], IN[0], SAMP[0], 2D\n  1: END\n",
    );
    assert_error(&s.draw(&[]), &["unit 0", "--texture 0="]);
}

#[test]
fn corrupt_texture_names_the_file() {
    let s = Scratch::new();
    s.write("bad.png", "not a png");
    let bad = s.path("bad.png");
    let binding = format!("0={}", bad.display());
    assert_error(&s.draw(&["--texture", &binding]), &["bad.png"]);
}

#[test]
fn bad_flags_are_errors() {
    let s = Scratch::new();
    assert_error(&s.draw(&["--size", "0x5"]), &["--size"]);
    assert_error(&s.draw(&["--size", "99999x5"]), &["--size", "16384"]);
    assert_error(&s.draw(&["--size", "big"]), &["--size", "WxH"]);
    assert_error(
        &s.draw(&["--texture", "x.png"]),
        &["--texture", "N=IMAGE.png"],
    );
    // clap's own errors exit with 2 and name the flag.
    let out = s.draw(&["--wrap", "sideways"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--wrap"));
}

#[test]
fn missing_files_are_named() {
    let s = Scratch::new();
    std::fs::remove_file(s.path("v.txt")).unwrap();
    assert_error(&s.draw(&[]), &["v.txt", "cannot read"]);
}

#[test]
fn infinite_loop_hits_the_instruction_budget() {
    let s = Scratch::new();
    s.write(
        "fs.tgsi",
        "FRAG\nDCL OUT[0], COLOR\nIMM[0] FLT32 {1.0, 0.0, 0.0, 1.0}\n  0: BGNLOOP :0\n  1: ENDLOOP :0\n  2: MOV OUT[0], IMM[0]\n  3: END\n",
    );
    assert_error(&s.draw(&["--size", "2x2"]), &["budget"]);
}

#[test]
fn compile_prints_the_program_back() {
    let s = Scratch::new();
    let out = softgpu(&["compile", s.path("vs.tgsi").to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), VS);
}

const WGSL: &str = "
struct VsOut { @builtin(position) pos: vec4<f32>, @location(0) color: vec4<f32> };
@vertex fn vs(@location(0) pos: vec4<f32>, @location(1) color: vec4<f32>) -> VsOut {
    return VsOut(pos, color);
}
@fragment fn fs(@location(0) color: vec4<f32>) -> @location(0) vec4<f32> {
    return color;
}
";

#[test]
fn wgsl_shaders_draw_the_same_pixels_as_equivalent_tgsi() {
    let s = Scratch::new();
    assert!(s.draw(&[]).status.success());
    let tgsi = std::fs::read(s.path("out.png")).unwrap();
    s.write("shader.wgsl", WGSL);
    std::fs::copy(s.path("shader.wgsl"), s.path("vs.wgsl")).unwrap();
    std::fs::rename(s.path("shader.wgsl"), s.path("fs.wgsl")).unwrap();
    let p = |n: &str| s.path(n).to_string_lossy().into_owned();
    let out = softgpu(&[
        "draw".to_string(),
        "--vs".into(),
        p("vs.wgsl"),
        "--fs".into(),
        p("fs.wgsl"),
        "--vertices".into(),
        p("v.txt"),
        "--size".into(),
        "8x8".into(),
        "--out".into(),
        p("wgsl.png"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let wgsl = image::open(s.path("wgsl.png")).unwrap().to_rgba8();
    let expected = image::load_from_memory(&tgsi).unwrap().to_rgba8();
    assert_eq!(wgsl, expected);
}

#[test]
fn compile_lowers_wgsl_to_tgsi_and_reports_errors_with_lines() {
    let s = Scratch::new();
    let file = s.write("shader.wgsl", WGSL);
    let out = softgpu(&[
        "compile".as_ref(),
        file.as_os_str(),
        "--stage".as_ref(),
        "vertex".as_ref(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("VERT\n"), "{text}");
    assert!(text.contains("POSITION"), "{text}");
    let bad = s.write(
        "bad.wgsl",
        "@fragment fn fs() -> @location(0) vec4<f32> {\n    return vec4<f32>(1.0, 2.0);\n}\n",
    );
    assert_error(
        &softgpu(&["compile".as_ref(), bad.as_os_str()]),
        &["bad.wgsl:2"],
    );
}

const SLANG: &str = "#version 450
layout(std140, set = 0, binding = 0) uniform UBO { mat4 MVP; } global;

#pragma stage vertex
layout(location = 0) in vec4 Position;
layout(location = 1) in vec4 Color;
layout(location = 0) out vec4 vColor;
void main() {
    gl_Position = global.MVP * Position;
    vColor = Color;
}

#pragma stage fragment
layout(location = 0) in vec4 vColor;
layout(location = 0) out vec4 FragColor;
void main() {
    FragColor = vColor;
}
";

#[test]
fn slang_shaders_draw_the_same_pixels_as_equivalent_tgsi() {
    let s = Scratch::new();
    assert!(s.draw(&[]).status.success());
    let tgsi = image::open(s.path("out.png")).unwrap().to_rgba8();
    let shader = s.write("pass.slang", SLANG);
    // CONST[0][0..3] = MVP, the identity (columns).
    let mvp = s.write("mvp.txt", "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n");
    let out = softgpu(&[
        "draw".as_ref(),
        "--vs".as_ref(),
        shader.as_os_str(),
        "--fs".as_ref(),
        shader.as_os_str(),
        "--vertices".as_ref(),
        s.path("v.txt").as_os_str(),
        "--consts".as_ref(),
        mvp.as_os_str(),
        "--size".as_ref(),
        "8x8".as_ref(),
        "--convention".as_ref(),
        "vulkan".as_ref(),
        "--out".as_ref(),
        s.path("slang.png").as_os_str(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let slang = image::open(s.path("slang.png")).unwrap().to_rgba8();
    // The TGSI reference was drawn with the GL convention: flip it to compare with Vulkan's.
    assert_eq!(slang, image::imageops::flip_vertical(&tgsi));
}

#[test]
fn compile_emits_slang_reflection_as_json() {
    let s = Scratch::new();
    let shader = s.write("pass.slang", SLANG);
    let out = softgpu(&[
        "compile".as_ref(),
        shader.as_os_str(),
        "--emit".as_ref(),
        "reflection".as_ref(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(json.contains("MVP"), "{json}");
    let broken = s.write(
        "broken.slang",
        &SLANG.replace("vColor = Color;", "vColor = Colour;"),
    );
    assert_error(
        &softgpu(&["compile".as_ref(), broken.as_os_str()]),
        &["broken.slang:10"],
    );
}
