#!/usr/bin/env bash
# Builds the codec fuzzer (libFuzzer + AddressSanitizer) and runs it for SECONDS
# (default 60), seeded with the codec test fixtures (the bomb shapes among them,
# Fixtures/bombs/) and the container tokens of Tests/Fuzz/codec.dict. Exits non-zero on a crash,
# leak or timeout; the reproducer is left in fuzz-artifacts/ (git-ignored).
# Usage: Tests/Fuzz/fuzz-codec.sh [SECONDS]       (from the repository root)
# lld links it: gold crashes on the sanitizer objects (dwarf_reader internal error).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN=${1:-60}
swift build --scratch-path .build-fuzz -c debug --product FuzzCodec \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING \
  -Xcc -fsanitize=fuzzer-no-link,address -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld >/dev/null
BIN=$(swift build --scratch-path .build-fuzz -c debug --show-bin-path)/FuzzCodec
SEEDS=$(mktemp -d); trap 'rm -rf "$SEEDS"' EXIT
for ext in png jpg webp gif avif heic; do
  find Tests/ThumbCodecTests/Fixtures -path '*/reference' -prune -o -name "*.$ext" -size -64k -exec cp {} "$SEEDS/" \;
done
mkdir -p fuzz-artifacts
"$BIN" "$SEEDS" -dict=Tests/Fuzz/codec.dict -max_total_time="$SECONDS_TO_RUN" -max_len=131072 -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix=fuzz-artifacts/codec- -print_final_stats=1 2>&1 | tail -15
