//! Flags and argument parsers shared by several subcommands.

use anyhow::{anyhow, bail, Result};
use clap::ValueEnum;
use softgpu::shader::Executor;
use softgpu::texture::Texture;
use std::path::PathBuf;

/// Where compiled shaders are cached between runs.
#[derive(clap::Args)]
pub struct ShaderCacheArgs {
    /// Directory of the on-disk shader cache [default: $SOFTGPU_CACHE_DIR, else
    /// $XDG_CACHE_HOME/softgpu, else ~/.cache/softgpu]
    ///
    /// It keeps what compiling the shaders produced (frontend output and JIT kernels), so the
    /// next run of the same shaders skips glslang, naga, the lowering and the JIT's optimizing
    /// compile.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "no_shader_cache",
        allow_hyphen_values = true
    )]
    shader_cache: Option<PathBuf>,
    /// Compile every shader, neither reading nor writing the shader cache.
    #[arg(long)]
    no_shader_cache: bool,
}

impl ShaderCacheArgs {
    /// The cache directory to use, if any.
    pub fn dir(&self) -> Option<PathBuf> {
        if self.no_shader_cache {
            return None;
        }
        self.shader_cache
            .clone()
            .or_else(softgpu::shader::default_cache_dir)
    }
}

/// `--driver`: whose rules the shaders run with.
#[derive(Clone, Copy, Default, ValueEnum)]
pub enum DriverArg {
    /// Mesa softpipe: glibc-exact math, float filtering, coarse derivatives, Mesa's
    /// conversions.
    #[default]
    Softpipe,
    /// Mesa llvmpipe/lavapipe: its math and sRGB curve, 8-bit filtering of UNORM8 textures,
    /// fine derivatives.
    Llvmpipe,
    /// An NVIDIA GPU: 1/256 filtering weights, fine derivatives, NVIDIA's UNORM8 and sRGB
    /// conversions (its transcendentals and interpolation are not reproduced).
    Nvidia,
}

impl DriverArg {
    /// The driver this flag selects.
    pub fn driver(self) -> softgpu::driver::Driver {
        match self {
            DriverArg::Softpipe => softgpu::driver::Driver::Softpipe,
            DriverArg::Llvmpipe => softgpu::driver::Driver::Llvmpipe,
            DriverArg::Nvidia => softgpu::driver::Driver::Nvidia,
        }
    }
}

/// `--math`: how EX2, LG2, POW, SIN and COS are computed.
#[derive(Clone, Copy, ValueEnum)]
pub enum MathArg {
    /// glibc-exact, as Mesa's softpipe computes.
    Exact,
    /// Mesa llvmpipe/lavapipe's polynomial approximations, bit for bit (to match images from
    /// that driver).
    Llvmpipe,
}

impl MathArg {
    /// The math mode `flag` selects, else `driver`'s.
    pub fn or_driver(
        flag: Option<MathArg>,
        driver: softgpu::driver::Driver,
    ) -> softgpu::ir::MathMode {
        flag.map_or_else(|| driver.math(), MathArg::mode)
    }

    /// The math mode this flag selects.
    pub fn mode(self) -> softgpu::ir::MathMode {
        match self {
            MathArg::Exact => softgpu::ir::MathMode::Exact,
            MathArg::Llvmpipe => softgpu::ir::MathMode::Llvmpipe,
        }
    }
}

/// `--exec`: which executor runs the shaders.
#[derive(Clone, Copy, ValueEnum)]
pub enum ExecArg {
    /// The Cranelift JIT (a program it cannot compile runs on the interpreter).
    Jit,
    /// The reference interpreter.
    Interp,
}

impl ExecArg {
    /// The executor this flag selects.
    pub fn executor(self) -> Executor {
        match self {
            ExecArg::Jit => Executor::Jit,
            ExecArg::Interp => Executor::Interp,
        }
    }
}

/// `--png-compression`, shared by the commands that write PNGs.
#[derive(clap::Args)]
pub struct PngArgs {
    /// How hard PNG outputs are compressed: the pixels are the same at every level. fast (the
    /// fdeflate encoder) is several times faster than balanced (zlib level 6) for files up to
    /// half larger; high gives the smallest files, for images that are committed.
    #[arg(long, value_enum, default_value = "fast", allow_hyphen_values = true)]
    png_compression: PngCompressionArg,
}

impl PngArgs {
    /// The encoder level the flag selects.
    pub fn compression(&self) -> softgpu::encode::PngCompression {
        self.png_compression.compression()
    }
}

/// `--png-compression`.
#[derive(Clone, Copy, ValueEnum)]
enum PngCompressionArg {
    /// The fdeflate encoder: fastest, somewhat larger files.
    Fast,
    /// zlib level 6.
    Balanced,
    /// The smallest files.
    High,
}

impl PngCompressionArg {
    fn compression(self) -> softgpu::encode::PngCompression {
        match self {
            PngCompressionArg::Fast => softgpu::encode::PngCompression::Fast,
            PngCompressionArg::Balanced => softgpu::encode::PngCompression::Balanced,
            PngCompressionArg::High => softgpu::encode::PngCompression::High,
        }
    }
}

/// Parses the `WxH` of `--size`.
pub fn parse_size(text: &str) -> Result<(u32, u32)> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| anyhow!("--size: expected WxH (e.g. 640x480), found `{text}`"))?;
    let parse = |s: &str| -> Result<u32> {
        let v: u32 = s
            .trim()
            .parse()
            .map_err(|_| anyhow!("--size: expected WxH with positive integers, found `{text}`"))?;
        if v == 0 || v > Texture::MAX_DIMENSION {
            bail!(
                "--size: each dimension must be 1..={}, found `{text}`",
                Texture::MAX_DIMENSION
            );
        }
        Ok(v)
    };
    Ok((parse(w)?, parse(h)?))
}

/// `--memory-budget`: the most memory the buffers of a render, draw or suite case may need.
#[derive(clap::Args)]
pub struct MemoryBudgetArgs {
    /// Refuse work whose render targets, mip chains, history, feedback, textures and
    /// framebuffers would need more than SIZE bytes (`4G`, `512M`, `1073741824`) [default:
    /// $SOFTGPU_MEMORY_BUDGET, else half of the machine's memory]
    ///
    /// The sum is checked before anything is allocated; the error names the largest parts.
    /// docs/limits.md lists every limit.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    memory_budget: Option<String>,
}

impl MemoryBudgetArgs {
    /// The budget in bytes: the flag, else the environment variable, else the machine's.
    pub fn budget(&self) -> Result<u64> {
        softgpu::budget::resolve(self.memory_budget.as_deref()).map_err(|e| anyhow!(e))
    }
}

/// How Slang-language shaders are compiled (ignored for other languages).
#[derive(clap::Args, Clone, Default)]
pub struct SlangArgs {
    /// The Slang compiler library (libslang-compiler.so*) or its directory [default:
    /// $SOFTGPU_SLANG_LIB, else $SLANG_DIR, else the slangpy or slangtorch Python package]
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    slang_lib: Option<PathBuf>,
    /// Add DIR to the directories Slang's `import` and `#include` search; repeatable.
    #[arg(
        short = 'I',
        long = "include",
        value_name = "DIR",
        allow_hyphen_values = true
    )]
    include: Vec<PathBuf>,
    /// Define a preprocessor macro for Slang shaders; repeatable.
    #[arg(
        short = 'D',
        long = "define",
        value_name = "NAME[=VALUE]",
        allow_hyphen_values = true
    )]
    define: Vec<String>,
    /// Pass a further argument to the Slang compiler as slangc takes it (`-allow-glsl`);
    /// repeatable.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    slang_arg: Vec<String>,
}

impl SlangArgs {
    /// The compile options these flags give, with `entry` as the entry point.
    pub fn options(&self, entry: Option<&str>) -> softgpu::frontend::slang_lang::SlangOptions {
        softgpu::frontend::slang_lang::SlangOptions {
            library: self.slang_lib.clone(),
            entry: entry.map(str::to_string),
            include_dirs: self.include.clone(),
            defines: self.define.clone(),
            extra_args: self.slang_arg.clone(),
        }
    }
}
