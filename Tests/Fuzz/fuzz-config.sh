#!/usr/bin/env bash
# The config reader fuzzer (JSON text → DaemonConfiguration: a typed error or a
# configuration that prints and loads back the same) for SECONDS (default 60).
# Usage: Tests/Fuzz/fuzz-config.sh [SECONDS]      (from the repository root)
exec "$(dirname "$0")/run-fuzzer.sh" FuzzConfig config "${1:-60}" -- -max_len=4096 -dict="$(dirname "$0")/config.dict"
