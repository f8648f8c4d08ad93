//! Temporary-register compaction (`opt::compact`) must not change one output bit. Each program
//! below runs through the interpreter before and after compaction on the same quads (partial
//! live masks, per-lane inputs that send lanes down different branches) and must write the same
//! bits and kill the same lanes. The hand-written programs are the traps a plain interval
//! allocator falls into: every one leaves a dead temporary with non-zero contents in front of a
//! temporary that reads its register before writing it on some lane. Every TGSI program of the
//! test suite runs through the same check.

use softgpu_jit::exec::{NoTextures, QuadIo, QuadShader, QuadVec4, ShaderResources};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::{parse_program, print_program};
use softgpu_jit::ir::{Program, RegisterFile};
use softgpu_jit::opt::compact::compact_temps;

/// Per-lane inputs: lanes differ, so conditions split the quad.
fn inputs(round: u32, n: usize) -> Vec<QuadVec4> {
    (0..n)
        .map(|i| {
            let mut r = [[0u32; 4]; 4];
            for (c, chan) in r.iter_mut().enumerate() {
                for (l, lane) in chan.iter_mut().enumerate() {
                    let v = (round as usize * 7 + i * 5 + c * 3 + l * 11) % 17;
                    *lane = (v as f32 * 0.25 - 1.0).to_bits();
                }
            }
            r
        })
        .collect()
}

fn run(program: &Program, round: u32) -> Result<(Vec<QuadVec4>, u8), String> {
    let interp = Interpreter::new(program).expect("program decodes");
    let sig = interp.signature().clone();
    let constants: Vec<[u32; 4]> = (0..8)
        .map(|i| [i, i + 1, i + 2, i + 3].map(|x| (x as f32 * 0.5).to_bits()))
        .collect();
    let bufs: Vec<&[[u32; 4]]> = vec![&constants];
    let res = ShaderResources {
        constants: &bufs,
        textures: &NoTextures,
        storage: Default::default(),
    };
    let ins = inputs(round, sig.num_inputs);
    let svs = vec![[[round % 5; 4]; 4]; sig.num_system_values];
    let mut outs = vec![[[0u32; 4]; 4]; sig.num_outputs];
    interp
        .shade_quad(
            &res,
            &mut QuadIo {
                inputs: &ins,
                system_values: &svs,
                outputs: &mut outs,
                live: [0xF, 0x7, 0xE, 0x5][round as usize % 4],
            },
        )
        .map(|kill| (outs, kill))
        .map_err(|e| e.to_string())
}

/// Compacts `source` and checks it computes the same bits; returns (temps before, after) and
/// the compacted program's text.
fn check(name: &str, source: &str) -> (u32, u32, String) {
    let original = parse_program(source).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut compacted = original.clone();
    let counts = compact_temps(&mut compacted);
    // The result is a valid program in the text format too.
    let text = print_program(&compacted);
    parse_program(&text).unwrap_or_else(|e| panic!("{name}: compacted text: {e}\n{text}"));
    for round in 0..24 {
        assert_eq!(
            run(&original, round),
            run(&compacted, round),
            "{name}: round {round} differs after compaction:\n{text}"
        );
    }
    assert_eq!(counts.1, compacted.file_size(RegisterFile::Temporary));
    (counts.0, counts.1, text)
}

const HEADER: &str = "FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL TEMP[0..9]
IMM[0] FLT32 {1.0, 0.5, 3.0, 0.0}
IMM[1] UINT32 {0, 1, 2, 0}
";

fn program(body: &str) -> String {
    format!("{HEADER}{body}\nEND\n")
}

#[test]
fn straight_line_temporaries_share_registers() {
    let mut body = String::from("MOV TEMP[0], IN[0]\n");
    for i in 1..10 {
        body += &format!("ADD TEMP[{i}], TEMP[{}], IMM[0].yyyy\n", i - 1);
    }
    body += "MOV OUT[0], TEMP[9]";
    let (before, after, _) = check("chain", &program(&body));
    assert_eq!(before, 10);
    assert!(
        after <= 2,
        "a chain of single-use temporaries needs 2 registers, got {after}"
    );
}

#[test]
fn loop_carried_accumulator_starts_at_zero() {
    // TEMP[2] is read before it is written (it accumulates from 0 across iterations); TEMP[0]
    // dies before the loop holding the input.
    let body = "MOV TEMP[0], IN[0]
ADD TEMP[1], TEMP[0], IMM[0].xxxx
BGNLOOP
  ADD TEMP[2].x, TEMP[2].xxxx, IMM[0].yyyy
  FSGE TEMP[3].x, TEMP[2].xxxx, IMM[0].zzzz
  UIF TEMP[3].xxxx
    BRK
  ENDIF
ENDLOOP
ADD OUT[0], TEMP[2].xxxx, TEMP[1]";
    check("loop accumulator", &program(body));
}

#[test]
fn value_carried_around_a_loop_keeps_its_register() {
    // TEMP[4] is read early in an iteration (0 at first, then the previous iteration's value)
    // and last written later in the body; TEMP[5] starts after that write and must not take
    // TEMP[4]'s register, which the back edge still needs.
    let body = "MOV TEMP[0].x, IMM[0].wwww
BGNLOOP
  ADD TEMP[6].x, TEMP[4].xxxx, IN[0].xxxx
  ADD OUT[0].x, OUT[0].xxxx, TEMP[6].xxxx
  ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx
  MOV TEMP[4].x, TEMP[0].xxxx
  MUL TEMP[5].x, TEMP[0].xxxx, IMM[0].zzzz
  ADD OUT[0].y, OUT[0].yyyy, TEMP[5].xxxx
  FSGE TEMP[3].x, TEMP[0].xxxx, IMM[0].zzzz
  UIF TEMP[3].xxxx
    BRK
  ENDIF
ENDLOOP";
    check("loop carried", &program(body));
}

#[test]
fn conditionally_defined_value_reads_zero_elsewhere() {
    let body = "MOV TEMP[0], IN[0].yxwz
ADD TEMP[1], TEMP[0], IMM[0].xxxx
FSLT TEMP[2].x, IN[0].xxxx, IMM[0].wwww
UIF TEMP[2].xxxx
  MOV TEMP[3].xy, IMM[0].zzzz
ELSE
  MOV TEMP[3].x, IMM[0].yyyy
ENDIF
ADD OUT[0], TEMP[3].xyxy, TEMP[1]";
    check("conditional definition", &program(body));
}

#[test]
fn derivatives_of_partially_written_values_see_zero_lanes() {
    let body = "MOV TEMP[0], IN[0].zwxy
FSLT TEMP[2].x, IN[0].xxxx, IMM[0].wwww
MUL TEMP[1], TEMP[0], TEMP[0]
UIF TEMP[2].xxxx
  MOV TEMP[3].x, IN[0].yyyy
  DDX TEMP[4].x, TEMP[3].xxxx
  DDY TEMP[4].y, TEMP[3].xxxx
  MOV OUT[0].xy, TEMP[4].xyxx
ENDIF
MOV OUT[0].zw, TEMP[1].xyxy";
    check("derivatives in a branch", &program(body));
}

#[test]
fn derivatives_after_a_conditional_return() {
    let body = "MOV TEMP[0], IN[0].wzyx
ADD TEMP[1], TEMP[0], TEMP[0]
MOV OUT[0], TEMP[1]
FSLT TEMP[2].x, IN[0].yyyy, IMM[0].wwww
UIF TEMP[2].xxxx
  RET
ENDIF
MOV TEMP[3].x, IN[0].xxxx
DDX OUT[0].x, TEMP[3].xxxx";
    check("derivative after return", &program(body));
}

#[test]
fn switch_fallthrough_reads_zero_in_later_cases() {
    let body = "MOV TEMP[0], IN[0]
ADD TEMP[1], TEMP[0], IMM[0].xxxx
F2U TEMP[2].x, IN[0].xxxx
AND TEMP[2].x, TEMP[2].xxxx, IMM[1].yyyy
SWITCH TEMP[2].xxxx
CASE IMM[1].xxxx
  MOV TEMP[6].y, IMM[0].zzzz
CASE IMM[1].yyyy
  ADD TEMP[7].x, TEMP[6].yyyy, IMM[0].xxxx
  MOV OUT[0].x, TEMP[7].xxxx
  BRK
DEFAULT
  MOV OUT[0].x, TEMP[1].yyyy
  BRK
ENDSWITCH
MOV OUT[0].yzw, TEMP[1]";
    check("switch fallthrough", &program(body));
}

#[test]
fn partial_writes_keep_the_unwritten_channels_zero() {
    let body = "MOV TEMP[0], IN[0]
ADD TEMP[1], TEMP[0], IMM[0].xxxx
MOV TEMP[2].x, IN[0].yyyy
ADD OUT[0], TEMP[2], TEMP[1].xxxx";
    check("partial write", &program(body));
}

#[test]
fn arrays_keep_their_shape_and_bounds() {
    let source = "FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL ADDR[0]
DCL TEMP[0..7]
DCL TEMP[8..11], ARRAY(1)
IMM[0] FLT32 {1.0, 0.5, 3.0, 0.0}
MOV TEMP[0], IN[0]
ADD TEMP[1], TEMP[0], IMM[0].xxxx
MOV TEMP[8], TEMP[1]
MOV TEMP[9], IMM[0].yyyy
MOV TEMP[10], TEMP[0].wzyx
MOV TEMP[11], IMM[0].zzzz
MUL TEMP[2].x, IN[0].xxxx, IMM[0].zzzz
ARL ADDR[0].x, TEMP[2].xxxx
MOV OUT[0], TEMP[ADDR[0].x+8](1)
END
";
    check("array", source);
}

#[test]
fn arrays_read_only_directly_become_plain_temporaries() {
    // Arrays 2 and 3 are never indexed (specialization made their accesses direct): their
    // registers share with the other temporaries; array 1, indexed, keeps its shape.
    let source = "FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL ADDR[0]
DCL TEMP[0..3]
DCL TEMP[4..7], ARRAY(1)
DCL TEMP[8..10], ARRAY(2)
DCL TEMP[11..13], ARRAY(3)
IMM[0] FLT32 {1.0, 0.5, 3.0, 0.0}
MOV TEMP[8], IN[0]
ADD TEMP[9], TEMP[8], IMM[0].xxxx
MUL TEMP[10].xy, TEMP[9], TEMP[8]
MOV TEMP[0], TEMP[10].xyxy
MOV TEMP[11], TEMP[0].wzyx
ADD TEMP[12].x, TEMP[11].yyyy, IMM[0].zzzz
ADD TEMP[13], TEMP[12].xxxx, TEMP[11]
MOV TEMP[4], TEMP[13]
MOV TEMP[5], IMM[0].yyyy
MOV TEMP[6], TEMP[0]
MOV TEMP[7], TEMP[9]
MUL TEMP[1].x, IN[0].xxxx, IMM[0].zzzz
ARL ADDR[0].x, TEMP[1].xxxx
MOV OUT[0], TEMP[ADDR[0].x+4](1)
END
";
    let (before, after, text) = check("direct arrays", source);
    assert_eq!(before, 14);
    // The indexed array's four registers and five plain ones (at most five values are live at
    // once); with all three arrays kept whole it took 11.
    assert!(after <= 9, "{after} temporaries after compaction");
    assert!(text.contains("DCL TEMP[0..3], ARRAY(1)"), "{text}");
    assert!(
        !text.contains("ARRAY(2)") && !text.contains("ARRAY(3)"),
        "{text}"
    );
}

fn tgsi_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.flatten().map(|e| e.path()) {
        if path.is_dir() {
            tgsi_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "tgsi") {
            out.push(path);
        }
    }
}

#[test]
fn every_suite_program_computes_the_same_bits() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for dir in [
        "tests",
        "../reference-images/draw",
        "../benches/shaders",
        "../examples",
    ] {
        tgsi_files(&root.join(dir), &mut paths);
    }
    paths.sort();
    let mut checked = 0;
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(program) = parse_program(&text) else {
            continue;
        };
        if program.processor != softgpu_jit::ir::Processor::Fragment
            || Interpreter::new(&program).is_err()
        {
            continue;
        }
        check(&path.display().to_string(), &text);
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} suite programs were checked");
}
