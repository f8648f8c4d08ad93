//! A large generated program, shared by the compile-time bench (`benches/compile.rs`, which
//! includes this file) and the tests that need a program of a given size.

use softgpu_jit::ir::text::parse_program;
use softgpu_jit::ir::Program;

/// A fragment program of `n` instructions in the style of nir_to_tgsi output: mostly float ALU
/// over temporaries, with branches, loops, texture lookups and constants.
pub fn big_program(n: usize) -> Program {
    let mut text = String::from(
        "FRAG\n\
         DCL IN[0..1], GENERIC[0], PERSPECTIVE\n\
         DCL OUT[0], COLOR\n\
         DCL SAMP[0]\n\
         DCL SVIEW[0], 2D, FLOAT\n\
         DCL CONST[0][0..15]\n\
         DCL TEMP[0..15]\n\
         IMM[0] FLT32 {0.5, 1.0, 2.0, 0.25}\n\
         IMM[1] UINT32 {0, 1, 8, 3}\n",
    );
    let ops = [
        "MAD TEMP[{a}], TEMP[{b}], CONST[0][{c}], TEMP[{d}]",
        "MUL TEMP[{a}].xy, TEMP[{b}].yxzw, IMM[0].xxyy",
        "ADD TEMP[{a}], TEMP[{b}], -TEMP[{d}].wzyx",
        "DP3 TEMP[{a}].x, TEMP[{b}], TEMP[{d}]",
        "MAX TEMP[{a}], TEMP[{b}], IMM[0].xxxx",
        "FSLT TEMP[{a}].z, TEMP[{b}].xxxx, CONST[0][{c}].yyyy",
        "UCMP TEMP[{a}], TEMP[{b}].zzzz, TEMP[{d}], TEMP[{a}]",
        "FRC TEMP[{a}].w, TEMP[{b}].xxxx",
        "RSQ TEMP[{a}].y, |TEMP[{b}].yyyy|",
        "TEX TEMP[{a}], TEMP[{b}].xyyy, SAMP[0], 2D",
        "MOV_SAT TEMP[{a}], TEMP[{d}]",
        "MIN TEMP[{a}].xz, TEMP[{b}], CONST[0][{c}]",
    ];
    let mut lines = Vec::new();
    let mut i = 0usize;
    while lines.len() + 2 < n {
        let room = n - 2 - lines.len();
        let (a, b, c, d) = (i % 16, (i * 7 + 3) % 16, (i * 5) % 16, (i * 11 + 1) % 16);
        if i % 50 == 49 && room >= 5 {
            lines.push(format!("IF TEMP[{a}].xxxx"));
            lines.push(format!("ADD TEMP[{b}], TEMP[{b}], IMM[0].yyyy"));
            lines.push("ELSE".to_string());
            lines.push(format!("MUL TEMP[{b}], TEMP[{b}], IMM[0].zzzz"));
            lines.push("ENDIF".to_string());
        } else if i % 200 == 120 && room >= 9 {
            lines.push("MOV TEMP[15].x, IMM[1].xxxx".to_string());
            lines.push("BGNLOOP".to_string());
            lines.push("USGE TEMP[14].x, TEMP[15].xxxx, IMM[1].zzzz".to_string());
            lines.push("UIF TEMP[14].xxxx".to_string());
            lines.push("BRK".to_string());
            lines.push("ENDIF".to_string());
            lines.push(format!("MAD TEMP[{a}], TEMP[{a}], IMM[0].xxxx, TEMP[{b}]"));
            lines.push("UADD TEMP[15].x, TEMP[15].xxxx, IMM[1].yyyy".to_string());
            lines.push("ENDLOOP".to_string());
        } else {
            let op = ops[i % ops.len()];
            lines.push(
                op.replace("{a}", &a.to_string())
                    .replace("{b}", &b.to_string())
                    .replace("{c}", &c.to_string())
                    .replace("{d}", &d.to_string()),
            );
        }
        i += 1;
    }
    lines.push("MOV OUT[0], TEMP[0]".to_string());
    lines.push("END".to_string());
    for (k, l) in lines.iter().enumerate() {
        text.push_str(&format!("{k:4}: {l}\n"));
    }
    parse_program(&text).expect("benchmark program parses")
}
