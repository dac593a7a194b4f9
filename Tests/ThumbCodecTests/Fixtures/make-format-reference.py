"""Writes formats/reference/*.png and formats/reference.txt: each formats/ fixture
decoded by an independent decoder — Pillow 13 (its own libwebp 1.6, giflib-free GIF
reader, libavif 1.4 for AVIF) and pillow-heif 1.8 (libheif 1.23 + libde265) for
HEIC — as RGBA8, sampled every STEP pixels on both axes to keep the files small.
Fully transparent pixels are stored as (0,0,0,0): their colour is invisible and
decoders differ on it. GIF / animated WebP: the first frame on its screen/canvas.
AVIF: Pillow reports irot/imir as an Exif orientation, which exif_transpose applies
(the fixtures carry no other Exif orientation). A name@M line is the same image
resized with a box filter to ceil(side*M/8), the reference for a scaled decode.
A file carrying an ICC profile (the photo-* AVIF/HEIC fixtures keep rocket.jpg's Adobe
RGB profile) is converted to sRGB with Pillow ImageCms, perceptual intent, alpha kept,
as thumbd does (API.md § Output "Colour").
Run: pip install Pillow pillow-heif; python3 make-format-reference.py
"""
import io, os
from PIL import Image, ImageCms, ImageOps
import pillow_heif

pillow_heif.register_heif_opener()
here = os.path.dirname(os.path.abspath(__file__))
folder = os.path.join(here, "formats")
out = os.path.join(folder, "reference")
os.makedirs(out, exist_ok=True)

def decode(path):
    im = Image.open(path)
    im.seek(0)
    if path.endswith(".avif"):
        im = ImageOps.exif_transpose(im)
    icc = im.info.get("icc_profile")
    im = im.convert("RGBA")
    if icc:
        alpha = im.getchannel("A")
        im = ImageCms.profileToProfile(im.convert("RGB"), ImageCms.getOpenProfile(io.BytesIO(icc)),
                                       ImageCms.createProfile("sRGB"), renderingIntent=0, outputMode="RGB")
        im.putalpha(alpha)
    px = im.load()
    for y in range(im.height):
        for x in range(im.width):
            if px[x, y][3] == 0:
                px[x, y] = (0, 0, 0, 0)
    return im

def sample(im, step):
    """Pixels (x, y) with x and y multiples of step, row by row."""
    size = ((im.width + step - 1) // step, (im.height + step - 1) // step)
    return Image.frombytes("RGBA", size, b"".join(
        bytes(im.getpixel((x, y))) for y in range(0, im.height, step) for x in range(0, im.width, step)))

SCALED = {"vp80-02-inter-1402.webp": 4}
lines = []
for name in sorted(os.listdir(folder)):
    path = os.path.join(folder, name)
    if not os.path.isfile(path) or name.endswith((".txt", ".png")):
        continue
    im = decode(path)
    step = 1 if im.width * im.height <= 256 * 256 else 8
    sample(im, step).save(os.path.join(out, name + ".png"))
    lines.append(f"{name} {im.width} {im.height} {step}")
    m = SCALED.get(name)
    if m:
        w, h = (im.width * m + 7) // 8, (im.height * m + 7) // 8
        im.resize((w, h), Image.BOX).save(os.path.join(out, f"{name}@{m}.png"))
        lines.append(f"{name}@{m} {w} {h} 1")
open(os.path.join(folder, "reference.txt"), "w").write("\n".join(lines) + "\n")
print(len(lines), "references")
