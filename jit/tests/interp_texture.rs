//! Texture instructions: the requests the interpreter builds from TGSI operands, as softpipe's
//! `exec_tex` & co. do, recorded by a mock texture unit.
mod interp_util;
use interp_util::*;
use softgpu_jit::exec::LodMode;
use softgpu_jit::ir::TextureTarget;

fn header(decls: &str) -> String {
    format!("FRAG\nDCL IN[0..2], GENERIC[0], PERSPECTIVE\nDCL OUT[0..1], GENERIC[0]\nDCL SAMP[0..3]\n{decls}")
}

fn go(
    tex: &MockTextures,
    inputs: Vec<softgpu_jit::exec::QuadVec4>,
    tgsi: &str,
) -> Vec<softgpu_jit::exec::QuadVec4> {
    Run {
        inputs,
        textures: tex,
        ..Run::default()
    }
    .go(tgsi)
    .unwrap_or_else(|e| panic!("{e}"))
    .0
}

#[test]
fn tex_txp_txb_txl_coordinates() {
    let tex = MockTextures::default();
    let tgsi = header("IMM[0] INT32 {1, -2, 300, 0}\n")
        + "  0: TEX OUT[0].xy, IN[0], SAMP[1], 2D\n  1: TXP OUT[1], IN[0], SAMP[0], 2D\n  2: TXB OUT[1], IN[0], SAMP[0], 3D\n  3: TXL OUT[1], IN[0], SAMP[2], 1D\n  4: TEX OUT[1], IN[0], SAMP[0], SHADOW2D, IMM[0].xyz\n  5: END\n";
    let out = go(&tex, vec![vec4([1.0, 2.0, 3.0, 4.0])], &tgsi);
    assert_eq!(lane0_f(&out[0]), [1.0, 2.0, 0.0, 0.0], "write mask .xy");
    let s = tex.samples.lock().unwrap();
    assert_eq!(s.len(), 5);
    assert_eq!(
        (s[0].view, s[0].sampler, s[0].target),
        (1, 1, TextureTarget::Tex2D)
    );
    assert_eq!(s[0].coords, [[1.0; 4], [2.0; 4], [0.0; 4], [0.0; 4]]);
    assert_eq!(s[0].lod, LodMode::Implicit);
    assert_eq!(s[1].coords[..2], [[0.25; 4], [0.5; 4]]);
    assert_eq!(s[2].coords[..3], [[1.0; 4], [2.0; 4], [3.0; 4]]);
    assert_eq!(s[2].lod, LodMode::Bias([4.0; 4]));
    assert_eq!(s[3].coords, [[1.0; 4], [0.0; 4], [0.0; 4], [0.0; 4]]);
    assert_eq!(s[3].lod, LodMode::Explicit([4.0; 4]));
    assert_eq!(s[4].compare, Some([3.0; 4]));
    assert_eq!(
        s[4].offset,
        [1, -2, 44],
        "offsets are truncated to 8 bits like softpipe"
    );
}

#[test]
fn second_source_variants_and_gradients() {
    let tex = MockTextures::default();
    let tgsi = header("")
        + "  0: TXB2 OUT[0], IN[0], IN[1].yyyy, SAMP[0], CUBEARRAY\n  1: TXL2 OUT[0], IN[0], IN[1].zzzz, SAMP[0], 2D\n  2: TEX2 OUT[0], IN[0], IN[1].xxxx, SAMP[0], SHADOWCUBEARRAY\n  3: TXD OUT[0], IN[0], IN[1], IN[2], SAMP[3], 2D\n  4: TEX OUT[0], IN[0], SAMP[0], SHADOWCUBE\n  5: END\n";
    go(
        &tex,
        vec![
            vec4([1.0, 2.0, 3.0, 4.0]),
            vec4([5.0, 6.0, 7.0, 8.0]),
            vec4([-1.0, -2.0, -3.0, -4.0]),
        ],
        &tgsi,
    );
    let s = tex.samples.lock().unwrap();
    assert_eq!(s[0].coords[3], [4.0; 4]);
    assert_eq!(s[0].lod, LodMode::Bias([6.0; 4]));
    assert_eq!(s[1].lod, LodMode::Explicit([7.0; 4]));
    assert_eq!(s[2].compare, Some([5.0; 4]));
    assert_eq!(s[3].view, 3);
    assert_eq!(
        s[3].lod,
        LodMode::Gradient {
            ddx: [[5.0; 4], [6.0; 4], [0.0; 4]],
            ddy: [[-1.0; 4], [-2.0; 4], [0.0; 4]]
        }
    );
    assert_eq!(s[4].compare, Some([4.0; 4]));
}

#[test]
fn fetch_query_gather_lodq() {
    let tex = MockTextures::default();
    let tgsi = header("IMM[0] UINT32 {2, 0, 0, 0}\n")
        + "  0: TXF OUT[0], IN[0], SAMP[1], 2D_ARRAY\n  1: TXQ OUT[1], IN[1], SAMP[2], 2D\n  2: TG4 OUT[0], IN[2], IMM[0].xxxx, SAMP[0], 2D\n  3: LODQ OUT[1].xyz, IN[2], SAMP[0], 2D\n  4: END\n";
    let out = go(
        &tex,
        vec![
            uvec4([3, 4, 5, 1]),
            uvec4([1, 0, 0, 0]),
            vec4([0.5, 0.25, 0.0, 0.0]),
        ],
        &tgsi,
    );
    let f = tex.fetches.lock().unwrap();
    assert_eq!(
        f[0],
        (
            1,
            TextureTarget::Tex2DArray,
            [[3; 4], [4; 4], [5; 4], [0; 4]],
            [1; 4],
            [0; 3]
        )
    );
    assert_eq!(tex.sizes.lock().unwrap()[0], (2, TextureTarget::Tex2D, 1));
    let g = tex.gathers.lock().unwrap();
    assert_eq!(g[0].1, 2);
    assert_eq!(g[0].0.coords[..2], [[0.5; 4], [0.25; 4]]);
    assert_eq!(lane0_u(&out[0]), [2, 1, 2, 3]);
    assert_eq!(lane0_f(&out[1])[..2], [1.5, 2.5]);
    assert_eq!(
        lane0_u(&out[1])[2],
        1,
        "LODQ leaves z alone (TXQ wrote depth 1)"
    );
}

#[test]
fn sample_family_uses_sview_declarations() {
    let tex = MockTextures::default();
    let tgsi = header("DCL SVIEW[0], 2D_ARRAY, FLOAT\nDCL SVIEW[3], 1D, FLOAT\n")
        + "  0: SAMPLE OUT[0], IN[0], SVIEW[0].wzyx, SAMP[2]\n  1: SAMPLE_C OUT[1], IN[0], SVIEW[3], SAMP[1], IN[1].xxxx\n  2: SAMPLE_L OUT[1], IN[0], SVIEW[3], SAMP[1], IN[1].yyyy\n  3: SAMPLE_D OUT[1], IN[0], SVIEW[0], SAMP[1], IN[1], IN[2]\n  4: SAMPLE_I OUT[1], IN[0], SVIEW[3].yxxx\n  5: END\n";
    let out = go(
        &tex,
        vec![
            vec4([1.0, 2.0, 3.0, 4.0]),
            vec4([5.0, 6.0, 7.0, 8.0]),
            vec4([0.5; 4]),
        ],
        &tgsi,
    );
    assert_eq!(
        lane0_f(&out[0]),
        [0.0, 3.0, 2.0, 1.0],
        "result swizzled by the SVIEW operand"
    );
    let s = tex.samples.lock().unwrap();
    assert_eq!(
        (s[0].view, s[0].sampler, s[0].target),
        (0, 2, TextureTarget::Tex2DArray)
    );
    assert_eq!(s[0].coords[..3], [[1.0; 4], [2.0; 4], [3.0; 4]]);
    assert_eq!(
        (s[1].view, s[1].sampler, s[1].compare),
        (3, 1, Some([5.0; 4]))
    );
    assert_eq!(s[2].lod, LodMode::Explicit([6.0; 4]));
    assert_eq!(
        s[3].lod,
        LodMode::Gradient {
            ddx: [[5.0; 4], [6.0; 4], [0.0; 4]],
            ddy: [[0.5; 4], [0.5; 4], [0.0; 4]]
        }
    );
    let f = tex.fetches.lock().unwrap();
    assert_eq!(f[0].1, TextureTarget::Tex1D);
}

#[test]
fn texture_errors_are_reported() {
    let tex = MockTextures::default();
    for body in [
        "SAMPLE OUT[0], IN[0], SVIEW[5], SAMP[0]",
        "TEX OUT[0], IN[0], IN[1], 2D",
        "TXF OUT[0], IN[0], SAMP[0], CUBE",
    ] {
        let r = Run {
            textures: &tex,
            ..Run::default()
        };
        assert!(
            r.go(&(header("") + &format!("  0: {body}\n  1: END\n")))
                .is_err(),
            "{body}"
        );
    }
}
