//! `softgpu draw`: one draw call from shader files and plain-text vertex and constant files.

use crate::args::{parse_size, ExecArg, MathArg, ShaderCacheArgs, SlangArgs};
use crate::read;
use anyhow::{anyhow, Result};
use clap::ValueEnum;
use softgpu::draw::{self, DrawJob};
use softgpu::ir::Processor;
use softgpu::raster::ClipConvention;
use softgpu::shader::Language;
use softgpu::texture::{Filter, Texture, Wrap};
use std::path::PathBuf;
use std::sync::Arc;

/// `--filter`: the texture filter.
#[derive(Clone, Copy, ValueEnum)]
enum FilterArg {
    /// Bilinear.
    Linear,
    /// The nearest texel.
    Nearest,
}

/// `--wrap`: the texture wrap mode.
#[derive(Clone, Copy, ValueEnum)]
enum WrapArg {
    /// Repeat the image.
    Repeat,
    /// Clamp to the edge texels.
    Clamp,
    /// Repeat the image, mirrored every other time.
    Mirror,
    /// Clamp to the border colour.
    Border,
}

/// `--convention`: the clip-space convention.
#[derive(Clone, Copy, ValueEnum)]
enum ConventionArg {
    /// OpenGL: y up, z in -w..w, framebuffer rows from the bottom.
    Gl,
    /// Vulkan: y down, z in 0..w, framebuffer rows from the top.
    Vulkan,
    /// WebGPU: y up, z in 0..w, framebuffer rows from the top.
    Webgpu,
}

/// The flags of `softgpu draw`.
#[derive(clap::Args)]
pub struct DrawArgs {
    /// Vertex shader: Mesa TGSI text, or the vertex stage of a .wgsl or .slang file (RetroArch
    /// or Slang language).
    #[arg(long, value_name = "VS")]
    vs: PathBuf,
    /// Fragment shader: Mesa TGSI text, or the fragment stage of a .wgsl or .slang file
    /// (RetroArch or Slang language).
    #[arg(long, value_name = "FS")]
    fs: PathBuf,
    /// The vertex entry point of a Slang-language --vs [default: its only
    /// `[shader("vertex")]` function]
    #[arg(long, value_name = "NAME")]
    vs_entry: Option<String>,
    /// The fragment entry point of a Slang-language --fs [default: its only
    /// `[shader("fragment")]` function]
    #[arg(long, value_name = "NAME")]
    fs_entry: Option<String>,
    /// Vertex file: one vertex per line, every three lines a triangle.
    ///
    /// Each line's values (floats, or raw bits as 0x hex) are taken four at a time into IN[0],
    /// IN[1], …; a last group shorter than four is completed from (0, 0, 0, 1). `#` starts a
    /// comment.
    #[arg(long, value_name = "V.txt")]
    vertices: PathBuf,
    /// Constant file: one `x y z w` line per CONST[0][i], read by both stages.
    ///
    /// Values are floats, or raw bits as 0x hex. CONST[0] of a WGSL or .slang shader is its
    /// uniform buffer at group (set) 0, binding 0 (a Slang shader's `globalParams` when it has
    /// global uniforms).
    #[arg(long, value_name = "C.txt")]
    consts: Option<PathBuf>,
    /// Set a uniform-buffer or push-constant member of a WGSL or .slang shader by name;
    /// repeatable.
    ///
    /// NAME is a member (`Tint`), optionally qualified by its block's instance or type name
    /// (`params.Tint`; Slang's global uniforms are in `globalParams`, entry-point uniforms in
    /// the push-constant block), and reaches into structs, arrays and matrix columns
    /// (`Lights[1].pos`).
    /// Values are comma-separated, matrices column by column. Applied after --consts and
    /// --push-consts.
    #[arg(long, value_name = "NAME=V1,V2,...")]
    uniform: Vec<String>,
    /// Push-constant file: one `x y z w` line per 16 bytes of the push-constant block.
    #[arg(long, value_name = "P.txt")]
    push_consts: Option<PathBuf>,
    /// Bind an image (PNG or JPEG) to sampler unit N (0-31); repeatable.
    ///
    /// Unit N is SAMP[N]/SVIEW[N] of a TGSI program and the texture at binding N of a WGSL or
    /// .slang shader. Binding a unit twice keeps the last image.
    #[arg(long, value_name = "N=IMG.png")]
    texture: Vec<String>,
    /// Texture filter for minification and magnification (level 0 only, no mipmapping).
    #[arg(long, value_enum, default_value = "linear")]
    filter: FilterArg,
    /// Texture wrap mode on every axis.
    #[arg(long, value_enum, default_value = "repeat")]
    wrap: WrapArg,
    /// Output size.
    #[arg(long, value_name = "WxH", default_value = "64x64")]
    size: String,
    /// Clip-space convention [default: the vertex shader's language's own: webgpu for .wgsl,
    /// vulkan for .slang, gl for TGSI]
    #[arg(long, value_enum)]
    convention: Option<ConventionArg>,
    /// Output PNG (RGBA8 UNORM; row 0 is the top of the image).
    #[arg(long, value_name = "OUT.png")]
    out: PathBuf,
    /// Shader executor (both give bit-identical images).
    #[arg(long, value_enum, default_value = "jit")]
    exec: ExecArg,
    /// How EX2, LG2, POW, SIN and COS are computed.
    #[arg(long, value_enum, default_value = "exact")]
    math: MathArg,
    #[command(flatten)]
    cache: ShaderCacheArgs,
    #[command(flatten)]
    slang: SlangArgs,
}

/// Runs `softgpu draw`.
pub fn run(args: DrawArgs) -> Result<()> {
    let size = parse_size(&args.size)?;
    let vertices = draw::parse_vertices(&args.vertices, &read(&args.vertices, "vertex file")?)?;
    let constants = match &args.consts {
        Some(path) => draw::parse_constants(path, &read(path, "constant file")?)?,
        None => Vec::new(),
    };
    let mut textures = Vec::new();
    for binding in &args.texture {
        let (unit, path) = parse_texture_binding(binding)?;
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
    softgpu::jit::codegen::disk::set_kernel_cache(cache.clone(), softgpu::shader::BUILD_ID);
    let (vs, _) = draw::compile_stage_cached_with(
        &args.vs,
        Processor::Vertex,
        None,
        &args.slang.options(args.vs_entry.as_deref()),
        cache.as_deref(),
    )?;
    let (fs, _) = draw::compile_stage_cached_with(
        &args.fs,
        Processor::Fragment,
        None,
        &args.slang.options(args.fs_entry.as_deref()),
        cache.as_deref(),
    )?;
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
            None => match Language::from_path(&args.vs) {
                Language::Wgsl => ClipConvention::WebGpu,
                Language::VulkanGlsl | Language::Slang => ClipConvention::Vulkan,
                Language::Tgsi => ClipConvention::OpenGl,
            },
        },
    };
    let image = draw::run_with_constants(&job, &stage_constants, args.exec.executor())?;
    image
        .save_png(&args.out)
        .map_err(|e| anyhow!("{}: {e}", args.out.display()))?;
    Ok(())
}

/// Parses a `--texture N=PATH` binding.
fn parse_texture_binding(text: &str) -> Result<(u32, PathBuf)> {
    let (unit, path) = text
        .split_once('=')
        .ok_or_else(|| anyhow!("--texture: expected N=IMAGE.png, found `{text}`"))?;
    let unit: u32 = unit
        .trim()
        .parse()
        .ok()
        .filter(|u| *u < 32)
        .ok_or_else(|| {
            anyhow!("--texture: expected a unit number 0..31 before `=`, found `{unit}`")
        })?;
    Ok((unit, PathBuf::from(path)))
}
