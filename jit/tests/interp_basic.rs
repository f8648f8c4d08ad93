//! First smoke tests of the interpreter: ALU, control flow, TEX.
mod interp_util;
use interp_util::*;

#[test]
fn mul_add_mad() {
    let out = alu(
        &[],
        "MUL OUT[0], IN[0], IN[1]\nADD OUT[1], IN[0], IN[1]\nMAD OUT[2], IN[0], IN[1], IN[0]",
        &[vec4([1.0, 2.0, 3.0, 4.0]), vec4([0.5, 0.25, -1.0, 2.0])],
    );
    assert_eq!(lane0_f(&out[0]), [0.5, 0.5, -3.0, 8.0]);
    assert_eq!(lane0_f(&out[1]), [1.5, 2.25, 2.0, 6.0]);
    assert_eq!(lane0_f(&out[2]), [1.5, 2.5, 0.0, 12.0]);
}

#[test]
fn if_else_per_lane() {
    let out = alu(
        &["FLT32 {1.0, 2.0, 0.0, 0.0}"],
        "IF IN[0].xxxx :0\nMOV OUT[0], IMM[0].xxxx\nELSE :0\nMOV OUT[0], IMM[0].yyyy\nENDIF",
        &[lanes_x([1.0, 0.0, -0.0, f32::NAN])],
    );
    assert_eq!(chan_f(&out[0], 0), [1.0, 2.0, 2.0, 1.0]);
}

#[test]
fn tex_then_mul_const() {
    let tex = MockTextures::default();
    let r = Run {
        inputs: vec![vec4([0.25, 0.75, 0.0, 1.0])],
        constants: vec![vec![[
            2.0f32.to_bits(),
            3.0f32.to_bits(),
            4.0f32.to_bits(),
            5.0f32.to_bits(),
        ]]],
        textures: &tex,
        ..Run::default()
    };
    let (out, killed) = r
        .go("FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\nDCL SVIEW[0], 2D, FLOAT\nDCL CONST[0][0]\nDCL TEMP[0]\n  0: TEX TEMP[0], IN[0].xyyy, SAMP[0], 2D\n  1: MUL OUT[0], TEMP[0], CONST[0][0]\n  2: END\n")
        .unwrap();
    assert_eq!(killed, 0);
    assert_eq!(lane0_f(&out[0]), [0.5, 2.25, 0.0, 0.0]);
    let reqs = tex.samples.lock().unwrap();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].coords[0], [0.25; 4]);
    assert_eq!(reqs[0].coords[1], [0.75; 4]);
}
