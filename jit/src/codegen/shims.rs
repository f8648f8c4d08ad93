//! The Rust functions compiled code calls, and how it reaches them: `interp_step` (one
//! instruction through the interpreter's own executor, on the kernel's register memory),
//! `lane_op` (an [`ops`] function per lane: [`LaneOp`]) and `tex_sample` (the sampler, with the
//! request built as the interpreter builds it, for the texture instructions [`tex_fast_path`]
//! accepts). [`Shims`] holds their addresses, called directly in the C convention or behind
//! `preserve_all` trampolines compiled once per process. Each runs in the Rust floating-point
//! environment (`fpenv`), reads the context `runtime` set up (`abi::Ctx`), and is reached
//! through the kernel's address table (`abi::Address`).

use std::sync::OnceLock;

use cranelift_codegen::ir::types::I32;
use cranelift_codegen::ir::{AbiParam, InstBuilder, MemFlagsData, Type, UserFuncName};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module};

use super::abi::Ctx;
use super::isa::process_functions;
use super::texpaths::GeneralPaths;
use super::{emit, fpenv};
use crate::exec::{ExecError, QuadIo, QuadVec4, ShaderResources};
use crate::interp::decode::{self, Decoded};
use crate::interp::ops;
use crate::interp::run::Machine;

/// Addresses of the functions compiled code calls.
#[derive(Clone, Copy)]
pub(super) struct Shims {
    pub step: *const u8,
    pub lanes: *const u8,
    pub tex: *const u8,
    /// The general inline texture paths (`None`: sites call the sampler instead).
    pub mip: Option<&'static GeneralPaths>,
    /// Whether `step`, `lanes`, `tex` and `mip` are of the `preserve_all` convention (the
    /// trampolines of [`trampolines`] and the general paths compiled with them) rather than C.
    pub preserve_all: bool,
}

impl Shims {
    /// The Rust functions, called directly or (with `preserve_all`) behind their `preserve_all`
    /// trampolines when those could be compiled; no general texture paths.
    pub(super) fn rust(preserve_all: bool) -> Shims {
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
    pub(super) fn call_conv(&self, module: &JITModule) -> cranelift_codegen::isa::CallConv {
        use cranelift_module::Module;
        if self.preserve_all {
            cranelift_codegen::isa::CallConv::PreserveAll
        } else {
            module.isa().default_call_conv()
        }
    }
}

/// `tex_sample`, `lane_op` and `interp_step` behind trampolines of the `preserve_all`
/// convention (see [`compile_trampolines`]), compiled once per process; `None` when that
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
            compile_trampolines(module, targets).map(Vec::from)
        })
    });
    fns.map(|a| a.map(|f| f as *const u8))
}

/// True when texture instruction `inst` can take the [`tex_sample`] path: a TEX-family sample
/// whose operands are all in src0 (no offsets, no indexed units, compare reference in src0), or
/// a TXD with its gradients in src1 and src2.
pub(super) fn tex_fast_path(d: &Decoded, inst: &crate::interp::decode::Inst) -> bool {
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
pub(super) enum LaneOp {
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
    let cl = |e: &dyn std::fmt::Display| emit::unsupported(0, format!("cranelift: {e}"));
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
