#!/usr/bin/env bash
# The progressive JPEG scan plan's fuzzer (jpeg-scans-fuzz.c: the walker on any
# bytes, and scans-skipped against every-scan decodes at 1/8 and 2/8) for SECONDS
# (default 60), built with clang straight from Sources/CThumbCodec (libFuzzer,
# AddressSanitizer, UndefinedBehaviorSanitizer), seeded with the JPEG fixtures of
# Tests/ThumbCodecTests (the progressive ones among them) and the JPEGs of the codec
# corpus. New inputs go to a scratch directory; a reproducer to fuzz-artifacts/jpeg-scans-*.
# Usage: Tests/Fuzz/fuzz-jpeg-scans.sh [SECONDS]     (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
SCRATCH=$(mktemp -d); trap 'rm -rf "$SCRATCH"' EXIT
mkdir -p "$SCRATCH/seeds" "$SCRATCH/new" fuzz-artifacts
find Tests/ThumbCodecTests/Fixtures -name '*.jpg' -size -64k -exec cp {} "$SCRATCH/seeds/" \;
for f in Tests/Fuzz/corpus/codec/*; do
  [ "$(head -c 2 "$f" | od -An -tx1 | tr -d ' ')" = ffd8 ] && cp "$f" "$SCRATCH/seeds/"
done
C=Sources/CThumbCodec
clang -g -O1 -fuse-ld=lld -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I "$C/include" -I "$C" \
  -o "$SCRATCH/fuzz" Tests/Fuzz/jpeg-scans-fuzz.c "$C/jpeg_scans.c" "$C/jpeg.c" "$C/exif.c" "$C/decoder.c" \
  "$C/icc.c" "$C/icc_cache.c" -ljpeg -llcms2 -lm
"$SCRATCH/fuzz" "$SCRATCH/new" "$SCRATCH/seeds" -max_total_time="${1:-60}" -max_len=65536 -rss_limit_mb=2048 \
  -timeout=10 -dict=Tests/Fuzz/codec.dict -artifact_prefix=fuzz-artifacts/jpeg-scans- -print_final_stats=1 2>&1 |
  grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::|ERROR|SUMMARY|deadly signal|written to|Test unit|^ *#[0-9]+ 0x'
