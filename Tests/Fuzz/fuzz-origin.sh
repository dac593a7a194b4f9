#!/usr/bin/env bash
# The origin-response fuzzer (CThumbCurl's header and body callbacks, chunked
# decoding, TransferOutcome, Location resolution) for SECONDS (default 60).
# Usage: Tests/Fuzz/fuzz-origin.sh [SECONDS]      (from the repository root)
exec "$(dirname "$0")/run-fuzzer.sh" FuzzOriginResponse origin "${1:-60}" -- -max_len=16384 -dict="$(dirname "$0")/origin.dict"
