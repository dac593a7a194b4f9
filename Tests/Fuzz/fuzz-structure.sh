#!/usr/bin/env bash
# The structure-walk fuzzer (StructureWalk: JPEG segments, PNG chunks, GIF blocks,
# ISOBMFF boxes/items/properties/tiles) for SECONDS (default 60), seeded with the
# committed corpus and the small codec test fixtures, with the container tokens of
# Tests/Fuzz/codec.dict.
# Usage: Tests/Fuzz/fuzz-structure.sh [SECONDS]       (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
SEEDS=$(mktemp -d); trap 'rm -rf "$SEEDS"' EXIT
Tests/Fuzz/codec-fixture-seeds.sh "$SEEDS"
Tests/Fuzz/run-fuzzer.sh FuzzStructure structure "${1:-60}" "$SEEDS" -- -max_len=131072 -dict=Tests/Fuzz/codec.dict
