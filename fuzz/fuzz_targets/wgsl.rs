//! Fuzz target: WGSL through naga's parser and validator, the stage rules and the lowering, for
//! the fragment and the vertex entry point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use softgpu::frontend::wgsl::{compile, Stage};
use softgpu::ir::validate::validate;
use softgpu_fuzz::{on_small_stack, text_input, MAX_TEXT_INPUT};

fuzz_target!(|data: &[u8]| {
    let Some(text) = text_input(data, MAX_TEXT_INPUT) else {
        return;
    };
    on_small_stack(|| {
        for stage in [Stage::Fragment, Stage::Vertex] {
            if let Ok(lowered) = compile(text, "fuzz.wgsl", stage, None) {
                let _ = validate(&lowered.program);
            }
        }
    });
});
