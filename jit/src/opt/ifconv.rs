//! If-conversion: small `UIF … [ELSE …] ENDIF` blocks become straight code and `UCMP` selects,
//! bit for bit what the interpreter computes for the branchy form.
//!
//! RetroArch shaders branch on nearly every ternary (`c <= 0.04045 ? c / 12.92 : pow(…)`), and a
//! function's early `return` becomes a flag and an `UIF` around the rest of its body. Executed per
//! quad, each block costs a mask test, a branch and a blend of every register it writes, and it
//! hides what the blocks share from value numbering ([`super::lvn`]): crt-lottes fetches the same
//! texel for its beam and its bloom, each fetch inside its own `UIF`. Mesa's llvmpipe runs both
//! sides of every divergent branch under a mask; this pass does the same for blocks that are
//! cheap enough.
//!
//! A block is converted when every instruction in it computes a value from its sources alone and
//! writes a plain temporary: arithmetic, and texture instructions whose result in a lane depends
//! on that lane's coordinates only. In the branchy form, lanes that skip the block keep their old
//! values; in the converted form, each written register is first copied into a shadow temporary,
//! the block runs on the shadows for all lanes, and one `UCMP` per register picks the shadow in
//! the lanes whose condition holds and the old value elsewhere, so every lane ends with exactly
//! the bits the interpreter leaves there. The computations in lanes that would have skipped the
//! block have no effect beyond their discarded results, with these exceptions, which keep a block
//! as it is:
//! - derivatives (`DDX`, `DDY`, …) and `LODQ` read other lanes, which in the branchy form hold
//!   stale values;
//! - texture instructions with an implicit level of detail (`TEX`, `TXB`, `TXP`, `SAMPLE`, …)
//!   compute it from the quad's four coordinates: they are converted only for the texture units
//!   the caller names as level-independent (a sampler with one filter for minification and
//!   magnification, on a texture with one level or without a mip filter: then each lane's texel
//!   depends on its own coordinates only). Explicit-level and gradient sampling, level-0
//!   fetches and `GATHER4` are lane-local on every unit; `TXQ`/`SVIEWINFO` and `TXF`/`SAMPLE_I`
//!   (lane 0's level, as softpipe), `TG4` (lane 0's component) and texel offsets held in
//!   temporaries (lane 0's) are not;
//! - `KILL`, writes to outputs, to address registers, to `TEMP` arrays or through indirect
//!   addresses, reads of temporaries through indirect addresses, and nested flow (inner blocks
//!   are converted first, so an outer block qualifies once its inner ones did);
//! - `IF` (float condition) blocks: the frontends emit `UIF`.
//!
//! Blocks heavier than [`MAX_BLOCK_COST`] stay branches, so a rarely taken large block is still
//! skipped.

use rustc_hash::FxHashSet as HashSet;
use std::collections::BTreeMap;

use super::copies::is_tracked_temp;
use crate::ir::props::{self, TextureLanes};
use crate::ir::structure::{ConstructKind, RegionKind, Structure};
use crate::ir::{
    Declaration, DstOperand, HeaderItem, Instruction, Opcode, OpcodeClass, Program, Register,
    RegisterFile, SrcOperand,
};

/// Weighted size of the largest block converted (both arms), in [`props::cost`]: arithmetic
/// counts 1, moves 0, transcendental functions and texture instructions
/// [`props::HEAVY_COST`]. crt-lottes linearises each fetched texel in a block of three sRGB
/// curves behind its early-return flag that weighs more than 96; at 160 it converts, and value
/// numbering then shares 11 of its 42 fetches with their curves.
pub const MAX_BLOCK_COST: u32 = 160;

/// Converts every qualifying block of `program` (see the module documentation), innermost
/// first; `lane_local_units` has bit `n` set when sampling unit `n` is level-independent.
/// Returns whether the program changed.
pub fn convert_blocks(program: &mut Program, lane_local_units: u64) -> bool {
    if super::has_subroutines(&program.instructions) {
        return false;
    }
    let arrays = super::copies::array_temps(program);
    let mut next_temp = program.file_size(RegisterFile::Temporary);
    let first_new = next_temp;
    let mut changed = false;
    while let Ok(structure) = Structure::of(&program.instructions) {
        let blocks = innermost_blocks(&program.instructions, &structure);
        let uniform = uniform_conditions(&program.instructions, &structure);
        let convertible: Vec<Block> = blocks
            .into_iter()
            .filter(|b| !uniform.contains(&b.start))
            .filter(|b| qualifies(&program.instructions, b, &arrays, lane_local_units))
            .collect();
        if convertible.is_empty() {
            break;
        }
        changed = true;
        let mut out = Vec::with_capacity(program.instructions.len());
        let mut at = 0;
        for b in &convertible {
            out.extend_from_slice(&program.instructions[at..b.start]);
            convert(&program.instructions, b, &mut next_temp, &mut out);
            at = b.end + 1;
        }
        out.extend_from_slice(&program.instructions[at..]);
        program.instructions = out;
    }
    if next_temp > first_new {
        program
            .header
            .push(HeaderItem::Declaration(Declaration::new(
                RegisterFile::Temporary,
                first_new,
                next_temp - 1,
            )));
    }
    changed
}

/// An `UIF` at `start`, its `ELSE` if any, and its `ENDIF` at `end`, with no flow between.
struct Block {
    start: usize,
    else_at: Option<usize>,
    end: usize,
}

/// The `IF`/`UIF` blocks that hold no flow instruction but their own `ELSE`, in program order.
fn innermost_blocks(insts: &[Instruction], structure: &Structure) -> Vec<Block> {
    // Flow instructions before each index, so a block's count is one subtraction.
    let mut flow_before = Vec::with_capacity(insts.len() + 1);
    flow_before.push(0usize);
    for inst in insts {
        let last = *flow_before.last().expect("starts with 0");
        flow_before.push(last + usize::from(inst.opcode.class() == OpcodeClass::Flow));
    }
    structure
        .constructs()
        .iter()
        .filter(|c| c.kind == ConstructKind::If)
        .filter(|c| {
            let inside = flow_before[c.end] - flow_before[c.begin + 1];
            inside == usize::from(c.else_at.is_some())
        })
        .map(|c| Block {
            start: c.begin,
            else_at: c.else_at,
            end: c.end,
        })
        .collect()
}

/// The `UIF`s whose condition is the same in every lane of every quad: computed outside all
/// flow from constants and immediates only (a shader parameter, say). Such a branch is either
/// taken by all lanes or skipped by all, so it stays a branch: converting it would run the code
/// of every setting of the parameter.
fn uniform_conditions(insts: &[Instruction], structure: &Structure) -> HashSet<usize> {
    let mut uniform: HashSet<(u32, u8)> = HashSet::default();
    let mut found = HashSet::default();
    let is_uniform = |uniform: &HashSet<(u32, u8)>, s: &SrcOperand, comps: &[u8]| {
        let direct = s.reg.indirect.is_none()
            && s.reg
                .dimension
                .as_ref()
                .is_none_or(|d| d.indirect.is_none());
        direct
            && match s.reg.file {
                RegisterFile::Constant | RegisterFile::Immediate => true,
                RegisterFile::Temporary => comps
                    .iter()
                    .all(|&c| uniform.contains(&(s.reg.index as u32, s.swizzle[c as usize]))),
                _ => false,
            }
    };
    for (pc, inst) in insts.iter().enumerate() {
        if inst.opcode == Opcode::UIF && is_uniform(&uniform, &inst.src[0], &[0]) {
            found.insert(pc);
        }
        for d in &inst.dst {
            if d.reg.file != RegisterFile::Temporary {
                continue;
            }
            if d.reg.indirect.is_some() {
                uniform.clear();
                continue;
            }
            let comps: Vec<u8> = (0..4).filter(|c| d.write_mask & (1 << c) != 0).collect();
            // Each written component reads the same component of componentwise sources and the
            // first of scalar ones; requiring all four keeps this exact for every opcode.
            let from_uniform = structure.depth(pc) == 0
                && inst.opcode.class() == OpcodeClass::Alu
                && inst
                    .src
                    .iter()
                    .all(|s| is_uniform(&uniform, s, &[0, 1, 2, 3]));
            for c in comps {
                if from_uniform {
                    uniform.insert((d.reg.index as u32, c));
                } else {
                    uniform.remove(&(d.reg.index as u32, c));
                }
            }
        }
    }
    found
}

/// Whether the value `reg` names can be read the same way after renaming: no temporary reached
/// through an address, and no index held in a temporary.
fn renameable_source(reg: &Register, arrays: &HashSet<u32>) -> bool {
    let index_ok = |ind: &Option<crate::ir::Indirect>| {
        ind.as_ref()
            .is_none_or(|i| i.file != RegisterFile::Temporary)
    };
    if reg.file == RegisterFile::Temporary {
        return is_tracked_temp(reg, arrays);
    }
    index_ok(&reg.indirect) && index_ok(&reg.dimension.and_then(|d| d.indirect))
}

/// Whether texture instruction `inst` computes each lane from that lane's sources alone.
fn texture_is_lane_local(inst: &Instruction, lane_local_units: u64) -> bool {
    // Texel offsets are lane 0's (softpipe keeps one offset per instruction).
    let varying_offsets = inst.texture.as_ref().is_some_and(|t| {
        t.offsets
            .iter()
            .any(|o| !matches!(o.reg.file, RegisterFile::Immediate | RegisterFile::Constant))
    });
    let lanes = props::texture_lanes(inst.opcode);
    if varying_offsets || lanes == Some(TextureLanes::Quad) {
        return false;
    }
    if lanes == Some(TextureLanes::Own) {
        return true;
    }
    inst.src
        .iter()
        .filter(|s| {
            matches!(
                s.reg.file,
                RegisterFile::Sampler | RegisterFile::SamplerView
            )
        })
        .all(|s| {
            s.reg.indirect.is_none()
                && (0..64).contains(&s.reg.index)
                && lane_local_units & (1 << s.reg.index) != 0
        })
}

fn qualifies(insts: &[Instruction], b: &Block, arrays: &HashSet<u32>, units: u64) -> bool {
    let cond = &insts[b.start].src[0];
    if insts[b.start].opcode != Opcode::UIF
        || cond.negate
        || cond.absolute
        || !renameable_source(&cond.reg, arrays)
    {
        return false;
    }
    let mut total = 0;
    for inst in insts[b.start + 1..b.end]
        .iter()
        .filter(|i| i.opcode != Opcode::ELSE)
    {
        let op = inst.opcode;
        let kind_ok = match op.class() {
            OpcodeClass::Alu => !props::is_derivative(op),
            OpcodeClass::Texture => texture_is_lane_local(inst, units),
            _ => false,
        };
        let operands_ok = inst
            .dst
            .iter()
            .all(|d| d.reg.file == RegisterFile::Null || is_tracked_temp(&d.reg, arrays))
            && inst.src.iter().all(|s| renameable_source(&s.reg, arrays))
            && inst
                .texture
                .as_ref()
                .is_none_or(|t| t.offsets.iter().all(|o| renameable_source(&o.reg, arrays)));
        if !kind_ok || !operands_ok {
            return false;
        }
        total += props::cost(op);
        if total > MAX_BLOCK_COST {
            return false;
        }
    }
    true
}

/// One arm of a block rewritten onto shadow temporaries; returns register → (shadow, mask
/// written).
fn convert_arm(
    arm: &[Instruction],
    next_temp: &mut u32,
    out: &mut Vec<Instruction>,
) -> BTreeMap<u32, (u32, u8)> {
    let mut shadows: BTreeMap<u32, (u32, u8)> = BTreeMap::new();
    let rename = |reg: &mut Register, shadows: &BTreeMap<u32, (u32, u8)>| {
        if reg.file == RegisterFile::Temporary {
            if let Some(&(s, _)) = shadows.get(&(reg.index as u32)) {
                reg.index = s as i32;
            }
        }
    };
    for inst in arm {
        let mut inst = inst.clone();
        for d in &inst.dst {
            if d.reg.file != RegisterFile::Temporary {
                continue;
            }
            let original = d.reg.index as u32;
            if let std::collections::btree_map::Entry::Vacant(slot) = shadows.entry(original) {
                let shadow = *next_temp;
                *next_temp += 1;
                // The shadow starts as a full copy, so reads of components the arm has not
                // written yet, and the final select, see the register's value before the block.
                out.push(Instruction::new(
                    Opcode::MOV,
                    vec![DstOperand {
                        reg: Register::new(RegisterFile::Temporary, shadow as i32),
                        write_mask: 0xF,
                    }],
                    vec![SrcOperand::new(Register::new(
                        RegisterFile::Temporary,
                        original as i32,
                    ))],
                ));
                slot.insert((shadow, 0));
            }
        }
        for s in &mut inst.src {
            rename(&mut s.reg, &shadows);
        }
        if let Some(t) = &mut inst.texture {
            for o in &mut t.offsets {
                rename(&mut o.reg, &shadows);
            }
        }
        for d in &mut inst.dst {
            if d.reg.file == RegisterFile::Temporary {
                let entry = shadows.get_mut(&(d.reg.index as u32)).expect("shadowed");
                entry.1 |= d.write_mask;
                d.reg.index = entry.0 as i32;
            }
        }
        out.push(inst);
    }
    shadows
}

fn convert(insts: &[Instruction], b: &Block, next_temp: &mut u32, out: &mut Vec<Instruction>) {
    let cond_operand = insts[b.start].src[0];
    let then_end = b.else_at.unwrap_or(b.end);
    let then_arm = &insts[b.start + 1..then_end];
    let else_arm = b.else_at.map_or(&[][..], |e| &insts[e + 1..b.end]);
    let written: HashSet<u32> = then_arm
        .iter()
        .chain(else_arm)
        .flat_map(|i| &i.dst)
        .filter(|d| d.reg.file == RegisterFile::Temporary)
        .map(|d| d.reg.index as u32)
        .collect();
    let lane = cond_operand.swizzle[0];
    // The condition as the UIF read it: copied first when the selects below would overwrite it.
    let cond_reg = if cond_operand.reg.file == RegisterFile::Temporary
        && written.contains(&(cond_operand.reg.index as u32))
    {
        let copy = *next_temp;
        *next_temp += 1;
        let reg = Register::new(RegisterFile::Temporary, copy as i32);
        out.push(Instruction::new(
            Opcode::MOV,
            vec![DstOperand {
                reg,
                write_mask: 1 << lane,
            }],
            vec![cond_operand],
        ));
        reg
    } else {
        cond_operand.reg
    };
    let then_shadows = convert_arm(then_arm, next_temp, out);
    let else_shadows = convert_arm(else_arm, next_temp, out);
    let mut registers: Vec<u32> = written.into_iter().collect();
    registers.sort_unstable();
    for original in registers {
        let side = |shadows: &BTreeMap<u32, (u32, u8)>| match shadows.get(&original) {
            Some(&(s, mask)) => (s, mask),
            None => (original, 0),
        };
        let (then_reg, then_mask) = side(&then_shadows);
        let (else_reg, else_mask) = side(&else_shadows);
        let mask = then_mask | else_mask;
        if mask == 0 {
            continue;
        }
        let temp = |i: u32| SrcOperand::new(Register::new(RegisterFile::Temporary, i as i32));
        out.push(Instruction::new(
            Opcode::UCMP,
            vec![DstOperand {
                reg: Register::new(RegisterFile::Temporary, original as i32),
                write_mask: mask,
            }],
            vec![
                SrcOperand {
                    reg: cond_reg,
                    swizzle: [lane; 4],
                    negate: false,
                    absolute: false,
                },
                temp(then_reg),
                temp(else_reg),
            ],
        ));
    }
}

/// A rough per-quad cost of running `program`: instruction weights as [`props::cost`], every branch
/// taken, and loop bodies counted [`LOOP_TRIPS_GUESS`] times per level of nesting — except loops
/// that end in an unconditional `BRK` (the single-trip loops the naga lowering wraps around a
/// loop body for `continue`), which run once.
pub fn estimated_cost(program: &Program) -> u64 {
    let insts = &program.instructions;
    // How many times each region runs per quad (regions come after the region they lie in);
    // a program whose nesting does not balance counts every instruction once.
    let structure = Structure::of(insts).ok();
    let mut weights: Vec<u64> = Vec::new();
    for region in structure.iter().flat_map(|s| s.regions()) {
        let outer = region.parent.map_or(1, |p| weights[p]);
        let trips = match (region.kind, region.construct) {
            (RegionKind::LoopBody, Some(c)) => {
                let end = structure.as_ref().expect("regions").construct(c).end;
                let single_trip = end > 0 && insts[end - 1].opcode == Opcode::BRK;
                if single_trip {
                    1
                } else {
                    LOOP_TRIPS_GUESS
                }
            }
            _ => 1,
        };
        weights.push(outer.saturating_mul(trips));
    }
    let mut total = 0u64;
    for (pc, inst) in insts.iter().enumerate() {
        let weight = structure.as_ref().map_or(1, |s| weights[s.region_of(pc)]);
        match inst.opcode {
            Opcode::BGNLOOP | Opcode::ENDLOOP => {}
            op if op.class() == OpcodeClass::Flow => total = total.saturating_add(weight),
            op => total = total.saturating_add(weight.saturating_mul(props::cost(op) as u64)),
        }
    }
    total
}

/// How many trips [`estimated_cost`] assumes a loop makes.
pub const LOOP_TRIPS_GUESS: u64 = 8;
