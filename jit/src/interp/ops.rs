//! Per-lane operations: the canonical definition of every arithmetic opcode's result.
//!
//! Each function mirrors the C expression softpipe (Mesa 22.3 `tgsi_exec.c`, built for x86-64 with
//! glibc) evaluates, so that our pixels match softpipe's bit for bit. Rust's `f32` methods used here
//! (`floor`, `sqrt`, …) lower to the same glibc `libm` calls as the C code; `powf`, `logf`,
//! `sinf` and `cosf` are our own bit-exact ports of glibc's FMA variants ([`super::libm`]), so
//! that the JIT can vectorise them. The JIT must call these functions (or prove its inline versions
//! identical).
//!
//! Softpipe runs with the x86 MXCSR DAZ and FTZ bits set (as GPUs do): denormal inputs of float
//! arithmetic read as zero and denormal results are flushed to zero, keeping the sign (observed:
//! `1e-45 / 1.0` is 0 on softpipe). Every float operation here applies [`flush`] to its inputs
//! and its result; pure bit moves (MOV, `|x|`, `-x`, UCMP) do not.
//!
//! Where C leaves the result undefined, the x86-64 behaviour of the compiled softpipe is used and
//! noted (float → int conversions: `cvttss2si`, NaN/out of range → `0x8000_0000`).
//! Not reproduced: which NaN propagates when both operands of an operation are NaN (softpipe's
//! compiler may commute operands); here a fixed rule (see `pick_nan`).

/// `(int)f` as x86-64 `cvttss2si` computes it: truncation, NaN or out of range → `i32::MIN`.
pub fn f2i(f: f32) -> i32 {
    if f.is_nan() || !(-2147483648.0..2147483648.0).contains(&f) {
        i32::MIN
    } else {
        f as i32
    }
}

/// `(uint32_t)f` as softpipe's build computes it (GCC's vectorised SSE2 sequence, observed on
/// softpipe): values ≥ 2^31 convert as `cvttps2dq(f - 2^31) ^ 0x8000_0000` (so ≥ 2^32 and +inf
/// give 0), everything else as [`f2i`] (so -1.0 → `0xffff_ffff`, -3e9, -inf and NaN →
/// `0x8000_0000`).
pub fn f2u(f: f32) -> u32 {
    if f >= 2147483648.0 {
        (f2i(f - 2147483648.0) as u32) ^ 0x8000_0000
    } else {
        f2i(f) as u32
    }
}

/// Denormals read as (and results flush to) zero of the same sign: MXCSR DAZ + FTZ.
#[inline]
pub fn flush(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// MAX: `fmaxf` as observed on softpipe: a NaN operand yields the other operand unchanged;
/// otherwise the larger after [`flush`], and the first operand on ties (`max(+0, -0)` = +0,
/// `max(-0, +0)` = -0).
pub fn fmax(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else {
        let (a, b) = (flush(a), flush(b));
        if b > a {
            b
        } else {
            a
        }
    }
}

/// MIN: `fminf` as observed on softpipe (NaN yields the other operand, ties the first).
pub fn fmin(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else {
        let (a, b) = (flush(a), flush(b));
        if b < a {
            b
        } else {
            a
        }
    }
}

/// `_SAT`: clamp to [0, 1]; NaN, -0 and denormals give +0 (softpipe's
/// `fminf(fmaxf(x, 0.0f), 1.0f)` as observed: `-0` saturates to `+0`).
pub fn saturate(x: f32) -> f32 {
    let x = flush(x);
    if x > 0.0 {
        if x < 1.0 {
            x
        } else {
            1.0
        }
    } else {
        0.0
    }
}

/// When both operands of a float operation are NaN, x86 SSE returns the first source operand
/// of the instruction, quieted. Which operand that is for `a + b` is the compiler's choice, so it
/// is pinned down here (the JIT relies on the same rule): for the commutative ADD and MUL the
/// second operand's NaN wins (what softpipe's build does, checked on its MAD), for SUB and DIV the
/// first's. One NaN operand propagates (quieted); invalid operations give the default NaN
/// `0xffc0_0000`, as the hardware does.
#[inline]
fn pick_nan(winner: f32, other: f32, r: f32) -> f32 {
    if r.is_nan() && winner.is_nan() && other.is_nan() {
        f32::from_bits(winner.to_bits() | 0x0040_0000)
    } else {
        r
    }
}

/// ADD.
#[inline]
pub fn add(a: f32, b: f32) -> f32 {
    flush(pick_nan(b, a, flush(a) + flush(b)))
}

/// SUB.
#[inline]
pub fn sub(a: f32, b: f32) -> f32 {
    flush(pick_nan(a, b, flush(a) - flush(b)))
}

/// MUL.
#[inline]
pub fn mul(a: f32, b: f32) -> f32 {
    flush(pick_nan(b, a, flush(a) * flush(b)))
}

/// DIV.
#[inline]
pub fn div(a: f32, b: f32) -> f32 {
    flush(pick_nan(a, b, flush(a) / flush(b)))
}

/// MAD: `a * b + c`, rounded (and flushed) after the multiply and after the add — x86-64
/// baseline code has no FMA, so C does not fuse.
#[inline]
pub fn mad(a: f32, b: f32, c: f32) -> f32 {
    add(mul(a, b), c)
}

/// FMA: fused multiply-add (not in softpipe; what GPUs do for `fma()`). A NaN operand
/// propagates quieted, the first of `b`, `a`, `c` that is NaN (as MUL, then ADD: what x86's
/// `vfmadd` returns from Rust's `mul_add` here) — pinned down rather than left to whichever
/// `fmaf` gets linked, so that the JIT can fix NaN lanes up without a branch.
#[inline]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    for v in [b, a, c] {
        if v.is_nan() {
            return f32::from_bits(v.to_bits() | 0x0040_0000);
        }
    }
    flush(flush(a).mul_add(flush(b), flush(c)))
}

/// LRP: `a * (b - c) + c`, each step rounded.
#[inline]
pub fn lrp(a: f32, b: f32, c: f32) -> f32 {
    add(mul(a, sub(b, c)), c)
}

/// Applies a libm function with DAZ on the input and FTZ on the result.
#[inline]
fn libm(x: f32, f: impl Fn(f32) -> f32) -> f32 {
    flush(f(flush(x)))
}

/// FLR: `floorf` (glibc's SSE4.1 `roundss` version, which honours DAZ).
pub fn floor(x: f32) -> f32 {
    libm(x, f32::floor)
}

/// CEIL: `ceilf`.
pub fn ceil(x: f32) -> f32 {
    libm(x, f32::ceil)
}

/// TRUNC: `truncf`.
pub fn trunc(x: f32) -> f32 {
    libm(x, f32::trunc)
}

/// SQRT: `sqrtf`.
pub fn sqrt(x: f32) -> f32 {
    libm(x, f32::sqrt)
}

/// SIN: `sinf` (glibc's FMA variant, [`super::libm::sinf`]). glibc returns tiny arguments
/// (|x| < 2^-12) unchanged without any float arithmetic, so a denormal comes back as it went in
/// (observed on softpipe).
pub fn sin(x: f32) -> f32 {
    if x.is_subnormal() {
        x
    } else {
        libm(x, super::libm::sinf)
    }
}

/// COS: `cosf` (glibc's FMA variant, [`super::libm::cosf`]).
pub fn cos(x: f32) -> f32 {
    libm(x, super::libm::cosf)
}

/// `a < b` (SLT, FSLT; CMP and KILL_IF test `x < 0`).
#[inline]
pub fn lt(a: f32, b: f32) -> bool {
    flush(a) < flush(b)
}

/// `a >= b` (SGE, FSGE).
#[inline]
pub fn ge(a: f32, b: f32) -> bool {
    flush(a) >= flush(b)
}

/// `a == b` (SEQ, FSEQ; IF tests `x != 0`).
#[inline]
pub fn eq(a: f32, b: f32) -> bool {
    flush(a) == flush(b)
}

/// RCP: `1.0f / x`.
pub fn rcp(x: f32) -> f32 {
    div(1.0, x)
}

/// RSQ: `1.0f / sqrtf(x)` (Mesa 22.3 takes no absolute value: RSQ(-2) is NaN, checked on softpipe).
pub fn rsq(x: f32) -> f32 {
    div(1.0, sqrt(x))
}

/// EX2: `powf(2.0f, x)` (not `exp2f`, which glibc implements separately), glibc's FMA variant
/// ([`super::libm::powf`]).
pub fn ex2(x: f32) -> f32 {
    libm(x, |x| super::libm::powf(2.0, x))
}

/// LG2: `logf(x) * 1.442695f` (glibc's FMA variant, [`super::libm::logf`]) — not `log2f`, and Mesa's rounded constant, not `LOG2_E`.
#[allow(clippy::approx_constant)]
pub fn lg2(x: f32) -> f32 {
    mul(libm(x, super::libm::logf), 1.442695)
}

/// POW: `powf(a, b)` (glibc's FMA variant, [`super::libm::powf`]).
pub fn pow(a: f32, b: f32) -> f32 {
    flush(super::libm::powf(flush(a), flush(b)))
}

/// ROUND: `_mesa_roundevenf` (round half to even).
pub fn round(x: f32) -> f32 {
    libm(x, f32::round_ties_even)
}

/// FRC: `x - floorf(x)`.
pub fn frc(x: f32) -> f32 {
    sub(x, floor(x))
}

/// SSG: -1, 0 or 1 (NaN → 0).
pub fn ssg(x: f32) -> f32 {
    let x = flush(x);
    if x < 0.0 {
        -1.0
    } else if x > 0.0 {
        1.0
    } else {
        0.0
    }
}

/// ARL: `(int)floorf(x)`.
pub fn arl(x: f32) -> i32 {
    f2i(floor(x))
}

/// ARR: `(int)floorf(x + 0.5f)`.
pub fn arr(x: f32) -> i32 {
    f2i(floor(add(x, 0.5)))
}

/// RCC (legacy): the reciprocal, its magnitude clamped to [5.42101e-20, 1.884467e19] (tgsi.rst).
pub fn rcc(x: f32) -> f32 {
    let r = rcp(x);
    if r > 0.0 {
        r.clamp(5.42101e-20, 1.884467e19)
    } else if r < 0.0 {
        r.clamp(-1.884467e19, -5.42101e-20)
    } else {
        r
    }
}

/// LDEXP: `ldexpf(x, n)`, the exactly rounded x·2^n (musl's `scalbnf` algorithm, which gives the
/// same unique IEEE result as glibc), flushed.
pub fn ldexp(x: f32, n: i32) -> f32 {
    flush(scalbn(flush(x), n))
}

fn scalbn(x: f32, n: i32) -> f32 {
    let mut y = x;
    let mut n = n;
    if n > 127 {
        y *= f32::from_bits(0x7f00_0000); // 2^127
        n -= 127;
        if n > 127 {
            y *= f32::from_bits(0x7f00_0000);
            n -= 127;
            if n > 127 {
                n = 127;
            }
        }
    } else if n < -126 {
        let k = f32::from_bits(0x0080_0000) * f32::from_bits(0x4b80_0000); // 2^-126 * 2^24
        y *= k;
        n += 126 - 24;
        if n < -126 {
            y *= k;
            n += 126 - 24;
            if n < -126 {
                n = -126;
            }
        }
    }
    y * f32::from_bits(((0x7f + n) as u32) << 23)
}

/// IDIV: division by zero gives 0; `i32::MIN / -1` wraps to `i32::MIN` (softpipe would trap).
pub fn idiv(a: i32, b: i32) -> i32 {
    if b == 0 {
        0
    } else {
        a.wrapping_div(b)
    }
}

/// MOD: remainder with the dividend's sign; by zero gives -1 (`~0`); `i32::MIN % -1` gives 0.
pub fn imod(a: i32, b: i32) -> i32 {
    if b == 0 {
        -1
    } else {
        a.wrapping_rem(b)
    }
}

/// UDIV: by zero gives `0xffff_ffff`.
pub fn udiv(a: u32, b: u32) -> u32 {
    a.checked_div(b).unwrap_or(u32::MAX)
}

/// UMOD: by zero gives `0xffff_ffff`.
pub fn umod(a: u32, b: u32) -> u32 {
    a.checked_rem(b).unwrap_or(u32::MAX)
}

/// IBFE: signed bitfield extract, exactly as `micro_ibfe` (offset masked to 5 bits; width 32 with
/// offset 0 copies; otherwise the width is masked to 5 bits and 0 gives 0).
pub fn ibfe(value: i32, offset: i32, width: i32) -> i32 {
    let offset = offset & 0x1f;
    if width == 32 && offset == 0 {
        return value;
    }
    let width = width & 0x1f;
    if width == 0 {
        0
    } else if width + offset < 32 {
        value.wrapping_shl((32 - width - offset) as u32) >> (32 - width)
    } else {
        value >> offset
    }
}

/// UBFE: unsigned bitfield extract, exactly as `micro_ubfe`.
pub fn ubfe(value: u32, offset: u32, width: u32) -> u32 {
    let offset = offset & 0x1f;
    if width == 32 && offset == 0 {
        return value;
    }
    let width = width & 0x1f;
    if width == 0 {
        0
    } else if width + offset < 32 {
        (value << (32 - width - offset)) >> (32 - width)
    } else {
        value >> offset
    }
}

/// BFI: insert the low `width` bits of `insert` into `base` at `offset`, as `micro_bfi` (offset
/// masked to 5 bits; width 32 returns `insert`; other widths are shifted with x86's 5-bit count).
pub fn bfi(base: u32, insert: u32, offset: u32, width: u32) -> u32 {
    let offset = offset & 0x1f;
    if width == 32 {
        insert
    } else {
        let bitmask = (1u32.wrapping_shl(width)).wrapping_sub(1) << offset;
        ((insert << offset) & bitmask) | (base & !bitmask)
    }
}

/// LSB: index of the lowest set bit, -1 for 0.
pub fn lsb(x: u32) -> i32 {
    if x == 0 {
        -1
    } else {
        x.trailing_zeros() as i32
    }
}

/// UMSB: index of the highest set bit, -1 for 0.
pub fn umsb(x: u32) -> i32 {
    31 - x.leading_zeros() as i32
}

/// IMSB: index of the highest bit differing from the sign bit, -1 for 0 and -1.
pub fn imsb(x: i32) -> i32 {
    if x < 0 {
        umsb(!x as u32)
    } else {
        umsb(x as u32)
    }
}

/// IMUL_HI: high 32 bits of the signed 64-bit product.
pub fn imul_hi(a: i32, b: i32) -> i32 {
    ((a as i64 * b as i64) >> 32) as i32
}

/// UMUL_HI: high 32 bits of the unsigned 64-bit product.
pub fn umul_hi(a: u32, b: u32) -> u32 {
    ((a as u64 * b as u64) >> 32) as u32
}

/// f32 → f16 bits, round to nearest even; NaN keeps its top payload bits and becomes quiet, as the
/// F16C `vcvtps2ph` instruction Mesa's `_mesa_float_to_half` uses on x86-64.
pub fn f32_to_f16(f: f32) -> u16 {
    let bits = f.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 0xff {
        return if man == 0 {
            sign | 0x7c00
        } else {
            sign | 0x7e00 | (man >> 13) as u16
        };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    if e <= 0 {
        // Subnormal half (or zero): shift the full significand into place with RNE.
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let round = rem > mid || (rem == mid && (half & 1) == 1);
        return sign | (half + round as u32) as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    let round = rem > 0x1000 || (rem == 0x1000 && (half & 1) == 1);
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    sign | (half + round as u32) as u16
}

/// f16 bits → f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = if exp == 0x1f {
        sign | 0x7f80_0000 | (man << 13)
    } else if exp == 0 {
        if man == 0 {
            sign
        } else {
            let mag = man as f32 * f32::from_bits(0x3380_0000); // 2^-24
            return if sign != 0 { -mag } else { mag };
        }
    } else {
        sign | ((exp + 127 - 15) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

/// `f32 → unorm` of `bits` bits: clamp to [0, 1] (NaN → 0), scale, round half to even.
pub fn f32_to_unorm(x: f32, bits: u32) -> u32 {
    let max = ((1u32 << bits) - 1) as f32;
    (saturate(x) * max).round_ties_even() as u32
}

/// `f32 → snorm` of `bits` bits (two's complement in the low bits): clamp to [-1, 1], scale, round.
pub fn f32_to_snorm(x: f32, bits: u32) -> u32 {
    let max = ((1u32 << (bits - 1)) - 1) as f32;
    let c = fmin(fmax(x, -1.0), 1.0);
    ((c * max).round_ties_even() as i32 as u32) & ((1u32 << bits) - 1)
}

/// `unorm → f32`.
pub fn unorm_to_f32(v: u32, bits: u32) -> f32 {
    v as f32 / ((1u32 << bits) - 1) as f32
}

/// `snorm → f32` (the most negative code maps to -1 as well).
pub fn snorm_to_f32(v: u32, bits: u32) -> f32 {
    let shift = 32 - bits;
    let s = ((v << shift) as i32) >> shift;
    let max = ((1u32 << (bits - 1)) - 1) as f32;
    fmax(s as f32 / max, -1.0)
}
