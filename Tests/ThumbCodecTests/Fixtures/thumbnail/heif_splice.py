"""Gives an AVIF or HEIC file (made by heif-enc -t) the thumbnail of another
one, stored turned and with an irot box that turns it back: the primary
image of IN, the thumbnail item (its coded bytes, hvcC/av1C and ispe) of
TURNED, which heif-enc made from the same picture turned 90 degrees
clockwise, plus irot angle 1 (90 degrees anticlockwise) on that thumbnail.
Usage: python3 heif_splice.py IN TURNED OUT
The file is rewritten whole (every item's bytes moved to one mdat, located
by an iloc of version 1 with construction method 0); nothing else changes."""
import struct
import sys


def boxes(data, start, end):
    while start < end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        head = 8
        if size == 1:
            size = struct.unpack(">Q", data[start + 8:start + 16])[0]
            head = 16
        elif size == 0:
            size = end - start
        yield kind.decode("latin1"), data[start + head:start + size]
        start += size


def parse(path):
    data = open(path, "rb").read()
    f = {"props": [], "assoc": {}, "refs": [], "items": [], "data": {}}
    top = dict(boxes(data, 0, len(data)))
    f["ftyp"] = top["ftyp"]
    meta = top["meta"][4:]
    idat = b""
    locations = {}
    for kind, body in boxes(meta, 0, len(meta)):
        if kind == "hdlr":
            f["hdlr"] = body
        elif kind == "pitm":
            f["primary"] = struct.unpack(">H", body[4:6])[0]
        elif kind == "idat":
            idat = body
        elif kind == "iinf":
            for _, infe in boxes(body, 6, len(body)):
                f["items"].append(infe)   # version 2: flags (hidden tiles), ID, type, name kept as they are
        elif kind == "iref":
            for ref, r in boxes(body, 4, len(body)):
                src, count = struct.unpack(">HH", r[:4])
                f["refs"].append((ref, src, list(struct.unpack(">%dH" % count, r[4:4 + 2 * count]))))
        elif kind == "iprp":
            for sub, part in boxes(body, 0, len(body)):
                if sub == "ipco":
                    f["props"] = [struct.pack(">I", 8 + len(p)) + k.encode("latin1") + p for k, p in boxes(part, 0, len(part))]
                elif sub == "ipma":
                    n, = struct.unpack(">I", part[4:8])
                    at = 8
                    for _ in range(n):
                        item, count = struct.unpack(">HB", part[at:at + 3])
                        f["assoc"][item] = list(part[at + 3:at + 3 + count])
                        at += 3 + count
        elif kind == "iloc":
            version = body[0]
            offset_size, length_size, base_size = body[4] >> 4, body[4] & 15, body[5] >> 4
            index_size = body[5] & 15 if version > 0 else 0
            def number(at, size):
                return int.from_bytes(body[at:at + size], "big")
            n, = struct.unpack(">H", body[6:8])
            at = 8
            for _ in range(n):
                item, = struct.unpack(">H", body[at:at + 2])
                method = struct.unpack(">H", body[at + 2:at + 4])[0] & 15 if version == 1 else 0
                at += 4 if version == 1 else 2
                at += 2   # data reference index
                base = number(at, base_size)
                at += base_size
                count, = struct.unpack(">H", body[at:at + 2])
                at += 2
                extents = []
                for _ in range(count):
                    at += index_size
                    extents.append((base + number(at, offset_size), number(at + offset_size, length_size)))
                    at += offset_size + length_size
                locations[item] = (method, extents)
    for item, (method, extents) in locations.items():
        source = idat if method == 1 else data
        f["data"][item] = b"".join(source[o:o + n] for o, n in extents)
    return f


def box(kind, payload):
    return struct.pack(">I", 8 + len(payload)) + kind.encode("latin1") + payload


def full(kind, payload, version=0, flags=0):
    return box(kind, struct.pack(">I", version << 24 | flags) + payload)


def write(f, path):
    items = sorted(f["data"])
    def meta(mdat_start):
        iloc = struct.pack(">BBH", 0x44, 0x00, len(items))
        offset = mdat_start
        for item in items:
            iloc += struct.pack(">HHHHII", item, 0, 0, 1, offset, len(f["data"][item]))
            offset += len(f["data"][item])
        infe = b"".join(box("infe", entry) for entry in f["items"])
        iref = b"".join(box(k, struct.pack(">HH", s, len(to)) + b"".join(struct.pack(">H", t) for t in to)) for k, s, to in f["refs"])
        ipma = struct.pack(">I", len(f["assoc"])) + b"".join(
            struct.pack(">HB", i, len(a)) + bytes(a) for i, a in sorted(f["assoc"].items()))
        return full("meta", full("hdlr", f["hdlr"][4:]) + full("pitm", struct.pack(">H", f["primary"]))
                    + full("iloc", iloc, version=1) + full("iinf", struct.pack(">H", len(f["items"])) + infe)
                    + full("iref", iref) + box("iprp", box("ipco", b"".join(f["props"])) + full("ipma", ipma)))
    head = box("ftyp", f["ftyp"])
    start = len(head) + len(meta(0)) + 8
    blob = b"".join(f["data"][i] for i in items)
    open(path, "wb").write(head + meta(start) + box("mdat", blob))


def thumbnail(f):
    return next(s for k, s, to in f["refs"] if k == "thmb" and to == [f["primary"]])


def main(source, turned, out):
    f, g = parse(source), parse(turned)
    mine, theirs = thumbnail(f), thumbnail(g)
    assert not any(k == "auxl" and mine in to for k, _, to in f["refs"]), "a thumbnail with alpha is not spliced"
    f["data"][mine] = g["data"][theirs]
    indices = []
    for index in g["assoc"][theirs]:
        f["props"].append(g["props"][(index & 0x7F) - 1])
        indices.append(len(f["props"]) | (index & 0x80))
    f["props"].append(box("irot", bytes([1])))
    indices.append(len(f["props"]) | 0x80)   # transformative properties are essential
    f["assoc"][mine] = indices
    write(f, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
