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
use crate::chain::shader_cache::{program_of_entry, stored_program, BUILD_ID, MAX_CACHE_BYTES};
use crate::ir::Processor;
use softgpu_cache::{hash128, mark_used, prune, read_entry, write_atomically, Read};

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
    let entry = match read_entry::<Entry>(&path) {
        Read::Missing => return (None, StageCacheUse::Miss),
        Read::Unusable => return (None, StageCacheUse::Rejected),
        Read::Entry(entry) => entry,
    };
    let compiled = (entry.build == BUILD_ID
        && entry.language == language
        && entry.stage == stage.name()
        && entry.source == source)
        .then(|| {
            Some(CompiledStage {
                program: program_of_entry(&entry.program, stage)?,
                blocks: entry.blocks,
            })
        })
        .flatten();
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
    let Some(program) = stored_program(&compiled.program) else {
        return;
    };
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
