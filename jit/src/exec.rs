//! The contract between shader executors (the interpreter in `interp`, the Cranelift JIT in
//! `codegen`) and their callers (the rasterizer, tests): how a 2x2 quad's registers are laid out,
//! how textures are reached, and what a program's inputs and outputs mean.
//!
//! Lanes: 0 = top-left, 1 = top-right, 2 = bottom-left, 3 = bottom-right. A vertex shader runs
//! four vertices as the four lanes of one "quad" (derivatives are then meaningless but defined).

use crate::ir::{
    InterpolateLocation, InterpolateMode, Program, RegisterFile, SemanticName, TextureTarget,
};
use thiserror::Error;

/// One vec4 register across a quad: `[channel][lane]`, raw 32-bit lanes.
pub type QuadVec4 = [[u32; 4]; 4];

/// Default number of instructions one quad may execute before [`ExecError::BudgetExceeded`]:
/// 2^24, far above any real filter shader (crt-royale's largest pass runs ~10^4 per pixel) and
/// small enough that an infinite loop ends in well under a second per quad.
pub const DEFAULT_INSTRUCTION_BUDGET: u64 = 1 << 24;

/// Why a shader could not be executed.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ExecError {
    /// The program ran more instructions on one quad than the budget allows (an infinite loop).
    #[error("instruction budget of {budget} exceeded at instruction {pc} (infinite loop?)")]
    BudgetExceeded {
        /// The budget in force.
        budget: u64,
        /// The instruction being executed when it ran out.
        pc: usize,
    },
    /// The program cannot be executed (unsupported opcode, bad structure, missing resource).
    #[error("instruction {pc}: {message}")]
    Unsupported {
        /// The offending instruction.
        pc: usize,
        /// What is wrong.
        message: String,
    },
    /// A subroutine call nested deeper than the call stack allows.
    #[error("call stack overflow at instruction {pc}")]
    CallStackOverflow {
        /// The `CAL` that overflowed.
        pc: usize,
    },
}

/// How a texture instruction chooses its level of detail.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LodMode {
    /// From the quad's coordinate differences (TEX, TXP).
    Implicit,
    /// Implicit plus a per-lane bias (TXB, TXB2, SAMPLE_B).
    Bias([f32; 4]),
    /// A per-lane explicit level (TXL, TXL2, SAMPLE_L).
    Explicit([f32; 4]),
    /// Level 0 (TEX_LZ, SAMPLE_C_LZ).
    Zero,
    /// Explicit gradients (TXD, SAMPLE_D): `ddx[component][lane]`, `ddy[component][lane]`.
    Gradient {
        /// d(coords)/dx for s, t, r.
        ddx: [[f32; 4]; 3],
        /// d(coords)/dy for s, t, r.
        ddy: [[f32; 4]; 3],
    },
}

/// One filtered texture lookup for a whole quad.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleRequest {
    /// The sampler view (texture) unit.
    pub view: u32,
    /// The sampler state unit (the same as `view` for TEX-family instructions).
    pub sampler: u32,
    /// The target, which says how many coordinate components are used.
    pub target: TextureTarget,
    /// Coordinates `[component][lane]`: s, t, r (or the array layer), q. Already divided for TXP.
    pub coords: [[f32; 4]; 4],
    /// Depth-compare reference per lane, for shadow targets.
    pub compare: Option<[f32; 4]>,
    /// Level-of-detail selection.
    pub lod: LodMode,
    /// Constant texel offset (x, y, z).
    pub offset: [i32; 3],
}

/// Filter of a [`TexelView`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewFilter {
    /// softpipe's nearest image filter.
    Nearest,
    /// softpipe's bilinear image filter.
    Linear,
}

/// Wrap mode of one axis of a [`TexelView`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewWrap {
    /// `REPEAT` on an axis whose size is a power of two (on every level).
    RepeatPot,
    /// `CLAMP_TO_EDGE`.
    ClampToEdge,
    /// `CLAMP_TO_BORDER` with a transparent black border (texels outside read as 0).
    ClampToBorder,
    /// `REPEAT` on an axis whose size is not a power of two.
    Repeat,
    /// `MIRRORED_REPEAT`.
    MirroredRepeat,
}

/// Where one mip level lies in [`TexelView::texels`]; `repr(C)` because compiled code reads the
/// table directly (16 bytes per level).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TexelLevel {
    /// Index (in texels) of the level's first texel.
    pub offset: u32,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Zero (pads the entry to 16 bytes).
    pub pad: u32,
}

/// A texture unit's texels and sampler state, for executors that sample it inline (see
/// [`TextureAccess::texel_view`]): every mip level decoded to RGBA `f32` (the values the sampler
/// filters), row-major, 16 little-endian bytes per texel, levels one after the other; no NaN and
/// no denormal among them.
#[derive(Clone, Copy, Debug)]
pub struct TexelView<'a> {
    /// The texels of all levels (RGBA `f32`, 16 bytes each), then one all-zero texel that
    /// inline sampling reads for corners outside a border-clamped texture (without it, the
    /// view is not sampled inline).
    pub texels: &'a [u8],
    /// The levels, base level first (at least one).
    pub levels: &'a [TexelLevel],
    /// Width of level 0 in texels.
    pub width: u32,
    /// Height of level 0 in texels.
    pub height: u32,
    /// The filter when minifying (lod > 0).
    pub min_filter: ViewFilter,
    /// The filter when magnifying (lod <= 0).
    pub mag_filter: ViewFilter,
    /// The filter between levels; `None` samples level 0 only.
    pub mip_filter: Option<ViewFilter>,
    /// The wrap mode of s.
    pub wrap_s: ViewWrap,
    /// The wrap mode of t.
    pub wrap_t: ViewWrap,
    /// The sampler's lod bias (finite, not denormal).
    pub lod_bias: f32,
    /// The sampler's lower lod clamp (finite, not denormal).
    pub min_lod: f32,
    /// The sampler's upper lod clamp (finite, not denormal).
    pub max_lod: f32,
    /// The table of the sampler's `fast_log2` (f32 bits of log2(1 + i/256)), which inline level
    /// of detail must use to agree with it.
    pub log2_table: &'a [u32; 257],
}

/// Texels of apron on each side of [`TextureAccess::padded_level0`].
pub const PADDED_APRON: u32 = 2;

impl TexelView<'_> {
    /// The [`InlineShape`] of this view's state, if it has one (see [`inline_shape`]).
    ///
    /// [`InlineShape`]: crate::ir::InlineShape
    pub fn inline_shape(&self) -> Option<crate::ir::InlineShape> {
        inline_shape(
            self.min_filter,
            self.mag_filter,
            self.mip_filter,
            self.wrap_s,
            self.wrap_t,
        )
    }
}

/// The state inline texture code compiled for one [`InlineShape`] handles: one filter, one wrap
/// mode of REPEAT (power-of-two sizes), CLAMP_TO_EDGE or CLAMP_TO_BORDER on both axes, and no
/// mip filter or one whose magnified lanes read level 0 with the magnification filter
/// (softpipe's `mip_filter_{nearest,linear}`; not its `mip_filter_linear_2d_linear_repeat_POT`,
/// which blends levels 0 and 1 at levels of detail in (-1, 0)). None for any other state.
///
/// [`InlineShape`]: crate::ir::InlineShape
pub fn inline_shape(
    min_filter: ViewFilter,
    mag_filter: ViewFilter,
    mip_filter: Option<ViewFilter>,
    wrap_s: ViewWrap,
    wrap_t: ViewWrap,
) -> Option<crate::ir::InlineShape> {
    use crate::ir::{InlineShape, InlineWrap};
    if min_filter != mag_filter || wrap_s != wrap_t {
        return None;
    }
    let linear = mag_filter == ViewFilter::Linear;
    if linear && wrap_s == ViewWrap::RepeatPot && mip_filter == Some(ViewFilter::Linear) {
        return None;
    }
    let wrap = match wrap_s {
        ViewWrap::RepeatPot => InlineWrap::RepeatPot,
        ViewWrap::ClampToEdge => InlineWrap::ClampToEdge,
        ViewWrap::ClampToBorder => InlineWrap::ClampToBorder,
        ViewWrap::Repeat | ViewWrap::MirroredRepeat => return None,
    };
    Some(InlineShape {
        linear,
        wrap,
        mipmapped: mip_filter.is_some(),
    })
}

/// Whether `x` may stand in a [`TexelView`]'s LOD fields: finite and not denormal (inline code
/// reads denormals as zero, and infinite or NaN clamps need the sampler's saturating
/// conversions).
pub fn plain_lod_value(x: f32) -> bool {
    x.is_finite() && (x == 0.0 || x.is_normal())
}

/// Texture access for executors: the rasterizer's texture units implement this. Results are raw
/// lane bits (floats for float/normalized formats, integers for integer formats).
pub trait TextureAccess: Sync {
    /// Filtered sample (TEX, TXB, TXL, TXD, TXP, SAMPLE…): returns `[channel][lane]`.
    fn sample(&self, request: &SampleRequest) -> QuadVec4;
    /// Four-texel gather of `component` (TG4, GATHER4).
    fn gather(&self, request: &SampleRequest, component: u32) -> QuadVec4;
    /// Texel fetch (TXF): integer coordinates `[component][lane]`, per-lane level, offset.
    /// Out-of-range coordinates clamp to the level's edge, as softpipe's fetch does (GL leaves
    /// them undefined; matching the reference driver keeps golden images identical).
    fn fetch(
        &self,
        view: u32,
        target: TextureTarget,
        coords: [[i32; 4]; 4],
        lod: [i32; 4],
        offset: [i32; 3],
    ) -> QuadVec4;
    /// Size query (TXQ, SVIEWINFO): width, height, depth/layers of level `lod`, and the number of
    /// levels, as integers.
    fn size(&self, view: u32, target: TextureTarget, lod: i32) -> [u32; 4];
    /// Level-of-detail query (LODQ): `[0]` the clamped level, `[1]` the unclamped lambda, per lane.
    fn query_lod(&self, request: &SampleRequest) -> [[f32; 4]; 2];

    /// When every [`sample`](TextureAccess::sample) of a 2D `target` on this view and sampler
    /// unit without offsets filters the decoded levels of one texture with the state the view
    /// describes (softpipe's mip filters and LOD rules), that view; executors may then compute
    /// the texels themselves with softpipe's arithmetic (the JIT does, proven bit-identical to
    /// `sample`). None (the default): always call `sample`.
    fn texel_view(&self, view: u32, sampler: u32, target: TextureTarget) -> Option<TexelView<'_>> {
        let _ = (view, sampler, target);
        None
    }

    /// For a unit whose [`texel_view`](TextureAccess::texel_view) of a 2D target has an
    /// [`inline_shape`](TexelView::inline_shape): that view's level 0 with an apron of
    /// [`PADDED_APRON`] texels on every side holding the texels its wrap mode reads there (zero
    /// outside a border-clamped texture), row-major, `width + 2 * PADDED_APRON` texels of 16
    /// bytes per row. Executors ask for it only where code compiled for that shape will read
    /// it (making it copies the level). None (the default): such code takes the general path.
    fn padded_level0(&self, view: u32, sampler: u32) -> Option<&[u8]> {
        let _ = (view, sampler);
        None
    }
}

/// Texture access with nothing bound: every lookup returns zero. For shaders without textures.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTextures;

impl TextureAccess for NoTextures {
    fn sample(&self, _: &SampleRequest) -> QuadVec4 {
        [[0; 4]; 4]
    }
    fn gather(&self, _: &SampleRequest, _: u32) -> QuadVec4 {
        [[0; 4]; 4]
    }
    fn fetch(
        &self,
        _: u32,
        _: TextureTarget,
        _: [[i32; 4]; 4],
        _: [i32; 4],
        _: [i32; 3],
    ) -> QuadVec4 {
        [[0; 4]; 4]
    }
    fn size(&self, _: u32, _: TextureTarget, _: i32) -> [u32; 4] {
        [0; 4]
    }
    fn query_lod(&self, _: &SampleRequest) -> [[f32; 4]; 2] {
        [[0.0; 4]; 2]
    }
}

/// What a draw binds for a shader: constant buffers, textures and storage memory.
#[derive(Clone, Copy)]
pub struct ShaderResources<'a> {
    /// `CONST[buffer][index]`: each buffer is a slice of vec4 bit patterns. Reads past the end of
    /// a buffer (or of a missing buffer) give zero.
    pub constants: &'a [&'a [[u32; 4]]],
    /// Texture units for SAMP/SVIEW.
    pub textures: &'a dyn TextureAccess,
    /// Storage buffers and images for `BUFFER`/`IMAGE` (`LOAD`, `STORE`, `ATOM*`).
    pub storage: StorageBindings<'a>,
}

/// The storage buffers and images of a draw: `buffers[n]` is `BUFFER[n]`, `images[n]` is
/// `IMAGE[n]` (references, so that the stages of a draw can share one buffer under different
/// indices). A missing one behaves as an empty one: loads give zero, stores are dropped.
#[derive(Clone, Copy, Debug, Default)]
pub struct StorageBindings<'a> {
    /// `BUFFER[n]`.
    pub buffers: &'a [&'a StorageBuffer],
    /// `IMAGE[n]`.
    pub images: &'a [&'a StorageImage],
}

impl StorageBindings<'static> {
    /// No storage bound.
    pub const NONE: StorageBindings<'static> = StorageBindings {
        buffers: &[],
        images: &[],
    };
}

/// The operation of an atomic instruction on one 32-bit word (see [`StorageBuffer::atomic`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// Wrapping add.
    Add,
    /// Exchange.
    Exchange,
    /// Compare-and-exchange: the word becomes the value where it equals the comparand.
    CompareExchange(u32),
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
    /// Unsigned minimum.
    UMin,
    /// Unsigned maximum.
    UMax,
    /// Signed minimum.
    IMin,
    /// Signed maximum.
    IMax,
}

/// Memory shaders read and write (a storage buffer, or the texels of a storage image): 32-bit
/// words shared by every invocation of a draw. Tiles shade in parallel, so every word is an
/// atomic: concurrent writes to one word are defined in Rust (one of them wins), and the
/// `ATOM*` instructions are read-modify-writes no other write can split. Accesses past the end
/// read zero and write nothing (robust buffer access).
#[derive(Debug, Default)]
pub struct StorageBuffer {
    words: Vec<std::sync::atomic::AtomicU32>,
}

impl StorageBuffer {
    /// A buffer of no words.
    pub const EMPTY: StorageBuffer = StorageBuffer { words: Vec::new() };

    /// A buffer holding `words`.
    pub fn new(words: &[u32]) -> StorageBuffer {
        StorageBuffer {
            words: words
                .iter()
                .map(|&w| std::sync::atomic::AtomicU32::new(w))
                .collect(),
        }
    }

    /// The number of 32-bit words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// True for a buffer of no words.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The words as they are now.
    pub fn to_words(&self) -> Vec<u32> {
        self.words
            .iter()
            .map(|w| w.load(std::sync::atomic::Ordering::Relaxed))
            .collect()
    }

    /// Word `index`, or 0 past the end.
    pub fn load(&self, index: u64) -> u32 {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.words.get(i))
            .map_or(0, |w| w.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Writes word `index`; nothing past the end.
    pub fn store(&self, index: u64, value: u32) {
        if let Some(w) = usize::try_from(index).ok().and_then(|i| self.words.get(i)) {
            w.store(value, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Applies `op` with `value` to word `index` atomically and returns the word's old value;
    /// past the end nothing is written and 0 returned.
    pub fn atomic(&self, index: u64, op: AtomicOp, value: u32) -> u32 {
        use std::sync::atomic::Ordering::SeqCst;
        let Some(w) = usize::try_from(index).ok().and_then(|i| self.words.get(i)) else {
            return 0;
        };
        match op {
            AtomicOp::Add => w.fetch_add(value, SeqCst),
            AtomicOp::Exchange => w.swap(value, SeqCst),
            AtomicOp::CompareExchange(expected) => {
                match w.compare_exchange(expected, value, SeqCst, SeqCst) {
                    Ok(old) | Err(old) => old,
                }
            }
            AtomicOp::And => w.fetch_and(value, SeqCst),
            AtomicOp::Or => w.fetch_or(value, SeqCst),
            AtomicOp::Xor => w.fetch_xor(value, SeqCst),
            AtomicOp::UMin => w.fetch_min(value, SeqCst),
            AtomicOp::UMax => w.fetch_max(value, SeqCst),
            AtomicOp::IMin => w
                .fetch_update(SeqCst, SeqCst, |old| {
                    Some((old as i32).min(value as i32) as u32)
                })
                .unwrap_or_else(|old| old),
            AtomicOp::IMax => w
                .fetch_update(SeqCst, SeqCst, |old| {
                    Some((old as i32).max(value as i32) as u32)
                })
                .unwrap_or_else(|old| old),
        }
    }
}

/// A storage image: `width × height × layers` texels of four 32-bit words each (the channels
/// as the shader's loads return them: floats, or integers for integer formats), row after row,
/// layer after layer. The format of the `IMAGE` declaration decides what a store keeps.
#[derive(Debug, Default)]
pub struct StorageImage {
    /// Width in texels.
    pub width: u32,
    /// Height in texels (1 for 1D images).
    pub height: u32,
    /// Depth or array layers (1 for 2D images).
    pub layers: u32,
    /// The texels, four words each.
    pub texels: StorageBuffer,
}

impl StorageImage {
    /// An image of the given size holding `texels` (row-major, four words per texel); missing
    /// texels are zero, extra words are ignored.
    pub fn new(width: u32, height: u32, layers: u32, texels: &[u32]) -> StorageImage {
        let words = (width as usize)
            .saturating_mul(height as usize)
            .saturating_mul(layers as usize)
            .saturating_mul(4);
        let mut data = texels[..words.min(texels.len())].to_vec();
        data.resize(words, 0);
        StorageImage {
            width,
            height,
            layers,
            texels: StorageBuffer::new(&data),
        }
    }

    /// The index of the first word of texel (x, y, layer), or None outside the image.
    pub fn texel_word(&self, x: i32, y: i32, layer: i32) -> Option<u64> {
        let inside = |c: i32, n: u32| u32::try_from(c).is_ok_and(|c| c < n);
        if !(inside(x, self.width) && inside(y, self.height) && inside(layer, self.layers)) {
            return None;
        }
        let (x, y, layer) = (x as u64, y as u64, layer as u64);
        Some(((layer * u64::from(self.height) + y) * u64::from(self.width) + x) * 4)
    }
}

/// The per-quad registers a caller provides and receives.
pub struct QuadIo<'a> {
    /// `IN[i]` values (interpolated varyings or vertex attributes), indexed by register.
    pub inputs: &'a [QuadVec4],
    /// `SV[i]` values, indexed by register.
    pub system_values: &'a [QuadVec4],
    /// `OUT[i]` values, indexed by register; the executor writes only live lanes.
    pub outputs: &'a mut [QuadVec4],
    /// Lanes inside the primitive (bit i = lane i). The others are helper lanes: they execute so
    /// derivatives stay valid, but never write outputs.
    pub live: u8,
}

/// Several quads shaded by one [`QuadShader::shade_quads`] call. Each register file holds one
/// block of `*_stride` registers per quad, quad after quad (quad `q`'s inputs are
/// `inputs[q * inputs_stride..(q + 1) * inputs_stride]`).
pub struct QuadBatch<'a> {
    /// Number of quads.
    pub count: usize,
    /// `IN` registers of all quads.
    pub inputs: &'a [QuadVec4],
    /// `IN` registers per quad.
    pub inputs_stride: usize,
    /// `SV` registers of all quads.
    pub system_values: &'a [QuadVec4],
    /// `SV` registers per quad.
    pub system_values_stride: usize,
    /// `OUT` registers of all quads; the executor writes only live lanes.
    pub outputs: &'a mut [QuadVec4],
    /// `OUT` registers per quad.
    pub outputs_stride: usize,
    /// Live lanes of each quad (see [`QuadIo::live`]).
    pub live: &'a [u8],
    /// Written by the executor: the lanes each quad killed (see [`QuadShader::shade_quad`]).
    pub killed: &'a mut [u8],
}

impl QuadBatch<'_> {
    /// Checks that every file holds `count` blocks of its stride.
    pub fn check(&self) -> Result<(), ExecError> {
        let n = self.count;
        let fits =
            |len: usize, stride: usize| stride.checked_mul(n).is_some_and(|need| need <= len);
        if fits(self.inputs.len(), self.inputs_stride)
            && fits(self.system_values.len(), self.system_values_stride)
            && fits(self.outputs.len(), self.outputs_stride)
            && self.live.len() >= n
            && self.killed.len() >= n
        {
            Ok(())
        } else {
            Err(ExecError::Unsupported {
                pc: 0,
                message: format!("a batch of {n} quads with files shorter than count × stride"),
            })
        }
    }
}

/// A failure while shading a batch: the quad it happened on and why. Quads before it were
/// shaded; the others were not.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("quad {quad} of the batch: {error}")]
pub struct BatchError {
    /// Index of the failing quad in the batch.
    pub quad: usize,
    /// What went wrong.
    pub error: ExecError,
}

/// A compiled shader that runs one 2x2 quad at a time. The interpreter implements it, and so
/// will the JIT; the rasterizer only sees this trait.
pub trait QuadShader: Send + Sync {
    /// Runs the program on one quad. Returns the lanes killed by KILL/KILL_IF/discard (bit i =
    /// lane i); killed lanes keep executing as helpers but their outputs must not be used.
    fn shade_quad(
        &self,
        resources: &ShaderResources<'_>,
        io: &mut QuadIo<'_>,
    ) -> Result<u8, ExecError>;

    /// Runs the program on every quad of a batch, in order, with the results of
    /// [`shade_quad`](QuadShader::shade_quad) on each. Executors override it to amortise
    /// per-call work; this default calls `shade_quad` per quad.
    fn shade_quads(
        &self,
        resources: &ShaderResources<'_>,
        batch: &mut QuadBatch<'_>,
    ) -> Result<(), BatchError> {
        batch
            .check()
            .map_err(|error| BatchError { quad: 0, error })?;
        shade_quads_one_by_one(self, resources, batch)
    }

    /// The inputs and outputs of the program.
    fn signature(&self) -> &ShaderSignature;

    /// Makes, on the calling thread, the lazily built texture copies the shader's draws read
    /// (decoded levels, padded level 0), so that a draw's parallel tiles find them made rather
    /// than each waiting while one tile makes them alone. The rasterizer calls it before it
    /// fans out; the default does nothing.
    fn prepare(&self, _resources: &ShaderResources<'_>) {}
}

/// One declared input, output or system value of a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoSlot {
    /// The register index in its file.
    pub register: u32,
    /// The semantic name (`GENERIC` for plain varyings and vertex attributes).
    pub semantic: SemanticName,
    /// The semantic index.
    pub semantic_index: u32,
    /// Interpolation of fragment inputs (perspective for undeclared).
    pub interpolation: InterpolateMode,
    /// Interpolation location of fragment inputs.
    pub location: InterpolateLocation,
    /// Components declared (bit 0 = x).
    pub usage_mask: u8,
}

/// The interface of a program: what the rasterizer must feed it and what it produces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShaderSignature {
    /// `IN` registers with their semantics.
    pub inputs: Vec<IoSlot>,
    /// `OUT` registers with their semantics.
    pub outputs: Vec<IoSlot>,
    /// `SV` registers with their semantics.
    pub system_values: Vec<IoSlot>,
    /// Number of `IN` registers to allocate (one past the highest declared).
    pub num_inputs: usize,
    /// Number of `OUT` registers to allocate.
    pub num_outputs: usize,
    /// Number of `SV` registers to allocate.
    pub num_system_values: usize,
    /// Whether the program may kill lanes.
    pub uses_kill: bool,
}

impl ShaderSignature {
    /// Collects the signature from a program's declarations. Ranges (`DCL IN[0..2], GENERIC[3]`)
    /// give consecutive semantic indices, as TGSI defines.
    pub fn from_program(program: &Program) -> ShaderSignature {
        let mut sig = ShaderSignature::default();
        for decl in program.declarations() {
            let list = match decl.file {
                RegisterFile::Input => &mut sig.inputs,
                RegisterFile::Output => &mut sig.outputs,
                RegisterFile::SystemValue => &mut sig.system_values,
                _ => continue,
            };
            for (offset, register) in (decl.first..=decl.last).enumerate() {
                let (semantic, base) = decl
                    .semantic
                    .map(|s| (s.name, s.index))
                    .unwrap_or((SemanticName::Generic, decl.first));
                let (interpolation, location) = decl
                    .interpolation
                    .map(|i| (i.mode, i.location))
                    .unwrap_or((InterpolateMode::Perspective, InterpolateLocation::Center));
                list.push(IoSlot {
                    register,
                    semantic,
                    semantic_index: base + offset as u32,
                    interpolation,
                    location,
                    usage_mask: decl.usage_mask,
                });
            }
        }
        sig.num_inputs = program.file_size(RegisterFile::Input) as usize;
        sig.num_outputs = program.file_size(RegisterFile::Output) as usize;
        sig.num_system_values = program.file_size(RegisterFile::SystemValue) as usize;
        sig.uses_kill = program
            .instructions
            .iter()
            .any(|i| matches!(i.opcode.class(), crate::ir::OpcodeClass::Kill));
        sig
    }

    /// The output slot with the given semantic, if declared.
    pub fn output(&self, semantic: SemanticName, index: u32) -> Option<&IoSlot> {
        self.outputs
            .iter()
            .find(|s| s.semantic == semantic && s.semantic_index == index)
    }
}

/// Shades the quads of an already checked `batch` one [`QuadShader::shade_quad`] call at a time
/// (the default `shade_quads`, and executors' fallback for batches they cannot take whole).
pub fn shade_quads_one_by_one<S: QuadShader + ?Sized>(
    shader: &S,
    resources: &ShaderResources<'_>,
    batch: &mut QuadBatch<'_>,
) -> Result<(), BatchError> {
    let (is, ss, os) = (
        batch.inputs_stride,
        batch.system_values_stride,
        batch.outputs_stride,
    );
    for q in 0..batch.count {
        let mut io = QuadIo {
            inputs: &batch.inputs[q * is..(q + 1) * is],
            system_values: &batch.system_values[q * ss..(q + 1) * ss],
            outputs: &mut batch.outputs[q * os..(q + 1) * os],
            live: batch.live[q],
        };
        batch.killed[q] = shader
            .shade_quad(resources, &mut io)
            .map_err(|error| BatchError { quad: q, error })?;
    }
    Ok(())
}
