#!/usr/bin/env bash
# Builds the HTTP request-parser fuzzer (libFuzzer + AddressSanitizer) and runs it
# for SECONDS (default 60) from a few sample requests. Non-zero exit on a finding.
# Usage: Tests/Fuzz/fuzz-http.sh [SECONDS]        (from the repository root)
# lld links it: gold crashes on the sanitizer objects (dwarf_reader internal error).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN=${1:-60}
swift build --scratch-path .build-fuzz -c debug --product FuzzHTTPParser \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING \
  -Xcc -fsanitize=fuzzer-no-link,address -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld >/dev/null
BIN=$(swift build --scratch-path .build-fuzz -c debug --show-bin-path)/FuzzHTTPParser
SEEDS=$(mktemp -d); trap 'rm -rf "$SEEDS"' EXIT
printf 'GET /thumbnail?url=https%%3A%%2F%%2Fex.com%%2Fa.jpg&w=200 HTTP/1.1\r\nHost: x\r\n\r\n' > "$SEEDS/get"
printf 'POST /prefetch HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n' > "$SEEDS/pipelined"
printf 'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n' > "$SEEDS/chunked"
mkdir -p fuzz-artifacts
"$BIN" "$SEEDS" -max_total_time="$SECONDS_TO_RUN" -max_len=8192 -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix=fuzz-artifacts/http- -print_final_stats=1 2>&1 | tail -6
