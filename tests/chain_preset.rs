//! RetroArch preset parser: every key and spelling, `#reference` chains, wildcards, error
//! messages, robustness against mutated input, and (ignored) the real corpora:
//!
//! ```text
//! SLANG_SHADERS_DIR=/tmp/slang-shaders cargo test --test chain_preset -- --ignored --nocapture
//! CG_SHADERS_DIR=/tmp/common-shaders   cargo test --test chain_preset -- --ignored --nocapture
//! ```
//!
//! `librashader_parity` (also ignored, needs `SLANG_SHADERS_DIR` and `librashader-cli` on PATH or
//! in `LIBRASHADER_CLI`) parses every corpus preset with both parsers and counts the fields that
//! differ; `PARITY_VERBOSE=1` prints each difference. The known differences are the places this
//! parser follows RetroArch (see `src/chain/preset/`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod files_support;
use files_support::files_with_extension;

use softgpu::chain::preset::{
    load_preset, parse_preset_str, FilterMode, ParameterValue, Preset, PresetError, Scale2D,
    ScaleFactor, ScaleType, Scaling, WildcardContext, WrapMode,
};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/presets")
        .join(rel)
}

fn load(rel: &str) -> Preset {
    load_preset(&data(rel), &WildcardContext::new())
        .unwrap_or_else(|e| panic!("{rel} should parse: {e}"))
}

/// Parses `text` as the (nonexistent) file /virtual/p.slangp.
fn parse(text: &str) -> Result<Preset, PresetError> {
    parse_preset_str(
        text,
        Path::new("/virtual/p.slangp"),
        &WildcardContext::new(),
    )
}

fn parse_err(text: &str) -> String {
    match parse(text) {
        Ok(p) => panic!("expected an error, parsed {p:?}"),
        Err(e) => e.to_string(),
    }
}

fn scaling(scale_type: ScaleType, factor: ScaleFactor) -> Scaling {
    Scaling { scale_type, factor }
}

#[test]
fn every_pass_key_and_spelling() {
    let p = load("keys/all_keys.slangp");
    let dir = data("shaders");
    assert_eq!(p.passes.len(), 4);
    assert_eq!(p.root, data("keys/all_keys.slangp"));

    let p0 = &p.passes[0];
    assert_eq!(p0.index, 0);
    assert_eq!(p0.shader, dir.join("pass0.slang"));
    assert_eq!(p0.alias.as_deref(), Some("FirstPass"));
    assert_eq!(p0.filter, Some(FilterMode::Linear));
    assert_eq!(p0.wrap_mode, WrapMode::ClampToEdge);
    assert_eq!(p0.frame_count_mod, 60);
    assert!(p0.srgb_framebuffer && !p0.float_framebuffer && p0.mipmap_input);
    let two = scaling(ScaleType::Source, ScaleFactor::Float(2.0));
    assert_eq!(
        p0.scale,
        Scale2D {
            valid: true,
            x: two,
            y: two
        }
    );

    let p1 = &p.passes[1];
    assert_eq!(
        p1.shader,
        dir.join("pass 1.slang"),
        "quoted path with a space"
    );
    assert_eq!(p1.alias, None);
    assert_eq!(p1.filter, Some(FilterMode::Nearest), "filter_linear1 = 0");
    assert_eq!(p1.wrap_mode, WrapMode::Repeat, "repeat_modeN spelling");
    assert!(p1.float_framebuffer && !p1.srgb_framebuffer && !p1.mipmap_input);
    assert_eq!(p1.frame_count_mod, 0);
    assert_eq!(
        p1.scale,
        Scale2D {
            valid: true,
            x: scaling(ScaleType::Absolute, ScaleFactor::Absolute(320)),
            y: scaling(ScaleType::Viewport, ScaleFactor::Float(0.5)),
        }
    );

    let p2 = &p.passes[2];
    assert_eq!(p2.filter, None, "absent filter_linear2");
    assert_eq!(p2.wrap_mode, WrapMode::MirroredRepeat, "texture_wrap_modeN");
    assert_eq!(
        p2.frame_count_mod, 8,
        "strtoul base detection: 010 is octal"
    );
    let abs = scaling(ScaleType::Absolute, ScaleFactor::Absolute(256));
    assert_eq!(
        p2.scale,
        Scale2D {
            valid: true,
            x: abs,
            y: abs
        },
        "0x100 pixels on both axes"
    );

    // scale3 wins over scale_y3; the axis without a type is `source`.
    let p3 = &p.passes[3];
    assert_eq!(p3.wrap_mode, WrapMode::ClampToBorder);
    assert_eq!(
        p3.scale,
        Scale2D {
            valid: true,
            x: scaling(ScaleType::Source, ScaleFactor::Float(3.0)),
            y: scaling(ScaleType::Original, ScaleFactor::Float(3.0)),
        }
    );

    let luts = data("luts");
    let names: Vec<&str> = p.textures.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["LutA", "LutB", "LutC"]);
    let a = &p.textures[0];
    assert_eq!(a.path, luts.join("a.png"));
    assert_eq!(
        (a.filter, a.mipmap, a.wrap_mode),
        (FilterMode::Nearest, true, WrapMode::Repeat)
    );
    let b = &p.textures[1];
    assert_eq!(b.path, luts.join("b b.png"));
    assert_eq!(
        (b.filter, b.mipmap, b.wrap_mode),
        (FilterMode::Linear, false, WrapMode::MirroredRepeat)
    );
    let c = &p.textures[2];
    assert_eq!(
        (c.filter, c.mipmap, c.wrap_mode),
        (FilterMode::Linear, false, WrapMode::ClampToBorder),
        "LUT defaults: linear, no mipmap, clamp to border"
    );

    assert_eq!(
        p.parameters,
        vec![
            ParameterValue {
                name: "P_ONE".into(),
                value: 0.25
            },
            ParameterValue {
                name: "P_TWO".into(),
                value: 7.0
            },
            ParameterValue {
                name: "UNLISTED".into(),
                value: -15.0
            },
        ]
    );
}

#[test]
fn crlf_bom_comments_and_block_comments() {
    let p = load("keys/crlf_bom.slangp");
    assert_eq!(p.passes.len(), 1);
    assert_eq!(p.passes[0].shader, data("keys/a.slang"));
    assert_eq!(p.passes[0].filter, Some(FilterMode::Linear));
    assert_eq!(p.passes[0].scale.x.scale_type, ScaleType::Viewport);
    assert!(p.parameters.is_empty(), "`comment = 3` sits inside /* */");
}

#[test]
fn lexing_details() {
    let p = parse(concat!(
        "shaders=\"2\";\n",
        "shader0=a.slang\n",
        "shader1 = b.slang # trailing comment\n",
        "shader1 = ignored.slang\n", // first assignment wins, as in RetroArch
        "scale_type0 = viewport;\n",
        "scale0 = 1.0;\n",
        "filter_linear1 = \"true\"\"\n",
        "wrap_mode1 = bogus\n",
        "   # indented comment\n",
        "garbage line without equals\n",
        "X = 1.5//comment\n",
        "Y = \"2.5\"/* block\n",
        "Z = 9 */\n",
        "W = 4 /* inline */\n",
        "not a key = 3\n",
    ))
    .unwrap();
    assert_eq!(p.passes[0].shader, Path::new("/virtual/a.slang"));
    assert_eq!(p.passes[1].shader, Path::new("/virtual/b.slang"));
    assert_eq!(p.passes[0].scale.x.factor, ScaleFactor::Float(1.0));
    assert_eq!(p.passes[1].filter, Some(FilterMode::Linear));
    assert_eq!(p.passes[1].wrap_mode, WrapMode::ClampToBorder);
    assert_eq!(p.parameter("X"), Some(1.5));
    assert_eq!(p.parameter("Y"), Some(2.5));
    assert_eq!(p.parameter("Z"), None);
    assert_eq!(p.parameter("W"), Some(4.0));
    assert_eq!(p.parameters.len(), 3);
}

/// A parameter assigned twice in one file keeps its first value, as RetroArch's entry map does;
/// librashader keeps the last. Mega Bezel's `MBZ__2__ADV-GLASS__MEGATRON-NTSC` sets
/// `HSM_REFLECT_GLOBAL_AMOUNT` to 35 and then 7, which is its whole difference from the peer.
#[test]
fn duplicate_parameter_first_assignment_wins() {
    let p = parse(concat!(
        "shaders = 1\n",
        "shader0 = a.slang\n",
        "GLOW = \"35.0\"\n",
        "OTHER = 2\n",
        "GLOW = \"7.0\"\n",
    ))
    .unwrap();
    assert_eq!(p.parameter("GLOW"), Some(35.0));
    assert_eq!(p.parameter("OTHER"), Some(2.0));
    assert_eq!(p.parameters.len(), 2);
}

#[test]
fn booleans_scale_and_paths() {
    let p = parse(concat!(
        "shaders = 3\n",
        "shader0 = ./x/../y/a.slang\n",
        "shader1 = sub\\b.slang\n",
        "shader2 = /abs/c.slang\n",
        "mipmap_input0 = true;\n",
        "srgb_framebuffer0 = 1\n",
        "float_framebuffer1 = false\n",
        "scale_x0 = 3\n", // no scale type: not read (RetroArch)
        "scale_type_x1 = viewport\n",
        "scale_x1 = 0.5\n",
        "scale_y1 = 9\n",
        "scale_type2 = absolute\n",
        "scale_x2 = 2.9\n",
        "scale_y2 = 7\n",
    ))
    .unwrap();
    assert_eq!(p.passes[0].shader, Path::new("/virtual/y/a.slang"));
    assert_eq!(p.passes[1].shader, Path::new("/virtual/sub/b.slang"));
    assert_eq!(p.passes[2].shader, Path::new("/abs/c.slang"));
    assert!(p.passes[0].mipmap_input && p.passes[0].srgb_framebuffer);
    assert_eq!(p.passes[0].scale, Scale2D::default());
    assert!(!p.passes[0].scale.valid);
    assert_eq!(
        p.passes[1].scale,
        Scale2D {
            valid: true,
            x: scaling(ScaleType::Viewport, ScaleFactor::Float(0.5)),
            y: scaling(ScaleType::Source, ScaleFactor::Float(9.0)),
        }
    );
    assert_eq!(
        p.passes[2].scale,
        Scale2D {
            valid: true,
            x: scaling(ScaleType::Absolute, ScaleFactor::Absolute(2)),
            y: scaling(ScaleType::Absolute, ScaleFactor::Absolute(7)),
        }
    );
}

#[test]
fn cgp_presets_parse() {
    let p = load("cg/simple.cgp");
    assert_eq!(p.passes.len(), 2);
    assert_eq!(p.passes[0].shader, data("shaders/crt.cg"));
    assert_eq!(p.passes[0].filter, Some(FilterMode::Nearest));
    assert_eq!(
        p.passes[0].scale.x,
        scaling(ScaleType::Source, ScaleFactor::Float(2.0))
    );
    assert_eq!(p.textures.len(), 1);
    assert_eq!(p.textures[0].path, data("cg/bg.png"));
}

#[test]
fn reference_chain_with_overrides() {
    // top -> sub/mid -> base, plus a second, parameters-only reference.
    let p = load("refs/top.slangp");
    assert_eq!(p.path, data("refs/top.slangp"));
    assert_eq!(p.root, data("refs/base.slangp"));
    assert_eq!(p.passes.len(), 2);
    assert_eq!(p.passes[0].shader, data("shaders/base0.slang"));
    assert_eq!(
        p.passes[0].filter,
        Some(FilterMode::Linear),
        "pass keys of a referencing preset are ignored (RetroArch)"
    );
    assert_eq!(p.passes[1].scale.x.scale_type, ScaleType::Viewport);
    assert_eq!(p.textures[0].name, "Mask");
    assert_eq!(p.textures[0].path, data("refs/luts/mask.png"));
    assert_eq!(p.textures[0].filter, FilterMode::Nearest);
    assert_eq!(
        p.textures[1].path,
        data("refs/sub/noise_mid.png"),
        "LUT override resolves against the overriding preset"
    );
    assert_eq!(p.parameter("STRENGTH"), Some(0.9), "top overrides base");
    assert_eq!(
        p.parameter("GAMMA"),
        Some(2.6),
        "base 2.2 < mid 2.4 < params_only 2.6"
    );
    assert_eq!(p.parameter("BONUS"), Some(3.0));

    let mid = load("refs/sub/mid.slangp");
    assert_eq!(mid.parameter("GAMMA"), Some(2.4));
    assert_eq!(mid.parameter("STRENGTH"), Some(0.5));

    let only = load("refs/only_refs.slangp");
    assert_eq!(only.passes, mid.passes);
    assert_eq!(only.textures, mid.textures);
    assert_eq!(only.parameters, mid.parameters);
}

#[test]
fn reference_errors() {
    let e = load_preset(&data("refs/two_full.slangp"), &WildcardContext::new()).unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(
        e.to_string()
            .contains("only the first #reference may lead to a preset with passes"),
        "{e}"
    );

    let dir = tempfile::tempdir().unwrap();
    let w = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    w("a.slangp", "#reference \"b.slangp\"\n");
    w("b.slangp", "# b\n#reference \"a.slangp\"\n");
    let e = load_preset(&dir.path().join("a.slangp"), &WildcardContext::new()).unwrap_err();
    let a = dir.path().join("a.slangp");
    let b = dir.path().join("b.slangp");
    assert_eq!(e.file, b);
    assert_eq!(
        e.to_string(),
        format!(
            "{}:2: #reference cycle: {} -> {} -> {}",
            b.display(),
            a.display(),
            b.display(),
            a.display()
        )
    );

    // 16 hops are fine, 17 are not.
    for n in [16usize, 17] {
        let d = tempfile::tempdir().unwrap();
        for i in 0..n {
            std::fs::write(
                d.path().join(format!("r{i}.slangp")),
                format!("#reference \"r{}.slangp\"\nP{i} = {i}\n", i + 1),
            )
            .unwrap();
        }
        std::fs::write(
            d.path().join(format!("r{n}.slangp")),
            "shaders = 1\nshader0 = s.slang\n",
        )
        .unwrap();
        let r = load_preset(&d.path().join("r0.slangp"), &WildcardContext::new());
        if n == 16 {
            let p = r.unwrap();
            assert_eq!(p.parameter("P0"), Some(0.0));
            assert_eq!(p.parameter("P15"), Some(15.0));
        } else {
            let e = r.unwrap_err();
            assert_eq!(e.file, d.path().join("r16.slangp"));
            assert_eq!(
                e.to_string(),
                format!(
                    "{}:1: #reference chain is longer than 16 presets without reaching one with \
                     `shaders`",
                    d.path().join("r16.slangp").display()
                )
            );
        }
    }

    let e = parse_err("shaders = 1\nshader0 = a.slang\n\n#reference \"missing.slangp\"\n");
    assert!(
        e.starts_with(
            "/virtual/p.slangp:4: cannot read referenced preset /virtual/missing.slangp: "
        ),
        "{e}"
    );

    let e = load_preset(
        Path::new("/definitely/not/here.slangp"),
        &WildcardContext::new(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/definitely/not/here.slangp: cannot read preset: "),
        "{e}"
    );
    assert_eq!(e.line, None);
}

#[test]
fn error_messages_name_file_line_and_expectation() {
    let cases: &[(&str, &str)] = &[
        (
            "# nothing\nfoo = 1\n",
            "/virtual/p.slangp: no `shaders = N` line: a preset must declare its pass count",
        ),
        (
            "shaders = 3\nshader0 = a.slang\nshader2 = c.slang\n",
            "/virtual/p.slangp:1: `shaders = 3` declares passes 0 to 2 but there is no \
             `shader1` line",
        ),
        (
            "\nshaders = two\n",
            "/virtual/p.slangp:2: shaders: expected a pass count, found \"two\"",
        ),
        (
            "shaders = 5000\n",
            "/virtual/p.slangp:1: shaders: expected a pass count 1..=1024, found 5000",
        ),
        (
            "shaders = 0\n",
            "/virtual/p.slangp:1: shaders: expected a pass count 1..=1024, found 0",
        ),
        (
            "shaders = 1\nshader0 = \"\"\n",
            "/virtual/p.slangp:2: shader0: expected a shader path, found an empty value",
        ),
        (
            "shaders = 1\nshader0 = a.slang\nfilter_linear0 = yes\n",
            "/virtual/p.slangp:3: filter_linear0: expected true, false, 1 or 0, found \"yes\"",
        ),
        (
            "shaders = 1\nshader0 = a.slang\nscale_type0 = source\nscale0 = big\n",
            "/virtual/p.slangp:4: scale0: expected a non-negative number, found \"big\"",
        ),
        (
            "shaders = 1\nshader0 = a.slang\nscale_type_y0 = stretch\n",
            "/virtual/p.slangp:3: scale_type_y0: unknown scale type \"stretch\" (expected \
             source, viewport, absolute or original)",
        ),
        (
            "shaders = 1\nshader0 = a.slang\nscale_type0 = absolute\nscale_x0 = 1e9\n",
            "/virtual/p.slangp:4: scale_x0: expected a pixel count 0..=65536 for an absolute \
             scale, found \"1e9\"",
        ),
        (
            "shaders = 1\nshader0 = a.slang\nscale_type_x0 = absolute\n",
            "/virtual/p.slangp: pass 0: absolute scale needs `scale0` or `scale_x0` (pixels)",
        ),
        (
            "shaders = 1\nshader0 = a.slang\nframe_count_mod0 = -1\n",
            "/virtual/p.slangp:3: frame_count_mod0: expected an unsigned integer, found \"-1\"",
        ),
        (
            "shaders = 1\nshader0 = a.slang\ntextures = \"A;B\"\nA = a.png\n",
            "/virtual/p.slangp:3: texture \"B\" is listed in `textures` but there is no `B = \
             path` line",
        ),
        (
            "shaders = 1\nshader0 = a.slang\ntextures = A\nA = a.png\nA_mipmap = maybe\n",
            "/virtual/p.slangp:5: A_mipmap: expected true, false, 1 or 0, found \"maybe\"",
        ),
        (
            "shaders = 1\nshader0 = a.slang\n/* never\nclosed\n",
            "/virtual/p.slangp:3: `/*` comment is never closed with `*/`",
        ),
        (
            "#reference \"\"\n",
            "/virtual/p.slangp:1: #reference needs a preset path",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(&parse_err(text), want, "for preset:\n{text}");
    }
}

#[test]
fn wildcards_replace_only_when_the_file_exists() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    for f in [
        "shaders/snes9x/core.slang",
        "shaders/vulkan/drv.slang",
        "shaders/mypreset/named.slang",
        "shaders/presets/dir.slang",
        "shaders/CORE-REQ-ROT-90/rot.slang",
        "shaders/VID-FINAL-ROT-180/final.slang",
        "shaders/ext.slang",
        "luts/Zelda.png",
    ] {
        write(f, "");
    }
    write(
        "presets/mypreset.slangp",
        concat!(
            "shaders = 9\n",
            "shader0 = ../shaders/$CORE$/core.slang\n",
            "shader1 = ../shaders/$VID-DRV$/drv.slang\n",
            "shader2 = ../shaders/$PRESET$/named.slang\n",
            "shader3 = ../shaders/$PRESET-DIR$/dir.slang\n",
            "shader4 = ../shaders/$CORE-REQ-ROT$/rot.slang\n",
            "shader5 = ../shaders/$VID-FINAL-ROT$/final.slang\n",
            "shader6 = ../shaders/$GAME$/missing.slang\n",
            "shader7 = ../shaders/ext.$VID-DRV-SHADER-EXT$\n",
            "shader8 = ../shaders/$PRESET_DIR$/dir.slang\n",
            "textures = Art\n",
            "Art = ../luts/$GAME$.png\n",
        ),
    );
    write(
        "presets/user.slangp",
        "#reference \"mypreset.slangp\"\nX = 1\n",
    );
    write(
        "refs/snes9x.slangp",
        "#reference \"../presets/mypreset.slangp\"\nCORE_PARAM = 4\n",
    );
    write(
        "presets/by_core.slangp",
        "#reference \"../refs/$CORE$.slangp\"\n",
    );

    let mut wc = WildcardContext::new();
    wc.set("CORE", "snes9x");
    wc.set("GAME", "Zelda");
    wc.set("CORE-REQ-ROT", "90");
    wc.set("VID-USER-ROT", "90");
    let p = load_preset(&root.join("presets/mypreset.slangp"), &wc).unwrap();
    let s = |i: usize| p.passes[i].shader.clone();
    assert_eq!(s(0), root.join("shaders/snes9x/core.slang"));
    assert_eq!(
        s(1),
        root.join("shaders/vulkan/drv.slang"),
        "VID-DRV default"
    );
    assert_eq!(s(2), root.join("shaders/mypreset/named.slang"));
    assert_eq!(s(3), root.join("shaders/presets/dir.slang"));
    assert_eq!(s(4), root.join("shaders/CORE-REQ-ROT-90/rot.slang"));
    assert_eq!(
        s(5),
        root.join("shaders/VID-FINAL-ROT-180/final.slang"),
        "user 90 + allowed core 90"
    );
    assert_eq!(
        s(6),
        root.join("shaders/$GAME$/missing.slang"),
        "replaced path does not exist: original kept"
    );
    assert_eq!(s(7), root.join("shaders/ext.slang"));
    assert_eq!(
        s(8),
        root.join("shaders/presets/dir.slang"),
        "librashader's spelling"
    );
    assert_eq!(p.textures[0].path, root.join("luts/Zelda.png"));

    // $PRESET$ comes from the preset that names the path, not the loaded one (RetroArch).
    let p = load_preset(&root.join("presets/user.slangp"), &wc).unwrap();
    assert_eq!(
        p.passes[2].shader,
        root.join("shaders/mypreset/named.slang")
    );
    assert_eq!(p.parameter("X"), Some(1.0));

    // #reference paths take wildcards too.
    let p = load_preset(&root.join("presets/by_core.slangp"), &wc).unwrap();
    assert_eq!(p.parameter("CORE_PARAM"), Some(4.0));
    assert_eq!(p.root, root.join("presets/mypreset.slangp"));
    let err = load_preset(
        &root.join("presets/by_core.slangp"),
        &WildcardContext::new(),
    )
    .unwrap_err();
    assert_eq!(err.line, Some(1));
    assert!(
        err.to_string().contains("cannot read referenced preset"),
        "{err}"
    );
    assert!(err.to_string().contains("refs/$CORE$.slangp"), "{err}");

    // An empty context replaces nothing, not even the driver.
    let p = load_preset(
        &root.join("presets/mypreset.slangp"),
        &WildcardContext::empty(),
    )
    .unwrap();
    assert_eq!(p.passes[1].shader, root.join("shaders/$VID-DRV$/drv.slang"));
    assert_eq!(
        p.passes[3].shader,
        root.join("shaders/presets/dir.slang"),
        "derived per file"
    );
}

/// Deterministic xorshift generator for the mutation test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn mutated_presets_never_panic() {
    let seeds = [
        std::fs::read_to_string(data("keys/all_keys.slangp")).unwrap(),
        std::fs::read_to_string(data("refs/base.slangp")).unwrap(),
        std::fs::read_to_string(data("keys/crlf_bom.slangp")).unwrap(),
    ];
    let fragments = [
        "=",
        "\"",
        "#",
        "//",
        "/*",
        "*/",
        ";",
        "\n",
        "\r\n",
        "\u{feff}",
        "$CORE$",
        "$",
        "..",
        "/",
        "#reference ",
        "shaders = ",
        "999999999999",
        "-1",
        "0x",
        "1e39",
        "nan",
        "é",
        "\u{1F600}",
        "absolute",
        "scale_type0 = ",
        "scale0 = ",
        "textures = ",
        "shader7 = ",
        "\0",
        " ",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut ok, mut err) = (0, 0);
    for i in 0..3000 {
        let mut bytes: Vec<char> = seeds[i % seeds.len()].chars().collect();
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(bytes.len() + 1);
            match rng.below(4) {
                0 => {
                    let f = fragments[rng.below(fragments.len())];
                    bytes.splice(at..at, f.chars());
                }
                1 if at < bytes.len() => {
                    let end = (at + 1 + rng.below(12)).min(bytes.len());
                    bytes.drain(at..end);
                }
                2 if at < bytes.len() => {
                    bytes[at] = char::from(b' ' + rng.below(95) as u8);
                }
                _ => {
                    let f = fragments[rng.below(fragments.len())];
                    bytes.extend(f.chars());
                }
            }
        }
        let text: String = bytes.into_iter().collect();
        match parse_preset_str(&text, &data("keys/mutant.slangp"), &WildcardContext::new()) {
            Ok(p) => {
                assert!(p.passes.len() <= 1024);
                ok += 1;
            }
            Err(e) => {
                assert_eq!(e.file, data("keys/mutant.slangp"), "{e}");
                assert!(!e.message.is_empty());
                err += 1;
            }
        }
    }
    // Both outcomes must occur, or the mutations are not exercising anything.
    assert!(ok > 100 && err > 100, "ok {ok}, err {err}");
}

// ------------------------------------------------------------------------------------------
// Real corpora (ignored: not part of the repository)
// ------------------------------------------------------------------------------------------

/// Blanks paths, quoted text and numbers so that one cause in many presets counts once.
fn reason(e: &PresetError) -> String {
    let mut out = String::new();
    let mut quote = false;
    for c in e.message.chars() {
        if c == '"' {
            quote = !quote;
            out.push(c);
            if quote {
                out.push('…');
            }
        } else if quote {
        } else if c.is_ascii_digit() {
            if !out.ends_with('N') {
                out.push('N');
            }
        } else {
            out.push(c);
        }
    }
    out.chars().take(120).collect()
}

fn corpus(var: &str, ext: &str) {
    let Ok(dir) = std::env::var(var) else {
        eprintln!("{var} not set; skipping");
        return;
    };
    let files = files_with_extension(Path::new(&dir), ext);
    assert!(!files.is_empty(), "no .{ext} files under {dir}");
    let mut reasons: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut ok = 0;
    let (mut passes, mut luts, mut params, mut missing_shaders) = (0, 0, 0, 0);
    for f in &files {
        match load_preset(f, &WildcardContext::new()) {
            Ok(p) => {
                ok += 1;
                passes += p.passes.len();
                luts += p.textures.len();
                params += p.parameters.len();
                missing_shaders += p.passes.iter().filter(|s| !s.shader.exists()).count();
            }
            Err(e) => reasons.entry(reason(&e)).or_default().push(e.to_string()),
        }
    }
    eprintln!(
        "{ok}/{} .{ext} presets parse ({passes} passes, {luts} LUTs, {params} parameter values; \
         {missing_shaders} pass shader paths do not exist)",
        files.len()
    );
    let mut rs: Vec<_> = reasons.into_iter().collect();
    rs.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (r, v) in &rs {
        eprintln!("{:5}  {r}\n       e.g. {}", v.len(), v[0]);
    }
}

#[test]
#[ignore = "needs SLANG_SHADERS_DIR (libretro/slang-shaders checkout)"]
fn slang_shaders_corpus() {
    corpus("SLANG_SHADERS_DIR", "slangp");
}

#[test]
#[ignore = "needs CG_SHADERS_DIR (libretro/common-shaders checkout)"]
fn common_shaders_cgp_corpus() {
    corpus("CG_SHADERS_DIR", "cgp");
}

// ------------------------------------------------------------------------------------------
// Differential check against librashader (ignored: needs the corpus and librashader-cli)
// ------------------------------------------------------------------------------------------

fn lr_scaling(v: &serde_json::Value) -> Option<Scaling> {
    let scale_type = match v["scale_type"].as_str()? {
        "Input" => ScaleType::Source,
        "Absolute" => ScaleType::Absolute,
        "Viewport" => ScaleType::Viewport,
        "Original" => ScaleType::Original,
        _ => return None,
    };
    let f = &v["factor"];
    let factor = if let Some(x) = f.get("Float") {
        ScaleFactor::Float(x.as_f64()? as f32)
    } else {
        ScaleFactor::Absolute(u32::try_from(f.get("Absolute")?.as_i64()?).ok()?)
    };
    Some(Scaling { scale_type, factor })
}

fn wrap_name(w: WrapMode) -> &'static str {
    match w {
        WrapMode::ClampToBorder => "ClampToBorder",
        WrapMode::ClampToEdge => "ClampToEdge",
        WrapMode::Repeat => "Repeat",
        WrapMode::MirroredRepeat => "MirroredRepeat",
    }
}

fn filter_name(f: FilterMode) -> &'static str {
    match f {
        FilterMode::Nearest => "Nearest",
        FilterMode::Linear => "Linear",
    }
}

fn same_path(ours: &Path, theirs: Option<&str>) -> bool {
    // librashader keeps `..` components; compare where the files really are.
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    theirs.is_some_and(|t| canon(Path::new(t)) == canon(ours))
}

/// Every difference between our parse and librashader's, as (field, detail) pairs.
fn differences(p: &Preset, lr: &serde_json::Value) -> Vec<(String, String)> {
    let mut d = Vec::new();
    let mut diff = |field: &str, detail: String| d.push((field.to_string(), detail));
    let passes = lr["passes"].as_array().cloned().unwrap_or_default();
    if passes.len() != p.passes.len() {
        diff(
            "pass count",
            format!("ours {} librashader {}", p.passes.len(), passes.len()),
        );
        return d;
    }
    for (ours, theirs) in p.passes.iter().zip(&passes) {
        let m = &theirs["meta"];
        let i = ours.index;
        if !same_path(&ours.shader, theirs["path"].as_str()) {
            diff(
                "shader path",
                format!("pass {i}: {}", ours.shader.display()),
            );
        }
        // librashader keeps `alias = ""` as the two quote characters.
        let their_alias = m["alias"].as_str().filter(|a| *a != "\"\"");
        if their_alias != ours.alias.as_deref() {
            diff(
                "alias",
                format!("pass {i}: {:?} vs {}", ours.alias, m["alias"]),
            );
        }
        if m["filter"].as_str() != Some(filter_name(ours.filter.unwrap_or(FilterMode::Nearest))) {
            diff(
                "filter",
                format!("pass {i}: {:?} vs {}", ours.filter, m["filter"]),
            );
        }
        if m["wrap_mode"].as_str() != Some(wrap_name(ours.wrap_mode)) {
            diff(
                "wrap_mode",
                format!("pass {i}: {:?} vs {}", ours.wrap_mode, m["wrap_mode"]),
            );
        }
        if m["frame_count_mod"].as_u64() != Some(u64::from(ours.frame_count_mod)) {
            diff("frame_count_mod", format!("pass {i}"));
        }
        for (key, v) in [
            ("srgb_framebuffer", ours.srgb_framebuffer),
            ("float_framebuffer", ours.float_framebuffer),
            ("mipmap_input", ours.mipmap_input),
        ] {
            if m[key].as_bool() != Some(v) {
                diff(key, format!("pass {i}: {v} vs {}", m[key]));
            }
        }
        let s = &m["scaling"];
        if s["valid"].as_bool() != Some(ours.scale.valid) {
            diff("scale valid", format!("pass {i}"));
        } else if ours.scale.valid {
            for (axis, v) in [("x", ours.scale.x), ("y", ours.scale.y)] {
                if lr_scaling(&s[axis]) != Some(v) {
                    diff("scale", format!("pass {i} {axis}: {v:?} vs {}", s[axis]));
                }
            }
        }
    }
    // librashader lists a LUT once per file that names it; the last one wins at run time.
    let mut luts: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    for t in lr["textures"].as_array().into_iter().flatten() {
        if let Some(n) = t["meta"]["name"].as_str() {
            luts.insert(n.to_string(), t.clone());
        }
    }
    for t in &p.textures {
        let Some(theirs) = luts.remove(&t.name) else {
            diff("texture only here", t.name.clone());
            continue;
        };
        let m = &theirs["meta"];
        if !same_path(&t.path, theirs["path"].as_str()) {
            diff("texture path", format!("{}: {}", t.name, t.path.display()));
        }
        if m["filter_mode"].as_str() != Some(filter_name(t.filter))
            || m["wrap_mode"].as_str() != Some(wrap_name(t.wrap_mode))
            || m["mipmap"].as_bool() != Some(t.mipmap)
        {
            diff(
                "texture settings",
                format!(
                    "{}: filter {:?} wrap {:?} mipmap {} vs {m}",
                    t.name, t.filter, t.wrap_mode, t.mipmap
                ),
            );
        }
    }
    for name in luts.keys() {
        diff("texture only in librashader", name.clone());
    }
    let mut params: BTreeMap<String, f64> = BTreeMap::new();
    for v in lr["parameters"].as_array().into_iter().flatten() {
        if let (Some(n), Some(x)) = (v["name"].as_str(), v["value"].as_f64()) {
            params.insert(n.to_string(), x);
        }
    }
    for ours in &p.parameters {
        match params.remove(&ours.name) {
            None => diff("parameter only here", ours.name.clone()),
            Some(x) if x as f32 != ours.value => diff(
                "parameter value",
                format!("{}: {} vs {x}", ours.name, ours.value),
            ),
            Some(_) => {}
        }
    }
    for name in params.keys() {
        diff("parameter only in librashader", name.clone());
    }
    d
}

#[test]
#[ignore = "needs SLANG_SHADERS_DIR and librashader-cli (LIBRASHADER_CLI, default on PATH)"]
fn librashader_parity() {
    let Ok(dir) = std::env::var("SLANG_SHADERS_DIR") else {
        eprintln!("SLANG_SHADERS_DIR not set; skipping");
        return;
    };
    let cli = std::env::var("LIBRASHADER_CLI").unwrap_or_else(|_| "librashader-cli".into());
    let files = files_with_extension(Path::new(&dir), "slangp");
    let (mut same, mut both_fail, mut only_ours, mut only_theirs) = (0, 0, 0, 0);
    let mut fields: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut differing = 0;
    for f in &files {
        // librashader-cli adds only PRESET and PRESET_DIR, which `empty()` derives too.
        let ours = load_preset(f, &WildcardContext::empty());
        let out = std::process::Command::new(&cli)
            .args(["parse", "-p"])
            .arg(f)
            .output()
            .expect("run librashader-cli");
        let theirs: Option<serde_json::Value> = out
            .status
            .success()
            .then(|| serde_json::from_slice(&out.stdout).ok())
            .flatten();
        match (ours, theirs) {
            (Ok(p), Some(lr)) => {
                let d = differences(&p, &lr);
                if d.is_empty() {
                    same += 1;
                } else {
                    differing += 1;
                }
                let mut seen = std::collections::BTreeSet::new();
                for (field, detail) in d {
                    if seen.insert(field.clone()) {
                        let e = fields.entry(field.clone()).or_insert((0, String::new()));
                        e.0 += 1;
                        if e.1.is_empty() {
                            e.1 = format!("{}: {detail}", f.display());
                        }
                    }
                    if std::env::var_os("PARITY_VERBOSE").is_some() {
                        eprintln!("{field}: {}: {detail}", f.display());
                    }
                }
            }
            (Err(_), None) => both_fail += 1,
            (Err(e), Some(_)) => {
                only_theirs += 1;
                eprintln!("only librashader parses: {e}");
            }
            (Ok(_), None) => {
                only_ours += 1;
                eprintln!(
                    "only we parse {}: {}",
                    f.display(),
                    String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .last()
                        .unwrap_or("")
                );
            }
        }
    }
    eprintln!(
        "{} presets: {same} identical, {differing} differ, {both_fail} fail in both, \
         {only_ours} parse only here, {only_theirs} parse only in librashader",
        files.len()
    );
    for (field, (n, example)) in &fields {
        eprintln!("{n:5}  {field}\n       e.g. {example}");
    }
}
