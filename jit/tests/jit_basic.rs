//! JIT behaviours the differential test does not pin down on its own: infinite loops, runaway
//! recursion, the kernel cache, callers with fewer output registers than the program uses, and
//! programs too large for SSA registers (and what their registers hold between quads).

use softgpu_jit::codegen::JitShader;
use softgpu_jit::exec::{ExecError, NoTextures, QuadIo, QuadShader, QuadVec4, ShaderResources};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;
use softgpu_jit::ir::Program;

fn program(text: &str) -> Program {
    parse_program(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run(shader: &dyn QuadShader, outputs: usize) -> (Result<u8, ExecError>, Vec<QuadVec4>) {
    shade(shader, [[1.0f32.to_bits(); 4]; 4], outputs, 0b1011)
}

/// One quad with one input register, `outputs` output registers (filled with 7s) and the live
/// lanes `live`.
fn shade(
    shader: &dyn QuadShader,
    input: QuadVec4,
    outputs: usize,
    live: u8,
) -> (Result<u8, ExecError>, Vec<QuadVec4>) {
    let mut outs = vec![[[7u32; 4]; 4]; outputs];
    let res = ShaderResources {
        constants: &[],
        textures: &NoTextures,
        storage: Default::default(),
    };
    let mut io = QuadIo {
        inputs: &[input],
        system_values: &[],
        outputs: &mut outs,
        live,
    };
    let r = shader.shade_quad(&res, &mut io);
    (r, outs)
}

#[test]
fn infinite_loop_exceeds_the_budget() {
    let p = program(
        "FRAG\nDCL OUT[0], COLOR\nDCL TEMP[0]\nIMM[0] FLT32 {1.0, 0.0, 0.0, 0.0}\n\
         0: BGNLOOP\n1: ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx\n2: ENDLOOP\n3: END\n",
    );
    let jit = JitShader::compile(&p)
        .expect("compiles")
        .with_budget(1 << 20);
    match run(&jit, 1).0 {
        Err(ExecError::BudgetExceeded { budget, pc }) => {
            assert_eq!(budget, 1 << 20);
            assert_eq!(pc, 2, "reported at the ENDLOOP");
        }
        other => panic!("expected BudgetExceeded, got {other:?}"),
    }
    let interp = Interpreter::new(&p).expect("decodes").with_budget(1 << 20);
    assert!(matches!(
        run(&interp, 1).0,
        Err(ExecError::BudgetExceeded { .. })
    ));
}

#[test]
fn runaway_recursion_overflows_the_call_stack_where_the_interpreter_does() {
    let p = program(
        "FRAG\nDCL OUT[0], COLOR\nDCL TEMP[0]\nIMM[0] FLT32 {1.0, 0.0, 0.0, 0.0}\n\
         0: CAL :2\n1: END\n2: BGNSUB\n3: ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx\n\
         4: CAL :2\n5: ENDSUB\n",
    );
    let jit = JitShader::compile(&p).expect("compiles");
    let interp = Interpreter::new(&p).expect("decodes");
    let (rj, _) = run(&jit, 1);
    let (ri, _) = run(&interp, 1);
    assert_eq!(rj, Err(ExecError::CallStackOverflow { pc: 4 }));
    assert_eq!(rj, ri);
}

#[test]
fn equal_programs_share_one_kernel() {
    let text = "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\n\
                0: MUL OUT[0], IN[0], IN[0]\n1: END\n";
    let a = JitShader::compile(&program(text)).expect("compiles");
    let b = JitShader::compile(&program(text)).expect("compiles");
    assert!(a.shares_kernel_with(&b));
    let c = JitShader::compile(&program(&text.replace("MUL", "ADD"))).expect("compiles");
    assert!(!a.shares_kernel_with(&c));
    let d = JitShader::compile_uncached(&program(text)).expect("compiles");
    assert!(!a.shares_kernel_with(&d));
}

#[test]
fn too_few_outputs_behave_like_the_interpreter() {
    // OUT[1] is written and read back, but the caller provides only OUT[0]: the write is
    // dropped and the read gives zero, so OUT[0] must be zero.
    let p = program(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL OUT[1], GENERIC[1]\n\
         0: MOV OUT[1], IN[0]\n1: MOV OUT[0], OUT[1]\n2: END\n",
    );
    let jit = JitShader::compile(&p).expect("compiles");
    let interp = Interpreter::new(&p).expect("decodes");
    let (rj, oj) = run(&jit, 1);
    let (ri, oi) = run(&interp, 1);
    assert_eq!(rj, Ok(0));
    assert_eq!((rj, &oj), (ri, &oi));
    // Helper lane 2 keeps the caller's value; live lanes get zero.
    assert_eq!(oj[0][0], [0, 0, 7, 0]);
}

#[test]
fn programs_the_interpreter_rejects_are_rejected() {
    let p = program("FRAG\nDCL TEMP[0]\n0: PUSHA TEMP[0]\n1: END\n");
    assert!(matches!(
        JitShader::compile(&p),
        Err(ExecError::Unsupported { .. })
    ));
}

#[test]
fn large_programs_are_recompiled_for_speed_in_the_background() {
    // 500 dependent MADs: past the size compiled for speed at once.
    let mut text = String::from(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0]\n\
         IMM[0] FLT32 {0.5, 0.25, 0.0, 0.0}\n0: MOV TEMP[0], IN[0]\n",
    );
    for i in 1..=500 {
        text.push_str(&format!(
            "{i}: MAD TEMP[0], TEMP[0], IMM[0].xxxx, IMM[0].yyyy\n"
        ));
    }
    text.push_str("501: MOV OUT[0], TEMP[0]\n502: END\n");
    let p = program(&text);
    let jit = JitShader::compile(&p).expect("compiles");
    let interp = Interpreter::new(&p).expect("decodes");
    let expected = run(&interp, 1);
    assert_eq!(run(&jit, 1), expected, "first version");
    // The recompilation takes well under a second; allow a loaded machine a minute.
    let start = std::time::Instant::now();
    while !jit.is_optimized() && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(jit.is_optimized(), "the optimized version never arrived");
    assert_eq!(run(&jit, 1), expected, "optimized version");
    assert!(JitShader::compile_optimized(&p)
        .expect("compiles")
        .is_optimized());
}

#[test]
fn programs_too_large_for_ssa_registers_keep_them_in_memory() {
    // 2,100 registers in a 2,100-instruction program, with a branch: past the size where every
    // register lives in memory (codegen's SSA budget). Each register depends on the one before,
    // two back and an input, so a wrong load or store changes the output.
    let n = 2100;
    let mut text = format!(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0..{}]\n\
         IMM[0] FLT32 {{0.5, 0.25, 1.0, 0.0}}\nMOV TEMP[0], IN[0]\nMOV TEMP[1], IN[0].yxwz\n",
        n - 1
    );
    for i in 2..n {
        if i == n / 2 {
            text.push_str(&format!(
                "FSLT TEMP[{i}].x, TEMP[{}].xxxx, IMM[0].zzzz\nUIF TEMP[{i}].xxxx\n\
                 ADD TEMP[{}], TEMP[{}], IMM[0].yyyy\nENDIF\n",
                i - 1,
                i - 1,
                i - 1
            ));
            continue;
        }
        text.push_str(&format!(
            "MAD TEMP[{i}], TEMP[{}], IMM[0].xxxx, TEMP[{}].yzwx\n",
            i - 1,
            i - 2
        ));
    }
    text.push_str(&format!("ADD OUT[0], TEMP[{}], TEMP[1]\nEND\n", n - 1));
    let p = program(&text);
    let interp = Interpreter::new(&p).expect("decodes");
    let expected = run(&interp, 1);
    assert_eq!(run(&JitShader::compile(&p).expect("compiles"), 1), expected);
    assert_eq!(
        run(&JitShader::compile_optimized(&p).expect("compiles"), 1),
        expected
    );
}

fn run_inputs(shader: &dyn QuadShader, input: [f32; 4]) -> (Result<u8, ExecError>, Vec<QuadVec4>) {
    // Channel c of lane l: input[c] + l.
    let quad = [0, 1, 2, 3].map(|c| [0, 1, 2, 3].map(|l| (input[c] + l as f32).to_bits()));
    shade(shader, quad, 2, 0b1111)
}

#[test]
fn memory_registers_read_before_written_start_at_zero_in_every_quad() {
    // Past the SSA budget every register lives in memory, and the kernel zeroes only the
    // channels some instruction may read before writing all four lanes. One quad fills every
    // register with non-zero values; the next (same thread, same scratch file) must still read
    // zero where the interpreter does: a channel read before any write, the lanes a divergent
    // IF skipped, a channel read at the top of a loop before the loop body writes it, and a
    // register written after a RET that some lanes took (read through a derivative).
    let n = 2100;
    let mut text = format!(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0..1], GENERIC[0]\nDCL TEMP[0..{}]\n\
         IMM[0] FLT32 {{0.5, 0.25, 1.0, 2.0}}\nIMM[1] INT32 {{3, 1, 0, 0}}\n",
        n - 1
    );
    // Every register gets a non-zero value (on the first quad; inputs > 0 then).
    text.push_str("MOV TEMP[0], IN[0]\n");
    for i in 1..n - 10 {
        text.push_str(&format!(
            "MAD TEMP[{i}], TEMP[{}], IMM[0].xxxx, IMM[0].yyyy\n",
            i - 1
        ));
    }
    let last = n - 11;
    let t = |k: usize| n - 10 + k;
    text.push_str(&format!(
        // TEMP[t0].y is read before any write; .x is written first.
        "MOV TEMP[{a}].x, TEMP[{last}].xxxx\n\
         ADD TEMP[{b}], TEMP[{a}].xyxy, IMM[0].zzzz\n\
         FSLT TEMP[{c}].x, IN[0].xxxx, IMM[0].zzzz\n\
         IF TEMP[{c}].xxxx\n  MOV TEMP[{d}], TEMP[{last}]\nENDIF\n\
         MOV TEMP[{e}].x, IMM[1].zzzz\n\
         BGNLOOP\n\
           ADD TEMP[{f}], TEMP[{f}], IMM[0].wwww\n\
           UADD TEMP[{e}].x, TEMP[{e}].xxxx, IMM[1].yyyy\n\
           USGE TEMP[{c}].y, TEMP[{e}].xxxx, IMM[1].xxxx\n\
           UIF TEMP[{c}].yyyy\n    BRK\n  ENDIF\n\
         ENDLOOP\n\
         ADD TEMP[{b}], TEMP[{b}], TEMP[{d}]\n\
         ADD OUT[0], TEMP[{b}], TEMP[{f}]\n\
         FSLT TEMP[{c}].z, IMM[0].zzzz, IN[0].yyyy\n\
         IF TEMP[{c}].zzzz\n  RET\nENDIF\n\
         MOV TEMP[{g}].xy, IN[0].yxxx\n\
         DDX TEMP[{h}], TEMP[{g}]\n\
         ADD OUT[1], TEMP[{h}], TEMP[{b}].wzyx\n\
         END\n",
        a = t(0),
        b = t(1),
        c = t(2),
        d = t(3),
        e = t(4),
        f = t(5),
        g = t(6),
        h = t(7),
    ));
    let p = program(&text);
    let interp = Interpreter::new(&p).expect("decodes");
    for jit in [
        JitShader::compile(&p).expect("compiles"),
        JitShader::compile_optimized(&p).expect("compiles"),
    ] {
        // The first quad writes every register in every lane; in the second, lane 1 returns
        // before TEMP[g] is written and lane 0's derivative reads it.
        for input in [
            [7.0, -2.0, 0.5, 1.0],
            [3.0, 0.5, 5.0, 6.0],
            [-1.5, 0.0, 2.0, -3.0],
            [0.25, 1.5, -4.0, 2.0],
        ] {
            let expected = run_inputs(&interp, input);
            assert!(expected.0.is_ok());
            assert_eq!(run_inputs(&jit, input), expected, "inputs {input:?}");
        }
    }
}
