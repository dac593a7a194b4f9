#!/usr/bin/env python3
"""The reference scores SSIMULACRA2Tests compares thumbd's SSIMULACRA2 with.

    python3 -m venv /tmp/ssvenv && /tmp/ssvenv/bin/pip install ssimulacra2==0.3.0
    /tmp/ssvenv/bin/python reference-scores.py      # from this folder

Prints, per pair, two scores:
- `package`: the PyPI package ssimulacra2 0.3.0 as published
  (`ssimulacra2.compute_ssimulacra2`): float64, and scipy's exact Gaussian
  (truncated at 3.33 sigma) with its image mirrored left and right and
  zero-padded above and below, where libjxl's recursive Gaussian pads every
  side with zeros. (It also stops one scale earlier than libjxl when a side
  halves below 8 px; every fixture has sides of 256 px, where the two agree.)
- `recursive`: the same package's colour, map and weighting functions with
  its blur replaced by libjxl's recursive Gaussian (lib/jxl/gauss_blur.cc at
  0d8651b0, the plain recurrence, zero padding) and libjxl's order of scales,
  in float64: libjxl's metric but for float32 rounding.
- `recursive32`: the same with the recursive Gaussian run in float32, as
  libjxl (and thumbd) run it. Its resonators sit on the unit circle (the
  truncated-cosine method cancels their poles), so rounding errors do not
  decay along a row or column; on smooth content they add SSIM error that
  float64 does not have (several points for arc.png on light grey).

Then the top left 200×150 of LadyBird and its q50 JPEG (odd sides at the
small scales, and a last scale under 8 px, which libjxl computes; the
package, testing after halving, stops before it), and the translucent pair (arc.png, an RGBA rendition, against its lossy
WebP round trip, arc-webp-q50.png) by SPEC §17's rule: both images blended on
sRGB grey 26/255 and on 230/255 (the package's own blending function), the
lower score. The package's `compute_ssimulacra2` drops alpha (it converts to
RGB), so `package` here is its functions and blur in libjxl's order of scales.
"""
import sys
import numpy as np
from PIL import Image
import ssimulacra2.ssimulacra2 as P

PAIRS = [(photo, q) for photo in ("LadyBird", "rocket", "hubble_deep_field") for q in (90, 70, 50, 30)]


def recursive_coefficients(sigma=1.5):
    radius = float(np.float32(3.2795 * sigma + 0.2546).round())
    omega = np.array([1, 3, 5]) * np.pi / (2 * radius)
    p = np.array([1 / np.tan(omega[0] / 2), -1 / np.tan(omega[1] / 2), 1 / np.tan(omega[2] / 2)])
    r = np.array([p[0] ** 2 / np.sin(omega[0]), -p[1] ** 2 / np.sin(omega[1]), p[2] ** 2 / np.sin(omega[2])])
    rho = np.exp(-0.5 * sigma * sigma * omega * omega) / radius
    d13, d35, d51 = p[0] * r[1] - r[0] * p[1], p[1] * r[2] - r[1] * p[2], p[2] * r[0] - r[2] * p[0]
    zeta15, zeta35 = d35 / d13, d51 / d13
    a = np.array([p, r, [zeta15, zeta35, 1]])
    gamma = np.array([1, radius * radius - sigma * sigma, zeta15 * rho[0] + zeta35 * rho[1] + rho[2]])
    beta = np.linalg.solve(a, gamma)
    return int(radius), -beta * np.cos(omega * (radius + 1)), -2 * np.cos(omega)


RADIUS, N2, D1 = recursive_coefficients()


def recursive_along_rows(x):
    """The recurrence down axis 0, inputs outside the plane zero."""
    height = x.shape[0]
    out = np.zeros_like(x)
    prev = [np.zeros(x.shape[1:]) for _ in range(3)]
    prev2 = [np.zeros(x.shape[1:]) for _ in range(3)]
    for n in range(1 - RADIUS, height):
        top, bottom = n - RADIUS - 1, n + RADIUS - 1
        s = (x[top] if top >= 0 else 0) + (x[bottom] if bottom < height else 0)
        total = 0
        for k in range(3):
            y = N2[k] * s - D1[k] * prev[k] - prev2[k]
            prev2[k], prev[k] = prev[k], y
            total = total + y
        if n >= 0:
            out[n] = total
    return out


def recursive_blur(plane):
    return recursive_along_rows(recursive_along_rows(plane.T).T)


def recursive_along_rows32(x):
    """recursive_along_rows in float32, in libjxl's (unfused) order of operations."""
    x = x.astype(np.float32)
    n2, d1 = N2.astype(np.float32), D1.astype(np.float32)
    height = x.shape[0]
    out = np.zeros_like(x)
    prev = [np.zeros(x.shape[1:], np.float32) for _ in range(3)]
    prev2 = [np.zeros(x.shape[1:], np.float32) for _ in range(3)]
    zero = np.float32(0)
    for n in range(1 - RADIUS, height):
        top, bottom = n - RADIUS - 1, n + RADIUS - 1
        s = (x[top] if top >= 0 else zero) + (x[bottom] if bottom < height else zero)
        ys = []
        for k in range(3):
            y = n2[k] * s + (-d1[k] * prev[k] - prev2[k])
            prev2[k], prev[k] = prev[k], y
            ys.append(y)
        if n >= 0:
            out[n] = ys[0] + (ys[1] + ys[2])
    return out


def recursive_blur32(plane):
    return recursive_along_rows32(recursive_along_rows32(plane.T).T).astype(np.float64)


def downsample(a):
    """libjxl's 2×2 mean, reads past the edge clamped."""
    h, w, _ = a.shape
    ys = np.minimum(np.arange(2 * ((h + 1) // 2)), h - 1)
    xs = np.minimum(np.arange(2 * ((w + 1) // 2)), w - 1)
    b = a[ys][:, xs]
    return (b[0::2, 0::2] + b[0::2, 1::2] + b[1::2, 0::2] + b[1::2, 1::2]) / 4


def package_blur(plane):
    return P.blur_image(plane[..., None])[..., 0]


def load(path, background=None, crop=None):
    """Linear RGB of an image file (its top left `crop` = (width, height) if given),
    blended on `background` (0…1, sRGB-encoded) if given."""
    pixels = np.asarray(Image.open(path).convert("RGBA"), dtype=np.float64)
    if crop is not None:
        pixels = pixels[:crop[1], :crop[0]]
    rgb = pixels[:, :, :3]
    if background is not None:
        # The package's blend works on 0…255 values (its srgb_to_linear divides by 255 after).
        rgb = P.alpha_blend(rgb, pixels[:, :, 3] / 255.0, background * 255)
    return P.srgb_to_linear(rgb)


def recursive_score(reference, distorted, blur=recursive_blur, background=None, crop=None):
    def positive_xyb(linear):
        # The package's conversion returns the image transposed; transpose it back.
        return P.make_positive_xyb(np.transpose(P.linear_rgb_to_xyb(linear), (1, 0, 2)))

    l1, l2 = load(reference, background, crop), load(distorted, background, crop)
    msssim = P.Msssim()
    for scale in range(6):
        if l1.shape[0] < 8 or l1.shape[1] < 8:  # libjxl tests the size before halving
            break
        if scale:
            l1, l2 = downsample(l1), downsample(l2)
        x1, x2 = positive_xyb(l1), positive_xyb(l2)
        result = P.MsssimScale()
        for c in range(3):
            a, b = x1[:, :, c], x2[:, :, c]
            maps = [blur(m)[..., None] for m in (a, b, a * a, b * b, a * b)]
            mu1, mu2, s11, s22, s12 = maps
            ssim = P.ssim_map(mu1, mu2, s11, s22, s12)
            result.avg_ssim[2 * c:2 * c + 2] = ssim[:2]
            result.avg_edgediff[4 * c:4 * c + 4] = P.edge_diff_map(a[..., None], mu1, b[..., None], mu2)[:4]
        msssim.scales.append(result)
    return msssim.score()


if __name__ == "__main__":
    for photo, q in PAIRS:
        reference, distorted = f"{photo}.png", f"{photo}-q{q}.jpg"
        package = P.compute_ssimulacra2(reference, distorted)
        print(f"{distorted:28s} package {package:.4f} recursive {recursive_score(reference, distorted):.4f}"
              f" recursive32 {recursive_score(reference, distorted, recursive_blur32):.4f}")
    # Odd sides: 200×150 halves to 100×75, 50×38, 25×19, 13×10 and (tested before halving) 7×5.
    for name, blur in (("recursive", recursive_blur), ("recursive32", recursive_blur32)):
        print(f"LadyBird-q50.jpg 200x150     {name} {recursive_score('LadyBird.png', 'LadyBird-q50.jpg', blur, crop=(200, 150)):.4f}")
    reference, distorted = "arc.png", "arc-webp-q50.png"
    for name, blur in (("package", package_blur), ("recursive", recursive_blur), ("recursive32", recursive_blur32)):
        dark, light = (recursive_score(reference, distorted, blur, background=grey / 255) for grey in (26, 230))
        print(f"{distorted:28s} {name} on grey 26 {dark:.4f}, on grey 230 {light:.4f}, lower {min(dark, light):.4f}")
    sys.exit(0)
