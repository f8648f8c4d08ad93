//! WGSL → TGSI lowering: every lowered program validates, round-trips through the Mesa text
//! format, and computes on the reference interpreter what WGSL semantics require.

use softgpu::exec::{
    LodMode, NoTextures, QuadIo, QuadShader, QuadVec4, SampleRequest, ShaderResources,
    TextureAccess,
};
use softgpu::frontend::wgsl::{compile, Stage};
use softgpu::interp::Interpreter;
use softgpu::ir::{text, validate, Program, SemanticName, TextureTarget};

fn load(name: &str) -> String {
    let path = format!("{}/tests/data/wgsl/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Compiles, validates and round-trips a shader.
fn lower(src: &str, stage: Stage) -> Program {
    let l = compile(src, "test.wgsl", stage, None).unwrap_or_else(|e| panic!("{e}"));
    let printed = text::print_program(&l.program);
    if let Err(e) = validate::validate(&l.program) {
        panic!("invalid program: {e:?}\n{printed}");
    }
    let parsed = text::parse_program(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
    assert_eq!(parsed, l.program, "print/parse round trip\n{printed}");
    l.program
}

/// Per-lane `@location(0)` inputs (TL, TR, BL, BR): chosen to take different branches.
const LANES: [[f32; 4]; 4] = [
    [0.1, 0.7, 0.25, 0.9],
    [0.6, 0.2, 0.55, 0.35],
    [0.85, 0.85, 0.7, 0.05],
    [0.35, 0.0, 0.95, 0.6],
];

fn to_quad(lanes: &[[u32; 4]; 4]) -> QuadVec4 {
    std::array::from_fn(|c| std::array::from_fn(|l| lanes[l][c]))
}

fn fbits(lanes: &[[f32; 4]; 4]) -> [[u32; 4]; 4] {
    lanes.map(|v| v.map(f32::to_bits))
}

/// Runs a program on one quad; returns the output with `semantic` per lane and the killed mask.
fn run(
    program: &Program,
    inputs: &[(SemanticName, u32, [[u32; 4]; 4])],
    system_values: &[(SemanticName, [[u32; 4]; 4])],
    constants: &[Vec<[u32; 4]>],
    textures: &dyn TextureAccess,
    output: (SemanticName, u32),
) -> ([[u32; 4]; 4], u8) {
    let shader = Interpreter::new(program).expect("interpreter accepts the program");
    let sig = shader.signature().clone();
    let mut ins = vec![[[0u32; 4]; 4]; sig.num_inputs];
    for slot in &sig.inputs {
        let v = inputs
            .iter()
            .find(|(s, i, _)| *s == slot.semantic && *i == slot.semantic_index)
            .unwrap_or_else(|| panic!("no input for {:?}[{}]", slot.semantic, slot.semantic_index));
        ins[slot.register as usize] = to_quad(&v.2);
    }
    let mut svs = vec![[[0u32; 4]; 4]; sig.num_system_values];
    for slot in &sig.system_values {
        let v = system_values
            .iter()
            .find(|(s, _)| *s == slot.semantic)
            .unwrap_or_else(|| panic!("no system value {:?}", slot.semantic));
        svs[slot.register as usize] = to_quad(&v.1);
    }
    let mut outs = vec![[[0u32; 4]; 4]; sig.num_outputs];
    let consts: Vec<&[[u32; 4]]> = constants.iter().map(|c| c.as_slice()).collect();
    let res = ShaderResources {
        constants: &consts,
        textures,
        storage: Default::default(),
    };
    let killed = shader
        .shade_quad(
            &res,
            &mut QuadIo {
                inputs: &ins,
                system_values: &svs,
                outputs: &mut outs,
                live: 0xF,
            },
        )
        .expect("runs");
    let reg = sig
        .output(output.0, output.1)
        .unwrap_or_else(|| panic!("no output {output:?}"))
        .register as usize;
    let q = outs[reg];
    (
        std::array::from_fn(|l| std::array::from_fn(|c| q[c][l])),
        killed,
    )
}

/// Runs a fragment shader with `LANES` at `@location(0)` and returns COLOR[0] as floats.
fn run_fs(
    program: &Program,
    constants: &[Vec<[u32; 4]>],
    textures: &dyn TextureAccess,
) -> [[f32; 4]; 4] {
    let (out, killed) = run(
        program,
        &[(SemanticName::Generic, 0, fbits(&LANES))],
        &[],
        constants,
        textures,
        (SemanticName::Color, 0),
    );
    assert_eq!(killed, 0);
    out.map(|v| v.map(f32::from_bits))
}

fn check(got: &[[f32; 4]; 4], want: impl Fn(&[f32; 4]) -> [f32; 4], tol: f32, what: &str) {
    for (lane, input) in LANES.iter().enumerate() {
        let w = want(input);
        for c in 0..4 {
            let (g, e) = (got[lane][c], w[c]);
            let ok = (g - e).abs() <= tol * e.abs().max(1.0) || (g.is_nan() && e.is_nan());
            assert!(
                ok,
                "{what}: lane {lane} component {c}: got {g}, want {e} (all: {got:?})"
            );
        }
    }
}

/// The expected outputs of one lane, from its inputs.
type Expect = fn(&[f32; 4]) -> [f32; 4];

fn ivec(v: [i32; 4]) -> Vec<[u32; 4]> {
    vec![v.map(|x| x as u32)]
}

#[test]
fn float_arithmetic_and_swizzles() {
    let p = lower(&load("arith.wgsl"), Stage::Fragment);
    let got = run_fs(&p, &[], &NoTextures);
    check(
        &got,
        |&[x, y, z, w]| {
            let a = [x * 2.0 + z, y * 2.0 + w];
            let b = [-w / 2.0, -z / 4.0, -y / 8.0, -x / 0.5];
            let m = x - 0.75 * (x / 0.75).trunc();
            let s = [y - x, 0.0, y - z];
            [a[1] - a[0], b[0] + b[3], m, s[2] * s[0]]
        },
        1e-6,
        "arith",
    );
}

fn wgsl_div(a: i32, b: i32) -> i32 {
    if b == 0 || (a == i32::MIN && b == -1) {
        a
    } else {
        a / b
    }
}

fn wgsl_rem(a: i32, b: i32) -> i32 {
    if b == 0 || (a == i32::MIN && b == -1) {
        0
    } else {
        a % b
    }
}

#[test]
fn integer_arithmetic_follows_wgsl_division_rules() {
    let p = lower(&load("ints.wgsl"), Stage::Fragment);
    let got = run_fs(&p, &[], &NoTextures);
    check(
        &got,
        |v| {
            let i = v.map(|x| (x * 10.0) as i32);
            let u = v.map(|x| (x.abs() * 10.0) as u32);
            let d = wgsl_div(i[0] - 5, i[1]);
            let r = wgsl_rem(i[2], i[1]);
            let q = u[0].checked_div(u[1] & 3).unwrap_or(u[0]);
            let sh = (i[3] << 3) ^ (i[0] >> 1);
            let bits = u[2].count_ones() + u[3].reverse_bits() % 7 + ((u[0] >> 1) & 7);
            let x = -7 + (1.0f32.to_bits() >> 23) as i32;
            [
                d as f32 + r as f32 * 100.0,
                q as f32 + sh as f32 * 0.001,
                bits as f32,
                x as f32 + u32::from(v[0] > v[1]) as f32,
            ]
        },
        1e-6,
        "ints",
    );
    // Lane 3 divides by zero (i.y = 0): WGSL gives x / 0 = x and x % 0 = 0.
    assert_eq!(got[3][0], -2.0);
}

#[test]
fn comparisons_select_and_boolean_logic() {
    let p = lower(&load("logic.wgsl"), Stage::Fragment);
    let got = run_fs(&p, &[], &NoTextures);
    check(
        &got,
        |&[x, y, z, w]| {
            let lt = [x, y, z, w].map(|c| c < 0.5);
            let c0 = if x >= y && z != w { 2.0 } else { 1.0 };
            let c1 = [if lt[0] { 5.0 } else { 3.0 }, if lt[1] { 6.0 } else { 4.0 }];
            let any = lt.iter().any(|&b| b) as u32 as f32;
            let all = lt.iter().all(|&b| b) as u32 as f32;
            let c2 = any + 2.0 * all + 4.0 * ((x != y || z <= w) as u32 as f32);
            let i = (x * 4.0) as i32;
            let c3 = if i > 1 && (i as u32) < 3 { 1.0 } else { -1.0 };
            [c0, c1[0] * 10.0 + c1[1], c2, c3]
        },
        0.0,
        "logic",
    );
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

#[test]
fn math_builtins() {
    let p = lower(&load("math.wgsl"), Stage::Fragment);
    let cases: [(Expect, f32); 9] = [
        (
            |&[x, y, _, _]| {
                [
                    (x - 0.5).abs(),
                    x.min(y),
                    x.max(y),
                    (x * 3.0 - 1.0).clamp(-0.25, 0.75),
                ]
            },
            0.0,
        ),
        (
            |&[x, ..]| {
                let t = x * 7.0 - 3.0;
                [
                    t.floor(),
                    t.ceil(),
                    (x * 8.0 - 4.0).round_ties_even(),
                    t - t.floor(),
                ]
            },
            1e-6,
        ),
        (
            |&[x, y, ..]| {
                [
                    (x * 7.0 - 3.0).trunc(),
                    x.sqrt(),
                    1.0 / (y + 0.25).sqrt(),
                    x.exp(),
                ]
            },
            1e-5,
        ),
        (
            |&[x, y, ..]| {
                [
                    (x * 3.0).exp2(),
                    (y + 0.5).ln(),
                    (y + 0.5).log2(),
                    (x + 0.1).powf(y + 0.2),
                ]
            },
            1e-5,
        ),
        (
            |&[x, ..]| {
                [
                    (x * 6.0).sin(),
                    (x * 6.0).cos(),
                    x.tan(),
                    (x * 2.0 - 0.5).clamp(0.0, 1.0),
                ]
            },
            1e-5,
        ),
        (
            |&[x, y, ..]| {
                [
                    (x * 4.0 - 2.0).atan(),
                    (y - 0.5).atan2(x - 0.5),
                    x * 0.75 + y * 0.25,
                    if x >= 0.5 { 1.0 } else { 0.0 },
                ]
            },
            2e-5,
        ),
        (
            |&[x, y, z, w]| {
                [
                    smoothstep(0.2, 0.8, x),
                    x * w + y * z + z * y,
                    (x * x + y * y).sqrt(),
                    ((x - z) * (x - z) + (y - w) * (y - w)).sqrt(),
                ]
            },
            1e-5,
        ),
        (
            |&[x, y, z, w]| {
                let (a, b) = ([x, y, z], [w, z, x]);
                let c = [
                    a[1] * b[2] - a[2] * b[1],
                    a[2] * b[0] - a[0] * b[2],
                    a[0] * b[1] - a[1] * b[0],
                ];
                let n = [x + 0.1, y + 0.1, z + 0.1];
                let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                [
                    c[0] + c[1] * c[2],
                    (n[0] + n[2]) / len,
                    x * y + 0.5,
                    (x - 0.5).signum(),
                ]
            },
            1e-5,
        ),
        (
            |&[x, y, ..]| {
                [
                    (x * 90.0).to_radians(),
                    y.to_degrees(),
                    ((x * 10.0) as i32).max(3) as f32,
                    ((y * 10.0) as u32).min(4) as f32,
                ]
            },
            1e-5,
        ),
    ];
    for (k, (want, tol)) in cases.iter().enumerate() {
        let got = run_fs(&p, &[ivec([k as i32, 0, 0, 0])], &NoTextures);
        check(&got, want, *tol, &format!("math case {k}"));
    }
    let got = run_fs(&p, &[ivec([42, 0, 0, 0])], &NoTextures);
    check(&got, |_| [-1.0; 4], 0.0, "math default");
}

type Mat = Vec<Vec<f32>>;

fn mat_vec(m: &Mat, v: &[f32]) -> Vec<f32> {
    (0..m[0].len())
        .map(|r| m.iter().zip(v).map(|(col, x)| col[r] * x).sum())
        .collect()
}

fn mat_mul(a: &Mat, b: &Mat) -> Mat {
    b.iter().map(|col| mat_vec(a, col)).collect()
}

#[test]
fn matrices_column_major_with_uniform_layout() {
    let p = lower(&load("matrix.wgsl"), Stage::Fragment);
    let m2: Mat = vec![vec![1.0, 2.0], vec![3.0, 4.0]];
    let m3: Mat = vec![
        vec![1.0, 0.0, 2.0],
        vec![0.0, 1.0, 0.0],
        vec![3.0, 0.0, 1.0],
    ];
    let m4: Mat = (0..4)
        .map(|j| {
            (0..4)
                .map(|i| (i + 1) as f32 * (j + 1) as f32 * 0.1 + if i == j { 1.0 } else { 0.0 })
                .collect()
        })
        .collect();
    let f = |x: f32| x.to_bits();
    let mut buf = vec![[f(m2[0][0]), f(m2[0][1]), f(m2[1][0]), f(m2[1][1])]];
    for col in &m3 {
        buf.push([f(col[0]), f(col[1]), f(col[2]), 0]);
    }
    for col in &m4 {
        buf.push([f(col[0]), f(col[1]), f(col[2]), f(col[3])]);
    }
    let got = run_fs(&p, &[buf], &NoTextures);
    let m4t: Mat = (0..4).map(|i| (0..4).map(|j| m4[j][i]).collect()).collect();
    check(
        &got,
        |&[x, y, z, w]| {
            let a = mat_vec(&m2, &[x, y]);
            let b: Vec<f32> = m3.iter().map(|c| c[0] * x + c[1] * y + c[2] * z).collect();
            let c = mat_vec(&mat_mul(&m4, &m4t), &[x, y, z, w]);
            let local: Mat = vec![vec![x * 2.0, y * 2.0], vec![z * 2.0, w * 2.0]];
            let d = &mat_mul(&local, &m2)[1];
            [
                a[0] + a[1] * 10.0,
                b[0] - b[2],
                c[3] + c[1],
                d[0] + d[1] * 0.5,
            ]
        },
        1e-5,
        "matrix",
    );
}

#[test]
fn arrays_and_structs_with_dynamic_indices() {
    let p = lower(&load("arrays.wgsl"), Stage::Fragment);
    let f = |x: f32| x.to_bits();
    let mut buf = vec![[2, f(0.5), 0, 0]];
    for i in 0..3 {
        let k = (i + 1) as f32;
        buf.push([f(k), f(2.0 * k), f(3.0 * k), f(0.5 * k)]);
    }
    buf.push([f(1.0), f(2.0), f(3.0), f(4.0)]);
    buf.push([f(5.0), f(6.0), f(7.0), f(8.0)]);
    let k = [[1.0f32, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]];
    let got = run_fs(&p, &[buf], &NoTextures);
    const WEIGHTS: [f32; 5] = [0.1, 0.2, 0.4, 0.2, 0.1];
    check(
        &got,
        |v| {
            let mut sum = [0.0f32; 3];
            for i in 0..2 {
                let kk = (i + 1) as f32;
                for (c, s) in sum.iter_mut().enumerate() {
                    *s += (c + 1) as f32 * kk * (0.5 * kk);
                }
            }
            let j = (v[0] * 4.99) as i32 as usize;
            let a = (j % 4) as f32 * v[1];
            let next = (j + 1) % 4;
            let by = WEIGHTS[next + 1];
            let mut vec = *v;
            vec[j % 4] = 7.0;
            [
                sum[0] + sum[1] * 10.0 + sum[2] * 100.0 + 0.5,
                a + by,
                WEIGHTS[j] + k[j % 2][j % 4],
                vec[0] + vec[1] * 10.0 + vec[2] * 100.0 + vec[3] * 1000.0,
            ]
        },
        1e-6,
        "arrays",
    );
}

#[test]
fn control_flow_loops_switch_and_early_returns() {
    let p = lower(&load("flow.wgsl"), Stage::Fragment);
    let got = run_fs(&p, &[], &NoTextures);
    check(
        &got,
        |&[x, y, z, w]| {
            let mut odd = 0;
            for i in 0..10 {
                if i % 2 == 0 {
                    continue;
                }
                if i > (x * 10.0) as i32 {
                    break;
                }
                odd += i;
            }
            let mut n = (y * 10.0) as i32;
            let mut wc = 0;
            while n > 0 {
                n -= 3;
                wc += 1;
            }
            let branch = if z < 0.3 {
                1.0
            } else if z < 0.6 {
                2.0
            } else {
                3.0
            };
            let limit = w * 3.0;
            let mut fx = 0.0f32;
            let f = loop {
                fx += 0.5;
                if fx > limit {
                    break fx;
                }
            };
            let c = match (x * 5.0) as i32 {
                0 | 1 => 10.0,
                2 => 20.0,
                3 => 30.0,
                _ => 99.0,
            };
            [odd as f32 + wc as f32 * 100.0, branch, f, c]
        },
        0.0,
        "flow",
    );
}

#[test]
fn discard_kills_lanes() {
    let p = lower(&load("discard.wgsl"), Stage::Fragment);
    let (out, killed) = run(
        &p,
        &[(SemanticName::Generic, 0, fbits(&LANES))],
        &[],
        &[],
        &NoTextures,
        (SemanticName::Color, 0),
    );
    assert_eq!(killed, 0b1001);
    for lane in [1, 2] {
        assert_eq!(out[lane], LANES[lane].map(f32::to_bits));
    }
}

#[test]
fn derivatives_coarse_fine_and_fwidth() {
    let p = lower(&load("deriv.wgsl"), Stage::Fragment);
    let got = run_fs(&p, &[], &NoTextures);
    let q: Vec<f32> = LANES.iter().map(|v| v[0] * v[1]).collect();
    let ddx = q[3] - q[2];
    let ddy = q[2] - q[0];
    for lane in 0..4 {
        let fx = if lane < 2 { q[1] - q[0] } else { q[3] - q[2] };
        let fy = if lane % 2 == 0 {
            q[2] - q[0]
        } else {
            q[3] - q[1]
        };
        let want = [ddx, ddy, fx + 10.0 * fy, ddx.abs() + ddy.abs()];
        for c in 0..4 {
            assert!(
                (got[lane][c] - want[c]).abs() < 1e-6,
                "lane {lane} {c}: {got:?} vs {want:?}"
            );
        }
    }
}

/// A texture that reports how it was asked: s, t, a code for the level mode, and the offset.
struct ProbeTexture;

impl TextureAccess for ProbeTexture {
    fn sample(&self, r: &SampleRequest) -> QuadVec4 {
        assert_eq!((r.view, r.sampler, r.target), (3, 3, TextureTarget::Tex2D));
        let lod: [f32; 4] = match r.lod {
            LodMode::Implicit => [-1.0; 4],
            LodMode::Explicit(l) => l,
            LodMode::Bias(b) => b.map(|b| 100.0 + b),
            LodMode::Zero => [-2.0; 4],
            LodMode::Gradient { ddx, ddy } => std::array::from_fn(|l| ddx[0][l] + 10.0 * ddy[1][l]),
        };
        let off = (r.offset[0] * 10 + r.offset[1]) as f32;
        [
            r.coords[0].map(f32::to_bits),
            r.coords[1].map(f32::to_bits),
            lod.map(f32::to_bits),
            [off.to_bits(); 4],
        ]
    }
    fn gather(&self, _: &SampleRequest, _: u32) -> QuadVec4 {
        panic!("no gather expected")
    }
    fn fetch(
        &self,
        view: u32,
        _: TextureTarget,
        c: [[i32; 4]; 4],
        lod: [i32; 4],
        _: [i32; 3],
    ) -> QuadVec4 {
        assert_eq!(view, 3);
        [
            c[0].map(|x| (x as f32).to_bits()),
            c[1].map(|x| (x as f32).to_bits()),
            lod.map(|x| (x as f32).to_bits()),
            [42f32.to_bits(); 4],
        ]
    }
    fn size(&self, view: u32, _: TextureTarget, lod: i32) -> [u32; 4] {
        assert_eq!((view, lod), (3, 0));
        [16, 8, 1, 5]
    }
    fn query_lod(&self, _: &SampleRequest) -> [[f32; 4]; 2] {
        [[0.0; 4]; 2]
    }
}

#[test]
fn texture_sample_level_bias_grad_offset_load_and_dimensions() {
    let src = load("texture.wgsl");
    let lowered = compile(&src, "texture.wgsl", Stage::Fragment, None).expect("compiles");
    assert!(lowered.resources.iter().any(|r| matches!(
        &r.kind,
        softgpu::frontend::lower::ResourceKind::Sampler { units } if units == &[3]
    )));
    let p = lower(&src, Stage::Fragment);
    let expect: [Expect; 7] = [
        |v| [v[0], v[1], -1.0, 0.0],
        |v| [v[0], v[1], 2.5, 0.0],
        |v| [v[0], v[1], 101.5, 0.0],
        |v| [v[0], v[1], 0.25 + 10.0 * 0.5, 0.0],
        |v| [v[0], v[1], -1.0, 17.0],
        |v| {
            [
                ((v[0] * 8.0) as i32) as f32,
                ((v[1] * 8.0) as i32) as f32,
                1.0,
                42.0,
            ]
        },
        |_| [16.0, 8.0, 5.0, 0.0],
    ];
    for (k, want) in expect.iter().enumerate() {
        let got = run_fs(&p, &[ivec([k as i32, 0, 0, 0])], &ProbeTexture);
        check(&got, want, 0.0, &format!("texture case {k}"));
    }
}

#[test]
fn fragment_builtins_position_front_facing_and_flat_varying() {
    let p = lower(&load("builtins_fs.wgsl"), Stage::Fragment);
    assert_eq!(
        p.property("FS_COORD_ORIGIN"),
        Some(&["UPPER_LEFT".to_string()][..])
    );
    assert_eq!(
        p.property("FS_COORD_PIXEL_CENTER"),
        Some(&["HALF_INTEGER".to_string()][..])
    );
    let pos: [[f32; 4]; 4] =
        std::array::from_fn(|l| [10.5 + (l % 2) as f32, 20.5 + (l / 2) as f32, 0.5, 1.0]);
    let (out, _) = run(
        &p,
        &[
            (SemanticName::Position, 0, fbits(&pos)),
            (
                SemanticName::Face,
                0,
                fbits(&[
                    [1.0, 0.0, 0.0, 0.0],
                    [-1.0, 0.0, 0.0, 0.0],
                    [1.0, 0.0, 0.0, 0.0],
                    [-1.0, 0.0, 0.0, 0.0],
                ]),
            ),
            (SemanticName::Generic, 2, [[7, 0, 0, 0]; 4]),
        ],
        &[],
        &[],
        &NoTextures,
        (SemanticName::Color, 0),
    );
    for lane in 0..4 {
        let face = if lane % 2 == 0 { 1.0 } else { -1.0 };
        let want = [pos[lane][0], pos[lane][1], face, 7.0].map(f32::to_bits);
        assert_eq!(out[lane], want, "lane {lane}");
    }
}

#[test]
fn vertex_shader_inputs_outputs_and_vertex_index() {
    let p = lower(&load("vertex.wgsl"), Stage::Vertex);
    let mvp: Mat = (0..4)
        .map(|j| {
            (0..4)
                .map(|i| (i * 4 + j) as f32 * 0.25 + if i == j { 1.0 } else { 0.0 })
                .collect()
        })
        .collect();
    let buf: Vec<[u32; 4]> = mvp
        .iter()
        .map(|c| [c[0], c[1], c[2], c[3]].map(f32::to_bits))
        .collect();
    let pos_in: [[f32; 4]; 4] = std::array::from_fn(|l| [l as f32, 1.0 - l as f32, 0.5, 0.0]);
    let uv_in: [[f32; 4]; 4] = std::array::from_fn(|l| [0.25 * l as f32, 0.75, 0.0, 0.0]);
    let vid: [[u32; 4]; 4] = std::array::from_fn(|l| [100 + l as u32, 0, 0, 0]);
    let inputs = [
        (SemanticName::Generic, 0, fbits(&pos_in)),
        (SemanticName::Generic, 1, fbits(&uv_in)),
    ];
    let svs = [(SemanticName::VertexId, vid)];
    let buffers = [buf];
    let (pos, _) = run(
        &p,
        &inputs,
        &svs,
        &buffers,
        &NoTextures,
        (SemanticName::Position, 0),
    );
    let (uv, _) = run(
        &p,
        &inputs,
        &svs,
        &buffers,
        &NoTextures,
        (SemanticName::Generic, 0),
    );
    let (tag, _) = run(
        &p,
        &inputs,
        &svs,
        &buffers,
        &NoTextures,
        (SemanticName::Generic, 3),
    );
    for l in 0..4 {
        let want = mat_vec(&mvp, &[pos_in[l][0], pos_in[l][1], pos_in[l][2], 1.0]);
        for c in 0..4 {
            let g = f32::from_bits(pos[l][c]);
            assert!(
                (g - want[c]).abs() < 1e-5,
                "position lane {l}: {g} vs {}",
                want[c]
            );
        }
        assert_eq!(f32::from_bits(uv[l][0]), uv_in[l][0] * 2.0);
        assert_eq!(f32::from_bits(uv[l][1]), 1.5);
        assert_eq!(f32::from_bits(tag[l][0]), (100 + l) as f32);
    }
}

fn compile_err(src: &str, stage: Stage) -> softgpu::frontend::FrontendError {
    match compile(src, "bad.wgsl", stage, None) {
        Ok(l) => panic!(
            "expected an error, got\n{}",
            text::print_program(&l.program)
        ),
        Err(e) => e,
    }
}

#[test]
fn syntax_error_names_file_line_and_column() {
    let e = compile_err(
        "@fragment\nfn main() -> @location(0) vec4<f32> {\n    return vec4<f32>(1.0) +;\n}\n",
        Stage::Fragment,
    );
    assert_eq!((e.file.as_str(), e.line), ("bad.wgsl", 3), "{e}");
    assert!(e.column > 1, "{e}");
    assert!(e.to_string().starts_with("bad.wgsl:3:"), "{e}");
}

#[test]
fn type_error_is_reported_with_its_line() {
    let e = compile_err("@fragment\nfn main() -> @location(0) vec4<f32> {\n    let x: f32 = 1u;\n    return vec4<f32>(x);\n}\n", Stage::Fragment);
    assert_eq!(e.line, 3, "{e}");
}

#[test]
fn discard_in_vertex_shader_is_an_error_naming_the_line() {
    let src = "@vertex\nfn main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> {\n    if (p.x < 0.0) {\n        discard;\n    }\n    return p;\n}\n";
    let e = compile_err(src, Stage::Vertex);
    assert_eq!(e.line, 4, "{e}");
    assert!(
        e.message.contains("discard") && e.message.contains("line 4"),
        "{e}"
    );
}

#[test]
fn derivative_in_vertex_shader_is_an_error_naming_the_line() {
    let src = "fn helper(x: f32) -> f32 {\n    return dpdx(x);\n}\n@vertex\nfn main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> {\n    return p * helper(p.x);\n}\n";
    let e = compile_err(src, Stage::Vertex);
    assert_eq!(e.line, 2, "{e}");
    assert!(e.message.contains("derivative"), "{e}");
}

#[test]
fn unsupported_construct_names_construct_and_line() {
    let src = "@group(0) @binding(0) var t: texture_2d<f32>;\n@group(0) @binding(1) var s: sampler;\n@fragment\nfn main(@location(0) uv: vec2<f32>) -> @location(0) vec4<f32> {\n    return textureSampleBaseClampToEdge(t, s, uv);\n}\n";
    let e = compile_err(src, Stage::Fragment);
    assert!(
        e.message
            .starts_with("unsupported: textureSampleBaseClampToEdge at line 5"),
        "{e}"
    );
}

#[test]
fn missing_entry_point_is_an_error() {
    let e = compile_err(
        "@fragment\nfn main() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }\n",
        Stage::Vertex,
    );
    assert!(e.message.contains("no @vertex entry point"), "{e}");
}

#[test]
fn basic_filter_shader_lowers_with_its_resources() {
    let l = compile(&load("basic.wgsl"), "basic.wgsl", Stage::Fragment, None).expect("compiles");
    use softgpu::frontend::lower::ResourceKind;
    let kinds: Vec<_> = l
        .resources
        .iter()
        .map(|r| (r.binding, r.kind.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (
                0,
                ResourceKind::UniformBuffer {
                    buffer: 0,
                    size: 96
                }
            ),
            (
                1,
                ResourceKind::Texture {
                    unit: 1,
                    target: TextureTarget::Tex2D
                }
            ),
            (2, ResourceKind::Sampler { units: vec![1] }),
        ]
    );
    lower(&load("basic.wgsl"), Stage::Fragment);
}

#[test]
fn dynamic_column_of_a_uniform_mat3x2() {
    // mat3x2 columns are 8 bytes apart in a uniform buffer: not register-aligned, so the
    // lowering copies the matrix to registers before indexing (naga's access.wgsl does this).
    let src = "
struct U { m: mat3x2<f32>, k: f32 }
@group(0) @binding(0) var<uniform> u: U;
@fragment fn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {
    let i = u32(v.x * 2.99);
    let j = u32(v.y * 1.99);
    return vec4<f32>(u.m[i].x, u.m[i].y, u.m[i][j], u.k);
}";
    let p = lower(src, Stage::Fragment);
    let f = |x: f32| x.to_bits();
    let cols = [[1.5f32, -2.0], [3.25, 4.0], [-5.5, 6.75]];
    let buf = vec![
        [f(cols[0][0]), f(cols[0][1]), f(cols[1][0]), f(cols[1][1])],
        [f(cols[2][0]), f(cols[2][1]), f(0.25), 0],
    ];
    let got = run_fs(&p, &[buf], &NoTextures);
    check(
        &got,
        |v| {
            let i = (v[0] * 2.99) as usize;
            let j = (v[1] * 1.99) as usize;
            [cols[i][0], cols[i][1], cols[i][j], 0.25]
        },
        0.0,
        "dynamic mat3x2 column",
    );
}

#[test]
fn each_entry_point_gets_its_own_immediate_block() {
    // naga allows one immediate block per entry point in a module with several (naga's
    // push-constants.wgsl test input); only the entry point's own is its push-constant buffer.
    let src = "
struct V { clip_w: f32, m: mat3x3<f32> }
var<immediate> im_vert: V;
struct F { multiplier: f32, tint: vec4f }
var<immediate> im_frag: F;
@vertex fn vs(@location(0) p: vec2f) -> @builtin(position) vec4f { return vec4f(p, 0.0, im_vert.clip_w); }
@fragment fn fs(@location(0) c: vec4f) -> @location(0) vec4f { return c * im_frag.tint * im_frag.multiplier; }";
    for (stage, name, size) in [
        (Stage::Vertex, "im_vert", 64),
        (Stage::Fragment, "im_frag", 32),
    ] {
        let l = compile(src, "imm.wgsl", stage, None).unwrap_or_else(|e| panic!("{e}"));
        let push: Vec<_> = l
            .resources
            .iter()
            .filter(|r| {
                matches!(
                    r.kind,
                    softgpu::frontend::lower::ResourceKind::PushConstants { .. }
                )
            })
            .collect();
        assert_eq!(push.len(), 1, "{:?}", l.resources);
        assert_eq!(push[0].name.as_deref(), Some(name));
        assert_eq!(
            push[0].kind,
            softgpu::frontend::lower::ResourceKind::PushConstants { buffer: 0, size }
        );
    }
    // Each entry point's reflection describes its own block, named as declared.
    let parsed = softgpu::frontend::wgsl::parse(src, "imm.wgsl").unwrap();
    for (stage, name, members) in [
        (Stage::Vertex, "im_vert", ["clip_w", "m"]),
        (Stage::Fragment, "im_frag", ["multiplier", "tint"]),
    ] {
        let index =
            softgpu::frontend::wgsl::select_entry_point(&parsed.module, stage, None, "").unwrap();
        let reflection = softgpu::frontend::wgsl::reflect(&parsed, index, "imm.wgsl").unwrap();
        let push = reflection.push_constants.expect("push-constant block");
        assert_eq!(push.name.as_deref(), Some(name));
        let names: Vec<&str> = push.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, members);
    }
    // The fragment program computes c * tint * multiplier from CONST[0].
    let p = lower(src, Stage::Fragment);
    let f = |x: f32| x.to_bits();
    let buf = vec![[f(2.0), 0, 0, 0], [f(0.5), f(0.25), f(1.0), f(0.125)]];
    let got = run_fs(&p, &[buf], &NoTextures);
    check(
        &got,
        |v| [v[0], v[1] * 0.5, v[2] * 2.0, v[3] * 0.25],
        1e-6,
        "immediate tint",
    );
}
