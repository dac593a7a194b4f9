"""Makes the colour-profile test images and their references (run in this folder, after make-profiles.c).

References are independent conversions: Pillow decodes the pixels and converts them to sRGB with
ImageCms (its own bundled Little CMS), perceptual intent, reading each profile from its .icc file.
PNGs are written here chunk by chunk so broken iCCP chunks can be made too.
    pip install Pillow && python3 make-fixtures.py
"""
import io, struct, zlib
from PIL import Image, ImageCms

SRGB = ImageCms.createProfile("sRGB")


def to_srgb(image, profile):
    """Pillow/lcms conversion to sRGB, perceptual; profile is a path or ICC bytes."""
    if isinstance(profile, bytes):
        profile = io.BytesIO(profile)
    source = ImageCms.getOpenProfile(profile)
    return ImageCms.profileToProfile(image, source, SRGB, renderingIntent=0, outputMode="RGB")


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def write_png(path, image, icc=None, iccp_data=None):
    """8-bit PNG of image (L, RGB or RGBA) with an iCCP chunk holding icc (compressed here) or raw iccp_data."""
    colour_type = {"L": 0, "RGB": 2, "RGBA": 6}[image.mode]
    width, height = image.size
    channels = len(image.mode)
    raw = image.tobytes()
    rows = b"".join(b"\0" + raw[y * width * channels:(y + 1) * width * channels] for y in range(height))
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0))
    if icc is not None:
        iccp_data = zlib.compress(icc, 9)
    if iccp_data is not None:
        out += chunk(b"iCCP", b"icc\0\0" + iccp_data)
    out += chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
    open(path, "wb").write(out)


def padded(profile, size):
    """A valid profile grown to size bytes: zeros after the tags, the header's size field updated."""
    return struct.pack(">I", size) + profile[4:] + bytes(size - len(profile))


p3 = open("display-p3.icc", "rb").read()
testorig = Image.open("../testorig.jpg").convert("RGB")
gray = Image.open("../gray.jpg")
assert gray.mode == "L"

# Full-size references for JPEG decodes (the tests tag the JPEGs themselves).
to_srgb(testorig, "display-p3.icc").save("ref/p3-testorig.png")
to_srgb(testorig, "rgb-lut.icc").save("ref/lut-testorig.png")
to_srgb(Image.open("../cmyk.jpg"), "cmyk-lut.icc").save("ref/cmyk-lut.png")
to_srgb(Image.open("../ycck.jpg"), "cmyk-lut.icc").save("ref/ycck-lut.png")   # Pillow reads both as inverted Adobe CMYK
to_srgb(gray, "gray-gamma18.icc").save("ref/gray-gamma18.png")
# rocket.jpg carries a real Adobe RGB (1998) profile; compare at djpeg's 1/8 scale.
adobe = Image.open("../rocket.jpg").info["icc_profile"]
to_srgb(Image.open("../djpeg/rocket-1of8.ppm"), adobe).save("ref/adobe-rocket-1of8.png")

# Tagged PNGs whose pixels are exactly the references' inputs.
write_png("p3-testorig.png", testorig, p3)
write_png("gray-gamma18.png", gray, open("gray-gamma18.icc", "rb").read())
ramp = Image.linear_gradient("L").resize(testorig.size)
rgba = testorig.copy()
rgba.putalpha(ramp)
write_png("lut-rgba.png", rgba, open("rgb-lut.icc", "rb").read())
lut_ref = to_srgb(testorig, "rgb-lut.icc")
lut_ref.putalpha(ramp)
lut_ref.save("ref/lut-rgba.png")

# Saturated P3 swatches (16×16 each): beyond sRGB they must clip, not stay dull.
swatches = [(240, 20, 20), (255, 0, 0), (20, 240, 20), (20, 20, 240), (234, 51, 35), (200, 100, 50),
            (128, 128, 128), (255, 255, 255)]
sw = Image.new("RGB", (16 * len(swatches), 16))
for i, colour in enumerate(swatches):
    sw.paste(colour, (16 * i, 0, 16 * i + 16, 16))
write_png("p3-swatches.png", sw, p3)
to_srgb(sw, "display-p3.icc").save("ref/p3-swatches.png")

# Profiles that must be ignored, on a 64×48 crop (pixels then decode as sRGB).
crop = testorig.crop((0, 0, 64, 48))
write_png("ignored/untagged.png", crop)
write_png("ignored/p3.png", crop, p3)
write_png("ignored/p3-padded-1mib.png", crop, padded(p3, 1 << 20))          # valid, under 4 MiB: applied
write_png("ignored/p3-padded-over-4mib.png", crop, padded(p3, (4 << 20) + 1))
write_png("ignored/garbage-iccp.png", crop, bytes(range(256)) * 3)
write_png("ignored/truncated-iccp.png", crop, p3[:300])
write_png("ignored/gray-untagged.png", gray.crop((0, 0, 64, 48)))
write_png("ignored/gray-with-p3.png", gray.crop((0, 0, 64, 48)), p3)
write_png("ignored/rgb-with-gray-profile.png", crop, open("gray-gamma18.icc", "rb").read())
# A zlib bomb: a P3 header that declares 2 GiB, then 64 MiB of zeros (64 KB compressed).
bomb = zlib.compressobj(9)
data = bomb.compress(struct.pack(">I", 0x7FFFFFF0) + p3[4:])
for _ in range(64):
    data += bomb.compress(bytes(1 << 20))
write_png("ignored/iccp-bomb.png", crop, iccp_data=data + bomb.flush())
