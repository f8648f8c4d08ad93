//! Rasterizer.
