//! `opt::lpmath`: the rewritten programs compute exactly what the scalar model of gallivm's
//! algorithms (`lpmath::model`) computes, lane by lane, through the interpreter and the JIT;
//! consecutive scalar instructions share one expansion only when that keeps the meaning;
//! writemasks, `_SAT`, source swizzles and modifiers, declarations and labels survive.
//! (That the model is llvmpipe's bits is checked against llvmpipe renders: see
//! `tests/lpmath_golden.rs` and the module documentation.)

use softgpu_jit::codegen::JitShader;
use softgpu_jit::exec::{NoTextures, QuadIo, QuadShader, QuadVec4, ShaderResources};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::{parse_program, print_program};
use softgpu_jit::ir::validate::validate;
use softgpu_jit::ir::MathMode;
use softgpu_jit::ir::{Opcode, Program, RegisterFile};
use softgpu_jit::opt::lpmath::{model, rewrite};

/// xorshift64: deterministic inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Special encodings (±0, denormals, ±inf, NaNs with payloads), shader-typical ranges and
    /// random bits.
    fn value(&mut self) -> u32 {
        let r = self.next();
        let bits = (r >> 32) as u32;
        match r % 16 {
            0 => [
                0,
                0x8000_0000,
                1,
                0x807f_ffff,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                0x7fa0_0001,
                0xffc1_2345,
                0x3f80_0000,
                0xbf80_0000,
                0x4300_0000,
                0xc2fe_0000,
                0x42fe_0000,
                0x7f7f_ffff,
                0x0080_0000,
            ][(bits % 16) as usize],
            1..=3 => bits,
            4 | 5 => ((bits as i32) as f32 / 8_388_608.0).to_bits(),
            6 | 7 => (bits as f32 / 4_294_967_296.0).to_bits(),
            8 | 9 => ((bits as i32) as f32 / 65_536.0).to_bits(),
            _ => 0x3000_0000 + bits % 0x1080_0000,
        }
    }
}

/// Runs `program` on one quad (IN[0], IN[1] as given) and returns OUT[0].
fn run(shader: &dyn QuadShader, inputs: &[QuadVec4; 2]) -> QuadVec4 {
    let mut outputs = vec![[[0u32; 4]; 4]; 1];
    let buffers: [&[[u32; 4]]; 0] = [];
    let resources = ShaderResources {
        constants: &buffers,
        textures: &NoTextures,
        storage: Default::default(),
    };
    let mut io = QuadIo {
        inputs,
        system_values: &[],
        outputs: &mut outputs,
        live: 0xf,
    };
    shader.shade_quad(&resources, &mut io).expect("runs");
    outputs[0]
}

fn parse(text: &str) -> Program {
    parse_program(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn count(program: &Program, op: Opcode) -> usize {
    program
        .instructions
        .iter()
        .filter(|i| i.opcode == op)
        .count()
}

/// `f32` bits equal, NaNs compared by payload too.
fn same(a: u32, b: f32) -> bool {
    a == b.to_bits()
}

/// Four scalar instructions of `op` (one per component, which the rewrite merges into one
/// expansion) checked against the model on `quads` random quads, through both executors.
fn check_op(op: &str, model: impl Fn(f32, f32) -> f32, quads: usize) {
    let two = op == "POW";
    let src = |c: &str| {
        if two {
            format!("IN[0].{c}{c}{c}{c}, IN[1].{c}{c}{c}{c}")
        } else {
            format!("IN[0].{c}{c}{c}{c}")
        }
    };
    let text = format!(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL IN[1], GENERIC[1], PERSPECTIVE\n\
         DCL OUT[0], COLOR\nDCL TEMP[0]\n\
         0: {op} TEMP[0].x, {}\n1: {op} TEMP[0].y, {}\n2: {op} TEMP[0].z, {}\n\
         3: {op} TEMP[0].w, {}\n4: MOV OUT[0], TEMP[0]\n5: END\n",
        src("x"),
        src("y"),
        src("z"),
        src("w")
    );
    let original = parse(&text);
    let rewritten = rewrite(&original);
    validate(&rewritten).unwrap_or_else(|e| panic!("{e:?}\n{}", print_program(&rewritten)));
    assert_eq!(count(&rewritten, Opcode::from_name(op).unwrap()), 0);
    // One shared expansion: log2 has a single DIV, exp2 a single FLR, sin/cos a single I2F.
    let marker = match op {
        "LG2" | "POW" => Opcode::DIV,
        "EX2" => Opcode::FLR,
        _ => Opcode::I2F,
    };
    assert_eq!(
        count(&rewritten, marker),
        1,
        "{}",
        print_program(&rewritten)
    );
    let interp = Interpreter::new(&rewritten).expect("decodes");
    let jit = JitShader::compile(&rewritten).expect("compiles");
    // The original program in llvmpipe math: EX2, LG2 and POW native, both tiers.
    let native = [true, false].map(|optimize| {
        JitShader::compile_tier_math(&original, MathMode::Llvmpipe, optimize).expect("compiles")
    });
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ op.len() as u64);
    for q in 0..quads {
        let inputs: [QuadVec4; 2] =
            std::array::from_fn(|_| std::array::from_fn(|_| std::array::from_fn(|_| rng.value())));
        let out = run(&interp, &inputs);
        if q % 8 == 0 {
            assert_eq!(run(&jit, &inputs), out, "{op}: JIT and interpreter differ");
        }
        for (tier, n) in native.iter().enumerate() {
            assert_eq!(
                run(n, &inputs),
                out,
                "{op}: llvmpipe math in the JIT (tier {tier}) and the rewrite differ"
            );
        }
        for c in 0..4 {
            for lane in 0..4 {
                let x = f32::from_bits(inputs[0][c][lane]);
                let y = f32::from_bits(inputs[1][c][lane]);
                let want = model(x, y);
                assert!(
                    same(out[c][lane], want),
                    "{op}({:#010x}, {:#010x}) = {:#010x}, the model says {:#010x}",
                    x.to_bits(),
                    y.to_bits(),
                    out[c][lane],
                    want.to_bits()
                );
            }
        }
    }
}

#[test]
fn ex2_matches_model() {
    check_op("EX2", |x, _| model::exp2(x), 4000);
}

#[test]
fn lg2_matches_model() {
    check_op("LG2", |x, _| model::log2(x), 4000);
}

#[test]
fn pow_matches_model() {
    check_op("POW", model::pow, 4000);
}

#[test]
fn sin_matches_model() {
    check_op("SIN", |x, _| model::sin(x), 4000);
}

#[test]
fn cos_matches_model() {
    check_op("COS", |x, _| model::cos(x), 4000);
}

/// The JIT's native EX2, LG2 and POW in programs: fed by arithmetic whose results it leaves
/// unflushed (tiny products), with source modifiers, partial writemasks and `_SAT`, chained
/// into each other and into integer reads of their bits; both tiers against the interpreter
/// running the rewritten program.
#[test]
fn native_llvmpipe_math_in_programs_matches_the_rewrite() {
    let programs = [
        "0: MUL TEMP[0], IN[0], IN[1]\n1: LG2 TEMP[1].x, TEMP[0].xxxx\n\
         2: POW TEMP[1].yz, TEMP[0].yyyy, IN[1].zzzz\n3: EX2 TEMP[1].w, TEMP[0].wwww\n\
         4: MOV OUT[0], TEMP[1]\n5: END\n",
        "0: EX2_SAT TEMP[0].xy, -|IN[0].wwww|\n1: LG2 TEMP[0].z, TEMP[0].xxxx\n\
         2: POW TEMP[0].w, |IN[1].xxxx|, -TEMP[0].zzzz\n3: XOR OUT[0], TEMP[0], IN[0]\n4: END\n",
        "0: MUL TEMP[0], IN[0], IN[0]\n1: LG2 TEMP[1], TEMP[0].xxxx\n\
         2: UADD OUT[0], TEMP[1], IN[1]\n3: END\n",
        "0: POW TEMP[0].x, IN[0].xxxx, IN[1].xxxx\n1: POW TEMP[0].y, TEMP[0].xxxx, IN[1].yyyy\n\
         2: SIN TEMP[0].z, IN[0].zzzz\n3: COS TEMP[0].w, TEMP[0].yyyy\n\
         4: MOV OUT[0], TEMP[0]\n5: END\n",
    ];
    let mut rng = Rng(0x5eed);
    for body in programs {
        let text = format!(
            "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL IN[1], GENERIC[1], PERSPECTIVE\n\
             DCL OUT[0], COLOR\nDCL TEMP[0..1]\n{body}"
        );
        let original = parse(&text);
        let interp = Interpreter::new(&rewrite(&original)).expect("decodes");
        let native = [true, false].map(|optimize| {
            JitShader::compile_tier_math(&original, MathMode::Llvmpipe, optimize).expect("compiles")
        });
        for _ in 0..3000 {
            // Tiny normals now and then, whose products are denormal.
            let value = |rng: &mut Rng| match rng.next() % 8 {
                0 => 0x1000_0000 + (rng.next() as u32 % 0x0100_0000),
                _ => rng.value(),
            };
            let inputs: [QuadVec4; 2] = std::array::from_fn(|_| {
                std::array::from_fn(|_| std::array::from_fn(|_| value(&mut rng)))
            });
            let want = run(&interp, &inputs);
            for (tier, n) in native.iter().enumerate() {
                assert_eq!(
                    run(n, &inputs),
                    want,
                    "tier {tier}, inputs {inputs:x?}\n{text}"
                );
            }
        }
    }
}

/// Known values: exact powers of two, gallivm's special cases, and its approximation error.
#[test]
fn model_special_cases() {
    assert_eq!(model::exp2(0.0), 1.0);
    assert_eq!(model::exp2(3.0), 8.0);
    assert_eq!(model::exp2(128.0), f32::INFINITY);
    assert_eq!(model::exp2(-127.5), 0.0);
    assert!(model::exp2(f32::NAN).is_nan());
    assert_eq!(model::log2(1.0), 0.0);
    assert_eq!(model::log2(8.0), 3.0);
    assert_eq!(model::log2(0.0), f32::NEG_INFINITY);
    assert_eq!(model::log2(f32::from_bits(1)), f32::NEG_INFINITY);
    assert_eq!(model::log2(f32::INFINITY), f32::INFINITY);
    assert_eq!(model::log2(-1.0).to_bits(), 0x7fc0_0000);
    assert_eq!(
        model::log2(f32::from_bits(0x7fa0_0001)).to_bits(),
        0x7fc0_0000
    );
    // Mesa 22.3's unordered `x == 0`: a NaN base gives 0, whatever the exponent.
    assert_eq!(model::pow(f32::NAN, 2.5), 0.0);
    assert_eq!(model::pow(0.0, -1.0), 0.0);
    assert!(model::pow(-2.0, 3.0).is_nan());
    assert_eq!(model::pow(2.0, 10.0), 1024.0);
    assert!(model::sin(f32::INFINITY).is_nan());
    assert_eq!(model::cos(0.0), 1.0);
    // cos of a huge argument: its polynomial is NaN, which the clamp turns into 1.
    assert_eq!(model::cos(3.0e38), 1.0);
    // Not glibc: gallivm's polynomials are a few ulp off, often.
    let xs = (0..1000).map(|i| i as f32 / 250.0 - 2.0);
    let off = xs
        .clone()
        .filter(|&x| model::exp2(x) != 2f32.powf(x))
        .count();
    assert!(off > 100, "{off}");
    assert!(xs
        .clone()
        .all(|x| (model::exp2(x) / 2f32.powf(x) - 1.0).abs() < 1e-6));
    assert!(xs.clone().all(|x| (model::sin(x) - x.sin()).abs() < 1e-6));
    assert!(xs.clone().all(|x| (model::cos(x) - x.cos()).abs() < 1e-6));
}

#[test]
fn writemask_saturate_and_modifiers_survive() {
    let text = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0]\n\
                IMM[0] FLT32 {0.5, 0.25, 2.0, 3.0}\n\
                0: MOV TEMP[0], IMM[0]\n\
                1: EX2_SAT TEMP[0].xy, -|IN[0].wwww|\n\
                2: LG2 TEMP[0].w, IN[0].yyyy\n\
                3: MOV OUT[0], TEMP[0]\n4: END\n";
    let rewritten = rewrite(&parse(text));
    validate(&rewritten).unwrap_or_else(|e| panic!("{e:?}"));
    let interp = Interpreter::new(&rewritten).unwrap();
    let mut rng = Rng(7);
    for _ in 0..500 {
        let inputs: [QuadVec4; 2] =
            std::array::from_fn(|_| std::array::from_fn(|_| std::array::from_fn(|_| rng.value())));
        let out = run(&interp, &inputs);
        for lane in 0..4 {
            let w = f32::from_bits(inputs[0][3][lane]);
            let e = model::exp2(-w.abs());
            let sat = if e.is_nan() { 0.0 } else { e.clamp(0.0, 1.0) };
            assert_eq!(out[0][lane], sat.to_bits());
            assert_eq!(out[1][lane], sat.to_bits());
            assert_eq!(out[2][lane], 2.0f32.to_bits(), "z is not written");
            let l = model::log2(f32::from_bits(inputs[0][1][lane]));
            assert!(same(out[3][lane], l));
        }
    }
}

#[test]
fn dependent_instructions_are_not_merged() {
    // The second LG2 reads the first's result, the fourth POW its own destination's x.
    let text = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0..1]\n\
                0: LG2 TEMP[0].x, IN[0].xxxx\n\
                1: LG2 TEMP[0].y, TEMP[0].xxxx\n\
                2: POW TEMP[1].x, IN[0].zzzz, IN[0].wwww\n\
                3: POW TEMP[1].y, TEMP[1].xxxx, IN[0].wwww\n\
                4: POW TEMP[1].z, TEMP[0].yyyy, IN[0].wwww\n\
                5: MOV OUT[0].xy, TEMP[0]\n6: MOV OUT[0].zw, TEMP[1].xxyz\n7: END\n";
    let rewritten = rewrite(&parse(text));
    // Groups: {0}, {1} (reads 0's x), {2}, {3, 4} (3 reads 2's x; 4 reads neither 3's y nor
    // anything else 3 writes): one DIV per log2 expansion.
    assert_eq!(count(&rewritten, Opcode::DIV), 4);
    let interp = Interpreter::new(&rewritten).unwrap();
    let mut rng = Rng(11);
    for _ in 0..500 {
        let inputs: [QuadVec4; 2] =
            std::array::from_fn(|_| std::array::from_fn(|_| std::array::from_fn(|_| rng.value())));
        let out = run(&interp, &inputs);
        for lane in 0..4 {
            let i = |c: usize| f32::from_bits(inputs[0][c][lane]);
            let l0 = model::log2(i(0));
            let l1 = model::log2(l0);
            let p0 = model::pow(i(2), i(3));
            let p1 = model::pow(p0, i(3));
            let p2 = model::pow(l1, i(3));
            // OUT.zw = TEMP[1].xxyz reads y and z.
            for (c, want) in [l0, l1, p1, p2].into_iter().enumerate() {
                assert!(same(out[c][lane], want), "component {c}");
            }
        }
    }
}

#[test]
fn declarations_immediates_and_labels() {
    let text = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0..2]\n\
                IMM[0] FLT32 {1.0, 2.0, 0.0, 0.0}\n\
                0: MOV TEMP[0], IN[0]\n\
                1: CAL :4\n\
                2: MOV OUT[0], TEMP[0]\n\
                3: END\n\
                4: BGNSUB\n\
                5: SIN TEMP[0].x, TEMP[0].xxxx\n\
                6: COS TEMP[0].y, TEMP[0].yyyy\n\
                7: ENDSUB\n";
    let original = parse(text);
    let rewritten = rewrite(&original);
    validate(&rewritten).unwrap_or_else(|e| panic!("{e:?}"));
    // Scratch temporaries come after every declared one, constants after the program's.
    assert!(rewritten.file_size(RegisterFile::Temporary) > 3);
    assert_eq!(
        rewritten.immediates().next(),
        original.immediates().next(),
        "existing immediates keep their index"
    );
    let cal = rewritten
        .instructions
        .iter()
        .find(|i| i.opcode == Opcode::CAL)
        .unwrap();
    let target = cal.label.unwrap() as usize;
    assert_eq!(rewritten.instructions[target].opcode, Opcode::BGNSUB);
    let interp = Interpreter::new(&rewritten).unwrap();
    let jit = JitShader::compile(&rewritten).unwrap();
    let mut rng = Rng(3);
    for _ in 0..300 {
        let inputs: [QuadVec4; 2] =
            std::array::from_fn(|_| std::array::from_fn(|_| std::array::from_fn(|_| rng.value())));
        let out = run(&interp, &inputs);
        assert_eq!(run(&jit, &inputs), out);
        for lane in 0..4 {
            let i = |c: usize| f32::from_bits(inputs[0][c][lane]);
            assert!(same(out[0][lane], model::sin(i(0))));
            assert!(same(out[1][lane], model::cos(i(1))));
            assert_eq!(out[2][lane], inputs[0][2][lane]);
        }
    }
}

#[test]
fn modes_parse_and_exact_is_identity() {
    assert_eq!("exact".parse::<MathMode>(), Ok(MathMode::Exact));
    assert_eq!("llvmpipe".parse::<MathMode>(), Ok(MathMode::Llvmpipe));
    let err = "fast".parse::<MathMode>().unwrap_err();
    assert!(err.contains("fast") && err.contains("llvmpipe"), "{err}");
    assert_eq!(MathMode::default(), MathMode::Exact);
    let program = parse(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\n\
         0: POW OUT[0], IN[0].xxxx, IN[0].yyyy\n1: END\n",
    );
    assert_eq!(MathMode::Exact.apply(program.clone()), program);
    assert_ne!(MathMode::Llvmpipe.apply(program.clone()), program);
    // Programs without transcendentals are left alone.
    let plain = parse("FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\n0: MOV OUT[0], IN[0]\n1: END\n");
    assert_eq!(rewrite(&plain), plain);
}
