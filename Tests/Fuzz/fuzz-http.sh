#!/usr/bin/env bash
# The HTTP request-parser fuzzer (whole and chunked input must agree) for SECONDS (default 60),
# with the RFC 9112 shapes of Tests/Fuzz/http.dict (bare CR, NUL, Host, Expect, absolute form).
# Usage: Tests/Fuzz/fuzz-http.sh [SECONDS]        (from the repository root)
exec "$(dirname "$0")/run-fuzzer.sh" FuzzHTTPParser http "${1:-60}" -- -max_len=8192 -dict=Tests/Fuzz/http.dict
