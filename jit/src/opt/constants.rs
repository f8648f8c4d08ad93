//! Substitution of constant-buffer values known when a program is compiled (a filter chain's
//! shader parameters, the same in every draw) by immediates holding the same bits.

use rustc_hash::FxHashMap as HashMap;

use crate::ir::{Dimension, HeaderItem, Immediate, ImmediateType, Program, Register, RegisterFile};

/// Constant-buffer components whose bits are known when a program is compiled, by (buffer,
/// vec4 index): the four components, `None` where a component is not known.
pub type KnownConstants = HashMap<(u32, u32), [Option<u32>; 4]>;

/// Replaces every direct read of `CONST[b][i]` whose swizzled components are all in `known` by a
/// read of an immediate holding the same bits, through the same swizzle and modifiers, so every
/// lane reads what the buffer would give; the immediates it needs are appended. Returns the
/// number of operands replaced (none: the program is unchanged).
pub(super) fn substitute_known_constants(program: &mut Program, known: &KnownConstants) -> usize {
    let mut immediates: Vec<[u32; 4]> = program.immediates().map(Immediate::components).collect();
    let first_new = immediates.len();
    let mut imm_index: HashMap<[u32; 4], usize> = immediates
        .iter()
        .enumerate()
        .map(|(i, v)| (*v, i))
        .rev()
        .collect();
    let mut replaced = 0;
    for inst in &mut program.instructions {
        for src in &mut inst.src {
            let reg = src.reg;
            let buffer = match reg.dimension {
                None => 0,
                Some(Dimension {
                    index,
                    indirect: None,
                }) if index >= 0 => index as u32,
                Some(_) => continue,
            };
            if reg.file != RegisterFile::Constant || reg.indirect.is_some() || reg.index < 0 {
                continue;
            }
            let Some(components) = known.get(&(buffer, reg.index as u32)) else {
                continue;
            };
            if src
                .swizzle
                .iter()
                .any(|&c| components[c as usize].is_none())
            {
                continue;
            }
            let values = components.map(|c| c.unwrap_or(0));
            let index = *imm_index.entry(values).or_insert_with(|| {
                immediates.push(values);
                immediates.len() - 1
            });
            src.reg = Register::new(RegisterFile::Immediate, index as i32);
            replaced += 1;
        }
    }
    for values in &immediates[first_new..] {
        program.header.push(HeaderItem::Immediate(Immediate {
            ty: ImmediateType::Uint32,
            values: values.to_vec(),
        }));
    }
    replaced
}
