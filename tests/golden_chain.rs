//! Filter-chain goldens: every case of `tests/chain/cases.toml` is rendered with `softgpu render`
//! and compared with the image the reference peer rendered (librashader-cli, Vulkan runtime on
//! Mesa lavapipe; `reference-images/chain/command.txt` has the exact commands and
//! `tools/make_chain_refs.py` regenerates them). A channel may differ by the case's `tolerance`
//! (2/255 unless the case says otherwise); no pixel may exceed it, except for the benchmark
//! presets, which use the corpus rule (at most 1% of the pixels beyond 4/255, see cases.toml).
//!
//! The presets, shaders and inputs are the project's own (`tests/chain/`); `covers` in the case
//! list says what each one checks. The error-path tests at the end check that broken presets,
//! shaders and flags fail with a non-zero exit and a message naming the file and line.

use softgpu::golden::{compare_images, diff_image, load_image, save_png, CompareOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn chain_dir() -> PathBuf {
    repo().join("tests/chain")
}

/// One `[[case]]` of cases.toml.
#[derive(Debug)]
struct Case {
    name: String,
    preset: String,
    input: String,
    size: Option<String>,
    frames: i64,
    params: Option<String>,
    frame_direction: Option<i64>,
    rotation: Option<i64>,
    srgb_curve: Option<String>,
    expected: String,
    tolerance: u8,
    max_pixels_percent: f64,
}

fn string_field(table: &toml::Table, key: &str, case: &str) -> Result<Option<String>, String> {
    match table.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "case {case}: `{key}` must be a string, found {other}"
        )),
    }
}

fn int_field(table: &toml::Table, key: &str, case: &str) -> Result<Option<i64>, String> {
    match table.get(key) {
        None => Ok(None),
        Some(toml::Value::Integer(i)) => Ok(Some(*i)),
        Some(other) => Err(format!(
            "case {case}: `{key}` must be an integer, found {other}"
        )),
    }
}

fn parse_cases() -> Result<Vec<Case>, String> {
    let path = chain_dir().join("cases.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let cases = doc
        .get("case")
        .and_then(|v| v.as_array())
        .ok_or_else(|| format!("{}: expected [[case]] tables", path.display()))?;
    let mut out = Vec::new();
    for value in cases {
        let table = value
            .as_table()
            .ok_or_else(|| format!("{}: a case must be a table", path.display()))?;
        let name = string_field(table, "name", "?")?
            .ok_or_else(|| format!("{}: a case without `name`", path.display()))?;
        let required = |key: &str| -> Result<String, String> {
            string_field(table, key, &name)?.ok_or_else(|| format!("case {name}: no `{key}`"))
        };
        let tolerance = int_field(table, "tolerance", &name)?.unwrap_or(2);
        let max_pixels_percent = match table.get("max_pixels_percent") {
            None => 0.0,
            Some(toml::Value::Float(f)) => *f,
            Some(toml::Value::Integer(i)) => *i as f64,
            Some(other) => {
                return Err(format!(
                    "case {name}: `max_pixels_percent` must be a number, found {other}"
                ))
            }
        };
        out.push(Case {
            preset: required("preset")?,
            input: required("input")?,
            expected: required("expected")?,
            size: string_field(table, "size", &name)?,
            frames: int_field(table, "frames", &name)?.unwrap_or(1),
            params: string_field(table, "params", &name)?,
            frame_direction: int_field(table, "frame_direction", &name)?,
            rotation: int_field(table, "rotation", &name)?,
            srgb_curve: string_field(table, "srgb_curve", &name)?,
            tolerance: u8::try_from(tolerance)
                .map_err(|_| format!("case {name}: tolerance {tolerance} is not 0..=255"))?,
            max_pixels_percent,
            name,
        });
    }
    Ok(out)
}

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| parse_cases().unwrap_or_else(|e| panic!("{e}")))
}

/// Where failing renders and their diff images go (kept for inspection).
fn out_dir() -> PathBuf {
    let dir = repo().join("target/golden-chain");
    std::fs::create_dir_all(&dir).expect("create target/golden-chain");
    dir
}

fn softgpu() -> Command {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the softgpu binary runs")
}

fn render_case(name: &str) {
    let case = cases()
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no case `{name}` in tests/chain/cases.toml"));
    let output = out_dir().join(format!("{name}.png"));
    let _ = std::fs::remove_file(&output);
    let mut cmd = softgpu();
    // Absolute paths, as the references were made with: $PRESET_DIR$ needs a parent directory.
    cmd.arg("render")
        .arg("--preset")
        .arg(chain_dir().join(&case.preset))
        .arg("--input")
        .arg(chain_dir().join(&case.input))
        .arg("--output")
        .arg(&output)
        .arg("--frames")
        .arg(case.frames.to_string());
    if let Some(size) = &case.size {
        cmd.arg("--size").arg(size);
    }
    if let Some(params) = &case.params {
        cmd.arg("--param").arg(params);
    }
    if let Some(direction) = case.frame_direction {
        cmd.arg("--frame-direction").arg(direction.to_string());
    }
    if let Some(rotation) = case.rotation {
        cmd.arg("--rotation").arg(rotation.to_string());
    }
    if let Some(curve) = &case.srgb_curve {
        cmd.arg("--srgb-curve").arg(curve);
    }
    let result = run(&mut cmd);
    assert!(
        result.status.success(),
        "case {name}: softgpu render failed ({}):\n{}",
        result.status,
        String::from_utf8_lossy(&result.stderr)
    );
    let ours = load_image(&output)
        .unwrap_or_else(|e| panic!("case {name}: {e}"))
        .image;
    let expected_path = repo().join(&case.expected);
    let expected = load_image(&expected_path)
        .unwrap_or_else(|e| panic!("case {name}: {e}"))
        .image;
    assert_eq!(
        ours.dimensions(),
        expected.dimensions(),
        "case {name}: output size differs from {}",
        expected_path.display()
    );
    let options = CompareOptions {
        tolerance: case.tolerance,
        max_pixels_percent: case.max_pixels_percent,
    };
    let report =
        compare_images(&expected, &ours, &options).unwrap_or_else(|e| panic!("case {name}: {e}"));
    if !report.matches() {
        let diff_path = out_dir().join(format!("{name}.diff.png"));
        if let Ok(diff) = diff_image(&expected, &ours, &options) {
            let _ = save_png(&diff, &diff_path);
        }
        panic!(
            "case {name}: {}\n  ours: {}\n  reference: {}\n  diff: {}",
            report.summary(),
            output.display(),
            expected_path.display(),
            diff_path.display()
        );
    }
}

macro_rules! chain_cases {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                render_case(stringify!($name));
            }
        )*

        /// The names of the tests above, checked against the case list.
        const CASE_TESTS: &[&str] = &[$(stringify!($name)),*];
    };
}

chain_cases!(
    stock,
    scales,
    aliases,
    history,
    history_short,
    feedback,
    feedback_first,
    luts,
    mipmap,
    formats,
    fbflags,
    wrap,
    params,
    params_cli,
    reference,
    semantics,
    semantics_rev,
    wildcards,
    bench_lottes,
    bench_royale,
    bench_ntsc,
    texel_fetch,
    fetch_bounds,
    switch_default,
    switch_default_rot,
    pow_edge,
    srgb_amplified,
    srgb_amplified_lavapipe,
);

#[test]
fn every_case_has_a_test_and_a_reference() {
    let names: Vec<&str> = cases().iter().map(|c| c.name.as_str()).collect();
    let mut listed = names.clone();
    listed.sort_unstable();
    let mut tested = CASE_TESTS.to_vec();
    tested.sort_unstable();
    assert_eq!(
        listed, tested,
        "cases.toml and the tests of golden_chain.rs differ"
    );
    for case in cases() {
        assert!(
            repo().join(&case.expected).is_file(),
            "case {}: reference {} is missing (tools/make_chain_refs.py)",
            case.name,
            case.expected
        );
        assert!(
            chain_dir().join(&case.preset).is_file(),
            "case {}: no preset {}",
            case.name,
            case.preset
        );
        assert!(case.frames >= 1, "case {}: frames must be >= 1", case.name);
    }
    let commands = std::fs::read_to_string(repo().join("reference-images/chain/command.txt"))
        .expect("reference-images/chain/command.txt");
    for case in cases() {
        assert!(
            commands.contains(&format!("# {}:", case.name)),
            "command.txt has no command for case {}",
            case.name
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Error paths.

/// A scratch directory for presets written by the error tests.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "softgpu-golden-chain-{}-{test}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write scratch file");
    path
}

fn stock_shader() -> String {
    chain_dir()
        .join("shaders/stock.slang")
        .display()
        .to_string()
}

/// Renders `preset` from the small test input and expects a failure whose stderr contains every
/// one of `needles`.
fn expect_failure(preset: &Path, extra: &[&str], needles: &[&str]) {
    let output = scratch("out").join("never.png");
    let result = run(softgpu()
        .arg("render")
        .arg("--preset")
        .arg(preset)
        .arg("--input")
        .arg(chain_dir().join("inputs/blocks32x24.png"))
        .arg("--output")
        .arg(&output)
        .args(extra));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        !result.status.success(),
        "{} should fail, but softgpu exited with {}",
        preset.display(),
        result.status
    );
    assert!(
        !stderr.contains("panicked"),
        "{}: softgpu panicked instead of reporting an error:\n{stderr}",
        preset.display()
    );
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{}: expected `{needle}` in stderr, got:\n{stderr}",
            preset.display()
        );
    }
}

#[test]
fn malformed_preset_value_names_file_and_line() {
    let dir = scratch("malformed");
    let preset = write(
        &dir,
        "bad_scale.slangp",
        &format!(
            "shaders = 1\nshader0 = {}\nscale_type0 = sideways\n",
            stock_shader()
        ),
    );
    expect_failure(&preset, &[], &["bad_scale.slangp:3", "sideways"]);
}

#[test]
fn missing_shader_names_preset_line_and_path() {
    let dir = scratch("missing");
    let preset = write(
        &dir,
        "missing.slangp",
        "shaders = 1\nshader0 = does_not_exist.slang\n",
    );
    expect_failure(&preset, &[], &["missing.slangp:2", "does_not_exist.slang"]);
}

#[test]
fn shader_compile_error_names_shader_file_and_line() {
    let dir = scratch("compile");
    let shader = write(
        &dir,
        "broken.slang",
        "#version 450\n\
         layout(std140, set = 0, binding = 0) uniform UBO { mat4 MVP; } global;\n\
         #pragma stage vertex\n\
         layout(location = 0) in vec4 Position;\n\
         void main() { gl_Position = global.MVP * Position; }\n\
         #pragma stage fragment\n\
         layout(location = 0) out vec4 FragColor;\n\
         void main() { FragColor = vec4(undeclared_name, 1.0); }\n",
    );
    let preset = write(
        &dir,
        "broken.slangp",
        &format!("shaders = 1\nshader0 = {}\n", shader.display()),
    );
    expect_failure(&preset, &[], &["broken.slang:8"]);
}

#[test]
fn unknown_texture_semantic_is_an_error() {
    let dir = scratch("semantic");
    let shader = write(
        &dir,
        "unknown_sampler.slang",
        "#version 450\n\
         layout(std140, set = 0, binding = 0) uniform UBO { mat4 MVP; } global;\n\
         #pragma stage vertex\n\
         layout(location = 0) in vec4 Position;\n\
         layout(location = 1) in vec2 TexCoord;\n\
         layout(location = 0) out vec2 vTexCoord;\n\
         void main() { gl_Position = global.MVP * Position; vTexCoord = TexCoord; }\n\
         #pragma stage fragment\n\
         layout(location = 0) in vec2 vTexCoord;\n\
         layout(location = 0) out vec4 FragColor;\n\
         layout(set = 0, binding = 2) uniform sampler2D NotATexture;\n\
         void main() { FragColor = texture(NotATexture, vTexCoord); }\n",
    );
    let preset = write(
        &dir,
        "unknown.slangp",
        &format!("shaders = 1\nshader0 = {}\n", shader.display()),
    );
    expect_failure(&preset, &[], &["unknown_sampler.slang", "NotATexture"]);
}

#[test]
fn reference_cycle_is_an_error() {
    let dir = scratch("cycle");
    write(&dir, "a.slangp", "#reference \"b.slangp\"\n");
    write(&dir, "b.slangp", "#reference \"a.slangp\"\n");
    expect_failure(&dir.join("a.slangp"), &[], &["slangp:1"]);
}

#[test]
fn bad_flags_fail() {
    let preset = chain_dir().join("stock.slangp");
    expect_failure(&preset, &["--size", "12by4"], &["--size"]);
    expect_failure(&preset, &["--rotation", "4"], &["rotation"]);
    expect_failure(&preset, &["--frame-direction", "2"], &["frame-direction"]);
    expect_failure(&preset, &["--frames", "0"], &["frames"]);
    expect_failure(&preset, &["--param", "NO_EQUALS_SIGN"], &["NO_EQUALS_SIGN"]);
    for fps in ["--fps=nan", "--fps=inf", "--fps=0", "--fps=-60"] {
        expect_failure(&preset, &[fps], &["--fps", "positive finite number"]);
    }
}

#[test]
fn missing_input_names_the_path() {
    let output = scratch("input").join("never.png");
    let result = run(softgpu()
        .arg("render")
        .arg("--preset")
        .arg(chain_dir().join("stock.slangp"))
        .arg("--input")
        .arg(chain_dir().join("inputs/no_such_image.png"))
        .arg("--output")
        .arg(&output));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success(), "a missing input must fail");
    assert!(stderr.contains("no_such_image.png"), "stderr: {stderr}");
}
