//! `softgpu compile`: a shader in any supported language to TGSI text, its naga module, its
//! reflection, or a translation by naga's backends.

use crate::args::SlangArgs;
use crate::read;
use anyhow::{anyhow, Result};
use clap::ValueEnum;
use softgpu::input::MAX_SHADER_FILE_BYTES;
use softgpu::ir::{text, Processor};
use softgpu::shader::{self, Language};
use std::path::PathBuf;

/// `--lang`: the source language.
#[derive(Clone, Copy, ValueEnum)]
enum LangArg {
    /// Mesa's TGSI text format.
    Tgsi,
    /// WGSL.
    Wgsl,
    /// RetroArch's Vulkan GLSL (.slang files with `#version` and `#pragma stage`).
    #[value(alias = "slang-glsl", alias = "vulkan-glsl")]
    Retroarch,
    /// The Slang shading language (through the Slang compiler library).
    Slang,
    /// RetroArch's Cg (.cg files).
    Cg,
}

/// `--stage`: the stage to compile.
#[derive(Clone, Copy, ValueEnum)]
enum StageArg {
    /// The vertex stage.
    Vertex,
    /// The fragment stage.
    Fragment,
}

/// `--emit`: what to print.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EmitArg {
    /// The TGSI program in Mesa's text format.
    Tgsi,
    /// The naga module (WGSL, .slang and Cg shaders).
    Naga,
    /// The reflection as JSON (.slang and Cg shaders).
    Reflection,
    /// The stage translated to WGSL by naga (WGSL, .slang and Cg shaders).
    Wgsl,
    /// The stage translated to GLSL 4.50 by naga (WGSL, .slang and Cg shaders).
    Glsl,
    /// The stage translated to SPIR-V by naga (WGSL, .slang and Cg shaders).
    Spirv,
    /// The SPIR-V the Slang compiler wrote for the entry point (Slang-language shaders): a
    /// disassembly on stdout, binary with --output.
    SlangSpirv,
    /// The GLSL the Slang compiler writes for the entry point (Slang-language shaders).
    SlangGlsl,
}

/// The flags of `softgpu compile`.
#[derive(clap::Args)]
pub struct CompileArgs {
    /// The shader: Mesa TGSI text, WGSL, a .slang file (RetroArch or Slang language) or a Cg
    /// .cg file.
    file: PathBuf,
    /// Source language [default: from the file's extension: .wgsl wgsl, .cg cg, .slang retroarch
    /// when it starts with `#version` and has `#pragma stage`, slang when it has neither; any
    /// other tgsi]
    #[arg(long, value_enum, allow_hyphen_values = true)]
    lang: Option<LangArg>,
    /// The entry point of a Slang-language shader [default: its only `[shader("…")]` function
    /// of --stage]
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    entry: Option<String>,
    #[command(flatten)]
    slang: SlangArgs,
    /// The stage to compile from a WGSL, .slang or Cg shader (a TGSI program names its own).
    #[arg(
        long,
        value_enum,
        default_value = "fragment",
        allow_hyphen_values = true
    )]
    stage: StageArg,
    /// What to print.
    #[arg(long, value_enum, default_value = "tgsi", allow_hyphen_values = true)]
    emit: EmitArg,
    /// Write what --emit asks for to FILE instead of stdout.
    ///
    /// SPIR-V goes to FILE as binary, to stdout as a disassembly. FILE is written whole or not
    /// at all: a failing compile leaves an existing FILE as it was.
    #[arg(long, short = 'o', value_name = "FILE", allow_hyphen_values = true)]
    output: Option<PathBuf>,
}

/// Translates one entry point of a validated module with naga's backends.
fn translate(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_index: usize,
    emit: EmitArg,
) -> Result<(String, Option<Vec<u8>>)> {
    let ep = module
        .entry_points
        .get(entry_index)
        .ok_or_else(|| anyhow!("no entry point number {entry_index}"))?;
    match emit {
        EmitArg::Wgsl => {
            let text = naga::back::wgsl::write_string(
                module,
                info,
                naga::back::wgsl::WriterFlags::EXPLICIT_TYPES,
            )
            .map_err(|e| anyhow!("WGSL backend: {e}"))?;
            Ok((text, None))
        }
        EmitArg::Glsl => {
            let options = naga::back::glsl::Options {
                version: naga::back::glsl::Version::Desktop(450),
                ..Default::default()
            };
            let pipeline = naga::back::glsl::PipelineOptions {
                shader_stage: ep.stage,
                entry_point: ep.name.clone(),
                multiview: None,
            };
            let mut text = String::new();
            let mut writer = naga::back::glsl::Writer::new(
                &mut text,
                module,
                info,
                &options,
                &pipeline,
                naga::proc::BoundsCheckPolicies::default(),
            )
            .map_err(|e| anyhow!("GLSL backend: {e}"))?;
            writer.write().map_err(|e| anyhow!("GLSL backend: {e}"))?;
            Ok((text, None))
        }
        EmitArg::Spirv => {
            let pipeline = naga::back::spv::PipelineOptions {
                shader_stage: ep.stage,
                entry_point: ep.name.clone(),
            };
            let words = naga::back::spv::write_vec(
                module,
                info,
                &naga::back::spv::Options::default(),
                Some(&pipeline),
            )
            .map_err(|e| anyhow!("SPIR-V backend: {e}"))?;
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let mut loader = rspirv::dr::Loader::new();
            rspirv::binary::parse_words(&words, &mut loader)
                .map_err(|e| anyhow!("SPIR-V disassembly: {e}"))?;
            use rspirv::binary::Disassemble;
            Ok((loader.module().disassemble(), Some(bytes)))
        }
        _ => Err(anyhow!("not a translation target")),
    }
}

/// Writes `text` to stdout; a reader that stopped early (`| head`) is not an error.
fn print_stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(anyhow!("stdout: {e}")),
        _ => Ok(()),
    }
}

/// Prints what `--emit` asked for, or writes it to `--output`; SPIR-V goes to the file as
/// binary, to stdout as a disassembly.
fn write_translation(out: (String, Option<Vec<u8>>), output: &Option<PathBuf>) -> Result<()> {
    match output {
        Some(path) => {
            let bytes = out.1.unwrap_or_else(|| out.0.into_bytes());
            Ok(softgpu::output::write_atomic(path, "--output", &bytes)?)
        }
        None => print_stdout(&out.0),
    }
}

/// `softgpu compile` of a Cg shader: the text (and, for SPIR-V, the binary) `--emit` asks for.
fn compile_cg(args: &CompileArgs, stage: Processor) -> Result<(String, Option<Vec<u8>>)> {
    let shader = softgpu::frontend::cg::compile_cg(&args.file)?;
    let st = if stage == Processor::Vertex {
        &shader.vertex
    } else {
        &shader.fragment
    };
    match args.emit {
        EmitArg::Tgsi => {
            let (vs, fs) = shader.lower()?;
            let program = if stage == Processor::Vertex { vs } else { fs }.program;
            Ok((text::print_program(&program), None))
        }
        EmitArg::Naga => Ok((format!("{:#?}\n", st.module), None)),
        EmitArg::Reflection => {
            let json = serde_json::to_string_pretty(&st.reflection)?;
            Ok((json + "\n", None))
        }
        emit => translate(&st.module, &st.info, st.entry_index, emit),
    }
}

/// `softgpu compile` of a Slang-language shader: the text (and, for SPIR-V, the binary)
/// `--emit` asks for.
fn compile_slang(args: &CompileArgs, stage: Processor) -> Result<(String, Option<Vec<u8>>)> {
    use softgpu::frontend::slang_lang::{self, Target};
    use softgpu::frontend::vulkan_glsl::Stage;
    let options = args.slang.options(args.entry.as_deref());
    let slang_stage = if stage == Processor::Vertex {
        Stage::Vertex
    } else {
        Stage::Fragment
    };
    match args.emit {
        EmitArg::SlangGlsl => {
            let out = slang_lang::compile_to(&args.file, slang_stage, Target::Glsl, &options)?;
            return Ok((String::from_utf8_lossy(&out.code).into_owned(), None));
        }
        EmitArg::SlangSpirv => {
            let out = slang_lang::compile_to(&args.file, slang_stage, Target::Spirv, &options)?;
            let mut loader = rspirv::dr::Loader::new();
            rspirv::binary::parse_bytes(&out.code, &mut loader)
                .map_err(|e| anyhow!("{}: Slang's SPIR-V: {e}", args.file.display()))?;
            use rspirv::binary::Disassemble;
            let text = loader.module().disassemble() + "\n";
            return Ok((text, Some(out.code)));
        }
        _ => {}
    }
    let compiled = slang_lang::compile_stage(&args.file, slang_stage, &options)?;
    match args.emit {
        EmitArg::Tgsi => {
            let lowered = slang_lang::lower_stage(&args.file, &compiled)?;
            Ok((text::print_program(&lowered.program), None))
        }
        EmitArg::Naga => Ok((format!("{:#?}\n", compiled.module), None)),
        EmitArg::Reflection => {
            let slang: serde_json::Value = serde_json::from_str(&compiled.output.reflection_json)
                .unwrap_or(serde_json::Value::Null);
            let json = serde_json::json!({
                "entry_point": compiled.output.entry_point,
                "stage": slang_stage.name(),
                "slang_version": compiled.output.version,
                "stage_reflection": compiled.reflection,
                "slang_reflection": slang,
            });
            Ok((serde_json::to_string_pretty(&json)? + "\n", None))
        }
        emit => translate(&compiled.module, &compiled.info, compiled.entry_index, emit),
    }
}

/// Runs `softgpu compile`: what `--emit` asks for goes to `--output` (checked before the shader
/// is compiled, written atomically) or to stdout.
pub fn run(args: CompileArgs) -> Result<()> {
    if let Some(path) = &args.output {
        softgpu::output::check_output(path, "--output", &[])?;
    }
    // Cg is not a `shader::Language` (a Cg file holds both stages and is compiled whole): `None`.
    let language = match args.lang {
        Some(LangArg::Tgsi) => Some(Language::Tgsi),
        Some(LangArg::Wgsl) => Some(Language::Wgsl),
        Some(LangArg::Retroarch) => Some(Language::VulkanGlsl),
        Some(LangArg::Slang) => Some(Language::Slang),
        Some(LangArg::Cg) => None,
        None if args
            .file
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("cg")) =>
        {
            None
        }
        None => Some(Language::detect(&args.file)?),
    };
    let stage = match args.stage {
        StageArg::Vertex => Processor::Vertex,
        StageArg::Fragment => Processor::Fragment,
    };
    if language == Some(Language::Slang) {
        return write_translation(compile_slang(&args, stage)?, &args.output);
    }
    if matches!(args.emit, EmitArg::SlangGlsl | EmitArg::SlangSpirv) {
        return Err(anyhow!(
            "--emit slang-glsl/slang-spirv needs a Slang-language shader (--lang slang)"
        ));
    }
    let out = match language {
        None => compile_cg(&args, stage)?,
        Some(language) => compile(&args, language, stage)?,
    };
    write_translation(out, &args.output)
}

/// `softgpu compile` of a TGSI, WGSL or .slang shader: the text (and, for SPIR-V, the binary)
/// `--emit` asks for.
fn compile(
    args: &CompileArgs,
    language: Language,
    stage: Processor,
) -> Result<(String, Option<Vec<u8>>)> {
    if matches!(args.emit, EmitArg::Wgsl | EmitArg::Glsl | EmitArg::Spirv) {
        return match language {
            Language::VulkanGlsl => {
                let shader = softgpu::frontend::vulkan_glsl::compile_slang(&args.file)?;
                let st = if stage == Processor::Vertex {
                    &shader.vertex
                } else {
                    &shader.fragment
                };
                translate(&st.module, &st.info, st.entry_index, args.emit)
            }
            Language::Wgsl => {
                let source = read(&args.file, "shader", MAX_SHADER_FILE_BYTES)?;
                let parsed =
                    softgpu::frontend::wgsl::parse(&source, &args.file.display().to_string())?;
                let want = if stage == Processor::Vertex {
                    softgpu::frontend::wgsl::Stage::Vertex
                } else {
                    softgpu::frontend::wgsl::Stage::Fragment
                };
                let index = softgpu::frontend::wgsl::select_entry_point(
                    &parsed.module,
                    want,
                    None,
                    &args.file.display().to_string(),
                )?;
                translate(&parsed.module, &parsed.info, index, args.emit)
            }
            Language::Tgsi | Language::Slang => Err(anyhow!(
                "--emit wgsl/glsl/spirv translates WGSL, .slang and Cg shaders; TGSI programs have no naga module"
            )),
        };
    }
    if language == Language::VulkanGlsl && args.emit != EmitArg::Tgsi {
        let shader = softgpu::frontend::vulkan_glsl::compile_slang(&args.file)?;
        let text = if args.emit == EmitArg::Reflection {
            format!("{}\n", shader.reflection().to_json())
        } else if stage == Processor::Vertex {
            format!("{:#?}\n", shader.vertex.module)
        } else {
            format!("{:#?}\n", shader.fragment.module)
        };
        return Ok((text, None));
    }
    if args.emit == EmitArg::Reflection {
        return Err(anyhow!(
            "--emit reflection needs a .slang or Cg shader (--lang retroarch, slang or cg)"
        ));
    }
    if language == Language::VulkanGlsl {
        let program = shader::compile_shader(&args.file, stage, Some(language))?;
        return Ok((text::print_program(&program), None));
    }
    if language == Language::Wgsl {
        if args.emit == EmitArg::Naga {
            let source = read(&args.file, "shader", MAX_SHADER_FILE_BYTES)?;
            let parsed = softgpu::frontend::wgsl::parse(&source, &args.file.display().to_string())?;
            return Ok((format!("{:#?}\n", parsed.module), None));
        }
        let program = shader::compile_shader(&args.file, stage, Some(language))?;
        return Ok((text::print_program(&program), None));
    }
    if args.emit == EmitArg::Naga {
        return Err(anyhow!(
            "--emit naga needs a WGSL, .slang or Cg shader; TGSI programs have no naga module"
        ));
    }
    let source = read(&args.file, "shader", MAX_SHADER_FILE_BYTES)?;
    let program = shader::parse_tgsi(&args.file, &source)?;
    Ok((text::print_program(&program), None))
}
