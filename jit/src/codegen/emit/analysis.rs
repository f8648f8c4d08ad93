//! Analyses of the decoded program that decide how registers are compiled: which local
//! register channels never hold a denormal ([`flushed_locals`]), which are `f32x4` rather than
//! `i32x4` variables ([`float_locals`]), which registers live in memory ([`memory_locals`]) and
//! which of their channels each quad must start zeroed ([`zeroed_channels`]). Their neighbours
//! at the code generator's level are `lazy` (results left unflushed) and `uniform` (constructs
//! all lanes take together).

use super::arith::is_denormal;
use crate::interp::decode::{Decoded, DstLoc, Loc, Modifier, Slot, Src};
use crate::ir::{Opcode, OpcodeClass};

/// Which channels of the local registers (TEMP, ADDR) can never hold a denormal: a register
/// channel qualifies when every instruction writing it produces a denormal-free value (a float
/// operation's flushed result, a comparison mask, a saturated value, or a copy of qualifying
/// operands; not a result [`crate::codegen::lazy`] leaves unflushed). Registers start as zero,
/// which qualifies. Reads of such channels skip the input flush. Computed as a fixpoint, since
/// copies depend on other registers.
pub(super) fn flushed_locals(d: &Decoded, lazy: &[u8]) -> Vec<[bool; 4]> {
    use crate::interp::decode::IndirectFile;
    use Opcode::*;
    let mut state = vec![[true; 4]; d.num_locals];
    let src_ok = |state: &Vec<[bool; 4]>, s: &Src, c: usize| -> bool {
        if matches!(s.modifier, Modifier::INeg | Modifier::INegAbs) {
            return false;
        }
        let comp = s.swizzle[c] as usize;
        match s.loc {
            Loc::Direct(Slot::Zero) => true,
            Loc::Direct(Slot::Local(i)) => state[i as usize][comp],
            Loc::Direct(Slot::Imm(i)) => !is_denormal(d.imms[i as usize][comp][0]),
            _ => false,
        }
    };
    loop {
        let mut changed = false;
        for (pc, inst) in d.insts.iter().enumerate() {
            match inst.dst {
                DstLoc::Local(i) => {
                    for c in 0..4 {
                        if inst.write_mask & (1 << c) == 0 || !state[i as usize][c] {
                            continue;
                        }
                        let unflushed = lazy.get(pc).is_some_and(|&l| l & (1 << c) != 0);
                        let ok = !unflushed
                            && (inst.saturate
                                || match inst.op {
                                    ADD | SUB | MUL | DIV | MAD | LRP | DP2 | DP3 | DP4 | DPH
                                    | DP2A | FRC | FLR | CEIL | TRUNC | ROUND | RCP | RSQ
                                    | SQRT | SSG | SLT | SGE | SGT | SLE | SEQ | SNE | FSLT
                                    | FSGE | FSEQ | FSNE | DDX | DDY | DDX_FINE | DDY_FINE
                                    | I2F | U2F | EX2 | LG2 | POW | COS | FMA | LDEXP | ISGE
                                    | ISLT | USEQ | USNE | USGE | USLT => true,
                                    MOV | ABS => src_ok(&state, &inst.src[0], c),
                                    MIN | MAX => {
                                        src_ok(&state, &inst.src[0], c)
                                            && src_ok(&state, &inst.src[1], c)
                                    }
                                    CLAMP => (0..3).all(|k| src_ok(&state, &inst.src[k], c)),
                                    CMP | UCMP => {
                                        src_ok(&state, &inst.src[1], c)
                                            && src_ok(&state, &inst.src[2], c)
                                    }
                                    CND => {
                                        src_ok(&state, &inst.src[0], c)
                                            && src_ok(&state, &inst.src[1], c)
                                    }
                                    _ => false,
                                });
                        if !ok {
                            state[i as usize][c] = false;
                            changed = true;
                        }
                    }
                }
                DstLoc::Indirect(k) => {
                    if let IndirectFile::Local { base, lo, hi } = d.indirects[k as usize].file {
                        for r in lo.max(0)..hi.max(0) {
                            if let Some(st) = state.get_mut(base as usize + r as usize) {
                                if st.iter().any(|&x| x) {
                                    *st = [false; 4];
                                    changed = true;
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if !changed {
            return state;
        }
    }
}

/// Which local register channels are kept as `f32x4` variables rather than `i32x4`: those
/// written more often by float arithmetic than by integer and bitwise operations (copies and
/// selects count for neither). Values are cast where the other type is needed; the choice only
/// saves casts.
pub(super) fn float_locals(d: &Decoded) -> Vec<[bool; 4]> {
    use Opcode::*;
    let mut score = vec![[0i32; 4]; d.num_locals];
    for inst in &d.insts {
        let DstLoc::Local(i) = inst.dst else { continue };
        let w = match inst.op {
            ADD | SUB | MUL | DIV | MAD | LRP | DP2 | DP3 | DP4 | DPH | DP2A | FRC | FLR | CEIL
            | TRUNC | ROUND | RCP | RSQ | SQRT | MIN | MAX | CLAMP | DDX | DDY | DDX_FINE
            | DDY_FINE | I2F | U2F | EX2 | LG2 | POW | SIN | COS => 1,
            MOV | UARL | CMP | UCMP | CND | ABS | NOP => 0,
            _ if inst.op.class() == OpcodeClass::Texture => 0,
            _ if inst.saturate => 1,
            _ => -1,
        };
        for (c, sc) in score[i as usize].iter_mut().enumerate() {
            if inst.write_mask & (1 << c) != 0 {
                *sc += w;
            }
        }
    }
    score.iter().map(|s| s.map(|x| x > 0)).collect()
}

/// The byte offsets (ascending) of the memory-register channels a quad must start with zeroed:
/// those some instruction may read before a write of all four lanes. Such writes are the ones
/// outside every flow construct and before the first `RET` (they execute with full masks, see
/// `walk`); a read is any source, index or offset operand, a masked write (it keeps the old value
/// in the lanes it skips) and every write inside a construct; an indirect operand reads its
/// whole range. With subroutines (whose bodies run at their call sites) every memory channel is
/// zeroed. The others hold whatever an earlier quad left, which no instruction reads.
pub(super) fn zeroed_channels(d: &Decoded, mem: &[bool]) -> Vec<i32> {
    use crate::interp::decode::{IndexReg, IndirectFile};
    use Opcode::*;
    let n = d.num_locals;
    let mut need = vec![0u8; n];
    let subroutines = d
        .insts
        .iter()
        .any(|i| matches!(i.op, CAL | BGNSUB | ENDSUB));
    if subroutines {
        need.fill(0xF);
    } else {
        let mut written = vec![0u8; n];
        let mut returned = false;
        let read = |written: &[u8], need: &mut [u8], i: u32, mask: u8| {
            if let Some(w) = written.get(i as usize) {
                need[i as usize] |= mask & !w;
            }
        };
        let read_index = |written: &[u8], need: &mut [u8], r: Option<IndexReg>| {
            if let Some(IndexReg {
                slot: Slot::Local(i),
                component,
            }) = r
            {
                read(written, need, i, 1 << component);
            }
        };
        let read_indirect = |written: &[u8], need: &mut [u8], k: u32| {
            let ind = d.indirects[k as usize];
            read_index(written, need, ind.index_reg);
            read_index(written, need, ind.dim_reg);
            if let IndirectFile::Local { base, lo, hi } = ind.file {
                let first = (base as i64 + lo).max(0);
                let last = (base as i64 + hi).min(n as i64);
                for r in first..last {
                    read(written, need, r as u32, 0xF);
                }
            }
        };
        let read_src = |written: &[u8], need: &mut [u8], s: &Src| match s.loc {
            Loc::Direct(Slot::Local(i)) => {
                let mask = s.swizzle.iter().fold(0u8, |m, &c| m | 1 << c);
                read(written, need, i, mask);
            }
            Loc::Indirect(k) => read_indirect(written, need, k),
            Loc::Direct(_) => {}
        };
        for (pc, inst) in d.insts.iter().enumerate() {
            for s in &inst.src {
                read_src(&written, &mut need, s);
            }
            if inst.op.class() == OpcodeClass::Texture {
                if let Some(t) = d.textures.get(inst.aux as usize) {
                    if let Some(off) = &t.offset {
                        read_src(&written, &mut need, off);
                    }
                    read_index(&written, &mut need, t.view.index_reg);
                    read_index(&written, &mut need, t.sampler.index_reg);
                }
            }
            if inst.op == RET {
                returned = true;
            }
            // LODQ writes x and y only, whatever its mask says.
            let mask = if inst.op == LODQ {
                inst.write_mask & 0b11
            } else {
                inst.write_mask
            };
            match inst.dst {
                DstLoc::Local(i) if d.structure.depth(pc) == 0 && !returned => {
                    if let Some(w) = written.get_mut(i as usize) {
                        *w |= mask;
                    }
                }
                DstLoc::Local(i) => read(&written, &mut need, i, mask),
                DstLoc::Indirect(k) => read_indirect(&written, &mut need, k),
                DstLoc::Output(_) | DstLoc::Null => {}
            }
        }
    }
    let mut slots = Vec::new();
    for (i, (&m, &channels)) in mem.iter().zip(&need).enumerate() {
        for c in 0..4 {
            if m && channels & (1 << c) != 0 {
                slots.push((i * 64 + c * 16) as i32);
            }
        }
    }
    slots
}

/// Above this many (instructions × SSA registers), every local stays in memory.
///
/// Cranelift's SSA construction gives every merge block a parameter per variable live through
/// it, and its constant-phi removal deletes redundant ones one at a time in linear time each, so
/// compile time grows with the square of the variables: a 23,000-instruction CuNNy pass with 586
/// registers spent minutes there. Memory registers cost loads and stores instead.
const SSA_LOCALS_BUDGET: usize = 4_000_000;

/// Which local registers (TEMP, ADDR) stay in memory: those an indirect operand can address
/// (the kernel computes their addresses per lane), and all of them in programs too large for
/// SSA variables ([`SSA_LOCALS_BUDGET`]). All others live in SSA variables.
pub(super) fn memory_locals(d: &Decoded) -> Vec<bool> {
    use crate::interp::decode::IndirectFile;
    if d.insts.len().saturating_mul(d.num_locals) > SSA_LOCALS_BUDGET {
        return vec![true; d.num_locals];
    }
    let mut mem = vec![false; d.num_locals];
    for ind in &d.indirects {
        if let IndirectFile::Local { base, lo, hi } = ind.file {
            let first = (base as i64 + lo).max(0);
            let last = (base as i64 + hi).min(d.num_locals as i64);
            for r in first..last {
                mem[r as usize] = true;
            }
        }
    }
    mem
}
