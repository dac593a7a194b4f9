#!/usr/bin/env bash
# Calibrates QualityScale (SPEC §17; Quality.md § The scale): ThumbBench --calibrate on the
# photos of Tests/Benchmarks/quality-corpus (release build) prints the per-q mean scores of
# JPEG, WebP, AVIF and JPEG XL and the §17 check, and rewrites
# Sources/ThumbCodec/QualityScale+Tables.swift. Bump QualityScale.tableVersion when the table
# changes. Takes a few minutes of CPU (about 4 000 encodes and scores).
# Usage: Tests/Benchmarks/calibrate-quality.sh   (any directory)
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --product ThumbBench >/dev/null
SVT_LOG=1 .build/release/ThumbBench --calibrate --out Sources/ThumbCodec/QualityScale+Tables.swift \
  Tests/Benchmarks/quality-corpus/*.jpg
git diff --stat -- Sources/ThumbCodec/QualityScale+Tables.swift
