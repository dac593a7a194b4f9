// Known-answer vectors for ThumbHashTests, made with the reference ThumbHash.
//
//   node make-thumbhash-vectors.mjs /path/to/thumbhash.js > ../ThumbHashVectors.swift
//
// thumbhash.js is js/thumbhash.js of https://github.com/evanw/thumbhash at commit
// a652ce6ed691242f459f468f0a8756cda3b90a82 (MIT licence, © 2023 Evan Wallace). It is not
// vendored here: pass its path. The vectors were made with node v20.20.2.
//
// thumbd computes its cosines with the platform's libm, which differs from V8's Math.cos in
// the last bit on a few per cent of the arguments. For most images that changes nothing; for
// some (a flat channel, a coefficient that is exactly zero by symmetry) the hash's bits are
// the cosine's rounding noise, amplified, or a tie 7.5 that rounds to 7 or 8. Each encoded
// vector is therefore encoded again with Math.cos nudged by one ulp (`nudgedCosines`), and
// marked `cosineSensitive` when any of those hashes differ: ThumbHashCosineSensitivityTests
// holds those to the format's structure and a bounded decode difference, ThumbHashTests the
// others to every bit (see README.md).
//
// Every input image is built from a recipe that ThumbHashVectors.swift's `Recipe.bitmap`
// rebuilds in Swift with the same integer arithmetic (keep the two in step).
import { pathToFileURL } from 'node:url'
import { resolve } from 'node:path'

if (process.argv.length < 3) {
  console.error('usage: node make-thumbhash-vectors.mjs /path/to/thumbhash.js')
  process.exit(2)
}
const { rgbaToThumbHash, thumbHashToRGBA, thumbHashToApproximateAspectRatio, thumbHashToAverageRGBA } =
  await import(pathToFileURL(resolve(process.argv[2])).href)

// 32-bit LCG (Numerical Recipes constants); a byte is the state's top 8 bits.
function lcg(seed) {
  let s = seed >>> 0
  return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s >>> 24 }
}

function build(recipe) {
  const { kind, w, h, seed = 0, color = [0, 0, 0, 0] } = recipe
  const rgba = new Uint8Array(w * h * 4)
  const next = lcg(seed)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 4
      const gr = Math.floor(255 * x / Math.max(w - 1, 1))
      const gg = Math.floor(255 * y / Math.max(h - 1, 1))
      const gb = Math.floor(255 * (x + y) / Math.max(w + h - 2, 1))
      let px
      switch (kind) {
        case 'gradient': px = [gr, gg, gb, 255]; break
        case 'noise': case 'speck': px = [(3 * gr + next()) >> 2, (3 * gg + next()) >> 2, (3 * gb + next()) >> 2, 255]; break
        case 'alphaNoise': px = [next(), next(), next(), next()]; break
        case 'disc': {
          const dx = 2 * x + 1 - w, dy = 2 * y + 1 - h, m = Math.min(w, h)
          const d2 = dx * dx + dy * dy
          px = [200, 60, 30, d2 < Math.floor(m * m / 2) ? 255 : d2 < m * m ? 128 : 0]
          break
        }
        case 'solid': px = color; break
        default: throw new Error(kind)
      }
      rgba.set(px, i)
    }
  }
  if (kind === 'speck') rgba[w * h * 4 - 1] = 254 // one pixel short of opaque: the alpha flag
  return rgba
}

// Math.cos moved one ulp, up or down by `pattern`: 'up', 'down', or a seed for a bit hashed
// from the argument (a function of the argument, as a libm is). cos 0 = 1 is left alone:
// every libm gets it exactly.
const trueCos = Math.cos
function nudgedCos(pattern) {
  const arg = new Float64Array(1), argWords = new Uint32Array(arg.buffer)
  const val = new Float64Array(1), valBits = new BigUint64Array(val.buffer)
  return (x) => {
    val[0] = trueCos(x)
    if (x === 0) return val[0]
    let up = pattern === 'up'
    if (typeof pattern === 'number') {
      arg[0] = x
      let h = Math.imul(pattern, 0x9e3779b1) ^ argWords[0]
      h = Math.imul(h ^ (h >>> 15), 0x85ebca6b) ^ argWords[1]
      h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
      up = ((h ^ (h >>> 16)) & 1) === 1
    }
    valBits[0] = up ? valBits[0] + 1n : valBits[0] - 1n
    return val[0]
  }
}
const nudgePatterns = ['up', 'down', 1, 2, 3, 4, 5, 6]
// What `run` returns under each nudged cosine (the reference reads Math.cos when called).
function nudgedCosines(run) {
  try {
    return nudgePatterns.map((pattern) => { Math.cos = nudgedCos(pattern); return run() })
  } finally {
    Math.cos = trueCos
  }
}
const sameBytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0

// FNV-1a, 32-bit, over the decoded RGBA bytes.
function fnv1a(bytes) {
  let h = 2166136261
  for (const b of bytes) h = Math.imul(h ^ b, 16777619) >>> 0
  return h
}

// The byte count the format implies from the header (what ThumbHashDecoder requires).
function hashLength(hash) {
  const hasAlpha = (hash[2] & 0x80) !== 0, landscape = (hash[4] & 0x80) !== 0
  const lx = Math.max(3, landscape ? (hasAlpha ? 5 : 7) : hash[3] & 7)
  const ly = Math.max(3, landscape ? hash[3] & 7 : (hasAlpha ? 5 : 7))
  let n = 0
  const count = (nx, ny) => { for (let cy = 0; cy < ny; cy++) for (let cx = cy ? 0 : 1; cx * ny < nx * (ny - cy); cx++) n++ }
  count(lx, ly); count(3, 3); count(3, 3); if (hasAlpha) count(5, 5)
  return (hasAlpha ? 6 : 5) + ((n + 1) >> 1)
}

const recipes = [
  { kind: 'gradient', w: 32, h: 32 },
  { kind: 'gradient', w: 100, h: 1 },
  { kind: 'gradient', w: 1, h: 100 },
  { kind: 'gradient', w: 7, h: 93 },
  { kind: 'noise', w: 100, h: 100, seed: 1 },
  { kind: 'noise', w: 100, h: 37, seed: 2 },
  { kind: 'noise', w: 37, h: 100, seed: 3 },
  { kind: 'noise', w: 61, h: 59, seed: 9 },
  { kind: 'alphaNoise', w: 64, h: 48, seed: 4 },
  { kind: 'alphaNoise', w: 100, h: 100, seed: 5 },
  { kind: 'disc', w: 50, h: 50 },
  { kind: 'disc', w: 90, h: 31 },
  { kind: 'solid', w: 1, h: 1, color: [10, 200, 90, 255] },
  { kind: 'solid', w: 1, h: 1, color: [10, 200, 90, 100] },
  { kind: 'solid', w: 100, h: 100, color: [255, 255, 255, 255] },
  { kind: 'solid', w: 40, h: 30, color: [0, 0, 0, 255] },
  { kind: 'solid', w: 20, h: 20, color: [0, 0, 0, 0] },
  { kind: 'solid', w: 3, h: 5, color: [255, 0, 0, 1] },
  { kind: 'speck', w: 100, h: 100, seed: 6 },
]
// Sizes and seeds from another LCG: 48 more, every kind but the solids.
{
  const next = lcg(777), kinds = ['noise', 'alphaNoise', 'disc', 'speck', 'gradient']
  for (let k = 0; k < 48; k++) {
    const w = 1 + ((next() * 100) >> 8), h = 1 + ((next() * 100) >> 8), seed = 1000 + k
    recipes.push({ kind: kinds[k % kinds.length], w, h, seed })
  }
}

const b64 = (bytes) => Buffer.from(bytes).toString('base64')
const samples = (img) => {
  const at = (x, y) => Array.from(img.rgba.subarray((y * img.w + x) * 4, (y * img.w + x) * 4 + 4))
  return [[0, 0], [img.w - 1, 0], [img.w >> 1, img.h >> 1], [img.w - 1, img.h - 1]].map(([x, y]) => [x, y, ...at(x, y)])
}
const swiftDouble = (v) => (Number.isInteger(v) ? v.toFixed(1) : String(v))
const decoded = (hash) => {
  const img = thumbHashToRGBA(hash)
  // The decoder's pixels are exact in ThumbHashTests: make sure a cosine's last bit cannot
  // move them (it could only if 255·v fell within an ulp or so of an integer).
  if (!nudgedCosines(() => thumbHashToRGBA(hash).rgba).every((rgba) => sameBytes(rgba, img.rgba)))
    throw new Error(`decoding ${b64(hash)} depends on Math.cos's last bit`)
  const avg = thumbHashToAverageRGBA(hash)
  return `decodedWidth: ${img.w}, decodedHeight: ${img.h}, fnv1a: 0x${fnv1a(img.rgba).toString(16).padStart(8, '0')},\n` +
    `              samples: ${JSON.stringify(samples(img))},\n` +
    `              aspect: ${swiftDouble(thumbHashToApproximateAspectRatio(hash))}, ` +
    `average: [${[avg.r, avg.g, avg.b, avg.a].map(swiftDouble).join(', ')}]`
}

let out = []
out.push('// Generated by Fixtures/make-thumbhash-vectors.mjs from the reference thumbhash.js')
out.push('// (evanw/thumbhash a652ce6, MIT) under node v20.20.2. Do not edit by hand: rerun the script.')
out.push('')
out.push('extension ThumbHashVectors {')
out.push('    /// Images built from a recipe, their reference hash (`cosineSensitive` when a cosine\'s last')
out.push('    /// bit changes it), and the reference decode of that hash.')
out.push('    static let encoded: [Vector] = [')
for (const r of recipes) {
  const rgba = build(r)
  const hash = rgbaToThumbHash(r.w, r.h, rgba)
  const sensitive = !nudgedCosines(() => rgbaToThumbHash(r.w, r.h, rgba)).every((h) => sameBytes(h, hash))
  const seeded = ['noise', 'alphaNoise', 'speck'].includes(r.kind)
  const recipe = `.${r.kind}` + (r.kind === 'solid' ? `(${r.color.join(', ')})` : seeded ? `(seed: ${r.seed})` : '')
  out.push(`        Vector(recipe: ${recipe}, width: ${r.w}, height: ${r.h}, hash: "${b64(hash)}",`)
  out.push(`              ${sensitive ? 'cosineSensitive: true, ' : ''}${decoded(hash)}),`)
}
out.push('    ]')
out.push('')
out.push('    /// Well-formed hashes no encoder made (random bytes, the header patched to lx, ly ≥ 1,')
out.push('    /// cut to the implied length): the decoder over the whole coefficient range.')
out.push('    static let decodedOnly: [Vector] = [')
const next = lcg(2024)
for (let k = 0; k < 12; k++) {
  const bytes = Array.from({ length: 40 }, next)
  if ((bytes[3] & 7) === 0) bytes[3] |= 1 + (k % 7)
  if (k % 3 === 0) bytes[2] |= 0x80
  if (k % 4 === 1) bytes[4] |= 0x80
  const hash = Uint8Array.from(bytes.slice(0, hashLength(bytes)))
  out.push(`        Vector(recipe: nil, width: 0, height: 0, hash: "${b64(hash)}",`)
  out.push(`              ${decoded(hash)}),`)
}
out.push('    ]')
out.push('}')
console.log(out.join('\n'))
