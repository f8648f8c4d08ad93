//! Per-quad throughput of the JIT against the interpreter on the benchmark shaders (one thread,
//! shader work only: the texture unit returns a constant texel, so sampling cost is excluded).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use softgpu_jit::codegen::JitShader;
use softgpu_jit::exec::{
    QuadBatch, QuadIo, QuadShader, QuadVec4, SampleRequest, ShaderResources, TextureAccess,
};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;
use softgpu_jit::ir::TextureTarget;

struct FlatTexture;

impl TextureAccess for FlatTexture {
    fn sample(&self, r: &SampleRequest) -> QuadVec4 {
        [r.coords[0], r.coords[1], [0.5f32; 4], [1.0f32; 4]].map(|c| c.map(f32::to_bits))
    }
    fn gather(&self, r: &SampleRequest, _: u32) -> QuadVec4 {
        self.sample(r)
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
        [1; 4]
    }
    fn query_lod(&self, _: &SampleRequest) -> [[f32; 4]; 2] {
        [[0.0; 4]; 2]
    }
}

const QUADS: usize = 1024;

fn run_all(shader: &dyn QuadShader, inputs: &[[QuadVec4; 1]], consts: &[[u32; 4]]) -> u32 {
    let bufs: [&[[u32; 4]]; 1] = [consts];
    let res = ShaderResources {
        constants: &bufs,
        textures: &FlatTexture,
        storage: Default::default(),
    };
    let mut acc = 0u32;
    let mut outputs = [[[0u32; 4]; 4]; 1];
    for inp in inputs {
        let mut io = QuadIo {
            inputs: inp,
            system_values: &[],
            outputs: &mut outputs,
            live: 0xF,
        };
        acc ^= shader.shade_quad(&res, &mut io).expect("runs") as u32;
        acc ^= outputs[0][0][0];
    }
    acc
}

/// The same quads as one `shade_quads` batch (how the rasterizer calls a shader).
fn run_batch(shader: &dyn QuadShader, inputs: &[QuadVec4], consts: &[[u32; 4]]) -> u32 {
    let bufs: [&[[u32; 4]]; 1] = [consts];
    let res = ShaderResources {
        constants: &bufs,
        textures: &FlatTexture,
        storage: Default::default(),
    };
    let n = inputs.len();
    let mut outputs = vec![[[0u32; 4]; 4]; n];
    let live = vec![0xFu8; n];
    let mut killed = vec![0u8; n];
    let mut batch = QuadBatch {
        count: n,
        inputs,
        inputs_stride: 1,
        system_values: &[],
        system_values_stride: 0,
        outputs: &mut outputs,
        outputs_stride: 1,
        live: &live,
        killed: &mut killed,
    };
    shader.shade_quads(&res, &mut batch).expect("runs");
    outputs
        .iter()
        .zip(&killed)
        .fold(0, |acc, (o, &k)| acc ^ k as u32 ^ o[0][0])
}

fn bench(c: &mut Criterion) {
    let inputs: Vec<[QuadVec4; 1]> = (0..QUADS)
        .map(|q| {
            let (x, y) = ((q % 32) as f32 / 32.0, (q / 32) as f32 / 32.0);
            let d = 1.0 / 64.0;
            [[
                [x, x + d, x, x + d].map(f32::to_bits),
                [y, y, y + d, y + d].map(f32::to_bits),
                [0; 4],
                [1.0f32.to_bits(); 4],
            ]]
        })
        .collect();
    let consts: Vec<[u32; 4]> = (0..8)
        .map(|i| [1.0f32, 0.5, 0.25, i as f32].map(f32::to_bits))
        .collect();
    let mut group = c.benchmark_group("shade_quads");
    group.throughput(Throughput::Elements(QUADS as u64));
    for name in ["tex_mul", "alu_loop", "math_builtins", "const_color"] {
        let path = format!(
            "{}/../benches/shaders/{name}/fs.tgsi",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("benchmark shader exists");
        let program = parse_program(&text).expect("parses");
        let interp = Interpreter::new(&program).expect("interpreter accepts it");
        let jit = JitShader::compile(&program).expect("JIT compiles it");
        assert_eq!(
            run_all(&interp, &inputs, &consts),
            run_all(&jit, &inputs, &consts),
            "{name}: JIT and interpreter disagree"
        );
        group.bench_function(format!("{name}/interp"), |b| {
            b.iter(|| run_all(&interp, &inputs, &consts))
        });
        group.bench_function(format!("{name}/jit"), |b| {
            b.iter(|| run_all(&jit, &inputs, &consts))
        });
        let flat: Vec<QuadVec4> = inputs.iter().map(|q| q[0]).collect();
        assert_eq!(
            run_batch(&interp, &flat, &consts),
            run_batch(&jit, &flat, &consts),
            "{name}: JIT and interpreter batches disagree"
        );
        group.bench_function(format!("{name}/jit_batch"), |b| {
            b.iter(|| run_batch(&jit, &flat, &consts))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
