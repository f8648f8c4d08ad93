//! Reference interpreter: the specification of what every TGSI program computes on one 2x2 quad.
//!
//! The Cranelift JIT (`codegen`) and every optimisation pass (`opt`) must match it bit for bit,
//! and it matches softpipe (Mesa 22.3's `tgsi_exec.c` on x86-64/glibc), the reference driver.
//! Rules and where they come from:
//!
//! **Arithmetic** ([`ops`]): the C expression of the corresponding `micro_*` function, run the
//! way softpipe runs it — with the x86 DAZ and FTZ modes on, so denormal inputs read as zero and
//! denormal results flush to zero (observed on softpipe; GPUs do the same). RCP = `1/x`;
//! RSQ = `1/sqrtf(x)` (no `fabsf` in 22.3: RSQ(-2) = NaN); EX2 = `powf(2, x)`;
//! LG2 = `logf(x) * 1.442695f`; POW = `powf`; SIN/COS = `sinf`/`cosf`; ROUND = round half to
//! even; FRC = `x - floorf(x)`; MIN/MAX: a NaN operand yields the other one, ties (±0) the first
//! one; `_SAT` maps NaN and -0 to +0. MAD, LRP and DPn multiply and add with separate rounding
//! (no FMA in x86-64 baseline code); FMA is fused. SLT/SGE/… give 1.0/0.0, FSLT/ISLT/USEQ/…
//! give `~0`/0. F2I/ARL/ARR convert like x86 `cvttss2si` (NaN and out of range →
//! `0x8000_0000`); F2U like softpipe's vectorised build (≥ 2^32 and +inf → 0, negatives below
//! -1 and NaN → `0x8000_0000`, -1.0 → `0xffff_ffff`) — not the D3D10 saturating rules, because
//! softpipe does not saturate. All of this is cross-checked bit for bit against softpipe renders
//! (`jit/tests/interp_softpipe.rs`).
//! Integers: IDIV by 0 → 0, UDIV/UMOD by 0 → `0xffff_ffff`, MOD by 0 → -1 (`~0`); shift counts
//! are masked to 5 bits; IBFE/UBFE/BFI follow `micro_ibfe`/`micro_ubfe`/`micro_bfi` exactly;
//! LSB/UMSB/IMSB of 0 (IMSB also of -1) are -1. `i32::MIN / -1` wraps to `i32::MIN` and
//! `i32::MIN % -1` is 0 (softpipe would trap on these).
//! Legacy opcodes softpipe 22.3 no longer has (XPD, SCS, NRM, NRM4, RFL, X2D, CND, DP2A, RCC,
//! SFL, STR, CLAMP, SAD, PK2US/PK4B/PK4UB and their unpacks) follow `tgsi.rst` of older Mesa.
//!
//! **Operands**: a source reads the register, swizzles, then applies `|x|` (always a float
//! absolute value, i.e. clearing bit 31, as softpipe's `micro_abs`) and then `-` (float negation —
//! flipping bit 31 — or wrapping integer negation when [`Opcode::src_type`] says the operand is an
//! integer; softpipe's own choice differs only for LDEXP.src1 and UCMP.src0, where nir_to_tgsi
//! never puts modifiers). `_SAT` is `fminf(fmaxf(x, 0), 1)` on the result bits (NaN → 0), for
//! every opcode, as `store_dest`. Reads of undeclared or out-of-range registers (and constants
//! past a buffer's end or in a missing buffer) give 0; writes to them are dropped.
//!
//! **Indirect addressing**: `FILE[ADDR[i].c + k]` is evaluated per lane; with an array id
//! (`TEMP[ADDR[0].x+3](1)`) the index must fall inside that `DCL TEMP[a..b], ARRAY(1)` range,
//! otherwise inside the file. (Softpipe uses lane 0's index for every lane of an indirect
//! destination and does not bounds-check temporaries; per-lane and checked is what GPUs do.)
//!
//! **Execution masks** mirror softpipe's `CondMask & LoopMask & ContMask & Switch.mask &
//! FuncMask`: IF tests `f != 0.0` (so -0.0 is false, NaN true), UIF tests `bits != 0`; ELSE
//! inverts within the enclosing mask; BRK clears the executing lanes from the innermost loop (or
//! SWITCH, by static nesting), CONT until ENDLOOP; ENDLOOP repeats while any lane is active.
//! SWITCH/CASE fall through; DEFAULT takes the lanes no CASE of the SWITCH matches, wherever it
//! stands (softpipe only gets this right for a trailing DEFAULT), and BRK in a SWITCH removes
//! only the executing lanes (softpipe clears all of them, which differs only for a non-uniform
//! BRK). CAL/RET/BGNSUB/ENDSUB use a call stack of [`MAX_CALL_DEPTH`] frames; RET in the main
//! program ends it once every lane has returned. Blocks no lane executes are skipped. Labels are
//! ignored except CAL's (the BGNSUB instruction index).
//!
//! **Lanes**: helper lanes (not in [`QuadIo::live`]) and killed lanes execute everything, so
//! derivatives stay valid; OUT is written only for live lanes. KILL (KILP) kills the active
//! lanes, KILL_IF (KIL) the active lanes where any component of the source is < 0. The returned
//! mask is the killed lanes.
//!
//! **Derivatives** (softpipe's `micro_ddx`/`micro_ddy`): coarse DDX = BR − BL and DDY = BL − TL
//! for the whole quad; DDX_FINE = TR − TL on the top row and BR − BL on the bottom row;
//! DDY_FINE = BL − TL on the left column and BR − TR on the right column.
//!
//! **Textures** (`exec_tex` & co.): coordinates are the target's first `coord_dim` components of
//! src0 (the rest of [`SampleRequest::coords`](crate::exec::SampleRequest::coords) are 0); the depth reference is src0.z (1D/2D/RECT
//! shadow, 1D array shadow), src0.w (cube shadow, 2D array shadow) or src1.x (cube array shadow);
//! TXP divides coordinates and reference by src0.w; TXB/TXL take the bias/level from src0.w,
//! TXB2/TXL2 from src1.x; TXD takes gradients from src1/src2; TG4 gathers component
//! `src1.x & 3`; TXF/SAMPLE_I use integer coordinates and src0.w as level; TXQ/SVIEWINFO query
//! lane 0's level src0.x; TXQS reports 1 sample; LODQ writes x (level) and y (lambda) only.
//! Offsets are lane 0 of the offset register, truncated to 8 bits. SAMPLE-family instructions
//! take the target from the `DCL SVIEW`, the view and sampler from their operands, the
//! compare/bias/level from src3.x, gradients from src3/src4, and swizzle the result by the SVIEW
//! operand's swizzle. Indexed sampler operands use the first active lane's index.
//!
//! **Storage memory** (`LOAD`, `STORE`, `ATOM*` on `BUFFER`/`IMAGE`): see `memory.rs` for
//! addresses, bounds, which lanes write and image formats.
//!
//! Not supported (rejected by [`Interpreter::new`]): PUSHA, POPA, ARA and BRA (NV/ARB-era address
//! stacks and unstructured jumps), MEMORY and HWATOMIC operands, and BUFFER/IMAGE operands
//! other than the resource of a memory instruction.

pub(crate) mod decode;
pub mod libm;
mod memory;
pub mod ops;
pub(crate) mod run;
mod texture;

use std::cell::RefCell;

use crate::exec::{
    ExecError, QuadIo, QuadShader, ShaderResources, ShaderSignature, DEFAULT_INSTRUCTION_BUDGET,
};
use crate::ir::{Opcode, Program};
use decode::Decoded;
pub use decode::MAX_CALL_DEPTH;
use run::{Machine, Scratch};

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A program pre-decoded for quad-at-a-time interpretation.
#[derive(Clone, Debug)]
pub struct Interpreter {
    decoded: Decoded,
    signature: ShaderSignature,
    budget: u64,
}

impl Interpreter {
    /// Decodes `program`, resolving its control-flow structure and operands.
    pub fn new(program: &Program) -> Result<Interpreter, ExecError> {
        Ok(Interpreter {
            decoded: decode::decode(program)?,
            signature: ShaderSignature::from_program(program),
            budget: DEFAULT_INSTRUCTION_BUDGET,
        })
    }

    /// Sets how many instructions one quad may execute before [`ExecError::BudgetExceeded`].
    pub fn with_budget(mut self, budget: u64) -> Interpreter {
        self.budget = budget;
        self
    }

    /// The instruction budget per quad.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    fn run(
        &self,
        scratch: &mut Scratch,
        resources: &ShaderResources<'_>,
        io: &mut QuadIo<'_>,
    ) -> Result<u8, ExecError> {
        let (regs, mut stacks) = scratch.prepare(self.decoded.num_locals);
        let mut machine = Machine::new(&self.decoded, regs, resources, io);
        machine.run(&mut stacks, self.budget)
    }
}

impl QuadShader for Interpreter {
    fn shade_quad(
        &self,
        resources: &ShaderResources<'_>,
        io: &mut QuadIo<'_>,
    ) -> Result<u8, ExecError> {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => self.run(&mut scratch, resources, io),
            // Re-entered from a texture callback: use fresh memory rather than fail.
            Err(_) => self.run(&mut Scratch::default(), resources, io),
        })
    }

    fn signature(&self) -> &ShaderSignature {
        &self.signature
    }
}

/// True when source `index` of `op` has its `-` modifier applied as integer negation.
pub fn negate_is_integer(op: Opcode, index: usize) -> bool {
    matches!(
        op.src_type(index),
        crate::ir::ValueType::Signed | crate::ir::ValueType::Unsigned
    )
}
