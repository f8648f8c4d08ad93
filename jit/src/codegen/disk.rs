//! Kernels compiled for speed, kept on disk for later processes of the same build.
//!
//! The optimizing compile (Cranelift's optimizer and backtracking register allocator) is most of
//! what a short job spends once its shaders' frontends are cached: crt-royale's three
//! transcendental-heavy passes take 43–81 ms each. Kernels hold no absolute address (every
//! function, table and static comes from the address table in `Ctx`, see `Address`), and
//! Cranelift emits them without relocations, so their bytes run wherever they are loaded.
//!
//! An entry holds its identity — the build, the target ISA's flags, the math mode, the sampler
//! hints and the program's Mesa text — the code, and what the kernel needs around it (its
//! calling convention into Rust, register-file extents, inline texture sites, general texture
//! paths). It is used only when its identity equals the program's byte for byte; anything else
//! (truncated, corrupt, another build or CPU) is ignored and overwritten by the next compile.
//! The directory, entry names, atomic writes and pruning are `softgpu-cache`'s.

use std::path::PathBuf;
use std::sync::RwLock;

use softgpu_cache::{hash128, Cache, Kind};

use super::FastSiteUnits;
use crate::ir::text::print_program;
use crate::ir::MathMode;
use crate::ir::{InlineShape, InlineWrap, Program};

/// Where kernels are kept and the build they belong to.
struct Config {
    cache: Cache,
    build: String,
}

static CONFIG: RwLock<Option<Config>> = RwLock::new(None);

const MAGIC: &[u8; 8] = b"SGKERNL1";

/// Keeps kernels compiled for speed in `dir` from now on, for this process and later ones of
/// the same `build` (an identifier of the code that compiles them); `None` stops it. The
/// setting is process-wide.
pub fn set_kernel_cache(dir: Option<PathBuf>, build: &str) {
    let mut config = CONFIG.write().unwrap_or_else(|e| e.into_inner());
    *config = dir.map(|dir| Config {
        cache: Cache::new(dir),
        build: build.to_string(),
    });
}

/// Whether kernels are kept on disk.
pub(super) fn enabled() -> bool {
    CONFIG.read().map(|c| c.is_some()).unwrap_or(false)
}

/// A kernel as stored: its code and what it needs around it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StoredKernel {
    pub code: Vec<u8>,
    pub alignment: u64,
    /// Whether the code calls Rust through the `preserve_all` trampolines.
    pub preserve_all: bool,
    pub num_inputs: usize,
    pub num_sysvals: usize,
    pub num_outputs: usize,
    pub num_const_buffers: usize,
    pub fast_sites: Vec<FastSiteUnits>,
    pub general_ops: [bool; 5],
}

/// What identifies a kernel of `program` in `math` (with llvmpipe's functions native or not)
/// for the configured build and this CPU.
fn identity(
    build: &str,
    program: &Program,
    math: MathMode,
    lp_native: bool,
    optimized: bool,
) -> String {
    let isa = match super::isa(true) {
        Ok(isa) => {
            let flags: Vec<String> = isa.isa_flags().iter().map(|f| f.to_string()).collect();
            format!("{} {}", isa.flags(), flags.join(" "))
        }
        Err(e) => e,
    };
    format!(
        "build {build}\nisa {isa}\ntier {}\nmath {math:?} native {lp_native}\nhints {:?} ignored {}\n{}",
        if optimized { "optimized" } else { "fast" },
        program.sampler_hints,
        std::env::var_os("SOFTGPU_NO_SAMPLER_HINTS").is_some(),
        print_program(program)
    )
}

/// The stored kernel of `program` (compiled for speed, or the fast tier's), if the cache
/// holds one for this build and CPU.
pub(super) fn load(
    program: &Program,
    math: MathMode,
    lp_native: bool,
    optimized: bool,
) -> Option<StoredKernel> {
    let (cache, identity) = {
        let config = CONFIG.read().ok()?;
        let config = config.as_ref()?;
        let identity = identity(&config.build, program, math, lp_native, optimized);
        (config.cache.clone(), identity)
    };
    cache
        .load(Kind::Kernel, identity.as_str(), |bytes| {
            decode(&bytes, &identity)
        })
        .hit()
}

/// Stores `kernel` as `program`'s (`optimized`: compiled for speed); a failure to write only
/// loses the entry.
pub(super) fn store(
    program: &Program,
    math: MathMode,
    lp_native: bool,
    optimized: bool,
    kernel: &StoredKernel,
) {
    let (cache, identity) = {
        let Ok(config) = CONFIG.read() else {
            return;
        };
        let Some(config) = config.as_ref() else {
            return;
        };
        (
            config.cache.clone(),
            identity(&config.build, program, math, lp_native, optimized),
        )
    };
    cache.store(Kind::Kernel, identity.as_str(), &encode(kernel, &identity));
}

fn shape_name(shape: Option<InlineShape>) -> String {
    match shape {
        None => "-".to_string(),
        Some(s) => format!(
            "{}:{}{}",
            if s.linear { "linear" } else { "nearest" },
            match s.wrap {
                InlineWrap::RepeatPot => "repeat",
                InlineWrap::ClampToEdge => "edge",
                InlineWrap::ClampToBorder => "border",
            },
            if s.mipmapped { ":mip" } else { "" }
        ),
    }
}

fn parse_shape(text: &str) -> Option<Option<InlineShape>> {
    if text == "-" {
        return Some(None);
    }
    let (filter, rest) = text.split_once(':')?;
    let (wrap, mipmapped) = match rest.strip_suffix(":mip") {
        Some(wrap) => (wrap, true),
        None => (rest, false),
    };
    let linear = match filter {
        "linear" => true,
        "nearest" => false,
        _ => return None,
    };
    let wrap = match wrap {
        "repeat" => InlineWrap::RepeatPot,
        "edge" => InlineWrap::ClampToEdge,
        "border" => InlineWrap::ClampToBorder,
        _ => return None,
    };
    Some(Some(InlineShape {
        linear,
        wrap,
        mipmapped,
    }))
}

/// `MAGIC`, then the identity, the description and the code, each after its length (u64 LE),
/// then the [`hash128`] of everything before it.
fn encode(kernel: &StoredKernel, identity: &str) -> Vec<u8> {
    let mut meta = format!(
        "alignment {}\npreserve_all {}\nio {} {} {} {}\ngeneral {}\n",
        kernel.alignment,
        u8::from(kernel.preserve_all),
        kernel.num_inputs,
        kernel.num_sysvals,
        kernel.num_outputs,
        kernel.num_const_buffers,
        kernel
            .general_ops
            .iter()
            .map(|&g| if g { '1' } else { '0' })
            .collect::<String>()
    );
    for site in &kernel.fast_sites {
        meta.push_str(&format!(
            "site {} {} {}\n",
            site.view,
            site.sampler,
            shape_name(site.shape)
        ));
    }
    let mut out = MAGIC.to_vec();
    for part in [identity.as_bytes(), meta.as_bytes(), &kernel.code] {
        out.extend_from_slice(&(part.len() as u64).to_le_bytes());
        out.extend_from_slice(part);
    }
    let check = hash128(out.as_slice()).to_le_bytes();
    out.extend_from_slice(&check);
    out
}

/// The kernel in `bytes` if they are a well-formed entry of `identity`.
fn decode(bytes: &[u8], identity: &str) -> Option<StoredKernel> {
    let (body, check) = bytes.split_last_chunk::<16>()?;
    if hash128(body).to_le_bytes() != *check {
        return None;
    }
    let mut rest = body.strip_prefix(MAGIC.as_slice())?;
    let mut part = || -> Option<&[u8]> {
        let (len, tail) = rest.split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        if len > tail.len() {
            return None;
        }
        let (part, tail) = tail.split_at(len);
        rest = tail;
        Some(part)
    };
    if part()? != identity.as_bytes() {
        return None;
    }
    let meta = std::str::from_utf8(part()?).ok()?;
    let code = part()?.to_vec();
    if code.is_empty() || !rest.is_empty() {
        return None;
    }
    let mut kernel = StoredKernel {
        code,
        alignment: 0,
        preserve_all: false,
        num_inputs: 0,
        num_sysvals: 0,
        num_outputs: 0,
        num_const_buffers: 0,
        fast_sites: Vec::new(),
        general_ops: [false; 5],
    };
    let mut seen = 0u32;
    for line in meta.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        let number = |i: usize| words.get(i)?.parse::<usize>().ok();
        match words[0] {
            "alignment" => {
                kernel.alignment = u64::try_from(number(1)?).ok()?;
                seen |= 1;
            }
            "preserve_all" => {
                kernel.preserve_all = number(1)? == 1;
                seen |= 2;
            }
            "io" => {
                kernel.num_inputs = number(1)?;
                kernel.num_sysvals = number(2)?;
                kernel.num_outputs = number(3)?;
                kernel.num_const_buffers = number(4)?;
                seen |= 4;
            }
            "general" => {
                let flags = words.get(1)?.as_bytes();
                if flags.len() != 5 {
                    return None;
                }
                for (op, &flag) in kernel.general_ops.iter_mut().zip(flags) {
                    *op = flag == b'1';
                }
                seen |= 8;
            }
            "site" => kernel.fast_sites.push(FastSiteUnits {
                view: u32::try_from(number(1)?).ok()?,
                sampler: u32::try_from(number(2)?).ok()?,
                shape: parse_shape(words.get(3)?)?,
            }),
            _ => return None,
        }
    }
    let sane = kernel.alignment.is_power_of_two()
        && kernel.alignment <= 4096
        && kernel
            .num_inputs
            .max(kernel.num_sysvals)
            .max(kernel.num_outputs)
            <= super::MAX_DIRECT_IO as usize
        && kernel.num_const_buffers <= 1 << 16
        && kernel.fast_sites.len() <= super::emit::MAX_INLINE_TEX;
    (seen == 15 && sane).then_some(kernel)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StoredKernel {
        StoredKernel {
            code: vec![0xc3, 0x90, 0x90],
            alignment: 16,
            preserve_all: true,
            num_inputs: 2,
            num_sysvals: 1,
            num_outputs: 1,
            num_const_buffers: 3,
            fast_sites: vec![
                FastSiteUnits {
                    view: 1,
                    sampler: 2,
                    shape: None,
                },
                FastSiteUnits {
                    view: 0,
                    sampler: 0,
                    shape: Some(InlineShape {
                        linear: true,
                        wrap: InlineWrap::ClampToBorder,
                        mipmapped: false,
                    }),
                },
                FastSiteUnits {
                    view: 3,
                    sampler: 3,
                    shape: Some(InlineShape {
                        linear: false,
                        wrap: InlineWrap::RepeatPot,
                        mipmapped: true,
                    }),
                },
            ],
            general_ops: [true, false, false, true, false],
        }
    }

    #[test]
    fn entries_decode_only_whole_and_for_their_identity() {
        let kernel = sample();
        let bytes = encode(&kernel, "id");
        assert_eq!(decode(&bytes, "id"), Some(kernel));
        assert_eq!(decode(&bytes, "other"), None);
        for at in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x04;
            assert_eq!(decode(&damaged, "id"), None, "byte {at} changed");
        }
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut], "id"), None, "cut at {cut}");
        }
        let replace = |from: &str, to: &str| {
            let at = bytes
                .windows(from.len())
                .position(|w| w == from.as_bytes())
                .expect("field present");
            let mut changed = bytes[..bytes.len() - 16].to_vec();
            changed[at..at + to.len()].copy_from_slice(to.as_bytes());
            let check = hash128(changed.as_slice()).to_le_bytes();
            changed.extend_from_slice(&check);
            decode(&changed, "id")
        };
        assert_eq!(replace("alignment 16", "alignment 17"), None);
        assert_eq!(replace("site 1 2 -", "site 1 2 ?"), None);
        assert_eq!(
            replace("general 10010", "general 1001x"),
            Some(StoredKernel {
                general_ops: [true, false, false, true, false],
                ..sample()
            })
        );
        assert_eq!(replace("io 2 1 1 3", "io 2 1 1 x"), None);
    }
}
