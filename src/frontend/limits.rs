//! The limits every frontend keeps so that a malformed shader gives one error naming its file
//! and line instead of overflowing the stack, hanging or exhausting memory, and the thread the
//! frontends' recursive work runs on.
//!
//! Parsers, checkers, builders, the lowering and glslang all recurse over the nesting of the
//! source, so the nesting is bounded where the text is read ([`MAX_NESTING_DEPTH`], checked by
//! the Cg parser itself and, for the languages whose parser is a library, by [`check_nesting`]
//! before the text is handed over), and the recursive work runs on a thread with a stack of
//! [`FRONTEND_STACK_BYTES`] ([`on_frontend_stack`]), which the bounded nesting cannot exhaust
//! whatever thread (a rayon worker, a test thread) asked for the compile.
//!
//! `docs/limits.md` lists every limit, the error it gives and how to raise it.

use std::cell::Cell;

use super::FrontendError;

/// Deepest nesting of brackets, blocks, statements and operators a shader may have: 256
/// levels, far beyond hand-written or generated shaders (the deepest in the RetroArch corpora
/// is below 40).
pub const MAX_NESTING_DEPTH: usize = 256;

/// Deepest chain of calls (a function calling a function …) a shader may have: every call is
/// inlined or compiled while its caller is, recursively.
pub const MAX_CALL_DEPTH: usize = 64;

/// Stack of the thread the frontends run on. The frames of the deepest path the limits allow
/// (debug builds, [`MAX_NESTING_DEPTH`] levels through the parser, checker, builder, naga's
/// validator and the lowering) need a few MiB; the stack is only reserved address space until
/// it is touched.
pub const FRONTEND_STACK_BYTES: usize = 64 << 20;

/// The most `#include`s (counting every repetition of the same file) one shader may expand.
pub const MAX_INCLUDES: usize = 1024;

/// The most bytes a preprocessor may produce for one shader (includes and macros expanded).
pub const MAX_PREPROCESSED_BYTES: usize = 32 << 20;

/// The most macro expansions the Cg preprocessor may perform for one shader.
pub const MAX_MACRO_EXPANSIONS: usize = 1 << 20;

thread_local! {
    /// Set on the thread [`on_frontend_stack`] started, so nested calls run in place.
    static ON_FRONTEND_STACK: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work` on a thread with a [`FRONTEND_STACK_BYTES`] stack (in place when already on
/// one) and returns its result. A panic in `work` is resumed on the calling thread.
pub fn on_frontend_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    if ON_FRONTEND_STACK.with(Cell::get) {
        return work();
    }
    // The closure stays reachable from here so that, should no thread start (the process is
    // out of threads or address space), the work still runs on the caller's stack.
    let slot = std::sync::Mutex::new(Some(work));
    let take = || slot.lock().ok().and_then(|mut w| w.take());
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("softgpu-frontend".into())
            .stack_size(FRONTEND_STACK_BYTES)
            .spawn_scoped(scope, || {
                ON_FRONTEND_STACK.with(|on| on.set(true));
                take().map(|work| work())
            });
        let result = match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        };
        match result {
            Some(result) => result,
            None => take().expect("the work runs once: on the thread or, failing that, here")(),
        }
    })
}

/// Checks that the brackets (`(`, `[`, `{`) of C-like source `text` (GLSL, WGSL) nest at most
/// [`MAX_NESTING_DEPTH`] deep, skipping `//` and `/* */` comments; `line_of` turns a 1-based
/// line of `text` into the error (the file and line a user sees). Run before a library parser
/// that recurses per level gets the text.
pub fn check_nesting(
    text: &str,
    line_of: impl Fn(u32, String) -> FrontendError,
) -> Result<(), FrontendError> {
    let bytes = text.as_bytes();
    let (mut depth, mut line, mut i) = (0usize, 1u32, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
                continue;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING_DEPTH {
                    return Err(line_of(line, nesting_message()));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The message of every nesting-limit error.
pub fn nesting_message() -> String {
    format!(
        "nested more than {MAX_NESTING_DEPTH} levels deep (brackets, blocks, statements or \
         operators; see docs/limits.md)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, message: String) -> FrontendError {
        FrontendError::new("t.glsl", line, 0, message)
    }

    #[test]
    fn nesting_at_the_limit_passes_and_one_more_fails_on_its_line() {
        let ok = format!(
            "{}{}",
            "(".repeat(MAX_NESTING_DEPTH),
            ")".repeat(MAX_NESTING_DEPTH)
        );
        assert!(check_nesting(&ok, at).is_ok());
        let deep = format!("x\n// ((((\n{}", "[".repeat(MAX_NESTING_DEPTH + 1));
        let e = check_nesting(&deep, at).unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("256 levels"), "{e}");
    }

    #[test]
    fn brackets_in_comments_do_not_count() {
        let text = format!("/* {} */ x", "{".repeat(MAX_NESTING_DEPTH * 2));
        assert!(check_nesting(&text, at).is_ok());
    }

    #[test]
    fn work_runs_on_a_big_stack_once() {
        let outer = on_frontend_stack(|| {
            let inner = on_frontend_stack(|| std::thread::current().name().map(str::to_string));
            (std::thread::current().name().map(str::to_string), inner)
        });
        assert_eq!(outer.0.as_deref(), Some("softgpu-frontend"));
        assert_eq!(outer.0, outer.1);
    }
}
