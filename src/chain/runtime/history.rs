//! History and feedback images: transparent black until a frame is pushed.

use std::sync::Arc;

use crate::texture::{Format, Texture};

use crate::chain::ChainError;

pub(super) fn blank(width: u32, height: u32) -> Result<Arc<Texture>, ChainError> {
    Texture::new(Format::R8G8B8A8Unorm, width, height, 1)
        .map(Arc::new)
        .map_err(|e| ChainError::new(e.to_string()))
}
