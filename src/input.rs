//! Reading the files a user names — shaders, presets, suites, data files, images — with their
//! size bounded before the read and their kind checked before the open.
//!
//! softgpu runs unattended on files anyone can edit, so a path that names a FIFO, a device or a
//! directory is refused by name instead of blocking or reading without end (opening a FIFO for
//! reading waits for a writer; `/dev/zero` never ends), and a file larger than the limit its kind
//! allows is refused before anything is allocated for it. The file is read through a
//! [`Read::take`] of one byte more than the limit, so a file that grows between the check and the
//! read is still bounded. Images are decoded with the `image` crate's limits set, so a small file
//! that declares a huge image is refused from its header.
//!
//! Every error names the file and what it was read as (`shader`, `preset`, …).

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// The largest shader source file (`.slang`, `.cg`, `.wgsl`, TGSI text, or one they include).
pub const MAX_SHADER_FILE_BYTES: u64 = 16 << 20;
/// The largest preset (`.slangp`, `.cgp`) or suite (`.toml`) file.
pub const MAX_CONFIG_FILE_BYTES: u64 = 4 << 20;
/// The largest vertex, constant or push-constant data file of `softgpu draw` and suites.
pub const MAX_DATA_FILE_BYTES: u64 = 256 << 20;
/// The largest image file (an input frame, a texture, a LUT, a golden).
pub const MAX_IMAGE_FILE_BYTES: u64 = 512 << 20;
/// The most bytes a decoder may allocate for one image: a 16384x16384 RGBA16 image and change.
pub const MAX_IMAGE_DECODE_BYTES: u64 = 2 << 30;

/// Why a file could not be read; the message names the file and what it was read as.
#[derive(Debug)]
pub struct InputError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong, naming what the file was read as.
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for InputError {}

fn error(path: &Path, message: String) -> InputError {
    InputError {
        path: path.to_path_buf(),
        message,
    }
}

/// What a path that is not a regular file is, in words.
fn kind_of(metadata: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = metadata.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if metadata.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading after checking that it is a regular file (following symbolic
/// links) of at most `limit` bytes; returns the file and its size.
pub fn open_regular(path: &Path, what: &str, limit: u64) -> Result<(File, u64), InputError> {
    let metadata =
        std::fs::metadata(path).map_err(|e| error(path, format!("cannot read {what}: {e}")))?;
    if !metadata.is_file() {
        return Err(error(
            path,
            format!(
                "cannot read {what}: the path is {}, expected a regular file",
                kind_of(&metadata)
            ),
        ));
    }
    if metadata.len() > limit {
        return Err(error(
            path,
            format!(
                "cannot read {what}: the file has {} bytes, more than the {limit} a {what} may have",
                metadata.len()
            ),
        ));
    }
    let file = File::open(path).map_err(|e| error(path, format!("cannot read {what}: {e}")))?;
    Ok((file, metadata.len()))
}

/// Reads a regular file of at most `limit` bytes whole.
pub fn read_bytes(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, InputError> {
    let (file, len) = open_regular(path, what, limit)?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(path, format!("cannot read {what}: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(error(
            path,
            format!("cannot read {what}: the file grew past the {limit} bytes a {what} may have"),
        ));
    }
    Ok(bytes)
}

/// Reads a regular UTF-8 text file of at most `limit` bytes whole.
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String, InputError> {
    let bytes = read_bytes(path, what, limit)?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        error(
            path,
            format!("line {line}: the {what} is not UTF-8 text (invalid byte at offset {offset})"),
        )
    })
}

/// The decoder limits every image is read with: at most `max_side` pixels per side and
/// [`MAX_IMAGE_DECODE_BYTES`] of allocation.
pub fn image_limits(max_side: u32) -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(max_side);
    limits.max_image_height = Some(max_side);
    limits.max_alloc = Some(MAX_IMAGE_DECODE_BYTES);
    limits
}

/// An image reader over a regular file of at most [`MAX_IMAGE_FILE_BYTES`], its format guessed
/// from its first bytes, with [`image_limits`]`(max_side)` set.
pub fn image_reader(
    path: &Path,
    what: &str,
    max_side: u32,
) -> Result<image::ImageReader<BufReader<File>>, InputError> {
    let (file, _) = open_regular(path, what, MAX_IMAGE_FILE_BYTES)?;
    let mut reader = image::ImageReader::new(BufReader::new(file))
        .with_guessed_format()
        .map_err(|e| error(path, format!("cannot read {what}: {e}")))?;
    reader.limits(image_limits(max_side));
    Ok(reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_text(dir.path(), "shader", MAX_SHADER_FILE_BYTES).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_refused_before_it_is_opened() {
        let e = read_bytes(Path::new("/dev/zero"), "preset", MAX_CONFIG_FILE_BYTES).unwrap_err();
        assert!(e.to_string().contains("is a device"), "{e}");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_with_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.slang");
        std::fs::write(&path, vec![b'x'; 100]).unwrap();
        let e = read_text(&path, "shader", 99).unwrap_err();
        assert!(e.to_string().contains("100 bytes"), "{e}");
        assert_eq!(read_text(&path, "shader", 100).unwrap().len(), 100);
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.cg");
        std::fs::write(&path, b"a\nb\n\xff").unwrap();
        let e = read_text(&path, "shader", 100).unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
    }

    #[test]
    fn an_image_wider_than_the_limit_is_refused_from_its_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wide.png");
        image::RgbaImage::new(20_000, 1).save(&path).unwrap();
        let reader = image_reader(&path, "texture", 16384).unwrap();
        assert!(matches!(reader.decode(), Err(image::ImageError::Limits(_))));
        let reader = image_reader(&path, "texture", 20_000).unwrap();
        assert!(reader.decode().is_ok());
    }
}
