//! Reading the NUL-terminated strings C passes in (paths, parameter names).

use std::ffi::{c_char, CStr};
use std::path::PathBuf;

use crate::error::{SoftgpuErrno, SoftgpuError};

/// A NUL-terminated UTF-8 string argument, borrowed for the call.
///
/// # Safety
/// `text` must be NULL or point to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn c_str<'a>(text: *const c_char, name: &str) -> Result<&'a str, SoftgpuError> {
    if text.is_null() {
        return Err(SoftgpuError::invalid(format!("{name} is NULL")));
    }
    // SAFETY: non-null and NUL-terminated, living for `'a` (the caller's contract).
    let text = unsafe { CStr::from_ptr(text) };
    text.to_str().map_err(|e| {
        SoftgpuError::new(
            SoftgpuErrno::InvalidString,
            format!("{name} is not valid UTF-8: {e}"),
        )
    })
}

/// A path argument (NUL-terminated UTF-8), copied.
///
/// # Safety
/// `text` must be NULL or point to a NUL-terminated string.
pub(crate) unsafe fn c_path(text: *const c_char, name: &str) -> Result<PathBuf, SoftgpuError> {
    // SAFETY: forwarded from the caller's contract.
    let text = unsafe { c_str(text, name) }?;
    if text.is_empty() {
        return Err(SoftgpuError::invalid(format!(
            "{name} is empty: expected a path"
        )));
    }
    Ok(PathBuf::from(text))
}
