//! Math builtins TGSI has no instruction for, expanded exactly as Mesa 22.3 expands them for
//! softpipe (the GLSL builtin definitions after NIR, as `nir_to_tgsi` prints them), so that the
//! same shader computes the same bits here and on a Mesa driver:
//!
//! - `asin`/`acos`: the GLSL builtin's polynomial
//!   `sign(x) * (pi/2 - sqrt(1 - |x|) * (pi/2 + |x| * (pi/4 - 1 + |x| * (p0 + |x| * p1))))`
//!   with (p0, p1) = (0.086566724, -0.03102955) for asin and (0.08132463, -0.02363318) for acos
//!   (`acos = pi/2 - that`).
//! - `sinh`/`cosh`/`tanh`: `exp` as `EX2(x * log2 e)`; `tanh` clamps x to [-10, 10] and divides
//!   with `DIV`; `asinh`/`acosh`/`atanh` through `LG2(…) * ln 2` (`atanh`: `* ln 2 / 2`).
//! - `reflect`: `I - (dot(N, I) * 2) * N`; `refract` and `faceForward` as the GLSL builtins.
//! - `determinant`, `inverse`: the cofactor expansions of Mesa's GLSL builtins (GLM's
//!   `SubFactor` form for 4x4), the adjugate divided by the determinant with `DIV`.
//! - `frexp` through the exponent bits (`ISHR |x| >> 23`, bias -126, mantissa or-ed with 0.5),
//!   `ldexp` as `LDEXP`, `modf` as `TRUNC` and a subtraction.
//! - `pack*`/`unpack*`: unorm/snorm scale, `ROUND`, `F2U`/`F2I`, `BFI`, and `UBFE`/`IBFE`,
//!   `U2F`/`I2F`, `DIV` back; the 16-bit float pair is Mesa's integer f32→f16 conversion
//!   (round to nearest even: NaN → 0x7fff, |x| < 2^-14 → `ROUND(|x| * 2^24)`, otherwise the
//!   rebiased exponent plus `ROUND(mantissa / 8192)`, |x| ≥ 65536 → infinity) and its inverse.
//!   Mesa branches between the cases with `UIF`; here they are selected with `UCMP`, which gives
//!   the same bits because every case is computed without side effects.

use naga::MathFunction as M;

use super::builder::{abs, neg, s, Slot};
use super::{Lowerer, Value, R};
use crate::ir::Opcode;

const LOG2_E: f32 = std::f32::consts::LOG2_E;
const LN_2: f32 = std::f32::consts::LN_2;
const HALF_LN_2: f32 = 0.346_573_6;
const FRAC_PI_2: f32 = std::f32::consts::FRAC_PI_2;
/// pi/4 - 1 as Mesa computes it in single precision.
const PI_4_MINUS_1: f32 = -0.214_601_81;

fn dp_op(n: usize) -> Opcode {
    match n {
        2 => Opcode::DP2,
        3 => Opcode::DP3,
        _ => Opcode::DP4,
    }
}

impl<'a> Lowerer<'a> {
    fn dot(&mut self, x: &[Slot], y: &[Slot]) -> Slot {
        if x.len() == 1 {
            return self.b.op(Opcode::MUL, 1, &[s(x), s(y)])[0];
        }
        self.b.reduce(dp_op(x.len()), &[s(x), s(y)])
    }

    /// sign(x) and pi/2 - sqrt(1 - |x|) * poly(|x|): the shared core of `asin` and `acos`.
    fn asin_core(&mut self, x: &[Slot], p0: f32, p1: f32) -> (Vec<Slot>, Vec<Slot>) {
        let n = x.len();
        let b = &mut self.b;
        let sg = b.op(Opcode::SSG, n, &[s(x)]);
        let ax = b.op(Opcode::MOV, n, &[abs(x)]);
        let one = b.immf(1.0);
        let t = b.op(Opcode::ADD, n, &[s(&[one]), neg_abs(x)]);
        let sq = b.op(Opcode::SQRT, n, &[s(&t)]);
        let (k1, k0) = (b.immf(p1), b.immf(p0));
        let p = b.op(Opcode::MAD, n, &[s(&ax), s(&[k1]), s(&[k0])]);
        let k = b.immf(PI_4_MINUS_1);
        let p = b.op(Opcode::MAD, n, &[s(&ax), s(&p), s(&[k])]);
        let half_pi = b.immf(FRAC_PI_2);
        let p = b.op(Opcode::MAD, n, &[s(&ax), s(&p), s(&[half_pi])]);
        let r = b.op(Opcode::MAD, n, &[neg(&sq), s(&p), s(&[half_pi])]);
        (sg, r)
    }

    /// e^x and e^-x as `EX2(x * log2 e)` and `EX2(-(x * log2 e))`.
    fn exp_pair(&mut self, x: &[Slot]) -> (Vec<Slot>, Vec<Slot>) {
        let n = x.len();
        let k = self.b.immf(LOG2_E);
        let e = self.b.op(Opcode::MUL, n, &[s(x), s(&[k])]);
        let a = self.b.op(Opcode::EX2, n, &[s(&e)]);
        let b = self.b.op(Opcode::EX2, n, &[neg(&e)]);
        (a, b)
    }

    /// The float math builtins of this module on scalar/vector operands, or `None` for the
    /// functions it does not handle.
    pub(super) fn extra_math(
        &mut self,
        fun: M,
        x: &[Slot],
        y: &[Slot],
        z: &[Slot],
    ) -> R<Option<Value>> {
        let n = x.len();
        let r = match fun {
            M::Asin | M::Acos => {
                let (p0, p1) = if fun == M::Asin {
                    (0.086_566_724, -0.031_029_55)
                } else {
                    (0.081_324_63, -0.023_633_18)
                };
                let (sg, r) = self.asin_core(x, p0, p1);
                if fun == M::Asin {
                    self.b.op(Opcode::MUL, n, &[s(&sg), s(&r)])
                } else {
                    let half_pi = self.b.immf(FRAC_PI_2);
                    self.b.op(Opcode::MAD, n, &[neg(&sg), s(&r), s(&[half_pi])])
                }
            }
            M::Sinh | M::Cosh => {
                let (a, b) = self.exp_pair(x);
                let d = if fun == M::Sinh {
                    self.b.op(Opcode::ADD, n, &[s(&a), neg(&b)])
                } else {
                    self.b.op(Opcode::ADD, n, &[s(&a), s(&b)])
                };
                let half = self.b.immf(0.5);
                self.b.op(Opcode::MUL, n, &[s(&[half]), s(&d)])
            }
            M::Tanh => {
                let (lo, hi) = (self.b.immf(-10.0), self.b.immf(10.0));
                let c = self.b.op(Opcode::MAX, n, &[s(x), s(&[lo])]);
                let c = self.b.op(Opcode::MIN, n, &[s(&c), s(&[hi])]);
                let (a, b) = self.exp_pair(&c);
                let num = self.b.op(Opcode::ADD, n, &[s(&a), neg(&b)]);
                let den = self.b.op(Opcode::ADD, n, &[s(&a), s(&b)]);
                self.b.op(Opcode::DIV, n, &[s(&num), s(&den)])
            }
            M::Asinh | M::Acosh => {
                let one = self.b.immf(if fun == M::Asinh { 1.0 } else { -1.0 });
                let t = self.b.op(Opcode::MAD, n, &[s(x), s(x), s(&[one])]);
                let sq = self.b.op(Opcode::SQRT, n, &[s(&t)]);
                let base = if fun == M::Asinh { abs(x) } else { s(x) };
                let u = self.b.op(Opcode::ADD, n, &[base, s(&sq)]);
                let l = self.b.op(Opcode::LG2, n, &[s(&u)]);
                let k = self.b.immf(LN_2);
                let l = self.b.op(Opcode::MUL, n, &[s(&l), s(&[k])]);
                if fun == M::Asinh {
                    let sg = self.b.op(Opcode::SSG, n, &[s(x)]);
                    self.b.op(Opcode::MUL, n, &[s(&sg), s(&l)])
                } else {
                    l
                }
            }
            M::Atanh => {
                let one = self.b.immf(1.0);
                let a = self.b.op(Opcode::ADD, n, &[s(&[one]), s(x)]);
                let b = self.b.op(Opcode::ADD, n, &[s(&[one]), neg(x)]);
                let d = self.b.op(Opcode::DIV, n, &[s(&a), s(&b)]);
                let l = self.b.op(Opcode::LG2, n, &[s(&d)]);
                let k = self.b.immf(HALF_LN_2);
                self.b.op(Opcode::MUL, n, &[s(&[k]), s(&l)])
            }
            M::Reflect => {
                // reflect(I = x, N = y).
                let d = self.dot(y, x);
                let two = self.b.immf(2.0);
                let t = self.b.op(Opcode::MUL, n, &[s(&[d]), s(&[two])]);
                self.b.op(Opcode::MAD, n, &[neg(&t), s(y), s(x)])
            }
            M::Refract => {
                // refract(I = x, N = y, eta = z).
                let d = self.dot(y, x);
                let one = self.b.immf(1.0);
                let k = self.b.op(Opcode::MAD, 1, &[neg(&[d]), s(&[d]), s(&[one])]);
                let k = self.b.op(Opcode::MUL, 1, &[s(&z[..1]), s(&k)]);
                let k = self.b.op(Opcode::MAD, 1, &[neg(&z[..1]), s(&k), s(&[one])]);
                let sq = self.b.op(Opcode::SQRT, 1, &[s(&k)]);
                let t = self.b.op(Opcode::MAD, 1, &[s(&z[..1]), s(&[d]), s(&sq)]);
                let u = self.b.op(Opcode::MUL, n, &[s(&t), s(y)]);
                let v = self.b.op(Opcode::MAD, n, &[s(&z[..1]), s(x), neg(&u)]);
                let zero = self.b.immf(0.0);
                let c = self.b.op(Opcode::FSLT, 1, &[s(&k), s(&[zero])]);
                self.b.op(Opcode::UCMP, n, &[s(&c), s(&[zero]), s(&v)])
            }
            M::FaceForward => {
                // faceForward(N = x, I = y, Nref = z): N where dot(Nref, I) < 0, else -N.
                let d = self.dot(z, y);
                let negn = self.b.op(Opcode::MOV, n, &[neg(x)]);
                let zero = self.b.immf(0.0);
                let c = self.b.op(Opcode::FSLT, 1, &[s(&[d]), s(&[zero])]);
                self.b.op(Opcode::UCMP, n, &[s(&c), s(x), s(&negn)])
            }
            M::Outer => {
                let cols = y
                    .iter()
                    .map(|&c| Value::V(self.b.op(Opcode::MUL, n, &[s(x), s(&[c])])))
                    .collect();
                return Ok(Some(Value::C(cols)));
            }
            M::Modf => {
                let whole = self.b.op(Opcode::TRUNC, n, &[s(x)]);
                let fract = self.b.op(Opcode::ADD, n, &[s(x), neg(&whole)]);
                return Ok(Some(Value::C(vec![Value::V(fract), Value::V(whole)])));
            }
            M::Frexp => {
                let (e, m) = self.frexp(x);
                return Ok(Some(Value::C(vec![Value::V(m), Value::V(e)])));
            }
            M::Ldexp => self.b.op(Opcode::LDEXP, n, &[s(x), s(y)]),
            M::Pack4x8unorm | M::Pack4x8snorm | M::Pack2x16unorm | M::Pack2x16snorm => {
                vec![self.pack_norm(fun, x)]
            }
            M::Unpack4x8unorm | M::Unpack4x8snorm | M::Unpack2x16unorm | M::Unpack2x16snorm => {
                self.unpack_norm(fun, x[0])
            }
            M::Pack2x16float => {
                let lo = self.f32_to_f16(&x[..1])[0];
                let hi = self.f32_to_f16(&x[1..2])[0];
                let sixteen = self.b.imm(16);
                let hi = self.b.op(Opcode::SHL, 1, &[s(&[hi]), s(&[sixteen])]);
                self.b.op(Opcode::OR, 1, &[s(&hi), s(&[lo])])
            }
            M::Unpack2x16float => {
                let mask = self.b.imm(0xffff);
                let sixteen = self.b.imm(16);
                let lo = self.b.op(Opcode::AND, 1, &[s(&x[..1]), s(&[mask])])[0];
                let hi = self.b.op(Opcode::USHR, 1, &[s(&x[..1]), s(&[sixteen])])[0];
                self.f16_to_f32(&[lo, hi])
            }
            M::QuantizeToF16 => {
                let h = self.f32_to_f16(x);
                self.f16_to_f32(&h)
            }
            M::CountLeadingZeros => {
                // 31 - UMSB(x); UMSB(0) = -1 gives 32.
                let m = self.b.op(Opcode::UMSB, n, &[s(x)]);
                let k = self.b.imm(31);
                self.b.op(Opcode::UADD, n, &[s(&[k]), neg(&m)])
            }
            M::CountTrailingZeros => {
                // LSB(0) = -1 (0xffffffff) becomes 32.
                let l = self.b.op(Opcode::LSB, n, &[s(x)]);
                let k = self.b.imm(32);
                self.b.op(Opcode::UMIN, n, &[s(&l), s(&[k])])
            }
            _ => return Ok(None),
        };
        Ok(Some(Value::V(r)))
    }

    /// frexp: (exponent, mantissa in [0.5, 1) with x's sign); 0 gives (0, ±0).
    fn frexp(&mut self, x: &[Slot]) -> (Vec<Slot>, Vec<Slot>) {
        let n = x.len();
        let b = &mut self.b;
        let ax = b.op(Opcode::MOV, n, &[abs(x)]);
        let k23 = b.imm(23);
        let e = b.op(Opcode::ISHR, n, &[s(&ax), s(&[k23])]);
        let zero = b.imm(0);
        let nz = b.op(Opcode::FSNE, n, &[abs(x), s(&[zero])]);
        let bias = b.imm((-126i32) as u32);
        let half = b.immf(0.5);
        let adj = b.op(Opcode::UCMP, n, &[s(&nz), s(&[bias]), s(&[zero])]);
        let or = b.op(Opcode::UCMP, n, &[s(&nz), s(&[half]), s(&[zero])]);
        let e = b.op(Opcode::UADD, n, &[s(&e), s(&adj)]);
        let mask = b.imm(0x807f_ffff);
        let m = b.op(Opcode::AND, n, &[s(x), s(&[mask])]);
        let m = b.op(Opcode::OR, n, &[s(&m), s(&or)]);
        (e, m)
    }

    fn pack_norm(&mut self, fun: M, x: &[Slot]) -> Slot {
        let n = x.len();
        let snorm = matches!(fun, M::Pack4x8snorm | M::Pack2x16snorm);
        let bits: u32 = if n == 4 { 8 } else { 16 };
        let scale = ((1u32 << (bits - u32::from(snorm))) - 1) as f32;
        let b = &mut self.b;
        let c = if snorm {
            let (lo, hi) = (b.immf(-1.0), b.immf(1.0));
            let c = b.op(Opcode::MAX, n, &[s(x), s(&[lo])]);
            b.op(Opcode::MIN, n, &[s(&c), s(&[hi])])
        } else {
            b.op_sat(Opcode::MOV, n, &[s(x)])
        };
        let k = b.immf(scale);
        let c = b.op(Opcode::MUL, n, &[s(&c), s(&[k])]);
        let c = b.op(Opcode::ROUND, n, &[s(&c)]);
        let c = b.op(if snorm { Opcode::F2I } else { Opcode::F2U }, n, &[s(&c)]);
        let mask = b.imm((1u32 << bits) - 1);
        let mut acc = b.op(Opcode::AND, 1, &[s(&c[..1]), s(&[mask])])[0];
        let width = b.imm(bits);
        for (i, &comp) in c.iter().enumerate().skip(1) {
            let off = b.imm(bits * i as u32);
            acc = b.op(
                Opcode::BFI,
                1,
                &[s(&[acc]), s(&[comp]), s(&[off]), s(&[width])],
            )[0];
        }
        acc
    }

    fn unpack_norm(&mut self, fun: M, v: Slot) -> Vec<Slot> {
        let snorm = matches!(fun, M::Unpack4x8snorm | M::Unpack2x16snorm);
        let (count, bits): (u32, u32) = if matches!(fun, M::Unpack4x8unorm | M::Unpack4x8snorm) {
            (4, 8)
        } else {
            (2, 16)
        };
        let scale = ((1u32 << (bits - u32::from(snorm))) - 1) as f32;
        let b = &mut self.b;
        let width = b.imm(bits);
        let fields: Vec<Slot> = (0..count)
            .map(|i| {
                let off = b.imm(bits * i);
                let o = if snorm { Opcode::IBFE } else { Opcode::UBFE };
                b.op(o, 1, &[s(&[v]), s(&[off]), s(&[width])])[0]
            })
            .collect();
        let f = b.op(
            if snorm { Opcode::I2F } else { Opcode::U2F },
            count as usize,
            &[s(&fields)],
        );
        let k = b.immf(scale);
        let r = b.op(Opcode::DIV, count as usize, &[s(&f), s(&[k])]);
        if snorm {
            let (lo, hi) = (b.immf(-1.0), b.immf(1.0));
            let r = b.op(Opcode::MAX, count as usize, &[s(&r), s(&[lo])]);
            b.op(Opcode::MIN, count as usize, &[s(&r), s(&[hi])])
        } else {
            r
        }
    }

    /// Per component: the f16 bits of f32 `x` (round to nearest even) in the low 16 bits.
    fn f32_to_f16(&mut self, x: &[Slot]) -> Vec<Slot> {
        let n = x.len();
        let b = &mut self.b;
        let (emask, mmask) = (b.imm(0x7f80_0000), b.imm(0x007f_ffff));
        let e = b.op(Opcode::AND, n, &[s(x), s(&[emask])]);
        let m = b.op(Opcode::AND, n, &[s(x), s(&[mmask])]);
        let zero = b.imm(0);
        let m_nz = b.op(Opcode::USNE, n, &[s(&m), s(&[zero])]);
        let e_max = b.op(Opcode::USEQ, n, &[s(&e), s(&[emask])]);
        let nan = b.op(Opcode::AND, n, &[s(&e_max), s(&m_nz)]);
        // |x| < 2^-14: a half denormal (or zero).
        let (min_normal, overflow) = (b.imm(0x3880_0000), b.imm(0x4780_0000));
        let small = b.op(Opcode::USLT, n, &[s(&e), s(&[min_normal])]);
        let in_range = b.op(Opcode::USLT, n, &[s(&e), s(&[overflow])]);
        let k24 = b.imm(0x4b80_0000);
        let d = b.op(Opcode::MUL, n, &[abs(x), s(&[k24])]);
        let d = b.op(Opcode::ROUND, n, &[s(&d)]);
        let d = b.op(Opcode::F2U, n, &[s(&d)]);
        let rebias = b.imm(0xc800_0000);
        let h = b.op(Opcode::UADD, n, &[s(&e), s(&[rebias])]);
        let k13 = b.imm(13);
        let h = b.op(Opcode::USHR, n, &[s(&h), s(&[k13])]);
        let mf = b.op(Opcode::U2F, n, &[s(&m)]);
        let k8192 = b.imm(0x4600_0000);
        let mf = b.op(Opcode::DIV, n, &[s(&mf), s(&[k8192])]);
        let mf = b.op(Opcode::ROUND, n, &[s(&mf)]);
        let mf = b.op(Opcode::F2U, n, &[s(&mf)]);
        let h = b.op(Opcode::UADD, n, &[s(&h), s(&mf)]);
        let inf = b.imm(0x7c00);
        let h = b.op(Opcode::UCMP, n, &[s(&in_range), s(&h), s(&[inf])]);
        let h = b.op(Opcode::UCMP, n, &[s(&small), s(&d), s(&h)]);
        let qnan = b.imm(0x7fff);
        let h = b.op(Opcode::UCMP, n, &[s(&nan), s(&[qnan]), s(&h)]);
        let smask = b.imm(0x8000_0000);
        let sign = b.op(Opcode::AND, n, &[s(x), s(&[smask])]);
        let k16 = b.imm(16);
        let sign = b.op(Opcode::USHR, n, &[s(&sign), s(&[k16])]);
        b.op(Opcode::OR, n, &[s(&h), s(&sign)])
    }

    /// Per component: the f32 value of the f16 bits in the low 16 bits of `h`.
    fn f16_to_f32(&mut self, h: &[Slot]) -> Vec<Slot> {
        let n = h.len();
        let b = &mut self.b;
        let (emask, mmask) = (b.imm(0x7c00), b.imm(0x3ff));
        let e = b.op(Opcode::AND, n, &[s(h), s(&[emask])]);
        let m = b.op(Opcode::AND, n, &[s(h), s(&[mmask])]);
        let mf = b.op(Opcode::U2F, n, &[s(&m)]);
        let k24 = b.imm(0x4b80_0000);
        let denorm = b.op(Opcode::DIV, n, &[s(&mf), s(&[k24])]);
        let rebias = b.imm(0x1c000);
        let normal = b.op(Opcode::UADD, n, &[s(&e), s(&[rebias])]);
        let normal = b.op(Opcode::OR, n, &[s(&normal), s(&m)]);
        let k13 = b.imm(13);
        let normal = b.op(Opcode::SHL, n, &[s(&normal), s(&[k13])]);
        let zero = b.imm(0);
        let e_zero = b.op(Opcode::USEQ, n, &[s(&e), s(&[zero])]);
        let m_zero = b.op(Opcode::USEQ, n, &[s(&m), s(&[zero])]);
        let (inf, nan) = (b.imm(0x7f80_0000), b.imm(0x7fff_ffff));
        let special = b.op(Opcode::UCMP, n, &[s(&m_zero), s(&[inf]), s(&[nan])]);
        let finite = b.op(Opcode::USLT, n, &[s(&e), s(&[emask])]);
        let r = b.op(Opcode::UCMP, n, &[s(&finite), s(&normal), s(&special)]);
        let r = b.op(Opcode::UCMP, n, &[s(&e_zero), s(&denorm), s(&r)]);
        let smask = b.imm(0x8000);
        let sign = b.op(Opcode::AND, n, &[s(h), s(&[smask])]);
        let k16 = b.imm(16);
        let sign = b.op(Opcode::SHL, n, &[s(&sign), s(&[k16])]);
        b.op(Opcode::OR, n, &[s(&r), s(&sign)])
    }

    /// The determinant of a square float matrix given as columns, as Mesa's GLSL builtin.
    pub(super) fn determinant(&mut self, m: &[Vec<Slot>]) -> R<Slot> {
        Ok(match m.len() {
            2 => self.diff_of_products(m[0][0], m[1][1], m[1][0], m[0][1]),
            3 => {
                let f1 = self.diff_of_products(m[1][1], m[2][2], m[1][2], m[2][1]);
                let f2 = self.diff_of_products(m[1][0], m[2][2], m[1][2], m[2][0]);
                let f3 = self.diff_of_products(m[1][0], m[2][1], m[1][1], m[2][0]);
                self.expand3(m[0][0], f1, m[0][1], f2, m[0][2], f3)
            }
            4 => {
                let sf = self.sub_factors(m);
                let adj0 = self.adjugate4_row0(m, &sf);
                self.b.reduce(Opcode::DP4, &[s(&m[0]), s(&adj0)])
            }
            _ => return Err(self.err("determinant of a non-square matrix")),
        })
    }

    /// The inverse of a square float matrix given as columns, as Mesa's GLSL builtin.
    pub(super) fn inverse(&mut self, m: &[Vec<Slot>]) -> R<Value> {
        let (adj, det): (Vec<Vec<Slot>>, Slot) = match m.len() {
            2 => {
                let n01 = self.b.op(Opcode::MOV, 1, &[neg(&[m[0][1]])])[0];
                let n10 = self.b.op(Opcode::MOV, 1, &[neg(&[m[1][0]])])[0];
                let det = self.diff_of_products(m[0][0], m[1][1], m[1][0], m[0][1]);
                (vec![vec![m[1][1], n01], vec![n10, m[0][0]]], det)
            }
            3 => {
                let e = |c: usize, r: usize| m[c][r];
                let dp = |l: &mut Self,
                          a: (usize, usize),
                          b: (usize, usize),
                          c: (usize, usize),
                          d: (usize, usize),
                          negate: bool| {
                    let v = l.diff_of_products(e(a.0, a.1), e(b.0, b.1), e(c.0, c.1), e(d.0, d.1));
                    if negate {
                        l.b.op(Opcode::MOV, 1, &[neg(&[v])])[0]
                    } else {
                        v
                    }
                };
                let a0x = dp(self, (1, 1), (2, 2), (2, 1), (1, 2), false);
                let a1x = dp(self, (1, 0), (2, 2), (2, 0), (1, 2), true);
                let a2x = dp(self, (1, 0), (2, 1), (2, 0), (1, 1), false);
                let a0y = dp(self, (0, 1), (2, 2), (2, 1), (0, 2), true);
                let a1y = dp(self, (0, 0), (2, 2), (2, 0), (0, 2), false);
                let a2y = dp(self, (0, 0), (2, 1), (2, 0), (0, 1), true);
                let a0z = dp(self, (0, 1), (1, 2), (1, 1), (0, 2), false);
                let a1z = dp(self, (0, 0), (1, 2), (1, 0), (0, 2), true);
                let a2z = dp(self, (0, 0), (1, 1), (1, 0), (0, 1), false);
                let det = self.determinant(m)?;
                (
                    vec![
                        vec![a0x, a0y, a0z],
                        vec![a1x, a1y, a1z],
                        vec![a2x, a2y, a2z],
                    ],
                    det,
                )
            }
            4 => {
                let sf = self.sub_factors(m);
                let e = |c: usize, r: usize| m[c][r];
                // Row r of the adjugate from column `c` of m and three sub-factors, with the
                // sign of the cofactor.
                let term = |l: &mut Self, k: [(usize, usize); 3], f: [usize; 3], negate: bool| {
                    let a =
                        l.b.op(Opcode::MUL, 1, &[s(&[e(k[0].0, k[0].1)]), s(&[sf[f[0]]])]);
                    let b =
                        l.b.op(Opcode::MUL, 1, &[s(&[e(k[1].0, k[1].1)]), s(&[sf[f[1]]])]);
                    let d = l.b.op(Opcode::ADD, 1, &[s(&a), neg(&b)]);
                    let c =
                        l.b.op(Opcode::MUL, 1, &[s(&[e(k[2].0, k[2].1)]), s(&[sf[f[2]]])]);
                    let r = l.b.op(Opcode::ADD, 1, &[s(&d), s(&c)])[0];
                    if negate {
                        l.b.op(Opcode::MOV, 1, &[neg(&[r])])[0]
                    } else {
                        r
                    }
                };
                let row0 = self.adjugate4_row0(m, &sf);
                let a0y = term(self, [(0, 1), (0, 2), (0, 3)], [0, 1, 2], true);
                let a1y = term(self, [(0, 0), (0, 2), (0, 3)], [0, 3, 4], false);
                let a2y = term(self, [(0, 0), (0, 1), (0, 3)], [1, 3, 5], true);
                let a3y = term(self, [(0, 0), (0, 1), (0, 2)], [2, 4, 5], false);
                let a0z = term(self, [(0, 1), (0, 2), (0, 3)], [6, 7, 8], false);
                let a1z = term(self, [(0, 0), (0, 2), (0, 3)], [6, 9, 10], true);
                let a2z = term(self, [(0, 0), (0, 1), (0, 3)], [11, 9, 12], false);
                let a3z = term(self, [(0, 0), (0, 1), (0, 2)], [8, 10, 12], true);
                let a0w = term(self, [(0, 1), (0, 2), (0, 3)], [13, 14, 15], true);
                let a1w = term(self, [(0, 0), (0, 2), (0, 3)], [13, 16, 17], false);
                let a2w = term(self, [(0, 0), (0, 1), (0, 3)], [14, 16, 18], true);
                let a3w = term(self, [(0, 0), (0, 1), (0, 2)], [15, 17, 18], false);
                // det = m0x * adj0x + m0y * adj1x + m0z * adj2x + m0w * adj3x, left to right.
                let mut det = self.b.op(Opcode::MUL, 1, &[s(&[m[0][0]]), s(&[row0[0]])])[0];
                for i in 1..4 {
                    det = self
                        .b
                        .op(Opcode::MAD, 1, &[s(&[m[0][i]]), s(&[row0[i]]), s(&[det])])[0];
                }
                (
                    vec![
                        vec![row0[0], a0y, a0z, a0w],
                        vec![row0[1], a1y, a1z, a1w],
                        vec![row0[2], a2y, a2z, a2w],
                        vec![row0[3], a3y, a3z, a3w],
                    ],
                    det,
                )
            }
            _ => return Err(self.err("inverse of a non-square matrix")),
        };
        let cols = adj
            .iter()
            .map(|c| Value::V(self.b.op(Opcode::DIV, c.len(), &[s(c), s(&[det])])))
            .collect();
        Ok(Value::C(cols))
    }

    /// a * b - c * d with each product rounded (MUL, then MAD with the negated product).
    fn diff_of_products(&mut self, a: Slot, b: Slot, c: Slot, d: Slot) -> Slot {
        let t = self.b.op(Opcode::MUL, 1, &[s(&[c]), s(&[d])]);
        self.b.op(Opcode::MAD, 1, &[s(&[a]), s(&[b]), neg(&t)])[0]
    }

    /// a * f1 - b * f2 + c * f3, left to right.
    fn expand3(&mut self, a: Slot, f1: Slot, b: Slot, f2: Slot, c: Slot, f3: Slot) -> Slot {
        let d = self.diff_of_products(a, f1, b, f2);
        self.b.op(Opcode::MAD, 1, &[s(&[c]), s(&[f3]), s(&[d])])[0]
    }

    /// GLM's `SubFactor00..18` of a 4x4 matrix (columns).
    fn sub_factors(&mut self, m: &[Vec<Slot>]) -> Vec<Slot> {
        // (column a, column b, row p, row q): m[a][p] * m[b][q] - m[b][p] * m[a][q].
        const SF: [(usize, usize, usize, usize); 19] = [
            (2, 3, 2, 3),
            (2, 3, 1, 3),
            (2, 3, 1, 2),
            (2, 3, 0, 3),
            (2, 3, 0, 2),
            (2, 3, 0, 1),
            (1, 3, 2, 3),
            (1, 3, 1, 3),
            (1, 3, 1, 2),
            (1, 3, 0, 3),
            (1, 3, 0, 2),
            (1, 3, 1, 3),
            (1, 3, 0, 1),
            (1, 2, 2, 3),
            (1, 2, 1, 3),
            (1, 2, 1, 2),
            (1, 2, 0, 3),
            (1, 2, 0, 2),
            (1, 2, 0, 1),
        ];
        SF.iter()
            .map(|&(a, b, p, q)| self.diff_of_products(m[a][p], m[b][q], m[b][p], m[a][q]))
            .collect()
    }

    /// Row 0 of the adjugate (`adj[c].x` for c = 0..3), from column 1 and the sub-factors.
    fn adjugate4_row0(&mut self, m: &[Vec<Slot>], sf: &[Slot]) -> Vec<Slot> {
        let c1 = &m[1];
        let rows: [([usize; 3], [usize; 3], bool); 4] = [
            ([1, 2, 3], [0, 1, 2], false),
            ([0, 2, 3], [0, 3, 4], true),
            ([0, 1, 3], [1, 3, 5], false),
            ([0, 1, 2], [2, 4, 5], true),
        ];
        rows.iter()
            .map(|&(k, f, negate)| {
                let d = self.diff_of_products(c1[k[0]], sf[f[0]], c1[k[1]], sf[f[1]]);
                let r = self
                    .b
                    .op(Opcode::MAD, 1, &[s(&[c1[k[2]]]), s(&[sf[f[2]]]), s(&[d])])[0];
                if negate {
                    self.b.op(Opcode::MOV, 1, &[neg(&[r])])[0]
                } else {
                    r
                }
            })
            .collect()
    }
}

/// `-|x|` as one source.
fn neg_abs(x: &[Slot]) -> super::builder::Src {
    super::builder::Src {
        negate: true,
        ..abs(x)
    }
}
