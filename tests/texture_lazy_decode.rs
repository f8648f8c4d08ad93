//! A texture's decoded copy is made lazily by whichever thread samples it first — inside the
//! rasterizer's parallel tiles. Its decode must not wait on work a blocked caller could steal:
//! a tile thread that decodes in parallel chunks and, while waiting, picks up another tile that
//! samples the same texture would wait on itself.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use rayon::prelude::*;
use softgpu::texture::Texture;
use softgpu_jit::ir::InlineWrap;

/// Many tiles of a pool larger than the machine all sample one large texture first.
#[test]
fn decoding_inside_parallel_tiles_finishes() {
    let (width, height) = (512u32, 512u32);
    let data: Vec<u8> = (0..width * height * 4).map(|i| (i % 251) as u8).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(16)
        .build()
        .unwrap();
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..20 {
            let texture = Arc::new(Texture::from_rgba8(width, height, data.clone()).unwrap());
            let sums: Vec<u64> = pool.install(|| {
                (0..4096u32)
                    .into_par_iter()
                    .map(|tile| {
                        let (texels, _) = texture.decoded_levels().unwrap();
                        let padded = texture.padded_level0(InlineWrap::ClampToEdge);
                        u64::from(texels[(tile as usize * 64) % texels.len()])
                            + padded.map_or(0, |p| u64::from(p[0]))
                    })
                    .collect()
            });
            assert_eq!(sums.len(), 4096);
        }
        let _ = done.send(());
    });
    finished.recv_timeout(Duration::from_secs(120)).expect(
        "parallel tiles sampling one texture first did not finish: a decode waited on itself",
    );
}
