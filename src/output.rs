//! Writing the files softgpu produces — rendered and drawn images, compiled shaders, suite
//! reports, diffs and goldens — so that a run that fails never damages a file that was there.
//!
//! Every output is written to a temporary file in the directory of its destination, then renamed
//! over it: the destination holds either its old bytes or all of the new ones, never a
//! truncated or half-written file. [`check_output`] refuses, before any work starts, a path the
//! output could not be written to (an extension the writer does not produce, a directory or
//! device in the way, a missing or unwritable directory), so a long render does not end in an
//! error it could have given at once.

use std::fmt;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an output could not be written; the message names the file and what it was.
#[derive(Debug)]
pub struct OutputError {
    /// The destination.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for OutputError {}

fn error(path: &Path, message: String) -> OutputError {
    OutputError {
        path: path.to_path_buf(),
        message,
    }
}

/// The directory a file at `path` lives in (`.` for a bare file name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The path the bytes really go to: a symbolic link is followed, so that the file it names is
/// replaced and the link kept.
fn destination(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Temporary files of this process get distinct names.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates a new, empty temporary file next to `path` (same directory, so the final rename never
/// crosses file systems); returns it and its path.
fn create_temp(path: &Path) -> std::io::Result<(std::fs::File, PathBuf)> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_string());
    let dir = directory_of(path);
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.{}.{n}.softgpu-tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((file, temp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Checks, before any work is done, that `what` (e.g. `--output`) can be written at `path`:
/// what [`check_output_name`] checks, and that its directory exists and accepts new files.
pub fn check_output(path: &Path, what: &str, extensions: &[&str]) -> Result<(), OutputError> {
    check_output_name(path, what, extensions)?;
    let path = &destination(path);
    let dir = directory_of(path);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(error(
                path,
                format!("{what}: {} is not a directory", dir.display()),
            ))
        }
        Err(e) => {
            return Err(error(
                path,
                format!("{what}: directory {}: {e}", dir.display()),
            ))
        }
    }
    // A file made and removed at once: the directory accepts the temporary file the output is
    // written to.
    let (_, temp) = create_temp(path).map_err(|e| {
        error(
            path,
            format!("{what}: cannot create a file in {}: {e}", dir.display()),
        )
    })?;
    let _ = std::fs::remove_file(temp);
    Ok(())
}

/// Checks, before any work is done, the name of the file `what` will be written to: its
/// extension is one of `extensions` (lowercase, without the dot; empty accepts any) and the
/// path is not a directory, device or read-only file. (For outputs whose directory is created
/// when they are written.)
pub fn check_output_name(path: &Path, what: &str, extensions: &[&str]) -> Result<(), OutputError> {
    if !extensions.is_empty() {
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let listed = extensions
            .iter()
            .map(|e| format!(".{e}"))
            .collect::<Vec<_>>()
            .join(", ");
        match extension {
            Some(e) if extensions.contains(&e.as_str()) => {}
            Some(e) => {
                return Err(error(
                    path,
                    format!("{what}: unsupported output format `.{e}`; expected {listed}"),
                ))
            }
            None => {
                return Err(error(
                    path,
                    format!("{what}: the file name has no extension; expected {listed}"),
                ))
            }
        }
    }
    let path = &destination(path);
    if let Ok(metadata) = std::fs::metadata(path) {
        if !metadata.is_file() {
            let kind = if metadata.is_dir() {
                "a directory"
            } else {
                "not a regular file"
            };
            return Err(error(
                path,
                format!("{what}: the path is {kind}; expected a file to write"),
            ));
        }
        if metadata.permissions().readonly() {
            return Err(error(
                path,
                format!("{what}: the file is read-only; it is left as it is"),
            ));
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically: into a temporary file in the same directory, then
/// renamed over `path`. On any error the temporary file is removed and `path` is untouched. An
/// existing file keeps its permissions (a read-only one is refused, as a plain write would be);
/// a symbolic link keeps pointing where it did.
pub fn write_atomic(path: &Path, what: &str, bytes: &[u8]) -> Result<(), OutputError> {
    write_atomic_with(path, what, |file| file.write_all(bytes))
}

/// [`write_atomic`] with the bytes produced by `write` into the temporary file.
pub fn write_atomic_with(
    path: &Path,
    what: &str,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), OutputError> {
    let path = &destination(path);
    let existing = std::fs::metadata(path).ok();
    if existing.as_ref().is_some_and(|m| !m.is_file()) {
        return Err(error(
            path,
            format!("cannot write {what}: the path exists and is not a regular file"),
        ));
    }
    // A rename would replace a read-only file that a plain write could not open.
    if existing
        .as_ref()
        .is_some_and(|m| m.permissions().readonly())
    {
        return Err(error(
            path,
            format!("cannot write {what}: the file is read-only"),
        ));
    }
    let (file, temp) = create_temp(path).map_err(|e| {
        error(
            path,
            format!(
                "cannot write {what}: cannot create a file in {}: {e}",
                directory_of(path).display()
            ),
        )
    })?;
    let result = (|| {
        let mut writer = std::io::BufWriter::new(file);
        write(&mut writer)?;
        let file = writer.into_inner().map_err(|e| e.into_error())?;
        if let Some(metadata) = &existing {
            file.set_permissions(metadata.permissions())?;
        }
        drop(file);
        std::fs::rename(&temp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        error(path, format!("cannot write {what}: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("softgpu-tmp"))
            .collect()
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.png");
        std::fs::write(&path, b"old").unwrap();
        let e = write_atomic_with(&path, "image", |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("encoder failed"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("encoder failed"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert!(leftovers(dir.path()).is_empty());
        write_atomic(&path, "image", b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_read_only_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("golden.png");
        std::fs::write(&path, b"old").unwrap();
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        permissions.set_readonly(true);
        std::fs::set_permissions(&path, permissions).unwrap();
        let e = write_atomic(&path, "PNG", b"new").unwrap_err();
        assert!(e.to_string().contains("read-only"), "{e}");
        let e = check_output(&path, "--out", &["png"]).unwrap_err();
        assert!(e.to_string().contains("read-only"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn extensions_are_checked_case_insensitively() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("a.PNG");
        check_output(&ok, "--out", &["png"]).unwrap();
        let e = check_output(&dir.path().join("a.jpg"), "--out", &["png"]).unwrap_err();
        assert!(
            e.to_string().contains("unsupported output format `.jpg`"),
            "{e}"
        );
        let e = check_output(&dir.path().join("a"), "--out", &["png"]).unwrap_err();
        assert!(e.to_string().contains("no extension"), "{e}");
        check_output(&dir.path().join("a"), "-o", &[]).unwrap();
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_directory_or_missing_directory_is_refused_up_front() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("x.png");
        std::fs::create_dir(&sub).unwrap();
        let e = check_output(&sub, "--output", &["png"]).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let e = check_output(&dir.path().join("missing/x.png"), "--output", &["png"]).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        assert!(write_atomic(&sub, "image", b"x").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_keeps_pointing_at_the_rewritten_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.png");
        let link = dir.path().join("link.png");
        std::fs::write(&target, b"old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, "image", b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }
}
