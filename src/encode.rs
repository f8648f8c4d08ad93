//! Rendered frames as PNG bytes: RGBA8 for standard dynamic range, and for the HDR color spaces
//! a 16-bit RGBA PNG that says what its numbers mean in a `cICP` chunk (PNG 3rd edition; read
//! by browsers and image tools that know HDR PNG).
//!
//! - SDR: the viewport's RGBA8 bytes as they are.
//! - HDR10: the viewport holds PQ-encoded BT.2020 in 10 bits; each channel is widened to 16 bits
//!   (`v * 65535 / 1023`, rounded) and tagged BT.2020 primaries, PQ transfer, full range
//!   (`cICP` 9, 16, 0, 1).
//! - scRGB: the viewport holds linear BT.709 with 1.0 = 80 nits in half floats; each pixel is
//!   converted to BT.2020 primaries, to nits, PQ-encoded and written as 16 bits with the same
//!   `cICP` tag (negative values after the gamut conversion clip to 0, above 10,000 nits to 1).
//! - PQ in scRGB: the viewport holds PQ values already; they are clamped to 0..=1 and written as
//!   16 bits with the same tag.
//!
//! Alpha is written as it is (widened to 16 bits for HDR).

use crate::chain::ColorSpace;
use crate::texture::Texture;

/// ITU-T H.273 code points of BT.2020 primaries, the PQ (SMPTE ST 2084) transfer, RGB and
/// full range.
const CICP_BT2020_PQ: [u8; 4] = [9, 16, 0, 1];

/// BT.709 to BT.2020 primaries (ITU-R BT.2087, linear light).
const BT709_TO_BT2020: [[f32; 3]; 3] = [
    [0.627_404, 0.329_283, 0.043_313],
    [0.069_097, 0.919_540, 0.011_362],
    [0.016_391, 0.088_013, 0.895_595],
];

/// The SMPTE ST 2084 (PQ) encoding of `nits`.
fn pq_encode(nits: f32) -> f32 {
    const M1: f64 = 2610.0 / 16384.0;
    const M2: f64 = 2523.0 / 4096.0 * 128.0;
    const C1: f64 = 3424.0 / 4096.0;
    const C2: f64 = 2413.0 / 4096.0 * 32.0;
    const C3: f64 = 2392.0 / 4096.0 * 32.0;
    let l = (nits as f64 / 10_000.0).clamp(0.0, 1.0);
    let p = l.powf(M1);
    ((C1 + C2 * p) / (1.0 + C3 * p)).powf(M2) as f32
}

fn to_u16(v: f32) -> u16 {
    (v.clamp(0.0, 1.0) * 65535.0).round() as u16
}

/// How hard the PNG encoder compresses: the pixels are the same at every level, only the
/// file's size and the time to write it differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PngCompression {
    /// The `fdeflate` encoder: several times faster than `Balanced`, files up to half larger.
    /// For a short CI job the encoding is otherwise a large share of the run.
    #[default]
    Fast,
    /// zlib level 6 equivalent (the `png` crate's default).
    Balanced,
    /// The smallest files, for images that are committed (golden references).
    High,
}

impl PngCompression {
    fn level(self) -> png::Compression {
        match self {
            PngCompression::Fast => png::Compression::Fast,
            PngCompression::Balanced => png::Compression::Balanced,
            PngCompression::High => png::Compression::High,
        }
    }
}

/// The PNG bytes of a rendered frame in `color_space` (see the module documentation),
/// compressed at `compression`.
pub fn png_bytes(
    frame: &Texture,
    color_space: ColorSpace,
    compression: PngCompression,
) -> Result<Vec<u8>, String> {
    let (width, height) = (frame.width(), frame.height());
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_compression(compression.level());
    let data = match color_space {
        ColorSpace::Sdr => {
            encoder.set_depth(png::BitDepth::Eight);
            frame.to_rgba8()
        }
        _ => {
            encoder.set_depth(png::BitDepth::Sixteen);
            hdr_samples(frame, color_space)
        }
    };
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    if color_space != ColorSpace::Sdr {
        writer
            .write_chunk(png::chunk::cICP, &CICP_BT2020_PQ)
            .map_err(|e| e.to_string())?;
    }
    writer.write_image_data(&data).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Big-endian 16-bit RGBA samples of an HDR frame.
fn hdr_samples(frame: &Texture, color_space: ColorSpace) -> Vec<u8> {
    let format = frame.format();
    let bpt = format.bytes_per_texel();
    let mut out = Vec::with_capacity(frame.width() as usize * frame.height() as usize * 8);
    for texel in frame.level_data(0).chunks_exact(bpt) {
        let [r, g, b, a] = format.decode(texel).map(f32::from_bits);
        let rgb = match color_space {
            ColorSpace::ScRgb => {
                let linear = [r, g, b];
                BT709_TO_BT2020.map(|row| {
                    let v: f32 = row.iter().zip(linear).map(|(m, c)| m * c).sum();
                    pq_encode(v * 80.0)
                })
            }
            _ => [r, g, b],
        };
        for v in [rgb[0], rgb[1], rgb[2], a] {
            out.extend_from_slice(&to_u16(v).to_be_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texture::Format;

    #[test]
    fn pq_curve_hits_its_reference_points() {
        // PQ's black is c1^m2, about 7.3e-7: below half a 16-bit step.
        assert!(pq_encode(0.0) < 1e-6);
        assert!((pq_encode(10_000.0) - 1.0).abs() < 1e-6);
        // 100 nits is PQ code value 0.508 (ITU-R BT.2100 tables).
        assert!((pq_encode(100.0) - 0.508).abs() < 1e-3);
    }

    #[test]
    fn hdr10_frames_become_16_bit_png_with_cicp() {
        let mut frame = Texture::new(Format::A2B10G10R10UnormPack32, 2, 1, 1).unwrap();
        frame.write_texel(0, 0, 0, [1.0f32, 0.5, 0.0, 1.0].map(f32::to_bits));
        let bytes = png_bytes(&frame, ColorSpace::Hdr10, PngCompression::Fast).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
        let mut reader = decoder.read_info().unwrap();
        let info = reader.info();
        assert_eq!(info.bit_depth, png::BitDepth::Sixteen);
        let cicp = info.coding_independent_code_points.unwrap();
        assert_eq!(
            (cicp.color_primaries, cicp.transfer_function),
            (9, 16),
            "BT.2020 primaries, PQ transfer"
        );
        let mut data = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut data).unwrap();
        let first: Vec<u16> = data[..8]
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        // 10-bit 1023, 512 (0.5 rounds to 512/1023), 0 and 2-bit alpha 3, widened.
        assert_eq!(first, vec![65535, 32800, 0, 65535]);
    }

    #[test]
    fn sdr_frames_stay_8_bit_without_cicp() {
        let frame = Texture::from_rgba8(1, 1, vec![1, 2, 3, 4]).unwrap();
        let bytes = png_bytes(&frame, ColorSpace::Sdr, PngCompression::High).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
        let reader = decoder.read_info().unwrap();
        assert_eq!(reader.info().bit_depth, png::BitDepth::Eight);
        assert!(reader.info().coding_independent_code_points.is_none());
    }

    #[test]
    fn every_compression_level_writes_the_same_pixels() {
        let (width, height) = (97u32, 61u32);
        let pixels: Vec<u8> = (0..width * height * 4)
            .map(|i| {
                (i.wrapping_mul(2_654_435_761) >> 24) as u8 & if i % 7 == 0 { 0xff } else { 0xf0 }
            })
            .collect();
        let frame = Texture::from_rgba8(width, height, pixels.clone()).unwrap();
        let mut sizes = Vec::new();
        for level in [
            PngCompression::Fast,
            PngCompression::Balanced,
            PngCompression::High,
        ] {
            let bytes = png_bytes(&frame, ColorSpace::Sdr, level).unwrap();
            let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
            let mut reader = decoder.read_info().unwrap();
            let mut data = vec![0; reader.output_buffer_size().unwrap()];
            reader.next_frame(&mut data).unwrap();
            assert_eq!(data, pixels, "{level:?}");
            sizes.push(bytes.len());
        }
        assert!(sizes[2] <= sizes[1] && sizes[1] <= sizes[0], "{sizes:?}");
    }
}
