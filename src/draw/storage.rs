//! Storage memory of a draw: the read-write storage buffers and storage images the stages reach
//! through `BUFFER[n]`/`IMAGE[n]`, bound by name (`--storage-buffer`, `--storage-image`) and
//! shared by both stages, and their contents once the draw is done (`--storage-out`).
//!
//! Data files have the constant-file format: one `x y z w` line per 16 bytes of a buffer, or
//! per texel of an image (row after row, layer after layer). [`DrawStorage::contents`] writes
//! the words back in that format, as raw `0x` bits.

use std::fmt::Write as _;

use anyhow::{bail, Result};

use super::CompiledStage;
use crate::exec::{StorageBindings, StorageBuffer, StorageImage};
use crate::frontend::lower::ResourceKind;
use crate::ir::{Program, RegisterFile};

/// Largest number of texels a storage image of `--storage-image` may have.
pub const MAX_STORAGE_TEXELS: u64 = 1 << 22;

/// A storage buffer or image one stage reaches, and the names it answers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemorySlot {
    /// `BUFFER` or `IMAGE`.
    pub file: RegisterFile,
    /// The register index.
    pub index: u32,
    /// Its names: the shader's variable name, where the stage has reflection, and the register
    /// (`BUFFER[0]`), which also names it in TGSI programs.
    pub names: Vec<String>,
}

/// The storage buffers and images `program` declares, named by `resources` where they say.
pub fn memory_slots(
    program: &Program,
    resources: &[crate::frontend::lower::ResourceSlot],
) -> Vec<MemorySlot> {
    let mut slots = Vec::new();
    for d in program.declarations() {
        if !matches!(d.file, RegisterFile::Buffer | RegisterFile::Image) {
            continue;
        }
        for index in d.first..=d.last {
            let mut names = Vec::new();
            for r in resources {
                let same = match r.kind {
                    ResourceKind::ReadWriteBuffer { buffer } => {
                        d.file == RegisterFile::Buffer && buffer == index
                    }
                    ResourceKind::StorageImage { image, .. } => {
                        d.file == RegisterFile::Image && image == index
                    }
                    _ => false,
                };
                if let (true, Some(name)) = (same, &r.name) {
                    names.push(name.clone());
                }
            }
            names.push(format!("{}[{index}]", d.file.name()));
            slots.push(MemorySlot {
                file: d.file,
                index,
                names,
            });
        }
    }
    slots
}

/// An image to bind to a storage image: its size and first texels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageData {
    /// Width, height and layers.
    pub size: (u32, u32, u32),
    /// Texels, one `x y z w` row each (missing ones are zero).
    pub texels: Vec<[u32; 4]>,
}

/// A storage buffer's data by name: rows of 16 bytes, as `--storage-buffer` reads them.
pub type NamedRows = (String, Vec<[u32; 4]>);

/// Where one stage's `BUFFER[n]`/`IMAGE[n]` point in [`DrawStorage`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct StageMemory {
    buffers: Vec<Option<usize>>,
    images: Vec<Option<usize>>,
}

/// The storage memory of a draw, shared by its stages.
#[derive(Debug, Default)]
pub struct DrawStorage {
    names: Vec<(String, RegisterFile, usize)>,
    buffers: Vec<StorageBuffer>,
    images: Vec<StorageImage>,
    vertex: StageMemory,
    fragment: StageMemory,
}

impl DrawStorage {
    /// Binds `buffers` and `images` (name, data) to the storage buffers and images of those
    /// names in either stage. Returns the buffers no stage writes (for
    /// [`super::bind_storage_buffers`], which binds read-only ones); an image no stage declares
    /// is an error listing those they do.
    pub fn bind(
        vertex: &CompiledStage,
        fragment: &CompiledStage,
        buffers: &[NamedRows],
        images: &[(String, ImageData)],
    ) -> Result<(DrawStorage, Vec<NamedRows>)> {
        let mut storage = DrawStorage::default();
        let mut read_only = Vec::new();
        for (name, rows) in buffers {
            let words: Vec<u32> = rows.iter().flatten().copied().collect();
            if storage.bind_one(vertex, fragment, name, RegisterFile::Buffer) {
                storage.buffers.push(StorageBuffer::new(&words));
                let at = storage.buffers.len() - 1;
                storage.names.push((name.clone(), RegisterFile::Buffer, at));
            } else {
                read_only.push((name.clone(), rows.clone()));
            }
        }
        for (name, image) in images {
            let (w, h, l) = image.size;
            let texels = u64::from(w) * u64::from(h) * u64::from(l);
            if texels == 0 || texels > MAX_STORAGE_TEXELS {
                bail!(
                    "--storage-image {name}: {w}x{h}x{l} is not between 1 and \
                     {MAX_STORAGE_TEXELS} texels"
                );
            }
            if !storage.bind_one(vertex, fragment, name, RegisterFile::Image) {
                bail!(
                    "--storage-image {name}: neither shader has a storage image of that name (they \
                     have: {})",
                    known(vertex, fragment, RegisterFile::Image)
                );
            }
            let words: Vec<u32> = image.texels.iter().flatten().copied().collect();
            storage.images.push(StorageImage::new(w, h, l, &words));
            let at = storage.images.len() - 1;
            storage.names.push((name.clone(), RegisterFile::Image, at));
        }
        Ok((storage, read_only))
    }

    /// Points the slots named `name` of `file` in both stages at the next buffer or image;
    /// false when neither stage has one.
    fn bind_one(
        &mut self,
        vertex: &CompiledStage,
        fragment: &CompiledStage,
        name: &str,
        file: RegisterFile,
    ) -> bool {
        let next = match file {
            RegisterFile::Buffer => self.buffers.len(),
            _ => self.images.len(),
        };
        let mut bound = false;
        for (stage, map) in [(vertex, &mut self.vertex), (fragment, &mut self.fragment)] {
            for slot in stage
                .memory
                .iter()
                .filter(|s| s.file == file && s.names.iter().any(|n| n == name))
            {
                let list = match file {
                    RegisterFile::Buffer => &mut map.buffers,
                    _ => &mut map.images,
                };
                let i = slot.index as usize;
                if list.len() <= i {
                    list.resize(i + 1, None);
                }
                list[i] = Some(next);
                bound = true;
            }
        }
        bound
    }

    /// Runs `f` with the storage bindings of the vertex and of the fragment stage.
    pub fn with_bindings<T>(
        &self,
        f: impl FnOnce(StorageBindings<'_>, StorageBindings<'_>) -> T,
    ) -> T {
        let empty_buffer = StorageBuffer::default();
        let empty_image = StorageImage::default();
        let refs = |map: &StageMemory| -> (Vec<&StorageBuffer>, Vec<&StorageImage>) {
            (
                map.buffers
                    .iter()
                    .map(|b| b.map_or(&empty_buffer, |i| &self.buffers[i]))
                    .collect(),
                map.images
                    .iter()
                    .map(|b| b.map_or(&empty_image, |i| &self.images[i]))
                    .collect(),
            )
        };
        let (vb, vi) = refs(&self.vertex);
        let (fb, fi) = refs(&self.fragment);
        f(
            StorageBindings {
                buffers: &vb,
                images: &vi,
            },
            StorageBindings {
                buffers: &fb,
                images: &fi,
            },
        )
    }

    /// The words of the buffer or image bound as `name`, in the data-file format (raw bits);
    /// `None` when nothing was bound under that name.
    pub fn contents(&self, name: &str) -> Option<String> {
        let &(_, file, at) = self.names.iter().find(|(n, _, _)| n == name)?;
        let words = match file {
            RegisterFile::Buffer => self.buffers[at].to_words(),
            _ => self.images[at].texels.to_words(),
        };
        let mut out = String::new();
        for row in words.chunks(4) {
            let line: Vec<String> = (0..4)
                .map(|c| format!("0x{:08x}", row.get(c).copied().unwrap_or(0)))
                .collect();
            let _ = writeln!(out, "{}", line.join(" "));
        }
        Some(out)
    }

    /// The names bound, in binding order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|(n, _, _)| n.as_str())
    }
}

/// The names of the storage buffers or images (`file`) of both stages, for errors.
fn known(vertex: &CompiledStage, fragment: &CompiledStage, file: RegisterFile) -> String {
    let mut names: Vec<&str> = vertex
        .memory
        .iter()
        .chain(&fragment.memory)
        .filter(|s| s.file == file)
        .flat_map(|s| s.names.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// The names of the storage buffers both stages write, for errors.
pub fn writable_buffer_names(vertex: &CompiledStage, fragment: &CompiledStage) -> String {
    known(vertex, fragment, RegisterFile::Buffer)
}
