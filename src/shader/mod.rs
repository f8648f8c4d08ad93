//! Building shaders from files, for `softgpu draw` and the filter chain alike: one stage
//! ([`build_stage`]) or a pass's two stages ([`build_pass`]) in any language — the language by
//! extension, preprocessing, the frontend, reflection and lowering (which ends with the IR's
//! cleanup) — through the on-disk shader cache; and the executor that turns a program into a
//! runnable quad shader ([`build_shader`]).

mod cache;
mod executor;
mod pass;
mod stage;

pub(crate) use cache::Specialization;
pub use cache::{ShaderCache, ShaderCacheStats, StageCacheUse, BUILD_ID};
pub use executor::{build_shader, jit_compiling, Executor};
pub use pass::{build_pass, PassLanguage, PassShader};
pub use softgpu_cache::default_dir as default_cache_dir;
pub use stage::{
    build_stage, build_stage_with, compile_shader, load_program, parse_tgsi, Language,
};

use crate::frontend::lower::LoweredShader;
use crate::frontend::reflect::StageReflection;

/// One stage built from a file: its lowered program (with its resource slots) and its
/// reflection (empty for TGSI, which names nothing).
#[derive(Clone, Debug)]
pub struct Stage {
    /// The validated program, its entry point and the resources it reads.
    pub lowered: LoweredShader,
    /// What it exposes by name.
    pub reflection: StageReflection,
}
