//! Compiled kernels and their tiers. Programs up to `OPTIMIZE_MAX_INSTRUCTIONS` are compiled
//! with Cranelift's optimizer and backtracking register allocator. Larger ones are first
//! compiled without the optimizer and with the single-pass allocator (about 4x faster to
//! compile, 2x slower to run, no inline texture sites), then recompiled for speed on a
//! background thread, which the kernel switches to when done (both compute the same bits) —
//! tiered compilation. Optimized kernels whose texture sites are all inline reach Rust through
//! `preserve_all` trampolines (see `Build`); the others call Rust in the C convention.
//!
//! A [`Kernel`] owns the tiers' code and what runs a quad the code cannot (the interpreter);
//! `cache` shares it between equal programs, `disk` keeps final tiers for later processes,
//! `emit` generates the code, `runtime` calls it.

use std::sync::{Mutex, OnceLock, Weak};

use cranelift_jit::{JITBuilder, JITModule};

use super::abi::{
    address_table, CtxOffsets, FastSiteUnits, KernelFn, ADDRESS_COUNT, MAX_DIRECT_IO,
};
use super::cache::program_hash;
use super::isa::{cpu_has_fma, isa};
use super::shims::Shims;
use super::texpaths::GeneralPaths;
use super::{disk, emit};
use crate::exec::{ExecError, ShaderSignature};
use crate::interp::decode::{self, Decoded};
use crate::interp::Interpreter;
use crate::ir::MathMode;
use crate::ir::Program;
use crate::opt::lpmath;

/// One compiled version of a kernel: its entry point and the inline texture sites it reads.
pub(super) struct Tier {
    pub func: KernelFn,
    /// What the code reaches by address ([`Address`](super::abi::Address)).
    pub addresses: Box<[usize; ADDRESS_COUNT]>,
    /// The units of the inline texture sites, one descriptor each.
    pub fast_sites: Vec<FastSiteUnits>,
}

/// A compiled program, shared between all [`JitShader`](super::JitShader)s of equal programs.
pub(super) struct Kernel {
    /// The program as given (the cache key, with `math`).
    pub program: Program,
    pub math: MathMode,
    /// Compiled in `llvmpipe` math with EX2, LG2, POW, SIN and COS native (see
    /// [`compile_kernel`]).
    pub lp_native: bool,
    pub decoded: Decoded,
    /// Runs single instructions (`interp_step`) of the compiled program.
    pub interp: Interpreter,
    /// Runs whole quads where the kernel cannot: `interp`, or with `lp_native` the interpreter
    /// of the rewritten program (the specification).
    pub spec: Option<Interpreter>,
    pub signature: ShaderSignature,
    /// The first compilation: optimized for programs up to `OPTIMIZE_MAX_INSTRUCTIONS`, else
    /// compiled for compile time.
    pub first: Tier,
    /// Whether `first` was compiled for speed.
    pub first_optimized: bool,
    /// Whether `first` was read from the on-disk cache ([`disk`]).
    pub from_disk: bool,
    /// The optimized recompilation of a large program, set by a background thread when done
    /// (see [`JitShader::compile`](super::JitShader::compile)); used instead of `first` from
    /// then on.
    pub optimized: OnceLock<Tier>,
    /// Registers of IN, SV and OUT the kernel addresses directly (the files are padded to these).
    pub num_inputs: usize,
    pub num_sysvals: usize,
    pub num_outputs: usize,
    /// Constant buffers the kernel addresses directly.
    pub num_const_buffers: usize,
    /// Own the executable memory of the tiers' functions; freed on drop.
    pub modules: Mutex<Vec<JITModule>>,
}

impl Kernel {
    /// The best compiled version available now.
    pub(super) fn tier(&self) -> &Tier {
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

/// Programs up to this many instructions are compiled for speed (optimizer and the backtracking
/// register allocator); larger ones for compile time first (no optimizer, single-pass
/// allocation, about 4x faster to compile and 2x slower to run), then recompiled for speed in
/// the background.
const OPTIMIZE_MAX_INSTRUCTIONS: usize = 400;

/// What a compilation of a kernel is for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Build {
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
pub(super) fn recompiled_for_speed(decoded: &Decoded) -> bool {
    decoded.insts.len() <= BACKGROUND_MAX_INSTRUCTIONS
}

/// Compiles the first tier of `program`: optimized or not as `optimize` says, by default
/// (None) by size.
pub(super) fn compile_kernel(
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
    let lp_native = math == MathMode::Llvmpipe && cpu_has_fma();
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

/// Recompiles the kernel `weak` refers to for speed on a thread of its own, and installs the
/// result unless the kernel has been dropped meanwhile. Both versions compute the same bits
/// (the same IR, only Cranelift's settings differ), so calls may switch at any time.
pub(super) fn optimize_in_background(weak: Weak<Kernel>) {
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

/// Appends `line` (address, size, name) to `/tmp/perf-PID.map`, where `perf report` finds names
/// for JIT code, one writer at a time (a failure to write only loses the names).
pub(super) fn perf_map_line(line: &str) {
    use std::io::Write;
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let path = format!("/tmp/perf-{}.map", std::process::id());
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{line}");
    }
}

/// Appends the kernel's address range to the perf map ([`perf_map_line`]) and its machine code
/// to `/tmp/softgpu-kernel-ADDR.bin`.
fn perf_map(ptr: *const u8, size: usize, program: &Program, insts: usize) {
    perf_map_line(&format!(
        "{:x} {:x} softgpu_kernel_{:016x}_{insts}insts",
        ptr as usize,
        size,
        program_hash(program, MathMode::Exact)
    ));
    // The machine code too, for `objdump -D -b binary -m i386:x86-64 --adjust-vma=ADDR`.
    // SAFETY: `ptr` is the start of the finalized function of `size` bytes, readable
    // executable memory owned by its module, which outlives this call.
    let code = unsafe { std::slice::from_raw_parts(ptr, size) };
    let _ = std::fs::write(format!("/tmp/softgpu-kernel-{:x}.bin", ptr as usize), code);
}
