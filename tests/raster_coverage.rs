//! Coverage: fill rule, snapping, exact pixel sets, orientation and culling.

mod raster_support;

use raster_support::*;
use softgpu::raster::{ClipConvention, CullMode, DrawState, FrontFace, Viewport};
use softgpu::texture::Format;

fn covered_set(counts: &[u32], width: u32) -> Vec<(u32, u32)> {
    counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, _)| (i as u32 % width, i as u32 / width))
        .collect()
}

#[test]
fn square_of_two_triangles_covers_each_pixel_once() {
    let (a, b, c, d) = ((2.0, 2.0), (6.0, 2.0), (2.0, 6.0), (6.0, 6.0));
    let counts = coverage_counts(&[[a, b, c], [c, b, d]], 8, 8, ClipConvention::OpenGl);
    let expected: Vec<(u32, u32)> = (2..6).flat_map(|y| (2..6).map(move |x| (x, y))).collect();
    assert_eq!(covered_set(&counts, 8), expected);
    assert!(counts.iter().all(|&c| c <= 1));
}

#[test]
fn pixel_centres_on_edges_follow_the_top_left_rule() {
    // Left and top edges through pixel centres are inside, the hypotenuse (right/bottom) is not.
    let upper = [(0.5, 0.5), (4.5, 0.5), (0.5, 4.5)];
    let counts = coverage_counts(&[upper], 8, 8, ClipConvention::OpenGl);
    let expected: Vec<(u32, u32)> = (0..4)
        .flat_map(|y| (0..4).map(move |x| (x, y)))
        .filter(|(x, y)| x + y < 4)
        .collect();
    assert_eq!(covered_set(&counts, 8), expected);
    // The other half: its hypotenuse is a top-left edge, its right and bottom edges are not.
    let lower = [(4.5, 0.5), (4.5, 4.5), (0.5, 4.5)];
    let counts = coverage_counts(&[lower], 8, 8, ClipConvention::OpenGl);
    let expected: Vec<(u32, u32)> = (0..4)
        .flat_map(|y| (0..4).map(move |x| (x, y)))
        .filter(|(x, y)| x + y >= 4)
        .collect();
    assert_eq!(covered_set(&counts, 8), expected);
    // Same with the opposite winding.
    let counts = coverage_counts(
        &[[(0.5, 4.5), (4.5, 0.5), (0.5, 0.5)]],
        8,
        8,
        ClipConvention::Vulkan,
    );
    assert_eq!(covered_set(&counts, 8).len(), 10);
}

#[test]
fn axis_aligned_rectangle_through_centres() {
    let (a, b, c, d) = ((1.5, 1.5), (5.5, 1.5), (1.5, 5.5), (5.5, 5.5));
    let counts = coverage_counts(&[[a, b, c], [b, d, c]], 8, 8, ClipConvention::OpenGl);
    let expected: Vec<(u32, u32)> = (1..5).flat_map(|y| (1..5).map(move |x| (x, y))).collect();
    assert_eq!(covered_set(&counts, 8), expected);
    assert!(counts.iter().all(|&c| c <= 1));
}

fn snap(v: f64) -> f64 {
    (v * 256.0).round() / 256.0
}

fn cross(o: (f64, f64), a: (f64, f64), p: (f64, f64)) -> f64 {
    (a.0 - o.0) * (p.1 - o.1) - (a.1 - o.1) * (p.0 - o.0)
}

/// True when the pixel centre is inside the convex polygon with margin (no tie with any edge).
fn strictly_inside(poly: &[(f64, f64)], p: (f64, f64)) -> bool {
    let n = poly.len();
    let signs: Vec<f64> = (0..n)
        .map(|i| cross(poly[i], poly[(i + 1) % n], p))
        .collect();
    signs.iter().all(|&s| s > 1e-9) || signs.iter().all(|&s| s < -1e-9)
}

#[test]
fn random_triangle_pairs_sharing_an_edge_cover_every_pixel_exactly_once() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (w, h) = (48u32, 40u32);
    let mut checked_inside = 0;
    for round in 0..300 {
        // A coarse grid (quarter pixels) makes pixel centres land on edges often.
        let steps = if round % 2 == 0 { 2.0 } else { 256.0 };
        let mut p = || {
            (
                rng.grid(-4.0, w as f64 + 4.0, steps),
                rng.grid(-4.0, h as f64 + 4.0, steps),
            )
        };
        let (a, b, r, s) = (p(), p(), p(), p());
        let (sr, ss) = (cross(a, b, r), cross(a, b, s));
        if sr * ss >= 0.0 || a == b {
            continue;
        }
        // Random windings for both triangles.
        let t1 = if round % 3 == 0 { [a, b, r] } else { [b, a, r] };
        let t2 = if round % 5 == 0 { [a, b, s] } else { [s, b, a] };
        let counts = coverage_counts(&[t1, t2], w, h, ClipConvention::OpenGl);
        // The union is the quadrilateral a-r-b-s; where it is convex every centre inside it must
        // be covered exactly once, and nothing may be covered twice anywhere.
        let quad = [a, r, b, s];
        let convex = {
            let c: Vec<f64> = (0..4)
                .map(|i| cross(quad[i], quad[(i + 1) % 4], quad[(i + 2) % 4]))
                .collect();
            c.iter().all(|&v| v > 0.0) || c.iter().all(|&v| v < 0.0)
        };
        for y in 0..h {
            for x in 0..w {
                let n = counts[(y * w + x) as usize];
                assert!(
                    n <= 1,
                    "round {round}: pixel ({x},{y}) covered {n} times by {t1:?} {t2:?}"
                );
                let centre = (x as f64 + 0.5, y as f64 + 0.5);
                if convex && strictly_inside(&quad, centre) {
                    assert_eq!(
                        n, 1,
                        "round {round}: pixel ({x},{y}) not covered by {t1:?} {t2:?}"
                    );
                    checked_inside += 1;
                }
            }
        }
    }
    assert!(
        checked_inside > 10_000,
        "only {checked_inside} interior pixels checked"
    );
}

#[test]
fn fan_around_a_point_covers_the_polygon_exactly_once() {
    for (cx, cy, steps) in [(16.5, 16.5, 256.0), (16.0, 16.0, 2.0), (15.25, 17.75, 4.0)] {
        let n = 13;
        let points: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                let t = i as f64 / n as f64 * std::f64::consts::TAU;
                let r = 11.0 + (i % 3) as f64; // a non-regular, still convex-ish star
                (
                    ((cx + r * t.cos()) * steps).round() / steps,
                    ((cy + r * t.sin()) * steps).round() / steps,
                )
            })
            .collect();
        let tris: Vec<[(f64, f64); 3]> = (0..n)
            .map(|i| [(cx, cy), points[i], points[(i + 1) % n]])
            .collect();
        let counts = coverage_counts(&tris, 32, 32, ClipConvention::OpenGl);
        let mut inside = 0;
        for y in 0..32u32 {
            for x in 0..32u32 {
                let c = counts[(y * 32 + x) as usize];
                assert!(c <= 1, "pixel ({x},{y}) covered {c} times");
                let p = (x as f64 + 0.5, y as f64 + 0.5);
                // Inside one fan triangle strictly, or on a spoke strictly inside the polygon.
                let in_some = tris.iter().any(|t| strictly_inside(t, p));
                if in_some {
                    assert_eq!(c, 1, "pixel ({x},{y}) not covered");
                    inside += 1;
                }
                let on_spoke = (0..n).any(|i| {
                    let q = points[i];
                    let d = cross((cx, cy), q, p).abs();
                    let along = (p.0 - cx) * (q.0 - cx) + (p.1 - cy) * (q.1 - cy);
                    let len2 = (q.0 - cx).powi(2) + (q.1 - cy).powi(2);
                    d < 1e-12 && along > 0.0 && along < len2 * 0.9
                });
                if on_spoke {
                    assert_eq!(c, 1, "spoke pixel ({x},{y}) not covered exactly once");
                }
            }
        }
        assert!(inside > 300);
        // The centre pixel's centre is a shared vertex of all triangles when on a centre.
        if cx.fract() == 0.5 {
            assert_eq!(counts[(cy as u32 * 32 + cx as u32) as usize], 1);
        }
    }
}

#[test]
fn random_triangles_match_exact_edge_functions_away_from_ties() {
    let mut rng = Rng(12345);
    let (w, h) = (40u32, 36u32);
    for _ in 0..200 {
        // Inside the view volume: clipping would move edges by rounding (tested elsewhere).
        // The offset keeps values away from half sub-pixel steps, where the f32 viewport
        // transform's rounding decides which way a vertex snaps.
        let off = 1.0 / (256.0 * 64.0);
        let mut p = || {
            (
                rng.grid(0.0, 40.0, 4096.0) + off,
                rng.grid(0.0, 36.0, 4096.0) + off,
            )
        };
        let tri = [p(), p(), p()];
        let counts = coverage_counts(&[tri], w, h, ClipConvention::OpenGl);
        let snapped = tri.map(|(x, y)| (snap(x), snap(y)));
        for y in 0..h {
            for x in 0..w {
                let c = (x as f64 + 0.5, y as f64 + 0.5);
                let e: Vec<f64> = (0..3)
                    .map(|i| cross(snapped[i], snapped[(i + 1) % 3], c))
                    .collect();
                let tie = e.iter().any(|v| v.abs() < 1e-9);
                if tie {
                    continue;
                }
                let inside = e.iter().all(|&v| v > 0.0) || e.iter().all(|&v| v < 0.0);
                assert_eq!(
                    counts[(y * w + x) as usize] == 1,
                    inside,
                    "pixel ({x},{y}) of {tri:?}"
                );
            }
        }
    }
}

#[test]
fn vertices_snap_to_eight_subpixel_bits() {
    // Left edge x = 2.5 passes through the centres of column 2 (a left edge: inside).
    let tri = |x: f64| [(x, 0.0), (8.0, 0.0), (x, 8.0)];
    let on = coverage_counts(&[tri(2.5)], 8, 8, ClipConvention::OpenGl);
    // Less than half a sub-pixel step away snaps back onto the centres.
    assert_eq!(
        coverage_counts(&[tri(2.5 + 0.45 / 256.0)], 8, 8, ClipConvention::OpenGl),
        on
    );
    assert_eq!(
        coverage_counts(&[tri(2.5 - 0.45 / 256.0)], 8, 8, ClipConvention::OpenGl),
        on
    );
    // One sub-pixel step to the right excludes column 2.
    let off = coverage_counts(&[tri(2.5 + 1.0 / 256.0)], 8, 8, ClipConvention::OpenGl);
    for y in 0..8 {
        assert_eq!(on[y * 8 + 2], 1);
        assert_eq!(off[y * 8 + 2], 0);
        assert_eq!(on[y * 8 + 3], off[y * 8 + 3]);
    }
    // A sliver thinner than half a step collapses to zero area and draws nothing.
    let sliver = [
        (1.0, 1.0),
        (7.0, 1.0 + 0.3 / 256.0),
        (1.0, 1.0 + 0.2 / 256.0),
    ];
    assert!(coverage_counts(&[sliver], 8, 8, ClipConvention::OpenGl)
        .iter()
        .all(|&c| c == 0));
}

#[test]
fn degenerate_triangles_are_dropped_and_counted() {
    let vs = PassVs::new(0);
    let fs = ConstFs::new([1.0f32.to_bits(); 4]);
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let mut target = Target::new(Format::R8Unorm, 8, 8);
    let verts: Vec<[u32; 4]> = [
        (1.0, 1.0),
        (4.0, 4.0),
        (7.0, 7.0),
        (2.0, 2.0),
        (2.0, 2.0),
        (5.0, 1.0),
    ]
    .iter()
    .flat_map(|&(x, y)| vertex(at(x, y, 8, 8), &[]))
    .collect();
    let stats = target.draw(&state, &verts, 1).unwrap();
    assert_eq!(stats.triangles, 2);
    assert_eq!(stats.degenerate, 2);
    assert_eq!(stats.pixels_written, 0);
    assert!(target.coverage().iter().all(|&c| !c));
}

/// Draws one clip-space triangle with a constant colour and returns (coverage, stats).
fn draw_clip(
    tri: [[f32; 4]; 3],
    convention: ClipConvention,
    cull: CullMode,
    front: FrontFace,
) -> (Vec<bool>, softgpu::raster::DrawStats) {
    let vs = PassVs::new(0);
    let fs = ConstFs::new([1.0f32.to_bits(); 4]);
    let mut state = DrawState::new(&vs, &fs, convention);
    state.cull = cull;
    state.front_face = front;
    let mut target = Target::new(Format::R8Unorm, 16, 16);
    let verts: Vec<[u32; 4]> = tri.iter().flat_map(|&p| vertex(p, &[])).collect();
    let stats = target.draw(&state, &verts, 1).unwrap();
    (target.coverage(), stats)
}

#[test]
fn ndc_y_minus_one_is_row_zero_under_both_conventions() {
    // Counter-clockwise with y up: covers NDC y in [-1, -0.5], i.e. rows 0..4.
    let tri = [
        [-1.0, -1.0, 0.5, 1.0],
        [1.0, -1.0, 0.5, 1.0],
        [-1.0, -0.5, 0.5, 1.0],
    ];
    for convention in [ClipConvention::OpenGl, ClipConvention::Vulkan] {
        let (cov, stats) = draw_clip(tri, convention, CullMode::None, FrontFace::CounterClockwise);
        assert_eq!(stats.rasterized, 1);
        assert!(cov[0], "{convention:?}: pixel (0,0) not covered");
        for (i, &c) in cov.iter().enumerate() {
            if c {
                assert!(i / 16 < 4, "{convention:?}: row {} covered", i / 16);
            }
        }
    }
}

#[test]
fn facing_and_culling_follow_each_convention() {
    // Counter-clockwise in OpenGL's y-up NDC; clockwise in Vulkan's y-down NDC.
    let ccw_up = [
        [-0.5, -0.5, 0.0, 1.0],
        [0.5, -0.5, 0.0, 1.0],
        [0.0, 0.5, 0.0, 1.0],
    ];
    let cw_up = [ccw_up[0], ccw_up[2], ccw_up[1]];
    let cases = [
        (
            ClipConvention::OpenGl,
            ccw_up,
            FrontFace::CounterClockwise,
            true,
        ),
        (
            ClipConvention::OpenGl,
            cw_up,
            FrontFace::CounterClockwise,
            false,
        ),
        (ClipConvention::OpenGl, cw_up, FrontFace::Clockwise, true),
        (
            ClipConvention::Vulkan,
            ccw_up,
            FrontFace::CounterClockwise,
            false,
        ),
        (
            ClipConvention::Vulkan,
            cw_up,
            FrontFace::CounterClockwise,
            true,
        ),
        (ClipConvention::Vulkan, ccw_up, FrontFace::Clockwise, true),
    ];
    for (convention, tri, front_face, is_front) in cases {
        let drawn = |cull| {
            let (cov, stats) = draw_clip(tri, convention, cull, front_face);
            assert_eq!(stats.culled + stats.rasterized, 1);
            (cov.iter().any(|&c| c), stats.culled)
        };
        assert_eq!(drawn(CullMode::None), (true, 0));
        assert_eq!(
            drawn(CullMode::Back),
            (is_front, !is_front as u64),
            "{convention:?} {front_face:?}"
        );
        assert_eq!(
            drawn(CullMode::Front),
            (!is_front, is_front as u64),
            "{convention:?} {front_face:?}"
        );
        assert_eq!(drawn(CullMode::FrontAndBack), (false, 1));
    }
}

#[test]
fn viewport_offset_and_pixels_outside_the_target() {
    let vs = PassVs::new(0);
    let fs = ConstFs::new([1.0f32.to_bits(); 4]);
    let mut state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    // A viewport hanging off the bottom-right of the target.
    state.viewport = Some(Viewport {
        x: 10.0,
        y: 12.0,
        width: 20.0,
        height: 20.0,
    });
    let mut target = Target::new(Format::R8Unorm, 16, 16);
    let full = [
        [-1.0, -1.0, 0.0, 1.0],
        [1.0, -1.0, 0.0, 1.0],
        [-1.0, 1.0, 0.0, 1.0],
        [1.0, 1.0, 0.0, 1.0],
    ];
    let verts: Vec<[u32; 4]> = [0, 1, 2, 2, 1, 3]
        .iter()
        .flat_map(|&i| vertex(full[i], &[]))
        .collect();
    let stats = target.draw(&state, &verts, 1).unwrap();
    let cov = target.coverage();
    for y in 0..16 {
        for x in 0..16 {
            assert_eq!(cov[y * 16 + x], x >= 10 && y >= 12, "pixel ({x},{y})");
        }
    }
    assert_eq!(stats.pixels_written, 6 * 4);
}

#[test]
fn odd_sized_targets_write_only_inside() {
    // Quads hang over the right and bottom edges of a 7x5 target: those lanes are helpers.
    let counts = coverage_counts(
        &[[(-3.0, -3.0), (20.0, -3.0), (-3.0, 20.0)]],
        7,
        5,
        ClipConvention::OpenGl,
    );
    assert_eq!(counts.len(), 35);
    assert!(counts.iter().all(|&c| c == 1));
}
