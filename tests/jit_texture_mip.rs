//! The JIT's inline sampling of mipmapped textures (per-lane level of detail from the quad's
//! corners, TXD gradients, TXB bias or TXL lod; the sampler's bias and lod clamps; nearest or
//! linear mip filters, min/mag switching, per-axis wraps including REPEAT on any size and
//! MIRRORED_REPEAT) against the interpreter, which calls
//! softpipe's sampler: every output bit must agree, for random mip chains of several formats and
//! sizes, every filter combination and random coordinates, derivatives, biases and lods
//! (specials included: those quads fall back to the sampler). A counting texture unit proves the
//! inline path is the one taken for ordinary quads.

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

/// A texture with `levels` levels of random texels (each level its own data, so a wrong level
/// shows): RGBA8, sRGB, float16 (finite values) or float32 (±0, ±Inf, huge values among them).
fn texture(rng: &mut Rng, format: Format, w: u32, h: u32, levels: u32) -> Arc<Texture> {
    let mut t = Texture::new(format, w, h, levels).expect("valid texture");
    for level in 0..levels {
        let (lw, lh) = t.level_size(level);
        match format {
            Format::R32G32B32A32Sfloat => {
                for y in 0..lh {
                    for x in 0..lw {
                        let bits = std::array::from_fn(|_| match rng.below(10) {
                            0 => rng.pick(&[0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY]),
                            1 => rng.pick(&[65504.0f32, -3.0e38, 1.0e-30]),
                            _ => rng.range(-2.0, 2.0),
                        });
                        t.write_texel(level, x, y, bits.map(f32::to_bits));
                    }
                }
            }
            Format::R16G16B16A16Sfloat => {
                for y in 0..lh {
                    for x in 0..lw {
                        let bits = std::array::from_fn(|_| {
                            let h = rng.below(0x7c00) as u16 | (rng.below(2) as u16) << 15;
                            softgpu::texture::f16_to_f32(h).to_bits()
                        });
                        t.write_texel(level, x, y, bits);
                    }
                }
            }
            _ => t
                .level_data_mut(level)
                .iter_mut()
                .for_each(|b| *b = rng.next() as u8),
        }
    }
    Arc::new(t)
}

/// The programs under test: IN[0] holds the coordinates (and the bias or lod in w), IN[1] and
/// IN[2] the gradients of TXD. The last three take texel offsets ((1, -2) and GLSL's extremes
/// (7, -8)): the general path adds them for the clamps and REPEAT on both axes of power-of-two
/// sizes; on other sizes, with REPEAT on one axis, in MIRRORED_REPEAT (which add them
/// differently) and with TXD it calls the sampler.
const PROGRAMS: [&str; 9] = [
    "TEX OUT[0], IN[0], SAMP[0], 2D",
    "TXB OUT[0], IN[0], SAMP[0], 2D",
    "TXL OUT[0], IN[0], SAMP[0], 2D",
    "TEX_LZ OUT[0], IN[0], SAMP[0], 2D",
    "TXD OUT[0], IN[0], IN[1], IN[2], SAMP[0], 2D",
    "TEX OUT[0], -IN[0].yxzw, SAMP[0], 2D",
    "TEX OUT[0], IN[0], SAMP[0], 2D, IMM[0].xyz",
    "TXL OUT[0], IN[0], SAMP[0], 2D, IMM[0].zwx",
    "TXD OUT[0], IN[0], IN[1], IN[2], SAMP[0], 2D, IMM[0].xyz",
];

fn program(line: &str) -> softgpu::ir::Program {
    let text = format!(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL IN[1], GENERIC[1], PERSPECTIVE\n\
         DCL IN[2], GENERIC[2], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n\
         DCL SVIEW[0], 2D, FLOAT\nIMM[0] INT32 {{1, -2, 7, -8}}\n  0: {line}\n  1: END\n"
    );
    parse_program(&text).expect("test program parses")
}

/// A special value: the inline path hands quads holding one to the sampler.
fn special(rng: &mut Rng) -> f32 {
    rng.pick(&[
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(0x0000_1234),
        f32::from_bits(0x8040_0000),
        1.0e-39,
        3.0e7,
        -0.0,
        0.0,
    ])
}

/// One quad (IN[0..3]): a base point with derivatives along x and y of random size (so the
/// level of detail spans the chain and beyond), lanes TL, TR, BL, BR; the bias or lod; TXD
/// gradients per lane. With `specials`, some values are NaN, infinite, denormal or huge.
fn quad(rng: &mut Rng, w: u32, h: u32, specials: bool) -> [QuadVec4; 3] {
    let scale = |rng: &mut Rng, size: u32| {
        let e = rng.range(-4.0, 10.0);
        let sign = if rng.below(2) == 0 { 1.0 } else { -1.0 };
        sign * e.exp2() / size as f32 * rng.range(0.0, 1.0)
    };
    let (s0, t0) = (rng.range(-1.5, 2.5), rng.range(-1.5, 2.5));
    let (dsx, dtx, dsy, dty) = (scale(rng, w), scale(rng, h), scale(rng, w), scale(rng, h));
    let mut v = [[[0u32; 4]; 4]; 3];
    let corner = [(0.0, 1.0), (1.0, 1.0), (0.0, 0.0), (1.0, 0.0)];
    let jitter = rng.below(4) == 0;
    for (l, &(x, y)) in corner.iter().enumerate() {
        let mut s = s0 + x * dsx + y * dsy;
        let mut t = t0 + x * dtx + y * dty;
        if jitter {
            s += scale(rng, w);
            t += scale(rng, h);
        }
        // Exact texel edges and centres now and then.
        if rng.below(8) == 0 {
            s = (s * w as f32).round() / w as f32;
            t = ((t * h as f32).floor() + 0.5) / h as f32;
        }
        let lod = match rng.below(4) {
            0 => rng.pick(&[0.0, -0.0, 0.5, 1.0, -1.0, 2.5, 3.0]),
            _ => rng.range(-3.0, 9.0),
        };
        v[0][0][l] = s.to_bits();
        v[0][1][l] = t.to_bits();
        v[0][2][l] = rng.range(0.0, 1.0).to_bits();
        v[0][3][l] = lod.to_bits();
        let g = [scale(rng, w), scale(rng, h), scale(rng, w), scale(rng, h)];
        v[1][0][l] = g[0].to_bits();
        v[1][1][l] = g[1].to_bits();
        v[2][0][l] = g[2].to_bits();
        v[2][1][l] = g[3].to_bits();
    }
    if specials && rng.below(3) == 0 {
        let (r, c, l) = (
            rng.below(3) as usize,
            rng.below(4) as usize,
            rng.below(4) as usize,
        );
        v[r][c][l] = special(rng).to_bits();
    }
    v
}

/// Runs `quads` through the JIT in one batch and through the interpreter quad by quad, and
/// returns how many lookups the JIT sent to the sampler.
fn check(
    units: &Counting,
    jit: &JitShader,
    interp: &Interpreter,
    quads: &[[QuadVec4; 3]],
    what: &str,
) -> usize {
    let res = ShaderResources {
        constants: &[],
        textures: units,
        storage: Default::default(),
    };
    let n = quads.len();
    let inputs: Vec<QuadVec4> = quads.iter().flatten().copied().collect();
    let mut outputs = vec![[[0x5555_5555u32; 4]; 4]; n];
    let live = vec![0xFu8; n];
    let mut killed = vec![0u8; n];
    let mut batch = QuadBatch {
        count: n,
        inputs: &inputs,
        inputs_stride: 3,
        system_values: &[],
        system_values_stride: 0,
        outputs: &mut outputs,
        outputs_stride: 1,
        live: &live,
        killed: &mut killed,
    };
    let before = units.samples.load(Ordering::Relaxed);
    jit.shade_quads(&res, &mut batch).expect("JIT batch runs");
    let calls = units.samples.load(Ordering::Relaxed) - before;
    for (q, input) in quads.iter().enumerate() {
        let mut expected = [[[0x5555_5555u32; 4]; 4]];
        let mut io = QuadIo {
            inputs: input,
            system_values: &[],
            outputs: &mut expected,
            live: 0xF,
        };
        interp.shade_quad(&res, &mut io).expect("interpreter runs");
        assert_eq!(
            outputs[q],
            expected[0],
            "{what}, quad {q}: inputs {:?}",
            input.map(|r| r.map(|c| c.map(f32::from_bits)))
        );
    }
    calls
}

#[test]
fn inline_mip_sampling_matches_the_sampler() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let sizes = [
        (16, 16),
        (64, 32),
        (5, 3),
        (37, 20),
        (1, 1),
        (128, 4),
        (3, 64),
    ];
    let formats = [
        Format::R8G8B8A8Unorm,
        Format::R8G8B8A8Srgb,
        Format::R16G16B16A16Sfloat,
        Format::R32G32B32A32Sfloat,
    ];
    let programs: Vec<_> = PROGRAMS
        .iter()
        .map(|line| {
            let p = program(line);
            // The kernel compiled before a draw (cached) and one compiled uncached for speed, as a
            // large program is recompiled in the background. Both are the same build
            // (`preserve_all` calls whenever every site is inline); `inline_checked`'s
            // bound below still counts each configuration once per kernel.
            let optimized = [
                JitShader::compile(&p).expect("JIT compiles"),
                JitShader::compile_optimized(&p).expect("JIT compiles"),
            ];
            let fast_tier = JitShader::compile_fast_tier(&p).expect("JIT compiles");
            let interp = Interpreter::new(&p).expect("interpreter accepts");
            (line, optimized, fast_tier, interp)
        })
        .collect();
    // The general texture paths are compiled on threads of their own; until they are, sites
    // call the sampler (same bits), which the call counts below would see.
    codegen::wait_for_texture_paths();
    let wraps = [
        Wrap::Repeat,
        Wrap::ClampToEdge,
        Wrap::ClampToBorder,
        Wrap::MirroredRepeat,
    ];
    let filters = [Filter::Nearest, Filter::Linear];
    let (mut inline_checked, mut quads_checked) = (0, 0);
    for &format in &formats {
        for &(w, h) in &sizes {
            let full = Texture::full_mip_levels(w, h);
            let levels = if rng.below(4) == 0 {
                1 + rng.below(full as u64) as u32
            } else {
                full
            };
            let tex = texture(&mut rng, format, w, h, levels);
            for min_filter in filters {
                for mag_filter in filters {
                    for mip_filter in [None, Some(Filter::Nearest), Some(Filter::Linear)] {
                        // Both axes repeat now and then (the POT mip shortcut), else any pair.
                        let (wrap_s, wrap_t) = if rng.below(3) == 0 {
                            (Wrap::Repeat, Wrap::Repeat)
                        } else {
                            (rng.pick(&wraps), rng.pick(&wraps))
                        };
                        let samp = SamplerState {
                            min_filter,
                            mag_filter,
                            mip_filter,
                            wrap_s,
                            wrap_t,
                            wrap_r: wrap_s,
                            lod_bias: rng.pick(&[0.0, 0.0, 0.5, -1.25, 2.0]),
                            min_lod: rng.pick(&[0.0, 0.0, -2.0, 1.5, 0.25]),
                            max_lod: rng.pick(&[1000.0, 1000.0, 2.5, 0.0, 1.0]),
                            compare: None,
                        };
                        let mut units = TextureUnits::new();
                        units.bind(0, tex.clone(), samp);
                        let units = Counting::new(units);
                        // Every wrap mode has a view (REPEAT on other sizes and MIRRORED_REPEAT
                        // included).
                        let fast = units.texel_view(0, 0, TextureTarget::Tex2D).is_some();
                        assert!(fast, "{format:?} {w}x{h} {samp:?}");
                        for (line, optimized, fast_tier, interp) in &programs {
                            let what = format!("{format:?} {w}x{h}/{levels} {samp:?} `{line}`");
                            let quads: Vec<_> =
                                (0..24).map(|_| quad(&mut rng, w, h, true)).collect();
                            for jit in optimized {
                                check(&units, jit, interp, &quads, &what);
                            }
                            // The fast tier has no inline sites: every lookup (TXD's gradients
                            // included) goes through the sampler call.
                            let calls = check(&units, fast_tier, interp, &quads, &what);
                            assert_eq!(calls, quads.len(), "{what}: fast tier");
                            // Ordinary quads: with a view, no JIT lookup may reach the sampler.
                            let quads: Vec<_> =
                                (0..24).map(|_| quad(&mut rng, w, h, false)).collect();
                            let odd = |wrap: Wrap, size: u32| {
                                wrap == Wrap::MirroredRepeat
                                    || (wrap == Wrap::Repeat && !size.is_power_of_two())
                            };
                            // REPEAT on one axis only adds it after the floor too.
                            let mixed = (wrap_s == Wrap::Repeat) != (wrap_t == Wrap::Repeat);
                            // Views of one level and filter are sampled inline, offsets
                            // and all; the others take the general path.
                            let simple = units
                                .texel_view(0, 0, TextureTarget::Tex2D)
                                .and_then(|v| v.inline_shape())
                                .is_some_and(|shape| !shape.mipmapped);
                            let to_sampler = line.contains("IMM")
                                && !simple
                                && (line.starts_with("TXD")
                                    || odd(wrap_s, w)
                                    || odd(wrap_t, h)
                                    || mixed);
                            for jit in optimized {
                                let calls = check(&units, jit, interp, &quads, &what);
                                if to_sampler {
                                    assert_eq!(calls, quads.len(), "{what}: offsets");
                                } else if fast {
                                    assert_eq!(
                                        calls, 0,
                                        "{what}: the inline path called the sampler"
                                    );
                                    inline_checked += 1;
                                } else {
                                    assert_eq!(calls, quads.len(), "{what}");
                                }
                            }
                            quads_checked += 72;
                        }
                    }
                }
            }
        }
    }
    assert!(
        inline_checked >= 4000,
        "only {inline_checked} inline configurations ran ({quads_checked} quads)"
    );
}

/// A sampler whose lod bias is denormal (or whose clamps are not finite) gets no view: the
/// kernel would read it as zero.
#[test]
fn odd_lod_state_has_no_view() {
    let tex = Arc::new(Texture::new(Format::R8G8B8A8Unorm, 8, 8, 4).expect("valid texture"));
    for (bias, min, max) in [
        (1.0e-40, 0.0, 1000.0),
        (0.0, f32::NEG_INFINITY, 1000.0),
        (0.0, 0.0, f32::INFINITY),
        (0.0, f32::NAN, 1000.0),
    ] {
        let mut units = TextureUnits::new();
        let samp = SamplerState {
            lod_bias: bias,
            min_lod: min,
            max_lod: max,
            ..SamplerState::new(Filter::Linear, Wrap::ClampToEdge)
                .with_mip_filter(Some(Filter::Linear))
        };
        units.bind(0, tex.clone(), samp);
        assert!(
            units.texel_view(0, 0, TextureTarget::Tex2D).is_none(),
            "{samp:?}"
        );
    }
}

/// A quad whose every lane magnifies at a bias of 0 and no lod clamp: derivatives (and TXD
/// gradients) of at most one texel per pixel, a lod or bias at most 0 in w.
fn magnified_quad(rng: &mut Rng, w: u32, h: u32) -> [QuadVec4; 3] {
    let small = |rng: &mut Rng, size: u32| {
        let sign = if rng.below(2) == 0 { 1.0 } else { -1.0 };
        sign * rng.range(0.0, 1.0) / size as f32
    };
    let (s0, t0) = (rng.range(-1.5, 2.5), rng.range(-1.5, 2.5));
    let (dsx, dtx, dsy, dty) = (small(rng, w), small(rng, h), small(rng, w), small(rng, h));
    let mut v = [[[0u32; 4]; 4]; 3];
    let corner = [(0.0, 1.0), (1.0, 1.0), (0.0, 0.0), (1.0, 0.0)];
    for (l, &(x, y)) in corner.iter().enumerate() {
        v[0][0][l] = (s0 + x * dsx + y * dsy).to_bits();
        v[0][1][l] = (t0 + x * dtx + y * dty).to_bits();
        v[0][3][l] = rng.pick(&[0.0f32, -0.0, -0.5, -3.0]).to_bits();
        for (k, size) in [w, h].into_iter().enumerate() {
            v[1][k][l] = small(rng, size).to_bits();
            v[2][k][l] = small(rng, size).to_bits();
        }
    }
    v
}

/// Sites compiled for a mipmapped shape (a `SamplerHint` of a unit with mipmaps and a mip
/// filter) sample level 0 inline when every lane of a quad magnifies, and leave the other
/// quads to the general path: every output bit agrees with the interpreter for views of the
/// hinted shape and of others, ordinary, magnified and special quads, every bias and lod
/// clamp. The lookup with a texel offset and TXD, which the general path sends to the sampler,
/// shows which way a quad went.
#[test]
fn hinted_mipmapped_sites_sample_magnified_quads_inline() {
    let mut rng = Rng(0x6a09_e667_f3bc_c908);
    let shapes = inline_shapes(true);
    let programs: Vec<_> = PROGRAMS
        .iter()
        .map(|line| {
            let p = program(line);
            let hinted: Vec<(InlineShape, JitShader)> = shapes
                .iter()
                .map(|&shape| {
                    let mut hinted = p.clone();
                    hinted.set_sampler_hints([SamplerHint { unit: 0, shape }]);
                    (shape, JitShader::compile(&hinted).expect("JIT compiles"))
                })
                .collect();
            (
                line,
                hinted,
                Interpreter::new(&p).expect("interpreter accepts"),
            )
        })
        .collect();
    codegen::wait_for_texture_paths();
    let (mut inline_proven, mut general_proven) = (0, 0);
    for format in [Format::R8G8B8A8Unorm, Format::R32G32B32A32Sfloat] {
        for (w, h) in [(16, 16), (64, 32), (5, 3), (1, 1)] {
            let full = Texture::full_mip_levels(w, h);
            let tex = texture(&mut rng, format, w, h, full);
            for filter in [Filter::Nearest, Filter::Linear] {
                for wrap in [Wrap::Repeat, Wrap::ClampToEdge, Wrap::ClampToBorder] {
                    for mip_filter in [Filter::Nearest, Filter::Linear] {
                        let plain =
                            SamplerState::new(filter, wrap).with_mip_filter(Some(mip_filter));
                        let clamped = SamplerState {
                            lod_bias: rng.pick(&[0.5, -1.25, 2.0]),
                            min_lod: rng.pick(&[0.0, -2.0, 1.5, 0.25]),
                            max_lod: rng.pick(&[1000.0, 2.5, 0.0, 1.0]),
                            ..plain
                        };
                        for samp in [plain, clamped] {
                            let mut units = TextureUnits::new();
                            units.bind(0, tex.clone(), samp);
                            let units = Counting::new(units);
                            let view_shape = units
                                .texel_view(0, 0, TextureTarget::Tex2D)
                                .and_then(|v| v.inline_shape());
                            let pot = w.is_power_of_two() && h.is_power_of_two();
                            // softpipe's linear-repeat POT mip filter blends levels 0 and 1
                            // below a level of detail of 0: no shape.
                            let expected = (wrap != Wrap::Repeat || pot)
                                && !(filter == Filter::Linear
                                    && mip_filter == Filter::Linear
                                    && wrap == Wrap::Repeat);
                            assert_eq!(view_shape.is_some(), expected, "{w}x{h} {samp:?}");
                            assert_eq!(
                                units.units.padded_level0(0, 0).is_some(),
                                expected,
                                "{w}x{h} {samp:?}: a view with a shape has a padded level 0"
                            );
                            for (line, hinted, interp) in &programs {
                                for (shape, jit) in hinted {
                                    let what = format!(
                                        "{format:?} {w}x{h} {samp:?} `{line}` hint {shape:?}"
                                    );
                                    let mixed: Vec<_> = (0..24)
                                        .map(|k| match k % 3 {
                                            0 => magnified_quad(&mut rng, w, h),
                                            1 => quad(&mut rng, w, h, false),
                                            _ => quad(&mut rng, w, h, true),
                                        })
                                        .collect();
                                    check(&units, jit, interp, &mixed, &what);
                                    let magnified: Vec<_> =
                                        (0..16).map(|_| magnified_quad(&mut rng, w, h)).collect();
                                    let calls = check(&units, jit, interp, &magnified, &what);
                                    if !line.starts_with("TXD") || !line.contains("IMM") {
                                        continue;
                                    }
                                    if samp == plain && view_shape == Some(*shape) {
                                        assert_eq!(calls, 0, "{what}: magnified quads inline");
                                        inline_proven += 1;
                                    } else {
                                        // Another shape's site, or levels of detail clamped
                                        // above 0 (TXD has no bias): the general path, which
                                        // calls the sampler here.
                                        let clamped_up = samp.min_lod > 0.0;
                                        if view_shape != Some(*shape) || clamped_up {
                                            assert_eq!(calls, magnified.len(), "{what}");
                                            general_proven += 1;
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(
        inline_proven >= 60 && general_proven >= 800,
        "{inline_proven} inline and {general_proven} general configurations proven"
    );
}
