#!/usr/bin/env python3
"""Builds the reference peer: librashader-cli 0.12.1 (crates.io) with three small harness fixes.

The Vulkan renderer of upstream librashader-cli 0.12.1 (src/render/vk/mod.rs) has limits that
make it unusable as a reference for `softgpu render`; this script copies the crate's source from
the cargo registry, edits that one file and builds it:

1. `--dimensions` is honoured: upstream creates the output image at the requested size but gives
   the filter chain a viewport of the *input* size and reads back an input-sized region, so the
   output is always input-sized.
2. `--image` may be a directory of PNG frames, fed in name order (frame i is file i; the last
   file repeats if there are fewer files than frames), like `softgpu render --input DIR`.
3. The history starts transparent black: the first frame is rendered with the runtime's own
   `clear_history` option. Upstream leaves the 1x1 initial history images uninitialised, so
   OriginalHistoryN read before N frames exist returns garbage.

Nothing in the filter-chain runtime (librashader-runtime-vk) is changed.

    cargo install librashader-cli --version 0.12.1 --locked --no-default-features --features vulkan,wgpu
    python3 tools/librashader_cli_patch.py            # -> /tmp/librashader-cli-patched

The build needs the crate in ~/.cargo/registry (the `cargo install` above downloads it) and reuses
a cargo target directory (`--target-dir`, default /tmp/lbr-target) between runs.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

VERSION = "0.12.1"

# (old, new) pairs applied in order to src/render/vk/mod.rs; every `old` must occur exactly once.
EDITS = [
    ('''pub struct Vulkan {
    vk: VulkanBase,
    image_bytes: Image<BGRA8>,
    image: vk::Image,
    _image_alloc: VulkanImageMemory,
}''', '''pub struct Vulkan {
    vk: VulkanBase,
    image_bytes: Image<BGRA8>,
    image: vk::Image,
    _image_alloc: VulkanImageMemory,
    // PATCH(softgpu refs): extra input frames when --image is a directory (frame i uses file i,
    // the last file repeats after the list ends).
    frames: Vec<vk::Image>,
    _frame_allocs: Vec<VulkanImageMemory>,
}'''),
    ('''        unsafe {
            let mut filter_chain = FilterChain::load_from_preset(''', '''        // PATCH(softgpu refs): the viewport, the readback and the output image all use the requested
        // output size (upstream 0.12.1 uses the input size for the viewport and the readback).
        let out_size: Size<u32> = output_size.unwrap_or(self.image_bytes.size);
        unsafe {
            let mut filter_chain = FilterChain::load_from_preset('''),
    ('''                    .format(vk::Format::R8G8B8A8_UNORM)
                    .extent(self.image_bytes.size.into())''', '''                    .format(vk::Format::R8G8B8A8_UNORM)
                    .extent(out_size.into())'''),
    ('''                    image: render_texture,
                    size: self.image_bytes.size.into(),''', '''                    image: render_texture,
                    size: out_size,'''),
    ('''            for frame in 0..=frame_count {
                self.vk.queue_work(|cmd| {
                    filter_chain.frame(&input, &viewport, cmd, frame, options.as_ref())?;''',
     '''            for frame in 0..=frame_count {
                let input = if self.frames.is_empty() {
                    input.clone()
                } else {
                    VulkanImage {
                        image: self.frames[frame.min(self.frames.len() - 1)],
                        size: self.image_bytes.size,
                        format: vk::Format::B8G8R8A8_UNORM,
                    }
                };
                // PATCH(softgpu refs): the history starts transparent black (RetroArch clears it
                // before the first frame; upstream leaves the 1x1 initial images uninitialised).
                let mut frame_options = options.clone().unwrap_or_default();
                frame_options.clear_history = frame == 0;
                self.vk.queue_work(|cmd| {
                    filter_chain.frame(&input, &viewport, cmd, frame, Some(&frame_options))?;'''),
    ('''                    vk::Offset3D {
                        x: self.image_bytes.size.width as i32,
                        y: self.image_bytes.size.height as i32,
                        z: 1,
                    },''', '''                    vk::Offset3D {
                        x: out_size.width as i32,
                        y: out_size.height as i32,
                        z: 1,
                    },'''),
    ('''            let width = self.image_bytes.size.width as usize;
            let height = self.image_bytes.size.height as usize;''',
     '''            let width = out_size.width as usize;
            let height = out_size.height as usize;'''),
    ('''            let image = RgbaImage::from_raw(
                self.image_bytes.size.width,
                self.image_bytes.size.height,''', '''            let image = RgbaImage::from_raw(
                out_size.width,
                out_size.height,'''),
    ('''        let vk = VulkanBase::new()?;

        let (image_bytes, image_alloc, image, _view) = Self::load_image(&vk, image_path)?;

        Ok(Self {
            vk,
            image,
            image_bytes,
            _image_alloc: image_alloc,
        })''', '''        let vk = VulkanBase::new()?;

        // PATCH(softgpu refs): a directory is a sequence of PNG frames in name order.
        let mut paths = Vec::new();
        if image_path.is_dir() {
            for entry in std::fs::read_dir(image_path)? {
                let p = entry?.path();
                if p.extension().map_or(false, |e| e.eq_ignore_ascii_case("png")) {
                    paths.push(p);
                }
            }
            paths.sort();
            if paths.is_empty() {
                return Err(anyhow!("no PNG frames in {}", image_path.display()));
            }
        } else {
            paths.push(image_path.to_path_buf());
        }

        let (image_bytes, image_alloc, image, _view) = Self::load_image(&vk, &paths[0])?;
        let mut frames = Vec::new();
        let mut frame_allocs = Vec::new();
        if paths.len() > 1 {
            frames.push(image);
            for p in &paths[1..] {
                let (bytes, alloc, img, _view) = Self::load_image(&vk, p)?;
                if bytes.size != image_bytes.size {
                    return Err(anyhow!("frame {} has a different size", p.display()));
                }
                frames.push(img);
                frame_allocs.push(alloc);
            }
        }

        Ok(Self {
            vk,
            image,
            image_bytes,
            _image_alloc: image_alloc,
            frames,
            _frame_allocs: frame_allocs,
        })'''),
]


def patch_source(text):
    for old, new in EDITS:
        if text.count(old) != 1:
            raise SystemExit(f"patch anchor not found exactly once:\n{old[:200]}")
        text = text.replace(old, new)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src-dir", default="/tmp/lbr-cli-patched", help="where to copy the crate")
    ap.add_argument("--target-dir", default="/tmp/lbr-target")
    ap.add_argument("--out", default="/tmp/librashader-cli-patched")
    args = ap.parse_args()

    found = glob.glob(os.path.expanduser(
        f"~/.cargo/registry/src/*/librashader-cli-{VERSION}"))
    if not found:
        sys.exit(f"librashader-cli {VERSION} is not in ~/.cargo/registry: run the cargo install "
                 "command of this script's documentation first")
    if os.path.exists(args.src_dir):
        shutil.rmtree(args.src_dir)
    shutil.copytree(found[0], args.src_dir)
    path = os.path.join(args.src_dir, "src", "render", "vk", "mod.rs")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(patch_source(text))
    env = dict(os.environ, CARGO_TARGET_DIR=args.target_dir)
    subprocess.run(["cargo", "build", "--release", "--locked", "--no-default-features",
                    "--features", "vulkan,wgpu"], cwd=args.src_dir, env=env, check=True)
    built = os.path.join(args.target_dir, "release", "librashader-cli")
    # Copy then rename, so a running corpus job keeps its old binary.
    shutil.copyfile(built, args.out + ".new")
    os.chmod(args.out + ".new", 0o755)
    os.replace(args.out + ".new", args.out)
    print(args.out)


if __name__ == "__main__":
    main()
