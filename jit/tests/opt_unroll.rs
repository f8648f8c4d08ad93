//! `opt::unroll`: constant loops become straight code, constant instructions become copies of
//! their results, and every program computes the same bits before and after (checked through
//! the interpreter on pseudo-random quads with partial live masks, NaNs and denormals).

use softgpu_jit::exec::{NoTextures, QuadIo, QuadShader, QuadVec4, ShaderResources};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;
use softgpu_jit::ir::{Opcode, Program, RegisterFile};
use softgpu_jit::opt::unroll::{unroll_loops, MAX_TRIPS};

/// xorshift64: deterministic inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn value(&mut self) -> u32 {
        match self.next() % 10 {
            0 => self.next() as u32,
            1 => 0x7fc0_0001,
            2 => 0x0000_0042,
            3 => (self.next() % 8) as u32,
            _ => ((self.next() % 4001) as f32 / 500.0 - 4.0).to_bits(),
        }
    }
}

fn run(program: &Program, inputs: &[QuadVec4], constants: &[[u32; 4]], live: u8) -> String {
    let interpreter = Interpreter::new(program).expect("program decodes");
    let mut outputs = vec![[[0u32; 4]; 4]; 2];
    let buffers = [constants];
    let resources = ShaderResources {
        constants: &buffers,
        textures: &NoTextures,
        storage: Default::default(),
    };
    let mut io = QuadIo {
        inputs,
        system_values: &[],
        outputs: &mut outputs,
        live,
    };
    let result = interpreter.shade_quad(&resources, &mut io);
    format!("{result:?} {outputs:?}")
}

/// Unrolls `text`'s program and checks both versions agree on 300 random quads; returns the
/// unrolled program.
fn check(text: &str) -> (Program, Program) {
    let original = parse_program(text).expect("test program parses");
    let mut unrolled = original.clone();
    unroll_loops(&mut unrolled);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for trial in 0..300 {
        let inputs: Vec<QuadVec4> = (0..2)
            .map(|_| std::array::from_fn(|_| std::array::from_fn(|_| rng.value())))
            .collect();
        let constants: Vec<[u32; 4]> = (0..4)
            .map(|_| std::array::from_fn(|_| rng.value()))
            .collect();
        let live = (rng.next() % 15 + 1) as u8;
        assert_eq!(
            run(&original, &inputs, &constants, live),
            run(&unrolled, &inputs, &constants, live),
            "trial {trial}: the unrolled program computes other bits\n{}",
            softgpu_jit::ir::text::print_program(&unrolled)
        );
    }
    (original, unrolled)
}

fn count(program: &Program, op: Opcode) -> usize {
    program
        .instructions
        .iter()
        .filter(|i| i.opcode == op)
        .count()
}

const HEADER: &str = "FRAG\n\
    DCL IN[0..1], GENERIC[0], PERSPECTIVE\n\
    DCL OUT[0..1], GENERIC[0]\n\
    DCL CONST[0][0..3]\n\
    DCL TEMP[0..9]\n\
    IMM[0] UINT32 {0, 1, 5, 4294967294}\n\
    IMM[1] FLT32 {0.5, -0.25, 2.0, 0.0}\n";

/// The shape the naga lowering gives `for (int i = -2; i <= 2; i++) { ... }`: an outer loop
/// with the counter, an inner single-trip loop for `continue`.
#[test]
fn counted_loop_with_continue_shape_unrolls_and_folds() {
    let text = format!(
        "{HEADER}\
        MOV TEMP[0], IMM[1].wwww\n\
        MOV TEMP[1].x, IMM[0].wwww\n\
        BGNLOOP\n\
          MOV TEMP[2].x, IMM[0].xxxx\n\
          BGNLOOP\n\
            ISGE TEMP[3].x, IMM[0].zzzz, TEMP[1].xxxx\n\
            UIF TEMP[3].xxxx\n\
              I2F TEMP[4].x, TEMP[1].xxxx\n\
              MUL TEMP[5].x, TEMP[4].xxxx, IMM[1].yyyy\n\
              EX2 TEMP[6].x, TEMP[5].xxxx\n\
              MAD TEMP[0], IN[0], TEMP[6].xxxx, TEMP[0]\n\
              DDX TEMP[7], TEMP[0]\n\
              ADD TEMP[0], TEMP[0], TEMP[7]\n\
              BRK\n\
            ELSE\n\
              MOV TEMP[2].x, IMM[0].yyyy\n\
              BRK\n\
            ENDIF\n\
            BRK\n\
          ENDLOOP\n\
          UIF TEMP[2].xxxx\n\
            BRK\n\
          ENDIF\n\
          UADD TEMP[1].x, TEMP[1].xxxx, IMM[0].yyyy\n\
        ENDLOOP\n\
        MOV OUT[0], TEMP[0]\n\
        MOV OUT[1], TEMP[1].xxxx\n\
        END\n"
    );
    let (original, unrolled) = check(&text);
    assert_eq!(count(&original, Opcode::BGNLOOP), 2);
    assert_eq!(count(&unrolled, Opcode::BGNLOOP), 0, "the loop is gone");
    assert_eq!(
        count(&unrolled, Opcode::EX2),
        0,
        "EX2 of constants is folded"
    );
    assert_eq!(
        count(&unrolled, Opcode::MAD),
        8,
        "one body per trip (-2..=5)"
    );
}

#[test]
fn loops_decided_by_inputs_stay_loops() {
    let text = format!(
        "{HEADER}\
        MOV TEMP[0], IMM[1].wwww\n\
        MOV TEMP[1].x, IMM[0].xxxx\n\
        BGNLOOP\n\
          FSLT TEMP[2].x, IN[0].xxxx, TEMP[0].xxxx\n\
          UIF TEMP[2].xxxx\n\
            BRK\n\
          ENDIF\n\
          ADD TEMP[0], TEMP[0], IMM[1].xxxx\n\
          UADD TEMP[1].x, TEMP[1].xxxx, IMM[0].yyyy\n\
          USGE TEMP[3].x, TEMP[1].xxxx, IMM[0].zzzz\n\
          UIF TEMP[3].xxxx\n\
            BRK\n\
          ENDIF\n\
        ENDLOOP\n\
        MOV OUT[0], TEMP[0]\n\
        MOV OUT[1], TEMP[1]\n\
        END\n"
    );
    let (_, unrolled) = check(&text);
    assert_eq!(count(&unrolled, Opcode::BGNLOOP), 1);
}

#[test]
fn endless_loops_stay_loops_for_the_budget() {
    let text = format!(
        "{HEADER}\
        MOV TEMP[1].x, IMM[0].xxxx\n\
        BGNLOOP\n\
          UADD TEMP[1].x, TEMP[1].xxxx, IMM[0].yyyy\n\
        ENDLOOP\n\
        MOV OUT[0], TEMP[1]\n\
        END\n"
    );
    let mut program = parse_program(&text).unwrap();
    unroll_loops(&mut program);
    assert_eq!(count(&program, Opcode::BGNLOOP), 1);
    let trips = format!(
        "{HEADER}\
        MOV TEMP[1].x, IMM[0].xxxx\n\
        BGNLOOP\n\
          UADD TEMP[1].x, TEMP[1].xxxx, IMM[0].yyyy\n\
          UMIN TEMP[3].x, CONST[0][0].xxxx, IMM[0].zzzz\n\
          USGE TEMP[2].x, TEMP[1].xxxx, TEMP[3].xxxx\n\
          UIF TEMP[2].xxxx\n\
            BRK\n\
          ENDIF\n\
        ENDLOOP\n\
        MOV OUT[0], TEMP[1]\n\
        END\n"
    );
    check(&trips);
    let long = text
        .replace(
            "ENDLOOP",
            "USGE TEMP[2].x, TEMP[1].xxxx, IMM[2].xxxx\nUIF TEMP[2].xxxx\nBRK\nENDIF\nENDLOOP",
        )
        .replace(
            "IMM[1] FLT32 {0.5, -0.25, 2.0, 0.0}\n",
            &format!(
                "IMM[1] FLT32 {{0.5, -0.25, 2.0, 0.0}}\nIMM[2] UINT32 {{{}, 0, 0, 0}}\n",
                MAX_TRIPS + 10
            ),
        );
    check(&long);
    let mut program = parse_program(&long).unwrap();
    unroll_loops(&mut program);
    assert_eq!(
        count(&program, Opcode::BGNLOOP),
        1,
        "more trips than MAX_TRIPS"
    );
}

/// Branches the constants decide disappear; the others stay, and values written on one path
/// only are no longer known after them. Inside a kept branch, derivatives and texture reads
/// still read the register (other lanes may hold other values there).
#[test]
fn branches_inside_unrolled_loops() {
    let text = format!(
        "{HEADER}\
        MOV TEMP[0], IMM[1].wwww\n\
        MOV TEMP[1].x, IMM[0].xxxx\n\
        MOV TEMP[8], IMM[1].xxxx\n\
        BGNLOOP\n\
          USEQ TEMP[2].x, TEMP[1].xxxx, IMM[0].yyyy\n\
          UIF TEMP[2].xxxx\n\
            ADD TEMP[0], TEMP[0], IN[1]\n\
          ELSE\n\
            MUL TEMP[0], TEMP[0], IMM[1].zzzz\n\
          ENDIF\n\
          FSLT TEMP[3].x, IN[0].xxxx, IMM[1].xxxx\n\
          IF TEMP[3].xxxx\n\
            MOV TEMP[8], TEMP[1].xxxx\n\
            DDY TEMP[9], TEMP[8]\n\
            ADD TEMP[0], TEMP[0], TEMP[9]\n\
            KILL_IF IN[1].yyyy\n\
          ENDIF\n\
          ADD TEMP[0], TEMP[0], TEMP[8]\n\
          UADD TEMP[1].x, TEMP[1].xxxx, IMM[0].yyyy\n\
          USGE TEMP[4].x, TEMP[1].xxxx, IMM[0].zzzz\n\
          UIF TEMP[4].xxxx\n\
            BRK\n\
          ENDIF\n\
        ENDLOOP\n\
        MOV OUT[0], TEMP[0]\n\
        MOV OUT[1], TEMP[8]\n\
        END\n"
    );
    let (_, unrolled) = check(&text);
    assert_eq!(count(&unrolled, Opcode::BGNLOOP), 0);
    assert_eq!(
        count(&unrolled, Opcode::UIF),
        0,
        "the counter's branches are decided"
    );
    assert_eq!(
        count(&unrolled, Opcode::IF),
        5,
        "the input's branch stays, once per trip"
    );
}

#[test]
fn nested_loops_and_switches() {
    let text = format!(
        "{HEADER}\
        MOV TEMP[0], IMM[1].wwww\n\
        MOV TEMP[1].x, IMM[0].xxxx\n\
        BGNLOOP\n\
          MOV TEMP[5].x, IMM[0].xxxx\n\
          BGNLOOP\n\
            USGE TEMP[6].x, TEMP[5].xxxx, TEMP[1].xxxx\n\
            UIF TEMP[6].xxxx\n\
              BRK\n\
            ENDIF\n\
            ADD TEMP[0].x, TEMP[0].xxxx, IN[0].yyyy\n\
            UADD TEMP[5].x, TEMP[5].xxxx, IMM[0].yyyy\n\
          ENDLOOP\n\
          SWITCH TEMP[1].xxxx\n\
          CASE IMM[0].yyyy\n\
            MUL TEMP[0], TEMP[0], IN[1]\n\
            BRK\n\
          DEFAULT\n\
            ADD TEMP[0], TEMP[0], IMM[1].xxxx\n\
            BRK\n\
          ENDSWITCH\n\
          UADD TEMP[1].x, TEMP[1].xxxx, IMM[0].yyyy\n\
          USGE TEMP[4].x, TEMP[1].xxxx, IMM[0].zzzz\n\
          UIF TEMP[4].xxxx\n\
            BRK\n\
          ENDIF\n\
        ENDLOOP\n\
        MOV OUT[0], TEMP[0]\n\
        MOV OUT[1], TEMP[5]\n\
        END\n"
    );
    let (_, unrolled) = check(&text);
    assert_eq!(count(&unrolled, Opcode::BGNLOOP), 0);
    assert_eq!(
        count(&unrolled, Opcode::SWITCH),
        5,
        "switches are kept as written"
    );
}

/// Programs without loops still get their constant instructions folded, bit for bit (NaN
/// payloads, denormal flushing, saturate, integer negation).
#[test]
fn constant_instructions_fold_exactly() {
    let text = "FRAG\n\
        DCL OUT[0..1], GENERIC[0]\n\
        DCL TEMP[0..3]\n\
        IMM[0] UINT32 {2143289345, 66, 4294967295, 2147483648}\n\
        IMM[1] FLT32 {0.5, -3.25, 100.0, 0.0}\n\
        ADD_SAT TEMP[0], IMM[0], IMM[1]\n\
        MUL TEMP[1], IMM[0].yyxw, IMM[1].zzzz\n\
        INEG TEMP[2], -IMM[0]\n\
        LG2 TEMP[3].x, |IMM[1].yyyy|\n\
        POW TEMP[3].y, IMM[1].zzzz, IMM[1].xxxx\n\
        ADD OUT[0], TEMP[0], TEMP[1]\n\
        ADD OUT[1], TEMP[2], TEMP[3]\n\
        END\n";
    let (_, folded) = check(text);
    for op in [Opcode::INEG, Opcode::LG2, Opcode::POW, Opcode::MUL] {
        assert_eq!(count(&folded, op), 0, "{op:?} was not folded");
    }
    assert_eq!(
        count(&folded, Opcode::ADD),
        2,
        "only the output writes stay"
    );
}

/// A constant array indexed by the loop counter (`const float W[4] = ...; W[i]`): the naga
/// lowering fills the array on every trip and reads it through ADDR. Unrolled, the refills
/// vanish and each read becomes the element's value; an index outside the array stays an
/// indirect read (the interpreter reads 0 there).
#[test]
fn constant_arrays_read_through_known_addresses() {
    let text = "FRAG\n\
        DCL IN[0], GENERIC[0], PERSPECTIVE\n\
        DCL OUT[0..1], GENERIC[0]\n\
        DCL TEMP[0..3], ARRAY(1)\n\
        DCL TEMP[4..9]\n\
        DCL ADDR[0]\n\
        IMM[0] UINT32 {0, 1, 5, 4294967295}\n\
        IMM[1] FLT32 {0.5, -0.25, 2.0, 8.0}\n\
        MOV TEMP[4], IMM[1].wwww\n\
        MOV TEMP[5].x, IMM[0].wwww\n\
        BGNLOOP\n\
          MOV TEMP[0].x, IMM[1].xxxx\n\
          MOV TEMP[1].x, IMM[1].yyyy\n\
          MOV TEMP[2].x, IMM[1].zzzz\n\
          MOV TEMP[3].x, IMM[1].wwww\n\
          UARL ADDR[0].x, TEMP[5].xxxx\n\
          MOV TEMP[6].x, TEMP[ADDR[0].x](1).xxxx\n\
          MAD TEMP[4], IN[0], TEMP[6].xxxx, TEMP[4]\n\
          UADD TEMP[5].x, TEMP[5].xxxx, IMM[0].yyyy\n\
          USGE TEMP[7].x, TEMP[5].xxxx, IMM[0].zzzz\n\
          UIF TEMP[7].xxxx\n\
            BRK\n\
          ENDIF\n\
        ENDLOOP\n\
        MOV OUT[0], TEMP[4]\n\
        MOV OUT[1], TEMP[6].xxxx\n\
        END\n";
    let (_, unrolled) = check(text);
    assert_eq!(count(&unrolled, Opcode::BGNLOOP), 0);
    let indirect = unrolled
        .instructions
        .iter()
        .flat_map(|i| &i.src)
        .filter(|s| s.reg.indirect.is_some())
        .count();
    assert_eq!(
        indirect, 2,
        "only the reads at -1 and 4, outside the array, stay indirect"
    );
    let refills = unrolled
        .instructions
        .iter()
        .filter(|i| {
            i.opcode == Opcode::MOV
                && i.dst[0].reg.file == RegisterFile::Temporary
                && i.dst[0].reg.index < 4
        })
        .count();
    assert_eq!(refills, 4, "the array is filled once");
}

/// An array read through an address the pass knows only for the lanes inside a kept branch: a
/// derivative of it reads the other lanes too, each through its own address, so the read must
/// stay indirect there.
#[test]
fn addresses_known_in_a_branch_stay_indirect_for_derivatives() {
    let text = "FRAG\n\
        DCL IN[0..1], GENERIC[0], PERSPECTIVE\n\
        DCL OUT[0..1], GENERIC[0]\n\
        DCL TEMP[0..3], ARRAY(1)\n\
        DCL TEMP[4..9]\n\
        DCL ADDR[0]\n\
        IMM[0] UINT32 {3, 1, 0, 0}\n\
        IMM[1] FLT32 {0.5, 2.0, -3.0, 0.0}\n\
        MOV TEMP[0], IN[0]\n\
        MOV TEMP[1], IN[1]\n\
        MUL TEMP[2], IN[0], IMM[1].yyyy\n\
        MUL TEMP[3], IN[1], IMM[1].zzzz\n\
        AND TEMP[4].x, IN[1].xxxx, IMM[0].xxxx\n\
        UARL ADDR[0].x, TEMP[4].xxxx\n\
        MOV TEMP[5], IMM[1].wwww\n\
        FSLT TEMP[6].x, IN[0].yyyy, IMM[1].xxxx\n\
        IF TEMP[6].xxxx\n\
          UARL ADDR[0].x, IMM[0].yyyy\n\
          DDX TEMP[5], TEMP[ADDR[0].x](1)\n\
        ENDIF\n\
        MOV OUT[0], TEMP[5]\n\
        MOV OUT[1], TEMP[4].xxxx\n\
        END\n";
    check(text);
}

/// After a branch on an input, a component stays known only where both arms leave the same
/// value: a loop counted up to a bound both arms set alike unrolls, one counted to a bound the
/// arms set differently (or only one arm sets) stays a loop, and a write through an unknown
/// array address in either arm forgets every bound, written or not.
#[test]
fn unknown_branches_keep_what_both_arms_agree_on() {
    let program = |else_arm: &str| {
        format!(
            "FRAG\n\
            DCL IN[0..1], GENERIC[0], PERSPECTIVE\n\
            DCL OUT[0..1], GENERIC[0]\n\
            DCL TEMP[0..3], ARRAY(1)\n\
            DCL TEMP[4..9]\n\
            DCL ADDR[0]\n\
            IMM[0] UINT32 {{0, 1, 3, 2}}\n\
            MOV TEMP[0].x, IMM[0].zzzz\n\
            MOV TEMP[4].x, IMM[0].zzzz\n\
            MOV TEMP[5].x, IMM[0].zzzz\n\
            MOV TEMP[6].x, IMM[0].zzzz\n\
            MOV TEMP[8], IN[1]\n\
            FSLT TEMP[7].x, IN[0].xxxx, IN[0].yyyy\n\
            IF TEMP[7].xxxx\n\
              MOV TEMP[4].x, IMM[0].wwww\n\
              MOV TEMP[5].x, IMM[0].wwww\n\
              MOV TEMP[6].x, IMM[0].wwww\n\
            ELSE\n\
              MOV TEMP[4].x, IMM[0].wwww\n\
              MOV TEMP[5].x, IMM[0].yyyy\n\
              {else_arm}\
            ENDIF\n\
            {loops}\
            MOV OUT[0], TEMP[8]\n\
            MOV OUT[1], TEMP[7].xxxx\n\
            END\n",
            loops = [0, 4, 5, 6]
                .map(|bound| format!(
                    "MOV TEMP[9].x, IMM[0].xxxx\n\
                    BGNLOOP\n\
                      USGE TEMP[7].x, TEMP[9].xxxx, TEMP[{bound}].xxxx\n\
                      UIF TEMP[7].xxxx\n\
                        BRK\n\
                      ENDIF\n\
                      MUL TEMP[8], TEMP[8], IN[0]\n\
                      UADD TEMP[9].x, TEMP[9].xxxx, IMM[0].yyyy\n\
                    ENDLOOP\n"
                ))
                .concat()
        )
    };
    let (_, unrolled) = check(&program(""));
    assert_eq!(
        count(&unrolled, Opcode::BGNLOOP),
        2,
        "the loops to TEMP[0] (not written) and TEMP[4] (agreed) unroll; TEMP[5] and TEMP[6] stay"
    );
    assert_eq!(count(&unrolled, Opcode::MUL), 3 + 2 + 2);
    // The address comes from an input: it may land on TEMP[0], whose bound the first loop reads.
    let (_, unrolled) = check(&program(
        "UARL ADDR[0].x, IN[1].xxxx\n\
        MOV TEMP[ADDR[0].x](1).x, IMM[0].yyyy\n",
    ));
    assert_eq!(
        count(&unrolled, Opcode::BGNLOOP),
        4,
        "an indirect write in an arm forgets everything"
    );
}
