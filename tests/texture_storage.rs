//! Texture storage: sizes, texel access, mipmaps, image loading and saving.

use softgpu::texture::{Format, Texture, TextureError};

fn f(x: f32) -> u32 {
    x.to_bits()
}

/// The four f32 bit patterns of the decoded texel at byte `at` of `texels`.
fn texel_bits(texels: &[u8], at: usize) -> [u32; 4] {
    std::array::from_fn(|c| {
        let b = &texels[at + 4 * c..at + 4 * c + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    })
}

#[test]
fn sizes_are_checked_before_allocating() {
    assert!(matches!(
        Texture::new(Format::R8Unorm, 0, 4, 1),
        Err(TextureError::BadSize { .. })
    ));
    let err = Texture::new(Format::R32G32B32A32Sfloat, 100_000, 100_000, 1).unwrap_err();
    assert!(err.to_string().contains("100000x100000"), "{err}");
    let err = Texture::new(Format::R8Unorm, 8, 2, 5).unwrap_err();
    assert!(
        matches!(err, TextureError::BadLevels { max: 4, .. }),
        "{err}"
    );
    assert!(Texture::new(Format::R8Unorm, 8, 2, 0).is_err());
    assert!(Texture::new(Format::R8Unorm, 16384, 1, 15).is_ok());
    let err = Texture::from_rgba8(2, 2, vec![0; 15]).unwrap_err();
    assert!(err.to_string().contains("16 bytes"), "{err}");
}

#[test]
fn mip_chain_sizes() {
    assert_eq!(Texture::full_mip_levels(1, 1), 1);
    assert_eq!(Texture::full_mip_levels(256, 256), 9);
    assert_eq!(Texture::full_mip_levels(5, 3), 3);
    assert_eq!(Texture::full_mip_levels(1, 1000), 10);
    let t = Texture::new(Format::R16G16B16A16Sfloat, 5, 3, 3).unwrap();
    assert_eq!(t.level_count(), 3);
    assert_eq!(t.level_size(0), (5, 3));
    assert_eq!(t.level_size(1), (2, 1));
    assert_eq!(t.level_size(2), (1, 1));
    assert_eq!(t.level_data(0).len(), 5 * 3 * 8);
    assert_eq!(t.level_data(1).len(), 2 * 8);
    assert!(t.level_data(3).is_empty());
}

#[test]
fn texel_access() {
    let mut t = Texture::new(Format::R8G8B8A8Unorm, 3, 2, 1).unwrap();
    t.write_texel(0, 2, 1, [f(1.0), f(0.0), f(0.5), f(1.0)]);
    let off = (3 + 2) * 4;
    assert_eq!(&t.level_data(0)[off..off + 4], &[255, 0, 128, 255]);
    assert_eq!(t.read_texel(0, 2, 1)[0], f(1.0));
    // Out of range: reads give zero, writes are ignored.
    assert_eq!(t.read_texel(0, 3, 0), [0; 4]);
    assert_eq!(t.read_texel(1, 0, 0), [0; 4]);
    t.write_texel(0, 0, 2, [f(1.0); 4]);
    t.level_data_mut(0)[0] = 7;
    assert_eq!(t.level_data(0)[0], 7);
    assert_eq!(t.level_data(0).iter().filter(|&&b| b != 0).count(), 4);
}

#[test]
fn mipmaps_average_2x2_in_float() {
    // 4x2 RGBA8: level 1 is 2x1, each texel the average of a 2x2 block.
    let mut data = vec![0u8; 4 * 2 * 4];
    let texels: [[u8; 4]; 8] = [
        [0, 10, 255, 255],
        [255, 11, 0, 255],
        [1, 2, 3, 4],
        [5, 6, 7, 8],
        [0, 10, 255, 255],
        [255, 12, 0, 0],
        [9, 10, 11, 12],
        [13, 14, 15, 16],
    ];
    for (i, t) in texels.iter().enumerate() {
        data[i * 4..i * 4 + 4].copy_from_slice(t);
    }
    let base = Texture::from_rgba8(4, 2, data).unwrap();
    let mut t = Texture::new(Format::R8G8B8A8Unorm, 4, 2, 3).unwrap();
    t.level_data_mut(0).copy_from_slice(base.level_data(0));
    t.generate_mipmaps();
    // (0 + 255 + 0 + 255) / 4 = 127.5 → ties to even → 128; (10+11+10+12)/4 = 10.75 → 11;
    // (255+0+255+0)/4 = 127.5 → 128; (255+255+255+0)/4 = 191.25 → 191.
    assert_eq!(&t.level_data(1)[0..4], &[128, 11, 128, 191]);
    // (1+5+9+13)/4 = 7, (2+6+10+14)/4 = 8, 9, 10.
    assert_eq!(&t.level_data(1)[4..8], &[7, 8, 9, 10]);
    // Level 2 (1x1) averages level 1's two texels: 67.5 → 68, 9.5 → 10, 68.5 → 68, 100.5 → 100.
    assert_eq!(t.level_data(2), &[68, 10, 68, 100]);
}

#[test]
fn mipmaps_of_odd_sizes_stay_in_range() {
    let mut t = Texture::new(Format::R32Sfloat, 5, 3, 3).unwrap();
    for y in 0..3 {
        for x in 0..5 {
            t.write_texel(0, x, y, [f((x + 10 * y) as f32), 0, 0, 0]);
        }
    }
    t.generate_mipmaps();
    // Level 1 is 2x1; its texel centres map to source (0.75, 1.0) and (3.25, 1.0).
    assert_eq!(t.read_texel(1, 0, 0)[0], f(10.75));
    assert_eq!(t.read_texel(1, 1, 0)[0], f(13.25));
    assert_eq!(t.read_texel(2, 0, 0)[0], f(12.0));
}

#[test]
fn to_rgba8_converts_like_a_readback() {
    let mut t = Texture::new(Format::R16G16B16A16Sfloat, 1, 1, 1).unwrap();
    t.write_texel(0, 0, 0, [f(2.0), f(-1.0), f(0.5), f(1.0)]);
    assert_eq!(t.to_rgba8(), vec![255, 0, 128, 255]);
    let mut t = Texture::new(Format::R8Sint, 1, 1, 1).unwrap();
    t.write_texel(0, 0, 0, [(-3i32) as u32, 0, 0, 0]);
    assert_eq!(t.to_rgba8(), vec![0, 0, 0, 1]);
}

#[test]
fn load_various_png_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);

    image::RgbaImage::from_raw(2, 1, vec![1, 2, 3, 4, 5, 6, 7, 8])
        .unwrap()
        .save(p("rgba.png"))
        .unwrap();
    let t = Texture::load(&p("rgba.png")).unwrap();
    assert_eq!(
        (t.format(), t.width(), t.height()),
        (Format::R8G8B8A8Unorm, 2, 1)
    );
    assert_eq!(t.level_data(0), &[1, 2, 3, 4, 5, 6, 7, 8]);

    image::RgbImage::from_raw(1, 2, vec![10, 20, 30, 40, 50, 60])
        .unwrap()
        .save(p("rgb.png"))
        .unwrap();
    let t = Texture::load(&p("rgb.png")).unwrap();
    assert_eq!(t.level_data(0), &[10, 20, 30, 255, 40, 50, 60, 255]);

    image::GrayImage::from_raw(2, 1, vec![0, 200])
        .unwrap()
        .save(p("grey.png"))
        .unwrap();
    let t = Texture::load(&p("grey.png")).unwrap();
    assert_eq!(t.level_data(0), &[0, 0, 0, 255, 200, 200, 200, 255]);

    let img16: image::ImageBuffer<image::Rgba<u16>, Vec<u16>> =
        image::ImageBuffer::from_raw(1, 1, vec![65535, 0, 32896, 65535]).unwrap();
    img16.save(p("deep.png")).unwrap();
    let t = Texture::load(&p("deep.png")).unwrap();
    assert_eq!(t.level_data(0), &[255, 0, 128, 255]);

    // An indexed-colour PNG (the image crate cannot write those): red, then blue at alpha 64.
    std::fs::write(p("palette.png"), palette_png()).unwrap();
    let t = Texture::load(&p("palette.png")).unwrap();
    assert_eq!(t.level_data(0), &[0, 0, 255, 64, 255, 0, 0, 255]);

    let mut jpeg = Vec::new();
    image::RgbImage::from_pixel(8, 8, image::Rgb([200, 100, 50]))
        .write_to(
            &mut std::io::Cursor::new(&mut jpeg),
            image::ImageFormat::Jpeg,
        )
        .unwrap();
    std::fs::write(p("photo.jpg"), jpeg).unwrap();
    let t = Texture::load(&p("photo.jpg")).unwrap();
    assert_eq!((t.width(), t.height()), (8, 8));
    let px = &t.level_data(0)[0..4];
    assert!(
        px[0].abs_diff(200) <= 3 && px[1].abs_diff(100) <= 3 && px[3] == 255,
        "{px:?}"
    );
}

#[test]
fn load_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("corrupt.png");
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend_from_slice(&[0, 0, 0, 13, b'I', b'H', b'D', b'R', 1, 2, 3]);
    std::fs::write(&bad, bytes).unwrap();
    let err = Texture::load(&bad).unwrap_err();
    assert!(matches!(err, TextureError::Load { .. }));
    assert!(err.to_string().contains("corrupt.png"), "{err}");
    let missing = dir.path().join("missing.png");
    let err = Texture::load(&missing).unwrap_err();
    assert!(err.to_string().contains("missing.png"), "{err}");
}

#[test]
fn save_png_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.png");
    let t = Texture::from_rgba8(2, 2, (0..16).map(|v| v * 16).collect()).unwrap();
    t.save_png(&path).unwrap();
    assert_eq!(Texture::load(&path).unwrap(), t);
    let err = t
        .save_png(&dir.path().join("no/such/dir/x.png"))
        .unwrap_err();
    assert!(err.to_string().contains("x.png"), "{err}");
}

/// A 2x1 8-bit indexed PNG with a 2-entry palette (red, blue) and tRNS (255, 64); pixels 1, 0.
fn palette_png() -> Vec<u8> {
    fn crc32(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in data {
            crc ^= b as u32;
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    }
    // One scanline: filter byte 0, then indices 1, 0; stored in a zlib "stored" block.
    let raw = [0u8, 1, 0];
    let (mut a, mut b) = (1u32, 0u32);
    for &x in &raw {
        a = (a + x as u32) % 65521;
        b = (b + a) % 65521;
    }
    let mut z = vec![0x78, 0x01, 0x01, 3, 0, !3u8, 0xff];
    z.extend_from_slice(&raw);
    z.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut png, b"IHDR", &[0, 0, 0, 2, 0, 0, 0, 1, 8, 3, 0, 0, 0]);
    chunk(&mut png, b"PLTE", &[255, 0, 0, 0, 0, 255]);
    chunk(&mut png, b"tRNS", &[255, 64]);
    chunk(&mut png, b"IDAT", &z);
    chunk(&mut png, b"IEND", &[]);
    png
}

#[test]
fn decoded_levels_of_large_textures_match_texel_reads() {
    // 512x300 texels: levels this large decode in parallel chunks, whose order must not matter.
    let (w, h) = (512u32, 300u32);
    let mut t = Texture::new(
        Format::R16G16B16A16Sfloat,
        w,
        h,
        Texture::full_mip_levels(w, h),
    )
    .unwrap();
    let mut state = 0x9e37_79b9u32;
    for byte in t.level_data_mut(0).chunks_exact_mut(2) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        // Finite halves only (exponent field below 31): no NaN or infinity among them.
        let half = (state as u16) & 0xfbff;
        byte.copy_from_slice(&half.to_le_bytes());
    }
    t.generate_mipmaps();
    let decoded = t.decoded_levels();
    let (texels, levels) = decoded.expect("finite texels decode");
    // After the levels, one all-zero texel (what inline sampling reads outside a border).
    let end = levels
        .last()
        .map_or(0, |l| (l.offset + l.width * l.height) as usize);
    assert_eq!(texels.len(), (end + 1) * 16);
    assert!(texels[end * 16..].iter().all(|&b| b == 0));
    for (level, l) in levels.iter().enumerate() {
        assert_eq!((l.width, l.height), t.level_size(level as u32));
        for y in 0..l.height {
            for x in 0..l.width {
                let at = (l.offset as usize + (y * l.width + x) as usize) * 16;
                let got = texel_bits(texels, at);
                assert_eq!(
                    got,
                    t.read_texel(level as u32, x, y),
                    "level {level} ({x}, {y})"
                );
            }
        }
    }

    // One NaN texel anywhere (here in the last parallel chunk of level 0) refuses the view.
    let mut bad = Texture::new(Format::R32G32B32A32Sfloat, w, h, 1).unwrap();
    let last = (w * h - 1) as usize * 16;
    bad.level_data_mut(0)[last..last + 4].copy_from_slice(&f(f32::NAN).to_le_bytes());
    assert!(bad.decoded_levels().is_none());
    let fine = Texture::new(Format::R32G32B32A32Sfloat, w, h, 1).unwrap();
    assert!(fine.decoded_levels().is_some());
}

#[test]
fn padded_level0_holds_what_each_wrap_mode_reads_around_the_texture() {
    use softgpu::ir::InlineWrap;
    for (w, h) in [(1u32, 1u32), (4, 2), (5, 3), (16, 8), (3, 64)] {
        let mut t = Texture::new(Format::R8G8B8A8Unorm, w, h, 1).unwrap();
        for (i, b) in t.level_data_mut(0).iter_mut().enumerate() {
            *b = (i * 37 % 251) as u8;
        }
        for wrap in [
            InlineWrap::RepeatPot,
            InlineWrap::ClampToEdge,
            InlineWrap::ClampToBorder,
        ] {
            let padded = t.padded_level0(wrap);
            let pot = w.is_power_of_two() && h.is_power_of_two();
            if wrap == InlineWrap::RepeatPot && !pot {
                assert!(padded.is_none(), "{w}x{h}: REPEAT needs powers of two");
                continue;
            }
            let padded = padded.expect("a padded level");
            let apron = 2i64;
            let (pw, ph) = (i64::from(w) + 2 * apron, i64::from(h) + 2 * apron);
            assert_eq!(padded.len() as i64, pw * ph * 16);
            let wrapped = |i: i64, n: i64| match wrap {
                InlineWrap::RepeatPot => Some(i.rem_euclid(n)),
                InlineWrap::ClampToEdge => Some(i.clamp(0, n - 1)),
                InlineWrap::ClampToBorder => (0..n).contains(&i).then_some(i),
            };
            for y in -apron..i64::from(h) + apron {
                for x in -apron..i64::from(w) + apron {
                    let at = (((y + apron) * pw + x + apron) * 16) as usize;
                    let got = texel_bits(padded, at);
                    let expected = match (wrapped(x, i64::from(w)), wrapped(y, i64::from(h))) {
                        (Some(sx), Some(sy)) => t.read_texel(0, sx as u32, sy as u32),
                        _ => [0; 4],
                    };
                    assert_eq!(got, expected, "{w}x{h} {wrap:?} at ({x}, {y})");
                }
            }
        }
    }
}

/// Every stored channel value of the render-target formats filter chains write (8-bit unorm,
/// 8-bit sRGB, every non-NaN half) decodes to the bits `read_texel` gives, in every channel
/// position; 256x256 texels, so the parallel chunks run too.
#[test]
fn decoded_levels_of_every_channel_value_match_texel_reads() {
    let halves: Vec<u16> = (0..=u16::MAX)
        .filter(|h| !(h & 0x7c00 == 0x7c00 && h & 0x03ff != 0))
        .collect();
    let bytes: Vec<u16> = (0..256).collect();
    for (format, values, width) in [
        (Format::R8G8B8A8Unorm, &bytes, 1),
        (Format::R8G8B8A8Srgb, &bytes, 1),
        (Format::R16G16B16A16Sfloat, &halves, 2),
    ] {
        let (w, h) = (256u32, 256u32);
        let mut t = Texture::new(format, w, h, 1).unwrap();
        let n = values.len();
        // Channel c of texel i holds value (i + 977 c) mod n: each channel sees every value.
        for (i, texel) in t.level_data_mut(0).chunks_exact_mut(4 * width).enumerate() {
            for c in 0..4 {
                let v = values[(i + 977 * c) % n];
                texel[c * width..(c + 1) * width].copy_from_slice(&v.to_le_bytes()[..width]);
            }
        }
        let (texels, _) = t.decoded_levels().expect("no NaN among the values");
        for y in 0..h {
            for x in 0..w {
                let at = ((y * w + x) * 16) as usize;
                let got = texel_bits(texels, at);
                assert_eq!(got, t.read_texel(0, x, y), "{format:?} ({x}, {y})");
            }
        }
    }
    // One NaN half in any channel keeps the texture from being decoded (the inline sampler
    // would pick another NaN than the sampler's arithmetic).
    for channel in 0..4 {
        let mut t = Texture::new(Format::R16G16B16A16Sfloat, 300, 300, 1).unwrap();
        let at = (299 * 300 + 7) * 8 + channel * 2;
        t.level_data_mut(0)[at..at + 2].copy_from_slice(&0x7e01u16.to_le_bytes());
        assert!(t.decoded_levels().is_none(), "NaN in channel {channel}");
    }
}

/// Mesa's mipmap blit texel by texel, through `read_texel`/`write_texel`: the specification
/// `generate_mipmaps` computes row by row (decoded rows, per-format encoders).
fn per_texel_mipmaps(t: &mut Texture) {
    for level in 1..t.level_count() {
        let (sw, sh) = t.level_size(level - 1);
        let (dw, dh) = t.level_size(level);
        let (ix, iy) = (1.0 / dw as f32, 1.0 / dh as f32);
        let lerp = |a: f32, v0: f32, v1: f32| v0 + a * (v1 - v0);
        for y in 0..dh {
            let ty = (iy * 0.5 + iy * y as f32) * sh as f32 - 0.5;
            for x in 0..dw {
                let tx = (ix * 0.5 + ix * x as f32) * sw as f32 - 0.5;
                let bits = if t.format().is_integer() {
                    t.read_texel(level - 1, tx.round() as u32, ty.round() as u32)
                } else {
                    let (fx, fy) = (tx.floor(), ty.floor());
                    let clamp = |v: f32, n: u32| (v.max(0.0) as u32).min(n - 1);
                    let (x0, x1) = (clamp(fx, sw), clamp(fx + 1.0, sw));
                    let (y0, y1) = (clamp(fy, sh), clamp(fy + 1.0, sh));
                    let texels = [(x0, y0), (x1, y0), (x0, y1), (x1, y1)]
                        .map(|(x, y)| t.read_texel(level - 1, x, y));
                    std::array::from_fn(|c| {
                        let v = texels.map(|texel| f32::from_bits(texel[c]));
                        let (a, b) = (tx - fx, ty - fy);
                        lerp(b, lerp(a, v[0], v[1]), lerp(a, v[2], v[3])).to_bits()
                    })
                };
                t.write_texel(level, x, y, bits);
            }
        }
    }
}

#[test]
fn mipmaps_match_the_per_texel_blit_in_every_format() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut formats = Format::ALL.to_vec();
    formats.push(Format::R8G8B8A8SrgbLlvmpipe);
    formats.push(Format::R8G8B8A8UnormNvidia);
    formats.push(Format::R8G8B8A8SrgbNvidia);
    for format in formats {
        for (w, h) in [(37, 21), (64, 32), (1, 9), (16, 16), (300, 7)] {
            let levels = Texture::full_mip_levels(w, h);
            let mut t = Texture::new(format, w, h, levels).unwrap();
            for byte in t.level_data_mut(0) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *byte = seed as u8;
            }
            let mut expected = t.clone();
            per_texel_mipmaps(&mut expected);
            t.generate_mipmaps();
            for level in 1..levels {
                assert!(
                    t.level_data(level) == expected.level_data(level),
                    "{format:?} {w}x{h} level {level}"
                );
            }
        }
    }
}
