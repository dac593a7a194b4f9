#!/usr/bin/env bash
# Builds one libFuzzer target (libFuzzer + AddressSanitizer, debug) and runs it
# for SECONDS, seeded from the committed corpus Tests/Fuzz/corpus/NAME plus any
# extra seed directories. New inputs go to a scratch directory (or to
# $FUZZ_NEW_CORPUS when set, for a campaign to minimize and commit later), never
# into the committed corpus. Exits non-zero on a crash, leak or timeout; the
# reproducer is left in fuzz-artifacts/NAME-* (git-ignored).
# Usage: Tests/Fuzz/run-fuzzer.sh PRODUCT NAME SECONDS [SEED_DIR...] [-- LIBFUZZER_FLAG...]
# lld links it: gold crashes on the sanitizer objects (dwarf_reader internal error).
set -euo pipefail
cd "$(dirname "$0")/../.."
PRODUCT=$1 NAME=$2 SECONDS_TO_RUN=$3
shift 3
SEED_DIRS=() FLAGS=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do SEED_DIRS+=("$1"); shift; done
[ $# -gt 0 ] && shift && FLAGS=("$@")
swift build --scratch-path .build-fuzz -c debug --product "$PRODUCT" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DFUZZING \
  -Xcc -fsanitize=fuzzer-no-link,address -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld >/dev/null
BIN=$(swift build --scratch-path .build-fuzz -c debug --show-bin-path)/$PRODUCT
# The same LeakSanitizer suppressions as the CI test run: leaks inside system
# libraries, each with its reason (.ci/lsan.supp); a leak in our code still fails.
export LSAN_OPTIONS="suppressions=$PWD/.ci/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
SCRATCH=$(mktemp -d); trap 'rm -rf "$SCRATCH"' EXIT
NEW=${FUZZ_NEW_CORPUS:-$SCRATCH}
mkdir -p "$NEW" fuzz-artifacts
[ -d "Tests/Fuzz/corpus/$NAME" ] && SEED_DIRS=("Tests/Fuzz/corpus/$NAME" ${SEED_DIRS[@]+"${SEED_DIRS[@]}"})
"$BIN" "$NEW" ${SEED_DIRS[@]+"${SEED_DIRS[@]}"} -max_total_time="$SECONDS_TO_RUN" \
  -rss_limit_mb=2048 -timeout=10 -artifact_prefix="fuzz-artifacts/$NAME-" -print_final_stats=1 \
  ${FLAGS[@]+"${FLAGS[@]}"} 2>&1 | awk -v all="${FUZZ_VERBOSE:-0}" '
    # The start and end figures (cov: ft: corpus: exec/s), the final stats and any
    # finding (sanitizer report, Swift trap, reproducer path); all of it with FUZZ_VERBOSE=1.
    all == 1 || /^#[0-9]+[ \t]+(INITED|DONE)/ || /^stat::/ || /ERROR|SUMMARY|Fatal error|[Pp]recondition|deadly signal|written to|Test unit|^ *#[0-9]+ 0x/'

