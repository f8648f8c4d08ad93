//! The RetroArch slang preprocessor: `#include` resolution, stage splitting and the slang
//! `#pragma`s, with a line map so every later error names the original file and line.
//!
//! Behaviour follows RetroArch's `glslang_util.c` (and librashader, which copies it):
//! includes are textual and relative to the including file (resolved even inside `#if 0`, as
//! RetroArch does), `#pragma include_optional "file"` is an include that may be missing, lines
//! before the first `#pragma stage` go to both stages, `#pragma parameter` with a missing step
//! gets `0.1 * (max - min)`, duplicate parameters must agree on every value, and `#pragma name` /
//! `#pragma format` may appear at most once.

use std::path::{Path, PathBuf};

use super::super::FrontendError;
use crate::frontend::limits::{MAX_INCLUDES, MAX_PREPROCESSED_BYTES};
use crate::frontend::retroarch::{LineMap, Origin, Parameter};

/// Deepest include nesting accepted; real shader packs stay far below this.
pub const MAX_INCLUDE_DEPTH: usize = 32;

/// The render-target formats `#pragma format` accepts (RetroArch's `glslang_format` names).
pub const FORMAT_NAMES: &[&str] = &[
    "R8_UNORM",
    "R8_UINT",
    "R8_SINT",
    "R8G8_UNORM",
    "R8G8_UINT",
    "R8G8_SINT",
    "R8G8B8A8_UNORM",
    "R8G8B8A8_UINT",
    "R8G8B8A8_SINT",
    "R8G8B8A8_SRGB",
    "A2B10G10R10_UNORM_PACK32",
    "A2B10G10R10_UINT_PACK32",
    "R16_UINT",
    "R16_SINT",
    "R16_SFLOAT",
    "R16G16_UINT",
    "R16G16_SINT",
    "R16G16_SFLOAT",
    "R16G16B16A16_UINT",
    "R16G16B16A16_SINT",
    "R16G16B16A16_SFLOAT",
    "R32_UINT",
    "R32_SINT",
    "R32_SFLOAT",
    "R32G32_UINT",
    "R32G32_SINT",
    "R32G32_SFLOAT",
    "R32G32B32A32_UINT",
    "R32G32B32A32_SINT",
    "R32G32B32A32_SFLOAT",
];

/// The GLSL text of one stage, ready for glslang, with its line map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageSource {
    /// The source text (`#version` first, includes expanded, slang pragmas removed).
    pub text: String,
    /// Output line → original file and line.
    pub line_map: LineMap,
}

/// A preprocessed `.slang` file: both stage sources plus the pragma metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Preprocessed {
    /// The vertex stage source.
    pub vertex: StageSource,
    /// The fragment stage source.
    pub fragment: StageSource,
    /// `#pragma name` (the pass alias other passes refer to).
    pub name: Option<String>,
    /// `#pragma format`, one of [`FORMAT_NAMES`].
    pub format: Option<String>,
    /// The `#pragma parameter`s in order of first appearance.
    pub parameters: Vec<Parameter>,
}

/// The feature macros RetroArch defines in every `.slang` stage right after `#version`, so a
/// shader can tell whether the frontend fills the newer uniforms (librashader defines each only
/// when its host asks for it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FeatureDefines {
    /// `_HAS_ORIGINALASPECT_UNIFORMS`: `OriginalAspect` and `OriginalAspectRotated` are set.
    pub original_aspect_uniforms: bool,
    /// `_HAS_FRAMETIME_UNIFORMS`: `OriginalFPS` and `FrameTimeDelta` are set.
    pub frametime_uniforms: bool,
    /// `_HAS_SENSOR_UNIFORMS`: `Gyroscope`, `Accelerometer` and `AccelerometerRest` are set.
    pub sensor_uniforms: bool,
}

impl FeatureDefines {
    /// Every feature macro, as RetroArch defines them.
    pub const ALL: FeatureDefines = FeatureDefines {
        original_aspect_uniforms: true,
        frametime_uniforms: true,
        sensor_uniforms: true,
    };

    /// The `#define` lines, in RetroArch's order.
    pub fn lines(&self) -> Vec<&'static str> {
        [
            (
                self.original_aspect_uniforms,
                "#define _HAS_ORIGINALASPECT_UNIFORMS",
            ),
            (self.frametime_uniforms, "#define _HAS_FRAMETIME_UNIFORMS"),
            (self.sensor_uniforms, "#define _HAS_SENSOR_UNIFORMS"),
        ]
        .into_iter()
        .filter_map(|(on, line)| on.then_some(line))
        .collect()
    }
}

impl Preprocessed {
    /// Defines the feature macros `features` names in both stages, right after `#version` (the
    /// line map gives the added lines the `#version` line's origin).
    pub fn define_features(&mut self, features: FeatureDefines) {
        let lines = features.lines();
        for stage in [&mut self.vertex, &mut self.fragment] {
            stage.insert_after_first_line(&lines);
        }
    }
}

impl StageSource {
    fn insert_after_first_line(&mut self, lines: &[&str]) {
        if lines.is_empty() {
            return;
        }
        let at = self.text.find('\n').map_or(self.text.len(), |i| i + 1);
        let mut added = String::new();
        for line in lines {
            added.push_str(line);
            added.push('\n');
        }
        self.text.insert_str(at, &added);
        if let Some(&origin) = self.line_map.lines.first() {
            let tail = self.line_map.lines.split_off(1);
            self.line_map
                .lines
                .extend(std::iter::repeat_n(origin, lines.len()));
            self.line_map.lines.extend(tail);
        }
    }
}

/// Reads `path` and preprocesses it; see the module documentation.
pub fn preprocess_file(path: &Path) -> Result<Preprocessed, FrontendError> {
    let mut flat = Flattener::default();
    flat.include(path, 0, None)?;
    split(flat)
}

/// One line of the fully included text and its origin.
struct FlatLine {
    text: String,
    origin: Origin,
}

#[derive(Default)]
struct Flattener {
    files: Vec<String>,
    lines: Vec<FlatLine>,
    /// Canonical paths of the files being included right now, outermost first, with the index
    /// of their display name; a path already on this stack is an include cycle.
    stack: Vec<(PathBuf, u32)>,
    /// Files read so far, every repetition counted (bounded by [`MAX_INCLUDES`]).
    includes: usize,
    /// Bytes of the lines kept so far (bounded by [`MAX_PREPROCESSED_BYTES`]).
    bytes: usize,
}

/// Decodes shader bytes: UTF-8, or else Windows-1252/Latin-1 as RetroArch's loader tolerates
/// (a few packs carry Latin-1 comments).
fn decode(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => e.into_bytes().iter().map(|&b| b as char).collect(),
    }
}

impl Flattener {
    /// Appends the lines of `path`; `from` is the (file index, line) of the `#include`.
    fn include(
        &mut self,
        path: &Path,
        depth: usize,
        from: Option<Origin>,
    ) -> Result<(), FrontendError> {
        let display = path.display().to_string();
        let err_at = |files: &[String], message: String| match from {
            Some(o) => FrontendError::new(&files[o.file as usize], o.line, 0, message),
            None => FrontendError::new(&display, 0, 0, message),
        };
        if depth > MAX_INCLUDE_DEPTH {
            return Err(err_at(
                &self.files,
                format!("includes nested deeper than {MAX_INCLUDE_DEPTH} levels at `{display}`"),
            ));
        }
        self.includes += 1;
        if self.includes > MAX_INCLUDES {
            return Err(err_at(
                &self.files,
                format!(
                    "more than {MAX_INCLUDES} includes (counting every repetition) at \
                     `{display}` (see docs/limits.md)"
                ),
            ));
        }
        let bytes = crate::input::read_bytes(path, "shader", crate::input::MAX_SHADER_FILE_BYTES)
            // At an `#include` line the message names the included file; for the root file the
            // error is already placed at it.
            .map_err(|e| match from {
                Some(_) => err_at(&self.files, e.to_string()),
                None => err_at(&self.files, e.message),
            })?;
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if let Some(pos) = self.stack.iter().position(|(p, _)| *p == canonical) {
            let mut chain: Vec<&str> = self.stack[pos..]
                .iter()
                .map(|(_, f)| self.files[*f as usize].as_str())
                .collect();
            chain.push(&display);
            return Err(err_at(
                &self.files,
                format!("include cycle: {}", chain.join(" includes ")),
            ));
        }
        let text = decode(bytes);
        if text.contains('\0') {
            return Err(err_at(
                &self.files,
                format!("`{display}` contains a NUL byte"),
            ));
        }
        let file = self.files.len() as u32;
        self.files.push(display);
        self.stack.push((canonical, file));
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        for (i, raw) in text.lines().enumerate() {
            let line = i as u32 + 1;
            let origin = Origin { file, line };
            let trimmed = raw.trim();
            let (target, optional) = if let Some(rest) = directive(trimmed, "include") {
                (rest, false)
            } else if let Some(rest) = trimmed.strip_prefix("#pragma include_optional") {
                (rest, true)
            } else {
                self.bytes += raw.len() + 1;
                if self.bytes > MAX_PREPROCESSED_BYTES {
                    return Err(FrontendError::new(
                        &self.files[file as usize],
                        line,
                        0,
                        format!(
                            "the preprocessed shader grows past {MAX_PREPROCESSED_BYTES} bytes \
                             here (includes expanded; see docs/limits.md)"
                        ),
                    ));
                }
                self.lines.push(FlatLine {
                    text: raw.to_string(),
                    origin,
                });
                continue;
            };
            let name = parse_quoted_path(target).ok_or_else(|| {
                FrontendError::new(
                    &self.files[file as usize],
                    line,
                    0,
                    format!("expected a quoted file name after the include, found `{trimmed}`"),
                )
            })?;
            let child = dir.join(name);
            if optional && !child.is_file() {
                continue;
            }
            self.include(&child, depth + 1, Some(origin))?;
        }
        self.stack.pop();
        Ok(())
    }
}

/// `line` without the leading `#` + `name` of a preprocessor directive (spaces allowed after
/// `#`), if it is that directive.
fn directive<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let rest = line.strip_prefix('#')?.trim_start().strip_prefix(name)?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace) || rest.starts_with('"'))
        .then_some(rest)
}

/// `"file"` (surrounding blanks allowed; the rest of the line may be a `//` comment).
fn parse_quoted_path(rest: &str) -> Option<&str> {
    let rest = rest.trim_start().strip_prefix('"')?;
    let end = rest.find('"')?;
    let name = &rest[..end];
    let tail = rest[end + 1..].trim();
    (!name.is_empty() && (tail.is_empty() || tail.starts_with("//"))).then_some(name)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Active {
    Both,
    Vertex,
    Fragment,
}

fn push(out: &mut StageSource, text: &str, origin: Origin) {
    out.text.push_str(text);
    out.text.push('\n');
    out.line_map.lines.push(origin);
}

fn split(flat: Flattener) -> Result<Preprocessed, FrontendError> {
    let files = flat.files;
    let root = files[0].clone();
    let err = |o: Origin, message: String| {
        FrontendError::new(&files[o.file as usize], o.line, 0, message)
    };

    let mut out = Preprocessed::default();
    out.vertex.line_map.files = files.clone();
    out.fragment.line_map.files = files.clone();
    let mut lines = flat.lines.iter();
    // The first non-blank line must be `#version`; blank lines before it are dropped so it
    // stays the first line glslang sees.
    let version = lines
        .by_ref()
        .find(|l| !l.text.trim().is_empty())
        .ok_or_else(|| FrontendError::new(&root, 0, 0, "empty shader: expected `#version 450`"))?;
    if version.origin.file != 0 || directive(version.text.trim(), "version").is_none() {
        return Err(err(
            version.origin,
            format!(
                "the first line must be `#version 450`, found `{}`",
                version.text.trim()
            ),
        ));
    }
    push(&mut out.vertex, version.text.trim(), version.origin);
    push(&mut out.fragment, version.text.trim(), version.origin);

    let mut active = Active::Both;
    let mut seen_vertex = false;
    let mut seen_fragment = false;
    let mut format_origin = None;
    for line in lines {
        let trimmed = line.text.trim();
        if let Some(pragma) = directive(trimmed, "pragma") {
            let pragma = pragma.trim();
            let (word, rest) = pragma
                .split_once(char::is_whitespace)
                .map_or((pragma, ""), |(w, r)| (w, r.trim()));
            match word {
                "stage" => {
                    active = match rest {
                        "vertex" => {
                            seen_vertex = true;
                            Active::Vertex
                        }
                        "fragment" => {
                            seen_fragment = true;
                            Active::Fragment
                        }
                        other => {
                            return Err(err(
                                line.origin,
                                format!("unknown stage `{other}` in `#pragma stage` (expected `vertex` or `fragment`)"),
                            ))
                        }
                    };
                    continue;
                }
                "name" => {
                    if rest.is_empty() {
                        return Err(err(line.origin, "`#pragma name` needs a name".into()));
                    }
                    if let Some(old) = &out.name {
                        return Err(err(
                            line.origin,
                            format!("second `#pragma name` (`{rest}`, already named `{old}`)"),
                        ));
                    }
                    out.name = Some(rest.to_string());
                    continue;
                }
                "format" => {
                    if !FORMAT_NAMES.contains(&rest) {
                        return Err(err(
                            line.origin,
                            format!(
                                "unknown format `{rest}` in `#pragma format` (expected one of {})",
                                FORMAT_NAMES.join(", ")
                            ),
                        ));
                    }
                    if let Some(o) = format_origin {
                        let first: Origin = o;
                        return Err(err(
                            line.origin,
                            format!(
                                "second `#pragma format` (the first is at {}:{})",
                                files[first.file as usize], first.line
                            ),
                        ));
                    }
                    format_origin = Some(line.origin);
                    out.format = Some(rest.to_string());
                    continue;
                }
                "parameter" => {
                    let p = parse_parameter(rest).map_err(|m| err(line.origin, m))?;
                    match out.parameters.iter().find(|q| q.id == p.id) {
                        Some(q) if *q != p => {
                            return Err(err(
                                line.origin,
                                format!(
                                    "parameter `{}` declared again with different values ({} {} {} {} \"{}\" vs {} {} {} {} \"{}\")",
                                    p.id, q.initial, q.minimum, q.maximum, q.step, q.description,
                                    p.initial, p.minimum, p.maximum, p.step, p.description
                                ),
                            ))
                        }
                        Some(_) => {}
                        None => out.parameters.push(p),
                    }
                    continue;
                }
                _ => {}
            }
        }
        match active {
            Active::Both => {
                push(&mut out.vertex, &line.text, line.origin);
                push(&mut out.fragment, &line.text, line.origin);
            }
            Active::Vertex => push(&mut out.vertex, &line.text, line.origin),
            Active::Fragment => push(&mut out.fragment, &line.text, line.origin),
        }
    }
    if !seen_vertex || !seen_fragment {
        let missing = if seen_vertex { "fragment" } else { "vertex" };
        return Err(FrontendError::new(
            &root,
            0,
            0,
            format!("missing `#pragma stage {missing}`"),
        ));
    }
    Ok(out)
}

/// Parses the text after `#pragma parameter`: `ID "description" initial min max [step]`.
fn parse_parameter(rest: &str) -> Result<Parameter, String> {
    let usage = "expected `#pragma parameter ID \"description\" initial minimum maximum [step]`";
    let (id, rest) = rest
        .split_once(char::is_whitespace)
        .ok_or_else(|| format!("{usage}, found no description"))?;
    let rest = rest.trim_start();
    let rest = rest
        .strip_prefix('"')
        .ok_or_else(|| format!("{usage}: the description of `{id}` must be in double quotes"))?;
    let end = rest
        .find('"')
        .ok_or_else(|| format!("{usage}: unterminated description of `{id}`"))?;
    let description = &rest[..end];
    // RetroArch reads the numbers with sscanf's `%f`: each is the longest number prefix after
    // blanks, so `1.0'` is 1.0 and `0.0.001` is 0.0 followed by .001; reading stops at the
    // first text that is no number.
    let mut tail = &rest[end + 1..];
    let mut values = Vec::with_capacity(4);
    while values.len() < 4 {
        tail = tail.trim_start();
        match float_prefix(tail) {
            Some((v, len)) => {
                values.push(v);
                tail = &tail[len..];
            }
            None => break,
        }
    }
    if values.len() < 3 {
        let what = ["initial", "minimum", "maximum"][values.len()];
        return Err(match tail.split_whitespace().next() {
            Some(token) => format!("{usage}: {what} value `{token}` of `{id}` is not a number"),
            None => format!(
                "{usage}: `{id}` has {} of the 3 required numbers",
                values.len()
            ),
        });
    }
    let step = values
        .get(3)
        .copied()
        .unwrap_or(0.1 * (values[2] - values[1]));
    Ok(Parameter {
        id: id.to_string(),
        description: description.to_string(),
        initial: values[0],
        minimum: values[1],
        maximum: values[2],
        step,
    })
}

/// The longest prefix of `s` that is a C float literal (`[+-]digits[.digits][e[+-]digits]`,
/// `inf`, `nan`), as `strtof` reads it, and its length in bytes.
fn float_prefix(s: &str) -> Option<(f32, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    for word in ["infinity", "inf", "nan"] {
        // Bytes, not `str` slices: a multi-byte character may straddle the compared range.
        if b.get(i..i + word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word.as_bytes()))
        {
            let len = i + word.len();
            return s[..len].to_ascii_lowercase().parse().ok().map(|v| (v, len));
        }
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut mantissa = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if digits(&mut j) > 0 {
            i = j;
        }
    }
    s[..i].parse().ok().map(|v| (v, i))
}
