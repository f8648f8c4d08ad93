//! Control flow, lanes and addressing: IF/ELSE nesting, loops with BRK/CONT, SWITCH fallthrough,
//! subroutines, the instruction budget, KILL with helper lanes, derivatives and indirect access.
mod interp_util;
use interp_util::*;
use softgpu_jit::exec::ExecError;

const ONE: &str = "FLT32 {1.0, 2.0, 3.0, 0.0}";

#[test]
fn nested_if_else() {
    let body = "IF IN[0].xxxx :0\n  IF IN[0].yyyy :0\n    MOV OUT[0].x, IMM[0].xxxx\n  ELSE :0\n    MOV OUT[0].x, IMM[0].yyyy\n  ENDIF\nELSE :0\n  MOV OUT[0].x, IMM[0].zzzz\nENDIF";
    let input = [
        [1.0f32, 1.0, 0.0, 0.0].map(f32::to_bits),
        [1.0f32, 0.0, 1.0, 0.0].map(f32::to_bits),
        [0; 4],
        [0; 4],
    ];
    let out = alu(&[ONE], body, &[input]);
    assert_eq!(chan_f(&out[0], 0), [1.0, 2.0, 3.0, 3.0]);
}

#[test]
fn uif_tests_bits() {
    let out = alu(
        &[ONE],
        "UIF IN[0].xxxx :0\nMOV OUT[0].x, IMM[0].xxxx\nENDIF",
        &[[[0x8000_0000, 0, 1, 0x7fc0_0000], [0; 4], [0; 4], [0; 4]]],
    );
    assert_eq!(chan_f(&out[0], 0), [1.0, 0.0, 1.0, 1.0]);
}

#[test]
fn loop_with_break_and_continue() {
    // TEMP[0].x counts iterations; lanes break when the counter reaches IN[0].x; odd counters
    // skip the accumulation with CONT.
    let body = "MOV TEMP[0], IMM[1].xxxx
BGNLOOP :0
  USGE TEMP[1].x, TEMP[0].xxxx, IN[0].xxxx
  UIF TEMP[1].xxxx :0
    BRK
  ENDIF
  UADD TEMP[0].x, TEMP[0].xxxx, IMM[1].yyyy
  AND TEMP[1].x, TEMP[0].xxxx, IMM[1].yyyy
  UIF TEMP[1].xxxx :0
    CONT
  ENDIF
  UADD TEMP[0].y, TEMP[0].yyyy, IMM[1].yyyy
ENDLOOP :0
MOV OUT[0], TEMP[0]";
    let out = alu(
        &[ONE, "UINT32 {0, 1, 0, 0}"],
        body,
        &[[[0, 3, 4, 7], [0; 4], [0; 4], [0; 4]]],
    );
    assert_eq!(out[0][0], [0, 3, 4, 7]);
    assert_eq!(out[0][1], [0, 1, 2, 3]);
}

#[test]
fn infinite_loop_exceeds_budget() {
    let r = Run {
        budget: Some(1000),
        ..Run::default()
    };
    let err = r.go(&program(&[], "BGNLOOP :0\nENDLOOP :0")).unwrap_err();
    assert!(
        matches!(err, ExecError::BudgetExceeded { budget: 1000, .. }),
        "{err:?}"
    );
}

#[test]
fn switch_fallthrough_default_and_break() {
    let body = "MOV TEMP[0], IMM[1].wwww
SWITCH IN[0].xxxx
CASE IMM[1].xxxx
  UADD TEMP[0].x, TEMP[0].xxxx, IMM[1].yyyy
CASE IMM[1].yyyy
  UADD TEMP[0].x, TEMP[0].xxxx, IMM[1].zzzz
  BRK
DEFAULT
  UADD TEMP[0].x, TEMP[0].xxxx, IMM[1].xxxx
CASE IMM[1].zzzz
  UADD TEMP[0].x, TEMP[0].xxxx, IMM[1].zzzz
  UADD TEMP[0].x, TEMP[0].xxxx, IMM[1].zzzz
  BRK
ENDSWITCH
MOV OUT[0], TEMP[0]";
    // Case values 10, 20, 30. Selector 10 falls into 20's body; 20 runs its body; 99 takes
    // DEFAULT (which stands before CASE 30) and falls into CASE 30's body; 30 runs its body.
    let out = alu(
        &[ONE, "UINT32 {10, 20, 30, 0}"],
        body,
        &[[[10, 20, 99, 30], [0; 4], [0; 4], [0; 4]]],
    );
    assert_eq!(out[0][0], [50, 30, 70, 60]);
}

#[test]
fn subroutine_calls_and_returns() {
    let tgsi = "FRAG\nDCL IN[0]\nDCL OUT[0]\nDCL TEMP[0]\nIMM[0] UINT32 {1, 100, 0, 0}
  0: MOV TEMP[0], IMM[0].zzzz
  1: CAL :5
  2: CAL :5
  3: MOV OUT[0], TEMP[0]
  4: END
  5: BGNSUB
  6: UADD TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx
  7: UIF IN[0].xxxx
  8: RET
  9: ENDIF
 10: UADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
 11: ENDSUB
";
    let r = Run {
        inputs: vec![[[0, 1, 0, 1], [0; 4], [0; 4], [0; 4]]],
        ..Run::default()
    };
    let (out, _) = r.go(tgsi).unwrap();
    assert_eq!(out[0][0], [202, 2, 202, 2]);
}

#[test]
fn recursion_overflows_call_stack() {
    let tgsi = "FRAG\nDCL OUT[0]\n  0: CAL :2\n  1: END\n  2: BGNSUB\n  3: CAL :2\n  4: ENDSUB\n";
    let err = Run::default().go(tgsi).unwrap_err();
    assert!(
        matches!(err, ExecError::CallStackOverflow { pc: 3 }),
        "{err:?}"
    );
}

#[test]
fn ret_in_main_ends_lanes() {
    let out = alu(
        &[ONE],
        "UIF IN[0].xxxx :0\nRET\nENDIF\nMOV OUT[0].x, IMM[0].xxxx",
        &[[[1, 0, 1, 0], [0; 4], [0; 4], [0; 4]]],
    );
    assert_eq!(chan_f(&out[0], 0), [0.0, 1.0, 0.0, 1.0]);
}

#[test]
fn bad_structure_is_rejected() {
    for body in [
        "ENDIF",
        "IF IN[0].xxxx :0",
        "BRK",
        "ELSE :0",
        "BGNLOOP :0\nENDIF",
        "CONT",
        "CASE IN[0].xxxx",
    ] {
        let err = Run::default().go(&program(&[], body)).unwrap_err();
        assert!(
            matches!(err, ExecError::Unsupported { .. }),
            "{body}: {err:?}"
        );
    }
    let err = Run::default()
        .go("FRAG\nDCL OUT[0]\n  0: CAL :1\n  1: END\n")
        .unwrap_err();
    assert!(
        matches!(err, ExecError::Unsupported { pc: 0, .. }),
        "{err:?}"
    );
}

#[test]
fn kill_and_helper_lanes() {
    let r = Run {
        inputs: vec![lanes_x([1.0, -1.0, 2.0, -0.5])],
        live: 0b0111,
        ..Run::default()
    };
    let tgsi = program(
        &[ONE],
        "KILL_IF IN[0].xxxx\nMOV OUT[0], IMM[0].yyyy\nDDX OUT[1], IN[0]",
    );
    let (out, killed) = r.go(&tgsi).unwrap();
    assert_eq!(killed, 0b1010);
    // Helper lane 3 still computes (its value feeds the derivative) but does not write OUT.
    assert_eq!(chan_f(&out[0], 0), [2.0, 2.0, 2.0, 0.0]);
    assert_eq!(chan_f(&out[1], 0)[..3], [-2.5; 3]);
    // KILL kills only the lanes executing it.
    let r = Run {
        inputs: vec![lanes_x([1.0, 0.0, 1.0, 0.0])],
        ..Run::default()
    };
    let (_, killed) = r
        .go(&program(&[], "IF IN[0].xxxx :0\nKILL\nENDIF"))
        .unwrap();
    assert_eq!(killed, 0b0101);
}

#[test]
fn derivatives_coarse_and_fine() {
    // Lanes: TL=1, TR=2, BL=5, BR=11.
    let v = lanes_x([1.0, 2.0, 5.0, 11.0]);
    let out = alu(
        &[],
        "DDX OUT[0], IN[0]\nDDY OUT[1], IN[0]\nDDX_FINE OUT[2], IN[0]\nDDY_FINE OUT[3], IN[0]",
        &[v],
    );
    assert_eq!(chan_f(&out[0], 0), [6.0; 4], "coarse DDX = BR - BL");
    assert_eq!(chan_f(&out[1], 0), [4.0; 4], "coarse DDY = BL - TL");
    assert_eq!(chan_f(&out[2], 0), [1.0, 1.0, 6.0, 6.0]);
    assert_eq!(chan_f(&out[3], 0), [4.0, 9.0, 4.0, 9.0]);
}

#[test]
fn indirect_temporaries_with_array_bounds() {
    let tgsi = "FRAG
DCL IN[0]
DCL OUT[0..1]
DCL TEMP[0]
DCL TEMP[1..3], ARRAY(1)
DCL TEMP[4..5]
DCL ADDR[0]
IMM[0] FLT32 {1.0, 2.0, 3.0, 4.0}
IMM[1] FLT32 {9.0, 9.0, 9.0, 9.0}
  0: MOV TEMP[1], IMM[0].xxxx
  1: MOV TEMP[2], IMM[0].yyyy
  2: MOV TEMP[3], IMM[0].zzzz
  3: MOV TEMP[4], IMM[0].wwww
  4: ARL ADDR[0].x, IN[0].xxxx
  5: MOV OUT[0], TEMP[ADDR[0].x+1](1)
  6: MOV TEMP[ADDR[0].x+1](1), IMM[1]
  7: MOV OUT[1].x, TEMP[3]
  8: MOV OUT[1].y, TEMP[4]
  9: END
";
    // Per-lane indices 0, 2, 3 (past the array: reads 0, write dropped), -1.7 → floor -2.
    let r = Run {
        inputs: vec![lanes_x([0.0, 2.0, 3.5, -1.7])],
        ..Run::default()
    };
    let (out, _) = r.go(tgsi).unwrap();
    assert_eq!(chan_f(&out[0], 0), [1.0, 3.0, 0.0, 0.0]);
    assert_eq!(chan_f(&out[1], 0), [3.0, 9.0, 3.0, 3.0]);
    assert_eq!(chan_f(&out[1], 1), [4.0; 4], "TEMP[4] is outside ARRAY(1)");
}

#[test]
fn indirect_constants_and_immediates() {
    let f = |x: f32| x.to_bits();
    let r = Run {
        inputs: vec![[[0, 1, 5, (-1i32) as u32], [0; 4], [0; 4], [0; 4]]],
        constants: vec![
            vec![[f(10.0); 4], [f(11.0); 4], [f(12.0); 4]],
            vec![[f(20.0); 4], [f(21.0); 4]],
        ],
        ..Run::default()
    };
    let tgsi = "FRAG\nDCL IN[0]\nDCL OUT[0..1]\nDCL CONST[0][0..2]\nDCL CONST[1][0..1]\nDCL ADDR[0..1]\nIMM[0] FLT32 {1.0, 2.0, 3.0, 4.0}\nIMM[1] FLT32 {5.0, 6.0, 7.0, 8.0}
  0: UARL ADDR[0].x, IN[0].xxxx
  1: MOV OUT[0].x, CONST[0][ADDR[0].x+1].xxxx
  2: MOV OUT[0].y, CONST[ADDR[0].x][1].xxxx
  3: MOV OUT[0].z, IMM[ADDR[0].x].yyyy
  4: END
";
    let (out, _) = r.go(tgsi).unwrap();
    assert_eq!(chan_f(&out[0], 0), [11.0, 12.0, 0.0, 10.0]);
    assert_eq!(chan_f(&out[0], 1), [11.0, 21.0, 0.0, 0.0]);
    assert_eq!(chan_f(&out[0], 2), [2.0, 6.0, 0.0, 0.0]);
}

#[test]
fn unsupported_opcodes_are_reported() {
    let err = Run::default().go(&program(&[], "PUSHA IN[0]")).unwrap_err();
    assert!(
        matches!(err, ExecError::Unsupported { pc: 0, .. }),
        "{err:?}"
    );
}
