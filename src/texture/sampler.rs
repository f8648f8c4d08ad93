//! The sampler: texture units the shader executors read through [`TextureAccess`], with the math
//! of Mesa 22.3 softpipe's `sp_tex_sample.c` (wrap functions, `frac`, lerp order, the quad-corner
//! LOD with `util_fast_log2`, the mip filters and their quirks, the power-of-two fast paths).
//!
//! Supported targets (storage is 2D): `2D`, `SHADOW2D` (compared as [`compare`] says when the
//! sampler has a comparison function, else uncompared, like softpipe with `compare_mode` NONE; so
//! are the other `SHADOW` targets), `RECT`/`SHADOWRECT` (unnormalized
//! coordinates, as Mesa's state tracker sets for rectangle textures), `1D`/`SHADOW1D` (row 0),
//! `1D_ARRAY`, `2D_ARRAY` (one layer) and `2D_MSAA` for fetches. `3D`, `CUBE`, `CUBEARRAY`,
//! `BUFFER` and unknown targets read as zero.

use super::format::Format;
use super::storage::{lerp, lerp_2d, Texture};
use super::tables::LOG2_TABLE_BITS;
use softgpu_jit::exec::{
    plain_lod_value, LodMode, QuadVec4, SampleRequest, TexelView, TextureAccess, ViewFilter,
    ViewWrap,
};
use softgpu_jit::ir::{InlineShape, SamplerHint, TextureTarget};
use std::sync::Arc;

mod compare;
pub use compare::CompareFunc;

/// Texel filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    /// Nearest texel.
    Nearest,
    /// Bilinear (or linear between levels, for the mip filter).
    Linear,
}

/// Coordinate wrap mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wrap {
    /// `REPEAT`
    Repeat,
    /// `MIRRORED_REPEAT`
    MirroredRepeat,
    /// `CLAMP_TO_EDGE`
    ClampToEdge,
    /// `CLAMP_TO_BORDER` with a transparent black border.
    ClampToBorder,
}

/// How a texture unit forms bilinear weights and filtered values: the part of sampling where
/// drivers' texture hardware (or code) differs. Measured with `tools/driver_probes.py`; the
/// evidence for each rule is in docs/fidelity.md ("Driver profiles"). Nearest filtering,
/// wrapping, texel selection, mip selection and the blend between mip levels are the same under
/// every rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FilterRule {
    /// Float weights and lerps, as softpipe's `sp_tex_sample.c` (the default).
    #[default]
    Exact,
    /// Mesa llvmpipe/lavapipe: textures of 8-bit UNORM channels are filtered in 8-bit fixed
    /// point (weights `round_ties_even(frac·256)`, each lerp `(a·(256−w) + b·w + 128) >> 8`, x
    /// first), so results are multiples of 1/255; other formats as `Exact`.
    Llvmpipe,
    /// NVIDIA: each axis's weight is rounded to 1/256 (half up), each corner's weight (their
    /// product) again to 1/256; 8-bit UNORM textures are filtered to 16 bits (`c·257` weighted,
    /// rounded half up, read as `r/65535`); sRGB textures decode through NVIDIA's table and
    /// their filtered value is rounded to half precision; other formats sum the weighted texels
    /// exactly and round once to f32.
    Nvidia,
}

impl FilterRule {
    /// Every rule.
    pub const ALL: [FilterRule; 3] = [FilterRule::Exact, FilterRule::Llvmpipe, FilterRule::Nvidia];
}

/// Sampler state (`pipe_sampler_state`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplerState {
    /// Filter when minifying (lod > 0).
    pub min_filter: Filter,
    /// Filter when magnifying (lod ≤ 0).
    pub mag_filter: Filter,
    /// Filter between mip levels; `None` samples the base level only.
    pub mip_filter: Option<Filter>,
    /// Wrap of s.
    pub wrap_s: Wrap,
    /// Wrap of t.
    pub wrap_t: Wrap,
    /// Wrap of r.
    pub wrap_r: Wrap,
    /// Added to the computed (and explicit) level of detail.
    pub lod_bias: f32,
    /// Lower lod clamp.
    pub min_lod: f32,
    /// Upper lod clamp.
    pub max_lod: f32,
    /// The comparison of depth-compare lookups (shadow targets); `None` returns the texel
    /// uncompared, like softpipe with `compare_mode` NONE.
    pub compare: Option<CompareFunc>,
}

impl Default for SamplerState {
    /// Linear, clamp to edge, no mipmapping; lod clamps as Mesa's state tracker derives them
    /// from GL defaults (`min_lod = MAX2(GL_TEXTURE_MIN_LOD, 0)` = 0, `max_lod` = 1000).
    fn default() -> Self {
        SamplerState::new(Filter::Linear, Wrap::ClampToEdge)
    }
}

/// A [`TexelView`]'s wrap mode for `wrap` on an axis of `size` texels.
fn view_wrap(wrap: Wrap, size: u32) -> ViewWrap {
    match wrap {
        Wrap::Repeat if size.is_power_of_two() => ViewWrap::RepeatPot,
        Wrap::Repeat => ViewWrap::Repeat,
        Wrap::ClampToEdge => ViewWrap::ClampToEdge,
        Wrap::ClampToBorder => ViewWrap::ClampToBorder,
        Wrap::MirroredRepeat => ViewWrap::MirroredRepeat,
    }
}

/// A [`TexelView`]'s filter for `filter`.
fn view_filter(filter: Filter) -> ViewFilter {
    match filter {
        Filter::Nearest => ViewFilter::Nearest,
        Filter::Linear => ViewFilter::Linear,
    }
}

impl SamplerState {
    /// The shape inline texture code may be compiled for (a [`SamplerHint`]'s) when this
    /// sampler samples a 2D texture of level-0 `size`, if it has one. With `size` unknown,
    /// REPEAT has none (its shape needs power-of-two sizes).
    ///
    /// [`SamplerHint`]: softgpu_jit::ir::SamplerHint
    pub fn inline_shape(&self, size: Option<(u32, u32)>) -> Option<InlineShape> {
        let plain = plain_lod_value;
        if !(plain(self.lod_bias) && plain(self.min_lod) && plain(self.max_lod)) {
            return None;
        }
        if size.is_none() && (self.wrap_s == Wrap::Repeat || self.wrap_t == Wrap::Repeat) {
            return None;
        }
        let (w, h) = size.unwrap_or((1, 1));
        softgpu_jit::exec::inline_shape(
            view_filter(self.min_filter),
            view_filter(self.mag_filter),
            self.mip_filter.map(view_filter),
            view_wrap(self.wrap_s, w),
            view_wrap(self.wrap_t, h),
        )
    }

    /// A sampler with one filter for min and mag, no mipmapping, one wrap mode for all axes.
    pub fn new(filter: Filter, wrap: Wrap) -> SamplerState {
        SamplerState {
            min_filter: filter,
            mag_filter: filter,
            mip_filter: None,
            wrap_s: wrap,
            wrap_t: wrap,
            wrap_r: wrap,
            lod_bias: 0.0,
            min_lod: 0.0,
            max_lod: 1000.0,
            compare: None,
        }
    }

    /// The same sampler with a mip filter.
    pub fn with_mip_filter(mut self, mip_filter: Option<Filter>) -> SamplerState {
        self.mip_filter = mip_filter;
        self
    }

    /// Whether sampling `texture` with this sampler gives each lane of a quad a texel that
    /// depends on that lane's coordinates only: the level of detail (computed from the quad)
    /// then picks neither the filter nor the level. What `opt::specialize` needs to know.
    pub fn is_level_independent(&self, texture: &Texture) -> bool {
        self.min_filter == self.mag_filter
            && (self.mip_filter.is_none() || texture.level_count() == 1)
    }
}

/// What a texel fetch (TXF, GLSL `texelFetch`) reads outside its texture. GL and Vulkan leave it
/// undefined without robustness; drivers disagree, so the caller picks the driver it follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FetchBounds {
    /// Mesa softpipe's `sp_get_texels`: lane 0's level (clamped to the chain) for the whole quad
    /// and coordinates clamped to that level, so out-of-range fetches read the edge texel.
    #[default]
    ClampToEdge,
    /// Vulkan's robust image access (`robustImageAccess2`), what lavapipe and desktop GPUs return:
    /// a lane whose level or coordinates fall outside the texture reads zero in all four
    /// channels; every lane uses its own level.
    Zero,
}

/// Texture units: per unit an optional texture with its sampler state. Implements
/// [`TextureAccess`]; lookups on units with nothing bound return zero.
#[derive(Clone, Debug, Default)]
pub struct TextureUnits {
    units: Vec<Option<(Arc<Texture>, SamplerState)>>,
    fetch_bounds: FetchBounds,
    filter_rule: FilterRule,
}

impl TextureUnits {
    /// No units bound.
    pub fn new() -> TextureUnits {
        TextureUnits::default()
    }

    /// Sets what out-of-range texel fetches read ([`FetchBounds::ClampToEdge`] by default).
    pub fn with_fetch_bounds(mut self, bounds: FetchBounds) -> TextureUnits {
        self.fetch_bounds = bounds;
        self
    }

    /// Sets how bilinear filtering forms weights and values ([`FilterRule::Exact`] by default).
    /// A rule other than `Exact` turns off the JIT's inline texture paths for these units: every
    /// sample then runs this sampler's code, so both executors give the same bits.
    pub fn with_filter_rule(mut self, rule: FilterRule) -> TextureUnits {
        self.filter_rule = rule;
        self
    }

    /// The filter rule (see [`TextureUnits::with_filter_rule`]).
    pub fn filter_rule(&self) -> FilterRule {
        self.filter_rule
    }

    /// Binds a texture and its sampler state to a unit (replacing what was there).
    pub fn bind(&mut self, unit: u32, texture: Arc<Texture>, sampler: SamplerState) {
        let unit = unit as usize;
        if self.units.len() <= unit {
            self.units.resize(unit + 1, None);
        }
        self.units[unit] = Some((texture, sampler));
    }

    /// Unbinds a unit.
    pub fn unbind(&mut self, unit: u32) {
        if let Some(u) = self.units.get_mut(unit as usize) {
            *u = None;
        }
    }

    /// Bit `n` set for every unit `n` < 64 whose sampling is level-independent (see
    /// [`SamplerState::is_level_independent`]) or that has nothing bound (it reads zero).
    pub fn level_independent_units(&self) -> u64 {
        self.units
            .iter()
            .enumerate()
            .take(64)
            .filter(|(_, bound)| {
                bound
                    .as_ref()
                    .is_some_and(|(texture, sampler)| !sampler.is_level_independent(texture))
            })
            .fold(u64::MAX, |all, (unit, _)| all & !(1 << unit))
    }

    /// A hint (see [`Program::sampler_hints`]) for every bound unit whose texture and sampler
    /// have an inline shape, for compiling programs that sample these units.
    ///
    /// [`Program::sampler_hints`]: softgpu_jit::ir::Program::sampler_hints
    pub fn sampler_hints(&self) -> Vec<SamplerHint> {
        if self.filter_rule != FilterRule::Exact {
            return Vec::new();
        }
        self.units
            .iter()
            .enumerate()
            .filter_map(|(unit, bound)| {
                let (texture, sampler) = bound.as_ref()?;
                let size = (texture.width(), texture.height());
                let shape = sampler.inline_shape(Some(size))?;
                Some(SamplerHint {
                    unit: unit as u32,
                    shape,
                })
            })
            .collect()
    }

    /// What is bound to a unit.
    pub fn get(&self, unit: u32) -> Option<&(Arc<Texture>, SamplerState)> {
        self.units.get(unit as usize).and_then(|u| u.as_ref())
    }

    /// The view's texture with the sampler unit's state (the view's own if that unit is empty).
    fn resolve(&self, view: u32, sampler: u32) -> Option<(&Texture, &SamplerState)> {
        let (tex, own) = self.get(view)?;
        let samp = self.get(sampler).map_or(own, |(_, s)| s);
        Some((tex, samp))
    }
}

/// How a target addresses the 2D storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dim {
    /// 1D: s only, row 0.
    D1,
    /// 1D array: s, layer in t (one layer).
    D1Array,
    /// 2D with normalized coordinates.
    D2,
    /// Rectangle: 2D with unnormalized coordinates.
    Rect,
    /// 2D array: s, t, layer in r (one layer).
    D2Array,
}

fn dim_of(target: TextureTarget) -> Option<Dim> {
    use TextureTarget as T;
    match target {
        T::Tex1D | T::Shadow1D => Some(Dim::D1),
        T::Tex1DArray | T::Shadow1DArray => Some(Dim::D1Array),
        T::Tex2D | T::Shadow2D => Some(Dim::D2),
        T::Rect | T::ShadowRect => Some(Dim::Rect),
        T::Tex2DArray | T::Shadow2DArray => Some(Dim::D2Array),
        _ => None,
    }
}

/// Mesa's `util_ifloor`: floor through two f64 → f32 roundings (exact for |f| < 2^22; mirrored
/// bit for bit beyond, NaN gives 0).
#[inline(always)]
fn ifloor(f: f32) -> i32 {
    if f.abs() < 4_194_304.0 {
        // The common case, without the f64 round trip: truncate and step down for negatives.
        let t = f as i32;
        return t - ((t as f32 > f) as i32);
    }
    ifloor_wide(f)
}

#[cold]
fn ifloor_wide(f: f32) -> i32 {
    const C: f64 = (3u32 << 22) as f64 + 0.5;
    let ai = ((C + f as f64) as f32).to_bits() as i32;
    let bi = ((C - f as f64) as f32).to_bits() as i32;
    ai.wrapping_sub(bi) >> 1
}

/// softpipe's `frac`: `f - floorf(f)`.
#[inline(always)]
fn frac(f: f32) -> f32 {
    if f.abs() < 4_194_304.0 {
        // floorf(f) is exactly representable here, so this equals f - floorf(f).
        let t = f as i32;
        return f - (t - ((t as f32 > f) as i32)) as f32;
    }
    f - f.floor()
}

/// Mesa's `util_fast_log2`: exponent plus a 257-entry table of the rounded mantissa.
#[inline]
pub fn fast_log2(x: f32) -> f32 {
    let i = x.to_bits();
    let epart = (((i & 0x7f80_0000) >> 23) as i32 - 127) as f32;
    let idx = ((i & 0x007f_ffff) + (1 << (22 - 8))) >> (23 - 8);
    epart + f32::from_bits(LOG2_TABLE_BITS[idx as usize])
}

/// Mesa's `CLAMP`: NaN goes to `min`.
#[inline]
fn clampf(x: f32, min: f32, max: f32) -> f32 {
    if x > min {
        if x > max {
            max
        } else {
            x
        }
    } else {
        min
    }
}

/// `frac(u)` given `ifloor(u)`, which is the exact floor wherever the shortcut is taken.
#[inline(always)]
fn frac_with_floor(u: f32, fl: i32) -> f32 {
    if u.abs() < 4_194_304.0 {
        u - fl as f32
    } else {
        frac(u)
    }
}

/// softpipe's `repeat`: `(coord + size * 1024) % size` in unsigned arithmetic.
#[inline(always)]
fn repeat(coord: i32, size: u32) -> i32 {
    // Coordinates one texel outside the image are the common case; skip the division.
    if coord >= 0 && coord < size as i32 {
        return coord;
    }
    if coord == -1 {
        return size as i32 - 1;
    }
    if coord == size as i32 {
        return 0;
    }
    ((coord as u32).wrapping_add(size.wrapping_mul(1024)) % size) as i32
}

#[inline(always)]
fn wrap_nearest(mode: Wrap, s: f32, size: u32, offset: i32) -> i32 {
    let fsize = size as f32;
    match mode {
        Wrap::Repeat => repeat(ifloor(s * fsize) + offset, size),
        Wrap::ClampToEdge => {
            let s = s * fsize + offset as f32;
            if s < 0.5 {
                0
            } else if s > fsize - 0.5 {
                size as i32 - 1
            } else {
                ifloor(s)
            }
        }
        Wrap::ClampToBorder => {
            let s = s * fsize + offset as f32;
            if s <= -0.5 {
                -1
            } else if s >= fsize + 0.5 {
                size as i32
            } else {
                ifloor(s)
            }
        }
        Wrap::MirroredRepeat => {
            let min = 1.0 / (2.0 * fsize);
            let max = 1.0 - min;
            let s = s + offset as f32 / fsize;
            let flr = ifloor(s);
            let mut u = frac(s);
            if flr & 1 != 0 {
                u = 1.0 - u;
            }
            if u < min {
                0
            } else if u > max {
                size as i32 - 1
            } else {
                ifloor(u * fsize)
            }
        }
    }
}

/// Returns (i0, i1, weight).
#[inline(always)]
fn wrap_linear(mode: Wrap, s: f32, size: u32, offset: i32) -> (i32, i32, f32) {
    let fsize = size as f32;
    match mode {
        Wrap::Repeat => {
            let u = s * fsize - 0.5;
            let fl = ifloor(u);
            let i0 = repeat(fl + offset, size);
            let i1 = repeat(i0 + 1, size);
            (i0, i1, frac_with_floor(u, fl))
        }
        Wrap::ClampToEdge => {
            let u = clampf(s * fsize + offset as f32, 0.0, fsize) - 0.5;
            let fl = ifloor(u);
            let mut i0 = fl;
            let mut i1 = i0 + 1;
            if i0 < 0 {
                i0 = 0;
            }
            if i1 >= size as i32 {
                i1 = size as i32 - 1;
            }
            (i0, i1, frac_with_floor(u, fl))
        }
        Wrap::ClampToBorder => {
            let u = clampf(s * fsize + offset as f32, -1.0, fsize + 0.5) - 0.5;
            let i0 = ifloor(u);
            (i0, i0 + 1, frac(u))
        }
        Wrap::MirroredRepeat => {
            let s = s + offset as f32 / fsize;
            let flr = ifloor(s);
            let no_mirror = flr & 1 == 0;
            let mut u = frac(s);
            if no_mirror {
                u = u * fsize - 0.5;
            } else {
                u = 1.0 - u;
                u = u * fsize + 0.5;
            }
            let mut i0 = ifloor(u);
            let mut i1 = if no_mirror { i0 + 1 } else { i0 - 1 };
            let n = size as i32;
            if i0 < 0 {
                i0 += 1;
            }
            if i0 >= n {
                i0 = n - 1;
            }
            if i1 >= n {
                i1 = n - 1;
            }
            if i1 < 0 {
                i1 += 1;
            }
            let w = if no_mirror { frac(u) } else { frac(1.0 - u) };
            (i0, i1, w)
        }
    }
}

/// Unnormalized (RECT) nearest wrap: only the clamp modes exist; softpipe treats the others
/// as `CLAMP`.
fn wrap_nearest_unorm(mode: Wrap, s: f32, size: u32, offset: i32) -> i32 {
    let fsize = size as f32;
    match mode {
        Wrap::ClampToEdge => ifloor(clampf(s + offset as f32, 0.5, fsize - 0.5)),
        Wrap::ClampToBorder => ifloor(clampf(s + offset as f32, -0.5, fsize + 0.5)),
        Wrap::Repeat | Wrap::MirroredRepeat => (ifloor(s) + offset).clamp(0, size as i32 - 1),
    }
}

fn wrap_linear_unorm(mode: Wrap, s: f32, size: u32, offset: i32) -> (i32, i32, f32) {
    let fsize = size as f32;
    let n = size as i32;
    match mode {
        Wrap::ClampToEdge => {
            let u = clampf(s + offset as f32, 0.5, fsize - 0.5) - 0.5;
            let i0 = ifloor(u);
            (i0, (i0 + 1).min(n - 1), frac(u))
        }
        Wrap::ClampToBorder => {
            let u = clampf(s + offset as f32, -0.5, fsize + 0.5) - 0.5;
            let i0 = ifloor(u);
            (i0, (i0 + 1).min(n - 1), frac(u))
        }
        Wrap::Repeat | Wrap::MirroredRepeat => {
            let u = clampf(s + offset as f32 - 0.5, 0.0, fsize - 1.0);
            let i0 = ifloor(u);
            (i0, i0 + 1, frac(u))
        }
    }
}

/// Reads decoded texels as floats (integer formats: their bits, as softpipe's tile cache).
trait Texels: Copy {
    /// Bytes per texel.
    fn bytes(self) -> usize;
    /// The texel `p` (exactly [`Self::bytes`] long) as floats.
    fn decode(self, p: &[u8]) -> [f32; 4];

    /// What texels outside a border-clamped level read.
    #[inline(always)]
    fn border(self) -> [f32; 4] {
        BORDER
    }

    /// Texel `index` of a level's bytes (zero past the end).
    #[inline(always)]
    fn texel(self, data: &[u8], index: usize) -> [f32; 4] {
        let n = self.bytes();
        let o = index * n;
        match data.get(o..o + n) {
            Some(p) => self.decode(p),
            None => [0.0; 4],
        }
    }
}

/// `R8G8B8A8_UNORM` through a 256-entry `ubyte_to_float` table.
#[derive(Clone, Copy)]
struct Rgba8<'t>(&'t [f32; 256]);

impl Texels for Rgba8<'_> {
    #[inline(always)]
    fn bytes(self) -> usize {
        4
    }
    #[inline(always)]
    fn decode(self, p: &[u8]) -> [f32; 4] {
        [0, 1, 2, 3].map(|c| self.0[p[c] as usize])
    }
}

/// `R8G8B8A8_SRGB` through the 256-entry sRGB-to-linear table (alpha is linear).
#[derive(Clone, Copy)]
struct Srgb8<'t>(&'t [f32; 256]);

impl Texels for Srgb8<'_> {
    #[inline(always)]
    fn bytes(self) -> usize {
        4
    }
    #[inline(always)]
    fn decode(self, p: &[u8]) -> [f32; 4] {
        [
            super::format::srgb8_to_linear_float(p[0]),
            super::format::srgb8_to_linear_float(p[1]),
            super::format::srgb8_to_linear_float(p[2]),
            self.0[p[3] as usize],
        ]
    }
}

/// `R16G16B16A16_SFLOAT`, the float framebuffer format of RetroArch presets.
#[derive(Clone, Copy)]
struct Rgba16f;

impl Texels for Rgba16f {
    #[inline(always)]
    fn bytes(self) -> usize {
        8
    }
    #[inline(always)]
    fn decode(self, p: &[u8]) -> [f32; 4] {
        std::array::from_fn(|c| {
            super::format::f16_to_f32(u16::from_le_bytes([p[2 * c], p[2 * c + 1]]))
        })
    }
}

/// `R32G32B32A32_SFLOAT`: the texel's own floats.
#[derive(Clone, Copy)]
struct Rgba32f;

impl Texels for Rgba32f {
    #[inline(always)]
    fn bytes(self) -> usize {
        16
    }
    #[inline(always)]
    fn decode(self, p: &[u8]) -> [f32; 4] {
        std::array::from_fn(|c| {
            f32::from_le_bytes([p[4 * c], p[4 * c + 1], p[4 * c + 2], p[4 * c + 3]])
        })
    }
}

/// Any format through [`Format::decode`].
#[derive(Clone, Copy)]
struct AnyFormat(Format, usize);

impl Texels for AnyFormat {
    #[inline]
    fn bytes(self) -> usize {
        self.1
    }
    #[inline]
    fn decode(self, p: &[u8]) -> [f32; 4] {
        self.0.decode(p).map(f32::from_bits)
    }
}

/// The sampler's decoder of `format`'s texels as `f32` bits (exactly [`Format::decode`]'s
/// values): the fast ones of the formats filter chains render to, else `Format::decode`.
pub(super) fn texel_decoder(format: Format) -> impl Fn(&[u8]) -> [u32; 4] + Sync {
    let table = ubyte_table();
    let bits = |v: [f32; 4]| v.map(f32::to_bits);
    move |p: &[u8]| match format {
        Format::R8G8B8A8Unorm => bits(Rgba8(table).decode(p)),
        Format::R8G8B8A8Srgb => bits(Srgb8(table).decode(p)),
        Format::R16G16B16A16Sfloat => bits(Rgba16f.decode(p)),
        Format::R32G32B32A32Sfloat => bits(Rgba32f.decode(p)),
        f => f.decode(p),
    }
}

/// `ubyte_to_float` of every byte value.
pub(super) fn ubyte_table() -> &'static [f32; 256] {
    static TABLE: std::sync::OnceLock<[f32; 256]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| std::array::from_fn(|i| super::format::ubyte_to_float(i as u8)))
}

/// Which image filter softpipe's `get_img_filter` picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Img {
    NearestRepeatPot,
    LinearRepeatPot,
    Nearest,
    Linear,
}

/// How [`Ctx`] blends the texels of a bilinear footprint ([`FilterRule`] for this texture).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Blend {
    /// Float lerps (softpipe).
    Exact,
    /// llvmpipe's 8-bit fixed point (UNORM8 textures under [`FilterRule::Llvmpipe`]).
    Llvmpipe8,
    /// NVIDIA's 1/256 weights; `Values` says how the weighted texels are summed.
    Nvidia(NvidiaValues),
}

/// How NVIDIA's texture unit sums weighted texels, by texture format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NvidiaValues {
    /// 8-bit UNORM: to 16 bits, rounded half up.
    Unorm8,
    /// sRGB: rounded to half precision.
    Srgb,
    /// Everything else: exactly, rounded once to f32.
    Float,
}

impl Blend {
    fn of(rule: FilterRule, format: Format) -> Blend {
        match rule {
            FilterRule::Exact => Blend::Exact,
            FilterRule::Llvmpipe if format.is_unorm8() => Blend::Llvmpipe8,
            FilterRule::Llvmpipe => Blend::Exact,
            FilterRule::Nvidia if format.is_unorm8() => Blend::Nvidia(NvidiaValues::Unorm8),
            FilterRule::Nvidia if format.is_srgb() => Blend::Nvidia(NvidiaValues::Srgb),
            FilterRule::Nvidia => Blend::Nvidia(NvidiaValues::Float),
        }
    }
}

/// An 8-bit UNORM texel value back to its byte (exact: texels decode as `byte · (1/255)`).
#[inline]
fn unorm8_byte(v: f32) -> u32 {
    (v * 255.0).round() as u32
}

/// llvmpipe's `lp_build_lerp` of 8-bit values with an 8-bit weight in 0..=256.
#[inline]
fn lerp8(a: u32, b: u32, w: u32) -> u32 {
    (a * (256 - w) + b * w + 128) >> 8
}

/// [`FilterRule::Llvmpipe`] for an 8-bit UNORM footprint (`t` in TL, TR, BL, BR order).
fn bilerp_llvmpipe8(xw: f32, yw: f32, t: &[[f32; 4]; 4]) -> [f32; 4] {
    let a = (xw * 256.0).round_ties_even() as u32;
    let b = (yw * 256.0).round_ties_even() as u32;
    std::array::from_fn(|c| {
        let top = lerp8(unorm8_byte(t[0][c]), unorm8_byte(t[1][c]), a);
        let bottom = lerp8(unorm8_byte(t[2][c]), unorm8_byte(t[3][c]), a);
        super::format::ubyte_to_float(lerp8(top, bottom, b) as u8)
    })
}

/// NVIDIA's weight of one axis: `frac` rounded half up to 1/256, as an integer in 0..=256.
#[inline]
fn nvidia_axis_weight(frac: f32) -> u32 {
    (frac * 256.0 + 0.5).floor() as u32
}

/// [`FilterRule::Nvidia`] for a footprint (`t` in TL, TR, BL, BR order).
fn bilerp_nvidia(xw: f32, yw: f32, t: &[[f32; 4]; 4], values: NvidiaValues) -> [f32; 4] {
    let (a, b) = (nvidia_axis_weight(xw), nvidia_axis_weight(yw));
    let corner = |x: u32, y: u32| (x * y + 128) >> 8;
    let w = [
        corner(256 - a, 256 - b),
        corner(a, 256 - b),
        corner(256 - a, b),
        corner(a, b),
    ];
    std::array::from_fn(|c| match values {
        NvidiaValues::Unorm8 => {
            let sum: u32 = (0..4).map(|i| unorm8_byte(t[i][c]) * 257 * w[i]).sum();
            let r16 = ((sum + 128) >> 8).min(65535);
            (r16 as f64 / 65535.0) as f32
        }
        NvidiaValues::Srgb | NvidiaValues::Float => {
            let sum: f64 = (0..4).map(|i| t[i][c] as f64 * w[i] as f64).sum::<f64>() / 256.0;
            if values == NvidiaValues::Srgb {
                f16_round_nearest_even(sum)
            } else {
                sum as f32
            }
        }
    })
}

/// `x` rounded to the nearest half-precision value (ties to even), as f32; |x| ≤ 65504.
fn f16_round_nearest_even(x: f64) -> f32 {
    if x == 0.0 || !x.is_finite() {
        return x as f32;
    }
    // The spacing of halves around x: 2^(e-10) for normal halves, 2^-24 below 2^-14.
    let exponent = x.abs().log2().floor().max(-14.0);
    let quantum = (exponent - 10.0).exp2();
    ((x / quantum).round_ties_even() * quantum) as f32
}

/// One sampling operation's fixed state.
struct Ctx<'a, T: Texels> {
    tex: &'a Texture,
    texels: T,
    samp: &'a SamplerState,
    blend: Blend,
    dim: Dim,
    last_level: u32,
    /// log2 of the base size when both sides are powers of two and the target is 2D.
    pot: Option<(u32, u32)>,
}

const BORDER: [f32; 4] = [0.0; 4];

/// One mip level's bytes and size.
struct Lv<'a> {
    data: &'a [u8],
    w: i32,
    h: i32,
}

impl<T: Texels> Ctx<'_, T> {
    #[inline(always)]
    fn level(&self, level: u32) -> Lv<'_> {
        let (w, h) = self.tex.level_size(level);
        Lv {
            data: self.tex.level_data(level),
            w: w as i32,
            h: h as i32,
        }
    }

    #[inline(always)]
    fn at(&self, lv: &Lv<'_>, x: i32, y: i32) -> [f32; 4] {
        if x < 0 || y < 0 || x >= lv.w || y >= lv.h {
            return self.texels.border();
        }
        self.texels
            .texel(lv.data, y as usize * lv.w as usize + x as usize)
    }

    /// The bilinear blend of a footprint under this texture's [`Blend`].
    #[inline(always)]
    fn bilerp(&self, xw: f32, yw: f32, t: &[[f32; 4]; 4]) -> [f32; 4] {
        match self.blend {
            Blend::Exact => bilerp(xw, yw, t),
            Blend::Llvmpipe8 => bilerp_llvmpipe8(xw, yw, t),
            Blend::Nvidia(values) => bilerp_nvidia(xw, yw, t, values),
        }
    }

    fn img_filter(&self, filter: Filter) -> Img {
        match (
            self.pot,
            self.samp.wrap_s == self.samp.wrap_t,
            self.samp.wrap_s,
        ) {
            (Some(_), true, Wrap::Repeat) => match filter {
                Filter::Nearest => Img::NearestRepeatPot,
                Filter::Linear => Img::LinearRepeatPot,
            },
            _ => match filter {
                Filter::Nearest => Img::Nearest,
                Filter::Linear => Img::Linear,
            },
        }
    }

    /// One texel lookup at one level (softpipe's `img_filter_*`); `gather` returns the four
    /// texels' `component` in TG4 order instead of filtering.
    #[inline(always)]
    fn filter(
        &self,
        img: Img,
        c: [f32; 3],
        level: u32,
        off: [i32; 3],
        gather: Option<usize>,
    ) -> [f32; 4] {
        let lv = self.level(level);
        let (w, h) = (lv.w as u32, lv.h as u32);
        let samp = self.samp;
        match img {
            Img::NearestRepeatPot | Img::LinearRepeatPot => {
                let (xl, yl) = self.pot.unwrap_or((0, 0));
                let xpot = if xl >= level { 1u32 << (xl - level) } else { 1 };
                let ypot = if yl >= level { 1u32 << (yl - level) } else { 1 };
                if img == Img::NearestRepeatPot {
                    let u = c[0] * xpot as f32 + off[0] as f32;
                    let v = c[1] * ypot as f32 + off[1] as f32;
                    let x0 = ifloor(u) & (xpot as i32 - 1);
                    let y0 = ifloor(v) & (ypot as i32 - 1);
                    return self.at(&lv, x0, y0);
                }
                let u = (c[0] * xpot as f32 - 0.5) + off[0] as f32;
                let v = (c[1] * ypot as f32 - 0.5) + off[1] as f32;
                let uflr = ifloor(u);
                let vflr = ifloor(v);
                let xw = u - uflr as f32;
                let yw = v - vflr as f32;
                let x0 = uflr & (xpot as i32 - 1);
                let y0 = vflr & (ypot as i32 - 1);
                let x1 = (x0 + 1) & (xpot as i32 - 1);
                let y1 = (y0 + 1) & (ypot as i32 - 1);
                let t = [
                    self.at(&lv, x0, y0),
                    self.at(&lv, x1, y0),
                    self.at(&lv, x0, y1),
                    self.at(&lv, x1, y1),
                ];
                self.bilerp(xw, yw, &t)
            }
            Img::Nearest => {
                let (x, y) = match self.dim {
                    Dim::D1 => (wrap_nearest(samp.wrap_s, c[0], w, off[0]), 0),
                    Dim::D1Array => (wrap_nearest(samp.wrap_s, c[0], w, off[0]), 0),
                    Dim::D2 | Dim::D2Array => (
                        wrap_nearest(samp.wrap_s, c[0], w, off[0]),
                        wrap_nearest(samp.wrap_t, c[1], h, off[1]),
                    ),
                    Dim::Rect => (
                        wrap_nearest_unorm(samp.wrap_s, c[0], w, off[0]),
                        wrap_nearest_unorm(samp.wrap_t, c[1], h, off[1]),
                    ),
                };
                self.at(&lv, x, y)
            }
            Img::Linear => {
                let (x0, x1, xw) = if self.dim == Dim::Rect {
                    wrap_linear_unorm(samp.wrap_s, c[0], w, off[0])
                } else {
                    wrap_linear(samp.wrap_s, c[0], w, off[0])
                };
                if matches!(self.dim, Dim::D1 | Dim::D1Array) {
                    // 1D images ignore gather (softpipe's img_filter_1d_linear has no gather).
                    let t0 = self.at(&lv, x0, 0);
                    let t1 = self.at(&lv, x1, 0);
                    if self.blend != Blend::Exact {
                        return self.bilerp(xw, 0.0, &[t0, t1, t0, t1]);
                    }
                    return std::array::from_fn(|i| lerp(xw, t0[i], t1[i]));
                }
                let (y0, y1, yw) = if self.dim == Dim::Rect {
                    wrap_linear_unorm(samp.wrap_t, c[1], h, off[1])
                } else {
                    wrap_linear(samp.wrap_t, c[1], h, off[1])
                };
                let t = [
                    self.at(&lv, x0, y0),
                    self.at(&lv, x1, y0),
                    self.at(&lv, x0, y1),
                    self.at(&lv, x1, y1),
                ];
                match gather {
                    Some(comp) => [t[2][comp], t[3][comp], t[1][comp], t[0][comp]],
                    None => self.bilerp(xw, yw, &t),
                }
            }
        }
    }

    /// softpipe's `compute_lambda_*` from the quad's corners (BR - BL for x, TL - BL for y).
    fn lambda_implicit(&self, coords: &[[f32; 4]; 4]) -> f32 {
        let dx = |c: usize| coords[c][3] - coords[c][2];
        let dy = |c: usize| coords[c][0] - coords[c][2];
        self.lambda_from(|c| (dx(c), dy(c)))
    }

    fn lambda_from(&self, d: impl Fn(usize) -> (f32, f32)) -> f32 {
        let (w, h) = (self.tex.width() as f32, self.tex.height() as f32);
        let m = |c: usize| {
            let (x, y) = d(c);
            let (x, y) = (x.abs(), y.abs());
            if x > y {
                x
            } else {
                y
            }
        };
        let rho = match self.dim {
            Dim::D1 | Dim::D1Array => m(0) * w,
            Dim::D2 | Dim::Rect | Dim::D2Array => {
                let maxx = m(0) * w;
                let maxy = m(1) * h;
                if maxx > maxy {
                    maxx
                } else {
                    maxy
                }
            }
        };
        fast_log2(rho)
    }

    /// softpipe's `compute_lambda_lod_unclamped`.
    fn lod_unclamped(&self, req: &SampleRequest) -> [f32; 4] {
        let bias = self.samp.lod_bias;
        match req.lod {
            LodMode::Implicit => [self.lambda_implicit(&req.coords) + bias; 4],
            LodMode::Bias(b) => {
                let lambda = self.lambda_implicit(&req.coords) + bias;
                b.map(|b| lambda + b)
            }
            LodMode::Explicit(l) => l.map(|l| l + bias),
            LodMode::Zero => [bias; 4],
            // Explicit gradients: no sampler bias, as in softpipe.
            LodMode::Gradient { ddx, ddy } => {
                std::array::from_fn(|lane| self.lambda_from(|c| (ddx[c][lane], ddy[c][lane])))
            }
        }
    }

    fn lod(&self, req: &SampleRequest) -> [f32; 4] {
        let (min, max) = (self.samp.min_lod, self.samp.max_lod);
        self.lod_unclamped(req).map(|l| clampf(l, min, max))
    }

    fn coords(req: &SampleRequest, lane: usize) -> [f32; 3] {
        [
            req.coords[0][lane],
            req.coords[1][lane],
            req.coords[2][lane],
        ]
    }

    /// softpipe's `sample_mip` without compare/swizzle: picks the mip filter function and runs
    /// it per lane.
    #[allow(clippy::needless_range_loop)] // lanes index several parallel arrays
    fn sample(&self, req: &SampleRequest) -> [[f32; 4]; 4] {
        let samp = self.samp;
        let off = req.offset;
        let mut out = [[0.0f32; 4]; 4];
        let mut put = |lane: usize, v: [f32; 4]| {
            for c in 0..4 {
                out[c][lane] = v[c];
            }
        };
        let min_img = self.img_filter(samp.min_filter);
        let mag_img = self.img_filter(samp.mag_filter);
        let last = self.last_level;
        match samp.mip_filter {
            None if samp.min_filter == samp.mag_filter => {
                for lane in 0..4 {
                    put(
                        lane,
                        self.filter(mag_img, Self::coords(req, lane), 0, off, None),
                    );
                }
            }
            None => {
                let lod = self.lod(req);
                for lane in 0..4 {
                    let img = if lod[lane] <= 0.0 { mag_img } else { min_img };
                    put(
                        lane,
                        self.filter(img, Self::coords(req, lane), 0, off, None),
                    );
                }
            }
            Some(Filter::Nearest) => {
                let lod = self.lod(req);
                for lane in 0..4 {
                    let c = Self::coords(req, lane);
                    let v = if lod[lane] <= 0.0 {
                        self.filter(mag_img, c, 0, off, None)
                    } else {
                        let level = ((lod[lane] + 0.5) as i32).min(last as i32);
                        self.filter(min_img, c, level.max(0) as u32, off, None)
                    };
                    put(lane, v);
                }
            }
            Some(Filter::Linear)
                if self.pot.is_some()
                    && samp.min_filter == Filter::Linear
                    && samp.mag_filter == Filter::Linear
                    && samp.wrap_s == Wrap::Repeat
                    && samp.wrap_t == Wrap::Repeat =>
            {
                // mip_filter_linear_2d_linear_repeat_POT: no min/mag switch, and a negative
                // lod in (-1, 0) blends towards level 1 (its `(unsigned)level0` test).
                let lod = self.lod(req);
                for lane in 0..4 {
                    let c = Self::coords(req, lane);
                    let level0 = lod[lane] as i32;
                    let v = if level0 as u32 >= last {
                        let level = if level0 < 0 { 0 } else { last };
                        self.filter(Img::LinearRepeatPot, c, level, off, None)
                    } else {
                        let a = self.filter(Img::LinearRepeatPot, c, level0 as u32, off, None);
                        let b = self.filter(Img::LinearRepeatPot, c, level0 as u32 + 1, off, None);
                        let blend = frac(lod[lane]);
                        std::array::from_fn(|i| lerp(blend, a[i], b[i]))
                    };
                    put(lane, v);
                }
            }
            Some(Filter::Linear) => {
                let lod = self.lod(req);
                for lane in 0..4 {
                    let c = Self::coords(req, lane);
                    let level0 = lod[lane] as i32;
                    let v = if lod[lane] <= 0.0 {
                        self.filter(mag_img, c, 0, off, None)
                    } else if level0 >= last as i32 {
                        self.filter(min_img, c, last, off, None)
                    } else {
                        let a = self.filter(min_img, c, level0 as u32, off, None);
                        let b = self.filter(min_img, c, level0 as u32 + 1, off, None);
                        let blend = frac(lod[lane]);
                        std::array::from_fn(|i| lerp(blend, a[i], b[i]))
                    };
                    put(lane, v);
                }
            }
        }
        out
    }

    /// TG4: nearest mip level of the (bias-only) lod, generic linear footprint.
    #[allow(clippy::needless_range_loop)] // lanes index several parallel arrays
    fn gather(&self, req: &SampleRequest, component: usize) -> [[f32; 4]; 4] {
        let lod = clampf(self.samp.lod_bias, self.samp.min_lod, self.samp.max_lod);
        let level = ((lod + 0.5) as i32).min(self.last_level as i32).max(0) as u32;
        let mut out = [[0.0f32; 4]; 4];
        for lane in 0..4 {
            let v = self.filter(
                Img::Linear,
                Self::coords(req, lane),
                level,
                req.offset,
                Some(component),
            );
            for c in 0..4 {
                out[c][lane] = v[c];
            }
        }
        out
    }

    /// LODQ: softpipe's `relative_level` of the mip filter in use, and the unclamped lod.
    fn query_lod(&self, req: &SampleRequest) -> [[f32; 4]; 2] {
        let lod = self.lod_unclamped(req);
        let (min, max) = (self.samp.min_lod, self.samp.max_lod);
        let max_level = self.last_level as f32;
        let clamp = |l: f32| clampf(clampf(l, min, max), 0.0, max_level);
        let level = match self.samp.mip_filter {
            None => [0.0; 4],
            Some(Filter::Nearest) => lod.map(|l| ((clamp(l) + 0.5) as i32) as f32),
            Some(Filter::Linear) => lod.map(clamp),
        };
        [level, lod]
    }
}

#[inline(always)]
fn bilerp(xw: f32, yw: f32, t: &[[f32; 4]; 4]) -> [f32; 4] {
    std::array::from_fn(|c| lerp_2d(xw, yw, t[0][c], t[1][c], t[2][c], t[3][c]))
}

fn to_bits(v: [[f32; 4]; 4]) -> QuadVec4 {
    v.map(|ch| ch.map(f32::to_bits))
}

/// Runs `f` with a context specialised for the texture's format.
fn with_ctx<R>(
    tex: &Texture,
    samp: &SamplerState,
    rule: FilterRule,
    target: TextureTarget,
    f: impl FnOnce(&dyn Sampling) -> R,
) -> Option<R> {
    let blend = Blend::of(rule, tex.format());
    let dim = dim_of(target)?;
    let (w, h) = (tex.width(), tex.height());
    let pot = (dim == Dim::D2 && w.is_power_of_two() && h.is_power_of_two())
        .then(|| (w.trailing_zeros(), h.trailing_zeros()));
    let last_level = tex.level_count() - 1;
    macro_rules! run {
        ($texels:expr) => {
            f(&Ctx {
                tex,
                texels: $texels,
                samp,
                blend,
                dim,
                last_level,
                pot,
            })
        };
    }
    // The formats filter chains render to get a decoder of their own; the rest decode generically.
    Some(match tex.format() {
        Format::R8G8B8A8Unorm => run!(Rgba8(ubyte_table())),
        Format::R8G8B8A8Srgb => run!(Srgb8(ubyte_table())),
        Format::R16G16B16A16Sfloat => run!(Rgba16f),
        Format::R32G32B32A32Sfloat => run!(Rgba32f),
        fmt => run!(AnyFormat(fmt, fmt.bytes_per_texel())),
    })
}

/// Object-safe face of [`Ctx`] so the format specialisation is chosen once per call.
trait Sampling {
    fn sample(&self, req: &SampleRequest) -> [[f32; 4]; 4];
    fn gather(&self, req: &SampleRequest, component: usize) -> [[f32; 4]; 4];
    fn query_lod(&self, req: &SampleRequest) -> [[f32; 4]; 2];
    fn compared(
        &self,
        reference: f32,
        func: CompareFunc,
        f: &dyn Fn(&dyn compare::CompareSampling) -> [[f32; 4]; 4],
    ) -> [[f32; 4]; 4];
}

impl<T: Texels> Sampling for Ctx<'_, T> {
    fn sample(&self, req: &SampleRequest) -> [[f32; 4]; 4] {
        Ctx::sample(self, req)
    }
    fn gather(&self, req: &SampleRequest, component: usize) -> [[f32; 4]; 4] {
        Ctx::gather(self, req, component)
    }
    fn query_lod(&self, req: &SampleRequest) -> [[f32; 4]; 2] {
        Ctx::query_lod(self, req)
    }
    fn compared(
        &self,
        reference: f32,
        func: CompareFunc,
        f: &dyn Fn(&dyn compare::CompareSampling) -> [[f32; 4]; 4],
    ) -> [[f32; 4]; 4] {
        Ctx::compared(self, reference, func, f)
    }
}

/// [`FetchBounds::Zero`]'s texel fetch: each lane reads its own level, and a lane whose level or
/// (offset) coordinates fall outside the texture reads zero.
fn fetch_or_zero(
    tex: &Texture,
    dim: Dim,
    coords: [[i32; 4]; 4],
    lod: [i32; 4],
    offset: [i32; 3],
) -> QuadVec4 {
    let mut out = [[0u32; 4]; 4];
    for lane in 0..4 {
        let Ok(level) = u32::try_from(lod[lane]) else {
            continue;
        };
        if level >= tex.level_count() {
            continue;
        }
        let (w, h) = tex.level_size(level);
        let x = coords[0][lane].checked_add(offset[0]);
        let y = match dim {
            Dim::D1 | Dim::D1Array => Some(0),
            _ => coords[1][lane].checked_add(offset[1]),
        };
        let (Some(x), Some(y)) = (
            x.and_then(|x| u32::try_from(x).ok()).filter(|&x| x < w),
            y.and_then(|y| u32::try_from(y).ok()).filter(|&y| y < h),
        ) else {
            continue;
        };
        let v = tex.read_texel(level, x, y);
        for c in 0..4 {
            out[c][lane] = v[c];
        }
    }
    out
}

impl TextureAccess for TextureUnits {
    fn sample(&self, request: &SampleRequest) -> QuadVec4 {
        let Some((tex, samp)) = self.resolve(request.view, request.sampler) else {
            return [[0; 4]; 4];
        };
        if let (Some(func), Some(reference)) = (samp.compare, request.compare) {
            return compare::sample(tex, samp, func, request, reference)
                .map_or([[0; 4]; 4], to_bits);
        }
        with_ctx(tex, samp, self.filter_rule, request.target, |ctx| {
            to_bits(ctx.sample(request))
        })
        .unwrap_or([[0; 4]; 4])
    }

    fn gather(&self, request: &SampleRequest, component: u32) -> QuadVec4 {
        let Some((tex, samp)) = self.resolve(request.view, request.sampler) else {
            return [[0; 4]; 4];
        };
        let component = (component & 3) as usize;
        if let (Some(func), Some(reference)) = (samp.compare, request.compare) {
            return compare::gather(tex, samp, func, request, reference)
                .map_or([[0; 4]; 4], to_bits);
        }
        with_ctx(tex, samp, self.filter_rule, request.target, |ctx| {
            to_bits(ctx.gather(request, component))
        })
        .unwrap_or([[0; 4]; 4])
    }

    /// softpipe's `sp_get_texels`: one level for the quad (lane 0's lod, clamped to the
    /// chain) and coordinates clamped to the level — out-of-range fetches read the edge texel,
    /// as on Mesa softpipe, not zero. With [`FetchBounds::Zero`], per-lane levels and zero out of
    /// range instead.
    fn fetch(
        &self,
        view: u32,
        target: TextureTarget,
        coords: [[i32; 4]; 4],
        lod: [i32; 4],
        offset: [i32; 3],
    ) -> QuadVec4 {
        let mut out = [[0u32; 4]; 4];
        let Some((tex, _)) = self.get(view) else {
            return out;
        };
        let dim = match target {
            TextureTarget::Tex2DMsaa => Dim::D2,
            t => match dim_of(t) {
                Some(d) => d,
                None => return out,
            },
        };
        if self.fetch_bounds == FetchBounds::Zero {
            return fetch_or_zero(tex, dim, coords, lod, offset);
        }
        let last = tex.level_count() as i32 - 1;
        let level = lod[0].clamp(0, last) as u32;
        let (w, h) = tex.level_size(level);
        for lane in 0..4 {
            let x = coords[0][lane]
                .saturating_add(offset[0])
                .clamp(0, w as i32 - 1) as u32;
            let y = match dim {
                Dim::D1 | Dim::D1Array => 0,
                _ => coords[1][lane]
                    .saturating_add(offset[1])
                    .clamp(0, h as i32 - 1) as u32,
            };
            let v = tex.read_texel(level, x, y);
            for c in 0..4 {
                out[c][lane] = v[c];
            }
        }
        out
    }

    /// softpipe's `sp_get_dims`: width, height (1D arrays: layers), layers of 2D arrays, and
    /// the level count; zero for levels outside the chain and unsupported targets.
    fn size(&self, view: u32, target: TextureTarget, lod: i32) -> [u32; 4] {
        let Some((tex, _)) = self.get(view) else {
            return [0; 4];
        };
        if lod < 0 || lod >= tex.level_count() as i32 {
            return [0; 4];
        }
        let (w, h) = tex.level_size(lod as u32);
        let levels = tex.level_count();
        match dim_of(target) {
            Some(Dim::D1) => [w, 0, 0, levels],
            Some(Dim::D1Array) => [w, 1, 0, levels],
            Some(Dim::D2) | Some(Dim::Rect) => [w, h, 0, levels],
            Some(Dim::D2Array) => [w, h, 1, levels],
            None if target == TextureTarget::Tex2DMsaa => [w, h, 0, levels],
            None => [0; 4],
        }
    }

    fn query_lod(&self, request: &SampleRequest) -> [[f32; 4]; 2] {
        let Some((tex, samp)) = self.resolve(request.view, request.sampler) else {
            return [[0.0; 4]; 2];
        };
        with_ctx(tex, samp, self.filter_rule, request.target, |ctx| {
            ctx.query_lod(request)
        })
        .unwrap_or([[0.0; 4]; 2])
    }

    /// Any 2D texture whose format decodes to floats (see [`Texture::decoded_levels`]), with
    /// lod clamps and bias that are finite and not denormal: `sample` then filters the
    /// decoded levels with softpipe's `img_filter_2d_*` and `mip_filter_*` functions, which the
    /// view's state selects exactly as `Ctx::sample` does.
    fn texel_view(&self, view: u32, sampler: u32, target: TextureTarget) -> Option<TexelView<'_>> {
        if target != TextureTarget::Tex2D || self.filter_rule != FilterRule::Exact {
            return None;
        }
        let (tex, samp) = self.resolve(view, sampler)?;
        let (width, height) = (tex.width(), tex.height());
        let wrap = view_wrap;
        let plain = plain_lod_value;
        if !(plain(samp.lod_bias) && plain(samp.min_lod) && plain(samp.max_lod)) {
            return None;
        }
        let filter = view_filter;
        let (texels, levels) = tex.decoded_levels()?;
        Some(TexelView {
            texels,
            levels,
            width,
            height,
            min_filter: filter(samp.min_filter),
            mag_filter: filter(samp.mag_filter),
            mip_filter: samp.mip_filter.map(filter),
            wrap_s: wrap(samp.wrap_s, width),
            wrap_t: wrap(samp.wrap_t, height),
            lod_bias: samp.lod_bias,
            min_lod: samp.min_lod,
            max_lod: samp.max_lod,
            log2_table: &LOG2_TABLE_BITS,
        })
    }

    /// [`Texture::padded_level0`] for the wrap mode of the unit's inline shape, made on first
    /// request (once per texture and wrap mode).
    fn padded_level0(&self, view: u32, sampler: u32) -> Option<&[u8]> {
        if self.filter_rule != FilterRule::Exact {
            return None;
        }
        let (tex, samp) = self.resolve(view, sampler)?;
        let shape = samp.inline_shape(Some((tex.width(), tex.height())))?;
        tex.padded_level0(shape.wrap)
    }
}
