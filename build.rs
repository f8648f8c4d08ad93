//! Sets `SOFTGPU_BUILD_ID`: a hash of every source file of the workspace's crates and of
//! `Cargo.lock`.
//!
//! The on-disk caches (the shader cache in `src/shader/cache.rs`, the kernel cache in
//! `jit/src/codegen/disk.rs`) key their entries with it, so a build whose frontends, lowering,
//! optimizer or code generator differ in any way — including pinned dependency versions such as
//! glslang and naga — never reads what another build wrote.

use std::hash::Hasher;
use std::path::{Path, PathBuf};

/// FNV-1a over 64 bits, twice with different offsets: a stable 128-bit content hash (std's
/// `DefaultHasher` may change between Rust releases; the identifier should not).
struct Fnv128 {
    a: u64,
    b: u64,
}

impl Hasher for Fnv128 {
    fn finish(&self) -> u64 {
        self.a ^ self.b.rotate_left(32)
    }

    fn write(&mut self, bytes: &[u8]) {
        const PRIME: u64 = 0x0000_0100_0000_01b3;
        for &byte in bytes {
            self.a = (self.a ^ u64::from(byte)).wrapping_mul(PRIME);
            self.b = (self.b ^ u64::from(byte.rotate_left(3))).wrapping_mul(PRIME);
        }
    }
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut files = Vec::new();
    for dir in ["src", "cache/src", "jit/src"] {
        collect(&root.join(dir), &mut files);
        println!("cargo:rerun-if-changed={dir}");
    }
    for file in [
        "Cargo.lock",
        "Cargo.toml",
        "cache/Cargo.toml",
        "jit/Cargo.toml",
    ] {
        files.push(root.join(file));
        println!("cargo:rerun-if-changed={file}");
    }
    files.sort();
    let mut hash = Fnv128 {
        a: 0xcbf2_9ce4_8422_2325,
        b: 0x6c62_272e_07bb_0142,
    };
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap_or(file);
        hash.write(relative.to_string_lossy().as_bytes());
        hash.write(&[0]);
        // A missing or unreadable file hashes as empty: the build fails on it anyway.
        hash.write(&std::fs::read(file).unwrap_or_default());
        hash.write(&[0]);
    }
    println!(
        "cargo:rustc-env=SOFTGPU_BUILD_ID={:016x}{:016x}-{}",
        hash.a,
        hash.b,
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
}
