//! The per-instruction lowering (gallivm's `lp_bld_tgsi_action`): [`Emitter::native_alu`]
//! emits an arithmetic, logic, conversion, derivative or texture instruction natively, from
//! `arith`'s float rules, `mathlib`'s transcendentals and `sample`'s texture paths; what it
//! does not lower runs the interpreter's own executor for that one instruction
//! ([`Emitter::step`], through the `interp_step` shim) on the kernel's register memory, and
//! the `ops` functions without a vector form are called per lane ([`Emitter::lane_call`]).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, I32, I32X4};
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

use super::arith::{ONE, SIGN};
use super::{Cmp, Emitter, V};
use crate::codegen::abi::{Address, STATUS_ERROR};
use crate::codegen::shims::LaneOp;
use crate::exec::ExecError;
use crate::interp::decode::{DstLoc, Inst, Modifier};
use crate::ir::{Opcode, OpcodeClass};

impl Emitter<'_, '_> {
    /// Per-lane scalar integer op on two vectors.
    fn per_lane(
        &mut self,
        a: Value,
        b: Value,
        op: fn(&mut FunctionBuilder, Value, Value) -> Value,
    ) -> Value {
        let mut r = a;
        for l in 0..4u8 {
            let x = self.b.ins().extractlane(a, l);
            let y = self.b.ins().extractlane(b, l);
            let z = op(&mut self.b, x, y);
            r = self.b.ins().insertlane(r, z, l);
        }
        r
    }

    /// Calls an `ops` function per lane through the `lane_op` shim.
    pub(super) fn lane_call(&mut self, op: LaneOp, args: &[Value]) -> Value {
        let addr = self.b.ins().stack_addr(self.ptr, self.slot, 0);
        for (k, &a) in args.iter().enumerate() {
            self.b.ins().store(self.mf, a, addr, k as i32 * 16);
        }
        let opv = self.b.ins().iconst(I32, op as i64);
        let callee = self.address(Address::LANES);
        self.b
            .ins()
            .call_indirect(self.lanes_sig, callee, &[opv, addr]);
        self.b.ins().load(I32X4, self.mf, addr, 0)
    }

    /// Runs instruction `pc` through the interpreter: the registers held in variables are
    /// stored to the register memory the interpreter reads, and its destination reloaded.
    pub(super) fn step(&mut self, pc: usize, full: bool) {
        for i in 0..self.reg_vars.len() {
            if let Some(vars) = self.reg_vars[i] {
                for (c, var) in vars.iter().enumerate() {
                    let v = self.b.use_var(*var);
                    self.b
                        .ins()
                        .store(self.mf, v, self.regs, (i * 64 + c * 16) as i32);
                }
            }
        }
        self.step_call(pc, full);
        if let DstLoc::Local(i) = self.d.insts[pc].dst {
            if let Some(vars) = self.reg_vars[i as usize] {
                for (c, var) in vars.iter().enumerate() {
                    let ty = self.var_type(*var);
                    let v = self.b.ins().load(
                        ty,
                        self.mf,
                        self.regs,
                        (i as usize * 64 + c * 16) as i32,
                    );
                    self.b.def_var(*var, v);
                }
            }
        }
    }

    fn step_call(&mut self, pc: usize, full: bool) {
        let op = self.d.insts[pc].op;
        let bits = if op.class() == OpcodeClass::Memory && op != Opcode::LOAD {
            // Stores and atomics skip killed lanes, which the interpreter's step cannot see.
            let e = if full {
                let ones = self.b.ins().iconst(I32, -1);
                self.b.ins().splat(I32X4, ones)
            } else {
                self.exec()
            };
            let kill = self.b.use_var(self.kill);
            let alive = self.b.ins().band_not(e, kill);
            self.b.ins().vhigh_bits(I32, alive)
        } else if full {
            self.b.ins().iconst(I32, 0xF)
        } else {
            let e = self.exec();
            self.b.ins().vhigh_bits(I32, e)
        };
        let pcv = self.b.ins().iconst(I32, pc as i64);
        let callee = self.address(Address::STEP);
        let r = if self.shims.preserve_all {
            let status = self.b.ins().stack_addr(self.ptr, self.slot, 0);
            self.b
                .ins()
                .call_indirect(self.step_sig, callee, &[self.ctx, pcv, bits, status]);
            self.b.ins().load(I32, self.mf, status, 0)
        } else {
            let call = self
                .b
                .ins()
                .call_indirect(self.step_sig, callee, &[self.ctx, pcv, bits]);
            self.b.inst_results(call)[0]
        };
        let bad = self.b.create_block();
        let ok = self.b.create_block();
        self.b.ins().brif(r, bad, &[], ok, &[]);
        self.enter(bad);
        let s = self.b.ins().iconst(I32, (STATUS_ERROR << 8) as i64);
        self.b.ins().return_(&[s]);
        self.enter(ok);
    }

    /// Emits an arithmetic instruction natively; false when it must go through the interpreter.
    pub(super) fn native_alu(
        &mut self,
        inst: &Inst,
        full: bool,
        pc: usize,
    ) -> Result<bool, ExecError> {
        use Opcode::*;
        let op = inst.op;
        let answer = self
            .answered
            .as_ref()
            .and_then(|(slot, offsets)| Some((*slot, *offsets.get(&pc)?)));
        if let Some((slot, offset)) = answer {
            let addr = self.b.ins().stack_addr(self.ptr, slot, offset);
            // Texels are floats, sizes integers (as their destinations mostly are).
            let ty = if matches!(op, Opcode::TXQ | Opcode::SVIEWINFO) {
                I32X4
            } else {
                F32X4
            };
            let r: [Option<V>; 4] = std::array::from_fn(|c| {
                let v = self.b.ins().load(ty, self.mf, addr, c as i32 * 16);
                Some(V { v, flushed: false })
            });
            self.store(inst, &r, full);
            return Ok(true);
        }
        if op.class() == OpcodeClass::Texture {
            if !crate::codegen::shims::tex_fast_path(self.d, inst) {
                return Ok(false);
            }
            let mut src = [self.splat(0); 4];
            for (c, sc) in src.iter_mut().enumerate() {
                *sc = self.fetch(&inst.src[0], c, pc)?.v;
            }
            let mut grads = Vec::new();
            if op == TXD {
                let t = self.d.textures[inst.aux as usize];
                let n = crate::interp::decode::deriv_dim(t.target).unwrap_or(0);
                for k in 1..3 {
                    let mut g = Vec::with_capacity(n);
                    for c in 0..n {
                        g.push(self.fetch(&inst.src[k], c, pc)?.v);
                    }
                    grads.push(g);
                }
            }
            let offset = self.d.textures.get(inst.aux as usize).and_then(|t| {
                let [x, y, _] = crate::codegen::shims::constant_tex_offset(self.d, t)?;
                Some([x, y])
            });
            let texels = match (self.fast_vals.get(&pc).copied(), offset) {
                (Some((base, None)), Some(offset)) => {
                    self.tex_site(base, pc, op, src, &grads, offset)
                }
                (Some((base, Some(shape))), Some(offset)) => {
                    self.tex_shaped(base, pc, op, src, &grads, shape, offset)
                }
                // Texels are floats: most destinations are `f32x4` variables.
                _ => self.tex_call(pc, src, &grads, F32X4, None),
            };
            let r = texels.map(|v| Some(V { v, flushed: false }));
            self.store(inst, &r, full);
            return Ok(true);
        }
        let m = inst.write_mask;
        let s = inst.src;
        let lazy = self.lazy.get(pc).copied().unwrap_or(0);
        // Broadcast results (one value for every written channel) stay unflushed only when
        // every written channel may.
        let lazy_all = lazy == m;
        let mut r: [Option<V>; 4] = [None; 4];
        // Componentwise ops over the written channels.
        macro_rules! each {
            (|$($a:ident),*| $body:expr) => {
                each!(|_c; $($a),*| $body)
            };
            // `$c`: whether this channel's result may stay unflushed (see `lazy`).
            (|$c:ident; $($a:ident),*| $body:expr) => {{
                for c in 0..4 {
                    if m & (1 << c) != 0 {
                        let $c = lazy & (1 << c) != 0;
                        let mut k = 0;
                        $( let $a = self.fetch(&s[k], c, pc)?; k += 1; )*
                        let _ = k;
                        r[c] = Some($body);
                    }
                }
            }};
        }
        macro_rules! broadcast {
            ($v:expr) => {{
                let v = $v;
                r = [Some(v); 4];
            }};
        }
        match op {
            NOP => return Ok(true),
            MOV | UARL => each!(|a| a),
            ADD | SUB | MUL | DIV => each!(|lz; a, b| self.fbin_result(op, a, b, lz)),
            MAD => each!(|lz; a, b, c3| {
                let t = self.mul_unflushed(a, b);
                self.fbin_result(ADD, t, c3, lz)
            }),
            LRP => each!(|lz; a, b, c3| {
                let t = V {
                    v: self.fbin_unflushed(SUB, b, c3),
                    flushed: false,
                };
                let t = self.mul_unflushed(a, t);
                self.fbin_result(ADD, t, c3, lz)
            }),
            MIN | MAX => each!(|a, b| self.minmax(op == MAX, a, b)),
            CLAMP => each!(|a, lo, hi| {
                let t = self.minmax(true, a, lo);
                self.minmax(false, t, hi)
            }),
            SLT | SGE | SGT | SLE | SEQ | SNE | FSLT | FSGE | FSEQ | FSNE => each!(|a, b| {
                let (cc, x, y) = match op {
                    SLT | FSLT => (FloatCC::LessThan, a, b),
                    SGE | FSGE => (FloatCC::GreaterThanOrEqual, a, b),
                    SGT => (FloatCC::LessThan, b, a),
                    SLE => (FloatCC::GreaterThanOrEqual, b, a),
                    SEQ | FSEQ => (FloatCC::Equal, a, b),
                    _ => (FloatCC::NotEqual, a, b),
                };
                let mask = self.fcmp(cc, x, y);
                if matches!(op, FSLT | FSGE | FSEQ | FSNE) {
                    V {
                        v: mask,
                        flushed: false,
                    }
                } else {
                    self.bool_float(mask)
                }
            }),
            CMP => each!(|a, b, c3| {
                let zero = Self::flushed(self.splat(0));
                let lt = self.fcmp(FloatCC::LessThan, a, zero);
                V {
                    v: self.sel(lt, b.v, c3.v),
                    flushed: b.flushed && c3.flushed,
                }
            }),
            CND => each!(|a, b, c3| {
                let half = Self::flushed(self.splat(0x3f00_0000));
                let gt = self.fcmp(FloatCC::LessThan, half, c3);
                V {
                    v: self.sel(gt, a.v, b.v),
                    flushed: a.flushed && b.flushed,
                }
            }),
            UCMP => each!(|a, b, c3| {
                let zero = self.splat(0);
                let x = self.i(a.v);
                let nz = self.compare(Cmp::I(IntCC::NotEqual), x, zero);
                V {
                    v: self.sel(nz, b.v, c3.v),
                    flushed: b.flushed && c3.flushed,
                }
            }),
            ABS => each!(|a| self.modify(a, Modifier::Abs)),
            FLR | CEIL | TRUNC | ROUND => each!(|a| {
                // DAZ flushes the input; rounding a normal number never yields a denormal.
                let x = self.f(a.v);
                let y = match op {
                    FLR => self.b.ins().floor(x),
                    CEIL => self.b.ins().ceil(x),
                    TRUNC => self.b.ins().trunc(x),
                    _ => self.b.ins().nearest(x),
                };
                // Only a signalling NaN comes out of `roundps` changed (quieted).
                if self.never_signalling(a.v) {
                    Self::flushed(y)
                } else {
                    Self::flushed(self.keep_nan(x, y))
                }
            }),
            FRC => each!(|lz; a| {
                let x = a;
                let xf = self.f(x.v);
                let fl = self.b.ins().floor(xf);
                let fl = if self.never_signalling(x.v) {
                    Self::flushed(fl)
                } else {
                    Self::flushed(self.keep_nan(xf, fl))
                };
                self.fbin_result(SUB, x, fl, lz)
            }),
            SSG => each!(|a| {
                let zero = Self::flushed(self.splat(0));
                let lt = self.fcmp(FloatCC::LessThan, a, zero);
                let gt = self.fcmp(FloatCC::GreaterThan, a, zero);
                let neg = self.splat(0xbf80_0000);
                let pos = self.splat(ONE);
                let n = self.b.ins().band(lt, neg);
                let p = self.b.ins().band(gt, pos);
                Self::flushed(self.b.ins().bor(n, p))
            }),
            DDX | DDY | DDX_FINE | DDY_FINE => each!(|lz; a| {
                let (hi, lo) = match op {
                    DDX => ([3, 3, 3, 3], [2, 2, 2, 2]),
                    DDY => ([2, 2, 2, 2], [0, 0, 0, 0]),
                    DDX_FINE => ([1, 1, 3, 3], [0, 0, 2, 2]),
                    _ => ([2, 3, 2, 3], [0, 1, 0, 1]),
                };
                let x = self.lanes(a.v, hi);
                let y = self.lanes(a.v, lo);
                let (x, y) = (
                    V {
                        v: x,
                        flushed: a.flushed,
                    },
                    V {
                        v: y,
                        flushed: a.flushed,
                    },
                );
                self.fbin_result(SUB, x, y, lz)
            }),
            RCP | RSQ | SQRT => {
                let a = self.fetch(&s[0], 0, pc)?;
                let one = Self::flushed(self.splat(ONE));
                let v = match op {
                    RCP => self.fbin_result(DIV, one, a, lazy_all),
                    _ => {
                        // DAZ flushes the input; sqrt of a normal number is normal.
                        let x = self.f(a.v);
                        let q = self.b.ins().sqrt(x);
                        let q = Self::flushed(q);
                        if op == RSQ {
                            self.fbin_result(DIV, one, q, lazy_all)
                        } else {
                            q
                        }
                    }
                };
                broadcast!(v)
            }
            EX2 | LG2 | POW | SIN | COS if self.lp_math => {
                let a = self.fetch(&s[0], 0, pc)?;
                let v = match op {
                    EX2 => self.lp_exp2(a.v),
                    LG2 => Self::flushed(self.lp_log2(a.v, true)),
                    SIN | COS => self.lp_sin_cos(a.v, op == COS),
                    _ => {
                        let b = self.fetch(&s[1], 0, pc)?;
                        self.lp_pow(a.v, b)
                    }
                };
                broadcast!(v)
            }
            EX2 | LG2 if self.vector_libm => {
                let a = self.fetch(&s[0], 0, pc)?;
                let v = if op == EX2 {
                    self.pow_inline(None, a.v)
                } else {
                    self.lg2_inline(a.v)
                };
                broadcast!(v)
            }
            SIN | COS if self.vector_libm => {
                let a = self.fetch(&s[0], 0, pc)?;
                let mut v = self.sincos_inline(a.v, op == COS);
                // SIN passes a denormal argument through (`ops::sin`).
                v.flushed = op == COS;
                broadcast!(v)
            }
            POW if self.vector_libm => {
                let a = self.fetch(&s[0], 0, pc)?;
                let b = self.fetch(&s[1], 0, pc)?;
                let v = self.pow_inline(Some(a.v), b.v);
                broadcast!(v)
            }
            EX2 | LG2 | SIN | COS => {
                let a = self.fetch(&s[0], 0, pc)?;
                let lop = match op {
                    EX2 => LaneOp::Ex2,
                    LG2 => LaneOp::Lg2,
                    SIN => LaneOp::Sin,
                    _ => LaneOp::Cos,
                };
                let v = self.lane_call(lop, &[a.v]);
                broadcast!(V { v, flushed: false })
            }
            POW => {
                let a = self.fetch(&s[0], 0, pc)?;
                let b = self.fetch(&s[1], 0, pc)?;
                let v = self.lane_call(LaneOp::Pow, &[a.v, b.v]);
                broadcast!(V { v, flushed: false })
            }
            IDIV | MOD | UDIV | UMOD | LDEXP | IMUL_HI | UMUL_HI => each!(|a, b| {
                let lop = match op {
                    IDIV => LaneOp::Idiv,
                    MOD => LaneOp::Imod,
                    UDIV => LaneOp::Udiv,
                    UMOD => LaneOp::Umod,
                    LDEXP => LaneOp::Ldexp,
                    IMUL_HI => LaneOp::ImulHi,
                    _ => LaneOp::UmulHi,
                };
                V {
                    v: self.lane_call(lop, &[a.v, b.v]),
                    flushed: false,
                }
            }),
            IBFE | UBFE => each!(|a, b, c3| V {
                v: self.lane_call(
                    if op == IBFE {
                        LaneOp::Ibfe
                    } else {
                        LaneOp::Ubfe
                    },
                    &[a.v, b.v, c3.v]
                ),
                flushed: false,
            }),
            LSB | UMSB | IMSB | POPC | BREV => each!(|a| {
                let lop = match op {
                    LSB => LaneOp::Lsb,
                    UMSB => LaneOp::Umsb,
                    IMSB => LaneOp::Imsb,
                    POPC => LaneOp::Popc,
                    _ => LaneOp::Brev,
                };
                V {
                    v: self.lane_call(lop, &[a.v]),
                    flushed: false,
                }
            }),
            FMA => each!(|lz; a, b, c3| self.fma(a, b, c3, lz)),
            DP2 | DP3 | DP4 | DPH | DP2A => {
                let n = match op {
                    DP2 | DP2A => 2,
                    DP3 | DPH => 3,
                    _ => 4,
                };
                // Only the last sum is flushed (see `fbin_unflushed`).
                let a0 = self.fetch(&s[0], 0, pc)?;
                let b0 = self.fetch(&s[1], 0, pc)?;
                let mut d = self.mul_unflushed(a0, b0);
                let extra = match op {
                    DPH => Some(self.fetch(&s[1], 3, pc)?),
                    DP2A => Some(self.fetch(&s[2], 0, pc)?),
                    _ => None,
                };
                for c in 1..n {
                    let a = self.fetch(&s[0], c, pc)?;
                    let b = self.fetch(&s[1], c, pc)?;
                    let t = self.mul_unflushed(a, b);
                    d = if c + 1 == n && extra.is_none() {
                        self.fbin_result(ADD, t, d, lazy_all)
                    } else {
                        V {
                            v: self.fbin_unflushed(ADD, t, d),
                            flushed: false,
                        }
                    };
                }
                if let Some(x) = extra {
                    d = self.fbin_result(ADD, d, x, lazy_all);
                }
                broadcast!(d)
            }
            I2F | U2F => each!(|a| {
                let x = self.i(a.v);
                let f = if op == I2F {
                    self.b.ins().fcvt_from_sint(F32X4, x)
                } else {
                    self.b.ins().fcvt_from_uint(F32X4, x)
                };
                Self::flushed(f)
            }),
            F2I => each!(|a| V {
                v: self.f2i(a.v),
                flushed: false,
            }),
            F2U => each!(|a| {
                let two31 = self.splat(0x4f00_0000);
                let xf = self.f(a.v);
                let tf = self.f(two31);
                let big = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, xf, tf);
                let t = self.b.ins().fsub(xf, tf);
                let t = self.i(t);
                let hi = self.f2i(t);
                let sign = self.splat(SIGN);
                let hi = self.b.ins().bxor(hi, sign);
                let lo = self.f2i(a.v);
                V {
                    v: self.b.ins().bitselect(big, hi, lo),
                    flushed: false,
                }
            }),
            ARL | ARR => each!(|a| {
                let x = if op == ARR {
                    let half = Self::flushed(self.splat(0x3f00_0000));
                    self.add(a, half)
                } else {
                    a
                };
                let xf = self.f(x.v);
                let fl = self.b.ins().floor(xf);
                let fl = self.i(fl);
                V {
                    v: self.f2i(fl),
                    flushed: false,
                }
            }),
            NOT => each!(|a| {
                let x = self.i(a.v);
                V {
                    v: self.b.ins().bnot(x),
                    flushed: false,
                }
            }),
            AND | OR | XOR | UADD | UMUL | IMAX | IMIN | UMAX | UMIN => each!(|a, b| {
                let (x, y) = (self.i(a.v), self.i(b.v));
                let ins = self.b.ins();
                let v = match op {
                    AND => ins.band(x, y),
                    OR => ins.bor(x, y),
                    XOR => ins.bxor(x, y),
                    UADD => ins.iadd(x, y),
                    UMUL => ins.imul(x, y),
                    IMAX => ins.smax(x, y),
                    IMIN => ins.smin(x, y),
                    UMAX => ins.umax(x, y),
                    _ => ins.umin(x, y),
                };
                V { v, flushed: false }
            }),
            UMAD => each!(|a, b, c3| {
                let (x, y, z) = (self.i(a.v), self.i(b.v), self.i(c3.v));
                let t = self.b.ins().imul(x, y);
                V {
                    v: self.b.ins().iadd(t, z),
                    flushed: false,
                }
            }),
            INEG => each!(|a| {
                let x = self.i(a.v);
                V {
                    v: self.b.ins().ineg(x),
                    flushed: false,
                }
            }),
            IABS => each!(|a| {
                let x = self.i(a.v);
                V {
                    v: self.b.ins().iabs(x),
                    flushed: false,
                }
            }),
            ISSG => each!(|a| {
                let minus = self.splat(!0);
                let one = self.splat(1);
                let x = self.i(a.v);
                let t = self.b.ins().smax(x, minus);
                V {
                    v: self.b.ins().smin(t, one),
                    flushed: false,
                }
            }),
            ISGE | ISLT | USEQ | USNE | USGE | USLT => each!(|a, b| {
                let cc = match op {
                    ISGE => IntCC::SignedGreaterThanOrEqual,
                    ISLT => IntCC::SignedLessThan,
                    USEQ => IntCC::Equal,
                    USNE => IntCC::NotEqual,
                    USGE => IntCC::UnsignedGreaterThanOrEqual,
                    _ => IntCC::UnsignedLessThan,
                };
                let (x, y) = (self.i(a.v), self.i(b.v));
                V {
                    v: self.b.ins().icmp(cc, x, y),
                    flushed: false,
                }
            }),
            SHL | USHR | ISHR => {
                let f: fn(&mut FunctionBuilder, Value, Value) -> Value = match op {
                    SHL => |b, x, y| b.ins().ishl(x, y),
                    USHR => |b, x, y| b.ins().ushr(x, y),
                    _ => |b, x, y| b.ins().sshr(x, y),
                };
                for c in (0..4).filter(|c| m & (1 << c) != 0) {
                    let a = self.fetch(&s[0], c, pc)?;
                    let x = self.i(a.v);
                    // An immediate count is one count for all lanes: one vector shift. Counts
                    // wrap modulo 32 in both TGSI and Cranelift.
                    let v = match self.immediate_bits(&s[1], c) {
                        Some(count) => {
                            let k = self.b.ins().iconst(I32, i64::from(count & 31));
                            f(&mut self.b, x, k)
                        }
                        None => {
                            let b = self.fetch(&s[1], c, pc)?;
                            let y = self.i(b.v);
                            self.per_lane(x, y, f)
                        }
                    };
                    r[c] = Some(V { v, flushed: false });
                }
            }
            _ => return Ok(false),
        }
        self.store(inst, &r, full);
        Ok(true)
    }
}
