//! The Cg preprocessor: a C preprocessor (`#include`, object- and function-like `#define` with
//! `#` and `##`, `#undef`, `#if/#ifdef/#ifndef/#elif/#else/#endif` with `defined`, `#error`)
//! plus RetroArch's `#pragma parameter`, producing one text with a line map back to the
//! original files.
//!
//! `PARAMETER_UNIFORM` is predefined, as RetroArch does for Cg, so the `#ifdef
//! PARAMETER_UNIFORM` pattern turns parameters into uniforms. Includes are relative to the
//! including file; an include cycle is an error naming the file. Lines keep their original
//! spacing up to the first macro expansion, so columns stay exact on lines without macros.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::super::FrontendError;
use crate::frontend::limits::{
    nesting_message, MAX_INCLUDES, MAX_MACRO_EXPANSIONS, MAX_NESTING_DEPTH, MAX_PREPROCESSED_BYTES,
};
use crate::frontend::retroarch::{LineMap, Origin, Parameter};

/// Deepest include nesting accepted.
pub const MAX_INCLUDE_DEPTH: usize = 32;

/// Longest expansion of one line accepted (guards against exponential macros; the whole
/// shader is bounded by [`MAX_PREPROCESSED_BYTES`] and [`MAX_MACRO_EXPANSIONS`]).
const MAX_EXPANDED_TOKENS: usize = 1 << 20;

/// The preprocessed source of a `.cg` file.
#[derive(Clone, Debug, Default)]
pub struct Preprocessed {
    /// The text the parser reads.
    pub text: String,
    /// Output line → original file and line.
    pub line_map: LineMap,
    /// The `#pragma parameter`s in order of first appearance.
    pub parameters: Vec<Parameter>,
}

/// A preprocessing token.
#[derive(Clone, Debug, PartialEq)]
struct PTok {
    /// Whitespace before the token, as written (a single space after expansion).
    ws: String,
    text: String,
    kind: PKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PKind {
    Ident,
    Number,
    Str,
    Punct,
}

#[derive(Clone, Debug)]
struct Macro {
    params: Option<Vec<String>>,
    variadic: bool,
    body: Vec<PTok>,
}

/// Reads `path` and preprocesses it with `PARAMETER_UNIFORM` defined.
pub fn preprocess_file(path: &Path) -> Result<Preprocessed, FrontendError> {
    // Macro expansion and `#if` expressions recurse (as deep as the nesting limit allows).
    crate::frontend::limits::on_frontend_stack(|| {
        let mut pp = Pp::default();
        pp.define_simple("PARAMETER_UNIFORM", "1");
        pp.include(path, &mut Vec::new(), None)?;
        Ok(Preprocessed {
            text: pp.out,
            line_map: pp.map,
            parameters: pp.parameters,
        })
    })
}

/// Preprocesses `source` as if read from `file` (includes resolve relative to `file`'s folder).
pub fn preprocess_str(source: &str, file: &Path) -> Result<Preprocessed, FrontendError> {
    crate::frontend::limits::on_frontend_stack(|| {
        let mut pp = Pp::default();
        pp.define_simple("PARAMETER_UNIFORM", "1");
        pp.run_text(source, file, &mut Vec::new())?;
        Ok(Preprocessed {
            text: pp.out,
            line_map: pp.map,
            parameters: pp.parameters,
        })
    })
}

#[derive(Default)]
struct Pp {
    macros: HashMap<String, Macro>,
    out: String,
    map: LineMap,
    parameters: Vec<Parameter>,
    /// `#include`s performed so far, every repetition counted (bounded by [`MAX_INCLUDES`]).
    includes: usize,
    /// Macro expansions performed so far (bounded by [`MAX_MACRO_EXPANSIONS`]).
    expansions: Cell<usize>,
    /// Expansions in progress around the current one: macro bodies and arguments expanded
    /// inside each other (bounded by [`MAX_NESTING_DEPTH`]).
    expanding: Cell<usize>,
}

/// Where [`Pp::scan_calls`] stands in the tokens of a line and its continuations.
#[derive(Default)]
struct CallScan {
    /// Inside the arguments of a function-like macro call.
    in_call: bool,
    /// Parentheses open in that call.
    depth: i32,
    /// The last token was the name of a function-like macro (its `(` may follow).
    after_macro_name: bool,
}

impl CallScan {
    fn needs_more(&self) -> bool {
        self.in_call || self.after_macro_name
    }
}

/// One `#if` level: whether any branch was taken, whether the current one is active, and
/// whether the enclosing level is active.
struct Cond {
    taken: bool,
    active: bool,
    parent: bool,
    seen_else: bool,
}

impl Pp {
    fn define_simple(&mut self, name: &str, value: &str) {
        self.macros.insert(
            name.to_string(),
            Macro {
                params: None,
                variadic: false,
                body: tokenize(value),
            },
        );
    }

    fn file_index(&mut self, name: &str) -> u32 {
        if let Some(i) = self.map.files.iter().position(|f| f == name) {
            return i as u32;
        }
        self.map.files.push(name.to_string());
        (self.map.files.len() - 1) as u32
    }

    fn include(
        &mut self,
        path: &Path,
        stack: &mut Vec<PathBuf>,
        from: Option<(&str, u32)>,
    ) -> Result<(), FrontendError> {
        let err = |m: String| match from {
            Some((f, l)) => FrontendError::new(f, l, 0, m),
            None => FrontendError::new(&path.display().to_string(), 0, 0, m),
        };
        if stack.len() >= MAX_INCLUDE_DEPTH {
            return Err(err(format!(
                "includes nested deeper than {MAX_INCLUDE_DEPTH} levels"
            )));
        }
        let canon = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if stack.contains(&canon) {
            return Err(err(format!(
                "include cycle: {} includes itself",
                path.display()
            )));
        }
        self.includes += 1;
        if self.includes > MAX_INCLUDES {
            return Err(err(format!(
                "more than {MAX_INCLUDES} includes (counting every repetition) at {} \
                 (see docs/limits.md)",
                path.display()
            )));
        }
        let bytes = crate::input::read_bytes(path, "shader", crate::input::MAX_SHADER_FILE_BYTES)
            // At an `#include` line the message names the included file; for the root file the
            // error is already placed at it.
            .map_err(|e| {
                err(if from.is_some() {
                    e.to_string()
                } else {
                    e.message
                })
            })?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        stack.push(canon);
        let r = self.run_text(&text, path, stack);
        stack.pop();
        r
    }

    fn run_text(
        &mut self,
        text: &str,
        path: &Path,
        stack: &mut Vec<PathBuf>,
    ) -> Result<(), FrontendError> {
        let fname = path.display().to_string();
        let fidx = self.file_index(&fname);
        let lines = logical_lines(text).map_err(|line| {
            FrontendError::new(
                &fname,
                line,
                0,
                "unterminated `/*` comment: expected `*/` before the end of the file",
            )
        })?;
        let mut conds: Vec<Cond> = Vec::new();
        let active = |c: &Vec<Cond>| c.last().is_none_or(|c| c.active);
        let mut i = 0;
        while i < lines.len() {
            let (lno, ref line) = lines[i];
            i += 1;
            let err = |m: String| FrontendError::new(&fname, lno, 0, m);
            let trimmed = line.trim_start();
            if let Some(dir) = trimmed.strip_prefix('#') {
                let dir = dir.trim_start();
                let (name, rest) = split_word(dir);
                match name {
                    "if" | "ifdef" | "ifndef" => {
                        let parent = active(&conds);
                        let v = if !parent {
                            false
                        } else if name == "if" {
                            self.eval_if(rest).map_err(err)?
                        } else {
                            let (id, _) = split_word(rest.trim());
                            if id.is_empty() {
                                return Err(err(format!("#{name} needs a macro name")));
                            }
                            self.macros.contains_key(id) == (name == "ifdef")
                        };
                        conds.push(Cond {
                            taken: v,
                            active: v,
                            parent,
                            seen_else: false,
                        });
                    }
                    "elif" => {
                        let Some(c) = conds.last() else {
                            return Err(err("#elif without #if".into()));
                        };
                        if c.seen_else {
                            return Err(err("#elif after #else".into()));
                        }
                        let (parent, taken) = (c.parent, c.taken);
                        let v = parent && !taken && self.eval_if(rest).map_err(err)?;
                        let c = conds.last_mut().expect("checked above");
                        c.active = v;
                        c.taken |= v;
                    }
                    "else" => {
                        let Some(c) = conds.last_mut() else {
                            return Err(err("#else without #if".into()));
                        };
                        if c.seen_else {
                            return Err(err("second #else".into()));
                        }
                        c.seen_else = true;
                        c.active = c.parent && !c.taken;
                        c.taken = true;
                    }
                    "endif" => {
                        if conds.pop().is_none() {
                            return Err(err("#endif without #if".into()));
                        }
                    }
                    _ if !active(&conds) => {}
                    "define" => self.define(rest).map_err(err)?,
                    "undef" => {
                        let (id, _) = split_word(rest.trim());
                        self.macros.remove(id);
                    }
                    "include" => {
                        let r = rest.trim();
                        let inner = r
                            .strip_prefix('"')
                            .and_then(|s| s.split('"').next())
                            .or_else(|| r.strip_prefix('<').and_then(|s| s.split('>').next()))
                            .ok_or_else(|| {
                                err(format!("expected \"file\" after #include, found `{r}`"))
                            })?;
                        let target = path.parent().unwrap_or(Path::new(".")).join(inner);
                        self.include(&target, stack, Some((&fname, lno)))?;
                    }
                    "pragma" => self.pragma(rest).map_err(err)?,
                    "error" => return Err(err(format!("#error {}", rest.trim()))),
                    "line" | "warning" | "" => {}
                    other => return Err(err(format!("unknown directive #{other}"))),
                }
                // Keep the output line count aligned with the source for readability.
                continue;
            }
            if !active(&conds) {
                continue;
            }
            let mut toks = tokenize(line);
            let mut scan = CallScan::default();
            self.scan_calls(&mut scan, &toks);
            // A function-like macro call whose arguments continue on the next lines.
            while scan.needs_more() && i < lines.len() && !lines[i].1.trim_start().starts_with('#')
            {
                let more = tokenize(&format!(" {}", lines[i].1));
                self.scan_calls(&mut scan, &more);
                toks.extend(more);
                i += 1;
            }
            let expanded = self.expand(toks, &mut Vec::new()).map_err(err)?;
            let mut s = String::new();
            for t in &expanded {
                s.push_str(&t.ws);
                s.push_str(&t.text);
            }
            self.out.push_str(&s);
            self.out.push('\n');
            if self.out.len() > MAX_PREPROCESSED_BYTES {
                return Err(err(format!(
                    "the preprocessed shader grows past {MAX_PREPROCESSED_BYTES} bytes here \
                     (includes and macros expanded; see docs/limits.md)"
                )));
            }
            self.map.lines.push(Origin {
                file: fidx,
                line: lno,
            });
        }
        if !conds.is_empty() {
            return Err(FrontendError::new(
                &fname,
                lines.last().map_or(0, |l| l.0),
                0,
                "missing #endif at the end of the file",
            ));
        }
        Ok(())
    }

    /// Feeds `toks` to `scan`, which tracks whether the tokens so far end inside the argument
    /// list of a function-like macro call (or right after such a macro's name). Incremental, so
    /// a call spanning many lines is scanned once, not once per line.
    fn scan_calls(&self, scan: &mut CallScan, toks: &[PTok]) {
        for t in toks {
            if scan.after_macro_name {
                scan.after_macro_name = false;
                if t.text == "(" {
                    scan.in_call = true;
                    scan.depth = 0;
                }
            }
            if !scan.in_call {
                scan.after_macro_name = t.kind == PKind::Ident
                    && self.macros.get(&t.text).is_some_and(|m| m.params.is_some());
            } else if t.text == "(" {
                scan.depth += 1;
            } else if t.text == ")" {
                scan.depth -= 1;
                if scan.depth == 0 {
                    scan.in_call = false;
                }
            }
        }
    }

    fn define(&mut self, rest: &str) -> Result<(), String> {
        let rest = rest.trim_start();
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
            return Err(format!(
                "expected a macro name after #define, found `{rest}`"
            ));
        }
        let after = &rest[name_len..];
        let (params, variadic, body) = if let Some(p) = after.strip_prefix('(') {
            let close = p
                .find(')')
                .ok_or_else(|| format!("missing `)` in the parameters of macro {name}"))?;
            let mut params = Vec::new();
            let mut variadic = false;
            for a in p[..close].split(',') {
                let a = a.trim();
                if a.is_empty() {
                    continue;
                }
                if a == "..." {
                    variadic = true;
                    params.push("__VA_ARGS__".to_string());
                } else {
                    params.push(a.to_string());
                }
            }
            (Some(params), variadic, &p[close + 1..])
        } else {
            (None, false, after)
        };
        let mut body = tokenize(body);
        if let Some(first) = body.first_mut() {
            first.ws.clear();
        }
        self.macros.insert(
            name.to_string(),
            Macro {
                params,
                variadic,
                body,
            },
        );
        Ok(())
    }

    fn pragma(&mut self, rest: &str) -> Result<(), String> {
        let (word, args) = split_word(rest.trim());
        if word != "parameter" {
            return Ok(());
        }
        let args = args.trim();
        let (id, after) = split_word(args);
        if id.is_empty() {
            return Err("#pragma parameter needs a name".into());
        }
        let after = after.trim_start();
        let (description, nums) = if let Some(s) = after.strip_prefix('"') {
            let end = s
                .find('"')
                .ok_or("#pragma parameter: unterminated description string")?;
            (s[..end].to_string(), &s[end + 1..])
        } else {
            return Err(format!(
                "#pragma parameter {id}: expected a quoted description"
            ));
        };
        // Trailing `//` comments were removed by `logical_lines`.
        let values: Vec<f32> = nums
            .split_whitespace()
            .map(|v| {
                v.trim_end_matches('f')
                    .parse::<f32>()
                    .map_err(|_| format!("#pragma parameter {id}: `{v}` is not a number"))
            })
            .collect::<Result<_, _>>()?;
        if !(3..=4).contains(&values.len()) {
            return Err(format!(
                "#pragma parameter {id}: expected initial, minimum, maximum and optional step, found {} numbers",
                values.len()
            ));
        }
        let p = Parameter {
            id: id.to_string(),
            description,
            initial: values[0],
            minimum: values[1],
            maximum: values[2],
            step: values
                .get(3)
                .copied()
                .unwrap_or(0.1 * (values[2] - values[1])),
        };
        if !self.parameters.iter().any(|q| q.id == p.id) {
            self.parameters.push(p);
        }
        Ok(())
    }

    fn eval_if(&self, expr: &str) -> Result<bool, String> {
        // `defined X` is resolved before expansion.
        let toks = tokenize(expr);
        let mut pre = Vec::new();
        let mut k = 0;
        while k < toks.len() {
            if toks[k].text == "defined" {
                let (name, skip) = if toks.get(k + 1).map(|t| t.text.as_str()) == Some("(") {
                    (toks.get(k + 2), 4)
                } else {
                    (toks.get(k + 1), 2)
                };
                let name = name.ok_or("`defined` needs a macro name")?;
                let v = self.macros.contains_key(&name.text);
                pre.push(PTok {
                    ws: " ".into(),
                    text: if v { "1" } else { "0" }.into(),
                    kind: PKind::Number,
                });
                k += skip;
            } else {
                pre.push(toks[k].clone());
                k += 1;
            }
        }
        let toks = self.expand(pre, &mut Vec::new())?;
        let mut p = IfParser {
            toks: &toks,
            pos: 0,
            depth: 0,
        };
        let v = p.ternary()?;
        if p.pos != toks.len() {
            return Err(format!(
                "unexpected `{}` in #if expression",
                toks[p.pos].text
            ));
        }
        Ok(v != 0)
    }

    /// Expands macros in `toks`; `disabled` holds the macros being expanded (no recursion).
    fn expand(&self, toks: Vec<PTok>, disabled: &mut Vec<String>) -> Result<Vec<PTok>, String> {
        if self.expanding.get() >= MAX_NESTING_DEPTH {
            return Err(format!("macro expansion: {}", nesting_message()));
        }
        self.expanding.set(self.expanding.get() + 1);
        let result = self.expand_nested(toks, disabled);
        self.expanding.set(self.expanding.get() - 1);
        result
    }

    /// [`Pp::expand`] one level deeper.
    fn expand_nested(
        &self,
        toks: Vec<PTok>,
        disabled: &mut Vec<String>,
    ) -> Result<Vec<PTok>, String> {
        let mut out = Vec::with_capacity(toks.len());
        let mut k = 0;
        while k < toks.len() {
            let t = &toks[k];
            let m = (t.kind == PKind::Ident && !disabled.contains(&t.text))
                .then(|| self.macros.get(&t.text))
                .flatten();
            let Some(m) = m else {
                out.push(t.clone());
                k += 1;
                continue;
            };
            self.expansions.set(self.expansions.get() + 1);
            if self.expansions.get() > MAX_MACRO_EXPANSIONS {
                return Err(format!(
                    "more than {MAX_MACRO_EXPANSIONS} macro expansions (see docs/limits.md)"
                ));
            }
            let ws = t.ws.clone();
            let name = t.text.clone();
            let body = match &m.params {
                None => {
                    k += 1;
                    m.body.clone()
                }
                Some(params) => {
                    if toks.get(k + 1).map(|t| t.text.as_str()) != Some("(") {
                        out.push(t.clone());
                        k += 1;
                        continue;
                    }
                    let (args, next) = collect_args(&toks, k + 2)
                        .ok_or_else(|| format!("unterminated arguments of macro {name}"))?;
                    k = next;
                    let args = if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                        Vec::new()
                    } else {
                        args
                    };
                    let given = args.len();
                    let args = fit_args(args, params.len(), m.variadic).ok_or_else(|| {
                        format!(
                            "macro {name} takes {} arguments, {given} given",
                            params.len()
                        )
                    })?;
                    self.substitute(m, params, &args, disabled)?
                }
            };
            disabled.push(name);
            let mut exp = self.expand(body, disabled)?;
            disabled.pop();
            if let Some(first) = exp.first_mut() {
                first.ws = ws;
            }
            out.extend(exp);
            if out.len() > MAX_EXPANDED_TOKENS {
                return Err("macro expansion too large".into());
            }
        }
        Ok(out)
    }

    fn substitute(
        &self,
        m: &Macro,
        params: &[String],
        args: &[Vec<PTok>],
        disabled: &mut Vec<String>,
    ) -> Result<Vec<PTok>, String> {
        let index = |t: &PTok| {
            (t.kind == PKind::Ident)
                .then(|| params.iter().position(|p| *p == t.text))
                .flatten()
        };
        let mut out: Vec<PTok> = Vec::new();
        let body = &m.body;
        let mut j = 0;
        while j < body.len() {
            let t = &body[j];
            if t.text == "#" {
                if let Some(a) = body.get(j + 1).and_then(index) {
                    let s: String = args[a]
                        .iter()
                        .enumerate()
                        .map(|(n, t)| {
                            if n == 0 {
                                t.text.clone()
                            } else {
                                format!("{}{}", if t.ws.is_empty() { "" } else { " " }, t.text)
                            }
                        })
                        .collect();
                    out.push(PTok {
                        ws: t.ws.clone(),
                        text: format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")),
                        kind: PKind::Str,
                    });
                    j += 2;
                    continue;
                }
            }
            let next_is_paste = body.get(j + 1).is_some_and(|n| n.text == "##");
            let prev_is_paste = j > 0 && body[j - 1].text == "##";
            if t.text == "##" {
                j += 1;
                continue;
            }
            let piece: Vec<PTok> = match index(t) {
                Some(a) if next_is_paste || prev_is_paste => args[a].clone(),
                Some(a) => self.expand(args[a].clone(), disabled)?,
                None => vec![t.clone()],
            };
            if prev_is_paste {
                // Glue the first token of `piece` onto the last output token.
                let mut piece = piece.into_iter();
                if let Some(first) = piece.next() {
                    match out.last_mut() {
                        Some(last) => {
                            last.text.push_str(&first.text);
                            last.kind = retokenize_kind(&last.text);
                        }
                        None => out.push(first),
                    }
                }
                out.extend(piece);
            } else {
                let mut piece = piece;
                if let Some(f) = piece.first_mut() {
                    f.ws = t.ws.clone();
                }
                out.extend(piece);
            }
            j += 1;
        }
        Ok(out)
    }
}

fn retokenize_kind(s: &str) -> PKind {
    match s.chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => PKind::Ident,
        Some(c) if c.is_ascii_digit() => PKind::Number,
        _ => PKind::Punct,
    }
}

/// Splits macro arguments starting after `(` at `start`; returns the arguments and the index
/// after the closing `)`.
fn collect_args(toks: &[PTok], start: usize) -> Option<(Vec<Vec<PTok>>, usize)> {
    let mut args = vec![Vec::new()];
    let mut depth = 0;
    let mut k = start;
    while k < toks.len() {
        let t = &toks[k];
        match t.text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" if depth == 0 => return Some((args, k + 1)),
            ")" | "]" | "}" => depth -= 1,
            "," if depth == 0 => {
                args.push(Vec::new());
                k += 1;
                continue;
            }
            _ => {}
        }
        args.last_mut()?.push(t.clone());
        k += 1;
    }
    None
}

fn fit_args(mut args: Vec<Vec<PTok>>, n: usize, variadic: bool) -> Option<Vec<Vec<PTok>>> {
    if variadic && args.len() > n {
        let rest: Vec<Vec<PTok>> = args.split_off(n - 1);
        let mut joined = Vec::new();
        for (i, a) in rest.into_iter().enumerate() {
            if i > 0 {
                joined.push(PTok {
                    ws: String::new(),
                    text: ",".into(),
                    kind: PKind::Punct,
                });
            }
            joined.extend(a);
        }
        args.push(joined);
    }
    if variadic && args.len() == n - 1 {
        args.push(Vec::new());
    }
    for a in &mut args {
        if let Some(f) = a.first_mut() {
            f.ws.clear();
        }
    }
    (args.len() == n).then_some(args)
}

fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (&s[..end], &s[end..])
}

/// Splits `text` into logical lines (backslash continuations joined, comments blanked) with
/// the 1-based line each starts on; a `/*` comment still open at the end is an error carrying
/// the line it opens on.
fn logical_lines(text: &str) -> Result<Vec<(u32, String)>, u32> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start_line = 1u32;
    let mut line = 1u32;
    let mut in_block = false;
    let mut block_line = 0u32;
    let mut chars = text.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_block {
            if c == '*' && chars.peek() == Some(&'/') {
                chars.next();
                in_block = false;
                cur.push(' ');
            } else if c == '\n' {
                line += 1;
            }
            continue;
        }
        match c {
            '"' => {
                in_str = !in_str;
                cur.push(c);
            }
            '/' if !in_str && chars.peek() == Some(&'/') => {
                while let Some(&n) = chars.peek() {
                    if n == '\n' {
                        break;
                    }
                    chars.next();
                }
            }
            '/' if !in_str && chars.peek() == Some(&'*') => {
                chars.next();
                in_block = true;
                block_line = line;
                cur.push(' ');
            }
            '\\' if matches!(chars.peek(), Some('\n') | Some('\r')) => {
                if chars.peek() == Some(&'\r') {
                    chars.next();
                }
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                line += 1;
            }
            '\r' => {}
            '\n' => {
                out.push((start_line, std::mem::take(&mut cur)));
                in_str = false;
                line += 1;
                start_line = line;
            }
            _ => cur.push(c),
        }
    }
    if in_block {
        return Err(block_line);
    }
    if !cur.is_empty() {
        out.push((start_line, cur));
    }
    Ok(out)
}

fn tokenize(s: &str) -> Vec<PTok> {
    let b: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut ws = String::new();
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            ws.push(c);
            i += 1;
            continue;
        }
        let start = i;
        let kind = if c.is_ascii_alphabetic() || c == '_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            PKind::Ident
        } else if c.is_ascii_digit()
            || (c == '.' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            while i < b.len() {
                let d = b[i];
                let exp_sign = (d == '+' || d == '-')
                    && i > start
                    && matches!(b[i - 1], 'e' | 'E')
                    && !(b[start] == '0' && matches!(b.get(start + 1), Some('x') | Some('X')));
                if d.is_ascii_alphanumeric() || d == '.' || d == '_' || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            PKind::Number
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            PKind::Str
        } else {
            const THREE: [&str; 2] = ["<<=", ">>="];
            const TWO: [&str; 19] = [
                "##", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "++", "--", "+=", "-=", "*=",
                "/=", "%=", "&=", "|=", "^=",
            ];
            let rest: String = b[i..b.len().min(i + 3)].iter().collect();
            if THREE.iter().any(|t| rest.starts_with(t)) {
                i += 3;
            } else if TWO.iter().any(|t| rest.starts_with(t)) {
                i += 2;
            } else {
                i += 1;
            }
            PKind::Punct
        };
        out.push(PTok {
            ws: std::mem::take(&mut ws),
            text: b[start..i].iter().collect(),
            kind,
        });
    }
    out
}

/// `#if` expression evaluator over expanded tokens (C integer semantics, unknown names = 0).
struct IfParser<'a> {
    toks: &'a [PTok],
    pos: usize,
    /// Nesting of the operator being parsed (bounded by [`MAX_NESTING_DEPTH`]).
    depth: usize,
}

impl IfParser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(|t| t.text.as_str())
    }

    fn ternary(&mut self) -> Result<i64, String> {
        self.nested(Self::ternary_nested)
    }

    /// Runs `parse` one level of nesting deeper.
    fn nested(&mut self, parse: fn(&mut Self) -> Result<i64, String>) -> Result<i64, String> {
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(format!("#if expression {}", nesting_message()));
        }
        self.depth += 1;
        let result = parse(self);
        self.depth -= 1;
        result
    }

    fn ternary_nested(&mut self) -> Result<i64, String> {
        let c = self.binary(0)?;
        if self.peek() == Some("?") {
            self.pos += 1;
            let a = self.ternary()?;
            if self.peek() != Some(":") {
                return Err("expected `:` in #if expression".into());
            }
            self.pos += 1;
            let b = self.ternary()?;
            return Ok(if c != 0 { a } else { b });
        }
        Ok(c)
    }

    fn binary(&mut self, min_prec: u8) -> Result<i64, String> {
        let mut l = self.unary()?;
        while let Some(op) = self.peek() {
            let prec = match op {
                "||" => 1,
                "&&" => 2,
                "|" => 3,
                "^" => 4,
                "&" => 5,
                "==" | "!=" => 6,
                "<" | ">" | "<=" | ">=" => 7,
                "<<" | ">>" => 8,
                "+" | "-" => 9,
                "*" | "/" | "%" => 10,
                _ => break,
            };
            if prec < min_prec {
                break;
            }
            let op = op.to_string();
            self.pos += 1;
            let r = self.binary(prec + 1)?;
            l = match op.as_str() {
                "||" => ((l != 0) || (r != 0)) as i64,
                "&&" => ((l != 0) && (r != 0)) as i64,
                "|" => l | r,
                "^" => l ^ r,
                "&" => l & r,
                "==" => (l == r) as i64,
                "!=" => (l != r) as i64,
                "<" => (l < r) as i64,
                ">" => (l > r) as i64,
                "<=" => (l <= r) as i64,
                ">=" => (l >= r) as i64,
                "<<" => l.wrapping_shl(r as u32),
                ">>" => l.wrapping_shr(r as u32),
                "+" => l.wrapping_add(r),
                "-" => l.wrapping_sub(r),
                "*" => l.wrapping_mul(r),
                "/" | "%" if r == 0 => return Err("division by zero in #if expression".into()),
                "/" => l.wrapping_div(r),
                _ => l.wrapping_rem(r),
            };
        }
        Ok(l)
    }

    fn unary(&mut self) -> Result<i64, String> {
        self.nested(Self::unary_nested)
    }

    fn unary_nested(&mut self) -> Result<i64, String> {
        let Some(t) = self.toks.get(self.pos) else {
            return Err("#if expression ends early".into());
        };
        self.pos += 1;
        match t.text.as_str() {
            "!" => Ok((self.unary()? == 0) as i64),
            "-" => Ok(self.unary()?.wrapping_neg()),
            "+" => self.unary(),
            "~" => Ok(!self.unary()?),
            "(" => {
                let v = self.ternary()?;
                if self.peek() != Some(")") {
                    return Err("expected `)` in #if expression".into());
                }
                self.pos += 1;
                Ok(v)
            }
            _ if t.kind == PKind::Number => parse_int(&t.text)
                .ok_or_else(|| format!("`{}` is not an integer in #if expression", t.text)),
            _ if t.kind == PKind::Ident => Ok(0),
            other => Err(format!("unexpected `{other}` in #if expression")),
        }
    }
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        i64::from_str_radix(&s[1..], 8).ok()
    } else if let Ok(v) = s.parse::<i64>() {
        Some(v)
    } else {
        s.parse::<f64>().ok().map(|f| f as i64)
    }
}
