//! Fuzz target: a Cg shader through the Cg preprocessor, parser, checker, builder, naga's
//! validator and the lowering. The input is a multi-file input (see `softgpu_fuzz`), so
//! `#include` lines can name the other files.
#![no_main]

use libfuzzer_sys::fuzz_target;
use softgpu::frontend::cg::compile_cg_str;
use softgpu::ir::validate::validate;
use softgpu_fuzz::{on_small_stack, text_input, write_files, MAX_TEXT_INPUT};

fuzz_target!(|data: &[u8]| {
    let Some(text) = text_input(data, MAX_TEXT_INPUT) else {
        return;
    };
    on_small_stack(|| {
        let (path, main_text) = write_files(text, "main.cg");
        let Ok(shader) = compile_cg_str(main_text, &path) else {
            return;
        };
        if let Ok((vertex, fragment)) = shader.lower() {
            let _ = validate(&vertex.program);
            let _ = validate(&fragment.program);
        }
    });
});
