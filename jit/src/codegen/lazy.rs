//! Which arithmetic results may skip their denormal flush.
//!
//! The interpreter flushes every arithmetic result (`ops::flush`); the JIT does it with one
//! `addps r, -0.0` per result channel, which also lengthens every dependency chain by an
//! addition. Kernels run with MXCSR.DAZ, so an unflushed denormal `r` read by an SSE float
//! instruction is read as the zero of its sign — exactly the flushed value. A result may
//! therefore stay unflushed when every instruction that can read it reads it only that way:
//! through float arithmetic or comparisons, or through a select taken only for NaN (where `r`
//! and its flush are the same bits). Moves, selects and MIN/MAX pass it on: their result is then
//! the unflushed denormal of the interpreter's, which is as good as long as that result, too,
//! only reaches such reads. Integer and bit operations, stores to outputs, the interpreter step
//! and the sampler see the bits and need the flushed value.
//!
//! The analysis is a backward liveness over the program's control-flow graph of "channels whose
//! current value may reach such a bit-exact read": a result is written unflushed when its
//! channel is not live after the instruction. Liveness per lane is liveness on the graph (each
//! lane follows one path; masked SIMD execution only interleaves them), so the answer holds for
//! every lane — except where an instruction reads lanes that do not run it: texture
//! instructions (the level of detail uses the whole quad's coordinates), so channels they read
//! never hold unflushed values. (Derivatives read other lanes too, but as float arithmetic.)
//! Programs with subroutines or SWITCH keep every flush (their flow is not modelled).

use crate::interp::decode::{Decoded, DstLoc, IndexReg, Inst, Loc, Modifier, Slot, Src};
use crate::ir::{Opcode, OpcodeClass};

/// Opcodes whose result channels the emitter can leave unflushed: their last step is a float
/// addition, subtraction, multiplication or division.
pub(super) fn lazy_capable(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        ADD | SUB
            | MUL
            | DIV
            | MAD
            | LRP
            | DP2
            | DP3
            | DP4
            | DPH
            | DP2A
            | FRC
            | DDX
            | DDY
            | DDX_FINE
            | DDY_FINE
            | RCP
            | RSQ
    )
}

/// True when source `k` of `op` reads a denormal as the zero of its sign. For arithmetic and
/// comparisons the emitter reads it only through DAZ float instructions (or selects taken for
/// NaN operands only). EX2, LG2, POW, COS, F2I/F2U, KILL_IF and IF flush their input in the
/// interpreter (`ops`), so `op(d)` = `op(flush(d))` there — and the JIT, bit-exact with the
/// interpreter on denormal inputs too (`jit_diff`), computes the same for both.
fn reads_as_float(op: Opcode, k: usize) -> bool {
    use Opcode::*;
    match op {
        ADD | SUB | MUL | DIV | MAD | LRP | DP2 | DP3 | DP4 | DPH | DP2A | FMA | SLT | SGE
        | SGT | SLE | SEQ | SNE | FSLT | FSGE | FSEQ | FSNE | FLR | CEIL | TRUNC | ROUND | FRC
        | SSG | DDX | DDY | DDX_FINE | DDY_FINE | RCP | RSQ | SQRT | EX2 | LG2 | POW | COS
        | F2I | F2U | KILL_IF | IF => true,
        // The comparison operand only; the selected ones are copied.
        CMP => k == 0,
        CND => k == 2,
        _ => false,
    }
}

/// Sources of `op` whose bits the emitter copies into the result, channel `c` from the
/// source's `swizzle[c]`: a move, the selected operands of a select, and MIN/MAX operands (a NaN
/// operand yields the other one as it is; otherwise `maxps`/`minps` under DAZ return the flushed
/// value). An unflushed denormal there leaves the result the unflushed denormal of what the
/// interpreter computes, so the read is safe exactly when the result itself may stay unflushed.
fn forwards(op: Opcode, k: usize) -> bool {
    use Opcode::*;
    match op {
        // SIN returns a denormal argument as it is (`ops::sin`), and ±0 for its flush.
        MOV | ABS | SIN => k == 0,
        MIN | MAX => k < 2,
        CLAMP => k < 3,
        CMP | UCMP => k == 1 || k == 2,
        CND => k < 2,
        _ => false,
    }
}

/// True when `op` writes every channel of its write mask (for the lanes it runs on), so the
/// old value is gone. Not, for example, LODQ (x and y only) or the other texture queries and
/// legacy opcodes: those let the old value through, and it must stay live.
pub(super) fn writes_every_channel(op: Opcode) -> bool {
    use Opcode::*;
    lazy_capable(op)
        || matches!(
            op,
            MOV | ABS
                | MIN
                | MAX
                | CLAMP
                | CMP
                | UCMP
                | CND
                | FMA
                | SLT
                | SGE
                | SGT
                | SLE
                | SEQ
                | SNE
                | FSLT
                | FSGE
                | FSEQ
                | FSNE
                | FLR
                | CEIL
                | TRUNC
                | ROUND
                | SSG
                | SQRT
                | EX2
                | LG2
                | POW
                | SIN
                | COS
                | I2F
                | U2F
                | F2I
                | F2U
                | NOT
                | AND
                | OR
                | XOR
                | SHL
                | USHR
                | ISHR
                | UADD
                | UMUL
                | UMAD
                | IMAX
                | IMIN
                | UMAX
                | UMIN
                | INEG
                | IABS
                | ISSG
                | ISGE
                | ISLT
                | USEQ
                | USNE
                | USGE
                | USLT
                | UARL
                | ARL
        )
}

/// Per instruction, the destination channels (write-mask bits) whose result the emitter may
/// leave unflushed. `memory` marks local registers kept in memory (never left unflushed).
pub(super) fn lazy_results(d: &Decoded, memory: &[bool]) -> Vec<u8> {
    let n = d.insts.len();
    let mut lazy = vec![0u8; n];
    // Results in memory registers stay flushed: with every register there (large programs),
    // nothing is left to decide.
    if memory.iter().all(|&m| m) {
        return lazy;
    }
    let Some(succ) = successors(d) else {
        return lazy;
    };
    let words = (d.num_locals * 4).div_ceil(64).max(1);
    let mut gen = vec![0u64; n * words];
    let mut kill = vec![0u64; n * words];
    // Per instruction, (destination channel, source channel) pairs of forwarded operands: the
    // source channel is live before the instruction when the destination channel is after it.
    let mut fwd: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    // Channels a texture instruction reads: it reads them on every lane of the quad, also on
    // lanes that do not run it (their coordinates feed the level of detail), whose own path the
    // liveness does not follow. These channels only ever hold the interpreter's bits.
    let mut texture_read = vec![0u64; words];
    for inst in d.insts.iter() {
        if inst.op.class() == OpcodeClass::Texture {
            for s in &inst.src {
                if let Loc::Direct(Slot::Local(i)) = s.loc {
                    set_swizzled(&mut texture_read, i, &s.swizzle);
                }
            }
        }
    }
    for (pc, inst) in d.insts.iter().enumerate() {
        bit_reads(
            d,
            inst,
            &mut gen[pc * words..(pc + 1) * words],
            memory,
            &texture_read,
            &mut fwd[pc],
        );
        mark_kills(inst, &mut kill[pc * words..(pc + 1) * words]);
    }
    let live_in = live_in_fixpoint(&succ, &gen, &kill, words, &fwd);
    let mut out = vec![0u64; words];
    for (pc, inst) in d.insts.iter().enumerate() {
        let DstLoc::Local(i) = inst.dst else { continue };
        if inst.saturate || !lazy_capable(inst.op) || memory[i as usize] {
            continue;
        }
        live_out(&succ[pc], &live_in, words, &mut out);
        for c in 0..4 {
            let bit = i as usize * 4 + c;
            if inst.write_mask & (1 << c) != 0 && !get(&out, bit) && !get(&texture_read, bit) {
                lazy[pc] |= 1 << c;
            }
        }
    }
    lazy
}

/// Marks in `kill` the local channels `inst` overwrites whole: a local destination's written
/// channels, when the opcode writes every one of them on every lane.
pub(super) fn mark_kills(inst: &Inst, kill: &mut [u64]) {
    if let (DstLoc::Local(i), true) = (inst.dst, writes_every_channel(inst.op)) {
        for c in 0..4 {
            if inst.write_mask & (1 << c) != 0 {
                set(kill, i as usize * 4 + c);
            }
        }
    }
}

/// The backward liveness fixpoint over the control-flow graph `succ`: per instruction
/// (`words` words each), the channels live before it, from what each reads (`gen`) and
/// overwrites (`kill`). `fwd[pc]`, where given, holds (destination, source) channel pairs whose
/// source is live before the instruction when the destination is after it. Reverse program
/// order converges in a few passes (one more per loop nesting level).
pub(super) fn live_in_fixpoint(
    succ: &[Vec<u32>],
    gen: &[u64],
    kill: &[u64],
    words: usize,
    fwd: &[Vec<(u32, u32)>],
) -> Vec<u64> {
    let n = succ.len();
    let mut live_in = vec![0u64; n * words];
    let mut out = vec![0u64; words];
    let mut next = vec![0u64; words];
    loop {
        let mut changed = false;
        for pc in (0..n).rev() {
            live_out(&succ[pc], &live_in, words, &mut out);
            let base = pc * words;
            for w in 0..words {
                next[w] = (out[w] & !kill[base + w]) | gen[base + w];
            }
            for &(dst, src) in fwd.get(pc).into_iter().flatten() {
                if get(&out, dst as usize) {
                    set(&mut next, src as usize);
                }
            }
            if next[..] != live_in[base..base + words] {
                live_in[base..base + words].copy_from_slice(&next);
                changed = true;
            }
        }
        if !changed {
            return live_in;
        }
    }
}

/// The union of the successors' live-in bits (`words` words per instruction) into `out`.
pub(super) fn live_out(succ: &[u32], live_in: &[u64], words: usize, out: &mut [u64]) {
    out.fill(0);
    for &s in succ {
        let s = s as usize * words;
        for (o, &x) in out.iter_mut().zip(&live_in[s..s + words]) {
            *o |= x;
        }
    }
}

/// Sets bit `i` of a bit set.
pub(super) fn set(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1 << (i % 64);
}

/// Bit `i` of a bit set.
pub(super) fn get(bits: &[u64], i: usize) -> bool {
    bits[i / 64] & (1 << (i % 64)) != 0
}

/// Marks the channels of local register `i` that `swizzle` selects.
fn set_swizzled(bits: &mut [u64], i: u32, swizzle: &[u8; 4]) {
    for &comp in swizzle {
        set(bits, i as usize * 4 + (comp as usize & 3));
    }
}

/// Marks what reading `s` bit for bit reads: a direct local's swizzled channels, or an
/// indirect operand's index registers.
fn src_bit_reads(d: &Decoded, s: &Src, bits: &mut [u64]) {
    match s.loc {
        Loc::Direct(Slot::Local(i)) => set_swizzled(bits, i, &s.swizzle),
        Loc::Indirect(k) => index_reads(d, k, bits),
        Loc::Direct(_) => {}
    }
}

/// Marks in `bits` every local channel `inst` reads bit for bit (see [`reads_as_float`]):
/// sources, index registers, texture units and offsets. Registers an indirect operand reaches
/// live in memory and are never left unflushed, so only the index registers count there.
fn bit_reads(
    d: &Decoded,
    inst: &Inst,
    bits: &mut [u64],
    memory: &[bool],
    texture_read: &[u64],
    fwd: &mut Vec<(u32, u32)>,
) {
    // A forwarded operand may stay unflushed when it lands in an SSA register (see `forwards`);
    // copied to an output or to memory, its bits are read.
    let forward_to = match inst.dst {
        DstLoc::Local(i) if !memory[i as usize] => Some(i),
        _ => None,
    };
    for (k, s) in inst.src.iter().enumerate() {
        // Float modifiers keep "a denormal or its flushed zero" as it is; integer ones do not.
        let forwarded =
            forwards(inst.op, k) && !matches!(s.modifier, Modifier::INeg | Modifier::INegAbs);
        match (s.loc, forward_to) {
            // `saturate` reads the result through DAZ compares.
            (Loc::Direct(Slot::Local(_)), _) if forwarded && inst.saturate => {}
            (Loc::Direct(Slot::Local(i)), Some(dst)) if forwarded => {
                for c in 0..4 {
                    if inst.write_mask & (1 << c) != 0 {
                        let src = i * 4 + (s.swizzle[c] as u32 & 3);
                        let to = dst * 4 + c as u32;
                        if get(texture_read, to as usize) {
                            set(bits, src as usize);
                        } else {
                            fwd.push((to, src));
                        }
                    }
                }
            }
            (Loc::Direct(Slot::Local(_)), _) if reads_as_float(inst.op, k) => {}
            _ => src_bit_reads(d, s, bits),
        }
    }
    if let DstLoc::Indirect(k) = inst.dst {
        index_reads(d, k, bits);
    }
    if inst.op.class() == OpcodeClass::Texture {
        if let Some(t) = d.textures.get(inst.aux as usize) {
            for r in [t.view.index_reg, t.sampler.index_reg]
                .into_iter()
                .flatten()
            {
                index_read(r, bits);
            }
            if let Some(off) = t.offset {
                src_bit_reads(d, &off, bits);
            }
        }
    }
}

/// Marks the index registers of indirect operand `k`.
pub(super) fn index_reads(d: &Decoded, k: u32, bits: &mut [u64]) {
    let ind = d.indirects[k as usize];
    for r in [ind.index_reg, ind.dim_reg].into_iter().flatten() {
        index_read(r, bits);
    }
}

/// Marks the channel index register `r` names, when it is a local.
pub(super) fn index_read(r: IndexReg, bits: &mut [u64]) {
    if let Slot::Local(i) = r.slot {
        set(bits, i as usize * 4 + (r.component as usize & 3));
    }
}

/// Successors of each instruction in the control-flow graph, or None for programs with
/// subroutines or SWITCH.
pub(super) fn successors(d: &Decoded) -> Option<Vec<Vec<u32>>> {
    use Opcode::*;
    let n = d.insts.len();
    let mut succ = Vec::with_capacity(n);
    // The ENDLOOP of the loop a BRK/BREAKC leaves or a CONT continues.
    let loop_end = |pc: usize| {
        d.structure
            .exit_of(pc)
            .map(|c| d.structure.construct(c).end as u32)
    };
    for (pc, inst) in d.insts.iter().enumerate() {
        let next = pc as u32 + 1;
        let t = inst.target as usize;
        let s = match inst.op {
            BGNSUB | ENDSUB | CAL | CALLNZ | SWITCH | CASE | DEFAULT | ENDSWITCH => return None,
            IF | UIF => {
                let f = if d.insts.get(t).is_some_and(|i| i.op == ELSE) {
                    t as u32 + 1
                } else {
                    t as u32
                };
                vec![next, f]
            }
            ELSE => vec![t as u32],
            BGNLOOP => vec![next],
            ENDLOOP => vec![t as u32 + 1],
            BRK => vec![loop_end(pc)? + 1],
            BREAKC => vec![next, loop_end(pc)? + 1],
            CONT => vec![loop_end(pc)?],
            RET | END => vec![],
            _ => vec![next],
        };
        succ.push(s.into_iter().filter(|&x| (x as usize) < n).collect());
    }
    Some(succ)
}
