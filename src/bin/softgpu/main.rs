//! The `softgpu` command line.

use anyhow::{anyhow, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use softgpu::draw::{self, DrawJob, Executor};
use softgpu::golden;
use softgpu::ir::{text, validate, Processor};
use softgpu::raster::ClipConvention;
use softgpu::texture::{Filter, Texture, Wrap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// softgpu: a software GPU that runs real GPU shaders on the CPU.
#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Draw triangles with a TGSI vertex and fragment shader into an RGBA8 PNG.
    Draw(DrawArgs),
    /// Parse and validate a TGSI program and print it back in Mesa's text format.
    Compile(CompileArgs),
    /// Render a RetroArch preset (.slangp) on an input frame (or a directory of frames) to a PNG.
    Render(RenderArgs),
    /// Compare two images; exit 0 = match, 1 = different, 2 = error.
    Compare(CompareCmd),
    /// Run a golden-image suite (TOML); exit 0 = all passed, 1 = some failed, 2 = error.
    Test(TestCmd),
}

#[derive(clap::Args)]
struct RenderArgs {
    /// The preset.
    #[arg(long, value_name = "P.slangp")]
    preset: PathBuf,
    /// The input frame (PNG or JPEG), or a directory of PNG frames fed in name order.
    #[arg(long, value_name = "IN.png|DIR")]
    input: PathBuf,
    /// Where to write the last frame (RGBA8 PNG).
    #[arg(long, value_name = "OUT.png")]
    output: PathBuf,
    /// Output (viewport) size; default: the input's size.
    #[arg(long, value_name = "WxH")]
    size: Option<String>,
    /// Frames to render (frame i is fed the i-th input of a directory, the last one held); the
    /// last frame is written.
    #[arg(long, value_name = "N")]
    frames: Option<u64>,
    /// Parameter values, `NAME=VALUE` separated by commas; repeatable.
    #[arg(long, value_name = "NAME=VALUE,...")]
    param: Vec<String>,
    /// `FrameDirection`: 1 forwards, -1 rewinding.
    #[arg(long, value_name = "-1|1", default_value_t = 1, allow_hyphen_values = true,
          value_parser = parse_direction)]
    frame_direction: i32,
    /// `Rotation` in quarter turns.
    #[arg(long, value_name = "0-3", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=3))]
    rotation: u32,
    /// `OriginalFPS`: the source's frame rate, a positive finite number.
    #[arg(long, value_name = "FPS", default_value_t = 1.0, value_parser = parse_fps)]
    fps: f32,
    /// Shader executor: the Cranelift JIT, or the reference interpreter (bit-identical results).
    #[arg(long, value_enum, default_value = "jit")]
    exec: ExecArg,
    /// sRGB render targets convert with the exact curve, or with Mesa lavapipe's approximations
    /// (to match images from that driver).
    #[arg(long, value_enum, default_value = "exact")]
    srgb_curve: SrgbCurveArg,
    /// EX2/LG2/POW/SIN/COS: glibc-exact (softpipe's bits) or Mesa llvmpipe/lavapipe's polynomial
    /// approximations, bit for bit (to match images from that driver).
    #[arg(long, value_enum, default_value = "exact")]
    math: MathArg,
    /// Run each pass's fragment program as compiled, without specializing it for the textures
    /// the pass binds and the shader parameters it reads (the same pixels, usually slower; for
    /// checking the specialization).
    #[arg(long)]
    no_specialize: bool,
    #[command(flatten)]
    cache: ShaderCacheArgs,
    /// Never show the progress bar.
    #[arg(long)]
    quiet: bool,
    /// After rendering, print to stderr where the time went: loading, then each pass's target
    /// size, fragment instructions and milliseconds per frame.
    #[arg(long)]
    timings: bool,
}

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

fn run_render(args: RenderArgs) -> Result<()> {
    use softgpu::chain;
    use std::io::IsTerminal;
    let inputs = chain::input_frames(&args.input)?;
    let frames = args.frames.unwrap_or(1);
    let request = chain::RenderRequest {
        preset: args.preset.clone(),
        inputs,
        size: args.size.as_deref().map(draw::parse_size).transpose()?,
        frames,
        chain: chain::ChainOptions {
            executor: match args.exec {
                ExecArg::Jit => Executor::Jit,
                ExecArg::Interp => Executor::Interp,
            },
            parameters: parse_params(&args.param)?,
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
        .map_err(|e| anyhow!("{}: {e}", args.output.display()))?;
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

#[derive(clap::Args)]
struct CompareCmd {
    /// The reference image (the diff is drawn over it).
    first: PathBuf,
    /// The image to check.
    second: PathBuf,
    /// Largest per-channel difference (in 1/255 steps) that counts as equal.
    #[arg(long, value_name = "N", default_value_t = 0)]
    tolerance: u8,
    /// Share of pixels allowed over the tolerance, in percent (`0.5` or `0.5%`).
    #[arg(long, value_name = "P%")]
    max_pixels: Option<String>,
    /// Write a heat map of the differences over a dimmed copy of the first image.
    #[arg(long, value_name = "DIFF.png")]
    diff: Option<PathBuf>,
}

#[derive(clap::Args)]
struct TestCmd {
    /// The suite file (TOML, see the README).
    suite: PathBuf,
    /// Write the expected images from the rendered ones instead of comparing.
    #[arg(long)]
    bless: bool,
    /// Run only cases whose name contains PATTERN (or matches it as a glob with * and ?);
    /// repeatable.
    #[arg(long, value_name = "PATTERN")]
    filter: Vec<String>,
    /// Run only shard K of N: the cases whose 0-based index in the suite is K-1 modulo N.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Directory of the HTML report (index.html).
    #[arg(long, value_name = "DIR", default_value = softgpu::golden::cli::DEFAULT_REPORT_DIR)]
    report: PathBuf,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    #[command(flatten)]
    cache: ShaderCacheArgs,
}

/// Where compiled shaders are cached between runs.
#[derive(clap::Args)]
struct ShaderCacheArgs {
    /// Directory of the on-disk cache of compiled shaders, which lets the next run of the same
    /// shaders skip glslang and the lowering [default: $SOFTGPU_CACHE_DIR, else
    /// $XDG_CACHE_HOME/softgpu, else ~/.cache/softgpu]
    #[arg(long, value_name = "DIR", conflicts_with = "no_shader_cache")]
    shader_cache: Option<PathBuf>,
    /// Compile every shader, neither reading nor writing the shader cache.
    #[arg(long)]
    no_shader_cache: bool,
}

impl ShaderCacheArgs {
    /// The cache directory to use, if any.
    fn dir(&self) -> Option<PathBuf> {
        if self.no_shader_cache {
            return None;
        }
        self.shader_cache
            .clone()
            .or_else(softgpu::chain::default_shader_cache_dir)
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum FilterArg {
    Linear,
    Nearest,
}

#[derive(Clone, Copy, ValueEnum)]
enum WrapArg {
    Repeat,
    Clamp,
    Mirror,
    Border,
}

#[derive(Clone, Copy, ValueEnum)]
enum SrgbCurveArg {
    Exact,
    Lavapipe,
}

#[derive(Clone, Copy, ValueEnum)]
enum MathArg {
    Exact,
    Llvmpipe,
}

impl MathArg {
    fn mode(self) -> softgpu::ir::MathMode {
        match self {
            MathArg::Exact => softgpu::ir::MathMode::Exact,
            MathArg::Llvmpipe => softgpu::ir::MathMode::Llvmpipe,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum ExecArg {
    Jit,
    Interp,
}

#[derive(Clone, Copy, ValueEnum)]
enum ConventionArg {
    Gl,
    Vulkan,
    Webgpu,
}

#[derive(clap::Args)]
struct DrawArgs {
    /// Vertex shader (Mesa TGSI text, .wgsl or .slang).
    #[arg(long, value_name = "VS")]
    vs: PathBuf,
    /// Fragment shader (Mesa TGSI text, .wgsl or .slang).
    #[arg(long, value_name = "FS")]
    fs: PathBuf,
    /// Vertex file: one vertex per line, floats taken four at a time into IN[0], IN[1], ….
    #[arg(long, value_name = "V.txt")]
    vertices: PathBuf,
    /// Constant file: one `x y z w` line per CONST[0][i] (of both stages).
    #[arg(long, value_name = "C.txt")]
    consts: Option<PathBuf>,
    /// Set a uniform-buffer or push-constant member of a WGSL/slang shader by name
    /// (`Tint`, `params.Tint`, `Lights[1].pos`); values are comma-separated, matrices column by
    /// column; repeatable, applied after --consts and --push-consts.
    #[arg(long, value_name = "NAME=V1,V2,...")]
    uniform: Vec<String>,
    /// Push-constant file: one `x y z w` line per 16 bytes of the push-constant block.
    #[arg(long, value_name = "P.txt")]
    push_consts: Option<PathBuf>,
    /// Bind an image to SAMP[N]/SVIEW[N]; repeatable.
    #[arg(long, value_name = "N=IMG.png")]
    texture: Vec<String>,
    /// Texture filter for minification and magnification.
    #[arg(long, value_enum, default_value = "linear")]
    filter: FilterArg,
    /// Texture wrap mode on every axis.
    #[arg(long, value_enum, default_value = "repeat")]
    wrap: WrapArg,
    /// Output size.
    #[arg(long, value_name = "WxH", default_value = "64x64")]
    size: String,
    /// Clip-space convention: gl (y up, z in -w..w), vulkan (y down, z in 0..w) or webgpu (y up,
    /// z in 0..w, framebuffer rows from the top). Default: the vertex shader's language's own —
    /// webgpu for .wgsl, vulkan for .slang, gl for TGSI.
    #[arg(long, value_enum)]
    convention: Option<ConventionArg>,
    /// Output PNG (RGBA8 UNORM; row 0 is the top of the image).
    #[arg(long, value_name = "OUT.png")]
    out: PathBuf,
    /// Shader executor: the Cranelift JIT, or the reference interpreter (bit-identical results).
    #[arg(long, value_enum, default_value = "jit")]
    exec: ExecArg,
    /// EX2/LG2/POW/SIN/COS: glibc-exact (softpipe's bits) or Mesa llvmpipe/lavapipe's polynomial
    /// approximations, bit for bit (to match images from that driver).
    #[arg(long, value_enum, default_value = "exact")]
    math: MathArg,
    #[command(flatten)]
    cache: ShaderCacheArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum LangArg {
    Tgsi,
    Wgsl,
    SlangGlsl,
    Cg,
}

#[derive(Clone, Copy, ValueEnum)]
enum StageArg {
    Vertex,
    Fragment,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EmitArg {
    Tgsi,
    Naga,
    Reflection,
    Wgsl,
    Glsl,
    Spirv,
}

#[derive(clap::Args)]
struct CompileArgs {
    /// The shader (TGSI text, WGSL, a RetroArch `.slang` file or a Cg `.cg` file).
    file: PathBuf,
    /// Source language; by default `.wgsl` files are WGSL, `.slang` files RetroArch slang, `.cg`
    /// files Cg and everything else TGSI text.
    #[arg(long, value_enum)]
    lang: Option<LangArg>,
    /// The stage to compile from a WGSL or slang shader (TGSI programs name their own).
    #[arg(long, value_enum, default_value = "fragment")]
    stage: StageArg,
    /// What to print: the TGSI program (Mesa's text format), the naga module, the reflection as
    /// JSON (slang, Cg), or the stage translated to WGSL, GLSL 4.50 or SPIR-V by naga's backends
    /// (WGSL, slang, Cg sources).
    #[arg(long, value_enum, default_value = "tgsi")]
    emit: EmitArg,
    /// Write to this file instead of stdout (SPIR-V is written as binary here, and printed as a
    /// disassembly on stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Translates one entry point of a validated module with naga's backends.
fn translate(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_index: usize,
    emit: EmitArg,
) -> Result<(String, Option<Vec<u8>>)> {
    let ep = module
        .entry_points
        .get(entry_index)
        .ok_or_else(|| anyhow!("no entry point number {entry_index}"))?;
    match emit {
        EmitArg::Wgsl => {
            let text = naga::back::wgsl::write_string(
                module,
                info,
                naga::back::wgsl::WriterFlags::EXPLICIT_TYPES,
            )
            .map_err(|e| anyhow!("WGSL backend: {e}"))?;
            Ok((text, None))
        }
        EmitArg::Glsl => {
            let options = naga::back::glsl::Options {
                version: naga::back::glsl::Version::Desktop(450),
                ..Default::default()
            };
            let pipeline = naga::back::glsl::PipelineOptions {
                shader_stage: ep.stage,
                entry_point: ep.name.clone(),
                multiview: None,
            };
            let mut text = String::new();
            let mut writer = naga::back::glsl::Writer::new(
                &mut text,
                module,
                info,
                &options,
                &pipeline,
                naga::proc::BoundsCheckPolicies::default(),
            )
            .map_err(|e| anyhow!("GLSL backend: {e}"))?;
            writer.write().map_err(|e| anyhow!("GLSL backend: {e}"))?;
            Ok((text, None))
        }
        EmitArg::Spirv => {
            let pipeline = naga::back::spv::PipelineOptions {
                shader_stage: ep.stage,
                entry_point: ep.name.clone(),
            };
            let words = naga::back::spv::write_vec(
                module,
                info,
                &naga::back::spv::Options::default(),
                Some(&pipeline),
            )
            .map_err(|e| anyhow!("SPIR-V backend: {e}"))?;
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let mut loader = rspirv::dr::Loader::new();
            rspirv::binary::parse_words(&words, &mut loader)
                .map_err(|e| anyhow!("SPIR-V disassembly: {e}"))?;
            use rspirv::binary::Disassemble;
            Ok((loader.module().disassemble(), Some(bytes)))
        }
        _ => Err(anyhow!("not a translation target")),
    }
}

/// Writes `text` to stdout; a reader that stopped early (`| head`) is not an error.
fn print_stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(anyhow!("stdout: {e}")),
        _ => Ok(()),
    }
}

/// Prints (or writes to `--output`) a translation; SPIR-V goes to the file as binary.
fn write_translation(out: (String, Option<Vec<u8>>), output: &Option<PathBuf>) -> Result<()> {
    match output {
        Some(path) => {
            let bytes = out.1.unwrap_or_else(|| out.0.into_bytes());
            std::fs::write(path, bytes).with_context(|| format!("{}: cannot write", path.display()))
        }
        None => print_stdout(&out.0),
    }
}

fn run_compile_cg(args: &CompileArgs, stage: Processor) -> Result<()> {
    let shader = softgpu::frontend::cg::compile_cg(&args.file)?;
    let st = if stage == Processor::Vertex {
        &shader.vertex
    } else {
        &shader.fragment
    };
    match args.emit {
        EmitArg::Tgsi => {
            let (vs, fs) = shader.lower()?;
            let program = if stage == Processor::Vertex { vs } else { fs }.program;
            write_translation((text::print_program(&program), None), &args.output)
        }
        EmitArg::Naga => write_translation((format!("{:#?}\n", st.module), None), &args.output),
        EmitArg::Reflection => {
            let json = serde_json::to_string_pretty(&st.reflection)?;
            write_translation((json + "\n", None), &args.output)
        }
        emit => write_translation(
            translate(&st.module, &st.info, st.entry_index, emit)?,
            &args.output,
        ),
    }
}

fn read(path: &PathBuf, what: &str) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("{}: cannot read {what}", path.display()))
}

fn run_draw(args: DrawArgs) -> Result<()> {
    let size = draw::parse_size(&args.size)?;
    let vertices = draw::parse_vertices(&args.vertices, &read(&args.vertices, "vertex file")?)?;
    let constants = match &args.consts {
        Some(path) => draw::parse_constants(path, &read(path, "constant file")?)?,
        None => Vec::new(),
    };
    let mut textures = Vec::new();
    for binding in &args.texture {
        let (unit, path) = draw::parse_texture_binding(binding)?;
        let texture = Texture::load(&path).map_err(|e| anyhow!("--texture {unit}: {e}"))?;
        textures.retain(|(u, _)| *u != unit);
        textures.push((unit, Arc::new(texture)));
    }
    let filter = match args.filter {
        FilterArg::Linear => Filter::Linear,
        FilterArg::Nearest => Filter::Nearest,
    };
    let wrap = match args.wrap {
        WrapArg::Repeat => Wrap::Repeat,
        WrapArg::Clamp => Wrap::ClampToEdge,
        WrapArg::Mirror => Wrap::MirroredRepeat,
        WrapArg::Border => Wrap::ClampToBorder,
    };
    let push = match &args.push_consts {
        Some(path) => Some(draw::parse_constants(
            path,
            &read(path, "push-constant file")?,
        )?),
        None => None,
    };
    let cache = args.cache.dir();
    softgpu::jit::codegen::disk::set_kernel_cache(cache.clone(), softgpu::chain::BUILD_ID);
    let (vs, _) = draw::compile_stage_cached(&args.vs, Processor::Vertex, None, cache.as_deref())?;
    let (fs, _) =
        draw::compile_stage_cached(&args.fs, Processor::Fragment, None, cache.as_deref())?;
    let stage_constants = draw::stage_constants(
        &vs.blocks,
        &fs.blocks,
        &constants,
        args.push_consts.as_deref().zip(push.as_deref()),
        &args.uniform,
    )?;
    let job = DrawJob {
        vertex_program: vs.program,
        fragment_program: fs.program,
        math: args.math.mode(),
        vertices,
        constants,
        textures,
        sampler: draw::sampler_state(filter, wrap),
        size,
        convention: match args.convention {
            Some(ConventionArg::Gl) => ClipConvention::OpenGl,
            Some(ConventionArg::Vulkan) => ClipConvention::Vulkan,
            Some(ConventionArg::Webgpu) => ClipConvention::WebGpu,
            None => match draw::Language::from_path(&args.vs) {
                draw::Language::Wgsl => ClipConvention::WebGpu,
                draw::Language::SlangGlsl => ClipConvention::Vulkan,
                draw::Language::Tgsi => ClipConvention::OpenGl,
            },
        },
    };
    let executor = match args.exec {
        ExecArg::Jit => Executor::Jit,
        ExecArg::Interp => Executor::Interp,
    };
    let image = draw::run_with_constants(&job, &stage_constants, executor)?;
    image
        .save_png(&args.out)
        .map_err(|e| anyhow!("{}: {e}", args.out.display()))?;
    Ok(())
}

fn run_compile(args: CompileArgs) -> Result<()> {
    let language = match args.lang {
        Some(LangArg::Tgsi) => draw::Language::Tgsi,
        Some(LangArg::Wgsl) => draw::Language::Wgsl,
        Some(LangArg::SlangGlsl) => draw::Language::SlangGlsl,
        Some(LangArg::Cg) | None => draw::Language::from_path(&args.file),
    };
    let stage = match args.stage {
        StageArg::Vertex => Processor::Vertex,
        StageArg::Fragment => Processor::Fragment,
    };
    let is_cg = matches!(args.lang, Some(LangArg::Cg))
        || (args.lang.is_none()
            && args
                .file
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("cg")));
    if is_cg {
        return run_compile_cg(&args, stage);
    }
    if matches!(args.emit, EmitArg::Wgsl | EmitArg::Glsl | EmitArg::Spirv) {
        let out = match language {
            draw::Language::SlangGlsl => {
                let shader = softgpu::frontend::vulkan_glsl::compile_slang(&args.file)?;
                let st = if stage == Processor::Vertex {
                    &shader.vertex
                } else {
                    &shader.fragment
                };
                translate(&st.module, &st.info, st.entry_index, args.emit)?
            }
            draw::Language::Wgsl => {
                let source = read(&args.file, "shader")?;
                let parsed =
                    softgpu::frontend::wgsl::parse(&source, &args.file.display().to_string())?;
                let want = if stage == Processor::Vertex {
                    softgpu::frontend::wgsl::Stage::Vertex
                } else {
                    softgpu::frontend::wgsl::Stage::Fragment
                };
                let index = softgpu::frontend::wgsl::select_entry_point(
                    &parsed.module,
                    want,
                    None,
                    &args.file.display().to_string(),
                )?;
                translate(&parsed.module, &parsed.info, index, args.emit)?
            }
            draw::Language::Tgsi => {
                return Err(anyhow!(
                    "--emit wgsl/glsl/spirv translates WGSL, slang and Cg shaders; TGSI programs have no naga module"
                ))
            }
        };
        return write_translation(out, &args.output);
    }
    if language == draw::Language::SlangGlsl && args.emit != EmitArg::Tgsi {
        let shader = softgpu::frontend::vulkan_glsl::compile_slang(&args.file)?;
        if args.emit == EmitArg::Reflection {
            print_stdout(&format!("{}\n", shader.reflection().to_json()))?;
        } else if stage == Processor::Vertex {
            print_stdout(&format!("{:#?}\n", shader.vertex.module))?;
        } else {
            print_stdout(&format!("{:#?}\n", shader.fragment.module))?;
        }
        return Ok(());
    }
    if args.emit == EmitArg::Reflection {
        return Err(anyhow!(
            "--emit reflection needs a .slang shader (--lang slang-glsl)"
        ));
    }
    if language == draw::Language::SlangGlsl {
        let program = draw::compile_shader(&args.file, stage, Some(language))?;
        print_stdout(&text::print_program(&program))?;
        return Ok(());
    }
    if language == draw::Language::Wgsl {
        if args.emit == EmitArg::Naga {
            let source = read(&args.file, "shader")?;
            let parsed = softgpu::frontend::wgsl::parse(&source, &args.file.display().to_string())?;
            print_stdout(&format!("{:#?}\n", parsed.module))?;
            return Ok(());
        }
        let program = draw::compile_shader(&args.file, stage, Some(language))?;
        print_stdout(&text::print_program(&program))?;
        return Ok(());
    }
    if args.emit == EmitArg::Naga {
        return Err(anyhow!(
            "--emit naga needs a WGSL shader; TGSI programs have no naga module"
        ));
    }
    let source = read(&args.file, "shader")?;
    let program =
        text::parse_program(&source).map_err(|e| anyhow!("{}: {e}", args.file.display()))?;
    if let Err(errors) = validate::validate(&program) {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(anyhow!(
            "{}: invalid program:\n  {}",
            args.file.display(),
            lines.join("\n  ")
        ));
    }
    print_stdout(&text::print_program(&program))?;
    Ok(())
}

/// Stack size of the rendering threads (see `main`).
const WORKER_STACK_BYTES: usize = 256 << 20;

fn main() -> ExitCode {
    // A code-generator panic is caught by `draw::build_shader` (the interpreter runs the program
    // instead); keep it off stderr. Every other panic is reported as usual.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !draw::jit_compiling() {
            default_hook(info);
        }
    }));
    // The kernels of very large shaders (Mega Bezel passes: 30,000+ instructions) keep
    // megabytes of spill slots in their stack frame; worker stacks are reserved address space,
    // touched only as deep as a kernel goes.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(WORKER_STACK_BYTES)
        .build_global();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Draw(args) => run_draw(args),
        Command::Compile(args) => run_compile(args),
        Command::Render(args) => run_render(args),
        Command::Compare(args) => {
            return ExitCode::from(golden::cli::compare_main(&golden::cli::CompareArgs {
                first: args.first,
                second: args.second,
                tolerance: args.tolerance,
                max_pixels: args.max_pixels,
                diff: args.diff,
            }))
        }
        Command::Test(args) => {
            return ExitCode::from(golden::cli::test_main(&golden::cli::TestArgs {
                suite: args.suite,
                bless: args.bless,
                filters: args.filter,
                shard: args.shard,
                report: Some(args.report),
                jobs: args.jobs.map(usize::from),
                shader_cache: args.cache.dir(),
            }))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("softgpu: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
