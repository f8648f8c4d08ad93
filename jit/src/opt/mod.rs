//! Every bit-exact rewrite of a [`Program`], and the one order they run in.
//!
//! Two entry points hold the whole pass order, as Cranelift's `Context` does:
//! - [`cleanup`]: what every frontend runs after lowering (and `draw` before the JIT runs a
//!   program from a file): constant loops unrolled and constant instructions folded
//!   ([`unroll`]), copies propagated and dead writes removed (`copies.rs`), fragment inputs
//!   narrowed to what is read ([`narrow_input_usage`]), temporaries compacted ([`compact`]);
//! - [`specialize`]: what `draw` and the filter chain run once they know the textures a fragment
//!   program samples and the constants that never change: the constants folded
//!   ([`fold_known_constants`]), then small branches turned into selects ([`ifconv`]), recomputed
//!   values into copies ([`lvn`]), loops unrolled further, where the estimated cost drops, and
//!   functions of nearest texels hoisted into pre-passes ([`texelfn`]).
//!
//! [`lpmath`] is no optimisation: it rewrites the transcendental functions into llvmpipe's
//! polynomials for the `llvmpipe` [`MathMode`](crate::ir::MathMode).
//!
//! Every pass computes, for every output bit and the kill mask, what the interpreter computes
//! for the program it was given; `README.md` beside this file lists the rules they keep and the
//! tests that hold them to it. In debug builds both entry points validate the program after
//! every pass and panic naming the pass when it breaks a valid program: that is a bug here, not
//! bad input. Programs with subroutines or `BRA` are left alone (their labels are instruction
//! indices).

pub mod compact;
mod constants;
mod copies;
pub mod ifconv;
mod inputs;
pub mod lpmath;
pub mod lvn;
pub mod texelfn;
pub mod unroll;

pub use constants::KnownConstants;
pub use inputs::narrow_input_usage;

use crate::ir::{props, Instruction, OpcodeClass, Program};
use texelfn::TexelFunction;

/// Cleans up a freshly lowered program in place: unrolling and constant folding, copy
/// propagation and dead writes, input narrowing, register compaction (see the module
/// documentation). The program computes the same bits, with less work.
pub fn cleanup(program: &mut Program) {
    if left_alone(&program.instructions) {
        return;
    }
    let passes = Passes::new(program);
    optimize(&passes, program);
    passes.run("compact", program, |p| {
        compact::compact_temps(p);
    });
}

/// Unrolling, copy propagation and input narrowing: [`cleanup`] before compaction.
fn optimize(passes: &Passes, program: &mut Program) {
    passes.run("unroll", program, |p| {
        unroll::unroll_loops(p);
    });
    passes.run("copies", program, copies::forward_and_remove);
    passes.run("inputs", program, narrow_input_usage);
}

/// What [`specialize`] may assume about the draws a program will make.
#[derive(Clone, Copy, Debug)]
pub struct SpecializeOptions<'a> {
    /// Bit `n` set: sampling unit `n` gives each lane a texel that depends on its own
    /// coordinates only (one filter for minification and magnification, and one level or no mip
    /// filter). Branches around such lookups may become selects.
    pub lane_local_units: u64,
    /// Bit `n` set: unit `n` is sampled with nearest filtering at one level, so functions of its
    /// texels may be hoisted into pre-passes ([`texelfn`]); 0 hoists nothing.
    pub nearest_units: u64,
    /// Constant-buffer values that are the same in every draw.
    pub constants: Option<&'a KnownConstants>,
    /// The most texture instructions the executor samples inline (the code generator's
    /// `MAX_INLINE_TEX`): no rewrite leaves more than that, or than the program had.
    pub inline_texture_limit: usize,
}

impl SpecializeOptions<'_> {
    /// Options that promise nothing about units or constants.
    pub fn new(inline_texture_limit: usize) -> SpecializeOptions<'static> {
        SpecializeOptions {
            lane_local_units: 0,
            nearest_units: 0,
            constants: None,
            inline_texture_limit,
        }
    }
}

/// What [`specialize`] made of a program.
#[derive(Clone, Debug)]
pub struct Specialized {
    /// The specialized program, exact for every draw that keeps the options' promises.
    pub program: Program,
    /// Constant operands replaced by immediates.
    pub folded_constants: usize,
    /// The functions of nearest texels hoisted out: the program samples their derived textures
    /// (see [`TexelFunction`]), which a pre-pass renders before each draw.
    pub texel_functions: Vec<TexelFunction>,
    /// The program before the texel functions were hoisted, when any were: for draws whose
    /// textures break a function's preconditions.
    pub unhoisted: Option<Program>,
}

/// Instructions [`specialize`] lets a program grow to by unrolling loops again once if-conversion
/// and value numbering have shrunk it.
pub const MAX_SPECIALIZED_INSTRUCTIONS: usize = 12_000;

/// Specializes a cleaned-up `program` for what `options` promise: known constants are folded
/// ([`fold_known_constants`]); then small branches become selects ([`ifconv`]), recomputed values
/// copies ([`lvn`]), and loops the first unrolling left for size are unrolled while the program
/// stays below [`MAX_SPECIALIZED_INSTRUCTIONS`] — kept where that lowers the estimated cost
/// ([`ifconv::estimated_cost`]) by a tenth and leaves no more texture instructions than the
/// executor samples inline; and functions of nearest texels are hoisted into pre-passes
/// ([`texelfn`]), from that rewrite when only the hoisting makes it pay. Exact for every draw
/// that keeps the promises.
pub fn specialize(program: &Program, options: &SpecializeOptions<'_>) -> Specialized {
    if left_alone(&program.instructions) {
        return Specialized {
            program: program.clone(),
            folded_constants: 0,
            texel_functions: Vec::new(),
            unhoisted: None,
        };
    }
    let limit = options.inline_texture_limit;
    let mut specialized = program.clone();
    let folded_constants = match options.constants {
        Some(known) => fold_known_constants(&mut specialized, known, limit),
        None => 0,
    };
    let passes = Passes::new(&specialized);
    // (the rewrite with its texel functions hoisted, those functions)
    let mut hoisted_candidate = None;
    if let Some(candidate) = specialization_candidate(&specialized, options.lane_local_units) {
        if rewrite_pays(&specialized, &candidate, limit) {
            specialized = candidate;
            passes.run("inputs", &mut specialized, narrow_input_usage);
        } else if options.nearest_units != 0 {
            // Branches turned into selects can free texel functions that the branches hid (the
            // sRGB curve's `c <= 0.04045 ? … : pow(…)` once a parameter has folded the branches
            // around it), and their pre-pass can make the rewrite pay.
            let mut hoisted = candidate;
            let functions = passes.hoist(&mut hoisted, options.nearest_units);
            if !functions.is_empty() && rewrite_pays(&specialized, &hoisted, limit) {
                hoisted_candidate = Some((hoisted, functions));
            }
        }
    }
    let (unhoisted, texel_functions) = match hoisted_candidate {
        // Draws that cannot use the pre-pass run the program as it was before the rewrite,
        // which pays only with the pre-pass.
        Some((hoisted, functions)) => (
            Some(std::mem::replace(&mut specialized, hoisted)),
            functions,
        ),
        None if options.nearest_units != 0 => {
            let unhoisted = specialized.clone();
            let functions = passes.hoist(&mut specialized, options.nearest_units);
            (Some(unhoisted), functions)
        }
        None => (None, Vec::new()),
    };
    Specialized {
        program: specialized,
        folded_constants,
        unhoisted: unhoisted.filter(|_| !texel_functions.is_empty()),
        texel_functions,
    }
}

/// Folds constant-buffer values that are the same in every draw (a filter chain's shader
/// parameters) into `program`: operands reading them read immediates of the same bits
/// instead, then the program is optimized again, so that branches and loop bounds the values
/// decide fold and unroll, and its temporaries are compacted. Unrolling is left out when it
/// would leave more texture instructions than `inline_texture_limit` (and the program had).
/// Returns the number of operands replaced. The first stage of [`specialize`].
pub fn fold_known_constants(
    program: &mut Program,
    known: &KnownConstants,
    inline_texture_limit: usize,
) -> usize {
    if known.is_empty() || left_alone(&program.instructions) {
        return 0;
    }
    let passes = Passes::new(program);
    let limit = texture_limit(program, inline_texture_limit);
    let mut folded = program.clone();
    let replaced = passes.run("constants", &mut folded, |p| {
        constants::substitute_known_constants(p, known)
    });
    if replaced == 0 {
        return 0;
    }
    let mut unrolled = folded.clone();
    optimize(&passes, &mut unrolled);
    if texture_instructions(&unrolled) <= limit {
        *program = unrolled;
    } else {
        // Branches and constants still fold; loops stay loops.
        passes.run("unroll (no loops)", &mut folded, |p| {
            unroll::unroll_loops_within(p, 0, 0);
        });
        passes.run("copies", &mut folded, copies::forward_and_remove);
        *program = folded;
    }
    // Folding turns indirect accesses into direct ones and shortens lifetimes.
    passes.run("compact", program, |p| {
        compact::compact_temps(p);
    });
    replaced
}

/// The rewrite [`specialize`] makes of `original` for its units, before it decides whether the
/// rewrite pays, temporaries compacted; `None` for programs with subroutines.
fn specialization_candidate(original: &Program, lane_local_units: u64) -> Option<Program> {
    if has_subroutines(&original.instructions) {
        return None;
    }
    let passes = Passes::new(original);
    let mut program = original.clone();
    for round in 0..4 {
        if round > 0 {
            let before = program.instructions.len();
            if before >= MAX_SPECIALIZED_INSTRUCTIONS {
                break;
            }
            let mut candidate = program.clone();
            let room = MAX_SPECIALIZED_INSTRUCTIONS - before;
            let unrolled = passes.run("unroll", &mut candidate, |p| {
                unroll::unroll_loops_within(p, room, room)
            });
            if !unrolled || candidate.instructions.len() > MAX_SPECIALIZED_INSTRUCTIONS {
                break;
            }
            program = candidate;
        }
        passes.run("ifconv", &mut program, |p| {
            ifconv::convert_blocks(p, lane_local_units);
        });
        passes.run("lvn", &mut program, |p| {
            lvn::number_values(p);
        });
        passes.run(
            "copies (liveness)",
            &mut program,
            copies::forward_and_remove_unread,
        );
    }
    passes.run("compact", &mut program, |p| {
        compact::compact_temps(p);
    });
    Some(program)
}

/// Whether `rewritten` should replace `original`: its estimated per-quad cost
/// ([`ifconv::estimated_cost`]) is at least 10% lower and it holds no more texture instructions
/// than `inline_texture_limit` (or `original` holds). Running both arms of every small branch
/// pays only where value numbering then removes work (crt-lottes-style repeated taps) or a texel
/// function leaves the branch for a pre-pass; elsewhere it is measured slower (crt-lottes
/// itself, whose repeated taps sit in branches on a shader parameter, 2.3x). Both forms are
/// exact.
fn rewrite_pays(original: &Program, rewritten: &Program, inline_texture_limit: usize) -> bool {
    let cost = ifconv::estimated_cost;
    cost(rewritten) * 10 <= cost(original) * 9
        && texture_instructions(rewritten) <= texture_limit(original, inline_texture_limit)
}

/// The texture instructions of `program`.
fn texture_instructions(program: &Program) -> usize {
    program
        .instructions
        .iter()
        .filter(|i| i.opcode.class() == OpcodeClass::Texture)
        .count()
}

/// How many texture instructions a rewrite of `original` may leave: what the executor samples
/// inline, or the original's count when that is more (unrolling a texture loop past the limit
/// made motion_interpolation's kernel 1.5x slower: 15 reads in a loop became 106).
fn texture_limit(original: &Program, inline_texture_limit: usize) -> usize {
    inline_texture_limit.max(texture_instructions(original))
}

/// Whether `insts` use subroutines or `BRA` (labels are instruction indices there, so the
/// passes that move instructions leave such programs alone).
fn has_subroutines(insts: &[Instruction]) -> bool {
    insts
        .iter()
        .any(|i| props::uses_instruction_indices(i.opcode))
}

/// Whether every pass leaves `insts` as they are: subroutines (see [`has_subroutines`]), or
/// loads, stores and atomics of storage memory, which no pass may drop, repeat or reorder.
fn left_alone(insts: &[Instruction]) -> bool {
    has_subroutines(insts) || insts.iter().any(|i| props::accesses_memory(i.opcode))
}

/// Runs passes; in debug builds it checks the program after each one against the validator,
/// when the program it started from was valid.
struct Passes {
    #[cfg(debug_assertions)]
    input_valid: bool,
}

impl Passes {
    fn new(program: &Program) -> Passes {
        #[cfg(not(debug_assertions))]
        let _ = program;
        Passes {
            #[cfg(debug_assertions)]
            input_valid: crate::ir::validate::validate(program).is_ok(),
        }
    }

    /// Runs `pass`, named `name` in the panic that reports a program it broke.
    fn run<T>(&self, name: &str, program: &mut Program, pass: impl FnOnce(&mut Program) -> T) -> T {
        let result = pass(program);
        self.check(name, program);
        result
    }

    /// Hoists the texel functions of `program` ([`texelfn`]), checking the rewritten program and
    /// every pre-pass.
    fn hoist(&self, program: &mut Program, nearest_units: u64) -> Vec<TexelFunction> {
        let functions = self.run("texelfn", program, |p| {
            texelfn::hoist_texel_functions(p, nearest_units)
        });
        for f in &functions {
            self.check("texelfn (pre-pass)", &f.program);
        }
        functions
    }

    #[cfg(debug_assertions)]
    fn check(&self, name: &str, program: &Program) {
        if !self.input_valid {
            return;
        }
        if let Err(errors) = crate::ir::validate::validate(program) {
            let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
            panic!(
                "the `{name}` pass made a valid program invalid (a bug in softgpu_jit::opt):\n{}\n{}",
                errors.join("\n"),
                crate::ir::text::print_program(program)
            );
        }
    }

    #[cfg(not(debug_assertions))]
    fn check(&self, _name: &str, _program: &Program) {}
}
