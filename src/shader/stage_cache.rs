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

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::cache::{program_of_entry, stored_program, BUILD_ID};
use crate::draw::{CompiledStage, UniformBlock};
use crate::ir::Processor;
use softgpu_cache::{Cache, Kind, Lookup};

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

/// What the entry of one stage's source is keyed by.
fn entry_key<'a>(
    language: &'a str,
    stage: Processor,
    source: &'a str,
) -> (&'static str, &'static str, &'a str, &'static str, &'a str) {
    (BUILD_ID, "draw", language, stage.name(), source)
}

/// The stage `stage` of `source` in `language` from the cache in `dir`, and what the lookup
/// found ([`StageCacheUse::Hit`] exactly when a stage is returned).
pub(super) fn load(
    dir: &Path,
    language: &str,
    stage: Processor,
    source: &str,
) -> (Option<CompiledStage>, StageCacheUse) {
    let cache = Cache::new(dir.to_path_buf());
    let key = entry_key(language, stage, source);
    let lookup = cache.load_json(Kind::Shader, &key, |entry: Entry| {
        let identical = entry.build == BUILD_ID
            && entry.language == language
            && entry.stage == stage.name()
            && entry.source == source;
        identical.then_some(())?;
        Some(CompiledStage {
            program: program_of_entry(&entry.program, stage)?,
            blocks: entry.blocks,
        })
    });
    match lookup {
        Lookup::Missing => (None, StageCacheUse::Miss),
        Lookup::Rejected => (None, StageCacheUse::Rejected),
        Lookup::Hit(compiled) => (Some(compiled), StageCacheUse::Hit),
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
    Cache::new(dir.to_path_buf()).store_json(
        Kind::Shader,
        &entry_key(language, stage, source),
        &entry,
    );
}
