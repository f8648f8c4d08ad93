//! Building one stage from a file in any language, as `softgpu draw` and `compile` do.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

use super::stage_cache::{self, StageCacheUse};
use crate::draw::{uniform_blocks, CompiledStage};
use crate::ir::{text, validate, Processor, Program};

/// The language of a shader file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// Mesa's TGSI text format.
    Tgsi,
    /// WGSL (through naga).
    Wgsl,
    /// RetroArch slang: Vulkan GLSL with `#pragma stage` (through glslang, SPIR-V and naga).
    SlangGlsl,
}

impl Language {
    /// The language a file name implies: `.wgsl` is WGSL, `.slang` RetroArch slang, anything
    /// else TGSI text.
    pub fn from_path(path: &Path) -> Language {
        match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("wgsl") => Language::Wgsl,
            Some(ext) if ext.eq_ignore_ascii_case("slang") => Language::SlangGlsl,
            _ => Language::Tgsi,
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
    if language.unwrap_or_else(|| Language::from_path(path)) == Language::SlangGlsl {
        use crate::frontend::vulkan_glsl as slang;
        let vertex = slang_stage(path, expected)? == slang::Stage::Vertex;
        let shader = slang::compile_slang(path)?;
        let stage = if vertex {
            &shader.vertex
        } else {
            &shader.fragment
        };
        return Ok(slang::lower_stage(stage)?.program);
    }
    Ok(compile_stage(path, expected, language)?.program)
}

/// Reads and validates a TGSI program file; errors name the file and line.
pub fn load_program(path: &Path, expected: Processor) -> Result<Program> {
    let source = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read shader", path.display()))?;
    let program = text::parse_program(&source).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    validate::validate(&program).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        anyhow!(
            "{}: invalid program:\n  {}",
            path.display(),
            lines.join("\n  ")
        )
    })?;
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

/// Like [`compile_shader`], also returning the uniform blocks of WGSL and slang stages.
pub fn compile_stage(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
) -> Result<CompiledStage> {
    Ok(compile_stage_cached(path, expected, language, None)?.0)
}

/// [`compile_stage`] through the on-disk shader cache in `cache` (see `draw::stage_cache`): a
/// WGSL or slang stage whose source an entry holds skips its frontend; one compiled is stored.
/// Also says what the cache did.
pub fn compile_stage_cached(
    path: &Path,
    expected: Processor,
    language: Option<Language>,
    cache: Option<&Path>,
) -> Result<(CompiledStage, StageCacheUse)> {
    let language = language.unwrap_or_else(|| Language::from_path(path));
    if language == Language::Tgsi {
        let program = load_program(path, expected)?;
        let stage = CompiledStage {
            program,
            blocks: Vec::new(),
        };
        return Ok((stage, StageCacheUse::Uncached));
    }
    let frontend = StageFrontend::read(path, expected, language)?;
    let (language_key, source) = (frontend.language_key(), frontend.source_text().to_string());
    let mut used = StageCacheUse::Uncached;
    if let Some(dir) = cache {
        let (found, outcome) = stage_cache::load(dir, language_key, expected, &source);
        if let Some(stage) = found {
            return Ok((stage, outcome));
        }
        used = outcome;
    }
    let stage = frontend.compile(path)?;
    if let Some(dir) = cache {
        stage_cache::store(dir, language_key, expected, &source, &stage);
    }
    Ok((stage, used))
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
        use crate::frontend::{vulkan_glsl as slang, wgsl};
        match language {
            Language::Wgsl => {
                let stage = match expected {
                    Processor::Vertex => wgsl::Stage::Vertex,
                    Processor::Fragment => wgsl::Stage::Fragment,
                    other => bail!("{}: no {} stage in WGSL", path.display(), other.name()),
                };
                let source = std::fs::read_to_string(path)
                    .with_context(|| format!("{}: cannot read shader", path.display()))?;
                Ok(StageFrontend::Wgsl { source, stage })
            }
            Language::SlangGlsl => {
                let pre = slang::preprocess_file(path)?;
                // Only the stage drawn with goes through glslang: `--vs` and `--fs` naming the
                // same file would otherwise compile both of its stages twice.
                let stage = slang_stage(path, expected)?;
                let source = match stage {
                    slang::Stage::Vertex => pre.vertex,
                    slang::Stage::Fragment => pre.fragment,
                };
                Ok(StageFrontend::Slang { source, stage })
            }
            Language::Tgsi => bail!("{}: TGSI has no frontend", path.display()),
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

    fn compile(self, path: &Path) -> Result<CompiledStage> {
        use crate::frontend::{lower, vulkan_glsl as slang, wgsl};
        match self {
            StageFrontend::Wgsl { source, stage } => {
                let file = path.display().to_string();
                let parsed = wgsl::parse(&source, &file)?;
                let index = wgsl::select_entry_point(&parsed.module, stage, None, &file)?;
                let lowered =
                    lower::lower(&parsed.module, &parsed.info, index, Some(&source), &file)?;
                let reflection = wgsl::reflect(&parsed, index, &file)?;
                Ok(CompiledStage {
                    blocks: uniform_blocks(&reflection, &lowered),
                    program: lowered.program,
                })
            }
            StageFrontend::Slang { source, stage } => {
                let compiled = slang::compile_stage(source, stage)?;
                let lowered = slang::lower_stage(&compiled)?;
                Ok(CompiledStage {
                    blocks: uniform_blocks(&compiled.reflection, &lowered),
                    program: lowered.program,
                })
            }
        }
    }
}
