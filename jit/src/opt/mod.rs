//! A bit-exact cleanup of programs produced by the frontends: unrolling of constant loops and
//! folding of constant instructions ([`unroll`]), copy propagation of plain `MOV`s
//! within straight-line code, then removal of writes nobody reads.
//!
//! The naga lowering turns every local-variable load and store into a `MOV`, so a shader's hot
//! loop can be two thirds copies (Mesa runs NIR's copy propagation before it emits TGSI). Both
//! passes preserve every output bit and the kill mask:
//! - only `MOV`s without saturate or source modifiers are forwarded (`MOV` is a bit copy);
//! - a copy is forgotten at every control-flow instruction and whenever its source or
//!   destination component is written, and registers reached by indirect addressing are never
//!   tracked;
//! - inside control flow, where some lanes of the quad may not have executed the `MOV`, copies are
//!   not forwarded into instructions that read other lanes (derivatives, and texture
//!   instructions, whose level of detail comes from the quad);
//! - a component write is removed only when no instruction of the program reads that
//!   component of that register, so control flow cannot bring it back to life.
//!
//! Programs with subroutines (`CAL`) are left alone: their labels are instruction indices.

pub mod compact;
pub mod copies;
pub mod ifconv;
pub mod inputs;
pub mod lpmath;
pub mod lvn;
pub mod texelfn;
pub mod unroll;

use rustc_hash::FxHashMap as HashMap;

use copies::{array_temps, forward_and_remove, forward_copies, remove_unread_writes};
pub use inputs::narrow_input_usage;

use crate::ir::{
    props, Dimension, HeaderItem, Immediate, ImmediateType, OpcodeClass, Program, Register,
    RegisterFile,
};

/// Optimizes `program` in place (see the module documentation).
pub fn optimize(program: &mut Program) {
    if has_subroutines(&program.instructions) {
        return;
    }
    unroll::unroll_loops(program);
    forward_and_remove(program);
    narrow_input_usage(program);
}

/// Constant-buffer components whose bits are known when a program is compiled, by (buffer,
/// vec4 index): the four components, `None` where a component is not known.
pub type KnownConstants = HashMap<(u32, u32), [Option<u32>; 4]>;

/// Specializes `program` for constant-buffer values that are the same in every draw it will
/// make (a filter chain's shader parameters): every direct read of `CONST[b][i]` whose swizzled
/// components are all in `known` becomes a read of an immediate holding the same bits (through
/// the same swizzle and modifiers, so every lane reads what the buffer would give), then the
/// program is optimized again, so that branches and loop bounds the values decide fold and
/// unroll, and the temporaries are compacted. Unrolling is left out when it would give more
/// texture instructions than the JIT samples inline (as in [`specialize`]). Returns the number
/// of operands replaced.
pub fn fold_known_constants(program: &mut Program, known: &KnownConstants) -> usize {
    if known.is_empty() || has_subroutines(&program.instructions) {
        return 0;
    }
    let mut immediates: Vec<[u32; 4]> = program.immediates().map(Immediate::components).collect();
    let first_new = immediates.len();
    let mut imm_index: HashMap<[u32; 4], usize> = immediates
        .iter()
        .enumerate()
        .map(|(i, v)| (*v, i))
        .rev()
        .collect();
    let mut replaced = 0;
    let mut folded = program.clone();
    for inst in &mut folded.instructions {
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
    if replaced == 0 {
        return 0;
    }
    for values in &immediates[first_new..] {
        folded.header.push(HeaderItem::Immediate(Immediate {
            ty: ImmediateType::Uint32,
            values: values.to_vec(),
        }));
    }
    let mut unrolled = folded.clone();
    optimize(&mut unrolled);
    if texture_instructions(&unrolled) <= inline_texture_limit(program) {
        *program = unrolled;
    } else {
        // Branches and constants still fold; loops stay loops.
        unroll::unroll_loops_within(&mut folded, 0, 0);
        forward_and_remove(&mut folded);
        *program = folded;
    }
    // Folding turns indirect accesses into direct ones and shortens lifetimes.
    compact::compact_temps(program);
    replaced
}

/// The texture instructions of `program`.
fn texture_instructions(program: &Program) -> usize {
    program
        .instructions
        .iter()
        .filter(|i| i.opcode.class() == OpcodeClass::Texture)
        .count()
}

/// How many texture instructions a rewrite of `original` may leave: what the JIT samples
/// inline, or the original's count when that is more (unrolling a texture loop past the limit
/// made motion_interpolation's kernel 1.5x slower: 15 reads in a loop became 106).
fn inline_texture_limit(original: &Program) -> usize {
    crate::codegen::MAX_INLINE_TEX.max(texture_instructions(original))
}

/// Instructions [`specialize`] lets a program grow to by unrolling loops again once if-conversion
/// and value numbering have shrunk it.
pub const MAX_SPECIALIZED_INSTRUCTIONS: usize = 12_000;

/// Optimizes `program` further for the textures it will sample: `lane_local_units` has bit `n`
/// set when sampling unit `n` gives each lane a texel that depends on its own coordinates only
/// (one filter for minification and magnification, and one level or no mip filter). Small
/// branches become selects ([`ifconv`]), recomputed values become copies
/// ([`lvn`]), and loops the first unrolling left for size are unrolled while the program
/// stays below [`MAX_SPECIALIZED_INSTRUCTIONS`]. Exact for every program whose units satisfy
/// the promise; the temporaries are compacted afterwards.
pub fn specialize(program: &mut Program, lane_local_units: u64) {
    if let Some(candidate) = specialization_candidate(program, lane_local_units) {
        if rewrite_pays(program, &candidate) {
            *program = candidate;
            narrow_input_usage(program);
        }
    }
}

/// The rewrite [`specialize`] makes of `original`, before it decides whether the rewrite pays
/// ([`rewrite_pays`]), temporaries compacted; `None` for programs with subroutines. Exact under
/// the same promise.
pub fn specialization_candidate(original: &Program, lane_local_units: u64) -> Option<Program> {
    if has_subroutines(&original.instructions) {
        return None;
    }
    let mut program = original.clone();
    for round in 0..4 {
        if round > 0 {
            let before = program.instructions.len();
            if before >= MAX_SPECIALIZED_INSTRUCTIONS {
                break;
            }
            let mut candidate = program.clone();
            let room = MAX_SPECIALIZED_INSTRUCTIONS - before;
            let unrolled = unroll::unroll_loops_within(&mut candidate, room, room);
            if !unrolled || candidate.instructions.len() > MAX_SPECIALIZED_INSTRUCTIONS {
                break;
            }
            program = candidate;
        }
        ifconv::convert_blocks(&mut program, lane_local_units);
        lvn::number_values(&mut program);
        let arrays = array_temps(&program);
        for _ in 0..4 {
            // remove_unread_writes also removes every write remove_dead_writes would.
            let forwarded = forward_copies(&mut program, &arrays);
            let removed = remove_unread_writes(&mut program, &arrays);
            if !forwarded && !removed {
                break;
            }
        }
    }
    compact::compact_temps(&mut program);
    Some(program)
}

/// Whether `rewritten` should replace `original`: its estimated per-quad cost is at least 10%
/// lower and it holds no more texture instructions than the JIT samples inline (or `original`
/// holds). Running both arms of every small branch pays only where value numbering then removes
/// work (crt-lottes-style repeated taps) or a texel function leaves the branch for a pre-pass;
/// elsewhere it is measured slower (crt-lottes itself, whose repeated taps sit in branches on a
/// shader parameter, 2.3x). Both forms are exact.
pub fn rewrite_pays(original: &Program, rewritten: &Program) -> bool {
    let cost = ifconv::estimated_cost;
    cost(rewritten) * 10 <= cost(original) * 9
        && texture_instructions(rewritten) <= inline_texture_limit(original)
}

/// Whether `insts` use subroutines or `BRA` (labels are instruction indices there, so the
/// passes that move instructions leave such programs alone).
fn has_subroutines(insts: &[crate::ir::Instruction]) -> bool {
    insts
        .iter()
        .any(|i| props::uses_instruction_indices(i.opcode))
}
