//! Corpus suites: every RetroArch preset (`.slangp`, `.cgp`) under a directory is a preset case
//! whose golden sits at the same relative path under a goldens directory (`softgpu test
//! --presets`), and the TOML suite that runs the same cases (`softgpu test init`).
//!
//! The golden of `PRESETS/a/b.slangp` is `GOLDENS/a/b.png`. When two presets of one directory
//! differ only in their extension (`b.slangp` and `b.cgp`), each keeps it: `b.slangp.png` and
//! `b.cgp.png`. Cases are in the order of their relative paths (component by component), so a
//! `--shard K/N` selects the same presets on every machine.

use super::suite::{Case, CaseKind, PresetCase, Suite};
use super::{CompareOptions, GoldenError};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

/// The most presets a corpus may hold: the walk of a directory tree a user names is bounded.
pub const MAX_PRESETS: usize = 100_000;

/// The deepest directory nesting the walk descends into.
pub const MAX_DEPTH: usize = 64;

/// The extensions of the files that are cases (compared without regard to ASCII case).
pub const PRESET_EXTENSIONS: [&str; 2] = ["slangp", "cgp"];

/// A corpus: the presets, the frame they render and where their goldens are.
#[derive(Clone, Debug)]
pub struct Corpus {
    /// The directory searched (recursively) for presets.
    pub presets: PathBuf,
    /// The input frame of every case (an image, or a directory of PNG frames).
    pub input: PathBuf,
    /// The goldens' root: the tree of `presets` mirrored, `.png` for the preset's extension.
    pub goldens: PathBuf,
    /// Output size; the input's size when `None`.
    pub size: Option<(u32, u32)>,
    /// Frames to run before the output is captured (at least 1).
    pub frames: u32,
    /// How close each case's image must be to its golden.
    pub options: CompareOptions,
}

/// One preset of a corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusEntry {
    /// Its path relative to the presets directory.
    pub preset: PathBuf,
    /// Its golden's path relative to the goldens directory.
    pub golden: PathBuf,
    /// The case name: the relative path with `/` between components.
    pub name: String,
}

fn options_error(message: String) -> GoldenError {
    GoldenError::Options(message)
}

fn is_preset(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| PRESET_EXTENSIONS.iter().any(|p| e.eq_ignore_ascii_case(p)))
}

/// The presets under `dir`, relative to it, sorted. Directories whose name starts with `.`
/// (`.git`) are skipped, and symbolic links to directories are not followed (a link cannot make
/// the walk loop); links to files are cases like the files.
pub fn find_presets(dir: &Path) -> Result<Vec<PathBuf>, GoldenError> {
    let meta = std::fs::metadata(dir)
        .map_err(|e| options_error(format!("--presets {}: {e}", dir.display())))?;
    if !meta.is_dir() {
        return Err(options_error(format!(
            "--presets {}: expected a directory of presets, found a file",
            dir.display()
        )));
    }
    let mut found = Vec::new();
    let mut pending = vec![(PathBuf::new(), 0usize)];
    while let Some((relative, depth)) = pending.pop() {
        let absolute = dir.join(&relative);
        let entries = std::fs::read_dir(&absolute)
            .map_err(|e| options_error(format!("--presets: {}: {e}", absolute.display())))?;
        for entry in entries {
            let entry = entry
                .map_err(|e| options_error(format!("--presets: {}: {e}", absolute.display())))?;
            let name = entry.file_name();
            let path = relative.join(&name);
            let file_type = entry.file_type().map_err(|e| {
                options_error(format!("--presets: {}: {e}", entry.path().display()))
            })?;
            if file_type.is_dir() {
                if name.to_string_lossy().starts_with('.') {
                    continue;
                }
                if depth + 1 > MAX_DEPTH {
                    return Err(options_error(format!(
                        "--presets: {}: directories nest deeper than {MAX_DEPTH} levels",
                        entry.path().display()
                    )));
                }
                pending.push((path, depth + 1));
            } else if is_preset(&path) && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file())
            {
                if found.len() == MAX_PRESETS {
                    return Err(options_error(format!(
                        "--presets {}: more than {MAX_PRESETS} presets",
                        dir.display()
                    )));
                }
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// `a/b/c.slangp` as a case name: components joined by `/` on every platform.
fn case_name(relative: &Path) -> String {
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The entries of the presets found under `dir`, with their goldens (see the module docs).
pub fn corpus_entries(dir: &Path) -> Result<Vec<CorpusEntry>, GoldenError> {
    let presets = find_presets(dir)?;
    let mut uses: HashMap<PathBuf, usize> = HashMap::new();
    for preset in &presets {
        *uses.entry(preset.with_extension("png")).or_default() += 1;
    }
    Ok(presets
        .into_iter()
        .map(|preset| {
            let plain = preset.with_extension("png");
            let golden = if uses[&plain] > 1 {
                let mut file = preset.file_name().unwrap_or_default().to_os_string();
                file.push(".png");
                preset.with_file_name(file)
            } else {
                plain
            };
            CorpusEntry {
                name: case_name(&preset),
                preset,
                golden,
            }
        })
        .collect())
}

impl Corpus {
    /// Checks what every case needs before any runs: a directory holding at least one preset
    /// and an input that exists. Returns the presets.
    pub fn entries(&self) -> Result<Vec<CorpusEntry>, GoldenError> {
        self.options.validate()?;
        if self.frames == 0 {
            return Err(options_error(
                "--frames: expected at least 1, found 0".into(),
            ));
        }
        std::fs::metadata(&self.input)
            .map_err(|e| options_error(format!("--input {}: {e}", self.input.display())))?;
        let entries = corpus_entries(&self.presets)?;
        if entries.is_empty() {
            return Err(options_error(format!(
                "--presets {}: no .slangp or .cgp file under it",
                self.presets.display()
            )));
        }
        Ok(entries)
    }

    /// The suite of this corpus: one preset case per preset, named by its relative path.
    pub fn suite(&self) -> Result<Suite, GoldenError> {
        let cases = self
            .entries()?
            .into_iter()
            .map(|entry| Case {
                name: entry.name,
                line: 0,
                expected: self.goldens.join(&entry.golden),
                options: self.options,
                kind: CaseKind::Preset(PresetCase {
                    preset: self.presets.join(&entry.preset),
                    input: Some(self.input.clone()),
                    size: self.size,
                    frames: self.frames,
                    params: BTreeMap::new(),
                }),
            })
            .collect();
        Ok(Suite {
            path: self.presets.clone(),
            cases,
        })
    }

    /// The TOML suite of this corpus, for a suite file in `suite_dir`: its paths are relative
    /// to that directory where the two share more than the root, else absolute.
    pub fn suite_toml(&self, suite_dir: &Path) -> Result<String, GoldenError> {
        let entries = self.entries()?;
        let from = absolute(suite_dir)?;
        let path_text = |path: &Path| -> Result<String, GoldenError> {
            let relative = relative_path(&from, &absolute(path)?);
            let text = relative.to_str().ok_or_else(|| {
                options_error(format!(
                    "{}: the path is not valid UTF-8, which a TOML suite cannot hold",
                    path.display()
                ))
            })?;
            Ok(toml_string(&text.replace('\\', "/")))
        };
        let mut toml = String::new();
        let _ = writeln!(
            toml,
            "# One case per preset under {} (written by `softgpu test init`).\n\
             # Paths are relative to this file; the format is in softgpu's docs/golden-tests.md.\n",
            self.presets.display()
        );
        toml.push_str("[defaults]\n");
        let _ = writeln!(toml, "tolerance = {}", self.options.tolerance);
        let _ = writeln!(toml, "max_pixels = {}", self.options.max_pixels_percent);
        let _ = writeln!(toml, "frames = {}", self.frames);
        if let Some((w, h)) = self.size {
            let _ = writeln!(toml, "size = \"{w}x{h}\"");
        }
        let input = path_text(&self.input)?;
        for entry in &entries {
            let _ = write!(
                toml,
                "\n[[case]]\nname = {}\npreset = {}\ninput = {input}\nexpected = {}\n",
                toml_string(&entry.name),
                path_text(&self.presets.join(&entry.preset))?,
                path_text(&self.goldens.join(&entry.golden))?,
            );
        }
        Ok(toml)
    }
}

/// `path` made absolute against the current directory, with `.` and `..` resolved by name.
fn absolute(path: &Path) -> Result<PathBuf, GoldenError> {
    let joined =
        std::path::absolute(path).map_err(|e| options_error(format!("{}: {e}", path.display())))?;
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    Ok(normal)
}

/// `to` relative to the directory `from` (both absolute and normalized); `to` itself when they
/// share no more than the root.
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<Component> = from.components().collect();
    let to_parts: Vec<Component> = to.components().collect();
    let common = from
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let shares_only_root = from
        .iter()
        .take(common)
        .all(|c| matches!(c, Component::RootDir | Component::Prefix(_)));
    if shares_only_root {
        return to.to_path_buf();
    }
    let mut relative = PathBuf::new();
    for _ in common..from.len() {
        relative.push("..");
    }
    for part in &to_parts[common..] {
        relative.push(part);
    }
    relative
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_to_the_common_directory() {
        let rel = relative_path(Path::new("/a/b/suites"), Path::new("/a/b/presets/x.slangp"));
        assert_eq!(rel, Path::new("../presets/x.slangp"));
        assert_eq!(
            relative_path(Path::new("/a"), Path::new("/a/x.png")),
            Path::new("x.png")
        );
        // Only the root in common: the absolute path.
        assert_eq!(
            relative_path(Path::new("/home/u"), Path::new("/tmp/p.slangp")),
            Path::new("/tmp/p.slangp")
        );
    }

    #[test]
    fn toml_strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(toml_string("a\"b\\c\u{1}"), "\"a\\\"b\\\\c\\u0001\"");
        let parsed: toml::Value =
            toml::from_str(&format!("k = {}", toml_string("x\"\\\ty"))).unwrap();
        assert_eq!(parsed["k"].as_str(), Some("x\"\\\ty"));
    }
}
