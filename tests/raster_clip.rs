//! Clipping: triangles behind the camera, outside the view volume, with huge or non-finite
//! coordinates, against the depth range of each convention.

mod raster_support;

use raster_support::*;
use softgpu::ir::InterpolateMode;
use softgpu::raster::{ClipConvention, DrawState};
use softgpu::texture::Format;

const W: u32 = 40;
const H: u32 = 30;

fn solve3(m: [[f64; 3]; 3], r: [f64; 3]) -> Option<[f64; 3]> {
    let det = |m: [[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(m);
    if d.abs() < 1e-12 {
        return None;
    }
    Some(std::array::from_fn(|k| {
        let mut mk = m;
        for row in 0..3 {
            mk[row][k] = r[row];
        }
        det(mk) / d
    }))
}

/// Reference: the clip-space barycentrics of the triangle point seen through the centre of
/// pixel (x, y), and whether that point is visible (in front of the camera, inside the volume).
fn reference(
    v: &[[f64; 4]; 3],
    x: u32,
    y: u32,
    convention: ClipConvention,
) -> Option<([f64; 3], bool)> {
    let xn = (x as f64 + 0.5) / W as f64 * 2.0 - 1.0;
    let row_ndc = (y as f64 + 0.5) / H as f64 * 2.0 - 1.0;
    // WebGPU puts NDC y = +1 on row 0; the others put y = -1 there.
    let yn = if convention == ClipConvention::WebGpu {
        -row_ndc
    } else {
        row_ndc
    };
    let m = [
        [
            v[0][0] - xn * v[0][3],
            v[1][0] - xn * v[1][3],
            v[2][0] - xn * v[2][3],
        ],
        [
            v[0][1] - yn * v[0][3],
            v[1][1] - yn * v[1][3],
            v[2][1] - yn * v[2][3],
        ],
        [1.0, 1.0, 1.0],
    ];
    let b = solve3(m, [0.0, 0.0, 1.0])?;
    let p: [f64; 4] = std::array::from_fn(|c| (0..3).map(|i| b[i] * v[i][c]).sum());
    let near = match convention {
        ClipConvention::OpenGl => -p[3],
        ClipConvention::Vulkan | ClipConvention::WebGpu => 0.0,
    };
    let visible = b.iter().all(|&bi| bi >= 0.0) && p[3] > 0.0 && p[2] >= near && p[2] <= p[3];
    Some((b, visible))
}

/// Draws clip-space triangle `v` with a perspective varying (the one-hot barycentric basis,
/// alpha 1) and checks coverage and values against [`reference`] away from ties.
fn check_against_reference(v: [[f64; 4]; 3], convention: ClipConvention) -> usize {
    let vs = PassVs::new(1);
    let fs = CopyFs::new(InterpolateMode::Perspective);
    let state = DrawState::new(&vs, &fs, convention);
    let basis = [
        [1.0, 0.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
    ];
    let verts: Vec<[u32; 4]> = (0..3)
        .flat_map(|i| vertex(v[i].map(|c| c as f32), &[basis[i]]))
        .collect();
    let mut target = Target::new(Format::R32G32B32A32Sfloat, W, H);
    target.draw(&state, &verts, 2).unwrap();
    let mut visible_pixels = 0;
    for y in 0..H {
        for x in 0..W {
            let got = target.texel_f32(x, y);
            let Some((b, visible)) = reference(&v, x, y, convention) else {
                continue;
            };
            // Skip pixel centres within rounding distance of any edge or clip plane.
            let (bx, by) = ((x as f64 + 0.5) / W as f64, (y as f64 + 0.5) / H as f64);
            let margin = 2e-3;
            let near_edge = b.iter().any(|&bi| bi.abs() < margin)
                || bx < margin / 4.0
                || by < margin / 4.0
                || 1.0 - bx < margin / 4.0
                || 1.0 - by < margin / 4.0;
            if near_edge {
                continue;
            }
            let p: [f64; 4] = std::array::from_fn(|c| (0..3).map(|i| b[i] * v[i][c]).sum());
            let depth_tie =
                p[2].abs() < 1e-3 * p[3].abs() || (p[3] - p[2]).abs() < 1e-3 * p[3].abs();
            if depth_tie {
                continue;
            }
            assert_eq!(
                got[3] == 1.0,
                visible,
                "{convention:?} pixel ({x},{y}) b={b:?} got {got:?}"
            );
            if visible {
                visible_pixels += 1;
                for c in 0..3 {
                    assert!(
                        (got[c] as f64 - b[c]).abs() < 1e-3,
                        "pixel ({x},{y}) {c}: {got:?} vs {b:?}"
                    );
                }
            }
        }
    }
    visible_pixels
}

#[test]
fn triangles_partly_behind_the_camera() {
    // A floor-like triangle: one vertex far in front, two behind the eye (w < 0).
    let floor = [
        [-3.0, -1.0, 2.0, 4.0],
        [3.0, -1.0, -3.0, -2.0],
        [-2.5, -1.5, -4.0, -1.0],
    ];
    // One vertex behind, others in view.
    let one_behind = [
        [-0.8, -0.6, 0.1, 1.0],
        [0.7, -0.5, 0.2, 1.2],
        [0.3, 0.9, -1.5, -0.5],
    ];
    // Two in view, w straddling zero on the far side of the screen.
    let two_behind = [
        [0.0, 0.5, 0.5, 1.0],
        [2.0, -3.0, 0.0, -0.2],
        [-2.0, -3.0, 0.0, -0.3],
    ];
    for tri in [floor, one_behind, two_behind] {
        for convention in [
            ClipConvention::OpenGl,
            ClipConvention::Vulkan,
            ClipConvention::WebGpu,
        ] {
            let seen = check_against_reference(tri, convention);
            assert!(
                seen > 20,
                "{convention:?} {tri:?}: only {seen} visible pixels checked"
            );
        }
    }
}

#[test]
fn triangles_crossing_the_view_volume_sides() {
    let big = [
        [-5.0, -4.0, 0.2, 1.0],
        [6.0, -0.5, 0.3, 1.5],
        [-1.0, 7.0, 0.4, 2.0],
    ];
    let sliver = [
        [-3.0, -0.2, 0.5, 1.0],
        [3.0, 0.1, 0.5, 1.0],
        [2.9, 0.4, 0.5, 1.0],
    ];
    for tri in [big, sliver] {
        for convention in [
            ClipConvention::OpenGl,
            ClipConvention::Vulkan,
            ClipConvention::WebGpu,
        ] {
            assert!(check_against_reference(tri, convention) > 50);
        }
    }
}

#[test]
fn depth_range_depends_on_the_convention() {
    // z = -0.5 w: inside OpenGL's [-w, w], in front of Vulkan's near plane 0.
    let z_neg = [
        [-0.9, -0.9, -0.5, 1.0],
        [0.9, -0.9, -0.5, 1.0],
        [0.0, 0.9, -0.5, 1.0],
    ];
    // Crossing the near plane of both.
    let crossing = [
        [-0.9, -0.9, -1.5, 1.0],
        [0.9, -0.9, 0.5, 1.0],
        [0.0, 0.9, 0.9, 1.0],
    ];
    let vs = PassVs::new(0);
    let fs = ConstFs::new([1.0f32.to_bits(); 4]);
    for (convention, drawn) in [
        (ClipConvention::OpenGl, true),
        (ClipConvention::Vulkan, false),
        (ClipConvention::WebGpu, false),
    ] {
        let state = DrawState::new(&vs, &fs, convention);
        let mut target = Target::new(Format::R8Unorm, W, H);
        let verts: Vec<[u32; 4]> = z_neg.iter().flat_map(|&p| vertex(p, &[])).collect();
        let stats = target.draw(&state, &verts, 1).unwrap();
        assert_eq!(stats.pixels_written > 0, drawn, "{convention:?}");
        assert_eq!(stats.clipped_away, !drawn as u64);
        assert!(check_against_reference(crossing, convention) > 20);
    }
}

#[test]
fn triangles_outside_the_view_volume_draw_nothing() {
    let vs = PassVs::new(0);
    let fs = ConstFs::new([1.0f32.to_bits(); 4]);
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let outside = [
        // Right of x = w.
        [
            [1.5, 0.0, 0.0, 1.0],
            [3.0, 0.5, 0.0, 1.0],
            [2.0, -0.5, 0.0, 1.0],
        ],
        // Beyond the far plane.
        [
            [0.0, 0.0, 2.0, 1.0],
            [0.5, 0.0, 2.0, 1.0],
            [0.0, 0.5, 2.0, 1.0],
        ],
        // Entirely behind the eye.
        [
            [0.0, 0.0, 0.0, -1.0],
            [0.5, 0.0, 0.0, -1.0],
            [0.0, 0.5, 0.0, -2.0],
        ],
        // Outside different planes at each vertex, missing the volume's corner.
        [
            [3.0, 0.5, 0.0, 1.0],
            [0.5, 3.0, 0.0, 1.0],
            [4.0, 4.0, 0.0, 1.0],
        ],
    ];
    for tri in outside {
        let mut target = Target::new(Format::R8Unorm, W, H);
        let verts: Vec<[u32; 4]> = tri.iter().flat_map(|&p| vertex(p, &[])).collect();
        let stats = target.draw(&state, &verts, 1).unwrap();
        assert_eq!(stats.pixels_written, 0, "{tri:?}");
        assert_eq!(stats.rasterized, 0, "{tri:?}");
        assert!(target.coverage().iter().all(|&c| !c));
    }
}

#[test]
fn huge_and_non_finite_coordinates_never_panic() {
    let vs = PassVs::new(1);
    let fs = CopyFs::new(InterpolateMode::Perspective);
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let big = 1e6f32;
    let cases: Vec<([[f32; 4]; 3], bool)> = vec![
        // Covers the whole screen after clipping.
        (
            [
                [-big, -big, 0.0, 1.0],
                [big, -big, 0.0, 1.0],
                [0.0, big, 0.0, 1.0],
            ],
            true,
        ),
        (
            [
                [-1e4, -1e4, 0.0, 1e-3],
                [1e4, -1e4, 0.0, 1e-3],
                [0.0, 1e4, 0.0, 1e-3],
            ],
            true,
        ),
        // Beyond f32 precision the clipper's intersections are as inexact as the draw
        // module's (w is lost next to x): whatever is drawn must still be valid.
        (
            [
                [-1e30, -1e30, 0.0, 1.0],
                [1e30, -1e30, 0.0, 1.0],
                [0.0, 1e30, 0.0, 1.0],
            ],
            false,
        ),
        (
            [
                [-1e20, -1e20, 0.0, 1e-20],
                [1e20, -1e20, 0.0, 1e-20],
                [0.0, 1e20, 0.0, 1e-20],
            ],
            false,
        ),
        // Overflow to infinity inside the clipper's dot products.
        (
            [
                [-f32::MAX, -f32::MAX, 0.0, f32::MAX],
                [f32::MAX, -f32::MAX, 0.0, f32::MAX],
                [0.0, f32::MAX, 0.0, f32::MAX],
            ],
            false,
        ),
        (
            [
                [f32::NAN, 0.0, 0.0, 1.0],
                [1.0, 0.0, 0.0, 1.0],
                [0.0, 1.0, 0.0, 1.0],
            ],
            false,
        ),
        (
            [
                [f32::INFINITY, 0.0, 0.0, 1.0],
                [1.0, 0.0, 0.0, 1.0],
                [0.0, 1.0, 0.0, 1.0],
            ],
            false,
        ),
        // w = 0 everywhere (a vertex at the eye).
        (
            [
                [0.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 0.0],
            ],
            false,
        ),
        (
            [
                [0.0, 0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0, 1.0],
                [0.0, 1.0, 0.0, 1.0],
            ],
            false,
        ),
        // Tiny w: fine while 1/w is finite; a denormal w overflows 1/w and is dropped.
        (
            [
                [-1e-30, -1e-30, 0.0, 1e-30],
                [1.0, 0.0, 0.0, 1.0],
                [0.0, 1.0, 0.0, 1.0],
            ],
            true,
        ),
        (
            [
                [-1e-40, -1e-40, 0.0, 1e-40],
                [1.0, 0.0, 0.0, 1.0],
                [0.0, 1.0, 0.0, 1.0],
            ],
            false,
        ),
    ];
    for (tri, must_cover_centre) in cases {
        let mut target = Target::new(Format::R32G32B32A32Sfloat, W, H);
        let verts: Vec<[u32; 4]> = tri
            .iter()
            .flat_map(|&p| vertex(p, &[[0.25, 0.5, 0.75, 1.0]]))
            .collect();
        let stats = target.draw(&state, &verts, 2).unwrap();
        assert_eq!(stats.triangles, 1);
        // A constant varying stays constant up to the rounding of a/w divided by 1/w.
        let expected = [0.25f32, 0.5, 0.75, 1.0];
        let close = |t: [f32; 4]| (0..4).all(|c| (t[c] - expected[c]).abs() < 1e-4);
        if must_cover_centre {
            let t = target.texel_f32(W / 2 + 2, H / 2 + 2);
            assert!(close(t), "{tri:?}: {t:?}");
        }
        for y in 0..H {
            for x in 0..W {
                let t = target.texel_f32(x, y);
                assert!(t == [0.0; 4] || close(t), "{tri:?} ({x},{y}) {t:?}");
            }
        }
    }
}

#[test]
fn clipped_neighbours_still_share_edges_exactly() {
    // A strip of triangles whose shared edges cross the screen borders and the w = 0 plane.
    let mut rng = Rng(77);
    let (mut tested, mut covered) = (0, 0);
    for _ in 0..60 {
        let mut p = || {
            let w = rng.grid(-1.0, 3.0, 64.0);
            [
                rng.grid(-4.0, 4.0, 64.0),
                rng.grid(-4.0, 4.0, 64.0),
                0.0,
                if w.abs() < 0.1 { 1.0 } else { w },
            ]
        };
        let pts = [p(), p(), p(), p(), p()];
        let vs = PassVs::new(0);
        let fs = ConstFs::new([1.0f32.to_bits(); 4]);
        let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
        let coverage: Vec<Vec<bool>> = (0..3)
            .map(|i| {
                let mut target = Target::new(Format::R8Unorm, W, H);
                let verts: Vec<[u32; 4]> = [pts[i], pts[i + 1], pts[i + 2]]
                    .iter()
                    .flat_map(|&q| vertex(q.map(|c| c as f32), &[]))
                    .collect();
                target.draw(&state, &verts, 1).unwrap();
                target.coverage()
            })
            .collect();
        // Sign of the (x, y, w) determinant. Central projection keeps the side of a plane
        // through the eye, so this decides sides even with negative w.
        let orient = |a: [f64; 4], b: [f64; 4], c: [f64; 4]| {
            let d = a[0] * (b[1] * c[3] - b[3] * c[1]) - a[1] * (b[0] * c[3] - b[3] * c[0])
                + a[3] * (b[0] * c[1] - b[1] * c[0]);
            d > 0.0
        };
        let o: Vec<bool> = (0..3)
            .map(|i| orient(pts[i], pts[i + 1], pts[i + 2]))
            .collect();
        // Neighbours share an edge; when their windings alternate (the strip does not fold
        // there) their far vertices lie on opposite sides and no pixel may be covered twice.
        for i in 0..2 {
            if o[i] != o[i + 1] {
                tested += 1;
                let both = coverage[i]
                    .iter()
                    .zip(&coverage[i + 1])
                    .filter(|(a, b)| **a && **b)
                    .count();
                assert_eq!(both, 0, "triangles {i} and {} of {pts:?}", i + 1);
                let shared = coverage[i]
                    .iter()
                    .zip(&coverage[i + 1])
                    .filter(|(a, b)| **a || **b)
                    .count();
                covered += shared;
            }
        }
    }
    assert!(
        tested > 20 && covered > 2000,
        "{tested} pairs, {covered} pixels"
    );
}
