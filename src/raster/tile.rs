//! Binning triangles to 64x64 tiles and shading the tiles in parallel. Each tile owns its part
//! of every row it covers, so tiles write the target without locking, and walks its triangles
//! in API order, so overlapping triangles resolve as the API orders them.

use super::setup::{Coef, InputSource, Interp, Plan, Prepared, SvSource, Triangle};
use super::{DrawState, RasterError, RenderTarget};
use crate::exec::{QuadBatch, QuadVec4};
use crate::texture::Format;
use rayon::prelude::*;

/// Tile edge in pixels (even, so quads never straddle tiles).
pub(crate) const TILE: u32 = 64;

/// A fragment input that changes from quad to quad.
#[derive(Clone, Copy)]
enum PerQuad {
    Linear {
        register: usize,
        mask: u8,
        coef: usize,
    },
    Perspective {
        register: usize,
        mask: u8,
        coef: usize,
    },
    FragCoord {
        register: usize,
        sv: bool,
    },
    SampleMask {
        register: usize,
    },
    Helper {
        register: usize,
    },
}

/// A fragment input that is constant over a triangle.
#[derive(Clone, Copy)]
enum PerTriangle {
    Flat {
        register: usize,
        mask: u8,
        coef: usize,
    },
    Face {
        register: usize,
        sv: bool,
    },
    PrimId {
        register: usize,
        sv: bool,
    },
}

/// The per-draw recipe for filling a quad's registers.
struct Inputs {
    per_quad: Vec<PerQuad>,
    per_triangle: Vec<PerTriangle>,
    sample_pos: Vec<usize>,
}

impl Inputs {
    fn new(plan: &Plan) -> Inputs {
        let mut per_quad = Vec::new();
        let mut per_triangle = Vec::new();
        let mut sample_pos = Vec::new();
        for input in &plan.fs_inputs {
            let register = input.register;
            match input.source {
                InputSource::Varying(slot) => {
                    let (mask, coef) = (input.mask, 2 + 4 * slot);
                    match plan.varyings[slot].interp {
                        Interp::Flat => per_triangle.push(PerTriangle::Flat {
                            register,
                            mask,
                            coef,
                        }),
                        Interp::Linear => per_quad.push(PerQuad::Linear {
                            register,
                            mask,
                            coef,
                        }),
                        Interp::Perspective => per_quad.push(PerQuad::Perspective {
                            register,
                            mask,
                            coef,
                        }),
                    }
                }
                InputSource::FragCoord => per_quad.push(PerQuad::FragCoord {
                    register,
                    sv: false,
                }),
                InputSource::Face => per_triangle.push(PerTriangle::Face {
                    register,
                    sv: false,
                }),
                InputSource::PrimId => per_triangle.push(PerTriangle::PrimId {
                    register,
                    sv: false,
                }),
            }
        }
        for &(register, source) in &plan.fs_sv {
            match source {
                SvSource::FragCoord => per_quad.push(PerQuad::FragCoord { register, sv: true }),
                SvSource::Face => per_triangle.push(PerTriangle::Face { register, sv: true }),
                SvSource::PrimId => per_triangle.push(PerTriangle::PrimId { register, sv: true }),
                SvSource::SampleMask => per_quad.push(PerQuad::SampleMask { register }),
                SvSource::HelperInvocation => per_quad.push(PerQuad::Helper { register }),
                SvSource::SamplePos => sample_pos.push(register),
                SvSource::Zero => {}
            }
        }
        Inputs {
            per_quad,
            per_triangle,
            sample_pos,
        }
    }
}

/// One tile's share of the target.
struct Job<'t> {
    x0: u32,
    y0: u32,
    rows: Vec<&'t mut [u8]>,
    bin: Vec<u32>,
}

/// Rasterizes and shades all prepared triangles; returns (quads shaded, pixels written).
pub(crate) fn shade(
    state: &DrawState<'_>,
    plan: &Plan,
    prepared: &Prepared,
    target: RenderTarget<'_>,
) -> Result<(u64, u64), RasterError> {
    if prepared.triangles.is_empty() {
        return Ok((0, 0));
    }
    let (width, height, format) = (target.width, target.height, target.format);
    let bpp = format.bytes_per_texel();
    let tiles_x = width.div_ceil(TILE) as usize;
    let tiles_y = height.div_ceil(TILE) as usize;
    let mut jobs: Vec<Job<'_>> = (0..tiles_x * tiles_y)
        .map(|i| Job {
            x0: (i % tiles_x) as u32 * TILE,
            y0: (i / tiles_x) as u32 * TILE,
            rows: Vec::new(),
            bin: Vec::new(),
        })
        .collect();
    for (index, tri) in prepared.triangles.iter().enumerate() {
        let [x0, y0, x1, y1] = tri.bbox.map(|v| (v / TILE) as usize);
        for ty in y0..=y1 {
            for job in &mut jobs[ty * tiles_x + x0..=ty * tiles_x + x1] {
                job.bin.push(index as u32);
            }
        }
    }
    let row_bytes = width as usize * bpp;
    for (y, row) in target.data.chunks_mut(row_bytes).enumerate() {
        let ty = y / TILE as usize;
        for (tx, part) in row.chunks_mut(TILE as usize * bpp).enumerate() {
            let job = &mut jobs[ty * tiles_x + tx];
            if !job.bin.is_empty() {
                job.rows.push(part);
            }
        }
    }
    jobs.retain(|j| !j.bin.is_empty());
    let inputs = Inputs::new(plan);
    let ctx = Context {
        state,
        plan,
        prepared,
        inputs: &inputs,
        format,
        bpp,
        width,
        height,
    };
    jobs.into_par_iter()
        .map(|mut job| ctx.tile(&mut job))
        .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))
}

struct Context<'a> {
    state: &'a DrawState<'a>,
    plan: &'a Plan,
    prepared: &'a Prepared,
    inputs: &'a Inputs,
    format: Format,
    bpp: usize,
    width: u32,
    height: u32,
}

/// [`crate::texture::float_to_ubyte`] (Mesa's rounding) of four lanes of float bits, in the low
/// byte of each lane, without branches (NaN and values <= 0 give 0, values >= 1 give 255), so it
/// compiles to SIMD.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // a plain indexed loop is what the vectorizer recognises
fn unorm8x4(v: [u32; 4]) -> [u32; 4] {
    let mut r = [0u32; 4];
    for l in 0..4 {
        let f = f32::from_bits(v[l]);
        // `maxps`/`minps` order: NaN compares false and takes the constant.
        let c = if f > 0.0 { f } else { 0.0 };
        let c = if c < 1.0 { c } else { 1.0 };
        // 32768 has an ulp of 2^-8, so the sum's low mantissa bits are round(c * 255).
        r[l] = (c * (255.0 / 256.0) + 32768.0).to_bits() & 0xFF;
    }
    r
}

/// `tgsi_exec`'s plane evaluation over a quad whose top-left pixel is `(x, y)`.
#[inline(always)]
fn plane(k: Coef, x: f32, y: f32) -> [f32; 4] {
    let a = k.a0 + k.dadx * x + k.dady * y;
    [a, a + k.dadx, a + k.dady, a + k.dadx + k.dady]
}

#[inline(always)]
fn bits(v: [f32; 4]) -> [u32; 4] {
    v.map(f32::to_bits)
}

/// Quads shaded per executor call (a tile row holds 32).
const BATCH: usize = 32;

/// Per-tile scratch registers: [`BATCH`] blocks of each file, one per quad of the batch.
struct Regs {
    inputs: Vec<QuadVec4>,
    system_values: Vec<QuadVec4>,
    outputs: Vec<QuadVec4>,
    /// Per batch slot: the quad's position and live lanes.
    pos: [(u32, u32); BATCH],
    live: [u8; BATCH],
    /// Quads in the batch.
    count: usize,
    killed: Vec<u8>,
}

impl Context<'_> {
    fn tile(&self, job: &mut Job<'_>) -> Result<(u64, u64), RasterError> {
        let plan = self.plan;
        let mut regs = Regs {
            inputs: vec![[[0; 4]; 4]; plan.fs_num_inputs * BATCH],
            system_values: vec![[[0; 4]; 4]; plan.fs_num_sv * BATCH],
            outputs: vec![[[0; 4]; 4]; plan.fs_num_outputs * BATCH],
            pos: [(0, 0); BATCH],
            live: [0; BATCH],
            count: 0,
            killed: vec![0; BATCH],
        };
        for slot in 0..BATCH {
            for &register in &self.inputs.sample_pos {
                regs.system_values[slot * plan.fs_num_sv + register] =
                    [[0.5f32.to_bits(); 4], [0.5f32.to_bits(); 4], [0; 4], [0; 4]];
            }
        }
        let tile_x1 = (job.x0 + TILE).min(self.width) - 1;
        let tile_y1 = (job.y0 + TILE).min(self.height) - 1;
        let mut counts = (0u64, 0u64);
        let bin = std::mem::take(&mut job.bin);
        for &index in &bin {
            let tri = &self.prepared.triangles[index as usize];
            let x0 = tri.bbox[0].max(job.x0) & !1;
            let y0 = tri.bbox[1].max(job.y0) & !1;
            let x1 = tri.bbox[2].min(tile_x1);
            let y1 = tri.bbox[3].min(tile_y1);
            if x0 > x1 || y0 > y1 {
                continue;
            }
            self.triangle_constants(tri, &mut regs);
            let edges = tri.edges;
            // When the corners of the quad-aligned rectangle are inside every edge, so is all
            // of it (the edge functions are linear): skip the per-quad tests.
            let (xr, yb) = ((x1 & !1) as i64 + 1, (y1 & !1) as i64 + 1);
            let inside = |x: i64, y: i64| edges.iter().all(|k| k.a * x + k.b * y + k.c > 0);
            let (xl, yt) = (x0 as i64, y0 as i64);
            let full = inside(xl, yt) && inside(xr, yt) && inside(xl, yb) && inside(xr, yb);
            // Likewise, when all four corners are outside one edge, no pixel of the rectangle
            // is covered (the common case of a big triangle's bounding box crossing a tile it
            // does not touch): skip it instead of testing every quad.
            let corners = [(xl, yt), (xr, yt), (xl, yb), (xr, yb)];
            if edges
                .iter()
                .any(|k| corners.iter().all(|&(x, y)| k.a * x + k.b * y + k.c <= 0))
            {
                continue;
            }
            let n_quads = ((x1 - x0) / 2 + 1) as usize;
            let mut masks = [0u8; TILE as usize / 2];
            for qy in (y0..=y1).step_by(2) {
                let row_mask = if qy + 1 > tile_y1 { 0b0011 } else { 0b1111 };
                if full {
                    masks[..n_quads].fill(row_mask);
                } else {
                    let mut e = edges.map(|k| k.a * x0 as i64 + k.b * qy as i64 + k.c);
                    for mask in &mut masks[..n_quads] {
                        let mut m = row_mask;
                        for (v, k) in e.iter_mut().zip(&edges) {
                            let e0 = *v;
                            m &= (e0 > 0) as u8
                                | (((e0 + k.a) > 0) as u8) << 1
                                | (((e0 + k.b) > 0) as u8) << 2
                                | (((e0 + k.a + k.b) > 0) as u8) << 3;
                            *v = e0 + 2 * k.a;
                        }
                        *mask = m;
                    }
                }
                if x0 + 2 * (n_quads as u32 - 1) + 1 > tile_x1 {
                    masks[n_quads - 1] &= 0b0101;
                }
                let mut first = regs.count;
                for (i, &mask) in masks[..n_quads].iter().enumerate() {
                    if mask == 0 {
                        continue;
                    }
                    regs.live[regs.count] = mask;
                    regs.pos[regs.count] = (x0 + 2 * i as u32, qy);
                    regs.count += 1;
                    if regs.count == BATCH {
                        self.fill(tri, qy, first, &mut regs);
                        self.flush(job, &mut regs, &mut counts)?;
                        first = 0;
                    }
                }
                self.fill(tri, qy, first, &mut regs);
            }
            // Triangles are shaded in order: the batch never spans two.
            self.flush(job, &mut regs, &mut counts)?;
        }
        Ok(counts)
    }

    /// Shades the batched quads and writes their pixels.
    fn flush(
        &self,
        job: &mut Job<'_>,
        regs: &mut Regs,
        counts: &mut (u64, u64),
    ) -> Result<(), RasterError> {
        let n = regs.count;
        if n == 0 {
            return Ok(());
        }
        let plan = self.plan;
        let mut batch = QuadBatch {
            count: n,
            inputs: &regs.inputs,
            inputs_stride: plan.fs_num_inputs,
            system_values: &regs.system_values,
            system_values_stride: plan.fs_num_sv,
            outputs: &mut regs.outputs,
            outputs_stride: plan.fs_num_outputs,
            live: &regs.live[..n],
            killed: &mut regs.killed,
        };
        let result = self
            .state
            .fragment_shader
            .shade_quads(&self.state.fragment_resources, &mut batch);
        // Quads before a failing one were shaded: they are written, as one quad at a time would.
        let done = match &result {
            Ok(()) => n,
            Err(e) => e.quad.min(n),
        };
        let colors = regs.outputs[plan.color_register..]
            .iter()
            .step_by(plan.fs_num_outputs)
            .take(done);
        if let Some(red) = self.rgba8_red_channel() {
            // The usual 8-bit targets: convert the whole batch first (straight SIMD code), then
            // store each quad's two rows.
            let mut packed = [[0u32; 4]; BATCH];
            for (px, color) in packed.iter_mut().zip(colors) {
                *px = pack_rgba8(color, red);
            }
            for (slot, px) in packed[..done].iter().enumerate() {
                let written = regs.live[slot] & !regs.killed[slot];
                let (qx, qy) = regs.pos[slot];
                write_rgba8(job, qx, qy, written, px);
                counts.1 += written.count_ones() as u64;
            }
        } else {
            for (slot, color) in colors.enumerate() {
                let written = regs.live[slot] & !regs.killed[slot];
                let (qx, qy) = regs.pos[slot];
                self.write(job, qx, qy, written, color);
                counts.1 += written.count_ones() as u64;
            }
        }
        counts.0 += done as u64;
        if let Err(e) = result {
            let (x, y) = regs.pos[..n].get(e.quad).copied().unwrap_or(regs.pos[0]);
            return Err(RasterError::FragmentShader {
                x,
                y,
                source: e.error,
            });
        }
        regs.count = 0;
        Ok(())
    }

    fn triangle_constants(&self, tri: &Triangle, regs: &mut Regs) {
        if self.inputs.per_triangle.is_empty() {
            return;
        }
        let (ni, ns) = (self.plan.fs_num_inputs, self.plan.fs_num_sv);
        let coefs = &self.prepared.coefs[tri.coef..];
        let face = if tri.front { 1.0f32 } else { -1.0 }.to_bits();
        for slot in 0..BATCH {
            let inputs = &mut regs.inputs[slot * ni..(slot + 1) * ni];
            let system_values = &mut regs.system_values[slot * ns..(slot + 1) * ns];
            for input in &self.inputs.per_triangle {
                match *input {
                    PerTriangle::Flat {
                        register,
                        mask,
                        coef,
                    } => {
                        for c in 0..4 {
                            if mask & (1 << c) != 0 {
                                inputs[register][c] = [coefs[coef + c].a0.to_bits(); 4];
                            }
                        }
                    }
                    PerTriangle::Face { register, sv } => {
                        let file = if sv {
                            &mut *system_values
                        } else {
                            &mut *inputs
                        };
                        file[register][0] = [face; 4];
                    }
                    PerTriangle::PrimId { register, sv } => {
                        let file = if sv {
                            &mut *system_values
                        } else {
                            &mut *inputs
                        };
                        file[register] = [[tri.prim_id; 4]; 4];
                    }
                }
            }
        }
    }

    /// Fills the per-quad inputs of batch slots `first..` (quads of row `qy`, positions and live
    /// lanes already pushed). Input by input over the slots, so each loop is one plane.
    fn fill(&self, tri: &Triangle, qy: u32, first: usize, regs: &mut Regs) {
        let plan = self.plan;
        let end = regs.count;
        if first >= end {
            return;
        }
        let (ni, ns) = (plan.fs_num_inputs, plan.fs_num_sv);
        let coefs = &self.prepared.coefs[tri.coef..];
        let y = qy as f32;
        let mut xs = [0f32; BATCH];
        for (x, &(qx, _)) in xs[first..end].iter_mut().zip(&regs.pos[first..end]) {
            *x = qx as f32;
        }
        let xs = &xs[first..end];
        let w = coefs[1];
        // A constant 1/w of exactly 1 (every full-screen pass): dividing by it returns every
        // plane value unchanged (no plane value is a signalling NaN), so the division is skipped.
        let unit_w = w.a0 == 1.0 && w.dadx == 0.0 && w.dady == 0.0;
        // The 1/w plane feeds the perspective divide and gl_FragCoord.w; full-screen passes
        // (1/w exactly 1, no FragCoord) need none of it.
        let needs_inv_w = self.inputs.per_quad.iter().any(|input| match input {
            PerQuad::Perspective { .. } => !unit_w,
            PerQuad::FragCoord { .. } => true,
            _ => false,
        });
        let mut inv_w = [[0f32; 4]; BATCH];
        if needs_inv_w {
            for (iw, &x) in inv_w[first..end].iter_mut().zip(xs) {
                *iw = plane(w, x, y);
            }
        }
        let inv_w = &inv_w[first..end];
        for input in &self.inputs.per_quad {
            match *input {
                PerQuad::Linear {
                    register,
                    mask,
                    coef,
                }
                | PerQuad::Perspective {
                    register,
                    mask,
                    coef,
                } => {
                    let divide = !unit_w && matches!(input, PerQuad::Perspective { .. });
                    for c in (0..4).filter(|c| mask & (1 << c) != 0) {
                        let k = coefs[coef + c];
                        if !divide {
                            for (slot, &x) in (first..end).zip(xs) {
                                regs.inputs[slot * ni + register][c] = bits(plane(k, x, y));
                            }
                        } else {
                            for ((slot, &x), iw) in (first..end).zip(xs).zip(inv_w) {
                                let a = plane(k, x, y);
                                regs.inputs[slot * ni + register][c] =
                                    bits(std::array::from_fn(|l| a[l] / iw[l]));
                            }
                        }
                    }
                }
                PerQuad::FragCoord { register, sv } => {
                    let fx = Coef {
                        a0: plan.frag_x0,
                        dadx: 1.0,
                        dady: 0.0,
                    };
                    let fy = Coef {
                        a0: plan.frag_y0,
                        dadx: 0.0,
                        dady: plan.frag_dy,
                    };
                    for ((slot, &x), iw) in (first..end).zip(xs).zip(inv_w) {
                        let value = [
                            bits(plane(fx, x, y)),
                            bits(plane(fy, x, y)),
                            bits(plane(coefs[0], x, y)),
                            bits(*iw),
                        ];
                        if sv {
                            regs.system_values[slot * ns + register] = value;
                        } else {
                            regs.inputs[slot * ni + register] = value;
                        }
                    }
                }
                PerQuad::SampleMask { register } => {
                    for slot in first..end {
                        let live = regs.live[slot];
                        regs.system_values[slot * ns + register][0] =
                            std::array::from_fn(|l| ((live >> l) & 1) as u32);
                    }
                }
                PerQuad::Helper { register } => {
                    for slot in first..end {
                        let live = regs.live[slot];
                        regs.system_values[slot * ns + register][0] =
                            std::array::from_fn(|l| if (live >> l) & 1 == 0 { !0 } else { 0 });
                    }
                }
            }
        }
    }

    /// For R8G8B8A8 and B8G8R8A8 targets, the shader output channel stored in byte 0.
    fn rgba8_red_channel(&self) -> Option<usize> {
        match self.format {
            Format::R8G8B8A8Unorm => Some(0),
            Format::B8G8R8A8Unorm => Some(2),
            _ => None,
        }
    }

    /// Writes the `lanes` of a quad to a target of any format through `Format::encode`.
    fn write(&self, job: &mut Job<'_>, qx: u32, qy: u32, lanes: u8, color: &QuadVec4) {
        for lane in 0..4 {
            if lanes & (1 << lane) == 0 {
                continue;
            }
            let x = (qx + (lane & 1) - job.x0) as usize;
            let y = (qy + (lane >> 1) - job.y0) as usize;
            let lane = lane as usize;
            let off = x * self.bpp;
            let out = &mut job.rows[y][off..off + self.bpp];
            self.format.encode(
                [
                    color[0][lane],
                    color[1][lane],
                    color[2][lane],
                    color[3][lane],
                ],
                out,
            );
        }
    }
}

/// A quad's four pixels as little-endian 8-bit RGBA (or BGRA when `red` is 2) words, with
/// `Format::encode`'s rounding.
#[inline(always)]
fn pack_rgba8(color: &QuadVec4, red: usize) -> [u32; 4] {
    let (cr, cg, cb, ca) = (
        unorm8x4(color[red]),
        unorm8x4(color[1]),
        unorm8x4(color[2 - red]),
        unorm8x4(color[3]),
    );
    std::array::from_fn(|l| cr[l] | cg[l] << 8 | cb[l] << 16 | ca[l] << 24)
}

/// Stores the `lanes` of a packed quad into a 4-byte-per-pixel target.
#[inline(always)]
fn write_rgba8(job: &mut Job<'_>, qx: u32, qy: u32, lanes: u8, px: &[u32; 4]) {
    let x = (qx - job.x0) as usize * 4;
    let y = (qy - job.y0) as usize;
    if lanes == 0xF {
        for (row, pair) in [(y, [px[0], px[1]]), (y + 1, [px[2], px[3]])] {
            let both = u64::from(pair[0]) | u64::from(pair[1]) << 32;
            job.rows[row][x..x + 8].copy_from_slice(&both.to_le_bytes());
        }
        return;
    }
    for (lane, word) in px.iter().enumerate() {
        if lanes & (1 << lane) != 0 {
            let off = x + (lane & 1) * 4;
            job.rows[y + (lane >> 1)][off..off + 4].copy_from_slice(&word.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::unorm8x4;
    use crate::texture::float_to_ubyte;

    #[test]
    fn unorm8x4_is_float_to_ubyte() {
        let special = [
            0.0f32,
            -0.0,
            1.0,
            0.5,
            1.0 / 510.0,
            3.0 / 510.0,
            f32::NAN,
            f32::INFINITY,
        ];
        for f in special
            .into_iter()
            .chain([f32::NEG_INFINITY, f32::MIN_POSITIVE, 2.0, -1.0])
        {
            assert_eq!(
                unorm8x4([f.to_bits(); 4])[0],
                float_to_ubyte(f) as u32,
                "{f}"
            );
        }
        // Every bit pattern in [0, 1] at a stride, plus a sample of the rest.
        for bits in (0..=1.0f32.to_bits()).step_by(61) {
            let f = f32::from_bits(bits);
            assert_eq!(unorm8x4([bits; 4])[0], float_to_ubyte(f) as u32, "{f}");
        }
        for bits in (0..=u32::MAX).step_by(4099) {
            let f = f32::from_bits(bits);
            assert_eq!(
                unorm8x4([bits; 4])[0],
                float_to_ubyte(f) as u32,
                "{bits:#x}"
            );
        }
        for k in 0..=510u32 {
            // Exact halves of 1/255 steps: round to nearest even.
            let f = k as f32 / 510.0;
            assert_eq!(
                unorm8x4([f.to_bits(); 4])[0],
                float_to_ubyte(f) as u32,
                "{k}/510"
            );
        }
    }
}
