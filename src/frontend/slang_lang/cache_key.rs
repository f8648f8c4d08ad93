//! The shader-cache key of a Slang stage, made without running Slang: the library's identity
//! (its path, size and modification time, so another Slang version is another key), the stage,
//! the entry point, the search paths, macros and further arguments, and the text of the file and of every module
//! it imports or file it includes, found by following `import`, `__include` and `#include` lines
//! through the file's directory and the search paths.
//!
//! The scan can miss what only Slang resolves (a macro-built include path, for one). A stage is
//! therefore stored only when every file Slang reported reading is among the scanned ones
//! ([`covers`]): then the same texts give the same scan and a hit is sound, and a changed file
//! that starts importing another changes the key through its own text.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{library, SlangOptions};
use crate::frontend::vulkan_glsl::Stage;

/// The most files one key follows (a bound against import cycles through odd paths).
const MAX_FILES: usize = 256;

/// The key of `stage` of the Slang file at `path`, and the files it covers; `None` when the
/// library cannot be found or a file cannot be read (the stage is then compiled uncached, and
/// the compile reports the problem).
pub fn cache_key(
    path: &Path,
    stage: Stage,
    options: &SlangOptions,
) -> Option<(String, BTreeSet<PathBuf>)> {
    let library = library::find_library(options.library.as_deref()).ok()?;
    let meta = std::fs::metadata(&library).ok()?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let mut key = format!(
        "library {} {} {modified}\nstage {}\nentry {:?}\ninclude {:?}\ndefine {:?}\nargs {:?}\n",
        library.display(),
        meta.len(),
        stage.name(),
        options.entry,
        options.include_dirs,
        options.defines,
        options.extra_args
    );
    let mut seen = BTreeSet::new();
    let mut queue = vec![std::fs::canonicalize(path).ok()?];
    while let Some(file) = queue.pop() {
        if !seen.insert(file.clone()) {
            continue;
        }
        if seen.len() > MAX_FILES {
            return None;
        }
        let text =
            crate::input::read_text(&file, "shader", crate::input::MAX_SHADER_FILE_BYTES).ok()?;
        key.push_str(&format!("file {} {}\n", file.display(), text.len()));
        key.push_str(&text);
        key.push('\n');
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for reference in references(&text) {
            if let Some(found) = resolve(&reference, &dir, &options.include_dirs) {
                queue.push(found);
            }
        }
    }
    Some((key, seen))
}

/// Whether every file Slang read (`dependencies`) is one the key covers.
pub fn covers(covered: &BTreeSet<PathBuf>, dependencies: &[PathBuf]) -> bool {
    dependencies.iter().all(|d| {
        std::fs::canonicalize(d)
            .map(|c| covered.contains(&c))
            .unwrap_or(false)
    })
}

/// What a module refers to: candidate relative file names of its `import`, `__include` and
/// `#include` lines.
fn references(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let quoted = |rest: &str| {
            let rest = rest.trim();
            rest.strip_prefix('"')
                .and_then(|r| r.split_once('"'))
                .map(|(name, _)| name.to_string())
        };
        if let Some(rest) = line
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix("include"))
        {
            if let Some(name) = quoted(rest) {
                out.push(vec![name]);
            }
            continue;
        }
        let rest = line
            .strip_prefix("import ")
            .or_else(|| line.strip_prefix("__include "))
            .or_else(|| line.strip_prefix("__import "));
        let Some(rest) = rest else {
            continue;
        };
        if let Some(name) = quoted(rest) {
            out.push(vec![name]);
            continue;
        }
        // `import a.b_c;` is the file a/b_c.slang, or a/b-c.slang.
        let module = rest.split(';').next().unwrap_or("").trim();
        if module.is_empty()
            || !module
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        {
            continue;
        }
        let file = module.replace('.', "/");
        out.push(vec![
            format!("{file}.slang"),
            format!("{}.slang", file.replace('_', "-")),
        ]);
    }
    out
}

/// The first existing file among `names` in `dir`, then in each search path.
fn resolve(names: &[String], dir: &Path, include_dirs: &[PathBuf]) -> Option<PathBuf> {
    std::iter::once(dir)
        .chain(include_dirs.iter().map(PathBuf::as_path))
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok())
}

#[cfg(test)]
mod tests {
    use super::references;

    #[test]
    fn imports_and_includes_name_their_files() {
        let text =
            "import shading;\nimport lib.my_mod;\n__include \"x.slang\";\n#include \"h.h\"\n";
        let refs = references(text);
        assert_eq!(refs[0], vec!["shading.slang", "shading.slang"]);
        assert_eq!(refs[1], vec!["lib/my_mod.slang", "lib/my-mod.slang"]);
        assert_eq!(refs[2], vec!["x.slang"]);
        assert_eq!(refs[3], vec!["h.h"]);
    }
}
