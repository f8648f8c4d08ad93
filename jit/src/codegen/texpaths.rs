//! The general inline texture paths: one function per sampling opcode of `emit::MIP_OPS`
//! (mip levels with their per-lane level of detail, min/mag switches, per-axis and other wraps),
//! compiled once per process and calling convention on a thread of their own. Inline texture
//! sites (`emit::sample`) whose descriptor asks for the general path call it through a slot of
//! the address table (`abi::Address::general_path_slot`), which holds the sampler call until
//! the path is compiled.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

use super::abi::CtxOffsets;
use super::emit;
use super::isa::process_functions;
use super::shims::Shims;
use super::tiers::perf_map_line;

/// The general inline texture paths (`emit::MIP_OPS`) of one calling convention. Each is
/// compiled on a thread of its own once a kernel with a site that may call it has been
/// compiled (~4 ms each with the optimizing register allocator; compiling all five before the
/// first kernel that could call one would add 20 ms to the start of every process that samples
/// a texture). Kernels load the entry from the path's slot at each call: until the path
/// is compiled (or when its compilation failed) the slot holds the sampler call, which takes
/// the same arguments and gives the same bits, only slower.
pub(super) struct GeneralPaths {
    /// The [`Shims::rust`] argument the paths are compiled with (their calling convention).
    preserve_all: bool,
    /// Entry addresses by `emit::MIP_OPS`.
    slots: [AtomicUsize; 5],
    started: [AtomicBool; 5],
}

/// Compilations of general paths under way, and the condition [`wait_for_texture_paths`]
/// waits on.
static PATHS_IN_FLIGHT: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

impl GeneralPaths {
    /// The paths calling into Rust as [`Shims::rust`]`(preserve_all)` says.
    pub(super) fn of(preserve_all: bool) -> &'static GeneralPaths {
        static PATHS: [OnceLock<GeneralPaths>; 2] = [OnceLock::new(), OnceLock::new()];
        PATHS[usize::from(preserve_all)].get_or_init(|| {
            let sampler = Shims::rust(preserve_all).tex as usize;
            GeneralPaths {
                preserve_all,
                slots: std::array::from_fn(|_| AtomicUsize::new(sampler)),
                started: std::array::from_fn(|_| AtomicBool::new(false)),
            }
        })
    }

    /// The address of path `k`'s slot, which compiled code loads its entry from.
    pub(super) fn slot(&self, k: usize) -> usize {
        &self.slots[k] as *const AtomicUsize as usize
    }

    /// Starts compiling the paths of `ops` (by `emit::MIP_OPS`) not started before.
    pub(super) fn start(&'static self, ops: [bool; 5]) {
        for (k, _) in ops.iter().enumerate().filter(|(_, &used)| used) {
            if self.started[k].swap(true, Ordering::AcqRel) {
                continue;
            }
            *PATHS_IN_FLIGHT.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            let work = move || {
                self.compile(k);
                path_settled();
            };
            if std::thread::Builder::new()
                .name("softgpu-jit-texture".into())
                .spawn(work)
                .is_err()
            {
                // Without a thread the slot keeps the sampler call.
                path_settled();
            }
        }
    }

    /// Compiles path `k` and publishes its entry in its slot.
    fn compile(&self, k: usize) {
        let op = emit::MIP_OPS[k];
        let Some([addr]) = process_functions::<1>(|module| {
            emit::compile_mip_fns(
                module,
                CtxOffsets::get(),
                Shims::rust(self.preserve_all),
                &[op],
            )
        }) else {
            return;
        };
        if std::env::var_os("SOFTGPU_PERF_MAP").is_some() {
            // The size is not known here; 16 KB covers the function.
            let conv = if self.preserve_all {
                "_preserve_all"
            } else {
                ""
            };
            perf_map_line(&format!("{addr:x} 4000 softgpu_tex_general_{op:?}{conv}"));
        }
        // Release: the code is finalized (written and made executable) before a kernel on
        // another thread can load its address, as with a background-recompiled kernel.
        self.slots[k].store(addr, Ordering::Release);
    }
}

/// Counts a general path's compilation as finished (compiled, failed or never started).
fn path_settled() {
    let (count, done) = &PATHS_IN_FLIGHT;
    *count.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
    done.notify_all();
}

/// Blocks until every general texture path whose compilation has started is compiled (or
/// failed): from then on, kernels compiled so far call those paths instead of the sampler.
/// For tests that count sampler calls and for measurements of steady-state speed.
pub fn wait_for_texture_paths() {
    let (count, done) = &PATHS_IN_FLIGHT;
    let mut n = count.lock().unwrap_or_else(|e| e.into_inner());
    while *n > 0 {
        n = done.wait(n).unwrap_or_else(|e| e.into_inner());
    }
}
