//! `softgpu draw`'s share of the on-disk shader cache: what glslang, naga and the lowering make of
//! one stage of a `.slang` or `.wgsl` file (a slang stage spends ~100 ms in glslang; the draw
//! itself often takes a few).
//!
//! An entry lives in the same directory as the filter chain's (see
//! [`crate::chain::shader_cache`]) and follows the same rules: keyed by the build, the language,
//! the stage and the stage's source text (for slang the preprocessed text, includes expanded);
//! used only when all four equal the current ones character for character and its program
//! parses, validates and is of the expected stage; anything else is compiled again and the
//! entry replaced. TGSI files are not cached: parsing them is what a hit would do anyway.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{CompiledStage, UniformBlock};
use crate::chain::shader_cache::{BUILD_ID, MAX_CACHE_BYTES};
use crate::ir::text::{parse_program, print_program};
use crate::ir::{validate::validate, Processor};
use softgpu_jit::codegen::disk::{
    hash128, mark_used, prune, read_entry_file, write_atomically, EntryFile,
};

/// What the cache did for one stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageCacheUse {
    /// No cache was given, or the language is not cached (TGSI).
    Uncached,
    /// The stage came from its entry.
    Hit,
    /// No entry existed: the stage was compiled (and its entry written if the directory takes it).
    Miss,
    /// An entry existed but was unusable (corrupt, another build's, another text under a
    /// colliding name): the stage was compiled and the entry replaced.
    Rejected,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    build: String,
    language: String,
    stage: String,
    source: String,
    program: String,
    blocks: Vec<UniformBlock>,
}

/// Where the entry of one stage's source lives in `dir`.
fn entry_path(dir: &Path, language: &str, stage: Processor, source: &str) -> PathBuf {
    let name = hash128(&(BUILD_ID, "draw", language, stage.name(), source));
    dir.join(format!("{name:032x}.json"))
}

/// The stage `stage` of `source` in `language` from the cache in `dir`, and what the lookup
/// found ([`StageCacheUse::Hit`] exactly when a stage is returned).
pub(super) fn load(
    dir: &Path,
    language: &str,
    stage: Processor,
    source: &str,
) -> (Option<CompiledStage>, StageCacheUse) {
    let path = entry_path(dir, language, stage, source);
    let bytes = match read_entry_file(&path) {
        EntryFile::Missing => return (None, StageCacheUse::Miss),
        EntryFile::Unusable => return (None, StageCacheUse::Rejected),
        EntryFile::Bytes(bytes) => bytes,
    };
    let compiled = serde_json::from_slice::<Entry>(&bytes)
        .ok()
        .filter(|e| {
            e.build == BUILD_ID
                && e.language == language
                && e.stage == stage.name()
                && e.source == source
        })
        .and_then(|entry| {
            let program = parse_program(&entry.program).ok()?;
            (program.processor == stage && validate(&program).is_ok()).then_some(CompiledStage {
                program,
                blocks: entry.blocks,
            })
        });
    match compiled {
        Some(compiled) => {
            mark_used(&path);
            (Some(compiled), StageCacheUse::Hit)
        }
        None => (None, StageCacheUse::Rejected),
    }
}

/// Writes the entry of `compiled`, the stage `stage` of `source`, into `dir`; a program that
/// does not survive a print/parse trip unchanged, or a directory that cannot be written, only
/// loses the entry.
pub(super) fn store(
    dir: &Path,
    language: &str,
    stage: Processor,
    source: &str,
    compiled: &CompiledStage,
) {
    let program = print_program(&compiled.program);
    if parse_program(&program).ok().as_ref() != Some(&compiled.program) {
        return;
    }
    let entry = Entry {
        build: BUILD_ID.to_string(),
        language: language.to_string(),
        stage: stage.name().to_string(),
        source: source.to_string(),
        program,
        blocks: compiled.blocks.clone(),
    };
    let Ok(bytes) = serde_json::to_vec(&entry) else {
        return;
    };
    let path = entry_path(dir, language, stage, source);
    if write_atomically(dir, &path, &bytes).is_ok() {
        prune(dir, MAX_CACHE_BYTES);
    }
}
