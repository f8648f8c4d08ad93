//! Building shaders from files: one stage (`softgpu draw`, `compile`) or a filter-chain pass's
//! two stages, in any language, through the on-disk shader cache; and the executor that runs
//! the programs. Draw and the chain both build through here.

pub mod cache;
mod executor;
pub(crate) mod pass;
mod stage;
mod stage_cache;

pub use cache::{ShaderCacheStats, BUILD_ID};
pub use executor::{build_shader, jit_compiling, Executor};
pub use stage::{compile_shader, compile_stage, compile_stage_cached, load_program, Language};
pub use stage_cache::StageCacheUse;
