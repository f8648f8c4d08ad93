//! Reflection of a compiled slang stage: the uniform buffer and push-constant members with byte
//! offsets, the textures with their bindings, and the vertex inputs / varyings by location. The
//! chain runtime binds RetroArch's semantics (`MVP`, `SourceSize`, parameters, `Source`, …) by
//! these names.

use std::collections::{BTreeSet, HashMap};

use naga::{AddressSpace, Binding, Handle, Module, Scalar, ScalarKind, Type, TypeInner};
use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, Op, StorageClass};
use serde::{Deserialize, Serialize};

use super::vulkan_glsl::split_samplers::SplitSampler;

/// One stage's interface.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageReflection {
    /// The uniform buffer (`layout(set = 0, binding = N) uniform UBO { … }`), if the stage uses one.
    pub ubo: Option<BlockReflection>,
    /// The `layout(push_constant)` block, if the stage uses one.
    pub push_constants: Option<BlockReflection>,
    /// The textures (`sampler2D`s), by binding.
    pub textures: Vec<TextureReflection>,
    /// Stage inputs by location (vertex attributes, or varyings for the fragment stage).
    pub inputs: Vec<LocationReflection>,
    /// Stage outputs by location (varyings, or render targets for the fragment stage).
    pub outputs: Vec<LocationReflection>,
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
    /// The members in offset order.
    pub members: Vec<Member>,
}

/// One member of a block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Member {
    /// The member name.
    pub name: String,
    /// Byte offset within the block.
    pub offset: u32,
    /// GLSL type name (`vec4`, `mat4`, `float[4]`, …).
    #[serde(rename = "type")]
    pub ty: String,
    /// Size in bytes (arrays: count × stride; matrices: columns × column stride).
    pub size: u32,
}

/// A texture binding (the image half of a split `sampler2D`, or a separate texture).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TextureReflection {
    /// The GLSL name (`Source`, `Original`, `PassFeedback0`, …).
    pub name: Option<String>,
    /// Descriptor set.
    pub set: u32,
    /// Binding.
    pub binding: u32,
    /// GLSL type (`texture2D`, `texture2D[4]`, …).
    #[serde(rename = "type")]
    pub ty: String,
    /// The binding of its split-off sampler, when it was a combined `sampler2D`.
    pub sampler_binding: Option<u32>,
}

/// A stage input or output at a location.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocationReflection {
    /// The GLSL name, if any.
    pub name: Option<String>,
    /// `layout(location = N)`.
    pub location: u32,
    /// GLSL type name.
    #[serde(rename = "type")]
    pub ty: String,
}

/// The uniform-block members a stage accesses, by name (what spirv-cross calls the active
/// buffer ranges, which librashader reflects): members nobody accesses need no meaning.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ActiveMembers {
    /// Members of the uniform buffer.
    pub ubo: BTreeSet<String>,
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
                    naga::AddressSpace::Uniform => &mut active.ubo,
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

/// Reflects entry point `entry` of `module`, read from `spirv` (used for the names naga drops).
pub fn reflect_stage(
    module: &Module,
    entry: usize,
    spirv: &[u32],
    split: &[SplitSampler],
) -> Result<StageReflection, String> {
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| format!("layout: {e}"))?;
    let mut out = StageReflection::default();
    for (_, var) in module.global_variables.iter() {
        match var.space {
            AddressSpace::Uniform | AddressSpace::Immediate => {
                let is_push = var.space == AddressSpace::Immediate;
                let block = block(module, &layouter, var, is_push);
                let slot = if is_push {
                    &mut out.push_constants
                } else {
                    &mut out.ubo
                };
                if slot.is_some() {
                    return Err(format!(
                        "more than one {} (RetroArch allows one)",
                        if is_push {
                            "push-constant block"
                        } else {
                            "uniform buffer"
                        }
                    ));
                }
                *slot = Some(block);
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
                let sampler_binding = split
                    .iter()
                    .find(|s| s.set == set && s.image_binding == binding)
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
    let ep = module
        .entry_points
        .get(entry)
        .ok_or_else(|| format!("no entry point number {entry}"))?;
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
    // naga's SPIR-V reader leaves the members of the output struct unnamed; take the names
    // from the SPIR-V variables at the same locations.
    let (in_names, out_names) = io_names(spirv);
    for (list, names) in [(&mut out.inputs, in_names), (&mut out.outputs, out_names)] {
        for l in list.iter_mut().filter(|l| l.name.is_none()) {
            l.name = names.get(&l.location).cloned();
        }
    }
    out.inputs.sort_by_key(|l| l.location);
    out.outputs.sort_by_key(|l| l.location);
    Ok(out)
}

/// Location → name of the `Input` and `Output` variables of a SPIR-V module.
fn io_names(spirv: &[u32]) -> (HashMap<u32, String>, HashMap<u32, String>) {
    let (mut inputs, mut outputs) = (HashMap::new(), HashMap::new());
    let Ok(m) = rspirv::dr::load_words(spirv) else {
        return (inputs, outputs);
    };
    let id = |o: Option<&Operand>| match o {
        Some(Operand::IdRef(v)) => Some(*v),
        _ => None,
    };
    let mut locations = HashMap::new();
    for a in &m.annotations {
        if a.class.opcode == Op::Decorate
            && a.operands.get(1) == Some(&Operand::Decoration(Decoration::Location))
        {
            if let (Some(target), Some(Operand::LiteralBit32(l))) =
                (id(a.operands.first()), a.operands.get(2))
            {
                locations.insert(target, *l);
            }
        }
    }
    let mut names = HashMap::new();
    for n in &m.debug_names {
        if let (Op::Name, Some(target), Some(Operand::LiteralString(s))) =
            (n.class.opcode, id(n.operands.first()), n.operands.get(1))
        {
            names.insert(target, s.clone());
        }
    }
    for v in &m.types_global_values {
        let Some(var) = v.result_id.filter(|_| v.class.opcode == Op::Variable) else {
            continue;
        };
        let (Some(loc), Some(name)) = (locations.get(&var), names.get(&var)) else {
            continue;
        };
        match v.operands.first() {
            Some(Operand::StorageClass(StorageClass::Input)) => {
                inputs.insert(*loc, name.clone());
            }
            Some(Operand::StorageClass(StorageClass::Output)) => {
                outputs.insert(*loc, name.clone());
            }
            _ => {}
        }
    }
    (inputs, outputs)
}

fn block(
    module: &Module,
    layouter: &naga::proc::Layouter,
    var: &naga::GlobalVariable,
    is_push: bool,
) -> BlockReflection {
    let ty = &module.types[var.ty];
    let members: Vec<Member> = match &ty.inner {
        TypeInner::Struct { members, .. } => members
            .iter()
            .map(|m| Member {
                name: m.name.clone().unwrap_or_default(),
                offset: m.offset,
                ty: type_name(module, m.ty),
                size: layouter[m.ty].size,
            })
            .collect(),
        _ => Vec::new(),
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

fn scalar_prefix(s: Scalar) -> &'static str {
    match (s.kind, s.width) {
        (ScalarKind::Float, 8) => "d",
        (ScalarKind::Float, _) => "",
        (ScalarKind::Sint, _) => "i",
        (ScalarKind::Uint, _) => "u",
        (ScalarKind::Bool, _) => "b",
        _ => "?",
    }
}

fn scalar_name(s: Scalar) -> &'static str {
    match (s.kind, s.width) {
        (ScalarKind::Float, 8) => "double",
        (ScalarKind::Float, 2) => "float16_t",
        (ScalarKind::Float, _) => "float",
        (ScalarKind::Sint, _) => "int",
        (ScalarKind::Uint, _) => "uint",
        (ScalarKind::Bool, _) => "bool",
        _ => "abstract",
    }
}

/// The GLSL spelling of a naga type.
pub fn type_name(module: &Module, ty: Handle<Type>) -> String {
    let t = &module.types[ty];
    match &t.inner {
        TypeInner::Scalar(s) => scalar_name(*s).to_string(),
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
