//! Shared helpers for the interpreter tests: parse TGSI text, run one quad, inspect results.
#![allow(dead_code)]

use std::sync::Mutex;

use softgpu_jit::exec::{
    ExecError, NoTextures, QuadIo, QuadShader, QuadVec4, SampleRequest, ShaderResources,
    TextureAccess,
};
use softgpu_jit::interp::Interpreter;
use softgpu_jit::ir::text::parse_program;
use softgpu_jit::ir::TextureTarget;

/// A quad register holding the same float vector in every lane.
pub fn vec4(v: [f32; 4]) -> QuadVec4 {
    v.map(|c| [c.to_bits(); 4])
}

/// A quad register holding the same bits vector in every lane.
pub fn uvec4(v: [u32; 4]) -> QuadVec4 {
    v.map(|c| [c; 4])
}

/// A quad register whose x channel has per-lane floats (other channels 0).
pub fn lanes_x(v: [f32; 4]) -> QuadVec4 {
    [v.map(f32::to_bits), [0; 4], [0; 4], [0; 4]]
}

/// Per-lane floats of one channel.
pub fn chan_f(r: &QuadVec4, c: usize) -> [f32; 4] {
    r[c].map(f32::from_bits)
}

/// Lane 0 of each channel, as floats.
pub fn lane0_f(r: &QuadVec4) -> [f32; 4] {
    [0, 1, 2, 3].map(|c| f32::from_bits(r[c][0]))
}

/// Lane 0 of each channel, as bits.
pub fn lane0_u(r: &QuadVec4) -> [u32; 4] {
    [0, 1, 2, 3].map(|c| r[c][0])
}

/// Everything one quad run needs.
pub struct Run<'a> {
    pub inputs: Vec<QuadVec4>,
    pub system_values: Vec<QuadVec4>,
    pub constants: Vec<Vec<[u32; 4]>>,
    pub num_outputs: usize,
    pub live: u8,
    pub textures: &'a dyn TextureAccess,
    pub budget: Option<u64>,
}

impl Default for Run<'_> {
    fn default() -> Self {
        Run {
            inputs: Vec::new(),
            system_values: Vec::new(),
            constants: Vec::new(),
            num_outputs: 4,
            live: 0xF,
            textures: &NoTextures,
            budget: None,
        }
    }
}

impl Run<'_> {
    /// Runs `tgsi` on one quad: the outputs and the killed-lane mask.
    pub fn go(&self, tgsi: &str) -> Result<(Vec<QuadVec4>, u8), ExecError> {
        let program =
            parse_program(tgsi).unwrap_or_else(|e| panic!("bad test program: {e}\n{tgsi}"));
        let mut interp = Interpreter::new(&program)?;
        if let Some(b) = self.budget {
            interp = interp.with_budget(b);
        }
        let bufs: Vec<&[[u32; 4]]> = self.constants.iter().map(|b| b.as_slice()).collect();
        let res = ShaderResources {
            constants: &bufs,
            textures: self.textures,
            storage: Default::default(),
        };
        let mut outputs = vec![[[0u32; 4]; 4]; self.num_outputs];
        let mut io = QuadIo {
            inputs: &self.inputs,
            system_values: &self.system_values,
            outputs: &mut outputs,
            live: self.live,
        };
        let killed = interp.shade_quad(&res, &mut io)?;
        Ok((outputs, killed))
    }
}

/// Runs `tgsi` with the given inputs; returns OUT registers (panics on errors).
pub fn run(tgsi: &str, inputs: &[QuadVec4]) -> Vec<QuadVec4> {
    Run {
        inputs: inputs.to_vec(),
        ..Run::default()
    }
    .go(tgsi)
    .unwrap_or_else(|e| panic!("execution failed: {e}"))
    .0
}

/// A FRAG program with `DCL IN[0..3]`, `DCL OUT[0..3]`, `DCL TEMP[0..7]`, `DCL ADDR[0..1]`,
/// immediates `imms` (each a `UINT32 {..}` body or a `FLT32 {..}` body) and `body` instructions
/// (numbered automatically, END appended).
pub fn program(imms: &[&str], body: &str) -> String {
    let mut s = String::from(
        "FRAG\nDCL IN[0..3], GENERIC[0], PERSPECTIVE\nDCL OUT[0..3], GENERIC[0]\nDCL TEMP[0..7]\nDCL ADDR[0..1]\n",
    );
    for (i, imm) in imms.iter().enumerate() {
        s += &format!("IMM[{i}] {imm}\n");
    }
    let mut n = 0;
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        s += &format!("{n:3}: {line}\n");
        n += 1;
    }
    s += &format!("{n:3}: END\n");
    s
}

/// Runs a one-instruction-style ALU test: `body` reads IN[0..3] and writes OUT[0..3].
pub fn alu(imms: &[&str], body: &str, inputs: &[QuadVec4]) -> Vec<QuadVec4> {
    run(&program(imms, body), inputs)
}

/// One recorded texel fetch: view, target, coordinates, levels, offset.
pub type FetchCall = (u32, TextureTarget, [[i32; 4]; 4], [i32; 4], [i32; 3]);

/// A texture unit that records every request and answers with recognisable values.
#[derive(Default)]
pub struct MockTextures {
    pub samples: Mutex<Vec<SampleRequest>>,
    pub gathers: Mutex<Vec<(SampleRequest, u32)>>,
    pub fetches: Mutex<Vec<FetchCall>>,
    pub sizes: Mutex<Vec<(u32, TextureTarget, i32)>>,
    pub lod_queries: Mutex<Vec<SampleRequest>>,
}

impl TextureAccess for MockTextures {
    /// Returns (s, t, r-or-0, view) per lane.
    fn sample(&self, r: &SampleRequest) -> QuadVec4 {
        self.samples.lock().unwrap().push(*r);
        [
            r.coords[0].map(f32::to_bits),
            r.coords[1].map(f32::to_bits),
            r.coords[2].map(f32::to_bits),
            [(r.view as f32).to_bits(); 4],
        ]
    }
    fn gather(&self, r: &SampleRequest, component: u32) -> QuadVec4 {
        self.gathers.lock().unwrap().push((*r, component));
        [[component; 4], [1; 4], [2; 4], [3; 4]]
    }
    fn fetch(
        &self,
        view: u32,
        target: TextureTarget,
        coords: [[i32; 4]; 4],
        lod: [i32; 4],
        offset: [i32; 3],
    ) -> QuadVec4 {
        self.fetches
            .lock()
            .unwrap()
            .push((view, target, coords, lod, offset));
        [
            coords[0].map(|v| v as u32),
            coords[1].map(|v| v as u32),
            coords[2].map(|v| v as u32),
            lod.map(|v| v as u32),
        ]
    }
    fn size(&self, view: u32, target: TextureTarget, lod: i32) -> [u32; 4] {
        self.sizes.lock().unwrap().push((view, target, lod));
        [64 >> lod.clamp(0, 6), 32 >> lod.clamp(0, 5), 1, 7]
    }
    fn query_lod(&self, r: &SampleRequest) -> [[f32; 4]; 2] {
        self.lod_queries.lock().unwrap().push(*r);
        [[1.5; 4], [2.5; 4]]
    }
}
