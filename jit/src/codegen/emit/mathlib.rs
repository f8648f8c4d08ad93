//! The math library in vector code (gallivm's `lp_bld_arit` transcendentals): EX2, LG2, POW,
//! SIN and COS as `interp::libm` (glibc's `powf`, `logf`, `sinf`, `cosf`) computes them, two
//! lanes per `f64x2`, for quads whose every lane takes the common path (others call the
//! interpreter's own function per lane, `lane_op`); and, in `llvmpipe` math, Mesa 22.3
//! llvmpipe's polynomial sequences (`opt::lpmath`). Both need the CPU's FMA
//! (`isa::cpu_has_fma`); `alu` picks which one an instruction uses.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, F64X2, I32, I32X4, I64, I64X2, I8X16};
use cranelift_codegen::ir::{ConstantData, InstBuilder, Value};

use super::arith::{EXP, MANT, ONE, SIGN};
use super::{Emitter, V};
use crate::codegen::abi::Address;
use crate::codegen::shims::LaneOp;
use crate::interp::libm;
use crate::ir::Opcode;
use crate::opt::lpmath;

impl Emitter<'_, '_> {
    // ---- vectorised libm (`interp::libm`) --------------------------------------------------

    /// `bits` in both lanes of an `f64x2`.
    fn dconst(&mut self, bits: u64) -> Value {
        let bytes: Vec<u8> = (0..2).flat_map(|_| bits.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(F64X2, c)
    }

    /// Lanes 0, 1 and lanes 2, 3 of an `f32x4` (given as bits) as two `f64x2` (exact).
    fn promote_halves(&mut self, v: Value) -> [Value; 2] {
        let hi = self.lanes(v, [2, 3, 2, 3]);
        [v, hi].map(|h| {
            let f = self.f(h);
            self.b.ins().fvpromote_low(f)
        })
    }

    /// Lanes 0, 1 and lanes 2, 3 of an `i32x4` converted to two `f64x2` (exact).
    fn int_halves(&mut self, v: Value) -> [Value; 2] {
        let hi = self.lanes(v, [2, 3, 2, 3]);
        [v, hi].map(|h| {
            let w = self.b.ins().swiden_low(h);
            self.b.ins().fcvt_from_sint(F64X2, w)
        })
    }

    /// Two `f64x2` rounded to float (as `cvtsd2ss`) into one `f32x4` (bits).
    fn demote_halves(&mut self, h: [Value; 2]) -> Value {
        let [lo, hi] = h.map(|x| {
            let f = self.b.ins().fvdemote(x);
            self.b.ins().bitcast(I8X16, self.le, f)
        });
        let imm: Vec<u8> = (0..8).chain(16..24).collect();
        let imm = self.b.func.dfg.immediates.push(ConstantData::from(imm));
        let v = self.b.ins().shuffle(lo, hi, imm);
        self.i(v)
    }

    /// Per lane `l`, `table[idx[l]]` (a pair of f64) for the 4 lanes of `idx` (`i32x4`, each
    /// < 16): the first and the second elements as `[lanes 0-1, lanes 2-3]` `f64x2` halves.
    fn gather_pairs(&mut self, table: Address, idx: Value) -> [[Value; 2]; 2] {
        let base = self.address(table);
        let four = self.b.ins().iconst(I32, 4);
        let bytes = self.b.ins().ishl(idx, four);
        let pairs: [Value; 4] = std::array::from_fn(|l| {
            let o = self.b.ins().extractlane(bytes, l as u8);
            let o = self.b.ins().uextend(self.ptr, o);
            let a = self.b.ins().iadd(base, o);
            let v = self.b.ins().load(F64X2, self.mf, a, 0);
            self.b.ins().bitcast(I8X16, self.le, v)
        });
        let mut out = [[pairs[0]; 2]; 2];
        for (e, o) in out.iter_mut().enumerate() {
            let imm: Vec<u8> = (8 * e as u8..8 * e as u8 + 8)
                .chain(16 + 8 * e as u8..24 + 8 * e as u8)
                .collect();
            let imm = self.b.func.dfg.immediates.push(ConstantData::from(imm));
            for h in 0..2 {
                let v = self.b.ins().shuffle(pairs[2 * h], pairs[2 * h + 1], imm);
                o[h] = self.b.ins().bitcast(F64X2, self.le, v);
            }
        }
        out
    }

    /// The logarithm reduction of `interp::libm` for positive normal floats `ix` (`i32x4`):
    /// the table index, `k` and `z` (as `f64x2` halves).
    fn log_reduce(&mut self, ix: Value) -> (Value, [Value; 2], [Value; 2]) {
        let off = self.splat(libm::OFF);
        let tmp = self.b.ins().isub(ix, off);
        let s19 = self.b.ins().iconst(I32, 19);
        let i = self.b.ins().ushr(tmp, s19);
        let m15 = self.splat(15);
        let i = self.b.ins().band(i, m15);
        let top_mask = self.splat(0xff80_0000);
        let top = self.b.ins().band(tmp, top_mask);
        let iz = self.b.ins().isub(ix, top);
        let s23 = self.b.ins().iconst(I32, 23);
        let k = self.b.ins().sshr(top, s23);
        let k = self.int_halves(k);
        let z = self.promote_halves(iz);
        (i, k, z)
    }

    /// Lanes whose float is normal, finite and (with `positive`) positive: `i32x4` mask.
    fn normal_lanes(&mut self, v: Value, positive: bool) -> Value {
        // (|v| or v) - 2^-126 below 0x7f000000, unsigned: exponent field in 1..=254.
        let x = if positive {
            v
        } else {
            let abs = self.splat(!SIGN);
            self.b.ins().band(v, abs)
        };
        let min = self.splat(0x0080_0000);
        let d = self.b.ins().isub(x, min);
        let lim = self.splat(0x7f00_0000);
        self.b.ins().icmp(IntCC::UnsignedLessThan, d, lim)
    }

    /// Branches to an inline computation when every lane passes `ok`, else calls `op` per lane
    /// (the interpreter's own function): the result of either.
    fn fast_or_lanes(
        &mut self,
        ok: Value,
        op: LaneOp,
        args: &[Value],
        fast: impl FnOnce(&mut Self) -> Value,
    ) -> V {
        let fast_b = self.b.create_block();
        let slow_b = self.b.create_block();
        let join = self.b.create_block();
        self.b.append_block_param(join, I32X4);
        let all = self.b.ins().vall_true(ok);
        self.b.ins().brif(all, fast_b, &[], slow_b, &[]);
        self.b.seal_block(fast_b);
        self.b.seal_block(slow_b);

        self.b.switch_to_block(slow_b);
        let r = self.lane_call(op, args);
        self.b.ins().jump(join, &[r.into()]);

        self.b.switch_to_block(fast_b);
        let r = fast(self);
        let r = self.i(r);
        self.b.ins().jump(join, &[r.into()]);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        // Lanes of the fast path are flushed; the `ops` functions flush their results too.
        Self::flushed(self.b.block_params(join)[0])
    }

    /// `ops::pow(x, y)` (`x` = None: `ops::ex2(y)`, x = 2) as `interp::libm::powf` computes it,
    /// two lanes per `f64x2`, when every lane has a positive normal `x` and a normal `y` (their
    /// results need no special case: `y * log2(x)` is finite); other quads go per lane.
    pub(super) fn pow_inline(&mut self, x: Option<Value>, y: Value) -> V {
        // A constant normal exponent (`pow(c, 2.4)`, the usual gamma) needs no lane test and
        // is a constant in double precision.
        let y_const = self
            .const_bits
            .get(&y)
            .copied()
            .filter(|&k| (1..=254).contains(&((k >> 23) & 0xff)));
        let x = x.map(|x| self.i(x));
        let y = self.i(y);
        let oky = match y_const {
            Some(_) => None,
            None => Some(self.normal_lanes(y, false)),
        };
        let ok = match (x, oky) {
            (Some(x), oky) => {
                let okx = self.normal_lanes(x, true);
                match oky {
                    Some(oky) => self.b.ins().band(okx, oky),
                    None => okx,
                }
            }
            (None, Some(oky)) => oky,
            (None, None) => self.splat(!0),
        };
        let (op, args) = match x {
            Some(x) => (LaneOp::Pow, vec![x, y]),
            None => (LaneOp::Ex2, vec![y]),
        };
        self.fast_or_lanes(ok, op, &args, |e| {
            let logx = match x {
                Some(x) => e.log2_halves(x),
                None => {
                    let c = e.dconst(libm::powf_log2(2f32.to_bits()).to_bits());
                    [c, c]
                }
            };
            let yd = match y_const {
                Some(k) => {
                    let c = e.dconst(f64::from(f32::from_bits(k)).to_bits());
                    [c, c]
                }
                None => e.promote_halves(y),
            };
            let h = [0, 1].map(|k| {
                let ylogx = e.b.ins().fmul(yd[k], logx[k]);
                e.exp2_half(ylogx)
            });
            let r = e.demote_halves(h);
            // The result flush (`ops::pow`): DAZ reads a denormal as zero.
            let r = e.f(r);
            e.b.ins().fadd(r, e.neg_zero)
        })
    }

    /// `libm::powf_log2` of positive normal floats `ix`, as `f64x2` halves.
    fn log2_halves(&mut self, ix: Value) -> [Value; 2] {
        let a = libm::POWF_LOG2_POLY.map(|c| self.dconst(c));
        let minus_one = self.dconst((-1f64).to_bits());
        let (i, k, z) = self.log_reduce(ix);
        let [invc, logc] = self.gather_pairs(Address::POWF_LOG2_TABLE, i);
        [0, 1].map(|h| {
            let r = self.b.ins().fma(z[h], invc[h], minus_one);
            let y0 = self.b.ins().fadd(logc[h], k[h]);
            let r2 = self.b.ins().fmul(r, r);
            let y = self.b.ins().fma(a[0], r, a[1]);
            let p = self.b.ins().fma(a[2], r, a[3]);
            let r4 = self.b.ins().fmul(r2, r2);
            let q = self.b.ins().fma(a[4], r, y0);
            let q = self.b.ins().fma(p, r2, q);
            self.b.ins().fma(y, r4, q)
        })
    }

    /// `libm::powf`'s `exp2_inline` (sign 0) of `ylogx` (`f64x2`), with its overflow (+inf) and
    /// underflow (0; glibc's denormal results are flushed anyway) bounds applied.
    fn exp2_half(&mut self, ylogx: Value) -> Value {
        let shift = self.dconst(libm::EXP2F_SHIFT);
        let c = libm::EXP2F_POLY.map(|c| self.dconst(c));
        let one = self.dconst(1f64.to_bits());
        let kd = self.b.ins().fadd(ylogx, shift);
        let ki = self.b.ins().bitcast(I64X2, self.le, kd);
        let kd = self.b.ins().fsub(kd, shift);
        let r = self.b.ins().fsub(ylogx, kd);
        let base = self.address(Address::EXP2F_TABLE);
        let mut t = None;
        for l in 0..2u8 {
            let j = self.b.ins().extractlane(ki, l);
            let j = self.b.ins().band_imm_u(j, 31);
            let j = self.b.ins().ishl_imm_u(j, 3);
            let a = self.b.ins().iadd(base, j);
            // SAFETY of the load: `j` < 32 indexes the 32-entry static table.
            let v = self.b.ins().load(I64, self.mf, a, 0);
            t = Some(match t {
                None => self.b.ins().scalar_to_vector(I64X2, v),
                Some(t) => self.b.ins().insertlane(t, v, l),
            });
        }
        let t = t.expect("two lanes");
        let s47 = self.b.ins().iconst(I32, 47);
        let sk = self.b.ins().ishl(ki, s47);
        let t = self.b.ins().iadd(t, sk);
        let s = self.b.ins().bitcast(F64X2, self.le, t);
        let z = self.b.ins().fma(c[0], r, c[1]);
        let r2 = self.b.ins().fmul(r, r);
        let y = self.b.ins().fma(c[2], r, one);
        let y = self.b.ins().fma(z, r2, y);
        let y = self.b.ins().fmul(y, s);
        let of = self.dconst(libm::POWF_OFLOW);
        let over = self.b.ins().fcmp(FloatCC::GreaterThan, ylogx, of);
        let inf = self.dconst(f64::INFINITY.to_bits());
        let y = self.b.ins().bitselect(over, inf, y);
        let uf = self.dconst(libm::POWF_UFLOW);
        let under = self.b.ins().fcmp(FloatCC::LessThanOrEqual, ylogx, uf);
        let zero = self.dconst(0);
        self.b.ins().bitselect(under, zero, y)
    }

    /// `ops::sin(y)` / `ops::cos(y)` as `libm::sinf`/`cosf` compute them, two lanes per `f64x2`,
    /// when every lane is below 120 in magnitude (glibc's `abstop12` test): the tiny, the
    /// unreduced (|y| < pi/4) and the `reduce_fast` paths, chosen per lane; larger arguments,
    /// infinities and NaN send the quad to the per-lane path.
    pub(super) fn sincos_inline(&mut self, y: Value, cos: bool) -> V {
        use libm::sc;
        let y = self.i(y);
        let s20 = self.b.ins().iconst(I32, 20);
        let top = self.b.ins().ushr(y, s20);
        let m = self.splat(0x7ff);
        let top = self.b.ins().band(top, m);
        let lim = |e: &mut Self, t: u32| {
            let c = e.splat(t);
            e.b.ins().icmp(IntCC::UnsignedLessThan, top, c)
        };
        let ok = lim(self, libm::TOP12_120);
        let op = if cos { LaneOp::Cos } else { LaneOp::Sin };
        self.fast_or_lanes(ok, op, &[y], |e| {
            let small = lim(e, libm::TOP12_PIO4);
            let tiny = lim(e, libm::TOP12_TINY);
            let t = libm::SINCOSF_TAB[0];
            let hpi_inv = e.dconst(t[sc::HPI_INV]);
            let hpi = e.dconst(t[sc::HPI]);
            let k = [
                sc::C0,
                sc::C1,
                sc::C2,
                sc::C3,
                sc::C4,
                sc::S1,
                sc::S2,
                sc::S3,
            ]
            .map(|i| e.dconst(t[i]));
            let [c0, c1, c2, c3, c4, s1c, s2c, s3c] = k;
            let two23 = e.dconst((8_388_608f64).to_bits());
            let inv24 = e.dconst((1.0f64 / 16_777_216.0).to_bits());
            // 1.5 * 2^52: adding it puts an integer n (|n| < 2^51, either sign) in the low
            // mantissa bits, as n + 2^51 (so n mod 4 there).
            let two52 = e.dconst((6_755_399_441_055_744f64).to_bits());
            let zero = e.dconst(0);
            let x = e.promote_halves(y);
            let small_hi = e.lanes(small, [2, 3, 2, 3]);
            let small_h = [small, small_hi].map(|m| e.b.ins().swiden_low(m));
            let h = [0, 1].map(|h| {
                let x = x[h];
                // reduce_fast: n = ((int)(x * hpi_inv) + 2^23) >> 24, as exact doubles.
                let r = e.b.ins().fmul(x, hpi_inv);
                let r = e.b.ins().trunc(r);
                let r = e.b.ins().fadd(r, two23);
                let r = e.b.ins().fmul(r, inv24);
                let n = e.b.ins().floor(r);
                let n = e.b.ins().bitselect(small_h[h], zero, n);
                let neg_n = e.b.ins().fneg(n);
                let xr = e.b.ins().fma(neg_n, hpi, x);
                let nb = e.b.ins().fadd(n, two52);
                let nb = e.b.ins().bitcast(I64X2, e.le, nb);
                let one = e.b.ins().iconst(I32, 1);
                let s63 = e.b.ins().iconst(I32, 63);
                let bit0 = e.b.ins().ishl(nb, s63);
                let nb1 = e.b.ins().ushr(nb, one);
                let bit1 = e.b.ins().ishl(nb1, s63);
                // sign[n & 3] is -1 for n & 3 in {1, 2}: multiplying by it flips the sign.
                let flip = e.b.ins().bxor(bit0, bit1);
                let xi = e.b.ins().bitcast(I64X2, e.le, xr);
                let xs = e.b.ins().bxor(xi, flip);
                let xs = e.b.ins().bitcast(F64X2, e.le, xs);
                let x2 = e.b.ins().fmul(xr, xr);
                // Sine polynomial (the same in both table rows).
                let x3 = e.b.ins().fmul(x2, xs);
                let s1 = e.b.ins().fma(x2, s3c, s2c);
                let x7 = e.b.ins().fmul(x2, x3);
                let sp = e.b.ins().fma(x3, s1c, xs);
                let rs = e.b.ins().fma(s1, x7, sp);
                // Cosine polynomial; row 1 (n & 2) has its coefficients negated, which negates
                // the result exactly.
                let x4 = e.b.ins().fmul(x2, x2);
                let cc1 = e.b.ins().fma(x2, c1, c0);
                let cc2 = e.b.ins().fma(x2, c4, c3);
                let x6 = e.b.ins().fmul(x4, x2);
                let cc = e.b.ins().fma(x4, c2, cc1);
                let rc = e.b.ins().fma(x6, cc2, cc);
                let rci = e.b.ins().bitcast(I64X2, e.le, rc);
                let rci = e.b.ins().bxor(rci, bit1);
                let rc = e.b.ins().bitcast(F64X2, e.le, rci);
                // Odd n takes the cosine polynomial for sin, the sine one for cos.
                let zero_i = e.b.ins().bitcast(I64X2, e.le, zero);
                let even = e.b.ins().icmp(IntCC::Equal, bit0, zero_i);
                let (a, b) = if cos { (rc, rs) } else { (rs, rc) };
                let a = e.b.ins().bitcast(I64X2, e.le, a);
                let b = e.b.ins().bitcast(I64X2, e.le, b);
                let r = e.b.ins().bitselect(even, a, b);
                e.b.ins().bitcast(F64X2, e.le, r)
            });
            let r = e.demote_halves(h);
            let r = e.f(r);
            let nz = e.b.ins().fadd(r, e.neg_zero);
            let r = e.i(nz);
            // Tiny arguments: sinf returns y itself (a denormal too, as `ops::sin`), cosf 1.
            let tiny_val = if cos { e.splat(ONE) } else { y };
            e.b.ins().bitselect(tiny, tiny_val, r)
        })
    }

    /// `ops::lg2(x)`: `libm::logf` two lanes per `f64x2` when every lane is positive, normal
    /// and finite, times Mesa's constant; other quads go per lane.
    pub(super) fn lg2_inline(&mut self, x: Value) -> V {
        let x = self.i(x);
        let ok = self.normal_lanes(x, true);
        self.fast_or_lanes(ok, LaneOp::Lg2, &[x], |e| {
            let a = libm::LOGF_POLY.map(|c| e.dconst(c));
            let ln2 = e.dconst(libm::LOGF_LN2);
            let minus_one = e.dconst((-1f64).to_bits());
            let (i, k, z) = e.log_reduce(x);
            let [invc, logc] = e.gather_pairs(Address::LOGF_TABLE, i);
            let h = [0, 1].map(|h| {
                let r = e.b.ins().fma(z[h], invc[h], minus_one);
                let y0 = e.b.ins().fma(k[h], ln2, logc[h]);
                let y = e.b.ins().fma(r, a[1], a[2]);
                let r2 = e.b.ins().fmul(r, r);
                let y = e.b.ins().fma(r2, a[0], y);
                let ry0 = e.b.ins().fadd(r, y0);
                e.b.ins().fma(r2, y, ry0)
            });
            let l = e.demote_halves(h);
            // `ops::lg2` = mul(flush(logf(x)), 1.442695): a logarithm of a normal float is 0 or
            // normal, and the product is flushed like any MUL.
            #[allow(clippy::approx_constant)]
            let c = e.splat(1.442695f32.to_bits());
            e.fbin(Opcode::MUL, Self::flushed(l), Self::flushed(c)).v
        })
    }

    // ---- Mesa 22.3 llvmpipe's EX2, LG2, POW, SIN and COS (`opt::lpmath`) --------------------
    //
    // The same operations as `lpmath::rewrite`'s instruction sequences, in vector instructions:
    // in EX2, LG2 and POW every intermediate is finite and non-NaN for a non-NaN argument (NaN
    // arguments are patched by the final selects, as the sequences do), so the IR's NaN rules
    // never apply (SIN/COS: see `lp_sin_cos`), and intermediates only float arithmetic reads
    // need no flush (DAZ), as in `lazy`.

    /// A gallivm constant (`lpmath::k`) in every lane, as an `f32x4`.
    fn lp_const(&mut self, v: f64) -> Value {
        self.splatf(lpmath::k(v))
    }

    /// `lp_build_polynomial`: even and odd halves in `x`², every step a fused multiply-add.
    fn lp_polynomial(&mut self, x: Value, coeffs: &[f64]) -> Value {
        let x2 = self.b.ins().fmul(x, x);
        let (mut even, mut odd): (Option<Value>, Option<Value>) = (None, None);
        for (i, &c) in coeffs.iter().enumerate().rev() {
            let c = self.lp_const(c);
            let acc = if i % 2 == 0 { &mut even } else { &mut odd };
            *acc = Some(match *acc {
                None => c,
                Some(prev) => self.b.ins().fma(x2, prev, c),
            });
        }
        match (odd, even) {
            (Some(odd), Some(even)) => self.b.ins().fma(odd, x, even),
            (None, Some(even)) => even,
            _ => self.splatf(0),
        }
    }

    /// `lpmath`'s EX2 of `x` (bits): never denormal.
    pub(super) fn lp_exp2(&mut self, x: Value) -> V {
        let x = self.i(x);
        let lo = Self::flushed(self.splatf(lpmath::EXP2_MIN.to_bits()));
        let hi = Self::flushed(self.splatf(lpmath::EXP2_MAX.to_bits()));
        // CLAMP: `maxps`, `minps` with constant bounds (a NaN `x` is patched below).
        let c = self.minmax(
            true,
            V {
                v: x,
                flushed: false,
            },
            lo,
        );
        let c = self.minmax(false, c, hi);
        let c = self.f(c.v);
        let ipart = self.b.ins().floor(c);
        let fpart = self.b.ins().fsub(c, ipart);
        let i = self.b.ins().x86_cvtt2dq(I32X4, ipart);
        let bias = self.splat(127);
        let e = self.b.ins().iadd(i, bias);
        let scale = self.b.ins().ishl_imm_u(e, 23);
        let scale = self.f(scale);
        let p = self.lp_polynomial(fpart, &lpmath::EXP2_POLY);
        let r = self.b.ins().fmul(scale, p);
        Self::flushed(self.nan_quieted(x, r))
    }

    /// `lpmath`'s LG2 of `x` (bits); `zero_case` false leaves ±0 (and denormals) to the
    /// polynomial, as POW's does. Never denormal: the fused `y * p + e` is 0, at least 2^-24
    /// (e = 0, y >= 2^-24), or an integer e != 0 plus a product below 1 that is a multiple of
    /// 2^-69 (y's ulp is at least 2^-47, p's 2^-22), so 0 or at least 2^-69 away from -e.
    pub(super) fn lp_log2(&mut self, x: Value, zero_case: bool) -> Value {
        let x = self.i(x);
        let xf = self.f(x);
        let exp = self.splat(EXP);
        let exp = self.b.ins().band(x, exp);
        let e = self.b.ins().fcvt_from_sint(F32X4, exp);
        // (exp >> 23) - 127: exact, as the sequence's MAD is.
        let scale = self.splatf((1.0f32 / 8_388_608.0).to_bits());
        let minus127 = self.splatf((-127.0f32).to_bits());
        let logexp = self.b.ins().fma(e, scale, minus127);
        let mant = self.splat(MANT);
        let mant = self.b.ins().band(x, mant);
        let one = self.splat(ONE);
        let mant = self.b.ins().bor(mant, one);
        let (mant, one) = (self.f(mant), self.f(one));
        let num = self.b.ins().fsub(mant, one);
        let den = self.b.ins().fadd(mant, one);
        let y = self.b.ins().fdiv(num, den);
        let z = self.b.ins().fmul(y, y);
        let p = self.lp_polynomial(z, &lpmath::LOG2_POLY);
        let r = self.b.ins().fma(y, p, logexp);
        let zero = self.splatf(0);
        let inf = self.splat(f32::INFINITY.to_bits());
        let inff = self.f(inf);
        let nonneg = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, xf, zero);
        let finite = self.b.ins().fcmp(FloatCC::LessThan, xf, inff);
        let (positive, at_zero) = if zero_case {
            let positive = self.b.ins().fcmp(FloatCC::LessThan, zero, xf);
            let nonzero = self.b.ins().fcmp(FloatCC::NotEqual, xf, zero);
            let ninf = self.splat(f32::NEG_INFINITY.to_bits());
            (positive, self.sel(nonzero, inf, ninf))
        } else {
            (nonneg, inf)
        };
        let nan = self.splat(lpmath::NAN_BITS);
        let special = self.sel(nonneg, at_zero, nan);
        let ok = self.b.ins().band(positive, finite);
        self.sel(ok, r, special)
    }

    /// `lpmath`'s POW of `x` (bits) and `y`: never denormal.
    pub(super) fn lp_pow(&mut self, x: Value, y: V) -> V {
        let x = self.i(x);
        let l = self.lp_log2(x, false);
        // MUL(y, l) with the IR's NaN rule (y NaN, or `l` NaN for negative `x`).
        let m = self.fbin_float(
            Opcode::MUL,
            y,
            V {
                v: l,
                flushed: false,
            },
        );
        let r = self.lp_exp2(m);
        let abs = self.splat(!SIGN);
        let ax = self.b.ins().band(x, abs);
        let ax = self.f(ax);
        let zero = self.splatf(0);
        // Unordered `x == 0` is "not 0 < |x|": NaN, ±0 and (DAZ) denormals give 0.
        let nonzero = self.b.ins().fcmp(FloatCC::LessThan, zero, ax);
        let zero = self.splat(0);
        Self::flushed(self.sel(nonzero, r.v, zero))
    }

    /// `lpmath`'s SIN or COS of `a` (bits). Arguments beyond 2^128 / (4/pi) make NaN
    /// intermediates, which the final MIN (NaN gives 1, `ops::fmin`) absorbs as the sequence's
    /// does; infinite and NaN arguments give NaN.
    pub(super) fn lp_sin_cos(&mut self, a: Value, cos: bool) -> V {
        let a = self.i(a);
        let abs = self.splat(!SIGN);
        let x_abs = self.b.ins().band(a, abs);
        let x_absf = self.f(x_abs);
        let fopi = self.lp_const(lpmath::FOPI);
        let scale_y = self.b.ins().fmul(x_absf, fopi);
        let emm2_i = self.b.ins().x86_cvtt2dq(I32X4, scale_y);
        let one = self.splat(1);
        let emm2_add = self.b.ins().iadd(emm2_i, one);
        let not_one = self.splat(!1);
        let emm2_and = self.b.ins().band(emm2_add, not_one);
        let y_2 = self.b.ins().fcvt_from_sint(F32X4, emm2_and);
        let (emm2_2, sign_bit) = if cos {
            let minus_two = self.splat((-2i32) as u32);
            let emm2_2 = self.b.ins().iadd(emm2_and, minus_two);
            let four = self.splat(4);
            let four = self.b.ins().band_not(four, emm2_2);
            (emm2_2, self.b.ins().ishl_imm_u(four, 29))
        } else {
            let shifted = self.b.ins().ishl_imm_u(emm2_add, 29);
            let x = self.b.ins().bxor(a, shifted);
            let sign = self.splat(SIGN);
            (emm2_and, self.b.ins().band(x, sign))
        };
        let two = self.splat(2);
        let emm2_3 = self.b.ins().band(emm2_2, two);
        let zero = self.splat(0);
        let poly_mask = self.b.ins().icmp(IntCC::Equal, emm2_3, zero);
        let [dp1, dp2, dp3] = [lpmath::DP1, lpmath::DP2, lpmath::DP3].map(|v| self.lp_const(v));
        let x_1 = self.b.ins().fma(y_2, dp1, x_absf);
        let x_2 = self.b.ins().fma(y_2, dp2, x_1);
        let x_3 = self.b.ins().fma(y_2, dp3, x_2);
        let z = self.b.ins().fmul(x_3, x_3);
        let [c0, c1, c2] = lpmath::COSCOF.map(|v| self.lp_const(v));
        let y_4 = self.b.ins().fma(z, c0, c1);
        let y_6 = self.b.ins().fma(y_4, z, c2);
        let y_7 = self.b.ins().fmul(y_6, z);
        let y_8 = self.b.ins().fmul(y_7, z);
        let half = self.lp_const(0.5);
        let tmp = self.b.ins().fmul(z, half);
        let y_9 = self.b.ins().fsub(y_8, tmp);
        let onef = self.lp_const(1.0);
        let y_10 = self.b.ins().fadd(y_9, onef);
        let [s0, s1, s2] = lpmath::SINCOF.map(|v| self.lp_const(v));
        let y2_4 = self.b.ins().fma(z, s0, s1);
        let y2_6 = self.b.ins().fma(y2_4, z, s2);
        let y2_7 = self.b.ins().fmul(y2_6, z);
        let y2_9 = self.b.ins().fma(y2_7, x_3, x_3);
        let combined = self.sel(poly_mask, y2_9, y_10);
        let combined = self.i(combined);
        let signed = self.b.ins().bxor(combined, sign_bit);
        let one = Self::flushed(self.splatf(ONE));
        let minus_one = Self::flushed(self.splatf(ONE | SIGN));
        let r = self.minmax(
            false,
            V {
                v: signed,
                flushed: false,
            },
            one,
        );
        let r = self.minmax(true, r, minus_one);
        let exp = self.splat(EXP);
        let e = self.b.ins().band(a, exp);
        let finite = self.b.ins().icmp(IntCC::NotEqual, e, exp);
        let nan = self.splat(lpmath::NAN_BITS);
        Self::flushed(self.sel(finite, r.v, nan))
    }
}
