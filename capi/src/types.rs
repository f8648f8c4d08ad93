//! The structs and constants C passes in: chain and frame options (with their defaults) and
//! the RGBA8 image descriptions, each checked before anything is read through it.

use std::ffi::c_char;

use softgpu::chain::runtime::MAX_TARGET_SIZE;
use softgpu::chain::{ChainOptions, FrameOptions, SrgbCurve};
use softgpu::driver::Driver;
use softgpu::ir::MathMode;
use softgpu::shader::Executor;
use softgpu::texture::Texture;

use crate::error::SoftgpuError;
use crate::strings::c_path;

/// The version of the C API this library implements; option structs carry the version they
/// were written for in their `version` field (the `*_default` functions fill it in).
pub const SOFTGPU_API_VERSION: usize = 1;

/// `executor`: Cranelift-compiled kernels (the default; a program the JIT refuses runs on the
/// interpreter).
pub const SOFTGPU_EXECUTOR_JIT: u32 = 0;
/// `executor`: the reference interpreter (the same pixels, slower).
pub const SOFTGPU_EXECUTOR_INTERPRETER: u32 = 1;
/// `math`: glibc-exact transcendentals, as Mesa's softpipe computes them.
pub const SOFTGPU_MATH_EXACT: u32 = 0;
/// `math`: Mesa llvmpipe/lavapipe's approximations, bit for bit.
pub const SOFTGPU_MATH_LLVMPIPE: u32 = 1;
/// `srgb_curve`: the exact sRGB curve for sRGB render targets.
pub const SOFTGPU_SRGB_CURVE_EXACT: u32 = 0;
/// `math`: the math of the chain's driver (the default): exact for softpipe (what
/// `softgpu_filter_chain_create` uses) and NVIDIA, llvmpipe's for llvmpipe.
pub const SOFTGPU_MATH_DRIVER: u32 = 2;
/// `srgb_curve`: Mesa llvmpipe/lavapipe's fast sRGB conversions.
pub const SOFTGPU_SRGB_CURVE_LLVMPIPE: u32 = 1;
/// `srgb_curve`: NVIDIA's measured sRGB conversions.
pub const SOFTGPU_SRGB_CURVE_NVIDIA: u32 = 2;
/// `srgb_curve`: the sRGB curve of the chain's driver (the default; exact for softpipe).
pub const SOFTGPU_SRGB_CURVE_DRIVER: u32 = 3;
/// `driver` of `softgpu_filter_chain_create_for_driver`: Mesa softpipe's rules (what
/// `softgpu_filter_chain_create` uses).
pub const SOFTGPU_DRIVER_SOFTPIPE: u32 = 0;
/// `driver`: Mesa llvmpipe/lavapipe's rules (filtering precision, derivatives, target
/// conversions, sRGB curve and math), to match the preset peer librashader on lavapipe.
pub const SOFTGPU_DRIVER_LLVMPIPE: u32 = 1;
/// `driver`: an NVIDIA GPU's measured rules (docs/fidelity.md, "Driver profiles").
pub const SOFTGPU_DRIVER_NVIDIA: u32 = 2;

/// How a filter chain is built (`softgpu_filter_chain_create`). Start from
/// `softgpu_filter_chain_opt_default()` and change fields.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct softgpu_filter_chain_opt_t {
    /// `SOFTGPU_API_VERSION` when the struct was filled in.
    pub version: usize,
    /// `SOFTGPU_EXECUTOR_JIT` or `SOFTGPU_EXECUTOR_INTERPRETER`.
    pub executor: u32,
    /// `SOFTGPU_MATH_EXACT`, `SOFTGPU_MATH_LLVMPIPE` or `SOFTGPU_MATH_DRIVER`.
    pub math: u32,
    /// `SOFTGPU_SRGB_CURVE_EXACT`, `SOFTGPU_SRGB_CURVE_LLVMPIPE`, `SOFTGPU_SRGB_CURVE_NVIDIA`
    /// or `SOFTGPU_SRGB_CURVE_DRIVER`.
    pub srgb_curve: u32,
    /// The directory of the on-disk cache of compiled shaders (NUL-terminated UTF-8, created
    /// when missing), or NULL to compile every shader. Copied: the string need not outlive the
    /// call.
    pub shader_cache_dir: *const c_char,
    /// The most bytes a frame's buffers may need; 0 takes softgpu's default (docs/limits.md).
    pub memory_budget: u64,
    /// The most pixels the passes of a frame may shade together; 0 takes softgpu's default.
    pub pixel_budget: u64,
}

/// The per-frame inputs besides the image (librashader's frame options). Start from
/// `softgpu_frame_opt_default()` and change fields.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct softgpu_frame_opt_t {
    /// `SOFTGPU_API_VERSION` when the struct was filled in.
    pub version: usize,
    /// `FrameDirection`: 1 forwards (default), -1 when rewinding.
    pub frame_direction: i32,
    /// `Rotation` in quarter turns, 0..=3 (default 0).
    pub rotation: u32,
    /// `TotalSubFrames` (default 1).
    pub total_subframes: u32,
    /// `CurrentSubFrame` (default 1).
    pub current_subframe: u32,
    /// `OriginalAspect`; 0 (default) takes the input image's aspect ratio.
    pub aspect_ratio: f32,
    /// `OriginalFPS` (default 1).
    pub frames_per_second: f32,
    /// `FrameTimeDelta` in milliseconds (default 0).
    pub frametime_delta: u32,
}

/// An RGBA8 image the caller owns and softgpu only reads: row 0 at the top, 4 bytes a pixel
/// (R, G, B, A), `stride` bytes from one row to the next (at least `width * 4`).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct softgpu_image_t {
    /// The first byte of row 0; `stride * (height - 1) + width * 4` bytes are read.
    pub data: *const u8,
    /// Width in pixels, 1..=16384.
    pub width: u32,
    /// Height in pixels, 1..=16384.
    pub height: u32,
    /// Bytes from one row to the next.
    pub stride: usize,
}

/// An RGBA8 image the caller owns and softgpu writes, laid out as `softgpu_image_t`; bytes
/// between `width * 4` and `stride` in each row are left as they were.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct softgpu_image_mut_t {
    /// The first byte of row 0; `stride * (height - 1) + width * 4` bytes are written.
    pub data: *mut u8,
    /// Width in pixels: the viewport's width.
    pub width: u32,
    /// Height in pixels: the viewport's height.
    pub height: u32,
    /// Bytes from one row to the next.
    pub stride: usize,
}

/// Chain options with softgpu's defaults: the JIT, the driver's math and sRGB curve (exact for
/// `softgpu_filter_chain_create`, softpipe's rules), no shader cache, the default budgets.
#[no_mangle]
pub extern "C" fn softgpu_filter_chain_opt_default() -> softgpu_filter_chain_opt_t {
    softgpu_filter_chain_opt_t {
        version: SOFTGPU_API_VERSION,
        executor: SOFTGPU_EXECUTOR_JIT,
        math: SOFTGPU_MATH_DRIVER,
        srgb_curve: SOFTGPU_SRGB_CURVE_DRIVER,
        shader_cache_dir: std::ptr::null(),
        memory_budget: 0,
        pixel_budget: 0,
    }
}

/// Frame options with librashader's defaults.
#[no_mangle]
pub extern "C" fn softgpu_frame_opt_default() -> softgpu_frame_opt_t {
    let defaults = FrameOptions::default();
    softgpu_frame_opt_t {
        version: SOFTGPU_API_VERSION,
        frame_direction: defaults.frame_direction,
        rotation: defaults.rotation,
        total_subframes: defaults.total_subframes,
        current_subframe: defaults.current_subframe,
        aspect_ratio: defaults.aspect_ratio,
        frames_per_second: defaults.frames_per_second,
        frametime_delta: defaults.frametime_delta,
    }
}

fn check_version(version: usize, what: &str) -> Result<(), SoftgpuError> {
    if version == 0 || version > SOFTGPU_API_VERSION {
        return Err(SoftgpuError::invalid(format!(
            "{what}.version is {version}: expected 1..={SOFTGPU_API_VERSION} (fill the struct \
             from its *_default function)"
        )));
    }
    Ok(())
}

/// Reads an optional struct argument: NULL gives `None`.
///
/// # Safety
/// `pointer` must be NULL or point to a readable, initialised `T`.
pub(crate) unsafe fn read_optional<T: Copy>(
    pointer: *const T,
    name: &str,
) -> Result<Option<T>, SoftgpuError> {
    if pointer.is_null() {
        return Ok(None);
    }
    if !pointer.is_aligned() {
        return Err(SoftgpuError::invalid(format!("{name} is misaligned")));
    }
    // SAFETY: non-null and aligned; readable and initialised by the caller's contract.
    Ok(Some(unsafe { pointer.read() }))
}

/// The driver a `driver` argument names.
pub(crate) fn driver_of(driver: u32) -> Result<Driver, SoftgpuError> {
    match driver {
        SOFTGPU_DRIVER_SOFTPIPE => Ok(Driver::Softpipe),
        SOFTGPU_DRIVER_LLVMPIPE => Ok(Driver::Llvmpipe),
        SOFTGPU_DRIVER_NVIDIA => Ok(Driver::Nvidia),
        other => Err(SoftgpuError::invalid(format!(
            "driver is {other}: expected SOFTGPU_DRIVER_SOFTPIPE (0), SOFTGPU_DRIVER_LLVMPIPE \
             (1) or SOFTGPU_DRIVER_NVIDIA (2)"
        ))),
    }
}

impl softgpu_filter_chain_opt_t {
    /// The library's options for these, under `driver`'s rules.
    ///
    /// # Safety
    /// `shader_cache_dir` must be NULL or a NUL-terminated string.
    pub(crate) unsafe fn to_chain_options(
        self,
        driver: Driver,
    ) -> Result<ChainOptions, SoftgpuError> {
        check_version(self.version, "options")?;
        let executor = match self.executor {
            SOFTGPU_EXECUTOR_JIT => Executor::Jit,
            SOFTGPU_EXECUTOR_INTERPRETER => Executor::Interp,
            other => {
                return Err(SoftgpuError::invalid(format!(
                    "options.executor is {other}: expected SOFTGPU_EXECUTOR_JIT (0) or \
                     SOFTGPU_EXECUTOR_INTERPRETER (1)"
                )))
            }
        };
        let math = match self.math {
            SOFTGPU_MATH_EXACT => MathMode::Exact,
            SOFTGPU_MATH_LLVMPIPE => MathMode::Llvmpipe,
            SOFTGPU_MATH_DRIVER => driver.math(),
            other => {
                return Err(SoftgpuError::invalid(format!(
                    "options.math is {other}: expected SOFTGPU_MATH_EXACT (0), \
                     SOFTGPU_MATH_LLVMPIPE (1) or SOFTGPU_MATH_DRIVER (2)"
                )))
            }
        };
        let srgb_curve = match self.srgb_curve {
            SOFTGPU_SRGB_CURVE_EXACT => SrgbCurve::Exact,
            SOFTGPU_SRGB_CURVE_LLVMPIPE => SrgbCurve::Llvmpipe,
            SOFTGPU_SRGB_CURVE_NVIDIA => SrgbCurve::Nvidia,
            SOFTGPU_SRGB_CURVE_DRIVER => SrgbCurve::of(driver),
            other => {
                return Err(SoftgpuError::invalid(format!(
                    "options.srgb_curve is {other}: expected SOFTGPU_SRGB_CURVE_EXACT (0), \
                     SOFTGPU_SRGB_CURVE_LLVMPIPE (1), SOFTGPU_SRGB_CURVE_NVIDIA (2) or \
                     SOFTGPU_SRGB_CURVE_DRIVER (3)"
                )))
            }
        };
        let shader_cache = if self.shader_cache_dir.is_null() {
            None
        } else {
            // SAFETY: non-null, and NUL-terminated by the caller's contract.
            Some(unsafe { c_path(self.shader_cache_dir, "options.shader_cache_dir") }?)
        };
        Ok(ChainOptions {
            executor,
            math,
            srgb_curve,
            shader_cache,
            memory_budget: (self.memory_budget > 0).then_some(self.memory_budget),
            pixel_budget: (self.pixel_budget > 0).then_some(self.pixel_budget),
            ..ChainOptions::default().with_driver(driver)
        })
    }
}

impl softgpu_frame_opt_t {
    /// The library's frame options for these.
    pub(crate) fn to_frame_options(self) -> Result<FrameOptions, SoftgpuError> {
        check_version(self.version, "frame options")?;
        if self.rotation > 3 {
            return Err(SoftgpuError::invalid(format!(
                "frame options.rotation is {}: expected 0..=3 quarter turns",
                self.rotation
            )));
        }
        let finite = |value: f32, field: &str| {
            if value.is_finite() {
                Ok(value)
            } else {
                Err(SoftgpuError::invalid(format!(
                    "frame options.{field} is {value}: expected a finite number"
                )))
            }
        };
        // Options this API version does not carry keep the library's defaults, also when
        // `FrameOptions` gains fields (spelled out here while it has none more).
        #[allow(clippy::needless_update)]
        Ok(FrameOptions {
            frame_direction: self.frame_direction,
            rotation: self.rotation,
            total_subframes: self.total_subframes,
            current_subframe: self.current_subframe,
            aspect_ratio: finite(self.aspect_ratio, "aspect_ratio")?,
            frames_per_second: finite(self.frames_per_second, "frames_per_second")?,
            frametime_delta: self.frametime_delta,
            ..FrameOptions::default()
        })
    }
}

/// Checks an image's size and stride and returns how many bytes it spans from `data`.
fn image_span(
    name: &str,
    is_null: bool,
    (width, height): (u32, u32),
    stride: usize,
    max_side: u32,
) -> Result<usize, SoftgpuError> {
    if is_null {
        return Err(SoftgpuError::invalid(format!("{name}.data is NULL")));
    }
    if !(1..=max_side).contains(&width) || !(1..=max_side).contains(&height) {
        return Err(SoftgpuError::invalid(format!(
            "{name} size {width}x{height} is invalid: each side must be 1..={max_side}"
        )));
    }
    let row = width as usize * 4;
    if stride < row {
        return Err(SoftgpuError::invalid(format!(
            "{name}.stride is {stride} bytes: expected at least width * 4 = {row}"
        )));
    }
    (height as usize - 1)
        .checked_mul(stride)
        .and_then(|rows| rows.checked_add(row))
        .filter(|&span| span <= isize::MAX as usize)
        .ok_or_else(|| {
            SoftgpuError::invalid(format!(
                "{name}.stride {stride} times height {height} overflows the address space"
            ))
        })
}

impl softgpu_image_t {
    /// Checks the description (softgpu's input limits) and copies the pixels into a texture.
    ///
    /// # Safety
    /// `data` must point to `stride * (height - 1) + width * 4` readable bytes.
    pub(crate) unsafe fn to_texture(self) -> Result<Texture, SoftgpuError> {
        let row = self.width as usize * 4;
        let span = self.span()?;
        // SAFETY: `data` is non-null (checked by `span`) and spans `span` readable bytes (the
        // caller's contract); the slice is dropped before anything is written anywhere.
        let bytes = unsafe { std::slice::from_raw_parts(self.data, span) };
        let mut pixels = Vec::with_capacity(row * self.height as usize);
        for y in 0..self.height as usize {
            pixels.extend_from_slice(&bytes[y * self.stride..y * self.stride + row]);
        }
        Texture::from_rgba8(self.width, self.height, pixels)
            .map_err(|e| SoftgpuError::invalid(format!("input: {e}")))
    }

    /// Bytes the image spans, after checking its size and stride.
    pub(crate) fn span(&self) -> Result<usize, SoftgpuError> {
        image_span(
            "input",
            self.data.is_null(),
            (self.width, self.height),
            self.stride,
            Texture::MAX_DIMENSION,
        )
    }
}

impl softgpu_image_mut_t {
    /// Bytes the image spans, after checking its size (softgpu's viewport limit) and stride.
    pub(crate) fn span(&self) -> Result<usize, SoftgpuError> {
        image_span(
            "output",
            self.data.is_null(),
            (self.width, self.height),
            self.stride,
            MAX_TARGET_SIZE,
        )
    }

    /// Copies tightly packed RGBA8 rows of this image's size into it.
    ///
    /// # Safety
    /// `data` must point to `stride * (height - 1) + width * 4` writable bytes that nothing
    /// else reads or writes during the call.
    pub(crate) unsafe fn write(self, pixels: &[u8]) -> Result<(), SoftgpuError> {
        let row = self.width as usize * 4;
        let span = self.span()?;
        if pixels.len() != row * self.height as usize {
            return Err(SoftgpuError::new(
                crate::error::SoftgpuErrno::RuntimeError,
                format!(
                    "the chain rendered {} bytes for a {}x{} output",
                    pixels.len(),
                    self.width,
                    self.height
                ),
            ));
        }
        // SAFETY: `data` is non-null (checked by `span`) and spans `span` writable bytes no one
        // else touches during the call (the caller's contract).
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.data, span) };
        for (y, source) in pixels.chunks_exact(row).enumerate() {
            bytes[y * self.stride..y * self.stride + row].copy_from_slice(source);
        }
        Ok(())
    }
}
