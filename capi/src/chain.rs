//! Filter chains (`softgpu_filter_chain_*`): a preset loaded from a path, its parameters set
//! and read, frames rendered from one RGBA8 buffer into another, the chain freed.
//!
//! softgpu folds parameter values into the compiled passes, so parameters set on a built chain
//! take effect before the next frame by specializing the passes again
//! (`FilterChain::set_parameters`, through the shader cache when one is configured); history
//! and feedback are kept, as librashader keeps them.

use std::ffi::{c_char, CString};
use std::ptr::NonNull;
use std::sync::Arc;

use softgpu::chain::preset::{load_preset, Preset};
use softgpu::chain::{ChainError, ChainOptions, FilterChain, FrameOptions};

use crate::error::{ffi_call, softgpu_error_t, SoftgpuErrno, SoftgpuError};
use crate::strings::{c_path, c_str};
use crate::types::{
    driver_of, read_optional, softgpu_filter_chain_opt_default, softgpu_filter_chain_opt_t,
    softgpu_frame_opt_t, softgpu_image_mut_t, softgpu_image_t, SOFTGPU_DRIVER_SOFTPIPE,
};

/// A filter chain and what rebuilding it needs.
pub struct FilterChainHandle {
    preset: Preset,
    options: ChainOptions,
    chain: FilterChain,
    /// Every parameter's name in byte order, for `softgpu_filter_chain_get_param_name`: the
    /// strings handed out live as long as the chain.
    parameter_names: Vec<CString>,
    /// Parameters were set since the passes were built.
    stale: bool,
    /// Set while a call renders or rebuilds: still set on entry means that call panicked and
    /// the chain may be half updated, so it is refused from then on.
    busy: bool,
}

// docs/library.md promises that a chain may be handed from one thread to another.
const _: () = {
    fn is_send<T: Send>() {}
    let _ = is_send::<FilterChainHandle>;
};

/// A handle to a filter chain; NULL when there is none.
#[allow(non_camel_case_types)]
pub type softgpu_filter_chain_t = Option<NonNull<FilterChainHandle>>;

fn load_error(error: impl ToString) -> SoftgpuError {
    SoftgpuError::new(SoftgpuErrno::LoadError, error.to_string())
}

fn runtime_error(error: ChainError) -> SoftgpuError {
    SoftgpuError::new(SoftgpuErrno::RuntimeError, error.message)
}

/// Checks a pointer to a handle the function writes.
fn check_out<T>(out: *mut T, name: &str) -> Result<(), SoftgpuError> {
    if out.is_null() {
        return Err(SoftgpuError::invalid(format!("{name} is NULL")));
    }
    if !out.is_aligned() {
        return Err(SoftgpuError::invalid(format!("{name} is misaligned")));
    }
    Ok(())
}

/// The chain a `softgpu_filter_chain_t *` argument names.
///
/// # Safety
/// `chain` must be NULL or point to a handle that is NULL or from `softgpu_filter_chain_create`
/// and not yet freed, used by no other thread during the call.
unsafe fn handle<'a>(
    chain: *const softgpu_filter_chain_t,
) -> Result<&'a mut FilterChainHandle, SoftgpuError> {
    check_out(chain.cast_mut(), "chain")?;
    // SAFETY: non-null and aligned; points to a handle (the caller's contract).
    match unsafe { chain.read() } {
        // SAFETY: a live handle made by `Box::into_raw` in `softgpu_filter_chain_create`,
        // not shared with another thread during the call (the caller's contract).
        Some(handle) => Ok(unsafe { &mut *handle.as_ptr() }),
        None => Err(SoftgpuError::invalid(
            "*chain is NULL: create the chain first (or it was freed)",
        )),
    }
}

impl FilterChainHandle {
    fn refuse_if_interrupted(&self) -> Result<(), SoftgpuError> {
        if self.busy {
            return Err(SoftgpuError::new(
                SoftgpuErrno::RuntimeError,
                format!(
                    "{}: an earlier call on this chain panicked and may have left it half \
                     updated; free it and create another",
                    self.preset.path.display()
                ),
            ));
        }
        Ok(())
    }

    /// The value of a parameter: the one set last, else the chain's (shader default, then the
    /// preset's value).
    fn parameter(&self, name: &str) -> Result<f32, SoftgpuError> {
        let set = self
            .options
            .parameters
            .iter()
            .rev()
            .find(|(n, _)| n == name);
        match set {
            Some((_, value)) => Ok(*value),
            None => self
                .chain
                .parameters()
                .get(name)
                .copied()
                .ok_or_else(|| self.unknown_parameter(name)),
        }
    }

    fn unknown_parameter(&self, name: &str) -> SoftgpuError {
        let mut known: Vec<&str> = self.chain.parameters().keys().map(String::as_str).collect();
        known.sort_unstable();
        SoftgpuError::new(
            SoftgpuErrno::ShaderParameterError,
            format!(
                "parameter `{name}`: no pass of {} declares `#pragma parameter {name}`; known \
                 parameters: {}",
                self.preset.path.display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ),
        )
    }

    fn set_parameter(&mut self, name: &str, value: f32) -> Result<(), SoftgpuError> {
        if !self.chain.parameters().contains_key(name) {
            return Err(self.unknown_parameter(name));
        }
        if !value.is_finite() {
            return Err(SoftgpuError::invalid(format!(
                "parameter `{name}`: {value} is not a finite number"
            )));
        }
        if self.parameter(name)?.to_bits() == value.to_bits() {
            return Ok(());
        }
        self.options.parameters.retain(|(n, _)| n != name);
        self.options.parameters.push((name.to_string(), value));
        self.stale = true;
        Ok(())
    }

    /// Renders one frame; `input` is copied before `output` is written, so they may overlap.
    ///
    /// # Safety
    /// As `softgpu_filter_chain_frame` for `input` and `output`.
    unsafe fn frame(
        &mut self,
        frame_count: u64,
        input: softgpu_image_t,
        output: softgpu_image_mut_t,
        options: &FrameOptions,
    ) -> Result<(), SoftgpuError> {
        self.refuse_if_interrupted()?;
        input.span()?;
        output.span()?;
        // Cleared on return, error or not; a panic leaves it set.
        self.busy = true;
        // SAFETY: forwarded from the caller's contract.
        let result = unsafe { self.render(frame_count, input, output, options) };
        self.busy = false;
        result
    }

    /// [`FilterChainHandle::frame`] after the checks.
    ///
    /// # Safety
    /// As `softgpu_filter_chain_frame` for `input` and `output`.
    unsafe fn render(
        &mut self,
        frame_count: u64,
        input: softgpu_image_t,
        output: softgpu_image_mut_t,
        options: &FrameOptions,
    ) -> Result<(), SoftgpuError> {
        if self.stale {
            self.chain
                .set_parameters(&self.options.parameters)
                .map_err(load_error)?;
            self.stale = false;
        }
        let viewport = (output.width, output.height);
        // The budgets are checked before the input is copied: the copy is a frame buffer too.
        self.chain
            .check_memory((input.width, input.height), viewport)
            .map_err(runtime_error)?;
        // SAFETY: forwarded from the caller's contract.
        let input = Arc::new(unsafe { input.to_texture() }?);
        let rendered = self
            .chain
            .frame(&input, viewport, frame_count, options)
            .map_err(runtime_error)?;
        // The chain's output is `R8G8B8A8_UNORM`: level 0 is already RGBA8 rows.
        // SAFETY: forwarded from the caller's contract.
        unsafe { output.write(rendered.level_data(0)) }
    }
}

/// Creates a filter chain from a `.slangp` or `.cgp` preset: parses it, compiles every pass
/// and loads its LUTs. On success `*out` is the chain; free it with
/// `softgpu_filter_chain_free`. On error `*out` is left as it was and the message names the
/// file (and line) that failed.
///
/// `options` may be NULL for `softgpu_filter_chain_opt_default()`.
///
/// # Safety
/// `preset_path` must be NULL or a NUL-terminated string; `options` NULL or a pointer to an
/// initialised options struct (whose `shader_cache_dir` is NULL or NUL-terminated); `out` NULL
/// or a pointer to writable storage for one handle.
#[no_mangle]
pub unsafe extern "C" fn softgpu_filter_chain_create(
    preset_path: *const c_char,
    options: *const softgpu_filter_chain_opt_t,
    out: *mut softgpu_filter_chain_t,
) -> softgpu_error_t {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        softgpu_filter_chain_create_for_driver(preset_path, options, SOFTGPU_DRIVER_SOFTPIPE, out)
    }
}

/// `softgpu_filter_chain_create` under another driver's rules: `SOFTGPU_DRIVER_SOFTPIPE`
/// (the same as `softgpu_filter_chain_create`), `SOFTGPU_DRIVER_LLVMPIPE` (to match
/// librashader on Mesa lavapipe) or `SOFTGPU_DRIVER_NVIDIA` (docs/fidelity.md, "Driver
/// profiles"). The driver sets filtering precision, derivatives and render-target
/// conversions, and the math and sRGB curve unless `options.math` / `options.srgb_curve` name
/// one (their defaults, `SOFTGPU_MATH_DRIVER` and `SOFTGPU_SRGB_CURVE_DRIVER`, take the
/// driver's).
///
/// # Safety
/// As `softgpu_filter_chain_create`.
#[no_mangle]
pub unsafe extern "C" fn softgpu_filter_chain_create_for_driver(
    preset_path: *const c_char,
    options: *const softgpu_filter_chain_opt_t,
    driver: u32,
    out: *mut softgpu_filter_chain_t,
) -> softgpu_error_t {
    ffi_call(|| {
        check_out(out, "out")?;
        let driver = driver_of(driver)?;
        // SAFETY: forwarded from the caller's contract.
        let path = unsafe { c_path(preset_path, "preset_path") }?;
        // SAFETY: forwarded from the caller's contract.
        let options = unsafe { read_optional(options, "options") }?
            .unwrap_or_else(|| softgpu_filter_chain_opt_default());
        // SAFETY: forwarded from the caller's contract.
        let options = unsafe { options.to_chain_options(driver) }?;
        let preset = load_preset(&path, &options.wildcards).map_err(load_error)?;
        let chain = FilterChain::from_preset(&preset, &options).map_err(load_error)?;
        let mut names: Vec<&String> = chain.parameters().keys().collect();
        names.sort();
        let parameter_names = names
            .into_iter()
            // Names come from `#pragma parameter` identifiers, which hold no NUL.
            .filter_map(|name| CString::new(name.as_bytes()).ok())
            .collect();
        let handle = Box::new(FilterChainHandle {
            preset,
            options,
            chain,
            parameter_names,
            stale: false,
            busy: false,
        });
        // SAFETY: `out` is non-null, aligned and writable (checked, and the caller's contract).
        unsafe { out.write(NonNull::new(Box::into_raw(handle))) };
        Ok(())
    })
}

/// Renders frame `frame_count` of `input` into `output`, whose size is the viewport, then
/// remembers the input and the pass outputs for the next frame's history and feedback.
/// Frames are meant to be fed in order with `frame_count` counting up from 0.
///
/// `options` may be NULL for `softgpu_frame_opt_default()`. `input` is copied before
/// `output` is written, so the two may be the same memory.
///
/// # Safety
/// `chain` must be NULL or point to a handle that is NULL or a live chain; `input.data` must
/// point to `input.stride * (input.height - 1) + input.width * 4` readable bytes and
/// `output.data` to as many writable bytes by its own fields; `options` must be NULL or point
/// to an initialised frame options struct. No other thread may use the chain during the call.
#[no_mangle]
pub unsafe extern "C" fn softgpu_filter_chain_frame(
    chain: *mut softgpu_filter_chain_t,
    frame_count: u64,
    input: softgpu_image_t,
    output: softgpu_image_mut_t,
    options: *const softgpu_frame_opt_t,
) -> softgpu_error_t {
    ffi_call(|| {
        // SAFETY: forwarded from the caller's contract.
        let handle = unsafe { handle(chain) }?;
        // SAFETY: forwarded from the caller's contract.
        let options = match unsafe { read_optional(options, "options") }? {
            Some(options) => options.to_frame_options()?,
            None => FrameOptions::default(),
        };
        // SAFETY: forwarded from the caller's contract.
        unsafe { handle.frame(frame_count, input, output, &options) }
    })
}

/// Sets a shader parameter (`#pragma parameter NAME`) for the frames that follow. The name
/// must be declared by a pass of the preset and the value finite; it is not clamped to the
/// declared range. The passes are rebuilt at the next frame, which then starts with empty
/// history and feedback.
///
/// # Safety
/// `chain` must be NULL or point to a handle that is NULL or a live chain; `name` NULL or a
/// NUL-terminated string. No other thread may use the chain during the call.
#[no_mangle]
pub unsafe extern "C" fn softgpu_filter_chain_set_param(
    chain: *mut softgpu_filter_chain_t,
    name: *const c_char,
    value: f32,
) -> softgpu_error_t {
    ffi_call(|| {
        // SAFETY: forwarded from the caller's contract.
        let handle = unsafe { handle(chain) }?;
        // SAFETY: forwarded from the caller's contract.
        let name = unsafe { c_str(name, "name") }?;
        handle.refuse_if_interrupted()?;
        handle.set_parameter(name, value)
    })
}

/// Writes a shader parameter's current value to `*out`: the value set last, else the preset's,
/// else the shader's default.
///
/// # Safety
/// `chain` must be NULL or point to a handle that is NULL or a live chain; `name` NULL or a
/// NUL-terminated string; `out` NULL or a pointer to a writable `float`. No other thread may
/// use the chain during the call.
#[no_mangle]
pub unsafe extern "C" fn softgpu_filter_chain_get_param(
    chain: *const softgpu_filter_chain_t,
    name: *const c_char,
    out: *mut f32,
) -> softgpu_error_t {
    ffi_call(|| {
        // SAFETY: forwarded from the caller's contract.
        let handle = unsafe { handle(chain) }?;
        // SAFETY: forwarded from the caller's contract.
        let name = unsafe { c_str(name, "name") }?;
        check_out(out, "out")?;
        let value = handle.parameter(name)?;
        // SAFETY: `out` is non-null, aligned and writable (checked, and the caller's contract).
        unsafe { out.write(value) };
        Ok(())
    })
}

/// Writes the number of shader parameters the preset declares to `*out`.
///
/// # Safety
/// `chain` must be NULL or point to a handle that is NULL or a live chain; `out` NULL or a
/// pointer to a writable `size_t`. No other thread may use the chain during the call.
#[no_mangle]
pub unsafe extern "C" fn softgpu_filter_chain_get_param_count(
    chain: *const softgpu_filter_chain_t,
    out: *mut usize,
) -> softgpu_error_t {
    ffi_call(|| {
        // SAFETY: forwarded from the caller's contract.
        let handle = unsafe { handle(chain) }?;
        check_out(out, "out")?;
        // SAFETY: `out` is non-null, aligned and writable (checked, and the caller's contract).
        unsafe { out.write(handle.parameter_names.len()) };
        Ok(())
    })
}

/// Writes the name of parameter `index` (0 to count - 1, names in byte order) to `*out`, for
/// `softgpu_filter_chain_get_param` and `softgpu_filter_chain_set_param`. The string belongs to
/// the chain: it stays valid until the chain is freed and must not be freed by the caller.
///
/// # Safety
/// `chain` must be NULL or point to a handle that is NULL or a live chain; `out` NULL or a
/// pointer to a writable `const char *`. No other thread may use the chain during the call.
#[no_mangle]
pub unsafe extern "C" fn softgpu_filter_chain_get_param_name(
    chain: *const softgpu_filter_chain_t,
    index: usize,
    out: *mut *const c_char,
) -> softgpu_error_t {
    ffi_call(|| {
        // SAFETY: forwarded from the caller's contract.
        let handle = unsafe { handle(chain) }?;
        check_out(out, "out")?;
        let count = handle.parameter_names.len();
        let name = handle.parameter_names.get(index).ok_or_else(|| {
            SoftgpuError::invalid(format!(
                "parameter index {index}: the preset has {count} parameters"
            ))
        })?;
        // SAFETY: `out` is non-null, aligned and writable (checked, and the caller's contract).
        unsafe { out.write(name.as_ptr()) };
        Ok(())
    })
}

/// Frees a filter chain and sets `*chain` to NULL; a `*chain` that is already NULL is left
/// alone (like `free(NULL)`).
///
/// # Safety
/// `chain` must be NULL or point to a handle that is NULL or a live chain no other thread uses.
#[no_mangle]
pub unsafe extern "C" fn softgpu_filter_chain_free(
    chain: *mut softgpu_filter_chain_t,
) -> softgpu_error_t {
    ffi_call(|| {
        check_out(chain, "chain")?;
        // SAFETY: non-null and aligned; points to a handle (the caller's contract).
        if let Some(handle) = unsafe { chain.replace(None) } {
            // SAFETY: made by `Box::into_raw` in `softgpu_filter_chain_create` and freed once:
            // `*chain` is NULL now.
            drop(unsafe { Box::from_raw(handle.as_ptr()) });
        }
        Ok(())
    })
}
