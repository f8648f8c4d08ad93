//! Golden tests against the real driver: every directory under `reference-images/draw/` holds a
//! fragment shader that Mesa 22.3 softpipe rendered (`out.png`) together with the TGSI softpipe
//! executed and the inputs it was given (see `reference-images/draw/README.md`). Each test runs
//! the `softgpu draw` command on the same TGSI and inputs and compares the pictures per channel.
//!
//! A channel may differ by at most 1/255 (the last bit of a float → UNORM8 conversion). Pixels
//! beyond that are allowed only up to the count in the reference's `budget.txt` (absent = 0),
//! whose first token is the count and whose remaining text says why the pixels may differ.

mod golden_support;

use golden_support::load_png;
use std::path::{Path, PathBuf};

/// Largest per-channel difference (in 1/255 steps) that counts as equal.
const TOLERANCE: u8 = 1;

fn refs_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("reference-images/draw")
}

/// The pixel budget of a reference: `budget.txt` is `COUNT reason…` (absent means 0).
fn budget(dir: &Path) -> Result<usize, String> {
    let path = dir.join("budget.txt");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let line = text.lines().next().unwrap_or("").trim();
    let (count, reason) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let count: usize = count.parse().map_err(|_| {
        format!(
            "{}: expected `COUNT reason`, found {line:?}",
            path.display()
        )
    })?;
    if reason.trim().is_empty() {
        return Err(format!(
            "{}: a budget must state its reason after the count",
            path.display()
        ));
    }
    Ok(count)
}

/// The texture filter the reference was rendered with, read from the recorded command line.
fn filter(dir: &Path) -> Result<&'static str, String> {
    let path = dir.join("command.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let command = text
        .lines()
        .find(|l| l.contains("mesa_run.py"))
        .ok_or_else(|| format!("{}: no mesa_run.py command line", path.display()))?;
    let words: Vec<&str> = command.split_whitespace().collect();
    match words.iter().position(|w| *w == "--filter") {
        None => Ok("linear"),
        Some(i) => match words.get(i + 1) {
            Some(&"linear") => Ok("linear"),
            Some(&"nearest") => Ok("nearest"),
            other => Err(format!(
                "{}: expected --filter linear|nearest, found {other:?}",
                path.display()
            )),
        },
    }
}

/// Where failing runs leave their pictures (kept after the test ends, for inspection).
fn artifact_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join("softgpu-golden-mesa").join(name)
}

/// Renders reference `name` with softgpu and compares it with softpipe's picture.
fn check(name: &str) {
    if let Err(message) = run_check(name) {
        panic!("golden reference `{name}` failed:\n{message}");
    }
}

fn run_check(name: &str) -> Result<(), String> {
    let dir = refs_root().join(name);
    let expected = load_png(&dir.join("out.png"))?;
    let (width, height) = expected.dimensions();
    let filter = filter(&dir)?;
    let allowed = budget(&dir)?;

    let artifacts = artifact_dir(name);
    std::fs::create_dir_all(&artifacts).map_err(|e| format!("{}: {e}", artifacts.display()))?;
    let actual_path = artifacts.join("actual.png");
    let _ = std::fs::remove_file(&actual_path);

    let draw_command = || {
        let mut command = golden_support::mesa_dir_draw(&dir, width, height);
        command.args(["--filter", filter, "--wrap", "repeat"]);
        command
    };
    let mut command = draw_command();
    command.arg("--out").arg(&actual_path);
    let shown = format!("{command:?}");
    let output = command
        .output()
        .map_err(|e| format!("could not start softgpu: {e}\n{shown}"))?;
    if !output.status.success() {
        return Err(format!(
            "softgpu exited with {}\ncommand: {shown}\nstderr:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    if !actual_path.is_file() {
        return Err(format!(
            "softgpu exited successfully but wrote no picture at {}\ncommand: {shown}\nstdout:\n{}",
            actual_path.display(),
            String::from_utf8_lossy(&output.stdout)
        ));
    }
    golden_support::compare_pictures(
        &dir.join("out.png"),
        &expected,
        &actual_path,
        &artifacts,
        &shown,
        TOLERANCE,
        Some(allowed),
    )?;
    // The JIT runs the program after the IR optimizations (unrolling, folding, copy
    // propagation), the interpreter runs it as written: their pictures must be the same bytes.
    let interp_path = artifacts.join("interp.png");
    let output = draw_command()
        .args(["--exec", "interp", "--out"])
        .arg(&interp_path)
        .output()
        .map_err(|e| {
            format!(
                "could not start softgpu: {e}
{shown}"
            )
        })?;
    if !output.status.success() {
        return Err(format!(
            "softgpu --exec interp exited with {}
stderr:
{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let jit = load_png(&actual_path)?;
    let interp = load_png(&interp_path)?;
    if jit.as_raw() != interp.as_raw() {
        return Err(format!(
            "--exec jit ({}) and --exec interp ({}) differ",
            actual_path.display(),
            interp_path.display()
        ));
    }
    Ok(())
}

macro_rules! golden {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name));
            }
        )*

        /// Every reference directory has a test above, and every test has its directory.
        #[test]
        fn every_reference_is_tested() {
            let mut listed = vec![$(stringify!($name)),*];
            listed.sort_unstable();
            let mut found: Vec<String> = std::fs::read_dir(refs_root())
                .expect("reference-images/draw must exist")
                .filter_map(|entry| entry.ok())
                .filter(|entry| entry.path().is_dir())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect();
            found.sort_unstable();
            assert_eq!(found, listed, "reference directories vs. golden! list in tests/golden_mesa.rs");
            for name in &found {
                let dir = refs_root().join(name);
                for file in ["fs.tgsi", "vs.tgsi", "vertices.txt", "consts.txt", "out.png", "tex0.png", "command.txt"] {
                    assert!(dir.join(file).is_file(), "{name}: missing {file}");
                }
                assert!(dir.join(format!("{name}.frag")).is_file(), "{name}: missing {name}.frag");
                budget(&dir).unwrap_or_else(|e| panic!("{e}"));
                filter(&dir).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    };
}

golden!(
    bit_ops,
    branch_nested,
    derivative_control,
    derivatives,
    discard_ring,
    fragcoord,
    functions,
    indirect_arrays,
    int_arith,
    loop_break_continue,
    math_common,
    math_transcendental,
    packing,
    switch_case,
    tex_fetch_size_offset,
    tex_grad_proj,
    tex_linear,
    tex_minify,
    tex_nearest,
    vector_geometry,
);
