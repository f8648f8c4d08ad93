//! Building a filter-chain pass's two stages from its `.slang` or `.cg` file.

use std::path::Path;

use super::cache::{ShaderCache, StageParts};
use crate::chain::ChainError;
use crate::frontend::cg;
use crate::frontend::vulkan_glsl::{self as slang, Parameter};

/// A compiled shader stage pair with its interface, whatever the language.
pub(crate) struct CompiledShader {
    /// `#pragma name`: the pass's alias when the preset gives none.
    pub(crate) name: Option<String>,
    pub(crate) parameters: Vec<Parameter>,
    pub(crate) format: Option<String>,
    pub(crate) vertex: StageParts,
    pub(crate) fragment: StageParts,
}

/// The stages (vertex, fragment) of the shader whose preprocessed stage texts are `sources`:
/// from `cache` when it holds them, else made by `compile` (and then stored).
fn load_or_compile(
    cache: Option<&ShaderCache>,
    language: &str,
    sources: &[String],
    compile: impl FnOnce() -> Result<(StageParts, StageParts), ChainError>,
) -> Result<(StageParts, StageParts), ChainError> {
    let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
    if let Some(stages) = cache.and_then(|c| c.load(language, &sources)) {
        return Ok(stages);
    }
    let (vertex, fragment) = compile()?;
    if let Some(cache) = cache {
        cache.store(language, &sources, &vertex, &fragment);
    }
    Ok((vertex, fragment))
}

pub(crate) fn compile_pass_shader(
    path: &Path,
    cache: Option<&ShaderCache>,
) -> Result<CompiledShader, ChainError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let frontend = |e: crate::frontend::FrontendError| ChainError::new(e.to_string());
    match ext.as_str() {
        "slang" | "glsl" => {
            let pre = slang::preprocess_file(path).map_err(frontend)?;
            let (name, format, parameters) =
                (pre.name.clone(), pre.format.clone(), pre.parameters.clone());
            let sources = [pre.vertex.text.clone(), pre.fragment.text.clone()];
            let (vertex, fragment) = load_or_compile(cache, "slang", &sources, || {
                let shader = slang::compile_preprocessed(path, pre).map_err(frontend)?;
                let (vs, fs) = shader.lower().map_err(frontend)?;
                Ok((
                    (vs, shader.vertex.reflection),
                    (fs, shader.fragment.reflection),
                ))
            })?;
            Ok(CompiledShader {
                vertex,
                fragment,
                name,
                parameters,
                format,
            })
        }
        "cg" => {
            let pre = cg::preprocess::preprocess_file(path).map_err(frontend)?;
            let parameters = pre.parameters.clone();
            let sources = [pre.text.clone()];
            let (vertex, fragment) = load_or_compile(cache, "cg", &sources, || {
                let shader =
                    cg::compile_preprocessed(pre, &path.display().to_string()).map_err(frontend)?;
                let (vs, fs) = shader.lower().map_err(frontend)?;
                Ok((
                    (vs, shader.vertex.reflection),
                    (fs, shader.fragment.reflection),
                ))
            })?;
            Ok(CompiledShader {
                vertex,
                fragment,
                name: None,
                parameters,
                format: None,
            })
        }
        other => Err(ChainError::new(format!(
            "{}: cannot run a `.{other}` shader in a chain: expected a .slang or .cg file",
            path.display()
        ))),
    }
}
