//! Lowering of a decoded program to Cranelift IR.
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

mod alu;
mod analysis;
mod arith;
mod flow;
mod mathlib;
mod operands;

/// The emitter's maps, keyed by small integers (Cranelift values, register numbers): FxHash,
/// one multiply per word instead of SipHash, which was a tenth of a large kernel's compile time.
use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F32X4, I32, I32X4, I64, I8, I8X16};
use cranelift_codegen::ir::{
    AbiParam, Block, ConstantData, Endianness, InstBuilder, MemFlagsData, SigRef, StackSlot,
    StackSlotData, StackSlotKind, Type, UserFuncName, Value,
};
use cranelift_codegen::ir::{Inst as ClifInst, ValueDef};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module};

use super::abi::{Address, CtxOffsets, STATUS_BUDGET, STATUS_CALL_OVERFLOW};
use super::isa::cpu_has_fma;
use super::shims::Shims;
use super::MAX_CALL_DEPTH;
use crate::exec::ExecError;
use crate::interp::decode::{Decoded, DstLoc, Inst, Loc, Slot};
use crate::ir::{InlineShape, InlineWrap, Opcode, OpcodeClass, SamplerHint};
use analysis::{float_locals, flushed_locals, memory_locals, zeroed_channels};
use arith::{EXP, MANT, ONE, SIGN};
use flow::{innermost_loop, Open, COND, CONT, FUNC, LOOP, SWITCH};

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

/// Where in a kernel's scratch slot a padded texture site stores its four lane offsets, which
/// it then loads as scalars: `extractlane` of lanes 1-3 is two µops on the shuffle port, which
/// the sites' transposes keep busy (after the 192 bytes the sampler calls' operands take).
const LANE_OFFSETS_AT: i32 = 192;

/// Most texture instructions of one program sampled inline (each adds ~150 instructions); they
/// share one descriptor per distinct (view, sampler).
pub(crate) const MAX_INLINE_TEX: usize = 64;

/// The sampling opcodes of inline texture sites, in the order of [`Shims::mip`].
pub(super) const MIP_OPS: [Opcode; 5] = [
    Opcode::TEX,
    Opcode::TXB,
    Opcode::TXL,
    Opcode::TEX_LZ,
    Opcode::TXD,
];

/// Compiles the general inline texture path ([`Emitter::tex_mip`]) for each of `ops` (of
/// [`MIP_OPS`]) as functions `(ctx, pc, io, fast)` of `shims`' calling convention: `io`
/// holds src0 and (TXD) the gradients as `tex_sample` takes them, `fast` the site's `FastTex`;
/// the texels are returned in `io[0]`. Kernels call them instead of carrying the ~500
/// Cranelift instructions at every site (compile time), and they run in the kernel's DAZ
/// environment like inline code.
pub(super) fn compile_mip_fns(
    module: &mut JITModule,
    offsets: CtxOffsets,
    shims: Shims,
    ops: &[Opcode],
) -> Result<Vec<FuncId>, ExecError> {
    let cl = |e: &dyn std::fmt::Display| unsupported(0, format!("cranelift: {e}"));
    let ptr = module.target_config().pointer_type();
    let call_conv = shims.call_conv(module);
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let d = Decoded {
        insts: Vec::new(),
        indirects: Vec::new(),
        textures: Vec::new(),
        cases: Vec::new(),
        imms: Vec::new(),
        num_locals: 0,
    };
    let mut ids = Vec::new();
    for &op in ops {
        let mut sig = module.make_signature();
        for ty in [ptr, I32, ptr, ptr] {
            sig.params.push(AbiParam::new(ty));
        }
        sig.call_conv = call_conv;
        let func_id = module
            .declare_anonymous_function(&sig)
            .map_err(|e| cl(&e))?;
        module.clear_context(&mut ctx);
        ctx.func.signature = sig;
        ctx.func.name = UserFuncName::user(0, func_id.as_u32());
        {
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            let mut tex = module.make_signature();
            for ty in [ptr, I32, ptr, ptr] {
                tex.params.push(AbiParam::new(ty));
            }
            tex.call_conv = call_conv;
            let tex_sig = b.import_signature(tex);
            // 64 bytes: `bilerp_lanes` pins its four lane results there.
            let slot =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 64, 4));
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            b.seal_block(entry);
            let [ctx_p, pc, io, fast] = [0, 1, 2, 3].map(|i| b.block_params(entry)[i]);
            let mf = MemFlagsData::new().with_notrap();
            let body = b.create_block();
            let entry_end = b.ins().jump(body, &[]);
            let dummy = ctx_p;
            let mut e = Emitter {
                b,
                d: &d,
                ptr,
                mf,
                le: MemFlagsData::new().with_endianness(Endianness::Little),
                ctx: ctx_p,
                regs: dummy,
                inp: dummy,
                sv: dummy,
                out: dummy,
                live: dummy,
                budget: dummy,
                const_addr: HashMap::default(),
                const_vals: HashMap::default(),
                masks: [Variable::from_u32(0); 5],
                exec: Variable::from_u32(0),
                kill: Variable::from_u32(0),
                counter: Variable::from_u32(0),
                exit: Block::from_u32(0),
                step_sig: tex_sig,
                lanes_sig: tex_sig,
                tex_sig,
                slot,
                shims,
                offsets,
                emitted: 0,
                ret_in_main: false,
                uniform: Vec::new(),
                consts: HashMap::default(),
                const_bits: HashMap::default(),
                entry,
                entry_end: Some(entry_end),
                cast_entry: HashMap::default(),
                var_types: Vec::new(),
                zero_addr: dummy,
                cb: dummy,
                indirect_cache: HashMap::default(),
                flushed_locals: Vec::new(),
                lazy: Vec::new(),
                reg_vars: Vec::new(),
                fast_vals: HashMap::default(),
                cast_of: HashMap::default(),
                cast_here: HashMap::default(),
                konst_here: HashMap::default(),
                cmp_here: HashMap::default(),
                cast_block: None,
                neg_zero: dummy,
                vector_libm: false,
                lp_math: false,
                optimize: true,
                op_stats: None,
                tex_io: Some((io, pc)),
                general_ops: [false; 5],
                answered: None,
            };
            e.enter(body);
            let src: [Value; 4] =
                std::array::from_fn(|c| e.b.ins().load(I32X4, mf, io, c as i32 * 16));
            let mut grads = Vec::new();
            if op == Opcode::TXD {
                for k in 0..2 {
                    grads.push(
                        (0..2)
                            .map(|c| e.b.ins().load(I32X4, mf, io, 64 + k * 64 + c * 16))
                            .collect(),
                    );
                }
            }
            let r = e.tex_mip(fast, 0, op, src, &grads);
            for (c, v) in r.iter().enumerate() {
                e.b.ins().store(mf, *v, io, c as i32 * 16);
            }
            e.b.ins().return_(&[]);
            e.b.seal_all_blocks();
            e.b.finalize(module.target_config());
        }
        module
            .define_function(func_id, &mut ctx)
            .map_err(|e| cl(&format!("{e:?}")))?;
        module.clear_context(&mut ctx);
        ids.push(func_id);
    }
    module.finalize_definitions().map_err(|e| cl(&e))?;
    Ok(ids)
}

/// The values of one inline texture site's descriptor, as vectors where lanes use them.
#[derive(Clone, Copy)]
struct FastSite {
    ok: Value,
    data: Value,
    /// `linear` as a scalar (0 or !0), for branching.
    linear_flag: Value,
    linear: Value,
    clamp: Value,
    border: Value,
    /// Index of the all-zero texel, which corners outside a border-clamped texture read.
    zero: Value,
    width: Value,
    wmax: Value,
    hmax: Value,
    fwidth: Value,
    fheight: Value,
    off: Value,
    lo: Value,
    hi_w: Value,
    hi_h: Value,
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

/// Whether `inst` gets an inline texture site in an optimized kernel (while fewer than
/// [`MAX_INLINE_TEX`] sites exist): a TEX-family 2D lookup with its operands in src0 (not TXP),
/// or a TXD.
/// How a texture site's fallback calls the general path (see `tex_call`): the site's
/// descriptor, its opcode, the shape the site was compiled for (if any) and its texel offset.
#[derive(Clone, Copy)]
struct GeneralPath {
    base: Value,
    op: Opcode,
    shape: Option<InlineShape>,
    offset: [i32; 2],
}

impl GeneralPath {
    /// `None` for TXD with an offset: the general path reads TXD's gradients where other
    /// lookups pass their offset, so such a site calls the sampler.
    fn of(
        base: Value,
        op: Opcode,
        shape: Option<InlineShape>,
        offset: [i32; 2],
    ) -> Option<GeneralPath> {
        (op != Opcode::TXD || offset == [0, 0]).then_some(GeneralPath {
            base,
            op,
            shape,
            offset,
        })
    }
}

fn inline_site_candidate(d: &Decoded, inst: &Inst) -> bool {
    matches!(
        inst.op,
        Opcode::TEX | Opcode::TXB | Opcode::TXL | Opcode::TEX_LZ | Opcode::TXD
    ) && super::shims::tex_fast_path(d, inst)
        && d.textures.get(inst.aux as usize).is_some_and(|t| {
            // Texel offsets must be known when the site is compiled.
            t.target == crate::ir::TextureTarget::Tex2D
                && super::shims::constant_tex_offset(d, t).is_some()
        })
}

/// Whether every texture instruction of `d` gets an inline site in an optimized kernel, so that
/// the kernel calls the Rust sampler only on the rare quads an inline site cannot take.
pub(super) fn every_texture_site_inline(d: &Decoded) -> bool {
    let mut sites = 0;
    d.insts
        .iter()
        .filter(|inst| {
            inst.op.class() == OpcodeClass::Texture && constant_lookup(d, inst).is_none()
        })
        .all(|inst| {
            sites += 1;
            sites <= MAX_INLINE_TEX && inline_site_candidate(d, inst)
        })
}

/// What a texture instruction asks when all its operands are known before the kernel runs
/// (see [`constant_lookup`]): equal questions get equal answers.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ConstantLookup {
    op: Opcode,
    view: u32,
    sampler: u32,
    target: crate::ir::TextureTarget,
    offset: [i32; 3],
    /// src0's channels (immediates hold the same bits in every lane).
    src: [u32; 4],
}

/// The question texture instruction `inst` asks when the kernel can answer it once per call,
/// before the quads, instead of per quad: a size query (TXQ, SVIEWINFO) of a level known
/// when compiling, or a TEX-family lookup or texel fetch at coordinates (and level or bias)
/// known when compiling, of units named directly. The bound textures do not change during a call, a
/// lookup has no effect besides its result, and at equal coordinates in every lane the quad's
/// derivatives are zero whether it runs per quad or once. Mega Bezel's passes read the values
/// its first pass caches in a texture at fixed coordinates (up to 13 per pixel), and ask up to
/// 20 texture sizes per pixel.
fn constant_lookup(d: &Decoded, inst: &Inst) -> Option<ConstantLookup> {
    let t = d.textures.get(inst.aux as usize)?;
    if t.view.index_reg.is_some() || t.sampler.index_reg.is_some() {
        return None;
    }
    let src = super::shims::constant_src(d, &inst.src[0])?;
    match inst.op {
        Opcode::TXQ | Opcode::SVIEWINFO => Some(ConstantLookup {
            op: inst.op,
            view: t.view.index,
            sampler: 0,
            target: t.target,
            offset: [0; 3],
            src: [src[0], 0, 0, 0],
        }),
        Opcode::TEX
        | Opcode::TXP
        | Opcode::TXB
        | Opcode::TXL
        | Opcode::TEX_LZ
        | Opcode::TXF
        | Opcode::TXF_LZ
            if super::shims::tex_fast_path(d, inst) =>
        {
            Some(ConstantLookup {
                op: inst.op,
                view: t.view.index,
                sampler: t.sampler.index,
                target: t.target,
                offset: super::shims::constant_tex_offset(d, t)?,
                src,
            })
        }
        _ => None,
    }
}

/// The distinct questions of `d`'s [`constant_lookup`]s, each with the first instruction
/// asking it, and which question each such instruction asks.
fn constant_lookups(d: &Decoded) -> (Vec<(ConstantLookup, usize)>, HashMap<usize, usize>) {
    let mut questions: Vec<(ConstantLookup, usize)> = Vec::new();
    let mut asked = HashMap::default();
    for (pc, inst) in d.insts.iter().enumerate() {
        if inst.op.class() != OpcodeClass::Texture {
            continue;
        }
        let Some(q) = constant_lookup(d, inst) else {
            continue;
        };
        let k = match questions.iter().position(|&(a, _)| a == q) {
            Some(k) => k,
            None => {
                questions.push((q, pc));
                questions.len() - 1
            }
        };
        asked.insert(pc, k);
    }
    (questions, asked)
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
            uniform: super::uniform::uniform_constructs(d),
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
    /// Inline texture sites by program counter: the address of the site's `FastTex`.
    /// Inline texture sites: the descriptor address of each, and the shape it is compiled for
    /// (from the program's sampler hints), if any.
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
    /// EX2, LG2, POW, SIN and COS as Mesa 22.3 llvmpipe computes them (`ir::lpmath`, natively:
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
    /// Texture instructions answered once per call (see [`constant_lookup`]): the stack slot
    /// holding the answers and, per instruction, where in it its texels are.
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
                if !self.native_alu(&inst, full, pc)? {
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
            match inst.op {
                Opcode::END => {
                    self.b.ins().jump(self.exit, &[]);
                    self.fresh_block();
                }
                Opcode::BGNSUB => {
                    pc = inst.target as usize + 1;
                    continue;
                }
                Opcode::ENDSUB => {
                    let to = sub_ret.unwrap_or(self.exit);
                    self.b.ins().jump(to, &[]);
                    self.fresh_block();
                }
                Opcode::NOP => {}
                Opcode::KILL | Opcode::KILP => {
                    let k = self.b.use_var(self.kill);
                    let e = self.exec();
                    let k = self.b.ins().bor(k, e);
                    self.b.def_var(self.kill, k);
                }
                Opcode::KILL_IF | Opcode::KIL => {
                    let zero = Self::flushed(self.splat(0));
                    let mut any = None;
                    for c in 0..4 {
                        let v = self.fetch(&inst.src[0], c, pc)?;
                        let lt = self.fcmp(FloatCC::LessThan, v, zero);
                        any = Some(match any {
                            None => lt,
                            Some(a) => self.b.ins().bor(a, lt),
                        });
                    }
                    let any = any.unwrap_or(zero.v);
                    let e = self.exec();
                    let m = self.b.ins().band(any, e);
                    let k = self.b.use_var(self.kill);
                    let k = self.b.ins().bor(k, m);
                    self.b.def_var(self.kill, k);
                }
                Opcode::IF | Opcode::UIF => {
                    let x = self.fetch(&inst.src[0], 0, pc)?;
                    let t = if inst.op == Opcode::IF {
                        self.float_true(x.v)
                    } else {
                        let zero = self.splat(0);
                        let x = self.i(x.v);
                        self.b.ins().icmp(IntCC::NotEqual, x, zero)
                    };
                    let has_else = self.d.insts[inst.target as usize].op == Opcode::ELSE;
                    let body = self.b.create_block();
                    let skip = self.b.create_block();
                    let end = if has_else {
                        self.b.create_block()
                    } else {
                        skip
                    };
                    let saved = if self.uniform.get(pc).copied().unwrap_or(false) {
                        // Every lane holds the same condition: branch on it.
                        let any = self.any(t);
                        self.b.ins().brif(any, body, &[], skip, &[]);
                        None
                    } else {
                        let cond = self.mask(COND);
                        let saved = self.save(cond);
                        let c = self.b.ins().band(cond, t);
                        self.set_mask(COND, c);
                        let e = self.exec();
                        let any = self.any(e);
                        self.b.ins().brif(any, body, &[], skip, &[]);
                        Some(saved)
                    };
                    self.enter(body);
                    stack.push(Open::If {
                        saved,
                        else_block: has_else.then_some(skip),
                        end,
                    });
                }
                Opcode::ELSE => {
                    let Some(Open::If {
                        saved,
                        else_block,
                        end,
                    }) = stack.last_mut()
                    else {
                        return Err(unsupported(pc, "ELSE without IF"));
                    };
                    let (saved, end) = (*saved, *end);
                    let Some(eb) = else_block.take() else {
                        return Err(unsupported(pc, "ELSE without IF"));
                    };
                    if saved.is_none() {
                        self.b.ins().jump(end, &[]);
                    } else {
                        // The lanes of the ELSE part run next, through `eb`'s mask update.
                        self.b.ins().jump(eb, &[]);
                    }
                    self.enter(eb);
                    if let Some(saved) = saved {
                        let prev = self.b.use_var(saved);
                        let cond = self.mask(COND);
                        let c = self.b.ins().band_not(prev, cond);
                        self.set_mask(COND, c);
                        let body = self.b.create_block();
                        let e = self.exec();
                        let any = self.any(e);
                        self.b.ins().brif(any, body, &[], end, &[]);
                        self.enter(body);
                    }
                }
                Opcode::ENDIF => {
                    let Some(Open::If { saved, end, .. }) = stack.pop() else {
                        return Err(unsupported(pc, "ENDIF without IF"));
                    };
                    self.b.ins().jump(end, &[]);
                    self.enter(end);
                    if let Some(saved) = saved {
                        let v = self.b.use_var(saved);
                        self.set_mask(COND, v);
                    }
                }
                Opcode::BGNLOOP => {
                    let header = self.b.create_block();
                    let latch = self.b.create_block();
                    let after = self.b.create_block();
                    let pre = self.b.create_block();
                    let e = self.exec();
                    let any = self.any(e);
                    self.b.ins().brif(any, pre, &[], after, &[]);
                    self.enter(pre);
                    let saved = if self.uniform.get(pc).copied().unwrap_or(false) {
                        // All lanes leave together: the body runs on the lanes that entered.
                        self.b.ins().jump(header, &[]);
                        None
                    } else {
                        let l = self.mask(LOOP);
                        let saved_loop = self.save(l);
                        let c = self.mask(CONT);
                        let saved_cont = self.save(c);
                        self.b.ins().jump(header, &[]);
                        Some((saved_loop, saved_cont))
                    };
                    self.b.switch_to_block(header);
                    stack.push(Open::Loop {
                        saved,
                        header,
                        latch,
                        after,
                        count: 0,
                    });
                }
                Opcode::ENDLOOP => {
                    let Some(Open::Loop {
                        saved,
                        header,
                        latch,
                        after,
                        count,
                    }) = stack.pop()
                    else {
                        return Err(unsupported(pc, "ENDLOOP without BGNLOOP"));
                    };
                    self.b.ins().jump(latch, &[]);
                    self.enter(latch);
                    if let Some((_, saved_cont)) = saved {
                        let c = self.b.use_var(saved_cont);
                        self.set_mask(CONT, c);
                    }
                    // Budget: a lower bound of the instructions this iteration executed.
                    let n = self.b.use_var(self.counter);
                    let n = self.b.ins().iadd_imm_s(n, count.max(1));
                    self.b.def_var(self.counter, n);
                    let over = self
                        .b
                        .ins()
                        .icmp(IntCC::UnsignedGreaterThan, n, self.budget);
                    let bad = self.b.create_block();
                    let ok = self.b.create_block();
                    self.b.ins().brif(over, bad, &[], ok, &[]);
                    self.enter(bad);
                    self.error_return(pc, STATUS_BUDGET);
                    self.enter(ok);
                    match saved {
                        None => {
                            self.b.ins().jump(header, &[]);
                            self.b.seal_block(header);
                        }
                        Some((saved_loop, saved_cont)) => {
                            let exit = self.b.create_block();
                            let e = self.exec();
                            let any = self.any(e);
                            self.b.ins().brif(any, header, &[], exit, &[]);
                            self.b.seal_block(header);
                            self.enter(exit);
                            let l = self.b.use_var(saved_loop);
                            self.b.def_var(self.masks[LOOP], l);
                            let c = self.b.use_var(saved_cont);
                            self.set_mask(CONT, c);
                            self.b.ins().jump(after, &[]);
                        }
                    }
                    self.enter(after);
                }
                Opcode::BRK | Opcode::BREAKC | Opcode::CONT
                    if !(inst.breaks_switch && inst.op != Opcode::CONT)
                        && innermost_loop(&stack).is_some_and(|l| l.0) =>
                {
                    // A uniform loop's exits: every lane takes them together.
                    let (_, latch, after) = innermost_loop(&stack).expect("checked above");
                    let to = if inst.op == Opcode::CONT {
                        latch
                    } else {
                        after
                    };
                    let next = self.b.create_block();
                    if inst.op == Opcode::BREAKC {
                        let x = self.fetch(&inst.src[0], 0, pc)?;
                        let zero = self.splat(0);
                        let x = self.i(x.v);
                        let t = self.b.ins().icmp(IntCC::NotEqual, x, zero);
                        let any = self.any(t);
                        self.b.ins().brif(any, to, &[], next, &[]);
                    } else {
                        self.b.ins().jump(to, &[]);
                    }
                    self.enter(next);
                }
                Opcode::BRK | Opcode::BREAKC => {
                    let mut lanes = self.exec();
                    if inst.op == Opcode::BREAKC {
                        let x = self.fetch(&inst.src[0], 0, pc)?;
                        let zero = self.splat(0);
                        let x = self.i(x.v);
                        let t = self.b.ins().icmp(IntCC::NotEqual, x, zero);
                        lanes = self.b.ins().band(lanes, t);
                    }
                    let m = if inst.breaks_switch { SWITCH } else { LOOP };
                    let cur = self.mask(m);
                    let v = self.b.ins().band_not(cur, lanes);
                    self.set_mask(m, v);
                }
                Opcode::CONT => {
                    let e = self.exec();
                    let cur = self.mask(CONT);
                    let v = self.b.ins().band_not(cur, e);
                    self.set_mask(CONT, v);
                }
                Opcode::SWITCH => {
                    let body = self.b.create_block();
                    let after = self.b.create_block();
                    let e = self.exec();
                    let any = self.any(e);
                    self.b.ins().brif(any, body, &[], after, &[]);
                    self.enter(body);
                    let sel = self.fetch(&inst.src[0], 0, pc)?.v;
                    let sel = self.i(sel);
                    let mut matched = self.splat(0);
                    for k in 0..self.d.cases[inst.aux as usize].len() {
                        let case_pc = self.d.cases[inst.aux as usize][k] as usize;
                        let case = self.d.insts[case_pc];
                        let v = self.fetch(&case.src[0], 0, case_pc)?.v;
                        let v = self.i(v);
                        let eq = self.b.ins().icmp(IntCC::Equal, sel, v);
                        matched = self.b.ins().bor(matched, eq);
                    }
                    let cur = self.mask(SWITCH);
                    let prev = self.save(cur);
                    let selector = self.save(sel);
                    let matched = self.save(matched);
                    let zero = self.splat(0);
                    self.set_mask(SWITCH, zero);
                    stack.push(Open::Switch {
                        prev,
                        selector,
                        matched,
                        after,
                    });
                }
                Opcode::CASE | Opcode::DEFAULT => {
                    let Some(&Open::Switch {
                        prev,
                        selector,
                        matched,
                        ..
                    }) = stack
                        .iter()
                        .rev()
                        .find(|o| matches!(o, Open::Switch { .. }))
                    else {
                        return Err(unsupported(pc, "CASE outside of a SWITCH"));
                    };
                    let prev = self.b.use_var(prev);
                    let add = if inst.op == Opcode::CASE {
                        let sel = self.b.use_var(selector);
                        let v = self.fetch(&inst.src[0], 0, pc)?.v;
                        let v = self.i(v);
                        let eq = self.b.ins().icmp(IntCC::Equal, sel, v);
                        self.b.ins().band(eq, prev)
                    } else {
                        let m = self.b.use_var(matched);
                        self.b.ins().band_not(prev, m)
                    };
                    let cur = self.mask(SWITCH);
                    let v = self.b.ins().bor(cur, add);
                    self.set_mask(SWITCH, v);
                }
                Opcode::ENDSWITCH => {
                    let Some(Open::Switch { prev, after, .. }) = stack.pop() else {
                        return Err(unsupported(pc, "ENDSWITCH without SWITCH"));
                    };
                    let p = self.b.use_var(prev);
                    self.set_mask(SWITCH, p);
                    self.b.ins().jump(after, &[]);
                    self.enter(after);
                }
                Opcode::CAL | Opcode::CALLNZ => {
                    let e = self.exec();
                    let lanes = if inst.op == Opcode::CALLNZ {
                        let x = self.fetch(&inst.src[0], 0, pc)?;
                        let t = self.float_true(x.v);
                        self.b.ins().band(e, t)
                    } else {
                        e
                    };
                    let call = self.b.create_block();
                    let after = self.b.create_block();
                    let any = self.any(lanes);
                    self.b.ins().brif(any, call, &[], after, &[]);
                    self.enter(call);
                    if depth >= MAX_CALL_DEPTH {
                        self.error_return(pc, STATUS_CALL_OVERFLOW);
                    } else {
                        let saved: Vec<Variable> = (0..5)
                            .map(|m| {
                                let v = self.mask(m);
                                self.save(v)
                            })
                            .collect();
                        let func = self.mask(FUNC);
                        let not_exec = self.b.ins().bnot(e);
                        let keep = self.b.ins().bor(lanes, not_exec);
                        let f = self.b.ins().band(func, keep);
                        self.set_mask(FUNC, f);
                        let ret = self.b.create_block();
                        let sub = inst.target as usize;
                        let endsub = self.d.insts[sub].target as usize;
                        self.walk(sub + 1, endsub, Some(ret), depth + 1)?;
                        self.b.ins().jump(ret, &[]);
                        self.enter(ret);
                        for (m, var) in saved.into_iter().enumerate() {
                            let v = self.b.use_var(var);
                            self.b.def_var(self.masks[m], v);
                        }
                        let c = self.mask(COND);
                        self.set_mask(COND, c);
                        self.b.ins().jump(after, &[]);
                    }
                    self.enter(after);
                }
                Opcode::RET => {
                    let e = self.exec();
                    let func = self.mask(FUNC);
                    let f = self.b.ins().band_not(func, e);
                    self.set_mask(FUNC, f);
                    let cont = self.b.create_block();
                    let any = self.any(f);
                    let to = match sub_ret {
                        Some(r) => r,
                        None => {
                            self.ret_in_main = true;
                            self.exit
                        }
                    };
                    self.b.ins().brif(any, cont, &[], to, &[]);
                    self.enter(cont);
                }
                other => {
                    return Err(unsupported(
                        pc,
                        format!("{} is not a flow instruction", other.name()),
                    ))
                }
            }
            pc += 1;
        }
        if !stack.is_empty() {
            return Err(unsupported(pc, "unclosed flow construct"));
        }
        Ok(())
    }

    /// Samples through the `tex_sample` shim: `src` is src0 (swizzled, modifiers applied),
    /// `grads` a TXD's gradient channels (src1 then src2; empty for other opcodes). With
    /// `general` (an inline site's `FastTex` address and opcode), a site whose descriptor
    /// selects the general path calls that compiled path (see [`compile_mip_fns`]) instead,
    /// which has the same signature. The texels come back as `ty` vectors.
    fn tex_call(
        &mut self,
        pc: usize,
        src: [Value; 4],
        grads: &[Vec<Value>],
        ty: Type,
        general: Option<GeneralPath>,
    ) -> [Value; 4] {
        let null = self.b.ins().iconst(self.ptr, 0);
        if let Some((io, pcv)) = self.tex_io {
            // Out of line: the operands are in `io` already.
            let callee = self.address(Address::TEX);
            self.b
                .ins()
                .call_indirect(self.tex_sig, callee, &[self.ctx, pcv, io, null]);
            return std::array::from_fn(|c| self.b.ins().load(ty, self.mf, io, c as i32 * 16));
        }
        let addr = self.tex_operands(src, grads);
        let pcv = self.b.ins().iconst(I32, pc as i64);
        let tex = self.address(Address::TEX);
        // Without general paths (the fast tier) every site calls the sampler.
        let with_paths = self.shims.mip.is_some();
        let mip = general.filter(|_| with_paths).and_then(|g| {
            let k = MIP_OPS.iter().position(|&o| o == g.op)?;
            self.general_ops[k] = true;
            Some((g, Address::general_path_slot(k)))
        });
        let (callee, fast) = match mip {
            Some((
                GeneralPath {
                    base,
                    op,
                    shape,
                    offset,
                },
                slot,
            )) => {
                use super::abi::FastTex;
                if op != Opcode::TXD {
                    // The general path reads the texel offset after the coordinates (where
                    // TXD's gradients would be).
                    let x = self.splat(offset[0] as u32);
                    let y = self.b.ins().iconst(I32, i64::from(offset[1]));
                    let o = self.b.ins().insertlane(x, y, 1);
                    self.b.ins().store(self.mf, o, addr, 64);
                }
                let mode = self.b.ins().load(
                    I32,
                    self.mf,
                    base,
                    std::mem::offset_of!(FastTex, mode) as i32,
                );
                let is_general = match shape {
                    // A site compiled for a mipmapped shape leaves to the general path every
                    // view, its own shape's quads that do not magnify in every lane included.
                    Some(shape) if shape.mipmapped => {
                        self.b.ins().icmp_imm_s(IntCC::NotEqual, mode, 0)
                    }
                    // A site compiled for one shape leaves every other view to the general
                    // path; only its own shape's odd quads call the sampler.
                    Some(shape) => {
                        let actual = self.b.ins().load(
                            I32,
                            self.mf,
                            base,
                            std::mem::offset_of!(FastTex, shape) as i32,
                        );
                        let other = self.b.ins().icmp_imm_s(
                            IntCC::NotEqual,
                            actual,
                            i64::from(shape.code()),
                        );
                        let viewed = self.b.ins().icmp_imm_s(IntCC::NotEqual, mode, 0);
                        self.b.ins().band(other, viewed)
                    }
                    None => self.b.ins().icmp_imm_s(IntCC::Equal, mode, 2),
                };
                // Loaded per call, not assumed constant: the slot holds the sampler call until
                // the general path is compiled, then that path (see
                // `super::texpaths::GeneralPaths`).
                let slot = self.address(slot);
                let f = self.b.ins().load(self.ptr, self.mf, slot, 0);
                (self.b.ins().select(is_general, f, tex), base)
            }
            None => (tex, null),
        };
        self.b
            .ins()
            .call_indirect(self.tex_sig, callee, &[self.ctx, pcv, addr, fast]);
        std::array::from_fn(|c| self.b.ins().load(ty, self.mf, addr, c as i32 * 16))
    }

    /// Asks the sampler the questions of `d`'s constant lookups (see [`constant_lookup`]),
    /// here in the entry block, once per kernel call; `asked` says which instruction asks
    /// which, and where its texels will be.
    fn answer_constant_lookups(
        &mut self,
        questions: &[(ConstantLookup, usize)],
        asked: &HashMap<usize, usize>,
    ) {
        if questions.is_empty() {
            return;
        }
        // `tex_sample` reads three operand blocks (192 bytes) from its `io` address.
        let bytes = questions.len() as u32 * 64 + 128;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            bytes,
            4,
        ));
        let offsets = asked.iter().map(|(&pc, &k)| (pc, k as i32 * 64)).collect();
        self.answered = Some((slot, offsets));
        let null = self.b.ins().iconst(self.ptr, 0);
        let callee = self.address(Address::TEX);
        for (k, &(question, pc)) in questions.iter().enumerate() {
            let addr = self.b.ins().stack_addr(self.ptr, slot, k as i32 * 64);
            for (c, &bits) in question.src.iter().enumerate() {
                let v = self.splat(bits);
                self.b.ins().store(self.mf, v, addr, c as i32 * 16);
            }
            let pcv = self.b.ins().iconst(I32, pc as i64);
            self.b
                .ins()
                .call_indirect(self.tex_sig, callee, &[self.ctx, pcv, addr, null]);
        }
    }

    /// Stores a texture instruction's operands in the stack slot as `tex_sample` reads them
    /// (src0, then the gradients from byte 64) and returns the slot's address.
    fn tex_operands(&mut self, src: [Value; 4], grads: &[Vec<Value>]) -> Value {
        // One address for all accesses (`stack_store`/`stack_load` each make their own).
        let addr = self.b.ins().stack_addr(self.ptr, self.slot, 0);
        for (c, v) in src.iter().enumerate() {
            self.b.ins().store(self.mf, *v, addr, c as i32 * 16);
        }
        for (k, g) in grads.iter().enumerate() {
            for (c, v) in g.iter().enumerate() {
                self.b
                    .ins()
                    .store(self.mf, *v, addr, 64 + k as i32 * 64 + c as i32 * 16);
            }
        }
        addr
    }

    /// Loads an inline texture site's descriptor (see `FastTex`) and broadcasts its fields.
    fn fast_site(&mut self, base: Value) -> FastSite {
        use super::abi::FastTex;
        use std::mem::offset_of;
        // Pure loads: the descriptor is valid and unchanged for the whole call, so the optimizer
        // may merge the loads of sites sharing it and move them.
        let mf = self.mf.with_readonly().with_can_move();
        let ld32 = |b: &mut FunctionBuilder, off: usize| b.ins().load(I32, mf, base, off as i32);
        let ldf = |b: &mut FunctionBuilder, off: usize| b.ins().load(F32, mf, base, off as i32);
        let data = self
            .b
            .ins()
            .load(self.ptr, mf, base, offset_of!(FastTex, data) as i32);
        let ok = ld32(&mut self.b, offset_of!(FastTex, ok));
        let lin = ld32(&mut self.b, offset_of!(FastTex, linear));
        let clamp = ld32(&mut self.b, offset_of!(FastTex, clamp));
        let border = ld32(&mut self.b, offset_of!(FastTex, border));
        let w = ld32(&mut self.b, offset_of!(FastTex, width));
        let h = ld32(&mut self.b, offset_of!(FastTex, height));
        let fw = ldf(&mut self.b, offset_of!(FastTex, fwidth));
        let fh = ldf(&mut self.b, offset_of!(FastTex, fheight));
        let lo = ldf(&mut self.b, offset_of!(FastTex, lo));
        let hi_add = ldf(&mut self.b, offset_of!(FastTex, hi_add));
        // Exact: sizes are at most 2^16.
        let hw = self.b.ins().fadd(fw, hi_add);
        let hh = self.b.ins().fadd(fh, hi_add);
        let wm = self.b.ins().iadd_imm_s(w, -1);
        let hm = self.b.ins().iadd_imm_s(h, -1);
        let half = self.b.ins().iconst(I32, 0x3f00_0000);
        let off = self.b.ins().band(lin, half);
        let zero = ld32(&mut self.b, offset_of!(FastTex, zero));
        let [linear, clamp, border, width, wmax, hmax, off, zero] =
            [lin, clamp, border, w, wm, hm, off, zero].map(|x| self.b.ins().splat(I32X4, x));
        let [fwidth, fheight, lo, hi_w, hi_h] =
            [fw, fh, lo, hw, hh].map(|x| self.b.ins().splat(F32X4, x));
        FastSite {
            ok,
            data,
            linear_flag: lin,
            linear,
            clamp,
            border,
            zero,
            width,
            wmax,
            hmax,
            fwidth,
            fheight,
            off,
            lo,
            hi_w,
            hi_h,
        }
    }

    /// softpipe's `ifloor` of lanes with |u| < 2^22: truncate, step down where that rounded up.
    fn ifloor(&mut self, u: Value) -> Value {
        let t = self.b.ins().x86_cvtt2dq(I32X4, u);
        let tf = self.b.ins().fcvt_from_sint(F32X4, t);
        let up = self.b.ins().fcmp(FloatCC::GreaterThan, tf, u);
        self.b.ins().iadd(t, up)
    }

    /// A compile-time texel offset as the float vector the texture paths add, `None` for 0
    /// (adding +0.0 would turn a -0.0 coordinate into +0.0).
    fn offset_vector(&mut self, offset: i32) -> Option<Value> {
        (offset != 0).then(|| self.splatf((offset as f32).to_bits()))
    }

    /// `v + offset`, or `v` without one.
    fn plus_offset(&mut self, v: Value, offset: Option<Value>) -> Value {
        match offset {
            Some(o) => self.b.ins().fadd(v, o),
            None => v,
        }
    }

    /// One axis of the inline sampler: the coordinate scaled and wrapped as softpipe's
    /// `img_filter_2d_{nearest,linear}_repeat_POT` (repeat) or `wrap_{nearest,linear}_clamp_to_
    /// {edge,border}` (clamp) compute it, for both filters at once (nearest: no -0.5, weight 0).
    /// Returns (u, in-range mask) — the kernel checks |u| < 2^22 before trusting `ifloor`, and
    /// hands NaN coordinates of border mode to the sampler (its nearest filter floors them
    /// unclamped). A texel `offset` is added as softpipe adds it: to the scaled coordinate
    /// before the clamp in clamping modes, after the half-texel shift in REPEAT on
    /// power-of-two sizes (`img_filter_2d_{nearest,linear}_repeat_POT`).
    fn tex_axis_u(
        &mut self,
        s: Value,
        size: Value,
        hi: Value,
        site: FastSite,
        offset: Option<Value>,
    ) -> (Value, Value) {
        let p = self.f(s);
        let p = self.b.ins().fmul(p, size);
        let off = self.f(site.off);
        let ur = self.b.ins().fsub(p, off);
        let ur = self.plus_offset(ur, offset);
        let pc = self.plus_offset(p, offset);
        let c = self.mesa_clamp(pc, site.lo, hi);
        let uc = self.b.ins().fsub(c, off);
        let uc = self.i(uc);
        let ur = self.i(ur);
        let u = self.b.ins().bitselect(site.clamp, uc, ur);
        let abs = self.splat(!SIGN);
        let a = self.b.ins().band(u, abs);
        let a = self.f(a);
        let lim = self.splat(0x4a80_0000); // 2^22
        let lim = self.f(lim);
        let ok = self.b.ins().fcmp(FloatCC::LessThan, a, lim);
        let nan = self.b.ins().fcmp(FloatCC::Unordered, p, p);
        let bad = self.b.ins().band(nan, site.border);
        let ok = self.b.ins().band_not(ok, bad);
        (u, ok)
    }

    /// Texel indices and weight of one axis from `u`: (i0, i1, weight bits, i0 inside, i1
    /// inside). Outside the texture (border mode only) the index is clamped for the load and
    /// the texel then replaced by the transparent black border.
    fn tex_axis_idx(&mut self, u: Value, max: Value, site: FastSite) -> [Value; 5] {
        let (w, fl) = self.frac_floor(u);
        let w = self.i(w);
        let w = self.b.ins().band(w, site.linear);
        let one = self.splat(1);
        let fl1 = self.b.ins().iadd(fl, one);
        let zero = self.splat(0);
        let i0r = self.b.ins().band(fl, max);
        let i1r = self.b.ins().band(fl1, max);
        let c0 = self.b.ins().smax(fl, zero);
        let i0c = self.b.ins().smin(c0, max);
        let c1 = self.b.ins().smax(fl1, zero);
        let i1c = self.b.ins().smin(c1, max);
        let i0 = self.b.ins().bitselect(site.clamp, i0c, i0r);
        let i1 = self.b.ins().bitselect(site.clamp, i1c, i1r);
        let in0 = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, fl, max);
        let in1 = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, fl1, max);
        let in0 = self.b.ins().bor_not(in0, site.border);
        let in1 = self.b.ins().bor_not(in1, site.border);
        [i0, i1, w, in0, in1]
    }

    /// The decoded texels at `row + x` of the four lanes as four channel vectors (`[r, g, b, a]`
    /// of lanes 0-3), zero where `yin & xin` is clear (the border: those lanes read the view's
    /// all-zero texel). Each lane loads its texel's 16 bytes; a 4x4 transpose turns texels
    /// into channels.
    fn texel_channels(
        &mut self,
        site: FastSite,
        row: Value,
        x: Value,
        yin: Value,
        xin: Value,
    ) -> [Value; 4] {
        let i = self.texel_index(site, row, x, yin, xin);
        self.gather_rows(site.data, i)
    }

    /// The texel index `row + x` per lane, or the zero texel's where `yin & xin` is clear.
    fn texel_index(
        &mut self,
        site: FastSite,
        row: Value,
        x: Value,
        yin: Value,
        xin: Value,
    ) -> Value {
        let i = self.b.ins().iadd(row, x);
        let inside = self.b.ins().band(yin, xin);
        self.b.ins().bitselect(inside, i, site.zero)
    }

    /// Inline sampling of decoded texels (see [`TextureAccess::texel_view`]) with the sampler's exact
    /// arithmetic; falls back to [`Self::tex_call`] when the unit has no view, a coordinate is
    /// denormal (the kernel's DAZ would read it as zero where the sampler does not) or a scaled
    /// coordinate is NaN or beyond 2^22 (softpipe's wide `ifloor`).
    ///
    /// [`TextureAccess::texel_view`]: crate::exec::TextureAccess::texel_view
    fn tex_inline(
        &mut self,
        site: FastSite,
        pc: usize,
        src: [Value; 4],
        grads: &[Vec<Value>],
        general: Option<GeneralPath>,
        offset: [i32; 2],
    ) -> [Value; 4] {
        let fast = self.b.create_block();
        let slow = self.b.create_block();
        let join = self.texel_join();
        let (s, t) = (self.i(src[0]), self.i(src[1]));
        let [os, ot] = offset.map(|o| self.offset_vector(o));
        let (us, oks) = self.tex_axis_u(s, site.fwidth, site.hi_w, site, os);
        let (ut, okt) = self.tex_axis_u(t, site.fheight, site.hi_h, site, ot);
        let ds = self.denormal_mask(s);
        let dt = self.denormal_mask(t);
        let denormal = self.b.ins().bor(ds, dt);
        let in_range = self.b.ins().band(oks, okt);
        let good = self.b.ins().band_not(in_range, denormal);
        let all = self.b.ins().vall_true(good);
        let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, site.ok, 0);
        let go = self.b.ins().band(all, ok);
        self.b.ins().brif(go, fast, &[], slow, &[]);

        self.enter(slow);
        let r = self.tex_call(pc, src, grads, I32X4, general);
        self.jump_texels(join, r);

        self.enter(fast);
        let [x0, x1, xw, xin0, xin1] = self.tex_axis_idx(us, site.wmax, site);
        let [y0, y1, yw, yin0, yin1] = self.tex_axis_idx(ut, site.hmax, site);
        let row0 = self.b.ins().imul(y0, site.width);
        let linear_block = self.b.create_block();
        let nearest_block = self.b.create_block();
        self.b
            .ins()
            .brif(site.linear_flag, linear_block, &[], nearest_block, &[]);

        // Nearest: the texel itself (a lerp with weight 0 would turn -0.0 into +0.0).
        self.enter(nearest_block);
        let t = self.texel_channels(site, row0, x0, yin0, xin0);
        self.jump_texels(join, t);

        self.enter(linear_block);
        let row1 = self.b.ins().imul(y1, site.width);
        let corners = [
            self.texel_index(site, row0, x0, yin0, xin0),
            self.texel_index(site, row0, x1, yin0, xin1),
            self.texel_index(site, row1, x0, yin1, xin0),
            self.texel_index(site, row1, x1, yin1, xin1),
        ];
        let out = self.bilerp_lanes(site.data, corners, xw, yw, None);
        self.jump_texels(join, out);
        self.texels_at(join)
    }

    /// An inline texture site: the level-0 code (`tex_inline`), whose sampler fallback calls
    /// the out-of-line general path instead when the site's descriptor says so (see
    /// `FastTex::mode`), so that a site has one call in all.
    fn tex_site(
        &mut self,
        base: Value,
        pc: usize,
        op: Opcode,
        src: [Value; 4],
        grads: &[Vec<Value>],
        offset: [i32; 2],
    ) -> [Value; 4] {
        let site = self.fast_site(base);
        let general = GeneralPath::of(base, op, None, offset);
        self.tex_inline(site, pc, src, grads, general, offset)
    }

    /// An inline texture site compiled for views of one `shape` (see `SamplerHint`): the
    /// arithmetic of [`Self::tex_inline`] for that filter and wrap mode only, without the
    /// per-lane selections between modes. Views of any other shape take the general path (or
    /// the sampler), as do the quads `tex_inline` leaves to the sampler. A texel `offset` is
    /// added as `tex_axis_u` adds it. For a mipmapped shape, only quads whose every lane
    /// magnifies read level 0 here; the others take the general path.
    #[allow(clippy::too_many_arguments)]
    fn tex_shaped(
        &mut self,
        base: Value,
        pc: usize,
        op: Opcode,
        src: [Value; 4],
        grads: &[Vec<Value>],
        shape: InlineShape,
        offset: [i32; 2],
    ) -> [Value; 4] {
        use super::abi::FastTex;
        use std::mem::offset_of;
        let mf = self.mf.with_readonly().with_can_move();
        let ld32 = |b: &mut FunctionBuilder, off: usize| b.ins().load(I32, mf, base, off as i32);
        let ldf = |b: &mut FunctionBuilder, off: usize| b.ins().load(F32, mf, base, off as i32);
        let border = shape.wrap == InlineWrap::ClampToBorder;
        let clamp = shape.wrap != InlineWrap::RepeatPot;
        let fast = self.b.create_block();
        let slow = self.b.create_block();
        let join = self.texel_join();
        let actual = ld32(&mut self.b, offset_of!(FastTex, shape));
        let fw = ldf(&mut self.b, offset_of!(FastTex, fwidth));
        let fh = ldf(&mut self.b, offset_of!(FastTex, fheight));
        let (lo, hi_add) = super::abi::coordinate_clamp(border, shape.linear);
        let (s, t) = (self.i(src[0]), self.i(src[1]));
        let axis = |e: &mut Self, coord: Value, fsize: Value, offset: i32| {
            let offset = e.offset_vector(offset);
            let size = e.b.ins().splat(F32X4, fsize);
            let p = e.f(coord);
            let p = e.b.ins().fmul(p, size);
            if clamp {
                let hi = e.b.ins().f32const(hi_add);
                let hi = e.b.ins().fadd(fsize, hi);
                let hi = e.b.ins().splat(F32X4, hi);
                let lo = e.splatf(lo.to_bits());
                let pc = e.plus_offset(p, offset);
                let c = e.mesa_clamp(pc, lo, hi);
                // Clamped coordinates are in range; NaN ones become `lo`, as in the sampler,
                // except that its nearest border filter floors them unclamped.
                let nan =
                    (border && !shape.linear).then(|| e.b.ins().fcmp(FloatCC::Unordered, p, p));
                (e.shaped_offset(c, shape), nan)
            } else {
                let u = e.shaped_offset(p, shape);
                let u = e.plus_offset(u, offset);
                let abs = e.splat(!SIGN);
                let ui = e.i(u);
                let a = e.b.ins().band(ui, abs);
                let a = e.f(a);
                let lim = e.splatf(0x4a80_0000); // 2^22
                let ok = e.b.ins().fcmp(FloatCC::LessThan, a, lim);
                let bad = e.b.ins().bnot(ok);
                (u, Some(bad))
            }
        };
        let (us, bad_s) = axis(self, s, fw, offset[0]);
        let (ut, bad_t) = axis(self, t, fh, offset[1]);
        // The kernel reads a denormal coordinate as a zero of its sign, the sampler does not:
        // the scaled coordinate is then below 2^-110 in magnitude either way, which a bilinear
        // filter's -0.5 absorbs and CLAMP_TO_EDGE's clamp to [0, size] sends to the same texel
        // 0. Only the nearest filter's other wraps floor -tiny to -1 where -0 gives 0.
        let denormals_matter = !shape.linear && shape.wrap != InlineWrap::ClampToEdge;
        let mut bad = if denormals_matter {
            let ds = self.denormal_mask(s);
            let dt = self.denormal_mask(t);
            Some(self.b.ins().bor(ds, dt))
        } else {
            None
        };
        for b in [bad_s, bad_t].into_iter().flatten() {
            bad = Some(match bad {
                Some(x) => self.b.ins().bor(x, b),
                None => b,
            });
        }
        let all = match bad {
            Some(bad) => {
                let good = self.b.ins().bnot(bad);
                self.b.ins().vall_true(good)
            }
            None => self.b.ins().iconst(I8, 1),
        };
        let ours = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, actual, i64::from(shape.code()));
        let go = self.b.ins().band(all, ours);
        if shape.mipmapped {
            // Level 0 with the magnification filter is what softpipe's `mip_filter_nearest`
            // and `mip_filter_linear` read for lanes whose level of detail is at most 0 (and
            // the only filter of the shape, as minification uses the same one).
            let magnify = self.b.create_block();
            self.b.ins().brif(go, magnify, &[], slow, &[]);
            self.enter(magnify);
            let (lod, bad) = self.mip_lod(base, op, s, t, src[3], grads);
            let zero = self.splatf(0);
            let magnified = self.b.ins().fcmp(FloatCC::LessThanOrEqual, lod, zero);
            let magnified = self.i(magnified);
            let good = self.b.ins().band_not(magnified, bad);
            let all = self.b.ins().vall_true(good);
            self.b.ins().brif(all, fast, &[], slow, &[]);
        } else {
            self.b.ins().brif(go, fast, &[], slow, &[]);
        }

        self.enter(slow);
        let general = GeneralPath::of(base, op, Some(shape), offset);
        let r = self.tex_call(pc, src, grads, I32X4, general);
        self.jump_texels(join, r);

        self.enter(fast);
        let out = self.padded_sample(base, us, ut, shape);
        self.jump_texels(join, out);
        self.texels_at(join)
    }

    /// The texels of a site compiled for `shape` at the (offset, clamped or range-checked)
    /// texel coordinates `us`, `ut`, from the unit's padded level 0 (see
    /// `TextureAccess::padded_level0`): the apron holds what the wrap mode reads beyond each
    /// edge, so clamped coordinates need no index clamp and no border test, and a bilinear
    /// lane's four texels are at its top-left texel's address, one texel and one row further
    /// (one index per lane instead of four).
    fn padded_sample(
        &mut self,
        base: Value,
        us: Value,
        ut: Value,
        shape: InlineShape,
    ) -> [Value; 4] {
        use super::abi::FastTex;
        use std::mem::offset_of;
        let mf = self.mf.with_readonly().with_can_move();
        let padded = self
            .b
            .ins()
            .load(self.ptr, mf, base, offset_of!(FastTex, padded) as i32);
        let pitch = self
            .b
            .ins()
            .load(I32, mf, base, offset_of!(FastTex, pitch) as i32);
        let (xw, fx) = self.frac_floor(us);
        let (yw, fy) = self.frac_floor(ut);
        // Clamped coordinates are in the apron already (from -2 for a bilinear CLAMP_TO_BORDER
        // to the column after the last); REPEAT's wrap into the texture.
        let (x0, y0) = if shape.wrap == InlineWrap::RepeatPot {
            let w = self
                .b
                .ins()
                .load(I32, mf, base, offset_of!(FastTex, width) as i32);
            let h = self
                .b
                .ins()
                .load(I32, mf, base, offset_of!(FastTex, height) as i32);
            let wm = self.b.ins().iadd_imm_s(w, -1);
            let hm = self.b.ins().iadd_imm_s(h, -1);
            let wmax = self.b.ins().splat(I32X4, wm);
            let hmax = self.b.ins().splat(I32X4, hm);
            (self.b.ins().band(fx, wmax), self.b.ins().band(fy, hmax))
        } else {
            (fx, fy)
        };
        let pitch_v = self.b.ins().splat(I32X4, pitch);
        let row = self.b.ins().imul(y0, pitch_v);
        let index = self.b.ins().iadd(row, x0);
        let twice = self.twice(index);
        // Lane `l`'s texel address; indices may be negative (the apron before the first texel).
        let scratch = self.b.ins().stack_addr(self.ptr, self.slot, 0);
        self.b.ins().store(self.mf, twice, scratch, LANE_OFFSETS_AT);
        let address = |e: &mut Self, l: u8| {
            let at = LANE_OFFSETS_AT + 4 * i32::from(l);
            let o = e.b.ins().sload32(e.mf, scratch, at);
            let o = e.b.ins().ishl_imm_u(o, 3);
            e.b.ins().iadd(padded, o)
        };
        if !shape.linear {
            // Nearest: the texel itself (a lerp with weight 0 would turn -0.0 into +0.0).
            let rows = std::array::from_fn(|l| {
                let a = address(self, l as u8);
                self.b.ins().load(I32X4, self.mf, a, 0)
            });
            return self.transpose(rows);
        }
        let pitch64 = self.b.ins().uextend(self.ptr, pitch);
        let row_bytes = self.b.ins().ishl_imm_u(pitch64, 4);
        self.bilerp_rows(xw, yw, None, |e, l| {
            let top = address(e, l);
            let bottom = e.b.ins().iadd(top, row_bytes);
            [
                e.b.ins().load(I32X4, e.mf, top, 0),
                e.b.ins().load(I32X4, e.mf, top, 16),
                e.b.ins().load(I32X4, e.mf, bottom, 0),
                e.b.ins().load(I32X4, e.mf, bottom, 16),
            ]
        })
    }

    /// `tex_axis_u`'s subtraction of the filter's half-texel offset: 0.5 for the bilinear
    /// filter; nothing for the nearest one (`x - 0.0` is `x` for the clamped or range-checked
    /// values here, which are never denormal: coordinates are normal and sizes at least 1).
    fn shaped_offset(&mut self, x: Value, shape: InlineShape) -> Value {
        let x = self.f(x);
        if shape.linear {
            let half = self.splatf(0x3f00_0000);
            self.b.ins().fsub(x, half)
        } else {
            x
        }
    }

    /// A block taking four `i32x4` texel channels, where a texture site's paths meet.
    fn texel_join(&mut self) -> Block {
        let join = self.b.create_block();
        for _ in 0..4 {
            self.b.append_block_param(join, I32X4);
        }
        join
    }

    /// Jumps to `join` (see [`Self::texel_join`]) with `texels`.
    fn jump_texels(&mut self, join: Block, texels: [Value; 4]) {
        let args: Vec<_> = texels.iter().map(|&v| v.into()).collect();
        self.b.ins().jump(join, &args);
    }

    /// Continues at `join` (see [`Self::texel_join`]) and returns its texels.
    fn texels_at(&mut self, join: Block) -> [Value; 4] {
        self.enter(join);
        let p = self.b.block_params(join);
        [p[0], p[1], p[2], p[3]]
    }

    /// softpipe's `lerp(a, v0, v1)`: `v0 + a * (v1 - v0)` (`a` a float, `v0`/`v1` any type; bits).
    fn lerp(&mut self, a: Value, v0: Value, v1: Value) -> Value {
        let (v0, v1) = (self.f(v0), self.f(v1));
        let d = self.b.ins().fsub(v1, v0);
        let m = self.b.ins().fmul(a, d);
        let r = self.b.ins().fadd(v0, m);
        self.i(r)
    }

    /// `a > b ? a : b` on floats (softpipe's comparisons: a NaN gives `b`).
    fn gt_select(&mut self, a: Value, b: Value) -> Value {
        let (a, b) = (self.f(a), self.f(b));
        let gt = self.b.ins().fcmp(FloatCC::GreaterThan, a, b);
        let (a, b) = (self.i(a), self.i(b));
        self.b.ins().bitselect(gt, a, b)
    }

    /// Mesa's `CLAMP(x, lo, hi)` as softpipe compiles it, on floats: `x > lo ? (x > hi ? hi :
    /// x) : lo` (a NaN gives `lo`).
    fn mesa_clamp(&mut self, x: Value, lo: Value, hi: Value) -> Value {
        let (x, lo, hi) = (self.f(x), self.f(lo), self.f(hi));
        let gt_lo = self.b.ins().fcmp(FloatCC::GreaterThan, x, lo);
        let gt_hi = self.b.ins().fcmp(FloatCC::GreaterThan, x, hi);
        let (xi, lo, hi) = (self.i(x), self.i(lo), self.i(hi));
        let r = self.b.ins().bitselect(gt_hi, hi, xi);
        let r = self.b.ins().bitselect(gt_lo, r, lo);
        self.f(r)
    }

    /// `index * 2` lane by lane, for [`Self::texel_row`]: exact as an unsigned 32-bit value,
    /// which is how `texel_row` extends it, for every index below 2^31 (`FastTex::of`'s bound).
    fn twice(&mut self, index: Value) -> Value {
        self.b.ins().ishl_imm_u(index, 1)
    }

    /// Lane `l`'s 16-byte texel at `base + index[l] * 16`, given `twice(index)`: the remaining
    /// factor 8 is an address scale, so each texel costs an extract and a load.
    fn texel_row(&mut self, base: Value, twice_index: Value, l: u8) -> Value {
        let o = self.b.ins().extractlane(twice_index, l);
        let o = self.b.ins().uextend(self.ptr, o);
        let o = self.b.ins().ishl_imm_u(o, 3);
        let a = self.b.ins().iadd(base, o);
        self.b.ins().load(I32X4, self.mf, a, 0)
    }

    /// Four 16-byte rows at `base + index * 16` (one per lane of `index`) as four column
    /// vectors (see [`Self::transpose`]).
    fn gather_rows(&mut self, base: Value, index: Value) -> [Value; 4] {
        let index = self.twice(index);
        let rows: [Value; 4] = std::array::from_fn(|l| self.texel_row(base, index, l as u8));
        self.transpose(rows)
    }

    /// softpipe's `lerp_2d` of the texels at indices `idx` (top-left, top-right, bottom-left,
    /// bottom-right; along x on both rows, then along y), lane by lane: each lane lerps its own
    /// four texels as whole `[r, g, b, a]` vectors with its weights broadcast, and one transpose
    /// makes channels of the four results — the same operations on the same values as lerping
    /// channel by channel after four transposes (so the same bits), with four live texels
    /// instead of sixteen. `linear`: a lane mask; other lanes take the top-left texel itself
    /// (nearest filtering).
    fn bilerp_lanes(
        &mut self,
        base: Value,
        idx: [Value; 4],
        xw: Value,
        yw: Value,
        linear: Option<Value>,
    ) -> [Value; 4] {
        let idx = idx.map(|i| self.twice(i));
        self.bilerp_rows(xw, yw, linear, |e, l| idx.map(|i| e.texel_row(base, i, l)))
    }

    /// [`Self::bilerp_lanes`] of the texels `corners(lane)` loads (top-left, top-right,
    /// bottom-left, bottom-right, as 16-byte rows).
    fn bilerp_rows(
        &mut self,
        xw: Value,
        yw: Value,
        linear: Option<Value>,
        mut corners: impl FnMut(&mut Self, u8) -> [Value; 4],
    ) -> [Value; 4] {
        let (xw, yw) = (self.f(xw), self.f(yw));
        let texels: [Value; 4] = std::array::from_fn(|l| {
            let l = l as u8;
            let [c00, c10, c01, c11] = corners(self, l);
            let wx = self.broadcast_lane(xw, l);
            let wy = self.broadcast_lane(yw, l);
            let t0 = self.lerp(wx, c00, c10);
            let t1 = self.lerp(wx, c01, c11);
            let r = self.lerp(wy, t0, t1);
            let r = match linear {
                // A lerp with weight 0 would turn -0.0 into +0.0: the texel itself.
                Some(lin) => {
                    let lin = self.f(lin);
                    let m = self.broadcast_lane(lin, l);
                    let m = self.i(m);
                    let c00 = self.i(c00);
                    self.b.ins().bitselect(m, r, c00)
                }
                None => r,
            };
            if self.optimize {
                // The optimizer computes pure values where first used, after every side
                // effect before that use: without a use here, all sixteen loads would come
                // first and their texels be spilled. A store (to scratch nobody reads; one place
                // per lane, so that no store overwrites another and dies) is such a use.
                let scratch = self.b.ins().stack_addr(self.ptr, self.slot, 0);
                self.b.ins().store(self.mf, r, scratch, 16 * i32::from(l));
            }
            r
        });
        self.transpose(texels)
    }

    /// Lane `l` of the `f32x4` `v` in every lane.
    fn broadcast_lane(&mut self, v: Value, l: u8) -> Value {
        let bytes: Vec<u8> = (0..16).map(|k| l * 4 + k % 4).collect();
        let mask = self.b.func.dfg.immediates.push(ConstantData::from(bytes));
        let v = self.b.ins().bitcast(I8X16, self.le, v);
        let r = self.b.ins().shuffle(v, v, mask);
        self.b.ins().bitcast(F32X4, self.le, r)
    }

    /// Rows (one 4-component vector per lane) to columns (one vector per component), as
    /// `i32x4`: a 4x4 transpose (punpck{l,h}dq, then punpck{l,h}qdq).
    fn transpose(&mut self, rows: [Value; 4]) -> [Value; 4] {
        let rows = rows.map(|v| {
            let v = self.i(v);
            self.b.ins().bitcast(I8X16, self.le, v)
        });
        let lo32: Vec<u8> = [0u8, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23].to_vec();
        let hi32: Vec<u8> = lo32.iter().map(|b| b + 8).collect();
        let lo64: Vec<u8> = (0..8).chain(16..24).collect();
        let hi64: Vec<u8> = (8..16).chain(24..32).collect();
        let [lo32, hi32, lo64, hi64] = [lo32, hi32, lo64, hi64]
            .map(|m| self.b.func.dfg.immediates.push(ConstantData::from(m)));
        let rg01 = self.b.ins().shuffle(rows[0], rows[1], lo32);
        let rg23 = self.b.ins().shuffle(rows[2], rows[3], lo32);
        let ba01 = self.b.ins().shuffle(rows[0], rows[1], hi32);
        let ba23 = self.b.ins().shuffle(rows[2], rows[3], hi32);
        let cols = [
            self.b.ins().shuffle(rg01, rg23, lo64),
            self.b.ins().shuffle(rg01, rg23, hi64),
            self.b.ins().shuffle(ba01, ba23, lo64),
            self.b.ins().shuffle(ba01, ba23, hi64),
        ];
        cols.map(|c| self.i(c))
    }

    /// softpipe's `compute_lambda_2d` from the s and t derivatives along x and y, with
    /// `util_fast_log2` (exponent plus the sampler's 257-entry table, one load per lane).
    fn lambda(&mut self, d: [Value; 4], fw: Value, fh: Value, log2: Value) -> Value {
        let abs = self.splat(!SIGN);
        let [sx, sy, tx, ty] = d.map(|v| {
            let v = self.i(v);
            self.b.ins().band(v, abs)
        });
        let ms = self.gt_select(sx, sy);
        let mt = self.gt_select(tx, ty);
        let (ms, mt) = (self.f(ms), self.f(mt));
        let maxx = self.b.ins().fmul(ms, fw);
        let maxy = self.b.ins().fmul(mt, fh);
        let rho = self.gt_select(maxx, maxy);
        let exp = self.splat(EXP);
        let mant = self.splat(MANT);
        let e = self.b.ins().band(rho, exp);
        let e = self.b.ins().ushr_imm_u(e, 23);
        let bias = self.splat(127);
        let e = self.b.ins().isub(e, bias);
        let epart = self.b.ins().fcvt_from_sint(F32X4, e);
        let m = self.b.ins().band(rho, mant);
        let round = self.splat(1 << 14);
        let m = self.b.ins().iadd(m, round);
        let idx = self.b.ins().ushr_imm_u(m, 15);
        let mut table = self.splat(0);
        for l in 0..4u8 {
            let o = self.b.ins().extractlane(idx, l);
            let o = self.b.ins().uextend(self.ptr, o);
            let o = self.b.ins().ishl_imm_u(o, 2);
            let a = self.b.ins().iadd(log2, o);
            let x = self.b.ins().load(I32, self.mf, a, 0);
            table = self.b.ins().insertlane(table, x, l);
        }
        let table = self.f(table);
        self.b.ins().fadd(epart, table)
    }

    /// Inline sampling of mipmapped (or min/mag-switching, or per-axis wrapped) textures: the
    /// level of detail, level choice and blend of softpipe's `mip_filter_{none,nearest,linear}`
    /// and `mip_filter_linear_2d_linear_repeat_POT` per lane, each level filtered as `tex_inline`
    /// does with per-lane level sizes and filters. Falls back to [`Self::tex_call`] for quads
    /// with denormal coordinates, derivatives, gradients, bias or lod (the kernel's DAZ would
    /// read them as zero), NaN border coordinates and scaled coordinates beyond 2^22.
    fn tex_mip(
        &mut self,
        base: Value,
        pc: usize,
        op: Opcode,
        src: [Value; 4],
        grads: &[Vec<Value>],
    ) -> [Value; 4] {
        use super::abi::FastTex;
        use std::mem::offset_of;
        let mf = self.mf;
        let ld32 = |b: &mut FunctionBuilder, off: usize| b.ins().load(I32, mf, base, off as i32);
        let ldp = |b: &mut FunctionBuilder, ptr: Type, off: usize| {
            b.ins().load(ptr, mf, base, off as i32)
        };
        let ptr = self.ptr;
        let data = ldp(&mut self.b, ptr, offset_of!(FastTex, data));
        let levels = ldp(&mut self.b, ptr, offset_of!(FastTex, levels));
        let zero_texel = ld32(&mut self.b, offset_of!(FastTex, zero));
        let zero_texel = self.b.ins().splat(I32X4, zero_texel);
        let [kind, mag_lin, min_lin, clamp_s, border_s, clamp_t, border_t, last] = self
            .splat_fields(
                base,
                I32,
                [
                    offset_of!(FastTex, mip_kind),
                    offset_of!(FastTex, mag_linear),
                    offset_of!(FastTex, min_linear),
                    offset_of!(FastTex, clamp_s),
                    offset_of!(FastTex, border_s),
                    offset_of!(FastTex, clamp_t),
                    offset_of!(FastTex, border_t),
                    offset_of!(FastTex, last),
                ],
            );
        let [npot_s, mirror_s, npot_t, mirror_t] = self.splat_fields(
            base,
            I32,
            [
                offset_of!(FastTex, npot_s),
                offset_of!(FastTex, mirror_s),
                offset_of!(FastTex, npot_t),
                offset_of!(FastTex, mirror_t),
            ],
        );

        // ---- level of detail (softpipe's compute_lambda_lod_unclamped, then CLAMP) ----
        let (s, t) = (self.i(src[0]), self.i(src[1]));
        let (lod, mut bad) = self.mip_lod(base, op, s, t, src[3], grads);
        // The texel offset the site passes after the coordinates (TXD's gradients are there:
        // its sites pass none). REPEAT on other sizes or on one axis only and MIRRORED_REPEAT
        // add it unlike `tex_axis_u`: such lookups go to the sampler.
        let offsets = match (op, self.tex_io) {
            (Opcode::TXD, _) | (_, None) => None,
            (_, Some((io, _))) => {
                let o = self.b.ins().load(I32X4, self.mf, io, 64);
                let [ox, oy] = [[0u8; 4], [1; 4]].map(|l| self.lanes(o, l));
                let either = self.b.ins().bor(ox, oy);
                let zero = self.splat(0);
                let any = self.b.ins().icmp(IntCC::NotEqual, either, zero);
                // softpipe adds an offset in float only through the clamps and its
                // `img_filter_2d_*_repeat_POT` (both axes REPEAT, power-of-two sizes); REPEAT
                // on one axis only takes its generic filter, which adds it after the floor.
                let [rep_s, rep_t] = [(clamp_s, mirror_s), (clamp_t, mirror_t)].map(|(c, m)| {
                    let other = self.b.ins().bor(c, m);
                    self.b.ins().bnot(other)
                });
                let mixed = self.b.ins().bxor(rep_s, rep_t);
                let odd = [npot_s, mirror_s, npot_t, mirror_t, mixed]
                    .into_iter()
                    .reduce(|a, b| self.b.ins().bor(a, b))
                    .expect("five masks");
                let odd = self.b.ins().band(any, odd);
                bad = self.b.ins().bor(bad, odd);
                let [os, ot] = [ox, oy].map(|v| self.b.ins().fcvt_from_sint(F32X4, v));
                Some((os, ot))
            }
        };

        // ---- levels and blend per lane (softpipe's mip filters) ----
        let zero_f = self.splatf(0);
        let le0 = self.b.ins().fcmp(FloatCC::LessThanOrEqual, lod, zero_f);
        let lin = self.b.ins().bitselect(le0, mag_lin, min_lin);
        // Within [-64, 64] the conversions below cannot overflow; levels are at most 31.
        let lim = self.splatf(64f32.to_bits());
        let nlim = self.splatf((-64f32).to_bits());
        let lodc = self.mesa_clamp(lod, nlim, lim);
        let tr = self.b.ins().x86_cvtt2dq(I32X4, lodc);
        let (frac, _) = self.frac_floor(lodc);
        let zero = self.splat(0);
        let ones = self.splat(!0);
        let le0 = self.i(le0);
        // Nearest: (int)(lod + 0.5) capped at the last level; level 0 when magnifying.
        let half = self.splatf(0x3f00_0000);
        let nr = self.b.ins().fadd(lodc, half);
        let nr = self.b.ins().x86_cvtt2dq(I32X4, nr);
        let nr = self.b.ins().smin(nr, last);
        let nr = self.b.ins().smax(nr, zero);
        let n_a = self.b.ins().bitselect(le0, zero, nr);
        // Linear: level 0 when magnifying, the last level from (int)lod >= last, else a blend.
        let top = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, tr, last);
        let g_a = self.b.ins().bitselect(top, last, tr);
        let g_a = self.b.ins().bitselect(le0, zero, g_a);
        let g_blend = self.b.ins().bor(top, le0);
        let g_blend = self.b.ins().bxor(g_blend, ones);
        // The POT repeat shortcut: `(unsigned)level0 >= last` picks level 0 or the last one.
        let q_top = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, tr, last);
        let q_neg = self.b.ins().icmp(IntCC::SignedLessThan, tr, zero);
        let q_end = self.b.ins().bitselect(q_neg, zero, last);
        let q_a = self.b.ins().bitselect(q_top, q_end, tr);
        let q_blend = self.b.ins().bxor(q_top, ones);
        let kinds: [Value; 4] = std::array::from_fn(|k| {
            if k == 0 {
                return zero;
            }
            let kv = self.splat(k as u32);
            self.b.ins().icmp(IntCC::Equal, kind, kv)
        });
        let mut level_a = self.b.ins().band(kinds[1], n_a);
        let ga = self.b.ins().band(kinds[2], g_a);
        level_a = self.b.ins().bor(level_a, ga);
        let qa = self.b.ins().band(kinds[3], q_a);
        level_a = self.b.ins().bor(level_a, qa);
        let gb = self.b.ins().band(kinds[2], g_blend);
        let qb = self.b.ins().band(kinds[3], q_blend);
        let blend = self.b.ins().bor(gb, qb);
        // Clamped for the level-table loads (the selection already keeps them in range).
        let level_a = self.b.ins().smax(level_a, zero);
        let level_a = self.b.ins().smin(level_a, last);
        let one = self.splat(1);
        let next = self.b.ins().iadd(level_a, one);
        let next = self.b.ins().smin(next, last);
        let level_b = self.b.ins().bitselect(blend, next, level_a);

        // ---- per-level sizes and scaled coordinates ----
        let half_i = self.splat(0x3f00_0000);
        let off = self.b.ins().band(lin, half_i);
        let lo_lin = self.splat((-1f32).to_bits());
        let lo_near = self.splat((-0.5f32).to_bits());
        let lo_border = self.b.ins().bitselect(lin, lo_lin, lo_near);
        let lo_s = self.b.ins().band(border_s, lo_border);
        let lo_t = self.b.ins().band(border_t, lo_border);
        let hi_s = self.b.ins().band(border_s, half_i);
        let hi_t = self.b.ins().band(border_t, half_i);
        // One level's texel addressing, and its lanes' in-range mask.
        let addressing = |e: &mut Self, level: Value| {
            let [offset, width, height, _] = e.gather_rows(levels, level);
            let fw = e.b.ins().fcvt_from_sint(F32X4, width);
            let fh = e.b.ins().fcvt_from_sint(F32X4, height);
            let wmax = e.b.ins().isub(width, one);
            let hmax = e.b.ins().isub(height, one);
            let (hs, ht) = (e.f(hi_s), e.f(hi_t));
            let hi_w = e.b.ins().fadd(fw, hs);
            let hi_h = e.b.ins().fadd(fh, ht);
            let axis = |clamp: Value, border: Value, lo: Value| FastSite {
                ok: zero,
                data,
                linear_flag: zero,
                linear: lin,
                clamp,
                border,
                zero: zero_texel,
                width,
                wmax,
                hmax,
                fwidth: fw,
                fheight: fh,
                off,
                lo,
                hi_w,
                hi_h,
            };
            let (lo_sf, lo_tf) = (e.f(lo_s), e.f(lo_t));
            let site_s = axis(clamp_s, border_s, lo_sf);
            let site_t = axis(clamp_t, border_t, lo_tf);
            let (us, oks) = e.tex_axis_u(s, fw, hi_w, site_s, offsets.map(|o| o.0));
            let (ut, okt) = e.tex_axis_u(t, fh, hi_h, site_t, offsets.map(|o| o.1));
            let (xi, oks) = e.wrap_axis(s, us, oks, width, fw, site_s, npot_s, mirror_s);
            let (yi, okt) = e.wrap_axis(t, ut, okt, height, fh, site_t, npot_t, mirror_t);
            let ok = e.b.ins().band(oks, okt);
            ((xi, yi, offset, width, site_s), ok)
        };
        let good = self.b.ins().bxor(bad, ones);
        let (level_a_rows, ok_a) = addressing(self, level_a);
        let good_a = self.b.ins().band(good, ok_a);
        let join = self.texel_join();
        let slow = self.b.create_block();
        // Level B is addressed only when a lane blends two levels (when none does, it is level
        // A in every lane, whose range was checked): magnified quads address one level.
        let single = self.b.create_block();
        let blending = self.b.create_block();
        let any_blend = self.b.ins().vany_true(blend);
        self.b.ins().brif(any_blend, blending, &[], single, &[]);

        self.enter(single);
        let fast_single = self.b.create_block();
        let all = self.b.ins().vall_true(good_a);
        self.b.ins().brif(all, fast_single, &[], slow, &[]);
        self.enter(fast_single);
        let a = self.tex_level(level_a_rows, lin);
        self.jump_texels(join, a);

        self.enter(blending);
        let (level_b_rows, ok_b) = addressing(self, level_b);
        let good_ab = self.b.ins().band(good_a, ok_b);
        let fast_two = self.b.create_block();
        let all = self.b.ins().vall_true(good_ab);
        self.b.ins().brif(all, fast_two, &[], slow, &[]);
        self.enter(fast_two);
        let a = self.tex_level(level_a_rows, lin);
        let bv = self.tex_level(level_b_rows, lin);
        let w = frac;
        let mut out = a;
        for (c, o) in out.iter_mut().enumerate() {
            // softpipe's lerp(blend, a, b) where the lane blends, else level A's texel.
            let r = self.lerp(w, a[c], bv[c]);
            *o = self.b.ins().bitselect(blend, r, a[c]);
        }
        self.jump_texels(join, out);

        self.enter(slow);
        let r = self.tex_call(pc, src, grads, I32X4, None);
        self.jump_texels(join, r);
        self.texels_at(join)
    }

    /// The `FastTex` fields at `offsets` from `base`, each loaded as `ty` (I32 or F32) and
    /// splatted to a vector of four.
    fn splat_fields<const N: usize>(
        &mut self,
        base: Value,
        ty: Type,
        offsets: [usize; N],
    ) -> [Value; N] {
        let vector = if ty == F32 { F32X4 } else { I32X4 };
        offsets.map(|o| {
            let x = self.b.ins().load(ty, self.mf, base, o as i32);
            self.b.ins().splat(vector, x)
        })
    }

    /// The level of detail of a lookup by mipmapped site `base` (its `FastTex`) per lane, as
    /// softpipe's `compute_lambda_lod_unclamped` and CLAMP compute it from the quad's
    /// derivatives of `s`, `t` (TXD: its gradients), the bias or level in `modifier` and the
    /// sampler's bias and limits; with the lanes whose inputs the kernel's DAZ would read
    /// differently (denormal coordinates, derivatives, bias, level or level of detail), which
    /// the sampler must answer.
    fn mip_lod(
        &mut self,
        base: Value,
        op: Opcode,
        s: Value,
        t: Value,
        modifier: Value,
        grads: &[Vec<Value>],
    ) -> (Value, Value) {
        use super::abi::FastTex;
        use std::mem::offset_of;
        let mf = self.mf;
        let log2 = self
            .b
            .ins()
            .load(self.ptr, mf, base, offset_of!(FastTex, log2) as i32);
        let [fw0, fh0, lod_bias, min_lod, max_lod] = self.splat_fields(
            base,
            F32,
            [
                offset_of!(FastTex, fwidth),
                offset_of!(FastTex, fheight),
                offset_of!(FastTex, lod_bias),
                offset_of!(FastTex, min_lod),
                offset_of!(FastTex, max_lod),
            ],
        );
        let mut bad = self.denormal_mask(s);
        let dt = self.denormal_mask(t);
        bad = self.b.ins().bor(bad, dt);
        let derivs = match op {
            Opcode::TXD => {
                let z = self.splat(0);
                let g = |k: usize, c: usize| grads.get(k).and_then(|g| g.get(c)).copied();
                Some([
                    g(0, 0).unwrap_or(z),
                    g(1, 0).unwrap_or(z),
                    g(0, 1).unwrap_or(z),
                    g(1, 1).unwrap_or(z),
                ])
            }
            Opcode::TXL | Opcode::TEX_LZ => None,
            _ => {
                // The quad's corners: x = BR - BL, y = TL - BL (one value for all lanes).
                let mut d = [s; 4];
                for (k, v) in [s, t].into_iter().enumerate() {
                    let br = self.lanes(v, [3, 3, 3, 3]);
                    let bl = self.lanes(v, [2, 2, 2, 2]);
                    let tl = self.lanes(v, [0, 0, 0, 0]);
                    let (br, bl, tl) = (self.f(br), self.f(bl), self.f(tl));
                    d[2 * k] = self.b.ins().fsub(br, bl);
                    d[2 * k + 1] = self.b.ins().fsub(tl, bl);
                }
                Some(d)
            }
        };
        let lambda = match derivs {
            Some(d) => {
                for v in d {
                    let m = self.denormal_mask(v);
                    bad = self.b.ins().bor(bad, m);
                }
                Some(self.lambda(d, fw0, fh0, log2))
            }
            None => None,
        };
        let modifier = self.f(modifier);
        let lod = match (op, lambda) {
            (Opcode::TXD, Some(l)) => l,
            (Opcode::TXB, Some(l)) => {
                let m = self.denormal_mask(modifier);
                bad = self.b.ins().bor(bad, m);
                let l = self.b.ins().fadd(l, lod_bias);
                self.b.ins().fadd(l, modifier)
            }
            (_, Some(l)) => self.b.ins().fadd(l, lod_bias),
            (Opcode::TXL, None) => {
                let m = self.denormal_mask(modifier);
                bad = self.b.ins().bor(bad, m);
                self.b.ins().fadd(modifier, lod_bias)
            }
            (_, None) => lod_bias,
        };
        // The clamp's comparisons would read a denormal lod as zero.
        let m = self.denormal_mask(lod);
        bad = self.b.ins().bor(bad, m);
        (self.mesa_clamp(lod, min_lod, max_lod), bad)
    }

    /// `x - floor(x)` for lanes with |x| < 2^22 (softpipe's `frac`), with the floor.
    fn frac_floor(&mut self, x: Value) -> (Value, Value) {
        let x = self.f(x);
        let fl = self.ifloor(x);
        let flf = self.b.ins().fcvt_from_sint(F32X4, fl);
        (self.b.ins().fsub(x, flf), fl)
    }

    /// Texel indices, weight and inside masks of one axis of [`Self::tex_mip`] (as
    /// `tex_axis_idx` returns them) and its in-range mask: `tex_axis_idx` for REPEAT on
    /// power-of-two sizes and the clamps; softpipe's `repeat` for REPEAT on other sizes in
    /// `npot` lanes (`(coord + size * 1024) % size` in unsigned arithmetic: coordinates below
    /// `-1024 * size` texels, where that wraps around 2^32, go to the sampler); its mirrored
    /// `wrap_{nearest,linear}_mirror_repeat` in `mirror` lanes (for |coord| < 2^22).
    #[allow(clippy::too_many_arguments)]
    fn wrap_axis(
        &mut self,
        coord: Value,
        u: Value,
        ok: Value,
        size: Value,
        fsize: Value,
        site: FastSite,
        npot: Value,
        mirror: Value,
    ) -> ([Value; 5], Value) {
        let one = self.splat(1);
        let max = self.b.ins().isub(size, one);
        let [i0, i1, w, in0, in1] = self.tex_axis_idx(u, max, site);
        // The other wraps only where a lane has one (every lane or none: wraps are per site).
        let special = self.b.ins().bor(npot, mirror);
        let any = self.b.ins().vany_true(special);
        let extra = self.b.create_block();
        let join = self.b.create_block();
        for _ in 0..6 {
            self.b.append_block_param(join, I32X4);
        }
        let common: Vec<_> = [i0, i1, w, in0, in1, ok]
            .iter()
            .map(|&v| self.i(v).into())
            .collect();
        self.b.ins().brif(any, extra, &[], join, &common);
        self.enter(extra);
        let one = self.splat(1);
        let zero = self.splat(0);
        // REPEAT, any size: floor(u) mod size through a float quotient (|u| < 2^22, so the
        // quotient is at most one too large) and one correction.
        let uf = self.f(u);
        let fl = self.ifloor(uf);
        let flf = self.b.ins().fcvt_from_sint(F32X4, fl);
        let q = self.b.ins().fdiv(flf, fsize);
        let q = self.ifloor(q);
        let qs = self.b.ins().imul(q, size);
        let r = self.b.ins().isub(fl, qs);
        let neg = self.b.ins().icmp(IntCC::SignedLessThan, r, zero);
        let add = self.b.ins().band(neg, size);
        let r = self.b.ins().iadd(r, add);
        let big = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, r, size);
        let sub = self.b.ins().band(big, size);
        let n0 = self.b.ins().isub(r, sub);
        let n1 = self.b.ins().iadd(n0, one);
        let wraps = self.b.ins().icmp(IntCC::Equal, n1, size);
        let n1 = self.b.ins().bitselect(wraps, zero, n1);
        let k = self.splat((-1024i32) as u32);
        let lim = self.b.ins().imul(size, k);
        let far = self.b.ins().icmp(IntCC::SignedLessThan, fl, lim);
        let far = self.b.ins().band(far, npot);
        let ok = self.b.ins().band_not(ok, far);
        // MIRRORED_REPEAT from the coordinate itself.
        let (fr, flr) = self.frac_floor(coord);
        let odd = self.b.ins().band(flr, one);
        let odd = self.b.ins().icmp(IntCC::NotEqual, odd, zero);
        let onef = self.splatf(ONE);
        let half = self.splatf(0x3f00_0000);
        let inv = self.b.ins().fsub(onef, fr);
        // Linear: the scaled position, mirrored on odd repeats.
        let a = self.b.ins().fmul(fr, fsize);
        let a = self.b.ins().fsub(a, half);
        let bm = self.b.ins().fmul(inv, fsize);
        let bm = self.b.ins().fadd(bm, half);
        let (ai, bi) = (self.i(a), self.i(bm));
        let um = self.b.ins().bitselect(odd, bi, ai);
        let umf = self.f(um);
        let (wa, m0) = self.frac_floor(umf);
        let onem = self.b.ins().fsub(onef, umf);
        let (wb, _) = self.frac_floor(onem);
        let (wa, wb) = (self.i(wa), self.i(wb));
        let mw = self.b.ins().bitselect(odd, wb, wa);
        let mw = self.b.ins().band(mw, site.linear);
        let m0p = self.b.ins().iadd(m0, one);
        let m0m = self.b.ins().isub(m0, one);
        let m1 = self.b.ins().bitselect(odd, m0m, m0p);
        let m0n = self.b.ins().icmp(IntCC::SignedLessThan, m0, zero);
        let m0a = self.b.ins().band(m0n, one);
        let m0 = self.b.ins().iadd(m0, m0a);
        let m0 = self.b.ins().smin(m0, max);
        let m1 = self.b.ins().smin(m1, max);
        let m1n = self.b.ins().icmp(IntCC::SignedLessThan, m1, zero);
        let m1a = self.b.ins().band(m1n, one);
        let m1 = self.b.ins().iadd(m1, m1a);
        // Nearest: u (mirrored on odd repeats) against 1/(2 size) and 1 - that.
        let two = self.splatf(2f32.to_bits());
        let twice = self.b.ins().fmul(two, fsize);
        let lo = self.b.ins().fdiv(onef, twice);
        let hi = self.b.ins().fsub(onef, lo);
        let (fri, invi) = (self.i(fr), self.i(inv));
        let un = self.b.ins().bitselect(odd, invi, fri);
        let un = self.f(un);
        let scaled = self.b.ins().fmul(un, fsize);
        let nf = self.ifloor(scaled);
        let below = self.b.ins().fcmp(FloatCC::LessThan, un, lo);
        let above = self.b.ins().fcmp(FloatCC::GreaterThan, un, hi);
        let nf = self.b.ins().bitselect(above, max, nf);
        let nf = self.b.ins().bitselect(below, zero, nf);
        let mi0 = self.b.ins().bitselect(site.linear, m0, nf);
        let cf = self.f(coord);
        let abs = self.splat(!SIGN);
        let ac = self.i(cf);
        let ac = self.b.ins().band(ac, abs);
        let ac = self.f(ac);
        let lim22 = self.splatf(0x4a80_0000);
        let mok = self.b.ins().fcmp(FloatCC::LessThan, ac, lim22);
        let ok = self.b.ins().bitselect(mirror, mok, ok);
        // Per lane: mirrored, repeated (any size) or the common result; indices kept inside
        // the level whatever the lane computed (only all-good quads load).
        let pick = |b: &mut FunctionBuilder, m: Value, n: Value, c: Value| {
            let v = b.ins().bitselect(npot, n, c);
            b.ins().bitselect(mirror, m, v)
        };
        let i0 = pick(&mut self.b, mi0, n0, i0);
        let i1 = pick(&mut self.b, m1, n1, i1);
        let w = {
            let v = self.b.ins().bitselect(mirror, mw, w);
            self.i(v)
        };
        let in0 = self.b.ins().bor(in0, special);
        let in1 = self.b.ins().bor(in1, special);
        let [i0, i1] = [i0, i1].map(|i| {
            let i = self.b.ins().smax(i, zero);
            self.b.ins().smin(i, max)
        });
        let args: Vec<_> = [i0, i1, w, in0, in1, ok]
            .iter()
            .map(|&v| self.i(v).into())
            .collect();
        self.b.ins().jump(join, &args);
        self.enter(join);
        let p = self.b.block_params(join);
        ([p[0], p[1], p[2], p[3], p[4]], p[5])
    }

    /// One level of [`Self::tex_mip`]: the four corners (per-lane level offset and size), the
    /// bilinear lerp in linear lanes and the first corner itself in nearest ones
    /// ([`Self::bilerp_lanes`]).
    fn tex_level(
        &mut self,
        (xi, yi, offset, width, site_s): ([Value; 5], [Value; 5], Value, Value, FastSite),
        lin: Value,
    ) -> [Value; 4] {
        let [x0, x1, xw, xin0, xin1] = xi;
        let [y0, y1, yw, yin0, yin1] = yi;
        let r0 = self.b.ins().imul(y0, width);
        let row0 = self.b.ins().iadd(offset, r0);
        let r1 = self.b.ins().imul(y1, width);
        let row1 = self.b.ins().iadd(offset, r1);
        let corners = [
            self.texel_index(site_s, row0, x0, yin0, xin0),
            self.texel_index(site_s, row0, x1, yin0, xin1),
            self.texel_index(site_s, row1, x0, yin1, xin0),
            self.texel_index(site_s, row1, x1, yin1, xin1),
        ];
        self.bilerp_lanes(site_s.data, corners, xw, yw, Some(lin))
    }
}

#[cfg(test)]
mod tests {
    use super::every_texture_site_inline;
    use crate::interp::decode::decode;
    use crate::ir::text::parse_program;

    fn decoded(body: &str) -> crate::interp::decode::Decoded {
        let text = format!(
            "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL SAMP[0]\n\
             DCL SVIEW[0], 2D, FLOAT\nDCL TEMP[0..1]\n{body}END\n"
        );
        decode(&parse_program(&text).expect("test program parses")).expect("decodes")
    }

    #[test]
    fn sampler_calls_are_rare_only_when_every_texture_site_is_inline() {
        // No texture instruction, or only 2D TEX-family lookups: calls are fallbacks.
        assert!(every_texture_site_inline(&decoded("MOV OUT[0], IN[0]\n")));
        assert!(every_texture_site_inline(&decoded(
            "TEX TEMP[0], IN[0], SAMP[0], 2D\nTXL TEMP[1], IN[0], SAMP[0], 2D\n\
             ADD OUT[0], TEMP[0], TEMP[1]\n"
        )));
        // texelFetch and size queries call Rust on every quad; so does a projective lookup.
        for op in [
            "TXF TEMP[0], IN[0], SAMP[0], 2D",
            "TXQ TEMP[0], IN[0], SAMP[0], 2D",
            "TXP TEMP[0], IN[0], SAMP[0], 2D",
        ] {
            let body =
                format!("TEX TEMP[1], IN[0], SAMP[0], 2D\n{op}\nADD OUT[0], TEMP[0], TEMP[1]\n");
            assert!(!every_texture_site_inline(&decoded(&body)), "{op}");
        }
        // Past MAX_INLINE_TEX lookups, the rest call the sampler.
        let many = "TEX TEMP[0], IN[0], SAMP[0], 2D\n".repeat(super::MAX_INLINE_TEX + 1);
        assert!(!every_texture_site_inline(&decoded(&format!(
            "{many}MOV OUT[0], TEMP[0]\n"
        ))));
        let most = "TEX TEMP[0], IN[0], SAMP[0], 2D\n".repeat(super::MAX_INLINE_TEX);
        assert!(every_texture_site_inline(&decoded(&format!(
            "{most}MOV OUT[0], TEMP[0]\n"
        ))));
    }
}
