//! Full-screen 1920x1080 draws through the JIT and the reference interpreter, side by side with
//! Mesa's softpipe and llvmpipe measured in the same run.
//!
//! Each iteration draws into the same target (`draw::draw_into`), as the peer's loop draws its N
//! frames into one framebuffer; `draw_1080p_jit_fresh_target` measures `draw::run_with`, which
//! allocates and zero-fills a new 8 MB target per draw, as a one-shot `softgpu draw` does.
//!
//! `cargo bench --bench interp_draw` prints criterion's numbers, then a table of Mpix/s and
//! ratios (llvmpipe's figure the median of three runs). The peers run through `mesa_run.py
//! --frames N` (path from `MESA_RUN`, default `../shared/peers/mesa_run.py`); set
//! `SOFTGPU_BENCH_PEERS=0` to skip them (e.g. without Mesa).

mod support;

use criterion::measurement::WallTime;
use criterion::{criterion_group, BenchmarkGroup, Criterion, Throughput};
use softgpu::draw::{self, DrawJob, StageConstants};
use softgpu::ir::MathMode;
use softgpu::ir::Processor;
use softgpu::raster::ClipConvention;
use softgpu::shader::{self, Executor};
use softgpu::texture::{Filter, Format, Texture, Wrap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

const WIDTH: u32 = 1920;
const HEIGHT: u32 = 1080;
const SHADERS: [&str; 4] = ["tex_mul", "alu_loop", "math_builtins", "const_color"];
const GROUPS: [(&str, Executor); 2] = [
    ("draw_1080p_jit", Executor::Jit),
    ("draw_1080p_interp", Executor::Interp),
];
/// The JIT with `--math llvmpipe` (llvmpipe's own EX2/LG2/POW/SIN/COS, bit for bit) on the
/// shaders that use them: the like-for-like comparison with llvmpipe.
const LP_GROUP: &str = "draw_1080p_jit_math_llvmpipe";
const LP_SHADERS: [&str; 1] = ["math_builtins"];
/// The JIT through `draw::run_with`, which allocates and zero-fills a new 8 MB target per draw:
/// what a one-shot `softgpu draw` pays on top of the draw itself.
const FRESH_GROUP: &str = "draw_1080p_jit_fresh_target";
const FRESH_SHADERS: [&str; 2] = ["tex_mul", "const_color"];

fn shader_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches/shaders")
        .join(name)
}

fn load_job(name: &str) -> DrawJob {
    let dir = shader_dir(name);
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).expect("bench shader files");
    DrawJob {
        vertex_program: shader::load_program(&dir.join("vs.tgsi"), Processor::Vertex).unwrap(),
        fragment_program: shader::load_program(&dir.join("fs.tgsi"), Processor::Fragment).unwrap(),
        vertices: draw::parse_vertices(&dir.join("vertices.txt"), &read("vertices.txt")).unwrap(),
        constants: draw::parse_constants(&dir.join("consts.txt"), &read("consts.txt")).unwrap(),
        textures: vec![(0, Arc::new(Texture::load(&dir.join("tex0.png")).unwrap()))],
        sampler: draw::sampler_state(Filter::Linear, Wrap::Repeat),
        size: (WIDTH, HEIGHT),
        convention: ClipConvention::OpenGl,
        math: MathMode::Exact,
        driver: softgpu::driver::Driver::Softpipe,
    }
}

/// A criterion group of full-screen draws: 10 samples over 8 s, throughput in pixels.
fn draw_group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(8));
    group.throughput(Throughput::Elements(u64::from(WIDTH * HEIGHT)));
    group
}

fn bench_draws(c: &mut Criterion) {
    let runs: [(&str, Executor, MathMode, &[&str]); 3] = [
        (GROUPS[0].0, GROUPS[0].1, MathMode::Exact, &SHADERS),
        (GROUPS[1].0, GROUPS[1].1, MathMode::Exact, &SHADERS),
        (LP_GROUP, Executor::Jit, MathMode::Llvmpipe, &LP_SHADERS),
    ];
    for (group_name, executor, math, shaders) in runs {
        let mut group = draw_group(c, group_name);
        for &name in shaders {
            let job = DrawJob {
                math,
                ..load_job(name)
            };
            // Like the peer's loop (`mesa_run.py --frames`: N draws into one framebuffer), every
            // iteration draws into the same target; FRESH_GROUP measures a new target per draw.
            let constants = StageConstants {
                vertex: vec![job.constants.clone()],
                fragment: vec![job.constants.clone()],
            };
            let mut target = Texture::new(Format::R8G8B8A8Unorm, WIDTH, HEIGHT, 1).unwrap();
            group.bench_function(name, |b| {
                b.iter(|| draw::draw_into(&job, &constants, executor, &mut target).unwrap())
            });
        }
        group.finish();
    }
    let mut group = draw_group(c, FRESH_GROUP);
    for name in FRESH_SHADERS {
        let job = load_job(name);
        group.bench_function(name, |b| {
            b.iter(|| draw::run_with(&job, Executor::Jit).unwrap())
        });
    }
    group.finish();
}

/// The peer's fill rate in Mpix/s from `mesa_run.py --frames`, or None when Mesa is missing.
fn peer_mpix(name: &str, driver: &str, frames: u32) -> Option<f64> {
    let script = std::env::var("MESA_RUN").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/peers/mesa_run.py").to_string()
    });
    let source = shader_dir("src").join(format!("{name}.frag"));
    let out = std::env::temp_dir().join(format!("softgpu-bench-{name}-{driver}"));
    let output = Command::new("python3")
        .arg(&script)
        .arg(&source)
        .arg(&out)
        .args(["--driver", driver, "--size", "1920x1080", "--frames"])
        .arg(frames.to_string())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    // "llvmpipe: 60 frames of 1920x1080 in 0.590s = 210.9 Mpix/s": recompute from the time.
    let seconds: f64 = text
        .split(" in ")
        .nth(1)?
        .split('s')
        .next()?
        .trim()
        .parse()
        .ok()?;
    Some(f64::from(WIDTH * HEIGHT) * f64::from(frames) / seconds / 1e6)
}

/// How many times llvmpipe's fill rate is measured per shader: one 60-frame run takes about half
/// a second and varied by up to 30% from one run to the next, so the median is reported.
const LLVMPIPE_RUNS: usize = 3;

/// The median of [`LLVMPIPE_RUNS`] measurements of `peer_mpix` (None when any fails).
fn median_peer_mpix(name: &str, driver: &str, frames: u32) -> Option<f64> {
    let mut rates = (0..LLVMPIPE_RUNS)
        .map(|_| peer_mpix(name, driver, frames))
        .collect::<Option<Vec<f64>>>()?;
    rates.sort_by(f64::total_cmp);
    Some(rates[rates.len() / 2])
}

fn report_side_by_side() {
    let with_peers = std::env::var("SOFTGPU_BENCH_PEERS").map_or(true, |v| v != "0");
    println!("\nsoftgpu vs Mesa 22.3 (same run, 1920x1080, Mpix/s)");
    println!(
        "{:<14} {:>9} {:>9} {:>9} {:>9} {:>11} {:>12} {:>11}",
        "shader",
        "jit",
        "interp",
        "softpipe",
        "llvmpipe",
        "jit/llvmp",
        "interp/softp",
        "jit/interp"
    );
    let mpix = |s: f64| f64::from(WIDTH * HEIGHT) / s / 1e6;
    let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}x", a / b),
        _ => "-".to_string(),
    };
    let mut llvmpipe_of = Vec::new();
    for name in SHADERS {
        let jit = support::criterion_mean_seconds(GROUPS[0].0, name).map(mpix);
        let interp = support::criterion_mean_seconds(GROUPS[1].0, name).map(mpix);
        let (softpipe, llvmpipe) = if with_peers {
            (
                peer_mpix(name, "softpipe", 2),
                median_peer_mpix(name, "llvmpipe", 60),
            )
        } else {
            (None, None)
        };
        llvmpipe_of.push((name, llvmpipe));
        println!(
            "{:<14} {:>9} {:>9} {:>9} {:>9} {:>11} {:>12} {:>11}",
            name,
            fmt(jit),
            fmt(interp),
            fmt(softpipe),
            fmt(llvmpipe),
            ratio(jit, llvmpipe),
            ratio(interp, softpipe),
            ratio(jit, interp)
        );
    }
    println!("\nwith --math llvmpipe (the JIT; llvmpipe's figure from the same run as above)");
    for name in LP_SHADERS {
        let jit = support::criterion_mean_seconds(LP_GROUP, name).map(mpix);
        let llvmpipe = llvmpipe_of
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| *v);
        println!(
            "{:<14} {:>9} {:>9} {:>9} {:>9} {:>11}",
            name,
            fmt(jit),
            "",
            "",
            fmt(llvmpipe),
            ratio(jit, llvmpipe)
        );
    }
}

criterion_group!(benches, bench_draws);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    report_side_by_side();
}
