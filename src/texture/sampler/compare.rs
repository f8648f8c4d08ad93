//! Depth-compare sampling (`SamplerComparisonState`, `sampler2DShadow`, TGSI `SHADOW*` targets
//! with a comparison sampler): the comparison function of a sampler, and sampling that compares
//! the reference against each texel before the sampler's filter runs, as Vulkan defines it
//! (Vulkan 1.3, "Depth Compare Operation"): every texel the filter reads becomes 1.0 where the
//! comparison passes and 0.0 where it fails, so linear filtering averages the results
//! (percentage-closer filtering) with exactly the weights of ordinary sampling.
//!
//! The texel's depth is its first component as the sampler decodes it (`R32_SFLOAT`'s float, a
//! UNORM format's value in [0, 1]); for UNORM formats the reference is clamped to [0, 1] first.
//! Texels outside a border-clamped texture have depth 0 (the transparent black border). The
//! result is (r, r, r, 1), r the filtered comparison, as softpipe's `sample_compare` writes it.

use super::{with_ctx, Ctx, FilterRule, SamplerState, Texels, Texture};
use crate::texture::Format;
use softgpu_jit::exec::SampleRequest;
use std::fmt;
use std::str::FromStr;

/// A sampler's comparison function (`VkCompareOp`): the comparison passes when
/// `reference OP texel_depth` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareFunc {
    /// Never passes.
    Never,
    /// `reference < depth`.
    Less,
    /// `reference == depth`.
    Equal,
    /// `reference <= depth`.
    LessEqual,
    /// `reference > depth`.
    Greater,
    /// `reference != depth` (also where either is NaN).
    NotEqual,
    /// `reference >= depth`.
    GreaterEqual,
    /// Always passes.
    Always,
}

impl CompareFunc {
    /// Every function with its command-line name, in `VkCompareOp` order.
    pub const NAMES: [(CompareFunc, &'static str); 8] = [
        (CompareFunc::Never, "never"),
        (CompareFunc::Less, "less"),
        (CompareFunc::Equal, "equal"),
        (CompareFunc::LessEqual, "lequal"),
        (CompareFunc::Greater, "greater"),
        (CompareFunc::NotEqual, "notequal"),
        (CompareFunc::GreaterEqual, "gequal"),
        (CompareFunc::Always, "always"),
    ];

    /// Whether `reference OP depth` holds (IEEE comparisons: NaN fails all but `NotEqual`).
    pub fn passes(self, reference: f32, depth: f32) -> bool {
        match self {
            CompareFunc::Never => false,
            CompareFunc::Less => reference < depth,
            CompareFunc::Equal => reference == depth,
            CompareFunc::LessEqual => reference <= depth,
            CompareFunc::Greater => reference > depth,
            CompareFunc::NotEqual => reference != depth,
            CompareFunc::GreaterEqual => reference >= depth,
            CompareFunc::Always => true,
        }
    }

    /// The function's command-line name (`less`, `gequal`, …).
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("?", |(_, n)| n)
    }
}

impl fmt::Display for CompareFunc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CompareFunc {
    type Err = String;

    /// Parses a name of [`CompareFunc::NAMES`]; the error lists them.
    fn from_str(s: &str) -> Result<CompareFunc, String> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == s)
            .map(|(f, _)| *f)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::NAMES.iter().map(|(_, n)| *n).collect();
                format!(
                    "unknown comparison function `{s}` (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// Texels seen through a comparison: each decodes to (r, r, r, 1) with r 1.0 where `func`
/// passes for `reference` against the texel's first component, else 0.0.
#[derive(Clone, Copy)]
struct Compared<T: Texels> {
    texels: T,
    reference: f32,
    func: CompareFunc,
}

impl<T: Texels> Compared<T> {
    #[inline(always)]
    fn result(self, depth: f32) -> [f32; 4] {
        let r = if self.func.passes(self.reference, depth) {
            1.0
        } else {
            0.0
        };
        [r, r, r, 1.0]
    }
}

impl<T: Texels> Texels for Compared<T> {
    #[inline(always)]
    fn bytes(self) -> usize {
        self.texels.bytes()
    }
    #[inline(always)]
    fn decode(self, p: &[u8]) -> [f32; 4] {
        self.result(self.texels.decode(p)[0])
    }
    #[inline(always)]
    fn border(self) -> [f32; 4] {
        self.result(self.texels.border()[0])
    }
}

/// Whether `format` stores normalized fixed-point values (the reference is clamped to [0, 1]).
fn is_unorm(format: Format) -> bool {
    !format.is_integer()
        && !matches!(
            format,
            Format::R16Sfloat
                | Format::R16G16Sfloat
                | Format::R16G16B16A16Sfloat
                | Format::R32Sfloat
                | Format::R32G32Sfloat
                | Format::R32G32B32A32Sfloat
        )
}

/// The reference of each lane as the comparison uses it.
fn references(tex: &Texture, reference: [f32; 4]) -> [f32; 4] {
    if is_unorm(tex.format()) {
        // `f32::clamp` keeps a NaN reference NaN: it compares as an unclamped NaN does.
        reference.map(|r| r.clamp(0.0, 1.0))
    } else {
        reference
    }
}

/// Runs `f` once per lane on a context whose texels compare against that lane's reference,
/// and keeps that lane's result from each run: the level of detail still comes from the whole
/// quad's coordinates, as in ordinary sampling.
fn per_lane(
    tex: &Texture,
    samp: &SamplerState,
    func: CompareFunc,
    req: &SampleRequest,
    reference: [f32; 4],
    f: &dyn Fn(&dyn CompareSampling) -> [[f32; 4]; 4],
) -> Option<[[f32; 4]; 4]> {
    let reference = references(tex, reference);
    let mut out = [[0.0f32; 4]; 4];
    for (lane, &r) in reference.iter().enumerate() {
        // Compared texels are filtered with exact weights under every driver rule (the
        // profiles' probes did not measure depth-compare filtering).
        let lane_result = with_ctx(tex, samp, FilterRule::Exact, req.target, |ctx| {
            ctx.compared(r, func, f)
        })?;
        for (channel, result) in out.iter_mut().zip(lane_result) {
            channel[lane] = result[lane];
        }
    }
    Some(out)
}

/// Object-safe sampling over compared texels (see [`Compared`]).
pub(super) trait CompareSampling {
    fn sample(&self, req: &SampleRequest) -> [[f32; 4]; 4];
    fn gather(&self, req: &SampleRequest) -> [[f32; 4]; 4];
}

impl<T: Texels> CompareSampling for Ctx<'_, Compared<T>> {
    fn sample(&self, req: &SampleRequest) -> [[f32; 4]; 4] {
        Ctx::sample(self, req)
    }
    fn gather(&self, req: &SampleRequest) -> [[f32; 4]; 4] {
        Ctx::gather(self, req, 0)
    }
}

impl<T: Texels> Ctx<'_, T> {
    /// This context with its texels compared against `reference` by `func`, given to `f`.
    pub(super) fn compared(
        &self,
        reference: f32,
        func: CompareFunc,
        f: &dyn Fn(&dyn CompareSampling) -> [[f32; 4]; 4],
    ) -> [[f32; 4]; 4] {
        f(&Ctx {
            tex: self.tex,
            texels: Compared {
                texels: self.texels,
                reference,
                func,
            },
            samp: self.samp,
            blend: self.blend,
            dim: self.dim,
            last_level: self.last_level,
            pot: self.pot,
        })
    }
}

/// A filtered depth-compare sample of `tex` with `samp` (whose comparison is `func`) at the
/// request's coordinates and per-lane references; None where the target has no 2D storage
/// (it reads zero, as ordinary sampling of it does).
pub(super) fn sample(
    tex: &Texture,
    samp: &SamplerState,
    func: CompareFunc,
    req: &SampleRequest,
    reference: [f32; 4],
) -> Option<[[f32; 4]; 4]> {
    per_lane(tex, samp, func, req, reference, &|c| c.sample(req))
}

/// A depth-compare gather (`GatherCmp`, `textureGather` with a reference): the comparison
/// results of the four texels of the bilinear footprint, in gather order.
pub(super) fn gather(
    tex: &Texture,
    samp: &SamplerState,
    func: CompareFunc,
    req: &SampleRequest,
    reference: [f32; 4],
) -> Option<[[f32; 4]; 4]> {
    per_lane(tex, samp, func, req, reference, &|c| c.gather(req))
}
