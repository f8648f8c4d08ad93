//! Shader frontends: source languages compiled through a `naga::Module` into the TGSI IR.
//!
//! One module per language — [`wgsl`] (naga's own parser), [`vulkan_glsl`] (RetroArch `.slang`
//! files through glslang and SPIR-V), [`cg`] (an in-house parser building naga modules),
//! [`slang_lang`] (the Slang shading language through the Slang compiler and SPIR-V) — each
//! producing a validated naga module; [`lower`] turns any such module's entry point into an
//! [`ir::Program`](crate::ir::Program), and [`reflect`] describes its interface in the one
//! reflection model. [`retroarch`] holds the RetroArch conventions Vulkan GLSL and Cg share;
//! [`limits`] the bounds every frontend keeps on malformed input.

pub mod cg;
pub mod limits;
pub mod lower;
pub mod reflect;
pub mod retroarch;
pub mod slang_lang;
pub mod vulkan_glsl;
pub mod wgsl;

use std::fmt;

/// A compile error with the source position it refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontendError {
    /// The file name given by the caller (used only in messages).
    pub file: String,
    /// 1-based line, or 0 when no position is known.
    pub line: u32,
    /// 1-based column (in bytes), or 0 when no position is known.
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

impl FrontendError {
    /// An error at `line:column` of `file`.
    pub fn new(file: &str, line: u32, column: u32, message: impl Into<String>) -> FrontendError {
        FrontendError {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }

    /// An error at the start of `span` in `source` (position 0:0 when the span is unknown).
    pub fn at_span(
        file: &str,
        source: Option<&str>,
        span: naga::Span,
        message: impl Into<String>,
    ) -> FrontendError {
        let (line, column) = match source {
            Some(src) if span.is_defined() => {
                let loc = span.location(src);
                (loc.line_number, loc.line_position)
            }
            _ => (0, 0),
        };
        FrontendError::new(file, line, column, message)
    }
}

impl fmt::Display for FrontendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

impl std::error::Error for FrontendError {}
