//! The RetroArch slang frontend: preprocessing, glslang, sampler splitting, naga, reflection
//! and lowering, on shaders written like real RetroArch passes (tests/data/slang/).

use std::path::{Path, PathBuf};

use softgpu::frontend::reflect::{Scalar, ScalarKind, StageReflection, TypeLayout};
use softgpu::frontend::retroarch::SAMPLER_BINDING_OFFSET;
use softgpu::frontend::vulkan_glsl::{self, compile_slang, preprocess_file, Stage};
use softgpu::frontend::FrontendError;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/slang")
        .join(name)
}

/// Writes `files` (name, text) into a fresh directory and returns it with the first file's path.
fn write_files(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let first = dir.path().join(files[0].0);
    (dir, first)
}

fn preprocess_err(files: &[(&str, &str)]) -> FrontendError {
    let (_dir, path) = write_files(files);
    match preprocess_file(&path) {
        Ok(_) => panic!("{} preprocessed without error", files[0].0),
        Err(e) => e,
    }
}

fn file_name(e: &FrontendError) -> &str {
    Path::new(&e.file).file_name().unwrap().to_str().unwrap()
}

const STAGES: &str =
    "#pragma stage vertex\nvoid main() { gl_Position = vec4(0.0); }\n#pragma stage fragment\nlayout(location = 0) out vec4 FragColor;\nvoid main() { FragColor = vec4(1.0); }\n";

// ---------------------------------------------------------------------------------------------
// Preprocessing

#[test]
fn includes_are_resolved_relative_to_the_including_file_and_stages_split() {
    let p = preprocess_file(&data("basic.slang")).unwrap();
    for (text, own, other) in [
        (&p.vertex.text, "gl_Position = global.MVP", "FragColor ="),
        (&p.fragment.text, "FragColor =", "gl_Position ="),
    ] {
        assert!(text.starts_with("#version 450\n"), "{text}");
        assert!(text.contains(own) && !text.contains(other), "{text}");
        // Lines before the first stage pragma (including the include chain) go to both stages.
        assert!(text.contains("float scanline(float y, float strength)"));
        assert!(text.contains("vec3 fetch_rgb(sampler2D tex, vec2 uv)"));
        for gone in [
            "#include",
            "#pragma stage",
            "#pragma parameter",
            "#pragma name",
            "#pragma format",
        ] {
            assert!(!text.contains(gone), "`{gone}` left in:\n{text}");
        }
    }
    let find = |needle: &str| {
        let line = p
            .vertex
            .text
            .lines()
            .position(|l| l.contains(needle))
            .unwrap() as u32
            + 1;
        let (file, l) = p.vertex.line_map.resolve(line).unwrap();
        (
            Path::new(file)
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .to_string(),
            l,
        )
    };
    assert_eq!(find("float scanline"), ("common.inc".to_string(), 4));
    assert_eq!(find("vec3 fetch_rgb"), ("util.inc".to_string(), 3));
    assert_eq!(
        find("gl_Position = global.MVP"),
        ("basic.slang".to_string(), 42)
    );
    let frag_line = p
        .fragment
        .text
        .lines()
        .position(|l| l.contains("vec3 sharpen"))
        .unwrap() as u32
        + 1;
    let (file, line) = p.fragment.line_map.resolve(frag_line).unwrap();
    assert!(file.ends_with("basic.slang"));
    assert_eq!(line, 54);
}

#[test]
fn pragmas_are_collected() {
    let p = preprocess_file(&data("basic.slang")).unwrap();
    assert_eq!(p.name.as_deref(), Some("BasicPass"));
    assert_eq!(p.format.as_deref(), Some("R16G16B16A16_SFLOAT"));
    // SHARPNESS is declared again, identically, in inc/util.inc: allowed, kept once.
    let ids: Vec<&str> = p.parameters.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ["SHARPNESS", "SCANLINE_STRENGTH"]);
    let s = &p.parameters[0];
    assert_eq!(s.description, "Sharpness");
    assert_eq!(
        (s.initial, s.minimum, s.maximum, s.step),
        (0.5, 0.0, 2.0, 0.05)
    );
    // No step: RetroArch uses a tenth of the range.
    let t = &p.parameters[1];
    assert_eq!((t.initial, t.minimum, t.maximum), (0.25, 0.0, 1.0));
    assert!((t.step - 0.1).abs() < 1e-6, "{}", t.step);
}

#[test]
fn parameter_numbers_are_read_like_sscanf() {
    let src = format!(
        "#version 450\n#pragma parameter A \"a\" 1.0 0.0 1.0 1.0'\n#pragma parameter B \"b\" 0 0 0.0.001 0.001\n#pragma parameter C \"c\" -1e1 -2.5E+1 +.5 trailing words\n{STAGES}"
    );
    let (_dir, path) = write_files(&[("f.slang", &src)]);
    let p = preprocess_file(&path).unwrap();
    let v: Vec<_> = p
        .parameters
        .iter()
        .map(|q| (q.id.as_str(), q.initial, q.minimum, q.maximum, q.step))
        .collect();
    assert_eq!(
        v,
        [
            ("A", 1.0, 0.0, 1.0, 1.0),
            ("B", 0.0, 0.0, 0.0, 0.001),
            ("C", -10.0, -25.0, 0.5, 0.1 * (0.5 + 25.0)),
        ]
    );
}

#[test]
fn include_cycle_names_both_files() {
    let e = preprocess_file(&data("cycle.slang")).unwrap_err();
    assert!(e.message.contains("include cycle"), "{e}");
    assert!(
        e.message.contains("a.inc") && e.message.contains("b.inc"),
        "{e}"
    );
    // Reported at the `#include "a.inc"` in b.inc.
    assert_eq!((file_name(&e), e.line), ("b.inc", 3), "{e}");
}

#[test]
fn self_include_is_a_cycle() {
    let e = preprocess_err(&[("s.slang", "#version 450\n#include \"s.slang\"\n")]);
    assert!(e.message.contains("include cycle"), "{e}");
    assert_eq!((file_name(&e), e.line), ("s.slang", 2));
}

#[test]
fn include_depth_is_limited() {
    let mut files: Vec<(String, String)> = vec![(
        "root.slang".into(),
        format!("#version 450\n#include \"d0.inc\"\n{STAGES}"),
    )];
    for i in 0..40 {
        files.push((
            format!("d{i}.inc"),
            format!("#include \"d{}.inc\"\n", i + 1),
        ));
    }
    files.push(("d40.inc".into(), "// bottom\n".into()));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let e = preprocess_err(&refs);
    assert!(e.message.contains("nested deeper than 32"), "{e}");
}

#[test]
fn missing_include_names_the_including_line() {
    let e = preprocess_err(&[("m.slang", "#version 450\n\n#include \"nope/missing.inc\"\n")]);
    assert_eq!((file_name(&e), e.line), ("m.slang", 3), "{e}");
    assert!(e.message.contains("missing.inc"), "{e}");
}

#[test]
fn optional_include_may_be_missing() {
    let src = format!("#version 450\n#pragma include_optional \"absent.inc\"\n#pragma include_optional \"present.inc\"\n{STAGES}");
    let (_dir, path) = write_files(&[
        ("o.slang", &src),
        ("present.inc", "float present_fn() { return 1.0; }\n"),
    ]);
    let p = preprocess_file(&path).unwrap();
    assert!(p.fragment.text.contains("present_fn"));
}

#[test]
fn version_must_come_first() {
    let e = preprocess_err(&[("v.slang", &format!("// comment\n#version 450\n{STAGES}"))]);
    assert_eq!((file_name(&e), e.line), ("v.slang", 1), "{e}");
    assert!(e.message.contains("#version 450"), "{e}");
}

#[test]
fn pragma_errors_name_file_and_line() {
    let cases: &[(&str, &str, u32)] = &[
        ("#pragma format R8G8B8A8_UNORN\n", "unknown format `R8G8B8A8_UNORN`", 2),
        ("#pragma format R8_UNORM\n#pragma format R16_SFLOAT\n", "second `#pragma format`", 3),
        ("#pragma name A\n#pragma name B\n", "second `#pragma name`", 3),
        ("#pragma stage geometry\n", "unknown stage `geometry`", 2),
        ("#pragma parameter P \"p\" 0.5 0.0\n", "has 2 of the 3 required numbers", 2),
        ("#pragma parameter P \"p\" 0.5 zero 1.0\n", "minimum value `zero` of `P` is not a number", 2),
        // A multi-byte character inside the first number (a crash once: `inf` was compared by
        // slicing the text at byte 3).
        (
            "#pragma parameter P \"p\" 0\u{fffd}15 0.0 1.0\n",
            "minimum value `\u{fffd}15` of `P` is not a number",
            2,
        ),
        ("#pragma parameter P p 0.5 0.0 1.0\n", "must be in double quotes", 2),
        ("#pragma parameter P \"unterminated 0.5 0.0 1.0\n", "unterminated description", 2),
        (
            "#pragma parameter P \"p\" 0.5 0.0 1.0 0.1\n\n#pragma parameter P \"p\" 0.5 0.0 2.0 0.1\n",
            "parameter `P` declared again with different values",
            4,
        ),
    ];
    for (pragmas, expect, line) in cases {
        let src = format!("#version 450\n{pragmas}{STAGES}");
        let e = preprocess_err(&[("p.slang", &src)]);
        assert!(e.message.contains(expect), "{pragmas:?}: {e}");
        assert_eq!(
            (file_name(&e), e.line),
            ("p.slang", *line),
            "{pragmas:?}: {e}"
        );
    }
}

#[test]
fn parameter_conflict_in_an_include_names_the_include() {
    let src = format!(
        "#version 450\n#pragma parameter P \"p\" 0.5 0.0 1.0 0.1\n#include \"x.inc\"\n{STAGES}"
    );
    let e = preprocess_err(&[
        ("c.slang", &src),
        ("x.inc", "\n#pragma parameter P \"other\" 0.5 0.0 1.0 0.1\n"),
    ]);
    assert_eq!((file_name(&e), e.line), ("x.inc", 2), "{e}");
}

#[test]
fn both_stages_are_required() {
    let e = preprocess_err(&[(
        "f.slang",
        "#version 450\n#pragma stage vertex\nvoid main() {}\n",
    )]);
    assert!(
        e.message.contains("missing `#pragma stage fragment`"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// Compilation

#[test]
fn glslang_errors_map_to_the_included_file() {
    let e = compile_slang(&data("glsl_error.slang")).unwrap_err();
    assert_eq!((file_name(&e), e.line), ("broken.inc", 4), "{e}");
    assert!(e.message.contains("undeclared_thing"), "{e}");
    assert!(e.message.starts_with("vertex stage"), "{e}");
}

#[test]
fn glslang_error_in_one_stage_names_the_stage_and_line() {
    let src = "#version 450\n#pragma stage vertex\nvoid main() { gl_Position = vec4(0.0); }\n#pragma stage fragment\nlayout(location = 0) out vec4 FragColor;\nvoid main()\n{\n   FragColor = vec3(1.0);\n}\n";
    let (_dir, path) = write_files(&[("t.slang", src)]);
    let e = compile_slang(&path).unwrap_err();
    assert_eq!((file_name(&e), e.line), ("t.slang", 8), "{e}");
    assert!(e.message.starts_with("fragment stage"), "{e}");
}

/// Every `OpVariable` whose pointee is an `OpTypeSampledImage` (a combined image-sampler).
fn combined_sampler_variables(words: &[u32]) -> usize {
    let mut i = 5;
    let mut sampled_images = Vec::new();
    let mut pointers = Vec::new();
    let mut count = 0;
    while i < words.len() {
        let (len, op) = ((words[i] >> 16) as usize, words[i] & 0xffff);
        match op {
            27 => sampled_images.push(words[i + 1]), // OpTypeSampledImage
            32 if sampled_images.contains(&words[i + 3]) => pointers.push(words[i + 1]), // OpTypePointer
            59 if pointers.contains(&words[i + 1]) => count += 1, // OpVariable
            _ => {}
        }
        i += len.max(1);
    }
    count
}

#[test]
fn combined_samplers_are_split_including_function_parameters() {
    let pre = preprocess_file(&data("basic.slang")).unwrap();
    let words = vulkan_glsl::glsl_to_spirv(&pre.fragment, Stage::Fragment).unwrap();
    assert_eq!(combined_sampler_variables(&words), 2);
    // naga cannot read glslang's output as it is ...
    let raw = naga::front::spv::Frontend::new(
        words.iter().copied(),
        &naga::front::spv::Options {
            adjust_coordinate_space: false,
            strict_capabilities: false,
            block_ctx_dump_prefix: None,
        },
    )
    .parse();
    assert!(
        raw.is_err(),
        "naga now reads combined samplers; the split may be unnecessary"
    );
    // ... but reads and validates it after the split.
    let split = vulkan_glsl::split_samplers::split_combined_samplers(&words).unwrap();
    assert_eq!(combined_sampler_variables(&split.words), 0);
    let names: Vec<_> = split
        .samplers
        .iter()
        .map(|s| {
            (
                s.name.as_deref().unwrap(),
                s.set,
                s.image_binding,
                s.sampler_binding,
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("Source", 0, 2, 2 + SAMPLER_BINDING_OFFSET),
            ("Original", 0, 3, 3 + SAMPLER_BINDING_OFFSET)
        ]
    );
    let (module, _info, _) =
        vulkan_glsl::spirv_to_naga(&words, Stage::Fragment, "basic.slang").unwrap();
    let mut globals: Vec<(String, u32, bool)> = module
        .global_variables
        .iter()
        .filter(|(_, v)| v.space == naga::AddressSpace::Handle)
        .map(|(_, v)| {
            let is_sampler = matches!(module.types[v.ty].inner, naga::TypeInner::Sampler { .. });
            (
                v.name.clone().unwrap(),
                v.binding.as_ref().unwrap().binding,
                is_sampler,
            )
        })
        .collect();
    globals.sort();
    assert_eq!(
        globals,
        [
            ("Original".to_string(), 3, false),
            (
                "Original_sampler".to_string(),
                3 + SAMPLER_BINDING_OFFSET,
                true
            ),
            ("Source".to_string(), 2, false),
            (
                "Source_sampler".to_string(),
                2 + SAMPLER_BINDING_OFFSET,
                true
            ),
        ]
    );
    // The helpers taking `sampler2D` survive as functions taking an image and a sampler.
    let sharpen = module
        .functions
        .iter()
        .find(|(_, f)| f.name.as_deref().is_some_and(|n| n.starts_with("sharpen")))
        .unwrap()
        .1;
    let arg_kinds: Vec<_> = sharpen
        .arguments
        .iter()
        .map(|a| match module.types[a.ty].inner {
            naga::TypeInner::Image { .. } => "image",
            naga::TypeInner::Sampler { .. } => "sampler",
            _ => "value",
        })
        .collect();
    assert_eq!(arg_kinds, ["image", "sampler", "value", "value"]);
}

#[test]
fn shader_without_samplers_is_left_alone() {
    let src = format!("#version 450\n{STAGES}");
    let (_dir, path) = write_files(&[("n.slang", &src)]);
    let pre = preprocess_file(&path).unwrap();
    let words = vulkan_glsl::glsl_to_spirv(&pre.fragment, Stage::Fragment).unwrap();
    let split = vulkan_glsl::split_samplers::split_combined_samplers(&words).unwrap();
    assert!(split.samplers.is_empty());
    let s = compile_slang(&path).unwrap();
    assert!(s.fragment.reflection.textures.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Reflection

fn members(
    r: &Option<softgpu::frontend::reflect::BlockReflection>,
) -> Vec<(String, u32, String, u32)> {
    r.as_ref()
        .unwrap()
        .members
        .iter()
        .map(|m| (m.name.clone(), m.offset, m.ty.glsl_name(), m.size))
        .collect()
}

fn m(name: &str, offset: u32, ty: &str, size: u32) -> (String, u32, String, u32) {
    (name.to_string(), offset, ty.to_string(), size)
}

#[test]
fn reflection_of_the_basic_pass() {
    let s = compile_slang(&data("basic.slang")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.vertex.entry_point, "main");
    assert_eq!(s.fragment.entry_point, "main");
    for r in [&s.vertex.reflection, &s.fragment.reflection] {
        // Push constants are std430; these members are all naturally aligned.
        assert_eq!(
            members(&r.push_constants),
            [
                m("SourceSize", 0, "vec4", 16),
                m("OriginalSize", 16, "vec4", 16),
                m("OutputSize", 32, "vec4", 16),
                m("FrameCount", 48, "uint", 4),
                m("SHARPNESS", 52, "float", 4),
            ]
        );
        let push = r.push_constants.as_ref().unwrap();
        assert_eq!(
            (push.name.as_deref(), push.type_name.as_deref(), push.size),
            (Some("params"), Some("Push"), 56)
        );
        // std140: the float packs into the vec3's last slot; vec2[3] has a 16-byte stride; mat3
        // is three 16-byte columns.
        assert_eq!(
            members(&r.uniform_buffers.first().cloned()),
            [
                m("MVP", 0, "mat4", 64),
                m("TINT", 64, "vec3", 12),
                m("SCANLINE_STRENGTH", 76, "float", 4),
                m("JITTER", 80, "vec2[3]", 48),
                m("COLOR_MATRIX", 128, "mat3", 48),
            ]
        );
        let ubo = r.uniform_buffers.first().unwrap();
        assert_eq!(
            (ubo.name.as_deref(), ubo.set, ubo.binding, ubo.size),
            (Some("global"), Some(0), Some(0), 176)
        );
    }
    let loc = |r: &StageReflection, inputs: bool| -> Vec<(String, u32, String)> {
        let v = if inputs { &r.inputs } else { &r.outputs };
        v.iter()
            .map(|l| (l.name.clone().unwrap_or_default(), l.location, l.ty.clone()))
            .collect()
    };
    let l = |n: &str, i: u32, t: &str| (n.to_string(), i, t.to_string());
    assert_eq!(
        loc(&s.vertex.reflection, true),
        [l("Position", 0, "vec4"), l("TexCoord", 1, "vec2")]
    );
    assert_eq!(
        loc(&s.vertex.reflection, false),
        [l("vTexCoord", 0, "vec2"), l("vPixel", 1, "vec2")]
    );
    assert_eq!(
        loc(&s.fragment.reflection, true),
        [l("vTexCoord", 0, "vec2"), l("vPixel", 1, "vec2")]
    );
    assert_eq!(
        loc(&s.fragment.reflection, false),
        [l("FragColor", 0, "vec4")]
    );
    assert!(s.vertex.reflection.textures.is_empty());
    let tex: Vec<_> = s
        .fragment
        .reflection
        .textures
        .iter()
        .map(|t| {
            (
                t.name.clone().unwrap(),
                t.set,
                t.binding,
                t.ty.clone(),
                t.sampler_binding,
            )
        })
        .collect();
    assert_eq!(
        tex,
        [
            (
                "Source".to_string(),
                0,
                2,
                "texture2D".to_string(),
                Some(2 + SAMPLER_BINDING_OFFSET)
            ),
            (
                "Original".to_string(),
                0,
                3,
                "texture2D".to_string(),
                Some(3 + SAMPLER_BINDING_OFFSET)
            ),
        ]
    );
}

#[test]
fn std140_ubo_and_std430_push_constants_lay_out_differently() {
    let s = compile_slang(&data("layout.slang")).unwrap_or_else(|e| panic!("{e}"));
    let r = &s.fragment.reflection;
    // std430: float[3] has a 4-byte stride; vec2 aligns to 8 (→ 16 after 12 bytes); vec3 to 16.
    assert_eq!(
        members(&r.push_constants),
        [
            m("WEIGHTS", 0, "float[3]", 12),
            m("OFFSET", 16, "vec2", 8),
            m("DIR", 32, "vec3", 12),
            m("K", 44, "float", 4),
        ]
    );
    assert_eq!(r.push_constants.as_ref().unwrap().size, 48);
    // std140: array elements are rounded up to 16 bytes.
    assert_eq!(
        members(&r.uniform_buffers.first().cloned()),
        [
            m("WEIGHTS", 0, "float[3]", 48),
            m("OFFSET", 48, "vec2", 8),
            m("DIR", 64, "vec3", 12),
            m("K", 76, "float", 4),
            m("COUNT", 80, "int", 4),
            m("TAIL", 96, "vec4[2]", 32),
        ]
    );
    assert_eq!(r.uniform_buffers.first().unwrap().binding, Some(1));
    assert_eq!(r.uniform_buffers.first().unwrap().size, 128);
}

#[test]
fn std140_mat2_members_are_read_with_padded_columns() {
    // std140 pads mat2/mat3x2 columns to 16 bytes, which naga's SPIR-V reader refuses for
    // matrices; the members become arrays of padded columns (reflected as declared).
    let src = "#version 450\nlayout(std140, set = 0, binding = 0) uniform UBO { mat4 MVP; mat2 ROT; mat3x2 SKEW[2]; float K; } global;\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\nvoid main() { gl_Position = global.MVP * Position; }\n#pragma stage fragment\nlayout(location = 0) in vec2 uv;\nlayout(location = 0) out vec4 FragColor;\nvoid main() { int i = int(uv.x); mat3x2 s = global.SKEW[i]; FragColor = vec4(global.ROT * uv + global.ROT[i] + s * vec3(uv, global.K), global.SKEW[1][2]); }\n";
    let (_dir, path) = write_files(&[("mat2.slang", src)]);
    let s = compile_slang(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        members(&s.fragment.reflection.uniform_buffers.first().cloned()),
        [
            m("MVP", 0, "mat4", 64),
            m("ROT", 64, "mat2", 32),
            m("SKEW", 96, "mat3x2[2]", 96),
            m("K", 192, "float", 4),
        ]
    );
    // The typed layout keeps the padded column stride the program reads with.
    let ubo = &s.fragment.reflection.uniform_buffers[0];
    let float = Scalar {
        kind: ScalarKind::Float,
        width: 4,
    };
    let padded = |columns| TypeLayout::Matrix {
        scalar: float,
        columns,
        rows: 2,
        column_stride: 16,
    };
    assert_eq!(ubo.members[1].ty, padded(2));
    assert_eq!(
        ubo.members[2].ty,
        TypeLayout::Array {
            element: Box::new(padded(3)),
            count: 2,
            stride: 48,
        }
    );
    let (_, fs) = s.lower().unwrap_or_else(|e| panic!("{e}"));
    let text = fs.program.to_string();
    // Columns are read from whole registers: ROT's at CONST[0][4], [5]; SKEW's from [6].
    assert!(
        text.contains("CONST[0][4]") && text.contains("CONST[0][5]"),
        "{text}"
    );
    assert!(text.contains("CONST[0][11]"), "{text}");
}

#[test]
fn reflection_serializes_to_json() {
    let s = compile_slang(&data("basic.slang")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&s.reflection().to_json()).unwrap();
    assert_eq!(json["name"], "BasicPass");
    assert_eq!(json["format"], "R16G16B16A16_SFLOAT");
    assert_eq!(json["parameters"][1]["id"], "SCANLINE_STRENGTH");
    assert_eq!(
        json["vertex"]["uniform_buffers"][0]["members"][3]["name"],
        "JITTER"
    );
    assert_eq!(
        json["vertex"]["uniform_buffers"][0]["members"][3]["offset"],
        80
    );
    assert_eq!(
        json["vertex"]["uniform_buffers"][0]["members"][3]["type"],
        "vec2[3]"
    );
    assert_eq!(json["fragment"]["textures"][0]["name"], "Source");
    assert_eq!(json["fragment"]["outputs"][0]["location"], 0);
}

// ---------------------------------------------------------------------------------------------
// Lowering

#[test]
fn slang_shader_lowers_to_tgsi() {
    let s = compile_slang(&data("basic.slang")).unwrap();
    let (vs, fs) = s.lower().unwrap_or_else(|e| panic!("{e}"));
    let vs_text = vs.program.to_string();
    let fs_text = fs.program.to_string();
    assert!(vs_text.starts_with("VERT"), "{vs_text}");
    assert!(fs_text.starts_with("FRAG"), "{fs_text}");
    assert!(vs_text.contains("POSITION"), "{vs_text}");
    // Both textures are sampled: two sampler views, one explicit-LOD lookup, one fetch.
    assert!(
        fs_text.contains("DCL SVIEW[2]") && fs_text.contains("DCL SVIEW[3]"),
        "{fs_text}"
    );
    assert!(
        fs_text.contains("TXL ") || fs_text.contains("TEX_LZ"),
        "{fs_text}"
    );
    assert!(fs_text.contains("TXF"), "{fs_text}");
}

#[test]
fn aggregate_varyings_are_flattened_to_consecutive_locations() {
    let s = compile_slang(&data("varyings.slang")).unwrap_or_else(|e| panic!("{e}"));
    let names =
        |v: &[softgpu::frontend::reflect::LocationReflection]| -> Vec<(String, u32, String)> {
            v.iter()
                .map(|l| (l.name.clone().unwrap_or_default(), l.location, l.ty.clone()))
                .collect()
        };
    let expect: Vec<(String, u32, String)> = [
        ("vTexCoord", 0, "vec2"),
        ("offset[0]", 1, "vec4"),
        ("offset[1]", 2, "vec4"),
        ("offset[2]", 3, "vec4"),
        ("rot[0]", 4, "vec2"),
        ("rot[1]", 5, "vec2"),
        ("geom.center", 6, "vec2"),
        ("geom.aspect", 7, "float"),
    ]
    .iter()
    .map(|(n, l, t)| (n.to_string(), *l, t.to_string()))
    .collect();
    assert_eq!(names(&s.vertex.reflection.outputs), expect);
    assert_eq!(names(&s.fragment.reflection.inputs), expect);
    // `flat` carries over to the struct's leaves.
    let ep = &s.fragment.module.entry_points[s.fragment.entry_index];
    let flat: Vec<u32> = ep
        .function
        .arguments
        .iter()
        .filter_map(|a| match a.binding {
            Some(naga::Binding::Location {
                location,
                interpolation: Some(naga::Interpolation::Flat),
                ..
            }) => Some(location),
            _ => None,
        })
        .collect();
    assert_eq!(flat, [6, 7]);
    let (_vs, fs) = s.lower().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        fs.program.to_string().contains("TRUNC"),
        "modf lowers to a trunc"
    );
}

#[test]
fn integer_vertex_outputs_become_flat() {
    // GLSL needs `flat` only on the fragment input; naga wants it on the vertex output too.
    let src = "#version 450\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\nlayout(location = 0) out int vPhase;\nlayout(location = 1) out uvec2 vCell;\nvoid main() { gl_Position = Position; vPhase = 3; vCell = uvec2(1u, 2u); }\n#pragma stage fragment\nlayout(location = 0) flat in int vPhase;\nlayout(location = 1) flat in uvec2 vCell;\nlayout(location = 0) out vec4 FragColor;\nvoid main() { FragColor = vec4(float(vPhase), vec2(vCell), 1.0); }\n";
    let (_dir, path) = write_files(&[("int.slang", src)]);
    let s = compile_slang(&path).unwrap_or_else(|e| panic!("{e}"));
    let outputs: Vec<_> = s
        .vertex
        .reflection
        .outputs
        .iter()
        .map(|l| (l.location, l.ty.as_str()))
        .collect();
    assert_eq!(outputs, [(0, "int"), (1, "uvec2")]);
}

// ---------------------------------------------------------------------------------------------
// Positions of naga's errors

#[test]
fn naga_reader_error_names_the_included_line_and_function() {
    // naga's SPIR-V reader has no gl_HelperInvocation; the error names where it is used.
    let (_dir, path) = write_files(&[
        (
            "h.slang",
            "#version 450\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\nlayout(location = 0) out vec2 uv;\nvoid main() { gl_Position = Position; uv = Position.xy; }\n#pragma stage fragment\nlayout(location = 0) in vec2 uv;\nlayout(location = 0) out vec4 FragColor;\n#include \"inc/helper.inc\"\nvoid main()\n{\n   FragColor = vec4(shade(uv));\n}\n",
        ),
        (
            "inc/helper.inc",
            "// helpers (return type on its own line)\nfloat\nshade(vec2 p)\n{\n    float base = p.x * 0.5;\n    if (gl_HelperInvocation)\n        base = 0.0;\n    return base;\n}\n",
        ),
    ]);
    let e = compile_slang(&path).unwrap_err();
    assert_eq!((file_name(&e), e.line), ("helper.inc", 6), "{e}");
    assert!(
        e.message.contains("unsupported builtin")
            && e.message.contains("in function `shade`")
            && e.message.contains("`gl_HelperInvocation`"),
        "{e}"
    );
}

#[test]
fn naga_validation_error_names_the_line_of_the_failing_statement() {
    // The validator reports a function and an expression; its span (a SPIR-V byte offset)
    // leads back to the statement. glslang's output is valid for naga, so one instruction is
    // broken on purpose: `~k` (OpNot) becomes a logical not of an int, which naga rejects.
    let src = "#version 450\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\nvoid main() { gl_Position = Position; }\n#pragma stage fragment\nlayout(location = 0) in vec2 uv;\nlayout(location = 0) out vec4 FragColor;\nfloat pattern(vec2 p)\n{\n    int k = int(p.x * 8.0);\n    float y = p.y;\n    int flipped = ~k;\n    return float(flipped) * y;\n}\nvoid main()\n{\n    FragColor = vec4(pattern(uv));\n}\n";
    let (_dir, path) = write_files(&[("v.slang", src)]);
    let pre = preprocess_file(&path).unwrap();
    let mut words = vulkan_glsl::glsl_to_spirv(&pre.fragment, Stage::Fragment).unwrap();
    let (op_not, op_logical_not) = (200u32, 168u32);
    let mut i = 5;
    let mut patched = 0;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        if words[i] & 0xFFFF == op_not {
            words[i] = (words[i] & 0xFFFF_0000) | op_logical_not;
            patched += 1;
        }
        i += count.max(1);
    }
    assert_eq!(patched, 1);
    let e = vulkan_glsl::compile_stage_from_spirv(pre.fragment.clone(), Stage::Fragment, &words)
        .unwrap_err();
    assert_eq!((file_name(&e), e.line), ("v.slang", 12), "{e}");
    assert!(
        e.message.contains("naga validation") && e.message.contains("in function `pattern`"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// SPIR-V constructs naga's reader mishandles, rewritten first (legalize.rs)

/// Runs a fragment program on one quad with `uv` (GENERIC[0]) per lane; returns COLOR[0] bits.
fn run_fragment(program: &softgpu::ir::Program, uv: [[f32; 2]; 4]) -> [[u32; 4]; 4] {
    run_fragment_with(program, uv, &[])
}

/// [`run_fragment`] with CONST buffers.
fn run_fragment_with(
    program: &softgpu::ir::Program,
    uv: [[f32; 2]; 4],
    constants: &[&[[u32; 4]]],
) -> [[u32; 4]; 4] {
    use softgpu::exec::{NoTextures, QuadIo, QuadShader, ShaderResources};
    use softgpu::ir::SemanticName;
    let shader = softgpu::interp::Interpreter::new(program).unwrap();
    let sig = shader.signature().clone();
    let mut ins = vec![[[0u32; 4]; 4]; sig.num_inputs];
    let input = sig
        .inputs
        .iter()
        .find(|i| i.semantic == SemanticName::Generic && i.semantic_index == 0)
        .unwrap()
        .register as usize;
    for (lane, v) in uv.iter().enumerate() {
        ins[input][0][lane] = v[0].to_bits();
        ins[input][1][lane] = v[1].to_bits();
    }
    let mut outs = vec![[[0u32; 4]; 4]; sig.num_outputs];
    let res = ShaderResources {
        constants,
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
        .unwrap();
    let reg = sig.output(SemanticName::Color, 0).unwrap().register as usize;
    std::array::from_fn(|l| std::array::from_fn(|c| outs[reg][c][l]))
}

#[test]
fn integer_ops_naga_misreads_compute_what_glsl_says() {
    // bitCount(uint) → int, ivec2 % int, -uint, and a function that can fall off its end
    // (glslang returns OpUndef there).
    let src = "#version 450\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\nvoid main() { gl_Position = Position; }\n#pragma stage fragment\nlayout(location = 0) in vec2 uv;\nlayout(location = 0) out vec4 FragColor;\nvec3 pick(float h)\n{\n    if (h < 0.5) return vec3(1.0); else if (h < 2.0) return vec3(2.0);\n}\nvoid main()\n{\n    uint u = uint(uv.x);\n    ivec2 a = ivec2(uv) - ivec2(3);\n    int n = bitCount(u);\n    ivec2 m = a % 3;\n    uint neg = -u;\n    FragColor = vec4(float(n), float(m.x * 10 + m.y), float(neg >> 28u), pick(uv.y).x);\n}\n";
    let (_dir, path) = write_files(&[("ops.slang", src)]);
    let s = compile_slang(&path).unwrap_or_else(|e| panic!("{e}"));
    let (_, fs) = s.lower().unwrap_or_else(|e| panic!("{e}"));
    let uv = [[7.0, 0.25], [12.0, 1.0], [0.0, 5.0], [255.0, 0.0]];
    let got = run_fragment(&fs.program, uv);
    for (lane, [x, y]) in uv.iter().enumerate() {
        let u = *x as u32;
        let a = [*x as i32 - 3, *y as i32 - 3];
        // GLSL's % on negative operands is undefined; SPIR-V OpSMod takes the divisor's sign.
        let m = a.map(|v| v.rem_euclid(3));
        let want = [
            u.count_ones() as f32,
            (m[0] * 10 + m[1]) as f32,
            (u.wrapping_neg() >> 28) as f32,
            if *y < 0.5 { 1.0 } else { 2.0 },
        ];
        let lane_got = got[lane].map(f32::from_bits);
        assert_eq!(lane_got[..3], want[..3], "lane {lane} uv ({x}, {y})");
        if *y < 2.0 {
            assert_eq!(lane_got[3], want[3], "lane {lane}");
        }
    }
}

#[test]
fn std140_push_constant_mat2_is_padded_and_row_major_mat2_is_refused() {
    let src = "#version 450\nlayout(std140, push_constant) uniform Push { mat2 P; mat3x2 Q; } params;\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\nvoid main() { gl_Position = Position; }\n#pragma stage fragment\nlayout(location = 0) in vec2 uv;\nlayout(location = 0) out vec4 FragColor;\nvoid main() { FragColor = vec4(params.P * uv + params.Q * vec3(uv, 1.0), 0.0, 1.0); }\n";
    let (_dir, path) = write_files(&[("push.slang", src)]);
    let s = compile_slang(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        members(&s.fragment.reflection.push_constants),
        [m("P", 0, "mat2", 32), m("Q", 32, "mat3x2", 48)]
    );
    let text = s.lower().unwrap().1.program.to_string();
    for column in ["CONST[0][0]", "CONST[0][1]", "CONST[0][2]", "CONST[0][4]"] {
        assert!(text.contains(column), "{column} in\n{text}");
    }
    // Row-major rows are 16 bytes apart, so GLSL's columns are not contiguous: not rewritten,
    // naga's stride error stands (rather than a silently transposed matrix).
    let src = src.replace("mat2 P;", "layout(row_major) mat2 P;");
    let (_dir, path) = write_files(&[("rm.slang", &src)]);
    let e = compile_slang(&path).unwrap_err();
    assert!(e.message.contains("matrix stride 16"), "{e}");
}

#[test]
fn dynamic_index_into_a_packed_std430_push_array() {
    // std430 packs float[3] 4 bytes apart: not register-aligned, so the lowering indexes a
    // register copy.
    let src = "#version 450\nlayout(push_constant) uniform Push { float W[3]; vec2 K; } params;\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\nvoid main() { gl_Position = Position; }\n#pragma stage fragment\nlayout(location = 0) in vec2 uv;\nlayout(location = 0) out vec4 FragColor;\nvoid main() { int i = int(uv.x); FragColor = vec4(params.W[i], params.W[2 - i], params.K); }\n";
    let (_dir, path) = write_files(&[("w.slang", src)]);
    let s = compile_slang(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        members(&s.fragment.reflection.push_constants),
        [m("W", 0, "float[3]", 12), m("K", 16, "vec2", 8)]
    );
    let (_, fs) = s.lower().unwrap_or_else(|e| panic!("{e}"));
    let w = [0.5f32, -1.25, 3.0];
    let f = |x: f32| x.to_bits();
    let buffer = [[f(w[0]), f(w[1]), f(w[2]), 0], [f(7.0), f(8.0), 0, 0]];
    let uv = [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [1.5, 0.0]];
    let got = run_fragment_with(&fs.program, uv, &[&buffer]);
    for (lane, [x, _]) in uv.iter().enumerate() {
        let i = *x as usize;
        assert_eq!(
            got[lane].map(f32::from_bits),
            [w[i], w[2 - i], 7.0, 8.0],
            "lane {lane}"
        );
    }
}

#[test]
fn entry_point_interface_error_names_the_builtin_use() {
    // naga wants gl_SampleMaskIn as a scalar; its error is about the entry point's interface
    // and points at no instruction: the line is the builtin's use in main.
    let src = "#version 450\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\nvoid main() { gl_Position = Position; }\n#pragma stage fragment\nlayout(location = 0) in vec2 uv;\nlayout(location = 0) out vec4 FragColor;\nvoid main()\n{\n    float k = uv.x;\n    FragColor = vec4(k * float(gl_SampleMaskIn[0] & 1));\n}\n";
    let (_dir, path) = write_files(&[("mask.slang", src)]);
    let e = compile_slang(&path).unwrap_err();
    assert_eq!((file_name(&e), e.line), ("mask.slang", 11), "{e}");
    assert!(
        e.message.contains("SampleMask") && e.message.contains("`gl_SampleMaskIn`"),
        "{e}"
    );
}
