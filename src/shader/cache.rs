//! The shader cache: what the frontends, the lowering and the cleanup made of a shader's
//! source, and what the filter chain's specialization made of a pass's fragment program, kept
//! in the on-disk cache (`softgpu-cache`) for later processes of the same build. Most of a
//! short job's start-up is there: crt-lottes spends ~135 ms of one core in glslang's built-in
//! symbol tables alone, a slang stage drawn once ~100 ms in glslang, Mega Bezel ~0.7 s of CPU
//! in specialization.
//!
//! Three kinds of entries, each holding programs as Mesa text (which round-trips exactly:
//! checked before storing) and keyed by the build ([`BUILD_ID`]: a hash of softgpu's sources
//! and `Cargo.lock`) and the full text of what they were made from:
//! - a filter-chain pass: the language and the preprocessed text of each stage (includes
//!   expanded) → both stages' programs, resource slots and reflection;
//! - a stage drawn by `softgpu draw`: the language, the stage and its source text (for slang
//!   the preprocessed text) → that stage's program, resource slots and reflection;
//! - a specialization (`.specialized`): a pass's fragment program, its frame-invariant
//!   constants and its texture units → the folded, rewritten program and its hoisted texel
//!   functions.
//!
//! An entry is used only when its build and inputs equal the current ones character for
//! character and its programs parse, validate and are of the expected stage; anything else — a
//! truncated, corrupt, foreign or stale file — is rejected, rebuilt and replaced. Writing,
//! naming and pruning are `softgpu-cache`'s.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use softgpu_cache::{Cache, Kind, Lookup};

use super::Stage;
use crate::frontend::lower::{LoweredShader, ResourceSlot};
use crate::frontend::reflect::StageReflection;
use crate::ir::text::{parse_program, print_program};
use crate::ir::{validate::validate, Processor, Program};
use crate::opt::texelfn::TexelFunction;

/// Identifies the build that wrote an entry (set by `build.rs`).
pub const BUILD_ID: &str = env!("SOFTGPU_BUILD_ID");

/// What the shader cache did while shaders were built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShaderCacheStats {
    /// Shaders taken from the cache.
    pub hits: usize,
    /// Shaders compiled because no usable entry existed.
    pub misses: usize,
    /// Of the misses, entries that existed but were unusable (corrupt, another build's, or
    /// another text under a colliding name).
    pub rejected: usize,
    /// Entries written.
    pub stored: usize,
    /// Passes whose fragment program's specialization was taken from the cache.
    pub specializations_hit: usize,
    /// Passes specialized because no usable entry existed (unusable ones included).
    pub specializations_missed: usize,
}

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

/// One cache directory, shared by the threads building shaders, with what it did so far.
pub struct ShaderCache {
    cache: Cache,
    hits: AtomicUsize,
    misses: AtomicUsize,
    rejected: AtomicUsize,
    stored: AtomicUsize,
    specializations_hit: AtomicUsize,
    specializations_missed: AtomicUsize,
}

/// The entry of a filter-chain pass.
#[derive(Serialize, Deserialize)]
struct PassEntry {
    build: String,
    language: String,
    sources: Vec<String>,
    vertex: StageEntry,
    fragment: StageEntry,
}

/// The entry of one stage drawn by `softgpu draw`.
#[derive(Serialize, Deserialize)]
struct DrawStageEntry {
    build: String,
    language: String,
    stage: String,
    source: String,
    compiled: StageEntry,
}

/// One stage as an entry holds it.
#[derive(Serialize, Deserialize)]
struct StageEntry {
    program: String,
    entry_point: String,
    resources: Vec<ResourceSlot>,
    reflection: StageReflection,
}

impl StageEntry {
    /// The entry of a stage whose program survives a print/parse trip unchanged, else `None`.
    fn of(stage: &Stage) -> Option<StageEntry> {
        Some(StageEntry {
            program: stored_program(&stage.lowered.program)?,
            entry_point: stage.lowered.entry_point.clone(),
            resources: stage.lowered.resources.clone(),
            reflection: stage.reflection.clone(),
        })
    }

    fn into_stage(self, processor: Processor) -> Option<Stage> {
        let program = program_of_entry(&self.program, processor)?;
        Some(Stage {
            lowered: LoweredShader {
                program,
                entry_point: self.entry_point,
                resources: self.resources,
            },
            reflection: self.reflection,
        })
    }
}

/// A pass's fragment program specialized for its constants and units (`PassPlan::build`).
pub(crate) struct Specialization {
    /// Constant components folded into the program.
    pub folded_constants: usize,
    /// The specialized program (its sampler hints not set yet).
    pub program: Program,
    /// The program before its texel functions were hoisted out, when any were.
    pub unhoisted: Option<Program>,
    /// The hoisted texel functions.
    pub texel_functions: Vec<TexelFunction>,
}

/// The file of a [`Specialization`]: keyed by its inputs' text (`SpecializationInputs::key`),
/// its programs as Mesa text.
#[derive(Serialize, Deserialize)]
struct SpecializationEntry {
    build: String,
    key: String,
    folded_constants: usize,
    program: String,
    unhoisted: Option<String>,
    texel_functions: Vec<StoredTexelFunction>,
}

#[derive(Serialize, Deserialize)]
struct StoredTexelFunction {
    source_unit: u32,
    derived_unit: u32,
    channels: usize,
    lookups: usize,
    program: String,
}

impl SpecializationEntry {
    fn of(key: &str, s: &Specialization) -> Option<SpecializationEntry> {
        let unhoisted = match &s.unhoisted {
            Some(p) => Some(stored_program(p)?),
            None => None,
        };
        let texel_functions = s
            .texel_functions
            .iter()
            .map(|f| {
                Some(StoredTexelFunction {
                    source_unit: f.source_unit,
                    derived_unit: f.derived_unit,
                    channels: f.channels,
                    lookups: f.lookups,
                    program: stored_program(&f.program)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(SpecializationEntry {
            build: BUILD_ID.to_string(),
            key: key.to_string(),
            folded_constants: s.folded_constants,
            program: stored_program(&s.program)?,
            unhoisted,
            texel_functions,
        })
    }

    /// The specialization, when the entry is for `key` and every program in it is valid.
    fn into_specialization(self, key: &str) -> Option<Specialization> {
        if self.build != BUILD_ID || self.key != key {
            return None;
        }
        let fragment = |text: &str| program_of_entry(text, Processor::Fragment);
        let unhoisted = match &self.unhoisted {
            Some(text) => Some(fragment(text)?),
            None => None,
        };
        let texel_functions = self
            .texel_functions
            .iter()
            .map(|f| {
                Some(TexelFunction {
                    source_unit: f.source_unit,
                    derived_unit: f.derived_unit,
                    channels: f.channels,
                    lookups: f.lookups,
                    program: fragment(&f.program)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        // A pre-pass runs the program as it was before hoisting: both or neither.
        if unhoisted.is_some() == texel_functions.is_empty() {
            return None;
        }
        Some(Specialization {
            folded_constants: self.folded_constants,
            program: fragment(&self.program)?,
            unhoisted,
            texel_functions,
        })
    }
}

/// `program` as an entry stores it (Mesa text), when it survives a print/parse trip unchanged.
fn stored_program(program: &Program) -> Option<String> {
    let text = print_program(program);
    (parse_program(&text).ok()? == *program).then_some(text)
}

/// The program an entry stores as `text`, when it parses, validates and is for `processor`.
fn program_of_entry(text: &str, processor: Processor) -> Option<Program> {
    let program = parse_program(text).ok()?;
    (program.processor == processor && validate(&program).is_ok()).then_some(program)
}

impl ShaderCache {
    /// A cache in `dir` (created when the first entry is stored).
    pub fn new(dir: PathBuf) -> ShaderCache {
        ShaderCache {
            cache: Cache::new(dir),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
            rejected: AtomicUsize::new(0),
            stored: AtomicUsize::new(0),
            specializations_hit: AtomicUsize::new(0),
            specializations_missed: AtomicUsize::new(0),
        }
    }

    /// What happened so far.
    pub fn stats(&self) -> ShaderCacheStats {
        ShaderCacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
            specializations_hit: self.specializations_hit.load(Ordering::Relaxed),
            specializations_missed: self.specializations_missed.load(Ordering::Relaxed),
        }
    }

    /// Counts a shader lookup and says what it found.
    fn count<T>(&self, lookup: Lookup<T>) -> (Option<T>, StageCacheUse) {
        let (counter, used) = match &lookup {
            Lookup::Hit(_) => (&self.hits, StageCacheUse::Hit),
            Lookup::Missing => (&self.misses, StageCacheUse::Miss),
            Lookup::Rejected => {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                (&self.misses, StageCacheUse::Rejected)
            }
        };
        counter.fetch_add(1, Ordering::Relaxed);
        (lookup.hit(), used)
    }

    /// Counts a shader entry written.
    fn count_store(&self, written: bool) {
        if written {
            self.stored.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The stages (vertex, fragment) of a pass compiled from `sources` in `language`, if an
    /// entry holds them.
    pub(crate) fn load_pass(&self, language: &str, sources: &[&str]) -> Option<(Stage, Stage)> {
        let lookup = self.cache.load_json(
            Kind::Shader,
            &(BUILD_ID, language, sources),
            |entry: PassEntry| {
                let identical = entry.build == BUILD_ID
                    && entry.language == language
                    && entry
                        .sources
                        .iter()
                        .map(String::as_str)
                        .eq(sources.iter().copied());
                if !identical {
                    return None;
                }
                let vertex = entry.vertex.into_stage(Processor::Vertex)?;
                let fragment = entry.fragment.into_stage(Processor::Fragment)?;
                Some((vertex, fragment))
            },
        );
        self.count(lookup).0
    }

    /// Writes the entry of a pass compiled from `sources`; a failure to write only loses it.
    pub(crate) fn store_pass(
        &self,
        language: &str,
        sources: &[&str],
        vertex: &Stage,
        fragment: &Stage,
    ) {
        let (Some(vertex), Some(fragment)) = (StageEntry::of(vertex), StageEntry::of(fragment))
        else {
            return;
        };
        let entry = PassEntry {
            build: BUILD_ID.to_string(),
            language: language.to_string(),
            sources: sources.iter().map(|s| s.to_string()).collect(),
            vertex,
            fragment,
        };
        let written = self
            .cache
            .store_json(Kind::Shader, &(BUILD_ID, language, sources), &entry);
        self.count_store(written);
    }

    /// The stage `stage` of `source` in `language`, if an entry holds it, and what the lookup
    /// found ([`StageCacheUse::Hit`] exactly when a stage is returned).
    pub(crate) fn load_stage(
        &self,
        language: &str,
        stage: Processor,
        source: &str,
    ) -> (Option<Stage>, StageCacheUse) {
        let key = (BUILD_ID, "draw", language, stage.name(), source);
        let lookup = self
            .cache
            .load_json(Kind::Shader, &key, |entry: DrawStageEntry| {
                let identical = entry.build == BUILD_ID
                    && entry.language == language
                    && entry.stage == stage.name()
                    && entry.source == source;
                if !identical {
                    return None;
                }
                entry.compiled.into_stage(stage)
            });
        self.count(lookup)
    }

    /// Writes the entry of `compiled`, the stage `stage` of `source`; a program that does not
    /// survive a print/parse trip unchanged, or a directory that cannot be written, only loses
    /// the entry.
    pub(crate) fn store_stage(
        &self,
        language: &str,
        stage: Processor,
        source: &str,
        compiled: &Stage,
    ) {
        let Some(stored) = StageEntry::of(compiled) else {
            return;
        };
        let entry = DrawStageEntry {
            build: BUILD_ID.to_string(),
            language: language.to_string(),
            stage: stage.name().to_string(),
            source: source.to_string(),
            compiled: stored,
        };
        let key = (BUILD_ID, "draw", language, stage.name(), source);
        let written = self.cache.store_json(Kind::Shader, &key, &entry);
        self.count_store(written);
    }

    /// The specialization whose inputs are `key`, if an entry holds it; counts a hit or a miss.
    pub(crate) fn load_specialization(&self, key: &str) -> Option<Specialization> {
        let found = self
            .cache
            .load_json(
                Kind::Specialization,
                &(BUILD_ID, "specialization", key),
                |entry: SpecializationEntry| entry.into_specialization(key),
            )
            .hit();
        if found.is_some() {
            self.specializations_hit.fetch_add(1, Ordering::Relaxed);
        } else {
            self.specializations_missed.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// Writes the entry of the specialization whose inputs are `key`; a failure to write only
    /// loses the entry.
    pub(crate) fn store_specialization(&self, key: &str, specialization: &Specialization) {
        let Some(entry) = SpecializationEntry::of(key, specialization) else {
            return;
        };
        self.cache.store_json(
            Kind::Specialization,
            &(BUILD_ID, "specialization", key),
            &entry,
        );
    }
}
