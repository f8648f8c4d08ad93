//! Fuzz target: a RetroArch Vulkan GLSL (`.slang`) shader through the preprocessor, glslang,
//! naga, reflection and the lowering. The input is a multi-file input (see `softgpu_fuzz`), so
//! `#include` lines can name the other files.
#![no_main]

use libfuzzer_sys::fuzz_target;
use softgpu::frontend::vulkan_glsl::compile_slang;
use softgpu::ir::validate::validate;
use softgpu_fuzz::{on_small_stack, text_input, write_files, MAX_TEXT_INPUT};

fuzz_target!(|data: &[u8]| {
    let Some(text) = text_input(data, MAX_TEXT_INPUT) else {
        return;
    };
    on_small_stack(|| {
        let (path, _) = write_files(text, "main.slang");
        let Ok(shader) = compile_slang(&path) else {
            return;
        };
        let _ = shader.reflection();
        if let Ok((vertex, fragment)) = shader.lower() {
            let _ = validate(&vertex.program);
            let _ = validate(&fragment.program);
        }
    });
});
