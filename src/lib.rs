//! softgpu: a software GPU that runs real GPU shaders on the CPU with the pixels a real driver
//! produces. `docs/architecture.md` draws the design.
//!
//! The rooms, each importing only from those below it: [`input`] (bounded reading of the files a
//! user names); [`texture`] and [`raster`] (storage,
//! sampling, rasterization); [`frontend`] (WGSL, RetroArch Vulkan GLSL and Cg through naga to the
//! IR, with one reflection model); [`shader`] (building a stage or a pass's stages from a file,
//! through the on-disk cache, and the executor that runs them); [`draw`] (one draw call) and
//! [`chain`] (RetroArch presets rendered frame after frame); [`golden`] (reference-image
//! suites). [`driver`] names the rules each reproduced driver follows. Beside them: [`video`] (Y4M and raw frame streams, read and written a frame at a
//! time) and [`encode`] (rendered frames as PNG, 16-bit with colour metadata for HDR). The IR, the interpreter, the optimizer and the JIT are the `softgpu-jit` crate
//! ([`jit`]); the on-disk cache is the `softgpu-cache` crate.

pub use softgpu_jit as jit;
pub use softgpu_jit::{exec, interp, ir, opt};

pub mod budget;
pub mod chain;
pub mod draw;
pub mod driver;
pub mod encode;
pub mod frontend;
pub mod golden;
pub mod input;
pub mod output;
pub mod raster;
pub mod shader;
pub mod texture;
pub mod video;
