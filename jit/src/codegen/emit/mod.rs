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

/// The emitter's maps, keyed by small integers (Cranelift values, register numbers): FxHash,
/// one multiply per word instead of SipHash, which was a tenth of a large kernel's compile time.
use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F32X4, F64X2, I32, I32X4, I64, I64X2, I8, I8X16};
use cranelift_codegen::ir::{
    AbiParam, Block, ConstantData, Endianness, InstBuilder, MemFlagsData, SigRef, StackSlot,
    StackSlotData, StackSlotKind, Type, UserFuncName, Value,
};
use cranelift_codegen::ir::{Inst as ClifInst, ValueDef};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module};

use super::abi::{Address, CtxOffsets, STATUS_BUDGET, STATUS_CALL_OVERFLOW, STATUS_ERROR};
use super::shims::{LaneOp, Shims};
use super::MAX_CALL_DEPTH;
use crate::exec::ExecError;
use crate::interp::decode::{Decoded, DstLoc, Inst, Loc, Modifier, Slot, Src};
use crate::interp::libm;
use crate::ir::lpmath;
use crate::ir::{InlineShape, InlineWrap, Opcode, OpcodeClass, SamplerHint};

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

/// The Rust functions compiled code calls (`tex_sample`, `lane_op`, `interp_step`), each behind
/// a trampoline of Cranelift's `preserve_all` convention, in this order: `(ctx, pc, io, fast)`,
/// `(op, args)` and `(ctx, pc, exec, status)` (the step's result is stored at `status`, as
/// `preserve_all` returns nothing). A call of the C convention clobbers every XMM register,
/// so every vector value live across one — a kernel calls the sampler or a per-lane function
/// on its rare paths, inside the loop over quads — lived in a stack slot, reloaded on the hot
/// path too; across a trampoline call nothing is clobbered, and the trampoline saves and
/// restores what the C function may clobber only when the rare path runs.
pub(super) fn compile_trampolines(
    module: &mut JITModule,
    targets: [*const u8; 3],
) -> Result<[FuncId; 3], ExecError> {
    let cl = |e: &dyn std::fmt::Display| unsupported(0, format!("cranelift: {e}"));
    let ptr = module.target_config().pointer_type();
    let c_conv = module.isa().default_call_conv();
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    let shapes: [(&[Type], bool); 3] = [
        (&[ptr, I32, ptr, ptr], false),
        (&[I32, ptr], false),
        (&[ptr, I32, I32, ptr], true),
    ];
    let mut ids = [FuncId::from_u32(0); 3];
    for ((params, returns_status), (target, id)) in
        shapes.into_iter().zip(targets.into_iter().zip(&mut ids))
    {
        let mut sig = module.make_signature();
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sig.call_conv = CallConv::PreserveAll;
        *id = module
            .declare_anonymous_function(&sig)
            .map_err(|e| cl(&e))?;
        module.clear_context(&mut ctx);
        ctx.func.signature = sig;
        ctx.func.name = UserFuncName::user(0, id.as_u32());
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let mut c_sig = module.make_signature();
        let c_params = if returns_status { &params[..3] } else { params };
        c_sig
            .params
            .extend(c_params.iter().map(|&t| AbiParam::new(t)));
        if returns_status {
            c_sig.returns.push(AbiParam::new(I32));
        }
        c_sig.call_conv = c_conv;
        let c_sig = b.import_signature(c_sig);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let args = b.block_params(entry).to_vec();
        let callee = b.ins().iconst(ptr, target as i64);
        let call = b
            .ins()
            .call_indirect(c_sig, callee, &args[..c_params.len()]);
        if returns_status {
            let status = b.inst_results(call)[0];
            b.ins()
                .store(MemFlagsData::new().with_notrap(), status, args[3], 0);
        }
        b.ins().return_(&[]);
        b.finalize(module.target_config());
        module
            .define_function(*id, &mut ctx)
            .map_err(|e| cl(&format!("{e:?}")))?;
        module.clear_context(&mut ctx);
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

fn unsupported(pc: usize, message: impl Into<String>) -> ExecError {
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

/// Mask variables: the interpreter's CondMask, LoopMask, ContMask, Switch.mask and FuncMask.
const COND: usize = 0;
const LOOP: usize = 1;
const CONT: usize = 2;
const SWITCH: usize = 3;
const FUNC: usize = 4;

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

/// An open flow construct of the current instruction sequence.
enum Open {
    /// An IF/UIF; `saved` (the COND mask before it) is `None` for a uniform one, which branches
    /// without touching the masks.
    If {
        saved: Option<Variable>,
        else_block: Option<Block>,
        end: Block,
    },
    /// A loop; `saved` (the LOOP and CONT masks before it) is `None` for a uniform one, whose
    /// `BRK` jumps to `after` and `CONT` to `latch` instead of narrowing the masks.
    Loop {
        saved: Option<(Variable, Variable)>,
        header: Block,
        latch: Block,
        after: Block,
        count: i64,
    },
    Switch {
        prev: Variable,
        selector: Variable,
        matched: Variable,
        after: Block,
    },
}

impl Open {
    /// Whether every lane executes inside this construct that executes at its start.
    fn is_uniform(&self) -> bool {
        match self {
            Open::If { saved, .. } => saved.is_none(),
            Open::Loop { saved, .. } => saved.is_none(),
            Open::Switch { .. } => false,
        }
    }
}

/// The innermost open loop on `stack`: whether it is uniform, its latch and its exit.
fn innermost_loop(stack: &[Open]) -> Option<(bool, Block, Block)> {
    stack.iter().rev().find_map(|o| match *o {
        Open::Loop {
            saved,
            latch,
            after,
            ..
        } => Some((saved.is_none(), latch, after)),
        _ => None,
    })
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

/// True when the host (whose features Cranelift's native ISA enables) has FMA3.
pub(super) fn cpu_has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

const SIGN: u32 = 0x8000_0000;
const EXP: u32 = 0x7f80_0000;
const MANT: u32 = 0x007f_ffff;
const ONE: u32 = 0x3f80_0000;
/// The quiet bit of a float NaN.
const QUIET: u32 = 0x0040_0000;

fn is_denormal(bits: u32) -> bool {
    bits & EXP == 0 && bits & MANT != 0
}

impl Emitter<'_, '_> {
    // ---- values ------------------------------------------------------------------------------

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

    fn flushed(v: Value) -> V {
        V { v, flushed: true }
    }

    /// A float binary op with flushed inputs (the kernel runs with MXCSR.DAZ set, so the
    /// hardware reads denormal inputs as zero) and a flushed output.
    fn fbin(&mut self, op: Opcode, a: V, b: V) -> V {
        let r = self.fbin_float(op, a, b);
        // `ops::flush` of an arithmetic result: `r + -0.0`, in which DAZ reads a denormal `r`
        // as the zero of its sign, and which returns any other `r` unchanged (an SSE result is
        // never a signalling NaN, so its NaN goes through as it is). One instruction, not five.
        let r = self.b.ins().fadd(r, self.neg_zero);
        Self::flushed(r)
    }

    /// [`Self::fbin`], with the output flush left out when `lazy` (the result only reaches
    /// float arithmetic, see `lazy`).
    fn fbin_result(&mut self, op: Opcode, a: V, b: V, lazy: bool) -> V {
        if lazy {
            V {
                v: self.fbin_float(op, a, b),
                flushed: false,
            }
        } else {
            self.fbin(op, a, b)
        }
    }

    /// [`Self::fbin`] without the output flush, for intermediate results that only feed other
    /// float arithmetic: DAZ reads a denormal input as the zero of its sign, which is what the
    /// flush would have written.
    fn fbin_unflushed(&mut self, op: Opcode, a: V, b: V) -> Value {
        self.fbin_float(op, a, b)
    }

    /// The operation itself, as an `f32x4`.
    fn fbin_float(&mut self, op: Opcode, a: V, b: V) -> Value {
        let x = self.f(a.v);
        let y = self.f(b.v);
        // Operand order decides which NaN wins when both are NaN (`ops::pick_nan`): x86 returns
        // the instruction's first source, so ADD and MUL (second operand wins) are swapped.
        let r = match op {
            Opcode::ADD => self.b.ins().fadd(y, x),
            Opcode::SUB => self.b.ins().fsub(x, y),
            Opcode::MUL => self.b.ins().fmul(y, x),
            _ => self.b.ins().fdiv(x, y),
        };
        r
    }

    fn mul_unflushed(&mut self, a: V, b: V) -> V {
        V {
            v: self.fbin_unflushed(Opcode::MUL, a, b),
            flushed: false,
        }
    }

    fn add(&mut self, a: V, b: V) -> V {
        self.fbin(Opcode::ADD, a, b)
    }

    /// Float compare of flushed operands (DAZ flushes them): an `i32x4` lane mask.
    fn fcmp(&mut self, cc: FloatCC, a: V, b: V) -> Value {
        let x = self.f(a.v);
        let y = self.f(b.v);
        self.compare(Cmp::F(cc), x, y)
    }

    /// An `fcmp` or `icmp`, reusing an equal one made earlier in the current block (swizzles
    /// that repeat a channel repeat the comparison, and Cranelift does not merge them without
    /// its optimizer).
    fn compare(&mut self, cmp: Cmp, x: Value, y: Value) -> Value {
        self.sync_block();
        if let Some(&r) = self.cmp_here.get(&(cmp, x, y)) {
            return r;
        }
        let r = match cmp {
            Cmp::F(cc) => self.b.ins().fcmp(cc, x, y),
            Cmp::I(cc) => self.b.ins().icmp(cc, x, y),
        };
        self.cmp_here.insert((cmp, x, y), r);
        r
    }

    /// `ops::fma`: with the CPU's FMA (`vector_libm`) one fused vector multiply-add, flushed
    /// unless `lazy`; lanes with a NaN operand then take that operand quieted, in `ops::fma`'s
    /// order (which NaN the instruction itself returns depends on the operand order Cranelift
    /// picks).
    fn fma(&mut self, a: V, b: V, c: V, lazy: bool) -> V {
        if !self.vector_libm {
            return V {
                v: self.lane_call(LaneOp::Fma, &[a.v, b.v, c.v]),
                flushed: false,
            };
        }
        let (x, y, z) = (self.f(a.v), self.f(b.v), self.f(c.v));
        // Under DAZ the hardware reads denormal operands as zero, as `ops::fma` flushes them.
        let mut r = self.b.ins().fma(x, y, z);
        if !lazy {
            r = self.b.ins().fadd(r, self.neg_zero);
        }
        let mut r = self.i(r);
        // Applied last to first, so that the first NaN of `b`, `a`, `c` wins.
        for v in [c.v, a.v, b.v] {
            if !self.never_nan(v) {
                r = self.nan_quieted(v, r);
            }
        }
        V {
            v: r,
            flushed: !lazy,
        }
    }

    /// The bits of channel `chan` of `s` when it is an immediate without modifiers.
    fn immediate_bits(&self, s: &Src, chan: usize) -> Option<u32> {
        match (s.loc, s.modifier) {
            (Loc::Direct(Slot::Imm(i)), Modifier::None) => {
                Some(self.d.imms[i as usize][s.swizzle[chan] as usize][0])
            }
            _ => None,
        }
    }

    /// Lanes where `v` is NaN take `v` quieted, the others `r` (bits).
    fn nan_quieted(&mut self, v: Value, r: Value) -> Value {
        let n = self.is_nan(v);
        let quiet = self.splat(QUIET);
        let v = self.i(v);
        let q = self.b.ins().bor(v, quiet);
        self.sel(n, q, r)
    }

    fn is_nan(&mut self, a: Value) -> Value {
        let x = self.f(a);
        self.compare(Cmp::F(FloatCC::Unordered), x, x)
    }

    /// `ops::fmax` / `ops::fmin`: a NaN operand yields the other unchanged, ties the first.
    ///
    /// `maxps`/`minps` pick the larger/smaller exactly as `ops` does for non-NaN operands, and
    /// under DAZ they return the flushed operand, as `ops` does: `b > a ? b : a` is written in
    /// the one form Cranelift lowers to `maxps b, a` (`minps b, a` for `b < a ? b : a`); ties
    /// and NaN give the second operand, `a`. The NaN cases are then patched, each only where
    /// it can differ.
    fn minmax(&mut self, max: bool, a: V, b: V) -> V {
        let x = self.f(a.v);
        let y = self.f(b.v);
        if self.const_bits.get(&b.v).is_some_and(|&k| {
            let e = k & EXP;
            e != 0 && (e != EXP || k & MANT == 0)
        }) {
            // `b` a constant, normal or infinite: `maxps a, b` (`minps a, b`) alone. A NaN `a`
            // gives `b`, as does a tie, which means equal bits (`b` is not ±0).
            let pick_a = if max {
                self.b.ins().fcmp(FloatCC::LessThan, y, x)
            } else {
                self.b.ins().fcmp(FloatCC::LessThan, x, y)
            };
            let pick_a = self.f(pick_a);
            return Self::flushed(self.b.ins().bitselect(pick_a, x, y));
        }
        // The optimizer folds a select of two equal values (which it may prove equal where
        // this code cannot: equal loads or expressions) to that value, unflushed: one side
        // is flushed here unless one already is.
        let xs = if self.optimize && !a.flushed && !b.flushed {
            self.flush(x)
        } else {
            x
        };
        let lt = if max {
            self.b.ins().fcmp(FloatCC::LessThan, xs, y)
        } else {
            self.b.ins().fcmp(FloatCC::LessThan, y, xs)
        };
        let lt = self.f(lt);
        let mut r = self.b.ins().bitselect(lt, y, xs);
        let (a_num, b_num) = (self.never_nan(a.v), self.never_nan(b.v));
        // b NaN: `a` unflushed, which is `maxps`' flushed `a` unless `a` may be denormal.
        if !b_num && !a.flushed {
            let nb = self.is_nan(y);
            r = self.sel(nb, x, r);
        }
        if !a_num {
            let na = self.is_nan(x);
            r = self.sel(na, y, r);
        }
        V {
            v: r,
            flushed: (a_num || b.flushed) && (b_num || a.flushed),
        }
    }

    /// libm's rounding functions return a NaN argument unchanged (even a signalling one, which
    /// `roundps` would quiet).
    fn keep_nan(&mut self, x: Value, r: Value) -> Value {
        let n = self.is_nan(x);
        self.sel(n, x, r)
    }

    /// Denormals to zero of the same sign (`ops::flush`), in the type of `v`: DAZ makes a
    /// denormal compare equal to zero.
    fn flush(&mut self, v: Value) -> Value {
        let vf = self.f(v);
        let zero = self.splatf(0);
        let z = self.b.ins().fcmp(FloatCC::Equal, vf, zero);
        let ty = self.b.func.dfg.value_type(v);
        let sign = self.konst(SIGN, ty);
        let s = self.b.ins().band(v, sign);
        self.sel(z, s, v)
    }

    /// `ops::saturate`: `maxps x, 0` (NaN and, under DAZ, denormals give +0), then
    /// `minps _, 1`, in the forms Cranelift lowers to them (see [`Self::minmax`]).
    fn saturate(&mut self, v: V) -> Value {
        let x = self.f(v.v);
        let zero = self.splatf(0);
        let one = self.splatf(ONE);
        let gt0 = self.b.ins().fcmp(FloatCC::LessThan, zero, x);
        let gt0 = self.f(gt0);
        let m = self.b.ins().bitselect(gt0, x, zero);
        let lt1 = self.b.ins().fcmp(FloatCC::LessThan, m, one);
        let lt1 = self.f(lt1);
        self.b.ins().bitselect(lt1, m, one)
    }

    fn bool_float(&mut self, mask: Value) -> V {
        let one = self.splat(ONE);
        Self::flushed(self.b.ins().band(mask, one))
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

    /// `cvttps2dq`: truncation, NaN and out of range → `i32::MIN` (`ops::f2i`).
    fn f2i(&mut self, v: Value) -> Value {
        let x = self.f(v);
        self.b.ins().x86_cvtt2dq(I32X4, x)
    }

    /// Per-lane scalar integer op on two vectors.
    fn per_lane(
        &mut self,
        a: Value,
        b: Value,
        op: fn(&mut FunctionBuilder, Value, Value) -> Value,
    ) -> Value {
        let mut r = a;
        for l in 0..4u8 {
            let x = self.b.ins().extractlane(a, l);
            let y = self.b.ins().extractlane(b, l);
            let z = op(&mut self.b, x, y);
            r = self.b.ins().insertlane(r, z, l);
        }
        r
    }

    /// Entry `which` of the kernel's address table (see [`load_address`]).
    fn address(&mut self, which: Address) -> Value {
        load_address(&mut self.b, self.ptr, self.ctx, self.offsets, which)
    }

    /// Calls an `ops` function per lane through the `lane_op` shim.
    fn lane_call(&mut self, op: LaneOp, args: &[Value]) -> Value {
        let addr = self.b.ins().stack_addr(self.ptr, self.slot, 0);
        for (k, &a) in args.iter().enumerate() {
            self.b.ins().store(self.mf, a, addr, k as i32 * 16);
        }
        let opv = self.b.ins().iconst(I32, op as i64);
        let callee = self.address(Address::LANES);
        self.b
            .ins()
            .call_indirect(self.lanes_sig, callee, &[opv, addr]);
        self.b.ins().load(I32X4, self.mf, addr, 0)
    }

    // ---- vectorised libm (`interp::libm`) --------------------------------------------------

    /// `bits` in both lanes of an `f64x2`.
    fn dconst(&mut self, bits: u64) -> Value {
        let bytes: Vec<u8> = (0..2).flat_map(|_| bits.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(F64X2, c)
    }

    /// Lanes 0, 1 and lanes 2, 3 of an `f32x4` (given as bits) as two `f64x2` (exact).
    fn promote_halves(&mut self, v: Value) -> [Value; 2] {
        let hi = self.lanes(v, [2, 3, 2, 3]);
        [v, hi].map(|h| {
            let f = self.f(h);
            self.b.ins().fvpromote_low(f)
        })
    }

    /// Lanes 0, 1 and lanes 2, 3 of an `i32x4` converted to two `f64x2` (exact).
    fn int_halves(&mut self, v: Value) -> [Value; 2] {
        let hi = self.lanes(v, [2, 3, 2, 3]);
        [v, hi].map(|h| {
            let w = self.b.ins().swiden_low(h);
            self.b.ins().fcvt_from_sint(F64X2, w)
        })
    }

    /// Two `f64x2` rounded to float (as `cvtsd2ss`) into one `f32x4` (bits).
    fn demote_halves(&mut self, h: [Value; 2]) -> Value {
        let [lo, hi] = h.map(|x| {
            let f = self.b.ins().fvdemote(x);
            self.b.ins().bitcast(I8X16, self.le, f)
        });
        let imm: Vec<u8> = (0..8).chain(16..24).collect();
        let imm = self.b.func.dfg.immediates.push(ConstantData::from(imm));
        let v = self.b.ins().shuffle(lo, hi, imm);
        self.i(v)
    }

    /// Per lane `l`, `table[idx[l]]` (a pair of f64) for the 4 lanes of `idx` (`i32x4`, each
    /// < 16): the first and the second elements as `[lanes 0-1, lanes 2-3]` `f64x2` halves.
    fn gather_pairs(&mut self, table: Address, idx: Value) -> [[Value; 2]; 2] {
        let base = self.address(table);
        let four = self.b.ins().iconst(I32, 4);
        let bytes = self.b.ins().ishl(idx, four);
        let pairs: [Value; 4] = std::array::from_fn(|l| {
            let o = self.b.ins().extractlane(bytes, l as u8);
            let o = self.b.ins().uextend(self.ptr, o);
            let a = self.b.ins().iadd(base, o);
            let v = self.b.ins().load(F64X2, self.mf, a, 0);
            self.b.ins().bitcast(I8X16, self.le, v)
        });
        let mut out = [[pairs[0]; 2]; 2];
        for (e, o) in out.iter_mut().enumerate() {
            let imm: Vec<u8> = (8 * e as u8..8 * e as u8 + 8)
                .chain(16 + 8 * e as u8..24 + 8 * e as u8)
                .collect();
            let imm = self.b.func.dfg.immediates.push(ConstantData::from(imm));
            for h in 0..2 {
                let v = self.b.ins().shuffle(pairs[2 * h], pairs[2 * h + 1], imm);
                o[h] = self.b.ins().bitcast(F64X2, self.le, v);
            }
        }
        out
    }

    /// The logarithm reduction of `interp::libm` for positive normal floats `ix` (`i32x4`):
    /// the table index, `k` and `z` (as `f64x2` halves).
    fn log_reduce(&mut self, ix: Value) -> (Value, [Value; 2], [Value; 2]) {
        let off = self.splat(libm::OFF);
        let tmp = self.b.ins().isub(ix, off);
        let s19 = self.b.ins().iconst(I32, 19);
        let i = self.b.ins().ushr(tmp, s19);
        let m15 = self.splat(15);
        let i = self.b.ins().band(i, m15);
        let top_mask = self.splat(0xff80_0000);
        let top = self.b.ins().band(tmp, top_mask);
        let iz = self.b.ins().isub(ix, top);
        let s23 = self.b.ins().iconst(I32, 23);
        let k = self.b.ins().sshr(top, s23);
        let k = self.int_halves(k);
        let z = self.promote_halves(iz);
        (i, k, z)
    }

    /// Lanes whose float is normal, finite and (with `positive`) positive: `i32x4` mask.
    fn normal_lanes(&mut self, v: Value, positive: bool) -> Value {
        // (|v| or v) - 2^-126 below 0x7f000000, unsigned: exponent field in 1..=254.
        let x = if positive {
            v
        } else {
            let abs = self.splat(!SIGN);
            self.b.ins().band(v, abs)
        };
        let min = self.splat(0x0080_0000);
        let d = self.b.ins().isub(x, min);
        let lim = self.splat(0x7f00_0000);
        self.b.ins().icmp(IntCC::UnsignedLessThan, d, lim)
    }

    /// Branches to an inline computation when every lane passes `ok`, else calls `op` per lane
    /// (the interpreter's own function): the result of either.
    fn fast_or_lanes(
        &mut self,
        ok: Value,
        op: LaneOp,
        args: &[Value],
        fast: impl FnOnce(&mut Self) -> Value,
    ) -> V {
        let fast_b = self.b.create_block();
        let slow_b = self.b.create_block();
        let join = self.b.create_block();
        self.b.append_block_param(join, I32X4);
        let all = self.b.ins().vall_true(ok);
        self.b.ins().brif(all, fast_b, &[], slow_b, &[]);
        self.b.seal_block(fast_b);
        self.b.seal_block(slow_b);

        self.b.switch_to_block(slow_b);
        let r = self.lane_call(op, args);
        self.b.ins().jump(join, &[r.into()]);

        self.b.switch_to_block(fast_b);
        let r = fast(self);
        let r = self.i(r);
        self.b.ins().jump(join, &[r.into()]);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        // Lanes of the fast path are flushed; the `ops` functions flush their results too.
        Self::flushed(self.b.block_params(join)[0])
    }

    /// `ops::pow(x, y)` (`x` = None: `ops::ex2(y)`, x = 2) as `interp::libm::powf` computes it,
    /// two lanes per `f64x2`, when every lane has a positive normal `x` and a normal `y` (their
    /// results need no special case: `y * log2(x)` is finite); other quads go per lane.
    fn pow_inline(&mut self, x: Option<Value>, y: Value) -> V {
        // A constant normal exponent (`pow(c, 2.4)`, the usual gamma) needs no lane test and
        // is a constant in double precision.
        let y_const = self
            .const_bits
            .get(&y)
            .copied()
            .filter(|&k| (1..=254).contains(&((k >> 23) & 0xff)));
        let x = x.map(|x| self.i(x));
        let y = self.i(y);
        let oky = match y_const {
            Some(_) => None,
            None => Some(self.normal_lanes(y, false)),
        };
        let ok = match (x, oky) {
            (Some(x), oky) => {
                let okx = self.normal_lanes(x, true);
                match oky {
                    Some(oky) => self.b.ins().band(okx, oky),
                    None => okx,
                }
            }
            (None, Some(oky)) => oky,
            (None, None) => self.splat(!0),
        };
        let (op, args) = match x {
            Some(x) => (LaneOp::Pow, vec![x, y]),
            None => (LaneOp::Ex2, vec![y]),
        };
        self.fast_or_lanes(ok, op, &args, |e| {
            let logx = match x {
                Some(x) => e.log2_halves(x),
                None => {
                    let c = e.dconst(libm::powf_log2(2f32.to_bits()).to_bits());
                    [c, c]
                }
            };
            let yd = match y_const {
                Some(k) => {
                    let c = e.dconst(f64::from(f32::from_bits(k)).to_bits());
                    [c, c]
                }
                None => e.promote_halves(y),
            };
            let h = [0, 1].map(|k| {
                let ylogx = e.b.ins().fmul(yd[k], logx[k]);
                e.exp2_half(ylogx)
            });
            let r = e.demote_halves(h);
            // The result flush (`ops::pow`): DAZ reads a denormal as zero.
            let r = e.f(r);
            e.b.ins().fadd(r, e.neg_zero)
        })
    }

    /// `libm::powf_log2` of positive normal floats `ix`, as `f64x2` halves.
    fn log2_halves(&mut self, ix: Value) -> [Value; 2] {
        let a = libm::POWF_LOG2_POLY.map(|c| self.dconst(c));
        let minus_one = self.dconst((-1f64).to_bits());
        let (i, k, z) = self.log_reduce(ix);
        let [invc, logc] = self.gather_pairs(Address::POWF_LOG2_TABLE, i);
        [0, 1].map(|h| {
            let r = self.b.ins().fma(z[h], invc[h], minus_one);
            let y0 = self.b.ins().fadd(logc[h], k[h]);
            let r2 = self.b.ins().fmul(r, r);
            let y = self.b.ins().fma(a[0], r, a[1]);
            let p = self.b.ins().fma(a[2], r, a[3]);
            let r4 = self.b.ins().fmul(r2, r2);
            let q = self.b.ins().fma(a[4], r, y0);
            let q = self.b.ins().fma(p, r2, q);
            self.b.ins().fma(y, r4, q)
        })
    }

    /// `libm::powf`'s `exp2_inline` (sign 0) of `ylogx` (`f64x2`), with its overflow (+inf) and
    /// underflow (0; glibc's denormal results are flushed anyway) bounds applied.
    fn exp2_half(&mut self, ylogx: Value) -> Value {
        let shift = self.dconst(libm::EXP2F_SHIFT);
        let c = libm::EXP2F_POLY.map(|c| self.dconst(c));
        let one = self.dconst(1f64.to_bits());
        let kd = self.b.ins().fadd(ylogx, shift);
        let ki = self.b.ins().bitcast(I64X2, self.le, kd);
        let kd = self.b.ins().fsub(kd, shift);
        let r = self.b.ins().fsub(ylogx, kd);
        let base = self.address(Address::EXP2F_TABLE);
        let mut t = None;
        for l in 0..2u8 {
            let j = self.b.ins().extractlane(ki, l);
            let j = self.b.ins().band_imm_u(j, 31);
            let j = self.b.ins().ishl_imm_u(j, 3);
            let a = self.b.ins().iadd(base, j);
            // SAFETY of the load: `j` < 32 indexes the 32-entry static table.
            let v = self.b.ins().load(I64, self.mf, a, 0);
            t = Some(match t {
                None => self.b.ins().scalar_to_vector(I64X2, v),
                Some(t) => self.b.ins().insertlane(t, v, l),
            });
        }
        let t = t.expect("two lanes");
        let s47 = self.b.ins().iconst(I32, 47);
        let sk = self.b.ins().ishl(ki, s47);
        let t = self.b.ins().iadd(t, sk);
        let s = self.b.ins().bitcast(F64X2, self.le, t);
        let z = self.b.ins().fma(c[0], r, c[1]);
        let r2 = self.b.ins().fmul(r, r);
        let y = self.b.ins().fma(c[2], r, one);
        let y = self.b.ins().fma(z, r2, y);
        let y = self.b.ins().fmul(y, s);
        let of = self.dconst(libm::POWF_OFLOW);
        let over = self.b.ins().fcmp(FloatCC::GreaterThan, ylogx, of);
        let inf = self.dconst(f64::INFINITY.to_bits());
        let y = self.b.ins().bitselect(over, inf, y);
        let uf = self.dconst(libm::POWF_UFLOW);
        let under = self.b.ins().fcmp(FloatCC::LessThanOrEqual, ylogx, uf);
        let zero = self.dconst(0);
        self.b.ins().bitselect(under, zero, y)
    }

    /// `ops::sin(y)` / `ops::cos(y)` as `libm::sinf`/`cosf` compute them, two lanes per `f64x2`,
    /// when every lane is below 120 in magnitude (glibc's `abstop12` test): the tiny, the
    /// unreduced (|y| < pi/4) and the `reduce_fast` paths, chosen per lane; larger arguments,
    /// infinities and NaN send the quad to the per-lane path.
    fn sincos_inline(&mut self, y: Value, cos: bool) -> V {
        use libm::sc;
        let y = self.i(y);
        let s20 = self.b.ins().iconst(I32, 20);
        let top = self.b.ins().ushr(y, s20);
        let m = self.splat(0x7ff);
        let top = self.b.ins().band(top, m);
        let lim = |e: &mut Self, t: u32| {
            let c = e.splat(t);
            e.b.ins().icmp(IntCC::UnsignedLessThan, top, c)
        };
        let ok = lim(self, libm::TOP12_120);
        let op = if cos { LaneOp::Cos } else { LaneOp::Sin };
        self.fast_or_lanes(ok, op, &[y], |e| {
            let small = lim(e, libm::TOP12_PIO4);
            let tiny = lim(e, libm::TOP12_TINY);
            let t = libm::SINCOSF_TAB[0];
            let hpi_inv = e.dconst(t[sc::HPI_INV]);
            let hpi = e.dconst(t[sc::HPI]);
            let k = [
                sc::C0,
                sc::C1,
                sc::C2,
                sc::C3,
                sc::C4,
                sc::S1,
                sc::S2,
                sc::S3,
            ]
            .map(|i| e.dconst(t[i]));
            let [c0, c1, c2, c3, c4, s1c, s2c, s3c] = k;
            let two23 = e.dconst((8_388_608f64).to_bits());
            let inv24 = e.dconst((1.0f64 / 16_777_216.0).to_bits());
            // 1.5 * 2^52: adding it puts an integer n (|n| < 2^51, either sign) in the low
            // mantissa bits, as n + 2^51 (so n mod 4 there).
            let two52 = e.dconst((6_755_399_441_055_744f64).to_bits());
            let zero = e.dconst(0);
            let x = e.promote_halves(y);
            let small_hi = e.lanes(small, [2, 3, 2, 3]);
            let small_h = [small, small_hi].map(|m| e.b.ins().swiden_low(m));
            let h = [0, 1].map(|h| {
                let x = x[h];
                // reduce_fast: n = ((int)(x * hpi_inv) + 2^23) >> 24, as exact doubles.
                let r = e.b.ins().fmul(x, hpi_inv);
                let r = e.b.ins().trunc(r);
                let r = e.b.ins().fadd(r, two23);
                let r = e.b.ins().fmul(r, inv24);
                let n = e.b.ins().floor(r);
                let n = e.b.ins().bitselect(small_h[h], zero, n);
                let neg_n = e.b.ins().fneg(n);
                let xr = e.b.ins().fma(neg_n, hpi, x);
                let nb = e.b.ins().fadd(n, two52);
                let nb = e.b.ins().bitcast(I64X2, e.le, nb);
                let one = e.b.ins().iconst(I32, 1);
                let s63 = e.b.ins().iconst(I32, 63);
                let bit0 = e.b.ins().ishl(nb, s63);
                let nb1 = e.b.ins().ushr(nb, one);
                let bit1 = e.b.ins().ishl(nb1, s63);
                // sign[n & 3] is -1 for n & 3 in {1, 2}: multiplying by it flips the sign.
                let flip = e.b.ins().bxor(bit0, bit1);
                let xi = e.b.ins().bitcast(I64X2, e.le, xr);
                let xs = e.b.ins().bxor(xi, flip);
                let xs = e.b.ins().bitcast(F64X2, e.le, xs);
                let x2 = e.b.ins().fmul(xr, xr);
                // Sine polynomial (the same in both table rows).
                let x3 = e.b.ins().fmul(x2, xs);
                let s1 = e.b.ins().fma(x2, s3c, s2c);
                let x7 = e.b.ins().fmul(x2, x3);
                let sp = e.b.ins().fma(x3, s1c, xs);
                let rs = e.b.ins().fma(s1, x7, sp);
                // Cosine polynomial; row 1 (n & 2) has its coefficients negated, which negates
                // the result exactly.
                let x4 = e.b.ins().fmul(x2, x2);
                let cc1 = e.b.ins().fma(x2, c1, c0);
                let cc2 = e.b.ins().fma(x2, c4, c3);
                let x6 = e.b.ins().fmul(x4, x2);
                let cc = e.b.ins().fma(x4, c2, cc1);
                let rc = e.b.ins().fma(x6, cc2, cc);
                let rci = e.b.ins().bitcast(I64X2, e.le, rc);
                let rci = e.b.ins().bxor(rci, bit1);
                let rc = e.b.ins().bitcast(F64X2, e.le, rci);
                // Odd n takes the cosine polynomial for sin, the sine one for cos.
                let zero_i = e.b.ins().bitcast(I64X2, e.le, zero);
                let even = e.b.ins().icmp(IntCC::Equal, bit0, zero_i);
                let (a, b) = if cos { (rc, rs) } else { (rs, rc) };
                let a = e.b.ins().bitcast(I64X2, e.le, a);
                let b = e.b.ins().bitcast(I64X2, e.le, b);
                let r = e.b.ins().bitselect(even, a, b);
                e.b.ins().bitcast(F64X2, e.le, r)
            });
            let r = e.demote_halves(h);
            let r = e.f(r);
            let nz = e.b.ins().fadd(r, e.neg_zero);
            let r = e.i(nz);
            // Tiny arguments: sinf returns y itself (a denormal too, as `ops::sin`), cosf 1.
            let tiny_val = if cos { e.splat(ONE) } else { y };
            e.b.ins().bitselect(tiny, tiny_val, r)
        })
    }

    /// `ops::lg2(x)`: `libm::logf` two lanes per `f64x2` when every lane is positive, normal
    /// and finite, times Mesa's constant; other quads go per lane.
    fn lg2_inline(&mut self, x: Value) -> V {
        let x = self.i(x);
        let ok = self.normal_lanes(x, true);
        self.fast_or_lanes(ok, LaneOp::Lg2, &[x], |e| {
            let a = libm::LOGF_POLY.map(|c| e.dconst(c));
            let ln2 = e.dconst(libm::LOGF_LN2);
            let minus_one = e.dconst((-1f64).to_bits());
            let (i, k, z) = e.log_reduce(x);
            let [invc, logc] = e.gather_pairs(Address::LOGF_TABLE, i);
            let h = [0, 1].map(|h| {
                let r = e.b.ins().fma(z[h], invc[h], minus_one);
                let y0 = e.b.ins().fma(k[h], ln2, logc[h]);
                let y = e.b.ins().fma(r, a[1], a[2]);
                let r2 = e.b.ins().fmul(r, r);
                let y = e.b.ins().fma(r2, a[0], y);
                let ry0 = e.b.ins().fadd(r, y0);
                e.b.ins().fma(r2, y, ry0)
            });
            let l = e.demote_halves(h);
            // `ops::lg2` = mul(flush(logf(x)), 1.442695): a logarithm of a normal float is 0 or
            // normal, and the product is flushed like any MUL.
            #[allow(clippy::approx_constant)]
            let c = e.splat(1.442695f32.to_bits());
            e.fbin(Opcode::MUL, Self::flushed(l), Self::flushed(c)).v
        })
    }

    // ---- Mesa 22.3 llvmpipe's EX2, LG2, POW, SIN and COS (`ir::lpmath`) --------------------
    //
    // The same operations as `lpmath::rewrite`'s instruction sequences, in vector instructions:
    // in EX2, LG2 and POW every intermediate is finite and non-NaN for a non-NaN argument (NaN
    // arguments are patched by the final selects, as the sequences do), so the IR's NaN rules
    // never apply (SIN/COS: see `lp_sin_cos`), and intermediates only float arithmetic reads
    // need no flush (DAZ), as in `lazy`.

    /// A gallivm constant (`lpmath::k`) in every lane, as an `f32x4`.
    fn lp_const(&mut self, v: f64) -> Value {
        self.splatf(lpmath::k(v))
    }

    /// `lp_build_polynomial`: even and odd halves in `x`², every step a fused multiply-add.
    fn lp_polynomial(&mut self, x: Value, coeffs: &[f64]) -> Value {
        let x2 = self.b.ins().fmul(x, x);
        let (mut even, mut odd): (Option<Value>, Option<Value>) = (None, None);
        for (i, &c) in coeffs.iter().enumerate().rev() {
            let c = self.lp_const(c);
            let acc = if i % 2 == 0 { &mut even } else { &mut odd };
            *acc = Some(match *acc {
                None => c,
                Some(prev) => self.b.ins().fma(x2, prev, c),
            });
        }
        match (odd, even) {
            (Some(odd), Some(even)) => self.b.ins().fma(odd, x, even),
            (None, Some(even)) => even,
            _ => self.splatf(0),
        }
    }

    /// `lpmath`'s EX2 of `x` (bits): never denormal.
    fn lp_exp2(&mut self, x: Value) -> V {
        let x = self.i(x);
        let lo = Self::flushed(self.splatf(lpmath::EXP2_MIN.to_bits()));
        let hi = Self::flushed(self.splatf(lpmath::EXP2_MAX.to_bits()));
        // CLAMP: `maxps`, `minps` with constant bounds (a NaN `x` is patched below).
        let c = self.minmax(
            true,
            V {
                v: x,
                flushed: false,
            },
            lo,
        );
        let c = self.minmax(false, c, hi);
        let c = self.f(c.v);
        let ipart = self.b.ins().floor(c);
        let fpart = self.b.ins().fsub(c, ipart);
        let i = self.b.ins().x86_cvtt2dq(I32X4, ipart);
        let bias = self.splat(127);
        let e = self.b.ins().iadd(i, bias);
        let scale = self.b.ins().ishl_imm_u(e, 23);
        let scale = self.f(scale);
        let p = self.lp_polynomial(fpart, &lpmath::EXP2_POLY);
        let r = self.b.ins().fmul(scale, p);
        Self::flushed(self.nan_quieted(x, r))
    }

    /// `lpmath`'s LG2 of `x` (bits); `zero_case` false leaves ±0 (and denormals) to the
    /// polynomial, as POW's does. Never denormal: the fused `y * p + e` is 0, at least 2^-24
    /// (e = 0, y >= 2^-24), or an integer e != 0 plus a product below 1 that is a multiple of
    /// 2^-69 (y's ulp is at least 2^-47, p's 2^-22), so 0 or at least 2^-69 away from -e.
    fn lp_log2(&mut self, x: Value, zero_case: bool) -> Value {
        let x = self.i(x);
        let xf = self.f(x);
        let exp = self.splat(EXP);
        let exp = self.b.ins().band(x, exp);
        let e = self.b.ins().fcvt_from_sint(F32X4, exp);
        // (exp >> 23) - 127: exact, as the sequence's MAD is.
        let scale = self.splatf((1.0f32 / 8_388_608.0).to_bits());
        let minus127 = self.splatf((-127.0f32).to_bits());
        let logexp = self.b.ins().fma(e, scale, minus127);
        let mant = self.splat(MANT);
        let mant = self.b.ins().band(x, mant);
        let one = self.splat(ONE);
        let mant = self.b.ins().bor(mant, one);
        let (mant, one) = (self.f(mant), self.f(one));
        let num = self.b.ins().fsub(mant, one);
        let den = self.b.ins().fadd(mant, one);
        let y = self.b.ins().fdiv(num, den);
        let z = self.b.ins().fmul(y, y);
        let p = self.lp_polynomial(z, &lpmath::LOG2_POLY);
        let r = self.b.ins().fma(y, p, logexp);
        let zero = self.splatf(0);
        let inf = self.splat(f32::INFINITY.to_bits());
        let inff = self.f(inf);
        let nonneg = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, xf, zero);
        let finite = self.b.ins().fcmp(FloatCC::LessThan, xf, inff);
        let (positive, at_zero) = if zero_case {
            let positive = self.b.ins().fcmp(FloatCC::LessThan, zero, xf);
            let nonzero = self.b.ins().fcmp(FloatCC::NotEqual, xf, zero);
            let ninf = self.splat(f32::NEG_INFINITY.to_bits());
            (positive, self.sel(nonzero, inf, ninf))
        } else {
            (nonneg, inf)
        };
        let nan = self.splat(lpmath::NAN_BITS);
        let special = self.sel(nonneg, at_zero, nan);
        let ok = self.b.ins().band(positive, finite);
        self.sel(ok, r, special)
    }

    /// `lpmath`'s POW of `x` (bits) and `y`: never denormal.
    fn lp_pow(&mut self, x: Value, y: V) -> V {
        let x = self.i(x);
        let l = self.lp_log2(x, false);
        // MUL(y, l) with the IR's NaN rule (y NaN, or `l` NaN for negative `x`).
        let m = self.fbin_float(
            Opcode::MUL,
            y,
            V {
                v: l,
                flushed: false,
            },
        );
        let r = self.lp_exp2(m);
        let abs = self.splat(!SIGN);
        let ax = self.b.ins().band(x, abs);
        let ax = self.f(ax);
        let zero = self.splatf(0);
        // Unordered `x == 0` is "not 0 < |x|": NaN, ±0 and (DAZ) denormals give 0.
        let nonzero = self.b.ins().fcmp(FloatCC::LessThan, zero, ax);
        let zero = self.splat(0);
        Self::flushed(self.sel(nonzero, r.v, zero))
    }

    /// `lpmath`'s SIN or COS of `a` (bits). Arguments beyond 2^128 / (4/pi) make NaN
    /// intermediates, which the final MIN (NaN gives 1, `ops::fmin`) absorbs as the sequence's
    /// does; infinite and NaN arguments give NaN.
    fn lp_sin_cos(&mut self, a: Value, cos: bool) -> V {
        let a = self.i(a);
        let abs = self.splat(!SIGN);
        let x_abs = self.b.ins().band(a, abs);
        let x_absf = self.f(x_abs);
        let fopi = self.lp_const(lpmath::FOPI);
        let scale_y = self.b.ins().fmul(x_absf, fopi);
        let emm2_i = self.b.ins().x86_cvtt2dq(I32X4, scale_y);
        let one = self.splat(1);
        let emm2_add = self.b.ins().iadd(emm2_i, one);
        let not_one = self.splat(!1);
        let emm2_and = self.b.ins().band(emm2_add, not_one);
        let y_2 = self.b.ins().fcvt_from_sint(F32X4, emm2_and);
        let (emm2_2, sign_bit) = if cos {
            let minus_two = self.splat((-2i32) as u32);
            let emm2_2 = self.b.ins().iadd(emm2_and, minus_two);
            let four = self.splat(4);
            let four = self.b.ins().band_not(four, emm2_2);
            (emm2_2, self.b.ins().ishl_imm_u(four, 29))
        } else {
            let shifted = self.b.ins().ishl_imm_u(emm2_add, 29);
            let x = self.b.ins().bxor(a, shifted);
            let sign = self.splat(SIGN);
            (emm2_and, self.b.ins().band(x, sign))
        };
        let two = self.splat(2);
        let emm2_3 = self.b.ins().band(emm2_2, two);
        let zero = self.splat(0);
        let poly_mask = self.b.ins().icmp(IntCC::Equal, emm2_3, zero);
        let [dp1, dp2, dp3] = [lpmath::DP1, lpmath::DP2, lpmath::DP3].map(|v| self.lp_const(v));
        let x_1 = self.b.ins().fma(y_2, dp1, x_absf);
        let x_2 = self.b.ins().fma(y_2, dp2, x_1);
        let x_3 = self.b.ins().fma(y_2, dp3, x_2);
        let z = self.b.ins().fmul(x_3, x_3);
        let [c0, c1, c2] = lpmath::COSCOF.map(|v| self.lp_const(v));
        let y_4 = self.b.ins().fma(z, c0, c1);
        let y_6 = self.b.ins().fma(y_4, z, c2);
        let y_7 = self.b.ins().fmul(y_6, z);
        let y_8 = self.b.ins().fmul(y_7, z);
        let half = self.lp_const(0.5);
        let tmp = self.b.ins().fmul(z, half);
        let y_9 = self.b.ins().fsub(y_8, tmp);
        let onef = self.lp_const(1.0);
        let y_10 = self.b.ins().fadd(y_9, onef);
        let [s0, s1, s2] = lpmath::SINCOF.map(|v| self.lp_const(v));
        let y2_4 = self.b.ins().fma(z, s0, s1);
        let y2_6 = self.b.ins().fma(y2_4, z, s2);
        let y2_7 = self.b.ins().fmul(y2_6, z);
        let y2_9 = self.b.ins().fma(y2_7, x_3, x_3);
        let combined = self.sel(poly_mask, y2_9, y_10);
        let combined = self.i(combined);
        let signed = self.b.ins().bxor(combined, sign_bit);
        let one = Self::flushed(self.splatf(ONE));
        let minus_one = Self::flushed(self.splatf(ONE | SIGN));
        let r = self.minmax(
            false,
            V {
                v: signed,
                flushed: false,
            },
            one,
        );
        let r = self.minmax(true, r, minus_one);
        let exp = self.splat(EXP);
        let e = self.b.ins().band(a, exp);
        let finite = self.b.ins().icmp(IntCC::NotEqual, e, exp);
        let nan = self.splat(lpmath::NAN_BITS);
        Self::flushed(self.sel(finite, r.v, nan))
    }

    // ---- masks -------------------------------------------------------------------------------

    fn mask(&mut self, m: usize) -> Value {
        self.b.use_var(self.masks[m])
    }

    fn set_mask(&mut self, m: usize, v: Value) {
        self.b.def_var(self.masks[m], v);
        let mut e = self.mask(0);
        for k in 1..5 {
            let x = self.mask(k);
            e = self.b.ins().band(e, x);
        }
        self.b.def_var(self.exec, e);
    }

    fn exec(&mut self) -> Value {
        self.b.use_var(self.exec)
    }

    fn any(&mut self, v: Value) -> Value {
        self.b.ins().vany_true(v)
    }

    fn save(&mut self, v: Value) -> Variable {
        let var = self.declare(I32X4);
        self.b.def_var(var, v);
        var
    }

    /// Continues emission in `block`, all of whose predecessors have been emitted: sealing it
    /// now lets Cranelift's SSA construction look variables up in the predecessors instead of
    /// adding a block parameter for each (which it removed again at the end, at a tenth of
    /// the compile time, and which left moves to allocate).
    fn enter(&mut self, block: Block) {
        self.b.seal_block(block);
        self.b.switch_to_block(block);
    }

    /// Continues emission in a fresh block (after an unconditional jump or return).
    fn fresh_block(&mut self) {
        let blk = self.b.create_block();
        self.enter(blk);
    }

    fn error_return(&mut self, pc: usize, status: u32) {
        let pcv = self.b.ins().iconst(I64, pc as i64);
        self.b
            .ins()
            .store(self.mf, pcv, self.ctx, self.offsets.err_pc);
        let s = self.b.ins().iconst(I32, (status << 8) as i64);
        self.b.ins().return_(&[s]);
    }

    // ---- operands ----------------------------------------------------------------------------

    fn reg_base(&mut self, slot: Slot) -> Option<(Value, u32)> {
        match slot {
            Slot::Local(i) => Some((self.regs, i)),
            Slot::Input(i) => Some((self.inp, i)),
            Slot::SystemValue(i) => Some((self.sv, i)),
            Slot::Output(i) => Some((self.out, i)),
            _ => None,
        }
    }

    fn load_slot(&mut self, slot: Slot, comp: u8) -> V {
        if let Slot::Local(i) = slot {
            if let Some(vars) = self.reg_vars[i as usize] {
                let v = self.b.use_var(vars[comp as usize & 3]);
                let flushed = self.flushed_locals[i as usize][comp as usize];
                return V { v, flushed };
            }
        }
        if let Some((base, i)) = self.reg_base(slot) {
            let off = (i as i64 * 64 + comp as i64 * 16) as i32;
            let v = self.b.ins().load(I32X4, self.mf, base, off);
            let flushed = match slot {
                Slot::Local(i) => self.flushed_locals[i as usize][comp as usize],
                _ => false,
            };
            return V { v, flushed };
        }
        match slot {
            Slot::Imm(i) => {
                let bits = self.d.imms[i as usize][comp as usize][0];
                V {
                    v: self.splat(bits),
                    flushed: !is_denormal(bits),
                }
            }
            Slot::Const(b, i) => match self.const_vals.get(&(b, i, comp)) {
                Some(&v) => V { v, flushed: false },
                None => {
                    let addr = self.const_addr[&(b, i)];
                    let x = self.b.ins().load(I32, self.mf, addr, comp as i32 * 4);
                    V {
                        v: self.b.ins().splat(I32X4, x),
                        flushed: false,
                    }
                }
            },
            _ => Self::flushed(self.splat(0)),
        }
    }

    /// Channel `chan` of a source: swizzled, modifiers applied.
    fn fetch(&mut self, s: &Src, chan: usize, _pc: usize) -> Result<V, ExecError> {
        let v = match s.loc {
            Loc::Direct(slot) => self.load_slot(slot, s.swizzle[chan]),
            Loc::Indirect(k) => self.load_indirect(k, s.swizzle[chan]),
        };
        Ok(self.modify(v, s.modifier))
    }

    /// One lane of an index register, as the interpreter's `i64` index plus `offset`.
    fn index_lane(&mut self, reg: Option<Value>, lane: u8, offset: i64) -> Value {
        match reg {
            Some(v) => {
                let x = self.b.ins().extractlane(v, lane);
                let x = self.b.ins().sextend(I64, x);
                self.b.ins().iadd_imm_s(x, offset)
            }
            None => self.b.ins().iconst(I64, offset),
        }
    }

    /// `base + i * scale + add`.
    fn scaled(&mut self, base: Value, i: Value, scale: i64, add: i64) -> Value {
        let k = self.b.ins().iconst(I64, scale);
        let off = self.b.ins().imul(i, k);
        let a = self.b.ins().iadd(base, off);
        self.b.ins().iadd_imm_s(a, add)
    }

    /// Per-lane addresses of an indirect operand: lane `l` reads channel `c` at
    /// `addr[l] + c * 16` (`c * 4` for constants); out-of-range lanes point at zeros.
    fn indirect_addrs(&mut self, k: u32) -> [Value; 4] {
        if let Some(a) = self.indirect_cache.get(&k) {
            return *a;
        }
        use crate::interp::decode::IndirectFile;
        let ind = self.d.indirects[k as usize];
        let idx = ind.index_reg.map(|r| {
            let v = self.load_slot(r.slot, r.component).v;
            self.i(v)
        });
        let dims = ind.dim_reg.map(|r| {
            let v = self.load_slot(r.slot, r.component).v;
            self.i(v)
        });
        let mut addrs = [self.zero_addr; 4];
        for (l, addr) in addrs.iter_mut().enumerate() {
            let lane = l as u8;
            let i = self.index_lane(idx, lane, ind.index);
            let lane_off = l as i64 * 4;
            let (ok, a) = match ind.file {
                IndirectFile::Local { base, lo, hi } => {
                    let rel = self.b.ins().iadd_imm_s(i, -lo);
                    let n = self.b.ins().iconst(I64, (hi - lo).max(0));
                    let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, rel, n);
                    let a = self.scaled(self.regs, i, 64, base as i64 * 64 + lane_off);
                    (ok, a)
                }
                IndirectFile::Input | IndirectFile::Output | IndirectFile::SystemValue => {
                    let (p, len_off) = match ind.file {
                        IndirectFile::Input => (self.inp, self.offsets.io_inputs_len),
                        IndirectFile::Output => (self.out, self.offsets.io_outputs_len),
                        _ => (self.sv, self.offsets.io_sysvals_len),
                    };
                    let len = self.b.ins().load(I64, self.mf, self.ctx, len_off);
                    let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
                    (ok, self.scaled(p, i, 64, lane_off))
                }
                IndirectFile::Imm => {
                    let n = self.b.ins().iconst(I64, self.d.imms.len() as i64);
                    let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i, n);
                    let base = self.address(Address::IMMEDIATES);
                    (ok, self.scaled(base, i, 64, lane_off))
                }
                IndirectFile::Const => {
                    let d = self.index_lane(dims, lane, ind.dim);
                    let nb = self
                        .b
                        .ins()
                        .load(I64, self.mf, self.ctx, self.offsets.consts_len);
                    let d_ok = self.b.ins().icmp(IntCC::UnsignedLessThan, d, nb);
                    let empty = self.address(Address::EMPTY_CONST_BUFFER);
                    let entry = self.scaled(self.cb, d, 16, 0);
                    let entry = self.b.ins().select(d_ok, entry, empty);
                    let ptr = self.b.ins().load(I64, self.mf, entry, 0);
                    let len = self.b.ins().load(I64, self.mf, entry, 8);
                    let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
                    (ok, self.scaled(ptr, i, 16, 0))
                }
            };
            *addr = self.b.ins().select(ok, a, self.zero_addr);
        }
        self.indirect_cache.insert(k, addrs);
        addrs
    }

    fn load_indirect(&mut self, k: u32, comp: u8) -> V {
        let addrs = self.indirect_addrs(k);
        let stride = if matches!(
            self.d.indirects[k as usize].file,
            crate::interp::decode::IndirectFile::Const
        ) {
            4
        } else {
            16
        };
        let mut v = self.splat(0);
        for (l, a) in addrs.iter().enumerate() {
            let x = self.b.ins().load(I32, self.mf, *a, comp as i32 * stride);
            v = self.b.ins().insertlane(v, x, l as u8);
        }
        V { v, flushed: false }
    }

    fn modify(&mut self, v: V, m: Modifier) -> V {
        // Sign-bit changes keep a value denormal-free; integer negation does not.
        // Sign-bit changes are made in the value's own type.
        let ty = self.b.func.dfg.value_type(v.v);
        let (v, flushed) = match m {
            Modifier::None => return v,
            Modifier::Abs => {
                let k = self.konst(!SIGN, ty);
                (self.b.ins().band(v.v, k), v.flushed)
            }
            Modifier::FNeg => {
                let k = self.konst(SIGN, ty);
                (self.b.ins().bxor(v.v, k), v.flushed)
            }
            Modifier::FNegAbs => {
                let k = self.konst(SIGN, ty);
                (self.b.ins().bor(v.v, k), v.flushed)
            }
            Modifier::INeg => {
                let x = self.i(v.v);
                (self.b.ins().ineg(x), false)
            }
            Modifier::INegAbs => {
                let x = self.i(v.v);
                let k = self.splat(!SIGN);
                let a = self.b.ins().band(x, k);
                (self.b.ins().ineg(a), false)
            }
        };
        V { v, flushed }
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

    /// `lanes ? val : old` per lane, for a lane mask (every lane all ones or all zeros): one
    /// `blendvps`, where `bitselect` of a mask Cranelift cannot see the origin of (a variable,
    /// a block parameter) becomes three instructions.
    fn blend_lanes(&mut self, lanes: Value, val: Value, old: Value) -> Value {
        let val = self.i(val);
        let old = self.i(old);
        self.b.ins().blendv(lanes, val, old)
    }

    /// Stores the written channels of `vals` for the executing (and, for OUT, live) lanes.
    fn store(&mut self, inst: &Inst, vals: &[Option<V>; 4], full: bool) {
        if let DstLoc::Local(i) = inst.dst {
            if let Some(vars) = self.reg_vars[i as usize] {
                let lanes = if full { None } else { Some(self.exec()) };
                for (c, v) in vals.iter().enumerate() {
                    let Some(v) = v else { continue };
                    if inst.write_mask & (1 << c) == 0 {
                        continue;
                    }
                    let val = if inst.saturate {
                        self.saturate(*v)
                    } else {
                        v.v
                    };
                    let val = match lanes {
                        None => val,
                        Some(m) => {
                            let old = self.b.use_var(vars[c]);
                            self.blend_lanes(m, val, old)
                        }
                    };
                    let val = self.cast(self.var_type(vars[c]), val);
                    self.b.def_var(vars[c], val);
                }
                return;
            }
        }
        let (base, i, is_out) = match inst.dst {
            DstLoc::Local(i) => (self.regs, i, false),
            DstLoc::Output(i) => (self.out, i, true),
            DstLoc::Indirect(k) => return self.store_indirect(inst, k, vals, full),
            DstLoc::Null => return,
        };
        let mut lanes = if full { None } else { Some(self.exec()) };
        if is_out {
            lanes = Some(match lanes {
                None => self.live,
                Some(e) => self.b.ins().band(e, self.live),
            });
        }
        for (c, v) in vals.iter().enumerate() {
            let Some(v) = v else { continue };
            if inst.write_mask & (1 << c) == 0 {
                continue;
            }
            let val = if inst.saturate {
                self.saturate(*v)
            } else {
                v.v
            };
            let off = (i as i64 * 64 + c as i64 * 16) as i32;
            let val = match lanes {
                None => val,
                Some(m) => {
                    let old = self.b.ins().load(I32X4, self.mf, base, off);
                    self.blend_lanes(m, val, old)
                }
            };
            self.b.ins().store(self.mf, val, base, off);
        }
    }

    /// An indirect destination: per lane, the register the lane's index selects, if in range
    /// (and, for OUT, if the lane is live); other lanes write to a scratch slot.
    fn store_indirect(&mut self, inst: &Inst, k: u32, vals: &[Option<V>; 4], full: bool) {
        let is_out = matches!(
            self.d.indirects[k as usize].file,
            crate::interp::decode::IndirectFile::Output
        );
        let addrs = self.indirect_addrs(k);
        let lanes = match (full, is_out) {
            (true, false) => None,
            (true, true) => Some(self.live),
            (false, false) => Some(self.exec()),
            (false, true) => {
                let e = self.exec();
                Some(self.b.ins().band(e, self.live))
            }
        };
        let mut chans = Vec::new();
        for (c, v) in vals.iter().enumerate() {
            if let Some(v) = v {
                if inst.write_mask & (1 << c) != 0 {
                    let val = if inst.saturate {
                        self.saturate(*v)
                    } else {
                        v.v
                    };
                    chans.push((c, val));
                }
            }
        }
        let sink = self.b.ins().stack_addr(self.ptr, self.slot, 0);
        for (l, &a) in addrs.iter().enumerate() {
            let lane = l as u8;
            let mut ok = self.b.ins().icmp(IntCC::NotEqual, a, self.zero_addr);
            if let Some(m) = lanes {
                let bit = self.b.ins().extractlane(m, lane);
                let on = self.b.ins().icmp_imm_s(IntCC::NotEqual, bit, 0);
                ok = self.b.ins().band(ok, on);
            }
            let addr = self.b.ins().select(ok, a, sink);
            for &(c, val) in &chans {
                let x = self.b.ins().extractlane(val, lane);
                self.b.ins().store(self.mf, x, addr, c as i32 * 16);
            }
        }
    }

    // ---- instructions ------------------------------------------------------------------------

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

    /// `!ops::eq(x, 0.0)`: true unless x is ±0 or a denormal (NaN is true).
    fn float_true(&mut self, x: Value) -> Value {
        let x = self.i(x);
        let exp = self.splat(EXP);
        let e = self.b.ins().band(x, exp);
        let zero = self.splat(0);
        self.b.ins().icmp(IntCC::NotEqual, e, zero)
    }

    /// Zeroes, at the start of a quad, the memory-register channels `slots` (byte offsets in
    /// the register file, ascending): runs of 16 or more consecutive channels in a loop, the
    /// others one store each.
    fn zero_channels(&mut self, slots: &[i32]) {
        let zero = self.splat(0);
        let mut k = 0;
        while k < slots.len() {
            let mut run = 1;
            while k + run < slots.len() && slots[k + run] == slots[k] + 16 * run as i32 {
                run += 1;
            }
            if run < 16 {
                for &off in &slots[k..k + run] {
                    self.b.ins().store(self.mf, zero, self.regs, off);
                }
            } else {
                // Whole 64-byte steps in the loop, the rest after it.
                let steps = run / 4;
                let cursor = self.declare(self.ptr);
                let start = self.b.ins().iadd_imm_s(self.regs, slots[k] as i64);
                self.b.def_var(cursor, start);
                let end = self.b.ins().iadd_imm_s(start, steps as i64 * 64);
                let body = self.b.create_block();
                let after = self.b.create_block();
                self.b.ins().jump(body, &[]);
                self.b.switch_to_block(body);
                let p = self.b.use_var(cursor);
                for c in 0..4 {
                    self.b.ins().store(self.mf, zero, p, c * 16);
                }
                let p = self.b.ins().iadd_imm_s(p, 64);
                self.b.def_var(cursor, p);
                let more = self.b.ins().icmp(IntCC::UnsignedLessThan, p, end);
                self.b.ins().brif(more, body, &[], after, &[]);
                self.b.seal_block(body);
                self.b.seal_block(after);
                self.b.switch_to_block(after);
                for &off in &slots[k + steps * 4..k + run] {
                    self.b.ins().store(self.mf, zero, self.regs, off);
                }
            }
            k += run;
        }
    }

    /// Runs instruction `pc` through the interpreter: the registers held in variables are
    /// stored to the register memory the interpreter reads, and its destination reloaded.
    fn step(&mut self, pc: usize, full: bool) {
        for i in 0..self.reg_vars.len() {
            if let Some(vars) = self.reg_vars[i] {
                for (c, var) in vars.iter().enumerate() {
                    let v = self.b.use_var(*var);
                    self.b
                        .ins()
                        .store(self.mf, v, self.regs, (i * 64 + c * 16) as i32);
                }
            }
        }
        self.step_call(pc, full);
        if let DstLoc::Local(i) = self.d.insts[pc].dst {
            if let Some(vars) = self.reg_vars[i as usize] {
                for (c, var) in vars.iter().enumerate() {
                    let ty = self.var_type(*var);
                    let v = self.b.ins().load(
                        ty,
                        self.mf,
                        self.regs,
                        (i as usize * 64 + c * 16) as i32,
                    );
                    self.b.def_var(*var, v);
                }
            }
        }
    }

    fn step_call(&mut self, pc: usize, full: bool) {
        let bits = if full {
            self.b.ins().iconst(I32, 0xF)
        } else {
            let e = self.exec();
            self.b.ins().vhigh_bits(I32, e)
        };
        let pcv = self.b.ins().iconst(I32, pc as i64);
        let callee = self.address(Address::STEP);
        let r = if self.shims.preserve_all {
            let status = self.b.ins().stack_addr(self.ptr, self.slot, 0);
            self.b
                .ins()
                .call_indirect(self.step_sig, callee, &[self.ctx, pcv, bits, status]);
            self.b.ins().load(I32, self.mf, status, 0)
        } else {
            let call = self
                .b
                .ins()
                .call_indirect(self.step_sig, callee, &[self.ctx, pcv, bits]);
            self.b.inst_results(call)[0]
        };
        let bad = self.b.create_block();
        let ok = self.b.create_block();
        self.b.ins().brif(r, bad, &[], ok, &[]);
        self.enter(bad);
        let s = self.b.ins().iconst(I32, (STATUS_ERROR << 8) as i64);
        self.b.ins().return_(&[s]);
        self.enter(ok);
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

    /// Lanes of `x` (bits) that are denormal, as a mask.
    fn denormal_mask(&mut self, x: Value) -> Value {
        let x = self.i(x);
        let exp = self.splat(EXP);
        let mant = self.splat(MANT);
        let zero = self.splat(0);
        let e = self.b.ins().band(x, exp);
        let ez = self.b.ins().icmp(IntCC::Equal, e, zero);
        let m = self.b.ins().band(x, mant);
        let mnz = self.b.ins().icmp(IntCC::NotEqual, m, zero);
        self.b.ins().band(ez, mnz)
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

    /// Emits an arithmetic instruction natively; false when it must go through the interpreter.
    fn native_alu(&mut self, inst: &Inst, full: bool, pc: usize) -> Result<bool, ExecError> {
        use Opcode::*;
        let op = inst.op;
        let answer = self
            .answered
            .as_ref()
            .and_then(|(slot, offsets)| Some((*slot, *offsets.get(&pc)?)));
        if let Some((slot, offset)) = answer {
            let addr = self.b.ins().stack_addr(self.ptr, slot, offset);
            // Texels are floats, sizes integers (as their destinations mostly are).
            let ty = if matches!(op, Opcode::TXQ | Opcode::SVIEWINFO) {
                I32X4
            } else {
                F32X4
            };
            let r: [Option<V>; 4] = std::array::from_fn(|c| {
                let v = self.b.ins().load(ty, self.mf, addr, c as i32 * 16);
                Some(V { v, flushed: false })
            });
            self.store(inst, &r, full);
            return Ok(true);
        }
        if op.class() == OpcodeClass::Texture {
            if !super::shims::tex_fast_path(self.d, inst) {
                return Ok(false);
            }
            let mut src = [self.splat(0); 4];
            for (c, sc) in src.iter_mut().enumerate() {
                *sc = self.fetch(&inst.src[0], c, pc)?.v;
            }
            let mut grads = Vec::new();
            if op == TXD {
                let t = self.d.textures[inst.aux as usize];
                let n = crate::interp::decode::deriv_dim(t.target).unwrap_or(0);
                for k in 1..3 {
                    let mut g = Vec::with_capacity(n);
                    for c in 0..n {
                        g.push(self.fetch(&inst.src[k], c, pc)?.v);
                    }
                    grads.push(g);
                }
            }
            let offset = self.d.textures.get(inst.aux as usize).and_then(|t| {
                let [x, y, _] = super::shims::constant_tex_offset(self.d, t)?;
                Some([x, y])
            });
            let texels = match (self.fast_vals.get(&pc).copied(), offset) {
                (Some((base, None)), Some(offset)) => {
                    self.tex_site(base, pc, op, src, &grads, offset)
                }
                (Some((base, Some(shape))), Some(offset)) => {
                    self.tex_shaped(base, pc, op, src, &grads, shape, offset)
                }
                // Texels are floats: most destinations are `f32x4` variables.
                _ => self.tex_call(pc, src, &grads, F32X4, None),
            };
            let r = texels.map(|v| Some(V { v, flushed: false }));
            self.store(inst, &r, full);
            return Ok(true);
        }
        let m = inst.write_mask;
        let s = inst.src;
        let lazy = self.lazy.get(pc).copied().unwrap_or(0);
        // Broadcast results (one value for every written channel) stay unflushed only when
        // every written channel may.
        let lazy_all = lazy == m;
        let mut r: [Option<V>; 4] = [None; 4];
        // Componentwise ops over the written channels.
        macro_rules! each {
            (|$($a:ident),*| $body:expr) => {
                each!(|_c; $($a),*| $body)
            };
            // `$c`: whether this channel's result may stay unflushed (see `lazy`).
            (|$c:ident; $($a:ident),*| $body:expr) => {{
                for c in 0..4 {
                    if m & (1 << c) != 0 {
                        let $c = lazy & (1 << c) != 0;
                        let mut k = 0;
                        $( let $a = self.fetch(&s[k], c, pc)?; k += 1; )*
                        let _ = k;
                        r[c] = Some($body);
                    }
                }
            }};
        }
        macro_rules! broadcast {
            ($v:expr) => {{
                let v = $v;
                r = [Some(v); 4];
            }};
        }
        match op {
            NOP => return Ok(true),
            MOV | UARL => each!(|a| a),
            ADD | SUB | MUL | DIV => each!(|lz; a, b| self.fbin_result(op, a, b, lz)),
            MAD => each!(|lz; a, b, c3| {
                let t = self.mul_unflushed(a, b);
                self.fbin_result(ADD, t, c3, lz)
            }),
            LRP => each!(|lz; a, b, c3| {
                let t = V {
                    v: self.fbin_unflushed(SUB, b, c3),
                    flushed: false,
                };
                let t = self.mul_unflushed(a, t);
                self.fbin_result(ADD, t, c3, lz)
            }),
            MIN | MAX => each!(|a, b| self.minmax(op == MAX, a, b)),
            CLAMP => each!(|a, lo, hi| {
                let t = self.minmax(true, a, lo);
                self.minmax(false, t, hi)
            }),
            SLT | SGE | SGT | SLE | SEQ | SNE | FSLT | FSGE | FSEQ | FSNE => each!(|a, b| {
                let (cc, x, y) = match op {
                    SLT | FSLT => (FloatCC::LessThan, a, b),
                    SGE | FSGE => (FloatCC::GreaterThanOrEqual, a, b),
                    SGT => (FloatCC::LessThan, b, a),
                    SLE => (FloatCC::GreaterThanOrEqual, b, a),
                    SEQ | FSEQ => (FloatCC::Equal, a, b),
                    _ => (FloatCC::NotEqual, a, b),
                };
                let mask = self.fcmp(cc, x, y);
                if matches!(op, FSLT | FSGE | FSEQ | FSNE) {
                    V {
                        v: mask,
                        flushed: false,
                    }
                } else {
                    self.bool_float(mask)
                }
            }),
            CMP => each!(|a, b, c3| {
                let zero = Self::flushed(self.splat(0));
                let lt = self.fcmp(FloatCC::LessThan, a, zero);
                V {
                    v: self.sel(lt, b.v, c3.v),
                    flushed: b.flushed && c3.flushed,
                }
            }),
            CND => each!(|a, b, c3| {
                let half = Self::flushed(self.splat(0x3f00_0000));
                let gt = self.fcmp(FloatCC::LessThan, half, c3);
                V {
                    v: self.sel(gt, a.v, b.v),
                    flushed: a.flushed && b.flushed,
                }
            }),
            UCMP => each!(|a, b, c3| {
                let zero = self.splat(0);
                let x = self.i(a.v);
                let nz = self.compare(Cmp::I(IntCC::NotEqual), x, zero);
                V {
                    v: self.sel(nz, b.v, c3.v),
                    flushed: b.flushed && c3.flushed,
                }
            }),
            ABS => each!(|a| self.modify(a, Modifier::Abs)),
            FLR | CEIL | TRUNC | ROUND => each!(|a| {
                // DAZ flushes the input; rounding a normal number never yields a denormal.
                let x = self.f(a.v);
                let y = match op {
                    FLR => self.b.ins().floor(x),
                    CEIL => self.b.ins().ceil(x),
                    TRUNC => self.b.ins().trunc(x),
                    _ => self.b.ins().nearest(x),
                };
                Self::flushed(self.keep_nan(x, y))
            }),
            FRC => each!(|lz; a| {
                let x = a;
                let xf = self.f(x.v);
                let fl = self.b.ins().floor(xf);
                let fl = Self::flushed(self.keep_nan(xf, fl));
                self.fbin_result(SUB, x, fl, lz)
            }),
            SSG => each!(|a| {
                let zero = Self::flushed(self.splat(0));
                let lt = self.fcmp(FloatCC::LessThan, a, zero);
                let gt = self.fcmp(FloatCC::GreaterThan, a, zero);
                let neg = self.splat(0xbf80_0000);
                let pos = self.splat(ONE);
                let n = self.b.ins().band(lt, neg);
                let p = self.b.ins().band(gt, pos);
                Self::flushed(self.b.ins().bor(n, p))
            }),
            DDX | DDY | DDX_FINE | DDY_FINE => each!(|lz; a| {
                let (hi, lo) = match op {
                    DDX => ([3, 3, 3, 3], [2, 2, 2, 2]),
                    DDY => ([2, 2, 2, 2], [0, 0, 0, 0]),
                    DDX_FINE => ([1, 1, 3, 3], [0, 0, 2, 2]),
                    _ => ([2, 3, 2, 3], [0, 1, 0, 1]),
                };
                let x = self.lanes(a.v, hi);
                let y = self.lanes(a.v, lo);
                let (x, y) = (
                    V {
                        v: x,
                        flushed: a.flushed,
                    },
                    V {
                        v: y,
                        flushed: a.flushed,
                    },
                );
                self.fbin_result(SUB, x, y, lz)
            }),
            RCP | RSQ | SQRT => {
                let a = self.fetch(&s[0], 0, pc)?;
                let one = Self::flushed(self.splat(ONE));
                let v = match op {
                    RCP => self.fbin_result(DIV, one, a, lazy_all),
                    _ => {
                        // DAZ flushes the input; sqrt of a normal number is normal.
                        let x = self.f(a.v);
                        let q = self.b.ins().sqrt(x);
                        let q = Self::flushed(q);
                        if op == RSQ {
                            self.fbin_result(DIV, one, q, lazy_all)
                        } else {
                            q
                        }
                    }
                };
                broadcast!(v)
            }
            EX2 | LG2 | POW | SIN | COS if self.lp_math => {
                let a = self.fetch(&s[0], 0, pc)?;
                let v = match op {
                    EX2 => self.lp_exp2(a.v),
                    LG2 => Self::flushed(self.lp_log2(a.v, true)),
                    SIN | COS => self.lp_sin_cos(a.v, op == COS),
                    _ => {
                        let b = self.fetch(&s[1], 0, pc)?;
                        self.lp_pow(a.v, b)
                    }
                };
                broadcast!(v)
            }
            EX2 | LG2 if self.vector_libm => {
                let a = self.fetch(&s[0], 0, pc)?;
                let v = if op == EX2 {
                    self.pow_inline(None, a.v)
                } else {
                    self.lg2_inline(a.v)
                };
                broadcast!(v)
            }
            SIN | COS if self.vector_libm => {
                let a = self.fetch(&s[0], 0, pc)?;
                let mut v = self.sincos_inline(a.v, op == COS);
                // SIN passes a denormal argument through (`ops::sin`).
                v.flushed = op == COS;
                broadcast!(v)
            }
            POW if self.vector_libm => {
                let a = self.fetch(&s[0], 0, pc)?;
                let b = self.fetch(&s[1], 0, pc)?;
                let v = self.pow_inline(Some(a.v), b.v);
                broadcast!(v)
            }
            EX2 | LG2 | SIN | COS => {
                let a = self.fetch(&s[0], 0, pc)?;
                let lop = match op {
                    EX2 => LaneOp::Ex2,
                    LG2 => LaneOp::Lg2,
                    SIN => LaneOp::Sin,
                    _ => LaneOp::Cos,
                };
                let v = self.lane_call(lop, &[a.v]);
                broadcast!(V { v, flushed: false })
            }
            POW => {
                let a = self.fetch(&s[0], 0, pc)?;
                let b = self.fetch(&s[1], 0, pc)?;
                let v = self.lane_call(LaneOp::Pow, &[a.v, b.v]);
                broadcast!(V { v, flushed: false })
            }
            IDIV | MOD | UDIV | UMOD | LDEXP | IMUL_HI | UMUL_HI => each!(|a, b| {
                let lop = match op {
                    IDIV => LaneOp::Idiv,
                    MOD => LaneOp::Imod,
                    UDIV => LaneOp::Udiv,
                    UMOD => LaneOp::Umod,
                    LDEXP => LaneOp::Ldexp,
                    IMUL_HI => LaneOp::ImulHi,
                    _ => LaneOp::UmulHi,
                };
                V {
                    v: self.lane_call(lop, &[a.v, b.v]),
                    flushed: false,
                }
            }),
            IBFE | UBFE => each!(|a, b, c3| V {
                v: self.lane_call(
                    if op == IBFE {
                        LaneOp::Ibfe
                    } else {
                        LaneOp::Ubfe
                    },
                    &[a.v, b.v, c3.v]
                ),
                flushed: false,
            }),
            LSB | UMSB | IMSB | POPC | BREV => each!(|a| {
                let lop = match op {
                    LSB => LaneOp::Lsb,
                    UMSB => LaneOp::Umsb,
                    IMSB => LaneOp::Imsb,
                    POPC => LaneOp::Popc,
                    _ => LaneOp::Brev,
                };
                V {
                    v: self.lane_call(lop, &[a.v]),
                    flushed: false,
                }
            }),
            FMA => each!(|lz; a, b, c3| self.fma(a, b, c3, lz)),
            DP2 | DP3 | DP4 | DPH | DP2A => {
                let n = match op {
                    DP2 | DP2A => 2,
                    DP3 | DPH => 3,
                    _ => 4,
                };
                // Only the last sum is flushed (see `fbin_unflushed`).
                let a0 = self.fetch(&s[0], 0, pc)?;
                let b0 = self.fetch(&s[1], 0, pc)?;
                let mut d = self.mul_unflushed(a0, b0);
                let extra = match op {
                    DPH => Some(self.fetch(&s[1], 3, pc)?),
                    DP2A => Some(self.fetch(&s[2], 0, pc)?),
                    _ => None,
                };
                for c in 1..n {
                    let a = self.fetch(&s[0], c, pc)?;
                    let b = self.fetch(&s[1], c, pc)?;
                    let t = self.mul_unflushed(a, b);
                    d = if c + 1 == n && extra.is_none() {
                        self.fbin_result(ADD, t, d, lazy_all)
                    } else {
                        V {
                            v: self.fbin_unflushed(ADD, t, d),
                            flushed: false,
                        }
                    };
                }
                if let Some(x) = extra {
                    d = self.fbin_result(ADD, d, x, lazy_all);
                }
                broadcast!(d)
            }
            I2F | U2F => each!(|a| {
                let x = self.i(a.v);
                let f = if op == I2F {
                    self.b.ins().fcvt_from_sint(F32X4, x)
                } else {
                    self.b.ins().fcvt_from_uint(F32X4, x)
                };
                Self::flushed(f)
            }),
            F2I => each!(|a| V {
                v: self.f2i(a.v),
                flushed: false,
            }),
            F2U => each!(|a| {
                let two31 = self.splat(0x4f00_0000);
                let xf = self.f(a.v);
                let tf = self.f(two31);
                let big = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, xf, tf);
                let t = self.b.ins().fsub(xf, tf);
                let t = self.i(t);
                let hi = self.f2i(t);
                let sign = self.splat(SIGN);
                let hi = self.b.ins().bxor(hi, sign);
                let lo = self.f2i(a.v);
                V {
                    v: self.b.ins().bitselect(big, hi, lo),
                    flushed: false,
                }
            }),
            ARL | ARR => each!(|a| {
                let x = if op == ARR {
                    let half = Self::flushed(self.splat(0x3f00_0000));
                    self.add(a, half)
                } else {
                    a
                };
                let xf = self.f(x.v);
                let fl = self.b.ins().floor(xf);
                let fl = self.i(fl);
                V {
                    v: self.f2i(fl),
                    flushed: false,
                }
            }),
            NOT => each!(|a| {
                let x = self.i(a.v);
                V {
                    v: self.b.ins().bnot(x),
                    flushed: false,
                }
            }),
            AND | OR | XOR | UADD | UMUL | IMAX | IMIN | UMAX | UMIN => each!(|a, b| {
                let (x, y) = (self.i(a.v), self.i(b.v));
                let ins = self.b.ins();
                let v = match op {
                    AND => ins.band(x, y),
                    OR => ins.bor(x, y),
                    XOR => ins.bxor(x, y),
                    UADD => ins.iadd(x, y),
                    UMUL => ins.imul(x, y),
                    IMAX => ins.smax(x, y),
                    IMIN => ins.smin(x, y),
                    UMAX => ins.umax(x, y),
                    _ => ins.umin(x, y),
                };
                V { v, flushed: false }
            }),
            UMAD => each!(|a, b, c3| {
                let (x, y, z) = (self.i(a.v), self.i(b.v), self.i(c3.v));
                let t = self.b.ins().imul(x, y);
                V {
                    v: self.b.ins().iadd(t, z),
                    flushed: false,
                }
            }),
            INEG => each!(|a| {
                let x = self.i(a.v);
                V {
                    v: self.b.ins().ineg(x),
                    flushed: false,
                }
            }),
            IABS => each!(|a| {
                let x = self.i(a.v);
                V {
                    v: self.b.ins().iabs(x),
                    flushed: false,
                }
            }),
            ISSG => each!(|a| {
                let minus = self.splat(!0);
                let one = self.splat(1);
                let x = self.i(a.v);
                let t = self.b.ins().smax(x, minus);
                V {
                    v: self.b.ins().smin(t, one),
                    flushed: false,
                }
            }),
            ISGE | ISLT | USEQ | USNE | USGE | USLT => each!(|a, b| {
                let cc = match op {
                    ISGE => IntCC::SignedGreaterThanOrEqual,
                    ISLT => IntCC::SignedLessThan,
                    USEQ => IntCC::Equal,
                    USNE => IntCC::NotEqual,
                    USGE => IntCC::UnsignedGreaterThanOrEqual,
                    _ => IntCC::UnsignedLessThan,
                };
                let (x, y) = (self.i(a.v), self.i(b.v));
                V {
                    v: self.b.ins().icmp(cc, x, y),
                    flushed: false,
                }
            }),
            SHL | USHR | ISHR => {
                let f: fn(&mut FunctionBuilder, Value, Value) -> Value = match op {
                    SHL => |b, x, y| b.ins().ishl(x, y),
                    USHR => |b, x, y| b.ins().ushr(x, y),
                    _ => |b, x, y| b.ins().sshr(x, y),
                };
                for c in (0..4).filter(|c| m & (1 << c) != 0) {
                    let a = self.fetch(&s[0], c, pc)?;
                    let x = self.i(a.v);
                    // An immediate count is one count for all lanes: one vector shift. Counts
                    // wrap modulo 32 in both TGSI and Cranelift.
                    let v = match self.immediate_bits(&s[1], c) {
                        Some(count) => {
                            let k = self.b.ins().iconst(I32, i64::from(count & 31));
                            f(&mut self.b, x, k)
                        }
                        None => {
                            let b = self.fetch(&s[1], c, pc)?;
                            let y = self.i(b.v);
                            self.per_lane(x, y, f)
                        }
                    };
                    r[c] = Some(V { v, flushed: false });
                }
            }
            _ => return Ok(false),
        }
        self.store(inst, &r, full);
        Ok(true)
    }
}

/// Which channels of the local registers (TEMP, ADDR) can never hold a denormal: a register
/// channel qualifies when every instruction writing it produces a denormal-free value (a float
/// operation's flushed result, a comparison mask, a saturated value, or a copy of qualifying
/// operands; not a result [`super::lazy`] leaves unflushed). Registers start as zero, which
/// qualifies. Reads of such channels skip the input flush. Computed as a fixpoint, since copies
/// depend on other registers.
fn flushed_locals(d: &Decoded, lazy: &[u8]) -> Vec<[bool; 4]> {
    use crate::interp::decode::IndirectFile;
    use Opcode::*;
    let mut state = vec![[true; 4]; d.num_locals];
    let src_ok = |state: &Vec<[bool; 4]>, s: &Src, c: usize| -> bool {
        if matches!(s.modifier, Modifier::INeg | Modifier::INegAbs) {
            return false;
        }
        let comp = s.swizzle[c] as usize;
        match s.loc {
            Loc::Direct(Slot::Zero) => true,
            Loc::Direct(Slot::Local(i)) => state[i as usize][comp],
            Loc::Direct(Slot::Imm(i)) => !is_denormal(d.imms[i as usize][comp][0]),
            _ => false,
        }
    };
    loop {
        let mut changed = false;
        for (pc, inst) in d.insts.iter().enumerate() {
            match inst.dst {
                DstLoc::Local(i) => {
                    for c in 0..4 {
                        if inst.write_mask & (1 << c) == 0 || !state[i as usize][c] {
                            continue;
                        }
                        let unflushed = lazy.get(pc).is_some_and(|&l| l & (1 << c) != 0);
                        let ok = !unflushed
                            && (inst.saturate
                                || match inst.op {
                                    ADD | SUB | MUL | DIV | MAD | LRP | DP2 | DP3 | DP4 | DPH
                                    | DP2A | FRC | FLR | CEIL | TRUNC | ROUND | RCP | RSQ
                                    | SQRT | SSG | SLT | SGE | SGT | SLE | SEQ | SNE | FSLT
                                    | FSGE | FSEQ | FSNE | DDX | DDY | DDX_FINE | DDY_FINE
                                    | I2F | U2F | EX2 | LG2 | POW | COS | FMA | LDEXP | ISGE
                                    | ISLT | USEQ | USNE | USGE | USLT => true,
                                    MOV | ABS => src_ok(&state, &inst.src[0], c),
                                    MIN | MAX => {
                                        src_ok(&state, &inst.src[0], c)
                                            && src_ok(&state, &inst.src[1], c)
                                    }
                                    CLAMP => (0..3).all(|k| src_ok(&state, &inst.src[k], c)),
                                    CMP | UCMP => {
                                        src_ok(&state, &inst.src[1], c)
                                            && src_ok(&state, &inst.src[2], c)
                                    }
                                    CND => {
                                        src_ok(&state, &inst.src[0], c)
                                            && src_ok(&state, &inst.src[1], c)
                                    }
                                    _ => false,
                                });
                        if !ok {
                            state[i as usize][c] = false;
                            changed = true;
                        }
                    }
                }
                DstLoc::Indirect(k) => {
                    if let IndirectFile::Local { base, lo, hi } = d.indirects[k as usize].file {
                        for r in lo.max(0)..hi.max(0) {
                            if let Some(st) = state.get_mut(base as usize + r as usize) {
                                if st.iter().any(|&x| x) {
                                    *st = [false; 4];
                                    changed = true;
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if !changed {
            return state;
        }
    }
}

/// Which local register channels are kept as `f32x4` variables rather than `i32x4`: those
/// written more often by float arithmetic than by integer and bitwise operations (copies and
/// selects count for neither). Values are cast where the other type is needed; the choice only
/// saves casts.
fn float_locals(d: &Decoded) -> Vec<[bool; 4]> {
    use Opcode::*;
    let mut score = vec![[0i32; 4]; d.num_locals];
    for inst in &d.insts {
        let DstLoc::Local(i) = inst.dst else { continue };
        let w = match inst.op {
            ADD | SUB | MUL | DIV | MAD | LRP | DP2 | DP3 | DP4 | DPH | DP2A | FRC | FLR | CEIL
            | TRUNC | ROUND | RCP | RSQ | SQRT | MIN | MAX | CLAMP | DDX | DDY | DDX_FINE
            | DDY_FINE | I2F | U2F | EX2 | LG2 | POW | SIN | COS => 1,
            MOV | UARL | CMP | UCMP | CND | ABS | NOP => 0,
            _ if inst.op.class() == OpcodeClass::Texture => 0,
            _ if inst.saturate => 1,
            _ => -1,
        };
        for (c, sc) in score[i as usize].iter_mut().enumerate() {
            if inst.write_mask & (1 << c) != 0 {
                *sc += w;
            }
        }
    }
    score.iter().map(|s| s.map(|x| x > 0)).collect()
}

/// The byte offsets (ascending) of the memory-register channels a quad must start with zeroed:
/// those some instruction may read before a write of all four lanes. Such writes are the ones
/// outside every flow construct and before the first `RET` (they execute with full masks, see
/// `walk`); a read is any source, index or offset operand, a masked write (it keeps the old value
/// in the lanes it skips) and every write inside a construct; an indirect operand reads its
/// whole range. With subroutines (whose bodies run at their call sites) every memory channel is
/// zeroed. The others hold whatever an earlier quad left, which no instruction reads.
fn zeroed_channels(d: &Decoded, mem: &[bool]) -> Vec<i32> {
    use crate::interp::decode::{IndexReg, IndirectFile};
    use Opcode::*;
    let n = d.num_locals;
    let mut need = vec![0u8; n];
    let subroutines = d
        .insts
        .iter()
        .any(|i| matches!(i.op, CAL | BGNSUB | ENDSUB));
    if subroutines {
        need.fill(0xF);
    } else {
        let mut written = vec![0u8; n];
        let mut depth = 0usize;
        let mut returned = false;
        let read = |written: &[u8], need: &mut [u8], i: u32, mask: u8| {
            if let Some(w) = written.get(i as usize) {
                need[i as usize] |= mask & !w;
            }
        };
        let read_index = |written: &[u8], need: &mut [u8], r: Option<IndexReg>| {
            if let Some(IndexReg {
                slot: Slot::Local(i),
                component,
            }) = r
            {
                read(written, need, i, 1 << component);
            }
        };
        let read_indirect = |written: &[u8], need: &mut [u8], k: u32| {
            let ind = d.indirects[k as usize];
            read_index(written, need, ind.index_reg);
            read_index(written, need, ind.dim_reg);
            if let IndirectFile::Local { base, lo, hi } = ind.file {
                let first = (base as i64 + lo).max(0);
                let last = (base as i64 + hi).min(n as i64);
                for r in first..last {
                    read(written, need, r as u32, 0xF);
                }
            }
        };
        let read_src = |written: &[u8], need: &mut [u8], s: &Src| match s.loc {
            Loc::Direct(Slot::Local(i)) => {
                let mask = s.swizzle.iter().fold(0u8, |m, &c| m | 1 << c);
                read(written, need, i, mask);
            }
            Loc::Indirect(k) => read_indirect(written, need, k),
            Loc::Direct(_) => {}
        };
        for inst in &d.insts {
            for s in &inst.src {
                read_src(&written, &mut need, s);
            }
            if inst.op.class() == OpcodeClass::Texture {
                if let Some(t) = d.textures.get(inst.aux as usize) {
                    if let Some(off) = &t.offset {
                        read_src(&written, &mut need, off);
                    }
                    read_index(&written, &mut need, t.view.index_reg);
                    read_index(&written, &mut need, t.sampler.index_reg);
                }
            }
            match inst.op {
                IF | UIF | BGNLOOP | SWITCH => depth += 1,
                ENDIF | ENDLOOP | ENDSWITCH => depth = depth.saturating_sub(1),
                RET => returned = true,
                _ => {}
            }
            // LODQ writes x and y only, whatever its mask says.
            let mask = if inst.op == LODQ {
                inst.write_mask & 0b11
            } else {
                inst.write_mask
            };
            match inst.dst {
                DstLoc::Local(i) if depth == 0 && !returned => {
                    if let Some(w) = written.get_mut(i as usize) {
                        *w |= mask;
                    }
                }
                DstLoc::Local(i) => read(&written, &mut need, i, mask),
                DstLoc::Indirect(k) => read_indirect(&written, &mut need, k),
                DstLoc::Output(_) | DstLoc::Null => {}
            }
        }
    }
    let mut slots = Vec::new();
    for (i, (&m, &channels)) in mem.iter().zip(&need).enumerate() {
        for c in 0..4 {
            if m && channels & (1 << c) != 0 {
                slots.push((i * 64 + c * 16) as i32);
            }
        }
    }
    slots
}

/// Above this many (instructions × SSA registers), every local stays in memory.
///
/// Cranelift's SSA construction gives every merge block a parameter per variable live through
/// it, and its constant-phi removal deletes redundant ones one at a time in linear time each, so
/// compile time grows with the square of the variables: a 23,000-instruction CuNNy pass with 586
/// registers spent minutes there. Memory registers cost loads and stores instead.
const SSA_LOCALS_BUDGET: usize = 4_000_000;

/// Which local registers (TEMP, ADDR) stay in memory: those an indirect operand can address
/// (the kernel computes their addresses per lane), and all of them in programs too large for
/// SSA variables ([`SSA_LOCALS_BUDGET`]). All others live in SSA variables.
fn memory_locals(d: &Decoded) -> Vec<bool> {
    use crate::interp::decode::IndirectFile;
    if d.insts.len().saturating_mul(d.num_locals) > SSA_LOCALS_BUDGET {
        return vec![true; d.num_locals];
    }
    let mut mem = vec![false; d.num_locals];
    for ind in &d.indirects {
        if let IndirectFile::Local { base, lo, hi } = ind.file {
            let first = (base as i64 + lo).max(0);
            let last = (base as i64 + hi).min(d.num_locals as i64);
            for r in first..last {
                mem[r as usize] = true;
            }
        }
    }
    mem
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
