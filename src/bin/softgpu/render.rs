//! `softgpu render`: a RetroArch preset on an input frame (or a directory of frames) to a PNG.

use crate::args::{parse_size, ExecArg, MathArg, MemoryBudgetArgs, ShaderCacheArgs};
use anyhow::{anyhow, Result};
use clap::ValueEnum;
use std::path::PathBuf;

/// The flags of `softgpu render`.
#[derive(clap::Args)]
pub struct RenderArgs {
    /// The RetroArch preset: .slangp or .cgp (each pass's shader a .slang or .cg file).
    #[arg(long, value_name = "P.slangp|P.cgp", allow_hyphen_values = true)]
    preset: PathBuf,
    /// The input frame (PNG or JPEG), or a directory of PNG frames fed in name order.
    #[arg(long, value_name = "IN.png|DIR", allow_hyphen_values = true)]
    input: PathBuf,
    /// Where to write the last frame (RGBA8 PNG; the name must end in .png).
    ///
    /// The file is written whole or not at all: a failing render leaves an existing file as it
    /// was.
    #[arg(long, value_name = "OUT.png", allow_hyphen_values = true)]
    output: PathBuf,
    /// Output (viewport) size [default: the input frame's size]
    #[arg(long, value_name = "WxH", allow_hyphen_values = true)]
    size: Option<String>,
    /// Frames to render; the last one is written.
    ///
    /// Frame i is fed the i-th frame of an --input directory; after the directory's last frame,
    /// that frame is held.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        allow_hyphen_values = true
    )]
    frames: u64,
    /// Shader parameters (`#pragma parameter` names), NAME=VALUE separated by commas;
    /// repeatable.
    ///
    /// They override the shaders' defaults and the preset's values.
    #[arg(long, value_name = "NAME=VALUE,...", allow_hyphen_values = true)]
    param: Vec<String>,
    /// `FrameDirection`: 1 forwards, -1 rewinding.
    #[arg(long, value_name = "-1|1", default_value_t = 1, allow_hyphen_values = true,
          value_parser = parse_direction)]
    frame_direction: i32,
    /// `Rotation` in quarter turns.
    #[arg(long, value_name = "0-3", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=3), allow_hyphen_values = true)]
    rotation: u32,
    /// `OriginalFPS`: the source's frame rate, a positive finite number.
    #[arg(long, value_name = "FPS", default_value_t = 1.0, value_parser = parse_fps, allow_hyphen_values = true)]
    fps: f32,
    /// Shader executor (both give bit-identical images).
    #[arg(long, value_enum, default_value = "jit", allow_hyphen_values = true)]
    exec: ExecArg,
    /// How sRGB render targets convert.
    #[arg(long, value_enum, default_value = "exact", allow_hyphen_values = true)]
    srgb_curve: SrgbCurveArg,
    /// How EX2, LG2, POW, SIN and COS are computed.
    #[arg(long, value_enum, default_value = "exact", allow_hyphen_values = true)]
    math: MathArg,
    /// Run each pass's fragment program as compiled, not specialized (the same pixels; for
    /// checking the specialization).
    ///
    /// By default each pass's fragment program is specialized for the textures the pass binds
    /// and the shader parameters it reads, which is usually faster.
    #[arg(long)]
    no_specialize: bool,
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
    /// Never show the progress bar.
    ///
    /// The bar is drawn on stderr only when stderr is a terminal, more than one frame is
    /// rendered and the render takes over half a second.
    #[arg(long)]
    quiet: bool,
    /// After rendering, print to stderr where the time went.
    ///
    /// Loading, input frames and all passes in milliseconds, then a line per pass: its draw and
    /// preparation milliseconds per frame, its share of the passes' time, its target size and
    /// its fragment instructions.
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

/// Parses `--fps`: a frame rate is positive and finite (NaN, infinities, zero and negative
/// rates would reach the shaders' `OriginalFPS` as nonsense).
fn parse_fps(text: &str) -> std::result::Result<f32, String> {
    match text.parse::<f32>() {
        Ok(fps) if fps.is_finite() && fps > 0.0 => Ok(fps),
        Ok(_) => Err(format!(
            "expected a positive finite frame rate, got `{text}`"
        )),
        Err(e) => Err(format!(
            "expected a positive finite frame rate, got `{text}` ({e})"
        )),
    }
}

/// Parses `--param NAME=VALUE,NAME=VALUE`.
fn parse_params(args: &[String]) -> Result<Vec<(String, f32)>> {
    let mut out = Vec::new();
    for arg in args {
        for item in arg.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| anyhow!("--param `{item}`: expected NAME=VALUE"))?;
            let name = name.trim();
            if name.is_empty() {
                return Err(anyhow!("--param `{item}`: the name is empty"));
            }
            let value: f32 = value
                .trim()
                .parse()
                .map_err(|_| anyhow!("--param `{item}`: `{}` is not a number", value.trim()))?;
            if !value.is_finite() {
                return Err(anyhow!("--param `{item}`: the value must be finite"));
            }
            out.push((name.to_string(), value));
        }
    }
    Ok(out)
}

/// Runs `softgpu render`.
pub fn run(args: RenderArgs) -> Result<()> {
    use softgpu::chain;
    use std::io::IsTerminal;
    // Every flag is checked before the preset is compiled or a frame rendered.
    softgpu::output::check_output(&args.output, "--output", &["png"])?;
    let size = args.size.as_deref().map(parse_size).transpose()?;
    let parameters = parse_params(&args.param)?;
    let memory_budget = args.memory.budget()?;
    let pixel_budget =
        softgpu::budget::resolve_pixels(args.pixel_budget.as_deref()).map_err(|e| anyhow!(e))?;
    let inputs = chain::input_frames(&args.input)?;
    let frames = args.frames;
    let request = chain::RenderRequest {
        preset: args.preset.clone(),
        inputs,
        size,
        frames,
        chain: chain::ChainOptions {
            executor: args.exec.executor(),
            parameters,
            memory_budget: Some(memory_budget),
            pixel_budget: Some(pixel_budget),
            srgb_curve: match args.srgb_curve {
                SrgbCurveArg::Exact => chain::SrgbCurve::Exact,
                SrgbCurveArg::Lavapipe => chain::SrgbCurve::Llvmpipe,
            },
            math: args.math.mode(),
            skip_specialization: args.no_specialize,
            shader_cache: args.cache.dir(),
            ..Default::default()
        },
        frame: chain::FrameOptions {
            frame_direction: args.frame_direction,
            rotation: args.rotation,
            frames_per_second: args.fps,
            ..Default::default()
        },
    };
    // A progress bar only where someone watches and the work is long enough to need one.
    let show = !args.quiet && frames > 1 && std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let (image, timings) = chain::render_timed(&request, |done, total| {
        if show && started.elapsed().as_millis() > 500 {
            let width = 30;
            let filled = (done * width / total) as usize;
            eprint!(
                "\rrendering [{}{}] {done}/{total} frames",
                "#".repeat(filled),
                " ".repeat(width as usize - filled)
            );
            if done == total {
                eprintln!();
            }
        }
    })?;
    image
        .save_png(&args.output)
        .map_err(|e| anyhow!("--output: {e}"))?;
    if args.timings {
        eprint!("{}", timing_report(&timings));
    }
    Ok(())
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
         {:>10} {:>10} {:>6} {:>11} {:>7}  pass\n",
        ms(timings.load),
        ms(timings.inputs),
        "draw ms/f",
        "prep ms/f",
        "share",
        "size",
        "instr",
    );
    for p in &timings.passes {
        let frames = p.frames.max(1) as f64;
        let own = ms(p.draw) + ms(p.prepare);
        out += &format!(
            "{:>10.2} {:>10.2} {:>5.1}% {:>11} {:>7}  {}\n",
            ms(p.draw) / frames,
            ms(p.prepare) / frames,
            if total > 0.0 {
                100.0 * own / total
            } else {
                0.0
            },
            format!("{}x{}", p.size.0, p.size.1),
            p.fragment_instructions,
            p.label,
        );
    }
    out
}

/// `--srgb-curve`: how sRGB render targets convert.
#[derive(Clone, Copy, ValueEnum)]
enum SrgbCurveArg {
    /// The exact curve, as GPUs and Mesa's softpipe convert.
    Exact,
    /// Mesa llvmpipe/lavapipe's approximations, to match images from that driver.
    Lavapipe,
}
