//! `softgpu draw`: one draw call from TGSI programs and plain-text vertex and constant files.
//!
//! Input formats (as the command line documents them):
//! - vertices: one vertex per line, whitespace-separated floats taken four at a time into
//!   `IN[0]`, `IN[1]`, …; a last group shorter than four is completed from (0, 0, 0, 1). Every
//!   three vertices make a triangle. Blank lines and `#` comments are ignored.
//! - constants: one `x y z w` line per `CONST[0][i]`. Values are floats, or raw bits written as
//!   `0x…` hexadecimal.

use crate::exec::{QuadShader, ShaderResources, ShaderSignature};
use crate::interp::Interpreter;
use crate::ir::{text, validate, Processor, Program};
use crate::jit::codegen::JitShader;
use crate::raster::{self, ClipConvention, DrawState, FragCoordConvention, Vertices};
use crate::texture::{Filter, Format, SamplerState, Texture, TextureUnits, Wrap};
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest number of vertices a vertex file may hold (bounded before allocating).
pub const MAX_VERTICES: usize = 3 << 20;
/// Largest number of constant vectors a constant file may hold.
pub const MAX_CONSTANTS: usize = 1 << 16;

/// Which executor runs the shaders. Both give bit-identical results (the JIT is tested against
/// the interpreter); the JIT is the fast one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Executor {
    /// Cranelift-compiled quad kernels; a program the JIT refuses runs on the interpreter.
    #[default]
    Jit,
    /// The reference interpreter.
    Interp,
}

thread_local! {
    /// Set while this thread runs the JIT compiler (see [`jit_compiling`]).
    static JIT_COMPILING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the current thread is inside the JIT compiler: a panic there is caught and the program
/// runs on the interpreter instead, so a panic hook may stay quiet about it.
pub fn jit_compiling() -> bool {
    JIT_COMPILING.with(|c| c.get())
}

/// Builds the quad shader for `program` with the chosen executor. A program the JIT refuses — or
/// one that trips a bug in the code generator (Cranelift asserts; caught here) — runs on the
/// interpreter, which is the specification the JIT must match anyway.
pub fn build_shader(program: &Program, executor: Executor) -> Result<Box<dyn QuadShader>> {
    if executor == Executor::Jit {
        JIT_COMPILING.with(|c| c.set(true));
        let compiled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| JitShader::compile(program)));
        JIT_COMPILING.with(|c| c.set(false));
        if let Ok(Ok(shader)) = compiled {
            return Ok(Box::new(shader));
        }
    }
    Ok(Box::new(Interpreter::new(program)?))
}

/// Everything one `draw` invocation needs, already read from disk.
pub struct DrawJob {
    /// The vertex program.
    pub vertex_program: Program,
    /// The fragment program.
    pub fragment_program: Program,
    /// The vertices' `IN[i]` registers as raw bits, vertex-major.
    pub vertices: VertexData,
    /// `CONST[0][i]` as raw bits.
    pub constants: Vec<[u32; 4]>,
    /// Texture units: unit index → texture.
    pub textures: Vec<(u32, Arc<Texture>)>,
    /// The sampler state for every bound unit.
    pub sampler: SamplerState,
    /// Output width and height.
    pub size: (u32, u32),
    /// Clip-space convention.
    pub convention: ClipConvention,
}

/// Vertex attributes read from a vertex file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexData {
    /// All registers of all vertices, vertex-major.
    pub registers: Vec<[u32; 4]>,
    /// Registers per vertex (`IN[0..attributes]`).
    pub attributes: usize,
}

/// The language of a shader file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// Mesa's TGSI text format.
    Tgsi,
    /// WGSL (through naga).
    Wgsl,
    /// RetroArch slang: Vulkan GLSL with `#pragma stage` (through glslang, SPIR-V and naga).
    SlangGlsl,
}

impl Language {
    /// The language a file name implies: `.wgsl` is WGSL, `.slang` RetroArch slang, anything
    /// else TGSI text.
    pub fn from_path(path: &Path) -> Language {
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("wgsl") => Language::Wgsl,
            Some(ext) if ext.eq_ignore_ascii_case("slang") => Language::SlangGlsl,
            _ => Language::Tgsi,
        }
    }
}

/// Reads a shader file in `language` (or the one its extension implies) and compiles the
/// `expected` stage to a validated program; errors name the file and line.
pub fn compile_shader(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
) -> Result<Program> {
    match language.unwrap_or_else(|| Language::from_path(path)) {
        Language::Tgsi => load_program(path, expected),
        Language::Wgsl => {
            let source = std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read shader", path.display()))?;
            let stage = match expected {
                Processor::Vertex => crate::frontend::wgsl::Stage::Vertex,
                Processor::Fragment => crate::frontend::wgsl::Stage::Fragment,
                other => bail!("{}: no {} stage in WGSL", path.display(), other.name()),
            };
            let file = path.display().to_string();
            let lowered = crate::frontend::wgsl::compile(&source, &file, stage, None)?;
            Ok(lowered.program)
        }
        Language::SlangGlsl => {
            let shader = crate::frontend::slang::compile_slang(path)?;
            let stage = match expected {
                Processor::Vertex => &shader.vertex,
                Processor::Fragment => &shader.fragment,
                other => bail!(
                    "{}: no {} stage in a slang shader",
                    path.display(),
                    other.name()
                ),
            };
            Ok(crate::frontend::slang::lower_stage(stage)?.program)
        }
    }
}

/// Reads and validates a TGSI program file; errors name the file and line.
pub fn load_program(path: &Path, expected: Processor) -> Result<Program> {
    let source = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read shader", path.display()))?;
    let program = text::parse_program(&source).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    validate::validate(&program).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        anyhow!(
            "{}: invalid program:\n  {}",
            path.display(),
            lines.join("\n  ")
        )
    })?;
    if program.processor != expected {
        bail!(
            "{}: expected a {} program, found {}",
            path.display(),
            expected.name(),
            program.processor.name()
        );
    }
    Ok(program)
}

fn parse_number_bits(token: &str) -> Option<u32> {
    if let Some(hex) = token
        .strip_prefix("0x")
        .or_else(|| token.strip_prefix("0X"))
    {
        return u32::from_str_radix(hex, 16).ok();
    }
    token.parse::<f32>().ok().map(f32::to_bits)
}

/// Lines of a text file that carry data: (1-based line number, tokens), comments removed.
fn data_lines(source: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    source.lines().enumerate().filter_map(|(i, line)| {
        let line = line.split('#').next().unwrap_or("");
        let tokens: Vec<&str> = line.split_whitespace().collect();
        (!tokens.is_empty()).then_some((i + 1, tokens))
    })
}

fn parse_bits(path: &Path, line: usize, token: &str) -> Result<u32> {
    parse_number_bits(token).ok_or_else(|| {
        anyhow!(
            "{}:{line}: expected a number (float or 0x hex bits), found `{token}`",
            path.display()
        )
    })
}

/// Parses a vertex file (see the module docs).
pub fn parse_vertices(path: &Path, source: &str) -> Result<VertexData> {
    let mut registers = Vec::new();
    let mut count = 0usize;
    let mut width = None;
    for (line, tokens) in data_lines(source) {
        if count >= MAX_VERTICES {
            bail!(
                "{}:{line}: more than {MAX_VERTICES} vertices",
                path.display()
            );
        }
        if *width.get_or_insert(tokens.len()) != tokens.len() {
            bail!(
                "{}:{line}: expected {} values like the first vertex, found {}",
                path.display(),
                width.unwrap_or(0),
                tokens.len()
            );
        }
        for chunk in tokens.chunks(4) {
            let mut reg = [0, 0, 0, 1.0f32.to_bits()];
            for (slot, token) in reg.iter_mut().zip(chunk) {
                *slot = parse_bits(path, line, token)?;
            }
            registers.push(reg);
        }
        count += 1;
    }
    if count == 0 {
        bail!(
            "{}: expected at least one triangle (3 vertex lines), found none",
            path.display()
        );
    }
    if !count.is_multiple_of(3) {
        bail!(
            "{}: expected a multiple of 3 vertices (every 3 lines are one triangle), found {count}",
            path.display()
        );
    }
    Ok(VertexData {
        attributes: registers.len() / count,
        registers,
    })
}

/// Parses a constant file (see the module docs).
pub fn parse_constants(path: &Path, source: &str) -> Result<Vec<[u32; 4]>> {
    let mut constants = Vec::new();
    for (line, tokens) in data_lines(source) {
        if constants.len() >= MAX_CONSTANTS {
            bail!(
                "{}:{line}: more than {MAX_CONSTANTS} constants",
                path.display()
            );
        }
        if tokens.len() != 4 {
            bail!(
                "{}:{line}: expected 4 values `x y z w`, found {}",
                path.display(),
                tokens.len()
            );
        }
        let mut reg = [0u32; 4];
        for (slot, token) in reg.iter_mut().zip(&tokens) {
            *slot = parse_bits(path, line, token)?;
        }
        constants.push(reg);
    }
    Ok(constants)
}

/// Parses `WxH`.
pub fn parse_size(text: &str) -> Result<(u32, u32)> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| anyhow!("--size: expected WxH (e.g. 640x480), found `{text}`"))?;
    let parse = |s: &str| -> Result<u32> {
        let v: u32 = s
            .trim()
            .parse()
            .map_err(|_| anyhow!("--size: expected WxH with positive integers, found `{text}`"))?;
        if v == 0 || v > Texture::MAX_DIMENSION {
            bail!(
                "--size: each dimension must be 1..={}, found `{text}`",
                Texture::MAX_DIMENSION
            );
        }
        Ok(v)
    };
    Ok((parse(w)?, parse(h)?))
}

/// Parses a `--texture N=PATH` binding.
pub fn parse_texture_binding(text: &str) -> Result<(u32, PathBuf)> {
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

/// The sampler state `draw` uses: one filter for min and mag, no mipmapping (level 0 only, as a
/// texture without a mip chain samples on a GL driver), one wrap mode for all axes.
pub fn sampler_state(filter: Filter, wrap: Wrap) -> SamplerState {
    SamplerState::new(filter, wrap).with_mip_filter(None)
}

/// Checks that the draw provides what the programs read.
fn check_bindings(job: &DrawJob, vs: &ShaderSignature) -> Result<()> {
    let provided = job.vertices.attributes;
    if vs.num_inputs > provided {
        bail!(
            "the vertex shader reads IN[0..{}] but each vertex provides {provided} register(s) ({} values)",
            vs.num_inputs,
            provided * 4
        );
    }
    for (stage, program) in [
        ("vertex", &job.vertex_program),
        ("fragment", &job.fragment_program),
    ] {
        for decl in program.declarations() {
            if decl.file == crate::ir::RegisterFile::SamplerView
                || decl.file == crate::ir::RegisterFile::Sampler
            {
                for unit in decl.first..=decl.last {
                    if !job.textures.iter().any(|(u, _)| *u == unit) {
                        bail!(
                            "the {stage} shader samples unit {unit} but no texture is bound: pass --texture {unit}=IMAGE.png"
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// Runs the draw with the default executor (the JIT) and returns the rendered RGBA8 image with
/// row 0 at the top of the picture.
pub fn run(job: &DrawJob) -> Result<Texture> {
    run_with(job, Executor::default())
}

/// Runs the draw with the given executor.
pub fn run_with(job: &DrawJob, executor: Executor) -> Result<Texture> {
    let vertex_shader =
        build_shader(&job.vertex_program, executor).map_err(|e| anyhow!("vertex shader: {e}"))?;
    let fragment_shader = build_shader(&job.fragment_program, executor)
        .map_err(|e| anyhow!("fragment shader: {e}"))?;
    check_bindings(job, vertex_shader.signature())?;

    let mut units = TextureUnits::new();
    for (unit, texture) in &job.textures {
        units.bind(*unit, texture.clone(), job.sampler);
    }
    let const_buffers: [&[[u32; 4]]; 1] = [&job.constants];
    let resources = ShaderResources {
        constants: &const_buffers,
        textures: &units,
    };
    let state = DrawState {
        vertex_resources: resources,
        fragment_resources: resources,
        frag_coord: FragCoordConvention::from_program(&job.fragment_program),
        ..DrawState::new(&*vertex_shader, &*fragment_shader, job.convention)
    };
    let mut target = Texture::new(Format::R8G8B8A8Unorm, job.size.0, job.size.1, 1)?;
    let vertices = Vertices::new(&job.vertices.registers, job.vertices.attributes);
    raster::draw_triangles(&state, vertices, &mut target)?;
    if job.convention == ClipConvention::OpenGl {
        flip_rows(&mut target);
    }
    Ok(target)
}

/// Mirrors level 0 vertically: OpenGL window space has row 0 at the bottom of the picture.
fn flip_rows(texture: &mut Texture) {
    let row_bytes = texture.width() as usize * texture.format().bytes_per_texel();
    let height = texture.height() as usize;
    let data = texture.level_data_mut(0);
    for row in 0..height / 2 {
        let (top, bottom) = data.split_at_mut((height - 1 - row) * row_bytes);
        top[row * row_bytes..(row + 1) * row_bytes].swap_with_slice(&mut bottom[..row_bytes]);
    }
}
