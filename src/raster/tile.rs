//! Binning triangles to 64x64 tiles and shading the tiles in parallel. Each tile owns its part
//! of every row it covers, so tiles write the target without locking, and walks its triangles
//! in API order, so overlapping triangles resolve as the API orders them.

use super::setup::{Coef, Edge, InputSource, Interp, Plan, Prepared, SvSource, Triangle};
use super::{DrawState, RasterError, RenderTarget};
use crate::exec::{QuadBatch, QuadVec4};
use crate::texture::{f16x4, linear_float_to_srgb8, Format};
use rayon::prelude::*;
use std::sync::OnceLock;

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
    let coverage: u64 = prepared
        .triangles
        .iter()
        .map(|t| {
            let [x0, y0, x1, y1] = t.bbox;
            (u64::from(x1.saturating_sub(x0)) + 1) * (u64::from(y1.saturating_sub(y0)) + 1)
        })
        .sum();
    if coverage > super::MAX_DRAW_COVERAGE {
        return Err(RasterError::Coverage(format!(
            "the bounding boxes of the {} triangles (after clipping) cover {coverage} pixels, \
             more than the {} one draw may shade",
            prepared.triangles.len(),
            super::MAX_DRAW_COVERAGE
        )));
    }
    let (width, height, format) = (target.width, target.height, target.format);
    let bpp = format.bytes_per_texel();
    let tiles_x = width.div_ceil(TILE) as usize;
    let tiles_y = height.div_ceil(TILE) as usize;
    let mut jobs: Vec<Job<'_>> = (0..tiles_x * tiles_y)
        .map(|i| Job {
            x0: (i % tiles_x) as u32 * TILE,
            y0: (i / tiles_x) as u32 * TILE,
            // One slice per pixel row of the tile: no regrowth while the rows are dealt out.
            rows: Vec::with_capacity(TILE as usize),
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
    let rows = target.data.chunks_mut(row_bytes);
    let rows: Box<dyn Iterator<Item = &mut [u8]>> = match target.bottom_up {
        true => Box::new(rows.rev()),
        false => Box::new(rows),
    };
    for (y, row) in rows.enumerate() {
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
        texels: Texels::new(format),
        bpp,
        width,
        height,
    };
    ctx.state
        .fragment_shader
        .prepare(&ctx.state.fragment_resources);
    // The batch registers are made once per rayon job, not per tile: a batch is several KB.
    jobs.into_par_iter()
        .map_init(
            || ctx.batch_registers(),
            |regs, mut job| ctx.tile(&mut job, regs),
        )
        .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))
}

/// How shaded colours become texels of the target. The usual formats of draws and filter-chain
/// passes get their own arm (no per-pixel format dispatch); the rest go through `Format::encode`.
#[derive(Clone, Copy)]
enum Texels {
    /// R8G8B8A8 or B8G8R8A8 UNORM; `red` is the shader channel stored in byte 0.
    Rgba8Unorm {
        red: usize,
    },
    Rgba8Srgb,
    Rgba32Float,
    Rgba16Float,
    Other(Format),
}

impl Texels {
    fn new(format: Format) -> Texels {
        match format {
            Format::R8G8B8A8Unorm => Texels::Rgba8Unorm { red: 0 },
            Format::B8G8R8A8Unorm => Texels::Rgba8Unorm { red: 2 },
            Format::R8G8B8A8Srgb => Texels::Rgba8Srgb,
            Format::R32G32B32A32Sfloat => Texels::Rgba32Float,
            Format::R16G16B16A16Sfloat => Texels::Rgba16Float,
            other => Texels::Other(other),
        }
    }
}

struct Context<'a> {
    state: &'a DrawState<'a>,
    plan: &'a Plan,
    prepared: &'a Prepared,
    inputs: &'a Inputs,
    texels: Texels,
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
        // Scaling before clamping gives the same sum (rounding is monotonic and 255/256 is
        // exact) and lets LLVM emit plain `maxps`/`minps`: with the clamp first it moved the
        // multiply-add into both arms of a select (checked over all 2^32 inputs).
        let s = f32::from_bits(v[l]) * (255.0 / 256.0);
        // `maxps`/`minps` order: NaN compares false and takes the constant.
        let s = if s > 0.0 { s } else { 0.0 };
        let s = if s < 255.0 / 256.0 { s } else { 255.0 / 256.0 };
        // 32768 has an ulp of 2^-8, so the sum's low mantissa bits are round(clamp(f) * 255).
        r[l] = (s + 32768.0).to_bits() & 0xFF;
    }
    r
}

/// The columns `x0 + t` of row `y` inside all three edges (`a * x + b * y + c > 0`), as an
/// inclusive range of `t` clamped to `0..=TILE` (empty when the start passes the end). Exact
/// integer division solves each edge's inequality, so the span holds exactly the pixels the
/// per-pixel test accepts, and the quads of a row are then two compares per pixel row.
fn row_span(edges: &[Edge; 3], x0: i64, y: i64) -> (i32, i32) {
    let (mut lo, mut hi) = (0i64, i64::from(TILE));
    for k in edges {
        // The edge at column x0 + t is a * t + r.
        let r = k.a * x0 + k.b * y + k.c;
        if k.a > 0 {
            // a * t > -r: t > -r / a.
            lo = lo.max((-r).div_euclid(k.a) + 1);
        } else if k.a < 0 {
            // |a| * t < r: t < r / |a|, i.e. t <= ceil(r / |a|) - 1.
            hi = hi.min(-(-r).div_euclid(-k.a) - 1);
        } else if r <= 0 {
            return (1, 0);
        }
    }
    (lo.min(i64::from(TILE) + 1) as i32, hi.max(-1) as i32)
}

/// `tgsi_exec`'s plane evaluation over a quad whose top-left pixel is `(x, y)`.
#[inline(always)]
fn plane(k: Coef, x: f32, y: f32) -> [f32; 4] {
    plane_row(k, x, k.dady * y)
}

/// [`plane`] with the row's `dady * y` already multiplied (the same operations in the same order).
#[inline(always)]
fn plane_row(k: Coef, x: f32, ky: f32) -> [f32; 4] {
    let a = k.a0 + k.dadx * x + ky;
    [a, a + k.dadx, a + k.dady, a + k.dadx + k.dady]
}

#[inline(always)]
fn bits(v: [f32; 4]) -> [u32; 4] {
    v.map(f32::to_bits)
}

/// Quads shaded per executor call: four rows of a tile, so that the work of a call (MXCSR
/// switches, the kernel's constant-buffer and texture-site tables) is paid once per 512 pixels
/// (one row per call measured 10-15% slower on full-screen draws).
const BATCH: usize = 128;

/// Quads in a row of a tile.
const ROW_QUADS: usize = TILE as usize / 2;

/// Batch registers, reused from tile to tile: [`BATCH`] blocks of each file, one per quad of
/// the batch, and the plane inputs of [`Context::fill`].
struct Regs {
    inputs: Vec<QuadVec4>,
    system_values: Vec<QuadVec4>,
    outputs: Vec<QuadVec4>,
    /// Per batch slot: the quad's position and live lanes.
    pos: [(u32, u32); BATCH],
    /// [`ROW_QUADS`] longer than a batch, so that a covered row is pushed with one fixed-size
    /// fill (the slots past `count` hold leftovers nobody reads).
    live: [u8; BATCH + ROW_QUADS],
    /// Quads in the batch.
    count: usize,
    killed: Vec<u8>,
    /// The batch slots' quad x coordinates, written with their positions (converted through
    /// i32: coordinates are below 2^21, and SSE2 has no u32 -> f32 conversion). Read back from
    /// `Regs::pos` they cost a failed store forward per vector load.
    xs: [f32; BATCH],
    /// The batch slots' 1/w plane values.
    inv_w: [[f32; 4]; BATCH],
}

impl Context<'_> {
    /// Empty batch registers for [`Context::tile`], reusable from tile to tile.
    fn batch_registers(&self) -> Regs {
        let plan = self.plan;
        let mut regs = Regs {
            inputs: vec![[[0; 4]; 4]; plan.fs_num_inputs * BATCH],
            system_values: vec![[[0; 4]; 4]; plan.fs_num_sv * BATCH],
            outputs: vec![[[0; 4]; 4]; plan.fs_num_outputs * BATCH],
            pos: [(0, 0); BATCH],
            live: [0; BATCH + ROW_QUADS],
            count: 0,
            killed: vec![0; BATCH],
            xs: [0.0; BATCH],
            inv_w: [[0.0; 4]; BATCH],
        };
        for slot in 0..BATCH {
            for &register in &self.inputs.sample_pos {
                regs.system_values[slot * plan.fs_num_sv + register] =
                    [[0.5f32.to_bits(); 4], [0.5f32.to_bits(); 4], [0; 4], [0; 4]];
            }
        }
        regs
    }

    fn tile(&self, job: &mut Job<'_>, regs: &mut Regs) -> Result<(u64, u64), RasterError> {
        // A tile that failed leaves its batch behind (the draw fails with it).
        regs.count = 0;
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
            self.triangle_constants(tri, regs);
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
            let mut masks = [0u8; ROW_QUADS];
            for qy in (y0..=y1).step_by(2) {
                let row_mask = if qy + 1 > tile_y1 { 0b0011 } else { 0b1111 };
                if full {
                    // Only the last entry is read (the others are `row_mask`, see below).
                    masks[n_quads - 1] = row_mask;
                } else {
                    let (x, y) = (i64::from(x0), i64::from(qy));
                    let (l0, h0) = row_span(&edges, x, y);
                    let (l1, h1) = row_span(&edges, x, y + 1);
                    let inside = |l: i32, h: i32, t: i32| u8::from(l <= t && t <= h);
                    for (t, mask) in (0..).step_by(2).zip(&mut masks[..n_quads]) {
                        *mask = row_mask
                            & (inside(l0, h0, t)
                                | inside(l0, h0, t + 1) << 1
                                | inside(l1, h1, t) << 2
                                | inside(l1, h1, t + 1) << 3);
                    }
                }
                if x0 + 2 * (n_quads as u32 - 1) + 1 > tile_x1 {
                    masks[n_quads - 1] &= 0b0101;
                }
                let mut next = 0;
                while next < n_quads {
                    let first = regs.count;
                    let take = (BATCH - first).min(n_quads - next);
                    let mut count = first;
                    if full {
                        // Every quad is live (row masks are never empty): no compaction, so
                        // no chain of dependent positions either.
                        // One fixed-size fill (see `Regs::live`), then the row's last quad,
                        // which may be a half quad.
                        regs.live[first..first + ROW_QUADS].fill(row_mask);
                        if next + take == n_quads {
                            regs.live[first + take - 1] = masks[n_quads - 1];
                        }
                        let slots = regs.pos[first..first + take]
                            .iter_mut()
                            .zip(&mut regs.xs[first..first + take]);
                        for (k, (pos, x)) in slots.enumerate() {
                            let qx = x0 + 2 * (next + k) as u32;
                            *pos = (qx, qy);
                            *x = qx as i32 as f32;
                        }
                        count += take;
                    } else {
                        // Branch-free: every quad is written at `count`, which only moves past
                        // live ones (and stays below BATCH, as at most `take` quads are pushed).
                        for (i, &mask) in (next..).zip(&masks[next..next + take]) {
                            let qx = x0 + 2 * i as u32;
                            regs.live[count] = mask;
                            regs.pos[count] = (qx, qy);
                            regs.xs[count] = qx as i32 as f32;
                            count += usize::from(mask != 0);
                        }
                    }
                    regs.count = count;
                    next += take;
                    self.fill(tri, qy, first, regs);
                    if count == BATCH {
                        self.flush(job, regs, &mut counts)?;
                    }
                }
            }
            // Triangles are shaded in order: the batch never spans two.
            self.flush(job, regs, &mut counts)?;
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
        let colors = Colors {
            outputs: &regs.outputs,
            stride: plan.fs_num_outputs,
            register: plan.color_register,
        };
        let shaded = &*regs;
        counts.1 += match self.texels {
            Texels::Rgba8Unorm { red } => store(job, shaded, done, colors, Rgba8Unorm { red }),
            Texels::Rgba8Srgb => store(job, shaded, done, colors, Rgba8Srgb(srgb8_table())),
            Texels::Rgba32Float => store(job, shaded, done, colors, Rgba32Float),
            Texels::Rgba16Float => store(job, shaded, done, colors, Rgba16Float),
            Texels::Other(format) => match self.bpp {
                1 => store(job, shaded, done, colors, Encode::<1>(format)),
                2 => store(job, shaded, done, colors, Encode::<2>(format)),
                4 => store(job, shaded, done, colors, Encode::<4>(format)),
                8 => store(job, shaded, done, colors, Encode::<8>(format)),
                16 => store(job, shaded, done, colors, Encode::<16>(format)),
                n => unreachable!("Format::bytes_per_texel gave {n}"),
            },
        };
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
        let xs = &regs.xs[first..end];
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
        let inv_w = &mut regs.inv_w;
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
                        let quads = regs.inputs[first * ni..end * ni].chunks_exact_mut(ni);
                        // `dady * y` is the same product for the whole row.
                        let ky = k.dady * y;
                        if !divide {
                            for (quad, &x) in quads.zip(xs) {
                                quad[register][c] = bits(plane_row(k, x, ky));
                            }
                        } else {
                            for ((quad, &x), iw) in quads.zip(xs).zip(inv_w) {
                                let a = plane_row(k, x, ky);
                                quad[register][c] = bits(std::array::from_fn(|l| a[l] / iw[l]));
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

/// The colour output of each batch slot.
#[derive(Clone, Copy)]
struct Colors<'a> {
    outputs: &'a [QuadVec4],
    stride: usize,
    register: usize,
}

impl Colors<'_> {
    #[inline(always)]
    fn get(&self, slot: usize) -> &QuadVec4 {
        &self.outputs[slot * self.stride + self.register]
    }
}

/// Converts a quad's shaded colour to its four `N`-byte texels, as `Format::encode` would.
trait QuadTexels<const N: usize>: Copy {
    fn texels(self, color: &QuadVec4) -> [[u8; N]; 4];
}

/// R8G8B8A8 or B8G8R8A8 UNORM; `red` is the shader channel stored in byte 0.
#[derive(Clone, Copy)]
struct Rgba8Unorm {
    red: usize,
}

impl QuadTexels<4> for Rgba8Unorm {
    #[inline(always)]
    fn texels(self, color: &QuadVec4) -> [[u8; 4]; 4] {
        pack_rgba8(color, self.red).map(u32::to_le_bytes)
    }
}

/// R8G8B8A8 sRGB (alpha stays linear), through [`srgb8_table`].
#[derive(Clone, Copy)]
struct Rgba8Srgb(&'static [u8; SRGB8_ENTRIES]);

impl QuadTexels<4> for Rgba8Srgb {
    #[inline(always)]
    fn texels(self, color: &QuadVec4) -> [[u8; 4]; 4] {
        let (r, g, b) = (
            srgb8_index(color[0]),
            srgb8_index(color[1]),
            srgb8_index(color[2]),
        );
        let alpha = unorm8x4(color[3]);
        std::array::from_fn(|l| [self.0[r[l]], self.0[g[l]], self.0[b[l]], alpha[l] as u8])
    }
}

/// Bits of the smallest input `linear_float_to_srgb8` distinguishes (2^-13; smaller and NaN
/// clamp to it).
const SRGB8_MIN: u32 = (127 - 13) << 23;
/// Bits of its largest (the float just below 1.0; larger clamp to it).
const SRGB8_MAX: u32 = 0x3f7f_ffff;
/// Entries of [`srgb8_table`]: the clamped range in steps of 2^12 bits.
const SRGB8_ENTRIES: usize = ((SRGB8_MAX - SRGB8_MIN) >> 12) as usize + 1;

/// `linear_float_to_srgb8` of every input, indexed by [`srgb8_index`]. Mesa's function reads only
/// bits 12 and up of the clamped input (its table index and its interpolation factor), so one
/// entry per 2^12 bits is exact; built from the function itself once per process (26 KiB).
fn srgb8_table() -> &'static [u8; SRGB8_ENTRIES] {
    static TABLE: OnceLock<Box<[u8; SRGB8_ENTRIES]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Box::new([0u8; SRGB8_ENTRIES]);
        for (i, entry) in table.iter_mut().enumerate() {
            *entry = linear_float_to_srgb8(f32::from_bits(SRGB8_MIN + ((i as u32) << 12)));
        }
        table
    })
}

/// The [`srgb8_table`] indices of four lanes of float bits: the clamp is branch-free float code
/// (`maxps`/`minps`; NaN takes the minimum, as in Mesa), so only the loads are per lane.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // a plain indexed loop is what the vectorizer recognises
fn srgb8_index(v: [u32; 4]) -> [usize; 4] {
    let (min, max) = (f32::from_bits(SRGB8_MIN), f32::from_bits(SRGB8_MAX));
    let mut r = [0usize; 4];
    for l in 0..4 {
        let f = f32::from_bits(v[l]);
        let c = if f > min { f } else { min };
        let c = if c < max { c } else { max };
        r[l] = ((c.to_bits() - SRGB8_MIN) >> 12) as usize;
    }
    r
}

/// R32G32B32A32 float: the shader's bits.
#[derive(Clone, Copy)]
struct Rgba32Float;

impl QuadTexels<16> for Rgba32Float {
    #[inline(always)]
    fn texels(self, color: &QuadVec4) -> [[u8; 16]; 4] {
        std::array::from_fn(|l| {
            let mut texel = [0u8; 16];
            for (dst, channel) in texel.chunks_exact_mut(4).zip(color) {
                dst.copy_from_slice(&channel[l].to_le_bytes());
            }
            texel
        })
    }
}

/// R16G16B16A16 float.
#[derive(Clone, Copy)]
struct Rgba16Float;

impl QuadTexels<8> for Rgba16Float {
    #[inline(always)]
    fn texels(self, color: &QuadVec4) -> [[u8; 8]; 4] {
        let [r, g, b, a] = [
            f16x4(color[0]),
            f16x4(color[1]),
            f16x4(color[2]),
            f16x4(color[3]),
        ];
        std::array::from_fn(|l| {
            let low = r[l] | g[l] << 16;
            let high = b[l] | a[l] << 16;
            (u64::from(low) | u64::from(high) << 32).to_le_bytes()
        })
    }
}

/// Any other format, texel by texel through `Format::encode`.
#[derive(Clone, Copy)]
struct Encode<const N: usize>(Format);

impl<const N: usize> QuadTexels<N> for Encode<N> {
    #[inline(always)]
    fn texels(self, color: &QuadVec4) -> [[u8; N]; 4] {
        std::array::from_fn(|l| {
            let mut texel = [0u8; N];
            let bits = [color[0][l], color[1][l], color[2][l], color[3][l]];
            self.0.encode(bits, &mut texel);
            texel
        })
    }
}

/// Set bits of a 4-bit lane mask (baseline x86-64 has no `popcnt`).
const LANES: [u64; 16] = [0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4];

/// Stores the written lanes of batch slots `..done` and returns the
/// number of pixels written. Slots come in runs of adjacent quads of one quad row (a whole tile
/// row when a triangle covers it), and each run is stored through one slice per pixel row, so
/// the per-quad work is the conversion and two fixed-size copies.
#[inline(always)]
fn store<const N: usize>(
    job: &mut Job<'_>,
    regs: &Regs,
    done: usize,
    colors: Colors<'_>,
    texels: impl QuadTexels<N>,
) -> u64 {
    // Converting the whole batch first keeps the conversion a straight loop LLVM vectorises.
    let mut converted = [[[0u8; N]; 4]; BATCH];
    for (px, slot) in converted[..done].iter_mut().zip(0..) {
        *px = texels.texels(colors.get(slot));
    }
    let mut written = [0u8; BATCH];
    for ((w, &live), &killed) in written[..done].iter_mut().zip(&regs.live).zip(&regs.killed) {
        *w = live & !killed;
    }
    let mut pixels = 0;
    // Every row of a tile's share has the same width.
    let width = job.rows[0].len() / N;
    let mut start = 0;
    while start < done {
        let (qx, qy) = regs.pos[start];
        let x = (qx - job.x0) as usize;
        let y = (qy - job.y0) as usize;
        if x + 2 > width || y + 2 > job.rows.len() {
            // A quad on an odd-sized target's last column or row: only its lanes inside the
            // target can be live, and they are stored one by one.
            pixels += LANES[usize::from(written[start])];
            for (lane, texel) in converted[start].iter().enumerate() {
                if written[start] & (1 << lane) != 0 {
                    let off = (x + (lane & 1)) * N;
                    job.rows[y + (lane >> 1)][off..off + N].copy_from_slice(texel);
                }
            }
            start += 1;
            continue;
        }
        // The run stops at the end of the row's share (where a half quad may follow).
        let limit = done.min(start + (width - x) / 2);
        let mut end = start + 1;
        while end < limit && regs.pos[end] == (qx + 2 * (end - start) as u32, qy) {
            end += 1;
        }
        let bytes = (x * N)..(x + 2 * (end - start)) * N;
        let (upper, lower) = job.rows.split_at_mut(y + 1);
        let top = upper[y][bytes.clone()].chunks_exact_mut(2 * N);
        let bottom = lower[0][bytes].chunks_exact_mut(2 * N);
        let quads = top.zip(bottom).zip(&converted[start..end]);
        if written[start..end].iter().all(|&w| w == 0xF) {
            // The whole run is covered (the usual case): no per-quad decisions.
            pixels += 4 * (end - start) as u64;
            for ((top, bottom), px) in quads {
                top[..N].copy_from_slice(&px[0]);
                top[N..].copy_from_slice(&px[1]);
                bottom[..N].copy_from_slice(&px[2]);
                bottom[N..].copy_from_slice(&px[3]);
            }
        } else {
            for (((top, bottom), px), &written) in quads.zip(&written[start..end]) {
                pixels += LANES[usize::from(written)];
                for (lane, texel) in px.iter().enumerate() {
                    if written & (1 << lane) != 0 {
                        let row = if lane < 2 { &mut *top } else { &mut *bottom };
                        let off = (lane & 1) * N;
                        row[off..off + N].copy_from_slice(texel);
                    }
                }
            }
        }
        start = end;
    }
    pixels
}

#[cfg(test)]
mod tests {
    use super::{
        row_span, srgb8_table, unorm8x4, Edge, Encode, QuadTexels, Rgba16Float, Rgba32Float,
        Rgba8Srgb, Rgba8Unorm, TILE,
    };
    use crate::exec::QuadVec4;
    use crate::texture::{float_to_ubyte, Format};

    /// Float bits that exercise every branch of the format conversions: signed zeros, the
    /// clamp limits, half-float denormals and overflow, infinities, NaNs.
    const SPECIAL: [u32; 24] = [
        0x0000_0000,
        0x8000_0000,
        0x3f80_0000,
        0x3f7f_ffff,
        0x3f00_0000,
        0x3900_0000,
        0x38ff_ffff,
        0x3880_0000,
        0x387f_ffff,
        0x3380_0000,
        0x337f_ffff,
        0x0000_0001,
        0x4780_0000,
        0x477f_efff,
        0x477f_f000,
        0x7f7f_ffff,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0001,
        0x7f80_0001,
        0xbf80_0000,
        0x4000_0000,
        0xb880_0001,
    ];

    /// Checks a quad converter against `Format::encode` over special values and a pseudo-random
    /// spread of bit patterns (most of them in [-2, 2], where colours live).
    fn check<const N: usize>(format: Format, texels: impl QuadTexels<N>) {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let r = (state >> 16) as u32;
            if r & 3 == 0 {
                r
            } else {
                (f32::from_bits(0x3f80_0000 | (r >> 9)) * 4.0 - 6.0).to_bits()
            }
        };
        let mut values: Vec<u32> = SPECIAL.to_vec();
        values.extend((0..40_000).map(|_| next()));
        for chunk in values.chunks_exact(16) {
            let color: QuadVec4 =
                std::array::from_fn(|c| std::array::from_fn(|l| chunk[c * 4 + l]));
            let got = texels.texels(&color);
            for (lane, texel) in got.iter().enumerate() {
                let mut want = [0u8; N];
                let bits = std::array::from_fn(|c| color[c][lane]);
                format.encode(bits, &mut want);
                assert_eq!(*texel, want, "{format:?} {bits:#x?}");
            }
        }
    }

    #[test]
    fn row_span_is_the_edge_test() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |range: i64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % (2 * range as u64 + 1)) as i64 - range
        };
        for round in 0..20_000 {
            // Small coefficients hit exact divisions and zero slopes; large ones are 8-bit
            // sub-pixel edges of big triangles.
            let scale = if round % 2 == 0 { 4 } else { 1 << 24 };
            let edges: [Edge; 3] = std::array::from_fn(|_| Edge {
                a: next(scale),
                b: next(scale),
                c: next(scale * 64),
            });
            let (x0, y) = (next(100), next(100));
            let (lo, hi) = row_span(&edges, x0, y);
            for t in 0..i64::from(TILE) {
                let inside = edges.iter().all(|k| k.a * (x0 + t) + k.b * y + k.c > 0);
                let span = i64::from(lo) <= t && t <= i64::from(hi);
                assert_eq!(span, inside, "{edges:?} x0 {x0} y {y} t {t}");
            }
        }
    }

    /// Two triangles with a killed band, on odd-sized targets: the RGBA32F draw's pixels sit
    /// where their fragment x says and are as many as the pixels written, and every other
    /// format's stores (whole runs, partial quads, the odd last column and row) leave exactly
    /// those pixels, each the `Format::encode` of the float draw's bits.
    #[test]
    fn stores_of_every_format_match_the_float_draw() {
        use crate::interp::Interpreter;
        use crate::ir::text::parse_program;
        use crate::raster::{draw_triangles, ClipConvention, DrawState, Vertices};
        use crate::texture::Texture;
        let vs = parse_program(
            "VERT\nDCL IN[0]\nDCL IN[1]\nDCL OUT[0], POSITION\nDCL OUT[1], GENERIC[0]\n\
             0: MOV OUT[0], IN[0]\n1: MOV OUT[1], IN[1]\n2: END\n",
        )
        .unwrap();
        // The pixel centre's x (to check where each pixel lands), then values across UNORM
        // clamps, half-float overflow and denormals; a killed band in u.
        let fs = parse_program(
            "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL IN[1], POSITION, LINEAR\n\
             DCL OUT[0], COLOR\nDCL TEMP[0]\n\
             IMM[0] FLT32 {3.0, -1.0, 70000.0, 0.00001}\n\
             IMM[1] FLT32 {-0.45, 0.55, -1.0, 0.0}\n\
             0: MOV OUT[0].x, IN[1].xxxx\n\
             1: MUL OUT[0].y, IN[0].yyyy, IMM[0].zzzz\n\
             2: MUL OUT[0].z, IN[0].xxxx, IMM[0].wwww\n\
             3: MAD OUT[0].w, IN[0].xxxx, IMM[0].xxxx, IMM[0].yyyy\n\
             4: ADD TEMP[0].x, IN[0].xxxx, IMM[1].xxxx\n\
             5: ADD TEMP[0].y, IMM[1].yyyy, -IN[0].xxxx\n\
             6: MUL TEMP[0].x, TEMP[0].xxxx, TEMP[0].yyyy\n\
             7: MUL TEMP[0].x, TEMP[0].xxxx, IMM[1].zzzz\n\
             8: KILL_IF TEMP[0].xxxx\n\
             9: END\n",
        )
        .unwrap();
        let (vs, fs) = (
            Interpreter::new(&vs).unwrap(),
            Interpreter::new(&fs).unwrap(),
        );
        let state = DrawState::new(&vs, &fs, ClipConvention::OpenGl);
        let corner = |x: f32, y: f32, w: f32, u: f32, v: f32| {
            [[x * w, y * w, 0.0, w], [u, v, 0.0, 1.0]].map(|c| c.map(f32::to_bits))
        };
        let data: Vec<[u32; 4]> = [
            corner(-0.93, -1.2, 1.0, -0.2, 0.0),
            corner(1.3, -0.8, 2.0, 1.1, 0.3),
            corner(-0.6, 1.4, 1.5, 0.4, 1.2),
            // Apart from the first (writes are counted per write), over the top-right corner.
            corner(0.5, 1.3, 1.0, 0.3, 1.0),
            corner(1.3, 1.3, 1.2, 0.9, 0.6),
            corner(1.3, 0.3, 1.0, 0.5, 0.05),
        ]
        .concat();
        let vertices = Vertices::new(&data, 2);
        let formats = [
            Format::R8G8B8A8Unorm,
            Format::B8G8R8A8Unorm,
            Format::R8G8B8A8Srgb,
            Format::R8G8B8A8SrgbLlvmpipe,
            Format::R8G8B8A8UnormNvidia,
            Format::R8G8B8A8SrgbNvidia,
            Format::R16G16B16A16Sfloat,
            Format::R8Unorm,
            Format::R16G16Sfloat,
            Format::R32G32Sfloat,
        ];
        for (w, h) in [(67, 45), (130, 67), (64, 64), (1, 1), (3, 130)] {
            let untouched = 0xA5u8;
            let draw = |format: Format| {
                let mut target = Texture::new(format, w, h, 1).unwrap();
                target.level_data_mut(0).fill(untouched);
                let stats = draw_triangles(&state, vertices, &mut target).unwrap();
                (target, stats.pixels_written)
            };
            let (mut float, written) = draw(Format::R32G32B32A32Sfloat);
            let float = float.level_data_mut(0).to_vec();
            let mut drawn = 0;
            for (i, texel) in float.chunks(16).enumerate() {
                if texel.iter().any(|&b| b != untouched) {
                    drawn += 1;
                    let x = f32::from_le_bytes(texel[..4].try_into().unwrap());
                    assert_eq!(x, (i % w as usize) as f32 + 0.5, "{w}x{h} pixel {i}");
                }
            }
            assert_eq!(drawn, written, "{w}x{h}");
            assert!(w * h < 9 || drawn < u64::from(w * h), "{w}x{h}: {drawn}");
            for format in formats {
                let (mut target, _) = draw(format);
                let bpp = format.bytes_per_texel();
                let data = target.level_data_mut(0);
                for (i, (texel, bits)) in data.chunks(bpp).zip(float.chunks(16)).enumerate() {
                    let mut want = vec![untouched; bpp];
                    if bits.iter().any(|&b| b != untouched) {
                        let bits = std::array::from_fn(|c| {
                            u32::from_le_bytes(bits[c * 4..c * 4 + 4].try_into().unwrap())
                        });
                        format.encode(bits, &mut want);
                    }
                    assert_eq!(texel, &want[..], "{format:?} {w}x{h} pixel {i}");
                }
            }
        }
    }

    #[test]
    fn quad_texels_are_format_encode() {
        check(Format::R8G8B8A8Unorm, Rgba8Unorm { red: 0 });
        check(Format::B8G8R8A8Unorm, Rgba8Unorm { red: 2 });
        check(Format::R8G8B8A8Srgb, Rgba8Srgb(srgb8_table()));
        check(Format::R32G32B32A32Sfloat, Rgba32Float);
        check(Format::R16G16B16A16Sfloat, Rgba16Float);
        check(
            Format::R8G8B8A8SrgbLlvmpipe,
            Encode::<4>(Format::R8G8B8A8SrgbLlvmpipe),
        );
        check(Format::R16G16Sfloat, Encode::<4>(Format::R16G16Sfloat));
    }

    #[test]
    fn srgb8_table_is_linear_float_to_srgb8() {
        // Every input the table distinguishes, at the low and high end of its 2^12-bit step.
        let table = srgb8_table();
        for bits in (0..=u32::MAX).step_by(4096).flat_map(|b| [b, b | 0xfff]) {
            let got = Rgba8Srgb(table).texels(&[[bits; 4], [0; 4], [0; 4], [0; 4]])[0][0];
            let want = crate::texture::linear_float_to_srgb8(f32::from_bits(bits));
            assert_eq!(got, want, "{bits:#x}");
        }
    }

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
