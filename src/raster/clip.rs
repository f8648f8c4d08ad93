//! Clipping against the view volume, after Mesa's `draw_pipe_clip.c`: Sutherland–Hodgman over
//! the six planes in the order x ≤ w, x ≥ -w, y ≤ w, y ≥ -w, near, far, with new vertices
//! interpolated in clip space (perspective varyings with the clip-space `t`, screen-linear ones
//! with the `t` recomputed after the divide by `w`), producing a convex polygon.

use glam::Vec4;

use super::setup::{Interp, Plan};
use super::ClipConvention;

/// The clip distance of `pos` to plane `plane` (≥ 0 inside), computed as the `draw` module's
/// plane dot products evaluate for these planes.
#[inline]
fn distance(pos: Vec4, plane: usize, convention: ClipConvention) -> f32 {
    let [x, y, z, w] = pos.to_array();
    match plane {
        0 => -x + w,
        1 => x + w,
        2 => -y + w,
        3 => y + w,
        4 => match convention {
            ClipConvention::OpenGl => z + w,
            ClipConvention::Vulkan | ClipConvention::WebGpu => z,
        },
        _ => -z + w,
    }
}

/// Bit `p` set when `pos` is outside plane `p`.
#[inline]
pub(crate) fn clip_mask(pos: Vec4, convention: ClipConvention) -> u8 {
    let mut mask = 0;
    for plane in 0..6 {
        if distance(pos, plane, convention) < 0.0 {
            mask |= 1 << plane;
        }
    }
    mask
}

/// The clip-space position stored in a vertex record.
#[inline]
pub(crate) fn position(record: &[[u32; 4]]) -> Vec4 {
    Vec4::from_array(record[0].map(f32::from_bits))
}

/// `out + t * (inside - out)`, as `draw_pipe_clip.c` interpolates (glam's `lerp` rounds
/// differently: `out * (1 - t) + inside * t`).
#[inline]
fn lerp(t: f32, out: Vec4, inside: Vec4) -> Vec4 {
    out + (inside - out) * t
}

/// Reusable clipping state: a pool of vertex records (`record_len` vec4s each: position, then
/// varyings) holding the triangle's vertices and the ones clipping creates.
pub(crate) struct Clipper {
    record_len: usize,
    pool: Vec<[u32; 4]>,
    list_a: Vec<usize>,
    list_b: Vec<usize>,
}

/// Polygon size limit of `draw_pipe_clip.c` (a convex polygon gains at most one vertex per
/// plane; float rounding can make it slightly non-convex, and then the triangle is dropped).
const MAX_POLYGON: usize = 2 * 6 + 1;

impl Clipper {
    pub(crate) fn new(record_len: usize) -> Clipper {
        Clipper {
            record_len,
            pool: Vec::with_capacity(record_len * 16),
            list_a: Vec::with_capacity(MAX_POLYGON + 1),
            list_b: Vec::with_capacity(MAX_POLYGON + 1),
        }
    }

    /// The record of pool vertex `index`.
    pub(crate) fn record(&self, index: usize) -> &[[u32; 4]] {
        &self.pool[index * self.record_len..(index + 1) * self.record_len]
    }

    /// Clips the triangle against the planes in `mask`. Returns the polygon as pool indices
    /// (empty when nothing is left or a distance is not finite); vertex 0 of the polygon is
    /// the first surviving vertex in order, as in `draw`.
    pub(crate) fn clip(
        &mut self,
        triangle: [&[[u32; 4]]; 3],
        mut mask: u8,
        plan: &Plan,
        convention: ClipConvention,
    ) -> &[usize] {
        self.pool.clear();
        for record in triangle {
            self.pool.extend_from_slice(record);
        }
        let mut input = std::mem::take(&mut self.list_a);
        let mut output = std::mem::take(&mut self.list_b);
        input.clear();
        input.extend_from_slice(&[0, 1, 2]);
        let mut ok = true;
        while mask != 0 && input.len() >= 3 {
            let plane = mask.trailing_zeros() as usize;
            mask &= !(1 << plane);
            output.clear();
            let n = input.len();
            input.push(input[0]);
            let mut prev = input[0];
            let mut dp_prev = distance(position(self.record(prev)), plane, convention);
            if !dp_prev.is_finite() {
                ok = false;
                break;
            }
            for &vert in &input[1..=n] {
                let dp = distance(position(self.record(vert)), plane, convention);
                if !dp.is_finite() {
                    ok = false;
                    break;
                }
                let different_sign = if dp_prev >= 0.0 {
                    if output.len() >= MAX_POLYGON {
                        ok = false;
                        break;
                    }
                    output.push(prev);
                    dp < 0.0
                } else {
                    dp >= 0.0
                };
                if different_sign {
                    if output.len() >= MAX_POLYGON {
                        ok = false;
                        break;
                    }
                    let denom = dp - dp_prev;
                    // The same choices of direction as draw_pipe_clip.c, so that a shared edge is
                    // cut at bit-identical points from both sides.
                    let new = if dp < 0.0 {
                        if -dp < dp_prev {
                            self.interpolate(dp / denom, vert, prev, plan)
                        } else {
                            self.interpolate(-dp_prev / denom, prev, vert, plan)
                        }
                    } else if -dp_prev < dp {
                        self.interpolate(-dp_prev / denom, prev, vert, plan)
                    } else {
                        self.interpolate(dp / denom, vert, prev, plan)
                    };
                    output.push(new);
                }
                prev = vert;
                dp_prev = dp;
            }
            if !ok {
                break;
            }
            std::mem::swap(&mut input, &mut output);
        }
        if !ok || input.len() < 3 {
            input.clear();
        }
        self.list_a = input;
        self.list_b = output;
        &self.list_a
    }

    /// Appends the vertex `out + t * (in - out)` to the pool and returns its index.
    fn interpolate(&mut self, t: f32, out: usize, inside: usize, plan: &Plan) -> usize {
        let len = self.record_len;
        let new = self.pool.len() / len;
        self.pool.extend_from_within(out * len..(out + 1) * len);
        let po = position(self.record(out));
        let pi = position(self.record(inside));
        let pd = lerp(t, po, pi);
        self.pool[new * len] = pd.to_array().map(f32::to_bits);
        // Screen-space t for noperspective varyings; falls back to t when the points coincide
        // in x and y (the new vertex is then not visible anyway).
        let mut t_linear = t;
        for k in 0..2 {
            if pi[k] != po[k] {
                let in_c = pi[k] / pi[3];
                let out_c = po[k] / po[3];
                let dst_c = pd[k] / pd[3];
                t_linear = (dst_c - out_c) / (in_c - out_c);
                break;
            }
        }
        for (slot, varying) in plan.varyings.iter().enumerate() {
            let t = match varying.interp {
                Interp::Perspective => t,
                Interp::Linear => t_linear,
                // Flat values come from the provoking vertex at setup.
                Interp::Flat => continue,
            };
            let index = new * len + 1 + slot;
            let bits = |record: usize| {
                Vec4::from_array(self.pool[record * len + 1 + slot].map(f32::from_bits))
            };
            self.pool[index] = lerp(t, bits(out), bits(inside))
                .to_array()
                .map(f32::to_bits);
        }
        new
    }
}
