//! Planning a pass before its shaders are built: what its fragment program is specialized
//! for (the constants every frame fills alike, the texture units the preset samples without
//! mipmaps or with nearest filtering, the sampler hints), and building the pass from the plan.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::OnceLock;

use crate::exec::ShaderSignature;
use crate::ir::{Program, SamplerHint};
use crate::opt::KnownConstants;
use crate::raster::FragCoordConvention;
use crate::shader::{build_shader, PassLanguage, PassShader, ShaderCache, Specialization};
use crate::texture::{Filter, FilterRule, Format, SamplerState, Wrap};

use crate::chain::preset::{PassConfig, Preset, ScaleType};
use crate::chain::semantics::{
    bind_stage, SemanticNames, StageBindings, TextureSemantic, UnnamedUniforms,
};
use crate::chain::ChainError;

use super::binding::{lut_sampling, pass_sampling, sampling_of, SamplingOf};
use super::pass::Pass;
use super::prepass::TexelPrepass;
use super::scaling::scaled_size;
use super::uniforms::frame_invariant_constants;
use super::{ChainOptions, SrgbCurve};

/// What a pass's fragment program is specialized from: the program, the constants that hold
/// the same bits in every frame, the units it samples and those the preset samples with
/// nearest filtering — all of it, so that equal inputs give an equal [`Specialization`].
struct SpecializationInputs<'a> {
    program: &'a Program,
    constants: &'a KnownConstants,
    fragment_units: u64,
    nearest_units: u64,
}

impl SpecializationInputs<'_> {
    /// The inputs as text, for the shader cache (an entry is used only when its key is this).
    pub(super) fn key(&self) -> String {
        let mut constants: Vec<_> = self.constants.iter().collect();
        constants.sort();
        format!(
            "units {:#x} nearest {:#x}\nconstants {constants:?}\n{}",
            self.fragment_units,
            self.nearest_units,
            crate::ir::text::print_program(self.program)
        )
    }

    /// Folds the constants, then rewrites the program where that pays, and hoists its texel
    /// functions into pre-passes (`opt::specialize`).
    pub(super) fn specialize(&self) -> Specialization {
        let done = crate::opt::specialize(
            self.program,
            &crate::opt::SpecializeOptions {
                lane_local_units: self.fragment_units,
                nearest_units: self.nearest_units,
                constants: Some(self.constants),
                inline_texture_limit: crate::jit::codegen::MAX_INLINE_TEX,
            },
        );
        Specialization {
            folded_constants: done.folded_constants,
            program: done.program,
            unhoisted: done.unhoisted,
            texel_functions: done.texel_functions,
        }
    }
}

/// A pass bound and checked, before its shaders are built.
pub(super) struct PassPlan<'a> {
    config: &'a PassConfig,
    shader: &'a PassShader,
    pub(super) label: String,
    format: Format,
    fragment_units: u64,
    /// The units among `fragment_units` the preset samples with nearest filtering.
    nearest_units: u64,
    /// How the fragment units will be sampled, as far as the preset tells.
    sampler_hints: Vec<SamplerHint>,
    /// The fragment stage's constants that hold the same bits in every frame.
    fragment_constants: KnownConstants,
    vertex_bindings: StageBindings,
    fragment_bindings: StageBindings,
}

impl<'a> PassPlan<'a> {
    /// Binds `config`'s pass (its `shader` compiled) to the semantics `names` resolve, checks
    /// what it reads exists, and predicts from the preset what its fragment program can be
    /// specialized for (`parameters` are the chain's parameter values).
    pub(super) fn new(
        preset: &Preset,
        config: &'a PassConfig,
        shader: &'a PassShader,
        names: &SemanticNames,
        parameters: &HashMap<String, f32>,
        options: &ChainOptions,
    ) -> Result<PassPlan<'a>, ChainError> {
        let label = format!("pass {} ({})", config.index, config.shader.display());
        // RetroArch's slang runtime refuses a uniform no semantic names; its Cg runtime binds
        // by name only and leaves every other uniform at its default.
        let unnamed = match shader.language {
            PassLanguage::VulkanGlsl => UnnamedUniforms::Reject,
            PassLanguage::Cg => UnnamedUniforms::ReadZero,
        };
        let vertex_bindings = bind_stage(
            &format!("{label}, vertex"),
            config.index,
            &shader.vertex.lowered,
            &shader.vertex.reflection,
            names,
            unnamed,
        )?;
        let fragment_bindings = bind_stage(
            &format!("{label}, fragment"),
            config.index,
            &shader.fragment.lowered,
            &shader.fragment.reflection,
            names,
            unnamed,
        )?;
        for stage in [&vertex_bindings, &fragment_bindings] {
            for sem in stage.texture_semantics() {
                check_in_range(&label, sem, preset.passes.len(), preset.textures.len())?;
            }
        }
        let format = if config.srgb_framebuffer {
            Format::R8G8B8A8Srgb
        } else if config.float_framebuffer {
            Format::R16G16B16A16Sfloat
        } else {
            match shader.format.as_deref() {
                None | Some("UNKNOWN") => Format::R8G8B8A8Unorm,
                Some(name) => Format::from_name(name).ok_or_else(|| {
                    ChainError::new(format!(
                        "{label}: `#pragma format {name}` is not a render-target format \
                         softgpu supports"
                    ))
                })?,
            }
        };
        let format = match (format, options.srgb_curve) {
            (Format::R8G8B8A8Srgb, SrgbCurve::Llvmpipe) => Format::R8G8B8A8SrgbLlvmpipe,
            (Format::R8G8B8A8Srgb, SrgbCurve::Nvidia) => Format::R8G8B8A8SrgbNvidia,
            (format, _) => options.driver.target_format(format),
        };
        let fragment_units = if options.skip_specialization {
            0
        } else {
            predicted_level_independent_units(preset, config, &fragment_bindings)
        };
        // Inline texture paths serve the exact filter only (`TextureUnits::with_filter_rule`).
        let sampler_hints = if options.driver.filter_rule() == FilterRule::Exact {
            predicted_sampler_hints(
                preset,
                config,
                &fragment_bindings,
                fragment_units,
                !options.skip_specialization,
            )
        } else {
            Vec::new()
        };
        let nearest_units =
            predicted_nearest_units(preset, config, &fragment_bindings, fragment_units);
        let fragment_constants =
            frame_invariant_constants(&fragment_bindings, parameters, &options.host);
        Ok(PassPlan {
            config,
            shader,
            label,
            format,
            fragment_units,
            nearest_units,
            sampler_hints,
            fragment_constants,
            vertex_bindings,
            fragment_bindings,
        })
    }
}

impl PassPlan<'_> {
    /// Specializes (or takes the specialization from `cache`) and compiles the pass's shaders
    /// (passes are built in parallel).
    pub(super) fn build(
        self,
        options: &ChainOptions,
        cache: Option<&ShaderCache>,
    ) -> Result<Pass, ChainError> {
        let vertex = build_shader(
            &self.shader.vertex.lowered.program,
            options.executor,
            options.math,
            options.driver,
        )
        .map_err(|e| ChainError::new(format!("{}, vertex: {e}", self.label)))?;
        let original = &self.shader.fragment.lowered.program;
        let mut sampler_hints = self.sampler_hints;
        let mut texel_functions = Vec::new();
        let mut fragment_unhoisted = None;
        let mut folded_constants = 0;
        // Without specialization the pass runs its program as compiled: no copy of it.
        let mut specialized = Cow::Borrowed(original);
        if !options.skip_specialization {
            let inputs = SpecializationInputs {
                program: original,
                constants: &self.fragment_constants,
                fragment_units: self.fragment_units,
                nearest_units: self.nearest_units,
            };
            let done = match cache {
                Some(cache) => {
                    let key = inputs.key();
                    cache.load_specialization(&key).unwrap_or_else(|| {
                        let done = inputs.specialize();
                        cache.store_specialization(&key, &done);
                        done
                    })
                }
                None => inputs.specialize(),
            };
            folded_constants = done.folded_constants;
            specialized = Cow::Owned(done.program);
            texel_functions = done.texel_functions;
            if let Some(mut unhoisted) = done.unhoisted {
                unhoisted.set_sampler_hints(sampler_hints.iter().copied());
                fragment_unhoisted = Some((unhoisted, OnceLock::new()));
            }
            // A derived texture is sampled as its source is.
            for f in &texel_functions {
                let source = sampler_hints.iter().find(|h| h.unit == f.source_unit);
                if let Some(&hint) = source {
                    sampler_hints.push(SamplerHint {
                        unit: f.derived_unit,
                        ..hint
                    });
                }
            }
            specialized
                .to_mut()
                .set_sampler_hints(sampler_hints.iter().copied());
        }
        let fragment = build_shader(&specialized, options.executor, options.math, options.driver)
            .map_err(|e| ChainError::new(format!("{}, fragment: {e}", self.label)))?;
        let texel_prepasses = texel_functions
            .iter()
            .map(|f| TexelPrepass::build(f, options))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|e| ChainError::new(format!("{}, fragment: {e}", self.label)))?;
        let vertex_attributes = ShaderSignature::from_program(&self.shader.vertex.lowered.program)
            .num_inputs
            .max(2);
        let fragment_instructions = specialized.instructions.len();
        Ok(Pass {
            config: self.config.clone(),
            label: self.label,
            frag_coord: FragCoordConvention::from_program(&self.shader.fragment.lowered.program),
            vertex,
            fragment,
            fragment_units: self.fragment_units,
            fragment_program: self.shader.fragment.lowered.program.clone(),
            fragment_generic: OnceLock::new(),
            // Empty without specialization: no unit is then predicted level-independent.
            sampler_hints,
            sampler_hint_misses: AtomicU64::new(0),
            texel_prepasses,
            texel_prepass_fallbacks: AtomicU64::new(0),
            fragment_unhoisted,
            folded_constants,
            executor: options.executor,
            math: options.math,
            driver: options.driver,
            vertex_attributes,
            format: self.format,
            vertex_bindings: self.vertex_bindings,
            fragment_bindings: self.fragment_bindings,
            fragment_instructions,
        })
    }
}

/// The fragment units of `config`'s pass whose textures never have mipmaps (every sampler the
/// chain makes has one filter for minification and magnification), so that sampling them is
/// level-independent: pass outputs have levels only when the next pass asks for
/// `mipmap_input`, LUTs when the preset says `NAME_mipmap`, input frames never.
fn predicted_level_independent_units(
    preset: &Preset,
    config: &PassConfig,
    bindings: &StageBindings,
) -> u64 {
    let output_has_levels = |n: usize| {
        preset
            .passes
            .get(n + 1)
            .is_some_and(|next| next.mipmap_input)
    };
    bindings
        .textures
        .iter()
        .filter(|t| t.unit < 64)
        .filter(|t| match t.semantic {
            TextureSemantic::Original | TextureSemantic::OriginalHistory(_) => true,
            TextureSemantic::Source => config.index == 0 || !config.mipmap_input,
            TextureSemantic::PassOutput(n) | TextureSemantic::PassFeedback(n) => {
                !output_has_levels(n)
            }
            TextureSemantic::User(n) => preset.textures.get(n).is_some_and(|l| !l.mipmap),
        })
        .fold(0, |units, t| units | 1 << t.unit)
}

/// The size the texture of `semantic` will have in every frame, when the preset alone says:
/// the output (and feedback) of a pass scaled to an absolute size on both axes, `Source` after
/// such a pass, a LUT (its image header). Input frames and sizes that follow the input or the
/// viewport are unknown when the chain is built.
fn predicted_size(preset: &Preset, semantic: TextureSemantic, reader: usize) -> Option<(u32, u32)> {
    let output_of = |n: usize| {
        let config = preset.passes.get(n)?;
        let absolute = |s: &crate::chain::preset::Scaling| s.scale_type == ScaleType::Absolute;
        (absolute(&config.scale.x) && absolute(&config.scale.y))
            .then(|| scaled_size(config, (1, 1), (1, 1), (1, 1)))
    };
    match semantic {
        TextureSemantic::Original | TextureSemantic::OriginalHistory(_) => None,
        TextureSemantic::Source => output_of(reader.checked_sub(1)?),
        TextureSemantic::PassOutput(n) | TextureSemantic::PassFeedback(n) => output_of(n),
        TextureSemantic::User(n) => image::image_dimensions(&preset.textures.get(n)?.path).ok(),
    }
}

/// Sampler hints (see [`Program::sampler_hints`]) for the fragment units of `config`'s pass
/// among `level_independent`, and with `mipmapped_too` for the others (they have mipmaps,
/// sampled with the pass filter between levels as [`sampler_for`] binds them): each texture's
/// filter and wrap mode by [`sampling_of`], as the frame loop binds it, and its size where
/// [`predicted_size`] knows it (REPEAT is hinted only on a known power-of-two size, so that
/// every hint is what the frames bind).
fn predicted_sampler_hints(
    preset: &Preset,
    config: &PassConfig,
    bindings: &StageBindings,
    level_independent: u64,
    mipmapped_too: bool,
) -> Vec<SamplerHint> {
    bindings
        .textures
        .iter()
        .filter(|t| t.unit < 64)
        .filter_map(|t| {
            let mipmapped = level_independent & (1 << t.unit) == 0;
            if mipmapped && !mipmapped_too {
                return None;
            }
            let (filter, wrap) = predicted_sampling(preset, config, t.semantic)?;
            // Only REPEAT's shape depends on the size (a power of two or not), and predicting a
            // LUT's reads its image header.
            let size = (wrap == Wrap::Repeat)
                .then(|| predicted_size(preset, t.semantic, config.index))
                .flatten();
            let mip_filter = mipmapped.then_some(filter);
            // Inline code for a mipmapped shape pays where quads magnify (a blur reading the
            // previous pass's output at its size); LUTs with mipmaps are mostly large images
            // drawn smaller, whose every quad would compute its level of detail twice.
            if mip_filter.is_some() && matches!(t.semantic, TextureSemantic::User(_)) {
                return None;
            }
            let sampler = SamplerState::new(filter, wrap).with_mip_filter(mip_filter);
            let shape = sampler.inline_shape(size)?;
            Some(SamplerHint {
                unit: t.unit,
                shape,
            })
        })
        .collect()
}

/// The filter and wrap mode `config`'s pass samples the texture of `semantic` with.
fn predicted_sampling(
    preset: &Preset,
    config: &PassConfig,
    semantic: TextureSemantic,
) -> Option<(Filter, Wrap)> {
    match sampling_of(semantic, config.index) {
        SamplingOf::Pass(n) => Some(pass_sampling(preset.passes.get(n)?)),
        SamplingOf::Lut(n) => Some(lut_sampling(preset.textures.get(n)?)),
    }
}

/// The fragment units of `config`'s pass among `level_independent` that the preset samples
/// with nearest filtering: each lane reads one texel of level 0, picked by its coordinates.
fn predicted_nearest_units(
    preset: &Preset,
    config: &PassConfig,
    bindings: &StageBindings,
    level_independent: u64,
) -> u64 {
    bindings
        .textures
        .iter()
        .filter(|t| t.unit < 64 && level_independent & (1 << t.unit) != 0)
        .filter(|t| {
            predicted_sampling(preset, config, t.semantic)
                .is_some_and(|(filter, _)| filter == Filter::Nearest)
        })
        .fold(0, |units, t| units | 1 << t.unit)
}

/// Checks that a pass output, feedback or LUT a pass reads exists, and that the input history
/// it reads is not deeper than [`super::MAX_HISTORY_DEPTH`].
fn check_in_range(
    label: &str,
    sem: TextureSemantic,
    passes: usize,
    luts: usize,
) -> Result<(), ChainError> {
    if let TextureSemantic::OriginalHistory(n) = sem {
        if n > super::MAX_HISTORY_DEPTH {
            return Err(ChainError::new(format!(
                "{label}: reads OriginalHistory{n}, but a chain keeps at most {} previous \
                 input frames",
                super::MAX_HISTORY_DEPTH
            )));
        }
    }
    let (what, n, limit) = match sem {
        TextureSemantic::PassOutput(n) => ("PassOutput", n, passes),
        TextureSemantic::PassFeedback(n) => ("PassFeedback", n, passes),
        TextureSemantic::User(n) => ("User", n, luts),
        _ => return Ok(()),
    };
    if n >= limit {
        return Err(ChainError::new(format!(
            "{label}: reads {what}{n}, but the preset has only {limit} {}",
            if what == "User" { "LUTs" } else { "passes" }
        )));
    }
    Ok(())
}
