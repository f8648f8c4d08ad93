//! A program too large ever to be recompiled for speed (over 20,000 instructions) keeps its
//! fast-tier kernel, so that kernel is what the on-disk cache stores for it: a later compile
//! reads it back (still a fast-tier kernel) and computes the interpreter's bits. A program
//! small enough to be recompiled stores only its optimized kernel. A test binary of its own:
//! the cache setting is process-wide.

use softgpu_jit::codegen::{disk, JitShader};
use softgpu_jit::exec::QuadShader;
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::lpmath::MathMode;
use softgpu_jit::ir::text::parse_program;
use softgpu_jit::ir::Program;

mod splitmix;
use splitmix::Rng;

mod quadinputs;
use quadinputs::*;

/// A straight fragment program of about `n` instructions: float arithmetic over temporaries
/// with a texture lookup and a branch every hundred instructions.
fn long_program(n: usize) -> Program {
    let mut text = String::from(
        "FRAG\n\
         DCL IN[0..1], GENERIC[0], PERSPECTIVE\n\
         DCL OUT[0], COLOR\n\
         DCL SAMP[0]\n\
         DCL SVIEW[0], 2D, FLOAT\n\
         DCL CONST[0][0..7]\n\
         DCL TEMP[0..7]\n\
         IMM[0] FLT32 {0.5, 1.0, 2.0, 0.25}\n",
    );
    let mut lines = vec!["MOV TEMP[0], IN[0]".to_string()];
    let mut i = 0usize;
    while lines.len() + 6 < n {
        let (a, b, c) = (i % 8, (i * 3 + 1) % 8, (i * 5 + 2) % 8);
        match i % 100 {
            99 => {
                lines.push(format!(
                    "FSLT TEMP[{a}].x, TEMP[{b}].xxxx, CONST[0][{c}].yyyy"
                ));
                lines.push(format!("UIF TEMP[{a}].xxxx"));
                lines.push(format!("ADD TEMP[{b}], TEMP[{b}], IMM[0].yyyy"));
                lines.push("ENDIF".to_string());
            }
            50 => lines.push(format!("TEX TEMP[{a}], TEMP[{b}].xyyy, SAMP[0], 2D")),
            k if k % 3 == 0 => lines.push(format!(
                "MAD TEMP[{a}], TEMP[{b}], CONST[0][{c}], -TEMP[{a}].yzwx"
            )),
            k if k % 3 == 1 => lines.push(format!("MUL TEMP[{a}].xy, TEMP[{b}], IMM[0].xxzw")),
            _ => lines.push(format!("MIN TEMP[{a}], TEMP[{b}], |TEMP[{c}]|")),
        }
        i += 1;
    }
    lines.push("MOV OUT[0], TEMP[0]".to_string());
    lines.push("END".to_string());
    for (k, l) in lines.iter().enumerate() {
        text.push_str(&format!("{k:6}: {l}\n"));
    }
    parse_program(&text).expect("the test program parses")
}

fn kernel_entries(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "kernel"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn final_fast_tier_kernels_are_stored_and_read_back() {
    let dir = std::env::temp_dir().join(format!("softgpu-fast-kernels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    disk::set_kernel_cache(Some(dir.clone()), "fast test build");

    let program = long_program(20_500);
    assert!(program.instructions.len() > 20_000);
    let compiled = JitShader::compile_uncached(&program).expect("compiles");
    assert!(!compiled.loaded_from_disk());
    assert!(
        !compiled.is_optimized(),
        "a program this large stays on the fast tier"
    );
    assert_eq!(kernel_entries(&dir), 1, "its fast-tier kernel is stored");
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
    let medium = long_program(1_000);
    let fast = JitShader::compile_tier_math(&medium, MathMode::Exact, false).expect("compiles");
    assert!(!fast.loaded_from_disk() && !fast.is_optimized());
    assert_eq!(
        kernel_entries(&dir),
        1,
        "a fast-tier kernel that is not final is not stored"
    );
    let optimized = JitShader::compile_optimized(&medium).expect("compiles");
    assert!(optimized.is_optimized());
    assert_eq!(kernel_entries(&dir), 2);
    let again = JitShader::compile_uncached(&medium).expect("compiles");
    assert!(again.loaded_from_disk());
    assert!(again.is_optimized(), "only the optimized kernel is stored");

    disk::set_kernel_cache(None, "fast test build");
    let _ = std::fs::remove_dir_all(&dir);
}
