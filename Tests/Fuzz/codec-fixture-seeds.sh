#!/usr/bin/env bash
# Copies the small codec test fixtures (every source format, under 64 KiB, not the
# reference renders) into DIR: seeds for the fuzzers whose inputs are image files
# (fuzz-codec.sh, fuzz-structure.sh), so both start from the same real files.
# Usage: Tests/Fuzz/codec-fixture-seeds.sh DIR       (from the repository root)
set -euo pipefail
for ext in png jpg webp gif avif heic jxl; do
  find Tests/ThumbCodecTests/Fixtures -path '*/reference' -prune -o -name "*.$ext" -size -64k -exec cp {} "$1/" \;
done
