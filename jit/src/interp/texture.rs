//! Texture instructions: operands → [`SampleRequest`] / fetch / size query, as softpipe's
//! `exec_tex`, `exec_txd`, `exec_txf`, `exec_txq`, `exec_lodq`, `exec_sample` and `exec_sample_d`.

// Lane- and channel-indexed loops mirror the [channel][lane] layout; iterators would obscure it.
#![allow(clippy::needless_range_loop)]

use super::decode::{coord_dim, deriv_dim, sampler_operand, shadow_ref, Inst, TexOp};
use super::ops;
use super::run::Machine;
use crate::exec::{ExecError, LodMode, QuadVec4, SampleRequest};
use crate::ir::Opcode;

#[inline]
fn floats(v: [u32; 4]) -> [f32; 4] {
    v.map(f32::from_bits)
}

impl Machine<'_, '_, '_> {
    /// The constant texel offset: lane 0 of the offset register's x, y, z, truncated to `int8_t`
    /// as softpipe stores them.
    fn tex_offset(&self, t: &TexOp) -> [i32; 3] {
        match &t.offset {
            None => [0; 3],
            Some(src) => {
                let v = self.fetch(src);
                [
                    v[0][0] as i8 as i32,
                    v[1][0] as i8 as i32,
                    v[2][0] as i8 as i32,
                ]
            }
        }
    }

    /// Executes a texture instruction and stores its result.
    pub(crate) fn texture(&mut self, inst: &Inst) -> Result<(), ExecError> {
        let t = self.prog.textures[inst.aux as usize];
        let offset = self.tex_offset(&t);
        let view = self.unit(&t.view);
        let sampler = self.unit(&t.sampler);
        let target = t.target;
        let dim = coord_dim(target).unwrap_or(4);
        let textures = self.res.textures;
        let s = &inst.src;
        let op = inst.op;
        let mut request = SampleRequest {
            view,
            sampler,
            target,
            coords: [[0.0; 4]; 4],
            compare: None,
            lod: LodMode::Implicit,
            offset,
        };
        let src0 = self.fetch(&s[0]);
        let result: QuadVec4 = match op {
            Opcode::TEX
            | Opcode::TXP
            | Opcode::TXB
            | Opcode::TXL
            | Opcode::TEX_LZ
            | Opcode::TEX2
            | Opcode::TXB2
            | Opcode::TXL2
            | Opcode::TG4 => {
                // The LOD/bias/projection operand: src0.w when the sampler is src1, else src1.x.
                let modifier = if sampler_operand(op) == 1 {
                    floats(src0[3])
                } else {
                    floats(self.fetch_chan(&s[1], 0))
                };
                for c in 0..dim {
                    request.coords[c] = floats(src0[c]);
                }
                if let Some(r) = shadow_ref(target) {
                    request.compare = Some(if r < 4 {
                        floats(src0[r])
                    } else {
                        floats(self.fetch_chan(&s[1], 0))
                    });
                }
                match op {
                    Opcode::TXP => {
                        for c in 0..dim {
                            for l in 0..4 {
                                request.coords[c][l] = ops::div(request.coords[c][l], modifier[l]);
                            }
                        }
                        if let Some(cmp) = request.compare.as_mut() {
                            for l in 0..4 {
                                cmp[l] = ops::div(cmp[l], modifier[l]);
                            }
                        }
                    }
                    Opcode::TXB | Opcode::TXB2 => request.lod = LodMode::Bias(modifier),
                    Opcode::TXL | Opcode::TXL2 => request.lod = LodMode::Explicit(modifier),
                    Opcode::TEX_LZ => request.lod = LodMode::Zero,
                    _ => {}
                }
                if op == Opcode::TG4 {
                    request.lod = LodMode::Zero;
                    let component = self.fetch_chan(&s[1], 0)[0] & 3;
                    textures.gather(&request, component)
                } else {
                    textures.sample(&request)
                }
            }
            Opcode::TXD => {
                for c in 0..dim {
                    request.coords[c] = floats(src0[c]);
                }
                if let Some(r) = shadow_ref(target).filter(|&r| r < 4) {
                    request.compare = Some(floats(src0[r]));
                }
                request.lod = self.gradients(target, &inst.src[1], &inst.src[2]);
                textures.sample(&request)
            }
            Opcode::TXF | Opcode::TXF_LZ | Opcode::SAMPLE_I => {
                let mut coords = [[0i32; 4]; 4];
                for c in 0..dim.min(3) {
                    coords[c] = src0[c].map(|v| v as i32);
                }
                let lod = if op == Opcode::TXF_LZ {
                    [0; 4]
                } else {
                    src0[3].map(|v| v as i32)
                };
                let r = textures.fetch(view, target, coords, lod, offset);
                if op == Opcode::SAMPLE_I {
                    swizzle(&r, t.result_swizzle)
                } else {
                    r
                }
            }
            Opcode::TXQ | Opcode::SVIEWINFO => {
                // Softpipe's size interface takes one level for the quad: lane 0's.
                let size = textures.size(view, target, src0[0][0] as i32);
                size.map(|v| [v; 4])
            }
            Opcode::TXQS => {
                // No multisampled textures exist here: every view has one sample.
                [[1; 4], [0; 4], [0; 4], [0; 4]]
            }
            Opcode::LODQ => {
                for c in 0..dim {
                    request.coords[c] = floats(src0[c]);
                }
                let q = textures.query_lod(&request);
                let r = [
                    q[0].map(f32::to_bits),
                    q[1].map(f32::to_bits),
                    [0; 4],
                    [0; 4],
                ];
                self.store_masked(inst, &r, inst.write_mask & 0b11);
                return Ok(());
            }
            Opcode::SAMPLE
            | Opcode::SAMPLE_B
            | Opcode::SAMPLE_C
            | Opcode::SAMPLE_C_LZ
            | Opcode::SAMPLE_L
            | Opcode::SAMPLE_D
            | Opcode::GATHER4 => {
                for c in 0..dim {
                    request.coords[c] = floats(src0[c]);
                }
                match op {
                    Opcode::SAMPLE_B => {
                        request.lod = LodMode::Bias(floats(self.fetch_chan(&s[3], 0)))
                    }
                    Opcode::SAMPLE_L => {
                        request.lod = LodMode::Explicit(floats(self.fetch_chan(&s[3], 0)))
                    }
                    Opcode::SAMPLE_C => request.compare = Some(floats(self.fetch_chan(&s[3], 0))),
                    Opcode::SAMPLE_C_LZ => {
                        request.compare = Some(floats(self.fetch_chan(&s[3], 0)));
                        request.lod = LodMode::Zero;
                    }
                    Opcode::SAMPLE_D => request.lod = self.gradients(target, &s[3], &s[4]),
                    _ => {}
                }
                let r = if op == Opcode::GATHER4 {
                    request.lod = LodMode::Zero;
                    textures.gather(&request, 0)
                } else {
                    textures.sample(&request)
                };
                swizzle(&r, t.result_swizzle)
            }
            other => {
                return Err(ExecError::Unsupported {
                    pc: 0,
                    message: format!("{} is not a texture instruction", other.name()),
                })
            }
        };
        self.store(inst, &result);
        Ok(())
    }

    /// Explicit gradients from the ddx and ddy operands (the unused components stay zero).
    fn gradients(
        &self,
        target: crate::ir::TextureTarget,
        ddx: &super::decode::Src,
        ddy: &super::decode::Src,
    ) -> LodMode {
        let n = deriv_dim(target).unwrap_or(0);
        let dx = self.fetch(ddx);
        let dy = self.fetch(ddy);
        let mut gx = [[0.0; 4]; 3];
        let mut gy = [[0.0; 4]; 3];
        for c in 0..n {
            gx[c] = floats(dx[c]);
            gy[c] = floats(dy[c]);
        }
        LodMode::Gradient { ddx: gx, ddy: gy }
    }
}

fn swizzle(r: &QuadVec4, sw: [u8; 4]) -> QuadVec4 {
    sw.map(|c| r[c as usize & 3])
}
