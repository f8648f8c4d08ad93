//! The in-memory kernel cache: [`JitShader::compile`] hashes the program and returns the already
//! compiled kernel (shared through an `Arc`) when an equal program was compiled before and is
//! still alive — in use, or among the `RECENT_KERNELS` last compiled or looked up. Entries are
//! weak: a kernel is freed with its last shader once it has left the recent list. The on-disk
//! cache of a later process is `disk`'s.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use super::tiers::Kernel;
use super::JitShader;
use crate::ir::MathMode;
use crate::ir::Program;

/// Weak references to the live kernels by key hash ([`program_hash`]; kernels of equal hashes
/// are told apart by comparing programs).
type Cache = Mutex<HashMap<u64, Vec<Weak<Kernel>>>>;

/// How many of the most recently compiled or looked-up kernels stay alive after their last
/// shader is dropped, so that drawing the same program again (a golden suite, a frame loop
/// through `draw::run_with`) finds it compiled, as a driver's shader cache would.
const RECENT_KERNELS: usize = 16;

/// Makes `kernel` the most recently used of the [`RECENT_KERNELS`] kept alive.
pub(super) fn keep_recent(kernel: &Arc<Kernel>) {
    static RECENT: Mutex<std::collections::VecDeque<Arc<Kernel>>> =
        Mutex::new(std::collections::VecDeque::new());
    let mut recent = RECENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = recent.iter().position(|k| Arc::ptr_eq(k, kernel)) {
        recent.remove(i);
    }
    recent.push_front(kernel.clone());
    recent.truncate(RECENT_KERNELS);
}

/// The process's kernel cache.
fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Enters `kernel` under its key hash `hash`, dropping entries whose kernels are gone from its
/// list (and, past 256 hashes, from every list).
pub(super) fn insert(hash: u64, kernel: &Arc<Kernel>) {
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    let list = cache.entry(hash).or_default();
    list.retain(|w| w.strong_count() > 0);
    list.push(Arc::downgrade(kernel));
    if cache.len() > 256 {
        cache.retain(|_, l| {
            l.retain(|w| w.strong_count() > 0);
            !l.is_empty()
        });
    }
}

/// The kernel cache's key hash. Fx rather than SipHash: a cache hit hashes the whole program
/// (a lookup of a 1,000-instruction program spent most of its time in SipHash), and equal
/// hashes are confirmed by comparing programs.
pub(super) fn program_hash(program: &Program, math: MathMode) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    program.hash(&mut h);
    math.hash(&mut h);
    h.finish()
}

impl JitShader {
    /// The cached shader for `program` in `math` (whose key hash is `hash`), marked recently used.
    pub(super) fn cached_with(hash: u64, program: &Program, math: MathMode) -> Option<JitShader> {
        let kernel = Self::lookup(hash, program, math)?;
        keep_recent(&kernel);
        Some(Self::of(kernel))
    }

    /// The live kernel of `program` in `math`, if the cache holds one under `hash`.
    fn lookup(hash: u64, program: &Program, math: MathMode) -> Option<Arc<Kernel>> {
        let cache = cache().lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(&hash)?
            .iter()
            .filter_map(Weak::upgrade)
            .find(|k| k.math == math && k.program == *program)
    }
}
