//! Lookup textures (LUTs): loaded from the preset's images, with mipmaps when it asks for them.

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use crate::texture::{Filter, Texture, Wrap};

use crate::chain::preset::Preset;
use crate::chain::ChainError;

use super::binding::lut_sampling;

/// A lookup texture with the filter and wrap mode it is sampled with.
pub(super) struct Lut {
    pub(super) texture: Arc<Texture>,
    /// Its filter and wrap mode ([`lut_sampling`]).
    pub(super) sampling: (Filter, Wrap),
}

/// Loads a LUT image (PNG or JPEG; palette, grey and 16-bit PNGs are converted to RGBA8).
fn load_lut(name: &str, path: &Path, mipmap: bool) -> Result<Texture, ChainError> {
    let base = Texture::load(path)
        .map_err(|e| ChainError::new(format!("LUT `{name}` ({}): {e}", path.display())))?;
    if !mipmap {
        return Ok(base);
    }
    let (w, h) = (base.width(), base.height());
    let mut tex = Texture::new(base.format(), w, h, Texture::full_mip_levels(w, h))
        .map_err(|e| ChainError::new(format!("LUT `{name}`: {e}")))?;
    tex.level_data_mut(0).copy_from_slice(base.level_data(0));
    tex.generate_mipmaps();
    Ok(tex)
}

/// Loads every LUT of `preset` (in parallel), each with the sampling the preset gives it.
pub(super) fn load_luts(preset: &Preset) -> Vec<Result<Lut, ChainError>> {
    preset
        .textures
        .par_iter()
        .map(|t| {
            let texture = load_lut(&t.name, &t.path, t.mipmap)?;
            Ok(Lut {
                texture: Arc::new(texture),
                sampling: lut_sampling(t),
            })
        })
        .collect()
}
