//! RetroArch `.slang` shaders (Vulkan GLSL 450): preprocess, compile each stage with glslang to
//! SPIR-V, split combined image-samplers, read the SPIR-V with naga and reflect the interface.
//!
//! ```text
//! .slang ─preprocess─▶ vertex / fragment GLSL ─glslang─▶ SPIR-V ─split samplers, legalize,
//!                                                          pad std140 matrices─▶ naga::Module
//! ```
//!
//! Every error names the original file and line (through the preprocessor's line map) where one
//! is known. naga's errors point at SPIR-V instructions, which carry no source lines;
//! [`spirv_lines`] finds the function and the line that uses the variables involved.

pub mod fetch_offsets;
pub mod legalize;
pub mod padded_matrices;
pub mod preprocess;
pub mod reflect;
pub(crate) mod spirv_ids;
pub mod spirv_lines;
pub mod split_samplers;

use std::path::Path;

use super::lower::{self, LoweredShader};
use super::FrontendError;
use crate::frontend::reflect::StageReflection;
use crate::frontend::retroarch::Parameter;
pub use preprocess::{preprocess_file, FeatureDefines, Preprocessed, StageSource};
pub use reflect::ShaderReflection;
pub use split_samplers::SplitSampler;

/// A slang pipeline stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `#pragma stage vertex`
    Vertex,
    /// `#pragma stage fragment`
    Fragment,
}

impl Stage {
    /// The stage's name as written in `#pragma stage`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Vertex => "vertex",
            Stage::Fragment => "fragment",
        }
    }

    fn naga(self) -> naga::ShaderStage {
        match self {
            Stage::Vertex => naga::ShaderStage::Vertex,
            Stage::Fragment => naga::ShaderStage::Fragment,
        }
    }
}

/// One compiled stage of a slang shader.
#[derive(Debug)]
pub struct SlangStage {
    /// Which stage this is.
    pub stage: Stage,
    /// The preprocessed GLSL given to glslang, with its line map.
    pub source: StageSource,
    /// The SPIR-V after sampler splitting (what naga read).
    pub spirv: Vec<u32>,
    /// The validated naga module.
    pub module: naga::Module,
    /// naga's validation results for `module`.
    pub info: naga::valid::ModuleInfo,
    /// The entry point's name in `module` (glslang keeps GLSL's `main`).
    pub entry_point: String,
    /// Index of that entry point in `module.entry_points`.
    pub entry_index: usize,
    /// The combined image-samplers that were split, with their new sampler bindings.
    pub split_samplers: Vec<SplitSampler>,
    /// The stage's interface.
    pub reflection: StageReflection,
}

/// A compiled `.slang` file: both stages, their reflection and the pragma metadata.
#[derive(Debug)]
pub struct SlangShader {
    /// The file as given to [`compile_slang`] (used in messages).
    pub file: String,
    /// `#pragma name`.
    pub name: Option<String>,
    /// `#pragma format` (RetroArch renders to `R8G8B8A8_UNORM` when absent).
    pub format: Option<String>,
    /// The `#pragma parameter`s.
    pub parameters: Vec<Parameter>,
    /// The vertex stage.
    pub vertex: SlangStage,
    /// The fragment stage.
    pub fragment: SlangStage,
}

impl SlangShader {
    /// The whole shader's reflection (what `softgpu compile --emit reflection` prints).
    pub fn reflection(&self) -> ShaderReflection {
        ShaderReflection {
            name: self.name.clone(),
            format: self.format.clone(),
            parameters: self.parameters.clone(),
            vertex: self.vertex.reflection.clone(),
            fragment: self.fragment.reflection.clone(),
        }
    }

    /// Lowers both stages to TGSI programs (vertex, fragment).
    pub fn lower(&self) -> Result<(LoweredShader, LoweredShader), FrontendError> {
        Ok((lower_stage(&self.vertex)?, lower_stage(&self.fragment)?))
    }
}

/// Lowers one compiled stage to a TGSI program; errors name the `.slang` file and the stage.
pub fn lower_stage(stage: &SlangStage) -> Result<LoweredShader, FrontendError> {
    let root = stage
        .source
        .line_map
        .files
        .first()
        .map_or("", |f| f.as_str());
    lower::lower(&stage.module, &stage.info, stage.entry_index, None, root).map_err(|e| {
        FrontendError::new(
            &e.file,
            e.line,
            e.column,
            format!("{} stage: {}", stage.stage.name(), e.message),
        )
    })
}

/// Preprocesses, compiles, splits, validates and reflects the `.slang` file at `path`.
pub fn compile_slang(path: &Path) -> Result<SlangShader, FrontendError> {
    compile_preprocessed(path, preprocess_file(path)?)
}

/// [`compile_slang`] after the preprocessor: `pre` is what it made of the file at `path`.
pub fn compile_preprocessed(path: &Path, pre: Preprocessed) -> Result<SlangShader, FrontendError> {
    let vertex = compile_stage(pre.vertex, Stage::Vertex)?;
    let fragment = compile_stage(pre.fragment, Stage::Fragment)?;
    Ok(SlangShader {
        file: path.display().to_string(),
        name: pre.name,
        format: pre.format,
        parameters: pre.parameters,
        vertex,
        fragment,
    })
}

/// Runs one preprocessed stage through glslang, the sampler split, naga and reflection.
pub fn compile_stage(source: StageSource, stage: Stage) -> Result<SlangStage, FrontendError> {
    super::limits::on_frontend_stack(|| {
        let words = glsl_to_spirv(&source, stage)?;
        compile_stage_from_spirv(source, stage, &words)
    })
}

/// The part of [`compile_stage`] after glslang: `words` is glslang's SPIR-V for `source`.
pub fn compile_stage_from_spirv(
    source: StageSource,
    stage: Stage,
    words: &[u32],
) -> Result<SlangStage, FrontendError> {
    let root = source.line_map.files.first().cloned().unwrap_or_default();
    let (module, info, split) =
        spirv_to_naga_at(words, stage, &root).map_err(|err| with_line(err.0, &err.1, &source))?;
    let entry_index = module
        .entry_points
        .iter()
        .position(|ep| ep.stage == stage.naga())
        .ok_or_else(|| {
            FrontendError::new(&root, 0, 0, format!("no {} entry point", stage.name()))
        })?;
    let entry_point = module.entry_points[entry_index].name.clone();
    let reflection = reflect::reflect_stage(
        &module,
        &info,
        entry_index,
        &split.words,
        &split.samplers,
        &split.padded_matrices,
    )
    .map_err(|m| FrontendError::new(&root, 0, 0, format!("{} stage: {m}", stage.name())))?;
    Ok(SlangStage {
        stage,
        source,
        spirv: split.words,
        module,
        info,
        entry_point,
        entry_index,
        split_samplers: split.samplers,
        reflection,
    })
}

/// Compiles a preprocessed stage (Vulkan GLSL) to SPIR-V 1.0 with glslang. glslang's errors are
/// mapped back through the line map to `file:line`.
///
/// Threads compile at the same time: glslang is built for it once its process initialisation
/// (`Compiler::acquire`) is done — every thread parses with its own thread-local pool allocator
/// and the shared built-in symbol tables are made under glslang's own lock
/// (`tests/frontend_vulkan_glsl_threads.rs` compares concurrent compiles with serial ones).
pub fn glsl_to_spirv(source: &StageSource, stage: Stage) -> Result<Vec<u32>, FrontendError> {
    let root = source.line_map.files.first().map_or("", |f| f.as_str());
    let fail = |m: String| FrontendError::new(root, 0, 0, format!("{} stage: {m}", stage.name()));
    if source.text.contains('\0') {
        return Err(fail("source contains a NUL byte".into()));
    }
    // glslang recurses per level of nesting while it parses and while it walks its tree.
    let at_line = |line, message| {
        source
            .line_map
            .error(line, format!("{} stage: {message}", stage.name()))
    };
    super::limits::check_nesting(&source.text, at_line)?;
    super::limits::check_macro_growth(&source.text, at_line)?;
    super::limits::on_frontend_stack(|| glslang_on_this_stack(source, stage))
}

/// [`glsl_to_spirv`] after its checks, on the calling thread's stack.
fn glslang_on_this_stack(source: &StageSource, stage: Stage) -> Result<Vec<u32>, FrontendError> {
    use glslang::{
        CompilerOptions, ShaderInput, ShaderMessage, ShaderSource, ShaderStage, SourceLanguage,
        SpirvVersion, Target, VulkanVersion,
    };
    let root = source.line_map.files.first().map_or("", |f| f.as_str());
    let fail = |m: String| FrontendError::new(root, 0, 0, format!("{} stage: {m}", stage.name()));
    let compiler =
        glslang::Compiler::acquire().ok_or_else(|| fail("glslang failed to initialise".into()))?;
    let glsl = ShaderSource::from(source.text.as_str());
    let options = CompilerOptions {
        source_language: SourceLanguage::GLSL,
        target: Target::Vulkan {
            version: VulkanVersion::Vulkan1_0,
            spirv_version: SpirvVersion::SPIRV1_0,
        },
        version_profile: None,
        messages: ShaderMessage::DEFAULT,
    };
    let glsl_stage = match stage {
        Stage::Vertex => ShaderStage::Vertex,
        Stage::Fragment => ShaderStage::Fragment,
    };
    let input = ShaderInput::new(&glsl, glsl_stage, &options, None, None)
        .map_err(|e| fail(format!("glslang: {e}")))?;
    let shader = glslang::Shader::new(compiler, input)
        .parse()
        .map_err(|e| glslang_error(source, stage, &e))?;
    shader
        .compile()
        .map_err(|e| glslang_error(source, stage, &e))
}

/// Turns glslang's log (`ERROR: 0:LINE: message` lines) into an error at the first failing
/// original line, listing every error with its original position.
fn glslang_error(
    source: &StageSource,
    stage: Stage,
    e: &glslang::error::GlslangError,
) -> FrontendError {
    use glslang::error::GlslangError as G;
    let log = match e {
        G::PreprocessError(l) | G::ParseError(l) | G::MapIoError(l) | G::LinkError(l) => {
            l.log.clone()
        }
        other => other.to_string(),
    };
    let mut first: Option<(u32, String)> = None;
    let mut all = Vec::new();
    for line in log.lines() {
        let Some(rest) = line.trim().strip_prefix("ERROR:") else {
            continue;
        };
        let rest = rest.trim();
        let mut parts = rest.splitn(3, ':');
        let (Some(_string), Some(l), Some(msg)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let Ok(l) = l.trim().parse::<u32>() else {
            continue;
        };
        let msg = msg.trim().to_string();
        let place = match source.line_map.resolve(l) {
            Some((f, ol)) => format!("{f}:{ol}"),
            None => format!("line {l}"),
        };
        all.push(format!("{place}: {msg}"));
        if first.is_none() {
            first = Some((l, msg));
        }
    }
    match first {
        Some((l, msg)) => {
            let mut message = format!("{} stage: {msg}", stage.name());
            if all.len() > 1 {
                message.push_str(&format!(
                    " (and {} more: {})",
                    all.len() - 1,
                    all[1..].join("; ")
                ));
            }
            source.line_map.error(l, message)
        }
        None => source.line_map.error(
            0,
            format!("{} stage: glslang: {}", stage.name(), log.trim()),
        ),
    }
}

/// Splits combined image-samplers in `words`, applies the [`legalize`] and [`padded_matrices`]
/// rewrites, reads the result with naga (no coordinate-space flip: RetroArch's MVP already maps
/// to Vulkan clip space) and validates it.
pub fn spirv_to_naga(
    words: &[u32],
    stage: Stage,
    file: &str,
) -> Result<(naga::Module, naga::valid::ModuleInfo, split_samplers::Split), FrontendError> {
    spirv_to_naga_at(words, stage, file).map_err(|err| err.0)
}

/// Gives a naga error the source line of its SPIR-V instruction (see [`spirv_lines`]): the
/// function is named in the message, the line found through the stage's line map.
fn with_line(
    e: FrontendError,
    site: &spirv_lines::ErrorSite,
    source: &StageSource,
) -> FrontendError {
    match spirv_lines::locate(site, source) {
        Some(found) => {
            let mut located = source.line_map.error(
                found.line,
                format!("{} (in function `{}`", e.message, found.function),
            );
            if let Some(v) = found.variable {
                located.message.push_str(&format!(", at a use of `{v}`"));
            }
            located.message.push(')');
            located
        }
        None => e,
    }
}

type NagaResult = (naga::Module, naga::valid::ModuleInfo, split_samplers::Split);

/// [`spirv_to_naga`], with where in the rewritten SPIR-V a naga error points.
fn spirv_to_naga_at(
    words: &[u32],
    stage: Stage,
    file: &str,
) -> Result<NagaResult, Box<(FrontendError, spirv_lines::ErrorSite)>> {
    let fail = |m: String| FrontendError::new(file, 0, 0, format!("{} stage: {m}", stage.name()));
    let bare = |e: FrontendError| Box::new((e, spirv_lines::ErrorSite::default()));
    let mut spirv = rspirv::dr::load_words(words)
        .map_err(|e| bare(fail(format!("invalid SPIR-V from glslang: {e}"))))?;
    let samplers = split_samplers::split_module(&mut spirv).map_err(|m| bare(fail(m)))?;
    legalize::legalize(&mut spirv).map_err(|m| bare(fail(m)))?;
    fetch_offsets::fold_fetch_offsets(&mut spirv);
    let padded_matrices = padded_matrices::rewrite(&mut spirv).map_err(|m| bare(fail(m)))?;
    let split = split_samplers::Split {
        words: rspirv::binary::Assemble::assemble(&spirv),
        samplers,
        padded_matrices,
    };
    let options = naga::front::spv::Options {
        adjust_coordinate_space: false,
        strict_capabilities: false,
        block_ctx_dump_prefix: None,
    };
    let module = naga::front::spv::Frontend::new(split.words.iter().copied(), &options)
        .parse()
        .map_err(|e| {
            let message = format!("naga SPIR-V reader: {e}");
            // The reader's errors carry no position; an id they name (or the variable of a
            // builtin they name) finds the instruction.
            let id = match e {
                naga::front::spv::Error::InvalidId(id) => Some(id),
                naga::front::spv::Error::UnsupportedBuiltIn(b) => {
                    spirv.annotations.iter().find_map(|d| {
                        let decorates = d.class.opcode == rspirv::spirv::Op::Decorate
                            && matches!(
                                d.operands.get(1),
                                Some(rspirv::dr::Operand::Decoration(
                                    rspirv::spirv::Decoration::BuiltIn
                                ))
                            )
                            && matches!(
                                d.operands.get(2),
                                Some(rspirv::dr::Operand::BuiltIn(x)) if *x as u32 == b
                            );
                        match (decorates, d.operands.first()) {
                            (true, Some(rspirv::dr::Operand::IdRef(v))) => Some(*v),
                            _ => None,
                        }
                    })
                }
                _ => None,
            };
            let site = spirv_lines::ErrorSite {
                words: split.words.clone(),
                byte: None,
                id,
                ..Default::default()
            };
            Box::new((fail(message), site))
        })?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| {
        let mut message = format!("naga validation: {}", e.as_inner());
        let mut source = std::error::Error::source(e.as_inner());
        while let Some(s) = source {
            message.push_str(&format!(": {s}"));
            source = s.source();
        }
        // Outer contexts (the function) come first; the last span is the innermost, the
        // failing expression or statement.
        let byte = e
            .spans()
            .filter_map(|(span, _)| span.to_range())
            .map(|r| r.start)
            .last();
        // Errors about an entry point's interface point at no instruction: they are placed in
        // the entry function, at a use of the builtin they name.
        let function = match e.as_inner() {
            naga::valid::ValidationError::EntryPoint { name, .. } => Some(name.clone()),
            _ => None,
        };
        let site = spirv_lines::ErrorSite {
            words: split.words.clone(),
            byte,
            id: None,
            names: spirv_lines::builtin_names(&message),
            function,
        };
        Box::new((fail(message), site))
    })?;
    Ok((module, info, split))
}
