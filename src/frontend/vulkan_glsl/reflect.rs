//! Reflection of a RetroArch `.slang` shader: each stage's [`StageReflection`] with what the
//! SPIR-V path changed put back — names naga's reader drops (output struct members), and
//! std140 matrices re-typed as arrays of padded columns ([`super::padded_matrices`]) reported
//! as the matrices they were declared — and the whole shader's pragmas and stages, as
//! `softgpu compile --emit reflection` prints them.

use std::collections::HashMap;

use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, Op, StorageClass};
use serde::Serialize;

use super::padded_matrices::PaddedMatrix;
use super::split_samplers::SplitSampler;
use crate::frontend::reflect::{self, SamplerPair, StageReflection, TypeLayout};
use crate::frontend::retroarch;
use crate::frontend::retroarch::Parameter;

/// The whole shader's reflection, as printed by `--emit reflection`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShaderReflection {
    /// `#pragma name`.
    pub name: Option<String>,
    /// The fragment output's format from `#pragma format` (`None`: RetroArch's default,
    /// `R8G8B8A8_UNORM`).
    pub format: Option<String>,
    /// The `#pragma parameter`s.
    pub parameters: Vec<Parameter>,
    /// The vertex stage.
    pub vertex: StageReflection,
    /// The fragment stage.
    pub fragment: StageReflection,
}

impl ShaderReflection {
    /// Pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // Serializing plain structs of strings and numbers cannot fail; fall back to the
        // Debug form rather than panic should that ever change.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

/// Reflects entry point `entry` of a `.slang` stage's `module` (validated as `info`), read from
/// `spirv`, whose combined samplers were `split` and over-strided matrices `padded`.
pub fn reflect_stage(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: usize,
    spirv: &[u32],
    split: &[SplitSampler],
    padded: &[PaddedMatrix],
) -> Result<StageReflection, String> {
    let out = reflect_spirv_stage(module, info, entry, spirv, split, padded)?;
    retroarch::check_one_uniform_buffer(&out)?;
    Ok(out)
}

/// [`reflect_stage`] without RetroArch's rules: the reflection of any stage read from SPIR-V
/// through [`super::spirv_to_naga`] (the Slang language's stages too).
pub fn reflect_spirv_stage(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: usize,
    spirv: &[u32],
    split: &[SplitSampler],
    padded: &[PaddedMatrix],
) -> Result<StageReflection, String> {
    let pairs: Vec<SamplerPair> = split
        .iter()
        .map(|s| SamplerPair {
            set: s.set,
            texture_binding: s.image_binding,
            sampler_binding: s.sampler_binding,
        })
        .collect();
    let mut out = reflect::reflect_stage(module, info, entry, &pairs)?;
    // naga's SPIR-V reader leaves the members of the output struct unnamed; take the names
    // from the SPIR-V variables at the same locations.
    let (in_names, out_names) = io_names(spirv);
    for (list, names) in [(&mut out.inputs, in_names), (&mut out.outputs, out_names)] {
        for l in list.iter_mut().filter(|l| l.name.is_none()) {
            l.name = names.get(&l.location).cloned();
        }
    }
    // Report re-typed std140 matrices as declared, not as the arrays naga read.
    for block in out
        .uniform_buffers
        .iter_mut()
        .chain(out.push_constants.as_mut())
    {
        restore_matrices(block.type_name.as_deref(), &mut block.members, padded);
    }
    Ok(out)
}

/// Gives the members [`super::padded_matrices`] re-typed (member `member` of the struct named
/// `struct_name`, at any depth below a block named `owner`) the matrix type they were declared
/// with.
fn restore_matrices(owner: Option<&str>, members: &mut [reflect::Member], padded: &[PaddedMatrix]) {
    for (index, member) in members.iter_mut().enumerate() {
        let declared = padded.iter().find(|p| {
            p.struct_name.is_some()
                && p.struct_name.as_deref() == owner
                && p.member as usize == index
        });
        if let Some(p) = declared {
            restore_columns(&mut member.ty, p.columns, p.rows);
        }
        restore_nested(&mut member.ty, padded);
    }
}

fn restore_nested(ty: &mut TypeLayout, padded: &[PaddedMatrix]) {
    match ty {
        TypeLayout::Struct { name, members } => restore_matrices(name.as_deref(), members, padded),
        TypeLayout::Array { element, .. } => restore_nested(element, padded),
        _ => {}
    }
}

/// Replaces the array of `columns` vectors of `rows` in `ty` (its element type, for arrays of
/// matrices) by the matrix whose columns are that far apart.
fn restore_columns(ty: &mut TypeLayout, columns: u32, rows: u32) {
    let TypeLayout::Array {
        element,
        count,
        stride,
    } = ty
    else {
        return;
    };
    match **element {
        TypeLayout::Vector { scalar, size } if *count == columns && size == rows => {
            *ty = TypeLayout::Matrix {
                scalar,
                columns,
                rows,
                column_stride: *stride,
            };
        }
        _ => restore_columns(element, columns, rows),
    }
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
