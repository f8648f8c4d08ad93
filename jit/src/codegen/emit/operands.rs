//! Register files (gallivm's `emit_fetch`/`emit_store`): reading a source channel (SSA
//! variable, memory register, IN/SV/OUT block, immediate or constant, directly or through a
//! per-lane bounds-checked indirect address) with its swizzle and modifier applied, and writing
//! the written channels of a result blended with the execution mask (OUT also with the live
//! lanes). Registers an indirect operand may reach, and all of them in very large programs,
//! live in memory in the interpreter's layout (`analysis::memory_locals`); the others are SSA
//! variables. Also the zeroing of memory registers at the start of each quad.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{InstBuilder, Value};

use super::arith::{is_denormal, SIGN};
use super::{Emitter, V};
use crate::codegen::abi::Address;
use crate::exec::ExecError;
use crate::interp::decode::{DstLoc, Inst, Loc, Modifier, Slot, Src};

impl Emitter<'_, '_> {
    /// The bits of channel `chan` of `s` when it is an immediate without modifiers.
    pub(super) fn immediate_bits(&self, s: &Src, chan: usize) -> Option<u32> {
        match (s.loc, s.modifier) {
            (Loc::Direct(Slot::Imm(i)), Modifier::None) => {
                Some(self.d.imms[i as usize][s.swizzle[chan] as usize][0])
            }
            _ => None,
        }
    }

    fn reg_base(&mut self, slot: Slot) -> Option<(Value, u32)> {
        match slot {
            Slot::Local(i) => Some((self.regs, i)),
            Slot::Input(i) => Some((self.inp, i)),
            Slot::SystemValue(i) => Some((self.sv, i)),
            Slot::Output(i) => Some((self.out, i)),
            _ => None,
        }
    }

    fn load_slot(&mut self, slot: Slot, comp: u8) -> V {
        if let Slot::Local(i) = slot {
            if let Some(vars) = self.reg_vars[i as usize] {
                let v = self.b.use_var(vars[comp as usize & 3]);
                let flushed = self.flushed_locals[i as usize][comp as usize];
                return V { v, flushed };
            }
        }
        if let Some((base, i)) = self.reg_base(slot) {
            let off = (i as i64 * 64 + comp as i64 * 16) as i32;
            let v = self.b.ins().load(I32X4, self.mf, base, off);
            let flushed = match slot {
                Slot::Local(i) => self.flushed_locals[i as usize][comp as usize],
                _ => false,
            };
            return V { v, flushed };
        }
        match slot {
            Slot::Imm(i) => {
                let bits = self.d.imms[i as usize][comp as usize][0];
                V {
                    v: self.splat(bits),
                    flushed: !is_denormal(bits),
                }
            }
            Slot::Const(b, i) => match self.const_vals.get(&(b, i, comp)) {
                Some(&v) => V { v, flushed: false },
                None => {
                    let addr = self.const_addr[&(b, i)];
                    let x = self.b.ins().load(I32, self.mf, addr, comp as i32 * 4);
                    V {
                        v: self.b.ins().splat(I32X4, x),
                        flushed: false,
                    }
                }
            },
            _ => Self::flushed(self.splat(0)),
        }
    }

    /// Channel `chan` of a source: swizzled, modifiers applied.
    pub(super) fn fetch(&mut self, s: &Src, chan: usize, _pc: usize) -> Result<V, ExecError> {
        let v = match s.loc {
            Loc::Direct(slot) => self.load_slot(slot, s.swizzle[chan]),
            Loc::Indirect(k) => self.load_indirect(k, s.swizzle[chan]),
        };
        Ok(self.modify(v, s.modifier))
    }

    /// One lane of an index register, as the interpreter's `i64` index plus `offset`.
    fn index_lane(&mut self, reg: Option<Value>, lane: u8, offset: i64) -> Value {
        match reg {
            Some(v) => {
                let x = self.b.ins().extractlane(v, lane);
                let x = self.b.ins().sextend(I64, x);
                self.b.ins().iadd_imm_s(x, offset)
            }
            None => self.b.ins().iconst(I64, offset),
        }
    }

    /// `base + i * scale + add`.
    pub(super) fn scaled(&mut self, base: Value, i: Value, scale: i64, add: i64) -> Value {
        let k = self.b.ins().iconst(I64, scale);
        let off = self.b.ins().imul(i, k);
        let a = self.b.ins().iadd(base, off);
        self.b.ins().iadd_imm_s(a, add)
    }

    /// Per-lane addresses of an indirect operand: lane `l` reads channel `c` at
    /// `addr[l] + c * 16` (`c * 4` for constants); out-of-range lanes point at zeros.
    fn indirect_addrs(&mut self, k: u32) -> [Value; 4] {
        if let Some(a) = self.indirect_cache.get(&k) {
            return *a;
        }
        use crate::interp::decode::IndirectFile;
        let ind = self.d.indirects[k as usize];
        let idx = ind.index_reg.map(|r| {
            let v = self.load_slot(r.slot, r.component).v;
            self.i(v)
        });
        let dims = ind.dim_reg.map(|r| {
            let v = self.load_slot(r.slot, r.component).v;
            self.i(v)
        });
        let mut addrs = [self.zero_addr; 4];
        for (l, addr) in addrs.iter_mut().enumerate() {
            let lane = l as u8;
            let i = self.index_lane(idx, lane, ind.index);
            let lane_off = l as i64 * 4;
            let (ok, a) = match ind.file {
                IndirectFile::Local { base, lo, hi } => {
                    let rel = self.b.ins().iadd_imm_s(i, -lo);
                    let n = self.b.ins().iconst(I64, (hi - lo).max(0));
                    let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, rel, n);
                    let a = self.scaled(self.regs, i, 64, base as i64 * 64 + lane_off);
                    (ok, a)
                }
                IndirectFile::Input | IndirectFile::Output | IndirectFile::SystemValue => {
                    let (p, len_off) = match ind.file {
                        IndirectFile::Input => (self.inp, self.offsets.io_inputs_len),
                        IndirectFile::Output => (self.out, self.offsets.io_outputs_len),
                        _ => (self.sv, self.offsets.io_sysvals_len),
                    };
                    let len = self.b.ins().load(I64, self.mf, self.ctx, len_off);
                    let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
                    (ok, self.scaled(p, i, 64, lane_off))
                }
                IndirectFile::Imm => {
                    let n = self.b.ins().iconst(I64, self.d.imms.len() as i64);
                    let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i, n);
                    let base = self.address(Address::IMMEDIATES);
                    (ok, self.scaled(base, i, 64, lane_off))
                }
                IndirectFile::Const => {
                    let d = self.index_lane(dims, lane, ind.dim);
                    let nb = self
                        .b
                        .ins()
                        .load(I64, self.mf, self.ctx, self.offsets.consts_len);
                    let d_ok = self.b.ins().icmp(IntCC::UnsignedLessThan, d, nb);
                    let empty = self.address(Address::EMPTY_CONST_BUFFER);
                    let entry = self.scaled(self.cb, d, 16, 0);
                    let entry = self.b.ins().select(d_ok, entry, empty);
                    let ptr = self.b.ins().load(I64, self.mf, entry, 0);
                    let len = self.b.ins().load(I64, self.mf, entry, 8);
                    let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
                    (ok, self.scaled(ptr, i, 16, 0))
                }
            };
            *addr = self.b.ins().select(ok, a, self.zero_addr);
        }
        self.indirect_cache.insert(k, addrs);
        addrs
    }

    fn load_indirect(&mut self, k: u32, comp: u8) -> V {
        let addrs = self.indirect_addrs(k);
        let stride = if matches!(
            self.d.indirects[k as usize].file,
            crate::interp::decode::IndirectFile::Const
        ) {
            4
        } else {
            16
        };
        let mut v = self.splat(0);
        for (l, a) in addrs.iter().enumerate() {
            let x = self.b.ins().load(I32, self.mf, *a, comp as i32 * stride);
            v = self.b.ins().insertlane(v, x, l as u8);
        }
        V { v, flushed: false }
    }

    pub(super) fn modify(&mut self, v: V, m: Modifier) -> V {
        // Sign-bit changes keep a value denormal-free; integer negation does not.
        // Sign-bit changes are made in the value's own type.
        let ty = self.b.func.dfg.value_type(v.v);
        let (v, flushed) = match m {
            Modifier::None => return v,
            Modifier::Abs => {
                let k = self.konst(!SIGN, ty);
                (self.b.ins().band(v.v, k), v.flushed)
            }
            Modifier::FNeg => {
                let k = self.konst(SIGN, ty);
                (self.b.ins().bxor(v.v, k), v.flushed)
            }
            Modifier::FNegAbs => {
                let k = self.konst(SIGN, ty);
                (self.b.ins().bor(v.v, k), v.flushed)
            }
            Modifier::INeg => {
                let x = self.i(v.v);
                (self.b.ins().ineg(x), false)
            }
            Modifier::INegAbs => {
                let x = self.i(v.v);
                let k = self.splat(!SIGN);
                let a = self.b.ins().band(x, k);
                (self.b.ins().ineg(a), false)
            }
        };
        V { v, flushed }
    }

    /// `lanes ? val : old` per lane, for a lane mask (every lane all ones or all zeros): one
    /// `blendvps`, where `bitselect` of a mask Cranelift cannot see the origin of (a variable,
    /// a block parameter) becomes three instructions.
    fn blend_lanes(&mut self, lanes: Value, val: Value, old: Value) -> Value {
        let val = self.i(val);
        let old = self.i(old);
        self.b.ins().blendv(lanes, val, old)
    }

    /// Stores the written channels of `vals` for the executing (and, for OUT, live) lanes.
    pub(super) fn store(&mut self, inst: &Inst, vals: &[Option<V>; 4], full: bool) {
        if let DstLoc::Local(i) = inst.dst {
            if let Some(vars) = self.reg_vars[i as usize] {
                let lanes = if full { None } else { Some(self.exec()) };
                for (c, v) in vals.iter().enumerate() {
                    let Some(v) = v else { continue };
                    if inst.write_mask & (1 << c) == 0 {
                        continue;
                    }
                    let val = if inst.saturate {
                        self.saturate(*v)
                    } else {
                        v.v
                    };
                    let val = match lanes {
                        None => val,
                        Some(m) => {
                            let old = self.b.use_var(vars[c]);
                            self.blend_lanes(m, val, old)
                        }
                    };
                    let val = self.cast(self.var_type(vars[c]), val);
                    self.b.def_var(vars[c], val);
                }
                return;
            }
        }
        let (base, i, is_out) = match inst.dst {
            DstLoc::Local(i) => (self.regs, i, false),
            DstLoc::Output(i) => (self.out, i, true),
            DstLoc::Indirect(k) => return self.store_indirect(inst, k, vals, full),
            DstLoc::Null => return,
        };
        let mut lanes = if full { None } else { Some(self.exec()) };
        if is_out {
            lanes = Some(match lanes {
                None => self.live,
                Some(e) => self.b.ins().band(e, self.live),
            });
        }
        for (c, v) in vals.iter().enumerate() {
            let Some(v) = v else { continue };
            if inst.write_mask & (1 << c) == 0 {
                continue;
            }
            let val = if inst.saturate {
                self.saturate(*v)
            } else {
                v.v
            };
            let off = (i as i64 * 64 + c as i64 * 16) as i32;
            let val = match lanes {
                None => val,
                Some(m) => {
                    let old = self.b.ins().load(I32X4, self.mf, base, off);
                    self.blend_lanes(m, val, old)
                }
            };
            self.b.ins().store(self.mf, val, base, off);
        }
    }

    /// An indirect destination: per lane, the register the lane's index selects, if in range
    /// (and, for OUT, if the lane is live); other lanes write to a scratch slot.
    fn store_indirect(&mut self, inst: &Inst, k: u32, vals: &[Option<V>; 4], full: bool) {
        let is_out = matches!(
            self.d.indirects[k as usize].file,
            crate::interp::decode::IndirectFile::Output
        );
        let addrs = self.indirect_addrs(k);
        let lanes = match (full, is_out) {
            (true, false) => None,
            (true, true) => Some(self.live),
            (false, false) => Some(self.exec()),
            (false, true) => {
                let e = self.exec();
                Some(self.b.ins().band(e, self.live))
            }
        };
        let mut chans = Vec::new();
        for (c, v) in vals.iter().enumerate() {
            if let Some(v) = v {
                if inst.write_mask & (1 << c) != 0 {
                    let val = if inst.saturate {
                        self.saturate(*v)
                    } else {
                        v.v
                    };
                    chans.push((c, val));
                }
            }
        }
        let sink = self.b.ins().stack_addr(self.ptr, self.slot, 0);
        for (l, &a) in addrs.iter().enumerate() {
            let lane = l as u8;
            let mut ok = self.b.ins().icmp(IntCC::NotEqual, a, self.zero_addr);
            if let Some(m) = lanes {
                let bit = self.b.ins().extractlane(m, lane);
                let on = self.b.ins().icmp_imm_s(IntCC::NotEqual, bit, 0);
                ok = self.b.ins().band(ok, on);
            }
            let addr = self.b.ins().select(ok, a, sink);
            for &(c, val) in &chans {
                let x = self.b.ins().extractlane(val, lane);
                self.b.ins().store(self.mf, x, addr, c as i32 * 16);
            }
        }
    }

    /// Zeroes, at the start of a quad, the memory-register channels `slots` (byte offsets in
    /// the register file, ascending): runs of 16 or more consecutive channels in a loop, the
    /// others one store each.
    pub(super) fn zero_channels(&mut self, slots: &[i32]) {
        let zero = self.splat(0);
        let mut k = 0;
        while k < slots.len() {
            let mut run = 1;
            while k + run < slots.len() && slots[k + run] == slots[k] + 16 * run as i32 {
                run += 1;
            }
            if run < 16 {
                for &off in &slots[k..k + run] {
                    self.b.ins().store(self.mf, zero, self.regs, off);
                }
            } else {
                // Whole 64-byte steps in the loop, the rest after it.
                let steps = run / 4;
                let cursor = self.declare(self.ptr);
                let start = self.b.ins().iadd_imm_s(self.regs, slots[k] as i64);
                self.b.def_var(cursor, start);
                let end = self.b.ins().iadd_imm_s(start, steps as i64 * 64);
                let body = self.b.create_block();
                let after = self.b.create_block();
                self.b.ins().jump(body, &[]);
                self.b.switch_to_block(body);
                let p = self.b.use_var(cursor);
                for c in 0..4 {
                    self.b.ins().store(self.mf, zero, p, c * 16);
                }
                let p = self.b.ins().iadd_imm_s(p, 64);
                self.b.def_var(cursor, p);
                let more = self.b.ins().icmp(IntCC::UnsignedLessThan, p, end);
                self.b.ins().brif(more, body, &[], after, &[]);
                self.b.seal_block(body);
                self.b.seal_block(after);
                self.b.switch_to_block(after);
                for &off in &slots[k + steps * 4..k + run] {
                    self.b.ins().store(self.mf, zero, self.regs, off);
                }
            }
            k += run;
        }
    }
}
