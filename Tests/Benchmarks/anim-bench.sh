#!/usr/bin/env bash
# Animation benchmark (issue 26): a 100-frame 480x270 animated GIF made into a 160-px
# animated WebP at q 82, thumbd (ThumbBench --animate: ThumbnailPipeline.renderAnimation in
# process, release build) against vipsthumbnail in.gif[n=-1] -s 160 -o out.webp[Q=82].
# Budget: <= 0.5 s of CPU, and a render's peak memory (process peak minus the resident size
# just before) <= canvas*4*3 + the result's bytes + 32 MiB.
#
# The input is a camera pan across a real photo: 100 windows of 480x270, moving diagonally
# across Tests/ThumbCodecTests/Fixtures/formats/crowd_1440x960.heic (a street crowd, see that
# folder's SOURCES.md), cut with vips extract_area, joined by vips gifsave (cgif: one
# 256-colour palette, dithered, unchanged pixels transparent) and given 40 ms delays by
# gifsicle. Every pixel moves in every frame: no sub-frame is small, the WebP encoder codes
# whole frames.
#
# Printed: thumbd's median and minimum CPU ms (the render thread's), its peak MiB (second
# render in the process, after malloc_trim: the first also maps the libraries' code), the
# estimate RenderPlan.estimatedAnimationMemory gives (the original's bytes included), the
# result's bytes; vipsthumbnail's median and minimum CPU ms (user + sys of the process) and
# maximum resident MiB of the whole process (libvips' own start-up included), its bytes.
# Usage: Tests/Benchmarks/anim-bench.sh [RUNS]   (default 11; any directory)
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
RUNS=${1:-11}
bash .ci/deps.sh libvips-tools gifsicle
bench_init

src=Tests/ThumbCodecTests/Fixtures/formats/crowd_1440x960.heic
vips copy "$src" "$W/crowd.png"
frames=()
for i in $(seq 0 99); do
  f="$W/f$(printf %03d "$i").png"
  vips extract_area "$W/crowd.png" "$f" $((i * 960 / 99)) $((i * 690 / 99)) 480 270
  frames+=("$f")
done
vips arrayjoin "${frames[*]}" "$W/strip.v" --across 1
vips gifsave "$W/strip.v" "$W/raw.gif" --page-height 270
gifsicle --delay 4 --loopcount=forever "$W/raw.gif" > "$W/pan.gif"
echo "input: $(gifsicle --info "$W/pan.gif" | head -1 | sed 's/^\* //'), $(stat -c %s "$W/pan.gif") bytes"

swift build -c release --product ThumbBench >/dev/null
BIN=$(swift build -c release --show-bin-path)
read -r _ _ _ cpu_med cpu_min bytes nframes peak estimate _ < <("$BIN/ThumbBench" --animate --runs "$RUNS" \
  --w 160 --h 160 --q 82 --out "$W/thumbd.webp" "$W/pan.gif")
budget=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", (480 * 270 * 4 * 3 + b) / 1048576 + 32 }')
echo "thumbd:        CPU ${cpu_med} ms median, ${cpu_min} ms min; peak ${peak} MiB (budget ${budget} MiB," \
     "estimate ${estimate} MiB); ${bytes} bytes, ${nframes} frames"

vips_cpu=() vips_rss=()
for _ in $(seq "$RUNS"); do
  read -r u s m < <(/usr/bin/time -f "%U %S %M" vipsthumbnail "$W/pan.gif[n=-1]" -s 160 \
    -o "$W/vips.webp[Q=82]" 2>&1 >/dev/null | tail -1)
  vips_cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.0f", (u + s) * 1000 }')")
  vips_rss+=("$m")
done
sorted=$(printf '%s\n' "${vips_cpu[@]}" | sort -n)
echo "vipsthumbnail: CPU $(echo "$sorted" | sed -n "$(( (RUNS + 1) / 2 ))p") ms median, $(echo "$sorted" | head -1) ms min;" \
     "max resident $(printf '%s\n' "${vips_rss[@]}" | sort -n | tail -1 | awk '{ printf "%.1f", $1 / 1024 }') MiB" \
     "(whole process); $(stat -c %s "$W/vips.webp") bytes"
