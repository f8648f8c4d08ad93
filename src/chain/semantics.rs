//! RetroArch's shader semantics: what a uniform member or a texture of a pass means, resolved by
//! name exactly as librashader's reflection does, and the byte layout the values are written in.
//!
//! Name resolution order (librashader `reflect/semantics.rs`): a name the preset defines wins
//! (a `#pragma parameter`, `ALIASSize`, `ALIASFeedbackSize`, `LUTSize`; textures `ALIAS`,
//! `ALIASFeedback`, `LUT`), then the built-in names (`MVP`, `OutputSize`, …), then the indexed
//! texture names (`OriginalHistoryN`, `PassOutputN`, `PassFeedbackN`, `UserN` and their `…SizeN`
//! uniforms). A member or texture the program reads that none of these name is an error, as the
//! slang spec says; members nothing reads are ignored (librashader reflects only the active
//! ranges of a buffer). A Cg pass's uniform that none of these name is bound by nothing and
//! reads zero instead ([`UnnamedUniforms`]), as in RetroArch's Cg runtime.

use std::collections::{BTreeSet, HashMap};

use crate::frontend::lower::{LoweredShader, ResourceKind};
use crate::frontend::reflect::{self, BlockReflection, StageReflection, TypeLayout};
use crate::ir::{Program, RegisterFile};

use super::ChainError;

/// A texture a pass can sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TextureSemantic {
    /// The chain's input frame (`Original`, also `OriginalHistory0`).
    Original,
    /// The previous pass's output (the input frame for pass 0).
    Source,
    /// The input frame `n` frames ago (`OriginalHistoryN`, n ≥ 1).
    OriginalHistory(usize),
    /// Pass `n`'s output of this frame (`PassOutputN`, or its alias).
    PassOutput(usize),
    /// Pass `n`'s output of the previous frame (`PassFeedbackN`, or `ALIASFeedback`).
    PassFeedback(usize),
    /// Lookup texture `n` of the preset (`UserN`, or its name).
    User(usize),
}

/// What a uniform member receives.
#[derive(Clone, Debug, PartialEq)]
pub enum UniformSemantic {
    /// `MVP` (mat4).
    Mvp,
    /// `OutputSize` (vec4: width, height, 1/width, 1/height of the pass's target).
    OutputSize,
    /// `FinalViewportSize` (vec4).
    FinalViewportSize,
    /// `FrameCount` (uint), after `frame_count_mod`.
    FrameCount,
    /// `FrameDirection` (int, 1 or -1).
    FrameDirection,
    /// `Rotation` (uint, 0..=3 in quarter turns).
    Rotation,
    /// `TotalSubFrames` (uint).
    TotalSubFrames,
    /// `CurrentSubFrame` (uint).
    CurrentSubFrame,
    /// `OriginalAspect` (float).
    OriginalAspect,
    /// `OriginalAspectRotated` (float).
    OriginalAspectRotated,
    /// `OriginalFPS` (float).
    OriginalFps,
    /// `FrameTimeDelta` (uint, milliseconds).
    FrameTimeDelta,
    /// A semantic of RetroArch's HDR and sensor set: `HDRMode`, `BrightnessNits`, `ExpandGamut`
    /// and the sensors take the chain's `HostUniforms`; `Scanlines`, `InverseTonemap`, `HDR10`
    /// and `SubpixelLayout` are 0, as librashader binds them.
    Fixed(&'static str),
    /// A `#pragma parameter` (float).
    Parameter(String),
    /// The size vec4 of a texture (`SourceSize`, `PassOutputSize1`, `LUTSize`, …).
    TextureSize(TextureSemantic),
}

/// What binding makes of a uniform member the program reads that no name resolves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnnamedUniforms {
    /// An error, as RetroArch's slang runtime and librashader make it.
    #[default]
    Reject,
    /// Left unbound, so it keeps the zero its buffer starts with: RetroArch's Cg runtime
    /// (`shader_gl_cg.c`) sets uniforms by name with `cgGetNamedParameter` and leaves every
    /// other uniform at its default.
    ReadZero,
}

/// The names a preset defines on top of the built-in ones.
#[derive(Clone, Debug, Default)]
pub struct SemanticNames {
    /// `#pragma parameter` identifiers of every pass.
    pub parameters: BTreeSet<String>,
    /// Pass aliases → pass index.
    pub aliases: HashMap<String, usize>,
    /// LUT names → LUT index.
    pub luts: HashMap<String, usize>,
}

impl SemanticNames {
    /// The semantic of a uniform member named `name`, if it has one.
    pub fn uniform(&self, name: &str) -> Option<UniformSemantic> {
        if let Some(s) = self.defined_uniform(name) {
            return Some(s);
        }
        let unique = match name {
            "MVP" => UniformSemantic::Mvp,
            "OutputSize" => UniformSemantic::OutputSize,
            "FinalViewportSize" => UniformSemantic::FinalViewportSize,
            "FrameCount" => UniformSemantic::FrameCount,
            "FrameDirection" => UniformSemantic::FrameDirection,
            "Rotation" => UniformSemantic::Rotation,
            "TotalSubFrames" => UniformSemantic::TotalSubFrames,
            "CurrentSubFrame" => UniformSemantic::CurrentSubFrame,
            "OriginalAspect" => UniformSemantic::OriginalAspect,
            "OriginalAspectRotated" => UniformSemantic::OriginalAspectRotated,
            "OriginalFPS" => UniformSemantic::OriginalFps,
            "FrameTimeDelta" => UniformSemantic::FrameTimeDelta,
            "HDRMode" => UniformSemantic::Fixed("HDRMode"),
            "BrightnessNits" => UniformSemantic::Fixed("BrightnessNits"),
            "ExpandGamut" => UniformSemantic::Fixed("ExpandGamut"),
            "Scanlines" => UniformSemantic::Fixed("Scanlines"),
            "InverseTonemap" => UniformSemantic::Fixed("InverseTonemap"),
            "HDR10" => UniformSemantic::Fixed("HDR10"),
            "SubpixelLayout" => UniformSemantic::Fixed("SubpixelLayout"),
            "Gyroscope" => UniformSemantic::Fixed("Gyroscope"),
            "Accelerometer" => UniformSemantic::Fixed("Accelerometer"),
            "AccelerometerRest" => UniformSemantic::Fixed("AccelerometerRest"),
            _ => return indexed(name, true).map(UniformSemantic::TextureSize),
        };
        Some(unique)
    }

    fn defined_uniform(&self, name: &str) -> Option<UniformSemantic> {
        // librashader inserts parameters, then pass aliases, then LUTs into one map: later wins.
        if let Some(lut) = name.strip_suffix("Size").and_then(|n| self.luts.get(n)) {
            return Some(UniformSemantic::TextureSize(TextureSemantic::User(*lut)));
        }
        if let Some(pass) = name
            .strip_suffix("FeedbackSize")
            .and_then(|n| self.aliases.get(n))
        {
            return Some(UniformSemantic::TextureSize(TextureSemantic::PassFeedback(
                *pass,
            )));
        }
        if let Some(pass) = name.strip_suffix("Size").and_then(|n| self.aliases.get(n)) {
            return Some(UniformSemantic::TextureSize(TextureSemantic::PassOutput(
                *pass,
            )));
        }
        if self.parameters.contains(name) {
            return Some(UniformSemantic::Parameter(name.to_string()));
        }
        None
    }

    /// The semantic of a texture named `name`, if it has one.
    pub fn texture(&self, name: &str) -> Option<TextureSemantic> {
        if let Some(lut) = self.luts.get(name) {
            return Some(TextureSemantic::User(*lut));
        }
        if let Some(pass) = name
            .strip_suffix("Feedback")
            .and_then(|n| self.aliases.get(n))
        {
            return Some(TextureSemantic::PassFeedback(*pass));
        }
        if let Some(pass) = self.aliases.get(name) {
            return Some(TextureSemantic::PassOutput(*pass));
        }
        indexed(name, false)
    }
}

/// The Cg frontend's `PassPrevK` / `PassPrevSizeK` (RetroArch Cg's `PASSPREVk`): the output
/// of the pass `k` places before pass `pass_index`, the input frame one place further back.
fn relative_pass(name: &str, prefix: &str, pass_index: usize) -> Option<TextureSemantic> {
    let k: usize = name.strip_prefix(prefix)?.parse().ok()?;
    match pass_index.checked_sub(k) {
        Some(n) => Some(TextureSemantic::PassOutput(n)),
        None if k == pass_index + 1 => Some(TextureSemantic::Original),
        None => None,
    }
}

/// Builds an indexed texture semantic from its index.
type MakeSemantic = fn(usize) -> TextureSemantic;

/// The built-in texture names (`Source`, `OriginalHistory3`, …) or, with `size`, their size
/// uniforms (`SourceSize`, `OriginalHistorySize3`, …).
fn indexed(name: &str, size: bool) -> Option<TextureSemantic> {
    let suffix = if size { "Size" } else { "" };
    let (source, original) = (format!("Source{suffix}"), format!("Original{suffix}"));
    if name == source {
        return Some(TextureSemantic::Source);
    }
    // `OriginalHistory` before `Original`, as in librashader, so the prefix test cannot stop at
    // `Original`.
    let prefixes: [(&str, MakeSemantic); 4] = [
        ("OriginalHistory", |n| {
            if n == 0 {
                TextureSemantic::Original
            } else {
                TextureSemantic::OriginalHistory(n)
            }
        }),
        ("PassOutput", TextureSemantic::PassOutput),
        ("PassFeedback", TextureSemantic::PassFeedback),
        ("User", TextureSemantic::User),
    ];
    for (prefix, make) in prefixes {
        if let Some(rest) = name
            .strip_prefix(prefix)
            .and_then(|r| r.strip_prefix(suffix))
        {
            if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
                return rest.parse::<usize>().ok().map(make);
            }
            return None;
        }
    }
    (name == original).then_some(TextureSemantic::Original)
}

/// The scalar kind of a uniform member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    /// `float`
    Float,
    /// `int`
    Int,
    /// `uint` (and `bool`, stored as 0/1)
    Uint,
}

/// A uniform member's type as far as writing values goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberType {
    /// The component kind.
    pub kind: ScalarKind,
    /// Components (1..=4 for scalars and vectors, 16 for `mat4`).
    pub components: u32,
}

impl MemberType {
    /// What the runtime writes into a member of type `ty`: scalars and vectors of 32-bit
    /// numbers (booleans as 0/1 `uint`s) and `mat4`; `None` for any other type.
    pub fn of(ty: &TypeLayout) -> Option<MemberType> {
        let kind = |scalar: reflect::Scalar| match (scalar.kind, scalar.width) {
            (reflect::ScalarKind::Float, 4) => Some(ScalarKind::Float),
            (reflect::ScalarKind::Sint, 4) => Some(ScalarKind::Int),
            (reflect::ScalarKind::Uint, 4) | (reflect::ScalarKind::Bool, _) => {
                Some(ScalarKind::Uint)
            }
            _ => None,
        };
        match ty {
            TypeLayout::Scalar(scalar) => Some(MemberType {
                kind: kind(*scalar)?,
                components: 1,
            }),
            TypeLayout::Vector { scalar, size } => Some(MemberType {
                kind: kind(*scalar)?,
                components: *size,
            }),
            TypeLayout::Matrix {
                scalar,
                columns: 4,
                rows: 4,
                ..
            } if kind(*scalar) == Some(ScalarKind::Float) => Some(MemberType {
                kind: ScalarKind::Float,
                components: 16,
            }),
            _ => None,
        }
    }
}

/// One uniform member the runtime writes every frame.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberBinding {
    /// The member's name (for messages).
    pub name: String,
    /// Byte offset in its buffer.
    pub offset: u32,
    /// Its type.
    pub ty: MemberType,
    /// What it receives.
    pub semantic: UniformSemantic,
}

/// A uniform buffer or push-constant block of one stage.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferBinding {
    /// The `CONST[buffer]` index the lowered program reads.
    pub buffer: u32,
    /// Size in bytes.
    pub size: u32,
    /// The members the program reads.
    pub members: Vec<MemberBinding>,
}

/// A texture unit of one stage and what is bound to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextureBinding {
    /// The sampler unit (`SAMP[unit]`/`SVIEW[unit]`).
    pub unit: u32,
    /// The texture's name.
    pub name: String,
    /// What it samples.
    pub semantic: TextureSemantic,
}

/// Everything the runtime binds for one stage of one pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageBindings {
    /// Uniform buffers and the push-constant block.
    pub buffers: Vec<BufferBinding>,
    /// Textures.
    pub textures: Vec<TextureBinding>,
}

impl StageBindings {
    /// Every texture semantic this stage reads, as a texture or through a size uniform.
    pub fn texture_semantics(&self) -> impl Iterator<Item = TextureSemantic> + '_ {
        let sizes = self
            .buffers
            .iter()
            .flat_map(|b| &b.members)
            .filter_map(|m| {
                if let UniformSemantic::TextureSize(t) = m.semantic {
                    Some(t)
                } else {
                    None
                }
            });
        self.textures.iter().map(|t| t.semantic).chain(sizes)
    }
}

/// Where a stage's program reads `CONST[buffer]`: register indices, or everything when it
/// indexes the buffer indirectly.
fn const_reads(program: &Program) -> HashMap<u32, Option<BTreeSet<u32>>> {
    let mut reads: HashMap<u32, Option<BTreeSet<u32>>> = HashMap::new();
    for inst in &program.instructions {
        for src in &inst.src {
            let reg = &src.reg;
            if reg.file != RegisterFile::Constant {
                continue;
            }
            let buffer = reg.dimension.as_ref().map_or(0, |d| d.index.max(0) as u32);
            let indirect = reg.indirect.is_some()
                || reg.dimension.as_ref().is_some_and(|d| d.indirect.is_some());
            let entry = reads.entry(buffer).or_insert_with(|| Some(BTreeSet::new()));
            match (entry.as_mut(), indirect) {
                (Some(set), false) => {
                    set.insert(reg.index.max(0) as u32);
                }
                _ => *entry = None,
            }
        }
    }
    reads
}

/// Whether a member at `offset` of `size` bytes lies in a register the program reads.
fn member_is_read(reads: Option<&Option<BTreeSet<u32>>>, offset: u32, size: u32) -> bool {
    match reads {
        None => false,
        Some(None) => true,
        Some(Some(set)) => {
            let first = offset / 16;
            let last = (offset + size.max(1) - 1) / 16;
            set.range(first..=last).next().is_some()
        }
    }
}

/// Texture units the program samples.
fn sampled_units(program: &Program) -> BTreeSet<u32> {
    let mut units = BTreeSet::new();
    for inst in &program.instructions {
        for src in &inst.src {
            let f = src.reg.file;
            if f == RegisterFile::SamplerView || f == RegisterFile::Sampler {
                if src.reg.indirect.is_some() {
                    // An indexed sampler array may reach any declared unit.
                    for d in program.declarations() {
                        if d.file == f {
                            units.extend(d.first..=d.last);
                        }
                    }
                } else {
                    units.insert(src.reg.index.max(0) as u32);
                }
            }
        }
    }
    units
}

/// Resolves one stage's resources to semantics.
///
/// `context` names the pass and stage in messages (e.g. `pass 2 (crt.slang), fragment`).
pub fn bind_stage(
    context: &str,
    pass_index: usize,
    lowered: &LoweredShader,
    reflection: &StageReflection,
    names: &SemanticNames,
    unnamed: UnnamedUniforms,
) -> Result<StageBindings, ChainError> {
    let reads = const_reads(&lowered.program);
    let units = sampled_units(&lowered.program);
    let mut bindings = StageBindings::default();
    for slot in &lowered.resources {
        match &slot.kind {
            ResourceKind::UniformBuffer { buffer, size } => {
                let block = reflection
                    .uniform_buffers
                    .iter()
                    .find(|b| b.binding.is_none_or(|b| b == slot.binding));
                let Some(block) = block else {
                    return Err(ChainError::new(format!(
                        "{context}: uniform buffer at binding {} has no reflection",
                        slot.binding
                    )));
                };
                bindings.buffers.push(bind_block(
                    context,
                    pass_index,
                    (*buffer, *size),
                    block,
                    reads.get(buffer),
                    &reflection.active.uniform_buffers,
                    names,
                    unnamed,
                )?);
            }
            ResourceKind::PushConstants { buffer, size } => {
                let Some(block) = reflection.push_constants.as_ref() else {
                    return Err(ChainError::new(format!(
                        "{context}: push-constant block has no reflection"
                    )));
                };
                bindings.buffers.push(bind_block(
                    context,
                    pass_index,
                    (*buffer, *size),
                    block,
                    reads.get(buffer),
                    &reflection.active.push_constants,
                    names,
                    unnamed,
                )?);
            }
            ResourceKind::Texture { unit, .. } => {
                if !units.contains(unit) {
                    continue;
                }
                let name = slot.name.clone().unwrap_or_default();
                let semantic =
                    relative_pass(&name, "PassPrev", pass_index).or_else(|| names.texture(&name));
                let Some(semantic) = semantic else {
                    return Err(ChainError::new(format!(
                        "{context}: texture `{name}` means nothing: expected Original, Source, \
                         OriginalHistoryN, PassOutputN, PassFeedbackN, UserN, a pass alias \
                         (ALIAS, ALIASFeedback) or a LUT name of the preset"
                    )));
                };
                check_causal(context, pass_index, &name, semantic)?;
                bindings.textures.push(TextureBinding {
                    unit: *unit,
                    name,
                    semantic,
                });
            }
            ResourceKind::Sampler { .. } => {}
            ResourceKind::StorageBuffer { .. }
            | ResourceKind::ReadWriteBuffer { .. }
            | ResourceKind::StorageImage { .. } => {
                return Err(ChainError::new(format!(
                    "{context}: storage buffer or image `{}`: a preset binds no storage memory",
                    slot.name.as_deref().unwrap_or("?")
                )))
            }
        }
    }
    Ok(bindings)
}

fn check_causal(
    context: &str,
    pass_index: usize,
    name: &str,
    semantic: TextureSemantic,
) -> Result<(), ChainError> {
    if let TextureSemantic::PassOutput(n) = semantic {
        if n >= pass_index {
            return Err(ChainError::new(format!(
                "{context}: `{name}` reads the output of pass {n}, which has not run yet in this \
                 frame (only passes before {pass_index} can be read; use PassFeedback{n} for the \
                 previous frame)"
            )));
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)] // the block, what the program reads of it, how names resolve
fn bind_block(
    context: &str,
    pass_index: usize,
    (buffer, size): (u32, u32),
    block: &BlockReflection,
    reads: Option<&Option<BTreeSet<u32>>>,
    active: &BTreeSet<String>,
    names: &SemanticNames,
    unnamed: UnnamedUniforms,
) -> Result<BufferBinding, ChainError> {
    let mut members = Vec::new();
    for member in &block.members {
        // Only members the shader accesses and the lowered program still reads need a value.
        if !active.contains(&member.name) || !member_is_read(reads, member.offset, member.size) {
            continue;
        }
        let relative = relative_pass(&member.name, "PassPrevSize", pass_index)
            .map(UniformSemantic::TextureSize);
        let Some(semantic) = relative.or_else(|| names.uniform(&member.name)) else {
            if unnamed == UnnamedUniforms::ReadZero {
                continue;
            }
            return Err(ChainError::new(format!(
                "{context}: uniform `{}` means nothing: it is not a built-in semantic (MVP, \
                 OutputSize, SourceSize, FrameCount, …), a #pragma parameter, or a size of a pass \
                 alias or LUT of the preset",
                member.name
            )));
        };
        if let UniformSemantic::TextureSize(t) = semantic {
            check_causal(context, pass_index, &member.name, t)?;
        }
        let (components, expected) = expected_components(&semantic);
        let ty = MemberType::of(&member.ty)
            .filter(|ty| components.contains(&ty.components))
            .ok_or_else(|| {
                ChainError::new(format!(
                    "{context}: uniform `{}` has type {}, which cannot hold {expected}",
                    member.name,
                    member.ty.glsl_name()
                ))
            })?;
        members.push(MemberBinding {
            name: member.name.clone(),
            offset: member.offset,
            ty,
            semantic,
        });
    }
    Ok(BufferBinding {
        buffer,
        size,
        members,
    })
}

/// The component counts a member may have to hold a semantic, and how to say so. Sizes may be
/// read as vec2..vec4 and counters as any scalar: Cg shaders declare `float2 video_size` and
/// `float frame_count`.
fn expected_components(
    semantic: &UniformSemantic,
) -> (std::ops::RangeInclusive<u32>, &'static str) {
    match semantic {
        UniformSemantic::Mvp => (16..=16, "a mat4"),
        UniformSemantic::OutputSize
        | UniformSemantic::FinalViewportSize
        | UniformSemantic::TextureSize(_) => (2..=4, "a size vec4"),
        UniformSemantic::Fixed(name) if name.starts_with("Gyro") || name.starts_with("Accel") => {
            (3..=3, "a vec3")
        }
        _ => (1..=1, "a scalar"),
    }
}

/// A value to write into a member, before conversion to the member's type.
#[derive(Clone, Debug, PartialEq)]
pub enum UniformValue {
    /// Floats (sizes, matrices, parameters, aspect ratios).
    Floats(Vec<f32>),
    /// An unsigned counter.
    Uint(u32),
    /// A signed value.
    Int(i32),
}

/// Writes `value` into `data` at the member's offset, converted to its type (the first
/// components of a longer value; counters converted to float for float members).
pub fn write_member(data: &mut [u8], member: &MemberBinding, value: &UniformValue) {
    let n = member.ty.components as usize;
    let mut words = [0u32; 16];
    match (value, member.ty.kind) {
        (UniformValue::Floats(f), ScalarKind::Float) => {
            for (w, v) in words.iter_mut().zip(f) {
                *w = v.to_bits();
            }
        }
        (UniformValue::Floats(f), ScalarKind::Int) => words[0] = (f[0] as i32) as u32,
        (UniformValue::Floats(f), ScalarKind::Uint) => words[0] = f[0] as u32,
        (UniformValue::Uint(u), ScalarKind::Float) => words[0] = (*u as f32).to_bits(),
        (UniformValue::Uint(u), _) => words[0] = *u,
        (UniformValue::Int(i), ScalarKind::Float) => words[0] = (*i as f32).to_bits(),
        (UniformValue::Int(i), _) => words[0] = *i as u32,
    }
    let start = member.offset as usize;
    for (i, w) in words.iter().take(n).enumerate() {
        let at = start + i * 4;
        if let Some(dst) = data.get_mut(at..at + 4) {
            dst.copy_from_slice(&w.to_le_bytes());
        }
    }
}

/// A texture size as RetroArch passes it: width, height, 1/width, 1/height.
pub fn size_vec4(width: u32, height: u32) -> UniformValue {
    let (w, h) = (width as f32, height as f32);
    UniformValue::Floats(vec![w, h, 1.0 / w, 1.0 / h])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> SemanticNames {
        let mut n = SemanticNames::default();
        n.parameters.insert("GAMMA".into());
        n.aliases.insert("Blur".into(), 1);
        n.luts.insert("Mask".into(), 0);
        n
    }

    #[test]
    fn textures_resolve_like_librashader() {
        let n = names();
        assert_eq!(n.texture("Source"), Some(TextureSemantic::Source));
        assert_eq!(n.texture("Original"), Some(TextureSemantic::Original));
        assert_eq!(
            n.texture("OriginalHistory0"),
            Some(TextureSemantic::Original)
        );
        assert_eq!(
            n.texture("OriginalHistory12"),
            Some(TextureSemantic::OriginalHistory(12))
        );
        assert_eq!(
            n.texture("PassOutput2"),
            Some(TextureSemantic::PassOutput(2))
        );
        assert_eq!(
            n.texture("PassFeedback0"),
            Some(TextureSemantic::PassFeedback(0))
        );
        assert_eq!(n.texture("User3"), Some(TextureSemantic::User(3)));
        assert_eq!(n.texture("Blur"), Some(TextureSemantic::PassOutput(1)));
        assert_eq!(
            n.texture("BlurFeedback"),
            Some(TextureSemantic::PassFeedback(1))
        );
        assert_eq!(n.texture("Mask"), Some(TextureSemantic::User(0)));
        for bad in [
            "OriginalHistory",
            "PassOutput",
            "PassOutputX",
            "Sourc",
            "Originals",
        ] {
            assert_eq!(n.texture(bad), None, "{bad}");
        }
    }

    #[test]
    fn uniforms_resolve_like_librashader() {
        let n = names();
        assert_eq!(n.uniform("MVP"), Some(UniformSemantic::Mvp));
        assert_eq!(
            n.uniform("SourceSize"),
            Some(UniformSemantic::TextureSize(TextureSemantic::Source))
        );
        assert_eq!(
            n.uniform("OriginalHistorySize2"),
            Some(UniformSemantic::TextureSize(
                TextureSemantic::OriginalHistory(2)
            ))
        );
        assert_eq!(
            n.uniform("BlurSize"),
            Some(UniformSemantic::TextureSize(TextureSemantic::PassOutput(1)))
        );
        assert_eq!(
            n.uniform("BlurFeedbackSize"),
            Some(UniformSemantic::TextureSize(TextureSemantic::PassFeedback(
                1
            )))
        );
        assert_eq!(
            n.uniform("MaskSize"),
            Some(UniformSemantic::TextureSize(TextureSemantic::User(0)))
        );
        assert_eq!(
            n.uniform("GAMMA"),
            Some(UniformSemantic::Parameter("GAMMA".into()))
        );
        assert_eq!(n.uniform("Gamma"), None);
        assert_eq!(n.uniform("Source"), None);
    }

    #[test]
    fn cg_pass_prev_is_relative_to_the_pass() {
        // RetroArch's Cg/GLSL drivers: at (0-based) pass p, PASSPREVk is pass p-k's output and
        // PASSPREV(p+1) the input frame.
        assert_eq!(
            relative_pass("PassPrev1", "PassPrev", 3),
            Some(TextureSemantic::PassOutput(2))
        );
        assert_eq!(
            relative_pass("PassPrev3", "PassPrev", 3),
            Some(TextureSemantic::PassOutput(0))
        );
        assert_eq!(
            relative_pass("PassPrev4", "PassPrev", 3),
            Some(TextureSemantic::Original)
        );
        assert_eq!(relative_pass("PassPrev5", "PassPrev", 3), None);
        assert_eq!(
            relative_pass("PassPrevSize2", "PassPrevSize", 2),
            Some(TextureSemantic::PassOutput(0))
        );
    }

    fn scalar(kind: reflect::ScalarKind) -> reflect::Scalar {
        reflect::Scalar { kind, width: 4 }
    }

    #[test]
    fn member_types_follow_the_layout_and_values_convert() {
        let float = scalar(reflect::ScalarKind::Float);
        let vec2 = TypeLayout::Vector {
            scalar: float,
            size: 2,
        };
        assert_eq!(
            MemberType::of(&vec2),
            Some(MemberType {
                kind: ScalarKind::Float,
                components: 2
            })
        );
        let matrix = |n| TypeLayout::Matrix {
            scalar: float,
            columns: n,
            rows: n,
            column_stride: 16,
        };
        assert_eq!(MemberType::of(&matrix(4)).map(|t| t.components), Some(16));
        assert_eq!(MemberType::of(&matrix(3)), None);
        let array = TypeLayout::Array {
            element: Box::new(TypeLayout::Scalar(float)),
            count: 2,
            stride: 16,
        };
        assert_eq!(MemberType::of(&array), None);
        let member = MemberBinding {
            name: "FrameCount".into(),
            offset: 4,
            ty: MemberType::of(&TypeLayout::Scalar(float)).unwrap(),
            semantic: UniformSemantic::FrameCount,
        };
        let mut data = vec![0u8; 8];
        write_member(&mut data, &member, &UniformValue::Uint(3));
        assert_eq!(&data[4..], &3.0f32.to_le_bytes());
        let size = MemberBinding {
            name: "SourceSize".into(),
            offset: 0,
            ty: MemberType::of(&vec2).unwrap(),
            semantic: UniformSemantic::TextureSize(TextureSemantic::Source),
        };
        let mut data = vec![0u8; 16];
        write_member(&mut data, &size, &size_vec4(4, 2));
        assert_eq!(&data[..4], &4.0f32.to_le_bytes());
        assert_eq!(&data[4..8], &2.0f32.to_le_bytes());
        assert_eq!(&data[8..], &[0u8; 8]);
    }
}
