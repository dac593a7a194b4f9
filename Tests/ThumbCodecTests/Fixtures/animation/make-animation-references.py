#!/usr/bin/env python3
"""Pillow's composited frames of every animation fixture (README.md).

For each source: references/NAME.png, every frame as Pillow composites it,
RGBA, stacked top to bottom (colour zeroed where alpha is 0, so only what
shows is compared); references/NAME@48.png, the same frames each resized by
Pillow (LANCZOS, which premultiplies RGBA) to the 48-px `inside` size thumbd
lays out (round(side * 48 / long side), half away from zero); and a line of
references.txt: NAME frames=N loop=L durations=D0,D1,... with Pillow's own
values (a GIF's delay in ms as stored, loop "none" without a NETSCAPE
extension).

Pillow's GIF rules differ from the browsers' (which SPEC §14 follows) in
four places; the script refuses any GIF that would reach one, so that every
reference is also what a browser shows:
  - disposal 2 of a frame without a transparent index fills Pillow's
    background colour, not transparency;
  - a frame with disposal 0 keeps the previous frame's non-zero disposal;
  - a first frame without a transparent index that leaves part of the screen
    uncovered shows colour 0 there, not transparency;
  - a frame past the screen's edge grows Pillow's canvas instead of being cut.
"""
import os
import struct
import sys

from PIL import Image, __version__ as pillow_version

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = [
    "animation/cogs.gif", "animation/dispose-background.gif", "animation/dispose-previous.gif",
    "animation/animated-loop-3.gif", "animation/animated-loop-3.webp",
    "animation/rotating-squares.gif", "animation/rotating-squares-interlaced.gif", "animation/rotating-squares.webp",
    "animation/disposals.gif",
    "formats/animated.gif", "formats/animated.webp",
    "animated/anim40.gif", "animated/anim40-interlaced.gif", "animated/anim40-lossy.webp", "animated/anim3.webp",
]
BOX = 48


def gif_frames(data):
    """(left, top, width, height, disposal, transparent?) of each frame, and the screen size."""
    sw, sh, flags = struct.unpack("<HHB", data[6:11])
    pos = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    frames, disposal, transparent = [], 0, False
    while pos < len(data):
        kind = data[pos]
        if kind == 0x21:
            label = data[pos + 1]
            pos += 2
            if label == 0xF9 and data[pos] >= 4:
                disposal = (data[pos + 1] >> 2) & 7
                transparent = bool(data[pos + 1] & 1)
            while data[pos]:
                pos += data[pos] + 1
            pos += 1
        elif kind == 0x2C:
            left, top, w, h, f = struct.unpack("<HHHHB", data[pos + 1:pos + 10])
            pos += 10 + (3 << ((f & 7) + 1) if f & 0x80 else 0) + 1
            while data[pos]:
                pos += data[pos] + 1
            pos += 1
            frames.append((left, top, w, h, disposal, transparent))
            disposal, transparent = 0, False
        else:
            break
    return (sw, sh), frames


def check_gif(name, data):
    (sw, sh), frames = gif_frames(data)
    for i, (left, top, w, h, disposal, transparent) in enumerate(frames):
        last = i == len(frames) - 1
        assert left + w <= sw and top + h <= sh, f"{name}: frame {i} leaves the screen"
        assert not (disposal == 2 and not transparent and not last), f"{name}: frame {i} disposes to background opaque"
        if i > 0 and disposal == 0 and not last:
            assert all(f[4] == 0 for f in frames[:i]), f"{name}: frame {i} has disposal 0 after a non-zero one"
        if i == 0 and (left, top, w, h) != (0, 0, sw, sh):
            assert transparent, f"{name}: the first frame leaves the screen uncovered without transparency"


def inside(sw, sh):
    scale = min(BOX / sw, BOX / sh, 1)
    half_up = lambda v: max(1, int(v * scale + 0.5))
    return half_up(sw), half_up(sh)


def clean(frame):
    pixels = frame.load()
    for y in range(frame.height):
        for x in range(frame.width):
            if pixels[x, y][3] == 0:
                pixels[x, y] = (0, 0, 0, 0)
    return frame


def main():
    out = os.path.join(HERE, "references")
    os.makedirs(out, exist_ok=True)
    lines = [f"# Pillow {pillow_version}"]
    for source in SOURCES:
        path = os.path.join(HERE, "..", source)
        with open(path, "rb") as f:
            data = f.read()
        if source.endswith(".gif"):
            check_gif(source, data)
        image = Image.open(path)
        frames, durations = [], []
        for index in range(image.n_frames):
            image.seek(index)
            frames.append(clean(image.convert("RGBA")))
            durations.append(int(image.info.get("duration", 0)))
        loop = image.info.get("loop", "none")
        name = source.replace("/", "_")
        w, h = image.size
        strip = Image.new("RGBA", (w, h * len(frames)))
        for i, frame in enumerate(frames):
            strip.paste(frame, (0, i * h))
        strip.save(os.path.join(out, f"{name}.png"), optimize=True)
        ow, oh = inside(w, h)
        small = Image.new("RGBA", (ow, oh * len(frames)))
        for i, frame in enumerate(frames):
            small.paste(clean(frame.resize((ow, oh), Image.Resampling.LANCZOS)), (0, i * oh))
        small.save(os.path.join(out, f"{name}@{BOX}.png"), optimize=True)
        lines.append(f"{name} frames={len(frames)} loop={loop} durations={','.join(map(str, durations))}")
    with open(os.path.join(HERE, "references.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
