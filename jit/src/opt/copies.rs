//! Copy propagation of plain `MOV`s within straight-line code, and removal of writes nobody
//! reads.
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
//! - [`forward_and_remove`] removes a component write only when no instruction of the program
//!   reads that component of that register, so control flow cannot bring it back to life;
//!   [`forward_and_remove_unread`] also removes writes every later read of which follows another
//!   write of the component in all four lanes (a liveness analysis).
//!
//! The caller leaves programs with subroutines alone: their labels are instruction indices.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::ir::structure::{ConstructKind, Structure};
use crate::ir::{props, Opcode, OpcodeClass, Program, Register, RegisterFile};

/// Copy propagation and dead-write removal, a few rounds: removing dead copies can expose
/// further forwarding.
pub(super) fn forward_and_remove(program: &mut Program) {
    let arrays = array_temps(program);
    for _ in 0..4 {
        let forwarded = forward_copies(program, &arrays);
        let removed = remove_dead_writes(program, &arrays);
        if !forwarded && !removed {
            break;
        }
    }
}

/// [`forward_and_remove`] with the liveness-based removal, which also removes every write the
/// other one would.
pub(super) fn forward_and_remove_unread(program: &mut Program) {
    let arrays = array_temps(program);
    for _ in 0..4 {
        let forwarded = forward_copies(program, &arrays);
        let removed = remove_unread_writes(program, &arrays);
        if !forwarded && !removed {
            break;
        }
    }
}

/// TEMP registers in `ARRAY` declarations or reached by indirect addressing: an indirect
/// access without a declared array may reach any of them.
pub(super) fn array_temps(program: &Program) -> HashSet<u32> {
    let mut set = HashSet::default();
    let mut arrays = HashSet::default();
    for d in program.declarations() {
        if d.file == RegisterFile::Temporary && d.array_id.is_some() {
            set.extend(d.first..=d.last);
            arrays.extend(d.array_id);
        }
    }
    let unbounded = program.instructions.iter().any(|inst| {
        let regs = inst
            .src
            .iter()
            .map(|s| &s.reg)
            .chain(inst.dst.iter().map(|d| &d.reg));
        regs.filter(|r| r.file == RegisterFile::Temporary)
            .filter_map(|r| r.indirect)
            .any(|ind| ind.array_id.is_none_or(|id| !arrays.contains(&id)))
    });
    if unbounded {
        set.extend(0..program.file_size(RegisterFile::Temporary));
    }
    set
}

pub(super) fn is_tracked_temp(reg: &Register, arrays: &HashSet<u32>) -> bool {
    reg.file == RegisterFile::Temporary
        && reg.indirect.is_none()
        && reg.dimension.is_none()
        && reg.index >= 0
        && !arrays.contains(&(reg.index as u32))
}

/// Whether a register may be the source of a forwarded copy: never written by the program
/// (inputs, constants, immediates, system values) or a tracked temporary.
fn is_copy_source(reg: &Register, arrays: &HashSet<u32>) -> bool {
    let direct =
        reg.indirect.is_none() && reg.dimension.as_ref().is_none_or(|d| d.indirect.is_none());
    direct
        && match reg.file {
            RegisterFile::Input
            | RegisterFile::Constant
            | RegisterFile::Immediate
            | RegisterFile::SystemValue => true,
            RegisterFile::Temporary => is_tracked_temp(reg, arrays),
            _ => false,
        }
}

/// One round of copy propagation; returns whether anything changed.
fn forward_copies(program: &mut Program, arrays: &HashSet<u32>) -> bool {
    let Ok(structure) = Structure::of(&program.instructions) else {
        return false;
    };
    // (temp index, component) → (source register, component)
    let mut copies: HashMap<(u32, u8), (Register, u8)> = HashMap::default();
    // (source temp index, component) → destinations copied from it (possibly stale: checked
    // against `copies` when used), so a write does not scan every copy.
    let mut copied_from: HashMap<(u32, u8), Vec<(u32, u8)>> = HashMap::default();
    let mut changed = false;
    for (pc, inst) in program.instructions.iter_mut().enumerate() {
        let op = inst.opcode;
        if op.class() == OpcodeClass::Flow {
            copies.clear();
            copied_from.clear();
            // Flow instructions read sources too (IF's condition); forwarding into them is
            // still exact, but not worth the risk of a lane-dependent reading: leave them.
            continue;
        }
        if structure.depth(pc) == 0 || !props::reads_other_lanes(op) {
            for src in &mut inst.src {
                if !is_tracked_temp(&src.reg, arrays) {
                    continue;
                }
                let index = src.reg.index as u32;
                let mapped: Option<Vec<(Register, u8)>> = src
                    .swizzle
                    .iter()
                    .map(|&c| copies.get(&(index, c)).copied())
                    .collect();
                let Some(mapped) = mapped else { continue };
                let reg = mapped[0].0;
                if mapped.iter().all(|(r, _)| *r == reg) {
                    src.reg = reg;
                    for (s, (_, c)) in src.swizzle.iter_mut().zip(&mapped) {
                        *s = *c;
                    }
                    changed = true;
                }
            }
        }
        // Writes end the copies they overwrite, as destinations and as sources.
        for dst in &inst.dst {
            if dst.reg.file == RegisterFile::Temporary && !is_tracked_temp(&dst.reg, arrays) {
                // An indirect or array write: forget everything rather than reason about it.
                copies.clear();
                copied_from.clear();
                continue;
            }
            if dst.reg.file != RegisterFile::Temporary {
                continue;
            }
            let index = dst.reg.index as u32;
            for c in 0..4u8 {
                if dst.write_mask & (1 << c) != 0 {
                    copies.remove(&(index, c));
                    for dest in copied_from.remove(&(index, c)).unwrap_or_default() {
                        let from_here = copies.get(&dest).is_some_and(|(r, rc)| {
                            r.file == RegisterFile::Temporary && r.index as u32 == index && *rc == c
                        });
                        if from_here {
                            copies.remove(&dest);
                        }
                    }
                }
            }
        }
        let plain_mov = op == Opcode::MOV
            && !inst.saturate
            && inst.dst.len() == 1
            && inst.src.len() == 1
            && !inst.src[0].negate
            && !inst.src[0].absolute;
        if plain_mov
            && is_tracked_temp(&inst.dst[0].reg, arrays)
            && is_copy_source(&inst.src[0].reg, arrays)
        {
            let dst = inst.dst[0];
            let src = inst.src[0];
            let index = dst.reg.index as u32;
            let self_copy =
                src.reg.file == RegisterFile::Temporary && src.reg.index as u32 == index;
            if !self_copy {
                for c in 0..4u8 {
                    if dst.write_mask & (1 << c) != 0 {
                        let from = src.swizzle[c as usize];
                        copies.insert((index, c), (src.reg, from));
                        if src.reg.file == RegisterFile::Temporary {
                            copied_from
                                .entry((src.reg.index as u32, from))
                                .or_default()
                                .push((index, c));
                        }
                    }
                }
            }
        }
    }
    changed
}

/// Appends the (temporary, component) pairs `inst` reads: its sources' swizzled components, the
/// index registers of indirect operands (destinations included) and texel offsets.
fn temp_reads(inst: &crate::ir::Instruction, out: &mut Vec<(u32, u8)>) {
    let mut note = |reg: &Register, comps: &[u8]| {
        if reg.file == RegisterFile::Temporary && reg.index >= 0 {
            out.extend(comps.iter().map(|&c| (reg.index as u32, c)));
        }
        for ind in [reg.indirect, reg.dimension.and_then(|d| d.indirect)]
            .into_iter()
            .flatten()
        {
            if ind.file == RegisterFile::Temporary {
                out.push((ind.index, ind.component));
            }
        }
    };
    for src in &inst.src {
        note(&src.reg, &src.swizzle);
    }
    for dst in &inst.dst {
        // Indirect destinations read their index register.
        note(
            &Register {
                file: RegisterFile::Null,
                ..dst.reg
            },
            &[],
        );
    }
    if let Some(tex) = &inst.texture {
        for off in &tex.offsets {
            note(&off.reg, &off.swizzle);
        }
    }
}

/// Removes component writes to tracked temporaries that no instruction reads; returns whether
/// anything changed.
fn remove_dead_writes(program: &mut Program, arrays: &HashSet<u32>) -> bool {
    let mut read: HashSet<(u32, u8)> = HashSet::default();
    let mut scratch = Vec::new();
    for inst in &program.instructions {
        scratch.clear();
        temp_reads(inst, &mut scratch);
        read.extend(scratch.iter().copied());
    }
    let mut changed = false;
    program.instructions.retain_mut(|inst| {
        let op = inst.opcode;
        if !matches!(op.class(), OpcodeClass::Alu | OpcodeClass::Texture) || inst.dst.len() != 1 {
            return true;
        }
        let dst = &mut inst.dst[0];
        if !is_tracked_temp(&dst.reg, arrays) {
            return true;
        }
        let index = dst.reg.index as u32;
        let live = (0..4u8)
            .filter(|c| dst.write_mask & (1 << c) != 0 && read.contains(&(index, *c)))
            .fold(0u8, |m, c| m | (1 << c));
        if live == dst.write_mask {
            return true;
        }
        changed = true;
        dst.write_mask = live;
        live != 0
    });
    changed
}

/// Removes component writes to tracked temporaries that no later instruction reads before the
/// component is overwritten in all four lanes; returns whether anything changed.
///
/// A backward scan with the set of live components. A write kills a component only outside
/// every branch, loop and switch and before any `RET` (the places where it reaches all four lanes
/// — derivatives and texture instructions read the others too); a loop adds everything its body
/// reads when the scan enters it from its end, because its back edge carries values to earlier
/// instructions.
fn remove_unread_writes(program: &mut Program, arrays: &HashSet<u32>) -> bool {
    let insts = &program.instructions;
    let Ok(structure) = Structure::of(insts) else {
        return false;
    };
    let first_ret = insts
        .iter()
        .position(|i| i.opcode == Opcode::RET)
        .unwrap_or(usize::MAX);
    // Per construct: the innermost loop it lies in, itself included (parents come first).
    let constructs = structure.constructs();
    let mut innermost_loop: Vec<Option<usize>> = Vec::with_capacity(constructs.len());
    for (c, construct) in constructs.iter().enumerate() {
        innermost_loop.push(match construct.kind {
            ConstructKind::Loop => Some(c),
            _ => construct.parent.and_then(|p| innermost_loop[p]),
        });
    }
    let loop_around = |pc: usize| structure.enclosing(pc).and_then(|c| innermost_loop[c]);
    // Everything each loop reads (by construct while open), then keyed by its ENDLOOP.
    let mut loop_reads: HashMap<usize, HashSet<(u32, u8)>> = HashMap::default();
    let mut open: HashMap<usize, HashSet<(u32, u8)>> = HashMap::default();
    let mut scratch = Vec::new();
    for (pc, inst) in insts.iter().enumerate() {
        match inst.opcode {
            Opcode::BGNLOOP => {}
            Opcode::ENDLOOP => {
                let c = structure.delimited_by(pc).expect("ENDLOOP closes a loop");
                let reads = open.remove(&c).unwrap_or_default();
                if let Some(outer) = constructs[c].parent.and_then(|p| innermost_loop[p]) {
                    open.entry(outer).or_default().extend(reads.iter().copied());
                }
                loop_reads.insert(pc, reads);
            }
            _ => {
                if let Some(l) = loop_around(pc) {
                    scratch.clear();
                    temp_reads(inst, &mut scratch);
                    open.entry(l).or_default().extend(scratch.iter().copied());
                }
            }
        }
    }
    let mut live: HashSet<(u32, u8)> = HashSet::default();
    let mut masks: Vec<u8> = insts
        .iter()
        .map(|i| i.dst.first().map_or(0, |d| d.write_mask))
        .collect();
    let mut changed = false;
    for pc in (0..insts.len()).rev() {
        let inst = &insts[pc];
        if inst.opcode == Opcode::ENDLOOP {
            live.extend(loop_reads[&pc].iter().copied());
        }
        let removable = matches!(inst.opcode.class(), OpcodeClass::Alu | OpcodeClass::Texture)
            && inst.dst.len() == 1
            && is_tracked_temp(&inst.dst[0].reg, arrays);
        if removable {
            let index = inst.dst[0].reg.index as u32;
            let written = inst.dst[0].write_mask;
            let received = props::written_mask(inst);
            let needed = (0..4u8)
                .filter(|&c| written & (1 << c) != 0 && live.contains(&(index, c)))
                .fold(0u8, |m, c| m | (1 << c));
            if needed != written {
                masks[pc] = needed;
                changed = true;
            }
            if structure.depth(pc) == 0 && pc < first_ret {
                for c in 0..4u8 {
                    if received & (1 << c) != 0 {
                        live.remove(&(index, c));
                    }
                }
            }
            if needed == 0 {
                continue;
            }
        }
        scratch.clear();
        temp_reads(inst, &mut scratch);
        live.extend(scratch.iter().copied());
    }
    if !changed {
        return false;
    }
    let mut pc = 0;
    program.instructions.retain_mut(|inst| {
        let mask = masks[pc];
        pc += 1;
        if let Some(d) = inst.dst.first_mut() {
            if d.write_mask != mask {
                d.write_mask = mask;
                return mask != 0;
            }
        }
        true
    });
    true
}
