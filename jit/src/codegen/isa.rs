//! Cranelift's target for this host: the ISA with the flags of the two compilation tiers
//! (`tiers`), the host features the code generator asks about, and modules that live as long
//! as the process, for the functions every kernel may call (`shims`, `texpaths`).

use std::sync::OnceLock;

use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};

use crate::exec::ExecError;

pub(super) fn isa(optimize: bool) -> Result<OwnedTargetIsa, String> {
    static ISA: [OnceLock<Result<OwnedTargetIsa, String>>; 2] = [OnceLock::new(), OnceLock::new()];
    ISA[optimize as usize]
        .get_or_init(|| {
            let mut flags = settings::builder();
            let set = |f: &mut settings::Builder, k: &str, v: &str| {
                f.set(k, v)
                    .map_err(|e| format!("cranelift setting {k}={v}: {e}"))
            };
            if optimize {
                set(&mut flags, "opt_level", "speed")?;
                set(&mut flags, "regalloc_algorithm", "backtracking")?;
            } else {
                set(&mut flags, "opt_level", "none")?;
                set(&mut flags, "regalloc_algorithm", "single_pass")?;
            }
            set(&mut flags, "use_colocated_libcalls", "false")?;
            set(&mut flags, "is_pic", "false")?;
            set(&mut flags, "enable_verifier", "false")?;
            // Nothing unwinds through a kernel (its shims are `extern "C"`: a panic aborts).
            set(&mut flags, "unwind_info", "false")?;
            let builder = cranelift_native::builder().map_err(|e| e.to_string())?;
            builder
                .finish(settings::Flags::new(flags))
                .map_err(|e| e.to_string())
        })
        .clone()
}

/// Functions compiled once per process by `compile` into a module that is never freed (kernels
/// of every later compilation call them: the code must stay mapped); their addresses, or
/// `None` when compiling failed.
pub(super) fn process_functions<const N: usize>(
    compile: impl FnOnce(&mut JITModule) -> Result<Vec<cranelift_module::FuncId>, ExecError>,
) -> Option<[usize; N]> {
    let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let isa = isa(true).ok()?;
        let mut module = JITModule::new(JITBuilder::with_isa(
            isa,
            cranelift_module::default_libcall_names(),
        ));
        let ids = compile(&mut module).ok()?;
        let addrs: Vec<usize> = ids
            .into_iter()
            .map(|id| module.get_finalized_function(id) as usize)
            .collect();
        std::mem::forget(module);
        addrs.try_into().ok()
    }));
    compiled.ok().flatten()
}

/// True when the host (whose features Cranelift's native ISA enables) has FMA3.
pub(super) fn cpu_has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
