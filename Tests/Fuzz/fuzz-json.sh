#!/usr/bin/env bash
# The JSON parser fuzzer (parse, then serialize and parse back) for SECONDS (default 60).
# Usage: Tests/Fuzz/fuzz-json.sh [SECONDS]        (from the repository root)
exec "$(dirname "$0")/run-fuzzer.sh" FuzzJSON json "${1:-60}" -- -max_len=4096 -dict="$(dirname "$0")/json.dict"
