//! `softgpu draw`: one draw call from shader files and plain-text vertex and constant files.

use crate::args::{
    parse_size, DriverArg, ExecArg, MathArg, MemoryBudgetArgs, PngArgs, ShaderCacheArgs, SlangArgs,
};
use crate::read;
use anyhow::{anyhow, Result};
use clap::ValueEnum;
use softgpu::draw::{self, DrawJob};
use softgpu::input::MAX_DATA_FILE_BYTES;
use softgpu::ir::Processor;
use softgpu::raster::ClipConvention;
use softgpu::shader::Language;
use softgpu::texture::{CompareFunc, Filter, SamplerState, Texture, Wrap};
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
    #[arg(long, value_name = "VS", allow_hyphen_values = true)]
    vs: PathBuf,
    /// Fragment shader: Mesa TGSI text, or the fragment stage of a .wgsl or .slang file
    /// (RetroArch or Slang language).
    #[arg(long, value_name = "FS", allow_hyphen_values = true)]
    fs: PathBuf,
    /// The vertex entry point of a Slang-language --vs [default: its only
    /// `[shader("vertex")]` function]
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    vs_entry: Option<String>,
    /// The fragment entry point of a Slang-language --fs [default: its only
    /// `[shader("fragment")]` function]
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    fs_entry: Option<String>,
    /// Vertex file: one vertex per line, every three lines a triangle.
    ///
    /// Each line's values (floats, or raw bits as 0x hex) are taken four at a time into IN[0],
    /// IN[1], …; a last group shorter than four is completed from (0, 0, 0, 1). `#` starts a
    /// comment.
    #[arg(long, value_name = "V.txt", allow_hyphen_values = true)]
    vertices: PathBuf,
    /// Constant file: one `x y z w` line per CONST[0][i], read by both stages.
    ///
    /// Values are floats, or raw bits as 0x hex. CONST[0] of a WGSL or .slang shader is its
    /// uniform buffer at group (set) 0, binding 0 (a Slang shader's `globalParams` when it has
    /// global uniforms).
    #[arg(long, value_name = "C.txt", allow_hyphen_values = true)]
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
    #[arg(long, value_name = "NAME=V1,V2,...", allow_hyphen_values = true)]
    uniform: Vec<String>,
    /// Bind a data file to the storage buffer NAME of a shader; repeatable.
    ///
    /// NAME is a read-only storage buffer (`StructuredBuffer`, `ByteAddressBuffer`) or a
    /// read-write one (`RWStructuredBuffer`, `RWByteAddressBuffer`, a WGSL `read_write` or GLSL
    /// `buffer` block) of a .slang, WGSL or Vulkan GLSL shader, or `BUFFER[n]` of a TGSI
    /// program. The file has one `x y z w` line per 16 bytes (floats, or raw bits as 0x hex),
    /// as --consts, and sets the buffer's size: reads past its end read zero, writes there are
    /// dropped. Both stages share a read-write buffer of one name.
    #[arg(long, value_name = "NAME=DATA.txt", allow_hyphen_values = true)]
    storage_buffer: Vec<String>,
    /// Bind a zero-filled image of W x H texels (and L layers) to the storage image NAME
    /// (`RWTexture2D`, `image2D`, `texture_storage_2d`, or `IMAGE[n]` of a TGSI program);
    /// `:DATA.txt` gives its first texels, one `x y z w` line each, row after row; repeatable.
    #[arg(
        long,
        value_name = "NAME=WxH[xL][:DATA.txt]",
        allow_hyphen_values = true
    )]
    storage_image: Vec<String>,
    /// Write what the draw left in the read-write storage buffer or storage image NAME (bound
    /// by --storage-buffer or --storage-image) to FILE.txt: one `x y z w` line per 16 bytes or
    /// per texel, as raw bits in 0x hex, which --storage-buffer reads back; repeatable.
    #[arg(long, value_name = "NAME=FILE.txt", allow_hyphen_values = true)]
    storage_out: Vec<String>,
    /// Push-constant file: one `x y z w` line per 16 bytes of the push-constant block.
    #[arg(long, value_name = "P.txt", allow_hyphen_values = true)]
    push_consts: Option<PathBuf>,
    /// Bind an image (PNG or JPEG) to sampler unit N (0-31); repeatable.
    ///
    /// Unit N is SAMP[N]/SVIEW[N] of a TGSI program and the texture at binding N of a WGSL or
    /// .slang shader. Binding a unit twice keeps the last image.
    #[arg(long, value_name = "N=IMG.png", allow_hyphen_values = true)]
    texture: Vec<String>,
    /// Texture filter for minification and magnification (level 0 only, no mipmapping).
    #[arg(long, value_enum, default_value = "linear", allow_hyphen_values = true)]
    filter: FilterArg,
    /// Texture wrap mode on every axis.
    #[arg(long, value_enum, default_value = "repeat", allow_hyphen_values = true)]
    wrap: WrapArg,
    /// The comparison function of depth-compare lookups (SampleCmp, sampler2DShadow, TGSI
    /// SHADOW targets) on every unit: never, less, equal, lequal, greater, notequal, gequal or
    /// always [default: none: such lookups return the texel uncompared]
    #[arg(long, value_name = "FUNC", value_parser = |s: &str| s.parse::<CompareFunc>(), allow_hyphen_values = true)]
    compare: Option<CompareFunc>,
    /// Output size.
    #[arg(
        long,
        value_name = "WxH",
        default_value = "64x64",
        allow_hyphen_values = true
    )]
    size: String,
    /// Clip-space convention [default: the vertex shader's language's own: webgpu for .wgsl,
    /// vulkan for .slang, gl for TGSI]
    #[arg(long, value_enum, allow_hyphen_values = true)]
    convention: Option<ConventionArg>,
    /// Output PNG (RGBA8 UNORM; row 0 is the top of the image; the name must end in .png).
    ///
    /// The file is written whole or not at all: a failing draw leaves an existing file as it
    /// was.
    #[arg(long, value_name = "OUT.png", allow_hyphen_values = true)]
    out: PathBuf,
    #[command(flatten)]
    png: PngArgs,
    /// Shader executor (both give bit-identical images).
    #[arg(long, value_enum, default_value = "jit", allow_hyphen_values = true)]
    exec: ExecArg,
    /// Whose rules the shaders run with: filtering precision, derivatives, output conversion and
    /// math (docs/fidelity.md, "Driver profiles")
    #[arg(
        long,
        value_enum,
        default_value = "softpipe",
        allow_hyphen_values = true
    )]
    driver: DriverArg,
    /// How EX2, LG2, POW, SIN and COS are computed [default: the --driver's: exact, or
    /// llvmpipe for llvmpipe]
    #[arg(long, value_enum, allow_hyphen_values = true)]
    math: Option<MathArg>,
    #[command(flatten)]
    cache: ShaderCacheArgs,
    #[command(flatten)]
    memory: MemoryBudgetArgs,
    #[command(flatten)]
    slang: SlangArgs,
}

/// Runs `softgpu draw`.
pub fn run(args: DrawArgs) -> Result<()> {
    // Every flag is checked before a file is read or a shader compiled.
    softgpu::output::check_output(&args.out, "--out", &["png"])?;
    let storage_out = args
        .storage_out
        .iter()
        .map(|setting| {
            let (name, file) = setting.split_once('=').ok_or_else(|| {
                anyhow!("--storage-out: expected NAME=FILE.txt, found `{setting}`")
            })?;
            let path = PathBuf::from(file);
            softgpu::output::check_output(&path, "--storage-out", &["txt"])?;
            Ok((name.trim().to_string(), path))
        })
        .collect::<Result<Vec<_>>>()?;
    let size = parse_size(&args.size)?;
    let memory_budget = args.memory.budget()?;
    let texture_bindings = args
        .texture
        .iter()
        .map(|binding| parse_texture_binding(binding))
        .collect::<Result<Vec<_>>>()?;
    let vertices = draw::parse_vertices(
        &args.vertices,
        &read(&args.vertices, "vertex file", MAX_DATA_FILE_BYTES)?,
    )?;
    let constants = match &args.consts {
        Some(path) => {
            draw::parse_constants(path, &read(path, "constant file", MAX_DATA_FILE_BYTES)?)?
        }
        None => Vec::new(),
    };
    check_texture_memory(size, &texture_bindings, args.exec.executor(), memory_budget)?;
    let mut textures = Vec::new();
    for (unit, path) in texture_bindings {
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
            &read(path, "push-constant file", MAX_DATA_FILE_BYTES)?,
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
    let mut stage_constants = stage_constants;
    let mut storage = Vec::new();
    for setting in &args.storage_buffer {
        let (name, file) = setting.split_once('=').ok_or_else(|| {
            anyhow!("--storage-buffer: expected NAME=DATA.txt, found `{setting}`")
        })?;
        let path = PathBuf::from(file);
        let rows = draw::parse_constants(
            &path,
            &read(&path, "storage-buffer file", MAX_DATA_FILE_BYTES)?,
        )?;
        storage.push((name.trim().to_string(), rows));
    }
    let mut images = Vec::new();
    for setting in &args.storage_image {
        images.push(parse_storage_image(setting)?);
    }
    let (memory, read_only) = draw::DrawStorage::bind(&vs, &fs, &storage, &images)?;
    if !read_only.is_empty() {
        draw::bind_storage_buffers(&mut stage_constants, &vs.blocks, &fs.blocks, &read_only)
            .map_err(|e| {
                anyhow!(
                    "{e}; read-write: {}",
                    draw::storage::writable_buffer_names(&vs, &fs)
                )
            })?;
    }
    for (name, _) in &storage_out {
        if !memory.names().any(|n| n == name) {
            anyhow::bail!(
                "--storage-out {name}: no read-write storage buffer or storage image of that name \
                 is bound (bind it with --storage-buffer {name}=DATA.txt or --storage-image \
                 {name}=WxH)"
            );
        }
    }
    let job = DrawJob {
        vertex_program: vs.program,
        fragment_program: fs.program,
        math: MathArg::or_driver(args.math, args.driver.driver()),
        driver: args.driver.driver(),
        vertices,
        constants,
        textures,
        sampler: SamplerState {
            compare: args.compare,
            ..draw::sampler_state(filter, wrap)
        },
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
    draw::check_memory(&job, args.exec.executor(), memory_budget)?;
    let image = draw::run_with_storage(&job, &stage_constants, &memory, args.exec.executor())
        .map_err(|e| draw::name_input_files(e, &args.vs, &args.fs, &args.vertices))?;
    let bytes = softgpu::encode::png_bytes(
        &image,
        softgpu::chain::ColorSpace::Sdr,
        args.png.compression(),
    )
    .map_err(|e| anyhow!("--out {}: {e}", args.out.display()))?;
    softgpu::output::write_atomic(&args.out, "PNG", &bytes)?;
    for (name, path) in &storage_out {
        let text = memory.contents(name).unwrap_or_default();
        softgpu::output::write_atomic(path, "--storage-out", text.as_bytes())?;
    }
    Ok(())
}

/// Parses a `--storage-image NAME=WxH[xL][:DATA.txt]` binding and reads its data file.
fn parse_storage_image(setting: &str) -> Result<(String, draw::ImageData)> {
    let bad = || anyhow!("--storage-image: expected NAME=WxH[xL][:DATA.txt], found `{setting}`");
    let (name, rest) = setting.split_once('=').ok_or_else(bad)?;
    let (size, file) = match rest.split_once(':') {
        Some((size, file)) => (size, Some(PathBuf::from(file))),
        None => (rest, None),
    };
    let dims = size
        .split(['x', 'X'])
        .map(|d| d.trim().parse::<u32>().map_err(|_| bad()))
        .collect::<Result<Vec<u32>>>()?;
    let size = match dims[..] {
        [w, h] => (w, h, 1),
        [w, h, l] => (w, h, l),
        _ => return Err(bad()),
    };
    let texels = match file {
        Some(path) => draw::parse_constants(
            &path,
            &read(&path, "storage-image file", MAX_DATA_FILE_BYTES)?,
        )?,
        None => Vec::new(),
    };
    Ok((name.trim().to_string(), draw::ImageData { size, texels }))
}

/// Refuses, from the image headers and before any image is decoded, a framebuffer of `size`
/// and textures that together would need more than `budget` bytes. (The whole draw is checked
/// again by `draw::check_memory` once the vertices are read.)
fn check_texture_memory(
    size: (u32, u32),
    bindings: &[(u32, PathBuf)],
    executor: softgpu::shader::Executor,
    budget: u64,
) -> Result<()> {
    use softgpu::texture::Format;
    let mut usage = softgpu::budget::MemoryUse::new();
    usage.add(
        format!("the framebuffer {}x{}", size.0, size.1),
        Texture::estimated_bytes(Format::R8G8B8A8Unorm, size.0, size.1, 1, false).saturating_mul(2),
    );
    for (unit, path) in bindings {
        // An unreadable header is left to `Texture::load`, which says what is wrong.
        let header = softgpu::input::image_reader(path, "texture", u32::MAX)
            .ok()
            .and_then(|r| r.into_dimensions().ok());
        if let Some((w, h)) = header {
            usage.add(
                format!("--texture {unit}={} ({w}x{h})", path.display()),
                Texture::estimated_bytes(
                    Format::R8G8B8A8Unorm,
                    w,
                    h,
                    1,
                    executor == softgpu::shader::Executor::Jit,
                ),
            );
        }
    }
    usage
        .check(budget, &format!("a {}x{} draw", size.0, size.1))
        .map_err(|e| anyhow!(e))
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
