#!/usr/bin/env bash
# The HTTP request-parser fuzzer (whole and chunked input must agree) for SECONDS (default 60).
# Usage: Tests/Fuzz/fuzz-http.sh [SECONDS]        (from the repository root)
exec "$(dirname "$0")/run-fuzzer.sh" FuzzHTTPParser http "${1:-60}" -- -max_len=8192
