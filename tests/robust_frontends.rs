//! Hostile shaders give one error naming the file and line: deep nesting in every frontend,
//! include and macro bombs, huge arrays and register indices, malformed TGSI, an unterminated
//! comment, multi-byte characters in directive lines, and nested loops that once cost
//! exponential compile time. Each test runs the frontend in the test process on the test
//! thread's own (small) stack: a stack overflow aborts the test binary, so it fails loudly.
//!
//! The ignored twin checks that no shader of a RetroArch slang-shaders checkout meets the
//! prescans that guard glslang:
//!
//! ```text
//! SLANG_SHADERS_DIR=/path/to/slang-shaders cargo test --test robust_frontends -- --ignored
//! ```

use std::path::{Path, PathBuf};

mod files_support;

use softgpu::frontend::cg::compile_cg_str;
use softgpu::frontend::limits::{
    check_macro_growth, check_nesting, MAX_CALL_DEPTH, MAX_NESTING_DEPTH,
};
use softgpu::frontend::vulkan_glsl::compile_slang;
use softgpu::frontend::{wgsl, FrontendError};
use softgpu::ir::validate::{parse_and_validate, MAX_NESTING, MAX_REGISTERS};

/// A Cg shader whose fragment stage holds `globals` before it and `body` inside it.
fn cg(globals: &str, body: &str) -> String {
    format!(
        "struct out_vertex {{ float4 position : POSITION; float2 texCoord : TEXCOORD0; }};\n\
         out_vertex main_vertex(float4 position : POSITION, float2 texCoord : TEXCOORD0, \
         uniform float4x4 modelViewProj) {{ out_vertex OUT; OUT.position = \
         mul(modelViewProj, position); OUT.texCoord = texCoord; return OUT; }}\n\
         {globals}\n\
         float4 main_fragment(float2 tex : TEXCOORD0, uniform float u) : COLOR\n\
         {{ float x = tex.x;\n{body}\nreturn float4(x); }}\n"
    )
}

/// A slang shader whose fragment stage holds `globals` before `main` and `body` inside it;
/// `head` goes right after `#version`.
fn slang(head: &str, globals: &str, body: &str) -> String {
    format!(
        "#version 450\n{head}\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\n\
         layout(location = 0) out vec2 v;\nvoid main() {{ gl_Position = Position; v = \
         Position.xy; }}\n#pragma stage fragment\nlayout(location = 0) in vec2 v;\n\
         layout(location = 0) out vec4 FragColor;\nlayout(push_constant) uniform Push \
         {{ float u; }} params;\n{globals}\nvoid main() {{ float x = v.x;\n{body}\n\
         FragColor = vec4(x); }}\n"
    )
}

fn wgsl_fragment(globals: &str, body: &str) -> String {
    format!(
        "{globals}\n@fragment fn main(@builtin(position) p: vec4<f32>) -> @location(0) \
         vec4<f32> {{ var x: f32 = p.x;\n{body}\nreturn vec4<f32>(x); }}\n"
    )
}

fn compile_cg(source: &str) -> Result<(), FrontendError> {
    let shader = compile_cg_str(source, Path::new("hostile.cg"))?;
    shader.lower().map(|_| ())
}

fn compile_slang_text(dir: &Path, source: &str) -> Result<(), FrontendError> {
    let path = dir.join("hostile.slang");
    std::fs::write(&path, source).unwrap();
    compile_slang(&path)?.lower().map(|_| ())
}

fn compile_wgsl(source: &str) -> Result<(), FrontendError> {
    let parsed = wgsl::parse(source, "hostile.wgsl")?;
    let index =
        wgsl::select_entry_point(&parsed.module, wgsl::Stage::Fragment, None, "hostile.wgsl")?;
    softgpu::frontend::lower::lower(
        &parsed.module,
        &parsed.info,
        index,
        Some(source),
        "hostile.wgsl",
    )
    .map(|_| ())
}

/// The error of `result`, which must name `file`, a line, and say `expected`.
fn refused(result: Result<(), FrontendError>, file: &str, expected: &str) -> FrontendError {
    let e = result.expect_err("the hostile shader must be refused");
    assert!(e.file.ends_with(file), "{e}");
    assert!(e.line > 0, "no line: {e}");
    assert!(e.message.contains(expected), "{e}");
    e
}

/// Deep inputs of every shape the parsers recurse over: parentheses, unary operators,
/// conditional operators, `if`, `else if` chains, blocks, operator chains and swizzle chains
/// (of the language's `vec4` type).
fn deep_bodies(n: usize, vec4: &str) -> Vec<(&'static str, String)> {
    let mut tern = String::new();
    let mut chain = String::from("if (x > 0.0) x = 1.0;");
    for i in 0..n {
        tern.push_str(&format!("x > {i}.0 ? {i}.0 : "));
        chain.push_str(&format!(" else if (x > {i}.0) x = {i}.0;"));
    }
    vec![
        (
            "parentheses",
            format!("x = {}x{};", "(".repeat(n), ")".repeat(n)),
        ),
        ("unary minus", format!("x = {}x;", "- ".repeat(n))),
        ("conditional", format!("x = {tern}x;")),
        (
            "if",
            format!("{}x = 2.0;{}", "if (x > 0.0) { ".repeat(n), " }".repeat(n)),
        ),
        ("else if", chain),
        (
            "blocks",
            format!("{}x = 2.0;{}", "{ ".repeat(n), " }".repeat(n)),
        ),
        ("sum", format!("x = x{};", " + x".repeat(n))),
        ("swizzles", format!("x = {vec4}(x){}.x;", ".xxxx".repeat(n))),
    ]
}

#[test]
fn deeply_nested_cg_is_refused_with_its_line() {
    for (what, body) in deep_bodies(100_000, "float4") {
        let e = refused(compile_cg(&cg("", &body)), "hostile.cg", "nested more than");
        assert_eq!(e.line, 6, "{what}: {e}");
    }
}

#[test]
fn cg_nested_just_below_the_limit_compiles() {
    // A quarter of the limit of each shape: the parser, checker, builder, naga's validator
    // and the lowering all recurse through it on the frontend thread.
    for (what, body) in deep_bodies(MAX_NESTING_DEPTH / 4, "float4") {
        if let Err(e) = compile_cg(&cg("", &body)) {
            panic!("{what}: {e}");
        }
    }
}

#[test]
fn cg_call_chains_are_bounded() {
    let mut globals = String::from("float f0(float a) { return a; }\n");
    for i in 1..3000 {
        globals.push_str(&format!(
            "float f{i}(float a) {{ return f{}(a) + 1.0; }}\n",
            i - 1
        ));
    }
    refused(
        compile_cg(&cg(&globals, "x = f2999(x);")),
        "hostile.cg",
        "calls nested more than",
    );
    // A chain just below the limit compiles.
    let depth = MAX_CALL_DEPTH - 4;
    compile_cg(&cg(&globals, &format!("x = f{depth}(x);"))).unwrap();
}

#[test]
fn loops_nested_through_calls_are_refused_by_the_lowering() {
    // Each function nests 60 loops (within the parser's limit) and calls the previous one
    // from the innermost: inlined, the loops of nineteen functions nest far deeper than the IR
    // may, and the lowering says so instead of overflowing its stack or the validator's.
    let loops = |bound: &str| -> (String, String) {
        let open: String = (0..60)
            .map(|i| format!("for (int i{i} = 0; i{i} < {bound}; i{i}++) {{ "))
            .collect();
        (open, " }".repeat(60))
    };
    let mut globals = String::from("float f0(float a, float u) { return a; }\n");
    for k in 1..20 {
        let (open, close) = loops("int(u)");
        globals.push_str(&format!(
            "float f{k}(float a, float u) {{ {open}a = f{}(a, u);{close} return a; }}\n",
            k - 1
        ));
    }
    let e = compile_cg(&cg(&globals, "x = f19(x, u);")).unwrap_err();
    assert!(e.message.contains("nested more than"), "{e}");
    assert!(e.file.ends_with("hostile.cg"), "{e}");
}

#[test]
fn cg_unterminated_comment_names_where_it_opens() {
    let source = format!("{}\n\n/* never closed\n", cg("", "x = 2.0;"));
    let e = refused(compile_cg(&source), "hostile.cg", "unterminated `/*`");
    assert_eq!(e.line, 10, "{e}");
}

#[test]
fn cg_preprocessor_bombs_are_refused() {
    let mut doubling = String::from("#define A0 x\n");
    for i in 1..=30 {
        doubling.push_str(&format!("#define A{i} A{} + A{}\n", i - 1, i - 1));
    }
    refused(
        compile_cg(&format!("{doubling}{}", cg("", "x = A30;"))),
        "hostile.cg",
        "macro expansion",
    );
    // Nested `#if` operators and parentheses.
    let deep_if = format!(
        "#if {}1{}\n#endif\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    refused(
        compile_cg(&format!("{deep_if}{}", cg("", ""))),
        "hostile.cg",
        "nested more than",
    );
    let not_if = format!("#if {}1\n#endif\n", "!".repeat(100_000));
    refused(
        compile_cg(&format!("{not_if}{}", cg("", ""))),
        "hostile.cg",
        "nested more than",
    );
}

/// Thirty headers each including the next twice: 2^30 inclusions without a cycle.
fn include_bomb(dir: &Path, extension: &str) -> PathBuf {
    for i in 0..30 {
        let text = if i < 29 {
            format!("#include \"b{}.h\"\n#include \"b{}.h\"\n", i + 1, i + 1)
        } else {
            "// the innermost header\n".to_string()
        };
        std::fs::write(dir.join(format!("b{i}.h")), text).unwrap();
    }
    dir.join(format!("bomb.{extension}"))
}

#[test]
fn include_bombs_are_refused_in_both_preprocessors() {
    let dir = tempfile::tempdir().unwrap();
    let cg_path = include_bomb(dir.path(), "cg");
    std::fs::write(&cg_path, format!("#include \"b0.h\"\n{}", cg("", ""))).unwrap();
    let e = softgpu::frontend::cg::compile_cg(&cg_path).unwrap_err();
    assert!(e.message.contains("includes"), "{e}");
    assert!(e.file.ends_with(".h") && e.line > 0, "{e}");

    let slang_path = include_bomb(dir.path(), "slang");
    let text = slang("#include \"b0.h\"", "", "");
    std::fs::write(&slang_path, text).unwrap();
    let e = compile_slang(&slang_path).unwrap_err();
    assert!(e.message.contains("includes"), "{e}");
    assert!(e.file.ends_with(".h") && e.line > 0, "{e}");
}

#[test]
fn deeply_nested_slang_is_refused_before_glslang() {
    let dir = tempfile::tempdir().unwrap();
    // Long left-associative chains (`sum`, `swizzles`) are glslang's to take: its parser keeps
    // its own stack, and the tree it builds is walked on the frontend thread.
    for (what, body) in deep_bodies(100_000, "vec4") {
        if matches!(what, "sum" | "swizzles") {
            continue;
        }
        let result = compile_slang_text(dir.path(), &slang("", "", &body));
        let e = result.expect_err(what);
        assert!(e.file.ends_with("hostile.slang"), "{what}: {e}");
        assert_eq!(e.line, 13, "{what}: {e}");
    }
    let e = refused(
        compile_slang_text(
            dir.path(),
            &slang("", "", &deep_bodies(100_000, "vec4")[0].1),
        ),
        "hostile.slang",
        "nested more than",
    );
    assert_eq!(e.line, 13, "{e}");
}

#[test]
fn slang_nested_below_the_limit_compiles() {
    let dir = tempfile::tempdir().unwrap();
    for (what, body) in deep_bodies(MAX_NESTING_DEPTH / 4, "vec4") {
        if let Err(e) = compile_slang_text(dir.path(), &slang("", "", &body)) {
            panic!("{what}: {e}");
        }
    }
}

#[test]
fn slang_macro_bombs_are_refused_before_glslang() {
    let dir = tempfile::tempdir().unwrap();
    let mut doubling = String::from("#define A0 x");
    for i in 1..=30 {
        doubling.push_str(&format!("\n#define A{i} A{} + A{}", i - 1, i - 1));
    }
    let e = refused(
        compile_slang_text(dir.path(), &slang(&doubling, "", "x = A30;")),
        "hostile.slang",
        "expands to more than",
    );
    assert!(e.line > 2, "{e}");
}

#[test]
fn slang_call_chains_and_huge_arrays_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut globals = String::from("float f0(float a) { return a; }\n");
    for i in 1..300 {
        globals.push_str(&format!(
            "float f{i}(float a) {{ return f{}(a) + 1.0; }}\n",
            i - 1
        ));
    }
    let e = compile_slang_text(dir.path(), &slang("", &globals, "x = f299(x);")).unwrap_err();
    assert!(e.message.contains("calls nested more than"), "{e}");
    let e = compile_slang_text(
        dir.path(),
        &slang(
            "",
            "float big[10000000];",
            "big[int(params.u)] = 1.0; x = big[int(params.u)];",
        ),
    )
    .unwrap_err();
    assert!(e.message.contains("registers"), "{e}");
}

#[test]
fn multi_byte_characters_in_directive_lines_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("inc.h"),
        "float helper(float a) { return a; }\n",
    )
    .unwrap();
    let lines = [
        "#include \"inc.h\"",
        "#pragma include_optional \"inc.h\"",
        "#pragma parameter P \"desc\" 0.5 0.0 1.0 0.1",
        "#pragma name N",
        "#pragma format R8G8B8A8_UNORM",
        "#pragma stage fragment",
    ];
    for line in lines {
        for at in 0..=line.len() {
            for insert in ["°", "€", "𝄞"] {
                let mutated = format!("{}{insert}{}", &line[..at], &line[at..]);
                let cg_text = format!("{mutated}\n{}", cg("", ""));
                let _ = compile_cg_str(&cg_text, &dir.path().join("m.cg"));
                let path = dir.path().join("m.slang");
                std::fs::write(&path, slang(&mutated, "", "")).unwrap();
                let _ = softgpu::frontend::vulkan_glsl::preprocess_file(&path);
            }
        }
    }
}

#[test]
fn deeply_nested_wgsl_is_refused_and_huge_arrays_too() {
    let deep = wgsl_fragment(
        "",
        &format!("x = {}x{};", "(".repeat(100_000), ")".repeat(100_000)),
    );
    let e = refused(compile_wgsl(&deep), "hostile.wgsl", "nested more than");
    assert_eq!(e.line, 3, "{e}");
    let big = wgsl_fragment(
        "var<private> big: array<f32, 10000000>;",
        "big[i32(x)] = 1.0; x = big[i32(x)];",
    );
    let e = compile_wgsl(&big).unwrap_err();
    assert!(e.message.contains("registers"), "{e}");
}

#[test]
fn fifty_nested_loops_compile_in_every_frontend() {
    // Loops bounded by a uniform do not unroll; trying them once cost exponential time in
    // their nesting. A regression hangs this test.
    let n = 50;
    let open = |i: usize, bound: &str| format!("for (int i{i} = 0; i{i} < {bound}; i{i}++) {{ ");
    let cg_loops: String = (0..n).map(|i| open(i, "int(u)")).collect();
    let body = format!("{cg_loops}x += 1.0;{}", " }".repeat(n));
    compile_cg(&cg("", &body)).unwrap();
    let slang_loops: String = (0..n).map(|i| open(i, "int(params.u)")).collect();
    let body = format!("{slang_loops}x += 1.0;{}", " }".repeat(n));
    let dir = tempfile::tempdir().unwrap();
    compile_slang_text(dir.path(), &slang("", "", &body)).unwrap();
}

/// A fragment program with `decls` and `body` (instructions without numbers) and `END`.
fn tgsi(decls: &str, body: &[String]) -> String {
    let mut text = format!("FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\n{decls}");
    for (i, inst) in body.iter().chain(["END".to_string()].iter()).enumerate() {
        text.push_str(&format!("{i:3}: {inst}\n"));
    }
    text
}

fn tgsi_refused(text: &str, expected: &str) {
    let errors = parse_and_validate(text).expect_err("the program must be refused");
    assert!(
        errors.iter().any(|e| e.contains(expected)),
        "expected `{expected}` in {errors:?}"
    );
}

#[test]
fn tgsi_register_indices_past_the_limit_are_refused() {
    for decl in [
        "DCL IN[100000000], GENERIC[1], PERSPECTIVE\n",
        "DCL OUT[0..100000000], GENERIC[1]\n",
        "DCL TEMP[0..100000000]\n",
        "DCL ADDR[100000000]\n",
    ] {
        tgsi_refused(
            &tgsi(decl, &["MOV OUT[0], IN[0]".into()]),
            &format!("must stay below {MAX_REGISTERS}"),
        );
    }
    let last = MAX_REGISTERS - 1;
    parse_and_validate(&tgsi(
        &format!("DCL TEMP[0..{last}]\n"),
        &[
            format!("MOV TEMP[{last}], IN[0]"),
            format!("MOV OUT[0], TEMP[{last}]"),
        ],
    ))
    .unwrap();
}

#[test]
fn tgsi_nesting_labels_and_recursion_are_checked() {
    let n = 100_000;
    let mut body = vec!["IF IN[0].xxxx :0".to_string(); n];
    body.push("MOV OUT[0], IN[0]".into());
    body.extend(vec!["ENDIF".to_string(); n]);
    tgsi_refused(&tgsi("", &body), &format!("nested more than {MAX_NESTING}"));
    let mut body = vec!["BGNLOOP :0".to_string(); MAX_NESTING];
    body.push("BRK".into());
    body.extend(vec!["ENDLOOP :0".to_string(); MAX_NESTING]);
    parse_and_validate(&tgsi("", &body)).unwrap();

    tgsi_refused(
        &tgsi("", &["BRA :99999".into(), "MOV OUT[0], IN[0]".into()]),
        "label must be an instruction index below 3",
    );
    let recursive = "FRAG\nDCL OUT[0], COLOR\n  0: CAL :2\n  1: END\n  2: BGNSUB\n  3: CAL :5\n\
                     4: ENDSUB\n  5: BGNSUB\n  6: CAL :2\n  7: ENDSUB\n";
    tgsi_refused(recursive, "is recursive");
    let calls = "FRAG\nDCL OUT[0], COLOR\n  0: CAL :2\n  1: END\n  2: BGNSUB\n  3: CAL :5\n\
                 4: ENDSUB\n  5: BGNSUB\n  6: RET\n  7: ENDSUB\n";
    parse_and_validate(calls).unwrap();
}

#[test]
fn tgsi_with_many_declarations_validates_in_reasonable_work() {
    // Overlap and declaration lookups are sorted, not pairwise: 200,000 declarations and as
    // many operands.
    let n = 200_000;
    let decls: String = (0..n).map(|i| format!("DCL TEMP[{i}]\n")).collect();
    let body: Vec<String> = (0..n)
        .map(|i| format!("MOV TEMP[{i}], IN[0]"))
        .chain(["MOV OUT[0], TEMP[7]".to_string()])
        .collect();
    parse_and_validate(&tgsi(&decls, &body)).unwrap();
    let overlapping = format!("{decls}DCL TEMP[5..9]\n");
    tgsi_refused(
        &tgsi(&overlapping, &body),
        "overlaps an earlier declaration",
    );
}

#[test]
#[ignore = "needs SLANG_SHADERS_DIR pointing at a libretro/slang-shaders checkout"]
fn corpus_slang_shaders_pass_the_prescans() {
    let dir = std::env::var("SLANG_SHADERS_DIR").expect("set SLANG_SHADERS_DIR");
    let files = files_support::files_with_extension(Path::new(&dir), "slang");
    assert!(!files.is_empty(), "no .slang files under {dir}");
    let mut refused = Vec::new();
    for file in &files {
        let Ok(pre) = softgpu::frontend::vulkan_glsl::preprocess_file(file) else {
            continue;
        };
        for stage in [&pre.vertex, &pre.fragment] {
            let at = |line, message| stage.line_map.error(line, message);
            if let Err(e) = check_nesting(&stage.text, at).and(check_macro_growth(&stage.text, at))
            {
                refused.push(e.to_string());
            }
        }
    }
    println!("{} files checked", files.len());
    assert!(refused.is_empty(), "{refused:#?}");
}
