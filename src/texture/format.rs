//! Texel formats: the render-target and texture formats of RetroArch's slang spec, with the exact
//! float/integer conversions Mesa 22.3 (softpipe) applies when it writes shader outputs to a
//! render target (`util_format_*_pack_rgba_*`) and when it reads texels (`*_unpack_rgba_*`).

use super::tables::{
    LINEAR_TO_SRGB8_HELPER, NVIDIA_LINEAR_TO_SRGB8_STARTS, NVIDIA_SRGB8_TO_LINEAR_BITS,
    SRGB8_TO_LINEAR_BITS,
};

/// A texel format. Names follow the slang spec (`R8G8B8A8_UNORM`, …); memory layout is the Vulkan
/// one: channels in name order, little-endian, `A2B10G10R10_*_PACK32` is one 32-bit word with R in
/// the low bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// `R8_UNORM`
    R8Unorm,
    /// `R8_UINT`
    R8Uint,
    /// `R8_SINT`
    R8Sint,
    /// `R8G8_UNORM`
    R8G8Unorm,
    /// `R8G8_UINT`
    R8G8Uint,
    /// `R8G8_SINT`
    R8G8Sint,
    /// `R8G8B8A8_UNORM`
    R8G8B8A8Unorm,
    /// `R8G8B8A8_UINT`
    R8G8B8A8Uint,
    /// `R8G8B8A8_SINT`
    R8G8B8A8Sint,
    /// `R8G8B8A8_SRGB`
    R8G8B8A8Srgb,
    /// `R8G8B8A8_SRGB` converted with Mesa llvmpipe/lavapipe's approximations instead of the exact
    /// curve (see `llvmpipe_srgb8_to_linear`); not a slang-spec name, so not in [`Format::ALL`].
    R8G8B8A8SrgbLlvmpipe,
    /// `R8G8B8A8_UNORM` written with NVIDIA's conversion ([`nvidia_float_to_ubyte`]) instead of
    /// Mesa's rounding; read alike. Not a slang-spec name, so not in [`Format::ALL`].
    R8G8B8A8UnormNvidia,
    /// `R8G8B8A8_SRGB` converted with NVIDIA's measured tables ([`nvidia_linear_to_srgb8`],
    /// [`nvidia_srgb8_to_linear`]); alpha as [`Format::R8G8B8A8UnormNvidia`]. Not a slang-spec
    /// name, so not in [`Format::ALL`].
    R8G8B8A8SrgbNvidia,
    /// `B8G8R8A8_UNORM` (not in the slang spec; the byte order of many window systems)
    B8G8R8A8Unorm,
    /// `A2B10G10R10_UNORM_PACK32`
    A2B10G10R10UnormPack32,
    /// `A2B10G10R10_UINT_PACK32`
    A2B10G10R10UintPack32,
    /// `R16_UINT`
    R16Uint,
    /// `R16_SINT`
    R16Sint,
    /// `R16_SFLOAT`
    R16Sfloat,
    /// `R16G16_UINT`
    R16G16Uint,
    /// `R16G16_SINT`
    R16G16Sint,
    /// `R16G16_SFLOAT`
    R16G16Sfloat,
    /// `R16G16B16A16_UINT`
    R16G16B16A16Uint,
    /// `R16G16B16A16_SINT`
    R16G16B16A16Sint,
    /// `R16G16B16A16_SFLOAT`
    R16G16B16A16Sfloat,
    /// `R32_UINT`
    R32Uint,
    /// `R32_SINT`
    R32Sint,
    /// `R32_SFLOAT`
    R32Sfloat,
    /// `R32G32_UINT`
    R32G32Uint,
    /// `R32G32_SINT`
    R32G32Sint,
    /// `R32G32_SFLOAT`
    R32G32Sfloat,
    /// `R32G32B32A32_UINT`
    R32G32B32A32Uint,
    /// `R32G32B32A32_SINT`
    R32G32B32A32Sint,
    /// `R32G32B32A32_SFLOAT`
    R32G32B32A32Sfloat,
}

/// How a channel's bits are interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Unorm,
    UnormNvidia,
    Srgb,
    SrgbLlvmpipe,
    SrgbNvidia,
    Float,
    Uint,
    Sint,
}

/// The storage layout of a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// `channels` channels of `bytes` bytes each, in RGBA order.
    Array { channels: usize, bytes: usize },
    /// B, G, R, A bytes.
    Bgra8,
    /// One u32: R bits 0..10, G 10..20, B 20..30, A 30..32.
    Rgb10A2,
}

impl Format {
    /// Every format, in declaration order.
    pub const ALL: [Format; 31] = [
        Format::R8Unorm,
        Format::R8Uint,
        Format::R8Sint,
        Format::R8G8Unorm,
        Format::R8G8Uint,
        Format::R8G8Sint,
        Format::R8G8B8A8Unorm,
        Format::R8G8B8A8Uint,
        Format::R8G8B8A8Sint,
        Format::R8G8B8A8Srgb,
        Format::B8G8R8A8Unorm,
        Format::A2B10G10R10UnormPack32,
        Format::A2B10G10R10UintPack32,
        Format::R16Uint,
        Format::R16Sint,
        Format::R16Sfloat,
        Format::R16G16Uint,
        Format::R16G16Sint,
        Format::R16G16Sfloat,
        Format::R16G16B16A16Uint,
        Format::R16G16B16A16Sint,
        Format::R16G16B16A16Sfloat,
        Format::R32Uint,
        Format::R32Sint,
        Format::R32Sfloat,
        Format::R32G32Uint,
        Format::R32G32Sint,
        Format::R32G32Sfloat,
        Format::R32G32B32A32Uint,
        Format::R32G32B32A32Sint,
        Format::R32G32B32A32Sfloat,
    ];

    /// The slang-spec name, e.g. `"R8G8B8A8_UNORM"`.
    pub fn name(self) -> &'static str {
        match self {
            Format::R8Unorm => "R8_UNORM",
            Format::R8Uint => "R8_UINT",
            Format::R8Sint => "R8_SINT",
            Format::R8G8Unorm => "R8G8_UNORM",
            Format::R8G8Uint => "R8G8_UINT",
            Format::R8G8Sint => "R8G8_SINT",
            Format::R8G8B8A8Unorm => "R8G8B8A8_UNORM",
            Format::R8G8B8A8Uint => "R8G8B8A8_UINT",
            Format::R8G8B8A8Sint => "R8G8B8A8_SINT",
            Format::R8G8B8A8Srgb | Format::R8G8B8A8SrgbLlvmpipe | Format::R8G8B8A8SrgbNvidia => {
                "R8G8B8A8_SRGB"
            }
            Format::R8G8B8A8UnormNvidia => "R8G8B8A8_UNORM",
            Format::B8G8R8A8Unorm => "B8G8R8A8_UNORM",
            Format::A2B10G10R10UnormPack32 => "A2B10G10R10_UNORM_PACK32",
            Format::A2B10G10R10UintPack32 => "A2B10G10R10_UINT_PACK32",
            Format::R16Uint => "R16_UINT",
            Format::R16Sint => "R16_SINT",
            Format::R16Sfloat => "R16_SFLOAT",
            Format::R16G16Uint => "R16G16_UINT",
            Format::R16G16Sint => "R16G16_SINT",
            Format::R16G16Sfloat => "R16G16_SFLOAT",
            Format::R16G16B16A16Uint => "R16G16B16A16_UINT",
            Format::R16G16B16A16Sint => "R16G16B16A16_SINT",
            Format::R16G16B16A16Sfloat => "R16G16B16A16_SFLOAT",
            Format::R32Uint => "R32_UINT",
            Format::R32Sint => "R32_SINT",
            Format::R32Sfloat => "R32_SFLOAT",
            Format::R32G32Uint => "R32G32_UINT",
            Format::R32G32Sint => "R32G32_SINT",
            Format::R32G32Sfloat => "R32G32_SFLOAT",
            Format::R32G32B32A32Uint => "R32G32B32A32_UINT",
            Format::R32G32B32A32Sint => "R32G32B32A32_SINT",
            Format::R32G32B32A32Sfloat => "R32G32B32A32_SFLOAT",
        }
    }

    /// The format with the given slang-spec name (exact, upper case), if any.
    pub fn from_name(s: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name() == s)
    }

    fn kind(self) -> Kind {
        use Format::*;
        match self {
            R8Unorm | R8G8Unorm | R8G8B8A8Unorm | B8G8R8A8Unorm | A2B10G10R10UnormPack32 => {
                Kind::Unorm
            }
            R8G8B8A8Srgb => Kind::Srgb,
            R8G8B8A8SrgbLlvmpipe => Kind::SrgbLlvmpipe,
            R8G8B8A8UnormNvidia => Kind::UnormNvidia,
            R8G8B8A8SrgbNvidia => Kind::SrgbNvidia,
            R16Sfloat | R16G16Sfloat | R16G16B16A16Sfloat | R32Sfloat | R32G32Sfloat
            | R32G32B32A32Sfloat => Kind::Float,
            R8Uint
            | R8G8Uint
            | R8G8B8A8Uint
            | A2B10G10R10UintPack32
            | R16Uint
            | R16G16Uint
            | R16G16B16A16Uint
            | R32Uint
            | R32G32Uint
            | R32G32B32A32Uint => Kind::Uint,
            R8Sint | R8G8Sint | R8G8B8A8Sint | R16Sint | R16G16Sint | R16G16B16A16Sint
            | R32Sint | R32G32Sint | R32G32B32A32Sint => Kind::Sint,
        }
    }

    fn layout(self) -> Layout {
        use Format::*;
        let (channels, bytes) = match self {
            B8G8R8A8Unorm => return Layout::Bgra8,
            A2B10G10R10UnormPack32 | A2B10G10R10UintPack32 => return Layout::Rgb10A2,
            R8Unorm | R8Uint | R8Sint => (1, 1),
            R8G8Unorm | R8G8Uint | R8G8Sint => (2, 1),
            R8G8B8A8Unorm | R8G8B8A8Uint | R8G8B8A8Sint | R8G8B8A8Srgb | R8G8B8A8SrgbLlvmpipe
            | R8G8B8A8UnormNvidia | R8G8B8A8SrgbNvidia => (4, 1),
            R16Uint | R16Sint | R16Sfloat => (1, 2),
            R16G16Uint | R16G16Sint | R16G16Sfloat => (2, 2),
            R16G16B16A16Uint | R16G16B16A16Sint | R16G16B16A16Sfloat => (4, 2),
            R32Uint | R32Sint | R32Sfloat => (1, 4),
            R32G32Uint | R32G32Sint | R32G32Sfloat => (2, 4),
            R32G32B32A32Uint | R32G32B32A32Sint | R32G32B32A32Sfloat => (4, 4),
        };
        Layout::Array { channels, bytes }
    }

    /// Bytes of one texel.
    pub fn bytes_per_texel(self) -> usize {
        match self.layout() {
            Layout::Array { channels, bytes } => channels * bytes,
            Layout::Bgra8 | Layout::Rgb10A2 => 4,
        }
    }

    /// Number of stored channels (1, 2 or 4).
    pub fn channels(self) -> usize {
        match self.layout() {
            Layout::Array { channels, .. } => channels,
            Layout::Bgra8 | Layout::Rgb10A2 => 4,
        }
    }

    /// True for UINT and SINT formats (shaders see integers, no filtering).
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::Uint | Kind::Sint)
    }

    /// True for SINT formats.
    pub fn is_signed_integer(self) -> bool {
        self.kind() == Kind::Sint
    }

    /// True for sRGB-encoded formats (RGB decoded to linear on read, encoded on write).
    pub fn is_srgb(self) -> bool {
        matches!(
            self.kind(),
            Kind::Srgb | Kind::SrgbLlvmpipe | Kind::SrgbNvidia
        )
    }

    /// True for formats whose channels are 8-bit UNORM values (sRGB excluded): the formats
    /// llvmpipe filters in 8-bit fixed point and NVIDIA in 16-bit.
    pub fn is_unorm8(self) -> bool {
        use Format::*;
        matches!(
            self,
            R8Unorm | R8G8Unorm | R8G8B8A8Unorm | R8G8B8A8UnormNvidia | B8G8R8A8Unorm
        )
    }

    /// This format as written and read by a driver: NVIDIA's conversions for `R8G8B8A8_UNORM`
    /// and `R8G8B8A8_SRGB` with `nvidia`, the format itself otherwise.
    pub fn with_nvidia_conversions(self, nvidia: bool) -> Format {
        match (self, nvidia) {
            (Format::R8G8B8A8Unorm, true) => Format::R8G8B8A8UnormNvidia,
            (Format::R8G8B8A8Srgb | Format::R8G8B8A8SrgbLlvmpipe, true) => {
                Format::R8G8B8A8SrgbNvidia
            }
            (f, _) => f,
        }
    }

    /// Encodes shader output bits into one texel. Float/normalized formats take f32 bits, UINT
    /// formats u32 and SINT formats i32 bits, converted as Mesa 22.3's `util_format` pack does:
    /// UNORM8 via `float_to_ubyte` (round to nearest even of x·255, NaN and negatives → 0),
    /// 10/2-bit UNORM via clamp then `util_iround`, sRGB via Mesa's table-based
    /// `util_format_linear_float_to_srgb_8unorm` (alpha stays linear), half floats via
    /// `_mesa_float_to_float16_rtz` (round toward zero: overflow gives the largest finite
    /// value, infinities and NaN are kept), integers clamped to the representable range.
    /// Channels the format lacks are ignored.
    ///
    /// # Panics
    /// If `out` is shorter than [`Format::bytes_per_texel`] (a caller bug, not bad data).
    pub fn encode(self, bits: [u32; 4], out: &mut [u8]) {
        let kind = self.kind();
        match self.layout() {
            Layout::Bgra8 => {
                out[0] = float_to_ubyte(f32::from_bits(bits[2]));
                out[1] = float_to_ubyte(f32::from_bits(bits[1]));
                out[2] = float_to_ubyte(f32::from_bits(bits[0]));
                out[3] = float_to_ubyte(f32::from_bits(bits[3]));
            }
            Layout::Rgb10A2 => {
                let c: [u32; 4] = if kind == Kind::Uint {
                    [
                        bits[0].min(1023),
                        bits[1].min(1023),
                        bits[2].min(1023),
                        bits[3].min(3),
                    ]
                } else {
                    [
                        float_to_unorm(f32::from_bits(bits[0]), 1023.0),
                        float_to_unorm(f32::from_bits(bits[1]), 1023.0),
                        float_to_unorm(f32::from_bits(bits[2]), 1023.0),
                        float_to_unorm(f32::from_bits(bits[3]), 3.0),
                    ]
                };
                let word = c[0] | (c[1] << 10) | (c[2] << 20) | (c[3] << 30);
                out[..4].copy_from_slice(&word.to_le_bytes());
            }
            Layout::Array { channels, bytes } => {
                for (c, &b) in bits.iter().enumerate().take(channels) {
                    let dst = &mut out[c * bytes..(c + 1) * bytes];
                    match (kind, bytes) {
                        (Kind::Unorm, _) => dst[0] = float_to_ubyte(f32::from_bits(b)),
                        (Kind::UnormNvidia, _) => dst[0] = nvidia_float_to_ubyte(f32::from_bits(b)),
                        (Kind::SrgbNvidia, _) => {
                            let f = f32::from_bits(b);
                            dst[0] = if c == 3 {
                                nvidia_float_to_ubyte(f)
                            } else {
                                nvidia_linear_to_srgb8(f)
                            };
                        }
                        (Kind::Srgb, _) => {
                            let f = f32::from_bits(b);
                            dst[0] = if c == 3 {
                                float_to_ubyte(f)
                            } else {
                                linear_float_to_srgb8(f)
                            };
                        }
                        (Kind::SrgbLlvmpipe, _) => {
                            let f = f32::from_bits(b);
                            dst[0] = if c == 3 {
                                float_to_ubyte(f)
                            } else {
                                llvmpipe_linear_to_srgb8(f)
                            };
                        }
                        (Kind::Float, 2) => {
                            dst.copy_from_slice(&f32_to_f16_rtz(f32::from_bits(b)).to_le_bytes())
                        }
                        (Kind::Float, _) => dst.copy_from_slice(&b.to_le_bytes()),
                        (Kind::Uint, 1) => dst[0] = b.min(0xff) as u8,
                        (Kind::Uint, 2) => {
                            dst.copy_from_slice(&(b.min(0xffff) as u16).to_le_bytes())
                        }
                        (Kind::Uint, _) => dst.copy_from_slice(&b.to_le_bytes()),
                        (Kind::Sint, 1) => dst[0] = (b as i32).clamp(-128, 127) as i8 as u8,
                        (Kind::Sint, 2) => dst.copy_from_slice(
                            &((b as i32).clamp(-32768, 32767) as i16).to_le_bytes(),
                        ),
                        (Kind::Sint, _) => dst.copy_from_slice(&b.to_le_bytes()),
                    }
                }
            }
        }
    }

    /// Decodes one texel into shader-visible bits: f32 bits for UNORM (`ubyte_to_float`:
    /// `x * (1.0f/255)`, as Mesa), sRGB (Mesa's decode table; alpha linear) and SFLOAT formats,
    /// integers for UINT/SINT. Missing channels read as G = B = 0, A = 1 (1.0 or integer 1).
    ///
    /// # Panics
    /// If `texel` is shorter than [`Format::bytes_per_texel`] (a caller bug, not bad data).
    pub fn decode(self, texel: &[u8]) -> [u32; 4] {
        let kind = self.kind();
        match self.layout() {
            Layout::Bgra8 => [
                ubyte_to_float_bits(texel[2]),
                ubyte_to_float_bits(texel[1]),
                ubyte_to_float_bits(texel[0]),
                ubyte_to_float_bits(texel[3]),
            ],
            Layout::Rgb10A2 => {
                let w = u32::from_le_bytes([texel[0], texel[1], texel[2], texel[3]]);
                let c = [w & 0x3ff, (w >> 10) & 0x3ff, (w >> 20) & 0x3ff, w >> 30];
                if kind == Kind::Uint {
                    c
                } else {
                    [
                        (c[0] as f32 * (1.0 / 1023.0)).to_bits(),
                        (c[1] as f32 * (1.0 / 1023.0)).to_bits(),
                        (c[2] as f32 * (1.0 / 1023.0)).to_bits(),
                        (c[3] as f32 * (1.0 / 3.0)).to_bits(),
                    ]
                }
            }
            Layout::Array { channels, bytes } => {
                let one = if self.is_integer() {
                    1
                } else {
                    1.0f32.to_bits()
                };
                let mut out = [0, 0, 0, one];
                for (c, o) in out.iter_mut().enumerate().take(channels) {
                    let src = &texel[c * bytes..(c + 1) * bytes];
                    *o = match (kind, bytes) {
                        (Kind::Unorm | Kind::UnormNvidia, _) => ubyte_to_float_bits(src[0]),
                        (Kind::Srgb | Kind::SrgbLlvmpipe | Kind::SrgbNvidia, _) if c == 3 => {
                            ubyte_to_float_bits(src[0])
                        }
                        (Kind::SrgbNvidia, _) => nvidia_srgb8_to_linear(src[0]).to_bits(),
                        (Kind::SrgbLlvmpipe, _) => llvmpipe_srgb8_to_linear(src[0]).to_bits(),
                        (Kind::Srgb, _) => SRGB8_TO_LINEAR_BITS[src[0] as usize],
                        (Kind::Float, 2) => {
                            f16_to_f32(u16::from_le_bytes([src[0], src[1]])).to_bits()
                        }
                        (Kind::Uint, 1) => src[0] as u32,
                        (Kind::Uint, 2) => u16::from_le_bytes([src[0], src[1]]) as u32,
                        (Kind::Sint, 1) => src[0] as i8 as i32 as u32,
                        (Kind::Sint, 2) => i16::from_le_bytes([src[0], src[1]]) as i32 as u32,
                        (_, _) => u32::from_le_bytes([src[0], src[1], src[2], src[3]]),
                    };
                }
                out
            }
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Mesa's `float_to_ubyte`: NaN and values ≤ 0 give 0, ≥ 1 gives 255, otherwise the magic-number
/// trick that rounds x·255 to nearest even through f32 additions.
#[inline]
pub fn float_to_ubyte(f: f32) -> u8 {
    // NaN takes the zero branch, as in Mesa's `!(f > 0.0f)`.
    if f.is_nan() || f <= 0.0 {
        0
    } else if f >= 1.0 {
        255
    } else {
        // 32768 has an ulp of 2^-8, so the sum's low mantissa bits are round(f * 255).
        (f * (255.0 / 256.0) + 32768.0).to_bits() as u8
    }
}

/// Mesa's `ubyte_to_float`: `x * (1.0f / 255.0f)` (not `x / 255`; they differ in the last bit).
#[inline]
pub fn ubyte_to_float(x: u8) -> f32 {
    x as f32 * (1.0 / 255.0)
}

#[inline]
fn ubyte_to_float_bits(x: u8) -> u32 {
    ubyte_to_float(x).to_bits()
}

/// Normalized encode for widths other than 8 bits (`CLAMP` then `util_iround(x * max)`), NaN → 0.
#[inline]
fn float_to_unorm(f: f32, max: f32) -> u32 {
    // CLAMP(x, 0, 1) in Mesa is `x > 0 ? (x > 1 ? 1 : x) : 0`, which sends NaN to 0.
    let c = if f > 0.0 {
        if f > 1.0 {
            1.0
        } else {
            f
        }
    } else {
        0.0
    };
    (c * max).round_ties_even() as u32
}

/// Mesa's `util_format_linear_float_to_srgb_8unorm`: a table-driven piecewise-linear fit of the
/// sRGB encode curve (it can differ by one from the exact curve rounded).
#[inline]
pub fn linear_float_to_srgb8(x: f32) -> u8 {
    let almost_one = f32::from_bits(0x3f7f_ffff);
    let min_val = f32::from_bits((127 - 13) << 23);
    // Written so NaN maps to the minimum, as Mesa's does.
    let mut x = x;
    if x.is_nan() || x <= min_val {
        x = min_val;
    }
    if x > almost_one {
        x = almost_one;
    }
    let bits = x.to_bits();
    let tab = LINEAR_TO_SRGB8_HELPER[((bits - min_val.to_bits()) >> 20) as usize];
    let bias = (tab >> 16) << 9;
    let scale = tab & 0xffff;
    let t = (bits >> 12) & 0xff;
    ((bias + scale * t) >> 16) as u8
}

/// llvmpipe's sRGB decode (Mesa `lp_build_srgb_to_linear`): a cubic in the 8-bit value
/// (`((0.3012·x/255³ + 0.6935/255²)·x + 0.0030/255)·x + 0.0023`) above 15, `x / (12.6·255)` up to
/// 15 — within 0.35 of a step of the exact curve, so filtered sRGB reads differ slightly from
/// other drivers'. Evaluated as its vector code does (float, odd/even split of the polynomial).
pub fn llvmpipe_srgb8_to_linear(x: u8) -> f32 {
    let x = x as f32;
    if x <= 15.0 {
        return x * (1.0 / (12.6 * 255.0));
    }
    let c = [
        0.0023f32,
        0.0030f32 / 255.0,
        0.6935f32 / (255.0 * 255.0),
        0.3012f32 / (255.0 * 255.0 * 255.0),
    ];
    // lp_build_polynomial: even = c0 + x²·c2, odd = c1 + x²·c3, result = odd·x + even. (LLVM
    // fuses these on CPUs with FMA; unfused steps change one pixel in 10,000 of the tests.)
    let x2 = x * x;
    let even = x2 * c[2] + c[0];
    let odd = x2 * c[3] + c[1];
    odd * x + even
}

/// llvmpipe's sRGB encode (Mesa `lp_build_linear_to_srgb`): clamp to [0, 1], then
/// `a·x^0.375 + b·x^0.5 + c` (its rational fit, error ±0.17 of a step) or `12.92·x` below
/// 0.0031308, scaled by 255 and rounded to nearest even. llvmpipe takes the roots with the
/// approximate `rsqrtps`, whose low bits vary by CPU; exact roots are used here.
pub fn llvmpipe_linear_to_srgb8(x: f32) -> u8 {
    let src = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    let x05 = src.sqrt();
    let x0375 = (x05 * src).sqrt().sqrt();
    let a = (0.675f32 as f64 * 1.0622 * 255.0) as f32;
    let b = (0.325f32 as f64 * 1.0622 * 255.0) as f32;
    let c = -0.0620f32 * 255.0;
    let curve = a * x0375 + (b * x05 + c);
    let linear = src * (12.92f32 * 255.0);
    let v = if src <= 0.0031308 { linear } else { curve };
    v.round_ties_even().clamp(0.0, 255.0) as u8
}

/// NVIDIA's float → UNORM8 conversion of render-target writes, measured on an H200 (driver
/// 580.159; `tools/driver_probes.py`, probe `dense_unorm8`, every value `p·2^-20`, through GL
/// and Vulkan alike): the value is truncated to 12 fractional bits, then scaled to 8 bits with
/// rounding, `(floor(x·4096)·255 + 2047) >> 12`. It rounds down where Mesa's round-to-nearest
/// rounds up for 3.1% of values (those within about 1/16 of a step above a half). NaN and
/// values ≤ 0 give 0, values ≥ 1 give 255.
#[inline]
pub fn nvidia_float_to_ubyte(f: f32) -> u8 {
    if f.is_nan() || f <= 0.0 {
        0
    } else if f >= 1.0 {
        255
    } else {
        // f < 1, so f·4096 < 4096 and the product is exact (a power-of-two scale).
        let q = (f * 4096.0) as u32;
        ((q * 255 + 2047) >> 12) as u8
    }
}

/// NVIDIA's sRGB encode (the measured thresholds of `tables.rs`): `q = floor(x·2^14)` picks the
/// code from the measured thresholds. NaN and values ≤ 0 give 0, values ≥ 1 give 255.
#[inline]
pub fn nvidia_linear_to_srgb8(x: f32) -> u8 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    if x >= 1.0 {
        return 255;
    }
    let q = (x * 16384.0) as u16;
    NVIDIA_LINEAR_TO_SRGB8_STARTS.partition_point(|&start| start <= q) as u8
}

/// NVIDIA's sRGB decode (the measured table of `tables.rs`).
#[inline]
pub fn nvidia_srgb8_to_linear(x: u8) -> f32 {
    f32::from_bits(NVIDIA_SRGB8_TO_LINEAR_BITS[x as usize])
}

/// Mesa's sRGB decode (`util_format_srgb_8unorm_to_linear_float`).
#[inline]
pub fn srgb8_to_linear_float(x: u8) -> f32 {
    f32::from_bits(SRGB8_TO_LINEAR_BITS[x as usize])
}

/// [`f32_to_f16_rtz`] of four lanes of float bits without branches, so it
/// compiles to SIMD (checked equal over all 2^32 inputs). Written as one small loop per step:
/// as one loop body LLVM's SLP vectoriser gave up and emitted scalar code. Not inlined: inside
/// the batch loop LLVM split it into two-lane halves (twice the instructions of the call).
#[inline(never)]
pub(crate) fn f16x4(v: [u32; 4]) -> [u32; 4] {
    // Signed compares of the magnitude: SSE2 has no unsigned ones.
    let abs: [i32; 4] = std::array::from_fn(|l| (v[l] & 0x7fff_ffff) as i32);
    // Below 2^-14 the half is denormal: |f| * 2^24 truncated (the scale is exact). Adding 2^23
    // rounds to nearest; one less when that rounded up is the truncation.
    let scaled: [f32; 4] = std::array::from_fn(|l| {
        let small = if abs[l] < 0x3880_0000 {
            abs[l]
        } else {
            0x3880_0000
        };
        f32::from_bits(small as u32) * 16_777_216.0
    });
    let rounded: [f32; 4] = std::array::from_fn(|l| scaled[l] + 8_388_608.0);
    let down: [i32; 4] = std::array::from_fn(|l| {
        if rounded[l] - 8_388_608.0 > scaled[l] {
            1
        } else {
            0
        }
    });
    std::array::from_fn(|l| {
        let a = abs[l];
        // Normal halves: the exponent rebiased by 127 - 15, the mantissa truncated.
        let mut h = (a >> 13) - (112 << 10);
        h = if a < 0x3880_0000 {
            rounded[l].to_bits() as i32 - 0x4b00_0000 - down[l]
        } else {
            h
        };
        // 65536 and up: the largest finite half (rounding toward zero).
        h = if a >= 0x4780_0000 { 0x7bff } else { h };
        h = if a == 0x7f80_0000 { 0x7c00 } else { h };
        h = if a > 0x7f80_0000 { 0x7e00 } else { h };
        ((v[l] >> 16) & 0x8000) | h as u32
    })
}

/// `_mesa_float_to_float16_rtz`: f32 → f16 rounding toward zero (what Mesa 22.3's format packing
/// uses — checked on softpipe: 1.0009 → 0x3c00, 65520 → 0x7bff), denormals kept, finite
/// overflow → largest finite half, ±inf kept, NaN → sign | 0x7e00.
pub fn f32_to_f16_rtz(f: f32) -> u16 {
    let bits = f.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let mant = bits & 0x7f_ffff;
    if exp == 0xff {
        return if mant != 0 {
            sign | 0x7e00
        } else {
            sign | 0x7c00
        };
    }
    // Unbiased exponent re-biased for half precision.
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7bff;
    }
    if e <= 0 {
        // Denormal (or zero) half: shift the full significand, truncating.
        if e < -10 || exp == 0 {
            return sign;
        }
        let m = mant | 0x80_0000;
        let shift = (14 - e) as u32;
        return sign | (m >> shift) as u16;
    }
    sign | ((e as u16) << 10) | (mant >> 13) as u16
}

/// f16 → f32, exact (`_mesa_half_to_float`); NaN payloads are kept.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let mant = (h & 0x3ff) as u32;
    let bits = if exp == 0x1f {
        sign | 0x7f80_0000 | (mant << 13)
    } else if exp == 0 {
        if mant == 0 {
            sign
        } else {
            // Denormal half: exact as an f32 product.
            let v = mant as f32 * f32::from_bits(0x3380_0000); // 2^-24
            sign | v.to_bits()
        }
    } else {
        sign | ((exp + 127 - 15) << 23) | (mant << 13)
    };
    f32::from_bits(bits)
}
