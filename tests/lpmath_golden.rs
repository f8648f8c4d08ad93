//! `softgpu draw --math llvmpipe` against Mesa 22.3 llvmpipe: `reference-images/lpmath/bits/`
//! holds a shader that writes the raw bits of pow/exp2/log2/sin/cos results (65,536 inputs:
//! special encodings, shader-typical and wide ranges, and a vec3 pow) as RGBA8, the picture
//! llvmpipe rendered and the TGSI Mesa compiled it to (see its `command.txt`). Every byte must
//! match, with both executors; the default (glibc-exact) math must not.

mod golden_support;

use golden_support::{load_png, mesa_dir_draw};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("reference-images/lpmath/bits")
}

/// Renders the reference's TGSI with `extra` arguments and returns the RGBA8 bytes.
fn draw(name: &str, extra: &[&str]) -> Result<Vec<u8>, String> {
    let out = std::env::temp_dir()
        .join("softgpu-lpmath")
        .join(format!("{name}.png"));
    std::fs::create_dir_all(out.parent().expect("has a parent")).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&out);
    let mut command = mesa_dir_draw(&dir(), 256, 256);
    command.args(extra).arg("--out").arg(&out);
    let output = command
        .output()
        .map_err(|e| format!("could not start softgpu: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{command:?} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(load_png(&out)?.into_raw())
}

/// Counts the pixels whose 32 bits differ.
fn mismatches(a: &[u8], b: &[u8]) -> usize {
    a.chunks(4).zip(b.chunks(4)).filter(|(x, y)| x != y).count()
}

#[test]
fn llvmpipe_math_reproduces_llvmpipe_bits() {
    let expected = load_png(&dir().join("out.png")).unwrap().into_raw();
    for exec in ["jit", "interp"] {
        let actual = draw(
            &format!("llvmpipe-{exec}"),
            &["--math", "llvmpipe", "--exec", exec],
        )
        .unwrap();
        assert_eq!(actual.len(), expected.len());
        let bad = mismatches(&actual, &expected);
        assert_eq!(
            bad, 0,
            "--exec {exec}: {bad} pixels differ from llvmpipe's bits"
        );
    }
}

#[test]
fn exact_math_differs_from_llvmpipe() {
    let expected = load_png(&dir().join("out.png")).unwrap().into_raw();
    let exact = draw("exact", &["--math", "exact"]).unwrap();
    let bad = mismatches(&exact, &expected);
    // glibc's correctly rounded results differ from gallivm's polynomials in about half the
    // lanes; a mode switch that did nothing would show 0 here.
    assert!(
        bad > 10_000,
        "only {bad} pixels differ: is --math exact glibc's?"
    );
}

#[test]
fn bad_math_value_is_an_error() {
    let err = draw("bad", &["--math", "fast"]).unwrap_err();
    assert!(err.contains("fast"), "{err}");
}
