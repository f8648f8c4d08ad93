//! One compiled pass and its draw: the full-screen quad with the pass's constant buffers and
//! textures bound, the specialized fragment shader when the frame keeps its promises (else the
//! program as compiled, built on first use).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::driver::Driver;
use crate::exec::{QuadShader, ShaderResources};
use crate::ir::MathMode;
use crate::ir::{Program, SamplerHint};
use crate::raster::{self, ClipConvention, DrawState, FragCoordConvention, Vertices};
use crate::shader::{build_shader, Executor};
use crate::texture::{Format, Texture};

use crate::chain::preset::PassConfig;
use crate::chain::semantics::StageBindings;
use crate::chain::ChainError;

use super::binding::{stage_resources, FrameState};
use super::prepass::{bind_derived_textures, TexelPrepass};

/// A shader only some draws need, compiled by the first (or why it did not compile).
type LazyShader = OnceLock<Result<Box<dyn QuadShader>, String>>;

/// One compiled pass.
pub(super) struct Pass {
    pub(super) config: PassConfig,
    /// `pass N (file)`, for messages.
    pub(super) label: String,
    pub(super) vertex: Box<dyn QuadShader>,
    /// The fragment shader specialized for `fragment_units` (see
    /// [`TextureUnits::level_independent_units`]).
    pub(super) fragment: Box<dyn QuadShader>,
    /// Texture units the specialized fragment shader assumes level-independent.
    pub(super) fragment_units: u64,
    /// The fragment program as compiled, for frames that bind a unit otherwise (built the first
    /// time one does).
    pub(super) fragment_program: Program,
    pub(super) fragment_generic: LazyShader,
    /// The sampler hints the specialized fragment shader was compiled with.
    pub(super) sampler_hints: Vec<SamplerHint>,
    /// Draws that bound a hinted unit with another state than its hint.
    pub(super) sampler_hint_misses: AtomicU64,
    /// The functions of nearest texels the specialized fragment shader reads from derived
    /// textures (`opt::texelfn`), which each draw renders first.
    pub(super) texel_prepasses: Vec<TexelPrepass>,
    /// Draws whose bound textures broke a texel function's preconditions, or made its
    /// pre-pass cost more than it saves: they ran the specialized program as it was before
    /// the functions were hoisted.
    pub(super) texel_prepass_fallbacks: AtomicU64,
    /// That program (when there are texel functions), compiled the first time it is needed.
    pub(super) fragment_unhoisted: Option<(Program, LazyShader)>,
    /// Operands of the fragment program that read a parameter (or another frame-invariant
    /// constant) and were folded into immediates.
    pub(super) folded_constants: usize,
    pub(super) executor: Executor,
    pub(super) math: MathMode,
    pub(super) driver: Driver,
    pub(super) frag_coord: FragCoordConvention,
    pub(super) vertex_attributes: usize,
    pub(super) format: Format,
    pub(super) vertex_bindings: StageBindings,
    pub(super) fragment_bindings: StageBindings,
    /// Instructions of the specialized fragment program (for [`PassTiming`]).
    pub(super) fragment_instructions: usize,
}

/// A fragment shader of `pass` that only some draws need, compiled by the first.
fn compiled_once<'a>(
    pass: &Pass,
    program: &Program,
    cell: &'a LazyShader,
) -> Result<&'a dyn QuadShader, ChainError> {
    cell.get_or_init(|| {
        build_shader(program, pass.executor, pass.math, pass.driver).map_err(|e| e.to_string())
    })
    .as_ref()
    .map(|shader| &**shader)
    .map_err(|e| ChainError::new(format!("{}, fragment: {e}", pass.label)))
}

/// Draws a pass's full-screen quad into `target`.
pub(super) fn draw_pass(
    pass: &Pass,
    frame: &FrameState<'_>,
    target: &mut Texture,
    output_size: (u32, u32),
    mvp: &[f32; 16],
    final_quad: bool,
) -> Result<(), ChainError> {
    let (vs_consts, vs_units) =
        stage_resources(&pass.vertex_bindings, pass, frame, output_size, mvp);
    let (fs_consts, mut fs_units) =
        stage_resources(&pass.fragment_bindings, pass, frame, output_size, mvp);
    let fs_refs: Vec<&[[u32; 4]]> = fs_consts.iter().map(|v| v.as_slice()).collect();
    // The specialized shader's promise holds unless this frame binds a unit with mipmaps that
    // the prediction thought had none, or breaks a texel function's preconditions.
    let actual = fs_units.level_independent_units();
    let specialized_holds = pass.fragment_units & !actual == 0;
    let mut derived_bound = false;
    if specialized_holds && !pass.texel_prepasses.is_empty() {
        let pixels = u64::from(target.width()) * u64::from(target.height());
        derived_bound = bind_derived_textures(pass, &fs_refs, &mut fs_units, pixels)?;
        if !derived_bound {
            pass.texel_prepass_fallbacks.fetch_add(1, Ordering::Relaxed);
        }
    }
    if !pass.sampler_hints.is_empty() {
        let bound = fs_units.sampler_hints();
        // Derived units are bound only for the program that reads them.
        let derived = |unit: u32| pass.texel_prepasses.iter().any(|p| p.derived_unit == unit);
        let relevant = |h: &&SamplerHint| derived_bound || !derived(h.unit);
        if pass
            .sampler_hints
            .iter()
            .filter(relevant)
            .any(|h| !bound.contains(h))
        {
            pass.sampler_hint_misses.fetch_add(1, Ordering::Relaxed);
        }
    }
    let fragment: &dyn QuadShader = match (&pass.fragment_unhoisted, specialized_holds) {
        (_, false) => compiled_once(pass, &pass.fragment_program, &pass.fragment_generic)?,
        (Some((program, cell)), true) if !derived_bound => compiled_once(pass, program, cell)?,
        _ => &*pass.fragment,
    };
    let vs_refs: Vec<&[[u32; 4]]> = vs_consts.iter().map(|v| v.as_slice()).collect();
    let state = DrawState {
        vertex_resources: ShaderResources {
            constants: &vs_refs,
            textures: &vs_units,
            storage: Default::default(),
        },
        fragment_resources: ShaderResources {
            constants: &fs_refs,
            textures: &fs_units,
            storage: Default::default(),
        },
        frag_coord: pass.frag_coord,
        ..DrawState::new(&*pass.vertex, fragment, ClipConvention::Vulkan)
    };
    let vertices = quad_vertices(final_quad, pass.vertex_attributes);
    raster::draw_triangles(
        &state,
        Vertices::new(&vertices, pass.vertex_attributes),
        target,
    )
    .map_err(|e| ChainError::new(format!("{}: {e}", pass.label)))?;
    Ok(())
}

/// The full-screen quad as librashader's triangle strip, unrolled into a triangle list:
/// location 0 is the position, location 1 the texture coordinate.
pub(super) fn quad_vertices(final_quad: bool, attributes: usize) -> Vec<[u32; 4]> {
    let (lo, hi): (f32, f32) = if final_quad { (0.0, 1.0) } else { (-1.0, 1.0) };
    let corners = [
        ([lo, lo], [0.0f32, 0.0f32]),
        ([lo, hi], [0.0, 1.0]),
        ([hi, lo], [1.0, 0.0]),
        ([hi, hi], [1.0, 1.0]),
    ];
    // Strip triangle i uses vertices {i, i+1+i%2, i+2-i%2}.
    let order = [0usize, 1, 2, 1, 3, 2];
    let mut out = Vec::with_capacity(order.len() * attributes);
    for &v in &order {
        let ([x, y], [u, t]) = corners[v];
        out.push([x.to_bits(), y.to_bits(), 0f32.to_bits(), 1f32.to_bits()]);
        out.push([u.to_bits(), t.to_bits(), 0f32.to_bits(), 1f32.to_bits()]);
        for _ in 2..attributes {
            out.push([0; 4]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quads_cover_clip_space() {
        let v = quad_vertices(false, 2);
        assert_eq!(v.len(), 12);
        assert_eq!(f32::from_bits(v[0][0]), -1.0);
        assert_eq!(f32::from_bits(v[8][0]), 1.0);
        let v = quad_vertices(true, 3);
        assert_eq!(v.len(), 18);
        assert_eq!(f32::from_bits(v[0][0]), 0.0);
    }
}
