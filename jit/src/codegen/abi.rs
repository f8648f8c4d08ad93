//! The binary contract between compiled kernels and the Rust around them: the per-call context
//! [`Ctx`] (compiled code reads it at the [`CtxOffsets`]), the constant-buffer table
//! ([`ConstBuf`]), the inline texture site descriptors ([`FastTex`]: `runtime` builds one per
//! site and call from the bound views, `emit::sample` reads them), the status codes a kernel
//! returns, and the address table ([`Address`]) through which compiled code reaches every
//! function, table and static outside itself, so that its bytes hold no absolute address and
//! can be kept on disk (`disk`).

use super::emit;
use super::shims::Shims;
use super::tiers::Kernel;
use crate::exec::{ExecError, QuadVec4};
use crate::interp::decode::Decoded;

/// Kernel status codes (bits 8.. of the kernel's return value; bits 0..4 are the kill mask).
pub(super) const STATUS_BUDGET: u32 = 1;
pub(super) const STATUS_CALL_OVERFLOW: u32 = 2;
pub(super) const STATUS_ERROR: u32 = 3;

/// Largest register index of IN/OUT/SV a kernel addresses directly; larger programs are refused
/// (the kernel pads those files to their highest direct index for every quad).
pub(super) const MAX_DIRECT_IO: u32 = 1024;

/// One constant buffer as the kernel sees it.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct ConstBuf {
    pub ptr: *const [u32; 4],
    pub len: usize,
}

/// One inline texture site's view of its unit, as the kernel reads it (see
/// [`TextureAccess::texel_view`](crate::exec::TextureAccess::texel_view)). `mode` picks the
/// code: 0 sends every lookup to the sampler, 1 the level-0 path (no mip filter, one filter, one
/// wrap: the fields up to `hi_add`), 2 the general path (per-lane level of detail and levels,
/// the fields from `mip_kind`). Masks are 0 or !0. Clamping modes clamp the scaled coordinate to
/// `[lo, size + hi_add]` as softpipe's wrap functions do (edge: `[0, size]`; border:
/// `[-1, size + 0.5]` linear, `[-0.5, size + 0.5]` nearest, which is its nearest case analysis
/// written as a clamp).
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct FastTex {
    pub data: *const u8,
    /// `TexelLevel`s (16 bytes each), `last + 1` of them.
    pub levels: *const u8,
    /// The sampler's `fast_log2` table (257 f32 bit patterns).
    pub log2: *const u32,
    pub mode: u32,
    pub ok: u32,
    /// `InlineShape::code` of the view's shape when it has one (then `ok`), else 0: sites
    /// compiled for one shape take their inline path only where this names it.
    pub shape: u32,
    /// The unit's padded level 0 (`TextureAccess::padded_level0`) at its first texel (inside
    /// the apron), and its row pitch in texels (null and 0 without one).
    pub padded: *const u8,
    pub pitch: u32,
    pub linear: u32,
    pub clamp: u32,
    pub border: u32,
    pub width: u32,
    pub height: u32,
    pub fwidth: f32,
    pub fheight: f32,
    pub lo: f32,
    pub hi_add: f32,
    /// 0: no mip filter, 1: nearest, 2: linear, 3: linear with linear filters and REPEAT on a
    /// power-of-two texture (softpipe's `mip_filter_linear_2d_linear_repeat_POT`).
    pub mip_kind: u32,
    pub mag_linear: u32,
    pub min_linear: u32,
    pub clamp_s: u32,
    pub border_s: u32,
    pub clamp_t: u32,
    pub border_t: u32,
    /// REPEAT on an axis whose size is not a power of two, and MIRRORED_REPEAT, per axis.
    pub npot_s: u32,
    pub mirror_s: u32,
    pub npot_t: u32,
    pub mirror_t: u32,
    pub last: u32,
    pub lod_bias: f32,
    pub min_lod: f32,
    pub max_lod: f32,
    /// Index of the all-zero texel after the levels, which border corners read.
    pub zero: u32,
}

/// The clamp of a scaled coordinate of a clamped wrap mode: the low bound and what the high
/// bound adds to the size (softpipe's `wrap_{nearest,linear}_clamp_to_{edge,border}`).
pub(super) fn coordinate_clamp(border: bool, linear: bool) -> (f32, f32) {
    match (border, linear) {
        (false, _) => (0.0, 0.0),
        (true, true) => (-1.0, 0.5),
        (true, false) => (-0.5, 0.5),
    }
}

impl FastTex {
    const NONE: FastTex = FastTex {
        data: std::ptr::null(),
        levels: std::ptr::null(),
        log2: std::ptr::null(),
        mode: 0,
        ok: 0,
        shape: 0,
        padded: std::ptr::null(),
        pitch: 0,
        linear: 0,
        clamp: 0,
        border: 0,
        width: 1,
        height: 1,
        fwidth: 1.0,
        fheight: 1.0,
        lo: 0.0,
        hi_add: 0.0,
        mip_kind: 0,
        mag_linear: 0,
        min_linear: 0,
        clamp_s: 0,
        border_s: 0,
        clamp_t: 0,
        border_t: 0,
        npot_s: 0,
        mirror_s: 0,
        npot_t: 0,
        mirror_t: 0,
        last: 0,
        lod_bias: 0.0,
        min_lod: 0.0,
        max_lod: 0.0,
        zero: 0,
    };

    /// The descriptor of `view`; `padded` is its unit's [`TextureAccess::padded_level0`],
    /// asked for only by sites compiled for a shape.
    ///
    /// [`TextureAccess::padded_level0`]: crate::exec::TextureAccess::padded_level0
    pub(super) fn of(view: Option<crate::exec::TexelView<'_>>, padded: Option<&[u8]>) -> FastTex {
        use crate::exec::{ViewFilter, ViewWrap};
        let Some(v) = view else {
            return FastTex::NONE;
        };
        // Every level must lie inside the texels before the last, which must be zero (the
        // border texel), with sizes whose texel indices fit in i32 (byte offsets are computed
        // in 64 bits) and the level-0 size the view states.
        let Some(total) = (v.texels.len() / 16).checked_sub(1) else {
            return FastTex::NONE;
        };
        if v.texels[total * 16..total * 16 + 16]
            .iter()
            .any(|&b| b != 0)
        {
            return FastTex::NONE;
        }
        let level_ok = |l: &crate::exec::TexelLevel| {
            l.width > 0
                && l.height > 0
                && l.width <= 1 << 16
                && l.height <= 1 << 16
                && (l.width as usize * l.height as usize)
                    .checked_add(l.offset as usize)
                    .is_some_and(|end| end <= total && end <= i32::MAX as usize)
        };
        let fits = total <= i32::MAX as usize
            && v.levels.len() <= 32
            && v.levels
                .first()
                .is_some_and(|l| l.offset == 0 && l.width == v.width && l.height == v.height)
            && v.levels.iter().all(level_ok);
        let plain = crate::exec::plain_lod_value;
        if !(fits && plain(v.lod_bias) && plain(v.min_lod) && plain(v.max_lod)) {
            return FastTex::NONE;
        }
        let mask = |b: bool| if b { !0 } else { 0 };
        let linear = v.mag_filter == ViewFilter::Linear;
        let shape = v.inline_shape();
        // Mipmapped views take the general path except where a site compiled for their shape
        // finds every lane magnified.
        let simple = shape.is_some_and(|s| !s.mipmapped);
        // The apron's texels: all of them inside i32 indices, as `pad` promises.
        let apron = crate::exec::PADDED_APRON as usize;
        let (pw, ph) = (v.width as usize + 2 * apron, v.height as usize + 2 * apron);
        let padded = padded.filter(|p| pw * ph <= i32::MAX as usize / 2 && p.len() == pw * ph * 16);
        // Sites compiled for a shape read the padded texels: without them the view is left to
        // the general path.
        let shape = shape.filter(|_| padded.is_some());
        let clamps = |w: ViewWrap| matches!(w, ViewWrap::ClampToEdge | ViewWrap::ClampToBorder);
        let border = v.wrap_s == ViewWrap::ClampToBorder;
        let (lo, hi_add) = coordinate_clamp(border, linear);
        let all_linear = v.min_filter == ViewFilter::Linear && linear;
        let mip_kind = match v.mip_filter {
            None => 0,
            Some(ViewFilter::Nearest) => 1,
            Some(ViewFilter::Linear)
                if all_linear
                    && v.wrap_s == ViewWrap::RepeatPot
                    && v.wrap_t == ViewWrap::RepeatPot =>
            {
                3
            }
            Some(ViewFilter::Linear) => 2,
        };
        FastTex {
            data: v.texels.as_ptr(),
            levels: v.levels.as_ptr() as *const u8,
            log2: v.log2_table.as_ptr(),
            mode: if simple { 1 } else { 2 },
            ok: simple as u32,
            shape: shape.map_or(0, |s| s.code()),
            padded: padded.map_or(std::ptr::null(), |p| {
                p[(apron * pw + apron) * 16..].as_ptr()
            }),
            pitch: padded.map_or(0, |_| pw as u32),
            linear: mask(linear),
            clamp: mask(v.wrap_s != ViewWrap::RepeatPot),
            border: mask(border),
            width: v.width,
            height: v.height,
            fwidth: v.width as f32,
            fheight: v.height as f32,
            lo,
            hi_add,
            mip_kind,
            mag_linear: mask(linear),
            min_linear: mask(v.min_filter == ViewFilter::Linear),
            clamp_s: mask(clamps(v.wrap_s)),
            border_s: mask(v.wrap_s == ViewWrap::ClampToBorder),
            clamp_t: mask(clamps(v.wrap_t)),
            border_t: mask(v.wrap_t == ViewWrap::ClampToBorder),
            npot_s: mask(v.wrap_s == ViewWrap::Repeat),
            mirror_s: mask(v.wrap_s == ViewWrap::MirroredRepeat),
            npot_t: mask(v.wrap_t == ViewWrap::Repeat),
            mirror_t: mask(v.wrap_t == ViewWrap::MirroredRepeat),
            last: v.levels.len() as u32 - 1,
            lod_bias: v.lod_bias,
            min_lod: v.min_lod,
            max_lod: v.max_lod,
            zero: total as u32,
        }
    }
}

/// The texture units one inline descriptor describes, and the hinted shape its sites were
/// compiled for, if any: only those sites read the padded level 0, so it is asked for only
/// when the bound view has that shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FastSiteUnits {
    pub view: u32,
    pub sampler: u32,
    pub shape: Option<crate::ir::InlineShape>,
}

/// The per-call context a kernel receives. The first fields are read by compiled code at the
/// offsets `offset_of!` gives; the rest serve the `interp_step` trampoline. A call shades
/// `count` quads: quad `q` reads `inputs + q * in_stride` (bytes; likewise SV and OUT), its
/// live lanes from `live[q]`, and stores its killed lanes to `killed[q]`.
#[repr(C)]
pub(super) struct Ctx {
    pub regs: *mut QuadVec4,
    pub inputs: *const QuadVec4,
    pub sysvals: *const QuadVec4,
    pub outputs: *mut QuadVec4,
    pub consts: *const ConstBuf,
    pub consts_len: usize,
    pub budget: u64,
    pub err_pc: u64,
    pub count: u64,
    pub in_stride: u64,
    pub sv_stride: u64,
    pub out_stride: u64,
    pub live: *const u8,
    pub killed: *mut u8,
    /// The quad being shaded; written by the kernel.
    pub quad: u64,
    /// One [`FastTex`] per inline texture site.
    pub fast: *const FastTex,
    /// The running tier's [`Address`] table.
    pub addresses: *const usize,
    // Trampoline state: the caller's real operands, as the interpreter must see them (per
    // quad: `io_inputs + quad * io_inputs_len`, and so on).
    pub kernel: *const Kernel,
    pub resources: *const (),
    pub io_inputs: *const QuadVec4,
    pub io_inputs_len: usize,
    pub io_sysvals: *const QuadVec4,
    pub io_sysvals_len: usize,
    pub io_outputs: *mut QuadVec4,
    pub io_outputs_len: usize,
    pub num_locals: usize,
    pub error: Option<ExecError>,
}

/// Field offsets of [`Ctx`] for the code generator.
#[derive(Clone, Copy)]
pub(super) struct CtxOffsets {
    pub regs: i32,
    pub inputs: i32,
    pub sysvals: i32,
    pub outputs: i32,
    pub consts: i32,
    pub consts_len: i32,
    pub io_inputs_len: i32,
    pub io_sysvals_len: i32,
    pub io_outputs_len: i32,
    pub budget: i32,
    pub err_pc: i32,
    pub count: i32,
    pub in_stride: i32,
    pub sv_stride: i32,
    pub out_stride: i32,
    pub live: i32,
    pub killed: i32,
    pub quad: i32,
    pub fast: i32,
    pub addresses: i32,
}

impl CtxOffsets {
    pub(super) fn get() -> CtxOffsets {
        use std::mem::offset_of;
        CtxOffsets {
            regs: offset_of!(Ctx, regs) as i32,
            inputs: offset_of!(Ctx, inputs) as i32,
            sysvals: offset_of!(Ctx, sysvals) as i32,
            outputs: offset_of!(Ctx, outputs) as i32,
            consts: offset_of!(Ctx, consts) as i32,
            consts_len: offset_of!(Ctx, consts_len) as i32,
            io_inputs_len: offset_of!(Ctx, io_inputs_len) as i32,
            io_sysvals_len: offset_of!(Ctx, io_sysvals_len) as i32,
            io_outputs_len: offset_of!(Ctx, io_outputs_len) as i32,
            budget: offset_of!(Ctx, budget) as i32,
            err_pc: offset_of!(Ctx, err_pc) as i32,
            count: offset_of!(Ctx, count) as i32,
            in_stride: offset_of!(Ctx, in_stride) as i32,
            sv_stride: offset_of!(Ctx, sv_stride) as i32,
            out_stride: offset_of!(Ctx, out_stride) as i32,
            live: offset_of!(Ctx, live) as i32,
            killed: offset_of!(Ctx, killed) as i32,
            quad: offset_of!(Ctx, quad) as i32,
            fast: offset_of!(Ctx, fast) as i32,
            addresses: offset_of!(Ctx, addresses) as i32,
        }
    }
}

pub(super) type KernelFn = unsafe extern "C" fn(*mut Ctx) -> u32;

/// An entry of a kernel's address table (`Ctx::addresses`): everything compiled code reaches
/// by address, so that the code itself holds none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Address(usize);

impl Address {
    /// 64 zero bytes: what out-of-range lanes of indirect reads read.
    pub(super) const ZERO_BLOCK: Address = Address(0);
    /// An empty constant buffer (`ConstBuf` of length 0), for out-of-range buffer indices.
    pub(super) const EMPTY_CONST_BUFFER: Address = Address(1);
    /// The program's immediates (`Decoded::imms`).
    pub(super) const IMMEDIATES: Address = Address(2);
    /// The `interp_step` function or trampoline.
    pub(super) const STEP: Address = Address(3);
    /// The `lane_op` function or trampoline.
    pub(super) const LANES: Address = Address(4);
    /// The `tex_sample` function or trampoline.
    pub(super) const TEX: Address = Address(5);
    /// `libm::POWF_LOG2_TAB`.
    pub(super) const POWF_LOG2_TABLE: Address = Address(6);
    /// `libm::LOGF_TAB`.
    pub(super) const LOGF_TABLE: Address = Address(7);
    /// `libm::EXP2F_TAB`.
    pub(super) const EXP2F_TABLE: Address = Address(8);
    const FIRST_GENERAL_PATH: usize = 9;

    /// The slot of general texture path `k` (of `emit::MIP_OPS`; `GeneralPaths::slot`).
    pub(super) fn general_path_slot(k: usize) -> Address {
        Address(Self::FIRST_GENERAL_PATH + k.min(emit::MIP_OPS.len() - 1))
    }

    /// The entry's byte offset in the table.
    pub(super) fn offset(self) -> i32 {
        (self.0 * std::mem::size_of::<usize>()) as i32
    }
}

/// Entries of an address table.
pub(super) const ADDRESS_COUNT: usize = Address::FIRST_GENERAL_PATH + emit::MIP_OPS.len();

/// 64 zero bytes ([`Address::ZERO_BLOCK`]).
static ZERO_BLOCK: [u32; 16] = [0; 16];

/// An empty constant buffer ([`Address::EMPTY_CONST_BUFFER`]).
static EMPTY_CONST_BUFFER: [usize; 2] = [0, 0];

/// The address table of a tier calling `shims`, for the program `decoded`.
pub(super) fn address_table(shims: &Shims, decoded: &Decoded) -> Box<[usize; ADDRESS_COUNT]> {
    let mut table = [0usize; ADDRESS_COUNT];
    table[Address::ZERO_BLOCK.0] = ZERO_BLOCK.as_ptr() as usize;
    table[Address::EMPTY_CONST_BUFFER.0] = EMPTY_CONST_BUFFER.as_ptr() as usize;
    table[Address::IMMEDIATES.0] = decoded.imms.as_ptr() as usize;
    table[Address::STEP.0] = shims.step as usize;
    table[Address::LANES.0] = shims.lanes as usize;
    table[Address::TEX.0] = shims.tex as usize;
    table[Address::POWF_LOG2_TABLE.0] = crate::interp::libm::POWF_LOG2_TAB.as_ptr() as usize;
    table[Address::LOGF_TABLE.0] = crate::interp::libm::LOGF_TAB.as_ptr() as usize;
    table[Address::EXP2F_TABLE.0] = crate::interp::libm::EXP2F_TAB.as_ptr() as usize;
    if let Some(paths) = shims.mip {
        for k in 0..emit::MIP_OPS.len() {
            table[Address::general_path_slot(k).0] = paths.slot(k);
        }
    }
    Box::new(table)
}
