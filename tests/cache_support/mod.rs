//! Shared by the shader-cache tests: the damaged versions of a JSON entry every cache must
//! reject (and then replace).

/// `original` (a stored entry whose programs start with the `stage` header, `VERT` or `FRAG`)
/// made unusable each way every entry kind must reject: emptied, truncated, not JSON, written
/// by another build, holding an invalid program, holding a program of the `other` stage. Each
/// with what was done to it.
pub fn entry_corruptions(original: &str, stage: &str, other: &str) -> Vec<(&'static str, String)> {
    let program = format!("\"program\":\"{stage}\\n");
    vec![
        ("empty", String::new()),
        ("truncated", original[..original.len() / 2].to_string()),
        ("not json", "\u{0}\u{1}garbage".to_string()),
        (
            "another build",
            original.replacen("\"build\":\"", "\"build\":\"x", 1),
        ),
        (
            "an invalid program",
            original.replacen(&program, &format!("{program}DCL TEMP["), 1),
        ),
        (
            "a program of the other stage",
            original.replacen(&program, &format!("\"program\":\"{other}\\n"), 1),
        ),
    ]
}
