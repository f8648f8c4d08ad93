//! The floating-point environment of kernels: x86 MXCSR with DAZ (denormals are zero) set, so
//! SSE arithmetic reads denormal inputs as zero exactly as `ops::flush` does (results are still
//! flushed in software: hardware FTZ detects tininess differently). Rust code called from a
//! kernel runs with the caller's environment again.

const DAZ: u32 = 1 << 6;

#[cfg(not(target_arch = "x86_64"))]
fn get() -> u32 {
    0
}

#[cfg(not(target_arch = "x86_64"))]
fn set(_: u32) {}

#[cfg(target_arch = "x86_64")]
fn get() -> u32 {
    let mut x = 0u32;
    // SAFETY: `stmxcsr` writes the 4-byte MXCSR to the address of `x`, valid and writable.
    unsafe {
        core::arch::asm!("stmxcsr [{0}]", in(reg) &mut x as *mut u32, options(nostack, preserves_flags));
    }
    x
}

#[cfg(target_arch = "x86_64")]
fn set(x: u32) {
    // SAFETY: `ldmxcsr` reads 4 bytes from the address of `x`. The values loaded differ from
    // the thread's own only in DAZ, which changes how SSE instructions read denormal inputs
    // and nothing else (no exception is unmasked); every change is undone by `Env::drop`.
    unsafe {
        core::arch::asm!("ldmxcsr [{0}]", in(reg) &x as *const u32, options(nostack, preserves_flags));
    }
}

/// Restores the MXCSR value it saved when dropped.
pub(super) struct Env {
    saved: u32,
}

impl Env {
    /// Sets DAZ for running a kernel.
    pub(super) fn kernel() -> Env {
        let saved = get();
        set(saved | DAZ);
        Env { saved }
    }

    /// Clears DAZ for Rust code called from a kernel.
    pub(super) fn rust() -> Env {
        let saved = get();
        set(saved & !DAZ);
        Env { saved }
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        set(self.saved);
    }
}
