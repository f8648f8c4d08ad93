//! The JIT's inline texture path (decoded texels of any non-integer format, nearest/bilinear,
//! every wrap mode, level 0) against the
//! interpreter, which calls softpipe's sampler: every output bit must agree, on coordinates at
//! texel edges and centres, negative, huge, ±0, ±Inf, NaN and denormal, for TEX/TXB/TXL, and on
//! texels of every kind a format can hold (float textures: ±0, ±Inf, huge, tiny, and NaN or
//! denormal texels, which must keep the texture on the sampler). A counting texture unit proves
//! the inline path is the one taken.

use softgpu::exec::{QuadBatch, QuadIo, QuadShader, QuadVec4, ShaderResources, TextureAccess};
use softgpu::interp::Interpreter;
use softgpu::ir::text::parse_program;
use softgpu::ir::{InlineShape, SamplerHint, TextureTarget};
use softgpu::jit::codegen::{self, JitShader};
use softgpu::texture::{Filter, Format, SamplerState, Texture, TextureUnits, Wrap};
use std::sync::atomic::Ordering;
use std::sync::Arc;

mod texture_support;
use texture_support::{inline_shapes, Counting, Rng};

/// The formats under test, and which special texels their data may hold.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Texels {
    /// Any bytes (unorm, sRGB, 10-bit: every pattern decodes to a finite normal or zero).
    Bytes(Format),
    /// `R16G16B16A16_SFLOAT` of ordinary values with ±0, ±Inf, f16 denormals and huge ones.
    Half,
    /// `R32G32B32A32_SFLOAT` likewise.
    Float,
    /// `R32G32B32A32_SFLOAT` with one NaN texel: no inline view.
    FloatNan,
    /// `R32G32B32A32_SFLOAT` with one f32 denormal texel: no inline view.
    FloatDenormal,
}

fn special_f32(rng: &mut Rng) -> f32 {
    match rng.below(8) {
        0 => [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY][rng.below(4) as usize],
        1 => [65504.0, -65504.0, 3.0e38, 1.0e-30, 6.0e-8][rng.below(5) as usize],
        _ => (rng.next() as i32) as f32 / i32::MAX as f32 * 4.0,
    }
}

fn texture(rng: &mut Rng, texels: Texels, w: u32, h: u32) -> Arc<Texture> {
    let n = (w * h) as usize;
    let tex = match texels {
        Texels::Bytes(Format::R8G8B8A8Unorm) => {
            let data = (0..n * 4).map(|_| rng.next() as u8).collect();
            Texture::from_rgba8(w, h, data).expect("valid texture")
        }
        Texels::Bytes(format) => {
            let mut t = Texture::new(format, w, h, 1).expect("valid texture");
            t.level_data_mut(0)
                .iter_mut()
                .for_each(|b| *b = rng.next() as u8);
            t
        }
        Texels::Half => {
            let mut t = Texture::new(Format::R16G16B16A16Sfloat, w, h, 1).expect("valid texture");
            for x in 0..w {
                for y in 0..h {
                    let bits = std::array::from_fn(|_| match rng.below(6) {
                        // f16 denormals (decoded to normal floats) and raw finite patterns.
                        0 => f32::from_bits(0x3380_0000 + rng.below(0x80_0000) as u32).to_bits(),
                        1 => {
                            let h = rng.below(0x7c00) as u16 | (rng.below(2) as u16) << 15;
                            softgpu::texture::f16_to_f32(h).to_bits()
                        }
                        _ => special_f32(rng).to_bits(),
                    });
                    t.write_texel(0, x, y, bits);
                }
            }
            t
        }
        Texels::Float | Texels::FloatNan | Texels::FloatDenormal => {
            let mut t = Texture::new(Format::R32G32B32A32Sfloat, w, h, 1).expect("valid texture");
            for x in 0..w {
                for y in 0..h {
                    let bits = std::array::from_fn(|_| special_f32(rng).to_bits());
                    t.write_texel(0, x, y, bits);
                }
            }
            let odd = match texels {
                Texels::FloatNan => Some(f32::NAN.to_bits()),
                Texels::FloatDenormal => Some(0x0000_1234),
                _ => None,
            };
            if let Some(bits) = odd {
                let (x, y) = (rng.below(w as u64) as u32, rng.below(h as u64) as u32);
                let mut v = t.read_texel(0, x, y);
                v[rng.below(4) as usize] = bits;
                t.write_texel(0, x, y, v);
            }
            t
        }
    };
    Arc::new(tex)
}

/// A coordinate for a texture side of `size` texels: exact edges and centres, values just
/// beside them, far outside, and special values. `normal_only` leaves out the values the
/// inline path hands to the sampler (NaN, ±Inf, denormals, huge).
fn coordinate(rng: &mut Rng, size: u32, normal_only: bool) -> f32 {
    let fs = size as f32;
    let k = rng.below(4 * size as u64 + 8) as f32 - 2.0 * fs - 4.0;
    let v = match rng.below(if normal_only { 6 } else { 9 }) {
        0 => k / fs,
        1 => (k + 0.5) / fs,
        2 => f32::from_bits(
            (k / fs)
                .to_bits()
                .wrapping_add(rng.below(5) as u32)
                .wrapping_sub(2),
        ),
        3 => (rng.next() as i32) as f32 / i32::MAX as f32 * 3.0,
        4 => [0.0, -0.0, 1.0, -1.0, 0.5, 1.0 - f32::EPSILON][rng.below(6) as usize],
        // Up to ±2e6, or ±2e3 for `normal_only` (within 2^22 once scaled by the size).
        5 if normal_only => (rng.next() as i32) as f32 * 1e-6,
        5 => (rng.next() as i32) as f32 * 1e-3,
        6 => [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -f32::NAN][rng.below(4) as usize],
        7 => f32::from_bits((rng.below(0x7f_ffff) as u32 + 1) | ((rng.below(2) as u32) << 31)),
        _ => [
            4_194_304.0 / fs,
            -4_194_304.0 / fs,
            1e9,
            -1e9,
            4_194_303.5 / fs,
        ][rng.below(5) as usize],
    };
    if normal_only && v != 0.0 && !v.is_normal() {
        0.25
    } else {
        v
    }
}

/// The last two take texel offsets: (1, -2) and GLSL's extremes (7, -8), which softpipe adds
/// to the scaled coordinate before a clamp and to the floored one in REPEAT.
const PROGRAMS: [&str; 6] = [
    "TEX OUT[0], IN[0], SAMP[0], 2D",
    "TXB OUT[0], IN[0], SAMP[0], 2D",
    "TXL OUT[0], IN[0].xyzw, SAMP[0], 2D",
    "TEX OUT[0], -IN[0].yxzw, SAMP[0], 2D",
    "TEX OUT[0], IN[0], SAMP[0], 2D, IMM[0].xyz",
    "TXL OUT[0], IN[0].xyzw, SAMP[0], 2D, IMM[0].zwx",
];

fn program(line: &str) -> softgpu::ir::Program {
    let text = format!(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n\
         DCL SVIEW[0], 2D, FLOAT\nIMM[0] INT32 {{1, -2, 7, -8}}\n  0: {line}\n  1: END\n"
    );
    parse_program(&text).expect("test program parses")
}

/// Runs `quads` through the JIT in one batch and through the interpreter quad by quad.
fn check(units: &Counting, jit: &JitShader, interp: &Interpreter, quads: &[QuadVec4], what: &str) {
    let res = ShaderResources {
        constants: &[],
        textures: units,
        storage: Default::default(),
    };
    let n = quads.len();
    let mut outputs = vec![[[0x5555_5555u32; 4]; 4]; n];
    let live = vec![0xFu8; n];
    let mut killed = vec![0u8; n];
    let mut batch = QuadBatch {
        count: n,
        inputs: quads,
        inputs_stride: 1,
        system_values: &[],
        system_values_stride: 0,
        outputs: &mut outputs,
        outputs_stride: 1,
        live: &live,
        killed: &mut killed,
    };
    jit.shade_quads(&res, &mut batch).expect("JIT batch runs");
    for (q, input) in quads.iter().enumerate() {
        let mut expected = [[[0x5555_5555u32; 4]; 4]];
        let mut io = QuadIo {
            inputs: std::slice::from_ref(input),
            system_values: &[],
            outputs: &mut expected,
            live: 0xF,
        };
        interp.shade_quad(&res, &mut io).expect("interpreter runs");
        assert_eq!(
            outputs[q],
            expected[0],
            "{what}, quad {q}: coordinates {:?} / {:?}",
            input[0].map(f32::from_bits),
            input[1].map(f32::from_bits)
        );
    }
}

#[test]
#[allow(clippy::needless_range_loop)] // lanes index two coordinate channels
fn inline_sampling_matches_the_sampler() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let sizes = [(16, 16), (8, 4), (1, 1), (2, 64), (5, 3), (64, 32)];
    let kinds = [
        Texels::Bytes(Format::R8G8B8A8Unorm),
        Texels::Bytes(Format::R8G8B8A8Srgb),
        Texels::Bytes(Format::B8G8R8A8Unorm),
        Texels::Bytes(Format::A2B10G10R10UnormPack32),
        Texels::Half,
        Texels::Float,
        Texels::FloatNan,
        Texels::FloatDenormal,
    ];
    // Each program compiled without a sampler hint and for every shape a hint may name: the
    // site compiled for the unit's shape must sample inline, the others must fall back.
    let shapes: Vec<Option<InlineShape>> = std::iter::once(None)
        .chain(inline_shapes(false).into_iter().map(Some))
        .collect();
    let programs: Vec<_> = PROGRAMS
        .iter()
        .map(|line| {
            let p = program(line);
            // For each hint, the kernel compiled before a draw (the same build a large program
            // is recompiled to in the background).
            let jits: Vec<(Option<InlineShape>, JitShader)> = shapes
                .iter()
                .map(|&shape| {
                    let mut hinted = p.clone();
                    hinted.set_sampler_hints(shape.map(|shape| SamplerHint { unit: 0, shape }));
                    (shape, JitShader::compile(&hinted).expect("JIT compiles"))
                })
                .collect();
            let interp = Interpreter::new(&p).expect("interpreter accepts");
            (line, jits, interp)
        })
        .collect();
    // The general texture paths are compiled on threads of their own; until they are, sites
    // call the sampler (same bits), which the call counts below would see.
    codegen::wait_for_texture_paths();
    let mut shaped_checked = 0;
    let mut inline_checked = 0;
    for (k, &(w, h)) in kinds.iter().flat_map(|k| sizes.iter().map(move |s| (k, s))) {
        let tex = texture(&mut rng, *k, w, h);
        let viewable = !matches!(k, Texels::FloatNan | Texels::FloatDenormal);
        for filter in [Filter::Nearest, Filter::Linear] {
            for wrap in [
                Wrap::Repeat,
                Wrap::ClampToEdge,
                Wrap::ClampToBorder,
                Wrap::MirroredRepeat,
            ] {
                let mut units = TextureUnits::new();
                units.bind(0, tex.clone(), SamplerState::new(filter, wrap));
                let units = Counting::new(units);
                let fast = units.texel_view(0, 0, TextureTarget::Tex2D).is_some();
                // Every wrap mode has a view: REPEAT on other sizes and MIRRORED_REPEAT take the
                // JIT's general path.
                let expect_fast = viewable;
                assert_eq!(fast, expect_fast, "{k:?} {w}x{h} {filter:?} {wrap:?}");
                let view_shape = units
                    .texel_view(0, 0, TextureTarget::Tex2D)
                    .and_then(|v| v.inline_shape());
                assert_eq!(
                    units.units.padded_level0(0, 0).is_some(),
                    view_shape.is_some(),
                    "{k:?} {w}x{h} {filter:?} {wrap:?}: a view with a shape has a padded level 0"
                );
                let runs = programs
                    .iter()
                    .flat_map(|(line, jits, interp)| jits.iter().map(move |j| (line, j, interp)));
                for (line, (hint, jit), interp) in runs {
                    let what = format!("{k:?} {w}x{h} {filter:?} {wrap:?} `{line}` hint {hint:?}");
                    // Any coordinates, specials included.
                    for _ in 0..8 {
                        let quads: Vec<QuadVec4> = (0..32)
                            .map(|_| {
                                let mut v = [[0u32; 4]; 4];
                                for l in 0..4 {
                                    v[0][l] = coordinate(&mut rng, w, false).to_bits();
                                    v[1][l] = coordinate(&mut rng, h, false).to_bits();
                                    v[2][l] = coordinate(&mut rng, 4, false).to_bits();
                                    v[3][l] = coordinate(&mut rng, 4, false).to_bits();
                                }
                                v
                            })
                            .collect();
                        check(&units, jit, interp, &quads, &what);
                    }
                    // Ordinary coordinates: when the unit has a view, no JIT lookup may reach
                    // the sampler (the interpreter's lookups are counted separately).
                    let quads: Vec<QuadVec4> = (0..64)
                        .map(|_| {
                            let mut v = [[0u32; 4]; 4];
                            for l in 0..4 {
                                v[0][l] = coordinate(&mut rng, w, true).to_bits();
                                v[1][l] = coordinate(&mut rng, h, true).to_bits();
                                v[3][l] = 1.0f32.to_bits();
                            }
                            v
                        })
                        .collect();
                    let res = ShaderResources {
                        constants: &[],
                        textures: &units,
                        storage: Default::default(),
                    };
                    let before = units.samples.load(Ordering::Relaxed);
                    let padded_before = units.padded_requests.load(Ordering::Relaxed);
                    let mut outputs = vec![[[0u32; 4]; 4]; quads.len()];
                    let live = vec![0xFu8; quads.len()];
                    let mut killed = vec![0u8; quads.len()];
                    let mut batch = QuadBatch {
                        count: quads.len(),
                        inputs: &quads,
                        inputs_stride: 1,
                        system_values: &[],
                        system_values_stride: 0,
                        outputs: &mut outputs,
                        outputs_stride: 1,
                        live: &live,
                        killed: &mut killed,
                    };
                    jit.shade_quads(&res, &mut batch).expect("JIT batch runs");
                    let calls = units.samples.load(Ordering::Relaxed) - before;
                    // The padded copy is asked for (once per batch) exactly by sites compiled
                    // for the view's own shape: other kernels must not pay for making it.
                    let padded_requests =
                        units.padded_requests.load(Ordering::Relaxed) - padded_before;
                    let shaped_for_view = hint.is_some() && *hint == view_shape;
                    assert_eq!(
                        padded_requests, shaped_for_view as usize,
                        "{what}: padded level 0 requests"
                    );
                    // REPEAT on other sizes leaves coordinates more than 1024 repeats below zero (here: far
                    // from zero either way) to the sampler (softpipe's unsigned wrap-around there).
                    let far = quads
                        .iter()
                        .filter(|q| {
                            q[0].iter()
                                .chain(&q[1])
                                .any(|&c| f32::from_bits(c).abs() > 1000.0)
                        })
                        .count();
                    let npot =
                        wrap == Wrap::Repeat && !(w.is_power_of_two() && h.is_power_of_two());
                    // REPEAT on other sizes and MIRRORED_REPEAT add texel offsets unlike the
                    // general path: sites with one call the sampler there.
                    let odd = npot || wrap == Wrap::MirroredRepeat;
                    if fast && odd && line.contains("IMM") {
                        assert_eq!(calls, quads.len(), "{what}");
                    } else if fast && npot {
                        assert!(
                            calls <= far,
                            "{what}: {calls} sampler calls, {far} far quads"
                        );
                        inline_checked += 1;
                    } else if fast {
                        assert_eq!(calls, 0, "{what}: the inline path called the sampler");
                        inline_checked += 1;
                        if shaped_for_view {
                            shaped_checked += 1;
                        }
                    } else {
                        assert_eq!(calls, quads.len(), "{what}");
                    }
                    check(&units, jit, interp, &quads, &what);
                }
            }
        }
    }
    assert!(
        inline_checked >= 40 * 6 * 7,
        "only {inline_checked} inline configurations ran"
    );
    // Six shapes x six sizes x six viewable kinds x six programs (REPEAT: power-of-two sizes).
    assert!(
        shaped_checked >= 4 * 6 * 6 * 6,
        "only {shaped_checked} configurations ran a site compiled for their shape"
    );
}
