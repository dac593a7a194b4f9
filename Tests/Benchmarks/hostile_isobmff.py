#!/usr/bin/env python3
"""Hostile AVIF/HEIC files for the ISOBMFF structure walk (issue 19, items 1-4).

Usage: Tests/Benchmarks/hostile_isobmff.py OUTDIR

Writes, each a well-formed ISOBMFF file whose structure costs libavif 0.11 or
libheif 1.15 far more than its size suggests (SourcesAndLimits.md § Structure
limits):

  ipma-items.avif          one AV1 image, and an ipma box of 200 000 entries for
                           items that do not exist (1 MB): libavif's ipma parser
                           looks each one up linearly and creates it, O(N^2) CPU
                           and ~1.2 KB per item
  grid-one-tile.avif       a 64x64 grid of 64x64 tiles, 4096 tile items whose
                           extents all point at one 27-byte AV1 frame: libavif
                           keeps a dav1d decoder and picture per tile until the
                           grid is assembled
  heic-grid-one-item.heic  a 255x256 grid whose 65 280 dimg references all name
                           one 14-byte HEVC item (131 KB): 65 280 tile decodes
                           in one libheif call, which has no cancellation
  heic-grid-distinct.heic  a 141x141 grid of 19 881 distinct tile items (one
                           shared 14-byte HEVC frame): libheif's linear item
                           look-ups make its parse quadratic, then ~20 000 tile
                           decodes in one call

The HEIC tiles declare (ispe) 16x16 and 32x32 though their frame is 64x64, so
the grids (4080x4096, 4512x4512) stay under the default 50 MP maxSourcePixels
and reach the decode: libheif 1.15 places tiles by their ispe and crops.

The coded frames are a flat grey 64x64 picture: AV1 from `avifenc -s 10 --min 40
--max 40` (libavif 0.11.1, aom), HEVC from `heif-enc -q 10` (libheif 1.15.1,
x265) of a 64x64 PNG; their av1C/hvcC and payload bytes were copied out of those
files. Also importable: make_avif/make_heic build other shapes for measurements.
"""
import os
import struct
import sys

AV1C = bytes.fromhex("81200000")
AV1_FRAME = bytes.fromhex("12000a0938157ffd8404341a40320c1a00134d34c400b7134e9c40")
HVCC = bytes.fromhex(
    "0103700000000000000000001ef000fcfdf8f800000f03200001001840010c01ffff037000"
    "00030090000003000003001eba0240210001002b4201010370000003009000000300000300"
    "1ea020810596ea4929ae6e04040c08000003000800000300084022000100074401c172b02240")
HEVC_FRAME = bytes.fromhex("0000000a2801af0418fc4ad79bc0")


def box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def full(kind, version, flags, payload):
    return box(kind, struct.pack(">I", version << 24 | flags) + payload)


def ftyp(major, brands):
    return box(b"ftyp", major + b"\0\0\0\0" + b"".join(brands))


def infe(item, kind):
    return full(b"infe", 2, 0, struct.pack(">HH4s", item, 0, kind) + b"\0")


def iinf(entries):
    return full(b"iinf", 0, 0, struct.pack(">H", len(entries)) + b"".join(entries))


def ispe(width, height):
    return full(b"ispe", 0, 0, struct.pack(">II", width, height))


def grid_payload(rows, columns, width, height):
    large = width > 0xFFFF or height > 0xFFFF
    sizes = struct.pack(">II", width, height) if large else struct.pack(">HH", width, height)
    return struct.pack(">BBBB", 0, 1 if large else 0, rows - 1, columns - 1) + sizes


def assemble(brand, items, properties, associations, references, primary, data):
    """items: [(id, type)]; associations: [(id, [property index])];
    references: [(type, from, [to])]; data: [(id, bytes or (offset in the
    shared blob, length))]. Every item's bytes live in one mdat; an item given
    a tuple shares bytes already placed (for the one-frame shapes)."""
    blob = bytearray()
    placed = []
    for item, chunk in data:
        if isinstance(chunk, tuple):
            placed.append((item, chunk[0], chunk[1]))
        else:
            placed.append((item, len(blob), len(chunk)))
            blob += chunk
    wide_refs = any(max([f] + to) > 0xFFFF for _, f, to in references)
    wide_items = any(item > 0xFFFF for item, _ in associations)
    iref = b"".join(
        box(kind, (struct.pack(">I", f) if wide_refs else struct.pack(">H", f)) + struct.pack(">H", len(to))
            + b"".join(struct.pack(">I" if wide_refs else ">H", t) for t in to))
        for kind, f, to in references)
    ipma_entries = b"".join(
        (struct.pack(">I", item) if wide_items else struct.pack(">H", item)) + struct.pack(">B", len(props))
        + b"".join(struct.pack(">B", p) for p in props)
        for item, props in associations)
    iprp = box(b"iprp", box(b"ipco", b"".join(properties))
               + full(b"ipma", 1 if wide_items else 0, 0, struct.pack(">I", len(associations)) + ipma_entries))

    def meta(mdat_start):
        iloc_entries = b"".join(struct.pack(">HHHII", item, 0, 1, mdat_start + offset, length)
                                for item, offset, length in placed)
        iloc = full(b"iloc", 0, 0, struct.pack(">BBH", 0x44, 0x00, len(placed)) + iloc_entries)
        children = [full(b"hdlr", 0, 0, b"\0" * 4 + b"pict" + b"\0" * 13),
                    full(b"pitm", 0, 0, struct.pack(">H", primary)), iloc,
                    iinf([infe(item, kind) for item, kind in items])]
        if references:
            children.append(full(b"iref", 1 if wide_refs else 0, 0, iref))
        children.append(iprp)
        return full(b"meta", 0, 0, b"".join(children))

    head = ftyp(brand, [brand, b"mif1", b"miaf"])
    start = len(head) + len(meta(0)) + 8
    return head + meta(start) + box(b"mdat", bytes(blob))


def make_avif(rows=1, columns=1, tile=64, shared=True, extra_ipma=0):
    """An AV1 image, or a rows x columns grid of tile items; with shared, every
    tile's extent points at the same frame. extra_ipma adds ipma entries for
    items that do not exist (ids after the last real one)."""
    properties = [ispe(tile, tile), box(b"av1C", AV1C), ispe(tile * columns, tile * rows)]
    if rows * columns == 1 and not extra_ipma:
        return assemble(b"avif", [(1, b"av01")], properties[:2], [(1, [1, 0x82])], [], 1, [(1, AV1_FRAME)])
    tiles = list(range(2, 2 + rows * columns)) if rows * columns > 1 else []
    items = [(1, b"grid" if tiles else b"av01")] + [(t, b"av01") for t in tiles]
    associations = [(1, [3] if tiles else [1, 0x82])] + [(t, [1, 0x82]) for t in tiles]
    associations += [(len(items) + 1 + i, []) for i in range(extra_ipma)]
    if tiles:
        data = [(1, grid_payload(rows, columns, tile * columns, tile * rows)), (tiles[0], AV1_FRAME)]
        frame = (len(data[0][1]), len(AV1_FRAME))
        data += [(t, frame if shared else AV1_FRAME) for t in tiles[1:]]
        references = [(b"dimg", 1, tiles)]
    else:
        data, references = [(1, AV1_FRAME)], []
    return assemble(b"avif", items, properties, associations, references, 1, data)


def make_heic(rows, columns, tile=64, one_item=False, extra_items=0):
    """A rows x columns HEVC grid of tiles declared tile x tile (the frame is
    64x64): every dimg reference naming one tile item (one_item), or that
    many distinct tile items sharing one frame's bytes. extra_items adds
    HEVC items (the same frame) that nothing references."""
    properties = [box(b"hvcC", HVCC), ispe(tile, tile), ispe(tile * columns, tile * rows)]
    count = rows * columns
    tiles = [2] * count if one_item else list(range(2, 2 + count))
    distinct = sorted(set(tiles))
    coded = distinct + list(range(distinct[-1] + 1, distinct[-1] + 1 + extra_items))
    items = [(1, b"grid")] + [(t, b"hvc1") for t in coded]
    associations = [(1, [3])] + [(t, [0x81, 2]) for t in coded]
    data = [(1, grid_payload(rows, columns, tile * columns, tile * rows)), (coded[0], HEVC_FRAME)]
    frame = (len(data[0][1]), len(HEVC_FRAME))
    data += [(t, frame) for t in coded[1:]]
    return assemble(b"heic", items, properties, associations, [(b"dimg", 1, tiles)], 1, data)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    files = {
        "ipma-items.avif": make_avif(extra_ipma=200_000),
        "grid-one-tile.avif": make_avif(rows=64, columns=64),
        "heic-grid-one-item.heic": make_heic(255, 256, tile=16, one_item=True),
        "heic-grid-distinct.heic": make_heic(141, 141, tile=32),
    }
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
