//! The one reflection model: what a compiled stage exposes to whoever binds it — its uniform
//! buffers and push-constant block with every member's typed layout (scalar kind and width,
//! vector size, matrix columns, rows and column stride, arrays with their stride, structs) at
//! byte offsets, the members it accesses, its textures by binding, and its inputs and outputs
//! by location.
//!
//! Every frontend that builds a `naga::Module` produces it through [`reflect_stage`] (WGSL as
//! is; Vulkan GLSL and Cg add RetroArch's rules, see `vulkan_glsl::reflect`); TGSI programs
//! carry no names and have none. `softgpu draw` sets uniforms by member name from it, and the
//! filter chain binds RetroArch's semantics (`MVP`, `SourceSize`, parameters, `Source`, …) by
//! these names and types. The shader cache stores it as JSON: each member carries its GLSL
//! spelling (`"type": "vec2[3]"`) beside its typed `"layout"`, so entries stay readable.

use std::collections::BTreeSet;

use naga::{AddressSpace, Binding, Handle, Module, Type, TypeInner};
use serde::{Deserialize, Serialize};

/// One stage's interface.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageReflection {
    /// The uniform buffers (`layout(set = S, binding = N) uniform UBO { … }`,
    /// `@group(S) @binding(N) var<uniform>`), in declaration order.
    pub uniform_buffers: Vec<BlockReflection>,
    /// The push-constant (`layout(push_constant)`, `var<immediate>`) block of the entry point.
    pub push_constants: Option<BlockReflection>,
    /// The block members the stage accesses.
    pub active: ActiveMembers,
    /// The textures, by binding.
    pub textures: Vec<TextureReflection>,
    /// Stage inputs by location (vertex attributes, or varyings for the fragment stage).
    pub inputs: Vec<LocationReflection>,
    /// Stage outputs by location (varyings, or render targets for the fragment stage).
    pub outputs: Vec<LocationReflection>,
}

impl StageReflection {
    /// The uniform buffer at `set` and `binding`.
    pub fn uniform_buffer(&self, set: u32, binding: u32) -> Option<&BlockReflection> {
        self.uniform_buffers
            .iter()
            .find(|b| b.set == Some(set) && b.binding == Some(binding))
    }
}

/// A uniform or push-constant block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockReflection {
    /// The instance name (`global`, `params`), if any.
    pub name: Option<String>,
    /// The block type name (`UBO`, `Push`), if any.
    pub type_name: Option<String>,
    /// Descriptor set (`None` for push constants).
    pub set: Option<u32>,
    /// Binding (`None` for push constants).
    pub binding: Option<u32>,
    /// Declared size in bytes: the end of the last member (not rounded up to the alignment).
    pub size: u32,
    /// The members in declaration order. A block declared as a bare value
    /// (`var<uniform> tint: vec4f`) has one member named after the variable.
    pub members: Vec<Member>,
}

/// One member of a block or of a struct.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "MemberRecord", from = "MemberRecord")]
pub struct Member {
    /// The member name (empty when the module names none).
    pub name: String,
    /// Byte offset within the enclosing block or struct.
    pub offset: u32,
    /// The member's type and layout.
    pub ty: TypeLayout,
    /// Size in bytes (arrays: count × stride; matrices: columns × column stride).
    pub size: u32,
}

/// A [`Member`] as stored: its GLSL spelling beside the typed layout, for readers of the JSON
/// (the spelling is derived, so reading ignores it).
#[derive(Serialize, Deserialize)]
struct MemberRecord {
    name: String,
    offset: u32,
    #[serde(rename = "type", skip_deserializing)]
    spelling: String,
    size: u32,
    layout: TypeLayout,
}

impl From<Member> for MemberRecord {
    fn from(m: Member) -> MemberRecord {
        MemberRecord {
            spelling: m.ty.glsl_name(),
            name: m.name,
            offset: m.offset,
            size: m.size,
            layout: m.ty,
        }
    }
}

impl From<MemberRecord> for Member {
    fn from(r: MemberRecord) -> Member {
        Member {
            name: r.name,
            offset: r.offset,
            ty: r.layout,
            size: r.size,
        }
    }
}

/// The kind of a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalarKind {
    /// A float (`float`, `double`, `float16_t`).
    Float,
    /// A signed integer.
    Sint,
    /// An unsigned integer.
    Uint,
    /// A boolean.
    Bool,
}

/// A scalar type: its kind and width in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Scalar {
    /// What the bits mean.
    pub kind: ScalarKind,
    /// Width in bytes.
    pub width: u8,
}

impl Scalar {
    /// A 32-bit float, signed or unsigned integer: what one 4-byte component of a constant
    /// buffer holds.
    pub fn is_32bit_number(self) -> bool {
        self.width == 4 && self.kind != ScalarKind::Bool
    }

    /// The GLSL prefix of its vectors and matrices (`""`, `d`, `i`, `u`, `b`).
    fn prefix(self) -> &'static str {
        match (self.kind, self.width) {
            (ScalarKind::Float, 8) => "d",
            (ScalarKind::Float, _) => "",
            (ScalarKind::Sint, _) => "i",
            (ScalarKind::Uint, _) => "u",
            (ScalarKind::Bool, _) => "b",
        }
    }

    /// The GLSL name of the scalar type.
    fn glsl_name(self) -> &'static str {
        match (self.kind, self.width) {
            (ScalarKind::Float, 8) => "double",
            (ScalarKind::Float, 2) => "float16_t",
            (ScalarKind::Float, _) => "float",
            (ScalarKind::Sint, _) => "int",
            (ScalarKind::Uint, _) => "uint",
            (ScalarKind::Bool, _) => "bool",
        }
    }

    fn of(s: naga::Scalar) -> Option<Scalar> {
        let kind = match s.kind {
            naga::ScalarKind::Float => ScalarKind::Float,
            naga::ScalarKind::Sint => ScalarKind::Sint,
            naga::ScalarKind::Uint => ScalarKind::Uint,
            naga::ScalarKind::Bool => ScalarKind::Bool,
            naga::ScalarKind::AbstractInt | naga::ScalarKind::AbstractFloat => return None,
        };
        Some(Scalar {
            kind,
            width: s.width,
        })
    }
}

/// The type of a block member and where its parts lie, as the shader laid it out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TypeLayout {
    /// A scalar.
    Scalar(Scalar),
    /// A vector of `size` (2–4) consecutive scalars.
    Vector {
        /// The component type.
        scalar: Scalar,
        /// Number of components.
        size: u32,
    },
    /// A column-major matrix.
    Matrix {
        /// The component type.
        scalar: Scalar,
        /// Columns.
        columns: u32,
        /// Rows (components per column).
        rows: u32,
        /// Bytes between columns.
        column_stride: u32,
    },
    /// A fixed-size array.
    Array {
        /// The element type.
        element: Box<TypeLayout>,
        /// Element count.
        count: u32,
        /// Bytes between elements.
        stride: u32,
    },
    /// A struct.
    Struct {
        /// The struct type's name, if any.
        name: Option<String>,
        /// Its members in declaration order.
        members: Vec<Member>,
    },
    /// A type no block member of a valid shader has (runtime-sized arrays, abstract
    /// numbers, handles), by its GLSL spelling.
    Other {
        /// The type as GLSL spells it.
        spelling: String,
    },
}

impl TypeLayout {
    /// The layout of naga type `ty` of `module` (`layouter` sized its types).
    pub fn of(module: &Module, layouter: &naga::proc::Layouter, ty: Handle<Type>) -> TypeLayout {
        let other = || TypeLayout::Other {
            spelling: type_name(module, ty),
        };
        let t = &module.types[ty];
        match &t.inner {
            TypeInner::Scalar(s) => Scalar::of(*s).map_or_else(other, TypeLayout::Scalar),
            TypeInner::Vector { size, scalar } => match Scalar::of(*scalar) {
                Some(scalar) => TypeLayout::Vector {
                    scalar,
                    size: *size as u32,
                },
                None => other(),
            },
            TypeInner::Matrix {
                columns,
                rows,
                scalar,
            } => match Scalar::of(*scalar) {
                Some(scalar) => TypeLayout::Matrix {
                    scalar,
                    columns: *columns as u32,
                    rows: *rows as u32,
                    column_stride: super::lower::column_stride(*rows),
                },
                None => other(),
            },
            TypeInner::Array {
                base,
                size: naga::ArraySize::Constant(n),
                stride,
            } => TypeLayout::Array {
                element: Box::new(TypeLayout::of(module, layouter, *base)),
                count: n.get(),
                stride: *stride,
            },
            TypeInner::Struct { members, .. } => TypeLayout::Struct {
                name: t.name.clone(),
                members: members_of(module, layouter, members),
            },
            _ => other(),
        }
    }

    /// The type as GLSL spells it (`vec4`, `mat3x2`, `float[3]`, `Light`), for messages.
    pub fn glsl_name(&self) -> String {
        match self {
            TypeLayout::Scalar(s) => s.glsl_name().to_string(),
            TypeLayout::Vector { scalar, size } => format!("{}vec{size}", scalar.prefix()),
            TypeLayout::Matrix {
                scalar,
                columns,
                rows,
                ..
            } => {
                if columns == rows {
                    format!("{}mat{columns}", scalar.prefix())
                } else {
                    format!("{}mat{columns}x{rows}", scalar.prefix())
                }
            }
            TypeLayout::Array { element, count, .. } => {
                format!("{}[{count}]", element.glsl_name())
            }
            TypeLayout::Struct { name, .. } => name.clone().unwrap_or_else(|| "struct".into()),
            TypeLayout::Other { spelling } => spelling.clone(),
        }
    }

    /// Every 4-byte component in value order (arrays element by element, matrices column by
    /// column, structs member by member) with its byte offset from `base` and its kind, or
    /// `None` when some part is not a 32-bit number (a constant buffer holds nothing else).
    pub fn components(&self, base: u32) -> Option<Vec<(u32, ScalarKind)>> {
        let mut out = Vec::new();
        self.push_components(base, &mut out).then_some(out)
    }

    fn push_components(&self, base: u32, out: &mut Vec<(u32, ScalarKind)>) -> bool {
        match self {
            TypeLayout::Scalar(s) | TypeLayout::Vector { scalar: s, .. }
                if !s.is_32bit_number() =>
            {
                false
            }
            TypeLayout::Scalar(s) => {
                out.push((base, s.kind));
                true
            }
            TypeLayout::Vector { scalar, size } => {
                out.extend((0..*size).map(|i| (base + 4 * i, scalar.kind)));
                true
            }
            TypeLayout::Matrix {
                scalar,
                columns,
                rows,
                column_stride,
            } => {
                if *scalar
                    != (Scalar {
                        kind: ScalarKind::Float,
                        width: 4,
                    })
                {
                    return false;
                }
                for c in 0..*columns {
                    for r in 0..*rows {
                        out.push((base + c * column_stride + 4 * r, ScalarKind::Float));
                    }
                }
                true
            }
            TypeLayout::Array {
                element,
                count,
                stride,
            } => (0..*count).all(|i| element.push_components(base + i * stride, out)),
            TypeLayout::Struct { members, .. } => members
                .iter()
                .all(|m| m.ty.push_components(base + m.offset, out)),
            TypeLayout::Other { .. } => false,
        }
    }
}

fn members_of(
    module: &Module,
    layouter: &naga::proc::Layouter,
    members: &[naga::StructMember],
) -> Vec<Member> {
    members
        .iter()
        .map(|m| Member {
            name: m.name.clone().unwrap_or_default(),
            offset: m.offset,
            ty: TypeLayout::of(module, layouter, m.ty),
            size: layouter[m.ty].size,
        })
        .collect()
}

/// A texture binding (the image half of a split `sampler2D`, or a separate texture).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TextureReflection {
    /// The name in the shader (`Source`, `Original`, `PassFeedback0`, …).
    pub name: Option<String>,
    /// Descriptor set.
    pub set: u32,
    /// Binding.
    pub binding: u32,
    /// The type as GLSL spells it (`texture2D`, `texture2D[4]`, …).
    #[serde(rename = "type")]
    pub ty: String,
    /// The binding of the sampler paired with it, when it was a combined `sampler2D`.
    pub sampler_binding: Option<u32>,
}

/// A stage input or output at a location.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocationReflection {
    /// The name in the shader, if any.
    pub name: Option<String>,
    /// `layout(location = N)`.
    pub location: u32,
    /// The type as GLSL spells it.
    #[serde(rename = "type")]
    pub ty: String,
}

/// The block members a stage accesses, by name (what spirv-cross calls the active buffer
/// ranges, which librashader reflects): members nobody accesses need no meaning.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActiveMembers {
    /// Members of the uniform buffers.
    pub uniform_buffers: BTreeSet<String>,
    /// Members of the push-constant block.
    pub push_constants: BTreeSet<String>,
}

impl ActiveMembers {
    /// Collects the members a naga module accesses (`global.MEMBER` / `params.MEMBER`) in any
    /// function or entry point.
    pub fn of_module(module: &naga::Module) -> ActiveMembers {
        let mut active = ActiveMembers::default();
        let functions = module
            .functions
            .iter()
            .map(|(_, f)| f)
            .chain(module.entry_points.iter().map(|e| &e.function));
        for function in functions {
            for (_, expr) in function.expressions.iter() {
                let naga::Expression::AccessIndex { base, index } = *expr else {
                    continue;
                };
                let naga::Expression::GlobalVariable(g) = function.expressions[base] else {
                    continue;
                };
                let var = &module.global_variables[g];
                let set = match var.space {
                    naga::AddressSpace::Uniform => &mut active.uniform_buffers,
                    naga::AddressSpace::Immediate => &mut active.push_constants,
                    _ => continue,
                };
                if let naga::TypeInner::Struct { members, .. } = &module.types[var.ty].inner {
                    if let Some(name) = members.get(index as usize).and_then(|m| m.name.clone()) {
                        set.insert(name);
                    }
                }
            }
        }
        active
    }
}

/// The sampler paired with a texture: a combined `sampler2D` split in two (Vulkan GLSL), or a
/// Cg `sampler2D` uniform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplerPair {
    /// The descriptor set of both.
    pub set: u32,
    /// The texture's binding.
    pub texture_binding: u32,
    /// The sampler's binding.
    pub sampler_binding: u32,
}

/// Reflects entry point `entry` of `module` (`info` is its validation, which tells which
/// push-constant block the entry point uses); `samplers` pair textures with their samplers.
/// Blocks and textures are the module's; inputs and outputs the entry point's.
pub fn reflect_stage(
    module: &Module,
    info: &naga::valid::ModuleInfo,
    entry: usize,
    samplers: &[SamplerPair],
) -> Result<StageReflection, String> {
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| format!("layout: {e}"))?;
    let ep = module
        .entry_points
        .get(entry)
        .ok_or_else(|| format!("no entry point number {entry}"))?;
    let uses = info.get_entry_point(entry);
    let mut out = StageReflection {
        active: ActiveMembers::of_module(module),
        ..StageReflection::default()
    };
    // A module may declare a push-constant block per entry point; the stage's is the one its
    // entry point uses (or the only one).
    let mut push_used = false;
    for (handle, var) in module.global_variables.iter() {
        match var.space {
            AddressSpace::Uniform => out.uniform_buffers.push(block(module, &layouter, var)),
            AddressSpace::Immediate => {
                let used = !uses[handle].is_empty();
                if out.push_constants.is_none() || (used && !push_used) {
                    out.push_constants = Some(block(module, &layouter, var));
                    push_used = used;
                }
            }
            AddressSpace::Handle => {
                let base = match module.types[var.ty].inner {
                    TypeInner::Array { base, .. } | TypeInner::BindingArray { base, .. } => base,
                    _ => var.ty,
                };
                if !matches!(module.types[base].inner, TypeInner::Image { .. }) {
                    continue;
                }
                let (set, binding) = var
                    .binding
                    .as_ref()
                    .map_or((0, 0), |b| (b.group, b.binding));
                let sampler_binding = samplers
                    .iter()
                    .find(|s| s.set == set && s.texture_binding == binding)
                    .map(|s| s.sampler_binding);
                out.textures.push(TextureReflection {
                    name: var.name.clone(),
                    set,
                    binding,
                    ty: type_name(module, var.ty),
                    sampler_binding,
                });
            }
            _ => {}
        }
    }
    out.textures.sort_by_key(|t| (t.set, t.binding));
    for arg in &ep.function.arguments {
        locations(
            module,
            arg.name.as_ref(),
            arg.ty,
            arg.binding.as_ref(),
            &mut out.inputs,
        );
    }
    if let Some(result) = &ep.function.result {
        locations(
            module,
            None,
            result.ty,
            result.binding.as_ref(),
            &mut out.outputs,
        );
    }
    out.inputs.sort_by_key(|l| l.location);
    out.outputs.sort_by_key(|l| l.location);
    Ok(out)
}

fn block(
    module: &Module,
    layouter: &naga::proc::Layouter,
    var: &naga::GlobalVariable,
) -> BlockReflection {
    let is_push = var.space == AddressSpace::Immediate;
    let ty = &module.types[var.ty];
    let members: Vec<Member> = match &ty.inner {
        TypeInner::Struct { members, .. } => members_of(module, layouter, members),
        _ => match &var.name {
            Some(name) => vec![Member {
                name: name.clone(),
                offset: 0,
                ty: TypeLayout::of(module, layouter, var.ty),
                size: layouter[var.ty].size,
            }],
            None => Vec::new(),
        },
    };
    BlockReflection {
        name: var.name.clone(),
        type_name: ty.name.clone(),
        set: (!is_push).then(|| var.binding.as_ref().map_or(0, |b| b.group)),
        binding: (!is_push).then(|| var.binding.as_ref().map_or(0, |b| b.binding)),
        // The declared size (end of the last member), as SPIRV-Cross reports it to RetroArch;
        // naga's layout would round it up to the block's alignment.
        size: members
            .iter()
            .map(|m| m.offset + m.size)
            .max()
            .unwrap_or(layouter[var.ty].size),
        members,
    }
}

/// Collects `@location` bindings of an argument or result, looking into I/O structs.
fn locations(
    module: &Module,
    name: Option<&String>,
    ty: Handle<Type>,
    binding: Option<&Binding>,
    out: &mut Vec<LocationReflection>,
) {
    match binding {
        Some(Binding::Location { location, .. }) => out.push(LocationReflection {
            name: name.cloned(),
            location: *location,
            ty: type_name(module, ty),
        }),
        Some(Binding::BuiltIn(_)) => {}
        None => {
            if let TypeInner::Struct { members, .. } = &module.types[ty].inner {
                for m in members {
                    locations(module, m.name.as_ref(), m.ty, m.binding.as_ref(), out);
                }
            }
        }
    }
}

/// The GLSL spelling of a naga type.
pub fn type_name(module: &Module, ty: Handle<Type>) -> String {
    let t = &module.types[ty];
    let scalar_prefix = |s: naga::Scalar| Scalar::of(s).map_or("?", Scalar::prefix);
    match &t.inner {
        TypeInner::Scalar(s) => Scalar::of(*s)
            .map_or("abstract", Scalar::glsl_name)
            .to_string(),
        TypeInner::Vector { size, scalar } => {
            format!("{}vec{}", scalar_prefix(*scalar), *size as u8)
        }
        TypeInner::Matrix {
            columns,
            rows,
            scalar,
        } => {
            let (c, r) = (*columns as u8, *rows as u8);
            if c == r {
                format!("{}mat{c}", scalar_prefix(*scalar))
            } else {
                format!("{}mat{c}x{r}", scalar_prefix(*scalar))
            }
        }
        TypeInner::Array { base, size, .. } | TypeInner::BindingArray { base, size } => {
            let n = match size {
                naga::ArraySize::Constant(n) => n.to_string(),
                _ => String::new(),
            };
            format!("{}[{n}]", type_name(module, *base))
        }
        TypeInner::Struct { .. } => t.name.clone().unwrap_or_else(|| "struct".into()),
        TypeInner::Image { dim, arrayed, .. } => {
            let d = match dim {
                naga::ImageDimension::D1 => "1D",
                naga::ImageDimension::D2 => "2D",
                naga::ImageDimension::D3 => "3D",
                naga::ImageDimension::Cube => "Cube",
            };
            format!("texture{d}{}", if *arrayed { "Array" } else { "" })
        }
        TypeInner::Sampler { comparison } => {
            if *comparison {
                "samplerShadow".into()
            } else {
                "sampler".into()
            }
        }
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float() -> Scalar {
        Scalar {
            kind: ScalarKind::Float,
            width: 4,
        }
    }

    #[test]
    fn layouts_spell_their_glsl_type_and_list_their_components() {
        let mat = TypeLayout::Matrix {
            scalar: float(),
            columns: 3,
            rows: 2,
            column_stride: 16,
        };
        let array = TypeLayout::Array {
            element: Box::new(mat.clone()),
            count: 2,
            stride: 48,
        };
        assert_eq!(array.glsl_name(), "mat3x2[2]");
        let offsets: Vec<u32> = array
            .components(4)
            .expect("floats")
            .iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(
            offsets,
            [4, 8, 20, 24, 36, 40, 52, 56, 68, 72, 84, 88],
            "column by column, element by element"
        );
        let double = TypeLayout::Vector {
            scalar: Scalar {
                kind: ScalarKind::Float,
                width: 8,
            },
            size: 2,
        };
        assert_eq!(double.glsl_name(), "dvec2");
        assert_eq!(double.components(0), None);
    }

    #[test]
    fn members_store_their_spelling_beside_their_layout() {
        let member = Member {
            name: "JITTER".into(),
            offset: 80,
            ty: TypeLayout::Array {
                element: Box::new(TypeLayout::Vector {
                    scalar: float(),
                    size: 2,
                }),
                count: 3,
                stride: 16,
            },
            size: 48,
        };
        let json = serde_json::to_value(&member).expect("json");
        assert_eq!(json["type"], "vec2[3]");
        assert_eq!(json["layout"]["array"]["stride"], 16);
        let back: Member = serde_json::from_value(json).expect("read back");
        assert_eq!(back, member);
    }
}
