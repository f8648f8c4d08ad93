//! The Slang compiler library: finding it on this machine, and calling the handful of its C entry
//! points softgpu needs (`slang-deprecated.h`'s compile-request API), loaded at run time.
//!
//! softgpu never links Slang: the library ships in Python wheels (`slangpy`, `slangtorch`) under
//! the name `libslang-compiler.so.*` (older releases: `libslang.so`), and Debian's unrelated S-Lang
//! library is also called `libslang.so.2`, so a link-time `-lslang` could bind the wrong one.
//! Discovery looks only where the user or a Slang installation points, and a library without
//! `spCreateCompileRequest` is refused.
//!
//! Loading and calling Slang happens only in the child process of [`super::process`]: a crash
//! inside the compiler ends that child, not softgpu.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};

/// How to install the library, for the "not found" error.
pub const INSTALL_HINT: &str = "pip install --no-deps slangpy==0.43.1";

/// The environment variable naming the library file (or its directory).
pub const LIBRARY_ENV: &str = "SOFTGPU_SLANG_LIB";

/// The environment variable naming a Slang installation (its directory or its `lib/`).
pub const SLANG_DIR_ENV: &str = "SLANG_DIR";

/// Where the library is: `explicit` (`--slang-lib`), else `$SOFTGPU_SLANG_LIB`, else `$SLANG_DIR`,
/// else the directory of the `slangpy` or `slangtorch` Python package `python3` would import.
/// Each names a library file or a directory holding one. The error says where it looked and how
/// to install the library.
pub fn find_library(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let mut looked = Vec::new();
    let mut candidates: Vec<(String, PathBuf)> = Vec::new();
    if let Some(p) = explicit {
        candidates.push(("--slang-lib".into(), p.to_path_buf()));
    }
    for var in [LIBRARY_ENV, SLANG_DIR_ENV] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            candidates.push((format!("${var}"), PathBuf::from(v)));
        }
    }
    // A path the user named that holds no library is an error of its own: falling through to
    // another installation would compile with a compiler they did not choose.
    if let Some((source, path)) = candidates.first() {
        return library_in(path).ok_or_else(|| {
            format!(
                "{source} {}: no Slang compiler library (libslang-compiler.so*) there",
                path.display()
            )
        });
    }
    for dir in python_package_dirs() {
        if let Some(lib) = library_in(&dir) {
            return Ok(lib);
        }
        looked.push(dir.display().to_string());
    }
    let mut message = format!(
        "the Slang compiler library was not found; install it with `{INSTALL_HINT}`, or name it \
         with --slang-lib PATH, ${LIBRARY_ENV} or ${SLANG_DIR_ENV}"
    );
    if !looked.is_empty() {
        message.push_str(&format!(" (looked in {})", looked.join(", ")));
    }
    Err(message)
}

/// The library file `path` names: the file itself, or the Slang library in the directory (or its
/// `lib/`), the newest-named when there are several.
fn library_in(path: &Path) -> Option<PathBuf> {
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    for dir in [path.to_path_buf(), path.join("lib")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.is_file()
                    && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with("libslang-compiler.so") || n == "libslang.so"
                    })
            })
            .collect();
        found.sort();
        if let Some(last) = found.pop() {
            return Some(last);
        }
    }
    None
}

/// The directories of the `slangpy` and `slangtorch` packages, as `python3` finds them (without
/// importing them: slangpy's import starts a GPU runtime).
fn python_package_dirs() -> Vec<PathBuf> {
    const SCRIPT: &str = "import importlib.util as u\n\
        for n in ('slangpy', 'slangtorch'):\n\
        \ts = u.find_spec(n)\n\
        \tif s and s.submodule_search_locations:\n\
        \t\tfor d in s.submodule_search_locations: print(d)\n";
    let Ok(out) = std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .flat_map(|l| {
            let d = PathBuf::from(l);
            // slangtorch keeps its libraries in a `bin/` subdirectory.
            [d.clone(), d.join("bin")]
        })
        .collect()
}

/// `ISlangBlob`'s virtual table: `ISlangUnknown`'s three methods, then the buffer's pointer and
/// size.
#[repr(C)]
struct BlobVtable {
    query_interface: *const c_void,
    add_ref: *const c_void,
    release: unsafe extern "C" fn(*mut Blob) -> u32,
    buffer_pointer: unsafe extern "C" fn(*mut Blob) -> *const c_void,
    buffer_size: unsafe extern "C" fn(*mut Blob) -> usize,
}

/// An `ISlangBlob` object: a pointer to its virtual table.
#[repr(C)]
struct Blob {
    vtable: *const BlobVtable,
}

type CreateGlobalSession = unsafe extern "C" fn(i64, *mut *mut c_void) -> i32;
type CreateGlobalSession2 = unsafe extern "C" fn(*const GlobalSessionDesc, *mut *mut c_void) -> i32;

/// `SlangGlobalSessionDesc` of slang.h.
#[repr(C)]
struct GlobalSessionDesc {
    structure_size: u32,
    api_version: u32,
    min_language_version: u32,
    enable_glsl: bool,
    reserved: [u32; 16],
}
type CreateCompileRequest = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type ProcessArguments = unsafe extern "C" fn(*mut c_void, *const *const c_char, c_int) -> i32;
type RequestFn = unsafe extern "C" fn(*mut c_void) -> i32;
type RequestText = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type TargetBlob = unsafe extern "C" fn(*mut c_void, c_int, *mut *mut Blob) -> i32;
type GetReflection = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type ReflectionJson = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut *mut Blob) -> i32;
type DependencyCount = unsafe extern "C" fn(*mut c_void) -> c_int;
type DependencyPath = unsafe extern "C" fn(*mut c_void, c_int) -> *const c_char;
type BuildTag = unsafe extern "C" fn() -> *const c_char;
type DestroyRequest = unsafe extern "C" fn(*mut c_void);

/// What one compile request produced.
#[derive(Debug, Default)]
pub struct CompileOutput {
    /// Whether `spCompile` succeeded.
    pub ok: bool,
    /// Slang's diagnostics (`file(line): error …` or `--> file:line:col` blocks).
    pub diagnostics: String,
    /// The target code: SPIR-V bytes, or GLSL text.
    pub code: Vec<u8>,
    /// `spReflection_ToJson` of the program.
    pub reflection_json: String,
    /// Every file the compile read (the source and each module it imports or includes).
    pub dependencies: Vec<String>,
}

/// Which code a compile returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeFrom {
    /// The whole target's (SPIR-V: asking a SPIR-V target for one entry point's blob crashes
    /// Slang 2026.12).
    Target,
    /// Entry point 0's (GLSL, whose target blob is refused).
    EntryPoint,
    /// None: the compile is for its diagnostics and reflection.
    Nothing,
}

/// A loaded Slang library with one global session.
pub struct SlangLibrary {
    library: libloading::Library,
    session: *mut c_void,
}

impl SlangLibrary {
    /// Loads the library at `path` and creates a global session (0.25–0.9 s: Slang builds its
    /// core module); `enable_glsl` also loads its `glsl` module, which GLSL-flavoured Slang
    /// (`-allow-glsl`) needs.
    pub fn load(path: &Path, enable_glsl: bool) -> Result<SlangLibrary, String> {
        // SAFETY: loading runs the library's initializers; the file is the Slang compiler as
        // found by `find_library` or named by the user, the one library this module exists to
        // load.
        let library = unsafe { libloading::Library::new(path) }
            .map_err(|e| format!("{}: cannot load the Slang library: {e}", path.display()))?;
        // SAFETY: the symbol's type is `slang_createGlobalSession`'s in slang.h.
        let create: libloading::Symbol<CreateGlobalSession> =
            unsafe { library.get(b"slang_createGlobalSession\0") }.map_err(|_| {
                format!(
                    "{}: not the Slang compiler (no slang_createGlobalSession)",
                    path.display()
                )
            })?;
        // SAFETY: presence only; the type is checked where the symbol is called.
        if unsafe { library.get::<CreateCompileRequest>(b"spCreateCompileRequest\0") }.is_err() {
            return Err(format!(
                "{}: not the Slang compiler (no spCreateCompileRequest)",
                path.display()
            ));
        }
        let mut session = std::ptr::null_mut();
        // SAFETY: the symbol's type is `slang_createGlobalSession2`'s in slang.h.
        let create2 =
            unsafe { library.get::<CreateGlobalSession2>(b"slang_createGlobalSession2\0") };
        let result = match (enable_glsl, create2) {
            (true, Ok(create2)) => {
                let desc = GlobalSessionDesc {
                    structure_size: std::mem::size_of::<GlobalSessionDesc>() as u32,
                    api_version: 0,
                    // SLANG_LANGUAGE_VERSION_2025, slang.h's default.
                    min_language_version: 2025,
                    enable_glsl: true,
                    reserved: [0; 16],
                };
                // SAFETY: a complete descriptor that outlives the call, and an out pointer.
                unsafe { create2(&desc, &mut session) }
            }
            // SAFETY: API version 0 (SLANG_API_VERSION) and an out pointer the call fills.
            _ => unsafe { create(0, &mut session) },
        };
        if result < 0 || session.is_null() {
            return Err(format!(
                "{}: slang_createGlobalSession failed (result {result:#x})",
                path.display()
            ));
        }
        Ok(SlangLibrary { library, session })
    }

    /// The library's version (`spGetBuildTagString`, e.g. `2026.12`).
    pub fn version(&self) -> String {
        // SAFETY: `spGetBuildTagString` takes nothing and returns a static C string.
        unsafe {
            match self.library.get::<BuildTag>(b"spGetBuildTagString\0") {
                Ok(f) => {
                    let p = f();
                    if p.is_null() {
                        String::new()
                    } else {
                        CStr::from_ptr(p).to_string_lossy().into_owned()
                    }
                }
                Err(_) => String::new(),
            }
        }
    }

    fn symbol<T>(&self, name: &[u8]) -> Result<libloading::Symbol<'_, T>, String> {
        // SAFETY: every caller names a symbol of slang-deprecated.h with `T` its C signature.
        unsafe { self.library.get::<T>(name) }.map_err(|e| {
            format!(
                "the Slang library lacks {}: {e}",
                String::from_utf8_lossy(name.strip_suffix(b"\0").unwrap_or(name))
            )
        })
    }

    /// Compiles with slangc-style `args` (source files, `-target`, `-entry`, `-stage`, `-I`,
    /// `-D`, …) and takes the code `from` where it says.
    pub fn compile(&self, args: &[String], from: CodeFrom) -> Result<CompileOutput, String> {
        let create: libloading::Symbol<CreateCompileRequest> =
            self.symbol(b"spCreateCompileRequest\0")?;
        let process: libloading::Symbol<ProcessArguments> =
            self.symbol(b"spProcessCommandLineArguments\0")?;
        let compile: libloading::Symbol<RequestFn> = self.symbol(b"spCompile\0")?;
        let diagnostics: libloading::Symbol<RequestText> =
            self.symbol(b"spGetDiagnosticOutput\0")?;
        let destroy: libloading::Symbol<DestroyRequest> =
            self.symbol(b"spDestroyCompileRequest\0")?;
        let c_args: Vec<CString> = args
            .iter()
            .map(|a| CString::new(a.as_str()))
            .collect::<Result<_, _>>()
            .map_err(|_| "an argument contains a NUL byte".to_string())?;
        let pointers: Vec<*const c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
        // SAFETY: the session was created by `load`; a null request is checked.
        let request = unsafe { create(self.session) };
        if request.is_null() {
            return Err("spCreateCompileRequest failed".into());
        }
        let mut out = CompileOutput::default();
        let result = (|| -> Result<(), String> {
            // SAFETY: `pointers` holds `c_args.len()` NUL-terminated strings that outlive the call.
            let r = unsafe { process(request, pointers.as_ptr(), pointers.len() as c_int) };
            if r < 0 {
                // SAFETY: the request is live; the text is copied before it is destroyed.
                out.diagnostics = unsafe { c_text(diagnostics(request)) };
                return Ok(());
            }
            // SAFETY: the request is live and fully set up.
            out.ok = unsafe { compile(request) } >= 0;
            // SAFETY: as above.
            out.diagnostics = unsafe { c_text(diagnostics(request)) };
            if !out.ok {
                return Ok(());
            }
            let mut blob: *mut Blob = std::ptr::null_mut();
            let r = if from == CodeFrom::Nothing {
                0
            } else if from == CodeFrom::EntryPoint {
                let f: libloading::Symbol<
                    unsafe extern "C" fn(*mut c_void, c_int, c_int, *mut *mut Blob) -> i32,
                > = self.symbol(b"spGetEntryPointCodeBlob\0")?;
                // SAFETY: entry point 0 of target 0 of a compiled request; `blob` is filled.
                unsafe { f(request, 0, 0, &mut blob) }
            } else {
                let f: libloading::Symbol<TargetBlob> = self.symbol(b"spGetTargetCodeBlob\0")?;
                // SAFETY: target 0 of a compiled request; `blob` is filled.
                unsafe { f(request, 0, &mut blob) }
            };
            if from != CodeFrom::Nothing && (r < 0 || blob.is_null()) {
                out.ok = false;
                // SAFETY: as above; code generation may have added diagnostics.
                out.diagnostics = unsafe { c_text(diagnostics(request)) };
                if out.diagnostics.trim().is_empty() {
                    out.diagnostics = format!("Slang produced no code (result {r:#x})");
                }
                return Ok(());
            }
            if !blob.is_null() {
                // SAFETY: `blob` is a live ISlangBlob Slang just returned.
                out.code = unsafe { take_blob(blob) };
            }
            let get: libloading::Symbol<GetReflection> = self.symbol(b"spGetReflection\0")?;
            let to_json: libloading::Symbol<ReflectionJson> =
                self.symbol(b"spReflection_ToJson\0")?;
            // SAFETY: a compiled request has a reflection object (or null, checked).
            let reflection = unsafe { get(request) };
            if !reflection.is_null() {
                let mut json: *mut Blob = std::ptr::null_mut();
                // SAFETY: live reflection and request; `json` is filled.
                if unsafe { to_json(reflection, request, &mut json) } >= 0 && !json.is_null() {
                    // SAFETY: `json` is a live ISlangBlob.
                    let bytes = unsafe { take_blob(json) };
                    out.reflection_json = String::from_utf8_lossy(&bytes).into_owned();
                }
            }
            let count: libloading::Symbol<DependencyCount> =
                self.symbol(b"spGetDependencyFileCount\0")?;
            let path: libloading::Symbol<DependencyPath> =
                self.symbol(b"spGetDependencyFilePath\0")?;
            // SAFETY: live request; indices below the count it reports.
            for i in 0..unsafe { count(request) } {
                // SAFETY: as above.
                out.dependencies.push(unsafe { c_text(path(request, i)) });
            }
            Ok(())
        })();
        // SAFETY: the request was created above and is destroyed once.
        unsafe { destroy(request) };
        result.map(|()| out)
    }
}

/// Copies a C string (empty for null).
///
/// # Safety
/// `p` is null or a NUL-terminated string live for the call.
unsafe fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: the caller's contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// Copies a blob's bytes and releases it.
///
/// # Safety
/// `blob` is a live `ISlangBlob` whose reference the caller owns.
unsafe fn take_blob(blob: *mut Blob) -> Vec<u8> {
    // SAFETY: the caller's contract: the vtable is ISlangBlob's.
    unsafe {
        let vtable = &*(*blob).vtable;
        let pointer = (vtable.buffer_pointer)(blob) as *const u8;
        let size = (vtable.buffer_size)(blob);
        let bytes = if pointer.is_null() {
            Vec::new()
        } else {
            std::slice::from_raw_parts(pointer, size).to_vec()
        };
        (vtable.release)(blob);
        bytes
    }
}
