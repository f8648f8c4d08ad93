//! Cranelift JIT: compiles an [`ir::Program`](crate::ir::Program) into a native kernel that shades
//! 2x2 quads with 128-bit SIMD (one `i32x4`/`f32x4` per register channel), with exactly the
//! interpreter's results. One call shades a whole batch of quads
//! ([`QuadShader::shade_quads`]): the kernel loops over them, with constants loaded once per call.
//!
//! **What is native and what is called.** Inline SIMD: control flow (IF/UIF/ELSE, loops with
//! BRK/BREAKC/CONT, SWITCH/CASE/DEFAULT, CAL/CALLNZ/RET — subroutines are inlined per call site,
//! up to [`MAX_CALL_DEPTH`] deep, the next level returning [`ExecError::CallStackOverflow`] exactly
//! where the interpreter does; blocks no lane runs are branched over; IFs and loops whose
//! conditions are the same in every lane — shader parameters, loop counters — are plain
//! branches with unmasked writes under them, see `uniform`), KILL/KILL_IF, helper lanes
//! (OUT stores are masked with the live lanes), derivatives (lane shuffles), direct and indirect
//! operands (per-lane bounds checks: out-of-range reads give 0, out-of-range writes are dropped),
//! MOV/ADD/SUB/MUL/DIV/MAD/LRP/DPn/MIN/MAX/CLAMP, all comparisons, CMP/UCMP/CND, rounding,
//! RCP/RSQ/SQRT, conversions (F2I/F2U with `cvttps2dq` semantics, ARL/ARR) and the integer and
//! logic ops — with the interpreter's denormal flushing (inputs by the hardware: kernels run with
//! MXCSR.DAZ, see `fpenv`; results in software, since hardware FTZ detects tininess after rounding
//! to 24 bits where `ops::flush` looks at the denormal result — except results only float
//! arithmetic reads, which DAZ flushes on the way in, see `lazy`), its MIN/MAX NaN rules and its NaN
//! choice for ADD/SUB/MUL/DIV (`ops::pick_nan`: operand order is chosen so that x86 picks the same
//! NaN).
//! Per-lane calls of the very [`crate::interp::ops`] functions through `lane_op`: EX2, LG2, SIN,
//! COS and POW with special arguments (ordinary quads run inline vector ports of
//! `interp::libm`), FMA without the CPU's FMA, LDEXP, integer division and remainder,
//! IMUL_HI/UMUL_HI, bitfields and bit counts. In `llvmpipe` math ([`JitShader::compile_math`])
//! EX2, LG2, POW, SIN and COS are vector code of `ir::lpmath`'s sequences instead, equal to the
//! interpreter running that rewrite. TEX/TXP/TXB/TXL/TEX_LZ/TXD call the sampler directly (`tex_sample`, request built as
//! the interpreter builds it, texel offsets included when they are immediates), and so do
//! TXF/TXF_LZ (`texelFetch`) and TG4 (`textureGather`, of a constant component) since session
//! 19 (before through the interpreter); texture
//! instructions whose operands are all immediates — size queries (TXQ/SVIEWINFO), lookups and
//! fetches at fixed coordinates — ask it once per kernel call, before the quads
//! (`emit::constant_lookup`; a size query through the interpreter cost the store and reload of
//! every register variable around it, and Mega Bezel's bezel passes ask 20 per pixel); in
//! optimized kernels, 2D ones (not TXP, no offset) are sampled inline when the
//! unit offers a [`TexelView`](crate::exec::TexelView): level 0 with one filter and wrap in the
//! kernel itself, anything else (mip levels with their per-lane level of detail, a min/mag
//! switch, per-axis or other wraps) by the general path, compiled once per process as one
//! function per opcode on a thread of its own (`GeneralPaths`), which the site's sampler call
//! reaches instead (the sampler itself until the path is compiled). Everything else — other texture instructions, legacy and packing
//! opcodes (LIT, EXP, LOG, XPD, NRM, PK*/UP*, …) — runs the interpreter's own executor for that
//! one instruction (`interp_step`) on the same register memory, so its result is the
//! interpreter's by construction. Registers live in SSA variables (CPU registers where Cranelift
//! can), except those an indirect operand addresses, which stay in a memory block laid out as the
//! interpreter's (`TEMP` then `ADDR`, `[channel][lane]`); before an interpreted instruction the
//! variables are stored to that block, and its destination is reloaded after.
//!
//! **Instruction budget.** The kernel counts, per loop iteration, the instructions that sit
//! directly in the loop body (not inside a nested IF, loop or SWITCH), a lower bound of what the
//! interpreter counts for that iteration. An infinite loop therefore ends in
//! [`ExecError::BudgetExceeded`] (reported at the `ENDLOOP`), and the JIT never reports it for a
//! quad the interpreter finishes; a program that finishes just under or over the budget may
//! finish under the JIT where the interpreter stops.
//!
//! **Compilation.** Programs up to `OPTIMIZE_MAX_INSTRUCTIONS` are compiled with Cranelift's
//! optimizer and backtracking register allocator. Larger ones are first compiled without the
//! optimizer and with the single-pass allocator (about 4x faster to compile, 2x slower to run,
//! no inline texture sites), then recompiled for speed on a background thread, which the
//! kernel switches to when done (both compute the same bits) — tiered compilation. Optimized
//! kernels whose texture sites are all inline reach Rust through `preserve_all` trampolines
//! (see `Build`); the others call Rust in the C convention. Setting
//! `SOFTGPU_JIT_DUMP` prints each kernel's Cranelift IR and machine code to stderr,
//! `SOFTGPU_JIT_STATS` how many Cranelift instructions each opcode emitted;
//! `SOFTGPU_PERF_MAP` writes `/tmp/perf-PID.map` so that `perf report` names the kernels,
//! `SOFTGPU_NO_UNIFORM` compiles every IF and loop with masks (see `uniform`), and
//! `SOFTGPU_NO_SAMPLER_HINTS` every inline texture site for any sampler state (ignoring
//! `Program::sampler_hints`), for comparisons.
//!
//! **Caching.** [`JitShader::compile`] hashes the program and returns the already compiled
//! kernel (shared through an `Arc`) when an equal program was compiled before and is still alive
//! — in use, or among the `RECENT_KERNELS` last compiled or looked up.

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

pub(crate) use emit::MAX_INLINE_TEX;
pub use texpaths::wait_for_texture_paths;

use std::sync::Arc;

use abi::{FastSiteUnits, MAX_DIRECT_IO};
use cache::{cache, keep_recent, program_hash};
use isa::isa;
use tiers::{compile_kernel, optimize_in_background, recompiled_for_speed, Build, Kernel};

use crate::exec::{ExecError, DEFAULT_INSTRUCTION_BUDGET};
use crate::interp::decode;
pub use crate::interp::MAX_CALL_DEPTH;
use crate::ir::lpmath::MathMode;
use crate::ir::Program;

/// A program compiled to native code; a drop-in [`QuadShader`] with the interpreter's results.
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
        {
            let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
            let list = cache.entry(hash).or_default();
            list.retain(|w| w.strong_count() > 0);
            list.push(Arc::downgrade(&kernel));
            if cache.len() > 256 {
                cache.retain(|_, l| {
                    l.retain(|w| w.strong_count() > 0);
                    !l.is_empty()
                });
            }
        }
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
