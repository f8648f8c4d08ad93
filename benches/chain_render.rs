//! Filter-chain frames at 1920x1080 from a 320x240 input, side by side with librashader on Mesa
//! lavapipe measured in the same run.
//!
//! `cargo bench --bench chain_render` prints criterion's per-frame times for the project's own
//! bench presets (`tests/chain/bench/`: a crt-lottes-class single heavy pass, a crt-royale-class
//! multi-pass chain, a two-pass NTSC chain), then a table of frames/s with the peer's, taken by
//! `tools/chain_peer_speed.sh` as (time for N+K frames − time for K frames) / N. Each preset runs
//! twice: with the default glibc-exact math and with `--math llvmpipe` (the peer's own EX2, LG2,
//! POW, SIN and COS, bit for bit: the like-for-like comparison). Set
//! `SOFTGPU_BENCH_PEERS=0` to skip the peer (e.g. without librashader-cli or Vulkan).

mod support;

use criterion::{criterion_group, Criterion};
use softgpu::chain::{ChainOptions, FilterChain, FrameOptions};
use softgpu::ir::MathMode;
use softgpu::texture::Texture;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

const VIEWPORT: (u32, u32) = (1920, 1080);
const PRESETS: [&str; 3] = ["crt-lottes-class", "crt-royale-class", "ntsc-class"];
const GROUP: &str = "chain_1080p";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn preset_path(name: &str) -> PathBuf {
    root()
        .join("tests/chain/bench")
        .join(format!("{name}.slangp"))
}

fn bench_chains(c: &mut Criterion) {
    let input = Arc::new(
        Texture::load(&root().join("tests/chain/inputs/scene320x240.png")).expect("bench input"),
    );
    let mut group = c.benchmark_group(GROUP);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(2));
    group.measurement_time(Duration::from_secs(10));
    for (name, math) in runs() {
        // Every measured frame draws every pass: with a still input, incremental frames would
        // otherwise reuse all of them after the first.
        let chain_options = ChainOptions {
            math,
            redraw_unchanged: true,
            ..Default::default()
        };
        let mut chain = FilterChain::load(&preset_path(name), &chain_options)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let options = FrameOptions::default();
        // Fill history and feedback first, so every measured frame is a steady-state frame.
        let mut frame = 0u64;
        for _ in 0..3 {
            chain.frame(&input, VIEWPORT, frame, &options).unwrap();
            frame += 1;
        }
        group.bench_function(bench_id(name, math), |b| {
            b.iter(|| {
                let out = chain.frame(&input, VIEWPORT, frame, &options).unwrap();
                frame += 1;
                out
            })
        });
    }
    group.finish();
}

/// Every bench preset in every math mode.
fn runs() -> impl Iterator<Item = (&'static str, MathMode)> {
    PRESETS
        .into_iter()
        .flat_map(|n| MathMode::ALL.map(|m| (n, m)))
}

/// The criterion id of `preset` in `math`: the preset's name for the default math.
fn bench_id(preset: &str, math: MathMode) -> String {
    match math {
        MathMode::Exact => preset.to_string(),
        _ => format!("{preset}-math-{math}"),
    }
}

/// The peer's frames/s per preset from `tools/chain_peer_speed.sh` (lines `name ms fps`).
fn peer_fps() -> Vec<(String, f64)> {
    let script = root().join("tools/chain_peer_speed.sh");
    let Ok(output) = Command::new("bash")
        .arg(script)
        .args(["20", "5", "2"])
        .output()
    else {
        return Vec::new();
    };
    if !output.status.success() {
        eprintln!(
            "peer speed script failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let name = parts.next()?.to_string();
            let fps = parts.nth(1)?.parse().ok()?;
            Some((name, fps))
        })
        .collect()
}

fn report_side_by_side() {
    let with_peer = std::env::var("SOFTGPU_BENCH_PEERS").map_or(true, |v| v != "0");
    let peer = if with_peer { peer_fps() } else { Vec::new() };
    println!("\nsoftgpu vs librashader on lavapipe (same run, 1920x1080 from 320x240, frames/s)");
    println!(
        "{:<18} {:>8} {:>10} {:>12} {:>12}",
        "preset", "math", "softgpu", "librashader", "ratio"
    );
    for (name, math) in runs() {
        let ours = support::criterion_mean_seconds(GROUP, &bench_id(name, math)).map(|s| 1.0 / s);
        let theirs = peer.iter().find(|(n, _)| n == name).map(|(_, f)| *f);
        let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        let ratio = match (ours, theirs) {
            (Some(a), Some(b)) => format!("{:.2}x", a / b),
            _ => "-".to_string(),
        };
        println!(
            "{:<18} {:>8} {:>10} {:>12} {:>12}",
            name,
            math.name(),
            fmt(ours),
            fmt(theirs),
            ratio
        );
    }
}

criterion_group!(benches, bench_chains);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    report_side_by_side();
}
