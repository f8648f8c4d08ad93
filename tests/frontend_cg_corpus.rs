//! The real Cg corpus (`libretro/common-shaders`, not committed): compile and lower every `.cg`
//! file and print the counts and the most common failure reasons.
//!
//! `CG_SHADERS_DIR=/path/to/common-shaders cargo test --release --test frontend_cg_corpus -- --ignored --nocapture`

use std::collections::BTreeMap;
use std::path::Path;

mod files_support;
use files_support::files_with_extension;

use softgpu::frontend::cg::compile_cg;

/// The failure message with numbers and names blanked, to group similar failures.
fn reason(msg: &str) -> String {
    let after = msg.splitn(4, ':').nth(3).unwrap_or(msg);
    let mut s = String::new();
    let mut in_tick = false;
    for c in after.chars() {
        if c == '`' {
            in_tick = !in_tick;
            s.push_str(if in_tick { "`…" } else { "`" });
            continue;
        }
        if !in_tick {
            s.push(if c.is_ascii_digit() { '#' } else { c });
        }
    }
    s.chars().take(110).collect()
}

#[test]
#[ignore = "needs CG_SHADERS_DIR (libretro/common-shaders)"]
fn cg_corpus() {
    let dir = std::env::var("CG_SHADERS_DIR").expect("set CG_SHADERS_DIR");
    let files = files_with_extension(Path::new(&dir), "cg");
    let (mut compiled, mut lowered) = (0, 0);
    let mut reasons: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let verbose = std::env::var("CG_VERBOSE").is_ok();
    for f in &files {
        let r = std::panic::catch_unwind(|| compile_cg(f));
        let r = match r {
            Ok(r) => r,
            Err(_) => {
                let e = reasons
                    .entry("PANIC".into())
                    .or_insert((0, f.display().to_string()));
                e.0 += 1;
                continue;
            }
        };
        match r {
            Ok(shader) => {
                compiled += 1;
                match shader.lower() {
                    Ok(_) => lowered += 1,
                    Err(e) => {
                        if verbose {
                            println!("LOWER {e}");
                        }
                        let k = format!("lower: {}", reason(&e.to_string()));
                        reasons.entry(k).or_insert((0, e.to_string())).0 += 1;
                    }
                }
            }
            Err(e) => {
                if verbose {
                    println!("FAIL {e}");
                }
                let k = reason(&e.to_string());
                reasons.entry(k).or_insert((0, e.to_string())).0 += 1;
            }
        }
    }
    println!(
        "{} .cg files: {compiled} compile (both stages), {lowered} lower to TGSI",
        files.len()
    );
    let mut v: Vec<_> = reasons.into_iter().collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1 .0));
    for (k, (n, example)) in v.iter().take(40) {
        println!("{n:5}  {k}\n       e.g. {example}");
    }
    assert!(compiled > 0, "nothing compiled");
}
