#!/usr/bin/env python3
"""Generates the input frames and LUT images of the filter-chain tests (tests/chain/inputs/).

Deterministic (no randomness, no dates): rerunning it rewrites byte-identical files. The pictures
are smooth where a shader samples them with linear filtering (so that two correct samplers agree
to within a unit) and have sharp features only where the tests sample at texel centres.

    python3 tests/chain/make_inputs.py
"""
import math
import os
import struct
import zlib

from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs")


def smooth_scene(w, h, t=0.0):
    """An RGB picture of soft gradients and two soft discs; `t` moves the discs (for frame sets)."""
    img = Image.new("RGBA", (w, h))
    px = img.load()
    for y in range(h):
        for x in range(w):
            u, v = (x + 0.5) / w, (y + 0.5) / h
            r = 0.15 + 0.7 * u
            g = 0.1 + 0.6 * v
            b = 0.35 + 0.3 * math.sin(3.0 * u + 2.0 * v)
            for cx, cy, rad, col in ((0.3 + 0.2 * t, 0.4, 0.22, (0.95, 0.85, 0.2)),
                                     (0.72, 0.62 - 0.15 * t, 0.18, (0.1, 0.3, 0.9))):
                d = math.hypot((u - cx) * w / h, v - cy) / rad
                k = max(0.0, 1.0 - d * d) ** 2
                r, g, b = (r + (col[0] - r) * k, g + (col[1] - g) * k, b + (col[2] - b) * k)
            px[x, y] = tuple(int(round(255 * min(1.0, max(0.0, c)))) for c in (r, g, b)) + (255,)
    return img


def blocks(w, h, cell):
    """Sharp-edged coloured blocks (for nearest-neighbour sampling at texel centres)."""
    img = Image.new("RGBA", (w, h))
    px = img.load()
    for y in range(h):
        for x in range(w):
            i, j = x // cell, y // cell
            px[x, y] = ((i * 53 + j * 17) % 256, (i * 29 + j * 71 + 40) % 256,
                        (i * 11 + j * 37 + 90) % 256, 255)
    return img


def write_png16(path, w, h, fn):
    """Writes a 16-bit-per-channel RGB PNG (PIL cannot); fn(x, y) -> (r, g, b) in 0..65535."""
    raw = bytearray()
    for y in range(h):
        raw.append(0)
        for x in range(w):
            raw += struct.pack(">HHH", *fn(x, y))

    def chunk(tag, data):
        c = struct.pack(">I", len(data)) + tag + data
        return c + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def main():
    os.makedirs(os.path.join(OUT, "frames"), exist_ok=True)
    os.makedirs(os.path.join(OUT, "luts"), exist_ok=True)

    smooth_scene(64, 48).save(os.path.join(OUT, "scene64x48.png"), optimize=False)
    blocks(32, 24, 4).save(os.path.join(OUT, "blocks32x24.png"))
    smooth_scene(320, 240).save(os.path.join(OUT, "scene320x240.png"))
    for i in range(4):
        smooth_scene(48, 32, t=i / 3.0).save(os.path.join(OUT, "frames", f"frame{i:03}.png"))

    # LUTs. rgba: RGBA8 with varying alpha (16x16, sampled nearest at texel centres).
    lut = Image.new("RGBA", (16, 16))
    px = lut.load()
    for y in range(16):
        for x in range(16):
            px[x, y] = (x * 16 + 8, y * 16 + 8, ((x ^ y) * 16) % 256, 255 - 12 * ((x + y) % 16))
    lut.save(os.path.join(OUT, "luts", "rgba16.png"))

    # palette: 8x8 indexed colour with a transparent entry (tRNS).
    pal = Image.new("P", (8, 8))
    palette = []
    for i in range(16):
        palette += [(i * 37) % 256, (i * 91 + 20) % 256, (255 - i * 13) % 256]
    pal.putpalette(palette + [0] * (768 - len(palette)))
    pal.putdata([(x * 3 + y * 5) % 16 for y in range(8) for x in range(8)])
    pal.info["transparency"] = 5
    pal.save(os.path.join(OUT, "luts", "palette8.png"), transparency=5)

    # grey: 8-bit greyscale, a smooth ramp (sampled linearly).
    grey = Image.new("L", (16, 16))
    grey.putdata([int(round(255 * (0.5 + 0.45 * math.sin(x * 0.35) * math.cos(y * 0.27))))
                  for y in range(16) for x in range(16)])
    grey.save(os.path.join(OUT, "luts", "grey16.png"))

    # 16-bit RGB: values chosen away from the 8-bit rounding boundaries of the 16 -> 8 conversion.
    write_png16(os.path.join(OUT, "luts", "deep16.png"), 16, 16,
                lambda x, y: ((x * 16 + 4) * 257, (y * 16 + 4) * 257, ((x + y) * 8 + 4) * 257))

    # JPEG: smooth content (any two baseline decoders agree closely on it).
    smooth_scene(32, 32).convert("RGB").save(os.path.join(OUT, "luts", "scene32.jpg"), quality=90)

    # mip: 64x64 with structure at every scale, for LUT mipmaps (power of two: exact 2:1 levels).
    mip = Image.new("RGBA", (64, 64))
    px = mip.load()
    for y in range(64):
        for x in range(64):
            fine = 60 if ((x // 2 + y // 2) % 2) else 0
            px[x, y] = (min(255, x * 3 + fine), min(255, y * 3 + 30), 128 + fine, 255)
    mip.save(os.path.join(OUT, "luts", "mip64.png"))

    # An aperture-grille mask tile for the crt-royale-class bench (RGB stripes with soft edges).
    grille = Image.new("RGB", (64, 64))
    px = grille.load()
    for y in range(64):
        for x in range(64):
            phase = (x % 8) / 8.0
            rgb = [max(0.0, math.cos(2 * math.pi * (phase - c / 3.0))) for c in range(3)]
            px[x, y] = tuple(int(round(255 * (0.15 + 0.85 * v))) for v in rgb)
    grille.save(os.path.join(OUT, "luts", "grille64.png"))

    # A LUT loaded through the $PRESET$ wildcard (tests/chain/wildcards.slangp).
    blocks(8, 8, 2).save(os.path.join(OUT, "luts", "wildcards.png"))


if __name__ == "__main__":
    main()
