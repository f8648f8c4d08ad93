//! The on-disk cache of compiled pass shaders: what glslang, naga, the lowering and `ir::opt`
//! made of a `.slang` or `.cg` file, so that the next process rendering the same preset skips
//! them (most of a short job's start-up: crt-lottes spends ~135 ms of one core in glslang's
//! built-in symbol tables alone).
//!
//! An entry is keyed by the build ([`BUILD_ID`]: a hash of softgpu's sources and `Cargo.lock`),
//! the language and the preprocessed text of each stage (includes expanded), and holds both
//! stages' TGSI programs (as Mesa text, which round-trips exactly: checked before storing) with
//! their resource slots, reflection and active uniform members. A hit is used only when the
//! entry's build and texts equal the current ones character for character and its programs
//! parse and validate; anything else — a truncated, corrupt, foreign or stale file — is a miss
//! that compiles the shader and replaces the entry. Entries are written to a temporary file and
//! renamed into place, so concurrent processes never read half an entry. The directory is kept
//! under [`MAX_CACHE_BYTES`] by removing the least recently used entries.
//!
//! Beside them, `.specialized` entries keep what `ir::opt` made of a pass's fragment program
//! for its constant parameters and units (`PassPlan::build`: folding, if-conversion, value
//! numbering, hoisted texel functions — Mega Bezel spends ~0.7 s of CPU there per run), keyed
//! by the full text of those inputs and checked the same way.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use crate::frontend::lower::{LoweredShader, ResourceSlot};
use crate::frontend::reflect::StageReflection;
use crate::ir::texelfn::TexelFunction;
use crate::ir::text::{parse_program, print_program};
use crate::ir::{validate::validate, Processor, Program};
pub use softgpu_cache::default_dir as default_shader_cache_dir;
use softgpu_cache::{Cache, Kind, Lookup};

/// Identifies the build that wrote an entry (set by `build.rs`).
pub const BUILD_ID: &str = env!("SOFTGPU_BUILD_ID");

/// The cache directory's size bound (shaders and kernels together); past it the least
/// recently used entries go.
pub use softgpu_cache::MAX_CACHE_BYTES;

/// The compiled form of one stage: its program and what binding reads.
pub(crate) type StageParts = (LoweredShader, StageReflection);

/// What a chain's shader cache did while the chain was built.
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

/// One directory of entries, shared by the threads compiling a chain's shaders.
pub(crate) struct ShaderCache {
    cache: Cache,
    hits: AtomicUsize,
    misses: AtomicUsize,
    rejected: AtomicUsize,
    stored: AtomicUsize,
    specializations_hit: AtomicUsize,
    specializations_missed: AtomicUsize,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    build: String,
    language: String,
    sources: Vec<String>,
    vertex: StageEntry,
    fragment: StageEntry,
}

#[derive(Serialize, Deserialize)]
struct StageEntry {
    program: String,
    entry_point: String,
    resources: Vec<ResourceSlot>,
    reflection: StageReflection,
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
pub(crate) fn stored_program(program: &Program) -> Option<String> {
    let text = print_program(program);
    (parse_program(&text).ok()? == *program).then_some(text)
}

/// The program an entry stores as `text`, when it parses, validates and is for `processor`.
pub(crate) fn program_of_entry(text: &str, processor: Processor) -> Option<Program> {
    let program = parse_program(text).ok()?;
    (program.processor == processor && validate(&program).is_ok()).then_some(program)
}

impl StageEntry {
    /// The entry of a stage whose program survives a print/parse trip unchanged, else `None`.
    fn of(parts: &StageParts) -> Option<StageEntry> {
        let (lowered, reflection) = parts;
        Some(StageEntry {
            program: stored_program(&lowered.program)?,
            entry_point: lowered.entry_point.clone(),
            resources: lowered.resources.clone(),
            reflection: reflection.clone(),
        })
    }

    fn into_parts(self, processor: Processor) -> Option<StageParts> {
        let program = program_of_entry(&self.program, processor)?;
        let lowered = LoweredShader {
            program,
            entry_point: self.entry_point,
            resources: self.resources,
        };
        Some((lowered, self.reflection))
    }
}

impl ShaderCache {
    /// A cache in `dir` (created when the first entry is stored).
    pub(crate) fn new(dir: PathBuf) -> ShaderCache {
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
    pub(crate) fn stats(&self) -> ShaderCacheStats {
        ShaderCacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
            specializations_hit: self.specializations_hit.load(Ordering::Relaxed),
            specializations_missed: self.specializations_missed.load(Ordering::Relaxed),
        }
    }

    /// The stages (vertex, fragment) compiled from `sources` in `language`, if an entry holds
    /// them; counts a hit or a miss.
    pub(crate) fn load(
        &self,
        language: &str,
        sources: &[&str],
    ) -> Option<(StageParts, StageParts)> {
        let key = (BUILD_ID, language, sources);
        let lookup = self.cache.load_json(Kind::Shader, &key, |entry: Entry| {
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
            let vertex = entry.vertex.into_parts(Processor::Vertex)?;
            let fragment = entry.fragment.into_parts(Processor::Fragment)?;
            Some((vertex, fragment))
        });
        if matches!(lookup, Lookup::Rejected) {
            self.rejected.fetch_add(1, Ordering::Relaxed);
        }
        let found = lookup.hit();
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Writes the entry for `sources`; a failure to write only loses the entry.
    pub(crate) fn store(
        &self,
        language: &str,
        sources: &[&str],
        vertex: &StageParts,
        fragment: &StageParts,
    ) {
        let (Some(vertex), Some(fragment)) = (StageEntry::of(vertex), StageEntry::of(fragment))
        else {
            return;
        };
        let entry = Entry {
            build: BUILD_ID.to_string(),
            language: language.to_string(),
            sources: sources.iter().map(|s| s.to_string()).collect(),
            vertex,
            fragment,
        };
        if self
            .cache
            .store_json(Kind::Shader, &(BUILD_ID, language, sources), &entry)
        {
            self.stored.fetch_add(1, Ordering::Relaxed);
        }
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
