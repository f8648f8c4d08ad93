//! `powf` and `logf` exactly as glibc 2.28+ computes them on x86-64 machines with FMA (the
//! `__powf_fma`/`__logf_fma` variants its ifunc picks there, which the golden images were made
//! with): the same tables and the same double-precision steps, fused where GCC fused them in
//! that build (read from its disassembly). Being our own code, results do not depend on which
//! variant (SSE2, FMA) or version of glibc a machine has, and the JIT can evaluate the very same
//! arithmetic four lanes at a time (`codegen`), table for table.
//!
//! The algorithms are Szabolcs Nagy's (ARM optimized-routines, MIT/glibc): `x = 2^k z`, `z` in
//! `[0x3f330000, 2 * 0x3f330000)` as a float, split into 16 subintervals with a reciprocal `invc`
//! near their centre, `log2(x) = log1p(z * invc - 1) / ln2 + log2(c) + k` by a polynomial; then
//! `2^t = 2^(j/32) * 2^r` from a 32-entry table and a cubic. `tests/libm_glibc.rs`
//! compares every float input (unary) and millions of pairs (`powf`) with the system's glibc.

/// Table and polynomial constants of `powf`'s `log2_inline` (`__powf_log2_data`, scale 1):
/// per subinterval `[invc, logc]` as f64 bit patterns.
pub(crate) static POWF_LOG2_TAB: [[u64; 2]; 16] = [
    [0x3ff661ec79f8f3be, 0xbfdefec65b963019],
    [0x3ff571ed4aaf883d, 0xbfdb0b6832d4fca4],
    [0x3ff49539f0f010b0, 0xbfd7418b0a1fb77b],
    [0x3ff3c995b0b80385, 0xbfd39de91a6dcf7b],
    [0x3ff30d190c8864a5, 0xbfd01d9bf3f2b631],
    [0x3ff25e227b0b8ea0, 0xbfc97c1d1b3b7af0],
    [0x3ff1bb4a4a1a343f, 0xbfc2f9e393af3c9f],
    [0x3ff12358f08ae5ba, 0xbfb960cbbf788d5c],
    [0x3ff0953f419900a7, 0xbfaa6f9db6475fce],
    [0x3ff0000000000000, 0x0000000000000000],
    [0x3fee608cfd9a47ac, 0x3fb338ca9f24f53d],
    [0x3feca4b31f026aa0, 0x3fc476a9543891ba],
    [0x3feb2036576afce6, 0x3fce840b4ac4e4d2],
    [0x3fe9c2d163a1aa2d, 0x3fd40645f0c6651c],
    [0x3fe886e6037841ed, 0x3fd88e9c2c1b9ff8],
    [0x3fe767dcf5534862, 0x3fdce0a44eb17bcc],
];

/// `__powf_log2_data.poly`: `log1p(r) / ln2 ≈ A0 r^5 + A1 r^4 + A2 r^3 + A3 r^2 + A4 r`.
pub(crate) const POWF_LOG2_POLY: [u64; 5] = [
    0x3fd27616c9496e0b,
    0xbfd71969a075c67a,
    0x3fdec70a6ca7badd,
    0xbfe7154748bef6c8,
    0x3ff71547652ab82b,
];

/// `__exp2f_data.tab`: `2^(j/32)` with the exponent bits of `j/32` subtracted (added back by
/// shifting the rounded exponent into place).
pub(crate) static EXP2F_TAB: [u64; 32] = [
    0x3ff0000000000000,
    0x3fefd9b0d3158574,
    0x3fefb5586cf9890f,
    0x3fef9301d0125b51,
    0x3fef72b83c7d517b,
    0x3fef54873168b9aa,
    0x3fef387a6e756238,
    0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715,
    0x3feef1a7373aa9cb,
    0x3feedea64c123422,
    0x3feece086061892d,
    0x3feebfdad5362a27,
    0x3feeb42b569d4f82,
    0x3feeab07dd485429,
    0x3feea47eb03a5585,
    0x3feea09e667f3bcd,
    0x3fee9f75e8ec5f74,
    0x3feea11473eb0187,
    0x3feea589994cce13,
    0x3feeace5422aa0db,
    0x3feeb737b0cdc5e5,
    0x3feec49182a3f090,
    0x3feed503b23e255d,
    0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47,
    0x3fef199bdd85529c,
    0x3fef3720dcef9069,
    0x3fef5818dcfba487,
    0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da,
    0x3fefd0765b6e4540,
];

/// `__exp2f_data.shift_scaled` (`0x1.8p+52 / 32`): adding it rounds to a multiple of 1/32.
pub(crate) const EXP2F_SHIFT: u64 = 0x42e8000000000000;

/// `__exp2f_data.poly`: `2^r ≈ C0 r^3 + C1 r^2 + C2 r + 1`.
pub(crate) const EXP2F_POLY: [u64; 3] =
    [0x3fac6af84b912394, 0x3fcebfce50fac4f3, 0x3fe62e42ff0c52d6];

/// Above this `y * log2(x)`, `powf` overflows (`0x1.fffffffd1d571p+6`).
pub(crate) const POWF_OFLOW: u64 = 0x405fffffffd1d571;

/// At or below this `y * log2(x)` (-150), `powf` underflows to zero.
pub(crate) const POWF_UFLOW: u64 = 0xc062c00000000000;

/// `__logf_data.tab`: per subinterval `[invc, logc]` (natural log).
pub(crate) static LOGF_TAB: [[u64; 2]; 16] = [
    [0x3ff661ec79f8f3be, 0xbfd57bf7808caade],
    [0x3ff571ed4aaf883d, 0xbfd2bef0a7c06ddb],
    [0x3ff49539f0f010b0, 0xbfd01eae7f513a67],
    [0x3ff3c995b0b80385, 0xbfcb31d8a68224e9],
    [0x3ff30d190c8864a5, 0xbfc6574f0ac07758],
    [0x3ff25e227b0b8ea0, 0xbfc1aa2bc79c8100],
    [0x3ff1bb4a4a1a343f, 0xbfba4e76ce8c0e5e],
    [0x3ff12358f08ae5ba, 0xbfb1973c5a611ccc],
    [0x3ff0953f419900a7, 0xbfa252f438e10c1e],
    [0x3ff0000000000000, 0x0000000000000000],
    [0x3fee608cfd9a47ac, 0x3faaa5aa5df25984],
    [0x3feca4b31f026aa0, 0x3fbc5e53aa362eb4],
    [0x3feb2036576afce6, 0x3fc526e57720db08],
    [0x3fe9c2d163a1aa2d, 0x3fcbc2860d224770],
    [0x3fe886e6037841ed, 0x3fd1058bc8a07ee1],
    [0x3fe767dcf5534862, 0x3fd4043057b6ee09],
];

/// `__logf_data.ln2`.
pub(crate) const LOGF_LN2: u64 = 0x3fe62e42fefa39ef;

/// `__logf_data.poly`: `log1p(r) ≈ A0 r^4 + A1 r^3 + A2 r^2 + r`.
pub(crate) const LOGF_POLY: [u64; 3] = [0xbfd00ea348b88334, 0x3fd5575b0be00b6a, 0xbfdffffef20a4123];

/// The exponent offset both logarithms split `x` at (`0x3f330000` ≈ 0.7).
pub(crate) const OFF: u32 = 0x3f33_0000;

/// The default NaN x86 arithmetic produces for invalid operations (`0/0`, `inf - inf`).
const DEFAULT_NAN: u32 = 0xffc0_0000;

#[inline(always)]
fn d(bits: u64) -> f64 {
    f64::from_bits(bits)
}

/// `fma(a, b, c)` with one rounding, as `vfmadd` computes it (an instruction where the caller
/// was compiled with FMA, see [`powf`], else libm's correctly rounded `fma`).
#[inline(always)]
fn fma(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}

/// The reduction both logarithms share: table index, `k` and `z` for a positive normal `ix`.
#[inline(always)]
fn reduce(ix: u32) -> (usize, f64, f64) {
    let tmp = ix.wrapping_sub(OFF);
    let i = ((tmp >> 19) % 16) as usize;
    let top = tmp & 0xff80_0000;
    let iz = ix.wrapping_sub(top);
    let k = (top as i32) >> 23;
    (i, k as f64, f32::from_bits(iz) as f64)
}

/// glibc's `log2_inline` of `powf` for a positive normal float `ix` (FMA build).
#[inline(always)]
pub(crate) fn powf_log2(ix: u32) -> f64 {
    let (i, k, z) = reduce(ix);
    let [invc, logc] = POWF_LOG2_TAB[i].map(d);
    let a = POWF_LOG2_POLY.map(d);
    let r = fma(z, invc, -1.0);
    let y0 = logc + k;
    let r2 = r * r;
    let y = fma(a[0], r, a[1]);
    let p = fma(a[2], r, a[3]);
    let r4 = r2 * r2;
    let q = fma(a[4], r, y0);
    let q = fma(p, r2, q);
    fma(y, r4, q)
}

/// glibc's `exp2_inline` of `powf` (FMA build): `2^xd` rounded to float, for `|xd| < 150`;
/// `sign_bias` (0 or 1 << 16) makes it negative.
#[inline(always)]
fn powf_exp2(xd: f64, sign_bias: u64) -> f32 {
    let shift = d(EXP2F_SHIFT);
    let c = EXP2F_POLY.map(d);
    let kd = xd + shift;
    let ki = kd.to_bits();
    let kd = kd - shift;
    let r = xd - kd;
    let t = EXP2F_TAB[(ki % 32) as usize].wrapping_add(ki.wrapping_add(sign_bias) << 47);
    let s = f64::from_bits(t);
    let z = fma(c[0], r, c[1]);
    let r2 = r * r;
    let y = fma(c[2], r, 1.0);
    let y = fma(z, r2, y);
    (y * s) as f32
}

/// 0 when `iy` is not an integer, 1 when odd, 2 when even (glibc's `checkint`).
#[inline(always)]
fn checkint(iy: u32) -> u32 {
    let e = (iy >> 23) & 0xff;
    if e < 0x7f {
        return 0;
    }
    if e > 0x7f + 23 {
        return 2;
    }
    if iy & ((1 << (0x7f + 23 - e)) - 1) != 0 {
        return 0;
    }
    if iy & (1 << (0x7f + 23 - e)) != 0 {
        return 1;
    }
    2
}

/// True for ±0, ±inf and NaN.
#[inline]
pub(crate) fn zeroinfnan(i: u32) -> bool {
    i.wrapping_mul(2).wrapping_sub(1) >= 0xff00_0000 - 1
}

/// `x + y` for a NaN among them as the x86 `addss x, y` glibc executes: the first NaN, quieted.
fn nan_sum(x: f32, y: f32) -> f32 {
    let n = if x.is_nan() { x } else { y };
    f32::from_bits(n.to_bits() | 0x0040_0000)
}

/// `powf(x, y)` exactly as glibc's `__powf_fma`.
///
/// The fused steps are `f64::mul_add` (exact everywhere; a libm `fma` call unless the build
/// enables the FMA target feature). Dispatching to an FMA-compiled copy at run time would need
/// `unsafe`, which this crate keeps to the code that calls compiled kernels.
pub fn powf(x: f32, y: f32) -> f32 {
    powf_impl(x, y)
}

#[inline(always)]
fn powf_impl(x: f32, y: f32) -> f32 {
    let mut sign_bias = 0u64;
    let mut ix = x.to_bits();
    let iy = y.to_bits();
    if ix.wrapping_sub(0x0080_0000) >= 0x7f80_0000 - 0x0080_0000 || zeroinfnan(iy) {
        if zeroinfnan(iy) {
            let signalling = |v: f32| v.is_nan() && v.to_bits() & 0x0040_0000 == 0;
            if iy.wrapping_mul(2) == 0 {
                return if signalling(x) { nan_sum(x, y) } else { 1.0 };
            }
            if ix == 0x3f80_0000 {
                return if signalling(y) { nan_sum(x, y) } else { 1.0 };
            }
            if ix.wrapping_mul(2) > 0xff00_0000 || iy.wrapping_mul(2) > 0xff00_0000 {
                return nan_sum(x, y);
            }
            if ix.wrapping_mul(2) == 0x7f00_0000 {
                return 1.0;
            }
            if (ix.wrapping_mul(2) < 0x7f00_0000) == (iy & 0x8000_0000 == 0) {
                return 0.0;
            }
            return y * y;
        }
        if zeroinfnan(ix) {
            let mut x2 = x * x;
            if ix & 0x8000_0000 != 0 && checkint(iy) == 1 {
                x2 = -x2;
            }
            return if iy & 0x8000_0000 != 0 { 1.0 / x2 } else { x2 };
        }
        // x and y are nonzero and finite.
        if ix & 0x8000_0000 != 0 {
            match checkint(iy) {
                0 => return f32::from_bits(DEFAULT_NAN),
                1 => sign_bias = 1 << 16,
                _ => {}
            }
            ix &= 0x7fff_ffff;
        }
        if ix < 0x0080_0000 {
            // Subnormal x: normalise (exponent below zero, as `reduce` expects).
            ix = (f32::from_bits(ix) * f32::from_bits(0x4b00_0000)).to_bits() & 0x7fff_ffff;
            ix = ix.wrapping_sub(23 << 23);
        }
    }
    let logx = powf_log2(ix);
    let ylogx = y as f64 * logx;
    if (ylogx.to_bits() >> 47) & 0xffff >= 126f64.to_bits() >> 47 {
        let sign = |v: f32| if sign_bias != 0 { -v } else { v };
        if ylogx > d(POWF_OFLOW) {
            return sign(f32::INFINITY);
        }
        // (Between 0x1.fffffffa3aae2p+6 and the bound above glibc checks whether the rounding
        // mode rounds away from zero; in round-to-nearest it does not, and falls through.)
        if ylogx <= d(POWF_UFLOW) {
            return sign(0.0);
        }
        if ylogx < -149.0 {
            // `__math_may_uflowf`: 0x1.4p-75f squared, rounded to the smallest denormal.
            return sign(f32::from_bits(1));
        }
    }
    powf_exp2(ylogx, sign_bias)
}

/// `logf(x)` exactly as glibc's `__logf_fma`.
pub fn logf(x: f32) -> f32 {
    logf_impl(x)
}

#[inline(always)]
fn logf_impl(x: f32) -> f32 {
    let mut ix = x.to_bits();
    if ix == 0x3f80_0000 {
        return 0.0;
    }
    if ix.wrapping_sub(0x0080_0000) >= 0x7f80_0000 - 0x0080_0000 {
        if ix.wrapping_mul(2) == 0 {
            return f32::NEG_INFINITY;
        }
        if ix == 0x7f80_0000 {
            return x;
        }
        if ix & 0x8000_0000 != 0 || ix.wrapping_mul(2) >= 0xff00_0000 {
            // `(x - x) / (x - x)`: a NaN comes back quieted, anything else is invalid.
            return if x.is_nan() {
                f32::from_bits(ix | 0x0040_0000)
            } else {
                f32::from_bits(DEFAULT_NAN)
            };
        }
        ix = (x * f32::from_bits(0x4b00_0000)).to_bits();
        ix = ix.wrapping_sub(23 << 23);
    }
    logf_core(ix) as f32
}

/// The main path of [`logf`] for a positive normal `ix`, before rounding to float.
#[inline(always)]
fn logf_core(ix: u32) -> f64 {
    let tmp = ix.wrapping_sub(OFF);
    let i = ((tmp >> 19) % 16) as usize;
    let k = (tmp as i32) >> 23;
    let iz = ix.wrapping_sub(tmp & 0xff80_0000);
    let [invc, logc] = LOGF_TAB[i].map(d);
    let a = LOGF_POLY.map(d);
    let z = f32::from_bits(iz) as f64;
    let r = fma(z, invc, -1.0);
    let y0 = fma(k as f64, d(LOGF_LN2), logc);
    let y = fma(r, a[1], a[2]);
    let r2 = r * r;
    let y = fma(r2, a[0], y);
    fma(r2, y, r + y0)
}

/// `__sincosf_table[k]` (k = 0, 1): `sign[4]`, `hpi_inv` (2/pi * 2^24), `hpi` (pi/2), then the
/// cosine (c) and sine (s) coefficients interleaved as the FMA build lays them out:
/// `c0 c1 s1 c2 s2 c3 s3 c4`. Table 1 has the cosine coefficients negated.
pub(crate) static SINCOSF_TAB: [[u64; 14]; 2] = [
    [
        0x3ff0000000000000,
        0xbff0000000000000,
        0xbff0000000000000,
        0x3ff0000000000000,
        0x41645f306dc9c883,
        0x3ff921fb54442d18,
        0x3ff0000000000000,
        0xbfdffffffd0c621c,
        0xbfc555545995a603,
        0x3fa55553e1068f19,
        0x3f81107605230bc4,
        0xbf56c087e89a359d,
        0xbf2994eb3774cf24,
        0x3ef99343027bf8c3,
    ],
    [
        0x3ff0000000000000,
        0xbff0000000000000,
        0xbff0000000000000,
        0x3ff0000000000000,
        0x41645f306dc9c883,
        0x3ff921fb54442d18,
        0xbff0000000000000,
        0x3fdffffffd0c621c,
        0xbfc555545995a603,
        0xbfa55553e1068f19,
        0x3f81107605230bc4,
        0x3f56c087e89a359d,
        0xbf2994eb3774cf24,
        0xbef99343027bf8c3,
    ],
];

/// Indices into a [`SINCOSF_TAB`] row.
pub(crate) mod sc {
    pub const HPI_INV: usize = 4;
    pub const HPI: usize = 5;
    pub const C0: usize = 6;
    pub const C1: usize = 7;
    pub const S1: usize = 8;
    pub const C2: usize = 9;
    pub const S2: usize = 10;
    pub const C3: usize = 11;
    pub const S3: usize = 12;
    pub const C4: usize = 13;
}

/// `__inv_pio4`: the bits of 4/pi, for the large-argument reduction.
static INV_PIO4: [u32; 24] = [
    0x000000a2, 0x0000a2f9, 0x00a2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
    0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
    0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
];

/// pi / 2^63.
const PI63: u64 = 0x3c1921fb54442d18;

/// The top 12 bits of `|y|` (glibc's `abstop12`): what the range checks compare.
#[inline(always)]
pub(crate) fn abstop12(y: f32) -> u32 {
    (y.to_bits() >> 20) & 0x7ff
}

/// `abstop12` of pi/4, 2^-12 and 120.
pub(crate) const TOP12_PIO4: u32 = 0x3f4;
pub(crate) const TOP12_TINY: u32 = 0x398;
pub(crate) const TOP12_120: u32 = 0x42f;

/// glibc's `sinf_poly` (FMA build): the sine polynomial of `x` for even `n`, else the cosine
/// polynomial, with the coefficients of table row `p`.
#[inline(always)]
fn sinf_poly(x: f64, x2: f64, p: usize, n: i32) -> f32 {
    let t = SINCOSF_TAB[p].map(d);
    if n & 1 == 0 {
        let x3 = x2 * x;
        let s1 = fma(x2, t[sc::S3], t[sc::S2]);
        let x7 = x2 * x3;
        let s = fma(x3, t[sc::S1], x);
        fma(s1, x7, s) as f32
    } else {
        let x4 = x2 * x2;
        let c1 = fma(x2, t[sc::C1], t[sc::C0]);
        let c2 = fma(x2, t[sc::C4], t[sc::C3]);
        let x6 = x4 * x2;
        let c = fma(x4, t[sc::C2], c1);
        fma(x6, c2, c) as f32
    }
}

/// glibc's `reduce_fast`: `x - n pi/2` for |x| < 120, and `n`.
#[inline(always)]
fn reduce_fast(x: f64) -> (f64, i32) {
    let t = &SINCOSF_TAB[0];
    let r = x * d(t[sc::HPI_INV]);
    let n = ((r as i32).wrapping_add(0x80_0000)) >> 24;
    (fma(-(n as f64), d(t[sc::HPI]), x), n)
}

/// glibc's `reduce_large` for finite |x| ≥ 120 (bits `xi`): the reduced argument and `n`.
#[inline(always)]
fn reduce_large(xi: u32) -> (f64, i32) {
    let arr = &INV_PIO4[((xi >> 26) & 15) as usize..];
    let shift = (xi >> 23) & 7;
    let xi = ((xi & 0x7f_ffff) | 0x80_0000) << shift;
    let res0 = xi.wrapping_mul(arr[0]) as u64;
    let res1 = xi as u64 * arr[4] as u64;
    let res2 = xi as u64 * arr[8] as u64;
    let res0 = ((res2 >> 32) | (res0 << 32)).wrapping_add(res1);
    let n = (res0.wrapping_add(1 << 61)) >> 62;
    let res0 = res0.wrapping_sub(n << 62);
    ((res0 as i64) as f64 * d(PI63), n as i32)
}

/// `sinf`/`cosf` of glibc (`cos` = true: cosine).
#[inline(always)]
fn sincosf_impl(y: f32, cos: bool) -> f32 {
    let x = y as f64;
    let top = abstop12(y);
    let odd = cos as i32;
    if top < TOP12_PIO4 {
        if top < TOP12_TINY {
            return if cos { 1.0 } else { y };
        }
        sinf_poly(x, x * x, 0, odd)
    } else if top < TOP12_120 {
        let (x, n) = reduce_fast(x);
        let s = d(SINCOSF_TAB[0][(n & 3) as usize]);
        let p = ((n & 2) != 0) as usize;
        sinf_poly(x * s, x * x, p, n ^ odd)
    } else if top < 0x7f8 {
        let xi = y.to_bits();
        let sign = (xi >> 31) as i32;
        let (x, n) = reduce_large(xi);
        let s = d(SINCOSF_TAB[0][((n + sign) & 3) as usize]);
        let p = (((n + sign) & 2) != 0) as usize;
        sinf_poly(x * s, x * x, p, n ^ odd)
    } else if y.is_nan() {
        // `__math_invalidf`: (y - y) / (y - y) quiets a NaN.
        f32::from_bits(y.to_bits() | 0x0040_0000)
    } else {
        f32::from_bits(DEFAULT_NAN)
    }
}

/// `sinf(x)` exactly as glibc's `__sinf_fma`.
pub fn sinf(x: f32) -> f32 {
    sincosf_impl(x, false)
}

/// `cosf(x)` exactly as glibc's `__cosf_fma`.
pub fn cosf(x: f32) -> f32 {
    sincosf_impl(x, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values() {
        assert_eq!(powf(2.0, 10.0), 1024.0);
        assert_eq!(powf(4.0, 0.5), 2.0);
        assert_eq!(powf(-2.0, 3.0), -8.0);
        assert!(powf(-2.0, 0.5).is_nan());
        assert_eq!(powf(0.0, -1.0), f32::INFINITY);
        assert_eq!(powf(-0.0, -1.0), f32::NEG_INFINITY);
        assert_eq!(powf(10.0, 100.0), f32::INFINITY);
        assert_eq!(powf(10.0, -100.0), 0.0);
        assert_eq!(logf(1.0), 0.0);
        assert_eq!(logf(0.0), f32::NEG_INFINITY);
        assert_eq!(logf(f32::INFINITY), f32::INFINITY);
        assert_eq!(logf(-1.0).to_bits(), DEFAULT_NAN);
    }
}
