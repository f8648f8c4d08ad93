//! Random quad inputs (NaN payloads, ±Inf, ±0, denormals, extreme integers, partial live
//! masks) and a deterministic texture double, shared by the JIT's differential tests.
#![allow(dead_code)]

use softgpu_jit::exec::{
    ExecError, LodMode, QuadIo, QuadShader, QuadVec4, SampleRequest, ShaderResources, TextureAccess,
};
use softgpu_jit::ir::TextureTarget;
use std::path::Path;

use super::splitmix::Rng;

pub const SPECIAL: &[u32] = &[
    0x0000_0000, // +0
    0x8000_0000, // -0
    0x3f80_0000, // 1
    0xbf80_0000, // -1
    0x3f00_0000, // 0.5
    0x7f80_0000, // +inf
    0xff80_0000, // -inf
    0x7fc0_0000, // NaN
    0xffc0_0001, // -NaN with payload
    0x7f80_0001, // signalling NaN
    0x0000_0001, // smallest denormal
    0x007f_ffff, // largest denormal
    0x8040_0000, // negative denormal
    0x0080_0000, // smallest normal
    0x7f7f_ffff, // f32::MAX
    0xff7f_ffff, // -f32::MAX
    0x4f00_0000, // 2^31
    0x4f80_0000, // 2^32
    0xcf00_0000, // -2^31
    0x3eff_ffff, // 0.49999997
    0x4060_0000, // 3.5
    0xc020_0000, // -2.5
    0x0080_0001, // just above the smallest normal
    0x0100_0000, // 2^-125
];

pub fn random_value(rng: &mut Rng) -> u32 {
    match rng.below(8) {
        0 | 1 => ((rng.next() % 20_000) as f32 / 1000.0 - 10.0).to_bits(),
        2 => rng.pick(SPECIAL),
        3 => (rng.below(13) as i32 - 4) as u32,
        4 => rng.pick(&[
            i32::MIN as u32,
            i32::MAX as u32,
            u32::MAX,
            0x8000_0001,
            31,
            32,
            33,
        ]),
        5 => rng.next() as u32,
        6 => {
            // Tiny normals (2^-67..2^-58): products of two are often denormal.
            let exp = 60 + rng.below(10) as u32;
            (rng.next() as u32 & 0x807f_ffff) | (exp << 23)
        }
        _ => {
            // Any float magnitude, including values that underflow when combined.
            let exp = rng.below(256) as u32;
            (rng.next() as u32 & 0x807f_ffff) | (exp << 23)
        }
    }
}

pub fn random_quad(rng: &mut Rng) -> QuadVec4 {
    let mut v = [[0u32; 4]; 4];
    for c in v.iter_mut() {
        // Often lane-uniform, so that uniform branches and equal lanes are exercised too.
        if rng.chance(25) {
            *c = [random_value(rng); 4];
        } else {
            for x in c.iter_mut() {
                *x = random_value(rng);
            }
        }
    }
    v
}

/// A deterministic texture unit whose results depend on every field of the request, so a JIT that
/// builds a different request gets different texels.
pub struct HashTextures;

pub fn mix(h: u64, x: u64) -> u64 {
    (h ^ x)
        .wrapping_mul(0x0000_0100_0000_01b3)
        .rotate_left(29)
        .wrapping_add(0x9e37_79b9)
}

pub fn texel(h: u64) -> QuadVec4 {
    let mut r = [[0u32; 4]; 4];
    for (c, ch) in r.iter_mut().enumerate() {
        for (l, x) in ch.iter_mut().enumerate() {
            let v = mix(h, (c * 4 + l) as u64 + 1);
            // A float in [0, 1) most of the time, raw bits sometimes.
            *x = if v.is_multiple_of(8) {
                v as u32
            } else {
                ((v >> 40) as f32 / (1u64 << 24) as f32).to_bits()
            };
        }
    }
    r
}

pub fn hash_request(r: &SampleRequest) -> u64 {
    let mut h = mix(r.view as u64, r.sampler as u64);
    h = mix(h, r.target as u64);
    for c in r.coords.iter().flatten() {
        h = mix(h, c.to_bits() as u64);
    }
    if let Some(cmp) = r.compare {
        for c in cmp {
            h = mix(h, c.to_bits() as u64 ^ 0x55);
        }
    }
    let lod: Vec<u32> = match r.lod {
        LodMode::Implicit => vec![1],
        LodMode::Zero => vec![2],
        LodMode::Bias(b) => std::iter::once(3).chain(b.map(f32::to_bits)).collect(),
        LodMode::Explicit(b) => std::iter::once(4).chain(b.map(f32::to_bits)).collect(),
        LodMode::Gradient { ddx, ddy } => std::iter::once(5)
            .chain(ddx.iter().flatten().map(|f| f.to_bits()))
            .chain(ddy.iter().flatten().map(|f| f.to_bits()))
            .collect(),
    };
    for x in lod {
        h = mix(h, x as u64);
    }
    for o in r.offset {
        h = mix(h, o as u64);
    }
    h
}

impl TextureAccess for HashTextures {
    fn sample(&self, request: &SampleRequest) -> QuadVec4 {
        texel(hash_request(request))
    }
    fn gather(&self, request: &SampleRequest, component: u32) -> QuadVec4 {
        texel(mix(hash_request(request), component as u64 + 77))
    }
    fn fetch(
        &self,
        view: u32,
        target: TextureTarget,
        coords: [[i32; 4]; 4],
        lod: [i32; 4],
        offset: [i32; 3],
    ) -> QuadVec4 {
        let mut h = mix(view as u64, target as u64);
        for c in coords
            .iter()
            .flatten()
            .chain(lod.iter())
            .chain(offset.iter())
        {
            h = mix(h, *c as u64);
        }
        texel(h)
    }
    fn size(&self, view: u32, target: TextureTarget, lod: i32) -> [u32; 4] {
        let h = mix(mix(view as u64, target as u64), lod as u64);
        [h as u32, (h >> 16) as u32, (h >> 32) as u32, 3]
    }
    fn query_lod(&self, request: &SampleRequest) -> [[f32; 4]; 2] {
        let t = texel(hash_request(request));
        [t[0].map(f32::from_bits), t[1].map(f32::from_bits)]
    }
}

/// One set of quad inputs.
pub struct Inputs {
    pub inputs: Vec<QuadVec4>,
    pub system_values: Vec<QuadVec4>,
    pub constants: Vec<Vec<[u32; 4]>>,
    pub outputs: Vec<QuadVec4>,
    pub live: u8,
}

pub fn random_inputs(rng: &mut Rng, n_in: usize, n_sv: usize, n_out: usize) -> Inputs {
    let constants = (0..2)
        .map(|_| {
            (0..8 + rng.below(8))
                .map(|_| [0; 4].map(|_: u32| random_value(rng)))
                .collect()
        })
        .collect();
    Inputs {
        inputs: (0..n_in).map(|_| random_quad(rng)).collect(),
        system_values: (0..n_sv).map(|_| random_quad(rng)).collect(),
        constants,
        outputs: (0..n_out).map(|_| random_quad(rng)).collect(),
        live: if rng.chance(60) {
            0xF
        } else {
            rng.below(16) as u8
        },
    }
}

pub fn run(shader: &dyn QuadShader, inp: &Inputs) -> (Result<u8, ExecError>, Vec<QuadVec4>) {
    run_with(shader, inp, &HashTextures)
}

pub fn run_with(
    shader: &dyn QuadShader,
    inp: &Inputs,
    textures: &dyn TextureAccess,
) -> (Result<u8, ExecError>, Vec<QuadVec4>) {
    let consts: Vec<&[[u32; 4]]> = inp.constants.iter().map(|c| c.as_slice()).collect();
    let res = ShaderResources {
        constants: &consts,
        textures,
        storage: Default::default(),
    };
    let mut outputs = inp.outputs.clone();
    let mut io = QuadIo {
        inputs: &inp.inputs,
        system_values: &inp.system_values,
        outputs: &mut outputs,
        live: inp.live,
    };
    let r = shader.shade_quad(&res, &mut io);
    (r, outputs)
}

/// The kernel entries (`*.kernel`) of an on-disk kernel cache directory (none when it does not
/// exist).
pub fn kernel_entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut list: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    list.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|e| e == "kernel"));
    list
}

/// The TGSI programs of the test suite, the reference images and the bench shaders.
pub fn tgsi_files() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    if let Ok(dir) = std::fs::read_dir(root.join("tests/data/tgsi")) {
        for e in dir.flatten() {
            if e.path().extension().is_some_and(|x| x == "tgsi") {
                files.push(e.path());
            }
        }
    }
    if let Ok(dir) = std::fs::read_dir(root.join("../reference-images/draw")) {
        for e in dir.flatten() {
            let p = e.path().join("fs.tgsi");
            if p.exists() {
                files.push(p);
            }
        }
    }
    if let Ok(dir) = std::fs::read_dir(root.join("../benches/shaders")) {
        for e in dir.flatten() {
            let p = e.path().join("fs.tgsi");
            if p.exists() {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}
