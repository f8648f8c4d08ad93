//! Shared by the shader-cache tests: the damaged versions of a JSON entry every cache must
//! reject (and then replace).

/// `original` (a stored entry of a vertex stage) made unusable each way every entry kind must
/// reject: emptied, truncated, not JSON, written by another build, holding an invalid program,
/// holding a fragment program as the vertex stage. Each with what was done to it.
pub fn entry_corruptions(original: &str) -> Vec<(&'static str, String)> {
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
            original.replacen("\"program\":\"VERT\\n", "\"program\":\"VERT\\nDCL TEMP[", 1),
        ),
        (
            "a fragment program as the vertex stage",
            original.replacen("\"program\":\"VERT\\n", "\"program\":\"FRAG\\n", 1),
        ),
    ]
}
