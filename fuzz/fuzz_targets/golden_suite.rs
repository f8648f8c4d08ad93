//! Fuzz target: the golden suite parser (`softgpu test` suite files, TOML).
#![no_main]

use libfuzzer_sys::fuzz_target;
use softgpu::golden::suite::Suite;
use softgpu_fuzz::{fresh_scratch, text_input, MAX_TEXT_INPUT};

fuzz_target!(|data: &[u8]| {
    let Some(text) = text_input(data, MAX_TEXT_INPUT) else {
        return;
    };
    // Relative paths in the suite resolve against the (empty) scratch folder.
    let path = fresh_scratch().join("suite.toml");
    let _ = Suite::parse(&path, text);
});
