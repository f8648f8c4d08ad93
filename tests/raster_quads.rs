//! Quads: helper lanes and the live mask, kill, API order, determinism across thread counts,
//! errors, and drawing into a `Texture`.

mod raster_support;

use raster_support::*;
use softgpu::exec::{ExecError, QuadIo, QuadShader, ShaderResources, ShaderSignature};
use softgpu::ir::{InterpolateMode, Semantic, SemanticName};
use softgpu::raster::{
    draw_triangles, ClipConvention, DrawState, RasterError, RenderTarget, Vertices, Viewport,
};
use softgpu::texture::{Format, Texture};

/// A triangle in window space with varying (u, v, 0, 1) given per vertex.
fn tri_with_varying(win: [(f64, f64); 3], uv: [(f32, f32); 3], w: u32, h: u32) -> Vec<[u32; 4]> {
    (0..3)
        .flat_map(|i| {
            vertex(
                at(win[i].0, win[i].1, w, h),
                &[[uv[i].0, uv[i].1, 0.0, 1.0]],
            )
        })
        .collect()
}

#[test]
fn helper_lanes_run_with_extrapolated_inputs_and_never_write() {
    // A triangle covering only the centre of pixel (5, 3): its quad is (4, 2)..(5, 3).
    let verts = tri_with_varying(
        [(5.2, 3.2), (5.9, 3.4), (5.3, 3.9)],
        [(0.0, 0.0), (7.0, 0.0), (0.0, 7.0)],
        16,
        16,
    );
    let vs = PassVs::new(1);
    let fs = RecordingFs::new();
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let mut target = Target::new(Format::R32G32B32A32Sfloat, 16, 16);
    let stats = target.draw(&state, &verts, 2).unwrap();
    let seen = fs.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let q = seen[0];
    assert_eq!(
        q.live, 0b1000,
        "only the bottom-right lane (5, 3) is covered"
    );
    assert_eq!(q.x, [4.5, 5.5, 4.5, 5.5]);
    assert_eq!(q.y, [2.5, 2.5, 3.5, 3.5]);
    // Helper lanes carry the plane's values, so differences are the true derivatives.
    let ddx = q.v[1] - q.v[0];
    let ddy = q.v[2] - q.v[0];
    assert!((q.v[3] - q.v[0] - ddx - ddy).abs() < 1e-3);
    assert!(ddx.abs() > 1.0 && ddy.abs() > 1.0);
    assert_eq!(stats.quads, 1);
    assert_eq!(stats.pixels_written, 1);
    let written: Vec<usize> = target
        .coverage()
        .iter()
        .enumerate()
        .filter(|(_, &c)| c)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(written, vec![3 * 16 + 5]);
}

#[test]
fn every_shaded_quad_is_aligned_and_has_a_live_lane() {
    let verts = tri_with_varying(
        [(1.3, 0.7), (27.8, 9.1), (6.2, 30.4)],
        [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)],
        32,
        32,
    );
    let vs = PassVs::new(1);
    let fs = RecordingFs::new();
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let mut target = Target::new(Format::R32G32B32A32Sfloat, 32, 32);
    let stats = target.draw(&state, &verts, 2).unwrap();
    let seen = fs.seen.lock().unwrap().clone();
    assert_eq!(seen.len() as u64, stats.quads);
    let mut covered = std::collections::HashSet::new();
    let mut live_total = 0;
    for q in &seen {
        assert_ne!(q.live, 0);
        let (x0, y0) = (q.x[0] - 0.5, q.y[0] - 0.5);
        assert_eq!(x0 % 2.0, 0.0);
        assert_eq!(y0 % 2.0, 0.0);
        for lane in 0..4 {
            if q.live & (1 << lane) != 0 {
                assert!(
                    covered.insert((q.x[lane] as u32, q.y[lane] as u32)),
                    "pixel shaded twice"
                );
                live_total += 1;
            }
        }
    }
    assert_eq!(live_total, stats.pixels_written);
    let cov = target.coverage();
    for (x, y) in &covered {
        assert!(cov[(y * 32 + x) as usize]);
    }
    assert_eq!(cov.iter().filter(|&&c| c).count(), covered.len());
}

#[test]
fn killed_lanes_are_not_written() {
    // v goes from -1 at row 0 to 3 at row 40: the shader kills where v < 0.
    let verts = tri_with_varying(
        [(0.0, 0.0), (40.0, 0.0), (0.0, 40.0)],
        [(0.5, -1.0), (0.5, -1.0), (0.5, 3.0)],
        16,
        16,
    );
    let vs = PassVs::new(1);
    let fs = RecordingFs::new();
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let mut target = Target::new(Format::R32G32B32A32Sfloat, 16, 16);
    let stats = target.draw(&state, &verts, 2).unwrap();
    // Clipping splits the triangle into a fan, so quads on the fan's seams run more than once.
    assert!(stats.quads >= 64);
    let mut written = 0;
    for y in 0..16 {
        for x in 0..16 {
            let v = -1.0 + 4.0 * (y as f32 + 0.5) / 40.0;
            let t = target.texel_f32(x, y);
            if v < 0.0 {
                assert_eq!(t, [0.0; 4], "({x},{y}) killed but written");
            } else {
                assert_eq!(t[0], 0.5);
                written += 1;
            }
        }
    }
    assert_eq!(stats.pixels_written, written);
    assert!(written > 0 && written < 256);
}

#[test]
fn later_triangles_overwrite_earlier_ones_in_api_order() {
    let vs = PassVs::new(1);
    let fs = CopyFs::new(InterpolateMode::Constant);
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let mut verts = Vec::new();
    // Many full-screen triangles; the last one decides every pixel.
    for k in 0..50 {
        let c = k as f32;
        for (x, y) in [(-1.0, -1.0), (3.0, -1.0), (-1.0, 3.0)] {
            verts.extend(vertex([x, y, 0.0, 1.0], &[[c, c, c, c]]));
        }
    }
    let mut target = Target::new(Format::R32G32B32A32Sfloat, 150, 130);
    target.draw(&state, &verts, 2).unwrap();
    for y in 0..130 {
        for x in 0..150 {
            assert_eq!(target.texel_f32(x, y), [49.0; 4]);
        }
    }
}

fn random_scene(seed: u64) -> Vec<[u32; 4]> {
    let mut rng = Rng(seed);
    let mut verts = Vec::new();
    for k in 0..300 {
        for _ in 0..3 {
            let pw = rng.grid(0.3, 3.0, 64.0);
            let x = rng.grid(-1.3, 1.3, 1024.0) * pw;
            let y = rng.grid(-1.3, 1.3, 1024.0) * pw;
            let u = rng.grid(0.0, 1.0, 1024.0) as f32;
            verts.extend(vertex(
                [x as f32, y as f32, 0.0, pw as f32],
                &[[u, k as f32 / 300.0, 1.0 - u, 1.0]],
            ));
        }
    }
    verts
}

#[test]
fn output_is_identical_for_any_thread_count() {
    let (w, h) = (300u32, 200u32);
    let verts = random_scene(99);
    let vs = PassVs::new(1);
    let fs = CopyFs::new(InterpolateMode::Perspective);
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let render = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut target = Target::new(Format::R32G32B32A32Sfloat, w, h);
            let stats = target.draw(&state, &verts, 2).unwrap();
            (target.data, stats)
        })
    };
    let (one, stats_one) = render(1);
    let (four, stats_four) = render(4);
    assert_eq!(stats_one, stats_four);
    assert!(stats_one.pixels_written > 10_000);
    assert!(one == four, "images differ between 1 and 4 threads");
    assert_eq!(render(3).0, one);
}

#[test]
fn draws_into_a_texture() {
    let mut texture = Texture::new(Format::R8G8B8A8Unorm, 9, 7, 1).unwrap();
    let vs = PassVs::new(1);
    let fs = CopyFs::new(InterpolateMode::Perspective);
    let state = DrawState::new(&vs, &fs, ClipConvention::Vulkan);
    let mut verts = Vec::new();
    for (x, y) in [(-1.0, -1.0), (3.0, -1.0), (-1.0, 3.0)] {
        verts.extend(vertex([x, y, 0.0, 1.0], &[[1.0, 0.5, 0.0, 1.0]]));
    }
    let stats = draw_triangles(&state, Vertices::new(&verts, 2), &mut texture).unwrap();
    assert_eq!(stats.pixels_written, 63);
    // 0.5 * 255 = 127.5 rounds to even: 128.
    assert!(texture
        .level_data(0)
        .chunks(4)
        .all(|t| t == [255, 128, 0, 255]));
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    let vs = PassVs::new(1);
    let fs = CopyFs::new(InterpolateMode::Perspective);
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let one: Vec<[u32; 4]> = vertex([0.0, 0.0, 0.0, 1.0], &[[0.0; 4]]);
    let mut target = Target::new(Format::R8G8B8A8Unorm, 4, 4);

    // Not a whole number of vertices, not a multiple of three, too few attributes.
    let err = target.draw(&state, &one[..1], 2).unwrap_err();
    assert!(matches!(err, RasterError::Vertices(_)), "{err}");
    let err = target.draw(&state, &one, 2).unwrap_err();
    assert!(err.to_string().contains("multiple of 3"), "{err}");
    let three: Vec<[u32; 4]> = (0..3).map(|_| [0; 4]).collect();
    let err = target.draw(&state, &three, 1).unwrap_err();
    assert!(err.to_string().contains("reads 2 inputs"), "{err}");
    assert!(matches!(
        target.draw(&state, &[], 0).unwrap_err(),
        RasterError::Vertices(_)
    ));

    // An empty draw is fine.
    assert_eq!(target.draw(&state, &[], 2).unwrap().triangles, 0);

    // Missing POSITION / COLOR outputs.
    let no_position = CopyFs::new(InterpolateMode::Perspective);
    let err = target
        .draw(
            &DrawState::new(&no_position, &fs, ClipConvention::OpenGl),
            &[],
            2,
        )
        .unwrap_err();
    assert!(err.to_string().contains("POSITION"), "{err}");
    let mut other_output = state;
    other_output.color_output = Semantic {
        name: SemanticName::Color,
        index: 1,
    };
    let err = target.draw(&other_output, &[], 2).unwrap_err();
    assert!(err.to_string().contains("COLOR[1]"), "{err}");

    // Viewports.
    for vp in [
        Viewport {
            x: 0.0,
            y: 0.0,
            width: 0.0,
            height: 4.0,
        },
        Viewport {
            x: f32::NAN,
            y: 0.0,
            width: 4.0,
            height: 4.0,
        },
        Viewport {
            x: 0.0,
            y: 0.0,
            width: 1e9,
            height: 4.0,
        },
    ] {
        let mut s = state;
        s.viewport = Some(vp);
        assert!(matches!(
            target.draw(&s, &[], 2).unwrap_err(),
            RasterError::Viewport(_)
        ));
    }

    // Targets.
    let mut small = vec![0u8; 10];
    assert!(matches!(
        RenderTarget::new(Format::R8G8B8A8Unorm, 4, 4, &mut small),
        Err(RasterError::Target(_))
    ));
    assert!(RenderTarget::new(Format::R8G8B8A8Unorm, 0, 4, &mut small).is_err());
    assert!(RenderTarget::new(Format::R8G8B8A8Unorm, u32::MAX, u32::MAX, &mut small).is_err());
}

#[test]
fn shader_errors_carry_their_context() {
    let vs = PassVs::new(1);
    let fs = FailingFs::new();
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let verts = tri_with_varying([(0.0, 0.0), (4.0, 0.0), (0.0, 4.0)], [(0.0, 0.0); 3], 8, 8);
    let mut target = Target::new(Format::R8G8B8A8Unorm, 8, 8);
    match target.draw(&state, &verts, 2).unwrap_err() {
        RasterError::FragmentShader { x, y, source } => {
            assert!(x < 4 && y < 4);
            assert_eq!(source, ExecError::BudgetExceeded { budget: 7, pc: 3 });
        }
        other => panic!("unexpected {other}"),
    }
    // A failing vertex shader names its vertices.
    let failing_vs = FailingVs(PassVs::new(0));
    let state = DrawState::new(&failing_vs, &fs, ClipConvention::OpenGl);
    match target.draw(&state, &[[0; 4]; 6], 1).unwrap_err() {
        RasterError::VertexShader {
            first_vertex,
            source,
        } => {
            assert_eq!(first_vertex, 0);
            assert!(matches!(source, ExecError::Unsupported { pc: 1, .. }));
        }
        other => panic!("unexpected {other}"),
    }
}

/// A vertex shader with a POSITION output that always fails.
struct FailingVs(PassVs);

impl QuadShader for FailingVs {
    fn shade_quad(&self, _: &ShaderResources<'_>, _: &mut QuadIo<'_>) -> Result<u8, ExecError> {
        Err(ExecError::Unsupported {
            pc: 1,
            message: "nope".into(),
        })
    }
    fn signature(&self) -> &ShaderSignature {
        self.0.signature()
    }
}

#[test]
fn eight_bit_targets_encode_exactly_like_format_encode() {
    // Screen-linear ramps through negative values, (0, 1) and values above 1.
    let vs = PassVs::new(1);
    let fs = CopyFs::new(InterpolateMode::Linear);
    let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
    let mut verts = Vec::new();
    for (x, y, v) in [
        (-1.0, -1.0, [-0.3, 1.4, 0.2, 0.0]),
        (3.0, -1.0, [2.5, -0.9, 0.7, 1.0]),
        (-1.0, 3.0, [0.1, 0.6, -2.0, 0.5]),
    ] {
        verts.extend(vertex([x, y, 0.0, 1.0], &[v]));
    }
    let mut float = Target::new(Format::R32G32B32A32Sfloat, 61, 47);
    float.draw(&state, &verts, 2).unwrap();
    for format in [
        Format::R8G8B8A8Unorm,
        Format::B8G8R8A8Unorm,
        Format::R8G8B8A8Srgb,
        Format::R16G16B16A16Sfloat,
    ] {
        let mut target = Target::new(format, 61, 47);
        target.draw(&state, &verts, 2).unwrap();
        let bpp = format.bytes_per_texel();
        for y in 0..47 {
            for x in 0..61 {
                let mut expected = vec![0u8; bpp];
                format.encode(float.texel(x, y), &mut expected);
                let off = ((y * 61 + x) as usize) * bpp;
                assert_eq!(
                    &target.data[off..off + bpp],
                    &expected[..],
                    "{format:?} ({x},{y})"
                );
            }
        }
    }
    // NaN channels encode to 0 in the inlined path too.
    let nan_fs = ConstFs::new([
        f32::NAN.to_bits(),
        1.0f32.to_bits(),
        (-1.0f32).to_bits(),
        0.5f32.to_bits(),
    ]);
    let state = DrawState::new(&vs, &nan_fs, ClipConvention::OpenGl);
    let mut target = Target::new(Format::B8G8R8A8Unorm, 4, 4);
    target.draw(&state, &verts, 2).unwrap();
    assert!(target.data.chunks(4).all(|t| t == [0, 255, 0, 128]));
}
