//! softgpu's on-disk cache, shared by the kernel cache (`softgpu-jit`) and the shader cache
//! (`softgpu::shader`): where the directory is, how entries are named, written, read and pruned.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

/// The directory's size bound used by `store`'s pruning.
pub const MAX_CACHE_BYTES: u64 = 256 << 20;

/// Entries larger than this are not read (a real one is well under a megabyte).
pub const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// A 128-bit hash of `value`, stable within a build: names cache entries and checks them for
/// accidental damage (not tampering: whoever can write the cache can write the binary).
pub fn hash128<T: Hash + ?Sized>(value: &T) -> u128 {
    let half = |salt: u8| {
        let mut h = std::hash::DefaultHasher::new();
        salt.hash(&mut h);
        value.hash(&mut h);
        h.finish()
    };
    (u128::from(half(1)) << 64) | u128::from(half(2))
}

/// What reading a cache entry found.
pub enum EntryFile {
    /// No entry.
    Missing,
    /// Something that cannot be an entry: not a file, over [`MAX_ENTRY_BYTES`], unreadable.
    Unusable,
    /// The entry's bytes.
    Bytes(Vec<u8>),
}

/// Reads the cache entry at `path`, bounded by [`MAX_ENTRY_BYTES`].
pub fn read_entry_file(path: &Path) -> EntryFile {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => EntryFile::Missing,
        Ok(meta) if meta.is_file() && meta.len() <= MAX_ENTRY_BYTES => {
            std::fs::read(path).map_or(EntryFile::Unusable, EntryFile::Bytes)
        }
        _ => EntryFile::Unusable,
    }
}

/// Marks the entry at `path` as just used: its modification time orders entries for
/// [`prune`]. A cache that cannot be written to still serves hits, so failures are ignored.
pub fn mark_used(path: &Path) {
    let _ = std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(SystemTime::now()));
}

/// Writes `bytes` to `path` through a temporary file in `dir` renamed over it (concurrent
/// readers see the old entry or the new one, never half of one).
pub fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static SEQUENCE: AtomicUsize = AtomicUsize::new(0);
    std::fs::create_dir_all(dir)?;
    let temporary = dir.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    ));
    let written =
        std::fs::write(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Extension of the filter chain's entries of specialized pass programs (JSON, kept apart from
/// the `.json` shader entries).
pub const SPECIALIZATION_EXTENSION: &str = "specialized";

/// When a cache directory's entries (`.json` shaders, `.kernel` kernels, `.specialized`
/// specializations of pass programs) total more than
/// `limit` bytes, removes the least recently used until they total at most three quarters of it.
pub fn prune(dir: &Path, limit: u64) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = listing
        .flatten()
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "json" || x == "kernel" || x == SPECIALIZATION_EXTENSION)
        })
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    if total <= limit {
        return;
    }
    entries.sort();
    for (_, len, path) in entries {
        if total <= limit / 4 * 3 {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

/// Where the cache lives when the caller names none: `$SOFTGPU_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/softgpu`, else `$HOME/.cache/softgpu`.
pub fn default_shader_cache_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("SOFTGPU_CACHE_DIR")
        .or_else(|| {
            var("XDG_CACHE_HOME")
                .filter(|p| p.is_absolute())
                .map(|p| p.join("softgpu"))
        })
        .or_else(|| var("HOME").map(|home| home.join(".cache").join("softgpu")))
}

/// What reading a JSON cache entry found.
pub enum Read<T> {
    /// No entry.
    Missing,
    /// Something that is no entry of this kind (see [`read_entry_file`]), or not its JSON.
    Unusable,
    /// The entry, still to be checked against what it should hold.
    Entry(Box<T>),
}

/// Reads the JSON entry at `path`.
pub fn read_entry<T: serde::de::DeserializeOwned>(path: &Path) -> Read<T> {
    match read_entry_file(path) {
        EntryFile::Missing => Read::Missing,
        EntryFile::Unusable => Read::Unusable,
        EntryFile::Bytes(bytes) => match serde_json::from_slice::<T>(&bytes) {
            Ok(entry) => Read::Entry(Box::new(entry)),
            Err(_) => Read::Unusable,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prune_removes_the_least_recently_used_entries_first() {
        let dir = std::env::temp_dir().join(format!("softgpu-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("directory");
        let now = SystemTime::now();
        for (name, age) in [
            ("0.json", 30u64),
            ("1.kernel", 10),
            ("2.json", 20),
            ("3.kernel", 40),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, vec![b' '; 100]).expect("write");
            let file = std::fs::File::options()
                .write(true)
                .open(&path)
                .expect("open");
            file.set_modified(now - std::time::Duration::from_secs(age))
                .expect("set time");
        }
        std::fs::write(dir.join("other.txt"), vec![b' '; 1000]).expect("write");
        prune(&dir, 400);
        assert_eq!(std::fs::read_dir(&dir).expect("list").count(), 5);
        // 400 bytes of entries over a 399-byte limit: the two oldest go (down to 200 <= 299).
        prune(&dir, 399);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .expect("list")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(left, ["1.kernel", "2.json", "other.txt"]);
    }
}
