//! The filter-chain runtime: builds a preset's passes, then renders frames through them with
//! librashader's semantics (the reference peer): per pass a full-screen quad into its own target,
//! the last pass into the viewport, input history, feedback of the previous frame's outputs,
//! mipmaps for `mipmap_input`, LUTs, and the uniforms of every semantic.
//!
//! This file holds the options and [`FilterChain`]: building it (each distinct shader file once
//! through [`crate::shader`], the passes planned in order, then specialized and compiled in
//! parallel while the LUTs load) and the frame loop. The rest, split the way librashader splits
//! its runtime: `scaling.rs` (target sizes), `binding.rs` (what a draw binds and with which
//! sampler), `uniforms.rs` (semantic values, parameters), `luts.rs`, `history.rs` (history and
//! feedback), `plan.rs` (binding a pass and predicting what to specialize it for), `prepass.rs`
//! (texel pre-passes) and `pass.rs` (a compiled pass and its draw).
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

mod binding;
mod history;
mod luts;
mod memory;
mod pass;
mod plan;
mod prepass;
mod reuse;
mod scaling;
mod uniforms;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::{Mat4, Vec4};
use rayon::prelude::*;

use crate::driver::Driver;
use crate::ir::MathMode;
use crate::shader::{build_pass, Executor, PassShader, ShaderCache, ShaderCacheStats, BUILD_ID};
use crate::texture::{Format, Texture};

use crate::chain::preset::{load_preset, Preset, WildcardContext};
use crate::chain::ChainError;
pub use crate::frontend::vulkan_glsl::FeatureDefines;

pub use scaling::MAX_TARGET_SIZE;

/// The most previous input frames a chain keeps: the deepest `OriginalHistoryN` a pass may read
/// (RetroArch keeps at most 128, `GFX_MAX_FRAME_HISTORY`).
pub const MAX_HISTORY_DEPTH: usize = 128;

use binding::{semantic_names, FrameState};
use history::History;
use luts::{check_lut_memory, load_luts, Lut};
use pass::{draw_pass, Pass};
use plan::PassPlan;
use reuse::{same_contents, DrawKey, Memo, PassMemo};
use scaling::scaled_size;
use uniforms::parameter_values;

/// The identity matrix offscreen passes get as `MVP` (column-major, as the uniform holds it).
const IDENTITY_MVP: [f32; 16] = Mat4::IDENTITY.to_cols_array();

/// The orthographic projection of (0,0)..(1,1) onto clip space the last pass gets as `MVP`:
/// x and y scaled by 2 and moved by -1, z flattened to 0 (librashader's `DEFAULT_MVP`).
const FINAL_MVP: [f32; 16] = Mat4::from_cols(
    Vec4::new(2.0, 0.0, 0.0, 0.0),
    Vec4::new(0.0, 2.0, 0.0, 0.0),
    Vec4::ZERO,
    Vec4::new(-1.0, -1.0, 0.0, 1.0),
)
.to_cols_array();

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
    /// The driver whose filtering, derivative and render-target conversion rules the passes
    /// follow ([`Driver::Softpipe`] by default). [`ChainOptions::with_driver`] sets `math` and
    /// `srgb_curve` to the driver's too; set them afterwards to override one rule.
    pub driver: Driver,
    /// Run fragment programs as compiled instead of specialized for the textures each pass
    /// binds and the parameters it reads (`opt::specialize`, `fold_known_constants`; the
    /// same pixels either way).
    pub skip_specialization: bool,
    /// The directory of the on-disk cache of compiled pass shaders (see
    /// [`crate::shader`]); `None` compiles every shader (the default for the library;
    /// `softgpu render` uses [`super::default_shader_cache_dir`]).
    pub shader_cache: Option<PathBuf>,
    /// The most bytes the buffers of a frame (targets, mip chains, history, feedback, LUTs,
    /// decoded copies, the output) may need; a frame that would need more is refused before it
    /// allocates. `None`: [`crate::budget::default_budget`].
    pub memory_budget: Option<u64>,
    /// The most pixels the passes of a frame may shade together (the sum of their target
    /// sizes); a frame that would shade more is refused before it is drawn. `None`:
    /// [`crate::budget::DEFAULT_PIXEL_BUDGET`].
    pub pixel_budget: Option<u64>,
    /// The feature macros (`_HAS_FRAMETIME_UNIFORMS`, …) defined in every `.slang` pass.
    /// RetroArch defines all of them ([`FeatureDefines::ALL`]); librashader none unless its
    /// host asks (the default here, as the reference peer renders).
    pub features: FeatureDefines,
    /// The values of the HDR and sensor uniforms (`HDRMode`, `BrightnessNits`,
    /// `ExpandGamut`, `Gyroscope`, …); fixed for the chain, so passes that read them are
    /// specialized for them. [`HostUniforms::color_space`] also sets the viewport's format.
    pub host: HostUniforms,
    /// Called as the chain loads: after each shader file compiles and each pass is built.
    pub progress: Option<LoadProgress>,
    /// Run only the first N passes (see [`FilterChain::set_enabled_passes`]); `None` runs all.
    pub passes_enabled: Option<usize>,
    /// Draw every pass in every frame, even one whose inputs did not change since the previous
    /// frame (by default such a pass reuses its previous output: the same pixels, for
    /// checking the reuse; see [`PassTiming::reused`]).
    pub redraw_unchanged: bool,
}

impl ChainOptions {
    /// These options with every rule of `driver`: its filtering, derivatives and target
    /// conversions, its math mode and its sRGB curve.
    pub fn with_driver(mut self, driver: Driver) -> ChainOptions {
        self.driver = driver;
        self.math = driver.math();
        self.srgb_curve = SrgbCurve::of(driver);
        self
    }
}

/// A step of [`FilterChain::load`], reported to [`ChainOptions::progress`].
#[derive(Clone, Debug)]
pub enum LoadStep {
    /// A shader file was compiled (or read from the shader cache): `done` of `total`.
    ShaderCompiled {
        /// Files compiled so far.
        done: usize,
        /// Distinct shader files of the preset.
        total: usize,
        /// The file just compiled.
        file: PathBuf,
    },
    /// A pass was specialized and its programs compiled: `done` of `total`.
    PassBuilt {
        /// Passes built so far.
        done: usize,
        /// Passes of the preset.
        total: usize,
        /// `pass N (file)` of the pass just built.
        label: String,
    },
}

/// A callback for [`LoadStep`]s; called from the worker threads that build the chain.
#[derive(Clone)]
pub struct LoadProgress(pub Arc<dyn Fn(LoadStep) + Send + Sync>);

impl std::fmt::Debug for LoadProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoadProgress(..)")
    }
}

impl LoadProgress {
    fn report(progress: &Option<LoadProgress>, step: impl FnOnce() -> LoadStep) {
        if let Some(p) = progress {
            (p.0)(step());
        }
    }
}

/// The display a chain renders for, as RetroArch's `HDRMode` names it; it also decides the
/// viewport's format (RetroArch picks its swapchain the same way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorSpace {
    /// Standard dynamic range: the viewport is `R8G8B8A8_UNORM` (`HDRMode` 0).
    #[default]
    Sdr = 0,
    /// HDR10, BT.2020 primaries with the PQ curve: the viewport is `A2B10G10R10_UNORM_PACK32`
    /// (`HDRMode` 1).
    Hdr10 = 1,
    /// scRGB, linear BT.709 with 1.0 = 80 nits: the viewport is `R16G16B16A16_SFLOAT`
    /// (`HDRMode` 2).
    ScRgb = 2,
    /// PQ-encoded values in an `R16G16B16A16_SFLOAT` viewport (`HDRMode` 3).
    PqScRgb = 3,
}

impl ColorSpace {
    /// The format of the viewport the last pass draws into.
    pub fn viewport_format(self) -> Format {
        match self {
            ColorSpace::Sdr => Format::R8G8B8A8Unorm,
            ColorSpace::Hdr10 => Format::A2B10G10R10UnormPack32,
            ColorSpace::ScRgb | ColorSpace::PqScRgb => Format::R16G16B16A16Sfloat,
        }
    }
}

/// What the frontend supplies for RetroArch's HDR and sensor uniforms; the defaults are
/// librashader's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostUniforms {
    /// `HDRMode` and the viewport's format.
    pub color_space: ColorSpace,
    /// `BrightnessNits`: the SDR reference white in nits.
    pub brightness_nits: f32,
    /// `ExpandGamut`: the gamut expansion mode.
    pub expand_gamut: u32,
    /// `Gyroscope` (x, y, z).
    pub gyroscope: [f32; 3],
    /// `Accelerometer` (x, y, z).
    pub accelerometer: [f32; 3],
    /// `AccelerometerRest` (x, y, z).
    pub accelerometer_rest: [f32; 3],
}

impl Default for HostUniforms {
    fn default() -> HostUniforms {
        HostUniforms {
            color_space: ColorSpace::Sdr,
            brightness_nits: 200.0,
            expand_gamut: 0,
            gyroscope: [0.0; 3],
            accelerometer: [0.0; 3],
            accelerometer_rest: [0.0; 3],
        }
    }
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
    /// NVIDIA's measured tables (a decode with 8 significant bits, an encode from 14-bit
    /// truncated values; `Format::R8G8B8A8SrgbNvidia`).
    Nvidia,
}

impl SrgbCurve {
    /// The curve `driver` converts sRGB targets with.
    pub fn of(driver: Driver) -> SrgbCurve {
        match driver {
            Driver::Softpipe => SrgbCurve::Exact,
            Driver::Llvmpipe => SrgbCurve::Llvmpipe,
            Driver::Nvidia => SrgbCurve::Nvidia,
        }
    }
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
    /// Frames that reused the pass's previous output: nothing it reads had changed (the same
    /// input texture contents, the same uniforms it reads, no history or feedback that
    /// changed; see [`ChainOptions::redraw_unchanged`]).
    pub reused: u64,
    /// Wall time drawing it (texel pre-passes included), over all frames.
    pub draw: Duration,
    /// Wall time preparing its output for the next passes (mipmaps, decoding), over all frames.
    pub prepare: Duration,
}

/// A compiled preset, ready to render frames. Holds the history and feedback between frames.
pub struct FilterChain {
    preset_path: PathBuf,
    passes: Vec<Pass>,
    luts: Vec<Lut>,
    parameters: HashMap<String, f32>,
    history: History,
    /// Decode each pass output for the JIT's inline sampling right after rendering it, on every
    /// core (the next pass's first lookup would otherwise decode it on one thread while the
    /// others wait for it).
    predecode_outputs: bool,
    shader_cache_stats: ShaderCacheStats,
    timings: Vec<PassTiming>,
    /// [`ChainOptions::memory_budget`], resolved.
    memory_budget: u64,
    /// [`ChainOptions::pixel_budget`], resolved.
    pixel_budget: u64,
    /// [`ChainOptions::host`].
    host: HostUniforms,
    /// How many passes, from the first, a frame runs ([`FilterChain::set_enabled_passes`]).
    enabled_passes: usize,
    /// Each pass's draws of the previous frame, for reusing them.
    memos: Vec<PassMemo>,
    /// The previous frame's input: an input with the same contents takes its identity.
    last_input: Option<Arc<Texture>>,
    /// [`ChainOptions::redraw_unchanged`].
    redraw_unchanged: bool,
    /// What the passes were built from, to build them again for new parameter values.
    source: Arc<ChainSource>,
}

/// A preset with its compiled shaders and the options of its chain: what
/// [`FilterChain::set_parameters`] builds the passes from again.
struct ChainSource {
    preset: Preset,
    shaders: BTreeMap<PathBuf, PassShader>,
    names: crate::chain::semantics::SemanticNames,
    options: ChainOptions,
}

impl ChainSource {
    /// Binds every pass (in order: cheap, and their errors come first), then specializes and
    /// compiles them in parallel for these parameter values; the first error in pass order
    /// wins, so a failing preset gives the same message every run.
    fn build_passes(
        &self,
        parameters: &HashMap<String, f32>,
        cache: Option<&ShaderCache>,
    ) -> Result<Vec<Pass>, ChainError> {
        let options = &self.options;
        let plans = self
            .preset
            .passes
            .iter()
            .map(|config| {
                PassPlan::new(
                    &self.preset,
                    config,
                    &self.shaders[&config.shader],
                    &self.names,
                    parameters,
                    options,
                )
            })
            .collect::<Result<Vec<_>, ChainError>>()?;
        let pass_total = plans.len();
        let built_count = AtomicUsize::new(0);
        plans
            .into_par_iter()
            .map(|plan| {
                let label = plan.label.clone();
                let pass = plan.build(options, cache);
                LoadProgress::report(&options.progress, || LoadStep::PassBuilt {
                    done: built_count.fetch_add(1, Ordering::Relaxed) + 1,
                    total: pass_total,
                    label,
                });
                pass
            })
            .collect::<Vec<Result<Pass, ChainError>>>()
            .into_iter()
            .collect()
    }
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
        let compiled_count = AtomicUsize::new(0);
        let compiled: Vec<Result<PassShader, ChainError>> = files
            .par_iter()
            .map(|f| {
                let built = build_pass(f, cache.as_ref(), options.features)
                    .map_err(|e| ChainError::new(e.to_string()));
                LoadProgress::report(&options.progress, || LoadStep::ShaderCompiled {
                    done: compiled_count.fetch_add(1, Ordering::Relaxed) + 1,
                    total: files.len(),
                    file: f.clone(),
                });
                built
            })
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

        let source = ChainSource {
            preset: preset.clone(),
            names: semantic_names(preset, &shaders),
            shaders,
            options: options.clone(),
        };
        let parameters = parameter_values(preset, &source.shaders, &options.parameters)?;

        let memory_budget = options
            .memory_budget
            .unwrap_or_else(crate::budget::default_budget);
        check_lut_memory(preset, memory_budget)?;

        // The LUTs load while the passes build: a large pass compiles on one core for a while.
        let (passes, luts) = rayon::join(
            || source.build_passes(&parameters, cache.as_ref()),
            || load_luts(preset),
        );
        let shader_cache_stats = cache.map(|c| c.stats()).unwrap_or_default();
        let passes = passes?;
        let luts = luts.into_iter().collect::<Result<Vec<_>, ChainError>>()?;

        let history = History::for_passes(&passes)?;
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
            host: options.host,
            memos: passes.iter().map(|_| PassMemo::default()).collect(),
            last_input: None,
            redraw_unchanged: options.redraw_unchanged,
            enabled_passes: options
                .passes_enabled
                .unwrap_or(passes.len())
                .clamp(1, passes.len()),
            preset_path: preset.path.clone(),
            source: Arc::new(source),
            passes,
            luts,
            parameters,
            history,
            predecode_outputs: options.executor == Executor::Jit,
            shader_cache_stats,
            memory_budget,
            pixel_budget: options
                .pixel_budget
                .unwrap_or(crate::budget::DEFAULT_PIXEL_BUDGET),
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

    /// Runs only the first `count` passes in the frames to come (librashader's
    /// `set_enabled_pass_count`, librashader-cli's `--passes-enabled`): the last of them draws
    /// into the viewport. `count` is clamped to 1..=[`FilterChain::pass_count`].
    pub fn set_enabled_passes(&mut self, count: usize) {
        self.enabled_passes = count.clamp(1, self.passes.len());
    }

    /// How many passes, from the first, a frame runs.
    pub fn enabled_passes(&self) -> usize {
        self.enabled_passes
    }

    /// The format of the images [`FilterChain::frame`] returns
    /// ([`ColorSpace::viewport_format`] of [`ChainOptions::host`], written as
    /// [`ChainOptions::driver`] converts: `Format::R8G8B8A8UnormNvidia` for NVIDIA).
    pub fn viewport_format(&self) -> Format {
        let format = self.host.color_space.viewport_format();
        self.source.options.driver.target_format(format)
    }

    /// How many fragment texture units, over all passes, have a sampler hint (their inline
    /// texture sites are compiled for one sampler state).
    pub fn sampler_hint_count(&self) -> usize {
        self.sum_over_passes(|p| p.sampler_hints.len() as u64) as usize
    }

    /// Pass draws so far that bound a texture unit with another sampler state than the pass's
    /// sampler hints predicted from the preset (see [`crate::ir::Program::sampler_hints`]): such a draw
    /// runs its hinted texture sites on the general path, slower but with the same pixels.
    pub fn sampler_hint_misses(&self) -> u64 {
        self.sum_over_passes(|p| p.sampler_hint_misses.load(Ordering::Relaxed))
    }

    /// How many functions of nearest texels the passes compute once per texel in a pre-pass
    /// instead of at every lookup (see `opt::texelfn`).
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

    /// The value of every parameter (shader defaults, then the preset's, then the options',
    /// then [`FilterChain::set_parameters`]').
    pub fn parameters(&self) -> &HashMap<String, f32> {
        &self.parameters
    }

    /// Sets shader parameters for the frames to come, keeping the history and feedback (as
    /// librashader's parameter updates do). Parameters are folded into the passes' programs, so
    /// the passes are specialized and compiled again (through the shader cache, when the chain
    /// has one, and the kernel cache); a name no pass declares, or a value that is not finite,
    /// is an error and changes nothing.
    pub fn set_parameters(&mut self, values: &[(String, f32)]) -> Result<(), ChainError> {
        let mut parameters = self.parameters.clone();
        for (name, value) in values {
            if !value.is_finite() {
                return Err(ChainError::new(format!(
                    "parameter {name}: the value must be finite, got {value}"
                )));
            }
            match parameters.get_mut(name) {
                Some(v) => *v = *value,
                None => {
                    return Err(ChainError::new(format!(
                        "parameter {name}: no pass of {} declares `#pragma parameter {name}`",
                        self.preset_path.display()
                    )))
                }
            }
        }
        if parameters == self.parameters {
            return Ok(());
        }
        let cache = self
            .source
            .options
            .shader_cache
            .clone()
            .map(ShaderCache::new);
        let passes = self.source.build_passes(&parameters, cache.as_ref())?;
        for (timing, pass) in self.timings.iter_mut().zip(&passes) {
            timing.fragment_instructions = pass.fragment_instructions;
        }
        self.passes = passes;
        self.parameters = parameters;
        Ok(())
    }

    /// How many previous input frames the chain keeps (the largest `OriginalHistoryN` read).
    pub fn history_depth(&self) -> usize {
        self.history.depth()
    }

    /// The size of every pass target for an input of `original` size and a `viewport`, from
    /// the scale rules.
    fn target_sizes(&self, original: (u32, u32), viewport: (u32, u32)) -> Vec<(u32, u32)> {
        let mut sizes = Vec::with_capacity(self.passes.len());
        let mut source_size = original;
        for pass in &self.passes {
            let size = scaled_size(&pass.config, source_size, viewport, original);
            sizes.push(size);
            source_size = size;
        }
        sizes
    }

    /// Checks, before anything is allocated, that a frame of an input of `original` size drawn
    /// into `viewport` fits in the chain's memory budget ([`ChainOptions::memory_budget`]) and
    /// pixel budget ([`ChainOptions::pixel_budget`]); the error names the largest buffers or
    /// passes. [`FilterChain::frame`] checks this itself.
    pub fn check_memory(
        &self,
        original: (u32, u32),
        viewport: (u32, u32),
    ) -> Result<(), ChainError> {
        let sizes = self.target_sizes(original, viewport);
        self.check_frame_memory(original, &sizes, viewport)
    }

    /// Renders frame `frame_count` of `input` into an image of `viewport` size (row 0 at the
    /// top) in [`FilterChain::viewport_format`] (`R8G8B8A8_UNORM` unless an HDR color space was
    /// asked for), then remembers the input and the pass outputs for the next frame.
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
        // An input with the previous one's contents takes its identity, so that the passes it
        // feeds, unchanged, can be reused.
        let input = match &self.last_input {
            Some(last) if !self.redraw_unchanged && same_contents(last, input) => last.clone(),
            _ => input.clone(),
        };
        let input = &input;
        if self.predecode_outputs {
            // On every core here, before the draws: a rasterizer tile that samples it first
            // would decode it on its own core (see `Texture::decoded_levels`).
            input.decoded_levels();
        }
        let original_size = (input.width(), input.height());
        let count = self.enabled_passes;
        let sizes = self.target_sizes(original_size, viewport);
        self.check_frame_memory(original_size, &sizes, viewport)?;
        let feedback = self.history.take_feedback(&sizes)?;
        // The last pass drawn also renders into its own target when some pass reads its
        // feedback; its `OutputSize` in the viewport draw is then that target's size.
        let last_pass_feedback = self.history.reads_feedback_of(count - 1);
        let reuse = !self.redraw_unchanged;

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
                history: self.history.inputs(),
                outputs: &[],
                feedback: &feedback,
                luts: &self.luts,
                parameters: &self.parameters,
                host: &self.host,
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
            let viewport_format = self.viewport_format();
            let memo = &mut self.memos[index];
            let timing = &mut self.timings[index];
            if !last || last_pass_feedback {
                let (w, h) = sizes[index];
                let levels = if mipmaps {
                    Texture::full_mip_levels(w, h)
                } else {
                    1
                };
                let state = FrameState {
                    outputs: &outputs,
                    ..base
                };
                let key = reuse.then(|| {
                    DrawKey::new(pass, &state, (w, h, levels), (w, h), &IDENTITY_MVP, false)
                });
                let previous = match &key {
                    Some(key) => Memo::lookup(&mut memo.target, key),
                    None => Err(None),
                };
                let target = match previous {
                    Ok(target) => {
                        timing.reused += 1;
                        target
                    }
                    Err(previous) => {
                        let mut target = Texture::new(pass.format, w, h, levels)
                            .map_err(|e| ChainError::new(format!("{}: target: {e}", pass.label)))?;
                        let started = Instant::now();
                        draw_pass(pass, &state, &mut target, (w, h), &IDENTITY_MVP, false)?;
                        let drawn = Instant::now();
                        // A draw that produced the previous pixels keeps the previous
                        // texture (its mipmaps and decoded copy included), so the passes it
                        // feeds see an unchanged input.
                        let target = match previous {
                            Some(previous) if same_contents(&previous, &target) => previous,
                            _ => {
                                if levels > 1 {
                                    target.generate_mipmaps();
                                }
                                if self.predecode_outputs {
                                    target.decoded_levels();
                                }
                                Arc::new(target)
                            }
                        };
                        timing.draw += drawn - started;
                        timing.prepare += drawn.elapsed();
                        if !last {
                            timing.frames += 1;
                        }
                        target
                    }
                };
                timing.size = (w, h);
                if let Some(key) = key {
                    Memo::remember(&mut memo.target, key, target.clone());
                }
                outputs[index] = Some(target.clone());
                source = target;
            }
            if last {
                let output_size = if last_pass_feedback {
                    sizes[index]
                } else {
                    viewport
                };
                let state = FrameState {
                    outputs: &outputs,
                    ..base
                };
                let key = reuse.then(|| {
                    let target = (viewport.0, viewport.1, 1);
                    DrawKey::new(pass, &state, target, output_size, &FINAL_MVP, true)
                });
                let previous = match &key {
                    Some(key) => Memo::lookup(&mut memo.viewport, key),
                    None => Err(None),
                };
                let image = match previous {
                    Ok(image) => {
                        timing.reused += 1;
                        image
                    }
                    Err(_) => {
                        let mut target = Texture::new(viewport_format, viewport.0, viewport.1, 1)
                            .map_err(|e| {
                            ChainError::new(format!("{}: output: {e}", pass.label))
                        })?;
                        let started = Instant::now();
                        draw_pass(pass, &state, &mut target, output_size, &FINAL_MVP, true)?;
                        timing.draw += started.elapsed();
                        timing.frames += 1;
                        target
                    }
                };
                timing.size = viewport;
                if let Some(key) = key {
                    Memo::remember(&mut memo.viewport, key, image.clone());
                }
                result = Some(image);
            }
        }
        // Passes not run this frame (after `set_enabled_passes`) forget their draws.
        for memo in &mut self.memos[count..] {
            *memo = PassMemo::default();
        }
        self.last_input = (!self.redraw_unchanged).then(|| input.clone());

        self.history.push(input, &outputs);
        result.ok_or_else(|| {
            ChainError::new(format!(
                "{}: the chain produced no output",
                self.preset_path.display()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_final_mvp_maps_the_unit_square_onto_clip_space() {
        let mvp = Mat4::from_cols_array(&FINAL_MVP);
        for (corner, clip) in [((0.0, 0.0), (-1.0, -1.0)), ((1.0, 1.0), (1.0, 1.0))] {
            let out = mvp * Vec4::new(corner.0, corner.1, 0.0, 1.0);
            assert_eq!(out, Vec4::new(clip.0, clip.1, 0.0, 1.0));
        }
        assert_eq!(Mat4::from_cols_array(&IDENTITY_MVP), Mat4::IDENTITY);
    }
}
