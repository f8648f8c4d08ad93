//! Hand-written shaders and helpers shared by the rasterizer tests (no interpreter involved).
#![allow(dead_code)]

use softgpu::exec::{ExecError, IoSlot, QuadIo, QuadShader, ShaderResources, ShaderSignature};
use softgpu::ir::{InterpolateLocation, InterpolateMode, SemanticName};
use softgpu::raster::{
    draw_triangles_into, ClipConvention, DrawState, DrawStats, RasterError, RenderTarget, Vertices,
};
use softgpu::texture::Format;
use std::sync::Mutex;

/// A declared register.
pub fn slot(register: u32, semantic: SemanticName, index: u32, mode: InterpolateMode) -> IoSlot {
    IoSlot {
        register,
        semantic,
        semantic_index: index,
        interpolation: mode,
        location: InterpolateLocation::Center,
        usage_mask: 0xF,
    }
}

/// Vertex shader: `OUT[i] = IN[i]`; `OUT[0]` is POSITION, `OUT[i]` is GENERIC[i-1].
pub struct PassVs {
    sig: ShaderSignature,
}

impl PassVs {
    pub fn new(varyings: usize) -> PassVs {
        let n = varyings + 1;
        let inputs = (0..n as u32)
            .map(|i| slot(i, SemanticName::Generic, i, InterpolateMode::Perspective))
            .collect();
        let outputs = (0..n as u32)
            .map(|i| {
                if i == 0 {
                    slot(0, SemanticName::Position, 0, InterpolateMode::Perspective)
                } else {
                    slot(
                        i,
                        SemanticName::Generic,
                        i - 1,
                        InterpolateMode::Perspective,
                    )
                }
            })
            .collect();
        PassVs {
            sig: ShaderSignature {
                inputs,
                outputs,
                num_inputs: n,
                num_outputs: n,
                ..ShaderSignature::default()
            },
        }
    }
}

impl QuadShader for PassVs {
    fn shade_quad(&self, _: &ShaderResources<'_>, io: &mut QuadIo<'_>) -> Result<u8, ExecError> {
        for (o, i) in io.outputs.iter_mut().zip(io.inputs) {
            *o = *i;
        }
        Ok(0)
    }
    fn signature(&self) -> &ShaderSignature {
        &self.sig
    }
}

/// Fragment shader: `OUT[0] (COLOR) = IN[0] (GENERIC[0], given mode)`.
pub struct CopyFs {
    sig: ShaderSignature,
}

impl CopyFs {
    pub fn new(mode: InterpolateMode) -> CopyFs {
        CopyFs::with_input(slot(0, SemanticName::Generic, 0, mode))
    }

    /// Copies one arbitrary input register 0 to COLOR.
    pub fn with_input(input: IoSlot) -> CopyFs {
        CopyFs {
            sig: ShaderSignature {
                inputs: vec![input],
                outputs: vec![slot(
                    0,
                    SemanticName::Color,
                    0,
                    InterpolateMode::Perspective,
                )],
                num_inputs: input.register as usize + 1,
                num_outputs: 1,
                ..ShaderSignature::default()
            },
        }
    }
}

impl QuadShader for CopyFs {
    fn shade_quad(&self, _: &ShaderResources<'_>, io: &mut QuadIo<'_>) -> Result<u8, ExecError> {
        io.outputs[0] = io.inputs[self.sig.inputs[0].register as usize];
        Ok(0)
    }
    fn signature(&self) -> &ShaderSignature {
        &self.sig
    }
}

/// Fragment shader writing a constant colour (no inputs).
pub struct ConstFs {
    sig: ShaderSignature,
    color: [u32; 4],
}

impl ConstFs {
    pub fn new(color: [u32; 4]) -> ConstFs {
        ConstFs {
            sig: ShaderSignature {
                outputs: vec![slot(
                    0,
                    SemanticName::Color,
                    0,
                    InterpolateMode::Perspective,
                )],
                num_outputs: 1,
                ..ShaderSignature::default()
            },
            color,
        }
    }
}

impl QuadShader for ConstFs {
    fn shade_quad(&self, _: &ShaderResources<'_>, io: &mut QuadIo<'_>) -> Result<u8, ExecError> {
        io.outputs[0] = self.color.map(|c| [c; 4]);
        Ok(0)
    }
    fn signature(&self) -> &ShaderSignature {
        &self.sig
    }
}

/// One shaded quad as a recording fragment shader saw it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeenQuad {
    pub live: u8,
    /// Fragment coordinate x, y per lane.
    pub x: [f32; 4],
    pub y: [f32; 4],
    /// Varying GENERIC[0].x per lane.
    pub v: [f32; 4],
}

/// Fragment shader that records every quad (live mask, POSITION, GENERIC[0]) and writes
/// GENERIC[0]; it kills lanes whose GENERIC[0].y is negative.
pub struct RecordingFs {
    sig: ShaderSignature,
    pub seen: Mutex<Vec<SeenQuad>>,
}

impl RecordingFs {
    pub fn new() -> RecordingFs {
        RecordingFs {
            sig: ShaderSignature {
                inputs: vec![
                    slot(0, SemanticName::Position, 0, InterpolateMode::Linear),
                    slot(1, SemanticName::Generic, 0, InterpolateMode::Perspective),
                ],
                outputs: vec![slot(
                    0,
                    SemanticName::Color,
                    0,
                    InterpolateMode::Perspective,
                )],
                num_inputs: 2,
                num_outputs: 1,
                uses_kill: true,
                ..ShaderSignature::default()
            },
            seen: Mutex::new(Vec::new()),
        }
    }
}

impl QuadShader for RecordingFs {
    fn shade_quad(&self, _: &ShaderResources<'_>, io: &mut QuadIo<'_>) -> Result<u8, ExecError> {
        let f = |c: [u32; 4]| c.map(f32::from_bits);
        self.seen.lock().unwrap().push(SeenQuad {
            live: io.live,
            x: f(io.inputs[0][0]),
            y: f(io.inputs[0][1]),
            v: f(io.inputs[1][0]),
        });
        io.outputs[0] = io.inputs[1];
        let mut killed = 0;
        for lane in 0..4 {
            if f32::from_bits(io.inputs[1][1][lane]) < 0.0 {
                killed |= 1 << lane;
            }
        }
        Ok(killed)
    }
    fn signature(&self) -> &ShaderSignature {
        &self.sig
    }
}

/// Fragment shader that always fails.
pub struct FailingFs {
    sig: ShaderSignature,
}

impl FailingFs {
    pub fn new() -> FailingFs {
        FailingFs {
            sig: ConstFs::new([0; 4]).sig,
        }
    }
}

impl QuadShader for FailingFs {
    fn shade_quad(&self, _: &ShaderResources<'_>, _: &mut QuadIo<'_>) -> Result<u8, ExecError> {
        Err(ExecError::BudgetExceeded { budget: 7, pc: 3 })
    }
    fn signature(&self) -> &ShaderSignature {
        &self.sig
    }
}

/// A vertex: clip position and varyings, as attribute bits.
pub fn vertex(pos: [f32; 4], varyings: &[[f32; 4]]) -> Vec<[u32; 4]> {
    let mut v = vec![pos.map(f32::to_bits)];
    v.extend(varyings.iter().map(|a| a.map(f32::to_bits)));
    v
}

/// Clip position (w = 1) of window position (x, y) in a `w` x `h` target with the full viewport.
pub fn at(x: f64, y: f64, w: u32, h: u32) -> [f32; 4] {
    [
        (x / w as f64 * 2.0 - 1.0) as f32,
        (y / h as f64 * 2.0 - 1.0) as f32,
        0.0,
        1.0,
    ]
}

/// A render target buffer.
pub struct Target {
    pub format: Format,
    pub width: u32,
    pub height: u32,
    pub data: Vec<u8>,
}

impl Target {
    pub fn new(format: Format, width: u32, height: u32) -> Target {
        Target {
            format,
            width,
            height,
            data: vec![0; (width * height) as usize * format.bytes_per_texel()],
        }
    }

    pub fn draw(
        &mut self,
        state: &DrawState<'_>,
        vertices: &[[u32; 4]],
        attributes: usize,
    ) -> Result<DrawStats, RasterError> {
        let target = RenderTarget::new(self.format, self.width, self.height, &mut self.data)?;
        draw_triangles_into(state, Vertices::new(vertices, attributes), target)
    }

    pub fn texel(&self, x: u32, y: u32) -> [u32; 4] {
        let bpp = self.format.bytes_per_texel();
        let off = (y * self.width + x) as usize * bpp;
        self.format.decode(&self.data[off..off + bpp])
    }

    pub fn texel_f32(&self, x: u32, y: u32) -> [f32; 4] {
        self.texel(x, y).map(f32::from_bits)
    }

    /// Coverage: true where any byte of the texel is non-zero.
    pub fn coverage(&self) -> Vec<bool> {
        let bpp = self.format.bytes_per_texel();
        self.data
            .chunks(bpp)
            .map(|t| t.iter().any(|&b| b != 0))
            .collect()
    }
}

/// Draws window-space triangles (w = 1, z = 0) with a constant colour, each in its own draw, and
/// returns how many draws covered each pixel.
pub fn coverage_counts(
    triangles: &[[(f64, f64); 3]],
    width: u32,
    height: u32,
    convention: ClipConvention,
) -> Vec<u32> {
    let vs = PassVs::new(0);
    let fs = ConstFs::new([1.0f32.to_bits(); 4]);
    let state = DrawState::new(&vs, &fs, convention);
    let mut counts = vec![0u32; (width * height) as usize];
    for tri in triangles {
        let mut target = Target::new(Format::R8Unorm, width, height);
        let verts: Vec<[u32; 4]> = tri
            .iter()
            .flat_map(|&(x, y)| vertex(at(x, y, width, height), &[]))
            .collect();
        target.draw(&state, &verts, 1).unwrap();
        for (c, covered) in counts.iter_mut().zip(target.coverage()) {
            *c += covered as u32;
        }
    }
    counts
}

/// Small deterministic PRNG (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [lo, hi), quantized to `1/steps`.
    pub fn grid(&mut self, lo: f64, hi: f64, steps: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        ((lo + u * (hi - lo)) * steps).floor() / steps
    }
}
