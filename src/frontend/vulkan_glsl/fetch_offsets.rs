//! Folds the offset of `OpImageFetch` (GLSL `texelFetchOffset`) into its coordinate.
//!
//! naga's SPIR-V reader (30.0) has no offset on image loads: it skips a `ConstOffset` or `Offset`
//! operand of `OpImageFetch` with nothing but a log warning, so the shader silently reads the
//! texel at the unshifted coordinate (handheld LCD shaders sample their 2x2 neighbourhood this
//! way). A fetch's offset is plain integer addition on texel coordinates, so every such fetch
//! becomes `OpIAdd coordinate, offset` (the offset widened with zeros when the coordinate also
//! carries an array layer) feeding an offset-free fetch.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{ImageOperands, Op, Word};

use super::spirv_ids::{id, result_types, Ids};

/// How many operand words each image-operand bit carries, in bit order; `None` for bits this
/// pass does not know (the fetch is then left unchanged).
fn operand_count(bit: ImageOperands) -> Option<usize> {
    Some(match bit {
        ImageOperands::BIAS
        | ImageOperands::LOD
        | ImageOperands::CONST_OFFSET
        | ImageOperands::OFFSET
        | ImageOperands::CONST_OFFSETS
        | ImageOperands::SAMPLE
        | ImageOperands::MIN_LOD => 1,
        ImageOperands::GRAD => 2,
        _ => return None,
    })
}

/// Fresh ids and the zero constants the rewrite adds.
struct NewIds {
    ids: Ids,
    zeros: HashMap<Word, Word>,
    constants: Vec<Instruction>,
}

impl NewIds {
    fn fresh(&mut self) -> Word {
        self.ids.fresh()
    }

    /// A module-level integer constant 0 of `ty`.
    fn zero(&mut self, ty: Word) -> Word {
        if let Some(&z) = self.zeros.get(&ty) {
            return z;
        }
        let z = self.fresh();
        self.constants.push(Instruction::new(
            Op::Constant,
            Some(ty),
            Some(z),
            vec![Operand::LiteralBit32(0)],
        ));
        self.zeros.insert(ty, z);
        z
    }
}

/// Rewrites every `OpImageFetch` with an offset in `module` (see the module documentation).
pub fn fold_fetch_offsets(module: &mut Module) {
    let mut ids = NewIds {
        ids: Ids::after(module),
        zeros: HashMap::new(),
        constants: Vec::new(),
    };
    let type_of = result_types(module);
    // vector type → (component type, count)
    let vectors: HashMap<Word, (Word, u32)> = module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypeVector)
        .filter_map(|i| {
            let count = match i.operands.get(1) {
                Some(Operand::LiteralBit32(n)) => *n,
                _ => return None,
            };
            Some((i.result_id?, (id(i.operands.first())?, count)))
        })
        .collect();
    let shape = |ty: Word| vectors.get(&ty).copied().unwrap_or((ty, 1));
    for f in &mut module.functions {
        for block in &mut f.blocks {
            let old = std::mem::take(&mut block.instructions);
            for inst in old {
                match rewrite_fetch(&inst, &type_of, &shape, &mut ids) {
                    Some(replacement) => block.instructions.extend(replacement),
                    None => block.instructions.push(inst),
                }
            }
        }
    }
    module.types_global_values.append(&mut ids.constants);
    ids.ids.finish(module);
}

/// The instructions replacing `inst` when it is a fetch with an offset.
fn rewrite_fetch(
    inst: &Instruction,
    type_of: &HashMap<Word, Word>,
    shape: &dyn Fn(Word) -> (Word, u32),
    ids: &mut NewIds,
) -> Option<Vec<Instruction>> {
    if inst.class.opcode != Op::ImageFetch {
        return None;
    }
    let image = id(inst.operands.first())?;
    let coordinate = id(inst.operands.get(1))?;
    let mask = match inst.operands.get(2) {
        Some(Operand::ImageOperands(m)) => *m,
        _ => return None,
    };
    let offset_bits = ImageOperands::CONST_OFFSET | ImageOperands::OFFSET;
    if !mask.intersects(offset_bits) {
        return None;
    }
    // Split the operand words after the mask by bit, lowest bit first.
    let mut rest = inst.operands[3..].iter();
    let mut kept: Vec<Operand> = Vec::new();
    let mut offset = None;
    for i in 0..32 {
        if mask.bits() & (1 << i) == 0 {
            continue;
        }
        let bit = ImageOperands::from_bits_truncate(1 << i);
        let n = operand_count(bit)?;
        let words: Vec<Operand> = rest.by_ref().take(n).cloned().collect();
        if words.len() != n {
            return None;
        }
        if offset_bits.contains(bit) {
            offset = id(words.first());
        } else {
            kept.extend(words);
        }
    }
    let offset = offset?;
    let coordinate_type = *type_of.get(&coordinate)?;
    let offset_type = *type_of.get(&offset)?;
    let (coord_scalar, coord_n) = shape(coordinate_type);
    let (offset_scalar, offset_n) = shape(offset_type);
    if offset_n > coord_n {
        return None;
    }
    let mut out = Vec::new();
    let addend = if offset_n == coord_n {
        if offset_type == coordinate_type {
            offset
        } else {
            // Same width, other signedness: the same bits.
            let cast = ids.fresh();
            out.push(Instruction::new(
                Op::Bitcast,
                Some(coordinate_type),
                Some(cast),
                vec![Operand::IdRef(offset)],
            ));
            cast
        }
    } else {
        // An array layer follows the texel coordinate: extend the offset with zeros.
        let mut parts = Vec::new();
        for c in 0..offset_n {
            let part = ids.fresh();
            out.push(Instruction::new(
                Op::CompositeExtract,
                Some(offset_scalar),
                Some(part),
                vec![Operand::IdRef(offset), Operand::LiteralBit32(c)],
            ));
            let part = if offset_scalar == coord_scalar {
                part
            } else {
                let cast = ids.fresh();
                out.push(Instruction::new(
                    Op::Bitcast,
                    Some(coord_scalar),
                    Some(cast),
                    vec![Operand::IdRef(part)],
                ));
                cast
            };
            parts.push(Operand::IdRef(part));
        }
        let zero = ids.zero(coord_scalar);
        parts.resize(coord_n as usize, Operand::IdRef(zero));
        let wide = ids.fresh();
        out.push(Instruction::new(
            Op::CompositeConstruct,
            Some(coordinate_type),
            Some(wide),
            parts,
        ));
        wide
    };
    let shifted = ids.fresh();
    out.push(Instruction::new(
        Op::IAdd,
        Some(coordinate_type),
        Some(shifted),
        vec![Operand::IdRef(coordinate), Operand::IdRef(addend)],
    ));
    let mut operands = vec![Operand::IdRef(image), Operand::IdRef(shifted)];
    let remaining = mask - offset_bits;
    if !remaining.is_empty() {
        operands.push(Operand::ImageOperands(remaining));
        operands.extend(kept);
    }
    out.push(Instruction::new(
        Op::ImageFetch,
        inst.result_type,
        inst.result_id,
        operands,
    ));
    Some(out)
}
