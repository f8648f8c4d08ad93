//! Running a kernel: [`JitShader`] as a [`QuadShader`]. A call builds the context (`abi::Ctx`)
//! from the caller's register files (padded where narrower than the kernel addresses), the
//! constant buffers and one texture descriptor per inline site, sets the kernels'
//! floating-point environment (`fpenv`), calls the kernel's best tier and turns its status
//! into the interpreter's errors. Quads the kernel cannot shade run the interpreter (the
//! specification).

use std::cell::RefCell;

use super::abi::{ConstBuf, Ctx, FastSiteUnits, FastTex, STATUS_BUDGET, STATUS_CALL_OVERFLOW};
use super::{fpenv, JitShader};
use crate::exec::{
    BatchError, ExecError, QuadBatch, QuadIo, QuadShader, QuadVec4, ShaderResources,
    ShaderSignature,
};

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
        // in memory that an instruction may read before writing them
        // (`emit::analysis::zeroed_channels`); the others are spilled here before an interpreted
        // instruction reads them.
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
        scratch.fast.extend(
            tier.fast_sites
                .iter()
                .map(|units| fast_site(resources, units)),
        );
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
        // layout. For each quad q < count it reads and writes `regs` within `num_locals` registers,
        // reads `inputs + q * in_stride` within `num_inputs` registers and
        // `sysvals + q * sv_stride` within `num_sysvals`, writes `outputs + q * out_stride` within
        // `num_outputs`, reads `live[q]` and writes `killed[q]` — the callers (`shade_quad`,
        // `shade_quads`) check that every such range lies in the slices they were given (or in
        // padded copies); constants are read only at addresses bounds-checked against each
        // `ConstBuf::len`, the table being padded to `num_const_buffers`; inline texture sites read
        // `fast[site]` (one entry per site) and, when its `ok` is set, texels at `y * width + x`
        // for `x < width`, `y < height`, which `FastTex::of` checked lie in the view's slice,
        // borrowed from `resources` for the call; with `mode` 2 their sampler call goes to the
        // general path (`GeneralPaths`, code that lives as long as the process), which reads the
        // `last + 1` entries of the level table (level indices clamped to `0..=last`) and texels at
        // `offset + y * width + x` of a level with `x`, `y` clamped to its size, which
        // `FastTex::of` checked lie in the slice too, and otherwise calls `tex_sample`; indirect
        // accesses check each lane's index against the file's bounds (or the per-quad lengths in
        // `ctx`) and otherwise read a static zero block or write a stack slot of the kernel. All
        // pointers stay valid for the call and nothing else accesses that memory meanwhile.
        // Everything else the code reaches by address comes from `addresses`: the tier's table,
        // made for this code's calling convention from process-lifetime functions, slots and tables
        // and from `k.decoded`'s immediates, which live as long as the kernel. The kernel expects
        // DAZ, set just above and restored just below.
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

/// The texture data an inline texture site of a kernel reads: the unit's decoded texels and,
/// when the site's shape asks for it and the texture allows, its padded level 0.
fn fast_site(resources: &ShaderResources<'_>, units: &FastSiteUnits) -> FastTex {
    let textures = resources.textures;
    let view = textures.texel_view(units.view, units.sampler, crate::ir::TextureTarget::Tex2D);
    let padded = view
        .filter(|v| units.shape.is_some() && v.inline_shape() == units.shape)
        .and_then(|_| textures.padded_level0(units.view, units.sampler));
    FastTex::of(view, padded)
}

impl QuadShader for JitShader {
    fn prepare(&self, resources: &ShaderResources<'_>) {
        for units in self.kernel.tier().fast_sites.iter() {
            fast_site(resources, units);
        }
    }

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
