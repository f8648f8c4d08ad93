//! Depth-compare sampling: comparison functions as Vulkan defines them, the comparison of each
//! texel before filtering (percentage-closer filtering), the reference clamp of UNORM formats,
//! border texels, gathers, both executors agreeing bit for bit on `SHADOW` lookups, and WGSL's
//! `textureSampleCompare` lowering to them.

use softgpu::exec::{
    LodMode, QuadBatch, QuadIo, QuadShader, QuadVec4, SampleRequest, ShaderResources, TextureAccess,
};
use softgpu::frontend::wgsl::{compile, Stage};
use softgpu::interp::Interpreter;
use softgpu::ir::text::{parse_program, print_program};
use softgpu::ir::TextureTarget;
use softgpu::jit::codegen::JitShader;
use softgpu::texture::{CompareFunc, Filter, Format, SamplerState, Texture, TextureUnits, Wrap};
use std::sync::Arc;

mod texture_support;
use texture_support::Rng;

/// A 2x2 `R32_SFLOAT` depth texture: 0.2 0.4 / 0.6 0.8 (row 0 first).
fn depths() -> Texture {
    let mut t = Texture::new(Format::R32Sfloat, 2, 2, 1).unwrap();
    for (i, d) in [0.2f32, 0.4, 0.6, 0.8].iter().enumerate() {
        t.write_texel(0, i as u32 % 2, i as u32 / 2, [d.to_bits(), 0, 0, 0]);
    }
    t
}

fn units(t: Texture, filter: Filter, wrap: Wrap, compare: Option<CompareFunc>) -> TextureUnits {
    let mut u = TextureUnits::new();
    let sampler = SamplerState {
        compare,
        ..SamplerState::new(filter, wrap)
    };
    u.bind(0, Arc::new(t), sampler);
    u
}

/// A SHADOW2D request at (s, t) in every lane with one reference per lane.
fn request(s: f32, t: f32, reference: [f32; 4]) -> SampleRequest {
    SampleRequest {
        view: 0,
        sampler: 0,
        target: TextureTarget::Shadow2D,
        coords: [[s; 4], [t; 4], reference, [0.0; 4]],
        compare: Some(reference),
        lod: LodMode::Zero,
        offset: [0; 3],
    }
}

fn channel(result: QuadVec4, c: usize) -> [f32; 4] {
    result[c].map(f32::from_bits)
}

#[test]
fn comparison_functions_compare_the_reference_with_the_texel() {
    use CompareFunc::*;
    let cases = [
        (Never, [false, false, false]),
        (Less, [true, false, false]),
        (Equal, [false, true, false]),
        (LessEqual, [true, true, false]),
        (Greater, [false, false, true]),
        (NotEqual, [true, false, true]),
        (GreaterEqual, [false, true, true]),
        (Always, [true, true, true]),
    ];
    for (func, want) in cases {
        // reference 0.25, 0.5, 0.75 against the depth 0.5.
        let got = [0.25, 0.5, 0.75].map(|r| func.passes(r, 0.5));
        assert_eq!(got, want, "{func}");
        assert_eq!(func.name().parse::<CompareFunc>(), Ok(func));
    }
    assert!(NotEqual.passes(f32::NAN, 0.5) && !LessEqual.passes(f32::NAN, 0.5));
    let err = "lessequal".parse::<CompareFunc>().unwrap_err();
    assert!(
        err.contains("`lessequal`") && err.contains("never, less, equal, lequal"),
        "{err}"
    );
}

#[test]
fn nearest_compares_one_texel_per_lane() {
    let u = units(
        depths(),
        Filter::Nearest,
        Wrap::ClampToEdge,
        Some(CompareFunc::Less),
    );
    // Texel (0, 0) holds 0.2: references below it pass.
    let r = u.sample(&request(0.25, 0.25, [0.1, 0.2, 0.3, -1.0]));
    assert_eq!(channel(r, 0), [1.0, 0.0, 0.0, 1.0]);
    assert_eq!(channel(r, 1), channel(r, 0));
    assert_eq!(channel(r, 2), channel(r, 0));
    assert_eq!(channel(r, 3), [1.0; 4]);
}

#[test]
fn linear_filtering_averages_the_comparison_results() {
    let u = units(
        depths(),
        Filter::Linear,
        Wrap::ClampToEdge,
        Some(CompareFunc::Less),
    );
    // At the centre every texel weighs 1/4: 0.5 < {0.6, 0.8}, 0.3 < {0.4, 0.6, 0.8}.
    let r = u.sample(&request(0.5, 0.5, [0.5, 0.3, 0.0, 0.9]));
    assert_eq!(channel(r, 0), [0.5, 0.75, 1.0, 0.0]);
    // A quarter texel right of the centre: weights 1/4·(1/2, 1/2) on each row's texels
    // (0.25, 0.75 across): 0.5 passes on the second row only, so 0.5; 0.3 passes on 0.4,
    // 0.6 and 0.8: 0.5·0.75 + 0.5 = 0.875.
    let r = u.sample(&request(0.625, 0.5, [0.5, 0.3, 0.5, 0.3]));
    assert_eq!(channel(r, 0), [0.5, 0.875, 0.5, 0.875]);
}

#[test]
fn without_a_comparison_function_the_texel_is_returned() {
    let u = units(depths(), Filter::Nearest, Wrap::ClampToEdge, None);
    let r = u.sample(&request(0.25, 0.25, [0.9; 4]));
    assert_eq!(channel(r, 0), [0.2; 4]);
}

#[test]
fn unorm_references_are_clamped_to_the_unit_interval() {
    let full = Texture::from_rgba8(1, 1, vec![255, 0, 0, 255]).unwrap();
    let u = units(
        full,
        Filter::Nearest,
        Wrap::ClampToEdge,
        Some(CompareFunc::LessEqual),
    );
    // 1.5 clamps to 1.0 <= 1.0; -1 clamps to 0 <= 1.
    let r = u.sample(&request(0.5, 0.5, [1.5, -1.0, 1.0, 2.0]));
    assert_eq!(channel(r, 0), [1.0; 4]);
    let mut float = Texture::new(Format::R32Sfloat, 1, 1, 1).unwrap();
    float.write_texel(0, 0, 0, [1.0f32.to_bits(), 0, 0, 0]);
    let u = units(
        float,
        Filter::Nearest,
        Wrap::ClampToEdge,
        Some(CompareFunc::LessEqual),
    );
    let r = u.sample(&request(0.5, 0.5, [1.5, -1.0, 1.0, 2.0]));
    assert_eq!(channel(r, 0), [0.0, 1.0, 1.0, 0.0]);
}

#[test]
fn border_texels_compare_as_depth_zero() {
    let u = units(
        depths(),
        Filter::Nearest,
        Wrap::ClampToBorder,
        Some(CompareFunc::Greater),
    );
    let r = u.sample(&request(-0.5, 0.25, [0.5, 0.0, 0.5, -0.5]));
    assert_eq!(channel(r, 0), [1.0, 0.0, 1.0, 0.0]);
}

#[test]
fn gathers_return_each_texels_comparison() {
    let u = units(
        depths(),
        Filter::Linear,
        Wrap::ClampToEdge,
        Some(CompareFunc::Less),
    );
    // TG4 order: (x0, y1), (x1, y1), (x1, y0), (x0, y0) = 0.6, 0.8, 0.4, 0.2.
    let r = u.gather(&request(0.5, 0.5, [0.5; 4]), 0);
    let lane0: Vec<f32> = (0..4).map(|c| channel(r, c)[0]).collect();
    assert_eq!(lane0, [1.0, 1.0, 0.0, 0.0]);
}

/// A fragment program of one SHADOW2D lookup; IN[0] holds s, t, the reference and the level
/// or bias.
fn program(line: &str) -> softgpu::ir::Program {
    let text = format!(
        "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n\
         DCL SVIEW[0], 2D, FLOAT\nDCL TEMP[0]\nIMM[0] FLT32 {{0.0000, 1.0000, 0.5000, 0.2500}}\n  \
         0: {line}\n  1: END\n"
    );
    parse_program(&text).expect("test program parses")
}

const LOOKUPS: [&str; 5] = [
    "TEX OUT[0], IN[0], SAMP[0], SHADOW2D",
    "TXL OUT[0], IN[0], SAMP[0], SHADOW2D",
    "TXB OUT[0], IN[0], SAMP[0], SHADOW2D",
    "TEX_LZ OUT[0], IN[0], SAMP[0], SHADOW2D",
    "TG4 OUT[0], IN[0], IMM[0].xxxx, SAMP[0], SHADOW2D",
];

#[test]
fn both_executors_compare_bit_identically() {
    let mut rng = Rng(0x5eed_c0de);
    let mut tex = Texture::new(Format::R32Sfloat, 8, 8, 4).unwrap();
    for l in 0..4 {
        let (w, h) = tex.level_size(l);
        for y in 0..h {
            for x in 0..w {
                tex.write_texel(l, x, y, [rng.range(0.0, 1.0).to_bits(), 0, 0, 0]);
            }
        }
    }
    let tex = Arc::new(tex);
    let quads: Vec<QuadVec4> = (0..64)
        .map(|_| {
            let s = rng.range(-0.5, 1.5);
            let t = rng.range(-0.5, 1.5);
            let d = rng.range(0.0, 0.3);
            [
                [s, s + d, s, s + d].map(f32::to_bits),
                [t, t, t + d, t + d].map(f32::to_bits),
                [0; 4].map(|_| rng.range(-0.1, 1.1).to_bits()),
                [0; 4].map(|_| rng.range(-1.0, 3.0).to_bits()),
            ]
        })
        .collect();
    for func in CompareFunc::NAMES.map(|(f, _)| f) {
        for filter in [Filter::Nearest, Filter::Linear] {
            for wrap in [Wrap::Repeat, Wrap::ClampToEdge, Wrap::ClampToBorder] {
                let sampler = SamplerState {
                    compare: Some(func),
                    ..SamplerState::new(filter, wrap).with_mip_filter(Some(Filter::Linear))
                };
                let mut units = TextureUnits::new();
                units.bind(0, tex.clone(), sampler);
                for line in LOOKUPS {
                    let p = program(line);
                    let jit = JitShader::compile(&p).expect("JIT compiles");
                    let interp = Interpreter::new(&p).expect("interpreter accepts");
                    check(
                        &units,
                        &jit,
                        &interp,
                        &quads,
                        &format!("{line} {func} {filter:?} {wrap:?}"),
                    );
                }
            }
        }
    }
}

/// Runs `quads` through the JIT in one batch and the interpreter quad by quad; every output bit
/// must agree, and the interpreter's first quad must be the sampler's own answer.
fn check(
    units: &TextureUnits,
    jit: &JitShader,
    interp: &Interpreter,
    quads: &[QuadVec4],
    what: &str,
) {
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
        assert_eq!(outputs[q], expected[0], "{what}, quad {q}");
    }
}

#[test]
fn the_executors_return_the_compared_value() {
    // TEX_LZ at texel (0, 0) of `depths` with references either side of its 0.2.
    let units = units(
        depths(),
        Filter::Nearest,
        Wrap::ClampToEdge,
        Some(CompareFunc::Less),
    );
    let p = program("TEX_LZ OUT[0], IN[0], SAMP[0], SHADOW2D");
    let quad: QuadVec4 = [
        [0.25f32; 4].map(f32::to_bits),
        [0.25f32; 4].map(f32::to_bits),
        [0.1f32, 0.3, 0.1, 0.3].map(f32::to_bits),
        [0; 4],
    ];
    let res = ShaderResources {
        constants: &[],
        textures: &units,
        storage: Default::default(),
    };
    let mut out = [[[0u32; 4]; 4]];
    let mut io = QuadIo {
        inputs: std::slice::from_ref(&quad),
        system_values: &[],
        outputs: &mut out,
        live: 0xF,
    };
    Interpreter::new(&p)
        .unwrap()
        .shade_quad(&res, &mut io)
        .unwrap();
    assert_eq!(channel(out[0], 0), [1.0, 0.0, 1.0, 0.0]);
    check(
        &units,
        &JitShader::compile(&p).unwrap(),
        &Interpreter::new(&p).unwrap(),
        &[quad],
        "TEX_LZ",
    );
}

#[test]
fn wgsl_sample_compare_lowers_to_shadow_lookups() {
    let src = "@group(0) @binding(0) var t: texture_depth_2d;\n\
               @group(0) @binding(1) var s: sampler_comparison;\n\
               @fragment\nfn main(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {\n\
               let a = textureSampleCompare(t, s, uv, 0.5);\n\
               let b = textureSampleCompareLevel(t, s, uv, uv.x);\n\
               let c = textureGatherCompare(t, s, uv, 0.25);\n\
               return vec4<f32>(a, b, c.x, c.w);\n}\n";
    let lowered = compile(src, "compare.wgsl", Stage::Fragment, None).expect("lowers");
    let text = print_program(&lowered.program);
    for needle in ["TEX TEMP", "TEX_LZ TEMP", "TG4 TEMP", "SAMP[0], SHADOW2D"] {
        assert!(text.contains(needle), "{needle} in\n{text}");
    }
}
