//! Which language a `.slang` file is written in: RetroArch's Vulkan GLSL and the Slang shading
//! language share the extension. A RetroArch file starts with `#version` (after comments and
//! blank lines) and splits its stages with `#pragma stage`; a file with neither is Slang; a file
//! with only one of the two is an error stating both rules.

/// The language of a `.slang` file's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlangFlavor {
    /// RetroArch's Vulkan GLSL.
    RetroArch,
    /// The Slang shading language.
    Slang,
}

/// The rules, for errors.
pub const RULES: &str = "a RetroArch shader starts with `#version` and splits its stages with \
    `#pragma stage`; a Slang shader has neither (choose with --lang retroarch or --lang slang)";

/// Decides the language of `source`; the error (without the file name) says which rule only half
/// holds.
pub fn detect(source: &str) -> Result<SlangFlavor, String> {
    let starts_with_version = first_code(source).is_some_and(|l| {
        l.strip_prefix('#')
            .is_some_and(|r| r.trim_start().starts_with("version"))
    });
    let has_stage_pragma = source.lines().any(|l| {
        let l = l.trim_start();
        l.strip_prefix('#').is_some_and(|r| {
            let mut words = r.split_whitespace();
            words.next() == Some("pragma") && words.next() == Some("stage")
        })
    });
    match (starts_with_version, has_stage_pragma) {
        (true, true) => Ok(SlangFlavor::RetroArch),
        (false, false) => Ok(SlangFlavor::Slang),
        (true, false) => Err(format!(
            "starts with `#version` but has no `#pragma stage`: neither language; {RULES}"
        )),
        (false, true) => Err(format!(
            "has `#pragma stage` but does not start with `#version`: neither language; {RULES}"
        )),
    }
}

/// The first line of `source` that is not blank or a comment (line or block comments).
fn first_code(source: &str) -> Option<&str> {
    let mut rest = source.strip_prefix('\u{feff}').unwrap_or(source);
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map_or("", |(_, tail)| tail);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, tail)| tail);
        } else if rest.is_empty() {
            return None;
        } else {
            return rest.lines().next();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{detect, SlangFlavor};

    #[test]
    fn retroarch_needs_version_first_and_a_stage_pragma() {
        let ra = "// crt\n/* block\n */\n\n#version 450\n#pragma stage vertex\nvoid main(){}\n";
        assert_eq!(detect(ra), Ok(SlangFlavor::RetroArch));
        let slang = "[shader(\"fragment\")]\nfloat4 main() : SV_Target { return 1; }\n";
        assert_eq!(detect(slang), Ok(SlangFlavor::Slang));
    }

    #[test]
    fn half_a_retroarch_file_is_an_error_with_both_rules() {
        let e = detect("#version 450\nvoid main(){}\n").unwrap_err();
        assert!(
            e.contains("#pragma stage") && e.contains("--lang slang"),
            "{e}"
        );
        let e = detect("float x;\n#pragma stage vertex\n").unwrap_err();
        assert!(e.contains("does not start with `#version`"), "{e}");
    }
}
