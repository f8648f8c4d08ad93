//! Cheaper instruction sequences the JIT picks where they give the same bits: a division by a
//! power of two whose reciprocal is normal becomes a multiplication by that reciprocal, and
//! rounding (FLR, CEIL, TRUNC, ROUND, FRC) of an arithmetic result skips the patch that keeps a
//! signalling NaN argument unchanged (arithmetic never returns one). Both tiers are compared
//! with the interpreter bit for bit on the inputs where a wrong rewrite would show: NaNs of both
//! kinds, infinities, denormals, and quotients that overflow or land in the denormal range.

mod one_quad;
use one_quad::run_quad;
use softgpu_jit::codegen::JitShader;
use softgpu_jit::exec::{NoTextures, QuadShader, QuadVec4};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;

/// Dividends: NaNs (quiet, signalling, either sign, with payloads), infinities, zeros,
/// denormals, the extremes of the normal range, and ordinary values.
const DIVIDENDS: [u32; 16] = [
    0x7fc0_0001,
    0xff80_0001,
    0x7fa0_0000,
    0x7f80_0000,
    0xff80_0000,
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x807f_ffff,
    0x0080_0000,
    0x0080_0001,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x3f80_0000,
    0xc2f6_e979,
    0x3eaa_aaab,
];

/// Divisors: powers of two at and beyond the edges of the rewrite (2^-127 is denormal, 2^127's
/// reciprocal is denormal), negative ones, and values that are not powers of two.
const DIVISORS: [&str; 12] = [
    "4.0", "-8.0", "0.5", "1.0", "-1.0", "2.0", "0x1p-126", "0x1p126", "0x1p127", "0x1p-127",
    "3.0", "0.1",
];

fn run(shader: &dyn QuadShader, inputs: &[QuadVec4]) -> QuadVec4 {
    let (result, out) = run_quad(shader, inputs, &NoTextures);
    result.expect("runs");
    out
}

fn assert_matches(text: &str) {
    let program = parse_program(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let interp = Interpreter::new(&program).expect("the interpreter runs it");
    let tiers = [
        JitShader::compile_optimized(&program).expect("compiles"),
        JitShader::compile_fast_tier(&program).expect("compiles"),
    ];
    for chunk in DIVIDENDS.chunks(4) {
        for shift in 0..4 {
            let lanes: [u32; 4] = std::array::from_fn(|l| chunk[(l + shift) % 4]);
            let input: QuadVec4 =
                std::array::from_fn(|c| std::array::from_fn(|l| lanes[(l + c) % 4]));
            let inputs = vec![input, [[0x7f80_0000; 4]; 4]];
            let want = run(&interp, &inputs);
            for (t, jit) in tiers.iter().enumerate() {
                assert_eq!(
                    run(jit, &inputs),
                    want,
                    "tier {t}, inputs {inputs:x?}\n{text}"
                );
            }
        }
    }
}

fn hexfloat(s: &str) -> f32 {
    match s.strip_prefix("0x1p") {
        Some(e) => 2f32.powi(e.parse().expect("exponent")),
        None => s.parse().expect("float"),
    }
}

#[test]
fn divisions_by_constants_match_the_interpreter() {
    for d in DIVISORS {
        let bits = hexfloat(d).to_bits();
        let text = format!(
            "FRAG\nDCL IN[0..1], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0]\n\
             IMM[0] UINT32 {{{bits}, {bits}, {bits}, {bits}}}\n\
             0: DIV TEMP[0], IN[0], IMM[0]\n1: MOV OUT[0], TEMP[0]\n2: END\n"
        );
        assert_matches(&text);
    }
}

#[test]
fn rounding_of_arithmetic_results_and_of_raw_bits_match_the_interpreter() {
    for op in ["FLR", "CEIL", "TRUNC", "ROUND", "FRC"] {
        // Of a raw input (may be a signalling NaN), of a sum (inf - inf and NaN + x give
        // quiet NaNs), and of a negated product.
        for body in [
            format!("0: {op} OUT[0], IN[0]\n1: END\n"),
            format!("0: ADD TEMP[0], IN[0], -IN[1]\n1: {op} OUT[0], TEMP[0]\n2: END\n"),
            format!("0: MUL TEMP[0], IN[0], IN[0].yzwx\n1: {op} OUT[0], -TEMP[0]\n2: END\n"),
        ] {
            let text = format!(
                "FRAG\nDCL IN[0..1], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0]\n{body}"
            );
            assert_matches(&text);
        }
    }
}
