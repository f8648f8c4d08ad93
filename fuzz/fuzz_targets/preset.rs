//! Fuzz target: the preset parser (`.slangp` and `.cgp` text, `#reference` lines, wildcards).
//! The input is a multi-file input (see `softgpu_fuzz`), so `#reference` lines can name the other
//! files; it is parsed once as `main.slangp` and once as `main.cgp`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use softgpu::chain::preset::{parse_preset_str, WildcardContext};
use softgpu_fuzz::{on_small_stack, text_input, write_files, MAX_TEXT_INPUT};

fuzz_target!(|data: &[u8]| {
    let Some(text) = text_input(data, MAX_TEXT_INPUT) else {
        return;
    };
    on_small_stack(|| {
        let wildcards = WildcardContext::new();
        for main in ["main.slangp", "main.cgp"] {
            let (path, main_text) = write_files(text, main);
            let _ = parse_preset_str(main_text, &path, &wildcards);
        }
    });
});
