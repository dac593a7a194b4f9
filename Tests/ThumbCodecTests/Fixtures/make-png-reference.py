"""Writes pngsuite-rgba-sha256.txt: for every valid PngSuite file, the SHA-256 of
its pixels as RGBA8 computed by an independent decoder (pypng, pure Python, no
gamma). Expansion follows API.md § Output: palette and tRNS expanded, gray to RGB,
low bit depths scaled to 8 bits, 16-bit samples keep their high byte (v >> 8),
gAMA/cHRM/sRGB/sBIT ignored.   Run: pip install pypng; python3 make-png-reference.py
"""
import glob, hashlib, os, png

def rgba8(path):
    w, h, rows, info = png.Reader(filename=path).read()
    rows = [list(r) for r in rows]
    depth, planes = info["bitdepth"], info["planes"]
    out = bytearray()
    if "palette" in info and planes == 1 and not info["greyscale"]:
        pal = [tuple(p) + (255,) * (4 - len(p)) for p in info["palette"]]
        for r in rows:
            for i in r:
                out += bytes(pal[i])
        return w, h, bytes(out)
    maxv = (1 << depth) - 1
    def to8(v):
        return v >> 8 if depth == 16 else v * 255 // maxv
    trns = info.get("transparent")
    for r in rows:
        for x in range(w):
            px = r[x * planes:(x + 1) * planes]
            if planes in (1, 2):
                g = to8(px[0]); rgb = [g, g, g]
                a = to8(px[1]) if planes == 2 else (0 if trns is not None and px[0] == (trns[0] if isinstance(trns, tuple) else trns) else 255)
            else:
                rgb = [to8(v) for v in px[:3]]
                a = to8(px[3]) if planes == 4 else (0 if trns is not None and tuple(px[:3]) == tuple(trns) else 255)
            out += bytes(rgb + [a])
    return w, h, bytes(out)

here = os.path.dirname(os.path.abspath(__file__))
lines = []
for path in sorted(glob.glob(os.path.join(here, "pngsuite", "*.png"))):
    name = os.path.basename(path)
    if name.startswith("x"):
        continue
    w, h, data = rgba8(path)
    assert len(data) == w * h * 4, name
    lines.append(f"{name} {w} {h} {hashlib.sha256(data).hexdigest()}")
open(os.path.join(here, "pngsuite-rgba-sha256.txt"), "w").write("\n".join(lines) + "\n")
print(len(lines), "references")
