//! The Slang shading language (modules and `import`, generics, interfaces, `[shader("…")]`
//! entry points, `ConstantBuffer`, `ParameterBlock`, `Texture2D` + `SamplerState`, `SV_*`
//! semantics) through the real Slang compiler, loaded at run time:
//!
//! ```text
//! .slang ─Slang (child process)─▶ SPIR-V ─input attachments, storage image formats
//!        (spirv_rewrite)─▶ ─split samplers, legalize, pad std140 matrices
//!        (vulkan_glsl's passes)─▶ naga::Module ─lower─▶ TGSI program
//! ```
//!
//! [`library`] finds and calls the compiler; [`process`] runs it in a child of softgpu so a crash
//! in it becomes an error naming the file. From the SPIR-V on, a stage goes the way a RetroArch
//! `.slang` stage goes after glslang (`vulkan_glsl::spirv_to_naga`), without RetroArch's rules
//! (one uniform buffer, `#pragma` metadata). [`detect`] tells a Slang file from a RetroArch one;
//! [`cache_key`] keys a stage in the shader cache without running Slang.
//!
//! The child is the running executable started as `EXE __slang-compile`: a program other than
//! the `softgpu` binary that compiles Slang through this module calls
//! [`serve_child_if_requested`] first thing in `main`, or names such a program with
//! [`set_compiler_executable`].

pub mod cache_key;
pub mod detect;
pub mod library;
pub mod process;
pub mod spirv_rewrite;

use std::path::{Path, PathBuf};

use super::lower::{self, LoweredShader};
use super::reflect::StageReflection;
use super::vulkan_glsl::{self, Stage};
use super::FrontendError;

pub use process::{serve_child_if_requested, set_compiler_executable, CHILD_COMMAND};

/// How a Slang file is compiled: the library, the entry point and the preprocessor's inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlangOptions {
    /// The library file or directory (`--slang-lib`); `None`: [`library::find_library`]'s search.
    pub library: Option<PathBuf>,
    /// The entry point to compile; `None`: the file's only `[shader("…")]` entry point of the
    /// stage asked for.
    pub entry: Option<String>,
    /// Directories searched by `import` and `#include` (`-I`).
    pub include_dirs: Vec<PathBuf>,
    /// Preprocessor macros, `NAME` or `NAME=VALUE` (`-D`).
    pub defines: Vec<String>,
    /// Further slangc-style arguments, passed as given (`-allow-glsl`, `-matrix-layout-column-major`).
    pub extra_args: Vec<String>,
}

/// What Slang emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// SPIR-V (what softgpu reads).
    Spirv,
    /// Vulkan-flavoured GLSL 450 (for references on OpenGL drivers and for reading).
    Glsl,
}

/// One entry point as Slang compiled it, before softgpu reads it.
#[derive(Clone, Debug)]
pub struct SlangOutput {
    /// The entry point's name.
    pub entry_point: String,
    /// SPIR-V bytes or GLSL text, as [`Target`] asked.
    pub code: Vec<u8>,
    /// Slang's own reflection of the program (`spReflection_ToJson`).
    pub reflection_json: String,
    /// Every file the compile read: the source and every module it imports or includes.
    pub dependencies: Vec<PathBuf>,
    /// The compiler's version (`2026.12`).
    pub version: String,
    /// Warnings Slang printed for a successful compile.
    pub warnings: String,
}

/// One compiled stage of a Slang file.
#[derive(Debug)]
pub struct SlangLangStage {
    /// Which stage this is.
    pub stage: Stage,
    /// Slang's output for it (SPIR-V).
    pub output: SlangOutput,
    /// The SPIR-V naga read (after sampler splitting and the other rewrites).
    pub spirv: Vec<u32>,
    /// The validated naga module.
    pub module: naga::Module,
    /// naga's validation results for `module`.
    pub info: naga::valid::ModuleInfo,
    /// Index of the entry point in `module.entry_points`.
    pub entry_index: usize,
    /// The stage's interface.
    pub reflection: StageReflection,
}

/// The slangc-style arguments of a compile of `path` (without the entry point).
fn base_args(path: &Path, target: Target, options: &SlangOptions) -> Vec<String> {
    let mut file = path.display().to_string();
    if file.starts_with('-') {
        file = format!("./{file}");
    }
    let mut args = vec![
        file,
        "-target".into(),
        match target {
            Target::Spirv => "spirv".into(),
            Target::Glsl => "glsl".into(),
        },
        // Keep entry points' own names in SPIR-V (else every one is `main`).
        "-fvk-use-entrypoint-name".into(),
    ];
    for dir in &options.include_dirs {
        args.push("-I".into());
        args.push(dir.display().to_string());
    }
    for define in &options.defines {
        args.push("-D".into());
        args.push(define.clone());
    }
    args.extend(options.extra_args.iter().cloned());
    args
}

/// Compiles the `stage` entry point of the Slang file at `path` to `target` in a child process.
/// Errors name the file and carry Slang's diagnostics at their `file:line:col`.
pub fn compile_to(
    path: &Path,
    stage: Stage,
    target: Target,
    options: &SlangOptions,
) -> Result<SlangOutput, FrontendError> {
    let file = path.display().to_string();
    let fail = |m: String| FrontendError::new(&file, 0, 0, m);
    crate::input::open_regular(path, "shader", crate::input::MAX_SHADER_FILE_BYTES)
        .map_err(|e| fail(e.message))?;
    let library = library::find_library(options.library.as_deref())
        .map_err(|m| fail(format!("Slang shader: {m}")))?;
    let request = process::Request {
        library,
        args: base_args(path, target, options),
        entry: options.entry.clone(),
        stage: stage.name().into(),
        per_entry_point: target == Target::Glsl,
    };
    let response = process::compile_in_child(&request, &file).map_err(|m| {
        // The child's own message already starts with the file.
        FrontendError::new(&file, 0, 0, m.trim_start_matches(&format!("{file}: ")))
    })?;
    if !response.ok {
        return Err(diagnostic_error(&file, &response.diagnostics));
    }
    let code = response.code_bytes().map_err(fail)?;
    Ok(SlangOutput {
        entry_point: response.entry_point,
        code,
        reflection_json: response.reflection_json,
        dependencies: response
            .dependencies
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        version: response.version,
        warnings: response.diagnostics,
    })
}

/// Compiles, reads, validates and reflects the `stage` entry point of the Slang file at `path`.
pub fn compile_stage(
    path: &Path,
    stage: Stage,
    options: &SlangOptions,
) -> Result<SlangLangStage, FrontendError> {
    let output = compile_to(path, stage, Target::Spirv, options)?;
    stage_from_spirv(path, stage, output)
}

/// The part of [`compile_stage`] after Slang: `output` is its SPIR-V for `path`.
pub fn stage_from_spirv(
    path: &Path,
    stage: Stage,
    output: SlangOutput,
) -> Result<SlangLangStage, FrontendError> {
    let file = path.display().to_string();
    let fail = |m: String| FrontendError::new(&file, 0, 0, format!("{} stage: {m}", stage.name()));
    if !output.code.len().is_multiple_of(4) || output.code.is_empty() {
        return Err(fail(format!(
            "Slang returned {} bytes, not SPIR-V words",
            output.code.len()
        )));
    }
    let words: Vec<u32> = output
        .code
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut spirv = rspirv::dr::load_words(&words)
        .map_err(|e| fail(format!("invalid SPIR-V from Slang: {e}")))?;
    spirv_rewrite::rewrite(&mut spirv).map_err(fail)?;
    let words = rspirv::binary::Assemble::assemble(&spirv);
    // naga's SPIR-V reader panics on some of Slang's output (multisampled array images, for
    // one); that is an error about this file, not the end of softgpu.
    let read = {
        let _guard = ReadingSpirv::enter();
        std::panic::catch_unwind(|| vulkan_glsl::spirv_to_naga(&words, stage, &file))
    };
    let (module, info, split) = match read {
        Ok(result) => result?,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            return Err(fail(format!(
                "naga's SPIR-V reader failed on Slang's output (an internal error of naga: {what})"
            )));
        }
    };
    let wanted = match stage {
        Stage::Vertex => naga::ShaderStage::Vertex,
        Stage::Fragment => naga::ShaderStage::Fragment,
    };
    let entry_index = module
        .entry_points
        .iter()
        .position(|ep| ep.stage == wanted && ep.name == output.entry_point)
        .or_else(|| module.entry_points.iter().position(|ep| ep.stage == wanted))
        .ok_or_else(|| fail(format!("no {} entry point in Slang's SPIR-V", stage.name())))?;
    let reflection = vulkan_glsl::reflect::reflect_spirv_stage(
        &module,
        &info,
        entry_index,
        &split.words,
        &split.samplers,
        &split.padded_matrices,
    )
    .map_err(fail)?;
    Ok(SlangLangStage {
        stage,
        output,
        spirv: split.words,
        module,
        info,
        entry_index,
        reflection,
    })
}

thread_local! {
    static READING_SPIRV: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread is reading Slang's SPIR-V with naga, whose panics become errors: a panic
/// hook can stay quiet about them.
pub fn reading_spirv() -> bool {
    READING_SPIRV.with(|r| r.get())
}

/// Marks this thread as reading SPIR-V until dropped.
struct ReadingSpirv;

impl ReadingSpirv {
    fn enter() -> ReadingSpirv {
        READING_SPIRV.with(|r| r.set(true));
        ReadingSpirv
    }
}

impl Drop for ReadingSpirv {
    fn drop(&mut self) {
        READING_SPIRV.with(|r| r.set(false));
    }
}

/// Lowers a compiled stage to a TGSI program; errors name the file and the stage.
pub fn lower_stage(path: &Path, stage: &SlangLangStage) -> Result<LoweredShader, FrontendError> {
    let file = path.display().to_string();
    lower::lower(&stage.module, &stage.info, stage.entry_index, None, &file).map_err(|e| {
        FrontendError::new(
            &e.file,
            e.line,
            e.column,
            format!(
                "{} stage (entry point `{}`): {}",
                stage.stage.name(),
                stage.output.entry_point,
                e.message
            ),
        )
    })
}

/// Slang's diagnostics as an error at the first error's `file:line:col`, the whole text kept
/// below the first line. Slang writes either `error[E30015]: message` followed by
/// ` --> file:line:col`, or (older releases) `file(line): error 30015: message`.
pub fn diagnostic_error(file: &str, diagnostics: &str) -> FrontendError {
    let text = diagnostics.trim_end();
    let mut place: Option<(String, u32, u32)> = None;
    let mut headline: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if headline.is_none() {
            if let Some(rest) = trimmed.strip_prefix("error") {
                let message = rest
                    .split_once(": ")
                    .map_or(rest, |(_, m)| m)
                    .trim()
                    .to_string();
                headline = Some(message);
            } else if let Some((at, message)) = trimmed.split_once("): error") {
                if let Some((f, l)) = at.rsplit_once('(') {
                    let mut numbers = l.split(',').map(|n| n.trim().parse::<u32>().ok());
                    if let Some(Some(line)) = numbers.next() {
                        let column = numbers.next().flatten().unwrap_or(0);
                        place = Some((f.to_string(), line, column));
                    }
                }
                let message = message
                    .split_once(": ")
                    .map_or(message, |(_, m)| m)
                    .trim()
                    .to_string();
                headline = Some(message);
            }
        }
        if headline.is_some() && place.is_none() {
            if let Some(loc) = trimmed.strip_prefix("--> ") {
                let mut parts = loc.rsplitn(3, ':');
                let column = parts.next().and_then(|c| c.trim().parse().ok());
                let line = parts.next().and_then(|l| l.trim().parse().ok());
                if let (Some(column), Some(line), Some(f)) = (column, line, parts.next()) {
                    place = Some((f.to_string(), line, column));
                }
            }
        }
        if headline.is_some() && place.is_some() {
            break;
        }
    }
    let headline = headline.unwrap_or_else(|| {
        if text.is_empty() {
            "the Slang compiler failed without a diagnostic".into()
        } else {
            "the Slang compiler failed".into()
        }
    });
    let message = if text.is_empty() {
        headline
    } else {
        format!("{headline}\n{text}")
    };
    match place {
        Some((f, line, column)) => FrontendError::new(&f, line, column, message),
        None => FrontendError::new(file, 0, 0, message),
    }
}

#[cfg(test)]
mod tests {
    use super::diagnostic_error;

    #[test]
    fn diagnostics_give_the_first_error_position() {
        let text = "error[E30015]: undefined identifier\n --> a/b.slang:3:20\n  |\n3 | x\n";
        let e = diagnostic_error("b.slang", text);
        assert_eq!((e.file.as_str(), e.line, e.column), ("a/b.slang", 3, 20));
        assert!(
            e.message.starts_with("undefined identifier\n"),
            "{}",
            e.message
        );
    }

    #[test]
    fn old_style_diagnostics_give_their_position() {
        let e = diagnostic_error(
            "f.slang",
            "f.slang(7): error 30015: undefined identifier 'x'.",
        );
        assert_eq!((e.line, e.column), (7, 0));
        assert!(e.message.starts_with("undefined identifier 'x'."));
    }

    #[test]
    fn warnings_before_the_error_are_skipped() {
        let text =
            "warning[E1]: unused\n --> w.slang:1:1\nerror[E2]: bad thing\n --> w.slang:9:4\n";
        let e = diagnostic_error("w.slang", text);
        assert_eq!((e.line, e.column), (9, 4));
        assert!(e.message.starts_with("bad thing"));
    }
}
