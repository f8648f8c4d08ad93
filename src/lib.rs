//! softgpu: a software GPU that runs real GPU shaders on the CPU with the pixels a real driver
//! produces. See the README and `ARCHITECTURE.md` for the design.

pub use softgpu_jit as jit;
pub use softgpu_jit::{exec, interp, ir};

pub mod chain;
pub mod draw;
pub mod frontend;
pub mod golden;
pub mod raster;
pub mod shader;
pub mod texture;
