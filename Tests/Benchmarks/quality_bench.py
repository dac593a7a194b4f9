"""libvips' side of quality-bench.sh, through pyvips (run with the venv's python).

encode LABEL DIR: each DIR/NAME.png (thumbd's lossless 512-px rendition) saved by libvips
  at imgproxy's defaults, metadata stripped: DIR/NAME.LABEL.jpeg (jpegsave Q 80,
  optimize_coding), .webp (webpsave Q 79), .avif (heifsave Q 63, AV1, default effort),
  .jxl (jxlsave Q 77, effort 4: imgproxy's JxlEffort) where the libvips has jxlsave
  (Debian's 8.14 does, on the same libjxl 0.7 as thumbd; the 8.18 wheel does not).
cpu DIR: one pass over DIR/*.png, each image loaded into memory first; prints
  "FORMAT median-ms" of process CPU time (all of libvips' and the codecs' threads) per save.
summary FILE: the rounds' lines ("ROUND ENCODER FORMAT ms") to medians and ratios.
"""
import glob
import os
import statistics
import sys
import time

SAVES = [
    ("jpeg", "jpegsave_buffer", dict(Q=80, optimize_coding=True, strip=True)),
    ("webp", "webpsave_buffer", dict(Q=79, strip=True)),
    ("avif", "heifsave_buffer", dict(Q=63, compression="av1", strip=True)),
    ("jxl", "jxlsave_buffer", dict(Q=77, effort=4, strip=True)),
]


def saves():
    """The SAVES this libvips has (a wheel may lack a saver: 8.18's has no jxlsave)."""
    import pyvips
    probe = pyvips.Image.black(8, 8, bands=3)
    usable = []
    for fmt, method, options in SAVES:
        try:
            getattr(probe, method)(**options)
            usable.append((fmt, method, options))
        except (pyvips.Error, AttributeError):
            pass
    return usable


def images(directory):
    import pyvips
    names = sorted(p for p in glob.glob(os.path.join(directory, "*.png")))
    return [(p, pyvips.Image.new_from_file(p).copy_memory()) for p in names]


def encode(label, directory):
    for path, image in images(directory):
        stem = path[:-len(".png")]
        for fmt, method, options in saves():
            with open(f"{stem}.{label}.{fmt}", "wb") as out:
                out.write(getattr(image, method)(**options))


def cpu(directory):
    loaded = images(directory)
    for fmt, method, options in saves():
        times = []
        for _, image in loaded:
            start = time.process_time()
            getattr(image, method)(**options)
            times.append((time.process_time() - start) * 1000)
        print(f"{fmt} {statistics.median(times):.2f}")


def summary(path):
    rows = {}
    for line in open(path):
        round_, encoder, fmt, ms = line.split()
        rows.setdefault((encoder, fmt), {})[int(round_)] = float(ms)
    encoders = sorted({e for e, _ in rows})
    for fmt in ("jpeg", "webp", "avif", "jxl"):
        thumbd = rows[("thumbd", fmt)]
        parts = [f"thumbd {statistics.median(thumbd.values()):.1f} ms"]
        for other in (e for e in encoders if e != "thumbd" and (e, fmt) in rows):
            theirs = rows[(other, fmt)]
            ratios = [thumbd[r] / theirs[r] for r in thumbd if r in theirs]
            parts.append(f"{other} {statistics.median(theirs.values()):.1f} ms "
                         f"(thumbd/{other} median of {len(ratios)} rounds' ratios {statistics.median(ratios):.3f})")
        print(f"CPU per 512-px encode, {fmt}: " + ", ".join(parts))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "encode":
        import pyvips
        print(f"libvips {pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)} -> {sys.argv[2]}", file=sys.stderr)
        encode(sys.argv[2], sys.argv[3])
    elif command == "cpu":
        cpu(sys.argv[2])
    elif command == "summary":
        summary(sys.argv[2])
