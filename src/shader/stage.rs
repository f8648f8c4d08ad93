//! Building one stage from a file, as `softgpu draw` and `compile` do: the language from the
//! extension and, for `.slang`, the file's first lines (or the caller), then TGSI text parsed and
//! validated, or WGSL, Vulkan GLSL and Slang through their frontend, reflection and lowering —
//! through the shader cache when one is given (TGSI is not cached: parsing it is what a hit would
//! do anyway).

use std::path::Path;

use anyhow::{anyhow, bail, Result};

use super::cache::{ShaderCache, StageCacheUse};
use super::Stage;
use crate::frontend::lower::LoweredShader;
use crate::frontend::reflect::StageReflection;
use crate::frontend::slang_lang::{self, SlangOptions};
use crate::ir::{validate, Processor, Program};

/// The language of a shader file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// Mesa's TGSI text format.
    Tgsi,
    /// WGSL (through naga).
    Wgsl,
    /// RetroArch's Vulkan GLSL (`.slang`): GLSL with `#pragma stage` (through glslang, SPIR-V and naga).
    VulkanGlsl,
    /// The Slang shading language (`.slang` without `#version`/`#pragma stage`; through the Slang
    /// compiler, SPIR-V and naga).
    Slang,
}

impl Language {
    /// The language a file implies: `.wgsl` is WGSL, `.slang` RetroArch's Vulkan GLSL or Slang as
    /// [`Language::detect`] tells (RetroArch where the file cannot be read or is neither: the
    /// compile then reports why), anything else TGSI text.
    pub fn from_path(path: &Path) -> Language {
        Language::detect(path).unwrap_or(Language::VulkanGlsl)
    }

    /// The language of the file at `path`: by extension, and for `.slang` by its text (see
    /// [`crate::frontend::slang_lang::detect`]); errors name the file.
    pub fn detect(path: &Path) -> Result<Language> {
        use crate::frontend::slang_lang::detect::{detect, SlangFlavor};
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("wgsl") => Ok(Language::Wgsl),
            Some(ext) if ext.eq_ignore_ascii_case("slang") => {
                let text =
                    crate::input::read_text(path, "shader", crate::input::MAX_SHADER_FILE_BYTES)?;
                match detect(&text).map_err(|e| anyhow!("{}: {e}", path.display()))? {
                    SlangFlavor::RetroArch => Ok(Language::VulkanGlsl),
                    SlangFlavor::Slang => Ok(Language::Slang),
                }
            }
            _ => Ok(Language::Tgsi),
        }
    }
}

/// Reads a shader file in `language` (or the one its extension implies) and compiles the
/// `expected` stage to a validated program; errors name the file and line. Both stages of a
/// slang file are compiled, so an error in either is reported (what `softgpu compile` checks).
pub fn compile_shader(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
) -> Result<Program> {
    let language = match language {
        Some(l) => l,
        None => Language::detect(path)?,
    };
    if language == Language::VulkanGlsl {
        use crate::frontend::vulkan_glsl;
        let vertex = slang_stage(path, expected)? == vulkan_glsl::Stage::Vertex;
        let shader = vulkan_glsl::compile_slang(path)?;
        let stage = if vertex {
            &shader.vertex
        } else {
            &shader.fragment
        };
        return Ok(vulkan_glsl::lower_stage(stage)?.program);
    }
    Ok(build_stage(path, expected, Some(language), None)?
        .0
        .lowered
        .program)
}

/// Parses and validates the TGSI text `source` of the file at `path`; every error names the file
/// and the source line it concerns.
pub fn parse_tgsi(path: &Path, source: &str) -> Result<Program> {
    validate::parse_and_validate(source).map_err(|errors| match errors.as_slice() {
        [one] => anyhow!("{}: {one}", path.display()),
        _ => anyhow!(
            "{}: invalid program:\n  {}",
            path.display(),
            errors.join("\n  ")
        ),
    })
}

/// Reads and validates a TGSI program file; errors name the file and line.
pub fn load_program(path: &Path, expected: Processor) -> Result<Program> {
    let source = crate::input::read_text(path, "shader", crate::input::MAX_SHADER_FILE_BYTES)?;
    let program = parse_tgsi(path, &source)?;
    if program.processor != expected {
        bail!(
            "{}: expected a {} program, found {}",
            path.display(),
            expected.name(),
            program.processor.name()
        );
    }
    Ok(program)
}

/// Builds the `expected` stage of the shader file at `path` in `language` (or the one its
/// extension implies): its program and, for WGSL and slang, its reflection. With a `cache`
/// directory a WGSL or slang stage whose source an entry holds skips its frontend, and one
/// compiled is stored; also says what the cache did.
pub fn build_stage(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
    cache: Option<&Path>,
) -> Result<(Stage, StageCacheUse)> {
    build_stage_with(path, expected, language, &SlangOptions::default(), cache)
}

/// [`build_stage`] with the options of a Slang-language stage (entry point, search paths,
/// macros, library); other languages ignore them.
pub fn build_stage_with(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
    slang: &SlangOptions,
    cache: Option<&Path>,
) -> Result<(Stage, StageCacheUse)> {
    let language = match language {
        Some(l) => l,
        None => Language::detect(path)?,
    };
    if language == Language::Slang {
        return build_slang_stage(path, expected, slang, cache);
    }
    if language == Language::Tgsi {
        let stage = Stage {
            lowered: LoweredShader {
                program: load_program(path, expected)?,
                entry_point: String::new(),
                resources: Vec::new(),
            },
            reflection: StageReflection::default(),
        };
        return Ok((stage, StageCacheUse::Uncached));
    }
    let frontend = StageFrontend::read(path, expected, language)?;
    let (language_key, source) = (frontend.language_key(), frontend.source_text().to_string());
    let cache = cache.map(|dir| ShaderCache::new(dir.to_path_buf()));
    let mut used = StageCacheUse::Uncached;
    if let Some(cache) = &cache {
        let (found, outcome) = cache.load_stage(language_key, expected, &source);
        if let Some(stage) = found {
            return Ok((stage, outcome));
        }
        used = outcome;
    }
    let stage = frontend.compile(path)?;
    if let Some(cache) = &cache {
        cache.store_stage(language_key, expected, &source, &stage);
    }
    Ok((stage, used))
}

/// [`build_stage_with`] of a Slang-language stage: through the cache when the key
/// ([`slang_lang::cache_key`]) can be made, so a warm build neither starts the compiler process
/// nor creates a Slang global session.
fn build_slang_stage(
    path: &Path,
    expected: Processor,
    options: &SlangOptions,
    cache: Option<&Path>,
) -> Result<(Stage, StageCacheUse)> {
    const LANGUAGE_KEY: &str = "slang-lang";
    let stage = slang_stage(path, expected)?;
    let cache = cache.map(|dir| ShaderCache::new(dir.to_path_buf()));
    let key = match &cache {
        Some(_) => slang_lang::cache_key::cache_key(path, stage, options),
        None => None,
    };
    let mut used = StageCacheUse::Uncached;
    if let (Some(cache), Some((key, _))) = (&cache, &key) {
        let (found, outcome) = cache.load_stage(LANGUAGE_KEY, expected, key);
        if let Some(stage) = found {
            return Ok((stage, outcome));
        }
        used = outcome;
    }
    let compiled = slang_lang::compile_stage(path, stage, options)?;
    let lowered = slang_lang::lower_stage(path, &compiled)?;
    let built = Stage {
        lowered,
        reflection: compiled.reflection,
    };
    if let (Some(cache), Some((key, covered))) = (&cache, &key) {
        if slang_lang::cache_key::covers(covered, &compiled.output.dependencies) {
            cache.store_stage(LANGUAGE_KEY, expected, key, &built);
        }
    }
    Ok((built, used))
}

/// The slang stage that compiles to `expected`; other processors are an error naming `path`.
fn slang_stage(path: &Path, expected: Processor) -> Result<crate::frontend::vulkan_glsl::Stage> {
    use crate::frontend::vulkan_glsl::Stage;
    match expected {
        Processor::Vertex => Ok(Stage::Vertex),
        Processor::Fragment => Ok(Stage::Fragment),
        other => bail!(
            "{}: no {} stage in a slang shader",
            path.display(),
            other.name()
        ),
    }
}

/// One stage of a WGSL or slang file, read (and for slang preprocessed) but not yet compiled:
/// its text is what the shader cache keys on.
enum StageFrontend {
    Wgsl {
        source: String,
        stage: crate::frontend::wgsl::Stage,
    },
    Slang {
        source: crate::frontend::vulkan_glsl::StageSource,
        stage: crate::frontend::vulkan_glsl::Stage,
    },
}

impl StageFrontend {
    fn read(path: &Path, expected: Processor, language: Language) -> Result<StageFrontend> {
        use crate::frontend::{vulkan_glsl, wgsl};
        match language {
            Language::Wgsl => {
                let stage = match expected {
                    Processor::Vertex => wgsl::Stage::Vertex,
                    Processor::Fragment => wgsl::Stage::Fragment,
                    other => bail!("{}: no {} stage in WGSL", path.display(), other.name()),
                };
                let source =
                    crate::input::read_text(path, "shader", crate::input::MAX_SHADER_FILE_BYTES)?;
                Ok(StageFrontend::Wgsl { source, stage })
            }
            Language::VulkanGlsl => {
                let pre = vulkan_glsl::preprocess_file(path)?;
                // Only the stage drawn with goes through glslang: `--vs` and `--fs` naming the
                // same file would otherwise compile both of its stages twice.
                let stage = slang_stage(path, expected)?;
                let source = match stage {
                    vulkan_glsl::Stage::Vertex => pre.vertex,
                    vulkan_glsl::Stage::Fragment => pre.fragment,
                };
                Ok(StageFrontend::Slang { source, stage })
            }
            Language::Tgsi | Language::Slang => {
                bail!("{}: no cached frontend for this language", path.display())
            }
        }
    }

    fn language_key(&self) -> &'static str {
        match self {
            StageFrontend::Wgsl { .. } => "wgsl",
            StageFrontend::Slang { .. } => "slang",
        }
    }

    fn source_text(&self) -> &str {
        match self {
            StageFrontend::Wgsl { source, .. } => source,
            StageFrontend::Slang { source, .. } => &source.text,
        }
    }

    fn compile(self, path: &Path) -> Result<Stage> {
        use crate::frontend::{lower, vulkan_glsl, wgsl};
        match self {
            StageFrontend::Wgsl { source, stage } => {
                let file = path.display().to_string();
                let parsed = wgsl::parse(&source, &file)?;
                let index = wgsl::select_entry_point(&parsed.module, stage, None, &file)?;
                let lowered =
                    lower::lower(&parsed.module, &parsed.info, index, Some(&source), &file)?;
                let reflection = wgsl::reflect(&parsed, index, &file)?;
                Ok(Stage {
                    lowered,
                    reflection,
                })
            }
            StageFrontend::Slang { source, stage } => {
                let compiled = vulkan_glsl::compile_stage(source, stage)?;
                let lowered = vulkan_glsl::lower_stage(&compiled)?;
                Ok(Stage {
                    lowered,
                    reflection: compiled.reflection,
                })
            }
        }
    }
}
