#!/usr/bin/env python3
"""Builds the reference peer: librashader-cli 0.12.1 (crates.io) with small harness fixes.

The Vulkan renderer of upstream librashader-cli 0.12.1 (src/render/vk/mod.rs) has limits that
make it unusable as a reference for `softgpu render`; this script copies the crate's source from
the cargo registry, edits that file (fixes 1-3) and one spot of librashader-runtime-vk (fix 4),
and builds it:

1. `--dimensions` is honoured: upstream creates the output image at the requested size but gives
   the filter chain a viewport of the *input* size and reads back an input-sized region, so the
   output is always input-sized.
2. `--image` may be a directory of PNG frames, fed in name order (frame i is file i; the last
   file repeats if there are fewer files than frames), like `softgpu render --input DIR`.
3. The history starts transparent black: the first frame is rendered with the runtime's own
   `clear_history` option. Upstream leaves the 1x1 initial history images uninitialised, so
   OriginalHistoryN read before N frames exist returns garbage.

4. Feedback starts transparent black too (librashader-runtime-vk, `FilterChainVulkan::frame`:
   when `clear_history` is set, the feedback images are cleared right after they are sized).
   Upstream reads uninitialised memory as PassFeedbackN on frame 0, and that garbage propagates
   through every feedback preset (koko-aio mismatched on 20 of 23 presets until this fix).
   RetroArch clears history and feedback before the first frame, and issue #5 asks for it.

Nothing else in the filter-chain runtime is changed: the reference images of tests/chain are
byte-identical with and without fix 4, and identical to upstream's output wherever fixes 1-3 do
not apply.

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


# (old, new) for librashader-runtime-vk 0.12.1 src/filter_chain.rs.
RUNTIME_EDITS = [
    ('''            |index, pass, feedback| {
                self.common.feedback_textures[index] =
                    Some(feedback.as_input(pass.meta.filter, pass.meta.wrap_mode));
                Ok(())
            },
        )?;
''', '''            |index, pass, feedback| {
                self.common.feedback_textures[index] =
                    Some(feedback.as_input(pass.meta.filter, pass.meta.wrap_mode));
                Ok(())
            },
        )?;

        // PATCH(softgpu refs): feedback before the first frame is transparent black, as in
        // RetroArch (upstream leaves the freshly sized feedback images uninitialised).
        if options.clear_history {
            for index in 0..passes_len {
                if self.feedback_framebuffers.contains(index) {
                    self.feedback_framebuffers[index].clear(cmd);
                }
            }
        }
'''),
]


def patch_source(text, edits=None):
    for old, new in EDITS if edits is None else edits:
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

    def registry_crate(name):
        found = glob.glob(os.path.expanduser(f"~/.cargo/registry/src/*/{name}-{VERSION}"))
        if not found:
            sys.exit(f"{name} {VERSION} is not in ~/.cargo/registry: run the cargo install "
                     "command of this script's documentation first")
        return found[0]

    runtime_dir = args.src_dir + "-runtime-vk"
    for src, dst, rel, edits in (
            (registry_crate("librashader-cli"), args.src_dir, "src/render/vk/mod.rs", EDITS),
            (registry_crate("librashader-runtime-vk"), runtime_dir, "src/filter_chain.rs",
             RUNTIME_EDITS)):
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(src, dst)
        path = os.path.join(dst, rel)
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(patch_source(text, edits))
    with open(os.path.join(args.src_dir, "Cargo.toml"), "a") as f:
        f.write(f'\n[patch.crates-io]\nlibrashader-runtime-vk = {{ path = "{runtime_dir}" }}\n')
    env = dict(os.environ, CARGO_TARGET_DIR=args.target_dir)
    # Not --locked: the [patch] changes one lock entry; --offline keeps every other version.
    subprocess.run(["cargo", "build", "--release", "--offline", "--no-default-features",
                    "--features", "vulkan,wgpu"], cwd=args.src_dir, env=env, check=True)
    built = os.path.join(args.target_dir, "release", "librashader-cli")
    # Copy then rename, so a running corpus job keeps its old binary.
    shutil.copyfile(built, args.out + ".new")
    os.chmod(args.out + ".new", 0o755)
    os.replace(args.out + ".new", args.out)
    print(args.out)


if __name__ == "__main__":
    main()
