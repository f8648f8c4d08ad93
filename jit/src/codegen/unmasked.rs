//! Which register writes inside narrowing branches and loops may skip their per-lane blend.
//!
//! Under a narrowing `IF` (or loop) the emitter writes a register as `exec ? new : old`: the
//! lanes that do not run the write keep the value the interpreter leaves them. That blend costs
//! a `blendvps` per written channel, and it keeps every old value alive through the construct,
//! which in a large branch means spills. It is needed only where a lane that skips the write
//! still reads the old value afterwards.
//!
//! A lane that skips a write waits at a known place: a lane that left the `THEN` arm of a
//! narrowing `IF` resumes at its `ELSE` arm (or, without one, after the `ENDIF`); a lane that
//! ran the `THEN` arm before the `ELSE` arm executes resumes after the `ENDIF`; in a narrowing
//! loop, a lane that left resumes after the `ENDLOOP` and one that continued at the top of the
//! body. Lanes inactive because of an outer construct wait where that construct sends them. A
//! write may therefore leave any value in the skipping lanes when the written channel is dead
//! (per-lane liveness: no path reads it before writing it) at every place the constructs around
//! the write send their skipping lanes — and it is: by then they resume only after the write, and
//! each of their later reads follows a write they run themselves.
//!
//! Per-lane liveness does not follow reads of other lanes: texture instructions (the level of
//! detail, lane 0's offset or level) and derivatives read a quad's inactive lanes too, so
//! channels they read, and the index registers of indirect operands, are always blended. Only
//! SSA registers qualify (memory registers are stored whole). Programs with subroutines, `SWITCH`
//! or `RET` keep every blend, as `lazy` keeps every flush there.

use crate::interp::decode::{Decoded, DstLoc, Loc, Slot, Src};
use crate::ir::props::reads_other_lanes;
use crate::ir::structure::RegionKind;
use crate::ir::{Opcode, OpcodeClass};

use super::lazy::{
    get, index_read, index_reads, live_in_fixpoint, mark_kills, set, successors,
    writes_every_channel,
};

/// Per instruction: whether its write to an SSA register may skip the blend with the execution
/// mask (see the module documentation). `memory` marks the registers kept in memory, `uniform`
/// the `IF`s and loops all lanes take together (`uniform::uniform_constructs`).
pub(super) fn unmasked_writes(d: &Decoded, memory: &[bool], uniform: &[bool]) -> Vec<bool> {
    let n = d.insts.len();
    let mut unmasked = vec![false; n];
    if d.insts.iter().any(|i| i.op == Opcode::RET) {
        return unmasked;
    }
    let Some(succ) = successors(d) else {
        return unmasked;
    };
    let words = (d.num_locals * 4).div_ceil(64).max(1);
    let mut gen = vec![0u64; n * words];
    let mut kill = vec![0u64; n * words];
    // Channels some instruction reads in lanes other than its own.
    let mut quad_read = vec![0u64; words];
    for (pc, inst) in d.insts.iter().enumerate() {
        let g = &mut gen[pc * words..(pc + 1) * words];
        let cross = reads_other_lanes(inst.op);
        for s in &inst.src {
            src_reads(d, s, g, &mut quad_read, cross);
        }
        if let DstLoc::Indirect(k) = inst.dst {
            indirect_index_reads(d, k, g, &mut quad_read);
        }
        let texture = inst.op.class() == OpcodeClass::Texture;
        if let Some(t) = d.textures.get(inst.aux as usize).filter(|_| texture) {
            for r in [t.view.index_reg, t.sampler.index_reg]
                .into_iter()
                .flatten()
            {
                index_read(r, g);
                index_read(r, &mut quad_read);
            }
            if let Some(off) = &t.offset {
                src_reads(d, off, g, &mut quad_read, true);
            }
        }
        mark_kills(inst, &mut kill[pc * words..(pc + 1) * words]);
    }
    let live_in = live_in_fixpoint(&succ, &gen, &kill, words, &[]);
    let live_at = |pc: usize, bit: usize| pc < n && get(&live_in[pc * words..], bit);
    let s = &d.structure;
    for (pc, inst) in d.insts.iter().enumerate() {
        let DstLoc::Local(i) = inst.dst else { continue };
        if !writes_every_channel(inst.op)
            || memory.get(i as usize).copied().unwrap_or(true)
            || s.depth(pc) == 0
        {
            continue;
        }
        let bits: Vec<usize> = (0..4)
            .filter(|c| inst.write_mask & (1 << c) != 0)
            .map(|c| i as usize * 4 + c)
            .collect();
        if bits.iter().any(|&b| get(&quad_read, b)) {
            continue;
        }
        // The places where the lanes skipping this write wait, one or two per enclosing
        // narrowing construct.
        let mut waits = Vec::new();
        let mut ok = true;
        let mut region = Some(s.region_of(pc));
        while let Some(r) = region {
            let reg = s.regions()[r];
            region = reg.parent;
            let Some(c) = reg.construct else { break };
            let con = s.construct(c);
            if uniform.get(con.begin).copied().unwrap_or(false) {
                continue;
            }
            match reg.kind {
                RegionKind::Then => waits.push(con.else_at.map_or(con.end, |e| e + 1)),
                RegionKind::Else => waits.push(con.end),
                RegionKind::LoopBody => {
                    waits.push(con.begin + 1);
                    waits.push(con.end + 1);
                }
                _ => {
                    ok = false;
                    break;
                }
            }
        }
        unmasked[pc] = ok && waits.iter().all(|&w| bits.iter().all(|&b| !live_at(w, b)));
    }
    unmasked
}

/// Marks the local channels reading `s` reads in `gen` (and in `quad_read` too when the reader
/// reads other lanes); index registers always count as read by the quad.
fn src_reads(d: &Decoded, s: &Src, gen: &mut [u64], quad_read: &mut [u64], cross: bool) {
    match s.loc {
        Loc::Direct(Slot::Local(i)) => {
            for &comp in &s.swizzle {
                let bit = i as usize * 4 + (comp as usize & 3);
                set(gen, bit);
                if cross {
                    set(quad_read, bit);
                }
            }
        }
        Loc::Indirect(k) => indirect_index_reads(d, k, gen, quad_read),
        Loc::Direct(_) => {}
    }
}

fn indirect_index_reads(d: &Decoded, k: u32, gen: &mut [u64], quad_read: &mut [u64]) {
    index_reads(d, k, gen);
    index_reads(d, k, quad_read);
}
