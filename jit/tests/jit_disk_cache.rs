//! Kernels kept on disk (`codegen::disk`): a kernel read back from the cache computes the same
//! bits as the interpreter and as the kernel compiled in this process, for every program of the
//! test suite; a corrupt entry or one of another build is never used. A test binary of its own:
//! the cache setting is process-wide.

use softgpu_jit::codegen::{disk, JitShader};
use softgpu_jit::exec::QuadShader;
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;

mod splitmix;
use splitmix::Rng;

mod quadinputs;
use quadinputs::*;

const BUDGET: u64 = 1 << 16;

#[test]
fn kernels_read_from_disk_match_the_interpreter() {
    let dir = std::env::temp_dir().join(format!("softgpu-kernels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut rng = Rng(7);
    let mut loaded = 0;
    let files = tgsi_files();
    for (index, f) in files.iter().enumerate() {
        let src = std::fs::read_to_string(f).expect("readable corpus file");
        let program = parse_program(&src).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let Ok(interp) = Interpreter::new(&program) else {
            continue;
        };
        let what = f.display().to_string();
        disk::set_kernel_cache(Some(dir.clone()), "test build");
        // Compiled for speed here (and stored), then compiled again: read from disk.
        let Ok(compiled) = JitShader::compile_optimized(&program) else {
            continue;
        };
        let read = JitShader::compile_uncached(&program).expect("compiles");
        assert!(!compiled.loaded_from_disk(), "{what}");
        if !read.loaded_from_disk() {
            continue;
        }
        loaded += 1;
        // Another build's entries are not read (a build of its own per program: the suite
        // holds some programs twice), nor are entries of no cache.
        disk::set_kernel_cache(Some(dir.clone()), &format!("another build {index}"));
        assert!(!JitShader::compile_uncached(&program)
            .expect("compiles")
            .loaded_from_disk());
        disk::set_kernel_cache(None, "test build");
        assert!(!JitShader::compile_uncached(&program)
            .expect("compiles")
            .loaded_from_disk());
        let interp = interp.with_budget(BUDGET);
        let shaders = [compiled.with_budget(BUDGET), read.with_budget(BUDGET)];
        let sig = interp.signature();
        for trial in 0..48 {
            let inp = random_inputs(
                &mut rng,
                sig.num_inputs.max(3),
                sig.num_system_values,
                sig.num_outputs.max(2),
            );
            let (ri, oi) = run(&interp, &inp);
            if ri.is_err() {
                continue;
            }
            for shader in &shaders {
                let (rj, oj) = run(shader, &inp);
                assert!(
                    ri == rj && oi == oj,
                    "{what}, trial {trial}: {ri:?} vs {rj:?}"
                );
            }
        }
    }
    assert!(
        loaded >= 40,
        "only {loaded} of {} programs were read back",
        files.len()
    );

    // Damaged entries are compiled again (and rewritten), never run.
    disk::set_kernel_cache(Some(dir.clone()), "test build");
    let program = parse_program(&std::fs::read_to_string(&files[0]).expect("readable corpus file"))
        .expect("parses");
    let stored = kernel_entries(&dir);
    assert!(!stored.is_empty());
    // 0: truncated; 1..: a byte of the length, the identity, the code and the digest changed.
    for damage in [0usize, 9, 40, 1 << 20, 1] {
        for path in &stored {
            let mut bytes = std::fs::read(path).expect("entry");
            let len = bytes.len();
            match damage {
                0 => bytes.truncate(len / 2),
                1 => bytes[len - 1] ^= 0x20,
                _ => bytes[damage.min(len - 40)] ^= 0x20,
            }
            std::fs::write(path, bytes).expect("write");
        }
        let again = JitShader::compile_uncached(&program).expect("compiles");
        assert!(!again.loaded_from_disk(), "damage at {damage}");
        drop(JitShader::compile_optimized(&program).expect("compiles"));
        assert!(JitShader::compile_uncached(&program)
            .expect("compiles")
            .loaded_from_disk());
    }
    disk::set_kernel_cache(None, "");
    let _ = std::fs::remove_dir_all(&dir);
}
