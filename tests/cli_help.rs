//! `softgpu --help` and every subcommand's `-h`/`--help`: they succeed and name the inputs
//! softgpu reads today (TGSI, WGSL, RetroArch Vulkan GLSL `.slang`, Cg; `.slangp` and `.cgp`
//! presets).

use std::process::Command;

/// The help `args` print; a failure to print it fails the test.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(args)
        .output()
        .expect("run softgpu");
    assert!(
        out.status.success(),
        "softgpu {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

#[test]
fn the_about_text_names_every_language() {
    let text = help(&["--help"]);
    for word in ["TGSI", "WGSL", "Vulkan GLSL", "Cg", ".slangp", ".cgp"] {
        assert!(text.contains(word), "`{word}` missing from:\n{text}");
    }
}

#[test]
fn every_subcommand_describes_its_inputs() {
    let cases: [(&str, &[&str]); 5] = [
        ("draw", &["TGSI", ".wgsl", ".slang", "--vertices"]),
        ("compile", &["TGSI", "WGSL", ".slang", "Cg", "--emit"]),
        ("render", &[".slangp", ".cgp", "--preset"]),
        ("compare", &["--tolerance", "--max-pixels"]),
        ("test", &["--shard", "--report"]),
    ];
    for (command, words) in cases {
        for flag in ["-h", "--help"] {
            let text = help(&[command, flag]);
            for word in words {
                assert!(
                    text.contains(word),
                    "`{word}` missing from softgpu {command} {flag}:\n{text}"
                );
            }
        }
    }
}
