//! The quad executor: register access, masks, control flow and the opcode dispatch.

// Lane- and channel-indexed loops mirror the [channel][lane] layout; iterators would obscure it.
#![allow(clippy::needless_range_loop)]

use super::decode::{
    Decoded, DstLoc, IndexReg, IndirectFile, IndirectLoc, Inst, Loc, Modifier, Slot, Src,
    MAX_CALL_DEPTH,
};
use super::ops;
use crate::exec::{ExecError, QuadIo, QuadVec4, ShaderResources};
use crate::ir::Opcode;

const ZERO: QuadVec4 = [[0; 4]; 4];

/// Saved masks of an enclosing loop.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LoopFrame {
    loop_mask: u8,
    cont_mask: u8,
}

/// State of one SWITCH.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SwitchState {
    mask: u8,
    selector: [u32; 4],
    /// Lanes whose selector matches some CASE of this SWITCH (the others take DEFAULT).
    matched: u8,
}

/// What a CAL saves to restore on return.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallFrame {
    return_pc: usize,
    cond_mask: u8,
    loop_mask: u8,
    cont_mask: u8,
    func_mask: u8,
    switch: SwitchState,
    cond_len: usize,
    loop_len: usize,
    switch_len: usize,
}

/// Per-quad working memory, reused across quads of one thread.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub regs: Vec<QuadVec4>,
    cond: Vec<u8>,
    loops: Vec<LoopFrame>,
    switches: Vec<SwitchState>,
    calls: Vec<CallFrame>,
}

/// One quad's execution.
pub(crate) struct Machine<'m, 'r, 'io> {
    pub prog: &'m Decoded,
    pub regs: &'m mut [QuadVec4],
    pub res: &'m ShaderResources<'r>,
    pub io: &'m mut QuadIo<'io>,
    /// Lanes for which stores happen.
    pub exec: u8,
    cond_mask: u8,
    loop_mask: u8,
    cont_mask: u8,
    func_mask: u8,
    switch: SwitchState,
    /// Lanes killed so far (they keep executing as helpers).
    pub kill: u8,
}

#[inline]
fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

#[inline]
fn map1(a: &QuadVec4, mask: u8, op: impl Fn(u32) -> u32) -> QuadVec4 {
    let mut r = ZERO;
    for c in 0..4 {
        if mask & (1 << c) != 0 {
            for l in 0..4 {
                r[c][l] = op(a[c][l]);
            }
        }
    }
    r
}

#[inline]
fn map2(a: &QuadVec4, b: &QuadVec4, mask: u8, op: impl Fn(u32, u32) -> u32) -> QuadVec4 {
    let mut r = ZERO;
    for c in 0..4 {
        if mask & (1 << c) != 0 {
            for l in 0..4 {
                r[c][l] = op(a[c][l], b[c][l]);
            }
        }
    }
    r
}

#[inline]
fn map3(
    a: &QuadVec4,
    b: &QuadVec4,
    c3: &QuadVec4,
    mask: u8,
    op: impl Fn(u32, u32, u32) -> u32,
) -> QuadVec4 {
    let mut r = ZERO;
    for c in 0..4 {
        if mask & (1 << c) != 0 {
            for l in 0..4 {
                r[c][l] = op(a[c][l], b[c][l], c3[c][l]);
            }
        }
    }
    r
}

#[inline]
fn ff1(op: impl Fn(f32) -> f32) -> impl Fn(u32) -> u32 {
    move |a| op(f(a)).to_bits()
}

#[inline]
fn ff2(op: impl Fn(f32, f32) -> f32) -> impl Fn(u32, u32) -> u32 {
    move |a, b| op(f(a), f(b)).to_bits()
}

#[inline]
fn ff3(op: impl Fn(f32, f32, f32) -> f32) -> impl Fn(u32, u32, u32) -> u32 {
    move |a, b, c| op(f(a), f(b), f(c)).to_bits()
}

#[inline]
fn bool_mask(b: bool) -> u32 {
    if b {
        !0
    } else {
        0
    }
}

#[inline]
fn bool_float(b: bool) -> u32 {
    if b {
        1.0f32.to_bits()
    } else {
        0
    }
}

/// A channel broadcast to all four lanes.
#[inline]
fn splat(v: u32) -> [u32; 4] {
    [v; 4]
}

/// `x` with source modifier `m` applied (softpipe applies `fabsf` whatever the type).
pub(crate) fn modified(x: u32, m: Modifier) -> u32 {
    match m {
        Modifier::None => x,
        Modifier::Abs => x & 0x7fff_ffff,
        Modifier::FNeg => x ^ 0x8000_0000,
        Modifier::FNegAbs => x | 0x8000_0000,
        Modifier::INeg => x.wrapping_neg(),
        Modifier::INegAbs => (x & 0x7fff_ffff).wrapping_neg(),
    }
}

fn apply_modifier(v: &mut QuadVec4, m: Modifier) {
    if m == Modifier::None {
        return;
    }
    for ch in v.iter_mut() {
        for x in ch.iter_mut() {
            *x = modified(*x, m);
        }
    }
}

impl<'m, 'r, 'io> Machine<'m, 'r, 'io> {
    pub fn new(
        prog: &'m Decoded,
        regs: &'m mut [QuadVec4],
        res: &'m ShaderResources<'r>,
        io: &'m mut QuadIo<'io>,
    ) -> Self {
        Machine {
            prog,
            regs,
            res,
            io,
            exec: 0xF,
            cond_mask: 0xF,
            loop_mask: 0xF,
            cont_mask: 0xF,
            func_mask: 0xF,
            switch: SwitchState {
                mask: 0xF,
                ..SwitchState::default()
            },
            kill: 0,
        }
    }

    #[inline]
    fn update_exec(&mut self) {
        self.exec =
            self.cond_mask & self.loop_mask & self.cont_mask & self.switch.mask & self.func_mask;
    }

    /// The unswizzled value of a direct register.
    #[inline]
    fn read_slot(&self, slot: Slot) -> QuadVec4 {
        match slot {
            Slot::Zero => ZERO,
            Slot::Local(i) => self.regs[i as usize],
            Slot::Input(i) => self.io.inputs.get(i as usize).copied().unwrap_or(ZERO),
            Slot::Output(i) => self.io.outputs.get(i as usize).copied().unwrap_or(ZERO),
            Slot::SystemValue(i) => self
                .io
                .system_values
                .get(i as usize)
                .copied()
                .unwrap_or(ZERO),
            Slot::Imm(i) => self.prog.imms[i as usize],
            Slot::Const(b, i) => match self
                .res
                .constants
                .get(b as usize)
                .and_then(|buf| buf.get(i as usize))
            {
                Some(v) => [splat(v[0]), splat(v[1]), splat(v[2]), splat(v[3])],
                None => ZERO,
            },
        }
    }

    /// Per-lane values of an index register (`ADDR[0].x`), as signed integers.
    #[inline]
    fn index_lanes(&self, r: Option<IndexReg>) -> [i64; 4] {
        match r {
            None => [0; 4],
            Some(r) => {
                let v = self.read_slot(r.slot)[r.component as usize];
                [
                    v[0] as i32 as i64,
                    v[1] as i32 as i64,
                    v[2] as i32 as i64,
                    v[3] as i32 as i64,
                ]
            }
        }
    }

    /// Resolves an indirect location for one lane to a direct slot (None when out of range).
    fn resolve(&self, ind: &IndirectLoc, index: i64, dim: i64) -> Option<Slot> {
        let len = |n: usize| (0..n as i64).contains(&index);
        let i = index as u32;
        match ind.file {
            IndirectFile::Local { base, lo, hi } => {
                (lo..hi).contains(&index).then(|| Slot::Local(base + i))
            }
            IndirectFile::Input => len(self.io.inputs.len()).then_some(Slot::Input(i)),
            IndirectFile::Output => len(self.io.outputs.len()).then_some(Slot::Output(i)),
            IndirectFile::SystemValue => {
                len(self.io.system_values.len()).then_some(Slot::SystemValue(i))
            }
            IndirectFile::Imm => len(self.prog.imms.len()).then_some(Slot::Imm(i)),
            IndirectFile::Const => {
                let buf = usize::try_from(dim)
                    .ok()
                    .and_then(|d| self.res.constants.get(d))?;
                len(buf.len()).then_some(Slot::Const(dim as u32, i))
            }
        }
    }

    fn read_indirect(&self, k: u32) -> QuadVec4 {
        let ind = &self.prog.indirects[k as usize];
        let idx = self.index_lanes(ind.index_reg);
        let dims = self.index_lanes(ind.dim_reg);
        let mut out = ZERO;
        for l in 0..4 {
            if let Some(slot) = self.resolve(ind, ind.index + idx[l], ind.dim + dims[l]) {
                let v = self.read_slot(slot);
                for c in 0..4 {
                    out[c][l] = v[c][l];
                }
            }
        }
        out
    }

    /// Fetches a source operand: swizzled, with modifiers applied. `[channel][lane]`.
    #[inline]
    pub fn fetch(&self, s: &Src) -> QuadVec4 {
        let raw = match s.loc {
            Loc::Direct(slot) => self.read_slot(slot),
            Loc::Indirect(k) => self.read_indirect(k),
        };
        let sw = s.swizzle;
        let mut v = [
            raw[sw[0] as usize],
            raw[sw[1] as usize],
            raw[sw[2] as usize],
            raw[sw[3] as usize],
        ];
        apply_modifier(&mut v, s.modifier);
        v
    }

    /// Fetches one swizzled channel of a source.
    #[inline]
    pub fn fetch_chan(&self, s: &Src, chan: usize) -> [u32; 4] {
        self.fetch(s)[chan]
    }

    /// Stores the channels of `value` selected by the instruction's write mask into its
    /// destination, for the lanes in the exec mask (OUT: also only live lanes).
    pub fn store(&mut self, inst: &Inst, value: &QuadVec4) {
        self.store_masked(inst, value, inst.write_mask);
    }

    pub fn store_masked(&mut self, inst: &Inst, value: &QuadVec4, write_mask: u8) {
        let lanes = self.exec;
        if lanes == 0 || write_mask == 0 {
            return;
        }
        let sat = inst.saturate;
        match inst.dst {
            DstLoc::Null => {}
            DstLoc::Local(i) => write(&mut self.regs[i as usize], value, write_mask, lanes, sat),
            DstLoc::Output(i) => {
                let live = self.io.live;
                if let Some(o) = self.io.outputs.get_mut(i as usize) {
                    write(o, value, write_mask, lanes & live, sat);
                }
            }
            DstLoc::Indirect(k) => {
                let ind = self.prog.indirects[k as usize];
                let idx = self.index_lanes(ind.index_reg);
                for l in 0..4 {
                    if lanes & (1 << l) == 0 {
                        continue;
                    }
                    match self.resolve(&ind, ind.index + idx[l], 0) {
                        Some(Slot::Local(i)) => {
                            write(&mut self.regs[i as usize], value, write_mask, 1 << l, sat)
                        }
                        Some(Slot::Output(i)) if self.io.live & (1 << l) != 0 => write(
                            &mut self.io.outputs[i as usize],
                            value,
                            write_mask,
                            1 << l,
                            sat,
                        ),
                        _ => {}
                    }
                }
            }
        }
    }

    /// Resolves a texture/sampler unit (indexed units use the first active lane, as softpipe).
    pub fn unit(&self, u: &super::decode::Unit) -> u32 {
        match u.index_reg {
            None => u.index,
            Some(r) => {
                let idx = self.index_lanes(Some(r));
                let lane = (0..4).find(|l| self.exec & (1 << l) != 0).unwrap_or(0);
                (u.index as i64 + idx[lane]).clamp(0, u32::MAX as i64) as u32
            }
        }
    }

    /// Runs the program from its first instruction. Returns the killed lanes.
    pub fn run(&mut self, scratch_stacks: &mut Stacks<'_>, budget: u64) -> Result<u8, ExecError> {
        let insts = &self.prog.insts;
        let mut pc = 0usize;
        let mut count = 0u64;
        while let Some(inst) = insts.get(pc) {
            count += 1;
            if count > budget {
                return Err(ExecError::BudgetExceeded { budget, pc });
            }
            pc += 1;
            if !inst.is_flow {
                if self.exec != 0 {
                    self.alu(inst)?;
                }
                continue;
            }
            match self.flow(inst, pc, scratch_stacks)? {
                Some(next) => pc = next,
                None => break,
            }
        }
        Ok(self.kill & 0xF)
    }

    /// Executes a flow-control or kill instruction; `next` is the following pc. Returns the pc to
    /// continue at, or None to stop.
    fn flow(
        &mut self,
        inst: &Inst,
        next: usize,
        st: &mut Stacks<'_>,
    ) -> Result<Option<usize>, ExecError> {
        let pc = next - 1;
        let target = inst.target as usize;
        match inst.op {
            Opcode::END => return Ok(None),
            Opcode::KILL | Opcode::KILP => self.kill |= self.exec,
            Opcode::KILL_IF | Opcode::KIL => {
                let v = self.fetch(&inst.src[0]);
                let mut k = 0u8;
                for ch in &v {
                    for (l, &x) in ch.iter().enumerate() {
                        if ops::lt(f(x), 0.0) {
                            k |= 1 << l;
                        }
                    }
                }
                self.kill |= k & self.exec;
            }
            Opcode::IF | Opcode::UIF => {
                st.cond.push(self.cond_mask);
                let v = self.fetch_chan(&inst.src[0], 0);
                for (l, &x) in v.iter().enumerate() {
                    let taken = if inst.op == Opcode::IF {
                        !ops::eq(f(x), 0.0)
                    } else {
                        x != 0
                    };
                    if !taken {
                        self.cond_mask &= !(1 << l);
                    }
                }
                self.update_exec();
                if self.exec == 0 {
                    return Ok(Some(target));
                }
            }
            Opcode::ELSE => {
                let prev = st.cond.last().copied().unwrap_or(0xF);
                self.cond_mask = !self.cond_mask & prev;
                self.update_exec();
                if self.exec == 0 {
                    return Ok(Some(target));
                }
            }
            Opcode::ENDIF => {
                self.cond_mask = st.cond.pop().unwrap_or(0xF);
                self.update_exec();
            }
            Opcode::BGNLOOP => {
                if self.exec == 0 {
                    return Ok(Some(target + 1));
                }
                st.loops.push(LoopFrame {
                    loop_mask: self.loop_mask,
                    cont_mask: self.cont_mask,
                });
            }
            Opcode::ENDLOOP => {
                let top = st.loops.last().copied().unwrap_or(LoopFrame {
                    loop_mask: 0xF,
                    cont_mask: 0xF,
                });
                self.cont_mask = top.cont_mask;
                self.update_exec();
                if self.exec != 0 {
                    return Ok(Some(target + 1));
                }
                st.loops.pop();
                self.loop_mask = top.loop_mask;
                self.cont_mask = top.cont_mask;
                self.update_exec();
            }
            Opcode::BRK => self.brk(inst, self.exec),
            Opcode::BREAKC => {
                let v = self.fetch_chan(&inst.src[0], 0);
                let mut c = 0u8;
                for (l, &x) in v.iter().enumerate() {
                    if x != 0 {
                        c |= 1 << l;
                    }
                }
                self.brk(inst, self.exec & c);
            }
            Opcode::CONT => {
                self.cont_mask &= !self.exec;
                self.update_exec();
            }
            Opcode::SWITCH => {
                if self.exec == 0 {
                    return Ok(Some(target + 1));
                }
                let selector = self.fetch_chan(&inst.src[0], 0);
                let mut matched = 0u8;
                for &case_pc in &self.prog.cases[inst.aux as usize] {
                    matched |= lanes_equal(
                        &selector,
                        &self.fetch_chan(&self.prog.insts[case_pc as usize].src[0], 0),
                    );
                }
                st.switches.push(self.switch);
                self.switch = SwitchState {
                    mask: 0,
                    selector,
                    matched,
                };
                self.update_exec();
            }
            Opcode::CASE => {
                let prev = st.switches.last().map_or(0xF, |s| s.mask);
                let m = lanes_equal(&self.switch.selector, &self.fetch_chan(&inst.src[0], 0));
                self.switch.mask |= m & prev;
                self.update_exec();
            }
            Opcode::DEFAULT => {
                let prev = st.switches.last().map_or(0xF, |s| s.mask);
                self.switch.mask |= !self.switch.matched & prev;
                self.update_exec();
            }
            Opcode::ENDSWITCH => {
                if let Some(s) = st.switches.pop() {
                    self.switch = s;
                }
                self.update_exec();
            }
            Opcode::CAL | Opcode::CALLNZ => {
                let mut lanes = self.exec;
                if inst.op == Opcode::CALLNZ {
                    let v = self.fetch_chan(&inst.src[0], 0);
                    for (l, &x) in v.iter().enumerate() {
                        if ops::eq(f(x), 0.0) {
                            lanes &= !(1 << l);
                        }
                    }
                }
                if lanes == 0 {
                    return Ok(Some(next));
                }
                if st.calls.len() >= MAX_CALL_DEPTH {
                    return Err(ExecError::CallStackOverflow { pc });
                }
                st.calls.push(CallFrame {
                    return_pc: next,
                    cond_mask: self.cond_mask,
                    loop_mask: self.loop_mask,
                    cont_mask: self.cont_mask,
                    func_mask: self.func_mask,
                    switch: self.switch,
                    cond_len: st.cond.len(),
                    loop_len: st.loops.len(),
                    switch_len: st.switches.len(),
                });
                // Lanes not calling (CALLNZ) sit the call out like returned lanes.
                self.func_mask &= lanes | !self.exec;
                self.update_exec();
                return Ok(Some(target + 1));
            }
            Opcode::RET => {
                self.func_mask &= !self.exec;
                self.update_exec();
                if self.func_mask == 0 {
                    return Ok(self.ret(st));
                }
            }
            Opcode::ENDSUB => return Ok(self.ret(st)),
            Opcode::BGNSUB => return Ok(Some(target + 1)),
            Opcode::NOP => {}
            other => {
                return Err(ExecError::Unsupported {
                    pc,
                    message: format!("{} is not a flow instruction", other.name()),
                })
            }
        }
        Ok(Some(next))
    }

    fn brk(&mut self, inst: &Inst, lanes: u8) {
        if inst.breaks_switch {
            self.switch.mask &= !lanes;
        } else {
            self.loop_mask &= !lanes;
        }
        self.update_exec();
    }

    /// Returns from a subroutine (None: returning from the main program ends it).
    fn ret(&mut self, st: &mut Stacks<'_>) -> Option<usize> {
        let frame = st.calls.pop()?;
        st.cond.truncate(frame.cond_len);
        st.loops.truncate(frame.loop_len);
        st.switches.truncate(frame.switch_len);
        self.cond_mask = frame.cond_mask;
        self.loop_mask = frame.loop_mask;
        self.cont_mask = frame.cont_mask;
        self.func_mask = frame.func_mask;
        self.switch = frame.switch;
        self.update_exec();
        Some(frame.return_pc)
    }

    /// Executes an arithmetic or texture instruction (exec mask is non-empty).
    pub(crate) fn alu(&mut self, inst: &Inst) -> Result<(), ExecError> {
        use Opcode::*;
        let m = inst.write_mask;
        let s = &inst.src;
        let r: QuadVec4 = match inst.op {
            MOV => self.fetch(&s[0]),
            ADD => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, ff2(ops::add)),
            SUB => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, ff2(ops::sub)),
            MUL => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, ff2(ops::mul)),
            DIV => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, ff2(ops::div)),
            MAD => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                ff3(ops::mad),
            ),
            FMA => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                ff3(ops::fma),
            ),
            LRP => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                ff3(ops::lrp),
            ),
            MIN => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, ff2(ops::fmin)),
            MAX => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, ff2(ops::fmax)),
            CLAMP => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                ff3(|a, lo, hi| ops::fmin(ops::fmax(a, lo), hi)),
            ),
            SLT => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_float(ops::lt(f(a), f(b)))
            }),
            SGE => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_float(ops::ge(f(a), f(b)))
            }),
            SGT => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_float(ops::lt(f(b), f(a)))
            }),
            SLE => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_float(ops::ge(f(b), f(a)))
            }),
            SEQ => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_float(ops::eq(f(a), f(b)))
            }),
            SNE => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_float(!ops::eq(f(a), f(b)))
            }),
            SFL => [splat(0); 4],
            STR => [splat(1.0f32.to_bits()); 4],
            FSLT => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_mask(ops::lt(f(a), f(b)))
            }),
            FSGE => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_mask(ops::ge(f(a), f(b)))
            }),
            FSEQ => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_mask(ops::eq(f(a), f(b)))
            }),
            FSNE => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_mask(!ops::eq(f(a), f(b)))
            }),
            CMP => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                |a, b, c| {
                    if ops::lt(f(a), 0.0) {
                        b
                    } else {
                        c
                    }
                },
            ),
            CND => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                |a, b, c| {
                    if ops::lt(0.5, f(c)) {
                        a
                    } else {
                        b
                    }
                },
            ),
            UCMP => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                |a, b, c| {
                    if a != 0 {
                        b
                    } else {
                        c
                    }
                },
            ),
            ABS => map1(&self.fetch(&s[0]), m, |a| a & 0x7fff_ffff),
            FLR => map1(&self.fetch(&s[0]), m, ff1(ops::floor)),
            CEIL => map1(&self.fetch(&s[0]), m, ff1(ops::ceil)),
            TRUNC => map1(&self.fetch(&s[0]), m, ff1(ops::trunc)),
            FRC => map1(&self.fetch(&s[0]), m, ff1(ops::frc)),
            ROUND => map1(&self.fetch(&s[0]), m, ff1(ops::round)),
            SSG => map1(&self.fetch(&s[0]), m, ff1(ops::ssg)),
            DDX => self.deriv(&s[0], m, |v| {
                let d = ops::sub(f(v[3]), f(v[2]));
                [d, d, d, d]
            }),
            DDY => self.deriv(&s[0], m, |v| {
                let d = ops::sub(f(v[2]), f(v[0]));
                [d, d, d, d]
            }),
            DDX_FINE => self.deriv(&s[0], m, |v| {
                let top = ops::sub(f(v[1]), f(v[0]));
                let bottom = ops::sub(f(v[3]), f(v[2]));
                [top, top, bottom, bottom]
            }),
            DDY_FINE => self.deriv(&s[0], m, |v| {
                let left = ops::sub(f(v[2]), f(v[0]));
                let right = ops::sub(f(v[3]), f(v[1]));
                [left, right, left, right]
            }),
            RCP => self.scalar1(&s[0], ops::rcp),
            RSQ => self.scalar1(&s[0], ops::rsq),
            SQRT => self.scalar1(&s[0], ops::sqrt),
            EX2 => self.scalar1(&s[0], ops::ex2),
            LG2 => self.scalar1(&s[0], ops::lg2),
            SIN => self.scalar1(&s[0], ops::sin),
            COS => self.scalar1(&s[0], ops::cos),
            RCC => self.scalar1(&s[0], ops::rcc),
            POW => {
                let a = self.fetch_chan(&s[0], 0);
                let b = self.fetch_chan(&s[1], 0);
                let v = std::array::from_fn(|l| ops::pow(f(a[l]), f(b[l])).to_bits());
                [v; 4]
            }
            LDEXP => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                ops::ldexp(f(a), b as i32).to_bits()
            }),
            DP2 => self.dot(&s[0], &s[1], 2, None),
            DP3 => self.dot(&s[0], &s[1], 3, None),
            DP4 => self.dot(&s[0], &s[1], 4, None),
            DPH => {
                let b = self.fetch(&s[1]);
                self.dot(&s[0], &s[1], 3, Some(b[3]))
            }
            DP2A => {
                let c = self.fetch_chan(&s[2], 0);
                self.dot(&s[0], &s[1], 2, Some(c))
            }
            DST => {
                let a = self.fetch(&s[0]);
                let b = self.fetch(&s[1]);
                [
                    splat(1.0f32.to_bits()),
                    std::array::from_fn(|l| ops::mul(f(a[1][l]), f(b[1][l])).to_bits()),
                    a[2],
                    b[3],
                ]
            }
            LIT => self.lit(&s[0]),
            EXP => {
                let x = self.fetch_chan(&s[0], 0);
                let one = 1.0f32.to_bits();
                let mut r = [splat(one); 4];
                for l in 0..4 {
                    let v = f(x[l]);
                    let fl = ops::floor(v);
                    r[0][l] = ops::ex2(fl).to_bits();
                    r[1][l] = ops::sub(v, fl).to_bits();
                    r[2][l] = ops::ex2(v).to_bits();
                }
                r
            }
            LOG => {
                let x = self.fetch_chan(&s[0], 0);
                let one = 1.0f32.to_bits();
                let mut r = [splat(one); 4];
                for l in 0..4 {
                    let a = f(x[l]).abs();
                    let lg = ops::lg2(a);
                    let fl = ops::floor(lg);
                    r[0][l] = fl.to_bits();
                    r[1][l] = ops::div(a, ops::ex2(fl)).to_bits();
                    r[2][l] = lg.to_bits();
                }
                r
            }
            XPD => {
                let a = self.fetch(&s[0]);
                let b = self.fetch(&s[1]);
                let cross = |i: usize, j: usize, l: usize| {
                    ops::sub(
                        ops::mul(f(a[i][l]), f(b[j][l])),
                        ops::mul(f(a[j][l]), f(b[i][l])),
                    )
                    .to_bits()
                };
                [
                    std::array::from_fn(|l| cross(1, 2, l)),
                    std::array::from_fn(|l| cross(2, 0, l)),
                    std::array::from_fn(|l| cross(0, 1, l)),
                    splat(1.0f32.to_bits()),
                ]
            }
            SCS => {
                let x = self.fetch_chan(&s[0], 0);
                [
                    x.map(|v| ops::cos(f(v)).to_bits()),
                    x.map(|v| ops::sin(f(v)).to_bits()),
                    splat(0),
                    splat(1.0f32.to_bits()),
                ]
            }
            NRM | NRM4 => {
                let a = self.fetch(&s[0]);
                let n = if inst.op == NRM { 3 } else { 4 };
                let mut r = [splat(1.0f32.to_bits()); 4];
                for l in 0..4 {
                    let mut d = ops::mul(f(a[0][l]), f(a[0][l]));
                    for c in 1..n {
                        d = ops::mad(f(a[c][l]), f(a[c][l]), d);
                    }
                    let k = ops::rsq(d);
                    for c in 0..n {
                        r[c][l] = ops::mul(f(a[c][l]), k).to_bits();
                    }
                }
                r
            }
            RFL => {
                let a = self.fetch(&s[0]);
                let b = self.fetch(&s[1]);
                let mut r = [splat(1.0f32.to_bits()); 4];
                for l in 0..4 {
                    let dot = |x: &QuadVec4, y: &QuadVec4| {
                        let d = ops::mul(f(x[0][l]), f(y[0][l]));
                        let d = ops::mad(f(x[1][l]), f(y[1][l]), d);
                        ops::mad(f(x[2][l]), f(y[2][l]), d)
                    };
                    let k = ops::div(ops::mul(2.0, dot(&a, &b)), dot(&a, &a));
                    for c in 0..3 {
                        r[c][l] = ops::sub(ops::mul(k, f(a[c][l])), f(b[c][l])).to_bits();
                    }
                }
                r
            }
            X2D => {
                let a = self.fetch(&s[0]);
                let b = self.fetch(&s[1]);
                let c = self.fetch(&s[2]);
                let row = |base: usize, i: usize, j: usize, l: usize| {
                    let t = ops::add(f(a[base][l]), ops::mul(f(b[0][l]), f(c[i][l])));
                    ops::add(t, ops::mul(f(b[1][l]), f(c[j][l]))).to_bits()
                };
                let x = std::array::from_fn(|l| row(0, 0, 1, l));
                let y = std::array::from_fn(|l| row(1, 2, 3, l));
                [x, y, x, y]
            }
            // Integer and bit operations.
            I2F => map1(&self.fetch(&s[0]), m, |a| (a as i32 as f32).to_bits()),
            U2F => map1(&self.fetch(&s[0]), m, |a| (a as f32).to_bits()),
            F2I => map1(&self.fetch(&s[0]), m, |a| ops::f2i(f(a)) as u32),
            F2U => map1(&self.fetch(&s[0]), m, |a| ops::f2u(f(a))),
            ARL => map1(&self.fetch(&s[0]), m, |a| ops::arl(f(a)) as u32),
            ARR => map1(&self.fetch(&s[0]), m, |a| ops::arr(f(a)) as u32),
            UARL => self.fetch(&s[0]),
            NOT => map1(&self.fetch(&s[0]), m, |a| !a),
            AND => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| a & b),
            OR => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| a | b),
            XOR => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| a ^ b),
            SHL => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                a << (b & 31)
            }),
            USHR => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                a >> (b & 31)
            }),
            ISHR => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                ((a as i32) >> (b & 31)) as u32
            }),
            UADD => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, u32::wrapping_add),
            UMUL => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, u32::wrapping_mul),
            UMAD => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                |a, b, c| a.wrapping_mul(b).wrapping_add(c),
            ),
            SAD => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                |a, b, c| a.abs_diff(b).wrapping_add(c),
            ),
            UDIV => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, ops::udiv),
            UMOD => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, ops::umod),
            IDIV => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                ops::idiv(a as i32, b as i32) as u32
            }),
            MOD => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                ops::imod(a as i32, b as i32) as u32
            }),
            IMAX => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                (a as i32).max(b as i32) as u32
            }),
            IMIN => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                (a as i32).min(b as i32) as u32
            }),
            UMAX => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, u32::max),
            UMIN => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, u32::min),
            INEG => map1(&self.fetch(&s[0]), m, u32::wrapping_neg),
            IABS => map1(&self.fetch(&s[0]), m, |a| (a as i32).wrapping_abs() as u32),
            ISSG => map1(&self.fetch(&s[0]), m, |a| (a as i32).signum() as u32),
            ISGE => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_mask(a as i32 >= b as i32)
            }),
            ISLT => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_mask((a as i32) < b as i32)
            }),
            USEQ => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_mask(a == b)
            }),
            USNE => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_mask(a != b)
            }),
            USGE => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_mask(a >= b)
            }),
            USLT => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                bool_mask(a < b)
            }),
            IMUL_HI => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, |a, b| {
                ops::imul_hi(a as i32, b as i32) as u32
            }),
            UMUL_HI => map2(&self.fetch(&s[0]), &self.fetch(&s[1]), m, ops::umul_hi),
            IBFE => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                |a, b, c| ops::ibfe(a as i32, b as i32, c as i32) as u32,
            ),
            UBFE => map3(
                &self.fetch(&s[0]),
                &self.fetch(&s[1]),
                &self.fetch(&s[2]),
                m,
                ops::ubfe,
            ),
            BFI => {
                let (a, b, c, d) = (
                    self.fetch(&s[0]),
                    self.fetch(&s[1]),
                    self.fetch(&s[2]),
                    self.fetch(&s[3]),
                );
                std::array::from_fn(|ch| {
                    std::array::from_fn(|l| ops::bfi(a[ch][l], b[ch][l], c[ch][l], d[ch][l]))
                })
            }
            BREV => map1(&self.fetch(&s[0]), m, u32::reverse_bits),
            POPC => map1(&self.fetch(&s[0]), m, u32::count_ones),
            LSB => map1(&self.fetch(&s[0]), m, |a| ops::lsb(a) as u32),
            UMSB => map1(&self.fetch(&s[0]), m, |a| ops::umsb(a) as u32),
            IMSB => map1(&self.fetch(&s[0]), m, |a| ops::imsb(a as i32) as u32),
            // Packing.
            PK2H => {
                let a = self.fetch(&s[0]);
                let v = std::array::from_fn(|l| {
                    ops::f32_to_f16(f(a[0][l])) as u32 | (ops::f32_to_f16(f(a[1][l])) as u32) << 16
                });
                [v; 4]
            }
            UP2H => {
                let a = self.fetch_chan(&s[0], 0);
                let lo = a.map(|v| ops::f16_to_f32(v as u16).to_bits());
                let hi = a.map(|v| ops::f16_to_f32((v >> 16) as u16).to_bits());
                [lo, hi, lo, hi]
            }
            PK2US => {
                let a = self.fetch(&s[0]);
                let v = std::array::from_fn(|l| {
                    ops::f32_to_unorm(f(a[0][l]), 16) | ops::f32_to_unorm(f(a[1][l]), 16) << 16
                });
                [v; 4]
            }
            UP2US => {
                let a = self.fetch_chan(&s[0], 0);
                let lo = a.map(|v| ops::unorm_to_f32(v & 0xffff, 16).to_bits());
                let hi = a.map(|v| ops::unorm_to_f32(v >> 16, 16).to_bits());
                [lo, hi, lo, hi]
            }
            PK4B | PK4UB => {
                let a = self.fetch(&s[0]);
                let conv: fn(f32) -> u32 = if inst.op == PK4B {
                    |x| ops::f32_to_snorm(x, 8)
                } else {
                    |x| ops::f32_to_unorm(x, 8)
                };
                let v = std::array::from_fn(|l| {
                    (0..4).fold(0u32, |acc, c| acc | conv(f(a[c][l])) << (8 * c))
                });
                [v; 4]
            }
            UP4B | UP4UB => {
                let a = self.fetch_chan(&s[0], 0);
                let conv: fn(u32) -> f32 = if inst.op == UP4B {
                    |x| ops::snorm_to_f32(x, 8)
                } else {
                    |x| ops::unorm_to_f32(x, 8)
                };
                std::array::from_fn(|c| a.map(|v| conv((v >> (8 * c)) & 0xff).to_bits()))
            }
            NOP => return Ok(()),
            op if op.class() == crate::ir::OpcodeClass::Texture => {
                return self.texture(inst);
            }
            op if op.class() == crate::ir::OpcodeClass::Memory => {
                self.memory(inst);
                return Ok(());
            }
            other => {
                return Err(ExecError::Unsupported {
                    pc: 0,
                    message: format!("{} is not implemented by the interpreter", other.name()),
                })
            }
        };
        self.store(inst, &r);
        Ok(())
    }

    /// A scalar op on src.x, replicated to every channel.
    #[inline]
    fn scalar1(&self, s: &Src, op: impl Fn(f32) -> f32) -> QuadVec4 {
        let a = self.fetch_chan(s, 0);
        let v = a.map(|x| op(f(x)).to_bits());
        [v; 4]
    }

    /// Dot product of the first `n` channels (`mul` then `mad`s, as softpipe), plus `add`.
    fn dot(&self, a: &Src, b: &Src, n: usize, add: Option<[u32; 4]>) -> QuadVec4 {
        let a = self.fetch(a);
        let b = self.fetch(b);
        let v = std::array::from_fn(|l| {
            let mut d = ops::mul(f(a[0][l]), f(b[0][l]));
            for c in 1..n {
                d = ops::mad(f(a[c][l]), f(b[c][l]), d);
            }
            if let Some(add) = add {
                d = ops::add(d, f(add[l]));
            }
            d.to_bits()
        });
        [v; 4]
    }

    fn deriv(&self, s: &Src, mask: u8, op: impl Fn([u32; 4]) -> [f32; 4]) -> QuadVec4 {
        let a = self.fetch(s);
        let mut r = ZERO;
        for c in 0..4 {
            if mask & (1 << c) != 0 {
                r[c] = op(a[c]).map(f32::to_bits);
            }
        }
        r
    }

    fn lit(&self, s: &Src) -> QuadVec4 {
        let a = self.fetch(s);
        let one = 1.0f32.to_bits();
        let mut r = [splat(one), splat(0), splat(0), splat(one)];
        for l in 0..4 {
            let x = f(a[0][l]);
            let y = ops::fmax(f(a[1][l]), 0.0);
            let w = ops::fmax(ops::fmin(f(a[3][l]), 128.0), -128.0);
            let p = ops::pow(y, w);
            r[1][l] = ops::fmax(x, 0.0).to_bits();
            r[2][l] = if ops::lt(0.0, x) { p.to_bits() } else { 0 };
        }
        r
    }
}

/// Writes `value` into `reg` for the selected channels and lanes.
#[inline]
fn write(reg: &mut QuadVec4, value: &QuadVec4, channels: u8, lanes: u8, sat: bool) {
    for c in 0..4 {
        if channels & (1 << c) == 0 {
            continue;
        }
        for l in 0..4 {
            if lanes & (1 << l) != 0 {
                let v = value[c][l];
                reg[c][l] = if sat {
                    ops::saturate(f(v)).to_bits()
                } else {
                    v
                };
            }
        }
    }
}

fn lanes_equal(a: &[u32; 4], b: &[u32; 4]) -> u8 {
    (0..4).fold(0, |m, l| if a[l] == b[l] { m | 1 << l } else { m })
}

/// The control-flow stacks of one quad.
pub(crate) struct Stacks<'s> {
    cond: &'s mut Vec<u8>,
    loops: &'s mut Vec<LoopFrame>,
    switches: &'s mut Vec<SwitchState>,
    calls: &'s mut Vec<CallFrame>,
}

impl Scratch {
    /// Splits the scratch into zeroed registers and empty stacks.
    pub fn prepare(&mut self, num_locals: usize) -> (&mut [QuadVec4], Stacks<'_>) {
        self.regs.clear();
        self.regs.resize(num_locals, ZERO);
        self.cond.clear();
        self.loops.clear();
        self.switches.clear();
        self.calls.clear();
        (
            &mut self.regs,
            Stacks {
                cond: &mut self.cond,
                loops: &mut self.loops,
                switches: &mut self.switches,
                calls: &mut self.calls,
            },
        )
    }
}
