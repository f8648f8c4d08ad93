//! Per-opcode semantics of the interpreter: float edge cases (NaN, infinities, denormals,
//! signed zeros), integer overflow and division by zero as softpipe/TGSI define them, modifiers,
//! swizzles, write masks and saturation.
mod interp_util;
use interp_util::*;

const NAN: u32 = 0x7fc0_0000;
/// Mesa's rounded log2(e) in `micro_lg2` (deliberately not `LOG2_E`).
#[allow(clippy::approx_constant)]
const MESA_LOG2_E: f32 = 1.442695;
const DENORM: u32 = 0x0000_0400;

/// Runs `OP OUT[0], IN[0]…` with the given sources (all lanes equal) and returns lane 0 bits.
fn op_u(op: &str, srcs: &[[u32; 4]]) -> [u32; 4] {
    let operands: Vec<String> = (0..srcs.len()).map(|i| format!("IN[{i}]")).collect();
    let inputs: Vec<_> = srcs.iter().map(|s| uvec4(*s)).collect();
    lane0_u(
        &alu(
            &[],
            &format!("{op} OUT[0], {}", operands.join(", ")),
            &inputs,
        )[0],
    )
}

fn op_f(op: &str, srcs: &[[f32; 4]]) -> [f32; 4] {
    let s: Vec<[u32; 4]> = srcs.iter().map(|v| v.map(f32::to_bits)).collect();
    op_u(op, &s).map(f32::from_bits)
}

fn b(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn float_arithmetic_and_denormals() {
    assert_eq!(
        op_f(
            "ADD",
            &[
                [1.0, -0.0, f32::INFINITY, 1e30],
                [2.0, 0.0, f32::NEG_INFINITY, 1e30]
            ]
        )[..2],
        [3.0, 0.0]
    );
    let r = op_u(
        "ADD",
        &[
            [b(1.0), b(-0.0), b(f32::INFINITY), DENORM],
            [b(2.0), b(-0.0), b(f32::NEG_INFINITY), 0],
        ],
    );
    assert_eq!(r[1], b(-0.0));
    assert!(f32::from_bits(r[2]).is_nan(), "inf - inf is NaN");
    assert_eq!(r[3], 0, "denormal input reads as zero");
    // Denormal results flush to zero with their sign.
    let r = op_u(
        "MUL",
        &[[b(1e-30), b(-1e-30), 0, 0], [b(1e-10), b(1e-10), 0, 0]],
    );
    assert_eq!(r[..2], [0, 0x8000_0000]);
    // DIV by a denormal divides by zero.
    assert_eq!(
        op_u("DIV", &[[b(1.0); 4], [DENORM; 4]])[0],
        b(f32::INFINITY)
    );
    // MAD rounds after the multiply: (1 + 2^-12)^2 - 1 loses the 2^-24 term.
    let x = 1.0 + 1.0 / 4096.0;
    let r = op_f("MAD", &[[x; 4], [x; 4], [-1.0; 4]]);
    assert_eq!(r[0], (x * x) - 1.0);
    let r = op_f("FMA", &[[x; 4], [x; 4], [-1.0; 4]]);
    assert_eq!(r[0], x.mul_add(x, -1.0));
    assert_ne!(x.mul_add(x, -1.0), (x * x) - 1.0);
}

#[test]
fn transcendentals_match_libm_calls() {
    let r = op_f("RCP", &[[0.0, -0.0, 4.0, f32::INFINITY]]);
    assert_eq!(r[0], f32::INFINITY);
    let r = op_u("RCP", &[[b(-0.0), 0, 0, 0]]);
    assert_eq!(r, [b(f32::NEG_INFINITY); 4], "scalar ops replicate .x");
    assert!(
        op_f("RSQ", &[[-2.0; 4]])[0].is_nan(),
        "RSQ takes no absolute value"
    );
    assert_eq!(op_f("RSQ", &[[4.0; 4]])[0], 0.5);
    assert_eq!(op_f("EX2", &[[3.0; 4]])[0], 8.0);
    assert_eq!(op_f("EX2", &[[-1.5; 4]])[0], 2f32.powf(-1.5));
    assert_eq!(op_f("LG2", &[[8.0; 4]])[0], 8f32.ln() * MESA_LOG2_E);
    assert_eq!(op_f("LG2", &[[0.0; 4]])[0], f32::NEG_INFINITY);
    assert_eq!(op_f("POW", &[[2.0; 4], [0.5; 4]])[0], 2f32.powf(0.5));
    assert_eq!(op_f("SIN", &[[1.0; 4]])[0], 1f32.sin());
    assert_eq!(op_f("COS", &[[1.0; 4]])[0], 1f32.cos());
    assert_eq!(
        op_u("SIN", &[[DENORM; 4]])[0],
        DENORM,
        "glibc returns tiny arguments as is"
    );
    assert_eq!(op_f("SQRT", &[[2.0; 4]])[0], 2f32.sqrt());
}

#[test]
fn rounding_family() {
    assert_eq!(
        op_f("ROUND", &[[0.5, 1.5, 2.5, -2.5]]),
        [0.0, 2.0, 2.0, -2.0]
    );
    assert_eq!(
        op_f("FLR", &[[-0.5, 1.5, -2.0, 2.9]]),
        [-1.0, 1.0, -2.0, 2.0]
    );
    assert_eq!(
        op_f("CEIL", &[[-0.5, 1.5, -2.0, 2.1]]),
        [-0.0, 2.0, -2.0, 3.0]
    );
    assert_eq!(
        op_f("TRUNC", &[[-0.5, 1.5, -2.7, 2.9]]),
        [-0.0, 1.0, -2.0, 2.0]
    );
    assert_eq!(
        op_f("FRC", &[[-0.25, 1.5, -2.0, 2.75]]),
        [0.75, 0.5, 0.0, 0.75]
    );
    assert_eq!(
        op_u("FLR", &[[DENORM | 0x8000_0000; 4]])[0],
        0x8000_0000,
        "DAZ: floor(-denormal) = -0"
    );
    assert_eq!(
        op_f("SSG", &[[-3.0, 0.0, 7.0, -0.0]]),
        [-1.0, 0.0, 1.0, 0.0]
    );
    assert_eq!(op_u("SSG", &[[NAN; 4]])[0], 0);
}

#[test]
fn min_max_nan_and_zero_ties() {
    let r = op_u(
        "MIN",
        &[
            [NAN, b(1.0), b(-0.0), b(0.0)],
            [b(2.0), NAN, b(0.0), b(-0.0)],
        ],
    );
    assert_eq!(r, [b(2.0), b(1.0), b(-0.0), b(0.0)]);
    let r = op_u(
        "MAX",
        &[
            [NAN, b(1.0), b(-0.0), b(0.0)],
            [b(2.0), NAN, b(0.0), b(-0.0)],
        ],
    );
    assert_eq!(r, [b(2.0), b(1.0), b(-0.0), b(0.0)]);
    let r = op_f("CLAMP", &[[-1.0, 0.5, 3.0, 2.0], [0.0; 4], [1.0; 4]]);
    assert_eq!(r, [0.0, 0.5, 1.0, 1.0]);
}

#[test]
fn saturate_modifier() {
    let out = alu(
        &[],
        "MOV_SAT OUT[0], IN[0]\nADD_SAT OUT[1], IN[0], IN[0]",
        &[uvec4([NAN, b(-0.0), b(0.25), b(7.0)])],
    );
    assert_eq!(lane0_u(&out[0]), [0, 0, b(0.25), b(1.0)]);
    assert_eq!(lane0_f(&out[1]), [0.0, 0.0, 0.5, 1.0]);
}

#[test]
fn comparisons() {
    let a = [1.0, 2.0, f32::NAN, -0.0];
    let bb = [2.0, 2.0, f32::NAN, 0.0];
    assert_eq!(op_f("SLT", &[a, bb]), [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(op_f("SGE", &[a, bb]), [0.0, 1.0, 0.0, 1.0]);
    assert_eq!(op_f("SEQ", &[a, bb]), [0.0, 1.0, 0.0, 1.0]);
    assert_eq!(op_f("SNE", &[a, bb]), [1.0, 0.0, 1.0, 0.0]);
    assert_eq!(op_f("SGT", &[a, bb]), [0.0, 0.0, 0.0, 0.0]);
    assert_eq!(op_f("SLE", &[a, bb]), [1.0, 1.0, 0.0, 1.0]);
    let a = a.map(f32::to_bits);
    let bb = bb.map(f32::to_bits);
    assert_eq!(op_u("FSLT", &[a, bb]), [!0, 0, 0, 0]);
    assert_eq!(op_u("FSGE", &[a, bb]), [0, !0, 0, !0]);
    assert_eq!(op_u("FSEQ", &[a, bb]), [0, !0, 0, !0]);
    assert_eq!(op_u("FSNE", &[a, bb]), [!0, 0, !0, 0]);
    assert_eq!(
        op_u("FSEQ", &[[DENORM; 4], [0; 4]])[0],
        !0,
        "DAZ compares denormals as zero"
    );
    let x = [5, (-3i32) as u32, 0x8000_0000, 7];
    let y = [5, 2, 0x7fff_ffff, 8];
    assert_eq!(op_u("ISLT", &[x, y]), [0, !0, !0, !0]);
    assert_eq!(op_u("ISGE", &[x, y]), [!0, 0, 0, 0]);
    assert_eq!(op_u("USLT", &[x, y]), [0, 0, 0, !0]);
    assert_eq!(op_u("USGE", &[x, y]), [!0, !0, !0, 0]);
    assert_eq!(op_u("USEQ", &[x, y]), [!0, 0, 0, 0]);
    assert_eq!(op_u("USNE", &[x, y]), [0, !0, !0, !0]);
    assert_eq!(
        op_f("CMP", &[[-1.0, 0.0, -0.0, f32::NAN], [1.0; 4], [2.0; 4]]),
        [1.0, 2.0, 2.0, 2.0]
    );
    assert_eq!(
        op_u("UCMP", &[[0, 1, 0x8000_0000, 0], [7; 4], [9; 4]]),
        [9, 7, 7, 9]
    );
}

#[test]
fn conversions_follow_x86() {
    assert_eq!(
        op_u("F2I", &[[b(-1.7), b(3e9), NAN, b(f32::NEG_INFINITY)]]),
        [(-1i32) as u32, 0x8000_0000, 0x8000_0000, 0x8000_0000]
    );
    assert_eq!(
        op_u("F2U", &[[b(-1.0), b(3e9), NAN, b(5e9)]]),
        [0xffff_ffff, 3_000_000_000, 0x8000_0000, 0]
    );
    assert_eq!(
        op_u(
            "F2U",
            &[[b(-3e9), b(f32::INFINITY), b(-0.5), b(2147483648.0)]]
        ),
        [0x8000_0000, 0, 0, 0x8000_0000]
    );
    assert_eq!(
        op_f(
            "I2F",
            &[[(-7i32) as u32, 16_777_217, 0x8000_0000, 0]].map(|v| v.map(f32::from_bits))
        ),
        [-7.0, 16_777_216.0, -2147483648.0, 0.0]
    );
    assert_eq!(
        op_u("U2F", &[[0xffff_ffff, 1, 0, 0]]).map(f32::from_bits),
        [4294967296.0, 1.0, 0.0, 0.0]
    );
}

#[test]
fn integer_arithmetic_and_division_by_zero() {
    let min = i32::MIN as u32;
    let m1 = (-1i32) as u32;
    assert_eq!(
        op_u("IDIV", &[[7, (-7i32) as u32, 5, min], [2, 2, 0, m1]]),
        [3, (-3i32) as u32, 0, min]
    );
    assert_eq!(
        op_u("MOD", &[[7, (-7i32) as u32, 5, min], [2, 2, 0, m1]]),
        [1, m1, m1, 0]
    );
    assert_eq!(
        op_u("UDIV", &[[7, 9, 5, 0], [2, 0, 5, 0]]),
        [3, u32::MAX, 1, u32::MAX]
    );
    assert_eq!(
        op_u("UMOD", &[[7, 9, 5, 0], [2, 0, 5, 0]]),
        [1, u32::MAX, 0, u32::MAX]
    );
    assert_eq!(
        op_u("UADD", &[[u32::MAX, 1, 0, 0], [1, 2, 0, 0]])[..2],
        [0, 3]
    );
    assert_eq!(
        op_u("UMUL", &[[0x10000, 3, 0, 0], [0x10000, 5, 0, 0]])[..2],
        [0, 15]
    );
    assert_eq!(
        op_u(
            "UMAD",
            &[[0x10000, 3, 0, 0], [0x10000, 5, 0, 0], [1, 1, 0, 0]]
        )[..2],
        [1, 16]
    );
    assert_eq!(op_u("INEG", &[[min, 5, 0, 0]])[..2], [min, (-5i32) as u32]);
    assert_eq!(op_u("IABS", &[[min, (-5i32) as u32, 0, 0]])[..2], [min, 5]);
    assert_eq!(op_u("ISSG", &[[min, 0, 9, 0]])[..3], [m1, 0, 1]);
    assert_eq!(op_u("IMAX", &[[min, 3, 0, 0], [m1, 2, 0, 0]])[..2], [m1, 3]);
    assert_eq!(
        op_u("IMIN", &[[min, 3, 0, 0], [m1, 2, 0, 0]])[..2],
        [min, 2]
    );
    assert_eq!(op_u("UMAX", &[[min, 3, 0, 0], [m1, 2, 0, 0]])[..2], [m1, 3]);
    assert_eq!(
        op_u("UMIN", &[[min, 3, 0, 0], [m1, 2, 0, 0]])[..2],
        [min, 2]
    );
    assert_eq!(
        op_u(
            "UMUL_HI",
            &[[u32::MAX, 0x10000, 0, 0], [u32::MAX, 0x10000, 0, 0]]
        )[..2],
        [0xffff_fffe, 1]
    );
    assert_eq!(
        op_u("IMUL_HI", &[[m1, min, 0, 0], [m1, min, 0, 0]])[..2],
        [0, 0x4000_0000]
    );
}

#[test]
fn shifts_mask_the_count() {
    assert_eq!(
        op_u("SHL", &[[1, 1, 1, 3], [4, 32, 33, 31]]),
        [16, 1, 2, 0x8000_0000]
    );
    assert_eq!(
        op_u("USHR", &[[0x8000_0000; 4], [4, 32, 33, 31]]),
        [0x0800_0000, 0x8000_0000, 0x4000_0000, 1]
    );
    assert_eq!(
        op_u("ISHR", &[[0x8000_0000; 4], [4, 32, 33, 31]]),
        [0xf800_0000, 0x8000_0000, 0xc000_0000, u32::MAX]
    );
}

#[test]
fn bit_operations() {
    assert_eq!(op_u("NOT", &[[0, 1, 0, 0]])[..2], [u32::MAX, 0xffff_fffe]);
    assert_eq!(op_u("AND", &[[0b1100; 4], [0b1010; 4]])[0], 0b1000);
    assert_eq!(op_u("OR", &[[0b1100; 4], [0b1010; 4]])[0], 0b1110);
    assert_eq!(op_u("XOR", &[[0b1100; 4], [0b1010; 4]])[0], 0b0110);
    assert_eq!(op_u("BREV", &[[1, 0, 0, 0]])[0], 0x8000_0000);
    assert_eq!(op_u("POPC", &[[u32::MAX, 0, 0b1011, 0]])[..3], [32, 0, 3]);
    assert_eq!(op_u("LSB", &[[0, 8, 0x8000_0000, 1]]), [u32::MAX, 3, 31, 0]);
    assert_eq!(
        op_u("UMSB", &[[0, 8, 0x8000_0000, 1]]),
        [u32::MAX, 3, 31, 0]
    );
    assert_eq!(
        op_u("IMSB", &[[0, 8, 0x8000_0000, u32::MAX]]),
        [u32::MAX, 3, 30, u32::MAX]
    );
}

#[test]
fn bitfield_extract_and_insert() {
    let v = 0xdead_beefu32;
    // (value, offset, width)
    assert_eq!(
        op_u("UBFE", &[[v; 4], [4, 0, 8, 28], [8, 32, 0, 8]]),
        [0xee, v, 0, 0xd]
    );
    assert_eq!(
        op_u("IBFE", &[[v; 4], [4, 0, 8, 28], [8, 32, 0, 8]]),
        [0xffff_ffee, v, 0, 0xffff_fffd]
    );
    // Width 32 with a non-zero offset masks the width to 0.
    assert_eq!(op_u("UBFE", &[[v; 4], [4; 4], [32; 4]])[0], 0);
    // (base, insert, offset, width)
    assert_eq!(
        op_u(
            "BFI",
            &[[0; 4], [0xff, 0xff, 0x3, 7], [8, 0, 30, 3], [4, 32, 4, 0]]
        ),
        [0xf00, 0xff, 0xc000_0000, 0]
    );
}

#[test]
fn ldexp_is_exact_and_flushes() {
    let r = op_u(
        "LDEXP",
        &[
            [b(1.5), b(1.0), b(1.0), b(3.0)],
            [3, (-126i32) as u32, (-127i32) as u32, 200],
        ],
    );
    assert_eq!(r, [b(12.0), b(f32::MIN_POSITIVE), 0, b(f32::INFINITY)]);
}

#[test]
fn dot_products_replicate() {
    let a = vec4([1.0, 2.0, 3.0, 4.0]);
    let c = vec4([5.0, 6.0, 7.0, 8.0]);
    let out = alu(&[], "DP2 OUT[0], IN[0], IN[1]\nDP3 OUT[1], IN[0], IN[1]\nDP4 OUT[2], IN[0], IN[1]\nDPH OUT[3], IN[0], IN[1]", &[a, c]);
    assert_eq!(lane0_f(&out[0]), [17.0; 4]);
    assert_eq!(lane0_f(&out[1]), [38.0; 4]);
    assert_eq!(lane0_f(&out[2]), [70.0; 4]);
    assert_eq!(lane0_f(&out[3]), [46.0; 4]);
    let out = alu(&[], "DP2A OUT[0], IN[0], IN[1], IN[1].wwww", &[a, c]);
    assert_eq!(lane0_f(&out[0]), [25.0; 4]);
}

#[test]
fn legacy_vector_ops() {
    let out = alu(
        &[],
        "LIT OUT[0], IN[0]\nDST OUT[1], IN[0], IN[1]\nXPD OUT[2], IN[0], IN[1]\nSCS OUT[3], IN[1].wwww",
        &[vec4([2.0, 3.0, 0.0, 2.0]), vec4([1.0, 0.5, 0.0, 0.0])],
    );
    assert_eq!(lane0_f(&out[0]), [1.0, 2.0, 9.0, 1.0]);
    assert_eq!(lane0_f(&out[1]), [1.0, 1.5, 0.0, 0.0]);
    assert_eq!(lane0_f(&out[2]), [0.0, 0.0, -2.0, 1.0]);
    assert_eq!(lane0_f(&out[3]), [1.0, 0.0, 0.0, 1.0]);
    // LIT: z is 0 when x <= 0; the exponent is clamped to [-128, 128].
    let out = alu(
        &[],
        "LIT OUT[0], IN[0]\nLIT OUT[1], IN[1]\nLIT OUT[2], IN[1].xyzx",
        &[vec4([-1.0, 3.0, 0.0, 2.0]), vec4([1.0, 0.99, 0.0, 1000.0])],
    );
    assert_eq!(lane0_f(&out[0]), [1.0, 0.0, 0.0, 1.0]);
    assert_eq!(lane0_f(&out[1])[2], 0.99f32.powf(128.0));
    assert_eq!(lane0_f(&out[2])[2], 0.99);
    let out = alu(
        &[],
        "EXP OUT[0], IN[0].xxxx\nLOG OUT[1], IN[0].yyyy\nNRM OUT[2], IN[1]",
        &[vec4([2.5, -8.0, 0.0, 0.0]), vec4([3.0, 0.0, 4.0, 9.0])],
    );
    assert_eq!(lane0_f(&out[0]), [4.0, 0.5, 2f32.powf(2.5), 1.0]);
    assert_eq!(lane0_f(&out[1]), [3.0, 1.0, 8f32.ln() * MESA_LOG2_E, 1.0]);
    assert_eq!(lane0_f(&out[2]), [0.6, 0.0, 0.8, 1.0]);
    let out = alu(
        &[],
        "SFL OUT[0], IN[0], IN[0]\nSTR OUT[1], IN[0], IN[0]\nX2D OUT[2], IN[0], IN[1], IN[1]",
        &[vec4([1.0, 2.0, 3.0, 4.0]), vec4([1.0, 2.0, 3.0, 4.0])],
    );
    assert_eq!(lane0_f(&out[0]), [0.0; 4]);
    assert_eq!(lane0_f(&out[1]), [1.0; 4]);
    assert_eq!(lane0_f(&out[2]), [6.0, 13.0, 6.0, 13.0]);
}

#[test]
fn pack_unpack() {
    let out = alu(
        &[],
        "PK2H OUT[0], IN[0]\nUP2H OUT[1], OUT[0].xxxx",
        &[vec4([1.0, -2.0, 0.0, 0.0])],
    );
    assert_eq!(lane0_u(&out[0])[0], 0x3c00 | 0xc000 << 16);
    assert_eq!(lane0_f(&out[1]), [1.0, -2.0, 1.0, -2.0]);
    let out = alu(
        &[],
        "PK4UB OUT[0], IN[0]\nUP4UB OUT[1], OUT[0].xxxx\nPK4B OUT[2], IN[0]\nPK2US OUT[3], IN[0]",
        &[vec4([1.0, 0.5, -1.0, 2.0])],
    );
    assert_eq!(lane0_u(&out[0])[0], 0xff00_80ff);
    assert_eq!(lane0_f(&out[1]), [1.0, 128.0 / 255.0, 0.0, 1.0]);
    assert_eq!(lane0_u(&out[2])[0], 0x7f81_407f);
    assert_eq!(lane0_u(&out[3])[0], 0x8000_ffff);
    let out = alu(
        &[],
        "UP4B OUT[0], IN[0].xxxx\nUP2US OUT[1], IN[0].xxxx",
        &[uvec4([0x8081_7f00, 0, 0, 0])],
    );
    assert_eq!(lane0_f(&out[0]), [0.0, 1.0, -1.0, -1.0]);
    assert_eq!(
        lane0_f(&out[1]),
        [
            0x7f00 as f32 / 65535.0,
            0x8081 as f32 / 65535.0,
            0x7f00 as f32 / 65535.0,
            0x8081 as f32 / 65535.0
        ]
    );
}

#[test]
fn source_modifiers_swizzles_and_write_masks() {
    let inputs = [vec4([1.0, -2.0, 3.0, -4.0])];
    let out = alu(&[], "MOV OUT[0], -IN[0].wzyx\nMOV OUT[1], |IN[0]|\nMOV OUT[2], -|IN[0]|\nMOV OUT[3].yw, IN[0].xxxx", &inputs);
    assert_eq!(lane0_f(&out[0]), [4.0, -3.0, 2.0, -1.0]);
    assert_eq!(lane0_f(&out[1]), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(lane0_f(&out[2]), [-1.0, -2.0, -3.0, -4.0]);
    assert_eq!(lane0_f(&out[3]), [0.0, 1.0, 0.0, 1.0]);
    // Integer opcodes negate as integers; float ones flip the sign bit (also of NaN).
    let out = alu(
        &[],
        "UADD OUT[0], -IN[0], IN[1]\nMOV OUT[1], -IN[1]",
        &[uvec4([5, 0, 0, 0]), uvec4([7, NAN, 0, 0])],
    );
    assert_eq!(lane0_u(&out[0])[0], 2);
    assert_eq!(lane0_u(&out[1])[1], NAN | 0x8000_0000);
    // The destination may alias a source: all channels are read first.
    let out = alu(
        &[],
        "MOV OUT[0], IN[0]\nADD OUT[0], OUT[0].yxwz, OUT[0]",
        &inputs,
    );
    assert_eq!(lane0_f(&out[0]), [-1.0, -1.0, -1.0, -1.0]);
}

#[test]
fn undeclared_registers_read_zero() {
    let r = Run {
        inputs: vec![vec4([1.0; 4])],
        ..Run::default()
    };
    let (out, _) = r
        .go("FRAG\nDCL IN[0]\nDCL OUT[0]\nDCL CONST[0][0..3]\n  0: ADD OUT[0], IN[5], CONST[0][2]\n  1: ADD OUT[0].y, IN[0], CONST[3][1]\n  2: MOV OUT[7], IN[0]\n  3: END\n")
        .unwrap();
    assert_eq!(lane0_f(&out[0]), [0.0, 1.0, 0.0, 0.0]);
}
