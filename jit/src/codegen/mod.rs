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

pub mod disk;
mod emit;
pub use emit::MAX_INLINE_TEX;
mod lazy;
mod uniform;

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};

use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};

use crate::exec::{
    BatchError, ExecError, QuadBatch, QuadIo, QuadShader, QuadVec4, ShaderResources,
    ShaderSignature, DEFAULT_INSTRUCTION_BUDGET,
};
use crate::interp::decode::{self, Decoded};
use crate::interp::run::Machine;
pub use crate::interp::MAX_CALL_DEPTH;
use crate::interp::{ops, Interpreter};
use crate::ir::MathMode;
use crate::ir::Program;
use crate::opt::lpmath;

/// Kernel status codes (bits 8.. of the kernel's return value; bits 0..4 are the kill mask).
const STATUS_BUDGET: u32 = 1;
const STATUS_CALL_OVERFLOW: u32 = 2;
const STATUS_ERROR: u32 = 3;

/// Largest register index of IN/OUT/SV a kernel addresses directly; larger programs are refused
/// (the kernel pads those files to their highest direct index for every quad).
const MAX_DIRECT_IO: u32 = 1024;

/// One constant buffer as the kernel sees it.
#[repr(C)]
#[derive(Clone, Copy)]
struct ConstBuf {
    ptr: *const [u32; 4],
    len: usize,
}

/// One inline texture site's view of its unit, as the kernel reads it (see
/// [`TextureAccess::texel_view`](crate::exec::TextureAccess::texel_view)). `mode` picks the
/// code: 0 sends every lookup to the sampler, 1 the level-0 path (no mip filter, one filter, one
/// wrap: the fields up to `hi_add`), 2 the general path (per-lane level of detail and levels,
/// the fields from `mip_kind`). Masks are 0 or !0. Clamping modes clamp the scaled coordinate to
/// `[lo, size + hi_add]` as softpipe's wrap functions do (edge: `[0, size]`; border:
/// `[-1, size + 0.5]` linear, `[-0.5, size + 0.5]` nearest, which is its nearest case analysis
/// written as a clamp).
#[repr(C)]
#[derive(Clone, Copy)]
struct FastTex {
    data: *const u8,
    /// `TexelLevel`s (16 bytes each), `last + 1` of them.
    levels: *const u8,
    /// The sampler's `fast_log2` table (257 f32 bit patterns).
    log2: *const u32,
    mode: u32,
    ok: u32,
    /// `InlineShape::code` of the view's shape when it has one (then `ok`), else 0: sites
    /// compiled for one shape take their inline path only where this names it.
    shape: u32,
    /// The unit's padded level 0 (`TextureAccess::padded_level0`) at its first texel (inside
    /// the apron), and its row pitch in texels (null and 0 without one).
    padded: *const u8,
    pitch: u32,
    linear: u32,
    clamp: u32,
    border: u32,
    width: u32,
    height: u32,
    fwidth: f32,
    fheight: f32,
    lo: f32,
    hi_add: f32,
    /// 0: no mip filter, 1: nearest, 2: linear, 3: linear with linear filters and REPEAT on a
    /// power-of-two texture (softpipe's `mip_filter_linear_2d_linear_repeat_POT`).
    mip_kind: u32,
    mag_linear: u32,
    min_linear: u32,
    clamp_s: u32,
    border_s: u32,
    clamp_t: u32,
    border_t: u32,
    /// REPEAT on an axis whose size is not a power of two, and MIRRORED_REPEAT, per axis.
    npot_s: u32,
    mirror_s: u32,
    npot_t: u32,
    mirror_t: u32,
    last: u32,
    lod_bias: f32,
    min_lod: f32,
    max_lod: f32,
    /// Index of the all-zero texel after the levels, which border corners read.
    zero: u32,
}

/// The clamp of a scaled coordinate of a clamped wrap mode: the low bound and what the high
/// bound adds to the size (softpipe's `wrap_{nearest,linear}_clamp_to_{edge,border}`).
fn coordinate_clamp(border: bool, linear: bool) -> (f32, f32) {
    match (border, linear) {
        (false, _) => (0.0, 0.0),
        (true, true) => (-1.0, 0.5),
        (true, false) => (-0.5, 0.5),
    }
}

impl FastTex {
    const NONE: FastTex = FastTex {
        data: std::ptr::null(),
        levels: std::ptr::null(),
        log2: std::ptr::null(),
        mode: 0,
        ok: 0,
        shape: 0,
        padded: std::ptr::null(),
        pitch: 0,
        linear: 0,
        clamp: 0,
        border: 0,
        width: 1,
        height: 1,
        fwidth: 1.0,
        fheight: 1.0,
        lo: 0.0,
        hi_add: 0.0,
        mip_kind: 0,
        mag_linear: 0,
        min_linear: 0,
        clamp_s: 0,
        border_s: 0,
        clamp_t: 0,
        border_t: 0,
        npot_s: 0,
        mirror_s: 0,
        npot_t: 0,
        mirror_t: 0,
        last: 0,
        lod_bias: 0.0,
        min_lod: 0.0,
        max_lod: 0.0,
        zero: 0,
    };

    /// The descriptor of `view`; `padded` is its unit's [`TextureAccess::padded_level0`],
    /// asked for only by sites compiled for a shape.
    ///
    /// [`TextureAccess::padded_level0`]: crate::exec::TextureAccess::padded_level0
    fn of(view: Option<crate::exec::TexelView<'_>>, padded: Option<&[u8]>) -> FastTex {
        use crate::exec::{ViewFilter, ViewWrap};
        let Some(v) = view else {
            return FastTex::NONE;
        };
        // Every level must lie inside the texels before the last, which must be zero (the
        // border texel), with sizes whose texel indices fit in i32 (byte offsets are computed
        // in 64 bits) and the level-0 size the view states.
        let Some(total) = (v.texels.len() / 16).checked_sub(1) else {
            return FastTex::NONE;
        };
        if v.texels[total * 16..total * 16 + 16]
            .iter()
            .any(|&b| b != 0)
        {
            return FastTex::NONE;
        }
        let level_ok = |l: &crate::exec::TexelLevel| {
            l.width > 0
                && l.height > 0
                && l.width <= 1 << 16
                && l.height <= 1 << 16
                && (l.width as usize * l.height as usize)
                    .checked_add(l.offset as usize)
                    .is_some_and(|end| end <= total && end <= i32::MAX as usize)
        };
        let fits = total <= i32::MAX as usize
            && v.levels.len() <= 32
            && v.levels
                .first()
                .is_some_and(|l| l.offset == 0 && l.width == v.width && l.height == v.height)
            && v.levels.iter().all(level_ok);
        let plain = crate::exec::plain_lod_value;
        if !(fits && plain(v.lod_bias) && plain(v.min_lod) && plain(v.max_lod)) {
            return FastTex::NONE;
        }
        let mask = |b: bool| if b { !0 } else { 0 };
        let linear = v.mag_filter == ViewFilter::Linear;
        let shape = v.inline_shape();
        // Mipmapped views take the general path except where a site compiled for their shape
        // finds every lane magnified.
        let simple = shape.is_some_and(|s| !s.mipmapped);
        // The apron's texels: all of them inside i32 indices, as `pad` promises.
        let apron = crate::exec::PADDED_APRON as usize;
        let (pw, ph) = (v.width as usize + 2 * apron, v.height as usize + 2 * apron);
        let padded = padded.filter(|p| pw * ph <= i32::MAX as usize / 2 && p.len() == pw * ph * 16);
        // Sites compiled for a shape read the padded texels: without them the view is left to
        // the general path.
        let shape = shape.filter(|_| padded.is_some());
        let clamps = |w: ViewWrap| matches!(w, ViewWrap::ClampToEdge | ViewWrap::ClampToBorder);
        let border = v.wrap_s == ViewWrap::ClampToBorder;
        let (lo, hi_add) = coordinate_clamp(border, linear);
        let all_linear = v.min_filter == ViewFilter::Linear && linear;
        let mip_kind = match v.mip_filter {
            None => 0,
            Some(ViewFilter::Nearest) => 1,
            Some(ViewFilter::Linear)
                if all_linear
                    && v.wrap_s == ViewWrap::RepeatPot
                    && v.wrap_t == ViewWrap::RepeatPot =>
            {
                3
            }
            Some(ViewFilter::Linear) => 2,
        };
        FastTex {
            data: v.texels.as_ptr(),
            levels: v.levels.as_ptr() as *const u8,
            log2: v.log2_table.as_ptr(),
            mode: if simple { 1 } else { 2 },
            ok: simple as u32,
            shape: shape.map_or(0, |s| s.code()),
            padded: padded.map_or(std::ptr::null(), |p| {
                p[(apron * pw + apron) * 16..].as_ptr()
            }),
            pitch: padded.map_or(0, |_| pw as u32),
            linear: mask(linear),
            clamp: mask(v.wrap_s != ViewWrap::RepeatPot),
            border: mask(border),
            width: v.width,
            height: v.height,
            fwidth: v.width as f32,
            fheight: v.height as f32,
            lo,
            hi_add,
            mip_kind,
            mag_linear: mask(linear),
            min_linear: mask(v.min_filter == ViewFilter::Linear),
            clamp_s: mask(clamps(v.wrap_s)),
            border_s: mask(v.wrap_s == ViewWrap::ClampToBorder),
            clamp_t: mask(clamps(v.wrap_t)),
            border_t: mask(v.wrap_t == ViewWrap::ClampToBorder),
            npot_s: mask(v.wrap_s == ViewWrap::Repeat),
            mirror_s: mask(v.wrap_s == ViewWrap::MirroredRepeat),
            npot_t: mask(v.wrap_t == ViewWrap::Repeat),
            mirror_t: mask(v.wrap_t == ViewWrap::MirroredRepeat),
            last: v.levels.len() as u32 - 1,
            lod_bias: v.lod_bias,
            min_lod: v.min_lod,
            max_lod: v.max_lod,
            zero: total as u32,
        }
    }
}

/// The per-call context a kernel receives. The first fields are read by compiled code at the
/// offsets `offset_of!` gives; the rest serve the `interp_step` trampoline. A call shades
/// `count` quads: quad `q` reads `inputs + q * in_stride` (bytes; likewise SV and OUT), its
/// live lanes from `live[q]`, and stores its killed lanes to `killed[q]`.
#[repr(C)]
struct Ctx {
    regs: *mut QuadVec4,
    inputs: *const QuadVec4,
    sysvals: *const QuadVec4,
    outputs: *mut QuadVec4,
    consts: *const ConstBuf,
    consts_len: usize,
    budget: u64,
    err_pc: u64,
    count: u64,
    in_stride: u64,
    sv_stride: u64,
    out_stride: u64,
    live: *const u8,
    killed: *mut u8,
    /// The quad being shaded; written by the kernel.
    quad: u64,
    /// One [`FastTex`] per inline texture site.
    fast: *const FastTex,
    /// The running tier's [`Address`] table.
    addresses: *const usize,
    // Trampoline state: the caller's real operands, as the interpreter must see them (per
    // quad: `io_inputs + quad * io_inputs_len`, and so on).
    kernel: *const Kernel,
    resources: *const (),
    io_inputs: *const QuadVec4,
    io_inputs_len: usize,
    io_sysvals: *const QuadVec4,
    io_sysvals_len: usize,
    io_outputs: *mut QuadVec4,
    io_outputs_len: usize,
    num_locals: usize,
    error: Option<ExecError>,
}

/// Field offsets of [`Ctx`] for the code generator.
#[derive(Clone, Copy)]
struct CtxOffsets {
    regs: i32,
    inputs: i32,
    sysvals: i32,
    outputs: i32,
    consts: i32,
    consts_len: i32,
    io_inputs_len: i32,
    io_sysvals_len: i32,
    io_outputs_len: i32,
    budget: i32,
    err_pc: i32,
    count: i32,
    in_stride: i32,
    sv_stride: i32,
    out_stride: i32,
    live: i32,
    killed: i32,
    quad: i32,
    fast: i32,
    addresses: i32,
}

impl CtxOffsets {
    fn get() -> CtxOffsets {
        use std::mem::offset_of;
        CtxOffsets {
            regs: offset_of!(Ctx, regs) as i32,
            inputs: offset_of!(Ctx, inputs) as i32,
            sysvals: offset_of!(Ctx, sysvals) as i32,
            outputs: offset_of!(Ctx, outputs) as i32,
            consts: offset_of!(Ctx, consts) as i32,
            consts_len: offset_of!(Ctx, consts_len) as i32,
            io_inputs_len: offset_of!(Ctx, io_inputs_len) as i32,
            io_sysvals_len: offset_of!(Ctx, io_sysvals_len) as i32,
            io_outputs_len: offset_of!(Ctx, io_outputs_len) as i32,
            budget: offset_of!(Ctx, budget) as i32,
            err_pc: offset_of!(Ctx, err_pc) as i32,
            count: offset_of!(Ctx, count) as i32,
            in_stride: offset_of!(Ctx, in_stride) as i32,
            sv_stride: offset_of!(Ctx, sv_stride) as i32,
            out_stride: offset_of!(Ctx, out_stride) as i32,
            live: offset_of!(Ctx, live) as i32,
            killed: offset_of!(Ctx, killed) as i32,
            quad: offset_of!(Ctx, quad) as i32,
            fast: offset_of!(Ctx, fast) as i32,
            addresses: offset_of!(Ctx, addresses) as i32,
        }
    }
}

type KernelFn = unsafe extern "C" fn(*mut Ctx) -> u32;

/// An entry of a kernel's address table (`Ctx::addresses`): everything compiled code reaches
/// by address, so that the code itself holds none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Address(usize);

impl Address {
    /// 64 zero bytes: what out-of-range lanes of indirect reads read.
    pub(super) const ZERO_BLOCK: Address = Address(0);
    /// An empty constant buffer (`ConstBuf` of length 0), for out-of-range buffer indices.
    pub(super) const EMPTY_CONST_BUFFER: Address = Address(1);
    /// The program's immediates (`Decoded::imms`).
    pub(super) const IMMEDIATES: Address = Address(2);
    /// The `interp_step` function or trampoline.
    pub(super) const STEP: Address = Address(3);
    /// The `lane_op` function or trampoline.
    pub(super) const LANES: Address = Address(4);
    /// The `tex_sample` function or trampoline.
    pub(super) const TEX: Address = Address(5);
    /// `libm::POWF_LOG2_TAB`.
    pub(super) const POWF_LOG2_TABLE: Address = Address(6);
    /// `libm::LOGF_TAB`.
    pub(super) const LOGF_TABLE: Address = Address(7);
    /// `libm::EXP2F_TAB`.
    pub(super) const EXP2F_TABLE: Address = Address(8);
    const FIRST_GENERAL_PATH: usize = 9;

    /// The slot of general texture path `k` (of `emit::MIP_OPS`; `GeneralPaths::slot`).
    pub(super) fn general_path_slot(k: usize) -> Address {
        Address(Self::FIRST_GENERAL_PATH + k.min(emit::MIP_OPS.len() - 1))
    }

    /// The entry's byte offset in the table.
    pub(super) fn offset(self) -> i32 {
        (self.0 * std::mem::size_of::<usize>()) as i32
    }
}

/// Entries of an address table.
const ADDRESS_COUNT: usize = Address::FIRST_GENERAL_PATH + emit::MIP_OPS.len();

/// 64 zero bytes ([`Address::ZERO_BLOCK`]).
static ZERO_BLOCK: [u32; 16] = [0; 16];

/// An empty constant buffer ([`Address::EMPTY_CONST_BUFFER`]).
static EMPTY_CONST_BUFFER: [usize; 2] = [0, 0];

/// The address table of a tier calling `shims`, for the program `decoded`.
fn address_table(shims: &Shims, decoded: &Decoded) -> Box<[usize; ADDRESS_COUNT]> {
    let mut table = [0usize; ADDRESS_COUNT];
    table[Address::ZERO_BLOCK.0] = ZERO_BLOCK.as_ptr() as usize;
    table[Address::EMPTY_CONST_BUFFER.0] = EMPTY_CONST_BUFFER.as_ptr() as usize;
    table[Address::IMMEDIATES.0] = decoded.imms.as_ptr() as usize;
    table[Address::STEP.0] = shims.step as usize;
    table[Address::LANES.0] = shims.lanes as usize;
    table[Address::TEX.0] = shims.tex as usize;
    table[Address::POWF_LOG2_TABLE.0] = crate::interp::libm::POWF_LOG2_TAB.as_ptr() as usize;
    table[Address::LOGF_TABLE.0] = crate::interp::libm::LOGF_TAB.as_ptr() as usize;
    table[Address::EXP2F_TABLE.0] = crate::interp::libm::EXP2F_TAB.as_ptr() as usize;
    if let Some(paths) = shims.mip {
        for k in 0..emit::MIP_OPS.len() {
            table[Address::general_path_slot(k).0] = paths.slot(k);
        }
    }
    Box::new(table)
}

/// One compiled version of a kernel: its entry point and the inline texture sites it reads.
struct Tier {
    func: KernelFn,
    /// What the code reaches by address ([`Address`]).
    addresses: Box<[usize; ADDRESS_COUNT]>,
    /// The units of the inline texture sites, one descriptor each.
    fast_sites: Vec<FastSiteUnits>,
}

/// The texture units one inline descriptor describes, and the hinted shape its sites were
/// compiled for, if any: only those sites read the padded level 0, so it is asked for only
/// when the bound view has that shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FastSiteUnits {
    pub view: u32,
    pub sampler: u32,
    pub shape: Option<crate::ir::InlineShape>,
}

/// A compiled program, shared between all [`JitShader`]s of equal programs.
struct Kernel {
    /// The program as given (the cache key, with `math`).
    program: Program,
    math: MathMode,
    /// Compiled in `llvmpipe` math with EX2, LG2, POW, SIN and COS native (see
    /// [`compile_kernel`]).
    lp_native: bool,
    decoded: Decoded,
    /// Runs single instructions (`interp_step`) of the compiled program.
    interp: Interpreter,
    /// Runs whole quads where the kernel cannot: `interp`, or with `lp_native` the interpreter
    /// of the rewritten program (the specification).
    spec: Option<Interpreter>,
    signature: ShaderSignature,
    /// The first compilation: optimized for programs up to `OPTIMIZE_MAX_INSTRUCTIONS`, else
    /// compiled for compile time.
    first: Tier,
    /// Whether `first` was compiled for speed.
    first_optimized: bool,
    /// Whether `first` was read from the on-disk cache ([`disk`]).
    from_disk: bool,
    /// The optimized recompilation of a large program, set by a background thread when done
    /// (see [`JitShader::compile`]); used instead of `first` from then on.
    optimized: OnceLock<Tier>,
    /// Registers of IN, SV and OUT the kernel addresses directly (the files are padded to these).
    num_inputs: usize,
    num_sysvals: usize,
    num_outputs: usize,
    /// Constant buffers the kernel addresses directly.
    num_const_buffers: usize,
    /// Own the executable memory of the tiers' functions; freed on drop.
    modules: Mutex<Vec<JITModule>>,
}

impl Kernel {
    /// The best compiled version available now.
    fn tier(&self) -> &Tier {
        self.optimized.get().unwrap_or(&self.first)
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        let modules = self
            .modules
            .get_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        for module in modules {
            // SAFETY: the tiers' functions point into these modules' memory and are only
            // reachable through this kernel, which is being dropped: no call can be running or
            // start afterwards.
            unsafe { module.free_memory() };
        }
    }
}

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

/// Programs up to this many instructions are compiled for speed (optimizer and the backtracking
/// register allocator); larger ones for compile time first (no optimizer, single-pass
/// allocation, about 4x faster to compile and 2x slower to run), then recompiled for speed in
/// the background.
const OPTIMIZE_MAX_INSTRUCTIONS: usize = 400;

/// What a compilation of a kernel is for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Build {
    /// Compile time: no optimizer, the single-pass register allocator, no inline texture sites
    /// (the first kernel of a large program).
    Fast,
    /// Run time: a small program's only kernel, compiled before the first draw, or a large
    /// program's second kernel, compiled in the background. When every texture instruction has
    /// an inline site (calls into the sampler are rare fallbacks), calls into Rust go through
    /// the `preserve_all` trampolines, which clobber nothing, so values live across a rare call
    /// stay in registers instead of being stored to the stack and reloaded on every quad
    /// (`tex_mul` ~10% faster; ntsc-class's decode kernel 14%). The register allocator works
    /// longer for it (compile: `tex_mul` 1.08 -> 1.27 ms, `math_builtins` 1.8 -> 2.4 ms). A
    /// program calling the sampler on every quad (`texelFetch`, which has no inline site) keeps
    /// C calls: through the trampolines, CuNNy's ~80 `TXF`s per pixel took its compiles several
    /// times longer and its kernels 14% slower.
    Optimized,
}

/// Programs larger than this are never recompiled for speed (the optimizing compile grows to
/// seconds).
const BACKGROUND_MAX_INSTRUCTIONS: usize = 20_000;

/// Whether a kernel of `decoded` compiled for compile time is recompiled for speed (see
/// [`BACKGROUND_MAX_INSTRUCTIONS`]).
fn recompiled_for_speed(decoded: &Decoded) -> bool {
    decoded.insts.len() <= BACKGROUND_MAX_INSTRUCTIONS
}

fn isa(optimize: bool) -> Result<OwnedTargetIsa, String> {
    static ISA: [OnceLock<Result<OwnedTargetIsa, String>>; 2] = [OnceLock::new(), OnceLock::new()];
    ISA[optimize as usize]
        .get_or_init(|| {
            let mut flags = settings::builder();
            let set = |f: &mut settings::Builder, k: &str, v: &str| {
                f.set(k, v)
                    .map_err(|e| format!("cranelift setting {k}={v}: {e}"))
            };
            if optimize {
                set(&mut flags, "opt_level", "speed")?;
                set(&mut flags, "regalloc_algorithm", "backtracking")?;
            } else {
                set(&mut flags, "opt_level", "none")?;
                set(&mut flags, "regalloc_algorithm", "single_pass")?;
            }
            set(&mut flags, "use_colocated_libcalls", "false")?;
            set(&mut flags, "is_pic", "false")?;
            set(&mut flags, "enable_verifier", "false")?;
            // Nothing unwinds through a kernel (its shims are `extern "C"`: a panic aborts).
            set(&mut flags, "unwind_info", "false")?;
            let builder = cranelift_native::builder().map_err(|e| e.to_string())?;
            builder
                .finish(settings::Flags::new(flags))
                .map_err(|e| e.to_string())
        })
        .clone()
}

type Cache = Mutex<HashMap<u64, Vec<Weak<Kernel>>>>;

/// How many of the most recently compiled or looked-up kernels stay alive after their last
/// shader is dropped, so that drawing the same program again (a golden suite, a frame loop
/// through `draw::run_with`) finds it compiled, as a driver's shader cache would.
const RECENT_KERNELS: usize = 16;

fn keep_recent(kernel: &Arc<Kernel>) {
    static RECENT: Mutex<std::collections::VecDeque<Arc<Kernel>>> =
        Mutex::new(std::collections::VecDeque::new());
    let mut recent = RECENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = recent.iter().position(|k| Arc::ptr_eq(k, kernel)) {
        recent.remove(i);
    }
    recent.push_front(kernel.clone());
    recent.truncate(RECENT_KERNELS);
}

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The kernel cache's key hash. Fx rather than SipHash: a cache hit hashes the whole program
/// (a lookup of a 1,000-instruction program spent most of its time in SipHash), and equal
/// hashes are confirmed by comparing programs.
fn program_hash(program: &Program, math: MathMode) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    program.hash(&mut h);
    math.hash(&mut h);
    h.finish()
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

    /// The cached shader for `program` in `math` (whose key hash is `hash`), marked recently used.
    fn cached_with(hash: u64, program: &Program, math: MathMode) -> Option<JitShader> {
        let kernel = Self::lookup(hash, program, math)?;
        keep_recent(&kernel);
        Some(Self::of(kernel))
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

    fn lookup(hash: u64, program: &Program, math: MathMode) -> Option<Arc<Kernel>> {
        let cache = cache().lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(&hash)?
            .iter()
            .filter_map(Weak::upgrade)
            .find(|k| k.math == math && k.program == *program)
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

/// Compiles the first tier of `program`: optimized or not as `optimize` says, by default
/// (None) by size.
fn compile_kernel(
    program: &Program,
    math: MathMode,
    requested: Option<Build>,
) -> Result<Kernel, ExecError> {
    if !cfg!(target_arch = "x86_64") {
        return Err(ExecError::Unsupported {
            pc: 0,
            message: "the JIT generates x86-64 code only".into(),
        });
    }
    // llvmpipe's EX2, LG2, POW, SIN and COS are emitted natively (with the CPU's FMA, which
    // their fused steps need); without FMA the kernel runs the rewritten program.
    let lp_native = math == MathMode::Llvmpipe && emit::cpu_has_fma();
    let (compiled_program, spec) = if lp_native {
        (
            std::borrow::Cow::Borrowed(program),
            Some(Interpreter::new(&lpmath::rewrite(program))?),
        )
    } else {
        (math.applied(program), None)
    };
    let interp = Interpreter::new(&compiled_program)?;
    let decoded = decode::decode(&compiled_program)?;
    let build = requested.unwrap_or(if decoded.insts.len() <= OPTIMIZE_MAX_INSTRUCTIONS {
        Build::Optimized
    } else {
        Build::Fast
    });
    // What a later process starts with: the kernel compiled for speed, except for programs too
    // large to be ever recompiled for speed, whose fast-tier kernel is final.
    let stored_build = if build == Build::Fast && !recompiled_for_speed(&decoded) {
        Build::Fast
    } else {
        Build::Optimized
    };
    let from_disk = requested
        .is_none()
        .then(|| disk::load(program, math, lp_native, stored_build != Build::Fast))
        .flatten()
        .and_then(|stored| load_tier(program, &decoded, stored));
    let loaded = from_disk.is_some();
    let (tier, module, io, build) = match from_disk {
        Some((tier, module, io)) => (tier, module, io, stored_build),
        None => {
            let (tier, module, compiled) = compile_tier(program, &decoded, build, math, lp_native)?;
            let io = [
                compiled.num_inputs,
                compiled.num_sysvals,
                compiled.num_outputs,
                compiled.num_const_buffers,
            ];
            (tier, module, io, build)
        }
    };
    Ok(Kernel {
        program: program.clone(),
        math,
        lp_native,
        signature: ShaderSignature::from_program(program),
        decoded,
        interp,
        spec,
        first: tier,
        first_optimized: build != Build::Fast,
        from_disk: loaded,
        optimized: OnceLock::new(),
        num_inputs: io[0],
        num_sysvals: io[1],
        num_outputs: io[2],
        num_const_buffers: io[3],
        modules: Mutex::new(vec![module]),
    })
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

/// Recompiles the kernel `weak` refers to for speed on a thread of its own, and installs the
/// result unless the kernel has been dropped meanwhile. Both versions compute the same bits
/// (the same IR, only Cranelift's settings differ), so calls may switch at any time.
fn optimize_in_background(weak: Weak<Kernel>) {
    let work = move || {
        let Some(kernel) = weak.upgrade() else {
            return;
        };
        let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            compile_tier(
                &kernel.program,
                &kernel.decoded,
                Build::Optimized,
                kernel.math,
                kernel.lp_native,
            )
        }));
        // A failure keeps the first version, which works.
        if let Ok(Ok((tier, module, _))) = compiled {
            let mut modules = kernel.modules.lock().unwrap_or_else(|e| e.into_inner());
            modules.push(module);
            let _ = kernel.optimized.set(tier);
        }
    };
    // Without a thread the first version simply stays.
    let _ = std::thread::Builder::new()
        .name("softgpu-jit-optimize".into())
        .spawn(work);
}

/// Compiles `decoded` (from `program` in `math`) into a fresh module; a final kernel — one
/// compiled for speed, or the fast tier's of a program never recompiled — is also stored on
/// disk when that is enabled (see [`disk`]).
fn compile_tier(
    program: &Program,
    decoded: &Decoded,
    build: Build,
    math: MathMode,
    lp_native: bool,
) -> Result<(Tier, JITModule, emit::Compiled), ExecError> {
    let optimize = build != Build::Fast;
    let preserve_all = optimize && emit::every_texture_site_inline(decoded);
    let general_paths = optimize.then(|| GeneralPaths::of(preserve_all));
    let isa = isa(optimize).map_err(|message| ExecError::Unsupported { pc: 0, message })?;
    let mut module = JITModule::new(JITBuilder::with_isa(
        isa,
        cranelift_module::default_libcall_names(),
    ));
    let shims = Shims {
        mip: general_paths,
        ..Shims::rust(preserve_all)
    };
    let compiled = emit::compile(
        &mut module,
        decoded,
        CtxOffsets::get(),
        shims,
        optimize,
        lp_native,
        if std::env::var_os("SOFTGPU_NO_SAMPLER_HINTS").is_some() {
            &[]
        } else {
            &program.sampler_hints
        },
    );
    let mut compiled = match compiled {
        Ok(c) => c,
        Err(e) => {
            // SAFETY: nothing was handed out from this module; it is dropped right here.
            unsafe { module.free_memory() };
            return Err(e);
        }
    };
    for (what, n) in [
        ("IN", compiled.num_inputs),
        ("SV", compiled.num_sysvals),
        ("OUT", compiled.num_outputs),
    ] {
        if n > MAX_DIRECT_IO as usize {
            // SAFETY: as above, the module's code is never called.
            unsafe { module.free_memory() };
            return Err(ExecError::Unsupported {
                pc: 0,
                message: format!("{what}[{}] is beyond the JIT's direct range", n - 1),
            });
        }
    }
    if let Some(paths) = general_paths {
        paths.start(compiled.general_ops);
    }
    // Kernels compiled for speed are stored, and fast-tier ones that are final.
    let final_kernel = optimize || !recompiled_for_speed(decoded);
    if let Some((code, alignment)) = compiled.code.take().filter(|_| final_kernel) {
        let stored = disk::StoredKernel {
            code,
            alignment,
            preserve_all: shims.preserve_all,
            num_inputs: compiled.num_inputs,
            num_sysvals: compiled.num_sysvals,
            num_outputs: compiled.num_outputs,
            num_const_buffers: compiled.num_const_buffers,
            fast_sites: compiled.fast_sites.clone(),
            general_ops: compiled.general_ops,
        };
        disk::store(program, math, lp_native, optimize, &stored);
    }
    let ptr = module.get_finalized_function(compiled.func_id);
    // SAFETY: `ptr` is the finalized code of a function whose Cranelift signature is
    // `(pointer) -> i32` in the platform's default (C) calling convention, which is what
    // `KernelFn` declares; the caller keeps the module owning the code as long as the tier.
    let func: KernelFn = unsafe { std::mem::transmute::<*const u8, KernelFn>(ptr) };
    if std::env::var_os("SOFTGPU_PERF_MAP").is_some() {
        perf_map(ptr, compiled.code_size, program, decoded.insts.len());
    }
    let tier = Tier {
        func,
        addresses: address_table(&shims, decoded),
        fast_sites: compiled.fast_sites.clone(),
    };
    Ok((tier, module, compiled))
}

/// The tier of a kernel read from disk (see [`disk`]), with its register-file extents (IN, SV,
/// OUT, constant buffers); `None` when its code cannot be placed or its calling convention
/// into Rust is not available in this process.
fn load_tier(
    program: &Program,
    decoded: &Decoded,
    stored: disk::StoredKernel,
) -> Option<(Tier, JITModule, [usize; 4])> {
    use cranelift_module::Module;
    let shims = Shims {
        mip: Some(GeneralPaths::of(stored.preserve_all)),
        ..Shims::rust(stored.preserve_all)
    };
    if shims.preserve_all != stored.preserve_all {
        return None;
    }
    let isa = isa(true).ok()?;
    let mut module = JITModule::new(JITBuilder::with_isa(
        isa,
        cranelift_module::default_libcall_names(),
    ));
    let mut sig = module.make_signature();
    sig.params.push(cranelift_codegen::ir::AbiParam::new(
        module.target_config().pointer_type(),
    ));
    sig.returns.push(cranelift_codegen::ir::AbiParam::new(
        cranelift_codegen::ir::types::I32,
    ));
    let placed = module.declare_anonymous_function(&sig).ok().filter(|&id| {
        module
            .define_function_bytes(id, stored.alignment, &stored.code, &[])
            .is_ok()
            && module.finalize_definitions().is_ok()
    });
    let Some(id) = placed else {
        // SAFETY: nothing was handed out from this module; it is dropped right here.
        unsafe { module.free_memory() };
        return None;
    };
    if let Some(paths) = shims.mip {
        paths.start(stored.general_ops);
    }
    let ptr = module.get_finalized_function(id);
    // SAFETY: the bytes are those of a kernel compiled by this build (the entry's identity
    // names the build, this CPU's ISA flags and the program's text, and matched) for
    // `decoded`, with the signature `(pointer) -> i32` in the C convention that `KernelFn`
    // declares; the code holds no absolute address (everything it reaches comes from the
    // address table made below for these shims and `decoded`) and no relocation. The module
    // owning the code is kept as long as the tier.
    let func: KernelFn = unsafe { std::mem::transmute::<*const u8, KernelFn>(ptr) };
    if std::env::var_os("SOFTGPU_PERF_MAP").is_some() {
        perf_map(ptr, stored.code.len(), program, decoded.insts.len());
    }
    let tier = Tier {
        func,
        addresses: address_table(&shims, decoded),
        fast_sites: stored.fast_sites,
    };
    let io = [
        stored.num_inputs,
        stored.num_sysvals,
        stored.num_outputs,
        stored.num_const_buffers,
    ];
    Some((tier, module, io))
}

/// Appends the kernel's address range to `/tmp/perf-PID.map`, where `perf report` finds names
/// for JIT code (a failure to write only loses the names).
fn perf_map(ptr: *const u8, size: usize, program: &Program, insts: usize) {
    use std::io::Write;
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let path = format!("/tmp/perf-{}.map", std::process::id());
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(
            f,
            "{:x} {:x} softgpu_kernel_{:016x}_{insts}insts",
            ptr as usize,
            size,
            program_hash(program, MathMode::Exact)
        );
    }
    // The machine code too, for `objdump -D -b binary -m i386:x86-64 --adjust-vma=ADDR`.
    // SAFETY: `ptr` is the start of the finalized function of `size` bytes, readable
    // executable memory owned by its module, which outlives this call.
    let code = unsafe { std::slice::from_raw_parts(ptr, size) };
    let _ = std::fs::write(format!("/tmp/softgpu-kernel-{:x}.bin", ptr as usize), code);
}

/// Addresses of the functions compiled code calls.
#[derive(Clone, Copy)]
struct Shims {
    step: *const u8,
    lanes: *const u8,
    tex: *const u8,
    /// The general inline texture paths (`None`: sites call the sampler instead).
    mip: Option<&'static GeneralPaths>,
    /// Whether `step`, `lanes`, `tex` and `mip` are of the `preserve_all` convention (the
    /// trampolines of [`trampolines`] and the general paths compiled with them) rather than C.
    preserve_all: bool,
}

impl Shims {
    /// The Rust functions, called directly or (with `preserve_all`) behind their `preserve_all`
    /// trampolines when those could be compiled; no general texture paths.
    fn rust(preserve_all: bool) -> Shims {
        let direct = [
            tex_sample as *const u8,
            lane_op as *const u8,
            interp_step as *const u8,
        ];
        let (targets, preserve_all) = match trampolines().filter(|_| preserve_all) {
            Some(t) => (t, true),
            None => (direct, false),
        };
        Shims {
            tex: targets[0],
            lanes: targets[1],
            step: targets[2],
            mip: None,
            preserve_all,
        }
    }

    /// The calling convention of the functions these addresses point to.
    fn call_conv(&self, module: &JITModule) -> cranelift_codegen::isa::CallConv {
        use cranelift_module::Module;
        if self.preserve_all {
            cranelift_codegen::isa::CallConv::PreserveAll
        } else {
            module.isa().default_call_conv()
        }
    }
}

/// Functions compiled once per process by `compile` into a module that is never freed (kernels
/// of every later compilation call them: the code must stay mapped); their addresses, or
/// `None` when compiling failed.
fn process_functions<const N: usize>(
    compile: impl FnOnce(&mut JITModule) -> Result<Vec<cranelift_module::FuncId>, ExecError>,
) -> Option<[usize; N]> {
    let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let isa = isa(true).ok()?;
        let mut module = JITModule::new(JITBuilder::with_isa(
            isa,
            cranelift_module::default_libcall_names(),
        ));
        let ids = compile(&mut module).ok()?;
        let addrs: Vec<usize> = ids
            .into_iter()
            .map(|id| module.get_finalized_function(id) as usize)
            .collect();
        std::mem::forget(module);
        addrs.try_into().ok()
    }));
    compiled.ok().flatten()
}

/// `tex_sample`, `lane_op` and `interp_step` behind trampolines of the `preserve_all`
/// convention (see `emit::compile_trampolines`), compiled once per process; `None` when that
/// failed.
fn trampolines() -> Option<[*const u8; 3]> {
    static FNS: OnceLock<Option<[usize; 3]>> = OnceLock::new();
    let fns = FNS.get_or_init(|| {
        process_functions(|module| {
            let targets = [
                tex_sample as *const u8,
                lane_op as *const u8,
                interp_step as *const u8,
            ];
            emit::compile_trampolines(module, targets).map(Vec::from)
        })
    });
    fns.map(|a| a.map(|f| f as *const u8))
}

/// The general inline texture paths (`emit::MIP_OPS`) of one calling convention. Each is
/// compiled on a thread of its own once a kernel with a site that may call it has been
/// compiled (~4 ms each with the optimizing register allocator; all five used to be compiled
/// before the first kernel that could call one, 20 ms at the start of every process that
/// samples a texture). Kernels load the entry from the path's slot at each call: until the path
/// is compiled (or when its compilation failed) the slot holds the sampler call, which takes
/// the same arguments and gives the same bits, only slower.
pub(crate) struct GeneralPaths {
    /// The [`Shims::rust`] argument the paths are compiled with (their calling convention).
    preserve_all: bool,
    /// Entry addresses by `emit::MIP_OPS`.
    slots: [AtomicUsize; 5],
    started: [AtomicBool; 5],
}

/// Compilations of general paths under way, and the condition [`wait_for_texture_paths`]
/// waits on.
static PATHS_IN_FLIGHT: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

impl GeneralPaths {
    /// The paths calling into Rust as [`Shims::rust`]`(preserve_all)` says.
    fn of(preserve_all: bool) -> &'static GeneralPaths {
        static PATHS: [OnceLock<GeneralPaths>; 2] = [OnceLock::new(), OnceLock::new()];
        PATHS[usize::from(preserve_all)].get_or_init(|| {
            let sampler = Shims::rust(preserve_all).tex as usize;
            GeneralPaths {
                preserve_all,
                slots: std::array::from_fn(|_| AtomicUsize::new(sampler)),
                started: std::array::from_fn(|_| AtomicBool::new(false)),
            }
        })
    }

    /// The address of path `k`'s slot, which compiled code loads its entry from.
    pub(crate) fn slot(&self, k: usize) -> usize {
        &self.slots[k] as *const AtomicUsize as usize
    }

    /// Starts compiling the paths of `ops` (by `emit::MIP_OPS`) not started before.
    fn start(&'static self, ops: [bool; 5]) {
        for (k, _) in ops.iter().enumerate().filter(|(_, &used)| used) {
            if self.started[k].swap(true, Ordering::AcqRel) {
                continue;
            }
            *PATHS_IN_FLIGHT.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            let work = move || {
                self.compile(k);
                path_settled();
            };
            if std::thread::Builder::new()
                .name("softgpu-jit-texture".into())
                .spawn(work)
                .is_err()
            {
                // Without a thread the slot keeps the sampler call.
                path_settled();
            }
        }
    }

    /// Compiles path `k` and publishes its entry in its slot.
    fn compile(&self, k: usize) {
        let op = emit::MIP_OPS[k];
        let Some([addr]) = process_functions::<1>(|module| {
            emit::compile_mip_fns(
                module,
                CtxOffsets::get(),
                Shims::rust(self.preserve_all),
                &[op],
            )
        }) else {
            return;
        };
        if std::env::var_os("SOFTGPU_PERF_MAP").is_some() {
            use std::io::Write;
            let path = format!("/tmp/perf-{}.map", std::process::id());
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                // The size is not known here; 16 KB covers the function.
                let conv = if self.preserve_all {
                    "_preserve_all"
                } else {
                    ""
                };
                let _ = writeln!(f, "{addr:x} 4000 softgpu_tex_general_{op:?}{conv}");
            }
        }
        // Release: the code is finalized (written and made executable) before a kernel on
        // another thread can load its address, as with a background-recompiled kernel.
        self.slots[k].store(addr, Ordering::Release);
    }
}

/// Counts a general path's compilation as finished (compiled, failed or never started).
fn path_settled() {
    let (count, done) = &PATHS_IN_FLIGHT;
    *count.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
    done.notify_all();
}

/// Blocks until every general texture path whose compilation has started is compiled (or
/// failed): from then on, kernels compiled so far call those paths instead of the sampler.
/// For tests that count sampler calls and for measurements of steady-state speed.
pub fn wait_for_texture_paths() {
    let (count, done) = &PATHS_IN_FLIGHT;
    let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
    while *n > 0 {
        n = done.wait(n).unwrap_or_else(|e| e.into_inner());
    }
}

/// True when texture instruction `inst` can take the [`tex_sample`] path: a TEX-family sample
/// whose operands are all in src0 (no offsets, no indexed units, compare reference in src0), or
/// a TXD with its gradients in src1 and src2.
fn tex_fast_path(d: &Decoded, inst: &crate::interp::decode::Inst) -> bool {
    use crate::ir::Opcode;
    if !matches!(
        inst.op,
        Opcode::TEX
            | Opcode::TXP
            | Opcode::TXB
            | Opcode::TXL
            | Opcode::TEX_LZ
            | Opcode::TXD
            | Opcode::TXF
            | Opcode::TXF_LZ
            | Opcode::TG4
    ) {
        return false;
    }
    let Some(t) = d.textures.get(inst.aux as usize) else {
        return false;
    };
    // A gather's component (src1.x) must be known when compiling, as GLSL requires it to be.
    if inst.op == Opcode::TG4 && constant_src(d, &inst.src[1]).is_none() {
        return false;
    }
    constant_tex_offset(d, t).is_some()
        && t.view.index_reg.is_none()
        && t.sampler.index_reg.is_none()
        && decode::coord_dim(t.target).is_some()
        && decode::shadow_ref(t.target).is_none_or(|r| r < 4)
}

/// The channels of `src` (swizzle and modifier applied) when they are known before the kernel
/// runs: an immediate, or a register that reads as zero. Every lane holds them.
pub(super) fn constant_src(d: &Decoded, src: &decode::Src) -> Option<[u32; 4]> {
    use decode::{Loc, Slot};
    let value = match src.loc {
        Loc::Direct(Slot::Imm(i)) => *d.imms.get(i as usize)?,
        Loc::Direct(Slot::Zero) => [[0; 4]; 4],
        _ => return None,
    };
    Some(std::array::from_fn(|c| {
        crate::interp::run::modified(value[src.swizzle[c] as usize][0], src.modifier)
    }))
}

/// The texel offset of texture operands `t` when it is known before the kernel runs — none, or
/// an immediate (what GLSL's constant offsets become) — as the interpreter's `tex_offset` reads
/// it: lane 0 of x, y and z, truncated to `int8_t`. `None` for an offset in a register that
/// changes (those instructions go through the interpreter).
pub(super) fn constant_tex_offset(d: &Decoded, t: &decode::TexOp) -> Option<[i32; 3]> {
    let Some(src) = t.offset else {
        return Some([0; 3]);
    };
    let value = constant_src(d, &src)?;
    Some(std::array::from_fn(|c| value[c] as i8 as i32))
}

/// Samples for texture instruction `pc` (one that [`tex_fast_path`] accepts): `io` holds src0
/// (swizzled, modifiers applied) on entry — for TXD followed by src1 and src2, the gradients —
/// and the texels on return. The request is built as the interpreter's `exec_tex` and
/// `exec_txd` build it.
/// `_fast` is the site's `FastTex` (the general inline path's signature, which the same call
/// site may use), unused here.
extern "C" fn tex_sample(ctx: *mut Ctx, pc: u32, io: *mut QuadVec4, _fast: *const u8) {
    use crate::exec::{LodMode, SampleRequest};
    use crate::ir::Opcode;
    let _env = fpenv::Env::rust();
    // SAFETY: compiled code passes its own context pointer (see `interp_step`) and a 192-byte
    // stack slot of its frame (three `QuadVec4`) that nothing else references during the call.
    let (ctx, io) = unsafe { (&*ctx, &mut *(io as *mut [QuadVec4; 3])) };
    // SAFETY: set by `run` from references that outlive the kernel call.
    let (kernel, resources) = unsafe {
        (
            &*ctx.kernel,
            &*(ctx.resources as *const ShaderResources<'_>),
        )
    };
    let Some(inst) = kernel.decoded.insts.get(pc as usize) else {
        return;
    };
    let Some(t) = kernel.decoded.textures.get(inst.aux as usize) else {
        return;
    };
    let floats = |v: [u32; 4]| v.map(f32::from_bits);
    let [src0, ddx, ddy] = *io;
    let offset = constant_tex_offset(&kernel.decoded, t).unwrap_or([0; 3]);
    match inst.op {
        Opcode::TXQ | Opcode::SVIEWINFO => {
            // As the interpreter: lane 0's level stands for the quad.
            let size = resources
                .textures
                .size(t.view.index, t.target, src0[0][0] as i32);
            io[0] = size.map(|v| [v; 4]);
            return;
        }
        Opcode::TXF | Opcode::TXF_LZ => {
            // Integer texel coordinates and level, as the interpreter's `texture` reads them.
            let dim = decode::coord_dim(t.target).unwrap_or(4).min(3);
            let mut coords = [[0i32; 4]; 4];
            for (coord, v) in coords.iter_mut().zip(src0).take(dim) {
                *coord = v.map(|x| x as i32);
            }
            let lod = if inst.op == Opcode::TXF_LZ {
                [0; 4]
            } else {
                src0[3].map(|x| x as i32)
            };
            io[0] = resources
                .textures
                .fetch(t.view.index, t.target, coords, lod, offset);
            return;
        }
        _ => {}
    }
    let modifier = floats(src0[3]);
    let dim = decode::coord_dim(t.target).unwrap_or(4);
    let mut request = SampleRequest {
        view: t.view.index,
        sampler: t.sampler.index,
        target: t.target,
        coords: [[0.0; 4]; 4],
        compare: None,
        lod: LodMode::Implicit,
        offset,
    };
    for (coord, v) in request.coords.iter_mut().zip(src0).take(dim) {
        *coord = floats(v);
    }
    if let Some(r) = decode::shadow_ref(t.target) {
        request.compare = Some(floats(src0[r & 3]));
    }
    match inst.op {
        Opcode::TXP => {
            for coord in request.coords.iter_mut().take(dim) {
                for (x, m) in coord.iter_mut().zip(modifier) {
                    *x = ops::div(*x, m);
                }
            }
            if let Some(cmp) = request.compare.as_mut() {
                for (x, m) in cmp.iter_mut().zip(modifier) {
                    *x = ops::div(*x, m);
                }
            }
        }
        Opcode::TXB => request.lod = LodMode::Bias(modifier),
        Opcode::TXL => request.lod = LodMode::Explicit(modifier),
        Opcode::TEX_LZ => request.lod = LodMode::Zero,
        Opcode::TG4 => {
            // As the interpreter: level 0, the component from lane 0 of src1.x.
            request.lod = LodMode::Zero;
            let component = constant_src(&kernel.decoded, &inst.src[1]).map_or(0, |c| c[0]) & 3;
            io[0] = resources.textures.gather(&request, component);
            return;
        }
        Opcode::TXD => {
            let n = decode::deriv_dim(t.target).unwrap_or(0);
            let mut gx = [[0.0; 4]; 3];
            let mut gy = [[0.0; 4]; 3];
            for c in 0..n {
                gx[c] = floats(ddx[c]);
                gy[c] = floats(ddy[c]);
            }
            request.lod = LodMode::Gradient { ddx: gx, ddy: gy };
        }
        _ => {}
    }
    io[0] = resources.textures.sample(&request);
}

/// The floating-point environment of kernels: x86 MXCSR with DAZ (denormals are zero) set, so
/// SSE arithmetic reads denormal inputs as zero exactly as `ops::flush` does (results are still
/// flushed in software: hardware FTZ detects tininess differently). Rust code called from a
/// kernel runs with the caller's environment again.
mod fpenv {
    const DAZ: u32 = 1 << 6;

    #[cfg(not(target_arch = "x86_64"))]
    fn get() -> u32 {
        0
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn set(_: u32) {}

    #[cfg(target_arch = "x86_64")]
    fn get() -> u32 {
        let mut x = 0u32;
        // SAFETY: `stmxcsr` writes the 4-byte MXCSR to the address of `x`, valid and writable.
        unsafe {
            core::arch::asm!("stmxcsr [{0}]", in(reg) &mut x as *mut u32, options(nostack, preserves_flags));
        }
        x
    }

    #[cfg(target_arch = "x86_64")]
    fn set(x: u32) {
        // SAFETY: `ldmxcsr` reads 4 bytes from the address of `x`. The values loaded differ from
        // the thread's own only in DAZ, which changes how SSE instructions read denormal inputs
        // and nothing else (no exception is unmasked); every change is undone by `Env::drop`.
        unsafe {
            core::arch::asm!("ldmxcsr [{0}]", in(reg) &x as *const u32, options(nostack, preserves_flags));
        }
    }

    /// Restores the MXCSR value it saved when dropped.
    pub(super) struct Env {
        saved: u32,
    }

    impl Env {
        /// Sets DAZ for running a kernel.
        pub(super) fn kernel() -> Env {
            let saved = get();
            set(saved | DAZ);
            Env { saved }
        }

        /// Clears DAZ for Rust code called from a kernel.
        pub(super) fn rust() -> Env {
            let saved = get();
            set(saved & !DAZ);
            Env { saved }
        }
    }

    impl Drop for Env {
        fn drop(&mut self) {
            set(self.saved);
        }
    }
}

/// Per-thread working memory of kernels, reused across quads.
#[derive(Default)]
struct Scratch {
    regs: Vec<QuadVec4>,
    inputs: Vec<QuadVec4>,
    sysvals: Vec<QuadVec4>,
    consts: Vec<ConstBuf>,
    fast: Vec<FastTex>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

const ZERO4: QuadVec4 = [[0; 4]; 4];

/// A pointer to at least `need` registers: the caller's slice when long enough, else a
/// zero-padded copy (direct reads past the caller's registers give zero, as in the interpreter).
fn padded(src: &[QuadVec4], need: usize, buf: &mut Vec<QuadVec4>) -> *const QuadVec4 {
    if src.len() >= need {
        src.as_ptr()
    } else {
        buf.clear();
        buf.extend_from_slice(src);
        buf.resize(need, ZERO4);
        buf.as_ptr()
    }
}

/// The register files of one kernel call.
struct Files {
    count: usize,
    /// What the kernel addresses directly (padded for single quads) and the byte strides.
    inputs: *const QuadVec4,
    in_stride: usize,
    sysvals: *const QuadVec4,
    sv_stride: usize,
    outputs: *mut QuadVec4,
    out_stride: usize,
    live: *const u8,
    killed: *mut u8,
    /// The caller's files, per quad, for the interpreter trampoline.
    io_inputs: *const QuadVec4,
    io_inputs_len: usize,
    io_sysvals: *const QuadVec4,
    io_sysvals_len: usize,
    io_outputs: *mut QuadVec4,
    io_outputs_len: usize,
}

impl JitShader {
    /// Runs the kernel over `files`; on failure, the quad and the error.
    fn run(
        &self,
        scratch: &mut Scratch,
        resources: &ShaderResources<'_>,
        f: Files,
    ) -> Result<(), (usize, ExecError)> {
        let k = &*self.kernel;
        if f.count == 0 {
            return Ok(());
        }
        // The kernel zeroes, at the start of every quad, the channels of the registers it keeps
        // in memory that an instruction may read before writing them (`emit::zeroed_channels`);
        // the others are spilled here before an interpreted instruction reads them.
        if scratch.regs.len() < k.decoded.num_locals {
            scratch.regs.resize(k.decoded.num_locals, ZERO4);
        }
        scratch.consts.clear();
        scratch
            .consts
            .extend(resources.constants.iter().map(|b| ConstBuf {
                ptr: b.as_ptr(),
                len: b.len(),
            }));
        while scratch.consts.len() < k.num_const_buffers {
            scratch.consts.push(ConstBuf {
                ptr: std::ptr::NonNull::dangling().as_ptr(),
                len: 0,
            });
        }
        // The tier is read once: its code and its texture-site table must belong together.
        let tier = k.tier();
        scratch.fast.clear();
        scratch.fast.extend(tier.fast_sites.iter().map(|units| {
            let textures = resources.textures;
            let view =
                textures.texel_view(units.view, units.sampler, crate::ir::TextureTarget::Tex2D);
            let padded = view
                .filter(|v| units.shape.is_some() && v.inline_shape() == units.shape)
                .and_then(|_| textures.padded_level0(units.view, units.sampler));
            FastTex::of(view, padded)
        }));
        let mut ctx = Ctx {
            regs: scratch.regs.as_mut_ptr(),
            inputs: f.inputs,
            sysvals: f.sysvals,
            outputs: f.outputs,
            consts: scratch.consts.as_ptr(),
            consts_len: scratch.consts.len(),
            budget: self.budget,
            err_pc: 0,
            count: f.count as u64,
            in_stride: f.in_stride as u64,
            sv_stride: f.sv_stride as u64,
            out_stride: f.out_stride as u64,
            live: f.live,
            killed: f.killed,
            quad: 0,
            fast: scratch.fast.as_ptr(),
            addresses: tier.addresses.as_ptr(),
            kernel: k,
            resources: resources as *const ShaderResources<'_> as *const (),
            io_inputs: f.io_inputs,
            io_inputs_len: f.io_inputs_len,
            io_sysvals: f.io_sysvals,
            io_sysvals_len: f.io_sysvals_len,
            io_outputs: f.io_outputs,
            io_outputs_len: f.io_outputs_len,
            num_locals: k.decoded.num_locals,
            error: None,
        };
        let env = fpenv::Env::kernel();
        // SAFETY: the kernel (either tier) was compiled from `k.decoded` for exactly this context
        // layout. For
        // each quad q < count it reads and writes `regs` within `num_locals` registers, reads
        // `inputs + q * in_stride` within `num_inputs` registers and `sysvals + q * sv_stride`
        // within `num_sysvals`, writes `outputs + q * out_stride` within `num_outputs`, reads
        // `live[q]` and writes `killed[q]` — the callers (`shade_quad`, `shade_quads`) check
        // that every such range lies in the slices they were given (or in padded copies);
        // constants are read only at addresses bounds-checked against each `ConstBuf::len`, the
        // table being padded to `num_const_buffers`; inline texture sites read `fast[site]`
        // (one entry per site) and, when its `ok` is set, texels at `y * width + x` for
        // `x < width`, `y < height`, which `FastTex::of` checked lie in the view's slice,
        // borrowed from `resources` for the call; with `mode` 2 their sampler call goes to the
        // general path (`GeneralPaths`, code that lives as long as the process), which reads the
        // `last + 1` entries of the level table (level indices clamped to `0..=last`) and
        // texels at `offset + y * width + x` of a level with `x`, `y` clamped to its size,
        // which `FastTex::of` checked lie in the slice too, and otherwise calls `tex_sample`; indirect accesses check each lane's index
        // against the file's bounds (or the per-quad lengths in `ctx`) and otherwise read a
        // static zero block or write a stack slot of the kernel. All pointers stay valid for
        // the call and nothing else accesses that memory meanwhile. Everything else the code
        // reaches by address comes from `addresses`: the tier's table, made for this code's
        // calling convention from process-lifetime functions, slots and tables and from
        // `k.decoded`'s immediates, which live as long as the kernel. The kernel expects DAZ, set
        // just above and restored just below.
        let status = unsafe { (tier.func)(&mut ctx) };
        drop(env);
        let quad = ctx.quad as usize;
        match status >> 8 {
            0 => Ok(()),
            STATUS_BUDGET => Err((
                quad,
                ExecError::BudgetExceeded {
                    budget: self.budget,
                    pc: ctx.err_pc as usize,
                },
            )),
            STATUS_CALL_OVERFLOW => Err((
                quad,
                ExecError::CallStackOverflow {
                    pc: ctx.err_pc as usize,
                },
            )),
            _ => Err((
                quad,
                ctx.error.take().unwrap_or(ExecError::Unsupported {
                    pc: ctx.err_pc as usize,
                    message: "the JIT kernel failed without a reason".into(),
                }),
            )),
        }
    }

    fn with_scratch<R>(&self, f: impl FnOnce(&mut Scratch) -> R) -> R {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => f(&mut scratch),
            // Re-entered from a texture callback: use fresh memory rather than fail.
            Err(_) => f(&mut Scratch::default()),
        })
    }
}

impl QuadShader for JitShader {
    fn shade_quad(
        &self,
        resources: &ShaderResources<'_>,
        io: &mut QuadIo<'_>,
    ) -> Result<u8, ExecError> {
        let k = &*self.kernel;
        if io.outputs.len() < k.num_outputs {
            // The kernel writes OUT registers directly; with fewer outputs than the program
            // addresses, the interpreter's dropped writes are the specification.
            return k
                .spec
                .as_ref()
                .unwrap_or(&k.interp)
                .clone()
                .with_budget(self.budget)
                .shade_quad(resources, io);
        }
        let mut killed = 0u8;
        self.with_scratch(|scratch| {
            let inputs = padded(io.inputs, k.num_inputs, &mut scratch.inputs);
            let sysvals = padded(io.system_values, k.num_sysvals, &mut scratch.sysvals);
            let outputs = io.outputs.as_mut_ptr();
            let files = Files {
                count: 1,
                inputs,
                in_stride: 0,
                sysvals,
                sv_stride: 0,
                outputs,
                out_stride: 0,
                live: &io.live,
                killed: &mut killed,
                io_inputs: io.inputs.as_ptr(),
                io_inputs_len: io.inputs.len(),
                io_sysvals: io.system_values.as_ptr(),
                io_sysvals_len: io.system_values.len(),
                io_outputs: outputs,
                io_outputs_len: io.outputs.len(),
            };
            self.run(scratch, resources, files)
        })
        .map_err(|(_, e)| e)?;
        Ok(killed)
    }

    fn shade_quads(
        &self,
        resources: &ShaderResources<'_>,
        batch: &mut QuadBatch<'_>,
    ) -> Result<(), BatchError> {
        let k = &*self.kernel;
        batch
            .check()
            .map_err(|error| BatchError { quad: 0, error })?;
        if batch.inputs_stride < k.num_inputs
            || batch.system_values_stride < k.num_sysvals
            || batch.outputs_stride < k.num_outputs
        {
            // Files narrower than the kernel addresses: quad by quad (padded copies).
            return crate::exec::shade_quads_one_by_one(self, resources, batch);
        }
        const R: usize = std::mem::size_of::<QuadVec4>();
        let outputs = batch.outputs.as_mut_ptr();
        let files = Files {
            count: batch.count,
            inputs: batch.inputs.as_ptr(),
            in_stride: batch.inputs_stride * R,
            sysvals: batch.system_values.as_ptr(),
            sv_stride: batch.system_values_stride * R,
            outputs,
            out_stride: batch.outputs_stride * R,
            live: batch.live.as_ptr(),
            killed: batch.killed.as_mut_ptr(),
            io_inputs: batch.inputs.as_ptr(),
            io_inputs_len: batch.inputs_stride,
            io_sysvals: batch.system_values.as_ptr(),
            io_sysvals_len: batch.system_values_stride,
            io_outputs: outputs,
            io_outputs_len: batch.outputs_stride,
        };
        self.with_scratch(|scratch| self.run(scratch, resources, files))
            .map_err(|(quad, error)| BatchError { quad, error })
    }

    fn signature(&self) -> &ShaderSignature {
        &self.kernel.signature
    }
}

/// Executes instruction `pc` with the interpreter on the kernel's registers, for the lanes in
/// `exec`. Returns 0, or 1 with the error stored in the context.
extern "C" fn interp_step(ctx: *mut Ctx, pc: u32, exec: u32) -> u32 {
    if exec & 0xF == 0 {
        return 0;
    }
    let _env = fpenv::Env::rust();
    // SAFETY: compiled code passes the context pointer it was called with, which `run` created
    // from a live `&mut Ctx`; the kernel is suspended in this call, so nothing else uses it.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: `kernel` and `resources` were set by `run` from references that outlive the
    // kernel call.
    let (kernel, resources) = unsafe {
        (
            &*ctx.kernel,
            &*(ctx.resources as *const ShaderResources<'_>),
        )
    };
    let q = ctx.quad as usize;
    // SAFETY: these (pointer, length) pairs come from the slices `run` was given (and its
    // scratch registers); they are valid for the kernel call and no other reference to them is
    // used while this function runs (compiled code is suspended in the call). The kernel sets
    // `quad` < `count` before running the quad's code, and quad q's blocks lie within the
    // caller's slices (checked by `shade_quads`; a single quad has q = 0).
    let (regs, inputs, system_values, outputs, live) = unsafe {
        (
            std::slice::from_raw_parts_mut(ctx.regs, ctx.num_locals),
            std::slice::from_raw_parts(ctx.io_inputs.add(q * ctx.io_inputs_len), ctx.io_inputs_len),
            std::slice::from_raw_parts(
                ctx.io_sysvals.add(q * ctx.io_sysvals_len),
                ctx.io_sysvals_len,
            ),
            std::slice::from_raw_parts_mut(
                ctx.io_outputs.add(q * ctx.io_outputs_len),
                ctx.io_outputs_len,
            ),
            *ctx.live.add(q),
        )
    };
    let mut io = QuadIo {
        inputs,
        system_values,
        outputs,
        live,
    };
    let Some(inst) = kernel.decoded.insts.get(pc as usize) else {
        ctx.err_pc = pc as u64;
        return 1;
    };
    let mut machine = Machine::new(&kernel.decoded, regs, resources, &mut io);
    machine.exec = (exec & 0xF) as u8;
    match machine.alu(inst) {
        Ok(()) => 0,
        Err(e) => {
            ctx.err_pc = pc as u64;
            ctx.error = Some(e);
            1
        }
    }
}

/// Per-lane operations compiled code calls through [`lane_op`]: the interpreter's own functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
enum LaneOp {
    Ex2,
    Lg2,
    Sin,
    Cos,
    Pow,
    Idiv,
    Imod,
    Udiv,
    Umod,
    Fma,
    Ldexp,
    ImulHi,
    UmulHi,
    Ibfe,
    Ubfe,
    Lsb,
    Umsb,
    Imsb,
    Popc,
    Brev,
}

impl LaneOp {
    const ALL: [LaneOp; 20] = [
        LaneOp::Ex2,
        LaneOp::Lg2,
        LaneOp::Sin,
        LaneOp::Cos,
        LaneOp::Pow,
        LaneOp::Idiv,
        LaneOp::Imod,
        LaneOp::Udiv,
        LaneOp::Umod,
        LaneOp::Fma,
        LaneOp::Ldexp,
        LaneOp::ImulHi,
        LaneOp::UmulHi,
        LaneOp::Ibfe,
        LaneOp::Ubfe,
        LaneOp::Lsb,
        LaneOp::Umsb,
        LaneOp::Imsb,
        LaneOp::Popc,
        LaneOp::Brev,
    ];

    fn apply(self, a: u32, b: u32, c: u32) -> u32 {
        let f = f32::from_bits;
        match self {
            LaneOp::Ex2 => ops::ex2(f(a)).to_bits(),
            LaneOp::Lg2 => ops::lg2(f(a)).to_bits(),
            LaneOp::Sin => ops::sin(f(a)).to_bits(),
            LaneOp::Cos => ops::cos(f(a)).to_bits(),
            LaneOp::Pow => ops::pow(f(a), f(b)).to_bits(),
            LaneOp::Idiv => ops::idiv(a as i32, b as i32) as u32,
            LaneOp::Imod => ops::imod(a as i32, b as i32) as u32,
            LaneOp::Udiv => ops::udiv(a, b),
            LaneOp::Umod => ops::umod(a, b),
            LaneOp::Fma => ops::fma(f(a), f(b), f(c)).to_bits(),
            LaneOp::Ldexp => ops::ldexp(f(a), b as i32).to_bits(),
            LaneOp::ImulHi => ops::imul_hi(a as i32, b as i32) as u32,
            LaneOp::UmulHi => ops::umul_hi(a, b),
            LaneOp::Ibfe => ops::ibfe(a as i32, b as i32, c as i32) as u32,
            LaneOp::Ubfe => ops::ubfe(a, b, c),
            LaneOp::Lsb => ops::lsb(a) as u32,
            LaneOp::Umsb => ops::umsb(a) as u32,
            LaneOp::Imsb => ops::imsb(a as i32) as u32,
            LaneOp::Popc => a.count_ones(),
            LaneOp::Brev => a.reverse_bits(),
        }
    }
}

/// `args[0][lane] = op(args[0][lane], args[1][lane], args[2][lane])` for the four lanes.
extern "C" fn lane_op(op: u32, args: *mut [[u32; 4]; 3]) {
    let _env = fpenv::Env::rust();
    // SAFETY: compiled code passes a 48-byte stack slot of its own frame, exclusively ours for
    // the duration of the call.
    let args = unsafe { &mut *args };
    let Some(op) = LaneOp::ALL.get(op as usize).copied() else {
        return;
    };
    let [a, b, c] = args;
    for ((x, y), z) in a.iter_mut().zip(b.iter()).zip(c.iter()) {
        *x = op.apply(*x, *y, *z);
    }
}
