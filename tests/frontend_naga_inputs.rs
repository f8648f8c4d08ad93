//! The naga repository's own WGSL and GLSL test inputs through our frontends (issue #4 item 6).
//! The inputs are not part of this repository: fetch gfx-rs/wgpu and point `NAGA_INPUTS_DIR` at
//! its `naga/tests/in` directory:
//!
//! ```text
//! NAGA_INPUTS_DIR=/tmp/wgpu/naga/tests/in cargo test --test frontend_naga_inputs -- --ignored --nocapture
//! ```
//!
//! Every `.wgsl` file (top level and `wgsl/`) goes through `frontend::wgsl` (naga's WGSL reader
//! and validator) and every `@vertex`/`@fragment` entry point is lowered. Every `.vert`/`.frag`
//! file under `glsl/` goes through the slang frontend's GLSL path — glslang (Vulkan GLSL) →
//! SPIR-V → our SPIR-V rewrites → naga's SPIR-V reader — which is the path real shaders take
//! here (naga's own GLSL reader is not built in). Files without a vertex or fragment entry point
//! (compute-only) are counted apart. A file that fails must be listed, with its reason, in
//! `tests/data/naga_inputs_exclusions.txt`; a listed file that now passes fails the test too, so
//! the list stays exact.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use softgpu::frontend::retroarch::{LineMap, Origin};
use softgpu::frontend::vulkan_glsl::{self, Stage, StageSource};
use softgpu::frontend::{lower, wgsl};

#[derive(Debug)]
enum Outcome {
    /// Number of entry points lowered.
    Lowered(usize),
    /// No vertex or fragment entry point.
    NotApplicable,
    Failed(String),
}

fn run_wgsl(path: &Path) -> Outcome {
    let Ok(source) = std::fs::read_to_string(path) else {
        return Outcome::Failed("cannot read".into());
    };
    let file = path.display().to_string();
    let parsed = match wgsl::parse(&source, &file) {
        Ok(p) => p,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    let mut lowered = 0;
    for (i, ep) in parsed.module.entry_points.iter().enumerate() {
        if !matches!(
            ep.stage,
            naga::ShaderStage::Vertex | naga::ShaderStage::Fragment
        ) {
            continue;
        }
        if let Err(e) = lower::lower(&parsed.module, &parsed.info, i, Some(&source), &file) {
            return Outcome::Failed(format!("entry point `{}`: {e}", ep.name));
        }
        lowered += 1;
    }
    if lowered == 0 {
        Outcome::NotApplicable
    } else {
        Outcome::Lowered(lowered)
    }
}

fn run_glsl(path: &Path, stage: Stage) -> Outcome {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Outcome::Failed("cannot read".into());
    };
    let lines = (1..=text.lines().count() as u32 + 1)
        .map(|line| Origin { file: 0, line })
        .collect();
    let source = StageSource {
        text,
        line_map: LineMap {
            files: vec![path.display().to_string()],
            lines,
        },
    };
    let file = path.display().to_string();
    // glslang → SPIR-V → our rewrites → naga, as `vulkan_glsl::compile_stage` does, without the
    // RetroArch-specific reflection (which allows one uniform buffer per stage).
    let result = vulkan_glsl::glsl_to_spirv(&source, stage)
        .and_then(|words| vulkan_glsl::spirv_to_naga(&words, stage, &file))
        .and_then(|(module, info, _)| {
            let naga_stage = match stage {
                Stage::Vertex => naga::ShaderStage::Vertex,
                Stage::Fragment => naga::ShaderStage::Fragment,
            };
            let entry = module
                .entry_points
                .iter()
                .position(|ep| ep.stage == naga_stage)
                .ok_or_else(|| {
                    softgpu::frontend::FrontendError::new(&file, 0, 0, "no entry point")
                })?;
            lower::lower(&module, &info, entry, None, &file)
        });
    match result {
        Ok(_) => Outcome::Lowered(1),
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.is_file()
                        && p.extension()
                            .and_then(|x| x.to_str())
                            .is_some_and(|x| exts.contains(&x))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// `name: reason` lines of the exclusion list (`#` comments and blank lines skipped).
fn exclusions() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/naga_inputs_exclusions.txt");
    let text = std::fs::read_to_string(&path).expect("exclusion list");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, reason) = l
                .split_once(':')
                .unwrap_or_else(|| panic!("exclusion line without `name: reason`: {l}"));
            assert!(!reason.trim().is_empty(), "exclusion without a reason: {l}");
            (name.trim().to_string(), reason.trim().to_string())
        })
        .collect()
}

#[test]
#[ignore = "needs NAGA_INPUTS_DIR pointing at gfx-rs/wgpu's naga/tests/in"]
fn naga_test_inputs_lower() {
    let dir = PathBuf::from(std::env::var("NAGA_INPUTS_DIR").expect("set NAGA_INPUTS_DIR"));
    let mut jobs: Vec<(String, PathBuf, Option<Stage>)> = Vec::new();
    for sub in [dir.clone(), dir.join("wgsl")] {
        for p in files(&sub, &["wgsl"]) {
            let name = p.strip_prefix(&dir).unwrap_or(&p).display().to_string();
            jobs.push((name, p, None));
        }
    }
    for p in files(&dir.join("glsl"), &["vert", "frag", "comp", "glsl"]) {
        let name = p.strip_prefix(&dir).unwrap_or(&p).display().to_string();
        let stage = match p.extension().and_then(|x| x.to_str()) {
            Some("vert") => Some(Stage::Vertex),
            Some("frag") => Some(Stage::Fragment),
            _ => None,
        };
        jobs.push((name, p, stage));
    }
    assert!(!jobs.is_empty(), "no inputs under {}", dir.display());
    let excluded = exclusions();
    let mut counts = BTreeMap::<&str, usize>::new();
    let mut entry_points = 0;
    let mut unexpected = Vec::new();
    for (name, path, stage) in &jobs {
        let is_glsl = name.starts_with("glsl");
        let outcome = catch_unwind(AssertUnwindSafe(|| match (is_glsl, stage) {
            (false, _) => run_wgsl(path),
            (true, Some(s)) => run_glsl(path, *s),
            (true, None) => Outcome::NotApplicable,
        }))
        .unwrap_or_else(|_| Outcome::Failed("panic".into()));
        let lang = if is_glsl { "glsl" } else { "wgsl" };
        match outcome {
            Outcome::Lowered(n) => {
                entry_points += n;
                *counts
                    .entry(if is_glsl { "glsl ok" } else { "wgsl ok" })
                    .or_default() += 1;
                if let Some(why) = excluded.get(name) {
                    unexpected.push(format!("{name}: lowers now but is excluded ({why})"));
                }
            }
            Outcome::NotApplicable => {
                *counts
                    .entry(if is_glsl { "glsl n/a" } else { "wgsl n/a" })
                    .or_default() += 1;
            }
            Outcome::Failed(why) => {
                *counts
                    .entry(if is_glsl {
                        "glsl failed"
                    } else {
                        "wgsl failed"
                    })
                    .or_default() += 1;
                let first = why.lines().next().unwrap_or("").to_string();
                match excluded.get(name) {
                    Some(reason) => {
                        println!("  excluded [{lang}] {name}: {reason}\n      ({first})")
                    }
                    None => unexpected.push(format!("{name}: {first}")),
                }
            }
        }
    }
    for name in excluded.keys() {
        if !jobs.iter().any(|(n, _, _)| n == name) {
            unexpected.push(format!("{name}: excluded but not among the inputs"));
        }
    }
    println!("naga inputs: {} files", jobs.len());
    for (k, v) in &counts {
        println!("  {k:12} {v}");
    }
    println!("  vertex/fragment entry points lowered: {entry_points}");
    assert!(
        unexpected.is_empty(),
        "{} unexpected result(s):\n  {}",
        unexpected.len(),
        unexpected.join("\n  ")
    );
}
