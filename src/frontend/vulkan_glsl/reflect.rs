//! The whole reflection of a RetroArch `.slang` shader: its pragmas and both stages'
//! interfaces, as `softgpu compile --emit reflection` prints them.

use serde::Serialize;

use super::preprocess::Parameter;
use crate::frontend::reflect::StageReflection;

/// The whole shader's reflection, as printed by `--emit reflection`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShaderReflection {
    /// `#pragma name`.
    pub name: Option<String>,
    /// The fragment output's format from `#pragma format` (`None`: RetroArch's default,
    /// `R8G8B8A8_UNORM`).
    pub format: Option<String>,
    /// The `#pragma parameter`s.
    pub parameters: Vec<Parameter>,
    /// The vertex stage.
    pub vertex: StageReflection,
    /// The fragment stage.
    pub fragment: StageReflection,
}

impl ShaderReflection {
    /// Pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // Serializing plain structs of strings and numbers cannot fail; fall back to the
        // Debug form rather than panic should that ever change.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}
