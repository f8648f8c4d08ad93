//! The files of a preset and its `#reference` tree: reading them (bounded), resolving the
//! paths they name (relative to the naming file, `~`, `\`, wildcards), finding the root preset
//! and gathering the tree depth first, with cycles and depth bounded.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::lex::{lex, Entry, Reference};
use super::wildcards::WildcardContext;
use super::{PresetError, Result, MAX_PRESET_BYTES, MAX_REFERENCE_DEPTH};

/// Most preset files visited while gathering a reference tree (bounds diamond-shaped blowups).
const MAX_REFERENCE_VISITS: usize = 4096;

pub(super) struct PresetFile {
    pub(super) path: PathBuf,
    pub(super) entries: Vec<Entry>,
    pub(super) first: HashMap<String, usize>,
    pub(super) references: Vec<Reference>,
}

impl PresetFile {
    pub(super) fn new(path: PathBuf, text: &str) -> Result<Self> {
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

    pub(super) fn get(&self, key: &str) -> Option<&Entry> {
        self.first.get(key).map(|&i| &self.entries[i])
    }

    pub(super) fn err(&self, line: Option<usize>, message: impl Into<String>) -> PresetError {
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

/// Reads a preset file through [`crate::input`] (a regular file of at most
/// [`MAX_PRESET_BYTES`]; a FIFO or device is refused by name); the error is the reason only,
/// for the caller to put after the file and line it names.
pub(super) fn read_preset_text(path: &Path) -> std::result::Result<String, String> {
    let bytes =
        crate::input::read_bytes(path, "preset", MAX_PRESET_BYTES).map_err(|e| e.message)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

pub(super) struct Loader<'w> {
    pub(super) wildcards: &'w WildcardContext,
    pub(super) top: PathBuf,
    pub(super) files: Vec<PresetFile>,
    pub(super) by_key: HashMap<PathBuf, usize>,
    pub(super) visits: usize,
}

impl Loader<'_> {
    fn file_key(path: &Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| normalize(path))
    }

    /// Resolves a path written in preset `file` (relative to it, `~`, `\`, wildcards).
    pub(super) fn resolve(&self, file: usize, raw: &str) -> PathBuf {
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

    pub(super) fn add(&mut self, path: PathBuf, text: &str) -> Result<usize> {
        let key = Self::file_key(&path);
        let f = PresetFile::new(path, text)?;
        self.files.push(f);
        let idx = self.files.len() - 1;
        self.by_key.insert(key, idx);
        Ok(idx)
    }

    /// Loads the preset named by reference `r` of file `from`.
    pub(super) fn load_reference(&mut self, from: usize, r: &Reference) -> Result<usize> {
        let path = self.resolve(from, &r.path);
        let key = Self::file_key(&path);
        if let Some(&i) = self.by_key.get(&key) {
            return Ok(i);
        }
        let text = read_preset_text(&path).map_err(|e| {
            self.files[from].err(
                Some(r.line),
                format!(
                    "cannot read referenced preset {}: {}",
                    path.display(),
                    e.trim_start_matches("cannot read preset: ")
                ),
            )
        })?;
        self.add(path, &text)
    }

    /// Follows first references from `start` to the root preset (RetroArch's
    /// `video_shader_get_root_preset_config`).
    pub(super) fn root_of(&mut self, start: usize) -> Result<usize> {
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
    pub(super) fn gather(
        &mut self,
        f: usize,
        stack: &mut Vec<usize>,
        out: &mut Vec<usize>,
    ) -> Result<()> {
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
