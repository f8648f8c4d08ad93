//! Texture storage: a format, a size and a mip chain of tightly packed, row-major levels.

use super::format::{f16x4, float_to_ubyte, linear_float_to_srgb8, Format};
use rayon::prelude::*;
use softgpu_jit::exec::TexelLevel;
use softgpu_jit::ir::InlineWrap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use thiserror::Error;

/// Why a texture could not be created, loaded or saved.
#[derive(Debug, Error)]
pub enum TextureError {
    /// Width or height outside `1..=Texture::MAX_DIMENSION`.
    #[error("texture size {width}x{height} is invalid: each side must be 1..={max}")]
    BadSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
        /// [`Texture::MAX_DIMENSION`].
        max: u32,
    },
    /// Mip level count outside `1..=full chain`.
    #[error("{levels} mip levels requested for a {width}x{height} texture: expected 1..={max}")]
    BadLevels {
        /// Requested count.
        levels: u32,
        /// Width of level 0.
        width: u32,
        /// Height of level 0.
        height: u32,
        /// The full chain length for this size.
        max: u32,
    },
    /// Pixel data of the wrong length.
    #[error(
        "pixel data for a {width}x{height} {format} texture must be {expected} bytes, got {actual}"
    )]
    BadData {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
        /// The format.
        format: Format,
        /// Required length.
        expected: usize,
        /// Given length.
        actual: usize,
    },
    /// An image file could not be read or decoded.
    #[error("cannot load texture {path}: {source}")]
    Load {
        /// The file.
        path: PathBuf,
        /// The decoder's error.
        #[source]
        source: image::ImageError,
    },
    /// An image file whose header declares a size outside `1..=Texture::MAX_DIMENSION`
    /// (refused before its pixels are decoded).
    #[error(
        "cannot load texture {path}: the image is {width}x{height}; each side must be 1..={max}"
    )]
    ImageSize {
        /// The file.
        path: PathBuf,
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
        /// [`Texture::MAX_DIMENSION`].
        max: u32,
    },
    /// An image file could not be written.
    #[error("cannot save texture to {path}: {source}")]
    Save {
        /// The file.
        path: PathBuf,
        /// The encoder's error.
        #[source]
        source: image::ImageError,
    },
}

/// A 2D texture with its mip chain. Level `i` is `max(1, width >> i)` × `max(1, height >> i)`
/// texels, row 0 first, rows tightly packed.
#[derive(Clone, Debug, PartialEq)]
pub struct Texture {
    format: Format,
    width: u32,
    height: u32,
    levels: Vec<Vec<u8>>,
    decoded: DecodedLevels,
}

/// Every level decoded to RGBA `f32` texels (little-endian bytes, 16 per texel, levels one after
/// the other) and where each level starts, made on first use for the JIT's inline sampler (one
/// texel layout for every format) and dropped by every change of the texture. `None` inside: the
/// texture has no such view (see [`Texture::decoded_levels`]).
#[derive(Clone, Default)]
struct DecodedLevels(OnceLock<Option<Decoded>>);

/// The decoded texels and the level table (see [`DecodedLevels`]), and level 0 with an apron
/// per wrap mode, made on first use (see [`Texture::padded_level0`]).
#[derive(Clone)]
struct Decoded {
    texels: Box<[u8]>,
    levels: Box<[TexelLevel]>,
    padded: [OnceLock<Option<Box<[u8]>>>; 3],
}

impl Drop for Decoded {
    /// Pass outputs are decoded (and padded) anew every frame: their buffers are reused.
    fn drop(&mut self) {
        super::pool::recycle(std::mem::take(&mut self.texels).into_vec());
        for padded in &mut self.padded {
            if let Some(Some(buffer)) = padded.take() {
                super::pool::recycle(buffer.into_vec());
            }
        }
    }
}

impl Drop for Texture {
    /// A chain makes its pass outputs anew every frame: their level buffers are reused.
    fn drop(&mut self) {
        for level in self.levels.drain(..) {
            super::pool::recycle(level);
        }
    }
}

/// Texels per parallel chunk when a level is decoded (`decode_levels`).
const DECODE_CHUNK_TEXELS: usize = 1 << 14;

/// Whether f32 `bits` are a denormal (exponent 0) or a NaN (exponent all ones), i.e. have a
/// non-zero mantissa there: decoded levels may hold neither.
fn denormal_or_nan(bits: u32) -> bool {
    let (exp, mant) = (bits & 0x7f80_0000, bits & 0x007f_ffff);
    mant != 0 && (exp == 0 || exp == 0x7f80_0000)
}

/// What each stored value of one channel decodes to, for the formats whose four channels are
/// stored alike and decode independently — the render-target formats filter chains write —
/// so that decoding a level is four table reads per texel. Each table is built by decoding
/// every stored value with the sampler's own decoder (`texel_decoder`), so the bits are its
/// bits; `bad` marks the values that decode to a NaN or a denormal.
struct ChannelTables {
    /// Bytes per channel: 1 (8-bit channels) or 2 (16-bit).
    width: usize,
    /// `[channel][stored value]` → f32 bits (256 or 65,536 values per channel).
    bits: [Box<[u32]>; 4],
    /// `[channel][stored value]`: decodes to a NaN or a denormal.
    bad: [Box<[bool]>; 4],
    /// Whether any value is bad (else the per-texel test is skipped).
    any_bad: bool,
}

impl ChannelTables {
    /// The tables of `format`, made once per process; None for the other formats.
    fn of(format: Format) -> Option<&'static ChannelTables> {
        static TABLES: [OnceLock<ChannelTables>; 3] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let (slot, width) = match format {
            Format::R8G8B8A8Unorm => (0, 1),
            Format::R8G8B8A8Srgb => (1, 1),
            Format::R16G16B16A16Sfloat => (2, 2),
            _ => return None,
        };
        Some(TABLES[slot].get_or_init(|| ChannelTables::build(format, width)))
    }

    fn build(format: Format, width: usize) -> ChannelTables {
        let decode = super::sampler::texel_decoder(format);
        let values = 1usize << (8 * width);
        let mut bits: [Vec<u32>; 4] = Default::default();
        for value in 0..values {
            // Every channel holds `value`: each decodes independently of the others.
            let stored = &value.to_le_bytes()[..width];
            let texel: Vec<u8> = (0..4).flat_map(|_| stored.iter().copied()).collect();
            for (channel, b) in decode(&texel).into_iter().enumerate() {
                bits[channel].push(b);
            }
        }
        let bad = bits.each_ref().map(|t| {
            t.iter()
                .map(|&b| denormal_or_nan(b))
                .collect::<Box<[bool]>>()
        });
        let any_bad = bad.iter().any(|t| t.iter().any(|&b| b));
        ChannelTables {
            width,
            bits: bits.map(Vec::into_boxed_slice),
            bad,
            any_bad,
        }
    }

    /// The stored value of `channel` in the texel `src`.
    fn stored(&self, src: &[u8], channel: usize) -> usize {
        let at = channel * self.width;
        if self.width == 1 {
            src[at] as usize
        } else {
            u16::from_le_bytes([src[at], src[at + 1]]) as usize
        }
    }

    /// One texel's bits (NaN and denormal results included).
    fn decode_texel(&self, src: &[u8]) -> [u32; 4] {
        std::array::from_fn(|channel| self.bits[channel][self.stored(src, channel)])
    }

    /// Decodes the texels of `src` into `dst` (16 bytes each); None at a NaN or denormal.
    fn decode_run(&self, src: &[u8], dst: &mut [u8]) -> Option<()> {
        let stride = 4 * self.width;
        for (src, dst) in src.chunks_exact(stride).zip(dst.chunks_exact_mut(16)) {
            for channel in 0..4 {
                let value = self.stored(src, channel);
                if self.any_bad && self.bad[channel][value] {
                    return None;
                }
                let b = self.bits[channel][value];
                dst[channel * 4..channel * 4 + 4].copy_from_slice(&b.to_le_bytes());
            }
        }
        Some(())
    }
}

/// Texels on each side of [`Texture::padded_level0`] (the JIT's `PADDED_APRON`): a bilinear
/// footprint reaches from two texels before the first (CLAMP_TO_BORDER's coordinate clamp at
/// -1, minus the filter's half texel) to one past the one after the last.
const APRON: usize = softgpu_jit::exec::PADDED_APRON as usize;

/// [`Texture::padded_level0`] of decoded level `level` in `texels`.
fn pad_level0(texels: &[u8], level: &TexelLevel, wrap: InlineWrap) -> Option<Box<[u8]>> {
    let (w, h) = (level.width as usize, level.height as usize);
    if wrap == InlineWrap::RepeatPot && !(w.is_power_of_two() && h.is_power_of_two()) {
        return None;
    }
    let (pw, ph) = (w + 2 * APRON, h + 2 * APRON);
    if pw * ph > 2 * Texture::MAX_DECODED_TEXELS {
        return None;
    }
    // The source texel a padded column or row shows, or None for the border.
    let source = |i: usize, n: usize| -> Option<usize> {
        let i = i as i64 - APRON as i64;
        let n = n as i64;
        match wrap {
            InlineWrap::RepeatPot => Some((i & (n - 1)) as usize),
            InlineWrap::ClampToEdge => Some(i.clamp(0, n - 1) as usize),
            InlineWrap::ClampToBorder => (0..n).contains(&i).then_some(i as usize),
        }
    };
    let base = level.offset as usize * 16;
    let mut out = super::pool::zeroed(pw * ph * 16).into_boxed_slice();
    let columns: Vec<Option<usize>> = (0..pw).map(|x| source(x, w)).collect();
    // Rows in parallel where that is safe (see `may_fan_out`): pass outputs are padded once
    // per frame, like their decoding.
    let pad_row = |(y, row): (usize, &mut [u8])| {
        let Some(sy) = source(y, h) else {
            return;
        };
        let src_row = &texels[base + sy * w * 16..base + (sy + 1) * w * 16];
        // The texture's own columns in one copy, the apron texel by texel.
        row[APRON * 16..(APRON + w) * 16].copy_from_slice(src_row);
        for (x, sx) in columns.iter().enumerate() {
            if (APRON..APRON + w).contains(&x) {
                continue;
            }
            if let Some(sx) = *sx {
                row[x * 16..x * 16 + 16].copy_from_slice(&src_row[sx * 16..sx * 16 + 16]);
            }
        }
    };
    if may_fan_out() {
        out.par_chunks_exact_mut(pw * 16)
            .enumerate()
            .for_each(pad_row);
    } else {
        out.chunks_exact_mut(pw * 16).enumerate().for_each(pad_row);
    }
    Some(out)
}

/// Whether a texture's lazily made copies (decoded levels, padded level 0) may be made on
/// every core. Not on a rayon worker: the copies are made inside a `OnceLock` by whichever
/// rasterizer tile samples the texture first, and a worker that waits for its parallel chunks
/// steals other tiles meanwhile — one that samples the same texture would wait on the
/// `OnceLock` it is itself initialising, a deadlock (seen with 16 threads). Copies wanted
/// outside the rasterizer (the chain decodes each pass output after its draw) stay parallel.
fn may_fan_out() -> bool {
    rayon::current_thread_index().is_none()
}

impl PartialEq for DecodedLevels {
    /// A cache of the texels: textures are equal by their texels alone.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for DecodedLevels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "decoded"
        } else {
            "-"
        })
    }
}

impl Texture {
    /// Largest width or height accepted (the limit of common GPUs; keeps allocations bounded).
    pub const MAX_DIMENSION: u32 = 16384;

    /// Largest texture (in texels: 4096x4096, 256 MB decoded) that [`Texture::decoded_levels`]
    /// decodes; larger ones are sampled without the copy.
    pub const MAX_DECODED_TEXELS: usize = 1 << 24;

    /// A zero-filled texture. Sizes are checked before anything is allocated.
    pub fn new(
        format: Format,
        width: u32,
        height: u32,
        levels: u32,
    ) -> Result<Texture, TextureError> {
        check_size(width, height)?;
        let max = Self::full_mip_levels(width, height);
        if levels == 0 || levels > max {
            return Err(TextureError::BadLevels {
                levels,
                width,
                height,
                max,
            });
        }
        let bpt = format.bytes_per_texel();
        let levels = (0..levels)
            .map(|l| {
                let (w, h) = level_dims(width, height, l);
                super::pool::zeroed(w as usize * h as usize * bpt)
            })
            .collect();
        Ok(Texture {
            format,
            width,
            height,
            levels,
            decoded: DecodedLevels::default(),
        })
    }

    /// The bytes a `width`×`height` texture of `format` with `levels` mip levels holds: its
    /// levels and, with `decoded`, the copy [`Texture::decoded_levels`] makes of the textures it
    /// decodes (16 bytes a texel). For memory budgets, counted before the texture is made.
    pub fn estimated_bytes(
        format: Format,
        width: u32,
        height: u32,
        levels: u32,
        decoded: bool,
    ) -> u64 {
        let texels: u64 = (0..levels.min(32))
            .map(|l| {
                let (w, h) = level_dims(width, height, l);
                u64::from(w) * u64::from(h)
            })
            .sum();
        let stored = texels.saturating_mul(format.bytes_per_texel() as u64);
        let base = u64::from(width) * u64::from(height);
        let decodes = decoded && !format.is_integer() && base <= Self::MAX_DECODED_TEXELS as u64;
        stored.saturating_add(if decodes {
            texels.saturating_mul(16)
        } else {
            0
        })
    }

    /// Levels in a full mip chain down to 1x1: `floor(log2(max(width, height))) + 1`.
    pub fn full_mip_levels(width: u32, height: u32) -> u32 {
        32 - width.max(height).max(1).leading_zeros()
    }

    /// A one-level `R8G8B8A8_UNORM` texture from RGBA8 bytes (row 0 first).
    pub fn from_rgba8(width: u32, height: u32, data: Vec<u8>) -> Result<Texture, TextureError> {
        check_size(width, height)?;
        let expected = width as usize * height as usize * 4;
        if data.len() != expected {
            return Err(TextureError::BadData {
                width,
                height,
                format: Format::R8G8B8A8Unorm,
                expected,
                actual: data.len(),
            });
        }
        Ok(Texture {
            format: Format::R8G8B8A8Unorm,
            width,
            height,
            levels: vec![data],
            decoded: DecodedLevels::default(),
        })
    }

    /// Loads a PNG or JPEG as a one-level `R8G8B8A8_UNORM` texture (palette, grey, RGB and
    /// 16-bit images are converted to RGBA8, as RetroArch's image loader does).
    pub fn load(path: &Path) -> Result<Texture, TextureError> {
        let load_err = |source| TextureError::Load {
            path: path.to_path_buf(),
            source,
        };
        // The file is opened through `input`, which refuses FIFOs, devices and oversized
        // files by name and sets the decoder's limits; the header's size is checked before
        // decoding allocates the pixels.
        let reader = |max_side| {
            crate::input::image_reader(path, "image", max_side)
                .map_err(|e| load_err(image::ImageError::IoError(std::io::Error::other(e.message))))
        };
        // The header is read without a side limit so that the size error below can say what
        // the size is.
        let (w, h) = reader(u32::MAX)?.into_dimensions().map_err(load_err)?;
        if check_size(w, h).is_err() {
            return Err(TextureError::ImageSize {
                path: path.to_path_buf(),
                width: w,
                height: h,
                max: Self::MAX_DIMENSION,
            });
        }
        let img = reader(Self::MAX_DIMENSION)?.decode().map_err(load_err)?;
        let rgba = img.into_rgba8();
        let (w, h) = rgba.dimensions();
        Texture::from_rgba8(w, h, rgba.into_raw())
    }

    /// Writes level 0 as an RGBA8 PNG, whatever the file's extension, atomically (see
    /// [`crate::output::write_atomic`]: a failed write leaves an existing file as it was).
    /// Non-RGBA8 formats are converted like a readback: each texel is decoded and its float
    /// channels quantized with Mesa's `float_to_ubyte` (integer formats: values clamped to
    /// 0..=255).
    pub fn save_png(&self, path: &Path) -> Result<(), TextureError> {
        use image::ImageEncoder;
        let save_err = |source| TextureError::Save {
            path: path.to_path_buf(),
            source,
        };
        let mut bytes = Vec::new();
        image::codecs::png::PngEncoder::new(&mut bytes)
            .write_image(
                &self.to_rgba8(),
                self.width,
                self.height,
                image::ExtendedColorType::Rgba8,
            )
            .map_err(save_err)?;
        crate::output::write_atomic(path, "PNG", &bytes)
            .map_err(|e| save_err(image::ImageError::IoError(std::io::Error::other(e.message))))
    }

    /// Level 0 as RGBA8 bytes (see [`Texture::save_png`] for the conversion).
    pub fn to_rgba8(&self) -> Vec<u8> {
        if matches!(
            self.format,
            Format::R8G8B8A8Unorm | Format::R8G8B8A8UnormNvidia
        ) {
            return self.levels[0].clone();
        }
        let bpt = self.format.bytes_per_texel();
        let mut out = Vec::with_capacity(self.width as usize * self.height as usize * 4);
        for texel in self.levels[0].chunks_exact(bpt) {
            let v = self.format.decode(texel);
            for c in v {
                out.push(if self.format.is_signed_integer() {
                    (c as i32).clamp(0, 255) as u8
                } else if self.format.is_integer() {
                    c.min(255) as u8
                } else {
                    float_to_ubyte(f32::from_bits(c))
                });
            }
        }
        out
    }

    /// The texel format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Width of level 0.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height of level 0.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Number of mip levels stored.
    pub fn level_count(&self) -> u32 {
        self.levels.len() as u32
    }

    /// Size of a level (levels past the chain report the 1x1 of the last halving).
    pub fn level_size(&self, level: u32) -> (u32, u32) {
        level_dims(self.width, self.height, level)
    }

    /// Bytes of a level (empty for a level that does not exist).
    pub fn level_data(&self, level: u32) -> &[u8] {
        self.levels
            .get(level as usize)
            .map_or(&[], |v| v.as_slice())
    }

    /// Mutable bytes of a level (empty for a level that does not exist).
    pub fn level_data_mut(&mut self, level: u32) -> &mut [u8] {
        self.decoded = DecodedLevels::default();
        self.levels
            .get_mut(level as usize)
            .map_or(&mut [], |v| v.as_mut_slice())
    }

    /// Every level as RGBA `f32` texels, 16 little-endian bytes each, row-major, levels one after
    /// the other, and where each level starts: exactly the values [`Format::decode`] gives,
    /// which the sampler filters; after the last level one all-zero texel, which inline
    /// sampling reads for corners outside a border-clamped texture (a
    /// [`TexelView`](softgpu_jit::exec::TexelView)'s contract). Computed once and kept until
    /// the texture changes. `None` for
    /// integer formats (the sampler returns their bits), textures over
    /// [`Texture::MAX_DECODED_TEXELS`] (level 0), and when a texel decodes to a NaN or a
    /// denormal: code that reads these texels runs with denormals read as zero and may pick
    /// another NaN than the sampler's arithmetic.
    ///
    /// Made on every core when called outside rayon's workers, on the calling thread alone
    /// inside them (a worker waiting for its chunks could otherwise start a task that waits for
    /// this very copy): code about to draw in parallel calls it first.
    pub fn decoded_levels(&self) -> Option<(&[u8], &[TexelLevel])> {
        self.decoded
            .0
            .get_or_init(|| self.decode_levels())
            .as_ref()
            .map(|d| (&d.texels[..], &d.levels[..]))
    }

    fn decode_levels(&self) -> Option<Decoded> {
        /// Levels of at least this many texels are decoded in parallel chunks.
        const PARALLEL_DECODE_TEXELS: usize = 4 * DECODE_CHUNK_TEXELS;
        let base = self.width as usize * self.height as usize;
        if self.format.is_integer() || base > Self::MAX_DECODED_TEXELS {
            return None;
        }
        let mut levels = Vec::with_capacity(self.levels.len());
        let mut total = 0usize;
        for level in 0..self.level_count() {
            let (w, h) = self.level_size(level);
            levels.push(TexelLevel {
                offset: u32::try_from(total).ok()?,
                width: w,
                height: h,
                pad: 0,
            });
            total += w as usize * h as usize;
        }
        // Every texel of every level is written below; one more, zero, is the border texel.
        let mut out = super::pool::overwritten((total + 1) * 16).into_boxed_slice();
        out[total * 16..].fill(0);
        let bpt = self.format.bytes_per_texel();
        let decode = super::sampler::texel_decoder(self.format);
        let tables = ChannelTables::of(self.format);
        for (level, l) in levels.iter().enumerate() {
            let texels = l.width as usize * l.height as usize;
            let data = self.level_data(level as u32);
            if data.len() < texels * bpt {
                return None;
            }
            let dst = &mut out[l.offset as usize * 16..(l.offset as usize + texels) * 16];
            let decode_run = |(src, dst): (&[u8], &mut [u8])| -> Option<()> {
                if let Some(tables) = tables {
                    return tables.decode_run(src, dst);
                }
                for (src, dst) in src.chunks_exact(bpt).zip(dst.chunks_exact_mut(16)) {
                    let bits = decode(src);
                    for (c, b) in bits.iter().enumerate() {
                        if denormal_or_nan(*b) {
                            return None;
                        }
                        dst[c * 4..c * 4 + 4].copy_from_slice(&b.to_le_bytes());
                    }
                }
                Some(())
            };
            // Large levels decode on every core (a 1080p pass output is two million texels)
            // unless this is a rasterizer thread (see `may_fan_out`).
            let src = &data[..texels * bpt];
            if texels >= PARALLEL_DECODE_TEXELS && may_fan_out() {
                src.par_chunks(DECODE_CHUNK_TEXELS * bpt)
                    .zip(dst.par_chunks_mut(DECODE_CHUNK_TEXELS * 16))
                    .try_for_each(decode_run)?;
            } else {
                decode_run((src, dst))?;
            }
        }
        Some(Decoded {
            texels: out,
            levels: levels.into_boxed_slice(),
            padded: Default::default(),
        })
    }

    /// Level 0 of [`Texture::decoded_levels`] with an apron of two texels on every side
    /// holding what `wrap` reads there — the texel the wrapped coordinate names, or zero outside
    /// a border-clamped texture — row-major with a pitch of `width + 2 * APRON` texels: inline
    /// bilinear sampling then loads the four texels of a quad's lane from one address without
    /// wrapping the second column and row. Made on first use per wrap mode and kept with the
    /// decoded levels; `None` without decoded levels, for REPEAT on a size that is not a power
    /// of two, or when the padded texel count exceeds [`Texture::MAX_DECODED_TEXELS`] twice.
    pub fn padded_level0(&self, wrap: InlineWrap) -> Option<&[u8]> {
        let (texels, levels) = self.decoded_levels()?;
        let decoded = self.decoded.0.get()?.as_ref()?;
        let slot = match wrap {
            InlineWrap::RepeatPot => 0,
            InlineWrap::ClampToEdge => 1,
            InlineWrap::ClampToBorder => 2,
        };
        decoded.padded[slot]
            .get_or_init(|| pad_level0(texels, levels.first()?, wrap))
            .as_deref()
    }

    /// The decoded texel (see [`Format::decode`]); zero outside the texture.
    pub fn read_texel(&self, level: u32, x: u32, y: u32) -> [u32; 4] {
        match self.texel_offset(level, x, y) {
            Some(o) => {
                let bpt = self.format.bytes_per_texel();
                self.format.decode(&self.levels[level as usize][o..o + bpt])
            }
            None => [0; 4],
        }
    }

    /// Encodes and stores a texel (see [`Format::encode`]); ignored outside the texture.
    pub fn write_texel(&mut self, level: u32, x: u32, y: u32, bits: [u32; 4]) {
        self.decoded = DecodedLevels::default();
        if let Some(o) = self.texel_offset(level, x, y) {
            let bpt = self.format.bytes_per_texel();
            let format = self.format;
            format.encode(bits, &mut self.levels[level as usize][o..o + bpt]);
        }
    }

    fn texel_offset(&self, level: u32, x: u32, y: u32) -> Option<usize> {
        if level as usize >= self.levels.len() {
            return None;
        }
        let (w, h) = self.level_size(level);
        if x >= w || y >= h {
            return None;
        }
        Some((y as usize * w as usize + x as usize) * self.format.bytes_per_texel())
    }

    /// Fills levels 1.. from level 0 like Mesa's `glGenerateMipmap` on softpipe
    /// (`util_gen_mipmap`: a linear-filtered blit of each level into the next). For even sizes
    /// that is the 2x2 average computed in float with softpipe's lerp order, then encoded; odd
    /// sizes sample the bilinear footprint of each destination texel centre (clamped at the
    /// edge), as the blit does. Integer formats cannot be filtered and take the nearest texel.
    pub fn generate_mipmaps(&mut self) {
        self.decoded = DecodedLevels::default();
        let format = self.format;
        for level in 1..self.level_count() as usize {
            let source = self.level_size(level as u32 - 1);
            let size = self.level_size(level as u32);
            let (done, rest) = self.levels.split_at_mut(level);
            let (src, dst) = (&done[level - 1], &mut rest[0]);
            if format.is_integer() {
                blit_nearest(format, src, source, dst, size);
                continue;
            }
            // Encoding is most of the per-texel work: the filter chains' formats get their own
            // loop instead of `Format::encode`'s per-texel dispatch.
            match format {
                Format::R8G8B8A8Unorm => blit_linear(format, src, source, dst, size, |b, t| {
                    for (byte, bits) in t.iter_mut().zip(b) {
                        *byte = float_to_ubyte(f32::from_bits(bits));
                    }
                }),
                Format::R8G8B8A8Srgb => blit_linear(format, src, source, dst, size, |b, t| {
                    for (c, (byte, bits)) in t.iter_mut().zip(b).enumerate() {
                        let f = f32::from_bits(bits);
                        *byte = if c == 3 {
                            float_to_ubyte(f)
                        } else {
                            linear_float_to_srgb8(f)
                        };
                    }
                }),
                Format::R16G16B16A16Sfloat => {
                    blit_linear(format, src, source, dst, size, |b, t| {
                        for (pair, half) in t.chunks_exact_mut(2).zip(f16x4(b)) {
                            pair.copy_from_slice(&(half as u16).to_le_bytes());
                        }
                    })
                }
                _ => blit_linear(format, src, source, dst, size, |b, t| format.encode(b, t)),
            }
        }
    }
}

/// The texels of `bytes` (whole texels of `format`) decoded into `out`, as `read_texel` gives
/// them.
fn decode_row(
    format: Format,
    tables: Option<&ChannelTables>,
    bytes: &[u8],
    out: &mut Vec<[u32; 4]>,
) {
    out.clear();
    let texels = bytes.chunks_exact(format.bytes_per_texel());
    match tables {
        Some(tables) if tables.width == 1 => {
            // Byte-indexed tables of 256 entries: no width test or bounds check per channel.
            let bits: [&[u32; 256]; 4] =
                std::array::from_fn(|c| tables.bits[c][..].try_into().expect("256 entries"));
            out.extend(texels.map(|t| std::array::from_fn(|c| bits[c][usize::from(t[c])])));
        }
        Some(tables) => out.extend(texels.map(|t| tables.decode_texel(t))),
        None => out.extend(texels.map(|t| format.decode(t))),
    }
}

/// The source texel coordinate (texel centres at `n + 0.5` → `n`) the mipmap blit samples for
/// destination texel `i` of `dst` texels along an axis of `src` texels. The blit interpolates
/// normalized coordinates as softpipe's setup does: `a0 + dadx * i` with `dadx = 1 / dst` and
/// `a0 = dadx / 2`.
fn blit_coordinate(i: usize, src: u32, dst: u32) -> f32 {
    let step = 1.0 / dst as f32;
    (step * 0.5 + step * i as f32) * src as f32 - 0.5
}

/// The bilinear footprint of destination texel `i` ([`blit_coordinate`]): the two clamped
/// source texels and the weight of the second.
fn blit_footprint(i: usize, src: u32, dst: u32) -> (usize, usize, f32) {
    let t = blit_coordinate(i, src, dst);
    let floor = t.floor();
    let clamp = |v: f32| (v.max(0.0) as u32).min(src - 1) as usize;
    (clamp(floor), clamp(floor + 1.0), t - floor)
}

/// One level of the linear mipmap blit (see [`Texture::generate_mipmaps`]): destination rows in
/// parallel, each decoding the two source rows its footprints read, then filtering every
/// texel with softpipe's `lerp_2d` and storing it through `encode`.
fn blit_linear(
    format: Format,
    src: &[u8],
    (sw, sh): (u32, u32),
    dst: &mut [u8],
    (dw, dh): (u32, u32),
    encode: impl Fn([u32; 4], &mut [u8]) + Sync,
) {
    let bpt = format.bytes_per_texel();
    let tables = ChannelTables::of(format);
    let src_row = sw as usize * bpt;
    let columns: Vec<_> = (0..dw as usize)
        .map(|x| blit_footprint(x, sw, dw))
        .collect();
    dst.par_chunks_exact_mut(dw as usize * bpt)
        .enumerate()
        .for_each_init(
            || (Vec::new(), Vec::new()),
            |(top, bottom), (y, row)| {
                let (y0, y1, b) = blit_footprint(y, sh, dh);
                decode_row(format, tables, &src[y0 * src_row..][..src_row], top);
                decode_row(format, tables, &src[y1 * src_row..][..src_row], bottom);
                for (texel, &(x0, x1, a)) in row.chunks_exact_mut(bpt).zip(&columns) {
                    let (t00, t10, t01, t11) = (top[x0], top[x1], bottom[x0], bottom[x1]);
                    let bits = std::array::from_fn(|c| {
                        let f = |t: [u32; 4]| f32::from_bits(t[c]);
                        lerp_2d(a, b, f(t00), f(t10), f(t01), f(t11)).to_bits()
                    });
                    encode(bits, texel);
                }
            },
        );
}

/// One level of the mipmap blit for an integer format: the nearest texel of each destination
/// texel centre (integer texels cannot be filtered).
fn blit_nearest(
    format: Format,
    src: &[u8],
    (sw, sh): (u32, u32),
    dst: &mut [u8],
    (dw, dh): (u32, u32),
) {
    let bpt = format.bytes_per_texel();
    dst.par_chunks_exact_mut(dw as usize * bpt)
        .enumerate()
        .for_each(|(y, row)| {
            let sy = blit_coordinate(y, sh, dh).round() as u32;
            for (x, t) in row.chunks_exact_mut(bpt).enumerate() {
                let sx = blit_coordinate(x, sw, dw).round() as u32;
                let bits = if sx < sw && sy < sh {
                    let at = (sy as usize * sw as usize + sx as usize) * bpt;
                    format.decode(&src[at..at + bpt])
                } else {
                    [0; 4]
                };
                format.encode(bits, t);
            }
        });
}

/// softpipe's `lerp`: `v0 + a * (v1 - v0)`.
#[inline]
pub(crate) fn lerp(a: f32, v0: f32, v1: f32) -> f32 {
    v0 + a * (v1 - v0)
}

/// softpipe's `lerp_2d`: along x on both rows, then along y.
#[inline]
pub(crate) fn lerp_2d(a: f32, b: f32, v00: f32, v10: f32, v01: f32, v11: f32) -> f32 {
    let temp0 = lerp(a, v00, v10);
    let temp1 = lerp(a, v01, v11);
    lerp(b, temp0, temp1)
}

fn check_size(width: u32, height: u32) -> Result<(), TextureError> {
    let max = Texture::MAX_DIMENSION;
    if width == 0 || height == 0 || width > max || height > max {
        return Err(TextureError::BadSize { width, height, max });
    }
    Ok(())
}

fn level_dims(width: u32, height: u32, level: u32) -> (u32, u32) {
    let s = level.min(31);
    ((width >> s).max(1), (height >> s).max(1))
}
