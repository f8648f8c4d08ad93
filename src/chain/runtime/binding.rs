//! What a pass draw binds: the textures of each semantic in this frame with the sampler
//! librashader's rule gives them, and each stage's constant buffers and texture units.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use crate::shader::PassShader;
use crate::texture::{FetchBounds, Filter, SamplerState, Texture, TextureUnits, Wrap};

use crate::chain::preset::{FilterMode, PassConfig, Preset, WrapMode};
use crate::chain::semantics::{write_member, SemanticNames, StageBindings, TextureSemantic};

use super::luts::Lut;
use super::pass::Pass;
use super::uniforms::uniform_value;
use super::FrameOptions;

fn to_filter(f: FilterMode) -> Filter {
    match f {
        FilterMode::Nearest => Filter::Nearest,
        FilterMode::Linear => Filter::Linear,
    }
}

fn to_wrap(w: WrapMode) -> Wrap {
    match w {
        WrapMode::ClampToBorder => Wrap::ClampToBorder,
        WrapMode::ClampToEdge => Wrap::ClampToEdge,
        WrapMode::Repeat => Wrap::Repeat,
        WrapMode::MirroredRepeat => Wrap::MirroredRepeat,
    }
}

/// A sampler with the given filter for texels and, when the texture has mipmaps, between
/// levels (librashader sets the mip filter to the pass filter).
pub(super) fn sampler_for(filter: Filter, wrap: Wrap, texture: &Texture) -> SamplerState {
    let mip = (texture.level_count() > 1).then_some(filter);
    SamplerState::new(filter, wrap).with_mip_filter(mip)
}

/// The filter and wrap mode of samplers that follow `config`'s pass.
pub(super) fn pass_sampling(config: &PassConfig) -> (Filter, Wrap) {
    (pass_filter(config), to_wrap(config.wrap_mode))
}

/// The filter and wrap mode of a LUT's sampler.
pub(super) fn lut_sampling(lut: &crate::chain::preset::TextureConfig) -> (Filter, Wrap) {
    (to_filter(lut.filter), to_wrap(lut.wrap_mode))
}

/// Whose filter and wrap mode a pass samples a texture with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SamplingOf {
    /// The pass of this index's ([`pass_sampling`]).
    Pass(usize),
    /// The LUT of this index's ([`lut_sampling`]).
    Lut(usize),
}

/// Whose filter and wrap mode pass `reader` samples the texture of `semantic` with (librashader's
/// rule): input frames (`Original`, the history) the first pass's, `Source` the reading pass's
/// own, a pass's output and feedback that pass's, a LUT its own. The frame loop binds samplers
/// by it, and the chain predicts each pass's sampler hints by it.
pub(super) fn sampling_of(semantic: TextureSemantic, reader: usize) -> SamplingOf {
    match semantic {
        TextureSemantic::Original | TextureSemantic::OriginalHistory(_) => SamplingOf::Pass(0),
        TextureSemantic::Source => SamplingOf::Pass(reader),
        TextureSemantic::PassOutput(n) | TextureSemantic::PassFeedback(n) => SamplingOf::Pass(n),
        TextureSemantic::User(n) => SamplingOf::Lut(n),
    }
}

fn pass_filter(config: &PassConfig) -> Filter {
    // librashader's `FilterMode::default()` (nearest) when the key is absent.
    to_filter(config.filter.unwrap_or(FilterMode::Nearest))
}

/// What a pass draw reads besides its own configuration.
#[derive(Clone, Copy)]
pub(super) struct FrameState<'a> {
    pub(super) passes: &'a [Pass],
    pub(super) original: &'a Arc<Texture>,
    pub(super) source: &'a Arc<Texture>,
    pub(super) history: &'a [Arc<Texture>],
    pub(super) outputs: &'a [Option<Arc<Texture>>],
    pub(super) feedback: &'a [Option<Arc<Texture>>],
    pub(super) luts: &'a [Lut],
    pub(super) parameters: &'a HashMap<String, f32>,
    pub(super) host: &'a super::HostUniforms,
    pub(super) viewport: (u32, u32),
    pub(super) frame_count: u64,
    pub(super) options: &'a FrameOptions,
}

impl FrameState<'_> {
    /// The texture of `sem` in this frame.
    pub(super) fn texture(&self, sem: TextureSemantic) -> Option<&Arc<Texture>> {
        match sem {
            TextureSemantic::Original => Some(self.original),
            TextureSemantic::Source => Some(self.source),
            TextureSemantic::OriginalHistory(n) => self.history.get(n - 1),
            TextureSemantic::PassOutput(n) => self.outputs.get(n).and_then(|o| o.as_ref()),
            TextureSemantic::PassFeedback(n) => self.feedback.get(n).and_then(|o| o.as_ref()),
            TextureSemantic::User(n) => self.luts.get(n).map(|l| &l.texture),
        }
    }

    /// The texture of `sem` and the sampler pass `reader` samples it with ([`sampling_of`]).
    pub(super) fn bound(
        &self,
        sem: TextureSemantic,
        reader: usize,
    ) -> Option<(Arc<Texture>, SamplerState)> {
        let texture = self.texture(sem)?;
        let (filter, wrap) = match sampling_of(sem, reader) {
            SamplingOf::Pass(n) => pass_sampling(&self.passes.get(n)?.config),
            SamplingOf::Lut(n) => self.luts.get(n)?.sampling,
        };
        Some((texture.clone(), sampler_for(filter, wrap, texture)))
    }
}

/// The constant buffers and texture units of one stage.
pub(super) fn stage_resources(
    bindings: &StageBindings,
    pass: &Pass,
    frame: &FrameState<'_>,
    output_size: (u32, u32),
    mvp: &[f32; 16],
) -> (Vec<Vec<[u32; 4]>>, TextureUnits) {
    let buffers = bindings
        .buffers
        .iter()
        .map(|b| b.buffer as usize + 1)
        .max()
        .unwrap_or(0);
    let mut constants = vec![Vec::new(); buffers];
    for buffer in &bindings.buffers {
        let mut data = vec![0u8; (buffer.size as usize).div_ceil(16) * 16];
        for member in &buffer.members {
            let value = uniform_value(&member.semantic, pass, frame, output_size, mvp);
            write_member(&mut data, member, &value);
        }
        constants[buffer.buffer as usize] = data
            .chunks_exact(16)
            .map(|c| {
                let w = |i: usize| u32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
                [w(0), w(4), w(8), w(12)]
            })
            .collect();
    }
    // Out-of-range texelFetch reads zero, as on lavapipe and the GPUs RetroArch runs on (shaders
    // such as dithering/blue_noise fetch past the end of a LUT), not softpipe's edge texel.
    let mut units = TextureUnits::new()
        .with_fetch_bounds(FetchBounds::Zero)
        .with_filter_rule(pass.driver.filter_rule());
    for t in &bindings.textures {
        if let Some((texture, sampler)) = frame.bound(t.semantic, pass.config.index) {
            units.bind(t.unit, texture, sampler);
        }
    }
    (constants, units)
}

/// The names the preset defines on top of the built-in semantics: every pass's
/// `#pragma parameter`s, the pass aliases (`aliasN`, else the shader's `#pragma name`) and the
/// LUT names.
pub(super) fn semantic_names(
    preset: &Preset,
    shaders: &BTreeMap<PathBuf, PassShader>,
) -> SemanticNames {
    let mut names = SemanticNames::default();
    for pass in &preset.passes {
        for p in &shaders[&pass.shader].parameters {
            names.parameters.insert(p.id.clone());
        }
        let alias = pass.alias.as_ref().or(shaders[&pass.shader].name.as_ref());
        if let Some(alias) = alias.filter(|a| !a.trim().is_empty()) {
            names.aliases.insert(alias.clone(), pass.index);
        }
    }
    for (i, lut) in preset.textures.iter().enumerate() {
        names.luts.insert(lut.name.clone(), i);
    }
    names
}
