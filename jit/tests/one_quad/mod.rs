//! Runs one quad of a shader, for the JIT's differential tests: every lane live, no constants,
//! one output register pre-filled with a pattern no result has by accident.
#![allow(dead_code)]

use softgpu_jit::exec::{ExecError, QuadIo, QuadShader, QuadVec4, ShaderResources, TextureAccess};

/// The killed-lane mask (or the error) and output register 0 of one quad of `shader`.
pub fn run_quad(
    shader: &dyn QuadShader,
    inputs: &[QuadVec4],
    textures: &dyn TextureAccess,
) -> (Result<u8, ExecError>, QuadVec4) {
    let mut outs = vec![[[0x5555_5555u32; 4]; 4]];
    let res = ShaderResources {
        constants: &[],
        textures,
        storage: Default::default(),
    };
    let mut io = QuadIo {
        inputs,
        system_values: &[],
        outputs: &mut outs,
        live: 0b1111,
    };
    let r = shader.shade_quad(&res, &mut io);
    (r, outs[0])
}
