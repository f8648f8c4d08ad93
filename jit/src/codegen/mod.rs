//! Cranelift JIT: compiles an [`ir::Program`](crate::ir::Program) into a native kernel that shades
//! 2x2 quads with 128-bit SIMD (one `i32x4`/`f32x4` per register channel), with exactly the
//! interpreter's results. One call shades a whole batch of quads
//! ([`QuadShader::shade_quads`](crate::exec::QuadShader::shade_quads)): the kernel loops over
//! them, with constants loaded once per call. [`JitShader`] is the public face: compile (through
//! the kernel caches), run, and fall back to the interpreter where the kernel cannot.
//!
//! **Instruction budget.** The kernel counts, per loop iteration, the instructions that sit
//! directly in the loop body (not inside a nested IF, loop or SWITCH), a lower bound of what the
//! interpreter counts for that iteration. An infinite loop therefore ends in
//! [`ExecError::BudgetExceeded`] (reported at the `ENDLOOP`), and the JIT never reports it for a
//! quad the interpreter finishes; a program that finishes just under or over the budget may
//! finish under the JIT where the interpreter stops.
//!
//! **Diagnostics.** Setting `SOFTGPU_JIT_DUMP` prints each kernel's Cranelift IR and machine
//! code to stderr, `SOFTGPU_JIT_STATS` how many Cranelift instructions each opcode emitted;
//! `SOFTGPU_PERF_MAP` writes `/tmp/perf-PID.map` so that `perf report` names the kernels,
//! `SOFTGPU_NO_UNIFORM` compiles every IF and loop with masks (see `uniform`), and
//! `SOFTGPU_NO_SAMPLER_HINTS` every inline texture site for any sampler state (ignoring
//! `Program::sampler_hints`), for comparisons.
//!
//! **Where things are**, from the public API down to the binary contract:
//! - `cache`: the in-memory kernel cache (equal programs share one compiled kernel); [`disk`]:
//!   final kernels kept on disk for later processes of the same build.
//! - `tiers`: a [`JitShader`]'s `Kernel` and its tiers — compiled for speed, or for compile time
//!   first and recompiled for speed in the background.
//! - `emit`: lowering of a decoded program to Cranelift IR, split the way Mesa's gallivm is
//!   (instruction driver, float rules, math library, masks and control flow, operands, texture
//!   sampling, texel format, register analyses); `lazy`, `uniform` and `unmasked` are the
//!   analyses that decide which results skip their flush, which constructs all lanes take
//!   together, and which writes under narrowing branches skip their per-lane blend.
//! - `isa`: Cranelift's target for this host (the two tiers' flags, FMA) and the modules that
//!   live as long as the process.
//! - `abi`: the binary contract between kernels and Rust — the per-call context, the inline
//!   texture descriptors, the address table through which kernels reach everything outside
//!   themselves, the status codes.
//! - `shims`: the Rust functions kernels call (`interp_step`, `lane_op`, `tex_sample`) and
//!   their `preserve_all` trampolines; `texpaths`: the general texture paths, compiled once per
//!   process on a thread of their own.
//! - `runtime`: running a kernel over the caller's register files; `fpenv`: the kernels'
//!   floating-point environment (DAZ).

mod abi;
mod cache;
pub mod disk;
mod emit;
mod fpenv;
mod isa;
mod lazy;
mod runtime;
mod shims;
mod texpaths;
mod tiers;
mod uniform;
mod unmasked;

pub use emit::MAX_INLINE_TEX;
pub use texpaths::wait_for_texture_paths;

use std::sync::Arc;

use cache::{keep_recent, program_hash};
use tiers::{compile_kernel, optimize_in_background, recompiled_for_speed, Build, Kernel};

use crate::exec::{ExecError, DEFAULT_INSTRUCTION_BUDGET};
use crate::interp::decode;
pub use crate::interp::MAX_CALL_DEPTH;
use crate::ir::MathMode;
use crate::ir::Program;

// What `disk` reaches as `super::…`.
use abi::{FastSiteUnits, MAX_DIRECT_IO};
use isa::isa;

/// A program compiled to native code; a drop-in [`QuadShader`](crate::exec::QuadShader) with the
/// interpreter's results.
#[derive(Clone)]
pub struct JitShader {
    kernel: Arc<Kernel>,
    budget: u64,
}

impl std::fmt::Debug for JitShader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitShader")
            .field("instructions", &self.kernel.program.instructions.len())
            .field("budget", &self.budget)
            .finish()
    }
}

impl JitShader {
    /// Compiles `program` (or returns the cached kernel of an equal program). Fails with
    /// [`ExecError::Unsupported`] for programs the interpreter rejects and for the few shapes the
    /// JIT does not compile (indirect operands of flow instructions, huge inlined subroutine
    /// trees, more than 1,024 directly addressed IN, OUT or SV registers); callers then use the
    /// interpreter.
    pub fn compile(program: &Program) -> Result<JitShader, ExecError> {
        Self::compile_math(program, MathMode::Exact)
    }

    /// [`Self::compile`] with EX2, LG2, POW, SIN and COS computed as `math` says: the results of
    /// the interpreter running `math.apply(program)`. In `llvmpipe` math the kernel computes
    /// them natively (on CPUs with FMA; elsewhere it compiles the rewritten program).
    pub fn compile_math(program: &Program, math: MathMode) -> Result<JitShader, ExecError> {
        let hash = program_hash(program, math);
        if let Some(shader) = Self::cached_with(hash, program, math) {
            return Ok(shader);
        }
        let kernel = Arc::new(compile_kernel(program, math, None)?);
        cache::insert(hash, &kernel);
        if !kernel.first_optimized && recompiled_for_speed(&kernel.decoded) {
            optimize_in_background(Arc::downgrade(&kernel));
        }
        keep_recent(&kernel);
        Ok(Self::of(kernel))
    }

    /// The shader for `program` if the kernel cache holds its kernel (nothing is compiled).
    pub fn cached(program: &Program) -> Option<JitShader> {
        let math = MathMode::Exact;
        Self::cached_with(program_hash(program, math), program, math)
    }

    /// Compiles `program` without consulting or filling the kernel cache and without the
    /// background recompilation (for compile-time measurements).
    pub fn compile_uncached(program: &Program) -> Result<JitShader, ExecError> {
        Ok(Self::of(Arc::new(compile_kernel(
            program,
            MathMode::Exact,
            None,
        )?)))
    }

    /// Compiles `program` for speed whatever its size, before returning (uncached): what a large
    /// program runs once its background recompilation is done.
    pub fn compile_optimized(program: &Program) -> Result<JitShader, ExecError> {
        Self::compile_tier_math(program, MathMode::Exact, true)
    }

    /// Compiles `program` for compile time whatever its size (uncached, never recompiled): the
    /// kernel a large program starts with, for tests and measurements of that tier.
    pub fn compile_fast_tier(program: &Program) -> Result<JitShader, ExecError> {
        Self::compile_tier_math(program, MathMode::Exact, false)
    }

    /// Compiles `program` in `math` for speed (`optimize`: as a large program's background
    /// recompilation) or for compile time, uncached and never recompiled: either tier of a large
    /// program under [`Self::compile_math`], for tests.
    pub fn compile_tier_math(
        program: &Program,
        math: MathMode,
        optimize: bool,
    ) -> Result<JitShader, ExecError> {
        let build = if optimize {
            Build::Optimized
        } else {
            Build::Fast
        };
        Ok(Self::of(Arc::new(compile_kernel(
            program,
            math,
            Some(build),
        )?)))
    }

    /// A shader running `kernel` with the default instruction budget.
    fn of(kernel: Arc<Kernel>) -> JitShader {
        JitShader {
            kernel,
            budget: DEFAULT_INSTRUCTION_BUDGET,
        }
    }

    /// True once this shader runs a kernel compiled for speed (small programs from the start,
    /// large ones when their background recompilation is done).
    pub fn is_optimized(&self) -> bool {
        self.kernel.first_optimized || self.kernel.optimized.get().is_some()
    }

    /// True when this shader's kernel was read from the on-disk cache instead of compiled
    /// (see [`disk::set_kernel_cache`]).
    pub fn loaded_from_disk(&self) -> bool {
        self.kernel.from_disk
    }

    /// Sets how many instructions one quad may execute (see the module docs for how loops are
    /// counted).
    pub fn with_budget(mut self, budget: u64) -> JitShader {
        self.budget = budget;
        self
    }

    /// True when `other` shares this shader's compiled kernel (a cache hit).
    pub fn shares_kernel_with(&self, other: &JitShader) -> bool {
        Arc::ptr_eq(&self.kernel, &other.kernel)
    }
}

/// How many IF/UIF and loop constructs of `program` the kernel compiles as uniform (taken by
/// all four lanes together: plain branches, no masks; see the `uniform` module) — for tests and
/// diagnostics.
pub fn uniform_construct_count(program: &Program) -> Result<usize, ExecError> {
    let decoded = decode::decode(program)?;
    Ok(uniform::uniform_constructs(&decoded)
        .iter()
        .filter(|&&u| u)
        .count())
}
