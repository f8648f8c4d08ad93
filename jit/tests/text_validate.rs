//! The validator: one test per rule, each checking the message and where it points.

use softgpu_jit::ir::text::parse_program;
use softgpu_jit::ir::validate::{parse_and_validate, validate, ValidationError};
use softgpu_jit::ir::*;

const HEADER: &str = "FRAG\n\
DCL IN[0].xy, GENERIC[0], PERSPECTIVE\n\
DCL OUT[0], COLOR\n\
DCL SAMP[0]\n\
DCL SVIEW[0], 2D, FLOAT\n\
DCL CONST[0][0..3]\n\
DCL TEMP[0..3]\n\
DCL TEMP[4..7], ARRAY(1), LOCAL\n\
DCL ADDR[0]\n\
IMM[0] UINT32 {0, 1, 2, 3}\n";

/// Line of the first instruction in `with_header` programs.
const FIRST_LINE: usize = 11;

fn with_header(body: &str) -> String {
    format!("{HEADER}{body}")
}

fn errors(src: &str) -> Vec<ValidationError> {
    let p = parse_program(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    validate(&p).expect_err("expected validation errors")
}

/// Asserts that validation fails with exactly one error, at `inst`, containing `needle`.
fn single(src: &str, inst: Option<usize>, needle: &str) {
    let errs = errors(src);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].instruction, inst, "{}", errs[0]);
    assert!(errs[0].message.contains(needle), "{}", errs[0]);
}

#[test]
fn a_valid_program_passes() {
    let src = with_header(
        "  0: TEX TEMP[0], IN[0].xyyy, SAMP[0], 2D\n\
         \x20 1: UARL ADDR[0].x, IMM[0].yyyy\n\
         \x20 2: MOV TEMP[ADDR[0].x+4](1), CONST[0][ADDR[0].x+1]\n\
         \x20 3: BGNLOOP :0\n\
         \x20 4:   UIF TEMP[0].xxxx :0\n\
         \x20 5:     BRK\n\
         \x20 6:   ELSE :0\n\
         \x20 7:     CONT\n\
         \x20 8:   ENDIF\n\
         \x20 9: ENDLOOP :0\n\
         \x2010: KILL_IF -TEMP[1].xxxx\n\
         \x2011: MOV OUT[0], TEMP[4]\n\
         \x2012: END\n",
    );
    assert_eq!(parse_and_validate(&src).map(|_| ()), Ok(()));
}

#[test]
fn operand_counts() {
    let mut p = parse_program(&with_header(
        "  0: ADD TEMP[0], TEMP[1], TEMP[2]\n  1: END\n",
    ))
    .expect("parses");
    p.instructions[0].src.pop();
    let errs = validate(&p).expect_err("missing operand");
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0].to_string(),
        "instruction 0: ADD expects 2 source operand(s), found 1"
    );
    p.instructions[0].dst.clear();
    let errs = validate(&p).expect_err("missing operands");
    assert!(errs[0]
        .message
        .contains("1 destination operand(s), found 0"));
}

#[test]
fn undeclared_registers() {
    single(
        &with_header("  0: MOV TEMP[0], IMM[1]\n  1: END\n"),
        Some(0),
        "IMM[1] does not exist (the program has 1 immediates)",
    );
    single(
        &with_header("  0: MOV TEMP[8], TEMP[0]\n  1: END\n"),
        Some(0),
        "TEMP[8] is not declared",
    );
    single(
        &with_header("  0: MOV TEMP[0], IN[1]\n  1: END\n"),
        Some(0),
        "IN[1] is not declared",
    );
    single(
        &with_header("  0: MOV OUT[1], TEMP[0]\n  1: END\n"),
        Some(0),
        "OUT[1] is not declared",
    );
    single(
        &with_header("  0: MOV TEMP[0], CONST[0][4]\n  1: END\n"),
        Some(0),
        "CONST[0][4] is not declared",
    );
    single(
        &with_header("  0: MOV TEMP[0], CONST[1][0]\n  1: END\n"),
        Some(0),
        "CONST[1][0] is not declared",
    );
    single(
        &with_header("  0: TEX TEMP[0], IN[0], SAMP[1], 2D\n  1: END\n"),
        Some(0),
        "SAMP[1] is not declared",
    );
    single(
        &with_header("  0: SAMPLE TEMP[0], IN[0], SVIEW[2], SAMP[0]\n  1: END\n"),
        Some(0),
        "SVIEW[2] is not declared",
    );
    single(
        &with_header("  0: MOV TEMP[0], TEMP[ADDR[1].x]\n  1: END\n"),
        Some(0),
        "ADDR[1] is not declared",
    );
    single(
        &with_header("  0: MOV TEMP[0], SV[0]\n  1: END\n"),
        Some(0),
        "SV[0] is not declared",
    );
}

#[test]
fn destinations_must_be_writable() {
    for file in ["IN[0]", "CONST[0][0]", "IMM[0]", "SAMP[0]"] {
        single(
            &with_header(&format!("  0: MOV {file}, TEMP[0]\n  1: END\n")),
            Some(0),
            "is read-only",
        );
    }
    let src = "FRAG\nDCL SV[0], FACE\nDCL TEMP[0]\n  0: MOV SV[0], TEMP[0]\n  1: END\n";
    single(src, Some(0), "SV is read-only");
    // NULL, ADDR, OUT and TEMP are fine.
    let src = with_header(
        "  0: MOV NULL[0], TEMP[0]\n  1: UARL ADDR[0].x, TEMP[0].xxxx\n  2: MOV OUT[0], TEMP[0]\n  3: END\n",
    );
    assert!(parse_and_validate(&src).is_ok());
}

#[test]
fn write_masks_must_not_be_empty() {
    let mut p =
        parse_program(&with_header("  0: MOV TEMP[0].x, TEMP[1]\n  1: END\n")).expect("parses");
    p.instructions[0].dst[0].write_mask = 0;
    let errs = validate(&p).expect_err("empty mask");
    assert!(errs[0].message.contains("write mask"), "{}", errs[0]);
    p.instructions[0].dst[0].write_mask = 0x1F;
    assert!(validate(&p).is_err());
}

#[test]
fn texture_instructions_need_a_target() {
    let mut p = parse_program(&with_header(
        "  0: TEX TEMP[0], IN[0], SAMP[0], 2D\n  1: END\n",
    ))
    .expect("parses");
    p.instructions[0].texture = None;
    let errs = validate(&p).expect_err("no target");
    assert!(
        errs[0].message.contains("needs a texture target"),
        "{}",
        errs[0]
    );
    p.instructions[0].texture = Some(TextureInfo {
        target: TextureTarget::Unknown,
        offsets: vec![],
    });
    assert!(validate(&p).is_err());
    // The sampler operand must be a SAMP register.
    single(
        &with_header("  0: TEX TEMP[0], IN[0], TEMP[0], 2D\n  1: END\n"),
        Some(0),
        "must be a SAMP register",
    );
    // Texture offsets must be declared registers too.
    single(
        &with_header("  0: TEX TEMP[0], IN[0], SAMP[0], 2D, IMM[5].xyz\n  1: END\n"),
        Some(0),
        "texture offset 0: IMM[5] does not exist",
    );
    // A non-texture opcode takes no target.
    let mut p =
        parse_program(&with_header("  0: MOV TEMP[0], TEMP[1]\n  1: END\n")).expect("parses");
    p.instructions[0].texture = Some(TextureInfo {
        target: TextureTarget::Tex2D,
        offsets: vec![],
    });
    let errs = validate(&p).expect_err("target on MOV");
    assert!(errs[0].message.contains("not a texture instruction"));
}

#[test]
fn if_else_endif_nesting() {
    single(
        &with_header("  0: ENDIF\n  1: END\n"),
        Some(0),
        "ENDIF without an open IF/UIF",
    );
    single(
        &with_header("  0: UIF TEMP[0].xxxx\n  1: END\n"),
        Some(1),
        "END inside an open block (UIF at instruction 0 is not closed)",
    );
    let errs = errors(&with_header("  0: UIF TEMP[0].xxxx\n  1: END\n"));
    assert_eq!(errs.len(), 1);
    single(
        &with_header("  0: IF TEMP[0].xxxx\n  1: ELSE\n  2: ELSE\n  3: ENDIF\n  4: END\n"),
        Some(2),
        "second ELSE",
    );
    single(
        &with_header("  0: ELSE\n  1: END\n"),
        Some(0),
        "ELSE without an open IF",
    );
    // Crossed blocks: the ENDIF closes nothing that is open at that point.
    let errs = errors(&with_header(
        "  0: BGNLOOP\n  1: UIF TEMP[0].xxxx\n  2: ENDLOOP\n  3: ENDIF\n  4: END\n",
    ));
    assert!(
        errs.iter()
            .any(|e| e.instruction == Some(2)
                && e.message.contains("ENDLOOP without an open BGNLOOP"))
    );
}

#[test]
fn loops_switches_and_breaks() {
    single(
        &with_header("  0: BRK\n  1: END\n"),
        Some(0),
        "BRK outside a loop or SWITCH",
    );
    single(
        &with_header("  0: UIF TEMP[0].xxxx\n  1: CONT\n  2: ENDIF\n  3: END\n"),
        Some(1),
        "CONT outside a loop",
    );
    single(
        &with_header("  0: SWITCH TEMP[0].xxxx\n  1: CASE IMM[0].xxxx\n  2: CONT\n  3: ENDSWITCH\n  4: END\n"),
        Some(2),
        "CONT outside a loop",
    );
    let ok = with_header(
        "  0: SWITCH TEMP[0].xxxx\n  1: CASE IMM[0].xxxx\n  2: BRK\n  3: DEFAULT\n  4: BGNLOOP\n  5: CONT\n  6: ENDLOOP\n  7: ENDSWITCH\n  8: END\n",
    );
    assert!(
        parse_and_validate(&ok).is_ok(),
        "{:?}",
        parse_and_validate(&ok)
    );
    single(
        &with_header("  0: CASE IMM[0].xxxx\n  1: END\n"),
        Some(0),
        "CASE outside a SWITCH",
    );
    single(
        &with_header("  0: BGNLOOP\n  1: END\n"),
        Some(1),
        "BGNLOOP at instruction 0 is not closed",
    );
    let errs = errors(&with_header(
        "  0: END\n  1: BGNSUB\n  2: UIF TEMP[0].xxxx\n  3: ENDSUB\n",
    ));
    assert!(errs
        .iter()
        .any(|e| e.instruction == Some(3) && e.message == "ENDSUB without an open BGNSUB"));
    let errs = errors(&with_header(
        "  0: END\n  1: BGNSUB\n  2: UIF TEMP[0].xxxx\n",
    ));
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert_eq!(
        errs[0].to_string(),
        "instruction 1: BGNSUB is never closed: expected a matching ENDSUB"
    );
    assert_eq!(errs[1].instruction, Some(2));
    single(
        &with_header("  0: SWITCH TEMP[0].xxxx\n  1: ENDLOOP\n  2: ENDSWITCH\n  3: END\n"),
        Some(1),
        "ENDLOOP without an open BGNLOOP",
    );
}

#[test]
fn subroutines_and_calls() {
    let ok = with_header("  0: CAL :3\n  1: END\n  2: NOP\n  3: BGNSUB\n  4: RET\n  5: ENDSUB\n");
    let errs = parse_and_validate(&ok).expect_err("NOP after END");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains("NOP after END"), "{errs:?}");
    let ok = with_header("  0: CAL :2\n  1: END\n  2: BGNSUB\n  3: RET\n  4: ENDSUB\n");
    assert!(
        parse_and_validate(&ok).is_ok(),
        "{:?}",
        parse_and_validate(&ok)
    );
    single(
        &with_header("  0: CAL :1\n  1: END\n"),
        Some(0),
        "CAL :1 must point at a BGNSUB instruction, found END",
    );
    single(
        &with_header("  0: CAL :9\n  1: END\n"),
        Some(0),
        "found nothing (past the end)",
    );
    single(
        &with_header("  0: CAL\n  1: END\n"),
        Some(0),
        "CAL needs a `:label`",
    );
    single(
        &with_header("  0: BGNLOOP\n  1: BGNSUB\n  2: ENDSUB\n  3: ENDLOOP\n  4: END\n"),
        Some(1),
        "subroutines cannot nest",
    );
    // BRK inside a subroutine does not see the caller's loop.
    let errs = errors(&with_header(
        "  0: BGNLOOP\n  1: CAL :4\n  2: ENDLOOP\n  3: END\n  4: BGNSUB\n  5: BRK\n  6: ENDSUB\n",
    ));
    assert!(errs.iter().any(|e| e.instruction == Some(5)), "{errs:?}");
}

#[test]
fn programs_end_with_end() {
    single(
        &with_header("  0: MOV TEMP[0], TEMP[1]\n"),
        None,
        "must end with END",
    );
    single(
        &with_header("  0: END\n  1: MOV TEMP[0], TEMP[1]\n"),
        Some(1),
        "MOV after END",
    );
    single(
        &with_header("  0: UIF TEMP[0].xxxx\n  1: END\n  2: ENDIF\n"),
        Some(1),
        "END inside an open block",
    );
}

#[test]
fn indirect_array_ids_must_be_declared() {
    single(
        &with_header("  0: MOV TEMP[0], TEMP[ADDR[0].x+4](2)\n  1: END\n"),
        Some(0),
        "ARRAY(2) is not declared for TEMP",
    );
    single(
        &with_header("  0: MOV TEMP[ADDR[0].x+1](1), TEMP[0]\n  1: END\n"),
        Some(0),
        "base index 1 lies outside ARRAY(1) = TEMP[4..7]",
    );
}

#[test]
fn stage_rules() {
    let vs = "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\nDCL TEMP[0]\n  0: KILL\n  1: DDX TEMP[0], IN[0]\n  2: MOV OUT[0], IN[0]\n  3: END\n";
    let errs = errors(vs);
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert_eq!(
        errs[0].to_string(),
        "instruction 0: KILL is only allowed in fragment programs, not VERT"
    );
    assert!(errs[1].message.contains("DDX needs a pixel quad"));
}

#[test]
fn header_problems() {
    single(
        "FRAG\nDCL TEMP[0..3]\nDCL TEMP[2..5]\n  0: END\n",
        None,
        "overlaps an earlier declaration",
    );
    single(
        "FRAG\nDCL TEMP[0..3], ARRAY(1)\nDCL TEMP[4..5], ARRAY(1)\n  0: END\n",
        None,
        "ARRAY(1) of TEMP is declared twice",
    );
    single("FRAG\nDCL SV[0]\n  0: END\n", None, "expected a semantic");
}

#[test]
fn messages_carry_source_lines() {
    let src = with_header("  0: MOV TEMP[0], TEMP[1]\n\n  1: MOV IN[0], TEMP[9]\n  2: END\n");
    let errs = parse_and_validate(&src).expect_err("invalid");
    let line = FIRST_LINE + 2;
    assert_eq!(
        errs,
        vec![
            format!("line {line} (instruction 1): MOV destination 0: IN is read-only (write to TEMP, OUT, ADDR or NULL)"),
            format!("line {line} (instruction 1): MOV source 0: TEMP[9] is not declared"),
        ]
    );
    // Parse errors come through with their position.
    let errs = parse_and_validate("FRAG\n  0: MOV TEMP[0], BOGUS[0]\n").expect_err("bad file");
    assert_eq!(
        errs,
        vec!["line 2, column 19: expected register file name, found `BOGUS`".to_string()]
    );
}

#[test]
fn all_problems_are_reported_at_once() {
    let errs = errors(&with_header(
        "  0: MOV TEMP[9], IMM[4]\n  1: BRK\n  2: ENDIF\n",
    ));
    assert_eq!(errs.len(), 5, "{errs:#?}");
}
