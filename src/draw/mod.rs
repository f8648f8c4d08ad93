//! `softgpu draw`: one draw call from TGSI programs and plain-text vertex and constant files.
//!
//! Input formats (as the command line documents them):
//! - vertices: one vertex per line, whitespace-separated floats taken four at a time into
//!   `IN[0]`, `IN[1]`, …; a last group shorter than four is completed from (0, 0, 0, 1). Every
//!   three vertices make a triangle. Blank lines and `#` comments are ignored.
//! - constants: one `x y z w` line per `CONST[0][i]` (or per 16 bytes of the push-constant
//!   block, for `--push-consts`). Values are floats, or raw bits written as `0x…` hexadecimal.
//! - `--uniform NAME=v1,v2,…`: a uniform-buffer or push-constant member of a WGSL or slang
//!   shader by its name (see [`stage_constants`]).

mod data_files;
mod stage_cache;

use crate::exec::{QuadShader, ShaderResources, ShaderSignature};
use crate::interp::Interpreter;
use crate::ir::lpmath::MathMode;
use crate::ir::{text, validate, Processor, Program};
use crate::jit::codegen::JitShader;
use crate::raster::{self, ClipConvention, DrawState, FragCoordConvention, RenderTarget, Vertices};
use crate::texture::{Filter, Format, SamplerState, Texture, TextureUnits, Wrap};
use anyhow::{anyhow, bail, Context, Result};
pub use data_files::{parse_constants, parse_vertices};
use serde::{Deserialize, Serialize};
pub use stage_cache::StageCacheUse;
use std::borrow::Cow;
use std::path::Path;
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

/// Builds the quad shader for `program` with the chosen executor, computing EX2, LG2, POW, SIN
/// and COS as `math` says (what the interpreter computes for `math.apply(program)`). A program
/// the JIT refuses — or one that trips a bug in the code generator (Cranelift asserts; caught
/// here) — runs on the interpreter, which is the specification the JIT must match anyway.
pub fn build_shader(
    program: &Program,
    executor: Executor,
    math: MathMode,
) -> Result<Box<dyn QuadShader>> {
    if executor == Executor::Jit {
        JIT_COMPILING.with(|c| c.set(true));
        let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            JitShader::compile_math(program, math)
        }));
        JIT_COMPILING.with(|c| c.set(false));
        if let Ok(Ok(shader)) = compiled {
            return Ok(Box::new(shader));
        }
    }
    Ok(Box::new(Interpreter::new(&math.applied(program))?))
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
    /// How EX2, LG2, POW, SIN and COS are computed.
    pub math: MathMode,
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
/// `expected` stage to a validated program; errors name the file and line. Both stages of a
/// slang file are compiled, so an error in either is reported (what `softgpu compile` checks).
pub fn compile_shader(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
) -> Result<Program> {
    if language.unwrap_or_else(|| Language::from_path(path)) == Language::SlangGlsl {
        use crate::frontend::vulkan_glsl as slang;
        let vertex = slang_stage(path, expected)? == slang::Stage::Vertex;
        let shader = slang::compile_slang(path)?;
        let stage = if vertex {
            &shader.vertex
        } else {
            &shader.fragment
        };
        return Ok(slang::lower_stage(stage)?.program);
    }
    Ok(compile_stage(path, expected, language)?.program)
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

/// Runs the draw with the given executor; `job.constants` is `CONST[0]` of both stages.
pub fn run_with(job: &DrawJob, executor: Executor) -> Result<Texture> {
    let constants = StageConstants {
        vertex: vec![job.constants.clone()],
        fragment: vec![job.constants.clone()],
    };
    run_with_constants(job, &constants, executor)
}

/// Runs the draw with each stage's CONST buffers taken from `constants` (`job.constants` is not
/// used), e.g. as [`stage_constants`] builds them for uniform and push-constant blocks.
pub fn run_with_constants(
    job: &DrawJob,
    constants: &StageConstants,
    executor: Executor,
) -> Result<Texture> {
    let mut target = Texture::new(Format::R8G8B8A8Unorm, job.size.0, job.size.1, 1)?;
    draw_into(job, constants, executor, &mut target)?;
    Ok(target)
}

/// Draws over the pixels already in `target` (an RGBA8 texture of `job.size`, row 0 at the top),
/// as a GPU draws into a bound framebuffer: uncovered pixels keep their values.
pub fn draw_into(
    job: &DrawJob,
    constants: &StageConstants,
    executor: Executor,
    target: &mut Texture,
) -> Result<()> {
    if target.format() != Format::R8G8B8A8Unorm || (target.width(), target.height()) != job.size {
        bail!(
            "the draw target is {:?} {}x{}; the draw needs R8G8B8A8Unorm {}x{}",
            target.format(),
            target.width(),
            target.height(),
            job.size.0,
            job.size.1
        );
    }
    // The JIT runs the program after the IR's bit-exact optimizations (TGSI files arrive as
    // written); the interpreter, the specification, runs it as given, so `--exec jit` against
    // `--exec interp` also checks the optimizer.
    let mut units = TextureUnits::new();
    for (unit, texture) in &job.textures {
        units.bind(*unit, texture.clone(), job.sampler);
    }
    let (vertex_program, fragment_program) = match executor {
        Executor::Jit => {
            let hints = units.sampler_hints();
            let mut vertex = optimized(&job.vertex_program, None);
            let mut fragment =
                optimized(&job.fragment_program, Some(units.level_independent_units()));
            vertex.set_sampler_hints(hints.iter().copied());
            fragment.set_sampler_hints(hints);
            (Cow::Owned(vertex), Cow::Owned(fragment))
        }
        Executor::Interp => (
            Cow::Borrowed(&job.vertex_program),
            Cow::Borrowed(&job.fragment_program),
        ),
    };
    let vertex_shader = build_shader(&vertex_program, executor, job.math)
        .map_err(|e| anyhow!("vertex shader: {e}"))?;
    let fragment_shader = build_shader(&fragment_program, executor, job.math)
        .map_err(|e| anyhow!("fragment shader: {e}"))?;
    check_bindings(job, vertex_shader.signature())?;

    let vertex_buffers: Vec<&[[u32; 4]]> = constants.vertex.iter().map(Vec::as_slice).collect();
    let fragment_buffers: Vec<&[[u32; 4]]> = constants.fragment.iter().map(Vec::as_slice).collect();
    let state = DrawState {
        vertex_resources: ShaderResources {
            constants: &vertex_buffers,
            textures: &units,
        },
        fragment_resources: ShaderResources {
            constants: &fragment_buffers,
            textures: &units,
        },
        frag_coord: FragCoordConvention::from_program(&job.fragment_program),
        ..DrawState::new(&*vertex_shader, &*fragment_shader, job.convention)
    };
    let vertices = Vertices::new(&job.vertices.registers, job.vertices.attributes);
    let rows = RenderTarget::of(target)?;
    // OpenGL window space has row 0 at the bottom of the picture.
    let rows = match job.convention {
        ClipConvention::OpenGl => rows.bottom_up(),
        _ => rows,
    };
    raster::draw_triangles_into(&state, vertices, rows)?;
    Ok(())
}

/// `program` after `ir::opt` (loop unrolling, constant folding, copy propagation, dead writes)
/// and `ir::compact`, then, for a fragment program, specialized for the texture units in
/// `lane_local_units` (`ir::opt::specialize`): the same bits, less work.
fn optimized(program: &Program, lane_local_units: Option<u64>) -> Program {
    let mut program = program.clone();
    crate::ir::opt::optimize(&mut program);
    crate::ir::compact::compact_temps(&mut program);
    if let Some(units) = lane_local_units {
        crate::ir::opt::specialize(&mut program, units);
    }
    program
}

/// A shader stage compiled for `draw`: the program and the uniform / push-constant blocks it
/// reads, addressable by member name (empty for TGSI programs, which carry no names).
#[derive(Clone, Debug)]
pub struct CompiledStage {
    /// The validated program.
    pub program: Program,
    /// The blocks behind its CONST buffers.
    pub blocks: Vec<UniformBlock>,
}

/// One uniform buffer or push-constant block of a stage and the CONST buffer it is read from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UniformBlock {
    /// A push-constant (immediate) block rather than a uniform buffer.
    pub push_constants: bool,
    /// Descriptor set / `@group` (0 for push constants).
    pub group: u32,
    /// `@binding` (0 for push constants).
    pub binding: u32,
    /// The variable's name (`global`, `params`), if any.
    pub instance_name: Option<String>,
    /// The block type's name (`UBO`, `Push`), if any.
    pub type_name: Option<String>,
    /// The `CONST[buffer]` the stage reads it from.
    pub buffer: u32,
    /// Size in bytes.
    pub size: u32,
    /// The members in declaration order.
    pub members: Vec<UniformField>,
}

/// A named member of a block (or of a struct inside one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UniformField {
    /// Member name.
    pub name: String,
    /// Byte offset from the start of the enclosing block or struct.
    pub offset: u32,
    /// Its layout.
    pub layout: FieldLayout,
}

/// The layout of a uniform value, as naga laid it out (offsets and strides from the shader).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FieldLayout {
    /// `size` (1–4) consecutive 4-byte components of one kind (scalars and vectors).
    Vector {
        /// Number of components.
        size: u32,
        /// How values are written.
        kind: ComponentKind,
        /// Type name for messages.
        type_name: String,
    },
    /// A float matrix, column-major.
    Matrix {
        /// Columns.
        columns: u32,
        /// Rows (components per column).
        rows: u32,
        /// Bytes between columns.
        column_stride: u32,
        /// Type name for messages.
        type_name: String,
    },
    /// A fixed-size array.
    Array {
        /// The element layout.
        element: Box<FieldLayout>,
        /// Element count.
        count: u32,
        /// Bytes between elements.
        stride: u32,
    },
    /// A struct.
    Struct {
        /// Its members.
        members: Vec<UniformField>,
        /// Type name for messages.
        type_name: String,
    },
}

/// How a uniform component's text is turned into bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ComponentKind {
    /// f32 (or `0x` bits).
    Float,
    /// i32.
    Sint,
    /// u32.
    Uint,
}

impl FieldLayout {
    fn from_naga(module: &naga::Module, ty: naga::Handle<naga::Type>) -> Option<FieldLayout> {
        use naga::TypeInner as T;
        let name = || crate::frontend::vulkan_glsl::reflect::type_name(module, ty);
        let kind = |s: naga::Scalar| match (s.kind, s.width) {
            (naga::ScalarKind::Float, 4) => Some(ComponentKind::Float),
            (naga::ScalarKind::Sint, 4) => Some(ComponentKind::Sint),
            (naga::ScalarKind::Uint, 4) => Some(ComponentKind::Uint),
            _ => None,
        };
        Some(match &module.types[ty].inner {
            T::Scalar(s) => FieldLayout::Vector {
                size: 1,
                kind: kind(*s)?,
                type_name: name(),
            },
            T::Vector { size, scalar } => FieldLayout::Vector {
                size: *size as u32,
                kind: kind(*scalar)?,
                type_name: name(),
            },
            T::Matrix { columns, rows, .. } => FieldLayout::Matrix {
                columns: *columns as u32,
                rows: *rows as u32,
                column_stride: crate::frontend::lower::column_stride(*rows),
                type_name: name(),
            },
            T::Array {
                base,
                size: naga::ArraySize::Constant(n),
                stride,
            } => FieldLayout::Array {
                element: Box::new(FieldLayout::from_naga(module, *base)?),
                count: n.get(),
                stride: *stride,
            },
            T::Struct { members, .. } => FieldLayout::Struct {
                members: fields_of(module, members),
                type_name: name(),
            },
            _ => return None,
        })
    }

    /// The type as the shader spells it (`vec4`, `mat2`, `float[3]`, `Light`).
    pub fn type_name(&self) -> String {
        match self {
            FieldLayout::Vector { type_name, .. }
            | FieldLayout::Matrix { type_name, .. }
            | FieldLayout::Struct { type_name, .. } => type_name.clone(),
            FieldLayout::Array { element, count, .. } => {
                format!("{}[{count}]", element.type_name())
            }
        }
    }

    /// Every 4-byte component in value order (arrays element by element, matrices column by
    /// column, structs member by member) with its byte offset from `base`.
    pub fn components(&self, base: u32, out: &mut Vec<(u32, ComponentKind)>) {
        match self {
            FieldLayout::Vector { size, kind, .. } => {
                out.extend((0..*size).map(|i| (base + 4 * i, *kind)));
            }
            FieldLayout::Matrix {
                columns,
                rows,
                column_stride,
                ..
            } => {
                for c in 0..*columns {
                    for r in 0..*rows {
                        out.push((base + c * column_stride + 4 * r, ComponentKind::Float));
                    }
                }
            }
            FieldLayout::Array {
                element,
                count,
                stride,
            } => {
                for i in 0..*count {
                    element.components(base + i * stride, out);
                }
            }
            FieldLayout::Struct { members, .. } => {
                for m in members {
                    m.layout.components(base + m.offset, out);
                }
            }
        }
    }
}

fn fields_of(module: &naga::Module, members: &[naga::StructMember]) -> Vec<UniformField> {
    members
        .iter()
        .filter_map(|m| {
            Some(UniformField {
                name: m.name.clone()?,
                offset: m.offset,
                layout: FieldLayout::from_naga(module, m.ty)?,
            })
        })
        .collect()
}

/// The uniform and push-constant blocks of a lowered entry point, with their CONST buffers.
pub fn uniform_blocks(
    module: &naga::Module,
    lowered: &crate::frontend::lower::LoweredShader,
) -> Vec<UniformBlock> {
    use crate::frontend::lower::ResourceKind;
    let mut blocks = Vec::new();
    for slot in &lowered.resources {
        let (push, buffer, size) = match slot.kind {
            ResourceKind::UniformBuffer { buffer, size } => (false, buffer, size),
            ResourceKind::PushConstants { buffer, size } => (true, buffer, size),
            _ => continue,
        };
        let space = if push {
            naga::AddressSpace::Immediate
        } else {
            naga::AddressSpace::Uniform
        };
        let Some((_, var)) = module.global_variables.iter().find(|(_, g)| {
            g.space == space
                && (push
                    || g.binding.as_ref().map(|b| (b.group, b.binding))
                        == Some((slot.group, slot.binding)))
        }) else {
            continue;
        };
        let ty = &module.types[var.ty];
        let members = match &ty.inner {
            naga::TypeInner::Struct { members, .. } => fields_of(module, members),
            // A bare `var<uniform> x: vec4f` is one field named after the variable.
            _ => match (&var.name, FieldLayout::from_naga(module, var.ty)) {
                (Some(name), Some(layout)) => vec![UniformField {
                    name: name.clone(),
                    offset: 0,
                    layout,
                }],
                _ => Vec::new(),
            },
        };
        blocks.push(UniformBlock {
            push_constants: push,
            group: slot.group,
            binding: slot.binding,
            instance_name: var.name.clone(),
            type_name: ty.name.clone(),
            buffer,
            size,
            members,
        });
    }
    blocks
}

/// Like [`compile_shader`], also returning the uniform blocks of WGSL and slang stages.
pub fn compile_stage(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
) -> Result<CompiledStage> {
    Ok(compile_stage_cached(path, expected, language, None)?.0)
}

/// [`compile_stage`] through the on-disk shader cache in `cache` (see `draw::stage_cache`): a
/// WGSL or slang stage whose source an entry holds skips its frontend; one compiled is stored.
/// Also says what the cache did.
pub fn compile_stage_cached(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
    cache: Option<&Path>,
) -> Result<(CompiledStage, StageCacheUse)> {
    let language = language.unwrap_or_else(|| Language::from_path(path));
    if language == Language::Tgsi {
        let program = load_program(path, expected)?;
        let stage = CompiledStage {
            program,
            blocks: Vec::new(),
        };
        return Ok((stage, StageCacheUse::Uncached));
    }
    let frontend = StageFrontend::read(path, expected, language)?;
    let (language_key, source) = (frontend.language_key(), frontend.source_text().to_string());
    let mut used = StageCacheUse::Uncached;
    if let Some(dir) = cache {
        let (found, outcome) = stage_cache::load(dir, language_key, expected, &source);
        if let Some(stage) = found {
            return Ok((stage, outcome));
        }
        used = outcome;
    }
    let stage = frontend.compile(path)?;
    if let Some(dir) = cache {
        stage_cache::store(dir, language_key, expected, &source, &stage);
    }
    Ok((stage, used))
}

/// The slang stage that compiles to `expected`; other processors are an error naming `path`.
fn slang_stage(path: &Path, expected: Processor) -> Result<crate::frontend::vulkan_glsl::Stage> {
    use crate::frontend::vulkan_glsl::Stage;
    match expected {
        Processor::Vertex => Ok(Stage::Vertex),
        Processor::Fragment => Ok(Stage::Fragment),
        other => bail!(
            "{}: no {} stage in a slang shader",
            path.display(),
            other.name()
        ),
    }
}

/// One stage of a WGSL or slang file, read (and for slang preprocessed) but not yet compiled:
/// its text is what the shader cache keys on.
enum StageFrontend {
    Wgsl {
        source: String,
        stage: crate::frontend::wgsl::Stage,
    },
    Slang {
        source: crate::frontend::vulkan_glsl::StageSource,
        stage: crate::frontend::vulkan_glsl::Stage,
    },
}

impl StageFrontend {
    fn read(path: &Path, expected: Processor, language: Language) -> Result<StageFrontend> {
        use crate::frontend::{vulkan_glsl as slang, wgsl};
        match language {
            Language::Wgsl => {
                let stage = match expected {
                    Processor::Vertex => wgsl::Stage::Vertex,
                    Processor::Fragment => wgsl::Stage::Fragment,
                    other => bail!("{}: no {} stage in WGSL", path.display(), other.name()),
                };
                let source = std::fs::read_to_string(path)
                    .with_context(|| format!("{}: cannot read shader", path.display()))?;
                Ok(StageFrontend::Wgsl { source, stage })
            }
            Language::SlangGlsl => {
                let pre = slang::preprocess_file(path)?;
                // Only the stage drawn with goes through glslang: `--vs` and `--fs` naming the
                // same file would otherwise compile both of its stages twice.
                let stage = slang_stage(path, expected)?;
                let source = match stage {
                    slang::Stage::Vertex => pre.vertex,
                    slang::Stage::Fragment => pre.fragment,
                };
                Ok(StageFrontend::Slang { source, stage })
            }
            Language::Tgsi => bail!("{}: TGSI has no frontend", path.display()),
        }
    }

    fn language_key(&self) -> &'static str {
        match self {
            StageFrontend::Wgsl { .. } => "wgsl",
            StageFrontend::Slang { .. } => "slang",
        }
    }

    fn source_text(&self) -> &str {
        match self {
            StageFrontend::Wgsl { source, .. } => source,
            StageFrontend::Slang { source, .. } => &source.text,
        }
    }

    fn compile(self, path: &Path) -> Result<CompiledStage> {
        use crate::frontend::{lower, vulkan_glsl as slang, wgsl};
        match self {
            StageFrontend::Wgsl { source, stage } => {
                let file = path.display().to_string();
                let parsed = wgsl::parse(&source, &file)?;
                let index = wgsl::select_entry_point(&parsed.module, stage, None, &file)?;
                let lowered =
                    lower::lower(&parsed.module, &parsed.info, index, Some(&source), &file)?;
                Ok(CompiledStage {
                    blocks: uniform_blocks(&parsed.module, &lowered),
                    program: lowered.program,
                })
            }
            StageFrontend::Slang { source, stage } => {
                let compiled = slang::compile_stage(source, stage)?;
                let lowered = slang::lower_stage(&compiled)?;
                Ok(CompiledStage {
                    blocks: uniform_blocks(&compiled.module, &lowered),
                    program: lowered.program,
                })
            }
        }
    }
}

/// CONST buffers per stage, indexed by buffer number (what [`run_with_constants`] binds).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageConstants {
    /// The vertex shader's `CONST[i]`.
    pub vertex: Vec<Vec<[u32; 4]>>,
    /// The fragment shader's `CONST[i]`.
    pub fragment: Vec<Vec<[u32; 4]>>,
}

/// Where a uniform name resolved in one stage.
struct Target<'a> {
    block: &'a UniformBlock,
    offset: u32,
    layout: FieldLayout,
}

/// One step of a uniform path: a member name or an array index.
enum Step<'a> {
    Member(&'a str),
    Index(u32),
}

fn parse_path(name: &str) -> Option<Vec<Step<'_>>> {
    let mut steps = Vec::new();
    for part in name.split('.') {
        let (ident, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if ident.is_empty() || !ident.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        steps.push(Step::Member(ident));
        while let Some(r) = rest.strip_prefix('[') {
            let (n, tail) = r.split_once(']')?;
            steps.push(Step::Index(n.trim().parse().ok()?));
            rest = tail;
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(steps)
}

fn resolve_in(members: &[UniformField], steps: &[Step]) -> Option<(u32, FieldLayout)> {
    let Some(Step::Member(first)) = steps.first() else {
        return None;
    };
    let field = members.iter().find(|m| m.name == *first)?;
    let (mut offset, mut layout) = (field.offset, field.layout.clone());
    let mut i = 1;
    while i < steps.len() {
        match (&steps[i], layout) {
            (
                Step::Index(n),
                FieldLayout::Array {
                    element,
                    count,
                    stride,
                },
            ) if *n < count => {
                offset += n * stride;
                layout = *element;
            }
            (
                Step::Index(n),
                FieldLayout::Matrix {
                    columns,
                    rows,
                    column_stride,
                    ..
                },
            ) if *n < columns => {
                offset += n * column_stride;
                layout = FieldLayout::Vector {
                    size: rows,
                    kind: ComponentKind::Float,
                    type_name: format!("vec{rows}"),
                };
            }
            (Step::Member(m), FieldLayout::Struct { members, .. }) => {
                let f = members.iter().find(|f| f.name == *m)?;
                offset += f.offset;
                layout = f.layout.clone();
            }
            _ => return None,
        }
        i += 1;
    }
    Some((offset, layout))
}

fn resolve<'a>(blocks: &'a [UniformBlock], steps: &[Step]) -> Vec<Target<'a>> {
    let mut found = Vec::new();
    for block in blocks {
        let qualified = match steps.first() {
            Some(Step::Member(q))
                if steps.len() > 1
                    && (block.instance_name.as_deref() == Some(*q)
                        || block.type_name.as_deref() == Some(*q)) =>
            {
                resolve_in(&block.members, &steps[1..])
            }
            _ => None,
        };
        if let Some((offset, layout)) = qualified.or_else(|| resolve_in(&block.members, steps)) {
            found.push(Target {
                block,
                offset,
                layout,
            });
        }
    }
    found
}

fn block_label(b: &UniformBlock) -> String {
    let name = b
        .instance_name
        .clone()
        .or_else(|| b.type_name.clone())
        .unwrap_or_else(|| "(unnamed)".into());
    if b.push_constants {
        format!("push-constant block `{name}`")
    } else {
        format!(
            "uniform buffer `{name}` (set {} binding {})",
            b.group, b.binding
        )
    }
}

fn parse_component(text: &str, kind: ComponentKind) -> Option<u32> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u32::from_str_radix(hex, 16).ok();
    }
    match kind {
        ComponentKind::Float => t.parse::<f32>().ok().map(f32::to_bits),
        ComponentKind::Sint => t.parse::<i32>().ok().map(|v| v as u32),
        ComponentKind::Uint => t.parse::<u32>().ok(),
    }
}

fn store(buffers: &mut Vec<Vec<[u32; 4]>>, buffer: u32, offset: u32, bits: u32) {
    let b = buffer as usize;
    if buffers.len() <= b {
        buffers.resize(b + 1, Vec::new());
    }
    let reg = (offset / 16) as usize;
    if buffers[b].len() <= reg {
        buffers[b].resize(reg + 1, [0; 4]);
    }
    buffers[b][reg][((offset % 16) / 4) as usize] = bits;
}

/// Builds both stages' CONST buffers for a draw: every block zero-filled to its size,
/// `consts` (a constant file's rows) in `CONST[0]` of both stages, `push` (rows) in each stage's
/// push-constant buffer, then every `NAME=v1,v2,…` of `uniforms` written to the member it names
/// (a member of a uniform buffer or push-constant block of either stage, optionally qualified
/// by the block's instance or type name; `a.b`, `a[i]` reach into structs, arrays and matrix
/// columns). Errors name the flag and what was expected.
pub fn stage_constants(
    vertex: &[UniformBlock],
    fragment: &[UniformBlock],
    consts: &[[u32; 4]],
    push: Option<(&Path, &[[u32; 4]])>,
    uniforms: &[String],
) -> Result<StageConstants> {
    let mut out = StageConstants::default();
    for (blocks, buffers) in [(vertex, &mut out.vertex), (fragment, &mut out.fragment)] {
        if !consts.is_empty() {
            if buffers.is_empty() {
                buffers.push(Vec::new());
            }
            buffers[0] = consts.to_vec();
        }
        for b in blocks {
            let rows = b.size.div_ceil(16) as usize;
            let i = b.buffer as usize;
            if buffers.len() <= i {
                buffers.resize(i + 1, Vec::new());
            }
            if buffers[i].len() < rows {
                buffers[i].resize(rows, [0; 4]);
            }
            if let (true, Some((_, rows))) = (b.push_constants, push) {
                for (r, row) in rows.iter().enumerate() {
                    if buffers[i].len() <= r {
                        buffers[i].push([0; 4]);
                    }
                    buffers[i][r] = *row;
                }
            }
        }
    }
    if let Some((path, _)) = push {
        if !vertex.iter().chain(fragment).any(|b| b.push_constants) {
            bail!(
                "--push-consts {}: neither shader has a push-constant block",
                path.display()
            );
        }
    }
    for setting in uniforms {
        let (name, values) = setting.split_once('=').ok_or_else(|| {
            anyhow!(
                "--uniform: expected NAME=v1,v2,… (e.g. params.Tint=1,0.5,0,1), found `{setting}`"
            )
        })?;
        let name = name.trim();
        let steps = parse_path(name).ok_or_else(|| {
            anyhow!("--uniform {name}: expected a member name like `Tint`, `params.Tint`, `Lights[2].color`")
        })?;
        let targets: Vec<(bool, Target)> = resolve(vertex, &steps)
            .into_iter()
            .map(|t| (true, t))
            .chain(resolve(fragment, &steps).into_iter().map(|t| (false, t)))
            .collect();
        let Some((_, first)) = targets.first() else {
            let mut known: Vec<String> = vertex
                .iter()
                .chain(fragment)
                .flat_map(|b| {
                    b.members.iter().map(move |m| {
                        let q = b.instance_name.as_ref().or(b.type_name.as_ref());
                        let full = match q {
                            Some(q) => format!("{q}.{}", m.name),
                            None => m.name.clone(),
                        };
                        format!("{full} ({})", m.layout.type_name())
                    })
                })
                .collect();
            known.sort();
            known.dedup();
            if known.is_empty() {
                bail!(
                    "--uniform {name}: the shaders have no uniform or push-constant members to set"
                );
            }
            bail!(
                "--uniform {name}: no such uniform or push-constant member; the shaders have: {}",
                known.join(", ")
            );
        };
        let key = |b: &UniformBlock| (b.push_constants, b.group, b.binding);
        if let Some((_, other)) = targets
            .iter()
            .find(|(_, t)| key(t.block) != key(first.block))
        {
            bail!(
                "--uniform {name}: ambiguous, in the {} and the {}; qualify it with the block's name",
                block_label(first.block),
                block_label(other.block)
            );
        }
        let mut components = Vec::new();
        first.layout.components(0, &mut components);
        let texts: Vec<&str> = values.split(',').map(str::trim).collect();
        if texts.len() != components.len() {
            bail!(
                "--uniform {name}: a {} takes {} value(s), found {}",
                first.layout.type_name(),
                components.len(),
                texts.len()
            );
        }
        let mut bits = Vec::with_capacity(texts.len());
        for (text, (_, kind)) in texts.iter().zip(&components) {
            let what = match kind {
                ComponentKind::Float => "a float",
                ComponentKind::Sint => "a signed integer",
                ComponentKind::Uint => "an unsigned integer",
            };
            bits.push(parse_component(text, *kind).ok_or_else(|| {
                anyhow!("--uniform {name}: expected {what} (or 0x bits), found `{text}`")
            })?);
        }
        for (is_vertex, t) in &targets {
            let buffers = if *is_vertex {
                &mut out.vertex
            } else {
                &mut out.fragment
            };
            let mut comps = Vec::new();
            t.layout.components(t.offset, &mut comps);
            for ((offset, _), b) in comps.iter().zip(&bits) {
                store(buffers, t.block.buffer, *offset, *b);
            }
        }
    }
    Ok(out)
}
