//! The Slang shading language frontend from the outside: `softgpu draw` of the cases in
//! tests/data/slang_lang/cases.json against Mesa softpipe's pictures of the same Slang shaders
//! (reference-images/slang_lang/, made by tools/make_slang_lang_refs.py), `softgpu compile`,
//! Slang's diagnostics, language detection, a missing or wrong library and a crashing compiler.
//!
//! Tests that run the Slang compiler skip, saying why, where the library is not installed (CI
//! installs it: .ci/run); the others need nothing.

use std::path::{Path, PathBuf};
mod cli_support;

use cli_support::{softgpu, stderr};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn data(name: &str) -> PathBuf {
    root().join("tests/data/slang_lang").join(name)
}

/// Whether the Slang library is here; prints why a test is skipped when it is not. Where
/// `SOFTGPU_REQUIRE_SLANG` is set (CI installs the library and sets it), a missing library fails
/// the test instead.
fn slang_available(test: &str) -> bool {
    match softgpu::frontend::slang_lang::library::find_library(None) {
        Ok(_) => true,
        Err(why) if std::env::var_os("SOFTGPU_REQUIRE_SLANG").is_some_and(|v| !v.is_empty()) => {
            panic!("{test}: SOFTGPU_REQUIRE_SLANG is set but {why}")
        }
        Err(why) => {
            eprintln!("skipping {test}: {why}");
            false
        }
    }
}

/// A refused run: exit 1, every needle in stderr, no panic.
fn assert_error(output: &Output, needles: &[&str]) {
    cli_support::assert_failure(output, 1, needles);
}

/// One case of cases.json.
#[derive(serde::Deserialize)]
struct Case {
    name: String,
    shader: String,
    vertices: String,
    #[serde(default)]
    vs_entry: Option<String>,
    #[serde(default)]
    fs_entry: Option<String>,
    #[serde(default)]
    uniforms: Vec<String>,
    #[serde(default)]
    textures: Vec<String>,
    #[serde(default)]
    filter: Option<String>,
    #[serde(default)]
    wrap: Option<String>,
    #[serde(default)]
    size: Option<String>,
    #[serde(default)]
    convention: Option<String>,
    #[serde(default)]
    compare: Option<String>,
}

fn draw_case(case: &Case, out: &Path) -> Output {
    softgpu(&draw_args(case, out))
}

/// The `softgpu draw` arguments of a case.
fn draw_args(case: &Case, out: &Path) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "draw".into(),
        "--vs".into(),
        data(&case.shader).display().to_string(),
        "--fs".into(),
        data(&case.shader).display().to_string(),
        "--vertices".into(),
        data(&case.vertices).display().to_string(),
        "--filter".into(),
        case.filter.clone().unwrap_or_else(|| "linear".into()),
        "--wrap".into(),
        case.wrap.clone().unwrap_or_else(|| "repeat".into()),
        "--size".into(),
        case.size.clone().unwrap_or_else(|| "64x64".into()),
        "--no-shader-cache".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    for (flag, entry) in [
        ("--vs-entry", &case.vs_entry),
        ("--fs-entry", &case.fs_entry),
    ] {
        if let Some(e) = entry {
            args.extend([flag.to_string(), e.clone()]);
        }
    }
    for (flag, value) in [
        ("--convention", &case.convention),
        ("--compare", &case.compare),
    ] {
        if let Some(v) = value {
            args.extend([flag.to_string(), v.clone()]);
        }
    }
    for u in &case.uniforms {
        args.extend(["--uniform".to_string(), u.clone()]);
    }
    for t in &case.textures {
        let (unit, png) = t.split_once('=').unwrap();
        args.extend([
            "--texture".to_string(),
            format!("{unit}={}", data(png).display()),
        ]);
    }
    args
}

#[test]
fn slang_draws_match_softpipe_within_one_step() {
    if !slang_available("slang_draws_match_softpipe_within_one_step") {
        return;
    }
    let cases: Vec<Case> =
        serde_json::from_str(&std::fs::read_to_string(data("cases.json")).unwrap()).unwrap();
    assert!(cases.len() >= 4, "cases.json lists the reference cases");
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for case in &cases {
        let out = dir.path().join(format!("{}.png", case.name));
        let result = draw_case(case, &out);
        if !result.status.success() {
            failures.push(format!("{}: {}", case.name, stderr(&result)));
            continue;
        }
        let got = image::open(&out).unwrap().to_rgba8();
        let reference = root()
            .join("reference-images/slang_lang")
            .join(format!("{}.png", case.name));
        let want = image::open(&reference).unwrap().to_rgba8();
        assert_eq!(got.dimensions(), want.dimensions(), "{}", case.name);
        let worst = got
            .as_raw()
            .iter()
            .zip(want.as_raw())
            .map(|(a, b)| a.abs_diff(*b))
            .max()
            .unwrap_or(0);
        if worst > 1 {
            failures.push(format!(
                "{}: differs from softpipe by up to {worst}/255",
                case.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn depth_compare_draws_alike_in_both_executors() {
    if !slang_available("depth_compare_draws_alike_in_both_executors") {
        return;
    }
    let cases: Vec<Case> =
        serde_json::from_str(&std::fs::read_to_string(data("cases.json")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for case in cases.iter().filter(|c| c.compare.is_some()) {
        let pictures: Vec<Vec<u8>> = ["jit", "interp"]
            .iter()
            .map(|exec| {
                let out = dir.path().join(format!("{}-{exec}.png", case.name));
                let mut args = draw_args(case, &out);
                args.extend(["--exec".to_string(), exec.to_string()]);
                let result = softgpu(&args);
                assert!(
                    result.status.success(),
                    "{}: {}",
                    case.name,
                    stderr(&result)
                );
                image::open(&out).unwrap().to_rgba8().into_raw()
            })
            .collect();
        assert!(
            pictures[0] == pictures[1],
            "{}: the executors differ",
            case.name
        );
    }
}

#[test]
fn compile_prints_tgsi_naga_reflection_and_slang_outputs() {
    if !slang_available("compile_prints_tgsi_naga_reflection_and_slang_outputs") {
        return;
    }
    let file = data("gradient.slang");
    let out = softgpu(&[
        "compile".as_ref(),
        file.as_os_str(),
        "--stage".as_ref(),
        "vertex".as_ref(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.starts_with("VERT\n") && text.contains("CONST[0]"),
        "{text}"
    );
    let out = softgpu(&[
        "compile".as_ref(),
        file.as_os_str(),
        "--emit".as_ref(),
        "reflection".as_ref(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["entry_point"], "fragmentMain");
    let blocks = json["stage_reflection"]["uniform_buffers"]
        .as_array()
        .unwrap();
    let names: Vec<&str> = blocks.iter().filter_map(|b| b["name"].as_str()).collect();
    assert!(names.contains(&"tint"), "{names:?}");
    assert!(json["slang_reflection"]["parameters"].is_array());
    for emit in ["slang-glsl", "wgsl", "naga"] {
        let out = softgpu(&[
            "compile".as_ref(),
            file.as_os_str(),
            "--emit".as_ref(),
            emit.as_ref(),
        ]);
        assert!(out.status.success(), "--emit {emit}: {}", stderr(&out));
        assert!(!out.stdout.is_empty(), "--emit {emit} printed nothing");
    }
}

#[test]
fn entry_points_are_chosen_by_name_or_stage() {
    if !slang_available("entry_points_are_chosen_by_name_or_stage") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.slang");
    std::fs::write(
        &file,
        "[shader(\"fragment\")] float4 red() : SV_Target { return float4(1, 0, 0, 1); }\n\
         [shader(\"fragment\")] float4 green() : SV_Target { return float4(0, 1, 0, 1); }\n",
    )
    .unwrap();
    let out = softgpu(&["compile".as_ref(), file.as_os_str()]);
    assert_error(&out, &["several fragment entry points", "red", "green"]);
    let out = softgpu(&[
        "compile".as_ref(),
        file.as_os_str(),
        "--entry".as_ref(),
        "green".as_ref(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = softgpu(&[
        "compile".as_ref(),
        file.as_os_str(),
        "--stage".as_ref(),
        "vertex".as_ref(),
    ]);
    assert_error(&out, &["no [shader(\"vertex\")] entry point"]);
}

#[test]
fn slang_errors_carry_its_diagnostics_at_file_line_column() {
    if !slang_available("slang_errors_carry_its_diagnostics_at_file_line_column") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.slang");
    std::fs::write(
        &file,
        "float4 f() { return x; }\n[shader(\"fragment\")] float4 m() : SV_Target { return f(); }\n",
    )
    .unwrap();
    let out = softgpu(&["compile".as_ref(), file.as_os_str()]);
    assert_error(&out, &["bad.slang:1:21: undefined identifier", "E30015"]);
}

#[test]
fn include_dirs_and_defines_reach_slang() {
    if !slang_available("include_dirs_and_defines_reach_slang") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("lib")).unwrap();
    std::fs::write(
        dir.path().join("lib/colors.slang"),
        "module colors;\npublic float4 shade() { return float4(SHADE, 0, 0, 1); }\n",
    )
    .unwrap();
    let file = dir.path().join("main.slang");
    std::fs::write(
        &file,
        "import colors;\n[shader(\"fragment\")] float4 m() : SV_Target { return shade(); }\n",
    )
    .unwrap();
    let lib = dir.path().join("lib");
    let out = softgpu(&[
        "compile".as_ref(),
        file.as_os_str(),
        "-I".as_ref(),
        lib.as_os_str(),
        "-D".as_ref(),
        "SHADE=0.5".as_ref(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // 0.5 is 0x3f000000 = 1056964608.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1056964608"), "{text}");
}

#[test]
fn a_file_that_is_neither_language_states_both_rules() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("half.slang");
    std::fs::write(&file, "#version 450\nvoid main() {}\n").unwrap();
    let out = softgpu(&["compile".as_ref(), file.as_os_str()]);
    assert_error(
        &out,
        &["half.slang", "#pragma stage", "#version", "--lang slang"],
    );
}

#[test]
fn retroarch_files_stay_retroarch_and_lang_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ra.slang");
    std::fs::write(
        &file,
        "#version 450\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\n\
         void main() { gl_Position = Position; }\n#pragma stage fragment\n\
         layout(location = 0) out vec4 FragColor;\nvoid main() { FragColor = vec4(1.0); }\n",
    )
    .unwrap();
    for lang in [
        None,
        Some("retroarch"),
        Some("slang-glsl"),
        Some("vulkan-glsl"),
    ] {
        let mut args = vec!["compile".to_string(), file.display().to_string()];
        if let Some(l) = lang {
            args.extend(["--lang".to_string(), l.to_string()]);
        }
        let out = softgpu(&args);
        assert!(out.status.success(), "{lang:?}: {}", stderr(&out));
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("FRAG"));
    }
}

#[test]
fn a_missing_library_is_one_error_saying_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.slang");
    std::fs::write(
        &file,
        "[shader(\"fragment\")] float4 m() : SV_Target { return 1; }\n",
    )
    .unwrap();
    // No python3 on PATH and no variables: nothing to find.
    let out = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(["compile".as_ref(), file.as_os_str()])
        .env("PATH", dir.path())
        .env_remove("SOFTGPU_SLANG_LIB")
        .env_remove("SLANG_DIR")
        .output()
        .unwrap();
    assert_error(&out, &["s.slang", "pip install --no-deps slangpy==0.43.1"]);
    // A named place without the library is an error naming it.
    let out = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(["compile".as_ref(), file.as_os_str()])
        .env("SOFTGPU_SLANG_LIB", dir.path().join("nowhere"))
        .output()
        .unwrap();
    assert_error(&out, &["$SOFTGPU_SLANG_LIB", "nowhere"]);
}

#[test]
fn a_library_that_is_not_slang_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.slang");
    std::fs::write(
        &file,
        "[shader(\"fragment\")] float4 m() : SV_Target { return 1; }\n",
    )
    .unwrap();
    // The test binary's own C library: loadable, but not Slang.
    let Some(libc) = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
    ]
    .into_iter()
    .map(Path::new)
    .find(|p| p.is_file()) else {
        eprintln!("skipping a_library_that_is_not_slang_is_refused: no libm.so.6 here");
        return;
    };
    let out = softgpu(&[
        "compile".as_ref(),
        file.as_os_str(),
        "--slang-lib".as_ref(),
        libc.as_os_str(),
    ]);
    assert_error(&out, &["s.slang", "not the Slang compiler"]);
}

/// One test for both uses of the process-wide compiler executable: a warm build from the shader
/// cache starts no compiler process (the executable is a crashing script by then), and a
/// crashing compiler is an error naming the file.
#[cfg(unix)]
#[test]
fn warm_builds_start_no_compiler_and_a_crash_is_an_error_naming_the_file() {
    use softgpu::frontend::slang_lang::process::{
        compile_in_child, set_compiler_executable, Request,
    };
    use softgpu::frontend::slang_lang::SlangOptions;
    use softgpu::ir::Processor;
    use softgpu::shader::{build_stage_with, StageCacheUse};
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let crash = dir.path().join("crash.sh");
    std::fs::write(&crash, "#!/bin/sh\nkill -SEGV $$\n").unwrap();
    std::fs::set_permissions(&crash, std::fs::Permissions::from_mode(0o755)).unwrap();

    if slang_available("warm_builds_start_no_compiler") {
        set_compiler_executable(PathBuf::from(env!("CARGO_BIN_EXE_softgpu")));
        let cache = dir.path().join("cache");
        let options = SlangOptions::default();
        let shader = data("patterns.slang");
        let build = || {
            build_stage_with(
                &shader,
                Processor::Fragment,
                None,
                &options,
                Some(cache.as_path()),
            )
        };
        let (cold, used) = build().unwrap();
        assert_eq!(used, StageCacheUse::Miss);
        set_compiler_executable(crash.clone());
        let (warm, used) = build().expect("a warm build runs no compiler");
        assert_eq!(used, StageCacheUse::Hit);
        assert_eq!(warm.lowered.program, cold.lowered.program);
        // An imported module's text is part of the key: a copy with an edited module misses.
        let copy = dir.path().join("copy");
        std::fs::create_dir(&copy).unwrap();
        for f in ["patterns.slang", "shading.slang"] {
            std::fs::copy(data(f), copy.join(f)).unwrap();
        }
        set_compiler_executable(PathBuf::from(env!("CARGO_BIN_EXE_softgpu")));
        let copied = copy.join("patterns.slang");
        let run = |p: &Path| {
            build_stage_with(
                p,
                Processor::Fragment,
                None,
                &options,
                Some(cache.as_path()),
            )
            .unwrap()
            .1
        };
        assert_eq!(run(&copied), StageCacheUse::Miss);
        assert_eq!(run(&copied), StageCacheUse::Hit);
        let module = copy.join("shading.slang");
        let text = std::fs::read_to_string(&module).unwrap();
        std::fs::write(&module, text.replace("40.0", "20.0")).unwrap();
        assert_eq!(run(&copied), StageCacheUse::Miss);
    }

    set_compiler_executable(crash);
    let request = Request {
        library: PathBuf::from("/nonexistent/libslang-compiler.so"),
        args: vec!["x.slang".into()],
        entry: None,
        stage: "fragment".into(),
        per_entry_point: false,
    };
    let error = compile_in_child(&request, "shaders/x.slang").unwrap_err();
    assert!(error.starts_with("shaders/x.slang: "), "{error}");
    assert!(error.contains("crashed with signal 11"), "{error}");
}

#[test]
fn arrayed_image_coordinates_naga_looked_up_in_vain_are_declared() {
    if !slang_available("arrayed_image_coordinates_naga_looked_up_in_vain_are_declared") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("array_load.slang");
    // naga 30's SPIR-V reader looks up `int2` to split the layer off these `int4` coordinates,
    // and panicked (caught: an error naming the file) before the rewrite declared it.
    std::fs::write(
        &file,
        "Texture2DArray<float4> t;\n\
         [shader(\"fragment\")] float4 m() : SV_Target { return t.Load(int4(0, 0, 0, 0)); }\n",
    )
    .unwrap();
    let out = softgpu(&["compile".as_ref(), file.as_os_str()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tgsi = String::from_utf8_lossy(&out.stdout);
    assert!(tgsi.contains("TXF") && tgsi.contains("2D_ARRAY"), "{tgsi}");
}

#[test]
fn further_slang_arguments_reach_the_compiler() {
    if !slang_available("further_slang_arguments_reach_the_compiler") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("glsl_syntax.slang");
    // GLSL built-ins in Slang need `-allow-glsl`.
    std::fs::write(
        &file,
        "[shader(\"fragment\")] float4 m(float4 p : SV_Position) : SV_Target \
         { return vec4(fract(p.x), 0, 0, 1); }\n",
    )
    .unwrap();
    let out = softgpu(&["compile".as_ref(), file.as_os_str()]);
    assert_error(&out, &["glsl_syntax.slang"]);
    let out = softgpu(&[
        "compile".as_ref(),
        file.as_os_str(),
        "--slang-arg".as_ref(),
        "-allow-glsl".as_ref(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn softgpu_test_suites_take_slang_stages() {
    if !slang_available("softgpu_test_suites_take_slang_stages") {
        return;
    }
    let report = tempfile::tempdir().unwrap();
    let suite = data("suite.toml");
    let out = softgpu(&[
        "test".as_ref(),
        suite.as_os_str(),
        "--report".as_ref(),
        report.path().as_os_str(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("2 passed, 0 failed"), "{text}");
}

/// The largest channel difference between two pictures of one size.
fn worst_difference(a: &image::RgbaImage, b: &image::RgbaImage) -> u8 {
    assert_eq!(a.dimensions(), b.dimensions());
    a.as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

#[test]
fn input_attachments_read_the_texel_under_the_fragment() {
    if !slang_available("input_attachments_read_the_texel_under_the_fragment") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("attachment.slang");
    // The vector attachment gives the colour, the scalar one (a narrower read: the red channel)
    // its alpha: each is the texture at its binding read at the fragment's own pixel.
    std::fs::write(
        &file,
        "[[vk::input_attachment_index(0)]] [[vk::binding(0)]] SubpassInput<float4> colour;\n\
         [[vk::input_attachment_index(1)]] [[vk::binding(1)]] SubpassInput<float> alpha;\n\
         struct VSOut { float4 position : SV_Position; };\n\
         [shader(\"vertex\")] VSOut vertexMain(float4 position : POSITION) {\n\
             VSOut o; o.position = position; return o; }\n\
         [shader(\"fragment\")] float4 fragmentMain(VSOut input) : SV_Target {\n\
             return float4(colour.SubpassLoad().rgb, alpha.SubpassLoad()); }\n",
    )
    .unwrap();
    let out_png = dir.path().join("out.png");
    let out = softgpu(&[
        "draw".as_ref(),
        "--vs".as_ref(),
        file.as_os_str(),
        "--fs".as_ref(),
        file.as_os_str(),
        "--vertices".as_ref(),
        data("fullscreen.txt").as_os_str(),
        "--texture".as_ref(),
        format!("0={}", data("noise16.png").display()).as_ref(),
        "--texture".as_ref(),
        format!("1={}", data("noise16.png").display()).as_ref(),
        "--size".as_ref(),
        "16x16".as_ref(),
        "--no-shader-cache".as_ref(),
        "--out".as_ref(),
        out_png.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = image::open(&out_png).unwrap().to_rgba8();
    let mut want = image::open(data("noise16.png")).unwrap().to_rgba8();
    for p in want.pixels_mut() {
        p[3] = p[0];
    }
    assert_eq!(worst_difference(&got, &want), 0);
    let tgsi = softgpu(&[
        "compile".as_ref(),
        file.as_os_str(),
        "--stage".as_ref(),
        "fragment".as_ref(),
    ]);
    let text = String::from_utf8_lossy(&tgsi.stdout);
    assert!(tgsi.status.success(), "{}", stderr(&tgsi));
    assert_eq!(text.matches("TXF").count(), 2, "{text}");
}

#[test]
fn a_vertex_shader_without_a_position_lowers_with_a_zero_position() {
    if !slang_available("a_vertex_shader_without_a_position_lowers_with_a_zero_position") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("no_position.slang");
    std::fs::write(
        &file,
        "[shader(\"vertex\")] float4 vertexMain(float4 p : POSITION) : COLOR { return p * 2.0; }\n",
    )
    .unwrap();
    let out = softgpu(&[
        "compile".as_ref(),
        file.as_os_str(),
        "--stage".as_ref(),
        "vertex".as_ref(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    // The varying is kept; the position Vulkan leaves undefined is (0, 0, 0, 0).
    let position = text
        .lines()
        .find_map(|l| l.strip_prefix("DCL OUT[")?.strip_suffix("], POSITION"))
        .unwrap_or_else(|| panic!("no position output:\n{text}"))
        .to_string();
    assert!(text.contains("GENERIC[0]"), "{text}");
    let store = text
        .lines()
        .find(|l| l.contains(&format!("MOV OUT[{position}], IMM[")))
        .unwrap_or_else(|| panic!("the position is not written:\n{text}"));
    let imm = store.rsplit("IMM[").next().unwrap().trim_end_matches(']');
    assert!(
        text.contains(&format!("IMM[{imm}] UINT32 {{0, 0, 0, 0}}")),
        "{text}"
    );
}

#[test]
fn read_only_storage_buffers_are_bound_by_name_and_read_as_constant_data() {
    if !slang_available("read_only_storage_buffers_are_bound_by_name_and_read_as_constant_data") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("buffers.slang");
    std::fs::write(
        &file,
        "StructuredBuffer<float4> colours;\n\
         ByteAddressBuffer words;\n\
         StructuredBuffer<float> scalars;\n\
         struct VSOut { float4 position : SV_Position; };\n\
         [shader(\"vertex\")] VSOut vertexMain(float4 position : POSITION) {\n\
             VSOut o; o.position = position; return o; }\n\
         [shader(\"fragment\")] float4 fragmentMain(VSOut input) : SV_Target {\n\
             uint i = uint(input.position.x) % 4;\n\
             uint j = uint(input.position.y) % 8;\n\
             float4 c = colours[i];\n\
             c.g = asfloat(words.Load(j * 4));\n\
             c.b = scalars[i + j];\n\
             return c; }\n",
    )
    .unwrap();
    let colours = [
        [1.0, 0.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
        [1.0; 4],
    ];
    let words: Vec<f32> = (0..8).map(|k| k as f32 / 8.0).collect();
    // Eight scalars: the reads of `scalars[i + j]` past them (i + j up to 10) read zero.
    let scalars: Vec<f32> = (1..=8).map(|k| k as f32 / 9.0).collect();
    let write_rows = |name: &str, values: &[f32]| {
        let path = dir.path().join(name);
        let text: String = values
            .chunks(4)
            .map(|row| {
                let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
                cells.join(" ") + "\n"
            })
            .collect();
        std::fs::write(&path, text).unwrap();
        path
    };
    let colours_file = write_rows("colours.txt", colours.as_flattened());
    let words_file = write_rows("words.txt", &words);
    let scalars_file = write_rows("scalars.txt", &scalars);
    let draw = |exec: &str, out_png: &Path, buffers: &[(&str, &Path)]| {
        let mut args: Vec<std::ffi::OsString> = [
            "draw",
            "--vertices",
            "VERTICES",
            "--size",
            "8x8",
            "--no-shader-cache",
            "--exec",
            exec,
        ]
        .iter()
        .map(|a| a.into())
        .collect();
        args[2] = data("fullscreen.txt").into();
        for flag in ["--vs", "--fs"] {
            args.extend([flag.into(), file.clone().into_os_string()]);
        }
        for (name, path) in buffers {
            args.push("--storage-buffer".into());
            args.push(format!("{name}={}", path.display()).into());
        }
        args.extend(["--out".into(), out_png.as_os_str().to_owned()]);
        softgpu(&args)
    };
    let buffers = [
        ("colours", colours_file.as_path()),
        ("words", words_file.as_path()),
        ("scalars", scalars_file.as_path()),
    ];
    let channel = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    for exec in ["jit", "interp"] {
        let out_png = dir.path().join(format!("{exec}.png"));
        let out = draw(exec, &out_png, &buffers);
        assert!(out.status.success(), "{exec}: {}", stderr(&out));
        let got = image::open(&out_png).unwrap().to_rgba8();
        let want = image::RgbaImage::from_fn(8, 8, |x, y| {
            let (i, j) = ((x % 4) as usize, (y % 8) as usize);
            let b = scalars.get(i + j).copied().unwrap_or(0.0);
            image::Rgba([channel(colours[i][0]), channel(words[j]), channel(b), 255])
        });
        assert!(worst_difference(&got, &want) <= 1, "{exec}: {got:?}");
    }
    let out = draw(
        "interp",
        &dir.path().join("x.png"),
        &[("colors", colours_file.as_path())],
    );
    assert_error(
        &out,
        &[
            "--storage-buffer colors",
            "neither shader reads",
            "colours, scalars, words",
        ],
    );
}

/// Words of a `--storage-out` file (raw 0x bits).
fn storage_words(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap()
        .split_whitespace()
        .map(|w| u32::from_str_radix(w.trim_start_matches("0x"), 16).unwrap())
        .collect()
}

/// `softgpu draw` of `file`'s vertexMain and fragmentMain over `vertices` at `size`, with
/// `extra` flags.
fn draw_slang(file: &Path, vertices: &Path, size: &str, exec: &str, extra: &[String]) -> Output {
    let mut args: Vec<std::ffi::OsString> = vec![
        "draw".into(),
        "--vs".into(),
        file.into(),
        "--fs".into(),
        file.into(),
        "--vertices".into(),
        vertices.into(),
        "--size".into(),
        size.into(),
        "--no-shader-cache".into(),
        "--exec".into(),
        exec.into(),
    ];
    args.extend(extra.iter().map(|a| a.into()));
    softgpu(&args)
}

#[test]
fn fragment_shaders_write_read_write_buffers_and_storage_images() {
    if !slang_available("fragment_shaders_write_read_write_buffers_and_storage_images") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("writes.slang");
    std::fs::write(
        &file,
        "RWStructuredBuffer<uint> counters;\n\
         RWStructuredBuffer<float4> pixels;\n\
         RWTexture2D<float4> canvas;\n\
         struct VSOut { float4 position : SV_Position; };\n\
         [shader(\"vertex\")] VSOut vertexMain(float4 position : POSITION) {\n\
             VSOut o; o.position = position; return o; }\n\
         [shader(\"fragment\")] float4 fragmentMain(VSOut input) : SV_Target {\n\
             uint2 p = uint2(input.position.xy);\n\
             uint before;\n\
             InterlockedAdd(counters[0], 1, before);\n\
             InterlockedMax(counters[1], p.x * 10 + p.y);\n\
             if (p.y == 3) discard;\n\
             pixels[p.y * 4 + p.x] = float4(input.position.xy, float(p.x + p.y), 1.0);\n\
             canvas[p] = float4(p.x / 4.0, p.y / 4.0, 0.25, 1.0);\n\
             return float4(1.0, 0.0, 0.0, 1.0); }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("counters.txt"), "0 0 0 0\n").unwrap();
    std::fs::write(dir.path().join("pixels.txt"), "0 0 0 0\n".repeat(16)).unwrap();
    for exec in ["jit", "interp"] {
        let path = |name: &str| dir.path().join(format!("{exec}-{name}"));
        let out = draw_slang(
            &file,
            &data("fullscreen.txt"),
            "4x4",
            exec,
            &[
                "--storage-buffer".into(),
                format!("counters={}", dir.path().join("counters.txt").display()),
                "--storage-buffer".into(),
                format!("pixels={}", dir.path().join("pixels.txt").display()),
                "--storage-image".into(),
                "canvas=4x4".into(),
                "--storage-out".into(),
                format!("counters={}", path("counters.txt").display()),
                "--storage-out".into(),
                format!("pixels={}", path("pixels.txt").display()),
                "--storage-out".into(),
                format!("canvas={}", path("canvas.txt").display()),
                "--out".into(),
                path("out.png").display().to_string(),
            ],
        );
        assert!(out.status.success(), "{exec}: {}", stderr(&out));
        assert_eq!(
            storage_words(&path("counters.txt")),
            [16, 33, 0, 0],
            "{exec}"
        );
        let pixels: Vec<f32> = storage_words(&path("pixels.txt"))
            .into_iter()
            .map(f32::from_bits)
            .collect();
        let canvas: Vec<f32> = storage_words(&path("canvas.txt"))
            .into_iter()
            .map(f32::from_bits)
            .collect();
        for y in 0..4u32 {
            for x in 0..4u32 {
                let k = (y * 4 + x) as usize * 4;
                let (want_pixel, want_texel) = if y == 3 {
                    ([0.0; 4], [0.0; 4])
                } else {
                    (
                        [x as f32 + 0.5, y as f32 + 0.5, (x + y) as f32, 1.0],
                        [x as f32 / 4.0, y as f32 / 4.0, 0.25, 1.0],
                    )
                };
                assert_eq!(pixels[k..k + 4], want_pixel, "{exec}: pixel {x},{y}");
                assert_eq!(canvas[k..k + 4], want_texel, "{exec}: texel {x},{y}");
            }
        }
    }
    let out = draw_slang(
        &file,
        &data("fullscreen.txt"),
        "4x4",
        "jit",
        &[
            "--storage-out".into(),
            format!("counts={}", dir.path().join("x.txt").display()),
            "--out".into(),
            dir.path().join("x.png").display().to_string(),
        ],
    );
    assert_error(
        &out,
        &["--storage-out counts", "--storage-buffer counts=DATA.txt"],
    );
}

#[test]
fn rasterizer_ordered_views_see_the_fragments_of_a_pixel_in_primitive_order() {
    if !slang_available("rasterizer_ordered_views_see_the_fragments_of_a_pixel_in_primitive_order")
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ordered.slang");
    std::fs::write(
        &file,
        "RasterizerOrderedTexture2D<uint> order;\n\
         struct VSOut { float4 position : SV_Position; nointerpolation uint layer : LAYER; };\n\
         [shader(\"vertex\")] VSOut vertexMain(float4 position : POSITION, float layer : LAYER) {\n\
             VSOut o; o.position = position; o.layer = uint(layer); return o; }\n\
         [shader(\"fragment\")] float4 fragmentMain(VSOut input) : SV_Target {\n\
             uint2 p = uint2(input.position.xy);\n\
             order[p] = order[p] * 10 + input.layer;\n\
             return float4(1.0); }\n",
    )
    .unwrap();
    // Three full-screen layers, drawn 1, 2, 3: every pixel ends at 123.
    let quad = [(-1, -1), (1, -1), (-1, 1), (-1, 1), (1, -1), (1, 1)];
    let vertices: String = (1..=3)
        .flat_map(|layer| {
            quad.iter()
                .map(move |(x, y)| format!("{x} {y} 0 1 {layer}\n"))
        })
        .collect();
    let vertices_file = dir.path().join("layers.txt");
    std::fs::write(&vertices_file, vertices).unwrap();
    for exec in ["jit", "interp"] {
        let result = dir.path().join(format!("{exec}-order.txt"));
        let out = draw_slang(
            &file,
            &vertices_file,
            "80x70",
            exec,
            &[
                "--storage-image".into(),
                "order=80x70".into(),
                "--storage-out".into(),
                format!("order={}", result.display()),
                "--out".into(),
                dir.path().join("out.png").display().to_string(),
            ],
        );
        assert!(out.status.success(), "{exec}: {}", stderr(&out));
        let words = storage_words(&result);
        assert_eq!(words.len(), 80 * 70 * 4, "{exec}");
        assert!(
            words.iter().step_by(4).all(|&w| w == 123),
            "{exec}: {:?}",
            words.iter().step_by(4).find(|&&w| w != 123)
        );
    }
}

#[test]
fn multisampled_textures_are_one_sample_textures() {
    if !slang_available("multisampled_textures_are_one_sample_textures") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("multisampled.slang");
    // Sample 0 is the bound picture; sample 1 is out of range and reads zero (alpha 1 - 0).
    std::fs::write(
        &file,
        "Texture2DMS<float4> picture;\n\
         struct VSOut { float4 position : SV_Position; };\n\
         [shader(\"vertex\")] VSOut vertexMain(float4 position : POSITION) {\n\
             VSOut o; o.position = position; return o; }\n\
         [shader(\"fragment\")] float4 fragmentMain(VSOut input) : SV_Target {\n\
             int2 p = int2(input.position.xy);\n\
             return float4(picture.Load(p, 0).rgb, 1.0 - picture.Load(p, 1).g); }\n",
    )
    .unwrap();
    let out_png = dir.path().join("out.png");
    let out = softgpu(&[
        "draw".as_ref(),
        "--vs".as_ref(),
        file.as_os_str(),
        "--fs".as_ref(),
        file.as_os_str(),
        "--vertices".as_ref(),
        data("fullscreen.txt").as_os_str(),
        "--texture".as_ref(),
        format!("0={}", data("noise16.png").display()).as_ref(),
        "--size".as_ref(),
        "16x16".as_ref(),
        "--no-shader-cache".as_ref(),
        "--out".as_ref(),
        out_png.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = image::open(&out_png).unwrap().to_rgba8();
    let mut want = image::open(data("noise16.png")).unwrap().to_rgba8();
    for p in want.pixels_mut() {
        p[3] = 255;
    }
    assert_eq!(worst_difference(&got, &want), 0);
}
