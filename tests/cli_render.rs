//! `softgpu render` as librashader-cli and RetroArch users drive it: every render flag of
//! librashader-cli 0.12.1 accepted under its name, the uniforms those flags set and the feature
//! macros they define, HDR output, `--passes-enabled`, every frame written through a pattern,
//! and video streams through stdin and stdout (with ffmpeg where it is installed).

mod cli_support;

use cli_support::{assert_error, softgpu, softgpu_command, stderr, Scratch};
use std::io::Write;
use std::process::Stdio;

/// A one-pass shader whose colour shows the host uniforms and feature macros: red = 1 when
/// `_HAS_FRAMETIME_UNIFORMS` is defined, green = `OriginalFPS / 100`, blue = `HDRMode / 4`
/// (`+ 0.5` when `_HAS_SENSOR_UNIFORMS`), alpha = `Gyroscope.y / 10`.
const PROBE: &str = r#"#version 450
#pragma parameter unused "Unused" 0.0 0.0 1.0 0.1
layout(push_constant) uniform Push
{
    float OriginalFPS;
    uint HDRMode;
    vec3 Gyroscope;
    uint FrameCount;
} params;
layout(std140, set = 0, binding = 0) uniform UBO { mat4 MVP; } global;
#pragma stage vertex
layout(location = 0) in vec4 Position;
layout(location = 1) in vec2 TexCoord;
layout(location = 0) out vec2 vTexCoord;
void main() { gl_Position = global.MVP * Position; vTexCoord = TexCoord; }
#pragma stage fragment
layout(location = 0) in vec2 vTexCoord;
layout(location = 0) out vec4 FragColor;
void main()
{
#ifdef _HAS_FRAMETIME_UNIFORMS
    float r = 1.0;
#else
    float r = 0.0;
#endif
#ifdef _HAS_SENSOR_UNIFORMS
    float sensors = 0.5;
#else
    float sensors = 0.0;
#endif
    FragColor = vec4(r, params.OriginalFPS / 100.0, float(params.HDRMode) / 4.0 + sensors,
                     params.Gyroscope.y / 10.0);
}
"#;

/// A pass that writes one colour.
fn solid(rgb: &str) -> String {
    format!(
        "#version 450\nlayout(std140, set = 0, binding = 0) uniform UBO {{ mat4 MVP; }} global;\n\
         #pragma stage vertex\nlayout(location = 0) in vec4 Position;\n\
         void main() {{ gl_Position = global.MVP * Position; }}\n\
         #pragma stage fragment\nlayout(location = 0) out vec4 FragColor;\n\
         void main() {{ FragColor = vec4({rgb}, 1.0); }}\n"
    )
}

/// A pass whose red channel is `FrameCount / 255`.
const COUNTER: &str = r#"#version 450
layout(push_constant) uniform Push { uint FrameCount; } params;
layout(std140, set = 0, binding = 0) uniform UBO { mat4 MVP; } global;
#pragma stage vertex
layout(location = 0) in vec4 Position;
void main() { gl_Position = global.MVP * Position; }
#pragma stage fragment
layout(location = 0) out vec4 FragColor;
void main() { FragColor = vec4(float(params.FrameCount) / 255.0, 0.0, 0.0, 1.0); }
"#;

fn run_ok(args: &[String]) -> std::process::Output {
    let out = softgpu(args);
    assert!(out.status.success(), "softgpu {args:?}: {}", stderr(&out));
    out
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// The first pixel of an 8-bit PNG.
fn first_pixel(path: &std::path::Path) -> [u8; 4] {
    let image = image::open(path).expect("read PNG").to_rgba8();
    image.get_pixel(0, 0).0
}

#[test]
fn every_librashader_cli_render_flag_is_accepted() {
    let s = Scratch::new();
    s.write("probe.slang", PROBE);
    let preset = s.write("probe.slangp", "shaders = 1\nshader0 = probe.slang\n");
    let out = s.path("out.png");
    // librashader-cli 0.12.1 `render` flags with librashader-cli's spelling (its `--runtime`
    // picks a GPU API, which softgpu has none of).
    let args: Vec<String> = [
        "render",
        "-p",
        preset.to_str().unwrap(),
        "-w",
        "CORE=snes9x,GAME=mario",
        "-f",
        "2",
        "-d",
        "50%",
        "--params",
        "unused=1.0",
        "--passes-enabled",
        "1",
        "-i",
        &s.arg("in.png"),
        "--frame-direction",
        "-1",
        "--rotation",
        "1",
        "--total-subframes",
        "2",
        "--current-subframe",
        "2",
        "--aspect-ratio",
        "1.333",
        "--frames-per-second",
        "50",
        "--frametime-delta",
        "20",
        "--color-space",
        "sdr",
        "--brightness-nits",
        "300",
        "--expand-gamut",
        "1",
        "--gyroscope",
        "1",
        "5",
        "3",
        "--accelerometer",
        "0,0,1",
        "--accelerometer-rest",
        "0",
        "0",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    run_ok(&args);
    let image = image::open(&out).unwrap().to_rgba8();
    assert_eq!(image.dimensions(), (32, 24), "-d 50% of a 64x48 input");
    // Frametime and sensor macros defined (their flags were given), OriginalFPS = 50,
    // HDRMode 0, Gyroscope.y = 5.
    assert_eq!(image.get_pixel(0, 0).0, [255, 128, 128, 128]);
}

#[test]
fn feature_macros_follow_librashader_cli_by_default_and_retroarch_on_request() {
    let s = Scratch::new();
    s.write("probe.slang", PROBE);
    let preset = s.write("probe.slangp", "shaders = 1\nshader0 = probe.slang\n");
    let render = |extra: &[&str]| {
        let out = s.path("features.png");
        let mut args = strings(&[
            "render",
            "--preset",
            preset.to_str().unwrap(),
            "--input",
            &s.arg("in.png"),
            "--output",
            out.to_str().unwrap(),
            "--no-shader-cache",
        ]);
        args.extend(strings(extra));
        run_ok(&args);
        first_pixel(&out)
    };
    // Nothing given: no macros, OriginalFPS 1 (librashader's default), HDRMode 0.
    assert_eq!(render(&[]), [0, 3, 0, 0]);
    // --fps defines _HAS_FRAMETIME_UNIFORMS, as librashader-cli does.
    assert_eq!(render(&["--fps", "60"]), [255, 153, 0, 0]);
    // RetroArch defines every macro whatever the flags.
    assert_eq!(render(&["--features", "all"]), [255, 3, 128, 0]);
    assert_eq!(
        render(&["--features", "sensor-uniforms", "--gyroscope", "0,10,0"]),
        [0, 3, 128, 255]
    );
}

#[test]
fn hdr_color_spaces_set_hdr_mode_and_write_16_bit_png() {
    let s = Scratch::new();
    s.write("probe.slang", PROBE);
    let preset = s.write("probe.slangp", "shaders = 1\nshader0 = probe.slang\n");
    for (space, mode) in [("hdr10", 1u32), ("scrgb", 2), ("pq-scrgb", 3)] {
        let out = s.path(&format!("{space}.png"));
        run_ok(&strings(&[
            "render",
            "--preset",
            preset.to_str().unwrap(),
            "--input",
            &s.arg("in.png"),
            "--output",
            out.to_str().unwrap(),
            "--color-space",
            space,
        ]));
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&out).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        assert_eq!(reader.info().bit_depth, png::BitDepth::Sixteen, "{space}");
        let cicp = reader.info().coding_independent_code_points.expect("cICP");
        assert_eq!((cicp.color_primaries, cicp.transfer_function), (9, 16));
        let mut data = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut data).unwrap();
        let blue = u16::from_be_bytes([data[4], data[5]]);
        let expected = mode as f32 / 4.0;
        if space == "scrgb" {
            // Linear light, converted to PQ: only its order is simple to state.
            assert!(blue > 0, "{space}: HDRMode reaches the shader");
        } else {
            let got = blue as f32 / 65535.0;
            assert!(
                (got - expected).abs() < 2.0 / 1023.0,
                "{space}: {got} vs {expected}"
            );
        }
    }
    let out = softgpu(&[
        "render",
        "--preset",
        preset.to_str().unwrap(),
        "--input",
        &s.arg("in.png"),
        "--output",
        &s.arg("hdr.y4m"),
        "--color-space",
        "hdr10",
    ]);
    assert_error(&out, 1, &["--color-space", "16-bit PNG"]);
}

#[test]
fn passes_enabled_makes_an_earlier_pass_draw_the_output() {
    let s = Scratch::new();
    s.write("red.slang", &solid("1.0, 0.0, 0.0"));
    s.write("green.slang", &solid("0.0, 1.0, 0.0"));
    let preset = s.write(
        "two.slangp",
        "shaders = 2\nshader0 = red.slang\nshader1 = green.slang\n",
    );
    for (enabled, expected) in [("1", [255, 0, 0, 255]), ("2", [0, 255, 0, 255])] {
        let out = s.path("cut.png");
        run_ok(&strings(&[
            "render",
            "--preset",
            preset.to_str().unwrap(),
            "--input",
            &s.arg("in.png"),
            "--output",
            out.to_str().unwrap(),
            "--passes-enabled",
            enabled,
        ]));
        assert_eq!(first_pixel(&out), expected, "--passes-enabled {enabled}");
    }
}

#[test]
fn a_pattern_writes_every_frame_or_every_kth_and_the_last() {
    let s = Scratch::new();
    s.write("counter.slang", COUNTER);
    let preset = s.write("counter.slangp", "shaders = 1\nshader0 = counter.slang\n");
    let pattern = s.path("frames/%03d.png");
    run_ok(&strings(&[
        "render",
        "--preset",
        preset.to_str().unwrap(),
        "--input",
        &s.arg("in.png"),
        "--output",
        pattern.to_str().unwrap(),
        "--frames",
        "4",
    ]));
    for frame in 0..4u8 {
        let path = s.path(&format!("frames/{frame:03}.png"));
        assert_eq!(first_pixel(&path)[0], frame, "{}", path.display());
    }
    let every = s.path("every/f%d.png");
    run_ok(&strings(&[
        "render",
        "--preset",
        preset.to_str().unwrap(),
        "--input",
        &s.arg("in.png"),
        "--output",
        every.to_str().unwrap(),
        "--frames",
        "6",
        "--output-every",
        "4",
    ]));
    let mut names: Vec<String> = std::fs::read_dir(s.path("every"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["f0.png", "f4.png", "f5.png"]);
}

/// A Y4M stream of `frames` 4:2:0 frames of 8x6, frame i with luma `40 + 20 * i`.
fn y4m_stream(frames: u8) -> Vec<u8> {
    let mut bytes = b"YUV4MPEG2 W8 H6 F25:1 Ip A1:1 C420jpeg\n".to_vec();
    for i in 0..frames {
        bytes.extend_from_slice(b"FRAME\n");
        bytes.extend(std::iter::repeat_n(40 + 20 * i, 48));
        bytes.extend(std::iter::repeat_n(128, 2 * 12));
    }
    bytes
}

/// The frames of a 4:4:4 Y4M stream as (header, luma of the first pixel of each frame).
fn y4m_lumas(bytes: &[u8]) -> (String, Vec<u8>) {
    let header_end = bytes.iter().position(|&b| b == b'\n').expect("header");
    let header = String::from_utf8(bytes[..header_end].to_vec()).unwrap();
    let frame = 6 + 3 * 8 * 6;
    let body = &bytes[header_end + 1..];
    assert_eq!(body.len() % frame, 0, "whole 8x6 C444 frames");
    let lumas = body.chunks(frame).map(|f| f[6]).collect();
    (header, lumas)
}

#[test]
fn a_y4m_stream_goes_through_a_preset_from_stdin_to_stdout() {
    let s = Scratch::new();
    let preset = s.write("stock.slangp", "shaders = 1\nshader0 = stock.slang\n");
    let mut child = softgpu_command()
        .args([
            "render",
            "--preset",
            preset.to_str().unwrap(),
            "--input",
            "-",
            "--output",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stream = y4m_stream(3);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&stream));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let (header, lumas) = y4m_lumas(&out.stdout);
    assert!(header.starts_with("YUV4MPEG2 W8 H6 F25:1 "), "{header}");
    assert!(header.contains("C444"), "{header}");
    // Grey in, grey out: BT.601 limited range both ways, within a step of rounding.
    for (i, luma) in lumas.iter().enumerate() {
        let expected = 40 + 20 * i as i32;
        assert!((*luma as i32 - expected).abs() <= 1, "frame {i}: {luma}");
    }
    assert_eq!(lumas.len(), 3);
}

#[test]
fn a_raw_rgba_stream_needs_its_size_and_round_trips_exactly() {
    let s = Scratch::new();
    let preset = s.write("stock.slangp", "shaders = 1\nshader0 = stock.slang\n");
    let input = s.path("in.rgba");
    let mut frames = Vec::new();
    for i in 0..2u8 {
        for p in 0..(4 * 2) {
            frames.extend_from_slice(&[i * 50, p * 10, 7, 255]);
        }
    }
    std::fs::write(&input, &frames).unwrap();
    let out = softgpu(&[
        "render",
        "--preset",
        preset.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--output",
        &s.arg("out.rgba"),
    ]);
    assert_error(&out, 1, &["needs --input-size"]);
    run_ok(&strings(&[
        "render",
        "--preset",
        preset.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--input-size",
        "4x2",
        "--output",
        &s.arg("out.rgba"),
    ]));
    assert_eq!(std::fs::read(s.path("out.rgba")).unwrap(), frames);
}

#[test]
fn malformed_streams_and_outputs_are_refused_with_what_was_expected() {
    let s = Scratch::new();
    let preset = s.write("stock.slangp", "shaders = 1\nshader0 = stock.slang\n");
    let run = |input: &str, output: &str, extra: &[&str]| {
        let mut args = strings(&[
            "render",
            "--preset",
            preset.to_str().unwrap(),
            "--input",
            input,
            "--output",
            output,
        ]);
        args.extend(strings(extra));
        softgpu(&args)
    };
    std::fs::write(s.path("noise.y4m"), b"RIFF\x00\x01garbage").unwrap();
    assert_error(
        &run(&s.arg("noise.y4m"), &s.arg("o.png"), &[]),
        1,
        &["noise.y4m", "not a YUV4MPEG2 stream"],
    );
    let mut cut = y4m_stream(2);
    cut.truncate(cut.len() - 10);
    std::fs::write(s.path("cut.y4m"), &cut).unwrap();
    let existing = s.write("kept.y4m", "old bytes");
    assert_error(
        &run(&s.arg("cut.y4m"), existing.to_str().unwrap(), &[]),
        1,
        &["cut.y4m", "frame 2 is cut short"],
    );
    assert_eq!(
        std::fs::read_to_string(&existing).unwrap(),
        "old bytes",
        "a failed render leaves the output file as it was"
    );
    assert_error(
        &run(&s.arg("in.png"), &s.arg("f%d_%d.png"), &[]),
        1,
        &["expected one frame number"],
    );
    assert_error(
        &run(&s.arg("in.png"), &s.arg("f%x.png"), &[]),
        1,
        &["%d or %05d"],
    );
    assert_error(
        &run(
            &s.arg("in.png"),
            &s.arg("o.png"),
            &["--total-subframes", "2", "--current-subframe", "3"],
        ),
        1,
        &["--current-subframe 3"],
    );
    assert_error(
        &run(&s.arg("in.png"), &s.arg("o.png"), &["--size", "0%"]),
        1,
        &["SCALE%"],
    );
    assert_error(
        &run(
            &s.arg("in.png"),
            &s.arg("o.png"),
            &["--output-format", "y4m"],
        ),
        1,
        &["--output-format", "only for `--output -`"],
    );
}

/// ffmpeg makes a stream, softgpu renders it, ffmpeg reads the result back: the command lines
/// docs/cli.md gives. Skipped where ffmpeg is not installed (CI installs no ffmpeg).
#[test]
fn ffmpeg_round_trip_where_ffmpeg_is_installed() {
    if std::process::Command::new("ffmpeg")
        .arg("-version")
        .output()
        .is_err()
    {
        eprintln!("ffmpeg not installed: round trip skipped");
        return;
    }
    let s = Scratch::new();
    let preset = s.write("stock.slangp", "shaders = 1\nshader0 = stock.slang\n");
    let script = format!(
        "set -e; cd {dir}; \
         ffmpeg -loglevel error -f lavfi -i testsrc=size=64x48:rate=10 -frames:v 5 -pix_fmt yuv420p -f yuv4mpegpipe - \
         | {bin} render --preset {preset} --input - --output - \
         | ffmpeg -loglevel error -f yuv4mpegpipe -i - -f image2 out%d.png",
        dir = s.dir().display(),
        bin = env!("CARGO_BIN_EXE_softgpu"),
        preset = preset.display(),
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .env_remove("SOFTGPU_MEMORY_BUDGET")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for i in 1..=5 {
        let image = image::open(s.path(&format!("out{i}.png"))).unwrap();
        assert_eq!((image.width(), image.height()), (64, 48));
    }
}

#[test]
fn every_png_compression_level_writes_the_same_pixels() {
    let s = Scratch::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let mut outputs = Vec::new();
    for level in ["fast", "balanced", "high"] {
        let out = s.path(&format!("{level}.png"));
        run_ok(&strings(&[
            "render",
            "--preset",
            &format!("{root}/examples/crt/crt.slangp"),
            "--input",
            &format!("{root}/examples/crt/frame.png"),
            "--output",
            out.to_str().unwrap(),
            "--size",
            "160x120",
            "--png-compression",
            level,
        ]));
        let bytes = std::fs::read(&out).unwrap();
        let pixels = image::load_from_memory(&bytes).unwrap().to_rgba8();
        outputs.push((level, bytes.len(), pixels));
    }
    for (level, _, pixels) in &outputs[1..] {
        assert!(
            *pixels == outputs[0].2,
            "{level} decodes to other pixels than fast"
        );
    }
    assert!(
        outputs[2].1 <= outputs[0].1,
        "high ({} bytes) is larger than fast ({} bytes)",
        outputs[2].1,
        outputs[0].1
    );
    let refused = softgpu(&strings(&["render", "--png-compression", "best"]));
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("--png-compression"));
}
