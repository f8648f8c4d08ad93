//! Lowering of a validated `naga::Module` entry point to the TGSI IR, following Mesa's
//! `nir_to_tgsi` conventions so the result reads like (and runs like) what Mesa feeds softpipe.
//!
//! **Interface.** Vertex inputs `@location(n)` → `IN[n]`; `@builtin(vertex_index)` /
//! `instance_index` → `SV` `VERTEXID` / `INSTANCEID`. Varyings `@location(n)` → `GENERIC[n]`
//! (fragment inputs keep their interpolation: perspective, `LINEAR` for `linear`, `CONSTANT` for
//! `flat`); `base_vertex` / `base_instance` are the immediate 0 (draws start at vertex 0).
//! Vertex `@builtin(position)` → `OUT POSITION`. Fragment `@builtin(position)` → `IN`
//! `POSITION` with `FS_COORD_ORIGIN UPPER_LEFT` and `FS_COORD_PIXEL_CENTER HALF_INTEGER`, as WGSL
//! defines `position`; `@builtin(front_facing)` → `IN FACE` (true where FACE > 0);
//! `@location(n)` outputs → `COLOR[n]`; `@builtin(frag_depth)` → `OUT POSITION`.z.
//!
//! **Resources.** A `var<uniform>` at `@group(0) @binding(b)` is `CONST[b]`; uniform buffers of
//! other groups take the next buffers after the highest group-0 binding, in (group, binding)
//! order; the push-constant (immediate) block is the buffer after all of them. A member at byte offset `o` is `CONST[buf][o / 16]`, component
//! `(o % 16) / 4`, exactly naga's (std140-like) layout. A texture at `@binding(b)` is sampler unit
//! `b` (`DCL SAMP[b]`, `DCL SVIEW[b]`, TEX-family instructions); the samplers used with it are
//! reported in [`LoweredShader::resources`] (one texture used with two different samplers is an
//! error).
//!
//! **Values.** Booleans are `~0`/`0`; integers and floats share untyped registers; matrices are
//! column vectors; structs and arrays are flattened into consecutive registers, and every
//! function-local or private variable bigger than one register is a `TEMP ARRAY` so dynamic
//! indices go through `UARL`/`ADDR`. Functions are inlined (recursion is an error); `return` in
//! the middle of a function is a per-lane flag; loops with a `continuing` block that `continue`
//! targets run their body in an inner one-pass loop. Integer division follows WGSL (x / 0 = x,
//! x % 0 = 0, `i32::MIN / -1` = `i32::MIN`); float → integer conversions clamp to the target
//! range first, as WGSL requires.
//!
//! **Storage memory** (module `memory`): a read-only storage buffer is constant data,
//! `CONST[n]` after the push constants; a storage buffer the shader writes is `BUFFER[n]`
//! (`n` counts those buffers in (group, binding) order), read and written by byte offset with
//! `LOAD`/`STORE`, its atomics `ATOM*`; a storage image is `IMAGE[n]` (storage images in
//! (group, binding) order) with its target and format (32-bit RGBA/RG/R float, uint and sint,
//! RGBA8 and R8 unorm), loaded and stored at integer coordinates (then the layer).
//!
//! **Unsupported** (each is a `unsupported: <construct> at line N` error, never a panic or a
//! silent miscompile): compute and other non vertex/fragment stages; storage images of other
//! formats, image atomics and size queries of storage images, atomics outside storage buffers,
//! 8-byte values in storage buffers, workgroup memory, barriers, subgroup and ray-tracing operations, pipeline
//! overrides, `arrayLength`; f16/f64/i64/u64 types; binding arrays; depth textures and comparison
//! sampling (`textureSampleCompare*`, `textureGatherCompare`), `textureNumSamples` (a
//! multisampled texture is bound with one sample; a load of sample 0 reads its texel, of another
//! sample zero), `textureGather` on cube arrays, cube-array lookups with an explicit level
//! or bias; dynamic indexing of a vector through a pointer; `continue` inside a `switch` of a
//! loop that has a `continuing` block; structs or arrays as vertex inputs or fragment outputs
//! beyond flat `@location` members; the `dot4*Packed` functions; `isNan`/`isInf` on non-float
//! operands; integer matrices.
//!
//! **Expanded builtins** (module `builtins`): `asin`, `acos`, the hyperbolic functions,
//! `reflect`, `refract`, `faceForward`, `determinant`, `inverse`, `outer`, `modf`, `frexp`,
//! `ldexp`, the `pack*`/`unpack*` families, `quantizeToF16` and the bit counts follow the TGSI
//! Mesa 22.3 gives softpipe for the same GLSL builtins (float division is `DIV`, as there).

mod builder;
mod builtins;
mod expr;
mod memory;
mod sample_compare;
mod stmt;

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use naga::{Handle, ShaderStage, TypeInner};

use super::FrontendError;
use crate::ir::{
    Declaration, HeaderItem, ImageDecl, ImageFormat, InterpolateLocation, InterpolateMode,
    Interpolation, Processor, Program, Property, Register, RegisterFile, ReturnType,
    SamplerViewDecl, Semantic, SemanticName, TextureTarget,
};
use builder::{Builder, Slot};

/// A lowered entry point and the resource bindings it expects.
#[derive(Clone, Debug)]
pub struct LoweredShader {
    /// The TGSI program.
    pub program: Program,
    /// The entry point's name.
    pub entry_point: String,
    /// How the module's resource variables map to CONST buffers and sampler units.
    pub resources: Vec<ResourceSlot>,
}

/// One resource variable of the module and where the program reads it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResourceSlot {
    /// The variable name, if any.
    pub name: Option<String>,
    /// `@group`.
    pub group: u32,
    /// `@binding`.
    pub binding: u32,
    /// What the variable became.
    pub kind: ResourceKind,
}

/// The kind of a [`ResourceSlot`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ResourceKind {
    /// A uniform buffer read as `CONST[buffer]`, `size` bytes.
    UniformBuffer {
        /// The CONST buffer index.
        buffer: u32,
        /// Size in bytes.
        size: u32,
    },
    /// The push-constant (immediate) block, read as `CONST[buffer]`.
    PushConstants {
        /// The CONST buffer index.
        buffer: u32,
        /// Size in bytes.
        size: u32,
    },
    /// A read-only storage buffer (`StructuredBuffer`, `ByteAddressBuffer`, a `readonly`
    /// SSBO) read as constant data, `CONST[buffer]`; reads past the data bound read zero.
    StorageBuffer {
        /// The CONST buffer index.
        buffer: u32,
    },
    /// A storage buffer the shader writes (`RWStructuredBuffer`, `RWByteAddressBuffer`, an
    /// SSBO without `readonly`): `BUFFER[buffer]`, read and written by byte offset.
    ReadWriteBuffer {
        /// The BUFFER index.
        buffer: u32,
    },
    /// A storage image (`RWTexture2D`, `image2D`): `IMAGE[image]`.
    StorageImage {
        /// The IMAGE index.
        image: u32,
        /// The image target.
        #[serde(with = "target_name")]
        target: TextureTarget,
        /// The texel format.
        #[serde(with = "format_name")]
        format: ImageFormat,
        /// Whether the shader may write it.
        writable: bool,
    },
    /// A texture, bound to `SVIEW[unit]`/`SAMP[unit]`.
    Texture {
        /// The sampler unit.
        unit: u32,
        /// The texture target.
        #[serde(with = "target_name")]
        target: TextureTarget,
    },
    /// A sampler; its state must be bound to each of these units.
    Sampler {
        /// The units of the textures it samples.
        units: Vec<u32>,
    },
}

/// Serializes a [`TextureTarget`] by its TGSI name (`2D`, `SHADOW2D`, …).
mod target_name {
    use crate::ir::TextureTarget;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the target's TGSI name.
    pub fn serialize<S: Serializer>(target: &TextureTarget, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(target.name())
    }

    /// Reads a TGSI target name.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TextureTarget, D::Error> {
        let name = String::deserialize(d)?;
        TextureTarget::from_name(&name)
            .ok_or_else(|| D::Error::custom(format!("unknown texture target `{name}`")))
    }
}

/// Serializes an [`ImageFormat`] by its TGSI name (`PIPE_FORMAT_R32G32B32A32_FLOAT`, …).
mod format_name {
    use crate::ir::ImageFormat;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the format's TGSI name.
    pub fn serialize<S: Serializer>(format: &ImageFormat, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(format.name())
    }

    /// Reads a TGSI image format name.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ImageFormat, D::Error> {
        let name = String::deserialize(d)?;
        ImageFormat::from_name(&name)
            .ok_or_else(|| D::Error::custom(format!("unknown image format `{name}`")))
    }
}

/// A value: per-component slots of a scalar/vector, or the parts of a matrix, struct or array.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    V(Vec<Slot>),
    C(Vec<Value>),
}

impl Value {
    /// The slots of a scalar or vector value.
    pub fn slots(&self) -> &[Slot] {
        match self {
            Value::V(s) => s,
            Value::C(_) => &[],
        }
    }
}

/// Where a pointer points: a register range (`TEMP`, laid out one register per vector) or a
/// byte offset into a CONST buffer.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub file: RegisterFile,
    /// CONST buffer.
    pub dim: Option<u32>,
    /// Register index (register layout) or byte offset (CONST).
    pub base: u32,
    /// Component of a pointer to one vector component (register layout).
    pub comp: Option<u8>,
    /// Dynamic register offset (scalar integer), added through `ADDR`.
    pub dynamic: Option<Slot>,
    /// Dynamic component index and the vector size, for `v[i]` through a pointer.
    pub dyn_comp: Option<(Slot, u8)>,
    pub array_id: Option<u32>,
    /// The pointee type, shared: places are cloned for every access, and a uniform block's
    /// struct type (hundreds of named members in RetroArch shaders) made each clone O(members).
    pub ty: Rc<TypeInner>,
}

impl Place {
    /// The start of buffer `buffer` of `file` (CONST data or a storage buffer), byte-addressed.
    fn buffer_start(file: RegisterFile, buffer: u32, ty: Rc<TypeInner>) -> Place {
        Place {
            file,
            dim: Some(buffer),
            base: 0,
            comp: None,
            dynamic: None,
            dyn_comp: None,
            array_id: None,
            ty,
        }
    }

    /// Whether `base` counts bytes (CONST data and storage buffers) rather than registers.
    fn bytes(&self) -> bool {
        matches!(self.file, RegisterFile::Constant | RegisterFile::Buffer)
    }
}

/// A storage image as an `IMAGE` register.
#[derive(Clone, Debug)]
pub(crate) struct ImageRef {
    pub index: u32,
}

/// A texture as a sampler unit.
#[derive(Clone, Debug)]
pub(crate) struct TexRef {
    pub unit: u32,
    pub target: TextureTarget,
    pub dim: naga::ImageDimension,
    pub global: Handle<naga::GlobalVariable>,
}

/// What an expression evaluated to.
#[derive(Clone, Debug)]
pub(crate) enum Ev {
    Val(Value),
    Ptr(Place),
    Tex(TexRef),
    Image(ImageRef),
    Sampler(Handle<naga::GlobalVariable>),
}

/// An entry-point output register and what part of the result it takes.
struct OutSlot {
    reg: u32,
    /// Member path into the result value (empty for a non-struct result).
    path: Vec<usize>,
    /// Write only `.z` (fragment depth).
    depth: bool,
}

/// Module-wide lowering state shared by the entry point and every inlined call.
pub(crate) struct Lowerer<'a> {
    pub module: &'a naga::Module,
    pub info: &'a naga::valid::ModuleInfo,
    pub source: Option<&'a str>,
    pub file: &'a str,
    pub stage: ShaderStage,
    pub b: Builder,
    /// The span of the statement or expression being lowered, for errors.
    pub span: naga::Span,
    pub globals: HashMap<Handle<naga::GlobalVariable>, Ev>,
    /// Module types as [`Place::ty`] shares them, each copied once.
    pub shared_types: HashMap<Handle<naga::Type>, Rc<TypeInner>>,
    pub call_stack: Vec<Handle<naga::Function>>,
    /// Sampler global used with each unit.
    pub unit_sampler: BTreeMap<u32, Handle<naga::GlobalVariable>>,
    pub units: BTreeMap<u32, TextureTarget>,
    pub header: Vec<Declaration>,
    outputs: Vec<OutSlot>,
    uses_position_input: bool,
    /// Statement lists being lowered around the current one (nested blocks, the rest of a
    /// block after a `return`, inlined calls), bounded by [`MAX_LOWERING_DEPTH`].
    pub depth: usize,
}

/// Deepest recursion of the lowering over nested statement lists: a source nested
/// [`MAX_NESTING_DEPTH`](super::limits::MAX_NESTING_DEPTH) deep, through calls, stays below it.
pub const MAX_LOWERING_DEPTH: usize = 4 * super::limits::MAX_NESTING_DEPTH;

/// The most instructions the lowering may emit for one entry point (before the cleanup), so
/// calls inlined into calls cannot grow a small source exponentially.
pub const MAX_LOWERED_INSTRUCTIONS: usize = 1 << 20;

type R<T> = Result<T, FrontendError>;

/// Lowers entry point `entry` of a validated `module` (`info` from naga's validator). `source`
/// (the text the module came from) turns spans into line numbers in errors. The program is
/// cleaned up by [`crate::opt::cleanup`] (bit-exact unrolling, copy propagation, dead writes,
/// register compaction).
pub fn lower(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: usize,
    source: Option<&str>,
    file: &str,
) -> Result<LoweredShader, FrontendError> {
    super::limits::on_frontend_stack(|| {
        let mut shader = lower_unoptimized(module, info, entry, source, file)?;
        crate::opt::cleanup(&mut shader.program);
        Ok(shader)
    })
}

/// [`lower`] without the cleanup: one `MOV` per naga load and store (for tests of the
/// optimizer and for reading the lowering's direct output).
pub fn lower_unoptimized(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: usize,
    source: Option<&str>,
    file: &str,
) -> Result<LoweredShader, FrontendError> {
    let ep = module
        .entry_points
        .get(entry)
        .ok_or_else(|| FrontendError::new(file, 0, 0, format!("no entry point number {entry}")))?;
    let processor = match ep.stage {
        ShaderStage::Vertex => Processor::Vertex,
        ShaderStage::Fragment => Processor::Fragment,
        other => {
            return Err(FrontendError::new(
                file,
                0,
                0,
                format!("unsupported: {other:?} entry point `{}`", ep.name),
            ))
        }
    };
    let mut l = Lowerer {
        module,
        info,
        source,
        file,
        stage: ep.stage,
        b: Builder::default(),
        span: naga::Span::default(),
        globals: HashMap::new(),
        shared_types: HashMap::new(),
        call_stack: Vec::new(),
        unit_sampler: BTreeMap::new(),
        units: BTreeMap::new(),
        header: Vec::new(),
        outputs: Vec::new(),
        uses_position_input: false,
        depth: 0,
    };
    let mut resources = l.globals_setup(info.get_entry_point(entry))?;
    let args = l.entry_inputs(ep)?;
    l.entry_outputs(ep)?;
    l.lower_function(&ep.function, info.get_entry_point(entry), args, true)?;
    l.b.flow(crate::ir::Opcode::END);
    l.check_block_nesting()?;

    for slot in &mut resources {
        if let ResourceKind::Sampler { units } = &mut slot.kind {
            let g = module.global_variables.iter().find(|(_, v)| {
                v.binding
                    .as_ref()
                    .is_some_and(|b| b.group == slot.group && b.binding == slot.binding)
            });
            if let Some((h, _)) = g {
                units.extend(
                    l.unit_sampler
                        .iter()
                        .filter(|(_, &s)| s == h)
                        .map(|(&u, _)| u),
                );
            }
        }
    }
    let program = l.finish(processor);
    Ok(LoweredShader {
        program,
        entry_point: ep.name.clone(),
        resources,
    })
}

/// Registers one vec4 per vector, per matrix column, per flattened struct member / array element.
pub(crate) fn reg_size(module: &naga::Module, ty: &TypeInner) -> u32 {
    match ty {
        TypeInner::Matrix { columns, .. } => *columns as u32,
        TypeInner::Array {
            base,
            size: naga::ArraySize::Constant(n),
            ..
        } => n
            .get()
            .saturating_mul(reg_size(module, &module.types[*base].inner)),
        TypeInner::Struct { members, .. } => members.iter().fold(0u32, |sum, m| {
            sum.saturating_add(reg_size(module, &module.types[m.ty].inner))
        }),
        _ => 1,
    }
}

/// Byte size of a type in naga's layout.
pub(crate) fn byte_size(ty: &TypeInner) -> u32 {
    match ty {
        TypeInner::Scalar(s) => u32::from(s.width),
        TypeInner::Vector { size, scalar } => *size as u32 * u32::from(scalar.width),
        TypeInner::Matrix { columns, rows, .. } => *columns as u32 * column_stride(*rows),
        TypeInner::Array {
            size: naga::ArraySize::Constant(n),
            stride,
            ..
        } => n.get() * stride,
        TypeInner::Struct { span, .. } => *span,
        _ => 0,
    }
}

/// Byte distance between f32 matrix columns (vec2 columns are 8 bytes apart, others 16).
pub(crate) fn column_stride(rows: naga::VectorSize) -> u32 {
    if rows == naga::VectorSize::Bi {
        8
    } else {
        16
    }
}

/// A storage buffer the shader only reads.
fn read_only_storage(space: naga::AddressSpace) -> bool {
    matches!(space, naga::AddressSpace::Storage { access } if !access.contains(naga::StorageAccess::STORE))
}

/// The IR's format for a storage image of naga format `format`, where it has one.
fn image_format(format: naga::StorageFormat) -> Option<ImageFormat> {
    use naga::StorageFormat as F;
    Some(match format {
        F::Rgba32Float => ImageFormat::Rgba32Float,
        F::Rg32Float => ImageFormat::Rg32Float,
        F::R32Float => ImageFormat::R32Float,
        F::Rgba32Uint => ImageFormat::Rgba32Uint,
        F::Rg32Uint => ImageFormat::Rg32Uint,
        F::R32Uint => ImageFormat::R32Uint,
        F::Rgba32Sint => ImageFormat::Rgba32Sint,
        F::Rg32Sint => ImageFormat::Rg32Sint,
        F::R32Sint => ImageFormat::R32Sint,
        F::Rgba8Unorm => ImageFormat::Rgba8Unorm,
        F::R8Unorm => ImageFormat::R8Unorm,
        _ => return None,
    })
}

fn texture_target(dim: naga::ImageDimension, arrayed: bool) -> Option<TextureTarget> {
    use naga::ImageDimension as D;
    Some(match (dim, arrayed) {
        (D::D1, false) => TextureTarget::Tex1D,
        (D::D1, true) => TextureTarget::Tex1DArray,
        (D::D2, false) => TextureTarget::Tex2D,
        (D::D2, true) => TextureTarget::Tex2DArray,
        (D::D3, false) => TextureTarget::Tex3D,
        (D::Cube, false) => TextureTarget::Cube,
        (D::Cube, true) => TextureTarget::CubeArray,
        (D::D3, true) => return None,
    })
}

impl<'a> Lowerer<'a> {
    /// An error at the current span.
    pub fn err(&self, message: impl Into<String>) -> FrontendError {
        FrontendError::at_span(self.file, self.source, self.span, message)
    }

    /// An `unsupported: …` error naming the current line.
    pub fn unsupported<T>(&self, what: impl std::fmt::Display) -> R<T> {
        let line = match self.source {
            Some(src) if self.span.is_defined() => {
                format!(" at line {}", self.span.location(src).line_number)
            }
            _ => String::new(),
        };
        Err(self.err(format!("unsupported: {what}{line}")))
    }

    fn globals_setup(&mut self, uses: &naga::valid::FunctionInfo) -> R<Vec<ResourceSlot>> {
        let module = self.module;
        let mut resources = Vec::new();
        let mut buffers: BTreeMap<u32, u32> = BTreeMap::new();
        // Group 0 keeps `binding` as the buffer index (what `draw --consts` and the docs rely
        // on); other groups' uniform buffers follow in (group, binding) order, then the
        // push-constant block.
        let uniform_bindings: std::collections::BTreeSet<(u32, u32)> = module
            .global_variables
            .iter()
            .filter(|(_, g)| g.space == naga::AddressSpace::Uniform)
            .filter_map(|(_, g)| g.binding.as_ref().map(|b| (b.group, b.binding)))
            .collect();
        let mut next_buffer = uniform_bindings
            .iter()
            .filter(|(g, _)| *g == 0)
            .map(|(_, b)| b + 1)
            .max()
            .unwrap_or(0);
        let mut uniform_buffer: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        for &(g, b) in &uniform_bindings {
            let buffer = if g == 0 {
                b
            } else {
                next_buffer += 1;
                next_buffer - 1
            };
            uniform_buffer.insert((g, b), buffer);
        }
        let push_buffer = next_buffer;
        // Read-only storage buffers come after the push-constant block, in (group, binding)
        // order, so that they move no other buffer.
        let storage_buffer: BTreeMap<(u32, u32), u32> = module
            .global_variables
            .iter()
            .filter(|(_, g)| read_only_storage(g.space))
            .filter_map(|(_, g)| g.binding.as_ref().map(|b| (b.group, b.binding)))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .zip(push_buffer + 1..)
            .collect();
        // Written storage buffers are BUFFER[0..] and storage images IMAGE[0..], each in
        // (group, binding) order.
        let numbered = |keep: &dyn Fn(&naga::GlobalVariable) -> bool| -> BTreeMap<(u32, u32), u32> {
            module
                .global_variables
                .iter()
                .filter(|(_, g)| keep(g))
                .filter_map(|(_, g)| g.binding.as_ref().map(|b| (b.group, b.binding)))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .zip(0..)
                .collect()
        };
        let rw_buffer = numbered(&|g| {
            matches!(g.space, naga::AddressSpace::Storage { .. }) && !read_only_storage(g.space)
        });
        let storage_image = numbered(&|g| {
            matches!(
                module.types[g.ty].inner,
                TypeInner::Image {
                    class: naga::ImageClass::Storage { .. },
                    ..
                }
            )
        });
        let mut texture_sets: BTreeMap<u32, u32> = BTreeMap::new();
        for (h, g) in module.global_variables.iter() {
            self.span = module.global_variables.get_span(h);
            let inner = &module.types[g.ty].inner;
            let (group, binding) = g
                .binding
                .as_ref()
                .map(|b| (b.group, b.binding))
                .unwrap_or((0, 0));
            match g.space {
                // A module may hold one immediate block per entry point; only this entry
                // point's own one is its push-constant buffer.
                naga::AddressSpace::Immediate if uses[h].is_empty() => {}
                naga::AddressSpace::Uniform | naga::AddressSpace::Immediate => {
                    let (buffer, push) = if g.space == naga::AddressSpace::Uniform {
                        (
                            uniform_buffer
                                .get(&(group, binding))
                                .copied()
                                .unwrap_or(binding),
                            false,
                        )
                    } else {
                        (push_buffer, true)
                    };
                    let size = byte_size(inner);
                    if buffers.insert(buffer, size).is_some() {
                        return self.unsupported(format!(
                            "two uniform buffers at group {group} binding {binding}"
                        ));
                    }
                    let regs = size.div_ceil(16).max(1);
                    let mut d = Declaration::new(RegisterFile::Constant, 0, regs - 1);
                    d.dimension = Some(buffer);
                    self.header.push(d);
                    resources.push(ResourceSlot {
                        name: g.name.clone(),
                        group,
                        binding,
                        kind: if push {
                            ResourceKind::PushConstants { buffer, size }
                        } else {
                            ResourceKind::UniformBuffer { buffer, size }
                        },
                    });
                    let ty = self.shared_type(g.ty);
                    self.globals.insert(
                        h,
                        Ev::Ptr(Place::buffer_start(RegisterFile::Constant, buffer, ty)),
                    );
                }
                naga::AddressSpace::Storage { .. } if read_only_storage(g.space) => {
                    let Some(&buffer) = storage_buffer.get(&(group, binding)) else {
                        return self.unsupported("a storage buffer without a binding");
                    };
                    // Runtime-sized data: the declaration covers the fixed part; indirect reads
                    // reach whatever is bound.
                    let regs = byte_size(inner).div_ceil(16).max(1);
                    let mut d = Declaration::new(RegisterFile::Constant, 0, regs - 1);
                    d.dimension = Some(buffer);
                    self.header.push(d);
                    resources.push(ResourceSlot {
                        name: g.name.clone(),
                        group,
                        binding,
                        kind: ResourceKind::StorageBuffer { buffer },
                    });
                    let ty = self.shared_type(g.ty);
                    self.globals.insert(
                        h,
                        Ev::Ptr(Place::buffer_start(RegisterFile::Constant, buffer, ty)),
                    );
                }
                naga::AddressSpace::Storage { .. } => {
                    let Some(&buffer) = rw_buffer.get(&(group, binding)) else {
                        return self.unsupported("a storage buffer without a binding");
                    };
                    self.header
                        .push(Declaration::new(RegisterFile::Buffer, buffer, buffer));
                    resources.push(ResourceSlot {
                        name: g.name.clone(),
                        group,
                        binding,
                        kind: ResourceKind::ReadWriteBuffer { buffer },
                    });
                    let ty = self.shared_type(g.ty);
                    self.globals.insert(
                        h,
                        Ev::Ptr(Place::buffer_start(RegisterFile::Buffer, buffer, ty)),
                    );
                }
                naga::AddressSpace::Handle => match inner {
                    TypeInner::Image {
                        dim,
                        arrayed,
                        class: naga::ImageClass::Storage { format, access },
                    } => {
                        // Unused images of kinds the IR lacks are harmless; a use fails later.
                        let (Some(target), Some(format)) =
                            (texture_target(*dim, *arrayed), image_format(*format))
                        else {
                            continue;
                        };
                        if target.image_coords().is_none() {
                            continue;
                        }
                        let Some(&image) = storage_image.get(&(group, binding)) else {
                            return self.unsupported("a storage image without a binding");
                        };
                        let writable = access.contains(naga::StorageAccess::STORE);
                        let mut d = Declaration::new(RegisterFile::Image, image, image);
                        d.image = Some(ImageDecl {
                            target,
                            format,
                            writable,
                        });
                        self.header.push(d);
                        resources.push(ResourceSlot {
                            name: g.name.clone(),
                            group,
                            binding,
                            kind: ResourceKind::StorageImage {
                                image,
                                target,
                                format,
                                writable,
                            },
                        });
                        self.globals.insert(h, Ev::Image(ImageRef { index: image }));
                    }
                    TypeInner::Image {
                        dim,
                        arrayed,
                        // softgpu's textures hold one sample: a multisampled texture is the
                        // one-sample texture bound at its binding. A depth texture is a float
                        // texture whose first component is the depth.
                        class:
                            class @ (naga::ImageClass::Sampled { .. } | naga::ImageClass::Depth { .. }),
                    } => {
                        let kind = match class {
                            naga::ImageClass::Sampled { kind, .. } => *kind,
                            _ => naga::ScalarKind::Float,
                        };
                        let Some(target) = texture_target(*dim, *arrayed) else {
                            return self.unsupported("arrayed 3D texture");
                        };
                        let ret = match kind {
                            naga::ScalarKind::Sint => ReturnType::Sint,
                            naga::ScalarKind::Uint => ReturnType::Uint,
                            _ => ReturnType::Float,
                        };
                        // Units are bindings: textures of two descriptor sets at one binding
                        // would share a unit.
                        if let Some(other) = texture_sets.insert(binding, group) {
                            if other != group {
                                return self.unsupported(format!(
                                    "textures at binding {binding} of descriptor sets {other} and \
                                     {group} (texture units are bindings)"
                                ));
                            }
                        }
                        self.units.insert(binding, target);
                        let mut samp = Declaration::new(RegisterFile::Sampler, binding, binding);
                        samp.usage_mask = 0xF;
                        self.header.push(samp);
                        let mut view =
                            Declaration::new(RegisterFile::SamplerView, binding, binding);
                        view.sampler_view = Some(SamplerViewDecl {
                            target,
                            return_type: [ret; 4],
                        });
                        self.header.push(view);
                        resources.push(ResourceSlot {
                            name: g.name.clone(),
                            group,
                            binding,
                            kind: ResourceKind::Texture {
                                unit: binding,
                                target,
                            },
                        });
                        self.globals.insert(
                            h,
                            Ev::Tex(TexRef {
                                unit: binding,
                                target,
                                dim: *dim,
                                global: h,
                            }),
                        );
                    }
                    // A comparison sampler compares as the sampler bound to the unit says.
                    TypeInner::Sampler { .. } => {
                        resources.push(ResourceSlot {
                            name: g.name.clone(),
                            group,
                            binding,
                            kind: ResourceKind::Sampler { units: Vec::new() },
                        });
                        self.globals.insert(h, Ev::Sampler(h));
                    }
                    _ => {
                        // Unused resources of unsupported kinds are harmless; a use fails later.
                    }
                },
                naga::AddressSpace::Private => {
                    let ty = self.shared_type(g.ty);
                    let place = self.alloc_storage(ty)?;
                    self.globals.insert(h, Ev::Ptr(place));
                }
                _ => {}
            }
        }
        Ok(resources)
    }

    /// Module type `ty`, shared (copied from the module on first use).
    pub fn shared_type(&mut self, ty: Handle<naga::Type>) -> Rc<TypeInner> {
        let module = self.module;
        self.shared_types
            .entry(ty)
            .or_insert_with(|| Rc::new(module.types[ty].inner.clone()))
            .clone()
    }

    /// Fresh temporaries for a variable of type `ty`; more than one register makes a TEMP ARRAY.
    pub fn alloc_storage(&mut self, ty: Rc<TypeInner>) -> R<Place> {
        let n = reg_size(self.module, &ty);
        self.check_registers(n)?;
        let (base, array_id) = if n > 1 {
            let (first, id) = self.b.temp_array(n);
            (first, Some(id))
        } else {
            (self.b.temp().index as u32, None)
        };
        Ok(Place {
            file: RegisterFile::Temporary,
            dim: None,
            base,
            comp: None,
            dynamic: None,
            dyn_comp: None,
            array_id,
            ty,
        })
    }

    /// Fails when the blocks of the program nest deeper than the validator accepts
    /// ([`ir::validate::MAX_NESTING`](crate::ir::validate::MAX_NESTING)): each loop of the
    /// source becomes a few nested blocks.
    fn check_block_nesting(&self) -> R<()> {
        use crate::ir::Opcode;
        let limit = crate::ir::validate::MAX_NESTING;
        let mut depth = 0usize;
        for inst in &self.b.insts {
            match inst.opcode {
                Opcode::IF | Opcode::UIF | Opcode::BGNLOOP | Opcode::SWITCH | Opcode::BGNSUB => {
                    depth += 1;
                    if depth > limit {
                        return Err(FrontendError::new(
                            self.file,
                            0,
                            0,
                            format!(
                                "the shader lowers to blocks nested more than {limit} deep \
                                 (each loop becomes two or three; see docs/limits.md)"
                            ),
                        ));
                    }
                }
                Opcode::ENDIF | Opcode::ENDLOOP | Opcode::ENDSWITCH | Opcode::ENDSUB => {
                    depth = depth.saturating_sub(1)
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Fails when `more` temporaries would take the program past
    /// [`ir::validate::MAX_REGISTERS`](crate::ir::validate::MAX_REGISTERS), before any is used.
    pub fn check_registers(&self, more: u32) -> R<()> {
        let limit = crate::ir::validate::MAX_REGISTERS;
        if u64::from(self.b.next_temp) + u64::from(more) > u64::from(limit) {
            return Err(self.err(format!(
                "a variable of {more} registers (one per vector, matrix column and array \
                 element) takes the program past the {limit} temporaries it may have \
                 (see docs/limits.md)"
            )));
        }
        Ok(())
    }

    fn io_decl(&mut self, file: RegisterFile, index: u32, size: u32) -> Declaration {
        let mut d = Declaration::new(file, index, index);
        d.usage_mask = ((1u32 << size) - 1) as u8;
        d
    }

    fn entry_inputs(&mut self, ep: &naga::EntryPoint) -> R<Vec<Ev>> {
        let module = self.module;
        let mut args = Vec::new();
        let mut next_in = 0u32;
        let mut next_sv = 0u32;
        for arg in &ep.function.arguments {
            let inner = &module.types[arg.ty].inner;
            let value = match (&arg.binding, inner) {
                (Some(b), _) => self.input_binding(b, inner, &mut next_in, &mut next_sv)?,
                (None, TypeInner::Struct { members, .. }) => {
                    let mut parts = Vec::new();
                    for m in members {
                        let Some(b) = &m.binding else {
                            return self.unsupported("entry-point struct member without binding");
                        };
                        let mi = &module.types[m.ty].inner;
                        parts.push(self.input_binding(b, mi, &mut next_in, &mut next_sv)?);
                    }
                    Value::C(parts)
                }
                _ => return self.unsupported("entry-point argument without binding"),
            };
            args.push(Ev::Val(value));
        }
        Ok(args)
    }

    fn vector_size(&self, inner: &TypeInner) -> R<u32> {
        match inner {
            TypeInner::Scalar(s) if s.width == 4 => Ok(1),
            TypeInner::Vector { size, scalar } if scalar.width == 4 => Ok(*size as u32),
            other => self.unsupported(format!("shader interface of type {other:?}")),
        }
    }

    fn input_binding(
        &mut self,
        binding: &naga::Binding,
        inner: &TypeInner,
        next_in: &mut u32,
        next_sv: &mut u32,
    ) -> R<Value> {
        let vertex = self.stage == ShaderStage::Vertex;
        match binding {
            naga::Binding::Location {
                location,
                interpolation,
                ..
            } => {
                let n = self.vector_size(inner)?;
                let index = if vertex { *location } else { *next_in };
                if !vertex {
                    *next_in += 1;
                }
                let mut d = self.io_decl(RegisterFile::Input, index, n);
                if !vertex {
                    d.semantic = Some(Semantic {
                        name: SemanticName::Generic,
                        index: *location,
                    });
                    let mode = match interpolation {
                        Some(naga::Interpolation::Flat) => InterpolateMode::Constant,
                        Some(naga::Interpolation::Linear) => InterpolateMode::Linear,
                        _ => InterpolateMode::Perspective,
                    };
                    d.interpolation = Some(Interpolation {
                        mode,
                        location: InterpolateLocation::Center,
                    });
                }
                self.header.push(d);
                Ok(Value::V(builder::slots_of(
                    Register::new(RegisterFile::Input, index as i32),
                    n as usize,
                )))
            }
            naga::Binding::BuiltIn(bi) => match (bi, vertex) {
                (naga::BuiltIn::VertexIndex | naga::BuiltIn::InstanceIndex, true) => {
                    let name = if *bi == naga::BuiltIn::VertexIndex {
                        SemanticName::VertexId
                    } else {
                        SemanticName::InstanceId
                    };
                    let index = *next_sv;
                    *next_sv += 1;
                    let mut d = self.io_decl(RegisterFile::SystemValue, index, 1);
                    d.semantic = Some(Semantic { name, index: 0 });
                    self.header.push(d);
                    Ok(Value::V(builder::slots_of(
                        Register::new(RegisterFile::SystemValue, index as i32),
                        1,
                    )))
                }
                (naga::BuiltIn::Position { .. }, false) => {
                    let index = *next_in;
                    *next_in += 1;
                    let mut d = self.io_decl(RegisterFile::Input, index, 4);
                    d.semantic = Some(Semantic {
                        name: SemanticName::Position,
                        index: 0,
                    });
                    d.interpolation = Some(Interpolation {
                        mode: InterpolateMode::Linear,
                        location: InterpolateLocation::Center,
                    });
                    self.header.push(d);
                    self.uses_position_input = true;
                    Ok(Value::V(builder::slots_of(
                        Register::new(RegisterFile::Input, index as i32),
                        4,
                    )))
                }
                (naga::BuiltIn::FrontFacing, false) => {
                    let index = *next_in;
                    *next_in += 1;
                    let mut d = self.io_decl(RegisterFile::Input, index, 1);
                    d.semantic = Some(Semantic {
                        name: SemanticName::Face,
                        index: 0,
                    });
                    d.interpolation = Some(Interpolation {
                        mode: InterpolateMode::Constant,
                        location: InterpolateLocation::Center,
                    });
                    self.header.push(d);
                    let face = Slot {
                        reg: Register::new(RegisterFile::Input, index as i32),
                        comp: 0,
                    };
                    let zero = self.b.immf(0.0);
                    let r = self.b.op(
                        crate::ir::Opcode::FSLT,
                        1,
                        &[builder::s(&[zero]), builder::s(&[face])],
                    );
                    Ok(Value::V(r))
                }
                // softgpu draws start at vertex 0 and instance 0 (no base vertex or first
                // instance), so both bases are 0; Slang reads SV_VertexID as
                // `VertexIndex - BaseVertex`.
                (naga::BuiltIn::BaseVertex | naga::BuiltIn::BaseInstance, true) => {
                    Ok(Value::V(vec![self.b.imm(0)]))
                }
                (other, _) => self.unsupported(format!(
                    "@builtin({other:?}) input of a {} shader",
                    if vertex { "vertex" } else { "fragment" }
                )),
            },
        }
    }

    fn entry_outputs(&mut self, ep: &naga::EntryPoint) -> R<()> {
        let module = self.module;
        let Some(result) = &ep.function.result else {
            return Ok(());
        };
        let inner = &module.types[result.ty].inner;
        let mut list: Vec<(Vec<usize>, naga::Binding, TypeInner)> = Vec::new();
        match (&result.binding, inner) {
            (Some(b), _) => list.push((vec![], b.clone(), inner.clone())),
            (None, TypeInner::Struct { members, .. }) => {
                for (i, m) in members.iter().enumerate() {
                    let Some(b) = &m.binding else {
                        return self.unsupported("entry-point result member without binding");
                    };
                    list.push((vec![i], b.clone(), module.types[m.ty].inner.clone()));
                }
            }
            _ => return self.unsupported("entry-point result without binding"),
        }
        let vertex = self.stage == ShaderStage::Vertex;
        for (next, (path, binding, ty)) in list.into_iter().enumerate() {
            let n = self.vector_size(&ty)?;
            let reg = next as u32;
            let (semantic, depth) = match (&binding, vertex) {
                (naga::Binding::Location { location, .. }, true) => (
                    Semantic {
                        name: SemanticName::Generic,
                        index: *location,
                    },
                    false,
                ),
                (naga::Binding::Location { location, .. }, false) => (
                    Semantic {
                        name: SemanticName::Color,
                        index: *location,
                    },
                    false,
                ),
                (naga::Binding::BuiltIn(naga::BuiltIn::Position { .. }), true) => (
                    Semantic {
                        name: SemanticName::Position,
                        index: 0,
                    },
                    false,
                ),
                (naga::Binding::BuiltIn(naga::BuiltIn::FragDepth), false) => (
                    Semantic {
                        name: SemanticName::Position,
                        index: 0,
                    },
                    true,
                ),
                (naga::Binding::BuiltIn(other), _) => {
                    return self.unsupported(format!("@builtin({other:?}) output"))
                }
            };
            let mut d = self.io_decl(RegisterFile::Output, reg, if depth { 4 } else { n });
            if depth {
                d.usage_mask = 0b100;
            }
            d.semantic = Some(semantic);
            self.header.push(d);
            self.outputs.push(OutSlot { reg, path, depth });
        }
        Ok(())
    }

    /// Writes an entry point's returned value to the output registers.
    pub fn write_outputs(&mut self, value: &Value) -> R<()> {
        for i in 0..self.outputs.len() {
            let mut v = value;
            for &p in &self.outputs[i].path {
                v = match v {
                    Value::C(parts) if p < parts.len() => &parts[p],
                    _ => return Err(self.err("entry-point result does not match its type")),
                };
            }
            let slots = v.slots().to_vec();
            if slots.is_empty() {
                return Err(self.err("entry-point result member is not a scalar or vector"));
            }
            let reg = Register::new(RegisterFile::Output, self.outputs[i].reg as i32);
            let first = if self.outputs[i].depth { 2 } else { 0 };
            self.b.store(reg, first, &slots);
        }
        Ok(())
    }

    fn finish(self, processor: Processor) -> Program {
        let mut p = Program::new(processor);
        if processor == Processor::Fragment && self.uses_position_input {
            for (name, value) in [
                ("FS_COORD_ORIGIN", "UPPER_LEFT"),
                ("FS_COORD_PIXEL_CENTER", "HALF_INTEGER"),
            ] {
                p.header.push(HeaderItem::Property(Property {
                    name: name.into(),
                    values: vec![value.into()],
                }));
            }
        }
        let file_order = |f: RegisterFile| match f {
            RegisterFile::Input => 0,
            RegisterFile::SystemValue => 1,
            RegisterFile::Output => 2,
            RegisterFile::Sampler => 3,
            RegisterFile::SamplerView => 4,
            RegisterFile::Constant => 5,
            _ => 6,
        };
        let mut decls = self.header;
        decls.sort_by_key(|d| (file_order(d.file), d.dimension, d.first));
        for d in decls {
            p.header.push(HeaderItem::Declaration(d));
        }
        // Plain temporaries fill the gaps between the arrays.
        let mut ranges: Vec<(u32, u32, Option<u32>)> = self
            .b
            .arrays
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| (a, b, Some(i as u32 + 1)))
            .collect();
        let mut covered = vec![false; self.b.next_temp as usize];
        for &(a, b, _) in &ranges {
            for c in &mut covered[a as usize..=b as usize] {
                *c = true;
            }
        }
        let mut i = 0;
        while i < covered.len() {
            if covered[i] {
                i += 1;
                continue;
            }
            let start = i;
            while i < covered.len() && !covered[i] {
                i += 1;
            }
            ranges.push((start as u32, i as u32 - 1, None));
        }
        ranges.sort();
        for (a, b, id) in ranges {
            let mut d = Declaration::new(RegisterFile::Temporary, a, b);
            d.array_id = id;
            p.header.push(HeaderItem::Declaration(d));
        }
        if self.b.uses_addr {
            p.header.push(HeaderItem::Declaration(Declaration::new(
                RegisterFile::Address,
                0,
                0,
            )));
        }
        for imm in self.b.immediates() {
            p.header.push(HeaderItem::Immediate(imm));
        }
        p.instructions = self.b.insts;
        p
    }
}

/// Stage rules checked on the unvalidated module, so the error names the offending line (naga's
/// validator only names the entry point): `discard`, derivatives and implicit-derivative texture
/// sampling are fragment-only.
pub fn check_stage_rules(
    module: &naga::Module,
    source: Option<&str>,
    file: &str,
) -> Result<(), FrontendError> {
    for ep in &module.entry_points {
        if ep.stage != ShaderStage::Vertex {
            continue;
        }
        let mut visited = Vec::new();
        if let Some((span, what)) = find_fragment_only(module, &ep.function, &mut visited) {
            let line = match source {
                Some(src) if span.is_defined() => {
                    format!(" (line {})", span.location(src).line_number)
                }
                _ => String::new(),
            };
            return Err(FrontendError::at_span(
                file,
                source,
                span,
                format!(
                    "{what} is only allowed in a fragment shader, not in vertex entry point `{}`{line}",
                    ep.name
                ),
            ));
        }
    }
    Ok(())
}

fn find_fragment_only(
    module: &naga::Module,
    func: &naga::Function,
    visited: &mut Vec<Handle<naga::Function>>,
) -> Option<(naga::Span, &'static str)> {
    for (h, e) in func.expressions.iter() {
        let what = match e {
            naga::Expression::Derivative { .. } => "a derivative",
            naga::Expression::ImageSample {
                level: naga::SampleLevel::Auto,
                ..
            } => "textureSample (implicit derivatives)",
            naga::Expression::ImageSample {
                level: naga::SampleLevel::Bias(_),
                ..
            } => "textureSampleBias (implicit derivatives)",
            _ => continue,
        };
        return Some((func.expressions.get_span(h), what));
    }
    find_in_block(module, &func.body, visited)
}

fn find_in_block(
    module: &naga::Module,
    block: &naga::Block,
    visited: &mut Vec<Handle<naga::Function>>,
) -> Option<(naga::Span, &'static str)> {
    for (st, span) in block.span_iter() {
        let found = match st {
            naga::Statement::Kill => Some((*span, "discard")),
            naga::Statement::Block(b) => find_in_block(module, b, visited),
            naga::Statement::If { accept, reject, .. } => find_in_block(module, accept, visited)
                .or_else(|| find_in_block(module, reject, visited)),
            naga::Statement::Switch { cases, .. } => cases
                .iter()
                .find_map(|c| find_in_block(module, &c.body, visited)),
            naga::Statement::Loop {
                body, continuing, ..
            } => find_in_block(module, body, visited)
                .or_else(|| find_in_block(module, continuing, visited)),
            naga::Statement::Call { function, .. } if !visited.contains(function) => {
                visited.push(*function);
                find_fragment_only(module, &module.functions[*function], visited)
                    .map(|(s, what)| (if span.is_defined() { s } else { *span }, what))
            }
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}
