//! The kernel cache keeps recently used kernels after their shaders are dropped (a test binary
//! of its own: other tests compiling in parallel would push kernels out of it).

use softgpu_jit::codegen::JitShader;
use softgpu_jit::ir::text::parse_program;

#[test]
fn recently_dropped_kernels_are_found_again_and_old_ones_let_go() {
    let text = |k: usize| {
        format!(
            "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\n\
             IMM[0] FLT32 {{{k}.0, 0.0, 0.0, 0.0}}\n0: MUL OUT[0], IN[0], IMM[0].xxxx\n1: END\n"
        )
    };
    let first = parse_program(&text(1)).expect("parses");
    assert!(JitShader::cached(&first).is_none());
    let shader = JitShader::compile(&first).expect("compiles");
    drop(shader);
    let again = JitShader::cached(&first).expect("kept after the shader is dropped");
    assert!(again.shares_kernel_with(&JitShader::compile(&first).expect("compiles")));
    drop(again);
    // Many other programs later, the first one's kernel is gone.
    for k in 2..40 {
        drop(JitShader::compile(&parse_program(&text(k)).expect("parses")).expect("compiles"));
    }
    assert!(JitShader::cached(&first).is_none());
}
