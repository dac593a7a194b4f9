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
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
SEEDS=$WORK/seeds; mkdir "$SEEDS"
printf 'GET /thumbnail?url=https%%3A%%2F%%2Fex.com%%2Fa.jpg&w=200 HTTP/1.1\r\nHost: x\r\n\r\n' > "$SEEDS/get"
printf 'POST /prefetch HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n' > "$SEEDS/pipelined"
printf 'POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n' > "$SEEDS/chunked"
printf 'POST /prefetch HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello' > "$SEEDS/expect"
printf 'GET http://127.0.0.1:8080/thumbnail?w=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n' > "$SEEDS/absolute"
# RFC 9112 shapes the parser must refuse or accept exactly (README § HTTP server).
cat > "$WORK/http.dict" <<'DICT'
bare_cr="\x0d"
crlf="\x0d\x0a"
cr_cr_lf="\x0d\x0d\x0a"
nul="\x00"
host="Host: "
host_v6="Host: [::1]:8080"
host_userinfo="Host: u@h"
expect="Expect: 100-continue"
expect_other="Expect: 200-ok"
content_length="Content-Length: "
absolute_http="http://"
absolute_https="HTTPS://"
http10="HTTP/1.0"
http11="HTTP/1.1"
DICT
mkdir -p fuzz-artifacts
"$BIN" "$SEEDS" -dict="$WORK/http.dict" -max_total_time="$SECONDS_TO_RUN" -max_len=8192 -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix=fuzz-artifacts/http- -print_final_stats=1 2>&1 | tail -6
