//! Compile time of the JIT: a 1,000-instruction program (target ≤ 2 ms), the benchmark shaders,
//! and a kernel-cache hit.

use criterion::{criterion_group, criterion_main, Criterion};
use softgpu_jit::codegen::JitShader;
use softgpu_jit::ir::text::parse_program;
use softgpu_jit::ir::Program;

#[path = "../tests/bigprogram/mod.rs"]
mod bigprogram;
use bigprogram::big_program;

fn shader(name: &str) -> Program {
    let path = format!(
        "{}/../benches/shaders/{name}/fs.tgsi",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("benchmark shader exists");
    parse_program(&text).expect("benchmark shader parses")
}

fn bench(c: &mut Criterion) {
    let big = big_program(1000);
    assert_eq!(big.instructions.len(), 1000);
    c.bench_function("jit_compile_1000_instructions", |b| {
        b.iter(|| JitShader::compile_uncached(&big).expect("compiles"))
    });
    for name in ["tex_mul", "alu_loop", "math_builtins"] {
        let p = shader(name);
        c.bench_function(&format!("jit_compile_{name}"), |b| {
            b.iter(|| JitShader::compile_uncached(&p).expect("compiles"))
        });
    }
    let _keep = JitShader::compile(&big).expect("compiles");
    c.bench_function("jit_compile_cache_hit_1000", |b| {
        b.iter(|| JitShader::compile(&big).expect("compiles"))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
