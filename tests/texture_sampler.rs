//! Sampler behaviour with hand-computed expectations (softpipe's formulas): wrap modes, filters,
//! LOD selection, gather order, fetch, size and LOD queries.

use softgpu::exec::{LodMode, SampleRequest, TextureAccess};
use softgpu::ir::TextureTarget;
use softgpu::texture::{
    fast_log2, FetchBounds, Filter, Format, SamplerState, Texture, TextureUnits, Wrap,
};
use std::sync::Arc;

/// A `R32_SFLOAT` texture whose texel (x, y) at level l holds `x + 10 y + 100 l`.
fn ramp(w: u32, h: u32, levels: u32) -> Texture {
    let mut t = Texture::new(Format::R32Sfloat, w, h, levels).unwrap();
    for l in 0..levels {
        let (lw, lh) = t.level_size(l);
        for y in 0..lh {
            for x in 0..lw {
                let v = (x + 10 * y + 100 * l) as f32;
                t.write_texel(l, x, y, [v.to_bits(), 0, 0, 0]);
            }
        }
    }
    t
}

fn units(t: Texture, s: SamplerState) -> TextureUnits {
    let mut u = TextureUnits::new();
    u.bind(0, Arc::new(t), s);
    u
}

/// A request whose four lanes share s, t except for a per-pixel step (for the LOD).
fn req(target: TextureTarget, s: f32, t: f32, step: f32, lod: LodMode) -> SampleRequest {
    // Lanes TL, TR, BL, BR: x step to the right, y step downwards.
    let coords = [
        [s, s + step, s, s + step],
        [t, t, t + step, t + step],
        [0.0; 4],
        [0.0; 4],
    ];
    SampleRequest {
        view: 0,
        sampler: 0,
        target,
        coords,
        compare: None,
        lod,
        offset: [0; 3],
    }
}

fn red(u: &TextureUnits, r: &SampleRequest) -> f32 {
    f32::from_bits(u.sample(r)[0][0])
}

fn alpha(u: &TextureUnits, r: &SampleRequest) -> f32 {
    f32::from_bits(u.sample(r)[3][0])
}

const T2D: TextureTarget = TextureTarget::Tex2D;

#[test]
fn nearest_wrap_modes() {
    // 4x2 texture; t = 0.25 is row 0. s = -0.1 → s * 4 = -0.4.
    let r = req(T2D, -0.1, 0.25, 0.0, LodMode::Zero);
    let n = |w| units(ramp(4, 2, 1), SamplerState::new(Filter::Nearest, w));
    assert_eq!(red(&n(Wrap::Repeat), &r), 3.0);
    assert_eq!(red(&n(Wrap::ClampToEdge), &r), 0.0);
    assert_eq!(red(&n(Wrap::MirroredRepeat), &r), 0.0);
    // Border: any s*4 below 0 floors to texel -1, the transparent black border.
    assert_eq!(red(&n(Wrap::ClampToBorder), &r), 0.0);
    assert_eq!(alpha(&n(Wrap::ClampToBorder), &r), 0.0);
    let inside = req(T2D, 0.05, 0.25, 0.0, LodMode::Zero);
    assert_eq!(alpha(&n(Wrap::ClampToBorder), &inside), 1.0);
    // Mirror: s = 1.3 is in an odd period: u = 1 - 0.3 = 0.7 → texel 2.
    let m = req(T2D, 1.3, 0.75, 0.0, LodMode::Zero);
    assert_eq!(red(&n(Wrap::MirroredRepeat), &m), 12.0);
    assert_eq!(red(&n(Wrap::Repeat), &m), 11.0);
    assert_eq!(red(&n(Wrap::ClampToEdge), &m), 13.0);
}

#[test]
fn linear_wrap_modes() {
    let l = |w| units(ramp(4, 2, 1), SamplerState::new(Filter::Linear, w));
    // s = 0: u = -0.5, weight 0.5. t = 0.25: v = 0 → row 0 only.
    let r = req(T2D, 0.0, 0.25, 0.0, LodMode::Zero);
    assert_eq!(red(&l(Wrap::Repeat), &r), 1.5); // between texel 3 and 0
    assert_eq!(red(&l(Wrap::ClampToEdge), &r), 0.0);
    assert_eq!(red(&l(Wrap::MirroredRepeat), &r), 0.0);
    assert_eq!(red(&l(Wrap::ClampToBorder), &r), 0.0);
    assert_eq!(alpha(&l(Wrap::ClampToBorder), &r), 0.5); // half border (alpha 0)
                                                         // Interior: s = 0.3 → u = 0.7 (in f32) between texels 0 and 1; t = 0.5 → v = 0.5.
    let r = req(T2D, 0.3, 0.5, 0.0, LodMode::Zero);
    let u = 0.3f32 * 4.0 - 0.5;
    let want = {
        let top = 0.0 + u * (1.0 - 0.0);
        let bottom = 10.0 + u * (11.0 - 10.0);
        top + 0.5 * (bottom - top)
    };
    for w in [
        Wrap::Repeat,
        Wrap::ClampToEdge,
        Wrap::MirroredRepeat,
        Wrap::ClampToBorder,
    ] {
        assert_eq!(red(&l(w), &r), want, "{w:?}");
    }
    // Past the far edge: s = 1.0 → u = 3.5; edge clamps the second texel to 3.
    let r = req(T2D, 1.0, 0.25, 0.0, LodMode::Zero);
    assert_eq!(red(&l(Wrap::ClampToEdge), &r), 3.0);
    assert_eq!(red(&l(Wrap::Repeat), &r), 1.5);
    assert_eq!(alpha(&l(Wrap::ClampToBorder), &r), 0.5);
}

#[test]
fn rgba8_fast_path_equals_generic_decode() {
    // Same bytes as RGBA8 (table path) and via a manual decode + bilinear formula.
    let bytes: Vec<u8> = (0..4 * 4 * 4).map(|i| (i * 37 % 256) as u8).collect();
    let t = Texture::from_rgba8(4, 4, bytes.clone()).unwrap();
    let u = units(t, SamplerState::new(Filter::Linear, Wrap::Repeat));
    let r = req(T2D, 0.4, 0.7, 0.0, LodMode::Zero);
    let got = u.sample(&r);
    let (fu, fv) = (0.4f32 * 4.0 - 0.5, 0.7f32 * 4.0 - 0.5);
    let (x0, y0) = (fu.floor() as usize, fv.floor() as usize);
    let (a, b) = (fu - fu.floor(), fv - fv.floor());
    for c in 0..4 {
        let px = |x: usize, y: usize| bytes[(y * 4 + x) * 4 + c] as f32 * (1.0 / 255.0);
        let top = px(x0, y0) + a * (px(x0 + 1, y0) - px(x0, y0));
        let bot = px(x0, y0 + 1) + a * (px(x0 + 1, y0 + 1) - px(x0, y0 + 1));
        assert_eq!(
            f32::from_bits(got[c][0]),
            top + b * (bot - top),
            "channel {c}"
        );
    }
}

#[test]
fn lod_selection() {
    // 8x8 with 4 levels; level l reads 100 l at texel (0, 0). Nearest everything, so the
    // level is visible directly. A per-pixel step of d texels-per-8 gives rho = 8 d.
    let mk = |s: SamplerState| units(ramp(8, 8, 4), s);
    let nearest = SamplerState::new(Filter::Nearest, Wrap::ClampToEdge)
        .with_mip_filter(Some(Filter::Nearest));
    let u = mk(nearest);
    let at = |step: f32, lod: LodMode| req(T2D, 0.0, 0.0, step, lod);
    assert_eq!(red(&u, &at(1.0 / 16.0, LodMode::Implicit)), 0.0); // magnified
    assert_eq!(red(&u, &at(1.0 / 8.0, LodMode::Implicit)), 0.0); // lambda 0
    assert_eq!(red(&u, &at(2.0 / 8.0, LodMode::Implicit)), 100.0); // minified by 2
    assert_eq!(red(&u, &at(4.0 / 8.0, LodMode::Implicit)), 200.0); // by 4
    assert_eq!(red(&u, &at(64.0 / 8.0, LodMode::Implicit)), 300.0); // past the chain
                                                                    // Nearest level rounds: lambda 1.4 → 1, 1.6 → 2 (explicit lod, no derivatives).
    assert_eq!(red(&u, &at(0.0, LodMode::Explicit([1.4; 4]))), 100.0);
    assert_eq!(red(&u, &at(0.0, LodMode::Explicit([1.6; 4]))), 200.0);
    // Per-lane bias on top of the implicit lambda (1): 1 + 1 = 2.
    assert_eq!(red(&u, &at(2.0 / 8.0, LodMode::Bias([1.0; 4]))), 200.0);
    // Sampler bias and clamps.
    let mut biased = nearest;
    biased.lod_bias = 1.0;
    assert_eq!(red(&mk(biased), &at(2.0 / 8.0, LodMode::Implicit)), 200.0);
    assert_eq!(red(&mk(biased), &at(0.0, LodMode::Zero)), 100.0);
    let mut clamped = nearest;
    clamped.max_lod = 1.0;
    assert_eq!(red(&mk(clamped), &at(4.0 / 8.0, LodMode::Implicit)), 100.0);
    let mut floor = nearest;
    floor.min_lod = 2.0;
    assert_eq!(red(&mk(floor), &at(1.0 / 16.0, LodMode::Implicit)), 200.0);
    // Explicit gradients: rho from the lane's ddx/ddy, without the sampler bias.
    let grad = LodMode::Gradient {
        ddx: [[4.0 / 8.0; 4], [0.0; 4], [0.0; 4]],
        ddy: [[0.0; 4]; 3],
    };
    assert_eq!(red(&mk(biased), &at(0.0, grad)), 200.0);
    // Linear mip filter blends levels by the fractional lod.
    let linear =
        SamplerState::new(Filter::Nearest, Wrap::ClampToEdge).with_mip_filter(Some(Filter::Linear));
    assert_eq!(
        red(&mk(linear), &at(0.0, LodMode::Explicit([1.25; 4]))),
        125.0
    );
    // No mip filter: always level 0.
    let none = SamplerState::new(Filter::Nearest, Wrap::ClampToEdge);
    assert_eq!(red(&mk(none), &at(4.0 / 8.0, LodMode::Implicit)), 0.0);
}

#[test]
fn min_mag_switch_at_lod_zero() {
    // min nearest, mag linear, no mips: lod ≤ 0 uses the mag filter.
    let mut s = SamplerState::new(Filter::Nearest, Wrap::ClampToEdge);
    s.mag_filter = Filter::Linear;
    let u = units(ramp(4, 1, 1), s);
    let mag = req(T2D, 0.25, 0.5, 1.0 / 8.0, LodMode::Implicit); // rho 0.5: magnified
    let min = req(T2D, 0.25, 0.5, 1.0 / 2.0, LodMode::Implicit); // rho 2: minified
    assert_eq!(red(&u, &mag), 0.5);
    assert_eq!(red(&u, &min), 1.0);
}

#[test]
fn pot_linear_mip_quirk_is_mirrored() {
    // softpipe's 2D linear/repeat/POT mip path blends a lod in (-1, 0) towards level 1
    // (reachable only with a negative min_lod).
    let mut s =
        SamplerState::new(Filter::Linear, Wrap::Repeat).with_mip_filter(Some(Filter::Linear));
    s.min_lod = -1000.0;
    let mut t = Texture::new(Format::R32Sfloat, 4, 4, 3).unwrap();
    for l in 0..3 {
        let (w, h) = t.level_size(l);
        for y in 0..h {
            for x in 0..w {
                t.write_texel(l, x, y, [(l as f32 * 10.0).to_bits(), 0, 0, 0]);
            }
        }
    }
    let u = units(t, s);
    assert_eq!(
        red(&u, &req(T2D, 0.5, 0.5, 0.0, LodMode::Explicit([-0.25; 4]))),
        7.5
    );
    assert_eq!(
        red(&u, &req(T2D, 0.5, 0.5, 0.0, LodMode::Explicit([-1.0; 4]))),
        0.0
    );
}

#[test]
fn gather_order_and_component() {
    // 2x2: (0,0)=1, (1,0)=2, (0,1)=3, (1,1)=4 in red; green = 10 x red.
    let mut t = Texture::new(Format::R32G32Sfloat, 2, 2, 1).unwrap();
    for (x, y, v) in [(0, 0, 1.0f32), (1, 0, 2.0), (0, 1, 3.0), (1, 1, 4.0)] {
        t.write_texel(0, x, y, [v.to_bits(), (10.0 * v).to_bits(), 0, 0]);
    }
    let u = units(t, SamplerState::new(Filter::Nearest, Wrap::Repeat));
    let r = req(T2D, 0.5, 0.5, 0.0, LodMode::Zero);
    let g = u.gather(&r, 0);
    let lane0: Vec<f32> = (0..4).map(|c| f32::from_bits(g[c][0])).collect();
    assert_eq!(lane0, vec![3.0, 4.0, 2.0, 1.0]); // (x0,y1), (x1,y1), (x1,y0), (x0,y0)
    let g = u.gather(&r, 1);
    assert_eq!(f32::from_bits(g[0][0]), 30.0);
    // Missing channels gather their defaults (B = 0, A = 1).
    assert_eq!(f32::from_bits(u.gather(&r, 3)[2][0]), 1.0);
    assert_eq!(f32::from_bits(u.gather(&r, 2)[2][0]), 0.0);
}

#[test]
fn fetch_clamps_like_softpipe() {
    let u = units(ramp(4, 2, 3), SamplerState::default());
    let coords = [[1, 7, -3, 2], [1, 0, 1, 9], [0; 4], [0; 4]];
    let f = u.fetch(0, T2D, coords, [0, 5, 5, 5], [0; 3]);
    let got: Vec<f32> = (0..4).map(|l| f32::from_bits(f[0][l])).collect();
    // Lane 0's level for the whole quad; coordinates clamped to the level.
    assert_eq!(got, vec![11.0, 3.0, 10.0, 12.0]);
    let f = u.fetch(
        0,
        T2D,
        [[0, 1, 5, 0], [0; 4], [0; 4], [0; 4]],
        [1; 4],
        [1, 0, 0],
    );
    let got: Vec<f32> = (0..4).map(|l| f32::from_bits(f[0][l])).collect();
    assert_eq!(got, vec![101.0, 101.0, 101.0, 101.0]); // level 1 is 2x1
    assert_eq!(f32::from_bits(f[3][0]), 1.0);
    // Integer formats return integer bits.
    let mut t = Texture::new(Format::R16G16Sint, 1, 1, 1).unwrap();
    t.write_texel(0, 0, 0, [(-5i32) as u32, 7, 0, 0]);
    let u = units(t, SamplerState::default());
    let f = u.fetch(0, T2D, [[0; 4]; 4], [0; 4], [0; 3]);
    assert_eq!(
        [f[0][0], f[1][0], f[2][0], f[3][0]],
        [(-5i32) as u32, 7, 0, 1]
    );
}

#[test]
fn fetch_zero_out_of_range_per_lane() {
    let u = units(ramp(4, 2, 3), SamplerState::default()).with_fetch_bounds(FetchBounds::Zero);
    // In range at levels 0 and 1, x past the end, y negative; every lane its own level.
    let coords = [[1, 4, 1, 1], [1, 0, -1, 0], [0; 4], [0; 4]];
    let f = u.fetch(0, T2D, coords, [0, 0, 0, 1], [0; 3]);
    let got: Vec<f32> = (0..4).map(|l| f32::from_bits(f[0][l])).collect();
    assert_eq!(got, vec![11.0, 0.0, 0.0, 101.0]);
    // Out of range reads zero in every channel (alpha too); in range keeps alpha 1.
    assert_eq!([f[1][1], f[2][1], f[3][1]], [0, 0, 0]);
    assert_eq!(f32::from_bits(f[3][0]), 1.0);
    // Levels outside the chain (3 levels: 0..=2) and offsets pushing past an edge read zero.
    let f = u.fetch(
        0,
        T2D,
        [[0, 0, 2, 0], [0; 4], [0; 4], [0; 4]],
        [-1, 3, 0, 2],
        [2, 0, 0],
    );
    let got: Vec<f32> = (0..4).map(|l| f32::from_bits(f[0][l])).collect();
    assert_eq!(got, vec![0.0, 0.0, 0.0, 0.0]); // level 2 is 1x1: x = 2 is outside
    let f = u.fetch(
        0,
        T2D,
        [[0, 1, 2, 1], [0; 4], [0; 4], [0; 4]],
        [0; 4],
        [2, 0, 0],
    );
    let got: Vec<f32> = (0..4).map(|l| f32::from_bits(f[0][l])).collect();
    assert_eq!(got, vec![2.0, 3.0, 0.0, 3.0]);
}

#[test]
fn unbound_and_unsupported_read_zero() {
    let u = TextureUnits::new();
    let r = req(T2D, 0.5, 0.5, 0.0, LodMode::Implicit);
    assert_eq!(u.sample(&r), [[0; 4]; 4]);
    assert_eq!(u.gather(&r, 0), [[0; 4]; 4]);
    assert_eq!(u.fetch(3, T2D, [[0; 4]; 4], [0; 4], [0; 3]), [[0; 4]; 4]);
    assert_eq!(u.size(0, T2D, 0), [0; 4]);
    assert_eq!(u.query_lod(&r), [[0.0; 4]; 2]);
    let u = units(ramp(4, 4, 1), SamplerState::default());
    for target in [
        TextureTarget::Tex3D,
        TextureTarget::Cube,
        TextureTarget::Buffer,
    ] {
        let r = req(target, 0.5, 0.5, 0.0, LodMode::Implicit);
        assert_eq!(u.sample(&r), [[0; 4]; 4], "{target:?}");
        assert_eq!(u.size(0, target, 0), [0; 4]);
    }
    // Unbinding works.
    let mut u = u;
    u.unbind(0);
    assert!(u.get(0).is_none());
}

#[test]
fn other_targets() {
    let u = units(
        ramp(4, 2, 1),
        SamplerState::new(Filter::Nearest, Wrap::ClampToEdge),
    );
    // 1D reads row 0; 2D arrays read their one layer whatever the layer coordinate.
    let r = req(TextureTarget::Tex1D, 0.6, 0.9, 0.0, LodMode::Zero);
    assert_eq!(red(&u, &r), 2.0);
    let mut r = req(TextureTarget::Tex2DArray, 0.6, 0.9, 0.0, LodMode::Zero);
    r.coords[2] = [3.0; 4];
    assert_eq!(red(&u, &r), 12.0);
    // RECT takes texel coordinates.
    let r = req(TextureTarget::Rect, 2.5, 1.5, 0.0, LodMode::Zero);
    assert_eq!(red(&u, &r), 12.0);
    let r = req(TextureTarget::Rect, 9.0, -3.0, 0.0, LodMode::Zero);
    assert_eq!(red(&u, &r), 3.0);
    // A separate sampler unit overrides the view's own state.
    let mut u = u;
    u.bind(
        1,
        Arc::new(ramp(1, 1, 1)),
        SamplerState::new(Filter::Linear, Wrap::ClampToEdge),
    );
    let mut r = req(T2D, 0.3, 0.25, 0.0, LodMode::Zero);
    r.sampler = 1;
    assert_eq!(red(&u, &r), 0.3f32 * 4.0 - 0.5);
}

#[test]
fn size_queries() {
    let u = units(ramp(10, 6, 3), SamplerState::default());
    assert_eq!(u.size(0, T2D, 0), [10, 6, 0, 3]);
    assert_eq!(u.size(0, T2D, 2), [2, 1, 0, 3]);
    assert_eq!(u.size(0, T2D, 3), [0; 4]);
    assert_eq!(u.size(0, T2D, -1), [0; 4]);
    assert_eq!(u.size(0, TextureTarget::Tex1D, 1), [5, 0, 0, 3]);
    assert_eq!(u.size(0, TextureTarget::Tex2DArray, 0), [10, 6, 1, 3]);
    assert_eq!(u.size(0, TextureTarget::Rect, 0), [10, 6, 0, 3]);
}

#[test]
fn lod_query() {
    let s = SamplerState::new(Filter::Linear, Wrap::Repeat).with_mip_filter(Some(Filter::Linear));
    let u = units(ramp(8, 8, 4), s);
    // rho = 2 → lambda exactly 1.
    let q = u.query_lod(&req(T2D, 0.0, 0.0, 2.0 / 8.0, LodMode::Implicit));
    assert_eq!(q, [[1.0; 4], [1.0; 4]]);
    // Magnified: lambda -1, level clamped to 0.
    let q = u.query_lod(&req(T2D, 0.0, 0.0, 1.0 / 16.0, LodMode::Implicit));
    assert_eq!(q, [[0.0; 4], [-1.0; 4]]);
    // Past the chain: level clamped to the last (3), lambda unclamped.
    let q = u.query_lod(&req(T2D, 0.0, 0.0, 128.0 / 8.0, LodMode::Implicit));
    assert_eq!(q, [[3.0; 4], [7.0; 4]]);
    let near =
        SamplerState::new(Filter::Linear, Wrap::Repeat).with_mip_filter(Some(Filter::Nearest));
    let u = units(ramp(8, 8, 4), near);
    let q = u.query_lod(&req(T2D, 0.0, 0.0, 0.0, LodMode::Explicit([1.6; 4])));
    assert_eq!(q[0], [2.0; 4]);
    assert_eq!(q[1], [1.6; 4]);
}

#[test]
fn fast_log2_is_mesas_table_approximation() {
    assert_eq!(fast_log2(1.0), 0.0);
    assert_eq!(fast_log2(2.0), 1.0);
    assert_eq!(fast_log2(0.5), -1.0);
    assert_eq!(fast_log2(1024.0), 10.0);
    assert!((fast_log2(3.0) - 3f32.log2()).abs() < 0.003);
    assert_eq!(fast_log2(0.0), -127.0);
    // Table granularity: values within one 1/256 mantissa step share a result.
    assert_eq!(fast_log2(1.0 + 1.0 / 1024.0), 0.0);
}
