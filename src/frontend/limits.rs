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
use std::collections::{HashMap, HashSet};

use super::FrontendError;

/// Deepest nesting of brackets, blocks, statements and operators a shader may have: 256
/// levels, far beyond hand-written or generated shaders (every shader of the RetroArch Cg and
/// slang corpora stays within it).
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

/// The most tokens one macro of a GLSL source may expand to, as [`check_macro_growth`]
/// estimates it.
pub const MAX_MACRO_TOKENS: u64 = 1 << 20;

/// One `#define` of [`check_macro_growth`]: its line, the identifiers of its body (each may
/// name a macro) and how many other tokens the body has.
struct Define<'a> {
    line: u32,
    identifiers: Vec<&'a str>,
    others: u64,
}

/// Checks that no `#define` of C-like source `text` (GLSL) expands to more than
/// [`MAX_MACRO_TOKENS`] tokens, nor through more than [`MAX_NESTING_DEPTH`] macros inside each
/// other, before a library preprocessor (glslang's, which has no such bound) expands them: a
/// macro doubling another thirty times would otherwise expand to a billion tokens. The estimate
/// expands every macro named in a body by its largest definition (conditions and `#undef`
/// ignored, a macro inside its own expansion counted as one token, as the C rule leaves it);
/// the arguments of function-like macros are not followed. `line_of` turns a 1-based line of
/// `text` into the error.
pub fn check_macro_growth(
    text: &str,
    line_of: impl Fn(u32, String) -> FrontendError,
) -> Result<(), FrontendError> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut defines: HashMap<&str, Vec<Define>> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let rest = rest.trim_start();
        let name_end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        let (name, mut body) = rest.split_at(name_end);
        if name.is_empty() {
            continue;
        }
        if let Some(params) = body.strip_prefix('(') {
            body = params.split_once(')').map_or("", |(_, b)| b);
        }
        let mut identifiers = Vec::new();
        let mut others = 0u64;
        let mut chars = body.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if is_ident(c) {
                let mut end = at + c.len_utf8();
                while let Some(&(next, d)) = chars.peek() {
                    if !is_ident(d) {
                        break;
                    }
                    end = next + d.len_utf8();
                    chars.next();
                }
                identifiers.push(&body[at..end]);
            } else if !c.is_whitespace() {
                others += 1;
            }
        }
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let entry = defines.entry(name).or_default();
        if entry.is_empty() {
            order.push(name);
        }
        entry.push(Define {
            line,
            identifiers,
            others,
        });
    }

    /// A macro whose size is being computed: which definition and identifier is next, the
    /// size of the definition so far and the largest definition's.
    struct Frame<'a> {
        name: &'a str,
        define: usize,
        identifier: usize,
        size: u64,
        largest: u64,
        /// The most macros expanded inside each other below this one.
        deepest: usize,
    }
    // Each macro's size and the depth of macros its expansion goes through.
    let mut sizes: HashMap<&str, (u64, usize)> = HashMap::new();
    let mut on_path: HashSet<&str> = HashSet::new();
    for root in order {
        if sizes.contains_key(root) {
            continue;
        }
        let start = |name| Frame {
            name,
            define: 0,
            identifier: 0,
            size: defines[name][0].others,
            largest: 0,
            deepest: 0,
        };
        let mut path = vec![start(root)];
        on_path.insert(root);
        while !path.is_empty() {
            let depth = path.len();
            let Some(frame) = path.last_mut() else {
                break;
            };
            let defs = &defines[frame.name];
            let Some(def) = defs.get(frame.define) else {
                let (name, size, depth) = (frame.name, frame.largest, frame.deepest + 1);
                if depth > MAX_NESTING_DEPTH {
                    return Err(line_of(
                        defs[0].line,
                        format!("macro `{name}` expands through {}", nesting_message()),
                    ));
                }
                sizes.insert(name, (size, depth));
                on_path.remove(name);
                path.pop();
                if let Some(caller) = path.last_mut() {
                    caller.size = caller.size.saturating_add(size);
                    caller.deepest = caller.deepest.max(depth);
                    caller.identifier += 1;
                }
                continue;
            };
            let Some(&id) = def.identifiers.get(frame.identifier) else {
                frame.largest = frame.largest.max(frame.size);
                if frame.largest > MAX_MACRO_TOKENS {
                    return Err(line_of(
                        def.line,
                        format!(
                            "macro `{}` expands to more than {MAX_MACRO_TOKENS} tokens \
                             (see docs/limits.md)",
                            frame.name
                        ),
                    ));
                }
                frame.define += 1;
                frame.identifier = 0;
                frame.size = defs.get(frame.define).map_or(0, |d| d.others);
                continue;
            };
            if let Some(&(size, below)) = sizes.get(id) {
                frame.size = frame.size.saturating_add(size);
                frame.deepest = frame.deepest.max(below);
                frame.identifier += 1;
            } else if defines.contains_key(id) && !on_path.contains(id) {
                if depth >= MAX_NESTING_DEPTH {
                    return Err(line_of(
                        def.line,
                        format!(
                            "macro `{}` expands through {}",
                            frame.name,
                            nesting_message()
                        ),
                    ));
                }
                on_path.insert(id);
                path.push(start(id));
            } else {
                frame.size = frame.size.saturating_add(1);
                frame.identifier += 1;
            }
        }
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
    fn a_macro_doubling_thirty_times_is_refused_at_its_define() {
        let mut text = String::from("#version 450\n#define A0 x\n");
        for i in 1..=30 {
            text.push_str(&format!("#define A{i} A{} + A{}\n", i - 1, i - 1));
        }
        let e = check_macro_growth(&text, at).unwrap_err();
        assert!(e.message.contains("macro `A"), "{e}");
        assert!(e.line > 2 && e.line <= 32, "{e}");
        // Twelve doublings (8191 tokens) are an ordinary macro.
        let small: String = text.lines().take(14).map(|l| format!("{l}\n")).collect();
        assert!(check_macro_growth(&small, at).is_ok());
    }

    #[test]
    fn macros_that_name_each_other_count_once() {
        let text = "#define A B B\n#define B A A\n#define F(x) F(x) x\n";
        assert!(check_macro_growth(text, at).is_ok());
        let chain: Vec<String> = (1..=MAX_NESTING_DEPTH + 1)
            .map(|i| format!("#define M{i} M{}\n", i - 1))
            .collect();
        let e = check_macro_growth(&chain.concat(), at).unwrap_err();
        assert!(e.message.contains("256 levels"), "{e}");
        let reversed: String = chain.iter().rev().cloned().collect();
        let e = check_macro_growth(&reversed, at).unwrap_err();
        assert!(e.message.contains("256 levels"), "{e}");
        assert!(check_macro_growth(&chain[1..].concat(), at).is_ok());
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
