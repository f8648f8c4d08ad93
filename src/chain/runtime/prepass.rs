//! Texel pre-passes: a function of nearest texels hoisted out of a fragment program
//! (`opt::texelfn`) rendered once per source texel into a derived texture, when the bound
//! textures keep its preconditions and it pays.

use std::sync::Arc;

use crate::exec::{QuadShader, ShaderResources};
use crate::opt::texelfn::TexelFunction;
use crate::raster::{self, ClipConvention, DrawState, FragCoordConvention, Vertices};
use crate::shader::{build_shader, Executor};
use crate::texture::{Filter, Format, SamplerState, Texture, TextureUnits, Wrap};

use crate::chain::ChainError;

use super::pass::{quad_vertices, Pass};
use super::ChainOptions;

/// A texel function's pre-pass, compiled.
pub(super) struct TexelPrepass {
    pub(super) source_unit: u32,
    pub(super) derived_unit: u32,
    /// The program's lookups it serves.
    pub(super) lookups: usize,
    pub(super) vertex: Box<dyn QuadShader>,
    pub(super) fragment: Box<dyn QuadShader>,
    pub(super) frag_coord: FragCoordConvention,
}

/// The pre-passes' vertex program: the full-screen quad's clip-space positions as given.
const PREPASS_VERTEX_PROGRAM: &str =
    "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: END\n";

impl TexelPrepass {
    pub(super) fn build(
        function: &TexelFunction,
        options: &ChainOptions,
    ) -> Result<TexelPrepass, String> {
        let vertex_program = crate::ir::text::parse_program(PREPASS_VERTEX_PROGRAM)
            .map_err(|e| format!("texel pre-pass vertex program: {e}"))?;
        let vertex = build_shader(
            &vertex_program,
            options.executor,
            options.math,
            options.driver,
        )
        .map_err(|e| e.to_string())?;
        let fragment = build_shader(
            &function.program,
            options.executor,
            options.math,
            options.driver,
        )
        .map_err(|e| format!("texel pre-pass: {e}"))?;
        Ok(TexelPrepass {
            source_unit: function.source_unit,
            derived_unit: function.derived_unit,
            lookups: function.lookups,
            vertex,
            fragment,
            frag_coord: FragCoordConvention::from_program(&function.program),
        })
    }

    /// Renders the function's values for every texel of `source` into a new float texture of
    /// its size (`units` and `constants` as the pass binds them).
    pub(super) fn render(
        &self,
        source: &Texture,
        constants: &[&[[u32; 4]]],
        units: &TextureUnits,
    ) -> Result<Texture, String> {
        let mut target = Texture::new(
            Format::R32G32B32A32Sfloat,
            source.width(),
            source.height(),
            1,
        )
        .map_err(|e| e.to_string())?;
        let state = DrawState {
            vertex_resources: ShaderResources {
                constants: &[],
                textures: &TextureUnits::new(),
                storage: Default::default(),
            },
            fragment_resources: ShaderResources {
                constants,
                textures: units,
                storage: Default::default(),
            },
            frag_coord: self.frag_coord,
            ..DrawState::new(&*self.vertex, &*self.fragment, ClipConvention::Vulkan)
        };
        let vertices = quad_vertices(false, 2);
        raster::draw_triangles(&state, Vertices::new(&vertices, 2), &mut target)
            .map_err(|e| e.to_string())?;
        Ok(target)
    }

    /// Whether the function maps the border texel (transparent black) to transparent black, as
    /// a lookup outside a `CLAMP_TO_BORDER` derived texture returns.
    fn maps_border_to_border(
        &self,
        constants: &[&[[u32; 4]]],
        units: &TextureUnits,
    ) -> Result<bool, String> {
        let border =
            Arc::new(Texture::new(Format::R32G32B32A32Sfloat, 1, 1, 1).map_err(|e| e.to_string())?);
        let mut units = units.clone();
        let sampler = units
            .get(self.source_unit)
            .map_or_else(SamplerState::default, |(_, s)| *s);
        units.bind(self.source_unit, border.clone(), sampler);
        let values = self.render(&border, constants, &units)?;
        Ok(values.level_data(0).iter().all(|&b| b == 0))
    }
}

/// How many times fewer evaluations of a texel function a pre-pass must make than the draw
/// would, to be run: a pre-pass also renders, stores and decodes its texture, and the draw
/// reads it back, about one more evaluation per texel (hyllian's glow-mask pass, whose `pow`
/// chain reads each texel of a viewport-sized source once, ran 5% slower with a pre-pass of as
/// many texels as pixels).
const PREPASS_MIN_SAVING: u64 = 2;

/// Renders the pass's texel functions' derived textures and binds them to `units`; false
/// (nothing bound) when a bound source breaks a function's preconditions — sampled with another
/// filter than nearest or at several levels, or through a border the function changes — or
/// when a pre-pass would not evaluate its function [`PREPASS_MIN_SAVING`] times less often than
/// the draw of `pixels` (source texels against the lookups' pixels; and no source larger than
/// [`Texture::MAX_DECODED_TEXELS`]).
pub(super) fn bind_derived_textures(
    pass: &Pass,
    constants: &[&[[u32; 4]]],
    units: &mut TextureUnits,
    pixels: u64,
) -> Result<bool, ChainError> {
    let failed = |e: String| ChainError::new(format!("{}: {e}", pass.label));
    let mut derived = Vec::with_capacity(pass.texel_prepasses.len());
    for prepass in &pass.texel_prepasses {
        let Some((source, sampler)) = units.get(prepass.source_unit).cloned() else {
            return Ok(false);
        };
        let nearest = sampler.min_filter == Filter::Nearest
            && sampler.mag_filter == Filter::Nearest
            && sampler.is_level_independent(&source);
        let texels = u64::from(source.width()) * u64::from(source.height());
        let pays = texels.saturating_mul(PREPASS_MIN_SAVING)
            <= pixels.saturating_mul(prepass.lookups as u64)
            && texels <= Texture::MAX_DECODED_TEXELS as u64;
        if !nearest || !pays {
            return Ok(false);
        }
        let border = [sampler.wrap_s, sampler.wrap_t].contains(&Wrap::ClampToBorder);
        if border
            && !prepass
                .maps_border_to_border(constants, units)
                .map_err(failed)?
        {
            return Ok(false);
        }
        let texture = prepass.render(&source, constants, units).map_err(failed)?;
        if pass.executor == Executor::Jit {
            texture.decoded_levels();
        }
        let sampler = sampler.with_mip_filter(None);
        derived.push((prepass.derived_unit, Arc::new(texture), sampler));
    }
    for (unit, texture, sampler) in derived {
        units.bind(unit, texture, sampler);
    }
    Ok(true)
}
