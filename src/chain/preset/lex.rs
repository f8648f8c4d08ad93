//! Reading a preset file's text: `KEY = VALUE` entries and `#reference` lines with their line
//! numbers (quotes, `#`, `//` and `/* */` comments as RetroArch and librashader read them), and
//! the value syntaxes (booleans, C-style integers and floats with a trailing `;`).

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) key: String,
    pub(super) value: String,
    pub(super) line: usize,
}

#[derive(Debug, Clone)]
pub(super) struct Reference {
    pub(super) path: String,
    pub(super) line: usize,
}

#[derive(Debug, Default)]
pub(super) struct Lexed {
    pub(super) entries: Vec<Entry>,
    pub(super) references: Vec<Reference>,
}

/// Byte offset of the first comment opener (`#`, `//`, `/*`) in `s`, and whether it is `/*`.
fn comment_start(s: &str) -> Option<(usize, bool)> {
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'#' {
            return Some((i, false));
        }
        if b == b'/' {
            match bytes.get(i + 1) {
                Some(b'/') => return Some((i, false)),
                Some(b'*') => return Some((i, true)),
                _ => {}
            }
        }
    }
    None
}

/// Reads a value at the start of `s` (already trimmed). Returns the value and the unread rest
/// of the line (where a `/*` may open a block comment).
fn read_value(s: &str) -> (String, &str) {
    if let Some(body) = s.strip_prefix('"') {
        return match body.find('"') {
            Some(end) => (body[..end].to_string(), &body[end + 1..]),
            None => {
                // RetroArch strips a `#` comment first when the quote is not closed before it.
                let cut = body.find('#').unwrap_or(body.len());
                (body[..cut].trim_end().to_string(), "")
            }
        };
    }
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    let word = &s[..end];
    match comment_start(word) {
        Some((c, _)) => (word[..c].to_string(), &s[c..]),
        None => (word.to_string(), &s[end..]),
    }
}

pub(super) fn lex(text: &str) -> std::result::Result<Lexed, (usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Lexed::default();
    let mut block_start: Option<usize> = None;
    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i + 1;
        let mut rest = raw.strip_suffix('\r').unwrap_or(raw);
        loop {
            if block_start.is_some() {
                match rest.find("*/") {
                    Some(p) => {
                        rest = &rest[p + 2..];
                        block_start = None;
                    }
                    None => break,
                }
            }
            let t = rest.trim_start();
            if t.is_empty() {
                break;
            }
            if let Some(after) = t.strip_prefix("/*") {
                block_start = Some(lineno);
                rest = after;
                continue;
            }
            if let Some(after) = t.strip_prefix("#reference") {
                if after.starts_with(|c: char| c.is_whitespace() || c == '"') {
                    let (path, tail) = read_value(after.trim_start());
                    if path.is_empty() {
                        return Err((lineno, "#reference needs a preset path".to_string()));
                    }
                    out.references.push(Reference { path, line: lineno });
                    rest = tail;
                    if rest.trim_start().starts_with("/*") {
                        continue;
                    }
                }
                break;
            }
            if t.starts_with('#') || t.starts_with("//") {
                break;
            }
            let Some(eq) = t.find('=') else {
                // RetroArch drops lines without `=`; a `/*` on such a line still opens a comment.
                if let Some((c, true)) = comment_start(t) {
                    rest = &t[c..];
                    continue;
                }
                break;
            };
            let key_part = &t[..eq];
            if let Some((c, block)) = comment_start(key_part) {
                if block {
                    rest = &t[c..];
                    continue;
                }
                break;
            }
            let key = key_part.trim();
            if key.is_empty() || key.contains(char::is_whitespace) {
                break;
            }
            let (value, tail) = read_value(t[eq + 1..].trim_start());
            out.entries.push(Entry {
                key: key.to_string(),
                value,
                line: lineno,
            });
            let tail = tail.trim_start();
            if tail.starts_with("/*") {
                rest = tail;
                continue;
            }
            break;
        }
    }
    if let Some(line) = block_start {
        return Err((line, "`/*` comment is never closed with `*/`".to_string()));
    }
    Ok(out)
}

/// Trims whitespace and the trailing `;` presets like to add.
pub(super) fn strip_value(s: &str) -> &str {
    s.trim().trim_end_matches(';').trim_end()
}

pub(super) fn parse_bool(s: &str) -> Option<bool> {
    match strip_value(s) {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// An integer the way RetroArch's `strtol(.., 0)` would read the whole value (hex `0x`, octal
/// leading `0`), or a float truncated toward zero.
pub(super) fn parse_int(s: &str) -> Option<i64> {
    let v = strip_value(s);
    let (neg, digits) = match v.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let parsed = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()
    } else if digits.len() > 1
        && digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        i64::from_str_radix(&digits[1..], 8).ok()
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<i64>().ok()
    } else {
        None
    };
    match parsed {
        Some(n) => Some(if neg { -n } else { n }),
        None => {
            let f = v.parse::<f64>().ok().filter(|f| f.is_finite())?;
            let t = f.trunc();
            (t.abs() < 9.0e15).then_some(t as i64)
        }
    }
}

pub(super) fn parse_float(s: &str) -> Option<f32> {
    strip_value(s).parse::<f32>().ok()
}

/// C `strtod` on the longest numeric prefix; 0 when there is none (RetroArch's
/// `config_get_float` for a declared parameter).
pub(super) fn strtod_prefix(s: &str) -> f32 {
    let b = s.trim_start().as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let int_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut mantissa_digits = i - int_start;
    if b.get(i) == Some(&b'.') {
        let frac_start = i + 1;
        let mut j = frac_start;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        mantissa_digits += j - frac_start;
        if mantissa_digits > 0 {
            i = j;
        }
    }
    if mantissa_digits == 0 {
        return 0.0;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp_start = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    std::str::from_utf8(&b[..i])
        .ok()
        .and_then(|t| t.parse::<f32>().ok())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexer_handles_quotes_comments_and_blocks() {
        let l = lex("\u{feff}a = \"x y\" # c\r\nb=2;// c\n/* x\n = y */ c = 3\nd = \"4\"/* q\n*/\n  #reference \"r.slangp\"\n").unwrap();
        let kv: Vec<(&str, &str, usize)> = l
            .entries
            .iter()
            .map(|e| (e.key.as_str(), e.value.as_str(), e.line))
            .collect();
        assert_eq!(
            kv,
            vec![
                ("a", "x y", 1),
                ("b", "2;", 2),
                ("c", "3", 4),
                ("d", "4", 5)
            ]
        );
        assert_eq!(l.references.len(), 1);
        assert_eq!(l.references[0].path, "r.slangp");
        assert_eq!(l.references[0].line, 7);
    }

    #[test]
    fn int_parsing_follows_strtol_base_detection() {
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("010"), Some(8));
        assert_eq!(parse_int("12;"), Some(12));
        assert_eq!(parse_int("2.75"), Some(2));
        assert_eq!(parse_int("abc"), None);
        assert_eq!(strtod_prefix("0'.000000"), 0.0);
        assert_eq!(strtod_prefix("1.5abc"), 1.5);
        assert_eq!(strtod_prefix("-2e1x"), -20.0);
    }
}
