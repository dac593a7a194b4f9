#!/usr/bin/env python3
"""A HEIC in the shape iPhones write: a grid of 512x512 HEVC tiles.

Usage: Tests/Benchmarks/heic_grid.py TILE_DIR COLUMNS ROWS WIDTH HEIGHT OUT

TILE_DIR holds tile-R-C.heic (R in 0..ROWS-1, C in 0..COLUMNS-1), each a
512x512 image heif-enc wrote (one hvc1 item). Their hvcC boxes and coded
frames are copied into one file: a grid item of WIDTH x HEIGHT (at most the
tiles' cover, as an iPhone's 4032x3024 over 8x6 tiles), a distinct tile item
per cell with its own hvcC, all in one mdat (make-inputs.sh --formats). heif-enc
1.15 writes one image however large, so it cannot make this shape itself;
libheif decodes a grid tile by tile, which is what tile threads spread over
cores (Isolation.md § Worker processes).
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostile_isobmff import assemble, grid_payload, ispe  # noqa: E402

TILE = 512


def boxes(data, start=0, end=None):
    """(type, payload start, box end) of each box in data[start:end]."""
    end = len(data) if end is None else end
    while start < end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[start + 8:start + 16])[0]
            header = 16
        elif size == 0:
            size = end - start
        yield kind, start + header, start + size
        start += size


def child(data, start, end, kind):
    for k, s, e in boxes(data, start, end):
        if k == kind:
            return s, e
    raise ValueError(f"no {kind!r} box")


def tile(path):
    """The hvcC box (whole) and coded bytes of a one-item HEIC by heif-enc."""
    data = open(path, "rb").read()
    ms, me = child(data, 0, len(data), b"meta")
    ms += 4  # full box
    ps, pe = child(data, *child(data, ms, me, b"iprp"), b"ipco")
    hvcc = next(data[s - 8:e] for k, s, e in boxes(data, ps, pe) if k == b"hvcC")
    ls, _ = child(data, ms, me, b"iloc")
    version = data[ls]
    sizes, base_index = data[ls + 4], data[ls + 5]
    offset_size, length_size, base_size = sizes >> 4, sizes & 15, base_index >> 4
    index_size = base_index & 15 if version in (1, 2) else 0
    at = ls + 6
    count_format = ">H" if version < 2 else ">I"
    (count,) = struct.unpack(count_format, data[at:at + struct.calcsize(count_format)])
    at += struct.calcsize(count_format)

    def number(width):
        nonlocal at
        value = int.from_bytes(data[at:at + width], "big") if width else 0
        at += width
        return value

    for _ in range(count):
        item = number(2 if version < 2 else 4)
        if version in (1, 2):
            number(2)  # construction method (0: file offset)
        number(2)  # data reference index
        base = number(base_size)
        extents = number(2)
        parts = []
        for _ in range(extents):
            number(index_size)
            offset, length = number(offset_size), number(length_size)
            parts.append(data[base + offset:base + offset + length])
        if item == 1:
            return hvcc, b"".join(parts)
    raise ValueError(f"{path}: no item 1")


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__.split("\n\n")[1])
    directory, columns, rows, width, height, out = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6]
    assert (columns - 1) * TILE < width <= columns * TILE and (rows - 1) * TILE < height <= rows * TILE
    cells = [tile(os.path.join(directory, f"tile-{r}-{c}.heic")) for r in range(rows) for c in range(columns)]
    ids = list(range(2, 2 + len(cells)))
    # Properties (1-based): the tiles' ispe, the grid's ispe, then one hvcC per tile.
    properties = [ispe(TILE, TILE), ispe(width, height)] + [hvcc for hvcc, _ in cells]
    associations = [(1, [2])] + [(t, [0x80 | (3 + i), 1]) for i, t in enumerate(ids)]
    items = [(1, b"grid")] + [(t, b"hvc1") for t in ids]
    data = [(1, grid_payload(rows, columns, width, height))] + [(t, frame) for t, (_, frame) in zip(ids, cells)]
    with open(out, "wb") as f:
        f.write(assemble(b"heic", items, properties, associations, [(b"dimg", 1, ids)], 1, data))


if __name__ == "__main__":
    main()
