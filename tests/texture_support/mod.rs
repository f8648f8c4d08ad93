//! Shared by the JIT texture tests: a texture unit that counts the lookups reaching the sampler
//! (so a test can prove the inline path is the one taken) and a small seeded RNG.
#![allow(dead_code)]

use softgpu::exec::{QuadVec4, SampleRequest, TexelView, TextureAccess};
use softgpu::ir::{InlineShape, InlineWrap, TextureTarget};
use softgpu::texture::TextureUnits;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Forwards to texture units and counts the lookups that go through `sample` and the requests
/// for a padded level 0.
pub struct Counting {
    pub units: TextureUnits,
    pub samples: AtomicUsize,
    pub padded_requests: AtomicUsize,
}

impl Counting {
    /// Counts nothing yet.
    pub fn new(units: TextureUnits) -> Counting {
        Counting {
            units,
            samples: AtomicUsize::new(0),
            padded_requests: AtomicUsize::new(0),
        }
    }
}

impl TextureAccess for Counting {
    fn sample(&self, r: &SampleRequest) -> QuadVec4 {
        self.samples.fetch_add(1, Ordering::Relaxed);
        self.units.sample(r)
    }
    fn gather(&self, r: &SampleRequest, c: u32) -> QuadVec4 {
        self.units.gather(r, c)
    }
    fn fetch(
        &self,
        view: u32,
        target: TextureTarget,
        coords: [[i32; 4]; 4],
        lod: [i32; 4],
        offset: [i32; 3],
    ) -> QuadVec4 {
        self.units.fetch(view, target, coords, lod, offset)
    }
    fn size(&self, view: u32, target: TextureTarget, lod: i32) -> [u32; 4] {
        self.units.size(view, target, lod)
    }
    fn query_lod(&self, r: &SampleRequest) -> [[f32; 4]; 2] {
        self.units.query_lod(r)
    }
    fn texel_view(&self, view: u32, sampler: u32, target: TextureTarget) -> Option<TexelView<'_>> {
        self.units.texel_view(view, sampler, target)
    }
    fn padded_level0(&self, view: u32, sampler: u32) -> Option<&[u8]> {
        self.padded_requests.fetch_add(1, Ordering::Relaxed);
        self.units.padded_level0(view, sampler)
    }
}

/// xorshift64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (self.below(1 << 24) as f32 / (1 << 24) as f32) * (hi - lo)
    }
    pub fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len() as u64) as usize]
    }
}

/// Every shape a sampler hint may name with `mipmapped` as given: both filters on each of the
/// three inline wrap modes.
pub fn inline_shapes(mipmapped: bool) -> Vec<InlineShape> {
    [
        InlineWrap::RepeatPot,
        InlineWrap::ClampToEdge,
        InlineWrap::ClampToBorder,
    ]
    .into_iter()
    .flat_map(|wrap| {
        [false, true].map(|linear| InlineShape {
            linear,
            wrap,
            mipmapped,
        })
    })
    .collect()
}
