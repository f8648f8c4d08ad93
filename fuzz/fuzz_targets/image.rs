//! Fuzz target: image files (PNG, JPEG, and whatever else the `image` crate guesses from the
//! first bytes) read through `input::image_reader` with its decoder limits, then made a
//! texture; and the same file through `Texture::load`, the loader of LUTs and input frames.
#![no_main]

use libfuzzer_sys::fuzz_target;
use softgpu::input::image_reader;
use softgpu::texture::Texture;
use softgpu_fuzz::{fresh_scratch, MAX_IMAGE_INPUT};

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_IMAGE_INPUT {
        return;
    }
    let path = fresh_scratch().join("input.img");
    std::fs::write(&path, data).expect("the scratch folder is writable");
    if let Ok(reader) = image_reader(&path, "image", Texture::MAX_DIMENSION) {
        if let Ok(decoded) = reader.decode() {
            let rgba = decoded.into_rgba8();
            let (width, height) = rgba.dimensions();
            let _ = Texture::from_rgba8(width, height, rgba.into_raw());
        }
    }
    let _ = Texture::load(&path);
});
