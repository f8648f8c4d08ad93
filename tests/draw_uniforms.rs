//! `softgpu draw --uniform NAME=…` / `--push-consts`: push-constant and uniform-buffer members
//! set by their reflected names draw exactly what the same shader draws with the values baked
//! in, other values draw something else, and every misuse is one clear error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn refs(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("reference-images/frontends/push_constants")
        .join(name)
}

const PUSH_BLOCK: &str = "layout(push_constant) uniform Push
{
   vec4 Tint;
   vec2 Shift;
   float Mix;
   int Bands;
   vec2 Center;
} params;";

/// The values the baked variant compiles in, as `--uniform` arguments.
const VALUES: [&str; 5] = [
    "params.Tint=0.9,0.3,0.1,1",
    "Shift=0.125,-0.0625",
    "Push.Mix=0.6",
    "params.Bands=5",
    "params.Center=0.4,0.55",
];

const BAKED: &str = "struct PushValues { vec4 Tint; vec2 Shift; float Mix; int Bands; vec2 Center; };
const PushValues params = PushValues(vec4(0.9, 0.3, 0.1, 1.0), vec2(0.125, -0.0625), 0.6, 5, vec2(0.4, 0.55));";

fn softgpu(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(args)
        .output()
        .expect("softgpu runs")
}

fn draw_args(shader: &Path, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "draw",
        "--vs",
        &shader.display().to_string(),
        "--fs",
        &shader.display().to_string(),
        "--vertices",
        &refs("vertices.txt").display().to_string(),
        "--consts",
        &refs("consts.txt").display().to_string(),
        "--texture",
        &format!("1={}", refs("tex0.png").display()),
        "--size",
        "32x32",
        "--out",
        &out.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn pixels(path: &Path) -> Vec<u8> {
    image::open(path).unwrap().to_rgba8().into_raw()
}

fn draw_ok(args: &[String]) {
    let out = softgpu(args);
    assert!(
        out.status.success(),
        "{args:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn uniform_flags(values: &[&str]) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| ["--uniform".to_string(), v.to_string()])
        .collect()
}

#[test]
fn push_constants_set_by_name_match_the_baked_shader() {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(refs("shader.slang")).unwrap();
    assert!(source.contains(PUSH_BLOCK));
    let baked = dir.path().join("baked.slang");
    std::fs::write(&baked, source.replace(PUSH_BLOCK, BAKED)).unwrap();

    let want = dir.path().join("baked.png");
    draw_ok(&draw_args(&baked, &want, &[]));
    let got = dir.path().join("uniform.png");
    let flags = uniform_flags(&VALUES);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    draw_ok(&draw_args(&refs("shader.slang"), &got, &flags));
    assert_eq!(pixels(&got), pixels(&want), "--uniform vs baked values");

    // The same block as a raw push-constant file (std430: Tint 0, Shift 16, Mix 24, Bands 28,
    // Center 32).
    let raw = dir.path().join("push.txt");
    std::fs::write(&raw, "0.9 0.3 0.1 1\n0.125 -0.0625 0.6 0x5\n0.4 0.55 0 0\n").unwrap();
    let from_file = dir.path().join("file.png");
    draw_ok(&draw_args(
        &refs("shader.slang"),
        &from_file,
        &["--push-consts", &raw.display().to_string()],
    ));
    assert_eq!(
        pixels(&from_file),
        pixels(&want),
        "--push-consts vs baked values"
    );

    // A different value shows: the test can fail.
    let other = dir.path().join("other.png");
    let mut changed = VALUES.to_vec();
    changed[3] = "params.Bands=3";
    let flags = uniform_flags(&changed);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    draw_ok(&draw_args(&refs("shader.slang"), &other, &flags));
    assert_ne!(pixels(&other), pixels(&want));
}

fn draw_err(extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = softgpu(&draw_args(
        &refs("shader.slang"),
        &dir.path().join("x.png"),
        extra,
    ));
    assert_eq!(out.status.code(), Some(1), "{extra:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn unknown_member_lists_the_members() {
    let e = draw_err(&["--uniform", "params.Tnt=1,2,3,4"]);
    assert!(
        e.contains("params.Tnt")
            && e.contains("no such uniform")
            && e.contains("params.Tint (vec4)")
            && e.contains("global.MVP (mat4)"),
        "{e}"
    );
}

#[test]
fn wrong_component_count_names_the_type() {
    let e = draw_err(&["--uniform", "params.Center=1,2,3"]);
    assert!(
        e.contains("params.Center") && e.contains("vec2 takes 2 value(s), found 3"),
        "{e}"
    );
    let e = draw_err(&["--uniform", "MVP=1,0,0,0"]);
    assert!(e.contains("mat4 takes 16 value(s), found 4"), "{e}");
}

#[test]
fn bad_values_and_syntax_are_errors() {
    let e = draw_err(&["--uniform", "params.Bands=2.5"]);
    assert!(
        e.contains("expected a signed integer") && e.contains("`2.5`"),
        "{e}"
    );
    let e = draw_err(&["--uniform", "params.Mix"]);
    assert!(e.contains("expected NAME=v1,v2"), "{e}");
    let e = draw_err(&["--uniform", "params.Tint[9]=1"]);
    assert!(e.contains("no such uniform"), "{e}");
}

#[test]
fn members_of_arrays_and_matrix_columns_are_addressable() {
    // MVP[3] is the translation column: moving the quad off screen leaves the picture empty.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("moved.png");
    let mut flags = uniform_flags(&VALUES);
    flags.extend(["--uniform".to_string(), "global.MVP[3]=5,5,0,1".to_string()]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    draw_ok(&draw_args(&refs("shader.slang"), &out, &flags));
    assert!(pixels(&out).iter().all(|&b| b == 0));
}

#[test]
fn tgsi_shaders_have_no_names_to_set() {
    let dir = tempfile::tempdir().unwrap();
    let vs = dir.path().join("vs.tgsi");
    std::fs::write(
        &vs,
        "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: END\n",
    )
    .unwrap();
    let fs = dir.path().join("fs.tgsi");
    std::fs::write(
        &fs,
        "FRAG\nDCL OUT[0], COLOR\nDCL CONST[0]\n  0: MOV OUT[0], CONST[0]\n  1: END\n",
    )
    .unwrap();
    let v = dir.path().join("v.txt");
    std::fs::write(&v, "-1 -1 0 1\n3 -1 0 1\n-1 3 0 1\n").unwrap();
    let args = |extra: &[&str]| {
        let mut a: Vec<String> = ["draw", "--vs"].iter().map(|s| s.to_string()).collect();
        a.push(vs.display().to_string());
        a.push("--fs".into());
        a.push(fs.display().to_string());
        a.push("--vertices".into());
        a.push(v.display().to_string());
        a.push("--out".into());
        a.push(dir.path().join("o.png").display().to_string());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let out = softgpu(&args(&["--uniform", "x=1"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no uniform or push-constant members"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p = dir.path().join("p.txt");
    std::fs::write(&p, "1 2 3 4\n").unwrap();
    let out = softgpu(&args(&["--push-consts", &p.display().to_string()]));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("neither shader has a push-constant block"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn std140_mat2_member_set_by_name_lands_in_padded_columns() {
    let dir_refs =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("reference-images/frontends/std140_mat2");
    let dir = tempfile::tempdir().unwrap();
    let consts = std::fs::read_to_string(dir_refs.join("consts.txt")).unwrap();
    // Rows 5 and 6 are warp.ROT's columns: zero them and set the matrix by name instead.
    let mut rows: Vec<&str> = consts
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    assert_eq!(rows[5], "0.800000011920929 0.6000000238418579 0.0 0.0");
    rows[5] = "0 0 0 0";
    rows[6] = "0 0 0 0";
    let zeroed = dir.path().join("zeroed.txt");
    std::fs::write(&zeroed, rows.join("\n")).unwrap();
    let run = |consts: &Path, extra: &[&str], out: &Path| {
        let mut args: Vec<String> = vec![
            "draw".into(),
            "--vs".into(),
            dir_refs.join("shader.slang").display().to_string(),
            "--fs".into(),
            dir_refs.join("shader.slang").display().to_string(),
            "--vertices".into(),
            dir_refs.join("vertices.txt").display().to_string(),
            "--consts".into(),
            consts.display().to_string(),
            "--texture".into(),
            format!("1={}", dir_refs.join("tex0.png").display()),
            "--size".into(),
            "32x32".into(),
            "--out".into(),
            out.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        draw_ok(&args);
        pixels(out)
    };
    let want = run(&dir_refs.join("consts.txt"), &[], &dir.path().join("a.png"));
    let got = run(
        &zeroed,
        &["--uniform", "global.warp.ROT=0.8,0.6,-0.6,0.8"],
        &dir.path().join("b.png"),
    );
    assert_eq!(got, want);
    let zero = run(&zeroed, &[], &dir.path().join("c.png"));
    assert_ne!(zero, want);
}

/// Writes `text` to `dir/name` and returns the path.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn plain_draw(shader: &Path, vertices: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<String> = vec![
        "draw".into(),
        "--vs".into(),
        shader.display().to_string(),
        "--fs".into(),
        shader.display().to_string(),
        "--vertices".into(),
        vertices.display().to_string(),
        "--size".into(),
        "8x8".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    softgpu(&args)
}

#[test]
fn a_name_in_two_blocks_must_be_qualified() {
    let dir = tempfile::tempdir().unwrap();
    let shader = write(
        dir.path(),
        "twice.slang",
        "#version 450\nlayout(std140, set = 0, binding = 0) uniform UBO { vec4 Scale; } global;\nlayout(push_constant) uniform Push { vec4 Scale; } params;\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\nvoid main() { gl_Position = Position; }\n#pragma stage fragment\nlayout(location = 0) out vec4 FragColor;\nvoid main() { FragColor = global.Scale * params.Scale; }\n",
    );
    let v = write(dir.path(), "v.txt", "-1 -1 0 1\n3 -1 0 1\n-1 3 0 1\n");
    let out = dir.path().join("o.png");
    let r = plain_draw(&shader, &v, &out, &["--uniform", "Scale=1,1,1,1"]);
    assert_eq!(r.status.code(), Some(1));
    let e = String::from_utf8_lossy(&r.stderr);
    assert!(
        e.contains("ambiguous")
            && e.contains("uniform buffer `global`")
            && e.contains("push-constant block `params`"),
        "{e}"
    );
    // Qualified, both are set: 0.5 * 0.5 = 0.25 → 64/255.
    let r = plain_draw(
        &shader,
        &v,
        &out,
        &[
            "--uniform",
            "global.Scale=0.5,1,0,1",
            "--uniform",
            "Push.Scale=0.5,0.5,1,1",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(&pixels(&out)[..4], &[64, 128, 0, 255]);
}

#[test]
fn wgsl_uniform_members_are_set_by_name_too() {
    let dir = tempfile::tempdir().unwrap();
    let shader = write(
        dir.path(),
        "u.wgsl",
        "struct Light { color: vec4f, gain: f32 }\nstruct U { lights: array<Light, 2>, pick: u32 }\n@group(0) @binding(0) var<uniform> u: U;\n@vertex fn vs(@location(0) p: vec4f) -> @builtin(position) vec4f { return p; }\n@fragment fn fs() -> @location(0) vec4f { let l = u.lights[u.pick]; return l.color * l.gain; }\n",
    );
    let v = write(dir.path(), "v.txt", "-1 -1 0 1\n3 -1 0 1\n-1 3 0 1\n");
    let out = dir.path().join("o.png");
    let r = plain_draw(
        &shader,
        &v,
        &out,
        &[
            "--uniform",
            "u.lights[1].color=1,0.5,0.25,1",
            "--uniform",
            "lights[1].gain=0.5",
            "--uniform",
            "pick=1",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(&pixels(&out)[..4], &[128, 64, 32, 128]);
    let r = plain_draw(&shader, &v, &out, &["--uniform", "pick=-1"]);
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("expected an unsigned integer"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
}
