//! RetroArch shader presets (`.slangp`, `.cgp`, `.glslp`): lexing, `#reference` chains,
//! path wildcards and the per-pass / per-LUT / parameter settings a filter chain needs.
//!
//! Behaviour follows RetroArch's `gfx/video_shader_parse.c` and libretro-common's
//! `config_file.c`; where librashader's parser (`librashader-presets`) agrees it is matched, and
//! where the two differ RetroArch wins. The differences, and the few places this parser accepts
//! more than RetroArch (because the real corpus relies on it), are listed here:
//!
//! - **Lexing.** RetroArch reads `KEY = VALUE` lines; an unquoted value ends at the first
//!   whitespace, a quoted one at the next `"` (an unbalanced quote runs to the end of the line);
//!   `#` outside quotes starts a comment. Like librashader this parser also accepts `//` comments
//!   (whole-line and after a value), `/* ... */` block comments (also spanning lines and starting
//!   right after a value), `KEY=VALUE` without spaces (RetroArch would read `KEY=VALUE` as a key
//!   with no value and drop the line), indented `#reference`, a UTF-8 BOM and CRLF line ends.
//!   Lines without `=` are ignored, as RetroArch ignores them (the corpus has prose in comments
//!   and `key "value"` typos). Within one file the *first* assignment of a key wins (RetroArch's
//!   entry map keeps the first); across a `#reference` chain the referencing file wins.
//!   `#include` is read as a comment (librashader does the same; no corpus preset uses it).
//! - **`#reference`.** RetroArch's model: the passes, `textures` list and per-LUT settings come
//!   from the *root* preset, found by following each file's first `#reference` (at most 16 hops);
//!   the root must have `shaders`. Further `#reference` lines of the loaded file must not lead to
//!   a preset with passes. Parameters and LUT *paths* are then overridden by every preset of the
//!   reference tree, depth first, the referencing file after the files it references (so the
//!   loaded file wins). Pass keys in a referencing preset are ignored, as in RetroArch (librashader
//!   lets them fill keys the root does not set). Cycles and chains deeper than 16 are errors
//!   (RetroArch silently stops gathering overrides at depth 16; librashader errors too).
//! - **Values.** Numbers may end in `;` (librashader's "crimes"); integers follow C `strtoul`
//!   base detection (`0x10`, `010`) as RetroArch does, and a float where an integer is expected is
//!   truncated (both parsers do so in effect). Booleans are `true`, `false`, `1`, `0` (trailing `;`
//!   allowed); anything else is an error (RetroArch silently treats it as unset, librashader
//!   errors). Unknown wrap modes fall back to `clamp_to_border` as in both parsers.
//! - **Scale.** As RetroArch: `scale_typeN` overrides `scale_type_xN`/`scale_type_yN`; with no
//!   scale type at all the pass has no explicit scale (`valid == false`) and `scale*N` keys are not
//!   read. `scaleN` wins over `scale_xN`/`scale_yN`; an axis of type `absolute` reads an integer,
//!   other axes a float (default 1.0). `original` is accepted as in librashader (RetroArch rejects
//!   it). An `absolute` axis with no factor is an error here (RetroArch would make it 0 pixels).
//! - **Spellings.** `repeat_modeN` and `texture_wrap_modeN` (librashader) are accepted after
//!   `wrap_modeN`; `NAME_repeat_mode` after `NAME_wrap_mode`. librashader's `mipmapN`,
//!   `filter_NAME` and "undeclared texture" guessing are not: RetroArch ignores them.
//! - **LUT filter.** Without `NAME_linear` a LUT is [`FilterMode::Linear`]: RetroArch leaves it
//!   unspecified and its GL, Vulkan and D3D drivers then sample linearly (librashader agrees).
//! - **Wildcards.** Tokens `$NAME$` in shader, LUT and `#reference` paths are replaced in
//!   RetroArch's token order (first occurrence of each), `$PRESET$`/`$PRESET-DIR$` from the preset
//!   file that names the path (librashader uses the loaded preset; `$PRESET_DIR$` is accepted as a
//!   spelling too), and the replaced path is used only if it exists. librashader 0.12 replaces
//!   wildcards in `#reference` paths only and knows `$PRESET_DIR$` but not RetroArch's
//!   `$PRESET-DIR$` (the corpus's `Mega_Bezel/resource/wildcard-examples` use the latter).
//! - **Paths** are joined to the naming preset's directory, `\` becomes `/` on non-Windows hosts
//!   and a leading `~` expands to `$HOME` (RetroArch's special-path expansion); `.`/`..` are folded
//!   lexically. Shader and LUT files are not required to exist (RetroArch checks them when it
//!   compiles/loads; librashader canonicalizes and fails early).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Maximum number of `#reference` hops (RetroArch's and librashader's SHADER_MAX_REFERENCE_DEPTH).
pub const MAX_REFERENCE_DEPTH: usize = 16;
/// Largest accepted `shaders` count (RetroArch caps at 64 silently; absurd counts are errors here).
pub const MAX_PASSES: usize = 1024;
/// Largest accepted number of LUTs in `textures`.
pub const MAX_TEXTURES: usize = 1024;
/// Largest accepted `absolute` scale in pixels.
pub const MAX_ABSOLUTE_SCALE: u32 = 65536;
/// Largest preset file read, in bytes (real presets are a few KiB).
pub const MAX_PRESET_BYTES: u64 = 4 << 20;
/// Most preset files visited while gathering a reference tree (bounds diamond-shaped blowups).
const MAX_REFERENCE_VISITS: usize = 4096;

/// Texture filtering of a pass input or a LUT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FilterMode {
    /// Point sampling.
    Nearest,
    /// Bilinear sampling.
    Linear,
}

/// Texture addressing outside [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WrapMode {
    /// Transparent black border (RetroArch's default).
    #[default]
    ClampToBorder,
    /// Repeat the edge texel.
    ClampToEdge,
    /// Tile.
    Repeat,
    /// Tile, mirroring every other copy.
    MirroredRepeat,
}

impl WrapMode {
    /// Parses a preset wrap mode; unknown names give the default, as RetroArch and librashader do.
    pub fn from_preset_str(s: &str) -> WrapMode {
        match strip_value(s) {
            "clamp_to_edge" => WrapMode::ClampToEdge,
            "repeat" => WrapMode::Repeat,
            "mirrored_repeat" => WrapMode::MirroredRepeat,
            _ => WrapMode::ClampToBorder,
        }
    }
}

/// What a pass's output size is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ScaleType {
    /// The pass's input (previous pass output).
    #[default]
    Source,
    /// A fixed number of pixels.
    Absolute,
    /// The final viewport.
    Viewport,
    /// The original (core) frame.
    Original,
}

/// Scale factor of one axis: a multiplier, or pixels for [`ScaleType::Absolute`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScaleFactor {
    /// Multiplier of the reference size.
    Float(f32),
    /// Size in pixels.
    Absolute(u32),
}

impl Default for ScaleFactor {
    fn default() -> Self {
        ScaleFactor::Float(1.0)
    }
}

/// Scaling of one axis.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Scaling {
    /// What the size is relative to.
    pub scale_type: ScaleType,
    /// The factor or pixel count.
    pub factor: ScaleFactor,
}

/// Output size rule of a pass.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Scale2D {
    /// A scale type was given for this pass (RetroArch's FBO_SCALE_FLAG_VALID); when false the
    /// runtime uses its default (source ×1, the last pass the viewport).
    pub valid: bool,
    /// Horizontal rule.
    pub x: Scaling,
    /// Vertical rule.
    pub y: Scaling,
}

/// One shader pass of a preset.
#[derive(Debug, Clone, PartialEq)]
pub struct PassConfig {
    /// Pass number (0-based).
    pub index: usize,
    /// Shader source, resolved against the preset that named it, wildcards applied.
    pub shader: PathBuf,
    /// The preset file and 1-based line of the `shaderN` key (for messages about the shader).
    pub shader_origin: (PathBuf, usize),
    /// `aliasN`, if given and non-empty.
    pub alias: Option<String>,
    /// `filter_linearN`; `None` when the key is absent (the runtime picks its default).
    pub filter: Option<FilterMode>,
    /// `wrap_modeN` (default clamp to border).
    pub wrap_mode: WrapMode,
    /// `frame_count_modN`; 0 means no modulo.
    pub frame_count_mod: u32,
    /// `srgb_framebufferN`.
    pub srgb_framebuffer: bool,
    /// `float_framebufferN`.
    pub float_framebuffer: bool,
    /// `mipmap_inputN`.
    pub mipmap_input: bool,
    /// Output size rule.
    pub scale: Scale2D,
}

/// One lookup texture (LUT) of a preset.
#[derive(Debug, Clone, PartialEq)]
pub struct TextureConfig {
    /// Sampler name in the shaders.
    pub name: String,
    /// Image file, resolved against the preset that named it (the last override wins).
    pub path: PathBuf,
    /// `NAME_linear`; [`FilterMode::Linear`] when absent, as RetroArch's drivers do.
    pub filter: FilterMode,
    /// `NAME_wrap_mode` (default clamp to border).
    pub wrap_mode: WrapMode,
    /// `NAME_mipmap`.
    pub mipmap: bool,
}

/// A parameter value set by the preset (matched by name against `#pragma parameter`).
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterValue {
    /// Parameter name.
    pub name: String,
    /// Value from the last preset in the reference tree that sets it.
    pub value: f32,
}

/// A fully resolved preset.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// The preset file that was loaded (as given).
    pub path: PathBuf,
    /// The preset whose passes and LUT list were used (differs from `path` for `#reference`
    /// presets).
    pub root: PathBuf,
    /// Passes in order.
    pub passes: Vec<PassConfig>,
    /// Lookup textures in `textures` order.
    pub textures: Vec<TextureConfig>,
    /// Parameter values, in order of first appearance.
    pub parameters: Vec<ParameterValue>,
}

impl Preset {
    /// The value the preset sets for parameter `name`, if any.
    pub fn parameter(&self, name: &str) -> Option<f32> {
        self.parameters
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.value)
    }
}

/// A preset that could not be loaded: which file, which line and what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetError {
    /// The preset file the problem is in.
    pub file: PathBuf,
    /// 1-based line, when the problem is on a line.
    pub line: Option<usize>,
    /// What went wrong.
    pub message: String,
}

impl PresetError {
    fn new(file: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        PresetError {
            file: file.to_path_buf(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for PresetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for PresetError {}

type Result<T> = std::result::Result<T, PresetError>;

// ---------------------------------------------------------------------------------------------
// Wildcards
// ---------------------------------------------------------------------------------------------

/// RetroArch's wildcard tokens in the order it replaces them.
const WILDCARD_ORDER: &[&str] = &[
    "CONTENT-DIR",
    "CORE",
    "GAME",
    "VID-DRV",
    "VID-DRV-PRESET-EXT",
    "VID-DRV-SHADER-EXT",
    "CORE-REQ-ROT",
    "VID-ALLOW-CORE-ROT",
    "VID-USER-ROT",
    "VID-FINAL-ROT",
    "SCREEN-ORIENT",
    "VIEW-ASPECT-ORIENT",
    "CORE-ASPECT-ORIENT",
    "PRESET-DIR",
    "PRESET_DIR",
    "PRESET",
];

/// Keys whose RetroArch replacement text repeats the key as a prefix (`CORE-REQ-ROT-90`).
const PREFIXED_KEYS: &[&str] = &[
    "CORE-REQ-ROT",
    "VID-ALLOW-CORE-ROT",
    "VID-USER-ROT",
    "VID-FINAL-ROT",
    "SCREEN-ORIENT",
    "VIEW-ASPECT-ORIENT",
    "CORE-ASPECT-ORIENT",
];

/// Values for `$NAME$` path wildcards.
///
/// [`WildcardContext::new`] starts from what RetroArch substitutes for an unrotated core on the
/// Vulkan driver: `VID-DRV` = `vulkan`, rotations 0, rotation allowed, horizontal aspect. The
/// shader/preset extensions default from the loaded preset's extension (`.cgp` → `cg`/`cgp`,
/// `.glslp` → `glsl`/`glslp`, else `slang`/`slangp`); `PRESET`/`PRESET-DIR` default to the stem
/// and directory name of the preset file naming the path; `VID-FINAL-ROT` defaults to user +
/// (allowed) core rotation. `CORE`, `GAME` and `CONTENT-DIR` have no default (left unreplaced).
#[derive(Debug, Clone, PartialEq)]
pub struct WildcardContext {
    values: HashMap<String, String>,
    /// Derive the shader/preset extensions from the loaded preset (`new`, not `empty`).
    driver_defaults: bool,
}

impl Default for WildcardContext {
    fn default() -> Self {
        Self::new()
    }
}

impl WildcardContext {
    /// A context with RetroArch's defaults for an unrotated core on Vulkan.
    pub fn new() -> Self {
        let mut values = HashMap::new();
        for (k, v) in [
            ("VID-DRV", "vulkan"),
            ("CORE-REQ-ROT", "CORE-REQ-ROT-0"),
            ("VID-ALLOW-CORE-ROT", "VID-ALLOW-CORE-ROT-ON"),
            ("VID-USER-ROT", "VID-USER-ROT-0"),
            ("SCREEN-ORIENT", "SCREEN-ORIENT-0"),
            ("VIEW-ASPECT-ORIENT", "VIEW-ASPECT-ORIENT-HORZ"),
            ("CORE-ASPECT-ORIENT", "CORE-ASPECT-ORIENT-HORZ"),
        ] {
            values.insert(k.to_string(), v.to_string());
        }
        WildcardContext {
            values,
            driver_defaults: true,
        }
    }

    /// A context with no values (like librashader's path-defaults-only context): only
    /// `PRESET`/`PRESET-DIR` are derived, and `VID-FINAL-ROT` once a rotation is set.
    pub fn empty() -> Self {
        WildcardContext {
            values: HashMap::new(),
            driver_defaults: false,
        }
    }

    /// Sets `$key$`'s replacement. For the rotation/orientation keys a bare value is prefixed the
    /// way RetroArch writes it (`set("CORE-REQ-ROT", "90")` → `CORE-REQ-ROT-90`). Any other key is
    /// replaced verbatim too (librashader's external context items).
    pub fn set(&mut self, key: &str, value: &str) {
        let key = key.trim_matches('$');
        let value = if PREFIXED_KEYS.contains(&key) && !value.starts_with(key) {
            format!("{key}-{value}")
        } else {
            value.to_string()
        };
        self.values.insert(key.to_string(), value);
    }

    /// The value set for `key` (defaults included, per-file derived ones not).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    fn rotation(&self, key: &str) -> u32 {
        self.get(key)
            .and_then(|v| v.rsplit('-').next())
            .and_then(|d| d.parse::<u32>().ok())
            .unwrap_or(0)
    }

    /// The replacement for `key` when the path was named by `preset_file` and the loaded preset is
    /// `top`.
    fn value_for(&self, key: &str, preset_file: &Path, top: &Path) -> Option<String> {
        if let Some(v) = self.values.get(key) {
            return Some(v.clone());
        }
        let ext = top
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match key {
            "PRESET" => preset_file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned()),
            "PRESET-DIR" | "PRESET_DIR" => self
                .values
                .get("PRESET-DIR")
                .or_else(|| self.values.get("PRESET_DIR"))
                .cloned()
                .or_else(|| {
                    preset_file
                        .parent()
                        .and_then(Path::file_name)
                        .map(|s| s.to_string_lossy().into_owned())
                }),
            "VID-DRV-SHADER-EXT" if self.driver_defaults => Some(
                match ext.as_deref() {
                    Some("cgp") => "cg",
                    Some("glslp") => "glsl",
                    _ => "slang",
                }
                .to_string(),
            ),
            "VID-DRV-PRESET-EXT" if self.driver_defaults => Some(
                match ext.as_deref() {
                    Some("cgp") => "cgp",
                    Some("glslp") => "glslp",
                    _ => "slangp",
                }
                .to_string(),
            ),
            "VID-FINAL-ROT"
                if self.values.contains_key("VID-USER-ROT")
                    || self.values.contains_key("CORE-REQ-ROT") =>
            {
                let allow = self
                    .get("VID-ALLOW-CORE-ROT")
                    .is_none_or(|v| v.ends_with("ON"));
                let core = if allow {
                    self.rotation("CORE-REQ-ROT")
                } else {
                    0
                };
                let total = (self.rotation("VID-USER-ROT") + core) % 360;
                Some(format!("VID-FINAL-ROT-{total}"))
            }
            _ => None,
        }
    }

    /// RetroArch's `video_shader_replace_wildcards`: replace the first occurrence of each token;
    /// keep the result only if a file exists there.
    fn apply(&self, path: PathBuf, preset_file: &Path, top: &Path) -> PathBuf {
        let Some(s) = path.to_str() else {
            return path;
        };
        if !s.contains('$') {
            return path;
        }
        let mut cur = s.to_string();
        let mut replaced = false;
        let mut extra: Vec<&str> = self
            .values
            .keys()
            .map(String::as_str)
            .filter(|k| !WILDCARD_ORDER.contains(k))
            .collect();
        extra.sort_unstable();
        for key in WILDCARD_ORDER.iter().copied().chain(extra) {
            if !cur.contains('$') {
                break;
            }
            let token = format!("${key}$");
            let Some(pos) = cur.find(&token) else {
                continue;
            };
            match self.value_for(key, preset_file, top) {
                Some(v) if !v.is_empty() => {
                    cur.replace_range(pos..pos + token.len(), &v);
                    replaced = true;
                }
                _ => {}
            }
        }
        if replaced && Path::new(&cur).exists() {
            PathBuf::from(cur)
        } else {
            path
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Entry {
    key: String,
    value: String,
    line: usize,
}

#[derive(Debug, Clone)]
struct Reference {
    path: String,
    line: usize,
}

#[derive(Debug, Default)]
struct Lexed {
    entries: Vec<Entry>,
    references: Vec<Reference>,
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

fn lex(text: &str) -> std::result::Result<Lexed, (usize, String)> {
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

// ---------------------------------------------------------------------------------------------
// Value parsing
// ---------------------------------------------------------------------------------------------

/// Trims whitespace and the trailing `;` presets like to add.
fn strip_value(s: &str) -> &str {
    s.trim().trim_end_matches(';').trim_end()
}

fn parse_bool(s: &str) -> Option<bool> {
    match strip_value(s) {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// An integer the way RetroArch's `strtol(.., 0)` would read the whole value (hex `0x`, octal
/// leading `0`), or a float truncated toward zero.
fn parse_int(s: &str) -> Option<i64> {
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

fn parse_float(s: &str) -> Option<f32> {
    strip_value(s).parse::<f32>().ok()
}

/// C `strtod` on the longest numeric prefix; 0 when there is none (RetroArch's
/// `config_get_float` for a declared parameter).
fn strtod_prefix(s: &str) -> f32 {
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

/// `key` is `prefix` followed by only decimal digits; returns the index.
fn indexed(key: &str, prefix: &str) -> Option<usize> {
    let digits = key.strip_prefix(prefix)?;
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

const PASS_KEY_PREFIXES: &[&str] = &[
    "shader",
    "filter_linear",
    "wrap_mode",
    "repeat_mode",
    "texture_wrap_mode",
    "frame_count_mod",
    "srgb_framebuffer",
    "float_framebuffer",
    "mipmap_input",
    "mipmap",
    "alias",
    "scale_type_x",
    "scale_type_y",
    "scale_type",
    "scale_x",
    "scale_y",
    "scale",
];

const LUT_SUFFIXES: &[&str] = &["_linear", "_mipmap", "_wrap_mode", "_repeat_mode"];

// ---------------------------------------------------------------------------------------------
// Files and the reference tree
// ---------------------------------------------------------------------------------------------

struct PresetFile {
    path: PathBuf,
    entries: Vec<Entry>,
    first: HashMap<String, usize>,
    references: Vec<Reference>,
}

impl PresetFile {
    fn new(path: PathBuf, text: &str) -> Result<Self> {
        let lexed = lex(text).map_err(|(line, msg)| PresetError::new(&path, Some(line), msg))?;
        let mut first = HashMap::new();
        for (i, e) in lexed.entries.iter().enumerate() {
            first.entry(e.key.clone()).or_insert(i);
        }
        Ok(PresetFile {
            path,
            entries: lexed.entries,
            first,
            references: lexed.references,
        })
    }

    fn get(&self, key: &str) -> Option<&Entry> {
        self.first.get(key).map(|&i| &self.entries[i])
    }

    fn err(&self, line: Option<usize>, message: impl Into<String>) -> PresetError {
        PresetError::new(&self.path, line, message)
    }
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Reads a preset file with the size bound.
fn read_preset_text(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_PRESET_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PRESET_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("file is larger than {MAX_PRESET_BYTES} bytes"),
        ));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

struct Loader<'w> {
    wildcards: &'w WildcardContext,
    top: PathBuf,
    files: Vec<PresetFile>,
    by_key: HashMap<PathBuf, usize>,
    visits: usize,
}

impl Loader<'_> {
    fn file_key(path: &Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| normalize(path))
    }

    /// Resolves a path written in preset `file` (relative to it, `~`, `\`, wildcards).
    fn resolve(&self, file: usize, raw: &str) -> PathBuf {
        let preset = &self.files[file].path;
        let mut s = raw.to_string();
        if !cfg!(windows) {
            s = s.replace('\\', "/");
        }
        if let Some(rest) = s.strip_prefix('~') {
            if rest.is_empty() || rest.starts_with('/') {
                if let Some(home) = std::env::var_os("HOME") {
                    s = format!("{}{}", home.to_string_lossy(), rest);
                }
            }
        }
        let p = Path::new(&s);
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            preset.parent().unwrap_or(Path::new("")).join(p)
        };
        self.wildcards.apply(normalize(&joined), preset, &self.top)
    }

    fn add(&mut self, path: PathBuf, text: &str) -> Result<usize> {
        let key = Self::file_key(&path);
        let f = PresetFile::new(path, text)?;
        self.files.push(f);
        let idx = self.files.len() - 1;
        self.by_key.insert(key, idx);
        Ok(idx)
    }

    /// Loads the preset named by reference `r` of file `from`.
    fn load_reference(&mut self, from: usize, r: &Reference) -> Result<usize> {
        let path = self.resolve(from, &r.path);
        let key = Self::file_key(&path);
        if let Some(&i) = self.by_key.get(&key) {
            return Ok(i);
        }
        let text = read_preset_text(&path).map_err(|e| {
            self.files[from].err(
                Some(r.line),
                format!("cannot read referenced preset {}: {e}", path.display()),
            )
        })?;
        self.add(path, &text)
    }

    /// Follows first references from `start` to the root preset (RetroArch's
    /// `video_shader_get_root_preset_config`).
    fn root_of(&mut self, start: usize) -> Result<usize> {
        let mut chain = vec![start];
        let mut cur = start;
        while let Some(r) = self.files[cur].references.first().cloned() {
            if chain.len() > MAX_REFERENCE_DEPTH {
                return Err(self.files[cur].err(
                    Some(r.line),
                    format!(
                        "#reference chain is longer than {MAX_REFERENCE_DEPTH} presets without \
                         reaching one with `shaders`"
                    ),
                ));
            }
            let next = self.load_reference(cur, &r)?;
            if chain.contains(&next) {
                return Err(self.cycle_error(cur, &r, &chain, next));
            }
            chain.push(next);
            cur = next;
        }
        Ok(cur)
    }

    fn cycle_error(&self, from: usize, r: &Reference, stack: &[usize], next: usize) -> PresetError {
        let start = stack.iter().position(|&i| i == next).unwrap_or(0);
        let names: Vec<String> = stack[start..]
            .iter()
            .chain(std::iter::once(&next))
            .map(|&i| self.files[i].path.display().to_string())
            .collect();
        self.files[from].err(
            Some(r.line),
            format!("#reference cycle: {}", names.join(" -> ")),
        )
    }

    /// Post-order walk of the reference tree (RetroArch's
    /// `video_shader_gather_reference_path_list`): referenced presets before the referencing one.
    fn gather(&mut self, f: usize, stack: &mut Vec<usize>, out: &mut Vec<usize>) -> Result<()> {
        self.visits += 1;
        if self.visits > MAX_REFERENCE_VISITS {
            return Err(self.files[f].err(
                None,
                format!("#reference tree visits more than {MAX_REFERENCE_VISITS} presets"),
            ));
        }
        stack.push(f);
        let refs = self.files[f].references.clone();
        for r in &refs {
            let next = self.load_reference(f, r)?;
            if stack.contains(&next) {
                return Err(self.cycle_error(f, r, stack, next));
            }
            if stack.len() > MAX_REFERENCE_DEPTH {
                return Err(self.files[f].err(
                    Some(r.line),
                    format!("#reference nesting is deeper than {MAX_REFERENCE_DEPTH} presets"),
                ));
            }
            self.gather(next, stack, out)?;
        }
        stack.pop();
        out.push(f);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Building the preset
// ---------------------------------------------------------------------------------------------

fn bool_key(file: &PresetFile, key: &str) -> Result<Option<bool>> {
    match file.get(key) {
        None => Ok(None),
        Some(e) => parse_bool(&e.value).map(Some).ok_or_else(|| {
            file.err(
                Some(e.line),
                format!("{key}: expected true, false, 1 or 0, found {:?}", e.value),
            )
        }),
    }
}

fn parse_scale_type(file: &PresetFile, e: &Entry) -> Result<ScaleType> {
    match strip_value(&e.value) {
        "source" => Ok(ScaleType::Source),
        "viewport" => Ok(ScaleType::Viewport),
        "absolute" => Ok(ScaleType::Absolute),
        "original" => Ok(ScaleType::Original),
        other => Err(file.err(
            Some(e.line),
            format!(
                "{}: unknown scale type {other:?} (expected source, viewport, absolute or \
                 original)",
                e.key
            ),
        )),
    }
}

fn parse_pass(
    loader: &Loader,
    root: usize,
    i: usize,
    n: usize,
    count_line: usize,
) -> Result<PassConfig> {
    let file = &loader.files[root];
    let shader_key = format!("shader{i}");
    let shader = match file.get(&shader_key) {
        None => {
            return Err(file.err(
                Some(count_line),
                format!(
                    "`shaders = {n}` declares passes 0 to {} but there is no `{shader_key}` line",
                    n - 1
                ),
            ))
        }
        Some(e) if strip_value(&e.value).is_empty() => {
            return Err(file.err(
                Some(e.line),
                format!("{shader_key}: expected a shader path, found an empty value"),
            ))
        }
        Some(e) => (loader.resolve(root, &e.value), e.line),
    };
    let (shader, shader_line) = shader;

    let filter = bool_key(file, &format!("filter_linear{i}"))?.map(|linear| {
        if linear {
            FilterMode::Linear
        } else {
            FilterMode::Nearest
        }
    });
    let wrap_mode = ["wrap_mode", "repeat_mode", "texture_wrap_mode"]
        .iter()
        .find_map(|p| file.get(&format!("{p}{i}")))
        .filter(|e| !e.value.is_empty())
        .map(|e| WrapMode::from_preset_str(&e.value))
        .unwrap_or_default();
    let frame_count_mod = match file.get(&format!("frame_count_mod{i}")) {
        Some(e) if !strip_value(&e.value).is_empty() => match parse_int(&e.value) {
            Some(n) if (0..=i64::from(u32::MAX)).contains(&n) => n as u32,
            _ => {
                return Err(file.err(
                    Some(e.line),
                    format!(
                        "{}: expected an unsigned integer, found {:?}",
                        e.key, e.value
                    ),
                ))
            }
        },
        _ => 0,
    };
    let srgb_framebuffer = bool_key(file, &format!("srgb_framebuffer{i}"))?.unwrap_or(false);
    let float_framebuffer = bool_key(file, &format!("float_framebuffer{i}"))?.unwrap_or(false);
    let mipmap_input = bool_key(file, &format!("mipmap_input{i}"))?.unwrap_or(false);
    let alias = file
        .get(&format!("alias{i}"))
        .map(|e| e.value.trim().to_string())
        .filter(|a| !a.is_empty());

    let scale = parse_scale(file, i)?;
    Ok(PassConfig {
        index: i,
        shader,
        shader_origin: (file.path.clone(), shader_line),
        alias,
        filter,
        wrap_mode,
        frame_count_mod,
        srgb_framebuffer,
        float_framebuffer,
        mipmap_input,
        scale,
    })
}

fn parse_scale(file: &PresetFile, i: usize) -> Result<Scale2D> {
    let ty = |k: &str| -> Result<Option<ScaleType>> {
        match file.get(&format!("{k}{i}")) {
            Some(e) if !strip_value(&e.value).is_empty() => parse_scale_type(file, e).map(Some),
            _ => Ok(None),
        }
    };
    let both = ty("scale_type")?;
    let (tx, ty_) = match both {
        Some(t) => (Some(t), Some(t)),
        None => (ty("scale_type_x")?, ty("scale_type_y")?),
    };
    if tx.is_none() && ty_.is_none() {
        return Ok(Scale2D::default());
    }
    let axis = |t: ScaleType, axis_key: &str| -> Result<Scaling> {
        let e = file
            .get(&format!("scale{i}"))
            .or_else(|| file.get(&format!("{axis_key}{i}")));
        let factor = if t == ScaleType::Absolute {
            let Some(e) = e else {
                return Err(file.err(
                    None,
                    format!(
                        "pass {i}: absolute scale needs `scale{i}` or `{axis_key}{i}` (pixels)"
                    ),
                ));
            };
            match parse_int(&e.value) {
                Some(n) if (0..=i64::from(MAX_ABSOLUTE_SCALE)).contains(&n) => {
                    ScaleFactor::Absolute(n as u32)
                }
                _ => {
                    return Err(file.err(
                        Some(e.line),
                        format!(
                            "{}: expected a pixel count 0..={MAX_ABSOLUTE_SCALE} for an absolute \
                             scale, found {:?}",
                            e.key, e.value
                        ),
                    ))
                }
            }
        } else {
            match e {
                None => ScaleFactor::Float(1.0),
                Some(e) => match parse_float(&e.value) {
                    Some(f) if f.is_finite() && f >= 0.0 => ScaleFactor::Float(f),
                    _ => {
                        return Err(file.err(
                            Some(e.line),
                            format!(
                                "{}: expected a non-negative number, found {:?}",
                                e.key, e.value
                            ),
                        ))
                    }
                },
            }
        };
        Ok(Scaling {
            scale_type: t,
            factor,
        })
    };
    Ok(Scale2D {
        valid: true,
        x: axis(tx.unwrap_or_default(), "scale_x")?,
        y: axis(ty_.unwrap_or_default(), "scale_y")?,
    })
}

fn parse_textures(loader: &Loader, root: usize) -> Result<Vec<TextureConfig>> {
    let file = &loader.files[root];
    let Some(list) = file.get("textures") else {
        return Ok(Vec::new());
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for name in list
        .value
        .split(';')
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        if !seen.insert(name) {
            continue;
        }
        if out.len() >= MAX_TEXTURES {
            return Err(file.err(
                Some(list.line),
                format!("textures: more than {MAX_TEXTURES} lookup textures"),
            ));
        }
        let path = match file.get(name) {
            Some(e) if !e.value.trim().is_empty() => loader.resolve(root, &e.value),
            Some(e) => {
                return Err(file.err(
                    Some(e.line),
                    format!("texture {name:?}: expected an image path, found an empty value"),
                ))
            }
            None => {
                return Err(file.err(
                    Some(list.line),
                    format!(
                        "texture {name:?} is listed in `textures` but there is no `{name} = \
                         path` line"
                    ),
                ))
            }
        };
        let filter = match bool_key(file, &format!("{name}_linear"))? {
            Some(false) => FilterMode::Nearest,
            _ => FilterMode::Linear,
        };
        let mipmap = bool_key(file, &format!("{name}_mipmap"))?.unwrap_or(false);
        let wrap_mode = ["_wrap_mode", "_repeat_mode"]
            .iter()
            .find_map(|s| file.get(&format!("{name}{s}")))
            .filter(|e| !e.value.is_empty())
            .map(|e| WrapMode::from_preset_str(&e.value))
            .unwrap_or_default();
        out.push(TextureConfig {
            name: name.to_string(),
            path,
            filter,
            wrap_mode,
            mipmap,
        });
    }
    Ok(out)
}

fn is_structural_key(key: &str, luts: &HashSet<&str>) -> bool {
    if matches!(key, "shaders" | "feedback_pass" | "textures" | "parameters") {
        return true;
    }
    if PASS_KEY_PREFIXES.iter().any(|p| indexed(key, p).is_some()) {
        return true;
    }
    if luts.contains(key) {
        return true;
    }
    LUT_SUFFIXES
        .iter()
        .any(|s| key.strip_suffix(s).is_some_and(|name| luts.contains(name)))
}

fn build(loader: &mut Loader, top: usize) -> Result<Preset> {
    let root = loader.root_of(top)?;

    // RetroArch: additional references of the loaded preset may only carry overrides.
    let extra: Vec<Reference> = loader.files[top]
        .references
        .iter()
        .skip(1)
        .cloned()
        .collect();
    for r in &extra {
        let f = loader.load_reference(top, r)?;
        let sub_root = loader.root_of(f)?;
        if loader.files[sub_root].get("shaders").is_some() {
            return Err(loader.files[top].err(
                Some(r.line),
                format!(
                    "only the first #reference may lead to a preset with passes; {} (via {}) \
                     has `shaders`",
                    loader.files[sub_root].path.display(),
                    r.path
                ),
            ));
        }
    }

    let root_file = &loader.files[root];
    let Some(count) = root_file.get("shaders") else {
        let via = if root == top {
            String::new()
        } else {
            format!(
                " (root preset reached by #reference from {})",
                loader.files[top].path.display()
            )
        };
        return Err(root_file.err(
            None,
            format!("no `shaders = N` line: a preset must declare its pass count{via}"),
        ));
    };
    let n = match parse_int(&count.value) {
        Some(n) if (1..=MAX_PASSES as i64).contains(&n) => n as usize,
        Some(n) => {
            return Err(root_file.err(
                Some(count.line),
                format!("shaders: expected a pass count 1..={MAX_PASSES}, found {n}"),
            ))
        }
        None => {
            return Err(root_file.err(
                Some(count.line),
                format!("shaders: expected a pass count, found {:?}", count.value),
            ))
        }
    };
    let count_line = count.line;
    let passes = (0..n)
        .map(|i| parse_pass(loader, root, i, n, count_line))
        .collect::<Result<Vec<_>>>()?;
    let mut textures = parse_textures(loader, root)?;

    let mut order = Vec::new();
    loader.gather(top, &mut Vec::new(), &mut order)?;
    if !order.contains(&root) {
        order.insert(0, root);
    }

    let lut_names: Vec<String> = textures.iter().map(|t| t.name.clone()).collect();
    let lut_set: HashSet<&str> = lut_names.iter().map(String::as_str).collect();
    let mut declared: HashSet<String> = HashSet::new();
    for &f in &order {
        if let Some(e) = loader.files[f].get("parameters") {
            declared.extend(
                e.value
                    .split(';')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string),
            );
        }
    }

    let mut parameters: Vec<ParameterValue> = Vec::new();
    let mut param_index: HashMap<String, usize> = HashMap::new();
    for &f in &order {
        let file = &loader.files[f];
        for (k, &ei) in sorted_first(file) {
            let e = &file.entries[ei];
            if is_structural_key(k, &lut_set) {
                continue;
            }
            let value = match parse_float(&e.value) {
                Some(v) => v,
                None if declared.contains(k) => strtod_prefix(&e.value),
                None => continue,
            };
            match param_index.get(k) {
                Some(&pi) => parameters[pi].value = value,
                None => {
                    param_index.insert(k.to_string(), parameters.len());
                    parameters.push(ParameterValue {
                        name: k.to_string(),
                        value,
                    });
                }
            }
        }
        if f != root {
            for t in textures.iter_mut() {
                if let Some(e) = file.get(&t.name) {
                    if e.value.trim().is_empty() {
                        return Err(file.err(
                            Some(e.line),
                            format!(
                                "texture {:?}: expected an image path, found an empty value",
                                t.name
                            ),
                        ));
                    }
                    t.path = loader.resolve(f, &e.value);
                }
            }
        }
    }

    Ok(Preset {
        path: loader.files[top].path.clone(),
        root: loader.files[root].path.clone(),
        passes,
        textures,
        parameters,
    })
}

/// The first entry of each key, in file order.
fn sorted_first(file: &PresetFile) -> Vec<(&str, &usize)> {
    let mut v: Vec<(&str, &usize)> = file.first.iter().map(|(k, i)| (k.as_str(), i)).collect();
    v.sort_by_key(|&(_, &i)| i);
    v
}

/// Loads the preset at `path`, following `#reference` lines and applying `wildcards`.
pub fn load_preset(path: &Path, wildcards: &WildcardContext) -> Result<Preset> {
    let text = read_preset_text(path)
        .map_err(|e| PresetError::new(path, None, format!("cannot read preset: {e}")))?;
    parse_preset_str(&text, path, wildcards)
}

/// Parses preset `text` as if it were the file `path` (which need not exist): `#reference` and
/// relative shader/LUT paths resolve against `path`'s directory.
pub fn parse_preset_str(text: &str, path: &Path, wildcards: &WildcardContext) -> Result<Preset> {
    let mut loader = Loader {
        wildcards,
        top: path.to_path_buf(),
        files: Vec::new(),
        by_key: HashMap::new(),
        visits: 0,
    };
    let top = loader.add(path.to_path_buf(), text)?;
    build(&mut loader, top)
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
