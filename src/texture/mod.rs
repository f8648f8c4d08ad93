//! Textures.
