//! RetroArch's shader conventions shared by the Vulkan GLSL (`.slang`) and Cg frontends:
//! `#pragma parameter`s, the line map from preprocessed text back to the original files, the
//! binding of the sampler split off a combined texture, and the one-uniform-buffer rule.

use serde::Serialize;

use super::reflect::StageReflection;
use super::FrontendError;

/// One `#pragma parameter`: a user-tweakable float the preset UI exposes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Parameter {
    /// The identifier (matched by name against UBO / push-constant members).
    pub id: String,
    /// The human-readable description.
    pub description: String,
    /// The default value.
    pub initial: f32,
    /// The lower bound.
    pub minimum: f32,
    /// The upper bound.
    pub maximum: f32,
    /// The UI step (RetroArch's default `0.1 * (max - min)` when the pragma has none).
    pub step: f32,
}

/// Added to an image's binding to give its split-off sampler a binding of its own.
pub const SAMPLER_BINDING_OFFSET: u32 = 1 << 16;

/// Where one line of preprocessed text came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    /// Index into [`LineMap::files`].
    pub file: u32,
    /// 1-based line in that file.
    pub line: u32,
}

/// Maps each line of a preprocessed stage source back to its original file and line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineMap {
    /// Every file that contributed lines, as displayed in errors.
    pub files: Vec<String>,
    /// `lines[i]` is the origin of output line `i + 1`.
    pub lines: Vec<Origin>,
}

impl LineMap {
    /// The original `(file, line)` of 1-based output line `line`, if it exists.
    pub fn resolve(&self, line: u32) -> Option<(&str, u32)> {
        let origin = self.lines.get(line.checked_sub(1)? as usize)?;
        Some((self.files[origin.file as usize].as_str(), origin.line))
    }

    /// An error at 1-based output line `line`, or at the root file when the line is unknown.
    pub fn error(&self, line: u32, message: impl Into<String>) -> FrontendError {
        match self.resolve(line) {
            Some((file, l)) => FrontendError::new(file, l, 0, message),
            None => FrontendError::new(self.files.first().map_or("", |f| f), 0, 0, message),
        }
    }
}

/// RetroArch's rule for a pass stage's blocks: at most one uniform buffer (and one
/// push-constant block, which the reflection already holds one of).
pub fn check_one_uniform_buffer(reflection: &StageReflection) -> Result<(), String> {
    if reflection.uniform_buffers.len() > 1 {
        return Err("more than one uniform buffer (RetroArch allows one)".to_string());
    }
    Ok(())
}
