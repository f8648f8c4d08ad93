//! Large texture buffers kept for reuse within the process.
//!
//! A filter chain makes every pass's output texture anew each frame, and with it the decoded
//! copy the JIT's inline sampler reads (16 bytes per texel, every level) and its padded level 0:
//! at 800x600 three buffers of 2–10 MB per pass, freed a frame later. Returned to the system and
//! asked for again, their pages are faulted in and zeroed by the kernel on every frame (a tenth
//! of Mega Bezel's time: `clear_page_erms`, page faults, `memset`). Kept here, a buffer of the
//! same size is zeroed in place instead, or handed out as it is when its user writes every byte.

use std::collections::HashMap;
use std::sync::Mutex;

/// Buffers smaller than this go back to the allocator (their pages stay with it anyway).
const MIN_POOLED_BYTES: usize = 256 << 10;

/// Bytes the pool keeps at most; buffers returned beyond it are freed.
const MAX_POOLED_BYTES: usize = 512 << 20;

/// Free buffers by length, and their total size.
struct Pool {
    free: HashMap<usize, Vec<Vec<u8>>>,
    bytes: usize,
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

fn take(len: usize) -> Option<Vec<u8>> {
    if len < MIN_POOLED_BYTES {
        return None;
    }
    let mut guard = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let pool = guard.as_mut()?;
    let buffer = pool.free.get_mut(&len)?.pop()?;
    pool.bytes -= buffer.len();
    Some(buffer)
}

/// A zero-filled buffer of `len` bytes.
pub(super) fn zeroed(len: usize) -> Vec<u8> {
    match take(len) {
        Some(mut buffer) => {
            buffer.fill(0);
            buffer
        }
        None => vec![0u8; len],
    }
}

/// A buffer of `len` bytes with unspecified (but initialized) contents, for a caller that
/// overwrites every byte.
pub(super) fn overwritten(len: usize) -> Vec<u8> {
    take(len).unwrap_or_else(|| vec![0u8; len])
}

/// Gives `buffer` back for reuse (or frees it when it is small or the pool is full). Only the
/// length is reused: a buffer with more capacity (a caller's own vector) is freed rather than
/// copied into one without.
pub(super) fn recycle(buffer: Vec<u8>) {
    let len = buffer.len();
    if len < MIN_POOLED_BYTES || buffer.capacity() != len {
        return;
    }
    let mut guard = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let pool = guard.get_or_insert_with(|| Pool {
        free: HashMap::new(),
        bytes: 0,
    });
    if pool.bytes + len > MAX_POOLED_BYTES {
        return;
    }
    pool.bytes += len;
    pool.free.entry(len).or_default().push(buffer);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recycled_buffer_comes_back_zeroed_or_as_it_was() {
        // A length no other test uses, so that parallel tests do not take it.
        let len = MIN_POOLED_BYTES + 4099;
        let mut b = zeroed(len);
        b.iter_mut().for_each(|x| *x = 0xAB);
        let at = b.as_ptr() as usize;
        recycle(b);
        let z = zeroed(len);
        assert_eq!(
            z.as_ptr() as usize,
            at,
            "the same buffer is handed out again"
        );
        assert!(z.iter().all(|&x| x == 0));
        recycle(z);
        let again = overwritten(len);
        assert_eq!(again.as_ptr() as usize, at);
        // Small buffers are not kept.
        let small = vec![1u8; 100];
        recycle(small);
        assert!(take(100).is_none());
    }
}
