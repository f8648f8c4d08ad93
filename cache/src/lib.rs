//! softgpu's on-disk cache: one directory of entries shared by the kernel cache (`softgpu-jit`'s
//! `codegen::disk`) and the shader cache (`softgpu::shader::cache`), so that later processes of
//! the same build skip work an earlier one did.
//!
//! The contract every entry kind keeps:
//! - **Directory.** [`default_dir`] when the caller names none: `$SOFTGPU_CACHE_DIR`, else
//!   `$XDG_CACHE_HOME/softgpu` (an absolute one), else `$HOME/.cache/softgpu`. It is created
//!   when the first entry is written.
//! - **Names.** An entry is `{hash:032x}.{extension}`: the [`hash128`] of a key holding
//!   everything the entry is made from (the caller's build identifier first), the extension
//!   its [`Kind`]'s. Equal inputs find the same name; a colliding name is caught on reading.
//! - **Reads.** An entry is read only when it is a file of at most [`MAX_ENTRY_BYTES`], and used
//!   only when the caller's check of its identity (its build and the exact inputs it was made
//!   from) accepts it ([`Cache::load`]); anything else — truncated, corrupt, foreign, stale —
//!   is [`Lookup::Rejected`], for the caller to rebuild and store again. A used entry is marked
//!   (its modification time) for pruning.
//! - **Writes.** Through a temporary file in the same directory renamed over the entry, so
//!   concurrent processes see the old entry or the new one, never half of one. A directory that
//!   cannot be written only loses the entry.
//! - **Pruning.** After each write, when the entries total more than [`MAX_CACHE_BYTES`], the
//!   least recently used go until they total at most three quarters of it.
//!
//! The crate knows entries as bytes or JSON; what an entry holds and how its identity is
//! checked is its writer's business.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

/// The cache directory's size bound (every kind of entry together); past it the least recently
/// used entries go.
pub const MAX_CACHE_BYTES: u64 = 256 << 20;

/// Entries larger than this are not read (a real one is well under a megabyte).
pub const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// The kinds of entries a cache directory holds, each with its file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Compiled shader stages: what the frontends, the lowering and the cleanup made of a
    /// source (JSON).
    Shader,
    /// A pass's fragment program specialized for its constants and texture units (JSON).
    Specialization,
    /// Machine code of a compiled kernel (binary, see `softgpu-jit`'s `codegen::disk`).
    Kernel,
}

impl Kind {
    /// Every kind, for pruning.
    const ALL: [Kind; 3] = [Kind::Shader, Kind::Specialization, Kind::Kernel];

    /// The file extension of this kind's entries.
    pub fn extension(self) -> &'static str {
        match self {
            Kind::Shader => "json",
            Kind::Specialization => "specialized",
            Kind::Kernel => "kernel",
        }
    }
}

/// What looking an entry up found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup<T> {
    /// No entry of that name.
    Missing,
    /// An entry that cannot be used: unreadable, too large, not of its kind's format, or not
    /// what its identity check wanted.
    Rejected,
    /// The entry's contents, accepted by the identity check.
    Hit(T),
}

impl<T> Lookup<T> {
    /// The contents of a hit.
    pub fn hit(self) -> Option<T> {
        match self {
            Lookup::Hit(value) => Some(value),
            Lookup::Missing | Lookup::Rejected => None,
        }
    }
}

/// One cache directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The cache in `dir` (created when the first entry is stored).
    pub fn new(dir: PathBuf) -> Cache {
        Cache { dir }
    }

    /// The cache's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry of `kind` made from `key` lives.
    pub fn entry_path<K: Hash + ?Sized>(&self, kind: Kind, key: &K) -> PathBuf {
        self.dir
            .join(format!("{:032x}.{}", hash128(key), kind.extension()))
    }

    /// The entry of `kind` made from `key`, as `accept` makes it of the entry's bytes (`None`:
    /// the entry is not what the key asks for). A hit marks the entry as used.
    pub fn load<K: Hash + ?Sized, T>(
        &self,
        kind: Kind,
        key: &K,
        accept: impl FnOnce(Vec<u8>) -> Option<T>,
    ) -> Lookup<T> {
        let path = self.entry_path(kind, key);
        let bytes = match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Missing,
            Ok(meta) if meta.is_file() && meta.len() <= MAX_ENTRY_BYTES => {
                match std::fs::read(&path) {
                    Ok(bytes) => bytes,
                    Err(_) => return Lookup::Rejected,
                }
            }
            _ => return Lookup::Rejected,
        };
        match accept(bytes) {
            Some(value) => {
                mark_used(&path);
                Lookup::Hit(value)
            }
            None => Lookup::Rejected,
        }
    }

    /// [`Cache::load`] of an entry stored as the JSON of an `E`.
    pub fn load_json<K: Hash + ?Sized, E: serde::de::DeserializeOwned, T>(
        &self,
        kind: Kind,
        key: &K,
        accept: impl FnOnce(E) -> Option<T>,
    ) -> Lookup<T> {
        self.load(kind, key, |bytes| {
            accept(serde_json::from_slice::<E>(&bytes).ok()?)
        })
    }

    /// Writes `bytes` as the entry of `kind` made from `key`, then prunes the directory; false
    /// when the entry could not be written.
    pub fn store<K: Hash + ?Sized>(&self, kind: Kind, key: &K, bytes: &[u8]) -> bool {
        let path = self.entry_path(kind, key);
        let written = write_atomically(&self.dir, &path, bytes).is_ok();
        if written {
            prune(&self.dir, MAX_CACHE_BYTES);
        }
        written
    }

    /// [`Cache::store`] of `entry` as JSON.
    pub fn store_json<K: Hash + ?Sized, E: serde::Serialize>(
        &self,
        kind: Kind,
        key: &K,
        entry: &E,
    ) -> bool {
        match serde_json::to_vec(entry) {
            Ok(bytes) => self.store(kind, key, &bytes),
            Err(_) => false,
        }
    }
}

/// Where the cache lives when the caller names none: `$SOFTGPU_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/softgpu`, else `$HOME/.cache/softgpu`.
pub fn default_dir() -> Option<PathBuf> {
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

/// Marks the entry at `path` as just used: its modification time orders entries for
/// [`prune`]. A cache that cannot be written to still serves hits, so failures are ignored.
fn mark_used(path: &Path) {
    let _ = std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(SystemTime::now()));
}

/// Writes `bytes` to `path` through a temporary file in `dir` renamed over it (concurrent
/// readers see the old entry or the new one, never half of one).
fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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

/// When a cache directory's entries (files with the extension of a [`Kind`]) total more than
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
                .is_some_and(|x| Kind::ALL.iter().any(|k| x == k.extension()))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("softgpu-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn prune_removes_the_least_recently_used_entries_first() {
        let dir = scratch("prune");
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

    #[test]
    fn entries_are_found_by_key_and_checked_by_the_reader() {
        let dir = scratch("lookup");
        let cache = Cache::new(dir.clone());
        let key = ("build", "source");
        assert_eq!(cache.load(Kind::Shader, &key, Some), Lookup::Missing);
        assert!(cache.store_json(Kind::Shader, &key, &vec![1u32, 2]));
        let read = |want: u32| {
            cache.load_json(Kind::Shader, &key, |v: Vec<u32>| {
                (v.first() == Some(&want)).then_some(v)
            })
        };
        assert_eq!(read(1), Lookup::Hit(vec![1, 2]));
        assert_eq!(read(2), Lookup::Rejected, "the identity check refuses it");
        assert_eq!(
            cache.load_json(Kind::Shader, &key, |v: String| Some(v)),
            Lookup::Rejected,
            "not the JSON of the entry type"
        );
        assert_eq!(
            cache.load(Kind::Kernel, &key, Some),
            Lookup::Missing,
            "kinds do not share entries"
        );
        let names: Vec<String> = std::fs::read_dir(&dir)
            .expect("list")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(names, [format!("{:032x}.json", hash128(&key))]);
    }

    #[test]
    fn an_unwritable_directory_only_loses_the_entry() {
        let dir = scratch("blocked");
        std::fs::write(&dir, "a file where the directory should be").expect("write");
        let cache = Cache::new(dir.clone());
        assert!(!cache.store(Kind::Kernel, "key", b"code"));
        assert_eq!(cache.load(Kind::Kernel, "key", Some), Lookup::Rejected);
        let left = std::fs::read_to_string(&dir).expect("the file is still there");
        let _ = std::fs::remove_file(&dir);
        assert_eq!(left, "a file where the directory should be");
    }
}
