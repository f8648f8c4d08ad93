//! A texture unit for the JIT's differential tests: texels hash every coordinate bit of the
//! request, so a lane computing other coordinates than the interpreter shows in the result.
#![allow(dead_code)]

use softgpu_jit::exec::{QuadVec4, SampleRequest, TextureAccess};
use softgpu_jit::ir::TextureTarget;

/// A texture unit whose texels hash every coordinate bit of the request, inactive lanes' too
/// (their coordinates feed the level of detail).
pub struct CoordHash {
    /// Bits cleared in every texel.
    pub cleared_bits: u32,
}

impl CoordHash {
    fn texels(&self, h: u64) -> QuadVec4 {
        std::array::from_fn(|c| {
            std::array::from_fn(|l| (h >> ((c * 4 + l) % 48)) as u32 & !self.cleared_bits)
        })
    }
}

impl TextureAccess for CoordHash {
    fn sample(&self, r: &SampleRequest) -> QuadVec4 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for x in r.coords.iter().flatten() {
            h = (h ^ x.to_bits() as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.texels(h)
    }
    fn gather(&self, r: &SampleRequest, _: u32) -> QuadVec4 {
        self.sample(r)
    }
    fn fetch(
        &self,
        _: u32,
        _: TextureTarget,
        c: [[i32; 4]; 4],
        _: [i32; 4],
        _: [i32; 3],
    ) -> QuadVec4 {
        self.texels(
            c.iter()
                .flatten()
                .fold(7u64, |h, &x| h.wrapping_mul(31) ^ x as u64),
        )
    }
    fn size(&self, _: u32, _: TextureTarget, _: i32) -> [u32; 4] {
        [16, 16, 1, 1]
    }
    fn query_lod(&self, r: &SampleRequest) -> [[f32; 4]; 2] {
        let t = self.sample(r);
        [t[0].map(f32::from_bits), t[1].map(f32::from_bits)]
    }
}
