//! The driver profiles against the drivers themselves: probes of `tools/driver_probes.py` (the
//! TGSI Mesa softpipe ran, exported with their inputs, and each driver's readback of the GL
//! probe: Mesa 22.3 softpipe and llvmpipe, and an NVIDIA H200 with driver 580.159, commands in
//! reference-images/drivers/README.md) drawn through `softgpu draw` under each `--driver`,
//! with both executors. Where a rule is the driver's, every pixel must match its readback.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use softgpu::draw::{self, DrawJob};
use softgpu::driver::Driver;
use softgpu::exec::{LodMode, SampleRequest, TextureAccess};
use softgpu::ir::{Processor, TextureTarget};
use softgpu::raster::ClipConvention;
use softgpu::shader::Executor;
use softgpu::texture::{Filter, Format, SamplerState, Texture, TextureUnits, Wrap};

fn refs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("reference-images/drivers")
}

/// A driver's readback of a probe: 4 bytes per pixel, pixel index order (GL's bottom row
/// first), from `NAME/DRIVER.bin` or the run-length `NAME/DRIVER.runs`.
fn readback(probe: &str, driver: &str) -> Vec<u8> {
    let dir = refs().join(probe);
    let bin = dir.join(format!("{driver}.bin"));
    if bin.exists() {
        return std::fs::read(&bin).unwrap();
    }
    let text = std::fs::read_to_string(dir.join(format!("{driver}.runs"))).unwrap();
    let runs: Vec<(usize, u8)> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (p, v) = l.split_once(' ').unwrap();
            (p.parse().unwrap(), v.parse().unwrap())
        })
        .collect();
    let pixels = 1 << 20;
    let mut out = Vec::with_capacity(pixels * 4);
    for (i, &(start, value)) in runs.iter().enumerate() {
        let end = runs.get(i + 1).map_or(pixels, |r| r.0);
        for _ in start..end {
            out.extend_from_slice(&[value, value, value, 255]);
        }
    }
    out
}

/// `softgpu draw` of an exported probe under `driver` with `executor`, in pixel index order.
fn draw_probe(probe: &str, size: (u32, u32), driver: Driver, executor: Executor) -> Vec<u8> {
    let dir = refs().join(probe);
    let stage = |file: &str, processor| {
        draw::compile_stage(&dir.join(file), processor, None)
            .unwrap()
            .program
    };
    let text = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap();
    let tex = dir.join("tex0.png");
    let textures = if tex.exists() {
        vec![(0, Arc::new(Texture::load(&tex).unwrap()))]
    } else {
        Vec::new()
    };
    let job = DrawJob {
        vertex_program: stage("vs.tgsi", Processor::Vertex),
        fragment_program: stage("fs.tgsi", Processor::Fragment),
        vertices: draw::parse_vertices(&dir.join("vertices.txt"), &text("vertices.txt")).unwrap(),
        constants: draw::parse_constants(&dir.join("consts.txt"), &text("consts.txt")).unwrap(),
        textures,
        // The probes' textures are CLAMP_TO_EDGE without mipmaps.
        sampler: draw::sampler_state(Filter::Linear, Wrap::ClampToEdge),
        size,
        convention: ClipConvention::OpenGl,
        math: driver.math(),
        driver,
    };
    let image = draw::run_with(&job, executor).unwrap();
    // PNG rows run from the top; the probes count pixels from GL's bottom row.
    let rgba = image.to_rgba8();
    rgba.chunks(size.0 as usize * 4)
        .rev()
        .flatten()
        .copied()
        .collect()
}

/// Pixels (of 4 bytes) where `a` and `b` differ.
fn differing(a: &[u8], b: &[u8]) -> usize {
    assert_eq!(a.len(), b.len());
    a.chunks(4).zip(b.chunks(4)).filter(|(x, y)| x != y).count()
}

/// Every driver's rules against its own readback of `probe`, both executors.
fn check_probe(probe: &str, size: (u32, u32)) {
    for driver in Driver::ALL {
        let want = readback(probe, driver.name());
        for executor in [Executor::Jit, Executor::Interp] {
            let got = draw_probe(probe, size, driver, executor);
            let bad = differing(&got, &want[..got.len()]);
            assert_eq!(
                bad, 0,
                "{probe} under --driver {driver} ({executor:?}): {bad} pixels differ from the driver"
            );
        }
    }
}

#[test]
fn bilinear_weights_across_a_texel_edge_are_each_drivers() {
    check_probe("bilinear_rgba8_w2", (128, 33));
}

#[test]
fn bilinear_corner_weights_are_each_drivers() {
    check_probe("bilinear_2d_rgba8", (65, 65));
}

#[test]
fn bilinear_values_of_unorm8_texels_are_each_drivers() {
    check_probe("bilinear_values_rgba8", (64, 64));
}

#[test]
fn derivatives_follow_each_drivers_rule() {
    check_probe("derivative_default", (64, 64));
}

#[test]
fn unorm8_target_writes_are_each_drivers() {
    check_probe("dense_unorm8", (1024, 1024));
}

/// A 2x2 RGBA32F texture's bilinear lookups under NVIDIA's rule: the probe sampled a texture
/// that is 1 only in texel (1, 1) at (0.5 + i/64, 0.5 + j/64) texels; the lookups here are the
/// same coordinates through the sampler the executors call.
#[test]
fn float_texture_corner_weights_are_nvidias() {
    let mut data = vec![0u8; 2 * 2 * 16];
    for texel in 0..4 {
        let value: f32 = if texel == 3 { 1.0 } else { 0.0 };
        data[texel * 16..texel * 16 + 4].copy_from_slice(&value.to_le_bytes());
        data[texel * 16 + 12..texel * 16 + 16].copy_from_slice(&1.0f32.to_le_bytes());
    }
    let texture = texture_of(Format::R32G32B32A32Sfloat, 2, 2, &data);
    let want = readback("bilinear_2d_rgba32f", "nvidia");
    let got = sample_grid(texture, 65, |i, j| {
        [(0.5 + i as f32 / 64.0) / 2.0, (0.5 + j as f32 / 64.0) / 2.0]
    });
    assert_eq!(differing(&got, &want[..got.len()]), 0);
}

/// A 2x1 RGBA32F texture 0 | 1 sampled across its edge in 4097 steps.
#[test]
fn float_texture_axis_weights_are_nvidias() {
    let mut data = vec![0u8; 2 * 16];
    data[16..20].copy_from_slice(&1.0f32.to_le_bytes());
    for texel in 0..2 {
        data[texel * 16 + 12..texel * 16 + 16].copy_from_slice(&1.0f32.to_le_bytes());
    }
    let texture = texture_of(Format::R32G32B32A32Sfloat, 2, 1, &data);
    let want = readback("bilinear_rgba32f_w2", "nvidia");
    let got = sample_grid(texture, 4097, |p, _| [(0.5 + p as f32 / 4096.0) / 2.0, 0.5]);
    assert_eq!(differing(&got, &want[..got.len()]), 0);
}

/// sRGB texels 0..255 against 1..256 blended in y at weights k/16. NVIDIA's filter does not
/// blend the values its `texelFetch` returns (its result can fall below both texels' decoded
/// values), so the rule (NVIDIA's decode table, the blend rounded to half precision) is a model:
/// it gives NVIDIA's bits for 91% of these lookups and is within 0.5% of every one.
#[test]
fn srgb_texture_filtering_is_near_nvidias() {
    let mut data = vec![0u8; 256 * 2 * 4];
    for i in 0..256 {
        data[i * 4] = i as u8;
        data[(256 + i) * 4] = (i as u8).wrapping_add(1);
        data[i * 4 + 3] = 255;
        data[(256 + i) * 4 + 3] = 255;
    }
    let texture = texture_of(Format::R8G8B8A8SrgbNvidia, 256, 2, &data);
    let want = readback("bilinear_values_srgb8", "nvidia");
    let got = sample_grid(texture, 4096, |p, _| {
        let (i, w) = ((p / 16) as f32, (p % 16) as f32 / 16.0);
        [(i + 0.5) / 256.0, (0.5 + w) / 2.0]
    });
    let (mut exact, mut worst) = (0, 0.0f32);
    for (g, w) in got.chunks(4).zip(want.chunks(4)) {
        let (g, w) = (
            f32::from_le_bytes(g.try_into().unwrap()),
            f32::from_le_bytes(w.try_into().unwrap()),
        );
        exact += usize::from(g == w);
        if w > 0.0 {
            worst = worst.max((g - w).abs() / w);
        }
    }
    assert!(exact * 100 >= 91 * 4096, "{exact} of 4096 exact");
    assert!(worst <= 0.005, "worst relative error {worst}");
}

#[test]
fn srgb_decode_is_nvidias_table() {
    let want = readback("srgb_decode", "nvidia");
    for code in 0..=255u8 {
        let bits = Format::R8G8B8A8SrgbNvidia.decode(&[code, code, code, 255])[0];
        let w = u32::from_le_bytes(
            want[code as usize * 4..code as usize * 4 + 4]
                .try_into()
                .unwrap(),
        );
        assert_eq!(bits, w, "code {code}");
    }
}

#[test]
fn srgb_target_writes_are_nvidias() {
    let want = readback("dense_srgb8", "nvidia");
    for p in 0..1u32 << 20 {
        let v = p as f32 * (1.0 / 1_048_576.0);
        let mut texel = [0u8; 4];
        Format::R8G8B8A8SrgbNvidia.encode([v.to_bits(); 4], &mut texel);
        assert_eq!(texel[0], want[p as usize * 4], "value {p}·2^-20");
    }
}

/// A one-level texture holding `data`.
fn texture_of(format: Format, width: u32, height: u32, data: &[u8]) -> Texture {
    let mut texture = Texture::new(format, width, height, 1).unwrap();
    texture.level_data_mut(0).copy_from_slice(data);
    texture
}

/// `lookup(i, j)`'s coordinates sampled through [`TextureUnits`] under NVIDIA's rule for
/// `i, j` in `0..n` (row-major, `n * n` results; `n` results for a 1D `lookup` ignoring `j` is
/// taken when `n` > 256), each result's red channel as its f32 bytes.
fn sample_grid(texture: Texture, n: usize, lookup: impl Fn(usize, usize) -> [f32; 2]) -> Vec<u8> {
    let mut units = TextureUnits::new().with_filter_rule(Driver::Nvidia.filter_rule());
    units.bind(
        0,
        Arc::new(texture),
        SamplerState::new(Filter::Linear, Wrap::ClampToEdge),
    );
    let points: Vec<[f32; 2]> = if n > 256 {
        (0..n).map(|p| lookup(p, 0)).collect()
    } else {
        (0..n * n).map(|p| lookup(p % n, p / n)).collect()
    };
    let mut out = Vec::with_capacity(points.len() * 4);
    for quad in points.chunks(4) {
        let mut coords = [[0.0f32; 4]; 4];
        for (lane, c) in quad.iter().enumerate() {
            coords[0][lane] = c[0];
            coords[1][lane] = c[1];
        }
        let request = SampleRequest {
            view: 0,
            sampler: 0,
            target: TextureTarget::Tex2D,
            coords,
            compare: None,
            lod: LodMode::Zero,
            offset: [0; 3],
        };
        let red = units.sample(&request)[0];
        for bits in red.iter().take(quad.len()) {
            out.extend_from_slice(&bits.to_le_bytes());
        }
    }
    out
}

/// u = (100.5 + t) / 320 is inexact. softpipe and llvmpipe divide exactly; NVIDIA's division
/// is approximate (not reproduced), which moves coordinates that sit exactly on a weight's
/// rounding tie (t = k/256 + 1/512, every 16th pixel) to its other side. Every other pixel is
/// NVIDIA's.
#[test]
fn bilinear_weights_at_computed_coordinates_are_each_drivers_but_nvidias_division() {
    let (probe, size) = ("bilinear_rgba8_w320", (128, 33));
    for driver in Driver::ALL {
        let want = readback(probe, driver.name());
        let got = draw_probe(probe, size, driver, Executor::Jit);
        let bad: Vec<usize> = (0..4097)
            .filter(|&p| got[p * 4..p * 4 + 4] != want[p * 4..p * 4 + 4])
            .collect();
        if driver == Driver::Nvidia {
            assert!(bad.iter().all(|p| p % 16 == 8), "off-tie pixels: {bad:?}");
        } else {
            assert!(bad.is_empty(), "{driver}: {bad:?}");
        }
    }
}

/// `softgpu draw --driver nvidia` on the command line: the same bytes as NVIDIA's readback, and
/// an unknown driver is an error naming the choices.
#[test]
fn the_command_line_draws_with_a_driver_profile() {
    let dir = refs().join("bilinear_2d_rgba8");
    let out = std::env::temp_dir().join(format!("softgpu-driver-cli-{}.png", std::process::id()));
    let run = |driver: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_softgpu"))
            .args(["draw", "--vs"])
            .arg(dir.join("vs.tgsi"))
            .arg("--fs")
            .arg(dir.join("fs.tgsi"))
            .arg("--vertices")
            .arg(dir.join("vertices.txt"))
            .arg("--consts")
            .arg(dir.join("consts.txt"))
            .arg("--texture")
            .arg(format!("0={}", dir.join("tex0.png").display()))
            .args([
                "--wrap",
                "clamp",
                "--size",
                "65x65",
                "--no-shader-cache",
                "--driver",
                driver,
            ])
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap()
    };
    let done = run("nvidia");
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let image = image::open(&out).unwrap().to_rgba8();
    let bottom_first: Vec<u8> = image
        .as_raw()
        .chunks(65 * 4)
        .rev()
        .flatten()
        .copied()
        .collect();
    std::fs::remove_file(&out).unwrap();
    assert_eq!(
        differing(
            &bottom_first,
            &readback("bilinear_2d_rgba8", "nvidia")[..65 * 65 * 4]
        ),
        0
    );
    let refused = run("radeon");
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("nvidia") && stderr.contains("llvmpipe"),
        "{stderr}"
    );
}
