//! Which branches and loops of a kernel are uniform: taken or left by all four lanes of every
//! quad together, so that the kernel branches on them like a CPU program instead of narrowing
//! the execution mask, and the registers written under them need no per-lane blend.
//!
//! A register component is *uniform* at a point of the program when it holds the same bits in
//! every lane of a quad there. A forward data-flow analysis over the structured program follows
//! the set of uniform TEMP/ADDR components (loops iterate to a fixed point, joins keep what both
//! paths leave uniform):
//! - a write in uniform flow (every enclosing IF and loop uniform, so all four lanes execute it)
//!   by an instruction that computes each lane from that lane's operands alone (ALU and address
//!   instructions, not derivatives or texture instructions) from uniform operands — immediates,
//!   constants (directly or through a uniform address), uniform components — leaves its
//!   components uniform; any other write makes them non-uniform, and registers an indirect
//!   operand may reach are never uniform;
//! - an `IF`/`UIF` is uniform when its condition is uniform where it sits — in any flow: all
//!   lanes then agree, so it narrows nothing and needs no mask of its own;
//! - a loop is uniform when every `BRK`, `BREAKC` and `CONT` that leaves or continues it sits
//!   inside uniform IFs only (not in a SWITCH or a narrowing IF) with a uniform condition: all
//!   lanes leave together, and its body runs on the lanes that entered it. Which loops are is
//!   itself assumed and taken back until consistent (a greatest fixed point: the walk is
//!   repeated while an assumption falls).
//!
//! Uniform flow is where every lane executes: the top level and the inside of uniform
//! constructs in uniform flow. The state flows in the order the quad executes: a narrowing IF
//! runs its THEN lanes before its ELSE lanes, so the ELSE part starts from the state the THEN
//! part left (its writes differ between lanes by then), and SWITCH cases follow one another.
//!
//! Why that is sound: at the top of the program every lane executes (the masks start full and
//! `KILL` does not narrow them). By induction over execution, in uniform flow all lanes execute
//! the same instructions and each write the analysis keeps uniform gives every lane the same
//! value, so the conditions deciding uniform flow agree in all lanes.
//!
//! `SOFTGPU_NO_UNIFORM=1` turns the analysis off (every construct masked, as before it existed),
//! to measure what it gains; the kernels compute the same bits either way.
//!
//! Programs with subroutines, and programs that `RET` from inside a branch or loop (after which
//! the lanes that returned stop executing), get no uniform constructs; so do programs whose
//! nested loops would take the analysis more than [`MAX_VISITS`] instruction visits.

use crate::interp::decode::{Decoded, DstLoc, IndexReg, IndirectFile, Loc, Slot, Src};
use crate::ir::props::{reads_other_lanes, shape, Shape};
use crate::ir::{Opcode, OpcodeClass};

/// Instruction visits (loop bodies are walked until their state is stable) after which the
/// analysis gives up and declares nothing uniform.
const MAX_VISITS: usize = 2_000_000;

/// Per instruction: for an `IF`/`UIF`, whether it is uniform; for a `BGNLOOP`, whether the loop
/// is. Other instructions are `false`.
pub(super) fn uniform_constructs(d: &Decoded) -> Vec<bool> {
    let n = d.insts.len();
    let unsupported = d.insts.iter().any(|i| {
        matches!(
            i.op,
            Opcode::CAL | Opcode::CALLNZ | Opcode::BGNSUB | Opcode::ENDSUB
        )
    });
    if unsupported || std::env::var_os("SOFTGPU_NO_UNIFORM").is_some() {
        return vec![false; n];
    }
    let mut never = vec![0u8; d.num_locals];
    for ind in &d.indirects {
        if let IndirectFile::Local { base, lo, hi } = ind.file {
            for r in local_range(base, lo, hi, never.len()) {
                never[r] = 0xF;
            }
        }
    }
    // At the start every register is zero in every lane: uniform, but for those never followed.
    let start: Uniform = never.iter().map(|n| 0xF & !n).collect();
    let mut walk = Walk {
        d,
        never,
        loop_ok: vec![true; n],
        constructs: vec![false; n],
        loops: Vec::new(),
        fell: false,
        visits: 0,
    };
    loop {
        walk.fell = false;
        let mut state = start.clone();
        let top = Flow {
            all_lanes: true,
            straight: true,
        };
        if walk.block(0, n, &mut state, top).is_err() {
            return vec![false; n];
        }
        if !walk.fell {
            return walk.constructs;
        }
    }
}

/// Per local register: a bit per component still uniform.
type Uniform = Vec<u8>;

fn meet(a: &mut Uniform, b: &Uniform) {
    for (x, y) in a.iter_mut().zip(b) {
        *x &= y;
    }
}

/// Where a walked instruction sits.
#[derive(Clone, Copy)]
struct Flow {
    /// Every lane executes it.
    all_lanes: bool,
    /// No construct between it and the innermost loop's start narrows the lanes.
    straight: bool,
}

/// A loop being walked.
struct LoopWalk {
    pc: usize,
    uniform: bool,
    /// The states at its `BRK`/`BREAKC`s and at its `CONT`s, met.
    breaks: Option<Uniform>,
    continues: Option<Uniform>,
}

/// Why the walk stopped early: the flow does not nest, a `RET` sits inside a construct, or the
/// visit budget ran out.
struct GiveUp;

struct Walk<'a> {
    d: &'a Decoded,
    /// Components never uniform (reachable by indirect operands).
    never: Uniform,
    /// Per `BGNLOOP`: its exits still assumed uniform.
    loop_ok: Vec<bool>,
    constructs: Vec<bool>,
    loops: Vec<LoopWalk>,
    /// Whether this walk took back a loop assumption (another walk follows).
    fell: bool,
    visits: usize,
}

impl Walk<'_> {
    /// Walks instructions `start..end` (whole constructs) from `state`, leaving the state at
    /// `end` in it.
    fn block(
        &mut self,
        start: usize,
        end: usize,
        state: &mut Uniform,
        flow: Flow,
    ) -> Result<(), GiveUp> {
        let d = self.d;
        let mut pc = start;
        while pc < end {
            self.visits += 1;
            if self.visits > MAX_VISITS {
                return Err(GiveUp);
            }
            let inst = &d.insts[pc];
            let target = inst.target as usize;
            match inst.op {
                Opcode::IF | Opcode::UIF => {
                    // Whatever the flow, a condition the same in all four lanes narrows nothing.
                    let uniform = self.src_uniform(state, &inst.src[0], 0);
                    self.constructs[pc] = uniform;
                    let inside = Flow {
                        all_lanes: flow.all_lanes && uniform,
                        straight: flow.straight && uniform,
                    };
                    let mut then = state.clone();
                    if target >= d.insts.len() || target <= pc {
                        return Err(GiveUp);
                    }
                    if d.insts[target].op == Opcode::ELSE {
                        let endif = d.insts[target].target as usize;
                        if endif <= target || endif >= d.insts.len() {
                            return Err(GiveUp);
                        }
                        self.block(pc + 1, target, &mut then, inside)?;
                        if !uniform {
                            // The lanes of the ELSE part run after those of the THEN part: what
                            // the THEN part wrote in its lanes differs there already.
                            *state = then.clone();
                        }
                        self.block(target + 1, endif, state, inside)?;
                        meet(state, &then);
                        pc = endif + 1;
                    } else {
                        self.block(pc + 1, target, &mut then, inside)?;
                        meet(state, &then);
                        pc = target + 1;
                    }
                    continue;
                }
                Opcode::BGNLOOP => {
                    if target >= d.insts.len() || target <= pc {
                        return Err(GiveUp);
                    }
                    let uniform = self.loop_ok[pc];
                    self.constructs[pc] = uniform;
                    let inside = Flow {
                        all_lanes: flow.all_lanes && uniform,
                        straight: true,
                    };
                    let mut header = state.clone();
                    loop {
                        let mut body = header.clone();
                        self.loops.push(LoopWalk {
                            pc,
                            uniform,
                            breaks: None,
                            continues: None,
                        });
                        self.block(pc + 1, target, &mut body, inside)?;
                        let walked = self.loops.pop().ok_or(GiveUp)?;
                        if let Some(c) = &walked.continues {
                            meet(&mut body, c);
                        }
                        let mut next = header.clone();
                        meet(&mut next, &body);
                        if next == header {
                            *state = match (uniform, walked.breaks) {
                                // All lanes leave together, through a BRK.
                                (true, Some(b)) => b,
                                (true, None) => header,
                                (false, b) => {
                                    if let Some(b) = b {
                                        meet(&mut header, &b);
                                    }
                                    header
                                }
                            };
                            break;
                        }
                        header = next;
                    }
                    pc = target + 1;
                    continue;
                }
                Opcode::SWITCH => {
                    if target >= d.insts.len() || target <= pc {
                        return Err(GiveUp);
                    }
                    let mut inside = state.clone();
                    let divergent = Flow {
                        all_lanes: false,
                        straight: false,
                    };
                    self.block(pc + 1, target, &mut inside, divergent)?;
                    meet(state, &inside);
                    pc = target + 1;
                    continue;
                }
                Opcode::BRK | Opcode::BREAKC | Opcode::CONT
                    if !(inst.breaks_switch && inst.op != Opcode::CONT) =>
                {
                    let cond_ok =
                        inst.op != Opcode::BREAKC || self.src_uniform(state, &inst.src[0], 0);
                    let Some(lp) = self.loops.last_mut() else {
                        return Err(GiveUp);
                    };
                    if lp.uniform && !(flow.straight && cond_ok) {
                        self.loop_ok[lp.pc] = false;
                        self.fell = true;
                    }
                    let slot = if inst.op == Opcode::CONT {
                        &mut lp.continues
                    } else {
                        &mut lp.breaks
                    };
                    match slot {
                        Some(s) => meet(s, state),
                        None => *slot = Some(state.clone()),
                    }
                }
                // A RET inside a construct (the top-level walk is the only one from 0).
                Opcode::RET if start != 0 => {
                    return Err(GiveUp);
                }
                _ if inst.is_flow => {}
                _ => self.write(state, pc, flow.all_lanes),
            }
            pc += 1;
        }
        Ok(())
    }

    /// Applies instruction `pc`'s writes to `state`.
    fn write(&self, state: &mut Uniform, pc: usize, all_lanes: bool) {
        let inst = &self.d.insts[pc];
        let DstLoc::Local(i) = inst.dst else {
            // Indirect writes reach only registers that are never uniform; OUT is not followed.
            return;
        };
        let Some(&old) = state.get(i as usize) else {
            return;
        };
        let lane_local = matches!(inst.op.class(), OpcodeClass::Alu | OpcodeClass::Address)
            && !reads_other_lanes(inst.op);
        let sources = &inst.src[..inst.op.num_src().min(inst.src.len())];
        let mut bits = old;
        for c in 0..4 {
            if inst.write_mask & (1 << c) == 0 {
                continue;
            }
            let uniform = all_lanes
                && lane_local
                && sources.iter().all(|s| match shape(inst.op) {
                    Shape::Componentwise => self.src_uniform(state, s, c),
                    Shape::Scalar => self.src_uniform(state, s, 0),
                    Shape::Vector => (0..4).all(|k| self.src_uniform(state, s, k)),
                });
            if uniform {
                bits |= 1 << c;
            } else {
                bits &= !(1 << c);
            }
        }
        state[i as usize] = bits & !self.never[i as usize];
    }

    /// Whether component `c` (before the swizzle) of source `s` is the same in every lane.
    fn src_uniform(&self, state: &Uniform, s: &Src, c: usize) -> bool {
        let comp = s.swizzle[c] as usize & 3;
        match s.loc {
            Loc::Direct(slot) => slot_uniform(state, slot, comp),
            Loc::Indirect(k) => {
                let ind = &self.d.indirects[k as usize];
                let index_ok = [ind.index_reg, ind.dim_reg]
                    .iter()
                    .flatten()
                    .all(|r| index_uniform(state, r));
                index_ok
                    && match ind.file {
                        IndirectFile::Local { base, lo, hi } => {
                            local_range(base, lo, hi, state.len())
                                .all(|r| state[r] & (1 << comp) != 0)
                        }
                        IndirectFile::Imm | IndirectFile::Const => true,
                        IndirectFile::Input | IndirectFile::Output | IndirectFile::SystemValue => {
                            false
                        }
                    }
            }
        }
    }
}

fn slot_uniform(state: &Uniform, slot: Slot, comp: usize) -> bool {
    match slot {
        Slot::Zero | Slot::Imm(_) | Slot::Const(..) => true,
        Slot::Local(i) => state.get(i as usize).is_some_and(|u| u & (1 << comp) != 0),
        Slot::Input(_) | Slot::Output(_) | Slot::SystemValue(_) => false,
    }
}

fn index_uniform(state: &Uniform, r: &IndexReg) -> bool {
    slot_uniform(state, r.slot, r.component as usize & 3)
}

/// The local registers an indirect access with these bounds may reach.
fn local_range(base: u32, lo: i64, hi: i64, num_locals: usize) -> std::ops::Range<usize> {
    let start = (i64::from(base) + lo).clamp(0, num_locals as i64) as usize;
    let end = (i64::from(base) + hi).clamp(0, num_locals as i64) as usize;
    start..end.max(start)
}
