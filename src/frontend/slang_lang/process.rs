//! Running the Slang compiler in a child process: softgpu starts itself as
//! `softgpu __slang-compile`, hands it a [`Request`] as JSON on stdin and reads a [`Response`]
//! back from stdout, so a crash or abort inside the third-party compiler ends the child and
//! becomes an error naming the shader, never softgpu's own death.
//!
//! The child is softgpu's own executable by default ([`set_compiler_executable`] names another,
//! for programs that link the library but are not the `softgpu` binary, such as test harnesses).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use base64::Engine;
use serde::{Deserialize, Serialize};

use super::library::{CodeFrom, SlangLibrary};

/// The hidden subcommand a child is started with.
pub const CHILD_COMMAND: &str = "__slang-compile";

/// The line that precedes the response on the child's stdout (Slang itself may print before it).
const RESPONSE_MARKER: &str = "\n@@softgpu-slang-response@@\n";

static COMPILER_EXECUTABLE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Makes `path` (an executable whose `main` calls [`serve_child_if_requested`]) the program
/// started to compile Slang, instead of the current executable.
pub fn set_compiler_executable(path: PathBuf) {
    if let Ok(mut slot) = COMPILER_EXECUTABLE.lock() {
        *slot = Some(path);
    }
}

/// One compile, as the parent asks for it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Request {
    /// The Slang library file.
    pub library: PathBuf,
    /// slangc-style arguments (source file, target, search paths, defines), without the entry
    /// point.
    pub args: Vec<String>,
    /// The entry point; `None`: the program's only one of `stage`.
    pub entry: Option<String>,
    /// The stage, as Slang's `-stage` spells it (`vertex`, `fragment`).
    pub stage: String,
    /// Take entry point 0's code rather than the whole target's.
    pub per_entry_point: bool,
}

/// What the child answers.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Response {
    /// Whether the compile succeeded (`code` holds the output).
    pub ok: bool,
    /// The entry point compiled.
    pub entry_point: String,
    /// Slang's diagnostics, or why the library could not be used.
    pub diagnostics: String,
    /// The target code, base64.
    pub code: String,
    /// The program's reflection (`spReflection_ToJson`).
    pub reflection_json: String,
    /// Every file the compile read.
    pub dependencies: Vec<String>,
    /// The library's version.
    pub version: String,
}

impl Response {
    /// The target code's bytes.
    pub fn code_bytes(&self) -> Result<Vec<u8>, String> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.code)
            .map_err(|e| format!("the Slang compiler process answered malformed code: {e}"))
    }
}

/// Runs `request` in a child process. `file` names the shader in errors: a child that cannot be
/// started, crashes, or answers nothing readable is an error saying so.
pub fn compile_in_child(request: &Request, file: &str) -> Result<Response, String> {
    let exe = match COMPILER_EXECUTABLE.lock().ok().and_then(|s| s.clone()) {
        Some(p) => p,
        None => std::env::current_exe()
            .map_err(|e| format!("{file}: cannot find softgpu's executable to run Slang: {e}"))?,
    };
    let payload = serde_json::to_vec(request).map_err(|e| format!("{file}: {e}"))?;
    let mut child = Command::new(&exe)
        .arg(CHILD_COMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "{file}: cannot start the Slang compiler process ({}): {e}",
                exe.display()
            )
        })?;
    // The request is small and written before anything is read back, so the child never blocks
    // on a full stdout pipe while the parent is still writing.
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(&payload);
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("{file}: the Slang compiler process: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answer = stdout
        .rfind(RESPONSE_MARKER)
        .map(|at| &stdout[at + RESPONSE_MARKER.len()..]);
    match answer.map(serde_json::from_str::<Response>) {
        Some(Ok(response)) if output.status.success() => Ok(response),
        _ => {
            let how = describe_exit(&output.status);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: String = stderr
                .trim()
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("; ");
            let mut message = format!("{file}: the Slang compiler {how}");
            if !tail.is_empty() {
                message.push_str(&format!(" ({tail})"));
            }
            Err(message)
        }
    }
}

fn describe_exit(status: &std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                11 => " (SIGSEGV)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                4 => " (SIGILL)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                _ => "",
            };
            return format!("crashed with signal {signal}{name} while compiling it");
        }
    }
    match status.code() {
        Some(0) => "process answered nothing readable".into(),
        Some(code) => format!("process failed with exit status {code} while compiling it"),
        None => "process ended without a status".into(),
    }
}

/// The child's side: when this process was started as `<exe> __slang-compile`, reads the request
/// from stdin, compiles, writes the response to stdout and returns the exit status to end with;
/// otherwise returns `None` and the program goes on.
pub fn serve_child_if_requested() -> Option<i32> {
    if std::env::args_os().nth(1).as_deref() != Some(std::ffi::OsStr::new(CHILD_COMMAND)) {
        return None;
    }
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("{CHILD_COMMAND}: cannot read the request: {e}");
        return Some(2);
    }
    let request: Request = match serde_json::from_slice(&input) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{CHILD_COMMAND}: malformed request: {e}");
            return Some(2);
        }
    };
    let response = serve(&request);
    let Ok(json) = serde_json::to_string(&response) else {
        return Some(2);
    };
    let mut out = std::io::stdout().lock();
    let written = out
        .write_all(RESPONSE_MARKER.as_bytes())
        .and_then(|()| out.write_all(json.as_bytes()))
        .and_then(|()| out.flush());
    Some(if written.is_ok() { 0 } else { 2 })
}

fn serve(request: &Request) -> Response {
    let glsl = request
        .args
        .iter()
        .any(|a| a == "-allow-glsl" || a == "-enable-glsl");
    let library = match SlangLibrary::load(Path::new(&request.library), glsl) {
        Ok(l) => l,
        Err(e) => {
            return Response {
                diagnostics: e,
                ..Default::default()
            }
        }
    };
    let version = library.version();
    let failed = |diagnostics: String| Response {
        diagnostics,
        version: version.clone(),
        ..Default::default()
    };
    let entry = match &request.entry {
        Some(name) => name.clone(),
        None => {
            // Compile the whole program once to learn its entry points from the reflection.
            let all = match compile_with_fallback(&library, &request.args, CodeFrom::Nothing) {
                Ok(out) if out.ok => out,
                Ok(out) => return failed(out.diagnostics),
                Err(e) => return failed(e),
            };
            let names = entry_points_of_stage(&all.reflection_json, &request.stage);
            match names.as_slice() {
                [only] => only.clone(),
                [] => {
                    return failed(format!(
                        "error: no [shader(\"{}\")] entry point in the file",
                        request.stage
                    ))
                }
                several => {
                    return failed(format!(
                        "error: several {} entry points ({}); choose one with --entry (draw: --vs-entry, --fs-entry)",
                        request.stage,
                        several.join(", ")
                    ))
                }
            }
        }
    };
    let mut args = request.args.clone();
    args.extend([
        "-entry".to_string(),
        entry.clone(),
        "-stage".to_string(),
        request.stage.clone(),
    ]);
    match compile_with_fallback(
        &library,
        &args,
        if request.per_entry_point {
            CodeFrom::EntryPoint
        } else {
            CodeFrom::Target
        },
    ) {
        Ok(out) => Response {
            ok: out.ok,
            entry_point: entry,
            diagnostics: out.diagnostics,
            code: base64::engine::general_purpose::STANDARD.encode(&out.code),
            reflection_json: out.reflection_json,
            dependencies: out.dependencies,
            version,
        },
        Err(e) => failed(e),
    }
}

/// Compiles; a library shipped without the SPIR-V optimizer (slangtorch's) fails at `-O1`, so
/// such a failure is retried unoptimized (`-O0`).
fn compile_with_fallback(
    library: &SlangLibrary,
    args: &[String],
    from: CodeFrom,
) -> Result<super::library::CompileOutput, String> {
    let out = library.compile(args, from)?;
    if out.ok || !out.diagnostics.contains("downstream compiler 'spirv-opt'") {
        return Ok(out);
    }
    let mut unoptimized = args.to_vec();
    unoptimized.push("-O0".into());
    library.compile(&unoptimized, from)
}

/// The names of the entry points of `stage` in Slang's reflection JSON.
fn entry_points_of_stage(json: &str, stage: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else {
        return Vec::new();
    };
    let wanted = |s: &str| s == stage || (stage == "fragment" && s == "pixel");
    value["entryPoints"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter(|e| e["stage"].as_str().is_some_and(wanted))
                .filter_map(|e| e["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
