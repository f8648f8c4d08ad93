//! The lexer: preprocessed Cg text to tokens, each with its position (1-based line and
//! column, byte offset). Numbers are decimal or hexadecimal (`0x`) integers and floats (a
//! fraction, an exponent or a float suffix: `f`, `h` and `x` — `half` and `fixed` are floats
//! here); integer suffixes `u`/`l` are dropped. Punctuation matches longest first. The list
//! always ends with [`Tok::Eof`].

use super::{ParseError, Pos};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Ident(String),
    Int(i64),
    Float(f64),
    Str(String),
    Punct(&'static str),
    Eof,
}

const PUNCTS: &[&str] = &[
    "<<=", ">>=", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "++", "--", "+=", "-=", "*=",
    "/=", "%=", "&=", "|=", "^=", "::", "+", "-", "*", "/", "%", "<", ">", "=", "!", "~", "&", "|",
    "^", "?", ":", ";", ",", ".", "(", ")", "[", "]", "{", "}", "#",
];

pub(super) fn lex(src: &str) -> Result<Vec<(Tok, Pos)>, ParseError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut line_start) = (0usize, 1u32, 0usize);
    while i < b.len() {
        let c = b[i];
        let pos = Pos {
            line,
            col: (i - line_start + 1) as u32,
            offset: i as u32,
        };
        if c == b'\n' {
            line += 1;
            i += 1;
            line_start = i;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(src[s..i].to_string()), pos));
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let s = i;
            if c == b'0' && matches!(b.get(i + 1), Some(b'x') | Some(b'X')) {
                i += 2;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let v = i64::from_str_radix(&src[s + 2..i], 16).map_err(|_| ParseError {
                    pos,
                    message: format!("bad hexadecimal number `{}`", &src[s..i]),
                })?;
                while i < b.len() && matches!(b[i], b'u' | b'U' | b'l' | b'L') {
                    i += 1;
                }
                out.push((Tok::Int(v), pos));
                continue;
            }
            let mut is_float = false;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i < b.len() && b[i] == b'.' {
                is_float = true;
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < b.len() && matches!(b[i], b'e' | b'E') {
                let save = i;
                i += 1;
                if i < b.len() && matches!(b[i], b'+' | b'-') {
                    i += 1;
                }
                if i < b.len() && b[i].is_ascii_digit() {
                    is_float = true;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                } else {
                    i = save;
                }
            }
            let text = &src[s..i];
            let mut suffix_float = false;
            while i < b.len()
                && matches!(
                    b[i],
                    b'f' | b'F' | b'h' | b'H' | b'x' | b'X' | b'u' | b'U' | b'l' | b'L'
                )
            {
                if matches!(b[i], b'f' | b'F' | b'h' | b'H' | b'x' | b'X') {
                    suffix_float = true;
                }
                i += 1;
            }
            if i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                return Err(ParseError {
                    pos,
                    message: format!("bad number `{}`", &src[s..=i]),
                });
            }
            if is_float || suffix_float {
                let v: f64 = text.parse().map_err(|_| ParseError {
                    pos,
                    message: format!("bad number `{text}`"),
                })?;
                out.push((Tok::Float(v), pos));
            } else {
                let v = text.parse::<i64>().map_err(|_| ParseError {
                    pos,
                    message: format!("integer `{text}` out of range"),
                })?;
                out.push((Tok::Int(v), pos));
            }
            continue;
        }
        if c == b'"' {
            let s = i + 1;
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                i += 1;
            }
            out.push((Tok::Str(src[s..i].to_string()), pos));
            i += 1;
            continue;
        }
        let rest = &src[i..];
        match PUNCTS.iter().find(|p| rest.starts_with(**p)) {
            Some(p) => {
                out.push((Tok::Punct(p), pos));
                i += p.len();
            }
            None => {
                let ch = rest.chars().next().unwrap_or('?');
                return Err(ParseError {
                    pos,
                    message: format!("unexpected character `{ch}`"),
                });
            }
        }
    }
    let pos = Pos {
        line,
        col: (i - line_start + 1) as u32,
        offset: i as u32,
    };
    out.push((Tok::Eof, pos));
    Ok(out)
}
