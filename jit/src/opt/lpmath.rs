//! Math modes: the `Llvmpipe` mode rewrites EX2, LG2, POW, SIN and COS into the ordinary
//! instructions Mesa 22.3 llvmpipe/lavapipe (gallivm, `lp_bld_arit.c`) runs for them, so a program
//! computes llvmpipe's bits instead of glibc's (the `Exact` default, softpipe's).
//!
//! gallivm evaluates these with short f32 polynomials, and LLVM fuses its `llvm.fmuladd` calls on
//! FMA hardware (the x86-64 machines llvmpipe/lavapipe references come from): every `lp_build_mad`
//! and `lp_build_fmuladd` below is a fused FMA; plain `FMul`/`FAdd`/`FSub` stay separate. Denormals
//! are flushed (llvmpipe's rasteriser threads set DAZ/FTZ), as in the IR. What each function
//! computes, for 32-bit lanes:
//!
//! - **EX2** (`lp_build_exp2`): `x = minps(128, x)`, `x = maxps(-126.99999, x)` (NaN stays NaN),
//!   `i = floor(x)`, `f = x - i`, `2^i` built as `(int(i) + 127) << 23`, times the degree-5
//!   polynomial `lp_build_exp2_polynomial` of `f` (evaluated as even and odd halves in `f²`).
//! - **LG2** (`lp_build_log2_safe`): exponent `e` and mantissa `m ∈ [1, 2)` from the bits,
//!   `y = (m - 1) / (m + 1)`, result `y·P(y²) + e` with the degree-4 `lp_build_log2_polynomial`;
//!   then `x >= +inf` → +inf, `x == 0` → -inf, `x < 0` → NaN, with *unordered* compares, so NaN
//!   gives NaN (`0x7fc0_0000`).
//! - **POW** (`lp_build_pow`): `exp2(log2_safe(x) · y)`, then 0 where `x == 0` — unordered in 22.3
//!   (`lp_build_cmp`), so `pow(NaN, y)` is 0 (later Mesa made the compare ordered).
//! - **SIN/COS** (`lp_build_sin_or_cos`): the Cephes/`sse_mathfun` scheme — octant
//!   `j = (int(|x|·4/π) + 1) & ~1`, three-part Cody-Waite reduction with fused steps, the two
//!   polynomials selected per lane, the sign from the octant bits, clamped by `maxps(minps(r, 1),
//!   -1)` (NaN → 1) and NaN for infinite or NaN `x`.
//!
//! Checked bit for bit against llvmpipe renders over 2^20 inputs per function (special encodings,
//! the ranges shaders use, and wide random ones): see `jit/tests/opt_lpmath.rs` and
//! `reference-images/lpmath/`. [`model`] is the same algorithm as scalar Rust, the reference the
//! rewrite is tested against.
//!
//! The rewrite keeps the program's meaning for both executors (it only emits ordinary
//! instructions), declares its scratch temporaries after every existing TEMP, appends its
//! constants as new immediates and renumbers instruction labels. Consecutive instructions of the
//! same opcode that do not read each other's results share one expansion, one lane each (a
//! `pow(vec3, vec3)` lowered to three scalar POWs costs one expansion).

// gallivm's constants are written as `lp_bld_arit.c` spells them (more digits than an f64
// holds), so they can be checked against the source; they round to the same values.
#![allow(clippy::excessive_precision)]

use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;

use crate::ir::{
    props, Declaration, DstOperand, HeaderItem, Immediate, ImmediateType, Instruction, MathMode,
    Opcode, Program, Register, RegisterFile, SrcOperand,
};

/// The program as each [`MathMode`] executes it. These live beside [`rewrite`], which they run;
/// the mode itself belongs to the program model (`crate::ir`).
impl MathMode {
    /// The program as this mode executes it (`Exact` returns it unchanged).
    pub fn apply(self, program: Program) -> Program {
        match self {
            MathMode::Exact => program,
            MathMode::Llvmpipe => rewrite(&program),
        }
    }

    /// Like [`MathMode::apply`] on a borrowed program (no copy in `Exact` mode).
    pub fn applied(self, program: &Program) -> Cow<'_, Program> {
        match self {
            MathMode::Exact => Cow::Borrowed(program),
            MathMode::Llvmpipe => Cow::Owned(rewrite(program)),
        }
    }
}

/// True for the opcodes [`rewrite`] replaces: the transcendental ones
/// ([`props::is_transcendental`]).
pub fn is_rewritten(op: Opcode) -> bool {
    props::is_transcendental(op)
}

/// `lp_build_exp2_polynomial` (EXP_POLY_DEGREE 5), rounded to f32 as `lp_build_const_vec` does.
pub(crate) const EXP2_POLY: [f64; 6] = [
    1.0,
    0.693153073200168932794,
    0.240153617044375388211,
    0.0558263180532956664775,
    0.00898934009049466391101,
    0.00187757667519147912699,
];

/// `lp_build_log2_polynomial` (LOG_POLY_DEGREE 4).
pub(crate) const LOG2_POLY: [f64; 5] = [
    2.88539009343309178325,
    0.961791550404184197881,
    0.577440339438736392009,
    0.403343858251329912514,
    0.406718052498846252698,
];

pub(crate) const EXP2_MAX: f32 = 128.0;
pub(crate) const EXP2_MIN: f32 = -126.99999;
pub(crate) const FOPI: f64 = 1.27323954473516;
pub(crate) const DP1: f64 = -0.78515625;
pub(crate) const DP2: f64 = -2.4187564849853515625e-4;
pub(crate) const DP3: f64 = -3.77489497744594108e-8;
pub(crate) const COSCOF: [f64; 3] = [
    2.443315711809948E-005,
    -1.388731625493765E-003,
    4.166664568298827E-002,
];
pub(crate) const SINCOF: [f64; 3] = [-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1];
/// C's `NAN` on x86-64.
pub(crate) const NAN_BITS: u32 = 0x7fc0_0000;

/// A gallivm constant as the f32 bits `lp_build_const_vec` makes of it.
pub(crate) fn k(v: f64) -> u32 {
    (v as f32).to_bits()
}

/// An operand of the expansion: a scratch temporary (all of the group's lanes), its absolute
/// value, or a constant.
#[derive(Clone, Copy)]
enum O {
    T(u32),
    Abs(u32),
    K(u32),
}

/// Emits one expansion over the lanes of `mask`.
struct Emitter<'a> {
    out: &'a mut Vec<Instruction>,
    mask: u8,
    /// First scratch TEMP index.
    base: u32,
    /// Scratch temporaries used by the current expansion.
    used: u32,
    consts: &'a mut Consts,
}

impl Emitter<'_> {
    fn fresh(&mut self) -> u32 {
        self.used += 1;
        self.used - 1
    }

    fn reg(&self, t: u32) -> Register {
        Register::new(RegisterFile::Temporary, (self.base + t) as i32)
    }

    fn src(&mut self, o: O) -> SrcOperand {
        match o {
            O::T(t) => SrcOperand::new(self.reg(t)),
            O::Abs(t) => SrcOperand {
                absolute: true,
                ..SrcOperand::new(self.reg(t))
            },
            O::K(bits) => self.consts.operand(bits),
        }
    }

    /// `dst = op(srcs)` into a fresh temporary.
    fn op(&mut self, opcode: Opcode, srcs: &[O]) -> u32 {
        let t = self.fresh();
        self.op_into(t, opcode, srcs);
        t
    }

    fn op_into(&mut self, t: u32, opcode: Opcode, srcs: &[O]) {
        let src = srcs.iter().map(|&o| self.src(o)).collect();
        let dst = DstOperand {
            reg: self.reg(t),
            write_mask: self.mask,
        };
        self.out.push(Instruction::new(opcode, vec![dst], src));
    }

    /// `lp_build_polynomial`: even and odd halves in x², every step a fused multiply-add.
    fn polynomial(&mut self, x: u32, coeffs: &[f64]) -> u32 {
        let x2 = self.op(Opcode::MUL, &[O::T(x), O::T(x)]);
        let (mut even, mut odd): (Option<O>, Option<O>) = (None, None);
        for i in (0..coeffs.len()).rev() {
            let c = O::K(k(coeffs[i]));
            let acc = if i % 2 == 0 { &mut even } else { &mut odd };
            *acc = Some(match *acc {
                None => c,
                Some(prev) => {
                    let t = self.op(Opcode::FMA, &[O::T(x2), prev, c]);
                    O::T(t)
                }
            });
        }
        match (odd, even) {
            (Some(odd), Some(even)) => self.op(Opcode::FMA, &[odd, O::T(x), even]),
            (None, Some(even)) => self.op(Opcode::MOV, &[even]),
            _ => self.op(Opcode::MOV, &[O::K(0)]),
        }
    }

    /// `lp_build_exp2`.
    fn exp2(&mut self, x: u32) -> u32 {
        // minps(128, x) and maxps(-126.99999, x) keep a NaN x, which then flows through
        // every step with its payload, quieted by the first arithmetic: the result is x quieted.
        // CLAMP (NaN → the bound) keeps that off the dependency chain: patched at the end.
        let c2 = self.op(
            Opcode::CLAMP,
            &[O::T(x), O::K(EXP2_MIN.to_bits()), O::K(EXP2_MAX.to_bits())],
        );
        let ipart = self.op(Opcode::FLR, &[O::T(c2)]);
        let fpart = self.op(Opcode::SUB, &[O::T(c2), O::T(ipart)]);
        let i = self.op(Opcode::F2I, &[O::T(ipart)]);
        // (i + 127) << 23 as one wrapping multiply-add (the JIT has no vector shifts).
        let scale = self.op(Opcode::UMAD, &[O::T(i), O::K(1 << 23), O::K(127 << 23)]);
        let p = self.polynomial(fpart, &EXP2_POLY);
        let r = self.op(Opcode::MUL, &[O::T(scale), O::T(p)]);
        let nan = self.op(Opcode::FSNE, &[O::T(x), O::T(x)]);
        let quiet = self.op(Opcode::OR, &[O::T(x), O::K(0x0040_0000)]);
        self.op(Opcode::UCMP, &[O::T(nan), O::T(quiet), O::T(r)])
    }

    /// `lp_build_log2_safe`; `zero_case` false leaves out the `x == 0` → -inf select (POW
    /// overrides it).
    fn log2(&mut self, x: u32, zero_case: bool) -> u32 {
        let exp = self.op(Opcode::AND, &[O::T(x), O::K(0x7f80_0000)]);
        // (exp >> 23) - 127 as a float: exp is a multiple of 2^23 below 2^31, so its float,
        // the scaling and the subtraction are exact (the JIT has no vector shifts).
        let e = self.op(Opcode::I2F, &[O::T(exp)]);
        let logexp = self.op(
            Opcode::MAD,
            &[
                O::T(e),
                O::K((1.0f32 / 8_388_608.0).to_bits()),
                O::K((-127.0f32).to_bits()),
            ],
        );
        let mant = self.op(Opcode::AND, &[O::T(x), O::K(0x007f_ffff)]);
        let mant = self.op(Opcode::OR, &[O::T(mant), O::K(1.0f32.to_bits())]);
        let num = self.op(Opcode::SUB, &[O::T(mant), O::K(1.0f32.to_bits())]);
        let den = self.op(Opcode::ADD, &[O::T(mant), O::K(1.0f32.to_bits())]);
        let y = self.op(Opcode::DIV, &[O::T(num), O::T(den)]);
        let z = self.op(Opcode::MUL, &[O::T(y), O::T(y)]);
        let p = self.polynomial(z, &LOG2_POLY);
        let r = self.op(Opcode::FMA, &[O::T(y), O::T(p), O::T(logexp)]);
        // The edge cases (unordered compares: a NaN x takes all three, the last one wins), as
        // one select on the dependency chain: finite x > 0 keeps the polynomial, otherwise NaN
        // (x < 0 or NaN), -inf (±0, denormals) or +inf.
        let nonneg = self.op(Opcode::FSGE, &[O::T(x), O::K(0)]);
        let finite = self.op(Opcode::FSLT, &[O::T(x), O::K(f32::INFINITY.to_bits())]);
        let (positive, at_zero) = if zero_case {
            let positive = self.op(Opcode::FSLT, &[O::K(0), O::T(x)]);
            let nonzero = self.op(Opcode::FSNE, &[O::T(x), O::K(0)]);
            let at_zero = self.op(
                Opcode::UCMP,
                &[
                    O::T(nonzero),
                    O::K(f32::INFINITY.to_bits()),
                    O::K(f32::NEG_INFINITY.to_bits()),
                ],
            );
            (positive, O::T(at_zero))
        } else {
            // POW overrides zero bases: ±0 may keep the polynomial.
            (nonneg, O::K(f32::INFINITY.to_bits()))
        };
        let special = self.op(Opcode::UCMP, &[O::T(nonneg), at_zero, O::K(NAN_BITS)]);
        let ok = self.op(Opcode::AND, &[O::T(positive), O::T(finite)]);
        self.op(Opcode::UCMP, &[O::T(ok), O::T(r), O::T(special)])
    }

    /// `lp_build_pow` of Mesa 22.3.
    fn pow(&mut self, x: u32, y: u32) -> u32 {
        let l = self.log2(x, false);
        // vmulps l, y returns l's NaN when both are NaN; MUL lets its second operand's win.
        let m = self.op(Opcode::MUL, &[O::T(y), O::T(l)]);
        let r = self.exp2(m);
        // Unordered `x == 0` is "not 0 < |x|": NaN and ±0 give 0.
        let ordered_nonzero = self.op(Opcode::FSLT, &[O::K(0), O::Abs(x)]);
        self.op(Opcode::UCMP, &[O::T(ordered_nonzero), O::T(r), O::K(0)])
    }

    /// `lp_build_sin_or_cos`.
    fn sin_cos(&mut self, a: u32, cos: bool) -> u32 {
        let x_abs = self.op(Opcode::AND, &[O::T(a), O::K(0x7fff_ffff)]);
        let scale_y = self.op(Opcode::MUL, &[O::T(x_abs), O::K(k(FOPI))]);
        let emm2_i = self.op(Opcode::F2I, &[O::T(scale_y)]);
        let emm2_add = self.op(Opcode::UADD, &[O::T(emm2_i), O::K(1)]);
        let emm2_and = self.op(Opcode::AND, &[O::T(emm2_add), O::K(!1u32)]);
        let y_2 = self.op(Opcode::I2F, &[O::T(emm2_and)]);
        let (emm2_2, sign_bit) = if cos {
            let emm2_2 = self.op(Opcode::UADD, &[O::T(emm2_and), O::K((-2i32) as u32)]);
            let not = self.op(Opcode::NOT, &[O::T(emm2_2)]);
            let four = self.op(Opcode::AND, &[O::T(not), O::K(4)]);
            (emm2_2, self.op(Opcode::UMUL, &[O::T(four), O::K(1 << 29)]))
        } else {
            let shifted = self.op(Opcode::UMUL, &[O::T(emm2_add), O::K(1 << 29)]);
            let x = self.op(Opcode::XOR, &[O::T(a), O::T(shifted)]);
            (
                emm2_and,
                self.op(Opcode::AND, &[O::T(x), O::K(0x8000_0000)]),
            )
        };
        let emm2_3 = self.op(Opcode::AND, &[O::T(emm2_2), O::K(2)]);
        let poly_mask = self.op(Opcode::USEQ, &[O::T(emm2_3), O::K(0)]);
        let x_1 = self.op(Opcode::FMA, &[O::T(y_2), O::K(k(DP1)), O::T(x_abs)]);
        let x_2 = self.op(Opcode::FMA, &[O::T(y_2), O::K(k(DP2)), O::T(x_1)]);
        let x_3 = self.op(Opcode::FMA, &[O::T(y_2), O::K(k(DP3)), O::T(x_2)]);
        let z = self.op(Opcode::MUL, &[O::T(x_3), O::T(x_3)]);
        let y_4 = self.op(
            Opcode::FMA,
            &[O::T(z), O::K(k(COSCOF[0])), O::K(k(COSCOF[1]))],
        );
        let y_6 = self.op(Opcode::FMA, &[O::T(y_4), O::T(z), O::K(k(COSCOF[2]))]);
        let y_7 = self.op(Opcode::MUL, &[O::T(y_6), O::T(z)]);
        let y_8 = self.op(Opcode::MUL, &[O::T(y_7), O::T(z)]);
        let tmp = self.op(Opcode::MUL, &[O::T(z), O::K(0.5f32.to_bits())]);
        let y_9 = self.op(Opcode::SUB, &[O::T(y_8), O::T(tmp)]);
        let y_10 = self.op(Opcode::ADD, &[O::T(y_9), O::K(1.0f32.to_bits())]);
        let y2_4 = self.op(
            Opcode::FMA,
            &[O::T(z), O::K(k(SINCOF[0])), O::K(k(SINCOF[1]))],
        );
        let y2_6 = self.op(Opcode::FMA, &[O::T(y2_4), O::T(z), O::K(k(SINCOF[2]))]);
        let y2_7 = self.op(Opcode::MUL, &[O::T(y2_6), O::T(z)]);
        let y2_9 = self.op(Opcode::FMA, &[O::T(y2_7), O::T(x_3), O::T(x_3)]);
        let combined = self.op(Opcode::UCMP, &[O::T(poly_mask), O::T(y2_9), O::T(y_10)]);
        let signed = self.op(Opcode::XOR, &[O::T(combined), O::T(sign_bit)]);
        // lp_build_clamp: minps(r, 1) then maxps(r, -1); minps gives 1 for NaN, as MIN does.
        let r = self.op(Opcode::MIN, &[O::T(signed), O::K(1.0f32.to_bits())]);
        let r = self.op(Opcode::MAX, &[O::T(r), O::K((-1.0f32).to_bits())]);
        let exp = self.op(Opcode::AND, &[O::T(a), O::K(0x7f80_0000)]);
        let finite = self.op(Opcode::USNE, &[O::T(exp), O::K(0x7f80_0000)]);
        self.op(Opcode::UCMP, &[O::T(finite), O::T(r), O::K(NAN_BITS)])
    }
}

/// The rewrite's constants, four to an immediate, appended after the program's immediates.
struct Consts {
    first_imm: u32,
    values: Vec<u32>,
    index: HashMap<u32, usize>,
}

impl Consts {
    fn operand(&mut self, bits: u32) -> SrcOperand {
        let n = *self.index.entry(bits).or_insert_with(|| {
            self.values.push(bits);
            self.values.len() - 1
        });
        let c = (n % 4) as u8;
        SrcOperand {
            swizzle: [c; 4],
            ..SrcOperand::new(Register::new(
                RegisterFile::Immediate,
                (self.first_imm + (n / 4) as u32) as i32,
            ))
        }
    }
}

/// True when `src` (read at component `swizzle[0]`) may see what `dst` writes.
fn reads_written(src: &SrcOperand, dst: &DstOperand) -> bool {
    if src.reg.file != dst.reg.file {
        return false;
    }
    let dynamic = src.reg.indirect.is_some()
        || dst.reg.indirect.is_some()
        || src.reg.dimension.is_some()
        || dst.reg.dimension.is_some();
    dynamic || (src.reg.index == dst.reg.index && dst.write_mask & (1 << src.swizzle[0]) != 0)
}

/// A scalar instruction the rewrite can take: one destination, the opcode's sources.
fn candidate(inst: &Instruction) -> bool {
    is_rewritten(inst.opcode)
        && inst.dst.len() == 1
        && inst.dst[0].write_mask != 0
        && inst.src.len() == inst.opcode.num_src()
}

/// Replaces every EX2, LG2, POW, SIN and COS of `program` by the instructions Mesa 22.3
/// llvmpipe computes it with (see the module documentation).
pub fn rewrite(program: &Program) -> Program {
    if !program
        .instructions
        .iter()
        .any(|inst| is_rewritten(inst.opcode))
    {
        return program.clone();
    }
    let base = program.file_size(RegisterFile::Temporary);
    let mut consts = Consts {
        first_imm: program.file_size(RegisterFile::Immediate),
        values: Vec::new(),
        index: HashMap::default(),
    };
    // Scratch temporaries: one window per opcode, shared by its expansions. Any overlap would
    // still be correct (an expansion writes each temporary before reading it), but a register
    // that always plays the same role keeps the JIT's per-register facts (e.g. "never holds a
    // denormal", which spares input flushes) true.
    let mut scratch = 0u32;
    let mut windows: Vec<(Opcode, u32)> = Vec::new();
    let insts = &program.instructions;
    let mut out: Vec<Instruction> = Vec::with_capacity(insts.len() * 2);
    let mut new_index = vec![0usize; insts.len() + 1];
    let mut i = 0;
    while i < insts.len() {
        new_index[i] = out.len();
        if !candidate(&insts[i]) {
            out.push(insts[i].clone());
            i += 1;
            continue;
        }
        // The group: up to four consecutive same-opcode instructions, none reading an earlier
        // one's result (the results are written after the shared computation).
        let mut end = i + 1;
        while end < insts.len() && end - i < 4 {
            let next = &insts[end];
            if !candidate(next) || next.opcode != insts[i].opcode {
                break;
            }
            let depends = insts[i..end]
                .iter()
                .any(|prev| next.src.iter().any(|s| reads_written(s, &prev.dst[0])));
            if depends {
                break;
            }
            new_index[end] = out.len();
            end += 1;
        }
        let group = &insts[i..end];
        let mask = ((1u32 << group.len()) - 1) as u8;
        let opcode = group[0].opcode;
        let window = match windows.iter().find(|w| w.0 == opcode) {
            Some(&(_, offset)) => offset,
            None => {
                windows.push((opcode, scratch));
                scratch
            }
        };
        let mut e = Emitter {
            out: &mut out,
            mask,
            base: base + window,
            used: 0,
            consts: &mut consts,
        };
        // Gather each instruction's scalar sources into its lane.
        let nsrc = group[0].src.len();
        let inputs: Vec<u32> = (0..nsrc).map(|_| e.fresh()).collect();
        for (s, &t) in inputs.iter().enumerate() {
            for (lane, inst) in group.iter().enumerate() {
                let src = inst.src[s];
                let dst = DstOperand {
                    reg: e.reg(t),
                    write_mask: 1 << lane,
                };
                let src = SrcOperand {
                    swizzle: [src.swizzle[0]; 4],
                    ..src
                };
                e.out
                    .push(Instruction::new(Opcode::MOV, vec![dst], vec![src]));
            }
        }
        let result = match group[0].opcode {
            Opcode::EX2 => e.exp2(inputs[0]),
            Opcode::LG2 => e.log2(inputs[0], true),
            Opcode::POW => e.pow(inputs[0], inputs[1]),
            Opcode::SIN => e.sin_cos(inputs[0], false),
            _ => e.sin_cos(inputs[0], true),
        };
        let result = e.reg(result);
        scratch = scratch.max(window + e.used);
        for (lane, inst) in group.iter().enumerate() {
            let mut mov = Instruction::new(
                Opcode::MOV,
                inst.dst.clone(),
                vec![SrcOperand {
                    swizzle: [lane as u8; 4],
                    ..SrcOperand::new(result)
                }],
            );
            mov.saturate = inst.saturate;
            mov.precise = inst.precise;
            out.push(mov);
        }
        i = end;
    }
    new_index[insts.len()] = out.len();
    // Labels are instruction indices (CAL's is its BGNSUB's); keep them pointing at the same
    // instructions.
    for inst in &mut out {
        if let Some(label) = inst.label {
            if let Some(&n) = new_index.get(label as usize) {
                inst.label = Some(n as u32);
            }
        }
    }
    let mut result = Program {
        processor: program.processor,
        header: program.header.clone(),
        instructions: out,
        sampler_hints: program.sampler_hints.clone(),
    };
    if scratch > 0 {
        let at = result
            .header
            .iter()
            .rposition(|h| matches!(h, HeaderItem::Declaration(_)))
            .map_or(0, |p| p + 1);
        result.header.insert(
            at,
            HeaderItem::Declaration(Declaration::new(
                RegisterFile::Temporary,
                base,
                base + scratch - 1,
            )),
        );
    }
    for chunk in consts.values.chunks(4) {
        result.header.push(HeaderItem::Immediate(Immediate {
            ty: ImmediateType::Uint32,
            values: chunk.to_vec(),
        }));
    }
    result
}

/// The same algorithms as scalar Rust on f32, written from `lp_bld_arit.c` independently of the
/// rewrite: the reference the tests hold the rewritten programs to.
pub mod model {
    use super::*;

    /// Denormals flush to zero of the same sign (llvmpipe runs with DAZ and FTZ).
    pub fn ftz(x: f32) -> f32 {
        if x.is_subnormal() {
            f32::from_bits(x.to_bits() & 0x8000_0000)
        } else {
            x
        }
    }

    fn fma(a: f32, b: f32, c: f32) -> f32 {
        ftz(ftz(a).mul_add(ftz(b), ftz(c)))
    }

    fn mul(a: f32, b: f32) -> f32 {
        ftz(ftz(a) * ftz(b))
    }

    /// x86 `cvttps2dq`.
    fn cvtt(x: f32) -> i32 {
        if x.is_nan() || !(-2147483648.0..2147483648.0).contains(&x) {
            i32::MIN
        } else {
            x as i32
        }
    }

    fn polynomial(x: f32, coeffs: &[f64]) -> f32 {
        let x2 = mul(x, x);
        let (mut even, mut odd) = (None::<f32>, None::<f32>);
        for (i, &c) in coeffs.iter().enumerate().rev() {
            let c = c as f32;
            let acc = if i % 2 == 0 { &mut even } else { &mut odd };
            *acc = Some(acc.map_or(c, |prev| fma(x2, prev, c)));
        }
        match (odd, even) {
            (Some(odd), Some(even)) => fma(odd, x, even),
            (None, Some(even)) => even,
            _ => 0.0,
        }
    }

    /// `minps(a, b)`: `a < b ? a : b` (b when either is NaN), with DAZ.
    fn minps(a: f32, b: f32) -> f32 {
        if ftz(a) < ftz(b) {
            a
        } else {
            b
        }
    }

    /// `maxps(a, b)`: `a > b ? a : b`.
    fn maxps(a: f32, b: f32) -> f32 {
        if ftz(a) > ftz(b) {
            a
        } else {
            b
        }
    }

    /// `lp_build_exp2`.
    pub fn exp2(x: f32) -> f32 {
        let x = maxps(EXP2_MIN, minps(EXP2_MAX, x));
        let ipart = ftz(ftz(x).floor());
        let fpart = ftz(ftz(x) - ipart);
        let scale = f32::from_bits((cvtt(ipart).wrapping_add(127) as u32) << 23);
        mul(scale, polynomial(fpart, &EXP2_POLY))
    }

    /// `lp_build_log2_safe`.
    pub fn log2(x: f32) -> f32 {
        let i = x.to_bits();
        let logexp = (((i & 0x7f80_0000) >> 23) as i32 - 127) as f32;
        let mant = f32::from_bits((i & 0x007f_ffff) | 0x3f80_0000);
        let y = ftz((mant - 1.0) / (mant + 1.0));
        let z = mul(y, y);
        let r = fma(y, polynomial(z, &LOG2_POLY), logexp);
        let x = ftz(x);
        if x.is_nan() || x < 0.0 {
            f32::from_bits(NAN_BITS)
        } else if x == 0.0 {
            f32::NEG_INFINITY
        } else if x == f32::INFINITY {
            f32::INFINITY
        } else {
            r
        }
    }

    /// `lp_build_pow` (Mesa 22.3: NaN or zero `x` gives 0).
    pub fn pow(x: f32, y: f32) -> f32 {
        if ftz(x) == 0.0 || x.is_nan() {
            0.0
        } else {
            let l = log2(x);
            // x86 `mulps l, y`: with two NaNs, the first operand's (quieted) comes out.
            let m = if l.is_nan() {
                f32::from_bits(l.to_bits() | 0x0040_0000)
            } else {
                mul(l, y)
            };
            exp2(m)
        }
    }

    fn sin_cos(a: f32, cos: bool) -> f32 {
        let ai = a.to_bits();
        let x_abs = f32::from_bits(ai & 0x7fff_ffff);
        let scale_y = mul(x_abs, FOPI as f32);
        let emm2_add = (cvtt(scale_y) as u32).wrapping_add(1);
        let emm2_and = emm2_add & !1;
        let y_2 = emm2_and as i32 as f32;
        let (emm2_2, sign_bit) = if cos {
            let e = emm2_and.wrapping_sub(2);
            (e, (!e & 4) << 29)
        } else {
            (emm2_and, (ai ^ (emm2_add << 29)) & 0x8000_0000)
        };
        let x_3 = fma(
            y_2,
            DP3 as f32,
            fma(y_2, DP2 as f32, fma(y_2, DP1 as f32, x_abs)),
        );
        let z = mul(x_3, x_3);
        let y_6 = fma(
            fma(z, COSCOF[0] as f32, COSCOF[1] as f32),
            z,
            COSCOF[2] as f32,
        );
        let y_8 = mul(mul(y_6, z), z);
        let y_10 = ftz(ftz(y_8 - mul(z, 0.5)) + 1.0);
        let y2_6 = fma(
            fma(z, SINCOF[0] as f32, SINCOF[1] as f32),
            z,
            SINCOF[2] as f32,
        );
        let y2_9 = fma(mul(y2_6, z), x_3, x_3);
        let combined = if emm2_2 & 2 == 0 { y2_9 } else { y_10 };
        let r = f32::from_bits(combined.to_bits() ^ sign_bit);
        let r = maxps(minps(r, 1.0), -1.0);
        if ai & 0x7f80_0000 == 0x7f80_0000 {
            f32::from_bits(NAN_BITS)
        } else {
            r
        }
    }

    /// `lp_build_sin`.
    pub fn sin(x: f32) -> f32 {
        sin_cos(x, false)
    }

    /// `lp_build_cos`.
    pub fn cos(x: f32) -> f32 {
        sin_cos(x, true)
    }
}
