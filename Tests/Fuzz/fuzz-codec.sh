#!/usr/bin/env bash
# The codec fuzzer (sniff + probe + decode + scale + encode) for SECONDS (default
# 60), seeded with the committed corpus and the small codec test fixtures (the bomb
# shapes of Fixtures/bombs/ among them), with the container tokens of Tests/Fuzz/codec.dict.
# Usage: Tests/Fuzz/fuzz-codec.sh [SECONDS]       (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
SEEDS=$(mktemp -d); trap 'rm -rf "$SEEDS"' EXIT
Tests/Fuzz/codec-fixture-seeds.sh "$SEEDS"
Tests/Fuzz/run-fuzzer.sh FuzzCodec codec "${1:-60}" "$SEEDS" -- -max_len=131072 -dict=Tests/Fuzz/codec.dict
