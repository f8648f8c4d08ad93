//! Format encode/decode: Mesa 22.3's conversions, including rounding edge cases.

use softgpu::texture::{f16_to_f32, f32_to_f16_rtz, float_to_ubyte, linear_float_to_srgb8, Format};

fn f(x: f32) -> u32 {
    x.to_bits()
}

fn enc(format: Format, bits: [u32; 4]) -> Vec<u8> {
    let mut out = vec![0xAAu8; format.bytes_per_texel()];
    format.encode(bits, &mut out);
    out
}

#[test]
fn names_round_trip_and_sizes() {
    for format in Format::ALL {
        assert_eq!(Format::from_name(format.name()), Some(format));
        assert_eq!(format.to_string(), format.name());
    }
    assert_eq!(Format::from_name("r8g8b8a8_unorm"), None);
    assert_eq!(Format::from_name("R8G8B8A8_SNORM"), None);
    assert_eq!(Format::R8G8B8A8Unorm.bytes_per_texel(), 4);
    assert_eq!(Format::R16G16B16A16Sfloat.bytes_per_texel(), 8);
    assert_eq!(Format::R32G32B32A32Uint.bytes_per_texel(), 16);
    assert_eq!(Format::R8G8Unorm.bytes_per_texel(), 2);
    assert_eq!(Format::A2B10G10R10UnormPack32.bytes_per_texel(), 4);
    assert_eq!(Format::R16G16Sint.channels(), 2);
    assert!(Format::R8Uint.is_integer() && !Format::R8Uint.is_signed_integer());
    assert!(Format::R32Sint.is_signed_integer());
    assert!(Format::R8G8B8A8Srgb.is_srgb() && !Format::R8G8B8A8Srgb.is_integer());
    assert!(!Format::R16Sfloat.is_integer());
}

#[test]
fn unorm8_rounding_matches_mesa() {
    // Ties go to even: 0.5/255 → 0, 1.5/255 → 2, 2.5/255 → 2 (computed in f32 like Mesa).
    assert_eq!(float_to_ubyte(0.5 / 255.0), 0);
    assert_eq!(float_to_ubyte(1.5 / 255.0), 2);
    assert_eq!(float_to_ubyte(0.5), 128);
    assert_eq!(float_to_ubyte(f32::NAN), 0);
    assert_eq!(float_to_ubyte(-0.0), 0);
    assert_eq!(float_to_ubyte(-3.0), 0);
    assert_eq!(float_to_ubyte(1.0), 255);
    assert_eq!(float_to_ubyte(7.0), 255);
    assert_eq!(float_to_ubyte(f32::INFINITY), 255);
    assert_eq!(float_to_ubyte(0.998), 254);
    // Every byte survives decode → encode.
    for v in 0..=255u8 {
        let bits = Format::R8Unorm.decode(&[v]);
        assert_eq!(enc(Format::R8Unorm, bits), vec![v]);
    }
}

#[test]
fn unorm8_decode_is_times_reciprocal() {
    let d = Format::R8G8B8A8Unorm.decode(&[0, 51, 128, 255]);
    assert_eq!(d[0], f(0.0));
    assert_eq!(d[1], f(51.0 * (1.0 / 255.0)));
    assert_eq!(d[2], f(128.0 * (1.0 / 255.0)));
    assert_eq!(d[3], f(1.0));
    // 51 * (1/255) is not 51/255 in f32 for some values; make sure we use Mesa's form.
    let differing = (0..=255u32)
        .filter(|&v| v as f32 * (1.0 / 255.0) != v as f32 / 255.0)
        .count();
    assert!(differing > 0);
}

#[test]
fn missing_channels_read_as_0_0_1() {
    assert_eq!(Format::R8Unorm.decode(&[255]), [f(1.0), 0, 0, f(1.0)]);
    assert_eq!(Format::R8G8Uint.decode(&[3, 4]), [3, 4, 0, 1]);
    assert_eq!(
        Format::R16Sint.decode(&(-5i16).to_le_bytes()),
        [(-5i32) as u32, 0, 0, 1]
    );
    assert_eq!(
        Format::R32Sfloat.decode(&2.5f32.to_le_bytes()),
        [f(2.5), 0, 0, f(1.0)]
    );
}

#[test]
fn bgra_swaps_bytes() {
    let bits = [f(1.0), f(0.0), f(0.5), f(0.2)];
    assert_eq!(enc(Format::B8G8R8A8Unorm, bits), vec![128, 0, 255, 51]);
    assert_eq!(Format::B8G8R8A8Unorm.decode(&[128, 0, 255, 51])[0], f(1.0));
}

#[test]
fn srgb_known_values() {
    // Mesa's table-based encoder; reference points of the sRGB curve.
    assert_eq!(linear_float_to_srgb8(0.0), 0);
    assert_eq!(linear_float_to_srgb8(1.0), 255);
    assert_eq!(linear_float_to_srgb8(0.5), 188);
    assert_eq!(linear_float_to_srgb8(0.214), 127);
    assert_eq!(linear_float_to_srgb8(0.22), 129);
    assert_eq!(linear_float_to_srgb8(f32::NAN), 0);
    assert_eq!(linear_float_to_srgb8(-1.0), 0);
    assert_eq!(linear_float_to_srgb8(2.0), 255);
    // Alpha stays linear.
    let out = enc(Format::R8G8B8A8Srgb, [f(0.5), f(0.0), f(1.0), f(0.5)]);
    assert_eq!(out, vec![188, 0, 255, 128]);
    // Decode table: 0 → 0, 255 → 1, 188 ≈ 0.5029, alpha linear.
    let d = Format::R8G8B8A8Srgb.decode(&[0, 255, 188, 188]);
    assert_eq!(d[0], f(0.0));
    assert_eq!(d[1], f(1.0));
    let mid = f32::from_bits(d[2]);
    assert!((mid - 0.502_886).abs() < 1e-6, "{mid}");
    assert_eq!(d[3], f(188.0 * (1.0 / 255.0)));
    // The table encoder inverts the decode table for every byte.
    for v in 0..=255u8 {
        let lin = Format::R8G8B8A8Srgb.decode(&[v, v, v, v]);
        assert_eq!(enc(Format::R8G8B8A8Srgb, lin), vec![v; 4], "byte {v}");
    }
}

#[test]
fn half_float_round_toward_zero_like_mesa() {
    // Values observed from Mesa 22.3 softpipe rendering into an R16G16B16A16_FLOAT target.
    assert_eq!(f32_to_f16_rtz(1.0), 0x3c00);
    assert_eq!(f32_to_f16_rtz(1.0009), 0x3c00);
    assert_eq!(f32_to_f16_rtz(65520.0), 0x7bff);
    assert_eq!(f32_to_f16_rtz(100000.0), 0x7bff);
    assert_eq!(f32_to_f16_rtz(-1e6), 0xfbff);
    assert_eq!(f32_to_f16_rtz(-0.0), 0x8000);
    assert_eq!(f32_to_f16_rtz(6e-8), 0x0001);
    assert_eq!(f32_to_f16_rtz(2.9e-8), 0x0000);
    assert_eq!(f32_to_f16_rtz(3.1e-8), 0x0000);
    assert_eq!(f32_to_f16_rtz(-2.9e-8), 0x8000);
    assert_eq!(f32_to_f16_rtz(6.1e-5), 0x03ff);
    assert_eq!(f32_to_f16_rtz(f32::NAN), 0x7e00);
    assert_eq!(f32_to_f16_rtz(-f32::NAN), 0xfe00);
    assert_eq!(f32_to_f16_rtz(f32::INFINITY), 0x7c00);
    assert_eq!(f32_to_f16_rtz(f32::NEG_INFINITY), 0xfc00);
    assert_eq!(f32_to_f16_rtz(65504.0), 0x7bff);
    assert_eq!(f32_to_f16_rtz(0.333_333_34), 0x3555);
    // Decode: exact, including denormals, inf and NaN.
    assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
    assert_eq!(f16_to_f32(0x03ff), 1023.0 * 2f32.powi(-24));
    assert_eq!(f16_to_f32(0x0400), 2f32.powi(-14));
    assert_eq!(f16_to_f32(0xc000), -2.0);
    assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
    assert!(f16_to_f32(0x7e00).is_nan());
    // Every half value except NaNs round-trips.
    for h in 0..=u16::MAX {
        let v = f16_to_f32(h);
        if !v.is_nan() {
            assert_eq!(f32_to_f16_rtz(v), h);
        }
    }
    let out = enc(Format::R16G16Sfloat, [f(0.5), f(-2.0), 0, 0]);
    assert_eq!(out, vec![0x00, 0x38, 0x00, 0xc0]);
}

#[test]
fn rgb10a2_packing() {
    let out = enc(
        Format::A2B10G10R10UnormPack32,
        [f(1.0), f(0.0), f(0.5), f(1.0 / 3.0)],
    );
    // R = 1023, G = 0, B = round_even(511.5) = 512, A = round(1) = 1.
    let word = 1023 | (512 << 20) | (1 << 30);
    assert_eq!(u32::from_le_bytes(out.try_into().unwrap()), word);
    let out = enc(
        Format::A2B10G10R10UnormPack32,
        [f(f32::NAN), f(-1.0), f(2.0), f(0.9)],
    );
    let word: u32 = (1023 << 20) | (3 << 30);
    assert_eq!(u32::from_le_bytes(out.try_into().unwrap()), word);
    let d = Format::A2B10G10R10UnormPack32.decode(&((1023u32 << 10) | (2 << 30)).to_le_bytes());
    assert_eq!(d, [f(0.0), f(1.0), f(0.0), f(2.0 * (1.0 / 3.0))]);
    let out = enc(Format::A2B10G10R10UintPack32, [5000, 7, 1023, 9]);
    let word: u32 = 1023 | (7 << 10) | (1023 << 20) | (3 << 30);
    assert_eq!(u32::from_le_bytes(out.clone().try_into().unwrap()), word);
    assert_eq!(
        Format::A2B10G10R10UintPack32.decode(&out),
        [1023, 7, 1023, 3]
    );
}

#[test]
fn integer_clamping() {
    // These values were checked against softpipe rendering into RGBA8UI/8I/16UI/16I targets.
    assert_eq!(enc(Format::R8Uint, [300, 0, 0, 0]), vec![255]);
    assert_eq!(enc(Format::R8G8Uint, [7, u32::MAX, 0, 0]), vec![7, 255]);
    assert_eq!(enc(Format::R8Sint, [(-300i32) as u32, 0, 0, 0]), vec![0x80]);
    assert_eq!(enc(Format::R8Sint, [200, 0, 0, 0]), vec![127]);
    assert_eq!(enc(Format::R8Sint, [(-5i32) as u32, 0, 0, 0]), vec![0xfb]);
    assert_eq!(enc(Format::R16Uint, [70000, 0, 0, 0]), vec![0xff, 0xff]);
    assert_eq!(
        enc(Format::R16Sint, [(-40000i32) as u32, 0, 0, 0]),
        (-32768i16).to_le_bytes().to_vec()
    );
    assert_eq!(enc(Format::R32Uint, [u32::MAX, 0, 0, 0]), vec![0xff; 4]);
    assert_eq!(
        enc(Format::R32Sint, [(-7i32) as u32, 0, 0, 0]),
        (-7i32).to_le_bytes().to_vec()
    );
    let rgba = enc(
        Format::R8G8B8A8Sint,
        [1, (-1i32) as u32, 127, (-128i32) as u32],
    );
    assert_eq!(
        Format::R8G8B8A8Sint.decode(&rgba),
        [1, u32::MAX, 127, (-128i32) as u32]
    );
    let r32 = enc(Format::R32G32B32A32Uint, [1, 2, 3, 4]);
    assert_eq!(Format::R32G32B32A32Uint.decode(&r32), [1, 2, 3, 4]);
}

#[test]
fn float32_is_bit_exact() {
    let bits = [f(-0.0), 0x7fc1_2345, f(f32::INFINITY), f(1e-40)];
    let out = enc(Format::R32G32B32A32Sfloat, bits);
    assert_eq!(Format::R32G32B32A32Sfloat.decode(&out), bits);
}

#[test]
fn encode_writes_only_its_channels() {
    let mut out = [9u8; 3];
    Format::R8G8Unorm.encode([f(1.0), f(0.0), f(1.0), f(1.0)], &mut out);
    assert_eq!(out, [255, 0, 9]);
}

#[test]
fn srgb_encode_matches_softpipe_render_target() {
    // tests/texture_data/srgb_encode.png: softpipe writing vec4(x, x/16, 0.375x + 0.5, x) with
    // x = (i + 0.5) / 4096 into an sRGB render target.
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/texture_data/srgb_encode.png");
    let want = softgpu::texture::Texture::load(&path).unwrap();
    let want = want.level_data(0);
    for i in 0..4096usize {
        let x = (i as f32 + 0.5) / 4096.0;
        let got = enc(
            Format::R8G8B8A8Srgb,
            [f(x), f(x * 0.0625), f(x * 0.375 + 0.5), f(x)],
        );
        assert_eq!(&got[..], &want[i * 4..i * 4 + 4], "x = {x}");
    }
}
