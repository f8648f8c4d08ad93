//! POW, EX2, LG2, SIN and COS through the JIT's inline `f64x2` code (taken when every lane of a quad has an
//! ordinary argument) against the interpreter, bit for bit, on hundreds of thousands of quads:
//! every exponent range, results that overflow, underflow or land on denormals, quads mixing
//! ordinary and special lanes (which go to the per-lane path), and batches.

use softgpu_jit::codegen::JitShader;
use softgpu_jit::exec::{NoTextures, QuadBatch, QuadShader, QuadVec4, ShaderResources};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as u32
    }

    /// A positive normal float: magnitude around 2^`center` ± 2^`spread`.
    fn normal(&mut self, center: i32, spread: u32) -> u32 {
        let e =
            (127 + center + (self.next() % (2 * spread + 1)) as i32 - spread as i32).clamp(1, 254);
        (self.next() & 0x007f_ffff) | ((e as u32) << 23)
    }

    /// An argument of the given kind: mostly ordinary, sometimes anything.
    fn arg(&mut self, kind: u32) -> u32 {
        match self.next() % 64 {
            0 => self.next(),
            1 => [
                0,
                0x8000_0000,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                0x0000_0001,
                0x3f80_0000,
            ][self.next() as usize % 7],
            _ => match kind {
                // Bases: near 1 (results near 1), anywhere, tiny, huge.
                0 => self.normal(0, 2),
                1 => self.normal(0, 126),
                // Exponents: small, large (overflow/underflow), negative.
                2 => self.normal(0, 6) | (self.next() & 0x8000_0000),
                _ => self.normal(3, 5) | (self.next() & 0x8000_0000),
            },
        }
    }
}

fn check(text: &str, kinds: [u32; 2], quads: usize, seed: u64) {
    let program = parse_program(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let interp = Interpreter::new(&program).expect("interpreter");
    let jit = JitShader::compile(&program).expect("JIT");
    let mut rng = Rng(seed);
    let res = ShaderResources {
        constants: &[],
        textures: &NoTextures,
        storage: Default::default(),
    };
    const BATCH: usize = 32;
    for round in 0..quads / BATCH {
        let inputs: Vec<QuadVec4> = (0..BATCH * 2)
            .map(|r| {
                let uniform = rng.next().is_multiple_of(8);
                let mut lane = [0u32; 4];
                let first = rng.arg(kinds[r % 2]);
                for l in lane.iter_mut() {
                    *l = if uniform {
                        first
                    } else {
                        rng.arg(kinds[r % 2])
                    };
                }
                [lane, [0; 4], [0; 4], [0; 4]]
            })
            .collect();
        let live = vec![0xF; BATCH];
        let mut out = [vec![[[0u32; 4]; 4]; BATCH], vec![[[0u32; 4]; 4]; BATCH]];
        let mut killed = [vec![0u8; BATCH], vec![0u8; BATCH]];
        for ((shader, out), killed) in [&interp as &dyn QuadShader, &jit]
            .into_iter()
            .zip(out.iter_mut())
            .zip(killed.iter_mut())
        {
            let mut batch = QuadBatch {
                count: BATCH,
                inputs: &inputs,
                inputs_stride: 2,
                system_values: &[],
                system_values_stride: 0,
                outputs: out,
                outputs_stride: 1,
                live: &live,
                killed,
            };
            shader.shade_quads(&res, &mut batch).expect("shades");
        }
        for q in 0..BATCH {
            assert_eq!(
                out[0][q],
                out[1][q],
                "round {round}, quad {q}: interpreter vs JIT on inputs {:x?} {:x?}\n{text}",
                inputs[2 * q][0],
                inputs[2 * q + 1][0]
            );
        }
    }
}

const HEADER: &str =
    "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL IN[1], GENERIC[1], PERSPECTIVE\n\
                      DCL OUT[0], COLOR\nDCL TEMP[0]\n";

#[test]
fn pow_matches_the_interpreter() {
    let text =
        format!("{HEADER}0: POW TEMP[0], IN[0].xxxx, IN[1].xxxx\n1: MOV OUT[0], TEMP[0]\n2: END\n");
    for (k, kinds) in [[0, 2], [0, 3], [1, 2], [1, 3]].into_iter().enumerate() {
        check(&text, kinds, 60_000, 11 + k as u64);
    }
}

#[test]
fn ex2_and_lg2_match_the_interpreter() {
    for (op, kinds) in [
        ("EX2", [2, 2]),
        ("EX2", [3, 3]),
        ("LG2", [0, 0]),
        ("LG2", [1, 1]),
    ] {
        let text = format!("{HEADER}0: {op} TEMP[0], IN[0].xxxx\n1: MOV OUT[0], TEMP[0]\n2: END\n");
        check(&text, kinds, 60_000, 7);
    }
}

#[test]
fn sin_and_cos_match_the_interpreter() {
    for op in ["SIN", "COS"] {
        let text = format!("{HEADER}0: {op} TEMP[0], IN[0].xxxx\n1: MOV OUT[0], TEMP[0]\n2: END\n");
        // Kinds 2 and 3 span tiny, below pi/4, reduced (< 120) and large arguments of both signs.
        check(&text, [2, 2], 60_000, 5);
        check(&text, [3, 3], 60_000, 6);
        check(&text, [1, 1], 30_000, 8);
    }
    // A denormal SIN result feeding MAX must still be flushed there.
    let text = format!(
        "{HEADER}0: SIN TEMP[0].x, IN[0].xxxx\n1: MAX TEMP[0], TEMP[0].xxxx, -TEMP[0].xxxx\n\
         2: MOV OUT[0], TEMP[0]\n3: END\n"
    );
    check(&text, [1, 1], 30_000, 9);
}

#[test]
fn pow_with_modifiers_and_swizzles_matches() {
    // Negated and absolute operands, a result feeding further arithmetic.
    let text = format!(
        "{HEADER}0: POW TEMP[0].xy, |IN[0].xxxx|, -IN[1].xxxx\n1: EX2 TEMP[0].z, -IN[1].xxxx\n\
         2: LG2 TEMP[0].w, |IN[0].xxxx|\n3: MUL OUT[0], TEMP[0], IN[0].xxxx\n4: END\n"
    );
    check(&text, [1, 2], 30_000, 3);
}

#[test]
fn pow_with_constant_exponents_matches() {
    // Immediate exponents: normal ones (no lane test, a double constant), and zero, a denormal,
    // infinity and NaN, which keep the per-lane path.
    for y in [
        "2.4", "0.41666", "-0.5", "1.0", "-3.0", "100.0", "0.0", "-0.0", "1e-40", "inf", "-inf",
        "nan",
    ] {
        let text = format!(
            "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL IN[1], GENERIC[1], PERSPECTIVE\n\
             DCL OUT[0], COLOR\nDCL TEMP[0]\nIMM[0] FLT32 {{{y}, {y}, {y}, {y}}}\n\
             0: POW TEMP[0], IN[0].xxxx, IMM[0].xxxx\n1: MOV OUT[0], TEMP[0]\n2: END\n"
        );
        check(&text, [1, 2], 6_400, 21);
    }
}
