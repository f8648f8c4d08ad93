//! Building a filter-chain pass's two stages from its file: the language from the extension
//! (`.slang` and `.glsl` are RetroArch's Vulkan GLSL, `.cg` is Cg), preprocessing, then the
//! frontend, reflection and lowering of both stages — or, when the shader cache holds the
//! preprocessed text, its entry.

use std::path::Path;

use super::cache::ShaderCache;
use super::Stage;
use crate::frontend::retroarch::Parameter;
use crate::frontend::{cg, vulkan_glsl, FrontendError};

/// The language of a pass's file, for the rules that differ between RetroArch's runtimes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassLanguage {
    /// RetroArch's Vulkan GLSL (`.slang`, `.glsl`).
    VulkanGlsl,
    /// Cg (`.cg`).
    Cg,
}

/// A pass's compiled stages with the pragmas the chain reads, whatever the language.
pub struct PassShader {
    /// The language of the pass's file.
    pub language: PassLanguage,
    /// `#pragma name`: the pass's alias when the preset gives none.
    pub name: Option<String>,
    /// The `#pragma parameter`s.
    pub parameters: Vec<Parameter>,
    /// `#pragma format`: the pass's render-target format when the preset says nothing.
    pub format: Option<String>,
    /// The vertex stage.
    pub vertex: Stage,
    /// The fragment stage.
    pub fragment: Stage,
}

/// The stages (vertex, fragment) of the shader whose preprocessed stage texts are `sources`:
/// from `cache` when it holds them, else made by `compile` (and then stored).
fn load_or_compile(
    cache: Option<&ShaderCache>,
    language: &str,
    sources: &[String],
    compile: impl FnOnce() -> Result<(Stage, Stage), FrontendError>,
) -> Result<(Stage, Stage), FrontendError> {
    let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
    if let Some(stages) = cache.and_then(|c| c.load_pass(language, &sources)) {
        return Ok(stages);
    }
    let (vertex, fragment) = compile()?;
    if let Some(cache) = cache {
        cache.store_pass(language, &sources, &vertex, &fragment);
    }
    Ok((vertex, fragment))
}

/// Builds the pass shader at `path` (through `cache` when given), with the feature macros
/// `features` names defined in `.slang` stages (Cg has none); errors name the file and, where
/// known, the line.
pub fn build_pass(
    path: &Path,
    cache: Option<&ShaderCache>,
    features: vulkan_glsl::FeatureDefines,
) -> Result<PassShader, FrontendError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "slang" | "glsl" => {
            let mut pre = vulkan_glsl::preprocess_file(path)?;
            pre.define_features(features);
            let (name, format, parameters) =
                (pre.name.clone(), pre.format.clone(), pre.parameters.clone());
            let sources = [pre.vertex.text.clone(), pre.fragment.text.clone()];
            let (vertex, fragment) = load_or_compile(cache, "slang", &sources, || {
                let shader = vulkan_glsl::compile_preprocessed(path, pre)?;
                let (vs, fs) = shader.lower()?;
                Ok((
                    Stage {
                        lowered: vs,
                        reflection: shader.vertex.reflection,
                    },
                    Stage {
                        lowered: fs,
                        reflection: shader.fragment.reflection,
                    },
                ))
            })?;
            Ok(PassShader {
                language: PassLanguage::VulkanGlsl,
                vertex,
                fragment,
                name,
                parameters,
                format,
            })
        }
        "cg" => {
            let pre = cg::preprocess::preprocess_file(path)?;
            let parameters = pre.parameters.clone();
            let sources = [pre.text.clone()];
            let (vertex, fragment) = load_or_compile(cache, "cg", &sources, || {
                let shader = cg::compile_preprocessed(pre, &path.display().to_string())?;
                let (vs, fs) = shader.lower()?;
                Ok((
                    Stage {
                        lowered: vs,
                        reflection: shader.vertex.reflection,
                    },
                    Stage {
                        lowered: fs,
                        reflection: shader.fragment.reflection,
                    },
                ))
            })?;
            Ok(PassShader {
                language: PassLanguage::Cg,
                vertex,
                fragment,
                name: None,
                parameters,
                format: None,
            })
        }
        other => Err(FrontendError::new(
            &path.display().to_string(),
            0,
            0,
            format!("cannot run a `.{other}` shader in a chain: expected a .slang or .cg file"),
        )),
    }
}
