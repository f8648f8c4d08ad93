//! Errors as objects (`softgpu_error_*`): every fallible function returns a
//! [`softgpu_error_t`], NULL on success, else an error the caller reads and frees; and the
//! wrapper that keeps panics from crossing the C boundary.

use std::any::Any;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

/// What kind of failure an error object reports (`softgpu_error_errno`).
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoftgpuErrno {
    /// softgpu panicked (a bug, reported instead of unwinding into C), or the error object was
    /// NULL.
    Unknown = 0,
    /// An argument was NULL, misaligned or out of range (sizes, strides, versions, enum values).
    InvalidParameter = 1,
    /// A string argument was not valid UTF-8.
    InvalidString = 2,
    /// The preset could not be loaded: parsing it, compiling a pass, loading a LUT.
    LoadError = 3,
    /// No pass of the preset declares the named parameter.
    ShaderParameterError = 5,
    /// A frame could not be rendered (its memory or pixel budget, an invalid size).
    RuntimeError = 7,
}

/// An error object: its kind and its message.
#[derive(Debug)]
pub struct SoftgpuError {
    code: SoftgpuErrno,
    message: String,
}

/// A handle to an error object; NULL means success.
#[allow(non_camel_case_types)]
pub type softgpu_error_t = Option<NonNull<SoftgpuError>>;

impl SoftgpuError {
    /// An error of kind `code` with this message.
    pub fn new(code: SoftgpuErrno, message: impl Into<String>) -> SoftgpuError {
        SoftgpuError {
            code,
            message: message.into(),
        }
    }

    /// An [`SoftgpuErrno::InvalidParameter`] error.
    pub fn invalid(message: impl Into<String>) -> SoftgpuError {
        SoftgpuError::new(SoftgpuErrno::InvalidParameter, message)
    }

    /// The kind of failure.
    pub fn code(&self) -> SoftgpuErrno {
        self.code
    }

    /// The message, naming the file (and line) where one is involved.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn from_panic(payload: Box<dyn Any + Send>) -> SoftgpuError {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        SoftgpuError::new(
            SoftgpuErrno::Unknown,
            format!("softgpu panicked (a bug; please report it): {what}"),
        )
    }

    /// Hands the error to C as a heap object that `softgpu_error_free` releases.
    fn export(self) -> softgpu_error_t {
        NonNull::new(Box::into_raw(Box::new(self)))
    }
}

/// Runs the body of an exported function: `Ok` becomes NULL, an error or a panic an error
/// object, so that no panic unwinds into C.
pub(crate) fn ffi_call(body: impl FnOnce() -> Result<(), SoftgpuError>) -> softgpu_error_t {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => None,
        Ok(Err(error)) => error.export(),
        Err(payload) => SoftgpuError::from_panic(payload).export(),
    }
}

/// The error's kind; `SOFTGPU_ERRNO_UNKNOWN` when `error` is NULL.
///
/// # Safety
/// `error` must be NULL or an error returned by softgpu and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn softgpu_error_errno(error: softgpu_error_t) -> SoftgpuErrno {
    match error {
        // SAFETY: the caller passes an error object softgpu made and has not freed.
        Some(error) => unsafe { error.as_ref() }.code,
        None => SoftgpuErrno::Unknown,
    }
}

/// Prints the error's message and a newline to standard error. Returns 0, or 1 when `error` is
/// NULL.
///
/// # Safety
/// `error` must be NULL or an error returned by softgpu and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn softgpu_error_print(error: softgpu_error_t) -> i32 {
    let Some(error) = error else { return 1 };
    // SAFETY: the caller passes an error object softgpu made and has not freed.
    let error = unsafe { error.as_ref() };
    // Printing cannot panic on a closed stderr: `eprintln!` would, so write and ignore.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", error.message);
    0
}

/// Writes a copy of the error's message, NUL-terminated UTF-8, to `*out`; free it with
/// `softgpu_error_free_string`. Returns 0, or 1 (writing nothing) when `error` or `out` is NULL.
///
/// # Safety
/// `error` must be NULL or an error returned by softgpu and not yet freed; `out` must be NULL
/// or point to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn softgpu_error_write(error: softgpu_error_t, out: *mut *mut c_char) -> i32 {
    let Some(error) = error else { return 1 };
    if out.is_null() || !out.is_aligned() {
        return 1;
    }
    // SAFETY: the caller passes an error object softgpu made and has not freed.
    let error = unsafe { error.as_ref() };
    // Messages come from Rust strings; an interior NUL (from a file name) is cut there.
    let text = error.message.split('\0').next().unwrap_or_default();
    let text = CString::new(text).unwrap_or_default();
    // SAFETY: `out` is non-null, aligned and, by the caller's contract, writable.
    unsafe { out.write(text.into_raw()) };
    0
}

/// Frees a string written by `softgpu_error_write` and sets `*out` to NULL. Returns 0, or 1
/// when `out` or `*out` is NULL.
///
/// # Safety
/// `out` must be NULL or point to NULL or to a string from `softgpu_error_write` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn softgpu_error_free_string(out: *mut *mut c_char) -> i32 {
    if out.is_null() || !out.is_aligned() {
        return 1;
    }
    // SAFETY: `out` is non-null and aligned, and points to a string pointer (caller's contract).
    let text = unsafe { out.replace(std::ptr::null_mut()) };
    if text.is_null() {
        return 1;
    }
    // SAFETY: `text` came from `CString::into_raw` in `softgpu_error_write` and is freed once:
    // `*out` is NULL now.
    drop(unsafe { CString::from_raw(text) });
    0
}

/// Frees an error object and sets `*error` to NULL. Returns 0, or 1 when `error` or `*error`
/// is NULL.
///
/// # Safety
/// `error` must be NULL or point to NULL or to an error returned by softgpu and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn softgpu_error_free(error: *mut softgpu_error_t) -> i32 {
    if error.is_null() || !error.is_aligned() {
        return 1;
    }
    // SAFETY: `error` is non-null and aligned, and points to an error handle (caller's contract).
    let Some(object) = (unsafe { error.replace(None) }) else {
        return 1;
    };
    // SAFETY: the object was made by `Box::into_raw` in `export` and is freed once: `*error` is
    // NULL now.
    drop(unsafe { Box::from_raw(object.as_ptr()) });
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads an error's message through the C functions, then frees both.
    fn message_and_free(mut error: softgpu_error_t) -> (SoftgpuErrno, String) {
        // SAFETY: `error` is a live error object from `ffi_call`, freed once at the end.
        unsafe {
            let code = softgpu_error_errno(error);
            let mut text: *mut c_char = std::ptr::null_mut();
            assert_eq!(softgpu_error_write(error, &mut text), 0);
            let message = std::ffi::CStr::from_ptr(text).to_str().unwrap().to_string();
            assert_eq!(softgpu_error_free_string(&mut text), 0);
            assert!(text.is_null());
            assert_eq!(softgpu_error_free(&mut error), 0);
            assert!(error.is_none());
            (code, message)
        }
    }

    #[test]
    fn a_panic_becomes_an_error_object_instead_of_unwinding() {
        let error = ffi_call(|| panic!("the pass table is empty"));
        let (code, message) = message_and_free(error);
        assert_eq!(code, SoftgpuErrno::Unknown);
        assert!(message.contains("the pass table is empty"), "{message}");
        let error = ffi_call(|| panic!("{} of {}", 3, 4));
        assert!(message_and_free(error).1.contains("3 of 4"));
    }

    #[test]
    fn errors_keep_their_kind_and_success_is_null() {
        assert!(ffi_call(|| Ok(())).is_none());
        let error = ffi_call(|| Err(SoftgpuError::invalid("output.stride is 3 bytes")));
        assert_eq!(
            message_and_free(error),
            (
                SoftgpuErrno::InvalidParameter,
                "output.stride is 3 bytes".to_string()
            )
        );
    }
}
