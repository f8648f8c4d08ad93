//! glslang compiles from several threads at once (`frontend::vulkan_glsl::glsl_to_spirv` takes no lock):
//! every stage of the repository's `.slang` files, compiled by eight threads at the same time
//! over and over, must give the SPIR-V words a one-thread compile gives.
//!
//! The ignored twin does the same over a RetroArch slang-shaders checkout:
//!
//! ```text
//! SLANG_SHADERS_DIR=/path/to/slang-shaders cargo test --release --test frontend_vulkan_glsl_threads -- --ignored
//! ```

use std::path::{Path, PathBuf};

mod files_support;
use files_support::files_with_extension;
use std::sync::atomic::{AtomicUsize, Ordering};

use softgpu::frontend::vulkan_glsl::{glsl_to_spirv, preprocess_file, Stage, StageSource};

/// One stage to compile and what a one-thread compile gave for it.
type Job = (StageSource, Stage, Result<Vec<u32>, String>);

/// Every stage of `files` that preprocesses, with its serial compile result (SPIR-V or the
/// error text: failures must be the same failures).
fn serial(files: &[PathBuf]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for f in files {
        let Ok(pre) = preprocess_file(f) else {
            continue;
        };
        for (source, stage) in [(pre.vertex, Stage::Vertex), (pre.fragment, Stage::Fragment)] {
            let expected = glsl_to_spirv(&source, stage).map_err(|e| e.to_string());
            jobs.push((source, stage, expected));
        }
    }
    jobs
}

/// Compiles every job `rounds` times from `threads` threads at once; returns the mismatches.
fn concurrent(jobs: &[Job], threads: usize, rounds: usize) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let total = jobs.len() * rounds;
    let mismatches = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let (source, stage, expected) = &jobs[i % jobs.len()];
                let got = glsl_to_spirv(source, *stage).map_err(|e| e.to_string());
                if &got != expected {
                    let name = source.line_map.files.first().cloned().unwrap_or_default();
                    mismatches
                        .lock()
                        .unwrap()
                        .push(format!("{name} ({}): differs", stage.name()));
                }
            });
        }
    });
    mismatches.into_inner().unwrap()
}

#[test]
fn concurrent_compiles_equal_serial_ones() {
    let files = files_with_extension(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        "slang",
    );
    let jobs = serial(&files);
    assert!(jobs.len() >= 60, "only {} stages found", jobs.len());
    assert!(jobs.iter().filter(|j| j.2.is_ok()).count() >= 60);
    let mismatches = concurrent(&jobs, 8, 3);
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}

#[test]
#[ignore = "needs SLANG_SHADERS_DIR (a libretro/slang-shaders checkout); minutes"]
fn concurrent_compiles_equal_serial_ones_on_the_corpus() {
    let dir = std::env::var("SLANG_SHADERS_DIR").expect("SLANG_SHADERS_DIR");
    let files = files_with_extension(Path::new(&dir), "slang");
    let jobs = serial(&files);
    eprintln!("{} stages", jobs.len());
    let mismatches = concurrent(&jobs, 4, 1);
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}
