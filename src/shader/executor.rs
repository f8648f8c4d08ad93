//! Which executor runs a program, and building the runnable quad shader of a program with it:
//! the Cranelift JIT, falling back to the reference interpreter.

use anyhow::Result;

use crate::driver::Driver;
use crate::exec::QuadShader;
use crate::interp::Interpreter;
use crate::ir::MathMode;
use crate::ir::Program;
use crate::jit::codegen::JitShader;

/// Which executor runs the shaders. Both give bit-identical results (the JIT is tested against
/// the interpreter); the JIT is the fast one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Executor {
    /// Cranelift-compiled quad kernels; a program the JIT refuses runs on the interpreter.
    #[default]
    Jit,
    /// The reference interpreter.
    Interp,
}

thread_local! {
    /// Set while this thread runs the JIT compiler (see [`jit_compiling`]).
    static JIT_COMPILING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the current thread is inside the JIT compiler: a panic there is caught and the program
/// runs on the interpreter instead, so a panic hook may stay quiet about it.
pub fn jit_compiling() -> bool {
    JIT_COMPILING.with(|c| c.get())
}

/// Builds the quad shader for `program` with the chosen executor, computing EX2, LG2, POW, SIN
/// and COS as `math` says (what the interpreter computes for `math.apply(program)`), after
/// `driver`'s program rewrites ([`Driver::rewrite_program`]: every program a draw runs gets
/// them here, so no caller can miss them). A program the JIT refuses — or one that trips a bug
/// in the code generator (Cranelift asserts; caught here) — runs on the interpreter, which is
/// the specification the JIT must match anyway.
pub fn build_shader(
    program: &Program,
    executor: Executor,
    math: MathMode,
    driver: Driver,
) -> Result<Box<dyn QuadShader>> {
    let program = &*driver.rewrite_program(program);
    if executor == Executor::Jit {
        JIT_COMPILING.with(|c| c.set(true));
        let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            JitShader::compile_math(program, math)
        }));
        JIT_COMPILING.with(|c| c.set(false));
        if let Ok(Ok(shader)) = compiled {
            return Ok(Box::new(shader));
        }
    }
    Ok(Box::new(Interpreter::new(&math.applied(program))?))
}
