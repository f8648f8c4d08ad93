//! RetroArch shader presets (`.slangp`, `.cgp`, `.glslp`): lexing, `#reference` chains,
//! path wildcards and the per-pass / per-LUT / parameter settings a filter chain needs.
//!
//! This file holds the preset model and the entry points ([`load_preset`],
//! [`parse_preset_str`]); `lex.rs` reads a file's entries and values, `reference.rs` the files
//! of the `#reference` tree and the paths they name, `wildcards.rs` the `$NAME$` tokens, and
//! `build.rs` makes the [`Preset`] from the files.
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
//!   truncated (both parsers do so in effect) — except the pass count: `shaders = 1.5` is an
//!   error here. Booleans are `true`, `false`, `1`, `0` (trailing `;`
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

mod build;
mod lex;
mod reference;
mod wildcards;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use build::build;
use lex::strip_value;
use reference::{read_preset_text, Loader};
pub use wildcards::WildcardContext;

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
    /// The preset file and 1-based line of the `NAME = path` entry `path` came from (for
    /// messages about the image).
    pub path_origin: (PathBuf, usize),
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
    pub(super) fn new(file: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
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

pub(super) type Result<T> = std::result::Result<T, PresetError>;

/// Loads the preset at `path`, following `#reference` lines and applying `wildcards`.
pub fn load_preset(path: &Path, wildcards: &WildcardContext) -> Result<Preset> {
    let text = read_preset_text(path).map_err(|e| PresetError::new(path, None, e))?;
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
