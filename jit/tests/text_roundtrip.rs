//! Round trip of real Mesa 22.3 dumps (jit/tests/data/tgsi): each parses, validates, and prints
//! back byte for byte; and parse(print(p)) == p.

use softgpu_jit::ir::text::{parse_program, print_program};
use softgpu_jit::ir::validate::{parse_and_validate, validate};
use std::path::PathBuf;

fn corpus() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tgsi");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("corpus directory") {
        let path = e.expect("dir entry").path();
        if path.extension().is_some_and(|x| x == "tgsi") {
            let text = std::fs::read_to_string(&path).expect("readable dump");
            out.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                text,
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn corpus_is_not_empty() {
    // 30 fragment shaders and their (identical) vertex shaders.
    assert!(corpus().len() >= 60, "found {}", corpus().len());
}

#[test]
fn every_dump_round_trips_byte_exactly() {
    for (name, text) in corpus() {
        let p = parse_program(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Err(errs) = parse_and_validate(&text) {
            panic!("{name} does not validate: {errs:#?}");
        }
        assert_eq!(validate(&p), Ok(()), "{name}");
        let printed = print_program(&p);
        assert_eq!(
            printed.trim_end_matches('\n'),
            text.trim_end_matches('\n'),
            "{name}: printed text differs"
        );
        let again = parse_program(&printed).unwrap_or_else(|e| panic!("{name} reprinted: {e}"));
        assert_eq!(again, p, "{name}: parse(print(p)) != p");
    }
}
