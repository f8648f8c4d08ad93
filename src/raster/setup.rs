//! The shader interface plan of a draw (which vertex output feeds which fragment input), the
//! viewport transform and triangle setup: fixed-point edge functions for coverage and, as
//! softpipe's `sp_setup.c` computes them, `f32` attribute planes for interpolation.

use glam::{Vec3, Vec4};

use super::clip::{clip_mask, position, Clipper};
use super::{
    ClipConvention, CullMode, DrawState, DrawStats, FragCoordOrigin, FrontFace, PixelCenter,
    ProvokingVertex, RasterError, Viewport, MAX_VIEWPORT_COORD,
};
use crate::exec::IoSlot;
use crate::ir::{InterpolateMode, SemanticName};

/// How a varying is interpolated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Interp {
    /// The provoking vertex's bits.
    Flat,
    /// Screen-space linear.
    Linear,
    /// Perspective-correct.
    Perspective,
}

/// One interpolated value: a fragment input fed by a vertex output (or by nothing: zero).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Varying {
    /// The vertex shader's `OUT` register, if it writes the semantic.
    pub vs_output: Option<usize>,
    /// Interpolation mode.
    pub interp: Interp,
}

/// Where a fragment `IN` register's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputSource {
    /// Interpolated varying slot.
    Varying(usize),
    /// The fragment coordinate.
    FragCoord,
    /// ±1.0 in x.
    Face,
    /// The triangle index.
    PrimId,
}

/// One fragment `IN` register to fill per quad.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FsInput {
    pub register: usize,
    pub mask: u8,
    pub source: InputSource,
}

/// Where a fragment `SV` register's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SvSource {
    FragCoord,
    Face,
    SampleMask,
    SamplePos,
    HelperInvocation,
    PrimId,
    Zero,
}

/// Where a vertex `SV` register's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VsSv {
    VertexId,
    Zero,
}

/// The resolved interface of a draw.
pub(crate) struct Plan {
    pub vs_position: usize,
    pub vs_num_inputs: usize,
    pub vs_num_outputs: usize,
    pub vs_num_sv: usize,
    pub vs_sv: Vec<(usize, VsSv)>,
    pub varyings: Vec<Varying>,
    pub fs_inputs: Vec<FsInput>,
    pub fs_sv: Vec<(usize, SvSource)>,
    pub fs_num_inputs: usize,
    pub fs_num_outputs: usize,
    pub fs_num_sv: usize,
    pub color_register: usize,
    /// Fragment coordinate: x = `frag_x0 + x`; y = `frag_y0 + frag_dy * y` (softpipe's
    /// `setup_fragcoord_coeff`).
    pub frag_x0: f32,
    pub frag_y0: f32,
    pub frag_dy: f32,
}

impl Plan {
    /// Matches fragment inputs to vertex outputs by (semantic name, index).
    pub(crate) fn new(state: &DrawState<'_>, target_height: u32) -> Result<Plan, RasterError> {
        let vs = state.vertex_shader.signature();
        let fs = state.fragment_shader.signature();
        let vs_position = vs
            .output(SemanticName::Position, 0)
            .ok_or_else(|| {
                RasterError::Interface("the vertex shader has no POSITION output".into())
            })?
            .register as usize;
        let color = state.color_output;
        let color_register = fs
            .output(color.name, color.index)
            .ok_or_else(|| {
                RasterError::Interface(format!(
                    "the fragment shader has no {}[{}] output",
                    color.name, color.index
                ))
            })?
            .register as usize;
        check_registers("vertex OUT", &vs.outputs, vs.num_outputs)?;
        check_registers("vertex SV", &vs.system_values, vs.num_system_values)?;
        check_registers("fragment IN", &fs.inputs, fs.num_inputs)?;
        check_registers("fragment OUT", &fs.outputs, fs.num_outputs)?;
        check_registers("fragment SV", &fs.system_values, fs.num_system_values)?;

        let mut varyings = Vec::new();
        let mut fs_inputs = Vec::new();
        for slot in &fs.inputs {
            let source = match slot.semantic {
                SemanticName::Position => InputSource::FragCoord,
                SemanticName::Face => InputSource::Face,
                SemanticName::PrimId => InputSource::PrimId,
                _ => {
                    let interp = match slot.interpolation {
                        InterpolateMode::Constant => Interp::Flat,
                        InterpolateMode::Linear => Interp::Linear,
                        InterpolateMode::Perspective => Interp::Perspective,
                        InterpolateMode::Color if state.flat_shade_colors => Interp::Flat,
                        InterpolateMode::Color => Interp::Perspective,
                    };
                    let vs_output = vs
                        .output(slot.semantic, slot.semantic_index)
                        .map(|o| o.register as usize);
                    varyings.push(Varying { vs_output, interp });
                    InputSource::Varying(varyings.len() - 1)
                }
            };
            fs_inputs.push(FsInput {
                register: slot.register as usize,
                mask: if slot.usage_mask == 0 {
                    0xF
                } else {
                    slot.usage_mask
                },
                source,
            });
        }
        let fs_sv = fs
            .system_values
            .iter()
            .map(|s| {
                let source = match s.semantic {
                    SemanticName::Position => SvSource::FragCoord,
                    SemanticName::Face => SvSource::Face,
                    SemanticName::SampleMask => SvSource::SampleMask,
                    SemanticName::SamplePos => SvSource::SamplePos,
                    SemanticName::HelperInvocation => SvSource::HelperInvocation,
                    SemanticName::PrimId => SvSource::PrimId,
                    _ => SvSource::Zero,
                };
                (s.register as usize, source)
            })
            .collect();
        let vs_sv = vs
            .system_values
            .iter()
            .map(|s| {
                let source = match s.semantic {
                    SemanticName::VertexId | SemanticName::VertexIdNoBase => VsSv::VertexId,
                    _ => VsSv::Zero,
                };
                (s.register as usize, source)
            })
            .collect();
        let centre = match state.frag_coord.pixel_center {
            PixelCenter::HalfInteger => 0.5,
            PixelCenter::Integer => 0.0,
        };
        let (frag_y0, frag_dy) = match state.frag_coord.origin {
            FragCoordOrigin::UpperLeft => (centre, 1.0),
            FragCoordOrigin::LowerLeft => ((target_height as f32 - 1.0) + centre, -1.0),
        };
        Ok(Plan {
            vs_position,
            vs_num_inputs: vs.num_inputs,
            vs_num_outputs: vs.num_outputs,
            vs_num_sv: vs.num_system_values,
            vs_sv,
            varyings,
            fs_inputs,
            fs_sv,
            fs_num_inputs: fs.num_inputs,
            fs_num_outputs: fs.num_outputs,
            fs_num_sv: fs.num_system_values,
            color_register,
            frag_x0: centre,
            frag_y0,
            frag_dy,
        })
    }

    /// Vec4s per vertex record: the clip position, then one per varying slot.
    pub(crate) fn record_len(&self) -> usize {
        1 + self.varyings.len()
    }
}

fn check_registers(what: &str, slots: &[IoSlot], count: usize) -> Result<(), RasterError> {
    match slots.iter().find(|s| s.register as usize >= count) {
        Some(s) => Err(RasterError::Interface(format!(
            "{what} register {} is declared but the signature allocates only {count}",
            s.register
        ))),
        None => Ok(()),
    }
}

/// An edge function `a * px + b * py + c` over integer pixel indices; a pixel is inside when it
/// is positive for all three edges (the top-left bias is folded into `c`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub a: i64,
    pub b: i64,
    pub c: i64,
}

/// An attribute plane: value at pixel `(x, y)` is `a0 + dadx * x + dady * y`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Coef {
    pub a0: f32,
    pub dadx: f32,
    pub dady: f32,
}

/// A set-up triangle, ready for the tiles.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Triangle {
    pub edges: [Edge; 3],
    /// Inclusive pixel bounds `[x0, y0, x1, y1]`, within the target.
    pub bbox: [u32; 4],
    pub front: bool,
    /// Index of the triangle's first plane in [`Prepared::coefs`]: window z, 1/w, then four
    /// per varying slot.
    pub coef: usize,
    pub prim_id: u32,
}

/// All triangles of a draw, in API order.
pub(crate) struct Prepared {
    pub triangles: Vec<Triangle>,
    pub coefs: Vec<Coef>,
}

/// Sub-pixel precision: 8 bits, as llvmpipe.
const SUBPIXEL: f32 = 256.0;
const HALF: i64 = 128;

/// The viewport transform of the `draw` module.
struct Xform {
    scale: Vec3,
    translate: Vec3,
}

impl Xform {
    fn new(vp: &Viewport, convention: ClipConvention) -> Xform {
        let (hw, hh) = (vp.width * 0.5, vp.height * 0.5);
        let (sz, tz) = match convention {
            ClipConvention::OpenGl => (0.5, 0.5),
            ClipConvention::Vulkan | ClipConvention::WebGpu => (1.0, 0.0),
        };
        // WebGPU's NDC y points up while its framebuffer rows grow downwards.
        let sy = if convention == ClipConvention::WebGpu {
            -hh
        } else {
            hh
        };
        Xform {
            scale: Vec3::new(hw, sy, sz),
            translate: Vec3::new(hw + vp.x, hh + vp.y, tz),
        }
    }

    /// Window `x, y, z` and `1/w` (each product rounded on its own, as the `draw` module
    /// computes them: no fused multiply-add).
    #[inline]
    fn window(&self, pos: Vec4) -> [f32; 4] {
        let oow = 1.0 / pos.w;
        (pos.truncate() * oow * self.scale + self.translate)
            .extend(oow)
            .to_array()
    }
}

enum Outcome {
    Rasterized,
    Culled,
    Degenerate,
    Outside,
}

struct Setup<'p> {
    plan: &'p Plan,
    xform: Xform,
    convention: ClipConvention,
    cull: CullMode,
    ccw_front: bool,
    width: u32,
    height: u32,
    out: Prepared,
}

/// Clips, culls and sets up every triangle.
pub(crate) fn prepare(
    state: &DrawState<'_>,
    plan: &Plan,
    records: &[[u32; 4]],
    viewport: &Viewport,
    width: u32,
    height: u32,
    stats: &mut DrawStats,
) -> Prepared {
    let len = plan.record_len();
    let count = records.len() / len;
    let mut setup = Setup {
        plan,
        xform: Xform::new(viewport, state.convention),
        convention: state.convention,
        cull: state.cull,
        ccw_front: state.front_face == FrontFace::CounterClockwise,
        width,
        height,
        out: Prepared {
            triangles: Vec::with_capacity(count / 3),
            coefs: Vec::with_capacity(count / 3 * (2 + 4 * plan.varyings.len())),
        },
    };
    let first = state.provoking_vertex == ProvokingVertex::First;
    let mut clipper = Clipper::new(len);
    let tally = |outcome: Outcome, stats: &mut DrawStats| match outcome {
        Outcome::Rasterized => stats.rasterized += 1,
        Outcome::Culled => stats.culled += 1,
        Outcome::Degenerate => stats.degenerate += 1,
        Outcome::Outside => stats.clipped_away += 1,
    };
    for t in 0..count / 3 {
        let rec = |i: usize| &records[(3 * t + i) * len..(3 * t + i + 1) * len];
        let tri = [rec(0), rec(1), rec(2)];
        let provoking = if first { tri[0] } else { tri[2] };
        let pos = tri.map(position);
        if !pos.iter().all(|p| p.is_finite()) {
            stats.clipped_away += 1;
            continue;
        }
        let masks = pos.map(|p| clip_mask(p, state.convention));
        if masks[0] | masks[1] | masks[2] == 0 {
            let outcome = setup.triangle(tri, provoking, t as u32);
            tally(outcome, stats);
        } else if masks[0] & masks[1] & masks[2] != 0 {
            stats.clipped_away += 1;
        } else {
            let polygon = clipper.clip(tri, masks[0] | masks[1] | masks[2], plan, state.convention);
            if polygon.is_empty() {
                stats.clipped_away += 1;
                continue;
            }
            let polygon: Vec<usize> = polygon.to_vec();
            for i in 2..polygon.len() {
                let order = if first {
                    [polygon[0], polygon[i - 1], polygon[i]]
                } else {
                    [polygon[i - 1], polygon[i], polygon[0]]
                };
                let outcome = setup.triangle(order.map(|v| clipper.record(v)), provoking, t as u32);
                tally(outcome, stats);
            }
        }
    }
    setup.out
}

/// The sorted order of softpipe's `setup_sort_vertices`: (min, mid, max) by window y.
fn sort_by_y(y: [f32; 3]) -> [usize; 3] {
    if y[0] <= y[1] {
        if y[1] <= y[2] {
            [0, 1, 2]
        } else if y[2] <= y[0] {
            [2, 0, 1]
        } else {
            [0, 2, 1]
        }
    } else if y[0] <= y[2] {
        [1, 0, 2]
    } else if y[2] <= y[1] {
        [2, 1, 0]
    } else {
        [1, 2, 0]
    }
}

impl Setup<'_> {
    fn triangle(&mut self, tri: [&[[u32; 4]]; 3], provoking: &[[u32; 4]], prim_id: u32) -> Outcome {
        let win = tri.map(|r| self.xform.window(position(r)));
        // Clipping keeps window positions within the viewport up to rounding; anything else
        // (w = 0 on the boundary, overflow) is dropped rather than snapped.
        let limit = 2.0 * MAX_VIEWPORT_COORD;
        if win.iter().any(|v| {
            !(v[0].abs() <= limit && v[1].abs() <= limit && v[2].is_finite() && v[3].is_finite())
        }) {
            return Outcome::Outside;
        }
        let fx = win.map(|v| (v[0] * SUBPIXEL).round_ties_even() as i64);
        let fy = win.map(|v| (v[1] * SUBPIXEL).round_ties_even() as i64);
        let area = (fx[1] - fx[0]) * (fy[2] - fy[0]) - (fy[1] - fy[0]) * (fx[2] - fx[0]);
        if area == 0 {
            return Outcome::Degenerate;
        }
        // Window y grows with NDC y under OpenGL and Vulkan (Vulkan measures winding with y
        // down) and against it under WebGPU (winding measured with NDC y up): either way a
        // positive window-space area is counter-clockwise only under OpenGL.
        let positive_is_ccw = self.convention == ClipConvention::OpenGl;
        let front = ((area > 0) == positive_is_ccw) == self.ccw_front;
        let culled = match self.cull {
            CullMode::None => false,
            CullMode::Front => front,
            CullMode::Back => !front,
            CullMode::FrontAndBack => true,
        };
        if culled {
            return Outcome::Culled;
        }

        let (min_x, max_x) = (fx.iter().min().unwrap_or(&0), fx.iter().max().unwrap_or(&0));
        let (min_y, max_y) = (fy.iter().min().unwrap_or(&0), fy.iter().max().unwrap_or(&0));
        let first_pixel = |v: i64| -((HALF - v).div_euclid(256));
        let last_pixel = |v: i64| (v - HALF).div_euclid(256);
        let x0 = first_pixel(*min_x).max(0);
        let y0 = first_pixel(*min_y).max(0);
        let x1 = last_pixel(*max_x).min(self.width as i64 - 1);
        let y1 = last_pixel(*max_y).min(self.height as i64 - 1);
        if x0 > x1 || y0 > y1 {
            return Outcome::Outside;
        }

        // Orient so that the interior is positive, then one edge function per directed edge.
        let order = if area > 0 { [0, 1, 2] } else { [0, 2, 1] };
        let edges = [(0, 1), (1, 2), (2, 0)].map(|(i, j)| {
            let (ax, ay) = (fx[order[i]], fy[order[i]]);
            let (bx, by) = (fx[order[j]], fy[order[j]]);
            let (dx, dy) = (bx - ax, by - ay);
            // Top edge: horizontal with the interior below (larger rows); left edge: interior
            // to the right. Pixel centres exactly on those edges are inside.
            let top_left = dy < 0 || (dy == 0 && dx > 0);
            Edge {
                a: -dy * 256,
                b: dx * 256,
                c: dx * (HALF - ay) - dy * (HALF - ax) + top_left as i64,
            }
        });

        // Attribute planes exactly as sp_setup.c computes them, from the unsnapped positions.
        let [imin, imid, imax] = sort_by_y(win.map(|v| v[1]));
        let (vmin, vmid, vmax) = (win[imin], win[imid], win[imax]);
        let (ebot_dx, ebot_dy) = (vmid[0] - vmin[0], vmid[1] - vmin[1]);
        let (emaj_dx, emaj_dy) = (vmax[0] - vmin[0], vmax[1] - vmin[1]);
        let float_area = emaj_dx * ebot_dy - ebot_dx * emaj_dy;
        let oneoverarea = 1.0 / float_area;
        if !oneoverarea.is_finite() {
            return Outcome::Degenerate;
        }
        let (xmin, ymin) = (vmin[0] - 0.5, vmin[1] - 0.5);
        let linear = |v0: f32, v1: f32, v2: f32| {
            let botda = v1 - v0;
            let majda = v2 - v0;
            let a = ebot_dy * majda - botda * emaj_dy;
            let b = emaj_dx * botda - majda * ebot_dx;
            let dadx = a * oneoverarea;
            let dady = b * oneoverarea;
            Coef {
                a0: v0 - (dadx * xmin + dady * ymin),
                dadx,
                dady,
            }
        };
        let coef = self.out.coefs.len();
        self.out.coefs.push(linear(vmin[2], vmid[2], vmax[2]));
        self.out.coefs.push(linear(vmin[3], vmid[3], vmax[3]));
        for (slot, varying) in self.plan.varyings.iter().enumerate() {
            let value = |v: usize, c: usize| f32::from_bits(tri[v][1 + slot][c]);
            for (c, &flat) in provoking[1 + slot].iter().enumerate() {
                let plane = match varying.interp {
                    Interp::Flat => Coef {
                        a0: f32::from_bits(flat),
                        dadx: 0.0,
                        dady: 0.0,
                    },
                    Interp::Linear => linear(value(imin, c), value(imid, c), value(imax, c)),
                    Interp::Perspective => linear(
                        value(imin, c) * vmin[3],
                        value(imid, c) * vmid[3],
                        value(imax, c) * vmax[3],
                    ),
                };
                self.out.coefs.push(plane);
            }
        }
        self.out.triangles.push(Triangle {
            edges,
            bbox: [x0 as u32, y0 as u32, x1 as u32, y1 as u32],
            front,
            coef,
            prim_id,
        });
        Outcome::Rasterized
    }
}
