//! Interpolation: perspective-correct, screen-linear, flat (provoking vertex), fragment
//! coordinates, facing, unmatched inputs.

mod raster_support;

use raster_support::*;
use softgpu::exec::{ExecError, QuadIo, QuadShader, ShaderResources, ShaderSignature};
use softgpu::ir::{InterpolateMode, SemanticName};
use softgpu::raster::{
    ClipConvention, DrawState, FragCoordConvention, FragCoordOrigin, PixelCenter, ProvokingVertex,
};
use softgpu::texture::Format;

const W: u32 = 32;
const H: u32 = 32;

/// Screen-space barycentrics of `p` in the window triangle `t`.
fn barycentric(t: [(f64, f64); 3], p: (f64, f64)) -> [f64; 3] {
    let area = (t[1].0 - t[0].0) * (t[2].1 - t[0].1) - (t[1].1 - t[0].1) * (t[2].0 - t[0].0);
    let l1 = ((p.0 - t[0].0) * (t[2].1 - t[0].1) - (p.1 - t[0].1) * (t[2].0 - t[0].0)) / area;
    let l2 = ((t[1].0 - t[0].0) * (p.1 - t[0].1) - (t[1].1 - t[0].1) * (p.0 - t[0].0)) / area;
    [1.0 - l1 - l2, l1, l2]
}

/// Clip-space vertices of window positions `win` with clip w's `ws`.
fn clip_vertices(win: [(f64, f64); 3], ws: [f64; 3], values: [[f32; 4]; 3]) -> Vec<[u32; 4]> {
    (0..3)
        .flat_map(|i| {
            let p = at(win[i].0, win[i].1, W, H);
            let w = ws[i] as f32;
            vertex([p[0] * w, p[1] * w, 0.5 * w, w], &[values[i]])
        })
        .collect()
}

fn draw_varying(mode: InterpolateMode, verts: &[[u32; 4]], convention: ClipConvention) -> Target {
    let vs = PassVs::new(1);
    let fs = CopyFs::new(mode);
    let state = DrawState::new(&vs, &fs, convention);
    let mut target = Target::new(Format::R32G32B32A32Sfloat, W, H);
    target.draw(&state, verts, 2).unwrap();
    target
}

#[test]
fn perspective_correct_interpolation_matches_the_analytic_value() {
    let win = [(2.0, 3.0), (30.0, 5.0), (9.0, 29.0)];
    let ws = [1.0, 3.0, 0.5];
    let values = [
        [0.0, 1.0, -2.0, 8.0],
        [1.0, 0.0, 4.0, 8.0],
        [0.25, 0.5, 1.0, 8.0],
    ];
    let target = draw_varying(
        InterpolateMode::Perspective,
        &clip_vertices(win, ws, values),
        ClipConvention::OpenGl,
    );
    let mut checked = 0;
    for y in 0..H {
        for x in 0..W {
            let l = barycentric(win, (x as f64 + 0.5, y as f64 + 0.5));
            if l.iter().any(|&v| v < 1e-6) {
                continue;
            }
            let got = target.texel_f32(x, y);
            let denom: f64 = (0..3).map(|i| l[i] / ws[i]).sum();
            for c in 0..4 {
                let num: f64 = (0..3).map(|i| l[i] * values[i][c] as f64 / ws[i]).sum();
                let expected = num / denom;
                assert!(
                    (got[c] as f64 - expected).abs() < 2e-5 * (1.0 + expected.abs()),
                    "pixel ({x},{y}) channel {c}: {} vs {expected}",
                    got[c]
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 250);
}

#[test]
fn linear_interpolation_is_screen_linear() {
    let win = [(1.0, 1.0), (31.0, 2.0), (4.0, 30.0)];
    let ws = [1.0, 4.0, 2.0];
    let values = [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
    ];
    let target = draw_varying(
        InterpolateMode::Linear,
        &clip_vertices(win, ws, values),
        ClipConvention::Vulkan,
    );
    for y in 0..H {
        for x in 0..W {
            let l = barycentric(win, (x as f64 + 0.5, y as f64 + 0.5));
            if l.iter().any(|&v| v < 1e-6) {
                continue;
            }
            let got = target.texel_f32(x, y);
            for c in 0..3 {
                assert!(
                    (got[c] as f64 - l[c]).abs() < 1e-5,
                    "pixel ({x},{y}): {got:?} vs {l:?}"
                );
            }
        }
    }
}

#[test]
fn flat_inputs_take_the_provoking_vertex_bits() {
    // Bit patterns that arithmetic would disturb: a NaN payload, a denormal, -0.
    let bits = [
        [0x7fc0_1234, 1, 0x8000_0000, 42],
        [5, 6, 7, 8],
        [0xdead_beef, 0xffff_ffff, 3, 0],
    ];
    let win = [(1.0, 1.0), (31.0, 2.0), (4.0, 30.0)];
    let verts: Vec<[u32; 4]> = (0..3)
        .flat_map(|i| {
            let p = at(win[i].0, win[i].1, W, H);
            vec![p.map(f32::to_bits), bits[i]]
        })
        .collect();
    let vs = PassVs::new(1);
    let fs = CopyFs::new(InterpolateMode::Constant);
    for (convention, provoking, expected) in [
        (ClipConvention::OpenGl, None, bits[2]),
        (ClipConvention::Vulkan, None, bits[0]),
        (
            ClipConvention::OpenGl,
            Some(ProvokingVertex::First),
            bits[0],
        ),
        (ClipConvention::Vulkan, Some(ProvokingVertex::Last), bits[2]),
    ] {
        let mut state = DrawState::new(&vs, &fs, convention);
        if let Some(p) = provoking {
            state.provoking_vertex = p;
        }
        let mut target = Target::new(Format::R32G32B32A32Uint, W, H);
        let stats = target.draw(&state, &verts, 2).unwrap();
        assert!(stats.pixels_written > 300);
        for y in 0..H {
            for x in 0..W {
                let t = target.texel(x, y);
                assert!(t == [0; 4] || t == expected, "({x},{y}): {t:x?}");
            }
        }
    }
}

#[test]
fn clipping_keeps_flat_values_and_interpolates_the_rest() {
    // The triangle reaches far outside the view volume on every side; clipping cuts it into a
    // polygon whose new vertices must still carry the provoking vertex's flat value, and whose
    // perspective varyings stay on the original plane.
    let win = [(-40.0, -20.0), (90.0, 8.0), (10.0, 70.0)];
    let ws = [1.0, 2.0, 1.5];
    let values = [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
    ];
    let verts = clip_vertices(win, ws, values);
    let flat = draw_varying(InterpolateMode::Constant, &verts, ClipConvention::OpenGl);
    let persp = draw_varying(InterpolateMode::Perspective, &verts, ClipConvention::OpenGl);
    for y in 0..H {
        for x in 0..W {
            let l = barycentric(win, (x as f64 + 0.5, y as f64 + 0.5));
            if l.iter().any(|&v| v < 1e-3) {
                continue;
            }
            assert_eq!(flat.texel_f32(x, y), values[2], "({x},{y})");
            let denom: f64 = (0..3).map(|i| l[i] / ws[i]).sum();
            let got = persp.texel_f32(x, y);
            for c in 0..3 {
                let expected = l[c] / ws[c] / denom;
                assert!(
                    (got[c] as f64 - expected).abs() < 1e-4,
                    "({x},{y}) {c}: {} vs {expected}",
                    got[c]
                );
            }
        }
    }
}

/// Fragment shader writing IN[0] (POSITION) to COLOR.
fn frag_coord_target(convention: ClipConvention, fc: FragCoordConvention, w: f32) -> Target {
    let vs = PassVs::new(0);
    let fs = CopyFs::with_input(slot(0, SemanticName::Position, 0, InterpolateMode::Linear));
    let mut state = DrawState::new(&vs, &fs, convention);
    state.frag_coord = fc;
    let full = [[-1.0, -1.0], [3.0, -1.0], [-1.0, 3.0]];
    let verts: Vec<[u32; 4]> = full
        .iter()
        .flat_map(|p| vertex([p[0] * w, p[1] * w, 0.5 * w, w], &[]))
        .collect();
    let mut target = Target::new(Format::R32G32B32A32Sfloat, 8, 6);
    target.draw(&state, &verts, 1).unwrap();
    target
}

#[test]
fn fragment_coordinates_follow_the_program_properties() {
    let cases = [
        (FragCoordOrigin::UpperLeft, PixelCenter::HalfInteger),
        (FragCoordOrigin::LowerLeft, PixelCenter::HalfInteger),
        (FragCoordOrigin::UpperLeft, PixelCenter::Integer),
        (FragCoordOrigin::LowerLeft, PixelCenter::Integer),
    ];
    for (origin, pixel_center) in cases {
        for (convention, depth) in [
            (ClipConvention::OpenGl, 0.75),
            (ClipConvention::Vulkan, 0.5),
        ] {
            let fc = FragCoordConvention {
                origin,
                pixel_center,
            };
            let target = frag_coord_target(convention, fc, 2.0);
            let c = if pixel_center == PixelCenter::HalfInteger {
                0.5
            } else {
                0.0
            };
            for y in 0..6u32 {
                for x in 0..8u32 {
                    let ey = match origin {
                        FragCoordOrigin::UpperLeft => y as f32 + c,
                        FragCoordOrigin::LowerLeft => 5.0 - y as f32 + c,
                    };
                    let t = target.texel_f32(x, y);
                    assert_eq!(t[0], x as f32 + c);
                    assert_eq!(t[1], ey);
                    assert!((t[2] - depth).abs() < 1e-6, "{convention:?} z {}", t[2]);
                    assert!((t[3] - 0.5).abs() < 1e-6, "1/w {}", t[3]);
                }
            }
        }
    }
}

#[test]
fn frag_coord_convention_is_read_from_program_properties() {
    let program = softgpu::ir::text::parse_program(
        "FRAG\nPROPERTY FS_COORD_ORIGIN LOWER_LEFT\nPROPERTY FS_COORD_PIXEL_CENTER INTEGER\nDCL OUT[0], COLOR\n  0: END\n",
    );
    let program = match program {
        Ok(p) => p,
        Err(e) => panic!("parse: {e:?}"),
    };
    let fc = FragCoordConvention::from_program(&program);
    assert_eq!(fc.origin, FragCoordOrigin::LowerLeft);
    assert_eq!(fc.pixel_center, PixelCenter::Integer);
    let plain = softgpu::ir::Program::new(softgpu::ir::Processor::Fragment);
    assert_eq!(
        FragCoordConvention::from_program(&plain),
        FragCoordConvention::default()
    );
}

/// Writes FACE (IN[0].x) and 7 (an unmatched GENERIC[5] input's x + 7).
struct FaceFs {
    sig: ShaderSignature,
}

impl QuadShader for FaceFs {
    fn shade_quad(&self, _: &ShaderResources<'_>, io: &mut QuadIo<'_>) -> Result<u8, ExecError> {
        io.outputs[0][0] = io.inputs[0][0];
        io.outputs[0][1] = io.inputs[1][0].map(|b| (f32::from_bits(b) + 7.0).to_bits());
        io.outputs[0][2] = [0; 4];
        io.outputs[0][3] = [0; 4];
        Ok(0)
    }
    fn signature(&self) -> &ShaderSignature {
        &self.sig
    }
}

#[test]
fn face_is_plus_one_for_front_and_minus_one_for_back_and_unmatched_inputs_are_zero() {
    let fs = FaceFs {
        sig: ShaderSignature {
            inputs: vec![
                slot(0, SemanticName::Face, 0, InterpolateMode::Constant),
                slot(1, SemanticName::Generic, 5, InterpolateMode::Perspective),
            ],
            outputs: vec![slot(
                0,
                SemanticName::Color,
                0,
                InterpolateMode::Perspective,
            )],
            num_inputs: 2,
            num_outputs: 1,
            ..ShaderSignature::default()
        },
    };
    let vs = PassVs::new(0);
    let ccw = [(2.0, 2.0), (30.0, 2.0), (2.0, 30.0)];
    for (tri, convention, expected) in [
        (ccw, ClipConvention::OpenGl, 1.0),
        ([ccw[0], ccw[2], ccw[1]], ClipConvention::OpenGl, -1.0),
        (ccw, ClipConvention::Vulkan, -1.0),
    ] {
        let state = DrawState::new(&vs, &fs, convention);
        let verts: Vec<[u32; 4]> = tri
            .iter()
            .flat_map(|&(x, y)| vertex(at(x, y, W, H), &[]))
            .collect();
        let mut target = Target::new(Format::R32G32B32A32Sfloat, W, H);
        target.draw(&state, &verts, 1).unwrap();
        assert_eq!(
            target.texel_f32(4, 4),
            [expected, 7.0, 0.0, 0.0],
            "{convention:?}"
        );
    }
}
