"""References for the nclx fixtures (run by make-format-fixtures.sh, in this folder).

Little CMS cannot read an nclx box, so these are computed here with numpy straight from the
published definitions, independently of the shim's nclx.c: the sRGB curve (IEC 61966-2-1), the
BT.2020 → BT.709 linear-light matrix as printed in ITU-R BT.2087-0 (four decimals), the PQ EOTF
(SMPTE ST 2084) and the HLG inverse OETF with the 1.2 system gamma of a 1000 cd/m² display
(ITU-R BT.2100). HDR signals are not tone mapped (API.md § Output "Colour"): reference white
(203 cd/m², ITU-R BT.2408; HLG signal 0.75) becomes sRGB white and each channel clips at it
before the matrix. The Display P3 nclx fixture needs nothing here: its reference is
ref/p3-testorig.png, Pillow ImageCms with display-p3.icc. Nor does the lossless WebP and AVIF
with a P3 ICC profile; the HEIC, whose x265 "lossless" encode is off by up to 1, gets its own:
pillow-heif's decode of it, through ImageCms with the profile it carries.
"""
import io
import numpy as np
import pillow_heif
from PIL import Image, ImageCms

BT2020_TO_709 = np.array([[1.6605, -0.5876, -0.0728],
                          [-0.1246, 1.1329, -0.0083],
                          [-0.0182, -0.1006, 1.1187]])


def srgb_to_linear(v):
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(v):
    return np.where(v <= 0.0031308, v * 12.92, 1.055 * np.power(v, 1 / 2.4) - 0.055)


def pq_nits(v):
    m1, m2 = 2610 / 16384, 2523 / 4096 * 128
    c1, c2, c3 = 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32
    p = v ** (1 / m2)
    return 10000 * (np.maximum(p - c1, 0) / (c2 - c3 * p)) ** (1 / m1)


def hlg_display(v):
    a = 0.17883277
    b, c = 1 - 4 * a, 0.5 - a * np.log(4 * a)
    scene = np.where(v <= 0.5, v * v / 3, (np.exp((v - c) / a) + b) / 12)
    return scene ** 1.2


def convert(path, to_linear, out):
    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=np.float64) / 255
    linear = np.clip(to_linear(rgb), 0, 1) @ BT2020_TO_709.T
    encoded = linear_to_srgb(np.clip(linear, 0, 1))
    Image.fromarray(np.round(encoded * 255).astype(np.uint8)).save(out)


convert("../testorig.jpg", srgb_to_linear, "ref/bt2020-testorig.png")
convert("formats/ramp.png", lambda v: pq_nits(v) / 203, "ref/pq-ramp.png")
convert("formats/ramp.png", lambda v: hlg_display(v) / hlg_display(0.75), "ref/hlg-ramp.png")

heic = pillow_heif.open_heif("formats/p3-icc.heic", convert_hdr_to_8bit=True)
heic_image = Image.frombytes("RGB", heic.size, bytes(heic.data), "raw", "RGB", heic.stride)
ImageCms.profileToProfile(heic_image, ImageCms.getOpenProfile(io.BytesIO(heic.info["icc_profile"])),
                          ImageCms.createProfile("sRGB"), renderingIntent=0, outputMode="RGB").save("ref/p3-heic.png")
