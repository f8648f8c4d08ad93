//! Lookup textures (LUTs): loaded from the preset's images, with mipmaps when it asks for them.
//! Their sizes are read from the image headers first, so that LUTs too large for the memory
//! budget are refused before any is decoded.

use std::sync::Arc;

use rayon::prelude::*;

use crate::texture::{Filter, Texture, Wrap};

use crate::chain::preset::{Preset, TextureConfig};
use crate::chain::ChainError;

use super::binding::lut_sampling;
use super::memory::lut_memory;

/// A lookup texture with the filter and wrap mode it is sampled with.
pub(super) struct Lut {
    /// The name the preset gives it (for messages).
    pub(super) name: String,
    pub(super) texture: Arc<Texture>,
    /// Its filter and wrap mode ([`lut_sampling`]).
    pub(super) sampling: (Filter, Wrap),
}

/// `FILE:LINE: LUT `NAME` (IMAGE)`: the preset line that names a LUT's image, for messages.
fn lut_context(config: &TextureConfig) -> String {
    format!(
        "{}:{}: LUT `{}` ({})",
        config.path_origin.0.display(),
        config.path_origin.1,
        config.name,
        config.path.display()
    )
}

/// Loads a LUT image (PNG or JPEG; palette, grey and 16-bit PNGs are converted to RGBA8).
fn load_lut(config: &TextureConfig) -> Result<Texture, ChainError> {
    let context = || lut_context(config);
    let base =
        Texture::load(&config.path).map_err(|e| ChainError::new(format!("{}: {e}", context())))?;
    if !config.mipmap {
        return Ok(base);
    }
    let (w, h) = (base.width(), base.height());
    let mut tex = Texture::new(base.format(), w, h, Texture::full_mip_levels(w, h))
        .map_err(|e| ChainError::new(format!("{}: {e}", context())))?;
    tex.level_data_mut(0).copy_from_slice(base.level_data(0));
    tex.generate_mipmaps();
    Ok(tex)
}

/// Checks from the image headers that the LUTs of `preset` fit in `budget` once loaded. An image
/// whose header cannot be read is left to [`load_luts`], which names what is wrong with it.
pub(super) fn check_lut_memory(preset: &Preset, budget: u64) -> Result<(), ChainError> {
    let sizes: Vec<(String, (u32, u32), bool)> = preset
        .textures
        .iter()
        .filter_map(|t| {
            let reader = crate::input::image_reader(&t.path, "LUT", u32::MAX).ok()?;
            let size = reader.into_dimensions().ok()?;
            Some((t.name.clone(), size, t.mipmap))
        })
        .collect();
    lut_memory(&sizes)
        .check(
            budget,
            &format!("{}: the lookup textures", preset.path.display()),
        )
        .map_err(ChainError::new)
}

/// Loads every LUT of `preset` (in parallel), each with the sampling the preset gives it.
pub(super) fn load_luts(preset: &Preset) -> Vec<Result<Lut, ChainError>> {
    preset
        .textures
        .par_iter()
        .map(|t| {
            let texture = load_lut(t)?;
            Ok(Lut {
                name: t.name.clone(),
                texture: Arc::new(texture),
                sampling: lut_sampling(t),
            })
        })
        .collect()
}
