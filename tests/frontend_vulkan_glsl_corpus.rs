//! Measured coverage over a RetroArch slang-shaders checkout (not part of the repository):
//!
//! ```text
//! SLANG_SHADERS_DIR=/path/to/slang-shaders cargo test --test frontend_vulkan_glsl_corpus -- --ignored --nocapture
//! ```
//!
//! Prints how many `.slang` files preprocess, compile to SPIR-V, read and validate in naga and
//! lower to TGSI (both stages), and the most common failure reasons at each step.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

mod files_support;
use files_support::files_with_extension;
use std::sync::Mutex;

use softgpu::frontend::vulkan_glsl::{self, Stage};

/// A failure message with file names, quoted identifiers and numbers blanked so that the same
/// cause in different shaders counts once.
fn reason(message: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in message.chars() {
        match quote {
            Some(q) if c == q => {
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None if c == '\'' || c == '`' => {
                out.push(c);
                out.push('…');
                quote = Some(c);
            }
            None if c.is_ascii_digit() => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            None => out.push(c),
        }
    }
    out.chars().take(140).collect()
}

#[derive(Default)]
struct Tally {
    total: usize,
    preprocess: usize,
    spirv: usize,
    naga: usize,
    lower: usize,
    reasons: BTreeMap<(u8, String), (usize, String)>,
}

impl Tally {
    fn fail(&mut self, step: u8, message: &str, file: &Path) {
        let e = self
            .reasons
            .entry((step, reason(message)))
            .or_insert((0, file.display().to_string()));
        e.0 += 1;
    }
}

fn run_one(path: &Path, tally: &Mutex<Tally>) {
    let record = |step: u8, msg: &str| tally.lock().unwrap().fail(step, msg, path);
    let pre = match vulkan_glsl::preprocess_file(path) {
        Ok(p) => p,
        Err(e) => return record(0, &e.message),
    };
    tally.lock().unwrap().preprocess += 1;
    let mut words = Vec::new();
    for (src, stage) in [
        (&pre.vertex, Stage::Vertex),
        (&pre.fragment, Stage::Fragment),
    ] {
        match vulkan_glsl::glsl_to_spirv(src, stage) {
            Ok(w) => words.push((w, stage)),
            Err(e) => return record(1, &e.message),
        }
    }
    tally.lock().unwrap().spirv += 1;
    let mut stages = Vec::new();
    for ((w, stage), src) in words.into_iter().zip([&pre.vertex, &pre.fragment]) {
        match vulkan_glsl::compile_stage_from_spirv(src.clone(), stage, &w) {
            Ok(s) => stages.push(s),
            Err(e) => return record(2, &e.message),
        }
    }
    tally.lock().unwrap().naga += 1;
    for s in &stages {
        if let Err(e) = vulkan_glsl::lower_stage(s) {
            return record(3, &e.message);
        }
    }
    tally.lock().unwrap().lower += 1;
}

#[test]
#[ignore = "needs SLANG_SHADERS_DIR pointing at a libretro/slang-shaders checkout"]
fn slang_shaders_corpus() {
    let dir = std::env::var("SLANG_SHADERS_DIR").expect("set SLANG_SHADERS_DIR");
    let files = files_with_extension(Path::new(&dir), "slang");
    assert!(!files.is_empty(), "no .slang files under {dir}");
    let tally = Mutex::new(Tally {
        total: files.len(),
        ..Tally::default()
    });
    let next = Mutex::new(0usize);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(path) = files.get(i) else { break };
                if catch_unwind(AssertUnwindSafe(|| run_one(path, &tally))).is_err() {
                    tally.lock().unwrap().fail(9, "panic", path);
                }
            });
        }
    });
    let t = tally.into_inner().unwrap();
    println!("slang corpus: {} files", t.total);
    println!("  preprocess ok:          {}", t.preprocess);
    println!("  SPIR-V ok (both):       {}", t.spirv);
    println!("  naga ok (both):         {}", t.naga);
    println!("  lowered to TGSI (both): {}", t.lower);
    let steps = ["preprocess", "glslang", "naga", "lower"];
    let mut reasons: Vec<_> = t.reasons.into_iter().collect();
    reasons.sort_by_key(|r| std::cmp::Reverse(r.1 .0));
    println!("top failure reasons:");
    for ((step, why), (count, example)) in reasons.iter().take(40) {
        let step = steps.get(*step as usize).copied().unwrap_or("panic");
        println!("  {count:5} [{step}] {why}\n          e.g. {example}");
    }
}
