//! softgpu's shader core, in layers that import only downwards:
//! - [`ir`]: the TGSI-style program model, its Mesa text format, the validator, the opcode
//!   property table and the control-flow structure analysis;
//! - [`exec`]: the execution contract every executor implements;
//! - [`interp`]: the reference interpreter, the specification of what a program computes;
//! - [`opt`]: the bit-exact optimisation passes and the one order they run in;
//! - [`codegen`]: the Cranelift JIT, which matches the interpreter bit for bit.
//!
//! It depends on nothing else of softgpu.

pub mod codegen;
pub mod exec;
pub mod interp;
pub mod ir;
pub mod opt;
