//! Temporary-register compaction: renumbers the TEMP file so that temporaries whose lifetimes do
//! not overlap share a register, without changing a single output bit or the kill mask.
//!
//! The naga lowering gives every expression its own temporary, so a large RetroArch pass (Mega
//! Bezel's) declares 50,000 TEMPs of which a few hundred are live at once. Every executor pays
//! for the declared size: the interpreter zeroes the register file per quad, the JIT keeps every
//! register in memory past its SSA budget, and its SSA construction scales with the number of
//! variables times the number of blocks (minutes and gigabytes at that size). Mesa's nir_to_tgsi allocates registers the same way.
//!
//! Registers start at zero for every quad, and executors keep the old value of a register in the
//! lanes a masked write skips, so reuse must never let a temporary observe another's leftovers.
//! A temporary may take a register another one used before only when it is *defined before use
//! on every lane that reads it*:
//! - let R be the innermost control region (IF branch, ELSE branch, loop body, switch case, or the
//!   whole program) holding all its occurrences; the first occurrence of every component it
//!   touches is a direct write at R's own nesting level that does not also read that component.
//!   From such a write on, until R is left or re-entered, the executing lanes can only shrink, so
//!   every later read in R reads a lane the write covered;
//! - an instruction that reads other lanes of the quad (derivatives, texture instructions with
//!   their implicit level of detail) sees lanes the write skipped, so a temporary such an
//!   instruction reads qualifies only when R is the whole program and its defining writes come
//!   before any `RET` (all four lanes execute them).
//!
//! Every other temporary gets a register nobody used before it. Lifetimes are instruction
//! intervals, widened over every loop (inside R) that holds an occurrence, because a loop's
//! back edge carries values to earlier instructions. Arrays (`DCL TEMP[a..b], ARRAY(n)`) that an
//! indirect operand addresses keep their shape and move to the front of the file; the others
//! are plain temporaries (after specialization Mega Bezel's under-screen bezel pass indexes none
//! of its 300 arrays: 1,786 temporaries became 158). Programs with subroutines, `BRA`, or indirect
//! access to temporaries outside a declared array are left alone.

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;

use crate::ir::structure::{Region, RegionKind, Structure};
use crate::ir::{
    props, Declaration, HeaderItem, Opcode, OpcodeClass, Program, Register, RegisterFile,
};

/// Renumbers the temporaries of `program` (see the module documentation); returns the number of
/// TEMP registers declared before and after.
pub fn compact_temps(program: &mut Program) -> (u32, u32) {
    let before = program.file_size(RegisterFile::Temporary);
    let Some(mapping) = plan(program) else {
        return (before, before);
    };
    apply(program, &mapping);
    (before, program.file_size(RegisterFile::Temporary))
}

/// What one temporary does, gathered in one walk over the program.
#[derive(Clone, Debug, Default)]
struct Usage {
    first: usize,
    last: usize,
    /// Regions of its occurrences (deduplicated).
    regions: BTreeSet<usize>,
    /// Per component: (instruction index, region, whether that first touch is a clean write).
    first_touch: [Option<(usize, usize, bool)>; 4],
    /// Read by an instruction that reads other lanes of the quad.
    cross_lane: bool,
}

/// The old → new index of every temporary and the declarations of the new file, or `None` when
/// the program must be left alone.
struct Mapping {
    index: HashMap<u32, u32>,
    arrays: Vec<Declaration>,
    plain_count: u32,
}

fn plan(program: &Program) -> Option<Mapping> {
    let instructions = &program.instructions;
    if super::has_subroutines(instructions) {
        return None;
    }
    let addressed = indirectly_addressed_arrays(program);
    let mut array_of: HashMap<u32, usize> = HashMap::default();
    let mut array_decls: Vec<Declaration> = Vec::new();
    for d in program.declarations() {
        if d.file == RegisterFile::Temporary
            && d.array_id.is_some()
            && addressed.iter().any(|&(id, index)| {
                (id.is_some() && id == d.array_id) || (d.first..=d.last).contains(&index)
            })
        {
            for r in d.first..=d.last {
                array_of.insert(r, array_decls.len());
            }
            array_decls.push(d.clone());
        }
    }

    let structure = Structure::of(instructions).ok()?;
    let regions = structure.regions();
    let first_ret = instructions
        .iter()
        .position(|i| i.opcode == Opcode::RET)
        .unwrap_or(usize::MAX);

    let mut usage: HashMap<u32, Usage> = HashMap::default();
    for (pc, inst) in instructions.iter().enumerate() {
        let region = structure.region_of(pc);
        let cross_lane = props::reads_other_lanes(inst.opcode);
        // Reads first (an instruction reads all its sources before it writes), conservatively
        // every swizzle component.
        let mut reads: Vec<(u32, u8)> = Vec::new();
        let read_reg = |reg: &Register, comps: &[u8], reads: &mut Vec<(u32, u8)>| -> bool {
            if let Some(ind) = &reg.indirect {
                if ind.file == RegisterFile::Temporary {
                    reads.push((ind.index, ind.component));
                }
            }
            if let Some(ind) = reg.dimension.as_ref().and_then(|d| d.indirect.as_ref()) {
                if ind.file == RegisterFile::Temporary {
                    reads.push((ind.index, ind.component));
                }
            }
            if reg.file != RegisterFile::Temporary {
                return true;
            }
            if reg.index < 0 || reg.dimension.is_some() {
                return false;
            }
            if let Some(ind) = &reg.indirect {
                // Indirect reads of an array stay inside it (bounds come from its
                // declaration), and arrays keep their shape; without an array, an index is
                // bounded by the whole file and could reach any temporary.
                return ind.array_id.is_some() && array_of.contains_key(&(reg.index as u32));
            }
            for &c in comps {
                reads.push((reg.index as u32, c));
            }
            true
        };
        for src in &inst.src {
            if !read_reg(&src.reg, &src.swizzle, &mut reads) {
                return None;
            }
        }
        if let Some(tex) = &inst.texture {
            for off in &tex.offsets {
                if !read_reg(&off.reg, &off.swizzle, &mut reads) {
                    return None;
                }
            }
        }
        let mut writes: Vec<(u32, u8)> = Vec::new();
        for dst in &inst.dst {
            // The address computation of an indirect destination is a read.
            if !read_reg(
                &Register {
                    file: RegisterFile::Null,
                    ..dst.reg
                },
                &[],
                &mut reads,
            ) {
                return None;
            }
            if dst.reg.file != RegisterFile::Temporary {
                continue;
            }
            if dst.reg.index < 0 || dst.reg.dimension.is_some() {
                return None;
            }
            if let Some(ind) = &dst.reg.indirect {
                if ind.array_id.is_none() || !array_of.contains_key(&(dst.reg.index as u32)) {
                    return None;
                }
                continue;
            }
            // LODQ writes x and y only, whatever its mask says.
            let written = props::written_mask(inst);
            for c in 0..4u8 {
                if written & (1 << c) != 0 {
                    writes.push((dst.reg.index as u32, c));
                }
            }
        }
        let flow = inst.opcode.class() == OpcodeClass::Flow;
        for &(t, c) in reads.iter().chain(&writes) {
            let u = usage.entry(t).or_insert_with(|| Usage {
                first: pc,
                ..Usage::default()
            });
            u.last = pc;
            u.regions.insert(region);
            if u.first_touch[c as usize].is_none() {
                let read_here = reads.contains(&(t, c));
                let clean_write = !read_here && !flow && writes.contains(&(t, c));
                u.first_touch[c as usize] = Some((pc, region, clean_write));
            }
        }
        if cross_lane {
            for &(t, _) in &reads {
                usage.get_mut(&t).expect("just recorded").cross_lane = true;
            }
        }
    }

    // Lifetimes and whether each plain temporary may take a used register.
    struct Life {
        temp: u32,
        start: usize,
        end: usize,
        reuses: bool,
    }
    let mut lives: Vec<Life> = Vec::new();
    for (&temp, u) in &usage {
        if array_of.contains_key(&temp) {
            continue;
        }
        let home = u
            .regions
            .iter()
            .copied()
            .reduce(|a, b| common_region(regions, a, b))
            .expect("a used temporary has a region");
        let defined_first = u.first_touch.iter().flatten().all(|&(pc, region, clean)| {
            clean && region == home && (!u.cross_lane || (home == 0 && pc < first_ret))
        });
        // Widen over loops between the occurrences and the home region (all loops enclosing an
        // occurrence when the temporary may read a value from before its first instruction).
        let (mut start, mut end) = (u.first, u.last);
        for &r in &u.regions {
            let mut cur = Some(r);
            while let Some(c) = cur {
                if defined_first && c == home {
                    break;
                }
                if regions[c].kind == RegionKind::LoopBody {
                    start = start.min(regions[c].start);
                    end = end.max(regions[c].end);
                }
                cur = regions[c].parent;
            }
        }
        lives.push(Life {
            temp,
            start,
            end,
            reuses: defined_first,
        });
    }
    lives.sort_by_key(|l| (l.start, l.temp));

    // Linear scan: registers whose lifetime has ended go back to the pool; only temporaries
    // defined before use may take a pooled register.
    let array_size: u32 = array_decls.iter().map(|d| d.last - d.first + 1).sum();
    let mut index = HashMap::default();
    let mut next_array = 0u32;
    for d in &array_decls {
        for r in d.first..=d.last {
            index.insert(r, next_array + (r - d.first));
        }
        next_array += d.last - d.first + 1;
    }
    let mut active: BTreeSet<(usize, u32)> = BTreeSet::new(); // (end, register)
    let mut pool: BTreeSet<u32> = BTreeSet::new();
    let mut fresh = 0u32;
    for life in &lives {
        while let Some(&(end, reg)) = active.first() {
            if end >= life.start {
                break;
            }
            active.pop_first();
            pool.insert(reg);
        }
        let reg = match life.reuses.then(|| pool.pop_first()).flatten() {
            Some(r) => r,
            None => {
                fresh += 1;
                fresh - 1
            }
        };
        active.insert((life.end, reg));
        index.insert(life.temp, array_size + reg);
    }
    let arrays = array_decls
        .iter()
        .scan(0u32, |at, d| {
            let mut moved = d.clone();
            moved.first = *at;
            moved.last = *at + (d.last - d.first);
            *at = moved.last + 1;
            Some(moved)
        })
        .collect();
    Some(Mapping {
        index,
        arrays,
        plain_count: fresh,
    })
}

/// The array id and base register of every indirect access to a temporary: only the arrays
/// these reach keep their shape; the others are plain temporaries (specialization turns most
/// indirect accesses of Mega Bezel's 300 small local arrays into direct ones).
fn indirectly_addressed_arrays(program: &Program) -> Vec<(Option<u32>, u32)> {
    let mut found = Vec::new();
    let mut visit = |reg: &Register| {
        if let (RegisterFile::Temporary, Some(ind)) = (reg.file, &reg.indirect) {
            found.push((ind.array_id, reg.index.max(0) as u32));
        }
    };
    for inst in &program.instructions {
        inst.src.iter().for_each(|s| visit(&s.reg));
        inst.dst.iter().for_each(|d| visit(&d.reg));
        if let Some(tex) = &inst.texture {
            tex.offsets.iter().for_each(|o| visit(&o.reg));
        }
    }
    found
}

/// The innermost region containing both `a` and `b`.
fn common_region(regions: &[Region], a: usize, b: usize) -> usize {
    let ancestors = |mut r: usize| {
        let mut chain = vec![r];
        while let Some(p) = regions[r].parent {
            chain.push(p);
            r = p;
        }
        chain
    };
    let from_a = ancestors(a);
    ancestors(b)
        .into_iter()
        .find(|r| from_a.contains(r))
        .unwrap_or(0)
}

fn apply(program: &mut Program, mapping: &Mapping) {
    let rename = |reg: &mut Register| {
        if reg.file == RegisterFile::Temporary && reg.index >= 0 {
            if let Some(&n) = mapping.index.get(&(reg.index as u32)) {
                reg.index = n as i32;
            }
        }
        if let Some(ind) = &mut reg.indirect {
            if ind.file == RegisterFile::Temporary {
                if let Some(&n) = mapping.index.get(&ind.index) {
                    ind.index = n;
                }
            }
        }
        if let Some(ind) = reg.dimension.as_mut().and_then(|d| d.indirect.as_mut()) {
            if ind.file == RegisterFile::Temporary {
                if let Some(&n) = mapping.index.get(&ind.index) {
                    ind.index = n;
                }
            }
        }
    };
    for inst in &mut program.instructions {
        for src in &mut inst.src {
            rename(&mut src.reg);
        }
        for dst in &mut inst.dst {
            rename(&mut dst.reg);
        }
        if let Some(tex) = &mut inst.texture {
            for off in &mut tex.offsets {
                rename(&mut off.reg);
            }
        }
    }
    // Replace the TEMP declarations where the first one stood: arrays, then the plain file.
    let at = program
        .header
        .iter()
        .position(|h| matches!(h, HeaderItem::Declaration(d) if d.file == RegisterFile::Temporary));
    program
        .header
        .retain(|h| !matches!(h, HeaderItem::Declaration(d) if d.file == RegisterFile::Temporary));
    let Some(at) = at else { return };
    let mut decls: Vec<HeaderItem> = mapping
        .arrays
        .iter()
        .map(|d| HeaderItem::Declaration(d.clone()))
        .collect();
    if mapping.plain_count > 0 {
        let first = mapping.arrays.last().map_or(0, |d| d.last + 1);
        decls.push(HeaderItem::Declaration(Declaration::new(
            RegisterFile::Temporary,
            first,
            first + mapping.plain_count - 1,
        )));
    }
    program.header.splice(at..at, decls);
}
