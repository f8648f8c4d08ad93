//! softgpu's shader core: the TGSI-style IR ([`ir`]), its Mesa text format, the reference
//! interpreter ([`interp`]) and the execution contract every executor implements ([`exec`]).
//! It depends on nothing else of softgpu.

pub mod codegen;
pub mod exec;
pub mod interp;
pub mod ir;
pub mod opt;
