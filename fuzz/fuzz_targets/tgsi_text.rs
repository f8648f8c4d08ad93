//! Fuzz target: the TGSI text parser and the validator. A program that parses and validates
//! must print to text that parses back to the same program.
#![no_main]

use libfuzzer_sys::fuzz_target;
use softgpu_fuzz::{on_small_stack, text_input, MAX_TEXT_INPUT};
use softgpu_jit::ir::text::{parse_program, print_program};
use softgpu_jit::ir::validate::validate;

fuzz_target!(|data: &[u8]| {
    let Some(text) = text_input(data, MAX_TEXT_INPUT) else {
        return;
    };
    on_small_stack(|| {
        let Ok(program) = parse_program(text) else {
            return;
        };
        if validate(&program).is_err() {
            return;
        }
        let printed = print_program(&program);
        let reparsed = parse_program(&printed)
            .unwrap_or_else(|e| panic!("printed program does not parse: {e}\n{printed}"));
        assert!(
            reparsed == program,
            "printed program parses to a different program\n{printed}"
        );
    });
});
