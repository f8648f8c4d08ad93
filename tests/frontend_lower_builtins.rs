//! Math builtins expanded by the lowering (asin/acos, hyperbolics, reflect/refract/faceForward,
//! determinant/inverse, outer, modf/frexp/ldexp, pack/unpack, bit counts, quantizeToF16) and
//! textureGather: each runs on the reference interpreter and is compared bit for bit with the
//! same formula evaluated in Rust with the interpreter's own operations (the formulas mirror
//! Mesa 22.3's softpipe TGSI), and with the exact math function within the stated tolerance.

use softgpu::exec::{
    LodMode, NoTextures, QuadIo, QuadShader, QuadVec4, SampleRequest, ShaderResources,
    TextureAccess,
};
use softgpu::frontend::wgsl::{compile, Stage};
use softgpu::interp::{ops, Interpreter};
use softgpu::ir::{text, validate, Opcode, Program, TextureTarget};

fn lower(src: &str) -> Program {
    let l =
        compile(src, "test.wgsl", Stage::Fragment, None).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let printed = text::print_program(&l.program);
    if let Err(e) = validate::validate(&l.program) {
        panic!("invalid program: {e:?}\n{printed}");
    }
    let parsed = text::parse_program(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
    assert_eq!(parsed, l.program, "print/parse round trip\n{printed}");
    l.program
}

/// Runs a fragment shader whose `@location(0) v: vec4<f32>` gets `lanes` (bits per lane);
/// returns COLOR[0] bits per lane.
fn run(program: &Program, lanes: [[u32; 4]; 4], textures: &dyn TextureAccess) -> [[u32; 4]; 4] {
    let shader = Interpreter::new(program).expect("interpreter accepts the program");
    let sig = shader.signature().clone();
    let mut ins = vec![[[0u32; 4]; 4]; sig.num_inputs];
    if let Some(slot) = sig.inputs.first() {
        ins[slot.register as usize] = std::array::from_fn(|c| std::array::from_fn(|l| lanes[l][c]));
    }
    let mut outs = vec![[[0u32; 4]; 4]; sig.num_outputs];
    let res = ShaderResources {
        constants: &[],
        textures,
        storage: Default::default(),
    };
    let killed = shader
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
    assert_eq!(killed, 0);
    let q = outs[0];
    std::array::from_fn(|l| std::array::from_fn(|c| q[c][l]))
}

/// `return EXPR;` of a fragment shader over `v`, on float lanes; result bits per lane.
fn eval(decls: &str, expr: &str, lanes: [[f32; 4]; 4]) -> [[u32; 4]; 4] {
    let src = format!(
        "{decls}\n@fragment\nfn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {{\n    return {expr};\n}}\n"
    );
    let p = lower(&src);
    run(&p, lanes.map(|v| v.map(f32::to_bits)), &NoTextures)
}

/// Like [`eval`] for a RetroArch slang (Vulkan GLSL) fragment stage computing `FragColor = EXPR`
/// from `v`, for the builtins WGSL lacks (inverse, outerProduct).
fn eval_glsl(expr: &str, lanes: [[f32; 4]; 4]) -> [[u32; 4]; 4] {
    let src = format!(
        "#version 450\n#pragma stage vertex\nlayout(location = 0) in vec4 Position;\nlayout(location = 0) out vec4 v;\nvoid main() {{ gl_Position = Position; v = Position; }}\n#pragma stage fragment\nlayout(location = 0) in vec4 v;\nlayout(location = 0) out vec4 FragColor;\nvoid main() {{ FragColor = {expr}; }}\n"
    );
    let dir = std::env::temp_dir().join(format!("softgpu-lower-builtins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let name = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        expr.hash(&mut h);
        h.finish()
    };
    let path = dir.join(format!("{name:016x}.slang"));
    std::fs::write(&path, &src).expect("write shader");
    let shader = softgpu::frontend::vulkan_glsl::compile_slang(&path)
        .unwrap_or_else(|e| panic!("{e}\n{src}"));
    let (_, fs) = shader.lower().unwrap_or_else(|e| panic!("{e}\n{src}"));
    let printed = text::print_program(&fs.program);
    if let Err(e) = validate::validate(&fs.program) {
        panic!("invalid program: {e:?}\n{printed}");
    }
    run(&fs.program, lanes.map(|v| v.map(f32::to_bits)), &NoTextures)
}

const LANES: [[f32; 4]; 4] = [
    [0.1, 0.7, 0.25, 0.9],
    [-0.6, 0.2, -0.55, 0.35],
    [0.85, -0.85, 0.7, 0.05],
    [-0.35, 0.0, 0.95, -1.0],
];

/// Checks every component: exact against `mirror`, within `tol` (relative, absolute below 1)
/// against `exact`.
fn check(
    got: [[u32; 4]; 4],
    mirror: impl Fn(&[f32; 4]) -> [f32; 4],
    exact: impl Fn(&[f32; 4]) -> [f32; 4],
    tol: f32,
    what: &str,
) {
    for (l, v) in LANES.iter().enumerate() {
        let (m, e) = (mirror(v), exact(v));
        for c in 0..4 {
            let g = f32::from_bits(got[l][c]);
            assert!(
                g.to_bits() == m[c].to_bits() || (g.is_nan() && m[c].is_nan()),
                "{what}: lane {l} comp {c}: got {g}, Mesa's formula gives {}",
                m[c]
            );
            assert!(
                (g - e[c]).abs() <= tol * e[c].abs().max(1.0),
                "{what}: lane {l} comp {c}: got {g}, exact {}",
                e[c]
            );
        }
    }
}

const LOG2_E: f32 = std::f32::consts::LOG2_E;
const LN_2: f32 = std::f32::consts::LN_2;
const HALF_PI: f32 = std::f32::consts::FRAC_PI_2;

fn mesa_asin_core(x: f32, p0: f32, p1: f32) -> (f32, f32) {
    let ax = x.abs();
    let sq = ops::sqrt(1.0 - ax);
    let p = ax * p1 + p0;
    let p = ax * p + -0.214_601_81;
    let p = ax * p + HALF_PI;
    (ops::ssg(x), -sq * p + HALF_PI)
}

fn mesa_asin(x: f32) -> f32 {
    let (s, r) = mesa_asin_core(x, 0.086_566_724, -0.031_029_55);
    s * r
}

fn mesa_acos(x: f32) -> f32 {
    let (s, r) = mesa_asin_core(x, 0.081_324_63, -0.023_633_18);
    -s * r + HALF_PI
}

#[test]
fn asin_and_acos_use_mesas_polynomial() {
    let got = eval(
        "",
        "vec4<f32>(asin(v.x), acos(v.y), asin(v.z), acos(v.w))",
        LANES,
    );
    check(
        got,
        |v| {
            [
                mesa_asin(v[0]),
                mesa_acos(v[1]),
                mesa_asin(v[2]),
                mesa_acos(v[3]),
            ]
        },
        |v| [v[0].asin(), v[1].acos(), v[2].asin(), v[3].acos()],
        // Mesa's polynomial is accurate to about 2e-4.
        5e-4,
        "asin/acos",
    );
    // The end points are exact.
    let ends = [[1.0, -1.0, 0.0, 1.0]; 4];
    let got = eval(
        "",
        "vec4<f32>(asin(v.x), asin(v.y), acos(v.z), acos(v.w))",
        ends,
    );
    let want = [HALF_PI, -HALF_PI, HALF_PI, 0.0];
    for lane in got {
        assert_eq!(lane.map(f32::from_bits), want);
    }
}

fn exp_pair(x: f32) -> (f32, f32) {
    let e = x * LOG2_E;
    (ops::ex2(e), ops::ex2(-e))
}

#[test]
fn hyperbolic_functions_follow_the_glsl_expansions() {
    let got = eval(
        "",
        "vec4<f32>(sinh(v.x), cosh(v.y), tanh(v.z * 20.0), tanh(v.w))",
        LANES,
    );
    let tanh = |x: f32| {
        let c = x.clamp(-10.0, 10.0);
        let (a, b) = exp_pair(c);
        ops::div(a - b, a + b)
    };
    check(
        got,
        |v| {
            let (a, b) = exp_pair(v[0]);
            let (c, d) = exp_pair(v[1]);
            [0.5 * (a - b), 0.5 * (c + d), tanh(v[2] * 20.0), tanh(v[3])]
        },
        |v| [v[0].sinh(), v[1].cosh(), (v[2] * 20.0).tanh(), v[3].tanh()],
        1e-5,
        "sinh/cosh/tanh",
    );
    let got = eval(
        "",
        "vec4<f32>(asinh(v.x * 3.0), acosh(abs(v.y) + 1.5), atanh(v.z * 0.9), 0.0)",
        LANES,
    );
    check(
        got,
        |v| {
            let x = v[0] * 3.0;
            let asinh = ops::ssg(x) * (ops::lg2(x.abs() + ops::sqrt(x * x + 1.0)) * LN_2);
            let y = v[1].abs() + 1.5;
            let acosh = ops::lg2(y + ops::sqrt(y * y + -1.0)) * LN_2;
            let z = v[2] * 0.9;
            let atanh = 0.346_573_6 * ops::lg2(ops::div(1.0 + z, 1.0 - z));
            [asinh, acosh, atanh, 0.0]
        },
        |v| {
            [
                (v[0] * 3.0).asinh(),
                (v[1].abs() + 1.5).acosh(),
                (v[2] * 0.9).atanh(),
                0.0,
            ]
        },
        1e-5,
        "asinh/acosh/atanh",
    );
}

fn dot3(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[test]
fn reflect_refract_and_face_forward() {
    let n = [0.0f32, 0.6, 0.8];
    let decls = "const N = vec3<f32>(0.0, 0.6, 0.8);";
    let got = eval(
        decls,
        "vec4<f32>(reflect(v.xyz, N), faceForward(N, v.xyz, v.wzy).x)",
        LANES,
    );
    check(
        got,
        |v| {
            let i = [v[0], v[1], v[2]];
            let t = dot3(n, i) * 2.0;
            let r = [0, 1, 2].map(|c| -t * n[c] + i[c]);
            let d = dot3([v[3], v[2], v[1]], i);
            [r[0], r[1], r[2], if d < 0.0 { n[0] } else { -n[0] }]
        },
        |v| {
            let i = [v[0], v[1], v[2]];
            let d = dot3(n, i);
            let f = if dot3([v[3], v[2], v[1]], i) < 0.0 {
                n[0]
            } else {
                -n[0]
            };
            [
                i[0] - 2.0 * d * n[0],
                i[1] - 2.0 * d * n[1],
                i[2] - 2.0 * d * n[2],
                f,
            ]
        },
        1e-6,
        "reflect/faceForward",
    );
    // faceForward's sign, on its own.
    let got = eval(decls, "vec4<f32>(faceForward(N, v.xyz, v.wzy), 0.0)", LANES);
    for (l, v) in LANES.iter().enumerate() {
        let d = dot3([v[3], v[2], v[1]], [v[0], v[1], v[2]]);
        let s = if d < 0.0 { 1.0 } else { -1.0 };
        assert_eq!(f32::from_bits(got[l][1]), s * n[1], "faceForward lane {l}");
    }
    let got = eval(
        decls,
        "vec4<f32>(refract(normalize(v.xyz), N, v.w * 2.0), 1.0)",
        LANES,
    );
    let refract = |v: &[f32; 4]| {
        let len = ops::sqrt(dot3([v[0], v[1], v[2]], [v[0], v[1], v[2]]));
        let r = 1.0 / len;
        let _ = r;
        let inv = ops::rsq(dot3([v[0], v[1], v[2]], [v[0], v[1], v[2]]));
        let i = [v[0] * inv, v[1] * inv, v[2] * inv];
        let eta = v[3] * 2.0;
        let d = dot3(n, i);
        let k = -d * d + 1.0;
        let k = eta * k;
        let k = -eta * k + 1.0;
        let t = eta * d + ops::sqrt(k);
        let out = [0, 1, 2].map(|c| eta * i[c] - t * n[c]);
        if k < 0.0 {
            [0.0, 0.0, 0.0, 1.0]
        } else {
            [out[0], out[1], out[2], 1.0]
        }
    };
    check(got, refract, refract, 0.0, "refract");
    // Lane 2 (eta = 0.1) refracts, lane 3 (eta = -2) is total internal reflection → 0.
    assert!(got[2][..3].iter().any(|&b| f32::from_bits(b) != 0.0));
}

type Mat = Vec<Vec<f32>>;

fn dp(a: f32, b: f32, c: f32, d: f32) -> f32 {
    a * b - c * d
}

/// Mesa's GLSL `determinant` (columns m[c][r]).
fn mesa_det(m: &Mat) -> f32 {
    match m.len() {
        2 => dp(m[0][0], m[1][1], m[1][0], m[0][1]),
        3 => {
            let f1 = dp(m[1][1], m[2][2], m[1][2], m[2][1]);
            let f2 = dp(m[1][0], m[2][2], m[1][2], m[2][0]);
            let f3 = dp(m[1][0], m[2][1], m[1][1], m[2][0]);
            m[0][0] * f1 - m[0][1] * f2 + m[0][2] * f3
        }
        _ => {
            let sf = sub_factors(m);
            let a = adj_row0(m, &sf);
            m[0][0] * a[0] + m[0][1] * a[1] + m[0][2] * a[2] + m[0][3] * a[3]
        }
    }
}

fn sub_factors(m: &Mat) -> Vec<f32> {
    let t = [
        (2, 3, 2, 3),
        (2, 3, 1, 3),
        (2, 3, 1, 2),
        (2, 3, 0, 3),
        (2, 3, 0, 2),
        (2, 3, 0, 1),
        (1, 3, 2, 3),
        (1, 3, 1, 3),
        (1, 3, 1, 2),
        (1, 3, 0, 3),
        (1, 3, 0, 2),
        (1, 3, 1, 3),
        (1, 3, 0, 1),
        (1, 2, 2, 3),
        (1, 2, 1, 3),
        (1, 2, 1, 2),
        (1, 2, 0, 3),
        (1, 2, 0, 2),
        (1, 2, 0, 1),
    ];
    t.iter()
        .map(|&(a, b, p, q)| dp(m[a][p], m[b][q], m[b][p], m[a][q]))
        .collect()
}

/// `a*f0 - b*f1 + c*f2` over column `col` rows `k` and sub-factors `f`, negated if asked.
fn cof(m: &Mat, sf: &[f32], col: usize, k: [usize; 3], f: [usize; 3], negate: bool) -> f32 {
    let r = m[col][k[0]] * sf[f[0]] - m[col][k[1]] * sf[f[1]] + m[col][k[2]] * sf[f[2]];
    if negate {
        -r
    } else {
        r
    }
}

fn adj_row0(m: &Mat, sf: &[f32]) -> [f32; 4] {
    [
        cof(m, sf, 1, [1, 2, 3], [0, 1, 2], false),
        cof(m, sf, 1, [0, 2, 3], [0, 3, 4], true),
        cof(m, sf, 1, [0, 1, 3], [1, 3, 5], false),
        cof(m, sf, 1, [0, 1, 2], [2, 4, 5], true),
    ]
}

/// Mesa's GLSL `inverse`: the adjugate divided by the determinant.
fn mesa_inverse(m: &Mat) -> Mat {
    let (adj, det): (Mat, f32) = match m.len() {
        2 => (
            vec![vec![m[1][1], -m[0][1]], vec![-m[1][0], m[0][0]]],
            dp(m[0][0], m[1][1], m[1][0], m[0][1]),
        ),
        3 => {
            let e = |a: (usize, usize), b: (usize, usize), c: (usize, usize), d: (usize, usize)| {
                dp(m[a.0][a.1], m[b.0][b.1], m[c.0][c.1], m[d.0][d.1])
            };
            let adj = vec![
                vec![
                    e((1, 1), (2, 2), (2, 1), (1, 2)),
                    -e((0, 1), (2, 2), (2, 1), (0, 2)),
                    e((0, 1), (1, 2), (1, 1), (0, 2)),
                ],
                vec![
                    -e((1, 0), (2, 2), (2, 0), (1, 2)),
                    e((0, 0), (2, 2), (2, 0), (0, 2)),
                    -e((0, 0), (1, 2), (1, 0), (0, 2)),
                ],
                vec![
                    e((1, 0), (2, 1), (2, 0), (1, 1)),
                    -e((0, 0), (2, 1), (2, 0), (0, 1)),
                    e((0, 0), (1, 1), (1, 0), (0, 1)),
                ],
            ];
            (adj, mesa_det(m))
        }
        _ => {
            let sf = sub_factors(m);
            let r0 = adj_row0(m, &sf);
            let rows = [
                (
                    [[1, 2, 3], [0, 1, 2]],
                    [[1, 2, 3], [6, 7, 8]],
                    [[1, 2, 3], [13, 14, 15]],
                    [true, false, true],
                ),
                (
                    [[0, 2, 3], [0, 3, 4]],
                    [[0, 2, 3], [6, 9, 10]],
                    [[0, 2, 3], [13, 16, 17]],
                    [false, true, false],
                ),
                (
                    [[0, 1, 3], [1, 3, 5]],
                    [[0, 1, 3], [11, 9, 12]],
                    [[0, 1, 3], [14, 16, 18]],
                    [true, false, true],
                ),
                (
                    [[0, 1, 2], [2, 4, 5]],
                    [[0, 1, 2], [8, 10, 12]],
                    [[0, 1, 2], [15, 17, 18]],
                    [false, true, false],
                ),
            ];
            let adj = rows
                .iter()
                .enumerate()
                .map(|(c, (y, z, w, neg))| {
                    vec![
                        r0[c],
                        cof(m, &sf, 0, y[0], y[1], neg[0]),
                        cof(m, &sf, 0, z[0], z[1], neg[1]),
                        cof(m, &sf, 0, w[0], w[1], neg[2]),
                    ]
                })
                .collect();
            let det = m[0][0] * r0[0] + m[0][1] * r0[1] + m[0][2] * r0[2] + m[0][3] * r0[3];
            (adj, det)
        }
    };
    adj.iter()
        .map(|c| c.iter().map(|&x| ops::div(x, det)).collect())
        .collect()
}

/// The matrix each lane builds from `v` in the shaders below (diagonally dominant).
fn lane_matrix(v: &[f32; 4], n: usize) -> Mat {
    (0..n)
        .map(|c| {
            (0..n)
                .map(|r| v[(c + r) % 4] + if c == r { 2.0 } else { 0.0 })
                .collect()
        })
        .collect()
}

fn wgsl_matrix(n: usize) -> String {
    let cols: Vec<String> = (0..n)
        .map(|c| {
            let comps: Vec<String> = (0..n)
                .map(|r| {
                    let ch = ["v.x", "v.y", "v.z", "v.w"][(c + r) % 4];
                    if c == r {
                        format!("{ch} + 2.0")
                    } else {
                        ch.to_string()
                    }
                })
                .collect();
            format!("vec{n}<f32>({})", comps.join(", "))
        })
        .collect();
    format!("mat{n}x{n}<f32>({})", cols.join(", "))
}

#[test]
fn determinant_and_inverse_use_the_glsl_cofactor_expansions() {
    for n in 2..=4 {
        let m = wgsl_matrix(n);
        let g = m
            .replace(&format!("mat{n}x{n}<f32>"), &format!("mat{n}"))
            .replace(&format!("vec{n}<f32>"), &format!("vec{n}"));
        let got = eval(
            "const K = 1.0;",
            &format!("vec4<f32>(determinant({m}), 0.0, 0.0, K)"),
            LANES,
        );
        for (l, v) in LANES.iter().enumerate() {
            let mm = lane_matrix(v, n);
            assert_eq!(f32::from_bits(got[l][0]), mesa_det(&mm), "det{n} lane {l}");
        }
        for col in 0..n {
            let pad = vec!["0.0"; 4 - n].join(", ");
            let expr = if n == 4 {
                format!("inverse({g})[{col}]")
            } else {
                format!("vec4(inverse({g})[{col}], {pad})")
            };
            let got = eval_glsl(&expr, LANES);
            for (l, v) in LANES.iter().enumerate() {
                let mm = lane_matrix(v, n);
                let inv = mesa_inverse(&mm);
                for r in 0..n {
                    let g = f32::from_bits(got[l][r]);
                    assert_eq!(g, inv[col][r], "inverse{n} lane {l} [{col}][{r}]");
                }
                // Row `col` of inverse(m) * m should be the identity's.
                let mut prod = vec![0.0f64; n];
                for (j, p) in prod.iter_mut().enumerate() {
                    for k in 0..n {
                        *p += f64::from(inv[k][col]) * f64::from(mm[j][k]);
                    }
                }
                for (j, p) in prod.iter().enumerate() {
                    let want = if j == col { 1.0 } else { 0.0 };
                    assert!((p - want).abs() < 1e-5, "inverse{n} lane {l}: {prod:?}");
                }
            }
        }
    }
}

#[test]
fn outer_modf_frexp_ldexp() {
    let outer = eval_glsl("vec4(outerProduct(v.xy, v.zw)[1], 0.0, 0.0)", LANES);
    let mut got = eval(
        "",
        "vec4<f32>(0.0, 0.0, modf(v.x * 7.5).fract, modf(v.y * -3.25).whole)",
        LANES,
    );
    for (g, o) in got.iter_mut().zip(&outer) {
        g[..2].copy_from_slice(&o[..2]);
    }
    check(
        got,
        |v| {
            [
                v[0] * v[3],
                v[1] * v[3],
                v[0] * 7.5 - (v[0] * 7.5).trunc(),
                (v[1] * -3.25).trunc(),
            ]
        },
        |v| {
            [
                v[0] * v[3],
                v[1] * v[3],
                (v[0] * 7.5).fract(),
                (v[1] * -3.25).trunc(),
            ]
        },
        0.0,
        "outer/modf",
    );
    let got = eval(
        "",
        "vec4<f32>(frexp(v.x * 100.0).fract, f32(frexp(v.y * 100.0).exp), ldexp(v.z, i32(v.w * 10.0)), f32(frexp(0.0).exp))",
        LANES,
    );
    let frexp = |x: f32| -> (f32, i32) {
        if x == 0.0 {
            return (x, 0);
        }
        let e = ((x.to_bits() >> 23) & 0xff) as i32 - 126;
        (f32::from_bits((x.to_bits() & 0x807f_ffff) | 0x3f00_0000), e)
    };
    let want = |v: &[f32; 4]| {
        [
            frexp(v[0] * 100.0).0,
            frexp(v[1] * 100.0).1 as f32,
            v[2] * 2f32.powi((v[3] * 10.0) as i32),
            0.0,
        ]
    };
    check(got, want, want, 0.0, "frexp/ldexp");
    for (l, v) in LANES.iter().enumerate() {
        let (m, e) = frexp(v[0] * 100.0);
        assert!(
            (0.5..1.0).contains(&m.abs()) && m * 2f32.powi(e) == v[0] * 100.0,
            "lane {l}"
        );
    }
}

/// WGSL's pack formulas (round to nearest even of the scaled, clamped value).
fn pack_norm(v: &[f32], snorm: bool, bits: u32) -> u32 {
    let scale = ((1u32 << (bits - u32::from(snorm))) - 1) as f32;
    let mut r = 0u32;
    for (i, &x) in v.iter().enumerate() {
        let q = if snorm {
            (x.clamp(-1.0, 1.0) * scale).round_ties_even() as i32 as u32
        } else {
            (x.clamp(0.0, 1.0) * scale).round_ties_even() as u32
        };
        r |= (q & ((1 << bits) - 1)) << (bits * i as u32);
    }
    r
}

#[test]
fn pack_and_unpack_normalized() {
    let lanes = [
        [0.1, 0.7, 0.25, 0.9],
        [-0.6, 0.2, -0.55, 1.35],
        [0.85, -1.85, 0.5 / 255.0, 1.5 / 255.0],
        [-0.35, 0.0, 0.95, -1.0],
    ];
    let got = eval(
        "",
        "bitcast<vec4<f32>>(vec4<u32>(pack4x8unorm(v), pack4x8snorm(v), pack2x16unorm(v.xy), pack2x16snorm(v.zw)))",
        lanes,
    );
    for (l, v) in lanes.iter().enumerate() {
        let want = [
            pack_norm(v, false, 8),
            pack_norm(v, true, 8),
            pack_norm(&v[..2], false, 16),
            pack_norm(&v[2..], true, 16),
        ];
        assert_eq!(got[l], want, "pack lane {l}: {got:x?}");
    }
    // Unpack the same words again.
    let words: [[u32; 4]; 4] = got;
    let p = lower(
        "@fragment\nfn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {\n    let u = bitcast<vec4<u32>>(v);\n    return vec4<f32>(unpack4x8unorm(u.x).y, unpack4x8snorm(u.y).w, unpack2x16unorm(u.z).x, unpack2x16snorm(u.w).y);\n}\n",
    );
    let out = run(&p, words, &NoTextures);
    for (l, w) in words.iter().enumerate() {
        let want = [
            ops::div(((w[0] >> 8) & 0xff) as f32, 255.0),
            ops::div((w[1] >> 24) as i8 as f32, 127.0).max(-1.0),
            ops::div((w[2] & 0xffff) as f32, 65535.0),
            ops::div((w[3] >> 16) as i16 as f32, 32767.0).max(-1.0),
        ];
        assert_eq!(out[l].map(f32::from_bits), want, "unpack lane {l}");
        let v = lanes[l];
        assert!((want[0] - v[1].clamp(0.0, 1.0)).abs() <= 0.5 / 255.0 + 1e-6);
        assert!((want[3] - v[3].clamp(-1.0, 1.0)).abs() <= 0.5 / 32767.0 + 1e-6);
    }
}

#[test]
fn half_float_pack_unpack_and_quantize_round_to_nearest_even() {
    // Normal, half-denormal, overflow, rounding ties, NaN, infinity, zero and -0.
    let values: [f32; 16] = [
        1.0,
        -2.5,
        65504.0,
        65519.0,
        65520.0,
        1e-5,
        -3e-8,
        1.0 + 1.0 / 2048.0,
        1.0 + 3.0 / 2048.0,
        f32::NAN,
        f32::INFINITY,
        -0.0,
        0.0,
        1e10,
        6.1e-5,
        0.333_333_34,
    ];
    let lanes: [[f32; 4]; 4] = std::array::from_fn(|l| std::array::from_fn(|c| values[l * 4 + c]));
    let got = eval(
        "",
        "vec4<f32>(bitcast<f32>(pack2x16float(v.xy)), bitcast<f32>(pack2x16float(v.zw)), quantizeToF16(v.xy))",
        lanes,
    );
    for (l, v) in lanes.iter().enumerate() {
        // Mesa's integer lowering turns every NaN into 0x7fff (softpipe's PK2H gives 0x7e00).
        let h = |x: f32| {
            if x.is_nan() {
                0x7fff
            } else {
                u32::from(ops::f32_to_f16(x))
            }
        };
        assert_eq!(got[l][0], h(v[0]) | h(v[1]) << 16, "pack lane {l} {v:?}");
        assert_eq!(got[l][1], h(v[2]) | h(v[3]) << 16, "pack lane {l} {v:?}");
        for c in 0..2 {
            let want = ops::f16_to_f32(ops::f32_to_f16(v[c]));
            let g = f32::from_bits(got[l][2 + c]);
            assert!(
                g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                "quantize {} → {g}, want {want}",
                v[c]
            );
        }
    }
    // unpack2x16float of every interesting half pattern.
    let halves: [u32; 8] = [
        0x3c00, 0xc100, 0x7bff, 0x0001, 0x83ff, 0x7c00, 0xfe00, 0x8000,
    ];
    let words: [[u32; 4]; 4] =
        std::array::from_fn(|l| [halves[2 * l] | halves[2 * l + 1] << 16, 0, 0, 0]);
    let p = lower("@fragment\nfn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {\n    return vec4<f32>(unpack2x16float(bitcast<u32>(v.x)), 0.0, 0.0);\n}\n");
    let out = run(&p, words, &NoTextures);
    for l in 0..4 {
        for c in 0..2 {
            let want = ops::f16_to_f32(halves[2 * l + c] as u16);
            let g = f32::from_bits(out[l][c]);
            assert!(
                g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                "unpack {:#x} → {g}, want {want}",
                halves[2 * l + c]
            );
        }
    }
}

#[test]
fn bit_counting_functions() {
    let ints: [[u32; 4]; 4] = [
        [0, 1, 0x8000_0000, 0xffff_ffff],
        [0x10, 0x0f00, 7, 0x4000_0000],
        [0xffff_fffe, 3, 0x100, 0x7fff_ffff],
        [0x8000_0001, 0x20, 5, 0],
    ];
    let p = lower("@fragment\nfn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {\n    let u = bitcast<vec4<u32>>(v);\n    let i = bitcast<vec4<i32>>(v);\n    return bitcast<vec4<f32>>(vec4<u32>(countLeadingZeros(u.x), countTrailingZeros(u.y), bitcast<u32>(countLeadingZeros(i.z)), bitcast<u32>(countTrailingZeros(i.w))));\n}\n");
    let out = run(&p, ints, &NoTextures);
    for (l, v) in ints.iter().enumerate() {
        let want = [
            v[0].leading_zeros(),
            v[1].trailing_zeros(),
            v[2].leading_zeros(),
            v[3].trailing_zeros(),
        ];
        assert_eq!(out[l], want, "lane {l}");
    }
}

/// Returns, per lane, (component, offset.x, offset.y, coordinate s) as floats.
struct GatherProbe;

impl TextureAccess for GatherProbe {
    fn sample(&self, _: &SampleRequest) -> QuadVec4 {
        [[0; 4]; 4]
    }
    fn gather(&self, r: &SampleRequest, component: u32) -> QuadVec4 {
        assert_eq!(r.lod, LodMode::Zero);
        [
            [(component as f32).to_bits(); 4],
            [(r.offset[0] as f32).to_bits(); 4],
            [(r.offset[1] as f32).to_bits(); 4],
            r.coords[if r.target == TextureTarget::Tex2DArray {
                2
            } else {
                0
            }]
            .map(f32::to_bits),
        ]
    }
    fn fetch(
        &self,
        _: u32,
        _: TextureTarget,
        _: [[i32; 4]; 4],
        _: [i32; 4],
        _: [i32; 3],
    ) -> QuadVec4 {
        [[0; 4]; 4]
    }
    fn size(&self, _: u32, _: TextureTarget, _: i32) -> [u32; 4] {
        [0; 4]
    }
    fn query_lod(&self, _: &SampleRequest) -> [[f32; 4]; 2] {
        [[0.0; 4]; 2]
    }
}

#[test]
fn texture_gather_is_tg4_with_component_and_offset() {
    let src = "@group(0) @binding(0) var t: texture_2d<f32>;\n@group(0) @binding(1) var s: sampler;\n@group(0) @binding(2) var ta: texture_2d_array<f32>;\n@fragment\nfn main(@location(0) v: vec4<f32>) -> @location(0) vec4<f32> {\n    let a = textureGather(2, t, s, v.xy, vec2<i32>(1, -2));\n    let b = textureGather(0, t, s, v.xy);\n    let c = textureGather(1, ta, s, v.xy, 3);\n    return a * 1000.0 + b * 100.0 + c;\n}\n";
    let p = lower(src);
    let tg4: Vec<_> = p
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::TG4)
        .collect();
    assert_eq!(tg4.len(), 3);
    let got = run(&p, LANES.map(|v| v.map(f32::to_bits)), &GatherProbe);
    for (l, v) in LANES.iter().enumerate() {
        let a = [2.0, 1.0, -2.0, v[0]];
        let b = [0.0, 0.0, 0.0, v[0]];
        let c = [1.0, 0.0, 0.0, 3.0];
        let want: [f32; 4] = std::array::from_fn(|i| a[i] * 1000.0 + b[i] * 100.0 + c[i]);
        assert_eq!(got[l].map(f32::from_bits), want, "lane {l}");
    }
}
