//! Suite files for `softgpu test`: a TOML list of cases, each an expected image and how to
//! render the actual one.
//!
//! ```toml
//! [defaults]               # optional; any case may override these
//! tolerance = 1            # per-channel, in 1/255 steps (default 0)
//! max_pixels = 0.0         # percent of pixels allowed over the tolerance (default 0)
//! size = "64x64"           # draw default 64x64
//!
//! [[case]]
//! name = "tex_linear"
//! kind = "draw"            # optional: "preset" when `preset` is given, else "draw"
//! dir = "../reference-images/draw/tex_linear"   # optional base for this case's paths
//! vs = "vs.tgsi"           # TGSI text; `.wgsl` and `.slang` files are compiled first
//! fs = "fs.tgsi"
//! vertices = "vertices.txt"
//! consts = "consts.txt"    # optional
//! textures = { 0 = "tex0.png" }
//! filter = "linear"        # linear | nearest
//! wrap = "repeat"          # repeat | clamp | mirror | border
//! convention = "gl"        # gl | vulkan | webgpu (default: by the vertex shader's language)
//! expected = "out.png"
//!
//! [[case]]                 # RetroArch preset, rendered as `softgpu render` does
//! name = "crt"
//! preset = "shaders/crt.slangp"
//! input = "frame.png"
//! size = "640x480"
//! frames = 3
//! params = { SCANLINE_WEIGHT = 0.4 }
//! expected = "crt.png"
//! ```
//!
//! Relative paths are taken from the suite file's directory, joined with the case's `dir` when
//! it has one. Errors name the suite file, the line and what was expected.

use super::{CompareOptions, GoldenError};
use crate::raster::ClipConvention;
use crate::texture::{Filter, Texture, Wrap};
use serde::{Deserialize, Deserializer};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// A parsed suite.
#[derive(Clone, Debug)]
pub struct Suite {
    /// The suite file.
    pub path: PathBuf,
    /// The cases, in file order.
    pub cases: Vec<Case>,
}

/// One case of a suite.
#[derive(Clone, Debug)]
pub struct Case {
    /// Its unique name.
    pub name: String,
    /// Line of its `[[case]]` table in the suite file (0 for a case of a corpus).
    pub line: usize,
    /// The expected image.
    pub expected: PathBuf,
    /// How close the actual image must be.
    pub options: CompareOptions,
    /// What to render.
    pub kind: CaseKind,
}

/// What a case renders.
#[derive(Clone, Debug)]
pub enum CaseKind {
    /// One `softgpu draw` call.
    Draw(DrawCase),
    /// A RetroArch preset run through the filter chain.
    Preset(PresetCase),
}

/// The inputs of a draw case (as `softgpu draw` takes them).
#[derive(Clone, Debug)]
pub struct DrawCase {
    /// Vertex shader (TGSI text).
    pub vs: PathBuf,
    /// Fragment shader (TGSI text).
    pub fs: PathBuf,
    /// Vertex file.
    pub vertices: PathBuf,
    /// Constant file.
    pub consts: Option<PathBuf>,
    /// Texture unit → image.
    pub textures: Vec<(u32, PathBuf)>,
    /// Texture filter.
    pub filter: Filter,
    /// Texture wrap mode.
    pub wrap: Wrap,
    /// Output size.
    pub size: (u32, u32),
    /// Clip-space convention; `None` = the vertex shader's language's (as `softgpu draw`).
    pub convention: Option<ClipConvention>,
}

/// The inputs of a preset case.
#[derive(Clone, Debug)]
pub struct PresetCase {
    /// The `.slangp` / `.cgp` preset.
    pub preset: PathBuf,
    /// The input frame.
    pub input: Option<PathBuf>,
    /// Output size.
    pub size: Option<(u32, u32)>,
    /// Frames to run before capturing the output.
    pub frames: u32,
    /// Shader parameter overrides.
    pub params: BTreeMap<String, f64>,
}

/// A number written as a TOML integer or float.
#[derive(Clone, Copy, Debug)]
struct Number(f64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Number, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Number;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number(v))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum KindSpec {
    Draw,
    Preset,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum FilterSpec {
    Linear,
    Nearest,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum WrapSpec {
    Repeat,
    Clamp,
    Mirror,
    Border,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ConventionSpec {
    Gl,
    Vulkan,
    Webgpu,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Defaults {
    tolerance: Option<u8>,
    max_pixels: Option<Number>,
    size: Option<toml::Spanned<String>>,
    filter: Option<FilterSpec>,
    wrap: Option<WrapSpec>,
    convention: Option<ConventionSpec>,
    frames: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseSpec {
    name: String,
    kind: Option<KindSpec>,
    dir: Option<String>,
    expected: String,
    tolerance: Option<u8>,
    max_pixels: Option<Number>,
    size: Option<toml::Spanned<String>>,
    vs: Option<String>,
    fs: Option<String>,
    vertices: Option<String>,
    consts: Option<String>,
    textures: Option<BTreeMap<String, String>>,
    filter: Option<FilterSpec>,
    wrap: Option<WrapSpec>,
    convention: Option<ConventionSpec>,
    preset: Option<String>,
    input: Option<String>,
    frames: Option<u32>,
    params: Option<BTreeMap<String, Number>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteSpec {
    #[serde(default)]
    defaults: Defaults,
    #[serde(default)]
    case: Vec<toml::Spanned<CaseSpec>>,
}

/// 1-based line and column of a byte offset.
fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(source.len());
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    let before = &source[..end];
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    (line, col)
}

/// Parses `WxH` (each side 1..=`Texture::MAX_DIMENSION`).
pub fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let parse = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|v| (1..=Texture::MAX_DIMENSION).contains(v))
    };
    text.split_once(['x', 'X'])
        .and_then(|(w, h)| Some((parse(w)?, parse(h)?)))
        .ok_or_else(|| {
            format!(
                "expected a size `WxH` with sides 1..={}, found `{text}`",
                Texture::MAX_DIMENSION
            )
        })
}

fn percent(value: Option<Number>, what: &str) -> Result<Option<f64>, String> {
    match value {
        None => Ok(None),
        Some(Number(p)) if p.is_finite() && (0.0..=100.0).contains(&p) => Ok(Some(p)),
        Some(Number(p)) => Err(format!(
            "{what}: expected a percentage in 0..=100, found {p}"
        )),
    }
}

impl Suite {
    /// Reads and parses a suite file.
    pub fn load(path: &Path) -> Result<Suite, GoldenError> {
        let source =
            crate::input::read_text(path, "suite file", crate::input::MAX_CONFIG_FILE_BYTES)
                .map_err(|e| GoldenError::Suite(e.to_string()))?;
        Suite::parse(path, &source)
    }

    /// Parses suite text; `path` names the file in errors and anchors relative paths.
    pub fn parse(path: &Path, source: &str) -> Result<Suite, GoldenError> {
        let file = path.display();
        let spec: SuiteSpec = toml::from_str(source).map_err(|e| {
            let message = e.message().trim().to_string();
            match e.span() {
                Some(span) => {
                    let (line, col) = line_col(source, span.start);
                    GoldenError::Suite(format!("{file}:{line}:{col}: {message}"))
                }
                None => GoldenError::Suite(format!("{file}: {message}")),
            }
        })?;
        let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
        if spec.case.is_empty() {
            return Err(GoldenError::Suite(format!(
                "{file}: expected at least one [[case]] table, found none"
            )));
        }
        let defaults = &spec.defaults;
        let default_size = match &defaults.size {
            Some(size) => Some(parse_size(size.get_ref()).map_err(|e| {
                let (line, _) = line_col(source, size.span().start);
                GoldenError::Suite(format!("{file}:{line}: defaults: size: {e}"))
            })?),
            None => None,
        };
        let default_percent = percent(defaults.max_pixels, "defaults: max_pixels")
            .map_err(|e| GoldenError::Suite(format!("{file}: {e}")))?;

        let mut cases = Vec::with_capacity(spec.case.len());
        let mut seen: HashMap<String, usize> = HashMap::new();
        for spanned in &spec.case {
            let (line, _) = line_col(source, spanned.span().start);
            let c = spanned.get_ref();
            let fail = |message: String| {
                GoldenError::Suite(format!("{file}:{line}: case `{}`: {message}", c.name))
            };
            if c.name.trim().is_empty() {
                return Err(GoldenError::Suite(format!(
                    "{file}:{line}: case: expected a non-empty `name`"
                )));
            }
            if let Some(first) = seen.insert(c.name.clone(), line) {
                return Err(fail(format!(
                    "duplicate case name (first defined at line {first})"
                )));
            }
            let dir = match &c.dir {
                Some(dir) => base.join(dir),
                None => base.clone(),
            };
            let resolve = |p: &str| dir.join(p);
            let size = match &c.size {
                Some(size) => Some(parse_size(size.get_ref()).map_err(|e| {
                    let (line, _) = line_col(source, size.span().start);
                    GoldenError::Suite(format!("{file}:{line}: case `{}`: size: {e}", c.name))
                })?),
                None => default_size,
            };
            let options = CompareOptions {
                tolerance: c.tolerance.or(defaults.tolerance).unwrap_or(0),
                max_pixels_percent: percent(c.max_pixels, "max_pixels")
                    .map_err(fail)?
                    .or(default_percent)
                    .unwrap_or(0.0),
            };
            let kind = c.kind.unwrap_or(if c.preset.is_some() {
                KindSpec::Preset
            } else {
                KindSpec::Draw
            });
            let kind = match kind {
                KindSpec::Draw => {
                    let preset_only = [
                        ("preset", c.preset.is_some()),
                        ("input", c.input.is_some()),
                        ("frames", c.frames.is_some()),
                        ("params", c.params.is_some()),
                    ];
                    if let Some((key, _)) = preset_only.iter().find(|(_, set)| *set) {
                        return Err(fail(format!(
                            "`{key}` belongs to preset cases, but this is a draw case"
                        )));
                    }
                    let required = |key: &str, value: &Option<String>| {
                        value.as_deref().map(resolve).ok_or_else(|| {
                            fail(format!("a draw case needs `{key}` (a path), found none"))
                        })
                    };
                    let mut textures = Vec::new();
                    for (unit, image) in c.textures.iter().flatten() {
                        let unit: u32 =
                            unit.trim()
                                .parse()
                                .ok()
                                .filter(|u| *u < 32)
                                .ok_or_else(|| {
                                    fail(format!(
                                    "textures: expected unit numbers 0..31 as keys, found `{unit}`"
                                ))
                                })?;
                        textures.push((unit, resolve(image)));
                    }
                    CaseKind::Draw(DrawCase {
                        vs: required("vs", &c.vs)?,
                        fs: required("fs", &c.fs)?,
                        vertices: required("vertices", &c.vertices)?,
                        consts: c.consts.as_deref().map(resolve),
                        textures,
                        filter: match c.filter.or(defaults.filter) {
                            Some(FilterSpec::Nearest) => Filter::Nearest,
                            Some(FilterSpec::Linear) | None => Filter::Linear,
                        },
                        wrap: match c.wrap.or(defaults.wrap) {
                            Some(WrapSpec::Repeat) | None => Wrap::Repeat,
                            Some(WrapSpec::Clamp) => Wrap::ClampToEdge,
                            Some(WrapSpec::Mirror) => Wrap::MirroredRepeat,
                            Some(WrapSpec::Border) => Wrap::ClampToBorder,
                        },
                        size: size.unwrap_or((64, 64)),
                        convention: c.convention.or(defaults.convention).map(|c| match c {
                            ConventionSpec::Gl => ClipConvention::OpenGl,
                            ConventionSpec::Vulkan => ClipConvention::Vulkan,
                            ConventionSpec::Webgpu => ClipConvention::WebGpu,
                        }),
                    })
                }
                KindSpec::Preset => {
                    let draw_only = [
                        ("vs", c.vs.is_some()),
                        ("fs", c.fs.is_some()),
                        ("vertices", c.vertices.is_some()),
                        ("consts", c.consts.is_some()),
                        ("textures", c.textures.is_some()),
                        ("filter", c.filter.is_some()),
                        ("wrap", c.wrap.is_some()),
                        ("convention", c.convention.is_some()),
                    ];
                    if let Some((key, _)) = draw_only.iter().find(|(_, set)| *set) {
                        return Err(fail(format!(
                            "`{key}` belongs to draw cases, but this is a preset case"
                        )));
                    }
                    let preset = c.preset.as_deref().map(resolve).ok_or_else(|| {
                        fail(
                            "a preset case needs `preset` (a .slangp/.cgp path), found none".into(),
                        )
                    })?;
                    let mut params = BTreeMap::new();
                    for (key, Number(value)) in c.params.iter().flatten() {
                        if !value.is_finite() {
                            return Err(fail(format!(
                                "params: `{key}` must be a finite number, found {value}"
                            )));
                        }
                        params.insert(key.clone(), *value);
                    }
                    CaseKind::Preset(PresetCase {
                        preset,
                        input: c.input.as_deref().map(resolve),
                        size,
                        frames: c.frames.or(defaults.frames).unwrap_or(1),
                        params,
                    })
                }
            };
            cases.push(Case {
                name: c.name.clone(),
                line,
                expected: resolve(&c.expected),
                options,
                kind,
            });
        }
        Ok(Suite {
            path: path.to_path_buf(),
            cases,
        })
    }

    /// Indices of the cases `selection` picks, in suite order.
    pub fn select(&self, selection: &Selection) -> Vec<usize> {
        (0..self.cases.len())
            .filter(|&i| selection.picks(i, &self.cases[i].name))
            .collect()
    }
}

/// Which cases of a suite to run: `--filter` and `--shard`.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// A case runs when its name matches any pattern (all run when empty). A pattern with `*` or
    /// `?` is a glob over the whole name; otherwise it matches any name that contains it.
    pub filters: Vec<String>,
    /// `(K, N)`: only cases whose 0-based index in the suite file is `K-1` modulo `N`.
    pub shard: Option<(usize, usize)>,
}

impl Selection {
    /// Whether case `index` named `name` is selected.
    pub fn picks(&self, index: usize, name: &str) -> bool {
        let in_shard = match self.shard {
            // A hand-built shard of N = 0 or K = 0 selects nothing rather than dividing by zero.
            Some((k, n)) => n > 0 && index % n == k.wrapping_sub(1),
            None => true,
        };
        in_shard && (self.filters.is_empty() || self.filters.iter().any(|f| name_matches(f, name)))
    }
}

/// Parses `K/N` with `1 <= K <= N`.
pub fn parse_shard(text: &str) -> Result<(usize, usize), GoldenError> {
    let parsed = text.split_once('/').and_then(|(k, n)| {
        let k: usize = k.trim().parse().ok()?;
        let n: usize = n.trim().parse().ok()?;
        (k >= 1 && k <= n).then_some((k, n))
    });
    parsed.ok_or_else(|| {
        GoldenError::Options(format!(
            "--shard: expected K/N with 1 <= K <= N (e.g. 2/4), found `{text}`"
        ))
    })
}

/// Filter matching: a glob (`*` any run of characters, `?` one character) over the whole name
/// when the pattern has a wildcard, else a substring test.
pub fn name_matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return name.contains(pattern);
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative glob with backtracking to the last `*`: linear in practice, no recursion.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}
