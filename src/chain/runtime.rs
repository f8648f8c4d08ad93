//! The filter-chain runtime: compiles a preset's passes, then renders frames through them with
//! librashader's semantics (the reference peer): per pass a full-screen quad into its own target,
//! the last pass into the viewport, input history, feedback of the previous frame's outputs,
//! mipmaps for `mipmap_input`, LUTs, and the uniforms of every semantic.
//!
//! Behaviour taken from librashader (`librashader-runtime-vk/src/filter_chain.rs`):
//! - `Original` and `OriginalHistoryN` are sampled with pass 0's filter and wrap mode; `Source`
//!   with the current pass's; `PassOutputN` and `PassFeedbackN` with pass N's.
//! - Offscreen passes draw the quad (-1,-1)..(1,1) with an identity `MVP`; the last pass draws
//!   (0,0)..(1,1) with the orthographic `MVP` into the viewport. Targets are cleared to
//!   transparent black before each pass.
//! - History and feedback start as transparent black: history images are 1x1 until the first
//!   frame is pushed, feedback images have their pass's size.
//! - When a pass reads the last pass's feedback, the last pass also renders into its own target
//!   (at its scaled size), and its `OutputSize` in the viewport draw is that target's size.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::exec::{QuadShader, ShaderResources, ShaderSignature};
use crate::ir::lpmath::MathMode;
use crate::ir::opt::KnownConstants;
use crate::ir::texelfn::{hoist_texel_functions, TexelFunction};
use crate::ir::{Program, SamplerHint};
use crate::raster::{self, ClipConvention, DrawState, FragCoordConvention, Vertices};
use crate::shader::{
    build_pass, build_shader, Executor, PassShader, ShaderCache, ShaderCacheStats, Specialization,
    BUILD_ID,
};
use crate::texture::{FetchBounds, Filter, Format, SamplerState, Texture, TextureUnits, Wrap};

use super::preset::{
    load_preset, FilterMode, PassConfig, Preset, ScaleFactor, ScaleType, WildcardContext, WrapMode,
};
use super::semantics::{
    bind_stage, size_vec4, write_member, SemanticNames, StageBindings, TextureSemantic,
    UniformSemantic, UniformValue,
};
use super::ChainError;

/// Largest side of any pass target (RetroArch's and librashader's limit).
pub const MAX_TARGET_SIZE: u32 = 16384;

/// The identity matrix offscreen passes get as `MVP`.
const IDENTITY_MVP: [f32; 16] = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

/// The orthographic projection of (0,0)..(1,1) onto clip space the last pass gets as `MVP`.
const FINAL_MVP: [f32; 16] = [
    2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, -1.0, 0.0, 1.0,
];

/// How a chain is built.
#[derive(Clone, Debug, Default)]
pub struct ChainOptions {
    /// JIT (default) or interpreter.
    pub executor: Executor,
    /// Parameter values that override the shaders' defaults and the preset's values.
    pub parameters: Vec<(String, f32)>,
    /// Values of the preset path wildcards (`$CORE$`, …).
    pub wildcards: WildcardContext,
    /// How sRGB render targets (`srgb_framebuffer`, `#pragma format R8G8B8A8_SRGB`) convert.
    pub srgb_curve: SrgbCurve,
    /// How EX2/LG2/POW/SIN/COS compute: glibc-exact (default) or llvmpipe/lavapipe's bits.
    pub math: MathMode,
    /// Run fragment programs as compiled instead of specialized for the textures each pass
    /// binds and the parameters it reads (`ir::opt::specialize`, `fold_known_constants`; the
    /// same pixels either way).
    pub skip_specialization: bool,
    /// The directory of the on-disk cache of compiled pass shaders (see
    /// [`crate::shader`]); `None` compiles every shader (the default for the library;
    /// `softgpu render` uses [`super::default_shader_cache_dir`]).
    pub shader_cache: Option<PathBuf>,
}

/// The sRGB transfer curve of sRGB render targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SrgbCurve {
    /// The exact curve, as GPUs and Mesa's softpipe convert (within a step of rounding).
    #[default]
    Exact,
    /// Mesa llvmpipe/lavapipe's fast approximations (a cubic decode, a rational encode), for
    /// matching images rendered on that driver: shaders that amplify dark sRGB values (e.g.
    /// crt-royale's mask "undim") show its conversion error several steps wide.
    Llvmpipe,
}

/// The per-frame inputs besides the image (librashader's `FrameOptions`).
#[derive(Clone, Debug)]
pub struct FrameOptions {
    /// `FrameDirection`: 1 forwards, -1 when rewinding.
    pub frame_direction: i32,
    /// `Rotation` in quarter turns (0..=3).
    pub rotation: u32,
    /// `TotalSubFrames`.
    pub total_subframes: u32,
    /// `CurrentSubFrame`.
    pub current_subframe: u32,
    /// `OriginalAspect`; 0 takes the input image's aspect ratio.
    pub aspect_ratio: f32,
    /// `OriginalFPS`.
    pub frames_per_second: f32,
    /// `FrameTimeDelta` in milliseconds.
    pub frametime_delta: u32,
}

impl Default for FrameOptions {
    /// librashader's defaults.
    fn default() -> FrameOptions {
        FrameOptions {
            frame_direction: 1,
            rotation: 0,
            total_subframes: 1,
            current_subframe: 1,
            aspect_ratio: 0.0,
            frames_per_second: 1.0,
            frametime_delta: 0,
        }
    }
}

/// A shader only some draws need, compiled by the first (or why it did not compile).
type LazyShader = OnceLock<Result<Box<dyn QuadShader>, String>>;

/// One compiled pass.
struct Pass {
    config: PassConfig,
    /// `pass N (file)`, for messages.
    label: String,
    vertex: Box<dyn QuadShader>,
    /// The fragment shader specialized for `fragment_units` (see
    /// [`TextureUnits::level_independent_units`]).
    fragment: Box<dyn QuadShader>,
    /// Texture units the specialized fragment shader assumes level-independent.
    fragment_units: u64,
    /// The fragment program as compiled, for frames that bind a unit otherwise (built the first
    /// time one does).
    fragment_program: Program,
    fragment_generic: LazyShader,
    /// The sampler hints the specialized fragment shader was compiled with.
    sampler_hints: Vec<SamplerHint>,
    /// Draws that bound a hinted unit with another state than its hint.
    sampler_hint_misses: AtomicU64,
    /// The functions of nearest texels the specialized fragment shader reads from derived
    /// textures (`ir::texelfn`), which each draw renders first.
    texel_prepasses: Vec<TexelPrepass>,
    /// Draws whose bound textures broke a texel function's preconditions, or made its
    /// pre-pass cost more than it saves: they ran the specialized program as it was before
    /// the functions were hoisted.
    texel_prepass_fallbacks: AtomicU64,
    /// That program (when there are texel functions), compiled the first time it is needed.
    fragment_unhoisted: Option<(Program, LazyShader)>,
    /// Operands of the fragment program that read a parameter (or another frame-invariant
    /// constant) and were folded into immediates.
    folded_constants: usize,
    executor: Executor,
    math: MathMode,
    frag_coord: FragCoordConvention,
    vertex_attributes: usize,
    format: Format,
    vertex_bindings: StageBindings,
    fragment_bindings: StageBindings,
    /// Instructions of the specialized fragment program (for [`PassTiming`]).
    fragment_instructions: usize,
}

/// Where one pass's time went over the frames a chain rendered (see
/// [`FilterChain::pass_timings`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassTiming {
    /// `pass N (file)`.
    pub label: String,
    /// The size of the pass's target in the last frame.
    pub size: (u32, u32),
    /// Instructions of the fragment program the pass runs (after specialization).
    pub fragment_instructions: usize,
    /// Frames that drew the pass.
    pub frames: u64,
    /// Wall time drawing it (texel pre-passes included), over all frames.
    pub draw: Duration,
    /// Wall time preparing its output for the next passes (mipmaps, decoding), over all frames.
    pub prepare: Duration,
}

/// A texel function's pre-pass, compiled.
struct TexelPrepass {
    source_unit: u32,
    derived_unit: u32,
    /// The program's lookups it serves.
    lookups: usize,
    vertex: Box<dyn QuadShader>,
    fragment: Box<dyn QuadShader>,
    frag_coord: FragCoordConvention,
}

/// The pre-passes' vertex program: the full-screen quad's clip-space positions as given.
const PREPASS_VERTEX_PROGRAM: &str =
    "VERT\nDCL IN[0]\nDCL OUT[0], POSITION\n  0: MOV OUT[0], IN[0]\n  1: END\n";

impl TexelPrepass {
    fn build(function: &TexelFunction, options: &ChainOptions) -> Result<TexelPrepass, String> {
        let vertex_program = crate::ir::text::parse_program(PREPASS_VERTEX_PROGRAM)
            .map_err(|e| format!("texel pre-pass vertex program: {e}"))?;
        let vertex = build_shader(&vertex_program, options.executor, options.math)
            .map_err(|e| e.to_string())?;
        let fragment = build_shader(&function.program, options.executor, options.math)
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
    fn render(
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
            },
            fragment_resources: ShaderResources {
                constants,
                textures: units,
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
    fn key(&self) -> String {
        let mut constants: Vec<_> = self.constants.iter().collect();
        constants.sort();
        format!(
            "units {:#x} nearest {:#x}\nconstants {constants:?}\n{}",
            self.fragment_units,
            self.nearest_units,
            crate::ir::text::print_program(self.program)
        )
    }

    /// Folds the constants, then rewrites the program (`ir::opt::specialization_candidate`)
    /// where that pays, and hoists its texel functions into pre-passes.
    fn specialize(&self) -> Specialization {
        let mut specialized = self.program.clone();
        let folded_constants =
            crate::ir::opt::fold_known_constants(&mut specialized, self.constants);
        // (the rewrite with its texel functions hoisted, those functions)
        let mut hoisted_candidate = None;
        if let Some(candidate) =
            crate::ir::opt::specialization_candidate(&specialized, self.fragment_units)
        {
            if crate::ir::opt::rewrite_pays(&specialized, &candidate) {
                specialized = candidate;
            } else {
                // Branches turned into selects can free texel functions that the branches
                // hid (the sRGB curve's `c <= 0.04045 ? … : pow(…)` once a parameter has
                // folded the branches around it), and their pre-pass can make it pay.
                let mut hoisted = candidate.clone();
                let functions = hoist_texel_functions(&mut hoisted, self.nearest_units);
                if !functions.is_empty() && crate::ir::opt::rewrite_pays(&specialized, &hoisted) {
                    hoisted_candidate = Some((hoisted, functions));
                }
            }
        }
        let (unhoisted, texel_functions) = match hoisted_candidate {
            // Draws that cannot use the pre-pass run the program as it was before the
            // rewrite, which pays only with the pre-pass.
            Some((hoisted, functions)) => (std::mem::replace(&mut specialized, hoisted), functions),
            None => {
                let unhoisted = specialized.clone();
                let functions = hoist_texel_functions(&mut specialized, self.nearest_units);
                (unhoisted, functions)
            }
        };
        Specialization {
            folded_constants,
            program: specialized,
            unhoisted: (!texel_functions.is_empty()).then_some(unhoisted),
            texel_functions,
        }
    }
}

/// A pass bound and checked, before its shaders are built.
struct PassPlan<'a> {
    config: &'a PassConfig,
    shader: &'a PassShader,
    label: String,
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

impl PassPlan<'_> {
    /// Specializes (or takes the specialization from `cache`) and compiles the pass's shaders
    /// (passes are built in parallel).
    fn build(
        self,
        options: &ChainOptions,
        cache: Option<&ShaderCache>,
    ) -> Result<Pass, ChainError> {
        let vertex = build_shader(
            &self.shader.vertex.lowered.program,
            options.executor,
            options.math,
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
        let fragment = build_shader(&specialized, options.executor, options.math)
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
            vertex_attributes,
            format: self.format,
            vertex_bindings: self.vertex_bindings,
            fragment_bindings: self.fragment_bindings,
            fragment_instructions,
        })
    }
}

/// A lookup texture with the filter and wrap mode it is sampled with.
struct Lut {
    texture: Arc<Texture>,
    /// Its filter and wrap mode ([`lut_sampling`]).
    sampling: (Filter, Wrap),
}

/// A compiled preset, ready to render frames. Holds the history and feedback between frames.
pub struct FilterChain {
    preset_path: PathBuf,
    passes: Vec<Pass>,
    luts: Vec<Lut>,
    parameters: HashMap<String, f32>,
    history_depth: usize,
    feedback_passes: BTreeSet<usize>,
    last_pass_feedback: bool,
    history: Vec<Arc<Texture>>,
    previous_outputs: Vec<Option<Arc<Texture>>>,
    /// Decode each pass output for the JIT's inline sampling right after rendering it, on every
    /// core (the next pass's first lookup would otherwise decode it on one thread while the
    /// others wait for it).
    predecode_outputs: bool,
    shader_cache_stats: ShaderCacheStats,
    timings: Vec<PassTiming>,
}

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
fn sampler_for(filter: Filter, wrap: Wrap, texture: &Texture) -> SamplerState {
    let mip = (texture.level_count() > 1).then_some(filter);
    SamplerState::new(filter, wrap).with_mip_filter(mip)
}

/// The filter and wrap mode of samplers that follow `config`'s pass.
fn pass_sampling(config: &PassConfig) -> (Filter, Wrap) {
    (pass_filter(config), to_wrap(config.wrap_mode))
}

/// The filter and wrap mode of a LUT's sampler.
fn lut_sampling(lut: &crate::chain::preset::TextureConfig) -> (Filter, Wrap) {
    (to_filter(lut.filter), to_wrap(lut.wrap_mode))
}

/// Whose filter and wrap mode a pass samples a texture with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SamplingOf {
    /// The pass of this index's ([`pass_sampling`]).
    Pass(usize),
    /// The LUT of this index's ([`lut_sampling`]).
    Lut(usize),
}

/// Whose filter and wrap mode pass `reader` samples the texture of `semantic` with (librashader's
/// rule): input frames (`Original`, the history) the first pass's, `Source` the reading pass's
/// own, a pass's output and feedback that pass's, a LUT its own. The frame loop binds samplers
/// by it, and the chain predicts each pass's sampler hints by it.
fn sampling_of(semantic: TextureSemantic, reader: usize) -> SamplingOf {
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

fn blank(width: u32, height: u32) -> Result<Arc<Texture>, ChainError> {
    Texture::new(Format::R8G8B8A8Unorm, width, height, 1)
        .map(Arc::new)
        .map_err(|e| ChainError::new(e.to_string()))
}

/// Loads a LUT image (PNG or JPEG; palette, grey and 16-bit PNGs are converted to RGBA8).
fn load_lut(name: &str, path: &Path, mipmap: bool) -> Result<Texture, ChainError> {
    let base = Texture::load(path)
        .map_err(|e| ChainError::new(format!("LUT `{name}` ({}): {e}", path.display())))?;
    if !mipmap {
        return Ok(base);
    }
    let (w, h) = (base.width(), base.height());
    let mut tex = Texture::new(base.format(), w, h, Texture::full_mip_levels(w, h))
        .map_err(|e| ChainError::new(format!("LUT `{name}`: {e}")))?;
    tex.level_data_mut(0).copy_from_slice(base.level_data(0));
    tex.generate_mipmaps();
    Ok(tex)
}

/// The size a pass renders at, from its scale rules (rounded, clamped to 1..=16384).
fn scaled_size(
    config: &PassConfig,
    source: (u32, u32),
    viewport: (u32, u32),
    original: (u32, u32),
) -> (u32, u32) {
    let axis = |scaling: &super::preset::Scaling, src: u32, vp: u32, orig: u32| -> u32 {
        let factor = |f: ScaleFactor| match f {
            ScaleFactor::Float(f) => f,
            ScaleFactor::Absolute(a) => a as f32,
        };
        let v = match scaling.scale_type {
            ScaleType::Source => src as f32 * factor(scaling.factor),
            ScaleType::Viewport => vp as f32 * factor(scaling.factor),
            ScaleType::Original => orig as f32 * factor(scaling.factor),
            ScaleType::Absolute => match scaling.factor {
                ScaleFactor::Absolute(a) => a as f32,
                ScaleFactor::Float(f) => f,
            },
        };
        let r = v.round();
        if r.is_nan() || r < 1.0 {
            1
        } else if r > MAX_TARGET_SIZE as f32 {
            MAX_TARGET_SIZE
        } else {
            r as u32
        }
    };
    (
        axis(&config.scale.x, source.0, viewport.0, original.0),
        axis(&config.scale.y, source.1, viewport.1, original.1),
    )
}

impl FilterChain {
    /// Parses a preset and compiles every pass (in parallel), loads its LUTs and resolves every
    /// uniform and texture of every pass to a semantic.
    pub fn load(path: &Path, options: &ChainOptions) -> Result<FilterChain, ChainError> {
        let preset =
            load_preset(path, &options.wildcards).map_err(|e| ChainError::new(e.to_string()))?;
        FilterChain::from_preset(&preset, options)
    }

    /// Builds a chain from a parsed preset.
    pub fn from_preset(preset: &Preset, options: &ChainOptions) -> Result<FilterChain, ChainError> {
        if preset.passes.is_empty() {
            return Err(ChainError::new(format!(
                "{}: the preset has no passes",
                preset.path.display()
            )));
        }
        // Compile each distinct shader file once, in parallel.
        let files: Vec<PathBuf> = preset
            .passes
            .iter()
            .map(|p| p.shader.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let cache = options.shader_cache.clone().map(ShaderCache::new);
        // Kernels compiled for speed go to the same directory (process-wide: the last chain
        // built decides).
        softgpu_jit::codegen::disk::set_kernel_cache(options.shader_cache.clone(), BUILD_ID);
        let compiled: Vec<Result<PassShader, ChainError>> = files
            .par_iter()
            .map(|f| build_pass(f, cache.as_ref()).map_err(|e| ChainError::new(e.to_string())))
            .collect();
        let mut shaders = BTreeMap::new();
        for (file, result) in files.into_iter().zip(compiled) {
            let shader = result.map_err(|e| {
                // Name the preset line that asked for the shader, then what went wrong in it.
                match preset.passes.iter().find(|p| p.shader == file) {
                    Some(p) => ChainError::new(format!(
                        "{}:{}: shader{}: {}",
                        p.shader_origin.0.display(),
                        p.shader_origin.1,
                        p.index,
                        e.message
                    )),
                    None => e,
                }
            })?;
            shaders.insert(file, shader);
        }

        let mut names = SemanticNames::default();
        let mut defaults: HashMap<String, f32> = HashMap::new();
        for pass in &preset.passes {
            for p in &shaders[&pass.shader].parameters {
                names.parameters.insert(p.id.clone());
                defaults.insert(p.id.clone(), p.initial);
            }
            let alias = pass.alias.as_ref().or(shaders[&pass.shader].name.as_ref());
            if let Some(alias) = alias.filter(|a| !a.trim().is_empty()) {
                names.aliases.insert(alias.clone(), pass.index);
            }
        }
        for (i, lut) in preset.textures.iter().enumerate() {
            names.luts.insert(lut.name.clone(), i);
        }
        let mut parameters = defaults;
        for p in &preset.parameters {
            if parameters.contains_key(&p.name) {
                parameters.insert(p.name.clone(), p.value);
            }
        }
        for (name, value) in &options.parameters {
            if !parameters.contains_key(name) {
                let mut known: Vec<&String> = parameters.keys().collect();
                known.sort();
                return Err(ChainError::new(format!(
                    "--param {name}: no pass of {} declares `#pragma parameter {name}`; known \
                     parameters: {}",
                    preset.path.display(),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                )));
            }
            parameters.insert(name.clone(), *value);
        }

        // Bindings in order (cheap, and their errors come first), then the shaders of every pass
        // specialized and compiled in parallel.
        let mut plans = Vec::with_capacity(preset.passes.len());
        for config in &preset.passes {
            let shader = &shaders[&config.shader];
            let label = format!("pass {} ({})", config.index, config.shader.display());
            let vertex_bindings = bind_stage(
                &format!("{label}, vertex"),
                config.index,
                &shader.vertex.lowered,
                &shader.vertex.reflection,
                &names,
            )?;
            let fragment_bindings = bind_stage(
                &format!("{label}, fragment"),
                config.index,
                &shader.fragment.lowered,
                &shader.fragment.reflection,
                &names,
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
                (format, _) => format,
            };
            let fragment_units = if options.skip_specialization {
                0
            } else {
                predicted_level_independent_units(preset, config, &fragment_bindings)
            };
            let sampler_hints = predicted_sampler_hints(
                preset,
                config,
                &fragment_bindings,
                fragment_units,
                !options.skip_specialization,
            );
            let nearest_units =
                predicted_nearest_units(preset, config, &fragment_bindings, fragment_units);
            let fragment_constants = frame_invariant_constants(&fragment_bindings, &parameters);
            plans.push(PassPlan {
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
            });
        }

        // The LUTs load while the passes build: a large pass compiles on one core for a while.
        // (Collected whole, then the first error in pass order: the same message every run.)
        let (built, luts) = rayon::join(
            || {
                plans
                    .into_par_iter()
                    .map(|plan| plan.build(options, cache.as_ref()))
                    .collect::<Vec<Result<Pass, ChainError>>>()
            },
            || {
                preset
                    .textures
                    .par_iter()
                    .map(|t| {
                        let texture = load_lut(&t.name, &t.path, t.mipmap)?;
                        Ok(Lut {
                            texture: Arc::new(texture),
                            sampling: lut_sampling(t),
                        })
                    })
                    .collect::<Vec<Result<Lut, ChainError>>>()
            },
        );
        let shader_cache_stats = cache.map(|c| c.stats()).unwrap_or_default();
        let passes = built
            .into_iter()
            .collect::<Result<Vec<Pass>, ChainError>>()?;
        let luts = luts.into_iter().collect::<Result<Vec<_>, ChainError>>()?;

        let mut history_depth = 0;
        let mut feedback_passes = BTreeSet::new();
        for pass in &passes {
            for stage in [&pass.vertex_bindings, &pass.fragment_bindings] {
                for sem in stage.texture_semantics() {
                    match sem {
                        TextureSemantic::OriginalHistory(n) => history_depth = history_depth.max(n),
                        TextureSemantic::PassFeedback(n) => {
                            feedback_passes.insert(n);
                        }
                        _ => {}
                    }
                }
            }
        }
        let last_pass_feedback = feedback_passes.contains(&(passes.len() - 1));
        let history = (0..history_depth)
            .map(|_| blank(1, 1))
            .collect::<Result<Vec<_>, _>>()?;
        let timings = passes
            .iter()
            .map(|p| PassTiming {
                label: p.label.clone(),
                fragment_instructions: p.fragment_instructions,
                ..PassTiming::default()
            })
            .collect();
        Ok(FilterChain {
            timings,
            preset_path: preset.path.clone(),
            previous_outputs: vec![None; passes.len()],
            passes,
            luts,
            parameters,
            history_depth,
            feedback_passes,
            last_pass_feedback,
            history,
            predecode_outputs: options.executor == Executor::Jit,
            shader_cache_stats,
        })
    }

    /// What the on-disk shader cache did while the chain was built (all zero without one).
    pub fn shader_cache_stats(&self) -> ShaderCacheStats {
        self.shader_cache_stats
    }

    /// Where each pass's time went in the frames rendered so far, in pass order.
    pub fn pass_timings(&self) -> &[PassTiming] {
        &self.timings
    }

    /// The number of passes.
    pub fn pass_count(&self) -> usize {
        self.passes.len()
    }

    /// How many fragment texture units, over all passes, have a sampler hint (their inline
    /// texture sites are compiled for one sampler state).
    pub fn sampler_hint_count(&self) -> usize {
        self.sum_over_passes(|p| p.sampler_hints.len() as u64) as usize
    }

    /// Pass draws so far that bound a texture unit with another sampler state than the pass's
    /// sampler hints predicted from the preset (see [`Program::sampler_hints`]): such a draw
    /// runs its hinted texture sites on the general path, slower but with the same pixels.
    pub fn sampler_hint_misses(&self) -> u64 {
        self.sum_over_passes(|p| p.sampler_hint_misses.load(Ordering::Relaxed))
    }

    /// How many functions of nearest texels the passes compute once per texel in a pre-pass
    /// instead of at every lookup (see `ir::texelfn`).
    pub fn texel_prepass_count(&self) -> usize {
        self.sum_over_passes(|p| p.texel_prepasses.len() as u64) as usize
    }

    /// Pass draws so far whose bound textures broke a texel function's preconditions (a
    /// filter other than nearest, or a border the function does not keep): they ran the
    /// pass's fragment program as compiled, slower but with the same pixels.
    pub fn texel_prepass_fallbacks(&self) -> u64 {
        self.sum_over_passes(|p| p.texel_prepass_fallbacks.load(Ordering::Relaxed))
    }

    /// Fragment-program operands that read a shader parameter (or another constant that is the
    /// same in every frame) and were folded into the programs as immediates when the chain was
    /// built (none with `skip_specialization`).
    pub fn folded_constant_count(&self) -> usize {
        self.sum_over_passes(|p| p.folded_constants as u64) as usize
    }

    fn sum_over_passes(&self, count: impl Fn(&Pass) -> u64) -> u64 {
        self.passes.iter().map(count).sum()
    }

    /// The value of every parameter (shader defaults, then the preset's, then the options').
    pub fn parameters(&self) -> &HashMap<String, f32> {
        &self.parameters
    }

    /// How many previous input frames the chain keeps (the largest `OriginalHistoryN` read).
    pub fn history_depth(&self) -> usize {
        self.history_depth
    }

    /// Renders frame `frame_count` of `input` into an `R8G8B8A8_UNORM` image of `viewport` size
    /// (row 0 at the top), then remembers the input and the pass outputs for the next frame.
    pub fn frame(
        &mut self,
        input: &Arc<Texture>,
        viewport: (u32, u32),
        frame_count: u64,
        options: &FrameOptions,
    ) -> Result<Texture, ChainError> {
        if viewport.0 == 0
            || viewport.1 == 0
            || viewport.0 > MAX_TARGET_SIZE
            || viewport.1 > MAX_TARGET_SIZE
        {
            return Err(ChainError::new(format!(
                "output size {}x{} is invalid: each side must be 1..={MAX_TARGET_SIZE}",
                viewport.0, viewport.1
            )));
        }
        let original_size = (input.width(), input.height());
        let count = self.passes.len();

        // Sizes of every pass target, from the scale rules.
        let mut sizes = Vec::with_capacity(count);
        let mut source_size = original_size;
        for pass in &self.passes {
            let size = scaled_size(&pass.config, source_size, viewport, original_size);
            sizes.push(size);
            source_size = size;
        }

        // Feedback: the previous frame's outputs, transparent black when missing or resized.
        let mut feedback: Vec<Option<Arc<Texture>>> = vec![None; count];
        for &i in &self.feedback_passes {
            let (w, h) = sizes[i];
            feedback[i] = Some(match self.previous_outputs[i].take() {
                Some(t) if t.width() == w && t.height() == h => t,
                _ => blank(w, h)?,
            });
        }

        let mut outputs: Vec<Option<Arc<Texture>>> = vec![None; count];
        let mut source = input.clone();
        let mut result = None;
        for index in 0..count {
            let pass = &self.passes[index];
            let pass_source = source.clone();
            // The pass outputs grow during the frame: each draw adds the current ones.
            let base = FrameState {
                passes: &self.passes,
                original: input,
                source: &pass_source,
                history: &self.history,
                outputs: &[],
                feedback: &feedback,
                luts: &self.luts,
                parameters: &self.parameters,
                viewport,
                frame_count,
                options,
            };
            let last = index + 1 == count;
            // Only a pass with a successor can feed a `mipmap_input`.
            let mipmaps = self
                .passes
                .get(index + 1)
                .is_some_and(|next| next.config.mipmap_input);
            if !last || self.last_pass_feedback {
                let (w, h) = sizes[index];
                let levels = if mipmaps {
                    Texture::full_mip_levels(w, h)
                } else {
                    1
                };
                let mut target = Texture::new(pass.format, w, h, levels)
                    .map_err(|e| ChainError::new(format!("{}: target: {e}", pass.label)))?;
                let started = Instant::now();
                draw_pass(
                    pass,
                    &FrameState {
                        outputs: &outputs,
                        ..base
                    },
                    &mut target,
                    (w, h),
                    &IDENTITY_MVP,
                    false,
                )?;
                let drawn = Instant::now();
                if levels > 1 {
                    target.generate_mipmaps();
                }
                if self.predecode_outputs {
                    target.decoded_levels();
                }
                let timing = &mut self.timings[index];
                timing.size = (w, h);
                timing.draw += drawn - started;
                timing.prepare += drawn.elapsed();
                if !last {
                    timing.frames += 1;
                }
                let target = Arc::new(target);
                outputs[index] = Some(target.clone());
                source = target;
            }
            if last {
                let output_size = if self.last_pass_feedback {
                    sizes[index]
                } else {
                    viewport
                };
                let mut target = Texture::new(Format::R8G8B8A8Unorm, viewport.0, viewport.1, 1)
                    .map_err(|e| ChainError::new(format!("{}: output: {e}", pass.label)))?;
                let started = Instant::now();
                draw_pass(
                    pass,
                    &FrameState {
                        outputs: &outputs,
                        ..base
                    },
                    &mut target,
                    output_size,
                    &FINAL_MVP,
                    true,
                )?;
                let timing = &mut self.timings[index];
                timing.size = viewport;
                timing.draw += started.elapsed();
                timing.frames += 1;
                result = Some(target);
            }
        }

        // Remember this frame for the next: the input as OriginalHistory1, pass outputs as
        // feedback.
        if self.history_depth > 0 {
            self.history.pop();
            self.history.insert(0, input.clone());
        }
        for &i in &self.feedback_passes {
            self.previous_outputs[i] = outputs[i].clone();
        }
        result.ok_or_else(|| {
            ChainError::new(format!(
                "{}: the chain produced no output",
                self.preset_path.display()
            ))
        })
    }
}

fn check_in_range(
    label: &str,
    sem: TextureSemantic,
    passes: usize,
    luts: usize,
) -> Result<(), ChainError> {
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

/// What a pass draw reads besides its own configuration.
#[derive(Clone, Copy)]
struct FrameState<'a> {
    passes: &'a [Pass],
    original: &'a Arc<Texture>,
    source: &'a Arc<Texture>,
    history: &'a [Arc<Texture>],
    outputs: &'a [Option<Arc<Texture>>],
    feedback: &'a [Option<Arc<Texture>>],
    luts: &'a [Lut],
    parameters: &'a HashMap<String, f32>,
    viewport: (u32, u32),
    frame_count: u64,
    options: &'a FrameOptions,
}

impl FrameState<'_> {
    /// The texture of `sem` in this frame.
    fn texture(&self, sem: TextureSemantic) -> Option<&Arc<Texture>> {
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
    fn bound(&self, sem: TextureSemantic, reader: usize) -> Option<(Arc<Texture>, SamplerState)> {
        let texture = self.texture(sem)?;
        let (filter, wrap) = match sampling_of(sem, reader) {
            SamplingOf::Pass(n) => pass_sampling(&self.passes.get(n)?.config),
            SamplingOf::Lut(n) => self.luts.get(n)?.sampling,
        };
        Some((texture.clone(), sampler_for(filter, wrap, texture)))
    }
}

fn uniform_value(
    sem: &UniformSemantic,
    pass: &Pass,
    frame: &FrameState<'_>,
    output_size: (u32, u32),
    mvp: &[f32; 16],
) -> UniformValue {
    let options = frame.options;
    let aspect = if options.aspect_ratio == 0.0 {
        frame.original.width() as f32 / frame.original.height() as f32
    } else {
        options.aspect_ratio
    };
    match sem {
        UniformSemantic::Mvp => UniformValue::Floats(mvp.to_vec()),
        UniformSemantic::OutputSize => size_vec4(output_size.0, output_size.1),
        UniformSemantic::FinalViewportSize => size_vec4(frame.viewport.0, frame.viewport.1),
        UniformSemantic::FrameCount => {
            let m = pass.config.frame_count_mod as u64;
            let count = if m > 0 {
                frame.frame_count % m
            } else {
                frame.frame_count
            };
            UniformValue::Uint(count as u32)
        }
        UniformSemantic::FrameDirection => UniformValue::Int(options.frame_direction),
        UniformSemantic::Rotation => UniformValue::Uint(options.rotation),
        UniformSemantic::TotalSubFrames => UniformValue::Uint(options.total_subframes),
        UniformSemantic::CurrentSubFrame => UniformValue::Uint(options.current_subframe),
        UniformSemantic::OriginalAspect => UniformValue::Floats(vec![aspect]),
        UniformSemantic::OriginalAspectRotated => {
            let rotated = if options.rotation == 1 || options.rotation == 3 {
                1.0 / aspect
            } else {
                aspect
            };
            UniformValue::Floats(vec![rotated])
        }
        UniformSemantic::OriginalFps => UniformValue::Floats(vec![options.frames_per_second]),
        UniformSemantic::FrameTimeDelta => UniformValue::Uint(options.frametime_delta),
        UniformSemantic::Fixed(_) | UniformSemantic::Parameter(_) => {
            frame_invariant_value(sem, frame.parameters)
                .expect("fixed uniforms and parameters have frame-invariant values")
        }
        UniformSemantic::TextureSize(t) => match frame.texture(*t) {
            Some(tex) => size_vec4(tex.width(), tex.height()),
            None => UniformValue::Floats(vec![0.0; 4]),
        },
    }
}

/// The value of a uniform that is the same in every frame of a chain — a shader parameter (fixed
/// when the chain is built) or one of librashader's HDR and sensor uniforms at its default —
/// or `None` for the uniforms that follow the frame.
fn frame_invariant_value(
    sem: &UniformSemantic,
    parameters: &HashMap<String, f32>,
) -> Option<UniformValue> {
    Some(match sem {
        UniformSemantic::Fixed(name) => match *name {
            "BrightnessNits" => UniformValue::Floats(vec![200.0]),
            "Scanlines" | "InverseTonemap" | "HDR10" => UniformValue::Floats(vec![0.0]),
            "Gyroscope" | "Accelerometer" | "AccelerometerRest" => {
                UniformValue::Floats(vec![0.0; 3])
            }
            _ => UniformValue::Uint(0),
        },
        UniformSemantic::Parameter(name) => {
            UniformValue::Floats(vec![parameters.get(name).copied().unwrap_or(0.0)])
        }
        _ => return None,
    })
}

/// The constant-buffer components of a stage that every frame fills with the same bits: those
/// [`stage_resources`] writes from members with a [`frame_invariant_value`] (in member order,
/// as it writes them, so a later member over the same bytes wins there too).
fn frame_invariant_constants(
    bindings: &StageBindings,
    parameters: &HashMap<String, f32>,
) -> KnownConstants {
    let mut known = KnownConstants::default();
    for buffer in &bindings.buffers {
        let len = (buffer.size as usize).div_ceil(16) * 16;
        let mut data = vec![0u8; len];
        let mut invariant = vec![false; len];
        for member in &buffer.members {
            let value = frame_invariant_value(&member.semantic, parameters);
            if let Some(value) = &value {
                write_member(&mut data, member, value);
            }
            let start = (member.offset as usize).min(len);
            let end = (start + 4 * member.ty.components as usize).min(len);
            invariant[start..end].fill(value.is_some());
        }
        for (word, bytes) in data.chunks_exact(4).enumerate() {
            if invariant[word * 4..word * 4 + 4].iter().all(|&k| k) {
                let bits = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                let entry = known
                    .entry((buffer.buffer, (word / 4) as u32))
                    .or_insert([None; 4]);
                entry[word % 4] = Some(bits);
            }
        }
    }
    known
}

/// The constant buffers and texture units of one stage.
fn stage_resources(
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
    let mut units = TextureUnits::new().with_fetch_bounds(FetchBounds::Zero);
    for t in &bindings.textures {
        if let Some((texture, sampler)) = frame.bound(t.semantic, pass.config.index) {
            units.bind(t.unit, texture, sampler);
        }
    }
    (constants, units)
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
        let absolute = |s: &super::preset::Scaling| s.scale_type == ScaleType::Absolute;
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
fn bind_derived_textures(
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

/// A fragment shader of `pass` that only some draws need, compiled by the first.
fn compiled_once<'a>(
    pass: &Pass,
    program: &Program,
    cell: &'a LazyShader,
) -> Result<&'a dyn QuadShader, ChainError> {
    cell.get_or_init(|| build_shader(program, pass.executor, pass.math).map_err(|e| e.to_string()))
        .as_ref()
        .map(|shader| &**shader)
        .map_err(|e| ChainError::new(format!("{}, fragment: {e}", pass.label)))
}

/// Draws a pass's full-screen quad into `target`.
fn draw_pass(
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
        },
        fragment_resources: ShaderResources {
            constants: &fs_refs,
            textures: &fs_units,
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
fn quad_vertices(final_quad: bool, attributes: usize) -> Vec<[u32; 4]> {
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
    use crate::chain::preset::{Scale2D, Scaling};

    fn config(x: Scaling, y: Scaling) -> PassConfig {
        PassConfig {
            index: 0,
            shader: PathBuf::from("x.slang"),
            shader_origin: (PathBuf::from("x.slangp"), 2),
            alias: None,
            filter: None,
            wrap_mode: WrapMode::ClampToBorder,
            frame_count_mod: 0,
            srgb_framebuffer: false,
            float_framebuffer: false,
            mipmap_input: false,
            scale: Scale2D { valid: true, x, y },
        }
    }

    #[test]
    fn scale_rules_round_and_clamp() {
        let s = |t, f| Scaling {
            scale_type: t,
            factor: f,
        };
        let c = config(
            s(ScaleType::Source, ScaleFactor::Float(1.5)),
            s(ScaleType::Viewport, ScaleFactor::Float(0.5)),
        );
        assert_eq!(scaled_size(&c, (101, 7), (640, 481), (1, 1)), (152, 241));
        let c = config(
            s(ScaleType::Absolute, ScaleFactor::Absolute(3)),
            s(ScaleType::Original, ScaleFactor::Float(100000.0)),
        );
        assert_eq!(
            scaled_size(&c, (1, 1), (1, 1), (2, 2)),
            (3, MAX_TARGET_SIZE)
        );
        let c = config(
            s(ScaleType::Source, ScaleFactor::Float(0.0)),
            s(ScaleType::Source, ScaleFactor::Float(f32::NAN)),
        );
        assert_eq!(scaled_size(&c, (10, 10), (1, 1), (1, 1)), (1, 1));
    }

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
