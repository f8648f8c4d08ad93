//! The JIT leaves arithmetic results unflushed where only float arithmetic reads them
//! (`codegen::lazy`), and lets moves, selects and MIN/MAX pass such a value on. This test makes
//! denormal results on purpose and sends them through every forwarding opcode into every
//! consumer the random programs use, comparing both JIT tiers with the interpreter bit for bit:
//! a reader wrongly counted as "float only", or an operation wrongly counted as forwarding,
//! shows as a different output.

use softgpu_jit::codegen::JitShader;
use softgpu_jit::exec::{NoTextures, QuadVec4, TextureAccess};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;
use softgpu_jit::ir::Opcode;

/// Producers: arithmetic whose result the JIT may leave unflushed.
const PRODUCERS: &[&str] = &[
    "MUL TEMP[0], IN[0], IN[1]",
    "ADD TEMP[0], IN[2], -IN[3]",
    "SUB TEMP[0], IN[3], IN[2]",
    "DIV TEMP[0], IN[0], IN[3].wzyx",
    "MAD TEMP[0], IN[0], IN[1], IN[2].yxwz",
    "DP3 TEMP[0], IN[0], IN[1].yzxw",
    "LRP TEMP[0], IN[2], IN[3], IN[0]",
    "MUL TEMP[0].xz, IN[1], IN[0].wzyx",
    "FMA TEMP[0], IN[0], IN[1], IN[2].yxwz",
];

/// How the produced value reaches the consumer: directly, or through an operation that may
/// pass an unflushed value on (`{}` is the produced register).
const FORWARDERS: &[&str] = &[
    "",
    "MOV TEMP[1], {}",
    "MOV TEMP[1], -{}.yxwz",
    "ABS TEMP[1], {}",
    "MAX TEMP[1], {}, IN[3]",
    "MIN TEMP[1], IN[2].wzyx, {}",
    "CLAMP TEMP[1], {}, IN[2], IN[3]",
    "CMP TEMP[1], IN[2], {}, IN[0]",
    "UCMP TEMP[1], IN[3], IN[1], {}",
    "CND TEMP[1], {}.zwxy, {}, IN[1]",
    "MOV_SAT TEMP[1], {}",
    "MAX_SAT TEMP[1], IN[2], {}",
    // Not forwarding: each reads the bits (or computes afresh), so the value must arrive
    // flushed, and a float consumer after it sees the difference if it does not.
    "XOR TEMP[1], {}, IN[2]",
    "UADD TEMP[1], {}, IN[1]",
    "F2I TEMP[1], {}",
    "USHR TEMP[1], {}, IN[0]",
    "ADD TEMP[1], {}, IN[2]",
    "FLR TEMP[1], {}",
    "EX2 TEMP[1], {}.yyyy",
    "POW TEMP[1], {}.xxxx, IN[1].zzzz",
];

/// Consumers, written to OUT[0] from `{}` (the forwarded value) and inputs.
const CONSUMERS: &[&str] = &[
    "MOV", "ADD", "SUB", "MUL", "DIV", "MAD", "LRP", "FMA", "MIN", "MAX", "CLAMP", "SLT", "SGE",
    "SEQ", "SNE", "FSLT", "FSGE", "FSEQ", "FSNE", "CMP", "CND", "UCMP", "ABS", "FLR", "CEIL",
    "TRUNC", "ROUND", "FRC", "SSG", "DDX", "DDY", "DDX_FINE", "DDY_FINE", "RCP", "RSQ", "SQRT",
    "EX2", "LG2", "SIN", "COS", "POW", "DP2", "DP3", "DP4", "DPH", "I2F", "U2F", "F2I", "F2U",
    "NOT", "AND", "OR", "XOR", "SHL", "USHR", "UADD", "UMUL", "IMAX", "UMIN", "INEG", "IABS",
    "ISSG", "ISGE", "USEQ", "USLT", "LDEXP", "IBFE", "POPC", "UMSB", "PK2H", "LIT", "NRM",
    "KILL_IF", "IF", "UIF",
];

mod coord_hash;
mod one_quad;
use coord_hash::CoordHash;
use one_quad::run_quad;
mod splitmix;
use splitmix::Rng;

/// Inputs that make the producers' results denormal often: tiny normals (2^-70..2^-61, whose
/// products underflow) in IN[0] and IN[1], nearly equal small normals in IN[2] and IN[3]
/// (whose differences underflow), with a few NaN, zero, one and large lanes.
fn inputs(rng: &mut Rng) -> Vec<QuadVec4> {
    let mut v = vec![[[0u32; 4]; 4]; 4];
    for (reg, q) in v.iter_mut().enumerate() {
        for chan in q.iter_mut() {
            for x in chan.iter_mut() {
                let r = rng.next();
                let sign = ((r >> 8) as u32 & 1) << 31;
                *x = match (r % 16, reg) {
                    (0, _) => 0x7fc0_0000 | sign,
                    (1, _) => sign,
                    (2, _) => 0x3f80_0000 | sign,
                    (3, _) => 0x4b00_0000 | sign,
                    (_, 0 | 1) => {
                        sign | (57 + (r >> 12) as u32 % 10) << 23 | (r >> 32) as u32 & 0x7f_ffff
                    }
                    // 2^-126..2^-125 with few mantissa bits: differences land below 2^-126.
                    _ => sign | 0x0080_0000 | ((r >> 32) as u32 & 0x7f) << 16,
                };
            }
        }
    }
    v
}

fn program_text(producer: &str, forwarder: &str, consumer: &str) -> String {
    let (value, fwd) = if forwarder.is_empty() {
        ("TEMP[0]", String::new())
    } else {
        ("TEMP[1]", forwarder.replace("{}", "TEMP[0]"))
    };
    let n = Opcode::from_name(consumer).map_or(1, |o| o.num_src());
    let others = ["IN[3].yzwx", "IN[2]"];
    let mut srcs = vec![value.to_string()];
    srcs.extend(
        others
            .iter()
            .take(n.saturating_sub(1))
            .map(|s| s.to_string()),
    );
    let mut lines = vec![producer.to_string()];
    if !fwd.is_empty() {
        lines.push(fwd);
    }
    match consumer {
        "KILL_IF" => lines.push(format!("KILL_IF {value}")),
        "IF" | "UIF" => {
            for c in ["x", "y", "z", "w"] {
                lines.push(format!("{consumer} {value}.{c}{c}{c}{c}"));
                lines.push(format!("MOV OUT[0].{c}, IN[1]"));
                lines.push("ENDIF".into());
            }
        }
        _ => lines.push(format!("{consumer} OUT[0], {}", srcs.join(", "))),
    }
    numbered(&lines)
}

/// A fragment program over IN[0..3] and TEMP[0..1] writing OUT[0]: `lines`, numbered, then END.
fn numbered(lines: &[impl AsRef<str>]) -> String {
    let mut text = String::from(
        "FRAG\nDCL IN[0..3], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0..1]\n",
    );
    for (i, l) in lines.iter().map(AsRef::as_ref).chain(["END"]).enumerate() {
        text.push_str(&format!("{i:3}: {l}\n"));
    }
    text
}

/// Runs `text` through the interpreter and both JIT tiers on every input set of `quads`; panics
/// on a difference.
fn assert_tiers_match(text: &str, quads: &[Vec<QuadVec4>], textures: &dyn TextureAccess) {
    let program = parse_program(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let interp = Interpreter::new(&program).expect("the interpreter runs it");
    let tiers = [
        JitShader::compile_optimized(&program).expect("compiles"),
        JitShader::compile_fast_tier(&program).expect("compiles"),
    ];
    for inp in quads {
        let want = run_quad(&interp, inp, textures);
        for (t, jit) in tiers.iter().enumerate() {
            let got = run_quad(jit, inp, textures);
            assert_eq!(
                got, want,
                "tier {t} differs from the interpreter\ninputs {inp:x?}\n{text}"
            );
        }
    }
}

#[test]
fn unflushed_results_reach_every_reader_as_the_interpreter_computes_them() {
    let mut rng = Rng(77);
    let quads: Vec<Vec<QuadVec4>> = (0..24).map(|_| inputs(&mut rng)).collect();
    let mut programs = 0;
    for (c, consumer) in CONSUMERS.iter().enumerate() {
        for (f, forwarder) in FORWARDERS.iter().enumerate() {
            let producer = PRODUCERS[(c + f) % PRODUCERS.len()];
            let text = program_text(producer, forwarder, consumer);
            assert_tiers_match(&text, &quads, &NoTextures);
            programs += 1;
        }
    }
    assert_eq!(programs, CONSUMERS.len() * FORWARDERS.len());
}

/// A texture instruction reads the coordinates of the lanes that do not run it too (for the
/// level of detail): a result left unflushed on one lane's path must not reach another lane's
/// texture request.
#[test]
fn texture_coordinates_of_inactive_lanes_are_the_interpreters() {
    let head = "FRAG\nDCL IN[0..3], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n\
                DCL SVIEW[0], 2D, FLOAT\nDCL TEMP[0..1]\n";
    // Directly, and through a copy into the coordinate register.
    let bodies = [
        "0: UIF IN[2].xxxx\n1: MUL TEMP[0], IN[0], IN[1]\n2: ELSE\n\
         3: TEX OUT[0], TEMP[0], SAMP[0], 2D\n4: ENDIF\n5: END\n",
        "0: UIF IN[2].xxxx\n1: MUL TEMP[1], IN[0], IN[1]\n2: MOV TEMP[0], TEMP[1]\n3: ELSE\n\
         4: TEX OUT[0], TEMP[0], SAMP[0], 2D\n5: ENDIF\n6: END\n",
    ];
    for body in bodies {
        check_against_interpreter(&format!("{head}{body}"));
    }
}

/// [`assert_tiers_match`] on denormal products in every lane, lane 0 alone taking `UIF IN[2].x`,
/// with a sampler that hashes every coordinate bit.
fn check_against_interpreter(text: &str) {
    let tiny = 0x1e00_0000u32; // 2^-67
    let mut inputs = vec![[[tiny; 4]; 4]; 4];
    inputs[2][0] = [1, 0, 0, 0];
    assert_tiers_match(text, &[inputs], &CoordHash { cleared_bits: 0 });
}

/// LODQ writes x and y only: the rest of its destination keeps the value before it, which a
/// later read sees (found by the nightly-size jit_diff run).
#[test]
fn partially_written_destinations_keep_the_old_value_live() {
    let text = "FRAG\nDCL IN[0..3], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n\
                DCL SVIEW[0], 2D, FLOAT\nDCL TEMP[0..1]\n\
                0: MUL TEMP[0], IN[0], IN[1]\n\
                1: LODQ TEMP[0], IN[2], SAMP[0], 2D\n\
                2: MOV OUT[0], TEMP[0]\n3: END\n";
    check_against_interpreter(text);
}

/// FMA's NaN lanes: every combination of NaN (quiet and signalling, either sign) and ordinary
/// operands — including `inf * 0` plus a NaN — gives the interpreter's `ops::fma` result on both
/// tiers, the fused instruction's own NaN choice being replaced lane by lane.
#[test]
fn fma_nan_operands_match_the_interpreter() {
    const VALUES: [u32; 8] = [
        0x7fc0_0001,
        0xffc1_2345,
        0x7f80_0003,
        0xff81_2345,
        0x3f80_0000,
        0x0000_0000,
        0x7f80_0000,
        0x0000_0001,
    ];
    // Every (a, b, c) triple, four per quad (one per lane) and the same in each channel.
    let triples: Vec<[u32; 3]> = (0..VALUES.len().pow(3))
        .map(|i| [i % 8, i / 8 % 8, i / 64].map(|k| VALUES[k]))
        .collect();
    let quads: Vec<Vec<QuadVec4>> = triples
        .chunks(4)
        .map(|lanes| {
            (0..3)
                .map(|reg| [std::array::from_fn(|l| lanes[l][reg]); 4])
                .chain(std::iter::once([[0x3f80_0000; 4]; 4]))
                .collect()
        })
        .collect();
    for body in [
        &["FMA OUT[0], IN[0], IN[1], IN[2]"][..],
        &[
            "FMA TEMP[0], IN[0], IN[1], IN[2]",
            "ADD OUT[0], TEMP[0], IN[3]",
        ],
        &["FMA OUT[0], IN[0], IN[3], IN[2]"],
    ] {
        assert_tiers_match(&numbered(body), &quads, &NoTextures);
    }
}
