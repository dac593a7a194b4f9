#!/usr/bin/env python3
"""Writes issue 19's hostile container shapes (items 5 and 6, and the GIF walk's)
into OUTDIR, for Tests/Benchmarks/attacks.sh and by hand:

  app1-segments.jpg   a 16x16 JPEG with 100 000 empty APP1 segments after SOI (400 KB):
                      libjpeg-turbo saves APP1 in thumbd's probe and walks its whole
                      saved-marker list for each one, O(N^2), ~10 s in one call
  app2-segments.jpg   the same with APP2, which thumbd's decode saves (ICC profiles)
  app1-segments-1mb.jpg  250 000 empty APP1 segments (1 MB): ~1 min before the walk
  ztxt-bomb.png       a 1x1 PNG with 256 zTXt chunks of ~4 KB that each inflate to
                      4 MB of "A" (1 MB file, 1 GiB of text libpng used to hold; not
                      zeros: libpng keeps text up to its first NUL)
  gif-frames.gif      a 1x1 GIF with 150 000 one-pixel frames (over the walk's 100 000)

The structure walks (SourcesAndLimits.md § Structure limits) refuse each with 422
image_too_large. Python standard library only; the JPEG is embedded (Pillow 12,
a 16x16 grey gradient, quality 85), so the output is the same bytes every run.
Usage: python3 Tests/Benchmarks/hostile_segments.py OUTDIR
"""
import base64
import os
import struct
import sys
import zlib

SMALL_JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAUDBAQEAwUEBAQFBQUGBwwIBwcHBw8LCwkMEQ8SEhEPERETFhwXExQaFRER"
    "GCEYGh0dHx8fExciJCIeJBweHx7/wAALCAAQABABAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QA"
    "tRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0"
    "NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2"
    "t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/9oACAEBAAA/APEfg9F/qfwr7N+D0X+p/Cvj"
    "/wCD0X+p/Cvs34PRf6n8K//Z")


def padded_jpeg(marker, count):
    """SMALL_JPEG with `count` empty segments of `marker` (length field 2) after SOI."""
    return SMALL_JPEG[:2] + bytes([0xFF, marker, 0, 2]) * count + SMALL_JPEG[2:]


def png_chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def ztxt_bomb():
    text = png_chunk(b"zTXt", b"Comment\0\0" + zlib.compress(b"A" * 4_000_000, 9))
    ihdr = png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    idat = png_chunk(b"IDAT", zlib.compress(b"\0\0\0\0"))
    return b"\x89PNG\r\n\x1a\n" + ihdr + text * 256 + idat + png_chunk(b"IEND", b"")


def gif_frames(count):
    screen = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff"
    # A 1x1 frame of index 0: descriptor, LZW minimum code size 2, data (clear, 0, end).
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00"
    return screen + frame * count + b"\x3b"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    files = {
        "app1-segments.jpg": padded_jpeg(0xE1, 100_000),
        "app2-segments.jpg": padded_jpeg(0xE2, 100_000),
        "app1-segments-1mb.jpg": padded_jpeg(0xE1, 250_000),
        "ztxt-bomb.png": ztxt_bomb(),
        "gif-frames.gif": gif_frames(150_000),
    }
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print(f"{name} {len(data)} bytes")


if __name__ == "__main__":
    main()
