//! `softgpu render`: a RetroArch preset on an input frame (or a directory of frames) to a PNG.

use crate::args::{
    parse_size, DriverArg, ExecArg, MathArg, MemoryBudgetArgs, PngArgs, ShaderCacheArgs,
};
use anyhow::{anyhow, bail, Result};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use softgpu::chain;
use softgpu::video::{FrameReader, FrameWriter, StreamFormat};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// The flags of `softgpu render`. Names and short forms follow librashader-cli's `render`
/// where it has the option (its long names are accepted as aliases: `--image`, `--out`,
/// `--dimensions`, `--params`, `--frames-per-second`).
#[derive(clap::Args)]
pub struct RenderArgs {
    /// The RetroArch preset: .slangp or .cgp (each pass's shader a .slang or .cg file).
    #[arg(short, long, value_name = "P.slangp|P.cgp", allow_hyphen_values = true)]
    preset: PathBuf,
    /// Values of RetroArch's path wildcards in the preset's paths (`$CORE$`, `$GAME$`,
    /// `$CONTENT-DIR$`, `$VID-DRV$`, …), KEY=VALUE separated by commas; repeatable.
    ///
    /// Unset keys keep what RetroArch substitutes for an unrotated core on Vulkan;
    /// `$PRESET$` and `$PRESET_DIR$` always come from the preset's path.
    #[arg(short, long, value_name = "KEY=VALUE,...", allow_hyphen_values = true)]
    wildcards: Vec<String>,
    /// The input: a PNG or JPEG frame, a directory of PNG frames fed in name order, a Y4M video
    /// (`.y4m`), or `-` for a Y4M stream on stdin (raw RGBA8 frames with --input-size).
    ///
    /// Streams are read one frame per rendered frame, as they arrive, until they end.
    #[arg(
        short,
        long,
        visible_alias = "image",
        value_name = "IN.png|DIR|IN.y4m|-",
        allow_hyphen_values = true
    )]
    input: PathBuf,
    /// The frame size of a raw RGBA8 input stream (`--input -` or a `.rgba` file): W x H pixels,
    /// 4 bytes each, rows top to bottom (ffmpeg's `-f rawvideo -pix_fmt rgba`).
    #[arg(long, value_name = "WxH", allow_hyphen_values = true)]
    input_size: Option<String>,
    /// Where the output goes: `OUT.png` (the last frame), a pattern such as `frames/%05d.png`
    /// (every frame, numbered from 0), a video `OUT.y4m` or raw `OUT.rgba` (every frame), or
    /// `-` for stdout (see --output-format).
    ///
    /// Files are written whole or not at all: a failing render leaves an existing file as it
    /// was. An HDR --color-space writes 16-bit PNGs only.
    #[arg(
        short,
        long,
        visible_alias = "out",
        value_name = "OUT.png|PATTERN|OUT.y4m|OUT.rgba|-",
        allow_hyphen_values = true
    )]
    output: PathBuf,
    /// What `--output -` writes: a PNG of the last frame, or every frame as a Y4M or raw RGBA8
    /// stream [default: y4m for a stream input, else png]
    #[arg(long, value_enum, allow_hyphen_values = true)]
    output_format: Option<OutputFormatArg>,
    #[command(flatten)]
    png: PngArgs,
    /// With a pattern or stream output, write only frames 0, K, 2K, … and the last.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..), allow_hyphen_values = true)]
    output_every: u64,
    /// Output (viewport) size: WxH, or SCALE% of the input frame [default: the input frame's
    /// size]
    #[arg(
        short = 'd',
        long,
        visible_alias = "dimensions",
        value_name = "WxH|SCALE%",
        allow_hyphen_values = true
    )]
    size: Option<String>,
    /// Frames to render; the last one is written (every one with a pattern or stream output).
    ///
    /// Frame i is fed the i-th frame of an --input directory; after the directory's last frame,
    /// that frame is held. A stream input ends the render where it ends [default: 1, or every
    /// frame of a stream]
    #[arg(
        long,
        value_name = "N",
        conflicts_with = "frame",
        allow_hyphen_values = true
    )]
    frames: Option<u64>,
    /// Render frames 0..=N and write frame N (librashader-cli's `--frame`; the same as
    /// `--frames N+1`).
    #[arg(short = 'f', long, value_name = "N", allow_hyphen_values = true)]
    frame: Option<u64>,
    /// Shader parameters (`#pragma parameter` names), NAME=VALUE separated by commas;
    /// repeatable.
    ///
    /// They override the shaders' defaults and the preset's values.
    #[arg(
        long,
        visible_alias = "params",
        value_name = "NAME=VALUE,...",
        allow_hyphen_values = true
    )]
    param: Vec<String>,
    /// Run only the first N passes; the last of them draws into the output (for finding the
    /// pass where two renders part).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), allow_hyphen_values = true)]
    passes_enabled: Option<u64>,
    /// `FrameDirection`: 1 forwards, -1 rewinding.
    #[arg(long, value_name = "-1|1", default_value_t = 1, allow_hyphen_values = true,
          value_parser = parse_direction)]
    frame_direction: i32,
    /// `Rotation` in quarter turns.
    #[arg(long, value_name = "0-3", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=3), allow_hyphen_values = true)]
    rotation: u32,
    /// `TotalSubFrames`: subframes per frame.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..), allow_hyphen_values = true)]
    total_subframes: u32,
    /// `CurrentSubFrame`: which subframe this is, 1..=--total-subframes.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..), allow_hyphen_values = true)]
    current_subframe: u32,
    /// `OriginalAspect`: the source's aspect ratio [default: the input frame's]; giving it
    /// defines `_HAS_ORIGINALASPECT_UNIFORMS` (see --features).
    #[arg(long, value_name = "RATIO", value_parser = parse_positive, allow_hyphen_values = true)]
    aspect_ratio: Option<f32>,
    /// `OriginalFPS`: the source's frame rate [default: 1, or a Y4M input's rate]; giving it
    /// defines `_HAS_FRAMETIME_UNIFORMS`.
    #[arg(long, visible_alias = "frames-per-second", value_name = "FPS", value_parser = parse_positive, allow_hyphen_values = true)]
    fps: Option<f32>,
    /// `FrameTimeDelta`: milliseconds between frames [default: 0]; giving it defines
    /// `_HAS_FRAMETIME_UNIFORMS`.
    #[arg(long, value_name = "MS", allow_hyphen_values = true)]
    frametime_delta: Option<u32>,
    /// The display's color space: `HDRMode` and the output's encoding. sdr: an RGBA8 PNG; hdr10
    /// (the last pass draws into A2B10G10R10), scrgb and pq-scrgb (into R16G16B16A16_SFLOAT): a
    /// 16-bit PNG tagged BT.2020/PQ (docs/cli.md says how each is converted).
    #[arg(long, value_enum, default_value = "sdr", allow_hyphen_values = true)]
    color_space: ColorSpaceArg,
    /// `BrightnessNits`: the SDR reference white in nits.
    #[arg(long, value_name = "NITS", default_value_t = 200.0, value_parser = parse_positive, allow_hyphen_values = true)]
    brightness_nits: f32,
    /// `ExpandGamut`: the gamut expansion mode.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_hyphen_values = true
    )]
    expand_gamut: u32,
    /// `Gyroscope`: X,Y,Z (or three values); giving a sensor defines `_HAS_SENSOR_UNIFORMS`.
    #[arg(long, value_name = "X,Y,Z", num_args = 1..=3, value_delimiter = ',', allow_negative_numbers = true)]
    gyroscope: Option<Vec<f32>>,
    /// `Accelerometer`: X,Y,Z.
    #[arg(long, value_name = "X,Y,Z", num_args = 1..=3, value_delimiter = ',', allow_negative_numbers = true)]
    accelerometer: Option<Vec<f32>>,
    /// `AccelerometerRest`: X,Y,Z.
    #[arg(long, value_name = "X,Y,Z", num_args = 1..=3, value_delimiter = ',', allow_negative_numbers = true)]
    accelerometer_rest: Option<Vec<f32>>,
    /// Feature macros defined in every .slang pass, comma separated: originalaspect-uniforms,
    /// frametime-uniforms, sensor-uniforms, all (what RetroArch defines), none [default: as
    /// librashader-cli, each one whose uniforms are given by a flag]
    #[arg(long, value_enum, value_delimiter = ',', allow_hyphen_values = true)]
    features: Vec<FeatureArg>,
    /// Shader executor (both give bit-identical images).
    #[arg(long, value_enum, default_value = "jit", allow_hyphen_values = true)]
    exec: ExecArg,
    /// Whose rules the passes run with: filtering precision, derivatives, render-target
    /// conversions, sRGB curve and math (docs/fidelity.md, "Driver profiles")
    #[arg(
        long,
        value_enum,
        default_value = "softpipe",
        allow_hyphen_values = true
    )]
    driver: DriverArg,
    /// How sRGB render targets convert [default: the --driver's]
    #[arg(long, value_enum, allow_hyphen_values = true)]
    srgb_curve: Option<SrgbCurveArg>,
    /// How EX2, LG2, POW, SIN and COS are computed [default: the --driver's: exact, or
    /// llvmpipe for llvmpipe]
    #[arg(long, value_enum, allow_hyphen_values = true)]
    math: Option<MathArg>,
    /// Run each pass's fragment program as compiled, not specialized (the same pixels; for
    /// checking the specialization).
    ///
    /// By default each pass's fragment program is specialized for the textures the pass binds
    /// and the shader parameters it reads, which is usually faster.
    #[arg(long)]
    no_specialize: bool,
    /// Draw every pass in every frame (the same pixels; for checking the reuse).
    ///
    /// By default a pass whose inputs did not change since the previous frame — the same input
    /// contents, the same uniforms it reads (`FrameCount` only if it reads it), no history or
    /// feedback that changed — reuses its previous output.
    #[arg(long)]
    redraw_unchanged: bool,
    #[command(flatten)]
    cache: ShaderCacheArgs,
    #[command(flatten)]
    memory: MemoryBudgetArgs,
    /// Refuse a frame whose passes would shade more than N pixels together (the sum of their
    /// target sizes; `512M`, `1G` or a count) [default: $SOFTGPU_PIXEL_BUDGET, else 512M]
    ///
    /// It bounds the work of presets whose scales make every target as large as allowed.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pixel_budget: Option<String>,
    /// Never show progress.
    ///
    /// Progress (the shaders compiling and the passes building, then the frames with their
    /// rate and the time left) is drawn on stderr only when stderr is a terminal.
    #[arg(short, long)]
    quiet: bool,
    /// After rendering, print to stderr where the time went.
    ///
    /// Loading, input frames and all passes in milliseconds, then a line per pass: its draw and
    /// preparation milliseconds per drawn frame, its share of the passes' time, its target size,
    /// its fragment instructions and the frames that reused its previous output.
    #[arg(long)]
    timings: bool,
}

/// Parses `--frame-direction`: 1 (or +1) or -1.
fn parse_direction(text: &str) -> std::result::Result<i32, String> {
    match text {
        "1" | "+1" => Ok(1),
        "-1" => Ok(-1),
        _ => Err(format!("expected -1 or 1, got `{text}`")),
    }
}

/// Parses a positive finite number (`--fps`, `--aspect-ratio`, `--brightness-nits`): NaN,
/// infinities, zero and negative values would reach the shaders as nonsense.
fn parse_positive(text: &str) -> std::result::Result<f32, String> {
    match text.parse::<f32>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err(format!("expected a positive finite number, got `{text}`")),
        Err(e) => Err(format!(
            "expected a positive finite number, got `{text}` ({e})"
        )),
    }
}

/// A sensor flag's three values (`--gyroscope 1,2,3` or `--gyroscope 1 2 3`).
fn vec3(flag: &str, values: &Option<Vec<f32>>) -> Result<Option<[f32; 3]>> {
    match values.as_deref() {
        None => Ok(None),
        Some(&[x, y, z]) if [x, y, z].iter().all(|v| v.is_finite()) => Ok(Some([x, y, z])),
        Some(v) => bail!(
            "--{flag}: expected three finite numbers X,Y,Z, got {}",
            v.len()
        ),
    }
}

/// The `KEY=VALUE` items of a repeatable, comma-separated flag, trimmed, as `(item, key,
/// value)`; `key` names what a key is in the messages (`name` for `--param`).
fn key_value_items<'a>(
    args: &'a [String],
    flag: &str,
    key: &str,
) -> Result<Vec<(&'a str, &'a str, &'a str)>> {
    let mut out = Vec::new();
    for arg in args {
        for item in arg.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| anyhow!("{flag} `{item}`: expected {}=VALUE", key.to_uppercase()))?;
            if k.trim().is_empty() {
                bail!("{flag} `{item}`: the {key} is empty");
            }
            out.push((item, k.trim(), v.trim()));
        }
    }
    Ok(out)
}

/// Parses `--param NAME=VALUE,NAME=VALUE`.
fn parse_params(args: &[String]) -> Result<Vec<(String, f32)>> {
    let mut out = Vec::new();
    for (item, name, value) in key_value_items(args, "--param", "name")? {
        let value: f32 = value
            .parse()
            .map_err(|_| anyhow!("--param `{item}`: `{value}` is not a number"))?;
        if !value.is_finite() {
            return Err(anyhow!("--param `{item}`: the value must be finite"));
        }
        out.push((name.to_string(), value));
    }
    Ok(out)
}

/// Parses `--wildcards KEY=VALUE,...` into RetroArch's defaults.
fn parse_wildcards(args: &[String]) -> Result<chain::preset::WildcardContext> {
    let mut context = chain::preset::WildcardContext::new();
    for (item, key, value) in key_value_items(args, "--wildcards", "key")? {
        let key = key.trim_matches('$');
        if key.is_empty() {
            bail!("--wildcards `{item}`: the key is empty");
        }
        context.set(key, value);
    }
    Ok(context)
}

/// `--size`: exact, or a percentage of the input frame (librashader-cli's `SCALE%`).
enum SizeArg {
    Exact((u32, u32)),
    Percent(u32),
}

impl SizeArg {
    fn parse(text: &str) -> Result<SizeArg> {
        match text.strip_suffix('%') {
            Some(p) => p
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&p| p > 0)
                .map(SizeArg::Percent)
                .ok_or_else(|| anyhow!("--size: expected WxH or SCALE% with a positive integer SCALE, found `{text}`")),
            None => parse_size(text).map(SizeArg::Exact),
        }
    }

    /// The viewport for an input frame of `input` size.
    fn resolve(&self, input: (u32, u32)) -> Result<(u32, u32)> {
        match *self {
            SizeArg::Exact(size) => Ok(size),
            SizeArg::Percent(p) => {
                let scale = |v: u32| (v as f32 * (p as f32 / 100.0)) as u64;
                let (w, h) = (scale(input.0), scale(input.1));
                let max = softgpu::texture::Texture::MAX_DIMENSION as u64;
                if w < 1 || h < 1 || w > max || h > max {
                    bail!(
                        "--size {p}%: a {}x{} input gives {w}x{h}; each side must be 1..={max}",
                        input.0,
                        input.1
                    );
                }
                Ok((w as u32, h as u32))
            }
        }
    }
}

/// Where the input frames come from.
enum InputArg {
    /// Image files (one, or a directory's).
    Files(Vec<PathBuf>),
    /// A Y4M or raw stream (stdin or a file).
    Stream(FrameReader<Box<dyn BufRead>>),
}

/// Opens `--input`.
fn open_input(path: &Path, input_size: Option<&str>) -> Result<InputArg> {
    let raw_size = input_size.map(parse_input_size).transpose()?;
    let is_stdin = path == Path::new("-");
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let is_raw_file = matches!(extension.as_deref(), Some("rgba" | "raw"));
    let is_y4m_file = extension.as_deref() == Some("y4m");
    if !is_stdin && !is_raw_file && !is_y4m_file {
        if input_size.is_some() {
            bail!("--input-size: only for a raw RGBA8 stream (`--input -` or a .rgba file)");
        }
        return Ok(InputArg::Files(chain::input_frames(path)?));
    }
    let name = if is_stdin {
        "--input - (stdin)".to_string()
    } else {
        format!("--input {}", path.display())
    };
    let reader: Box<dyn BufRead> = if is_stdin {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        // A video is read as a stream, a frame at a time: its length is not limited.
        Box::new(BufReader::new(
            softgpu::input::open_regular(path, "input video", u64::MAX)?.0,
        ))
    };
    Ok(InputArg::Stream(match (raw_size, is_raw_file) {
        (Some((w, h)), _) => FrameReader::raw_rgba(reader, &name, w, h),
        (None, true) => bail!("{name}: a raw RGBA8 stream needs --input-size WxH"),
        (None, false) => FrameReader::y4m(reader, &name)?,
    }))
}

/// Parses `--input-size`.
fn parse_input_size(text: &str) -> Result<(u32, u32)> {
    parse_size(text).map_err(|e| anyhow!("{}", e.to_string().replace("--size", "--input-size")))
}

/// What `--output` names.
enum OutputTarget {
    /// One PNG file: the last frame.
    Png(PathBuf),
    /// A pattern with a frame number: one PNG per written frame.
    Pattern(FramePattern),
    /// A Y4M or raw stream file: every written frame.
    StreamFile(PathBuf, StreamFormat),
    /// stdout, in this format (`None`: a PNG of the last frame).
    Stdout(Option<StreamFormat>),
}

/// An output path with one `%d` or `%0Nd` for the frame number (`%%` is a literal `%`).
struct FramePattern {
    text: String,
}

impl FramePattern {
    /// `Some` when `text` holds a frame-number placeholder; an error when it holds a `%`
    /// sequence that is not one, or more than one placeholder.
    fn parse(text: &str) -> Result<Option<FramePattern>> {
        let mut placeholders = 0;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                continue;
            }
            if chars.peek() == Some(&'%') {
                chars.next();
                continue;
            }
            let mut width = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                width.push(d);
                chars.next();
            }
            if chars.next() != Some('d') || width.len() > 2 {
                bail!("--output `{text}`: a frame number is written as %d or %05d (`%%` for a literal %)");
            }
            placeholders += 1;
        }
        match placeholders {
            0 => Ok(None),
            1 => Ok(Some(FramePattern {
                text: text.to_string(),
            })),
            _ => bail!(
                "--output `{text}`: expected one frame number (%d or %05d), found {placeholders}"
            ),
        }
    }

    /// The path of frame `frame`.
    fn path(&self, frame: u64) -> PathBuf {
        let mut out = String::new();
        let mut chars = self.text.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            if chars.peek() == Some(&'%') {
                chars.next();
                out.push('%');
                continue;
            }
            let mut width = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                width.push(d);
                chars.next();
            }
            chars.next();
            let width: usize = width.parse().unwrap_or(0);
            out += &format!("{frame:0width$}");
        }
        PathBuf::from(out)
    }
}

/// Reads `--output` and `--output-format`, checking every destination before work starts.
fn output_target(
    path: &Path,
    format: Option<OutputFormatArg>,
    stream_input: bool,
) -> Result<OutputTarget> {
    use softgpu::output::check_output;
    if path == Path::new("-") {
        return Ok(OutputTarget::Stdout(
            match format.unwrap_or(if stream_input {
                OutputFormatArg::Y4m
            } else {
                OutputFormatArg::Png
            }) {
                OutputFormatArg::Png => None,
                OutputFormatArg::Y4m => Some(StreamFormat::Y4m),
                OutputFormatArg::Raw => Some(StreamFormat::RawRgba),
            },
        ));
    }
    if format.is_some() {
        bail!("--output-format: only for `--output -`; a file's format is its extension");
    }
    let text = path
        .to_str()
        .ok_or_else(|| anyhow!("--output {}: the path is not valid UTF-8", path.display()))?;
    if let Some(pattern) = FramePattern::parse(text)? {
        let first = pattern.path(0);
        // The frames' directory is made for them (only the last level, like `mkdir`).
        if let Some(dir) = first
            .parent()
            .filter(|d| !d.as_os_str().is_empty() && !d.exists())
        {
            std::fs::create_dir(dir)
                .map_err(|e| anyhow!("--output {}: cannot create {}: {e}", text, dir.display()))?;
        }
        check_output(&first, "--output", &["png"])?;
        return Ok(OutputTarget::Pattern(pattern));
    }
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("y4m") => {
            check_output(path, "--output", &["y4m"])?;
            Ok(OutputTarget::StreamFile(
                path.to_path_buf(),
                StreamFormat::Y4m,
            ))
        }
        Some("rgba" | "raw") => {
            check_output(path, "--output", &["rgba", "raw"])?;
            Ok(OutputTarget::StreamFile(
                path.to_path_buf(),
                StreamFormat::RawRgba,
            ))
        }
        _ => {
            check_output(path, "--output", &["png", "y4m", "rgba"])?;
            Ok(OutputTarget::Png(path.to_path_buf()))
        }
    }
}

/// The feature macros to define: the flags', else librashader-cli's rule (each feature whose
/// uniforms a flag sets).
fn feature_defines(args: &RenderArgs, sensors: bool) -> chain::FeatureDefines {
    if args.features.is_empty() {
        return chain::FeatureDefines {
            original_aspect_uniforms: args.aspect_ratio.is_some(),
            frametime_uniforms: args.fps.is_some() || args.frametime_delta.is_some(),
            sensor_uniforms: sensors,
        };
    }
    let mut features = chain::FeatureDefines::default();
    for feature in &args.features {
        match feature {
            FeatureArg::OriginalaspectUniforms => features.original_aspect_uniforms = true,
            FeatureArg::FrametimeUniforms => features.frametime_uniforms = true,
            FeatureArg::SensorUniforms => features.sensor_uniforms = true,
            FeatureArg::All => features = chain::FeatureDefines::ALL,
            FeatureArg::None => {}
        }
    }
    features
}

/// Runs `softgpu render`.
pub fn run(args: RenderArgs) -> Result<()> {
    // Every flag is checked before the preset is compiled or a frame rendered.
    let size = args.size.as_deref().map(SizeArg::parse).transpose()?;
    let parameters = parse_params(&args.param)?;
    let wildcards = parse_wildcards(&args.wildcards)?;
    let memory_budget = args.memory.budget()?;
    let pixel_budget =
        softgpu::budget::resolve_pixels(args.pixel_budget.as_deref()).map_err(|e| anyhow!(e))?;
    let gyroscope = vec3("gyroscope", &args.gyroscope)?;
    let accelerometer = vec3("accelerometer", &args.accelerometer)?;
    let accelerometer_rest = vec3("accelerometer-rest", &args.accelerometer_rest)?;
    if args.current_subframe > args.total_subframes {
        bail!(
            "--current-subframe {}: expected 1..=--total-subframes ({})",
            args.current_subframe,
            args.total_subframes
        );
    }
    let color_space = args.color_space.color_space();
    let mut input = open_input(&args.input, args.input_size.as_deref())?;
    let stream_input = matches!(input, InputArg::Stream(_));
    let target = output_target(&args.output, args.output_format, stream_input)?;
    if color_space != chain::ColorSpace::Sdr
        && !matches!(
            target,
            OutputTarget::Png(_) | OutputTarget::Pattern(_) | OutputTarget::Stdout(None)
        )
    {
        bail!("--color-space: HDR output is written as 16-bit PNG; Y4M and raw streams are 8-bit");
    }
    let frames = match (args.frames, args.frame) {
        (Some(n), _) => n,
        (None, Some(n)) => n.saturating_add(1),
        (None, None) if stream_input => chain::MAX_FRAMES,
        (None, None) => 1,
    };
    let first_frame_size = match &input {
        InputArg::Stream(reader) => Some(reader.frame_size()),
        InputArg::Files(files) => softgpu::input::image_reader(&files[0], "input frame", u32::MAX)
            .ok()
            .and_then(|r| r.into_dimensions().ok()),
    };
    let size = match size {
        None => None,
        Some(SizeArg::Exact(s)) => Some(s),
        Some(percent) => {
            let input_size = first_frame_size.ok_or_else(|| {
                anyhow!(
                    "--size: SCALE% needs the input's size, and {} has none readable",
                    args.input.display()
                )
            })?;
            Some(percent.resolve(input_size)?)
        }
    };
    let fps = args.fps.unwrap_or(match &input {
        InputArg::Stream(reader) if reader.format() == StreamFormat::Y4m => {
            let (n, d) = reader.frame_rate();
            n as f32 / d as f32
        }
        _ => 1.0,
    });
    let frame_rate = match &input {
        InputArg::Stream(reader) if reader.format() == StreamFormat::Y4m => reader.frame_rate(),
        _ => ((fps * 1000.0).round().max(1.0) as u64, 1000),
    };

    let progress = Progress::new(args.quiet);
    let request = chain::RenderRequest {
        preset: args.preset.clone(),
        inputs: match &input {
            InputArg::Files(files) => files.clone(),
            InputArg::Stream(_) => Vec::new(),
        },
        size,
        frames,
        chain: chain::ChainOptions {
            executor: args.exec.executor(),
            parameters,
            wildcards,
            memory_budget: Some(memory_budget),
            pixel_budget: Some(pixel_budget),
            srgb_curve: match args.srgb_curve {
                None => chain::SrgbCurve::of(args.driver.driver()),
                Some(SrgbCurveArg::Exact) => chain::SrgbCurve::Exact,
                Some(SrgbCurveArg::Lavapipe) => chain::SrgbCurve::Llvmpipe,
                Some(SrgbCurveArg::Nvidia) => chain::SrgbCurve::Nvidia,
            },
            math: MathArg::or_driver(args.math, args.driver.driver()),
            driver: args.driver.driver(),
            skip_specialization: args.no_specialize,
            shader_cache: args.cache.dir(),
            features: feature_defines(
                &args,
                gyroscope.is_some() || accelerometer.is_some() || accelerometer_rest.is_some(),
            ),
            host: chain::HostUniforms {
                color_space,
                brightness_nits: args.brightness_nits,
                expand_gamut: args.expand_gamut,
                gyroscope: gyroscope.unwrap_or_default(),
                accelerometer: accelerometer.unwrap_or_default(),
                accelerometer_rest: accelerometer_rest.unwrap_or_default(),
            },
            progress: progress.load_callback(),
            passes_enabled: args.passes_enabled.map(|n| n as usize),
            redraw_unchanged: args.redraw_unchanged,
        },
        frame: chain::FrameOptions {
            frame_direction: args.frame_direction,
            rotation: args.rotation,
            total_subframes: args.total_subframes,
            current_subframe: args.current_subframe,
            aspect_ratio: args.aspect_ratio.unwrap_or(0.0),
            frames_per_second: fps,
            frametime_delta: args.frametime_delta.unwrap_or(0),
        },
    };
    let stream = match &mut input {
        InputArg::Stream(reader) => Some(reader as &mut dyn chain::FrameStream),
        InputArg::Files(_) => None,
    };
    let every = args.output_every;
    let png_compression = args.png.compression();
    let on_progress = |done: u64, total: Option<u64>| progress.frame_done(done, total);
    let timings = match &target {
        OutputTarget::Png(_) | OutputTarget::Stdout(None) => {
            // The last frame, as a PNG: into a file written whole, or to stdout.
            let mut last = None;
            let timings = chain::render_each(
                &request,
                stream,
                |_, frame| {
                    last = Some(frame);
                    Ok(())
                },
                on_progress,
            )?;
            let last =
                last.ok_or_else(|| anyhow!("{}: the input holds no frames", args.input.display()))?;
            progress.finish();
            let bytes = softgpu::encode::png_bytes(&last, color_space, png_compression)
                .map_err(|e| anyhow!("--output {}: {e}", args.output.display()))?;
            if let OutputTarget::Png(path) = &target {
                softgpu::output::write_atomic(path, "PNG", &bytes)?;
            } else {
                let mut out = std::io::stdout().lock();
                out.write_all(&bytes)
                    .and_then(|()| out.flush())
                    .map_err(|e| anyhow!("--output - (stdout): {e}"))?;
            }
            timings
        }
        OutputTarget::Pattern(pattern) => {
            let timings = render_selected(&request, stream, every, on_progress, |index, frame| {
                let path = pattern.path(index);
                let bytes = softgpu::encode::png_bytes(frame, color_space, png_compression)
                    .map_err(|e| anyhow!("--output {}: {e}", path.display()))?;
                Ok(softgpu::output::write_atomic(&path, "PNG", &bytes)?)
            })?;
            progress.finish();
            timings
        }
        OutputTarget::StreamFile(path, format) => {
            let mut result = None;
            let mut render_error = None;
            softgpu::output::write_atomic_with(path, "video", |file| {
                let mut writer = FrameWriter::new(
                    std::io::BufWriter::new(file),
                    &format!("--output {}", path.display()),
                    *format,
                    frame_rate,
                );
                let rendered = render_selected(&request, stream, every, on_progress, |_, frame| {
                    Ok(writer.write_frame(frame)?)
                })
                .and_then(|timings| Ok((timings, writer.finish()?)));
                match rendered {
                    Ok((timings, ())) => {
                        result = Some(timings);
                        Ok(())
                    }
                    Err(e) => {
                        let message = format!("{e:#}");
                        render_error = Some(e);
                        Err(std::io::Error::other(message))
                    }
                }
            })
            .map_err(|e| render_error.take().unwrap_or_else(|| anyhow!(e)))?;
            progress.finish();
            result.ok_or_else(|| anyhow!("--output {}: nothing was rendered", path.display()))?
        }
        OutputTarget::Stdout(Some(format)) => {
            let stdout = std::io::stdout().lock();
            let mut writer = FrameWriter::new(
                std::io::BufWriter::new(stdout),
                "--output - (stdout)",
                *format,
                frame_rate,
            );
            let timings = render_selected(&request, stream, every, on_progress, |_, frame| {
                Ok(writer.write_frame(frame)?)
            })?;
            writer.finish()?;
            progress.finish();
            timings
        }
    };
    if args.timings {
        eprint!("{}", timing_report(&timings));
    }
    Ok(())
}

/// Renders every frame and hands frames 0, `every`, 2·`every`, … and the last to `write`, each
/// as soon as it is known to be wanted (a frame is held until the next arrives, since a stream's
/// last frame is known only when it ends); an input with no frames is an error.
fn render_selected(
    request: &chain::RenderRequest,
    stream: Option<&mut dyn chain::FrameStream>,
    every: u64,
    on_progress: impl FnMut(u64, Option<u64>),
    mut write: impl FnMut(u64, &softgpu::texture::Texture) -> Result<()>,
) -> Result<chain::RenderTimings> {
    let mut held: Option<(u64, softgpu::texture::Texture)> = None;
    let timings = chain::render_each(
        request,
        stream,
        |index, frame| {
            if let Some((i, previous)) = held.replace((index, frame)) {
                if i % every == 0 {
                    write(i, &previous).map_err(|e| chain::ChainError::new(format!("{e:#}")))?;
                }
            }
            Ok(())
        },
        on_progress,
    )?;
    let (index, last) = held.ok_or_else(|| anyhow!("the input holds no frames"))?;
    write(index, &last)?;
    Ok(timings)
}

/// Progress on stderr: the load (shaders, then passes), then the frames with their rate and
/// the time left; drawn only on a terminal and never with `--quiet`.
struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    fn new(quiet: bool) -> Progress {
        use std::io::IsTerminal;
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message("loading the preset");
            bar.enable_steady_tick(std::time::Duration::from_millis(100));
            bar
        });
        Progress { bar }
    }

    fn load_callback(&self) -> Option<chain::LoadProgress> {
        let bar = self.bar.clone()?;
        Some(chain::LoadProgress(std::sync::Arc::new(move |step| {
            bar.set_message(match step {
                chain::LoadStep::ShaderCompiled { done, total, file } => format!(
                    "compiling shaders {done}/{total}: {}",
                    file.file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                ),
                chain::LoadStep::PassBuilt { done, total, label } => {
                    format!("building passes {done}/{total}: {label}")
                }
            })
        })))
    }

    fn frame_done(&self, done: u64, total: Option<u64>) {
        let Some(bar) = &self.bar else { return };
        if done == 1 {
            let template = match total {
                Some(total) => {
                    bar.set_length(total);
                    "{bar:30} {pos}/{len} frames, {per_sec}, {eta} left"
                }
                None => "{spinner} {pos} frames, {per_sec}",
            };
            bar.set_style(
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_message("");
        }
        bar.set_position(done);
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `softgpu render --timings`: where the time went, a line per pass (its label last, since
/// labels carry paths of any length).
fn timing_report(timings: &softgpu::chain::RenderTimings) -> String {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let total: f64 = timings
        .passes
        .iter()
        .map(|p| ms(p.draw) + ms(p.prepare))
        .sum();
    let mut out = format!(
        "load {:.1} ms, input frames {:.1} ms, passes {total:.1} ms\n\
         {:>10} {:>10} {:>6} {:>11} {:>7} {:>7}  pass\n",
        ms(timings.load),
        ms(timings.inputs),
        "draw ms/f",
        "prep ms/f",
        "share",
        "size",
        "instr",
        "reused",
    );
    for p in &timings.passes {
        let frames = p.frames.max(1) as f64;
        let own = ms(p.draw) + ms(p.prepare);
        out += &format!(
            "{:>10.2} {:>10.2} {:>5.1}% {:>11} {:>7} {:>7}  {}\n",
            ms(p.draw) / frames,
            ms(p.prepare) / frames,
            if total > 0.0 {
                100.0 * own / total
            } else {
                0.0
            },
            format!("{}x{}", p.size.0, p.size.1),
            p.fragment_instructions,
            p.reused,
            p.label,
        );
    }
    out
}

/// `--output-format`: what `--output -` writes.
#[derive(Clone, Copy, ValueEnum)]
enum OutputFormatArg {
    /// A PNG of the last frame.
    Png,
    /// Every frame as a YUV4MPEG2 stream (4:4:4, BT.601 limited range).
    Y4m,
    /// Every frame as raw RGBA8.
    Raw,
}

/// `--color-space`: librashader-cli's names.
#[derive(Clone, Copy, ValueEnum)]
enum ColorSpaceArg {
    /// Standard dynamic range.
    Sdr,
    /// HDR10: BT.2020 with the PQ curve.
    Hdr10,
    /// scRGB: linear BT.709, 1.0 = 80 nits.
    Scrgb,
    /// PQ-encoded values in a half-float target.
    PqScrgb,
}

impl ColorSpaceArg {
    fn color_space(self) -> chain::ColorSpace {
        match self {
            ColorSpaceArg::Sdr => chain::ColorSpace::Sdr,
            ColorSpaceArg::Hdr10 => chain::ColorSpace::Hdr10,
            ColorSpaceArg::Scrgb => chain::ColorSpace::ScRgb,
            ColorSpaceArg::PqScrgb => chain::ColorSpace::PqScRgb,
        }
    }
}

/// `--features`: librashader-cli's names, plus RetroArch's everything.
#[derive(Clone, Copy, ValueEnum)]
enum FeatureArg {
    /// `_HAS_ORIGINALASPECT_UNIFORMS`.
    OriginalaspectUniforms,
    /// `_HAS_FRAMETIME_UNIFORMS`.
    FrametimeUniforms,
    /// `_HAS_SENSOR_UNIFORMS`.
    SensorUniforms,
    /// All three, as RetroArch defines them.
    All,
    /// None.
    None,
}

/// `--srgb-curve`: how sRGB render targets convert.
#[derive(Clone, Copy, ValueEnum)]
enum SrgbCurveArg {
    /// The exact curve, as GPUs and Mesa's softpipe convert.
    Exact,
    /// Mesa llvmpipe/lavapipe's approximations, to match images from that driver.
    Lavapipe,
    /// NVIDIA's measured tables, to match images from an NVIDIA GPU.
    Nvidia,
}
