//! Hostile command lines and output paths, from the outside: every error names the flag or file
//! it concerns (values that start with `-` reach the flag's own parser), an output format
//! nothing writes is refused before any work, an existing output is never damaged by a failing
//! run, outputs are written whole (no temporary file left behind), and `compile -o` writes
//! every `--emit`.

mod cli_support;

use cli_support::{assert_error, softgpu, stderr};
use std::process::Output;

const VS: &str = "VERT
DCL IN[0]
DCL OUT[0], POSITION
  0: MOV OUT[0], IN[0]
  1: END
";

const FS: &str = "FRAG
DCL OUT[0], COLOR
IMM[0] FLT32 {1.0, 0.5, 0.25, 1.0}
  0: MOV OUT[0], IMM[0]
  1: END
";

/// A fragment shader that never ends: it must stop at the instruction budget.
const FS_LOOP: &str = "FRAG
DCL OUT[0], COLOR
IMM[0] FLT32 {1.0, 0.0, 0.0, 1.0}
  0: BGNLOOP
  1:   MOV OUT[0], IMM[0]
  2: ENDLOOP
  3: END
";

const TRIANGLE: &str = "-1 -1 0 1\n3 -1 0 1\n-1 3 0 1\n";

/// A scratch directory with a draw's files and a small preset.
struct Scratch(cli_support::Scratch);

impl std::ops::Deref for Scratch {
    type Target = cli_support::Scratch;
    fn deref(&self) -> &cli_support::Scratch {
        &self.0
    }
}

impl Scratch {
    fn new() -> Scratch {
        let s = Scratch(cli_support::Scratch::new());
        s.write("vs.tgsi", VS);
        s.write("fs.tgsi", FS);
        s.write("loop.tgsi", FS_LOOP);
        s.write("v.txt", TRIANGLE);
        s.write("p.slangp", "shaders = 1\nshader0 = stock.slang\n");
        s
    }

    fn draw(&self, fs: &str, out: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            "draw".to_string(),
            "--vs".into(),
            self.arg("vs.tgsi"),
            "--fs".into(),
            self.arg(fs),
            "--vertices".into(),
            self.arg("v.txt"),
            "--out".into(),
            self.arg(out),
        ];
        if !extra.contains(&"--size") {
            args.extend(["--size".to_string(), "8x8".to_string()]);
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        softgpu(&args)
    }

    fn render(&self, out: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            "render".to_string(),
            "--preset".into(),
            self.arg("p.slangp"),
            "--input".into(),
            self.arg("in.png"),
            "--output".into(),
            self.arg(out),
            "--no-shader-cache".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        softgpu(&args)
    }

    /// Files whose names mark them as temporary outputs.
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("softgpu-tmp"))
            .collect()
    }
}

#[test]
fn values_that_start_with_a_dash_reach_the_flags_parser() {
    let s = Scratch::new();
    assert_error(
        &s.render("out.png", &["--size", "-1x5"]),
        1,
        &["--size", "-1x5"],
    );
    assert_error(
        &s.draw("fs.tgsi", "out.png", &["--size", "-8x8"]),
        1,
        &["--size", "-8x8"],
    );
    assert_error(
        &s.render("out.png", &["--param", "-1"]),
        1,
        &["--param", "-1"],
    );
    assert_error(
        &s.draw("fs.tgsi", "out.png", &["--texture", "-1=a.png"]),
        1,
        &["--texture", "-1"],
    );
    assert_error(
        &s.render("out.png", &["--memory-budget", "-5G"]),
        1,
        &["--memory-budget", "-5G"],
    );
    // Flags parsed by clap name themselves too.
    for (flag, value) in [("--frames", "-3"), ("--fps", "-1"), ("--rotation", "-1")] {
        let out = s.render("out.png", &[flag, value]);
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flag}: {text}");
        assert!(text.contains(flag), "{flag} missing from: {text}");
        assert!(!text.contains("unexpected argument"), "{text}");
    }
    let out = softgpu(&["test", "suite.toml", "--jobs", "-2"]);
    assert!(stderr(&out).contains("--jobs"), "{}", stderr(&out));
}

#[test]
fn an_unsupported_output_format_is_refused_before_any_work() {
    let s = Scratch::new();
    for name in ["out.jpg", "out.bmp", "out"] {
        std::fs::write(s.path(name), b"keep me").unwrap();
        // The preset does not exist: the output is checked first.
        let out = softgpu(&[
            "render",
            "--preset",
            &s.arg("missing.slangp"),
            "--input",
            &s.arg("in.png"),
            "--output",
            &s.arg(name),
        ]);
        assert_error(&out, 1, &["--output", name, "expected .png"]);
        assert_eq!(std::fs::read(s.path(name)).unwrap(), b"keep me");
        assert_error(
            &s.draw("missing.tgsi", name, &[]),
            1,
            &["--out", name, "expected .png"],
        );
        assert_eq!(std::fs::read(s.path(name)).unwrap(), b"keep me");
    }
    let a = s.arg("in.png");
    let out = softgpu(&["compare", &a, &a, "--diff", &s.arg("d.jpg")]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--diff"), "{}", stderr(&out));
    // A directory in the way and a missing directory are refused up front as well.
    std::fs::create_dir(s.path("dir.png")).unwrap();
    assert_error(
        &s.render("dir.png", &[]),
        1,
        &["--output", "is a directory"],
    );
    assert_error(
        &s.render("no/such/dir/out.png", &[]),
        1,
        &["--output", "no/such/dir"],
    );
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
}

#[test]
fn a_failing_run_leaves_an_existing_output_untouched() {
    let s = Scratch::new();
    std::fs::write(s.path("out.png"), b"previous picture").unwrap();
    // The draw fails after the output was checked (the shader never ends).
    assert_error(
        &s.draw("loop.tgsi", "out.png", &["--exec", "jit"]),
        1,
        &["loop.tgsi", "fragment shader", "instruction budget"],
    );
    assert_eq!(
        std::fs::read(s.path("out.png")).unwrap(),
        b"previous picture"
    );
    // A render that fails in the preset.
    s.write("p.slangp", "shaders = 1.5\nshader0 = stock.slang\n");
    assert_error(
        &s.render("out.png", &[]),
        1,
        &["p.slangp:1", "whole pass count"],
    );
    assert_eq!(
        std::fs::read(s.path("out.png")).unwrap(),
        b"previous picture"
    );
    // A compile that fails leaves its -o file as it was.
    std::fs::write(s.path("out.txt"), b"previous text").unwrap();
    s.write("bad.tgsi", "FRAG\n  0: NOPE\n");
    let out = softgpu(&["compile", &s.arg("bad.tgsi"), "-o", &s.arg("out.txt")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(std::fs::read(s.path("out.txt")).unwrap(), b"previous text");
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
    // A successful run replaces the file whole.
    let out = s.draw("fs.tgsi", "out.png", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        image::open(s.path("out.png"))
            .unwrap()
            .to_rgba8()
            .get_pixel(0, 0)
            .0,
        [255, 128, 64, 255]
    );
    assert!(s.leftovers().is_empty(), "{:?}", s.leftovers());
}

#[test]
fn an_endless_shader_names_its_file_and_stage_on_both_executors() {
    let s = Scratch::new();
    for exec in ["jit", "interp"] {
        let out = s.draw("loop.tgsi", "out.png", &["--exec", exec]);
        assert_error(
            &out,
            1,
            &[
                "loop.tgsi: fragment shader",
                "instruction budget of 16777216",
            ],
        );
        // The executor's message appears once, not repeated by the error chain.
        assert_eq!(stderr(&out).matches("instruction budget").count(), 1);
    }
}

#[test]
fn compile_writes_every_emit_to_the_output_file() {
    let s = Scratch::new();
    s.write(
        "s.wgsl",
        "@vertex fn vs() -> @builtin(position) vec4<f32> { return vec4<f32>(0.0); }\n\
         @fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }\n",
    );
    let cases: [(&str, &str, &str); 6] = [
        ("vs.tgsi", "tgsi", "VERT"),
        ("s.wgsl", "tgsi", "FRAG"),
        ("s.wgsl", "naga", "Module"),
        ("stock.slang", "tgsi", "FRAG"),
        ("stock.slang", "naga", "Module"),
        ("stock.slang", "reflection", "push_constants"),
    ];
    for (file, emit, needle) in cases {
        let target = s.path(&format!("{file}.{emit}.out"));
        let out = softgpu(&[
            "compile",
            &s.arg(file),
            "--emit",
            emit,
            "-o",
            &target.to_string_lossy(),
        ]);
        assert!(out.status.success(), "{file} {emit}: {}", stderr(&out));
        assert!(
            out.stdout.is_empty(),
            "{file} --emit {emit} printed to stdout with -o"
        );
        let text = std::fs::read_to_string(&target).unwrap();
        assert!(text.contains(needle), "{file} --emit {emit}: {text}");
    }
    // An output path that cannot be written is refused before compiling.
    let out = softgpu(&[
        "compile",
        &s.arg("missing.tgsi"),
        "-o",
        &s.arg("no/dir/x.txt"),
    ]);
    assert_error(&out, 1, &["--output", "no/dir"]);
}

#[test]
fn data_files_and_images_that_are_not_regular_files_are_refused_by_name() {
    let s = Scratch::new();
    let out = s.draw("fs.tgsi", "out.png", &["--consts", "/dev/zero"]);
    assert_error(&out, 1, &["/dev/zero", "constant file", "device"]);
    let out = s.draw("fs.tgsi", "out.png", &["--texture", "0=/dev/zero"]);
    assert_error(&out, 1, &["--texture 0", "/dev/zero", "device"]);
    let out = softgpu(&[
        "render",
        "--preset",
        "/dev/zero",
        "--input",
        &s.arg("in.png"),
        "--output",
        &s.arg("out.png"),
    ]);
    assert_error(&out, 1, &["/dev/zero", "device"]);
    let out = softgpu(&["test", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("device"), "{}", stderr(&out));
}

#[test]
fn a_texture_larger_than_allowed_is_refused_naming_its_file() {
    let s = Scratch::new();
    image::RgbaImage::new(16385, 1)
        .save(s.path("wide.png"))
        .unwrap();
    let out = s.draw(
        "fs.tgsi",
        "out.png",
        &["--texture", &format!("0={}", s.arg("wide.png"))],
    );
    assert_error(
        &out,
        1,
        &["--texture 0", "wide.png", "16385x1", "1..=16384"],
    );
}

#[test]
fn an_invalid_tgsi_program_is_refused_naming_its_file_and_line() {
    let s = Scratch::new();
    let bad = s.write(
        "bad.tgsi",
        "FRAG\nDCL OUT[0], COLOR\n  0: MOV OUT[0], TEMP[5]\n  1: END\n",
    );
    let bad = bad.to_string_lossy().into_owned();
    let compiled = softgpu(&["compile", bad.as_str()]);
    assert_error(&compiled, 1, &[&bad, "line 3", "TEMP[5] is not declared"]);
    let drawn = s.draw("bad.tgsi", "out.png", &[]);
    assert_error(&drawn, 1, &[&bad, "line 3", "TEMP[5] is not declared"]);
}
