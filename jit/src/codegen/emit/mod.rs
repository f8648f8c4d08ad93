//! Lowering of a decoded program to Cranelift IR: the instruction driver (gallivm's
//! `lp_bld_tgsi_soa`). [`compile`] builds a kernel's frame — its signature, what is loaded once
//! per call (file pointers, constants broadcast to every lane, the inline texture sites'
//! descriptors, texture lookups answered once per call), the loop over quads with fresh masks
//! and zeroed registers — and [`Emitter::walk`] emits the instructions: flow instructions
//! through `flow`, the others through `alu`, or, where that has no native form, through the
//! interpreter's own executor.
//!
//! Register channels are SSA variables (one vector per channel, lanes TL TR BL BR; `f32x4` for
//! channels mostly written by float arithmetic, else `i32x4`, cast where the other is needed),
//! except registers an indirect operand reaches, which live in memory in the interpreter's
//! layout; each instruction computes the written channels and stores them blended with the
//! execution mask. Compile time is mostly Cranelift's, per instruction emitted: constants,
//! casts and comparisons are shared where SSA allows, and blocks are sealed early (see
//! `SOFTGPU_JIT_STATS`). The execution masks (`cond`, `loop`, `cont`, `switch`,
//! `func`, as the interpreter's) are SSA variables; the interpreter's mask stacks become
//! compile-time nesting, and every construct is skipped with a branch when no lane runs it.
//!
//! **What is native and what is called.** Inline SIMD: control flow (IF/UIF/ELSE, loops with
//! BRK/BREAKC/CONT, SWITCH/CASE/DEFAULT, CAL/CALLNZ/RET — subroutines are inlined per call site,
//! up to [`MAX_CALL_DEPTH`](crate::codegen::MAX_CALL_DEPTH) deep, the next level returning
//! [`ExecError::CallStackOverflow`] exactly where the interpreter does; blocks no lane runs are
//! branched over; IFs and loops whose conditions are the same in every lane — shader
//! parameters, loop counters — are plain branches with unmasked writes under them, see
//! `uniform`), KILL/KILL_IF, helper lanes
//! (OUT stores are masked with the live lanes), derivatives (lane shuffles), direct and indirect
//! operands (per-lane bounds checks: out-of-range reads give 0, out-of-range writes are dropped),
//! MOV/ADD/SUB/MUL/DIV/MAD/LRP/DPn/MIN/MAX/CLAMP, all comparisons, CMP/UCMP/CND, rounding,
//! RCP/RSQ/SQRT, conversions (F2I/F2U with `cvttps2dq` semantics, ARL/ARR) and the integer and
//! logic ops — with the interpreter's denormal flushing (inputs by the hardware: kernels run with
//! MXCSR.DAZ, see `fpenv`; results in software, since hardware FTZ detects tininess after
//! rounding to 24 bits where `ops::flush` looks at the denormal result — except results only
//! float arithmetic reads, which DAZ flushes on the way in, see `lazy`), its MIN/MAX NaN rules
//! and its NaN choice for ADD/SUB/MUL/DIV (`ops::pick_nan`: operand order is chosen so that x86
//! picks the same NaN).
//! Per-lane calls of the very [`crate::interp::ops`] functions through `lane_op`: EX2, LG2, SIN,
//! COS and POW with special arguments (ordinary quads run inline vector ports of
//! `interp::libm`), FMA without the CPU's FMA, LDEXP, integer division and remainder,
//! IMUL_HI/UMUL_HI, bitfields and bit counts. In `llvmpipe` math
//! ([`JitShader::compile_math`](crate::codegen::JitShader::compile_math)) EX2, LG2, POW, SIN and
//! COS are vector code of `opt::lpmath`'s sequences instead, equal to the interpreter running
//! that rewrite. TEX/TXP/TXB/TXL/TEX_LZ/TXD, TXF/TXF_LZ (`texelFetch`) and TG4
//! (`textureGather`, of a constant component) call the sampler directly (`tex_sample`, request
//! built as the interpreter builds it, texel offsets included when they are immediates); texture
//! instructions whose operands are all immediates — size queries (TXQ/SVIEWINFO), lookups and
//! fetches at fixed coordinates — ask it once per kernel call, before the quads
//! ([`sample::constant_lookup`]: through the interpreter, a size query cost the store and reload
//! of every register variable around it, and Mega Bezel's bezel passes ask 20 per pixel); in
//! optimized kernels, 2D ones (not TXP, no offset) are sampled inline when the unit offers a
//! [`TexelView`](crate::exec::TexelView): level 0 with one filter and wrap in the kernel itself,
//! anything else (mip levels with their per-lane level of detail, a min/mag switch, per-axis or
//! other wraps) by the general path, compiled once per process as one function per opcode on a
//! thread of its own (`texpaths`), which the site's sampler call reaches instead (the sampler
//! itself until the path is compiled). Everything else — other texture instructions, legacy and
//! packing opcodes (LIT, EXP, LOG, XPD, NRM, PK*/UP*, …) — runs the interpreter's own executor
//! for that one instruction (`interp_step`) on the same register memory, so its result is the
//! interpreter's by construction. Registers live in SSA variables (CPU registers where Cranelift
//! can), except those an indirect operand addresses, which stay in a memory block laid out as
//! the interpreter's (`TEMP` then `ADDR`, `[channel][lane]`); before an interpreted instruction
//! the variables are stored to that block, and its destination is reloaded after.
//!
//! **Where things are.** `arith`: the float rules (gallivm's `lp_bld_arit`); `mathlib`: the
//! transcendentals (libm ports and llvmpipe's sequences); `flow`: masks and control flow
//! (`lp_bld_flow`); `operands`: register reads and writes; `alu`: the per-instruction lowering
//! (`lp_bld_tgsi_action`), interpreter steps and per-lane calls; `sample`, `sample_shaped` and
//! `sample_mip`: texture sampling (`lp_bld_sample_soa`); `format`: texel loads and the
//! transpose to channels (`lp_bld_format_soa`); `analysis`: the register analyses. This file
//! keeps the kernel frame, the [`Emitter`] state, its SSA value helpers (constants and casts
//! shared where SSA allows) and the instruction walk.

mod alu;
mod analysis;
mod arith;
mod flow;
mod format;
mod mathlib;
mod operands;
mod sample;
mod sample_mip;
mod sample_shaped;

pub(super) use sample::every_texture_site_inline;
pub use sample::MAX_INLINE_TEX;
pub(super) use sample_mip::{compile_mip_fns, MIP_OPS};

/// The emitter's maps, keyed by small integers (Cranelift values, register numbers): FxHash,
/// one multiply per word instead of SipHash, which was a tenth of a large kernel's compile time.
use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, I32, I32X4, I64, I8X16};
use cranelift_codegen::ir::{
    AbiParam, Block, ConstantData, Endianness, InstBuilder, MemFlagsData, SigRef, StackSlot,
    StackSlotData, StackSlotKind, Type, UserFuncName, Value,
};
use cranelift_codegen::ir::{Inst as ClifInst, ValueDef};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module};

use super::abi::{Address, CtxOffsets};
use super::isa::cpu_has_fma;
use super::shims::Shims;
use crate::exec::ExecError;
use crate::interp::decode::{Decoded, DstLoc, Loc, Slot};
use crate::ir::{InlineShape, Opcode, SamplerHint};
use analysis::{float_locals, flushed_locals, memory_locals, zeroed_channels};
use arith::{EXP, MANT, ONE, SIGN};
use flow::Open;
use sample::{constant_lookups, inline_site_candidate};
use sample_shaped::LANE_OFFSETS_AT;

/// Most instructions emitted after inlining subroutines before compilation is refused.
const MAX_EMITTED: usize = 200_000;

/// What [`compile`] produced.
pub(super) struct Compiled {
    pub func_id: FuncId,
    /// Bytes of machine code (for `SOFTGPU_PERF_MAP`).
    pub code_size: usize,
    pub num_inputs: usize,
    pub num_sysvals: usize,
    pub num_outputs: usize,
    pub num_const_buffers: usize,
    /// The units of the inline texture sites (one descriptor per distinct pair).
    pub fast_sites: Vec<super::abi::FastSiteUnits>,
    /// Which general texture paths ([`MIP_OPS`]) the kernel's sites may call.
    pub general_ops: [bool; 5],
    /// The machine code and its alignment, kept for the on-disk cache (`super::disk`) when it
    /// is enabled and the code needs no relocation (the caller stores only final kernels).
    pub code: Option<(Vec<u8>, u64)>,
}

pub(super) fn unsupported(pc: usize, message: impl Into<String>) -> ExecError {
    ExecError::Unsupported {
        pc,
        message: message.into(),
    }
}

/// Cranelift's working memory (function, analyses, register allocator state, SSA builder),
/// kept per thread and reused by the next compilation: fresh buffers for every kernel made
/// growing them and first touching their pages a fifth of a large kernel's compile time.
struct Workspace {
    ctx: Context,
    fctx: FunctionBuilderContext,
}

thread_local! {
    static WORKSPACE: std::cell::Cell<Option<Box<Workspace>>> = const { std::cell::Cell::new(None) };
}

/// Compiles `d` into one function of `module` and finalizes it.
pub(super) fn compile(
    module: &mut JITModule,
    d: &Decoded,
    offsets: CtxOffsets,
    shims: Shims,
    optimize: bool,
    lp_math: bool,
    hints: &[SamplerHint],
) -> Result<Compiled, ExecError> {
    // Taken out while in use (a nested compilation gets fresh memory), returned only after a
    // success: a failure may leave the builder's state half-built.
    let mut ws = WORKSPACE.take().unwrap_or_else(|| {
        Box::new(Workspace {
            ctx: module.make_context(),
            fctx: FunctionBuilderContext::new(),
        })
    });
    let r = compile_in(module, d, offsets, shims, optimize, lp_math, hints, &mut ws);
    if r.is_ok() {
        WORKSPACE.set(Some(ws));
    }
    r
}

#[allow(clippy::too_many_arguments)] // `compile`'s arguments and its workspace
fn compile_in(
    module: &mut JITModule,
    d: &Decoded,
    offsets: CtxOffsets,
    shims: Shims,
    optimize: bool,
    lp_math: bool,
    hints: &[SamplerHint],
    ws: &mut Workspace,
) -> Result<Compiled, ExecError> {
    let cl = |e: &dyn std::fmt::Display| unsupported(0, format!("cranelift: {e}"));
    let ptr = module.target_config().pointer_type();
    let call_conv = shims.call_conv(module);
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(ptr));
    sig.returns.push(AbiParam::new(I32));
    let func_id = module
        .declare_anonymous_function(&sig)
        .map_err(|e| cl(&e))?;
    let Workspace { ctx, fctx } = ws;
    module.clear_context(ctx);
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(0, func_id.as_u32());

    // Direct I/O extents and constants.
    let mut io = (0usize, 0usize, 0usize);
    let mut consts: Vec<(u32, u32)> = Vec::new();
    for inst in &d.insts {
        for s in &inst.src {
            if let Loc::Direct(slot) = s.loc {
                match slot {
                    Slot::Input(i) => io.0 = io.0.max(i as usize + 1),
                    Slot::SystemValue(i) => io.1 = io.1.max(i as usize + 1),
                    Slot::Output(i) => io.2 = io.2.max(i as usize + 1),
                    Slot::Const(b, i) if !consts.contains(&(b, i)) => consts.push((b, i)),
                    _ => {}
                }
            }
        }
        if let DstLoc::Output(i) = inst.dst {
            io.2 = io.2.max(i as usize + 1);
        }
    }
    let num_const_buffers = consts.iter().map(|c| c.0 as usize + 1).max().unwrap_or(0);
    if io.0.max(io.1).max(io.2) > super::abi::MAX_DIRECT_IO as usize {
        return Ok(Compiled {
            func_id,
            code_size: 0,
            num_inputs: io.0,
            num_sysvals: io.1,
            num_outputs: io.2,
            num_const_buffers,
            fast_sites: Vec::new(),
            general_ops: [false; 5],
            code: None,
        });
    }

    let mut fast_sites = Vec::new();
    let general_ops;
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
        let mut step = module.make_signature();
        step.params.push(AbiParam::new(ptr));
        step.params.push(AbiParam::new(I32));
        step.params.push(AbiParam::new(I32));
        if shims.preserve_all {
            step.params.push(AbiParam::new(ptr));
        } else {
            step.returns.push(AbiParam::new(I32));
        }
        step.call_conv = call_conv;
        let step_sig = b.import_signature(step);
        let mut lanes = module.make_signature();
        lanes.params.push(AbiParam::new(I32));
        lanes.params.push(AbiParam::new(ptr));
        lanes.call_conv = call_conv;
        let lanes_sig = b.import_signature(lanes);
        let mut tex = module.make_signature();
        for ty in [ptr, I32, ptr, ptr] {
            tex.params.push(AbiParam::new(ty));
        }
        tex.call_conv = call_conv;
        let tex_sig = b.import_signature(tex);
        let slot = b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            LANE_OFFSETS_AT as u32 + 16,
            4,
        ));

        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let ctx_p = b.block_params(entry)[0];
        let mf = MemFlagsData::new().with_notrap();
        let load_p = |b: &mut FunctionBuilder, off: i32| b.ins().load(ptr, mf, ctx_p, off);
        let regs = load_p(&mut b, offsets.regs);
        let inp0 = load_p(&mut b, offsets.inputs);
        let sv0 = load_p(&mut b, offsets.sysvals);
        let out0 = load_p(&mut b, offsets.outputs);
        let cb = load_p(&mut b, offsets.consts);
        let budget = b.ins().load(I64, mf, ctx_p, offsets.budget);
        let count = b.ins().load(I64, mf, ctx_p, offsets.count);
        let strides = [offsets.in_stride, offsets.sv_stride, offsets.out_stride]
            .map(|off| b.ins().load(I64, mf, ctx_p, off));
        let live_p = load_p(&mut b, offsets.live);
        let killed_p = load_p(&mut b, offsets.killed);
        let zero_addr = load_address(&mut b, ptr, ctx_p, offsets, Address::ZERO_BLOCK);
        let mut const_addr = HashMap::default();
        for &(buf, i) in &consts {
            let entry = b.ins().iadd_imm_s(cb, buf as i64 * 16);
            let base = b.ins().load(ptr, mf, entry, 0);
            let len = b.ins().load(ptr, mf, entry, 8);
            let idx = b.ins().iconst(ptr, i as i64);
            let ok = b.ins().icmp(IntCC::UnsignedLessThan, idx, len);
            let addr = b.ins().iadd_imm_s(base, i as i64 * 16);
            let addr = b.ins().select(ok, addr, zero_addr);
            const_addr.insert((buf, i), addr);
        }
        // Constant channels are loaded and broadcast once per call, for all its quads.
        let mut const_vals = HashMap::default();
        for inst in &d.insts {
            for s in &inst.src {
                if let Loc::Direct(Slot::Const(buf, i)) = s.loc {
                    for &comp in &s.swizzle {
                        const_vals.entry((buf, i, comp)).or_insert_with(|| {
                            let x = b
                                .ins()
                                .load(I32, mf, const_addr[&(buf, i)], comp as i32 * 4);
                            b.ins().splat(I32X4, x)
                        });
                    }
                }
            }
        }
        // Inline texture sites: TEX-family 2D lookups with operands in src0 (not TXP) and TXD,
        // in optimized kernels (the extra code costs compile time).
        let mut fast_of_pc = HashMap::default();
        let fast_p = load_p(&mut b, offsets.fast);
        let hint = |unit: u32| hints.iter().find(|h| h.unit == unit).map(|h| h.shape);
        let (questions, asked) = constant_lookups(d);
        if optimize {
            for (pc, inst) in d.insts.iter().enumerate() {
                if fast_of_pc.len() < MAX_INLINE_TEX
                    && !asked.contains_key(&pc)
                    && inline_site_candidate(d, inst)
                {
                    // One descriptor per distinct (view, sampler), shared by its sites.
                    let t = d.textures[inst.aux as usize];
                    let shape = hint(t.sampler.index);
                    let units = super::abi::FastSiteUnits {
                        view: t.view.index,
                        sampler: t.sampler.index,
                        shape,
                    };
                    let site = match fast_sites.iter().position(|&s| s == units) {
                        Some(site) => site,
                        None => {
                            fast_sites.push(units);
                            fast_sites.len() - 1
                        }
                    };
                    fast_of_pc.insert(pc, (site, shape));
                }
            }
        }
        // Only each site's descriptor address is computed once per call; its fields are loaded
        // where they are used, so that no vector lives across the quad loop (which made the
        // register allocator the largest part of compiling a small textured shader).
        let bases: Vec<Value> = (0..fast_sites.len())
            .map(|site| {
                let offset = site * std::mem::size_of::<super::abi::FastTex>();
                b.ins().iadd_imm_s(fast_p, offset as i64)
            })
            .collect();
        let fast_vals: HashMap<usize, (Value, Option<InlineShape>)> = fast_of_pc
            .iter()
            .map(|(&pc, &(site, shape))| (pc, (bases[site], shape)))
            .collect();
        let mem_locals = memory_locals(d);
        let lazy = super::lazy::lazy_results(d, &mem_locals);
        let uniform = super::uniform::uniform_constructs(d);
        let unmasked = super::unmasked::unmasked_writes(d, &mem_locals, &uniform);
        let mut e = Emitter {
            b,
            d,
            ptr,
            mf,
            le: MemFlagsData::new().with_endianness(Endianness::Little),
            ctx: ctx_p,
            regs,
            inp: inp0,
            sv: sv0,
            out: out0,
            live: zero_addr,
            budget,
            const_addr,
            const_vals,
            masks: [Variable::from_u32(0); 5],
            exec: Variable::from_u32(0),
            kill: Variable::from_u32(0),
            counter: Variable::from_u32(0),
            exit: Block::from_u32(0),
            step_sig,
            lanes_sig,
            tex_sig,
            slot,
            shims,
            offsets,
            emitted: 0,
            ret_in_main: false,
            uniform,
            unmasked,
            consts: HashMap::default(),
            const_bits: HashMap::default(),
            entry,
            entry_end: None,
            cast_entry: HashMap::default(),
            var_types: Vec::new(),
            zero_addr,
            cb,
            indirect_cache: HashMap::default(),
            flushed_locals: flushed_locals(d, &lazy),
            lazy,
            reg_vars: Vec::new(),
            fast_vals,
            cast_of: HashMap::default(),
            cast_here: HashMap::default(),
            konst_here: HashMap::default(),
            cmp_here: HashMap::default(),
            cast_block: None,
            neg_zero: zero_addr,
            vector_libm: cpu_has_fma(),
            lp_math: lp_math && cpu_has_fma(),
            optimize,
            op_stats: std::env::var_os("SOFTGPU_JIT_STATS").map(|_| HashMap::default()),
            tex_io: None,
            general_ops: [false; 5],
            answered: None,
        };
        e.exit = e.b.create_block();
        // Constants every flush, mask and comparison uses, defined once where they dominate all.
        for k in [
            EXP,
            MANT,
            SIGN,
            !SIGN,
            ONE,
            0x3f00_0000,
            0x4f00_0000,
            0xbf80_0000,
            1,
        ] {
            e.splat(k);
        }
        let ones = e.splat(!0);
        let zero = e.splat(0);
        let sign = e.splat(SIGN);
        e.neg_zero = e.b.ins().bitcast(F32X4, e.le, sign);
        let lane_bits = {
            let bytes: Vec<u8> = [1u32, 2, 4, 8]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            let c = e.b.func.dfg.constants.insert(ConstantData::from(bytes));
            e.b.ins().vconst(I32X4, c)
        };
        for m in 0..5 {
            e.masks[m] = e.declare(I32X4);
        }
        e.exec = e.declare(I32X4);
        e.kill = e.declare(I32X4);
        e.counter = e.declare(I64);
        let float_regs = float_locals(d);
        e.reg_vars = mem_locals
            .iter()
            .zip(&float_regs)
            .map(|(&in_memory, float)| {
                (!in_memory).then(|| {
                    std::array::from_fn(|c| e.declare(if float[c] { F32X4 } else { I32X4 }))
                })
            })
            .collect();
        e.answer_constant_lookups(&questions, &asked);
        let quad = e.declare(I64);
        let q0 = e.b.ins().iconst(I64, 0);
        e.b.def_var(quad, q0);
        let top = e.b.create_block();
        let entry_end = e.b.ins().jump(top, &[]);
        e.entry_end = Some(entry_end);

        // Per quad: file pointers, live lanes, fresh masks and zeroed registers.
        e.b.switch_to_block(top);
        let q = e.b.use_var(quad);
        e.b.ins().store(mf, q, ctx_p, offsets.quad);
        let [inp, sv, out] =
            [(inp0, strides[0]), (sv0, strides[1]), (out0, strides[2])].map(|(base, stride)| {
                let off = e.b.ins().imul(q, stride);
                e.b.ins().iadd(base, off)
            });
        (e.inp, e.sv, e.out) = (inp, sv, out);
        let live_addr = e.b.ins().iadd(live_p, q);
        let live_byte = e.b.ins().uload8(I32, mf, live_addr, 0);
        let live_v = e.b.ins().splat(I32X4, live_byte);
        let live_v = e.b.ins().band(live_v, lane_bits);
        e.live = e.b.ins().icmp(IntCC::NotEqual, live_v, zero);
        for m in 0..5 {
            e.b.def_var(e.masks[m], ones);
        }
        e.b.def_var(e.exec, ones);
        e.b.def_var(e.kill, zero);
        let c0 = e.b.ins().iconst(I64, 0);
        e.b.def_var(e.counter, c0);
        for vars in e.reg_vars.clone().into_iter().flatten() {
            for v in vars {
                let ty = e.var_type(v);
                let z = e.konst(0, ty);
                e.b.def_var(v, z);
            }
        }
        e.zero_channels(&zeroed_channels(d, &mem_locals));

        e.walk(0, d.insts.len(), None, 0)?;
        general_ops = e.general_ops;
        if let Some(stats) = e.op_stats.take() {
            print_op_stats(stats, e.b.func.dfg.num_insts(), d.insts.len());
        }
        e.b.ins().jump(e.exit, &[]);
        e.b.switch_to_block(e.exit);
        let kill = e.b.use_var(e.kill);
        let bits = e.b.ins().vhigh_bits(I32, kill);
        let q = e.b.use_var(quad);
        let kaddr = e.b.ins().iadd(killed_p, q);
        e.b.ins().istore8(mf, bits, kaddr, 0);
        let next = e.b.ins().iadd_imm_s(q, 1);
        e.b.def_var(quad, next);
        let more = e.b.ins().icmp(IntCC::UnsignedLessThan, next, count);
        let done = e.b.create_block();
        e.b.ins().brif(more, top, &[], done, &[]);
        e.enter(done);
        let ok = e.b.ins().iconst(I32, 0);
        e.b.ins().return_(&[ok]);
        e.b.seal_all_blocks();
        e.b.finalize(module.target_config());
    }
    let dump = std::env::var_os("SOFTGPU_JIT_DUMP").is_some();
    if dump {
        ctx.set_disasm(true);
        eprintln!("{}", ctx.func.display());
    }
    module
        .define_function(func_id, ctx)
        .map_err(|e| cl(&format!("{e:?}")))?;
    if dump {
        if let Some(code) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
            eprintln!("{code}");
        }
    }
    let code_size = ctx.compiled_code().map_or(0, |c| c.code_buffer().len());
    let code = ctx
        .compiled_code()
        .filter(|c| c.buffer.relocs().is_empty() && super::disk::enabled())
        .map(|c| (c.code_buffer().to_vec(), u64::from(c.buffer.alignment)));
    module.clear_context(ctx);
    module.finalize_definitions().map_err(|e| cl(&e))?;
    Ok(Compiled {
        code_size,
        func_id,
        num_inputs: io.0,
        num_sysvals: io.1,
        num_outputs: io.2,
        num_const_buffers,
        fast_sites,
        general_ops,
        code,
    })
}

/// Loads entry `which` of the kernel's address table (`Ctx::addresses`). Kernels embed no
/// absolute address — every function, table and static they reach comes from the table — so
/// their code runs wherever it is placed and can be kept on disk for another process.
fn load_address(
    b: &mut FunctionBuilder,
    ptr: Type,
    ctx_p: Value,
    offsets: CtxOffsets,
    which: Address,
) -> Value {
    let fixed = MemFlagsData::new()
        .with_notrap()
        .with_readonly()
        .with_can_move();
    let table = b.ins().load(ptr, fixed, ctx_p, offsets.addresses);
    b.ins().load(ptr, fixed, table, which.offset())
}

/// A channel value (`i32x4`) and whether it is known to hold no denormal (flushing it is a no-op).
#[derive(Clone, Copy)]
struct V {
    v: Value,
    flushed: bool,
}

/// A comparison's condition, as a key of [`Emitter::cmp_here`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Cmp {
    F(FloatCC),
    I(IntCC),
}

struct Emitter<'a, 'f> {
    b: FunctionBuilder<'f>,
    d: &'a Decoded,
    ptr: Type,
    mf: MemFlagsData,
    le: MemFlagsData,
    ctx: Value,
    regs: Value,
    inp: Value,
    sv: Value,
    out: Value,
    live: Value,
    budget: Value,
    const_addr: HashMap<(u32, u32), Value>,
    /// Broadcast constant channels, loaded once per call: `(buffer, index, component)`.
    const_vals: HashMap<(u32, u32, u8), Value>,
    masks: [Variable; 5],
    exec: Variable,
    kill: Variable,
    counter: Variable,
    exit: Block,
    step_sig: SigRef,
    lanes_sig: SigRef,
    tex_sig: SigRef,
    slot: StackSlot,
    shims: Shims,
    offsets: CtxOffsets,
    emitted: usize,
    ret_in_main: bool,
    /// Per instruction: IF/UIF and BGNLOOP constructs every lane takes together
    /// (`uniform::uniform_constructs`).
    uniform: Vec<bool>,
    /// Per instruction: whether its write to an SSA register may skip the blend with the
    /// execution mask (`unmasked::unmasked_writes`).
    unmasked: Vec<bool>,
    /// Splat constants by (bits, type), all defined in the entry block.
    consts: HashMap<(u32, Type), Value>,
    /// The bits of each splat constant (and of its casts).
    const_bits: HashMap<Value, u32>,
    /// The entry block: constants defined there are reused everywhere.
    entry: Block,
    /// The entry block's final jump, once emitted: values the whole function shares
    /// (constants, casts of entry values) are inserted before it.
    entry_end: Option<ClifInst>,
    /// Casts of entry-block values, by (operand, type): valid everywhere.
    cast_entry: HashMap<(Value, Type), Value>,
    /// The type of each variable, by index.
    var_types: Vec<Type>,
    /// A 64-byte block of zeros: where out-of-range lanes of indirect reads read.
    zero_addr: Value,
    /// The constant-buffer table.
    cb: Value,
    /// Per-lane addresses of the indirect operands of the current instruction.
    indirect_cache: HashMap<u32, [Value; 4]>,
    /// Local register channels that never hold a denormal (see [`flushed_locals`]).
    flushed_locals: Vec<[bool; 4]>,
    /// Per instruction, the result channels left unflushed (see [`super::lazy`]).
    lazy: Vec<u8>,
    /// Per local register: its channels as SSA variables, or None when it lives in memory
    /// (see [`memory_locals`]).
    reg_vars: Vec<Option<[Variable; 4]>>,
    /// Inline texture sites by program counter: the address of the site's `FastTex`, and the
    /// shape it is compiled for (from the program's sampler hints), if any.
    fast_vals: HashMap<usize, (Value, Option<InlineShape>)>,
    /// Bitcast results and their operands.
    cast_of: HashMap<Value, Value>,
    /// Bitcasts made in `cast_block`, by (operand, type).
    cast_here: HashMap<(Value, Type), Value>,
    cast_block: Option<Block>,
    /// Constants made in `cast_block` (with the optimizer, see [`Self::konst`]).
    konst_here: HashMap<(u32, Type), Value>,
    /// Comparisons made in `cast_block` (see [`Self::compare`]).
    cmp_here: HashMap<(Cmp, Value, Value), Value>,
    /// -0.0 in every lane (`f32x4`).
    neg_zero: Value,
    /// POW, EX2 and LG2 inline (`pow_inline`, `lg2_inline`): needs the CPU's FMA, which
    /// Cranelift then uses for `fma` (its libcall fallback does not exist for vectors).
    vector_libm: bool,
    /// EX2, LG2, POW, SIN and COS as Mesa 22.3 llvmpipe computes them (`opt::lpmath`, natively:
    /// see [`Self::lp_exp2`]); needs `vector_libm`.
    lp_math: bool,
    /// Whether Cranelift's optimizer runs on this function.
    optimize: bool,
    /// With `SOFTGPU_JIT_STATS`: per opcode, the instructions compiled and the Cranelift
    /// instructions they emitted (flow instructions and the per-quad frame not counted).
    op_stats: Option<HashMap<Opcode, (usize, usize)>>,
    /// In [`compile_mip_fns`]'s functions: the `io` block and program counter the sampler
    /// fallback passes on (the operands are already there).
    tex_io: Option<(Value, Value)>,
    /// Which general texture paths ([`MIP_OPS`]) the sites emitted so far call.
    general_ops: [bool; 5],
    /// Texture instructions answered once per call (see [`sample::constant_lookup`]): the stack
    /// slot holding the answers and, per instruction, where in it its texels are.
    answered: Option<(StackSlot, HashMap<usize, i32>)>,
}

/// Prints what `op_stats` gathered, largest emitters first.
fn print_op_stats(stats: HashMap<Opcode, (usize, usize)>, total: usize, insts: usize) {
    let mut rows: Vec<_> = stats.into_iter().collect();
    rows.sort_by_key(|&(_, (_, clif))| std::cmp::Reverse(clif));
    eprintln!(
        "softgpu JIT: {total} Cranelift instructions for {insts} instructions ({:.1} each)",
        total as f64 / insts.max(1) as f64
    );
    for (op, (n, clif)) in rows {
        eprintln!(
            "  {:10} {n:6} x {:5.1} = {clif}",
            op.name(),
            clif as f64 / n as f64
        );
    }
}

impl Emitter<'_, '_> {
    /// `x` in every lane, as an `i32x4`.
    fn splat(&mut self, x: u32) -> Value {
        self.konst(x, I32X4)
    }

    /// `x` in every lane, as an `f32x4`.
    fn splatf(&mut self, x: u32) -> Value {
        self.konst(x, F32X4)
    }

    /// `x` in every lane of a 4-lane vector of type `ty`. Without the optimizer, made once per
    /// function in the entry block (which dominates every use); with it, once per block where
    /// used (the optimizer places constants well, but not those made in the entry block, which
    /// stay live, and often spilled, across the whole kernel).
    fn konst(&mut self, x: u32, ty: Type) -> Value {
        if let Some(&v) = self.consts.get(&(x, ty)) {
            return v;
        }
        let local = self.optimize && self.entry_end.is_some();
        if local {
            self.sync_block();
            if let Some(&v) = self.konst_here.get(&(x, ty)) {
                return v;
            }
        }
        let bytes: Vec<u8> = (0..4).flat_map(|_| x.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        let v = match self.entry_end {
            Some(end) if !local => FuncCursor::new(self.b.func)
                .at_inst(end)
                .ins()
                .vconst(ty, c),
            _ => self.b.ins().vconst(ty, c),
        };
        if local {
            self.konst_here.insert((x, ty), v);
        } else {
            self.consts.insert((x, ty), v);
        }
        self.const_bits.insert(v, x);
        v
    }

    /// Forgets the values made for the current block when emission moved to another one.
    fn sync_block(&mut self) {
        let block = self.b.current_block();
        if self.cast_block != block {
            self.cast_block = block;
            self.cast_here.clear();
            self.konst_here.clear();
            self.cmp_here.clear();
        }
    }

    /// True when every lane of `v` is a known constant that is not a NaN.
    fn never_nan(&self, v: Value) -> bool {
        self.const_bits
            .get(&v)
            .is_some_and(|&x| !f32::from_bits(x).is_nan())
    }

    /// True when `v` cannot be a signalling NaN: SSE arithmetic (and rounding) returns quiet
    /// NaNs, and sign-bit changes of its result (`abs`, negation) keep the quiet bit. Looks
    /// through bitcasts.
    fn never_signalling(&self, mut v: Value) -> bool {
        use cranelift_codegen::ir::Opcode as Op;
        let dfg = &self.b.func.dfg;
        for _ in 0..8 {
            let ValueDef::Result(inst, _) = dfg.value_def(v) else {
                return false;
            };
            let args = dfg.inst_args(inst);
            match dfg.insts[inst].opcode() {
                Op::Fadd
                | Op::Fsub
                | Op::Fmul
                | Op::Fdiv
                | Op::Sqrt
                | Op::Fma
                | Op::Floor
                | Op::Ceil
                | Op::Trunc
                | Op::Nearest => return true,
                Op::Bitcast => v = args[0],
                Op::Band | Op::Bxor | Op::Bor => {
                    let sign_bit_only = |k: Value| {
                        self.const_bits
                            .get(&k)
                            .is_some_and(|&b| b == SIGN || b == !SIGN)
                    };
                    v = match (sign_bit_only(args[0]), sign_bit_only(args[1])) {
                        (false, true) => args[0],
                        (true, false) => args[1],
                        _ => return false,
                    };
                }
                _ => return false,
            }
        }
        false
    }

    fn f(&mut self, v: Value) -> Value {
        self.cast(F32X4, v)
    }

    fn i(&mut self, v: Value) -> Value {
        self.cast(I32X4, v)
    }

    /// True when `v` is defined in the entry block.
    fn in_entry(&self, v: Value) -> bool {
        let dfg = &self.b.func.dfg;
        let block = match dfg.value_def(v) {
            ValueDef::Result(inst, _) => self.b.func.layout.inst_block(inst),
            ValueDef::Param(block, _) => Some(block),
            _ => None,
        };
        block == Some(self.entry)
    }

    /// A bitcast, reusing an earlier one where that is valid SSA: undoing a bitcast gives its
    /// operand back (which dominates the cast, hence this use), a cast already made in the
    /// current block is reused, and values of the entry block (constants above all) are cast
    /// once, in the entry block. Halves the instructions Cranelift has to compile.
    fn cast(&mut self, ty: Type, v: Value) -> Value {
        if self.b.func.dfg.value_type(v) == ty {
            return v;
        }
        if let Some(&x) = self.cast_of.get(&v) {
            if self.b.func.dfg.value_type(x) == ty {
                return x;
            }
        }
        if let Some(end) = self.entry_end {
            if self.in_entry(v) {
                if let Some(&x) = self.cast_entry.get(&(v, ty)) {
                    return x;
                }
                let x = FuncCursor::new(self.b.func)
                    .at_inst(end)
                    .ins()
                    .bitcast(ty, self.le, v);
                self.cast_of.insert(x, v);
                self.cast_entry.insert((v, ty), x);
                if let Some(&bits) = self.const_bits.get(&v) {
                    self.const_bits.insert(x, bits);
                }
                return x;
            }
        }
        self.sync_block();
        if let Some(&x) = self.cast_here.get(&(v, ty)) {
            return x;
        }
        let x = self.b.ins().bitcast(ty, self.le, v);
        self.cast_of.insert(x, v);
        self.cast_here.insert((v, ty), x);
        if let Some(&bits) = self.const_bits.get(&v) {
            self.const_bits.insert(x, bits);
        }
        x
    }

    /// `mask ? x : y` per lane for a lane mask (an `i32x4` of all-ones or all-zeros lanes),
    /// in the type of `x` and `y` when both are floats (a comparison's mask then still
    /// becomes one `blendv`), else as integers.
    fn sel(&mut self, mask: Value, x: Value, y: Value) -> Value {
        let dfg = &self.b.func.dfg;
        if dfg.value_type(x) == F32X4 && dfg.value_type(y) == F32X4 {
            let m = self.f(mask);
            return self.b.ins().bitselect(m, x, y);
        }
        let (x, y) = (self.i(x), self.i(y));
        self.b.ins().bitselect(mask, x, y)
    }

    /// Lane `idx[l]` of `v` in lane `l`.
    fn lanes(&mut self, v: Value, idx: [u8; 4]) -> Value {
        let bytes: Vec<u8> = idx
            .iter()
            .flat_map(|&l| (0..4).map(move |k| l * 4 + k))
            .collect();
        let imm = self.b.func.dfg.immediates.push(ConstantData::from(bytes));
        let v8 = self.b.ins().bitcast(I8X16, self.le, v);
        let s = self.b.ins().shuffle(v8, v8, imm);
        self.i(s)
    }

    /// Entry `which` of the kernel's address table (see [`load_address`]).
    fn address(&mut self, which: Address) -> Value {
        load_address(&mut self.b, self.ptr, self.ctx, self.offsets, which)
    }

    /// The type `var` was declared with.
    fn var_type(&self, var: Variable) -> Type {
        self.var_types[var.as_u32() as usize]
    }

    /// A new variable of type `ty`.
    fn declare(&mut self, ty: Type) -> Variable {
        let var = self.b.declare_var(ty);
        debug_assert_eq!(var.as_u32() as usize, self.var_types.len());
        self.var_types.push(ty);
        var
    }

    /// Emits instructions `start..end`. `sub_ret` is the return block of an inlined subroutine.
    fn walk(
        &mut self,
        start: usize,
        end: usize,
        sub_ret: Option<Block>,
        depth: usize,
    ) -> Result<(), ExecError> {
        let mut stack: Vec<Open> = Vec::new();
        let mut pc = start;
        while pc < end {
            self.emitted += 1;
            if self.emitted > MAX_EMITTED {
                return Err(unsupported(
                    pc,
                    "the program is too large once subroutines are inlined",
                ));
            }
            let inst = self.d.insts[pc];
            self.indirect_cache.clear();
            if let Some(Open::Loop { count, .. }) = stack.last_mut() {
                *count += 1;
            }
            // Every lane executes in uniform constructs (see `uniform`): their masks are full.
            let full = stack.iter().all(Open::is_uniform) && sub_ret.is_none() && !self.ret_in_main;
            if !inst.is_flow {
                let n0 = self.b.func.dfg.num_insts();
                // Lanes that skip an unmasked write never read what it leaves them.
                let store_full = full || self.unmasked.get(pc).copied().unwrap_or(false);
                if !self.native_alu(&inst, store_full, pc)? {
                    self.step(pc, full);
                }
                if let Some(stats) = self.op_stats.as_mut() {
                    let e = stats.entry(inst.op).or_default();
                    e.0 += 1;
                    e.1 += self.b.func.dfg.num_insts() - n0;
                }
                pc += 1;
                continue;
            }
            pc = self.flow_instruction(inst, pc, &mut stack, sub_ret, depth)?;
        }
        if !stack.is_empty() {
            return Err(unsupported(pc, "unclosed flow construct"));
        }
        Ok(())
    }
}
