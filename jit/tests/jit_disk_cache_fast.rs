//! A program too large ever to be recompiled for speed (over 20,000 instructions) keeps its
//! fast-tier kernel, so that kernel is what the on-disk cache stores for it: a later compile
//! reads it back (still a fast-tier kernel) and computes the interpreter's bits. A program
//! small enough to be recompiled stores only its optimized kernel. A test binary of its own:
//! the cache setting is process-wide.

use softgpu_jit::codegen::{disk, JitShader};
use softgpu_jit::exec::QuadShader;
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::MathMode;

mod splitmix;
use splitmix::Rng;

mod quadinputs;
use quadinputs::*;

mod bigprogram;
use bigprogram::big_program;

#[test]
fn final_fast_tier_kernels_are_stored_and_read_back() {
    let dir = std::env::temp_dir().join(format!("softgpu-fast-kernels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    disk::set_kernel_cache(Some(dir.clone()), "fast test build");

    let program = big_program(20_500);
    assert!(program.instructions.len() > 20_000);
    let compiled = JitShader::compile_uncached(&program).expect("compiles");
    assert!(!compiled.loaded_from_disk());
    assert!(
        !compiled.is_optimized(),
        "a program this large stays on the fast tier"
    );
    assert_eq!(
        kernel_entries(&dir).len(),
        1,
        "its fast-tier kernel is stored"
    );
    let read = JitShader::compile_uncached(&program).expect("compiles");
    assert!(read.loaded_from_disk());
    assert!(
        !read.is_optimized(),
        "what was read is the fast tier's kernel"
    );

    let interp = Interpreter::new(&program).expect("interpretable");
    let sig = interp.signature();
    let mut rng = Rng(11);
    for trial in 0..8 {
        let inp = random_inputs(&mut rng, sig.num_inputs.max(3), 0, sig.num_outputs.max(2));
        let (ri, oi) = run(&interp, &inp);
        for shader in [&compiled, &read] {
            let (rj, oj) = run(shader, &inp);
            assert!(ri == rj && oi == oj, "trial {trial}: {ri:?} vs {rj:?}");
        }
    }

    // A program recompiled for speed: its fast-tier kernel is not stored (the optimized one
    // is, when its background compilation is done), so nothing fast is read back.
    let medium = big_program(1_000);
    let fast = JitShader::compile_tier_math(&medium, MathMode::Exact, false).expect("compiles");
    assert!(!fast.loaded_from_disk() && !fast.is_optimized());
    assert_eq!(
        kernel_entries(&dir).len(),
        1,
        "a fast-tier kernel that is not final is not stored"
    );
    let optimized = JitShader::compile_optimized(&medium).expect("compiles");
    assert!(optimized.is_optimized());
    assert_eq!(kernel_entries(&dir).len(), 2);
    let again = JitShader::compile_uncached(&medium).expect("compiles");
    assert!(again.loaded_from_disk());
    assert!(again.is_optimized(), "only the optimized kernel is stored");

    disk::set_kernel_cache(None, "fast test build");
    let _ = std::fs::remove_dir_all(&dir);
}
