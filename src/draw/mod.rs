//! `softgpu draw`: one draw call from shaders in any language, vertex and constant data files
//! ([`data_files`] has their formats), textures and uniforms set by name.
//!
//! - `--uniform NAME=v1,v2,…`: a uniform-buffer or push-constant member of a WGSL or Vulkan GLSL
//!   shader by its name (see [`stage_constants`]).
//!
//! The stages are built by [`crate::shader`] (re-exported here where the draw API hands them
//! out); uniforms are found by name in their reflection ([`crate::frontend::reflect`]).

pub mod data_files;
pub mod storage;

use crate::budget::MemoryUse;
use crate::driver::Driver;
use crate::exec::{ShaderResources, ShaderSignature};
use crate::frontend::reflect::{BlockReflection, Member, ScalarKind, StageReflection, TypeLayout};
use crate::ir::MathMode;
use crate::ir::{Processor, Program};
use crate::raster::{self, ClipConvention, DrawState, FragCoordConvention, RenderTarget, Vertices};
use crate::shader::{build_shader, Executor, Language, StageCacheUse};
use crate::texture::{Filter, Format, SamplerState, Texture, TextureUnits, Wrap};
use anyhow::{anyhow, bail, Result};
pub use data_files::{parse_constants, parse_vertices};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;
pub use storage::{DrawStorage, ImageData, MemorySlot};

/// Largest number of vertices a vertex file may hold (bounded before allocating).
pub const MAX_VERTICES: usize = 3 << 20;
/// Largest number of constant vectors a constant file may hold.
pub const MAX_CONSTANTS: usize = 1 << 16;

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
    /// The driver whose filtering, derivative and target-conversion rules the draw follows
    /// (its math mode is `math`: [`Driver::math`] gives the driver's own).
    pub driver: Driver,
}

impl DrawJob {
    /// The format of the target this job draws into: RGBA8 UNORM as the driver writes it.
    pub fn target_format(&self) -> Format {
        self.driver.target_format(Format::R8G8B8A8Unorm)
    }
}

/// Vertex attributes read from a vertex file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexData {
    /// All registers of all vertices, vertex-major.
    pub registers: Vec<[u32; 4]>,
    /// Registers per vertex (`IN[0..attributes]`).
    pub attributes: usize,
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
    let mut target = Texture::new(job.target_format(), job.size.0, job.size.1, 1)?;
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
    draw_into_with_storage(job, constants, &DrawStorage::default(), executor, target)
}

/// [`run_with_constants`] with the storage buffers and images of `storage` bound; their
/// contents are what the draw left in them when it returns ([`DrawStorage::contents`]).
pub fn run_with_storage(
    job: &DrawJob,
    constants: &StageConstants,
    storage: &DrawStorage,
    executor: Executor,
) -> Result<Texture> {
    let mut target = Texture::new(job.target_format(), job.size.0, job.size.1, 1)?;
    draw_into_with_storage(job, constants, storage, executor, &mut target)?;
    Ok(target)
}

/// [`draw_into`] with the storage buffers and images of `storage` bound.
pub fn draw_into_with_storage(
    job: &DrawJob,
    constants: &StageConstants,
    storage: &DrawStorage,
    executor: Executor,
    target: &mut Texture,
) -> Result<()> {
    if target.format() != job.target_format() || (target.width(), target.height()) != job.size {
        bail!(
            "the draw target is {:?} {}x{}; the draw needs {:?} {}x{}",
            target.format(),
            target.width(),
            target.height(),
            job.target_format(),
            job.size.0,
            job.size.1
        );
    }
    // The JIT runs the program after the IR's bit-exact optimizations (TGSI files arrive as
    // written); the interpreter, the specification, runs it as given, so `--exec jit` against
    // `--exec interp` also checks the optimizer.
    let mut units = TextureUnits::new().with_filter_rule(job.driver.filter_rule());
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
    let vertex_shader =
        build_shader(&vertex_program, executor, job.math, job.driver).map_err(|e| StageError {
            stage: Processor::Vertex,
            message: format!("vertex shader: {e}"),
        })?;
    let fragment_shader =
        build_shader(&fragment_program, executor, job.math, job.driver).map_err(|e| {
            StageError {
                stage: Processor::Fragment,
                message: format!("fragment shader: {e}"),
            }
        })?;
    check_bindings(job, vertex_shader.signature())?;

    let vertex_buffers: Vec<&[[u32; 4]]> = constants.vertex.iter().map(Vec::as_slice).collect();
    let fragment_buffers: Vec<&[[u32; 4]]> = constants.fragment.iter().map(Vec::as_slice).collect();
    let vertices = Vertices::new(&job.vertices.registers, job.vertices.attributes);
    let rows = RenderTarget::of(target)?;
    // OpenGL window space has row 0 at the bottom of the picture.
    let rows = match job.convention {
        ClipConvention::OpenGl => rows.bottom_up(),
        _ => rows,
    };
    let drawn = storage.with_bindings(|vertex_storage, fragment_storage| {
        let state = DrawState {
            vertex_resources: ShaderResources {
                constants: &vertex_buffers,
                textures: &units,
                storage: vertex_storage,
            },
            fragment_resources: ShaderResources {
                constants: &fragment_buffers,
                textures: &units,
                storage: fragment_storage,
            },
            frag_coord: FragCoordConvention::from_program(&job.fragment_program),
            ..DrawState::new(&*vertex_shader, &*fragment_shader, job.convention)
        };
        raster::draw_triangles_into(&state, vertices, rows)
    });
    drawn.map_err(|e| {
        // One message (the raster error already says what the executor reported), kept apart
        // by stage so that callers can name the shader file.
        let stage = match e {
            raster::RasterError::VertexShader { .. } => Processor::Vertex,
            raster::RasterError::FragmentShader { .. } => Processor::Fragment,
            other => return anyhow::Error::from(other),
        };
        anyhow::Error::from(StageError {
            stage,
            message: e.to_string(),
        })
    })?;
    Ok(())
}

/// A shader stage of a draw that could not be built or failed while it ran (its instruction
/// budget or call stack exceeded, …); [`name_input_files`] puts its file in front.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct StageError {
    /// The stage that failed.
    pub stage: Processor,
    /// What happened, starting with the stage (`fragment shader failed on the quad at …`).
    pub message: String,
}

/// `error` with the file it concerns in front: the shader file of a [`StageError`] (the
/// messages of [`run_with_constants`] know the stage, the caller knows the files), the vertex
/// file of a draw whose triangles cover too much ([`raster::RasterError::Coverage`]).
pub fn name_input_files(
    error: anyhow::Error,
    vertex_shader: &Path,
    fragment_shader: &Path,
    vertices: &Path,
) -> anyhow::Error {
    if let Some(e) = error.downcast_ref::<StageError>() {
        let file = if e.stage == Processor::Vertex {
            vertex_shader
        } else {
            fragment_shader
        };
        return anyhow!("{}: {}", file.display(), e.message);
    }
    if let Some(e @ raster::RasterError::Coverage(_)) = error.downcast_ref::<raster::RasterError>()
    {
        return anyhow!("{}: {e}", vertices.display());
    }
    error
}

/// The large buffers `job` needs when run with `executor`: the framebuffer, the textures (with
/// the decoded copies the JIT samples), the vertices and their shaded outputs. For
/// [`check_memory`].
pub fn memory_use(job: &DrawJob, executor: Executor) -> MemoryUse {
    let mut usage = MemoryUse::new();
    let (w, h) = job.size;
    usage.add(
        format!("the framebuffer {w}x{h}"),
        // The target, and the RGBA8 copy it is encoded from when it is saved.
        Texture::estimated_bytes(Format::R8G8B8A8Unorm, w, h, 1, false).saturating_mul(2),
    );
    for (unit, texture) in &job.textures {
        usage.add(
            format!("texture {unit} {}x{}", texture.width(), texture.height()),
            Texture::estimated_bytes(
                texture.format(),
                texture.width(),
                texture.height(),
                texture.level_count(),
                executor == Executor::Jit,
            ),
        );
    }
    let vertex_bytes = (job.vertices.registers.len() as u64).saturating_mul(16);
    let outputs: u64 = job
        .vertex_program
        .declarations()
        .filter(|d| d.file == crate::ir::RegisterFile::Output)
        .map(|d| u64::from(d.last.saturating_sub(d.first)) + 1)
        .sum();
    let vertex_count = job.vertices.registers.len() as u64 / job.vertices.attributes.max(1) as u64;
    usage.add("the vertices", vertex_bytes);
    usage.add(
        "the shaded vertices",
        vertex_count.saturating_mul(outputs).saturating_mul(16),
    );
    usage
}

/// Refuses a draw whose buffers ([`memory_use`]) would need more than `budget` bytes, naming
/// the largest; called before the framebuffer is allocated.
pub fn check_memory(job: &DrawJob, executor: Executor, budget: u64) -> Result<()> {
    memory_use(job, executor)
        .check(budget, &format!("a {}x{} draw", job.size.0, job.size.1))
        .map_err(|e| anyhow!(e))
}

/// `program` after `opt::cleanup`, then, for a fragment program, specialized for the texture
/// units in `lane_local_units` (`opt::specialize`): the same bits, less work.
fn optimized(program: &Program, lane_local_units: Option<u64>) -> Program {
    let mut program = program.clone();
    crate::opt::cleanup(&mut program);
    if let Some(units) = lane_local_units {
        let options = crate::opt::SpecializeOptions {
            lane_local_units: units,
            ..crate::opt::SpecializeOptions::new(crate::jit::codegen::MAX_INLINE_TEX)
        };
        program = crate::opt::specialize(&program, &options).program;
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
    /// The storage buffers and images behind its `BUFFER`/`IMAGE` registers.
    pub memory: Vec<MemorySlot>,
}

impl CompiledStage {
    /// The program of a built stage and the blocks its reflection names behind its CONST
    /// buffers.
    pub fn of(stage: crate::shader::Stage) -> CompiledStage {
        CompiledStage {
            blocks: uniform_blocks(&stage.reflection, &stage.lowered),
            memory: storage::memory_slots(&stage.lowered.program, &stage.lowered.resources),
            program: stage.lowered.program,
        }
    }
}

/// Like [`compile_shader`], also returning the uniform blocks of WGSL and slang stages.
pub fn compile_stage(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
) -> Result<CompiledStage> {
    Ok(compile_stage_cached(path, expected, language, None)?.0)
}

/// [`compile_stage`] through the on-disk shader cache in `cache` (see
/// [`crate::shader::build_stage`]); also says what the cache did.
pub fn compile_stage_cached(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
    cache: Option<&Path>,
) -> Result<(CompiledStage, StageCacheUse)> {
    compile_stage_cached_with(
        path,
        expected,
        language,
        &crate::frontend::slang_lang::SlangOptions::default(),
        cache,
    )
}

/// [`compile_stage_cached`] with the options of a Slang-language stage (see
/// [`crate::shader::build_stage_with`]).
pub fn compile_stage_cached_with(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
    slang: &crate::frontend::slang_lang::SlangOptions,
    cache: Option<&Path>,
) -> Result<(CompiledStage, StageCacheUse)> {
    let (stage, used) = crate::shader::build_stage_with(path, expected, language, slang, cache)?;
    Ok((CompiledStage::of(stage), used))
}

/// One uniform buffer or push-constant block of a stage and the CONST buffer it is read from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UniformBlock {
    /// The `CONST[buffer]` the stage reads it from.
    pub buffer: u32,
    /// Size in bytes of that CONST buffer.
    pub size: u32,
    /// The block as the stage's reflection describes it.
    pub block: BlockReflection,
    /// A read-only storage buffer read as constant data (its data comes from
    /// [`bind_storage_buffers`]; the block names it and has no members).
    #[serde(default)]
    pub storage: bool,
}

impl UniformBlock {
    /// A push-constant (immediate) block rather than a uniform buffer.
    pub fn is_push_constants(&self) -> bool {
        self.block.set.is_none()
    }
}

/// The uniform and push-constant blocks a lowered stage reads, with their CONST buffers: its
/// resource slots joined with its reflection.
pub fn uniform_blocks(
    reflection: &StageReflection,
    lowered: &crate::frontend::lower::LoweredShader,
) -> Vec<UniformBlock> {
    use crate::frontend::lower::ResourceKind;
    let mut blocks = Vec::new();
    for slot in &lowered.resources {
        let (block, buffer, size) = match slot.kind {
            ResourceKind::UniformBuffer { buffer, size } => (
                reflection.uniform_buffer(slot.group, slot.binding),
                buffer,
                size,
            ),
            ResourceKind::PushConstants { buffer, size } => {
                (reflection.push_constants.as_ref(), buffer, size)
            }
            ResourceKind::StorageBuffer { buffer } => {
                blocks.push(UniformBlock {
                    buffer,
                    size: 0,
                    block: BlockReflection {
                        name: slot.name.clone(),
                        type_name: None,
                        set: Some(slot.group),
                        binding: Some(slot.binding),
                        size: 0,
                        members: Vec::new(),
                    },
                    storage: true,
                });
                continue;
            }
            _ => continue,
        };
        if let Some(block) = block {
            blocks.push(UniformBlock {
                buffer,
                size,
                block: block.clone(),
                storage: false,
            });
        }
    }
    blocks
}

/// Binds each `(name, rows)` of `buffers` (rows of 16 bytes, as [`parse_constants`] reads
/// them) to the read-only storage buffer of that name in either stage. A name neither stage
/// reads is an error listing the storage buffers they do read.
pub fn bind_storage_buffers(
    constants: &mut StageConstants,
    vertex: &[UniformBlock],
    fragment: &[UniformBlock],
    buffers: &[(String, Vec<[u32; 4]>)],
) -> Result<()> {
    for (name, rows) in buffers {
        let mut bound = false;
        for (blocks, stage) in [
            (vertex, &mut constants.vertex),
            (fragment, &mut constants.fragment),
        ] {
            for b in blocks
                .iter()
                .filter(|b| b.storage && b.block.name.as_deref() == Some(name.as_str()))
            {
                let i = b.buffer as usize;
                if stage.len() <= i {
                    stage.resize(i + 1, Vec::new());
                }
                stage[i] = rows.clone();
                bound = true;
            }
        }
        if !bound {
            let mut known: Vec<&str> = vertex
                .iter()
                .chain(fragment)
                .filter(|b| b.storage)
                .filter_map(|b| b.block.name.as_deref())
                .collect();
            known.sort_unstable();
            known.dedup();
            bail!(
                "--storage-buffer {name}: neither shader reads a storage buffer of that name (they \
                 read: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
    }
    Ok(())
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
    layout: TypeLayout,
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

/// Whether `--uniform` can set a member: it has a name and holds only 32-bit numbers.
fn settable(member: &Member) -> bool {
    !member.name.is_empty() && member.ty.components(0).is_some()
}

fn resolve_in(members: &[Member], steps: &[Step]) -> Option<(u32, TypeLayout)> {
    let Some(Step::Member(first)) = steps.first() else {
        return None;
    };
    let field = members.iter().find(|m| m.name == *first && settable(m))?;
    let (mut offset, mut layout) = (field.offset, field.ty.clone());
    let mut i = 1;
    while i < steps.len() {
        match (&steps[i], layout) {
            (
                Step::Index(n),
                TypeLayout::Array {
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
                TypeLayout::Matrix {
                    scalar,
                    columns,
                    rows,
                    column_stride,
                },
            ) if *n < columns => {
                offset += n * column_stride;
                layout = TypeLayout::Vector { scalar, size: rows };
            }
            (Step::Member(m), TypeLayout::Struct { members, .. }) => {
                let f = members.iter().find(|f| f.name == *m && settable(f))?;
                offset += f.offset;
                layout = f.ty.clone();
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
                    && (block.block.name.as_deref() == Some(*q)
                        || block.block.type_name.as_deref() == Some(*q)) =>
            {
                resolve_in(&block.block.members, &steps[1..])
            }
            _ => None,
        };
        if let Some((offset, layout)) =
            qualified.or_else(|| resolve_in(&block.block.members, steps))
        {
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
        .block
        .name
        .clone()
        .or_else(|| b.block.type_name.clone())
        .unwrap_or_else(|| "(unnamed)".into());
    if b.is_push_constants() {
        format!("push-constant block `{name}`")
    } else {
        format!(
            "uniform buffer `{name}` (set {} binding {})",
            b.block.set.unwrap_or(0),
            b.block.binding.unwrap_or(0)
        )
    }
}

fn parse_component(text: &str, kind: ScalarKind) -> Option<u32> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u32::from_str_radix(hex, 16).ok();
    }
    match kind {
        ScalarKind::Float => t.parse::<f32>().ok().map(f32::to_bits),
        ScalarKind::Sint => t.parse::<i32>().ok().map(|v| v as u32),
        ScalarKind::Uint | ScalarKind::Bool => t.parse::<u32>().ok(),
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
            if let (true, Some((_, rows))) = (b.is_push_constants(), push) {
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
        if !vertex
            .iter()
            .chain(fragment)
            .any(UniformBlock::is_push_constants)
        {
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
                    b.block
                        .members
                        .iter()
                        .filter(|m| settable(m))
                        .map(move |m| {
                            let q = b.block.name.as_ref().or(b.block.type_name.as_ref());
                            let full = match q {
                                Some(q) => format!("{q}.{}", m.name),
                                None => m.name.clone(),
                            };
                            format!("{full} ({})", m.ty.glsl_name())
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
        let key = |b: &UniformBlock| (b.block.set, b.block.binding);
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
        let components = first.layout.components(0).unwrap_or_default();
        let texts: Vec<&str> = values.split(',').map(str::trim).collect();
        if texts.len() != components.len() {
            bail!(
                "--uniform {name}: a {} takes {} value(s), found {}",
                first.layout.glsl_name(),
                components.len(),
                texts.len()
            );
        }
        let mut bits = Vec::with_capacity(texts.len());
        for (text, (_, kind)) in texts.iter().zip(&components) {
            let what = match kind {
                ScalarKind::Float => "a float",
                ScalarKind::Sint => "a signed integer",
                ScalarKind::Uint | ScalarKind::Bool => "an unsigned integer",
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
            let comps = t.layout.components(t.offset).unwrap_or_default();
            for ((offset, _), b) in comps.iter().zip(&bits) {
                store(buffers, t.block.buffer, *offset, *b);
            }
        }
    }
    Ok(out)
}
