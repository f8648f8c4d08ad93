//! The interpreter's float rules in vector code (gallivm's `lp_bld_arit`): the binary float
//! operations with `ops::pick_nan`'s NaN choice (operand order picks the NaN x86 returns) and
//! `ops::flush` of their results (one `addps r, -0.0` under the kernel's DAZ, left out where
//! `lazy` allows), comparisons (shared within a block), fused multiply-add, MIN/MAX with
//! `ops::fmax`/`ops::fmin`'s NaN and tie rules, saturation, rounding that keeps a NaN argument,
//! float-to-integer conversion with `cvttps2dq` semantics, and the float bit patterns these
//! rules test. The operations take and give [`V`] values (a vector and whether it is known to
//! hold no denormal); `alu` applies them per instruction, `mathlib` and the texture paths build
//! on them.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::I32X4;
use cranelift_codegen::ir::{InstBuilder, Value};

use super::{Cmp, Emitter, V};
use crate::codegen::shims::LaneOp;
use crate::ir::Opcode;

pub(super) const SIGN: u32 = 0x8000_0000;
pub(super) const EXP: u32 = 0x7f80_0000;
pub(super) const MANT: u32 = 0x007f_ffff;
pub(super) const ONE: u32 = 0x3f80_0000;
/// The quiet bit of a float NaN.
const QUIET: u32 = 0x0040_0000;

/// For a divisor `±2^k` whose reciprocal is a normal float too (both survive DAZ): the
/// reciprocal's bits.
fn power_of_two_reciprocal(bits: u32) -> Option<u32> {
    let e = (bits & EXP) >> 23;
    (bits & MANT == 0 && (1..=253).contains(&e)).then(|| bits & SIGN | (254 - e) << 23)
}

pub(super) fn is_denormal(bits: u32) -> bool {
    bits & EXP == 0 && bits & MANT != 0
}

impl Emitter<'_, '_> {
    pub(super) fn flushed(v: Value) -> V {
        V { v, flushed: true }
    }

    /// A float binary op with flushed inputs (the kernel runs with MXCSR.DAZ set, so the
    /// hardware reads denormal inputs as zero) and a flushed output.
    pub(super) fn fbin(&mut self, op: Opcode, a: V, b: V) -> V {
        let r = self.fbin_float(op, a, b);
        // `ops::flush` of an arithmetic result: `r + -0.0`, in which DAZ reads a denormal `r`
        // as the zero of its sign, and which returns any other `r` unchanged (an SSE result is
        // never a signalling NaN, so its NaN goes through as it is). One instruction, not five.
        let r = self.b.ins().fadd(r, self.neg_zero);
        Self::flushed(r)
    }

    /// [`Self::fbin`], with the output flush left out when `lazy` (the result only reaches
    /// float arithmetic, see `lazy`).
    pub(super) fn fbin_result(&mut self, op: Opcode, a: V, b: V, lazy: bool) -> V {
        if lazy {
            V {
                v: self.fbin_float(op, a, b),
                flushed: false,
            }
        } else {
            self.fbin(op, a, b)
        }
    }

    /// [`Self::fbin`] without the output flush, for intermediate results that only feed other
    /// float arithmetic: DAZ reads a denormal input as the zero of its sign, which is what the
    /// flush would have written.
    pub(super) fn fbin_unflushed(&mut self, op: Opcode, a: V, b: V) -> Value {
        self.fbin_float(op, a, b)
    }

    /// The operation itself, as an `f32x4`.
    pub(super) fn fbin_float(&mut self, op: Opcode, a: V, b: V) -> Value {
        let x = self.f(a.v);
        let y = self.f(b.v);
        // Operand order decides which NaN wins when both are NaN (`ops::pick_nan`): x86 returns
        // the instruction's first source, so ADD and MUL (second operand wins) are swapped.
        let r = match op {
            Opcode::ADD => self.b.ins().fadd(y, x),
            Opcode::SUB => self.b.ins().fsub(x, y),
            Opcode::MUL => self.b.ins().fmul(y, x),
            _ => match self
                .const_bits
                .get(&b.v)
                .and_then(|&k| power_of_two_reciprocal(k))
            {
                // `x / 2^k` and `x * 2^-k` are the same rounding of the same number (a NaN
                // `x` comes back quieted either way), and a multiplication is 4x faster.
                Some(r) => {
                    let r = self.splat(r);
                    let r = self.f(r);
                    self.b.ins().fmul(x, r)
                }
                None => self.b.ins().fdiv(x, y),
            },
        };
        r
    }

    pub(super) fn mul_unflushed(&mut self, a: V, b: V) -> V {
        V {
            v: self.fbin_unflushed(Opcode::MUL, a, b),
            flushed: false,
        }
    }

    pub(super) fn add(&mut self, a: V, b: V) -> V {
        self.fbin(Opcode::ADD, a, b)
    }

    /// Float compare of flushed operands (DAZ flushes them): an `i32x4` lane mask.
    pub(super) fn fcmp(&mut self, cc: FloatCC, a: V, b: V) -> Value {
        let x = self.f(a.v);
        let y = self.f(b.v);
        self.compare(Cmp::F(cc), x, y)
    }

    /// An `fcmp` or `icmp`, reusing an equal one made earlier in the current block (swizzles
    /// that repeat a channel repeat the comparison, and Cranelift does not merge them without
    /// its optimizer).
    pub(super) fn compare(&mut self, cmp: Cmp, x: Value, y: Value) -> Value {
        self.sync_block();
        if let Some(&r) = self.cmp_here.get(&(cmp, x, y)) {
            return r;
        }
        let r = match cmp {
            Cmp::F(cc) => self.b.ins().fcmp(cc, x, y),
            Cmp::I(cc) => self.b.ins().icmp(cc, x, y),
        };
        self.cmp_here.insert((cmp, x, y), r);
        r
    }

    /// `ops::fma`: with the CPU's FMA (`vector_libm`) one fused vector multiply-add, flushed
    /// unless `lazy`; lanes with a NaN operand then take that operand quieted, in `ops::fma`'s
    /// order (which NaN the instruction itself returns depends on the operand order Cranelift
    /// picks).
    pub(super) fn fma(&mut self, a: V, b: V, c: V, lazy: bool) -> V {
        if !self.vector_libm {
            return V {
                v: self.lane_call(LaneOp::Fma, &[a.v, b.v, c.v]),
                flushed: false,
            };
        }
        let (x, y, z) = (self.f(a.v), self.f(b.v), self.f(c.v));
        // Under DAZ the hardware reads denormal operands as zero, as `ops::fma` flushes them.
        let mut r = self.b.ins().fma(x, y, z);
        if !lazy {
            r = self.b.ins().fadd(r, self.neg_zero);
        }
        let mut r = self.i(r);
        // Applied last to first, so that the first NaN of `b`, `a`, `c` wins.
        for v in [c.v, a.v, b.v] {
            if !self.never_nan(v) {
                r = self.nan_quieted(v, r);
            }
        }
        V {
            v: r,
            flushed: !lazy,
        }
    }

    /// Lanes where `v` is NaN take `v` quieted, the others `r` (bits).
    pub(super) fn nan_quieted(&mut self, v: Value, r: Value) -> Value {
        let n = self.is_nan(v);
        let quiet = self.splat(QUIET);
        let v = self.i(v);
        let q = self.b.ins().bor(v, quiet);
        self.sel(n, q, r)
    }

    pub(super) fn is_nan(&mut self, a: Value) -> Value {
        let x = self.f(a);
        self.compare(Cmp::F(FloatCC::Unordered), x, x)
    }

    /// `ops::fmax` / `ops::fmin`: a NaN operand yields the other unchanged, ties the first.
    ///
    /// `maxps`/`minps` pick the larger/smaller exactly as `ops` does for non-NaN operands, and
    /// under DAZ they return the flushed operand, as `ops` does: `b > a ? b : a` is written in
    /// the one form Cranelift lowers to `maxps b, a` (`minps b, a` for `b < a ? b : a`); ties
    /// and NaN give the second operand, `a`. The NaN cases are then patched, each only where
    /// it can differ.
    pub(super) fn minmax(&mut self, max: bool, a: V, b: V) -> V {
        let x = self.f(a.v);
        let y = self.f(b.v);
        if self.const_bits.get(&b.v).is_some_and(|&k| {
            let e = k & EXP;
            e != 0 && (e != EXP || k & MANT == 0)
        }) {
            // `b` a constant, normal or infinite: `maxps a, b` (`minps a, b`) alone. A NaN `a`
            // gives `b`, as does a tie, which means equal bits (`b` is not ±0).
            let pick_a = if max {
                self.b.ins().fcmp(FloatCC::LessThan, y, x)
            } else {
                self.b.ins().fcmp(FloatCC::LessThan, x, y)
            };
            let pick_a = self.f(pick_a);
            return Self::flushed(self.b.ins().bitselect(pick_a, x, y));
        }
        // The optimizer folds a select of two equal values (which it may prove equal where
        // this code cannot: equal loads or expressions) to that value, unflushed: one side
        // is flushed here unless one already is.
        let xs = if self.optimize && !a.flushed && !b.flushed {
            self.flush(x)
        } else {
            x
        };
        let lt = if max {
            self.b.ins().fcmp(FloatCC::LessThan, xs, y)
        } else {
            self.b.ins().fcmp(FloatCC::LessThan, y, xs)
        };
        let lt = self.f(lt);
        let mut r = self.b.ins().bitselect(lt, y, xs);
        let (a_num, b_num) = (self.never_nan(a.v), self.never_nan(b.v));
        // b NaN: `a` unflushed, which is `maxps`' flushed `a` unless `a` may be denormal.
        if !b_num && !a.flushed {
            let nb = self.is_nan(y);
            r = self.sel(nb, x, r);
        }
        if !a_num {
            let na = self.is_nan(x);
            r = self.sel(na, y, r);
        }
        V {
            v: r,
            flushed: (a_num || b.flushed) && (b_num || a.flushed),
        }
    }

    /// libm's rounding functions return a NaN argument unchanged (even a signalling one, which
    /// `roundps` would quiet).
    pub(super) fn keep_nan(&mut self, x: Value, r: Value) -> Value {
        let n = self.is_nan(x);
        self.sel(n, x, r)
    }

    /// Denormals to zero of the same sign (`ops::flush`), in the type of `v`: DAZ makes a
    /// denormal compare equal to zero.
    pub(super) fn flush(&mut self, v: Value) -> Value {
        let vf = self.f(v);
        let zero = self.splatf(0);
        let z = self.b.ins().fcmp(FloatCC::Equal, vf, zero);
        let ty = self.b.func.dfg.value_type(v);
        let sign = self.konst(SIGN, ty);
        let s = self.b.ins().band(v, sign);
        self.sel(z, s, v)
    }

    /// `ops::saturate`: `maxps x, 0` (NaN and, under DAZ, denormals give +0), then
    /// `minps _, 1`, in the forms Cranelift lowers to them (see [`Self::minmax`]).
    pub(super) fn saturate(&mut self, v: V) -> Value {
        let x = self.f(v.v);
        let zero = self.splatf(0);
        let one = self.splatf(ONE);
        let gt0 = self.b.ins().fcmp(FloatCC::LessThan, zero, x);
        let gt0 = self.f(gt0);
        let m = self.b.ins().bitselect(gt0, x, zero);
        let lt1 = self.b.ins().fcmp(FloatCC::LessThan, m, one);
        let lt1 = self.f(lt1);
        self.b.ins().bitselect(lt1, m, one)
    }

    pub(super) fn bool_float(&mut self, mask: Value) -> V {
        let one = self.splat(ONE);
        Self::flushed(self.b.ins().band(mask, one))
    }

    /// `cvttps2dq`: truncation, NaN and out of range → `i32::MIN` (`ops::f2i`).
    pub(super) fn f2i(&mut self, v: Value) -> Value {
        let x = self.f(v);
        self.b.ins().x86_cvtt2dq(I32X4, x)
    }

    /// `!ops::eq(x, 0.0)`: true unless x is ±0 or a denormal (NaN is true).
    pub(super) fn float_true(&mut self, x: Value) -> Value {
        let x = self.i(x);
        let exp = self.splat(EXP);
        let e = self.b.ins().band(x, exp);
        let zero = self.splat(0);
        self.b.ins().icmp(IntCC::NotEqual, e, zero)
    }

    /// Lanes of `x` (bits) that are denormal, as a mask.
    pub(super) fn denormal_mask(&mut self, x: Value) -> Value {
        let x = self.i(x);
        let exp = self.splat(EXP);
        let mant = self.splat(MANT);
        let zero = self.splat(0);
        let e = self.b.ins().band(x, exp);
        let ez = self.b.ins().icmp(IntCC::Equal, e, zero);
        let m = self.b.ins().band(x, mant);
        let mnz = self.b.ins().icmp(IntCC::NotEqual, m, zero);
        self.b.ins().band(ez, mnz)
    }
}
