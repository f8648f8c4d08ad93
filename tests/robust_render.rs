//! Presets, draws and suites that would exhaust memory, from the outside: the memory budget
//! (`--memory-budget`, `SOFTGPU_MEMORY_BUDGET`, else half the machine's memory) refuses them
//! before anything is allocated and names what needs the most; LUT errors name the preset line;
//! input history deeper than a chain keeps is refused by pass.

mod cli_support;

use cli_support::{assert_failure, softgpu_command, stderr};
use std::path::Path;
use std::process::Output;

/// A scratch directory holding the stock pass-through shader and a small input.
struct Scratch(cli_support::Scratch);

impl std::ops::Deref for Scratch {
    type Target = cli_support::Scratch;
    fn deref(&self) -> &cli_support::Scratch {
        &self.0
    }
}

impl Scratch {
    fn new() -> Scratch {
        Scratch(cli_support::Scratch::new())
    }

    /// `softgpu render` of `preset` with `extra` flags and environment.
    fn render(&self, preset: &str, extra: &[&str], env: Option<&str>) -> Output {
        let mut command = softgpu_command();
        command
            .args([
                "render",
                "--preset",
                &self.arg(preset),
                "--input",
                &self.arg("in.png"),
                "--output",
                &self.arg("out.png"),
                "--no-shader-cache",
            ])
            .args(extra);
        if let Some(budget) = env {
            command.env("SOFTGPU_MEMORY_BUDGET", budget);
        }
        command.output().unwrap()
    }
}

/// A refused run: exit 1, no panic, every needle in stderr.
fn assert_error(output: &Output, needles: &[&str]) {
    assert_failure(output, 1, needles);
}

/// A preset of `passes` passes, each an absolute 16384x16384 float target read with mipmaps:
/// every target legal alone, together tens of GiB.
fn huge_preset(passes: usize) -> String {
    let mut text = format!("shaders = {passes}\n");
    for i in 0..passes {
        text += &format!(
            "shader{i} = stock.slang\nscale_type{i} = absolute\nscale{i} = 16384\n\
             float_framebuffer{i} = true\nmipmap_input{i} = true\n"
        );
    }
    text
}

#[test]
fn a_preset_over_the_memory_budget_is_refused_before_allocating() {
    let s = Scratch::new();
    s.write("huge.slangp", &huge_preset(12));
    // The machine's default budget: no machine that runs the tests has ~30 GiB to spare for
    // one process's half.
    let started = std::time::Instant::now();
    let out = s.render("huge.slangp", &[], None);
    assert_error(
        &out,
        &[
            "huge.slangp",
            "more than the memory budget",
            "pass 0 (",
            "target 16384x16384 R16G16B16A16_SFLOAT with 15 mip levels",
            "--memory-budget",
        ],
    );
    // Refused, not attempted: allocating and clearing the targets would take far longer.
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    assert!(!s.path("out.png").exists());
}

#[test]
fn the_budget_comes_from_the_flag_then_the_environment() {
    let s = Scratch::new();
    s.write(
        "big.slangp",
        "shaders = 2\nshader0 = stock.slang\nscale_type0 = absolute\nscale0 = 2048\n\
         shader1 = stock.slang\n",
    );
    // 2048x2048 RGBA8 with its decoded copy is 80 MiB: over 64M, under 1G.
    assert_error(
        &s.render("big.slangp", &["--memory-budget", "64M"], None),
        &[
            "more than the memory budget of 64.0 MiB",
            "target 2048x2048",
        ],
    );
    assert_error(
        &s.render("big.slangp", &[], Some("64M")),
        &["more than the memory budget of 64.0 MiB"],
    );
    // The flag wins over the environment.
    let out = s.render(
        "big.slangp",
        &["--memory-budget", "1G", "--size", "8x8"],
        Some("64M"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_error(
        &s.render("big.slangp", &[], Some("lots")),
        &["SOFTGPU_MEMORY_BUDGET", "`lots`"],
    );
}

#[test]
fn lut_errors_name_the_preset_line() {
    let s = Scratch::new();
    s.write(
        "lut.slangp",
        "shaders = 1\nshader0 = stock.slang\ntextures = \"mask\"\n\nmask = missing.png\n",
    );
    assert_error(
        &s.render("lut.slangp", &[], None),
        &["lut.slangp:5", "LUT `mask`", "missing.png"],
    );
    // LUTs whose headers declare more than the budget are refused before any is decoded.
    image::RgbaImage::new(4096, 4096)
        .save(s.path("big.png"))
        .unwrap();
    s.write(
        "luts.slangp",
        "shaders = 1\nshader0 = stock.slang\ntextures = \"a;b\"\na = big.png\nb = big.png\n\
         b_mipmap = true\n",
    );
    assert_error(
        &s.render("luts.slangp", &["--memory-budget", "96M"], None),
        &["the lookup textures", "LUT `b` 4096x4096", "96.0 MiB"],
    );
}

#[test]
fn history_deeper_than_a_chain_keeps_is_refused_by_pass() {
    let s = Scratch::new();
    let stock = std::fs::read_to_string(s.path("stock.slang")).unwrap();
    let deep = stock
        .replace(
            "uniform sampler2D Source;",
            "uniform sampler2D Source;\n\
             layout(set = 0, binding = 3) uniform sampler2D OriginalHistory100000;",
        )
        .replace(
            "texture(Source, vTexCoord).rgb",
            "texture(Source, vTexCoord).rgb + texture(OriginalHistory100000, vTexCoord).rgb",
        );
    assert_ne!(deep, stock);
    s.write("deep.slang", &deep);
    s.write("deep.slangp", "shaders = 1\nshader0 = deep.slang\n");
    assert_error(
        &s.render("deep.slangp", &[], None),
        &[
            "pass 0 (",
            "deep.slang",
            "OriginalHistory100000",
            "at most 128",
        ],
    );
}

#[test]
fn a_draw_and_a_suite_case_over_the_budget_are_refused() {
    let s = Scratch::new();
    s.write(
        "vs.tgsi",
        "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: END\n",
    );
    s.write(
        "fs.tgsi",
        "FRAG\nDCL OUT[0], COLOR\nIMM[0] FLT32 {1.0, 0.0, 0.0, 1.0}\n  0: MOV OUT[0], IMM[0]\n  1: END\n",
    );
    s.write("v.txt", "-1 -1 0 1\n3 -1 0 1\n-1 3 0 1\n");
    let out = softgpu_command()
        .args([
            "draw",
            "--vs",
            &s.arg("vs.tgsi"),
            "--fs",
            &s.arg("fs.tgsi"),
            "--vertices",
            &s.arg("v.txt"),
            "--size",
            "16384x16384",
            "--memory-budget",
            "256M",
            "--out",
            &s.arg("out.png"),
        ])
        .output()
        .unwrap();
    assert_error(
        &out,
        &["16384x16384 draw", "the framebuffer 16384x16384: 2.0 GiB"],
    );

    s.write(
        "suite.toml",
        "[[case]]\nname = \"huge\"\nvs = \"vs.tgsi\"\nfs = \"fs.tgsi\"\nvertices = \"v.txt\"\n\
         size = \"16384x16384\"\nexpected = \"huge.png\"\n",
    );
    let out = softgpu_command()
        .args([
            "test",
            &s.arg("suite.toml"),
            "--memory-budget",
            "256M",
            "--report",
            &s.arg("report"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(text.contains("FAILED   huge"), "{text}");
    assert!(
        text.contains("more than the memory budget of 256.0 MiB"),
        "{text}"
    );
}

#[test]
fn a_frame_over_the_pixel_budget_is_refused_before_it_is_drawn() {
    let s = Scratch::new();
    // Three source-scaled passes blown up to the largest target: 3 x 16384x16384 pixels, more
    // than the default budget of two such targets; RGBA8 keeps the memory within reach of the
    // machine's budget, so that it is the pixel budget that refuses.
    let mut preset = String::from("shaders = 4\n");
    for i in 0..3 {
        preset += &format!("shader{i} = stock.slang\nscale_type{i} = source\nscale{i} = 1000\n");
    }
    preset += "shader3 = stock.slang\n";
    s.write("wide.slangp", &preset);
    let started = std::time::Instant::now();
    let out = s.render("wide.slangp", &["--memory-budget", "64G"], None);
    assert_error(
        &out,
        &[
            "wide.slangp",
            "more than the pixel budget of 536870912",
            "pass 0 (",
            "at 16384x16384",
            "--pixel-budget",
        ],
    );
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    // The flag raises it (checked here on a small frame: the budget is only compared).
    let out = s.render("wide.slangp", &["--pixel-budget", "-1"], None);
    assert_error(&out, &["--pixel-budget", "`-1`"]);
    s.write(
        "two.slangp",
        "shaders = 2\nshader0 = stock.slang\nscale_type0 = source\nscale0 = 4\nshader1 = stock.slang\n",
    );
    assert_error(
        &s.render(
            "two.slangp",
            &["--pixel-budget", "1M", "--size", "1024x1024"],
            None,
        ),
        &["more than the pixel budget of 1048576"],
    );
    let out = s.render("two.slangp", &["--pixel-budget", "1M"], None);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_pass_count_must_be_whole() {
    use softgpu::chain::preset::{parse_preset_str, WildcardContext};
    let parse = |text: &str| {
        parse_preset_str(
            text,
            Path::new("/virtual/p.slangp"),
            &WildcardContext::new(),
        )
    };
    for count in ["1.5", "1e0", "2.0"] {
        let e = parse(&format!(
            "shaders = {count}\nshader0 = a.slang\nshader1 = b.slang\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        assert!(e.to_string().contains("whole pass count"), "{e}");
    }
    // Integers in any of strtol's bases, quoted or with a trailing `;`, still count.
    for count in ["2", "\"2\"", "0x2", "2;"] {
        let p = parse(&format!(
            "shaders = {count}\nshader0 = a.slang\nshader1 = b.slang\n"
        ))
        .unwrap();
        assert_eq!(p.passes.len(), 2, "{count}");
    }
}

#[test]
fn a_draw_of_too_many_large_triangles_is_refused_naming_the_vertex_file() {
    let s = Scratch::new();
    s.write(
        "vs.tgsi",
        "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: END\n",
    );
    s.write(
        "fs.tgsi",
        "FRAG\nDCL OUT[0], COLOR\nIMM[0] FLT32 {1.0, 0.0, 0.0, 1.0}\n  0: MOV OUT[0], IMM[0]\n  1: END\n",
    );
    // 200 triangles, each covering a 4096x4096 target: 2^24 pixels each, over 2^31 together.
    s.write("v.txt", &"-1 -1 0 1\n3 -1 0 1\n-1 3 0 1\n".repeat(200));
    let started = std::time::Instant::now();
    let out = softgpu_command()
        .args([
            "draw",
            "--vs",
            &s.arg("vs.tgsi"),
            "--fs",
            &s.arg("fs.tgsi"),
            "--vertices",
            &s.arg("v.txt"),
            "--size",
            "4096x4096",
            "--out",
            &s.arg("out.png"),
        ])
        .output()
        .unwrap();
    assert_error(
        &out,
        &[
            "v.txt",
            "400 triangles (after clipping)",
            "more than the 2147483648",
        ],
    );
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    assert!(!s.path("out.png").exists());
}
