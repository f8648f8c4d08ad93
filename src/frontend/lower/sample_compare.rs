//! Depth-compare sampling (naga's `ImageSample { depth_ref: Some(..) }`: WGSL
//! `textureSampleCompare`, GLSL `texture(sampler2DShadow, vec3)`, HLSL/Slang `SampleCmp`,
//! `SampleCmpLevelZero`, `GatherCmp`) as TGSI `SHADOW*` lookups: the reference goes where
//! `tgsi_util_get_shadow_ref_src_index` reads it (src0.z for 1D, 2D and 1D arrays, src0.w for 2D
//! arrays and cubes), an explicit level or bias of a 2D array or cube, whose src0.w holds the
//! reference, moves to src1.x (`TXL2`, `TXB2`), and the result is the lookup's x. The comparison
//! itself is the bound sampler's (`SamplerState::compare`).

use naga::Handle;

use super::builder::Slot;
use super::stmt::FnCtx;
use super::{Lowerer, TexRef, Value, R};
use crate::ir::{Opcode, TextureTarget};

/// The `SHADOW` target of a texture sampled with a reference.
fn shadow_target(target: TextureTarget) -> Option<TextureTarget> {
    Some(match target {
        TextureTarget::Tex1D => TextureTarget::Shadow1D,
        TextureTarget::Tex1DArray => TextureTarget::Shadow1DArray,
        TextureTarget::Tex2D => TextureTarget::Shadow2D,
        TextureTarget::Tex2DArray => TextureTarget::Shadow2DArray,
        TextureTarget::Cube => TextureTarget::ShadowCube,
        _ => return None,
    })
}

impl<'a> Lowerer<'a> {
    /// `tex` as its `SHADOW` target, or an error naming what cannot be compared.
    fn shadow_texture(&self, tex: &TexRef) -> R<TexRef> {
        match shadow_target(tex.target) {
            Some(target) => Ok(TexRef {
                target,
                ..tex.clone()
            }),
            None => self.unsupported(format!(
                "depth-compare sampling of a {} texture",
                tex.target.name()
            )),
        }
    }

    /// The coordinates with the reference at its component: src0 of a `SHADOW` lookup
    /// (the w component is left free for 1D, 2D and 1D-array targets).
    fn compare_coords(
        &mut self,
        ctx: &mut FnCtx<'a>,
        tex: &TexRef,
        coordinate: Handle<naga::Expression>,
        array_index: Option<Handle<naga::Expression>>,
        offset: Option<Handle<naga::Expression>>,
        depth_ref: Handle<naga::Expression>,
    ) -> R<(Vec<Slot>, Option<crate::ir::Register>)> {
        let (mut coords, offset) = self.sample_coords(ctx, coordinate, array_index, offset)?;
        let reference = self.vec(ctx, depth_ref)?[0];
        let at = match tex.target {
            TextureTarget::Shadow2DArray | TextureTarget::ShadowCube => 3,
            _ => 2,
        };
        let zero = self.b.imm(0);
        coords.resize(at, zero);
        coords.push(reference);
        Ok((coords, offset))
    }

    /// A depth-compare sample of `tex` (already checked to be sampled with `sampler`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn image_sample_compare(
        &mut self,
        ctx: &mut FnCtx<'a>,
        tex: &TexRef,
        coordinate: Handle<naga::Expression>,
        array_index: Option<Handle<naga::Expression>>,
        offset: Option<Handle<naga::Expression>>,
        level: &naga::SampleLevel,
        depth_ref: Handle<naga::Expression>,
    ) -> R<Value> {
        let tex = self.shadow_texture(tex)?;
        let (mut coords, offset) =
            self.compare_coords(ctx, &tex, coordinate, array_index, offset, depth_ref)?;
        // Where src0.w holds the reference, a level or bias goes to src1.x.
        let modifier_in_src1 = coords.len() == 4;
        let r = match level {
            naga::SampleLevel::Auto => {
                if self.stage == naga::ShaderStage::Vertex {
                    return Err(self.stage_error("SampleCmp (implicit derivatives)"));
                }
                let src = self.b.operand(&coords);
                self.tex_inst(Opcode::TEX, &tex, vec![src], offset)?
            }
            naga::SampleLevel::Zero => {
                let src = self.b.operand(&coords);
                self.tex_inst(Opcode::TEX_LZ, &tex, vec![src], offset)?
            }
            naga::SampleLevel::Exact(h) | naga::SampleLevel::Bias(h) => {
                let bias = matches!(level, naga::SampleLevel::Bias(_));
                if bias && self.stage == naga::ShaderStage::Vertex {
                    return Err(self.stage_error("SampleCmpBias (implicit derivatives)"));
                }
                let value = self.vec(ctx, *h)?[0];
                if modifier_in_src1 {
                    let src = self.b.operand(&coords);
                    let modifier = self.b.operand(&[value]);
                    let op = if bias { Opcode::TXB2 } else { Opcode::TXL2 };
                    self.tex_inst(op, &tex, vec![src, modifier], offset)?
                } else {
                    coords.push(value);
                    let src = self.b.operand(&coords);
                    let op = if bias { Opcode::TXB } else { Opcode::TXL };
                    self.tex_inst(op, &tex, vec![src], offset)?
                }
            }
            naga::SampleLevel::Gradient { x, y } => {
                let dx = self.vec(ctx, *x)?;
                let dy = self.vec(ctx, *y)?;
                let src = self.b.operand(&coords);
                let sx = self.b.operand(&dx);
                let sy = self.b.operand(&dy);
                self.tex_inst(Opcode::TXD, &tex, vec![src, sx, sy], offset)?
            }
        };
        Ok(Value::V(vec![r[0]]))
    }

    /// A depth-compare gather (`GatherCmp`, `textureGatherCompare`): TG4 on the `SHADOW`
    /// target, each of the four texels' comparison result.
    pub(super) fn image_gather_compare(
        &mut self,
        ctx: &mut FnCtx<'a>,
        tex: &TexRef,
        coordinate: Handle<naga::Expression>,
        array_index: Option<Handle<naga::Expression>>,
        offset: Option<Handle<naga::Expression>>,
        depth_ref: Handle<naga::Expression>,
    ) -> R<Value> {
        let tex = self.shadow_texture(tex)?;
        let (coords, offset) =
            self.compare_coords(ctx, &tex, coordinate, array_index, offset, depth_ref)?;
        let src = self.b.operand(&coords);
        let component = self.b.imm(0);
        let component = self.b.operand(&[component]);
        Ok(Value::V(self.tex_inst(
            Opcode::TG4,
            &tex,
            vec![src, component],
            offset,
        )?))
    }
}
