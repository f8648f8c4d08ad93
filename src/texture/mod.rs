//! Textures: texel formats with Mesa's exact conversions ([`Format`]), storage with mip chains
//! ([`Texture`]) and the sampler the shader executors call ([`TextureUnits`]), which mirrors
//! Mesa 22.3 softpipe's sampling math.

mod format;
mod pool;
mod sampler;
mod storage;
mod tables;

pub(crate) use format::f16x4;
pub use format::{
    f16_to_f32, f32_to_f16_rtz, float_to_ubyte, linear_float_to_srgb8, srgb8_to_linear_float,
    ubyte_to_float, Format,
};
pub use sampler::{
    fast_log2, CompareFunc, FetchBounds, Filter, FilterRule, SamplerState, TextureUnits, Wrap,
};
pub use storage::{Texture, TextureError};
