"""Tags a JPEG or PNG with an ICC profile without touching its pixels (for the colour benchmark:
the 12 MP inputs of shared/bench/make-inputs.sh re-tagged as Display P3).
JPEG: APP2 ICC_PROFILE segments right after SOI (any old ones dropped). PNG: an iCCP chunk after IHDR.
    python3 retag.py IN OUT PROFILE.icc
"""
import struct, sys, zlib


def tag_jpeg(data, icc):
    out, i = bytearray(data[:2]), 2
    parts = [icc[k:k + 65519] for k in range(0, len(icc), 65519)]
    for n, part in enumerate(parts):
        out += b"\xff\xe2" + struct.pack(">H", 16 + len(part)) + b"ICC_PROFILE\0" + bytes([n + 1, len(parts)]) + part
    while data[i] == 0xFF and data[i + 1] != 0xDA:
        end = i + 2 + struct.unpack(">H", data[i + 2:i + 4])[0]
        if not (data[i + 1] == 0xE2 and data[i + 4:i + 16] == b"ICC_PROFILE\0"):
            out += data[i:end]
        i = end
    return bytes(out + data[i:])


def tag_png(data, icc):
    body = b"iCCP" + b"icc\0\0" + zlib.compress(icc, 9)
    iccp = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
    out, i = bytearray(data[:8]), 8
    while i < len(data):
        length, kind = struct.unpack(">I4s", data[i:i + 8])
        if kind != b"iCCP" and kind != b"sRGB":   # a PNG may not carry both
            out += data[i:i + 12 + length]
        if kind == b"IHDR":
            out += iccp
        i += 12 + length
    return bytes(out)


source, target, profile = sys.argv[1:4]
data, icc = open(source, "rb").read(), open(profile, "rb").read()
open(target, "wb").write(tag_jpeg(data, icc) if data[:2] == b"\xff\xd8" else tag_png(data, icc))
