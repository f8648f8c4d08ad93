//! The IR cleanup (`opt::cleanup`: unrolling, copy propagation, dead writes, register
//! compaction) must not change one output bit: every slang and WGSL shader in the repository is
//! lowered with and without it, and both programs run through the interpreter on the same
//! pseudo-random quads (varied live masks, constants and a bound texture on every unit) must
//! write the same bits and kill the same lanes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use softgpu::exec::{QuadIo, QuadShader, ShaderResources};
use softgpu::frontend::lower::{self, LoweredShader};
use softgpu::frontend::{vulkan_glsl, wgsl};
use softgpu::interp::Interpreter;
use softgpu::ir::{Opcode, RegisterFile};
use softgpu::texture::{Filter, SamplerState, Texture, TextureUnits, Wrap};

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

/// xorshift32: deterministic inputs without a dependency.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }

    /// Mostly ordinary floats in [-2, 2], sometimes raw bit patterns (ints, NaN, huge).
    fn value(&mut self) -> u32 {
        match self.next() % 8 {
            0 => self.next(),
            1 => self.next() % 16,
            _ => ((self.next() % 4001) as f32 / 1000.0 - 2.0).to_bits(),
        }
    }
}

fn texture() -> Arc<Texture> {
    let (w, h) = (8u32, 8u32);
    let data = (0..w * h * 4)
        .map(|i| (i * 37 % 251) as u8)
        .collect::<Vec<_>>();
    Arc::new(Texture::from_rgba8(w, h, data).unwrap())
}

fn compare(name: &str, plain: &LoweredShader, optimized: &LoweredShader) -> usize {
    let a = Interpreter::new(&plain.program).unwrap();
    let b = Interpreter::new(&optimized.program).unwrap();
    let sig = a.signature().clone();
    let mut units = TextureUnits::new();
    let sampler = SamplerState::new(Filter::Linear, Wrap::Repeat);
    for unit in 0..16 {
        units.bind(unit, texture(), sampler);
    }
    let mut rng = Rng(0x9E37_79B9);
    let buffers: Vec<Vec<[u32; 4]>> = (0..4)
        .map(|_| {
            (0..64)
                .map(|_| [rng.value(), rng.value(), rng.value(), rng.value()])
                .collect()
        })
        .collect();
    let refs: Vec<&[[u32; 4]]> = buffers.iter().map(|b| b.as_slice()).collect();
    let res = ShaderResources {
        constants: &refs,
        textures: &units,
        storage: Default::default(),
    };
    let mut checked = 0;
    for round in 0..48 {
        let inputs: Vec<[[u32; 4]; 4]> = (0..sig.num_inputs)
            .map(|_| {
                let mut r = [[0u32; 4]; 4];
                for chan in &mut r {
                    for lane in chan.iter_mut() {
                        // Inputs vary smoothly across the quad most of the time, so derivatives
                        // and texture LODs stay in a sensible range.
                        *lane = if round % 3 == 0 {
                            rng.value()
                        } else {
                            ((rng.next() % 1000) as f32 / 1000.0).to_bits()
                        };
                    }
                }
                r
            })
            .collect();
        let system_values: Vec<[[u32; 4]; 4]> = (0..sig.num_system_values)
            .map(|_| [[rng.next() % 64; 4]; 4])
            .collect();
        let live = [0xF, 0x7, 0x9, 0x1][round % 4];
        let mut out_a = vec![[[0u32; 4]; 4]; sig.num_outputs];
        let mut out_b = out_a.clone();
        let ka = a.shade_quad(
            &res,
            &mut QuadIo {
                inputs: &inputs,
                system_values: &system_values,
                outputs: &mut out_a,
                live,
            },
        );
        let kb = b.shade_quad(
            &res,
            &mut QuadIo {
                inputs: &inputs,
                system_values: &system_values,
                outputs: &mut out_b,
                live,
            },
        );
        match (ka, kb) {
            (Ok(ka), Ok(kb)) => {
                assert_eq!(ka, kb, "{name}: kill masks differ in round {round}");
                assert_eq!(out_a, out_b, "{name}: outputs differ in round {round}");
                checked += 1;
            }
            (Err(_), Err(_)) => {}
            (x, y) => panic!("{name}: one program failed in round {round}: {x:?} vs {y:?}"),
        }
    }
    checked
}

#[test]
fn optimized_programs_compute_the_same_bits() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut shaders = Vec::new();
    files(&root.join("tests"), "slang", &mut shaders);
    let mut wgsl_files = Vec::new();
    files(&root.join("tests"), "wgsl", &mut wgsl_files);
    files(&root.join("reference-images"), "wgsl", &mut wgsl_files);
    let (mut programs, mut removed, mut before) = (0usize, 0usize, 0usize);
    let (mut temps_before, mut temps_after) = (0u32, 0u32);
    let mut unrolled = 0usize;
    let mut check = |name: String, module: &naga::Module, info: &naga::valid::ModuleInfo, e| {
        let Ok(plain) = lower::lower_unoptimized(module, info, e, None, &name) else {
            return;
        };
        let optimized = lower::lower(module, info, e, None, &name).unwrap();
        let loops = |p: &softgpu::ir::Program| {
            p.instructions
                .iter()
                .filter(|i| i.opcode == Opcode::BGNLOOP)
                .count()
        };
        if loops(&plain.program) == 0 {
            // Unrolling grows programs with loops; the copy cleanup is measured on the others.
            before += plain.program.instructions.len();
            removed += plain.program.instructions.len() - optimized.program.instructions.len();
        } else if loops(&optimized.program) < loops(&plain.program) {
            unrolled += 1;
        }
        temps_before += plain.program.file_size(RegisterFile::Temporary);
        temps_after += optimized.program.file_size(RegisterFile::Temporary);
        if compare(&name, &plain, &optimized) > 0 {
            programs += 1;
        }
    };
    for path in &shaders {
        let Ok(shader) = vulkan_glsl::compile_slang(path) else {
            continue;
        };
        for stage in [&shader.vertex, &shader.fragment] {
            check(
                format!("{} ({})", path.display(), stage.stage.name()),
                &stage.module,
                &stage.info,
                stage.entry_index,
            );
        }
    }
    for path in &wgsl_files {
        let source = std::fs::read_to_string(path).unwrap();
        let Ok(parsed) = wgsl::parse(&source, &path.display().to_string()) else {
            continue;
        };
        for e in 0..parsed.module.entry_points.len() {
            check(
                format!("{} (entry {e})", path.display()),
                &parsed.module,
                &parsed.info,
                e,
            );
        }
    }
    assert!(programs >= 40, "only {programs} programs were compared");
    assert!(
        unrolled >= 5,
        "constant loops were unrolled in only {unrolled} programs"
    );
    // The cleanup must pay for itself on real lowered code.
    assert!(
        removed * 5 >= before,
        "only {removed} of {before} instructions were removed"
    );
    assert!(
        temps_after * 3 <= temps_before,
        "compaction left {temps_after} of {temps_before} temporaries"
    );
}

/// The same check on every `.slang` of libretro/slang-shaders (not committed):
/// `SLANG_SHADERS_DIR=/path/to/slang-shaders cargo test --release --test opt_cleanup -- --ignored`.
#[test]
#[ignore]
fn optimized_corpus_programs_compute_the_same_bits() {
    let Ok(dir) = std::env::var("SLANG_SHADERS_DIR") else {
        panic!("set SLANG_SHADERS_DIR to a checkout of libretro/slang-shaders");
    };
    let mut shaders = Vec::new();
    files(Path::new(&dir), "slang", &mut shaders);
    shaders.sort();
    let (mut programs, mut temps_before, mut temps_after) = (0usize, 0u64, 0u64);
    for path in &shaders {
        let Ok(shader) = vulkan_glsl::compile_slang(path) else {
            continue;
        };
        for stage in [&shader.vertex, &shader.fragment] {
            let name = format!("{} ({})", path.display(), stage.stage.name());
            let (module, info, e) = (&stage.module, &stage.info, stage.entry_index);
            let Ok(plain) = lower::lower_unoptimized(module, info, e, None, &name) else {
                continue;
            };
            let optimized = lower::lower(module, info, e, None, &name).unwrap();
            temps_before += plain.program.file_size(RegisterFile::Temporary) as u64;
            temps_after += optimized.program.file_size(RegisterFile::Temporary) as u64;
            if compare(&name, &plain, &optimized) > 0 {
                programs += 1;
            }
        }
    }
    eprintln!("{programs} programs compared; temporaries {temps_before} -> {temps_after}");
    assert!(programs > 1000, "only {programs} programs were compared");
}
