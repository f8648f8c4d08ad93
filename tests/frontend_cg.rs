//! The Cg frontend: RetroArch conventions mapped to slang semantics, the preprocessor, errors
//! with file:line:column, and the language semantics checked by running lowered fragment
//! programs on the reference interpreter against values computed here.

use std::path::{Path, PathBuf};

use softgpu::exec::{NoTextures, QuadIo, QuadShader, ShaderResources};
use softgpu::frontend::cg::{compile_cg, compile_cg_str, preprocess};
use softgpu::interp::Interpreter;
use softgpu::ir::validate;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cg")
        .join(name)
}

fn members(r: &softgpu::frontend::reflect::StageReflection) -> Vec<(String, String)> {
    r.uniform_buffers
        .first()
        .map(|b| {
            b.members
                .iter()
                .map(|m| (m.name.clone(), m.ty.glsl_name()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn stock_shader_maps_retroarch_conventions_to_slang_semantics() {
    let s = compile_cg(&data("stock.cg")).unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<&str> = s.parameters.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["STRENGTH", "GAMMA"]);
    assert_eq!(s.parameters[0].step, 0.05);
    assert!(
        (s.parameters[1].step - 0.2).abs() < 1e-6,
        "default step 0.1*(max-min)"
    );

    let vm = members(&s.vertex.reflection);
    assert!(vm.contains(&("MVP".into(), "mat4".into())), "{vm:?}");
    assert!(vm.contains(&("SourceSize".into(), "vec2".into())), "{vm:?}");
    let vin: Vec<u32> = s
        .vertex
        .reflection
        .inputs
        .iter()
        .map(|l| l.location)
        .collect();
    assert_eq!(vin, [0, 1], "POSITION -> 0, TEXCOORD0 -> 1");
    let vout: Vec<u32> = s
        .vertex
        .reflection
        .outputs
        .iter()
        .map(|l| l.location)
        .collect();
    assert_eq!(vout, [0, 1, 16], "TEXCOORD0, TEXCOORD1, COLOR");

    let fm = members(&s.fragment.reflection);
    for (n, t) in [
        ("SourceSize", "vec2"),
        ("OutputSize", "vec2"),
        ("FrameCount", "float"),
        ("FrameDirection", "float"),
        ("STRENGTH", "float"),
        ("GAMMA", "float"),
    ] {
        assert!(fm.contains(&(n.into(), t.into())), "{n}: {fm:?}");
    }
    assert_eq!(
        s.vertex.reflection.uniform_buffers, s.fragment.reflection.uniform_buffers,
        "both stages share one uniform block layout"
    );
    let block = s.fragment.reflection.uniform_buffers.first().expect("ubo");
    assert_eq!((block.set, block.binding), (Some(0), Some(0)));
    for w in block.members.windows(2) {
        assert!(
            w[0].offset + w[0].size <= w[1].offset,
            "{:?}",
            block.members
        );
    }
    let tex: Vec<&str> = s
        .fragment
        .reflection
        .textures
        .iter()
        .map(|t| t.name.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(tex, ["Source", "Original", "lut"], "in order of first use");
    assert!(s
        .fragment
        .reflection
        .textures
        .iter()
        .all(|t| t.sampler_binding.is_some()));

    let (vs, fs) = s.lower().unwrap_or_else(|e| panic!("{e}"));
    validate::validate(&vs.program).expect("valid vertex program");
    validate::validate(&fs.program).expect("valid fragment program");
}

#[test]
fn preprocessor_macros_conditionals_and_line_map() {
    let src = "#define CAT(a, b) a##b\n#define STR(x) #x\n#define TWICE(x) ((x) + (x))\n\
               #define ONE 1\n#if ONE + 1 == 2 && defined(ONE)\nfloat CAT(my, var) = TWICE(\n  3);\n\
               #elif 1\nnope\n#endif\n#ifndef ONE\nnope\n#else\nstring s = STR(a + b);\n#endif\n";
    let p = preprocess::preprocess_str(src, Path::new("mem.cg")).unwrap_or_else(|e| panic!("{e}"));
    assert!(p.text.contains("float myvar = ((3) + (3));"), "{}", p.text);
    assert!(p.text.contains("\"a + b\""), "{}", p.text);
    assert!(!p.text.contains("nope"));
    let line = p
        .text
        .lines()
        .position(|l| l.contains("\"a + b\""))
        .expect("line") as u32
        + 1;
    assert_eq!(p.line_map.resolve(line), Some(("mem.cg", 14)));
    let e = preprocess::preprocess_str("#if 1\nx\n", Path::new("open.cg")).expect_err("open #if");
    assert!(e.to_string().contains("missing #endif"), "{e}");
    let e =
        preprocess::preprocess_str("#error stop here\n", Path::new("e.cg")).expect_err("#error");
    assert_eq!((e.line, e.message.as_str()), (1, "#error stop here"));
}

#[test]
fn include_cycles_are_errors() {
    let e = compile_cg(&data("cycle_a.cg")).expect_err("cycle");
    assert!(e.message.contains("include cycle"), "{e}");
    assert!(e.file.ends_with("cycle_b.cg") && e.line == 1, "{e}");
}

const MINIMAL_VERTEX: &str = "void main_vertex(float4 p : POSITION, out float4 o : POSITION, \
    uniform float4x4 modelViewProj) { o = mul(modelViewProj, p); }\n";

fn compile_err(body: &str) -> String {
    let src = format!("{MINIMAL_VERTEX}{body}");
    match compile_cg_str(&src, Path::new("err.cg")) {
        Ok(_) => panic!("compiled:\n{src}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn errors_carry_file_line_and_column() {
    let e = compile_err("float4 main_fragment() : COLOR\n{\n    return frobnicate(1.0);\n}\n");
    assert_eq!(e, "err.cg:4:12: unknown function `frobnicate`");
    let e = compile_err(
        "float4 main_fragment() : COLOR\n{\n    float2 a = 1.0\n    return a.xyxy;\n}\n",
    );
    assert_eq!(e, "err.cg:5:5: expected `;`, found `return`");
    let e = compile_err(
        "float4 main_fragment() : COLOR\n{\n    float2 a = 1.0;\n    return a.xyz;\n}\n",
    );
    assert!(
        e.starts_with("err.cg:5:13: `xyz` is not a swizzle of float2"),
        "{e}"
    );
    let e = compile_err("float4 main_fragment() : COLOR\n{\n    float3 a = 1.0;\n    return a + float3x3(1,0,0,0,1,0,0,0,1);\n}\n");
    assert!(
        e.starts_with("err.cg:5:14: operator Add cannot combine float3 and float3x3"),
        "{e}"
    );
    let e = compile_err(
        "float f(float x) { return f(x); }\nfloat4 main_fragment() : COLOR { return f(1.0); }\n",
    );
    assert!(e.contains("calls itself"), "{e}");
    let e = compile_err("float f(float2 x) { return x.x; }\nfloat4 main_fragment() : COLOR { return f(float3x3(1,0,0,0,1,0,0,0,1)); }\n");
    assert!(
        e.starts_with("err.cg:3:41: no overload of `f` takes (float3x3)"),
        "{e}"
    );
    let e = compile_err(
        "float4 main_fragment(uniform input IN) : COLOR { return IN.video_size.xyxy; }\n",
    );
    assert_eq!(e, "err.cg:2:30: expected a type, found `input`");
    let e = compile_err("struct input { float2 video_size; float2 bogus; };\nfloat4 main_fragment(uniform input IN) : COLOR { return IN.bogus.xyxy; }\n");
    assert!(
        e.starts_with("err.cg:3:59: `IN.bogus` is not one of RetroArch's inputs"),
        "{e}"
    );
    let src = "float4 main_vertex(float4 p : POSITION) : POSITION { discard; return p; }\nfloat4 main_fragment() : COLOR { return 1.0; }\n";
    let e = compile_cg_str(src, Path::new("v.cg"))
        .expect_err("discard in vertex")
        .to_string();
    assert_eq!(
        e,
        "v.cg:1:54: `discard` is only allowed in fragment programs"
    );
}

/// Compiles `main_fragment(float4 v : TEXCOORD0) : COLOR { BODY }` with `decls` before it,
/// lowers it and runs it on the interpreter with `v` per lane; returns the colour per lane.
fn run(decls: &str, body: &str, lanes: [[f32; 4]; 4]) -> [[f32; 4]; 4] {
    let src = format!(
        "{MINIMAL_VERTEX}{decls}\nfloat4 main_fragment(float4 v : TEXCOORD0) : COLOR\n{{\n{body}\n}}\n"
    );
    let s = compile_cg_str(&src, Path::new("run.cg")).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let (_, fs) = s.lower().unwrap_or_else(|e| panic!("{e}\n{src}"));
    validate::validate(&fs.program).expect("valid program");
    let shader = Interpreter::new(&fs.program).expect("interpreter accepts the program");
    let sig = shader.signature().clone();
    let mut ins = vec![[[0u32; 4]; 4]; sig.num_inputs];
    let slot = sig.inputs.first().expect("one input");
    ins[slot.register as usize] =
        std::array::from_fn(|c| std::array::from_fn(|l| lanes[l][c].to_bits()));
    let mut outs = vec![[[0u32; 4]; 4]; sig.num_outputs];
    let res = ShaderResources {
        constants: &[],
        textures: &NoTextures,
        storage: Default::default(),
    };
    shader
        .shade_quad(
            &res,
            &mut QuadIo {
                inputs: &ins,
                system_values: &[],
                outputs: &mut outs,
                live: 0xF,
            },
        )
        .expect("runs");
    std::array::from_fn(|l| std::array::from_fn(|c| f32::from_bits(outs[0][c][l])))
}

const LANES: [[f32; 4]; 4] = [
    [0.5, 2.0, -1.5, 3.0],
    [-2.25, 0.75, 4.0, -0.5],
    [1.0, -3.0, 0.25, 2.5],
    [0.0, 1.5, -0.75, -4.0],
];

fn check(decls: &str, body: &str, expect: impl Fn([f32; 4]) -> [f32; 4]) {
    let got = run(decls, body, LANES);
    for (l, v) in LANES.iter().enumerate() {
        let want = expect(*v);
        for c in 0..4 {
            assert!(
                (got[l][c] - want[c]).abs() <= 1e-5 * want[c].abs().max(1.0),
                "{body}\nlane {l} comp {c}: got {} want {} ({:?} vs {:?})",
                got[l][c],
                want[c],
                got[l],
                want
            );
        }
    }
}

#[test]
fn matrices_are_row_major_and_mul_follows_cg() {
    // float2x2(a, b, c, d) has rows (a, b) and (c, d).
    check(
        "",
        "float2x2 m = float2x2(1, 2, 3, 4);\nreturn float4(mul(m, v.xy), mul(v.xy, m));",
        |v| {
            [
                v[0] + 2.0 * v[1],
                3.0 * v[0] + 4.0 * v[1],
                v[0] + 3.0 * v[1],
                2.0 * v[0] + 4.0 * v[1],
            ]
        },
    );
    // float4x3 (4 rows of 3) times a float3, as xBR shaders use it; rows by index and _mRC.
    check(
        "",
        "float4x3 m = float4x3(v.xyz, v.yzw, v.zwx, 1, 2, 3);\nfloat4 r = mul(m, float3(1, 10, 100));\nr.w += m[1].z * 0 + m._m12 * 0 + m._11 * 0;\nreturn r;",
        |v| {
            let d = |a: f32, b: f32, c: f32| a + 10.0 * b + 100.0 * c;
            [d(v[0], v[1], v[2]), d(v[1], v[2], v[3]), d(v[2], v[3], v[0]), 321.0]
        },
    );
    check("", "float3x3 a = float3x3(v.x, 0, 0, 0, v.y, 0, 1, 0, 1);\nfloat3x3 b = float3x3(1, 2, 0, 0, 1, 0, 0, 0, 1);\nfloat3x3 p = mul(a, b);\nreturn float4(p[0], p._m20 + p._m21);", |v| {
        // rows of a·b: (v.x, 2 v.x, 0); third row (1, 2, 1) → _m20 + _m21 = 3.
        [v[0], 2.0 * v[0], 0.0, 3.0]
    });
    check("", "float2x2 m = float2x2(v);\nm = m * 2 + m;\nreturn float4(m[0], m[1]) + float4(transpose(m)[0], 0, 0) * 0;", |v| {
        [3.0 * v[0], 3.0 * v[1], 3.0 * v[2], 3.0 * v[3]]
    });
}

#[test]
fn swizzles_conversions_and_operators() {
    check(
        "",
        "float4 r = 0;\nr.wx = v.xy;\nr.yz = v.zz * 2;\nreturn r;",
        |v| [v[1], 2.0 * v[2], 2.0 * v[2], v[0]],
    );
    check(
        "",
        "float3 t = v;\nfloat s = v;\nreturn float4(t.bgr, s.x);",
        |v| [v[2], v[1], v[0], v[0]],
    );
    check("", "return v > 0 ? 1 : -1;", |v| {
        v.map(|x| if x > 0.0 { 1.0 } else { -1.0 })
    });
    check(
        "",
        "bool4 b = v >= 0.5;\nreturn float4(any(b), all(b), b.xy);",
        |v| {
            let b = v.map(|x| x >= 0.5);
            let f = |x: bool| if x { 1.0 } else { 0.0 };
            [
                f(b.iter().any(|&x| x)),
                f(b.iter().all(|&x| x)),
                f(b[0]),
                f(b[1]),
            ]
        },
    );
    check(
        "",
        "int i = (int)v.y;\nint j = i / 2;\nreturn float4(i, j, i % 2, (float)(7 / 2));",
        |v| {
            let i = v[1] as i32;
            [i as f32, (i / 2) as f32, (i % 2) as f32, 3.0]
        },
    );
    check(
        "",
        "return float4(fmod(v.x, 1.0), frac(v.y), saturate(v.z), lerp(v.w, 1.0, 0.25));",
        |v| {
            [
                v[0] % 1.0,
                v[1] - v[1].floor(),
                v[2].clamp(0.0, 1.0),
                v[3] + (1.0 - v[3]) * 0.25,
            ]
        },
    );
    check("", "float ip;\nfloat f = modf(v.z, ip);\nreturn float4(f, ip, step(0.5, v.x), smoothstep(0.0, 1.0, 0.5));", |v| {
        [v[2] - v[2].trunc(), v[2].trunc(), if v[0] >= 0.5 { 1.0 } else { 0.0 }, 0.5]
    });
    check(
        "",
        "float4 a = v; a *= 2; a.x += 1; a.y++; --a.z;\nreturn a;",
        |v| {
            [
                2.0 * v[0] + 1.0,
                2.0 * v[1] + 1.0,
                2.0 * v[2] - 1.0,
                2.0 * v[3],
            ]
        },
    );
}

#[test]
fn functions_out_params_loops_and_globals() {
    let decls = "static const float k[3] = { 1.0, 10.0, 100.0 };\n\
                 float2 offs[2] = { 0.5, 1.5, 2.5, 3.5 };\n\
                 struct pair { float a; float2 b; };\n\
                 void sums(float4 x, out float s, inout float2 acc) { s = x.x + x.y; acc += x.zw; }\n\
                 float pick(float x) { return x * 2; }\n\
                 float pick(int x) { return x * 3; }\n\
                 pair mk(float x) { pair p; p.a = x; p.b = float2(x, -x); return p; }";
    check(
        decls,
        "float s; float2 acc = 1;\nsums(v, s, acc);\nreturn float4(s, acc, pick(1) + pick(1.0));",
        |v| [v[0] + v[1], 1.0 + v[2], 1.0 + v[3], 5.0],
    );
    check(decls, "float t = 0;\nfor (int i = 0; i < 3; i++) { if (v.x > 0.9 && i == 2) break; t += k[i] * v[i]; }\nint n = 0; while (n < 5) { n += 2; }\nreturn float4(t, n, offs[1]);", |v| {
        let mut t = 0.0;
        for i in 0..3 {
            if v[0] > 0.9 && i == 2 {
                break;
            }
            t += [1.0, 10.0, 100.0][i] * v[i];
        }
        [t, 6.0, 2.5, 3.5]
    });
    // GLSL-isms some corpus shaders use: array constructors and `mod` (floored), and a
    // variable shadowing the `input` type name.
    check(
        "struct input { float2 video_size; };",
        "float a[3] = float[](1.0, 2.0, 3.0);\nfloat3 input = float3(a[0], a[2], mod(v.x, 1.0));\ninput += 1;\nreturn float4(input, 0);",
        |v| [2.0, 4.0, 1.0 + (v[0] - v[0].floor()), 0.0],
    );
    check(
        decls,
        "pair p = mk(v.w);\npair q = (pair)0;\nq = p;\nreturn float4(q.a, q.b, p.b.x + p.b.y);",
        |v| [v[3], v[3], -v[3], 0.0],
    );
}

#[test]
fn varyings_without_semantics_link_by_name() {
    let src = "void main_vertex(float4 p : POSITION, out float4 o : POSITION, out float phase,\n\
               out float2 unused, uniform float4x4 modelViewProj)\n\
               { o = mul(modelViewProj, p); phase = p.x; unused = p.xy; }\n\
               float4 main_fragment(in float phase, float2 t : TEXCOORD0) : COLOR\n\
               { return float4(phase, t, 1); }\n";
    let s = compile_cg_str(src, Path::new("link.cg")).unwrap_or_else(|e| panic!("{e}"));
    let out: Vec<(Option<String>, u32)> = s
        .vertex
        .reflection
        .outputs
        .iter()
        .map(|l| (l.name.clone(), l.location))
        .collect();
    assert_eq!(
        out,
        [(Some("phase".into()), 32)],
        "only varyings both sides declare"
    );
    let ins: Vec<u32> = s
        .fragment
        .reflection
        .inputs
        .iter()
        .map(|l| l.location)
        .collect();
    assert_eq!(ins, [0, 32]);
}

#[test]
fn constant_locals_size_arrays_and_rule_out_branches() {
    // cgc drops the branch a constant condition rules out before resolving its names.
    check(
        "",
        "static const bool on = false;\nconst int n = 2;\nfloat a[n * 2] = { 1, 2, 3, 4 };\nif (on) { return undefined_name; }\nif (!on) { a[0] = 5; }\nreturn float4(a[0], a[3], n, v.x);",
        |v| [5.0, 4.0, 2.0, v[0]],
    );
    let e = compile_err("float4 main_fragment(float4 v : TEXCOORD0) : COLOR\n{\n    bool on = v.x > 0;\n    if (on) { return undefined_name; }\n    return v;\n}\n");
    assert!(e.contains("unknown name `undefined_name`"), "{e}");
}

#[test]
fn retroarch_structs_bind_by_name_with_or_without_uniform() {
    // motionblur/feedback.cg's style: `input IN` and `input FEEDBACK` without `uniform`, the
    // vertex stage reading IN.mvp_matrix, IN.vertex_coord and the tex_coords, the fragment stage
    // passing both structs (they hold samplers) to a function.
    let s = compile_cg(&data("runtime/feedback.cg")).unwrap_or_else(|e| panic!("{e}"));
    let mut vin: Vec<u32> = s
        .vertex
        .reflection
        .inputs
        .iter()
        .map(|l| l.location)
        .collect();
    vin.sort();
    assert_eq!(
        vin,
        [0, 1],
        "IN.vertex_coord -> POSITION, tex_coord -> TEXCOORD0"
    );
    let vm = members(&s.vertex.reflection);
    assert!(vm.contains(&("MVP".into(), "mat4".into())), "{vm:?}");
    let mut textures: Vec<String> = s
        .fragment
        .reflection
        .textures
        .iter()
        .filter_map(|t| t.name.clone())
        .collect();
    textures.sort();
    assert_eq!(
        textures,
        ["Original", "Source"],
        "FEEDBACK is the frame input when the preset names no feedback pass"
    );

    // A struct holding a sampler is bound by its name (a pass alias here), `uniform` or not.
    let src = format!(
        "{MINIMAL_VERTEX}struct pass_t {{ float2 video_size; sampler2D texture; }};\n\
         float4 main_fragment(float2 uv : TEXCOORD0, pass_t BLURRED) : COLOR\n\
         {{ return tex2D(BLURRED.texture, uv / BLURRED.video_size); }}\n"
    );
    let s = compile_cg_str(&src, Path::new("alias.cg")).unwrap_or_else(|e| panic!("{e}"));
    let textures: Vec<Option<String>> = (s.fragment.reflection.textures.iter())
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(textures, [Some("BLURRED".to_string())]);
    let fm = members(&s.fragment.reflection);
    assert!(
        fm.contains(&("BLURREDSize".into(), "vec2".into())),
        "{fm:?}"
    );

    // IN.color is RetroArch's opaque white; IN.mvp_matrix is bound in the vertex program only,
    // so the fragment program reads zero.
    check(
        "struct input { float4 color; float4x4 mvp_matrix; };\ninput IN;",
        "return IN.color * v + mul(IN.mvp_matrix, v);",
        |v| v,
    );
}

#[test]
fn texel_fetches_fail_as_cgc_fails_in_its_glsl_profiles() {
    // handheld/shaders/lcd_cgwg/lcd-grid-v2-nvidia.cg: GLSL's array constructors are Cg too,
    // `texelFetchOffset` is not (cgc's gp4/gp5 profiles for NVIDIA GPUs have it).
    check(
        "const float weights[] = float[](0.25, 0.5, 0.25);",
        "return float4(weights[0], weights[1], weights[2], v.x);",
        |v| [0.25, 0.5, 0.25, v[0]],
    );
    let e = compile_err(
        "float4 main_fragment(float2 uv : TEXCOORD0, uniform sampler2D s : TEXUNIT0) : COLOR\n\
         { return texelFetchOffset(s, int2(uv), 0, int2(1, 0)); }\n",
    );
    assert!(
        e.starts_with(
            "err.cg:3:10: unable to find compatible overloaded function \
             `texelFetchOffset(sampler2D, int2, int, int2)`"
        ),
        "{e}"
    );
}
